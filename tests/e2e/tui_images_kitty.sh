#!/usr/bin/env bash
# Image previews with kitty graphics forced inside tmux (--images kitty;
# tmux drops the APC sequences, pipe-pane -O keeps every byte assay
# writes), 120x40, and the preview's error handling with half blocks:
# - kitty gets the pixels once (a=t) and each placement is a few bytes
#   (a=p): the help over the preview and back deletes the placement
#   (a=d,d=i, the data kept) and places it again without a second a=t;
# - "terminal too small" (a resize to 30x8) deletes the placement;
# - the end frees the terminal's copy (a=d,d=I);
# - a rendering that fails for the large view (v) is shown there only:
#   back in the pane the cached rendering shows, and v tries again.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
$PY -c 'import matplotlib' 2>/dev/null || skip "/usr/bin/python3 has no matplotlib"
BIN=$(dirname "$ASSAY")/assay-image
[ -x "$BIN" ] || skip "assay-image not built at $BIN"
cd "$T"

cat >"$T/s.json" <<'EOF2'
{"turns": [
 {"text": "Making a chart.", "tool_calls": [{"name": "python", "arguments": {"code": "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt, os\nos.makedirs('output', exist_ok=True)\nfig, ax = plt.subplots(figsize=(8, 6), dpi=100)\nax.bar(range(6), [3, 7, 4, 9, 5, 8], color='#d62728')\nfig.savefig('output/chart.png')\nprint('saved')"}}]},
 {"text": "The chart is in output/chart.png.", "tool_calls": []}
]}
EOF2
HALF='▀'
OUT=$T/pane.out
# occurrences of a kitty command in the bytes written so far (from byte $2)
count() { tail -c +"$((${2:-0} + 1))" "$OUT" | { grep -ao -- "$1" || true; } | wc -l; }
size() { stat -c %s "$OUT"; }
lacks() { ! screen_has "$1"; }
wait_count() { # wait_count PATTERN MIN [FROM]
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(count "$1" "${3:-0}")" -ge "$2" ] && return 0
		sleep 0.1
	done
	echo "  $1: $(count "$1" "${3:-0}") times, wanted $2"
	return 1
}

RUN=$T/run
tui_start 120 40 -- --provider script --script "$T/s.json" --run-dir "$RUN" \
	--images kitty --send-images off chart
tm pipe-pane -O -t t "cat >>'$OUT'"
check "the agent waits" wait_for 'waiting for you' 60
keys Tab p
check "p: the preview box" wait_for '┌─ output/chart\.png  [0-9.]+ KB  800x600 ─' 10
check "the box says kitty" wait_for 'kitty \| v larger' 10
check "the image is transmitted once (a=t)" wait_count '_Ga=t,f=24,o=z,' 1
check "and placed (a=p) in the box" wait_count '_Ga=p,i=7311,p=1,c=[0-9]*,r=[0-9]*,C=1,q=2' 1
check "log: placed" grep -q 'tui: preview placed' "$RUN/assay.log"
T1=$(count '_Ga=t,')
P1=$(count '_Ga=p,')
echo "  first placement: $(grep -m1 'tui: preview placed' "$RUN/assay.log" | sed 's/.*(//')"

keys '?'
check "help over it: the placement is deleted, the data kept (d=i)" \
	wait_count '_Ga=d,d=i,i=7311,q=2' 1
keys q
check "closing the help places it again (a=p)" wait_count '_Ga=p,' $((P1 + 1))
check "without sending the pixels again" test "$(count '_Ga=t,')" = "$T1"
check "log: the second placement is a few bytes" \
	grep -Eq 'placement 2[,)]' "$RUN/assay.log"
second=$(grep 'placement 2[,)]' "$RUN/assay.log" | head -1 | sed 's/.*cells, \([0-9]*\) bytes.*/\1/' || true)
check "  ($second bytes)" test "${second:-999999}" -lt 200

# too small: the text says so and the image goes
from=$(size)
tm resize-window -t t -x 30 -y 8
check "30x8: terminal too small" wait_for 'terminal too small' 10
check "the kitty placement is deleted on the too-small screen" \
	wait_count '_Ga=d,d=[iI],i=7311' 1 "$from"
tm resize-window -t t -x 120 -y 40
check "back to 120x40: placed again" wait_count '_Ga=p,' $((P1 + 2))
keys C-q
check "Ctrl-Q quits (exit 0)" test "$(wait_exit 20)" = 0
check "the end frees the terminal's copy (d=I)" wait_count '_Ga=d,d=I,i=7311' 1
check "no kitty key but ours was sent" bash -c \
	"! grep -ao $'\x1b_G[^;\x1b]*' '$OUT' | grep -Ev '^.?_G(a=t,f=24,o=z,s=[0-9]+,v=[0-9]+,i=7311,q=2,m=[01]|m=[01]|a=p,i=7311,p=1,c=[0-9]+,r=[0-9]+,C=1,q=2|a=d,d=[iI],i=7311,q=2)$'"
echo "  longest frame: $(grep -o 'longest [0-9]* us' "$RUN/assay.log" | awk '$2 > m { m = $2 } END { print m + 0 }') us"

# --- a failed rendering is for its box only (half blocks) ---
# a stand-in renderer that fails for the large view while $T/fail exists
cat >"$T/fail-large" <<EOF2
#!/bin/bash
case " \$* " in
*" upscale=1 "*) [ -e '$T/fail' ] && { echo "image: simulated failure of the large view" >&2; exit 1; } ;;
esac
exec '$BIN' "\$@"
EOF2
chmod +x "$T/fail-large"
touch "$T/fail"
tui_start 120 40 ASSAY_IMAGE_BIN="$T/fail-large" -- --provider script \
	--script "$T/s.json" --run-dir "$T/run2" --send-images off chart
check "blocks: the agent waits" wait_for 'waiting for you' 60
keys Tab p
check "p: half blocks in the pane" wait_for "$HALF$HALF$HALF$HALF" 20
keys v
check "v: the large view's rendering fails, and says so" \
	wait_for 'simulated failure of the large view' 10
check "no half blocks under the error" wait_gone "$HALF" 5
keys v
check "v again (the pane): the cached rendering, not the error" \
	wait_for "$HALF$HALF$HALF$HALF" 10
check "the error is gone" lacks 'simulated'
rm -f "$T/fail"
keys v
check "v: the large view is tried again, and renders" wait_for "$HALF$HALF$HALF$HALF" 20
check "no error" lacks 'simulated'
check "large: the box covers the screen" wait_for '^┌─ output/chart\.png' 5
keys C-q
check "quits (exit 0)" test "$(wait_exit 20)" = 0
finish
