#!/usr/bin/env bash
# The OpenSandbox fake is tested too: tests/fakes/fake_opensandbox.py (the
# lifecycle server and each sandbox's execd in one process, commands really
# run in bubblewrap) is driven over real HTTP by raw requests (Python's
# http.client: auth, validation, states, the endpoint and its required
# header, the command event stream byte for byte, interrupt, timeout,
# background logs, files, confinement, /tmp persisting, the memory limit,
# the network by networkPolicy, a fork bomb under --pids-limit, the create's
# log line, renew, TTL, delete) and then by the
# official TypeScript SDK @alibaba-group/opensandbox from npm
# (tests/fakes/opensandbox_sdk_check.mjs), so a fake that drifts from the
# real server fails here instead of letting the backend tests that use it
# pass. The SDK is installed at test time, once per version (npm_sdk in
# lib.bash keeps an exact version's install beside npm's cache), a pinned
# version (OPENSANDBOX_SDK_VERSION overrides, e.g. "latest"). Without
# bubblewrap it skips; without node 20+, npm or the install it skips after
# the HTTP checks (a skip is a failure under CI=true).
source "$(dirname "$0")/lib.bash"
FAKE=$SRC/tests/fakes/fake_opensandbox.py
SDK_CHECK=$SRC/tests/fakes/opensandbox_sdk_check.mjs
SDK_VERSION=${OPENSANDBOX_SDK_VERSION:-0.1.11}
NPM_CACHE=${ASSAY_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/assay/npm}
need_bwrap

INNER_TIMEOUT=150 # inner (lib.bash): the HTTP checks take ~20 s, the SDK check ~10 s

# ------------------------------------------------------------------ raw HTTP
cat >"$T/http_checks.py" <<'PY'
# HTTP checks of fake_opensandbox.py with http.client, no SDK.
# Usage: python3 http_checks.py FAKE TMPDIR; prints ok/FAIL lines, "N passed, M failed".
import atexit
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from urllib.parse import quote

FAKE, T = sys.argv[1], sys.argv[2]
PY = sys.executable
PASS = FAIL = 0
PROCS = []
atexit.register(lambda: [p.terminate() for p in PROCS])
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
KEY = "osk-test-key"


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
    return cond


class Server:
    def __init__(self, name, *args):
        self.pf, self.log = f"{T}/{name}.port", f"{T}/{name}.log"
        self.root = f"{T}/{name}.root"
        os.makedirs(self.root, exist_ok=True)
        self.err = open(f"{T}/{name}.err", "w+")
        self.proc = subprocess.Popen([PY, FAKE, "--port", "0", "--port-file", self.pf,
                                      "--log", self.log, "--root", self.root] + list(args),
                                     stderr=self.err)
        PROCS.append(self.proc)
        for _ in range(200):
            if os.path.exists(self.pf):
                break
            time.sleep(0.025)
        self.port = int(open(self.pf).read())

    def lines(self):
        return [json.loads(l) for l in open(self.log)] if os.path.exists(self.log) else []

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


class Answer:
    def __init__(self, r, body):
        self.status, self.headers, self.body = r.status, {k.lower(): v for k, v in
                                                          r.getheaders()}, body
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None

    def __repr__(self):
        return f"<{self.status} {self.body[:300]!r}>"


def req(srv, method, path, body=None, headers=None, key=KEY, raw=None):
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    h = dict(headers or {})
    if key is not None:
        h["OPEN-SANDBOX-API-KEY"] = key
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    c.request(method, path, body=data, headers=h)
    r = c.getresponse()
    a = Answer(r, r.read())
    c.close()
    return a


CREATE = {"image": {"uri": "python:3.11"}, "entrypoint": ["tail", "-f", "/dev/null"],
          "timeout": 3600, "resourceLimits": {"cpu": "500m", "memory": "512Mi"},
          "env": {"GREETING": "hi"}, "metadata": {"project": "apollo", "note": "Demo Test"}}


def create(srv, **over):
    body = dict(CREATE, **over)
    return req(srv, "POST", "/v1/sandboxes", body)


def wait_running(srv, sid, secs=5):
    end = time.time() + secs
    seen = []
    while time.time() < end:
        a = req(srv, "GET", f"/v1/sandboxes/{sid}")
        st = a.json and a.json.get("status", {}).get("state")
        if not seen or seen[-1] != st:
            seen.append(st)
        if st in ("Running", "Failed") or a.status == 404:  # (404: gone, it will not run)
            return seen
        time.sleep(0.05)
    return seen


class Execd:
    """The execd of one sandbox, reached as a client must: http:// + endpoint, its headers."""

    def __init__(self, srv, sid):
        a = req(srv, "GET", f"/v1/sandboxes/{sid}/endpoints/44772")
        self.answer = a
        ep = a.json["endpoint"]
        self.hostport, _, prefix = ep.partition("/")
        self.prefix = "/" + prefix
        self.headers = a.json.get("headers") or {}

    def conn(self):
        host, port = self.hostport.rsplit(":", 1)
        return http.client.HTTPConnection(host, int(port), timeout=60)

    def call(self, method, path, body=None, headers=None, raw=None, with_route=True):
        c = self.conn()
        h = dict(self.headers if with_route else {})
        h.update(headers or {})
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        c.request(method, self.prefix + path, body=data, headers=h)
        r = c.getresponse()
        a = Answer(r, r.read())
        c.close()
        return a

    def stream(self, body, on_event=None):
        """POST /command: (raw body bytes, events, seconds from the final event to EOF, answer)"""
        c = self.conn()
        h = dict(self.headers)
        h["Content-Type"] = "application/json"
        h["Accept"] = "text/event-stream"
        c.request("POST", self.prefix + "/command", body=json.dumps(body).encode(), headers=h)
        r = c.getresponse()
        if r.status != 200:
            return r.read(), [], None, r
        raw, events, buf, t_final = b"", [], b"", None
        while True:
            chunk = r.read1(65536)
            if not chunk:
                break
            raw += chunk
            buf += chunk
            while b"\n\n" in buf:
                frame, buf = buf.split(b"\n\n", 1)
                if frame.strip():
                    ev = json.loads(frame)
                    events.append(ev)
                    if ev["type"] in ("execution_complete", "error"):
                        t_final = time.time()
                    if on_event:
                        on_event(ev, c)
        tail = time.time() - t_final if t_final else None
        c.close()
        return raw, events, tail, r


def texts(events, typ):
    return [e.get("text") for e in events if e["type"] == typ]


