#!/usr/bin/env python3
"""Fake OpenAI Responses API server for assay's tests (stdlib only).

Validates each POST {prefix}/responses the way the real API does (flat
function tools, function_call / function_call_output pairing, reasoning
items sent back with the encrypted_content the server issued, stored
responses for previous_response_id), answers from a scripted-model file as
the Responses SSE stream and injects faults on chosen request numbers.
See tests/fakes/README.md ("fake_responses.py") for the command line.
"""
import argparse
import base64
import copy
import hashlib
import hmac
import json
import os
import random
import re
import signal
import socket
import string
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import fake_images

EXHAUSTED = "(script exhausted)"
ALNUM = string.ascii_letters + string.digits
NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# Reasoning models (o1, o3, o4-mini, gpt-5 families): no temperature/top_p;
# only they take reasoning.effort.
REASONING_MODEL_RE = re.compile(r"^(o1|o3|o4-mini)($|-)|^gpt-5($|[.-])")
STATUS_FAULTS = ("429", "429ms", "quota", "500", "503", "401", "404", "context")
STREAM_FAULTS = ("cut", "reset", "failed", "error-event", "context-event", "stall")
DEFAULT_SECRET = "fake-responses-secret"
MIN_OUTPUT_TOKENS = 16
# The top-level parameters POST /v1/responses knows (openai-node
# ResponseCreateParamsBase, plus max_tool_calls); anything else is
# "Unknown parameter: 'x'." with code unknown_parameter.
KNOWN_PARAMS = frozenset((
    "background", "context_management", "conversation", "include", "input", "instructions",
    "max_output_tokens", "max_tool_calls", "metadata", "model", "moderation",
    "parallel_tool_calls", "previous_response_id", "prompt", "prompt_cache_key",
    "prompt_cache_options", "prompt_cache_retention", "reasoning", "safety_identifier",
    "service_tier", "store", "stream", "stream_options", "temperature", "text", "tool_choice",
    "tools", "top_logprobs", "top_p", "truncation", "user"))
INCLUDABLE = ("code_interpreter_call.outputs", "computer_call_output.output.image_url",
              "file_search_call.results", "message.input_image.image_url",
              "message.output_text.logprobs", "reasoning.encrypted_content",
              "web_search_call.action.sources", "web_search_call.results")
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
SUMMARIES = ("auto", "concise", "detailed")
ROLES = ("assistant", "system", "developer", "user")
# Keys each input item / part / tool may carry (others: unknown_parameter).
ITEM_KEYS = {
    "message": {"type", "role", "content", "id", "status", "phase"},
    "function_call": {"type", "call_id", "name", "arguments", "id", "status", "namespace", "caller"},
    "function_call_output": {"type", "call_id", "output", "id", "status", "caller"},
    "reasoning": {"type", "id", "summary", "content", "encrypted_content", "status"},
    "item_reference": {"type", "id"},
}
# --unknown-content: output items of types assay does not read, issued by this fake and
# accepted back only unchanged: a web search the server ran, and a type from the future
EXTRA_ITEM_KEYS = {
    "web_search_call": {"type", "id", "status", "action"},
    "future_gizmo": {"type", "id", "status", "label", "setting"},
}
PART_KEYS = {
    "input_text": {"type", "text", "prompt_cache_breakpoint"},
    "input_image": {"type", "image_url", "file_id", "detail"},
    "input_file": {"type", "file_id", "file_data", "file_url", "filename"},
    "output_text": {"type", "text", "annotations", "logprobs"},
    "refusal": {"type", "refusal"},
}
INPUT_PARTS = ("input_text", "input_image", "input_file")
ASSISTANT_PARTS = ("output_text", "refusal")
# What the API lists when a part type is unknown to every role.
ALL_PART_TYPES = ("input_text", "input_image", "output_text", "refusal", "input_file",
                  "computer_screenshot", "summary_text")
TOOL_KEYS = {"type", "name", "description", "parameters", "strict", "allowed_callers",
             "defer_loading", "output_schema"}


class ApiError(Exception):
    """An HTTP error answer: status plus an OpenAI-style error object."""

    def __init__(self, status, message, etype="invalid_request_error", param=None, code=None,
                 headers=()):
        super().__init__(message)
        self.status, self.message, self.etype = status, message, etype
        self.param, self.code, self.headers = param, code, list(headers)


# ---------------------------------------------------------------- script

def load_script(path):
    """Read assay's scripted-model JSON into a list of normalised turns."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    turns = data.get("turns") if isinstance(data, dict) else None
    if not isinstance(turns, list):
        raise ValueError("script must be an object with a 'turns' array")
    out = []
    for i, t in enumerate(turns):
        if not isinstance(t, dict):
            raise ValueError(f"turns[{i}] must be an object")
        text = t.get("text") or ""
        if not isinstance(text, str):
            raise ValueError(f"turns[{i}].text must be a string")
        reasoning = t.get("reasoning")
        if reasoning is not None and not isinstance(reasoning, str):
            raise ValueError(f"turns[{i}].reasoning must be a string")
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
        if not isinstance(usage, dict):
            raise ValueError(f"turns[{i}].usage must be an object")
        out.append({"text": text, "tool_calls": calls, "reasoning": reasoning or None,
                    "usage": usage, "finish_reason": t.get("finish_reason")})
    return out


EXHAUSTED_TURN = {"text": EXHAUSTED, "tool_calls": [], "reasoning": None, "usage": {},
                  "finish_reason": None}


# ---------------------------------------------------------------- error helpers

def jtype(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    return "an object"


def bad(param, message, code=None, status=400):
    raise ApiError(status, message, param=param, code=code)


def missing(param):
    bad(param, f"Missing required parameter: '{param}'.", "missing_required_parameter")


def need(obj, key, param):
    if obj.get(key) is None:
        missing(param)
    return obj[key]


def want(param, ok, expected, v):
    if not ok:
        bad(param, f"Invalid type for '{param}': expected {expected}, but got {jtype(v)} instead.",
            "invalid_type")


def supported(values):
    q = [f"'{v}'" for v in values]
    if len(q) <= 2:
        return " and ".join(q)
    return ", ".join(q[:-1]) + ", and " + q[-1]


def invalid_value(param, value, values):
    bad(param, f"Invalid value: {json.dumps(value) if not isinstance(value, str) else repr(value)}. "
        f"Supported values are: {supported(values)}.", "invalid_value")


def unknown_keys(obj, allowed, prefix):
    for k in obj:
        if k not in allowed:
            p = f"{prefix}.{k}" if prefix else k
            bad(p, f"Unknown parameter: '{p}'.", "unknown_parameter")


def check_string(param, v, allow_empty=False):
    want(param, isinstance(v, str), "a string", v)
    if not v and not allow_empty:
        bad(param, f"Invalid '{param}': empty string. Expected a string with minimum length 1, but "
                   "got an empty string instead.", "empty_string")


def short(token):
    return token if len(token) <= 8 else f"{token[:4]}...{token[-4:]}"


# ---------------------------------------------------------------- reasoning tokens

class Sealer:
    """Issues and verifies reasoning.encrypted_content: the item's id, a hash
    of its summary and the call ids that followed it, masked with a keystream
    and signed with HMAC-SHA256 under the server's secret, in a Fernet-looking
    envelope ("gAAAAAB" + base64url(nonce, body, mac)). Opaque to clients."""

    PREFIX = "gAAAAAB"

    def __init__(self, secret):
        self.key = hashlib.sha256(secret.encode()).digest()

    @staticmethod
    def summary_hash(summary):
        return hashlib.sha256(json.dumps(summary, sort_keys=True).encode()).hexdigest()[:32]

    def mask(self, nonce, data):
        stream = b""
        for i in range(0, len(data) + 32, 32):
            stream += hashlib.sha256(self.key + nonce + i.to_bytes(4, "big")).digest()
        return bytes(a ^ b for a, b in zip(data, stream))

    def seal(self, rs_id, summary, following, nonce):
        nonce = bytes.fromhex(nonce)
        body = self.mask(nonce, json.dumps({"rs": rs_id, "s": self.summary_hash(summary),
                                            "f": following}, separators=(",", ":")).encode())
        mac = hmac.new(self.key, nonce + body, hashlib.sha256).digest()
        return self.PREFIX + base64.urlsafe_b64encode(nonce + body + mac).decode()

    def open(self, token):
        """The payload of a token this server's secret signed, else None."""
        if not isinstance(token, str) or not token.startswith(self.PREFIX):
            return None
        try:
            raw = base64.urlsafe_b64decode(token[len(self.PREFIX):].encode())
        except (ValueError, TypeError):
            return None
        if len(raw) < 8 + 1 + 32:
            return None
        nonce, body, mac = raw[:8], raw[8:-32], raw[-32:]
        if not hmac.compare_digest(mac, hmac.new(self.key, nonce + body, hashlib.sha256).digest()):
            return None
        try:
            return json.loads(self.mask(nonce, body))
        except ValueError:
            return None


