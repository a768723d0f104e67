#!/usr/bin/env bash
# Images for assay export from the workspace archive (workspace.tar.zst;
# the hostile one below is a .tar.gz, as older runs have), without docker:
# a local run whose --workspace directory is gone afterwards still
# exports its PNG (from the archive); and a hostile archive (a member
# that is a symlink out, one under a symlinked directory, a hard link,
# "../" and absolute names) gives up nothing outside it, both through
# export and through `assay-archive members` directly.
source "$(dirname "$0")/lib.bash"
need_bwrap
ARCHIVER=${ASSAY_ARCHIVE_BIN:-$(dirname "$ASSAY")/assay-archive}
[ -x "$ARCHIVER" ] || { echo "FAIL no assay-archive beside $ASSAY"; exit 1; }
cd "$T"

# --- a local run in a temporary --workspace ---------------------------
$PY - "$T/chart.json" <<'EOF'
import json, sys
code = r'''import os, struct, zlib
w, h = 40, 30
raw = b"".join(b"\x00" + os.urandom(w * 3) for _ in range(h))
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
open("chart.png", "wb").write(b"\x89PNG\r\n\x1a\n"
    + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))'''
json.dump({"turns": [
    {"text": "Drawing.", "tool_calls": [{"name": "python", "arguments": {"code": code}}]},
    {"text": "Done: chart.png.", "tool_calls": []}]}, open(sys.argv[1], "w"))
EOF
mkdir "$T/ws"
set +e
"$ASSAY" run --provider script --script "$T/chart.json" --workspace "$T/ws" \
	--run-dir "$T/run" "draw" </dev/null 2>"$T/run.stderr"
code=$?
set -e
check "local run exits 0 (got $code)" test "$code" -eq 0
cp "$T/ws/chart.png" "$T/chart.png"
"$ASSAY" export "$T/run" --format html -o "$T/with_ws.html"
embedded() { # embedded HTML OUT: the first data URI's bytes into OUT
	$PY - "$1" "$2" <<'EOF'
import base64, re, sys
# the workspace's images (a copy sent to the model is a figure of class sent)
m = re.search(r'<figure><img alt="[^"]*" src="data:image/png;base64,([A-Za-z0-9+/=]*)"', open(sys.argv[1]).read())
open(sys.argv[2], "wb").write(base64.b64decode(m.group(1)) if m else b"")
EOF
}
embedded "$T/with_ws.html" "$T/e1.png"
check "--workspace: the image comes from the workspace" cmp -s "$T/e1.png" "$T/chart.png"
rm -rf "$T/ws"
"$ASSAY" export "$T/run" --format html -o "$T/gone.html"
embedded "$T/gone.html" "$T/e2.png"
check "workspace gone: the image comes from workspace.tar.zst" cmp -s "$T/e2.png" "$T/chart.png"
rm "$T/run/workspace.tar.zst"
"$ASSAY" export "$T/run" --format html -o "$T/lost.html"
check "workspace and archive gone: a note says so" \
	grep -q 'image chart.png skipped: not in the workspace, and the run has no workspace archive' "$T/lost.html"

