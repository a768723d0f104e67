#!/usr/bin/env bash
# Long sessions never die of a full context window (agent/context.c):
# a 60-turn session of 20 KB results against a fake that refuses any
# prompt over a 16k-token window completes, trimming old results and
# compacting, with no request over the window and every full output in
# the record; a refusal mid-run (context_length_exceeded) is compacted
# and retried; with the Anthropic fake the requests between compactions
# read the prompt cache; a run killed after a compaction resumes without
# asking again for the turns it recorded; --max-turns does not count the
# summaries.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
FAKEA=$SRC/tests/fakes/fake_anthropic.py
MARK=SUMMARY-REQUEST-MARK

# script NAME TURNS BYTES: turns that each print BYTES bytes (a call with a
# fixed id the fake picks the next turn by), a summary answer for the
# compaction request, then the final answer
script() {
	$PY - "$@" <<'PY'
import json, sys
name, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
note = ("The rows look regular: the readings stay near 12.5 kWh with status ok, so I keep "
        "the running totals, note the range of each block and move on to the next block of "
        "the file to check that the pattern holds there too. ")
turns = [{"text": f"Step {i}. " + note * 2,
          "tool_calls": [{"id": f"toolu_call{i:03d}", "name": "shell", "arguments": {
              "command": f"yes 'turn {i:03d}: energy row, 12.5 kWh, status ok' | head -c {size}; echo"}}]}
         for i in range(n)]
turns.append({"text": "FINAL ANSWER: all %d steps done." % n, "tool_calls": []})
json.dump({"turns": turns,
           "summary": {"when": "Do not call any tool now",
                       "text": "Summary: the user asked for %d steps; each printed energy rows "
                               "(12.5 kWh, status ok). Steps done so far are in the history." % n}},
          open(name, "w"))
PY
}
# The fakes answer at full speed (--delay-ms 0: no pause after each of
# their writes, 2 ms a write by default, ~0.4 s a turn here): what is
# checked is what is sent and kept, not how a stream is read
cat >cfg.json <<'JSON'
{"max_output_bytes": 65536, "models": {"ctx-model": {"context": 16000}}}
JSON
cat >cfg8.json <<'JSON'
{"max_output_bytes": 65536, "models": {"ctx-model": {"context": 8000}}}
JSON
run_openai() { # run_openai NAME [assay options] -- PROMPT
	local name=$1
	shift
	set +e
	OPENAI_API_KEY=sk-e2e "$ASSAY" run --base-url "$URL" --model ctx-model --config "$T/cfg.json" \
		--ask none --max-turns 200 --run-dir "$T/$name" "$@" </dev/null >"$T/$name.out" 2>"$T/$name.err"
	CODE=$?
	set -e
}
accepted_max() { # the largest prompt the fake accepted, in its tokens
	jget "$1" "max([e.get('prompt_tokens', 0) for e in x if e['status'] == 200] or [0])"
}

# --- 1. sixty turns of 20 KB results in a 16k window -------------------
script long.json 60 20000
start_fake long.json --max-context 16000 --turn-by call-id --delay-ms 0
run_openai long -- "Run the sixty steps."
tr=$T/long/transcript.jsonl
check "60 turns of 20 KB results in a 16k window: the run completes (exit $CODE)" test "$CODE" -eq 0 ||
	tail -5 long.err
check "... the final answer arrived" grep -q "FINAL ANSWER: all 60 steps done" long.err
check "... no request over the window was sent (largest accepted: $(accepted_max "$FAKE_LOG") tokens)" \
	test "$(jget "$FAKE_LOG" "sum(1 for e in x if e['status'] != 200)")" -eq 0 -a \
	"$(accepted_max "$FAKE_LOG")" -le 16000
check "... old results were trimmed ($(jget "$tr" "sum(1 for e in x if e['type'] == 'context_trim')") trims)" \
	test "$(jget "$tr" "sum(1 for e in x if e['type'] == 'context_trim')")" -ge 1
ncomp=$(jget "$tr" "sum(1 for e in x if e['type'] == 'compaction' and e['state'] == 'done')")
check "... and the history compacted ($ncomp times), each summary answered by the fake's summary" \
	test "$ncomp" -ge 1 -a "$(jget "$FAKE_LOG" "sum(1 for e in x if e.get('summary'))")" -eq "$ncomp"
