#!/usr/bin/env bash
# Readable on a light terminal: in a real xterm under Xvfb with its
# default white background, assay with no --theme asks the background
# (OSC 11), takes the light theme, and the three pane titles (and the
# focused one after Tab) stand out: in a screenshot, each title's text
# pixels against its cells' background have at least 3:1 contrast
# (WCAG, measured on the pixels). The same check fails for the dark
# theme forced on white (--theme default: the titles the issue could
# not see), so it can fail; on a black xterm auto stays dark. In tmux,
# which does not answer OSC 11, COLORFGBG decides, else dark. Where the
# titles are, in cells, comes from the same screen in tmux; the cell
# size in pixels from the log (CSI 16 t); the xterm has no borders
# (-b 0 -bw 0), so cell (r, c) starts at pixel (c*W, r*H).
source "$(dirname "$0")/lib.bash"
command -v Xvfb >/dev/null || skip "Xvfb is not installed (scripts/setup)"
command -v xterm >/dev/null || skip "xterm is not installed (scripts/setup)"
command -v import >/dev/null || skip "ImageMagick's import is not installed"
command -v tmux >/dev/null || skip "tmux is not installed"
$PY -c 'import PIL, numpy' 2>/dev/null || skip "/usr/bin/python3 has no PIL/numpy"
need_bwrap

