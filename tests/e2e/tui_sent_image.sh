#!/usr/bin/env bash
# The images sent to the model, in the workbench, at 120x40 in tmux
# (half blocks): `assay replay` of a run whose transcript records an
# image sent after a python call and one refused after a shell call
# (sent_image.bash). At the image_sent step the Tools pane shows, under
# the call, "output/chart.png: sent to the model: 80×45, ~5 tokens"
# (the path: not the call's own); p previews the run dir's copy (80x45,
# not the workspace's 160x90) in the box titled "sent:
# output/chart.png"; going back a step closes it and the line is gone;
# the refused image says "not sent to the model: WHY"; a copy named
# outside images/ is not opened. Then the live workbench on a run that
# sends the chart: p shows the copy, the line is under the call.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
source "$(dirname "$0")/sent_image.bash"
need_bwrap
cd "$T"
RUN=$T/run
TR=$RUN/transcript.jsonl
sent_run "$RUN"
check "the recorded run completed" grep -q '"type": "run_end"' "$TR"
step_of() { jget "$TR" "[i + 1 for i, e in enumerate(x) if $1][0]"; }
SENT=$(step_of "e['type'] == 'image_sent' and e['id'] == 'call_0_0'")
REFUSED=$(step_of "e['type'] == 'image_sent' and e['id'] == 'call_1_0'")
N=$(wc -l <"$TR")
HALF='▀'
TOOLS='in_region 0 48 35 91'

tui_start 120 40 -- replay "$RUN"
check "replay opens" wait_for "replay 1/$N" 10
keys g
type_text "$((SENT - 1))"
keys Enter
check "the step before the send" wait_for "replay $((SENT - 1))/$N" 5
check "nothing sent yet" eval "! $TOOLS 'sent to the model'"
keys p
check "p before any send: a notice, no workspace image" \
	wait_for 'replay previews the images sent to the model' 5
keys Right
check "the image_sent step" wait_for "replay $SENT/$N" 5
check "Tools: under the call, what the model was sent" \
	$TOOLS '→ output/chart\.png: sent to the model:'
check "(wrapped: the size and the tokens)" $TOOLS '  80×45, ~5 tokens'
keys p
check "p: the copy the model saw, titled, 80x45" \
	wait_for '┌─ sent: output/chart\.png  [0-9.]+ [KB]+  80x45 ─' 10
check "p: as half blocks" wait_for "$HALF$HALF$HALF$HALF" 20
keys p
check "p again closes it" wait_for '┌─ Tools' 5
keys p
check "p opens it again" wait_for '┌─ sent: output/chart\.png' 10
keys Left
check "a step back closes it" wait_for '┌─ Tools' 5
check "and the line is gone" wait_gone '80×45, ~5 tokens' 5
keys g
type_text "$REFUSED"
keys Enter
check "the refused image's step" wait_for "replay $REFUSED/$N" 5
check "Tools: why it was not sent (wrapped)" \
	$TOOLS '→ output/huge\.png: not sent to the'
check "(the reason)" $TOOLS 'model: output/huge\.png: 9000x9000 is'
keys q
check "q quits (exit 0)" test "$(wait_exit 20)" = 0

# a copy named outside images/: the line shows, p opens nothing
$PY - "$TR" <<'PYEND'
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
for e in evs:
    if e['type'] == 'image_sent' and 'file' in e:
        e['file'] = 'images/../workspace/output/chart.png'
open(sys.argv[1], 'w').write(''.join(json.dumps(e) + '\n' for e in evs))
PYEND
tui_start 120 40 -- replay "$RUN"
check "replay opens again" wait_for "replay 1/$N" 10
keys g
type_text "$SENT"
keys Enter
check "the line still shows" wait_for '80×45, ~5 tokens' 5
keys p
check "p: no copy to preview, said" wait_for 'has no copy in the run dir' 5
check "no preview box" eval "! screen_has '┌─ sent: '"
keys q
check "quits" test "$(wait_exit 20)" = 0

# live: the workbench on a run that sends the chart (the helper's
# stand-in sends it as it is, 160x90): p in the Conversation shows the
# newest image, the one sent; in Tools the line under the python call,
# and p there previews the copy
sent_fake_helper "$T/fake-image"
tui_start 120 40 ASSAY_IMAGE_BIN="$T/fake-image" -- --provider script \
	--script "$T/sent.json" --run-dir "$T/live" chart
check "live: the run goes to its end" wait_for 'Done\.' 60
check "live: and waits" wait_for 'waiting for you' 20
TOK=$(jget "$T/live/transcript.jsonl" "[e['tokens'] for e in x if e['type'] == 'image_sent'][0]")
keys Tab p
check "live: p in the Conversation: the newest image, the copy sent" \
	wait_for '┌─ sent: output/chart\.png  [0-9.]+ [KB]+  160x90 ─' 10
keys Escape
check "live: Esc closes it" wait_for '┌─ Tools' 5
keys Tab k
check "live: Tools, the python call: the line under it" \
	wait_for '→ output/chart\.png: sent to the model:' 5
check "live: (its size and tokens)" screen_has "160×90, ~$TOK tokens"
keys p
check "live: p on the call previews the copy" \
	wait_for '┌─ sent: output/chart\.png  [0-9.]+ [KB]+  160x90 ─' 10
check "live: as half blocks" wait_for "$HALF$HALF$HALF$HALF" 20
keys Escape
sleep 0.3
keys C-q
check "live: quits (exit 0)" test "$(wait_exit 20)" = 0
finish
