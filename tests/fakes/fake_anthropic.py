#!/usr/bin/env python3
"""Fake Anthropic Messages API server for assay's tests (stdlib only).

Validates each POST {prefix}/v1/messages the way the real API does (headers,
the body's schema, the conversation's rules, tool_use/tool_result pairing,
thinking signatures, cache_control breakpoints), answers from a
scripted-model file as the real SSE stream (or one JSON message when the
request does not stream), simulates prompt caching in the usage it reports,
and injects faults on chosen request numbers. See tests/fakes/README.md,
section "fake_anthropic.py", for the command line and the log format.
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import random
import re
import signal
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import fake_images

# anthropic-version values the API knows (2026-10-21: what @anthropic-ai/sdk 1.x sends)
API_VERSIONS = ("2023-01-01", "2023-06-01", "2026-10-21")
# Body parameters of POST /v1/messages (@anthropic-ai/sdk MessageCreateParamsBase, plus
# temperature/top_k/top_p, which the 2023-06-01 API takes); anything else is an extra input.
KNOWN_PARAMS = frozenset((
    "model", "messages", "max_tokens", "cache_control", "container", "diagnostics",
    "inference_geo", "metadata", "output_config", "service_tier", "speed", "stop_sequences",
    "stream", "system", "temperature", "thinking", "tool_choice", "tools", "top_k", "top_p"))
COUNT_PARAMS = frozenset((  # POST /v1/messages/count_tokens (MessageCountTokensParams)
    "model", "messages", "cache_control", "output_config", "speed", "system", "thinking",
    "tool_choice", "tools"))
# Content block types of MessageParam.content (ContentBlockParam), and their own fields.
BLOCK_FIELDS = {
    "text": {"type", "text", "cache_control", "citations"},
    "image": {"type", "source", "cache_control", "transformations"},
    "document": {"type", "source", "cache_control", "citations", "context", "title"},
    "search_result": {"type", "source", "title", "content", "cache_control", "citations"},
    "thinking": {"type", "thinking", "signature"},
    "redacted_thinking": {"type", "data"},
    "tool_use": {"type", "id", "name", "input", "cache_control", "caller", "toolset_name"},
    "tool_result": {"type", "tool_use_id", "content", "is_error", "cache_control", "toolset_name"},
}
SERVER_BLOCKS = ("server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
                 "code_execution_tool_result", "bash_code_execution_tool_result",
                 "text_editor_code_execution_tool_result", "tool_search_tool_result",
                 "container_upload")
BLOCK_TAGS = tuple(BLOCK_FIELDS) + SERVER_BLOCKS
# --unknown-content: a block type from the future this fake makes up, streamed and then
# accepted back (only from this fake's own answers, unchanged)
FUTURE_BLOCK = "future_widget"
EXTRA_TAGS = []  # FUTURE_BLOCK when --unknown-content is on
ASSISTANT_ONLY = ("thinking", "redacted_thinking", "tool_use", "server_tool_use")
TOOL_RESULT_TAGS = ("document", "image", "search_result", "text", "tool_reference")
TOOL_FIELDS = {"type", "name", "description", "input_schema", "cache_control", "strict",
               "defer_loading", "allowed_callers", "eager_input_streaming", "input_examples"}
SERVER_TOOLS = (  # ToolUnion's server tools: any fields, a name
    "bash_20250124", "code_execution_20250522", "code_execution_20250825",
    "code_execution_20260120", "code_execution_20260521", "browser_toolset_20260801",
    "memory_20250818", "computer_toolset_20260801", "text_editor_20250124",
    "text_editor_20250429", "text_editor_20250728", "web_search_20250305", "web_fetch_20250910",
    "web_search_20260209", "web_fetch_20260209", "web_fetch_20260309", "web_search_20260318",
    "web_fetch_20260318", "tool_search_tool_bm25_20251119", "tool_search_tool_regex_20251119",
    "tool_search_tool_bm25", "tool_search_tool_regex")
THINKING_TYPES = ("adaptive", "between_tools", "disabled", "enabled")
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
TOOL_ID_RE = re.compile(r"^[a-zA-Z0-9_-]+$")
MAX_BREAKPOINTS = 4
TURN_BY = ("assistants", "call-id")  # how a request's script turn is picked (--turn-by)
EXHAUSTED = "(script exhausted)"
STATUS_FAULTS = ("429", "529", "500", "401", "403", "404", "413", "context")
STREAM_FAULTS = ("cut", "reset", "error-event", "stall")
DEFAULT_CONTEXT = 200000  # the maximum a `context` fault reports
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
# Thinking signatures and redacted-thinking data are MACs under a fixed key, not the
# seed: a history recorded against one server run must verify against the next one.
SIG_KEY = b"fake_anthropic/thinking/v1"
THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


class ApiError(Exception):
    """An HTTP error answer: status, Anthropic error type and message."""

    def __init__(self, status, message, etype="invalid_request_error", headers=()):
        super().__init__(message)
        self.status, self.message, self.etype, self.headers = status, message, etype, list(headers)


# ---------------------------------------------------------------- script

def load_script(path):
    """Read assay's scripted-model JSON: (list of normalised turns, summary answer or None)."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    turns = data.get("turns") if isinstance(data, dict) else None
    if not isinstance(turns, list):
        raise ValueError("script must be an object with a 'turns' array")
    return load_turns(turns), load_summary(data.get("summary"))


def load_summary(summary):
    """The script's top-level "summary": {"when": SUBSTRING, "text": TEXT}, or None."""
    if summary is None:
        return None
    if not isinstance(summary, dict) or set(summary) != {"when", "text"}:
        raise ValueError("summary must be an object with exactly 'when' and 'text'")
    for key in ("when", "text"):
        if not isinstance(summary[key], str) or not summary[key]:
            raise ValueError(f"summary.{key} must be a non-empty string")
    return {"when": summary["when"], "text": summary["text"]}


def call_turns(turns):
    """For --turn-by call-id: {tool_use id: index of the script turn that makes it}. Every
    call must fix its "id", valid for the Messages API, and no id may be used twice."""
    out = {}
    for i, t in enumerate(turns):
        for j, c in enumerate(t["tool_calls"]):
            cid, p = c["id"], f"turns[{i}].tool_calls[{j}].id"
            if not isinstance(cid, str) or not TOOL_ID_RE.match(cid):
                raise ValueError(f"--turn-by call-id: {p} must be a string matching "
                                 f"'^[a-zA-Z0-9_-]+$' (the API's tool_use.id), got {cid!r}")
            if cid in out:
                raise ValueError(f"--turn-by call-id: {p} {cid!r} is already used in "
                                 f"turns[{out[cid]}]")
            out[cid] = i
    return out


def load_turns(turns):
    """The script's "turns", normalised."""
    out = []
    for i, t in enumerate(turns):
        if not isinstance(t, dict):
            raise ValueError(f"turns[{i}] must be an object")
        text = t.get("text") or ""
        thinking = t.get("thinking", t.get("reasoning")) or ""
        redacted = t.get("redacted_thinking") or ""
        for key, v in (("text", text), ("thinking", thinking), ("redacted_thinking", redacted)):
            if not isinstance(v, str):
                raise ValueError(f"turns[{i}].{key} must be a string")
        calls = []
        for j, c in enumerate(t.get("tool_calls") or []):
            name = c.get("name") if isinstance(c, dict) else None
            if not isinstance(name, str) or not name:
                raise ValueError(f"turns[{i}].tool_calls[{j}].name must be a non-empty string")
            args = c.get("arguments", {})
            if isinstance(args, dict):
                args = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
            elif not isinstance(args, str):  # a string is sent verbatim (may be broken on purpose)
                raise ValueError(f"turns[{i}].tool_calls[{j}].arguments must be an object or a string")
            calls.append({"name": name, "arguments": args, "id": c.get("id")})
        usage = t.get("usage") or {}
        if not isinstance(usage, dict) or not all(isinstance(v, int) for v in usage.values()):
            raise ValueError(f"turns[{i}].usage must be an object of integers")
        stop = t.get("stop_reason")
        if stop is not None and not isinstance(stop, str):
            raise ValueError(f"turns[{i}].stop_reason must be a string")
        out.append({"text": text, "thinking": thinking, "redacted_thinking": redacted,
                    "tool_calls": calls, "usage": usage, "stop_reason": stop})
    return out


