#!/usr/bin/env bash
# The docker backend's archive, deltas and outputs stream from the
# daemon, so their room is checked from the post-call listing's sizes
# before a byte is written (issue 15, Limits): a run dir on a small
# tmpfs (8 MB) where a call writes 12 MB into the container's workspace
# (a file, and a directory output of two 5 MB files besides). The
# call's snapshot is refused with the sizes (the whole workspace: a
# delta would not fit either), the run goes on, the outputs that do
# not fit are refused likewise, the end's archive too; the run ends
# completed with the errors said, no partial archive, delta or output
# is left, the transcript is whole, and no container or volume is left.
# A small call before them leaves its snapshot (the whole archive),
# which the refusals do not touch. A mounted input larger than the free
# space is left out of the count (no archive holds it). Skipped (77) only when no daemon
# answers or the tmpfs cannot be mounted.
source "$(dirname "$0")/lib.bash"
need_docker_image
[ "$(id -u)" = 0 ] || skip "mounting the small tmpfs needs root"
cd "$T"
export XDG_CACHE_HOME=$T/cache
mkdir rd
mount -t tmpfs -o size=8m assay-e2e-dkfull rd || skip "cannot mount a tmpfs here"
trap 'umount -l "$T/rd" 2>/dev/null || true; cleanup' EXIT
P=dkfull$$-
DOCKER_REAP=$P # what a failed check leaves goes at the exit
cat >big.json <<'JSON'
{"turns": [
 {"text": "Small.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo small > small.txt"}}]},
 {"text": "Big.", "tool_calls": [{"name": "shell", "arguments": {"command": "head -c 12000000 /dev/urandom > big.bin && mkdir -p parts && head -c 5000000 /dev/urandom > parts/a && head -c 5000000 /dev/urandom > parts/b && echo ok"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
R=$T/rd/${P}run
set +e
"$ASSAY" run --sandbox docker --provider script --script big.json --ask none \
	--run-dir "$R" --out "$T/rd/out" --output small.txt --output big.bin --output parts \
	"big" </dev/null >big.out 2>big.err
code=$?
set -e
TR=$R/transcript.jsonl
check "the run ends (exit $code): completed, with errors said" \
	test "$(jget "$TR" 'x[-1]["type"]+":"+x[-1]["status"]')" = run_end:completed
check "the big call's snapshot is refused: the workspace's size and the free space" \
	grep -q "persisting the workspace: $R/workspace.tar.zst: the workspace holds 22 MB and $R has .* free: nothing was written" big.err
check "the output big.bin is refused likewise" \
	grep -q "$T/rd/out/big.bin: big.bin holds 12 MB and $T/rd/out has .* free: nothing was written" big.err
check "the directory output parts too (its files counted)" \
	grep -q "$T/rd/out/parts: parts holds 10 MB and $T/rd/out has .* free: nothing was written" big.err
check "the small output is delivered" cmp -s "$T/rd/out/small.txt" - <<<"small"
check "run_end: two outputs missing, with the reason" \
	test "$(jget "$TR" '[o["present"] for o in x[-1]["outputs"]]')" = "[True, False, False]"
check "the end's archive is refused too" \
	test "$(grep -c "workspace.tar.zst: the workspace holds 22 MB" big.err)" -ge 2
check "no partial archive, delta or output" \
	sh -c "test -z \"\$(find '$T/rd' -name '*.tmp*' -o -name 'big.bin' -o -name 'parts')\""
check "the small call's snapshot is kept, whole" ws_has "$R" small.txt
check "... without the big file" test -z "$(ws_files "$R" | grep big.bin)"
check "the transcript is whole" \
	$PY -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$TR"
check "no container or volume left" test "$(docker_left ${P}run)" -eq 0

# a mounted input bigger than the free space is not in any archive: the
# run's snapshots are not refused for it
rm -rf "$R" "$T/rd/out"
head -c 20000000 /dev/urandom >big_input.bin
cat >small.json <<'JSON'
{"turns": [
 {"text": "Made.", "tool_calls": [{"name": "shell", "arguments": {"command": "wc -c < input/big_input.bin && echo made > made.txt"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
R=$T/rd/${P}mnt
set +e
"$ASSAY" run --sandbox docker --provider script --script small.json --ask none \
	--run-dir "$R" --input big_input.bin "small" </dev/null >mnt.out 2>mnt.err
code=$?
set -e
check "a 20 MB mounted input on an 8 MB run dir: the run completes (exit $code)" test "$code" -eq 0 ||
	cat mnt.err
check "... nothing refused" sh -c "! grep -q 'nothing was written' mnt.err"
check "... its archive holds what it made, not the input" \
	test "$(ws_files "$R" | tr '\n' ' ')" = "input made.txt "
check "no container or volume left" test "$(docker_left ${P}mnt)" -eq 0
finish
