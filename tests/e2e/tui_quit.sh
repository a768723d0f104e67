#!/usr/bin/env bash
# Stopping and quitting the TUI, in tmux at 120x40:
# - Ctrl-C stops a running command; the agent waits for the next message;
#   a message typed in the input box (Alt-Enter for a new line, Up for the
#   history) continues the run; a second Ctrl-C when idle asks to quit.
# - Ctrl-Q while a command runs asks y/n; "n" goes on, "y" ends the run
#   with run_end in the transcript, and no process is left behind.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
tok=$((3000000 + $$ % 100000))

# --- Ctrl-C, then talk on
RUN=$T/run1
cat >"$T/stop.json" <<EOF
{"turns": [
  {"text": "Waiting a while.", "tool_calls": [{"name": "shell", "arguments":
    {"command": "echo started; sleep $tok; echo never"}}]},
  {"text": "Second answer: **noted**.", "tool_calls": []}
]}
EOF
tui_start 120 40 -- --provider script --script "$T/stop.json" \
	--run-dir "$RUN" "wait please"
check "the command runs" wait_for '│ started' 20
check "its state: running" in_region 1 48 10 91 '#1 shell .*[⠋|] 0\.0s'
check "the status bar says so" in_region 39 0 39 119 'running tools'
keys C-c
check "Ctrl-C stops it: cancelled" wait_for '#1 shell .*cancelled' 10
check "the agent waits for a message" wait_for 'waiting for you' 10
check "the conversation says so" \
	in_region 1 0 35 47 'cancelled: the agent waits for'
check "the sleep is gone" test -z "$(pgrep -f "sleep $tok")"

type_text "first line"
keys M-Enter
type_text "second line"
check "Alt-Enter makes a second line in the box" \
	wait_for '^│ *second line' 5
check "the box grew to two lines" in_region 35 0 37 119 '> first line'
keys Enter
check "Enter sends it" wait_for 'you: first line' 10
check "the next turn answers" wait_for 'assistant: Second answer: noted\.' 10
check "markdown bold is drawn without its stars" \
	in_region 1 0 35 47 'Second answer: noted\.'
check "idle again" wait_for 'waiting for you' 10
keys Up
check "Up recalls the last message" wait_for '^│ *second line' 5
keys C-c
check "Ctrl-C when idle: a hint" wait_for 'Ctrl-C again to quit' 5
keys C-c
check "a second Ctrl-C asks to quit" wait_for 'End the run and quit\?' 5
keys y
code=$(wait_exit 20)
check "quit after idle: completed (exit $code)" test "$code" = 0
check "run_end completed" \
	test "$(jget "$RUN/transcript.jsonl" 'x[-1]["type"]+":"+x[-1]["status"]')" = run_end:completed
check "the transcript has the cancel and the second message" \
	test "$(jget "$RUN/transcript.jsonl" '[e.get("reason") for e in x if e["type"]=="idle"][0]+"|"+[e["text"] for e in x if e["type"]=="user_message"][1]')" = "cancelled|first line
second line"
check "no process left behind" test -z "$(leftovers)"

# --- Ctrl-Q while a command runs
RUN=$T/run2
cat >"$T/busy.json" <<EOF
{"turns": [
  {"text": "Busy.", "tool_calls": [{"name": "shell", "arguments":
    {"command": "echo busy; echo x > live-file.txt; sleep $((tok + 1))"}}]}
]}
EOF
tui_start 120 40 -- --provider script --script "$T/busy.json" \
	--run-dir "$RUN" --output out.txt "be busy"
check "the command runs" wait_for '│ busy' 20
check "sandboxed processes are running" test -n "$(pgrep -f "sleep $((tok + 1))")"
# the session lists the workspace after a command ends; a file seen
# while it still runs came through inotify
check "the live tree shows a file made by the running command" \
	wait_for 'live-file\.txt +2 B new' 10
check "the command is still running then" in_region 1 48 10 91 '#1 shell .*[⠋|]'
keys C-q
check "Ctrl-Q asks y/n while the agent works" \
	wait_for 'still working. Stop the run and quit\?' 5
keys n
check "n: the run goes on" wait_gone 'Stop the run and quit' 5
check "still running" in_region 1 48 10 91 '#1 shell .*[⠋|]'
keys C-q
check "asked again" wait_for 'Stop the run and quit\?' 5
keys y
code=$(wait_exit 20)
check "y: assay exits as interrupted (exit $code)" test "$code" = 130
check "the last line tells the run dir" \
	wait_for "assay: run interrupted \(exit 130\); run dir $RUN" 5
check "run_end is the last event, interrupted" \
	test "$(jget "$RUN/transcript.jsonl" 'x[-1]["type"]+":"+x[-1]["status"]')" = run_end:interrupted
check "the declared output is reported missing" \
	test "$(jget "$RUN/transcript.jsonl" 'x[-1]["outputs"][0]["present"]')" = False
check "the workspace was persisted" test -s "$RUN/workspace.tar.zst"
check "the sandboxed command is gone" test -z "$(pgrep -f "sleep $((tok + 1))")"
check "no process left behind" test -z "$(leftovers)"
finish
