#!/usr/bin/env bash
# A run dir is locked (run.lock, flock) while a session writes it:
# resuming a run that is still running is refused (exit 2, "run is in
# use (pid N)") and so is a new run into its dir, so two runs never mix
# in one transcript; once the run has ended (even killed) the lock is
# gone and resume goes on.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
cat >script.json <<'JSON'
{"turns": [
 {"text": "One.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo one >> one.txt"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
# request 2 sends its first event, then stalls
start_fake script.json --fault 'stall@2:60'
export OPENAI_API_KEY=sk-lock XDG_CONFIG_HOME=$T/xdg
unset OPENAI_BASE_URL
"$ASSAY" run --provider openai --base-url "$URL" --model fake-model --ask none \
	--run-dir "$T/run" --out "$T/out" "write one" 2>run.err &
pid=$!
tr=$T/run/transcript.jsonl
# inside turn 2's request: the server has it (and stalls), the record's
# last event is its model_request (nothing more comes while it stalls)
in_turn2() {
	[ "$(fake_requests)" -ge 2 ] &&
		[ "$(jget "$tr" '(x[-1]["type"], x[-1].get("turn"))' 2>/dev/null)" = "('model_request', 2)" ]
}
for _ in $(seq 600); do in_turn2 && break; sleep 0.05; done
check "the run is inside turn 2's request" in_turn2
sum=$(md5sum <"$tr")
set +e
"$ASSAY" resume "$T/run" --base-url "$URL" </dev/null >r1.out 2>r1.err
code=$?
set -e
check "resume of a running run exits 2 (got $code)" test "$code" -eq 2
check "... saying it is in use, by which pid" grep -q "run is in use (pid $pid)" r1.err
set +e
"$ASSAY" run --provider openai --base-url "$URL" --model fake-model --ask none \
	--run-dir "$T/run" "again" </dev/null >r2.out 2>r2.err
code=$?
set -e
check "a new run into its dir is refused too (got $code)" test "$code" -ne 0
check "... saying why" grep -q "run is in use (pid $pid)" r2.err
check "the running run's transcript was not touched" test "$(md5sum <"$tr")" = "$sum"
check "its command ran once" test "$(cat "$T/run/workspace/one.txt")" = one
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
# a sandbox of the killed run (its bwrap binds this test's own run dir)
# would hold the lock's file open: let it go first
sandbox_left() { ps -eo stat=,args= | grep -v '^Z' | grep bwrap | grep -q -- "--bind $T/run/workspace "; }
for _ in $(seq 200); do sandbox_left || break; sleep 0.05; done
kill "$FAKE_PID" 2>/dev/null || true
wait "$FAKE_PID" 2>/dev/null || true
FAKE_PID=
start_fake script.json
set +e
"$ASSAY" resume "$T/run" --base-url "$URL" --out "$T/out" </dev/null >r3.out 2>r3.err
code=$?
set -e
check "once it was killed, resume goes on (got $code)" test "$code" -eq 0
check "... to the end" test "$(jget "$tr" 'x[-1]["status"]')" = completed
check "... the command still ran once" test "$(cat "$T/run/workspace/one.txt")" = one
finish
