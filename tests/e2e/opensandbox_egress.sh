#!/usr/bin/env bash
# The opensandbox backend on a server like most real installs (issue 37,
# protocols.md E.5): no egress component, sandboxes on the host's
# network (the fake's --network-mode host). A create with any
# networkPolicy is refused (400 SANDBOX::INVALID_PARAMETER): the default
# run stops (exit 3) saying why and the two ways on; --network and
# "opensandbox": {"network_policy": "server"} send no policy and run
# (the latter warns); doctor finds it out with a probe sandbox. Every
# sandbox there has the same execd address: a second run while one
# lives stops instead of running in the first one's sandbox. And a
# python call is one command, its cell's (it puts the cell in, brings
# the reply back and lists the workspace for the snapshot after the
# call): one that changes nothing costs that one request only. Skipped
# (77) without bubblewrap.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
start_fake_os --network-mode host

cat >"$T/sh.json" <<'EOF'
{"turns": [
  {"text": "Look.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo hello-from-the-sandbox"}}]},
  {"text": "Done.", "tool_calls": []}
]}
EOF
# creates RUN_STATUS: the creates of the fake's log, "status:policy?" each
creates() { $PY - "$OS_LOG" <<'PY'
import json, sys
print(" ".join(f'{e["status"]}:{"policy" if "networkPolicy" in e else "none"}'
               for e in map(json.loads, open(sys.argv[1]))
               if e.get("method") == "POST" and e.get("path") == "/v1/sandboxes"))
PY
}

# --- the default run: refused, explained --------------------------------
set +e
"$ASSAY" run --sandbox opensandbox --provider script --script "$T/sh.json" \
	--run-dir "$T/deny" "look" 2>"$T/deny.stderr"
code=$?
set -e
check "the default run stops (exit 3, got $code)" test "$code" -eq 3
check "... the create sent deny-all and was refused" test "$(creates)" = "400:policy"
check "... it says the server refuses any networkPolicy" \
	grep -q "refuses any networkPolicy" "$T/deny.stderr"
check "... with the server's own words" grep -q "network_mode=host" "$T/deny.stderr"
check "... names the cause (no egress component, host network mode)" \
	sh -c "grep -q 'no egress component' '$T/deny.stderr' && grep -q 'network_mode \"host\"' '$T/deny.stderr'"
check "... way on 1: the server's egress config" grep -q '\[egress\] image' "$T/deny.stderr"
check "... way on 2: --network or network_policy \"server\"" \
	sh -c "grep -q -- '--network' '$T/deny.stderr' && grep -q '\"network_policy\": \"server\"' '$T/deny.stderr'"
check "... and no command ran" test "$(os_count POST '/command$')" -eq 0

# --- --network: no policy sent, runs ------------------------------------
set +e
"$ASSAY" run --sandbox opensandbox --provider script --script "$T/sh.json" \
	--network --run-dir "$T/net" "look" 2>"$T/net.stderr"
code=$?
set -e
check "--network runs (exit $code)" test "$code" -eq 0
check "... its create sent no networkPolicy" test "$(creates)" = "400:policy 202:none"
check "... the command ran" grep -q hello-from-the-sandbox "$T/net/transcript.jsonl"

# --- the config setting: no policy sent, runs, warns once ---------------
echo '{"opensandbox": {"network_policy": "server"}}' >"$T/server.json"
set +e
"$ASSAY" run --config "$T/server.json" --sandbox opensandbox --provider script \
	--script "$T/sh.json" --run-dir "$T/srv" "look" 2>"$T/srv.stderr"
code=$?
set -e
check "network_policy \"server\" runs (exit $code)" test "$code" -eq 0
check "... its create sent no networkPolicy" \
	test "$(creates)" = "400:policy 202:none 202:none"
check "... and warns once that the network is the server's" \
	test "$(grep -c "whatever the server gives it" "$T/srv.stderr")" -eq 1
echo '{"opensandbox": {"network_policy": "open"}}' >"$T/bad.json"
set +e
"$ASSAY" run --config "$T/bad.json" --sandbox opensandbox --provider script \
	--script "$T/sh.json" --run-dir "$T/bad" "look" 2>"$T/bad.stderr"
