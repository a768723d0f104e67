#!/usr/bin/env python3
"""Fake OpenAI Chat Completions server for assay's tests (stdlib only).

Validates each POST {prefix}/chat/completions the way the real API does,
answers from a scripted-model file as an SSE stream in the style of OpenAI,
Ollama, vLLM or llama.cpp, and injects faults on chosen request numbers.
See tests/fakes/README.md for the command line and the log format.
"""
import argparse
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

QUIRKS = ("openai", "ollama", "vllm", "llamacpp")
ROLES = ("system", "developer", "user", "assistant", "tool")
NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
EXHAUSTED = "(script exhausted)"
LLAMACPP_REASONING = "(thinking) I should look at the request before answering."
STATUS_FAULTS = ("429", "429ms", "quota", "500", "503", "401", "404", "context")
STREAM_FAULTS = ("cut", "reset", "error-event", "llamacpp-error", "stall")
ALNUM = string.ascii_letters + string.digits
MAX_CALL_ID = 40  # OpenAI's limit on messages[i].tool_calls[j].id
TURN_BY = ("assistants", "call-id")  # how a request's script turn is picked (--turn-by)
DEFAULT_CONTEXT = 128000  # the context length a `context` fault reports
# The top-level parameters POST /v1/chat/completions knows (openai-python
# CompletionCreateParams); anything else is "Unrecognized request argument".
KNOWN_PARAMS = frozenset((
    "model", "messages", "audio", "frequency_penalty", "function_call", "functions",
    "logit_bias", "logprobs", "max_completion_tokens", "max_tokens", "metadata", "modalities",
    "n", "parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key",
    "prompt_cache_retention", "reasoning_effort", "response_format", "safety_identifier",
    "seed", "service_tier", "stop", "store", "stream", "stream_options", "temperature",
    "tool_choice", "tools", "top_logprobs", "top_p", "user", "verbosity",
    "web_search_options"))
# Reasoning models take max_completion_tokens only (o1, o3, o4-mini, gpt-5 families).
REASONING_MODEL_RE = re.compile(r"^(o1|o3|o4-mini)($|-)|^gpt-5($|[.-])")
# Content part types by role: OpenAI's, then what the compatible servers parse,
# in any role (Ollama: openai/openai.go; vLLM: MM_PARSER_MAP in
# vllm/entrypoints/chat_utils.py; llama.cpp: its server's content parser).
OPENAI_PARTS = {"system": ("text",), "developer": ("text",),
                "user": ("text", "image_url", "input_audio", "file"),
                "assistant": ("text", "refusal"), "tool": ("text",)}
LAX_PARTS = {"ollama": ("text", "image_url"),
             "vllm": ("audio_embeds", "audio_url", "image_embeds", "image_pil", "image_url",
                      "input_audio", "input_image", "input_text", "output_text", "prompt_embeds",
                      "refusal", "text", "thinking", "tool_reference", "video_url"),
             "llamacpp": ("text", "image_url", "input_audio")}
# The field a part of each type must carry for OpenAI, and its JSON type.
PART_FIELD = {"text": ("text", str), "refusal": ("refusal", str), "image_url": ("image_url", dict),
              "input_audio": ("input_audio", dict), "file": ("file", dict)}


class ApiError(Exception):
    """An HTTP error answer: status plus an OpenAI-style error object."""

    def __init__(self, status, message, etype="invalid_request_error",
                 param=None, code=None, headers=(), extra=None, styled=True):
        super().__init__(message)
        self.status, self.message, self.etype = status, message, etype
        self.param, self.code, self.headers = param, code, list(headers)
        self.extra = extra or {}  # more fields for a llama.cpp error object
        self.styled = styled  # False: OpenAI-shaped whatever the quirk (an unknown URL)


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
    """For --turn-by call-id: {tool call id: index of the script turn that makes it}. Every
    call must fix its "id", and no id may be used twice."""
    out = {}
    for i, t in enumerate(turns):
        for j, c in enumerate(t["tool_calls"]):
            cid = c["id"]
            if not isinstance(cid, str) or not cid:
                raise ValueError(f"--turn-by call-id: turns[{i}].tool_calls[{j}].id must be a "
                                 "non-empty string")
            if cid in out:
                raise ValueError(f"--turn-by call-id: turns[{i}].tool_calls[{j}].id {cid!r} is "
                                 f"already used in turns[{out[cid]}]")
            out[cid] = i
    return out


def load_turns(turns):
    """The script's "turns", normalised."""
    out = []
    for i, t in enumerate(turns):
        if not isinstance(t, dict):
            raise ValueError(f"turns[{i}] must be an object")
        text = t.get("text") or ""
        if not isinstance(text, str):
            raise ValueError(f"turns[{i}].text must be a string")
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
        out.append({"text": text, "tool_calls": calls, "reasoning": t.get("reasoning"),
                    "usage": t.get("usage") or {}, "finish_reason": t.get("finish_reason")})
    return out


# ---------------------------------------------------------------- validation

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


def bad(param, message, code=None):
    raise ApiError(400, message, param=param, code=code)


def need(obj, key, param):
    if key not in obj or obj[key] is None and key != "content":
        bad(param, f"Missing required parameter: '{param}'.", "missing_required_parameter")
    return obj[key]


def want(param, ok, expected, v):
    if not ok:
        bad(param, f"Invalid type for '{param}': expected {expected}, but got {jtype(v)} instead.",
            "invalid_type")


def check_name(param, name):
    want(param, isinstance(name, str), "a string", name)
    if len(name) > 64:
        bad(param, f"Invalid '{param}': string too long. Expected a string with maximum length 64, "
                   f"but got a string with length {len(name)} instead.", "string_above_max_length")
    if not NAME_RE.match(name):
        bad(param, f"Invalid '{param}': string does not match pattern. Expected a string that "
                   f"matches the pattern '^[a-zA-Z0-9_-]+$', got {name!r}.", "invalid_value")