def exhausted_turn():
    return {"text": EXHAUSTED, "thinking": "", "redacted_thinking": "", "tool_calls": [],
            "usage": {}, "stop_reason": None}


def summary_turn(summary):
    return dict(exhausted_turn(), text=summary["text"])


# ---------------------------------------------------------------- signatures

def _mac(label, payload):
    return hmac.new(SIG_KEY, label + b"\0" + payload, hashlib.sha256).digest()


def sign_thinking(text):
    """The signature of a thinking block: base64 of a MAC of its text (and padding)."""
    mac = _mac(b"thinking", text.encode("utf-8"))
    return base64.b64encode(b"\x12\x40" + mac + hashlib.sha512(mac).digest()[:64]).decode()


def redact(text):
    """redacted_thinking data: an opaque blob the server can check it made."""
    payload = bytes(b ^ k for b, k in zip(text.encode("utf-8"),
                                          hashlib.shake_256(SIG_KEY).digest(len(text.encode()))))
    return base64.b64encode(b"\x1a\x20" + _mac(b"redacted", payload) + payload).decode()


def redacted_ok(data):
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:
        return False
    return len(raw) >= 34 and raw[:2] == b"\x1a\x20" and hmac.compare_digest(
        raw[2:34], _mac(b"redacted", raw[34:]))


# ---------------------------------------------------------------- validation helpers

def bad(message):
    raise ApiError(400, message)


def _dotted(path, key):
    return f"{path}.{key}" if path else key


def required(obj, key, path):
    if key not in obj:
        bad(f"{_dotted(path, key)}: Field required")
    return obj[key]


def no_extras(obj, allowed, path):
    for k in obj:
        if k not in allowed:
            bad(f"{_dotted(path, k)}: Extra inputs are not permitted")


def want(path, ok, what):
    if not ok:
        bad(f"{path}: Input should be {what}")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def tag(obj, path, tags):
    """The discriminator 'type' of a tagged union member, checked against its tags."""
    if "type" not in obj:
        bad(f"{path}: Unable to extract tag using discriminator 'type'")
    t = obj["type"]
    if t not in tags:
        expected = ", ".join(f"'{x}'" for x in sorted(tags))
        bad(f"{path}: Input tag '{t}' found using 'type' does not match any of the expected "
            f"tags: {expected}")
    return t


def check_cache_control(path, cc, found):
    """A cache_control marker (null is no marker); appends (path, ttl) to found."""
    if cc is None:
        return
    want(path, isinstance(cc, dict), "a valid dictionary")
    tag(cc, path, ("ephemeral",))
    no_extras(cc, {"type", "ttl"}, path + ".ephemeral")
    if "ttl" in cc and cc["ttl"] not in ("5m", "1h"):
        bad(f"{path}.ephemeral.ttl: Input should be '5m' or '1h'")
    found.append((path, cc.get("ttl") or "5m"))


def check_text_field(path, block):
    text = required(block, "text", path)
    want(_dotted(path, "text"), isinstance(text, str), "a valid string")
    return text


# ---------------------------------------------------------------- validation: the schema

def check_image(path, b):
    """An image block at PATH (`messages.1.content.0.image`, or inside a tool_result
    `...tool_result.content.1.image`): its source, and the picture itself as the API checks
    it (base64, media type against the bytes, dimensions, size; see fake_images.py)."""
    src = required(b, "source", path)
    want(path + ".source", isinstance(src, dict), "a valid dictionary")
    tag(src, path + ".source", ("base64", "url", "file"))
    try:
        fake_images.anthropic_source(path, src)
    except fake_images.Refused as e:
        bad(e.message)


