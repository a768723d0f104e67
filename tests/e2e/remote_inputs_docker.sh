#!/usr/bin/env bash
# With a docker daemon that cannot see this machine's files (reached over
# TCP, here the local daemon's socket exposed on loopback by socat), the
# inputs are copied in, read-only (issue 15): owned by nobody with modes
# 0444/0555, so the container's root, without capabilities, cannot
# change, chmod, remove or add to them; the file tools refuse to write
# them as they refuse bound inputs; the workspace archive holds what the
# run made, not the inputs; a "copy": true input stays writable and is
# archived; the host files are untouched; a resume copies the inputs in
# again (after the hash check) and they are read-only there too.
# Skipped (77) only when no daemon answers or socat is missing.
source "$(dirname "$0")/lib.bash"
need_docker_image
command -v socat >/dev/null || skip "socat is not installed (scripts/setup-docker installs it)"
sock=${DOCKER_HOST:-}; sock=${sock#unix://}
[ -n "${DOCKER_HOST:-}" ] && [ "$sock" = "$DOCKER_HOST" ] && skip "DOCKER_HOST is not a unix socket"
sock=${sock:-/var/run/docker.sock}
cd "$T"
export XDG_CACHE_HOME=$T/cache
P=dkrem$$-
DOCKER_REAP=$P # what a failed check leaves goes at the exit
SOCAT_PID=
trap '[ -n "$SOCAT_PID" ] && kill "$SOCAT_PID" 2>/dev/null; cleanup' EXIT
socat TCP-LISTEN:0,bind=127.0.0.1,fork UNIX-CONNECT:"$sock" 2>socat.log &
SOCAT_PID=$!
port=$(listen_port "$SOCAT_PID")
[ -n "$port" ] || { cat socat.log; echo "FAIL socat did not listen"; exit 1; }
export DOCKER_HOST=tcp://127.0.0.1:$port

mkdir -p data/dir/sub
printf 'day,kwh\n1,42\n2,43\n' >data/energy.csv
echo inner >data/dir/sub/f.txt
printf 'a,b\n1,2\n' >data/raw.csv
touch -d '2021-03-04 05:06:07' data/energy.csv data/dir/sub/f.txt
before=$(stat -c '%s %y %i' data/energy.csv data/dir/sub/f.txt)
cat >cfg.json <<JSON
{"inputs": [{"src": "$T/data/energy.csv"}, {"src": "$T/data/dir"},
            {"src": "$T/data/raw.csv", "copy": true}]}
JSON
cat >tries.json <<'JSON'
{"turns": [
 {"text": "Trying.", "tool_calls": [{"name": "shell", "arguments": {"command": "cat input/energy.csv; echo x >> input/energy.csv; echo append=$?; : > input/energy.csv; echo trunc=$?; rm -f input/energy.csv; echo rm=$?; mv input/energy.csv gone.csv; echo mv=$?; chmod 777 input/energy.csv; echo chmod=$?; touch input/energy.csv; echo touch=$?; echo y > input/dir/sub/f.txt; echo dirwrite=$?; touch input/dir/new; echo dircreate=$?; rm -rf input/dir; echo rmdir=$?; /usr/bin/python3 -c \"open('input/energy.csv','w').write('py')\"; echo py=$?; echo 3,4 >> input/raw.csv; echo copy=$?; mkdir -p output && echo made > output/made.txt"}}]},
 {"text": "With the tools.", "tool_calls": [
   {"name": "write_file", "arguments": {"path": "input/energy.csv", "content": "evil"}},
   {"name": "read_file", "arguments": {"path": "input/energy.csv"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
set +e
"$ASSAY" run --sandbox docker --config cfg.json --provider script --script tries.json \
	--ask none --run-dir "$T/${P}r1" "try" </dev/null >r1.out 2>r1.err
code=$?
set -e
TR=$T/${P}r1/transcript.jsonl
out=$(cat "$T/${P}r1"/exec/*.stdout 2>/dev/null)
check "the run completes (exit $code)" test "$code" -eq 0 || tail -5 r1.err
check "the log says the inputs are copied (the daemon is not reached through a socket)" \
	grep -q 'the inputs are copied into the container' "$T/${P}r1/assay.log"
check "the sandbox reads the input" sh -c "printf '%s' \"\$1\" | grep -q '^1,42$'" _ "$out"
for k in append trunc rm mv chmod touch dirwrite dircreate rmdir py; do
	check "shell/python: $k fails" sh -c "printf '%s\n' \"\$1\" | grep -qx '$k=[1-9][0-9]*'" _ "$out"
done
check "the copy: true input is writable" sh -c "printf '%s\n' \"\$1\" | grep -qx 'copy=0'" _ "$out"
check "write_file into an input is refused, saying it is read-only" \
	test "$(jget "$TR" "[e['is_error'] and 'read-only' in e['content'] for e in x if e['type'] == 'tool_result'][1]")" = True
check "read_file reads its real bytes" \
	test "$(jget "$TR" "repr([e['content'] for e in x if e['type'] == 'tool_result'][2])")" = "'day,kwh\\n1,42\\n2,43\\n'"
check "the archive holds what the run made and the copy, not the read-only inputs" \
	test "$(ws_files "$T/${P}r1" | grep -v '/$' | tr '\n' ' ')" = "input input/raw.csv output output/made.txt "
check "the host files are untouched" test "$(stat -c '%s %y %i' data/energy.csv data/dir/sub/f.txt)" = "$before"
check "no container or volume left" test "$(docker_left ${P}r1)" -eq 0

# a run killed after its first call, resumed: the inputs are copied in
# again (they are not in the archive), read-only there too
cat >two.json <<'JSON'
{"turns": [
 {"text": "One.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo one > one.txt"}}]},
 {"text": "Two.", "tool_calls": [{"name": "shell", "arguments": {"command": "cat input/energy.csv one.txt; echo x >> input/energy.csv; echo append=$?; chmod u+w input; rm -f input/energy.csv; echo rm=$?"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
R=$T/${P}r2
ASSAY_SCRIPT_DELAY_MS=4000 "$ASSAY" run --sandbox docker --input "$T/data/energy.csv" \
	--provider script --script two.json --ask none --run-dir "$R" "two" </dev/null >r2.out 2>&1 &
pid=$!
for _ in $(seq 300); do grep -q '"tool_result"' "$R/transcript.jsonl" 2>/dev/null && break; sleep 0.05; done
sleep 0.3
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
set +e
"$ASSAY" resume "$R" --ask none </dev/null >r2r.out 2>r2r.err
code=$?
set -e
check "the killed run resumes (exit $code)" test "$code" -eq 0 || tail -5 r2r.err
check "... its second call sees the input again and the first call's file" \
	sh -c "cat '$R'/exec/*.stdout | grep -q '^1,42$' && cat '$R'/exec/*.stdout | grep -qx one"
check "... and cannot append to the input" sh -c "cat '$R'/exec/*.stdout | grep -qx 'append=1'"
check "... nor remove it (its directory kept the staged owner and modes over the restore)" \
	sh -c "cat '$R'/exec/*.stdout | grep -qx 'rm=1'"
check "... its archive still leaves the input out" \
	test "$(ws_files "$R" | tr '\n' ' ')" = "input one.txt "
check "no container or volume left" test "$(docker_left ${P}r2)" -eq 0
finish
