#!/usr/bin/env bash
# assay models --import: LiteLLM's model_prices_and_context_window.json
# (tests/e2e/data/litellm_prices.json: entries of every shape, those to
# take and those to skip) into models.json beside the user's config:
# what it took (new, updated, unchanged) and skipped (grouped by
# reason, with the counts), the prices per million tokens, the context
# cut where a price tier starts, the provider's own name winning over a
# prefixed duplicate; a second import merges; bad input (not JSON, not
# an object, too large, a number that is not finite, a damaged
# models.json) is an error with nothing written. `assay models` shows
# the imported entries and their date, the config's "models" over them.
# The imported price is what --max-cost counts: against the fake Chat
# Completions server the budget runs out after the first turn, where
# without the import the model has no price (exit 2, nothing sent).
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
LITE=$SRC/tests/e2e/data/litellm_prices.json
TODAY=$(date +%F)
export XDG_CONFIG_HOME=$T/xdg
DEST=$XDG_CONFIG_HOME/assay/models.json
unset OPENAI_BASE_URL ASSAY_PROVIDER ASSAY_MODEL
# imp NAME [args]: assay models --import ..., CODE, NAME.out/.err
imp() {
	local name=$1
	shift
	set +e
	"$ASSAY" models --import "$@" >"$T/$name.out" 2>"$T/$name.err"
	CODE=$?
	set -e
}
# field FILE EXPR: EXPR of the JSON at FILE (x)
field() { $PY -c 'import json,sys; x = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

imp first "$LITE" --json
check "import of the LiteLLM file: exit 0 (got $CODE)" test "$CODE" -eq 0
check "... 25 entries read, 8 new, none updated" \
	test "$(field first.out '[x["entries"], x["new"], x["updated"], x["unchanged"]]')" = "[25, 8, 0, 0]"
check "... 17 skipped, counted by reason" \
	test "$(field first.out '{s["reason"]: s["count"] for s in x["skipped"]}')" = \
	"{'template': 1, 'shape': 1, 'mode': 2, 'provider': 3, 'unit': 2, 'tiers': 1, 'no_price': 1, 'value': 1, 'name': 1, 'duplicate': 2, 'conflict': 2}"
check "... the modes and providers skipped, by name" \
	test "$(field first.out '[s["by"] for s in x["skipped"] if "by" in s]')" = \
	"[{'embedding': 1, 'image_generation': 1}, {'bedrock': 1, 'azure': 1, 'deepseek': 1}]"
check "... one priced by prompt size: the context cut to 200000" \
	test "$(field first.out '[x["capped"]["count"], x["capped"]["names"]]')" = "[1, ['gemini-test-pro']]"
check "... the imported table written at $DEST" test -s "$DEST"
check "... whole: no temporary file left beside it" \
	test "$(ls "$XDG_CONFIG_HOME/assay")" = models.json
check "... prices per million tokens, limits, vision, the day" \
	test "$(field "$DEST" 'x["imp-chat-model"]')" = \
	"{'provider': 'openai', 'context': 128000, 'max_output': 16384, 'input': 2, 'cached_input': 0.5, 'output': 8, 'vision': False, 'imported': '$TODAY'}"
check "... anthropic's cache writes as cache_write" \
	test "$(field "$DEST" '[x["claude-test-1"][k] for k in ("cached_input", "cache_write")]')" = "[0.3, 3.75]"
check "... a tiered model at its base prices, its context cut" \
	test "$(field "$DEST" '[x["gemini-test-pro"][k] for k in ("input", "output", "context")]')" = "[1.25, 10, 200000]"
check "... a router's model under the name its API uses" \
	test "$(field "$DEST" 'x["acme/model-x"]["provider"]')" = openrouter
check "... the provider's own name wins over a prefixed one" \
	test "$(field "$DEST" 'x["gemini-direct"]["input"]')" = 0.3
check "... two names of one model at the same prices are one" \
	test "$(field "$DEST" '"llama-test" in x')" = True
check "... two at other prices are neither" \
	test "$(field "$DEST" '"qwen-test" in x')" = False
check "... the skipped, the unknown provider and the template are not there" \
	test "$(field "$DEST" 'sorted(x)')" = \
	"['acme/model-x', 'claude-test-1', 'gemini-direct', 'gemini-test-pro', 'gpt-4.1', 'gpt-test-responses', 'imp-chat-model', 'llama-test']"

# the same file again, for a person: nothing new, all unchanged
imp again "$LITE"
check "the same import again: 8 unchanged" grep -q "^imported 8: 0 new, 0 updated, 8 unchanged, into $DEST" again.out
check "... the reasons said in words, with their counts" \
	grep -q '^ *3  a provider assay does not speak .*: bedrock 1, azure 1, deepseek 1$' again.out
check "... the names of what was skipped, made safe for the terminal" \
	sh -c "grep -q '^ *1  a name assay cannot use .*: ^\[\]0;bad^G$' again.out && ! grep -q \"$(printf '\033')\" again.out"

# a second file: one price changed, one new, a LiteLLM provider asked for
cat >second.json <<'JSON'
{"imp-chat-model": {"litellm_provider": "openai", "mode": "chat",
   "input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05,
   "max_input_tokens": 128000, "max_output_tokens": 16384, "supports_vision": false},
 "claude-test-1": {"cache_creation_input_token_cost": 3.75e-06, "cache_read_input_token_cost": 3e-07,
   "input_cost_per_token": 3e-06, "litellm_provider": "anthropic", "max_input_tokens": 200000,
   "max_output_tokens": 64000, "mode": "chat", "output_cost_per_token": 1.5e-05, "supports_vision": true},
 "deepseek/deepseek-test": {"input_cost_per_token": 2.8e-07, "output_cost_per_token": 4.2e-07,
   "cache_read_input_token_cost": 2.8e-08, "litellm_provider": "deepseek", "mode": "chat",
   "max_input_tokens": 131072}}
JSON
imp second second.json --provider deepseek --json
check "a second file with --provider deepseek: 1 new, 1 updated, 1 unchanged" \
	test "$(field second.out '[x["new"], x["updated"], x["unchanged"], x["skipped"]]')" = "[1, 1, 1, []]"
check "... merged: the first import's entries are kept" \
	test "$(field "$DEST" '[len(x), x["imp-chat-model"]["input"], "provider" in x["deepseek-test"]]')" = "[9, 2.5, False]"

# bad input: an error, nothing written
cp "$DEST" kept.json
printf '{"a": ' >notjson.json
echo '[1, 2]' >array.json
echo '{"m": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 1e999, "output_cost_per_token": 1e-06}}' >inf.json
truncate -s 9M huge.json
for bad in notjson array inf huge missing; do
	imp "bad-$bad" "$bad.json"
	check "bad input ($bad): exit 2 (got $CODE)" test "$CODE" -eq 2
done
check "... not JSON: said so, with the line" grep -q 'notjson.json: invalid JSON near line 1.*nothing was imported' bad-notjson.err
check "... not an object: said so" grep -q 'array.json: not a JSON object of models' bad-array.err
check "... a number that is not finite: the entry and field named" \
	grep -q 'inf.json: "m".input_cost_per_token holds a number that is not finite' bad-inf.err
check "... too large: the size and the limit" grep -q 'huge.json: too large (9437184 bytes, at most 8388608)' bad-huge.err
check "... models.json untouched by any of them" cmp -s kept.json "$DEST"
echo '["gpt-4o"]' >damaged.json
cp damaged.json "$DEST"
imp damaged "$LITE"
check "a damaged models.json: exit 2 (got $CODE), said so" \
	grep -q 'models.json: not a JSON object of models: fix or remove it' damaged.err
check "... and left as it was" cmp -s damaged.json "$DEST"
cp kept.json "$DEST"

# the listing: imported entries and their date; the config over them
"$ASSAY" models >list.out
check "assay models: an imported entry and its date" grep -q "^imp-chat-model  .*\\\$2\\.500 .*\\\$10\\.000 imported $TODAY  *no$" list.out
check "... a shipped model the import priced says so" grep -q "^gpt-4.1  .*\\\$3\\.000 .*imported $TODAY" list.out
"$ASSAY" models --json >list.json
check "... as JSON: \"imported\" and where the prices come from" \
	test "$(field list.json '[x["models"]["imp-chat-model"][k] for k in ("imported", "prices_from")]')" = "['$TODAY', 'import']"
echo '{"models": {"claude-test-1": {"output": 20}}}' >"$XDG_CONFIG_HOME/assay/config.json"
"$ASSAY" models >list2.out
check "... the user's config over an import: its price, 'config'" grep -q '^claude-test-1  .*\$20\.000 config  ' list2.out
rm "$XDG_CONFIG_HOME/assay/config.json"

# --max-cost counts the imported price: $2.50 in, $10 out per million;
# turn 1: 100000 in, 10000 out = $0.25 + $0.10 = $0.35 >= $0.30
cat >script.json <<'JSON'
{"turns": [
 {"text": "One.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo one"}}],
  "usage": {"prompt_tokens": 100000, "completion_tokens": 10000}},
 {"text": "Done.", "tool_calls": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}
]}
JSON
KEY=sk-import-$RANDOM
start_fake script.json --key "$KEY" --models imp-chat-model
export OPENAI_API_KEY=$KEY
run() { # run NAME [options]: CODE, SENT (requests it made)
	local name=$1 n0
	shift
	n0=$(fake_requests)
	set +e
	"$ASSAY" run --provider openai --base-url "$URL" --model imp-chat-model --ask none \
		--run-dir "$T/$name" "$@" "count" </dev/null >"$T/$name.out" 2>"$T/$name.err"
	CODE=$?
	set -e
	SENT=$(($(fake_requests) - n0))
}
run capped --max-cost 0.30
check "--max-cost 0.30 with the imported price: exit 5 after one request (exit $CODE, $SENT sent)" \
	sh -c "test $CODE -eq 5 && test $SENT -eq 1"
check "... the turn priced at the imported prices (\$0.35)" \
	test "$(jget capped/transcript.jsonl "[(round(float(e['cost_usd']), 6), e['priced']) for e in x if e['type'] == 'usage']")" = "[(0.35, True)]"
check "... the error names the cost budget" grep -q 'cost budget reached (\$0\.3500 of \$0\.3000)' capped.err
XDG_CONFIG_HOME=$T/empty run noimport --max-cost 0.30
check "without the import the model has no price: exit 2, nothing sent (exit $CODE, $SENT sent)" \
	sh -c "test $CODE -eq 2 && test $SENT -eq 0"
check "... saying so" grep -q -- '--max-cost needs the price of the model, and "imp-chat-model" has none' noimport.err
finish
