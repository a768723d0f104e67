#!/usr/bin/env bash
# Inputs are mounted read-only, not copied (issue 15, must-show 4):
# the sandbox reads them, and cannot change them through the shell,
# python or the file tools; the host file's bytes and mtime are the
# same after a run that tried; a directory input hides assay's own
# files in it; the placeholders assay made are gone after the run and
# the archive holds what the run made, not its inputs; "copy": true
# gives a writable copy; a destination that already holds something,
# and two inputs at one place, are refused before anything runs.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/mount_checks.bash"
need_bwrap
cd "$T"
mount_data

# data/mount_tries.json (shared with mounted_inputs_docker.sh): each
# attempt prints its own exit status, so the output says which failed
set +e
"$ASSAY" run --provider script --script "$SRC/tests/e2e/data/mount_tries.json" --ask none --run-dir "$T/r1" \
	--input data/energy.csv --input data/dir "try to change the inputs" >r1.out 2>r1.err
code=$?
set -e
TR=$T/r1/transcript.jsonl
check "the run completes (exit $code)" test "$code" -eq 0
mount_tries_checks "$T/r1"
check "run_start records both as mounts, with the resolved path, kind and size" \
	test "$(jget "$TR" "[(i['mode'], i['path'], i['kind'], i.get('bytes')) for i in x[0]['inputs']]")" = \
	"[('mount', '$T/data/energy.csv', 'file', 18), ('mount', '$T/data/dir', 'dir', None)]"
check "the placeholders are gone from the workspace after the run" \
	sh -c "! test -e '$T/r1/workspace/input/energy.csv' && ! test -e '$T/r1/workspace/input/dir'"
check "the archive holds what the run made, not the inputs" \
	test "$(ws_list "$T/r1" | sort | tr '\n' ' ')" = "input/ output/ output/made.txt "
check "the run dir is small (no copy of the inputs)" test "$(du -sk "$T/r1" | cut -f1)" -lt 2000

# "copy": true: a writable copy; the original is still untouched
mount_copy_check "$T/r2"

# refused before anything runs: a destination that holds something
mkdir -p ws/input && echo mine >ws/input/energy.csv
set +e
"$ASSAY" run --provider script --script edit.json --ask none --workspace ws --run-dir "$T/r3" \
	--input data/energy.csv "x" >r3.out 2>r3.err
code=$?
set -e
check "a destination holding a file: exit 3, named, the file kept" \
	sh -c "test $code -eq 3 && grep -q 'input/energy.csv already holds something' r3.err && grep -qx mine ws/input/energy.csv"
set +e
"$ASSAY" run --provider script --script edit.json --ask none --run-dir "$T/r4" \
	--input data/dir:input/d --input data/energy.csv:input/d/e.csv "x" >r4.out 2>r4.err
code=$?
set -e
check "two inputs at one place: exit 3, saying they overlap" \
	sh -c "test $code -eq 3 && grep -q 'overlaps' r4.err"
check "... and nothing was made in the input directory" test ! -e data/dir/e.csv

# --input . with the run dir under ./.assay: the sandbox does not see it
mkdir -p proj && cd proj && printf 'a\n' >a.txt
cat >see.json <<'JSON'
{"turns": [
 {"text": "Looking.", "tool_calls": [{"name": "shell", "arguments": {"command": "ls -A input/proj; ls -A input/proj/.assay | wc -l"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
set +e
"$ASSAY" run --provider script --script see.json --ask none --input .:input/proj "look" >../r5.out 2>../r5.err
code=$?
set -e
cd ..
check "--input . with the run dir inside it: exit $code, a.txt seen, .assay/ empty" \
	sh -c "test $code -eq 0 && cat proj/.assay/runs/*/exec/*.stdout | tr '\n' ' ' | grep -qx '.assay a.txt see.json 0 '"
finish
