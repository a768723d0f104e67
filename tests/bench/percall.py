#!/usr/bin/env python3
"""Benchmark (issue 15, "Nothing on the loop"): what persisting the
docker workspace costs per call once the workspace is big.

One headless docker run (the scripted model): the first call writes MB
(500) MiB of text (base64 of random bytes: compressible as data is,
but not to nothing), then CALLS (8) calls each write a 10 KB file. The
first call's snapshot is the whole archive (nothing to go over yet);
each later one is a delta holding only its file; the run's end writes
the whole archive again, of the same workspace: the baseline, measured
in the same run, of what each call would cost if every snapshot were
whole (as before deltas). The times come from assay.log ("persist: ...
in N ms", "end: the workspace archived in N ms").

Printed: the whole archive's time and size (first call, end), the
deltas' median/min/max time and size, the ratio whole / delta, and the
run's wall time and peak RSS.

usage: percall.py [ASSAY_BIN] [--mb MB] [--calls N] [--sandbox docker|opensandbox]
       (docker, the default, needs a local Docker daemon and the
        assay-sandbox image: scripts/setup-docker; opensandbox runs
        through the fake server, tests/fakes/fake_opensandbox.py)
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import headless  # noqa: E402  (its timed(): wall and peak RSS)


def script(mb, calls):
    turns = [{"text": "Writing the big file.", "tool_calls": [
        {"name": "shell", "arguments": {"command":
            f"head -c {mb * 3 // 4}M /dev/urandom | base64 -w 100 "
            f"> big.txt && wc -c < big.txt"}}]}]
    for i in range(calls):
        turns.append({"text": f"Small file {i}.", "tool_calls": [
            {"name": "shell", "arguments": {"command":
                f"head -c 7500 /dev/urandom | base64 > small{i}.txt"}}]})
    turns.append({"text": "Done.", "tool_calls": []})
    return {"turns": turns}


def main():
    args = sys.argv[1:]
    opts = {"--mb": "500", "--calls": "8", "--sandbox": "docker"}
    for flag in opts:
        if flag in args:
            i = args.index(flag)
            opts[flag] = args[i + 1]
            del args[i:i + 2]
    mb, calls = int(opts["--mb"]), int(opts["--calls"])
    backend = opts["--sandbox"]
    assay = args[0] if args else os.path.join(headless.SRC, "build", "assay")
    headless.PEAK = os.path.join(os.path.dirname(assay), "assay-peak")
    tmp = tempfile.mkdtemp(prefix="assay-percall.")
    fake = None
    try:
        sj = os.path.join(tmp, "script.json")
        with open(sj, "w") as f:
            json.dump(script(mb, calls), f)
        run = os.path.join(tmp, "run")
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp,
               "XDG_CACHE_HOME": os.path.join(tmp, "cache")}
        if backend == "opensandbox":
            import oslatency  # noqa: E402  (its start_fake())
            fake, env["OPEN_SANDBOX_DOMAIN"] = oslatency.start_fake(tmp)
        argv = [assay, "run", "--sandbox", backend, "--provider", "script",
                "--script", sj, "--ask", "none", "--max-turns",
                str(calls + 2), "--run-dir", run, "big then small"]
        t, rss = headless.timed(argv, env=env, cwd=tmp)
        log = open(os.path.join(run, "assay.log")).read()
        whole = [(int(a), int(b)) for a, b in re.findall(
            r"persist: the whole archive in (\d+) ms \((\d+) bytes\)", log)]
        deltas = [(int(a), int(b)) for a, b in re.findall(
            r"persist: a delta in (\d+) ms \((\d+) bytes\)", log)]
        end = re.findall(r"end: the workspace archived in (\d+) ms", log)
        if len(whole) != 1 or len(deltas) != calls or len(end) != 1:
            print("unexpected snapshots (want 1 whole, %d deltas, 1 end):"
                  % calls)
            print("\n".join(line for line in log.splitlines()
                            if "persist" in line or "end:" in line))
            sys.exit(1)
        archive = [n for n in os.listdir(run) if n.startswith("workspace.tar")]
        size = os.path.getsize(os.path.join(run, archive[0]))
        dt = [d[0] for d in deltas]
        med = statistics.median(dt)
        print(f"{backend}; the first call writes {mb} MiB of text, then "
              f"{calls} calls write 10 KB each")
        print(f"whole archive, first call: {whole[0][0]} ms "
              f"({whole[0][1] / 1e6:.1f} MB)")
        print(f"whole archive, run's end (the baseline): {end[0]} ms "
              f"({size / 1e6:.1f} MB, {archive[0]})")
        print(f"per-call delta: median {med:.0f} ms (min {min(dt)}, max "
              f"{max(dt)}), {statistics.median(d[1] for d in deltas):.0f} "
              f"bytes")
        print(f"ratio whole / delta: {int(end[0]) / max(med, 1):.1f}x "
              f"(what each small call saves)")
        print(f"run: {calls + 1} calls, wall {t:.1f} s, peak RSS "
              f"{rss / 1024:.1f} MiB")
    finally:
        if fake:
            fake.terminate()
            fake.wait()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
