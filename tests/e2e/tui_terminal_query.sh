#!/usr/bin/env bash
# The TUI's question to the terminal (what images it can show), on a
# fake terminal on a real pty (tests/fakes/fake_tty.py), no tmux between:
# 1. replies that come after the 150 ms the TUI waits (a slow ssh link:
#    DA1 400 ms late, with the kitty, XTSMGRAPHICS and cell-size ones)
#    are not typed into the message box: the message sent is exactly
#    what was typed, and the reply's text is never drawn;
# 2. Ctrl-C typed right after the queries is a Ctrl-C in the TUI (the
#    "Ctrl-C again to quit" notice), not a signal that kills it with the
#    terminal left raw; quitting then leaves echo and line editing on.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
FAKETTY=$SRC/tests/fakes/fake_tty.py
export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 ASSAY_SCRIPT_DELAY_MS=0
cat >s.json <<'JSON'
{"turns": [{"text": "Hi there, noted.", "tool_calls": []}]}
JSON

# 1. late replies
LATE='\x1b_Gi=31;OK\x1b\\\x1b[?1;0;256S\x1b[?2;0;480;312S\x1b[6;20;10t\x1b[?62;4;22c'
# (each key waits for its moment: the agent idle (an idle event in the
# transcript), the typed text drawn in the box, the answer given)
TR=$T/late/transcript.jsonl
$PY "$FAKETTY" --reply "$LATE" --reply-ms 400 \
	--key-file "$TR:1:\"type\":\"idle\":hello" --key-out 'hello:\r' \
	--key-file "$TR:2:\"type\":\"idle\":\x11" --timeout 60 \
	--out "$T/late.out" -- "$ASSAY" --provider script --script s.json \
	--ask none --run-dir "$T/late" >"$T/late.st"
cat "$T/late.st"
check "every key was typed" test "$(jget "$T/late.st" "x[0]['keys_left']")" = "[]"
check "the TUI ran and quit with 0" \
	test "$(jget "$T/late.st" "x[0]['exit'], x[0]['queried']")" = "(0, True)"
check "the message sent is what was typed, no reply bytes in it" \
	test "$(jget "$TR" "[e['text'] for e in x if e['type'] == 'user_message']")" = "['hello']"
check "the model answered it" grep -q 'Hi there, noted' "$TR"
check "no reply text was drawn (DA1, XTSMGRAPHICS, cell size, kitty)" \
	$PY -c 'import sys; o = open(sys.argv[1], "rb").read()
bad = [s for s in (b"62;4;22", b"0;256", b"480;312", b"6;20;10", b"i=31;OK") if s in o]
print("drawn:", bad) if bad else None
sys.exit(1 if bad else 0)' "$T/late.out"
check "the terminal is left with echo on" \
	test "$(jget "$T/late.st" "x[0]['echo'], x[0]['icanon']")" = "(True, True)"

# the same replies in time: the images the terminal offers are used
# (kitty here), which shows the replies were read, not just dropped
$PY "$FAKETTY" --reply "$LATE" \
	--key-file "$T/intime/transcript.jsonl:1:\"type\":\"idle\":\x11" --timeout 60 \
	-- "$ASSAY" --provider script --script s.json --ask none \
	--run-dir "$T/intime" >"$T/intime.st"
check "replies in time: the TUI ran and quit" \
	test "$(jget "$T/intime.st" "x[0]['exit']")" = 0
check "... and chose kitty graphics from them" \
	grep -q 'images: kitty' "$T/intime/assay.log"

# 2. Ctrl-C during the query
# (the second Ctrl-C once the first one's notice is drawn, y once the
# question is)
$PY "$FAKETTY" --after-query '\x03' --reply '\x1b[?62;c' --reply-ms 50 \
	--key-out 'Ctrl-C again to quit:\x03' --key-out 'End the run and quit?:y' \
	--timeout 60 --out "$T/intr.out" \
	-- "$ASSAY" --provider script --script s.json --ask none \
	--run-dir "$T/intr" >"$T/intr.st"
cat "$T/intr.st"
check "Ctrl-C during the query did not kill the TUI" \
	test "$(jget "$T/intr.st" "x[0]['signal']")" = None
check "it was a Ctrl-C in the TUI: the quit notice" \
	grep -aq 'Ctrl-C again to quit' "$T/intr.out"
check "Ctrl-C again + y quit it with 0" \
	test "$(jget "$T/intr.st" "x[0]['exit']")" = 0
check "the terminal is left with echo, line editing and signals on" \
	test "$(jget "$T/intr.st" "x[0]['echo'], x[0]['icanon'], x[0]['isig']")" = "(True, True, True)"

finish
