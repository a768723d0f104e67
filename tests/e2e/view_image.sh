#!/usr/bin/env bash
# Images back to the model, per provider through its fake (which checks
# image parts as the API does: base64, the media type against the bytes,
# the sizes; Chat's tool messages refuse image parts) and with the real
# local sandbox and the real assay-image helper:
# 1. view_image of a 3000x1800 matplotlib chart (--send-images tool): the
#    request holds one PNG, scaled to the provider's box, that decodes to
#    the chart as PIL scales it (mean difference per channel < 3 of 255);
#    the transcript holds its sha256, not its bytes; the run dir keeps
#    the bytes sent, once.
# 2. --send-images auto: a python cell that saves two figures sends both
#    with that call's result, and no other call sends them again.
# 3. assay resume of such a run: 0 requests; a fork from before the view
#    sends the same image again, byte for byte.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
unset ANTHROPIC_BASE_URL ASSAY_PROVIDER ASSAY_MODEL OPENAI_BASE_URL
export XDG_CONFIG_HOME=$T/xdg
$PY -c 'import PIL, matplotlib' 2>/dev/null ||
	{ echo "FAIL no PIL/matplotlib for $PY: run scripts/setup"; exit 1; }

cat >view.json <<'JSON'
{"turns": [
 {"text": "Drawing the chart.", "tool_calls": [{"name": "python", "arguments": {"code": "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt, numpy as np, os\nos.makedirs('output', exist_ok=True)\nx = np.linspace(0, 10, 400)\nfig, ax = plt.subplots(figsize=(10, 6), dpi=300)\nax.plot(x, np.sin(x), label='sin')\nax.plot(x, np.cos(x), label='cos')\nax.set_title('waves'); ax.legend()\nfig.savefig('output/chart.png')\nprint('saved')"}}]},
 {"text": "Looking at it.", "tool_calls": [{"name": "view_image", "arguments": {"path": "output/chart.png"}}]},
 {"text": "The chart shows two waves; the legend is clear of the lines.", "tool_calls": []}
]}
JSON
cat >auto.json <<'JSON'
{"turns": [
 {"text": "Two figures.", "tool_calls": [{"name": "python", "arguments": {"code": "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt, os\nos.makedirs('output', exist_ok=True)\nfor i in (1, 2):\n    fig, ax = plt.subplots(figsize=(4, 3), dpi=100)\n    ax.bar(['a', 'b', 'c'], [i, 2 * i, 3 * i])\n    fig.savefig(f'output/fig{i}.png')\n    plt.close(fig)\nprint('two figures')"}}]},
 {"text": "Listing.", "tool_calls": [{"name": "shell", "arguments": {"command": "ls output && echo more > output/notes.txt"}}]},
 {"text": "Both bars rise from a to c.", "tool_calls": []}
]}
JSON

# the log's lines (one per request)
log_lines() { fake_requests | tr -d ' '; }
# n_images of each request
n_images() { $PY -c 'import json,sys; print([json.loads(l).get("n_images", 0) for l in open(sys.argv[1])])' "$FAKE_LOG"; }

# provider_run NAME PROVIDER FAKE_PY MODEL SCRIPT [assay options]
provider_run() {
	local name=$1 prov=$2 fake=$3 model=$4 script=$5
	shift 5
	FAKE=$SRC/tests/fakes/$fake
	rm -rf "$T/img.$name"
	start_fake "$script" --images-dir "$T/img.$name"
	local url=$URL
	[ "$prov" = anthropic ] && url=${URL%/v1}
	set +e
	OPENAI_API_KEY=sk-img ANTHROPIC_API_KEY=sk-ant-img ANTHROPIC_BASE_URL=$url \
		"$ASSAY" run --provider "$prov" --base-url "$url" --model "$model" --ask none \
		--run-dir "$T/$name" --out "$T/out.$name" "$@" "draw and check" \
		</dev/null >"$T/$name.out" 2>"$T/$name.err"
	CODE=$?
	set -e
	LOG_OF[$name]=$FAKE_LOG
}
declare -A LOG_OF

