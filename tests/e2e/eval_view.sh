#!/usr/bin/env bash
# assay eval's live table on a terminal (tmux) has keys: Up/Down select
# a session, Enter opens its workbench view (the panes, read-only while
# it runs: the message box takes nothing), Esc comes back to the table;
# a session whose call asks for approval waits ("asking") until its
# view's Approval dialog answers it. Without a terminal the same call is
# denied (output_missing), and --ask none lets it run. Skipped (77)
# without bubblewrap or tmux.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"
cp "$SRC"/tests/e2e/data/eval_view/*.json .
D=$T/ev
tui_start 140 40 -- eval suite.json -j 2 --dir "$D"
check "the table has both sessions" wait_for '^[> ] slow x script r1 +running' 30
check "... the one asking says so" wait_for '^[> ] asks x script r1 +asking' 30
check "... and the header counts it" screen_has '1 asking for approval'
check "... with the keys" screen_has 'Up/Down select, Enter opens the session'
check "the first row is selected" screen_has '^> slow x script r1'
keys Enter
check "Enter opens the session's workbench" wait_for '^.*Conversation' 15
check "... its conversation so far" wait_for 'wait for the gate' 10
check "... its call running in Tools" wait_for 'waiting' 10
check "... read-only" screen_has 'read-only \(assay eval\): Esc back to the table'
type_text hello
keys Enter
check "the message box takes nothing" wait_for 'read-only: a session of assay eval' 10
check "... and nothing was typed into it" sh -c "! tmux -L $TM_BASE-$TM_N capture-pane -p -t t | grep -q '> hello'"
touch "$D/slow-script-r1/workspace/go"
check "its events arrive live: the call ends, the model answers" wait_for 'The gate opened' 20
keys Escape
check "Esc: back to the table" wait_for '^[> ] asks x script r1 +asking' 15
check "... the progress line said meanwhile is there" wait_for '^\[1/2\] slow x script r1: pass' 15
check "... the selection moved to the row left" screen_has '^> asks x script r1'
keys Enter
check "Enter on the asking session: its Approval dialog" wait_for 'rm deletes draft.txt' 15
check "... with its choices" screen_has '\[y\] run once'
keys y
check "y runs it: the run goes on and ends" wait_for 'The result is in output/result.txt' 20
check "... the result comes into the view" wait_for 'asks x script r1: pass' 20
keys Escape
check "the eval ends once the view has gone (exit 0)" test "$(wait_exit 30)" = 0
check "... its summary" screen_has '^script +2/2 '
check "results: both pass" test "$(grep -c '"pass":true' "$D/results.jsonl")" = 2
check "... slow's record has no message from the view" test "$(grep -c '"type":"user_message"' "$D/slow-script-r1/transcript.jsonl")" = 1
check "... the approval was the person's" grep -q '"decision":"approved","by":"user"' "$D/asks-script-r1/transcript.jsonl"
check "the terminal is back: no table left" sh -c "! tmux -L $TM_BASE-$TM_N capture-pane -p -t t | grep -q 'Up/Down select'"
# Ctrl-C twice in a view stops every session, as Ctrl-C in the table does
tui_start 140 40 -- eval suite.json -j 2 --dir "$T/cc"
check "a second eval: the table" wait_for '^> slow x script r1 +running' 30
keys Enter
check "... the view" wait_for 'read-only \(assay eval\)' 15
keys C-c
check "Ctrl-C once in the view: it says what a second one does" wait_for 'Ctrl-C again stops every session' 10
keys C-c
check "... twice: every session stopped (exit 130)" test "$(wait_exit 30)" = 130
check "... said on the eval's terminal" screen_has 'assay eval: interrupted: stopping every session'
check "... both recorded as interrupted" test "$(grep -c '"category":"interrupted"' "$T/cc/results.jsonl")" = 2
check "... no sandbox process left" test -z "$(leftovers)"
# without a terminal the call that asks is denied; --ask none runs it
"$ASSAY" eval asks_only.json --dir "$T/h" </dev/null 2>"$T/h.stderr" || true
check "without a terminal: the call that asks is denied" grep -q '"category":"output_missing"' "$T/h/results.jsonl"
check "... and said so" grep -q 'asks x script r1: FAIL, output_missing' "$T/h.stderr"
check "... no table, no escape sequence" sh -c "! grep -q \$'\\033' '$T/h.stderr'"
"$ASSAY" eval asks_only.json --dir "$T/h" --ask none </dev/null 2>"$T/n.stderr"
check "--ask none: nothing asks, it runs (a new key: not the last result)" grep -q 'asks x script r1: pass' "$T/n.stderr"
"$ASSAY" eval asks_only.json --dir "$T/h" --ask sometimes 2>"$T/bad.stderr" && rc=0 || rc=$?
check "--ask with a bad mode: usage (2)" test "$rc" = 2
finish