code=$?
set -e
check "another value is a usage error (exit $code)" test "$code" -eq 2
check "... naming both values" grep -q '"assay".*"server"' "$T/bad.stderr"
mkdir -p "$T/proj/.assay"
echo '{"opensandbox": {"network_policy": "server"}}' >"$T/proj/assay.json"
set +e
(cd "$T/proj" && "$ASSAY" run --sandbox opensandbox --provider script \
	--script "$T/sh.json" --run-dir "$T/proj-run" "look" 2>"$T/proj.stderr")
code=$?
set -e
check "a project file cannot set it (exit $code)" test "$code" -ne 0
check "... the run did not start a sandbox" \
	test "$(creates)" = "400:policy 202:none 202:none"

# --- doctor --------------------------------------------------------------
set +e
"$ASSAY" doctor --sandbox opensandbox >"$T/doc.out" 2>&1
dcode=$?
"$ASSAY" doctor --sandbox opensandbox --config "$T/server.json" >"$T/doc2.out" 2>&1
set -e
check "doctor fails (exit $dcode)" test "$dcode" -eq 1
check "... its network line says the server refuses a policy" \
	grep -q "FAIL  network: .*refuses any networkPolicy" "$T/doc.out"
check "... and says host mode means one run at a time" \
	grep -q "one run at a time" "$T/doc.out"
check "... and the ways on" grep -q -- "-> configure the server's egress.*--network" "$T/doc.out"
check "with network_policy \"server\" it warns instead" \
	grep -q "WARN  network: .*network_policy is \"server\"" "$T/doc2.out"
check "... no sandbox left behind by the probes" \
	test "$(jget "$OS_LOG" "sum(1 for e in x if e['path']=='/v1/sandboxes' and e['status']==202)")" \
	-eq "$(os_count DELETE '^/v1/sandboxes/[^/?]+$')"

# --- host mode: one execd address; a second run stops ---------------------
cat >"$T/slow.json" <<'EOF'
{"turns": [
  {"text": "Wait.", "tool_calls": [{"name": "shell", "arguments": {"command": "sleep 4; echo first-run-done"}}]},
  {"text": "Done.", "tool_calls": []}
]}
EOF
"$ASSAY" run --sandbox opensandbox --provider script --script "$T/slow.json" \
	--network --run-dir "$T/first" "wait" >"$T/first.out" 2>&1 &
first=$!
wait_until 30 "grep -q exec_start '$T/first/transcript.jsonl'" || true
set +e
"$ASSAY" run --sandbox opensandbox --provider script --script "$T/sh.json" \
	--network --run-dir "$T/second" "look" 2>"$T/second.stderr"
code=$?
wait "$first"
fcode=$?
set -e
check "a second sandbox while one lives stops (exit $code)" test "$code" -eq 3
check "... saying its execd is another sandbox's" \
	grep -q "belongs to another sandbox" "$T/second.stderr"
check "... and why (network_mode host) and what to do" \
	sh -c "grep -q 'network_mode \"host\"' '$T/second.stderr' && grep -q 'one assay at a time' '$T/second.stderr'"
check "... its command never ran in the first one's sandbox" \
	sh -c "! grep -q hello-from-the-sandbox '$T/first/transcript.jsonl'"
check "the first run completes (exit $fcode)" test "$fcode" -eq 0
check "... its command's output intact" grep -q first-run-done "$T/first/transcript.jsonl"

# --- bridge without the egress sidecar: refused likewise -----------------
start_fake_os --no-egress
set +e
"$ASSAY" run --sandbox opensandbox --provider script --script "$T/sh.json" \
	--run-dir "$T/bridge" "look" 2>"$T/bridge.stderr"
code=$?
set -e
check "bridge without egress: the default run stops too (exit $code)" test "$code" -eq 3
check "... with the same explanation" grep -q "no egress component" "$T/bridge.stderr"

# --- a server with egress: doctor's probe passes, and is deleted -----------
start_fake_os
set +e
"$ASSAY" doctor --sandbox opensandbox >"$T/doc3.out" 2>&1
set -e
check "with egress, doctor's network line is OK" \
	grep -q "OK    network: .*accepts a network policy" "$T/doc3.out"
