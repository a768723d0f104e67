#!/usr/bin/env bash
# Sandbox guarantees seen through the whole program: file tools cannot
# be led out of the workspace (symlinks, "..", absolute paths); the host
# environment (a planted secret) never reaches a command; a 200 MB
# output keeps assay's memory bounded and the model gets head and tail;
# the timeout and Ctrl-C kill the whole process tree.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
mkdir -p secret && echo TOP-SECRET-CONTENT >secret/secret.txt
echo fine >ok.txt
D=$SRC/tests/e2e/data

set +e
SECRET_DIR=$T/secret ASSAY_PLANTED_SECRET=planted-value-123 \
	"$ASSAY" run --ask none --provider script --script "$D/escape.json" --input ok.txt \
	--run-dir "$T/esc" "try to escape" 2>"$T/esc.stderr"
code=$?
set -e
TR=$T/esc/transcript.jsonl
check "escape run completes (exit $code)" test "$code" -eq 0
results() { jget "$TR" "[e['is_error'] for e in x if e['type']=='tool_result'][1:]"; }
check "every escaping file-tool call is an error, the legitimate one is not" \
	test "$(results)" = "[True, True, True, True, True, True, True, False]"
check "no secret content reached the model or the transcript" \
	sh -c "! grep -q TOP-SECRET-CONTENT '$TR'"
check "nothing written outside the workspace" \
	sh -c "! test -e /tmp/pwned && ! test -e '$T/esc/escaped' && ! test -e '$T/escaped'"
check "refusals say why" grep -q 'outside the workspace' "$TR"
check "the planted secret is not in the sandbox environment" \
	sh -c "! grep -q planted-value-123 '$T/esc/exec/'*.stdout"
check "the sandbox env has HOME=/workspace" grep -q '^HOME=/workspace' "$T"/esc/exec/*.stdout

# 200 MB of output: bounded memory, head and tail for the model
set +e
"$(dirname "$ASSAY")/assay-peak" -o "$T/big.peak" "$ASSAY" run --provider script \
	--script "$D/big.json" --run-dir "$T/big" "print a lot" 2>"$T/big.stderr"
set -e
read -r _ rsskb bigcode <"$T/big.peak"
rss=$((rsskb / 1024))
check "200 MB run completes (exit $bigcode)" test "$bigcode" -eq 0
check "assay peak memory ${rss} MiB < 200 MiB" test "$rss" -lt 200
check "full output kept in the run dir" \
	test "$(stat -c %s "$T"/big/exec/*.stdout)" -gt 200000000
content_len=$(jget "$T/big/transcript.jsonl" "[len(e['content']) for e in x if e['type']=='tool_result'][0]")
check "model got a bounded result ($content_len bytes)" test "$content_len" -lt 17000
check "model got the head, the tail and the omission note" \
	test "$(jget "$T/big/transcript.jsonl" "[('FIRST-LINE' in c and 'LAST-LINE' in c and 'bytes omitted' in c) for c in [e['content'] for e in x if e['type']=='tool_result']][0]")" = True
check "transcript stays small" test "$(stat -c %s "$T/big/transcript.jsonl")" -lt 2000000

# timeout: the command and its detached children die (sleeps with this
# test's mark: another test may be running the same script)
marked_sleepy "$T/sleepy.json"
set +e
"$ASSAY" run --provider script --script "$T/sleepy.json" --timeout 2 \
	--run-dir "$T/slow" "wait" 2>"$T/slow.stderr"
code=$?
set -e
check "timed-out run still completes (exit $code)" test "$code" -eq 0
check "exec_end says timed_out" grep -q '"timed_out":true' "$T/slow/transcript.jsonl"
check "model told about the timeout" grep -q 'timed out after' "$T/slow/transcript.jsonl"
check "no sleep 30x survives the timeout" wait_until 10 '! marked_left'

# the model cannot lengthen the user's timeout; a UTF-8 character split
# between two writes arrives whole
set +e
"$ASSAY" run --provider script --script "$D/limits.json" --timeout 1 \
	--run-dir "$T/lim" "limits" 2>"$T/lim.stderr"
set -e
check "timeout_s above --timeout is capped" \
	test "$(jget "$T/lim/transcript.jsonl" '[e["timed_out"] for e in x if e["type"]=="exec_end"][0]')" = True
check "split UTF-8 character kept across output events" \
	test "$(jget "$T/lim/transcript.jsonl" '"".join(e["text"] for e in x if e["type"]=="exec_output" and e["id"].endswith("_1_0"))')" = "café ok"

# Ctrl-C in the middle of a command: run_end interrupted, exit 130
"$ASSAY" run --provider script --script "$T/sleepy.json" --run-dir "$T/int" \
	"wait" 2>"$T/int.stderr" &
pid=$!
check "Ctrl-C: the command has started" wait_until 10 'grep -q started "$T/int/exec/"*.stdout'
check "... its sleeps are running" wait_until 10 marked_left
kill -INT $pid
set +e
wait $pid
code=$?
set -e
check "Ctrl-C: exit 130 (got $code)" test "$code" -eq 130
check "Ctrl-C: run_end interrupted" \
	test "$(jget "$T/int/transcript.jsonl" 'x[-1]["status"]')" = interrupted
check "Ctrl-C: no process left" wait_until 10 '! marked_left'
finish