def not_verified(token, why=None):
    msg = f"The encrypted content {short(token)} could not be verified."
    if why:
        msg += f" (fake_responses: {why})"
    bad(None, msg, "invalid_encrypted_content")


# ---------------------------------------------------------------- validation

def check_parts(param, content, role):
    """Message content: a string or an array of typed parts of the role's kinds."""
    ok = isinstance(content, str) or (isinstance(content, list) and all(
        isinstance(p, dict) for p in content))
    want(param, ok, "one of a string or array of objects", content)
    if isinstance(content, str):
        return
    allowed = ASSISTANT_PARTS if role == "assistant" else INPUT_PARTS
    for k, part in enumerate(content):
        pp = f"{param}[{k}]"
        ptype = need(part, "type", pp + ".type")
        if ptype not in PART_KEYS and ptype not in ALL_PART_TYPES:
            invalid_value(pp + ".type", ptype, ALL_PART_TYPES)
        if ptype not in allowed:
            invalid_value(pp, ptype, allowed)
        unknown_keys(part, PART_KEYS[ptype], pp)
        if ptype in ("input_text", "output_text"):
            want(pp + ".text", isinstance(need(part, "text", pp + ".text"), str), "a string",
                 part["text"])
        elif ptype == "refusal":
            want(pp + ".refusal", isinstance(need(part, "refusal", pp + ".refusal"), str),
                 "a string", part["refusal"])
        elif ptype == "input_image":
            check_image_part(pp, part)
        if ptype == "output_text" and part.get("annotations") is not None:
            want(pp + ".annotations", isinstance(part["annotations"], list), "an array",
                 part["annotations"])


def check_image_part(pp, part):
    """An input_image part: a data URL checked as the API checks it (fake_images.py), or a
    file_id (taken unchecked: this fake has no Files API)."""
    if not (part.get("image_url") or part.get("file_id")):
        missing(pp + ".image_url")
    url = part.get("image_url")
    if url is not None:
        want(pp + ".image_url", isinstance(url, str), "a string", url)
    try:
        detail = fake_images.check_detail(pp + ".detail", part.get("detail"))
        if url is not None:
            fake_images.data_url(pp + ".image_url", url, detail, fake="fake_responses")
    except fake_images.Refused as e:
        bad(e.param, e.message, e.code)


def item_kind(item, p):
    """The type of one input item ('message' when it has a role and no type)."""
    want(p, isinstance(item, dict), "an object", item)
    itype = item.get("type")
    if itype is None:
        if "role" not in item:
            missing(p + ".role")
        return "message"
    if itype not in ITEM_KEYS:
        invalid_value(p + ".type", itype, tuple(ITEM_KEYS))
    return itype


def unknown_content_keys():
    """--unknown-content: the extra item types become input items too."""
    ITEM_KEYS.update(EXTRA_ITEM_KEYS)


def check_item(item, p, kind):
    """Shape of one new input item (not its pairing with the others)."""
    unknown_keys(item, ITEM_KEYS[kind], p)
    if kind == "message":
        role = need(item, "role", p + ".role")
        if role not in ROLES:
            invalid_value(p + ".role", role, ROLES)
        if "content" not in item or item["content"] is None:
            missing(p + ".content")
        check_parts(p + ".content", item["content"], role)
    elif kind == "function_call":
        check_string(p + ".call_id", need(item, "call_id", p + ".call_id"))
        name = need(item, "name", p + ".name")
        check_string(p + ".name", name)
        if not NAME_RE.match(name):
            bad(p + ".name", f"Invalid '{p}.name': string does not match pattern. Expected a string "
                f"that matches the pattern '^[a-zA-Z0-9_-]+$'.", "invalid_value")
        want(p + ".arguments", isinstance(need(item, "arguments", p + ".arguments"), str),
             "a string", item["arguments"])
    elif kind == "function_call_output":
        check_string(p + ".call_id", need(item, "call_id", p + ".call_id"))
        if "output" not in item or item["output"] is None:
            missing(p + ".output")
        out = item["output"]
        if isinstance(out, list):
            check_parts(p + ".output", out, "user")
        else:
            want(p + ".output", isinstance(out, str), "one of a string or array of objects", out)
    elif kind == "reasoning":
        check_string(p + ".id", need(item, "id", p + ".id"))
        if "summary" not in item:
            missing(p + ".summary")
        summ = item["summary"]
        want(p + ".summary", isinstance(summ, list), "an array", summ)
        for k, s in enumerate(summ):
            sp = f"{p}.summary[{k}]"
            want(sp, isinstance(s, dict), "an object", s)
            unknown_keys(s, {"type", "text"}, sp)
            if need(s, "type", sp + ".type") != "summary_text":
                invalid_value(sp + ".type", s["type"], ("summary_text",))
            want(sp + ".text", isinstance(need(s, "text", sp + ".text"), str), "a string", s["text"])
        if item.get("encrypted_content") is not None:
            want(p + ".encrypted_content", isinstance(item["encrypted_content"], str), "a string",
                 item["encrypted_content"])
    elif kind == "item_reference":
        check_string(p + ".id", need(item, "id", p + ".id"))
    elif kind in EXTRA_ITEM_KEYS:
        check_string(p + ".id", need(item, "id", p + ".id"))


