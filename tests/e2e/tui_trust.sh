#!/usr/bin/env bash
# The Trust dialog (issue 19), in tmux at 120x40. The project ($T) has an
# assay.json that turns the network on, sets "ask": "none" and allows
# rm -r keep; the scripted model makes keep/ and then removes it.
#  - Before the workbench opens, "Trust this project?" lists each of the
#    three settings as FILE: "KEY": VALUE, with the keys t, o, n, q;
#    nothing has run yet (no run dir).
#  - n: the workbench runs without them: rm -r keep is asked (the
#    Approval dialog), run_start says untrusted, ask risky, network off;
#    nothing is remembered, so the next launch asks again.
#  - t: the settings apply (rm runs unasked, network on) and the trust
#    store has the directory; the next launch opens the workbench with
#    no dialog (trust "remembered").
#  - a one-byte edit of assay.json: the dialog is back; o runs once with
#    the settings and remembers nothing; q quits before anything runs.
#  - assay trust --revoke DIR forgets it: the dialog is back, and Enter
#    is n.
#  - a project file that only tightens (a deny rule, less memory) opens
#    the workbench with no dialog, and both apply.
# The trust store, config and cache are the test's own, under $T.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
export XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config XDG_CACHE_HOME=$T/cache
unset OPENAI_BASE_URL ASSAY_PROVIDER ASSAY_MODEL
ENVS=("XDG_STATE_HOME=$XDG_STATE_HOME" "XDG_CONFIG_HOME=$XDG_CONFIG_HOME"
	"XDG_CACHE_HOME=$XDG_CACHE_HOME")
cd "$T"
DIR=$(pwd -P)
STORE=$XDG_STATE_HOME/assay/trust.json

script() {
	$PY - "$@" <<'PY'
import json, sys
turns = [{"text": "step %d" % i, "tool_calls": [{"name": "shell", "arguments": {"command": c}}]}
         for i, c in enumerate(sys.argv[2:])]
turns.append({"text": "All done.", "tool_calls": []})
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PY
}
SETUP='mkdir -p keep && echo precious > keep/a.txt && echo made'
RM='rm -r keep'
script "$T/s.json" "$SETUP" "$RM" 'ls'
cat >assay.json <<'EOF'
{"network": true, "ask": "none", "rules": [{"match": "rm -r keep", "action": "allow"}]}
EOF

DIALOG='Trust this project\?'
WORKBENCH='─ Conversation ─'
APPROVAL='┌ Approval ┐|─ Approval ─'
# launch NAME [SCRIPT]: assay on the terminal in the project, run dir $T/NAME
launch() {
	RUN=$T/$1
	TR=$RUN/transcript.jsonl
	tui_start 120 40 "${ENVS[@]}" -- --provider script --script "${2:-$T/s.json}" \
		--run-dir "$RUN" "tidy up"
}
# opens_without_dialog: the workbench comes up and the Trust dialog was
# never on the screen meanwhile (polled)
opens_without_dialog() {
	local i seen=0
	for ((i = 0; i < 600; i++)); do
		screen_has "$DIALOG" && seen=1
		screen_has "$WORKBENCH" && break
		sleep 0.05
	done
	screen_has "$WORKBENCH" || { screen; return 1; }
	[ "$seen" -eq 0 ]
}
# ev PYEXPR: jget on the run's transcript (x), or why not
ev() {
	[ -f "$TR" ] || { echo "(no transcript)"; return 0; }
	jget "$TR" "$1" 2>/dev/null || echo "(error)"
}
# start PYEXPR: of the run_start event (s)
start() {
	[ -f "$TR" ] || { echo "(no transcript)"; return 0; }
	jget "$TR" "(lambda s: $1)(x[0])" 2>/dev/null || echo "(not in run_start)"
}
rm_decisions() { ev "[e['decision'] for e in x if e['type'] == 'approval' and e['original'] == '$RM']"; }
# all_on_screen REGEX...: each is on the screen now
all_on_screen() {
	local re
	for re in "$@"; do screen_has "$re" || { echo "     (not on the screen: $re)"; return 1; }; done
}
not_on_screen() { ! screen_has "$1"; }
not() { ! "$@"; }
store_has_dir() { [ -f "$STORE" ] && grep -qF -- "\"$DIR\"" "$STORE"; }
done_and_quit() { # the run waits for a message; Ctrl-Q; exit code
	wait_for 'waiting for you' 30 >/dev/null || true
	keys C-q
	wait_exit 20
}
# the dialog's items, as the user reads them (regexes)
ITEM_NET='assay\.json: "network": true'
ITEM_ASK='assay\.json: "ask": "none"'
ITEM_RULE='assay\.json: "rules": \{"match":"rm -r keep","action":"allow"\}'

# --- 1: the dialog, then n
launch r1
check "the Trust dialog opens before the workbench" wait_for "$DIALOG" 20
check "... it lists the network setting" screen_has "$ITEM_NET"
check "... the ask setting" screen_has "$ITEM_ASK"
check "... the allow rule, as compact JSON" screen_has "$ITEM_RULE"
check "... and names the project dir" screen_has "$DIR"
check "... the keys t, o, n (the default) and q" \
	all_on_screen '(^| )t trust' '(^| )o once' '(^| )n without them' 'q quit'
