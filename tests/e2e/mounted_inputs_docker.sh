#!/usr/bin/env bash
# With --sandbox docker and a daemon on this machine (unix socket),
# inputs are bound read-only into the container, not copied (issue 15):
# the sandbox reads them and cannot change them through the shell,
# python or the file tools; the host files' bytes, mtime and inode are
# the same after a run that tried; a directory input hides its .assay/
# (an empty read-only tmpfs); the archive holds what the run made, not
# the inputs, nor the mount points the daemon made; "copy": true still
# copies; a resume in place binds them again (after the hash check:
# a changed input stops it, exit 2); no container or volume is left.
# Skipped (77) only when no daemon answers.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/mount_checks.bash"
need_docker_image
cd "$T"
export XDG_CACHE_HOME=$T/cache
P=dkmnt$$- # run directory names, which label the containers
DOCKER_REAP=$P # what a failed check leaves goes at the exit
mount_data

set +e
"$ASSAY" run --sandbox docker --provider script --script "$SRC/tests/e2e/data/mount_tries.json" \
	--ask none --run-dir "$T/${P}r1" --input data/energy.csv --input data/dir \
	"try to change the inputs" </dev/null >r1.out 2>r1.err
code=$?
set -e
TR=$T/${P}r1/transcript.jsonl
check "the run completes (exit $code)" test "$code" -eq 0 || tail -5 r1.err
mount_tries_checks "$T/${P}r1"
check "run_start records both as mounts" \
	test "$(jget "$TR" "[(i['mode'], i['path'], i['kind']) for i in x[0]['inputs']]")" = \
	"[('mount', '$T/data/energy.csv', 'file'), ('mount', '$T/data/dir', 'dir')]"
check "the log says they are bound, not copied" \
	sh -c "grep -q 'mounted read-only at input/energy.csv' '$T/${P}r1/assay.log' && ! grep -q 'inputs are copied' '$T/${P}r1/assay.log'"
check "the archive holds what the run made: not the inputs, nor their mount points" \
	test "$(ws_list "$T/${P}r1" | sort | tr '\n' ' ')" = "input/ output/ output/made.txt "
check "no container or volume is left" test "$(docker_left "${P}r1")" = 0

# "copy": true: a copy in the container, writable; the original untouched
mount_copy_check "$T/${P}r2" --sandbox docker

# resume in place: a fresh container, the workspace restored, the inputs
# bound again
cat >two.json <<'JSON'
{"turns": [
 {"text": "First.", "tool_calls": [{"name": "shell", "arguments": {"command": "mkdir -p output && head -2 input/energy.csv > output/head.csv"}}]},
 {"text": "Second.", "tool_calls": [{"name": "shell", "arguments": {"command": "cat output/head.csv && tail -1 input/energy.csv && ls input/dir/sub"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
set +e
"$ASSAY" run --sandbox docker --provider script --script two.json --ask none --max-turns 1 \
	--run-dir "$T/${P}r3" --input data/energy.csv --input data/dir "two steps" </dev/null >r3.out 2>r3.err
code=$?
"$ASSAY" resume "$T/${P}r3" --max-turns 5 </dev/null >r3r.out 2>r3r.err
rcode=$?
set -e
check "a run stopped at its turn limit (exit $code) resumes in place (exit $rcode)" \
	sh -c "test $code -eq 5 && test $rcode -eq 0" || tail -5 r3r.err
check "... the restored file and the bound inputs are read" \
	sh -c "cat '$T/${P}r3'/exec/*.stdout | tr '\n' ' ' | grep -q 'day,kwh 1,42 2,43 f.txt'"
check "... and the archive still lacks the inputs" \
	test "$(ws_list "$T/${P}r3" | sort | tr '\n' ' ')" = "input/ output/ output/head.csv "
printf 'day,kwh\n1,42\n2,99\n' >data/energy.csv
set +e
"$ASSAY" resume "$T/${P}r3" --max-turns 9 "again" </dev/null >r3c.out 2>r3c.err
ccode=$?
set -e
check "with the input changed, resume stops (exit 2, got $ccode) naming it" \
	sh -c "test $ccode -eq 2 && grep -q 'input input/energy.csv ($T/data/energy.csv) is not the file the run had' r3c.err"
check "no container or volume is left by any of the runs" \
	test "$(($(docker_left "${P}r2") + $(docker_left "${P}r3")))" = 0
finish
