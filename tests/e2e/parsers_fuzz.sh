#!/usr/bin/env bash
# Short libFuzzer runs of the parsers of outside input with a stream
# shape (tests/fuzz/): the SSE parser, the Chat Completions stream
# rebuilder, the Responses and Anthropic stream readers, Docker's exec frame
# demultiplexer, the python kernel's frame reader and the table view's
# CSV parser (src/tui/csv.c). Each is fed every input in chunks and
# whole: it must not crash or leak, and must read the same thing either
# way. Built here with clang from the sources they need, as
# approval_fuzz.sh does; SKIPPED when clang or its libFuzzer runtime is missing
# (scripts/setup installs clang). Longer runs: cmake
# -DCMAKE_C_COMPILER=clang -DASSAY_FUZZ=ON, then e.g.
# build/fuzz_sse -max_total_time=600.
source "$(dirname "$0")/lib.bash"
command -v clang >/dev/null || skip "clang is not installed (scripts/setup installs it)"
cd "$T"
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){return 0;}\n' >probe.c
clang -fsanitize=fuzzer probe.c -o probe 2>/dev/null ||
	skip "clang has no libFuzzer runtime here"

# harness and the sources it needs besides src/core/
declare -A SOURCES=(
	[sse]="src/net/sse.c"
	[chat_stream]="src/llm/chat_stream.c src/llm/retry.c src/net/sse.c"
	[responses_stream]="src/llm/responses.c src/llm/chat.c src/llm/wire.c src/llm/chat_stream.c src/llm/retry.c src/net/sse.c"
	[anthropic_stream]="src/llm/anthropic.c src/llm/chat.c src/llm/wire.c src/llm/chat_stream.c src/llm/retry.c src/net/sse.c"
	[docker_frames]="src/sandbox/docker_frames.c"
	[pyframe]="src/agent/pyframe.c"
	[csv]="src/tui/csv.c"
)
HARNESSES="sse chat_stream responses_stream anthropic_stream docker_frames pyframe csv"
CFLAGS="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
	-D_GNU_SOURCE -DASSAY_SOURCE_DIR=\"$SRC\" -I$SRC/include -I$SRC/src
	$(pkg-config --cflags libcjson)"
