#!/usr/bin/env bash
# Image previews in tmux (no sixel: half blocks), 120x40: a scripted
# model makes a chart with matplotlib in the local sandbox; the
# conversation names the new image with the hint to press p; p draws
# the chart as coloured ▀ cells in the preview box (in place of Tools,
# titled with the name, size and pixel size), nowhere else; the help
# over it erases it and closing the help brings it back, as does the
# pager; Ctrl-L places it again after the clear; Esc closes it;
# Enter on the .png in the Workspace opens it; a resize places it again
# in the new layout; --images off shows a text placeholder instead; with
# the docker backend (when a daemon answers) the file comes through the
# sandbox.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
$PY -c 'import matplotlib' 2>/dev/null || skip "/usr/bin/python3 has no matplotlib"
cd "$T"

cat >"$T/s.json" <<'EOF'
{"turns": [
 {"text": "Making a chart.", "tool_calls": [{"name": "python", "arguments": {"code": "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt, os\nos.makedirs('output', exist_ok=True)\nfig, ax = plt.subplots(figsize=(8, 6), dpi=100)\nax.bar(range(6), [3, 7, 4, 9, 5, 8], color='#d62728')\nfig.savefig('output/chart.png')\nprint('saved')"}}]},
 {"text": "The chart is in output/chart.png.", "tool_calls": []}
]}
EOF
HALF='▀'
# rows of the screen with a half block, and the columns they span
blocks_rows() { screen | grep -c "$HALF" || true; }
# first and last column (0-based, in characters) holding a half block
blocks_span() {
	screen | $PY -c 'import sys
cols = [i for r in sys.stdin.read().split("\n") for i, c in enumerate(r) if c == "\u2580"]
print(min(cols), max(cols)) if cols else print(-1, -1)'
}
# the x of the Tools pane (its top-left corner) on row 0
pane_x() { col_of 0 "$1"; }

RUN=$T/run
# the workspace's file: no copy sent to the model for p to prefer
# (tui_sent_image.sh previews those)
tui_start 120 40 -- --provider script --script "$T/s.json" --run-dir "$RUN" \
	--send-images off chart
check "the conversation names the new image with the hint" \
	wait_for 'image output/chart\.png created: press p in' 60
check "(the hint goes on in the next row)" screen_has '│   a pane to preview it'
check "the agent waits" wait_for 'waiting for you' 20
check "no half blocks before p" test "$(blocks_rows)" = 0
TX=$(col_of 0 '┌─ Tools')
keys Tab p
check "p: the preview box takes the Tools pane, titled name, size, pixels" \
	wait_for '┌─ output/chart\.png  [0-9.]+ KB  800x600 ─' 10
check "p: the chart as half blocks" wait_for "$HALF$HALF$HALF$HALF" 20
check "in many rows" test "$(blocks_rows)" -ge 10
check "the box starts where Tools was" test "$(col_of 0 '┌─ output/chart.png')" = "$TX"
read -r B0 B1 < <(blocks_span)
WX=$(col_of 0 '┌─ Workspace')
check "the blocks stay inside the box ($B0-$B1 in $TX-$WX)" \
	test "$B0" -gt "$TX" -a "$B1" -lt "$WX"
check "coloured: SGR colours with the half blocks" \
	attrs_has $'\033\\[(38;5;[0-9]+|38;2;[0-9;]+)m\033\\[(48;5;[0-9]+|48;2;[0-9;]+)m'"$HALF"
check "the box says the mode and the keys" screen_has 'blocks \| v larger  Esc close'
check "the log: blocks chosen inside tmux" grep -q 'tui: images: blocks' "$RUN/assay.log"

keys '?'
check "help over it: the keys are listed" wait_for 'preview the newest image' 5
check "help lists v and Esc" screen_has 'v / Esc +image preview: as large as the screen / close'
check "help lists Enter on a .png" screen_has 'Enter on a \.png +Workspace: preview that image'
check "under the help the image is erased" wait_gone "$HALF" 5
keys q
check "closing the help brings the image back" wait_for "$HALF$HALF$HALF$HALF" 5
check "all of it" test "$(blocks_rows)" -ge 10

