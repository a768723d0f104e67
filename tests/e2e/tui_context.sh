#!/usr/bin/env bash
# The context window in the workbench (tmux, 140x40), against the fake
# Chat Completions server with an 8k-token window (a --config "models"
# entry; the fake refuses prompts over it): the status bar shows the
# conversation's share of the window (ctx N%), the compaction's summary
# appears in the Conversation as its own block with a notice saying what
# it replaced, the run completes, and /compact typed in the message box
# compacts again on the user's word (recorded with reason "user").
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"
$PY - <<'PY'
import json
note = "The rows look regular, so I keep the running totals and move on to the next block. "
turns = [{"text": f"Step {i}. " + note * 4,
          "tool_calls": [{"id": f"call_ctx{i:03d}", "name": "shell", "arguments": {
              "command": f"yes 'turn {i:03d}: energy row, 12.5 kWh, status ok' | head -c 6000; echo"}}]}
         for i in range(24)]
turns.append({"text": "FINAL ANSWER: the 24 steps are done.", "tool_calls": []})
json.dump({"turns": turns,
           "summary": {"when": "Do not call any tool now",
                       "text": "SUMMARY-BLOCK: 24 steps of energy rows, all 12.5 kWh, status ok."}},
          open("script.json", "w"))
PY
cat >cfg.json <<'JSON'
{"max_output_bytes": 65536, "models": {"ctx-model": {"context": 8000}}}
JSON
KEY=sk-tui-ctx-$RANDOM
export OPENAI_API_KEY=$KEY XDG_CONFIG_HOME=$T/xdg
unset OPENAI_BASE_URL ASSAY_PROVIDER ASSAY_MODEL
start_fake script.json --key "$KEY" --max-context 8000 --turn-by call-id
tr=$T/r1/transcript.jsonl

tui_start 140 40 OPENAI_API_KEY="$KEY" -- --provider openai --base-url "$URL" --model ctx-model \
	--config "$T/cfg.json" --ask none --max-turns 100 --run-dir "$T/r1" "Run the steps."
check "the status bar shows the conversation's share of the window" wait_for 'ctx [0-9]+%' 30
check "the compaction's summary is a block of its own in the Conversation" \
	wait_for 'summary: SUMMARY-BLOCK: 24 steps' 90 || screen
check "... after a notice saying what it replaced" screen_has 'compacted: [0-9]+ earlier messages replaced'
check "the run completes" wait_for 'FINAL ANSWER: the 24 steps are done' 90 || screen
check "... no request over the window was sent" \
	test "$(jget "$FAKE_LOG" "sum(1 for e in x if e['status'] != 200)")" -eq 0
pct() { screen | grep -o 'ctx [0-9]*%' | head -1 | tr -dc 0-9; }
before=$(pct)
check "... ctx is a share of the window ($before%)" test -n "$before" -a "${before:-0}" -gt 0 -a "${before:-0}" -le 100
type_text "/compact"
keys Enter
user_done() {
	[ "$(jget "$tr" "[e['reason'] for e in x if e['type'] == 'compaction' and e['state'] == 'done'][-1:]")" = "['user']" ]
}
check "/compact compacts at once (a compaction with reason user)" wait_until 30 user_done
check "... and the agent waits again" wait_for 'waiting for you' 20
check "... it sent no turn, only the summary request" \
	test "$(jget "$FAKE_LOG" "x[-1].get('summary')")" = True
check "... the status bar shows the smaller history ($(pct)% after $before%)" test "$(pct)" -lt "$before"
keys C-q
check "Ctrl-Q: exit 0" test "$(wait_exit 20)" = 0

# replay: the compaction is a step, and shows the same block
seq=$(jget "$tr" "[e['seq'] for e in x if e['type'] == 'compaction' and e['state'] == 'done'][0]")
tui_start 140 40 -- replay "$T/r1"
check "replay opens" wait_for 'step 1: run_start' 20
keys g
type_text "$seq"
keys Enter
check "replay, at the compaction (step $seq): the summary block" wait_for 'summary: SUMMARY-BLOCK' 20
check "... and the notice that it replaced earlier messages" screen_has 'compacted: [0-9]+ earlier messages replaced'
keys q
check "replay: q leaves (exit 0)" test "$(wait_exit 20)" = 0
finish
