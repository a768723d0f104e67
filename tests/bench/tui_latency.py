#!/usr/bin/env python3
"""Benchmark: the real TUI in tmux while a command prints 200 MB.

One assay run (scripted model, local sandbox) in a private tmux server at
120x40. The keystroke-to-screen latency is the time from `send-keys x` to
the typed character showing in `capture-pane` of the input row, measured
through one tmux control-mode client (no process start per probe):

  idle   assay waiting for a message (before and after the busy part)
  busy   while a shell command prints 200 MB (lines with SGR colours and
         \\r progress updates) as fast as it can, ROUNDS times in a row

It prints p50/p90/p99/max of both, the frame rate the TUI logged
(ASSAY_TUI_STATS=1: frames per second, coalesced), and assay's peak
memory (VmHWM) after the run. Goals (issue 3): busy p99 < 50 ms, frames
<= ~60/s, peak < 64 MiB. It prints figures; it does not fail.

usage: tui_latency.py [ASSAY_BIN] [--rounds N] [--samples N]
"""
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
COLS, ROWS = 120, 40
INPUT_ROW = ROWS - 3  # the input box's first text row
STATUS_ROW = ROWS - 1

# 200 MB of output: numbered lines, every 10th in colour, and a \r
# progress line every 1000 lines (all through the sanitizer).
PRINT_200MB = r"""python3 - <<'PY'
import sys
w = sys.stdout.write
line = "%08d the quick brown fox jumps over the lazy dog 0123456789 abcdefghij\n"
red = "\033[31m%08d warning: something to look at, in colour\033[0m\n"
n = 0
total = 0
out = []
while total < 200 * 1000 * 1000:
    s = (red if n % 10 == 0 else line) % n
    if n % 1000 == 0:
        s = "\rprogress %3d%%" % (total * 100 // (200 * 1000 * 1000)) + "\n" + s
    out.append(s)
    total += len(s)
    n += 1
    if len(out) >= 2000:
        w("".join(out))
        out = []
w("".join(out))
PY"""


