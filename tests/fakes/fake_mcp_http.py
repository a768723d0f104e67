#!/usr/bin/env python3
"""Fake MCP server over Streamable HTTP for assay's tests (stdlib only).

One endpoint (any path) speaking the 2025-11-25 transport as the TS SDK's
servers do, strict where they are: a POST needs `Accept` with both
application/json and text/event-stream (else 406) and `Content-Type:
application/json` (415); after initialize, `Mcp-Session-Id` (400 when
missing, 404 when unknown or ended) and `MCP-Protocol-Version` equal to the
negotiated one (400). Requests are answered as --answers says; notifications
and responses get 202. GET opens the session's standalone SSE stream (one at
a time, 409 for a second; priming event with an id and retry; `: keepalive`
every second) or, with Last-Event-ID, replays that stream's later events and
stays open. DELETE ends the session (200).

  fake_mcp_http.py --port 0 --port-file F [--log F] [--answers json|sse]
      [--no-session] [--no-get] [--no-delete] [--token T] [--retry-ms 500]
      [--version V] [--bad-session] [--cut] [--lose-answer] [--no-event-ids]
      [--get-ends-ms N] [--host 127.0.0.1]

--answers json: every request's answer is one application/json message;
sse (the default): an event stream (priming event, then the response).
--version V: initialize answers V whatever the client asked (the
conformance suite's sse-retry answers 2025-03-26). --bad-session: the
session id has a space in it (a client must refuse it). --token T: every
request needs `Authorization: Bearer T` (401). --cut: the `reconnect`
tool's stream is cut (no final chunk) instead of ended. --lose-answer: the
`reconnect` tool's answer is never sent, and a GET resuming its stream ends
50 ms after its priming event (a client must give up after its tries).
--no-event-ids: no `id:` anywhere (nothing to resume from). --get-ends-ms N:
the standalone GET stream ends (gracefully) N ms after it opens.

Tools (tools/list; tools/call by name):
  echo {message}  -> text: the message
  add {a, b}      -> text: "The sum of A and B is S"
  sleep {ms}      -> text "slept", after ms milliseconds
  chatty          -> on SSE: a notification, a ping request (id "srv-1"),
                     a comment, an empty event, a non-JSON event, then the
                     answer; as JSON: an array [notification, answer]
  reconnect       -> the SSE stream sends the priming event (id + retry),
                     ends after 50 ms without the answer (SEP-1699; like the
                     suite's sse-retry); the answer waits for GET with
                     Last-Event-ID: that id, then that stream stays open
  elicit          -> sends elicitation/create with id 0 on the GET stream,
                     waits for the client's answer (POST, id 0), answers
                     "elicited: <content as JSON>"
  fail500         -> HTTP 500 with a 300-byte text body
  expire          -> ends the session: this and every later request 404

--log F: one JSON line per request: t (ms since start, monotonic, when
answered), t_in (when it came), verb,
path, rpc (method or "response"), id, status, session, version, accept,
last_event_id, auth (whether Authorization was right), and for a GET with
Last-Event-ID after a `reconnect` stream ended, since_end_ms; plus
{"t", "event": "stream-end", "id"} when a reconnect stream ends. A GET
stream held open is logged when it opens (stream: open or replay) and
again when it ends (its client gone: seen at the next keepalive).
"""
import argparse
import json
import os
import queue
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
T0 = time.monotonic()
TOOLS = [
    {"name": "echo", "description": "Echo a message",
     "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}},
                     "required": ["message"]}},
    {"name": "add", "description": "Add two numbers",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "number"},
                                                      "b": {"type": "number"}},
                     "required": ["a", "b"]}},
    {"name": "sleep", "description": "Answer after ms milliseconds",
     "inputSchema": {"type": "object", "properties": {"ms": {"type": "number"}}}},
    {"name": "chatty", "description": "Notifications and odd events first",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "reconnect", "description": "Ends its stream before the answer",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "elicit", "description": "Asks the user through the GET stream",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "fail500", "description": "Answers HTTP 500",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "expire", "description": "Ends the session (404)",
     "inputSchema": {"type": "object", "properties": {}}},
]
ELICIT_SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string", "default": "John Doe"},
    "age": {"type": "integer", "default": 30}}}


def ms():
    return round((time.monotonic() - T0) * 1000, 1)