def run(ex, command, **kw):
    body = {"command": command, "cwd": "/workspace"}
    body.update(kw)
    return ex.stream(body)


def multipart(pairs, boundary="fakeboundary7d3"):
    out = b""
    for meta, data, fname in pairs:
        out += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"metadata\"; "
                f"filename=\"metadata\"\r\nContent-Type: application/json\r\n\r\n").encode()
        out += json.dumps(meta).encode() + b"\r\n"
        out += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
                f"filename=\"{fname}\"\r\nContent-Type: application/octet-stream\r\n\r\n").encode()
        out += data + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return out, f"multipart/form-data; boundary={boundary}"


# (--grace-ms 50: each command's stream closes 50 ms after its final
# event, not 1 s; the default's 1 s is checked on a fake of its own)
srv = Server("main", "--key", KEY, "--start-ms", "300", "--ttl-scale", "0.05", "--grace-ms", "50")

# ---- auth, request ids, unknown paths
a = req(srv, "GET", "/v1/sandboxes", key=None)
check("auth: no OPEN-SANDBOX-API-KEY -> 401 MISSING_API_KEY",
      a.status == 401 and a.json.get("code") == "MISSING_API_KEY" and a.json.get("message"), a)
check("auth: X-Request-ID on the 401 too", bool(a.headers.get("x-request-id")), a.headers)
a = req(srv, "GET", "/v1/sandboxes", key="wrong")
check("auth: a wrong key -> 401 INVALID_API_KEY", a.status == 401
      and a.json == {"code": "INVALID_API_KEY", "message": a.json.get("message")}, a)
rid = str(uuid.uuid4())
a = req(srv, "GET", "/v1/sandboxes", headers={"X-Request-ID": rid})
check("auth: the right key -> 200; a given X-Request-ID is echoed",
      a.status == 200 and a.headers.get("x-request-id") == rid, (a, a.headers))
check("list: empty at first, with pagination", a.json == {"items": [], "pagination": {
    "page": 1, "pageSize": 20, "totalItems": 0, "totalPages": 0, "hasNextPage": False}}, a)
a = req(srv, "GET", "/v1/nothing/here")
check("unknown path: 404 {code, message}", a.status == 404 and set(a.json) == {"code", "message"}
      and a.headers.get("x-request-id"), a)
a = req(srv, "POST", "/v1/metrics/events", {"event": "x"})
check("/v1/metrics/events (SDK telemetry) -> 404", a.status == 404, a)

# ---- create validation
for name, over, loc in [
        ("no entrypoint", {"entrypoint": None}, ["body", "entrypoint"]),
        ("image without uri", {"image": {}}, ["body", "image", "uri"]),
        ("timeout 59", {"timeout": 59}, ["body", "timeout"]),
        ("an empty entrypoint", {"entrypoint": []}, ["body", "entrypoint"])]:
    body = {k: v for k, v in dict(CREATE, **over).items() if v is not None}
    a = req(srv, "POST", "/v1/sandboxes", body)
    check(f"create 422: {name} -> detail at {loc}", a.status == 422 and isinstance(
        a.json.get("detail"), list) and any(d.get("loc") == loc for d in a.json["detail"]), a)
a = req(srv, "POST", "/v1/sandboxes", raw=b"{not json", headers={"Content-Type": "application/json"})
check("create 422: a body that is not JSON", a.status == 422 and "detail" in a.json, a)
check("create: nothing was created by the bad requests",
      req(srv, "GET", "/v1/sandboxes").json["pagination"]["totalItems"] == 0)

# ---- create, poll, list
t0 = time.time()
a = create(srv)
sid = a.json["id"] if a.json else None
check("create: 202 with id, status.state Pending, createdAt, expiresAt, entrypoint; no image",
      a.status == 202 and a.json["status"]["state"] == "Pending" and a.json["createdAt"]
      .endswith("Z") and "expiresAt" in a.json and a.json["entrypoint"] == CREATE["entrypoint"]
      and "image" not in a.json and a.json["metadata"] == CREATE["metadata"], a)
b = create(srv, metadata={"project": "zeus"}, timeout=60)  # expires in 3 s (--ttl-scale 0.05)
sid2 = b.json["id"]
ex2 = Execd(srv, sid2)
a = ex2.call("GET", "/ping")
check("execd of a Pending sandbox does not answer (502)", a.status == 502, a)
seen = wait_running(srv, sid)
check("poll: Pending -> Running after --start-ms (300 ms)",
      seen == ["Pending", "Running"] and time.time() - t0 >= 0.28, seen)
a = req(srv, "GET", f"/v1/sandboxes/{sid}")
check("get: the full Sandbox (image, status.reason, lastTransitionAt)",
      a.json["image"] == {"uri": "python:3.11"} and a.json["status"]["state"] == "Running"
      and a.json["status"].get("lastTransitionAt"), a)
L = lambda q: [s["id"] for s in req(srv, "GET", "/v1/sandboxes" + q).json["items"]]
check("list: both sandboxes", set(L("")) == {sid, sid2})
check("list: metadata filter project=apollo", L("?metadata=" + quote("project=apollo", safe=""))
      == [sid])
check("list: metadata filter with two pairs (AND) and a space",
      L("?metadata=" + quote("project=apollo&note=Demo Test", safe="")) == [sid])
check("list: metadata filter that matches nothing",
      L("?metadata=" + quote("project=apollo&note=x", safe="")) == [])
wait_running(srv, sid2)
check("list: state filter (OR over repeated state)", L("?state=Pending") == [] and
      set(L("?state=Running")) == {sid, sid2} and set(L("?state=Failed&state=Running")) == {sid, sid2})
a = req(srv, "GET", "/v1/sandboxes?pageSize=1&page=2")
check("list: pagination pageSize=1 page=2", len(a.json["items"]) == 1 and
      a.json["pagination"] == {"page": 2, "pageSize": 1, "totalItems": 2, "totalPages": 2,
                               "hasNextPage": False}, a)

# ---- endpoint and ping
ex = Execd(srv, sid)
ep = ex.answer.json
check("endpoint: host:port/path, no scheme, with headers",
      ex.answer.status == 200 and not re.match(r"^\w+://", ep["endpoint"])
      and ep["endpoint"].startswith(f"127.0.0.1:{srv.port}/") and ep.get("headers"), ep)
a = ex.call("GET", "/ping")
check("ping with the endpoint's headers -> 200", a.status == 200, a)
a = ex.call("GET", "/ping", with_route=False)
check("ping without them -> 401 (clients must send the endpoint's headers)",
      a.status == 401 and a.json.get("code"), a)
