#!/usr/bin/env bash
# Themes in tmux at 120x40: every bundled theme's colours reach the
# screen (each element of the first screen checked where it is drawn,
# in `capture-pane -e`, against the theme file: borders, titles, focus,
# labels, text, the status bar), and the themes differ on screen in
# their escapes only; --theme NAME and the "theme" config key pick one;
# user themes come from $XDG_CONFIG_HOME/assay/themes/ and replace a
# bundled one of that name; NO_COLOR drops colour but keeps reverse and
# bold, so focus stays visible; a broken or unknown theme is a clear
# error (naming the file and the key) before the screen opens.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
export XDG_CONFIG_HOME=$T/config
mkdir -p "$XDG_CONFIG_HOME/assay/themes"
cat >"$T/hi.json" <<'EOF'
{"turns": [{"text": "Hello from the **theme** test.", "tool_calls": []}]}
EOF
n=0
run_theme() { # run_theme [VAR=VALUE...] -- ARGS...
	n=$((n + 1))
	RUN=$T/run$n
	local envs=()
	while [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	tui_start 120 40 "XDG_CONFIG_HOME=$XDG_CONFIG_HOME" "${envs[@]}" -- \
		--provider script --script "$T/hi.json" --run-dir "$RUN" "$@" hi
}
quit() {
	keys C-q
	wait_exit 20
}
# Colour codes in the captured screen (tmux writes 38;5;N / 38;2;.. / 3N).
has_color() { attrs_has $'\e''\[([0-9;]*;)?(3[0-7]|9[0-7]|38;[25];[0-9;]+|4[0-7]|48;[25];[0-9;]+)m'; }

# style_is THEME_FILE... ELEMENT TEXT ROW [nocolor]: the first cell of
# TEXT on ROW of the screen (-1 the last row) has ELEMENT's colours and
# attributes as the theme files say (a later file over an earlier one,
# as a theme file over the built-in values), read from `capture-pane
# -e` (whose SGR state carries on from cell to cell and row to row).
# An element's "default" is the theme's normal colour; a #rrggbb colour
# shows as itself (24-bit) or as a 256-colour index no further from it
# than the nearest index is, plus one grey step. nocolor: colour is off
# (NO_COLOR), and an element told by its background is drawn reversed.
cat >"$T/style.py" <<'PYEND'
import json, re, sys
args = sys.argv[1:]
nocolor = args[-1] == "nocolor"
if nocolor:
    args = args[:-1]
files, (elem, text, row) = args[:-3], args[-3:]
NAMES = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]
NAMES += ["bright-" + c for c in NAMES]

def load(f):  # theme files start with // comment lines
    return json.loads("".join(l for l in open(f) if not l.lstrip().startswith("//")))

def colour(v, pal):
    v = pal.get(v, v) if isinstance(v, str) else v
    if isinstance(v, int):
        return v
    if v in ("default", "none"):
        return None
    if v in ("grey", "gray"):
        return 8
    if v in NAMES:
        return NAMES.index(v)
    if re.fullmatch(r"#[0-9a-fA-F]{6}", v):
        return tuple(int(v[i:i + 2], 16) for i in (1, 3, 5))
    sys.exit("style.py: what colour is %r?" % v)

els = {}
for f in files:
    t = load(f)
    pal = t.get("palette", {})
    for k, v in t.get("elements", {}).items():
        if not isinstance(v, dict):
            v = {"fg": v}
        els[k] = (colour(v.get("fg", "default"), pal),
                  colour(v.get("bg", "default"), pal), frozenset(v.get("attrs", [])))
nfg, nbg, _ = els["normal"]
fg, bg, attrs = els[elem]
if nocolor:
    if bg is not None and bg != nbg:
        attrs = attrs ^ {"reverse"}
    fg = bg = None
else:
    fg = nfg if fg is None else fg
    bg = nbg if bg is None else bg

# the screen: each cell with the SGR state in force where it is
SGR = {1: "bold", 2: "dim", 3: "italic", 4: "underline", 5: "blink", 7: "reverse"}
OFF = {22: ("bold", "dim"), 23: ("italic",), 24: ("underline",), 25: ("blink",),
       27: ("reverse",)}
