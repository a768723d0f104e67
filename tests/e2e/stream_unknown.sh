#!/usr/bin/env bash
# Stream content of types assay does not read (issue 37 item 5), in each
# dialect against its fake's --unknown-content mode: Anthropic answers
# that also hold a web search the server ran (server_tool_use, whose
# input streams as input_json_delta, and web_search_tool_result), text
# with a citations_delta, a block of a made-up type with its own delta
# type, and events of unknown types; Responses answers with a
# web_search_call, cited text, an item of a made-up type (and a
# function_call_arguments.delta naming it); Chat Completions answers
# with an unknown chunk object, unknown delta fields and a tool call of
# type custom. Each interleaved with a real call and text, over two tool
# turns. The run completes, only the real calls run, the server tool's
# use is shown as text, each kind is logged once, and the history sent
# back is accepted by the fake in strict mode: the Anthropic and
# Responses fakes refuse an answer not sent back whole and unchanged,
# every fake refuses a call without a name.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
export XDG_CONFIG_HOME=$T/xdg
unset ANTHROPIC_BASE_URL OPENAI_BASE_URL ASSAY_PROVIDER ASSAY_MODEL
cat >s.json <<'JSON'
{"turns": [
 {"text": "Let me search first, then count.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo one >> calls.txt"}}]},
 {"text": "Once more, to be sure.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo two >> calls.txt; cat calls.txt"}}]},
 {"text": "Done: the two calls ran.", "tool_calls": []}
]}
JSON
FPID=
trap '[ -n "$FPID" ] && kill $FPID 2>/dev/null; cleanup' EXIT
start() { # start FAKE.py [options]: FURL (host:port), FLOG
	local fake=$1
	shift
	[ -n "$FPID" ] && { kill "$FPID" 2>/dev/null || true; wait "$FPID" 2>/dev/null || true; }
	FLOG=$T/fake.$RANDOM.log
	local pf=$T/port.$RANDOM
	$PY "$SRC/tests/fakes/$fake" --script s.json --port 0 --port-file "$pf" --log "$FLOG" \
		--unknown-content "$@" >"$T/fake.out" 2>&1 &
	FPID=$!
	for _ in $(seq 200); do [ -s "$pf" ] && break; sleep 0.05; done
	[ -s "$pf" ] || { cat "$T/fake.out"; echo "FAIL $fake did not start"; exit 1; }
	FURL=127.0.0.1:$(cat "$pf")
}
run() { # run NAME PROVIDER MODEL: CODE
	local name=$1 provider=$2 model=$3
	set +e
	ANTHROPIC_API_KEY=sk-ant-test OPENAI_API_KEY=sk-test ANTHROPIC_BASE_URL=http://$FURL \
		"$ASSAY" run --provider "$provider" --model "$model" --ask none --run-dir "$T/$name" \
		$([ "$provider" = anthropic ] || echo --base-url "http://$FURL/v1") \
		"count the files" </dev/null >"$T/$name.out" 2>"$T/$name.err"
	CODE=$?
	set -e
}
statuses() { $PY -c 'import json,sys; print([json.loads(l)["status"] for l in open(sys.argv[1])])' "$FLOG"; }
errors() { $PY -c 'import json,sys; print([json.loads(l).get("error", "")[:300] for l in open(sys.argv[1]) if json.loads(l)["status"] != 200])' "$FLOG"; }
# the checks every dialect shares: NAME, what its log notes once each
common() {
	local name=$1
	shift
	check "$name: the run completes (exit $CODE)" test "$CODE" -eq 0 || tail -3 "$name.err"
	check "$name: the fake accepted every request, the history sent back included: $(statuses) $(errors)" \
		test "$(statuses)" = "[200, 200, 200]"
	check "$name: only the real calls ran: $(jget "$name/transcript.jsonl" "[e['name'] for e in x if e['type'] == 'tool_call']")" \
		test "$(jget "$name/transcript.jsonl" "[e['name'] for e in x if e['type'] == 'tool_call']")" = "['shell', 'shell']"
	check "$name: no call was an unknown tool" \
		test "$(jget "$name/transcript.jsonl" "sum(1 for e in x if e['type'] == 'tool_result' and 'unknown tool' in json.dumps(e))")" = 0
	check "$name: each call ran once (calls.txt holds one, two)" test "$(jget "$name/transcript.jsonl" \
		"[r['content'].split().count(w) for r in [e for e in x if e['type'] == 'tool_result'][-1:] for w in ('one', 'two')]")" = "[1, 1]"
	local what
	for what in "$@"; do
		check "$name: the log notes '$what' once (in three answers)" \
			test "$(grep -c -- "not read, $what:" "$name/assay.log")" = 1
	done
}

# --- Anthropic --------------------------------------------------------
start fake_anthropic.py
run anth anthropic claude-sonnet-4-5
common anth "content block server_tool_use" "content block web_search_tool_result" \
	"content block future_widget" "content block delta future_widget_delta" "event future_event"
check "anth: the server tool's use is shown in the text of each of the three answers" \
	test "$(jget anth/transcript.jsonl 'sum("[server tool web_search: {\"query\":\"assay unknown blocks\"}]\n" in e["text"] for e in x if e["type"] == "assistant_message")')" = 3

# --- Responses --------------------------------------------------------
start fake_responses.py
run resp openai-responses gpt-5
common resp "output item web_search_call" "output item future_gizmo"
check "resp: the server tool's use is shown in the text of each of the three answers" \
	test "$(jget resp/transcript.jsonl 'sum("[server tool web_search: {\"type\":\"search\",\"query\":\"assay unknown items\"}]\n" in e["text"] for e in x if e["type"] == "assistant_message")')" = 3

# --- Chat Completions -------------------------------------------------
start fake_openai.py
run chat openai gpt-4.1
common chat "tool call of type custom"
check "chat: the custom call's input is not answer text" \
	test "$(jget chat/transcript.jsonl "sum('grammar' in e['text'] for e in x if e['type'] == 'assistant_message')")" = 0

finish
