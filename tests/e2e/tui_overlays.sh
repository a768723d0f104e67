#!/usr/bin/env bash
# The overlay stack of the TUI (src/tui/overlay.c), in tmux at 120x40
# with --step, a scripted model and the real local sandbox: one stack
# decides who gets a key, what is drawn on top and who owns the cursor.
# - a step pause has the keys and the cursor: the cursor is hidden,
#   not left blinking in the message box under the dialog;
# - F1 opens the help over it; the key that closes the help does
#   nothing else (the pause still waits);
# - a risky call's Approval comes before the pause of its execution;
#   Ctrl-Q over it asks to quit, n goes back to it, unanswered;
# - the step editor owns the cursor (in its field), and Alt-Enter
#   there is a new line in the field, not in the message box;
# - x ends the run, Ctrl-Q quits.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"

$PY - "$T/s.json" <<'PYEND'
import json, sys
sh = lambda c: {"name": "shell", "arguments": {"command": c}}
turns = [
    {"text": "turn one", "tool_calls": [sh("rm -f gone.txt; echo one-out")]},
    {"text": "All done.", "tool_calls": []},
]
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PYEND
RUN=$T/run
TR=$RUN/transcript.jsonl
tui_start 120 40 -- --provider script --script "$T/s.json" --step \
	--run-dir "$RUN" "go"
REQ='Step: before the model request'
EXE='Step: before the execution'
cursor() { tm display -p -t t '#{cursor_flag} #{cursor_y} #{cursor_x}'; }
# the message box's first text row at 120x40, and its text
BOX='in_region 37 0 37 119'

check "--step pauses before the first request" wait_for "$REQ" 20
# (the frame that draws the dialog sets the cursor: until it shows so)
check "the pause has the cursor: hidden" wait_until 5 'test "$(cursor | cut -d" " -f1)" = 0'
keys F1
check "F1: the help over the pause" wait_for 'any key closes this help' 5
keys n
check "n closes the help" wait_gone 'any key closes this help' 5
check "and does nothing else: the pause still waits" screen_has "$REQ"
check "nothing was asked of the model" \
	test "$(jget "$TR" "len([e for e in x if e['type'] == 'model_request'])")" = 0
keys n
check "n sends it; the risky call asks first" wait_for '─ Approval ─' 15
check "the pause before its execution waits behind it" \
	eval "! screen_has '$EXE'"
keys C-q
check "Ctrl-Q over the Approval asks to quit" \
	wait_for 'still working. Stop the run and quit\?' 5
keys n
check "n: back to the Approval" wait_gone 'Stop the run and quit' 5
check "still unanswered" screen_has '─ Approval ─'
keys y
check "approved: the pause before the execution" wait_for "$EXE" 10
keys e
check "e opens the step editor" wait_for '> rm -f gone\.txt; echo one-out' 5
row=$(row_of '> rm -f gone.txt')
check "the editor owns the cursor: shown, in its field (row $row)" \
	wait_until 5 'test "$(cursor | cut -d" " -f1,2)" = "1 $row"'
echo "(cursor: $(cursor))"
keys M-Enter
type_text 'echo two-out'
check "Alt-Enter is a new line in the field" wait_for '│   echo two-out +│' 5
check "the message box is still empty" $BOX '^│> +│$'
keys Enter
check "Enter runs the edited command" wait_for "$REQ" 15
check "exec_start has both lines" \
	test "$(jget "$TR" "[e['command'] for e in x if e['type'] == 'exec_start'][0]")" = "rm -f gone.txt; echo one-out
echo two-out"
keys x
check "x ends the run" wait_for 'run interrupted \(exit 130\)' 15
keys C-q
check "assay exits with 130" test "$(wait_exit 20)" = 130
check "no process left behind" test -z "$(leftovers)"
finish
