#!/usr/bin/env bash
# assay export --format ipynb|script: the demo's run as a Jupyter
# notebook that validates against the nbformat 4.5 schema
# (data/nbformat.v4.5.schema.json, from nbformat), carries the chart as
# an image/png output and, executed by nbconvert in the local sandbox,
# writes the three outputs again; and as one Python script that, run in
# a fresh sandbox with the input, writes the same anomalies.csv. A run
# with dead ends (a cell that raised, a denied call, a command that
# failed) keeps them in the notebook (the error with its traceback) and
# leaves them out of the script, named at its top; the model's prose
# cannot put code into the script. Skipped (77) without bubblewrap or
# the sandbox's python libraries (nbconvert, ipykernel, jsonschema).
source "$(dirname "$0")/lib.bash"
need_bwrap
$PY -c 'import pandas, matplotlib, jsonschema, nbconvert, ipykernel' 2>/dev/null ||
	skip "/usr/bin/python3 lacks pandas, matplotlib, jsonschema, nbconvert or ipykernel (scripts/setup installs them)"
cd "$T"
export PATH=/usr/bin:/bin:$PATH # the sandbox's python3 is Debian's
"$ASSAY" demo --run-dir "$T/run" --out "$T/out" </dev/null 2>"$T/demo.err"
check "the demo ran" test -s "$T/run/workspace/output/anomalies.csv"
"$ASSAY" export "$T/run" --format ipynb -o "$T/nb.ipynb"
check "the notebook validates against the nbformat 4.5 schema" $PY -c '
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.validate(json.load(open(sys.argv[2])), schema)' "$SRC/tests/e2e/data/nbformat.v4.5.schema.json" "$T/nb.ipynb"
jq_nb() { $PY -c "import json,sys; nb=json.load(open('$T/nb.ipynb')); $1"; }
check "... the user's prompt and the model's messages as markdown" \
	jq_nb "assert any('Find the unusual energy-use' in ''.join(c['source']) for c in nb['cells'] if c['cell_type']=='markdown')"
check "... each python call a code cell with its stdout" \
	jq_nb "assert any(''.join(c['source']).startswith('import pandas as pd') and any(o['output_type']=='stream' and '(8784, 3)' in ''.join(o['text']) for o in c['outputs']) for c in nb['cells'])"
check "... its trailing value an execute_result (not in its stdout)" \
	jq_nb "c=[c for c in nb['cells'] if ''.join(c['source']).startswith('import pandas')][0]; r=[o for o in c['outputs'] if o['output_type']=='execute_result']; assert r and 'dtype: object' in ''.join(r[0]['data']['text/plain']); assert not any('dtype: object' in ''.join(o['text']) for o in c['outputs'] if o['output_type']=='stream')"
check "... the shell call a %%bash cell" \
	jq_nb "assert any(''.join(c['source'])=='%%bash\npython3 analysis/detect_anomalies.py' for c in nb['cells'])"
check "... write_file a %%writefile cell" \
	jq_nb "assert any(''.join(c['source']).startswith('%%writefile analysis/detect_anomalies.py') for c in nb['cells'])"
check "... the chart: the run's PNG, as an image/png output" $PY -c '
import base64, json, sys
nb = json.load(open(sys.argv[1]))
# the workspace PNG (a copy sent to the model says so in text/plain)
png = [o["data"]["image/png"] for c in nb["cells"] if c["cell_type"] == "code"
       for o in c["outputs"] if o["output_type"] == "display_data"
       and "sent to the model" not in o["data"].get("text/plain", "")]
assert len(png) == 1 and base64.b64decode(png[0]) == open(sys.argv[2], "rb").read()' "$T/nb.ipynb" "$T/run/workspace/output/energy_anomalies.png"
# the notebook's code cells in order, in the sandbox, by Jupyter itself
cat >"$T/exec.json" <<'EOF'
{"turns": [
  {"text": "Executing it.", "tool_calls": [{"name": "shell", "arguments": {"command": "python3 -m nbconvert --to notebook --execute nb.ipynb --output executed.ipynb"}}]},
  {"text": "Done.", "tool_calls": []}]}
EOF
CSV=$SRC/sample-data/building_energy.csv
"$ASSAY" run --provider script --script "$T/exec.json" --ask none --input "$T/nb.ipynb:nb.ipynb" \
	--input "$CSV:input/building_energy.csv" --output output/anomalies.csv \
	--output output/energy_anomalies.png --output output/anomaly_report.md \
	--run-dir "$T/nbrun" --out "$T/nbout" "execute" 2>"$T/nbrun.err" || cat "$T/nbrun.err"
