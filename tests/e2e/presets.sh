#!/usr/bin/env bash
# The provider presets (names for Chat Completions servers, no wire code
# of their own): each takes its key from its own variable and sends it,
# and says which variable when it is missing at the provider's own URL
# (before anything is sent); vllm and llamacpp speak through the fake
# server in those servers' styles; openrouter and vllm need a model;
# gemini and llamacpp have one; a router's "vendor/model" is priced as
# the vendor's model.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
export XDG_CONFIG_HOME=$T/xdg
unset OPENAI_BASE_URL OPENAI_API_KEY ASSAY_PROVIDER ASSAY_MODEL GEMINI_API_KEY OPENROUTER_API_KEY VLLM_API_KEY
cat >s.json <<'JSON'
{"turns": [
 {"text": "One.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo preset-ran"}}]},
 {"text": "Preset done.", "tool_calls": []}
]}
JSON
run() { # run NAME [VAR=VALUE...] -- [options]
	local name=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	set +e
	env "${envs[@]}" "$ASSAY" run --ask none --run-dir "$T/$name" "$@" "go" </dev/null >"$T/$name.out" 2>"$T/$name.err"
	CODE=$?
	set -e
}
for p in gemini:GEMINI_API_KEY openrouter:OPENROUTER_API_KEY; do
	name=${p%%:*} var=${p#*:}
	run "nokey-$name" -- --provider "$name" --model m
	check "$name without $var: exit 4 (got $CODE)" test "$CODE" -eq 4
	check "... naming $var and the provider's URL" grep -q "no API key for https://.*set $var" "nokey-$name.err"
	check "... before anything ran (no transcript)" test ! -e "$T/nokey-$name/transcript.jsonl"
done
run nomodel-openrouter OPENROUTER_API_KEY=k -- --provider openrouter
check "openrouter without --model: exit 2 (got $CODE)" test "$CODE" -eq 2
check "... saying to pass one" grep -q 'openrouter needs a model: pass --model' nomodel-openrouter.err
run nomodel-vllm -- --provider vllm
check "vllm without --model: exit 2 (got $CODE)" test "$CODE" -eq 2

# through the fake: the preset's key variable is what is sent
for p in gemini:GEMINI_API_KEY:openai openrouter:OPENROUTER_API_KEY:openai vllm:VLLM_API_KEY:vllm; do
	IFS=: read -r name var quirk <<<"$p"
	start_fake s.json --quirks "$quirk" --key "sk-$name-key"
	run "ok-$name" "$var=sk-$name-key" OPENAI_API_KEY=sk-wrong -- --provider "$name" --base-url "$URL" --model openai/gpt-4.1
	check "$name through the fake with $var: exit 0 (got $CODE)" test "$CODE" -eq 0 || tail -3 "ok-$name.err"
	check "... run_start records provider $name" test "$(jget "ok-$name/transcript.jsonl" "x[0]['provider']")" = "$name"
done
check "a router's openai/gpt-4.1 is priced as gpt-4.1" \
	test "$(jget ok-openrouter/transcript.jsonl "all(e['priced'] for e in x if e['type'] == 'usage')")" = True
start_fake s.json --quirks llamacpp --key none
run ok-llamacpp -- --provider llamacpp --base-url "$URL"
check "llamacpp with no key and no --model: exit 0 (got $CODE)" test "$CODE" -eq 0 || tail -3 ok-llamacpp.err
check "... its model is 'default'" test "$(jget ok-llamacpp/transcript.jsonl "x[0]['model']")" = default
finish
