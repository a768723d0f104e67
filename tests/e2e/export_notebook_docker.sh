#!/usr/bin/env bash
# The demo's notebook and script executed in the docker sandbox image
# (which has jupyter-nbconvert and an ipykernel beside the python
# stack: scripts/sandbox-image/build-offline): nbconvert --execute
# runs its code cells in order in a container and writes the three
# outputs, anomalies.csv as the run wrote it; the exported script, given
# the input, does the same there in its workspace/.
source "$(dirname "$0")/lib.bash"
need_bwrap
need_docker_image
docker run --rm "$image" python3 -c 'import nbconvert, ipykernel' 2>/dev/null ||
	{ echo "FAIL the image $image lacks nbconvert or ipykernel: scripts/setup-docker start builds it again"; exit 1; }
cd "$T"
export PATH=/usr/bin:/bin:$PATH
"$ASSAY" demo --run-dir "$T/run" --out "$T/out" </dev/null 2>"$T/demo.err"
check "the demo ran" test -s "$T/run/workspace/output/anomalies.csv"
"$ASSAY" export "$T/run" --format ipynb -o "$T/nb.ipynb"
"$ASSAY" export "$T/run" --format script -o "$T/replay.py"
cat >"$T/exec.json" <<'EOF'
{"turns": [
  {"text": "Executing it.", "tool_calls": [{"name": "shell", "arguments": {"command": "jupyter nbconvert --to notebook --execute nb.ipynb --output executed.ipynb"}}]},
  {"text": "Done.", "tool_calls": []}]}
EOF
CSV=$SRC/sample-data/building_energy.csv
outs=(--output output/anomalies.csv --output output/energy_anomalies.png --output output/anomaly_report.md)
"$ASSAY" run --sandbox docker --provider script --script "$T/exec.json" --ask none \
	--input "$T/nb.ipynb:nb.ipynb" --input "$CSV:input/building_energy.csv" "${outs[@]}" --output executed.ipynb \
	--run-dir "$T/nbrun" --out "$T/nbout" "execute" 2>"$T/nbrun.err" || tail -20 "$T/nbrun.err"
check "jupyter nbconvert --execute in the docker sandbox: the three outputs" \
	test -s "$T/nbout/output/anomalies.csv" -a -s "$T/nbout/output/energy_anomalies.png" -a -s "$T/nbout/output/anomaly_report.md"
check "... anomalies.csv as the run wrote it" cmp "$T/nbout/output/anomalies.csv" "$T/run/workspace/output/anomalies.csv"
check "... every code cell ran, none raised" $PY -c '
import json, sys
nb = json.load(open(sys.argv[1]))
code = [c for c in nb["cells"] if c["cell_type"] == "code"]
assert code and all(c["execution_count"] for c in code), "a cell did not run"
assert not any(o["output_type"] == "error" for c in code for o in c["outputs"])' "$T/nbout/executed.ipynb"
cat >"$T/replay.json" <<'EOF'
{"turns": [
  {"text": "Replaying.", "tool_calls": [{"name": "shell", "arguments": {"command": "python3 replay.py input/building_energy.csv > /dev/null"}}]},
  {"text": "Done.", "tool_calls": []}]}
EOF
"$ASSAY" run --sandbox docker --provider script --script "$T/replay.json" --ask none \
	--input "$T/replay.py:replay.py" --input "$CSV:input/building_energy.csv" \
	--output workspace/output/anomalies.csv --run-dir "$T/pyrun" --out "$T/pyout" "replay" 2>"$T/pyrun.err" || tail -20 "$T/pyrun.err"
check "the script in the docker sandbox, given the input: the same anomalies.csv in its workspace/" \
	cmp "$T/pyout/workspace/output/anomalies.csv" "$T/run/workspace/output/anomalies.csv"
finish
