#!/usr/bin/env bash
# assay resume through the fake OpenAI server, which logs every request
# (the recorded URL, like the inputs, is given again: a run dir never
# decides where the key goes or which host files are read):
# resuming a finished run sends nothing and delivers the same outputs; a
# new PROMPT costs exactly one request; --re-execute with unchanged
# command outputs sends nothing, and with a changed output goes live from
# the first request that differs; a fork replaces one tool result.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
cat >script.json <<'JSON'
{"turns": [
 {"text": "Looking at the data.", "tool_calls": [{"name": "shell", "arguments": {"command": "mkdir -p output && cat input/data.txt && echo first > output/a.txt"}}]},
 {"text": "Writing b.", "tool_calls": [{"name": "write_file", "arguments": {"path": "output/b.txt", "content": "bee\n"}}]},
 {"text": "Copying.", "tool_calls": [{"name": "shell", "arguments": {"command": "cp input/data.txt output/c.txt && wc -c output/c.txt"}}]},
 {"text": "Done: outputs written.", "tool_calls": []}
]}
JSON
echo "value 1" >data.txt
start_fake script.json --key sk-resume-test
export OPENAI_API_KEY=sk-resume-test
outs=(--output output/a.txt --output output/b.txt --output output/c.txt)
requests() { fake_requests | tr -d ' '; }
turn_indexes() { # the turn_index of requests after the first $1
	$PY -c 'import json,sys
print([json.loads(l)["turn_index"] for l in open(sys.argv[1])][int(sys.argv[2]):])' "$FAKE_LOG" "$1"
}
tr=$T/run/transcript.jsonl

set +e
"$ASSAY" run --provider openai --base-url "$URL" --model fake-model --input data.txt \
	"${outs[@]}" --run-dir "$T/run" --out "$T/out1" "make the three files" 2>run.err
code=$?
set -e
check "the recorded run exits 0 (got $code)" test "$code" -eq 0
check "it made 4 requests" test "$(requests)" = 4

# 1. resume of the finished run: zero requests, the same outputs
set +e
"$ASSAY" resume "$T/run" --base-url "$URL" --out "$T/out2" 2>resume.err
code=$?
set -e
check "resume exits 0 (got $code)" test "$code" -eq 0
check "resume made zero requests" test "$(requests)" = 4
for f in a b c; do
	check "resume delivered output/$f.txt, the same" cmp -s "$T/out1/output/$f.txt" "$T/out2/output/$f.txt"
done
check "the transcript says it resumed (run_resume)" \
	test "$(jget "$tr" 'len([e for e in x if e["type"]=="run_resume"])')" = 1
check "the 4 recorded answers came from the cache" \
	test "$(jget "$tr" '[e["turn"] for e in x if e["type"]=="model_request" and e["cached"]]')" = "[1, 2, 3, 4]"
check "cached turns bill zero tokens" \
	test "$(jget "$tr" 'sum(e["input_tokens"]+e["output_tokens"] for e in x if e["type"]=="usage" and e.get("replayed"))')" = 0
check "no command ran again" test "$(jget "$tr" 'len([e for e in x if e["type"]=="exec_start"])')" = 2
check "the user is told the run had completed" grep -q "had completed" resume.err
check "seq numbers stay 1..n" \
	test "$(jget "$tr" '[e["seq"] for e in x]==list(range(1,len(x)+1))')" = True

# 2. resume by run id (under .assay/runs) with a new PROMPT: exactly one request
mkdir -p .assay/runs && ln -s "$T/run" .assay/runs/myrun
set +e
"$ASSAY" resume myrun --base-url "$URL" --out "$T/out3" "one more thing" 2>prompt.err
code=$?
set -e
check "resume with a PROMPT exits 0 (got $code)" test "$code" -eq 0
check "exactly one new request" test "$(requests)" = 5
check "... for the turn after the recorded ones" test "$(turn_indexes 4)" = "[4]"
check "the PROMPT is in the transcript" \
	test "$(jget "$tr" '[e["text"] for e in x if e["type"]=="user_message"][-1]')" = "one more thing"
check "export of the resumed run still works" "$ASSAY" export "$T/run" --format md -o "$T/run.md"
check "... and holds both prompts" sh -c "grep -q 'make the three files' '$T/run.md' && grep -q 'one more thing' '$T/run.md'"

# 3. --re-execute with the same command outputs: zero requests
set +e
"$ASSAY" resume "$T/run" --re-execute --base-url "$URL" --input data.txt --out "$T/out4" 2>reexec.err
code=$?
set -e
re1=$T/run-re1/transcript.jsonl
check "--re-execute exits 0 (got $code)" test "$code" -eq 0
check "--re-execute made zero requests" test "$(requests)" = 5
check "it ran in a new run dir forked from the old" \
	test "$(jget "$re1" 'x[0]["forked_from"]["run_dir"]')" = "$T/run"
