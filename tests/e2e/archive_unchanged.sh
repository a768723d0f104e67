#!/usr/bin/env bash
# The run's end does not archive an unchanged workspace again (issue 41;
# src/agent/persist.c), local sandbox: a run archives its workspace and
# keeps the listing of what the archive holds beside it; a resume whose
# call changes nothing keeps the archive as it is (the log says so,
# run_end still names it); a file rewritten with the same size, a chmod
# alone, a file made outside assay between runs, a lost listing and
# mounted inputs each make the end archive it again, and the archive
# then holds the change.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
cat >script.json <<'JSON'
{"turns": [
 {"text": "Making a file.", "tool_calls": [{"name": "shell", "arguments": {"command": "mkdir -p sub && echo one > sub/a.txt"}}]},
 {"text": "Made.", "tool_calls": []},
 {"text": "Nothing to do.", "tool_calls": [{"name": "shell", "arguments": {"command": "cat sub/a.txt"}}]},
 {"text": "Read.", "tool_calls": []},
 {"text": "Rewriting.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo two > sub/a.txt"}}]},
 {"text": "Rewritten.", "tool_calls": []},
 {"text": "A chmod.", "tool_calls": [{"name": "shell", "arguments": {"command": "chmod +x sub/a.txt"}}]},
 {"text": "Done.", "tool_calls": []},
 {"text": "Nothing.", "tool_calls": [{"name": "shell", "arguments": {"command": "true"}}]},
 {"text": "Still nothing.", "tool_calls": []},
 {"text": "Nothing.", "tool_calls": [{"name": "shell", "arguments": {"command": "true"}}]},
 {"text": "Still nothing.", "tool_calls": []},
 {"text": "Nothing.", "tool_calls": [{"name": "shell", "arguments": {"command": "true"}}]},
 {"text": "Still nothing.", "tool_calls": []}
]}
JSON
start_fake script.json --key sk-unchanged
export OPENAI_API_KEY=sk-unchanged
R=$T/run
A=$R/workspace.tar.zst
L=$R/workspace.listing.json
unchanged="end: the workspace is unchanged since $A: not archived again"
# said TEXT N: whether the Nth run's end (1-based; one decision line
# each in the log: archived, and why, or unchanged) says TEXT
said() {
	grep -E 'end: the workspace is (archived \(|unchanged since)' "$R/assay.log" |
		sed -n "$2p" | grep -qF "$1"
}
stamp() { stat -c '%i %s %Y.%y' "$A"; }
member() { tar --zstd -xOf "$A" "$1"; }
mode() { tar --zstd -tvf "$A" "$1" | awk 'NR == 1 { print substr($0, 1, 10) }'; } # its first entry's
go() { # go PROMPT: a resume with PROMPT, exit 0
	local code=0
	"$ASSAY" resume "$R" --ask none --base-url "$URL" "$1" >go.out 2>go.err || code=$?
	check "resume '$1' exits 0 (got $code)" test "$code" -eq 0
}

set +e
"$ASSAY" run --provider openai --base-url "$URL" --model fake-model \
	--ask none --run-dir "$R" "make a file" >run.out 2>run.err
code=$?
set -e
check "the run exits 0 (got $code)" test "$code" -eq 0
check "its end archived the workspace (no archive yet)" \
	said "end: the workspace is archived (no archive yet)" 1
check "... the archive step timed in the log" grep -q "end: the workspace archived in [0-9]* ms" "$R/assay.log"
check "... which holds sub/a.txt" test "$(member sub/a.txt)" = one
check "... with the listing of what it holds beside it" \
	$PY -c 'import json,sys; j=json.load(open(sys.argv[1])); assert [e["path"] for e in j["entries"]] == ["sub", "sub/a.txt"], j; assert j["tag"] and j["taken"] > 0' "$L"
sleep 0.05 # a file written less than 10 ms before the archive began is not trusted
before=$(stamp)

# 1. the call reads only: the archive stays as it is
go "read it"
check "the unchanged workspace is not archived again (the log says so)" \
	said "$unchanged" 2
check "... the archive is untouched (inode, size, mtime)" test "$(stamp)" = "$before"
check "... run_end still names it" \
	test "$(jget "$R/transcript.jsonl" '[e for e in x if e["type"]=="run_end"][-1]["archive"]')" = "$A"
check "... and the summary too" grep -qF "workspace archive: $A" go.err

# 2. the same size, another content: archived again
go "rewrite it"
check "a file rewritten with the same size is archived again" \
	said 'end: the workspace is archived (it changed since the archive was written)' 3
check "... the archive holds the new content" test "$(member sub/a.txt)" = two

# 3. a chmod alone (size and mtime the same): archived again
sleep 0.05
go "chmod it"
check "a chmod alone is a change: archived again" \
	said 'end: the workspace is archived (it changed' 4
check "... the archive holds the new mode" test "$(mode sub/a.txt)" = "-rwxr-xr-x"

# 4. nothing again: kept
sleep 0.05
before=$(stamp)
go "nothing"
check "a resume that changes nothing keeps the archive" said "$unchanged" 5
check "... untouched" test "$(stamp)" = "$before"

# 5. a file made outside assay between runs: archived again
echo outside >"$R/workspace/outside.txt"
go "nothing again"
check "a file made between runs is archived" said "end: the workspace is archived (it changed" 6
check "... the archive holds it" test "$(member outside.txt)" = outside

# 6. the listing lost (or another archive's): archived again, and kept
rm "$L"
go "nothing, no listing"
check "without the listing of the archive it is archived again" \
	said 'end: the workspace is archived (no listing of what it holds)' 7
check "... and the listing is back" test -s "$L"

# 7. mounted inputs (not in the archive): always archived
echo data >data.txt
start_fake script.json --key sk-unchanged
R2=$T/run2
set +e
"$ASSAY" run --provider openai --base-url "$URL" --model fake-model --input data.txt \
	--run-dir "$R2" "make a file" >run2.out 2>run2.err
"$ASSAY" resume "$R2" --base-url "$URL" "read it" >run2b.out 2>run2b.err
code=$?
set -e
check "a run with a mounted input: resume exits 0 (got $code)" test "$code" -eq 0
check "... its end archives again (mounted inputs: not in it), no listing kept" \
	sh -c "test \"\$(grep -c 'end: the workspace is archived (mounted inputs: not in it)' '$R2/assay.log')\" = 2 &&
		! grep -q 'not archived again' '$R2/assay.log' && test ! -e '$R2/workspace.listing.json'"
finish