check "... its probe sandbox asked deny-all, and was deleted" \
	test "$(jget "$OS_LOG" "[(e['status'], e.get('networkPolicy', {}).get('defaultAction'), e.get('metadata', {}).get('assay.probe')) for e in x if e['path'] == '/v1/sandboxes' and e['method'] == 'POST']") $(os_count DELETE '^/v1/sandboxes/[^/?]+$')" \
	= "[(202, 'deny', 'doctor')] 1"

# --- a python call: one command, its cell's ---------------------------------
start_fake_os
cat >"$T/py.json" <<'EOF'
{"turns": [
  {"text": "Set.", "tool_calls": [{"name": "python", "arguments": {"code": "x = 41"}}]},
  {"text": "Use.", "tool_calls": [{"name": "python", "arguments": {"code": "print('x+1 =', x + 1)"}}]},
  {"text": "Again.", "tool_calls": [{"name": "python", "arguments": {"code": "print('x+2 =', x + 2)"}}]},
  {"text": "Write.", "tool_calls": [{"name": "python", "arguments": {"code": "open('out.txt', 'w').write('made by python')"}}]},
  {"text": "Last.", "tool_calls": [{"name": "python", "arguments": {"code": "x"}}]},
  {"text": "Done.", "tool_calls": []}
]}
EOF
set +e
"$ASSAY" run --sandbox opensandbox --provider script --script "$T/py.json" \
	--run-dir "$T/py" "py" 2>"$T/py.stderr"
code=$?
set -e
check "the python run completes (exit $code)" test "$code" -eq 0
check "... the cells kept their state" \
	sh -c "grep -q 'x+1 = 42' '$T/py/transcript.jsonl' && grep -q 'x+2 = 43' '$T/py/transcript.jsonl'"
check "... the file the cell wrote is in the workspace archive" \
	sh -c "tar -xOf '$(ws_archive "$T/py")' --wildcards '*out.txt' | grep -q 'made by python'"
# per python call: the execd requests the fake received from its cell's
# command to the next cell's (the calls come one after another), once
# the fake's log has settled
os_log_settle
$PY - "$OS_LOG" >"$T/per_call" <<'PY'
import json, sys
log = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda e: e["t"])
execd = [e for e in log if e.get("api") == "execd"]
cmds = [e for e in execd if e["method"] == "POST" and e["path"].endswith("/command")]
def is_cell(c):  # a cell's command: it writes in.N, reads tap.N (os_cell.c)
    return "tap.$n" in c.get("command", "")  # (the log keeps 200 bytes)
ups = [e["t"] for e in log if e["path"].endswith("/files/upload") and
       any(".assay-io" in u["path"] for u in e.get("uploaded", []))]
cells = [c["t"] for c in cmds if is_cell(c)]
# the removal of a tar goes with its download, in the window of the
# call that made it (it may reach the fake after the next cell's command)
got = {e["path"].split("path=", 1)[-1]: e["t"] for e in execd
       if e["path"].split("?")[0].endswith("/files/download")}
def when(e):
    if e["method"] == "DELETE" and e["path"].split("?")[0].endswith("/files"):
        return got.get(e["path"].split("path=", 1)[-1], e["t"])
    return e["t"]
print("frames", len(ups) + len(cells), "uploads", len(ups), "cell-commands", len(cells))
for a, b in zip(cells, cells[1:]):
    print(sum(1 for c in cmds if a <= c["t"] < b), sum(1 for e in execd if a <= when(e) < b))
PY
check "five cells, each in a command of its own, no upload: $(head -1 "$T/per_call")" \
	test "$(head -1 "$T/per_call")" = "frames 5 uploads 0 cell-commands 5"
# a line per call: its commands, its execd requests (a listing, an
# upload, a download would each count)
check "a python call that changes nothing is one request, its command (the listing after the call comes in it): $(sed -n 3,4p "$T/per_call" | tr '\n' ' ')" \
	test "$(sed -n 3,4p "$T/per_call" | tr '\n' ' ')" = "1 1 1 1 "
check "one that writes a file adds what any call's change costs (the delta's tar, its download and removal, the read for its diff): $(sed -n 5p "$T/per_call")" \
	test "$(sed -n 5p "$T/per_call")" = "3 5"
check "one kernel for the run" test "$(grep -c 'kernel 1 ready' "$T/py/assay.log")" -eq 1
check "no stdin write failed" sh -c "! grep -q 'stdin' '$T/py/assay.log'"
finish
