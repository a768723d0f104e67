#!/usr/bin/env bash
# The docker sandbox through the whole program, against a real daemon:
# the bundled demo end to end (outputs delivered, findings right, the
# image id recorded, no container or volume left); Ctrl-C in the middle
# of a command; kill -9 of assay, then a run kept elsewhere that leaves
# what the dead one left alone, and a new run beside it that removes
# it; and the start-up errors, each a clear message with
# exit 3 (daemon unreachable, image missing, API version refused).
# Skipped (77) only when no Docker daemon answers.
source "$(dirname "$0")/lib.bash"
need_docker_image
cd "$T"
P=dk$$- # run directory names, which label the containers
DOCKER_REAP=$P # what a failed check leaves goes at the exit

# --- the demo -------------------------------------------------------
set +e
"$ASSAY" demo --sandbox docker --run-dir "$T/${P}demo" --out "$T/out" 2>"$T/demo.stderr"
code=$?
set -e
check "demo with --sandbox docker exits 0 (got $code)" test "$code" -eq 0
check "findings match the ground truth" \
	$PY "$DATA/check_findings.py" "$T/out/output" "$DATA/building_energy.truth.json"
TR=$T/${P}demo/transcript.jsonl
check "run_start names the docker backend" \
	test "$(jget "$TR" 'x[0]["sandbox"]["backend"]')" = docker
check "run_start records the image id" \
	test "$(jget "$TR" 'x[0]["sandbox"]["image_id"]')" = "$(docker image inspect -f '{{.Id}}' "$image")"
check "run_end completed" test "$(jget "$TR" 'x[-1]["status"]')" = completed
api=$(docker version -f '{{.Server.APIVersion}}')
[ "$(printf '%s\n1.47\n' "$api" | sort -V | head -1)" = "$api" ] || api=1.47
check "API version negotiated: min(daemon's $api, assay's 1.47)" \
	grep -q "API $api (daemon " "$T/${P}demo/assay.log"
check "workspace persisted with the report" \
	sh -c "tar -tf '$T/${P}demo/workspace.tar.zst' | grep -qx output/anomaly_report.md"
check "the workspace tree was seen (workspace_change events)" \
	grep -q '"path":"output/anomalies.csv","kind":"created"' "$TR"
check "no container or volume left" test "$(docker_left ${P}demo)" -eq 0

# --- Ctrl-C in the middle of a command -------------------------------
# (sleeps with a mark of this test's own, lib.bash's marked_sleepy:
# other tests run the same script and look for their sleeps on the
# host, and a container's processes are host processes)
D=$SRC/tests/e2e/data
marked_sleepy "$T/sleepy.json"
none_left() { ! marked_left; }
"$ASSAY" run --sandbox docker --provider script --script "$T/sleepy.json" \
	--run-dir "$T/${P}int" "wait" 2>"$T/int.stderr" &
pid=$!
for _ in $(seq 600); do grep -q started "$T/${P}int/exec/"*.stdout 2>/dev/null && break; sleep 0.05; done
check "the command started" grep -q started "$T/${P}int/exec/"*.stdout
check "its container runs" test "$(docker ps -q --filter label=assay.run=${P}int | wc -l)" -eq 1
kill -INT $pid
set +e
wait $pid
code=$?
set -e
check "Ctrl-C: exit 130 (got $code)" test "$code" -eq 130
check "Ctrl-C: run_end interrupted" \
	test "$(jget "$T/${P}int/transcript.jsonl" 'x[-1]["status"]')" = interrupted
check "Ctrl-C: exec_end says cancelled" grep -q '"cancelled":true' "$T/${P}int/transcript.jsonl"
check "Ctrl-C: no container or volume left" test "$(docker_left ${P}int)" -eq 0
check "Ctrl-C: no process left" none_left

# --- kill -9 of assay, then a new run --------------------------------
"$ASSAY" run --sandbox docker --provider script --script "$T/sleepy.json" \
	--run-dir "$T/${P}crash" "wait" 2>"$T/crash.stderr" &
pid=$!
for _ in $(seq 600); do grep -q started "$T/${P}crash/exec/"*.stdout 2>/dev/null && break; sleep 0.05; done
check "the command to be killed started" grep -q started "$T/${P}crash/exec/"*.stdout
kill -9 $pid
wait $pid 2>/dev/null || true
check "kill -9: the dead run's container is still there" test "$(docker_left ${P}crash)" -ge 1
# a run kept in another directory leaves it alone (what a dead run
# leaves goes with the next run kept beside it: another test's, another
# project's run must not take what this one may still look at)
mkdir -p "$T/elsewhere"
"$ASSAY" run --sandbox docker --provider script --script "$D/short.json" \
	--run-dir "$T/elsewhere/${P}other" "hello" 2>"$T/other.stderr" || true
check "a run in another directory completes" \
	test "$(jget "$T/elsewhere/${P}other/transcript.jsonl" 'x[-1]["status"]')" = completed
check "... and left the dead run's container alone" test "$(docker_left ${P}crash)" -ge 1
check "... and nothing of its own" test "$(docker_left ${P}other)" -eq 0
"$ASSAY" run --sandbox docker --provider script --script "$D/short.json" \
	--run-dir "$T/${P}next" "hello" 2>"$T/next.stderr" || true
check "the next run completes" \
	test "$(jget "$T/${P}next/transcript.jsonl" 'x[-1]["status"]')" = completed
check "the next run removed the dead run's container and volume" test "$(docker_left ${P}crash)" -eq 0
check "the next run left nothing of its own" test "$(docker_left ${P}next)" -eq 0
check "kill -9: no process of the dead run left" none_left

# --- clear errors, exit 3 --------------------------------------------
run3() { # run3 NAME VAR=VALUE [assay options...]
	local name=$1 var=$2
	shift 2
	set +e
	env "$var" "$ASSAY" run --sandbox docker --provider script \
		--script "$D/short.json" --run-dir "$T/$P$name" "$@" "hi" 2>"$T/$name.stderr"
	echo $? >"$T/$name.code"
	set -e
}
run3 unreach DOCKER_HOST=unix://$T/no-such.sock
check "daemon unreachable: exit 3" test "$(cat "$T/unreach.code")" -eq 3
check "daemon unreachable: says so and what to do" \
	grep -q "cannot reach the daemon at unix://$T/no-such.sock.*is it running" "$T/unreach.stderr"
run3 noimage ASSAY_X=1 --image assay-no-such-image:v0
check "image missing: exit 3" test "$(cat "$T/noimage.code")" -eq 3
check "image missing: says how to build it" \
	grep -q "assay-no-such-image:v0.*build-offline" "$T/noimage.stderr"
run3 apiver DOCKER_API_VERSION=1.99
check "API version refused: exit 3" test "$(cat "$T/apiver.code")" -eq 3
check "API version refused: says so" grep -q "API version refused" "$T/apiver.stderr"
check "no container or volume left by the failed starts" \
	test "$(($(docker_left ${P}unreach) + $(docker_left ${P}noimage) + $(docker_left ${P}apiver)))" -eq 0
finish
