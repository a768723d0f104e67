#!/usr/bin/env bash
# The Anthropic fake is tested too: tests/fakes/fake_anthropic.py is driven
# over real HTTP by raw requests (Python's http.client and sockets, and curl:
# every rejection next to the same request made valid, the stream's shape,
# every fault, the cache numbers, the seed) and then by the official
# @anthropic-ai/sdk from npm (tests/fakes/anthropic_sdk_check.mjs), so a fake
# that drifts from the real Messages API fails here instead of letting the
# provider tests that use it pass. The SDK is installed at test time (a fresh
# clone has none), once per version (npm_sdk in lib.bash keeps an exact
# version's install beside npm's cache): pinned versions, the last 0.x
# (x-api-key, anthropic-version 2023-06-01: what assay sends) and a 1.x
# (Authorization: Bearer, 2026-10-21), so that a new release cannot break the
# suite; ANTHROPIC_SDK_VERSIONS overrides (e.g. "latest"). Without node 18+,
# npm or the install it skips after the HTTP checks (a failure under CI=true).
source "$(dirname "$0")/lib.bash"
FAKE=$SRC/tests/fakes/fake_anthropic.py # start_fake runs $FAKE
SDK_CHECK=$SRC/tests/fakes/anthropic_sdk_check.mjs
SDK_VERSIONS=${ANTHROPIC_SDK_VERSIONS:-0.137.0 1.16.0}
NPM_CACHE=${ASSAY_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/assay/npm}
command -v curl >/dev/null || skip "curl is not installed (some checks drive the fake with it)"


# ------------------------------------------------------------------ raw HTTP
cat >"$T/http_checks.py" <<'PY'
# HTTP checks of fake_anthropic.py: raw HTTP/1.1 (http.client and sockets), no SDK.
# Usage: python3 http_checks.py FAKE TMPDIR; prints ok/FAIL lines, "N passed, M failed".
import atexit
import copy
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import signal
import time

FAKE, T = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(os.path.abspath(FAKE)))
import imgdata  # noqa: E402  (tests/fakes/imgdata.py: pictures for the image checks)
PY = sys.executable
PASS = FAIL = 0
PROCS = []  # the servers: stopped on any exit, a timeout's SIGTERM too
atexit.register(lambda: [p.terminate() for p in PROCS])
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
KEY = "sk-ant-test-key"
MODEL = "claude-test-1"
THINK = "The user wants the files — naïvely first."
TEXT0 = "Let me look ✓ (été, 文件)."
ARGS0 = {"command": 'ls -la "input dir" \\ done', "n": 3}
SCRIPT = {"turns": [
    {"thinking": THINK, "text": TEXT0, "tool_calls": [
        {"name": "shell", "arguments": ARGS0}, {"name": "list_files", "arguments": {}}]},
    {"text": "Done: 3 files. STOP here", "redacted_thinking": "secret plan"},
    {"text": "Third.", "stop_reason": "max_tokens",
     "usage": {"input_tokens": 111, "output_tokens": 22, "cache_read_input_tokens": 333,
               "cache_creation_input_tokens": 44}},
]}
json.dump(SCRIPT, open(f"{T}/script.json", "w"))


def ok(name):
    global PASS
    PASS += 1
    print(f"ok   {name}", flush=True)


def ko(name, detail=""):
    global FAIL
    FAIL += 1
    print(f"FAIL {name}" + (f" -- {detail}" if detail else ""), flush=True)


def check(name, cond, detail=""):
    if cond:
        ok(name)
    else:
        ko(name, detail() if callable(detail) else detail)


class Server:
    def __init__(self, name, *args, seed="7"):
        self.name, self.pf, self.log = name, f"{T}/{name}.port", f"{T}/{name}.log"
        for f in (self.pf, self.log):
            if os.path.exists(f):
                os.remove(f)
        cmd = [PY, FAKE, "--script", f"{T}/script.json", "--port", "0", "--port-file", self.pf,
               "--log", self.log, "--delay-ms", "0.3"] + (["--seed", seed] if seed else []) + list(args)
        self.err = open(f"{T}/{name}.err", "w+")
        self.proc = subprocess.Popen(cmd, stderr=self.err)
        PROCS.append(self.proc)
        for _ in range(400):
            if os.path.exists(self.pf):
                break
            time.sleep(0.025)
        self.port = int(open(self.pf).read())

    def lines(self):
        return [json.loads(l) for l in open(self.log)] if os.path.exists(self.log) else []

    def stderr(self):
        self.err.flush()
        return open(self.err.name).read()

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


HDRS = {"x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json"}


class Answer:
    def __init__(self, status, headers, body, error=None):
        self.status, self.headers, self.body, self.error = status, headers, body, error
        self.json = None
        if headers.get("content-type", "").startswith("application/json"):
            try:
                self.json = json.loads(body)
            except ValueError:
                pass
        self.events = parse_sse(body) if "event-stream" in headers.get("content-type", "") else []

    @property
    def message(self):  # an error's message
        return (self.json or {}).get("error", {}).get("message", "")


def post(srv, body, headers=None, path="/v1/messages", drop=(), timeout=20):
    h = dict(HDRS, **(headers or {}))
    for k in drop:
        h.pop(k, None)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=timeout)
    try:
        c.request("POST", path, data, h)
        r = c.getresponse()
        hd = {k.lower(): v for k, v in r.getheaders()}
        try:
            b = r.read()
            err = None
        except (http.client.IncompleteRead, ConnectionResetError) as e:
            b, err = getattr(e, "partial", b""), e
        return Answer(r.status, hd, b, err)
    except (ConnectionResetError, http.client.RemoteDisconnected) as e:
        return Answer(0, {}, b"", e)
    finally:
        c.close()