# --- a hostile archive ---------------------------------------------------
mkdir -p "$T/evil" "$T/outside" "$T/x"
cp "$T/chart.png" "$T/secret.png" # what the links point at
$PY - "$T" <<'EOF'
import io, json, sys, tarfile
T = sys.argv[1]
good = open(T + "/chart.png", "rb").read()
def add(t, name, data=b"", kind=tarfile.REGTYPE, link=""):
    ti = tarfile.TarInfo(name)
    ti.type, ti.linkname = kind, link
    ti.size = len(data) if kind == tarfile.REGTYPE else 0
    t.addfile(ti, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
with tarfile.open(T + "/evil/workspace.tar.gz", "w:gz", format=tarfile.PAX_FORMAT) as t:
    add(t, "output/ok.png", good)
    add(t, "output/link.png", kind=tarfile.SYMTYPE, link=T + "/secret.png")
    add(t, "out", kind=tarfile.SYMTYPE, link=T + "/outside")
    add(t, "out/under.png", good)
    add(t, "out2/", kind=tarfile.SYMTYPE, link=T + "/outside")
    add(t, "out2/under.png", good)
    add(t, "output/hard.png", kind=tarfile.LNKTYPE, link="../../secret.png")
    add(t, "../x/up.png", good)
    add(t, T + "/x/abs.png", good)
    add(t, "big.png", good * 3)
    add(t, "output/twice.png", good)
    add(t, "output/twice.png", kind=tarfile.SYMTYPE, link=T + "/secret.png")
ev = [{"type": "run_start", "run_id": "evil", "sandbox": {"backend": "docker"},
       "workspace": "/workspace"}]
for p in ("output/ok.png", "output/link.png", "out/under.png", "output/hard.png",
          "../x/up.png", T + "/x/abs.png", "output/twice.png", "output/a\nb.png",
          "output/./dot.png"):
    ev.append({"type": "workspace_change", "path": p, "kind": "created", "size": 1})
ev.append({"type": "run_end", "status": "completed"})
with open(T + "/evil/transcript.jsonl", "w") as f:
    for i, e in enumerate(ev):
        e.update(seq=i + 1, t=i)
        f.write(json.dumps(e) + "\n")
EOF
"$ASSAY" export "$T/evil" --format html -o "$T/evil.html"
embedded "$T/evil.html" "$T/e3.png"
check "hostile archive: its one honest image is embedded" cmp -s "$T/e3.png" "$T/chart.png"
check "hostile archive: one image only" \
	test "$(grep -o 'data:image/png' "$T/evil.html" | wc -l)" -eq 1
note() { grep -q "image $1 skipped: $2" "$T/evil.html"; }
check "a symlink member is refused" note output/link.png 'a symbolic link in the archive, not a file'
check "a member under a symlinked directory is refused" note out/under.png 'lies under out, a symbolic link in the archive'
check "a hard link member is refused" note output/hard.png 'a hard link in the archive, not a file'
check "a name with .. is refused" note ../x/up.png 'path leaves the workspace'
check "an absolute name is refused" note "$T/x/abs.png" 'path leaves the workspace'
check "a member replaced by a symlink is refused" note output/twice.png 'a symbolic link in the archive'
check "a name with a newline is not looked up" grep -q '^b.png skipped: not in the workspace, and not a plain name' "$T/evil.html"
check "a name with a . component is not looked up" note 'output/./dot.png' 'not in the workspace, and not a plain name'
check "nothing was written outside" test -z "$(find "$T/outside" "$T/x" -mindepth 1)"

# the helper itself, asked directly for what export never asks
members() { # members DIR MAX NAME...: rc and output into $T/m.out
	local d=$1
	shift
	mkdir -p "$d"
	set +e
	(cd "$T/evil" && "$ARCHIVER" members workspace.tar.gz "$d" "$@") >"$T/m.out" 2>&1
	MRC=$?
	set -e
}
members "$T/m1" 1000000 ../x/up.png
check "helper: '..' refused, exit 1 ($MRC)" test "$MRC" -eq 1
check "helper: says why" grep -q "name '../x/up.png' refused: a \"..\" component" "$T/m.out"
members "$T/m2" 1000000 "$T/x/abs.png"
check "helper: an absolute name refused, exit 1 ($MRC)" test "$MRC" -eq 1
check "helper: says why" grep -q "refused: an absolute path" "$T/m.out"
members "$T/m3" 1000000 output/link.png out/under.png out2/under.png output/hard.png output/ok.png
check "helper: links reported, the file written (exit $MRC)" test "$MRC" -eq 0
check "helper: the symlink reported" grep -qP '^output/link.png\ta symbolic link' "$T/m.out"
check "helper: the member under a symlink reported" grep -qP '^out/under.png\tlies under out,' "$T/m.out"
check "helper: ...also when the link's name ends in /" grep -qP '^out2/under.png\tlies under out2,' "$T/m.out"
check "helper: the hard link reported" grep -qP '^output/hard.png\ta hard link' "$T/m.out"
check "helper: only the honest file is in DIR" \
	test "$(cd "$T/m3" && find . -type f -o -type l)" = ./output/ok.png
check "helper: its bytes are right" cmp -s "$T/m3/output/ok.png" "$T/chart.png"
members "$T/m4" 2000 big.png
check "helper: a member over MAX is reported" grep -qP '^big.png\t[0-9]+ bytes, over the limit of 2000' "$T/m.out"
check "helper: ...and not written" test -z "$(ls -A "$T/m4")"
members "$T/m5" 1000000 missing.png
check "helper: a missing member is reported" grep -qP '^missing.png\tnot in the archive' "$T/m.out"
check "still nothing written outside" test -z "$(find "$T/outside" "$T/x" -mindepth 1)"
check "the secret is untouched" cmp -s "$T/secret.png" "$T/chart.png"
finish
