#!/usr/bin/env bash
# Benchmark: assay-image on the hostile and heavy PNGs of
# tests/e2e/image_helper.sh, against the everyday case measured in the
# same run (median of N interleaved runs, whole processes): the
# decompression bomb (8000x5000 RGBA, 160 MB inflated from ~160 KB),
# a random heatmap and an RGB noise image (many colours: our own sixel
# encoder) next to the 1600x900 chart in an 800-pixel box; and a
# 10x10 image carrying a zTXt chunk that inflates to 200 MB next to the
# same image without it. These are the figures image_helper.sh used to
# assert (bomb under 10 s, zTXt under 2 s); it now only guards against
# a hang.
#   tests/bench/image_hostile.sh [BUILD_DIR] [-n RUNS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
shift || true
runs=15
[ "${1:-}" = -n ] && runs=$2
bin=$build/assay-image
[ -x "$bin" ] || { echo "no $bin: build first" >&2; exit 1; }
py=/usr/bin/python3
$py -c 'import matplotlib, PIL, numpy' 2>/dev/null || { echo "no matplotlib: run scripts/setup" >&2; exit 1; }
t=$(mktemp -d /tmp/assay-imghostile.XXXXXX)
trap 'rm -rf "$t"' EXIT
$py "$src/tests/bench/make_chart.py" "$t/chart.png" 1600 900
$py - "$t" <<'EOF'
import struct, sys, zlib
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from PIL import Image
t = sys.argv[1]
def chunk(k, d):
    return struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d))
def png(w, h, ct, idat, extra=b""):
    ihdr = struct.pack(">IIBBBBB", w, h, 8, ct, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra +
            chunk(b"IDAT", idat) + chunk(b"IEND", b""))
row = b"\0" + b"\x10\x20\x30\xff" * 8000
z = zlib.compressobj(9)
idat = b"".join(z.compress(row) for _ in range(5000)) + z.flush()
open(t + "/bomb.png", "wb").write(png(8000, 5000, 6, idat))
zt = b"Comment\0\0" + zlib.compress(b"\x1b]0;pwned\x07" * 20000000, 9)
small = zlib.compress(b"".join(b"\0" + b"\x80" * 30 for _ in range(10)))
open(t + "/ztxt.png", "wb").write(png(10, 10, 2, small, chunk(b"zTXt", zt)))
open(t + "/small.png", "wb").write(png(10, 10, 2, small))
rng = np.random.default_rng(3)
fig = plt.figure(figsize=(8, 6), dpi=100)
plt.imshow(rng.random((600, 800)), cmap="viridis", interpolation="nearest")
fig.savefig(t + "/heat.png")
Image.fromarray(rng.integers(0, 256, (1500, 2000, 3), dtype=np.uint8)).save(
    t + "/noise.png", compress_level=1)
EOF
echo "sixel, 800-pixel box (ratio against the chart):"
$py "$src/tests/bench/image_bench.py" "$t/chart.png" "$runs" \
	"chart 1600x900=$bin sixel box=800x600" \
	"bomb 8000x5000=$bin sixel box=800x600 <$t/bomb.png" \
	"heat 800x600=$bin sixel box=1000x750 <$t/heat.png" \
	"noise 2000x1500=$bin sixel box=1000x750 <$t/noise.png"
echo "blocks, 10x5 cells (ratio against the image without zTXt):"
$py "$src/tests/bench/image_bench.py" "$t/small.png" "$runs" \
	"10x10=$bin blocks cells=10x5 truecolor=1" \
	"10x10 + zTXt bomb=$bin blocks cells=10x5 truecolor=1 <$t/ztxt.png"
