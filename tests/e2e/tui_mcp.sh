#!/usr/bin/env bash
# MCP in the workbench, a person at the keys (tmux 120x40, --ask risky,
# our fake server with --elicit): every MCP call prompts with the
# Approval dialog ("call: fake/TOOL {...}", the reason: outside the
# sandbox); a progress-reporting call shows its progress live in Tools;
# a server's question (elicitation) is the Input dialog: its fields with
# their defaults, Enter refused while a required field is empty or a
# number out of bounds (the reason on screen), the answer typed and
# picked, sent and recorded; a second question declined with Esc; a
# call denied with n never reaches the server.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"
FM=$SRC/tests/fakes/fake_mcp.py
mkdir -p cfg/assay
cat >cfg/assay/config.json <<EOF2
{"mcp_servers": {"fake": {"command": "$PY", "args": ["$FM", "--elicit", "--log", "$T/fake.log"]}}}
EOF2
cat >s.json <<'EOF2'
{"turns": [
 {"text": "step 0", "tool_calls": [{"name": "fake__progress", "arguments": {"delay": 0.8}}]},
 {"text": "step 1", "tool_calls": [{"name": "fake__ask", "arguments": {}}]},
 {"text": "step 2", "tool_calls": [{"name": "fake__ask", "arguments": {}}]},
 {"text": "step 3", "tool_calls": [{"name": "fake__echo", "arguments": {"text": "never"}}]},
 {"text": "All done.", "tool_calls": []}]}
EOF2
RUN=$T/run
TR=$RUN/transcript.jsonl
tui_start 120 40 XDG_CONFIG_HOME="$T/cfg" -- --provider script --script "$T/s.json" \
	--ask risky --timeout 5 --run-dir "$RUN" "go"
result() { jget "$TR" "[e['content'] for e in x if e['type'] == 'tool_result' and e['id'] == '$1']"; }

check "an MCP call prompts with the Approval dialog" wait_for '┌ Approval ┐|─ Approval ─' 30
check "... naming the server and tool as the subject" screen_has 'call:'
check "... fake/progress with its arguments" screen_has 'fake/progress \{"delay":0\.8\}'
check "... and why: it runs outside the sandbox" screen_has 'which runs outside the'
keys y
check "approved: its progress shows live in Tools" wait_for 'progress [12] of 3 \([0-9]+%\): step [12]' 10
check "... the call running meanwhile" screen_has '#1 fake__progress'
check "it ends: its result in Tools" wait_for '#2 fake__ask' 20

check "the question's call prompts next" wait_for 'fake/ask' 10
keys y
check "the server's question: the Input dialog" wait_for 'Input requested' 10
check "... which server asks, in its title too" screen_has 'Input requested by fake'
check "... its message, escapes shown harmlessly" screen_has 'Export which rows\?'
check "... its escape shown as text (^[), never sent raw" screen_has 'Export which rows\? \^\[\[31m\(red\)'
check "... the fields with their titles, required ones marked" screen_has 'Your name \*'
check "... a default filled in (Rows 100)" screen_has '> 100'
check "... a choice with its default (south)" screen_has '< south >'
check "... a yes/no" screen_has '\( \) yes   \( \) no'
check "the status bar says a server asks" in_region 39 0 39 119 'an MCP server asks you'
sleep 7
check "a person's time to answer is not the call's (--timeout 5, 7 s later: still asked)" \
	screen_has 'Input requested by fake'
keys Enter
check "Enter with a required field empty: refused, saying which" wait_for '! Your name: required' 5
type_text 'Al'
keys Tab C-u
type_text '5000'
keys Tab Space Tab Space
check "picked: east, yes" wait_for '< east >' 5
check "... yes" screen_has '\(\*\) yes'
keys Enter
check "a number out of bounds: refused" wait_for '! Rows: at most 1000' 5
keys BTab BTab C-u
type_text '12abc'
keys Enter
check "a number with more after it: refused (not read as 12)" \
	wait_for '! Rows: "12abc" is not a whole number' 5
keys C-u
type_text '250'
keys Enter
check "sent: the dialog closes" wait_gone 'Input requested' 10
check "the server got the answer (the tool's result)" \
	wait_for 'answer:' 10
check "... exactly what was typed and picked" \
	test "$(result call_1_0)" = "['answer: {\"action\": \"accept\", \"content\": {\"confirm\": true, \"name\": \"Al\", \"region\": \"east\", \"rows\": 250}}']"
check "recorded: mcp_elicit by the person, with the content" \
	test "$(jget "$TR" "[(e['action'], e['by'], e['content']['rows']) for e in x if e['type'] == 'mcp_elicit']")" = "[('accept', 'person', 250)]"

check "the second question" wait_for 'fake/ask' 10
keys y
check "... its Input dialog" wait_for 'Input requested' 10
keys Escape
check "Esc declines: the dialog closes" wait_gone 'Input requested' 10
check "... the server was told decline" wait_for 'fake/echo' 10
check "... its result says so" test "$(result call_2_0)" = "['answer: {\"action\": \"decline\"}']"

