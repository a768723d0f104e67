#!/usr/bin/env bash
# A run dir can come from anywhere (a colleague, an archive): none of
# its files may wedge assay or lead it elsewhere. Every file a run dir
# holds is replaced in turn by a FIFO, a socket, a device node, and
# links (to /etc/passwd, to a file outside, to /dev/zero, dangling);
# resume, fork, export (every format) and replay each either refuse,
# naming the file and its type, or go on, and never hang (timeout 20:
# 124 fails), never show or write the file outside. Then a wedged
# assay (its --json stdout a pipe nobody reads) ends on the second
# SIGTERM at once, its sandboxed command killed with it.
source "$(dirname "$0")/lib.bash"
need_bwrap
command -v tmux >/dev/null || skip "tmux is not installed (replay runs in it)"
source "$(dirname "$0")/tui_helpers.bash"
cd "$T"

PNG=iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==
cat >s.json <<JSON
{"turns": [
 {"text": "Writing.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo out-one; echo err-one >&2; printf 'a,b\\\\n1,2\\\\n' > t.csv; echo $PNG | base64 -d > p.png"}}]},
 {"text": "Done.", "tool_calls": []},
 {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "@exec/call_0_0.stdout"}}, {"name": "read_file", "arguments": {"path": "t.csv"}}]},
 {"text": "Read.", "tool_calls": []}
]}
JSON
printf 'Be brief.\n' >ins.md
export ASSAY_SCRIPT_DELAY_MS=0 XDG_CONFIG_HOME=$T/xdg
"$ASSAY" run --provider script --script s.json --instructions ins.md \
	--ask none --run-dir "$T/run" "go" >run.out 2>&1
TR=$T/run/transcript.jsonl
check "the recorded run completed" test "$(jget "$TR" 'x[-1]["status"]')" = completed
check "... with the files this test replaces" \
	test -s run/exec/call_0_0.stdout -a -s run/exec/call_0_0.stderr -a -s run/workspace/p.png
