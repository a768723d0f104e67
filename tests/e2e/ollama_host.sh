#!/usr/bin/env bash
# --provider ollama finds its server through OLLAMA_HOST, in the forms
# Ollama itself takes: host:port, http://host:port, and 0.0.0.0:port
# (what `ollama serve` listens on, reached as 127.0.0.1). The fake
# server speaks Ollama's stream (--quirks ollama: every call at index 0,
# role on each chunk) and knows one model; each run must reach it
# (its log), complete, and record where it went. No key is needed, and
# the OpenAI key in the environment is not sent to the Ollama server
# (the fake only accepts the placeholder token src/llm/openai.c sends
# when there is no key); a key variable named in the config is sent.
# --base-url wins over OLLAMA_HOST; a model the server does not have is
# a clear error (exit 4) with the server's words; no model: exit 2.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
cat >script.json <<'JSON'
{"turns": [
 {"text": "Two calls at once.", "tool_calls": [
   {"name": "shell", "arguments": {"command": "echo first > a.txt; echo ran-a"}},
   {"name": "shell", "arguments": {"command": "echo second > b.txt; echo ran-b"}}]},
 {"text": "Both files are written.", "tool_calls": []}
]}
JSON
MODEL=qwen3:8b
start_fake script.json --quirks ollama --models "$MODEL" --key none
export XDG_CONFIG_HOME=$T/xdg
unset OPENAI_BASE_URL OPENAI_API_KEY ASSAY_PROVIDER ASSAY_MODEL OLLAMA_HOST
requests() { fake_requests | tr -d ' '; }
models_sent() { # the model of each request after the first $1
	$PY -c 'import json,sys
print([json.loads(l)["model"] for l in open(sys.argv[1])][int(sys.argv[2]):])' "$FAKE_LOG" "$1"
}
# run NAME [VAR=VALUE...] -- [options]: CODE, N0 (requests before)
run() {
	local name=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	N0=$(requests)
	set +e
	env "${envs[@]}" "$ASSAY" run --provider ollama --ask none --run-dir "$T/$name" "$@" \
		"write two files" </dev/null >"$T/$name.out" 2>"$T/$name.err"
	CODE=$?
	set -e
}
ran_ok() { # ran_ok NAME: completed, both calls ran, two requests for the model
	test "$CODE" -eq 0 &&
		test "$(jget "$T/$1/transcript.jsonl" '(x[0]["provider"], x[-1]["status"])')" = "('ollama', 'completed')" &&
		test "$(cat "$T/$1/workspace/a.txt" "$T/$1/workspace/b.txt")" = "first
second" &&
		test "$(models_sent "$N0")" = "['$MODEL', '$MODEL']"
}
base_of() { jget "$T/$1/transcript.jsonl" 'x[0]["base_url"]'; }

i=0
for form in "127.0.0.1:$PORT" "http://127.0.0.1:$PORT" "0.0.0.0:$PORT" \
	"127.0.0.1:$PORT/" "http://127.0.0.1:$PORT//"; do
	i=$((i + 1))
	name=host-$i
	run "$name" "OLLAMA_HOST=$form" -- --model "$MODEL"
	check "OLLAMA_HOST=$form: completes through the fake, no key set (exit $CODE)" ran_ok "$name" ||
		sed 's/^/     /' "$T/$name.err"
	check "... recorded base_url http://127.0.0.1:$PORT/v1 (got $(base_of "$name"))" \
		test "$(base_of "$name")" = "http://127.0.0.1:$PORT/v1"
done

# the OpenAI key stays home; a key variable named in the config is sent
run nokey "OLLAMA_HOST=127.0.0.1:$PORT" OPENAI_API_KEY=sk-openai-secret-$RANDOM -- --model "$MODEL"
check "OPENAI_API_KEY set: not sent to the Ollama server (exit $CODE)" ran_ok nokey ||
	sed 's/^/     /' "$T/nokey.err"
start_fake script.json --quirks ollama --models "$MODEL" --key sk-proxy-key
printf '{"api_key_env": "OLLAMA_PROXY_KEY"}\n' >named.json
run named "OLLAMA_HOST=127.0.0.1:$PORT" OLLAMA_PROXY_KEY=sk-proxy-key -- --model "$MODEL" --config "$T/named.json"
check "a key named by api_key_env is sent (exit $CODE)" ran_ok named || sed 's/^/     /' "$T/named.err"
run unnamed "OLLAMA_HOST=127.0.0.1:$PORT" OLLAMA_PROXY_KEY=sk-proxy-key -- --model "$MODEL"
check "... and only when named: without it the proxy refuses (exit 4, got $CODE)" test "$CODE" -eq 4
start_fake script.json --quirks ollama --models "$MODEL" --key none

# --base-url wins; OLLAMA_HOST names a port held here, with no listener
$PY -c 'import os, socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0))
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(600)' "$T/dead.port" &
DEAD_PID=$!
trap 'kill $DEAD_PID 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 200); do [ -s dead.port ] && break; sleep 0.05; done
[ -s dead.port ] || { echo "FAIL could not hold a port"; exit 1; }
run baseurl "OLLAMA_HOST=127.0.0.1:$(cat dead.port)" -- --model "$MODEL" --base-url "$URL"
check "--base-url wins over OLLAMA_HOST (exit $CODE)" ran_ok baseurl || sed 's/^/     /' "$T/baseurl.err"

# OPENAI_BASE_URL is the openai provider's: with --provider ollama it is
# not where requests go (it names the dead port here)
run openaienv "OLLAMA_HOST=127.0.0.1:$PORT" "OPENAI_BASE_URL=http://127.0.0.1:$(cat dead.port)/v1" -- --model "$MODEL"
check "OPENAI_BASE_URL set: --provider ollama still asks OLLAMA_HOST (exit $CODE)" ran_ok openaienv ||
	sed 's/^/     /' "$T/openaienv.err"

# a model the server does not have, and none at all
run nomodel "OLLAMA_HOST=127.0.0.1:$PORT" -- --model llama9:404b
check "a model the server lacks: exit 4 (got $CODE)" test "$CODE" -eq 4
check "... with the server's words and what to check" \
	grep -q 'model "llama9:404b" not found, try pulling it first.*check --model' nomodel.err ||
	sed 's/^/     /' nomodel.err
check "... asked once, not retried" test "$(models_sent "$N0")" = "['llama9:404b']"
run nomodelarg "OLLAMA_HOST=127.0.0.1:$PORT" --
check "no --model: exit 2 (got $CODE)" test "$CODE" -eq 2
check "... saying what to pass" grep -q 'ollama needs a model: pass --model NAME' nomodelarg.err
check "... nothing sent" test "$(requests)" = "$N0"
finish
