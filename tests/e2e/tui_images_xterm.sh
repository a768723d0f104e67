#!/usr/bin/env bash
# Image previews in a real xterm (sixel, 256 colour registers) under
# Xvfb: a scripted model makes a chart with matplotlib in the local
# sandbox; before p no chart pixels are on screen; p places the chart in
# the preview box (checked in screenshots by the chart's own colours,
# inside the box and nowhere else); scrolling the conversation leaves it
# alone (no second placement); the Approval dialog over it erases it
# (no chart pixels under the dialog); denying brings it back in place;
# v shows it larger; Esc takes it away. Keys reach the xterm through a
# small pty relay (no xdotool); screenshots are `import -window root`
# (kept in $ASSAY_SHOTS_DIR when set, else printed on a failure).
source "$(dirname "$0")/lib.bash"
command -v Xvfb >/dev/null || skip "Xvfb is not installed (scripts/setup)"
command -v xterm >/dev/null || skip "xterm is not installed (scripts/setup)"
command -v import >/dev/null || skip "ImageMagick's import is not installed"
$PY -c 'import PIL, numpy, scipy, matplotlib' 2>/dev/null ||
	skip "/usr/bin/python3 has no PIL/numpy/scipy/matplotlib"
need_bwrap

XVFB_PID=
XTERM_PID=
x_cleanup() {
	[ -n "$XTERM_PID" ] && kill "$XTERM_PID" 2>/dev/null || true
	[ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	keep_shots images-xterm
	cleanup
}
trap x_cleanup EXIT
mkdir -p "$T/shots"

# Xvfb picks a free display number itself (-displayfd: it takes the
# number's lock file, atomically, and writes the number once it accepts
# connections), so two tests at once never share one
Xvfb -displayfd 3 -screen 0 1600x1000x24 -nolisten tcp 3>"$T/display" >"$T/xvfb.log" 2>&1 &
XVFB_PID=$!
wait_until 10 'grep -q "^[0-9]" "$T/display"' || { cat "$T/xvfb.log"; echo "Xvfb did not start"; exit 1; }
DNUM=$(head -1 "$T/display")
export DISPLAY=:$DNUM

# screenshot analysis: pixels of the chart's own colours
cat >"$T/pixels.py" <<'PYEND'
import json, sys
import numpy as np
from PIL import Image
from scipy import ndimage
shot, chart = sys.argv[1], sys.argv[2]
box = [int(v) for v in sys.argv[3:7]] if len(sys.argv) > 6 else None
c = np.asarray(Image.open(chart).convert("RGB")).reshape(-1, 3).astype(int)
sat = c[(c.max(1) - c.min(1)) > 100]  # the chart's saturated colours
cols, n = np.unique(sat, axis=0, return_counts=True)
top = cols[np.argsort(-n)[:2]]
s = np.asarray(Image.open(shot).convert("RGB")).astype(int)
mask = np.zeros(s.shape[:2], bool)
for col in top:
    mask |= (np.abs(s - col).max(2) <= 12)
out = {"colours": ["#%02x%02x%02x" % tuple(t) for t in top],
       "total": int(mask.sum())}
if box:
    x0, y0, x1, y1 = box
    inside = int(mask[y0:y1, x0:x1].sum())
    out["inside"] = inside
    out["outside"] = int(mask.sum()) - inside
# the dialogs' background (colour 237: 58,58,58): the bounding box of
# its largest patch (the status bar has it too, apart)
lab, nlab = ndimage.label(np.abs(s - 58).max(2) <= 2)
sizes = np.bincount(lab.ravel())[1:] if nlab else np.array([0])
if sizes.max() > 40000:
    ys, xs = np.nonzero(lab == sizes.argmax() + 1)
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    out["dialog"] = [int(x0), int(y0), int(x1), int(y1)]
    out["in_dialog"] = int(mask[y0:y1, x0:x1].sum())
print(json.dumps(out))
PYEND
px() { $PY "$T/pixels.py" "$@"; }
jf() { $PY -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2], -1))' "$1" "$2"; }

