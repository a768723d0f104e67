#!/usr/bin/env bash
# A short libFuzzer run of the policy's shell tokenizer and classifiers
# (tests/fuzz/fuzz_tokenizer.c): any input must parse or fail cleanly,
# classify without crashing or leaking, and what cannot be parsed must
# never be allowed. Built here with clang from the sources it needs;
# SKIPPED when clang or its libFuzzer runtime is missing (scripts/setup
# installs clang). Longer runs: cmake -DCMAKE_C_COMPILER=clang
# -DASSAY_FUZZ=ON, then build/fuzz_tokenizer -max_total_time=600.
source "$(dirname "$0")/lib.bash"
command -v clang >/dev/null || skip "clang is not installed (scripts/setup installs it)"
cd "$T"
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){return 0;}\n' >probe.c
clang -fsanitize=fuzzer probe.c -o probe 2>/dev/null ||
	skip "clang has no libFuzzer runtime here"

clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-D_GNU_SOURCE -DASSAY_SOURCE_DIR="\"$SRC\"" -I"$SRC/include" -I"$SRC/src" \
	"$SRC/tests/fuzz/fuzz_tokenizer.c" "$SRC"/src/policy/*.c "$SRC"/src/core/*.c \
	$(pkg-config --cflags --libs libcjson) -o fuzz_tokenizer 2>build.log || true
check "the harness builds" test -x fuzz_tokenizer || { cat build.log; finish; exit 1; }

# seeds: shapes the grammar has (the fuzzer mutates from them)
mkdir corpus
$PY - <<'PYEND'
seeds = [
    "ls -la | grep x && rm -rf y; echo done &",
    "echo $(a $(b) `c`) \"${x:-$(d)}\" $((1+2)) <(e) >(f)",
    "cat <<EOF > f\nbody $(g)\nEOF\nsh <<-'Q'\n\trm x\n\tQ\n",
    "case $x in a|b) c;; (d) e;& *) f;;& esac",
    "for i in 1 2; do while a; do { f; } > o < i; done; done",
    "if a; then b; elif c; then d; else e; fi; until x; do y; done",
    "python3 -c \"import os; os.system('rm -rf x')\"",
    "bash -c 'sh -c \"curl x | sh\"'; eval \"$(echo aGk= | base64 -d)\"",
    "find . -exec rm {} \\; ; xargs -I{} env -i rm {}; sudo -u r timeout 5 rm",
    "f() { a; }; function g { b; }; [[ -f x && y < z ]]; (( i++ ))",
    "$'\\x72m' r''m \\rm \"/bin/rm\" A=1 B=(1 2) cmd 2>&1 >>o <>rw &>all {fd}>x",
    "import subprocess as sp\nsp.run(['ls', '-l'])\nopen('/etc/x','w')\nf'{x}'",
    "awk '{print | \"sh\"}' f; git -c core.pager=x log; cd .. && cat ~/.bashrc",
]
for i, s in enumerate(seeds):
    open(f"corpus/seed{i}", "w").write(s)
PYEND

set +e
# a fixed amount of work, not a time: the same on a slow machine
ASAN_OPTIONS=detect_leaks=1 ./fuzz_tokenizer -runs=60000 -seed=1 \
	-max_len=512 -rss_limit_mb=1024 -timeout=30 -print_final_stats=1 \
	corpus >fuzz.log 2>&1
code=$?
set -e
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' fuzz.log)
check "the fuzzer found nothing (exit $code, ${runs:-0} inputs)" test "$code" -eq 0
[ "$code" -eq 0 ] || grep -A20 -m1 'ERROR\|deadly' fuzz.log || true
check "it ran every input asked for (${runs:-0})" test "${runs:-0}" -ge 60000
finish
