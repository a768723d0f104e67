#!/usr/bin/env bash
# The demo analysis through the openai provider and a fake server over
# real HTTP that validates requests as the real API does; the transcript
# must hold every event type of DESIGN.md.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
# a 429 on the third request puts an error event (and a retry) in the run;
# a 0.1 ms pause between the fake's two writes of each event, not 1 ms
# (the client still reads events in two parts as often; the demo's some
# 7000 events took 15 s at 1 ms)
start_fake "$DATA/demo/energy.json" --quirks openai --fault '429@3:retry-after=1' --key sk-test \
	--delay-ms 0.1
set +e
OPENAI_API_KEY=sk-test "$ASSAY" run --base-url "$URL" --model gpt-test \
	--input "$DATA/building_energy.csv" \
	--output output/anomalies.csv --output output/energy_anomalies.png \
	--output output/anomaly_report.md \
	--run-dir "$T/run" --out "$T/out" --json \
	"Find the unusual energy-use events in input/building_energy.csv" \
	>"$T/events.jsonl" 2>"$T/stderr"
code=$?
set -e
check "run exits 0 (got $code)" test "$code" -eq 0
check "findings match the ground truth" \
	$PY "$DATA/check_findings.py" "$T/out/output" "$DATA/building_energy.truth.json"
types=$(event_types "$T/run/transcript.jsonl" | tr '\n' ' ')
for t in run_start user_message model_request text_delta assistant_message usage \
	tool_call approval exec_start exec_output exec_end tool_result workspace_change \
	error run_end; do
	check "transcript has $t" grep -qw "$t" <<<"$types"
done
check "--json stdout equals the transcript" cmp -s "$T/events.jsonl" "$T/run/transcript.jsonl"
check "no request was rejected by the fake (all 200 or the injected 429)" \
	test "$($PY -c 'import json,sys; print(sorted({json.loads(l)["status"] for l in open(sys.argv[1])}))' "$FAKE_LOG")" = "[200, 429]"
check "the key never reaches the transcript or the run dir" \
	sh -c "! grep -rq sk-test '$T/run'"
check "seq numbers are 1..n" \
	test "$(jget "$T/run/transcript.jsonl" '[e["seq"] for e in x]==list(range(1,len(x)+1))')" = True
finish
