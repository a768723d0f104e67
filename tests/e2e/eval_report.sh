#!/usr/bin/env bash
# assay eval's report.html in a real browser (Debian's headless
# Chromium): a suite whose checks print HTML and script into their
# reasons; the page's DOM holds no script element and shows those
# reasons as text, the page says no script may run, every session links
# its exported record, and the screenshot shows the three charts drawn
# (their bars and points in their colours). The same page with its
# charts taken out must fail the pixel check, so the check can fail.
# Skipped (77) only when chromium is not installed.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/chromium.bash"
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
[ -n "$CHROMIUM" ] || skip "chromium not installed (scripts/setup installs it)"
need_bwrap
$PY -c 'import PIL' 2>/dev/null || { echo "FAIL python3-pil is needed: run scripts/setup"; exit 1; }
cd "$T"
cat >"$T/one.json" <<'EOF'
{"turns": [{"text": "The answer is 42.", "tool_calls": []}]}
EOF
cat >"$T/hostile.py" <<'EOF'
print("<script>document.title='PWNED'</script><img src=x onerror=alert(1)> & <b>bold</b>")
raise SystemExit(1)
EOF
cat >"$T/fine.py" <<'EOF'
print("fine: 42 found")
EOF
cat >"$T/suite.json" <<EOF
{"defaults": {"provider": "script", "script": "$T/one.json", "ask": "none"},
 "tasks": [
  {"name": "good", "prompt": "What is the answer?", "check": {"script": "fine.py"}},
  {"name": "evil", "prompt": "What is the answer?", "check": {"script": "hostile.py"}},
  {"name": "slow", "prompt": "What is the answer?", "check": {"answer_contains": ["43"]}}]}
EOF
set +e
"$ASSAY" eval "$T/suite.json" -j 3 --dir "$T/ev" 2>"$T/ev.stderr"
code=$?
set -e
check "the eval exits 0 (got $code)" test "$code" -eq 0
R=$T/ev/report.html
check "report.html is written" test -s "$R"
check "it says so" grep -q "report: $T/ev/report.html" "$T/ev.stderr"
check "its policy allows no script" grep -q "default-src 'none'" "$R"
check "the hostile reason is escaped in the file" \
	grep -q '&lt;script&gt;document.title=&#39;PWNED&#39;&lt;/script&gt;' "$R"
check "every session links its record, and each record exists" $PY - "$T/ev" <<'PY'
import os, re, sys
page = open(os.path.join(sys.argv[1], "report.html")).read()
links = re.findall(r'href="([^"]+)"', page)
assert len(links) == 3, links
for l in links:
    assert os.path.isfile(os.path.join(sys.argv[1], l)), l
PY

chrome "$T/dom.html" "$R"
check "in the browser: no script element in the DOM" sh -c "! grep -qi '<script' '$T/dom.html'"
check "... the title is the suite's (no script changed it)" grep -q '<title>suite.json</title>' "$T/dom.html"
check "... the hostile reason shows as text" grep -q '&lt;b&gt;bold&lt;/b&gt;' "$T/dom.html"
check "... no img element came from it" sh -c "! grep -q '<img' '$T/dom.html'"

chrome "$T/shot.png" "$R"
# the same page without its charts
$PY - "$R" "$T/nocharts.html" <<'PY'
import re, sys
page = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(re.sub(r"<svg.*?</svg>", "", page, flags=re.S))
PY
chrome "$T/noshot.png" "$T/nocharts.html"
cat >"$T/colours.py" <<'EOF'
# colours.py SHOT.png: how many pixels of each chart's colour it has
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
want = {"pass-rate bars": (0x2f, 0x81, 0xf7), "cost points": (0xcf, 0x22, 0x2e),
        "time bars": (0x1a, 0x7f, 0x37)}
# every colour the image has, with its pixel count (PIL counts, in C)
have = {c: n for n, c in im.getcolors(im.width * im.height)}
count = {k: have.get(c, 0) for k, c in want.items()}
print(" ".join(f"{k.replace(' ', '_')}={n}" for k, n in count.items()))
# a bar is at least 20x16 pixels; the red is a point of radius 7 (and
# the FAIL words, a few pixels of it)
sys.exit(0 if count["pass-rate bars"] >= 300 and count["time bars"] >= 300
         and count["cost points"] >= 100 else 1)
EOF
check "the screenshot shows the three charts ($($PY "$T/colours.py" "$T/shot.png" || true))" \
	$PY "$T/colours.py" "$T/shot.png"
check "the page without charts fails that check ($($PY "$T/colours.py" "$T/noshot.png" || true))" \
	sh -c "! $PY '$T/colours.py' '$T/noshot.png'"
check "no chromium process left behind" test "$CHROME_LEFT" -eq 0
finish