def supported(values):
    q = [f"'{v}'" for v in values]
    return q[0] if len(q) == 1 else ", ".join(q[:-1]) + ", and " + q[-1]


def check_parts(param, content, role, quirk):
    """Message content: a string or an array of typed parts, each of a type
    the server knows (OpenAI: by role, see OPENAI_PARTS)."""
    ok = isinstance(content, str) or (isinstance(content, list) and all(
        isinstance(p, dict) and isinstance(p.get("type"), str) for p in content))
    want(param, ok, "one of a string or array of objects", content)
    if isinstance(content, str):
        return
    for k, part in enumerate(content):
        pp, ptype = f"{param}[{k}]", part["type"]
        if quirk == "openai" and ptype == "image_url" and role != "user":
            mp = param[:-len(".content")]
            bad(mp, f"Invalid '{mp}'. Image URLs are only allowed for messages with role 'user', "
                f"but this message with role '{role}' contains an image URL.", "invalid_value")
        if quirk == "openai":
            known = OPENAI_PARTS[role]
            if ptype not in known:
                bad(pp + ".type", f"Invalid value for '{pp}.type': {ptype!r}. Supported values "
                    f"are: {supported(known)}.", "invalid_value")
        elif ptype not in LAX_PARTS[quirk]:
            if quirk == "ollama":
                bad(None, "invalid message format")
            if quirk == "vllm":
                bad("type", f"Unsupported chat content part type: {ptype!r}. Supported types: "
                    f"{', '.join(sorted(LAX_PARTS['vllm']))}.")
            bad(None, "unsupported content[].type")
        if quirk == "ollama" and ptype == "text" and not isinstance(part.get("text"), str):
            bad(None, "invalid message format")
        if quirk == "openai" and ptype in PART_FIELD:  # vLLM skips a part without its field
            field, ftype = PART_FIELD[ptype]
            need(part, field, f"{pp}.{field}")
            want(f"{pp}.{field}", isinstance(part[field], ftype),
                 "a string" if ftype is str else "an object", part[field])
        if ptype == "image_url":
            check_image_part(pp, part, quirk)


def check_image_part(pp, part, quirk):
    """An image_url part's image (a data URL): checked as the API checks it (fake_images.py);
    the compatible styles check the picture too, in their own words."""
    img = part.get("image_url")
    if quirk == "openai":
        url = need(img, "url", pp + ".image_url.url")
        want(pp + ".image_url.url", isinstance(url, str), "a string", url)
    else:  # Ollama also takes image_url as the URL itself; vLLM skips a part without it
        url = img.get("url") if isinstance(img, dict) else img
        if not isinstance(url, str):
            return
    detail = img.get("detail") if isinstance(img, dict) else None
    try:
        if quirk == "openai":
            detail = fake_images.check_detail(pp + ".image_url.detail", detail)
        fake_images.data_url(pp + ".image_url.url", url, detail, chat=True)
    except fake_images.Refused as e:
        if quirk == "ollama":
            bad(None, "invalid image input")
        if quirk != "openai":
            bad(None, e.message)
        bad(e.param, e.message, e.code)


def check_tool_call(p, tc, seen_ids, quirk):
    """One assistant tool_calls[i]; returns its id."""
    want(p, isinstance(tc, dict), "an object", tc)
    cid = need(tc, "id", p + ".id")
    want(p + ".id", isinstance(cid, str), "a string", cid)
    if not cid:
        bad(p + ".id", f"Invalid '{p}.id': empty string. Expected a string with minimum length 1, "
                       "but got an empty string instead.", "empty_string")
    if quirk == "openai" and len(cid) > MAX_CALL_ID:  # the compatible servers take any length
        bad(p + ".id", f"Invalid '{p}.id': string too long. Expected a string with maximum "
                       f"length {MAX_CALL_ID}, but got a string with length {len(cid)} instead.",
            "string_above_max_length")
    if cid in seen_ids:
        bad(p + ".id", f"Invalid '{p}.id': duplicate tool call id '{cid}' (already used by "
                       f"{seen_ids[cid]}).", "invalid_value")
    seen_ids[cid] = p
    ttype = need(tc, "type", p + ".type")
    if ttype != "function":
        bad(p + ".type", f"Invalid value for '{p}.type': {ttype!r}. Supported values are: "
                         "'function'.", "invalid_value")
    fn = need(tc, "function", p + ".function")
    want(p + ".function", isinstance(fn, dict), "an object", fn)
    check_name(p + ".function.name", need(fn, "name", p + ".function.name"))
    args = need(fn, "arguments", p + ".function.arguments")
    ap = p + ".function.arguments"
    want(ap, isinstance(args, str), "a string", args)
    try:
        parsed = json.loads(args)
    except ValueError as e:
        bad(ap, f"Invalid '{ap}': the string is not valid JSON ({e}): {args[:80]!r}.", "invalid_value")
    if not isinstance(parsed, dict):
        bad(ap, f"Invalid '{ap}': must be a JSON object encoded as a string, got {jtype(parsed)} "
                f"({args[:80]!r}).", "invalid_value")
    return cid


