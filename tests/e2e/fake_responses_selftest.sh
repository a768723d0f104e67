#!/usr/bin/env bash
# The Responses API fake is tested against the official SDK:
# tests/fakes/responses_sdk_check.mjs drives fake_responses.py with the
# `openai` npm package (responses.create({stream: true}), responses.stream(),
# the round trip of output items and function_call_output, the rejections
# and every fault), so a fake that drifts from the real protocol fails here
# instead of letting the provider tests that use it pass. The SDK is
# installed at test time into the test's temp dir (a fresh clone has none);
# ASSAY_OPENAI_NPM overrides the package spec (default openai@6).
source "$(dirname "$0")/lib.bash"

# ------------------------------------------------------------------ images over raw HTTP
# (protocols.md F): input_image parts in function_call_output.output and in user messages,
# checked as the API checks them, and --images-dir; these need no node
cat >"$T/image_checks.py" <<'PY'
# Usage: python3 image_checks.py FAKE TMPDIR; prints ok/FAIL lines, "N passed, M failed".
import atexit
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

FAKE, T = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(os.path.abspath(FAKE)))
import imgdata  # noqa: E402

PASS = FAIL = 0
PROCS = []
atexit.register(lambda: [p.terminate() for p in PROCS])


def check(name, cond, detail=""):
    global PASS, FAIL
    if cond:
        PASS += 1
        print(f"ok   {name}", flush=True)
    else:
        FAIL += 1
        print(f"FAIL {name} -- {detail() if callable(detail) else detail}", flush=True)


SCRIPT = {"turns": [{"text": "Let me look.", "tool_calls": [
    {"name": "view_image", "arguments": {"path": "output/chart.png"}}]},
    {"text": "The chart has a title and two labelled axes."}]}
json.dump(SCRIPT, open(f"{T}/script.json", "w"))
IMGDIR = f"{T}/images"
cmd = [sys.executable, FAKE, "--script", f"{T}/script.json", "--port", "0", "--port-file",
       f"{T}/port", "--log", f"{T}/log", "--seed", "3", "--images-dir", IMGDIR]
PROCS.append(subprocess.Popen(cmd, stderr=open(f"{T}/err", "w")))
for _ in range(400):
    if os.path.exists(f"{T}/port"):
        break
    time.sleep(0.025)
PORT = int(open(f"{T}/port").read())


