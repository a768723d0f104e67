#!/usr/bin/env bash
# Real MCP servers from npm (pinned in tests/mcp, installed by
# scripts/setup-npm): @modelcontextprotocol/server-everything over stdio
# and over Streamable HTTP, each of its tools called through `assay mcp
# call` (text, a sum, an image, structured content, annotations, resource
# links, an embedded resource, progress, elicitation accepted with its
# defaults and declined) and then all 14 of them by the model of a
# scripted run (the image to the workspace and the model, progress on
# stderr, the server's log in assay.log, elicitation declined headless,
# the environment a stdio server gets: no API key of ours, only what
# env_vars names), and @modelcontextprotocol/server-filesystem confined
# to one directory. SKIPPED without the npm packages.
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
  "every": {"command": "$NODE", "args": ["$BIN/mcp-server-everything", "stdio"],
            "env_vars": ["ASSAY_TEST_PASSED"]},
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

# every tool through a scripted run: the model calls each one
for srv in every everyhttp; do
	$PY - "$srv" "$T/s.$srv.json" <<'PYEND'
import json, sys
S = sys.argv[1]
calls = [("echo", {"message": "hi"}), ("get-sum", {"a": 2, "b": 40}),
         ("get-tiny-image", {}), ("get-structured-content", {"location": "Chicago"}),
         ("get-annotated-message", {"messageType": "success", "includeImage": False}),
         ("get-resource-links", {"count": 2}),
         ("get-resource-reference", {"resourceType": "Text", "resourceId": 1}),
         ("gzip-file-as-resource", {"name": "hello.gz", "outputType": "resource",
                                    "data": "data:text/plain;base64,aGVsbG8K"}),
         ("toggle-simulated-logging", {}), ("toggle-subscriber-updates", {}),
         ("trigger-long-running-operation", {"duration": 1, "steps": 3}),
         ("trigger-elicitation-request", {}), ("simulate-research-query", {"topic": "sales"}),
         ("get-env", {})]
turns = [{"text": "step %d" % i, "tool_calls": [{"name": S + "__" + n, "arguments": a}]}
         for i, (n, a) in enumerate(calls)]
turns.append({"text": "Done.", "tool_calls": []})
json.dump({"turns": turns}, open(sys.argv[2], "w"))
PYEND
	set +e
	(cd "$T/proj" && OPENAI_API_KEY=sk-must-not-leak ASSAY_TEST_PASSED=yes XDG_CONFIG_HOME=$T/cfg \
		"$ASSAY" run --provider script --script "$T/s.$srv.json" --ask none --mcp "$srv" \
		--run-dir "$T/r.$srv" go </dev/null >"$T/r.$srv.out" 2>&1)
	rc=$?
	set -e
	tr=$T/r.$srv/transcript.jsonl
	res() { jget "$tr" "[e['content'] for e in x if e['type'] == 'tool_result' and e['id'] == 'call_$1_0'][0]"; }
	check "$srv run: the model called all 14 tools, the run completed (exit $rc)" \
		test "$rc" = 0 -a "$(jget "$tr" "len([e for e in x if e['type'] == 'mcp_call'])")" = 14
	check "$srv run: echo" test "$(res 0)" = "Echo: hi"
	check "$srv run: get-sum" test "$(res 1)" = "The sum of 2 and 40 is 42."
	check "$srv run: get-tiny-image: saved in the workspace" grep -q "saved to mcp/$srv/get-tiny-image-1-image1.png" <<<"$(res 2)"
	check "$srv run: ... and sent to the model with the result" \
		test "$(jget "$tr" "[(e['path'], e['how'], e['media_type']) for e in x if e['type'] == 'image_sent']")" = \
		"[('mcp/$srv/get-tiny-image-1-image1.png', 'auto', 'image/png')]"
	check "$srv run: get-structured-content" grep -q '"temperature":' <<<"$(res 3)"
	check "$srv run: get-annotated-message" test "$(res 4)" = "Operation completed successfully"
	check "$srv run: get-resource-links: both links" test "$(grep -c '^\[resource link: .* demo://resource/' <<<"$(res 5)")" = 2
	check "$srv run: get-resource-reference: the embedded resource's text" grep -q 'This is a plaintext resource' <<<"$(res 6)"
	check "$srv run: gzip-file-as-resource: a binary resource named, not shown" grep -q 'hello.gz\] (application/gzip, binary: not shown)' <<<"$(res 7)"
	check "$srv run: toggle-simulated-logging" grep -q 'Started simulated' <<<"$(res 8)"
	check "$srv run: toggle-subscriber-updates" grep -q 'Started simulated resource updated' <<<"$(res 9)"
	check "$srv run: a long operation answered" grep -q 'Long running operation completed' <<<"$(res 10)"
	check "$srv run: ... its progress on stderr as it came (a step before the last)" grep -q '^  progress [12] of 3' "$T/r.$srv.out"
	check "$srv run: elicitation declined headless (nobody to ask)" \
		test "$(jget "$tr" "[(e['action'], e['by']) for e in x if e['type'] == 'mcp_elicit']")" = "[('decline', 'nobody')]"
	check "$srv run: ... the server saw the decline" grep -q 'User declined' <<<"$(res 11)"
	check "$srv run: simulate-research-query needs tasks (not offered): its error to the model" \
		grep -q 'requires task augmentation' <<<"$(res 12)"
	check "$srv run: the server's log notifications in assay.log" grep -q "mcp $srv \[info\]: ready" "$T/r.$srv/assay.log"
	if [ "$srv" = every ]; then
		check "every run: get-env: a stdio server never gets our API key" \
			test "$(grep -c 'sk-must-not-leak' <<<"$(res 13)" || true)" = 0
		check "every run: ... gets what env_vars names" grep -q '"ASSAY_TEST_PASSED": "yes"' <<<"$(res 13)"
		check "every run: ... and what programs need (PATH, HOME)" grep -q '"PATH":' <<<"$(res 13)"
	fi
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