def strict_schema(fname, schema, ctx, param):
    """Strict mode's rules for one object schema and the objects inside it."""
    def fail(msg):
        bad(param, f"Invalid schema for function '{fname}': In context=({', '.join(map(repr, ctx))}"
            f"{',' if len(ctx) == 1 else ''}), {msg}", "invalid_function_parameters")
    if not isinstance(schema, dict):
        return
    if schema.get("type") == "object" or "properties" in schema:
        if schema.get("additionalProperties") is not False:
            fail("'additionalProperties' is required to be supplied and to be false.")
        props = schema.get("properties") or {}
        req = schema.get("required")
        if not isinstance(req, list):
            req = []
            if props:
                fail("'required' is required to be supplied and to be an array including every key "
                     f"in properties. Missing '{next(iter(props))}'.")
        for key in props:
            if key not in req:
                fail("'required' is required to be supplied and to be an array including every key "
                     f"in properties. Missing '{key}'.")
        for key in req:
            if key not in props:
                fail("'required' is required to be supplied and to be an array including every key "
                     f"in properties. Extra required key '{key}' supplied.")
        for key, sub in props.items():
            strict_schema(fname, sub, ctx + ("properties", key), param)
    if isinstance(schema.get("items"), dict):
        strict_schema(fname, schema["items"], ctx + ("items",), param)


def strict_ok(fname, params):
    try:
        strict_schema(fname, params, (), "x")
        return True
    except ApiError:
        return False


def validate_tools(req):
    """The offered function tools, echoed as the response shows them (strict resolved)."""
    tools = req.get("tools")
    if tools is None:
        return None
    want("tools", isinstance(tools, list), "an array", tools)
    out, names = [], set()
    for i, t in enumerate(tools):
        p = f"tools[{i}]"
        want(p, isinstance(t, dict), "an object", t)
        ttype = need(t, "type", p + ".type")
        if ttype != "function":
            bad(p + ".type", f"fake_responses: tools of type {ttype!r} are not served by this fake "
                "(only 'function').", "invalid_value")
        name = need(t, "name", p + ".name")  # the Chat Completions {"function": {...}} shape fails here
        unknown_keys(t, TOOL_KEYS, p)
        check_string(p + ".name", name)
        if not NAME_RE.match(name):
            bad(p + ".name", f"Invalid '{p}.name': string does not match pattern. Expected a string "
                "that matches the pattern '^[a-zA-Z0-9_-]+$'.", "invalid_value")
        if t.get("description") is not None:
            want(p + ".description", isinstance(t["description"], str), "a string", t["description"])
        params = t.get("parameters")
        if params is not None:
            want(p + ".parameters", isinstance(params, dict), "an object", params)
            if params.get("type") != "object":
                bad(p + ".parameters", f"Invalid schema for function '{name}': schema must be a JSON "
                    f"Schema of 'type: \"object\"', got 'type: \"{params.get('type')}\"'.",
                    "invalid_function_parameters")
        strict = t.get("strict")
        if strict is not None:
            want(p + ".strict", isinstance(strict, bool), "a boolean", strict)
        if strict is True:
            strict_schema(name, params or {"type": "object", "properties": {},
                                           "additionalProperties": False}, (), p + ".parameters")
        elif strict is None:  # the Responses API makes a tool strict when its schema allows it
            strict = strict_ok(name, params or {"type": "object", "additionalProperties": False})
        if name in names:
            bad("tools", f"Invalid 'tools': duplicate function name '{name}'.", "invalid_value")
        names.add(name)
        out.append({"type": "function", "name": name, "description": t.get("description"),
                    "parameters": params, "strict": strict})
    return out


def validate_params(req, models):
    """Top-level parameters (before the input is looked at)."""
    want("body", isinstance(req, dict), "an object", req)
    unknown = [k for k in req if k not in KNOWN_PARAMS]
    if unknown:
        bad(unknown[0], f"Unknown parameter: '{unknown[0]}'.", "unknown_parameter")
    model = need(req, "model", "model")
    check_string("model", model)
    if models is not None and model not in models:
        raise model_not_found(model)
    reasoning_model = bool(REASONING_MODEL_RE.match(model))
    if "input" not in req or req["input"] is None:
        missing("input")
    inp = req["input"]
    want("input", isinstance(inp, (str, list)), "one of a string or array of objects", inp)
    if isinstance(inp, list) and not inp:
        bad("input", "Invalid 'input': empty array. Expected an array with minimum length 1, but got "
                     "an empty array instead.", "empty_array")
    for key in ("store", "stream", "parallel_tool_calls", "background"):
        if req.get(key) is not None:
            want(key, isinstance(req[key], bool), "a boolean", req[key])
    if req.get("background"):
        bad("background", "fake_responses: background responses are not served by this fake.",
            "invalid_value")
    if req.get("conversation") is not None:
        bad("conversation", "fake_responses: conversations are not served by this fake (use "
            "previous_response_id or send the history).", "invalid_value")
    if req.get("instructions") is not None:
        want("instructions", isinstance(req["instructions"], str), "a string", req["instructions"])
    v = req.get("max_output_tokens")
    if v is not None:
        want("max_output_tokens", isinstance(v, int) and not isinstance(v, bool), "an integer", v)
        if v < MIN_OUTPUT_TOKENS:
            bad("max_output_tokens", f"Invalid 'max_output_tokens': integer below minimum value. "
                f"Expected a value >= {MIN_OUTPUT_TOKENS}, but got {v} instead.",
                "integer_below_min_value")
    inc = req.get("include")
    if inc is not None:
        want("include", isinstance(inc, list), "an array", inc)
        for k, x in enumerate(inc):
            if x not in INCLUDABLE:
                invalid_value(f"include[{k}]", x, INCLUDABLE)
    so = req.get("stream_options")
    if so is not None:
        if req.get("stream") is not True:
            bad("stream_options", "The 'stream_options' parameter is only allowed when 'stream' is "
                "enabled.")
        want("stream_options", isinstance(so, dict), "an object", so)
        unknown_keys(so, {"include_obfuscation"}, "stream_options")
    r = req.get("reasoning")
    if r is not None:
        want("reasoning", isinstance(r, dict), "an object", r)
        unknown_keys(r, {"effort", "summary", "generate_summary", "context", "mode"}, "reasoning")
        if r.get("effort") is not None:
            if r["effort"] not in EFFORTS:
                invalid_value("reasoning.effort", r["effort"], EFFORTS)
            if not reasoning_model:
                bad("reasoning.effort", "Unsupported parameter: 'reasoning.effort' is not supported "
                    "with this model.", "unsupported_parameter")
        for key in ("summary", "generate_summary"):
            if r.get(key) is not None and r[key] not in SUMMARIES:
                invalid_value(f"reasoning.{key}", r[key], SUMMARIES)
    if reasoning_model:
        for key in ("temperature", "top_p"):
            if req.get(key) is not None:
                bad(key, f"Unsupported parameter: '{key}' is not supported with this model.",
                    "unsupported_parameter")
    for key, hi in (("temperature", 2), ("top_p", 1)):
        v = req.get(key)
        if v is not None:
            want(key, isinstance(v, (int, float)) and not isinstance(v, bool), "a number", v)
            if not 0 <= v <= hi:
                bad(key, f"Invalid '{key}': decimal above maximum value. Expected a value <= {hi}, "
                    f"but got {v} instead." if v > hi else f"Invalid '{key}': decimal below minimum "
                    f"value. Expected a value >= 0, but got {v} instead.",
                    "decimal_above_max_value" if v > hi else "decimal_below_min_value")
    if req.get("truncation") is not None and req["truncation"] not in ("auto", "disabled"):
        invalid_value("truncation", req["truncation"], ("auto", "disabled"))
    if req.get("previous_response_id") is not None:
        check_string("previous_response_id", req["previous_response_id"])
    md = req.get("metadata")
    if md is not None:
        want("metadata", isinstance(md, dict), "an object", md)
        for k, x in md.items():
            want(f"metadata.{k}", isinstance(x, str), "a string", x)


