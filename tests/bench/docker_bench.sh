#!/usr/bin/env bash
# Build tests/bench/docker_bench.c against a build directory's library
# and run it against the local Docker daemon (see the top of the .c).
#   tests/bench/docker_bench.sh [BUILD_DIR] [-n RUNS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
shift || true
[ -f "$build/libassaylib.a" ] || { echo "no $build/libassaylib.a: build first" >&2; exit 1; }
docker version >/dev/null 2>&1 || { echo "no Docker daemon answers: scripts/setup-docker starts one" >&2; exit 1; }
out=$build/docker_bench
# shellcheck disable=SC2046
cc -O2 -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE -I"$src/include" -I"$src/src" \
	"$src/tests/bench/docker_bench.c" "$build/libassaylib.a" \
	$(pkg-config --libs libcurl libcjson) -lm -o "$out"
exec "$out" "$@"
