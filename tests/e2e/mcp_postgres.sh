#!/usr/bin/env bash
# An analyst's database through a real MCP server: PostgreSQL from Debian
# started here (initdb in the test's directory, a unix socket only, a
# sales table of a million rows), reached by @bytebase/dbhub (npm, pinned
# in tests/mcp) over stdio through `assay mcp list` and `assay mcp call`.
# SKIPPED without PostgreSQL or the npm packages.
source "$(dirname "$0")/lib.bash"
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
trap '"${RUN[@]}" "$PGBIN/pg_ctl" -D "$D/data" -m immediate stop >/dev/null 2>&1 || true; cleanup' EXIT
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
finish