check "... every one of the 60 full outputs is in the transcript" \
	test "$(jget "$tr" "sum(1 for e in x if e['type'] == 'tool_result' and len(e['content']) >= 20000)")" -eq 60
check "... and in exec/ (20 KB each)" \
	test "$(find long/exec -name '*.stdout' -size +19k | wc -l)" -eq 60
check "... each model_request says its estimate against the window" \
	test "$(jget "$tr" "all(e.get('window') == 16000 and e.get('est_tokens', 0) > 0 for e in x if e['type'] == 'model_request')")" = True
check "... a stub names the full output, which read_file can read back" \
	grep -q '@exec/toolu_call000.stdout' "$tr"
check "... the summaries' tokens are in the totals, but not counted as turns" \
	test "$(jget "$tr" "[e for e in x if e['type'] == 'run_end'][0]['totals']['turns']")" -eq 61 -a \
	"$(jget "$tr" "sum(1 for e in x if e['type'] == 'usage' and e.get('of') == 'compaction')")" -eq "$ncomp"
check "... stderr says what was done to fit" grep -q 'context: compacted' long.err

# --- 2. a refusal mid-run: compacted, retried, completed ----------------
script short.json 8 3000
start_fake short.json --turn-by call-id --fault 'context@5' --delay-ms 0
run_openai refused -- "Run the eight steps."
tr=$T/refused/transcript.jsonl
check "context_length_exceeded at request 5: the run completes (exit $CODE)" test "$CODE" -eq 0 ||
	tail -5 refused.err
check "... the refusal was recorded as provider_context" \
	test "$(jget "$tr" "[e['category'] for e in x if e['type'] == 'error']")" = "['provider_context']"
check "... then a compaction for it, and the same turn asked again" \
	test "$(jget "$tr" "[(e['state'], e['reason']) for e in x if e['type'] == 'compaction']")" = \
	"[('started', 'context_length_exceeded'), ('done', 'context_length_exceeded')]" -a \
	"$(jget "$tr" "[e['turn'] for e in x if e['type'] == 'model_request'][4:6]")" = "[5, 5]"
check "... requests: 5 (refused), the summary, the retry and the rest ($(fake_requests))" \
	test "$(fake_requests)" -eq 11
check "... the final answer arrived" grep -q "FINAL ANSWER: all 8 steps done" refused.err

# re-executed: the same requests, every answer and the summary from the
# record's cache (the refusal is not met again: the record says where
# the compaction was)
before=$(fake_requests)
set +e
OPENAI_API_KEY=sk-e2e "$ASSAY" resume "$T/refused" --re-execute --run-dir "$T/reexec" \
	--base-url "$URL" --config "$T/cfg.json" </dev/null >reexec.out 2>reexec.err
CODE=$?
set -e
check "re-executed: exit $CODE, nothing sent to the provider ($(($(fake_requests) - before)) requests)" \
	test "$CODE" -eq 0 -a "$(fake_requests)" -eq "$before" || tail -5 reexec.err
check "... the compaction made again from the cache, at the same turn" \
	test "$(jget reexec/transcript.jsonl "[(e['state'], e.get('cached')) for e in x if e['type'] == 'compaction']")" = \
	"[('started', None), ('done', True)]"
check "... and no turn went live" \
	test "$(jget reexec/transcript.jsonl "sum(1 for e in x if e['type'] == 'replay_live')")" -eq 0

# --- 3. Anthropic: the prompt cache hits between compactions -------------
script anth.json 40 6000
ALOG=$T/anth.log
$PY "$FAKEA" --script anth.json --port 0 --port-file aport --log "$ALOG" --key sk-ant-test \
	--max-context 8000 --turn-by call-id --delay-ms 0 >anth.out 2>&1 &
APID=$!
wait_until 10 '[ -s aport ]'
set +e
ANTHROPIC_API_KEY=sk-ant-test ANTHROPIC_BASE_URL=http://127.0.0.1:$(cat aport) "$ASSAY" run \
	--provider anthropic --model ctx-model --config "$T/cfg8.json" --ask none --max-turns 200 \
	--run-dir "$T/anth" -- "Run the forty steps." </dev/null >anth.out2 2>anth.err
