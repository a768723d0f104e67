#!/usr/bin/env bash
# The Approval dialog of the TUI, in tmux at 120x40, ask mode risky:
# safe calls run unasked; rm -rf and curl (two calls of one turn: a
# queue) prompt with the dialog and its choices; n leaves the files; f
# sends the typed feedback as the tool result; e runs the edited command,
# audited with both versions; a shows the exact rule, s saves it for the
# session and the identical command then runs unasked, by the rule.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"

script() {
	$PY - "$@" <<'PYEND'
import json, sys
sh = lambda c: {"name": "shell", "arguments": {"command": c}}
turns = [{"text": "step %d" % i, "tool_calls": [sh(c) for c in t.split("\n@@\n")]}
         for i, t in enumerate(sys.argv[2:])]
turns.append({"text": "All done.", "tool_calls": []})
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PYEND
}
SETUP='mkdir -p keep && echo precious > keep/a.txt && echo also > keep/b.txt'
LONG="http://example.com/$(printf 'x%.0s' {1..150})/END"
script "$T/s.json" "$SETUP" \
	$'rm -rf keep\n@@\ncurl -s '"$LONG" \
	'rm -rf keep/a.txt' \
	'cat /etc/os-release' \
	'cat /etc/os-release' \
	'ls keep; ls'
RUN=$T/run
tui_start 120 40 -- --provider script --script "$T/s.json" \
	--run-dir "$RUN" "go"
TR=$RUN/transcript.jsonl
CHOICES='\[y\] run once  \[e\] edit  \[a\] always  \[n\] deny  \[f\] deny with feedback'

check "rm -rf prompts with the Approval dialog" wait_for '┌ Approval ┐|─ Approval ─' 20
check "the dialog shows the command" screen_has '│ +rm -rf keep +│'
check "the tool" screen_has 'tool: +shell'
check "the working directory" screen_has 'in: +/workspace'
check "the reason in words" screen_has 'deletes or overwrites: rm -r deletes keep'
check "the choices on one line, without always for a deletion" \
	screen_has '\[y\] run once  \[e\] edit  \[n\] deny  \[f\] deny with feedback'
check "and it says why always is not offered" \
	screen_has '"always" is not offered: calls with reasons of kind deletion'
check "the second call of the turn waits in the queue" screen_has '\(1 more waiting\)'
check "the Tools pane shows the call waiting for approval" \
	screen_has '#2 shell .*needs approval'
check "the status bar says so" in_region 39 0 39 119 'waiting for approval'
check "the safe setup ran unasked, by the mode" \
	test "$(jget "$TR" "[(e['by'], e['original'][:8]) for e in x if e['type'] == 'approval']")" = "[('mode', 'mkdir -p')]"
# a, then f: keys are handled in order, so once f's field shows, a has
# been handled; had a gone to "always", f there would do nothing
keys a f
check "a does nothing when always is not offered (f after it opens its field)" \
	wait_for 'feedback for the model, then Enter' 10
check "no rule was offered" test "$(screen | grep -c 'rule that would be saved' || true)" = 0
check "still the rm -rf" screen_has '│ +rm -rf keep +│'
keys Escape
check "Esc closes the field" wait_gone 'feedback for the model, then Enter' 5
check "back at the choices" screen_has '\[y\] run once  \[e\] edit  \[n\] deny'
keys n
check "curl prompts next" wait_for 'network: curl talks to hosts' 10
check "the long URL is wrapped, never cut: its end shows" screen_has 'xxxx/END +│'
keys f
check "f opens the feedback field" wait_for 'feedback for the model, then Enter' 10
type_text 'use the copy in keep/ instead'
check "the feedback is typed in the dialog" wait_for '> use the copy in keep/ instead' 5
keys Enter
check "the edit prompt" wait_for '│ +rm -rf keep/a\.txt +│' 10
keys e
check "e opens the field, prefilled" wait_for '> rm -rf keep/a\.txt' 10
keys C-u
type_text 'echo edited > edited.txt'
check "Ctrl-U cleared it; the new command typed" wait_for '> echo edited > edited\.txt *│' 5
keys Enter
check "cat /etc/os-release prompts with all five choices" wait_for "$CHOICES" 10
check "it is the cat" screen_has '│ +cat /etc/os-release +│'
keys a
check "a shows the exact rule that would be saved" \
	wait_for '\{"match":"cat /etc/os-release","action":"allow"\}' 10
