#!/usr/bin/env bash
# The system prompt as a model server receives it over HTTP: the built-in
# instructions (role, layout, tools, plain ASCII), the run's inputs and
# declared outputs, and the Python libraries found in the sandbox with
# the versions the sandbox's python3 really has; "instructions" in
# assay.json and --instructions FILE replace the built-in text, and the
# sandbox facts are still appended. A small capture server stands in for
# the model: it saves each request and answers "Done." with no tools.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
cat >capture.py <<'PYEOF'
import json, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
out, portfile = sys.argv[1], sys.argv[2]
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        open(os.path.join(out, "last.json"), "wb").write(body)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for c in ({"delta": {"role": "assistant", "content": "Done."}, "finish_reason": None},
                  {"delta": {}, "finish_reason": "stop"}):
            ev = {"id": "x", "object": "chat.completion.chunk", "model": "m",
                  "choices": [dict(index=0, **c)]}
            self.wfile.write(b"data: " + json.dumps(ev).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
    def log_message(self, *a):
        pass
s = HTTPServer(("127.0.0.1", 0), H)
open(portfile + ".tmp", "w").write(str(s.server_port))
os.rename(portfile + ".tmp", portfile)
s.serve_forever()
PYEOF
mkdir -p reqs
$PY capture.py "$T/reqs" "$T/port" & FAKE_PID=$!
for _ in $(seq 200); do [ -s "$T/port" ] && break; sleep 0.05; done
[ -s "$T/port" ] || { echo "FAIL the capture server did not start"; exit 1; }
URL=http://127.0.0.1:$(cat "$T/port")/v1

run() { # run NAME [options]: the system prompt lands in $T/NAME.system
	local name=$1
	shift
	rm -f "$T/reqs/last.json"
	set +e
	OPENAI_API_KEY=sk-x "$ASSAY" run --base-url "$URL" --model m \
		--input "$DATA/building_energy.csv" --output output/summary.md \
		--run-dir "$T/$name" --out "$T/$name.out" "$@" "summarise" 2>"$T/$name.stderr"
	CODE=$?
	set -e
	$PY -c 'import json,sys
m=json.load(open(sys.argv[1]))["messages"]
print(m[0]["role"]); print(m[0]["content"])' "$T/reqs/last.json" >"$T/$name.system"
	$PY -c 'import json,sys
print(" ".join(t["function"]["name"] for t in json.load(open(sys.argv[1]))["tools"]))' \
		"$T/reqs/last.json" >"$T/$name.tools"
}
has() { grep -qF -- "$2" "$T/$1.system"; }

run default
check "default: run ends with 1, output/summary.md not made (got $CODE)" test "$CODE" -eq 1
check "default: the first message is the system prompt" test "$(head -1 "$T/default.system")" = system
check "default: the role" has default "You are a practical data analyst"
check "default: grounded in computed evidence" has default "comes from code you ran"
check "default: the workspace layout" has default "Everything you produce (tables, charts, reports) goes under output/"
check "default: the tools and when to use them" has default "python: your main tool"
check "default: plain ASCII" has default "plain ASCII"
check "default: the staged input by name" has default "- input/building_energy.csv"
check "default: the declared output by name" has default "- output/summary.md"
check "the python tool is offered" test "$(cat "$T/default.tools")" = "shell python write_file read_file list_files view_image"
# what the sandbox's interpreter really has, read the same way on the
# host; a library the host lacks must not be claimed, and leaves the
# test incomplete (skipped at the end; under CI=true a failure)
missing=
for lib in numpy pandas scipy matplotlib; do
	v=$($PY -c "import importlib.metadata as m; print(m.version('$lib'))" 2>/dev/null || true)
	if [ -n "$v" ]; then
		check "default: $lib $v in the prompt" has default "$lib $v"
	else
		missing="$missing $lib"
		check "default: $lib (not installed) is not claimed" sh -c "! grep -qw '$lib' '$T/default.system'"
	fi
done
pyline="Python $($PY -c 'import platform; print(platform.python_version())') with"
check "default: the Python version" has default "$pyline"
check "default: no network, nothing to install" has default "There is no network"
check "default: the prompt is ASCII" $PY -c 'import sys; open(sys.argv[1], encoding="ascii").read()' "$T/default.system"

printf 'CUSTOM-INSTRUCTIONS from a file.\n' >custom.md
run flag --instructions custom.md
check "--instructions: the file replaces the built-in text" has flag "CUSTOM-INSTRUCTIONS from a file."
check "--instructions: no built-in role" sh -c "! grep -q 'practical data analyst' '$T/flag.system'"
check "--instructions: the layout is still appended" has flag "- output/summary.md"
check "--instructions: the Python facts too" has flag "$pyline"

mkdir -p proj/docs && printf 'PROJECT-INSTRUCTIONS\n' >proj/docs/analyst.md
printf '{"instructions": "docs/analyst.md"}\n' >proj/assay.json
(cd proj && run manifest)
check "assay.json instructions (relative to the file)" has manifest "PROJECT-INSTRUCTIONS"
check "assay.json: the Python facts are appended" has manifest "$pyline"
if [ -n "$missing" ]; then
	finish || exit 1
	skip "$PY lacks$missing, so their lines of the prompt were not checked (scripts/setup installs them)"
fi
finish
