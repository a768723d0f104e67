#!/usr/bin/env bash
# The same short task through the openai provider against each quirk
# style of OpenAI-compatible servers, and through the faults a real
# server produces: 429 with retry-after, a stream cut mid-turn, an error
# event inside a 200 stream; 401 and insufficient_quota end with exit 4.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
printf 'name,value\n' >numbers.csv
for i in $(seq 1 10); do printf 'n%d,%d\n' "$i" "$i" >>numbers.csv; done
SCRIPT=$SRC/tests/e2e/data/short.json

run_task() { # run_task NAME [assay options...]: sets CODE
	local name=$1
	shift
	set +e
	OPENAI_API_KEY=sk-e2e "$ASSAY" run --base-url "$URL" --model m \
		--input numbers.csv --output output/sum.txt --output output/note.md \
		--run-dir "$T/$name/run" --out "$T/$name/out" "$@" \
		"add up the values in input/numbers.csv" 2>"$T/$name.stderr"
	CODE=$?
	set -e
}

task_ok() { # task_ok NAME: outputs right
	test "$CODE" -eq 0 && test "$(cat "$T/$1/out/output/sum.txt")" = 55 &&
		grep -q 'add up to 55' "$T/$1/out/output/note.md"
}

for q in openai ollama vllm llamacpp; do
	start_fake "$SCRIPT" --quirks "$q"
	run_task "$q"
	check "$q: task completes with right outputs (exit $CODE)" task_ok "$q"
	check "$q: 3 requests" test "$(fake_requests)" -eq 3
	check "$q: final text intact" \
		grep -q 'Done ✓ — the values add up to 55' "$T/$q.stderr"
	check "$q: four distinct tool calls ran" \
		test "$(jget "$T/$q/run/transcript.jsonl" 'len({e["id"] for e in x if e["type"]=="tool_result"})')" -eq 4
done
check "llamacpp: reasoning is not shown as answer text" \
	sh -c "! grep -q 'I should look at the request' '$T/llamacpp.stderr'"

# 429 with retry-after: 2 s must pass between the refused and the next try
start_fake "$SCRIPT" --fault '429@2:retry-after=2'
run_task r429
check "429: task completes (exit $CODE)" task_ok r429
gap=$($PY -c 'import json,sys
x=[json.loads(l) for l in open(sys.argv[1])]
print(x[2]["t"]-x[1]["t"])' "$FAKE_LOG")
check "429: retry-after honoured (waited ${gap}s >= 2)" $PY -c "import sys; sys.exit(not $gap >= 1.95)"
check "429: retry shown" grep -q 'retrying in' "$T/r429.stderr"
check "429: error event with retry_in_ms" \
	test "$(jget "$T/r429/run/transcript.jsonl" '[e.get("retry_in_ms") for e in x if e["type"]=="error"][0]>=1900')" = True

# a stream cut mid-turn is retried and its partial output discarded
start_fake "$SCRIPT" --fault 'cut@1'
run_task cut
check "cut: task completes (exit $CODE)" task_ok cut
check "cut: partial output reported discarded" \
	test "$(jget "$T/cut/run/transcript.jsonl" '[e.get("discarded_bytes",0) for e in x if e["type"]=="error"][0]>0')" = True
check "cut: 4 requests" test "$(fake_requests)" -eq 4
check "cut: tool calls of the cut try did not run twice" \
	test "$(jget "$T/cut/run/transcript.jsonl" 'len([e for e in x if e["type"]=="tool_call"])')" -eq 4

# an error event inside a 200 stream is retried
start_fake "$SCRIPT" --fault 'error-event@2'
run_task errev
check "error event in stream: task completes (exit $CODE)" task_ok errev
check "error event in stream: provider_stream error recorded" \
	grep -q '"category":"provider_stream"' "$T/errev/run/transcript.jsonl"

start_fake "$SCRIPT" --quirks llamacpp --fault 'llamacpp-error@1'
run_task llerr
check "llama.cpp error: line: task completes (exit $CODE)" task_ok llerr

# 5xx is retried
start_fake "$SCRIPT" --fault '503@1' --fault '500@2'
run_task r5xx
check "503 then 500: task completes (exit $CODE)" task_ok r5xx

# 401 is not retried and ends with exit 4 naming the key variable
start_fake "$SCRIPT" --key sk-right
run_task r401
check "401: exit 4 (got $CODE)" test "$CODE" -eq 4
check "401: one request only" test "$(fake_requests)" -eq 1
check "401: message names OPENAI_API_KEY" grep -q OPENAI_API_KEY "$T/r401.stderr"
check "401: run_end failed in the transcript" \
	test "$(jget "$T/r401/run/transcript.jsonl" 'x[-1]["status"]')" = failed

start_fake "$SCRIPT" --fault 'quota@1'
run_task quota
check "insufficient_quota: exit 4 (got $CODE)" test "$CODE" -eq 4
n=$(fake_requests)
check "insufficient_quota: not retried ($n requests)" test "$n" -eq 1

# an unreachable server: exit 4 after the retries
URL=http://127.0.0.1:9/v1
run_task unreach --timeout 5
check "unreachable server: exit 4 (got $CODE)" test "$CODE" -eq 4
finish
