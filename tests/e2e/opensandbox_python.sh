#!/usr/bin/env bash
# The python tool on the opensandbox backend (fake OpenSandbox server):
# execd gives commands no stdin, so each cell goes in by a command of
# its own that writes it for the kernel's feeder and brings its reply
# back, its frames base64'd by a relay (os_cell.c). Headless: state kept
# across calls, a cell past its timeout interrupted (by upload) with the
# state kept, binary bytes through the frames intact; awkward characters
# in a cell intact, a cell too big for a command line by upload, a
# kernel that dies under its cell's command; the workspace listing the
# cell's command brings back is the one a listing command gives (ctime
# and all). In the TUI (tmux): Ctrl-C
# interrupts a running cell, the kernel lives on, the next message's
# cell still sees earlier variables. Skipped (77) without bubblewrap or
# tmux.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"
start_fake_os

cat >"$T/py.json" <<'EOF'
{"turns": [
  {"text": "Set state.", "tool_calls": [{"name": "python", "arguments": {"code": "x = 41\nimport os\nos.getpid()"}}]},
  {"text": "Loop.", "tool_calls": [{"name": "python", "arguments": {"code": "import time\nwhile True:\n    time.sleep(0.1)", "timeout_s": 2}}]},
  {"text": "Use state.", "tool_calls": [{"name": "python", "arguments": {"code": "print('x+1 =', x + 1)\nprint(bytes(range(256)).hex())\nlen(bytes(range(256)) * 4000)"}}]},
  {"text": "Done.", "tool_calls": []}
]}
EOF
set +e
"$ASSAY" run --sandbox opensandbox --provider script --script "$T/py.json" \
	--run-dir "$T/py" "py" 2>"$T/py.stderr"
code=$?
set -e
TR=$T/py/transcript.jsonl
check "the python run completes (exit $code)" test "$code" -eq 0
check "KeyboardInterrupt at the cell's timeout" \
	sh -c "grep -q \"interrupted (KeyboardInterrupt) at the cell's timeout\" '$TR'"
check "the next cell still sees x" sh -c "grep -q 'x+1 = 42' '$TR'"
hex=$($PY -c 'print(bytes(range(256)).hex())')
check "every byte value came back through the frames" grep -q "$hex" "$TR"
check "the trailing value" sh -c "grep -q '1024000' '$TR'"
check "one kernel for the run" test "$(grep -c 'kernel 1 ready' "$T/py/assay.log")" -eq 1
check "no second kernel" sh -c "! grep -q 'kernel 2 ready' '$T/py/assay.log'"

# --- what goes in: awkward characters (in the cell command's text), a
# cell too big for a command line (by upload), a kernel that dies while
# its cell's command waits (ended with it, the next cell runs) ---------
$PY - "$T/edge.json" <<'PY'
import json, sys
awk = "s = 'q\\' \" \\\\ % %s %b \\x00 \u00e9 \U0001F600'\nprint(len(s), ascii(s))"
big = "b = '" + "x" * 120000 + "'\nprint('big', len(b))"
turns = [{"text": t, "tool_calls": [{"name": "python", "arguments": {"code": c, "timeout_s": 10}}]}
         for t, c in (("Awkward.", awk), ("Big.", big), ("Still.", "print('still', len(b))"),
                      ("Die.", "import os\nos._exit(3)"), ("Again.", "print('alive')"))]
turns.append({"text": "Done.", "tool_calls": []})
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PY
start_fake_os
set +e
"$ASSAY" run --sandbox opensandbox --provider script --script "$T/edge.json" \
	--run-dir "$T/edge" "edge" 2>"$T/edge.stderr"
code=$?
set -e
TR=$T/edge/transcript.jsonl
want=$($PY -c "s = 'q\\' \" \\\\ % %s %b \\x00 \u00e9 \U0001F600'; print(len(s), ascii(s))")
check "the edge run completes (exit $code)" test "$code" -eq 0
check "quotes, backslashes, %, NUL and non-ASCII went in intact: $want" \
	$PY -c "import json,sys; sys.exit(not any(sys.argv[2] in json.loads(l).get('content', '') for l in open(sys.argv[1])))" "$TR" "$want"
check "a cell too big for a command line runs (by upload)" sh -c "grep -q 'big 120000' '$TR' && grep -q 'still 120000' '$TR'"
check "... it was one upload into the kernel's stdin" \
	test "$($PY -c "import json,sys; print(sum(1 for l in open(sys.argv[1]) for u in json.loads(l).get('uploaded', []) if '.assay-io' in u['path'] and not u['path'].endswith('.ok')))" "$OS_LOG")" -eq 1
check "a kernel that dies under its cell says so" grep -q 'exited with code 3' "$TR"
check "... and the next cell runs in a new one" grep -q 'alive' "$TR"