def validate_messages(req, quirk):
    msgs = need(req, "messages", "messages")
    want("messages", isinstance(msgs, list), "an array of objects", msgs)
    if not msgs:
        bad("messages", "Invalid 'messages': empty array. Expected an array with minimum length 1, "
                        "but got an empty array instead.", "empty_array")
    pending, answered, seen_ids, group_open = [], set(), {}, False
    for i, m in enumerate(msgs):
        p = f"messages[{i}]"
        want(p, isinstance(m, dict), "an object", m)
        role = need(m, "role", p + ".role")
        if role not in ROLES:
            bad(p + ".role", f"Invalid value for '{p}.role': {role!r}. Supported values are: "
                             "'system', 'developer', 'user', 'assistant', and 'tool'.", "invalid_value")
        if role != "tool":
            if pending:
                bad(f"messages.[{i}].role", "An assistant message with 'tool_calls' must be followed "
                    "by tool messages responding to each 'tool_call_id'. The following tool_call_ids "
                    f"did not have response messages: {', '.join(pending)}")
            group_open = False
        if role in ("system", "developer", "user"):
            need(m, "content", p + ".content")
            check_parts(p + ".content", m["content"], role, quirk)
        elif role == "assistant":
            tcs = m.get("tool_calls")
            if tcs is not None:
                want(p + ".tool_calls", isinstance(tcs, list), "an array", tcs)
                if not tcs:
                    bad(p + ".tool_calls", f"Invalid '{p}.tool_calls': empty array. Expected an array "
                        "with minimum length 1, but got an empty array instead.", "empty_array")
                for j, tc in enumerate(tcs):
                    pending.append(check_tool_call(f"{p}.tool_calls[{j}]", tc, seen_ids, quirk))
                group_open = True
            content = m.get("content")
            if content is None and not tcs:
                bad(p + ".content", f"Invalid value for '{p}.content': expected a string, got null "
                    "(an assistant message needs content or tool_calls).")
            if content is not None:
                check_parts(p + ".content", content, role, quirk)
        else:  # tool
            tcid = need(m, "tool_call_id", p + ".tool_call_id")
            want(p + ".tool_call_id", isinstance(tcid, str), "a string", tcid)
            if "content" not in m:
                bad(p + ".content", f"Missing required parameter: '{p}.content'.",
                    "missing_required_parameter")
            if isinstance(m["content"], list):  # an array of text parts is allowed too
                check_parts(p + ".content", m["content"], role, quirk)
            else:
                want(p + ".content", isinstance(m["content"], str), "a string", m["content"])
            if not group_open:
                bad(f"messages.[{i}].role", "Invalid parameter: messages with role 'tool' must be a "
                    "response to a preceeding message with 'tool_calls'.")
            if tcid in answered:
                bad(f"messages.[{i}].tool_call_id", f"Invalid parameter: duplicate tool message for "
                    f"tool_call_id '{tcid}' at {p}.")
            if tcid not in pending:
                bad(f"messages.[{i}].tool_call_id", f"Invalid parameter: 'tool_call_id' of '{tcid}' "
                    "not found in 'tool_calls' of previous message.")
            pending.remove(tcid)
            answered.add(tcid)
    if pending:
        bad("messages", "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have response "
            f"messages: {', '.join(pending)}")
    return msgs


def validate_tools(req):
    """Returns the offered tool names, or None when no tools are sent."""
    tools = req.get("tools")
    if tools is None:
        return None
    want("tools", isinstance(tools, list), "an array", tools)
    if not tools:
        bad("tools", "Invalid 'tools': empty array. Expected an array with minimum length 1, but got "
                     "an empty array instead.", "empty_array")
    names = []
    for i, t in enumerate(tools):
        p = f"tools[{i}]"
        want(p, isinstance(t, dict), "an object", t)
        if need(t, "type", p + ".type") != "function":
            bad(p + ".type", f"Invalid value for '{p}.type': {t['type']!r}. Supported values "
                             "are: 'function'.", "invalid_value")
        fn = need(t, "function", p + ".function")
        want(p + ".function", isinstance(fn, dict), "an object", fn)
        name = need(fn, "name", p + ".function.name")
        check_name(p + ".function.name", name)
        if fn.get("description") is not None:
            want(p + ".function.description", isinstance(fn["description"], str), "a string",
                 fn["description"])
        params = need(fn, "parameters", p + ".function.parameters")
        want(p + ".function.parameters", isinstance(params, dict), "an object", params)
        if params.get("type") != "object":
            bad(p + ".function.parameters", f"Invalid schema for function '{name}': schema must be a "
                f"JSON Schema of 'type: \"object\"', got 'type: \"{params.get('type')}\"'.",
                "invalid_function_parameters")
        if "properties" in params:
            want(p + ".function.parameters.properties", isinstance(params["properties"], dict),
                 "an object", params["properties"])
        if "required" in params:
            req_ = params["required"]
            want(p + ".function.parameters.required", isinstance(req_, list) and
                 all(isinstance(x, str) for x in req_), "an array of strings", req_)
        if name in names:
            bad("tools", f"Invalid 'tools': duplicate function name '{name}'.", "invalid_value")
        names.append(name)
    return names


def model_not_found(model, quirk):
    """The 404 a server answers for a model it does not serve."""
    if quirk == "ollama":
        return ApiError(404, f'model "{model}" not found, try pulling it first', "not_found_error")
    if quirk == "vllm":
        return ApiError(404, f"The model `{model}` does not exist.", "NotFoundError", param="model")
    if quirk == "llamacpp":
        return ApiError(404, "model not found", "not_found_error")
    return ApiError(404, f"The model '{model}' does not exist or you do not have access to it.",
                    code="model_not_found")


def context_exceeded(limit, tokens, quirk):
    """The 400 a server answers for a prompt over its context length."""
    if quirk == "vllm":
        return ApiError(400, f"This model's maximum context length is {limit} tokens. However, "
                        f"your request has {tokens} input tokens. Please reduce the length of the "
                        "input messages.", "BadRequestError", param="input_tokens")
    if quirk == "llamacpp":
        return ApiError(400, f"request ({tokens} tokens) exceeds the available context size "
                        f"({limit} tokens), try increasing it", "exceed_context_size_error",
                        extra={"n_prompt_tokens": tokens, "n_ctx": limit})
    return ApiError(400, f"This model's maximum context length is {limit} tokens. However, your "
                    f"messages resulted in {tokens} tokens. Please reduce the length of the "
                    "messages.", param="messages", code="context_length_exceeded")


