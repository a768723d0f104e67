#!/usr/bin/env bash
# Approvals headless, without a terminal (stdin is /dev/null): every
# risky or obfuscated call is refused with a tool result starting with
# "not approved:", nothing it would have destroyed is gone, and the run
# goes on; safe calls run unasked in risky mode; --ask none runs what
# risky refuses; a deny rule holds even in none mode; an allow rule
# lets one risky command run and no other. Real sandbox (bubblewrap);
# the first run talks to the fake OpenAI server over real HTTP.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
echo 'day,kwh' >data.csv
echo '1,42' >>data.csv
cp data.csv data.orig

# script TURN...: a scripted model; each TURN is a JSON list of calls
script() {
	$PY - "$@" <<'PYEND'
import json, sys
turns = [{"text": "step %d" % i, "tool_calls": json.loads(t)}
         for i, t in enumerate(sys.argv[2:])]
turns.append({"text": "Done.", "tool_calls": []})
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PYEND
}
sh_call() { $PY -c 'import json,sys; print(json.dumps({"name": "shell", "arguments": {"command": sys.argv[1]}}))' "$1"; }
calls() { local out=() c; for c in "$@"; do out+=("$(sh_call "$c")"); done; (IFS=,; echo "[${out[*]}]"); }

SETUP='mkdir -p keep && echo precious > keep/a.txt && echo also > keep/b.txt && ls'
RISKY=(
	'rm -rf keep input'
	"r''m -rf keep"
	'\rm -rf keep'
	'/bin/rm -rf keep'
	'command rm -rf keep'
	'env rm -rf keep'
	'find . -name a.txt -exec rm {} \;'
	'ls keep | xargs -I{} rm keep/{}'
	'$(printf rm) -rf keep'
	'X=rm; $X -rf keep'
	'eval "rm -rf keep"'
	'( ( rm -rf keep ) )'
	"bash -c 'rm -rf keep'"
	$'sh <<EOF\nrm -rf keep\nEOF'
	'echo cm0gLXJmIGtlZXAgaW5wdXQK | base64 -d | sh'
	"printf 'rm -rf keep' | bash"
	'python3 -c "import os; os.system('"'"'rm -rf keep'"'"')"'
	"perl -e 'unlink \"keep/a.txt\"'"
	'echo gone > input/data.csv'
	'curl -s -o stolen.txt http://example.com/secrets'
	'wget -q -O stolen.txt http://example.com/secrets'
	'cat /etc/hostname > leaked.txt'
)

