#!/usr/bin/env bash
# The opensandbox backend through the whole program, against the fake
# OpenSandbox server (tests/fakes/fake_opensandbox.py: the lifecycle API
# and each sandbox's execd, commands really run in bubblewrap): the
# bundled demo end to end (outputs delivered, findings right against the
# ground truth) with one create and one delete in the server's log, the
# create's body (image, limits, deny-all network, metadata naming the
# run); a run longer than half the sandbox's TTL that lives only because
# assay renews it; and the start-up errors, each a clear message with
# exit 3 (server unreachable, no server configured, a wrong key, a
# sandbox that fails to start, an allowlist refused by the local
# backend). Skipped (77) without bubblewrap or the sandbox's python
# libraries.
source "$(dirname "$0")/lib.bash"
need_bwrap
$PY -c 'import pandas, matplotlib' 2>/dev/null || skip "/usr/bin/python3 has no pandas/matplotlib"
cd "$T"
D=$SRC/tests/e2e/data
start_fake_os

# sandboxes the fake holds now
os_live() {
	$PY - "$OS_URL" <<'PY'
import http.client, json, sys
c = http.client.HTTPConnection(sys.argv[1], timeout=10)
c.request("GET", "/v1/sandboxes?pageSize=100")
print(len(json.loads(c.getresponse().read())["items"]))
PY
}
# the body of the create in the fake's log, as JSON (its fields)
os_create() { $PY - "$OS_LOG" "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("method") == "POST" and e.get("path") == "/v1/sandboxes":
        print(eval(sys.argv[2], {"e": e}))
        break
PY
}

# --- the demo -------------------------------------------------------
set +e
"$ASSAY" demo --sandbox opensandbox --run-dir "$T/demo" --out "$T/out" 2>"$T/demo.stderr"
code=$?
set -e
check "demo with --sandbox opensandbox exits 0 (got $code)" test "$code" -eq 0
check "findings match the ground truth" \
	$PY "$DATA/check_findings.py" "$T/out/output" "$DATA/building_energy.truth.json"
TR=$T/demo/transcript.jsonl
check "run_start names the opensandbox backend" \
	test "$(jget "$TR" 'x[0]["sandbox"]["backend"]')" = opensandbox
check "run_end completed" test "$(jget "$TR" 'x[-1]["status"]')" = completed
check "the server saw one create" test "$(os_count POST '^/v1/sandboxes$')" -eq 1
check "... and one delete" test "$(os_count DELETE '^/v1/sandboxes/[^/?]+$')" -eq 1
check "... and commands through execd" test "$(os_count POST '/port/44772/command$')" -gt 5
check "the create denied the network" \
	test "$(os_create 'e["networkPolicy"]["defaultAction"]')" = deny
check "the create sent the memory limit" \
	test "$(os_create 'e["resourceLimits"]["memory"]')" = 4096Mi
check "the create's metadata names the run" \
	test "$(os_create 'e["metadata"]["assay.run"]')" = demo
check "the create's metadata names this assay" \
	test "$(os_create 'e["metadata"]["assay.owner.pid"]')" -gt 0
check "no sandbox left on the server" test "$(os_live)" -eq 0
check "workspace persisted with the report" \
	sh -c "tar -tf '$T/demo/workspace.tar.zst' | grep -qx output/anomaly_report.md"
check "... without the read-only input (no archive holds it)" \
	sh -c "! tar -tf '$T/demo/workspace.tar.zst' | grep -q building_energy.csv"
check "the workspace tree was seen (workspace_change events)" \
	grep -q '"path":"output/anomalies.csv","kind":"created"' "$TR"
check "the headers file is gone" test ! -e "$T/demo/.opensandbox-headers"

# --- renewals: a run longer than half the TTL -------------------------
# timeout 60 s, and the fake ends a sandbox after half its nominal time
# (--ttl-scale 0.5: 30 s) unless it is renewed: the run's 40 s command
# lives only through the renewals (assay renews a third of the TTL in)
start_fake_os --ttl-scale 0.5
echo '{"opensandbox": {"timeout_s": 60}}' >"$T/ttl.json"
cat >"$T/long.json" <<'EOF'
{"turns": [
  {"text": "Wait.", "tool_calls": [{"name": "shell", "arguments": {"command": "sleep 40; echo survived"}}]},
  {"text": "Done.", "tool_calls": []}
]}
EOF
set +e
"$ASSAY" run --config "$T/ttl.json" --sandbox opensandbox --provider script \
	--script "$T/long.json" --timeout 120 --run-dir "$T/long" "wait" 2>"$T/long.stderr"