a = req(srv, "GET", f"/v1/sandboxes/{sid}/endpoints/0")
check("endpoint: port 0 refused", a.status in (400, 422), a)

# ---- the command stream
CMD = r"printf 'one\ntwo\n\nthree <&> end\r\nfour\rfive\npart'; printf 'oops\n' >&2"
raw, ev, tail, r = run(ex, CMD)
check("command: 200 text/event-stream", r.status == 200 and
      r.getheader("Content-Type") == "text/event-stream", r.status)
check("command: init first (text = the command id), ping right after",
      [e["type"] for e in ev[:2]] == ["init", "ping"] and re.match(r"^\w{8,}$", ev[0]["text"])
      and ev[1].get("text") == "pong", ev[:2])
check("command: stdout one event per line, terminators stripped, empty line as \\n, "
      "the partial last line at exit", texts(ev, "stdout") == [
          "one", "two", "\n", "three <&> end", "four", "five", "part"], texts(ev, "stdout"))
check("command: stderr its own events", texts(ev, "stderr") == ["oops"], texts(ev, "stderr"))
check("command: execution_complete last (exit 0), with timestamps",
      ev[-1]["type"] == "execution_complete" and all("timestamp" in e for e in ev), ev[-1])
check("command: bare JSON frames ending in a blank line, no data: prefix",
      raw.startswith(b'{"type":"init"') and raw.endswith(b"}\n\n") and b"data:" not in raw,
      raw[:80])
check("command: Go escaping of <&> (\\u003c\\u0026\\u003e), never raw",
      b"three \\u003c\\u0026\\u003e end" in raw and b"<" not in raw and b"&" not in raw, raw)
# execd's graceful end, with the fake's default --grace-ms (1000)
gs = Server("grace", "--key", KEY, "--start-ms", "50")
gsid = create(gs).json["id"]
wait_running(gs, gsid)
_, gev, tail, _ = run(Execd(gs, gsid), CMD)
check("command: the stream stays open ~1 s after the final event",
      gev and gev[-1]["type"] == "execution_complete" and tail is not None and
      0.8 <= tail <= 2.0, tail)
gs.stop()
cid = ev[0]["text"]
a = ex.call("GET", f"/command/status/{cid}")
check("status: running false, exit_code 0, started_at/finished_at",
      a.status == 200 and a.json["id"] == cid and a.json["running"] is False
      and a.json["exit_code"] == 0 and a.json.get("finished_at"), a)

raw, ev, tail, r = run(ex, "echo before; exit 3")
er = [e for e in ev if e["type"] == "error"]
check("failing command: error event, ename CommandExecError, evalue \"3\"; no execution_complete",
      er and er[0]["error"]["ename"] == "CommandExecError" and er[0]["error"]["evalue"] == "3"
      and isinstance(er[0]["error"]["traceback"], list) and not texts(ev, "execution_complete")
      and ev[-1]["type"] == "error" and texts(ev, "stdout") == ["before"], ev)
a = ex.call("GET", f"/command/status/{ev[0]['text']}")
check("status of it: exit_code 3, error 'exit status 3'",
      a.json["exit_code"] == 3 and a.json.get("error") == "exit status 3", a)

t0 = time.time()
raw, ev, tail, r = run(ex, "echo start; sleep 30", timeout=600)
er = [e for e in ev if e["type"] == "error"]
check("timeout (ms): the command is killed, error evalue \"-1\"",
      er and er[0]["error"]["evalue"] == "-1" and texts(ev, "stdout") == ["start"]
      and time.time() - t0 < 4, (ev, time.time() - t0))

raw, ev, tail, r = run(ex, "echo $GREETING $EXTRA; pwd; cd; pwd", envs={"EXTRA": "there"})
check("env: the create body's env and the command's envs; cwd honoured",
      texts(ev, "stdout")[:2] == ["hi there", "/workspace"], texts(ev, "stdout"))
raw, ev, tail, r = ex.stream({"command": "pwd"})
check("cwd defaults to / (as the real execd)", texts(ev, "stdout") == ["/"], ev)
raw, ev, tail, r = ex.stream({"command": "pwd", "cwd": "/workspace/nope"})
check("a cwd that does not exist -> 400 before any event", r.status == 400 and
      json.loads(raw)["code"] == "INVALID_REQUEST_BODY", raw)

# interrupt: DELETE /command?id= ; a command that ignores SIGTERM gets SIGKILL after 3 s
got = {}


def interrupter(delay):
    def on(ev, c):
        if ev["type"] == "init":
            def go():
                time.sleep(delay)
                t = time.time()
                got["del"] = ex.call("DELETE", "/command?id=" + ev["text"])
                got["del_s"] = time.time() - t
            threading.Thread(target=go).start()
    return on


t0 = time.time()
raw, ev, tail, r = ex.stream({"command": "echo x; sleep 30", "cwd": "/workspace"},
                             interrupter(0.3))
er = [e for e in ev if e["type"] == "error"]
check("interrupt: DELETE /command?id= -> 200; the stream ends with error evalue \"-1\"",
      got.get("del") and got["del"].status == 200 and er and er[0]["error"]["evalue"] == "-1"
      and time.time() - t0 < 4, (got, ev))
got.clear()
raw, ev, tail, r = ex.stream({"command": "trap '' TERM; echo y; sleep 30; sleep 30",
                              "cwd": "/workspace"}, interrupter(0.3))
er = [e for e in ev if e["type"] == "error"]
check("interrupt: SIGTERM ignored -> SIGKILL after 3 s (the DELETE waits for it)",
      got.get("del") and got["del"].status == 200 and 2.8 <= got["del_s"] <= 5 and er
      and er[0]["error"]["evalue"] == "-1", (got, ev))
a = ex.call("DELETE", "/command?id=" + ev[0]["text"])
check("interrupt of a finished command -> 500 RUNTIME_ERROR", a.status == 500 and
      a.json["code"] == "RUNTIME_ERROR", a)
a = ex.call("DELETE", "/command")
check("interrupt without id -> 400 MISSING_QUERY", a.status == 400 and
      a.json["code"] == "MISSING_QUERY", a)

# closing the connection does not stop the command
def closer(ev, c):
    if ev["type"] == "init":
        c.sock.shutdown(2)
        raise ConnectionAbortedError


try:
    ex.stream({"command": "sleep 0.7; echo survived > /workspace/detached.txt",
               "cwd": "/workspace"}, closer)
