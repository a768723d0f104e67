#!/usr/bin/env python3
"""Benchmark (issue 16): what a command costs on the opensandbox backend,
through the fake OpenSandbox server (tests/fakes/fake_opensandbox.py),
against the local backend (and the docker one when a daemon is up),
measured in the same run.

One headless run per backend (the scripted model): CALLS (20) shell
calls `echo N`, then as many python cells. From the transcript: each
command's time from exec_start to exec_end (what the sandbox costs a
command), and each call's time from tool_call to tool_result (that plus
what the backend does after a call: the workspace snapshot). Printed:
median and p90 per backend, the ratio to local, and the run's sandbox
start time. The fake runs each command in a fresh bubblewrap and tails
its output every 100 ms, as execd tails its files: a real server adds
its network round trips on top (one POST /command per command, one
download per snapshot).

Then the goal of issue 41: the python call on the fake against the
docker backend's, same run, as a ratio (goal <= 2x; "SKIPPED" for the
docker half without a Docker daemon), and what a python call costs in
requests to execd: two more runs on fakes of their own that log every
request, one with a single cell and one with N+1, the difference
divided by N (the cells change no file, so no delta is made).

usage: oslatency.py [ASSAY_BIN] [--calls N]
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
FAKE = os.path.join(SRC, "tests", "fakes", "fake_opensandbox.py")
PY = "/usr/bin/python3"


def script(calls):
    turns = []
    for i in range(calls):
        turns.append({"text": f"Call {i}.", "tool_calls": [
            {"name": "shell", "arguments": {"command": f"echo {i}"}}]})
    for i in range(calls):
        turns.append({"text": f"Cell {i}.", "tool_calls": [
            {"name": "python", "arguments": {"code": f"{i} * 2"}}]})
    turns.append({"text": "Done.", "tool_calls": []})
    return {"turns": turns}


def start_fake(tmp, name="os", log=None):
    pf = os.path.join(tmp, name + ".port")
    root = os.path.join(tmp, name + "_root")
    os.makedirs(root)
    argv = [PY, FAKE, "--port-file", pf, "--root", root]
    if log:
        argv += ["--log", log]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        if os.path.exists(pf) and open(pf).read().strip():
            break
        time.sleep(0.05)
    else:
        p.kill()
        p.wait()
        sys.exit("the fake OpenSandbox server did not start (no port in 10 s)")
    return p, "127.0.0.1:" + open(pf).read().strip()


def docker_up():
    try:
        return subprocess.run(["docker", "info"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run(assay, backend, tmp, scr, env, name=None):
    rd = os.path.join(tmp, "run-" + (name or backend))
    t0 = time.monotonic()
    r = subprocess.run([assay, "run", "--sandbox", backend, "--provider", "script",
                        "--script", scr, "--ask", "none", "--run-dir", rd, "bench"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tmp)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        sys.exit(f"{backend}: assay exited {r.returncode}: {r.stderr.decode()[-500:]}")
    ev = [json.loads(line) for line in open(os.path.join(rd, "transcript.jsonl"))]
    starts, calls, execs = {}, {}, []
    for e in ev:
        if e["type"] == "exec_start":
            starts[e["id"]] = e["t"]
        elif e["type"] == "exec_end" and e["id"] in starts:
            execs.append(e["t"] - starts[e["id"]])
        elif e["type"] == "tool_call":
            calls[e["id"]] = (e["t"], e.get("name"))
    shell_calls = [e["t"] - calls[e["id"]][0] for e in ev
                   if e["type"] == "tool_result" and e["id"] in calls
                   and calls[e["id"]][1] == "shell"]
    cells = [e["t"] - calls[e["id"]][0] for e in ev
             if e["type"] == "tool_result" and e["id"] in calls
             and calls[e["id"]][1] == "python"]
    up = None
    for line in open(os.path.join(rd, "assay.log")):
        if "sandbox: " in line and " up in " in line:
            up = int(line.rsplit(" up in ", 1)[1].split()[0])
    return {"exec": execs, "shell": shell_calls, "python": cells, "wall": wall, "up": up}


def cells_script(n):
    turns = [{"text": f"Cell {i}.", "tool_calls": [
        {"name": "python", "arguments": {"code": f"{i} * 2"}}]} for i in range(n)]
    turns.append({"text": "Done.", "tool_calls": []})
    return {"turns": turns}


def settled(log):
    """The fake logs a request when its handler returns (a command's stream
    stays open a second after its end): wait until the log has not grown
    for 2 s."""
    n, still = -1, 0
    for _ in range(120):
        m = sum(1 for _ in open(log)) if os.path.exists(log) else 0
        still = still + 1 if m == n else 0
        if still >= 4:
            break
        n = m
        time.sleep(0.5)
    return [json.loads(line) for line in open(log)]


def requests_per_cell(assay, tmp, env, calls):
    """execd requests (and POST /command among them) a python call costs:
    a run with calls+1 cells minus one with a single cell, over calls. The
    kernel's DELETE /command at the end is left out (it is the run's, and
    may be answered after the sandbox is gone)."""
    counts = []
    for n in (1, calls + 1):
        name = f"count{n}"
        log = os.path.join(tmp, name + ".log")
        fake, url = start_fake(tmp, name, log)
        try:
            scr = os.path.join(tmp, name + ".json")
            json.dump(cells_script(n), open(scr, "w"))
            run(assay, "opensandbox", tmp, scr, dict(env, OPEN_SANDBOX_DOMAIN=url), name)
            ev = [e for e in settled(log) if e.get("api") == "execd" and not
                  (e["method"] == "DELETE" and e["path"].split("?")[0].endswith("/command"))]
        finally:
            fake.terminate()
            fake.wait()
        counts.append((sum(1 for e in ev if e["method"] == "POST"
                           and e["path"].endswith("/command")), len(ev)))
    return [(b - a) / calls for a, b in zip(counts[0], counts[1])]


def p90(v):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * 0.9))]


def main():
    args = sys.argv[1:]
    calls = 20
    if "--calls" in args:
        i = args.index("--calls")
        calls = int(args[i + 1])
        del args[i:i + 2]
    assay = os.path.abspath(args[0]) if args else os.path.join(SRC, "build", "assay")
    tmp = tempfile.mkdtemp(prefix="assay-oslatency.")
    fake = None
    try:
        scr = os.path.join(tmp, "script.json")
        json.dump(script(calls), open(scr, "w"))
        fake, url = start_fake(tmp)
        env = dict(os.environ, OPEN_SANDBOX_DOMAIN=url, XDG_STATE_HOME=os.path.join(tmp, "state"))
        backends = ["local"] + (["docker"] if docker_up() else []) + ["opensandbox"]
        if "docker" not in backends:
            print("SKIPPED the docker column: no Docker daemon (scripts/setup-docker start)")
        res = {b: run(assay, b, tmp, scr, env) for b in backends}
        base = {k: statistics.median(res["local"][k]) for k in ("exec", "shell", "python")}
        print(f"per-command latency, {calls} shell commands and {calls} python cells a backend "
              "(ms; median / p90; ratio of the median to local's)")
        print(f"{'backend':12} {'sandbox up':>10} {'command':>16} {'shell call':>16} "
              f"{'python call':>16} {'wall s':>7}")
        for b in backends:
            r = res[b]
            cols = []
            for k in ("exec", "shell", "python"):
                med = statistics.median(r[k])
                # local's python call can take under a millisecond: no ratio
                ratio = f"{med / base[k]:4.1f}x" if base[k] >= 1 else "    -"
                cols.append(f"{med:5.0f}/{p90(r[k]):4.0f} {ratio}")
            print(f"{b:12} {str(r['up']) + ' ms':>10} {cols[0]:>16} {cols[1]:>16} "
                  f"{cols[2]:>16} {r['wall']:7.1f}")
        osb = statistics.median(res["opensandbox"]["python"])
        if "docker" in res:
            dk = statistics.median(res["docker"]["python"])
            ratio = osb / dk if dk else float("inf")
            print(f"python call, opensandbox (fake) against docker, same run: {osb:.0f} ms / "
                  f"{dk:.0f} ms = {ratio:.2f}x (goal <= 2x: {'met' if ratio <= 2 else 'NOT met'})")
        else:
            print(f"python call, opensandbox (fake): {osb:.0f} ms; against docker: SKIPPED "
                  "(no Docker daemon)")
        cmds, reqs = requests_per_cell(assay, tmp, env, calls)
        print(f"a python call on the fake: {reqs:.2f} execd requests, {cmds:.2f} of them "
              "POST /command (a cell that changes no file)")
    finally:
        if fake:
            fake.terminate()
            fake.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
