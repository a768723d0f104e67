#!/usr/bin/env bash
# assay replay in tmux at 120x40, on a run recorded headless (scripted
# model, real local sandbox) that makes files in different turns and
# deletes one: the timeline in the status bar; -> and <- change the
# conversation and the Tools pane; ] and [ go by turn; g goes to a step;
# the Workspace tree shows only the files that existed at that step; a
# big output read back from exec/ is cut to what had arrived at the
# step; space plays to the end; q quits. Bad RUNs exit 2; a transcript
# cut by kill -9 replays with a warning.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"

BIG='yes AAAAAAAAAAAAAAAAAAAA | head -c 300000; echo; echo MARK-ONE; sleep 0.7; yes BBBB | head -c 100000; echo; echo MARK-TWO'
$PY - "$T/s.json" "$BIG" <<'PYEND'
import json, sys
sh = lambda c: {"name": "shell", "arguments": {"command": c}}
turns = [
    {"text": "turn one", "tool_calls": [sh("echo one > one.txt; echo made-one")]},
    {"text": "turn two", "tool_calls": [{"name": "write_file",
        "arguments": {"path": "two.txt", "content": "two\n"}}]},
    {"text": "turn three", "tool_calls": [sh("echo three > three.txt; rm one.txt; echo made-three")]},
    {"text": "turn four", "tool_calls": [sh(sys.argv[2])]},
    {"text": "All done.", "tool_calls": []},
]
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PYEND
RUN=$T/run
TR=$RUN/transcript.jsonl
ASSAY_SCRIPT_DELAY_MS=0 "$ASSAY" run --provider script --script "$T/s.json" \
	--ask none --run-dir "$RUN" "make files" >"$T/run.out" 2>&1
check "the recorded run completed" test -s "$TR"
N=$(wc -l <"$TR")
# steps are events: the step of an event is its line number
step_of() { jget "$TR" "[i + 1 for i, e in enumerate(x) if $1][0]"; }
USER=$(step_of "e['type'] == 'user_message'")
T3=$(step_of "e['type'] == 'model_request' and e['turn'] == 3")
THREE=$(step_of "e['type'] == 'workspace_change' and e['path'] == 'three.txt'")
GONE=$(step_of "e['type'] == 'workspace_change' and e['kind'] == 'deleted'")
OUT1=$(step_of "e['type'] == 'exec_output' and 'made-one' in e.get('text', '')")
# the output event that brought MARK-ONE: the stdout bytes so far end there
MARK=$(jget "$TR" "[i + 1 for i, e in enumerate(x) if e['type'] == 'exec_output' and sum(f['bytes'] for f in x[:i + 1] if f['type'] == 'exec_output' and f['id'] == e['id']) == 300010][0]")
END4=$(step_of "e['type'] == 'exec_end' and e['stdout_bytes'] > 300010")
echo "steps: n=$N user=$USER t3=$T3 three=$THREE gone=$GONE out1=$OUT1 mark=$MARK end4=$END4"

ONE=$(step_of "e['type'] == 'workspace_change' and e['path'] == 'one.txt'")
snapshot() { find "$RUN" -printf '%p %s %T@\n' | sort; }
snapshot >"$T/before"
tui_start 120 40 -- replay "$RUN"
STATUS='in_region 39 0 39 119'
CONV='in_region 0 0 35 47'
TOOLS='in_region 0 48 35 91'
TREE='in_region 0 92 35 119'
check "replay opens at step 1 of the run, in the status bar" \
	wait_for "replay 1/$N  turn 0/5" 10