def post(body):
    r = urllib.request.Request(f"http://127.0.0.1:{PORT}/v1/responses", json.dumps(body).encode(),
                               {"Authorization": "Bearer sk-x", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(r, timeout=60) as a:
            return a.status, json.loads(a.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def lines():
    return [json.loads(x) for x in open(f"{T}/log")]


TOOLS = [{"type": "function", "name": "view_image", "description": "Look at an image",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                         "required": ["path"]}}]
USER = {"role": "user", "content": "Make the chart and check it."}
CALL = {"type": "function_call", "call_id": "call_img1", "name": "view_image",
        "arguments": json.dumps({"path": "output/chart.png"})}
PNG = imgdata.png(120, 90, seed=2, noisy=True)


def url(data, mt="image/png"):
    return f"data:{mt};base64,{data if isinstance(data, str) else imgdata.b64(data)}"


def part(data, mt="image/png", **extra):
    return {"type": "input_image", "image_url": url(data, mt), **extra}


def body(*parts, output=None):
    out = output if output is not None else [{"type": "input_text", "text": "chart.png:"}, *parts]
    return {"model": "gpt-test", "store": False, "tools": TOOLS, "input": [
        USER, CALL, {"type": "function_call_output", "call_id": "call_img1", "output": out}]}


def accepted(name, b):
    code, j = post(b)
    check(f"{name} -> 200", code == 200 and j.get("status") == "completed", lambda: (code, j))
    return j


def refused(name, b, message, param="input[2].output[1].image_url", code="invalid_value",
            exact=True):
    st, j = post(b)
    e = j.get("error") or {}
    good = (st == 400 and e.get("type") == "invalid_request_error" and e.get("param") == param
            and e.get("code") == code and (e.get("message") == message if exact
                                           else message in (e.get("message") or "")))
    check(f"{name} -> 400 {code}", good, lambda: (st, j))


code, j = post({"model": "gpt-test", "store": False, "tools": TOOLS, "input": [USER]})
check("the script calls view_image with a path (any tool name and arguments)",
      code == 200 and j["output"][-1].get("name") == "view_image"
      and json.loads(j["output"][-1]["arguments"]) == {"path": "output/chart.png"}, j)
j = accepted("a PNG in function_call_output.output (input_text, input_image detail auto)",
             body(part(PNG, detail="auto")))
L = lines()
img = (L[-1].get("images") or [{}])[0]
check("the log lists it (n_images, where, media type, size, detail, file)",
      L[-1].get("n_images") == 1 and img.get("where") == "input[2].output[1].image_url"
      and (img.get("media_type"), img.get("width"), img.get("height"), img.get("bytes"),
           img.get("detail"), img.get("file")) == ("image/png", 120, 90, len(PNG), "auto",
                                                    "0001-2.png"), L[-1])
check("--images-dir holds 0001-2.png, byte for byte the PNG sent",
      open(f"{IMGDIR}/0001-2.png", "rb").read() == PNG, lambda: os.listdir(IMGDIR))
check("input_tokens counts the image as OpenAI does (255 for 120x90), not its base64",
      255 < j["usage"]["input_tokens"] < 255 + 300 < len(imgdata.b64(PNG)) // 4, j.get("usage"))
accepted("detail low, no detail, JPEG, GIF, WebP", body(
    part(PNG, detail="low"), part(imgdata.jpeg(2048, 1536), "image/jpeg"),
    part(imgdata.gif(10, 10), "image/gif", detail="high"), part(imgdata.webp(300, 200), "image/webp")))
check("written as 0002-3.png .. 0005-3.webp", sorted(os.listdir(IMGDIR)) == [
    "0001-2.png", "0002-3.png", "0003-3.jpg", "0004-3.gif", "0005-3.webp"], lambda: os.listdir(IMGDIR))
b = body(output="see the next message")
b["input"].append({"role": "user", "content": [{"type": "input_text", "text": "the chart:"},
                                               part(PNG)]})
accepted("an input_image in a user message after a string output", b)
check("its log line: where input[3].content[1].image_url",
      lines()[-1]["images"][0]["where"] == "input[3].content[1].image_url", lines()[-1])
P = "input[2].output[1].image_url"
EX = "Expected a base64-encoded data URL with an image MIME type (e.g. " \
     "'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got"
refused("bad base64 (a '*')", body(part("iVBORw0KGgo*AAA")),
        f"Invalid '{P}'. {EX} an invalid base64-encoded value.")
refused("base64 without padding", body(part(imgdata.b64(PNG).rstrip("=")[:-1])),
        f"Invalid '{P}'. {EX} an invalid base64-encoded value.")
refused("empty base64", body({"type": "input_image", "image_url": "data:image/png;base64,"}),
        f"Invalid '{P}'. {EX} empty base64-encoded bytes.")
refused("no data: prefix", body({"type": "input_image", "image_url": imgdata.b64(PNG)}),
        f"Invalid '{P}'. {EX} a value without the 'data:' prefix.")
refused("image/bmp", body(part(PNG, "image/bmp")), f"Invalid '{P}'. {EX} unsupported MIME type 'image/bmp'.")
refused("data:image/jpeg over PNG bytes", body(part(PNG, "image/jpeg")),
        f"Invalid '{P}'. The data URL says image/jpeg but the bytes are a image/png image "
        "(fake_responses refuses a media type that does not match the bytes).")
refused("a PNG whose header claims 9000x100", body(part(imgdata.png_claiming(9000, 100))),
        "You uploaded an unsupported image. Please make sure your image is valid.", None,
        "invalid_image")
refused("bytes that are no image", body(part(b"GIF? no, plain text")),
        "You uploaded an unsupported image. Please make sure your image has of one the following "
        "formats: ['png', 'jpeg', 'gif', 'webp'].", None, "invalid_image_format")
big = PNG + b"\0" * (20 * 1024 * 1024 + 1 - len(PNG))
refused("an image over 20 MB", body(part(big)),
        "You uploaded an unsupported image. Please make sure your image is below 20 MB in size "
        "and is of one the following formats: ['png', 'jpeg', 'gif', 'webp'].", None,
        "sanitizer_server_error")
refused("detail 'max'", body(part(PNG, detail="max")),
        "Invalid value: 'max'. Supported values are: 'low', 'high', and 'auto'.",
        "input[2].output[1].detail")
refused("an input_image without image_url or file_id", body({"type": "input_image", "detail": "low"}),
        "Missing required parameter: 'input[2].output[1].image_url'.",
        code="missing_required_parameter")
refused("a remote URL (this fake fetches nothing)", body({"type": "input_image",
        "image_url": "https://example.com/a.png"}), "fake_responses fetches no remote images",
        exact=False)
refused("an unknown part type in the output", body({"type": "image", "data": "x"}),
        "Invalid value: 'image'. Supported values are: 'input_text', 'input_image', "
        "'output_text', 'refusal', 'input_file', 'computer_screenshot', and 'summary_text'.",
        "input[2].output[1].type")
refused("a Chat image_url part in the output", body({"type": "image_url", "image_url": {"url": url(PNG)}}),
        "Invalid value: 'image_url'.", "input[2].output[1].type", exact=False)
refused("an output that is an object", body(output={"type": "input_image", "image_url": url(PNG)}),
        "Invalid type for 'input[2].output': expected one of a string or array of objects, but "
        "got an object instead.", "input[2].output", "invalid_type")
check("refusals are logged without images; nothing more was written",
      lines()[-1]["status"] == 400 and "images" not in lines()[-1]
      and len(os.listdir(IMGDIR)) == 6, lambda: os.listdir(IMGDIR))
print(f"{PASS} passed, {FAIL} failed")
sys.exit(1 if FAIL else 0)
PY
mkdir -p "$T/images"
inner "image checks (raw HTTP)" 25 "$PY" "$T/image_checks.py" "$SRC/tests/fakes/fake_responses.py" "$T/images"
if [ "$FAILED" -gt 0 ]; then # a failure is a failure, not a skip
	finish || exit 1
fi

# ------------------------------------------------------------------ the SDK
command -v node >/dev/null ||
	skip "node is not installed (tests/fakes/responses_sdk_check.mjs drives the fake with the openai npm package)"
command -v npm >/dev/null || skip "npm is not installed (needed to install the openai npm package)"
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
[ "$major" -ge 18 ] || skip "node $(node --version) is too old for the openai npm package (needs 18+)"

SPEC=${ASSAY_OPENAI_NPM:-openai@6}
if ! timeout 300 npm install --prefix "$T/sdk" --no-audit --no-fund --no-save --loglevel=error \
	"$SPEC" >"$T/npm.out" 2>&1 || [ ! -f "$T/sdk/node_modules/openai/index.mjs" ]; then
	tail -n 5 "$T/npm.out"
	skip "could not install $SPEC with npm: $(grep -m 1 . "$T/npm.out" || echo 'no output')"
fi

OUT=$T/sdk_check.out
rc=0
timeout 300 node "$SRC/tests/fakes/responses_sdk_check.mjs" --sdk "$T/sdk" --python "$PY" \
	--fake "$SRC/tests/fakes/fake_responses.py" >"$OUT" 2>&1 || rc=$?
head -n 1 "$OUT" # the SDK version checked against
summary=$(tail -n 1 "$OUT")
n_ok=$(grep -c '^ok ' "$OUT" || true)
n_fail=$(grep -c '^FAIL ' "$OUT" || true)
grep '^FAIL ' "$OUT" || true

check "responses_sdk_check.mjs exits 0 (exit $rc)" test "$rc" -eq 0
check "it ends with 'N passed, 0 failed' (got '$summary')" \
	grep -Eqx '[0-9]+ passed, 0 failed' <<<"$summary"
check "the summary counts what ran ($n_ok ok lines, $n_fail FAIL lines)" \
	test "$summary" = "$n_ok passed, $n_fail failed"
# the check has about 70 checks; fewer than 60 means part of it never ran
check "at least 60 checks ran ($n_ok)" test "$n_ok" -ge 60
if [ "$FAILED" -gt 0 ]; then
	echo "--- tests/fakes/responses_sdk_check.mjs output (last 60 lines)"
	tail -n 60 "$OUT"
fi
finish
