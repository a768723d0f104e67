#!/usr/bin/env bash
# Progress for the docker backend's slow transfers (issue 15): a headless
# run whose 1 GiB input is copied in ("copy": true, as every input is
# with a remote daemon) prints the staging on stderr, bytes of the total
# with the percentage and rate, once a second after the first second and
# a last line at 100%; the workspace archive (which then holds the
# copy) prints its saving likewise, and so does the delivery of the
# copy as a declared output (its total known only at the end). The staged copy is whole in the
# container. Skipped (77) only when no daemon answers.
source "$(dirname "$0")/lib.bash"
need_docker_image
cd "$T"
export XDG_CACHE_HOME=$T/cache
P=dkprog$$-
DOCKER_REAP=$P # what a failed check leaves goes at the exit
# random bytes: zeros would stream faster than a second
head -c 1024M /dev/urandom >big.bin
cat >copy.json <<'JSON'
{"inputs": [{"src": "big.bin", "copy": true}]}
JSON
cat >one.json <<'JSON'
{"turns": [
 {"text": "Size.", "tool_calls": [{"name": "shell", "arguments": {"command": "wc -c < input/big.bin"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
set +e
"$ASSAY" run --sandbox docker --config copy.json --provider script --script one.json \
	--ask none --run-dir "$T/${P}run" --out "$T/out" --output input/big.bin \
	"size" </dev/null >run.out 2>run.err
code=$?
set -e
check "the run completes (exit $code)" test "$code" -eq 0 || cat run.err
check "staging prints its progress: bytes of the total, percentage, rate" \
	grep -Eq '^  staging the inputs: [0-9.]+ [kMG]?B of 1\.1 GB \([0-9]+%\), [0-9.]+ [kMG]?B/s$' run.err
check "... and its end, at 100%" grep -q '^  staging the inputs: 1.1 GB of 1.1 GB (100%)' run.err
check "... a line a second at most, not one per chunk" \
	test "$(grep -c "^  staging the inputs" run.err)" -le 10
check "the copy is whole in the container" \
	grep -qx 1073741824 "$T/${P}run"/exec/*.stdout
check "saving the workspace prints its progress too" \
	grep -q '^  saving the workspace: ' run.err
check "delivering the output prints its bytes and rate (its total is known at the end)" \
	grep -Eq '^  delivering input/big.bin: [0-9.]+ [kMG]?B, [0-9.]+ [kMG]?B/s$' run.err
check "... and its end" grep -q '^  delivering input/big.bin: 1.1 GB of 1.1 GB (100%)' run.err
check "the output is delivered whole" cmp -s big.bin "$T/out/input/big.bin"
check "no container or volume left" test "$(docker_left ${P}run)" -eq 0
finish
