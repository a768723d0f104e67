#!/usr/bin/env bash
# Every line of the help can be read at 80 columns and up: in tmux at
# 80x24 and at 200x50 the help (F1) is read screen by screen, scrolled
# (PgDn) to its end, and its rows put back together by their
# number in the footer; a row with a key starts an entry, a row without
# one continues it under the text column (a hanging indent). The entries
# so read must be exactly those of src/tui/help.c's table (extracted
# from the source, so the test cannot drift from it), each whole, and
# no row of the box may be cut with "…". Skipped (77) without bubblewrap
# or tmux.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
cd "$T"
S=$SRC/tests/e2e/data/short.json

# The table help_lines[][2] of help.c as JSON [[key, text], ...]:
# adjacent string literals joined as the compiler joins them.
$PY - "$SRC/src/tui/help.c" >entries.json <<'PY'
import json, re, sys
src = open(sys.argv[1]).read()
m = re.search(r"help_lines\[\]\[2\]\s*=\s*\{(.*?)\n\};", src, re.S)
if not m:
    sys.exit("help.c: no help_lines table")
out, cur, field, depth = [], None, None, 0
for tok in re.finditer(r'\{|\}|,|"((?:[^"\\]|\\.)*)"', m.group(1)):
    t = tok.group(0)
    if t == "{":
        depth += 1
        cur, field = [], None
    elif t == "}":
        depth -= 1
        if field is not None:
            cur.append(field)
        out.append(cur)
        cur = field = None
    elif t == ",":
        if cur is not None and field is not None:
            cur.append(field)
            field = None
    else:
        s = re.sub(r"\\(.)", r"\1", tok.group(1))
        field = (field or "") + s
if len(out) < 10 or any(len(e) != 2 for e in out):
    sys.exit("help.c: the table did not read as pairs: %r" % out[:3])
print(json.dumps(out))
PY
check "the help's entries read from help.c ($($PY -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' entries.json))" \
	test -s entries.json

# The rows of the box on the screen now, by their number in the help,
# into rows.json (a dict); exit 1 when the box is not there. Prints
# "FIRST LAST N" (N: the help's rows, the footer's or all shown).
cat >read_box.py <<'PY'
import json, os, re, sys
scr, path = sys.argv[1].split("\n"), sys.argv[2]
rows = json.load(open(path)) if os.path.exists(path) else {}
top = next((i for i, r in enumerate(scr) if "┌─ Keys ─" in r), None)
if top is None:
    sys.exit("no help box on the screen")
# (the panes' borders may touch the box's: its corners are found from
# its title)
left = scr[top].index("┌─ Keys ─")
right = scr[top].index("┐", left)
bottom = next(i for i in range(top + 1, len(scr))
              if scr[i][left:left + 1] == "└" and scr[i][right:right + 1] == "┘")
inner = [r[left + 1:right] for r in scr[top + 1:bottom]]
foot = inner[-1]
m = re.search(r"lines (\d+)-(\d+) of (\d+)", foot)
if m:
    first, last, n = map(int, m.groups())
else:
    if "any key closes this help" not in foot:
        sys.exit("no footer: %r" % foot)
    body = inner[:-1]
    while body and not body[-1].strip():
        body.pop()
    first, last, n = 1, len(body), len(body)
for k, r in enumerate(inner[:last - first + 1]):
    key = str(first + k)
    if key in rows and rows[key] != r:
        sys.exit("row %s read twice, differently: %r, %r" % (key, rows[key], r))
    rows[key] = r
json.dump(rows, open(path, "w"))
# a cut row anywhere in the box, the footer too
cut = [r for r in inner if "…" in r]
if cut:
    open(path + ".cut", "a").write("\n".join(cut) + "\n")
print(first, last, n)
PY

# The entries put back together from rows.json: each must be one of
# help.c's, whole, in order; continuation rows start at the text column.
cat >check_rows.py <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))
n = int(sys.argv[3])
missing = [i for i in range(1, n + 1) if str(i) not in rows]
if missing:
    sys.exit("rows never shown: %s" % missing)
# the key column is at the box's x 2 (inner index 1), the text at x 25
KEY, TEXT = 1, 24
got = []
for i in range(1, n + 1):
    r = rows[str(i)]
    key, text = r[KEY:TEXT].strip(), r[TEXT:].rstrip()
    if not key and not text:
        continue
    if r[:KEY].strip():
        sys.exit("row %d: text left of the key column: %r" % (i, r))
    if key:
        got.append([key, text])
    elif not got or text[:1] in ("", " "):
        sys.exit("row %d: not under the text column: %r" % (i, r))
    else:
        got[-1][1] += " " + text
for k, (g, w) in enumerate(zip(got, want)):
    if g != w:
        sys.exit("entry %d: read %r, help.c has %r" % (k + 1, g, w))
if len(got) != len(want):
    sys.exit("%d entries read, help.c has %d" % (len(got), len(want)))
print("%d entries whole in %d rows" % (len(got), n))
PY

# read_help COLS ROWS [scrolls]: open the help, read it to its end,
# check it; scrolls: it is taller than the screen, and its footer says
# how to scroll.
read_help() {
	local cols=$1 rows=$2 scrolls=${3:-} pos first=0 last=0 n=1 i prev=
	rm -f rows.json rows.json.cut
	tui_start "$cols" "$rows" -- --provider script --script "$S" hi
	check "${cols}x$rows: the run waits" wait_for 'waiting for you' 30
	keys F1
	check "${cols}x$rows: the help opens" wait_for '─ Keys ─' 5
	if [ -n "$scrolls" ]; then
		check "${cols}x$rows: taller than the screen, the footer names the scroll keys" \
			wait_for 'lines 1-[0-9]+ of [0-9]+: j/k, PgUp/PgDn, Home/End scroll' 5
	fi
	for ((i = 0; i < 40; i++)); do
		# (the screen is read again until it stops changing: a key's
		# frame may not be drawn yet)
		local scr again
		scr=$(screen)
		sleep 0.1
		again=$(screen)
		[ "$scr" = "$again" ] || continue
		pos=$($PY read_box.py "$scr" rows.json) || {
			echo "$scr"
			break
		}
		read -r first last n <<<"$pos"
		[ "$last" -ge "$n" ] && break
		if [ "$pos" != "$prev" ]; then
			prev=$pos
			keys NPage # a page on, the last one where it ends
		fi
	done
	check "${cols}x$rows: read to the last row (rows $first-$last of $n)" \
		test "${last:-0}" -ge "${n:-1}"
	check "${cols}x$rows: no row of the box cut with …" test ! -s rows.json.cut ||
		cat rows.json.cut
	check "${cols}x$rows: every entry of help.c whole, wrapped under its text column" \
		$PY check_rows.py rows.json entries.json "$n"
	keys q
	check "${cols}x$rows: q closes it" wait_gone '─ Keys ─' 5
	keys C-q
	wait_exit 20 >/dev/null
}

read_help 80 24 scrolls
read_help 200 50
finish