check "every recorded command ran again" \
	test "$(jget "$re1" 'len([e for e in x if e["type"]=="exec_start"])')" = 2
check "all 5 answers from the cache (the PROMPT's too)" \
	test "$(jget "$re1" '[e["cached"] for e in x if e["type"]=="model_request"]')" = "[True, True, True, True, True]"
for f in a b c; do
	check "re-executed output/$f.txt is the same" cmp -s "$T/out1/output/$f.txt" "$T/out4/output/$f.txt"
done
check "the old run dir is untouched by --re-execute" \
	test "$(jget "$tr" 'len([e for e in x if e["type"]=="run_resume"])')" = 2

# 4. --re-execute after an input changed: live from the first differing request
echo "value 2, changed" >data.txt
set +e
"$ASSAY" resume "$T/run" --re-execute --base-url "$URL" --input data.txt --out "$T/out5" 2>reexec2.err
code=$?
set -e
re2=$T/run-re2/transcript.jsonl
check "--re-execute with a changed output exits 0 (got $code)" test "$code" -eq 0
check "requests from turn 2 on (turn_index 1..3), none for turn 1" test "$(turn_indexes 5)" = "[1, 2, 3]"
check "replay_live names turn 2 and the changed request" \
	test "$(jget "$re2" '[(e["turn"],"differs" in e["reason"]) for e in x if e["type"]=="replay_live"]')" = "[(2, True)]"
check "the new output has the changed input" grep -q "value 2, changed" "$T/out5/output/c.txt"

# 5. fork: the first tool result replaced; live from the next request
echo "value 1" >data.txt
seq=$(jget "$tr" '[e["seq"] for e in x if e["type"]=="tool_result"][0]')
before=$(requests)
set +e
"$ASSAY" resume "$T/run" --fork-at "$seq" --replace "FORKED RESULT" --run-dir "$T/fork" \
	--base-url "$URL" --input data.txt \
	--out "$T/out6" 2>fork.err
code=$?
set -e
check "the fork exits 0 (got $code)" test "$code" -eq 0
check "the forked tool result holds the replacement" \
	test "$(jget "$T/fork/transcript.jsonl" '[(e["content"],e.get("forked")) for e in x if e["type"]=="tool_result"][0]')" = "('FORKED RESULT', True)"
check "turn 1 came from the cache, the rest live" test "$(turn_indexes "$before")" = "[1, 2, 3]"
check "the fork records where it came from" \
	test "$(jget "$T/fork/transcript.jsonl" 'x[0]["forked_from"]["fork_at"]')" = "$seq"

# 6. bad input
set +e
"$ASSAY" resume "$T/nope" 2>bad.err
code=$?
set -e
check "an unknown run exits 2 (got $code)" test "$code" -eq 2
check "... saying what RUN may be" grep -q "give a run dir" bad.err
# a fork at the PROMPT's user message: the recorded turns from the
# cache, then one request with the new text
useq=$(jget "$tr" '[e["seq"] for e in x if e["type"]=="user_message"][-1]')
before=$(requests)
set +e
"$ASSAY" resume "$T/run" --fork-at "$useq" --replace "another thing" --run-dir "$T/fork2" \
	--base-url "$URL" --input data.txt \
	--out "$T/out7" 2>fork2.err
code=$?
set -e
check "a fork at a user message exits 0 (got $code)" test "$code" -eq 0
check "... with one request, for the turn after the recorded ones" test "$(turn_indexes "$before")" = "[4]"
check "... that sent the new text" \
	test "$(jget "$T/fork2/transcript.jsonl" '[e["text"] for e in x if e["type"]=="user_message"]')" = "['make the three files', 'another thing']"

eseq=$(jget "$tr" '[e["seq"] for e in x if e["type"]=="exec_start"][0]')
set +e
"$ASSAY" resume "$T/run" --fork-at "$eseq" --replace x --input data.txt 2>bad2.err
code=$?
set -e
check "--fork-at on a non-result event exits 2 (got $code)" test "$code" -eq 2
check "... saying where to fork" grep -q "names a exec_start event: fork at a tool_result" bad2.err
set +e
"$ASSAY" resume "$T/run" --replace x 2>bad3.err
code=$?
set -e
check "--replace without --fork-at exits 2 (got $code)" test "$code" -eq 2
check "... saying it needs --fork-at" grep -q -- "--replace needs --fork-at" bad3.err
check "the key is never recorded" sh -c "! grep -rq sk-resume-test '$T/run' '$T/run-re1' '$T/fork'"
finish
