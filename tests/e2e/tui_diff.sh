#!/usr/bin/env bash
# What changed, in the workbench (tmux, 160x45; src/tui/diffview.c):
# after the demo, d on the call that wrote the report shows its lines
# as added, in another colour than the hunk headers, n/N between
# hunks, the chart as binary; d on a file in Workspace shows its
# history. A scripted run that edits report.md twice shows the three
# changes in the file's history; the call that made a binary and a huge
# file says so for each; a deletion shows the lines removed. Replay
# shows the same from the transcript alone.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
RUN=$T/run

# SGR state in front of the first row holding TEXT (screen_attrs)
sgr_before() {
	screen_attrs | $PY -c 'import re, sys
t = sys.argv[1]
for row in sys.stdin.read().split("\n"):
    k = row.find(t)
    if k >= 0:
        print("".join(re.findall(r"\x1b\[[0-9;]*m", row[:k]))[-40:]); break' "$1"
}

tui_start 160 45 -- demo --run-dir "$RUN" --out "$T/out"
check "the demo plays to its end" wait_for 'run completed \(exit 0\)' 180
keys Tab Tab # Conversation, then Tools (the last call selected)
keys k k # the last call is #6 (view_image), #4 the script
keys d
check "d on call #4 (the analysis script) opens what it changed" \
	wait_for '^ what #4 shell python3 analysis/detect_anomalies\.py changed  \(hunk 1 of 2\)' 10
check "the report: created, 41 lines added" screen_has '^output/anomaly_report\.md  created  \+41 -0$'
check "its lines shown as added" screen_has '^\+# Building energy: anomaly report$'
check "the event table: created, 5 lines" screen_has '^output/anomalies\.csv  created  \+5 -0$'
add=$(sgr_before '+# Building energy')
hunk=$(sgr_before '@@ -0,0 +1,41 @@')
check "added lines in a colour of their own (not the hunk header's)" \
	test -n "$add" -a "$add" != "$hunk"
keys n
check "n: the first hunk at the top" wait_for '^@@ -0,0 \+1,5 @@' 5
keys n
check "n again: the next hunk at the top" wait_for '\(hunk 2 of 2\)' 5
check "... the report's hunk on the first row" test "$(row_of '@@ -0,0 +1,41 @@' 0)" -eq 1
keys N
check "N: back to the first" wait_for '\(hunk 1 of 2\)' 5
keys G
check "the chart: binary, not shown" wait_for '^output/energy_anomalies\.png  created: binary$' 5
keys q
check "Esc: back to the panes" wait_for ' Tools ' 5
keys Tab # Workspace
keys g j j j j j j # analysis/ detect_anomalies.py input/ building_energy.csv output/ anomalies.csv anomaly_report.md
keys d
check "d on the report in Workspace: its history" \
	wait_for '^ output/anomaly_report\.md: its history' 10
check "... one change, by call #4" \
	screen_has '^#4 shell python3 analysis/detect_anomalies\.py +created  \+41 -0$'
keys q
keys g
keys d
check "d on a directory: nothing opens" wait_for ' Workspace ' 5
keys C-q
check "the demo's workbench quits" test "$(wait_exit 20)" = 0

# --- a file edited twice, a binary and a huge one, a deletion
R2=$T/edits
tui_start 160 45 -- --provider script --script "$SRC/tests/e2e/data/edits.json" \
	--ask none --run-dir "$R2" "edit the report"
check "the scripted run answers" wait_for '^ waiting for you ' 120
keys Tab Tab Tab # Workspace
keys G # report.md, the last row
keys d
check "report.md's history opens" wait_for '^ report\.md: its history  \(hunk 1 of 3\)' 10
check "... created by #1" screen_has "^#1 write_file report\.md +created  \+3 -0$"
check "... edited by #2 (beta became BETA)" screen_has "^#2 python t = open\('report\.md'\).* +modified  \+1 -1$"
check "... the old line removed" screen_has '^-beta$'
check "... the new line added" screen_has '^\+BETA$'
check "... edited again by #3 (a line appended)" screen_has '^#3 shell echo delta >> report\.md +modified  \+1 -0$'
check "... its added line" screen_has '^\+delta$'
keys q
keys BTab # Tools
keys G # the last call (#5)
keys k
keys d
check "d on #4: what it made" wait_for '^ what #4 python import os changed' 10
check "... a binary file says so" screen_has '^data/blob\.bin  created: binary$'
check "... a huge file says so" screen_has '^data/huge\.txt  created: over 256 KiB$'
check "... a small text file, its line" screen_has '^data/small\.txt  created  \+1 -0$'
keys q
keys j
keys d
check "d on #5 (rm): the lines removed" wait_for '^data/small\.txt  deleted  \+0 -1$' 10
check "... shown as removed" screen_has '^-small$'
keys Escape
check "Esc closes the diff view" wait_for ' Tools ' 5
keys C-q
check "the scripted run's workbench quits" test "$(wait_exit 20)" = 0
check "... its run completed" \
	test "$(jget "$R2/transcript.jsonl" 'x[-1]["status"]')" = completed

# --- replay: the same from the transcript
N=$(wc -l <"$R2/transcript.jsonl")
tui_start 160 45 -- replay "$R2"
check "replay opens" wait_for "replay 1/$N" 10
keys End
check "replay at its end" wait_for "replay $N/$N" 10
keys Tab # Tools (a replay starts in Conversation)
keys Up Up Up # #2, the python edit
keys d
check "replay: d on #2 shows its diff" wait_for '^ what #2 python .* changed  \(hunk 1 of 1\)' 10
check "replay: the removed line" screen_has '^-beta$'
check "replay: the added line" screen_has '^\+BETA$'
keys q
keys C-q q
finish
