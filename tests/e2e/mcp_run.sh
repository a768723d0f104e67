#!/usr/bin/env bash
# MCP tools in a run (the scripted model, the real local sandbox, our
# hostile stdio server tests/fakes/fake_mcp.py): the tools offered as
# SERVER__TOOL and recorded in mcp_tools; a call answered; a call never
# answered timed out with notifications/cancelled; a server that dies
# mid-call started again once; a 50 MB result saved in the workspace with
# a preview to the model; every call through the policy (denied headless
# without an allow rule, run with one, a deny rule on the arguments
# wins); --no-mcp and an untrusted project's servers: nothing started;
# a resume after a kill serves the recorded results: no call reaches the
# server again.
source "$(dirname "$0")/lib.bash"
need_bwrap
FM=$SRC/tests/fakes/fake_mcp.py
mkdir -p "$T/cfg/assay" "$T/proj"
cat >"$T/cfg/assay/config.json" <<EOF
{"mcp_servers": {"fake": {"command": "$PY", "args": ["$FM", "--log", "$T/fake.log"]}}}
EOF
# script FILE TURN...: each TURN a JSON list of calls
script() {
	$PY - "$@" <<'PYEND'
import json, sys
turns = [{"text": "step %d" % i, "tool_calls": json.loads(t)}
         for i, t in enumerate(sys.argv[2:])]
turns.append({"text": "Done.", "tool_calls": []})
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PYEND
}
run() { (cd "$T/proj" && XDG_CONFIG_HOME=$T/cfg "$ASSAY" run --provider script "$@" </dev/null); }
ev() { $PY -c "import json,sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e['type'] == sys.argv[2]: print(json.dumps(e))" "$1" "$2"; }
# evhas FILE TYPE TEXT: an event of TYPE whose JSON (json.dumps) holds TEXT
evhas() { $PY -c "import json,sys
sys.exit(not any(e['type'] == sys.argv[2] and sys.argv[3] in json.dumps(e)
                 for e in map(json.loads, open(sys.argv[1]))))" "$@"; }
calls_seen() { grep -c '"method": "tools/call"' "$T/fake.log" || true; }

script "$T/s1.json" '[{"name": "fake__echo", "arguments": {"text": "hello"}}]' \
	'[{"name": "fake__die", "arguments": {}}]' \
	'[{"name": "fake__echo", "arguments": {"text": "again"}}]' \
	'[{"name": "fake__big", "arguments": {}}]' \
	'[{"name": "fake__image", "arguments": {}}]' \
	'[{"name": "fake__sparse", "arguments": {}}]'
set +e
# a generous timeout: the 50 MB result takes seconds under ASan and a
# loaded machine; the timeout has a run of its own below
run --script "$T/s1.json" --ask none --timeout 120 --run-dir "$T/r1" go >"$T/r1.out" 2>&1
rc=$?
script "$T/s1t.json" '[{"name": "fake__slow", "arguments": {}}]'
run --script "$T/s1t.json" --ask none --timeout 2 --run-dir "$T/r1t" go >"$T/r1t.out" 2>&1
set -e
tr=$T/r1/transcript.jsonl
check "a run with MCP tools completes (exit $rc)" test "$rc" -eq 0
check "mcp_tools: the server ready, its 11 tools offered" $PY -c "
import json, sys
e = [json.loads(l) for l in open('$tr') if '\"mcp_tools\"' in l][0]
names = [t['name'] for t in e['tools']]
ok = e['servers'][0]['status'] == 'ready' and len(names) == 11 and 'fake__echo' in names
sys.exit(not ok)"
check "... an escaped name offered as [A-Za-z0-9_-] only" evhas "$tr" mcp_tools '"fake__evil__0_pwned__"'
check "... headless says so" grep -q 'mcp fake: 11 tools' "$T/r1.out"
check "the call answered: its result to the model" evhas "$tr" tool_result '"content": "echo: hello"'
check "... recorded as mcp_call" evhas "$tr" mcp_call '"tool": "echo", "duration_ms"'
check "a call never answered: timed out (--timeout 2)" evhas "$T/r1t/transcript.jsonl" tool_result 'slow (MCP server fake): no answer from the server after 2 s'
check "... notifications/cancelled sent" grep -q '"method": "notifications/cancelled"' "$T/fake.log"
check "a server dying mid-call: the call fails saying so" evhas "$tr" tool_result 'the server exited (status 3)'
check "... started again once: the next call answered" evhas "$tr" tool_result '"content": "echo: again"'
check "a 50 MB result: saved in the workspace" evhas "$tr" mcp_call '"file": "mcp/fake/big-1.txt"'
check "... the model gets a preview and the file's name" evhas "$tr" tool_result 'the whole result (52428800 bytes) is in mcp/fake/big-1.txt'
check "... the file whole in the workspace" test "$(tar --zstd -xOf "$T/r1/workspace.tar.zst" mcp/fake/big-1.txt | wc -c)" -eq 52428800
check "... the transcript stays small" test "$(stat -c %s "$tr")" -lt 2000000
check "an image in a result: saved in the workspace" evhas "$tr" tool_result 'the image is saved to mcp/fake/image-2-image1.png'
check "... and sent to the model with the result (send_images auto)" evhas "$tr" image_sent '"path": "mcp/fake/image-2-image1.png", "how": "auto"'
check "2000 sparse records (2000 columns): not made a table" evhas "$tr" mcp_call '"tool": "sparse", "duration_ms"'
check "... the result whole in a .json file instead" evhas "$tr" mcp_call '"file": "mcp/fake/sparse-3.json"'
check "every MCP call through the policy: a reason to ask" evhas "$tr" approval 'a tool of the MCP server fake, which runs outside the sandbox'

# the policy: headless without a terminal, risky mode denies; a rule allows
script "$T/s2.json" '[{"name": "fake__echo", "arguments": {"text": "no"}}]'
run --script "$T/s2.json" --run-dir "$T/r2" go >"$T/r2.out" 2>&1 || true
check "--ask risky, no terminal: the MCP call denied" evhas "$T/r2/transcript.jsonl" tool_result 'not approved'
cat >"$T/rules.json" <<'EOF'
{"rules": [{"tool": "mcp", "match": "fake/echo", "action": "allow"},
           {"tool": "mcp", "match": "fake/echo *secret*", "action": "deny"}]}
EOF
script "$T/s3.json" '[{"name": "fake__echo", "arguments": {"text": "yes"}}]' \
	'[{"name": "fake__echo", "arguments": {"text": "a secret"}}]'
run --script "$T/s3.json" --config "$T/rules.json" --run-dir "$T/r3" go >"$T/r3.out" 2>&1 || true
check "an allow rule mcp fake/echo: it runs" evhas "$T/r3/transcript.jsonl" tool_result '"content": "echo: yes"'
check "... a deny rule on its arguments wins" evhas "$T/r3/transcript.jsonl" approval '"decision": "denied", "by": "rule"'

# --no-mcp, and an untrusted project's servers
before=$(wc -l <"$T/fake.log")
run --script "$T/s2.json" --ask none --no-mcp --run-dir "$T/r4" go >"$T/r4.out" 2>&1 || true
check "--no-mcp: no server started, no tools" test -z "$(ev "$T/r4/transcript.jsonl" mcp_tools)" -a "$(wc -l <"$T/fake.log")" -eq "$before"
check "... the model's call is an unknown tool" evhas "$T/r4/transcript.jsonl" tool_result 'unknown tool'
mv "$T/cfg/assay/config.json" "$T/cfg.saved"
cat >"$T/proj/assay.json" <<EOF
{"mcp_servers": {"proj": {"command": "$PY", "args": ["$FM", "--log", "$T/proj.log"]}}}
EOF
run --script "$T/s2.json" --ask none --run-dir "$T/r5" go >"$T/r5.out" 2>&1 || true
check "an untrusted project's server: never started" test ! -e "$T/proj.log"
check "... the refusal named" grep -q 'mcp_servers' "$T/r5.out"
rm "$T/proj/assay.json"
mv "$T/cfg.saved" "$T/cfg/assay/config.json"

# resume after a kill: the recorded MCP results are served, the server
# is never called again
script "$T/s6.json" '[{"name": "fake__echo", "arguments": {"text": "once"}}]' \
	'[{"name": "shell", "arguments": {"command": "sleep 30"}}]'
(cd "$T/proj" && XDG_CONFIG_HOME=$T/cfg exec "$ASSAY" run --provider script --script "$T/s6.json" \
	--ask none --run-dir "$T/r6" go </dev/null >"$T/r6.out" 2>&1) &
pid=$!
for _ in $(seq 200); do
	grep -q '"command": "sleep 30"' "$T/r6/transcript.jsonl" 2>/dev/null && break
	sleep 0.05
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true # (bash may say "Killed")
gone=0
for _ in $(seq 100); do
	pgrep -f "$FM --log $T/fake.log" >/dev/null || { gone=1; break; }
	sleep 0.05
done
check "assay killed: its stdio server ends by itself (stdin closed)" test "$gone" = 1
calls=$(calls_seen)
set +e
(cd "$T/proj" && XDG_CONFIG_HOME=$T/cfg "$ASSAY" resume "$T/r6" --ask none --timeout 5 </dev/null >"$T/r6r.out" 2>&1)
rc=$?
set -e
check "resume of the killed run exits 0 (got $rc)" test "$rc" -eq 0
check "... no MCP call reached the server again" test "$(calls_seen)" -eq "$calls"
check "... the recorded result in the conversation it rebuilt" grep -q 'echo: once' "$T/r6/transcript.jsonl"
finish