# check_view NAME MAXLONG MAXPIX MAXSHORT: the view run's request
check_view() {
	local name=$1 tr=$T/$1/transcript.jsonl
	check "$name: exits 0 (got $CODE)" test "$CODE" -eq 0 || { tail -5 "$T/$name.err"; return; }
	check "$name: one image_sent, how view" \
		test "$(jget "$tr" 'len([e for e in x if e["type"]=="image_sent" and e.get("how")=="view" and "error" not in e])')" = 1
	check "$name: 3 requests, the last with one image" test "$(n_images)" = "[0, 0, 1]"
	$PY - "$tr" "$T/$name" "$T/img.$name" "$FAKE_LOG" "$2" "$3" "$4" "$T/out.$name/output/chart.png" >"$T/$name.cmp" <<'PY' || true
import hashlib, io, json, os, sys
from PIL import Image
tr, run, imgdir, log, maxlong, maxpix, maxshort, orig = sys.argv[1:9]
ev = [json.loads(l) for l in open(tr)]
sent = [e for e in ev if e["type"] == "image_sent"][0]
req = [json.loads(l) for l in open(log)][-1]["images"][0]
got = open(os.path.join(imgdir, req["file"]), "rb").read()
kept = open(os.path.join(run, sent["file"]), "rb").read()
print("sha", hashlib.sha256(got).hexdigest() == sent["sha256"] == hashlib.sha256(kept).hexdigest())
im = Image.open(io.BytesIO(got))
w, h = im.size
print("size", (w, h) == (sent["width"], sent["height"]), w, h, im.format)
ok = (not int(maxlong) or max(w, h) <= int(maxlong)) and \
     (not int(maxpix) or w * h <= int(maxpix)) and \
     (not int(maxshort) or min(w, h) <= int(maxshort))
print("box", ok)
src = Image.open(orig)
print("src", src.size == (sent["src_width"], sent["src_height"]), src.size)
bg = Image.new("RGBA", src.size, (255, 255, 255, 255))
ref = Image.alpha_composite(bg, src.convert("RGBA")).convert("RGB").resize((w, h), Image.BOX)
a, b = im.convert("RGB").tobytes(), ref.tobytes()
mad = sum(abs(x - y) for x, y in zip(a, b)) / len(a)
print("mad %.3f" % mad)
PY
	sed 's/^/  /' "$T/$name.cmp"
	check "$name: the request's PNG is the one kept and recorded (sha256)" grep -qx "sha True" "$T/$name.cmp"
	check "$name: its size is the recorded one, a PNG" grep -q "^size True .* PNG$" "$T/$name.cmp"
	check "$name: within the provider's box" grep -qx "box True" "$T/$name.cmp"
	check "$name: src size recorded" grep -q "^src True" "$T/$name.cmp"
	check "$name: decodes to the chart as PIL scales it (mean diff < 3)" \
		$PY -c 'import sys; v=float(open(sys.argv[1]).read().split("mad ")[1]); sys.exit(v >= 3)' "$T/$name.cmp"
	check "$name: no image bytes in the transcript" bash -c "! grep -q 'iVBOR' '$tr'"
	check "$name: the run dir keeps one image" test "$(ls "$T/$name/images" | grep -c .)" = 1
}

# 1. view_image, each provider
provider_run chat openai fake_openai.py gpt-4o view.json --send-images tool --output output/chart.png
check_view chat 2048 0 768
# the fake refuses image parts in tool messages: it took this one in the
# content of a message of its own
check "chat: the image went as a content part of a message (not the tool's)" \
	$PY -c 'import json,re,sys; r=[json.loads(l) for l in open(sys.argv[1])][-1]; sys.exit(not re.match(r"messages\[\d+\]\.content\[\d+\]", r["images"][0].get("where","")))' "$FAKE_LOG"
provider_run resp openai-responses fake_responses.py gpt-4.1 view.json --send-images tool --output output/chart.png
check_view resp 2048 0 768
provider_run anth anthropic fake_anthropic.py claude-sonnet-4-5 view.json --send-images tool --output output/chart.png
check_view anth 1568 1150000 0

# the result the model read names the sizes
check "anth: the tool result says what was sent" \
	grep -q 'sent to the model as [0-9]*x[0-9]* (about [0-9]* tokens)' "$T/anth/transcript.jsonl"

