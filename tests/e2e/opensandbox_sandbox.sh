#!/usr/bin/env bash
# The local sandbox's escape probes, adapted to the opensandbox backend
# and run against the fake OpenSandbox server: the file tools cannot be
# led out of the workspace (symlinks, "..", absolute paths); no host
# file and no host secret reaches a command; the network is off unless
# --network (and an allowlist becomes egress rules); the timeout and
# Ctrl-C end the command (DELETE /command) and every process it
# started; a process bomb and a memory bomb are contained by the limits
# sent (the server's pids limit, resourceLimits.memory and the
# per-command ulimits), and the run goes on. Skipped (77) without
# bubblewrap.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
D=$SRC/tests/e2e/data
mkdir -p secret && echo TOP-SECRET-CONTENT >secret/secret.txt
echo fine >ok.txt
start_fake_os --pids-limit 64
os_create() { $PY - "$OS_LOG" "$1" <<'PY'
import json, sys
last = None
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("method") == "POST" and e.get("path") == "/v1/sandboxes":
        last = e
print(eval(sys.argv[2], {"e": last}))
PY
}
results() { jget "$1" "[e['is_error'] for e in x if e['type']=='tool_result'][1:]"; }
out_of() { cat "$T/$1"/exec/*.stdout 2>/dev/null; }
has() { out_of "$1" | grep -q "$2"; } # has RUN PATTERN: in its commands' output
lacks() { ! has "$@"; }

# --- the file tools and the environment --------------------------------
set +e
SECRET_DIR=$T/secret ASSAY_PLANTED_SECRET=planted-value-123 \
	"$ASSAY" run --sandbox opensandbox --ask none --provider script \
	--script "$D/escape.json" --input ok.txt --run-dir "$T/esc" "try to escape" \
	2>"$T/esc.stderr"
code=$?
set -e
TR=$T/esc/transcript.jsonl
check "escape run completes (exit $code)" test "$code" -eq 0
check "every escaping file-tool call is an error, the legitimate one is not" \
	test "$(results "$TR")" = "[True, True, True, True, True, True, True, False]"
check "refusals say why" grep -q 'outside the workspace' "$TR"
check "no secret content reached the model or the transcript" \
	sh -c "! grep -q TOP-SECRET-CONTENT '$TR'"
check "nothing written outside the workspace" \
	sh -c "! test -e /tmp/pwned && ! test -e '$T/esc/escaped' && ! test -e '$T/escaped'"
check "the planted secret is not in the sandbox environment" \
	lacks esc planted-value-123
check "the sandbox env has HOME=/workspace" has esc '^HOME=/workspace' 
check "the server's address is not in the sandbox environment" lacks esc OPEN_SANDBOX

# --- the network ---------------------------------------------------------
port=${OS_URL##*:}
cat >"$T/net.json" <<EOF
{"turns": [
  {"text": "Reach out.", "tool_calls": [{"name": "shell", "arguments": {"command": "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $port), timeout=3); print(\"CONNECTED\")' || echo REFUSED"}}]},
  {"text": "Done.", "tool_calls": []}
]}
EOF
"$ASSAY" run --sandbox opensandbox --ask none --provider script --script "$T/net.json" \
	--run-dir "$T/nonet" "net" 2>"$T/nonet.stderr"
check "no network by default" has nonet REFUSED
check "... the create said deny" test "$(os_create 'e["networkPolicy"]["defaultAction"]')" = deny
"$ASSAY" run --sandbox opensandbox --ask none --network --provider script --script "$T/net.json" \
	--run-dir "$T/net" "net" 2>"$T/net.stderr"
check "--network opens it" has net CONNECTED
check "... the create had no policy (the server's default: open)" \
	test "$(os_create '"networkPolicy" in e')" = False
echo '{"network": {"allow": ["pypi.org", "*.pythonhosted.org"]}}' >"$T/allow.json"
"$ASSAY" run --config "$T/allow.json" --sandbox opensandbox --ask none --provider script \
	--script "$T/net.json" --run-dir "$T/allow" "net" 2>"$T/allow.stderr"
check "an allowlist becomes egress rules" \
	test "$(os_create '[(r["action"], r["target"]) for r in e["networkPolicy"]["egress"]]')" = \
	"[('allow', 'pypi.org'), ('allow', '*.pythonhosted.org')]"
check "... under deny-all" test "$(os_create 'e["networkPolicy"]["defaultAction"]')" = deny
check "... and this host is not on it" has allow REFUSED

# --- the timeout and Ctrl-C ---------------------------------------------
marked_sleepy "$T/sleepy.json"
set +e
"$ASSAY" run --sandbox opensandbox --provider script --script "$T/sleepy.json" --timeout 2 \
	--run-dir "$T/slow" "wait" 2>"$T/slow.stderr"
code=$?
set -e
check "timed-out run still completes (exit $code)" test "$code" -eq 0
check "exec_end says timed_out" grep -q '"timed_out":true' "$T/slow/transcript.jsonl"
check "the command was interrupted through execd" test "$(os_count DELETE '/port/44772/command\?id=')" -ge 1
check "no sleep 30x survives the timeout" wait_until 10 '! marked_left'

"$ASSAY" run --sandbox opensandbox --provider script --script "$T/sleepy.json" \
	--run-dir "$T/int" "wait" 2>"$T/int.stderr" &
pid=$!
check "Ctrl-C: the command has started" wait_until 20 'grep -q started "$T/int/exec/"*.stdout'
check "... its sleeps are running" wait_until 10 marked_left
kill -INT $pid
set +e
wait $pid
code=$?
set -e
check "Ctrl-C: exit 130 (got $code)" test "$code" -eq 130
check "Ctrl-C: run_end interrupted" \
	test "$(jget "$T/int/transcript.jsonl" 'x[-1]["status"]')" = interrupted
check "Ctrl-C: exec_end says cancelled" grep -q '"cancelled":true' "$T/int/transcript.jsonl"
check "Ctrl-C: no process left" wait_until 10 '! marked_left'
check "Ctrl-C: every sandbox deleted" \
	test "$(os_count POST '^/v1/sandboxes$')" -eq "$(os_count DELETE '^/v1/sandboxes/[^/?]+$')"

# --- a process bomb and a memory bomb ------------------------------------
echo '{"limits": {"memory_mb": 512}}' >"$T/mem.json"
cat >"$T/bombs.json" <<'EOF'
{"turns": [
  {"text": "Write a bomb.", "tool_calls": [{"name": "write_file", "arguments": {"path": "bomb.py", "content": "import os, signal, time\nkids, refused = [], 0\nfor i in range(300):\n    try:\n        pid = os.fork()\n    except OSError:\n        refused += 1\n        continue\n    if pid == 0:\n        time.sleep(20)\n        os._exit(0)\n    kids.append(pid)\nprint('started', len(kids))\nprint('refused', refused)\nfor k in kids:\n    os.kill(k, signal.SIGKILL)\nfor k in kids:\n    os.waitpid(k, 0)\n"}}]},
  {"text": "Fork a lot.", "tool_calls": [{"name": "shell", "arguments": {"command": "python3 bomb.py"}}]},
  {"text": "Eat memory.", "tool_calls": [{"name": "shell", "arguments": {"command": "python3 -c 'b = bytearray(3 << 30); print(\"ATE\", len(b))' 2>&1 | tail -1"}}]},
  {"text": "Still alive?", "tool_calls": [{"name": "shell", "arguments": {"command": "echo STILL-HERE"}}]},
  {"text": "Done.", "tool_calls": []}
]}
EOF
set +e
"$ASSAY" run --config "$T/mem.json" --sandbox opensandbox --ask none --provider script \
	--script "$T/bombs.json" --timeout 60 --run-dir "$T/bombs" "bombs" 2>"$T/bombs.stderr"
code=$?
set -e
check "the bomb run completes (exit $code)" test "$code" -eq 0
started=$(sed -n 's/^started \([0-9]*\)$/\1/p' "$T/bombs/exec/call_1_0.stdout")
check "the process bomb hit the server's pids limit (${started:-?} of 300 started)" \
	test "${started:-300}" -lt 300
check "... the other forks failed (EAGAIN)" grep -q '^refused [1-9]' "$T/bombs/exec/call_1_0.stdout"
check "the create sent the memory limit" test "$(os_create 'e["resourceLimits"]["memory"]')" = 512Mi
check "the memory bomb failed" grep -q MemoryError "$T/bombs/exec/call_2_0.stdout"
check "... it never got its 3 GB" sh -c "! grep -q ATE '$T/bombs/exec/call_2_0.stdout'"
check "the run went on after both" grep -q STILL-HERE "$T/bombs/exec/call_3_0.stdout"
finish
