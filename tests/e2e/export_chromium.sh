#!/usr/bin/env bash
# The HTML export of the demo run, opened in a real browser (Debian's
# headless Chromium): the DOM holds every message of the conversation
# and the chart's exact bytes; the screenshot shows the conversation as
# rendered text and the chart's pixels where the image is drawn. Two
# pages that must fail the same checks prove they can: the export of
# the run with its image gone (no chart pixels) and the export with its
# text painted invisible and its chart mirrored.
# Skipped (77) only when chromium is not installed.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/chromium.bash"
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
[ -n "$CHROMIUM" ] || skip "chromium not installed (scripts/setup installs it)"
need_bwrap
$PY -c 'import numpy, PIL' 2>/dev/null ||
	{ echo "FAIL python3-numpy and python3-pil are needed: run scripts/setup"; exit 1; }
cd "$T"
start=$(date +%s%N)

set +e
"$ASSAY" demo --run-dir "$T/run" --out "$T/out" </dev/null 2>"$T/demo.stderr"
code=$?
set -e
check "demo exits 0 (got $code)" test "$code" -eq 0
check "the demo made its chart" test -s "$T/run/workspace/output/energy_anomalies.png"
# the workspace's chart alone: the copies sent to the model (figures of
# their own at their steps) are export_sent.sh's
$PY - "$T/run/transcript.jsonl" <<'EOF'
import json, sys
lines = [l for l in open(sys.argv[1]) if json.loads(l)["type"] != "image_sent"]
open(sys.argv[1], "w").writelines(lines)
EOF
"$ASSAY" export "$T/run" --format html -o "$T/full.html"

# the same run without its image (neither the workspace nor the
# archive has it): the export says so instead of embedding it
PNG=$T/chart.png
mv "$T/run/workspace/output/energy_anomalies.png" "$PNG"
mv "$T/run/workspace.tar.zst" "$T/workspace.tar.zst"
"$ASSAY" export "$T/run" --format html -o "$T/noimg.html"
check "without the image the export embeds none" \
	sh -c "! grep -q 'data:image/png' '$T/noimg.html' && grep -q 'energy_anomalies.png skipped' '$T/noimg.html'"
# the full export with the conversation's text painted in its own
# background colour and the chart mirrored: laid out the same, the
# chart's colours on screen, but no glyph and not the chart as it is
sed 's|</style>|.text{color:#f6f8fa}img{transform:scaleX(-1)}</style>|' \
	"$T/full.html" >"$T/hidden.html"

cat >"$T/look.py" <<'EOF'
# look.py dom DOM TRANSCRIPT PNG | shot SHOT.png PAGE.html PNG TRANSCRIPT
import base64, json, re, sys
from html.parser import HTMLParser