# 3a. resume of the finished view run: no request
before=$(log_lines)
set +e
ANTHROPIC_API_KEY=sk-ant-img ANTHROPIC_BASE_URL=${URL%/v1} "$ASSAY" resume "$T/anth" --base-url "${URL%/v1}" \
	</dev/null >"$T/resume.out" 2>"$T/resume.err"
code=$?
set -e
check "resume of the view run exits 0 (got $code)" test "$code" -eq 0
check "resume of the view run: 0 requests" test "$(log_lines)" = "$before"

# 3b. a fork from before the view: the same image, byte for byte
seq=$(jget "$T/anth/transcript.jsonl" '[e["seq"] for e in x if e["type"]=="tool_result"][0]')
set +e
ANTHROPIC_API_KEY=sk-ant-img ANTHROPIC_BASE_URL=${URL%/v1} "$ASSAY" resume "$T/anth" --base-url "${URL%/v1}" \
	--fork-at "$seq" --replace "saved (the chart is in output/chart.png)" --run-dir "$T/fork" \
	</dev/null >"$T/fork.out" 2>"$T/fork.err"
code=$?
set -e
check "fork exits 0 (got $code)" test "$code" -eq 0 || tail -5 "$T/fork.err"
check "fork: the view sent the same image (sha256)" test \
	"$(jget "$T/fork/transcript.jsonl" '[e["sha256"] for e in x if e["type"]=="image_sent"]')" = \
	"$(jget "$T/anth/transcript.jsonl" '[e["sha256"] for e in x if e["type"]=="image_sent"]')"
check "fork: the fake got the same bytes again" \
	bash -c "cmp -s \"\$(ls -d '$T/img.anth'/* | tail -1)\" \"\$(ls -d '$T/img.anth'/* | head -1)\" && [ \$(ls '$T/img.anth' | wc -l) -ge 2 ]"

# 2. auto: two figures with the call that made them, never again
provider_run auto anthropic fake_anthropic.py claude-sonnet-4-5 auto.json --send-images auto
tr=$T/auto/transcript.jsonl
check "auto: exits 0 (got $CODE)" test "$CODE" -eq 0 || tail -5 "$T/auto.err"
check "auto: two image_sent, both of the first call" test \
	"$(jget "$tr" 'sorted((e["path"], e["how"]) for e in x if e["type"]=="image_sent")')" = \
	"[('output/fig1.png', 'auto'), ('output/fig2.png', 'auto')]"
first=$(jget "$tr" '[e["id"] for e in x if e["type"]=="tool_call"][0]')
check "auto: ... with the id of the call that saved them" test \
	"$(jget "$tr" 'sorted({e["id"] for e in x if e["type"]=="image_sent"})')" = "['$first']"
check "auto: image_sent follows that call's tool_result" \
	$PY -c 'import json,sys
x=[json.loads(l) for l in open(sys.argv[1])]
r=[i for i,e in enumerate(x) if e["type"]=="tool_result"][0]
s=[i for i,e in enumerate(x) if e["type"]=="image_sent"]
sys.exit(not all(i > r for i in s))' "$tr"
check "auto: requests carry [0, 2, 2] images (the history keeps them)" test "$(n_images)" = "[0, 2, 2]"
check "auto: the last request's two are the second's (not sent again)" \
	$PY -c 'import json,sys
x=[json.loads(l) for l in open(sys.argv[1])]
sha=lambda r: sorted(i["sha256"] for i in r["images"])
sys.exit(sha(x[1]) != sha(x[2]))' "$FAKE_LOG"
before=$(log_lines)
set +e
ANTHROPIC_API_KEY=sk-ant-img ANTHROPIC_BASE_URL=${URL%/v1} "$ASSAY" resume "$T/auto" --base-url "${URL%/v1}" \
	</dev/null >"$T/resume2.out" 2>"$T/resume2.err"
code=$?
set -e
check "resume of the auto run: exits 0 (got $code), 0 requests" \
	bash -c "[ $code -eq 0 ] && [ $(log_lines) = $before ]"
