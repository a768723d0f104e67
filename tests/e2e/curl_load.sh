#!/usr/bin/env bash
# libcurl is loaded when a transfer is wanted (src/net/curllib.c), not
# linked: a command that sends nothing never maps it, a run loads it on
# a thread and works, a libcurl that cannot be loaded (broken, too old)
# ends the run with a message that says what to do and no crash or
# process left, and a run that fails while the load is under way exits
# cleanly.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
export OPENAI_API_KEY=sk-test
unset OPENAI_BASE_URL ASSAY_PROVIDER ASSAY_MODEL
cat >s.json <<'JSON'
{"turns": [
  {"text": "Running it.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo hi"}}]},
  {"text": "It printed hi.", "tool_calls": []}
]}
JSON
start_fake s.json

# what ld.so mapped while COMMAND... ran
loads_curl() {
	LD_DEBUG=files LD_DEBUG_OUTPUT=$T/ld "$@" >/dev/null 2>&1 || true
	grep -Eqs 'libcurl(-gnutls)?\.so' "$T"/ld.*
	local found=$?
	rm -f "$T"/ld.*
	return $found
}

no_curl() { ! loads_curl "$@"; }
none_left() { ! pgrep -f "$1" >/dev/null; }
check "--version does not load libcurl" no_curl "$ASSAY" --version
check "--help does not load libcurl" no_curl "$ASSAY" --help
check "a run loads libcurl" loads_curl "$ASSAY" run --model m --base-url "$URL" \
	--ask none --run-dir "$T/seen" "say hi"

"$ASSAY" run --model m --base-url "$URL" --ask none --run-dir "$T/good" "say hi" \
	>good.out 2>good.err && rc=0 || rc=$?
check "a run with libcurl on a thread completes (exit $rc)" test "$rc" = 0
check "its command ran and the second turn came" grep -q "It printed hi" good.out good.err
check "... on libcurl built with GnuTLS (its log says which)" \
	grep -q "http: libcurl-gnutls.so.4 loaded (libcurl 7\.[0-9.]*)" "$T/good/assay.log"
# without GnuTLS's build, OpenSSL's: the GnuTLS one hidden (/dev/null
# bound over it in a mount namespace of the run's own: root, as in CI)
gnutls=$(readlink -f "$(ldconfig -p | awk '/libcurl-gnutls\.so\.4 /{print $NF; exit}')")
if [ -f "$gnutls" ] && unshare -m true 2>/dev/null; then
	unshare -m sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$gnutls" \
		"$ASSAY" run --model m --base-url "$URL" --ask none --run-dir "$T/ossl" "say hi" \
		>ossl.out 2>ossl.err && rc=0 || rc=$?
	check "without libcurl-gnutls: the run completes on OpenSSL's (exit $rc)" test "$rc" = 0
	check "... its log says which" grep -q "http: libcurl.so.4 loaded" "$T/ossl/assay.log"
else
	echo "not checked here (no root for a mount namespace): the fall back to libcurl.so.4"
fi

# broken: not an ELF file; notcurl: a library without curl's calls;
# old: one that says it is libcurl 7.74.0 (Debian 11's)
# (each under both names assay tries: GnuTLS's build, then OpenSSL's)
mkdir -p broken notcurl old
echo "not a library" >broken/libcurl-gnutls.so.4
echo "not a library" >broken/libcurl.so.4
cc -shared -o notcurl/libcurl-gnutls.so.4 -x c /dev/null
cat >old.c <<'C'
#include <curl/curl.h>
static curl_version_info_data v = {.version = "7.74.0", .version_num = 0x074a00};
curl_version_info_data *curl_version_info(CURLversion n) { (void)n; return &v; }
C
cc -shared -fPIC $(pkg-config --cflags libcurl) -o old/libcurl-gnutls.so.4 old.c
for kind in broken notcurl old; do
	LD_LIBRARY_PATH=$T/$kind "$ASSAY" run --model m --base-url "$URL" --ask none \
		--run-dir "$T/$kind.run" "say hi" >$kind.out 2>$kind.err && rc=0 || rc=$?
	check "$kind libcurl: the run fails with exit 4 (got $rc)" test "$rc" = 4
	case $kind in
	broken) want='cannot load libcurl \(.*libcurl-gnutls\.so\.4: file too short; .*libcurl\.so\.4: file too short\) \(is libcurl3-gnutls or libcurl4 installed' ;;
	notcurl) want='libcurl-gnutls\.so\.4 is not libcurl \(it has no curl_version_info\): install libcurl3-gnutls' ;;
	old) want='libcurl 7\.74\.0 is too old: assay needs 7\.85 or newer' ;;
	esac
	check "$kind libcurl: stderr says why and what to do" grep -qE "$want" $kind.err
	check "$kind libcurl: the transcript holds the error and the run's end" \
		$PY -c '
import json, re, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
err = [e for e in ev if e["type"] == "error"]
assert err and re.search(sys.argv[2], err[-1]["message"]), err
assert ev[-1]["type"] == "run_end" and ev[-1]["status"] == "failed", ev[-1]
' "$T/$kind.run/transcript.jsonl" "$want"
	check "$kind libcurl: no process of the run is left" none_left "$T/$kind.run"
done

# the docker and opensandbox backends load it to start: they say so as
# themselves (exit 3, the sandbox did not start), not as a daemon or a
# server that cannot be reached; neither is asked anything
for sb in docker opensandbox; do
	LD_LIBRARY_PATH=$T/broken OPEN_SANDBOX_DOMAIN=127.0.0.1:9 DOCKER_HOST=unix://$T/no.sock \
		"$ASSAY" run --sandbox $sb --provider script --script s.json \
		--run-dir "$T/$sb.run" hi >$sb.out 2>$sb.err && rc=0 || rc=$?
	check "$sb without libcurl: exit 3 (got $rc)" test "$rc" = 3
	check "$sb without libcurl: says libcurl, as $sb" \
		grep -qE "$sb: cannot load libcurl \(.*libcurl-gnutls\.so\.4" $sb.err
	check "$sb without libcurl: not a server or daemon to start" \
		sh -c "! grep -qiE 'cannot reach|is it running|no socket' $sb.err"
done

# a run that fails before its first request, while libcurl loads: the
# opensandbox backend without a server (the session's http starts the
# load; the sandbox's start fails at once, before it makes its own).
# The exit waits for the load and nothing crashes: 100 times, as the
# timing varies (an init on the loading thread crashed here 4 times in
# 150: OpenSSL's exit handler freed its locks under it)
bad=0
for i in $(seq 100); do
	OPEN_SANDBOX_DOMAIN= "$ASSAY" run --sandbox opensandbox --provider script \
		--script s.json --run-dir "$T/early$i" hi >early.out 2>early.err && rc=0 || rc=$?
	[ "$rc" = 3 ] && grep -q "opensandbox: no server: set --opensandbox-url" early.err || {
		bad=$((bad + 1))
		echo "run $i: exit $rc"
		tail -3 early.err
	}
done
check "an early failure exits 3 with its message, 100 of 100 (bad: $bad)" test "$bad" = 0

finish
