# sent_image.bash: a recorded run with images sent to the model, for
# the tests of how runs are shown (tui_sent_image.sh, export_sent.sh;
# sourced after lib.bash, not run). A headless run of the scripted
# model: a python call writes output/chart.png (160x90), which the run
# sends to the model (send_images auto: an image_sent, refused while
# the helper cannot), then a shell call. The transcript then gets the
# events a send records, whatever the run could send: in place of the
# run's own, an image_sent of output/chart.png as an 80x45 copy in the
# run dir's images/, ~5 tokens; after the shell call's result, an image
# refused (output/huge.png). SENT_SHA: the copy's sha256; SENT_FILE:
# its path.

# sent_run RUN: record the run and write the events.
sent_run() {
	local run=$1
	cat >"$T/sent.json" <<'EOF'
{"turns": [
 {"text": "A chart.", "tool_calls": [{"name": "python", "arguments": {"code": "import os, zlib, struct\nos.makedirs('output', exist_ok=True)\ndef png(w, h):\n    raw = b''.join(b'\\x00' + bytes([(x * 255 // w) for x in range(w)] * 3) for y in range(h))\n    ch = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))\n    return b'\\x89PNG\\r\\n\\x1a\\n' + ch(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) + ch(b'IDAT', zlib.compress(raw)) + ch(b'IEND', b'')\nopen('output/chart.png', 'wb').write(png(160, 90))\nprint('saved')"}}]},
 {"text": "Looking.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo looked"}}]},
 {"text": "Done.", "tool_calls": []}
]}
EOF
	ASSAY_SCRIPT_DELAY_MS=0 "$ASSAY" run --provider script \
		--script "$T/sent.json" --ask none --run-dir "$run" chart \
		>"$T/sent-run.out" 2>&1
	SENT_SHA=$($PY - "$run" <<'PYEND'
import hashlib, json, os, struct, sys, zlib
run = sys.argv[1]
def png(w, h):
    raw = b''.join(b'\x00' + bytes([255 - x * 255 // w for x in range(w)] * 3) for y in range(h))
    ch = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
    return (b'\x89PNG\r\n\x1a\n' + ch(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
            + ch(b'IDAT', zlib.compress(raw)) + ch(b'IEND', b''))
data = png(80, 45)
sha = hashlib.sha256(data).hexdigest()
os.makedirs(run + '/images', exist_ok=True)
open('%s/images/%s.png' % (run, sha), 'wb').write(data)
path = run + '/transcript.jsonl'
evs = [json.loads(l) for l in open(path)]
# the run's own image_sent of the chart (sent, or refused when this
# build's helper cannot) is replaced where it is: after the call's
# result and its workspace_change
assert any(e['type'] == 'image_sent' and e['id'] == 'call_0_0' for e in evs)
out = []
for e in evs:
    if e['type'] != 'image_sent':
        out.append(e)
    if e['type'] == 'image_sent' and e['id'] == 'call_0_0':
        out.append({'t': e['t'], 'type': 'image_sent', 'id': 'call_0_0',
                    'path': 'output/chart.png', 'how': 'auto',
                    'media_type': 'image/png', 'width': 80, 'height': 45,
                    'src_width': 160, 'src_height': 90, 'bytes': len(data),
                    'sha256': sha, 'file': 'images/%s.png' % sha,
                    'tokens': 5, 'detail': 'auto'})
    if e['type'] == 'tool_result' and e['id'] == 'call_1_0':
        out.append({'t': e['t'], 'type': 'image_sent', 'id': 'call_1_0',
                    'path': 'output/huge.png', 'how': 'auto',
                    'error': 'output/huge.png: 9000x9000 is too large'})
for i, e in enumerate(out):
    e['seq'] = i + 1
with open(path, 'w') as f:
    for e in out:
        f.write(json.dumps(e) + '\n')
print(sha)
PYEND
)
	SENT_FILE=$run/images/$SENT_SHA.png
}

# sent_fake_helper PATH: an assay-image stand-in whose view mode sends
# the image as it is (a PNG's own size: for a run before the real
# helper's view mode, and to know the size sent): the helper's answer
# line, then the bytes; every other mode is the real helper's.
sent_fake_helper() {
	{
		echo '#!/usr/bin/python3'
		$PY -c 'import json,sys; print("REAL = " + json.dumps(sys.argv[1]))' \
			"$(dirname "$ASSAY")/assay-image"
		cat <<'EOF'
import os, struct, sys
if sys.argv[1:2] != ['view']:
    os.execv(REAL, [REAL] + sys.argv[1:])
data = sys.stdin.buffer.read()
w, h = struct.unpack('>II', data[16:24])
sys.stdout.buffer.write(b'ok view %d %d %d %d %d image/png\n' % (w, h, w, h, len(data)) + data)
EOF
	} >"$1"
	chmod +x "$1"
}