class Session:
    def __init__(self, sid, version):
        self.sid, self.version = sid, version
        self.lock = threading.Lock()
        self.events = []          # (event id, stream key, data) for replay
        self.next_event = 0
        self.get_queue = None     # the standalone GET stream's queue
        self.answers = {}         # id (as JSON) -> the client's response
        self.answered = threading.Condition(self.lock)
        self.stream_end = {}      # event id of a reconnect stream -> end time
        self.waiting = {}         # stream key -> queue of a GET replaying it

    def event(self, key, data):
        """Store an event of stream key; returns its id."""
        with self.lock:
            self.next_event += 1
            eid = f"ev-{self.next_event}"
            self.events.append((eid, key, data))
            q = self.waiting.get(key)
        if q:
            q.put((eid, data))
        return eid


class State:
    def __init__(self, opts):
        self.opts = opts
        self.lock = threading.Lock()
        self.sessions = {}
        self.stateless = Session(None, None)  # --no-session
        self.log = open(opts.log, "a", buffering=1) if opts.log else None

    def write_log(self, rec):
        if self.log:
            with self.lock:
                self.log.write(json.dumps(rec) + "\n")


def sse_event(eid, data, retry=None):
    out = ""
    if eid:
        out += f"id: {eid}\n"
    if retry is not None:
        out += f"retry: {retry}\n"
    return out + "".join(f"data: {line}\n" for line in data.split("\n")) + "\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-mcp-http/1"

    def setup(self):
        super().setup()
        # answers are written in pieces: no Nagle delay between them
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):
        pass

    @property
    def st(self):
        return self.server.state

    # ---- plumbing ------------------------------------------------------
    def rec(self, **kw):
        h = self.headers
        r = {"t": ms(), "t_in": getattr(self, "_t_in", None), "verb": self.command,
             "path": self.path,
             "session": h.get("Mcp-Session-Id"), "version": h.get("MCP-Protocol-Version"),
             "accept": h.get("Accept"), "last_event_id": h.get("Last-Event-ID"),
             "auth": self.auth_ok()}
        r.update(kw)
        self.st.write_log(r)

    def auth_ok(self):
        tok = self.st.opts.token
        return not tok or self.headers.get("Authorization") == f"Bearer {tok}"

    def plain(self, status, body, ctype="application/json", extra=None):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def error_json(self, status, msg, extra=None):
        self.plain(status, json.dumps({"jsonrpc": "2.0", "id": None,
                                       "error": {"code": -32000, "message": msg}}),
                   extra=extra)
        return status

    def sse_start(self, extra=None):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()

    def ev(self, eid, data, retry=None):
        return sse_event(None if self.st.opts.no_event_ids else eid, data, retry)

    def chunk(self, text):
        data = text.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def sse_end(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def session(self):
        """The request's session, or an error status already sent."""
        if self.st.opts.no_session:
            return self.st.stateless
        sid = self.headers.get("Mcp-Session-Id")
        if not sid:
            return self.error_json(400, "Bad Request: No valid session ID provided")
        with self.st.lock:
            s = self.st.sessions.get(sid)
        if not s:
            return self.error_json(404, "Session not found")
        v = self.headers.get("MCP-Protocol-Version")
        if v != s.version:
            return self.error_json(400, f"Bad Request: Unsupported protocol version: {v}")
        return s

    # ---- verbs ---------------------------------------------------------
    def do_POST(self):
        self._t_in = ms()
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n)
        accept = self.headers.get("Accept") or ""
        try:
            msg = json.loads(body)
        except ValueError:
            msg = None
        rpc = msg.get("method", "response") if isinstance(msg, dict) else None
        mid = msg.get("id") if isinstance(msg, dict) else None
        status = self.post(msg, accept)
        self.rec(rpc=rpc, id=mid, status=status)

    def post(self, msg, accept):
        if not self.auth_ok():
            return self.error_json(401, "Unauthorized",
                                   {"WWW-Authenticate": 'Bearer error="invalid_token"'})
        if "application/json" not in accept or "text/event-stream" not in accept:
            return self.error_json(406, "Not Acceptable: Client must accept both "
                                        "application/json and text/event-stream")
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            return self.error_json(415, "Unsupported Media Type")
        if not isinstance(msg, dict):
            return self.error_json(400, "Parse error")
        if msg.get("method") == "initialize":
            return self.initialize(msg)
        s = self.session()
        if isinstance(s, int):
            return s
        if "method" not in msg:  # the client's answer to our request
            with s.answered:
                s.answers[json.dumps(msg.get("id"))] = msg
                s.answered.notify_all()
            self.plain(202, "")
            return 202
        if "id" not in msg:
            self.plain(202, "")
            return 202
        return self.rpc_request(s, msg)

    def initialize(self, msg):
        asked = (msg.get("params") or {}).get("protocolVersion")
        version = self.st.opts.version or (asked if asked in VERSIONS else VERSIONS[0])
        extra = {}
        if not self.st.opts.no_session:
            sid = ("bad session " if self.st.opts.bad_session else "fake-") + uuid.uuid4().hex
            with self.st.lock:
                self.st.sessions[sid] = Session(sid, version)
            extra["Mcp-Session-Id"] = sid
        else:
            self.st.stateless.version = version
        result = {"protocolVersion": version, "capabilities": {"tools": {"listChanged": True}},
                  "serverInfo": {"name": "fake-mcp-http", "version": "1.0.0"}}
        return self.answer(None, msg, result, extra)

    def answer(self, s, msg, result, extra=None, before=()):
        """The response to msg (with messages before it) as --answers says."""
        resp = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
        if self.st.opts.answers == "json":
            out = [*before, resp] if before else resp
            self.plain(200, json.dumps(out), extra=extra)
            return 200
        self.sse_start(extra)
        key = f"post-{uuid.uuid4().hex}"
        self.chunk(self.ev(s.event(key, "") if s else None, "", self.st.opts.retry_ms))
        for b in before:
            self.chunk(b if isinstance(b, str) else sse_event(None, json.dumps(b)))
        self.chunk("event: message\n" + self.ev(s.event(key, json.dumps(resp)) if s else None,
                                                json.dumps(resp)))
        self.sse_end()
        return 200

    def rpc_request(self, s, msg):
        method, params = msg.get("method"), msg.get("params") or {}
        if method == "tools/list":
            return self.answer(s, msg, {"tools": TOOLS})
        if method == "ping":
            return self.answer(s, msg, {})
        if method != "tools/call":
            self.plain(200, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {
                "code": -32601, "message": f"Method not found: {method}"}}))
            return 200
        name, args = params.get("name"), params.get("arguments") or {}
        text = lambda t: {"content": [{"type": "text", "text": t}]}  # noqa: E731
        if name == "echo":
            return self.answer(s, msg, text(str(args.get("message"))))
        if name == "add":
            a, b = args.get("a"), args.get("b")
            return self.answer(s, msg, text(f"The sum of {a} and {b} is {a + b}"))
        if name == "sleep":
            time.sleep(float(args.get("ms", 0)) / 1000)
            return self.answer(s, msg, text("slept"))
        if name == "chatty":
            note = {"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "working"}}
            ping = {"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}
            before = [note] if self.st.opts.answers == "json" else [
                note, ping, ": a comment\n\n", "data: \n\n", "data: not json {\n\n"]
            return self.answer(s, msg, text("chatty done"), before=before)
        if name == "reconnect":
            return self.reconnect(s, msg, text("Reconnection test completed successfully"))
        if name == "elicit":
            return self.elicit(s, msg)
        if name == "fail500":
            self.plain(500, "internal error: the tool crashed. " + "x" * 266, "text/plain")
            return 500
        if name == "expire":
            with self.st.lock:
                self.st.sessions.pop(s.sid, None)
            return self.error_json(404, "Session not found")
        self.plain(200, json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                    "result": {**text(f"Unknown tool: {name}"), "isError": True}}))
        return 200

    def reconnect(self, s, msg, result):
        self.sse_start()
        key = f"post-{uuid.uuid4().hex}"
        prime = s.event(key, "")
        self.chunk(self.ev(prime, "", self.st.opts.retry_ms))
        time.sleep(0.05)
        with s.lock:
            s.stream_end[prime] = time.monotonic()
        self.st.write_log({"t": ms(), "event": "stream-end", "id": prime})
        if self.st.opts.cut:
            self.close_connection = True
            self.connection.shutdown(2)
        else:
            self.sse_end()
        if not self.st.opts.lose_answer:
            s.event(key, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
        return 200

    def elicit(self, s, msg):
        q = None
        for _ in range(50):  # the GET stream may still be opening
            q = s.get_queue
            if q:
                break
            time.sleep(0.1)
        if not q:
            return self.answer(s, msg, {"content": [{"type": "text", "text": "no GET stream"}],
                                        "isError": True})
        s.event("get", json.dumps({"jsonrpc": "2.0", "id": 0, "method": "elicitation/create",
                                   "params": {"message": "Who are you?",
                                              "requestedSchema": ELICIT_SCHEMA}}))
        with s.answered:
            s.answered.wait_for(lambda: "0" in s.answers, timeout=30)
            got = s.answers.pop("0", None)
        content = (got or {}).get("result", {}).get("content")
        return self.answer(s, msg, {"content": [
            {"type": "text", "text": "elicited: " + json.dumps(content, sort_keys=True)}]})

    def do_GET(self):
        self._t_in = ms()
        self._t_get = time.monotonic()
        status = self.get()
        self.rec(status=status, since_end_ms=self.since_end())

    def since_end(self):
        """ms from the end of the reconnect stream Last-Event-ID names."""
        s = getattr(self, "_session", None)
        lid = self.headers.get("Last-Event-ID")
        if s and lid in s.stream_end:
            return round((self._t_get - s.stream_end[lid]) * 1000, 1)
        return None

    def get(self):
        if not self.auth_ok():
            return self.error_json(401, "Unauthorized")
        if self.st.opts.no_get:
            return self.error_json(405, "Method Not Allowed")
        if "text/event-stream" not in (self.headers.get("Accept") or ""):
            return self.error_json(406, "Not Acceptable")
        s = self.session()
        if isinstance(s, int):
            return s
        self._session = s
        lid = self.headers.get("Last-Event-ID")
        key, later, q = "get", [], queue.Queue()
        with s.lock:
            if lid:
                i = next((i for i, (e, _, _) in enumerate(s.events) if e == lid), None)
                if i is None:
                    return self.error_json(400, f"Unknown Last-Event-ID {lid}")
                key = s.events[i][1]
                later = [(e, d) for e, k, d in s.events[i + 1:] if k == key]
            if key == "get" and s.get_queue:
                return self.error_json(409, "Conflict: Only one SSE stream is allowed per session")
        # logged now: the stream is held open until the client leaves
        self.rec(status=200, stream="replay" if lid else "open", since_end_ms=self.since_end())
        self.sse_start()
        ends = self.st.opts.get_ends_ms if key == "get" else (
            50 if self.st.opts.lose_answer else None)
        try:
            self.chunk(self.ev(s.event(key, ""), "", self.st.opts.retry_ms))
            for e, d in later:
                self.chunk("event: message\n" + self.ev(e, d))
            with s.lock:
                s.waiting[key] = q  # what is stored on key from now on
                if key == "get":
                    s.get_queue = q
            self.pump(q, ends)
        finally:
            with s.lock:
                if s.waiting.get(key) is q:
                    del s.waiting[key]
                if s.get_queue is q:
                    s.get_queue = None
        return 200

    def pump(self, q, ends_ms):
        """Write the events q brings, a keepalive each second, until the
        client leaves, the server stops or ends_ms have passed (then the
        stream ends gracefully)."""
        end = time.monotonic() + ends_ms / 1000 if ends_ms else None
        try:
            while not self.server.stopping:
                wait = 1 if end is None else min(1, end - time.monotonic())
                if wait <= 0:
                    self.sse_end()
                    return
                try:
                    eid, data = q.get(timeout=wait)
                except queue.Empty:
                    if end is None:
                        self.chunk(": keepalive\n\n")
                    continue
                self.chunk("event: message\n" + self.ev(eid, data))
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def do_DELETE(self):
        self._t_in = ms()
        status = self.delete()
        self.rec(status=status)

    def delete(self):
        if self.st.opts.no_delete:
            return self.error_json(405, "Method Not Allowed")
        sid = self.headers.get("Mcp-Session-Id")
        with self.st.lock:
            s = self.st.sessions.pop(sid, None) if sid else None
        if not s:
            return self.error_json(404, "Session not found")
        self.plain(200, "")
        return 200


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        """A client that leaves mid-answer is no error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    ap.add_argument("--answers", choices=("json", "sse"), default="sse")
    ap.add_argument("--no-session", action="store_true")
    ap.add_argument("--no-get", action="store_true")
    ap.add_argument("--no-delete", action="store_true")
    ap.add_argument("--token")
    ap.add_argument("--retry-ms", type=int, default=500)
    ap.add_argument("--version")
    ap.add_argument("--bad-session", action="store_true")
    ap.add_argument("--cut", action="store_true")
    ap.add_argument("--lose-answer", action="store_true")
    ap.add_argument("--no-event-ids", action="store_true")
    ap.add_argument("--get-ends-ms", type=int)
    opts = ap.parse_args()

    srv = Server((opts.host, opts.port), Handler)
    srv.state = State(opts)
    srv.stopping = False
    if opts.port_file:
        tmp = f"{opts.port_file}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(str(srv.server_address[1]))
        os.replace(tmp, opts.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.stopping = True
    return 0


if __name__ == "__main__":
    sys.exit(main())
