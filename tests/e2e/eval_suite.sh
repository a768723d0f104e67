#!/usr/bin/env bash
# assay eval (issue 17, first part): the sample suite
# (sample-data/eval/suite.json: the anomaly analysis checked against the
# ground truth, a single numeric answer, a timestamp, a chart that must
# exist, a wrong answer that must fail its check, a written conclusion,
# a run over its turn budget) with the scripted model, -j 4, in ONE
# assay process: every result as the suite expects, each failure in its
# category, results.jsonl complete, each session's run dir a recorded
# run; then Ctrl-C in the middle stops every session (exit 130, no
# sandbox process left). Skipped (77) without bubblewrap or the
# sandbox's python libraries.
source "$(dirname "$0")/lib.bash"
need_bwrap
$PY -c 'import pandas, matplotlib' 2>/dev/null || skip "/usr/bin/python3 has no pandas/matplotlib"
cd "$T"
SUITE=$SRC/sample-data/eval/suite.json
E=$T/eval1

# children named assay that lived half a second or more while it ran:
# a fork per session would (a spawned helper is named assay only
# between its fork and its exec)
forked() {
	$PY - "$1" <<'PY'
import os, sys, time
parent, seen, long_lived = sys.argv[1], {}, set()
while os.path.exists(f"/proc/{parent}"):
    now = time.monotonic()
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as f:
                st = f.read()
        except OSError:
            continue
        comm, rest = st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 2:].split()
        if comm == "assay" and rest[1] == parent:
            seen.setdefault(pid, now)
            if now - seen[pid] >= 0.5:
                long_lived.add(pid)
    time.sleep(0.05)
print(len(long_lived))
PY
}
"$ASSAY" eval "$SUITE" -j 4 --dir "$E" 2>"$T/eval1.stderr" &
pid=$!
procs=$(forked $pid)
set +e
wait $pid
code=$?
set -e
check "assay eval exits 0 (got $code)" test "$code" -eq 0
check "one assay process ran every session (forks seen: $procs)" test "$procs" -eq 0
R=$E/results.jsonl
check "results.jsonl has a line per session (7)" test "$(wc -l <"$R")" -eq 7
res() { $PY - "$R" "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["task"] == sys.argv[2]:
        print("pass" if r["pass"] else "fail", r["category"] or "-")
PY
}
for t in anomalies missing-readings peak-hour daily-chart heat-wave; do
	check "$t passes" test "$(res $t)" = "pass -"
done
check "mean-wrong fails its check (the answer lacks the mean)" test "$(res mean-wrong)" = "fail check_failed"
check "over-budget fails in the budget category" test "$(res over-budget)" = "fail budget"
check "every result is what the suite expects" $PY - "$R" <<'PY'
import json, sys
bad = [r["task"] for r in map(json.loads, open(sys.argv[1]))
       if ("pass" if r["pass"] else "fail") != r.get("expect")]
sys.exit(1 if bad else 0)
PY
check "the anomaly check's reason is the check script's" \
	grep -q '"reason":"4 events found, all 4 true anomalies among them"' "$R"
check "the numeric check's reason names the answer" \
	grep -q '"reason":"missing readings: 6; the answer: 6 hourly' "$R"
check "each result names its run dir, a recorded run" $PY - "$R" <<'PY'
import json, os, sys
for r in map(json.loads, open(sys.argv[1])):
    tr = os.path.join(r["run_dir"], "transcript.jsonl")
    last = json.loads(open(tr).readlines()[-1])
    assert last["type"] == "run_end", tr
PY
check "a session's run can be exported" \
	"$ASSAY" export "$E/anomalies-script-r1" --format md -o "$T/anom.md"
check "the summary line: 5 of 7 passed" grep -Eq '^script +5/7 ' "$T/eval1.stderr"
check "one progress line per session" test "$(grep -c '^\[[0-9]/7\]' "$T/eval1.stderr")" -eq 7
check "the ground truth was the check's only (not in the agent's workspace)" \
	sh -c "! tar -tf '$E/anomalies-script-r1/workspace.tar.zst' 2>/dev/null | grep -q truth"

