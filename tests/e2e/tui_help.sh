#!/usr/bin/env bash
# The help scrolls when the terminal is too short for it (80x24 has
# room for 20 of its rows): j/k, arrows, PgUp/PgDn, Space and Home/End
# (g/G) move it, a footer says which rows show, any other key closes it. On a tall
# terminal it all shows and any key, j too, closes it. Skipped (77)
# without bubblewrap or tmux.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"
S=$SRC/tests/e2e/data/short.json
not_shown() { ! screen_has "$1"; }
tui_start 80 24 -- --provider script --script "$S" hi
check "the run waits" wait_for 'waiting for you' 30
keys F1
check "80x24: the help opens, its first lines" wait_for 'Tab / Shift-Tab +move focus' 5
check "... the footer says which lines show and how to scroll" \
	screen_has 'lines 1-20 of [0-9]+: j/k, PgUp/PgDn, Home/End scroll; other keys close'
check "... its last line is not shown yet" not_shown '\? or F1 +this help'
keys NPage
check "PgDn: the last lines" wait_for '\? or F1 +this help' 5
check "... the footer follows" screen_has 'lines [0-9]+-([0-9]+) of \1:'
check "... the first line scrolled away" not_shown 'Tab / Shift-Tab'
# (each wait names the new first line: the footer is on the screen
# before the key takes effect too)
top=$(tm capture-pane -p -t t | grep -oE 'lines [0-9]+' | grep -oE '[0-9]+')
keys k
check "k: one line back (from $top)" wait_for "lines $((top - 1))-" 5
keys j
check "j: one line on again" wait_for "lines $top-" 5
keys End
check "End: the last rows" wait_for 'lines [0-9]+-([0-9]+) of \1:' 5
keys Home
check "Home: the first rows again" wait_for 'lines 1-20 of' 5
keys x
check "any other key closes it" wait_gone '─ Keys ─' 5
check "... and does nothing else (the run still waits)" screen_has 'waiting for you'
keys C-q
check "quits" test "$(wait_exit 20)" = 0
tui_start 120 45 -- --provider script --script "$S" hi
check "120x45: the run waits" wait_for 'waiting for you' 30
keys F1
check "the whole help shows" wait_for 'any key closes this help' 5
check "... its first line" screen_has 'Tab / Shift-Tab +move focus'
check "... and its last" screen_has '\? or F1 +this help'
keys j
check "j closes it when nothing is hidden" wait_gone '─ Keys ─' 5
keys C-q
wait_exit 20 >/dev/null
finish
