#!/usr/bin/env bash
# The message box's history across runs, in tmux at 120x40: what a run
# sent from the box comes back with Up in the next run in the same
# project, and Ctrl-R finds it (readline's reverse-i-search: type to
# narrow, Enter takes it, Esc gives the draft back); a run in another
# directory sees none of it. The file ($XDG_STATE_HOME/assay/history)
# is 0600 and holds neither a secret-looking message nor what was typed
# in the Approval dialog's feedback field, nor the command line's prompt.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap

HIST=$XDG_STATE_HOME/assay/history
# the input box: the last rows above the status bar
box_has() { in_region 30 0 38 119 "$1"; }
screen_lacks() { ! screen_has "$1"; }

# --- run 1: messages sent from the box, a secret, a dialog's field
$PY - "$T/s1.json" <<'EOF'
import json, sys
say = lambda t: {"text": t, "tool_calls": []}
json.dump({"turns": [
    say("Ready."), say("Plotted."), say("Two lines."), say("Noted."),
    {"text": "Cleaning.", "tool_calls": [
        {"name": "shell", "arguments": {"command": "rm -rf keep"}}]},
    say("All done.")]}, open(sys.argv[1], "w"))
EOF
tui_start 120 40 -- --provider script --script "$T/s1.json" \
	--run-dir "$T/run1" "from the command line"
check "run 1 waits for a message" wait_for 'assistant: Ready\.' 20
type_text "plot the energy per building"
keys Enter
check "a message sent from the box" wait_for 'assistant: Plotted\.' 10
type_text "line A"
keys C-j
type_text "line B"
keys Enter
check "a message of two lines" wait_for 'assistant: Two lines\.' 10
type_text "the db password=hunter22xyz please"
keys Enter
check "a secret-looking message is sent all the same" wait_for 'assistant: Noted\.' 10
type_text "clean up"
keys Enter
check "rm -rf asks in the Approval dialog" wait_for 'deny with feedback' 20
keys f
check "its feedback field" wait_for 'feedback for the model, then Enter' 10
type_text "zebra feedback typed in a dialog"
keys Enter
check "the run goes on" wait_for 'assistant: All done\.' 10
keys C-q
check "run 1 quits" test "$(wait_exit 20)" = 0

check "the history file is there" test -f "$HIST"
check "it is 0600" test "$(stat -c %a "$HIST")" = 600
ROOT=$(realpath "$T")
check "it holds the box's messages, whole, tagged with the project" \
	test "$(jget "$HIST" '[(e["project"], e["text"]) for e in x]')" = \
	"[('$ROOT', 'plot the energy per building'), ('$ROOT', 'line A\\nline B'), ('$ROOT', 'clean up')]"
file_lacks() { ! grep -q -- "$1" "$HIST"; }
check "not the secret-looking one" file_lacks hunter22
check "not the dialog's feedback" file_lacks zebra
check "not the command line's prompt" file_lacks 'from the command line'

# --- run 2, the same project: Up and Ctrl-R reach run 1's messages
$PY -c 'import json; print(json.dumps({"turns": [{"text": "Hello again %d." % i, "tool_calls": []} for i in range(4)]}))' >"$T/s2.json"
tui_start 120 40 -- --provider script --script "$T/s2.json" \
	--run-dir "$T/run2" "second run"
check "run 2 waits for a message" wait_for 'assistant: Hello again 0\.' 20
keys Up
check "Up: run 1's newest message" wait_for '^│> clean up +│' 5
keys Up
check "Up again: the message of two lines, whole" wait_for '^│  line B +│' 5
check "its first line" box_has '^│> line A +│'
keys Up Up # to its first line, then the message before it
check "and the one before it" wait_for '^│> plot the energy per building +│' 5
check "the secret-looking message is not among them" screen_lacks hunter22
keys C-u
check "the box is empty again" wait_for '^│> +│' 5
keys C-r
check "Ctrl-R: the search prompt" wait_for "\(reverse-i-search\)'': " 5
type_text "ener"
check "typing finds the message" \
	wait_for "\(reverse-i-search\)'ener': plot the energy per building" 5
keys Enter
check "Enter takes it into the box" wait_for '^│> plot the energy per building +│' 5
check "the search prompt is gone" screen_lacks reverse-i-search
keys Enter
check "and Enter sends it" wait_for 'assistant: Hello again 1\.' 10
type_text "draft"
keys C-r
type_text "lin"
check "another search" wait_for "\(reverse-i-search\)'lin': line A" 5
keys C-r
check "Ctrl-R again: nothing older holds it" wait_for "\(failed reverse-i-search\)'lin': line A" 5
keys Escape
check "Esc gives the draft back" wait_for '^│> draft +│' 5
keys C-u C-r
type_text "zebra"
check "the dialog's feedback is not found" wait_for "\(failed reverse-i-search\)'zebra': " 5
keys C-g
check "Ctrl-G cancels too" wait_for '^│> +│' 5
type_text "draft2"
keys C-r
type_text "line"
check "a search again" wait_for "\(reverse-i-search\)'line': line" 5
keys C-c
check "Ctrl-C cancels it: the draft back" wait_for '^│> draft2 +│' 5
check "... and the prompt gone" screen_lacks reverse-i-search
check "... nothing else (no quit armed)" screen_lacks 'Ctrl-C again to quit'
keys C-u C-q
check "run 2 quits" test "$(wait_exit 20)" = 0
check "the message sent again is not kept twice in a row" \
	test "$(grep -c 'plot the energy per building' "$HIST")" = 2

# --- run 3, another project directory: none of it
TOP=$T
T=$TOP/elsewhere
mkdir -p "$T"
cp "$TOP/tmux.conf" "$TOP/subreaper.py" "$T/"
tui_start 120 40 -- --provider script --script "$TOP/s2.json" \
	--run-dir "$T/run3" "third run"
check "run 3 waits for a message" wait_for 'assistant: Hello again 0\.' 20
keys Up
type_text x # after Up, in order: an empty box, or Up brought something
check "Up finds nothing of the other project" wait_for '^│> x +│' 5
keys C-u
keys C-r
type_text "ener"
check "nor does Ctrl-R" wait_for "\(failed reverse-i-search\)'ener': " 5
keys Escape C-q
check "run 3 quits" test "$(wait_exit 20)" = 0
T=$TOP

finish
