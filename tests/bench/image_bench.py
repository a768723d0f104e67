#!/usr/bin/python3
"""Time sixel encoders on one PNG, interleaved, in the same run.
usage: image_bench.py PNG RUNS NAME=COMMAND...   (COMMAND run by sh -c;
it may read the PNG on stdin). Prints per command the median and
min wall time, median CPU time (user+sys of the child), output bytes,
the sixel raster size, and the ratio of each median to the first one."""
import os
import re
import resource
import statistics
import subprocess
import sys
import time

png, runs = sys.argv[1], int(sys.argv[2])
cmds = [a.split("=", 1) for a in sys.argv[3:]]
wall = {n: [] for n, _ in cmds}
cpu = {n: [] for n, _ in cmds}
size, raster = {}, {}
for i in range(runs + 1):  # run 0 warms the page cache, not counted
    for name, cmd in cmds:
        with open(png, "rb") as f:
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            p = subprocess.run(["sh", "-c", "exec " + cmd], stdin=f,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            t1 = time.perf_counter()
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            sys.exit("%s failed (%d): %s" % (name, p.returncode, p.stderr[:300]))
        if i == 0:
            size[name] = len(p.stdout)
            m = re.search(rb'"1;1;(\d+);(\d+)', p.stdout)
            raster[name] = "%sx%s" % (m.group(1).decode(), m.group(2).decode()) if m else "?"
            continue
        wall[name].append((t1 - t0) * 1000)
        cpu[name].append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000)
base = statistics.median(wall[cmds[0][0]])
print("%-22s %9s %9s %9s %10s %9s %7s" % ("encoder", "median ms", "min ms",
      "cpu ms", "bytes", "pixels", "ratio"))
for name, _ in cmds:
    med = statistics.median(wall[name])
    print("%-22s %9.1f %9.1f %9.1f %10d %9s %6.2fx" % (
        name, med, min(wall[name]), statistics.median(cpu[name]),
        size[name], raster[name], med / base))
print("(ratio: median wall time / the first encoder's; %d runs each, interleaved; nproc=%d)"
      % (runs, os.cpu_count()))
