#!/usr/bin/env bash
# --provider openai-responses against tests/fakes/fake_responses.py (the
# Responses API, validated as the real one: flat tools, every call
# answered by its output, reasoning items sent back unchanged): the demo
# analysis completes with findings that match the ground truth and a
# transcript of the same shape as through Chat Completions; a reasoning
# model's encrypted reasoning goes back with its calls (the fake refuses
# a call without it); with "responses_store" the run is stored at OpenAI
# and chained with previous_response_id instead; faults: 429 + retry-after honoured, a stream cut
# inside a call's arguments retried without running the call twice, an
# in-stream error retried, 401 exits 4 naming OPENAI_API_KEY; a turn cut
# at the output limit inside a call is not run (response.incomplete).
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
FAKER=$SRC/tests/fakes/fake_responses.py
export XDG_CONFIG_HOME=$T/xdg
unset OPENAI_BASE_URL ASSAY_PROVIDER ASSAY_MODEL
RPID=
start_resp() { # start_resp SCRIPT [fake options]: RURL, RLOG
	local script=$1
	shift
	[ -n "$RPID" ] && { kill "$RPID" 2>/dev/null || true; wait "$RPID" 2>/dev/null || true; }
	RLOG=$T/resp.$RANDOM.log
	local pf=$T/rport.$RANDOM
	$PY "$FAKER" --script "$script" --port 0 --port-file "$pf" --log "$RLOG" "$@" >"$T/resp.out" 2>&1 &
	RPID=$!
	for _ in $(seq 200); do [ -s "$pf" ] && break; sleep 0.05; done
	[ -s "$pf" ] || { cat "$T/resp.out"; echo "FAIL the Responses fake did not start"; exit 1; }
	RURL=http://127.0.0.1:$(cat "$pf")/v1
}
trap '[ -n "$RPID" ] && kill $RPID 2>/dev/null; cleanup' EXIT
statuses() { $PY -c 'import json,sys; print([json.loads(l)["status"] for l in open(sys.argv[1])])' "$RLOG"; }
run() { # run NAME MODEL [options] -- PROMPT
	local name=$1 model=$2
	shift 2
	set +e
	OPENAI_API_KEY=${KEY:-sk-resp} "$ASSAY" run --provider openai-responses --base-url "$RURL" \
		--model "$model" --ask none --run-dir "$T/$name" "$@" </dev/null >"$T/$name.out" 2>"$T/$name.err"
	CODE=$?
	set -e
}

# --- the demo analysis, with a 429 on the third request ---------------
# (a 0.1 ms pause between the fake's two writes of each event, not 1 ms:
# the client still reads events in two parts as often, the demo's
# thousands of events no longer take 15 s)
start_resp "$DATA/demo/energy.json" --key sk-resp --fault '429@3:retry-after=1' --delay-ms 0.1
run demo gpt-4.1 --input "$DATA/building_energy.csv" \
	--output output/anomalies.csv --output output/energy_anomalies.png \
	--output output/anomaly_report.md --out "$T/out" \
	"Find the unusual energy-use events in input/building_energy.csv"
check "the demo through the Responses API: exit 0 (got $CODE)" test "$CODE" -eq 0 || tail -5 demo.err
check "... findings match the ground truth" \
	$PY "$DATA/check_findings.py" "$T/out/output" "$DATA/building_energy.truth.json"
check "... no request refused by the fake but the injected 429 ($(statuses))" \
	test "$($PY -c 'import json,sys; print(sorted({json.loads(l)["status"] for l in open(sys.argv[1])}))' "$RLOG")" = "[200, 429]"
check "... the 429 was retried after its retry-after (an error event, then the turn)" \
	test "$(jget demo/transcript.jsonl "[e['category'] for e in x if e['type'] == 'error']")" = "['provider_rate_limit']"
types=$(event_types demo/transcript.jsonl | tr '\n' ' ')
for t in run_start user_message model_request text_delta assistant_message usage \
	tool_call exec_start exec_output exec_end tool_result workspace_change run_end; do
	check "... transcript has $t" grep -qw "$t" <<<"$types"
done
check "... run_start records the provider" test "$(jget demo/transcript.jsonl "x[0]['provider']")" = openai-responses
check "... each turn priced (gpt-4.1 is in the model table)" \
	test "$(jget demo/transcript.jsonl "all(e['priced'] for e in x if e['type'] == 'usage')")" = True

