#!/usr/bin/env bash
# Cost from the model table, through the fake Chat Completions server:
# a model with known prices (given in a --config "models" entry) gets
# each turn's cost to the cent, cached input priced as cached; the run's
# total reaches run_end and the headless summary. A model the table does
# not know has cost unknown (priced false, never $0 shown as a price).
# --max-cost: a run stops with exit 5 at the budget, and a request whose
# estimated input alone would cross it is not sent; resuming a run its
# budget stopped counts the money already spent (no request); a model
# without a price cannot have a cost budget (exit 2). `assay models`
# lists the table with the override, and which models take images
# (the shipped table's "vision", a local model's from the config).
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
# prices per million tokens: input $2, cached $0.50, output $8
cat >prices.json <<'JSON'
{"models": {"priced-model": {"input": 2.0, "cached_input": 0.5, "output": 8.0, "context": 128000}}}
JSON
# turn 1: 100000 in (40000 cached), 10000 out:
#   60000 * 2 + 40000 * 0.5 + 10000 * 8 = 220000 -> $0.22
# turn 2: 200000 in (150000 cached), 5000 out:
#   50000 * 2 + 150000 * 0.5 + 5000 * 8 = 215000 -> $0.215
# turn 3: 1000 in, 100 out: 2000 + 800 -> $0.0028
cat >script.json <<'JSON'
{"turns": [
 {"text": "One.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo one"}}],
  "usage": {"prompt_tokens": 100000, "completion_tokens": 10000, "cached_tokens": 40000}},
 {"text": "Two.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo two"}}],
  "usage": {"prompt_tokens": 200000, "completion_tokens": 5000, "cached_tokens": 150000}},
 {"text": "Done.", "tool_calls": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}
]}
JSON
KEY=sk-cost-$RANDOM
start_fake script.json --key "$KEY" --models priced-model,fake-model
export OPENAI_API_KEY=$KEY XDG_CONFIG_HOME=$T/xdg
unset OPENAI_BASE_URL ASSAY_PROVIDER ASSAY_MODEL
requests() { fake_requests | tr -d ' '; }
run() { # run NAME MODEL [options]: CODE, N0 (requests before)
	local name=$1 model=$2
	shift 2
	N0=$(requests)
	set +e
	"$ASSAY" run --provider openai --base-url "$URL" --model "$model" --ask none \
		--config "$T/prices.json" --run-dir "$T/$name" "$@" "count" \
		</dev/null >"$T/$name.out" 2>"$T/$name.err"
	CODE=$?
	set -e
}
costs() { jget "$T/$1/transcript.jsonl" "[(round(float(e['cost_usd']), 6), e['priced']) for e in x if e['type'] == 'usage']"; }
sent() { echo $(($(requests) - N0)); }

run priced priced-model
check "a priced model: the run completes (exit $CODE)" test "$CODE" -eq 0
check "... each turn's cost, cached input priced as cached ($(costs priced))" \
	test "$(costs priced)" = "[(0.22, True), (0.215, True), (0.0028, True)]"
check "... run_end's total \$0.4378" \
	test "$(jget priced/transcript.jsonl "round(x[-1]['totals']['cost_usd'], 6)")" = 0.4378
check "... and the headless summary says it" grep -q 'run completed: 3 turns, .*\$0\.4378' priced.err

run unknown fake-model
check "a model the table does not know: completes (exit $CODE)" test "$CODE" -eq 0
check "... its turns are not priced ($(costs unknown))" \
	test "$(costs unknown)" = "[(0.0, False), (0.0, False), (0.0, False)]"
check "... run_end counts them as of unknown cost" \
	test "$(jget unknown/transcript.jsonl "x[-1]['totals'].get('unpriced_turns')")" = 3
check "... and the summary says cost unknown, not \$0" grep -q 'cost unknown' unknown.err

# $0.30: turn 2 fits (0.22 spent, its input about $0.002), then 0.435 >= 0.30
run capped priced-model --max-cost 0.30
check "--max-cost 0.30: exit 5 after two requests (exit $CODE, $(sent) sent)" \
	sh -c "test $CODE -eq 5 && test $(sent) -eq 2"
check "... run_end budget_exhausted" \
	test "$(jget capped/transcript.jsonl "x[-1]['status']")" = budget_exhausted
check "... the error names the cost budget" grep -q 'cost budget reached (\$0\.4350 of \$0\.3000)' capped.err
# $0.2201: after turn 1 ($0.22) the next request's input alone crosses it
run estimate priced-model --max-cost 0.2201
check "--max-cost 0.2201: the second request is not sent (exit $CODE, $(sent) sent)" \
	sh -c "test $CODE -eq 5 && test $(sent) -eq 1"
check "... saying the next request would cross it" \
	grep -q 'the next request (about [0-9]* input tokens, about \$0\.00[0-9]*) would cross it (\$0\.2200 of \$0\.2201 spent)' estimate.err
# resume counts what was spent: the same budget ends at once
N0=$(requests)
set +e
"$ASSAY" resume "$T/capped" --base-url "$URL" --max-cost 0.30 --config "$T/prices.json" \
	</dev/null >"$T/capped.rout" 2>"$T/capped.rerr"
CODE=$?
set -e
check "resume of the capped run with the same budget: exit 5, nothing sent (exit $CODE, $(sent) sent)" \
	sh -c "test $CODE -eq 5 && test $(sent) -eq 0"

run nobudget fake-model --max-cost 1
check "--max-cost for a model without a price: exit 2 (got $CODE)" test "$CODE" -eq 2
check "... nothing sent" test "$(sent)" -eq 0

mkdir -p "$T/xdg2/assay" && cp prices.json "$T/xdg2/assay/config.json"
XDG_CONFIG_HOME=$T/xdg2 "$ASSAY" models >models.out
check "assay models lists the shipped table" grep -q '^gpt-4.1 .*\$2\.000 .*\$0\.500 .*\$8\.000' models.out
check "... and the user's override" grep -q '^priced-model .*128000 .*\$2\.000' models.out
XDG_CONFIG_HOME=$T/xdg2 "$ASSAY" models --json >models.json
check "... as JSON too" test "$($PY -c 'import json,sys; x = json.load(open(sys.argv[1])); print([x["models"]["claude-sonnet-4-5"]["cache_write"], x["models"]["priced-model"]["output"]])' models.json)" = "[3.75, 8]"
check "the vision column: shipped models take images" grep -q '^gpt-4o  .* yes$' models.out
check "... a model of no provider not, unless it says" grep -q '^priced-model .* no$' models.out
mkdir -p "$T/xdg3/assay"
echo '{"models": {"llava": {"provider": "ollama", "vision": true}, "gpt-4o": {"vision": false}}}' >"$T/xdg3/assay/config.json"
XDG_CONFIG_HOME=$T/xdg3 "$ASSAY" models >models3.out
check "... the config gives a local model vision" grep -q '^llava .*ollama .* yes$' models3.out
check "... and takes it from a shipped one" grep -q '^gpt-4o  .* no$' models3.out
check "... the image rule in the JSON" test "$($PY -c 'import json,sys; x = json.load(open(sys.argv[1]))["models"]; print([x["gpt-4o"]["image"], x["o4-mini"]["image"]["multiplier"], x["gpt-4.1"]["vision"]])' models.json)" = "[{'rule': 'tiles', 'base': 85, 'tile': 170}, 1.72, True]"
finish
