#!/usr/bin/env bash
# The images sent to the model, where a recorded run is shown outside
# the workbench (sent_image.bash makes the run): the headless progress
# names each one ("image PATH sent to the model: WxH, ~N tokens" or
# "not sent ...: WHY") and --json passes the event through; assay
# export shows each at its step: markdown links the run dir's copy with
# the caption, HTML embeds the copy (its bytes, not the workspace's),
# the notebook makes it an output of the call's cell, the script a
# comment line; a copy that is not the bytes recorded is not shown,
# with the reason.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sent_image.bash"
need_bwrap
cd "$T"
RUN=$T/run
sent_run "$RUN"
check "the recorded run completed" grep -q '"type": "run_end"' "$RUN/transcript.jsonl"
check "headless: the run's own send of the chart has its line" \
	grep -Eq '^  image output/chart\.png (not )?sent to the model' "$T/sent-run.out"

# headless: a run that sends the chart (the helper's stand-in sends it
# as it is, 160x90) names it with its size and tokens; --json passes
# the event through as the transcript records it
sent_fake_helper "$T/fake-image"
ASSAY_IMAGE_BIN=$T/fake-image ASSAY_SCRIPT_DELAY_MS=0 "$ASSAY" run \
	--provider script --script "$T/sent.json" --ask none \
	--run-dir "$T/run-sent" chart >"$T/sent.out" 2>&1
TOK=$(jget "$T/run-sent/transcript.jsonl" "[e['tokens'] for e in x if e['type'] == 'image_sent'][0]")
check "headless: the line of the image sent ($TOK tokens)" \
	grep -qxF "  image output/chart.png sent to the model: 160x90, ~$TOK tokens" "$T/sent.out"
check "headless: after the call's exit line" $PY - "$T/sent.out" <<'PYEND'
import sys
t = open(sys.argv[1]).read()
assert t.index('exit 0') < t.index('image output/chart.png sent') < t.index('Looking.'), t
PYEND
ASSAY_IMAGE_BIN=$T/fake-image ASSAY_SCRIPT_DELAY_MS=0 "$ASSAY" run \
	--provider script --script "$T/sent.json" --ask none \
	--run-dir "$T/run-json" --json chart >"$T/json.out" 2>"$T/json.err"
check "--json: the image_sent event on stdout as recorded" $PY - "$T/json.out" "$T/run-json/transcript.jsonl" <<'PYEND'
import json, sys
out = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
rec = [json.loads(l) for l in open(sys.argv[2])]
a = [e for e in out if e['type'] == 'image_sent']
b = [e for e in rec if e['type'] == 'image_sent']
assert a and a == b, (a, b)
assert a[0]['path'] == 'output/chart.png' and a[0]['width'] == 160, a
PYEND
check "--json: no progress line for it on stderr" \
	eval "! grep -q 'sent to the model' '$T/json.err'"

# markdown: the copy linked at its step, captioned
"$ASSAY" export "$RUN" --format md >"$T/r.md"
check "md: the copy linked with the caption" \
	grep -qxF "![sent to the model: 80x45, ~5 tokens](<$RUN/images/$SENT_SHA.png>)" "$T/r.md"
check "md: the caption names the image" \
	grep -qxF '*image output/chart.png sent to the model: 80x45, ~5 tokens*' "$T/r.md"
check "md: at its step, after the chart was made, before the next turn" $PY - "$T/r.md" <<'PYEND'
import sys
t = open(sys.argv[1]).read()
made = t.index('created output/chart.png')
sent = t.index('*image output/chart.png sent to the model')
nxt = t.index('Assistant (turn 2)')
assert made < sent < nxt, (made, sent, nxt)
PYEND
check "md: the refused image and why" \
	grep -qF '*image output/huge.png not sent to the model: output/huge.png: 9000x9000 is too large*' "$T/r.md"
"$ASSAY" export "$RUN" --format md -o "$T/out.md"
check "md -o: an absolute link, from wherever the record is read" \
	grep -qF "](<$(realpath "$RUN")/images/$SENT_SHA.png>)" "$T/out.md"

# HTML: the copy embedded, its bytes
"$ASSAY" export "$RUN" --format html -o "$T/r.html"
check "html: the copy the model saw embedded, captioned" $PY - "$T/r.html" "$SENT_FILE" <<'PYEND'
import base64, re, sys
t = open(sys.argv[1]).read()
m = re.search(r'<figure class="sent"><img alt="output/chart.png" src="data:image/png;base64,([^"]+)"><figcaption>image output/chart.png sent to the model: 80x45, ~5 tokens</figcaption></figure>', t)
assert m, 'no figure'
assert base64.b64decode(m.group(1)) == open(sys.argv[2], 'rb').read()
assert t.index('<figure class="sent">') < t.index('Assistant (turn 2)')
assert 'output/huge.png not sent to the model: output/huge.png: 9000x9000 is too large' in t
PYEND

