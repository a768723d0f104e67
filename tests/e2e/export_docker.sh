#!/usr/bin/env bash
# assay export of a run in the docker sandbox: there is no workspace on
# the host, so the HTML takes the run's PNG out of workspace.tar.zst
# (through the assay-archive helper) and embeds exactly its bytes.
# Skipped (77) only when no Docker daemon answers.
source "$(dirname "$0")/lib.bash"
need_docker_image
cd "$T"

# a scripted model whose first call draws a PNG of random pixels (so
# its bytes are this run's own) with the python tool
$PY - "$T/chart.json" <<'EOF'
import json, sys
code = r'''import os, struct, zlib
w, h = 64, 48
raw = b"".join(b"\x00" + os.urandom(w * 3) for _ in range(h))
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
os.makedirs("output", exist_ok=True)
open("output/chart.png", "wb").write(png)
print("wrote output/chart.png,", len(png), "bytes")'''
json.dump({"turns": [
    {"text": "Drawing the chart.", "tool_calls": [{"name": "python", "arguments": {"code": code}}]},
    {"text": "Checking it is there.", "tool_calls": [{"name": "shell", "arguments": {"command": "ls -l output"}}]},
    {"text": "The chart is in output/chart.png.", "tool_calls": []}]}, open(sys.argv[1], "w"))
EOF

R=$T/dkexp$$
set +e
"$ASSAY" run --sandbox docker --provider script --script "$T/chart.json" --run-dir "$R" \
	--output output/chart.png --out "$T/out" "draw a chart" </dev/null 2>"$T/run.stderr"
code=$?
set -e
check "docker run exits 0 (got $code)" test "$code" -eq 0 || { cat "$T/run.stderr"; }
check "run_start names the docker backend" \
	test "$(jget "$R/transcript.jsonl" 'x[0]["sandbox"]["backend"]')" = docker
check "the chart was seen (workspace_change)" \
	grep -q '"path":"output/chart.png","kind":"created"' "$R/transcript.jsonl"
check "no workspace directory on the host" test ! -e "$R/workspace"
mkdir "$T/tar"
tar -xf "$R/workspace.tar.zst" -C "$T/tar" output/chart.png
check "the archive holds the chart, equal to the delivered output" \
	cmp -s "$T/tar/output/chart.png" "$T/out/output/chart.png"

# embedded: the data URI decodes to the archive's bytes
embedded() { # embedded HTML OUT: the first data URI's bytes into OUT
	$PY - "$1" "$2" <<'EOF'
import base64, re, sys
# the workspace's images (a copy sent to the model is a figure of class sent)
m = re.search(r'<figure><img alt="[^"]*" src="data:image/png;base64,([A-Za-z0-9+/=]*)"', open(sys.argv[1]).read())
open(sys.argv[2], "wb").write(base64.b64decode(m.group(1)) if m else b"")
EOF
}
mkdir "$T/tmp"
TMPDIR=$T/tmp "$ASSAY" export "$R" --format html -o "$T/r.html" 2>"$T/export.stderr"
embedded "$T/r.html" "$T/embedded.png"
check "the HTML embeds the chart as a data URI" grep -q 'data:image/png;base64,iVBORw0KGgo' "$T/r.html"
check "its bytes are the chart's bytes" cmp -s "$T/embedded.png" "$T/out/output/chart.png"
check "the chart is named under it" grep -q '<figcaption>output/chart.png</figcaption>' "$T/r.html"
check "export said nothing on stderr" test ! -s "$T/export.stderr"
check "no temporary directory left" test -z "$(ls -A "$T/tmp")"

# without the archive the export says why the image is missing
mv "$R/workspace.tar.zst" "$T/ws.tar.zst"
"$ASSAY" export "$R" --format html -o "$T/none.html"
check "no archive: no image, and the reason" \
	sh -c "! grep -q '<figure><img' '$T/none.html' && grep -q 'chart.png skipped: not in the workspace, and the run has no workspace archive' '$T/none.html'"
# a damaged archive: the helper's message, and still a record
head -c 2000 "$T/ws.tar.zst" >"$R/workspace.tar.zst"
set +e
TMPDIR=$T/tmp "$ASSAY" export "$R" --format html -o "$T/bad.html" 2>"$T/bad.stderr"
code=$?
set -e
check "damaged archive: the record is still written (exit $code)" test "$code" -eq 0 -a -s "$T/bad.html"
check "damaged archive: the note says the archive cannot be read" \
	grep -q 'chart.png skipped: not in the workspace, and its archive cannot be read: members: ' "$T/bad.html"
check "damaged archive: no temporary directory left" test -z "$(ls -A "$T/tmp")"
# a run recorded before zstd: its workspace.tar.gz is read as well
rm "$R/workspace.tar.zst"
zstd -dc "$T/ws.tar.zst" | gzip >"$R/workspace.tar.gz"
"$ASSAY" export "$R" --format html -o "$T/gz.html"
embedded "$T/gz.html" "$T/gz.png"
check "an older run's workspace.tar.gz: the chart is embedded from it" \
	cmp -s "$T/gz.png" "$T/out/output/chart.png"
check "no container or volume left" test \
	"$(($(docker ps -aq --filter "label=assay.run=dkexp$$" | wc -l) + $(docker volume ls -q --filter "label=assay.run=dkexp$$" | wc -l)))" -eq 0
finish