cat >"$T/s.json" <<'EOF'
{"turns": [
 {"text": "Making a chart.", "tool_calls": [{"name": "python", "arguments": {"code": "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt, os\nos.makedirs('output', exist_ok=True)\nfig, ax = plt.subplots(figsize=(8, 6), dpi=100)\nax.bar(range(6), [3, 7, 4, 9, 5, 8], color='#d62728')\nax.plot(range(6), [2, 6, 3, 8, 4, 7], color='#1f77b4', linewidth=8)\nfig.savefig('output/chart.png')\nopen('output/tmp.txt', 'w').write('x')\nprint('saved')"}}]},
 {"text": "The chart is in output/chart.png.", "tool_calls": []},
 {"text": "Removing the scratch file.", "tool_calls": [{"name": "shell", "arguments": {"command": "rm output/tmp.txt"}}]},
 {"text": "Left it.", "tool_calls": []}
]}
EOF
RUN=$T/run
TR=$RUN/transcript.jsonl
LOG=$RUN/assay.log
mkfifo "$T/keys"
cat >"$T/run.sh" <<EOF
export LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color
export ASSAY_SCRIPT_DELAY_MS=0 ASSAY_TUI_CLOCK_MS=0
cd "$T"
exec $PY "$SRC/tests/e2e/xterm_relay.py" "$T/keys" "$T/exit" "$ASSAY" --provider script \
	--script "$T/s.json" --ask risky --run-dir "$RUN" chart
EOF
xterm -ti vt340 -xrm 'XTerm*numColorRegisters: 256' -geometry 160x50+0+0 \
	-fa 'DejaVu Sans Mono' -fs 9 -bg black -fg gray85 \
	-e bash "$T/run.sh" >"$T/xterm.log" 2>&1 &
XTERM_PID=$!

# A key, typed; then a pause, so that the next key is read apart: an Esc
# followed at once by a key would be read as Alt-key, and a typed byte
# has no acknowledgement to wait for.
key() { printf '%s' "$1" >"$T/keys"; sleep 0.15; }
events() { cat "$TR" 2>/dev/null | grep -c "\"type\":\"$1\"" || true; }
placements() { cat "$LOG" 2>/dev/null | grep -c 'tui: preview placed' || true; }
shot() { import -window root "$T/shots/$1.png" && echo "$T/shots/$1.png"; }
# shoot NAME [BOX...]: a screenshot and its analysis, in S and R
shoot() {
	local name=$1
	shift
	S=$(shot "$name")
	R=$(px "$S" "$CHART" "$@")
}
# shoot_until NAME SECONDS 'CONDITION' [BOX...]: screenshots until
# CONDITION (on $R) holds, at most SECONDS; the last one stays in S, R
shoot_until() {
	local name=$1 end=$((SECONDS + $2)) cond=$3
	shift 3
	while :; do
		shoot "$name" "$@"
		eval "$cond" && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
	done
}
# settled: until two screenshots in a row (0.2 s apart) are the same,
# the xterm has drawn all it was sent (at most 10 s)
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

check "the chart is made and the agent waits" wait_until 60 'test "$(events idle)" -ge 1'
CHART=$RUN/workspace/output/chart.png
check "the chart exists" test -s "$CHART"
check "xterm answered: sixel chosen" grep -q 'tui: images: sixel' "$LOG"
settled || true
shoot 0-before
R0=$R
check "before p: no chart pixels on screen ($R0)" test "$(jf "$R0" total)" -lt 20
check "before p: nothing placed (log)" test "$(placements)" -eq 0

