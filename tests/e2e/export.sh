#!/usr/bin/env bash
# assay export: a demo run written out as markdown and as one
# self-contained HTML file, with hostile transcript text escaped.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
set +e
"$ASSAY" demo --run-dir "$T/run" --out "$T/out" </dev/null 2>"$T/stderr"
code=$?
set -e
check "demo exits 0 (got $code)" test "$code" -eq 0
# a hostile assistant text, as a compromised model could write it
echo '{"seq": 9999, "t": 1, "type": "assistant_message", "turn": 99, "text": "<script>alert(1)</script> ```` fence", "tool_calls": []}' \
	>>"$T/run/transcript.jsonl"

"$ASSAY" export "$T/run" --format md -o "$T/r.md"
check "md has the user prompt" grep -q 'Find the unusual energy-use events' "$T/r.md"
check "md has a tool call command" grep -qx 'python3 analysis/detect_anomalies.py' "$T/r.md"
check "md has exit codes" grep -q 'exit code 0, [0-9]* ms' "$T/r.md"
check "md has the final summary" grep -q 'Not an anomaly: the heat wave' "$T/r.md"
check "md has the run_end status" grep -q 'status\*\*: completed' "$T/r.md"
check "md escapes raw HTML" sh -c "! grep -q '<script>' '$T/r.md'"
"$ASSAY" export "$T/run/transcript.jsonl" >"$T/stdout.md"
check "transcript path and stdout work too" cmp -s "$T/r.md" "$T/stdout.md"

"$ASSAY" export "$T/run" --format html -o "$T/r.html"
check "html parses" $PY -c '
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.stack = []; s.bad = []
    def handle_starttag(s, t, a):
        if t == "script": s.bad.append("script")
        if t in ("link", "iframe", "object", "embed"): s.bad.append(t)
        for k, v in a:
            if k in ("src", "href") and v and not v.startswith("data:"): s.bad.append(v[:40])
        if t not in ("meta", "img", "br", "hr"): s.stack.append(t)
    def handle_endtag(s, t):
        if not s.stack or s.stack.pop() != t: s.bad.append("unbalanced " + t)
p = P(); p.feed(open(sys.argv[1], encoding="utf-8").read()); p.close()
assert not p.bad and not p.stack, (p.bad, p.stack)
' "$T/r.html"
check "html embeds the chart" grep -q 'data:image/png;base64,iVBORw0KGgo' "$T/r.html"
check "html names the chart" grep -q 'energy_anomalies.png' "$T/r.html"
check "hostile text is escaped" grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$T/r.html"
check "no raw script tag" sh -c "! grep -qi '<script' '$T/r.html'"
check "html has the conversation" grep -q 'Find the unusual energy-use events' "$T/r.html"

# a crashed run leaves a cut last line: skipped with a note
head -c -20 "$T/run/transcript.jsonl" >"$T/cut.jsonl"
"$ASSAY" export "$T/cut.jsonl" >"$T/cut.md"
check "cut last line noted" grep -q 'cut short' "$T/cut.md"

set +e
"$ASSAY" export "$T/nope" 2>"$T/err"
code=$?
"$ASSAY" export "$T/run" --format pdf 2>>"$T/err"
code2=$?
set -e
check "missing run exits 2 (got $code)" test "$code" -eq 2
check "bad format exits 2 (got $code2)" test "$code2" -eq 2
check "errors say what failed" grep -q 'no run at' "$T/err"
finish
