#!/usr/bin/env bash
# Headless --step through a real pseudo-terminal: a pause before each
# model request (n sends it) and before each execution (e edits the
# command: the edited one runs; k skips it: the model is told), and
# --step without a terminal refuses to start (exit 2).
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
cat >script.json <<'JSON'
{"turns": [
 {"text": "First command.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo original-command"}}]},
 {"text": "Second command.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo should-not-run > skipped.txt"}}]},
 {"text": "All done.", "tool_calls": []}
]}
JSON
cat >drive.py <<'PY'
# Answer assay's step prompts on a pty: n, e + edited line, n, k, n.
import os, pty, sys, time, select
answers = [("before model request, turn 1", "n"),
           ("before execution", "e"), ("one line", "echo edited-command > edited.txt; cat edited.txt"),
           ("before model request, turn 2", "n"),
           ("before execution", "k"),
           ("before model request, turn 3", "n")]
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
seen, log, deadline = b"", open("pty.log", "wb"), time.time() + 60
pos = 0
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        log.write(data); log.flush()
        seen += data
    if answers:
        want, reply = answers[0]
        i = seen.find(want.encode(), pos)
        if i >= 0 and seen.rstrip().endswith(b">") or (i >= 0 and want == "one line" and seen.rstrip().endswith(b":")):
            pos = i + len(want)
            os.write(fd, (reply + "\n").encode())
            answers.pop(0)
_, status = os.waitpid(pid, 0)
print("exit", os.waitstatus_to_exitcode(status), "unanswered", len(answers))
PY
$PY drive.py "$ASSAY" run --step --provider script --script script.json --ask none \
	--run-dir "$T/run" "do the two commands" >drive.out 2>&1 || true
cat drive.out
check "the stepped run exits 0 with every pause answered" grep -q "exit 0 unanswered 0" drive.out
tr=$T/run/transcript.jsonl
check "a pause before each of the 3 requests" \
	test "$(jget "$tr" 'len([e for e in x if e["type"]=="step_pause" and e["kind"]=="request"])')" = 3
check "a pause before each of the 2 executions" \
	test "$(jget "$tr" 'len([e for e in x if e["type"]=="step_pause" and e["kind"]=="exec"])')" = 2
check "the request pause shows the turn, messages, estimate and tools" \
	test "$(jget "$tr" '[(e["turn"],e["messages"],e["est_input_tokens"]>100,"shell" in e["tools"]) for e in x if e["type"]=="step_pause" and e["kind"]=="request"][0]')" = "(1, 1, True, True)"
check "the terminal showed the last message in full" grep -q "do the two commands" pty.log
check "the terminal showed the command before it ran" grep -q "echo original-command" pty.log
check "the edit is recorded with original and final" \
	test "$(jget "$tr" '[(e["original"],e["final"]) for e in x if e["type"]=="step_resume" and e["action"]=="edit"]')" = \
	"[('echo original-command', 'echo edited-command > edited.txt; cat edited.txt')]"
check "the edited command is what ran (exec_start)" \
	test "$(jget "$tr" '[e["command"] for e in x if e["type"]=="exec_start"]')" = \
	"['echo edited-command > edited.txt; cat edited.txt']"
check "the edited command's output is real" grep -qx edited-command "$T/run/workspace/edited.txt"
check "the model is told the call was edited" \
	test "$(jget "$tr" '"the user edited this call" in [e for e in x if e["type"]=="tool_result"][0]["content"]')" = True
check "the skipped call did not run" test ! -e "$T/run/workspace/skipped.txt"
check "the model is told the call was skipped" \
	test "$(jget "$tr" '[e["content"].startswith("[skipped by the user") for e in x if e["type"]=="tool_result"][1]')" = True
check "the run completed" test "$(jget "$tr" 'x[-1]["status"]')" = completed

# x ends the run at the first pause
cat >drive2.py <<'PY'
import os, pty, sys, time, select
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
seen, sent, deadline = b"", False, time.time() + 30
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        seen += data
    if not sent and seen.rstrip().endswith(b">"):
        os.write(fd, b"x\n"); sent = True
_, status = os.waitpid(pid, 0)
print("exit", os.waitstatus_to_exitcode(status))
PY
$PY drive2.py "$ASSAY" run --step --provider script --script script.json --ask none \
	--run-dir "$T/run2" "go" >drive2.out 2>&1 || true
check "x ends the run as interrupted (130)" grep -q "exit 130" drive2.out
check "nothing ran after x" test "$(jget "$T/run2/transcript.jsonl" 'len([e for e in x if e["type"]=="exec_start"])')" = 0

# without a terminal: refuse, exit 2, nothing created
set +e
setsid "$ASSAY" run --step --provider script --script script.json --run-dir "$T/run3" "go" \
	</dev/null >notty.out 2>notty.err
code=$?
set -e
check "--step without a terminal exits 2 (got $code)" test "$code" -eq 2
check "... saying why" grep -q "step asks before each model request.*terminal" notty.err
check "... before creating the run dir" test ! -e "$T/run3"
finish
