#!/usr/bin/env bash
# image_helper.sh: the real assay-image helper on a real matplotlib
# chart in every mode (sixel decoded back with libsixel's sixel2png and
# kitty inflated, both compared with a reference downscale), and on
# hostile PNGs: huge dimensions, truncated data, a decompression bomb
# within the limits, a zTXt bomb. Each must end with a clear message or
# a correct rendering, never hang (the timeouts here are hang guards
# with wide margins; how fast each is, next to the everyday case, is
# tests/bench/image_hostile.sh's figure).
source "$(dirname "$0")/lib.bash"

BIN=${ASSAY_IMAGE_BIN:-$(dirname "$ASSAY")/assay-image}
[ -x "$BIN" ] || skip "assay-image not built at $BIN"
$PY -c 'import matplotlib, PIL, numpy' 2>/dev/null ||
	skip "/usr/bin/python3 lacks matplotlib (run scripts/setup)"

$PY "$SRC/tests/bench/make_chart.py" "$T/chart.png" 1600 900 ||
	{ fail "make the chart"; finish; exit 1; }

# run MODE ARGS... < FILE: the exit code in RC, the reply split into
# $T/head and $T/body, stderr in $T/err
run() {
	local mode=$1
	shift
	RC=0
	"$BIN" "$mode" "$@" >"$T/out" 2>"$T/err" || RC=$?
	head -n1 "$T/out" >"$T/head"
	tail -c +"$(($(head -n1 "$T/out" | wc -c) + 1))" "$T/out" >"$T/body"
}

# header field N (1-based after "ok")
field() { awk -v n="$1" '{print $(n + 1)}' "$T/head"; }

body_len_matches() { [ "$(field 8)" = "$(wc -c <"$T/body")" ]; }

# --- info ---
run info <"$T/chart.png"
check "info reads the header" grep -q "width=1600 height=900 color_type=6" "$T/body"

RC=0
cat "$T/chart.png" | "$BIN" info >"$T/out" 2>"$T/err" || RC=$?
check "a pipe on stdin works too" grep -q "width=1600 height=900" "$T/out"

# --- sixel: 800-pixel box, decoded back and compared ---
run sixel box=800x800 cell=10x20 <"$T/chart.png"
check "sixel succeeds" [ $RC -eq 0 ]
check "sixel header" grep -qx "ok sixel 80 23 800 450 1600 900 [0-9]*" "$T/head"
check "sixel payload length" body_len_matches
check "sixel DCS ... ST" $PY - "$T/body" <<'EOF'
import sys
d = open(sys.argv[1], "rb").read()
assert d.startswith(b"\x1bPq\"1;1;800;450"), d[:40]
assert d.endswith(b"\x1b\\")
assert b"\x1b" not in d[2:-2]
EOF
if command -v sixel2png >/dev/null; then
	sixel2png <"$T/body" >"$T/six.png" 2>/dev/null
	check "sixel decodes to a close copy of the chart" $PY - "$T/chart.png" "$T/six.png" <<'EOF'
import sys
import numpy as np
from PIL import Image
src = Image.open(sys.argv[1]).convert("RGBA")
bg = Image.new("RGBA", src.size, (0, 0, 0, 255))
ref = Image.alpha_composite(bg, src).convert("RGB").resize((800, 450), Image.BOX)
got = Image.open(sys.argv[2]).convert("RGB")
assert got.size == (800, 450), got.size
err = np.abs(np.asarray(ref, float) - np.asarray(got, float)).mean()
print("  mean abs error per channel: %.2f" % err)
assert err < 4.0, err
EOF
fi

# --- sixel of a many-coloured image (a random heatmap): libsixel's time
# grows with the colour runs of each band (0.6 s here, and SIGXCPU for
# noise), so these go to our own encoder; decoded back and compared ---
$PY - "$T/heat.png" "$T/noise.png" <<'EOF'
import sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from PIL import Image
rng = np.random.default_rng(3)
fig = plt.figure(figsize=(8, 6), dpi=100)
plt.imshow(rng.random((600, 800)), cmap="viridis", interpolation="nearest")
fig.savefig(sys.argv[1])
Image.fromarray(rng.integers(0, 256, (1500, 2000, 3), dtype=np.uint8)).save(
    sys.argv[2], compress_level=1)
EOF
for f in heat noise; do
	run sixel box=1000x750 <"$T/$f.png"
	check "sixel of the $f image: within the limits (exit $RC)" [ $RC -eq 0 ]
	grep -q . "$T/err" && sed 's/^/  /' "$T/err"
	check "sixel $f: payload length" body_len_matches
	if command -v sixel2png >/dev/null; then
		sixel2png <"$T/body" >"$T/six.png" 2>/dev/null
		check "sixel $f decodes to a close copy" $PY - "$T/$f.png" "$T/six.png" "$(field 4)" "$(field 5)" <<'EOF'
