#!/usr/bin/env bash
# The TUI stays responsive while a run with a big input ends: its
# output is copied out and its workspace archive written (issue 12,
# "What it must show" 3; issue 15, 3), in tmux at 120x40:
# - a 2 GB input (INPUT_MB, allocated, not sparse) is mounted and
#   hashed while the run starts;
# - the scripted model's one command writes MB (500) of random bytes,
#   which gzip cannot shrink, to the declared output noise.bin, so the
#   copy to the out dir and workspace.tar.gz take seconds;
# - --max-turns 1 is reached right after that call: the Budget dialog
#   asks, s stops the run (budget exhausted), and the workbench stays
#   open while the archive is written;
# - while the hash, the copy or the archive is in progress (the
#   archive's temporary file exists and grows, or an assay-archive
#   helper hashes the input, copies or archives this run dir), keys are
#   typed into the message box one at a time and each one's echo is
#   timed by polling capture-pane through one tmux control-mode client
#   (as tests/bench/tui_latency.py does: no process start per probe).
# Every key must echo within LIMIT_MS (100), at least MIN_PROBES (10)
# keys must have been typed with the archive in progress at both ends
# of their probe, and the archive must have grown meanwhile: a
# measurement that missed the archive proves nothing and fails.
# PROBE_DEBUG=1 prints what the probe saw (the screen of a key that did
# not echo, every probe's state) on stderr.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
MB=${ASSAY_ARCHIVE_TEST_MB:-500}
INPUT_MB=${ASSAY_INPUT_TEST_MB:-2048}
LIMIT_MS=100
MIN_PROBES=10
RUN=$T/run
fallocate -l "${INPUT_MB}M" "$T/big.bin" 2>/dev/null ||
	head -c "${INPUT_MB}M" /dev/zero >"$T/big.bin"
touch -d '1 hour ago' "$T/big.bin"

cat >"$T/noise.json" <<EOF
{"turns": [
  {"text": "Writing $MB MB of noise.", "tool_calls": [{"name": "shell",
    "arguments": {"command": "wc -c < input/big.bin && head -c ${MB}M /dev/urandom > noise.bin && echo written",
                  "timeout_s": 600}}]}
]}
EOF
tui_start 120 40 -- --provider script --script "$T/noise.json" \
	--run-dir "$RUN" --max-turns 1 --timeout 600 --input "$T/big.bin" \
	--output noise.bin --out "$T/out" "make noise"
check "the workbench comes up" wait_for 'Conversation' 20
# the control client below must not resize the window
tm set -g window-size manual
# --max-turns 1 is reached after the call: the workbench asks (the
# Budget dialog) and waits; s stops the run, whose archive is then
# written while the keys below are typed
check "the turn limit asks: the Budget dialog" wait_for 'Budget reached' 180
keys s

# Probes keys while the archive of $RUN is written; prints one line of
# figures and writes the verdict's numbers to $T/probe.json.
tm_sock=$TM_BASE-$TM_N
$PY - "$tm_sock" "$T/tmux.conf" "$RUN" "$T/probe.json" "$T/big.bin" <<'PY' || true
import json, os, random, re, subprocess, sys, time

sock, conf, run, out, big = sys.argv[1:6]
INPUT_ROW = 40 - 3  # the message box's first text row at 120x40
PROBE_TIMEOUT = 3.0  # a key not echoed by then: the loop is blocked
WINDOW_S, MAX_PROBES = 20.0, 800