check "... the workbench is not open" not_on_screen "$WORKBENCH"
check "... and nothing has run: no run dir" test ! -e "$RUN"
keys n
check "n: the workbench opens" wait_for "$WORKBENCH" 20
check "... and without the settings rm -r keep is asked" wait_for "$APPROVAL" 30
check "... the Approval dialog shows the command" screen_has '│ +rm -r keep +│'
keys n
check "... denied, the run ends; Ctrl-Q exits 0" test "$(done_and_quit)" = 0
check "... run_start: untrusted, ask risky, network off" \
	test "$(start '(s["project"]["trust"], s["ask"], s["limits"]["network"])')" = "('untrusted', 'risky', False)"
check "... the three settings recorded as refused" \
	test "$(start 'sorted(i["key"] for i in s["project"]["refused"])')" = "['ask', 'network', 'rules']"
check "... rm was denied and keep/ is still there" \
	sh -c "test \"\$1\" = \"['denied']\" && test -f '$RUN/workspace/keep/a.txt'" _ "$(rm_decisions)"
check "... n is not remembered: the store has no entry for the dir" not store_has_dir

# --- 2: asked again; t
launch r2
check "a second launch after n asks again" wait_for "$DIALOG" 20
keys t
check "t: the workbench opens" wait_for "$WORKBENCH" 20
check "... the run ends with no Approval dialog" wait_for 'waiting for you' 30
check "... (none is shown)" not_on_screen "$APPROVAL"
check "... Ctrl-Q exits 0" test "$(done_and_quit)" = 0
check "... run_start: remembered, ask none, network on" \
	test "$(start '(s["project"]["trust"], s["ask"], s["limits"]["network"])')" = "('remembered', 'none', True)"
check "... the settings recorded as trusted" \
	test "$(start 'sorted(i["key"] for i in s["project"].get("trusted", []))')" = "['ask', 'network', 'rules']"
check "... rm -r keep ran unasked: keep/ is gone" \
	sh -c "test \"\$1\" = \"['approved']\" && test ! -e '$RUN/workspace/keep'" _ "$(rm_decisions)"
check "... the trust store has the directory" store_has_dir
check "assay trust --list lists it" sh -c "'$ASSAY' trust --list | grep -qF '$DIR'"
check "assay trust (here) says trusted" sh -c "'$ASSAY' trust | grep -q 'trusted (its settings apply)'"

# --- 3: remembered: no dialog
launch r3
check "a third launch opens the workbench with no Trust dialog" opens_without_dialog
check "... Ctrl-Q exits 0" test "$(done_and_quit)" = 0
check "... run_start: remembered, ask none" \
	test "$(start '(s["project"]["trust"], s["ask"])')" = "('remembered', 'none')"

# --- 4: one byte more in assay.json: asked again; o
printf ' ' >>assay.json
launch r4
check "after a one-byte edit of assay.json the dialog is back" wait_for "$DIALOG" 20
check "... listing the settings" all_on_screen "$ITEM_NET" "$ITEM_ASK" "$ITEM_RULE"
keys o
check "o: the workbench opens" wait_for "$WORKBENCH" 20
check "... Ctrl-Q exits 0" test "$(done_and_quit)" = 0
check "... run_start: once, ask none, network on" \
	test "$(start '(s["project"]["trust"], s["ask"], s["limits"]["network"])')" = "('once', 'none', True)"

# --- 5: o is not remembered; q quits
launch r5
check "a launch after o asks again" wait_for "$DIALOG" 20
keys q
check "q: assay exits" test "$(wait_exit 20)" != timeout
check "... before anything ran: no run dir" test ! -e "$RUN"

# --- 6: revoked: asked again; Enter is n
"$ASSAY" trust --revoke "$DIR" >revoke.out 2>&1 || true
check "assay trust --revoke DIR: no longer trusted" grep -q 'no longer trusted' revoke.out
check "... assay trust --list: no trusted projects" sh -c "'$ASSAY' trust --list | grep -q 'no trusted projects'"
printf '{"network": true, "ask": "none", "rules": [{"match": "rm -r keep", "action": "allow"}]}\n' >assay.json
launch r6
check "after the revoke, the files as trusted before: the dialog is back" wait_for "$DIALOG" 20
keys Enter
check "Enter: the workbench opens" wait_for "$WORKBENCH" 20
check "... without the settings: rm -r keep is asked" wait_for "$APPROVAL" 30
keys n
check "... Ctrl-Q exits 0" test "$(done_and_quit)" = 0
check "... run_start: untrusted, ask risky" \
	test "$(start '(s["project"]["trust"], s["ask"])')" = "('untrusted', 'risky')"

# --- 7: a project file that only tightens: no dialog
cat >assay.json <<'EOF'
{"rules": [{"match": "*secret*", "action": "deny"}], "limits": {"memory_mb": 1024}}
EOF
script "$T/tight.json" 'echo hello' 'cat secret.txt' 'echo after'
launch r7 "$T/tight.json"
check "only tightening: the workbench opens with no Trust dialog" opens_without_dialog
check "... Ctrl-Q exits 0" test "$(done_and_quit)" = 0
check "... run_start: memory 1024 MB, nothing refused" \
	test "$(start '(s["limits"]["memory_mb"], s["project"].get("refused", []))')" = "(1024, [])"
check "... cat secret.txt denied by the rule, the others ran" \
	test "$(ev "([(e['decision'], e['by']) for e in x if e['type'] == 'approval' and e['original'] == 'cat secret.txt'], [e['command'] for e in x if e['type'] == 'exec_start'])")" = \
	"([('denied', 'rule')], ['echo hello', 'echo after'])"
finish