def validate_tool_choice(req, tools):
    tc = req.get("tool_choice")
    if tc is None:
        return
    names = [t["name"] for t in tools or []]
    if isinstance(tc, str):
        if tc not in ("none", "auto", "required"):
            invalid_value("tool_choice", tc, ("none", "auto", "required"))
        return
    want("tool_choice", isinstance(tc, dict), "one of a string or object", tc)
    if tc.get("type") == "function":
        name = need(tc, "name", "tool_choice.name")  # the Chat Completions shape fails here
        unknown_keys(tc, {"type", "name"}, "tool_choice")
        if name not in names:
            bad("tool_choice", f"Tool choice '{name}' not found in 'tools' parameter.")
    elif tc.get("type") != "allowed_tools":
        bad("tool_choice.type", f"fake_responses: tool_choice of type {tc.get('type')!r} is not "
            "served by this fake.", "invalid_value")


def model_not_found(model):
    return ApiError(404, f"The model '{model}' does not exist or you do not have access to it.",
                    code="model_not_found")


# ---------------------------------------------------------------- conversation state

class Conversation:
    """Walks the effective input (stored chain + new items) and checks the
    pairing rules: every function_call answered by one function_call_output
    before the next message or assistant turn, no orphan outputs, reasoning
    items followed by their output items and returned as issued."""

    def __init__(self, state, store, lax_reasoning):
        self.st, self.store, self.lax = state, store, lax_reasoning

    def resolve(self, entries):
        """Expands item_reference entries to the stored items they name."""
        out = []
        for item, p in entries:
            if p is not None and item_kind(item, p) == "item_reference":
                ref = self.st.stored_items.get(item["id"])
                if ref is None:
                    self.item_not_found(item["id"])
                out.append((copy.deepcopy(ref), None))
            else:
                out.append((item, p))
        return out

    def item_not_found(self, iid):
        msg = f"Item with id '{iid}' not found."
        if not self.store:
            msg += (" Items are not persisted when `store` is set to false. Try again with `store` "
                    "set to true, or remove this item from your input.")
        bad("input", msg, status=404)

    def reasoning_id(self, item, p):
        """The id of a reasoning item, checked against what the server issued."""
        token = item.get("encrypted_content")
        if token is None:
            if p is not None and item["id"] not in self.st.stored_items:
                self.item_not_found(item["id"])
            return item["id"]
        payload = self.st.sealer.open(token)
        if payload is None:
            not_verified(token)
        if payload["rs"] != item["id"]:
            not_verified(token, f"it was issued for '{payload['rs']}', not '{item['id']}'")
        if payload["s"] != Sealer.summary_hash(item["summary"]):
            not_verified(token, "the item's summary differs from the one issued with it; send "
                         "reasoning items back unchanged")
        return item["id"]

    def extra_as_issued(self, item, p):
        """--unknown-content: an item of an extra type must be one this fake issued, unchanged."""
        issued = self.st.extras.get(item.get("id"))
        if issued is None:
            self.item_not_found(item.get("id"))
        if item != issued:
            bad(p, f"fake_responses: {p} ({item['type']} '{item['id']}') is not sent back as it "
                f"was issued (--unknown-content): issued {json.dumps(issued)}, got "
                f"{json.dumps(item)}.", "invalid_value")

    def extras_with_call(self, cid, entries):
        """--unknown-content: a call goes back with the extra items of the answer that made it
        (the API keeps a turn's output items together)."""
        issued = self.st.issued.get(cid) or {}
        have = {it.get("id") for it, _ in entries}
        for eid in issued.get("extras", []):
            if eid not in have:
                bad("input", f"fake_responses: the input holds call '{cid}' but not item '{eid}' "
                    f"({self.st.extras[eid]['type']}) of the same response "
                    f"'{issued['resp']}': send a turn's output items back with its calls "
                    "(--unknown-content).", "invalid_value")

    def walk(self, entries):
        """Checks the effective input; returns the turn index (assistant groups)."""
        groups, in_group, group_resp = 0, False, None
        pending, answered, ids = {}, set(), {}
        group_rs, group_calls = set(), []

        def close_group():
            for item, p in group_calls:  # each call of a reasoning turn needs its reasoning item
                issued = self.st.issued.get(item["call_id"])
                if (p is None or self.lax or not issued or not issued["rs"]
                        or not issued["retrievable"] or issued["rs"] in group_rs):
                    continue
                bad("input", f"Item '{item.get('id') or issued['fc']}' of type 'function_call' was "
                    f"provided without its required 'reasoning' item: '{issued['rs']}'.")
            group_rs.clear()
            group_calls.clear()

        def need_answers():
            if pending:
                bad("input", f"No tool output found for function call {next(iter(pending))}.")

        for k, (item, p) in enumerate(entries):
            kind = "message" if item.get("type") is None else item["type"]
            if p is not None:
                check_item(item, p, kind)
            iid = item.get("id")
            if iid is not None:  # across the stored chain and references too
                if iid in ids:
                    bad("input", f"Duplicate item found with id {iid}. Remove duplicate items from "
                        "your input and try again.")
                ids[iid] = p
            role = item.get("role")
            if kind in EXTRA_ITEM_KEYS and p is not None:
                self.extra_as_issued(item, p)
            assistant = kind in ("reasoning", "function_call") or (kind == "message"
                                                                   and role == "assistant") \
                or kind in EXTRA_ITEM_KEYS
            if assistant:
                if not in_group:
                    issued = self.st.issued.get(item.get("call_id")) if kind == "function_call" else None
                    same_turn = issued and group_resp and issued["resp"] == group_resp and not pending
                    if not same_turn:  # a turn whose outputs came between its calls is one turn
                        need_answers()
                        close_group()
                        groups += 1
                        group_resp = None
                    in_group = True
                if kind == "reasoning":
                    group_rs.add(self.reasoning_id(item, p))
                    nxt = entries[k + 1][0] if k + 1 < len(entries) else None
                    if not (isinstance(nxt, dict) and (nxt.get("type") == "function_call" or (
                            nxt.get("type") in (None, "message") and nxt.get("role") == "assistant")
                            or nxt.get("type") in EXTRA_ITEM_KEYS)):
                        bad("input", f"Item '{item['id']}' of type 'reasoning' was provided without "
                            "its required following item.")
                elif kind == "function_call":
                    cid = item["call_id"]
                    if cid in pending or cid in answered:
                        bad("input", f"Duplicate function call with call_id {cid}.")
                    pending[cid] = item
                    group_calls.append((item, p))
                    if p is not None:
                        self.extras_with_call(cid, entries)
                    issued = self.st.issued.get(cid)
                    if issued:
                        group_resp = issued["resp"]
            elif kind == "function_call_output":
                in_group = False
                cid = item["call_id"]
                if cid not in pending:
                    if cid in answered:
                        bad("input", f"Duplicate function call output for call_id {cid}.")
                    bad("input", f"No tool call found for function call output with call_id {cid}.")
                del pending[cid]
                answered.add(cid)
            else:  # a user, system or developer message
                in_group = False
                need_answers()
        need_answers()
        close_group()
        return groups


