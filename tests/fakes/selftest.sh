#!/usr/bin/env bash
# Self-test of fake_openai.py over real HTTP with curl: every quirk style,
# every fault, auth, and the request validation (each invalid request -> 400).
# Usage: tests/fakes/selftest.sh    (exit 0 when every check passes)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
FAKE="$HERE/fake_openai.py"
T=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "temp dir: $T"
SRVS=()
PASS=0
FAIL=0

cleanup() {
	for p in "${SRVS[@]}" ${CHECK_PID:-}; do kill "$p" 2>/dev/null; done
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT

ok() { PASS=$((PASS + 1)); echo "ok   $1"; }
ko() { FAIL=$((FAIL + 1)); echo "FAIL $1${2:+ -- $2}"; }
# is NAME DETAIL CMD...: one check, passed when CMD succeeds (DETAIL shown on failure)
is() {
	local name=$1 detail=$2
	shift 2
	if "$@"; then ok "$name"; else ko "$name" "$detail"; fi
}

# start NAME ARGS...: run a server on port 0, wait for its port file; sets PORT, LOG, SRV
# (with --seed 7, or $SEED; SEED=random: no --seed)
start() {
	local name=$1
	shift
	local seed=(--seed "${SEED:-7}")
	[ "${SEED:-}" = random ] && seed=()
	rm -f "$T/$name.port" "$T/$name.log"
	$PY "$FAKE" --script "$T/script.json" --port 0 --port-file "$T/$name.port" \
		--log "$T/$name.log" "${seed[@]}" "$@" 2>"$T/$name.err" &
	SRV=$!
	SRVS+=("$SRV")
	for _ in $(seq 200); do [ -s "$T/$name.port" ] && break; sleep 0.025; done
	PORT=$(cat "$T/$name.port" 2>/dev/null)
	LOG="$T/$name.log"
	[ -n "$PORT" ] || { ko "start $name" "$(cat "$T/$name.err")"; exit 1; }
}
stop() { kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; }

# post OUT REQ [curl args]: POST $T/REQ.json; body in $T/OUT.body, headers in $T/OUT.hdr
URLPATH=/v1/chat/completions
AUTH="Bearer x"
CTYPE="application/json"
post() {
	local out=$1 req=$2
	shift 2
	CUR=$out
	CODE=$(curl -sN -o "$T/$out.body" -D "$T/$out.hdr" -w '%{http_code}' \
		"http://127.0.0.1:$PORT$URLPATH" -H "Authorization: $AUTH" -H "Content-Type: $CTYPE" \
		--data-binary @"$T/$req.json" "$@")
	RC=$?
	echo "$RC" >"$T/$out.rc"
}

# expect NAME PYEXPR: evaluate PYEXPR over the last answer (see check.py) and count it.
# check.py runs in one python for all of them (serve.py, started below: a fresh
# namespace each time, as a process of its own had): the expression and WORDS go in
# files, the answer's name, CODE and LOG on a line; it answers check.py's exit status
expect() {
	local st=
	printf '%s' "$2" >"$T/expect.expr"
	if [ -n "${WORDS+set}" ]; then printf '%s' "$WORDS" >"$T/expect.words"; else rm -f "$T/expect.words"; fi
	if printf '%s\t%s\t%s\n' "$T/$CUR" "${CODE:-}" "${LOG:-}" >&"${CHECK[1]:-9}" &&
		read -r st <&"${CHECK[0]:-9}" && [ "$st" = 0 ]; then
		ok "$1"
	else
		[ -n "$st" ] || echo "(serve.py answered nothing: it ended)" >>"$T/expect.out"
		ko "$1" "$(tail -c 600 "$T/expect.out")"
	fi
}

# post + expect a 400 whose error message contains WORDS
invalid() {
	local name=$1 req=$2 words=$3
	post "$req" "$req"
	WORDS=$words expect "400 $name" "code == 400 and os.environ['WORDS'] in err_msg()"
}

# refused NAME REQ STATUS CODE PARAM WORDS: post REQ; an OpenAI-shaped error with that HTTP
# status, error code and param (Python literals: 'x' or None) whose message contains WORDS
refused() {
	local name=$1 req=$2 status=$3 ecode=$4 param=$5 words=$6
	post "$req" "$req"
	WORDS=$words expect "$status $name" "code == $status and j['error']['type'] == 'invalid_request_error' and j['error']['code'] == $ecode and j['error']['param'] == $param and os.environ['WORDS'] in err_msg()"
}
# accepted NAME REQ: post REQ; a complete 200 stream
accepted() {
	post "$2" "$2"
	expect "200 $1" "code == 200 and s['finish'] and not s['errors']"
}

# ------------------------------------------------------------------ fixtures
cat >"$T/script.json" <<'EOF'
{"turns": [
  {"text": "Looking at the data — naïve façade 日本語 ✓.",
   "tool_calls": [{"name": "shell", "arguments": {"command": "ls -la \"input dir\""}},
                  {"name": "list_files", "arguments": {}}]},
  {"text": "Done: the report is in output/report.md."}
]}
EOF

cat >"$T/check.py" <<'EOF'
# Evaluates an expression over one recorded answer: SSE summary `s`, JSON body `j`,
# headers `h`, HTTP `code`, curl exit `rc`, log lines `L`, raw body `raw`.
import json, os, sys
base, expr = sys.argv[1], sys.argv[2]
raw = open(base + ".body", "rb").read()
hdr = open(base + ".hdr", "rb").read().decode("latin-1") if os.path.exists(base + ".hdr") else ""
rc = int(open(base + ".rc").read().strip() or 0) if os.path.exists(base + ".rc") else 0
code = int(os.environ.get("CODE") or 0)
h = {}
for line in hdr.split("\r\n"):
    if ":" in line:
        k, v = line.split(":", 1)
        h[k.strip().lower()] = v.strip()
L = []
if os.environ.get("LOG") and os.path.exists(os.environ["LOG"]):
    L = [json.loads(x) for x in open(os.environ["LOG"], encoding="utf-8") if x.strip()]
try:
    j = json.loads(raw)
except ValueError:
    j = None

def sse(raw):
    """Parses SSE per protocols.md section 0 and rebuilds text and tool calls per A.3."""
    s = dict(crlf=b"\r\n" in raw, comments=0, done=False, errors=[], error_lines=[], text="",
             reasoning="", finish=None, finish_with_payload=False, usage=None, usage_choices=None,
             timings=None, calls=[], chunks=[], roles=0, indices=[], later_ids=[],
             first_has_args=[], tool_chunk_content=[], after_finish_content=False, n_data=0)
    slots = {}
    data = []
    def dispatch():
        if not data:
            return
        payload = "\n".join(data)
        data.clear()
        s["n_data"] += 1
        if payload == "[DONE]":
            s["done"] = True
            return
        o = json.loads(payload)
        if "error" in o:
            s["errors"].append(o["error"])
            return
        s["chunks"].append(o)
        if o.get("usage"):
            s["usage"], s["usage_choices"] = o["usage"], o.get("choices")
        if o.get("timings"):
            s["timings"] = o["timings"]
        for ch in o.get("choices") or []:
            d = ch.get("delta") or {}
            if d.get("role"):
                s["roles"] += 1
            if s["finish"] and (d.get("content") or d.get("tool_calls")):
                s["after_finish_content"] = True
            s["text"] += d.get("content") or ""
            s["reasoning"] += d.get("reasoning_content") or d.get("reasoning") or ""
            if d.get("tool_calls"):
                s["tool_chunk_content"].append(d.get("content", "<absent>"))
            for tc in d.get("tool_calls") or []:
                idx = tc.get("index", 0)
                s["indices"].append(idx)
                fn = tc.get("function") or {}
                cur = slots.get(idx)
                if cur is None or (tc.get("id") and cur["id"] and tc["id"] != cur["id"]):
                    cur = dict(id=tc.get("id") or "", name=fn.get("name") or "", arguments="",
                               fragments=0)
                    slots[idx] = cur
                    s["calls"].append(cur)
                    s["first_has_args"].append("arguments" in fn)
                else:
                    s["later_ids"].append(tc.get("id", "<absent>"))
                if "arguments" in fn:
                    cur["arguments"] += fn["arguments"]
                    cur["fragments"] += 1
            if ch.get("finish_reason"):
                s["finish"] = ch["finish_reason"]
                s["finish_with_payload"] = bool(d.get("content") or d.get("tool_calls"))
    for line in raw.decode("utf-8").split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if line == "":
            dispatch()
        elif line.startswith(":"):
            s["comments"] += 1
        else:
            field, _, val = line.partition(":")
            val = val[1:] if val.startswith(" ") else val
            if field == "data":
                data.append(val)
            elif field == "error":
                s["error_lines"].append(json.loads(val))
    dispatch()
    for c in s["calls"]:
        try:
            c["parsed"] = json.loads(c["arguments"] or "{}")
        except ValueError:
            c["parsed"] = None
    return s

s = sse(raw) if code == 200 else None
def err_msg():
    e = (j or {}).get("error", j) or {}
    return e.get("message", "")
def names():
    return [c["name"] for c in s["calls"]]
def args(i):
    return s["calls"][i]["parsed"]
def first_delta(key):
    """Index of the first chunk whose delta has a non-empty KEY (9999 if none)."""
    return next((k for k, c in enumerate(s["chunks"]) if c.get("choices")
                 and c["choices"][0].get("delta", {}).get(key)), 9999)
SCRIPT_TEXT = "Looking at the data — naïve façade 日本語 ✓."
try:
    val = eval(expr)
except Exception as e:
    print(f"exception {type(e).__name__}: {e}")
    val = False
if not val:
    print("expr:", expr)
    print("code:", code, "rc:", rc, "headers:", h)
    if s:
        print("summary:", {k: v for k, v in s.items() if k != "chunks"})
    elif j is not None:
        print("json:", j)
    else:
        print("body:", raw[:300])
    sys.exit(1)
EOF

cat >"$T/serve.py" <<'EOF'
# Runs check.py once per line of stdin ("BASE\tCODE\tLOG"; the expression in
# expect.expr, WORDS in expect.words when set) in a fresh namespace, its output in
# expect.out; prints its exit status, one line each.
import contextlib, os, sys, traceback
T = os.environ["T"]
path = os.path.join(T, "check.py")
code = compile(open(path, encoding="utf-8").read(), path, "exec")
for line in sys.stdin:
    base, os.environ["CODE"], os.environ["LOG"] = line.rstrip("\n").split("\t")
    expr = open(os.path.join(T, "expect.expr"), encoding="utf-8").read()
    os.environ.pop("WORDS", None)
    if os.path.exists(os.path.join(T, "expect.words")):
        os.environ["WORDS"] = open(os.path.join(T, "expect.words"), encoding="utf-8").read()
    sys.argv = [path, base, expr]
    status = 0
    with open(os.path.join(T, "expect.out"), "w") as out, \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            exec(code, {"__name__": "__main__", "__file__": path})
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            traceback.print_exc()
            status = 1
    print(status, flush=True)
EOF
export T
coproc CHECK { exec $PY "$T/serve.py"; }
CHECK_PID=$!

# request fixtures, all derived from one base request
$PY - "$T" "$HERE" <<'EOF'
import copy, json, sys
T = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import imgdata
TOOLS = [
    {"type": "function", "function": {"name": "shell", "description": "Run a command",
     "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                    "required": ["command"]}}},
    {"type": "function", "function": {"name": "list_files", "description": "List files",
     "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "python", "parameters": {"type": "object"}}}]
BASE = {"model": "gpt-test", "stream": True, "stream_options": {"include_usage": True},
        "max_completion_tokens": 512, "tools": TOOLS, "tool_choice": "auto",
        "messages": [{"role": "system", "content": "You are a test."},
                     {"role": "user", "content": "List the files"}]}
CALLS = [{"id": "call_a", "type": "function",
          "function": {"name": "shell", "arguments": "{\"command\":\"ls\"}"}},
         {"id": "call_b", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}]
TURN1 = BASE["messages"] + [
    {"role": "assistant", "content": "Looking.", "tool_calls": CALLS},
    {"role": "tool", "tool_call_id": "call_a", "content": "a.txt\nb.txt"},
    {"role": "tool", "tool_call_id": "call_b", "content": "input/"}]
reqs = {}
def req(name, messages=None, **changes):
    r = copy.deepcopy(BASE)
    if messages is not None:
        r["messages"] = copy.deepcopy(messages)
    for k, v in changes.items():
        if v is None:
            r.pop(k, None)
        else:
            r[k] = v
    reqs[name] = r
    return r
def edit(name, base_messages, fn, **changes):
    m = copy.deepcopy(base_messages)
    fn(m)
    return req(name, m, **changes)

req("r0")
req("r0_nousage", stream_options=None)
req("r0_maxtokens", max_completion_tokens=None, max_tokens=100)
req("r1", TURN1)
req("r2", TURN1 + [{"role": "assistant", "content": "Done."}, {"role": "user", "content": "more"}])
big = edit("r1_big", TURN1, lambda m: m[3].update(content="x" * 300000))
req("no_model", model=None)
req("model_int", model=42)
req("no_messages").pop("messages")
req("empty_messages", [])
req("bad_role", [{"role": "robot", "content": "hi"}])
req("user_null", [{"role": "user", "content": None}])
edit("args_object", TURN1, lambda m: m[2]["tool_calls"][0]["function"].update(arguments={"command": "ls"}))
edit("args_notjson", TURN1, lambda m: m[2]["tool_calls"][0]["function"].update(arguments="{ls"))
edit("args_array", TURN1, lambda m: m[2]["tool_calls"][0]["function"].update(arguments="[1,2]"))
edit("args_missing", TURN1, lambda m: m[2]["tool_calls"][0]["function"].pop("arguments"))
edit("missing_answer", TURN1, lambda m: m.pop(4))
edit("missing_answer_user", TURN1, lambda m: (m.pop(4), m.append({"role": "user", "content": "x"})))
edit("orphan_tool", BASE["messages"], lambda m: m.append({"role": "tool", "tool_call_id": "call_a", "content": "x"}))
edit("dup_answer", TURN1, lambda m: m.append({"role": "tool", "tool_call_id": "call_a", "content": "again"}))
edit("unknown_id", TURN1, lambda m: m[4].update(tool_call_id="call_zzz"))
edit("tool_content_null", TURN1, lambda m: m[3].update(content=None))
edit("tool_content_obj", TURN1, lambda m: m[3].update(content={"out": "a"}))
edit("tool_no_id", TURN1, lambda m: m[3].pop("tool_call_id"))
edit("call_bad_name", TURN1, lambda m: m[2]["tool_calls"][0]["function"].update(name="run shell"))
edit("call_long_name", TURN1, lambda m: m[2]["tool_calls"][0]["function"].update(name="x" * 65))
edit("call_no_id", TURN1, lambda m: m[2]["tool_calls"][0].pop("id"))
edit("call_empty_id", TURN1, lambda m: m[2]["tool_calls"][0].update(id=""))
edit("call_type", TURN1, lambda m: m[2]["tool_calls"][0].update(type="fn"))
edit("call_dup_id", TURN1, lambda m: (m[2]["tool_calls"][1].update(id="call_a")))
edit("empty_tool_calls", BASE["messages"], lambda m: m.append({"role": "assistant", "content": "x", "tool_calls": []}))
edit("asst_null", BASE["messages"], lambda m: m.extend([{"role": "assistant", "content": None}, {"role": "user", "content": "?"}]))
t = copy.deepcopy(TOOLS); t[0]["function"]["parameters"] = {"type": "array"}
req("tools_param_array", tools=t)
t = copy.deepcopy(TOOLS); t[0]["function"].pop("parameters")
req("tools_no_params", tools=t)
t = copy.deepcopy(TOOLS); t[1]["function"]["name"] = "shell"
req("tools_dup", tools=t)
t = copy.deepcopy(TOOLS); t[0]["type"] = "tool"
req("tools_type", tools=t)
req("tools_empty", tools=[])
req("tool_choice_no_tools", tools=None)
req("tool_not_offered", tools=TOOLS[2:])
req("no_tools_for_calls", tools=None, tool_choice=None)
req("stream_false", stream=False, stream_options=None)
req("stream_missing", stream=None, stream_options=None)
req("stream_options_no_stream", stream=False)
req("max_tokens_str", max_tokens="100")
req("max_tokens_zero", max_completion_tokens=0)
# stricter checks: tool call id length, unknown parameters, content part types,
# max_tokens for reasoning models
def set_id(m, cid):
    m[2]["tool_calls"][0]["id"] = cid
    m[3]["tool_call_id"] = cid
edit("id_41", TURN1, lambda m: set_id(m, "call_" + "x" * 36))
edit("id_40", TURN1, lambda m: set_id(m, "call_" + "x" * 35))
edit("id_vllm", TURN1, lambda m: set_id(m, "chatcmpl-tool-" + "0123456789abcdef" * 2))
req("param_foo", foo=1)
req("param_two", foo=1, bar=True)
req("param_service_level", service_level="default")
KNOWN = dict(temperature=1, top_p=1, n=1, stop=["\n\n"], presence_penalty=0, frequency_penalty=0,
             logit_bias={}, logprobs=False, user="u", seed=1, response_format={"type": "text"},
             reasoning_effort="low", metadata={"k": "v"}, store=False, service_tier="auto",
             parallel_tool_calls=True, verbosity="low", safety_identifier="s",
             prompt_cache_key="k", modalities=["text"])
req("params_known", model="gpt-5-mini", **KNOWN)
def user_parts(parts):
    return lambda m: m[1].update(content=parts)
PNG = imgdata.png(40, 30)
open(f"{T}/sent.png", "wb").write(PNG)
def img(data, mt="image/png", **extra):
    return {"type": "image_url", "image_url": {"url": f"data:{mt};base64,{imgdata.b64(data)}", **extra}}
IMG = img(PNG)
AUDIO = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
edit("parts_user_ok", BASE["messages"], user_parts([{"type": "text", "text": "List"}, IMG, AUDIO,
     {"type": "file", "file": {"file_id": "file-abc"}}]))
edit("parts_user_text_img", BASE["messages"], user_parts([{"type": "text", "text": "List"}, IMG]))
edit("parts_user_video", BASE["messages"], user_parts([{"type": "text", "text": "a"},
     {"type": "video_url", "video_url": {"url": "x"}}]))
edit("parts_user_audio", BASE["messages"], user_parts([AUDIO]))
edit("parts_user_bogus", BASE["messages"], user_parts([{"type": "bogus", "bogus": "x"}]))
edit("parts_text_missing", BASE["messages"], user_parts([{"type": "text"}]))
edit("parts_text_notstr", BASE["messages"], user_parts([{"type": "text", "text": 5}]))
edit("parts_system_img", BASE["messages"], lambda m: m[0].update(content=[{"type": "text", "text": "x"}, IMG]))
edit("parts_system_text", BASE["messages"], lambda m: m[0].update(content=[{"type": "text", "text": "x"}]))
edit("parts_asst_refusal", TURN1, lambda m: m[2].update(content=[{"type": "refusal", "refusal": "no"}]))
edit("parts_asst_img", TURN1, lambda m: m[2].update(content=[IMG]))
edit("parts_tool_text", TURN1, lambda m: m[3].update(content=[{"type": "text", "text": "a.txt"}]))
edit("parts_tool_img", TURN1, lambda m: m[3].update(content=[IMG]))
for model in ("o1", "o1-preview", "o3", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5.1"):
    req("mt_" + model, model=model, max_completion_tokens=None, max_tokens=100)
req("mct_o3", model="o3")
req("mt_gpt-4.1", model="gpt-4.1", max_completion_tokens=None, max_tokens=100)
req("mt_o4", model="o4-mini-2025-04-16", max_completion_tokens=None, max_tokens=100)
req("model_other", model="other-model")
# context management: --turn-by call-id over cut histories (the ids of cid.json), the summary
def calls(*specs):
    return [{"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in specs]
def asst_calls(*specs, text=None):
    answers = [{"role": "tool", "tool_call_id": cid, "content": "out"} for cid, _, _ in specs]
    return [{"role": "assistant", "content": text, "tool_calls": calls(*specs)}] + answers
SYS, SUMMARY_USER = BASE["messages"][0], {"role": "user", "content": "Summary so far: listed the files."}
T0 = asst_calls(("call_t0a", "shell", '{"command":"ls"}'), ("call_t0b", "list_files", "{}"),
                text="Listing.")
T1 = asst_calls(("call_t1", "shell", '{"command":"wc -l a.txt"}'))
T2 = asst_calls(("call_t2", "python", '{"code":"1"}'), text="Counted.")
req("cid_r0")
req("cid_r1", BASE["messages"] + T0)
req("cid_cut", [SYS, SUMMARY_USER] + T1)
req("cid_cut_text", [SYS, SUMMARY_USER] + T2 + [{"role": "assistant", "content": "All done."},
                                               {"role": "user", "content": "One more thing?"}])
req("cid_text_only", BASE["messages"] + [{"role": "assistant", "content": "Hi."},
                                         {"role": "user", "content": "go"}])
req("cid_unknown", BASE["messages"] + asst_calls(("call_zzz", "shell", '{"command":"ls"}')))
req("cid_old_unknown", [SYS, SUMMARY_USER] + asst_calls(("call_old", "shell", "{}")) + T1)
req("cid_unknown_last", [SYS, SUMMARY_USER] + asst_calls(("call_t1", "shell", "{}"),
                                                         ("call_zzz", "list_files", "{}")))
ASK = "Summarize the session for a fresh context."
req("sum_ask", BASE["messages"] + T0 + [{"role": "user", "content": ASK}])
req("sum_ask_parts", BASE["messages"] + T0 + [{"role": "user", "content": [
    {"type": "text", "text": "Now:"}, {"type": "text", "text": ASK}]}])
req("sum_ask_no_tools", BASE["messages"] + T0 + [{"role": "user", "content": ASK}],
    tools=None, tool_choice=None)
req("sum_not_last", [SYS, {"role": "user", "content": ASK}] + T0)
# images: Chat's shape (text tool messages, then a user message with the picture), and the
# pictures the API refuses
def img_user(name, *parts, base=TURN1):
    return req(name, base + [{"role": "user", "content": [
        {"type": "text", "text": "The image of call_a follows."}, *parts]}])
img_user("img_ok", img(PNG, detail="auto"))
img_user("img_two", img(PNG, detail="low"), img(imgdata.jpeg(800, 600), "image/jpeg"),
         img(imgdata.gif(16, 16), "image/gif"), img(imgdata.webp(1024, 768), "image/webp"))
edit("img_in_tool", TURN1, lambda m: m[3].update(content=[{"type": "text", "text": "chart:"}, IMG]))
img_user("img_bad_b64", {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo*AAA"}})
img_user("img_b64_nopad", {"type": "image_url", "image_url": {"url": "data:image/png;base64," + imgdata.b64(PNG).rstrip("=")[:-1]}})
img_user("img_mismatch", img(PNG, "image/jpeg"))
img_user("img_claims_9000", img(imgdata.png_claiming(9000, 100)))
img_user("img_not_image", img(b"hello, this is not a picture", "image/png"))
img_user("img_bmp", img(PNG, "image/bmp"))
img_user("img_empty", {"type": "image_url", "image_url": {"url": "data:image/png;base64,"}})
img_user("img_no_prefix", {"type": "image_url", "image_url": {"url": imgdata.b64(PNG)}})
img_user("img_remote", {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}})
img_user("img_detail_bad", img(PNG, detail="max"))
img_user("img_no_url", {"type": "image_url", "image_url": {"detail": "low"}})
img_user("img_part_anthropic", {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": imgdata.b64(PNG)}})
for name, r in reqs.items():
    with open(f"{T}/{name}.json", "w", encoding="utf-8") as f:
        json.dump(r, f, ensure_ascii=False)
open(f"{T}/bad_json.json", "w").write('{"model": "gpt-test", "messages": [')
EOF
FIXTURES_RC=$?
[ "$FIXTURES_RC" -eq 0 ] || { echo "cannot write the request fixtures"; exit 1; }

# ------------------------------------------------------------------ command line
$PY "$FAKE" --script "$T/script.json" --fault 'bogus@1' 2>/dev/null
is "cli: bad fault spec exits 2" "exit $?" [ $? -eq 2 ]
$PY "$FAKE" --script "$T/nope.json" 2>/dev/null
is "cli: missing script exits 2" "exit $?" [ $? -eq 2 ]
for spec in context@1:x context@1:0 404@1:x; do
	$PY "$FAKE" --script "$T/script.json" --fault "$spec" 2>/dev/null
	is "cli: bad fault spec $spec exits 2" "exit $?" [ $? -eq 2 ]
done
$PY "$FAKE" --script "$T/script.json" --models , 2>/dev/null
is "cli: --models without a name exits 2" "exit $?" [ $? -eq 2 ]

# ------------------------------------------------------------------ openai style
start openai
LEFTOVER=$(compgen -G "$T/openai.port.tmp.*")
is "port file holds a port, no temporary file left" "$LEFTOVER" [ "${PORT:-0}" -gt 0 -a -z "$LEFTOVER" ]
post a r0
expect "openai: 200 event-stream, Connection: close, no Content-Length" \
	"code == 200 and h['content-type'].startswith('text/event-stream') and h.get('connection') == 'close' and 'content-length' not in h"
expect "openai: text rebuilt exactly (non-ASCII intact)" "s['text'] == SCRIPT_TEXT"
expect "openai: text split into many small deltas" "sum(1 for c in s['chunks'] if c['choices'] and c['choices'][0]['delta'].get('content')) >= 8"
expect "openai: first chunk carries role" "s['chunks'][0]['choices'][0]['delta'].get('role') == 'assistant' and s['roles'] == 1"
expect "openai: two tool calls, names and arguments" \
	"names() == ['shell', 'list_files'] and args(0) == {'command': 'ls -la \"input dir\"'} and args(1) == {}"
expect "openai: ids call_*, distinct, indices 0 and 1" \
	"all(c['id'].startswith('call_') for c in s['calls']) and len({c['id'] for c in s['calls']}) == 2 and set(s['indices']) == {0, 1}"
expect "openai: arguments in several fragments, first fragment empty" \
	"s['calls'][0]['fragments'] >= 3 and s['first_has_args'] == [True, True]"
expect "openai: finish tool_calls on an empty delta" "s['finish'] == 'tool_calls' and not s['finish_with_payload']"
expect "openai: usage chunk with choices [] then [DONE] last" \
	"s['usage']['total_tokens'] > 0 and s['usage_choices'] == [] and s['done'] and raw.endswith(b'data: [DONE]\n\n')"
expect "openai: events separated by \\n\\n, no CR" "not s['crlf'] and raw.count(b'\n\n') == s['n_data']"
expect "log: one line with n/path/model/n_messages/turn_index/status/t" \
	"L[-1]['n'] == 1 and L[-1]['path'] == '/v1/chat/completions' and L[-1]['model'] == 'gpt-test' and L[-1]['n_messages'] == 2 and L[-1]['turn_index'] == 0 and L[-1]['status'] == 200 and L[-1]['fault'] is None and isinstance(L[-1]['t'], float)"
post a r0_nousage
expect "openai: no usage chunk without include_usage" "s['usage'] is None and s['done'] and all('usage' not in c for c in s['chunks'])"
post a r0_maxtokens
expect "max_tokens accepted" "code == 200 and s['done']"
post a r1
expect "turn chosen by assistant count: turn 1 text, finish stop" \
	"s['text'] == 'Done: the report is in output/report.md.' and s['calls'] == [] and s['finish'] == 'stop' and L[-1]['turn_index'] == 1"
post a r2
expect "past the last turn: (script exhausted)" "s['text'] == '(script exhausted)' and s['finish'] == 'stop'"
post a r1_big
expect "300 KB body (Expect: 100-continue) accepted" "code == 200 and s['done']"
post a r1 -H 'Transfer-Encoding: chunked'
expect "chunked request body accepted" "code == 200 and s['finish'] == 'stop'"
URLPATH=/chat/completions post a r0
expect "prefix: /chat/completions (empty prefix)" "code == 200 and s['done']"
URLPATH=/api/openai/v1/chat/completions post a r0
expect "prefix: /api/openai/v1" "code == 200 and s['done']"
URLPATH=/v1/completions post a r0
expect "404 on another path, OpenAI body" "code == 404 and err_msg() == 'Invalid URL (POST /v1/completions)'"
AUTH="" post a r0
expect "401 without Authorization header" "code == 401 and \"didn't provide an API key\" in err_msg()"
CUR=stats
curl -s "http://127.0.0.1:$PORT/_stats" >"$T/stats.body"
CODE=200 expect "GET /_stats counts requests by status" \
	"j['requests'] == 11 and j['by_status'] == {'200': 9, '404': 1, '401': 1}"
CUR=models
CODE=$(curl -s -o "$T/models.body" -w '%{http_code}' "http://127.0.0.1:$PORT/v1/models" -H 'Authorization: Bearer x')
CODE=$CODE expect "GET /v1/models lists a model" "j['object'] == 'list' and j['data'][0]['id']"

# many small writes, split inside UTF-8 sequences; keep-alive after an error answer
$PY - "$PORT" "$T/r0.json" "$T/bad_role.json" >"$T/sock.out" 2>&1 <<'EOF'
import http.client, socket, sys, time
port, good, badf = int(sys.argv[1]), open(sys.argv[2], "rb").read(), open(sys.argv[3], "rb").read()
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer x\r\n"
          b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(good) + good)
reads, splits = 0, 0
while True:
    b = s.recv(65536)
    if not b:
        break
    reads += 1
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        splits += 1
c = http.client.HTTPConnection("127.0.0.1", port)
hdrs = {"Authorization": "Bearer x", "Content-Type": "application/json"}
c.request("POST", "/v1/chat/completions", badf, hdrs)
r1 = c.getresponse(); r1.read()
c.request("POST", "/v1/chat/completions", good, hdrs)
r2 = c.getresponse(); r2.read()
print(reads, splits, r1.status, r2.status)
EOF
read -r READS SPLITS S1 S2 <"$T/sock.out"
is "stream arrives in many reads (${READS:-})" "$(cat "$T/sock.out")" [ "${READS:-0}" -ge 20 ]
is "some reads end inside a UTF-8 sequence (${SPLITS:-})" "$(cat "$T/sock.out")" [ "${SPLITS:-0}" -ge 1 ]
is "connection kept alive after a 400" "$(cat "$T/sock.out")" [ "${S1:-}/${S2:-}" = 400/200 ]

# ------------------------------------------------------------------ validation
invalid "invalid JSON" bad_json "could not parse the JSON body"
CTYPE="text/plain" invalid "content-type text/plain" r0 "Content-Type"
invalid "missing model" no_model "you must provide a model parameter"
invalid "model not a string" model_int "Invalid type for 'model'"
invalid "missing messages" no_messages "Missing required parameter: 'messages'"
invalid "empty messages" empty_messages "Invalid 'messages': empty array"
invalid "unknown role" bad_role "Invalid value for 'messages[0].role': 'robot'"
invalid "user content null" user_null "messages[0].content"
invalid "arguments as object" args_object "Invalid type for 'messages[2].tool_calls[0].function.arguments': expected a string, but got an object"
invalid "arguments not JSON" args_notjson "tool_calls[0].function.arguments': the string is not valid JSON"
invalid "arguments a JSON array" args_array "must be a JSON object encoded as a string"
invalid "arguments missing" args_missing "Missing required parameter: 'messages[2].tool_calls[0].function.arguments'"
invalid "missing tool answer (end)" missing_answer "did not have response messages: call_b"
invalid "missing tool answer (before user)" missing_answer_user "did not have response messages: call_b"
invalid "orphan tool message" orphan_tool "must be a response to a preceeding message with 'tool_calls'"
invalid "duplicate tool answer" dup_answer "duplicate tool message for tool_call_id 'call_a'"
invalid "tool answer for unknown id" unknown_id "'call_zzz' not found"
invalid "tool content null" tool_content_null "Invalid type for 'messages[3].content': expected a string, but got null"
invalid "tool content object" tool_content_obj "expected a string, but got an object"
invalid "tool message without tool_call_id" tool_no_id "messages[3].tool_call_id"
invalid "tool_call name with a space" call_bad_name "does not match pattern"
invalid "tool_call name of 65 chars" call_long_name "maximum length 64"
invalid "tool_call without id" call_no_id "Missing required parameter: 'messages[2].tool_calls[0].id'"
invalid "tool_call with empty id" call_empty_id "empty string"
invalid "tool_call type fn" call_type "Supported values are: 'function'"
invalid "duplicate tool_call ids" call_dup_id "duplicate tool call id 'call_a'"
invalid "assistant tool_calls []" empty_tool_calls "tool_calls': empty array"
invalid "assistant content null without calls" asst_null "expected a string, got null"
invalid "tool parameters type array" tools_param_array "schema must be a JSON Schema of 'type: \"object\"'"
invalid "tool without parameters" tools_no_params "tools[0].function.parameters"
invalid "duplicate tool names" tools_dup "duplicate function name 'shell'"
invalid "tool type not function" tools_type "tools[0].type"
invalid "tools []" tools_empty "Invalid 'tools': empty array"
invalid "tool_choice without tools" tool_choice_no_tools "'tool_choice' is only allowed when 'tools' are specified"
invalid "script calls a tool not offered" tool_not_offered "calls tool 'shell' but the request offers python"
invalid "script calls a tool, no tools sent" no_tools_for_calls "calls tool 'shell' but the request offers no 'tools'"
invalid "stream false" stream_false "'stream' must be true"
invalid "stream missing" stream_missing "'stream' must be true"
invalid "stream_options without stream" stream_options_no_stream "'stream_options' parameter is only allowed when 'stream' is enabled"
invalid "max_tokens a string" max_tokens_str "Invalid type for 'max_tokens': expected an integer"
invalid "max_completion_tokens 0" max_tokens_zero "integer below minimum value"
expect "log: a 400 line carries the error" "L[-1]['status'] == 400 and 'minimum' in L[-1]['error']"

# as strict as the real API: each refusal, then the same request made valid
refused "tool call id of 41 chars" id_41 400 "'string_above_max_length'" "'messages[2].tool_calls[0].id'" \
	"Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string with length 41 instead."
refused "vLLM-style tool call id (46 chars)" id_vllm 400 "'string_above_max_length'" "'messages[2].tool_calls[0].id'" "got a string with length 46 instead"
accepted "tool call id of 40 chars" id_40
refused "unknown parameter foo" param_foo 400 None None "Unrecognized request argument supplied: foo"
refused "two unknown parameters" param_two 400 None None "Unrecognized request arguments supplied: foo, bar"
refused "service_level is not a parameter (service_tier is)" param_service_level 400 None None \
	"Unrecognized request argument supplied: service_level"
accepted "the real parameters (temperature, seed, metadata, store, service_tier ...)" params_known
refused "user content part type bogus" parts_user_bogus 400 "'invalid_value'" "'messages[1].content[0].type'" \
	"Invalid value for 'messages[1].content[0].type': 'bogus'. Supported values are: 'text', 'image_url', 'input_audio', and 'file'."
refused "user content part video_url (not OpenAI's)" parts_user_video 400 "'invalid_value'" "'messages[1].content[1].type'" "'video_url'"
accepted "user parts text, image_url, input_audio, file" parts_user_ok
refused "text part without text" parts_text_missing 400 "'missing_required_parameter'" "'messages[1].content[0].text'" \
	"Missing required parameter: 'messages[1].content[0].text'."
refused "text part with a number" parts_text_notstr 400 "'invalid_type'" "'messages[1].content[0].text'" "expected a string, but got an integer"
refused "image_url part in a system message" parts_system_img 400 "'invalid_value'" "'messages[0]'" \
	"Invalid 'messages[0]'. Image URLs are only allowed for messages with role 'user', but this message with role 'system' contains an image URL."
accepted "text parts in a system message" parts_system_text
refused "image_url part in an assistant message" parts_asst_img 400 "'invalid_value'" "'messages[2]'" \
	"but this message with role 'assistant' contains an image URL."
accepted "refusal part in an assistant message" parts_asst_refusal
refused "image_url part in a tool message" parts_tool_img 400 "'invalid_value'" "'messages[3]'" \
	"Invalid 'messages[3]'. Image URLs are only allowed for messages with role 'user', but this message with role 'tool' contains an image URL."
accepted "text parts in a tool message" parts_tool_text
for m in o1 o1-preview o3 o3-mini o4-mini gpt-5 gpt-5-mini gpt-5.1; do
	refused "max_tokens with $m" "mt_$m" 400 "'unsupported_parameter'" "'max_tokens'" \
		"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
done
refused "max_tokens with a dated o4-mini" mt_o4 400 "'unsupported_parameter'" "'max_tokens'" "Use 'max_completion_tokens' instead."
accepted "max_completion_tokens with o3" mct_o3
accepted "max_tokens with gpt-4.1" mt_gpt-4.1
expect "log: the refusal's line names the field" "L[-3]['status'] == 400 and 'max_tokens' in L[-3]['error']"
stop

# ------------------------------------------------------------------ auth
start auth --key sk-test-secret-0123456789
AUTH="Bearer sk-test-secret-0123456789" post a r0
expect "--key: right key -> 200" "code == 200 and s['done']"
AUTH="Bearer sk-wrong-secret-9999" post a r0
expect "--key: wrong key -> 401 invalid_api_key, key masked" \
	"code == 401 and j['error']['code'] == 'invalid_api_key' and j['error']['type'] == 'invalid_request_error' and j['error']['param'] is None and err_msg().startswith('Incorrect API key provided: sk-') and 'sk-wrong-secret-9999' not in err_msg() and '9999' in err_msg()"
AUTH="sk-test-secret-0123456789" post a r0
expect "--key: missing 'Bearer ' -> 401" "code == 401"
stop

# ------------------------------------------------------------------ quirks
start ollama --quirks ollama
post o r0
expect "ollama: text and both calls rebuilt (index 0 + new id = new call)" \
	"s['text'] == SCRIPT_TEXT and names() == ['shell', 'list_files'] and args(0) == {'command': 'ls -la \"input dir\"'} and args(1) == {}"
expect "ollama: each call whole in one delta, all at index 0" \
	"set(s['indices']) == {0} and [c['fragments'] for c in s['calls']] == [1, 1] and s['later_ids'] == []"
expect "ollama: role on every chunk with choices" "s['roles'] == sum(1 for c in s['chunks'] if c['choices'])"
expect "ollama: finish_reason on the last content chunk, then usage, [DONE]" \
	"s['finish'] == 'tool_calls' and s['finish_with_payload'] and s['usage'] and s['done']"
post o r1
expect "ollama: text-only turn ends with finish stop on a content chunk" "s['finish'] == 'stop' and s['finish_with_payload'] and s['text'].startswith('Done')"
# Ollama is laxer than OpenAI: any id length, unknown parameters ignored (Go's JSON decoder),
# max_tokens for any model; content parts only text and image_url, in any role
accepted "ollama: 46-char tool call id" id_vllm
accepted "ollama: unknown parameter ignored" param_foo
accepted "ollama: max_tokens with o3" mt_o3
accepted "ollama: text + image_url parts" parts_user_text_img
accepted "ollama: image_url part in a system message" parts_system_img
invalid "ollama: input_audio part -> invalid message format" parts_user_audio "invalid message format"
invalid "ollama: bogus part -> invalid message format" parts_user_bogus "invalid message format"
invalid "ollama: text part with a number -> invalid message format" parts_text_notstr "invalid message format"
stop

start vllm --quirks vllm
post v r0
expect "vllm: text and calls rebuilt" \
	"s['text'] == SCRIPT_TEXT and names() == ['shell', 'list_files'] and args(0) == {'command': 'ls -la \"input dir\"'} and args(1) == {}"
expect "vllm: later fragments have id '' or no id" \
	"'' in s['later_ids'] and '<absent>' in s['later_ids'] and set(s['later_ids']) <= {'', '<absent>'}"
expect "vllm: {} call sends no arguments at all" "s['calls'][1]['fragments'] == 0 and s['calls'][1]['arguments'] == '' and not s['first_has_args'][0]"
expect "vllm: content null in tool-call chunks" "s['tool_chunk_content'] and all(x is None for x in s['tool_chunk_content'])"
expect "vllm: finish + usage but no [DONE]" "s['finish'] == 'tool_calls' and s['usage'] and not s['done'] and b'[DONE]' not in raw"
post v bad_role
expect "vllm: flat error body with integer code" "code == 400 and j['object'] == 'error' and j['code'] == 400 and 'robot' in j['message']"
# vLLM ignores unknown fields (a server-side warning), takes any id length and max_tokens for
# any model; content part types from its own list, in any role
accepted "vllm: its own 46-char tool call ids" id_vllm
accepted "vllm: unknown parameter ignored" param_foo
accepted "vllm: max_tokens with o3" mt_o3
accepted "vllm: video_url part" parts_user_video
accepted "vllm: image_url part in a system message" parts_system_img
accepted "vllm: a text part without text is skipped, not refused" parts_text_missing
post v parts_user_bogus
expect "vllm: bogus part -> 400 Unsupported chat content part type" \
	"code == 400 and j['object'] == 'error' and j['code'] == 400 and j['message'].startswith(\"Unsupported chat content part type: 'bogus'. Supported types: \") and 'video_url' in j['message']"
stop

start llamacpp --quirks llamacpp
post l r0
expect "llamacpp: text and calls rebuilt" \
	"s['text'] == SCRIPT_TEXT and names() == ['shell', 'list_files'] and args(1) == {}"
expect "llamacpp: every line ends with CRLF" "s['crlf'] and raw.count(b'\n') == raw.count(b'\r\n')"
expect "llamacpp: 32-char alnum tool-call ids" "all(len(c['id']) == 32 and c['id'].isalnum() for c in s['calls'])"
expect "llamacpp: usage and timings on the last chunk" \
	"s['chunks'][-1]['usage']['total_tokens'] > 0 and 'predicted_per_second' in s['chunks'][-1]['timings'] and s['chunks'][-1]['choices'][0]['finish_reason'] == 'tool_calls'"
expect "llamacpp: ': ping' keep-alive comments interspersed" "s['comments'] >= 3 and b': ping\r\n' in raw"
expect "llamacpp: reasoning_content before content, not in text" \
	"s['reasoning'].startswith('(thinking)') and '(thinking)' not in s['text'] and first_delta('reasoning_content') < first_delta('content')"
expect "llamacpp: [DONE]" "s['done']"
accepted "llamacpp: 41-char tool call id" id_41
accepted "llamacpp: unknown parameter ignored" param_foo
accepted "llamacpp: input_audio part" parts_user_audio
post l parts_user_bogus
expect "llamacpp: bogus part -> 400 unsupported content[].type" \
	"code == 400 and j == {'error': {'code': 400, 'message': 'unsupported content[].type', 'type': 'invalid_request_error'}}"
stop

# ------------------------------------------------------------------ faults
start faults --fault '429@1:retry-after=2' --fault '429ms@2:250' --fault quota@3 --fault 500@4 \
	--fault 503@5 --fault 401@6 --fault cut@7 --fault cut@8:3 --fault reset@9 --fault error-event@10 \
	--fault llamacpp-error@11 --fault stall@12:2 --fault stall@14:3 --fault 500@16-17
post f r0
expect "429@1: rate_limit_exceeded with retry-after: 2" \
	"code == 429 and h['retry-after'] == '2' and j == {'error': {'message': 'Rate limit reached for requests', 'type': 'requests', 'param': None, 'code': 'rate_limit_exceeded'}}"
post f r0
expect "429ms@2: retry-after-ms: 250" "code == 429 and h['retry-after-ms'] == '250' and 'retry-after' not in h and j['error']['code'] == 'rate_limit_exceeded'"
post f r0
expect "quota@3: 429 insufficient_quota" "code == 429 and j['error']['code'] == 'insufficient_quota' and j['error']['type'] == 'insufficient_quota'"
post f r0
expect "500@4: server_error body" "code == 500 and j['error']['type'] == 'server_error' and j['error']['message']"
post f r0
expect "503@5: server_error body" "code == 503 and j['error']['type'] == 'server_error'"
post f r0
expect "401@6: invalid_api_key" "code == 401 and j['error']['code'] == 'invalid_api_key'"
post f r0
expect "cut@7: 200, some text, partial tool call, no finish, no [DONE]" \
	"code == 200 and rc == 0 and s['text'] and SCRIPT_TEXT.startswith(s['text']) and len(s['calls']) == 1 and s['calls'][0]['parsed'] is None and s['finish'] is None and not s['done']"
post f r0
expect "cut@8:3: exactly 3 events" "code == 200 and s['n_data'] == 3 and not s['done'] and s['finish'] is None"
post f r0
expect "reset@9: connection reset (curl 56) after some events" "rc == 56 and len(raw) > 0 and b'[DONE]' not in raw"
post f r0
expect "error-event@10: text chunks then data: {error}, no [DONE]" \
	"code == 200 and len(s['text']) > 0 and s['errors'] == [{'message': 'The server had an error while processing your request.', 'type': 'server_error', 'param': None, 'code': None}] and not s['done'] and s['finish'] is None"
post f r0
expect "llamacpp-error@11: text chunks then error: line" \
	"code == 200 and s['text'] and s['error_lines'] and s['error_lines'][0]['code'] == 500 and s['error_lines'][0]['type'] == 'server_error' and not s['done']"
# stall@12: another request is answered while this one stalls, and the stall then completes
post f12 r0 &
CURLBG=$!
for _ in $(seq 100); do [ "$(wc -l <"$LOG")" -ge 12 ] && break; sleep 0.02; done
T0=$($PY -c 'import time; print(time.time())')
post f r1
T1=$($PY -c 'import time; print(time.time())')
expect "request 13 answered while 12 stalls" "code == 200 and s['finish'] == 'stop' and $T1 - $T0 < 1.5"
wait $CURLBG
CUR=f12 CODE=200 expect "stall@12:2: stream completes after the pause" "s['text'] == SCRIPT_TEXT and s['done'] and L[11]['fault'] == 'stall@12:2'"
CUR=f12 CODE=200 expect "log: request 13 arrived while 12 stalled" "L[12]['t'] - L[11]['t'] < 1.5"
post f r0 --max-time 1
expect "stall@14:3: client times out (curl 28) after the first chunk" "rc == 28 and raw.startswith(b'data: ') and raw.count(b'data: ') == 1"
post f r0
expect "request 15 normal" "code == 200 and s['done']"
post f r0
expect "500@16-17 (range): 16" "code == 500"
post f r0
expect "500@16-17 (range): 17" "code == 500"
post f r0
expect "request 18 normal; log has 18 lines with statuses and faults" \
	"code == 200 and [x['n'] for x in L] == list(range(1, 19)) and [x['status'] for x in L][:6] == [429, 429, 429, 500, 503, 401] and L[0]['fault'] == '429@1:retry-after=2' and L[6]['fault'] == 'cut@7' and L[13]['fault'] == 'stall@14:3' and L[17]['fault'] is None and all(L[i]['t'] <= L[i+1]['t'] for i in range(17))"
CUR=stats
curl -s "http://127.0.0.1:$PORT/_stats" >"$T/stats.body"
CODE=200 expect "GET /_stats after faults" \
	"j == {'requests': 18, 'by_status': {'429': 3, '500': 3, '503': 1, '401': 1, '200': 10}}"
stop

# retry-after timing as a client test would check it
start retry --fault '429@1:retry-after=1'
post r r0
RA=$(tr -d '\r' <"$T/r.hdr" | awk -F': ' 'tolower($1)=="retry-after"{print $2}')
sleep "${RA:-0}"
post r r0
expect "retry: log shows request 2 came >= retry-after (1 s) after request 1" \
	"code == 200 and L[0]['status'] == 429 and L[1]['t'] - L[0]['t'] >= 1.0"
stop

# ------------------------------------------------------------------ new faults: 404 model, context length
start nf --fault 404@1 --fault context@2 --fault context@3:1000 --fault 404@5
refused "404@1: unknown model" r0 404 "'model_not_found'" None \
	"The model 'gpt-test' does not exist or you do not have access to it."
refused "context@2: context_length_exceeded (default 128000)" r0 400 "'context_length_exceeded'" "'messages'" \
	"This model's maximum context length is 128000 tokens. However, your messages resulted in 128001 tokens. Please reduce the length of the messages."
refused "context@3:1000: the prompt's own size in tokens" r1_big 400 "'context_length_exceeded'" "'messages'" \
	"This model's maximum context length is 1000 tokens. However, your messages resulted in "
expect "context@3:1000: M > 1000 (the request's estimate)" \
	"int(err_msg().split('resulted in ')[1].split()[0]) > 70000"
accepted "request 4 normal" r0
post nf bad_role
expect "404@5 fires whatever the body (a status fault)" "code == 404 and j['error']['code'] == 'model_not_found'"
expect "log: the new faults are logged" \
	"[x['status'] for x in L] == [404, 400, 400, 200, 404] and [x['fault'] for x in L] == ['404@1', 'context@2', 'context@3:1000', None, '404@5'] and 'does not exist' in L[0]['error']"
stop

start models --models gpt-test,gpt-other
accepted "--models: a known model" r0
refused "--models: another model -> 404" model_other 404 "'model_not_found'" None \
	"The model 'other-model' does not exist or you do not have access to it."
CUR=models
CODE=$(curl -s -o "$T/models.body" -w '%{http_code}' "http://127.0.0.1:$PORT/v1/models" -H 'Authorization: Bearer x')
CODE=$CODE expect "--models: GET /v1/models lists them" "[m['id'] for m in j['data']] == ['gpt-test', 'gpt-other']"
stop

start vmodels --quirks vllm --models gpt-test --fault context@2:100
post vm model_other
expect "vllm --models: flat 404 NotFoundError" \
	"code == 404 and j == {'object': 'error', 'message': 'The model \`other-model\` does not exist.', 'type': 'NotFoundError', 'param': 'model', 'code': 404}"
post vm r0
expect "vllm context@2:100: flat 400 with vLLM's wording" \
	"code == 400 and j['object'] == 'error' and j['code'] == 400 and j['message'].startswith(\"This model's maximum context length is 100 tokens. However, your request has \") and 'input tokens' in j['message']"
stop

start omodels --quirks ollama --models llama3.2
post om r0
expect "ollama --models: 404 not_found_error, try pulling it" \
	"code == 404 and j['error']['type'] == 'not_found_error' and j['error']['message'] == 'model \"gpt-test\" not found, try pulling it first'"
stop

start lctx --quirks llamacpp --fault context@1:50 --models x
post lc r0
expect "llamacpp context@1:50: exceed_context_size_error with n_ctx, n_prompt_tokens" \
	"code == 400 and j['error']['type'] == 'exceed_context_size_error' and j['error']['code'] == 400 and j['error']['n_ctx'] == 50 and j['error']['n_prompt_tokens'] > 50 and 'exceeds the available context size (50 tokens)' in j['error']['message']"
post lc r0
expect "llamacpp --models: 404 not_found_error" "code == 404 and j['error'] == {'code': 404, 'message': 'model not found', 'type': 'not_found_error'}"
stop

# ------------------------------------------------------------------ seed
# Without --seed the server picks one, says it on stderr before the port file appears and puts
# it in every log line; --seed with that number gives the same stream (ids, splits, chunks).
SEED=random start seed1
SEED1=$(sed -n 's/^fake_openai: seed \([0-9][0-9]*\) (rerun with --seed \1 .*/\1/p' "$T/seed1.err")
is "seed: stderr says 'fake_openai: seed N (rerun with --seed N ...)' (${SEED1:-none})" "$(cat "$T/seed1.err")" [ -n "$SEED1" ]
post s1 r0
expect "seed: the log line carries it" "L[-1]['seed'] == int('${SEED1:-0}')"
stop
SEED=$SEED1 start seed2
post s2 r0
expect "seed: the log line carries --seed" "L[-1]['seed'] == int('${SEED1:-0}')"
stop
SEED=$((${SEED1:-0} + 1)) start seed3
post s3 r0
stop
$PY - "$T" >"$T/seed.out" 2>&1 <<'EOF2'
import re, sys
T = sys.argv[1]
body = lambda n: re.sub(rb'"created":[0-9]+', b'', open(f"{T}/{n}.body", "rb").read())
ids = lambda n: re.findall(rb'"id":"(call_[A-Za-z0-9]+)"', body(n))
assert ids("s1") and len(ids("s1")) == 2, ids("s1")
assert body("s1") == body("s2"), "same seed, different streams"
assert ids("s3") != ids("s1"), "another seed, same ids"
print("ok")
EOF2
is "seed: --seed N reproduces the stream byte for byte; another seed does not" "$(cat "$T/seed.out")" grep -qx ok "$T/seed.out"

# faults in another quirk style: cut keeps the quirk's framing
start cutl --quirks llamacpp --fault cut@1
post c r0
expect "llamacpp cut@1: CRLF framing, partial call, no finish" \
	"code == 200 and s['crlf'] and len(s['calls']) == 1 and s['calls'][0]['parsed'] is None and s['finish'] is None and not s['done']"
stop

# ------------------------------------------------------------------ context management
# --max-context N: a prompt over N tokens (JSON of messages / 4, the usage's prompt_tokens)
# gets the style's context-length 400; --turn-by call-id; the script's summary answer
cat >"$T/cid.json" <<'EOF'
{"turns": [
  {"text": "Listing.", "tool_calls": [{"id": "call_t0a", "name": "shell", "arguments": {"command": "ls"}},
                                      {"id": "call_t0b", "name": "list_files", "arguments": {}}]},
  {"tool_calls": [{"id": "call_t1", "name": "shell", "arguments": {"command": "wc -l a.txt"}}]},
  {"text": "Counted.", "tool_calls": [{"id": "call_t2", "name": "python", "arguments": {"code": "1"}}]},
  {"text": "All done."}],
 "summary": {"when": "Summarize the session", "text": "SUMMARY: listed the files, counted a.txt."}}
EOF
# cli_exit2 NAME WORDS SCRIPT-JSON [options]: the fake exits 2, its stderr naming WORDS
cli_exit2() {
	local name=$1 words=$2 json=$3 rc
	shift 3
	printf '%s\n' "$json" >"$T/cli.json"
	$PY "$FAKE" --script "$T/cli.json" --port 0 "$@" >/dev/null 2>"$T/cli.err"
	rc=$?
	is "cli: $name exits 2 naming '$words'" "exit $rc: $(cat "$T/cli.err")" \
		eval '[ $rc -eq 2 ] && grep -qF -- "$words" "$T/cli.err"'
}
TURN='{"text": "x"}'
cli_exit2 "summary not an object" "summary must be an object" "{\"turns\": [$TURN], \"summary\": \"x\"}"
cli_exit2 "summary without text" "summary must be an object with exactly 'when' and 'text'" \
	"{\"turns\": [$TURN], \"summary\": {\"when\": \"x\"}}"
cli_exit2 "summary with another key" "exactly 'when' and 'text'" \
	"{\"turns\": [$TURN], \"summary\": {\"when\": \"x\", \"text\": \"y\", \"tool_calls\": []}}"
cli_exit2 "summary.when empty" "summary.when must be a non-empty string" \
	"{\"turns\": [$TURN], \"summary\": {\"when\": \"\", \"text\": \"y\"}}"
cli_exit2 "summary.text a number" "summary.text must be a non-empty string" \
	"{\"turns\": [$TURN], \"summary\": {\"when\": \"x\", \"text\": 5}}"
cli_exit2 "call-id: a call without id" "turns[1].tool_calls[0].id must be a non-empty string" \
	'{"turns": [{"text": "a"}, {"tool_calls": [{"name": "shell"}]}]}' --turn-by call-id
cli_exit2 "call-id: an id used twice" "turns[1].tool_calls[0].id 'c1' is already used in turns[0]" \
	'{"turns": [{"tool_calls": [{"id": "c1", "name": "a"}]}, {"tool_calls": [{"id": "c1", "name": "b"}]}]}' \
	--turn-by call-id
cli_exit2 "--max-context -1" "--max-context must be 0 (no limit) or more" "{\"turns\": [$TURN]}" --max-context -1
cli_exit2 "--turn-by bogus" "invalid choice: 'bogus'" "{\"turns\": [$TURN]}" --turn-by bogus

start mc0
post m0 r0
P=$($PY -c 'import json, sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["prompt_tokens"])' "$LOG" 2>/dev/null)
expect "log: an accepted request's prompt_tokens = the usage's = JSON of messages / 4" \
	"L[-1]['prompt_tokens'] == s['usage']['prompt_tokens'] == len(json.dumps(json.load(open('$T/r0.json'))['messages'])) // 4"
expect "log: summary false on an answer from the script" "L[-1]['summary'] is False"
stop
P=${P:-2}
start mcP --max-context "$P"
accepted "--max-context $P (the prompt's own count): accepted" r0
stop
start mcP1 --max-context $((P - 1))
refused "--max-context $((P - 1)): one token over -> context_length_exceeded" r0 400 "'context_length_exceeded'" "'messages'" \
	"This model's maximum context length is $((P - 1)) tokens. However, your messages resulted in $P tokens. Please reduce the length of the messages."
stop
start mc --max-context 200
accepted "--max-context 200: a small prompt" r0
refused "--max-context 200: the 300 KB prompt -> 400 context_length_exceeded" r1_big 400 "'context_length_exceeded'" "'messages'" \
	"This model's maximum context length is 200 tokens. However, your messages resulted in "
expect "--max-context: the refusal's count is the log's prompt_tokens, over 200" \
	"err_msg().split('resulted in ')[1].split()[0] == str(L[-1]['prompt_tokens']) and L[-1]['prompt_tokens'] > 200"
expect "--max-context: logged as a 400 with its error and prompt_tokens, no fault" \
	"L[-1]['status'] == 400 and 'maximum context length is 200' in L[-1]['error'] and L[-1]['fault'] is None and 'tool_call_ids' not in L[-1]"
accepted "--max-context 200: accepted again after a refusal" r1
expect "--max-context: no accepted request over 200 in the log" \
	"[x['status'] for x in L] == [200, 400, 200] and all(x['prompt_tokens'] <= 200 for x in L if x['status'] == 200)"
stop
start mcv --quirks vllm --max-context 200
post mv r1_big
expect "vllm --max-context: flat 400 with vLLM's wording and the log's count" \
	"code == 400 and j['object'] == 'error' and j['code'] == 400 and j['type'] == 'BadRequestError' and j['message'] == f\"This model's maximum context length is 200 tokens. However, your request has {L[-1]['prompt_tokens']} input tokens. Please reduce the length of the input messages.\""
accepted "vllm --max-context: a small prompt" r0
stop
start mcl --quirks llamacpp --max-context 200
post ml r1_big
expect "llamacpp --max-context: exceed_context_size_error, n_ctx 200, n_prompt_tokens = the log's" \
	"code == 400 and j['error']['type'] == 'exceed_context_size_error' and j['error']['code'] == 400 and j['error']['n_ctx'] == 200 and j['error']['n_prompt_tokens'] == L[-1]['prompt_tokens'] > 200"
accepted "llamacpp --max-context: a small prompt" r0
expect "llamacpp: usage prompt_tokens = the log's prompt_tokens" "s['usage']['prompt_tokens'] == L[-1]['prompt_tokens']"
stop

start cid --script "$T/cid.json" --turn-by call-id
post c0 cid_r0
expect "call-id: no tool call in the request -> turn 0 with the script's fixed ids" \
	"[c['id'] for c in s['calls']] == ['call_t0a', 'call_t0b'] and L[-1]['turn_index'] == 0 and L[-1]['tool_call_ids'] == ['call_t0a', 'call_t0b']"
post c1 cid_r1
expect "call-id: latest call call_t0b (turn 0) -> turn 1" \
	"[c['id'] for c in s['calls']] == ['call_t1'] and L[-1]['turn_index'] == 1"
post c2 cid_cut
expect "call-id: a cut history (summary user message, one assistant message, call_t1) -> turn 2" \
	"s['text'] == 'Counted.' and [c['id'] for c in s['calls']] == ['call_t2'] and names() == ['python'] and L[-1]['turn_index'] == 2 and L[-1]['n_messages'] == 4"
post c2b cid_cut
expect "call-id: the same request again (a retry) -> the same turn and ids" \
	"code == 200 and [c['id'] for c in s['calls']] == ['call_t2'] and [x['turn_index'] for x in L[-2:]] == [2, 2]"
post c3 cid_cut_text
expect "call-id: a text answer after the latest call (call_t2) counts: turn 2 + 1 + 1 -> 4 (exhausted)" \
	"s['text'] == '(script exhausted)' and L[-1]['turn_index'] == 4"
post c4 cid_text_only
expect "call-id: no tool call, one assistant message -> turn 1 (as by assistant count)" \
	"[c['id'] for c in s['calls']] == ['call_t1'] and L[-1]['turn_index'] == 1"
post c5 cid_old_unknown
expect "call-id: only the latest call counts (an older unknown id is ignored) -> turn 2" \
	"code == 200 and L[-1]['turn_index'] == 2"
refused "call-id: a latest call id in no script turn" cid_unknown 400 "'invalid_value'" "'messages[2].tool_calls[0].id'" \
	'fake_openai: tool call id "call_zzz" (messages[2].tool_calls[0].id, the latest in the request) is in no script turn (--turn-by call-id).'
expect "call-id: the refusal is logged (400, error, turn_index null)" \
	"L[-1]['status'] == 400 and 'call_zzz' in L[-1]['error'] and L[-1]['turn_index'] is None"
refused "call-id: the last call of the latest message is the one looked up" cid_unknown_last 400 "'invalid_value'" "'messages[2].tool_calls[1].id'" \
	'"call_zzz"'
post s1 sum_ask
expect "summary: a last user message containing 'when' -> the summary text, no calls, finish stop" \
	"s['text'] == 'SUMMARY: listed the files, counted a.txt.' and s['calls'] == [] and s['finish'] == 'stop' and s['done']"
expect "summary: log summary true, turn_index null, usage counted as usual" \
	"L[-1]['summary'] is True and L[-1]['turn_index'] is None and L[-1]['tool_call_ids'] == [] and s['usage']['prompt_tokens'] == L[-1]['prompt_tokens'] and s['usage']['completion_tokens'] == len('SUMMARY: listed the files, counted a.txt.') // 4"
post s2 sum_ask_parts
expect "summary: the text parts of the last user message are searched" "s['text'].startswith('SUMMARY:') and L[-1]['summary'] is True"
post s3 sum_ask_no_tools
expect "summary: answered without tools in the request" "code == 200 and s['text'].startswith('SUMMARY:')"
post s4 sum_not_last
expect "summary: 'when' in an earlier user message only -> the script's turn (1)" \
	"L[-1]['summary'] is False and L[-1]['turn_index'] == 1 and [c['id'] for c in s['calls']] == ['call_t1']"
stop
start sumdef --script "$T/cid.json"
post sd sum_ask
expect "summary with --turn-by assistants (the default) too" "s['text'].startswith('SUMMARY:') and L[-1]['summary'] is True"
post sd2 cid_cut
expect "default turn pick unchanged: one assistant message -> turn 1, even on a cut history" \
	"[c['id'] for c in s['calls']] == ['call_t1'] and L[-1]['turn_index'] == 1"
stop

# ------------------------------------------------------------------ images (protocols.md F)
IMGS="$T/images"
start images --images-dir "$IMGS"
accepted "images: a PNG in a user message after the tool messages (Chat's shape)" img_ok
expect "images: the log lists it (n_images, media type, size, sha256, file)" \
	"L[-1]['n_images'] == 1 and L[-1]['images'][0]['media_type'] == 'image/png' and (L[-1]['images'][0]['width'], L[-1]['images'][0]['height']) == (40, 30) and L[-1]['images'][0]['bytes'] == os.path.getsize(os.environ['T'] + '/sent.png') and L[-1]['images'][0]['detail'] == 'auto' and L[-1]['images'][0]['where'] == 'messages[5].content[1].image_url.url' and L[-1]['images'][0]['file'] == '0001-1.png'"
is "images: --images-dir holds 0001-1.png, byte for byte the PNG sent" "$(ls "$IMGS")" cmp -s "$IMGS/0001-1.png" "$T/sent.png"
expect "images: prompt_tokens counts the image as OpenAI does (255 for 40x30), not its base64" \
	"255 < L[-1]['prompt_tokens'] < 255 + 400 and s['usage']['prompt_tokens'] == L[-1]['prompt_tokens']"
accepted "images: four parts, PNG (low), JPEG, GIF, WebP" img_two
expect "images: all four logged with their sizes and written as 0002-2.png .. 0005-2.webp" \
	"[(i['media_type'], i['width'], i['height'], i['file']) for i in L[-1]['images']] == [('image/png', 40, 30, '0002-2.png'), ('image/jpeg', 800, 600, '0003-2.jpg'), ('image/gif', 16, 16, '0004-2.gif'), ('image/webp', 1024, 768, '0005-2.webp')]"
refused "images: an image_url part in a tool message" img_in_tool 400 "'invalid_value'" "'messages[3]'" \
	"Invalid 'messages[3]'. Image URLs are only allowed for messages with role 'user', but this message with role 'tool' contains an image URL."
refused "images: bad base64 (a '*')" img_bad_b64 400 "'invalid_value'" "'messages[5].content[1].image_url.url'" \
	"Invalid image URL: 'messages[5].content[1].image_url.url'. Expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got an invalid base64-encoded value."
refused "images: base64 cut short (no padding)" img_b64_nopad 400 "'invalid_value'" "'messages[5].content[1].image_url.url'" "but got an invalid base64-encoded value."
refused "images: data:image/jpeg over PNG bytes" img_mismatch 400 "'invalid_value'" "'messages[5].content[1].image_url.url'" \
	"The data URL says image/jpeg but the bytes are a image/png image"
refused "images: a PNG whose header claims 9000x100" img_claims_9000 400 "'invalid_image'" None \
	"You uploaded an unsupported image. Please make sure your image is valid."
refused "images: bytes that are no image" img_not_image 400 "'invalid_image_format'" None \
	"You uploaded an unsupported image. Please make sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp']."
refused "images: image/bmp" img_bmp 400 "'invalid_value'" "'messages[5].content[1].image_url.url'" "but got unsupported MIME type 'image/bmp'."
refused "images: empty base64" img_empty 400 "'invalid_value'" "'messages[5].content[1].image_url.url'" "but got empty base64-encoded bytes."
refused "images: bare base64, no data: prefix" img_no_prefix 400 "'invalid_value'" "'messages[5].content[1].image_url.url'" \
	"but got a value without the 'data:' prefix."
refused "images: a remote URL (this fake fetches nothing)" img_remote 400 "'invalid_value'" "'messages[5].content[1].image_url.url'" "fake_openai fetches no remote images"
refused "images: detail 'max'" img_detail_bad 400 "'invalid_value'" "'messages[5].content[1].image_url.detail'" \
	"Invalid value: 'max'. Supported values are: 'low', 'high', and 'auto'."
refused "images: image_url without url" img_no_url 400 "'missing_required_parameter'" "'messages[5].content[1].image_url.url'" \
	"Missing required parameter: 'messages[5].content[1].image_url.url'."
refused "images: an Anthropic image block (unknown part type)" img_part_anthropic 400 "'invalid_value'" "'messages[5].content[1].type'" \
	"Invalid value for 'messages[5].content[1].type': 'image'. Supported values are: 'text', 'image_url', 'input_audio', and 'file'."
expect "images: refusals are logged without images, and nothing more was written" \
	"L[-1]['status'] == 400 and 'images' not in L[-1] and sorted(os.listdir(os.environ['T'] + '/images')) == ['0001-1.png', '0002-2.png', '0003-2.jpg', '0004-2.gif', '0005-2.webp']"
stop
start imgollama --quirks ollama --images-dir "$T/images_ollama"
accepted "ollama: a PNG in a user message" img_ok
invalid "ollama: bad base64 -> invalid image input" img_bad_b64 "invalid image input"
accepted "ollama: an image_url part in a tool message (as before: any role)" img_in_tool
is "ollama: both accepted images written" "$(ls "$T/images_ollama")" test "$(ls "$T/images_ollama" | tr '\n' ' ')" = "0001-1.png 0002-3.png "
stop
start imgvllm --quirks vllm
post v img_mismatch
expect "vllm: a media type that lies -> 400, flat body" "code == 400 and j['object'] == 'error' and 'image/png image' in j['message']"
stop

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