# notebook: an output of the python cell; the refusal a markdown cell
"$ASSAY" export "$RUN" --format ipynb -o "$T/r.ipynb"
check "ipynb: the copy is a display_data output of the chart's cell" $PY - "$T/r.ipynb" "$SENT_FILE" <<'PYEND'
import base64, json, sys
nb = json.load(open(sys.argv[1]))
want = open(sys.argv[2], 'rb').read()
cells = nb['cells']
code = [c for c in cells if c['cell_type'] == 'code' and 'output/chart.png' in ''.join(c['source'])]
assert len(code) == 1, code
outs = [o for o in code[0]['outputs'] if o['output_type'] == 'display_data']
sent = [o for o in outs if 'sent to the model' in o['data'].get('text/plain', '')]
assert len(sent) == 1, outs
assert sent[0]['data']['text/plain'] == 'image output/chart.png sent to the model: 80x45, ~5 tokens'
assert base64.b64decode(sent[0]['data']['image/png']) == want
refused = [c for c in cells if c['cell_type'] == 'markdown' and 'output/huge.png not sent to the model' in ''.join(c['source'])]
assert len(refused) == 1, 'no refusal cell'
PYEND

# script: a comment line after the call
"$ASSAY" export "$RUN" --format script -o "$T/r.py"
check "script: a comment line" grep -qxF '# image output/chart.png sent to the model: 80x45, ~5 tokens' "$T/r.py"
check "script: the refusal too" grep -qF '# image output/huge.png not sent to the model:' "$T/r.py"
check "script: still Python" $PY -m py_compile "$T/r.py"

# a view_image call has no cell: the notebook shows the copy in a
# markdown cell of its own, attached
$PY - "$RUN/transcript.jsonl" <<'PYEND'
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
sent = [e for e in evs if e['type'] == 'image_sent' and 'file' in e][0]
i = evs.index(sent)
call = {'t': sent['t'], 'type': 'tool_call', 'id': 'view_1', 'name': 'view_image', 'arguments': {'path': 'output/chart.png'}}
res = {'t': sent['t'], 'type': 'tool_result', 'id': 'view_1', 'content': 'output/chart.png: 80x45', 'is_error': False}
again = dict(sent, id='view_1', how='view')
evs[i + 1:i + 1] = [call, res, again]
for k, e in enumerate(evs):
    e['seq'] = k + 1
open(sys.argv[1], 'w').write(''.join(json.dumps(e) + '\n' for e in evs))
PYEND
"$ASSAY" export "$RUN" --format ipynb -o "$T/v.ipynb"
check "ipynb: view_image's copy in a markdown cell, attached" $PY - "$T/v.ipynb" "$SENT_FILE" <<'PYEND'
import base64, json, sys
nb = json.load(open(sys.argv[1]))
md = [c for c in nb['cells'] if c['cell_type'] == 'markdown' and 'attachments' in c]
assert len(md) == 1, md
src = ''.join(md[0]['source'])
assert src.startswith('![sent to the model](attachment:sent.png)'), src
assert 'image output/chart.png sent to the model: 80x45, ~5 tokens' in src
assert base64.b64decode(md[0]['attachments']['sent.png']['image/png']) == open(sys.argv[2], 'rb').read()
PYEND

# a copy that is not the bytes recorded: not shown, and why
printf 'x' >>"$SENT_FILE"
"$ASSAY" export "$RUN" --format html -o "$T/bad.html"
check "html: a changed copy is not embedded" \
	eval "! grep -q '<figure class=\"sent\"><img' '$T/bad.html'"
check "html: it says why" grep -qF "its copy is not shown: images/$SENT_SHA.png: not the bytes recorded (sha256)" "$T/bad.html"
"$ASSAY" export "$RUN" --format md >"$T/bad.md"
check "md: no link to a changed copy" eval "! grep -qF '](<' '$T/bad.md'"
rm -f "$SENT_FILE"
ln -s /etc/passwd "$SENT_FILE"
"$ASSAY" export "$RUN" --format md >"$T/link.md"
check "md: a link in images/ is not followed" grep -qF "its copy is not shown: images/$SENT_SHA.png: a link or not a file: not followed" "$T/link.md"
finish
