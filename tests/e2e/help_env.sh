#!/usr/bin/env bash
# `assay --help` names every environment variable assay reads, and the
# manual (scripts/man-page, from the same text) has them in its
# ENVIRONMENT section. The variables are taken from the source, not
# from a list kept here: every getenv("X") under src/, and the names
# read through a variable: the config keys' .env (core/config_keys.c),
# the providers' key and URL variables (the transport_kinds table of
# llm/transport.c), the XDG directories (path_xdg_dir) and the helpers'
# overrides (helper_path). Only the short list below is exempt, each for
# a reason; a name on it that src/ no longer reads is an error too.
source "$(dirname "$0")/lib.bash"
cd "$T"

# Internal or not the user's to set; why each:
declare -A INTERNAL=(
	[ASSAY_TUI_STATS]="frame statistics in assay.log, for the TUI tests"
	[ASSAY_LOOP_STATS]="the event loop's statistics in the log, for benchmarks"
	[ASSAY_TUI_CLOCK_MS]="a fixed clock: reproducible screens in tests"
	[ASSAY_SCRIPT_DELAY_MS]="the scripted model's pace, 0 in tests"
	[ASSAY_IMAGE_TIMING]="assay-image's stage times, for benchmarks"
	[ASSAY_NO_SPARE]="no archive helper started ahead of need, to compare in benchmarks"
	[ASSAY_LOG_STDERR]="set by assay itself in its helpers' environment"
	[ASSAY_ARCHIVE_BIN]="the helper's path, for builds and tests (found beside assay)"
	[ASSAY_XFER_BIN]="the HTTP helper's path, for builds and tests (found beside assay-archive)"
	[ASSAY_IMAGE_BIN]="the helper's path, for builds and tests (found beside assay)"
	[MCP_CONFORMANCE_SCENARIO]="set by the MCP conformance suite's harness"
	[TERM]="set by the terminal"
	[COLORTERM]="set by the terminal"
	[TMUX]="set by tmux"
	[HOME]="the user's home, the XDG directories' default base"
	[PATH]="where commands are found, as for every program"
)

# the variables src/ reads, one per line as "RULE NAME"
$PY - "$SRC/src" >vars.txt <<'PY'
import os, re, sys
src = sys.argv[1]
text = {}
for d, _, files in os.walk(src):
    for f in files:
        if f.endswith((".c", ".h")):
            p = os.path.join(d, f)
            text[os.path.relpath(p, src)] = open(p).read()
found = []
def add(rule, names):
    names = sorted(set(names))
    if not names:
        sys.exit("rule %s found nothing: has the code moved?" % rule)
    found.extend((rule, n) for n in names)
NAME = r'"([A-Z][A-Z0-9_]*)"'
add("getenv", [n for t in text.values() for n in re.findall(r"getenv\(\s*" + NAME, t)])
add("config_key", re.findall(r"\.env\s*=\s*" + NAME, text["core/config_keys.c"]))
m = re.search(r"transport_kinds\[\]\s*=\s*\{(.*?)\n\};", text["llm/transport.c"], re.S)
if not m:
    sys.exit("llm/transport.c: no transport_kinds table")
add("provider", re.findall(NAME, m.group(1)))
add("xdg", re.findall(r"path_xdg_dir\(\s*" + NAME, text["core/path.c"]))
add("helper", [n for t in text.values() for n in re.findall(r"helper_path\(\s*" + NAME, t)])
for rule, n in found:
    print(rule, n)
PY
check "the variables read from src/ ($(wc -l <vars.txt) by 5 rules)" test -s vars.txt

"$ASSAY" --help >help.txt 2>&1
$PY "$SRC/scripts/man-page" "$ASSAY" >assay.1
$PY - assay.1 >man-env.txt <<'PY'
import sys
t = open(sys.argv[1]).read()
print(t.partition(".SH ENVIRONMENT")[2].partition("\n.SH ")[0].replace("\\-", "-"))
PY
check "the manual has an ENVIRONMENT section" grep -q '^\.B OPENAI_API_KEY' man-env.txt

named() { grep -Eq "(^|[^A-Z0-9_])$1([^A-Z0-9_]|\$)" "$2"; }
declare -A seen=()
while read -r rule name; do
	[ -n "${seen[$name]:-}" ] && continue
	seen[$name]=1
	if [ -n "${INTERNAL[$name]:-}" ]; then
		echo "     $name: internal (${INTERNAL[$name]})"
		continue
	fi
	check "--help names $name ($rule)" named "$name" help.txt
	check "... and the manual's ENVIRONMENT" named "$name" man-env.txt
done <vars.txt
for name in "${!INTERNAL[@]}"; do
	check "the internal $name is still read by src/" test -n "${seen[$name]:-}"
done
# keys are chosen per provider, or by the config key that names another
check "--help names the config key api_key_env" grep -q '"api_key_env": "VAR"' help.txt
check "... and bearer_token_env (an MCP server's token)" grep -q 'bearer_token_env' help.txt
check "--help no longer says keys come only from OPENAI_API_KEY" \
	sh -c "! grep -q 'only from the environment (OPENAI_API_KEY)' help.txt"
finish
