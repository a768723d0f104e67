#!/usr/bin/env bash
# The MCP client over stdio against a hostile server of ours
# (tests/fakes/fake_mcp.py), through `assay mcp list` and `assay mcp
# call`: tools listed over two pages, names and descriptions shown
# through the sanitizer, a call answered, a call that never answers
# timed out with notifications/cancelled sent, a server that dies
# mid-call, a flood of log lines, a 50 MB answer, noise on stdout, progress,
# a wrong protocol version, a program not found, and a project's server
# never started while the project is untrusted.
source "$(dirname "$0")/lib.bash"
mkdir -p "$T/cfg/assay" "$T/proj"
FM=$SRC/tests/fakes/fake_mcp.py
cat >"$T/cfg/assay/config.json" <<EOF
{"mcp_servers": {
  "fake": {"command": "$PY", "args": ["$FM", "--log", "$T/fake.log"]},
  "badver": {"command": "$PY", "args": ["$FM", "--bad-version"]},
  "nosuch": {"command": "no-such-program-for-assay"}}}
EOF
mcp() { (cd "$T/proj" && XDG_CONFIG_HOME=$T/cfg "$ASSAY" mcp "$@"); }

mcp list fake >"$T/list" 2>&1 || true
check "list: the server ready, 11 tools over two pages" grep -q 'fake  stdio  ready  2025-11-25 fake-mcp  11 tools' "$T/list"
check "... a tool of the second page" grep -q '^  progress ' "$T/list"
check "... escapes in a name shown, not sent" grep -qF 'evil^[]0;pwned^[\' "$T/list"
check "... and in a description, bidi control by its code" grep -qF '^[[2J^[[31mred<U+202E>' "$T/list"
check "... no raw escape byte on stdout" bash -c "! grep -q $'\x1b' '$T/list'"
check "... annotations shown as hints" grep -q 'Echoes text  \[read-only\]' "$T/list"

out=$(mcp call fake echo '{"text": "hi"}' 2>&1)
check "call: the answer printed" test "$out" = "echo: hi"
mcp call fake echo '{"text": "hi"}' --json >"$T/echo.json"
check "... --json: the result object" $PY -c "import json,sys; r=json.load(open('$T/echo.json')); sys.exit(r['content'][0]['text']!='echo: hi')"

start=$(date +%s%N)
set +e
out=$(mcp call fake slow --timeout 2 2>&1)
rc=$?
set -e
ms=$((($(date +%s%N) - start) / 1000000))
check "a call never answered: fails after its timeout (exit 3, got $rc, ${ms} ms)" test "$rc" -eq 3 -a "$ms" -lt 6000
check "... saying so" grep -q 'no answer from the server after 2 s' <<<"$out"
check "... notifications/cancelled sent for it" grep -q '"method": "notifications/cancelled", "params": {"requestId": [0-9]*, "reason": "timed out"}' "$T/fake.log"

set +e
out=$(mcp call fake die 2>&1)
rc=$?
set -e
check "a server that dies mid-call: exit 3 (got $rc)" test "$rc" -eq 3
check "... with its exit status" grep -q 'the server exited (status 3)' <<<"$out"

out=$(mcp call fake flood 2>&1)
check "a flood of 20000 log lines: the answer still comes" test "$out" = "flooded"
mcp call fake flood -v >/dev/null 2>"$T/flood.err"
check "... its log bounded: 5000 lines, then a word" test "$(grep -c '\[debug\] line' "$T/flood.err")" -le 5000
check "... saying the rest was not logged" grep -q 'more log lines of this server not logged' "$T/flood.err"
mcp call fake big >"$T/big" 2>"$T/big.err"
check "a 50 MB answer arrives whole" test "$(wc -c <"$T/big")" -eq $((50 * 1024 * 1024 + 1))
out=$(mcp call fake noise -v 2>&1)
check "noise on stdout: logged, visibly" grep -qF 'not JSON-RPC (8 bytes): ^[[31mred' <<<"$out"
check "... and the answer after it" grep -q '^after the noise$' <<<"$out"
out=$(mcp call fake progress 2>&1)
check "progress shown as it comes" grep -q 'progress 2/3 step 2' <<<"$out"
set +e
start=$(date +%s%N)
out=$(mcp call fake closeout --timeout 20 2>&1)
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
set -e
check "a server that closes its stdout and lives on: failed at once (exit $rc, ${ms} ms)" test "$rc" -eq 3 -a "$ms" -lt 8000
check "... saying so" grep -q 'the server closed its stdout' <<<"$out"
set +e
mcp call fake nope >/dev/null 2>"$T/nope"
rc=$?
set -e
check "a tool it does not have: exit 2 (got $rc), named" grep -q 'has no tool "nope"' "$T/nope"

set +e
out=$(mcp list badver nosuch 2>&1)
rc=$?
set -e
check "a wrong protocol version: failed, saying which" grep -q 'badver  stdio  failed: the server speaks protocol version "1999-01-01"' <<<"$out"
check "a program not found: failed, saying so" grep -q 'no-such-program-for-assay: not found in PATH' <<<"$out"
check "... list exits 1 when one failed (got $rc)" test "$rc" -eq 1

# doctor's MCP section: each server started, counted, ended
(cd "$T/proj" && XDG_CONFIG_HOME=$T/cfg "$ASSAY" doctor --json </dev/null >"$T/doctor.json" 2>/dev/null) || true
check "doctor: each MCP server's status" $PY -c "
import json, sys
m = {s['name']: s for s in json.load(open('$T/doctor.json'))['mcp']}
sys.exit(not (m['fake']['status'] == 'ready' and m['fake']['tools'] == 11 and
              m['badver']['status'] == 'failed' and 'not found in PATH' in m['nosuch']['why']))"

# a project's server: never started while the project is untrusted
cat >"$T/proj/assay.json" <<EOF
{"mcp_servers": {"proj": {"command": "$PY", "args": ["$FM", "--log", "$T/proj.log"]}}}
EOF
set +e
out=$(mcp list proj 2>&1)
set -e
check "an untrusted project's server: refused, saying how to trust" grep -q 'mcp_servers' <<<"$out"
check "... and never started" test ! -e "$T/proj.log"
finish
