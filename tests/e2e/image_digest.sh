#!/usr/bin/env bash
# What a run records of its sandbox's image, without a Docker daemon:
# an opensandbox run through the fake server records the image as the
# server reports it (its API names it, no digest) and says so in every
# export's header (md, script, ipynb) and in `assay eval`'s results and
# report; a record made before these fields still exports and resumes,
# and its resume records them; `assay doctor` shows the image and what
# identifies it: the opensandbox server's account (the fake), and the
# docker daemon's id and repo digests (a fake Docker API on a socket of
# this test's own, answering /_ping, /version and the image inspect:
# one image with RepoDigests, one built locally with none).
# Skipped (77) without bubblewrap (the fake runs commands in it).
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
D=$SRC/tests/e2e/data
FAKE_DOCKER_PID=
trap '{ [ -z "$FAKE_DOCKER_PID" ] || kill "$FAKE_DOCKER_PID" 2>/dev/null; } || true; cleanup' EXIT
start_fake_os
mkdir in
printf 'k,v\na,10\nb,45\n' >in/numbers.csv
run_os() { # run_os RUN_DIR: the short scripted run on the fake server
	"$ASSAY" run --sandbox opensandbox --provider script --script "$D/short.json" \
		--input in/numbers.csv:input/numbers.csv --run-dir "$1" "sum the numbers" \
		</dev/null 2>"$1.stderr"
}
sb() { jget "$1/transcript.jsonl" "[e['sandbox'] for e in x if e['type'] in ('run_start','run_resume')][${2:-0}]$3"; }

# --- an opensandbox run records what the server reports ---------------
set +e
run_os "$T/os"
code=$?
set -e
check "the opensandbox run exits 0 (got $code)" test "$code" -eq 0
# what the fake answers for the sandbox (GET /v1/sandboxes/{id}: image)
reported=$($PY - "$OS_URL" <<'PY'
import http.client, json, sys
c = http.client.HTTPConnection(sys.argv[1], timeout=10)
c.request("POST", "/v1/sandboxes", json.dumps({"image": {"uri": "assay-sandbox:latest"},
    "entrypoint": ["tail", "-f", "/dev/null"], "timeout": 60, "resourceLimits": {"cpu": "1", "memory": "256Mi"}}),
    {"Content-Type": "application/json"})
sid = json.loads(c.getresponse().read())["id"]
c.request("GET", "/v1/sandboxes/" + sid)
print(json.loads(c.getresponse().read())["image"]["uri"])
c.request("DELETE", "/v1/sandboxes/" + sid)
c.getresponse().read()
PY
)
check "run_start records the image as the server reports it ($reported)" \
	test "$(sb "$T/os" 0 "['image_reported']")" = "$reported"
check "... no id (the server reports none) and no repo digests (a docker notion)" \
	test "$(sb "$T/os" 0 "['image_id'], 'repo_digests' in x[0]['sandbox']")" = "('', False)"
check "... and no change noted on a fresh run" \
	test "$(sb "$T/os" 0 ".get('image_id_was')")" = None
"$ASSAY" export "$T/os" --format md -o "$T/os.md"
"$ASSAY" export "$T/os" --format script -o "$T/os.py"
"$ASSAY" export "$T/os" --format ipynb -o "$T/os.ipynb"
"$ASSAY" export "$T/os" --format html -o "$T/os.html"
said="not reported: the server names the image only (\"$reported\"), no digest"
check "export md: the Run section says what identifies the image" \
	grep -qF -- "- **image id**: $said" "$T/os.md"
check "export html: the same" grep -qF "not reported: the server names the image only" "$T/os.html"
check "export script: its header names the sandbox and the image" \
	sh -c "head -12 '$T/os.py' | grep -qxF '#   sandbox: opensandbox (image assay-sandbox:latest)' &&
	       head -12 '$T/os.py' | grep -qxF '#   image id: $said'"
check "export script: still valid Python" $PY -m py_compile "$T/os.py"
check "export ipynb: the first cell says it, in a fenced block" $PY - "$T/os.ipynb" "$said" <<'PY'
import json, sys
nb = json.load(open(sys.argv[1]))
src = "".join(nb["cells"][0]["source"]).split("\n")
assert nb["cells"][0]["cell_type"] == "markdown", nb["cells"][0]
assert src[0] == "```" and src[-1] == "```", src
assert "sandbox: opensandbox (image assay-sandbox:latest)" in src, src
assert "image id: " + sys.argv[2] in src, src
PY
check "export ipynb: its metadata holds the record's sandbox" $PY - "$T/os.ipynb" "$T/os/transcript.jsonl" <<'PY'
import json, sys
nb = json.load(open(sys.argv[1]))
rs = json.loads(open(sys.argv[2]).readline())
assert nb["metadata"]["assay"]["sandbox"] == rs["sandbox"], nb["metadata"]["assay"]
PY

