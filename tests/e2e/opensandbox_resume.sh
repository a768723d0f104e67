#!/usr/bin/env bash
# kill -9 of assay mid-run on the opensandbox backend (fake OpenSandbox
# server, fake OpenAI server stalling turn 3): the orphan sandbox stays
# on the server; a run kept in another directory leaves it alone; the
# resume beside it deletes it (its metadata names a dead assay) and
# continues in a new sandbox loaded from the persisted workspace: the
# recorded turns from the cache, the files written before the kill
# there, the outputs delivered. Then a sandbox that expires under a run
# (the fake reaps it, nothing renews it in time): the run ends at once,
# exit 3, saying so and offering resume, and the resume finishes it.
# Skipped (77) without bubblewrap.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
start_fake_os
# sandboxes on the server whose metadata names run $1
live() {
	$PY - "$OS_URL" "$1" <<'PY'
import http.client, json, sys
c = http.client.HTTPConnection(sys.argv[1], timeout=10)
c.request("GET", "/v1/sandboxes?pageSize=100")
items = json.loads(c.getresponse().read())["items"]
print(len([s for s in items if s["metadata"].get("assay.run") == sys.argv[2]]))
PY
}
requests() { fake_requests | tr -d ' '; }

cat >script.json <<'JSON'
{"turns": [
 {"text": "Step one.", "tool_calls": [{"name": "shell", "arguments": {"command": "mkdir -p output && echo one > output/one.txt && ln -s one.txt output/link.txt"}}]},
 {"text": "Step two.", "tool_calls": [{"name": "write_file", "arguments": {"path": "output/two.txt", "content": "two\n"}}]},
 {"text": "Step three, streamed slowly before the last command.", "tool_calls": [{"name": "shell", "arguments": {"command": "cat output/link.txt output/two.txt > output/three.txt && echo read: $(cat output/one.txt output/two.txt)"}}]},
 {"text": "Finished.", "tool_calls": []}
]}
JSON
start_fake script.json --fault 'stall@3:60'
export OPENAI_API_KEY=sk-resume-os
R=$T/run
tr=$R/transcript.jsonl
outs=(--output output/one.txt --output output/two.txt --output output/three.txt)
"$ASSAY" run --sandbox opensandbox --provider openai --base-url "$URL" --model fake-model \
	"${outs[@]}" --run-dir "$R" --out "$T/out" "make three files" </dev/null 2>run.err &
pid=$!
in_turn3() {
	[ "$(requests)" -ge 3 ] &&
		[ "$(jget "$tr" '(x[-1]["type"], x[-1].get("turn"))' 2>/dev/null)" = "('model_request', 3)" ]
}
for _ in $(seq 1200); do in_turn3 && break; sleep 0.05; done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
check "the run was killed during turn 3's request" \
	test "$(jget "$tr" '[(e["type"],e["turn"]) for e in x if e["type"] in ("model_request","assistant_message")][-1]')" = "('model_request', 3)"
check "kill -9: its sandbox is still on the server" test "$(live run)" -eq 1
check "the workspace was persisted after each call" ws_has "$R" output/two.txt
orphan=$($PY - "$OS_LOG" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("method") == "POST" and e.get("path") == "/v1/sandboxes":
        print(e.get("sandbox", "")); break
PY
)

# a run kept in another directory leaves it alone
mkdir -p "$T/elsewhere"
"$ASSAY" run --sandbox opensandbox --provider script --script "$SRC/tests/e2e/data/short.json" \
	--run-dir "$T/elsewhere/other" "hello" 2>"$T/other.stderr" || true
check "a run in another directory completes" \
	test "$(jget "$T/elsewhere/other/transcript.jsonl" 'x[-1]["status"]')" = completed
check "... and left the dead run's sandbox alone" test "$(live run)" -eq 1

# --- resume ---------------------------------------------------------
kill "$FAKE_PID" 2>/dev/null || true
wait "$FAKE_PID" 2>/dev/null || true
FAKE_PID=
start_fake script.json
set +e
"$ASSAY" resume "$R" --base-url "$URL" --out "$T/out" </dev/null 2>resume.err
code=$?
set -e
check "resume exits 0 (got $code)" test "$code" -eq 0
[ "$code" -eq 0 ] || cat resume.err
check "the resume deleted the orphan ($orphan)" \
	test "$(os_count DELETE "^/v1/sandboxes/$orphan\$")" -eq 1
check "... and said so" grep -q "deleted sandbox $orphan, left by a run whose assay is gone" "$R/assay.log"
check "the resume ran in a new sandbox" test "$(os_count POST '^/v1/sandboxes$')" -eq 3
check "resume used the recorded backend" \
	test "$(jget "$tr" '[e["sandbox"]["backend"] for e in x if e["type"]=="run_resume"]')" = "['opensandbox']"
check "turns 1 and 2 came from the cache" \
	test "$(jget "$tr" '[e["turn"] for e in x if e["type"]=="model_request" and e["cached"]]')" = "[1, 2]"
res=$(jget "$tr" '[e["content"] for e in x if e["type"]=="tool_result"][-1]')
check "turn 3's command read the files written before the kill (got: $res)" \
	grep -q "read: one two" <<<"$res"
check "... through the symbolic link the run made" cmp -s "$T/out/output/three.txt" - <<<"one
two"
check "the run completed" test "$(jget "$tr" 'x[-1]["status"]')" = completed
check "the assay log says the workspace was restored" grep -q "workspace restored from" "$R/assay.log"
check "nothing of the run left on the server" test "$(live run)" -eq 0

# --- a sandbox that expires under the run ------------------------------
# timeout 60 s nominal, really 3 s (--ttl-scale 0.05): the first renewal
# (20 s in) comes too late, the 10 s command is killed with the sandbox
start_fake_os --ttl-scale 0.05
echo '{"opensandbox": {"timeout_s": 60}}' >"$T/ttl.json"
cat >"$T/exp.json" <<'EOF'
{"turns": [
  {"text": "Write.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo kept > kept.txt"}}]},
  {"text": "Wait.", "tool_calls": [{"name": "shell", "arguments": {"command": "sleep 10; echo woke"}}]},
  {"text": "Write again.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo more > more.txt"}}]},
  {"text": "Done.", "tool_calls": []}
]}
EOF
set +e
"$ASSAY" run --config "$T/ttl.json" --sandbox opensandbox --provider script \
	--script "$T/exp.json" --run-dir "$T/exp" "expire" 2>"$T/exp.stderr"
code=$?
set -e
check "a sandbox expired under the run: exit 3 (got $code)" test "$code" -eq 3
check "... says it is gone and offers resume" \
	grep -q "is gone from .*assay resume $T/exp" "$T/exp.stderr"
check "... run_end failed" test "$(jget "$T/exp/transcript.jsonl" 'x[-1]["status"]')" = failed
check "... nothing ran after the loss" sh -c "! test -e '$T/exp/exec/call_2_0.stdout'"
check "the workspace before the loss is kept" ws_has "$T/exp" kept.txt
start_fake_os
set +e
"$ASSAY" resume "$T/exp" </dev/null 2>"$T/expres.stderr"
code=$?
set -e
check "its resume finishes the run (exit $code)" test "$code" -eq 0
check "... with the file of the first call" ws_has "$T/exp" kept.txt
check "... and the calls after the loss" ws_has "$T/exp" more.txt
finish
