#!/usr/bin/env bash
# The Responses API fake is tested against the official SDK:
# tests/fakes/responses_sdk_check.mjs drives fake_responses.py with the
# `openai` npm package (responses.create({stream: true}), responses.stream(),
# the round trip of output items and function_call_output, the rejections
# and every fault), so a fake that drifts from the real protocol fails here
# instead of letting the provider tests that use it pass. The SDK is
# installed at test time into the test's temp dir (a fresh clone has none);
# ASSAY_OPENAI_NPM overrides the package spec (default openai@6).
source "$(dirname "$0")/lib.bash"
command -v node >/dev/null ||
	skip "node is not installed (tests/fakes/responses_sdk_check.mjs drives the fake with the openai npm package)"
command -v npm >/dev/null || skip "npm is not installed (needed to install the openai npm package)"
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
[ "$major" -ge 18 ] || skip "node $(node --version) is too old for the openai npm package (needs 18+)"

SPEC=${ASSAY_OPENAI_NPM:-openai@6}
if ! timeout 300 npm install --prefix "$T/sdk" --no-audit --no-fund --no-save --loglevel=error \
	"$SPEC" >"$T/npm.out" 2>&1 || [ ! -f "$T/sdk/node_modules/openai/index.mjs" ]; then
	tail -n 5 "$T/npm.out"
	skip "could not install $SPEC with npm: $(grep -m 1 . "$T/npm.out" || echo 'no output')"
fi

OUT=$T/sdk_check.out
rc=0
timeout 300 node "$SRC/tests/fakes/responses_sdk_check.mjs" --sdk "$T/sdk" --python "$PY" \
	--fake "$SRC/tests/fakes/fake_responses.py" >"$OUT" 2>&1 || rc=$?
head -n 1 "$OUT" # the SDK version checked against
summary=$(tail -n 1 "$OUT")
n_ok=$(grep -c '^ok ' "$OUT" || true)
n_fail=$(grep -c '^FAIL ' "$OUT" || true)
grep '^FAIL ' "$OUT" || true

check "responses_sdk_check.mjs exits 0 (exit $rc)" test "$rc" -eq 0
check "it ends with 'N passed, 0 failed' (got '$summary')" \
	grep -Eqx '[0-9]+ passed, 0 failed' <<<"$summary"
check "the summary counts what ran ($n_ok ok lines, $n_fail FAIL lines)" \
	test "$summary" = "$n_ok passed, $n_fail failed"
# the check has about 70 checks; fewer than 60 means part of it never ran
check "at least 60 checks ran ($n_ok)" test "$n_ok" -ge 60
if [ "$FAILED" -gt 0 ]; then
	echo "--- tests/fakes/responses_sdk_check.mjs output (last 60 lines)"
	tail -n 60 "$OUT"
fi
finish