CODE=$?
set -e
kill $APID 2>/dev/null || true
wait $APID 2>/dev/null || true
check "Anthropic, 40 turns of 6 KB in 8k: the run completes (exit $CODE)" test "$CODE" -eq 0 || tail -5 anth.err
check "... it compacted" \
	test "$(jget anth/transcript.jsonl "sum(1 for e in x if e['type'] == 'compaction' and e['state'] == 'done')")" -ge 1
check "... every request after the first read the prompt cache ($(jget "$ALOG" "[e.get('usage', {}).get('cache_read_input_tokens') for e in x][:6]")...)" \
	test "$(jget "$ALOG" "all(e['status'] == 200 for e in x) and all(e['usage']['cache_read_input_tokens'] > 0 for e in x[1:])")" = True

# --- 4. killed after a compaction, resumed: nothing asked again ----------
script slow.json 30 6000
# each answer 250 ms late: the kill, two answers after the compaction,
# comes turns before the end (the 7 turns left take 1.75 s at least)
start_fake slow.json --max-context 8000 --turn-by call-id --delay-ms 0 --latency-ms 250
OPENAI_API_KEY=sk-e2e "$ASSAY" run --base-url "$URL" --model ctx-model --config "$T/cfg8.json" \
	--ask none --max-turns 200 --run-dir "$T/killed" "Run the thirty steps." </dev/null >killed.out 2>killed.err &
APP=$!
tr=$T/killed/transcript.jsonl
wait_until 120 "grep -q '\"state\":\"done\"' $tr"
# two more answers after the first compaction
done_line=$(grep -n '"state":"done"' "$tr" | head -1 | cut -d: -f1)
wait_until 60 "[ \"\$(tail -n +$done_line $tr | grep -c '\"type\":\"assistant_message\"')\" -ge 2 ]"
kill -9 $APP
wait $APP 2>/dev/null || true
answered=$(jget "$tr" "sum(1 for e in x if e['type'] == 'assistant_message')")
before=$(fake_requests)
check "killed after a compaction ($answered answers recorded)" test "$answered" -ge 3
set +e
OPENAI_API_KEY=sk-e2e "$ASSAY" resume "$T/killed" --base-url "$URL" --config "$T/cfg8.json" </dev/null >resumed.out 2>resumed.err
CODE=$?
set -e
check "... the resume completes (exit $CODE)" test "$CODE" -eq 0 || tail -5 resumed.err
check "... and asked the provider for no turn it had recorded (first new turn index $(jget "$FAKE_LOG" "[e.get('turn_index') for e in x][$before:][:1]"), $answered answered)" \
	test "$(jget "$FAKE_LOG" "min([e['turn_index'] for e in x[$before:] if not e.get('summary')] or [999])")" -ge "$answered"
live=$(jget "$tr" "[e['reason'] for e in x if e['type'] == 'replay_live']")
check "... the rebuilt history matched the record: every recorded request hashed the same ($live)" \
	test "$(jget "$tr" "sum(1 for e in x if e['type'] == 'replay_live' and 'differs' in e['reason'])")" -eq 0 -a \
	"$(jget "$tr" "sum(1 for e in x if e['type'] == 'replay_live')")" -eq 1
check "... the final answer arrived" grep -q "FINAL ANSWER: all 30 steps done" resumed.err

# --- 5. a fork before the compaction: live from there, compacting anew --
# (a fake of its own, without the latency the kill above needed)
start_fake slow.json --max-context 8000 --turn-by call-id --delay-ms 0
seq2=$(jget "$tr" "[e['seq'] for e in x if e['type'] == 'tool_result'][1]")
set +e
OPENAI_API_KEY=sk-e2e "$ASSAY" resume "$T/killed" --re-execute --fork-at "$seq2" \
	--replace "turn 001: a different result" --run-dir "$T/fork" --base-url "$URL" \
	--config "$T/cfg8.json" </dev/null >fork.out 2>fork.err
CODE=$?
set -e
check "a fork at the second result (seq $seq2), before the compaction: exit $CODE" test "$CODE" -eq 0 ||
	tail -5 fork.err
check "... its history compacted as it grew ($(jget fork/transcript.jsonl "[(e['state'], e.get('cached')) for e in x if e['type'] == 'compaction']"))" \
	test "$(jget fork/transcript.jsonl "sum(1 for e in x if e['type'] == 'compaction' and e['state'] == 'done')")" -ge 1
check "... and the final answer arrived" grep -q "FINAL ANSWER: all 30 steps done" fork.err
finish
