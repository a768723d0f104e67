#!/usr/bin/env bash
# Benchmark: a turn jump ([ and ]) in `assay replay`, in tmux, on a
# transcript with a hostile turn number (2000000000: every jump once
# walked two billion turns, for minutes) against the same transcript
# with turn 1: from send-keys to the screen showing the step jumped
# to (median of N, interleaved). The figure tests/e2e/tui_replay.sh used
# to assert ("answers at once": within 3 s); it now only guards against
# a hang. Prints the figures and their ratio; does not fail.
#   tests/bench/replay_jump.sh [BUILD_DIR] [-n RUNS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
shift || true
runs=10
[ "${1:-}" = -n ] && runs=$2
assay=$build/assay
[ -x "$assay" ] || { echo "no $assay: build first" >&2; exit 1; }
command -v tmux >/dev/null || { echo "tmux is not installed" >&2; exit 1; }
t=$(mktemp -d /tmp/assay-replaybench.XXXXXX)
sock=assay-replaybench-$$
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$t"' EXIT
for name in hostile sound; do
	turn=2000000000
	[ "$name" = sound ] && turn=1
	mkdir -p "$t/$name"
	cat >"$t/$name/transcript.jsonl" <<JSONL
{"seq":1,"t":0,"type":"run_start","provider":"script","model":"m"}
{"seq":2,"t":1,"type":"user_message","text":"go"}
{"seq":3,"t":2,"type":"model_request","turn":$turn}
{"seq":4,"t":3,"type":"assistant_message","turn":$turn,"text":"answer","tool_calls":[]}
JSONL
done
echo 'set -g default-terminal tmux-256color' >"$t/tmux.conf"
tm() { tmux -L "$sock" -f "$t/tmux.conf" "$@"; }
now() { date +%s%N; }
# until the screen shows RE (30 s at most); the ms since START
until_shown() {
	local re=$1 start=$2
	for _ in $(seq 3000); do
		tm capture-pane -p -t r | grep -Eq -- "$re" && break
		sleep 0.01
	done
	echo $((($(now) - start) / 1000000))
}
declare -A ms
for ((i = 0; i < runs; i++)); do
	for name in hostile sound; do
		tm kill-server 2>/dev/null || true
		tm new-session -d -s r -x 120 -y 40 \
			"env LANG=C.UTF-8 ASSAY_TUI_CLOCK_MS=0 $assay replay $t/$name; sleep 600"
		until_shown 'replay 1/4' "$(now)" >/dev/null
		tm send-keys -t r End
		until_shown 'replay 4/4' "$(now)" >/dev/null
		s=$(now)
		tm send-keys -t r '['
		a=$(until_shown 'replay 3/4' "$s")
		s=$(now)
		tm send-keys -t r ']'
		b=$(until_shown 'replay 4/4' "$s")
		ms[$name]+="$a $b "
	done
done
tm kill-server 2>/dev/null || true
/usr/bin/python3 - "${ms[hostile]}" "${ms[sound]}" <<'PY'
import statistics, sys
h = [int(v) for v in sys.argv[1].split()]
s = [int(v) for v in sys.argv[2].split()]
mh, ms = statistics.median(h), statistics.median(s)
print("a turn jump in assay replay, from send-keys to the screen (%d jumps each):" % len(h))
print("  turn 2000000000: median %6.1f ms (min %d, max %d)" % (mh, min(h), max(h)))
print("  turn 1:          median %6.1f ms (min %d, max %d)" % (ms, min(s), max(s)))
print("  ratio: %.2fx (near 1: the turn number costs nothing; it once took minutes;"
      " tui_replay.sh asserted < 3 s)" % (mh / ms if ms else float("nan")))
PY
