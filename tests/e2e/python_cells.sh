#!/usr/bin/env bash
# The python tool through the openai provider and the fake server over
# real HTTP, in the real sandbox: a cell loads a CSV into a DataFrame and
# the next uses it; an exception comes back with its traceback and the
# state survives; an endless loop is interrupted at timeout_s and the
# next cell still sees earlier variables; a plot saved in a cell is
# delivered as a declared output and one left open is mentioned; a huge
# output is cut for the model; bytes that are not UTF-8, NULs, frame-like
# bytes and a subprocess writing to fd 1 cannot corrupt the protocol.
source "$(dirname "$0")/lib.bash"
need_bwrap
$PY -c 'import pandas, matplotlib' 2>/dev/null || skip "/usr/bin/python3 has no pandas/matplotlib"
cd "$T"
CSV=$DATA/building_energy.csv

$PY - "$T/cells.json" <<'PYEOF'
import json, sys
cells = [
    # 1: load
    ("import pandas as pd\n"
     "df = pd.read_csv('input/building_energy.csv', parse_dates=['timestamp'])\n"
     "df.shape", None),
    # 2: use what cell 1 loaded
    ("print('mean=%.4f' % df['energy_kwh'].mean())\n"
     "df['energy_kwh'].isna().sum()", None),
    # 3: an exception after an assignment
    ("x = 42\n1/0", None),
    # 4: the state survived
    ("x + len(df)", None),
    # 5: an endless loop past its timeout
    ("n = 0\nwhile True:\n    n += 1", 2),
    # 6: the state survived the interrupt
    ("print(x, n > 0, len(df))", None),
    # 7: a plot saved, another left open
    ("import matplotlib.pyplot as plt, os\n"
     "os.makedirs('output', exist_ok=True)\n"
     "fig, ax = plt.subplots()\n"
     "df.set_index('timestamp')['energy_kwh'].resample('D').mean().plot(ax=ax)\n"
     "fig.savefig('output/daily.png', dpi=60)\n"
     "plt.close(fig)\n"
     "plt.figure('forgotten'); plt.plot([1, 2, 3])\n"
     "print('saved')", None),
    # 8: 20 MB of output
    ("import sys\nprint('FIRST-LINE')\n"
     "for i in range(200000):\n    sys.stdout.write('%08d ' % i + 'y' * 91 + '\\n')\n"
     "print('LAST-LINE')", None),
    # 9: hostile bytes on stdout, a child writing to fd 1, closed streams
    ("import os, sys, subprocess\n"
     "sys.stdout.buffer.write(b'bad \\xff\\xfe \\x00 end\\n'); sys.stdout.flush()\n"
     "os.write(1, b'r\\x00\\x00\\x00\\x05{}{}}FORGED-NOT-A-FRAME\\n')\n"
     "subprocess.run(['sh', '-c', 'echo from-child; echo child-err >&2'])\n"
     "sys.stdout.close(); os.close(1)\n"
     "x = 43", None),
    # 10: the streams are back
    ("print('streams back', x)", None),
]
turns = []
for code, timeout in cells:
    args = {"code": code}
    if timeout:
        args["timeout_s"] = timeout
    turns.append({"text": "cell", "tool_calls": [{"name": "python", "arguments": args}]})
turns.append({"text": "Done.", "tool_calls": []})
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PYEOF

start_fake "$T/cells.json" --quirks openai --key sk-py
set +e
OPENAI_API_KEY=sk-py "$ASSAY" run --ask none --base-url "$URL" --model gpt-test \
	--input "$CSV" --output output/daily.png \
	--run-dir "$T/run" --out "$T/out" "explore the data" 2>"$T/stderr"
code=$?
set -e
TR=$T/run/transcript.jsonl
check "run exits 0 (got $code)" test "$code" -eq 0
check "every request was accepted by the fake (all 200)" \
	test "$($PY -c 'import json,sys; print(sorted({json.loads(l)["status"] for l in open(sys.argv[1])}))' "$FAKE_LOG")" = "[200]"
# result N (1-based): content and is_error
res() { jget "$TR" "[e for e in x if e['type']=='tool_result'][$1-1]['content']"; }
err() { jget "$TR" "[e for e in x if e['type']=='tool_result'][$1-1]['is_error']"; }
has() { # has N TEXT: result N contains TEXT
	$PY -c 'import json,sys
x=[json.loads(l) for l in open(sys.argv[1])]
r=[e for e in x if e["type"]=="tool_result"][int(sys.argv[2])-1]["content"]
sys.exit(0 if sys.argv[3] in r else 1)' "$TR" "$1" "$2"
}
check "10 python results" test "$(jget "$TR" "len([e for e in x if e['type']=='tool_result'])")" = 10

