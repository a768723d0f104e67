#!/usr/bin/env bash
# --provider anthropic against tests/fakes/fake_anthropic.py (the
# Messages API, validated as the real one: alternating roles, every
# tool_use answered by a tool_result first in the next user message,
# thinking blocks sent back with their signatures unchanged, at most 4
# cache breakpoints): the demo analysis completes with findings that
# match the ground truth and a transcript of the same shape as the other
# providers'; the prompt cache is used (breakpoints on the system
# prompt, the tools and the last message: later turns read the earlier
# prefix) and priced as cache reads and writes to the cent; thinking
# round trip; faults: 429 + retry-after, 529 overloaded, a stream cut
# inside a tool call retried without running the call twice, an
# in-stream overloaded error retried, 401 exits 4 naming
# ANTHROPIC_API_KEY; a turn cut at max_tokens inside a call is not run.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
FAKEA=$SRC/tests/fakes/fake_anthropic.py
export XDG_CONFIG_HOME=$T/xdg
unset ANTHROPIC_BASE_URL ASSAY_PROVIDER ASSAY_MODEL OPENAI_BASE_URL
APID=
start_anth() { # start_anth SCRIPT [fake options]: AURL, ALOG
	local script=$1
	shift
	[ -n "$APID" ] && { kill "$APID" 2>/dev/null || true; wait "$APID" 2>/dev/null || true; }
	ALOG=$T/anth.$RANDOM.log
	local pf=$T/aport.$RANDOM
	$PY "$FAKEA" --script "$script" --port 0 --port-file "$pf" --log "$ALOG" "$@" >"$T/anth.out" 2>&1 &
	APID=$!
	for _ in $(seq 200); do [ -s "$pf" ] && break; sleep 0.05; done
	[ -s "$pf" ] || { cat "$T/anth.out"; echo "FAIL the Anthropic fake did not start"; exit 1; }
	AURL=http://127.0.0.1:$(cat "$pf")
}
trap '[ -n "$APID" ] && kill $APID 2>/dev/null; cleanup' EXIT
statuses() { $PY -c 'import json,sys; print([json.loads(l)["status"] for l in open(sys.argv[1])])' "$ALOG"; }
run() { # run NAME MODEL [options] -- PROMPT
	local name=$1 model=$2
	shift 2
	set +e
	ANTHROPIC_API_KEY=${KEY:-sk-ant-test} ANTHROPIC_BASE_URL=$AURL "$ASSAY" run --provider anthropic \
		--model "$model" --ask none --run-dir "$T/$name" "$@" </dev/null >"$T/$name.out" 2>"$T/$name.err"
	CODE=$?
	set -e
}

# --- the demo analysis, with a 429 on the third request and a 529 on the fifth
# (a 0.1 ms pause between the fake's two writes of each event, not 1 ms:
# the client still reads events in two parts as often, the demo's
# thousands of events no longer take 15 s)
start_anth "$DATA/demo/energy.json" --key sk-ant-test --fault '429@3:retry-after=1' --fault '529@5' \
	--delay-ms 0.1
run demo claude-sonnet-4-5 --input "$DATA/building_energy.csv" \
	--output output/anomalies.csv --output output/energy_anomalies.png \
	--output output/anomaly_report.md --out "$T/out" \
	"Find the unusual energy-use events in input/building_energy.csv"
check "the demo through the Messages API: exit 0 (got $CODE)" test "$CODE" -eq 0 || tail -5 demo.err
check "... findings match the ground truth" \
	$PY "$DATA/check_findings.py" "$T/out/output" "$DATA/building_energy.truth.json"
check "... no request refused but the injected 429 and 529 ($(statuses))" \
	test "$($PY -c 'import json,sys; print(sorted({json.loads(l)["status"] for l in open(sys.argv[1])}))' "$ALOG")" = "[200, 429, 529]"
check "... both retried (a rate-limit and a server error event)" \
	test "$(jget demo/transcript.jsonl "[e['category'] for e in x if e['type'] == 'error']")" = "['provider_rate_limit', 'provider_server']"
types=$(event_types demo/transcript.jsonl | tr '\n' ' ')
for t in run_start user_message model_request text_delta assistant_message usage \
	tool_call exec_start exec_output exec_end tool_result workspace_change run_end; do
	check "... transcript has $t" grep -qw "$t" <<<"$types"
done
check "... three cache breakpoints in every request" \
	test "$($PY -c 'import json,sys; print({json.loads(l).get("cache_breakpoints") for l in open(sys.argv[1]) if json.loads(l)["status"] == 200})' "$ALOG")" = "{3}"
