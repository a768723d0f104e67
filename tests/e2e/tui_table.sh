#!/usr/bin/env bash
# The table view (issue 18, item 1), in tmux:
# - the demo's output/anomalies.csv opens from the Workspace pane with
#   Enter as a table: the header row, columns aligned (text at the left
#   of its column, numbers at the right), the pinned first column's
#   rule on every row, and the header still there after scrolling down;
#   i on a numeric column matches pandas' describe() on the same file;
# - a 1 GB CSV staged as an input opens at once and G shows its last
#   row at once, long before it is indexed (the key-to-screen time is
#   measured through one tmux control client and printed, with the
#   times the TUI logs; bounded generously, 2000 ms, against a loaded
#   machine); once indexed, the exact row count;
# - a file with quoted commas, a quoted newline, "" and a ragged row
#   shows each for what it is; s sorts by the current column.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
$PY -c 'import pandas' 2>/dev/null || skip "python3 pandas is not installed"
RUN=$T/run
LIMIT_MS=2000

# probe KEY REGEX: send KEY, then the ms until the screen matches REGEX
# (one control-mode client: no process start per look); -1 if never
probe() {
	$PY - "$TM_BASE-$TM_N" "$T/tmux.conf" "$1" "$2" <<'PY'
import re, subprocess, sys, time
sock, conf, key, regex = sys.argv[1:5]
p = subprocess.Popen(["tmux", "-L", sock, "-f", conf, "-C", "attach", "-t", "t"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
def block():
    lines, inside = [], False
    while True:
        line = p.stdout.readline()
        if not line:
            raise RuntimeError("tmux control client went away")
        if line.startswith(b"%begin"):
            inside, lines = True, []
        elif line.startswith((b"%end", b"%error")) and inside:
            return lines
        elif inside:
            lines.append(line.decode("utf-8", "replace"))
def cmd(c):
    p.stdin.write((c + "\n").encode())
    return block()
block()
cmd("refresh-client -f no-output")
t0 = time.perf_counter()
cmd("send-keys -t t " + key)
ms = -1
while time.perf_counter() - t0 < 30:
    if re.search(regex, "".join(cmd("capture-pane -p -t t")), re.M):
        ms = (time.perf_counter() - t0) * 1000
        break
print("%.0f" % ms)
p.stdin.close()
PY
}

# rows_aligned TOP BOTTOM TEXT_COL NUM_COL: on the screen rows TOP..BOTTOM
# the pinned column's rule is at one place, the cells of the text column
# (its header's start) start at one place and the numbers of the numeric
# column end at one place (right aligned)
rows_aligned() {
	screen | $PY -c 'import re, sys
rows = sys.stdin.read().split("\n")
top, bot, tcol, ncol = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
head = rows[1]
ts, ns = head.index(" " + tcol) + 1, head.index(" " + ncol) + 1
rules = {r.index("\u2502") for r in rows[top:bot + 1]}
starts = {len(r) - len(r[ts:].lstrip()) for r in rows[top:bot + 1]}
# a number cell: the digits that end before the next column
ends = set()
for r in rows[top:bot + 1]:
    m = re.match(r" *-?[0-9.]+", r[ns - 2:])
    if m:
        ends.add(ns - 2 + m.end())
print(rules, starts, ends, file=sys.stderr)
sys.exit(0 if len(rules) == 1 and starts == {ts} and len(ends) == 1 else 1)' "$@"
}

# --- the demo's anomalies.csv ------------------------------------------
tui_start 160 45 -- demo --run-dir "$RUN" --out "$T/out"
check "the demo plays to its end" wait_for 'run completed \(exit 0\)' 180
check "workspace: anomalies.csv listed" \
	wait_until 60 "in_region 1 123 40 159 'anomalies\.csv'"
# the Workspace pane (columns 123-159): its first node is on row 1
keys Tab Tab Tab g
at=$(screen | $PY -c 'import sys
rows = sys.stdin.read().split("\n")
print(next(i for i, r in enumerate(rows) if "anomalies.csv" in r[123:]))')
for ((i = 1; i < at; i++)); do keys j; done
keys Enter
check "Enter on output/anomalies.csv opens the table view" \
	wait_for '^ output/anomalies\.csv  [0-9]+ rows x 10 cols  [0-9.]+ [KB]' 10
check "the header row names the columns" \
	in_region 1 0 1 159 '# +start +│ end +kind +hours +mean_energy_kwh'
check "a row per event, numbered" in_region 2 0 2 159 '^ +1  2024-'
csvrows=$($PY -c 'import pandas, sys; print(len(pandas.read_csv(sys.argv[1])))' "$RUN/workspace/output/anomalies.csv" 2>/dev/null ||
	$PY -c 'import pandas, sys; print(len(pandas.read_csv(sys.argv[1])))' "$T/out/output/anomalies.csv")
check "the status line: $csvrows rows x 10 cols and the size" \
	in_region 0 0 0 159 "^ output/anomalies\.csv  $csvrows rows x 10 cols  [0-9.]+ (B|KB)"
check "columns aligned: the rule, text starts, numbers right aligned" \
	rows_aligned 1 $((csvrows + 1)) kind hours
# i on mean_energy_kwh (the 5th column; a dropout row has no value)
keys l l l l
keys i
check "i: the column summary" wait_for 'column 5: mean_energy_kwh' 10
expect=$($PY -c 'import pandas, sys
d = pandas.read_csv(sys.argv[1])["mean_energy_kwh"]
s = d.describe()
print("count %d|missing %d|min %.10g|median %.10g|max %.10g" % (s["count"], d.isna().sum(), s["min"], s["50%"], s["max"]))' \
	"$T/out/output/anomalies.csv")
echo "     pandas describe(): $expect"
IFS='|' read -ra want <<<"$expect"
for w in "${want[@]}"; do
	name=${w%% *} val=${w#* }
	check "summary $name = $val, as pandas says" \
		screen_has "│ $name +${val//./\\.} +│"
done
check "summary: the type" screen_has '│ type +number'
keys x
check "any key closes the summary" wait_gone 'column 5: mean_energy' 5
keys l l l l
keys s
check "s sorts by the current column (score, ascending)" \
	wait_for 'sorted by score asc' 5
keys q
check "q: back to the workbench" wait_for '┐┌─ Workspace ─' 10
keys C-q
wait_exit 30 >/dev/null

# --- inputs: a 1 GB file and a file of every quoting case ---------------
$PY - "$T/big.csv" <<'PY'
import sys
block = "".join('%d,s%d,%.1f,"note, %d"\n' % (i, i % 97, i % 1000 / 10, i)
                for i in range(20000)).encode()
with open(sys.argv[1], "wb") as f:
    f.write(b"id,sensor,value,note\n")
    n = 0
    while n < 1 << 30:
        f.write(block)
        n += len(block)
    f.write(b'99999999,LAST,1.5,"the very last row"\n')
PY
bigrows=$(($(wc -l <"$T/big.csv") - 1))
echo "     big.csv: $(stat -c %s "$T/big.csv") bytes, $bigrows rows"
printf '%s\r\n' 'id,name,amount,note' '1,"Smith, Ann",12.5,plain' \
	'2,Bob,7,"say ""hi"""' '3,"Lee",-3,"first line' 'second line"' \
	'4,ragged,1,x,extra' '5,short,2' '6,Zed,100,last' >"$T/quoted.csv"
cat >"$T/look.json" <<'EOF'
{"turns": [{"text": "Looked.", "tool_calls": []}]}
EOF
RUN2=$T/run2
tui_start 120 30 -- --provider script --script "$T/look.json" \
	--run-dir "$RUN2" --input "$T/big.csv" --input "$T/quoted.csv" look
check "the workbench lists the inputs" wait_for 'quoted\.csv' 60
keys Tab Tab Tab g j
check "the cursor on big.csv" true
tm set -g window-size manual
open_ms=$(probe Enter '^ input/big\.csv  .*x 4 cols  1\.0 GB')
echo "     open: key to screen $open_ms ms; the TUI: $(grep -o 'big.csv opened in [0-9.]* ms' "$RUN2/assay.log")"
check "the 1 GB file opens in under $LIMIT_MS ms ($open_ms ms)" \
	test "$open_ms" -ge 0 -a "$open_ms" -lt "$LIMIT_MS"
check "while it is indexed the rows are estimated" \
	in_region 0 0 0 119 '~[0-9]+ rows \(counting [0-9]+%\)'
check "its first rows" in_region 2 0 3 119 '^ +1 +0 │ s0 +0\.0  note, 0'
keys j j j
# (row 4 is on the screen before the keys too: wait for it on top)
check "scrolled down by rows: row 4 on top" \
	wait_until 10 "in_region 2 0 2 119 '^ +4 +3 │ s3 '"
check "... under the header, still pinned" \
	in_region 1 0 1 119 '^ +# +id +│ sensor +value +note'
check "... row 1 scrolled away" test "$(count_in_region 2 0 27 119 '^ +1 +0 +│ s0 ')" -eq 0
keys g
g_ms=$(probe G 'the very last row')
echo "     G: key to screen $g_ms ms; the TUI: $(grep -o 'the last rows found in [0-9.]* ms[^$]*' "$RUN2/assay.log" | head -1)"
check "G shows the last row in under $LIMIT_MS ms ($g_ms ms)" \
	test "$g_ms" -ge 0 -a "$g_ms" -lt "$LIMIT_MS"
check "the last row at the bottom" in_region 26 0 27 119 '99999999 │ LAST +1\.5  the very last row'
check "indexed: the exact count" wait_for "^ input/big\.csv  $bigrows rows x 4 cols" 120
grep -o 'indexed: .*' "$RUN2/assay.log" | sed 's/^/     /'
check "... and the last row's number" wait_for "^ *$bigrows  99999999 │ LAST" 10
keys q
check "q closes it" wait_for '┐┌─ Workspace ─' 10

keys j
keys Enter
check "quoted.csv opens (CRLF, sniffed as a comma file with a header)" \
	wait_for '^ input/quoted\.csv  6 rows x 4 cols  .*2 bad rows' 10
check "a quoted comma stays in its cell" in_region 2 0 2 119 '^ +1 +1 │ Smith, Ann +12\.5  plain'
check "\"\" is a quote" in_region 3 0 3 119 '^ +2 +2 │ Bob +7  say "hi"'
check "a quoted newline is in its cell, not a new row" \
	in_region 4 0 4 119 '^ +3 +3 │ Lee +-3  first line↵second line'
check "the ragged rows are marked" in_region 5 0 6 119 '^ +[45]! +[45] │ (ragged|short)'
check "... and only they" test "$(count_in_region 2 0 7 119 '^ +[0-9]+!')" -eq 2
check "the row after them is whole" in_region 7 0 7 119 '^ +6 +6 │ Zed +100  last'
keys '/' ; type_text 'second'; keys Enter
check "/ finds text in a multi-line cell" wait_for 'second: found in row 3' 10
keys C-q
wait_exit 30 >/dev/null
check "no process left behind" test -z "$(leftovers)"
finish