# each source compiled once (src/core/*.c and the shared parsers go
# into every harness), as many at a time as there are CPUs, then each
# harness linked from its objects
obj() { local o=${1#"$SRC"/}; echo "obj/${o//\//_}.o"; } # obj SOURCE: its object
declare -A HSRCS=()
for h in $HARNESSES; do
	HSRCS[$h]="$SRC/tests/fuzz/fuzz_$h.c"
	for s in ${SOURCES[$h]}; do HSRCS[$h]+=" $SRC/$s"; done
	for s in "$SRC"/src/core/*.c; do HSRCS[$h]+=" $s"; done
done
mkdir obj
# shellcheck disable=SC2086
printf '%s\n' ${HSRCS[*]} | sort -u | while read -r s; do printf '%s\0%s\0' "$s" "$(obj "$s")"; done |
	CFLAGS=$CFLAGS xargs -0 -n 2 -P "$(nproc)" sh -c \
		'clang $CFLAGS -c "$0" -o "$1" 2>"$1.log" || { echo "$0:"; cat "$1.log"; } >&2' 2>build.log || true
for h in $HARNESSES; do
	objs=()
	for s in ${HSRCS[$h]}; do objs+=("$(obj "$s")"); done
	# shellcheck disable=SC2086
	clang $CFLAGS "${objs[@]}" $(pkg-config --libs libcjson) -o "fuzz_$h" 2>"build_$h.log" || true
	check "fuzz_$h builds" test -x "fuzz_$h"
	[ -x "fuzz_$h" ] || cat build.log "build_$h.log"
done
[ "$FAILED" -eq 0 ] || { finish; exit 1; }

# seeds: the first byte's low 3 bits count the chunk-size bytes after
# it (tests/fuzz/fuzz_chunks.h); the fuzzer mutates from these
mkdir c_sse c_chat_stream c_responses_stream c_anthropic_stream c_docker_frames c_pyframe \
	c_csv
$PY - <<'PYEND'
import struct
def fr(t, p): return bytes([t, 0, 0, 0]) + struct.pack(">I", len(p)) + p
def pf(t, p): return t + struct.pack(">I", len(p)) + p
seeds = {
    "sse": [
        b"\x03\x05\x01\x11data: {\"a\":1}\r\nevent: x\ndata: b\n\n: c\n"
        b"error: e\n\ndata: [DONE]\n\n",
        b"\x08{\"bare\":1}\nid: 3\nretry: 5\ndata\n\n",
    ],
    "chat_stream": [
        b"\x02\x07\x20data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":"
        b"\"hi\",\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{"
        b"\"name\":\"shell\",\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}}"
        b"]},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":"
        b"5,\"completion_tokens\":2,\"total_tokens\":7}}\n\ndata: [DONE]\n\n",
        b"\x00{\"error\":{\"message\":\"bad\",\"code\":400}}\n",
        b"\x00data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1e300,"
        b"\"completion_tokens\":-1e300}}\n\n{\"error\":{\"code\":9e99}}\n",
        b"\x01\x03data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"r\","
        b"\"tool_calls\":[{\"function\":{\"name\":\"python\",\"arguments\":"
        b"\"{\\\"code\\\":1\"}}]}}]}\n\nerror: {\"message\":\"x\"}\n\n",
    ],
    "responses_stream": [
        b"\x02\x07\x20event: response.output_item.added\ndata: {\"type\":"
        b"\"response.output_item.added\",\"item\":{\"type\":\"function_call\","
        b"\"id\":\"fc_1\",\"call_id\":\"call_1\",\"name\":\"shell\","
        b"\"arguments\":\"\"}}\n\ndata: {\"type\":\"response.function_call"
        b"_arguments.delta\",\"item_id\":\"fc_1\",\"delta\":\"{\\\"command"
        b"\\\":\\\"ls\\\"}\"}\n\ndata: {\"type\":\"response.output_text.delta"
        b"\",\"delta\":\"hi\"}\n\ndata: {\"type\":\"response.output_item.done\","
        b"\"item\":{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[],"
        b"\"encrypted_content\":\"e\"}}\n\ndata: {\"type\":\"response.completed"
        b"\",\"response\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":2,"
        b"\"input_tokens_details\":{\"cached_tokens\":1}}}}\n\n",
        b"\x00data: {\"type\":\"error\",\"error\":{\"code\":\"server_error\","
        b"\"message\":\"m\"}}\n\n",
        b"\x01\x03data: {\"type\":\"response.incomplete\",\"response\":{"
        b"\"incomplete_details\":{\"reason\":\"max_output_tokens\"}}}\n\n",
    ],
    "anthropic_stream": [
        b"\x02\x07\x20event: message_start\ndata: {\"type\":\"message_start\","
        b"\"message\":{\"usage\":{\"input_tokens\":5,\"cache_read_input_tokens\":2}}}"
        b"\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\","
        b"\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}"
        b"\n\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{"
        b"\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}\n\ndata: {\"type\":"
        b"\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta"
        b"\",\"signature\":\"s\"}}\n\ndata: {\"type\":\"content_block_stop\","
        b"\"index\":0}\n\ndata: {\"type\":\"content_block_start\",\"index\":1,"
        b"\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":"
        b"\"shell\",\"input\":{}}}\n\ndata: {\"type\":\"content_block_delta\","
        b"\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":"
        b"\"{\\\"command\\\":\\\"ls\\\"}\"}}\n\ndata: {\"type\":\"message_delta\","
        b"\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":3}}"
        b"\n\ndata: {\"type\":\"message_stop\"}\n\n",
        b"\x00event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":"
        b"\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
        b"\x01\x03event: ping\ndata: {\"type\":\"ping\"}\n\n",
        # numbers past any integer's range (a cast of them was UB)
        b"\x00data: {\"type\":\"content_block_start\",\"index\":1e300,"
        b"\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":"
        b"\"shell\"}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":"
        b"-1e300,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"
        b"data: {\"type\":\"message_start\",\"message\":{\"usage\":{"
        b"\"input_tokens\":1e308,\"cache_read_input_tokens\":-1e308}}}\n\n",
    ],
    "docker_frames": [
        b"\x02\x03\x09" + fr(1, b"hello\n") + fr(2, b"err") + fr(0, b"")
        + fr(3, b"daemon"),
        b"\x01\x04" + fr(1, b"x") + b"not a frame at all",
    ],
    "pyframe": [
        b"\x02\x02\x06" + pf(b"h", b'{"python":"3"}') + pf(b"o", b"")
        + pf(b"e", b"\xff\x00") + pf(b"r", b"{}"),
        b"\x00" + pf(b"x", b"a"),
        b"\x00o\x00\x00\x10\x00",
    ],
    # the first byte's high bits: the delimiter (bits 3-4: , tab ; |,
    # bit 7: the sniffed one) and the rows csv_tail keeps (bits 5-6)
    "csv": [
        b"\x00name,age,city\nann,31,\"Paris, France\"\nbob,42,Oslo\n",
        b"\x02\x05\x0ba,b\r\n1,\"p\r\nq\"\r\n\r\n2,\"say \"\"hi\"\"\"\r\n",
        b"\x01\x03a,b,c\n1,2\n3,4,5,6\n\n\n7,\"open,8\n9,10,11\n",
        b"\x88x;y\n1,5;2,5\n\n-3;NA\n1e2;\n4;q\n",
        b"\x09\x04k\tv\n1\t\"two\nlines\"\n2\t3.5\n\r\n3\tnull\n",
        b"\x19\x071|2.5|a\n3|4|b\n5|6|\"c\"x\n7|\"\"\"\"|",
        b"\x63\x01\x02\x03h1,h2\n\"a\nb\",\"c,\"\"d\"\"\"\n\n1,2,3\r\nx,\"y\n",
        b"\xc0v,w\n10,1.5e308\n-2.25,9e307\n\n7,NaN\n-1e999,x\n0.5,\n",
    ],
}
for name, list_ in seeds.items():
    for i, s in enumerate(list_):
        open(f"c_{name}/seed{i}", "wb").write(s)
PYEND

# a fixed amount of work, not a time: the same on a slow machine
RUNS=20000
for h in $HARNESSES; do
	set +e
	ASAN_OPTIONS=detect_leaks=1 "./fuzz_$h" -runs=$RUNS -seed=1 \
		-max_len=2048 -rss_limit_mb=1024 -timeout=30 -print_final_stats=1 \
		-artifact_prefix="$T/crash_$h-" "c_$h" >"fuzz_$h.log" 2>&1
	code=$?
	set -e
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "fuzz_$h.log")
	check "fuzz_$h found nothing (exit $code, ${runs:-0} inputs)" test "$code" -eq 0
	if [ "$code" -ne 0 ]; then
		# why (an ASan/libFuzzer ERROR, a deadly signal, or UBSan's
		# lower-case "runtime error"), and the input that did it, in
		# base64, to reproduce (the mutations depend on addresses: a
		# rerun with the same seed may not find it again)
		grep -i -A20 -m1 'ERROR\|deadly\|runtime' "fuzz_$h.log" || tail -30 "fuzz_$h.log"
		for a in "$T/crash_$h-"*; do
			[ -f "$a" ] || continue
			echo "input $(basename "$a") (base64): $(base64 -w0 "$a")"
		done
	fi
	check "fuzz_$h ran every input asked for (${runs:-0})" test "${runs:-0}" -ge $RUNS
done
finish