st = {"fg": None, "bg": None, "attrs": frozenset()}
rows, cur = [], []
for m in re.finditer(r"\x1b\[([0-9;:]*)m|\n|[^\x1b\n]", sys.stdin.read()):
    s = m.group(0)
    if s == "\n":
        rows.append(cur)
        cur = []
        continue
    if not s.startswith("\x1b"):
        cur.append((s, dict(st)))
        continue
    p = [int(x or 0) for x in re.split("[;:]", m.group(1))]
    i = 0
    while i < len(p):
        c = p[i]
        if c == 0:
            st = {"fg": None, "bg": None, "attrs": frozenset()}
        elif c in SGR:
            st["attrs"] = st["attrs"] | {SGR[c]}
        elif c in OFF:
            st["attrs"] = st["attrs"] - set(OFF[c])
        elif c in (38, 48):
            k = "fg" if c == 38 else "bg"
            if p[i + 1] == 5:
                st[k], i = p[i + 2], i + 2
            else:
                st[k], i = tuple(p[i + 2:i + 5]), i + 4
        elif c in (39, 49):
            st["fg" if c == 39 else "bg"] = None
        elif 30 <= c <= 37 or 90 <= c <= 97:
            st["fg"] = c - 30 if c < 90 else c - 82
        elif 40 <= c <= 47 or 100 <= c <= 107:
            st["bg"] = c - 40 if c < 100 else c - 92
        i += 1
rows.append(cur)
while rows and not rows[-1]:
    rows.pop()
line = rows[int(row)]
plain = "".join(ch for ch, _ in line)
at = plain.find(text)
if at < 0:
    sys.exit("no %r in row %s: %r" % (text, row, plain))
got = line[at][1]