# the pager over it (Enter on the call): nothing of the image shows
# through its blank cells; q brings the image back
keys ']' Enter
check "the pager opens over the preview" wait_for '^ #1 python' 5
check "no half blocks under the pager" wait_gone "$HALF" 5
keys q
check "q: the image is back" wait_for "$HALF$HALF$HALF$HALF" 5
check "all of it, again" test "$(blocks_rows)" -ge 10
# Ctrl-L clears and redraws the screen: the image is placed again
placed() { grep -c 'tui: preview placed' "$RUN/assay.log" || true; }
before=$(placed)
keys C-l
check "log: placed again after the clear" wait_until 5 'test "$(placed)" -gt "$before"'
check "Ctrl-L: the image is on screen again" wait_for "$HALF$HALF$HALF$HALF" 5
check "log: four placements in all" test "$(placed)" -ge 4

keys Escape
check "Esc closes it: Tools is back" wait_for '┌─ Tools' 5
check "no half blocks left" wait_gone "$HALF" 5

# Enter on the image in the Workspace tree
keys Tab Tab
check "Workspace focused" wait_for 'chart\.png' 5
keys j Enter
check "Enter on chart.png previews it" wait_for '┌─ output/chart\.png  ' 5
check "drawn" wait_for "$HALF$HALF$HALF$HALF" 20

# a resize: the box moves (narrow layout), the image is placed again
tm resize-window -t t -x 100 -y 36
check "after a resize the box is in the new layout" \
	wait_for '┌─ output/chart\.png' 10
rendered() { grep -c 'tui: preview output/chart.png: blocks' "$RUN/assay.log" || true; }
check "the image is rendered again for the new box (log)" wait_until 20 'test "$(rendered)" -ge 2'
check "the image is placed again" wait_for "$HALF$HALF$HALF$HALF" 20
read -r B0 B1 < <(blocks_span)
NX=$(col_of 0 '┌─ output/chart.png')
check "inside the new box ($B0-$B1 from $NX)" test "$B0" -gt "$NX" -a "$B1" -lt 99
check "two renderings, both logged" \
	test "$(grep -c 'tui: preview output/chart.png: blocks' "$RUN/assay.log")" -ge 2
keys C-q
check "Ctrl-Q quits (exit 0)" test "$(wait_exit 20)" = 0
check "no process left behind" test -z "$(leftovers)"

# --images off: the placeholder text
tui_start 120 40 -- --provider script --script "$T/s.json" \
	--run-dir "$T/run-off" --images off --send-images off chart
check "off: the hint line still shows" \
	wait_for 'image output/chart\.png created: press p' 60
wait_for 'waiting for you' 20 >/dev/null
keys Tab p
check "off: a placeholder with the name, size and pixel size" \
	wait_for '\[image output/chart\.png: [0-9.]+ KB,' 10
check "off: and the pixel size" screen_has '800x600 pixels\]'
check "off: it says why there are no pixels" screen_has 'pixels are off: --images off'
check "off: no half blocks" test "$(blocks_rows)" = 0
check "off: the log says off" grep -q 'tui: images: off' "$T/run-off/assay.log"
keys C-q
check "quits (exit 0)" test "$(wait_exit 20)" = 0

# the docker backend has no host directory: the file is read through
# the sandbox (binary-safe) into a memfd; only where a daemon answers
# and the image is there (else the test ends skipped: under CI=true, a
# failure that says what was missing)
docker_missing=
if ! command -v docker >/dev/null; then
	docker_missing="the docker CLI is not installed"
elif ! docker info >/dev/null 2>&1; then
	docker_missing="no Docker daemon answers at ${DOCKER_HOST:-the default socket} (scripts/setup-docker starts one)"
elif ! docker image inspect assay-sandbox:latest >/dev/null 2>&1; then
	docker_missing="the image assay-sandbox:latest is missing (scripts/sandbox-image/build-offline builds it)"
fi
if [ -z "$docker_missing" ]; then
	tui_start 120 40 -- --sandbox docker --provider script \
		--script "$T/s.json" --run-dir "$T/run-docker" --send-images off chart
	check "docker: the hint line" \
		wait_for 'image output/chart\.png created: press p' 90
	wait_for 'waiting for you' 30 >/dev/null
	keys Tab p
	check "docker: the preview box with its title" \
		wait_for '┌─ output/chart\.png  [0-9.]+ KB  800x600 ─' 20
	check "docker: the chart as half blocks" wait_for "$HALF$HALF$HALF$HALF" 30
	keys C-q
	check "docker: quits (exit 0)" test "$(wait_exit 60)" = 0
fi
finish || exit 1
[ -z "$docker_missing" ] || skip "the docker part was not run: $docker_missing"
