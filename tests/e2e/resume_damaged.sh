#!/usr/bin/env bash
# Resume of damaged or odd transcripts: a bad line in the middle is
# refused (exit 2, nothing sent) like replay does, so is a request made
# before the results it needs and a turn number past the requests made
# (it once made --re-execute spin for minutes); an answer found only in
# cache/ (the run died between checkpointing and recording it) is
# written to the transcript, so export shows it; a run recorded by
# another version whose first request cannot be rebuilt is not resumed
# in place (--re-execute is suggested).
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
cat >script.json <<'JSON'
{"turns": [
 {"text": "Writing.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo one > one.txt"}}]},
 {"text": "The file one.txt holds RECOVERABLE-ANSWER.", "tool_calls": []}
]}
JSON
start_fake script.json --key sk-damaged
export OPENAI_API_KEY=sk-damaged XDG_CONFIG_HOME=$T/xdg
unset OPENAI_BASE_URL
"$ASSAY" run --provider openai --base-url "$URL" --model fake-model --ask none \
	--run-dir "$T/run" --out "$T/out" "write one" 2>run.err
check "the recorded run completed" test "$(jget run/transcript.jsonl 'x[-1]["status"]')" = completed
requests() { fake_requests | tr -d ' '; }
before=$(requests)
edit() { # edit NAME PYTHON: a copy of the run with its events (ev) edited
	cp -a "$T/run" "$T/$1"
	$PY - "$T/$1/transcript.jsonl" "$2" <<'PY'
import json, sys
path, code = sys.argv[1], sys.argv[2]
ev = [json.loads(l) for l in open(path)]
idx = lambda t, k=0: [i for i, e in enumerate(ev) if e["type"] == t][k]
exec(code)
open(path, "w").write("".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in ev))
PY
}
resume() {
	local name=$1
	shift
	set +e
	timeout -k 5 60 "$ASSAY" resume "$T/$name" --base-url "$URL" "$@" </dev/null >"$T/$name.out" 2>"$T/$name.err"
	code=$?
	set -e
}

# 1. a line in the middle is not JSON
edit bad "ev.insert(3, '{\"seq\": 4, \"type\": \"text_del')"
sum=$(md5sum <bad/transcript.jsonl)
resume bad
check "a bad middle line: exit 2 (got $code)" test "$code" -eq 2
check "... naming the line" grep -q "line 4 is not a JSON event: the transcript is damaged" bad.err
check "... nothing sent" test "$(requests)" = "$before"
check "... the transcript untouched" test "$(md5sum <bad/transcript.jsonl)" = "$sum"
# a cut last line is still fine (a crash mid-write)
edit cut "ev.append('{\"seq\": 99, \"type\": \"text_del')"
resume cut
check "a cut last line is tolerated (got $code)" test "$code" -eq 0

# 2. a request made before the result of the call before it
edit nores "del ev[idx('tool_result')]"
resume nores
check "a request without the result it needs: exit 2 (got $code)" test "$code" -eq 2
check "... saying which call" grep -q "before call .* had a result: the transcript is damaged" nores.err
check "... nothing sent" test "$(requests)" = "$before"

# 3. a turn number far past the requests made
edit turn "ev[idx('model_request', 1)]['turn'] = 2000000000"
# (it once spun for minutes: the timeout is a hang guard; how long it
# takes next to a plain resume is tests/bench/resume_damaged.sh's figure)
set +e
timeout -k 5 120 "$ASSAY" resume "$T/turn" --re-execute --base-url "$URL" </dev/null >turn.out 2>turn.err
code=$?
set -e
check "a damaged turn number: --re-execute exits 2, no hang (got $code)" test "$code" -eq 2
check "... saying the turn is damaged" grep -q "has turn 2e+09, but it is request 2 of the run" turn.err

# 4. the answer of the last turn only in cache/ (killed between the
# checkpoint and the transcript line): recorded on resume
# (its streamed text_delta events dropped too: the text is only in cache/)
edit lost "del ev[idx('assistant_message', 1):]; ev[:] = [e for e in ev if not (e['type'] == 'text_delta' and e['turn'] == 2)]"
check "the copy has no answer text" sh -c "! grep -q RECOVERABLE-ANSWER '$T/lost/transcript.jsonl'"
resume lost
check "resume of it exits 0 (got $code)" test "$code" -eq 0
check "... with zero requests (the answer came from cache/)" test "$(requests)" = "$before"
check "... and the answer is now in the transcript, marked recovered" \
	test "$(jget lost/transcript.jsonl '[(e["turn"], e.get("recovered")) for e in x if e["type"]=="assistant_message"]')" = "[(1, None), (2, True)]"
"$ASSAY" export "$T/lost" --format md -o "$T/lost.md"
check "... so export shows it" grep -q RECOVERABLE-ANSWER "$T/lost.md"
resume lost
check "a second resume does not record it twice" \
	test "$(jget lost/transcript.jsonl 'len([e for e in x if e.get("recovered")])')" = 1

# 5. another version of assay: resumed when its requests rebuild the same
edit old "ev[0]['version'] = '0.0.1-old'"
resume old
check "another version, same requests: resumed (got $code)" test "$code" -eq 0
check "... from the cache" test "$(requests)" = "$before"
# ...but not in place when the first request cannot be rebuilt
echo "Other instructions." >other.md
edit old2 "ev[0]['version'] = '0.0.1-old'"
resume old2 --instructions "$T/other.md"
check "another version, first request differs: exit 2 (got $code)" test "$code" -eq 2
check "... suggesting --re-execute" grep -q "recorded by assay 0.0.1-old.*use assay resume --re-execute" old2.err
check "... nothing sent" test "$(requests)" = "$before"
check "... no command ran again" \
	test "$(jget old2/transcript.jsonl 'len([e for e in x if e["type"]=="exec_start"])')" = 1
finish
