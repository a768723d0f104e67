#!/usr/bin/env bash
# Bidi controls (U+202A-U+202E, U+2066-U+2069, U+200E/F) reorder the
# text around them: a name or command could read differently from what
# it is. Every printer shows them by their code point (<U+202E>),
# never raw: the headless progress on stderr (model text, the command
# line, a tool error, the outputs), the headless approval prompt on the
# terminal, and the workbench's Conversation, Tools and Workspace panes
# in tmux. One scripted run carries them in the assistant's text, in a
# command and its output, and in file names.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"

CPS="202A 202B 202C 202D 202E 2066 2067 2068 2069 200E 200F"
$PY - "$T/bidi.json" $CPS <<'PY'
import json, sys
cps = [chr(int(c, 16)) for c in sys.argv[2:]]
# one word per control, so each shown form stays whole on a wrapped row
text = "Bidi " + " ".join("w%d %s" % (i, c) for i, c in enumerate(cps)) + " end."
loop = "for c in " + " ".join(cps) + "; do printf 'cp %s end\\n' \"$c\"; done"
names = "mkdir -p names && cd names && for c in " + " ".join(cps) + \
        "; do touch \"n${c}x\"; done && cd .. && printf x > \"out\u202e.txt\""
turns = [
    {"text": text,
     "tool_calls": [{"name": "shell", "arguments": {"command": loop}},
                    {"name": "shell", "arguments": {"command": names}},
                    {"name": "read_file",
                     "arguments": {"path": "nope\u202e\u2066.txt"}}]},
    {"text": "Done \u202e here.", "tool_calls": []},
]
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PY
OUT=$(printf 'out\u202e.txt')

# raw_free FILE: none of the controls' bytes is in FILE
raw_free() {
	$PY - "$1" $CPS <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
bad = [c for c in sys.argv[2:] if chr(int(c, 16)).encode() in data]
if bad:
    print("raw in %s: %s" % (sys.argv[1], " ".join(bad)))
sys.exit(1 if bad else 0)
PY
}
# shows_all FILE: every control is shown as <U+XXXX> in FILE
shows_all() {
	local c
	for c in $CPS; do
		grep -aqF "<U+$c>" "$1" || { echo "<U+$c> not in $1"; return 1; }
	done
}

# ---- headless: progress on stderr, nothing on stdout ----
set +e
"$ASSAY" run --ask none --provider script --script "$T/bidi.json" \
	--output "$OUT" --out "$T/outputs" --run-dir "$T/h" "bidi" \
	>"$T/h.stdout" 2>"$T/h.stderr"
code=$?
set -e
cat "$T/h.stdout" "$T/h.stderr" >"$T/h.all"
check "headless run completes (exit $code)" test "$code" -eq 0
has_raw() { ! raw_free "$1" >/dev/null; }
check "the transcript has the raw controls (the test is real)" \
	has_raw "$T/h/transcript.jsonl"
check "headless: no raw bidi control on stdout or stderr" raw_free "$T/h.all"
check "headless: the model text shows each control" \
	grep -aqF 'Bidi w0 <U+202A> w1 <U+202B> w2 <U+202C> w3 <U+202D> w4 <U+202E> w5 <U+2066> w6 <U+2067> w7 <U+2068> w8 <U+2069> w9 <U+200E> w10 <U+200F> end.' "$T/h.stderr"
check "headless: the command line shows each control" \
	grep -aqF '> shell for c in <U+202A> <U+202B> <U+202C> <U+202D> <U+202E> <U+2066> <U+2067> <U+2068> <U+2069> <U+200E> <U+200F>; do' "$T/h.stderr"
check "headless: the tool error shows the path's controls" \
	grep -aqF 'nope<U+202E><U+2066>.txt' "$T/h.stderr"
check "headless: the output's name shows its control" \
	grep -aqF 'output out<U+202E>.txt -> ' "$T/h.stderr"
check "headless: every control is shown" shows_all "$T/h.stderr"
check "the output was copied under its real name" test -f "$T/outputs/$OUT"

# ---- headless approval on a terminal (assay run in tmux) ----
tui_start 160 45 -- run --ask all --provider script --script "$T/bidi.json" \
	--run-dir "$T/a" "bidi"
check "approval: the prompt comes" wait_for '\[y\] run once' 20
screen >"$T/a.screen"
check "approval: the command shows each control" \
	grep -aqF 'for c in <U+202A> <U+202B> <U+202C> <U+202D> <U+202E> <U+2066> <U+2067> <U+2068> <U+2069> <U+200E> <U+200F>; do' "$T/a.screen"
check "approval: no raw bidi control on the terminal" raw_free "$T/a.screen"
# each wait is for the prompt itself: the three calls' lines ("> shell
# ... touch ...", "> read_file nope...") are on screen from the start,
# and a key sent before a prompt is shown is flushed, not taken
keys y
check "approval: the next prompt" wait_for '\(1 more waiting\)' 20
keys y
check "approval: the file tool's prompt" wait_for '^  path:' 20
check "... with the path" screen_has 'nope<U\+202E><U\+2066>\.txt'
screen >"$T/a2.screen"
check "approval: the path shows its controls, none raw" raw_free "$T/a2.screen"
keys y
code=$(wait_exit 20)
check "approval: the run ends (exit $code)" test "$code" = 0
screen >"$T/a3.screen"
check "approval: no raw bidi control in what followed" raw_free "$T/a3.screen"

# ---- the workbench: Conversation, Tools, Workspace ----
tui_start 160 45 -- --ask none --provider script --script "$T/bidi.json" \
	--run-dir "$T/t" "bidi"
check "workbench: the run gets to the end" wait_for 'waiting for you' 30
screen >"$T/t.screen"
check "workbench: no raw bidi control on the screen" raw_free "$T/t.screen"
region 1 0 40 63 >"$T/conv"
region 1 123 40 159 >"$T/ws"
check "Conversation: the model text shows each control" shows_all "$T/conv"
check "Conversation: shown in place" grep -qF 'w4 <U+202E> w5' "$T/conv"
check "Workspace: the file names show their controls" shows_all "$T/ws"
check "Workspace: a name shown in place" grep -qF 'n<U+202E>x' "$T/ws"
check "Workspace: the output's name too" grep -qF 'out<U+202E>.txt' "$T/ws"
# the first call's output in the Tools pane
keys Tab Tab # Conversation, Tools
keys k k
check "Tools: the first call's output" wait_for 'cp <U\+202E> end' 10
region 1 64 40 122 >"$T/tools"
check "Tools: the output shows each control" shows_all "$T/tools"
screen >"$T/t3.screen"
check "workbench: still no raw bidi control" raw_free "$T/t3.screen"
keys C-q
code=$(wait_exit 20)
check "workbench quits (exit $code)" test "$code" = 0
finish
