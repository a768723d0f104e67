# lib.sh: shared helpers for the end-to-end tests (sourced, not run).
# Each test drives the real assay binary ($ASSAY_BIN) in a temp dir.
set -euo pipefail

SRC=${ASSAY_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
ASSAY=${ASSAY_BIN:-$SRC/build/assay}
PY=/usr/bin/python3
FAKE=$SRC/tests/fakes/fake_openai.py
DATA=$SRC/sample-data
T=$(mktemp -d /tmp/assay-e2e.XXXXXX)
PASSED=0
FAILED=0
FAKE_PID=

cleanup() {
	[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

skip() {
	echo "SKIPPED: $*"
	exit 77
}

ok() {
	PASSED=$((PASSED + 1))
	echo "ok   $*"
}

fail() {
	FAILED=$((FAILED + 1))
	echo "FAIL $*"
}

check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then ok "$what"; else fail "$what"; fi
}

finish() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
}

need_bwrap() {
	command -v bwrap >/dev/null || skip "bubblewrap is not installed"
	bwrap --unshare-all --ro-bind / / true 2>/dev/null ||
		skip "bubblewrap cannot create namespaces here"
}

# start_fake SCRIPT [fake options...]: sets PORT, URL, FAKE_LOG
start_fake() {
	local script=$1
	shift
	[ -n "$FAKE_PID" ] && { kill "$FAKE_PID" 2>/dev/null || true; wait "$FAKE_PID" 2>/dev/null || true; }
	FAKE_LOG=$T/fake.$RANDOM.log
	local pf=$T/port.$RANDOM
	$PY "$FAKE" --script "$script" --port 0 --port-file "$pf" --log "$FAKE_LOG" "$@" \
		>"$T/fake.out" 2>&1 &
	FAKE_PID=$!
	for _ in $(seq 100); do
		[ -s "$pf" ] && break
		sleep 0.05
	done
	[ -s "$pf" ] || { cat "$T/fake.out"; echo "fake server did not start"; exit 1; }
	PORT=$(cat "$pf")
	URL=http://127.0.0.1:$PORT/v1
}

fake_requests() { # number of POSTs the fake server logged
	[ -f "$FAKE_LOG" ] && wc -l <"$FAKE_LOG" || echo 0
}

# event_types TRANSCRIPT: the distinct event types, one per line
event_types() {
	$PY -c 'import json,sys
for t in sorted({json.loads(l)["type"] for l in open(sys.argv[1])}): print(t)' "$1"
}

# jq-like: jget FILE PYEXPR (x = list of events)
jget() {
	$PY -c 'import json,sys
x=[json.loads(l) for l in open(sys.argv[1])]
print(eval(sys.argv[2]))' "$1" "$2"
}
