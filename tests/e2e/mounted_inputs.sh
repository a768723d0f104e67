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
need_bwrap
cd "$T"
mkdir -p data/dir/sub data/dir/.assay
printf 'day,kwh\n1,42\n2,43\n' >data/energy.csv
echo inner >data/dir/sub/f.txt
echo own-state >data/dir/.assay/state
touch -d '2021-03-04 05:06:07.123456789' data/energy.csv data/dir/sub/f.txt
stamp() { stat -c '%s %y %i' "$@"; }
before=$(stamp data/energy.csv data/dir/sub/f.txt)
sum_before=$(cat data/energy.csv data/dir/sub/f.txt | sha256sum)

# each attempt prints its own exit status, so the output says which failed
cat >tries.json <<'JSON'
{"turns": [
 {"text": "Trying.", "tool_calls": [{"name": "shell", "arguments": {"command": "cat input/energy.csv; wc -c < input/dir/sub/f.txt; echo x >> input/energy.csv; echo append=$?; : > input/energy.csv; echo trunc=$?; rm -f input/energy.csv; echo rm=$?; mv input/energy.csv gone.csv; echo mv=$?; chmod 777 input/energy.csv; echo chmod=$?; touch input/energy.csv; echo touch=$?; echo y > input/dir/sub/f.txt; echo dirwrite=$?; touch input/dir/new; echo dircreate=$?; rm -rf input/dir; echo rmdir=$?; ls -A input/dir/.assay | wc -l; cat input/dir/.assay/state; echo own=$?; /usr/bin/python3 -c \"open('input/energy.csv','w').write('py')\"; echo py=$?; /usr/bin/python3 -c \"import os; os.utime('input/energy.csv', (0, 0))\"; echo utime=$?; mkdir -p output && echo made > output/made.txt"}}]},
 {"text": "With the tools.", "tool_calls": [
   {"name": "write_file", "arguments": {"path": "input/energy.csv", "content": "evil"}},
   {"name": "write_file", "arguments": {"path": "input/dir/sub/new.txt", "content": "evil"}},
   {"name": "read_file", "arguments": {"path": "input/energy.csv"}},
   {"name": "read_file", "arguments": {"path": "input/dir/sub/f.txt"}},
   {"name": "read_file", "arguments": {"path": "input/dir/.assay/state"}},
   {"name": "list_files", "arguments": {"path": "input"}}]},
 {"text": "And python.", "tool_calls": [{"name": "python", "arguments": {"code": "import pandas as pd\ndf = pd.read_csv('input/energy.csv')\nprint(int(df.kwh.sum()))\ntry:\n    open('input/energy.csv', 'a').write('z')\nexcept OSError as e:\n    print('refused', e.errno)"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
set +e
"$ASSAY" run --provider script --script tries.json --ask none --run-dir "$T/r1" \
	--input data/energy.csv --input data/dir "try to change the inputs" >r1.out 2>r1.err
code=$?
set -e
TR=$T/r1/transcript.jsonl
check "the run completes (exit $code)" test "$code" -eq 0
out=$(cat "$T"/r1/exec/*.stdout 2>/dev/null)
check "the sandbox reads both inputs" \
	sh -c "printf '%s' \"\$1\" | grep -q '^1,42$' && printf '%s' \"\$1\" | grep -qx 6" _ "$out"
for k in append trunc rm mv chmod touch dirwrite dircreate rmdir py utime; do
	check "shell/python: $k fails" sh -c "printf '%s\n' \"\$1\" | grep -qx '$k=[1-9][0-9]*'" _ "$out"
done
check "a directory input does not show its .assay/ (empty, and its file is not there)" \
	sh -c "printf '%s\n' \"\$1\" | grep -qx 0 && printf '%s\n' \"\$1\" | grep -qx 'own=1' && ! printf '%s' \"\$1\" | grep -q own-state" _ "$out"
results() { jget "$TR" "[(e['content'], e['is_error']) for e in x if e['type'] == 'tool_result']"; }
check "write_file into either input is refused, saying it is read-only" \
	test "$(jget "$TR" "[e['is_error'] and 'mounted read-only' in e['content'] for e in x if e['type'] == 'tool_result'][1:3]")" = "[True, True]"
check "read_file reads the inputs' real bytes" \
	test "$(jget "$TR" "[e['content'] for e in x if e['type'] == 'tool_result'][3:5]")" = "['day,kwh\\n1,42\\n2,43\\n', 'inner\\n']"
check "read_file does not reach the hidden .assay/" \
	test "$(jget "$TR" "[e['is_error'] for e in x if e['type'] == 'tool_result'][5]")" = True
listed=$(jget "$TR" "[e['content'] for e in x if e['type'] == 'tool_result'][6]")
check "list_files shows the inputs with their real sizes" \
	sh -c "printf '%s' \"\$1\" | grep -q 'input/energy.csv  18 bytes' && printf '%s' \"\$1\" | grep -q 'input/dir/sub/f.txt  6 bytes'" _ "$listed"
check "python reads it (sum 85) and cannot append (errno 30)" \
	test "$(jget "$TR" "[e['content'] for e in x if e['type'] == 'tool_result'][7]")" = "$(printf '85\nrefused 30')"
check "the host files' bytes are unchanged" test "$(cat data/energy.csv data/dir/sub/f.txt | sha256sum)" = "$sum_before"
check "the host files' size, mtime (ns) and inode are unchanged" test "$(stamp data/energy.csv data/dir/sub/f.txt)" = "$before"
check "the host dir has no new file" test "$(find data | sort | tr '\n' ' ')" = \
	"data data/dir data/dir/.assay data/dir/.assay/state data/dir/sub data/dir/sub/f.txt data/energy.csv "
check "run_start records both as mounts, with the resolved path, kind and size" \
	test "$(jget "$TR" "[(i['mode'], i['path'], i['kind'], i.get('bytes')) for i in x[0]['inputs']]")" = \
	"[('mount', '$T/data/energy.csv', 'file', 18), ('mount', '$T/data/dir', 'dir', None)]"
check "the placeholders are gone from the workspace after the run" \
	sh -c "! test -e '$T/r1/workspace/input/energy.csv' && ! test -e '$T/r1/workspace/input/dir'"
check "the archive holds what the run made, not the inputs" \
	test "$(tar -tzf "$T/r1/workspace.tar.gz" | sort | tr '\n' ' ')" = "input/ output/ output/made.txt "
check "the run dir is small (no copy of the inputs)" test "$(du -sk "$T/r1" | cut -f1)" -lt 2000

# "copy": true: a writable copy; the original is still untouched
cat >copy.json <<JSON
{"inputs": [{"src": "$T/data/energy.csv", "dest": "input/energy.csv", "copy": true}]}
JSON
cat >edit.json <<'JSON'
{"turns": [
 {"text": "Editing.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo 3,44 >> input/energy.csv && wc -l < input/energy.csv"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
set +e
"$ASSAY" run --provider script --script edit.json --ask none --run-dir "$T/r2" --config copy.json "edit" >r2.out 2>r2.err
code=$?
set -e
check "a copy input is writable (exit $code, 4 lines)" \
	sh -c "test $code -eq 0 && grep -qx 4 '$T'/r2/exec/*.stdout"
check "... recorded as a copy, kept in the archive, the original untouched" \
	sh -c "test \"\$2\" = copy && tar -tzf '$T/r2/workspace.tar.gz' | grep -qx input/energy.csv &&
		test \"\$(stat -c '%s %y %i' data/energy.csv data/dir/sub/f.txt)\" = \"\$1\"" _ "$before" \
	"$(jget "$T/r2/transcript.jsonl" "x[0]['inputs'][0]['mode']")"

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
