#!/usr/bin/env bash
# Benchmark: assay resume --re-execute of a run whose transcript has a
# damaged turn number (2000000000: it once spun for minutes before
# refusing), against a plain resume of the same run undamaged (zero
# requests, everything from the cache), measured in the same run,
# interleaved, each on a fresh copy. The figure tests/e2e/resume_damaged.sh
# used to assert ("well under a minute"): the refusal should cost about
# what a plain resume costs, a ratio near 1, far from the minutes it was.
#   tests/bench/resume_damaged.sh [BUILD_DIR] [-n RUNS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
shift || true
runs=15
[ "${1:-}" = -n ] && runs=$2
assay=$build/assay
[ -x "$assay" ] || { echo "no $assay: build first" >&2; exit 1; }
py=/usr/bin/python3
t=$(mktemp -d /tmp/assay-resbench.XXXXXX)
fake_pid=
trap '[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null; rm -rf "$t"' EXIT
cat >"$t/script.json" <<'JSON'
{"turns": [
 {"text": "Writing.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo one > one.txt"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
$py "$src/tests/fakes/fake_openai.py" --script "$t/script.json" --port 0 --port-file "$t/port" \
	--key sk-bench --log "$t/fake.log" >"$t/fake.out" 2>&1 &
fake_pid=$!
for _ in $(seq 200); do [ -s "$t/port" ] && break; sleep 0.05; done
[ -s "$t/port" ] || { cat "$t/fake.out" >&2; echo "the fake server did not start" >&2; exit 1; }
url=http://127.0.0.1:$(cat "$t/port")/v1
export OPENAI_API_KEY=sk-bench XDG_CONFIG_HOME=$t/xdg
unset OPENAI_BASE_URL
"$assay" run --provider openai --base-url "$url" --model fake-model --ask none \
	--run-dir "$t/run" --out "$t/out" "write one" 2>"$t/run.err" ||
	{ cat "$t/run.err" >&2; exit 1; }
cp -a "$t/run" "$t/turn"
$py - "$t/turn/transcript.jsonl" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
ev[[i for i, e in enumerate(ev) if e["type"] == "model_request"][1]]["turn"] = 2000000000
open(sys.argv[1], "w").write("".join(json.dumps(e) + "\n" for e in ev))
PY
$py - "$assay" "$url" "$t" "$runs" <<'PY'
import os, shutil, statistics, subprocess, sys, time
assay, url, t, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
cases = [  # name, run dir to copy, extra options, expected exit
    ("plain resume", "run", [], 0),
    ("damaged --re-execute", "turn", ["--re-execute"], 2),
]
wall = {c[0]: [] for c in cases}
for i in range(runs + 1):  # run 0 warms the caches, not counted
    for name, d, opts, want in cases:
        w = os.path.join(t, "w")
        shutil.rmtree(w, ignore_errors=True)
        for extra in [p for p in os.listdir(t) if p.startswith("w-re")]:
            shutil.rmtree(os.path.join(t, extra))
        shutil.copytree(os.path.join(t, d), w, symlinks=True)
        t0 = time.perf_counter()
        p = subprocess.run([assay, "resume", w, "--base-url", url, "--out", os.path.join(t, "o")] + opts,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        t1 = time.perf_counter()
        if p.returncode != want:
            sys.exit("%s: exit %d, expected %d: %s" % (name, p.returncode, want, p.stderr[-500:]))
        if i:
            wall[name].append((t1 - t0) * 1000)
base = statistics.median(wall[cases[0][0]])
print("%-22s %9s %9s %7s" % ("case", "median ms", "min ms", "ratio"))
for name, *_ in cases:
    med = statistics.median(wall[name])
    print("%-22s %9.1f %9.1f %6.2fx" % (name, med, min(wall[name]), med / base))
print("(ratio: median wall time / the plain resume's; %d runs each, interleaved; nproc=%d)"
      % (runs, os.cpu_count()))
PY
