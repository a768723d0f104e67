#!/usr/bin/env bash
# An analyst's database through a real MCP server: PostgreSQL from Debian
# started here (initdb in the test's directory, a unix socket only, a
# sales table of a million rows), reached by @bytebase/dbhub (npm, pinned
# in tests/mcp) over stdio through `assay mcp list` and `assay mcp call`;
# then an analyst's run (the scripted model, the real local sandbox): a
# query allowed by a rule, its rows landing as a CSV in the workspace,
# pandas in the sandbox loading them and drawing a chart, a DELETE denied
# by a deny rule on the call's arguments, the table unchanged after;
# then the same in the workbench (tmux, --ask risky, no rules) with a
# person at the keys: the query asked and approved (y), the DELETE asked
# and denied (n), the table unchanged.
# SKIPPED without PostgreSQL or the npm packages (or bubblewrap).
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_helpers.bash"
need_bwrap
need_mcp_npm
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] || skip "PostgreSQL is not installed (scripts/setup --test installs it)"
D=$T/pg
mkdir -p "$D/sock"
RUN=()
if [ "$(id -u)" = 0 ]; then # initdb refuses root: the package's user runs it
	id postgres >/dev/null 2>&1 || skip "no postgres user to run PostgreSQL as"
	chmod o+x "$T"
	chown -R postgres "$D"
	RUN=(runuser -u postgres --)
fi
"${RUN[@]}" "$PGBIN/initdb" -D "$D/data" -A trust -U postgres >"$T/initdb.log" 2>&1 ||
	{ cat "$T/initdb.log"; exit 1; }
"${RUN[@]}" "$PGBIN/pg_ctl" -D "$D/data" -l "$D/log" -w \
	-o "-k $D/sock -c listen_addresses=''" start >/dev/null
trap '"${RUN[@]}" "$PGBIN/pg_ctl" -D "$D/data" -m immediate stop >/dev/null 2>&1 || true; tui_cleanup' EXIT
psql() { "$PGBIN/psql" -h "$D/sock" -U postgres -X -q -v ON_ERROR_STOP=1 "$@"; }
psql -d postgres -c "create database sales"
psql -d sales <<'SQL'
create table orders (id bigserial primary key, sold_at date, region text,
  product text, qty int, amount numeric(10, 2));
insert into orders (sold_at, region, product, qty, amount)
select date '2024-01-01' + (i % 366), (array['north', 'south', 'east', 'west'])[1 + i % 4],
  'p' || (i % 50), 1 + i % 7, ((i * 37) % 10000) / 100.0
from generate_series(1, 1000000) i;
SQL
check "a million rows in the sales table" test "$(psql -d sales -tAc 'select count(*) from orders')" = 1000000

mkdir -p "$T/cfg/assay" "$T/proj"
cat >"$T/cfg/assay/config.json" <<EOF
{"mcp_servers": {"sales": {"command": "$NODE",
  "args": ["$MCP_NPM/.bin/dbhub", "--transport", "stdio", "--dsn",
           "postgres://postgres@/sales?sslmode=disable"],
  "env": {"PGHOST": "$D/sock", "TZ": "UTC"}}}}
EOF
mcp() { (cd "$T/proj" && XDG_CONFIG_HOME=$T/cfg "$ASSAY" mcp "$@"); }
mcp list sales >"$T/list" 2>&1 || true
check "dbhub ready over stdio" grep -q '^sales  stdio  ready' "$T/list"
check "... execute_sql listed, marked destructive" grep -q '^  execute_sql .*destructive' "$T/list"

mcp call sales execute_sql --json \
	'{"sql": "select region, count(*) as n, sum(amount) as total from orders group by region order by region"}' \
	>"$T/q.json" 2>"$T/q.err"
check "a query answered: four regions of 250000 rows" $PY - "$T/q.json" <<'PYEND'
import json, sys
r = json.load(open(sys.argv[1]))
body = json.loads(r["content"][0]["text"])
rows = body["data"]["rows"]
ok = [x["region"] for x in rows] == ["east", "north", "south", "west"] and \
    all(str(x["n"]) == "250000" for x in rows)
sys.exit(0 if ok else 1)
PYEND
start=$(date +%s%N)
mcp call sales execute_sql '{"sql": "select * from orders order by id limit 100000"}' >"$T/big" 2>"$T/big.err"
ms=$((($(date +%s%N) - start) / 1000000))
check "100000 rows come back whole (${ms} ms, $(wc -c <"$T/big") bytes)" grep -q '"id": "100000"' "$T/big"
set +e
mcp call sales execute_sql '{"sql": "selec 1"}' >"$T/bad" 2>&1
rc=$?
set -e
check "an SQL error: the tool's error, exit 1 (got $rc)" test "$rc" -eq 1
check "... with the database's words" grep -q 'syntax error' "$T/bad"