code=$?
set -e
check "a run longer than half the TTL completes (exit $code)" test "$code" -eq 0
check "its command survived" grep -q survived "$T"/long/exec/*.stdout
check "the sandbox was renewed at least twice" \
	test "$(os_count POST '/renew-expiration$')" -ge 2
check "the create asked for the TTL" test "$(os_create 'e["timeout"]')" = 60
check "the log says so" grep -q 'renewed until' "$T/long/assay.log"
check "one create, one delete" \
	test "$(os_count POST '^/v1/sandboxes$')$(os_count DELETE '^/v1/sandboxes/[^/?]+$')" = 11

# --- clear errors, exit 3 ---------------------------------------------
start_fake_os --key right-key
echo '{"sandbox": "opensandbox"}' >"$T/osdoc.json"
doc() { env "$@" "$ASSAY" doctor --config "$T/osdoc.json" 2>&1 || true; }
check "doctor: the server answers and takes the key" \
	grep -q "OK    server: $OS_URL answers (the key is taken)" <<<"$(doc OPEN_SANDBOX_API_KEY=right-key)"
check "doctor: a wrong key fails, saying what to set" \
	grep -q "FAIL  server: .*INVALID_API_KEY" <<<"$(doc OPEN_SANDBOX_API_KEY=wrong)"
run3() { # run3 NAME [env VAR=VALUE...] -- [assay options...]
	local name=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	set +e
	env "${envs[@]}" "$ASSAY" run --sandbox opensandbox --provider script \
		--script "$D/short.json" --run-dir "$T/$name" "$@" "hi" 2>"$T/$name.stderr"
	echo $? >"$T/$name.code"
	set -e
}
port=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run3 unreach OPEN_SANDBOX_API_KEY=right-key -- --opensandbox-url "127.0.0.1:$port"
check "server unreachable: exit 3" test "$(cat "$T/unreach.code")" -eq 3
check "server unreachable: says so and what to do" \
	grep -q "cannot reach the server at 127.0.0.1:$port.*is it running" "$T/unreach.stderr"
run3 nourl OPEN_SANDBOX_DOMAIN= -- 
check "no server configured: exit 3" test "$(cat "$T/nourl.code")" -eq 3
check "no server configured: names the three ways" \
	grep -q "opensandbox-url.*opensandbox.url.*OPEN_SANDBOX_DOMAIN" "$T/nourl.stderr"
run3 badkey OPEN_SANDBOX_API_KEY=wrong-key --
check "wrong key: exit 3" test "$(cat "$T/badkey.code")" -eq 3
check "wrong key: says the server refused it and what to set" \
	grep -q "refused the key.*INVALID_API_KEY.*OPEN_SANDBOX_API_KEY" "$T/badkey.stderr"
run3 nokey OPEN_SANDBOX_API_KEY= --
check "no key: exit 3, the server's reason" \
	sh -c "test $(cat "$T/nokey.code") -eq 3 && grep -q MISSING_API_KEY '$T/nokey.stderr'"
start_fake_os --fail-create IMAGE_PULL_FAILED
run3 failed OPEN_SANDBOX_API_KEY= --
check "a sandbox that fails to start: exit 3" test "$(cat "$T/failed.code")" -eq 3
check "... says it failed and why" \
	grep -q "is Failed: .*IMAGE_PULL_FAILED" "$T/failed.stderr"
echo '{"network": {"allow": ["pypi.org"]}}' >"$T/allow.json"
set +e
"$ASSAY" run --config "$T/allow.json" --provider script --script "$D/short.json" \
	--run-dir "$T/allowlocal" "hi" 2>"$T/allowlocal.stderr"
code=$?
set -e
check "an allowlist with --sandbox local: a usage error, exit 2 (got $code)" test "$code" -eq 2
check "... says only opensandbox honours it" \
	grep -q "cannot honour \"network\": {\"allow\"" "$T/allowlocal.stderr"
finish