def get(srv, path, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    c.request("GET", path, headers=dict(HDRS, **(headers or {})))
    r = c.getresponse()
    a = Answer(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    c.close()
    return a


def parse_sse(raw):
    """protocols.md section 0: split on \\n, drop a trailing \\r, event:/data: fields (one
    leading space dropped), ':' comments, a blank line dispatches; dispatch what is left."""
    out, ev, data = [], None, []
    for line in raw.decode("utf-8").split("\n") + [""]:
        line = line[:-1] if line.endswith("\r") else line
        if line == "":
            if data:
                out.append({"event": ev, "data": json.loads("\n".join(data))})
            ev, data = None, []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                ev = value
            elif field == "data":
                data.append(value)
    return out


def rebuild(events):
    """The message a client rebuilds from a stream (strict JSON parse of partial_json)."""
    msg, blocks, jbuf = None, {}, {}
    for e in events:
        d = e["data"]
        t = d["type"]
        if t == "message_start":
            msg = copy.deepcopy(d["message"])
        elif t == "content_block_start":
            blocks[d["index"]] = copy.deepcopy(d["content_block"])
            jbuf[d["index"]] = []
        elif t == "content_block_delta":
            b, dl = blocks[d["index"]], d["delta"]
            if dl["type"] == "text_delta":
                b["text"] += dl["text"]
            elif dl["type"] == "thinking_delta":
                b["thinking"] += dl["thinking"]
            elif dl["type"] == "signature_delta":
                b["signature"] = dl["signature"]
            elif dl["type"] == "input_json_delta":
                jbuf[d["index"]].append(dl["partial_json"])
        elif t == "content_block_stop":
            b = blocks[d["index"]]
            if b["type"] == "tool_use":
                b["input"] = json.loads("".join(jbuf[d["index"]]) or "{}")
        elif t == "message_delta":
            msg["stop_reason"] = d["delta"]["stop_reason"]
            msg["stop_sequence"] = d["delta"]["stop_sequence"]
            msg["usage"].update(d["usage"])
        elif t == "message_stop":
            msg["done"] = True
    if msg is not None:
        msg["content"] = [blocks[k] for k in sorted(blocks)]
        msg["frags"] = {k: v for k, v in jbuf.items() if blocks[k]["type"] == "tool_use"}
    return msg


TOOLS = [{"name": "shell", "description": "Run a command", "input_schema": {
    "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}},
    {"name": "list_files", "input_schema": {"type": "object"}}]
USER0 = {"role": "user", "content": "List the files."}


def req(**kw):
    r = {"model": MODEL, "max_tokens": 4096, "stream": True, "tools": copy.deepcopy(TOOLS),
         "messages": [copy.deepcopy(USER0)]}
    r.update(kw)
    return r


def is_error(a, status, etype, message, exact=False):
    j = a.json or {}
    e = j.get("error") or {}
    good = (a.status == status and j.get("type") == "error" and e.get("type") == etype
            and (e.get("message") == message if exact else message in e.get("message", ""))
            and isinstance(j.get("request_id"), str) and j["request_id"] == a.headers.get("request-id"))
    return good


def refused(name, srv, body, message, status=400, etype="invalid_request_error", exact=True,
            **kw):
    a = post(srv, body, **kw)
    check(f"{name} -> {status} {etype}", is_error(a, status, etype, message, exact),
          lambda: f"{a.status} {a.body[:300]!r}")
    return a


def accepted(name, srv, body, **kw):
    a = post(srv, body, **kw)
    m = rebuild(a.events) if a.events else None
    check(f"{name} -> 200", a.status == 200 and (m is None or m.get("done")),
          lambda: f"{a.status} {a.body[:300]!r}")
    return a


# ------------------------------------------------------------------ the stream
s = Server("main")
a0 = post(s, req(thinking={"type": "enabled", "budget_tokens": 1024}))
m0 = rebuild(a0.events)
ev = a0.events
names = [e["event"] for e in ev]
check("stream: 200 text/event-stream, no Content-Length, request-id req_...",
      a0.status == 200 and a0.headers["content-type"].startswith("text/event-stream")
      and "content-length" not in a0.headers and a0.headers.get("request-id", "").startswith("req_"))
check("stream: every event has an event: line naming its data's type",
      ev and all(e["event"] == e["data"]["type"] for e in ev), lambda: names)
check("stream: message_start first; message_delta, message_stop last",
      names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"], names)
first = names.index("content_block_start")
check("stream: ping events, one right after the first content_block_start",
      names.count("ping") >= 1 and names[first + 1] == "ping", names)
order = [(e["data"]["type"], e["data"].get("index")) for e in ev if "index" in e["data"]]
ok_order, open_ = True, None
for t, i in order:
    if t == "content_block_start":
        ok_order &= open_ is None and i == (0 if not m0 else i)
        open_ = i
    elif t == "content_block_delta":
        ok_order &= open_ == i
    else:
        ok_order &= open_ == i
        open_ = None
check("stream: blocks 0..n-1 one at a time (start, deltas, stop)", ok_order and sorted(
    {i for _, i in order}) == list(range(4)), order)
check("stream: blocks thinking, text, tool_use, tool_use", m0 and [b["type"] for b in m0["content"]]
      == ["thinking", "text", "tool_use", "tool_use"], lambda: m0)
check("stream: text rebuilt (multi-byte characters intact)", m0["content"][1]["text"] == TEXT0)
check("stream: thinking rebuilt; one signature_delta, after the thinking deltas",
      m0["content"][0]["thinking"] == THINK and len(m0["content"][0]["signature"]) > 40 and [
          e["data"]["delta"]["type"] for e in ev if e["data"].get("index") == 0
          and e["event"] == "content_block_delta"][-1] == "signature_delta" and sum(
          1 for e in ev if e["data"].get("delta", {}).get("type") == "signature_delta") == 1)
starts = [e["data"]["content_block"] for e in ev if e["event"] == "content_block_start"]
check("stream: block starts are empty shells (text '', thinking ''/'', tool_use input {})",
      starts[0] == {"type": "thinking", "thinking": "", "signature": ""}
      and starts[1] == {"type": "text", "text": ""} and all(
          b["input"] == {} and b["id"].startswith("toolu_01") for b in starts[2:]), starts)
check("stream: tool_use inputs rebuilt from input_json_delta (strict parse)",
      m0["content"][2]["input"] == ARGS0 and m0["content"][3]["input"] == {})
fr = m0["frags"][2]


def parses(x):
    try:
        json.loads(x)
        return True
    except ValueError:
        return False


check("stream: partial_json opens with '', then 2+ pieces cut mid-token",
      fr[0] == "" and len(fr) >= 3 and not all(parses(x) for x in fr[1:]), fr)
check("stream: stop_reason tool_use, stop_sequence null", m0["stop_reason"] == "tool_use"
      and m0["stop_sequence"] is None)
u0 = ev[0]["data"]["message"]["usage"]
check("stream: message_start usage: input, cache creation/read, cache_creation split, "
      "output_tokens 1", set(u0) >= {"input_tokens", "cache_creation_input_tokens",
                                     "cache_read_input_tokens", "cache_creation", "output_tokens"}
      and u0["output_tokens"] == 1 and u0["input_tokens"] > 0, u0)
ud = ev[-2]["data"]["usage"]
L = s.lines()
check("stream: message_delta usage = totals (output_tokens and the input counts again)",
      ud["output_tokens"] > 1 and ud["input_tokens"] == u0["input_tokens"]
      and L[0]["usage"] == ud, lambda: (ud, L))
check("log: n, path, model, turn_index, status, seed, version, auth, tool_use_ids, usage",
      L[0]["n"] == 1 and L[0]["path"] == "/v1/messages" and L[0]["model"] == MODEL
      and L[0]["turn_index"] == 0 and L[0]["status"] == 200 and L[0]["seed"] == 7
      and L[0]["anthropic_version"] == "2023-06-01" and L[0]["auth"] == "x-api-key"
      and L[0]["tool_use_ids"] == [b["id"] for b in m0["content"][2:]], lambda: L[0])

# turn 1: the assistant turn back unchanged, tool results first
asst = {"role": "assistant", "content": [
    {k: v for k, v in b.items()} for b in m0["content"]]}
results = [{"type": "tool_result", "tool_use_id": b["id"], "content": "a\nb"}
           for b in m0["content"][2:]]
hist = [copy.deepcopy(USER0), asst, {"role": "user", "content": results}]
TH = {"type": "enabled", "budget_tokens": 1024}
a1 = post(s, req(messages=hist, thinking=TH))
m1 = rebuild(a1.events)
check("turn 1: blocks sent back unchanged + tool_result first -> 200, turn 1's answer",
      a1.status == 200 and m1["content"][-1]["text"].startswith("Done: 3 files.")
      and m1["stop_reason"] == "end_turn", lambda: a1.body[:300])
check("turn 1: a redacted_thinking block (opaque data, no deltas)",
      m1["content"][0]["type"] == "redacted_thinking" and len(m1["content"][0]["data"]) > 40)
hist2 = hist + [{"role": "assistant", "content": m1["content"]},
                {"role": "user", "content": "and now?"}]
a2 = post(s, req(messages=hist2, thinking=TH))
m2 = rebuild(a2.events)
check("turn 2: redacted_thinking sent back -> 200; the script's stop_reason and usage verbatim",
      a2.status == 200 and m2["stop_reason"] == "max_tokens" and m2["usage"]["input_tokens"] == 111
      and m2["usage"]["output_tokens"] == 22 and m2["usage"]["cache_read_input_tokens"] == 333
      and m2["usage"]["cache_creation_input_tokens"] == 44, lambda: (a2.status, a2.body[:300]))
bad_red = copy.deepcopy(hist2)
bad_red[3]["content"][0]["data"] = "A" + bad_red[3]["content"][0]["data"][1:]
refused("redacted_thinking data altered", s, req(messages=bad_red, thinking=TH),
        "messages.3.content.0: Invalid `data` in `redacted_thinking` block")
hist3 = hist2 + [{"role": "assistant", "content": m2["content"]},
                 {"role": "user", "content": "more"}]
a3 = post(s, req(messages=hist3))
check("past the last turn: (script exhausted)",
      rebuild(a3.events)["content"][-1]["text"] == "(script exhausted)")
sq = post(s, req(messages=hist, stop_sequences=["STOP"], thinking={"type": "disabled"}))
msq = rebuild(sq.events)
check("stop_sequences: text cut before it, stop_reason stop_sequence, stop_sequence set",
      msq["content"][-1]["text"] == "Done: 3 files. " and msq["stop_reason"] == "stop_sequence"
      and msq["stop_sequence"] == "STOP", lambda: msq)
check("thinking disabled: no thinking or redacted_thinking blocks",
      [b["type"] for b in msq["content"]] == ["text"])
z = rebuild(post(s, req(max_tokens=0)).events)
check("max_tokens 0: no content, stop_reason max_tokens, output_tokens 0",
      z["content"] == [] and z["stop_reason"] == "max_tokens" and z["usage"]["output_tokens"] == 0)
pre = post(s, req(messages=hist + [{"role": "assistant", "content": "Done"}]))
check("prefill (a final assistant message): accepted, answered from its turn (1)",
      pre.status == 200 and s.lines()[-1]["turn_index"] == 1, lambda: pre.body[:200])
nj = post(s, req(stream=False, thinking=TH))
check("stream false: one JSON Message with parsed inputs and the signature",
      nj.status == 200 and nj.json["type"] == "message" and nj.json["content"][2]["input"] == ARGS0
      and nj.json["content"][0]["signature"] == m0["content"][0]["signature"]
      and nj.json["usage"]["output_tokens"] > 1, lambda: nj.body[:300])
ct = post(s, {"model": MODEL, "messages": hist, "tools": TOOLS}, path="/v1/messages/count_tokens")
check("count_tokens: {input_tokens} (no max_tokens needed)", ct.status == 200
      and set(ct.json) == {"input_tokens"} and ct.json["input_tokens"] > 10, lambda: ct.body)
refused("count_tokens with max_tokens", s, {"model": MODEL, "max_tokens": 5, "messages": hist,
                                            "tools": TOOLS},
        "max_tokens: Extra inputs are not permitted", path="/v1/messages/count_tokens")
refused("a base URL with /v1 (POST /v1/v1/messages)", s, req(), "Not Found", 404,
        "not_found_error", path="/v1/v1/messages")
accepted("a base URL with a path prefix (POST /proxy/v1/messages)", s, req(),
         path="/proxy/v1/messages")
mods = get(s, "/v1/models")
check("GET /v1/models: Anthropic's list shape", mods.status == 200 and mods.json["data"][0]["id"]
      == "fake-claude" and mods.json["data"][0]["type"] == "model" and mods.json["has_more"] is False)

# partial reads: each event in two writes, split inside a UTF-8 sequence (15 ms apart here,
# so that the reads see them apart even on a loaded machine)
sp = Server("split", "--delay-ms", "15")
sock = socket.create_connection(("127.0.0.1", sp.port))
body = json.dumps(req()).encode()
sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: k\r\nanthropic-version: "
             b"2023-06-01\r\ncontent-type: application/json\r\ncontent-length: "
             + str(len(body)).encode() + b"\r\n\r\n" + body)
chunks = []
while True:
    c = sock.recv(65536)
    if not c:
        break
    chunks.append(c)
sock.close()


def mid_utf8(c):
    try:
        c.decode("utf-8")
        return False
    except UnicodeDecodeError as e:
        return e.reason == "unexpected end of data"


check("partial reads: many reads, some ending inside a UTF-8 sequence",
      len(chunks) > 20 and sum(map(mid_utf8, chunks)) >= 1, lambda: len(chunks))
sp.stop()
s.stop()

# ------------------------------------------------------------------ validation
v = Server("valid", "--models", f"{MODEL},claude-other")
accepted("valid request (the counterpart of the refusals below)", v, req())
refused("no anthropic-version header", v, req(), "anthropic-version: header is required",
        drop=("anthropic-version",))
refused("anthropic-version 2024-01-01", v, req(),
        'anthropic-version: "2024-01-01" is not a valid version',
        headers={"anthropic-version": "2024-01-01"})
accepted("anthropic-version 2023-01-01", v, req(), headers={"anthropic-version": "2023-01-01"})
refused("no x-api-key", v, req(), "x-api-key header is required", 401, "authentication_error",
        drop=("x-api-key",))
refused("2023-06-01 and only Authorization: Bearer", v, req(), "x-api-key header is required",
        401, "authentication_error", drop=("x-api-key",), headers={"authorization": "Bearer k"})
accepted("2026-10-21 and Authorization: Bearer (the 1.x SDK)", v, req(), drop=("x-api-key",),
         headers={"authorization": "Bearer k", "anthropic-version": "2026-10-21"})
check("log: auth bearer", v.lines()[-1]["auth"] == "bearer")
refused("Content-Type text/plain", v, req(), "content-type must be application/json", exact=False,
        headers={"content-type": "text/plain"})
refused("a body that is not JSON", v, b'{"model":', "There was an error parsing the body",
        exact=False)
for key in ("model", "max_tokens", "messages"):
    b = req()
    del b[key]
    refused(f"no {key}", v, b, f"{key}: Field required")
refused("model not served (--models)", v, req(model="claude-nope"), "model: claude-nope", 404,
        "not_found_error")
accepted("the other --models model", v, req(model="claude-other"))
refused("max_tokens '100'", v, req(max_tokens="100"), "max_tokens: Input should be a valid integer")
refused("max_tokens -1", v, req(max_tokens=-1),
        "max_tokens: Input should be greater than or equal to 0")
for p, val in (("foo", 1), ("stream_options", {"include_usage": True}),
               ("max_completion_tokens", 100), ("tool_calls", [])):
    refused(f"unknown parameter {p}", v, req(**{p: val}), f"{p}: Extra inputs are not permitted")
accepted("temperature, top_p, top_k, stop_sequences, metadata", v, req(
    temperature=0.2, top_p=0.9, top_k=5, stop_sequences=["x"], metadata={"user_id": "u"}))
refused("temperature 1.5", v, req(temperature=1.5), "temperature: Input should be less than or equal to 1")
refused("messages []", v, req(messages=[]), "messages: at least one message is required")
A = {"role": "assistant", "content": "Hi."}
refused("first message assistant", v, req(messages=[A, USER0]),
        'messages: first message must use the "user" role')
refused("two user messages in a row", v, req(messages=[USER0, USER0]),
        'messages: roles must alternate between "user" and "assistant", but found multiple "user" '
        'roles in a row')
refused("two assistant messages in a row", v, req(messages=[USER0, A, A, USER0]),
        'messages: roles must alternate between "user" and "assistant", but found multiple '
        '"assistant" roles in a row')
accepted("user, assistant, user", v, req(messages=[USER0, A, USER0]))
for role in ("system", "tool", "developer"):
    refused(f"role {role} in messages", v, req(messages=[{"role": role, "content": "x"}, USER0]),
            "messages.0.role: Input should be 'user' or 'assistant'")
refused("a message with a name field", v, req(messages=[dict(USER0, name="bob")]),
        "messages.0.name: Extra inputs are not permitted")
refused("no content", v, req(messages=[{"role": "user"}]), "messages.0.content: Field required")
refused("content ''", v, req(messages=[{"role": "user", "content": ""}]),
        "messages.0: all messages must have non-empty content except for the optional final "
        "assistant message")
refused("content []", v, req(messages=[USER0, {"role": "assistant", "content": []}, USER0]),
        "messages.1: all messages must have non-empty content except for the optional final "
        "assistant message")
refused("a text block ''", v, req(messages=[{"role": "user", "content": [
    {"type": "text", "text": ""}]}]), "messages: text content blocks must be non-empty")
refused("a text block without text", v, req(messages=[{"role": "user", "content": [
    {"type": "text"}]}]), "messages.0.content.0.text.text: Field required")
refused("an unknown block type", v, req(messages=[{"role": "user", "content": [
    {"type": "video", "url": "x"}]}]),
    "messages.0.content.0: Input tag 'video' found using 'type' does not match any of the "
    "expected tags: ", exact=False)
refused("an OpenAI image_url part", v, req(messages=[{"role": "user", "content": [
    {"type": "image_url", "image_url": {"url": "x"}}]}]), "Input tag 'image_url'", exact=False)
accepted("an image block (base64 source)", v, req(messages=[{"role": "user", "content": [
    {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                 "data": imgdata.b64(imgdata.png(4, 3))}},
    {"type": "text", "text": "what is it?"}]}]))
refused("a final assistant message ending in whitespace", v, req(messages=[
    USER0, {"role": "assistant", "content": "The answer is "}]),
    "messages: final assistant content cannot end with trailing whitespace")

# tools and results
TU = [{"type": "tool_use", "id": "toolu_01A", "name": "shell", "input": {"command": "ls"}},
      {"type": "tool_use", "id": "toolu_01B", "name": "list_files", "input": {}}]
R = [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "x"},
     {"type": "tool_result", "tool_use_id": "toolu_01B", "content": [{"type": "text", "text": "y"}],
      "is_error": True}]


def conv(asst_blocks, user_blocks, **kw):
    return req(messages=[copy.deepcopy(USER0), {"role": "assistant", "content": asst_blocks},
                         {"role": "user", "content": user_blocks}], **kw)


accepted("tool_use answered by tool_result blocks first, then text", v,
         conv(TU, R + [{"type": "text", "text": "go on"}]))
refused("a tool_use left unanswered", v, conv(TU, R[:1]),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_01B. Each `tool_use` block must have a corresponding `tool_result` block in the "
        "next message.")
refused("text before the tool_results", v, conv(TU, [{"type": "text", "text": "hi"}] + R),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_01A, toolu_01B.", exact=False)
refused("a tool_use and then a plain user message", v, conv(TU, "ok"),
        "`tool_use` ids were found without `tool_result` blocks immediately after", exact=False)
refused("a final assistant message with tool_use", v, req(messages=[USER0, {
    "role": "assistant", "content": TU}]), "messages.1: `tool_use` ids were found without",
    exact=False)
refused("a tool_result for an unknown id", v, conv(TU, R + [
    {"type": "tool_result", "tool_use_id": "toolu_01C", "content": "z"}]),
    "messages.2.content.2: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01C. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
    "message.")
refused("a tool_result in the first message", v, req(messages=[{"role": "user", "content": R[:1]}]),
        "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01A.",
        exact=False)
refused("two tool_results for one id", v, conv(TU, R + R[:1]),
        "messages.2.content.2: each tool_use must have a single result. Found multiple "
        "`tool_result` blocks with id: toolu_01A")
refused("tool_use input as a JSON string (OpenAI habit)", v, conv(
    [dict(TU[0], input='{"command":"ls"}')], R[:1]),
    "messages.1.content.0.tool_use.input: Input should be a valid dictionary")
refused("a tool_use id with ':'", v, conv([dict(TU[0], id="functions.shell:0")], R[:1]),
        "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
refused("tool_use ids repeated", v, req(messages=[USER0, {"role": "assistant", "content": TU[:1]},
                                                   {"role": "user", "content": R[:1]},
                                                   {"role": "assistant", "content": TU[:1]},
                                                   {"role": "user", "content": R[:1]}]),
        "messages.3.content.0: `tool_use` ids must be unique")
refused("a tool_use in a user message", v, req(messages=[{"role": "user", "content": TU[:1]}]),
        "messages.0.content.0: `tool_use` blocks can only appear in `assistant` messages.")
refused("tool_use blocks without tools", v, dict(conv(TU, R), tools=None),
        "Requests which include `tool_use` or `tool_result` blocks must define tools.")
refused("tool_result content with a thinking block", v, conv(TU[:1], [dict(R[0], content=[
    {"type": "thinking", "thinking": "x", "signature": "y"}])]),
    "messages.2.content.0.tool_result.content.0: Input tag 'thinking' found using 'type' does not "
    "match any of the expected tags: 'document', 'image', 'search_result', 'text', "
    "'tool_reference'")
refused("is_error 'yes'", v, conv(TU[:1], [dict(R[0], is_error="yes")]),
        "messages.2.content.0.tool_result.is_error: Input should be a valid boolean")
OA = {"type": "function", "function": {"name": "shell", "parameters": {"type": "object"}}}
refused("an OpenAI-shaped tool", v, req(tools=[OA]),
        "tools.0: Input tag 'function' found using 'type' does not match any of the expected "
        "tags: ", exact=False)
refused("a tool with parameters instead of input_schema", v, req(tools=[
    {"name": "shell", "parameters": {"type": "object"}}]), "tools.0.custom.input_schema: Field required")
refused("a tool with an extra field", v, req(tools=[dict(TOOLS[0], parameters={})]),
        "tools.0.custom.parameters: Extra inputs are not permitted")
refused("input_schema type array", v, req(tools=[dict(TOOLS[0], input_schema={"type": "array"})]),
        "tools.0.custom.input_schema.type: Input should be 'object'")
refused("a tool name with a dot", v, req(tools=[dict(TOOLS[0], name="mcp.shell")]),
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'")
refused("two tools with one name", v, req(tools=[TOOLS[0], TOOLS[0], TOOLS[1]]),
        "tools: Tool names must be unique.")
accepted("a server tool next to the custom ones", v, req(tools=TOOLS + [
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}]))
refused("the script's next turn calls a tool not offered", v, req(tools=TOOLS[:1]),
        "fake_anthropic: script turn 0 calls tool 'list_files' but the request offers shell.")
refused("tool_choice naming an unknown tool", v, req(tool_choice={"type": "tool", "name": "nope"}),
        "tool_choice.tool.name: tool 'nope' is not among the provided tools.")
accepted("tool_choice any", v, req(tool_choice={"type": "any"}))
refused("tool_choice 'auto' (OpenAI's string)", v, req(tool_choice="auto"),
        "tool_choice: Input should be a valid dictionary")

# system
accepted("system as a string", v, req(system="You are terse."))
accepted("system as text blocks with cache_control", v, req(system=[
    {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]))
refused("a system block of type image", v, req(system=[{"type": "image", "source": {}}]),
        "system.0.type: Input should be 'text'")
refused("an empty system text block", v, req(system=[{"type": "text", "text": ""}]),
        "system: text content blocks must be non-empty")
refused("system as an object", v, req(system={"text": "x"}), "system: Input should be a valid string")

# cache_control
CC = {"type": "ephemeral"}
four = req(system=[{"type": "text", "text": "S", "cache_control": CC}],
           tools=[TOOLS[0], dict(TOOLS[1], cache_control=CC)],
           messages=[{"role": "user", "content": [{"type": "text", "text": "a", "cache_control": CC},
                                                  {"type": "text", "text": "b", "cache_control": CC}]}])
accepted("4 breakpoints: system, a tool, two message blocks", v, four)
five = copy.deepcopy(four)
five["messages"][0]["content"].append({"type": "text", "text": "c", "cache_control": CC})
refused("5 breakpoints", v, five, "A maximum of 4 blocks with cache_control may be provided. Found 5.")
six = copy.deepcopy(four)
six["cache_control"] = CC
refused("4 breakpoints and the top-level cache_control", v, six,
        "A maximum of 4 blocks with cache_control may be provided. Found 5.")
accepted("cache_control null is no breakpoint", v, req(system=[
    {"type": "text", "text": "S", "cache_control": None}]))
refused("ttl 10m", v, req(system=[{"type": "text", "text": "S", "cache_control": {
    "type": "ephemeral", "ttl": "10m"}}]), "system.0.cache_control.ephemeral.ttl: Input should be '5m' or '1h'")
refused("cache_control scope (extra field)", v, req(system=[{"type": "text", "text": "S",
                                                           "cache_control": dict(CC, scope="g")}]),
        "system.0.cache_control.ephemeral.scope: Extra inputs are not permitted")
refused("cache_control type persistent", v, req(tools=[dict(TOOLS[0], cache_control={
    "type": "persistent"}), TOOLS[1]]),
    "tools.0.custom.cache_control: Input tag 'persistent' found using 'type' does not match any "
    "of the expected tags: 'ephemeral'")
accepted("cache_control on tool_use and tool_result blocks", v, conv(
    [dict(TU[0], cache_control=CC), TU[1]], [R[0], dict(R[1], cache_control=CC)]))

# thinking
S = Server("sig")  # signatures made by another server run (another seed) still verify
sa = rebuild(post(S, req(thinking=TH)).events)
S.stop()
hs = [copy.deepcopy(USER0), {"role": "assistant", "content": sa["content"]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": b["id"], "content": "x"}
                                   for b in sa["content"][2:]]}]
accepted("thinking from another server run sent back unchanged", v, req(messages=hs, thinking=TH))
ed = copy.deepcopy(hs)
ed[1]["content"][0]["thinking"] += " "
refused("thinking text edited", v, req(messages=ed, thinking=TH),
        "messages.1.content.0: Invalid `signature` in `thinking` block")
ed = copy.deepcopy(hs)
ed[1]["content"][0]["signature"] = ed[1]["content"][0]["signature"][:-4] + "AAA="
refused("signature edited", v, req(messages=ed, thinking=TH),
        "messages.1.content.0: Invalid `signature` in `thinking` block")
ed = copy.deepcopy(hs)
del ed[1]["content"][0]["signature"]
refused("signature dropped", v, req(messages=ed, thinking=TH),
        "messages.1.content.0.thinking.signature: Field required")
ed = copy.deepcopy(hs)
ed[1]["content"][0]["cache_control"] = CC
refused("cache_control on a thinking block", v, req(messages=ed, thinking=TH),
        "messages.1.content.0.thinking.cache_control: Extra inputs are not permitted")
ed = copy.deepcopy(hs)
del ed[1]["content"][0]
refused("thinking enabled, the thinking block dropped from the tool-use turn", v,
        req(messages=ed, thinking=TH),
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. "
        "When `thinking` is enabled, a final `assistant` message must start with a thinking "
        "block", exact=False)
accepted("thinking not enabled, the thinking block dropped", v, req(messages=ed))
refused("a thinking block in a user message", v, req(messages=[{"role": "user", "content": [
    sa["content"][0]]}]), "messages.0.content.0: `thinking` blocks can only appear in `assistant` messages.")
refused("budget_tokens 500", v, req(thinking={"type": "enabled", "budget_tokens": 500}),
        "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
refused("max_tokens not above budget_tokens", v, req(max_tokens=2000, thinking={
    "type": "enabled", "budget_tokens": 2000}),
    "`max_tokens` must be greater than `thinking.budget_tokens`.", exact=False)
refused("thinking type on", v, req(thinking={"type": "on"}),
        "thinking: Input tag 'on' found using 'type' does not match any of the expected tags: "
        "'adaptive', 'between_tools', 'disabled', 'enabled'")
accepted("thinking adaptive", v, req(thinking={"type": "adaptive"}))
refused("temperature 0.5 with thinking", v, req(thinking=TH, temperature=0.5),
        "`temperature` may only be set to 1 when thinking is enabled.", exact=False)
refused("tool_choice any with thinking", v, req(thinking=TH, tool_choice={"type": "any"}),
        "Thinking may not be enabled when tool_choice forces tool use.")
check("log: one line per POST, 400s with their message",
      all(x["status"] in (200, 400, 401, 404) for x in v.lines())
      and any(x.get("error", "").startswith("messages.1: `tool_use`") for x in v.lines()))
v.stop()

# ------------------------------------------------------------------ faults
f = Server("faults", "--fault", "429@1:retry-after=2", "--fault", "529@2", "--fault", "500@3",
           "--fault", "401@4", "--fault", "403@5", "--fault", "404@6", "--fault", "413@7",
           "--fault", "context@8", "--fault", "context@9:100", "--fault", "cut@10",
           "--fault", "cut@11:3", "--fault", "reset@12", "--fault", "error-event@13",
           "--fault", "error-event@14:api_error", "--fault", "stall@15:2", "--fault", "500@17-18",
           "--fault", "529@19", "--fault", "cut@20")
r = post(f, req())
check("429@1: rate_limit_error, retry-after: 2, anthropic-ratelimit headers",
      is_error(r, 429, "rate_limit_error", "rate limit") and r.headers.get("retry-after") == "2"
      and r.headers.get("anthropic-ratelimit-requests-remaining") == "0", lambda: (r.headers, r.body))
r = post(f, req())
check("529@2: overloaded_error Overloaded", is_error(r, 529, "overloaded_error", "Overloaded", True))
r = post(f, req())
check("500@3: api_error", is_error(r, 500, "api_error", "Internal server error", True))
r = post(f, req())
check("401@4: authentication_error", is_error(r, 401, "authentication_error", "invalid x-api-key", True))
r = post(f, req())
check("403@5: permission_error", is_error(r, 403, "permission_error", "permission"))
r = post(f, req())
check("404@6: not_found_error model: <model>", is_error(r, 404, "not_found_error",
                                                        f"model: {MODEL}", True))
r = post(f, req())
check("413@7: request_too_large", is_error(r, 413, "request_too_large", "maximum allowed"))
r = post(f, req())
check("context@8: prompt is too long: 200001 tokens > 200000 maximum", is_error(
    r, 400, "invalid_request_error", "prompt is too long: 200001 tokens > 200000 maximum", True))
big = req(messages=[{"role": "user", "content": "x " * 2000}])
r = post(f, big)
mm = re.fullmatch(r"prompt is too long: (\d+) tokens > 100 maximum", r.message)
check("context@9:100: N = the request's own size", r.status == 400 and mm and int(mm.group(1)) > 900,
      r.message)
r = post(f, req())
m = rebuild(r.events)
last = r.events[-1]["data"] if r.events else {}
check("cut@10: 200, events end inside the first tool_use's input, no message_delta/stop",
      r.status == 200 and last.get("delta", {}).get("type") == "input_json_delta"
      and last["delta"]["partial_json"] and not m.get("done")
      and "message_delta" not in [e["event"] for e in r.events], lambda: r.events[-3:])
r = post(f, req())
check("cut@11:3: exactly 3 events (pings not counted)",
      len([e for e in r.events if e["event"] != "ping"]) == 3, lambda: r.events)
r = post(f, req())
check("reset@12: connection reset after some events", r.error is not None
      and b"message_stop" not in r.body, lambda: (r.status, r.error))
r = post(f, req())
errs = [e for e in r.events if e["event"] == "error"]
check("error-event@13: text deltas, then event: error overloaded_error, nothing after",
      r.status == 200 and errs and errs[0]["data"] == {"type": "error", "error": {
          "type": "overloaded_error", "message": "Overloaded"}} and r.events[-1]["event"] == "error"
      and sum(1 for e in r.events if e["data"].get("delta", {}).get("type") == "text_delta") >= 1,
      lambda: r.events)
r = post(f, req())
check("error-event@14:api_error", r.events and r.events[-1]["data"]["error"]["type"] == "api_error")
res = {}


def stalled():
    res["a"] = post(f, req())


th = threading.Thread(target=stalled)
th.start()
for _ in range(200):
    if len(f.lines()) >= 15:
        break
    time.sleep(0.01)
t0 = time.time()
r = post(f, req())
t1 = time.time()
th.join()
check("stall@15:2: request 16 answered meanwhile; 15 then completes",
      r.status == 200 and t1 - t0 < 1.5 and rebuild(res["a"].events).get("done"))
check("500@17-18 (a range)", post(f, req()).status == 500 and post(f, req()).status == 500)
r = post(f, {"not": "valid"})
check("529@19 fires whatever the body (a status fault)", r.status == 529)
r = post(f, req(stream=False))
check("cut@20 on a non-streaming request: ignored, the whole JSON message", r.status == 200
      and r.json["type"] == "message")
L = f.lines()
check("log: 20 lines, statuses and faults in order",
      [x["status"] for x in L] == [429, 529, 500, 401, 403, 404, 413, 400, 400, 200, 200, 200, 200,
                                   200, 200, 200, 500, 500, 529, 200]
      and L[0]["fault"] == "429@1:retry-after=2" and L[9]["fault"] == "cut@10"
      and L[19]["fault"] is None and all(L[i]["t"] <= L[i + 1]["t"] for i in range(19)),
      lambda: [(x["status"], x["fault"]) for x in L])
st = get(f, "/_stats")
check("GET /_stats", st.json == {"requests": 20, "by_status": {
    "429": 1, "529": 2, "500": 3, "401": 1, "403": 1, "404": 1, "413": 1, "400": 2, "200": 8}},
    lambda: st.json)
f.stop()

# ------------------------------------------------------------------ prompt caching
c = Server("cache", "--cache-min-tokens", "20")
SYS = [{"type": "text", "text": "You are a careful analyst. " * 20, "cache_control": CC}]


def usage(a):
    return rebuild(a.events)["usage"]


c1 = req(system=SYS, messages=[{"role": "user", "content": [
    {"type": "text", "text": "Look at the data. " * 10, "cache_control": CC}]}])
u1 = usage(post(c, c1))
check("cache: first request writes system + message prefix, reads nothing",
      u1["cache_creation_input_tokens"] > 0 and u1["cache_read_input_tokens"] == 0
      and u1["cache_creation"]["ephemeral_5m_input_tokens"] == u1["cache_creation_input_tokens"], u1)
u2 = usage(post(c, c1))
check("cache: the same request reads it all back, writes nothing",
      u2["cache_read_input_tokens"] == u1["cache_creation_input_tokens"]
      and u2["cache_creation_input_tokens"] == 0 and u2["input_tokens"] == u1["input_tokens"], u2)
c3 = copy.deepcopy(c1)
c3["messages"][0]["content"][0].pop("cache_control")
c3["messages"] += [{"role": "assistant", "content": TU}, {"role": "user", "content": [
    R[0], dict(R[1], cache_control=CC)]}]
u3 = usage(post(c, c3))
check("cache: the next turn (breakpoint moved to the last block) reads the old prefix, writes "
      "the new tail", u3["cache_read_input_tokens"] == u1["cache_creation_input_tokens"]
      and u3["cache_creation_input_tokens"] > 0, u3)
u4 = usage(post(c, dict(c3, model="claude-other")))
check("cache: another model misses", u4["cache_read_input_tokens"] == 0, u4)
c5 = copy.deepcopy(c1)
c5["system"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
c5["system"][0]["text"] += "New. "
u5 = usage(post(c, c5))
check("cache: a 1h breakpoint's write is counted as ephemeral_1h",
      u5["cache_creation"]["ephemeral_1h_input_tokens"] > 0, u5)
tot = post(c, {"model": MODEL, "messages": c3["messages"], "system": SYS, "tools": TOOLS},
           path="/v1/messages/count_tokens").json["input_tokens"]
check("cache: input + cache read + cache creation = count_tokens",
      u3["input_tokens"] + u3["cache_read_input_tokens"] + u3["cache_creation_input_tokens"] == tot,
      (u3, tot))
u6 = usage(post(c, req(system=SYS, cache_control=CC, messages=[{"role": "user", "content": "q?"}])))
check("cache: top-level cache_control caches the whole prompt", u6["input_tokens"] == 0
      and u6["cache_read_input_tokens"] + u6["cache_creation_input_tokens"] > 0, u6)
c.stop()
d = Server("mincache")  # default --cache-min-tokens 1024
ud = usage(post(d, c1))
check("cache: a prefix under 1024 tokens is not cached", ud["cache_creation_input_tokens"] == 0
      and ud["cache_read_input_tokens"] == 0, ud)
d.stop()
mc = Server("maxctx", "--max-context", "50")
r = post(mc, big)
check("--max-context 50: a longer prompt -> prompt is too long", r.status == 400
      and re.fullmatch(r"prompt is too long: \d+ tokens > 50 maximum", r.message), r.message)
mc.stop()

# ------------------------------------------------------------------ context management
# --max-context: the count is the log's prompt_tokens (input + cache read + cache creation)
m0 = Server("maxctx0")
a = post(m0, req())
L = m0.lines()
P = L[-1].get("prompt_tokens") or 2  # (2: the checks below still run, and fail)
u = L[-1].get("usage", {})
check("log: an accepted request's prompt_tokens = input + cache read + cache creation sent",
      a.status == 200 and P > 0 and P == u.get("input_tokens", 0) + u.get(
          "cache_read_input_tokens", 0) + u.get("cache_creation_input_tokens", 0)
      and rebuild(a.events)["usage"]["input_tokens"] == u.get("input_tokens"), lambda: L[-1])
check("log: summary false on an answer from the script", L[-1].get("summary") is False, L[-1])
ct = post(m0, {"model": MODEL, "messages": [USER0], "tools": TOOLS},
          path="/v1/messages/count_tokens")
check("log: count_tokens' prompt_tokens = its input_tokens", ct.status == 200
      and m0.lines()[-1].get("prompt_tokens") == ct.json["input_tokens"] == P, lambda: (
          ct.body, m0.lines()[-1]))
m0.stop()
mp = Server("maxctxP", "--max-context", str(P))
accepted(f"--max-context {P} (the prompt's own count)", mp, req())
mp.stop()
mp1 = Server("maxctxP1", "--max-context", str(P - 1))
refused(f"--max-context {P - 1}: one token over", mp1, req(),
        f"prompt is too long: {P} tokens > {P - 1} maximum")
accepted("--max-context: a shorter prompt still accepted", mp1, req(
    tools=[dict(TOOLS[0], description="x"), TOOLS[1]], messages=[{"role": "user", "content": "ls"}]))
L = mp1.lines()
check("--max-context: the refusal logged as a 400 with its error and prompt_tokens, no fault",
      L[0]["status"] == 400 and L[0].get("prompt_tokens") == P and L[0]["fault"] is None
      and L[0]["error"].startswith("prompt is too long") and "usage" not in L[0], lambda: L[0])
check("--max-context: no accepted request over the limit in the log",
      [x["status"] for x in L] == [400, 200]
      and all(x.get("prompt_tokens", P) <= P - 1 for x in L if x["status"] == 200), L)
mp1.stop()
for args, words in ((["--max-context", "-1"], "--max-context must be 0 (no limit) or more"),
                    (["--turn-by", "bogus"], "invalid choice: 'bogus'")):
    r = subprocess.run([PY, FAKE, "--script", f"{T}/script.json", "--port", "0"] + args,
                       capture_output=True, text=True, timeout=20)
    check(f"cli: {' '.join(args)} exits 2", r.returncode == 2 and words in r.stderr, r.stderr)

# --turn-by call-id: the ids the script fixes (valid tool_use ids), looked up in cut histories
CIDS = {"turns": [
    {"text": "Listing.", "tool_calls": [
        {"id": "toolu_01Cid0a", "name": "shell", "arguments": {"command": "ls"}},
        {"id": "toolu_01Cid0b", "name": "list_files", "arguments": {}}]},
    {"tool_calls": [{"id": "toolu_01Cid1", "name": "shell", "arguments": {"command": "wc a"}}]},
    {"text": "Counted.", "tool_calls": [
        {"id": "toolu_01Cid2", "name": "shell", "arguments": {"command": "true"}}]},
    {"text": "All done."}],
    "summary": {"when": "Summarize the session", "text": "SUMMARY: listed, counted."}}
json.dump(CIDS, open(f"{T}/cid.json", "w"))


def cli_exit2(name, script, words, *args):
    json.dump(script, open(f"{T}/cli.json", "w"))
    r = subprocess.run([PY, FAKE, "--script", f"{T}/cli.json", "--port", "0"] + list(args),
                       capture_output=True, text=True, timeout=20)
    check(f"cli: {name} exits 2 naming {words!r}", r.returncode == 2 and words in r.stderr,
          r.stderr)


T_ = [{"text": "x"}]
cli_exit2("summary not an object", {"turns": T_, "summary": "x"}, "summary must be an object")
cli_exit2("summary without when", {"turns": T_, "summary": {"text": "y"}},
          "summary must be an object with exactly 'when' and 'text'")
cli_exit2("summary.text empty", {"turns": T_, "summary": {"when": "x", "text": ""}},
          "summary.text must be a non-empty string")
cli_exit2("summary.when a list", {"turns": T_, "summary": {"when": ["x"], "text": "y"}},
          "summary.when must be a non-empty string")
cli_exit2("call-id: a call without id", {"turns": [{"tool_calls": [{"name": "shell"}]}]},
          "turns[0].tool_calls[0].id must be a string matching '^[a-zA-Z0-9_-]+$'",
          "--turn-by", "call-id")
cli_exit2("call-id: an id the API refuses (call.1)", {"turns": [{"tool_calls": [
    {"id": "call.1", "name": "shell"}]}]}, "got 'call.1'", "--turn-by", "call-id")
cli_exit2("call-id: an id used twice", {"turns": [
    {"tool_calls": [{"id": "toolu_01X", "name": "a"}]},
    {"tool_calls": [{"id": "toolu_01X", "name": "b"}]}]},
    "turns[1].tool_calls[0].id 'toolu_01X' is already used in turns[0]", "--turn-by", "call-id")


def tool_turn(specs, text=None, then=None):
    """An assistant message with these tool_use blocks, then the user's tool_results."""
    asst = ([{"type": "text", "text": text}] if text else []) + [
        {"type": "tool_use", "id": i, "name": n, "input": inp} for i, n, inp in specs]
    res = [{"type": "tool_result", "tool_use_id": i, "content": "out"} for i, _, _ in specs]
    return [{"role": "assistant", "content": asst},
            {"role": "user", "content": res + ([{"type": "text", "text": then}] if then else [])}]


SUMMARY_USER = {"role": "user", "content": "Summary so far: listed the files."}
T0 = tool_turn([("toolu_01Cid0a", "shell", {"command": "ls"}),
                ("toolu_01Cid0b", "list_files", {})], text="Listing.")
T1 = tool_turn([("toolu_01Cid1", "shell", {"command": "wc a"})])
T2 = tool_turn([("toolu_01Cid2", "shell", {"command": "true"})], text="Counted.")
ci = Server("cid", "--script", f"{T}/cid.json", "--turn-by", "call-id")


def answer(body):
    a = post(ci, body)
    m = rebuild(a.events) if a.events else None
    ids = [b["id"] for b in m["content"] if b["type"] == "tool_use"] if m else None
    return a, m, ids, ci.lines()[-1]


a, m, ids, line = answer(req())
check("call-id: no tool_use in the request -> turn 0, the script's fixed ids",
      ids == ["toolu_01Cid0a", "toolu_01Cid0b"] and line["turn_index"] == 0
      and line["tool_use_ids"] == ids, lambda: (a.status, a.body[:300], line))
a, m, ids, line = answer(req(messages=[USER0] + T0))
check("call-id: latest tool_use toolu_01Cid0b (turn 0) -> turn 1",
      ids == ["toolu_01Cid1"] and line["turn_index"] == 1, lambda: (a.body[:300], line))
cut = req(messages=[SUMMARY_USER] + T1)
a, m, ids, line = answer(cut)
check("call-id: a cut history (summary user message, one assistant message) -> turn 2",
      ids == ["toolu_01Cid2"] and m["content"][0].get("text") == "Counted."
      and line["turn_index"] == 2 and line["n_messages"] == 3, lambda: (a.body[:300], line))
a, m, ids, line = answer(cut)
check("call-id: the same request again (a retry) -> the same turn and ids",
      ids == ["toolu_01Cid2"] and line["turn_index"] == 2, lambda: (a.body[:300], line))
a, m, ids, line = answer(req(messages=[SUMMARY_USER] + T2 + [
    {"role": "assistant", "content": "All done."}, {"role": "user", "content": "One more?"}]))
check("call-id: a text answer after the latest tool_use counts: 2 + 1 + 1 -> 4 (exhausted)",
      m and m["content"][-1].get("text") == "(script exhausted)" and line["turn_index"] == 4,
      lambda: (a.body[:300], line))
a, m, ids, line = answer(req(messages=[SUMMARY_USER] + T1 + [
    {"role": "assistant", "content": "Count"}]))
check("call-id: a final assistant message (prefill) is not counted -> turn 2",
      a.status == 200 and line["turn_index"] == 2, lambda: (a.body[:300], line))
a, m, ids, line = answer(req(messages=[USER0, {"role": "assistant", "content": "Hi."},
                                       {"role": "user", "content": "go"}]))
check("call-id: no tool_use, one assistant message -> turn 1 (as by assistant count)",
      ids == ["toolu_01Cid1"] and line["turn_index"] == 1, lambda: (a.body[:300], line))
a, m, ids, line = answer(req(messages=[SUMMARY_USER] + tool_turn(
    [("toolu_01Old", "shell", {})]) + T1))
check("call-id: only the latest tool_use counts (an older unknown id is ignored) -> turn 2",
      a.status == 200 and line["turn_index"] == 2, lambda: (a.body[:300], line))
refused("call-id: a latest tool_use id in no script turn", ci,
        req(messages=[USER0] + tool_turn([("toolu_01Zzz", "shell", {"command": "ls"})])),
        'fake_anthropic: tool_use id "toolu_01Zzz" (messages.1.content.0.id, the latest in the '
        'request) is in no script turn (--turn-by call-id)')
line = ci.lines()[-1]
check("call-id: the refusal is logged (400, its error, turn_index null)",
      line["status"] == 400 and "toolu_01Zzz" in line["error"] and line["turn_index"] is None, line)
refused("call-id: the last tool_use of the latest message is the one looked up", ci,
        req(messages=[SUMMARY_USER] + tool_turn([("toolu_01Cid1", "shell", {}),
                                                 ("toolu_01Zzz", "list_files", {})])),
        '"toolu_01Zzz" (messages.1.content.1.id,', exact=False)
ct = post(ci, {"model": MODEL, "tools": TOOLS, "messages": [USER0] + tool_turn(
    [("toolu_01Zzz", "shell", {})])}, path="/v1/messages/count_tokens")
check("call-id: count_tokens with an unknown id is still counted (turn_index null)",
      ct.status == 200 and ci.lines()[-1]["turn_index"] is None, lambda: ct.body)

# the summary answer
ASK = "Summarize the session for a fresh context."
a, m, ids, line = answer(req(messages=[USER0] + T0 + [
    {"role": "assistant", "content": "Looked."}, {"role": "user", "content": ASK}]))
check("summary: a last user message containing 'when' -> the text, no tool_use, end_turn",
      m and [b["type"] for b in m["content"]] == ["text"]
      and m["content"][0]["text"] == "SUMMARY: listed, counted." and m["stop_reason"] == "end_turn"
      and m.get("done"), lambda: (a.body[:300], line))
u = line.get("usage", {})
check("summary: log summary true, turn_index null, usage as usual (prompt_tokens = the three)",
      m and line.get("summary") is True and line["turn_index"] is None
      and line.get("tool_use_ids") == [] and line.get("prompt_tokens") == u.get("input_tokens", 0)
      + u.get("cache_read_input_tokens", 0) + u.get("cache_creation_input_tokens", 0)
      and u.get("output_tokens") == len("SUMMARY: listed, counted.") // 4
      and m["usage"]["input_tokens"] == u.get("input_tokens"), line)
a, m, ids, line = answer(req(messages=[{"role": "user", "content": [
    {"type": "text", "text": "The transcript: ..."}, {"type": "text", "text": ASK}]}]))
check("summary: the last text block of the last user message is searched",
      m and m["content"][0].get("text", "").startswith("SUMMARY:") and line.get("summary") is True, line)
a, m, ids, line = answer(req(messages=[USER0] + tool_turn(
    [("toolu_01Cid0a", "shell", {"command": "ls"}), ("toolu_01Cid0b", "list_files", {})],
    then=ASK)))
check("summary: also after tool_result blocks in that message (how assay asks after a call)",
      m and m["content"][0].get("text", "").startswith("SUMMARY:") and line.get("summary") is True,
      line)
a, m, ids, line = answer(req(messages=[{"role": "user", "content": [
    {"type": "text", "text": ASK}, {"type": "text", "text": "Run the steps."}]}]))
check("summary: 'when' in an earlier text block only (a summary head merged with the next "
      "ask) -> the script's turn 0", ids == ["toolu_01Cid0a", "toolu_01Cid0b"]
      and line.get("summary") is False and line["turn_index"] == 0, line)
a, m, ids, line = answer(req(messages=[{"role": "user", "content": ASK},
                                       {"role": "assistant", "content": "Sure"}]))
check("summary: not when the last message is the assistant's (a prefill)",
      line.get("summary") is False and line["turn_index"] == 0, line)
nj = post(ci, req(stream=False, messages=[{"role": "user", "content": ASK}]))
check("summary: a non-streaming request gets it as one JSON message", nj.status == 200
      and nj.json["content"] == [{"type": "text", "text": "SUMMARY: listed, counted."}]
      and nj.json["stop_reason"] == "end_turn", lambda: nj.body[:300])
ci.stop()
sd = Server("sumdef", "--script", f"{T}/cid.json")
a = post(sd, req(messages=[{"role": "user", "content": ASK}]))
check("summary with --turn-by assistants (the default) too",
      rebuild(a.events)["content"][0].get("text", "").startswith("SUMMARY:")
      and sd.lines()[-1].get("summary") is True, lambda: a.body[:300])
a = post(sd, cut)
check("default turn pick unchanged: one assistant message -> turn 1, even on a cut history",
      sd.lines()[-1]["turn_index"] == 1 and [b["id"] for b in rebuild(a.events)["content"]
                                             if b["type"] == "tool_use"] == ["toolu_01Cid1"])
sd.stop()

# the log shows the cache at work: each request after the first of a segment reads the cache
# (a segment: the history from the start, then from the summary on)
cs = Server("cidcache", "--script", f"{T}/cid.json", "--turn-by", "call-id",
            "--cache-min-tokens", "20")
CSYS = [{"type": "text", "text": "You are a careful analyst. " * 20, "cache_control": CC}]


def with_bp(msgs):
    """The messages with a cache_control breakpoint on the last block (as a client moves it)."""
    msgs = copy.deepcopy(msgs)
    last = msgs[-1]
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"]}]
    last["content"][-1]["cache_control"] = CC
    return msgs


segments = [[[USER0], [USER0] + T0, [USER0] + T0 + T1],
            [[SUMMARY_USER] + T1, [SUMMARY_USER] + T1 + T2]]
for seg in segments:
    for msgs in seg:
        post(cs, req(system=CSYS, messages=with_bp(msgs)))
    post(cs, req(system=CSYS, messages=with_bp([USER0] + T0 + [
        {"role": "assistant", "content": "Looked."}, {"role": "user", "content": ASK}])))
L = cs.lines()
firsts, reads = {0, 4}, [x.get("usage", {}).get("cache_read_input_tokens") for x in L]
check("log: cache reads > 0 on every request after the first of each segment",
      [x["status"] for x in L] == [200] * 7 and all(r > 0 for k, r in enumerate(reads)
                                                    if k not in firsts) and reads[0] == 0,
      lambda: [(x["turn_index"], x.get("summary"), x.get("usage")) for x in L])
check("log: every line's prompt_tokens = input + cache read + cache creation",
      all(x.get("prompt_tokens") == sum(x["usage"][k] for k in (
          "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")) for x in L), L)
check("log: the segments' turns 0 1 2, then 2 3 (cut history), summaries at 4th and 7th",
      [x["turn_index"] for x in L] == [0, 1, 2, None, 2, 3, None]
      and [x.get("summary") for x in L] == [False] * 3 + [True] + [False] * 2 + [True],
      lambda: [(x["turn_index"], x.get("summary")) for x in L])
cs.stop()

# ------------------------------------------------------------------ auth, framing, seed
k = Server("key", "--key", KEY)
check("--key: the right key", post(k, req()).status == 200)
r = post(k, req(), headers={"x-api-key": "sk-ant-wrong"})
check("--key: a wrong key -> 401 invalid x-api-key",
      is_error(r, 401, "authentication_error", "invalid x-api-key", True))
k.stop()
lx = Server("lax", "--sse", "lax")
r = post(lx, req(thinking=TH))
ml = rebuild(r.events)
check("--sse lax: 'data:' without a space, CRLF, comments, unknown event types; the section "
      "0 parser rebuilds it", (b"data:{" in r.body and b"\r\n" in r.body and b": keep-alive"
                               in r.body and b"future_event" in r.body)
      and ml["content"][2]["input"] == ARGS0 and ml.get("done"), lambda: r.body[:300])
lx.stop()


# ------------------------------------------------------------------ --unknown-content
def rebuild_all(events):
    """Every block as a client that keeps what it does not read rebuilds it: input_json_delta
    into input, citations_delta into citations, any other delta's strings onto its fields."""
    blocks, jbuf = {}, {}
    for e in events:
        d = e["data"]
        if d["type"] == "content_block_start":
            blocks[d["index"]], jbuf[d["index"]] = copy.deepcopy(d["content_block"]), ""
        elif d["type"] == "content_block_delta":
            b, dl = blocks[d["index"]], d["delta"]
            if dl["type"] == "input_json_delta":
                jbuf[d["index"]] += dl["partial_json"]
            elif dl["type"] == "citations_delta":
                b.setdefault("citations", []).append(dl["citation"])
            else:
                for key, val in dl.items():
                    if key != "type":
                        b[key] = b.get(key, "") + val
        elif d["type"] == "content_block_stop" and jbuf[d["index"]]:
            blocks[d["index"]]["input"] = json.loads(jbuf[d["index"]])
    return [blocks[k] for k in sorted(blocks)]


uc = Server("unknown", "--unknown-content")
a = post(uc, req(thinking=TH))
blocks = rebuild_all(a.events)
kinds = [b["type"] for b in blocks]
check("--unknown-content: thinking, text, a web search (server_tool_use with its input as "
      "input_json_delta, web_search_tool_result), future_widget with its own deltas, cited text, "
      "the calls; future_event events",
      kinds == ["thinking", "text", "server_tool_use", "web_search_tool_result", "future_widget",
                "text", "tool_use", "tool_use"]
      and blocks[2]["input"] == {"query": "assay unknown blocks"}
      and blocks[3]["tool_use_id"] == blocks[2]["id"]
      and blocks[4]["label"] == "a widget label" and blocks[4]["input"]["dial"] == 7
      and len(blocks[5].get("citations", [])) == 1 and blocks[1]["text"] + blocks[5]["text"] == TEXT0
      and sum(e["event"] == "future_event" for e in a.events) == 2, lambda: kinds)
res = [{"type": "tool_result", "tool_use_id": b["id"], "content": "x"} for b in blocks
       if b["type"] == "tool_use"]
back = conv(blocks, res, thinking=TH)
check("--unknown-content: the answer sent back whole and unchanged -> 200",
      post(uc, back).status == 200, lambda: post(uc, back).body[:300])
refused("--unknown-content: a server_tool_use without its result after it", uc,
        conv(blocks[:3] + blocks[4:], res, thinking=TH),
        "messages.1.content.2: `server_tool_use` ids were found without their result blocks",
        exact=False)
changed = copy.deepcopy(blocks)
changed[4]["label"] = "a widget"
refused("--unknown-content: the future block changed", uc, conv(changed, res, thinking=TH),
        "fake_anthropic: messages.1.content.4 is not the answer's block 4 sent back unchanged",
        exact=False)
refused("--unknown-content: the server's blocks dropped (only text and calls back)", uc,
        conv([b for b in blocks if b["type"] in ("thinking", "text", "tool_use")], res,
             thinking=TH), "is not the answer's block 2 sent back unchanged", exact=False)
uc.stop()

# ------------------------------------------------------------------ images (protocols.md F)
IMGDIR = f"{T}/images"
im = Server("images", "--images-dir", IMGDIR)
PNG = imgdata.png(120, 90, seed=1, noisy=True)


def image(data, mt="image/png", **extra):
    return {"type": "image", "source": {"type": "base64", "media_type": mt,
                                        "data": data if isinstance(data, str) else imgdata.b64(data)},
            **extra}


def with_image(*parts):
    """A tool_use of shell answered by a tool_result holding text and PARTS."""
    return conv(TU[:1], [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": [
        {"type": "text", "text": "chart.png:"}, *parts]}])


IP = "messages.2.content.0.tool_result.content.1.image.source.base64"
accepted("images: a PNG in a tool_result (text, then the image)", im, with_image(image(PNG)))
L = im.lines()
got = L[-1].get("images") or [{}]
check("images: the log lists it (n_images, where, media type, size, sha256, file)",
      L[-1].get("n_images") == 1 and got[0].get("where") == "messages.2.content.0.tool_result."
      "content.1.image" and got[0].get("media_type") == "image/png" and (got[0].get("width"),
      got[0].get("height")) == (120, 90) and got[0].get("bytes") == len(PNG)
      and got[0].get("file") == "0001-1.png", L[-1])
check("images: --images-dir holds 0001-1.png, byte for byte the PNG sent",
      os.path.exists(f"{IMGDIR}/0001-1.png") and open(f"{IMGDIR}/0001-1.png", "rb").read() == PNG,
      lambda: os.listdir(IMGDIR))
check("images: prompt_tokens counts the image by its size (120x90/750 = 15), not its base64",
      L[-1].get("prompt_tokens", 10 ** 9) < 400 < len(imgdata.b64(PNG)) // 4, L[-1])
accepted("images: an image block in a user message, next to text", im, req(messages=[
    {"role": "user", "content": [image(imgdata.jpeg(1024, 768), "image/jpeg"),
                                 {"type": "text", "text": "what is it?"}]}]))
accepted("images: GIF and WebP in one tool_result", im, with_image(
    image(imgdata.gif(64, 48), "image/gif"), image(imgdata.webp(800, 600), "image/webp")))
check("images: written as 0002-2.jpg, 0003-3.gif, 0004-3.webp",
      sorted(os.listdir(IMGDIR)) == ["0001-1.png", "0002-2.jpg", "0003-3.gif", "0004-3.webp"],
      lambda: os.listdir(IMGDIR))
accepted("images: a tool_result whose content is a string (as before)", im,
         conv(TU[:1], [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "ok"}]))
refused("images: bad base64 (a '*')", im, with_image(image("iVBORw0KGgo*AAA")),
        f"{IP}: invalid base64 data")
refused("images: base64 without its padding", im, with_image(image(imgdata.b64(PNG).rstrip("="))),
        f"{IP}: invalid base64 data")
refused("images: media_type image/jpeg over PNG bytes", im, with_image(image(PNG, "image/jpeg")),
        f"{IP}: The image was specified using the image/jpeg media type, but the image appears "
        "to be a image/png image")
refused("images: media_type image/bmp", im, with_image(image(PNG, "image/bmp")),
        f"{IP}.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'")
refused("images: a PNG whose header claims 9000x100", im,
        with_image(image(imgdata.png_claiming(9000, 100))),
        f"{IP}.data: At least one of the image dimensions exceed max allowed size: 8000 pixels")
accepted("images: a header claiming 8000x100 is within the limit", im,
         with_image(image(imgdata.png_claiming(8000, 100))))
refused("images: bytes that are no image", im, with_image(image(b"not a picture at all")),
        "Could not process image")
refused("images: a PNG cut inside its header", im, with_image(image(PNG[:20])),
        "Could not process image")
big = PNG + b"\0" * 3_900_000  # a PNG with trailing bytes: its base64 is over 5 MB
refused("images: base64 over 5 MB", im, with_image(image(big)),
        f"{IP}: image exceeds 5 MB maximum: {len(imgdata.b64(big))} bytes > 5242880 bytes")
refused("images: an unknown block type in a tool_result", im, with_image({"type": "video", "data": "x"}),
        "messages.2.content.0.tool_result.content.1: Input tag 'video' found using 'type' does not "
        "match any of the expected tags: 'document', 'image', 'search_result', 'text', "
        "'tool_reference'")
refused("images: an OpenAI image_url part in a tool_result", im,
        with_image({"type": "image_url", "image_url": {"url": "data:image/png;base64,xx"}}),
        "Input tag 'image_url'", exact=False)
refused("images: a source with an extra field", im,
        with_image(dict(image(PNG), source=dict(image(PNG)["source"], detail="high"))),
        f"{IP}.detail: Extra inputs are not permitted")
refused("images: a source without data", im, with_image({"type": "image", "source": {
    "type": "base64", "media_type": "image/png"}}), f"{IP}.data: Field required")
refused("images: a url source (this fake fetches nothing)", im, with_image({"type": "image",
        "source": {"type": "url", "url": "https://example.com/a.png"}}),
        "fake_anthropic only takes base64 image sources", exact=False)
refused("images: an image block with an extra field", im,
        with_image(dict(image(PNG), detail="high")),
        "messages.2.content.0.tool_result.content.1.image.detail: Extra inputs are not permitted")
wide = image(imgdata.png_claiming(2001, 10))
accepted("images: 20 images of 2001 px in one request", im, with_image(*[wide] * 20))
refused("images: 21 images of 2001 px (many-image requests: 2000 px a side)", im,
        with_image(*[wide] * 21),
        f"{IP}.data: At least one of the image dimensions exceed max allowed size for many-image "
        "requests: 2000 pixels")
L = im.lines()
check("images: refusals are logged without images; only accepted requests' images written",
      L[-1]["status"] == 400 and "images" not in L[-1] and len(os.listdir(IMGDIR)) == 4 + 1 + 20,
      lambda: (L[-1], len(os.listdir(IMGDIR))))
im.stop()
s1 = Server("seed1", seed=None)
sd = re.search(r"fake_anthropic: seed (\d+) \(rerun with --seed \1 ", s1.stderr())
check("seed: stderr says 'fake_anthropic: seed N (rerun with --seed N ...)'", sd, s1.stderr())
b1 = post(s1, req()).body
check("seed: in the log", sd and s1.lines()[0]["seed"] == int(sd.group(1)))
s1.stop()
s2 = Server("seed2", seed=sd.group(1) if sd else "1")
b2 = post(s2, req()).body
s2.stop()
s3 = Server("seed3", seed=str(int(sd.group(1)) + 1) if sd else "2")
b3 = post(s3, req()).body
s3.stop()
check("seed: --seed N replays the stream byte for byte; another seed does not",
      b1 == b2 and b1 != b3 and re.findall(rb"toolu_\w+", b1) != re.findall(rb"toolu_\w+", b3))
for p in PROCS:
    p.terminate()
print(f"{PASS} passed, {FAIL} failed")
sys.exit(1 if FAIL else 0)
PY
mkdir -p "$T/http"
inner "HTTP checks (http.client, sockets)" 150 "$PY" "$T/http_checks.py" "$FAKE" "$T/http"

# ------------------------------------------------------------------ curl
cat >"$T/curl.json" <<'JSON'
{"turns": [{"text": "Hi ✓", "tool_calls": [{"name": "shell", "arguments": {"command": "ls"}}]}]}
JSON
start_fake "$T/curl.json" --seed 5 --fault '429@1:retry-after=1' --fault reset@3
H=(-H 'x-api-key: sk-ant-x' -H 'anthropic-version: 2023-06-01' -H 'content-type: application/json')
BODY='{"model": "claude-x", "max_tokens": 256, "stream": true,
  "tools": [{"name": "shell", "input_schema": {"type": "object"}}],
  "messages": [{"role": "user", "content": "hi"}]}'
code=$(curl -s -o "$T/c1.body" -D "$T/c1.hdr" -w '%{http_code}' "${H[@]}" -d "$BODY" \
	"http://127.0.0.1:$PORT/v1/messages")
check "curl: 429 first (fault 429@1)" test "$code" = 429
check "curl: retry-after: 1 on the 429" grep -qix $'retry-after: 1\r' "$T/c1.hdr"
check "curl: the body is {type: error, error: {type: rate_limit_error}}" "$PY" -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["type"] == "error" and j["error"]["type"] == "rate_limit_error", j' "$T/c1.body"
sleep 1
curl -sN "${H[@]}" -d "$BODY" "http://127.0.0.1:$PORT/v1/messages" >"$T/c2.body"
check "curl -N: the stream ends with event: message_stop" grep -q '^event: message_stop$' "$T/c2.body"
check "curl: each data line is JSON whose type is its event's name" "$PY" -c '
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
pairs = [(a[7:], json.loads(b[6:])) for a, b in zip(lines, lines[1:]) if a.startswith("event: ")]
assert pairs and all(d["type"] == n for n, d in pairs), pairs
deltas = "".join(d["delta"].get("partial_json", "") for n, d in pairs if n == "content_block_delta")
assert json.loads(deltas) == {"command": "ls"}, deltas' "$T/c2.body"
rc=0
curl -sN "${H[@]}" -d "$BODY" "http://127.0.0.1:$PORT/v1/messages" >"$T/c3.body" 2>/dev/null || rc=$?
check "curl: reset@3 -> curl exit 56 (connection reset), got $rc" test "$rc" -eq 56
check "log: 429, 200, 200 (the reset was answered 200 first)" "$PY" -c '
import json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
assert [x["status"] for x in L] == [429, 200, 200] and L[1]["t"] - L[0]["t"] >= 1.0, L' "$FAKE_LOG"

# ------------------------------------------------------------------ the SDK
if [ "$FAILED" -gt 0 ]; then # a failure is a failure, not a skip
	finish || exit 1
fi
command -v node >/dev/null || skip "node is not installed (tests/fakes/anthropic_sdk_check.mjs" \
	"drives the fake with @anthropic-ai/sdk; the HTTP and curl checks passed)"
command -v npm >/dev/null || skip "npm is not installed (needed to install @anthropic-ai/sdk;" \
	"the HTTP and curl checks passed)"
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
[ "$major" -ge 18 ] || skip "node $(node --version) is too old for @anthropic-ai/sdk (needs 18+)"
declare -A SDK_DIR=()
for v in $SDK_VERSIONS; do
	if ! npm_sdk @anthropic-ai/sdk "$v"; then
		tail -n 5 "$T/npm-$v.out"
		skip "could not install @anthropic-ai/sdk@$v with npm ($(grep -m 1 . "$T/npm-$v.out" ||
			echo 'no output')); the HTTP and curl checks passed"
	fi
	SDK_DIR[$v]=$NPM_SDK_DIR
done
for v in $SDK_VERSIONS; do
	inner "SDK $v check" 50 node "$SDK_CHECK" --sdk "${SDK_DIR[$v]}" --python "$PY"
done
finish
