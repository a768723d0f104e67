#!/usr/bin/env bash
# A real server's question answered by a person in the workbench (tmux
# 120x40): @modelcontextprotocol/server-everything's
# trigger-elicitation-request, called by the scripted model, asks for a
# form of 13 fields (text with formats, numbers with bounds, yes/no,
# single and multiple choices, titled and legacy ones); the Input
# dialog shows them with their defaults, scrolls to the field in focus,
# refuses a malformed email with the reason, and sends what was typed
# with the defaults filled. SKIPPED without the npm packages.
source "$(dirname "$0")/lib.bash"
need_mcp_npm
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"
mkdir -p cfg/assay
cat >cfg/assay/config.json <<EOF2
{"mcp_servers": {"every": {"command": "$NODE", "args": ["$MCP_NPM/.bin/mcp-server-everything", "stdio"]}}}
EOF2
cat >s.json <<'EOF2'
{"turns": [
 {"text": "asking", "tool_calls": [{"name": "every__trigger-elicitation-request", "arguments": {}}]},
 {"text": "All done.", "tool_calls": []}]}
EOF2
RUN=$T/run
TR=$RUN/transcript.jsonl
tui_start 120 40 XDG_CONFIG_HOME="$T/cfg" -- --provider script --script "$T/s.json" \
	--ask none --run-dir "$RUN" "go"
check "the server's question: the Input dialog" wait_for 'Input requested' 40
check "... its message" screen_has 'Please provide inputs for the following fields'
check "... the first field, required, with its description" screen_has 'String \*'
check "... a default text" screen_has 'It was a dark and stormy night'
type_text 'Ada Lovelace'
keys Tab Tab Tab
type_text 'ada@'
keys Enter
check "a malformed email: refused, the reason shown" wait_for '! String with email format: not a valid email' 10
keys C-u
type_text 'ada@example.com'
keys Tab Tab Tab Tab Tab Tab Tab
check "the dialog scrolled to a field further down (a titled choice)" wait_for '< Superman >' 10
keys Space
check "... Space picks the next one" wait_for '< Green Lantern >' 5
keys Enter
check "sent: the dialog closes" wait_gone 'Input requested' 10
check "the run ends" wait_for 'All done\.' 20
res=$(jget "$TR" "[e['content'] for e in x if e['type'] == 'tool_result'][0]")
check "the server got the answer" grep -q 'User provided the requested information' <<<"$res"
check "... what was typed" grep -q '"name": "Ada Lovelace"' <<<"$res"
check "... the email" grep -q '"email": "ada@example.com"' <<<"$res"
check "... the choice picked" grep -q '"titledSingleSelectEnum": "hero-2"' <<<"$res"
check "... the defaults of the rest filled in" grep -q '"integer": 42' <<<"$res"
check "recorded: accepted by the person" \
	test "$(jget "$TR" "[(e['action'], e['by'], e['content']['name']) for e in x if e['type'] == 'mcp_elicit']")" = "[('accept', 'person', 'Ada Lovelace')]"
keys C-q
check "Ctrl-Q quits (exit 0)" test "$(wait_exit 20)" = 0
check "no process left behind (the server ended)" test -z "$(leftovers)"
finish