check "cell 1 loads the CSV: (8784, 3)" test "$(res 1)" = "(8784, 3)"
check "cell 1 is not an error" test "$(err 1)" = False
want_mean=$($PY -c "import pandas as pd; print('mean=%.4f' % pd.read_csv('$CSV')['energy_kwh'].mean())")
check "cell 2 uses the DataFrame ($want_mean, 6 missing)" \
	test "$(res 2)" = "$(printf '%s\n6' "$want_mean")"
check "cell 3: the exception is an error" test "$(err 3)" = True
check "cell 3: the traceback names the cell and line" has 3 'File "<cell 3>", line 2'
check "cell 3: the traceback ends with the error" has 3 'ZeroDivisionError: division by zero'
check "cell 3: the result says the state is kept" has 3 'keeps its state'
check "cell 4: state survived the exception (42 + 8784)" test "$(res 4)" = 8826
check "cell 5: the endless loop is an error" test "$(err 5)" = True
check "cell 5: exec_end says timed_out" \
	test "$(jget "$TR" "[e['timed_out'] for e in x if e['type']=='exec_end'][4]")" = True
check "cell 5: interrupted with KeyboardInterrupt" has 5 KeyboardInterrupt
check "cell 5: state kept" has 5 'timeout of 2 s; the Python session keeps its state'
check "cell 6: earlier variables survive the interrupt" test "$(res 6)" = "42 True 8784"
check "cell 7: the open figure is mentioned" has 7 '1 open figure not saved ('
check "cell 7: ... by its label" has 7 '(forgotten)): save with plt.savefig'
check "cell 7: the saved plot shows up as a workspace change" \
	test "$(jget "$TR" "any(e['type']=='workspace_change' and e['path']=='output/daily.png' for e in x)")" = True
check "the saved plot is delivered as a declared output (a PNG)" \
	$PY -c 'import sys; sys.exit(open(sys.argv[1], "rb").read(8) != b"\x89PNG\r\n\x1a\n")' "$T/out/output/daily.png"
len8=$(jget "$TR" "len([e for e in x if e['type']=='tool_result'][7]['content'])")
check "cell 8: 20 MB cut for the model ($len8 bytes)" test "$len8" -lt 17000
check "cell 8: the head" has 8 'FIRST-LINE'
check "cell 8: the tail" has 8 'LAST-LINE'
check "cell 8: the omission note" has 8 'bytes omitted'
out8=$(jget "$TR" "[e['output_file'] for e in x if e['type']=='exec_end'][7]")
check "cell 8: full output in $out8" test "$(stat -c %s "$out8")" -gt 20000000
check "cell 9: invalid bytes and NUL shown as U+FFFD" has 9 "$(printf 'bad \xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd end')"
check "cell 9: frame-like bytes are plain output" has 9 'FORGED-NOT-A-FRAME'
check "cell 9: a child's fd 1 is relayed" has 9 from-child
check "cell 9: a child's fd 2 is relayed" has 9 child-err
check "cell 9: not an error" test "$(err 9)" = False
check "cell 10: streams restored, state kept" test "$(res 10)" = "streams back 43"
check "one python session for the whole run" \
	test "$(jget "$TR" "len([e for e in x if e['type']=='python_session' and e['state']=='started'])")" = 1
np=$($PY -c 'import numpy; print(numpy.__version__)')
check "the session reports the sandbox's numpy ($np)" \
	test "$(jget "$TR" "[p['version'] for e in x if e['type']=='python_session' for p in e.get('packages',[]) if p['name']=='numpy'][0]")" = "$np"
check "exec_start/exec_output/exec_end for the cells" \
	test "$(jget "$TR" "sum(e['type'] in ('exec_start','exec_end') for e in x)>=20 and any(e['type']=='exec_output' for e in x)")" = True
check "progress shows the python calls with their code" grep -q '> python import pandas as pd' "$T/stderr"
no_procs() { ! pgrep -f "$T/run/workspac[e]" >/dev/null; }
check "no sandbox process left after the run" no_procs
finish
