#!/usr/bin/env bash
# One run, three wire formats: the demo analysis through openai (Chat
# Completions), openai-responses and anthropic, each against its strict
# fake, gives transcripts of the same shape (the same event types in the
# same order, text and output deltas aside; the same tool calls with the same arguments,
# the same results) and exports of the same structure; each records
# its provider and is priced.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
export XDG_CONFIG_HOME=$T/xdg
unset OPENAI_BASE_URL ANTHROPIC_BASE_URL ASSAY_PROVIDER ASSAY_MODEL
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; cleanup' EXIT
# (a 0.1 ms pause between a fake's two writes of each event, not 1 ms:
# the client still reads events in two parts as often, the demo's
# thousands of events no longer take 15 s)
serve() { # serve NAME FAKE.py: URL in $T/NAME.url
	local name=$1 fake=$2 pf=$T/$1.port
	$PY "$SRC/tests/fakes/$fake" --script "$DATA/demo/energy.json" --port 0 --port-file "$pf" \
		--seed 7 --key sk-shape --delay-ms 0.1 >"$T/$name.fake.out" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 200); do [ -s "$pf" ] && break; sleep 0.05; done
	[ -s "$pf" ] || { cat "$T/$name.fake.out"; echo "FAIL $fake did not start"; exit 1; }
}
serve chat fake_openai.py
serve resp fake_responses.py
serve anth fake_anthropic.py
demo() { # demo NAME PROVIDER MODEL [VAR=VALUE...]
	local name=$1 provider=$2 model=$3
	shift 3
	set +e
	env "$@" "$ASSAY" run --provider "$provider" --model "$model" --ask none \
		--input "$DATA/building_energy.csv" --output output/anomalies.csv \
		--output output/energy_anomalies.png --output output/anomaly_report.md \
		--run-dir "$T/$name" --out "$T/$name.out" \
		"Find the unusual energy-use events in input/building_energy.csv" \
		</dev/null >"$T/$name.stdout" 2>"$T/$name.err"
	echo $? >"$T/$name.code"
	set -e
}
demo chat openai gpt-4.1 OPENAI_API_KEY=sk-shape OPENAI_BASE_URL=http://127.0.0.1:$(cat chat.port)/v1 &
R1=$!
demo resp openai-responses gpt-4.1 OPENAI_API_KEY=sk-shape OPENAI_BASE_URL=http://127.0.0.1:$(cat resp.port)/v1 &
R2=$!
demo anth anthropic claude-sonnet-4-5 ANTHROPIC_API_KEY=sk-shape ANTHROPIC_BASE_URL=http://127.0.0.1:$(cat anth.port) &
R3=$!
wait $R1 $R2 $R3 # the three runs, not the fake servers
# the event types in order, the calls and their arguments: text and
# output deltas aside (how a stream or a pipe is cut into pieces is
# timing, not shape), and input_hashes too (the inputs are hashed beside
# the run: where their event falls is timing; each run has it once)
shape() {
	jget "$T/$1/transcript.jsonl" "[(e['type'], e.get('name'), json.dumps(e.get('arguments'), sort_keys=True) if 'arguments' in e else None) for i, e in enumerate(x) if e['type'] not in ('text_delta', 'exec_output', 'input_hashes')]"
}
# the tool results but view_image's, which name the size each provider
# takes (its image is checked apart, below)
results() { jget "$T/$1/transcript.jsonl" "(lambda v: [e['content'] for e in x if e['type'] == 'tool_result' and e['id'] not in v])({e['id'] for e in x if e['type'] == 'tool_call' and e['name'] == 'view_image'})"; }
for n in chat resp anth; do
	check "$n: the demo completes (exit $(cat $n.code))" test "$(cat $n.code)" -eq 0 || tail -3 "$n.err"
	check "... every turn priced" test "$(jget "$n/transcript.jsonl" "all(e['priced'] for e in x if e['type'] == 'usage')")" = True
	"$ASSAY" export "$T/$n" --format md -o "$T/$n.md" 2>/dev/null
	check "... exported" test -s "$T/$n.md"
done
# one event per line, so that a difference shows as a diff
for n in chat resp anth; do shape "$n" | tr -d '[]' | sed 's/), (/)\n(/g' >"$T/$n.shape"; done
same_shape() { diff -u "$T/chat.shape" "$T/$1.shape" | head -40; cmp -s "$T/chat.shape" "$T/$1.shape"; }
check "openai-responses: the same events, calls and arguments as openai" same_shape resp
check "anthropic: the same events, calls and arguments as openai" same_shape anth
for n in chat resp anth; do
	check "$n: the inputs hashed once" test "$(jget "$n/transcript.jsonl" "sum(e['type'] == 'input_hashes' for e in x)")" = 1
done
check "the same tool results (byte for byte) through all three" \
	sh -c "test '$(results chat | sha256sum)' = '$(results resp | sha256sum)' && test '$(results chat | sha256sum)' = '$(results anth | sha256sum)'"
# the chart went to each model once (with the call that made it), scaled
# to that provider's box; view_image then found it already there
sent() { jget "$T/$1/transcript.jsonl" "[(e['path'], e['how'], e['width'], e['height']) for e in x if e['type'] == 'image_sent']"; }
check "the chart sent once to each, in its provider's size: $(sent chat) $(sent resp) $(sent anth)" \
	sh -c "test \"$(sent chat)\" = \"[('output/energy_anomalies.png', 'auto', 1365, 768)]\" && test \"$(sent resp)\" = \"$(sent chat)\" && test \"$(sent anth)\" = \"[('output/energy_anomalies.png', 'auto', 1430, 804)]\""
heads() { grep -c '^#' "$T/$1.md"; }
check "the exports have the same structure ($(heads chat) $(heads resp) $(heads anth) headings)" \
	sh -c "test $(heads chat) -eq $(heads resp) && test $(heads chat) -eq $(heads anth)"
check "each records its provider" \
	test "$(for n in chat resp anth; do jget "$n/transcript.jsonl" "x[0]['provider']"; done | tr '\n' ' ')" = "openai openai-responses anthropic "
finish