def check_block(bp, b, role, found):
    """One content block of messages[i].content (schema only); returns its type."""
    want(bp, isinstance(b, dict), "a valid dictionary")
    t = tag(b, bp, BLOCK_TAGS + tuple(EXTRA_TAGS))
    if t in SERVER_BLOCKS or t in EXTRA_TAGS:
        return t
    tp = f"{bp}.{t}"
    if t == "text":
        check_text_field(tp, b)
    elif t == "image":
        check_image(tp, b)
    elif t == "document":
        src = required(b, "source", tp)
        want(tp + ".source", isinstance(src, dict), "a valid dictionary")
        tag(src, tp + ".source", ("base64", "url", "file", "text", "content"))
    elif t == "search_result":
        for key, typ, what in (("source", str, "a valid string"), ("title", str, "a valid string"),
                               ("content", list, "a valid list")):
            want(f"{tp}.{key}", isinstance(required(b, key, tp), typ), what)
    elif t == "thinking":
        for key in ("thinking", "signature"):
            want(f"{tp}.{key}", isinstance(required(b, key, tp), str), "a valid string")
    elif t == "redacted_thinking":
        want(tp + ".data", isinstance(required(b, "data", tp), str), "a valid string")
    elif t == "tool_use":
        tid = required(b, "id", tp)
        want(tp + ".id", isinstance(tid, str), "a valid string")
        if not TOOL_ID_RE.match(tid):
            bad(f"{tp}.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
        name = required(b, "name", tp)
        want(tp + ".name", isinstance(name, str), "a valid string")
        if not TOOL_NAME_RE.match(name):
            bad(f"{tp}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'")
        want(tp + ".input", isinstance(required(b, "input", tp), dict), "a valid dictionary")
    elif t == "tool_result":
        tid = required(b, "tool_use_id", tp)
        want(tp + ".tool_use_id", isinstance(tid, str), "a valid string")
        if not TOOL_ID_RE.match(tid):
            bad(f"{tp}.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'")
        content = b.get("content")
        if isinstance(content, list):
            for k, part in enumerate(content):
                pp = f"{tp}.content.{k}"
                want(pp, isinstance(part, dict), "a valid dictionary")
                pt = tag(part, pp, TOOL_RESULT_TAGS)
                if pt == "text":
                    if check_text_field(f"{pp}.text", part) == "":
                        bad("messages: text content blocks must be non-empty")
                    no_extras(part, BLOCK_FIELDS["text"], f"{pp}.text")
                    check_cache_control(f"{pp}.text.cache_control", part.get("cache_control"), found)
                elif pt == "image":
                    check_image(f"{pp}.image", part)
                    no_extras(part, BLOCK_FIELDS["image"], f"{pp}.image")
                    check_cache_control(f"{pp}.image.cache_control", part.get("cache_control"),
                                        found)
        elif content is not None:
            want(tp + ".content", isinstance(content, str), "a valid string")
        if "is_error" in b:
            want(tp + ".is_error", isinstance(b["is_error"], bool), "a valid boolean")
    no_extras(b, BLOCK_FIELDS[t], tp)
    if "cache_control" in b:
        check_cache_control(tp + ".cache_control", b["cache_control"], found)
    return t


def check_message_schema(i, m, found):
    """messages[i] (schema only): returns (role, blocks, content was a string)."""
    p = f"messages.{i}"
    want(p, isinstance(m, dict), "a valid dictionary")
    role = required(m, "role", p)
    if role not in ("user", "assistant"):
        bad(f"{p}.role: Input should be 'user' or 'assistant'")
    content = required(m, "content", p)
    no_extras(m, {"role", "content"}, p)
    if isinstance(content, str):
        return role, [{"type": "text", "text": content}], True
    want(p + ".content", isinstance(content, list), "a valid list")
    for j, b in enumerate(content):
        check_block(f"{p}.content.{j}", b, role, found)
    return role, content, False


def check_system(system, found):
    if system is None or isinstance(system, str):
        return
    want("system", isinstance(system, list), "a valid string")
    for i, b in enumerate(system):
        p = f"system.{i}"
        want(p, isinstance(b, dict), "a valid dictionary")
        if b.get("type") != "text":
            bad(f"{p}.type: Input should be 'text'")
        text = check_text_field(p, b)
        no_extras(b, BLOCK_FIELDS["text"], p)
        if text == "":
            bad("system: text content blocks must be non-empty")
        check_cache_control(p + ".cache_control", b.get("cache_control"), found)


def check_tools(tools, found):
    """Returns the offered tool names, or None when no tools are sent."""
    if tools is None:
        return None
    want("tools", isinstance(tools, list), "a valid list")
    names = []
    for i, t in enumerate(tools):
        p = f"tools.{i}"
        want(p, isinstance(t, dict), "a valid dictionary")
        kind = t.get("type")
        if kind is None or kind == "custom":
            q = p + ".custom"
            name = required(t, "name", q)
            want(q + ".name", isinstance(name, str), "a valid string")
            if not TOOL_NAME_RE.match(name):
                bad(f"{q}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'")
            if t.get("description") is not None:
                want(q + ".description", isinstance(t["description"], str), "a valid string")
            schema = required(t, "input_schema", q)
            want(q + ".input_schema", isinstance(schema, dict), "a valid dictionary")
            if schema.get("type") != "object":
                bad(f"{q}.input_schema.type: Input should be 'object'")
            if schema.get("properties") is not None:
                want(q + ".input_schema.properties", isinstance(schema["properties"], dict),
                     "a valid dictionary")
            if schema.get("required") is not None:
                want(q + ".input_schema.required", isinstance(schema["required"], list) and all(
                    isinstance(x, str) for x in schema["required"]), "a valid list of strings")
            no_extras(t, TOOL_FIELDS, q)
        else:
            q = f"{p}.{tag(t, p, ('custom',) + SERVER_TOOLS)}"
            name = required(t, "name", q)
        check_cache_control(q + ".cache_control", t.get("cache_control"), found)
        if name in names:
            bad("tools: Tool names must be unique.")
        names.append(name)
    return names


def check_thinking(th, max_tokens):
    """Returns the thinking type, or None when the request does not say."""
    if th is None:
        return None
    want("thinking", isinstance(th, dict), "a valid dictionary")
    t = tag(th, "thinking", THINKING_TYPES)
    allowed = {"enabled": {"type", "budget_tokens", "display"}, "adaptive": {"type", "display"}}
    no_extras(th, allowed.get(t, {"type"}), f"thinking.{t}")
    if th.get("display") is not None and th["display"] not in ("summarized", "omitted"):
        bad(f"thinking.{t}.display: Input should be 'summarized' or 'omitted'")
    if t == "enabled":
        budget = required(th, "budget_tokens", "thinking.enabled")
        want("thinking.enabled.budget_tokens", is_int(budget), "a valid integer")
        if budget < 1024:
            bad("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        if is_int(max_tokens) and max_tokens <= budget:
            bad("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                f"documentation at {THINKING_DOCS}#max-tokens-and-context-window-size")
    return t


def check_tool_choice(tc, names, thinking):
    if tc is None:
        return
    want("tool_choice", isinstance(tc, dict), "a valid dictionary")
    t = tag(tc, "tool_choice", ("any", "auto", "none", "tool"))
    allowed = {"none": {"type"}, "tool": {"type", "name", "disable_parallel_tool_use"}}
    no_extras(tc, allowed.get(t, {"type", "disable_parallel_tool_use"}), f"tool_choice.{t}")
    if "disable_parallel_tool_use" in tc:
        want(f"tool_choice.{t}.disable_parallel_tool_use",
             isinstance(tc["disable_parallel_tool_use"], bool), "a valid boolean")
    if t != "none" and not names:
        bad("tool_choice: tool_choice may only be specified while providing tools.")
    if t == "tool":
        name = required(tc, "name", "tool_choice.tool")
        want("tool_choice.tool.name", isinstance(name, str), "a valid string")
        if name not in names:
            bad(f"tool_choice.tool.name: tool '{name}' is not among the provided tools.")
    if t in ("any", "tool") and thinking in ("enabled", "adaptive"):
        bad("Thinking may not be enabled when tool_choice forces tool use.")


def check_params(req, count_only):
    """Top-level fields: required ones, unknown ones, simple types. Returns max_tokens."""
    want("body", isinstance(req, dict), "a valid dictionary")
    for key in ("model",) if count_only else ("max_tokens", "messages", "model"):
        required(req, key, "")
    required(req, "messages", "")
    known = COUNT_PARAMS if count_only else KNOWN_PARAMS
    for k in req:
        if k not in known:
            bad(f"{k}: Extra inputs are not permitted")
    want("model", isinstance(req["model"], str), "a valid string")
    if not req["model"]:
        bad("model: String should have at least 1 character")
    mt = req.get("max_tokens")
    if not count_only:
        want("max_tokens", is_int(mt), "a valid integer")
        if mt < 0:
            bad("max_tokens: Input should be greater than or equal to 0")
    if "stream" in req:
        want("stream", isinstance(req["stream"], bool), "a valid boolean")
    for key, lo, hi in (("temperature", 0, 1), ("top_p", 0, 1)):
        v = req.get(key)
        if v is not None:
            want(key, isinstance(v, (int, float)) and not isinstance(v, bool), "a valid number")
            if v < lo:
                bad(f"{key}: Input should be greater than or equal to {lo}")
            if v > hi:
                bad(f"{key}: Input should be less than or equal to {hi}")
    if req.get("top_k") is not None:
        want("top_k", is_int(req["top_k"]), "a valid integer")
    ss = req.get("stop_sequences")
    if ss is not None:
        want("stop_sequences", isinstance(ss, list) and all(isinstance(s, str) for s in ss),
             "a valid list of strings")
    if req.get("metadata") is not None:
        want("metadata", isinstance(req["metadata"], dict), "a valid dictionary")
        no_extras(req["metadata"], {"user_id"}, "metadata")
    return mt


# ---------------------------------------------------------------- validation: the conversation

def check_conversation(parsed, thinking):
    """The rules between messages: roles, empty content, tool_use/tool_result pairing,
    thinking signatures. parsed[i] = (role, blocks, was_string). Returns all tool_use ids."""
    all_ids = {}
    prev_ids = []  # tool_use ids of the previous (assistant) message
    for i, (role, blocks, was_string) in enumerate(parsed):
        p, last = f"messages.{i}", i == len(parsed) - 1
        if i == 0 and role != "user":
            bad('messages: first message must use the "user" role')
        if i > 0 and parsed[i - 1][0] == role:
            bad(f'messages: roles must alternate between "user" and "assistant", but found '
                f'multiple "{role}" roles in a row')
        empty = (was_string and blocks[0]["text"] == "") or not blocks
        if empty and not (last and role == "assistant"):
            bad(f"{p}: all messages must have non-empty content except for the optional final "
                "assistant message")
        if not was_string:
            for b in blocks:
                if b["type"] == "text" and b["text"] == "":
                    bad("messages: text content blocks must be non-empty")
        ids_here, results, lead = [], {}, True
        for j, b in enumerate(blocks):
            bp, t = f"{p}.content.{j}", b["type"]
            if t in ASSISTANT_ONLY and role == "user":
                bad(f"{bp}: `{t}` blocks can only appear in `assistant` messages.")
            if t == "tool_result" and role == "assistant":
                bad(f"{bp}: `tool_result` blocks can only appear in `user` messages.")
            if t == "thinking" and b["signature"] != sign_thinking(b["thinking"]):
                bad(f"{bp}: Invalid `signature` in `thinking` block")
            if t == "redacted_thinking" and not redacted_ok(b["data"]):
                bad(f"{bp}: Invalid `data` in `redacted_thinking` block")
            if t == "server_tool_use":
                nxt = blocks[j + 1] if j + 1 < len(blocks) else {}
                if nxt.get("tool_use_id") != b.get("id") or not str(
                        nxt.get("type", "")).endswith("_tool_result"):
                    bad(f"{bp}: `server_tool_use` ids were found without their result blocks "
                        f"immediately after: {b.get('id')}. Each `server_tool_use` block must be "
                        "followed by its result block (e.g. `web_search_tool_result`).")
            if t == "tool_use":
                if b["id"] in all_ids:
                    bad(f"{bp}: `tool_use` ids must be unique")
                all_ids[b["id"]] = b["name"]
                ids_here.append(b["id"])
            if t == "tool_result":
                tid = b["tool_use_id"]
                if tid not in prev_ids:
                    bad(f"{bp}: unexpected `tool_use_id` found in `tool_result` blocks: {tid}. "
                        "Each `tool_result` block must have a corresponding `tool_use` block in "
                        "the previous message.")
                if tid in results:
                    bad(f"{bp}: each tool_use must have a single result. Found multiple "
                        f"`tool_result` blocks with id: {tid}")
                results[tid] = lead
            else:
                lead = False
        if role == "user":
            missing = [x for x in prev_ids if not results.get(x)]
            if missing:
                bad(f"messages.{i - 1}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                    "corresponding `tool_result` block in the next message.")
        prev_ids = ids_here if role == "assistant" else []
    if prev_ids:  # a final assistant message with tool_use: nothing answers it
        bad(f"messages.{len(parsed) - 1}: `tool_use` ids were found without `tool_result` blocks "
            f"immediately after: {', '.join(prev_ids)}. Each `tool_use` block must have a "
            "corresponding `tool_result` block in the next message.")
    last_role, last_blocks, _ = parsed[-1]
    if last_role == "assistant" and last_blocks and last_blocks[-1]["type"] == "text" \
            and last_blocks[-1]["text"] != last_blocks[-1]["text"].rstrip():
        bad("messages: final assistant content cannot end with trailing whitespace")
    if thinking == "enabled" and len(parsed) >= 2 and last_role == "user" \
            and last_blocks and last_blocks[0]["type"] == "tool_result":
        k = len(parsed) - 2
        first = parsed[k][1][0]["type"] if parsed[k][1] else "nothing"
        if first not in ("thinking", "redacted_thinking"):
            bad(f"messages.{k}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
                f"found `{first}`. When `thinking` is enabled, a final `assistant` message must "
                "start with a thinking block (preceeding the lastmost set of `tool_use` and "
                "`tool_result` blocks). We recommend you include thinking blocks from previous "
                "turns. To avoid this requirement, disable `thinking`. Please consult our "
                f"documentation at {THINKING_DOCS}")
    return all_ids


def validate(req, models, count_only=False):
    """Checks a decoded request. Returns a dict of what answering it needs (the turn is
    picked apart: see turn_index)."""
    max_tokens = check_params(req, count_only)
    if models is not None and req["model"] not in models:
        raise ApiError(404, f"model: {req['model']}", "not_found_error")
    found = []  # cache_control markers, in prompt order: tools, system, messages
    msgs = req["messages"]
    want("messages", isinstance(msgs, list), "a valid list")
    names = check_tools(req.get("tools"), found)
    check_system(req.get("system"), found)
    parsed = [check_message_schema(i, m, found) for i, m in enumerate(msgs)]
    if "cache_control" in req:
        check_cache_control("cache_control", req["cache_control"], found)
    thinking = check_thinking(req.get("thinking"), max_tokens)
    check_tool_choice(req.get("tool_choice"), names, thinking)
    if not parsed:
        bad("messages: at least one message is required")
    ids = check_conversation(parsed, thinking)
    try:
        fake_images.anthropic_many(fake_images.collected())
    except fake_images.Refused as e:
        bad(e.message)
    if len(found) > MAX_BREAKPOINTS:
        bad(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(found)}.")
    if not names and any(b["type"] in ("tool_use", "tool_result") for _, bl, _ in parsed for b in bl):
        bad("Requests which include `tool_use` or `tool_result` blocks must define tools.")
    temp = req.get("temperature")
    if thinking in ("enabled", "adaptive") and temp is not None and temp != 1:
        bad("`temperature` may only be set to 1 when thinking is enabled. Please consult our "
            f"documentation at {THINKING_DOCS}#feature-compatibility")
    return {"names": names, "thinking": thinking, "max_tokens": max_tokens,
            "breakpoints": found, "history_tool_ids": ids}


# ---------------------------------------------------------------- the answer: which turn

def blocks_of(m):
    """A message's content blocks (a string is one text block); [] when malformed."""
    content = m.get("content") if isinstance(m, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def is_assistant(m):
    return isinstance(m, dict) and m.get("role") == "assistant"


def latest_tool_use(msgs):
    """The most recent tool call of a history: (message index, block index, id) of the last
    tool_use block of the last assistant message that has one, or None when there is none."""
    for i in range(len(msgs) - 1, -1, -1):
        if not is_assistant(msgs[i]):
            continue
        content = msgs[i]["content"] if isinstance(msgs[i].get("content"), list) else []
        uses = [j for j, b in enumerate(content) if isinstance(b, dict)
                and b.get("type") == "tool_use"]
        if uses:
            return i, uses[-1], content[uses[-1]].get("id")
    return None


def turn_index(msgs, turn_by, by_call):
    """The script turn a request is answered from. assistants: the number of assistant messages.
    call-id: 1 + the turn that made the latest tool_use (by_call: id -> turn), plus the
    assistant messages after the one carrying it; with no tool_use at all, the number of
    assistant messages, as by assistants. A final assistant message (a prefill) is not counted.
    A latest id in no script turn is a 400."""
    found = latest_tool_use(msgs) if turn_by == "call-id" else None
    first = found[0] + 1 if found else 0
    after = sum(1 for m in msgs[first:] if is_assistant(m))
    if msgs and is_assistant(msgs[-1]) and len(msgs) - 1 >= first:
        after -= 1  # a prefill: the turn it starts is the one answered
    if found is None:
        return after
    i, j, cid = found
    if not isinstance(cid, str) or cid not in by_call:
        bad(f"fake_anthropic: tool_use id {json.dumps(cid)} (messages.{i}.content.{j}.id, the "
            "latest in the request) is in no script turn (--turn-by call-id)")
    return by_call[cid] + 1 + after


def log_turn_index(msgs, turn_by, by_call):
    """turn_index for the log of a request not yet validated (None when it cannot be told)."""
    try:
        return turn_index(msgs, turn_by, by_call)
    except ApiError:
        return None


def asks_summary(msgs, summary):
    """Whether the script's summary answers: the last message is a user message whose last
    text block contains summary["when"]. Tool results and the user's text after them are one
    user message, the results first (as assay sends a summary request after a tool call), and
    an earlier text block may be the summary of a compacted history, merged with the next ask."""
    last = msgs[-1]
    texts = [b["text"] for b in blocks_of(last) if b["type"] == "text"]
    return summary is not None and last["role"] == "user" and bool(texts) \
        and summary["when"] in texts[-1]


def check_offered(turn, idx, names):
    """When the turn calls a tool, the request must offer it (a fake-only 400)."""
    for c in turn["tool_calls"]:
        if names is None or c["name"] not in names:
            offered = ", ".join(names) if names else "no tools at all"
            bad(f"fake_anthropic: script turn {idx} calls tool '{c['name']}' but the request "
                f"offers {offered}.")


# ---------------------------------------------------------------- prompt caching

def strip_cc(block):
    return {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) \
        else block


def prompt_segments(req):
    """The prompt as cacheable blocks in order (tools, system, messages): a list of
    [material bytes, tokens, ttl of a breakpoint on it or None]."""
    segs = []

    def add(kind, block, cc):
        mat = json.dumps([kind, strip_cc(block)], sort_keys=True, ensure_ascii=False).encode()
        light, images = fake_images.weigh(strip_cc(block), fake_images.anthropic_tokens)
        size = len(json.dumps([kind, light], sort_keys=True, ensure_ascii=False).encode())
        segs.append([mat, max(1, size // 4) + images, (cc.get("ttl") or "5m")
                     if isinstance(cc, dict) else None])
    for t in req.get("tools") or []:
        add("tool", t, t.get("cache_control"))
    system = req.get("system")
    if isinstance(system, str) and system:
        add("system", {"type": "text", "text": system}, None)
    elif isinstance(system, list):
        for b in system:
            add("system", b, b.get("cache_control"))
    for m in req["messages"]:
        content = m["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for j, b in enumerate(blocks):
            add(m["role"] if j == 0 else "+", b, b.get("cache_control"))
    auto = req.get("cache_control")
    if isinstance(auto, dict) and segs:  # automatic caching: a breakpoint on the last block
        segs[-1][2] = segs[-1][2] or auto.get("ttl") or "5m"
    return segs


class PromptCache:
    """Cache entries are prefix hashes written at breakpoints, per model, with a TTL.
    A breakpoint reads the longest cached prefix ending at it or up to 19 blocks before."""

    LOOKBACK = 20

    def __init__(self, min_tokens):
        self.min_tokens, self.entries, self.lock = min_tokens, {}, threading.Lock()

    def account(self, model, segs, write):
        now = time.time()
        h = hashlib.sha256(model.encode()).digest()
        hashes, cum, total = [], [], 0
        for mat, tokens, _ in segs:
            h = hashlib.sha256(h + mat).digest()
            total += tokens
            hashes.append(h)
            cum.append(total)
        bps = [k for k, s in enumerate(segs) if s[2]]
        with self.lock:
            best = -1
            for b in bps:
                for p in range(b, max(-1, b - self.LOOKBACK), -1):
                    if self.entries.get(hashes[p], (0, 0))[0] > now:
                        best = max(best, p)
                        break
            read = cum[best] if best >= 0 else 0
            made, prev = {"5m": 0, "1h": 0}, read
            for b in bps:
                if b > best and cum[b] >= self.min_tokens:
                    made[segs[b][2]] += cum[b] - prev
                    prev = cum[b]
            if write:
                for b in bps:
                    if cum[b] >= self.min_tokens:
                        life = 3600 if segs[b][2] == "1h" else 300
                        self.entries[hashes[b]] = (now + life, life)
                if best >= 0:  # a hit refreshes the entry's lifetime
                    life = self.entries[hashes[best]][1]
                    self.entries[hashes[best]] = (now + life, life)
        creation = made["5m"] + made["1h"]
        return {"input_tokens": total - read - creation, "cache_creation_input_tokens": creation,
                "cache_read_input_tokens": read, "cache_creation": {
                    "ephemeral_5m_input_tokens": made["5m"],
                    "ephemeral_1h_input_tokens": made["1h"]}}


# ---------------------------------------------------------------- stream building

def split_text(s, rng, lo, hi):
    out, i = [], 0
    while i < len(s):
        k = rng.randint(lo, hi)
        out.append(s[i:i + k])
        i += k
    return out


def split_json(s, rng):
    """partial_json fragments cut at random points (two at least when possible)."""
    if len(s) < 2:
        return [s] if s else []
    cuts = sorted(rng.sample(range(1, len(s)), min(len(s) - 1, max(1, len(s) // 6))))
    return [s[a:b] for a, b in zip([0] + cuts, cuts + [len(s)])]


def rand_id(rng, prefix, n):
    return prefix + "".join(rng.choice(B58) for _ in range(n))


def output_tokens(turn):
    chars = len(turn["text"]) + len(turn["thinking"]) + len(turn["redacted_thinking"]) + sum(
        len(c["arguments"]) + len(c["name"]) for c in turn["tool_calls"])
    return max(1, chars // 4)


class Builder:
    """Turns one scripted turn into the SSE events of a Messages stream, and the
    Message object a non-streaming request gets.

    Each event is (name, payload, tag); tag says what the event carries so that
    faults can cut at a meaningful place."""

    def __init__(self, rng, model, turn, usage, show_thinking, stop_sequences, max_tokens,
                 unknown=False):
        self.rng, self.model, self.turn, self.usage = rng, model, dict(turn), usage
        self.unknown = unknown  # --unknown-content
        self.events, self.content = [], []
        self.msg_id = rand_id(rng, "msg_01", 22)
        t = self.turn
        self.stop_reason, self.stop_sequence = t["stop_reason"], None
        if not show_thinking:
            t["thinking"] = t["redacted_thinking"] = ""
        for s in stop_sequences or []:
            if s and s in t["text"]:
                t["text"], t["tool_calls"] = t["text"][:t["text"].index(s)], []
                self.stop_reason, self.stop_sequence = "stop_sequence", s
                break
        if max_tokens == 0:
            t.update(text="", thinking="", redacted_thinking="", tool_calls=[])
            self.stop_reason = "max_tokens"
        self.stop_reason = self.stop_reason or ("tool_use" if t["tool_calls"] else "end_turn")
        self.ids = [c["id"] or rand_id(rng, "toolu_01", 22) for c in t["tool_calls"]]

    def add(self, name, payload, tag=None):
        self.events.append((name, dict({"type": name}, **payload), tag or name))

    def block(self, start, deltas, final):
        k = len(self.content)
        self.add("content_block_start", {"index": k, "content_block": start},
                 "start_" + start["type"])
        if k == 0:  # as the real API does: a ping after the first block opens
            self.add("ping", {})
        for tag, d in deltas:
            self.add("content_block_delta", {"index": k, "delta": d}, tag)
        self.add("content_block_stop", {"index": k})
        self.content.append(final)

    def build(self):
        t, r, u = self.turn, self.rng, self.usage
        self.add("message_start", {"message": {
            "id": self.msg_id, "type": "message", "role": "assistant", "model": self.model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": dict(u, output_tokens=min(1, u["output_tokens"]), service_tier="standard")}})
        if t["thinking"]:
            sig = sign_thinking(t["thinking"])
            self.block({"type": "thinking", "thinking": "", "signature": ""},
                       [("thinking", {"type": "thinking_delta", "thinking": p})
                        for p in split_text(t["thinking"], r, 3, 12)]
                       + [("signature", {"type": "signature_delta", "signature": sig})],
                       {"type": "thinking", "thinking": t["thinking"], "signature": sig})
        if t["redacted_thinking"]:
            b = {"type": "redacted_thinking", "data": redact(t["redacted_thinking"])}
            self.block(b, [], b)
        half = len(t["text"]) // 2 if self.unknown else len(t["text"])
        if t["text"][:half]:
            self.text_block(t["text"][:half], None)
        if self.unknown:
            self.unknown_blocks()
        if t["text"][half:]:
            self.text_block(t["text"][half:], {
                "type": "web_search_result_location", "url": "https://example.com/assay",
                "title": "Fake result", "encrypted_index": "EncIdx" + self.msg_id[-8:],
                "cited_text": t["text"][half:][:40]})
        for i, c in enumerate(t["tool_calls"]):
            try:
                parsed = json.loads(c["arguments"])
            except ValueError:
                parsed = {}
            frags = [""] + split_json(c["arguments"], r)  # the real API opens with ""
            self.block({"type": "tool_use", "id": self.ids[i], "name": c["name"], "input": {}},
                       [("tool_args", {"type": "input_json_delta", "partial_json": f})
                        for f in frags],
                       {"type": "tool_use", "id": self.ids[i], "name": c["name"], "input": parsed})
        if not self.content:
            self.add("ping", {})
        self.add("message_delta", {
            "delta": {"stop_reason": self.stop_reason, "stop_sequence": self.stop_sequence},
            "usage": {k: u[k] for k in ("input_tokens", "cache_creation_input_tokens",
                                        "cache_read_input_tokens", "output_tokens")}})
        self.add("message_stop", {})
        out = []
        for ev in self.events:  # and now and then a ping between two events
            out.append(ev)
            if ev[0] not in ("message_stop", "ping") and r.random() < 0.08:
                out.append(("ping", {"type": "ping"}, "ping"))
        self.events = out
        return out

    def text_block(self, text, citation):
        deltas = [("text", {"type": "text_delta", "text": p}) for p in split_text(text, self.rng, 1, 8)]
        final = {"type": "text", "text": text}
        if citation:  # as the API cites a search: a citations_delta within the text
            deltas.insert(len(deltas) // 2, ("citation", {"type": "citations_delta",
                                                          "citation": citation}))
            final["citations"] = [citation]
        self.block({"type": "text", "text": ""}, deltas, final)

    def future_event(self):
        self.add("future_event", {"note": "an event type from the future: ignore it"}, "unknown")

    def unknown_blocks(self):
        """--unknown-content: a web search the server runs (server_tool_use whose input streams as
        input_json_delta, then its web_search_tool_result), and a block type from the future with
        its own delta type, among events of an unknown type."""
        r, tail = self.rng, self.msg_id[-10:]
        srv = "srvtoolu_01" + tail
        query = json.dumps({"query": "assay unknown blocks"}, separators=(",", ":"))
        self.future_event()
        self.block({"type": "server_tool_use", "id": srv, "name": "web_search", "input": {}},
                   [("server_args", {"type": "input_json_delta", "partial_json": f})
                    for f in [""] + split_json(query, r)],
                   {"type": "server_tool_use", "id": srv, "name": "web_search",
                    "input": json.loads(query)})
        result = {"type": "web_search_tool_result", "tool_use_id": srv, "content": [{
            "type": "web_search_result", "title": "Fake result", "url": "https://example.com/assay",
            "encrypted_content": "EncContent" + tail, "page_age": None}]}
        self.block(result, [], result)
        self.future_event()
        fw = {"type": FUTURE_BLOCK, "id": "fw_01" + tail, "label": "", "input": {}}
        args = json.dumps({"dial": 7, "mode": "ünïcode"}, ensure_ascii=False, separators=(",", ":"))
        self.block(dict(fw), [("future_args", {"type": "input_json_delta", "partial_json": f})
                              for f in split_json(args, r)]
                   + [("future", {"type": "future_widget_delta", "label": p})
                      for p in split_text("a widget label", r, 2, 5)],
                   dict(fw, label="a widget label", input=json.loads(args)))

    def message(self):
        return {"id": self.msg_id, "type": "message", "role": "assistant", "model": self.model,
                "content": self.content, "stop_reason": self.stop_reason,
                "stop_sequence": self.stop_sequence, "usage": dict(self.usage,
                                                                     service_tier="standard")}


# ---------------------------------------------------------------- faults

class Fault:
    def __init__(self, spec):
        m = re.fullmatch(r"([a-z0-9-]+)@([0-9,-]+)(?::(.*))?", spec)
        if not m or m.group(1) not in STATUS_FAULTS + STREAM_FAULTS:
            raise ValueError(f"bad fault spec {spec!r}: want KIND@N[:ARG] with KIND one of "
                             + ", ".join(STATUS_FAULTS + STREAM_FAULTS))
        self.spec, self.kind, arg = spec, m.group(1), m.group(3)
        self.requests = set()
        for part in m.group(2).split(","):
            a, _, b = part.partition("-")
            if not a.isdigit() or (b and not b.isdigit()):
                raise ValueError(f"bad request number {part!r} in fault {spec!r}")
            self.requests.update(range(int(a), int(b or a) + 1))
        if arg and "=" in arg:
            arg = arg.split("=", 1)[1]
        self.arg = arg
        try:
            if self.kind in ("cut", "reset") and arg is not None:
                self.arg = int(arg)
            elif self.kind == "context":
                self.arg = int(arg if arg is not None else DEFAULT_CONTEXT)
                if self.arg < 1:
                    raise ValueError
            elif self.kind == "stall":
                self.arg = float(arg if arg is not None else 30)
            elif self.kind == "error-event":
                self.arg = arg or "overloaded_error"
                if self.arg not in ("overloaded_error", "api_error"):
                    raise ValueError
            elif self.kind in ("429", "529", "500") and arg is not None:
                float(arg)
            elif arg is not None:
                raise ValueError
        except ValueError:
            raise ValueError(f"bad argument {arg!r} in fault {spec!r}")


def prompt_too_long(tokens, limit):
    return ApiError(400, f"prompt is too long: {tokens} tokens > {limit} maximum")


def fault_answer(f, model, tokens):
    """The ApiError a status fault answers with (model and prompt tokens: the request's)."""
    if f.kind == "context":
        return prompt_too_long(max(tokens, f.arg + 1), f.arg)
    if f.kind == "404":
        return ApiError(404, f"model: {model}", "not_found_error")
    if f.kind == "401":
        return ApiError(401, "invalid x-api-key", "authentication_error")
    if f.kind == "403":
        return ApiError(403, "Your API key does not have permission to use the specified resource.",
                        "permission_error")
    if f.kind == "413":
        return ApiError(413, "Request exceeds the maximum allowed number of bytes.",
                        "request_too_large")
    hdrs = [("retry-after", f.arg)] if f.arg else []
    if f.kind == "429":
        wait = f.arg or "1"
        reset = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + float(wait)))
        return ApiError(429, "This request would exceed the rate limit for your organization of "
                        "50 requests per minute. For details, refer to: "
                        "https://docs.claude.com/en/api/rate-limits. You can see the response "
                        "headers for current usage. Please reduce the prompt length or the "
                        "maximum tokens requested, or try again later.", "rate_limit_error",
                        [("retry-after", wait), ("anthropic-ratelimit-requests-limit", "50"),
                         ("anthropic-ratelimit-requests-remaining", "0"),
                         ("anthropic-ratelimit-requests-reset", reset)])
    if f.kind == "529":
        return ApiError(529, "Overloaded", "overloaded_error", hdrs)
    return ApiError(500, "Internal server error", "api_error", hdrs)


# ---------------------------------------------------------------- HTTP

class State:
    def __init__(self, opts, script, faults, summary=None, by_call=None):
        self.opts, self.script, self.faults = opts, script, faults
        self.summary, self.by_call = summary, by_call or {}
        self.lock = threading.Lock()
        self.n = 0
        self.by_status = {}
        self.seed = opts.seed
        self.cache = PromptCache(opts.cache_min_tokens)
        self.sink = fake_images.Sink(opts.images_dir)
        self.answers = {}  # --unknown-content: block id -> the answer's content

    def next_n(self):
        with self.lock:
            self.n += 1
            return self.n

    def record(self, entry):
        with self.lock:
            key = str(entry["status"])
            self.by_status[key] = self.by_status.get(key, 0) + 1
            if self.opts.log:
                with open(self.opts.log, "a", encoding="utf-8") as f:
                    f.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def fault_for(self, n):
        return next((f for f in self.faults if n in f.requests), None)

    def remember(self, content):
        """--unknown-content: an answer's blocks, by each id they hold, to check it comes back."""
        with self.lock:
            for b in content:
                if b.get("id"):
                    self.answers[b["id"]] = content

    def check_returned(self, msgs):
        """--unknown-content: an assistant message that repeats one of this fake's answers (it
        holds one of its ids) must repeat it whole and unchanged: the same blocks in the same
        order, the server tool's blocks and the future block as they were streamed."""
        for i, m in enumerate(msgs):
            if not is_assistant(m):
                continue
            got = [strip_cc(b) for b in blocks_of(m)]
            ids = [b.get("id") for b in got if b.get("id")]
            with self.lock:
                sent = next((self.answers[x] for x in ids if x in self.answers), None)
            if sent is None:
                continue
            for j in range(max(len(got), len(sent))):
                a = sent[j] if j < len(sent) else None
                b = got[j] if j < len(got) else None
                if a != b:
                    bad(f"fake_anthropic: messages.{i}.content.{j} is not the answer's block "
                        f"{j} sent back unchanged (--unknown-content): sent "
                        f"{json.dumps(a, ensure_ascii=False)}, got back "
                        f"{json.dumps(b, ensure_ascii=False)}")


def estimate_tokens(req, raw):
    if isinstance(req, dict) and isinstance(req.get("messages"), list):
        try:
            return sum(s[1] for s in prompt_segments(req))
        except (AttributeError, KeyError, TypeError):
            pass
    return max(1, len(raw) // 4)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-anthropic/1.0"
    disable_nagle_algorithm = True
    timeout = 120

    def log_message(self, fmt, *args):
        if self.server.st.opts.verbose:
            super().log_message(fmt, *args)

    # -- plumbing
    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        if n < 0:
            raise ValueError("negative Content-Length")
        return self.rfile.read(n)

    def send_json(self, status, obj, headers=()):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("request-id", self.rid)
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def send_error_json(self, e):
        self.send_json(e.status, {"type": "error", "error": {"type": e.etype, "message": e.message},
                                  "request_id": self.rid}, e.headers)

    def api_key(self, version):
        """The key: x-api-key; with anthropic-version 2026-10-21 also Authorization: Bearer
        (how @anthropic-ai/sdk 1.x sends it). Returns (key, which header)."""
        key, how = self.headers.get("x-api-key"), "x-api-key"
        auth = self.headers.get("Authorization", "")
        if not key and version == "2026-10-21" and auth.lower().startswith("bearer "):
            key, how = auth[7:].strip(), "bearer"
        if not key:
            raise ApiError(401, "x-api-key header is required", "authentication_error")
        want_key = self.server.st.opts.key
        if want_key is not None and key != want_key:
            raise ApiError(401, "invalid x-api-key", "authentication_error")
        return key, how

    def api_version(self):
        v = self.headers.get("anthropic-version")
        if v is None:
            raise ApiError(400, "anthropic-version: header is required")
        if v not in API_VERSIONS:
            raise ApiError(400, f'anthropic-version: "{v}" is not a valid version')
        return v

    # -- GET: stats and model list
    def do_GET(self):
        self.rid = rand_id(random, "req_011C", 20)
        path = urlsplit(self.path).path
        st = self.server.st
        if path == "/_stats":
            with st.lock:
                return self.send_json(200, {"requests": st.n, "by_status": dict(st.by_status)})
        if path.endswith("/v1/models"):
            try:
                self.api_key(self.api_version())
            except ApiError as e:
                return self.send_error_json(e)
            models = st.opts.models or ["fake-claude"]
            return self.send_json(200, {"data": [
                {"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
                for m in models], "has_more": False, "first_id": models[0], "last_id": models[-1]})
        self.send_error_json(ApiError(404, "Not Found", "not_found_error"))

    # -- POST: the messages endpoint
    def do_POST(self):
        t = time.time()
        st = self.server.st
        n = st.next_n()
        self.rid = rand_id(random, "req_011C", 20)
        path = urlsplit(self.path).path
        entry = {"n": n, "path": path, "model": None, "n_messages": None, "turn_index": None,
                 "status": None, "fault": None, "t": round(t, 6), "seed": st.seed,
                 "anthropic_version": self.headers.get("anthropic-version"), "stream": None}
        try:
            try:
                raw = self.read_body()
            except ValueError as e:
                self.close_connection = True
                raise ApiError(400, f"Could not read the request body: {e}.")
            self.answer(n, path, raw, entry)
        except ApiError as e:
            entry["status"], entry["error"] = e.status, e.message
            st.record(entry)
            self.send_error_json(e)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def answer(self, n, path, raw, entry):
        st = self.server.st
        count_only = path.endswith("/v1/messages/count_tokens")
        if not (path.endswith("/v1/messages") or count_only) or "/v1/v1/" in path:
            raise ApiError(404, "Not Found", "not_found_error")  # /v1/v1/: a base URL with /v1
        version = self.api_version()
        entry["auth"] = self.api_key(version)[1]
        req = None
        try:
            req = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            pass
        if isinstance(req, dict):  # for the log, even when the request is invalid
            entry["model"], entry["stream"] = req.get("model"), req.get("stream") is True
            if isinstance(req.get("messages"), list):
                msgs = req["messages"]
                entry["n_messages"] = len(msgs)
                entry["turn_index"] = log_turn_index(msgs, st.opts.turn_by, st.by_call)
        fault = st.fault_for(n)
        if fault and fault.kind in STATUS_FAULTS:
            entry["fault"] = fault.spec
            model = entry["model"] if isinstance(entry["model"], str) else "unknown"
            raise fault_answer(fault, model, estimate_tokens(req, raw))
        ctype = self.headers.get("Content-Type", "")
        if ctype.split(";")[0].strip().lower() != "application/json":
            raise ApiError(400, f"Invalid request: content-type must be application/json, got "
                           f"{ctype!r}")
        try:
            req = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise ApiError(400, f"There was an error parsing the body of your request: {e}")
        fake_images.begin()
        v = validate(req, st.opts.models, count_only)
        if st.opts.unknown_content:
            st.check_returned(req["messages"])
        segs = prompt_segments(req)
        entry["cache_breakpoints"] = len(v["breakpoints"])
        total = entry["prompt_tokens"] = sum(s[1] for s in segs)
        if st.opts.max_context and total > st.opts.max_context:
            raise prompt_too_long(total, st.opts.max_context)
        entry.update(fake_images.log_fields(st.sink.save(n, fake_images.collected())))
        msgs = req["messages"]
        if count_only:
            entry["turn_index"] = log_turn_index(msgs, st.opts.turn_by, st.by_call)
            entry["status"] = 200
            st.record(entry)
            return self.send_json(200, {"input_tokens": total})
        if asks_summary(msgs, st.summary):
            turn, entry["turn_index"], entry["summary"] = summary_turn(st.summary), None, True
        else:
            idx = entry["turn_index"] = turn_index(msgs, st.opts.turn_by, st.by_call)
            turn = st.script[idx] if idx < len(st.script) else exhausted_turn()
            check_offered(turn, idx, v["names"])
            entry["summary"] = False
        rng = random.Random(st.seed * 1000003 + n)
        usage = st.cache.account(req["model"], segs, write=True)
        given = turn["usage"]  # the script's numbers win, field by field
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
            usage[key] = given.get(key, usage[key])
        if "cache_creation_input_tokens" in given:
            usage["cache_creation"] = {"ephemeral_5m_input_tokens": usage[
                "cache_creation_input_tokens"], "ephemeral_1h_input_tokens": 0}
        b = Builder(rng, req["model"], turn, dict(usage, output_tokens=0),
                    v["thinking"] != "disabled", req.get("stop_sequences"), v["max_tokens"],
                    st.opts.unknown_content)
        out = 0 if v["max_tokens"] == 0 else given.get("output_tokens", output_tokens(b.turn))
        b.usage["output_tokens"] = out
        events = b.build()
        if st.opts.unknown_content:
            st.remember(b.content)
        entry["tool_use_ids"] = b.ids
        entry["usage"] = {k: b.usage[k] for k in ("input_tokens", "cache_creation_input_tokens",
                                                  "cache_read_input_tokens", "output_tokens")}
        entry["stop_reason"] = b.stop_reason
        if fault and req.get("stream") is True:
            entry["fault"] = fault.spec
        entry["status"] = 200
        st.record(entry)
        if req.get("stream") is not True:
            return self.send_json(200, b.message())
        self.stream(events, fault, rng)

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("request-id", self.rid)
        self.send_header("Connection", "close")
        self.end_headers()

    def frame(self, ev, rng):
        name, payload, _ = ev
        data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        if self.server.st.opts.sse != "lax":
            return f"event: {name}\ndata: {data}\n\n"
        # what section 0 says a client must take: no space after the colon, CRLF, comments
        sp = "" if rng.random() < 0.5 else " "
        nl = "\r\n" if rng.random() < 0.5 else "\n"
        pre = f": keep-alive{nl}" if rng.random() < 0.2 else ""
        return f"{pre}event:{sp}{name}{nl}data:{sp}{data}{nl}{nl}"

    def send_raw(self, data, rng):
        """Writes bytes in two small writes, splitting inside a UTF-8 sequence if there is one."""
        delay = self.server.st.opts.delay_ms / 1000.0
        cont = next((i for i, c in enumerate(data) if 0x80 <= c < 0xC0), None)
        cut = cont if cont is not None else rng.randint(1, max(1, len(data) - 1))
        for piece in (data[:cut], data[cut:]):
            if piece:
                self.wfile.write(piece)
                if delay:
                    time.sleep(delay)

    def send_event(self, ev, rng):
        self.send_raw(self.frame(ev, rng).encode("utf-8"), rng)
        if self.server.st.opts.sse == "lax" and ev[0] == "content_block_stop" \
                and ev[1]["index"] == 0:
            # the API may add event types; a client ignores the ones it does not know
            self.send_raw(self.frame(("future_event", {"type": "future_event", "note": "ignore me"},
                                      "unknown"), rng).encode("utf-8"), rng)

    def stream(self, events, fault, rng):
        self.start_stream()
        kind = fault.kind if fault else None
        real = [i for i, e in enumerate(events) if e[0] != "ping"]  # K counts these
        if kind in ("cut", "reset"):
            k = fault.arg
            if k is None:  # default: through the first piece of the first tool_use's input
                args = [j for j, i in enumerate(real) if events[i][2] == "tool_args"
                        and events[i][1]["delta"]["partial_json"]]
                k = args[0] + 1 if args else len(real) // 2
            k = max(0, min(k, len(real)))
            for ev in events[:real[k - 1] + 1 if k else 0]:
                self.send_event(ev, rng)
            if kind == "reset":
                time.sleep(0.1)  # let the client read what was sent before the RST
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
            return
        if kind == "error-event":
            head = events[:1]
            texts = [e for e in events if e[2] == "text"][:2]
            if len(texts) < 2:
                head += [("content_block_start", {"type": "content_block_start", "index": 0,
                                                  "content_block": {"type": "text", "text": ""}},
                          "text"),
                         ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                  "delta": {"type": "text_delta", "text": "Working"}},
                          "text")]
            else:
                head = events[:events.index(texts[1]) + 1]
            for ev in head:
                self.send_event(ev, rng)
            message = "Overloaded" if fault.arg == "overloaded_error" else "Internal server error"
            self.send_event(("error", {"type": "error", "error": {"type": fault.arg,
                                                                  "message": message}}, "error"), rng)
            return
        for k, ev in enumerate(events):
            self.send_event(ev, rng)
            if kind == "stall" and k == 0:
                time.sleep(fault.arg)


def on_sigterm(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake Anthropic Messages API server for assay tests.")
    ap.add_argument("--script", required=True, help="scripted-model JSON ({\"turns\": [...]})")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--port-file", help="write the chosen port here once listening")
    ap.add_argument("--fault", action="append", default=[], help="KIND@N[:ARG], repeatable")
    ap.add_argument("--log", help="append one JSON line per POST")
    ap.add_argument("--key", help="require 'x-api-key: KEY'")
    ap.add_argument("--models", help="comma-separated models the server knows; others get 404 "
                    "(default: any model)")
    ap.add_argument("--seed", type=int, help="seed for ids and stream splits (default random)")
    ap.add_argument("--delay-ms", type=float, default=1.0, help="pause after each write (default 1)")
    ap.add_argument("--cache-min-tokens", type=int, default=1024,
                    help="shortest prefix (estimated tokens) a breakpoint caches (default 1024)")
    ap.add_argument("--max-context", type=int, default=0,
                    help="refuse prompts over this many estimated tokens (default 0: no limit)")
    ap.add_argument("--turn-by", choices=TURN_BY, default="assistants",
                    help="pick the script turn by the number of assistant messages (default) or "
                    "by the latest tool_use id (call-id: the script's calls fix their ids)")
    ap.add_argument("--sse", choices=("strict", "lax"), default="strict",
                    help="lax: vary the SSE framing as section 0 allows (no space, CRLF, comments) "
                    "and add events of an unknown type")
    ap.add_argument("--unknown-content", action="store_true",
                    help="each answer also holds a server tool's use and result (web search), a "
                    "block of a made-up future type with its own delta type and events of an "
                    "unknown type; an answer sent back must come back whole and unchanged")
    ap.add_argument("--images-dir", help="write each accepted image there, decoded, as "
                    "NNNN-<request no>.<ext>")
    ap.add_argument("--verbose", action="store_true", help="log HTTP requests on stderr")
    opts = ap.parse_args(argv)
    if opts.unknown_content:
        EXTRA_TAGS[:] = [FUTURE_BLOCK]
    if opts.models is not None:
        opts.models = [m.strip() for m in opts.models.split(",") if m.strip()]
        if not opts.models:
            print("fake_anthropic: --models needs at least one model name", file=sys.stderr)
            return 2
    if opts.max_context < 0:
        print("fake_anthropic: --max-context must be 0 (no limit) or more", file=sys.stderr)
        return 2
    if opts.seed is None:
        opts.seed = random.SystemRandom().getrandbits(32)
    try:
        script, summary = load_script(opts.script)
        by_call = call_turns(script) if opts.turn_by == "call-id" else {}
        faults = [Fault(s) for s in opts.fault]
    except (OSError, ValueError) as e:
        print(f"fake_anthropic: {e}", file=sys.stderr)
        return 2
    ThreadingHTTPServer.block_on_close = False
    ThreadingHTTPServer.request_queue_size = 64
    srv = ThreadingHTTPServer((opts.host, opts.port), Handler)
    srv.daemon_threads = True
    srv.st = State(opts, script, faults, summary, by_call)
    port = srv.server_address[1]
    signal.signal(signal.SIGTERM, on_sigterm)
    print(f"fake_anthropic: seed {opts.seed} (rerun with --seed {opts.seed} to get the same ids and "
          f"stream splits)", file=sys.stderr, flush=True)
    if opts.port_file:
        tmp = f"{opts.port_file}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, opts.port_file)
    print(f"fake_anthropic: listening on {opts.host}:{port} ({len(script)} turns)",
          file=sys.stderr, flush=True)
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