def validate(req, quirk="openai", models=None):
    """Checks a decoded request; returns (tool names, include_usage)."""
    want("body", isinstance(req, dict), "an object", req)
    if req.get("model") is None:
        bad(None, "you must provide a model parameter")
    want("model", isinstance(req["model"], str) and req["model"] != "", "a non-empty string",
         req["model"])
    if quirk == "openai":  # Ollama, vLLM and llama.cpp ignore the parameters they do not know
        unknown = [k for k in req if k not in KNOWN_PARAMS]
        if len(unknown) == 1:
            bad(None, f"Unrecognized request argument supplied: {unknown[0]}")
        if unknown:
            bad(None, f"Unrecognized request arguments supplied: {', '.join(unknown)}")
        if req.get("max_tokens") is not None and REASONING_MODEL_RE.match(req["model"]):
            bad("max_tokens", "Unsupported parameter: 'max_tokens' is not supported with this "
                "model. Use 'max_completion_tokens' instead.", "unsupported_parameter")
    if models is not None and req["model"] not in models:
        raise model_not_found(req["model"], quirk)
    validate_messages(req, quirk)
    names = validate_tools(req)
    for key in ("tool_choice", "parallel_tool_calls"):
        if req.get(key) is not None and names is None:
            bad(key, f"Invalid value for '{key}': '{key}' is only allowed when 'tools' are specified.")
    tc = req.get("tool_choice")
    if isinstance(tc, str):
        if tc not in ("none", "auto", "required"):
            bad("tool_choice", f"Invalid value for 'tool_choice': {tc!r}. Supported values are: "
                               "'none', 'auto', and 'required'.", "invalid_value")
    elif isinstance(tc, dict):
        fname = (tc.get("function") or {}).get("name") if tc.get("type") == "function" else None
        if fname not in names:
            bad("tool_choice", f"Invalid 'tool_choice': must name a function offered in 'tools', "
                               f"got {json.dumps(tc)}.", "invalid_value")
    elif tc is not None:
        want("tool_choice", False, "a string or an object", tc)
    if req.get("parallel_tool_calls") is not None:
        want("parallel_tool_calls", isinstance(req["parallel_tool_calls"], bool), "a boolean",
             req["parallel_tool_calls"])
    so = req.get("stream_options")
    if so is not None:
        if req.get("stream") is not True:
            bad("stream_options", "The 'stream_options' parameter is only allowed when 'stream' "
                                  "is enabled.")
        want("stream_options", isinstance(so, dict), "an object", so)
        if "include_usage" in so:
            want("stream_options.include_usage", isinstance(so["include_usage"], bool), "a boolean",
                 so["include_usage"])
    if req.get("stream") is not True:
        bad("stream", "fake_openai only answers streaming requests: 'stream' must be true, got "
                      f"{json.dumps(req.get('stream'))}.", "invalid_value")
    for key in ("max_tokens", "max_completion_tokens"):
        v = req.get(key)
        if v is not None:
            want(key, isinstance(v, int) and not isinstance(v, bool), "an integer", v)
            if v < 1:
                bad(key, f"Invalid '{key}': integer below minimum value. Expected a value >= 1, but "
                         f"got {v} instead.", "integer_below_min_value")
    return names, bool(so and so.get("include_usage"))


# ---------------------------------------------------------------- the answer: which turn

def prompt_tokens(msgs):
    """The prompt's size in tokens: what usage reports and --max-context is compared with
    (an image counts by its size, as OpenAI counts it, not by its base64)."""
    light, images = fake_images.weigh(msgs, fake_images.openai_tokens)
    return max(1, len(json.dumps(light)) // 4) + images


def latest_call(msgs):
    """The most recent tool call of a history: (message index, call index, id) of the last call
    of the last assistant message that has tool calls, or None when there is none."""
    for i in range(len(msgs) - 1, -1, -1):
        m = msgs[i]
        tcs = m.get("tool_calls") if isinstance(m, dict) and m.get("role") == "assistant" else None
        if isinstance(tcs, list) and tcs:
            tc = tcs[-1]
            return i, len(tcs) - 1, tc.get("id") if isinstance(tc, dict) else None
    return None


def turn_index(msgs, turn_by, by_call):
    """The script turn a request is answered from. assistants: the number of assistant messages.
    call-id: 1 + the turn that made the latest tool call (by_call: id -> turn), plus the
    assistant messages after the one carrying it; with no call at all, the number of assistant
    messages, as by assistants. A latest call id in no script turn is a 400."""
    found = latest_call(msgs) if turn_by == "call-id" else None
    first = found[0] + 1 if found else 0
    after = sum(1 for m in msgs[first:] if isinstance(m, dict) and m.get("role") == "assistant")
    if found is None:
        return after
    i, j, cid = found
    if not isinstance(cid, str) or cid not in by_call:
        bad(f"messages[{i}].tool_calls[{j}].id", f"fake_openai: tool call id {json.dumps(cid)} "
            f"(messages[{i}].tool_calls[{j}].id, the latest in the request) is in no script turn "
            "(--turn-by call-id).", "invalid_value")
    return by_call[cid] + 1 + after


def log_turn_index(msgs, turn_by, by_call):
    """turn_index for the log of a request not yet validated (None when it cannot be told)."""
    try:
        return turn_index(msgs, turn_by, by_call)
    except ApiError:
        return None


def message_text(content):
    """The text of a message's content: a string, or its text parts joined by newlines."""
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content if p.get("type") == "text"
                     and isinstance(p.get("text"), str))


def asks_summary(msgs, summary):
    """Whether the script's summary answers: the last message is a user message whose text
    contains summary["when"]."""
    last = msgs[-1]
    return summary is not None and last["role"] == "user" \
        and summary["when"] in message_text(last["content"])


