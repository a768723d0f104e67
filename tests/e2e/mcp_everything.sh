#!/usr/bin/env bash
# Real MCP servers from npm (pinned in tests/mcp, installed by
# scripts/setup-npm): @modelcontextprotocol/server-everything over stdio
# and over Streamable HTTP, each of its tools called through `assay mcp
# call` (text, a sum, an image, structured content, annotations, resource
# links, an embedded resource, progress, elicitation accepted with its
# defaults and declined), and @modelcontextprotocol/server-filesystem
# confined to one directory. SKIPPED without the npm packages.
source "$(dirname "$0")/lib.bash"
need_mcp_npm
BIN=$MCP_NPM/.bin
mkdir -p "$T/cfg/assay" "$T/proj" "$T/allowed"
echo "inside the allowed directory" >"$T/allowed/note.txt"

# the HTTP server on a free port of its own
HPORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PORT=$HPORT "$NODE" "$BIN/mcp-server-everything" streamableHttp >"$T/http.log" 2>&1 &
HPID=$!
trap 'kill $HPID 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 100); do
	$PY -c "import socket; socket.create_connection(('127.0.0.1', $HPORT), 0.2)" 2>/dev/null && break
	sleep 0.1
done

cat >"$T/cfg/assay/config.json" <<EOF
{"mcp_servers": {
  "every": {"command": "$NODE", "args": ["$BIN/mcp-server-everything", "stdio"]},
  "everyhttp": {"url": "http://127.0.0.1:$HPORT/mcp"},
  "fs": {"command": "$NODE", "args": ["$BIN/mcp-server-filesystem", "$T/allowed"]}}}
EOF
mcp() { (cd "$T/proj" && XDG_CONFIG_HOME=$T/cfg "$ASSAY" mcp "$@"); }

for srv in every everyhttp; do
	mcp list "$srv" >"$T/list.$srv" 2>&1 || true
	check "$srv: ready, its tools listed" grep -q "^$srv  [a-z]*  ready  2025-11-25 mcp-servers/everything  [0-9]* tools" "$T/list.$srv"
	check "$srv: ... echo among them, read-only" grep -q '^  echo .*\[read-only\]' "$T/list.$srv"
	check "$srv: echo" test "$(mcp call "$srv" echo '{"message": "hi"}' 2>&1)" = "Echo: hi"
	check "$srv: get-sum" test "$(mcp call "$srv" get-sum '{"a": 2, "b": 40}' 2>&1)" = "The sum of 2 and 40 is 42."
	mcp call "$srv" get-tiny-image --json >"$T/img.json"
	check "$srv: get-tiny-image: a PNG that decodes" $PY -c "
import base64, json, sys
r = json.load(open('$T/img.json'))
p = [c for c in r['content'] if c['type'] == 'image'][0]
b = base64.b64decode(p['data'])
sys.exit(not (p['mimeType'] == 'image/png' and b[:8] == b'\x89PNG\r\n\x1a\n'))"
	out=$(mcp call "$srv" get-structured-content '{"location": "New York"}' 2>&1)
	check "$srv: get-structured-content: structured shown" grep -q '"temperature":' <<<"$out"
	out=$(mcp call "$srv" get-annotated-message '{"messageType": "error", "includeImage": true}' --json 2>&1)
	check "$srv: get-annotated-message: annotations kept" grep -q '"priority"' <<<"$out"
	out=$(mcp call "$srv" get-resource-links '{"count": 2}' 2>&1)
	check "$srv: get-resource-links: each link shown" test "$(grep -c '^\[resource link demo://' <<<"$out")" -eq 2
	out=$(mcp call "$srv" get-resource-reference '{"resourceType": "Text", "resourceId": 1}' 2>&1)
	check "$srv: get-resource-reference: the embedded resource" grep -q '^\[resource demo://resource/static/document\|^\[resource demo://' <<<"$out"
	out=$(mcp call "$srv" trigger-long-running-operation '{"duration": 1, "steps": 3}' 2>&1)
	check "$srv: a long operation: progress as it goes" grep -q 'progress 2/3' <<<"$out"
	check "$srv: ... then its answer" grep -q 'Long running operation completed' <<<"$out"
	out=$(mcp call "$srv" trigger-elicitation-request --accept-defaults 2>&1)
	check "$srv: elicitation accepted with its defaults" grep -q '"action": "accept"' <<<"$out"
	check "$srv: ... a default filled in" grep -q '"integer": 42' <<<"$out"
	out=$(mcp call "$srv" trigger-elicitation-request 2>&1 </dev/null || true)
	check "$srv: elicitation declined without --accept-defaults" grep -qi 'declin' <<<"$out"
done

out=$(mcp call fs read_text_file "{\"path\": \"$T/allowed/note.txt\"}" 2>&1)
check "filesystem: a file in its directory read" test "$out" = "inside the allowed directory"
set +e
out=$(mcp call fs read_text_file '{"path": "/etc/passwd"}' 2>&1)
rc=$?
set -e
check "filesystem: outside its directory: refused (exit 1, got $rc)" test "$rc" -eq 1
check "... by the server's confinement" grep -q 'Access denied' <<<"$out"
finish
