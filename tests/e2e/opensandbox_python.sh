#!/usr/bin/env bash
# The python tool on the opensandbox backend (fake OpenSandbox server):
# execd gives commands no stdin, so the kernel reads a FIFO in the
# sandbox fed by one small command per write, and its frames come back
# base64'd through a relay (os_exec.c). Headless: state kept across
# calls, a cell past its timeout interrupted with the state kept, binary
# bytes through the frames intact. In the TUI (tmux): Ctrl-C interrupts
# a running cell, the kernel lives on, the next message's cell still
# sees earlier variables. Skipped (77) without bubblewrap or tmux.
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
