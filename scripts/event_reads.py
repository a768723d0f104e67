"""event_reads: where a file reads an event field by string key, for
scripts/check-shape and scripts/shape-count-event-reads.

An event field is a name in src/agent/events.c's field table
([EVF_X] = "x"). A read by string key is a getter (json_str, json_num,
json_bool, cJSON_GetObjectItem, cJSON_GetObjectItemCaseSensitive,
cJSON_HasObjectItem) whose key argument is such a name as a string
literal, in a file of the layers that observe events (src/tui, src/cli,
src/agent), outside events.c. Those files read events through events.h's
typed readers (ev_str(ev, EVF_ID, ...)).

Some JSON there is not an event but shares names with one (a tool's own
arguments, a sandbox listing, a project's trust report, an eval suite):
a function that reads such JSON says so with the words "not an event" in
the comment above it or in its body (a file that reads no events: in its
opening comment), and its reads are not counted."""
import os
import re

LAYERS = ("src/tui/", "src/cli/", "src/agent/")
OWNER = "src/agent/events.c"
MARK = "not an event"
GETTER = re.compile(r"\b(json_str|json_num|json_bool|cJSON_GetObjectItem"
                    r"|cJSON_GetObjectItemCaseSensitive|cJSON_HasObjectItem)"
                    r"\s*\(")


def field_names(root):
    text = open(os.path.join(root, OWNER), encoding="utf-8").read()
    return set(re.findall(r'\[EVF_[A-Z0-9_]+\] = "([a-z0-9_]+)"', text))


# a block comment (to its end, or the file's), a line comment or a
# string (to its closing quote, or the file's end), found left to right
# as a scan would
_TOKEN = re.compile(r'/\*.*?(?:\*/|\Z)|//[^\n]*|"(?:[^"\\]|\\.|\\\Z)*(?:"|\Z)', re.S)
_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank_comments(text):
    # comments become spaces (line structure kept); strings are kept
    return _TOKEN.sub(lambda m: m.group() if m.group()[0] == '"'
                      else _NOT_NEWLINE.sub(" ", m.group()), text)


def _marked_lines(lines):
    # the line numbers (0-based) of functions that say they read JSON
    # that is not an event: from the blank line above a function (its
    # comment included) to its closing brace
    marked, start = set(), 0
    for i, line in enumerate(lines):
        if line.strip() == "":
            start = i
        elif line.startswith("}"):
            if any(MARK in l for l in lines[start:i + 1]):
                marked.update(range(start, i + 1))
            start = i + 1
    return marked


def reads(root, fields=None, layers=LAYERS):
    """Every read by string key: (rel, line, key, marked)."""
    fields = fields if fields is not None else field_names(root)
    found = []
    for layer in layers:
        d = os.path.join(root, layer)
        for name in sorted(os.listdir(d)):
            rel = layer + name
            if not name.endswith((".c", ".h")) or rel == OWNER:
                continue
            text = open(os.path.join(d, name), encoding="utf-8").read()
            code = _blank_comments(text)
            lines = text.split("\n")
            head = text[:text.find("*/") + 2] if text.startswith("/*") else ""
            marked = (set(range(len(lines))) if MARK in head
                      else _marked_lines(lines))
            for m in GETTER.finditer(code):
                k, depth = m.end(), 0
                while k < len(code):  # the first argument's end
                    c = code[k]
                    if c in "([":
                        depth += 1
                    elif c in ")]":
                        if depth == 0:
                            break
                        depth -= 1
                    elif c == "," and depth == 0:
                        break
                    k += 1
                key = re.match(r',\s*"([a-z0-9_]+)"', code[k:])
                if key and key.group(1) in fields:
                    line = code.count("\n", 0, k)
                    found.append((rel, line + 1, key.group(1),
                                  line in marked))
    return found
