# tui_helpers.bash: drive the real TUI inside tmux for the tui_*.sh tests
# (sourced after lib.bash, not run). A private tmux server (-L, a config
# of one line, nothing from the user) with a fixed window size; screens
# are read with capture-pane and checked for titles, key lines and where things are, never for
# bytes that depend on timing. The UI is made deterministic with
# ASSAY_SCRIPT_DELAY_MS=0 (scripted model at full speed) and
# ASSAY_TUI_CLOCK_MS=0 (a fixed clock: no moving spinners or timers).

command -v tmux >/dev/null || skip "tmux is not installed"

# a fresh server (socket) for each start: one that is shutting down may
# still hold the old socket
TM_BASE=assay-tui-$$-$RANDOM
TM_N=0
# no user configuration: only what the tests need
echo 'set -g default-terminal tmux-256color' >"$T/tmux.conf"
tm() { tmux -L "$TM_BASE-$TM_N" -f "$T/tmux.conf" "$@"; }
# The pane runs its command as a child subreaper (PR_SET_CHILD_SUBREAPER,
# kept across exec): whatever the run leaves behind, even a process that
# left its parent (setsid, a double fork), stays in the pane's own
# process tree, where leftovers looks.
cat >"$T/subreaper.py" <<'EOF'
import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0):  # PR_SET_CHILD_SUBREAPER
    sys.exit("PR_SET_CHILD_SUBREAPER: " + os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[1], sys.argv[1:])
EOF

tui_cleanup() {
	tm kill-server 2>/dev/null || true
	# the servers' socket files stay behind otherwise
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$TM_BASE-"*
	cleanup
}
trap tui_cleanup EXIT

# tui_start COLS ROWS [VAR=VALUE...] -- ARGS...: run assay ARGS in a new
# tmux session "t" in $T; its exit code lands in $T/exit.
tui_start() {
	local cols=$1 rows=$2
	shift 2
	local envs=(LANG=C.UTF-8 LC_ALL=C.UTF-8 ASSAY_SCRIPT_DELAY_MS=0
		ASSAY_TUI_CLOCK_MS=0 ASSAY_TUI_STATS=1)
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	rm -f "$T/exit" "$T/pane.pid"
	{
		printf 'echo $$ > %q\n' "$T/pane.pid"
		printf 'cd %q\n' "$T"
		printf 'export %q\n' "${envs[@]}"
		printf '%q ' "$ASSAY" "$@"
		printf '\necho $? > %q\nexec sleep 600\n' "$T/exit"
	} >"$T/run.sh"
	tm kill-server 2>/dev/null || true
	TM_N=$((TM_N + 1))
	tm new-session -d -s t -x "$cols" -y "$rows" "$PY $T/subreaper.py bash $T/run.sh"
}

keys() { tm send-keys -t t "$@"; }
# keys_seen MS KEY...: send KEY(s), then wait until the screen (with its
# attributes) has changed, MS milliseconds at most: in place of a fixed
# sleep after a key, it goes on once the key was acted on, and waits the
# whole MS only when nothing visible came of it (a hang included).
keys_seen() {
	local ms=$1 before i
	shift
	before=$(screen_attrs)
	keys "$@"
	for ((i = 0; i < (ms + 49) / 50; i++)); do
		[ "$(screen_attrs 2>/dev/null)" != "$before" ] && return 0
		sleep 0.05
	done
	return 0
}
# Type text literally (no key names).
type_text() { tm send-keys -t t -l "$1"; }
screen() { tm capture-pane -p -t t; }
screen_attrs() { tm capture-pane -p -e -t t; }
# The screen with wrapped lines joined (for long messages).
screen_joined() { tm capture-pane -p -J -t t; }

# wait_joined REGEX [SECONDS]: wait_for on the joined screen.
wait_joined() {
	local re=$1 secs=${2:-10} i txt
	for ((i = 0; i < secs * 20; i++)); do
		txt=$(screen_joined)
		if grep -Eq -- "$re" <<<"$txt"; then return 0; fi
		sleep 0.05
	done
	screen_joined
	return 1
}

# wait_for REGEX [SECONDS]: until the screen matches; prints it if not.
wait_for() {
	local re=$1 secs=${2:-30} i
	for ((i = 0; i < secs * 20; i++)); do
		if screen_has "$re"; then return 0; fi
		sleep 0.05
	done
	echo "--- screen while waiting for /$re/:"
	screen
	return 1
}

# wait_gone REGEX [SECONDS]
wait_gone() {
	local re=$1 secs=${2:-10} i
	for ((i = 0; i < secs * 20; i++)); do
		if ! screen_has "$re"; then return 0; fi
		sleep 0.05
	done
	screen
	return 1
}

# wait_exit [SECONDS]: until assay has exited; prints its exit code.
wait_exit() {
	local secs=${1:-30} i
	for ((i = 0; i < secs * 20; i++)); do
		[ -s "$T/exit" ] && { cat "$T/exit"; return 0; }
		sleep 0.05
	done
	echo timeout
}

