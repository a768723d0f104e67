#!/usr/bin/env bash
# image_helper.sh: the real assay-image helper on a real matplotlib
# chart in every mode (sixel decoded back with libsixel's sixel2png and
# kitty inflated, both compared with a reference downscale), and on
# hostile PNGs: huge dimensions, truncated data, a decompression bomb
# within the limits, a zTXt bomb. Each must end with a clear message or
# a correct rendering, never hang (the timeouts here are hang guards
# with wide margins; how fast each is, next to the everyday case, is
# tests/bench/image_hostile.sh's figure). And `view`, the image for the
# model: PNG re-encoded and compared with PIL's scaling, determinism,
# transparency over white, JPEG/GIF/WebP passed through or scaled or
# refused, bombs refused from their header, lying headers.
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

# --- view: an image for the model (PNG re-encoded, JPEG/GIF/WebP
# passed through when they fit; the provider boxes of protocols.md F) ---
ANTH="max=1568 mpx=1150000 short=0"
$PY "$SRC/tests/bench/make_chart.py" "$T/wide.png" 3000 1800 ||
	fail "make the 3000x1800 chart"

# vrun ARGS... < FILE: like run, for view ("ok view W H SRC_W SRC_H
# NBYTES MEDIA_TYPE", fields 2..7)
vrun() {
	RC=0
	"$BIN" view "$@" >"$T/out" 2>"$T/err" || RC=$?
	head -n1 "$T/out" >"$T/head"
	tail -c +"$(($(head -n1 "$T/out" | wc -c) + 1))" "$T/out" >"$T/body"
}
view_len_matches() { [ "$(field 6)" = "$(wc -c <"$T/body")" ]; }

