#!/usr/bin/env bash
# What assay sends must be what the real API takes, also when a run
# moves between servers: tool call ids recorded from vLLM (46
# characters) go to OpenAI (40 at most) on resume; OpenAI's reasoning
# models behind a gateway (not api.openai.com) get max_completion_tokens,
# which they need, while Ollama keeps max_tokens, the only one it reads.
# The fake refuses what the real servers refuse (tests/fakes/README.md).
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
printf 'name,value\n' >numbers.csv
for i in $(seq 1 10); do printf 'n%d,%d\n' "$i" "$i" >>numbers.csv; done
SCRIPT=$SRC/tests/e2e/data/short.json

run() { # run NAME URL [options...]: sets CODE
	local name=$1 url=$2
	shift 2
	set +e
	OPENAI_API_KEY=sk-e2e "$ASSAY" run --base-url "$url" \
		--input numbers.csv --output output/sum.txt \
		--run-dir "$T/$name" --out "$T/$name.out" "$@" \
		"add up the values in input/numbers.csv" 2>"$T/$name.stderr"
	CODE=$?
	set -e
}

# recorded against vLLM, resumed onto OpenAI with a new question
start_fake "$SCRIPT" --quirks vllm
run vllm "$URL" --model m
check "vllm: the run completes (exit $CODE)" test "$CODE" -eq 0
check "vllm: its tool call ids are longer than OpenAI takes" \
	test "$(jget "$T/vllm/transcript.jsonl" 'max(len(e["id"]) for e in x if e["type"]=="tool_call")')" -gt 40
start_fake "$SCRIPT" --quirks openai
set +e
OPENAI_API_KEY=sk-e2e "$ASSAY" resume "$T/vllm" --base-url "$URL" "and once more" \
	>"$T/resume.out" 2>"$T/resume.stderr"
code=$?
set -e
check "resume onto openai: completes (exit $code)" test "$code" -eq 0
check "resume onto openai: one request, accepted" \
	test "$(jget "$FAKE_LOG" '[e["status"] for e in x]')" = "[200]"
check "resume onto openai: the record keeps the recorded ids" \
	test "$(jget "$T/vllm/transcript.jsonl" 'all(e["id"].startswith("chatcmpl-tool-") for e in x if e["type"]=="tool_call")')" = True

# a reasoning model behind a gateway
for model in o3 gpt-5-mini openai/o4-mini; do
	start_fake "$SCRIPT" --quirks openai
	name=gw-${model//\//_}
	run "$name" "$URL" --model "$model"
	check "$model behind a gateway: completes (exit $CODE)" test "$CODE" -eq 0
	check "$model behind a gateway: every request accepted" \
		test "$(jget "$FAKE_LOG" 'set(e["status"] for e in x)')" = "{200}"
done
# a model that is not a reasoning one keeps max_tokens (the fake takes
# both; the wire format itself is checked in tests/unit/test_llm.c)
start_fake "$SCRIPT" --quirks openai
run gw-gpt41 "$URL" --model gpt-4.1
check "gpt-4.1 behind a gateway: completes (exit $CODE)" test "$CODE" -eq 0
[ "$FAILED" -eq 0 ] || { cat "$T/resume.stderr" | tail -5; }
finish
