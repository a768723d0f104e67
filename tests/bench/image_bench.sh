#!/usr/bin/env bash
# Benchmark: encode a 1600x900 matplotlib chart as sixel to fit an
# 800-pixel-wide box with assay-image, against img2sixel -w 800 and
# chafa -f sixels at the same pixel size, in the same run (median of N
# interleaved runs, whole processes including PNG decoding).
#   tests/bench/image_bench.sh [BUILD_DIR] [-n RUNS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
shift || true
runs=15
[ "${1:-}" = -n ] && runs=$2
bin=$build/assay-image
[ -x "$bin" ] || { echo "no $bin: build first" >&2; exit 1; }
py=/usr/bin/python3
$py -c 'import matplotlib' 2>/dev/null || { echo "no matplotlib: run scripts/setup" >&2; exit 1; }
t=$(mktemp -d /tmp/assay-imgbench.XXXXXX)
trap 'rm -rf "$t"' EXIT
png=$t/chart.png
$py "$src/tests/bench/make_chart.py" "$png" 1600 900
echo "chart: $(stat -c %s "$png") bytes, 1600x900 RGBA (matplotlib $($py -c 'import matplotlib; print(matplotlib.__version__)'))"
cmds=("assay-image=$bin sixel box=800x800")
command -v img2sixel >/dev/null && cmds+=("img2sixel -w 800=img2sixel -w 800 $png")
# chafa assumes 8x8-pixel cells when stdout is not a terminal: 100
# columns at font ratio 1/1 is 800 pixels wide, like the others. Its
# "80 columns" (10x20 cells) form makes 640x174 pixels: listed too.
command -v chafa >/dev/null && cmds+=(
	"chafa 800px=chafa -f sixels --size=100x100 --font-ratio=1/1 $png"
	"chafa 80 cols=chafa -f sixels --size=80x23 $png")
[ ${#cmds[@]} -gt 1 ] || echo "(img2sixel and chafa are not installed: nothing to compare with)"
$py "$src/tests/bench/image_bench.py" "$png" "$runs" "${cmds[@]}"
# through the TUI's client, with the poll loop's worst delay meanwhile
cc -O2 -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE \
	-I"$src/include" -I"$src/src" "$src/tests/bench/image_loop.c" \
	"$src/src/tui/image.c" "$build/libassaylib.a" -lm -o "$t/image_loop"
echo "through src/tui/image.c (80x40 cells of 10x20 px; a 5 ms loop timer runs meanwhile):"
ASSAY_IMAGE_BIN=$bin "$t/image_loop" "$t" chart.png "$runs"
# the other modes, for reference
$py "$src/tests/bench/image_bench.py" "$png" "$runs" \
	"assay-image sixel=$bin sixel box=800x800" \
	"assay-image kitty=$bin kitty cells=80x24" \
	"assay-image blocks=$bin blocks cells=80x24 truecolor=1" \
	"assay-image blocks256=$bin blocks cells=80x24"
