#!/usr/bin/env bash
# Themes in tmux at 120x40: every bundled theme opens; --theme NAME and
# the "theme" config key pick one; user themes come from
# $XDG_CONFIG_HOME/assay/themes/; NO_COLOR drops colour but keeps
# reverse and bold, so focus stays visible; a broken or unknown theme is
# a clear error (naming the file and the key) before the screen opens.
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

for theme in default light high-contrast solarized-dark mono; do
	run_theme -- --theme "$theme"
	check "--theme $theme opens" wait_for 'waiting for you' 20
	check "--theme $theme: panes drawn" wait_for '─ Workspace ─' 5
	if [ "$theme" = mono ]; then
		check "mono: no colour at all" test "$(has_color && echo yes)" != yes
	else
		check "$theme: in colour" has_color
	fi
	code=$(quit)
	check "--theme $theme quits cleanly (exit $code)" test "$code" = 0
done

# NO_COLOR: no colour, but the focused title and the status bar are
# reversed so focus stays visible
run_theme NO_COLOR=1 --
check "NO_COLOR: opens" wait_for 'waiting for you' 20
check "NO_COLOR: no colour codes" test "$(has_color && echo yes)" != yes
check "NO_COLOR: reverse video kept" attrs_has $'\e''\[([0-9;]*;)?7m'
check "NO_COLOR: bold kept" attrs_has $'\e''\[([0-9;]*;)?1m'
quit >/dev/null

# the config key picks the theme; a user theme of the same name as a
# bundled one wins
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