check "the replay keys replace the message box" screen_has '<-/-> step  \[/\] turn  g go to  space play'
check "nothing said yet at step 1" eval "! $CONV 'you: make files'"
for ((i = 1; i < USER; i++)); do keys Right; done
check "-> steps to the user message" wait_for "replay $USER/$N" 5
check "the conversation shows it" $CONV 'you: make files'
keys Left
check "<- steps back" wait_for "replay $((USER - 1))/$N" 5
check "and the message is gone again" wait_gone 'you: make files' 5
keys ']'
check "] goes to the first turn's request" wait_for "replay $((USER + 1))/$N  turn 1/5" 5
keys g
check "g asks for a step" wait_for "go to step \(1-$N\)" 5
type_text "$OUT1"
keys Enter
check "g + number + Enter goes there" wait_for "replay $OUT1/$N" 5
check "the Tools pane shows the output that had arrived" $TOOLS 'made-one'
check "one.txt not in the tree yet: its event comes after the result" \
	eval "! $TREE 'one\.txt'"
keys Left
check "one step back the output is not there yet" \
	wait_for "replay $((OUT1 - 1))/$N" 5
check "(no output yet)" $TOOLS 'no output yet'
keys g
type_text "$ONE"
keys Enter
check "at its workspace_change one.txt appears" wait_for "replay $ONE/$N" 5
check "one.txt in the tree" $TREE 'one\.txt'
keys ']' ']'
check "] ] reach turn 3's request" wait_for "replay $T3/$N  turn 3/5" 5
check "turn 3: the files of turns 1 and 2" eval "$TREE 'one\.txt' && $TREE 'two\.txt'"
check "but not three.txt, made in turn 3" eval "! $TREE 'three\.txt'"
check "the conversation ends at turn 3's request" eval "$CONV 'turn two' && ! $CONV 'turn three'"
keys g
type_text "$THREE"
keys Enter
check "at the step it was made, three.txt appears" \
	wait_for "replay $THREE/$N" 5
check "three.txt in the tree" $TREE 'three\.txt'
keys g
type_text "$GONE"
keys Enter
wait_for "replay $GONE/$N" 5 >/dev/null
check "after its deleted event one.txt is gone" eval "! $TREE 'one\.txt' && $TREE 'two\.txt'"
keys '['
check "[ goes back to the start of turn 3" wait_for "replay $T3/$N  turn 3/5" 5
check "where three.txt does not exist yet" eval "! $TREE 'three\.txt' && $TREE 'one\.txt'"
# a big output: the events stop carrying its text, the file has it all
keys g
type_text "$MARK"
keys Enter
check "at the step where MARK-ONE had arrived" wait_for "replay $MARK/$N" 5
check "the output read back from exec/ ends with it" $TOOLS 'MARK-ONE'
check "and not what came later" eval "! $TOOLS 'MARK-TWO|BBBB'"
keys g
type_text "$END4"
keys Enter
check "at its exec_end the whole output" wait_for 'MARK-TWO' 5
keys Home
check "Home goes to step 1" wait_for "replay 1/$N" 5
keys + +
check "+ makes it faster" wait_for "replay 1/$N  turn 0/5  \|\| 4x" 5
keys Space
check "space plays to the end" wait_for "replay $N/$N  turn 5/5  \|\| 4x" 30
check "the end of the run is shown" $CONV 'All done\.'
check "tokens and figures as at the end" $STATUS 'run completed \(exit 0\)'
check "the final tree: two.txt and three.txt" eval "$TREE 'two\.txt' && $TREE 'three\.txt' && ! $TREE 'one\.txt'"
keys q
check "q quits with 0" test "$(wait_exit 10)" = 0
snapshot >"$T/after"
check "replay changed nothing in the run dir" cmp -s "$T/before" "$T/after"

# bad RUNs: exit 2 with a clear message
set +e
"$ASSAY" replay "$T/nope" </dev/null >"$T/o1" 2>&1
rc=$?
set -e
check "a missing run exits 2" test $rc = 2
check "and says what to give" grep -q "no run at '$T/nope': give a run dir" "$T/o1"
: >"$T/empty.jsonl"
set +e
"$ASSAY" replay "$T/empty.jsonl" </dev/null >"$T/o2" 2>&1
rc=$?
set -e
check "an empty transcript exits 2" test $rc = 2
check "and says so" grep -q "has no events" "$T/o2"
# a run killed with kill -9: its last line cut in the middle
mkdir -p "$T/killed"
head -n 12 "$TR" >"$T/killed/transcript.jsonl"
sed -n 13p "$TR" | head -c 30 >>"$T/killed/transcript.jsonl"
tui_start 120 40 -- replay "$T/killed"
check "a cut last line: the rest replays" wait_for "replay 1/12" 10
check "with a warning" screen_has 'the last line was cut'
keys End
check "End goes to the last whole event" wait_for "replay 12/12" 5
keys C-q
check "Ctrl-Q quits" test "$(wait_exit 10)" = 0

