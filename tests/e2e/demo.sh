#!/usr/bin/env bash
# The bundled demo end to end: scripted model, real local sandbox, real
# pandas/matplotlib analysis; its findings must match the ground truth.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
set +e
"$ASSAY" demo --run-dir "$T/run" --out "$T/out" 2>"$T/stderr"
code=$?
set -e
check "demo exits 0 (got $code)" test "$code" -eq 0
check "findings match the ground truth" \
	$PY "$DATA/check_findings.py" "$T/out/output" "$DATA/building_energy.truth.json"
check "transcript starts with run_start" \
	test "$(jget "$T/run/transcript.jsonl" 'x[0]["type"]')" = run_start
check "transcript ends with run_end completed" \
	test "$(jget "$T/run/transcript.jsonl" 'x[-1]["status"]')" = completed
check "workspace persisted (zstd)" test -s "$T/run/workspace.tar.zst"
check "archive holds the report" \
	sh -c "tar -tf '$T/run/workspace.tar.zst' | grep -q output/anomaly_report.md"
check "progress shows tool calls" grep -q '> shell' "$T/stderr"
check "summary lists the outputs" grep -q 'output output/anomalies.csv ->' "$T/stderr"
finish
