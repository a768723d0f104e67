#!/usr/bin/env bash
# Approvals headless with a terminal: `assay run` inside tmux asks on
# the terminal, with the choices of the TUI dialog. Safe calls run
# unasked; rm -rf and curl prompt (two calls of one turn queue); deny
# leaves the files; the feedback reaches the model; an edited command
# is what runs and is audited with both versions; "always" saves the
# rule it shows into .assay/config.json and the identical command then
# runs unasked, in this run and the next.
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
turns.append({"text": "Done.", "tool_calls": []})
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PYEND
}
SETUP='mkdir -p keep && echo precious > keep/a.txt && echo also > keep/b.txt'
script "$T/s1.json" "$SETUP" \
	$'rm -rf keep\n@@\ncurl -s http://example.com/x' \
	'rm -rf keep/a.txt' \
	'cat /etc/os-release' \
	'cat /etc/os-release' \
	'touch once.txt && rm once.txt' \
	'ls keep; ls'

echo '{"rules": [{"match": "shred *", "action": "deny"}]}' >deny.json
tui_start 110 45 -- run --provider script --script "$T/s1.json" \
	--config deny.json --run-dir "$T/r1" "go"
check "rm -rf prompts, with the dialog's choices" wait_for '^    rm -rf keep$' 20
check "the choices are on one line" \
	screen_has '\[y\] run once  \[e\] edit  \[a\] always  \[n\] deny  \[f\] deny with feedback'
check "the reason is shown in words" screen_has 'deletes or overwrites: rm -r deletes keep'
check "the working directory is shown" screen_has 'in: +/workspace'
check "the turn's second call waits in the queue" screen_has '\(1 more waiting\)'
check "the safe setup ran unasked before" \
	test "$(jget "$T/r1/transcript.jsonl" "[e['by'] for e in x if e['type'] == 'approval']")" = "['mode']"
keys a
check "always is not offered for a deletion, and says why" \
	wait_for 'always" is not offered: calls with reasons of kind deletion are never' 10
keys n
check "curl prompts next" wait_for '^    curl -s http://example.com/x$' 10
check "the network reason" screen_has 'network: curl talks to hosts'
keys f
wait_for 'feedback for the model' 10 >/dev/null
type_text 'use the copy in keep/ instead'
keys Enter
check "the edit prompt" wait_for '^    rm -rf keep/a.txt$' 10
keys e
wait_for 'Enter runs it' 10 >/dev/null
keys C-u
type_text 'shred keep/a.txt'
keys Enter
check "an edit is still bound by the deny rules" \
	wait_for 'the edited command is denied by the rule \{"match":"shred \*"' 10
keys e
wait_for 'Enter runs it' 10 >/dev/null
keys C-u
type_text 'echo edited > edited.txt'
keys Enter
check "cat /etc/os-release prompts (outside the workspace)" wait_for '^    cat /etc/os-release$' 10
keys a
check "always shows the exact rule it would save" \
	wait_for '\{"match":"cat /etc/os-release","action":"allow"\}' 10
check "and where it can go" screen_has '\[s\] for this session  \[p\] for the project'
keys p
check "run once prompt" wait_for '^    touch once.txt && rm once.txt$' 10
keys y
check "the run ends (exit 0)" test "$(wait_exit 30)" = 0

TR=$T/r1/transcript.jsonl
appr() { jget "$TR" "[(e['decision'], e['by'], e.get('choice')) for e in x if e['type'] == 'approval' and e['original'] == '$1']"; }
result() { jget "$TR" "[r['content'] for r in x if r['type'] == 'tool_result' and r['id'] == [e['id'] for e in x if e['type'] == 'approval' and e['original'] == '$1'][$2]]"; }
check "each prompt waited: approval_request events for the five asked calls" \
	test "$(jget "$TR" "len([e for e in x if e['type'] == 'approval_request'])")" -eq 5
check "deny: audited as denied by the user" test "$(appr 'rm -rf keep')" = "[('denied', 'user', 'deny')]"
check "deny: the model is told the user denied it" \
	test "$(result 'rm -rf keep' 0 | cut -c1-21)" = "['denied by the user:"
