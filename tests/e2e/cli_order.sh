#!/usr/bin/env bash
# Options before and after operands, as GNU tools take them, and `--`
# ending them, in every subcommand: run (PROMPT first, then options),
# resume (options before RUN: `assay resume --ask none RUN`, and after
# it), export, replay, eval. Each spelling does what the usual order
# does.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
S=$SRC/tests/e2e/data/edits.json
export ASSAY_SCRIPT_DELAY_MS=0
set +e
"$ASSAY" run "edit the report" --provider script --script "$S" --ask none \
	--run-dir "$T/r1" >"$T/r1.out" 2>&1
code=$?
check "run: the PROMPT before the options (exit $code)" test "$code" -eq 0
check "... the options applied (the scripted model, ask none)" \
	test "$(jget "$T/r1/transcript.jsonl" '[x[0]["provider"], x[-1]["status"]]')" = "['script', 'completed']"
"$ASSAY" run --provider script --script "$S" --ask none --run-dir "$T/r2" \
	-- "--not an option" >"$T/r2.out" 2>&1
code=$?
check "run: -- ends the options: a PROMPT that starts with -- (exit $code)" test "$code" -eq 0
check "... is the user's message" \
	test "$(jget "$T/r2/transcript.jsonl" '[e["text"] for e in x if e["type"] == "user_message"][0]')" = "--not an option"
"$ASSAY" run --provider script --script "$S" "one" "two" >"$T/two.out" 2>&1
code=$?
check "run: two PROMPTs are still a usage error (exit $code)" test "$code" -eq 2
check "... that says so" grep -q "one PROMPT only" "$T/two.out"

"$ASSAY" resume --ask none "$T/r1" "once more" >"$T/res1.out" 2>&1
code=$?
check "resume: options before RUN (exit $code)" test "$code" -eq 0
check "... the new message went to the run" \
	test "$(jget "$T/r1/transcript.jsonl" '[e["text"] for e in x if e["type"] == "user_message"][-1]')" = "once more"
"$ASSAY" resume "$T/r1" "and again" --ask none >"$T/res2.out" 2>&1
code=$?
check "resume: options after RUN and PROMPT (exit $code)" test "$code" -eq 0
check "... the message" \
	test "$(jget "$T/r1/transcript.jsonl" '[e["text"] for e in x if e["type"] == "user_message"][-1]')" = "and again"
"$ASSAY" resume --ask none >"$T/res3.out" 2>&1
code=$?
check "resume without a RUN: usage error (exit $code)" test "$code" -eq 2
check "... naming what is missing" grep -q "resume needs a RUN" "$T/res3.out"

"$ASSAY" export "$T/r2" --format md >"$T/e1.md" 2>&1
"$ASSAY" export --format md "$T/r2" >"$T/e2.md" 2>&1
"$ASSAY" export --format md -- "$T/r2" >"$T/e3.md" 2>&1
check "export: RUN before or after --format, or after --: the same record" \
	sh -c "cmp -s '$T/e1.md' '$T/e2.md' && cmp -s '$T/e1.md' '$T/e3.md' && grep -q '^# assay run record' '$T/e1.md'"

"$ASSAY" replay --theme light "$T/nosuch" </dev/null >"$T/p1.out" 2>&1
"$ASSAY" replay "$T/nosuch" --theme light </dev/null >"$T/p2.out" 2>&1
"$ASSAY" replay --theme light -- "$T/nosuch" </dev/null >"$T/p3.out" 2>&1
check "replay: the RUN read wherever it stands (the same answer each way)" \
	sh -c "grep -q 'no run at' '$T/p1.out' && cmp -s '$T/p1.out' '$T/p2.out' && cmp -s '$T/p1.out' '$T/p3.out'"

mkdir -p "$T/suite"
cp "$S" "$T/suite/edits.json"
cat >"$T/suite/suite.json" <<'EOF'
{"defaults": {"provider": "script", "ask": "none", "max_turns": 8},
 "tasks": [{"name": "edits", "prompt": "edit the report", "script": "edits.json",
            "check": {"answer_contains": ["four lines"]}}]}
EOF
"$ASSAY" eval --json "$T/suite/suite.json" -j 1 --dir "$T/ev" >"$T/ev.json" 2>"$T/ev.err"
code=$?
check "eval: options on both sides of SUITE (exit $code)" test "$code" -eq 0
check "... --json and --dir applied" test -s "$T/ev.json" -a -d "$T/ev"
set -e
finish
