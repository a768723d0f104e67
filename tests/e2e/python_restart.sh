#!/usr/bin/env bash
# When the Python session dies the run goes on: a segfault, a cell that
# ignores the interrupt (killed after the grace period), os._exit and a
# cell that writes garbage into the kernel's own protocol pipe each end
# the session with a clear result, and the next cell runs in a new one
# that says the earlier state is gone. Through the fake server over HTTP.
# Then a kernel that cannot start at all (the cell says why), and Ctrl-C
# during a cell (interrupted, exit 130, nothing left running).
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
$PY - "$T/cells.json" <<'PYEOF'
import json, sys
cells = [
    ("a = 1\nimport ctypes\nctypes.string_at(0)", None),              # 1 segfault
    ("print('a' in globals())\nb = 2", None),                         # 2 new session
    ("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
     "while True:\n    time.sleep(0.05)", 1),                          # 3 stubborn
    ("print('b' in globals())\nc = 3", None),                         # 4 new session
    ("import os\nos._exit(7)", None),                                  # 5 exits
    ("d = 4\nprint('d set')", None),                                   # 6 new session
    # 7: garbage into every other fd open for writing: the protocol
    # pipe among them. The kernel's frames can then not be trusted.
    ("import os, stat\nfor fd in range(3, 64):\n"
     "    try:\n        os.write(fd, b'GARBAGE' * 3)\n    except OSError:\n        pass\n"
     "'wrote'", None),
    ("print('after garbage', 'd' in globals())", None),               # 8
]
turns = [{"text": "cell", "tool_calls": [{"name": "python", "arguments":
          dict({"code": c}, **({"timeout_s": t} if t else {}))}]} for c, t in cells]
turns.append({"text": "Done.", "tool_calls": []})
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PYEOF
start_fake "$T/cells.json" --quirks openai
set +e
OPENAI_API_KEY=sk-x "$ASSAY" run --ask none --base-url "$URL" --model gpt-test \
	--run-dir "$T/run" "crash it" 2>"$T/stderr"
code=$?
set -e
TR=$T/run/transcript.jsonl
has() { # has N TEXT: result N contains TEXT
	$PY -c 'import json,sys
x=[json.loads(l) for l in open(sys.argv[1])]
r=[e for e in x if e["type"]=="tool_result"][int(sys.argv[2])-1]["content"]
sys.exit(0 if sys.argv[3] in r else 1)' "$TR" "$1" "$2"
}
err() { jget "$TR" "[e for e in x if e['type']=='tool_result'][$1-1]['is_error']"; }
check "run exits 0 (got $code)" test "$code" -eq 0
check "8 results" test "$(jget "$TR" "len([e for e in x if e['type']=='tool_result'])")" = 8
check "segfault: an error" test "$(err 1)" = True
check "segfault: says it crashed, with the signal" has 1 'the Python session crashed (signal 11'
check "segfault: the faulthandler stack names the cell" has 1 'File "<cell 1>", line 3'
check "segfault: says the state is lost" has 1 'variables, imports and data of earlier cells are lost'
check "after the crash: a new session, said so" has 2 '[note: this cell ran in a new Python session'
check "after the crash: the old variable is gone" has 2 'False'
check "stubborn cell: killed after the grace period" has 3 'did not stop within 3 s of the interrupt at its timeout of 1 s'
check "stubborn cell: exec_end timed_out" \
	test "$(jget "$TR" "[e['timed_out'] for e in x if e['type']=='exec_end'][2]")" = True
check "after the kill: a new session, old state gone" has 4 'False'
check "os._exit: reported with its code" has 5 'exited with code 7'
check "after os._exit: the cell runs" has 6 'd set'
check "garbage on the protocol pipe: the session is killed, said why" has 7 'broke the protocol'
check "after the garbage: a new session works" has 8 'after garbage False'
check "five sessions started" \
	test "$(jget "$TR" "len([e for e in x if e['type']=='python_session' and e['state']=='started'])")" = 5
check "every session ended" \
	test "$(jget "$TR" "len([e for e in x if e['type']=='python_session' and e['state']=='ended'])")" = 5
no_procs() { ! pgrep -f "$T/run/workspac[e]" >/dev/null; }
check "no sandbox process left after the run" no_procs

# A kernel that cannot start (here: ASSAY_DATA_DIR supplies a broken
# one): the run goes on, the cell is an error that says why.
mkdir -p "$T/data/share/kernel"
cat >"$T/data/share/kernel/assay_kernel.py" <<'PYEOF'
import sys
sys.stderr.write("kernel-broken-on-purpose\n")
sys.exit(3)
PYEOF
printf '{"turns":[{"text":"c","tool_calls":[{"name":"python","arguments":{"code":"1"}}]},{"text":"Done.","tool_calls":[]}]}' >"$T/one.json"
set +e
ASSAY_DATA_DIR=$T/data "$ASSAY" run --provider script --script "$T/one.json" \
	--run-dir "$T/broken" "try" 2>"$T/broken.stderr"
code=$?
set -e
TR=$T/broken/transcript.jsonl
check "broken kernel: the run still completes (exit $code)" test "$code" -eq 0
check "broken kernel: the cell is an error" test "$(err 1)" = True
check "broken kernel: it says why, from the kernel's stderr" \
	has 1 'python3 did not start in the sandbox: kernel-broken-on-purpose'

# Ctrl-C during a cell: KeyboardInterrupt in the kernel, the run ends as
# interrupted (130) and nothing is left running.
printf '{"turns":[{"text":"c","tool_calls":[{"name":"python","arguments":{"code":"import time\\nprint(\\"started\\", flush=True)\\ntime.sleep(300)"}}]},{"text":"Done.","tool_calls":[]}]}' >"$T/sleepy.json"
"$ASSAY" run --provider script --script "$T/sleepy.json" --run-dir "$T/int" \
	"wait" 2>"$T/int.stderr" &
pid=$!
for _ in $(seq 100); do grep -q started "$T/int/exec/"*.stdout 2>/dev/null && break; sleep 0.1; done
kill -INT $pid
set +e
wait $pid
code=$?
set -e
TR=$T/int/transcript.jsonl
check "Ctrl-C: exit 130 (got $code)" test "$code" -eq 130
check "Ctrl-C: the cell was interrupted with KeyboardInterrupt" has 1 'cancelled by the user (KeyboardInterrupt)'
check "Ctrl-C: run_end interrupted" test "$(jget "$TR" 'x[-1]["status"]')" = interrupted
no_int_procs() { ! pgrep -f "$T/int/workspac[e]" >/dev/null; }
check "Ctrl-C: no sandbox process left" no_int_procs
finish
