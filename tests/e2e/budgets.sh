#!/usr/bin/env bash
# Budgets end a headless run with exit 5: --max-turns N and --max-tokens
# N are checked before every model request, so the request that would
# go past the budget is never sent (the fake server logs every request
# it gets), the calls of the last allowed turn still run, run_end says
# budget_exhausted with exit_code 5, and stderr says which budget and
# how to go on. Raising the budget on resume goes on live from the turn
# that was not sent; resuming with the same token budget ends at once
# (the totals come back from the record), with zero requests. A budget
# set in assay.json works like the option; --max-cost for a model the
# table has no price for is refused before anything is sent.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
# each turn reports its usage: running totals 120, 350, 690 tokens
cat >script.json <<'JSON'
{"turns": [
 {"text": "One.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo one > one.txt; echo did-one"}}],
  "usage": {"prompt_tokens": 100, "completion_tokens": 20}},
 {"text": "Two.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo two > two.txt; echo did-two"}}],
  "usage": {"prompt_tokens": 200, "completion_tokens": 30}},
 {"text": "Three.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo three > three.txt; echo did-three"}}],
  "usage": {"prompt_tokens": 300, "completion_tokens": 40}},
 {"text": "All done.", "tool_calls": [], "usage": {"prompt_tokens": 400, "completion_tokens": 5}}
]}
JSON
KEY=sk-budget-$RANDOM
start_fake script.json --key "$KEY"
export OPENAI_API_KEY=$KEY XDG_CONFIG_HOME=$T/xdg
unset OPENAI_BASE_URL ASSAY_PROVIDER ASSAY_MODEL
requests() { fake_requests | tr -d ' '; }
turns_sent() { # the turn_index of the requests after the first $1
	$PY -c 'import json,sys
print([json.loads(l)["turn_index"] for l in open(sys.argv[1])][int(sys.argv[2]):])' "$FAKE_LOG" "$1"
}
# run NAME [options]: a headless run in $T/NAME; CODE, N0 (requests before)
run() {
	local name=$1
	shift
	N0=$(requests)
	set +e
	"$ASSAY" run --provider openai --base-url "$URL" --model fake-model --ask none \
		--run-dir "$T/$name" "$@" "make the files" </dev/null >"$T/$name.out" 2>"$T/$name.err"
	CODE=$?
	set -e
}
resume() { # resume NAME [options]
	local name=$1
	shift
	N0=$(requests)
	set +e
	"$ASSAY" resume "$T/$name" --base-url "$URL" "$@" </dev/null >"$T/$name.rout" 2>"$T/$name.rerr"
	CODE=$?
	set -e
}
end() { jget "$T/$1/transcript.jsonl" "$2"; } # end NAME PYEXPR
last_end() { end "$1" '(x[-1]["type"], x[-1]["status"], x[-1]["exit_code"], x[-1]["totals"]["turns"])'; }

# --- --max-turns ------------------------------------------------------
run turns --max-turns 2
check "--max-turns 2: exit 5 (got $CODE)" test "$CODE" -eq 5
check "... run_end budget_exhausted, exit_code 5, 2 turns" \
	test "$(last_end turns)" = "('run_end', 'budget_exhausted', 5, 2)"
check "... only turns 1 and 2 were sent: nothing past the budget" test "$(turns_sent "$N0")" = "[0, 1]"
check "... turn 2's call ran, turn 3's never" \
	sh -c "test -s '$T/turns/workspace/two.txt' && test ! -e '$T/turns/workspace/three.txt'"
check "... an error event of category budget before run_end" \
	test "$(end turns '(x[-2]["type"], x[-2]["category"])')" = "('error', 'budget')"
check "... stderr names the budget and how to go on" \
	grep -qx 'budget: turn limit reached (2 turns): raise --max-turns to go on' turns.err
check "... and the run's end" grep -q '^run budget_exhausted: 2 turns' turns.err
check "... the limit is recorded in run_start" test "$(end turns 'x[0]["limits"]["max_turns"]')" = 2

run one --max-turns 1
check "--max-turns 1: exit 5 after exactly one request (got $CODE)" \
	sh -c "test $CODE -eq 5 && test '$(turns_sent "$N0")' = '[0]'"

# --- --max-tokens -----------------------------------------------------
# 120 after turn 1 (< 300: turn 2 is sent), 350 after turn 2 (>= 300)
run tokens --max-tokens 300
check "--max-tokens 300: exit 5 (got $CODE)" test "$CODE" -eq 5
check "... run_end budget_exhausted, exit_code 5, 2 turns" \
	test "$(last_end tokens)" = "('run_end', 'budget_exhausted', 5, 2)"
check "... only turns 1 and 2 were sent" test "$(turns_sent "$N0")" = "[0, 1]"
check "... the totals are the usage the server reported (300 in, 50 out)" \
	test "$(end tokens '(x[-1]["totals"]["input_tokens"], x[-1]["totals"]["output_tokens"])')" = "(300, 50)"
check "... stderr says how much of the budget was used" \
	grep -qx 'budget: token budget reached (350 of 300): raise --max-tokens to go on' tokens.err
# the budget is reached exactly: used >= budget stops
run exact --max-tokens 120
check "--max-tokens 120 (turn 1 uses 120): exit 5 after one request (got $CODE)" \
	sh -c "test $CODE -eq 5 && test '$(turns_sent "$N0")' = '[0]'"
run roomy --max-tokens 100000
check "a budget that is not reached: the run completes (got $CODE)" \
	sh -c "test $CODE -eq 0 && test '$(turns_sent "$N0")' = '[0, 1, 2, 3]'"

# --- resume with the budget raised, and with the same budget ----------
resume turns --max-turns 4
check "resume with --max-turns raised: exit 0 (got $CODE)" test "$CODE" -eq 0
check "... turns 1-2 from the cache, live from turn 3: only turns 3 and 4 sent" \
	test "$(turns_sent "$N0")" = "[2, 3]"
check "... turn 3's call ran" test -s "$T/turns/workspace/three.txt"
check "... run_end completed" test "$(end turns 'x[-1]["status"]')" = completed
resume tokens --max-tokens 300
check "resume with the same --max-tokens: exit 5 again (got $CODE)" test "$CODE" -eq 5
check "... with zero requests (the recorded totals count)" test "$(requests)" = "$N0"
check "... saying so" grep -qx 'budget: token budget reached (350 of 300): raise --max-tokens to go on' tokens.rerr

# --- from the project manifest ----------------------------------------
mkdir -p proj
printf '{"max_turns": 1}\n' >proj/assay.json
N0=$(requests)
set +e
(cd proj && "$ASSAY" run --provider openai --base-url "$URL" --model fake-model --ask none \
	--run-dir "$T/manifest" "make the files" </dev/null >"$T/manifest.out" 2>"$T/manifest.err")
CODE=$?
set -e
check "max_turns 1 in assay.json: exit 5 after one request (got $CODE)" \
	sh -c "test $CODE -eq 5 && test '$(turns_sent "$N0")' = '[0]'"

# --- --max-cost for a model without a price: refused before anything is
# sent (tests/e2e/cost.sh prices turns and stops at a cost budget)
run cost --max-cost 0.5
check "--max-cost: exit 2 (got $CODE)" test "$CODE" -eq 2
check "... naming the model without a price and how to give it one" \
	grep -q -- '--max-cost needs the price of the model, and "fake-model" has none.*"models"' cost.err
check "... nothing sent" test "$(requests)" = "$N0"
finish
