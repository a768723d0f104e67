#!/usr/bin/env bash
# The fake servers are tested too: tests/fakes/selftest.sh drives
# fake_openai.py over real HTTP (every quirk style, every fault, each
# rejection the real API makes and the same request made valid) and
# must pass in the suite, so a fake that drifts from the real API's
# rules fails here instead of letting the tests that use it pass.
source "$(dirname "$0")/lib.bash"
command -v curl >/dev/null || skip "curl is not installed (tests/fakes/selftest.sh drives the fake with it)"

OUT=$T/selftest.out
rc=0
bash "$SRC/tests/fakes/selftest.sh" >"$OUT" 2>&1 || rc=$?
summary=$(tail -n 1 "$OUT")
n_ok=$(grep -c '^ok ' "$OUT" || true)
n_fail=$(grep -c '^FAIL ' "$OUT" || true)
grep '^FAIL ' "$OUT" || true

check "tests/fakes/selftest.sh exits 0 (exit $rc)" test "$rc" -eq 0
check "it ends with 'N passed, 0 failed' (got '$summary')" \
	grep -Eqx '[0-9]+ passed, 0 failed' <<<"$summary"
check "the summary counts what ran ($n_ok ok lines, $n_fail FAIL lines)" \
	test "$summary" = "$n_ok passed, $n_fail failed"
# a self-test that stopped early or lost its checks must not pass: it has
# about 180 checks; fewer than 150 means part of it never ran
check "at least 150 checks ran ($n_ok)" test "$n_ok" -ge 150
if [ "$FAILED" -gt 0 ]; then
	echo "--- tests/fakes/selftest.sh output (last 60 lines)"
	tail -n 60 "$OUT"
fi
finish
