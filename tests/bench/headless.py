#!/usr/bin/env python3
"""Benchmark: a headless one-tool-call run (two model turns through the
fake OpenAI server over HTTP, one `echo hi` in the local sandbox) against
a bare `bwrap ... true` measured in the same run, interleaved.

Prints medians, the ratio, and assay's peak RSS. Goals (issue 2): at most
6x the bare bubblewrap start and under 12 MiB peak memory.

usage: headless.py [ASSAY_BIN] [-n RUNS]  (assay-peak must sit beside it)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))


PEAK = None  # the assay-peak launcher (tests/bench/peak.c)


def timed(argv, env=None, cwd=None):
    """Wall seconds and peak RSS (KiB) of one process (the largest of it
    and its children), measured by assay-peak: a fork of this Python
    would carry Python's own size into the figure."""
    out = os.path.join(tempfile.gettempdir(), "assay-peak.%d" % os.getpid())
    p = subprocess.run([PEAK, "-o", out] + argv, env=env, cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ms, rss, code = open(out).read().split()
    os.unlink(out)
    if int(code) != 0:
        err = p.stderr.decode(errors="replace")
        sys.exit(f"{argv[0]} failed ({code}): {err[-2000:]}")
    return float(ms) / 1000, int(rss)


def main():
    args = sys.argv[1:]
    runs = 15
    if "-n" in args:
        i = args.index("-n")
        runs = int(args[i + 1])
        del args[i:i + 2]
    assay = args[0] if args else os.path.join(SRC, "build", "assay")
    global PEAK
    PEAK = os.path.join(os.path.dirname(assay), "assay-peak")
    tmp = tempfile.mkdtemp(prefix="assay-bench.")
    port_file = os.path.join(tmp, "port")
    fake = subprocess.Popen(
        ["/usr/bin/python3", os.path.join(SRC, "tests/fakes/fake_openai.py"),
         "--script", os.path.join(HERE, "echo.json"), "--port", "0",
         "--port-file", port_file, "--delay-ms", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.05)
        url = "http://127.0.0.1:%s/v1" % open(port_file).read().strip()
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "OPENAI_API_KEY": "sk-bench"}
        bare = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
                "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib",
                "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
                "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                "--clearenv", "true"]
        a_t, a_rss, b_t = [], [], []
        for i in range(runs + 1):
            run_dir = os.path.join(tmp, "run%d" % i)
            t, rss = timed([assay, "run", "--base-url", url, "--model", "m",
                            "--run-dir", run_dir, "--out", os.path.join(tmp, "out"),
                            "say hi"], env=env, cwd=tmp)
            bt, _ = timed(bare)
            if i == 0:
                continue  # warm-up
            a_t.append(t)
            a_rss.append(rss)
            b_t.append(bt)
        ev = [json.loads(l) for l in open(os.path.join(tmp, "run1", "transcript.jsonl"))]
        turns = sum(1 for e in ev if e["type"] == "model_request")
        execs = sum(1 for e in ev if e["type"] == "exec_end")
        assert turns == 2 and execs == 1, (turns, execs)
        ma, mb = statistics.median(a_t), statistics.median(b_t)
        ratios = sorted(a / b for a, b in zip(a_t, b_t))
        peak = max(a_rss) / 1024
        print(f"runs: {runs} (after 1 warm-up), interleaved")
        print(f"assay run (2 turns, 1 echo): median {ma*1000:.1f} ms "
              f"(min {min(a_t)*1000:.1f}, max {max(a_t)*1000:.1f})")
        print(f"bare bwrap true:            median {mb*1000:.1f} ms "
              f"(min {min(b_t)*1000:.1f}, max {max(b_t)*1000:.1f})")
        print(f"ratio assay/bwrap: median {statistics.median(ratios):.2f}x "
              f"(goal <= 6x)")
        print(f"assay peak RSS: {peak:.1f} MiB (median "
              f"{statistics.median(a_rss)/1024:.1f}; goal < 12 MiB)")
    finally:
        fake.kill()
        fake.wait()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
