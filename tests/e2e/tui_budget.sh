#!/usr/bin/env bash
# The Budget dialog (tmux, 140x40), against the fake Chat Completions
# server with a priced model (prices from a --config "models" entry):
# --max-cost 0.30 is reached after turn 2 ($0.435 spent): the run waits
# (nothing more is sent) with the dialog naming the budget and the
# spending; r raises it by the same amount again ($0.60) and the run goes
# on to the end, the decision recorded as budget_decision raise 0.6, and
# Tools shows each call's cost. A
# second run answers s: it ends at once with run_end budget_exhausted and
# exit 5; resuming that run with the same budget, headless, sends nothing
# and exits 5 (the spending is counted, not reset).
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"
cat >prices.json <<'JSON'
{"models": {"priced-model": {"input": 2.0, "cached_input": 0.5, "output": 8.0}}}
JSON
cat >script.json <<'JSON'
{"turns": [
 {"text": "One.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo one"}}],
  "usage": {"prompt_tokens": 100000, "completion_tokens": 10000, "cached_tokens": 40000}},
 {"text": "Two.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo two"}}],
  "usage": {"prompt_tokens": 200000, "completion_tokens": 5000, "cached_tokens": 150000}},
 {"text": "All finished in budget.", "tool_calls": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}
]}
JSON
KEY=sk-tui-budget-$RANDOM
export OPENAI_API_KEY=$KEY XDG_CONFIG_HOME=$T/xdg
unset OPENAI_BASE_URL ASSAY_PROVIDER ASSAY_MODEL
start_fake script.json --key "$KEY" --models priced-model
sent() { fake_requests | tr -d ' '; }
decisions() { jget "$1/transcript.jsonl" "[(e['decision'], e['limit']) for e in x if e['type'] == 'budget_decision']"; }

tui_start 140 40 OPENAI_API_KEY="$KEY" -- --provider openai --base-url "$URL" --model priced-model \
	--config "$T/prices.json" --ask none --max-cost 0.30 --run-dir "$T/r1" "count to three"
check "the Budget dialog appears when \$0.30 is reached" wait_for 'Budget reached' 30
check "... naming the budget and what was spent" screen_has 'The cost budget: \$0\.4350 spent of \$0\.3000'
check "... with the answers, r raising by the same amount again" screen_has 'r raise to \$0\.6000 +e enter a new limit +s stop the run'
check "... and nothing more was sent (2 requests)" test "$(sent)" -eq 2
check "... the record says the run waits on the budget" \
	test "$(jget r1/transcript.jsonl "[(e['type'], e.get('reason', e.get('kind'))) for e in x][-2:]")" = \
	"[('budget_reached', 'cost'), ('idle', 'budget')]"
keys r
check "r: the run goes on to the end" wait_for 'All finished in budget' 30
check "... the dialog is gone" wait_gone 'Budget reached' 10
check "... three requests in all" test "$(sent)" -eq 3
check "... the decision recorded: raise to 0.6" test "$(decisions r1)" = "[('raise', 0.6)]"
# a call costs its share of the turn that asked for it and of the turn
# that read its result: call 1 0.22 + 0.215, call 2 0.215 + 0.0028
call_costs() { screen | grep -q 'exit 0 .*\$0\.4350' && screen | grep -q 'exit 0 .*\$0\.2178'; }
check "Tools: each call's cost (\$0.4350, \$0.2178)" call_costs || screen
keys C-q
check "Ctrl-Q after the answer: exit 0" test "$(wait_exit 20)" = 0

N0=$(sent)
tui_start 140 40 OPENAI_API_KEY="$KEY" -- --provider openai --base-url "$URL" --model priced-model \
	--config "$T/prices.json" --ask none --max-cost 0.30 --run-dir "$T/r2" "count to three"
check "second run: the dialog again" wait_for 'Budget reached' 30
keys s
check "s: the run ends (budget_exhausted on the status bar)" wait_for 'run budget_exhausted \(exit 5\)' 20
keys C-q
check "... and the workbench leaves with exit 5" test "$(wait_exit 20)" = 5
check "... run_end budget_exhausted, decision stop" \
	test "$(jget r2/transcript.jsonl "(x[-1]['type'], x[-1]['status'], [e['decision'] for e in x if e['type'] == 'budget_decision'])")" = \
	"('run_end', 'budget_exhausted', ['stop'])"
check "... two requests sent for it" test $(($(sent) - N0)) -eq 2
N0=$(sent)
set +e
"$ASSAY" resume "$T/r2" --base-url "$URL" --config "$T/prices.json" --max-cost 0.30 </dev/null >resume.out 2>resume.err
CODE=$?
set -e
check "resume of the stopped run with the same budget: exit 5 (got $CODE)" test "$CODE" -eq 5 ||
	sed 's/^/     /' resume.err
check "... nothing sent: the spending came back from the record" test "$(sent)" -eq "$N0"
finish
