#!/usr/bin/env bash
# What each call changed (src/agent/diffs.c), headless on the local
# sandbox: a scripted run writes report.md, edits it twice, makes a
# binary, a huge and a small file and deletes the small one. Each
# workspace_change names its call and carries the diff of the text
# against the version before; GNU patch applies the three diffs of
# report.md, in order, to nothing and gets the file the run left; the
# binary and the huge file say why there is none. A run killed after
# its second call and resumed records the same diffs (the resumed
# session reads the versions of the restored workspace first).
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
S=$SRC/tests/e2e/data/edits.json
ASSAY_SCRIPT_DELAY_MS=0 "$ASSAY" run --provider script --script "$S" \
	--ask none --run-dir "$T/run" "edit the report" >"$T/out" 2>&1
check "the run completes" grep -q 'run completed' "$T/out"
TR=$T/run/transcript.jsonl
changes() { # path: [(call's tool, kind, added, removed)]
	jget "$TR" "[([c['name'] for c in x if c['type'] == 'tool_call' and c['id'] == e.get('call')] or [None])[0:1] + [e['kind'], e.get('diff', {}).get('added'), e.get('diff', {}).get('removed')] for e in x if e['type'] == 'workspace_change' and e['path'] == '$1']"
}
check "report.md: created by write_file (+3), edited by python (+1 -1), then by shell (+1)" \
	test "$(changes report.md)" = "[['write_file', 'created', 3, 0], ['python', 'modified', 1, 1], ['shell', 'modified', 1, 0]]"
check "the python edit's hunk: beta became BETA, with its context" \
	test "$(jget "$TR" "[e['diff']['hunks'] for e in x if e['type'] == 'workspace_change' and e['path'] == 'report.md'][1]")" = \
	"$(printf '@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n')"
# the three diffs through GNU patch, from nothing
: >"$T/report.md"
for i in 0 1 2; do
	{
		printf -- '--- report.md\n+++ report.md\n'
		jget "$TR" "[e['diff']['hunks'] for e in x if e['type'] == 'workspace_change' and e['path'] == 'report.md'][$i]" | sed '$d'
	} >"$T/d$i.patch"
	patch -s "$T/report.md" "$T/d$i.patch"
done
tar -xOf "$(ws_archive "$T/run")" report.md >"$T/left.md"
check "patch applies the three diffs in order: the file the run left" \
	cmp "$T/report.md" "$T/left.md"
check "a binary file says so" \
	test "$(jget "$TR" "[e['diff'] for e in x if e['type'] == 'workspace_change' and e['path'] == 'data/blob.bin']")" = "[{'skipped': 'binary'}]"
check "a file over 256 KiB says so" \
	test "$(jget "$TR" "[e['diff'] for e in x if e['type'] == 'workspace_change' and e['path'] == 'data/huge.txt']")" = "[{'skipped': 'over 256 KiB'}]"
check "a deleted text file: its lines removed" \
	test "$(changes data/small.txt)" = "[['python', 'created', 1, 0], ['shell', 'deleted', 0, 1]]"
check "every change of a call names it" \
	test "$(jget "$TR" "sum(1 for e in x if e['type'] == 'workspace_change' and not e.get('call'))")" = 0

# killed after the second call's changes, then resumed
ASSAY_SCRIPT_DELAY_MS=1500 "$ASSAY" run --provider script --script "$S" \
	--ask none --run-dir "$T/cut" "edit the report" >"$T/cut.out" 2>&1 &
pid=$!
cut_ready() { grep -q '"workspace_change".*"call":"call_1_0"' "$T/cut/transcript.jsonl" 2>/dev/null; }
check "the second call's change is recorded (before the kill)" wait_until 30 cut_ready
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
ASSAY_SCRIPT_DELAY_MS=0 "$ASSAY" resume "$T/cut" --ask none >"$T/resume.out" 2>&1
check "the resumed run completes" grep -q 'run completed' "$T/resume.out"
diffs_of() { jget "$1" "[(e['path'], e['kind'], e.get('diff')) for e in x if e['type'] == 'workspace_change']"; }
check "resumed: the same diffs as the run that was not cut" \
	test "$(diffs_of "$T/cut/transcript.jsonl")" = "$(diffs_of "$TR")" ||
	{ diffs_of "$T/cut/transcript.jsonl"; diffs_of "$TR"; }
finish