# --- the listing a cell's command takes (its relay's: os_cell.c) is
# what a listing command (fileop's list) gives, entry for entry: after
# a shell call (a listing of its own) a cell that changes nothing keeps
# the whole archive, and the end's fresh listing matches the cell's, so
# the end does not archive again; a chmod alone in a cell (its ctime)
# is a delta after a cell that changed nothing and took none. The shell
# call sleeps: nothing is in the racy margin ---------------------------
mk="mkdir -p 'sub dir/deep' && echo one >'sub dir/a b.txt' && echo two >'sub dir/deep/b.txt' && ln -s 'a b.txt' 'sub dir/link' && chmod 640 'sub dir/deep/b.txt' && sleep 0.2"
chmod="import os\\nos.chmod('sub dir/deep/b.txt', 0o755)"
for r in same chmod; do
	last=
	[ "$r" = same ] || last=",{\"text\": \"Chmod.\", \"tool_calls\": [{\"name\": \"python\", \"arguments\": {\"code\": \"$chmod\"}}]}"
	cat >"$T/$r.json" <<JSON
{"turns": [
  {"text": "Make.", "tool_calls": [{"name": "shell", "arguments": {"command": "$mk"}}]},
  {"text": "Cell.", "tool_calls": [{"name": "python", "arguments": {"code": "print('listed')"}}]}$last,
  {"text": "Done.", "tool_calls": []}
]}
JSON
	start_fake_os
	set +e
	"$ASSAY" run --sandbox opensandbox --provider script --script "$T/$r.json" \
		--run-dir "$T/$r" "$r" 2>"$T/$r.stderr"
	code=$?
	set -e
	check "the $r run completes (exit $code)" test "$code" -eq 0
done
check "a cell that changes nothing lists as the listing commands before and after it (the end does not archive again)" \
	grep -q "end: the workspace is unchanged since .*: not archived again" "$T/same/assay.log"
check "... and the archive holds what the shell made" \
	sh -c "tar -tf '$(ws_archive "$T/same")' | grep -q 'sub dir/deep/b.txt'"
# the tars downloaded (a delta, the end's archive) after each cell's
# command began (its log's t), up to the next's: once the fake's log
# has settled
os_log_settle
tars=$($PY - "$OS_LOG" <<'PY'
import json, sys
log = [json.loads(l) for l in open(sys.argv[1])]
cells = sorted(e["t"] for e in log if "tap.$n" in e.get("command", ""))
tars = [e["t"] for e in log if "/files/download" in e["path"] and e["path"].endswith(".tar")]
print(*(sum(1 for t in tars if a <= t < b) for a, b in zip(cells, cells[1:] + [1e12])))
PY
)
check "a chmod alone in a cell is a delta, the cell before it took none (the cell's listing has ctime): $tars" \
	test "$tars" = "0 2"
check "... the end folds it into the archive, with the new mode" \
	test "$(tar -tvf "$(ws_archive "$T/chmod")" 'sub dir/deep/b.txt' | cut -c1-10)" = -rwxr-xr-x

# --- Ctrl-C in the TUI interrupts a cell ------------------------------
cat >"$T/tui.json" <<'EOF'
{"turns": [
  {"text": "Set state.", "tool_calls": [{"name": "python", "arguments": {"code": "x = 41"}}]},
  {"text": "Loop.", "tool_calls": [{"name": "python", "arguments": {"code": "import time\nprint('looping', flush=True)\nwhile True:\n    time.sleep(0.1)"}}]},
  {"text": "Use state.", "tool_calls": [{"name": "python", "arguments": {"code": "print('after: x+1 =', x + 1)"}}]},
  {"text": "Done.", "tool_calls": []}
]}
EOF
RUN=$T/tui
TR=$RUN/transcript.jsonl
tui_start 120 40 OPEN_SANDBOX_DOMAIN="$OS_URL" -- --sandbox opensandbox --provider script \
	--script "$T/tui.json" --ask none --run-dir "$RUN" "loop"
check "the loop cell runs" wait_until 30 'grep -q looping "$RUN"/exec/*.stdout 2>/dev/null'
keys C-c
check "Ctrl-C interrupts the cell" wait_until 15 'grep -q KeyboardInterrupt "$TR"'
check "... the result says cancelled, state kept" \
	wait_until 10 "grep -q 'cancelled by the user (KeyboardInterrupt)' '$TR'"
check "the agent waits" wait_for 'waiting for you' 15
type_text "go on"
keys Enter
check "the next cell sees the state" wait_until 30 'grep -q "after: x+1 = 42" "$TR"'
check "no kernel restart" sh -c "! grep -q 'kernel 2 ready' '$RUN/assay.log'"
wait_for 'waiting for you' 20 >/dev/null || true
keys C-q
check "quits (exit 0)" test "$(wait_exit 30)" = 0
check "the sandbox was deleted" \
	test "$(os_count POST '^/v1/sandboxes$')" -eq "$(os_count DELETE '^/v1/sandboxes/[^/?]+$')"
finish