class Tmux:
    """One control-mode client: commands and their output, in order."""

    def __init__(self, base):
        self.p = subprocess.Popen(
            base + ["-C", "attach", "-t", "t"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self._block()  # the attach's own reply
        self.cmd("refresh-client -f no-output")

    def _block(self):
        out, inside = [], False
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("tmux control client went away")
            if line.startswith(b"%begin"):
                inside, out = True, []
            elif line.startswith((b"%end", b"%error")) and inside:
                return out
            elif inside:
                out.append(line.decode("utf-8", "replace").rstrip("\n"))

    def cmd(self, c):
        self.p.stdin.write((c + "\n").encode())
        return self._block()

    def row(self, r):
        lines = self.cmd("capture-pane -p -t t -S %d -E %d" % (r, r))
        return lines[0] if lines else ""

    def screen(self):
        return self.cmd("capture-pane -p -t t")

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=5)
        except Exception:
            self.p.kill()


def typed(row):
    m = re.search(r"> (x*)", row)
    return len(m.group(1)) if m else 0


def probe(tm, have, timeout=2.0):
    """Send one 'x' and wait for it on screen; seconds, or None."""
    t0 = time.perf_counter()
    tm.cmd("send-keys -t t x")
    while True:
        if typed(tm.row(INPUT_ROW)) >= have + 1:
            return time.perf_counter() - t0
        if time.perf_counter() - t0 > timeout:
            return None


def clear_input(tm):
    tm.cmd("send-keys -t t C-u")
    for _ in range(200):
        if typed(tm.row(INPUT_ROW)) == 0:
            return
        time.sleep(0.005)


def measure(tm, n, until=None):
    """n probes (or until until() says stop); latencies in ms."""
    lat, have = [], typed(tm.row(INPUT_ROW))
    while len(lat) < n:
        if until and until():
            break
        d = probe(tm, have)
        if d is None:
            print("  (a probe timed out)", file=sys.stderr)
            have = typed(tm.row(INPUT_ROW))
            continue
        lat.append(d * 1000)
        have += 1
        if have >= 60:
            clear_input(tm)
            have = 0
        time.sleep(random.uniform(0.01, 0.04))
    return lat


def pct(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def summary(name, v):
    return ("%-22s n=%3d  p50 %6.1f ms  p90 %6.1f ms  p99 %6.1f ms  "
            "max %6.1f ms" % (name, len(v), pct(v, 50), pct(v, 90),
                               pct(v, 99), max(v) if v else float("nan")))


def wait_screen(tm, pattern, timeout):
    end = time.time() + timeout
    rx = re.compile(pattern)
    while time.time() < end:
        if any(rx.search(l) for l in tm.screen()):
            return True
        time.sleep(0.05)
    return False


def main():
    args = sys.argv[1:]
    rounds, samples = 3, 150
    if "--rounds" in args:
        i = args.index("--rounds")
        rounds = int(args[i + 1])
        del args[i:i + 2]
    if "--samples" in args:
        i = args.index("--samples")
        samples = int(args[i + 1])
        del args[i:i + 2]
    assay = os.path.abspath(args[0] if args else
                            os.path.join(SRC, "build", "assay"))
    if not shutil.which("tmux"):
        sys.exit("tmux is not installed")
    tmp = tempfile.mkdtemp(prefix="assay-tui-bench.")
    run_dir = os.path.join(tmp, "run")
    turns = [{"text": "Ready.", "tool_calls": []}]
    for r in range(rounds):
        turns.append({"text": "Printing 200 MB (%d of %d)." % (r + 1, rounds),
                      "tool_calls": [{"name": "shell", "arguments": {
                          "command": PRINT_200MB, "timeout_s": 600}}]})
    turns.append({"text": "Done.", "tool_calls": []})
    script = os.path.join(tmp, "bench.json")
    json.dump({"turns": turns}, open(script, "w"))
    sock = "assay-bench-%d" % os.getpid()
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8",
               ASSAY_SCRIPT_DELAY_MS="0", ASSAY_TUI_STATS="1")
    conf = os.path.join(tmp, "tmux.conf")
    with open(conf, "w") as f:  # nothing from the user's configuration
        f.write("set -g default-terminal tmux-256color\n")
    base = ["tmux", "-L", sock, "-f", conf]
    subprocess.run(base + [
        "new-session", "-d", "-s", "t", "-x", str(COLS), "-y", str(ROWS),
        "cd %s && exec %s --provider script --script %s --run-dir %s "
        "--timeout 600 start" % (tmp, assay, script, run_dir)],
        env=env, check=True)
    # the control client below must not resize the window (tmux 3.3
    # fails to start with this in its configuration file)
    subprocess.run(base + ["set", "-g", "window-size", "manual"], check=True)
    tm = None
    try:
        tm = Tmux(base)
        if not wait_screen(tm, r"waiting for you", 30):
            sys.exit("the TUI did not come up:\n" + "\n".join(tm.screen()))
        pid = int(tm.cmd("display -p -t t '#{pane_pid}'")[0])
        idle = measure(tm, samples // 2)
        clear_input(tm)
        tm.cmd("send-keys -t t -l go")
        tm.cmd("send-keys -t t Enter")
        if not wait_screen(tm, r"running tools", 30):
            sys.exit("the command did not start")
        t_busy = time.time()

        def done():
            st = tm.row(STATUS_ROW)
            return "waiting for you" in st

        busy = measure(tm, 10 ** 6, until=done)
        busy_s = time.time() - t_busy
        wait_screen(tm, r"waiting for you", 600)
        clear_input(tm)
        idle += measure(tm, samples // 2)
        hwm = 0
        for l in open("/proc/%d/status" % pid):
            if l.startswith("VmHWM:"):
                hwm = int(l.split()[1])
        tm.cmd("send-keys -t t C-q")
        time.sleep(1)
    finally:
        if tm:
            tm.close()
        subprocess.run(base + ["kill-server"], stderr=subprocess.DEVNULL)
        sock_path = os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"),
                                 "tmux-%d" % os.getuid(), sock)
        if os.path.exists(sock_path):
            os.unlink(sock_path)
    fps = []
    for l in open(os.path.join(run_dir, "assay.log")):
        m = re.search(r"tui: frames (\d+) in (\d+) ms", l)
        if m and int(m.group(2)) > 0:
            fps.append(int(m.group(1)) * 1000 / int(m.group(2)))
    out = sum(os.path.getsize(os.path.join(run_dir, "exec", f))
              for f in os.listdir(os.path.join(run_dir, "exec"))
              if f.endswith(".stdout"))
    print("assay TUI in tmux %dx%d; %d command(s) printing 200 MB each "
          "(%.0f MB in all, %.1f s busy)" % (COLS, ROWS, rounds, out / 1e6,
                                             busy_s))
    print(summary("keystroke, idle", idle))
    print(summary("keystroke, 200 MB", busy))
    if idle and busy:
        print("%-22s p50 x%.2f  p99 x%.2f" % (
            "busy / idle", pct(busy, 50) / pct(idle, 50),
            pct(busy, 99) / pct(idle, 99)))
    if fps:
        print("%-22s max %.1f/s  median %.1f/s over %d seconds" % (
            "frames", max(fps), statistics.median(fps), len(fps)))
    print("%-22s %.1f MiB (VmHWM)" % ("assay peak memory", hwm / 1024))
    print("goals: busy p99 < 50 ms (%s), frames <= ~60/s (%s), "
          "peak < 64 MiB (%s)" % (
              "met" if busy and pct(busy, 99) < 50 else "NOT met",
              "met" if fps and max(fps) <= 62 else "NOT met",
              "met" if 0 < hwm < 64 * 1024 else "NOT met"))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