# a resumed run (same run dir): resume writes each recorded turn again
# (model_request cached + replayed, a zero usage) before going on; the
# replay shows the run as it happened: 4 turns, then the new one
$PY - "$T/s2.json" <<'PYEND'
import json, sys
sh = lambda c: {"name": "shell", "arguments": {"command": c}}
turns = [
    {"text": "first turn", "tool_calls": [sh("echo one > one.txt")]},
    {"text": "second turn", "tool_calls": [sh("echo two > two.txt")]},
    {"text": "third turn", "tool_calls": [sh("echo three")]},
    {"text": "First run done.", "tool_calls": []},
    {"text": "Resumed and done.", "tool_calls": []},
]
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PYEND
RR=$T/resumed
ASSAY_SCRIPT_DELAY_MS=0 "$ASSAY" run --provider script --script "$T/s2.json" \
	--ask none --run-dir "$RR" "four turns" >"$T/rr1.out" 2>&1
ASSAY_SCRIPT_DELAY_MS=0 "$ASSAY" resume "$RR" --provider script \
	--script "$T/s2.json" --ask none "more" >"$T/rr2.out" 2>&1
RTR=$RR/transcript.jsonl
check "the resumed run wrote replayed turns" \
	test "$(jget "$RTR" 'len([e for e in x if e["type"]=="model_request" and e.get("replayed")])')" = 4
RN=$(jget "$RTR" 'len([e for e in x if not e.get("replayed")])')
R5=$(jget "$RTR" '[e for e in x if not e.get("replayed")].index([e for e in x if e["type"]=="model_request" and e["turn"]==5][0]) + 1')
tui_start 120 40 -- replay "$RR"
check "a resumed 4+1 turn run replays as 5 turns, the replayed copies left out" \
	wait_for "replay 1/$RN  turn 0/5" 10
keys End
check "End: the end of the resumed part" wait_for "replay $RN/$RN  turn 5/5" 5
check "the new message and the answer" eval "$CONV 'you: more' && $CONV 'Resumed and done'"
keys '['
check "[ goes to the start of the resumed turn" wait_for "replay $R5/$RN  turn 5/5" 5
keys '['
check "[ again: turn 4, the recorded one" wait_for "turn 4/5" 5
keys q
check "q quits" test "$(wait_exit 10)" = 0

# a hostile turn number: two billion turns were walked on every [ or ]
# (minutes; the waits below are hang guards: how long a jump takes on
# such a run, against a sound one, is tests/bench/replay_jump.sh)
mkdir -p "$T/hostile"
cat >"$T/hostile/transcript.jsonl" <<'JSONL'
{"seq":1,"t":0,"type":"run_start","provider":"script","model":"m"}
{"seq":2,"t":1,"type":"user_message","text":"go"}
{"seq":3,"t":2,"type":"model_request","turn":2000000000}
{"seq":4,"t":3,"type":"assistant_message","turn":2000000000,"text":"hostile","tool_calls":[]}
JSONL
tui_start 120 40 -- replay "$T/hostile"
check "a hostile turn number counts as one turn" wait_for "replay 1/4  turn 0/1" 10
keys End '['
check "[ answers (no walk of two billion turns)" wait_for "replay 3/4  turn 1/1" 30
keys ']'
check "] answers" wait_for "replay 4/4  turn 1/1" 30
keys q
check "q quits" test "$(wait_exit 10)" = 0

echo "passed $PASSED, failed $FAILED"
[ "$FAILED" = 0 ]