check "and where it can go" screen_has '\[s\] for this session  \[p\] for the project \(\.assay/config\.json\)  Esc back'
keys Escape
check "Esc goes back to the choices" wait_for "$CHOICES" 5
keys a
wait_for '\[s\] for this session' 5 >/dev/null
keys s
check "the run goes on to its end" wait_for 'assistant: All done\.' 20
check "the dialog is gone" wait_gone 'Approval' 5
check "the agent waits for the next message" wait_for 'waiting for you' 10

appr() { jget "$TR" "[(e['decision'], e['by'], e.get('choice')) for e in x if e['type'] == 'approval' and e['original'] == '$1']"; }
check "four prompts: approval_request events" \
	test "$(jget "$TR" "len([e for e in x if e['type'] == 'approval_request'])")" -eq 4
check "deny: audited as denied by the user" test "$(appr 'rm -rf keep')" = "[('denied', 'user', 'deny')]"
check "feedback: audited with the text" \
	test "$(jget "$TR" "[(e['decision'], e['choice'], e['feedback']) for e in x if e['type'] == 'approval' and e['original'].startswith('curl')]")" = \
	"[('denied', 'feedback', 'use the copy in keep/ instead')]"
check "feedback: the curl call's tool result is the feedback" \
	test "$(jget "$TR" "[r['content'].split(chr(10), 1)[1] for r in x if r['type'] == 'tool_result' and r['id'] == [e['id'] for e in x if e['type'] == 'tool_call' and e['arguments']['command'].startswith('curl')][0]]")" = \
	"['use the copy in keep/ instead']"
check "edit: audited with both versions" \
	test "$(jget "$TR" "[(e['decision'], e['original'], e['final']) for e in x if e['type'] == 'approval' and e.get('choice') == 'edit']")" = \
	"[('edited', 'rm -rf keep/a.txt', 'echo edited > edited.txt')]"
check "edit: exec_start records what ran" \
	test "$(jget "$TR" "[e['command'] for e in x if e['type'] == 'exec_start'][1:]")" = \
	"['echo edited > edited.txt', 'cat /etc/os-release', 'cat /etc/os-release', 'ls keep; ls']"
check "always: saved for the session, the rule shown" \
	test "$(jget "$TR" "[(e['rule'], e['saved']['scope']) for e in x if e['type'] == 'approval' and e.get('choice') == 'always']")" = \
	"[({'match': 'cat /etc/os-release', 'action': 'allow'}, 'session')]"
check "always: the identical command then ran unasked, by the rule" \
	test "$(appr 'cat /etc/os-release')" = "[('approved', 'user', 'always'), ('approved', 'rule', None)]"
check "session scope: nothing written to .assay/config.json" test ! -e .assay/config.json
check "the denied and edited deletions left the planted files" \
	test "$(jget "$TR" "[e['content'] for e in x if e['type'] == 'tool_result'][-1]")" = \
	"$(printf 'a.txt\nb.txt\nedited.txt\nkeep\n[exit code 0]')"
keys C-q
check "Ctrl-Q when idle quits (exit 0)" test "$(wait_exit 20)" = 0
check "no process left behind" test -z "$(leftovers)"

# a command taller than the screen: the dialog scrolls, the choices stay
TALL=$(for i in $(seq 1 40); do echo "echo line-$i"; done; echo 'rm -rf keep')
script "$T/tall.json" "$TALL"
tui_start 100 24 -- --provider script --script "$T/tall.json" \
	--run-dir "$T/run2" "tall"
check "a tall command prompts; the first lines show" wait_for '│ +echo line-1 +│' 20
check "the choices stay in view" screen_has '\[y\] run once  \[e\] edit  \[n\] deny'
check "the dialog tells it scrolls" screen_has 'PgUp/PgDn: 1-'
check "the end is not on screen yet" test "$(screen | grep -c 'rm -rf keep' || true)" = 0
keys NPage NPage NPage
check "PgDn scrolls to the rest of the command" wait_for '│ +rm -rf keep +│' 5
keys n
check "denied: the agent waits" wait_for 'waiting for you' 10
check "the tall command did not run" \
	test "$(jget "$T/run2/transcript.jsonl" "len([e for e in x if e['type'] == 'exec_start'])")" = 0
keys C-q
check "quits (exit 0)" test "$(wait_exit 20)" = 0
finish