# col_of ROW TEXT: the screen column where TEXT starts on ROW (0-based),
# counted in characters; -1 if absent.
col_of() {
	screen | $PY -c 'import sys
rows = sys.stdin.read().split("\n")
r, t = int(sys.argv[1]), sys.argv[2]
print(rows[r].find(t) if r < len(rows) else -1)' "$1" "$2"
}

# row_of TEXT [COL]: the first row where TEXT starts at COL (or anywhere).
row_of() {
	screen | $PY -c 'import sys
rows = sys.stdin.read().split("\n")
t = sys.argv[1]; c = int(sys.argv[2]) if len(sys.argv) > 2 else -1
for i, r in enumerate(rows):
    k = r.find(t)
    if k >= 0 and (c < 0 or k == c):
        print(i); break
else:
    print(-1)' "$@"
}

# region TOP LEFT BOTTOM RIGHT: the text of a rectangle of the screen
# (rows and columns inclusive, 0-based), one row per line.
region() {
	local scr
	scr=$(screen)
	$PY -c 'import sys
rows = sys.argv[5].split("\n")
t, l, b, r = map(int, sys.argv[1:5])
for row in rows[t:b + 1]:
    print(row[l:r + 1])' "$@" "$scr"
}

# in_region TOP LEFT BOTTOM RIGHT REGEX
in_region() {
	local txt
	txt=$(region "$1" "$2" "$3" "$4")
	grep -Eq -- "$5" <<<"$txt"
}

# count_in_region TOP LEFT BOTTOM RIGHT REGEX: matching rows
count_in_region() {
	local txt
	txt=$(region "$1" "$2" "$3" "$4")
	grep -Ec -- "$5" <<<"$txt" || true
}

# screen_has REGEX (without the pipe races of grep -q on a pipe)
screen_has() {
	local txt
	txt=$(screen)
	grep -Eq -- "$1" <<<"$txt"
}

# attrs_has REGEX: the screen with its SGR attributes matches
attrs_has() {
	local txt
	txt=$(screen_attrs)
	grep -Eq -- "$1" <<<"$txt"
}

# The widest row of the screen, in characters.
screen_width() {
	local txt
	txt=$(screen)
	$PY -c 'import sys; print(max(len(r) for r in sys.argv[1].split("\n")))' "$txt"
}

# wait_for_below TEXT REGEX [SECONDS]: until a row below the first row
# holding TEXT matches REGEX; prints the screen if not.
wait_for_below() {
	local text=$1 re=$2 secs=${3:-10} i
	for ((i = 0; i < secs * 20; i++)); do
		screen | $PY -c 'import re, sys
rows = sys.stdin.read().split("\n")
at = [i for i, r in enumerate(rows) if sys.argv[1] in r]
sys.exit(0 if at and any(re.search(sys.argv[2], r) for r in rows[at[0] + 1:]) else 1)' \
			"$text" "$re" && return 0
		sleep 0.05
	done
	echo "--- screen while waiting for /$re/ below '$text':"
	screen
	return 1
}

# The processes below the pane of the last tui_start (not bash run.sh
# itself, then its sleep 600, nor zombies: that sleep reaps none), as
# "pid args" lines: only this test's own process tree is looked at.
pane_procs() {
	local top
	top=$(cat "$T/pane.pid" 2>/dev/null) || return 0
	ps -e -o pid=,ppid=,stat=,args= | awk -v top="$top" '
		{ pid[NR] = $1; ppid[NR] = $2; st[NR] = $3
		  sub(/^ *[0-9]+ +[0-9]+ +[^ ]+ +/, ""); args[NR] = $0 }
		END {
			in_tree[top] = 1
			do {
				more = 0
				for (i = 1; i <= NR; i++)
					if (!(pid[i] in in_tree) && (ppid[i] in in_tree)) {
						in_tree[pid[i]] = 1
						more = 1
					}
			} while (more)
			for (i = 1; i <= NR; i++)
				if (pid[i] != top && (pid[i] in in_tree) && st[i] !~ /^Z/)
					print pid[i], args[i]
		}'
}

# The pid of the assay process of the last tui_start (the pane's child
# that runs $ASSAY, with RUN as its run dir).
assay_pid() {
	# (the whole list is read: an awk that left at the first match made
	# ps's side of the pipe fail under pipefail, and the test with it)
	pane_procs | awk -v a="$ASSAY" -v r="--run-dir $1" '
		!p && index($0, " " a " ") && (index($0, r " ") || substr($0, length($0) - length(r) + 1) == r) {
			p = $1 }
		END { if (p) print p }'
}

# Processes of the last tui_start still alive (call it once assay has
# exited): assay, the sandbox, its helpers and anything they started,
# daemonised or not.
leftovers() { pane_procs; }

# The highest frame rate the TUI logged (ASSAY_TUI_STATS) in a run dir.
max_fps() {
	awk '/tui: frames/ { if ($7 > 0) { r = $5 * 1000 / $7; if (r > m) m = r } }
	     END { printf "%d", m }' "$1/assay.log"
}
