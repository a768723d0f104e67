#!/usr/bin/env bash
# The MCP client against the official conformance suite
# (@modelcontextprotocol/conformance, pinned in tests/mcp, installed by
# scripts/setup-npm). The client scenarios initialize, tools_call,
# elicitation-sep1034-client-defaults and sse-retry run one after another
# (never --suite: it runs them in parallel, and sse-retry wants the
# reconnect 450-700 ms after the stream ends); each passes when the runner
# exits 0 and its checks.json holds every expected check as SUCCESS (a
# client that never connects passes initialize with "0/0"). Then every
# auth/* scenario runs once and a table says which pass: that part
# informs, it fails nothing (ASSAY_MCP_AUTH=0 leaves it out).
# The client is `$ASSAY mcp conformance-client` (it reads
# MCP_CONFORMANCE_SCENARIO; the runner appends the server's URL);
# ASSAY_MCP_CLIENT replaces that command, e.g. with a reference client.
source "$(dirname "$0")/lib.bash"
need_mcp_npm
SUITE=$MCP_NPM/@modelcontextprotocol/conformance/dist/index.js
[ -f "$SUITE" ] || { echo "FAIL the conformance suite is missing: $SUITE"; exit 1; }
if [ -n "${ASSAY_MCP_CLIENT:-}" ]; then
	CLIENT=$ASSAY_MCP_CLIENT
else
	[ -x "$ASSAY" ] || { echo "FAIL no assay binary at $ASSAY"; exit 1; }
	CLIENT="$ASSAY mcp conformance-client"
fi
# the runner splits the command at spaces and hands it to sh unquoted
case $CLIENT in
*[\'\"\\]*) echo "FAIL the client command may not quote: $CLIENT"; exit 1 ;;
esac
echo "client: $CLIENT"
cd "$T"

# checks.py CHECKS_JSON ID...: one line per expected ID, "ID STATUS"
# (missing when absent; the worst status when it appears more than once),
# then "#"-prefixed details of every check that is not SUCCESS or INFO
cat >checks.py <<'PY'
import json, sys
checks = json.load(open(sys.argv[1]))
rank = {"SUCCESS": 0, "INFO": 0, "WARNING": 1, "FAILURE": 2}
for want in sys.argv[2:]:
    got = [c.get("status") for c in checks if c.get("id") == want]
    print(want, max(got, key=lambda s: rank.get(s, 3)) if got else "missing")
for c in checks:
    if c.get("status") in ("SUCCESS", "INFO"):
        continue
    print("#   %s %s: %s" % (c.get("status"), c.get("id"), c.get("description", "")))
    if c.get("errorMessage"):
        print("#     error: %s" % c["errorMessage"])
    if c.get("details") is not None:
        d = json.dumps(c["details"])
        print("#     details: %s" % (d if len(d) <= 600 else d[:600] + "..."))
PY
# tally.py CHECKS_JSON: "S/N SUCCESS, F FAILURE, W WARNING" over the
# checks that are not INFO
cat >tally.py <<'PY'
import json, sys
st = [c.get("status") for c in json.load(open(sys.argv[1])) if c.get("status") != "INFO"]
print("%d/%d SUCCESS, %d FAILURE, %d WARNING" % (st.count("SUCCESS"), len(st),
      st.count("FAILURE"), st.count("WARNING")))
PY

# run_scenario NAME TIMEOUT_MS: the runner on one scenario, results in
# $T/res/NAME; sets RC (the runner's exit), OUT (its output, no colours)
# and CHECKS (the checks.json it wrote, empty when none)
run_scenario() {
	local name=$1 ms=$2 res=$T/res/$1
	rm -rf "$res"
	mkdir -p "$res"
	RC=0
	timeout $((ms / 1000 + 60)) "$NODE" "$SUITE" client --command "$CLIENT" \
		--scenario "$name" --timeout "$ms" -o "$res" >"$res.out" 2>&1 || RC=$?
	sed -i 's/\x1b\[[0-9;]*m//g' "$res.out"
	OUT=$res.out
	CHECKS=$(find "$res" -name checks.json | head -n 1)
}

# client_output: what the client printed (the runner keeps it beside checks.json)
client_output() {
	local d f
	[ -n "$CHECKS" ] || return 0
	d=$(dirname "$CHECKS")
	for f in stdout stderr; do
		if [ -s "$d/$f.txt" ]; then
			echo "#   client $f (last 20 lines):"
			tail -n 20 "$d/$f.txt" | sed 's/^/#     /'
		fi
	done
}

# core NAME CHECK_ID...: NAME must pass with every CHECK_ID a SUCCESS
core() {
	local name=$1 id st bad=0
	shift
	run_scenario "$name" 30000
	# sse-retry measures the reconnect's delay: on a loaded machine it can
	# come late once; a client that waits wrongly is late (or early) twice
	if [ "$name" = sse-retry ] && [ "$RC" -ne 0 ] && [ -n "$CHECKS" ] &&
		[ "$($PY checks.py "$CHECKS" "$@" | grep -v '^#' | grep -cv ' SUCCESS$')" = 1 ] &&
		$PY checks.py "$CHECKS" "$@" | grep -qx 'client-sse-retry-timing \(WARNING\|FAILURE\)'; then
		echo "#   sse-retry: only the reconnect's timing failed; once more (the machine may be loaded):"
		$PY checks.py "$CHECKS" "$@" | grep '^#' || true
		run_scenario "$name" 30000
	fi
	check "$name: the runner exits 0 (exit $RC; $(grep -m 1 -o 'Passed: .*' "$OUT" || echo 'no summary'))" \
		test "$RC" -eq 0 || bad=1
	if [ -z "$CHECKS" ]; then
		fail "$name: the runner wrote no checks.json"
		bad=1
	else
		while read -r id st; do
			check "$name: $id is SUCCESS (got $st)" test "$st" = SUCCESS || bad=1
		done < <($PY checks.py "$CHECKS" "$@" | grep -v '^#')
	fi
	if [ "$bad" = 1 ]; then
		[ -z "$CHECKS" ] || $PY checks.py "$CHECKS" "$@" | grep '^#' || true
		echo "#   runner output (last 15 lines):"
		tail -n 15 "$OUT" | sed 's/^/#     /'
		client_output
	fi
}

core initialize mcp-client-initialization
core tools_call tool-add-numbers
core elicitation-sep1034-client-defaults \
	client-elicitation-sep1034-{string,integer,number,enum,boolean}-default
core sse-retry client-sse-graceful-reconnect client-sse-retry-timing client-sse-last-event-id

# the auth scenarios: which pass (the runner's verdict), not checked
if [ "${ASSAY_MCP_AUTH:-1}" != 0 ]; then
	"$NODE" "$SUITE" list >list.out 2>&1 || true
	mapfile -t auth < <(sed -n 's/^ *- \(auth\/[^ ]*\).*/\1/p' list.out)
	echo "# auth scenarios (informative, not checked): ${#auth[@]}"
	n_pass=0
	for name in "${auth[@]}"; do
		run_scenario "$name" 15000
		if [ "$RC" -eq 0 ]; then
			verdict=pass n_pass=$((n_pass + 1))
		else
			verdict="FAIL (exit $RC)"
		fi
		tally=$([ -n "$CHECKS" ] && $PY tally.py "$CHECKS" || echo "no checks.json")
		printf '#   %-42s %-14s %s\n' "$name" "$verdict" "$tally"
	done
	echo "# auth: $n_pass of ${#auth[@]} pass"
fi
finish
