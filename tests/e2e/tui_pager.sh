#!/usr/bin/env bash
# The pager on a 100 MB output, in tmux at 120x40: a command prints
# ~100 MB to stdout (and a line to stderr); the Tools pane shows its
# tail; Enter opens the pager over the run dir's exec files without
# loading them (assay stays far below the file's size), and search, n/N,
# head/tail and the stdout/stderr/both toggle work.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
RUN=$T/run
cat >"$T/big.json" <<'EOF'
{"turns": [
  {"text": "Printing a lot.", "tool_calls": [{"name": "shell", "arguments":
    {"command": "seq 1 12500000; echo needle-in-the-haystack; seq 1 1000; echo err-line >&2; echo needle-in-the-haystack"}}]},
  {"text": "Done.", "tool_calls": []}
]}
EOF

# under AddressSanitizer freed memory is held back (256 MB by default):
# a small quarantine keeps the peak about what the program holds
tui_start 120 40 "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4" \
	-- --provider script --script "$T/big.json" \
	--run-dir "$RUN" "print a lot"
check "the prompt given on the command line is sent at once" \
	wait_for 'you: print a lot' 20
check "the command finishes" wait_for '#1 shell .*exit 0' 120
check "the model's last answer arrives" wait_for 'waiting for you' 20
size=$(stat -c %s "$RUN/exec/call_0_0.stdout")
check "the output file holds ~100 MB ($size bytes)" test "$size" -gt 100000000
# the Tools pane (columns 48-91) shows the end of the output, read from
# the file: the events carried only the first part of it
check "tools pane: the tail of stdout" in_region 1 48 37 91 '│ 1000 +│$'
check "tools pane: stderr told apart" in_region 1 48 37 91 '┃ err-line'
check "tools pane: the sizes" in_region 1 48 37 91 'stdout 9[0-9.]+ MB, stderr 9 B'

keys Tab Tab # Conversation, then Tools
keys Enter
check "the pager opens on both streams" \
	wait_for '^ #1 shell: stdout\+stderr +9[0-9.]+ MB +0%' 10
check "pager: the stdout part starts at the top" \
	test "$(row_of '---- stdout (' 0)" -eq 1
check "pager: the first lines" in_region 2 0 4 119 '^1 *$'

keys / ; type_text needle-in-the; keys Enter
check "search finds the needle near the end" \
	wait_for 'needle-in-the: match at byte 10[0-9]+ \(99%\)' 30
check "the match is the top line" in_region 1 0 1 119 '^needle-in-the-haystack'
check "the match is highlighted" attrs_has $'\e''\[[0-9;]*m''needle-in-the'
keys n
# (the message is the same as before n: wait for what n moves)
check "n moved on: the stderr part under the match" \
	wait_until 10 "in_region 2 0 2 119 '^(---- stderr|err-line)'"
check "n finds the next match (in stdout, after the 1000 lines)" \
	wait_for 'needle-in-the: match at byte 10[0-9]+ \(99%\)' 10
keys n
check "past the last match: said so" wait_for 'no further match' 10
keys N
check "N goes back" wait_for 'needle-in-the: match at byte' 10

keys G
check "G: the tail, following" wait_for '\(following\)' 10
check "G: the stderr part is last" in_region 1 0 38 119 '^err-line'
keys g
check "g: the head again" wait_for '^ #1 shell: stdout\+stderr .* 0%' 10

keys s
check "s: stdout only" wait_for '^ #1 shell: stdout  ' 10
check "s: no header in a single stream" in_region 1 0 1 119 '^1 *$'
keys s
check "s: stderr only" wait_for '^ #1 shell: stderr  ' 10
check "s: stderr's line" in_region 1 0 1 119 '^err-line'
keys s
check "s: both again" wait_for 'stdout\+stderr' 10

pid=$(assay_pid "$RUN")
hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
check "assay never held the file: peak RSS ${hwm} KiB < 64 MiB" \
	test "${hwm:-999999}" -lt 65536 -a "${hwm:-0}" -gt 0

keys Escape
check "Esc: back to the panes" wait_for '─ Tools ─' 5
keys C-q
code=$(wait_exit 20)
check "Ctrl-Q when idle quits at once (exit $code)" test "$code" = 0
check "run_end completed" \
	test "$(jget "$RUN/transcript.jsonl" 'x[-1]["type"]+":"+x[-1]["status"]')" = run_end:completed
check "no process left behind" test -z "$(leftovers)"
finish