except (ConnectionAbortedError, OSError, ValueError):
    pass
end = time.time() + 10  # its file, written 0.7 s in
while time.time() < end and ex.call(
        "GET", "/files/download?path=/workspace/detached.txt").status != 200:
    time.sleep(0.1)
a = ex.call("GET", "/files/download?path=/workspace/detached.txt")
check("closing the stream does not stop the command (it wrote its file later)",
      a.status == 200 and a.body == b"survived\n", a)

# background + logs with cursor
raw, ev, tail, r = ex.stream({"command": "for i in 1 2 3; do echo line$i; sleep 0.8; done; "
                              "echo err >&2", "cwd": "/workspace", "background": True})
check("background: init, ping, execution_complete at once (no output events)",
      [e["type"] for e in ev] == ["init", "ping", "execution_complete"], ev)
bid = ev[0]["text"]
end = time.time() + 5  # its first line, once the (loaded) machine runs it
a = ex.call("GET", f"/command/{bid}/logs?cursor=0")
while time.time() < end and not a.body:
    time.sleep(0.05)
    a = ex.call("GET", f"/command/{bid}/logs?cursor=0")
cur = a.headers.get("execd-commands-tail-cursor")
check("logs: text/plain with EXECD-COMMANDS-TAIL-CURSOR = bytes so far",
      a.status == 200 and cur is not None and int(cur) == len(a.body)
      and a.body.startswith(b"line1\n") and b"line3" not in a.body, (a, cur))
s = ex.call("GET", f"/command/status/{bid}")
check("status of a background command while it runs: running true, no exit_code",
      s.json["running"] is True and "exit_code" not in s.json, s)
end = time.time() + 10  # until it has ended (2.4 s of sleeps)
while time.time() < end and ex.call("GET", f"/command/status/{bid}").json["running"]:
    time.sleep(0.1)
b2 = ex.call("GET", f"/command/{bid}/logs?cursor={cur}")
cur2 = b2.headers.get("execd-commands-tail-cursor")
check("logs?cursor=N: only what came after N, stdout and stderr combined",
      a.body + b2.body == b"line1\nline2\nline3\nerr\n" and int(cur2) == len(a.body + b2.body),
      (a.body, b2.body, cur2))
check("logs at the end cursor: empty", ex.call("GET", f"/command/{bid}/logs?cursor={cur2}").body
      == b"")
a = ex.call("GET", f"/command/{cid}/logs?cursor=0")
check("logs of a foreground command -> 400", a.status == 400, a)
a = ex.call("GET", "/command/status/nosuch")
check("status of an unknown command -> 404", a.status == 404, a)

# ---- files
BIN = bytes(range(256)) * 4
body, ctype = multipart([({"path": "/workspace/a/b/one.sh", "mode": 755},
                          b"#!/bin/sh\necho from-upload\n", "one.sh"),
                         ({"path": "/workspace/two.bin", "mode": 600}, BIN, "two.bin")])
a = ex.call("POST", "/files/upload", raw=body, headers={"Content-Type": ctype})
check("upload: two files in one multipart request -> 200", a.status == 200, a)
a = ex.call("GET", "/files/download?path=/workspace/two.bin")
check("download: the bytes, application/octet-stream", a.status == 200 and a.body == BIN and
      a.headers.get("content-type") == "application/octet-stream", a.headers)
a = ex.call("GET", "/files/download?path=" + quote("/workspace/a/b/one.sh"))
check("download: the other file (parents were created)", a.body == b"#!/bin/sh\necho from-upload\n",
      a)
a = ex.call("GET", "/files/download?path=/workspace/two.bin", headers={"Range": "bytes=2-5"})
check("download Range bytes=2-5 -> 206, Content-Range, 4 bytes",
      a.status == 206 and a.body == BIN[2:6] and
      a.headers.get("content-range") == f"bytes 2-5/{len(BIN)}", (a, a.headers))
a = ex.call("GET", "/files/download?path=/workspace/two.bin", headers={"Range": "bytes=-3"})
check("download Range bytes=-3 -> the last 3 bytes", a.status == 206 and a.body == BIN[-3:], a)
a = ex.call("GET", "/files/download?path=/workspace/two.bin",
            headers={"Range": f"bytes={len(BIN)}-"})
check("download: a Range past the end -> 416", a.status == 416, a)
a = ex.call("GET", "/files/download?path=/workspace/none.txt")
check("download of a missing file -> 404 FILE_NOT_FOUND", a.status == 404 and
      a.json["code"] == "FILE_NOT_FOUND", a)
raw, ev, tail, r = run(ex, "stat -c '%a %n' a/b/one.sh two.bin; a/b/one.sh")
check("upload: the mode is honoured (755, 600) and the command sees the files",
      texts(ev, "stdout") == ["755 a/b/one.sh", "600 two.bin", "from-upload"], ev)
a = ex.call("GET", "/files/info?path=/workspace/a/b/one.sh&path=/workspace/two.bin")
check("files/info: a map path -> {type, size, mode 755/600, owner, modified_at}",
      a.status == 200 and a.json["/workspace/a/b/one.sh"]["mode"] == 755 and
      a.json["/workspace/two.bin"]["size"] == len(BIN) and
      a.json["/workspace/two.bin"]["type"] == "file" and
      a.json["/workspace/two.bin"]["mode"] == 600 and "modified_at" in a.json["/workspace/two.bin"],
      a)
a = ex.call("GET", "/files/info?path=/workspace/nope")
check("files/info of a missing file -> 404 FILE_NOT_FOUND", a.status == 404 and
      a.json["code"] == "FILE_NOT_FOUND", a)
a = ex.call("GET", "/directories/list?path=/workspace")
names = [(e["path"], e["type"]) for e in a.json] if a.status == 200 else a
check("directories/list depth 1: immediate children, sorted, root excluded",
      names == [("/workspace/a", "directory"), ("/workspace/detached.txt", "file"),
                ("/workspace/two.bin", "file")], names)
a = ex.call("GET", "/directories/list?path=/workspace&depth=3")
check("directories/list depth 3: descendants after their parent",
      [e["path"] for e in a.json] == ["/workspace/a", "/workspace/a/b", "/workspace/a/b/one.sh",
                                      "/workspace/detached.txt", "/workspace/two.bin"], a)
a = ex.call("GET", "/directories/list?path=/workspace/two.bin")
check("directories/list of a file -> 400", a.status == 400, a)
a = ex.call("DELETE", "/files?path=/workspace/detached.txt")
check("DELETE /files -> 200, then the file is gone", a.status == 200 and ex.call(
    "GET", "/files/download?path=/workspace/detached.txt").status == 404, a)