class Tmux:
    """One control-mode client: commands and their output, in order."""

    def __init__(self):
        self.p = subprocess.Popen(
            ["tmux", "-L", sock, "-f", conf, "-C", "attach", "-t", "t"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.block()
        self.cmd("refresh-client -f no-output")

    def block(self):
        lines, inside = [], False
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("tmux control client went away")
            if line.startswith(b"%begin"):
                inside, lines = True, []
            elif line.startswith((b"%end", b"%error")) and inside:
                return lines
            elif inside:
                lines.append(line.decode("utf-8", "replace").rstrip("\n"))

    def cmd(self, c):
        self.p.stdin.write((c + "\n").encode())
        return self.block()

    def row(self, r):
        lines = self.cmd("capture-pane -p -t t -S %d -E %d" % (r, r))
        return lines[0] if lines else ""


def typed(row):
    m = re.search(r"> (x*)", row)
    return len(m.group(1)) if m else 0


def helper_running():
    """An assay-archive process is creating this run's archive, copying
    its output or hashing its input (the helper lists and reads the
    workspace too: those do not count)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            argv = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")
        except OSError:
            continue
        if len(argv) > 2 and argv[0].endswith(b"assay-archive") and \
                argv[1] in (b"create", b"fetch", b"hash") and \
                any(run.encode() in a or a == big.encode()
                    for a in argv[2:]):
            return True
    return False


def tmp_size():
    """The size of the archive's temporary file, or -1 if none."""
    best = -1
    try:
        names = os.listdir(run)
    except OSError:
        return -1
    for n in names:
        if n.startswith("workspace.tar.zst.tmp"):
            try:
                best = max(best, os.path.getsize(os.path.join(run, n)))
            except OSError:
                pass
    return best


def state():
    size = tmp_size()
    return {"on": size >= 0 or helper_running(), "size": size,
            "t": time.time()}


def debug(what):
    if os.environ.get("PROBE_DEBUG"):
        print("probe: %.2f %s" % (time.time(), what), file=sys.stderr)


debug("attaching")
tm = Tmux()
debug("attached; waiting for the archive")
res = {"started": False, "probes": [], "wait_s": 0}
t0 = time.time()
while not state()["on"]:
    if os.path.exists(os.path.join(run, "workspace.tar.zst")) or \
            time.time() - t0 > 120:
        break
    time.sleep(0.005)
res["wait_s"] = round(time.time() - t0, 2)
debug("archive %s" % state())
if state()["on"]:
    res["started"] = True
    have = typed(tm.row(INPUT_ROW))
    end = time.time() + WINDOW_S
    while time.time() < end and len(res["probes"]) < MAX_PROBES:
        before = state()
        p0 = time.perf_counter()
        tm.cmd("send-keys -t t x")
        ms = None
        while time.perf_counter() - p0 < PROBE_TIMEOUT:
            if typed(tm.row(INPUT_ROW)) >= have + 1:
                ms = (time.perf_counter() - p0) * 1000
                break
        after = state()
        if ms is not None and before["on"] and after["on"] and \
                "status" not in res:
            res["status"] = tm.row(40 - 1)
        probe = {"ms": ms, "before": before, "after": after}
        res["probes"].append(probe)
        if ms is None:
            debug("not echoed:\n" + "\n".join(tm.cmd("capture-pane -p -t t")))
            # blocked: how long the key really took to show
            while time.perf_counter() - p0 < 200:
                if typed(tm.row(INPUT_ROW)) >= have + 1:
                    probe["late_ms"] = (time.perf_counter() - p0) * 1000
                    break
                time.sleep(0.01)
            break
        have += 1
        if have >= 60:  # a full row: the box would grow
            tm.cmd("send-keys -t t C-u")
            while typed(tm.row(INPUT_ROW)) and time.time() < end + 5:
                time.sleep(0.005)
            have = 0
        time.sleep(random.uniform(0.01, 0.04))
    res["in_box"] = have + (1 if res["probes"] and
                           res["probes"][-1]["ms"] is None else 0)
    # how long the archive went on after the measurement
    t1 = time.time()
    while state()["on"] and time.time() - t1 < 200:
        time.sleep(0.05)
    res["archive_after_s"] = round(time.time() - t1, 2)
json.dump(res, open(out, "w"))
debug("probes: %s" % json.dumps([(x["ms"], x["before"], x["after"])
                                 for x in res["probes"]]))
p = res["probes"]
during = [x for x in p if x["before"]["on"] and x["after"]["on"]]
lat = sorted(x["ms"] for x in during if x["ms"] is not None)
late = ["%.0f ms" % x["late_ms"] for x in p if "late_ms" in x]
print("archive seen %.2f s after the start; %d probes, %d with the "
      "archive in progress at both ends; echo p50 %s ms, p99 %s ms, max %s ms; %d "
      "not echoed within %.0f s%s; the archive went on %.1f s after "
      "the probes" % (
          res["wait_s"], len(p), len(during),
          "%.1f" % lat[len(lat) // 2] if lat else "-",
          "%.1f" % lat[len(lat) * 99 // 100] if lat else "-",
          "%.1f" % lat[-1] if lat else "-",
          len([x for x in p if x["ms"] is None]), PROBE_TIMEOUT,
          " (shown after %s)" % ", ".join(late) if late else "",
          res.get("archive_after_s", 0)))
PY

probe() { # probe PYTHON-EXPRESSION over the result r
	$PY -c 'import json, sys
r = json.load(open(sys.argv[1]))
p = r["probes"]
during = [x for x in p if x["before"]["on"] and x["after"]["on"]]
print(eval(sys.argv[2]))' "$T/probe.json" "$1"
}
check "the archive was seen in progress" test "$(probe 'r["started"]')" = True
n=$(probe 'len(during)')
check "at least $MIN_PROBES keys were typed while it was written ($n)" \
	test "$n" -ge "$MIN_PROBES"
check "the archive grew during the measurement" \
	test "$(probe 'len(during) > 0 and (during[-1]["after"]["size"] > during[0]["before"]["size"] or during[0]["before"]["size"] < 0)')" = True
check "the input was mounted whole" \
	sh -c "cat '$RUN'/exec/*.stdout | grep -qx $((INPUT_MB * 1048576))"
check "its hash was recorded" \
	test "$(jget "$RUN/transcript.jsonl" "[len(e['inputs'][0]['sha256']) for e in x if e['type'] == 'input_hashes']")" = "[64]"
check "the status bar says the run is ending (the workspace being saved), or that the input is being hashed" \
	test "$(probe 'any(x in r.get("status", "") for x in ("ending: saving the workspace", "saving the workspace: ", "hashing input/big.bin: "))')" = True
blocked=$(probe 'len([x for x in p if x["ms"] is None])')
check "no key waited for the archive (not echoed within 3 s: $blocked)" \
	test "$blocked" = 0
worst=$(probe 'round(max([x["ms"] if x["ms"] is not None else x.get("late_ms", 1e9) for x in p] or [1e9]), 1)')
check "every key echoed within $LIMIT_MS ms while the archive was written (max $worst ms)" \
	$PY -c "import sys; sys.exit(0 if $worst <= $LIMIT_MS else 1)"

check "the run ends: turn limit" wait_for 'run budget_exhausted' 120
check "the keys typed since the last Ctrl-U are in the message box" \
	test "$(region 37 0 37 119 | grep -o 'x*' | awk '{ if (length > m) m = length } END { print m + 0 }')" = "$(probe 'r.get("in_box", 0)')"
keys C-q
code=$(wait_exit 60)
check "quit: exit 5, budget exhausted ($code)" test "$code" = 5
check "run_end names the archive" \
	test "$(jget "$RUN/transcript.jsonl" 'x[-1]["type"]+":"+str(x[-1]["archive"] is not None)')" = run_end:True
size=$(stat -c %s "$RUN/workspace.tar.zst" 2>/dev/null || echo 0)
check "the archive holds the noise (${size} bytes)" \
	test "$size" -gt $((MB * 1000 * 1000))
check "... and not the input" test "$size" -lt $(((MB + 100) * 1048576))
check "the output was delivered whole" \
	test "$(stat -c %s "$T/out/noise.bin" 2>/dev/null)" = $((MB * 1048576))
check "no process left behind" test -z "$(leftovers)"
finish
