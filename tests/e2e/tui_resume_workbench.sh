#!/usr/bin/env bash
# assay resume RUN on a terminal opens the workbench (tmux, 120x40): a
# headless run is killed with kill -9 while turn 3's request streams
# (the fake server stalls it); resume in tmux shows the recorded
# conversation (the prompt, turns 1 and 2, their commands and exit
# status, answered from the cache: nothing sent for them), then goes on
# live: turn 3 is requested, its command runs and its output shows, the last
# answer streams in, and the message box takes a new message that is
# sent. Ctrl-Q ends it with exit 0 and the record says so.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"
cat >script.json <<'JSON'
{"turns": [
 {"text": "Step one recorded.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo out-one | tee one.txt"}}]},
 {"text": "Step two recorded.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo out-two | tee two.txt"}}]},
 {"text": "Step three live.", "tool_calls": [{"name": "shell", "arguments": {"command": "cat one.txt two.txt | tr a-z A-Z"}}]},
 {"text": "All finished after the resume.", "tool_calls": []}
]}
JSON
KEY=sk-tui-resume-$RANDOM
export OPENAI_API_KEY=$KEY XDG_CONFIG_HOME=$T/xdg
unset OPENAI_BASE_URL ASSAY_PROVIDER ASSAY_MODEL
# request 3 (turn 3) sends its first event, then stalls
start_fake script.json --key "$KEY" --fault 'stall@3:60'
RUN=$T/run
TR=$RUN/transcript.jsonl
"$ASSAY" run --provider openai --base-url "$URL" --model fake-model --ask none \
	--run-dir "$RUN" "make two files and shout them" </dev/null >run.out 2>run.err &
pid=$!
# killed inside turn 3's request: the server has it, the record says so
in_turn3() {
	[ "$(fake_requests | tr -d ' ')" -ge 3 ] &&
		[ "$(jget "$TR" '(x[-1]["type"], x[-1].get("turn"))' 2>/dev/null)" = "('model_request', 3)" ]
}
for _ in $(seq 600); do in_turn3 && break; sleep 0.05; done
check "the headless run is inside turn 3's request" in_turn3
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
start_fake script.json --key "$KEY"
turns_sent() { $PY -c 'import json,sys; print([json.loads(l)["turn_index"] for l in open(sys.argv[1])])' "$FAKE_LOG"; }

both() { screen_has "$1" && screen_has "$2"; }
tui_start 120 40 "OPENAI_API_KEY=$KEY" "XDG_CONFIG_HOME=$T/xdg" -- resume "$RUN" --base-url "$URL"
check "the workbench opens on the recorded conversation" wait_for 'assistant: Step one recorded\.' 30
check "... in the workbench's panes, not a headless printout" \
	both '─ Conversation ─' '─ Tools ─'
check "... the prompt" screen_has 'you: make two files and shout them'
check "... turn 2" screen_has 'assistant: Step two recorded\.'
check "... their commands in the Tools pane, with the recorded exit status" \
	both '#1 shell +echo out-one .*exit 0' '#2 shell +echo out-two .*exit 0'
check "the run goes on live: turn 3's command ran and its output shows" wait_for 'OUT-ONE' 30
check "... the last answer" wait_for 'assistant: All finished after the resume\.' 30
check "only turns 3 and 4 were sent (1 and 2 from the cache)" test "$(turns_sent)" = "[2, 3]"
check "... and the workbench waits for a message" wait_for 'waiting for you' 10
type_text "one more thing"
keys Enter
check "a new message is sent from the workbench" wait_for 'you: one more thing' 10
check "... and answered" wait_for 'assistant: \(script exhausted\)' 30
check "... one more request" test "$(turns_sent)" = "[2, 3, 4]"
wait_for 'waiting for you' 10 >/dev/null || true
keys C-q
check "Ctrl-Q: assay exits with 0" test "$(wait_exit 20)" = 0
check "the record: resumed once, turns 1-2 cached, turn 3 live" \
	test "$(jget "$TR" '(len([e for e in x if e["type"]=="run_resume"]), [(e["turn"], e["cached"]) for e in x if e["type"]=="model_request"])')" = \
	"(1, [(1, False), (2, False), (3, False), (1, True), (2, True), (3, False), (4, False), (5, False)])"
check "... the user's message after the resume" \
	test "$(jget "$TR" '[e["text"] for e in x if e["type"]=="user_message"]')" = "['make two files and shout them', 'one more thing']"
check "... and it ended completed" test "$(jget "$TR" 'x[-1]["status"]')" = completed
check "turn 3's command wrote what it read" test "$(jget "$TR" '[e["content"] for e in x if e["type"]=="tool_result"][-1]')" = "OUT-ONE
OUT-TWO
[exit code 0]"
finish