body, ctype = multipart([({"path": "/workspace/x"}, b"x", "x")])
a = ex.call("POST", "/files/upload", raw=body.replace(b'name="file"', b'name="other"'),
            headers={"Content-Type": ctype})
check("upload without a file part -> 400 INVALID_FILE_CONTENT", a.status == 400 and
      a.json["code"] == "INVALID_FILE_CONTENT", a)

# ---- confinement
host_dirs = os.listdir("/")
raw, ev, tail, r = run(ex, f"ls /; test -e {T} && echo SEE-T; test -e /home && echo SEE-HOME; "
                       f"test -e /etc/passwd && echo SEE-ETC; ls /workspace/../ | wc -l")
out = texts(ev, "stdout")
check("confinement: / holds only the system dirs and /workspace; no test dir, /home or "
      "/etc/passwd",
      "workspace" in out and not any(x.startswith("SEE-") for x in out) and
      set(out[:-1]) <= {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "root",
                        "sbin", "tmp", "usr", "workspace"}, out)
raw, ev, tail, r = run(ex, "ls -A /etc 2>/dev/null")
check("confinement: /etc holds only alternatives (read-only symlinks into /usr, for libblas) "
      "and matplotlibrc",
      set(texts(ev, "stdout")) <= {"alternatives", "matplotlibrc"}, ev)
raw, ev, tail, r = run(ex, "touch /usr/x 2>/dev/null && echo WROTE; echo ok > /tmp/t && cat /tmp/t")
check("system dirs read-only, /tmp writable", texts(ev, "stdout") == ["ok"], ev)
a = ex.call("GET", "/files/download?path=/etc/passwd")
check("files API confined to /workspace: /etc/passwd refused", a.status in (403, 404), a)
a = ex.call("GET", "/files/download?path=/workspace/../../../etc/passwd")
check("files API: .. cannot climb out", a.status in (403, 404), a)
raw, ev, tail, r = run(ex, f"ln -s {srv.root} /workspace/esc")
a = ex.call("GET", "/directories/list?path=/workspace/esc")
check("files API: a symlink out of /workspace is not followed", a.status in (400, 403), a)
# another sandbox's files are not visible
c3 = create(srv).json["id"]
wait_running(srv, c3)
ex3 = Execd(srv, c3)
raw, ev, tail, r = run(ex3, "ls /workspace | wc -l")
check("each sandbox has its own /workspace", texts(ev, "stdout") == ["0"], ev)
a = ex3.call("GET", "/ping", headers=ex.headers)
check("one sandbox's route header does not open another's execd", a.status == 401, a)

# ---- a container's semantics: /tmp persists, resourceLimits, pids limit, networkPolicy
def log_line(srv, pred, secs=3):
    """The first log line that pred accepts (the fake logs a request after answering)."""
    end = time.time() + secs
    while True:
        for x in srv.lines():
            if pred(x):
                return x
        if time.time() > end:
            return None
        time.sleep(0.05)


def create_log(srv, sid):
    return log_line(srv, lambda x: x["method"] == "POST" and x["path"] == "/v1/sandboxes"
                    and x.get("sandbox") == sid)


def cgroup_dirs(pid):
    """The fake's parent pids cgroups (fake-opensandbox.<pid>) in the mounted hierarchies."""
    out = []
    for line in open("/proc/self/mounts"):
        mnt, fstype, opts = line.split()[1:4]
        if not (fstype == "cgroup" and "pids" in opts.split(",") or fstype == "cgroup2"):
            continue
        for dp, dns, fns in os.walk(mnt):
            if dp.count("/") - mnt.count("/") >= 4:
                dns[:] = []
            out += [os.path.join(dp, d) for d in dns if d == f"fake-opensandbox.{pid}"]
    return out


raw, ev, tail, r = run(ex, "echo kept > /tmp/persist.txt; mkdir -p /tmp/d/e")
raw, ev, tail, r = run(ex, "cat /tmp/persist.txt; ls -d /tmp/d/e")
check("/tmp persists across two commands of a sandbox (a container's /tmp, not a tmpfs each)",
      texts(ev, "stdout") == ["kept", "/tmp/d/e"], ev)
raw, ev, tail, r = ex.stream({"command": "pwd", "cwd": "/tmp/d"})
check("a cwd under /tmp", texts(ev, "stdout") == ["/tmp/d"], ev)
body, ctype = multipart([({"path": "/tmp/up/data.bin", "mode": 640}, BIN, "data.bin")])
a = ex.call("POST", "/files/upload", raw=body, headers={"Content-Type": ctype})
check("files: upload under /tmp -> 200", a.status == 200, a)
a = ex.call("GET", "/files/download?path=/tmp/up/data.bin")
check("files: download it back from /tmp", a.status == 200 and a.body == BIN, a)
raw, ev, tail, r = run(ex, "wc -c < /tmp/up/data.bin; stat -c %a /tmp/up/data.bin")
check("files: a command sees the upload in /tmp (size, mode 640)",
      texts(ev, "stdout") == [str(len(BIN)), "640"], ev)
a = ex.call("GET", "/files/download?path=/tmp/persist.txt")
check("files: download of what a command wrote to /tmp", a.status == 200 and a.body == b"kept\n", a)
a = ex.call("GET", "/files/info?path=/tmp/persist.txt")
check("files/info under /tmp", a.status == 200 and a.json["/tmp/persist.txt"]["size"] == 5, a)
a = ex.call("GET", "/directories/list?path=/tmp")
check("directories/list /tmp (what commands and uploads left there)", a.status == 200 and [
    e["path"] for e in a.json] == ["/tmp/d", "/tmp/persist.txt", "/tmp/t", "/tmp/up"], a)
a = ex.call("DELETE", "/files?path=/tmp/persist.txt")
raw, ev, tail, r = run(ex, "test -e /tmp/persist.txt && echo STILL; ls /tmp")
check("DELETE /files under /tmp: the command no longer sees it", a.status == 200 and
      texts(ev, "stdout") == ["d", "t", "up"], (a, ev))
a = ex.call("POST", "/directories", {"/tmp/made/deep": {"mode": 755}})
raw, ev, tail, r = run(ex, "test -d /tmp/made/deep && echo DIR")
check("POST /directories under /tmp", a.status == 200 and texts(ev, "stdout") == ["DIR"], (a, ev))
a = ex.call("DELETE", "/directories?path=/tmp/made")
check("DELETE /directories under /tmp", a.status == 200 and ex.call(
    "GET", "/files/info?path=/tmp/made").status == 404, a)