# the analyst's run
cat >"$T/rules.json" <<'EOF'
{"rules": [{"tool": "mcp", "match": "sales/execute_sql", "action": "allow"},
           {"tool": "mcp", "match": "sales/execute_sql *[dD][eE][lL][eE][tT][eE]*", "action": "deny"}]}
EOF
$PY - "$T/s.json" <<'PYEND'
import json, sys
q = ("select region, date_trunc('month', sold_at)::date as month, "
     "sum(amount) as revenue from orders group by 1, 2 order by 2, 1")
code = ("import os, pandas as pd, matplotlib.pyplot as plt\n"
        "os.makedirs('output', exist_ok=True)\n"
        "df = pd.read_csv('mcp/sales/execute_sql-1.csv')\n"
        "p = df.pivot(index='month', columns='region', values='revenue')\n"
        "p.plot(figsize=(8, 4)).get_figure().savefig('output/revenue.png')\n"
        "plt.close('all')\n"
        "print(len(df), sorted(df.region.unique()))")
turns = [
    {"text": "querying", "tool_calls": [{"name": "sales__execute_sql", "arguments": {"sql": q}}]},
    {"text": "charting", "tool_calls": [{"name": "python", "arguments": {"code": code}}]},
    {"text": "cleaning", "tool_calls": [{"name": "sales__execute_sql", "arguments": {"sql": "DELETE FROM orders WHERE region = 'north'"}}]},
    {"text": "Done.", "tool_calls": []},
]
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PYEND
set +e
(cd "$T/proj" && XDG_CONFIG_HOME=$T/cfg "$ASSAY" run --provider script --script "$T/s.json" \
	--config "$T/rules.json" --run-dir "$T/run" go </dev/null >"$T/run.out" 2>&1)
rc=$?
set -e
tr=$T/run/transcript.jsonl
evhas() { $PY -c "import json,sys
sys.exit(not any(json.loads(l)['type'] == sys.argv[2] and sys.argv[3] in l for l in open(sys.argv[1])))" "$@"; }
check "the analyst's run completes (exit $rc)" test "$rc" -eq 0
check "the query allowed by its rule" evhas "$tr" approval '"decision":"approved","by":"rule"'
check "... its rows landed as a CSV in the workspace" evhas "$tr" mcp_call '"file":"mcp/sales/execute_sql-1.csv","rows":48,"columns":3'
check "... the model told where, with the first rows" evhas "$tr" tool_result 'a table of 48 rows and 3 columns, saved to mcp/sales/execute_sql-1.csv'
check "pandas in the sandbox loaded them: 48 rows (12 months x 4 regions)" evhas "$tr" tool_result "48 ['east', 'north', 'south', 'west']"
check "... and drew the chart" evhas "$tr" workspace_change '"path":"output/revenue.png","kind":"created"'
check "the DELETE denied by the rule on its arguments" evhas "$tr" approval '"decision":"denied","by":"rule"'
check "the table unchanged after the run" test "$(psql -d sales -tAc "select count(*) from orders where region = 'north'")" = 250000

# the workbench, a person deciding: --ask risky asks about every MCP call
tui_start 120 40 XDG_CONFIG_HOME="$T/cfg" -- --provider script --script "$T/s.json" \
	--ask risky --run-dir "$T/run2" go
tr2=$T/run2/transcript.jsonl
check "workbench: the query asks (the Approval dialog)" wait_for 'sales/execute_sql \{"sql":"select region' 60
check "... execute_sql's own hint shown, not trusted" screen_has 'destructive'
keys y
check "approved by the person: the chart is drawn" wait_for 'revenue\.png' 60
check "the DELETE asks" wait_for 'sales/execute_sql \{"sql":"DELETE FROM orders' 60
keys n
check "denied: the run ends" wait_for 'Done\.' 30
check "... the query approved and the DELETE denied, both by the person" \
	test "$(jget "$tr2" "[(e['decision'], e['by']) for e in x if e['type'] == 'approval' and e['id'] in ('call_0_0', 'call_2_0')]")" = \
	"[('approved', 'user'), ('denied', 'user')]"
check "... the rows landed again, pandas loaded them" evhas "$tr2" tool_result "48 ['east', 'north', 'south', 'west']"
keys C-q
check "Ctrl-Q quits (exit 0)" test "$(wait_exit 20)" = 0
check "the table unchanged after the person's run" test "$(psql -d sales -tAc "select count(*) from orders where region = 'north'")" = 250000
check "no process left behind (dbhub ended)" test -z "$(leftovers)"
finish
