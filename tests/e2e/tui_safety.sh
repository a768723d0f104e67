#!/usr/bin/env bash
# Untrusted text never reaches the terminal unfiltered, in tmux at
# 160x45: tool output that sets the window title, clears the screen or
# moves the cursor is neutralised while its SGR colours are kept, \r
# progress lines are overwritten, stderr is told apart; file names with
# escapes, newlines and a 4 KB path show safely in the live tree; model
# text with escapes is cleaned too. The pane title is the witness: an
# escape that got through would change it.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
RUN=$T/run
$PY - "$T/hostile.json" <<'PY'
import json, sys
cmd = r"""mkdir -p hostile && cd hostile
touch "$(printf 'e\033]2;pwn1\007x')" "$(printf 'new\nline')"
d=$(printf 'd%.0s' $(seq 240)); p=.
for i in $(seq 16); do p="$p/$d$i"; done
mkdir -p "$p" && touch "$p/leaf"
printf '\033]2;pwn2\007\033[31mRED\033[0m and \033[2J\033[Hplain\n'
printf 'progress 10%%\rprogress 100%%\n'
printf 'to stderr\n' >&2
printf '\033]52;c;cHduZWQ=\007clip\n'
"""
turns = [
    {"text": "Hostile \u001b]2;pwn3\u0007 text.",
     "tool_calls": [{"name": "shell", "arguments": {"command": cmd}}]},
    {"text": "Done.", "tool_calls": []},
]
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PY

title_clean() { ! grep -q pwn <<<"$(tm display -p -t t '#{pane_title}')"; }

tui_start 160 45 -- --provider script --script "$T/hostile.json" \
	--run-dir "$RUN" "be hostile"
check "the run gets to the end" wait_for 'waiting for you' 30
title=$(tm display -p -t t '#{pane_title}')
check "the pane title was never changed (it is '$title')" title_clean
check "the screen was not cleared: the panes are there" \
	test "$(col_of 0 ' Conversation ')" -eq 2
check "output: the escape shown as text is gone, the text stays" \
	in_region 1 64 40 122 '│ RED and plain'
check "output: SGR colour kept (red)" attrs_has $'\e\\[(31|38;5;1|38:5:1)m''RED'
check "output: progress overwritten in place" \
	in_region 1 64 40 122 '│ progress 100% +│'
check "output: the first progress state is gone" \
	test "$(count_in_region 1 64 40 122 'progress 10%')" -eq 0
check "output: stderr with its own gutter mark" in_region 1 64 40 122 '┃ to stderr'
check "output: clipboard escape dropped" in_region 1 64 40 122 '│ clip +│'
check "model text: the escape is shown, not obeyed" \
	in_region 1 0 40 63 'Hostile \^\[\]2;pwn3\^G text\.'
check "tree: a name with an escape, shown as text" \
	in_region 1 123 40 159 'e\^\[\]2;pwn1\^Gx +0 B new'
check "tree: a name with a newline, on one row" in_region 1 123 40 159 'new\^Jline'
check "tree: marked as new" in_region 1 123 40 159 'new\^Jline +0 B new'

# open the 4 KB path level by level in the Workspace pane
keys Tab Tab Tab # Conversation, Tools, Workspace
keys g
for i in $(seq 16); do keys j l; done # down into each level, open it
keys j                                 # onto the leaf
check "tree: the leaf of the 4 KB path shows" wait_for 'leaf +0 B' 10
check "the deep names are cut to the pane" \
	test "$(screen_width)" -le 160
check "still alive and drawing" wait_for '─ Workspace ─' 5
keys Enter
check "Enter on an empty file opens the pager" wait_for 'leaf +0 B +100%' 10
keys q
keys C-q
code=$(wait_exit 20)
check "quits (exit $code)" test "$code" = 0
check "the pane title is still untouched" title_clean
check "no process left behind" test -z "$(leftovers)"
finish
