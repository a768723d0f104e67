#!/usr/bin/env bash
# A model answer that ends inside a tool call (finish_reason "length":
# the output token limit hit mid-arguments): the cut call is not run,
# its result tells the model it was cut off and how to retry, the next
# request's history holds valid JSON arguments (the fake refuses
# anything else with a 400, as OpenAI and vLLM do), and the run goes on.
# For every OpenAI-compatible quirk style the fake speaks.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
BIG=$($PY -c 'print("x" * 3000)')
cat >cut.json <<JSON
{"turns": [
  {"text": "I'll write the whole report in one call.",
   "finish_reason": "length",
   "tool_calls": [{"name": "write_file",
     "arguments": "{\"path\": \"output/report.md\", \"content\": \"# Report\\\\n$BIG"}]},
  {"text": "It was cut off; writing it in two parts.",
   "tool_calls": [
     {"name": "write_file", "arguments": {"path": "output/report.md", "content": "# Report\n"}},
     {"name": "shell", "arguments": {"command": "echo 'part two' >> output/report.md"}}]},
  {"text": "Done: output/report.md.", "tool_calls": []}
]}
JSON

for q in openai ollama vllm llamacpp; do
	start_fake cut.json --quirks "$q"
	set +e
	OPENAI_API_KEY=sk-e2e "$ASSAY" run --base-url "$URL" --model m \
		--output output/report.md --run-dir "$T/$q/run" --out "$T/$q/out" \
		"write a report" 2>"$T/$q.stderr"
	code=$?
	set -e
	tr=$T/$q/run/transcript.jsonl
	check "$q: the run completes (exit $code)" test "$code" -eq 0
	check "$q: 3 requests, none refused" test "$(fake_requests)" -eq 3
	check "$q: the report is the retried one" \
		test "$(cat "$T/$q/out/output/report.md" 2>/dev/null)" = "$(printf '# Report\npart two')"
	check "$q: the cut call's result says it was cut off, at how many bytes, and how to retry" \
		test "$(jget "$tr" '[e["content"] for e in x if e["type"]=="tool_result"][0]')" != "" -a \
		"$(jget "$tr" 'all(w in [e["content"] for e in x if e["type"]=="tool_result"][0] for w in ("cut off", "3051 bytes", "shorter", "in parts"))')" = True
	check "$q: the cut call is an error result and was not executed" \
		test "$(jget "$tr" '[e["is_error"] for e in x if e["type"]=="tool_result"][0] and not any(e["type"]=="exec_start" and e.get("id")==[c["id"] for c in x if c["type"]=="tool_call"][0] for e in x)')" = True
	check "$q: the record keeps the cut arguments and says the call was cut off" \
		test "$(jget "$tr" '[c for e in x if e["type"]=="assistant_message" for c in e["tool_calls"]][0].get("cut_off")')" = True
	check "$q: the fake (which refuses arguments that are not a JSON object) accepted every request" \
		test "$(jget "$FAKE_LOG" '[e["status"] for e in x]')" = "[200, 200, 200]"
done
[ "$FAILED" -eq 0 ] || jget "$T/openai/run/transcript.jsonl" "[e[\"content\"] for e in x if e[\"type\"]==\"tool_result\"][0]"
finish