# --- --json, limits.sessions ---------------------------------------------
echo '{"limits": {"sessions": 2}}' >"$T/cap.json"
mkdir -p "$T/xdg/assay" && cp "$T/cap.json" "$T/xdg/assay/config.json"
XDG_CONFIG_HOME=$T/xdg "$ASSAY" eval "$SUITE" -j 6 --json --rerun --dir "$T/js" \
	>"$T/js.out" 2>"$T/js.stderr"
check "limits.sessions bounds -j (said so)" grep -q -- "-j 6 lowered to 2 (limits.sessions" "$T/js.stderr"
check "--json: every session's events on stdout, each naming its session" $PY - "$T/js.out" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
sessions = {e["session"] for e in ev}
assert len(sessions) == 7, sessions
ends = [e for e in ev if e["type"] == "run_end"]
assert len(ends) == 7, len(ends)
ids = [e["run_id"] for e in ev if e["type"] == "run_start"]
assert len(set(ids)) == 7, ids  # one process, seven distinct run ids
PY

# --- re-running: unchanged tasks cost nothing -----------------------------
cat >"$T/two.json" <<'EOF'
{"turns": [
  {"text": "Looking.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo 42"}}]},
  {"text": "The answer is 42.", "tool_calls": []}
]}
EOF
start_fake "$T/two.json"
# the model server is the user's to name (a suite's base_url is not
# applied: it would decide where the key goes)
export OPENAI_BASE_URL=$URL
mk_suite() { # mk_suite PROMPT_OF_TASK_B
	cat >"$T/s.json" <<EOF
{"defaults": {"provider": "openai", "model": "fake-model", "ask": "none"},
 "tasks": [
  {"name": "a", "prompt": "What is the answer?", "check": {"answer_contains": ["42"]}},
  {"name": "b", "prompt": "$1", "check": {"answer_contains": ["42"]}},
  {"name": "c", "prompt": "And again?", "check": {"answer_contains": ["43"]}}]}
EOF
}
mk_suite "Tell me the answer."
export OPENAI_API_KEY=sk-eval
"$ASSAY" eval "$T/s.json" -j 3 --dir "$T/re" 2>"$T/re1.stderr"
check "the first eval asks the model for every turn (6 requests)" test "$(fake_requests)" -eq 6
"$ASSAY" eval "$T/s.json" -j 3 --dir "$T/re" 2>"$T/re2.stderr"
check "the same suite again: 0 requests" test "$(fake_requests)" -eq 6
check "... every result kept" test "$(grep -c '"reused":true' "$T/re/results.jsonl")" -eq 3
check "... and said so" grep -q "3 unchanged since the last eval here" "$T/re2.stderr"
mk_suite "Tell me the answer, please."
"$ASSAY" eval "$T/s.json" -j 3 --dir "$T/re" 2>"$T/re3.stderr"
check "one task's prompt changed: only it runs again (2 requests)" test "$(fake_requests)" -eq 8
check "... its result is new, the others kept" \
	test "$($PY -c 'import json,sys; print(sorted((r["task"], r.get("reused", False)) for r in map(json.loads, open(sys.argv[1]))))' "$T/re/results.jsonl")" = \
	"[('a', True), ('b', False), ('c', True)]"
"$ASSAY" eval "$T/s.json" -j 3 --dir "$T/re" --rerun-failed 2>"$T/re4.stderr"
check "--rerun-failed runs only the failed task (c: 2 requests)" test "$(fake_requests)" -eq 10
check "... which still fails" grep -q '"task":"c","model":"fake-model","repeat":1,"pass":false' "$T/re/results.jsonl"