check "... later turns read the cache ($(jget demo/transcript.jsonl "[e['cached_tokens'] for e in x if e['type'] == 'usage']"))" \
	test "$(jget demo/transcript.jsonl "sum(1 for e in x if e['type'] == 'usage' and e['cached_tokens'] > 0)")" -ge 4

# --- cost with cache reads and writes, thinking sent back ------------
# claude-sonnet-4-5: input $3, cache read $0.30, cache write $3.75,
# output $15 per million tokens
# turn 1: 1000 plain + 2000 written, 500 out: 3000 + 7500 + 7500 -> $0.018
# turn 2: 100 plain + 2000 read + 300 written, 200 out:
#   300 + 600 + 1125 + 3000 -> $0.005025
cat >think.json <<'JSON'
{"turns": [
 {"thinking": "First look at the data.", "text": "Looking.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo looked"}}],
  "usage": {"input_tokens": 1000, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0, "output_tokens": 500}},
 {"thinking": "Done now.", "text": "Thought it through.", "tool_calls": [],
  "usage": {"input_tokens": 100, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 2000, "output_tokens": 200}}
]}
JSON
start_anth think.json --key sk-ant-test
run think claude-sonnet-4-5 -- "think"
check "thinking: the run completes (exit $CODE)" test "$CODE" -eq 0 || tail -3 think.err
check "... the second request was accepted (thinking and signature sent back, $(statuses))" test "$(statuses)" = "[200, 200]"
check "... each turn's cost, cache reads and writes priced as such" \
	test "$(jget think/transcript.jsonl "[round(float(e['cost_usd']), 6) for e in x if e['type'] == 'usage']")" = "[0.018, 0.005025]"
check "... the usage events count every input token, the cache's among them" \
	test "$(jget think/transcript.jsonl "[(e['input_tokens'], e['cached_tokens'], e.get('cache_write_tokens')) for e in x if e['type'] == 'usage']")" = \
	"[(3000, 0, 2000), (2400, 2000, 300)]"

# --- a stream cut inside a tool call, then an in-stream error --------
cat >two.json <<'JSON'
{"turns": [
 {"text": "Counting.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo ran >> count.txt; wc -l < count.txt"}}]},
 {"text": "Counted once.", "tool_calls": []}
]}
JSON
start_anth two.json --key sk-ant-test --fault 'cut@1' --fault 'error-event@3'
run faults claude-sonnet-4-5 -- "count"
check "a cut stream and an in-stream error: the run completes (exit $CODE)" test "$CODE" -eq 0 || tail -3 faults.err
check "... four requests: cut, retried, error, retried" \
	test "$($PY -c 'import json,sys; print(len(open(sys.argv[1]).readlines()))' "$ALOG")" -eq 4
check "... the call ran once" test "$(cat faults/workspace/count.txt)" = ran
check "... both retried: two stream errors recorded" \
	test "$(jget faults/transcript.jsonl "[e['category'] for e in x if e['type'] == 'error']")" = "['provider_stream', 'provider_stream']"

# --- 401 -------------------------------------------------------------
start_anth two.json --key sk-ant-right
KEY=sk-ant-wrong run auth claude-sonnet-4-5 -- "count"
check "a wrong key: exit 4 (got $CODE)" test "$CODE" -eq 4
check "... naming ANTHROPIC_API_KEY" grep -q 'ANTHROPIC_API_KEY' auth.err
check "... asked once, not retried" test "$(statuses)" = "[401]"

# --- a turn cut at max_tokens inside its call --------------------------
cat >cut.json <<'JSON'
{"turns": [
 {"text": "", "stop_reason": "max_tokens", "tool_calls": [{"name": "write_file", "arguments": "{\"path\": \"big.txt\", \"content\": \"aaaa"}]},
 {"text": "Gave up.", "tool_calls": []}
]}
JSON
start_anth cut.json --key sk-ant-test
run cutoff claude-sonnet-4-5 -- "write"
check "a call cut at max_tokens: the run completes (exit $CODE)" test "$CODE" -eq 0 || tail -3 cutoff.err
check "... the call is not run: no big.txt" test ! -e cutoff/workspace/big.txt
cut_result() { jget "$T/cutoff/transcript.jsonl" "[e['content'] for e in x if e['type'] == 'tool_result'][0]" | grep -q 'cut off'; }
check "... its result says it was cut off" cut_result
check "... and the next request was accepted ({} sent back, $(statuses))" test "$(statuses)" = "[200, 200]"
finish