# a copied run dir whose images/ is a link elsewhere (even to the same
# bytes): not read through; the images are left out, said in the log,
# and the request that no longer matches is asked live
cp -a "$T/auto" "$T/auto-linked"
mv "$T/auto-linked/images" "$T/elsewhere"
ln -s "$T/elsewhere" "$T/auto-linked/images"
before=$(log_lines)
set +e
ANTHROPIC_API_KEY=sk-ant-img ANTHROPIC_BASE_URL=${URL%/v1} "$ASSAY" resume "$T/auto-linked" \
	--base-url "${URL%/v1}" --send-images auto </dev/null >"$T/linked.out" 2>"$T/linked.err"
code=$?
set -e
check "linked images/: resume exits 0 (got $code)" test "$code" -eq 0 || tail -5 "$T/linked.err"
check "linked images/: the log says the images were left out" \
	grep -q "image of call .* left out: .*images is not a directory of the run dir" "$T/auto-linked/assay.log"
check "linked images/: the requests no longer match, asked live" test "$(log_lines)" -gt "$before"
# 5. the estimate counts the image by its tokens (the view run, known
# sizes): request 3's estimate is request 2's plus the image's tokens
# plus a few hundred of text, never its base64 (~4x its bytes)
tr=$T/anth/transcript.jsonl
itok=$(jget "$tr" '[e["tokens"] for e in x if e["type"]=="image_sent"][0]')
wh=$(jget "$tr" '[(e["width"], e["height"]) for e in x if e["type"]=="image_sent"][0]')
check "anth: the image's tokens are w*h/750 ($wh -> $itok)" \
	$PY -c 'import math,sys; w,h=eval(sys.argv[1]); sys.exit(int(sys.argv[2]) != math.ceil(w*h/750))' "$wh" "$itok"
ests=$(jget "$tr" '[e.get("est_tokens") for e in x if e["type"]=="model_request"]')
echo "  estimates per request: $ests (image: $itok tokens)"
check "anth: request 3's estimate = request 2's + the image's tokens + < 600 of text" \
	$PY -c 'import sys; e=eval(sys.argv[1]); t=int(sys.argv[2]); d=e[2]-e[1]; sys.exit(not (t <= d < t + 600))' "$ests" "$itok"
# the cost budget counts it too: a limit that request 3's text alone
# fits under but not with its image stops the run before request 3
budget=$($PY - "$tr" "$itok" <<'PY'
import json, sys
x = [json.loads(l) for l in open(sys.argv[1])]
itok = int(sys.argv[2])
usage = [e for e in x if e["type"] == "usage"]
spent = usage[1]["totals"]["cost_usd"]
est3 = [e.get("est_tokens") for e in x if e["type"] == "model_request"][2]
text3 = est3 - itok
# claude-sonnet-4-5: $3 per million input tokens
print("%.6f" % (spent + (text3 + itok / 2) * 3e-6))
PY
)
start_fake view.json --images-dir "$T/img.budget"
set +e
ANTHROPIC_API_KEY=sk-ant-img ANTHROPIC_BASE_URL=${URL%/v1} "$ASSAY" run --provider anthropic \
	--base-url "${URL%/v1}" --model claude-sonnet-4-5 --ask none --send-images tool \
	--max-cost "$budget" --run-dir "$T/budget" "draw and check" </dev/null >"$T/budget.out" 2>"$T/budget.err"
code=$?
set -e
echo "  --max-cost $budget: exit $code; $(grep -o 'cost budget: [^)]*)' "$T/budget.err" | head -1)"
check "budget: stops before request 3 (2 requests made)" test "$(log_lines)" = 2
check "budget: the reason counts the image's tokens" \
	$PY -c 'import re,sys; m=re.search(r"about (\d+) input tokens", open(sys.argv[1]).read()); sys.exit(not m or int(m.group(1)) < int(sys.argv[2]))' "$T/budget.err" "$itok"

