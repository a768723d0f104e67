#!/usr/bin/env bash
# A run dir whose filesystem fills up (a small tmpfs): the run ends with
# a clear error (exit 1) that names the transcript and how to go on,
# the transcript keeps only whole lines (every event before the one that
# did not fit), no partial workspace archive is left, and once space is
# freed `assay resume` goes on to a completed run. Then a workspace and
# an output that cannot fit are refused before anything is written.
source "$(dirname "$0")/lib.bash"
need_bwrap
[ "$(id -u)" = 0 ] || skip "mounting the small tmpfs needs root"
cd "$T"
mkdir rd
mount -t tmpfs -o size=8m assay-e2e-full rd || skip "cannot mount a tmpfs here"
trap 'umount -l "$T/rd" 2>/dev/null || true; cleanup' EXIT
cat >fill.json <<'JSON'
{"turns": [
 {"text": "A first file.", "tool_calls": [{"name": "shell", "arguments": {"command": "head -c 2000000 /dev/urandom > first.bin && echo first"}}]},
 {"text": "Fill the disk, then talk.", "tool_calls": [{"name": "shell", "arguments": {"command": "[ -e enough ] || head -c 9000000 /dev/zero > fill.bin; seq 1 100000"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
set +e
"$ASSAY" run --provider script --script fill.json --ask none \
	--run-dir "$T/rd/run" --out "$T/out" "fill the disk" >run.out 2>run.err
code=$?
set -e
tr=$T/rd/run/transcript.jsonl
check "the run fails (exit 1, got $code)" test "$code" -eq 1
check "... saying the transcript cannot be written, and why" \
	grep -q "cannot write $T/rd/run/transcript.jsonl: No space left on device" run.err
check "... and how to go on" grep -q "assay resume $T/rd/run" run.err
whole() { $PY -c 'import json,sys
n=0
for l in open(sys.argv[1], "rb"):
    assert l.endswith(b"\n"); json.loads(l); n+=1
assert n > 5' "$1"; }
check "the transcript holds only whole events" whole "$tr"
check "... and no run_end (the run stopped before it)" \
	test "$(jget "$tr" 'sum(e["type"]=="run_end" for e in x)')" = 0
check "... it holds the first call's result" \
	test "$(jget "$tr" '[e["content"] for e in x if e["type"]=="tool_result"][0].startswith("first")')" = True
no_archive() { test -d "$T/rd/run/workspace" &&
	test -z "$(find "$T/rd/run" -maxdepth 1 -name 'workspace.tar*')"; }
check "no partial workspace archive is left" no_archive
# free the space: the commands' files go (and the resumed call, run
# again, no longer fills the disk)
rm -f "$T/rd/run/workspace/fill.bin" "$T/rd/run/workspace/first.bin"
touch "$T/rd/run/workspace/enough"
rm -f "$T"/rd/run/exec/*
set +e
"$ASSAY" resume "$T/rd/run" </dev/null >resume.out 2>resume.err
rcode=$?
set -e
check "with space freed, resume goes on (exit 0, got $rcode)" test "$rcode" -eq 0 ||
	tail -5 resume.err
check "... to a completed run_end" \
	test "$(jget "$tr" '[e["status"] for e in x if e["type"]=="run_end"]')" = "['completed']"
check "... and the transcript is whole" whole "$tr"

# a workspace (elsewhere) and an output larger than the run dir's free
# space: refused before a byte is written, each saying how much is
# needed and free; no partial archive or output; the transcript whole
rm -rf "$T/rd/run" "$T/out"
mkdir -p ws
cat >big.json <<'JSON'
{"turns": [
 {"text": "Big.", "tool_calls": [{"name": "shell", "arguments": {"command": "head -c 12000000 /dev/urandom > big.bin && echo ok"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
set +e
"$ASSAY" run --provider script --script big.json --ask none --workspace "$T/ws" \
	--run-dir "$T/rd/big" --out "$T/rd/out" --output big.bin "big" </dev/null >big.out 2>big.err
bcode=$?
set -e
check "an archive and an output that cannot fit: the run says so (exit $bcode)" test "$bcode" -eq 1
check "... the archive: how much the workspace holds and how much is free" \
	grep -q "$T/rd/big/workspace.tar.zst: the workspace holds 12 MB and $T/rd/big has .* free: nothing was written" big.err
check "... the output likewise" \
	grep -q "$T/rd/out/big.bin: big.bin holds 12 MB and $T/rd/out has .* free: nothing was written" big.err
check "... no partial archive, no partial output" \
	sh -c "test -z \"\$(find '$T/rd' -name 'workspace.tar*' -o -name 'big.bin*')\""
check "... the transcript is whole, ending in run_end" \
	sh -c "$PY -c 'import json,sys; x=[json.loads(l) for l in open(sys.argv[1])]; assert x[-1][\"type\"] == \"run_end\"' '$T/rd/big/transcript.jsonl'"
check "... and the workspace is kept" test "$(stat -c %s ws/big.bin)" = 12000000
finish
