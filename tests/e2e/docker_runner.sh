#!/usr/bin/env bash
# How commands reach the container: through the command runner (the
# default: one long-lived exec), through an exec per command
# (ASSAY_DOCKER_EXEC=exec), and through an exec per command after the
# runner could not start (an image without python3, made here from the
# host's own binaries). The same short task each time: the outputs
# right, the log saying which way it went, nothing left behind.
# Skipped (77) only when no Docker daemon answers.
source "$(dirname "$0")/lib.bash"
command -v docker >/dev/null || skip "the docker CLI (used by this test to look) is not installed"
docker version >/dev/null 2>&1 ||
	skip "no Docker daemon answers at ${DOCKER_HOST:-the default socket} (scripts/setup-docker starts one)"
image=${ASSAY_DOCKER_IMAGE:-assay-sandbox:latest}
docker image inspect "$image" >/dev/null 2>&1 ||
	{ echo "FAIL image $image is missing: scripts/sandbox-image/build-offline builds it"; exit 1; }
cd "$T"
P=dkr$$-
printf 'name,value\n' >numbers.csv
for i in $(seq 1 10); do printf 'n%d,%d\n' "$i" "$i" >>numbers.csv; done
SCRIPT=$SRC/tests/e2e/data/short.json
NOPY=assay-e2e-nopython:$$
trap 'docker rmi -f "$NOPY" >/dev/null 2>&1 || true; cleanup' EXIT

left() {
	echo $(($(docker ps -aq --filter "label=assay.run=$1" | wc -l) +
		$(docker volume ls -q --filter "label=assay.run=$1" | wc -l)))
}

run_task() { # run_task NAME [env...] -- [assay options...]: sets CODE
	local name=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	set +e
	env "${envs[@]}" "$ASSAY" run --sandbox docker --provider script --script "$SCRIPT" \
		--input numbers.csv --output output/sum.txt --output output/note.md \
		--run-dir "$T/$P$name" --out "$T/$name/out" "$@" \
		"add up the values in input/numbers.csv" 2>"$T/$name.stderr"
	CODE=$?
	set -e
}

task_ok() { # task_ok NAME: completed, outputs right, nothing left
	test "$CODE" -eq 0 && test "$(cat "$T/$1/out/output/sum.txt")" = 55 &&
		grep -q 'add up to 55' "$T/$1/out/output/note.md" &&
		test "$(jget "$T/$P$1/transcript.jsonl" 'x[-1]["status"]')" = completed &&
		test "$(left "$P$1")" -eq 0
}

# --- the runner (default) --------------------------------------------
run_task runner ASSAY_DOCKER_EXEC=runner --
check "runner: the task completes, outputs right, nothing left (exit $CODE)" task_ok runner
check "runner: the log says the runner was up" grep -q "command runner up" "$T/${P}runner/assay.log"
check "runner: no fallback" sh -c "! grep -q 'exec per command' '$T/${P}runner/assay.log'"

# --- an exec per command, asked for ------------------------------------
run_task exec ASSAY_DOCKER_EXEC=exec --
check "exec per command: the task completes, outputs right, nothing left (exit $CODE)" task_ok exec
check "exec per command: no runner started" sh -c "! grep -q 'command runner' '$T/${P}exec/assay.log'"

# --- an image without python3: the runner cannot start ----------------
# bash, the tools the task and the file operations use, and their
# libraries, copied from the host (a few MB; no registry needed)
root=$T/nopy
mkdir -p "$root/workspace" "$root/tmp"
for b in bash sh sleep cat wc awk mkdir realpath stat head find tr ls env; do
	p=$(command -v "$b") || continue
	p=$(readlink -f "$p")
	mkdir -p "$root/usr/bin"
	cp "$p" "$root/usr/bin/$b"
	ldd "$p" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done
ln -s usr/bin "$root/bin"
tar -C "$root" -c . | docker import -c 'ENV PATH=/usr/bin:/bin' -c 'WORKDIR /workspace' - "$NOPY" >/dev/null
check "the python-less image has no python3" \
	sh -c "! docker run --rm --network none '$NOPY' /usr/bin/bash -c 'command -v python3'"
run_task nopy ASSAY_DOCKER_EXEC=runner -- --image "$NOPY"
check "no python3: the task completes through an exec per command (exit $CODE)" task_ok nopy
check "no python3: the log says why and what it does instead" \
	grep -q 'command runner did not start (it said: .*python3.*): running an exec per command' "$T/${P}nopy/assay.log"
docker rmi -f "$NOPY" >/dev/null 2>&1 || true

finish