# --- 1: no terminal, risky mode, through the fake OpenAI server
risky=("${RISKY[@]}")
PYCALL='{"name": "python", "arguments": {"code": "import shutil\nshutil.rmtree(\"keep\")"}}'
WFCALL='{"name": "write_file", "arguments": {"path": "input/data.csv", "content": "overwritten"}}'
turn2=$(calls "${risky[@]}")
turn2="${turn2%]}, $PYCALL, $WFCALL]"
script "$T/s1.json" "$(calls "$SETUP")" "$turn2" "$(calls 'cat keep/a.txt keep/b.txt input/data.csv' 'wc -l input/data.csv')"
start_fake "$T/s1.json" --key sk-appr
nrisky=$((${#risky[@]} + 2))
set +e
OPENAI_API_KEY=sk-appr "$ASSAY" run --provider openai --base-url "$URL" \
	--model m --input data.csv --run-dir "$T/r1" "try everything" \
	</dev/null >"$T/r1.out" 2>"$T/r1.err"
code=$?
set -e
TR=$T/r1/transcript.jsonl
check "run 1 completes: refusals do not end the run (exit $code)" test "$code" -eq 0
check "every request reached the fake and was accepted" \
	test "$($PY -c 'import json,sys; print(all(json.loads(l)["status"] == 200 for l in open(sys.argv[1])))' "$FAKE_LOG")" = True
refused=$(jget "$TR" "len([e for e in x if e['type'] == 'tool_result' and e['content'].startswith('not approved:')])")
check "all $nrisky risky or obfuscated calls are refused with 'not approved:' (got $refused)" \
	test "$refused" -eq "$nrisky"
check "the refusals say how to allow them (--ask none or a rule)" \
	test "$(jget "$TR" "all('--ask none' in e['content'] and 'rule' in e['content'] for e in x if e['type'] == 'tool_result' and e['content'].startswith('not approved:'))")" = True
check "none of them ran: only the two safe calls started" \
	test "$(jget "$TR" "[e['command'] for e in x if e['type'] == 'exec_start']")" = \
	"$($PY -c 'import sys; print([sys.argv[1], "cat keep/a.txt keep/b.txt input/data.csv", "wc -l input/data.csv"])' "$SETUP")"
check "each refusal is an approval event: denied by mode, with reasons" \
	test "$(jget "$TR" "sum(1 for e in x if e['type'] == 'approval' and e['decision'] == 'denied' and e['by'] == 'mode' and e['reasons'] and e['original'])")" -eq "$nrisky"
check "safe calls ran unasked: approved by mode, no reasons" \
	test "$(jget "$TR" "[(e['decision'], e['by'], e['reasons']) for e in x if e['type'] == 'approval' and e['decision'] == 'approved']")" = \
	"[('approved', 'mode', []), ('approved', 'mode', []), ('approved', 'mode', [])]"
check "the files are intact (the model read them after the attempts)" \
	test "$(jget "$TR" "[e['content'] for e in x if e['type'] == 'tool_result'][-2]")" = \
	"$(printf 'precious\nalso\nday,kwh\n1,42\n[exit code 0]')"
mkdir -p "$T/ws1" && tar -xf "$(ws_archive "$T/r1")" -C "$T/ws1"
check "the persisted workspace still has keep/, and not the input (mounted, not made by the run)" \
	sh -c "test -f '$T/ws1/keep/a.txt' && test -f '$T/ws1/keep/b.txt' && ! test -e '$T/ws1/input/data.csv'"
check "nothing was fetched or leaked" sh -c "! test -e '$T/ws1/stolen.txt' && ! test -e '$T/ws1/leaked.txt'"
check "the host copy of the input is untouched" cmp -s data.csv data.orig
check "reasons are in words (deletion, network, hidden intent, outside)" \
	test "$(jget "$TR" "sorted({k for e in x if e['type'] == 'approval' for k in e['kinds']})")" = \
	"['deletion', 'exec', 'hidden', 'network', 'outside']"
check "headless progress shows the refusals" grep -q 'not approved:' "$T/r1.err"

# --- 2: --ask none runs what risky refused
script "$T/s2.json" "$(calls "$SETUP" 'rm -rf keep' 'ls')"
set +e
"$ASSAY" run --provider script --script "$T/s2.json" --ask none \
	--run-dir "$T/r2" "delete it" </dev/null 2>"$T/r2.err"
code=$?
set -e
TR=$T/r2/transcript.jsonl
check "--ask none: run completes (exit $code)" test "$code" -eq 0
check "--ask none: rm -rf ran, approved by mode with its reasons on record" \
	test "$(jget "$TR" "[(e['decision'], e['by'], bool(e['reasons'])) for e in x if e['type'] == 'approval' and e['original'] == 'rm -rf keep']")" = \
	"[('approved', 'mode', True)]"
check "--ask none: keep/ is gone" test "$(jget "$TR" "[e['content'] for e in x if e['type'] == 'tool_result'][-1]")" = \
	"$(printf '[exit code 0]')"

# --- 3: a deny rule holds in every mode, through wrappers
cat >deny.json <<'EOF'
{"rules": [{"match": "rm *", "action": "deny"}]}
EOF
script "$T/s3.json" "$(calls "$SETUP" 'rm -rf keep' 'env /bin/rm -rf keep' 'bash -c "rm -rf keep"' 'ls keep')"
set +e
"$ASSAY" run --provider script --script "$T/s3.json" --ask none \
	--config deny.json --run-dir "$T/r3" "delete it" </dev/null 2>"$T/r3.err"
code=$?
set -e
TR=$T/r3/transcript.jsonl
check "deny rule: run completes (exit $code)" test "$code" -eq 0
check "deny rule in none mode: all three forms denied by the rule" \
	test "$(jget "$TR" "[(e['decision'], e['by'], e['rule']['match']) for e in x if e['type'] == 'approval' and e['decision'] == 'denied']")" = \
	"[('denied', 'rule', 'rm *'), ('denied', 'rule', 'rm *'), ('denied', 'rule', 'rm *')]"
check "deny rule: the model is told a rule denied it" \
	test "$(jget "$TR" "sum(1 for e in x if e['type'] == 'tool_result' and e['content'].startswith('denied by a rule'))")" -eq 3
check "deny rule: keep/ is still there" \
	test "$(jget "$TR" "[e['content'] for e in x if e['type'] == 'tool_result'][-1]")" = \
	"$(printf 'a.txt\nb.txt\n[exit code 0]')"

# --- 4: an allow rule lets one risky command run, and only that one
# (a project's allow rule applies once the project is trusted: here by
# --trust-project; tests/e2e/trust_headless.sh checks it does not before)
mkdir -p proj && cd proj
cp ../data.csv .
cat >assay.json <<'EOF'
{"rules": [{"match": "rm -rf keep/b.txt", "action": "allow"}]}
EOF
script "$T/s4.json" "$(calls "$SETUP" 'rm -rf keep/b.txt' 'rm -rf keep/a.txt' 'ls keep')"
set +e
"$ASSAY" run --trust-project --provider script --script "$T/s4.json" --run-dir "$T/r4" \
	"tidy" </dev/null 2>"$T/r4.err"
code=$?
set -e
cd "$T"
TR=$T/r4/transcript.jsonl
check "allow rule: run completes (exit $code)" test "$code" -eq 0
check "allow rule: the allowed command ran, approved by the rule" \
	test "$(jget "$TR" "[(e['decision'], e['by'], e['rule']['match']) for e in x if e['type'] == 'approval' and e['original'] == 'rm -rf keep/b.txt']")" = \
	"[('approved', 'rule', 'rm -rf keep/b.txt')]"
check "allow rule: the other rm is still refused" \
	test "$(jget "$TR" "[e['content'][:13] for e in x if e['type'] == 'tool_result'][2]")" = "not approved:"
check "allow rule: only b.txt is gone" \
	test "$(jget "$TR" "[e['content'] for e in x if e['type'] == 'tool_result'][-1]")" = \
	"$(printf 'a.txt\n[exit code 0]')"

# --- 5: --ask all asks about everything: without a terminal even ls
script "$T/s5.json" "$(calls 'ls')"
"$ASSAY" run --provider script --script "$T/s5.json" --ask all \
	--run-dir "$T/r5" "look" </dev/null 2>"$T/r5.err" || true
check "--ask all: even ls is not approved without a terminal" \
	test "$(jget "$T/r5/transcript.jsonl" "[e['content'][:13] for e in x if e['type'] == 'tool_result']")" = "['not approved:']"

# --- 6: a bad rule is a configuration error, named
echo '{"rules": [{"match": "ls", "action": "permit"}]}' >bad.json
set +e
"$ASSAY" run --provider script --script "$T/s5.json" --config bad.json \
	--run-dir "$T/r6" "look" </dev/null 2>"$T/r6.err"
code=$?
set -e
check "a bad rule: exit 2 (got $code)" test "$code" -eq 2
check "a bad rule: the message names it" grep -q 'rules\[0\]: "action" must be allow, ask or deny' "$T/r6.err"
finish