check "feedback: audited with the text" \
	test "$(jget "$TR" "[(e['decision'], e['choice'], e['feedback']) for e in x if e['type'] == 'approval' and e['original'].startswith('curl')]")" = \
	"[('denied', 'feedback', 'use the copy in keep/ instead')]"
check "feedback: it reaches the model as the tool result" \
	test "$(jget "$TR" "[e['content'].endswith('use the copy in keep/ instead') for e in x if e['type'] == 'tool_result'][2]")" = True
check "edit: audited with both versions" \
	test "$(jget "$TR" "[(e['decision'], e['original'], e['final']) for e in x if e['type'] == 'approval' and e.get('choice') == 'edit']")" = \
	"[('edited', 'rm -rf keep/a.txt', 'echo edited > edited.txt')]"
check "edit: exec_start records what ran" \
	test "$(jget "$TR" "[e['command'] for e in x if e['type'] == 'exec_start']")" = \
	"$($PY -c 'import sys; print([sys.argv[1], "echo edited > edited.txt", "cat /etc/os-release", "cat /etc/os-release", "touch once.txt && rm once.txt", "ls keep; ls"])' "$SETUP")"
check "edit: the model is told what ran instead" \
	test "$(result 'rm -rf keep/a.txt' 0 | cut -c1-40)" = "['[the user edited this call before it r"
check "always: saved for the project, the rule on record" \
	test "$(jget "$TR" "[(e['choice'], e['rule'], e['saved']['scope']) for e in x if e['type'] == 'approval' and e.get('choice') == 'always']")" = \
	"[('always', {'match': 'cat /etc/os-release', 'action': 'allow'}, 'project')]"
check "always: the project config holds exactly that rule" \
	test "$($PY -c 'import json; print(json.load(open(".assay/config.json"))["rules"])')" = \
	"[{'match': 'cat /etc/os-release', 'action': 'allow'}]"
check "always: the identical command then ran unasked, by the rule" \
	test "$(appr 'cat /etc/os-release')" = "[('approved', 'user', 'always'), ('approved', 'rule', None)]"
check "run once: approved by the user" test "$(appr 'touch once.txt && rm once.txt')" = "[('approved', 'user', 'run_once')]"
check "the denied and edited deletions left the files" \
	test "$(jget "$TR" "[e['content'] for e in x if e['type'] == 'tool_result'][-1]")" = \
	"$(printf 'a.txt\nb.txt\nedited.txt\nkeep\n[exit code 0]')"
# the prompt put the terminal in raw mode while it asked: it is back
term_cooked() {
	local tty
	tty=$(tm display -p -t t '#{pane_tty}')
	stty -a -F "$tty" | tr ' ' '\n' | grep -qx icanon
}
check "the terminal is back in its normal (canonical) mode" term_cooked

# the next run: the saved rule holds, nothing is asked
script "$T/s2.json" 'cat /etc/os-release'
tui_start 110 30 -- run --provider script --script "$T/s2.json" \
	--run-dir "$T/r2" "again"
check "next run: ends without asking (exit 0)" test "$(wait_exit 30)" = 0
check "next run: approved by the project's rule" \
	test "$(jget "$T/r2/transcript.jsonl" "[(e['by'], e['rule']['match']) for e in x if e['type'] == 'approval']")" = \
	"[('rule', 'cat /etc/os-release')]"
check "next run: no prompt was shown" test "$(screen | grep -c 'Approval' || true)" = 0

# Ctrl-C at a prompt ends the run as interrupted, the terminal restored
script "$T/s3.json" 'rm -rf keep'
tui_start 110 30 -- run --provider script --script "$T/s3.json" \
	--run-dir "$T/r3" "stop"
wait_for '^    rm -rf keep$' 20 >/dev/null
keys C-c
check "Ctrl-C at the prompt: exit 130" test "$(wait_exit 30)" = 130
check "Ctrl-C at the prompt: run_end interrupted, nothing ran" \
	test "$(jget "$T/r3/transcript.jsonl" "(x[-1]['status'], [e for e in x if e['type'] == 'exec_start'])")" = "('interrupted', [])"
check "Ctrl-C at the prompt: the terminal is restored" term_cooked
finish
