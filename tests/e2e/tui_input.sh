#!/usr/bin/env bash
# Input in the TUI, in tmux at 120x40: a mouse click on a tool call's
# summary in the Conversation selects it in Tools, the wheel scrolls;
# Tab / Shift-Tab and arrows move through calls; a pasted block (with
# bracketed paste) stays in the box with its new lines instead of being
# sent line by line; Ctrl-C stops a model answer while it streams.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap

# X10 mouse report as ncurses reads it for tmux-256color: ESC [ M then
# 32+button, 33+column, 33+row. Pasted from a tmux buffer, which writes
# it to the pane in one piece, as a terminal sends a report: typed key by
# key (send-keys), its bytes may come apart by more than the 25 ms the
# TUI waits after an Esc on a loaded machine, and the report is then
# read as Esc and text.
mouse() { # mouse BUTTON COL ROW
	tm set-buffer -b mouse "$(printf '\033[M%b%b%b' "\\x$(printf %x $((32 + $1)))" \
		"\\x$(printf %x $((33 + $2)))" "\\x$(printf %x $((33 + $3)))")"
	tm paste-buffer -b mouse -d -t t
}

RUN=$T/run1
cat >"$T/calls.json" <<'EOF'
{"turns": [
  {"text": "Three calls.", "tool_calls": [
    {"name": "shell", "arguments": {"command": "echo one"}},
    {"name": "shell", "arguments": {"command": "echo two >&2; exit 3"}},
    {"name": "write_file", "arguments": {"path": "notes.txt", "content": "hello\n"}}]},
  {"text": "Done.", "tool_calls": []}
]}
EOF
tui_start 120 40 -- --provider script --script "$T/calls.json" \
	--run-dir "$RUN" "three calls"
check "three calls ran" wait_for '#3 write_file .*ok' 20
check "the newest call is selected" in_region 1 48 10 91 '#3 result'
check "a failed command shows its exit code" in_region 1 48 10 91 '#2 shell .*exit 3'
check "a file tool shows its result" in_region 1 48 20 91 'wrote 6 bytes to notes\.txt'
check "the workspace marks the new file" wait_for 'notes\.txt +6 B new' 10

# (the Conversation lists the calls a frame after Tools does: under
# ASan that frame can come after the checks above)
check "the Conversation lists the calls" wait_for '▸ #1 shell' 10
# the click lands on a settled screen: the run's last frames (its end,
# the workspace's listing) may move what is under the pointer
check "the run has ended" wait_for 'waiting for you' 20
r=$(row_of '▸ #1 shell')
mouse 0 10 "$r"
mouse 3 10 "$r"
check "a click on #1 in the Conversation selects it in Tools" \
	wait_for '#1 output: stdout 4 B, stderr 0 B' 5
check "its output" in_region 1 48 20 91 '│ one'
check "the click moved the focus to the Conversation (its title lit)" \
	attrs_has '48;5;75m.{0,24}Conversation'
keys j # focus is on the Conversation now: scrolls, no harm
keys Tab # Tools
keys j
check "j in Tools: the next call" wait_for '#2 output: stdout 0 B, stderr 4 B' 5
check "stderr of #2 with its gutter" in_region 1 48 20 91 '┃ two'
keys BTab
keys ']'
check "] in the Conversation: the next call" wait_for '#3 result' 5
keys '['
check "[ goes back" wait_for '#2 output' 5
keys Escape
keys C-q
check "quits" test "$(wait_exit 20)" = 0

# --- paste, and the wheel
RUN=$T/run2
$PY -c 'import json; print(json.dumps({"turns": [{"text": "\n".join("line %d of a long answer" % i for i in range(1, 80)), "tool_calls": []}, {"text": "Got it.", "tool_calls": []}]}))' >"$T/long.json"
tui_start 120 40 -- --provider script --script "$T/long.json" \
	--run-dir "$RUN" "long answer please"
check "the long answer is in" wait_for 'line 79 of a long answer' 20
mouse 64 10 10 # wheel up over the Conversation
mouse 64 10 10
check "the wheel scrolls the Conversation up" wait_gone 'line 79 of a long' 5
check "and says there is more below" in_region 35 0 35 47 'more'
mouse 65 10 10
mouse 65 10 10
mouse 65 10 10
check "the wheel back down: the end again" wait_for 'line 79 of a long answer' 5
$PY -c 'print("\n".join("pasted row %d" % i for i in range(1, 2001)), end="")' >"$T/paste.txt"
tm load-buffer "$T/paste.txt"
tm paste-buffer -p -t t
check "the pasted block stays in the box (its last row shows)" \
	wait_for '^│ +pasted row 2000' 10
check "nothing was sent by the pasted new lines" \
	test "$(jget "$RUN/transcript.jsonl" 'len([e for e in x if e["type"]=="user_message"])')" = 1
keys Enter
check "Enter sends the whole block" wait_for 'assistant: Got it\.' 10
check "the Conversation shows it" in_region 1 0 35 47 '^│ pasted row 2000 ' 
check "one message of 2000 lines" \
	test "$(jget "$RUN/transcript.jsonl" '[e["text"] for e in x if e["type"]=="user_message"][-1].count(chr(10))')" = 1999
keys C-q
check "quits" test "$(wait_exit 20)" = 0

# --- Ctrl-C while the model streams
RUN=$T/run3
$PY -c 'import json; print(json.dumps({"turns": [{"text": " ".join("word%d" % i for i in range(200)), "tool_calls": []}, {"text": "Second try.", "tool_calls": []}]}))' >"$T/slow.json"
tui_start 120 40 ASSAY_SCRIPT_DELAY_MS=100 -- --provider script \
	--script "$T/slow.json" --run-dir "$RUN" "talk slowly"
check "the answer streams" wait_for 'assistant: word0 word1' 20
check "the status says thinking" in_region 39 0 39 119 'thinking'
keys C-c
check "Ctrl-C stops the stream" wait_for 'cancelled: the agent waits' 5
check "the stream stopped early" \
	test "$(count_in_region 1 0 35 47 'word199')" -eq 0
check "idle" in_region 39 0 39 119 'waiting for you'
type_text "again"
keys Enter
check "the next message is sent" wait_for 'you: again' 10
# the cancelled answer did not use up the script's first turn: the same
# answer streams again, under the new message (10 s at this delay)
check "the first turn's answer streams again, after it" \
	wait_for_below 'you: again' '^│ word[0-9]+ word[0-9]+ word[0-9]+' 10
check "still streaming: the status says thinking" in_region 39 0 39 119 'thinking'
keys C-q
check "Ctrl-Q while it streams asks first" wait_for 'Stop the run and quit\?' 5
keys y
check "quits as interrupted" test "$(wait_exit 20)" = 130
check "run_end interrupted" \
	test "$(jget "$RUN/transcript.jsonl" 'x[-1]["status"]')" = interrupted
check "two requests for the first turn, the first cancelled" \
	test "$(jget "$RUN/transcript.jsonl" '",".join(e["type"] + ":" + e.get("reason", "") for e in x if e["type"] in ("user_message", "model_request", "idle"))')" = \
	"user_message:,model_request:,idle:cancelled,user_message:,model_request:"
check "the second was never answered" \
	test "$(jget "$RUN/transcript.jsonl" 'len([e for e in x if e["type"] == "assistant_message"])')" = 0
check "no process left behind" test -z "$(leftovers)"
finish
