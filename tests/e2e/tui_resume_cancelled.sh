#!/usr/bin/env bash
# A turn cancelled in the TUI (Ctrl-C while its request streams), then a
# message and one more turn: resume and --re-execute of that run skip
# the cancelled request (the run went on without it) and rebuild the
# rest from the record: zero requests, instead of going live at the
# cancelled turn and dropping everything after it.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"
cat >script.json <<'JSON'
{"turns": [
 {"text": "One.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo one >> log.txt"}}]},
 {"text": "Two.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo two >> log.txt"}}]},
 {"text": "Three.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo three >> log.txt"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
# the 4th request streams its first event, then stalls: Ctrl-C cancels it
start_fake script.json --fault 'stall@4:60'
export OPENAI_API_KEY=sk-cancel XDG_CONFIG_HOME=$T/xdg
unset OPENAI_BASE_URL
RUN=$T/run
TR=$RUN/transcript.jsonl
tui_start 120 40 OPENAI_API_KEY=sk-cancel XDG_CONFIG_HOME=$T/xdg -- \
	--provider openai --base-url "$URL" --model fake-model --ask none \
	--run-dir "$RUN" "log three lines"
check "turn 4 is being requested" wait_until 10 'test "$(fake_requests)" -ge 4'
# Ctrl-C once assay has recorded the request and shows it under way
last_request() { jget "$TR" '[e["turn"] for e in x if e["type"] == "model_request"][-1]'; }
check "... recorded" wait_until 10 'test "$(last_request)" = 4'
check "... and on screen: thinking" wait_until 10 "in_region 39 0 39 119 '^ thinking'"
keys C-c
check "Ctrl-C cancels it: the agent waits" wait_for 'waiting for you' 10
type_text "carry on"
keys Enter
check "the next turn answers" wait_for 'assistant: Done\.' 10
wait_for 'waiting for you' 10 >/dev/null
keys C-q
check "assay exits with 0" test "$(wait_exit 20)" = 0
check "the record: request 4 without an answer, then turn 5" \
	test "$(jget "$TR" '([e["turn"] for e in x if e["type"]=="model_request"], [e["turn"] for e in x if e["type"]=="assistant_message"])')" = \
	"([1, 2, 3, 4, 5], [1, 2, 3, 5])"
requests() { fake_requests | tr -d ' '; }
before=$(requests)

set +e
"$ASSAY" resume "$RUN" --base-url "$URL" </dev/null >resume.out 2>resume.err
code=$?
set -e
check "resume exits 0 (got $code)" test "$code" -eq 0
check "... with zero requests" test "$(requests)" = "$before"
check "... turns 1-3 and 5 from the cache" \
	test "$(jget "$TR" '[e["turn"] for e in x if e["type"]=="model_request" and e["cached"]]')" = "[1, 2, 3, 5]"
check "... nothing ran again" test "$(cat "$RUN/workspace/log.txt" | wc -l)" -eq 3

set +e
"$ASSAY" resume "$RUN" --re-execute --base-url "$URL" --out "$T/out" </dev/null >re.out 2>re.err
code=$?
set -e
RE=$RUN-re1/transcript.jsonl
check "--re-execute exits 0 (got $code)" test "$code" -eq 0
check "... with zero requests" test "$(requests)" = "$before"
check "... every command ran again" test "$(cat "$RUN-re1/workspace/log.txt" | wc -l)" -eq 3
check "... and the message after the cancel was sent again" \
	test "$(jget "$RE" '[e["text"] for e in x if e["type"]=="user_message"]')" = "['log three lines', 'carry on']"
check "... its answer from the cache" \
	test "$(jget "$RE" '[(e["turn"], e["cached"]) for e in x if e["type"]=="model_request"]')" = \
	"[(1, True), (2, True), (3, True), (5, True)]"
finish
