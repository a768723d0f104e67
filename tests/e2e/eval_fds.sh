#!/usr/bin/env bash
# assay eval and the descriptor limit (issue 37, item 4): -j far above
# what `ulimit -n 64` (soft and hard: nothing to raise) allows is
# lowered, said so with how to raise the limit, and every session
# passes; a limit too low for even one session fails each task with a
# reason that names the limit (never an empty one); a low soft limit
# under a higher hard one is raised (seen in /proc/PID/limits of the
# running eval), so -j is not lowered, while the sandboxed commands
# still get the soft limit their user set. Skipped (77) without
# bubblewrap.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"

cat >"$T/answer.json" <<'EOF'
{"turns": [
  {"text": "Looking.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo soft $(ulimit -Sn) hard $(ulimit -Hn)"}}]},
  {"text": "The answer is 42.", "tool_calls": []}
]}
EOF
$PY - "$T/suite.json" "$T/answer.json" <<'PY'
import json, sys
tasks = [{"name": f"t{i}", "prompt": "What is the answer?",
          "check": {"answer_contains": ["42"]}} for i in range(12)]
json.dump({"defaults": {"provider": "script", "script": sys.argv[2], "ask": "none"},
           "tasks": tasks}, open(sys.argv[1], "w"))
PY

# every result's task, pass, reason and category; and each run's
# trouble: an error event or a command that could not run
results() {
	$PY - "$1" <<'PY'
import json, os, sys
for r in map(json.loads, open(sys.argv[1])):
    trouble = []
    tr = os.path.join(r["run_dir"], "transcript.jsonl")
    if os.path.exists(tr):
        for e in map(json.loads, open(tr)):
            if e["type"] == "error" or (e["type"] == "exec_end" and e.get("error")):
                trouble.append(e.get("message") or e.get("error"))
    print(json.dumps({"task": r["task"], "pass": r["pass"], "reason": r["reason"],
                      "category": r["category"], "trouble": trouble}))
PY
}

# --- -j 16 under 64 descriptors, soft and hard ---------------------------
set +e
(ulimit -n 64 && "$ASSAY" eval "$T/suite.json" -j 16 --dir "$T/low") 2>"$T/low.stderr"
code=$?
set -e
results "$T/low/results.jsonl" >"$T/low.rows" 2>/dev/null || true
check "ulimit -n 64, -j 16: the eval exits 0 (got $code)" test "$code" -eq 0
check "... a result for each of the 12 tasks" test "$(wc -l <"$T/low.rows")" -eq 12
check "... every one passes" test "$(grep -c '"pass": true' "$T/low.rows")" -eq 12
check "... with nothing running out on the way (no error, every command ran)" \
	test "$(grep -c '"trouble": \[\]' "$T/low.rows")" -eq 12
check "... the eval said how far it lowered -j, why, and how to raise the limit" \
	grep -Eq -- '-j 16 lowered to [1-9][0-9]* \(descriptors: 64 allowed, .*`ulimit -n [0-9]+` before assay eval lets -j 16 run' "$T/low.stderr"
check "... and ran that many at a time" \
	grep -Eq 'sessions .*, [1-9][0-9]* at a time' "$T/low.stderr"
sed -n 1p "$T/low.stderr"

# --- too few for even one session: each failure says why ------------------
set +e
(ulimit -n 11 && "$ASSAY" eval "$T/suite.json" -j 4 --dir "$T/none") 2>"$T/none.stderr"
set -e
results "$T/none/results.jsonl" >"$T/none.rows" 2>/dev/null || true
check "ulimit -n 11: a result for each of the 12 tasks" test "$(wc -l <"$T/none.rows")" -eq 12
check "... -j lowered to 1, saying even one may run out" \
	grep -q -- '-j 4 lowered to 1 (.*even one may run out' "$T/none.stderr"
check "... no failure without a reason, each naming the limit and ulimit -n" $PY - "$T/none.rows" <<'PY'
import json, sys
rows = list(map(json.loads, open(sys.argv[1])))
failed = [r for r in rows if not r["pass"]]
assert failed, "nothing failed under ulimit -n 11"
for r in failed:
    assert "out of descriptors: assay may hold 11 at once" in r["reason"], r
    assert "ulimit -n" in r["reason"], r
PY
head -c 600 "$T/none.rows"
echo

# --- a low soft limit under a higher hard one is raised -------------------
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt 1024 ]; then
	echo "(the hard limit here is $hard: the raise is not tested)"
	finish
	exit
fi
[ "$hard" = unlimited ] || [ "$hard" -gt 65536 ] && want=65536 || want=$hard
# the soft limit of the running eval, read from /proc/PID/limits
soft_of() {
	$PY - "$1" <<'PY'
import sys, time
pid, seen = sys.argv[1], ""
for _ in range(2000):
    try:
        for line in open(f"/proc/{pid}/limits"):
            if line.startswith("Max open files"):
                seen = line.split()[3]
    except OSError:
        break
    if seen and seen != "64":
        break
    time.sleep(0.005)
print(seen)
PY
}
(ulimit -Sn 64 && exec "$ASSAY" eval "$T/suite.json" -j 16 --dir "$T/raised" 2>"$T/raised.stderr") &
pid=$!
soft=$(soft_of $pid)
set +e
wait $pid
code=$?
set -e
results "$T/raised/results.jsonl" >"$T/raised.rows" 2>/dev/null || true
check "ulimit -Sn 64 (hard $hard): the eval raised its soft limit to $want (saw ${soft:-nothing})" \
	test "$soft" = "$want"
check "... so -j 16 stays (not lowered)" sh -c "! grep -q 'lowered' '$T/raised.stderr' && grep -q '16 at a time' '$T/raised.stderr'"
check "... exit 0 (got $code), all 12 pass with nothing running out" \
	test "$code" -eq 0 -a "$(grep -c '"pass": true, .*"trouble": \[\]' "$T/raised.rows")" -eq 12
check "... while each sandboxed command still had the soft limit its user set (64)" \
	sh -c "cat '$T'/raised/*/exec/*.stdout | grep -c '^soft 64 hard $hard\$' | grep -qx 12"
finish