check "executed by nbconvert in the sandbox: the three outputs" \
	test -s "$T/nbout/output/anomalies.csv" -a -s "$T/nbout/output/energy_anomalies.png" -a -s "$T/nbout/output/anomaly_report.md"
check "... anomalies.csv as the run wrote it" cmp "$T/nbout/output/anomalies.csv" "$T/run/workspace/output/anomalies.csv"

"$ASSAY" export "$T/run" --format script -o "$T/replay.py"
check "the script compiles" $PY -m py_compile "$T/replay.py"
cat >"$T/replay.json" <<'EOF'
{"turns": [
  {"text": "Replaying.", "tool_calls": [{"name": "shell", "arguments": {"command": "python3 replay.py input/building_energy.csv > /dev/null"}}]},
  {"text": "Done.", "tool_calls": []}]}
EOF
"$ASSAY" run --provider script --script "$T/replay.json" --ask none --input "$T/replay.py:replay.py" \
	--input "$CSV:input/building_energy.csv" --output workspace/output/anomalies.csv \
	--run-dir "$T/pyrun" --out "$T/pyout" "replay" 2>"$T/pyrun.err" || cat "$T/pyrun.err"
check "the script, run in a fresh sandbox given the input, writes the same anomalies.csv in its workspace/" \
	cmp "$T/pyout/workspace/output/anomalies.csv" "$T/run/workspace/output/anomalies.csv"

# dead ends
"$ASSAY" run --provider script --script "$SRC/tests/e2e/data/notebook_deadends.json" --ask risky \
	--run-dir "$T/dead" "go" </dev/null 2>"$T/dead.err" || true
"$ASSAY" export "$T/dead" --format ipynb -o "$T/dead.ipynb"
"$ASSAY" export "$T/dead" --format script -o "$T/dead.py"
jq_dead() { $PY -c "import json,sys; nb=json.load(open('$T/dead.ipynb')); code=[c for c in nb['cells'] if c['cell_type']=='code']; $1"; }
check "a cell that raised keeps its error and traceback in the notebook" \
	jq_dead "e=[o for c in code for o in c['outputs'] if o['output_type']=='error']; assert e and e[0]['ename']=='ZeroDivisionError' and any('1/0' in l for l in e[0]['traceback'])"
check "... its value apart from its print" \
	jq_dead "c=[c for c in code if ''.join(c['source']).startswith('y = 41')][0]; assert [''.join(o['text']) for o in c['outputs'] if o['output_type']=='stream']==['y is 42\n']; assert [''.join(o['data']['text/plain']) for o in c['outputs'] if o['output_type']=='execute_result']==['42']"
check "... the denied call says so" jq_dead "assert any('was denied' in ''.join(c['source']) for c in nb['cells'])"
check "... a path IPython would expand is written by Python, not %%writefile" \
	jq_dead "assert not any('we{ird}' in ''.join(c['source']).split(chr(10))[0] and ''.join(c['source']).startswith('%%') for c in code)"
check "the script names its dead ends" sh -c "grep -q 'call_0_0 (python): it failed in the run (raised ZeroDivisionError' '$T/dead.py' && grep -q 'call_2_0 (shell): denied' '$T/dead.py' && grep -q 'call_4_0 (shell): it failed in the run (exit code 3)' '$T/dead.py'"
check "... and leaves them out: their code only in comments" sh -c "! grep -v '^#' '$T/dead.py' | grep -q '1/0\|exit 3\|rm -f stale'"
mkdir "$T/fresh" && cp "$T/dead.py" "$T/fresh/" && (cd "$T" && $PY "$T/fresh/dead.py" >/dev/null)
check "... it runs, in workspace/ beside itself: what the cells that worked wrote" sh -c "test \"\$(cat '$T/fresh/workspace/output/done.txt')\" = 42 && test -s '$T/fresh/workspace/notes/we{ird} \$x.txt' && test -s '$T/fresh/workspace/plain/note.txt'"
check "... the model's prose stayed a comment (a \\r cannot start a line of code)" sh -c "test ! -e '$T/fresh/workspace/PWNED' && test ! -e '$T/PWNED'"
"$ASSAY" export "$T/dead" --format docx 2>"$T/bad.err" && rc=0 || rc=$?
check "an unknown format: usage error (2) naming the formats" sh -c "test $rc = 2 && grep -q 'md, html, ipynb or script' '$T/bad.err'"
finish
