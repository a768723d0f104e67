#!/usr/bin/env python3
"""Benchmark (issue 17): assay eval's throughput. SESSIONS (32) short
tasks (a shell call, then the answer: two model turns) against the fake
OpenAI server with a fixed LATENCY (200) ms before each answer, run with
-j 1 and then -j 8, each in one assay process (local sandboxes). Printed:
the wall time of each, the ratio (goal: -j 8 at least 5x faster on this
2-core machine) and the eval process's peak RSS (goal: under 64 MiB
with 8 sessions at once).

usage: eval_throughput.py [ASSAY_BIN] [--sessions N] [--latency MS]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import headless  # noqa: E402  (its timed(): wall and peak RSS)

FAKE = os.path.join(headless.SRC, "tests", "fakes", "fake_openai.py")


def main():
    args = sys.argv[1:]
    opts = {"--sessions": "32", "--latency": "200"}
    for flag in opts:
        if flag in args:
            i = args.index(flag)
            opts[flag] = args[i + 1]
            del args[i:i + 2]
    n, latency = int(opts["--sessions"]), float(opts["--latency"])
    assay = os.path.abspath(args[0]) if args else os.path.join(headless.SRC, "build", "assay")
    headless.PEAK = os.path.join(os.path.dirname(assay), "assay-peak")
    tmp = tempfile.mkdtemp(prefix="assay-evalbench.")
    fake = None
    try:
        script = os.path.join(tmp, "script.json")
        json.dump({"turns": [
            {"text": "Looking.", "tool_calls": [
                {"name": "shell", "arguments": {"command": "echo 42"}}]},
            {"text": "The answer is 42.", "tool_calls": []}]}, open(script, "w"))
        pf = os.path.join(tmp, "port")
        fake = subprocess.Popen(
            ["/usr/bin/python3", FAKE, "--script", script, "--port-file", pf,
             "--latency-ms", str(latency), "--delay-ms", "0"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if os.path.exists(pf) and open(pf).read().strip():
                break
            time.sleep(0.05)
        url = "http://127.0.0.1:%s/v1" % open(pf).read().strip()
        suite = os.path.join(tmp, "suite.json")
        json.dump({"defaults": {"provider": "openai", "base_url": url,
                                "model": "fake-model", "ask": "none"},
                   "tasks": [{"name": "t%02d" % i, "prompt": "What is the answer?",
                              "check": {"answer_contains": ["42"]}}
                             for i in range(n)]}, open(suite, "w"))
        env = dict(os.environ, OPENAI_API_KEY="sk-bench",
                   XDG_STATE_HOME=os.path.join(tmp, "state"),
                   XDG_CONFIG_HOME=os.path.join(tmp, "config"))
        res = {}
        for j in (1, 8):
            d = os.path.join(tmp, "eval-j%d" % j)
            t, rss = headless.timed([assay, "eval", suite, "-j", str(j), "--dir", d],
                                    env=env, cwd=tmp)
            lines = [json.loads(x) for x in open(os.path.join(d, "results.jsonl"))]
            passed = sum(1 for r in lines if r["pass"])
            if passed != n:
                sys.exit(f"-j {j}: {passed} of {n} sessions passed")
            res[j] = (t, rss)
        print(f"assay eval: {n} sessions of two turns each, the model answering after "
              f"{latency:.0f} ms")
        for j in (1, 8):
            t, rss = res[j]
            print(f"  -j {j}: {t:6.2f} s wall, {t / n * 1000:5.0f} ms a session, peak RSS "
                  f"{rss / 1024:5.1f} MiB")
        print(f"  -j 8 is {res[1][0] / res[8][0]:.1f}x faster than -j 1 (goal: 5x); "
              f"peak RSS with 8 at once {res[8][1] / 1024:.1f} MiB (goal: under 64)")
    finally:
        if fake:
            fake.terminate()
            fake.wait()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