check "the echo prompts: n denies it" screen_has 'fake/echo \{"text":"never"\}'
keys n
check "the run ends" wait_for 'All done\.' 20
check "the denied call never reached the server" \
	test "$(grep -c '"name": "echo"' "$T/fake.log" || true)" = 0
check "... recorded as denied by the person" \
	test "$(jget "$TR" "[(e['decision'], e['by']) for e in x if e['type'] == 'approval' and e['id'] == 'call_3_0']")" = "[('denied', 'user')]"
keys C-q
check "Ctrl-Q quits (exit 0)" test "$(wait_exit 20)" = 0
check "no process left behind (the server ended)" test -z "$(leftovers)"

# Ctrl-C while a question is up: the call stops, the question with it
cat >c.json <<'EOF2'
{"turns": [{"text": "asking", "tool_calls": [{"name": "fake__ask", "arguments": {}}]},
 {"text": "Done.", "tool_calls": []}]}
EOF2
tui_start 120 40 XDG_CONFIG_HOME="$T/cfg" -- --provider script --script "$T/c.json" \
	--ask none --run-dir "$T/c" "go"
check "Ctrl-C case: the question is up" wait_for 'Input requested by fake' 30
keys C-c
check "Ctrl-C: the dialog goes" wait_gone 'Input requested' 10
check "... the question recorded as cancelled" \
	test "$(jget "$T/c/transcript.jsonl" "[(e['action'], e['by']) for e in x if e['type'] == 'mcp_elicit']")" = "[('cancel', 'nobody')]"
# (the question goes before the call ends: its result comes after)
result_cancelled() {
	grep -q 'cancelled' <<<"$(jget "$T/c/transcript.jsonl" "[e['content'] for e in x if e['type'] == 'tool_result'][0]")"
}
check "... the call's result says it was cancelled" wait_until 10 result_cancelled
keys C-q
check "Ctrl-Q quits" test "$(wait_exit 20)" != timeout
check "no process left behind" test -z "$(leftovers)"

# headless, nobody to ask: the question declined at once, saying so
cat >h.json <<'EOF2'
{"turns": [{"text": "asking", "tool_calls": [{"name": "fake__ask", "arguments": {}}]},
 {"text": "a url", "tool_calls": [{"name": "fake__askurl", "arguments": {}}]},
 {"text": "a big one", "tool_calls": [{"name": "fake__askbig", "arguments": {}}]},
 {"text": "Done.", "tool_calls": []}]}
EOF2
XDG_CONFIG_HOME=$T/cfg "$ASSAY" run --provider script --script h.json --ask none \
	--run-dir "$T/h" go </dev/null >h.out 2>&1 || true
check "headless: the question declined, nobody to answer; the 100-field one by assay" \
	test "$(jget "$T/h/transcript.jsonl" "[(e['action'], e['by']) for e in x if e['type'] == 'mcp_elicit']")" = "[('decline', 'nobody'), ('decline', 'assay')]"
hres() { jget "$T/h/transcript.jsonl" "[e['content'] for e in x if e['type'] == 'tool_result' and e['id'] == 'call_$1_0'][0]"; }
check "... the server told decline" test "$(hres 0)" = 'answer: {"action": "decline"}'
check "a url-mode question (not offered): refused with an error, never shown" \
	grep -q '"code": -32602' <<<"$(hres 1)"
check "... and not recorded as a question" \
	test "$(jget "$T/h/transcript.jsonl" "[e['id'] for e in x if e['type'] == 'mcp_elicit' and e.get('call') == 'call_1_0']")" = "[]"
check "a 100-field form: declined, said so" grep -q 'declined: a form too big' h.out
check "... the server told decline" test "$(hres 2)" = 'answer: {"action": "decline"}'
check "... and the output says why, and where to answer" grep -q 'declined: nobody to answer here.*in the workbench' h.out
check "... the server's escape shown harmlessly" grep -q 'Export which rows? ^\[\[31m(red)' h.out

# questions nobody holds for a person leave the call's time running: 5
# of them 0.7 s apart (3.5 s) in a call of --timeout 2 (before, each
# answer started its time again: such a server could run for ever)
cat >n.json <<'EOF2'
{"turns": [{"text": "nagging", "tool_calls": [{"name": "fake__nag", "arguments": {}}]},
 {"text": "Done.", "tool_calls": []}]}
EOF2
XDG_CONFIG_HOME=$T/cfg "$ASSAY" run --provider script --script n.json --ask none \
	--timeout 2 --run-dir "$T/n" go </dev/null >n.out 2>&1 || true
nres=$(jget "$T/n/transcript.jsonl" "[e['content'] for e in x if e['type'] == 'tool_result'][0]")
check "a call whose questions nobody answers times out (got: ${nres:0:80})" \
	grep -q 'no answer from the server after 2 s' <<<"$nres"
check "... its questions were declined, nobody to answer" \
	test "$(jget "$T/n/transcript.jsonl" "len([e for e in x if e['type'] == 'mcp_elicit' and e['by'] == 'nobody'])")" -ge 2
finish
