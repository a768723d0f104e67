#!/usr/bin/env bash
# The docker sandbox over tcp:// and over TLS (DOCKER_TLS_VERIFY,
# DOCKER_CERT_PATH): the local daemon's socket is exposed on loopback
# by socat, plain and behind TLS with client certificates made here
# with openssl. A run with a shell command, the python tool (a kernel on
# an attached stdin: the raw upgraded connection, here inside TLS) and
# the file tools must work; a wrong CA must be a clear error (exit 3).
source "$(dirname "$0")/lib.bash"
need_docker
command -v socat >/dev/null || skip "socat is not installed (scripts/setup-docker installs it)"
command -v openssl >/dev/null || skip "openssl is not installed"
sock=${DOCKER_HOST:-}; sock=${sock#unix://}
[ -n "${DOCKER_HOST:-}" ] && [ "$sock" = "$DOCKER_HOST" ] && skip "DOCKER_HOST is not a unix socket"
sock=${sock:-/var/run/docker.sock}
cd "$T"
P=tls$$- # run directory names, which label the containers

SOCAT_PIDS=()
cleanup_socat() {
	for p in "${SOCAT_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	cleanup
}
trap cleanup_socat EXIT


# --- certificates: a CA, the server (127.0.0.1) and a client ----------
mkdir -p certs other
(
	cd certs
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=assay-test-ca \
		-keyout ca-key.pem -out ca.pem
	openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 \
		-keyout server-key.pem -out server.csr
	printf 'subjectAltName=IP:127.0.0.1\n' >server.ext
	openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial \
		-days 2 -extfile server.ext -out server.pem
	openssl req -newkey rsa:2048 -nodes -subj /CN=assay-client \
		-keyout key.pem -out client.csr
	printf 'extendedKeyUsage=clientAuth\n' >client.ext
	openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial \
		-days 2 -extfile client.ext -out cert.pem
) >"$T/openssl.log" 2>&1 || { cat "$T/openssl.log"; echo "FAIL cannot make certificates"; exit 1; }
(
	cd other
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other-ca \
		-keyout ca-key.pem -out ca.pem
	cp ../certs/cert.pem ../certs/key.pem .
) >>"$T/openssl.log" 2>&1

socat TCP-LISTEN:0,bind=127.0.0.1,fork UNIX-CONNECT:"$sock" 2>"$T/socat-plain.log" &
SOCAT_PIDS+=($!)
plain=$(listen_port $!)
socat OPENSSL-LISTEN:0,bind=127.0.0.1,fork,cert=certs/server.pem,key=certs/server-key.pem,cafile=certs/ca.pem,verify=1 \
	UNIX-CONNECT:"$sock" 2>"$T/socat-tls.log" &
SOCAT_PIDS+=($!)
tls=$(listen_port $!)
[ -n "$plain" ] && [ -n "$tls" ] ||
	{ cat "$T/socat-plain.log" "$T/socat-tls.log"; echo "FAIL socat did not listen"; exit 1; }

cat >script.json <<'EOF'
{"turns": [
  {"text": "", "tool_calls": [
    {"name": "shell", "arguments": {"command": "echo shell-ok; cat input/n.txt"}},
    {"name": "python", "arguments": {"code": "x = 6 * 7\nprint('python', x)"}},
    {"name": "python", "arguments": {"code": "print('still', x + 1)"}},
    {"name": "write_file", "arguments": {"path": "output/w.txt", "content": "written\n"}},
    {"name": "read_file", "arguments": {"path": "output/w.txt"}},
    {"name": "list_files", "arguments": {}}
  ]},
  {"text": "done", "tool_calls": []}
]}
EOF
echo 12345 >n.txt

run() { # run NAME VAR=VALUE...
	local name=$1
	shift
	set +e
	env "$@" "$ASSAY" run --sandbox docker --provider script --script script.json \
		--input n.txt --output output/w.txt --out "$T/out-$name" \
		--run-dir "$T/$P$name" "go" 2>"$T/$name.stderr"
	echo $? >"$T/$name.code"
	set -e
}

results() { jget "$T/$P$1/transcript.jsonl" "' | '.join(e['content'].replace(chr(10), ' ') for e in x if e['type']=='tool_result')"; }

for mode in plain tls; do
	if [ $mode = plain ]; then
		run $mode DOCKER_HOST=tcp://127.0.0.1:$plain
	else
		run $mode DOCKER_HOST=tcp://127.0.0.1:$tls DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$T/certs
	fi
	check "$mode: run exits 0 (got $(cat "$T/$mode.code"))" test "$(cat "$T/$mode.code")" -eq 0
	r=$(results $mode)
	check "$mode: shell ran, input staged" grep -q 'shell-ok 12345' <<<"$r"
	[ "${ASSAY_DOCKER_EXEC:-}" = exec ] ||
		check "$mode: commands went through the command runner" \
			grep -q 'command runner up' "$T/$P$mode/assay.log"
	check "$mode: python kernel answered twice, state kept" grep -q 'python 42.*still 43' <<<"$r"
	check "$mode: write_file and read_file" grep -q 'written' <<<"$r"
	check "$mode: output delivered" grep -qx written "$T/out-$mode/output/w.txt"
	check "$mode: no container left" test "$(docker ps -aq --filter label=assay.run=$P$mode | wc -l)" -eq 0
done
run notls DOCKER_HOST=tcp://127.0.0.1:$tls
check "the TLS port refuses a plain client: exit 3" test "$(cat "$T/notls.code")" -eq 3

run badca DOCKER_HOST=tcp://127.0.0.1:$tls DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$T/other
check "wrong CA: exit 3 (got $(cat "$T/badca.code"))" test "$(cat "$T/badca.code")" -eq 3
check "wrong CA: says it cannot reach the daemon, and why" \
	grep -qi "cannot reach the daemon at tcp://127.0.0.1:$tls.*certificate" "$T/badca.stderr"
run nocert DOCKER_HOST=tcp://127.0.0.1:$tls DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$T/none
check "no certificates: exit 3" test "$(cat "$T/nocert.code")" -eq 3
check "no certificates: names DOCKER_CERT_PATH" grep -q DOCKER_CERT_PATH "$T/nocert.stderr"
finish
