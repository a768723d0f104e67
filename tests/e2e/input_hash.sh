#!/usr/bin/env bash
# The run knows its inputs by content (issue 15, must-show 5): each
# mounted input's SHA-256 is recorded (input_hashes, taken by the
# helper, cached by path, size, mtime and inode); a resume in place
# after an input changed stops (exit 2) naming the input, the old and
# the new hash and the options to pass, and changes nothing; with the
# original back it goes on; a missing input is named too; the input
# given again elsewhere with --input FILE:DEST is accepted when it is
# the same file, and --re-execute takes new data. What the sandbox does
# not see of a directory input (its .assay/) is no change.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
export XDG_CACHE_HOME=$T/cache
mkdir -p data/dir/sub data/dir/.assay
printf 'day,kwh\n1,42\n2,43\n' >data/energy.csv
echo inner >data/dir/sub/f.txt
echo state >data/dir/.assay/state
touch -d '1 hour ago' data/energy.csv data/dir/sub/f.txt
cp data/energy.csv orig.csv
touch -r data/energy.csv orig.csv
cat >s.json <<'JSON'
{"turns": [
 {"text": "Look.", "tool_calls": [{"name": "shell", "arguments": {"command": "cat input/energy.csv input/dir/sub/f.txt"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
run() { # name args...: a run of s.json, its exit status in $code
	local name=$1
	shift
	set +e
	"$ASSAY" run --provider script --script s.json --ask none --run-dir "$T/$name" \
		"$@" "look" </dev/null >"$name.out" 2>"$name.err"
	code=$?
	set -e
}
resume() { # name out args...: assay resume, its exit status in $code
	local name=$1 out=$2
	shift 2
	set +e
	"$ASSAY" resume "$T/$name" "$@" </dev/null >"$out.out" 2>"$out.err"
	code=$?
	set -e
}
hashes() { jget "$T/$1/transcript.jsonl" "[i['sha256'] for i in [e for e in x if e['type'] == 'input_hashes'][-1]['inputs']]"; }
count() { jget "$T/$1/transcript.jsonl" "len(x)"; }

run r1 --input data/energy.csv --input data/dir
check "the run completes (exit $code)" test "$code" -eq 0
file_sha=$(sha256sum data/energy.csv | cut -d' ' -f1)
check "input_hashes records the file's SHA-256, size and kind" \
	test "$(jget "$T/r1/transcript.jsonl" "[(i['dest'], i['kind'], i['bytes'], i['sha256'], i['cached']) for i in [e for e in x if e['type'] == 'input_hashes'][0]['inputs']][0]")" = \
	"('input/energy.csv', 'file', 18, '$file_sha', False)"
check "... and the directory's (one file: .assay/ left out)" \
	test "$(jget "$T/r1/transcript.jsonl" "[(i['dest'], i['kind'], i.get('files'), i['bytes'], len(i['sha256'])) for i in [e for e in x if e['type'] == 'input_hashes'][0]['inputs']][1]")" = \
	"('input/dir', 'dir', 1, 6, 64)"
check "the hashes come after run_start" \
	test "$(jget "$T/r1/transcript.jsonl" "[e['type'] for e in x].index('input_hashes') > [e['type'] for e in x].index('run_start')")" = True
check "the cache is in XDG_CACHE_HOME" test -s "$T/cache/assay/input-hashes.json"

run r2 --input data/energy.csv --input data/dir
check "a second run with the same inputs reads them from the cache" \
	test "$(jget "$T/r2/transcript.jsonl" "[i['cached'] for i in [e for e in x if e['type'] == 'input_hashes'][0]['inputs']]")" = "[True, True]"
check "... with the same hashes" test "$(hashes r2)" = "$(hashes r1)"

# a change of content with the same size: the cache (size, mtime, inode)
# must not hide it; the mtime moves as any edit moves it
printf 'day,kwh\n1,42\n2,99\n' >data/energy.csv
new_sha=$(sha256sum data/energy.csv | cut -d' ' -f1)
before=$(count r1)
resume r1 changed
check "resume after the input changed exits 2 (got $code)" test "$code" -eq 2
check "... naming the input and its path" \
	grep -q "input input/energy.csv ($T/data/energy.csv) is not the file the run had" changed.err
check "... with the old and the new SHA-256" \
	grep -q "its SHA-256 was $file_sha and is now $new_sha" changed.err
check "... and the options: --input FILE:DEST, or --re-execute with the new data" \
	sh -c "grep -qF 'assay resume $T/r1 --input FILE:input/energy.csv' changed.err &&
	       grep -qF 'assay resume $T/r1 --re-execute --input $T/data/energy.csv:input/energy.csv' changed.err"
check "... and the transcript is untouched" test "$(count r1)" = "$before"

cp -p orig.csv data/energy.csv
resume r1 restored
check "with the original back, resume goes on (exit 0, got $code)" test "$code" -eq 0 ||
	tail -3 restored.err

# the sandbox does not see the directory's .assay/: a change there is no change
echo more >>data/dir/.assay/state
resume r1 own
check "a change inside the directory input's .assay/ is no change (exit $code)" test "$code" -eq 0 ||
	tail -3 own.err
echo changed >data/dir/sub/f.txt
resume r1 dirchanged
check "a changed file inside a directory input stops the resume (exit 2, got $code)" \
	test "$code" -eq 2
check "... naming the directory" \
	grep -q "input input/dir ($T/data/dir) is not the file the run had: its SHA-256 was" dirchanged.err
echo inner >data/dir/sub/f.txt
resume r1 dirback
check "with the file's content back, resume goes on (exit $code)" test "$code" -eq 0 ||
	tail -3 dirback.err

mv data/energy.csv moved.csv
before=$(count r1)
resume r1 missing
check "a missing input stops the resume (exit 2, got $code)" test "$code" -eq 2
check "... naming it and the option to pass" \
	sh -c "grep -q 'input input/energy.csv ($T/data/energy.csv) is missing' missing.err &&
	       grep -qF -- '--input FILE:input/energy.csv' missing.err"
check "... and the transcript is untouched" test "$(count r1)" = "$before"
resume r1 elsewhere --input "$T/moved.csv:input/energy.csv"
check "the same file given again elsewhere is accepted (exit 0, got $code)" test "$code" -eq 0 ||
	tail -3 elsewhere.err
printf 'other\n' >other.csv
resume r1 wrongfile --input "$T/other.csv:input/energy.csv"
check "another file given in its place is refused (exit 2, got $code)" test "$code" -eq 2
check "... naming the file given" grep -q "input input/energy.csv ($T/other.csv) is not the file the run had" wrongfile.err
resume r1 reexec --re-execute --input "$T/other.csv:input/energy.csv" --input data/dir
check "--re-execute with the new data runs, in a new run dir (exit 0, got $code)" test "$code" -eq 0 ||
	tail -3 reexec.err
check "... and the sandbox saw the new data" \
	sh -c "cat '$T'/r1-re1/exec/*.stdout | grep -qx other"
check "... recording the new hash" \
	test "$(jget "$T/r1-re1/transcript.jsonl" "[e['inputs'][0]['sha256'] for e in x if e['type'] == 'input_hashes'][-1]")" = \
	"$(sha256sum other.csv | cut -d' ' -f1)"

# a file written a moment ago is hashed but not cached (a write in the
# same mtime tick would go unseen)
printf 'fresh\n' >fresh.csv
run r3 --input fresh.csv
check "a just-written input is hashed" \
	test "$(jget "$T/r3/transcript.jsonl" "[e['inputs'][0]['sha256'] for e in x if e['type'] == 'input_hashes'][0]")" = \
	"$(sha256sum fresh.csv | cut -d' ' -f1)"
check "... and not cached" sh -c "! grep -qF '$T/fresh.csv' '$T/cache/assay/input-hashes.json'"

# a cache file that is not assay's: hashes still right, the cache rewritten
echo 'not json' >"$T/cache/assay/input-hashes.json"
run r4 --input orig.csv
check "a damaged cache does not stop the run (exit $code)" test "$code" -eq 0
check "... the hash is still right" \
	test "$(jget "$T/r4/transcript.jsonl" "[e['inputs'][0]['sha256'] for e in x if e['type'] == 'input_hashes'][0]")" = "$file_sha"
check "... and the cache is whole again" \
	$PY -c "import json,sys; assert json.load(open(sys.argv[1]))['version'] == 1" "$T/cache/assay/input-hashes.json"
finish
