#!/usr/bin/env bash
# The scripted model (--provider script, the demo's) costs nothing: each
# turn's usage is known and priced at $0 (whatever --model names it),
# run_end's total is 0 with no turn of unknown cost, the headless
# summary and export say $0 (never "cost unknown"), and --max-cost works
# with it: a $0 run never crosses the budget. In tmux the status bar
# says $0.00, not $?.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
cat >script.json <<'JSON'
{"turns": [
 {"text": "One.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo one"}}]},
 {"text": "Two.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo two"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
export XDG_CONFIG_HOME=$T/xdg
unset ASSAY_PROVIDER ASSAY_MODEL
run() { # run NAME [options]: CODE
	local name=$1
	shift
	set +e
	"$ASSAY" run --provider script --script "$T/script.json" --ask none \
		--run-dir "$T/$name" "$@" "count" </dev/null >"$T/$name.out" 2>"$T/$name.err"
	CODE=$?
	set -e
}
usage() { jget "$T/$1/transcript.jsonl" "[(e['cost_usd'], e['priced'], e['known']) for e in x if e['type'] == 'usage']"; }
totals() { jget "$T/$1/transcript.jsonl" "(x[-1]['totals']['cost_usd'], x[-1]['totals'].get('unpriced_turns', 0))"; }

run free
check "a scripted run completes (exit $CODE)" test "$CODE" -eq 0
check "... each turn priced at \$0 ($(usage free))" \
	test "$(usage free)" = "[(0, True, True), (0, True, True), (0, True, True)]"
check "... run_end: \$0, no turn of unknown cost ($(totals free))" test "$(totals free)" = "(0, 0)"
check "... the summary's last line says \$0" \
	sh -c "tail -n 20 '$T/free.err' | grep -q 'run completed: 3 turns, .*, \\\$0, '"
check "... never 'cost unknown'" sh -c "! grep -q 'cost unknown' '$T/free.err'"

run named --model gpt-4.1
check "named after a priced model: still \$0 per turn ($(usage named))" \
	test "$(usage named)" = "[(0, True, True), (0, True, True), (0, True, True)]"
run unlisted --model no-such-model
check "named after a model the table does not know: \$0, not unknown ($(totals unlisted))" \
	test "$(totals unlisted)" = "(0, 0)"

run budget --max-cost 0.01
check "--max-cost 0.01: accepted and never crossed (exit $CODE)" test "$CODE" -eq 0
check "... all three turns ran" \
	test "$(jget "$T/budget/transcript.jsonl" "len([e for e in x if e['type'] == 'usage'])")" = 3
check "... run_end completed" \
	test "$(jget "$T/budget/transcript.jsonl" "x[-1]['status']")" = completed

"$ASSAY" export "$T/free" --format md -o "$T/free.md" >/dev/null 2>&1
check "export: the cost is \$0" grep -Eq 'cost.*\$0( |$)' "$T/free.md"

if command -v tmux >/dev/null; then
	source "$SRC/tests/e2e/tui_helpers.bash"
	tui_start 120 30 -- --provider script --script "$T/script.json" --ask none \
		--run-dir "$T/tui" count
	check "tmux: the run answers" wait_for 'waiting for you' 30
	check "... the status bar says \$0.00, not \$?" \
		wait_for '^.*script/script +in [0-9.k]+ out [0-9.k]+ +\$0\.00 +turn 3/50' 5
	keys C-q
	wait_exit 20 >/dev/null
fi
finish