a = ex.call("DELETE", "/files?path=/tmp")
check("DELETE /files of /tmp itself is refused (500) and /tmp stays", a.status == 500 and
      ex.call("GET", "/directories/list?path=/tmp").status == 200, a)
for name, meth, path in [("download /etc/passwd", "GET", "/files/download?path=/etc/passwd"),
                         ("info /etc", "GET", "/files/info?path=/etc"),
                         ("list /etc", "GET", "/directories/list?path=/etc"),
                         ("/tmp/../etc/passwd", "GET", "/files/download?path=/tmp/../etc/passwd"),
                         ("list /", "GET", "/directories/list?path=/"),
                         ("/tmpx (a prefix of /tmp)", "GET", "/files/download?path=/tmpx"),
                         ("DELETE /etc", "DELETE", "/files?path=/etc")]:
    a = ex.call(meth, path)
    check(f"files API outside /workspace and /tmp: {name} -> 403 PERMISSION_DENIED",
          a.status == 403 and a.json["code"] == "PERMISSION_DENIED", a)
body, ctype = multipart([({"path": "/etc/evil"}, b"x", "evil")])
a = ex.call("POST", "/files/upload", raw=body, headers={"Content-Type": ctype})
check("files API: upload to /etc -> 403", a.status == 403, a)
raw, ev, tail, r = run(ex, f"ln -s {srv.root} /tmp/esc; ln -s /workspace /tmp/ws")
a = ex.call("GET", "/directories/list?path=/tmp/esc")
b = ex.call("GET", "/files/download?path=/tmp/esc/x")
check("files API: a symlink out of /tmp is not followed (403)", a.status in (400, 403) and
      b.status == 403, (a, b))
a = ex.call("GET", "/files/download?path=/tmp/ws/two.bin")
check("files API: a symlink in /tmp is resolved on the host and refused when it leaves the "
      "sandbox's /tmp dir (here -> /workspace: each root is checked on its own)", a.status == 403, a)
raw, ev, tail, r = run(ex3, "ls -A /tmp | wc -l")
check("each sandbox has its own /tmp", texts(ev, "stdout") == ["0"], ev)

# resourceLimits.memory -> RLIMIT_AS of every command
raw, ev, tail, r = run(ex, "grep 'Max address space' /proc/self/limits")
check("memory 512Mi (CREATE's) -> RLIMIT_AS 536870912 in the command",
      len(texts(ev, "stdout")) == 1 and texts(ev, "stdout")[0].split()[3:5] == [
          "536870912", "536870912"], ev)
DENY = {"defaultAction": "deny", "egress": [{"action": "allow", "target": "pypi.org"},
                                             {"action": "allow", "target": "*.github.com"}]}
dn = create(srv, resourceLimits={"cpu": "250m", "memory": "256Mi"}, networkPolicy=DENY)
dn_id = dn.json["id"]
op = create(srv, networkPolicy={"defaultAction": "allow",
                                "egress": [{"action": "deny", "target": "bad.example.com"}]})
nd = create(srv, networkPolicy={"egress": []})
check("create with networkPolicy (deny + allow rules, allow + deny rules, no defaultAction): 202",
      dn.status == 202 and op.status == 202 and nd.status == 202, (dn, op, nd))
for x in (dn, op, nd):
    wait_running(srv, x.json["id"])
exd, exo, exn = Execd(srv, dn_id), Execd(srv, op.json["id"]), Execd(srv, nd.json["id"])
raw, ev, tail, r = run(exd, "python3 -c 'b = bytearray(400 * 2**20); print(len(b))'")
er = [e for e in ev if e["type"] == "error"]
check("memory 256Mi: a python allocating 400 MiB fails with MemoryError (exit 1)",
      er and er[0]["error"]["evalue"] == "1" and any("MemoryError" in (t or "")
                                                      for t in texts(ev, "stderr")), ev)
raw, ev, tail, r = run(exd, "python3 -c 'b = bytearray(64 * 2**20); print(len(b))'")
check("memory 256Mi: a python allocating 64 MiB works", texts(ev, "stdout") == [
    str(64 * 2**20)] and ev[-1]["type"] == "execution_complete", ev)
raw, ev, tail, r = run(exd, "grep 'Max address space' /proc/self/limits")
check("memory 256Mi -> RLIMIT_AS 268435456", "268435456" in " ".join(texts(ev, "stdout")), ev)
try:
    import importlib.util
    has_pandas = importlib.util.find_spec("pandas") is not None
except Exception:
    has_pandas = False
if has_pandas:
    raw, ev, tail, r = run(ex, "python3 -c 'import pandas; print(pandas.DataFrame({\"a\": [1, 2]})"
                           ".a.sum())'")
    check("memory 512Mi: python3 imports pandas and works (RLIMIT_AS leaves room for it)",
          texts(ev, "stdout") == ["3"], ev)
for q, want in [("2Gi", 2 * 2**30), ("1G", 10**9), ("500M", 500 * 10**6),
                ("1048576", 1048576), ("1.5Gi", 3 * 2**29), ("plenty", None)]:
    a = create(srv, resourceLimits={"cpu": "2", "memory": q, "gpu": "1"})
    line = create_log(srv, a.json["id"]) if a.status == 202 else None
    got = (line or {}).get("enforced", {})
    check(f"memory {q!r} -> RLIMIT_AS {want} (the create's log line; cpu recorded, other keys "
          "accepted)", a.status == 202 and "rlimit_as" in got and got["rlimit_as"] == want and
          got.get("cpu") == "2" and (want is not None or any(
              "not a memory quantity" in n for n in got.get("notes", []))), (a, line))
    req(srv, "DELETE", f"/v1/sandboxes/{a.json['id']}")

# networkPolicy -> the network (deny by default: none; no policy or allow: the host's)
NET = (f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {srv.port}), "
       "timeout=5)' && echo CONNECTED")
raw, ev, tail, r = run(exd, NET)
check("network, defaultAction deny: the fake's own port on the host's loopback is not reached",
      "CONNECTED" not in texts(ev, "stdout") and ev[-1]["type"] == "error" and any(
          "Error" in (t or "") for t in texts(ev, "stderr")), ev)
raw, ev, tail, r = run(exd, f"echo > /dev/tcp/127.0.0.1/{srv.port} && echo CONNECTED; "
                       "ls /sys/class/net 2>/dev/null; cat /proc/net/dev | tail -n +3 | cut -d: -f1")