key $'\t'
key p
check "p places the chart (log)" wait_until 20 'test "$(placements)" -ge 1'
# where it went, in cells, and the cell size in pixels (from the log)
read -r PY0 PX0 PC PR < <(sed -n 's/.*preview placed at \([0-9]*\),\([0-9]*\) (\([0-9]*\)x\([0-9]*\) cells.*/\1 \2 \3 \4/p' "$LOG" | head -1)
read -r CW CH < <(sed -n 's/.*cell \([0-9]*\)x\([0-9]*\) px.*/\1 \2/p' "$LOG" | head -1)
echo "placed at row $PY0 col $PX0, ${PC}x$PR cells of ${CW}x$CH px"
# the rect in pixels, a cell of slack around it (the xterm's border)
BOX="$(((PX0 - 1) * CW)) $(((PY0 - 1) * CH)) $(((PX0 + PC + 1) * CW)) $(((PY0 + PR + 1) * CH))"
# until the chart shows, then until the xterm has drawn all of it
shoot_until 1-preview 20 'test "$(jf "$R" inside)" -gt 3000' $BOX || true
settled || true
shoot 1-preview $BOX
R1=$R
echo "preview: $R1"
IN1=$(jf "$R1" inside)
check "p: the chart's colours fill the preview box" test "$IN1" -gt 3000
check "p: and nowhere else" test "$(jf "$R1" outside)" -lt 20

# measure: the conversation scrolls and redraws, the image stays put
# and is not sent again
for _ in 1 2 3 4 5; do key k; done
for _ in 1 2 3 4 5; do key j; done
key G
settled || true
shoot 2-scrolled $BOX
R2=$R
check "scrolling the conversation: the chart is intact ($R2)" \
	test "$(jf "$R2" inside)" -ge $((IN1 * 95 / 100))
check "and was placed once only" test "$(placements)" -eq 1

# the Approval dialog over it
key i
key 'remove it'
key $'\r'
check "rm asks: the Approval dialog" wait_until 20 'test "$(events approval_request)" -ge 1'
shoot_until 3-dialog 20 'test "$(jf "$R" dialog)" != -1 -a "$(jf "$R" total)" -lt 20' $BOX || true
R3=$R
echo "dialog: $R3"
check "the dialog is on screen" test "$(jf "$R3" dialog)" != -1
check "no chart pixels inside the dialog" test "$(jf "$R3" in_dialog)" -eq 0
check "the covered image is erased, not left in pieces" test "$(jf "$R3" total)" -lt 20

key n
check "denied" wait_until 20 'grep -q "\"decision\":\"denied\"" "$TR"'
check "the chart is placed again" wait_until 20 'test "$(placements)" -ge 2'
shoot_until 4-after 20 'test "$(jf "$R" inside)" -ge $((IN1 * 95 / 100)) -a "$(jf "$R" dialog)" = -1' $BOX || true
R4=$R
echo "after: $R4"
check "after the dialog: the chart is back in its place" \
	test "$(jf "$R4" inside)" -ge $((IN1 * 95 / 100))
check "no stray chart pixels elsewhere" test "$(jf "$R4" outside)" -lt 20
check "no dialog left" test "$(jf "$R4" dialog)" = -1

key $'\t' # back to a pane: v and Esc
key v
check "v: placed larger" wait_until 20 'test "$(placements)" -ge 3'
shoot_until 5-large 20 'test "$(jf "$R" total)" -gt $((IN1 * 3 / 2))' || true
R5=$R
check "v: more chart pixels than the pane's ($R5)" test "$(jf "$R5" total)" -gt $((IN1 * 3 / 2))
key $'\033'
shoot_until 6-closed 20 'test "$(jf "$R" total)" -lt 20' || true
R6=$R
check "Esc: the preview is gone, pixels too ($R6)" test "$(jf "$R6" total)" -lt 20

# what was sent, for the record (sizes of the sixel placements)
sed -n 's/.*tui: \(preview placed.*\)/  \1/p' "$LOG"
key $'\021'
check "Ctrl-Q quits (exit 0)" wait_until 20 'grep -qx 0 "$T/exit"'
finish
