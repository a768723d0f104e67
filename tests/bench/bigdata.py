#!/usr/bin/env python3
"""Benchmark (issue 15, must-show 1): the one-call headless run (the
scripted model, one `echo hi` in the local sandbox) with a 2 GB input
against the same run with no input, interleaved in the same process.

The input is mounted read-only, not copied, so the run with it should
cost about what the run without it costs. Its SHA-256 is taken once
per file (then cached by path, size, mtime and inode): the first run
that sees the file ("cold", an empty cache) reads all of it, the
others only stat it ("warm"). Both are printed. Printed: wall time
(median, min, max), run-dir disk use, peak RSS (assay and its
children), and the ratios. Goals: wall <= 1.5x, disk <= 1.2x, peak RSS
< 20 MiB.

With --sandbox docker (a local daemon, the image built) the same for the
docker backend, whose inputs are bound read-only into the container.
Goal there: wall <= 2x.

usage: bigdata.py [ASSAY_BIN] [-n RUNS] [--mb MB] [--sandbox local|docker]
       (assay-peak beside ASSAY_BIN)
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import headless  # noqa: E402  (its timed(): wall and peak RSS)


def du_kib(path):
    """Disk blocks in use under path, KiB (what the run dir costs)."""
    total = 0
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            try:
                total += os.lstat(os.path.join(root, n)).st_blocks // 2
            except OSError:
                pass
    return total


def make_input(path, mb):
    """mb MiB of random bytes (gzip cannot shrink them, a sparse file
    would cost no disk), written once."""
    chunk = 16 << 20
    with open(path, "wb") as f:
        left = mb << 20
        while left:
            n = min(chunk, left)
            f.write(os.urandom(n))
            left -= n
    # older than the cache's "just written" window, as a staged file is
    old = os.stat(path).st_mtime - 3600
    os.utime(path, (old, old))


def main():
    args = sys.argv[1:]
    opts = {"-n": "7", "--mb": "2048", "--sandbox": "local"}
    for flag in opts:
        if flag in args:
            i = args.index(flag)
            opts[flag] = args[i + 1]
            del args[i:i + 2]
    runs, mb, sandbox = int(opts["-n"]), int(opts["--mb"]), opts["--sandbox"]
    goal = 2.0 if sandbox == "docker" else 1.5
    assay = args[0] if args else os.path.join(headless.SRC, "build", "assay")
    headless.PEAK = os.path.join(os.path.dirname(assay), "assay-peak")
    tmp = tempfile.mkdtemp(prefix="assay-bigdata.")
    try:
        big = os.path.join(tmp, "big.bin")
        make_input(big, mb)
        cache = os.path.join(tmp, "cache")
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp,
               "XDG_CACHE_HOME": cache}

        def one(name, inputs):
            run_dir = os.path.join(tmp, name)
            argv = [assay, "run", "--sandbox", sandbox, "--provider",
                    "script", "--script",
                    os.path.join(HERE, "echo.json"), "--ask", "none",
                    "--run-dir", run_dir, "--out", os.path.join(tmp, "out")]
            for i in inputs:
                argv += ["--input", i]
            t, rss = headless.timed(argv + ["say hi"], env=env, cwd=tmp)
            disk = du_kib(run_dir)
            shutil.rmtree(run_dir)
            return t, rss, disk

        one("warmup", [])  # the sandbox's caches (python env, /etc)
        cold = one("cold", [big])  # an empty hash cache: 2 GB read
        none, withi = [], []
        for i in range(runs):
            none.append(one("none%d" % i, []))
            withi.append(one("with%d" % i, [big]))

        def med(v, k):
            return statistics.median(x[k] for x in v)

        def line(label, v):
            ts = [x[0] * 1000 for x in v]
            print(f"{label}: wall median {statistics.median(ts):.1f} ms "
                  f"(min {min(ts):.1f}, max {max(ts):.1f}), run dir "
                  f"{med(v, 2):.0f} KiB, peak RSS "
                  f"{max(x[1] for x in v) / 1024:.1f} MiB")

        print(f"sandbox {sandbox}; runs: {runs} of each, interleaved (after "
              f"1 warm-up and 1 cold)")
        print(f"input: {mb} MiB of random bytes, mounted read-only")
        line("no input        ", none)
        line(f"{mb} MiB, cached", withi)
        line(f"{mb} MiB, cold  ", [cold])
        wr = sorted(w[0] / n[0] for w, n in zip(withi, none))
        print(f"ratio wall (cached): median {statistics.median(wr):.2f}x "
              f"(min {wr[0]:.2f}, max {wr[-1]:.2f}; goal <= {goal}x)")
        print(f"ratio wall (cold, the first run that sees the file): "
              f"{cold[0] / med(none, 0):.2f}x")
        print(f"ratio run-dir disk: {med(withi, 2) / med(none, 2):.2f}x "
              f"(goal <= 1.2x)")
        peak = max(x[1] for x in withi + [cold]) / 1024
        print(f"peak RSS with the input: {peak:.1f} MiB (goal < 20 MiB)")
    finally:
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