def rgb(c):  # what an xterm colour index shows
    if isinstance(c, tuple):
        return c
    if c < 16:
        return None
    if c < 232:
        lv = [0, 95, 135, 175, 215, 255]
        return (lv[(c - 16) // 36], lv[(c - 16) // 6 % 6], lv[(c - 16) % 6])
    return (8 + 10 * (c - 232),) * 3

def dist(a, b):
    return sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5

def same(want, have):
    if not isinstance(want, tuple) or have is None or have == want:
        return want == have
    h = rgb(have)
    best = min(dist(want, rgb(i)) for i in range(16, 256))
    return h is not None and dist(want, h) <= best + 18

def show(f, b, a):
    return "fg %s bg %s %s" % (f, b, ",".join(sorted(a)) or "plain")

ok = same(fg, got["fg"]) and same(bg, got["bg"]) and attrs == got["attrs"]
if not ok:
    print("%s at %r (row %s): want %s, got %s" % (
        elem, text, row, show(fg, bg, attrs), show(got["fg"], got["bg"], got["attrs"])))
sys.exit(0 if ok else 1)
PYEND
style_is() {
	local scr
	scr=$(screen_attrs)
	$PY "$T/style.py" "$@" <<<"$scr"
}
# the built-in values (what a theme file leaves out keeps them)
BUILTIN=$SRC/themes/default.json
# check_styles LABEL [nocolor] -- THEME_FILE...: the elements of the
# first screen, each where it is drawn
check_styles() {
	local label=$1 nc=()
	shift
	[ "$1" = nocolor ] && { nc=(nocolor); shift; }
	shift
	check "$label: the border of an unfocused pane" style_is "$@" border '┌─' 0 "${nc[@]}"
	check "$label: a pane's title" style_is "$@" title 'Conversation' 0 "${nc[@]}"
	check "$label: the focused input box's border" style_is "$@" border_focus '┌─' -4 "${nc[@]}"
	check "$label: the prompt" style_is "$@" prompt '>' -3 "${nc[@]}"
	check "$label: the user's label" style_is "$@" user_label 'you:' 1 "${nc[@]}"
	check "$label: the user's text" style_is "$@" user 'hi' 1 "${nc[@]}"
	check "$label: the assistant's label" style_is "$@" assistant_label 'assistant:' 3 "${nc[@]}"
	check "$label: the assistant's text" style_is "$@" assistant 'Hello from' 3 "${nc[@]}"
	check "$label: markdown bold" style_is "$@" bold 'theme test' 3 "${nc[@]}"
	check "$label: dimmed text" style_is "$@" dim 'no tool calls yet' 1 "${nc[@]}"
	check "$label: the status bar" style_is "$@" status 'waiting for you' -1 "${nc[@]}"
}

for theme in default light high-contrast solarized-dark mono; do
	run_theme -- --theme "$theme"
	check "--theme $theme opens" wait_for 'waiting for you' 20
	check "--theme $theme: panes drawn" wait_for '─ Workspace ─' 5
	screen >"$T/$theme.text"
	screen_attrs >"$T/$theme.attrs"
	check_styles "$theme" -- "$BUILTIN" "$SRC/themes/$theme.json"
	if [ "$theme" = mono ]; then
		check "mono: no colour at all" test "$(has_color && echo yes)" != yes
	else
		check "$theme: in colour" has_color
	fi
	code=$(quit)
	check "--theme $theme quits cleanly (exit $code)" test "$code" = 0
done
# the same screen in every theme: the same text, other escapes
for theme in light high-contrast solarized-dark mono; do
	check "$theme: the same text as default" cmp -s "$T/default.text" "$T/$theme.text"
	check "$theme: other escapes than default" \
		sh -c '! cmp -s "$1" "$2"' - "$T/default.attrs" "$T/$theme.attrs"
done

# NO_COLOR: no colour, but what is told by a background (the status
# bar) is reversed and bold stays, so focus stays visible
run_theme NO_COLOR=1 --
check "NO_COLOR: opens" wait_for 'waiting for you' 20
check "NO_COLOR: no colour codes" test "$(has_color && echo yes)" != yes
check_styles NO_COLOR nocolor -- "$BUILTIN"
quit >/dev/null

# the config key picks the theme; a user theme of the same name as a
# bundled one wins, whole: what it leaves out has the built-in values,
# not the bundled light theme's
cat >"$XDG_CONFIG_HOME/assay/themes/light.json" <<'EOF'
{"elements": {"status": {"fg": "#000000", "bg": "#ff0000"}}}
EOF
mkdir -p "$XDG_CONFIG_HOME/assay"
echo '{"theme": "light"}' >"$XDG_CONFIG_HOME/assay/config.json"
run_theme --
check "config key: the user's light theme is used" \
	wait_for 'waiting for you' 20
check "config key: its red status bar (196 on a 256-colour terminal)" \
	attrs_has $'\e''\[[0-9;]*48;5;196m'
check_styles "config key, the user's light" -- "$BUILTIN" "$XDG_CONFIG_HOME/assay/themes/light.json"
quit >/dev/null
rm "$XDG_CONFIG_HOME/assay/config.json"

# errors: before the screen opens, naming the file and the key
cat >"$XDG_CONFIG_HOME/assay/themes/broken.json" <<'EOF'
{"elements": {"bordr": "red"}}
EOF
run_theme -- --theme broken
code=$(wait_exit 20)
check "a broken theme exits 2 (got $code)" test "$code" = 2
check "the error names the file and the key" \
	wait_joined "theme $XDG_CONFIG_HOME/assay/themes/broken.json: elements.bordr: unknown element" 5
cat >"$XDG_CONFIG_HOME/assay/themes/badjson.json" <<'EOF'
{"elements": {
  "border": "red",,
}
EOF
run_theme -- --theme badjson
code=$(wait_exit 20)
check "invalid JSON exits 2 (got $code)" test "$code" = 2
check "the error names the file and the line" \
	wait_joined "badjson.json: invalid JSON near line [23]" 5
run_theme -- --theme no-such-theme
code=$(wait_exit 20)
check "an unknown theme exits 2 (got $code)" test "$code" = 2
check "the error lists the themes there are" \
	wait_joined 'theme "no-such-theme" not found .*available: .*solarized-dark' 5
check "no run was started for a bad theme" test ! -e "$T/run$n"
finish
