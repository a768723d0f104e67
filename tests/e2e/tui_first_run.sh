#!/usr/bin/env bash
# The first run without a key: `assay` on a terminal with no API key and
# no configuration opens the workbench (not an error on stderr) with a
# notice naming the three ways on (set the key, --provider ollama, assay
# demo) and the model in the status bar marked "(no API key)"; a message
# sent fails in the conversation as provider_auth and the workbench
# waits for the next; Ctrl-Q ends it. Headless, no key is still an error
# before anything starts (exit 4). Skipped (77) without bubblewrap or
# tmux.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
mkdir -p "$T/home"
cd "$T" # the project (tui_start runs there)
nokey=(OPENAI_API_KEY= ANTHROPIC_API_KEY= OPENAI_BASE_URL= ASSAY_PROVIDER=
	ASSAY_MODEL= HOME=$T/home XDG_CONFIG_HOME=$T/home/.config)
tui_start 150 30 "${nokey[@]}" --
check "no key: the workbench opens" wait_for '─ Conversation ─' 20
check "... saying which key is missing" wait_for 'no API key for' 5
check "... naming the ways on: the key" screen_has 'OPENAI_API_KEY \(or use'
check "... to set" screen_has 'set the key and start assay again'
check "... --provider ollama" screen_has 'provider ollama'
check "... assay demo" screen_has 'assay demo'
check "... the model in the status bar, marked" screen_has 'openai/gpt-4\.1 \(no API key\)'
check "... waiting for the user" wait_for 'waiting for you' 5
type_text "hello there"
keys Enter
check "a message sent fails in the conversation" wait_for 'provider_auth: openai: no API key' 10
check "... and the workbench waits again" wait_for 'waiting for you' 10
keys C-q
code=$(wait_exit 20)
check "Ctrl-Q ends it (the last request failed: exit 4, got $code)" test "$code" = 4
run=$(ls -d "$T"/.assay/runs/* | head -1)
check "the run is recorded: the message and the error" \
	sh -c "grep -q '\"type\":\"user_message\"' '$run/transcript.jsonl' && grep -q '\"category\":\"provider_auth\"' '$run/transcript.jsonl'"
check "... no request was made (no model_response)" \
	sh -c "! grep -q '\"type\":\"model_response\"' '$run/transcript.jsonl'"
# the same with anthropic: its own key named
tui_start 150 30 "${nokey[@]}" -- --provider anthropic
check "anthropic without a key: its key named" wait_for 'ANTHROPIC_API_KEY' 20
check "... and its model in the status bar" screen_has 'anthropic/.* \(no API key\)'
keys C-q
check "... Ctrl-Q with nothing sent: exit 0" test "$(wait_exit 20)" = 0
# a key there: no notice
tui_start 150 30 "${nokey[@]}" OPENAI_API_KEY=sk-test --
check "with a key: the workbench, no notice" wait_for 'waiting for you' 20
no_mark() { ! screen_has 'no API key'; }
check "... nothing marked" no_mark
keys C-q
wait_exit 20 >/dev/null
# headless: still an error before anything starts
env "${nokey[@]}" "$ASSAY" run --run-dir "$T/h" hi </dev/null >"$T/h.out" 2>&1 && code=0 || code=$?
check "headless without a key: exit 4 (got $code)" test "$code" = 4
check "... with the message" grep -q 'no API key for https://api.openai.com/v1: set OPENAI_API_KEY' "$T/h.out"
finish