# ---------------------------------------------------------------- stream building

def split_text(s, rng, lo, hi):
    out, i = [], 0
    while i < len(s):
        k = rng.randint(lo, hi)
        out.append(s[i:i + k])
        i += k
    return out


def split_args(s, rng):
    """Argument string in several fragments (at least two when possible)."""
    frags = split_text(s, rng, 2, 7)
    if len(frags) == 1 and len(s) >= 2:
        frags = [s[:len(s) // 2], s[len(s) // 2:]]
    return frags


class Builder:
    """Turns one scripted turn into the list of Responses stream events.

    Each event is (type, payload, tag); payloads carry their sequence_number.
    The tag says what an event carries so faults can cut at a meaningful place."""

    def __init__(self, st, rng, req, turn, effective, tools, input_tokens):
        self.st, self.rng, self.req, self.turn = st, rng, req, turn
        self.effective, self.tools, self.input_tokens = effective, tools, input_tokens
        self.events, self.seq = [], 0
        self.created = int(time.time())
        self.stem = "%016x00%08x" % (rng.getrandbits(64), rng.getrandbits(32))
        self.resp_id = "resp_" + self.stem + "%024x" % rng.getrandbits(96)
        self.include = set(req.get("include") or [])
        self.store = req.get("store") is not False
        so = req.get("stream_options") or {}
        self.obfuscate = so.get("include_obfuscation", True) is not False
        r = req.get("reasoning") or {}
        self.want_summary = (r.get("summary") or r.get("generate_summary")) is not None
        self.call_ids = [c["id"] or "call_" + "".join(rng.choice(ALNUM) for _ in range(24))
                         for c in turn["tool_calls"]]
        self.output = []  # the completed output items
        self.rs_id = None
        self.unknown = st.opts.unknown_content
        self.extras = []  # --unknown-content: the items of extra types

    def item_id(self, prefix):
        return prefix + self.stem + "%024x" % self.rng.getrandbits(96)

    def add(self, etype, tag, **fields):
        payload = {"type": etype, "sequence_number": self.seq, **fields}
        self.seq += 1
        self.events.append((etype, payload, tag))
        return payload

    def delta(self, etype, tag, **fields):
        if self.obfuscate:
            fields["obfuscation"] = "".join(self.rng.choice(ALNUM)
                                            for _ in range(self.rng.randint(1, 15)))
        return self.add(etype, tag, **fields)

    def response(self, status, output, usage=None, error=None, incomplete=None):
        r = self.req
        reasoning = r.get("reasoning") or {}
        o = {"id": self.resp_id, "object": "response", "created_at": self.created, "status": status,
             "background": False, "completed_at": None, "error": error,
             "incomplete_details": incomplete, "instructions": r.get("instructions"),
             "max_output_tokens": r.get("max_output_tokens"), "max_tool_calls": None,
             "model": r["model"], "output": copy.deepcopy(output),
             "parallel_tool_calls": r.get("parallel_tool_calls", True) is not False,
             "previous_response_id": r.get("previous_response_id"),
             "prompt_cache_key": r.get("prompt_cache_key"),
             "reasoning": {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")},
             "safety_identifier": r.get("safety_identifier"), "service_tier": "auto",
             "store": self.store, "temperature": r.get("temperature", 1.0),
             "text": r.get("text") or {"format": {"type": "text"}, "verbosity": "medium"},
             "tool_choice": r.get("tool_choice", "auto"), "tools": copy.deepcopy(self.tools or []),
             "top_logprobs": r.get("top_logprobs", 0), "top_p": r.get("top_p", 1.0),
             "truncation": r.get("truncation", "disabled"), "usage": usage, "user": r.get("user"),
             "metadata": r.get("metadata") or {}}
        if status in ("completed", "incomplete", "failed"):
            o["completed_at"] = int(time.time()) if status == "completed" else None
            o["service_tier"] = "default"
        return o

    def usage(self):
        u, t = self.turn["usage"], self.turn
        reasoning = t["reasoning"] or ""
        out_chars = len(t["text"]) + sum(len(c["arguments"]) + len(c["name"]) for c in t["tool_calls"])
        cached = u.get("cached_tokens", 0)
        inp = u.get("input_tokens", u.get("prompt_tokens", max(self.input_tokens, cached)))
        rt = u.get("reasoning_tokens", max(1, len(reasoning) // 4) * 8 if reasoning else 0)
        out = u.get("output_tokens", u.get("completion_tokens", max(1, out_chars // 4) + rt))
        return {"input_tokens": inp,
                "input_tokens_details": {"cached_tokens": cached,
                                         "cache_write_tokens": u.get("cache_write_tokens", 0)},
                "output_tokens": out, "output_tokens_details": {"reasoning_tokens": rt},
                "total_tokens": inp + out}

    def build_reasoning(self, oi):
        t, r = self.turn, self.rng
        rs = self.rs_id = self.item_id("rs_")
        self.add("response.output_item.added", "item_added", output_index=oi,
                 item={"id": rs, "type": "reasoning", "summary": []})
        summary = []
        if self.want_summary:
            text = t["reasoning"]
            part = {"type": "summary_text", "text": ""}
            self.add("response.reasoning_summary_part.added", "reasoning", item_id=rs,
                     output_index=oi, summary_index=0, part=part)
            for piece in split_text(text, r, 2, 8):
                self.delta("response.reasoning_summary_text.delta", "reasoning", item_id=rs,
                           output_index=oi, summary_index=0, delta=piece)
            self.add("response.reasoning_summary_text.done", "reasoning", item_id=rs,
                     output_index=oi, summary_index=0, text=text)
            self.add("response.reasoning_summary_part.done", "reasoning", item_id=rs,
                     output_index=oi, summary_index=0, part={"type": "summary_text", "text": text})
            summary = [{"type": "summary_text", "text": text}]
        item = {"id": rs, "type": "reasoning", "summary": summary}
        if "reasoning.encrypted_content" in self.include:
            item = {"id": rs, "type": "reasoning", "encrypted_content": self.st.sealer.seal(
                rs, summary, self.call_ids, "%016x" % r.getrandbits(64)), "summary": summary}
        self.add("response.output_item.done", "item_done", output_index=oi, item=item)
        self.output.append(item)

    def build_message(self, oi, last_status, text=None, annotation=None):
        t, r = self.turn, self.rng
        text = t["text"] if text is None else text
        mid = self.item_id("msg_")
        self.add("response.output_item.added", "item_added", output_index=oi, item={
            "id": mid, "type": "message", "status": "in_progress", "content": [], "role": "assistant"})
        self.add("response.content_part.added", "part", item_id=mid, output_index=oi,
                 content_index=0, part={"type": "output_text", "annotations": [], "logprobs": [],
                                        "text": ""})
        for piece in split_text(text, r, 1, 5):
            self.delta("response.output_text.delta", "text", item_id=mid, output_index=oi,
                       content_index=0, delta=piece, logprobs=[])
        if annotation:
            self.add("response.output_text.annotation.added", "annotation", item_id=mid,
                     output_index=oi, content_index=0, annotation_index=0, annotation=annotation)
        self.add("response.output_text.done", "text_done", item_id=mid, output_index=oi,
                 content_index=0, text=text, logprobs=[])
        part = {"type": "output_text", "annotations": [annotation] if annotation else [],
                "logprobs": [], "text": text}
        self.add("response.content_part.done", "part", item_id=mid, output_index=oi,
                 content_index=0, part=part)
        item = {"id": mid, "type": "message", "status": last_status, "content": [part],
                "role": "assistant"}
        self.add("response.output_item.done", "item_done", output_index=oi, item=item)
        self.output.append(item)

    def build_call(self, oi, j, status):
        c, r = self.turn["tool_calls"][j], self.rng
        fc, cid = self.item_id("fc_"), self.call_ids[j]
        self.add("response.output_item.added", "tool_start", output_index=oi, item={
            "id": fc, "type": "function_call", "status": "in_progress", "arguments": "",
            "call_id": cid, "name": c["name"]})
        for frag in split_args(c["arguments"], r):
            self.delta("response.function_call_arguments.delta", "tool_args", item_id=fc,
                       output_index=oi, delta=frag)
        self.add("response.function_call_arguments.done", "tool_args_done", item_id=fc,
                 output_index=oi, name=c["name"], arguments=c["arguments"])
        item = {"id": fc, "type": "function_call", "status": status, "arguments": c["arguments"],
                "call_id": cid, "name": c["name"]}
        self.add("response.output_item.done", "item_done", output_index=oi, item=item)
        self.output.append(item)
        return fc

    def build_unknown(self, oi, text):
        """--unknown-content: a web_search_call with its own events, the rest of the text citing
        it, and an item of a type from the future with events of unknown types (one of them
        names it as function_call_arguments would, as a call's delta: it must not become one).
        Returns the next output index."""
        ws = self.item_id("ws_")
        self.add("response.future_event", "unknown", note="an event type from the future")
        self.add("response.output_item.added", "item_added", output_index=oi, item={
            "id": ws, "type": "web_search_call", "status": "in_progress"})
        for phase in ("in_progress", "searching", "completed"):
            self.add("response.web_search_call." + phase, "web_search", output_index=oi, item_id=ws)
        item = {"id": ws, "type": "web_search_call", "status": "completed",
                "action": {"type": "search", "query": "assay unknown items"}}
        self.add("response.output_item.done", "item_done", output_index=oi, item=item)
        self.output.append(item)
        self.extras.append(item)
        oi += 1
        if text:
            self.build_message(oi, "completed", text, {
                "type": "url_citation", "start_index": 0, "end_index": len(text),
                "url": "https://example.com/assay", "title": "Fake result"})
            oi += 1
        fg = self.item_id("fg_")
        self.add("response.output_item.added", "item_added", output_index=oi, item={
            "id": fg, "type": "future_gizmo", "status": "in_progress", "label": ""})
        for piece in split_text("a gizmo label", self.rng, 2, 5):
            self.delta("response.future_gizmo.label.delta", "unknown", item_id=fg,
                       output_index=oi, delta=piece)
        self.delta("response.function_call_arguments.delta", "unknown", item_id=fg,
                   output_index=oi, delta='{"not":"a call"}')
        item = {"id": fg, "type": "future_gizmo", "status": "completed", "label": "a gizmo label",
                "setting": {"dial": 7, "mode": "ünïcode"}}
        self.add("response.output_item.done", "item_done", output_index=oi, item=item)
        self.output.append(item)
        self.extras.append(item)
        return oi + 1

    def build(self):
        """The events of the whole stream; returns (events, final response, fc ids)."""
        t = self.turn
        fr = t["finish_reason"]
        incomplete = None
        if fr in ("length", "max_output_tokens"):
            incomplete = {"reason": "max_output_tokens"}
        elif fr == "content_filter":
            incomplete = {"reason": "content_filter"}
        self.add("response.created", "created", response=self.response("in_progress", []))
        self.add("response.in_progress", "in_progress", response=self.response("in_progress", []))
        n_items = (1 if t["text"] or not t["tool_calls"] else 0) + len(t["tool_calls"])
        oi = 0
        if t["reasoning"]:
            self.build_reasoning(oi)
            oi += 1
        k = 0
        if self.unknown:  # --unknown-content: text, a web search, cited text, a future item
            half = len(t["text"]) // 2
            if t["text"][:half]:
                self.build_message(oi, "completed", t["text"][:half])
                oi += 1
            oi = self.build_unknown(oi, t["text"][half:])
            n_items = len(t["tool_calls"])
        elif t["text"] or not t["tool_calls"]:
            k += 1
            self.build_message(oi, "incomplete" if incomplete and k == n_items else "completed")
            oi += 1
        fc_ids = []
        for j in range(len(t["tool_calls"])):
            k += 1
            fc_ids.append(self.build_call(oi, j, "incomplete" if incomplete and k == n_items
                                          else "completed"))
            oi += 1
        status = "incomplete" if incomplete else "completed"
        final = self.response(status, self.output, usage=self.usage(), incomplete=incomplete)
        self.add("response." + status, "end", response=final)
        return self.events, final, fc_ids


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
            elif self.kind == "stall":
                self.arg = float(arg if arg is not None else 30)
            elif self.kind == "429ms" and arg is not None:
                int(arg)
            elif self.kind == "error-event" and arg not in (None, "flat"):
                raise ValueError
            elif self.kind in ("404", "401", "context", "quota", "failed", "context-event") \
                    and arg is not None:
                raise ValueError
        except ValueError:
            raise ValueError(f"bad argument {arg!r} in fault {spec!r}")


def mask(key):
    if len(key) <= 8:
        return "*" * len(key)
    return key[:3] + "*" * (len(key) - 7) + key[-4:]


CONTEXT_MSG = ("Your input exceeds the context window of this model. Please adjust your input and "
               "try again.")


def fault_answer(f, key_seen, model):
    """The ApiError a status fault answers with."""
    if f.kind == "404":
        return model_not_found(model)
    if f.kind == "context":
        return ApiError(400, CONTEXT_MSG, param="input", code="context_length_exceeded")
    if f.kind == "429":
        return ApiError(429, f"Rate limit reached for {model} in organization org-fake on tokens "
                        "per min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in "
                        f"{f.arg or '1'}s. Visit https://platform.openai.com/account/rate-limits to "
                        "learn more.", "tokens", code="rate_limit_exceeded",
                        headers=[("retry-after", f.arg or "1"), ("x-ratelimit-limit-tokens", "30000"),
                                 ("x-ratelimit-remaining-tokens", "0"),
                                 ("x-ratelimit-reset-tokens", f"{f.arg or '1'}s")])
    if f.kind == "429ms":
        return ApiError(429, "Rate limit reached for requests", "requests", code="rate_limit_exceeded",
                        headers=[("retry-after-ms", f.arg or "1000")])
    if f.kind == "quota":
        return ApiError(429, "You exceeded your current quota, please check your plan and billing "
                        "details. For more information on this error, read the docs: "
                        "https://platform.openai.com/docs/guides/error-codes/api-errors.",
                        "insufficient_quota", code="insufficient_quota")
    if f.kind == "401":
        return ApiError(401, f"Incorrect API key provided: {mask(key_seen)}. You can find your API "
                        "key at https://platform.openai.com/account/api-keys.", code="invalid_api_key")
    hdrs = [("retry-after", f.arg)] if f.arg else []
    if f.kind == "500":
        return ApiError(500, "The server had an error while processing your request. Sorry about that!",
                        "server_error", headers=hdrs)
    return ApiError(503, "The engine is currently overloaded, please try again later.",
                    "server_error", headers=hdrs)


# ---------------------------------------------------------------- HTTP

class State:
    def __init__(self, opts, script, faults):
        self.opts, self.script, self.faults = opts, script, faults
        self.lock = threading.Lock()
        self.n = 0
        self.by_status = {}
        self.seed = opts.seed
        self.sealer = Sealer(opts.secret)
        self.sink = fake_images.Sink(opts.images_dir)
        self.stored = {}        # resp id -> {"items": effective input + output}
        self.stored_items = {}  # item id -> item, from stored responses' output
        self.issued = {}        # call id -> {"resp", "fc", "rs", "retrievable", "extras"}
        self.extras = {}        # --unknown-content: item id -> the extra item issued

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


def normalise_input(inp):
    if isinstance(inp, str):
        return [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": inp}]}]
    return inp


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-responses/1.0"
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
        self.send_header("x-request-id", self.rid)
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    @staticmethod
    def error_body(e):
        return {"error": {"message": e.message, "type": e.etype, "param": e.param, "code": e.code}}

    def bearer(self):
        auth = self.headers.get("Authorization", "")
        if not auth.lower().startswith("bearer ") or not auth[7:].strip():
            raise ApiError(401, "You didn't provide an API key. You need to provide your API key in "
                           "an Authorization header using Bearer auth (i.e. Authorization: Bearer "
                           "YOUR_KEY). You can obtain an API key from "
                           "https://platform.openai.com/account/api-keys.")
        key = auth[7:].strip()
        want_key = self.server.st.opts.key
        if want_key is not None and key != want_key:
            raise ApiError(401, f"Incorrect API key provided: {mask(key)}. You can find your API key "
                           "at https://platform.openai.com/account/api-keys.", code="invalid_api_key")
        return key

    # -- GET: stats and model list
    def do_GET(self):
        self.rid = "req_%032x" % random.getrandbits(128)
        path = urlsplit(self.path).path
        st = self.server.st
        if path == "/_stats":
            with st.lock:
                return self.send_json(200, {"requests": st.n, "by_status": dict(st.by_status),
                                            "stored": len(st.stored)})
        if path.endswith("/models"):
            try:
                self.bearer()
            except ApiError as e:
                return self.send_json(e.status, self.error_body(e))
            return self.send_json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake-responses"}
                for m in (st.opts.models or ["fake-model"])]})
        self.send_json(404, self.error_body(ApiError(404, f"Invalid URL (GET {path})")))

    # -- POST: the responses endpoint
    def do_POST(self):
        t = time.time()
        st = self.server.st
        n = st.next_n()
        self.rid = "req_%032x" % random.getrandbits(128)
        path = urlsplit(self.path).path
        entry = {"n": n, "path": path, "model": None, "n_input": None, "turn_index": None,
                 "store": None, "previous_response_id": None, "status": None, "fault": None,
                 "t": round(t, 6), "seed": st.seed}
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
            self.send_json(e.status, self.error_body(e), e.headers)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def answer(self, n, path, raw, entry):
        st = self.server.st
        if not path.endswith("/responses"):
            raise ApiError(404, f"Invalid URL (POST {path})")
        key = self.bearer()
        req = None
        try:
            req = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            pass
        if isinstance(req, dict):  # for the log, even when the request is invalid
            entry["model"] = req.get("model")
            entry["store"] = req.get("store")
            entry["previous_response_id"] = req.get("previous_response_id")
            if isinstance(req.get("input"), (list, str)):
                entry["n_input"] = len(normalise_input(req["input"]))
        fault = st.fault_for(n)
        if fault and fault.kind in STATUS_FAULTS:
            entry["fault"] = fault.spec
            model = entry["model"] if isinstance(entry["model"], str) else "unknown"
            raise fault_answer(fault, key, model)
        ctype = self.headers.get("Content-Type", "")
        if ctype.split(";")[0].strip().lower() != "application/json":
            raise ApiError(400, f"Invalid Content-Type header {ctype!r}: expected 'application/json'.")
        if req is None:
            raise ApiError(400, "We could not parse the JSON body of your request. (HINT: This likely "
                           "means you aren't using your HTTP library correctly. The OpenAI API "
                           "expects a JSON payload, but what was sent was not valid JSON.)")
        fake_images.begin()
        with st.lock:  # stored responses and issued ids are shared by all requests
            idx, turn, effective, tools = self.validate(req)
        entry["turn_index"] = idx
        entry.update(fake_images.log_fields(st.sink.save(n, fake_images.collected())))
        rng = random.Random(st.seed * 1000003 + n)
        light, image_tokens = fake_images.weigh([effective, req.get("instructions"), tools],
                                                fake_images.openai_tokens)
        input_tokens = max(1, len(json.dumps(light)) // 4) + image_tokens
        b = Builder(st, rng, req, turn, effective, tools, input_tokens)
        events, final, fc_ids = b.build()
        entry["tool_call_ids"] = b.call_ids
        entry["response_id"] = b.resp_id
        if fault and req.get("stream") is not True:
            fault = None  # stream faults need a stream: a plain request is answered
        if fault:
            entry["fault"] = fault.spec
        with st.lock:
            retrievable = b.store or "reasoning.encrypted_content" in b.include
            for cid, fc in zip(b.call_ids, fc_ids):
                st.issued[cid] = {"resp": b.resp_id, "fc": fc, "rs": b.rs_id,
                                  "retrievable": retrievable,
                                  "extras": [x["id"] for x in b.extras]}
            for x in b.extras:
                st.extras[x["id"]] = copy.deepcopy(x)
            if b.store and not fault:
                st.stored[b.resp_id] = {"items": effective + copy.deepcopy(b.output)}
                for item in b.output:
                    st.stored_items[item["id"]] = copy.deepcopy(item)
        entry["status"] = 200
        st.record(entry)
        if req.get("stream") is not True:
            return self.send_json(200, final)
        self.stream(events, fault, rng, b)

    def validate(self, req):
        """Checks a decoded request; returns (turn index, turn, effective input, tools)."""
        st = self.server.st
        validate_params(req, st.opts.models)
        store = req.get("store") is not False
        prev = req.get("previous_response_id")
        entries = []
        if prev is not None:
            stored = st.stored.get(prev)
            if stored is None:
                bad("previous_response_id", f"Previous response with id '{prev}' not found.",
                    "previous_response_not_found")
            entries = [(copy.deepcopy(it), None) for it in stored["items"]]
        new = normalise_input(req["input"])
        entries += [(it, f"input[{i}]") for i, it in enumerate(new)]
        conv = Conversation(st, store, st.opts.lax_reasoning)
        entries = conv.resolve(entries)
        idx = conv.walk(entries)
        tools = validate_tools(req)
        validate_tool_choice(req, tools)
        turn = st.script[idx] if idx < len(st.script) else EXHAUSTED_TURN
        names = [t["name"] for t in tools or []]
        for c in turn["tool_calls"]:
            if c["name"] not in names:
                offered = ", ".join(names) if names else "no 'tools' at all"
                bad("tools", f"fake_responses: script turn {idx} calls tool '{c['name']}' but the "
                    f"request offers {offered}.", "invalid_value")
        effective = [it for it, _ in entries]
        return idx, turn, effective, tools

    def start_stream(self):
        """A 200 event stream with a chunked body, kept alive, as the API answers over HTTP/1.1."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("x-request-id", self.rid)
        self.send_header("openai-processing-ms", "42")
        self.end_headers()

    def send_chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_stream(self):
        """The last chunk: the body ends cleanly (whatever the events said)."""
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def send_event(self, ev, rng):
        """Writes one event in two chunks, split inside a UTF-8 sequence if it has one."""
        etype, payload, _ = ev
        data = (f"event: {etype}\ndata: "
                f"{json.dumps(payload, ensure_ascii=False, separators=(',', ':'))}\n\n").encode()
        delay = self.server.st.opts.delay_ms / 1000.0
        cont = next((i for i, c in enumerate(data) if 0x80 <= c < 0xC0), None)
        cut = cont if cont is not None else rng.randint(1, max(1, len(data) - 1))
        for piece in (data[:cut], data[cut:]):
            if piece:
                self.send_chunk(piece)
                if delay:
                    time.sleep(delay)

    @staticmethod
    def head_events(events):
        """What a stream carries before it fails: created, in_progress and the
        turn's output up to its second text delta (else its first argument
        fragment), so the client has a partial item when the failure comes."""
        texts = [i for i, e in enumerate(events) if e[2] == "text"]
        args = [i for i, e in enumerate(events) if e[2] == "tool_args"]
        if len(texts) >= 2:
            return events[:texts[1] + 1]
        if args:
            return events[:args[0] + 1]
        return events[:2]

    def stream(self, events, fault, rng, b):
        self.start_stream()
        kind = fault.kind if fault else None
        if kind in ("cut", "reset"):
            k = fault.arg
            if k is None:  # default: through the first arguments fragment, else half the events
                args = [i for i, e in enumerate(events) if e[2] == "tool_args"]
                k = args[0] + 1 if args else len(events) // 2
            k = max(0, min(k, len(events) - 1))  # never the terminal event
            for ev in events[:k]:
                self.send_event(ev, rng)
            if kind == "reset":  # the body torn: no last chunk, then RST
                time.sleep(0.1)  # let the client read what was sent before the RST
                self.close_connection = True
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
            else:
                self.end_stream()
            return
        if kind in ("failed", "error-event", "context-event"):
            head = events[:2] if kind == "context-event" else self.head_events(events)
            for ev in head:
                self.send_event(ev, rng)
            seq = len(head)
            if kind == "failed":
                resp = b.response("failed", [], error={
                    "code": "server_error",
                    "message": "An error occurred while processing your request. You can retry your "
                               "request, or contact us through our help center at help.openai.com if "
                               f"the error persists. Please include the request ID {self.rid} in "
                               "your message."})
                ev = ("response.failed", {"type": "response.failed", "sequence_number": seq,
                                          "response": resp}, "end")
            elif kind == "context-event":
                ev = ("error", {"type": "error", "sequence_number": seq, "error": {
                    "type": "invalid_request_error", "code": "context_length_exceeded",
                    "message": CONTEXT_MSG, "param": "input"}}, "error")
            elif fault.arg == "flat":  # the shape openai-node's ResponseErrorEvent documents
                ev = ("error", {"type": "error", "sequence_number": seq, "code": "server_error",
                                "message": "The server had an error while processing your request. "
                                           "Sorry about that!", "param": None}, "error")
            else:  # the shape the API has been seen sending
                ev = ("error", {"type": "error", "sequence_number": seq, "error": {
                    "type": "server_error", "code": "server_error",
                    "message": "The server had an error while processing your request. Sorry about "
                               "that!", "param": None}}, "error")
            self.send_event(ev, rng)
            self.end_stream()
            return
        for k, ev in enumerate(events):
            self.send_event(ev, rng)
            if kind == "stall" and k == 0:
                time.sleep(fault.arg)
        self.end_stream()


def on_sigterm(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake OpenAI Responses API server for assay tests.")
    ap.add_argument("--script", required=True, help="scripted-model JSON ({\"turns\": [...]})")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--port-file", help="write the chosen port here once listening")
    ap.add_argument("--fault", action="append", default=[], help="KIND@N[:ARG], repeatable")
    ap.add_argument("--log", help="append one JSON line per POST")
    ap.add_argument("--key", help="require 'Authorization: Bearer KEY'")
    ap.add_argument("--models", help="comma-separated models the server knows; others get 404 "
                    "(default: any model)")
    ap.add_argument("--seed", type=int, help="seed for ids and chunk sizes (default random)")
    ap.add_argument("--delay-ms", type=float, default=1.0, help="pause after each write (default 1)")
    ap.add_argument("--secret", default=DEFAULT_SECRET,
                    help="key that signs reasoning.encrypted_content (default: a fixed one, so a "
                    "restarted server still accepts what an earlier one issued)")
    ap.add_argument("--lax-reasoning", action="store_true",
                    help="accept a function_call of a reasoning turn sent back without its "
                    "reasoning item (the real API does when the call carries no item id)")
    ap.add_argument("--unknown-content", action="store_true",
                    help="each answer also holds a web_search_call, text citing it and an item of "
                    "a made-up future type, with events of unknown types; those items must come "
                    "back unchanged with the calls of their answer")
    ap.add_argument("--images-dir", help="write each accepted image there, decoded, as "
                    "NNNN-<request no>.<ext>")
    ap.add_argument("--verbose", action="store_true", help="log HTTP requests on stderr")
    opts = ap.parse_args(argv)
    if opts.unknown_content:
        unknown_content_keys()
    if opts.models is not None:
        opts.models = [m.strip() for m in opts.models.split(",") if m.strip()]
        if not opts.models:
            print("fake_responses: --models needs at least one model name", file=sys.stderr)
            return 2
    if opts.seed is None:
        opts.seed = random.SystemRandom().getrandbits(32)
    try:
        script = load_script(opts.script)
        faults = [Fault(s) for s in opts.fault]
    except (OSError, ValueError) as e:
        print(f"fake_responses: {e}", file=sys.stderr)
        return 2
    ThreadingHTTPServer.block_on_close = False
    ThreadingHTTPServer.request_queue_size = 64
    srv = ThreadingHTTPServer((opts.host, opts.port), Handler)
    srv.daemon_threads = True
    srv.st = State(opts, script, faults)
    port = srv.server_address[1]
    signal.signal(signal.SIGTERM, on_sigterm)
    print(f"fake_responses: seed {opts.seed} (rerun with --seed {opts.seed} to get the same ids and "
          f"stream splits)", file=sys.stderr, flush=True)
    if opts.port_file:
        tmp = f"{opts.port_file}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, opts.port_file)
    print(f"fake_responses: listening on {opts.host}:{port} ({len(script)} turns)",
          file=sys.stderr, flush=True)
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
