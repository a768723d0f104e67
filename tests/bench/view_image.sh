#!/usr/bin/env bash
# Benchmark: viewing a 4000x3000 matplotlib PNG (12 Mpixel).
# 1. Scaling: assay-image view to each provider's box (decode, area
#    average, PNG encode, in its confined process), against PIL doing
#    the same (open, RGBA over white, Image.BOX resize, PNG save) in the
#    same run: median of N interleaved runs each, the ratio printed.
# 2. The loop: a scripted run (real local sandbox) that views the image,
#    against the same run viewing a 400x300 one, in the same run: the
#    run's wall time and its loop's longest stretch without polling
#    (ASSAY_LOOP_STATS), median of N each. The scaling runs in the
#    helper process, so the loop's longest stretch should not grow with
#    the image.
#   tests/bench/view_image.sh [BUILD_DIR] [-n RUNS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
shift || true
runs=7
[ "${1:-}" = -n ] && runs=$2
bin=$build/assay-image
assay=$build/assay
[ -x "$bin" ] && [ -x "$assay" ] || { echo "no $bin or $assay: build first" >&2; exit 1; }
py=/usr/bin/python3
$py -c 'import matplotlib, PIL' 2>/dev/null || { echo "no matplotlib/PIL: run scripts/setup" >&2; exit 1; }
t=$(mktemp -d /tmp/assay-viewbench.XXXXXX)
trap 'rm -rf "$t"' EXIT
$py "$src/tests/bench/make_chart.py" "$t/big.png" 4000 3000
$py "$src/tests/bench/make_chart.py" "$t/small.png" 400 300
echo "image: 4000x3000, $(stat -c %s "$t/big.png") bytes"

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ms() { date +%s%N; }

# 1. scaling
cat >"$t/pil.py" <<'PY'
import io, sys
from PIL import Image
src, maxlong, maxpix, short = sys.argv[1], *map(int, sys.argv[2:5])
im = Image.open(src)
w, h = im.size
f = min(1.0, maxlong / max(w, h)) if maxlong else 1.0
if maxpix and w * h * f * f > maxpix:
    f = (maxpix / (w * h)) ** 0.5
if short and min(w, h) * f > short:
    f = short / min(w, h)
size = (max(1, int(w * f)), max(1, int(h * f)))
bg = Image.new("RGBA", im.size, (255, 255, 255, 255))
out = Image.alpha_composite(bg, im.convert("RGBA")).convert("RGB").resize(size, Image.BOX)
buf = io.BytesIO()
out.save(buf, "PNG")
print(size, len(buf.getvalue()))
PY
for box in "anthropic 1568 1150000 0" "openai 2048 0 768" "openai-low 512 0 0"; do
	set -- $box
	: >"$t/a"
	: >"$t/p"
	for _ in $(seq "$runs"); do
		s=$(ms)
		"$bin" view max=$2 mpx=$3 short=$4 <"$t/big.png" >"$t/out" 2>/dev/null
		echo $((($(ms) - s) / 1000)) >>"$t/a"
		s=$(ms)
		$py "$t/pil.py" "$t/big.png" "$2" "$3" "$4" >"$t/pil.out"
		echo $((($(ms) - s) / 1000)) >>"$t/p"
	done
	a=$(median <"$t/a")
	p=$(median <"$t/p")
	printf '%-11s assay-image %s -> %s bytes: %6.1f ms   PIL: %6.1f ms   ratio %.2f\n' \
		"$1" "$(head -n1 "$t/out" | cut -d' ' -f3-4 | tr ' ' x)" \
		"$(head -n1 "$t/out" | cut -d' ' -f7)" "$(echo "$a / 1000" | bc -l)" \
		"$(echo "$p / 1000" | bc -l)" "$(echo "$a / $p" | bc -l)"
done

# 2. the loop while it views
for size in big small; do
	cat >"$t/$size.json" <<JSON
{"turns": [
 {"text": "Staging.", "tool_calls": [{"name": "shell", "arguments": {"command": "mkdir -p output && cp input/$size.png output/chart.png"}}]},
 {"text": "Looking.", "tool_calls": [{"name": "view_image", "arguments": {"path": "output/chart.png"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
done
for i in $(seq "$runs"); do
	for size in big small; do
		rm -rf "$t/run" "$t/loop"
		s=$(ms)
		(cd "$t" && ASSAY_LOOP_STATS=$t/loop "$assay" run --provider script --script "$t/$size.json" \
			--ask none --send-images tool --input "$t/$size.png" --run-dir "$t/run" "view" \
			</dev/null >/dev/null 2>"$t/err") || { cat "$t/err"; exit 1; }
		echo $((($(ms) - s) / 1000000)) >>"$t/wall.$size"
		awk '{print $3}' "$t/loop" | sort -n | tail -1 >>"$t/gap.$size"
		grep -q '"type":"image_sent"' "$t/run/transcript.jsonl" || { echo "no image_sent"; exit 1; }
	done
done
wb=$(median <"$t/wall.big")
ws=$(median <"$t/wall.small")
gb=$(median <"$t/gap.big")
gs=$(median <"$t/gap.small")
echo "run viewing 4000x3000: ${wb} ms wall, loop's longest stretch ${gb} ms"
echo "run viewing 400x300:   ${ws} ms wall, loop's longest stretch ${gs} ms"
printf 'ratio (4000x3000 / 400x300): wall %.2f, longest stretch %.2f\n' \
	"$(echo "$wb / $ws" | bc -l)" "$(echo "($gb + 1) / ($gs + 1)" | bc -l)"
