#!/usr/bin/env bash
# Step mode in the TUI, in tmux at 120x40 with a scripted model and the
# real local sandbox: --step pauses before the request with the turn,
# the message count, the tools and the last message; n sends it; the
# pause before the execution shows the command; n runs it; e edits it
# and the edited command runs (its output in the Tools pane); a risky
# call asks for approval first, then pauses; k skips (the tool result
# says so); x ends the run. Without --step, s turns step mode on during
# a run and the next request pauses.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"

$PY - "$T/s.json" <<'PYEND'
import json, sys
sh = lambda c: {"name": "shell", "arguments": {"command": c}}
turns = [
    {"text": "turn one", "tool_calls": [sh("echo first-ran > first.txt; echo first-out")]},
    {"text": "turn two", "tool_calls": [sh("echo second > second.txt; echo second-out")]},
    {"text": "turn three", "tool_calls": [sh("rm -f first.txt; echo skipped > skipped.txt")]},
    {"text": "turn four", "tool_calls": [sh("echo never > never.txt")]},
    {"text": "All done.", "tool_calls": []},
]
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PYEND
RUN=$T/run
TR=$RUN/transcript.jsonl
tui_start 120 40 -- --provider script --script "$T/s.json" --step \
	--run-dir "$RUN" "make it"
REQ='Step: before the model request'
EXE='Step: before the execution'
TOOLS='in_region 0 48 35 91'
check "--step pauses before the first request" wait_for "$REQ" 20
check "the turn" screen_has '│ turn: +1 +│'
check "the message count" screen_has '│ messages: +1 +│'
check "an estimate of input tokens" screen_has '│ input: +~[0-9]+ \(estimated\)'
check "the tools offered" screen_has 'tools: +shell, python, write_file, read_file, list_files'
check "the last message in full" screen_has 'the last message \(user\), in full:'
check "its text" screen_has '│   make it +│'
check "the choices" screen_has '\[n\] send it  \[x\] end the run'
check "the status bar says STEP" in_region 39 0 39 119 'paused at a breakpoint \| STEP \|'
check "nothing was asked of the model yet" \
	test "$(jget "$TR" "len([e for e in x if e['type'] == 'model_request'])")" = 0
keys n
check "n sends it; the pause before the execution" wait_for "$EXE" 10
check "shows the command" screen_has '│   echo first-ran > first.txt; echo first-out +│'
check "with its choices" screen_has '\[n\] run it  \[e\] edit it first  \[k\] skip it  \[x\] end the run'
check "it has not run" test ! -e "$RUN/workspace/first.txt"
keys n
check "n runs it: the next request pauses" wait_for '│ turn: +2 +│' 10
check "the output in the Tools pane" $TOOLS 'first-out'
check "three messages now" screen_has '│ messages: +3 +│'
check "the last one is the tool result" screen_has 'the last message \(tool\), in full:'
keys n
check "turn 2's command pauses" wait_for 'echo second > second.txt; echo second-out +│' 10
keys e
check "e opens the field, prefilled" wait_for '> echo second > second\.txt; echo second-out' 5
keys C-u
type_text 'echo EDITED-RAN > edited.txt; echo edited-out'
check "the edit is typed" wait_for '> echo EDITED-RAN > edited\.txt; echo edited-out' 5
keys Enter
check "Enter runs the edit: the next request pauses" wait_for '│ turn: +3 +│' 10
check "the edited command's output in the Tools pane" $TOOLS 'edited-out'
check "it ran instead of the model's" \
	eval 'test -e "$RUN/workspace/edited.txt" && test ! -e "$RUN/workspace/second.txt"'
check "exec_start has the edited command" \
	test "$(jget "$TR" "[e['command'] for e in x if e['type'] == 'exec_start'][1]")" = \
	'echo EDITED-RAN > edited.txt; echo edited-out'
keys n
check "a risky call asks for approval first" wait_for '─ Approval ─' 10
check "the step pause waits behind it" eval "! screen_has '$EXE'"
keys y
check "approved: then the pause before it runs" wait_for "$EXE" 10
check "for that command" screen_has 'rm -f first.txt; echo skipped > skipped.txt'
keys k
check "k skips it: the next request pauses" wait_for '│ turn: +4 +│' 10
check "the tool result says it was skipped" $TOOLS 'skipped by the user'
check "and it did not run" \
	eval 'test ! -e "$RUN/workspace/skipped.txt" && test -e "$RUN/workspace/first.txt"'
keys x
check "x ends the run" wait_for 'run interrupted \(exit 130\)' 15
check "no further request was made" \
	test "$(jget "$TR" "len([e for e in x if e['type'] == 'model_request'])")" = 3
check "never.txt never made" test ! -e "$RUN/workspace/never.txt"
keys C-q
check "assay exits with 130" test "$(wait_exit 20)" = 130

# s during a run: step mode on, the next request pauses. The call runs
# until the test has seen step mode on and lets it end (a file in the
# workspace), so the request after it cannot come first.
$PY - "$T/s2.json" <<'PYEND'
import json, sys
sh = lambda c: {"name": "shell", "arguments": {"command": c}}
wait = "echo waiting-for-go; for i in $(seq 1200); do [ -e go ] && break; sleep 0.05; done; echo slept"
turns = [
    {"text": "slow one", "tool_calls": [sh(wait)]},
    {"text": "All done.", "tool_calls": []},
]
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PYEND
RUN2=$T/run2
tui_start 120 40 -- --provider script --script "$T/s2.json" \
	--run-dir "$RUN2" "go"
check "a run without --step: the call runs" wait_for '│ waiting-for-go' 20
check "step:off in the status bar" in_region 39 0 39 119 'step:off'
keys Tab
keys s
check "s turns step mode on" wait_for 'step mode on' 5
check "STEP in the status bar" in_region 39 0 39 119 '\| STEP \|'
check "the call still runs: one request so far" \
	test "$(jget "$RUN2/transcript.jsonl" "len([e for e in x if e['type'] == 'model_request'])")" = 1
touch "$RUN2/workspace/go"
check "the call ends" wait_for '│ slept' 15
check "the next request pauses" wait_for "$REQ" 15
check "it is turn 2" screen_has '│ turn: +2 +│'
keys s
check "s again: step mode off (the pause still waits)" wait_for 'step mode off' 5
keys n
check "n sends it and the run goes on without pausing" \
	wait_for 'assistant: All done\.' 15
keys C-q
check "assay exits with 0" test "$(wait_exit 20)" = 0

echo "passed $PASSED, failed $FAILED"
[ "$FAILED" = 0 ]