# --- a record made before the fields ------------------------------------
cp -r "$T/os" "$T/old"
$PY - "$T/old/transcript.jsonl" "$T/old" <<'PY'
import json, sys
x = [json.loads(l) for l in open(sys.argv[1])]
x[0]["sandbox"] = {"backend": "opensandbox", "image": "assay-sandbox:latest", "image_id": ""}
x[0]["run_dir"] = sys.argv[2]
open(sys.argv[1], "w").write("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in x))
PY
check "an old record exports (md)" "$ASSAY" export "$T/old" --format md -o "$T/old.md"
check "... with the sandbox and no image id line" \
	sh -c "grep -qF -- '- **sandbox**: opensandbox (image assay-sandbox:latest)' '$T/old.md' && ! grep -q 'image id' '$T/old.md'"
check "... (script, ipynb)" sh -c "'$ASSAY' export '$T/old' --format script -o '$T/old.py' &&
	'$ASSAY' export '$T/old' --format ipynb -o '$T/old.ipynb' && $PY -m py_compile '$T/old.py'"
set +e
"$ASSAY" resume "$T/old" </dev/null 2>"$T/old.resume.stderr"
code=$?
set -e
check "an old record resumes in place (exit $code)" test "$code" -eq 0
check "... its run_resume records the image as the server reports it" \
	test "$(sb "$T/old" 1 "['image_reported']")" = "$reported"
check "... with no change noted (there is no id to compare)" \
	sh -c "! grep -q 'image changed' '$T/old.resume.stderr'"

# --- assay eval: each result names its sandbox's image -----------------
cat >one.json <<'EOF'
{"turns": [{"text": "The answer is 42.", "tool_calls": []}]}
EOF
cat >suite.json <<EOF
{"defaults": {"provider": "script", "script": "$T/one.json", "ask": "none", "sandbox": "opensandbox"},
 "tasks": [{"name": "a", "prompt": "What is the answer?", "check": {"answer_contains": ["42"]}},
           {"name": "b", "prompt": "What is the answer?", "check": {"answer_contains": ["42"]}}]}
EOF
set +e
"$ASSAY" eval suite.json -j 2 --dir "$T/ev" 2>"$T/ev.stderr"
code=$?
set -e
check "the eval exits 0 (got $code)" test "$code" -eq 0 || tail -5 "$T/ev.stderr"
check "each result records its run's sandbox, as its run_start has it" $PY - "$T/ev/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 2, rows
for r in rows:
    rs = json.loads(open(r["run_dir"] + "/transcript.jsonl").readline())
    assert r["sandbox"] == rs["sandbox"], (r.get("sandbox"), rs["sandbox"])
    assert r["sandbox"]["backend"] == "opensandbox" and "image_reported" in r["sandbox"], r
PY
check "report.html lists the image once, for both sessions" $PY - "$T/ev/report.html" "$reported" <<'PY'
import html, re, sys
page = open(sys.argv[1]).read()
t = re.search(r'<table id="images">(.*?)</table>', page, re.S)
assert t, "no images table"
rows = re.findall(r"<tr><td>(.*?)</td><td>(\d+)</td></tr>", t.group(1))
want = ('opensandbox (image assay-sandbox:latest): not reported: the server names the image only ("%s"), no digest' % sys.argv[2], "2")
assert [(html.unescape(a), b) for a, b in rows] == [want], rows
PY

# --- doctor: what the opensandbox server reports -----------------------
echo '{"sandbox": "opensandbox"}' >os.json
set +e
"$ASSAY" doctor --config os.json </dev/null >"$T/doc_os.txt" 2>&1
set -e
check "doctor (opensandbox): the image and that the server reports no digest" \
	grep -qF "OK    image: assay-sandbox:latest: the server reports it by name only ($reported), no digest: a run records that name" "$T/doc_os.txt"

# --- doctor: what the docker daemon reports (a fake Docker API) ----------
cat >fake_docker.py <<'PY'
# the three requests doctor makes of a daemon, on a unix socket
import http.server, json, os, re, socketserver, sys, urllib.parse
IDS = {"with:1": ("sha256:" + "a" * 64, ["reg.example/with@sha256:" + "b" * 64]),
       "local:1": ("sha256:" + "c" * 64, [])}
class H(http.server.BaseHTTPRequestHandler):
    def address_string(self): return "unix"
    def log_message(self, *a): pass
    def send(self, code, obj, extra=()):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra: self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        p = urllib.parse.unquote(self.path.split("?")[0])
        if p == "/_ping":
            return self.send(200, "OK", [("Api-Version", "1.45")])
        if p == "/version":
            return self.send(200, {"Version": "27.0.0-fake", "ApiVersion": "1.45", "MinAPIVersion": "1.24"})
        m = re.match(r"^/v[\d.]+/images/(.+)/json$", p)
        if m and m.group(1) in IDS:
            i, d = IDS[m.group(1)]
            return self.send(200, {"Id": i, "RepoTags": [m.group(1)], "RepoDigests": d})
        self.send(404, {"message": "No such image: " + p})
class S(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
srv = S(sys.argv[1], H)
open(sys.argv[2], "w").write("up")
srv.serve_forever()
PY
sock=$T/fake-docker.sock
$PY fake_docker.py "$sock" "$T/fake_docker.up" 2>"$T/fake_docker.err" &
FAKE_DOCKER_PID=$!
wait_until 10 'test -s "$T/fake_docker.up"' || { cat "$T/fake_docker.err"; fail "the fake Docker API did not start"; }
doctor_docker() { # doctor_docker IMAGE: the docker section's image line
	printf '{"sandbox": "docker", "image": "%s"}\n' "$1" >"$T/dk.json"
	DOCKER_HOST=unix://$sock "$ASSAY" doctor --config "$T/dk.json" </dev/null 2>&1 | grep 'image: ' || true
}
a64=$(printf 'a%.0s' $(seq 64))
b64=$(printf 'b%.0s' $(seq 64))
c64=$(printf 'c%.0s' $(seq 64))
check "doctor (docker): the image's whole id and its repo digest" \
	test "$(doctor_docker with:1)" = "  OK    image: with:1 is present: id sha256:$a64; repo digests: reg.example/with@sha256:$b64"
check "doctor (docker): a locally built image has none, and says so" \
	test "$(doctor_docker local:1)" = "  OK    image: local:1 is present: id sha256:$c64; repo digests: none (built here, never pushed or pulled)"
kill "$FAKE_DOCKER_PID" 2>/dev/null || true
wait "$FAKE_DOCKER_PID" 2>/dev/null || true
FAKE_DOCKER_PID=
finish
