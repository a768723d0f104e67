#!/usr/bin/env bash
# Fork from assay replay, in tmux at 120x40: f at the user message opens
# the Fork editor with its text; Enter makes a new run (its own run dir,
# run_start says where it came from) that re-executes up to there and
# goes on live with the edited message, in the workbench; f at a tool
# result does the same with the edited output (the request before it
# comes from the cache). The original run is untouched.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"

$PY - "$T/s.json" <<'PYEND'
import json, sys
sh = lambda c: {"name": "shell", "arguments": {"command": c}}
turns = [
    {"text": "turn one", "tool_calls": [sh("echo one > one.txt; echo out-one")]},
    {"text": "turn two", "tool_calls": [sh("echo two > two.txt; echo out-two")]},
    {"text": "All done.", "tool_calls": []},
]
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PYEND
RUN=$T/run
TR=$RUN/transcript.jsonl
ASSAY_SCRIPT_DELAY_MS=0 "$ASSAY" run --provider script --script "$T/s.json" \
	--ask none --run-dir "$RUN" "make files" >"$T/run.out" 2>&1
check "the recorded run completed" test -s "$TR"
N=$(wc -l <"$TR")
step_of() { jget "$TR" "[i + 1 for i, e in enumerate(x) if $1][0]"; }
USER=$(step_of "e['type'] == 'user_message'")
RES1=$(step_of "e['type'] == 'tool_result'")
snapshot() { find "$RUN" -printf '%p %s %T@\n' | sort; md5sum "$TR"; }
snapshot >"$T/before"

tui_start 120 40 -- replay "$RUN"
check "replay is up" wait_for "replay 1/$N" 10
keys f
check "f where there is nothing to fork says so" \
	wait_for 'f forks at a tool result or a user message' 5
keys g
type_text "$USER"
keys Enter
wait_for "replay $USER/$N" 5 >/dev/null
keys f
check "f at the user message opens the Fork editor" wait_for '─ Fork ─' 5
check "with its text" screen_has '> make files +│'
check "and says how to submit" screen_has 'Enter forks  Alt-Enter new line'
keys Escape
check "Esc closes it" wait_gone '─ Fork ─' 5
keys f
wait_for '─ Fork ─' 5 >/dev/null
keys C-u
type_text 'make OTHER files'
check "the edit is typed" wait_for '> make OTHER files +│' 5
keys Enter
check "the workbench switches to the new run" wait_for 'you: make OTHER files' 20
check "which goes on live to its end" wait_for 'assistant: All done\.' 20
check "the message box is back" screen_has 'Enter sends'
keys C-q
check "assay exits with 0" test "$(wait_exit 20)" = 0
NEW=$RUN-re1
check "the fork has its own run dir" test -s "$NEW/transcript.jsonl"
check "its transcript has the edited message" \
	test "$(jget "$NEW/transcript.jsonl" "[e['text'] for e in x if e['type'] == 'user_message']")" = "['make OTHER files']"
check "run_start says where it was forked from" \
	test "$(jget "$NEW/transcript.jsonl" "(x[0]['forked_from']['fork_at'], x[0]['forked_from']['replace'])")" = "($USER, 'make OTHER files')"
check "its own workspace" test -e "$NEW/workspace/one.txt"
snapshot >"$T/after"
check "the original run is untouched" cmp -s "$T/before" "$T/after"

# a fork at a tool result: the edited output goes to the model
tui_start 120 40 -- replay "$RUN"
wait_for "replay 1/$N" 10 >/dev/null
keys g
type_text "$RES1"
keys Enter
wait_for "replay $RES1/$N" 5 >/dev/null
keys f
check "f at a tool result opens the editor with its content" \
	wait_for '> out-one' 5
check "naming the call" screen_has 'the result of call_0_0 shell'
keys C-u
type_text 'FORKED-OUTPUT'
keys Enter
check "the workbench switches to the new run, which goes on" \
	wait_for 'assistant: All done\.' 20
keys C-q
check "assay exits with 0" test "$(wait_exit 20)" = 0
NEW2=$RUN-re2
check "a second fork, a second run dir" test -s "$NEW2/transcript.jsonl"
check "the tool result the model got is the edited one" \
	test "$(jget "$NEW2/transcript.jsonl" "[e['content'] for e in x if e['type'] == 'tool_result'][0]")" = FORKED-OUTPUT
check "the request before it came from the cache" \
	test "$(jget "$NEW2/transcript.jsonl" "[e['cached'] for e in x if e['type'] == 'model_request'][0]")" = True
snapshot >"$T/after2"
check "the original run is still untouched" cmp -s "$T/before" "$T/after2"

# a fork of a run dir someone else made follows resume's rules: its
# recorded foreign URL gets nothing (not the key), the fork is refused
cat >"$T/listen.py" <<'PY2'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        open(sys.argv[1], "ab").write(str(self.headers).encode())
        self.send_response(500); self.end_headers()
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[2], "w").write(str(s.server_port))
s.serve_forever()
PY2
$PY "$T/listen.py" "$T/evil.log" "$T/evil.port" &
EVIL_PID=$!
for _ in $(seq 100); do [ -s "$T/evil.port" ] && break; sleep 0.05; done
EVIL=http://127.0.0.1:$(cat "$T/evil.port")/v1
cp -a "$RUN" "$T/hrun"
$PY - "$T/hrun/transcript.jsonl" "$EVIL" <<'PY2'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
ev[0].update(provider="openai", model="fake-model", base_url=sys.argv[2])
open(sys.argv[1], "w").write("".join(json.dumps(e) + "\n" for e in ev))
PY2
tui_start 120 40 OPENAI_API_KEY=sk-fork-secret XDG_CONFIG_HOME=$T/xdg -- replay "$T/hrun"
wait_for "replay 1/$N" 10 >/dev/null
keys g
type_text "$USER"
keys Enter
wait_for "replay $USER/$N" 5 >/dev/null
keys f
wait_for '─ Fork ─' 5 >/dev/null
keys Enter
check "a fork of a run recorded against a foreign URL exits 2" test "$(wait_exit 20)" = 2
check "... saying to pass --base-url" wait_joined "pass --base-url $EVIL" 5
check "... and nothing reached that URL" test ! -s "$T/evil.log"
kill "$EVIL_PID" 2>/dev/null || true

echo "passed $PASSED, failed $FAILED"
[ "$FAILED" = 0 ]