out = [x.strip() for x in texts(ev, "stdout")]
check("network, defaultAction deny: only lo, in its own namespace",
      "CONNECTED" not in out and out and all(x == "lo" for x in out if x), out)
raw, ev, tail, r = run(exn, NET)
check("network, a policy without defaultAction (the sidecar's default: deny): not reached",
      "CONNECTED" not in texts(ev, "stdout"), ev)
raw, ev, tail, r = run(ex, NET)
check("network, no networkPolicy: the host's network, the fake's port connects",
      texts(ev, "stdout") == ["CONNECTED"], ev)
raw, ev, tail, r = run(exo, NET)
check("network, defaultAction allow: connects", texts(ev, "stdout") == ["CONNECTED"], ev)

# the create's log line: what the client sent, and what the fake enforces of it
line = create_log(srv, dn_id)
check("log: the create line carries resourceLimits, networkPolicy, metadata, timeout, entrypoint "
      "and the env's keys (no values)", line is not None and line.get("resourceLimits") == {
          "cpu": "250m", "memory": "256Mi"} and line.get("networkPolicy") == DENY and
      line.get("metadata") == CREATE["metadata"] and line.get("timeout") == 3600 and
      line.get("entrypoint") == CREATE["entrypoint"] and line.get("env_keys") == ["GREETING"]
      and "env" not in line and '"hi"' not in json.dumps(line), line)
enf = (line or {}).get("enforced") or {}
check("log: the create line says what is enforced (RLIMIT_AS, cpu, pids, no network) and that "
      "the egress allow rules are not honoured", enf.get("rlimit_as") == 256 * 2**20 and
      enf.get("cpu") == "250m" and enf.get("pids_max") == 512 and enf.get("network") == "none"
      and enf.get("pids") in ("cgroup-v1", "cgroup-v2") and any(
          "pypi.org" in n and "not honoured" in n for n in enf.get("notes", [])), line)
line = create_log(srv, op.json["id"])
check("log: an allow policy -> network host, its deny rules noted as not honoured",
      line and line["enforced"]["network"] == "host" and any(
          "bad.example.com" in n for n in line["enforced"].get("notes", [])), line)
line = log_line(srv, lambda x: x["path"] == "/v1/sandboxes" and x["method"] == "POST"
                and x.get("sandbox") == sid)
check("log: a create without networkPolicy has no networkPolicy key; network host",
      line and "networkPolicy" not in line and line["enforced"]["network"] == "host", line)

# a bad networkPolicy -> pydantic's 422
n_before = req(srv, "GET", "/v1/sandboxes").json["pagination"]["totalItems"]
for name, pol, loc in [
        ("not an object", "deny", ["body", "networkPolicy"]),
        ("defaultAction 'block'", {"defaultAction": "block"}, ["body", "networkPolicy",
                                                               "defaultAction"]),
        ("defaultAction not a string", {"defaultAction": False},
         ["body", "networkPolicy", "defaultAction"]),
        ("egress not a list", {"defaultAction": "deny", "egress": {"action": "allow"}},
         ["body", "networkPolicy", "egress"]),
        ("a rule without target", {"egress": [{"action": "allow"}]},
         ["body", "networkPolicy", "egress", 0, "target"]),
        ("a rule with action 'permit'", {"egress": [{"action": "allow", "target": "a.com"},
                                                    {"action": "permit", "target": "b.com"}]},
         ["body", "networkPolicy", "egress", 1, "action"]),
        ("an empty target", {"egress": [{"action": "deny", "target": ""}]},
         ["body", "networkPolicy", "egress", 0, "target"]),
        ("a rule that is a string", {"egress": ["pypi.org"]}, ["body", "networkPolicy", "egress", 0]),
        ("an unknown key (the spec: additionalProperties false)",
         {"defaultAction": "deny", "ingress": []}, ["body", "networkPolicy", "ingress"])]:
    a = create(srv, networkPolicy=pol)
    check(f"create 422: networkPolicy {name} -> detail at {loc}", a.status == 422 and any(
        d.get("loc") == loc and d.get("type") and d.get("msg") for d in a.json["detail"]), a)
check("create: nothing was created by the bad networkPolicies",
      req(srv, "GET", "/v1/sandboxes").json["pagination"]["totalItems"] == n_before)
line = log_line(srv, lambda x: x["path"] == "/v1/sandboxes" and x["status"] == 422 and
                x.get("networkPolicy") == {"defaultAction": "block"})
check("log: a refused create's line carries its networkPolicy too", line is not None)
for x in (dn, op, nd):
    req(srv, "DELETE", f"/v1/sandboxes/{x.json['id']}")

# --pids-limit: a fork bomb ends (fork fails with EAGAIN), the host and the other sandboxes
# unhurt
ps = Server("pids", "--pids-limit", "64", "--start-ms", "50", "--grace-ms", "50")
BOMB = r"""python3 - <<'EOF'
import errno, os, time
kids, eagain, other = [], 0, []
t0 = time.time()
for i in range(@N@):
    try:
        pid = os.fork()
    except OSError as e:
        if e.errno == errno.EAGAIN:
            eagain += 1
        else:
            other.append(e.errno)
        continue
    if pid == 0:
        time.sleep(@HOLD@)
        os._exit(0)
    kids.append(pid)
print("forked", len(kids), "eagain", eagain, "other", len(other))
for k in kids:
    os.waitpid(k, 0)
EOF"""
pa, pb = create(ps, metadata={}).json["id"], create(ps, metadata={}).json["id"]
wait_running(ps, pa)
wait_running(ps, pb)
epa, epb = Execd(ps, pa), Execd(ps, pb)
line = create_log(ps, pa)
check("--pids-limit 64: the create's log line says pids_max 64 by a cgroup",
      line and line["enforced"]["pids_max"] == 64 and line["enforced"]["pids"] in (
          "cgroup-v1", "cgroup-v2"), (line, open(ps.err.name).read()))
dirs = cgroup_dirs(ps.proc.pid)
sub = [os.path.join(d, pa) for d in dirs if os.path.isdir(os.path.join(d, pa))]
check("--pids-limit 64: a pids cgroup per sandbox, pids.max 64",
      len(sub) == 1 and open(os.path.join(sub[0], "pids.max")).read().strip() == "64", (dirs, sub))
res = {}
th = threading.Thread(target=lambda: res.update(r=run(epa, BOMB.replace("@N@", "300").replace(
    "@HOLD@", "3"), timeout=30000)))