# --- a reasoning model: its encrypted reasoning goes back ------------
cat >reason.json <<'JSON'
{"turns": [
 {"reasoning": "Look at the files first.", "text": "", "tool_calls": [{"name": "shell", "arguments": {"command": "echo thought > t.txt; cat t.txt"}}],
  "usage": {"input_tokens": 1000, "output_tokens": 200, "reasoning_tokens": 150, "cached_tokens": 400}},
 {"reasoning": "Now answer.", "text": "Reasoned and done.", "tool_calls": []}
]}
JSON
start_resp reason.json --key sk-resp
run reason o4-mini -- "think"
check "a reasoning model: the run completes (exit $CODE)" test "$CODE" -eq 0 || tail -3 reason.err
check "... the second request was accepted (reasoning item sent back, $(statuses))" test "$(statuses)" = "[200, 200]"
check "... the cache keeps the reasoning item with the answer" \
	sh -c "grep -lq encrypted_content '$T'/reason/cache/*.json"
check "... cached and reasoning tokens counted ($(jget reason/transcript.jsonl "[(e['cached_tokens'], e.get('reasoning_tokens')) for e in x if e['type'] == 'usage'][0]"))" \
	test "$(jget reason/transcript.jsonl "[(e['cached_tokens'], e.get('reasoning_tokens')) for e in x if e['type'] == 'usage'][0]")" = "(400, 150)"

# --- stored at OpenAI: chained with previous_response_id --------------
echo '{"responses_store": true}' >store.json
start_resp reason.json --key sk-resp
run stored o4-mini --config "$T/store.json" -- "think"
check "responses_store: the run completes (exit $CODE)" test "$CODE" -eq 0 || tail -3 stored.err
chain() { $PY -c 'import json,sys; print([(json.loads(l)["store"], json.loads(l)["previous_response_id"] is not None) for l in open(sys.argv[1])])' "$RLOG"; }
check "... the first request stored, the second chained to it ($(chain))" \
	test "$(chain)" = "[(True, False), (True, True)]"
# stateless, turn 2 sends the user message, the reasoning item, the call
# and its output (4 items); chained, only the output (1)
check "... sending only what is new: the call's output ($($PY -c 'import json,sys; print([json.loads(l)["n_input"] for l in open(sys.argv[1])])' "$RLOG"))" \
	test "$($PY -c 'import json,sys; print([json.loads(l)["n_input"] for l in open(sys.argv[1])])' "$RLOG")" = "[1, 1]"

# --- a stream cut inside a call's arguments, then an in-stream error --
cat >two.json <<'JSON'
{"turns": [
 {"text": "Counting.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo ran >> count.txt; wc -l < count.txt"}}]},
 {"text": "Counted once.", "tool_calls": []}
]}
JSON
start_resp two.json --key sk-resp --fault 'cut@1' --fault 'error-event@3'
run faults gpt-4.1 -- "count"
check "a cut stream and an in-stream error: the run completes (exit $CODE)" test "$CODE" -eq 0 || tail -3 faults.err
check "... four requests: cut, retried, error, retried ($(statuses))" \
	test "$($PY -c 'import json,sys; print(len(open(sys.argv[1]).readlines()))' "$RLOG")" -eq 4
check "... the call ran once" test "$(cat faults/workspace/count.txt)" = ran
check "... both retried: two stream errors recorded" \
	test "$(jget faults/transcript.jsonl "[e['category'] for e in x if e['type'] == 'error']")" = "['provider_stream', 'provider_stream']"

# --- 401 -------------------------------------------------------------
start_resp two.json --key sk-right
KEY=sk-wrong run auth gpt-4.1 -- "count"
check "a wrong key: exit 4 (got $CODE)" test "$CODE" -eq 4
check "... naming OPENAI_API_KEY" grep -q 'OPENAI_API_KEY' auth.err
check "... asked once, not retried" test "$(statuses)" = "[401]"

# --- a turn cut at the output limit inside its call --------------------
cat >cut.json <<'JSON'
{"turns": [
 {"text": "", "finish_reason": "length", "tool_calls": [{"name": "write_file", "arguments": "{\"path\": \"big.txt\", \"content\": \"aaaa"}]},
 {"text": "Gave up.", "tool_calls": []}
]}
JSON
start_resp cut.json --key sk-resp
run cutoff gpt-4.1 -- "write"
check "a call cut at the output limit: the run completes (exit $CODE)" test "$CODE" -eq 0 || tail -3 cutoff.err
check "... the call is not run: no big.txt" test ! -e cutoff/workspace/big.txt
cut_result() { jget "$T/cutoff/transcript.jsonl" "[e['content'] for e in x if e['type'] == 'tool_result'][0]" | grep -q 'cut off'; }
check "... its result says it was cut off" cut_result
check "... and the next request was accepted ({} sent back, $(statuses))" test "$(statuses)" = "[200, 200]"
finish