# 4. a decompression bomb (8000x5000, 160 MB inflated) and a PNG whose
# header lies (800x600 declared, a 10x10 image's data): refused with a
# reason the model reads, and the run goes on
cat >hostile.json <<'JSON'
{"turns": [
 {"text": "Making them.", "tool_calls": [{"name": "python", "arguments": {"code": "import struct, zlib, os\nos.makedirs('output', exist_ok=True)\ndef chunk(t, d):\n    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))\ndef png(w, h, idat):\n    return b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 6, 0, 0, 0)) + chunk(b'IDAT', idat) + chunk(b'IEND', b'')\nrow = b'\\0' + b'\\x10\\x20\\x30\\xff' * 8000\nz = zlib.compressobj(9)\nopen('output/bomb.png', 'wb').write(png(8000, 5000, b''.join(z.compress(row) for _ in range(5000)) + z.flush()))\nsmall = zlib.compress(b''.join(b'\\0' + b'\\x80' * 40 for _ in range(10)))\nopen('output/liar.png', 'wb').write(png(800, 600, small))\nprint('made')"}}]},
 {"text": "Viewing the bomb.", "tool_calls": [{"name": "view_image", "arguments": {"path": "output/bomb.png"}}]},
 {"text": "Viewing the liar.", "tool_calls": [{"name": "view_image", "arguments": {"path": "output/liar.png"}}]},
 {"text": "Neither could be shown; the run goes on.", "tool_calls": []}
]}
JSON
set +e
ASSAY_LOOP_STATS=$T/loop.stats "$ASSAY" run --provider script --script hostile.json --ask none \
	--run-dir "$T/hostile" "view them" </dev/null >"$T/hostile.out" 2>"$T/hostile.err"
code=$?
set -e
tr=$T/hostile/transcript.jsonl
check "hostile: exits 0 (got $code)" test "$code" -eq 0
check "hostile: the bomb refused, with the reason the model reads" \
	$PY -c 'import json,sys; x=[json.loads(l) for l in open(sys.argv[1])]; r=[e for e in x if e["type"]=="tool_result"][1]; print("  bomb:", r["content"][:160]); sys.exit(not (r["is_error"] and "too large" in r["content"]))' "$tr"
check "hostile: the liar refused, with the reason the model reads" \
	$PY -c 'import json,sys; x=[json.loads(l) for l in open(sys.argv[1])]; r=[e for e in x if e["type"]=="tool_result"][2]; print("  liar:", r["content"][:160]); sys.exit(not (r["is_error"] and "view_image:" in r["content"]))' "$tr"
check "hostile: no image was sent" test "$(jget "$tr" 'len([e for e in x if e["type"]=="image_sent" and "error" in e])')" = 2 -a \
	"$(jget "$tr" 'len([e for e in x if e["type"]=="image_sent" and "error" not in e])')" = 0
check "hostile: the last turn came" grep -q "the run goes on" "$tr"
echo "  loop: $(cat "$T/loop.stats" 2>/dev/null)"

# 6. a model marked without vision: view_image says so; no image goes
cat >xdg.json <<'JSON'
{"models": {"text-only": {"provider": "openai", "context": 128000, "max_output": 4096,
  "input": 1, "output": 1, "vision": false}}}
JSON
FAKE=$SRC/tests/fakes/fake_openai.py
start_fake view.json --images-dir "$T/img.novision"
set +e
OPENAI_API_KEY=sk-img "$ASSAY" run --provider openai --base-url "$URL" --model text-only \
	--config xdg.json --ask none --run-dir "$T/novision" "draw and check" </dev/null \
	>"$T/novision.out" 2>"$T/novision.err"
code=$?
set -e
tr=$T/novision/transcript.jsonl
check "no vision: exits 0 (got $code), 3 requests" bash -c "[ $code -eq 0 ] && [ $(log_lines) = 3 ]"
check "no vision: the result says the model takes no images" \
	$PY -c 'import json,sys; x=[json.loads(l) for l in open(sys.argv[1])]; r=[e for e in x if e["type"]=="tool_result"][1]; sys.exit("does not take images" not in r["content"])' "$tr"
check "no vision: no image sent (auto either)" bash -c "[ $(jget "$tr" 'len([e for e in x if e["type"]=="image_sent"])') = 0 ] && [ \"$(n_images)\" = '[0, 0, 0]' ]"
# 7. trimming stubs old images like old outputs: eight figures of ~1070
# tokens each in an 8000-token window; old results lose their images
# (the stub names them), no request passes the window, and a resume
# rebuilds the trimmed requests (0 requests)
$PY - <<'PY'
import json
code = ("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt, os\n"
        "os.makedirs('output', exist_ok=True)\nfig, ax = plt.subplots(figsize=(10, 8), dpi=100)\n"
        "ax.plot(range(10), [v * %d for v in range(10)])\nax.set_title('figure %d')\n"
        "fig.savefig('output/fig%d.png')\nprint('figure %d')")