t0 = time.time()
th.start()
time.sleep(1.2)
raw, ev, tail, r = run(epb, BOMB.replace("@N@", "40").replace("@HOLD@", "0.3"))
check("while a bomb fills sandbox A's pids, sandbox B forks 40 children without a failure",
      texts(ev, "stdout") == ["forked 40 eagain 0 other 0"], ev)
th.join(40)
ev = res.get("r", (None, []))[1]
out = texts(ev, "stdout")
m = re.match(r"^forked (\d+) eagain (\d+) other (\d+)$", out[0]) if out else None
check("fork bomb (300 forks held 3 s) under --pids-limit 64: fewer than 64 forks succeed, the "
      "rest fail with EAGAIN, and the command ends", m and int(m.group(1)) < 64 and
      int(m.group(2)) >= 300 - 64 and int(m.group(1)) + int(m.group(2)) == 300 and
      m.group(3) == "0" and ev[-1]["type"] == "execution_complete" and time.time() - t0 < 20,
      (out, ev[-2:]))
raw, ev, tail, r = run(epa, "echo alive")
check("after the bomb the sandbox runs commands again", texts(ev, "stdout") == ["alive"], ev)
b = req(ps, "DELETE", f"/v1/sandboxes/{pa}")
check("delete: the sandbox's pids cgroup is removed", b.status == 204 and sub and
      not os.path.exists(sub[0]), sub)
ps.stop()
check("the fake's parent cgroup is gone after it stops", not any(
    os.path.exists(d) for d in dirs) and dirs, dirs)

# ---- renew, TTL, delete
future = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 7200))
a = req(srv, "POST", f"/v1/sandboxes/{sid}/renew-expiration", {"expiresAt": future})
check("renew: 200 {expiresAt}", a.status == 200 and list(a.json) == ["expiresAt"] and
      a.json["expiresAt"].startswith(future[:19]), a)
check("renew: GET shows the new expiresAt",
      req(srv, "GET", f"/v1/sandboxes/{sid}").json["expiresAt"].startswith(future[:19]))
past = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 10))
a = req(srv, "POST", f"/v1/sandboxes/{sid}/renew-expiration", {"expiresAt": past})
check("renew: a time in the past -> 400", a.status == 400 and a.json.get("code"), a)
a = req(srv, "POST", f"/v1/sandboxes/{sid}/renew-expiration", {})
check("renew: no expiresAt -> 422", a.status == 422, a)
# sid2: timeout 60 with --ttl-scale 0.05 -> ends 3 s after its creation
wait_running(srv, sid2)
end = time.time() + 6
while time.time() < end and req(srv, "GET", f"/v1/sandboxes/{sid2}").status == 200:
    time.sleep(0.1)
a = req(srv, "GET", f"/v1/sandboxes/{sid2}")
check("TTL: after its (scaled) expiry the sandbox is gone: 404", a.status == 404 and
      a.json.get("code"), a)
check("TTL: its execd stops answering (404)", ex2.call("GET", "/ping").status == 404)
check("TTL: gone from the list", sid2 not in L(""))
a = req(srv, "DELETE", f"/v1/sandboxes/{c3}")
check("delete: 204, empty body", a.status == 204 and a.body == b"", a)
check("delete: then GET -> 404", req(srv, "GET", f"/v1/sandboxes/{c3}").status == 404)
check("delete: its execd -> 404", ex3.call("GET", "/ping").status == 404)
check("delete: again -> 404", req(srv, "DELETE", f"/v1/sandboxes/{c3}").status == 404)
check("delete: its host dir is removed", not any(c3 in d for d in os.listdir(
    os.path.join(srv.root, os.listdir(srv.root)[0]))))

# a command running when the sandbox is deleted is killed
res = {}
th = threading.Thread(target=lambda: res.update(r=run(ex, "sleep 30")))
th.start()
time.sleep(0.5)
req(srv, "DELETE", f"/v1/sandboxes/{sid}")
th.join(10)
ev = res.get("r", (None, []))[1]
check("delete: a running command is killed (error evalue -1)", ev and ev[-1]["type"] == "error"
      and ev[-1]["error"]["evalue"] == "-1", ev)

L2 = srv.lines()
check("log: one JSON line per request with method, path, status, api",
      len(L2) > 40 and all({"method", "path", "status", "api"} <= set(x) for x in L2) and
      any(x["api"] == "execd" and x.get("command_id") for x in L2), L2[-3:])
srv.stop()

# ---- --fail-create
fs = Server("fail", "--fail-create", "IMAGE_PULL_FAILED", "--start-ms", "50")
a = req(fs, "POST", "/v1/sandboxes", CREATE, key=None)
seen = wait_running(fs, a.json["id"])
g = req(fs, "GET", f"/v1/sandboxes/{a.json['id']}", key=None)
check("--fail-create: Pending -> Failed with that reason (no --key: no auth needed)",
      seen == ["Pending", "Failed"] and g.json["status"]["reason"] == "IMAGE_PULL_FAILED", (seen, g))
fs.stop()
print(f"{PASS} passed, {FAIL} failed")
sys.exit(1 if FAIL else 0)
PY
mkdir -p "$T/http"
inner "HTTP checks (http.client)" 140 "$PY" "$T/http_checks.py" "$FAKE" "$T/http"

# ------------------------------------------------------------------ the SDK
if [ "$FAILED" -gt 0 ]; then # a failure is a failure, not a skip
	finish || exit 1
fi
command -v node >/dev/null || skip "node is not installed (tests/fakes/opensandbox_sdk_check.mjs" \
	"drives the fake with @alibaba-group/opensandbox; the HTTP checks passed)"
command -v npm >/dev/null || skip "npm is not installed (needed to install" \
	"@alibaba-group/opensandbox; the HTTP checks passed)"
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
[ "$major" -ge 20 ] || skip "node $(node --version) is too old for @alibaba-group/opensandbox (needs 20+)"
if ! npm_sdk @alibaba-group/opensandbox "$SDK_VERSION"; then
	tail -n 5 "$T/npm-$SDK_VERSION.out"
	skip "could not install @alibaba-group/opensandbox@$SDK_VERSION with npm ($(grep -m 1 . "$T/npm-$SDK_VERSION.out" ||
		echo 'no output')); the HTTP checks passed"
fi
mkdir -p "$T/sdkrun"
inner "SDK $SDK_VERSION check" 12 node "$SDK_CHECK" --sdk "$NPM_SDK_DIR" --fake "$FAKE" --python "$PY" \
	--tmp "$T/sdkrun"
finish