# compare.py BODY SRC W H BG: the body is a PNG of W x H, IHDR, IDAT
# and IEND only, close to SRC over BG scaled by PIL's box filter
cat >"$T/compare.py" <<'EOF'
import struct, sys
import numpy as np
from PIL import Image
body, src, w, h, bg = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
limit = float(sys.argv[6]) if len(sys.argv) > 6 else 3.0
d = open(body, "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n", d[:8]
i, kinds = 8, []
while i < len(d):
    n = struct.unpack(">I", d[i:i + 4])[0]
    kinds.append(d[i + 4:i + 8])
    i += 12 + n
assert set(kinds) == {b"IHDR", b"IDAT", b"IEND"}, kinds
got = Image.open(body)
assert got.size == (w, h) and got.mode == "RGB", (got.size, got.mode)
s = Image.open(src)
s.seek(0)
s = s.convert("RGBA")
under = Image.new("RGBA", s.size, tuple(int(bg[k:k + 2], 16) for k in (0, 2, 4)) + (255,))
ref = Image.alpha_composite(under, s).convert("RGB").resize((w, h), Image.BOX)
err = np.abs(np.asarray(ref, float) - np.asarray(got, float)).mean()
print("  mean abs difference per channel from PIL's box scaling: %.3f" % err)
assert err < limit, err
EOF

vrun $ANTH <"$T/wide.png"
check "view 3000x1800 for Anthropic: 1384x830 (<= 1568 a side, <= 1.15 Mpixel)" \
	grep -qx "ok view 1384 830 3000 1800 [0-9]* image/png" "$T/head"
check "view: payload length" view_len_matches
check "view: a PNG close to PIL's scaling of the chart" \
	$PY "$T/compare.py" "$T/body" "$T/wide.png" 1384 830 ffffff
cp "$T/body" "$T/view1.png"
vrun $ANTH <"$T/wide.png"
check "view: the same bytes twice" cmp -s "$T/body" "$T/view1.png"
RC=0
cat "$T/wide.png" | "$BIN" view $ANTH >"$T/pipe.out" 2>"$T/err" || RC=$?
check "view: the same bytes from a pipe" cmp -s "$T/pipe.out" "$T/out"

vrun max=2048 mpx=0 short=768 <"$T/wide.png"
check "view for OpenAI detail high: 1280x768" \
	grep -qx "ok view 1280 768 3000 1800 [0-9]* image/png" "$T/head"
vrun max=512 mpx=0 short=0 <"$T/wide.png"
check "view for OpenAI detail low: 512x307" \
	grep -qx "ok view 512 307 3000 1800 [0-9]* image/png" "$T/head"

# a PNG that fits is still decoded and re-encoded: no text chunk
# survives, the pixels do, exactly
$PY - "$T/chart.png" "$T/texted.png" <<'EOF'
import sys
from PIL import Image, PngImagePlugin
info = PngImagePlugin.PngInfo()
info.add_text("Comment", "\x1b]0;pwned\x07 from the metadata")
Image.open(sys.argv[1]).save(sys.argv[2], pnginfo=info)
EOF
vrun $ANTH <"$T/texted.png"
check "view of a PNG that fits: its size kept (1600x900 -> 1430x804 by the Mpixel limit)" \
	grep -qx "ok view 1430 804 1600 900 [0-9]* image/png" "$T/head"
vrun max=0 mpx=0 short=0 <"$T/texted.png"
check "view without limits: 1600x900 unchanged in size" \
	grep -qx "ok view 1600 900 1600 900 [0-9]* image/png" "$T/head"
check "view without limits: re-encoded, metadata gone, pixels exact" \
	$PY "$T/compare.py" "$T/body" "$T/chart.png" 1600 900 ffffff 0.0001
check "view: nothing of the text chunk in the output" bash -c "! grep -q pwned '$T/body'"

# a transparent chart: white under it by default, bg= otherwise
$PY - "$T/transp.png" <<'EOF'
import sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(20, 12), dpi=100)
ax.plot(range(10), [x * x for x in range(10)], lw=3)
ax.set_title("transparent background")
fig.savefig(sys.argv[1], transparent=True)
EOF
vrun $ANTH <"$T/transp.png"
check "view of a transparent chart succeeds" [ $RC -eq 0 ]
check "view: transparent background -> white" $PY - "$T/body" <<'EOF'
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
w, h = im.size
for p in [(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1), (w // 2, 2)]:
    assert im.getpixel(p) == (255, 255, 255), (p, im.getpixel(p))
assert min(min(c) for _, c in im.getcolors(w * h)) < 64  # the text is dark
EOF
check "view: the transparent chart close to PIL's over white" \
	$PY "$T/compare.py" "$T/body" "$T/transp.png" "$(field 2)" "$(field 3)" ffffff
vrun $ANTH bg=000000 <"$T/transp.png"
check "view bg=000000: black under it" $PY - "$T/body" <<'EOF'
import sys
from PIL import Image
assert Image.open(sys.argv[1]).convert("RGB").getpixel((0, 0)) == (0, 0, 0)
EOF

# JPEG, GIF, WebP: passed through unchanged when they fit
$PY - "$T" <<'EOF'
import sys
from PIL import Image
t = sys.argv[1]
big = Image.open(t + "/wide.png").convert("RGB")
small = big.resize((800, 480), Image.BOX)
small.save(t + "/s.jpg", quality=90)
small.save(t + "/s.gif")
small.save(t + "/s.webp")
small.save(t + "/sl.webp", lossless=True)
big.save(t + "/big.jpg", quality=95)
big.save(t + "/big.gif")
big.save(t + "/big.webp")
flip = small.transpose(Image.FLIP_LEFT_RIGHT)
small.save(t + "/anim.gif", save_all=True, append_images=[flip], duration=100, loop=0)
small.save(t + "/anim.webp", save_all=True, append_images=[flip], duration=100, loop=0)
d = open(t + "/big.jpg", "rb").read()
open(t + "/trunc.jpg", "wb").write(d[: len(d) // 2])
EOF
for f in s.jpg:jpeg s.gif:gif s.webp:webp sl.webp:webp; do
	vrun $ANTH <"$T/${f%%:*}"
	check "view of a small ${f%%:*}: passed through as image/${f#*:}" \
		grep -qx "ok view 800 480 800 480 [0-9]* image/${f#*:}" "$T/head"
	check "view of a small ${f%%:*}: the file's own bytes" cmp -s "$T/body" "$T/${f%%:*}"
done

# too large: a JPEG or GIF is decoded by libsixel's loaders (inside the
# same seccomp filter) and sent as a scaled PNG; a WebP is refused
vrun $ANTH <"$T/big.jpg"
check "view of a 3000x1800 JPEG: a 1384x830 PNG" \
	grep -qx "ok view 1384 830 3000 1800 [0-9]* image/png" "$T/head"
check "view of the JPEG: close to PIL's decoding and scaling" \
	$PY "$T/compare.py" "$T/body" "$T/big.jpg" 1384 830 ffffff
vrun $ANTH <"$T/big.gif"
check "view of a 3000x1800 GIF: a 1384x830 PNG" \
	grep -qx "ok view 1384 830 3000 1800 [0-9]* image/png" "$T/head"
check "view of the GIF: close to PIL's" \
	$PY "$T/compare.py" "$T/body" "$T/big.gif" 1384 830 ffffff
vrun $ANTH <"$T/anim.gif"
check "view of an animated GIF: its first frame as PNG" \
	grep -qx "ok view 800 480 800 480 [0-9]* image/png" "$T/head"
check "view of the animated GIF: the first frame's pixels" \
	$PY "$T/compare.py" "$T/body" "$T/anim.gif" 800 480 ffffff 0.0001
vrun $ANTH <"$T/big.webp"
check "view of a 3000x1800 WebP: refused, exit 4" [ $RC -eq 4 ]
check "view of the WebP: says what to do" \
	grep -q "a WebP of 3000x1800 is larger than the model takes (1568 px a side, 1.15 Mpixel); save it smaller or as PNG" "$T/err"
vrun $ANTH <"$T/anim.webp"
check "view of an animated WebP: refused, exit 4" [ $RC -eq 4 ]
# within the box but over 3.9 MB (5 MiB in base64, Anthropic's limit
# an image): a JPEG is re-encoded, a WebP refused
$PY - "$T" <<'EOF'
import sys
import numpy as np
from PIL import Image
rng = np.random.default_rng(5)
Image.fromarray(rng.integers(0, 256, (1200, 1800, 3), dtype=np.uint8)).save(
    sys.argv[1] + "/heavy.jpg", quality=100)
Image.fromarray(rng.integers(0, 256, (1100, 1300, 3), dtype=np.uint8)).save(
    sys.argv[1] + "/heavy.webp", lossless=True, method=0)
EOF
echo "  heavy.jpg: $(wc -c <"$T/heavy.jpg") bytes, heavy.webp: $(wc -c <"$T/heavy.webp") bytes"
vrun $ANTH <"$T/heavy.jpg"
check "view of an 1800x1200 JPEG over 3.9 MB: re-encoded as PNG (1.15 Mpixel: 1313x875)" \
	grep -qx "ok view 1313 875 1800 1200 [0-9]* image/png" "$T/head"
vrun max=0 mpx=0 short=0 <"$T/heavy.jpg"
check "view of the heavy JPEG, no limits: a PNG all the same" \
	grep -qx "ok view 1800 1200 1800 1200 [0-9]* image/png" "$T/head"
vrun max=0 mpx=0 short=0 <"$T/heavy.webp"
check "view of a WebP over 3.9 MB: refused, exit 4, said" \
	bash -c "[ $RC -eq 4 ] && grep -q 'is more than one image may be (3.9 MB: 5 MiB in base64)' '$T/err'"
vrun $ANTH <"$T/trunc.jpg"
check "view of a truncated JPEG: exit 5" [ $RC -eq 5 ]
check "view of a truncated JPEG: says so" grep -q "truncated JPEG" "$T/err"

# hostile: a bomb refused from its header (quickly: nothing decoded), a
# JPEG whose frame header claims 9000x9000, PNGs whose IHDR lies
$PY - "$T" <<'EOF'
import struct, sys, zlib
t = sys.argv[1]
def chunk(k, d):
    return struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d))
def png(w, h, rows_w, rows_h):
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    raw = b"".join(b"\0" + b"\x40\x80\xc0" * rows_w for _ in range(rows_h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
open(t + "/lie_size.png", "wb").write(png(2000, 2000, 2000, 100))
open(t + "/lie_width.png", "wb").write(png(1200, 100, 1000, 100))
sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, 9000, 9000, 1) + b"\x01\x11\x00"
sos = b"\xff\xda" + struct.pack(">HB", 8, 1) + b"\x01\x00\x00\x3f\x00"
open(t + "/bomb.jpg", "wb").write(b"\xff\xd8" + sof + sos + b"\x00" * 64 + b"\xff\xd9")
EOF
t0=$(date +%s%N)
vrun $ANTH <"$T/bomb.png"
ms=$((($(date +%s%N) - t0) / 1000000))
echo "  8000x5000 bomb refused in $ms ms: $(cat "$T/err")"
check "view of an 8000x5000 bomb: exit 4" [ $RC -eq 4 ]
check "view of the bomb: from its header, with a reason" \
	grep -q "image is 8000x5000 pixels: too large to view (limits: 10000 pixels a side, 25 Mpixel)" "$T/err"
check "view of the bomb: quickly (under 1 s, nothing inflated)" [ "$ms" -lt 1000 ]
vrun $ANTH <"$T/bomb.jpg"
check "view of a JPEG claiming 9000x9000: exit 4" [ $RC -eq 4 ]
check "view of the JPEG bomb: its size said" grep -q "9000x9000 pixels: too large to view" "$T/err"
vrun $ANTH <"$T/lie_size.png"
check "view of a PNG whose IHDR claims more than its data: exit 5" [ $RC -eq 5 ]
check "view of the lying PNG: a reason" \
	grep -qx "image: damaged PNG: Not enough image data (its header says 2000x2000); save it again" "$T/err"
sed 's/^/  /' "$T/err"
vrun $ANTH <"$T/lie_width.png"
check "view of a PNG whose IHDR has the wrong width: exit 5" [ $RC -eq 5 ]
check "view of the wrong width: a reason" grep -q "damaged PNG: .*(its header says 1200x100)" "$T/err"
sed 's/^/  /' "$T/err"
vrun $ANTH <"$T/trunc.png"
check "view of a truncated PNG: exit 5, said" \
	bash -c "[ $RC -eq 5 ] && grep -q 'truncated PNG' '$T/err'"
vrun $ANTH <"$T/notpng.png"
check "view of an SVG: exit 3" [ $RC -eq 3 ]
check "view of an SVG: says what to do" \
	grep -q "not an image the model can view: this is SVG or XML (PNG, JPEG, GIF and WebP only; save charts with plt.savefig(\"NAME.png\"))" "$T/err"
vrun $ANTH </dev/null
check "view of an empty file: exit 3" [ $RC -eq 3 ]

# a 4000x3000 chart within the CPU limit (4 s), its stages timed
$PY "$SRC/tests/bench/make_chart.py" "$T/huge_chart.png" 4000 3000
RC=0
ASSAY_IMAGE_TIMING=1 "$BIN" view $ANTH <"$T/huge_chart.png" >"$T/out" 2>"$T/err" || RC=$?
echo "  4000x3000 PNG -> $(head -n1 "$T/out"): $(tr -s ' \n' ' ' <"$T/err")"
check "view of a 4000x3000 PNG: within the limits" [ $RC -eq 0 ]

vrun max=1568 <"$T/wide.png"
check "view without mpx= and short=: exit 2" [ $RC -eq 2 ]
vrun $ANTH cells=80x24 <"$T/wide.png"
check "view with a preview's key: exit 2" [ $RC -eq 2 ]

run sixel bogus=1 <"$T/chart.png"
check "bad argument: exit 2" [ $RC -eq 2 ]

finish