def messages(transcript):
    """The conversation's texts, as the export shows them."""
    out = []
    for line in open(transcript, encoding="utf-8"):
        e = json.loads(line)
        if e["type"] == "user_message" or (e["type"] == "assistant_message" and e["text"]):
            out.append(e["text"])
    return out


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.texts, self.imgs, self.cur = [], [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div" and a.get("class") == "text":
            self.cur = []
        if tag == "img":
            self.imgs.append(a.get("src", ""))

    def handle_data(self, data):
        if self.cur is not None:
            self.cur.append(data)

    def handle_endtag(self, tag):
        if tag == "div" and self.cur is not None:
            self.texts.append("".join(self.cur))
            self.cur = None


def dom(path, transcript, png):
    d = Dom()
    d.feed(open(path, encoding="utf-8").read())
    want = messages(transcript)
    assert d.texts == want, "conversation differs: %d blocks in the DOM, %d messages" % (
        len(d.texts), len(want))
    pre = "data:image/png;base64,"
    assert len(d.imgs) == 1 and d.imgs[0].startswith(pre), d.imgs[:1]
    assert base64.b64decode(d.imgs[0][len(pre):]) == open(png, "rb").read(), "image bytes differ"
    print("dom: %d messages, image of %d bytes" % (len(want), len(open(png, "rb").read())))


import numpy as np
from PIL import Image, ImageFilter


def rgb(path):
    im = Image.open(path).convert("RGBA")
    bg = Image.new("RGBA", im.size, (255, 255, 255, 255))
    bg.alpha_composite(im)
    return bg.convert("RGB")


def css_colours(html):
    style = re.search(r"<style>(.*?)</style>", html, re.S).group(1)
    out = [(255, 255, 255)]
    for h in re.findall(r"#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b", style):
        h = h if len(h) == 6 else "".join(c * 2 for c in h)
        out.append(tuple(int(h[i:i + 2], 16) for i in (0, 2, 4)))
    return out


_keys = {}


def keys(img):
    if id(img) not in _keys:
        p = np.asarray(img)
        q = (p >> 4).astype(np.uint16)
        k = (q[..., 0] << 8) | (q[..., 1] << 4) | q[..., 2]
        _keys[id(img)] = (img, k, (p.max(2) - p.min(2)) > 30)
    return _keys[id(img)][1:]


def signature(img, css, frac):
    """The image's own colours (4 bits a channel): coloured, common in
    it, and none of the colours the page's stylesheet paints."""
    k, sat = keys(img)
    u, c = np.unique(k[sat], return_counts=True)
    u = u[c > k.size * frac]
    cols = np.stack([(u >> 8) * 16 + 8, ((u >> 4) & 15) * 16 + 8, (u & 15) * 16 + 8], 1)
    near = np.zeros(len(u), bool)
    for css_c in css:
        near |= np.linalg.norm(cols - np.array(css_c), axis=1) < 24
    return u[~near]


def mask(img, sig):
    k, sat = keys(img)
    return np.isin(k, sig) & sat


def bbox(m):
    ys, xs = np.nonzero(m)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def chart(shot, png, css):
    """Where the chart is drawn in the screenshot: the screenshot's
    pixels of the chart's colours must form a block of the chart's
    shape, and that block must look like the chart scaled to it."""
    r = {"found": False}
    sig0 = signature(png, css, 0.0005)
    m0, s0 = mask(png, sig0), mask(shot, sig0)
    r["chart_colour_px_in_shot"] = int(s0.sum())
    if len(sig0) < 5:
        sys.exit("the chart has too few colours of its own to look for")
    if s0.sum() < 0.02 * m0.sum():
        return r
    # the scale from the widest extent, then the colours that survive it
    scale = (bbox(s0)[2] - bbox(s0)[0]) / (bbox(m0)[2] - bbox(m0)[0])
    if not 0.05 < scale <= 1.05:
        r["scale"] = scale
        return r
    small = png.resize((round(png.width * scale), round(png.height * scale)), Image.LANCZOS)
    sig = signature(small, css, 0.002)
    a, b = mask(small, sig), mask(shot, sig)
    if len(sig) < 3 or not b.any():
        return r
    ba, bb = bbox(a), bbox(b)
    x, y = bb[0] - ba[0], bb[1] - ba[1]
    r.update(scale=round(scale, 4), at=[x, y], size=list(small.size),
             px_ratio=round(b.sum() / a.sum(), 3),
             extent=[bb[2] - bb[0], bb[3] - bb[1], ba[2] - ba[0], ba[3] - ba[1]])
    # the browser's scaling rounds: the best of a few pixels around
    # (searched in grey, then measured in colour)
    best, grey = None, np.asarray(shot.convert("L")).astype(np.int16)
    for w in range(small.width - 3, small.width + 4):
        h = round(png.height * w / png.width)
        ref = np.asarray(png.convert("L").resize((w, h), Image.LANCZOS)).astype(np.int16)
        for dy in range(-2, 3):
            for dx in range(-2, 3):
                x1, y1 = x + dx, y + dy
                if x1 < 0 or y1 < 0 or x1 + w > shot.width or y1 + h > shot.height:
                    continue
                d = np.abs(grey[y1:y1 + h, x1:x1 + w] - ref).mean()
                if best is None or d < best[0]:
                    best = (d, x1, y1, w, h)
    if best is None:
        return r
    # compared slightly blurred: the browser places the image on a
    # fraction of a pixel and resamples it its own way
    _, x, y, w, h = best
    soft = lambda im: np.asarray(im.filter(ImageFilter.GaussianBlur(1.5))).astype(float)
    ref = soft(png.resize((w, h), Image.LANCZOS))
    block = soft(shot.crop((x, y, x + w, y + h)))
    r.update(diff=round(float(np.abs(block - ref).mean()), 2), at=[x, y], size=[w, h],
             diff_blank=round(float(np.abs(255 - ref).mean()), 2))
    same_shape = all(abs(bb[i + 2] - bb[i] - (ba[i + 2] - ba[i])) <= 0.03 * (ba[i + 2] - ba[i]) + 2
                     for i in (0, 1))
    r["found"] = bool(same_shape and 0.7 < r["px_ratio"] < 1.4 and r["diff"] < 0.25 * r["diff_blank"])
    return r


def text_blocks(shot, n_want):
    """The conversation blocks (.text: a #88aabb bar on the left) and
    how many of them show glyphs (dark pixels on the light block)."""
    p = np.asarray(shot)
    bar = (np.abs(p.astype(np.int16) - (0x88, 0xAA, 0xBB)).max(2) <= 8)
    cols = bar.sum(0)
    x = int(np.argmax(cols))
    rows = bar[:, x]
    runs, y = [], 0
    while y < len(rows):
        if rows[y]:
            y0 = y
            while y < len(rows) and rows[y]:
                y += 1
            if y - y0 >= 10:
                runs.append((y0, y))
        y += 1
    inked = 0
    for y0, y1 in runs:
        area = p[y0:y1, x + 4:x + 800]
        dark = (area.max(2) < 110).sum()
        inked += dark > 40 * max(1, (y1 - y0) // 22)
    return {"blocks": len(runs), "with_text": int(inked), "want": n_want}


def shot(path, page, png_path, transcript):
    img = rgb(path)
    html = open(page, encoding="utf-8").read()
    p = np.asarray(img)
    painted = np.nonzero((p < 240).any(axis=(1, 2)))[0]
    r = {"page_end": int(painted.max()) if len(painted) else 0, "height": img.height}
    img = img.crop((0, 0, img.width, min(img.height, r["page_end"] + 10)))
    r["text"] = text_blocks(img, len(messages(transcript)))
    r["chart"] = chart(img, rgb(png_path), css_colours(html))
    print(json.dumps(r))


if __name__ == "__main__":
    if sys.argv[1] == "dom":
        dom(*sys.argv[2:5])
    else:
        shot(*sys.argv[2:6])
EOF

# each screenshot is looked at while the browser draws the next one
TR=$T/run/transcript.jsonl
LOOKS=()
for s in full noimg hidden; do
	chrome "$T/$s.png" "$T/$s.html"
	$PY "$T/look.py" shot "$T/$s.png" "$T/$s.html" "$PNG" "$TR" >"$T/$s.json" &
	LOOKS+=($!)
done
chrome "$T/full.dom" "$T/full.html"
check "no chromium process left behind" test "$CHROME_LEFT" -eq 0
check "no chromium profile left behind" sh -c "! ls -d '$T'/profile.* 2>/dev/null"
check "the DOM has every message and the chart's bytes" $PY "$T/look.py" dom "$T/full.dom" "$TR" "$PNG"
for i in 0 1 2; do
	wait "${LOOKS[$i]}" || { echo "FAIL look.py on screenshot $i"; exit 1; }
done
for s in full noimg hidden; do echo "$s: $(cat "$T/$s.json")"; done
v() { jget "$T/$1.json" "x[0]$2"; } # v PAGE PYEXPR on the one result
check "the whole page fits in the window" test "$(v full '["page_end"] < x[0]["height"] - 100')" = True
check "screenshot: every conversation block shows text" \
	test "$(v full '["text"]["with_text"] == x[0]["text"]["want"] == x[0]["text"]["blocks"]')" = True
check "screenshot: the chart is drawn, pixel for pixel" test "$(v full '["chart"]["found"]')" = True
check "negative: without the image, no chart in the screenshot" test "$(v noimg '["chart"]["found"]')" = False
check "negative: without the image, no chart colours at all" \
	test "$(v noimg '["chart"]["chart_colour_px_in_shot"] < 50')" = True
check "negative: without the image, the text is still there" \
	test "$(v noimg '["text"]["with_text"] == x[0]["text"]["want"]')" = True
check "negative: invisible text shows no glyphs" test "$(v hidden '["text"]["with_text"]')" -eq 0
check "negative: ...though its blocks are there" test "$(v hidden '["text"]["blocks"]')" -eq "$(v full '["text"]["want"]')"
check "negative: a mirrored chart is not the chart" test "$(v hidden '["chart"]["found"]')" = False
check "negative: ...though its colours are on the page" \
	test "$(v hidden '["chart"]["chart_colour_px_in_shot"]')" -gt "$(v full '["chart"]["chart_colour_px_in_shot"] // 2')"
echo "time: $((($(date +%s%N) - start) / 1000000)) ms"
finish
