#!/usr/bin/env bash
# The configuration keys are one table (src/core/config_keys.c): `assay
# help config` lists every key with its value, default, who may set it
# and when it loosens security; each option it names is one --help
# lists; the manual carries the same list; scripts/doc-config prints the
# doc's markdown table, finds a stale one (exit 1, with a diff) and
# rewrites it between its markers, leaving the rest of the file alone.
source "$(dirname "$0")/lib.bash"
cd "$T"
"$ASSAY" help config >keys.txt 2>keys.err
code=$?
check "assay help config: exit 0 (got $code)" test "$code" = 0
for k in provider model base_url sandbox network ask rules never_save timeout \
	max_turns max_tokens max_cost max_output_bytes context.trim_at \
	limits.memory_mb limits.sessions opensandbox.url inputs outputs out \
	workspace run_dir theme images models responses_store step; do
	check "... lists $k" grep -q "^  $k  " keys.txt
done
check "... with defaults ([120] for timeout)" grep -q '^  timeout  .*\[120\]' keys.txt
check "... base_url is the user's only" sh -c "grep -A3 '^  base_url ' keys.txt | grep -q 'never from a project or suite'"
check "... network says when it loosens security" sh -c "grep -A3 '^  network ' keys.txt | grep -q 'loosens security when: true'"
"$ASSAY" --help >help.txt
for f in $(grep '^      set by:' keys.txt | grep -o -- '--[a-z-]*' | sort -u); do
	check "the option it names, $f, is in --help" grep -q -- "^  $f" help.txt
done
check "--help points to assay help config" grep -q 'or config: the configuration keys' help.txt
"$ASSAY" help nosuch >bad.txt 2>&1 || true
check "an unknown topic lists config among the topics" grep -q 'models, config$' bad.txt
if [ -s "$SRC/build/assay.1" ] && [ "$ASSAY" = "$SRC/build/assay" ]; then
	check "the manual has the keys" grep -q '^\.SH CONFIGURATION KEYS' "$SRC/build/assay.1"
	check "... limits.memory_mb among them" grep -q '^\.B limits\.memory_mb' "$SRC/build/assay.1"
fi
export ASSAY
"$SRC/scripts/doc-config" >table.md
check "doc-config prints one row per key" test "$(grep -c '^| `' table.md)" = "$(grep -c '^  [a-z]' keys.txt)"
printf '# Doc\n\nbefore\n<!-- config table: scripts/doc-config -->\n| old |\n<!-- end config table -->\nafter\n' >doc.md
cp doc.md orig.md
"$SRC/scripts/doc-config" --check doc.md >diff.txt 2>check.err && code=0 || code=$?
check "--check on a stale table: exit 1 (got $code)" test "$code" = 1
check "... with a diff" grep -q '^-| old |' diff.txt
check "... and what to run" grep -q 'scripts/doc-config --write doc.md' check.err
check "... the file untouched" cmp -s doc.md orig.md
"$SRC/scripts/doc-config" --write doc.md
"$SRC/scripts/doc-config" --check doc.md >diff2.txt 2>&1 && code=0 || code=$?
check "--write, then --check: exit 0 (got $code)" test "$code" = 0
check "... the table between the markers" sh -c "sed -n '/config table: scripts/,/end config table/p' doc.md | sed '1d;\$d' | cmp -s - table.md"
check "... the rest kept" bash -c "head -4 doc.md | cmp -s - <(head -4 orig.md) && tail -2 doc.md | cmp -s - <(tail -2 orig.md)"
printf 'no markers\n' >none.md
"$SRC/scripts/doc-config" --check none.md >/dev/null 2>none.err && code=0 || code=$?
check "a doc without the markers: an error naming them (exit $code)" sh -c "test $code != 0 && grep -q 'config table: scripts/doc-config' none.err"
finish