import sys
import numpy as np
from PIL import Image
w, h = int(sys.argv[3]), int(sys.argv[4])
src = Image.open(sys.argv[1]).convert("RGBA")
bg = Image.new("RGBA", src.size, (0, 0, 0, 255))
ref = Image.alpha_composite(bg, src).convert("RGB").resize((w, h), Image.BOX)
got = Image.open(sys.argv[2]).convert("RGB")
assert got.size == (w, h), got.size
err = np.abs(np.asarray(ref, float) - np.asarray(got, float)).mean()
print("  mean abs error per channel: %.2f" % err)
assert err < (40.0 if "noise" in sys.argv[1] else 6.0), err
EOF
	fi
done

# --- kitty: inflate the chunks and compare ---
run kitty cells=80x24 cell=10x20 id=5 <"$T/chart.png"
check "kitty succeeds" [ $RC -eq 0 ]
check "kitty header" grep -qx "ok kitty 80 23 800 450 1600 900 [0-9]*" "$T/head"
check "kitty payload length" body_len_matches
check "kitty chunks inflate to the scaled pixels" $PY - "$T/chart.png" "$T/body" <<'EOF'
import base64, re, sys, zlib
import numpy as np
from PIL import Image
d = open(sys.argv[2], "rb").read()
chunks = re.findall(rb"\x1b_G([^;]*);([A-Za-z0-9+/=]*)\x1b\\", d)
assert b"".join(b"\x1b_G" + k + b";" + v + b"\x1b\\" for k, v in chunks) == d
first = dict(kv.split(b"=") for kv in chunks[0][0].split(b","))
# transmitted, not shown (the TUI places it with a=p): these keys only
assert list(first) == [b"a", b"f", b"o", b"s", b"v", b"i", b"q", b"m"], first
assert first[b"a"] == b"t" and first[b"f"] == b"24" and first[b"o"] == b"z"
assert first[b"s"] == b"800" and first[b"v"] == b"450" and first[b"i"] == b"5"
assert first[b"q"] == b"2"
for k, v in chunks[:-1]:
    assert k.endswith(b"m=1") and len(v) == 4096
assert chunks[-1][0].endswith(b"m=0") and len(chunks[-1][1]) <= 4096
raw = zlib.decompress(base64.b64decode(b"".join(v for _, v in chunks)))
assert len(raw) == 800 * 450 * 3
got = np.frombuffer(raw, np.uint8).reshape(450, 800, 3).astype(float)
src = Image.open(sys.argv[1]).convert("RGBA")
bg = Image.new("RGBA", src.size, (0, 0, 0, 255))
ref = Image.alpha_composite(bg, src).convert("RGB").resize((800, 450), Image.BOX)
err = np.abs(np.asarray(ref, float) - got).mean()
print("  mean abs error per channel: %.2f" % err)
assert err < 1.0, err
EOF

# --- blocks ---
run blocks cells=80x24 cell=10x20 truecolor=1 <"$T/chart.png"
check "blocks header" grep -qx "ok blocks 80 23 80 45 1600 900 [0-9]*" "$T/head"
check "blocks payload length" body_len_matches
check "blocks: 23 lines of 80 half blocks" $PY - "$T/body" <<'EOF'
import re, sys
lines = open(sys.argv[1], "rb").read().decode().split("\n")
assert len(lines) == 23, len(lines)
for l in lines:
    assert l.endswith("\x1b[0m")
    assert l.count("\u2580") == 80
    assert re.fullmatch(r"(\x1b\[[0-9;]*m|\u2580)*", l), l[:80]
EOF
run blocks cells=40x10 <"$T/chart.png"
check "blocks 256 colours use 16..255 only" $PY - "$T/body" <<'EOF'
import re, sys
d = open(sys.argv[1]).read()
idx = [int(x) for x in re.findall(r"[34]8;5;(\d+)", d)]
assert idx and min(idx) >= 16 and max(idx) <= 255
assert "38;2;" not in d
EOF

# --- hostile inputs ---
$PY - "$T" <<'EOF'
import struct, sys, zlib
t = sys.argv[1]
def chunk(k, d):
    return struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d))
def png(w, h, ct, idat, extra=b""):
    ihdr = struct.pack(">IIBBBBB", w, h, 8, ct, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra +
            chunk(b"IDAT", idat) + chunk(b"IEND", b""))
