#!/usr/bin/env bash
# assay eval on a terminal (tmux): below the progress lines, a table of
# the sessions under way (state, turn, tokens, cost, elapsed) redrawn in
# place while they run; gone when the eval ends, leaving the progress
# lines, the summary and the report's path; without a terminal no table
# at all (the other eval tests read stderr as a file). Skipped (77)
# without bubblewrap, tmux or the sandbox's python libraries.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
$PY -c 'import pandas, matplotlib' 2>/dev/null || skip "/usr/bin/python3 has no pandas/matplotlib"
cd "$T"
SUITE=$SRC/sample-data/eval/suite.json
tui_start 120 40 -- eval "$SUITE" -j 3 --dir "$T/lv"
check "the table heads the sessions under way" wait_for '^[0-9] of 7 done, [0-9] passed, [0-9] running' 30
check "... a row per running session: state, turn, tokens, cost, time" \
	wait_for '^[> ] anomalies x script r1 +(running|checking) +turn [0-9]+ +[0-9]+ tok +\$0\.0000 +[0-9.]+ s' 30
check "... under the progress lines" wait_for '^\[1/7\] ' 30
check "the eval ends (exit 0)" test "$(wait_exit 60)" = 0
no_table() { ! screen_has ' of 7 done'; }
no_rows() { ! screen_has '^[> ] .* r1 +(running|checking|asking) '; }
check "the table is gone at the end" no_table
check "... no session row left on the screen" no_rows
check "the seven progress lines stay" test "$(screen | grep -c '^\[[0-9]/7\] ')" -eq 7
check "... with the summary" screen_has '^script +5/7 '
check "... and the report" screen_has "^report: $T/lv/report.html"
# without a terminal: no table, no escape sequence
"$ASSAY" eval "$SUITE" -j 3 --dir "$T/lv" --rerun 2>"$T/plain.stderr"
check "without a terminal: no table" sh -c "! grep -q ' of 7 done' '$T/plain.stderr'"
check "... and no escape sequence" sh -c "! grep -q $'\\033' '$T/plain.stderr'"
finish