RESULT=$(jget "$TR" '[e["seq"] for e in x if e["type"] == "tool_result"][0]')
CACHE=$(cd run && ls cache/*.json | head -1)
ARCHIVE=$(cd run && ls workspace.tar.* | head -1)
echo "OUTSIDE-SECRET-$RANDOM" >outside.txt
SECRET=$(cat outside.txt)
sum_outside=$(md5sum <outside.txt)

# every file of a run dir (rundir.c, record.c, cache.c, tools.c, the
# sandbox's archive, the workspace's files)
FILES="transcript.jsonl assay.log run.lock script.json instructions.md
exec/call_0_0.stdout exec/call_0_0.stderr $CACHE $ARCHIVE
workspace/t.csv workspace/p.png"
KINDS="fifo socket passwd outside devzero dangling"
[ "$(id -u)" = 0 ] && KINDS="$KINDS chardev"

# plant KIND PATH: what a hostile run dir holds at PATH
plant() {
	rm -f "$2"
	case $1 in
	fifo) mkfifo "$2" ;;
	socket) (cd "$(dirname "$2")" && $PY -c 'import socket, sys
socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$(basename "$2")") ;;
	chardev) mknod "$2" c 1 5 ;; # /dev/zero's own node
	passwd) ln -s /etc/passwd "$2" ;;
	outside) ln -s "$T/outside.txt" "$2" ;;
	devzero) ln -s /dev/zero "$2" ;;
	dangling) ln -s "$T/no-such-file" "$2" ;;
	esac
}

# has_secret FILE...: the file outside is in one of the regular files
# (the test's own grep must not wait on a FIFO either: only regular
# files, not links, go to grep, one grep for them all)
has_secret() {
	local f regular=()
	for f in "$@"; do
		[ -f "$f" ] && [ ! -L "$f" ] && regular+=("$f")
	done
	[ "${#regular[@]}" -gt 0 ] && grep -q -- "$SECRET" "${regular[@]}"
}

# op WHAT FILE CMD...: CMD under timeout 20; counts a hang (124, 137) or
# a refusal that does not name FILE and what it is as a failure
HANGS=0
BAD=()
op() {
	local what=$1 file=$2 rc=0
	shift 2
	timeout -k 5 20 "$@" </dev/null >"$T/op.out" 2>"$T/op.err" || rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		HANGS=$((HANGS + 1))
		BAD+=("$what: hung")
	elif [ "$rc" -ne 0 ] && ! grep -q "$(basename "$file").* is \(a FIFO\|a socket\|a character device\|a symbolic link\|a directory\)" "$T/op.err"; then
		BAD+=("$what: exit $rc without naming $file and its type: $(head -c 300 "$T/op.err")")
	fi
	if has_secret "$T/op.out" "$T/op.err"; then
		BAD+=("$what: showed the file outside")
	fi
}

n=0
for kind in $KINDS; do
	for f in $FILES; do
		n=$((n + 1))
		v=$T/v$n
		cp -a run "$v"
		plant "$kind" "$v/$f"
		w="$kind at $f"
		op "export md ($w)" "$f" "$ASSAY" export "$v" --format md -o "$T/x.md"
		op "export html ($w)" "$f" "$ASSAY" export "$v" --format html -o "$T/x.html"
		op "export ipynb ($w)" "$f" "$ASSAY" export "$v" --format ipynb -o "$T/x.ipynb"
		op "export script ($w)" "$f" "$ASSAY" export "$v" --format script -o "$T/x.py"
		has_secret "$T"/x.* && BAD+=("export ($w): the file outside is in an export")
		rm -f "$T"/x.*
		op "fork ($w)" "$f" "$ASSAY" resume "$v" --fork-at "$RESULT" \
			--replace "forked" --run-dir "$T/fork$n"
		op "resume ($w)" "$f" "$ASSAY" resume "$v" "more"
		has_secret "$v/transcript.jsonl" "$T/fork$n/transcript.jsonl" &&
			BAD+=("resume/fork ($w): the file outside is in a transcript")
		rm -rf "$v" "$T/fork$n"
	done
done
check "resume, fork, export: no hang in $n hostile run dirs (got $HANGS)" test "$HANGS" -eq 0
check "... each refusal names the file and its type, nothing outside shown" test "${#BAD[@]}" -eq 0 ||
	printf '     %s\n' "${BAD[@]:0:30}"
check "... the file outside is untouched" test "$(md5sum <outside.txt)" = "$sum_outside"

# the refusal of read_file "@exec/..." when it is a FIFO, word for word
cp -a run fifo && plant fifo fifo/exec/call_0_0.stdout
op "resume (fifo)" x "$ASSAY" resume "$T/fifo" "more"
check "read_file of a FIFO at exec/: refused by name" \
	grep -q '@exec/call_0_0.stdout is a FIFO, not a regular file' fifo/transcript.jsonl
check "... and the run went on to its end" test "$(jget fifo/transcript.jsonl 'x[-1]["status"]')" = completed

# replay (the workbench, in tmux) on the files it reads: it comes up
# (or refuses), goes to the last step, opens the call's output in the
# pager (Enter in the Tools pane) and as a table (t), and quits
REFUSED='is (a FIFO|a socket|a character device|a symbolic link), not'
replay_ok() { # replay_ok DIR: 0 when it did all that and quit
	tui_start 100 30 -- replay "$1"
	local last
	last=$(wc -l <"$TR")
	if wait_for "replay 1/$last|$REFUSED" 10 >/dev/null &&
		! screen_has "$REFUSED"; then
		keys '>'
		wait_for "replay $last/$last" 5 >/dev/null || return 1
		# each key once the one before it showed (its old sleep at most)
		keys_seen 300 Tab
		keys_seen 1000 Enter
		keys_seen 300 q
		keys_seen 1000 t
		keys_seen 300 q
		keys q
	fi
	test "$(wait_exit 5)" != timeout
}
RBAD=()
for kind in $KINDS; do
	for f in transcript.jsonl exec/call_0_0.stdout exec/call_0_0.stderr; do
		cp -a run rp && plant "$kind" "rp/$f"
		if ! replay_ok "$T/rp"; then
			RBAD+=("replay: $kind at $f")
			# a replay stuck in open(2) outlives its tmux server
			pkill -KILL -P "$(cat "$T/pane.pid")" 2>/dev/null || true
		fi
		tm kill-server 2>/dev/null || true
		rm -rf rp
	done
done
check "replay: never stuck on a FIFO, socket or device" test "${#RBAD[@]}" -eq 0 ||
	printf '     %s\n' "${RBAD[@]}"

# a wedged assay: its --json events go to a pipe nobody reads; the
# first SIGTERM cannot be acted on, the second ends it at once
WMARK=wedge$MARK
cat >w.json <<JSON
{"turns": [
 {"text": "Lots.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo $WMARK; for i in \$(seq 2000); do head -c 3000 /dev/zero | tr '\\\\0' a; echo; sleep 0.01; done; sleep 303"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
mkfifo out.fifo
$PY -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
time.sleep(120)' out.fifo &
HOLD=$!
"$ASSAY" run --provider script --script w.json --ask none --run-dir "$T/w" \
	--json "go" >out.fifo 2>w.err &
pid=$!
wedged() { grep -q pipe "/proc/$pid/wchan"; }
left() { ps -eo args= | grep -v grep | grep -q "$WMARK"; }
# wedged for good: in a pipe write twice, half a second apart, with its
# command running
stuck() { left && wedged && sleep 0.5 && wedged; }
check "the run is wedged writing its events, its command running" wait_until 30 stuck
kill -TERM "$pid"
sleep 1
check "the first SIGTERM: still there (wedged)" kill -0 "$pid"
t0=$(date +%s%N)
kill -TERM "$pid"
gone() { ! kill -0 "$pid" 2>/dev/null || grep -q '^State:.*Z' "/proc/$pid/status"; }
check "the second SIGTERM ends it within 2s" wait_until 2 gone
echo "     (in $((($(date +%s%N) - t0) / 1000000)) ms)"
set +e
wait_code=0
if gone; then wait "$pid"; wait_code=$?; else kill -KILL "$pid"; fi
set -e
check "... exit 143 (got $wait_code)" test "$wait_code" -eq 143
check "... saying so" grep -q "a second signal" w.err
check "... no process of its command left" wait_until 2 '! left'
kill "$HOLD" 2>/dev/null || true
finish
