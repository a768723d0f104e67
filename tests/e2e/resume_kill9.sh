#!/usr/bin/env bash
# kill -9 of assay in the middle of a streamed turn (the fake server
# stalls turn 3's stream), then resume: the two completed turns come
# from the cache, the interrupted one is requested again, the run
# finishes with its outputs; a transcript line cut by the crash is
# tolerated; no sandbox process outlives the run.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
cat >script.json <<'JSON'
{"turns": [
 {"text": "Step one.", "tool_calls": [{"name": "shell", "arguments": {"command": "mkdir -p output && echo one > output/one.txt"}}]},
 {"text": "Step two.", "tool_calls": [{"name": "python", "arguments": {"code": "open('output/two.txt','w').write('two\\n')"}}]},
 {"text": "Step three, a long answer streamed slowly before the last command.", "tool_calls": [{"name": "shell", "arguments": {"command": "cat output/one.txt output/two.txt > output/three.txt"}}]},
 {"text": "Finished.", "tool_calls": []}
]}
JSON
# request 3 (turn 3) sends its first event, then stalls for 60 s
start_fake script.json --fault 'stall@3:60'
export OPENAI_API_KEY=sk-kill-test
outs=(--output output/one.txt --output output/two.txt --output output/three.txt)
"$ASSAY" run --provider openai --base-url "$URL" --model fake-model "${outs[@]}" \
	--run-dir "$T/run" --out "$T/out" "make three files" 2>run.err &
pid=$!
tr=$T/run/transcript.jsonl
# inside turn 3's request: the server has it (and stalls after its
# first event), the record's last event is its model_request
in_turn3() {
	[ "$(fake_requests)" -ge 3 ] &&
		[ "$(jget "$tr" '(x[-1]["type"], x[-1].get("turn"))' 2>/dev/null)" = "('model_request', 3)" ]
}
for _ in $(seq 600); do in_turn3 && break; sleep 0.05; done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
check "the run was killed during turn 3's request" \
	test "$(jget "$tr" '[e["type"] for e in x][-1]')" = model_request
check "2 answers were checkpointed in cache/" test "$(ls "$T/run/cache" | grep -c '\.json$')" = 2
# a crash in the middle of writing a line leaves it cut short
printf '{"seq":999,"t":1,"type":"text_delta","turn":3,"te' >>"$tr"
# the kernel's sandbox sees its pipe close and exits
sandbox_left() { ps -eo stat=,args= | grep -v '^Z' | grep bwrap | grep -q -- "--bind $T/run/workspace "; }
for _ in $(seq 200); do sandbox_left || break; sleep 0.05; done
if sandbox_left; then fail "no sandbox process of the killed run is left"; else ok "no sandbox process of the killed run is left"; fi


kill "$FAKE_PID" 2>/dev/null || true
wait "$FAKE_PID" 2>/dev/null || true
FAKE_PID=
start_fake script.json
set +e
# the server moved: --base-url overrides the recorded one (the out dir
# is the user's, never the recorded one: given again)
"$ASSAY" resume "$T/run" --base-url "$URL" --out "$T/out" 2>resume.err
code=$?
set -e
check "resume exits 0 (got $code)" test "$code" -eq 0
check "only the interrupted turn and the next were requested" \
	test "$($PY -c 'import json,sys; print([json.loads(l)["turn_index"] for l in open(sys.argv[1])])' "$FAKE_LOG")" = "[2, 3]"
check "turns 1 and 2 came from the cache" \
	test "$(jget "$tr" '[e["turn"] for e in x if e["type"]=="model_request" and e["cached"]]')" = "[1, 2]"
check "the cut line was dropped, the rest kept" \
	test "$(jget "$tr" '[e["resumed_from"]["dropped_bytes"]>0 for e in x if e["type"]=="run_resume"]')" = "[True]"
check "every line of the transcript is whole JSON" \
	$PY -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$tr"
check "the run completed" test "$(jget "$tr" 'x[-1]["status"]')" = completed
check "its outputs are there" sh -c "printf 'one\ntwo\n' | cmp -s - '$T/out/output/three.txt'"
check "export reads the resumed transcript" "$ASSAY" export "$T/run" --format md -o "$T/run.md"
if sandbox_left; then fail "no sandbox process is left after resume"; else ok "no sandbox process is left after resume"; fi
finish
