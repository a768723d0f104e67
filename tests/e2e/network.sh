#!/usr/bin/env bash
# --network in the local sandbox: bubblewrap's --share-net, i.e. the
# command runs in the host's network namespace (src/sandbox/local_probe.c,
# local_build_base) and sees name resolution (/etc/resolv.conf is bound
# only then, src/sandbox/etc.c). Without it every command gets a network
# namespace of its own, whose loopback is not the host's.
# A listener on the host's 127.0.0.1 (started here, on a port it bound
# itself and holds) sends a token to whoever connects and logs each
# connection: with --network the command reads the token and the
# listener saw it; without, the connection is refused and the listener
# saw nothing. The namespace itself is compared too (the inode of
# /proc/self/ns/net inside and here). Only loopback is used.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
export XDG_CACHE_HOME=$T/cache # the bwrap probe of this run's own
TOKEN=net-token-$RANDOM$RANDOM
cat >listen.py <<'PY'
import os, socket, sys
token, log, pf = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(pf + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(pf + ".tmp", pf)
while True:
    c, peer = s.accept()
    with open(log, "a") as f:
        f.write("connection from %s:%d\n" % peer)
    c.sendall(token.encode() + b"\n")
    c.close()
PY
$PY listen.py "$TOKEN" "$T/listen.log" "$T/listen.port" &
LISTEN_PID=$!
trap 'kill $LISTEN_PID 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 200); do [ -s listen.port ] && break; sleep 0.05; done
[ -s listen.port ] || { echo "FAIL the listener did not start"; exit 1; }
LPORT=$(cat listen.port)
: >listen.log
HOST_NS=$(readlink /proc/self/ns/net)

# one command: the namespace, resolv.conf, then a connection to the
# listener (python3, as the sandbox's tools are the host's)
$PY - "$T/net.json" "$LPORT" <<'PY'
import json, shlex, sys
port = int(sys.argv[2])
code = ("import socket\n"
        "try:\n"
        "    s = socket.create_connection(('127.0.0.1', %d), timeout=10)\n"
        "    print('got', s.recv(100).decode().strip())\n"
        "except OSError as e:\n"
        "    print('refused' if isinstance(e, ConnectionRefusedError) else 'error', e)\n" % port)
cmd = ("echo ns $(readlink /proc/self/ns/net); "
       "if [ -e /etc/resolv.conf ]; then echo resolv yes; else echo resolv no; fi; "
       "python3 -c \"$CODE\"")
json.dump({"turns": [
    {"text": "Trying the network.", "tool_calls": [{"name": "shell", "arguments": {
        "command": "CODE=" + shlex.quote(code) + "; " + cmd}}]},
    {"text": "Done.", "tool_calls": []}]}, open(sys.argv[1], "w"))
PY
run() { # run NAME [options]: the command's output in $T/NAME.res
	local name=$1
	shift
	set +e
	ASSAY_SCRIPT_DELAY_MS=0 "$ASSAY" run --provider script --script "$T/net.json" --ask none \
		--run-dir "$T/$name" "$@" "connect" </dev/null >"$T/$name.out" 2>"$T/$name.err"
	CODE=$?
	set -e
	jget "$T/$name/transcript.jsonl" "[e['content'] for e in x if e['type']=='tool_result'][0]" >"$T/$name.res"
}
res_line() { grep "^$2 " "$T/$1.res" || true; }

run off
check "without --network: the run completes (got $CODE)" test "$CODE" -eq 0
check "... run_start records network off" test "$(jget off/transcript.jsonl 'x[0]["limits"]["network"]')" = False
check "... a network namespace of its own ($(res_line off ns))" \
	sh -c "test -n '$(res_line off ns)' && test '$(res_line off ns)' != 'ns $HOST_NS'"
check "... the host's 127.0.0.1 listener is not reachable ($(res_line off refused)$(res_line off got))" \
	test -n "$(res_line off refused)"
check "... and saw no connection" test ! -s listen.log
check "... no name resolution file" test "$(res_line off resolv)" = "resolv no"

run on --network
check "with --network: the run completes (got $CODE)" test "$CODE" -eq 0
check "... run_start records network on" test "$(jget on/transcript.jsonl 'x[0]["limits"]["network"]')" = True
check "... the host's network namespace ($(res_line on ns))" test "$(res_line on ns)" = "ns $HOST_NS"
check "... the command read the listener's token ($(res_line on got)$(res_line on refused))" \
	test "$(res_line on got)" = "got $TOKEN"
check "... which saw exactly that one connection, from loopback" \
	sh -c "test \$(wc -l <'$T/listen.log') -eq 1 && grep -q '^connection from 127.0.0.1:' '$T/listen.log'"
# (a host without the file has none to give: nothing to check there)
if [ -e /etc/resolv.conf ]; then
	check "... /etc/resolv.conf is there" test "$(res_line on resolv)" = "resolv yes"
fi
finish