open(t + "/huge.png", "wb").write(png(100000, 100000, 2, zlib.compress(b"\0" * 1000)))
# 8000 x 5000 RGBA = 40 Mpixel (the limit), 160 MB inflated from ~160 KB
row = b"\0" + b"\x10\x20\x30\xff" * 8000
z = zlib.compressobj(9)
idat = b"".join(z.compress(row) for _ in range(5000)) + z.flush()
open(t + "/bomb.png", "wb").write(png(8000, 5000, 6, idat))
# a small image whose zTXt inflates to 200 MB of escape sequences
zt = b"Comment\0\0" + zlib.compress(b"\x1b]0;pwned\x07" * 20000000, 9)
small = zlib.compress(b"".join(b"\0" + b"\x80" * 30 for _ in range(10)))
open(t + "/ztxt.png", "wb").write(png(10, 10, 2, small, chunk(b"zTXt", zt)))
good = open(t + "/chart.png", "rb").read()
open(t + "/trunc.png", "wb").write(good[: len(good) // 2])
open(t + "/notpng.png", "wb").write(b"<svg xmlns='http://www.w3.org/2000/svg'/>")
EOF

run sixel <"$T/huge.png"
check "huge dimensions: exit 4" [ $RC -eq 4 ]
check "huge dimensions: clear message" grep -q "100000x100000 pixels: too large" "$T/err"

run sixel <"$T/trunc.png"
check "truncated: exit 5" [ $RC -eq 5 ]
check "truncated: clear message" grep -q "truncated PNG" "$T/err"

run sixel <"$T/notpng.png"
check "not a PNG: exit 3" [ $RC -eq 3 ]
check "not a PNG: clear message" grep -q "not a PNG image" "$T/err"

rc=0
timeout -k 5 120 "$BIN" sixel box=800x600 <"$T/bomb.png" >"$T/out" 2>"$T/err" || rc=$?
echo "  bomb: exit $rc: $(head -c 200 "$T/err")$(head -n1 "$T/out")"
check "bomb: finishes within the limits (no hang)" bash -c "[ $rc -ne 124 ] && [ $rc -ne 137 ]"
check "bomb: a rendering or a clear message" \
	bash -c "grep -q '^ok sixel' '$T/out' || grep -q '^image: ' '$T/err'"

RC=0
timeout -k 5 60 "$BIN" blocks cells=10x5 truecolor=1 <"$T/ztxt.png" >"$T/out" 2>"$T/err" || RC=$?
head -n1 "$T/out" >"$T/head"
tail -c +"$(($(head -n1 "$T/out" | wc -c) + 1))" "$T/out" >"$T/body"
check "zTXt bomb: ignored, rendered (exit $RC, no hang)" [ $RC -eq 0 ]
check "zTXt bomb: the 10x10 image as 10x5 cells" grep -qx "ok blocks 10 5 10 10 10 10 [0-9]*" "$T/head"
check "zTXt bomb: nothing of it in the payload" bash -c "! grep -q pwned '$T/body'"

# the helper's confinement
RC=0
"$BIN" selfcheck >"$T/self" 2>&1 || RC=$?
sed 's/^/  /' "$T/self"
check "selfcheck runs" [ $RC -eq 0 ]
check "selfcheck: CPU limit 4 s" grep -qx "cpu limit: 4 s" "$T/self"
if grep -qx "seccomp: on" "$T/self"; then
	check "seccomp: no files opened" grep -qx "open: Operation not permitted" "$T/self"
	check "seccomp: no sockets" grep -qx "socket: Operation not permitted" "$T/self"
	check "seccomp: no processes" grep -qx "fork: Operation not permitted" "$T/self"
	# what code inside a subverted libpng could try after confine():
	# an allow list refuses all of it, and the victim file is intact
	mkdir -p "$T/sys/empty"
	echo "keep me" >"$T/sys/victim"
	chmod 644 "$T/sys/victim"
	RC=0
	"$BIN" selfcheck-syscalls "$T/sys" >"$T/sys.out" 2>&1 || RC=$?
	sed 's/^/  /' "$T/sys.out"
	check "seccomp: every forbidden call refused" [ $RC -eq 0 ]
	for c in openat io_uring_setup socket kill fork execve truncate chmod \
		renameat linkat symlinkat unlinkat rmdir mkdirat stat memfd_create \
		ioctl; do
		check "seccomp: $c refused" grep -qx "$c: refused" "$T/sys.out"
	done
	check "seccomp: the victim file is untouched" bash -c \
		"[ \"\$(cat '$T/sys/victim')\" = 'keep me' ] &&
		 [ \"\$(stat -c %a '$T/sys/victim')\" = 644 ] &&
		 [ -d '$T/sys/empty' ] && [ ! -e '$T/sys/moved' ] &&
		 [ ! -e '$T/sys/link' ] && [ ! -e '$T/sys/sym' ] &&
		 [ ! -e '$T/sys/newdir' ]"
elif grep -qx "seccomp: off (sanitizer build)" "$T/self"; then
	echo "  (sanitizer build: no seccomp filter and no memory limit;"
	echo "   the forbidden-syscall tries are skipped)"
	RC=0
	"$BIN" selfcheck-syscalls "$T" >"$T/sys.out" 2>&1 || RC=$?
	check "selfcheck-syscalls tries nothing without the filter" [ $RC -eq 3 ]
else
	fail "seccomp filter not in force: $(head -n1 "$T/self")"
fi

# only the helper loads the image libraries
if [ -x "$ASSAY" ] && command -v ldd >/dev/null; then
	check "assay itself links neither libsixel nor libpng" \
		bash -c "! ldd '$ASSAY' | grep -E 'libsixel|libpng'"
	check "assay-image links libsixel and libpng" \
		bash -c "ldd '$BIN' | grep -q libsixel && ldd '$BIN' | grep -q libpng"
fi

run sixel bogus=1 <"$T/chart.png"
check "bad argument: exit 2" [ $RC -eq 2 ]

finish