COLS=120
ROWS=36
XVFB_PID=
XTERM_PID=
TMS=assay-light-$$-$RANDOM
x_cleanup() {
	[ -n "$XTERM_PID" ] && kill "$XTERM_PID" 2>/dev/null || true
	[ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null || true
	for s in "$TMS" "$TMS"-1 "$TMS"-2 "$TMS"-3; do
		tmux -L "$s" kill-server 2>/dev/null || true
		rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$s"
	done
	wait 2>/dev/null || true
	keep_shots light-xterm
	cleanup
}
trap x_cleanup EXIT
mkdir -p "$T/shots"
# the bundled themes only, whatever the user has; no hint but the
# terminal's own answer
export XDG_CONFIG_HOME=$T/config
unset COLORFGBG

cat >"$T/hi.json" <<'EOF'
{"turns": [{"text": "Hello from the light test.", "tool_calls": []}]}
EOF

# where the titles are: the same screen (size, run) in tmux, as text
cat >"$T/layout.sh" <<EOF
export LANG=C.UTF-8 LC_ALL=C.UTF-8 ASSAY_SCRIPT_DELAY_MS=0 ASSAY_TUI_CLOCK_MS=0
cd "$T"
exec "$ASSAY" --provider script --script "$T/hi.json" --run-dir "$T/run-layout" hi
EOF
tmux -L "$TMS" -f /dev/null new-session -d -x $COLS -y $ROWS "bash $T/layout.sh; sleep 600"
wait_until 20 'tmux -L "$TMS" capture-pane -p | grep -q "waiting for you"' || true
tmux -L "$TMS" capture-pane -p >"$T/layout.txt"
tmux -L "$TMS" send-keys C-q
sleep 0.3
tmux -L "$TMS" kill-server 2>/dev/null || true
# "NAME ROW COL LEN" for each title: the first cell of " NAME " on a
# border row (a row holding ─)
titles() {
	$PY - "$T/layout.txt" <<'PYEND'
import sys
rows = open(sys.argv[1], encoding="utf-8").read().split("\n")
for name in ("Conversation", "Tools", "Workspace"):
    for r, line in enumerate(rows):
        at = line.find(" " + name + " ")
        if at >= 0 and "─" in line:
            print(name, r, at + 1, len(name))
            break
PYEND
}
titles >"$T/titles"
cat "$T/titles"
check "the three titles are found in the layout" test "$(wc -l <"$T/titles")" -eq 3

Xvfb -displayfd 3 -screen 0 1600x1000x24 -nolisten tcp 3>"$T/display" >"$T/xvfb.log" 2>&1 &
XVFB_PID=$!
wait_until 10 'grep -q "^[0-9]" "$T/display"' || { cat "$T/xvfb.log"; echo "Xvfb did not start"; exit 1; }
export DISPLAY=:$(head -1 "$T/display")

# the contrast of each title's text on the screenshot: in its cells, the
# background is the commonest colour, the text the pixel of most
# contrast against it (antialiasing only lowers it). Prints
# "NAME RATIO BG FG" per title.
cat >"$T/contrast.py" <<'PYEND'
import sys
import numpy as np
from PIL import Image
shot, titles, cw, ch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
only = sys.argv[5:]
s = np.asarray(Image.open(shot).convert("RGB")).astype(float)

def lum(c):
    c = c / 255.0
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return c @ np.array([0.2126, 0.7152, 0.0722])

for line in open(titles):
    name, r, c, n = line.split()
    if only and name not in only:
        continue
    r, c, n = int(r), int(c), int(n)
    cells = s[r * ch:(r + 1) * ch, c * cw:(c + n) * cw].reshape(-1, 3)
    cols, counts = np.unique(cells, axis=0, return_counts=True)
    bg = cols[counts.argmax()]
    lb, lp = lum(bg), lum(cells)
    ratio = (np.maximum(lb, lp) + 0.05) / (np.minimum(lb, lp) + 0.05)
    fg = cells[ratio.argmax()]
    print("%s %.2f #%02x%02x%02x #%02x%02x%02x" % ((name, ratio.max()) +
          tuple(int(v) for v in bg) + tuple(int(v) for v in fg)))
PYEND

mkfifo "$T/keys"
key() { printf '%s' "$1" >"$T/keys"; sleep 0.2; }
# settled: two screenshots in a row (0.2 s apart) are the same
settled() {
	local a b i
	a=$(import -window root -depth 8 rgb:- | md5sum)
	for ((i = 0; i < 50; i++)); do
		sleep 0.2
		b=$(import -window root -depth 8 rgb:- | md5sum)
		[ "$a" = "$b" ] && return 0
		a=$b
	done
	echo "(the screen was still changing after 10 s)"
	return 1
}
# xterm_run NAME XTERM_ARGS... -- ASSAY_ARGS...: assay in a fresh
# xterm (no borders, a pty relay for keys), until it waits for input;
# its log in $T/NAME.log, cell size in CW, CH
xterm_run() {
	local name=$1 xargs=()
	shift
	while [ "$1" != "--" ]; do
		xargs+=("$1")
		shift
	done
	shift
	RUN=$T/run-$name
	rm -f "$T/exit"
	cat >"$T/run.sh" <<EOF
export LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color
export ASSAY_SCRIPT_DELAY_MS=0 ASSAY_TUI_CLOCK_MS=0
cd "$T"
exec $PY "$SRC/tests/e2e/xterm_relay.py" "$T/keys" "$T/exit" "$ASSAY" --provider script \
	--script "$T/hi.json" --run-dir "$RUN" $* hi
EOF
	xterm -b 0 -bw 0 -geometry ${COLS}x$ROWS+0+0 -fa 'DejaVu Sans Mono' -fs 10 \
		"${xargs[@]}" -e bash "$T/run.sh" >"$T/xterm-$name.log" 2>&1 &
	XTERM_PID=$!
	check "$name: assay waits for input" \
		wait_until 30 'grep -q "\"type\":\"idle\"" "$RUN/transcript.jsonl" 2>/dev/null'
	read -r CW CH < <(sed -n 's/.*cell \([0-9]*\)x\([0-9]*\) px.*/\1 \2/p' "$RUN/assay.log" | head -1)
	echo "$name: cell ${CW}x$CH px; $(grep -o 'background [^.]*' "$RUN/assay.log" | head -1)"
	settled || true
}
xterm_quit() {
	key $'\021'
	wait_until 20 'test -s "$T/exit"' || true
	kill "$XTERM_PID" 2>/dev/null || true
	wait "$XTERM_PID" 2>/dev/null || true
	XTERM_PID=
}
# shot_contrast SHOT [TITLE...]: a screenshot, each title's measured contrast
shot_contrast() {
	local shot=$1
	shift
	import -window root "$T/shots/$shot.png"
	$PY "$T/contrast.py" "$T/shots/$shot.png" "$T/titles" "$CW" "$CH" "$@"
}
# all_at_least MIN: every ratio on stdin is MIN or more (and there are 3)
all_at_least() { awk -v m="$1" '{ n++; if ($2 < m) bad++ } END { exit !(n == 3 && !bad) }'; }

# 1. xterm as it comes (white background, black text), no --theme
xterm_run auto-white --
LOG=$T/run-auto-white/assay.log
check "auto on white: xterm answered OSC 11 with white (log)" \
	grep -q 'background #ffffff light (OSC 11): --theme auto is light' "$LOG"
R=$(shot_contrast auto-white)
echo "$R"
check "auto on white: every title has 3:1 contrast or more" all_at_least 3 <<<"$R"
check "auto on white: the titles are on the white background" \
	test "$(awk '$3 == "#ffffff"' <<<"$R" | wc -l)" -eq 3
# the focused title (Tab: the Conversation pane)
key $'\t'
settled || true
R=$(shot_contrast auto-white-focus Conversation)
echo "focused: $R"
check "auto on white: the focused title, on its own colour, 3:1 or more" \
	awk '{ exit !($2 >= 3 && $3 != "#ffffff") }' <<<"$R"
xterm_quit
check "auto on white: quits cleanly" grep -qx 0 "$T/exit"

# 2. the dark theme forced on white: what the issue saw
xterm_run dark-on-white -- --theme default
R=$(shot_contrast dark-on-white)
echo "$R"
check "--theme default on white: the titles fail the same check (below 3:1)" \
	awk '{ n++; if ($2 < 3) low++ } END { exit !(n == 3 && low == 3) }' <<<"$R"
xterm_quit

# 3. a black xterm: auto stays dark, and its titles are readable too
xterm_run auto-black -bg black -fg gray85 --
LOG=$T/run-auto-black/assay.log
check "auto on black: OSC 11 says black, the dark theme (log)" \
	grep -q 'background #000000 dark (OSC 11): --theme auto is default' "$LOG"
R=$(shot_contrast auto-black)
echo "$R"
check "auto on black: every title has 3:1 contrast or more" all_at_least 3 <<<"$R"
check "auto on black: the titles are on the black background" \
	test "$(awk '$3 == "#000000"' <<<"$R" | wc -l)" -eq 3
xterm_quit

# 4. no answer (tmux 3.3 does not answer OSC 11): COLORFGBG decides,
# then dark; on screen (the title's colour) and in the log
tmux_title() { # tmux_title COLORFGBG N: the first title's SGR, the log's words
	# (a server of its own each: a new one on the socket of one that is
	# still exiting dies with it). The socket in a variable of its own:
	# inside wait_until's eval, $2 is wait_until's second argument
	local sock=$TMS-$2
	cat >"$T/tm.sh" <<EOF
export LANG=C.UTF-8 LC_ALL=C.UTF-8 ASSAY_SCRIPT_DELAY_MS=0 ASSAY_TUI_CLOCK_MS=0
${1:+export COLORFGBG='$1'}
cd "$T"
exec "$ASSAY" --provider script --script "$T/hi.json" --run-dir "$T/run-tm$2" hi
EOF
	tmux -L "$sock" -f /dev/null new-session -d -x $COLS -y $ROWS "bash $T/tm.sh; sleep 600"
	wait_until 20 'tmux -L "$sock" capture-pane -p | grep -q "waiting for you"' || true
	tmux -L "$sock" capture-pane -p -e -S 0 -E 0 | grep -o $'\e\\[[0-9;]*m Conversation' | head -1 | cat -v
	grep -o 'background [^.]*' "$T/run-tm$2/assay.log" | head -1
	tmux -L "$sock" send-keys C-q
	sleep 0.3
	tmux -L "$sock" kill-server 2>/dev/null || true
}
O=$(tmux_title '0;15' 1)
echo "$O"
check "tmux, COLORFGBG=0;15: the light theme's title (240)" grep -q '38;5;240m Conversation' <<<"$O"
check "tmux, COLORFGBG=0;15: the log says why" grep -q 'light (COLORFGBG): --theme auto is light' <<<"$O"
O=$(tmux_title '15;0' 2)
echo "$O"
check "tmux, COLORFGBG=15;0: the dark theme's title (250)" grep -q '38;5;250m Conversation' <<<"$O"
O=$(tmux_title '' 3)
echo "$O"
check "tmux, nothing said: dark" grep -q '38;5;250m Conversation' <<<"$O"
check "tmux, nothing said: the log says dark was assumed" \
	grep -q 'dark (nothing said: dark assumed): --theme auto is default' <<<"$O"
finish