def script_turn(script, idx):
    return script[idx] if idx < len(script) else {
        "text": EXHAUSTED, "tool_calls": [], "reasoning": None, "usage": {}, "finish_reason": None}


def summary_turn(summary):
    return {"text": summary["text"], "tool_calls": [], "reasoning": None, "usage": {},
            "finish_reason": None}


def check_offered(turn, idx, names):
    """When the turn calls a tool, the request must offer it (a fake-only 400)."""
    for c in turn["tool_calls"]:
        if names is None or c["name"] not in names:
            offered = ", ".join(names) if names else "no 'tools' at all"
            bad("tools", f"fake_openai: script turn {idx} calls tool '{c['name']}' but the request "
                         f"offers {offered}.", "invalid_value")


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
    """Turns one scripted turn into a list of SSE events in a quirk's style.

    Each event is (kind, payload, tag): kind data|done|comment|raw; tag says
    what the event carries so faults can cut at a meaningful place."""

    def __init__(self, quirk, rng, model, turn, include_usage, prompt_tokens, unknown=False):
        self.quirk, self.rng, self.model, self.turn = quirk, rng, model, turn
        self.unknown = unknown  # --unknown-content
        self.custom_id = None
        self.include_usage, self.prompt_tokens = include_usage, prompt_tokens
        self.cid = "chatcmpl-" + "".join(rng.choice(ALNUM) for _ in range(29))
        self.created = int(time.time())
        self.events = []
        self.ids = [c["id"] or self.call_id() for c in turn["tool_calls"]]

    def call_id(self):
        r = self.rng
        if self.quirk == "llamacpp":
            return "".join(r.choice(ALNUM) for _ in range(32))
        if self.quirk == "vllm":
            return "chatcmpl-tool-" + "%032x" % r.getrandbits(128)
        if self.quirk == "ollama":
            return "call_" + "".join(r.choice(string.ascii_lowercase + string.digits) for _ in range(8))
        return "call_" + "".join(r.choice(ALNUM) for _ in range(24))

    def chunk(self, choices, **extra):
        o = {"id": self.cid, "object": "chat.completion.chunk", "created": self.created,
             "model": self.model}
        if self.quirk == "openai":
            o["service_tier"] = "default"
            o["system_fingerprint"] = "fp_fake0001"
        elif self.quirk == "ollama":
            o["system_fingerprint"] = "fp_ollama"
        elif self.quirk == "llamacpp":
            o["system_fingerprint"] = "b4600-fake"
        o["choices"] = choices
        if self.quirk == "openai" and self.include_usage:
            o["usage"] = None
        o.update(extra)
        if self.quirk == "openai":
            o["obfuscation"] = "".join(self.rng.choice(ALNUM) for _ in range(self.rng.randint(1, 9)))
        return o

    def add(self, tag, delta, finish=None, **extra):
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        if self.quirk == "openai":
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        self.events.append(("data", self.chunk([choice], **extra), tag))

    def finish_reason(self):
        return self.turn["finish_reason"] or ("tool_calls" if self.turn["tool_calls"] else "stop")

    def usage(self):
        u, t = self.turn["usage"], self.turn
        out_chars = len(t["text"]) + sum(len(c["arguments"]) + len(c["name"]) for c in t["tool_calls"])
        pt = u.get("prompt_tokens", self.prompt_tokens)
        ct = u.get("completion_tokens", max(1, out_chars // 4))
        return {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct,
                "prompt_tokens_details": {"cached_tokens": u.get("cached_tokens", 0), "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": u.get("reasoning_tokens", 0),
                                              "audio_tokens": 0}}

    def usage_chunk(self):
        if self.include_usage:
            self.events.append(("data", self.chunk([], usage=self.usage()), "usage"))

    def build(self):
        getattr(self, "build_" + self.quirk)()
        return self.events

    def build_unknown(self):
        """--unknown-content: a chunk of an unknown object type, text deltas with unknown fields,
        and a tool call of type custom (not a function) whose later fragments also carry
        function.arguments, as a relaying server might: none of it may become a call."""
        r = self.rng
        self.events.append(("data", dict(self.chunk([]), object="chat.completion.future",
                                         future={"note": "ignore me"}), "unknown"))
        for p in split_text("Searching. ", r, 1, 5):
            self.add("text", {"content": p, "annotations": [], "future_field": {"n": 1}})
        self.custom_id = self.call_id()
        self.add("custom_start", {"tool_calls": [{"index": 0, "id": self.custom_id, "type": "custom",
                                                  "custom": {"name": "grammar_tool", "input": ""}}]})
        for frag in split_args('{"grammar":"x"}', r):
            self.add("custom_args", {"tool_calls": [{"index": 0, "custom": {"input": frag},
                                                     "function": {"arguments": frag}}]})

    def build_openai(self):
        t, r = self.turn, self.rng
        calls = t["tool_calls"]
        base = 1 if self.unknown else 0  # the index of the first function call
        if t["text"] or not calls or self.unknown:
            self.add("role", {"role": "assistant", "content": "", "refusal": None})
        if self.unknown:
            self.build_unknown()
        for p in split_text(t["text"], r, 1, 5):
            self.add("text", {"content": p})
        for i, c in enumerate(calls):
            first = {"index": base + i, "id": self.ids[i], "type": "function",
                     "function": {"name": c["name"], "arguments": ""}}
            if i == 0 and not t["text"] and not self.unknown:  # role rides on the first call chunk
                self.add("tool_start", {"role": "assistant", "content": None,
                                        "tool_calls": [first], "refusal": None})
            else:
                self.add("tool_start", {"tool_calls": [first]})
            for frag in split_args(c["arguments"], r):
                self.add("tool_args", {"tool_calls": [{"index": base + i,
                                                        "function": {"arguments": frag}}]})
        self.add("finish", {}, self.finish_reason())
        self.usage_chunk()
        self.events.append(("done", None, "done"))

    def build_ollama(self):
        t = self.turn
        deltas = [("reasoning", {"role": "assistant", "content": "", "reasoning": p})
                  for p in split_text(t["reasoning"] or "", self.rng, 2, 8)]
        deltas += [("text", {"role": "assistant", "content": p})
                   for p in split_text(t["text"], self.rng, 1, 6)]
        for i, c in enumerate(t["tool_calls"]):  # whole call, every call at index 0
            deltas.append(("tool_whole", {"role": "assistant", "content": "", "tool_calls": [
                {"id": self.ids[i], "index": 0, "type": "function",
                 "function": {"name": c["name"], "arguments": c["arguments"]}}]}))
        if not deltas:
            deltas.append(("text", {"role": "assistant", "content": ""}))
        for k, (tag, d) in enumerate(deltas):
            last = k == len(deltas) - 1
            self.add(tag, d, self.finish_reason() if last else None)
        self.usage_chunk()
        self.events.append(("done", None, "done"))

    def build_vllm(self):
        t, r = self.turn, self.rng
        self.add("role", {"role": "assistant", "content": ""})
        for p in split_text(t["reasoning"] or "", r, 2, 8):
            self.add("reasoning", {"reasoning_content": p})
        for p in split_text(t["text"], r, 1, 5):
            self.add("text", {"content": p})
        for i, c in enumerate(t["tool_calls"]):
            self.add("tool_start", {"content": None, "tool_calls": [
                {"index": i, "id": self.ids[i], "type": "function", "function": {"name": c["name"]}}]})
            if c["arguments"].strip() in ("{}", ""):
                continue  # a call without parameters never sends 'arguments'
            for k, frag in enumerate(split_args(c["arguments"], r)):
                tc = {"index": i, "function": {"arguments": frag}}
                if k % 2 == 0:
                    tc["id"] = ""
                self.add("tool_args", {"content": None, "tool_calls": [tc]})
        self.add("finish", {"content": ""}, self.finish_reason())
        self.usage_chunk()  # and no [DONE]

    def build_llamacpp(self):
        t, r = self.turn, self.rng
        self.add("role", {"role": "assistant", "content": None})
        for p in split_text(t["reasoning"] or LLAMACPP_REASONING, r, 2, 8):
            self.add("reasoning", {"reasoning_content": p, "content": None})
        for p in split_text(t["text"], r, 1, 5):
            self.add("text", {"content": p})
        for i, c in enumerate(t["tool_calls"]):
            self.add("tool_start", {"tool_calls": [{"index": i, "id": self.ids[i], "type": "function",
                                                    "function": {"name": c["name"], "arguments": ""}}]})
            for frag in split_args(c["arguments"], r):
                self.add("tool_args", {"tool_calls": [{"index": i, "function": {"arguments": frag}}]})
        u = self.usage()
        pn, cn = u["prompt_tokens"], u["completion_tokens"]
        timings = {"prompt_n": pn, "prompt_ms": pn * 0.5, "prompt_per_token_ms": 0.5,
                   "prompt_per_second": 2000.0, "predicted_n": cn, "predicted_ms": cn * 20.0,
                   "predicted_per_token_ms": 20.0, "predicted_per_second": 50.0}
        self.add("finish", {}, self.finish_reason(), usage=u, timings=timings)
        self.events.append(("done", None, "done"))
        with_pings = []
        for k, ev in enumerate(self.events):
            with_pings.append(ev)
            if k % 3 == 2:
                with_pings.append(("comment", "ping", "ping"))
        self.events = with_pings


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
            elif self.kind == "404" and arg is not None:
                raise ValueError
            elif self.kind == "stall":
                self.arg = float(arg if arg is not None else 30)
            elif self.kind == "429ms" and arg is not None:
                int(arg)
        except ValueError:
            raise ValueError(f"bad argument {arg!r} in fault {spec!r}")


def fault_answer(f, key_seen, model, tokens, quirk):
    """The ApiError a status fault answers with (model and prompt tokens: the request's)."""
    if f.kind == "404":
        return model_not_found(model, quirk)
    if f.kind == "context":
        return context_exceeded(f.arg, max(tokens, f.arg + 1), quirk)
    if f.kind == "429":
        return ApiError(429, "Rate limit reached for requests", "requests", code="rate_limit_exceeded",
                        headers=[("retry-after", f.arg or "1"), ("x-ratelimit-limit-requests", "60"),
                                 ("x-ratelimit-remaining-requests", "0"),
                                 ("x-ratelimit-reset-requests", "1s")])
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


def mask(key):
    if len(key) <= 8:
        return "*" * len(key)
    return key[:3] + "*" * (len(key) - 7) + key[-4:]


# ---------------------------------------------------------------- HTTP

class State:
    def __init__(self, opts, script, faults, summary=None, by_call=None):
        self.opts, self.script, self.faults = opts, script, faults
        self.summary, self.by_call = summary, by_call or {}
        self.lock = threading.Lock()
        self.n = 0
        self.by_status = {}
        self.seed = opts.seed
        self.custom_ids = set()  # --unknown-content: ids of the custom calls streamed
        self.sink = fake_images.Sink(opts.images_dir)

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

    def check_no_custom(self, msgs):
        """--unknown-content: a custom tool call this fake streamed is not a function call; sent
        back as one (or answered by a tool message) it is refused."""
        with self.lock:
            custom = set(self.custom_ids)
        for i, m in enumerate(msgs):
            calls = m.get("tool_calls") if isinstance(m, dict) else None
            for j, tc in enumerate(calls if isinstance(calls, list) else []):
                if isinstance(tc, dict) and tc.get("id") in custom:
                    p = f"messages[{i}].tool_calls[{j}]"
                    bad(p, f"Invalid '{p}': tool call '{tc['id']}' was a custom tool call (type "
                        "'custom'), not a function call (--unknown-content).", "invalid_value")

    def fault_for(self, n):
        return next((f for f in self.faults if n in f.requests), None)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-openai/1.0"
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

    def error_body(self, e):
        q = self.server.st.opts.quirks
        if q == "vllm" and e.status in (400, 404, 500, 503) and e.styled:
            etype = {400: "BadRequestError", 404: "NotFoundError"}.get(e.status, "InternalServerError")
            return {"object": "error", "message": e.message, "type": etype,
                    "param": e.param, "code": e.status}
        if q == "llamacpp" and e.status in (400, 404, 500, 503) and e.styled:
            return {"error": {"code": e.status, "message": e.message, "type": e.etype, **e.extra}}
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
                return self.send_json(200, {"requests": st.n, "by_status": dict(st.by_status)})
        if path.endswith("/models"):
            try:
                self.bearer()
            except ApiError as e:
                return self.send_json(e.status, self.error_body(e))
            return self.send_json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake-openai"}
                for m in (st.opts.models or ["fake-model"])]})
        self.send_json(404, self.error_body(ApiError(404, f"Invalid URL (GET {path})", styled=False)))

    # -- POST: the chat completions endpoint
    def do_POST(self):
        t = time.time()
        st = self.server.st
        n = st.next_n()
        self.rid = "req_%032x" % random.getrandbits(128)
        path = urlsplit(self.path).path
        entry = {"n": n, "path": path, "model": None, "n_messages": None, "turn_index": None,
                 "status": None, "fault": None, "t": round(t, 6), "seed": st.seed}
        try:
            try:
                raw = self.read_body()
            except ValueError as e:
                self.close_connection = True
                raise ApiError(400, f"Could not read the request body: {e}.")
            if st.opts.latency_ms:  # a model's time to its first token
                time.sleep(st.opts.latency_ms / 1000.0)
            self.answer(n, path, raw, entry)
        except ApiError as e:
            entry["status"], entry["error"] = e.status, e.message
            st.record(entry)
            self.send_json(e.status, self.error_body(e), e.headers)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def answer(self, n, path, raw, entry):
        st = self.server.st
        if not path.endswith("/chat/completions"):
            raise ApiError(404, f"Invalid URL (POST {path})", styled=False)
        key = self.bearer()
        req = None
        try:
            req = json.loads(raw.decode("utf-8"))
        except ValueError:
            pass
        if isinstance(req, dict):  # for the log, even when the request is invalid
            entry["model"] = req.get("model")
            if isinstance(req.get("messages"), list):
                msgs = req["messages"]
                entry["n_messages"] = len(msgs)
                entry["turn_index"] = log_turn_index(msgs, st.opts.turn_by, st.by_call)
        fault = st.fault_for(n)
        if fault and fault.kind in STATUS_FAULTS:
            entry["fault"] = fault.spec
            model = entry["model"] if isinstance(entry["model"], str) else "unknown"
            msgs = req.get("messages") if isinstance(req, dict) else None
            tokens = prompt_tokens(msgs) if msgs is not None else max(1, len(raw) // 4)
            raise fault_answer(fault, key, model, tokens, st.opts.quirks)
        ctype = self.headers.get("Content-Type", "")
        if ctype.split(";")[0].strip().lower() != "application/json":
            raise ApiError(400, f"Invalid Content-Type header {ctype!r}: expected 'application/json'.")
        try:
            req = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise ApiError(400, "We could not parse the JSON body of your request. (HINT: This likely "
                           "means you aren't using your HTTP library correctly. The OpenAI API "
                           f"expects a JSON payload, but what was sent was not valid JSON.) ({e})")
        fake_images.begin()
        names, include_usage = validate(req, st.opts.quirks, st.opts.models)
        msgs = req["messages"]
        if st.opts.unknown_content:
            st.check_no_custom(msgs)
        tokens = entry["prompt_tokens"] = prompt_tokens(msgs)
        if st.opts.max_context and tokens > st.opts.max_context:
            raise context_exceeded(st.opts.max_context, tokens, st.opts.quirks)
        entry.update(fake_images.log_fields(st.sink.save(n, fake_images.collected())))
        if asks_summary(msgs, st.summary):
            turn, entry["turn_index"], entry["summary"] = summary_turn(st.summary), None, True
        else:
            idx = entry["turn_index"] = turn_index(msgs, st.opts.turn_by, st.by_call)
            turn = script_turn(st.script, idx)
            check_offered(turn, idx, names)
            entry["summary"] = False
        rng = random.Random(st.seed * 1000003 + n)
        b = Builder(st.opts.quirks, rng, req["model"], turn, include_usage, tokens,
                    st.opts.unknown_content)
        events = b.build()
        if b.custom_id:
            with st.lock:
                st.custom_ids.add(b.custom_id)
        entry["tool_call_ids"] = b.ids
        if fault:
            entry["fault"] = fault.spec
        entry["status"] = 200
        st.record(entry)
        self.stream(events, fault, rng)

    def start_stream(self):
        ctype = "text/event-stream"
        if self.server.st.opts.quirks == "openai":
            ctype += "; charset=utf-8"
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("x-request-id", self.rid)
        self.send_header("Connection", "close")
        self.end_headers()

    def frame(self, ev):
        kind, payload, _ = ev
        nl = "\r\n" if self.server.st.opts.quirks == "llamacpp" else "\n"
        if kind == "data":
            return f"data: {json.dumps(payload, ensure_ascii=False, separators=(',', ':'))}{nl}{nl}"
        if kind == "done":
            return f"data: [DONE]{nl}{nl}"
        if kind == "comment":
            return f": {payload}{nl}{nl}"
        return payload.replace("\n", nl)

    def send_event(self, ev, rng):
        """Writes one event in two small writes, splitting inside a UTF-8 sequence if it has one."""
        data = self.frame(ev).encode("utf-8")
        delay = self.server.st.opts.delay_ms / 1000.0
        cont = next((i for i, c in enumerate(data) if 0x80 <= c < 0xC0), None)
        cut = cont if cont is not None else rng.randint(1, max(1, len(data) - 1))
        for piece in (data[:cut], data[cut:]):
            if piece:
                self.wfile.write(piece)
                if delay:
                    time.sleep(delay)

    def stream(self, events, fault, rng):
        self.start_stream()
        kind = fault.kind if fault else None
        data_pos = [i for i, e in enumerate(events) if e[0] == "data"]
        if kind in ("cut", "reset"):
            k = fault.arg
            if k is None:  # default: mid-way through the first tool call's arguments, else half
                args = [j for j, i in enumerate(data_pos) if events[i][2] == "tool_args"]
                k = args[0] + 1 if args else len(data_pos) // 2
                fin = [j for j, i in enumerate(data_pos) if events[i][1]["choices"]
                       and events[i][1]["choices"][0].get("finish_reason")]
                if fin:
                    k = min(k, fin[0])
            k = max(0, min(k, len(data_pos)))
            end = data_pos[k - 1] + 1 if k else 0  # through the k-th data event
            for ev in events[:end]:
                self.send_event(ev, rng)
            if kind == "reset":
                time.sleep(0.1)  # let the client read what was sent before the RST
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
            return
        if kind in ("error-event", "llamacpp-error"):
            head = [e for e in events if e[2] in ("role", "text")][:3]
            if sum(1 for e in head if e[2] == "text") < 2:
                b = Builder(self.server.st.opts.quirks, rng, "x", {"text": "", "tool_calls": []},
                            False, 0)
                b.add("text", {"content": "Working"})
                b.add("text", {"content": " on it"})
                head += b.events
            for ev in head:
                self.send_event(ev, rng)
            if kind == "error-event":
                self.send_event(("data", {"error": {
                    "message": "The server had an error while processing your request.",
                    "type": "server_error", "param": None, "code": None}}, "error"), rng)
            else:
                err = {"code": 500, "message": "llama_decode failed: the context window is full",
                       "type": "server_error"}
                self.send_event(("raw", f"error: {json.dumps(err)}\n\n", "error"), rng)
            return
        for k, ev in enumerate(events):
            self.send_event(ev, rng)
            if kind == "stall" and k == 0:
                time.sleep(fault.arg)


def on_sigterm(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake OpenAI Chat Completions server for assay tests.")
    ap.add_argument("--script", required=True, help="scripted-model JSON ({\"turns\": [...]})")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--port-file", help="write the chosen port here once listening")
    ap.add_argument("--quirks", choices=QUIRKS, default="openai")
    ap.add_argument("--fault", action="append", default=[], help="KIND@N[:ARG], repeatable")
    ap.add_argument("--log", help="append one JSON line per POST")
    ap.add_argument("--key", help="require 'Authorization: Bearer KEY'")
    ap.add_argument("--models", help="comma-separated models the server knows; others get 404 "
                    "(default: any model)")
    ap.add_argument("--seed", type=int, help="seed for ids and chunk sizes (default random)")
    ap.add_argument("--delay-ms", type=float, default=1.0, help="pause after each write (default 1)")
    ap.add_argument("--latency-ms", type=float, default=0,
                    help="pause before answering each request (a model's latency; default 0)")
    ap.add_argument("--max-context", type=int, default=0,
                    help="refuse prompts over this many tokens (JSON of messages / 4) with the "
                    "style's context-length 400 (default 0: no limit)")
    ap.add_argument("--turn-by", choices=TURN_BY, default="assistants",
                    help="pick the script turn by the number of assistant messages (default) or "
                    "by the latest tool call id (call-id: the script's calls fix their ids)")
    ap.add_argument("--unknown-content", action="store_true",
                    help="(style openai) each answer also holds a chunk of an unknown object "
                    "type, text deltas with unknown fields and a tool call of type custom; "
                    "sending that call back as a function call is refused")
    ap.add_argument("--images-dir", help="write each accepted image there, decoded, as "
                    "NNNN-<request no>.<ext>")
    ap.add_argument("--verbose", action="store_true", help="log HTTP requests on stderr")
    opts = ap.parse_args(argv)
    if opts.unknown_content and opts.quirks != "openai":
        print("fake_openai: --unknown-content needs --quirks openai", file=sys.stderr)
        return 2
    if opts.models is not None:
        opts.models = [m.strip() for m in opts.models.split(",") if m.strip()]
        if not opts.models:
            print("fake_openai: --models needs at least one model name", file=sys.stderr)
            return 2
    if opts.max_context < 0:
        print("fake_openai: --max-context must be 0 (no limit) or more", file=sys.stderr)
        return 2
    if opts.seed is None:
        opts.seed = random.SystemRandom().getrandbits(32)
    try:
        script, summary = load_script(opts.script)
        by_call = call_turns(script) if opts.turn_by == "call-id" else {}
        faults = [Fault(s) for s in opts.fault]
    except (OSError, ValueError) as e:
        print(f"fake_openai: {e}", file=sys.stderr)
        return 2
    ThreadingHTTPServer.block_on_close = False
    ThreadingHTTPServer.request_queue_size = 64
    srv = ThreadingHTTPServer((opts.host, opts.port), Handler)
    srv.daemon_threads = True
    srv.st = State(opts, script, faults, summary, by_call)
    port = srv.server_address[1]
    signal.signal(signal.SIGTERM, on_sigterm)
    print(f"fake_openai: seed {opts.seed} (rerun with --seed {opts.seed} to get the same ids and "
          f"stream splits)", file=sys.stderr, flush=True)
    if opts.port_file:
        tmp = f"{opts.port_file}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, opts.port_file)
    print(f"fake_openai: listening on {opts.host}:{port} ({opts.quirks}, {len(script)} turns)",
          file=sys.stderr, flush=True)
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
