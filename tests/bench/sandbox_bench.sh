#!/usr/bin/env bash
# Build tests/bench/sandbox_bench.c against a build directory's library
# and run it on a backend (see the top of the .c): the times the
# sandbox unit tests no longer assert.
#   tests/bench/sandbox_bench.sh [BUILD_DIR] [local|docker] [-n RUNS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
shift || true
[ -f "$build/libassaylib.a" ] || { echo "no $build/libassaylib.a: build first" >&2; exit 1; }
[ -x "$build/assay-archive" ] || { echo "no $build/assay-archive: build first" >&2; exit 1; }
t=$(mktemp -d /tmp/assay-sbxbench.XXXXXX)
trap 'rm -rf "$t"' EXIT
# shellcheck disable=SC2046
cc -O2 -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE \
	-I"$src/include" -I"$src/src" "$src/tests/bench/sandbox_bench.c" \
	"$build/libassaylib.a" $(pkg-config --libs libcurl libcjson libarchive) -lm \
	-o "$t/sandbox_bench"
ASSAY_ARCHIVE_BIN=$build/assay-archive "$t/sandbox_bench" "$@"