# --- a session whose sandbox cannot work, beside others ----------------
cat >"$T/crash.json" <<EOF
{"defaults": {"provider": "openai", "model": "fake-model", "ask": "none"},
 "tasks": [
  {"name": "fine", "prompt": "What is the answer?", "check": {"answer_contains": ["42"]}},
  {"name": "nosandbox", "prompt": "What is the answer?", "sandbox": "opensandbox",
   "check": {"answer_contains": ["42"]}}]}
EOF
set +e
# the OpenSandbox server too is the user's to name (nothing listens there)
OPEN_SANDBOX_DOMAIN=127.0.0.1:9 "$ASSAY" eval "$T/crash.json" -j 2 --dir "$T/crash" 2>"$T/crash.stderr"
code=$?
set -e
check "an eval with a broken sandbox still ends (exit $code)" test "$code" -eq 0
check "... that session fails as a tool error, saying why" \
	grep -q '"task":"nosandbox".*"pass":false,"reason":"the run failed (exit 3): opensandbox: cannot reach the server.*"category":"tool_error"' "$T/crash/results.jsonl"
check "... the other passes" grep -q '"task":"fine".*"pass":true' "$T/crash/results.jsonl"

# --- Ctrl-C stops every session ------------------------------------------
"$ASSAY" eval "$SUITE" -j 3 --dir "$T/eval2" 2>"$T/eval2.stderr" &
pid=$!
check "sessions are running, one has finished" wait_until 30 'test -s "$T/eval2/results.jsonl"'
kill -INT $pid
set +e
wait $pid
code=$?
set -e
check "Ctrl-C: exit 130 (got $code)" test "$code" -eq 130
check "Ctrl-C: said so" grep -q "interrupted: stopping every session" "$T/eval2.stderr"
check "Ctrl-C: no sandbox process left" wait_until 10 "! pgrep -f '$T/eval2' >/dev/null"
check "Ctrl-C: fewer than 7 sessions ran" test "$(wc -l <"$T/eval2/results.jsonl")" -lt 7
finished=$(grep -vc '"category":"interrupted"' "$T/eval2/results.jsonl" || true)
# the cut sessions that had recorded something (one cut while its sandbox
# was still starting left no run: it runs afresh)
cut=$($PY - "$T/eval2/results.jsonl" <<'PY'
import json, os, sys
print(sum(1 for r in map(json.loads, open(sys.argv[1]))
          if r["category"] == "interrupted"
          and os.path.exists(os.path.join(r["run_dir"], "transcript.jsonl"))))
PY
)
"$ASSAY" eval "$SUITE" -j 3 --dir "$T/eval2" 2>"$T/eval3.stderr"
# (a resumed session sees its cut call as cancelled, as `assay resume`
# does: the scripted model then goes on without that call's files, so
# only the sessions Ctrl-C did not cut must end as the suite expects)
check "the next eval finishes the rest: a result for each, as expected where not cut" \
	$PY - "$T/eval2" <<'PY'
import json, os, sys
rows = list(map(json.loads, open(sys.argv[1] + "/results.jsonl")))
assert len(rows) == 7, len(rows)
for r in rows:
    tr = os.path.join(r["run_dir"], "transcript.jsonl")
    resumed = any(json.loads(l)["type"] == "run_resume" for l in open(tr))
    assert resumed or ("pass" if r["pass"] else "fail") == r.get("expect"), r
PY
check "... resuming the $cut that Ctrl-C cut after they had recorded (run_resume in their records)" $PY - "$T/eval2" "$cut" <<'PY'
import glob, json, sys
n = 0
for tr in glob.glob(sys.argv[1] + "/*-r1/transcript.jsonl"):
    n += any(json.loads(l)["type"] == "run_resume" for l in open(tr))
assert n == int(sys.argv[2]), (n, sys.argv[2])
PY
check "... keeping the $finished that had finished before the Ctrl-C (at least 1)" \
	test "$(grep -c '"reused":true' "$T/eval2/results.jsonl" || true)" -eq "$finished" -a "$finished" -ge 1
finish
