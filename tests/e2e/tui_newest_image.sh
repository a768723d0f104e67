#!/usr/bin/env bash
# p previews the newest image by its modification time, not the last
# one named (a call's changes arrive in name order): one call writes
# output/b.png, then output/a.png; p shows a.png. A later call writes
# b.png again: p shows b.png. The events carry each file's mtime. Each
# is sent to the model (send_images auto): p shows the copy sent of the
# newest, titled "sent: PATH".
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
$PY -c 'import matplotlib' 2>/dev/null || skip "/usr/bin/python3 has no matplotlib"
cd "$T"
cat >"$T/s.json" <<'EOF'
{"turns": [
 {"text": "Two charts.", "tool_calls": [{"name": "python", "arguments": {"code": "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt, os, time\nos.makedirs('output', exist_ok=True)\nfor name, w in (('b', 4), ('a', 6)):\n    fig, ax = plt.subplots(figsize=(w, 3), dpi=100)\n    ax.plot([1, 3, 2])\n    fig.savefig('output/%s.png' % name)\n    time.sleep(0.05)\nprint('saved')"}}]},
 {"text": "Both are in output/.", "tool_calls": []},
 {"text": "Redrawing b.", "tool_calls": [{"name": "python", "arguments": {"code": "fig, ax = plt.subplots(figsize=(5, 3), dpi=100)\nax.plot([3, 1, 2])\nfig.savefig('output/b.png')"}}]},
 {"text": "b.png is new.", "tool_calls": []}
]}
EOF
RUN=$T/run
tui_start 120 40 -- --provider script --script "$T/s.json" --run-dir "$RUN" charts
check "the agent waits after the first call" wait_for 'waiting for you' 60
keys Tab p
check "p: a.png, written last, though b.png comes later by name" \
	wait_for '┌─ sent: output/a\.png  [0-9.]+ KB  600x300 ─' 10
keys Escape
sleep 0.3
keys i
type_text "again"
keys Enter
check "the second answer" wait_for 'b\.png is new\.' 60
check "... waits" wait_for 'waiting for you' 20
keys Tab p
check "p: b.png, redrawn by the later call" \
	wait_for '┌─ sent: output/b\.png  [0-9.]+ KB  500x300 ─' 10
keys Escape
sleep 0.3
keys C-q
check "quits" test "$(wait_exit 20)" = 0
check "the events carry each file's mtime" \
	test "$(jget "$RUN/transcript.jsonl" "all(e.get('mtime', 0) > 1e9 for e in x if e['type'] == 'workspace_change' and e['kind'] != 'deleted')")" = True
finish
