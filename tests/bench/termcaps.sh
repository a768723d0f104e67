#!/usr/bin/env bash
# Build tests/bench/termcaps_bench.c against a build directory's library
# and run it (see the top of the .c).
#   tests/bench/termcaps.sh [BUILD_DIR] [-n RUNS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
shift || true
[ -f "$build/libassaylib.a" ] || { echo "no $build/libassaylib.a: build first" >&2; exit 1; }
t=$(mktemp -d /tmp/assay-termbench.XXXXXX)
trap 'rm -rf "$t"' EXIT
# shellcheck disable=SC2046
cc -O2 -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE \
	-I"$src/include" -I"$src/src" "$src/tests/bench/termcaps_bench.c" \
	"$build/libassaylib.a" $(pkg-config --libs ncursesw libcurl libcjson libarchive) -lm \
	-o "$t/termcaps_bench"
"$t/termcaps_bench" "$@"
