#!/usr/bin/env bash
# What each call changed, in a sandbox that holds its workspace itself
# (docker: the texts are read through the Engine API's archive
# endpoint, after the per-call snapshot): the run of diffs.sh records
# the same diffs as on the local sandbox, resumed after a kill too.
source "$(dirname "$0")/lib.bash"
need_bwrap
need_docker_image
cd "$T"
S=$SRC/tests/e2e/data/edits.json
diffs_of() { jget "$1" "[(e['path'], e['kind'], e.get('diff')) for e in x if e['type'] == 'workspace_change']"; }
ASSAY_SCRIPT_DELAY_MS=0 "$ASSAY" run --provider script --script "$S" \
	--ask none --run-dir "$T/local" "edit the report" >"$T/local.out" 2>&1
ASSAY_SCRIPT_DELAY_MS=0 "$ASSAY" run --sandbox docker --provider script \
	--script "$S" --ask none --run-dir "$T/docker" "edit the report" >"$T/docker.out" 2>&1
check "the docker run completes" grep -q 'run completed' "$T/docker.out" || tail -5 "$T/docker.out"
check "docker records the diffs the local sandbox records" \
	test "$(diffs_of "$T/docker/transcript.jsonl")" = "$(diffs_of "$T/local/transcript.jsonl")" ||
	{ diffs_of "$T/docker/transcript.jsonl"; diffs_of "$T/local/transcript.jsonl"; }
check "report.md has three diffs there" \
	test "$(jget "$T/docker/transcript.jsonl" "sum(1 for e in x if e['type'] == 'workspace_change' and e['path'] == 'report.md' and e['diff'].get('hunks'))")" = 3

ASSAY_SCRIPT_DELAY_MS=1500 "$ASSAY" run --sandbox docker --provider script --script "$S" \
	--ask none --run-dir "$T/cut" "edit the report" >"$T/cut.out" 2>&1 &
pid=$!
cut_ready() { grep -q '"workspace_change".*"call":"call_1_0"' "$T/cut/transcript.jsonl" 2>/dev/null; }
check "the second call's change is recorded (before the kill)" wait_until 60 cut_ready
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
ASSAY_SCRIPT_DELAY_MS=0 "$ASSAY" resume "$T/cut" --ask none >"$T/resume.out" 2>&1
check "the resumed docker run completes" grep -q 'run completed' "$T/resume.out" || tail -5 "$T/resume.out"
check "resumed in docker: the same diffs" \
	test "$(diffs_of "$T/cut/transcript.jsonl")" = "$(diffs_of "$T/local/transcript.jsonl")" ||
	diffs_of "$T/cut/transcript.jsonl"
finish