turns = [{"text": "Figure %d." % i, "tool_calls": [{"id": "toolu_fig%d" % i, "name": "python",
          "arguments": {"code": code % (i, i, i, i)}}]} for i in range(8)]
turns.append({"text": "All eight drawn.", "tool_calls": []})
json.dump({"turns": turns}, open("trim.json", "w"))
PY
cat >trimcfg.json <<'JSON'
{"models": {"img-ctx": {"provider": "anthropic", "context": 8000, "max_output": 1024,
  "input": 3, "output": 15}}}
JSON
FAKE=$SRC/tests/fakes/fake_anthropic.py
start_fake trim.json --max-context 8000 --turn-by call-id
set +e
ANTHROPIC_API_KEY=sk-ant-img ANTHROPIC_BASE_URL=${URL%/v1} "$ASSAY" run --provider anthropic \
	--base-url "${URL%/v1}" --model img-ctx --config trimcfg.json --ask none --max-turns 20 \
	--run-dir "$T/trim" "draw eight" </dev/null >"$T/trim.out" 2>"$T/trim.err"
code=$?
set -e
tr=$T/trim/transcript.jsonl
echo "  images per request: $(n_images)"
check "trim: exits 0 (got $code)" test "$code" -eq 0 || tail -5 "$T/trim.err"
check "trim: eight images sent" test "$(jget "$tr" 'len([e for e in x if e["type"]=="image_sent" and "error" not in e])')" = 8
check "trim: a stub names an image it elided" \
	$PY -c 'import json,sys; x=[json.loads(l) for l in open(sys.argv[1])]; s=[t for e in x if e["type"]=="context_trim" for t in e["stubs"]]; sys.exit(not any("with its image output/fig" in t for t in s))' "$tr"
check "trim: no request over the window (every one accepted)" \
	test "$(jget "$FAKE_LOG" "sum(1 for e in x if e['status'] != 200)")" = 0
check "trim: the last request carries fewer than eight images" \
	$PY -c 'import json,sys; x=[json.loads(l) for l in open(sys.argv[1])]; sys.exit(not x[-1]["n_images"] < 8)' "$FAKE_LOG"
before=$(log_lines)
set +e
ANTHROPIC_API_KEY=sk-ant-img ANTHROPIC_BASE_URL=${URL%/v1} "$ASSAY" resume "$T/trim" --base-url "${URL%/v1}" \
	--config trimcfg.json </dev/null >"$T/trimres.out" 2>"$T/trimres.err"
code=$?
set -e
check "trim: resume exits 0 (got $code) with 0 requests" bash -c "[ $code -eq 0 ] && [ $(log_lines) = $before ]"

# 8. re-execute of the view run: the calls run again, the image is made
# again byte for byte, so every request is the recorded one (0 sent)
FAKE=$SRC/tests/fakes/fake_anthropic.py
start_fake view.json
set +e
ANTHROPIC_API_KEY=sk-ant-img ANTHROPIC_BASE_URL=${URL%/v1} "$ASSAY" resume "$T/anth" --re-execute --send-images tool \
	--base-url "${URL%/v1}" --run-dir "$T/reexec" </dev/null >"$T/reexec.out" 2>"$T/reexec.err"
code=$?
set -e
check "re-execute: exits 0 (got $code), 0 requests" bash -c "[ $code -eq 0 ] && [ $(log_lines) = 0 ]" ||
	{ tail -5 "$T/reexec.err"; grep -h '"model_request"\|replay_live' "$T/reexec/transcript.jsonl" | cut -c1-300; }
check "re-execute: the same image sent (sha256)" test \
	"$(jget "$T/reexec/transcript.jsonl" '[e["sha256"] for e in x if e["type"]=="image_sent"]')" = \
	"$(jget "$T/anth/transcript.jsonl" '[e["sha256"] for e in x if e["type"]=="image_sent"][:1]')"
finish
