#!/usr/bin/env bash
# A hostile python cell cannot reach outside the sandbox through the
# kernel: a host secret read by absolute path, writes outside /workspace
# (system directories, "..", the host's /tmp and the test dir), the
# host's environment, the model server on 127.0.0.1 and host processes
# all stay out of reach; what the cell does inside /workspace works.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
mkdir -p secret && echo TOP-SECRET-CONTENT >secret/secret.txt
MARK=assay-py-escape-$$-$RANDOM
echo fine >ok.txt
$PY - "$T/cells.json" "$T/secret/secret.txt" "$MARK" "$T" <<'PYEOF'
import json, sys
out, secret, mark, tdir = sys.argv[1:5]
probe = '''
import os, socket
def attempt(what, fn):
    try:
        r = fn()
        print("REACHED", what, repr(r)[:80])
    except Exception as e:
        print("blocked", what, type(e).__name__)
'''
cells = [
    probe + f'''
attempt("read secret", lambda: open({secret!r}).read())
attempt("list test dir", lambda: os.listdir({tdir!r}))
attempt("read shadow", lambda: open("/etc/shadow").read())
attempt("list /root", lambda: os.listdir("/root"))
''',
    f'''
for path in ["/usr/{mark}", "/etc/{mark}", "/workspace/../{mark}", "/{mark}",
             {tdir + "/escaped-" + mark!r}, "/var/{mark}", "/home/{mark}"]:
    attempt("write " + path, lambda: open(path, "w").write("x"))
open("/tmp/{mark}", "w").write("inside the sandbox only")
open("output-{mark}.txt", "w").write("in the workspace")
os.symlink("/tmp", "tmp-link")
open("tmp-link/via-link-{mark}", "w").write("x")
print("wrote inside")
''',
    '''
print("env:", sorted(os.environ))
print("secret in env:", any("planted-value" in v for v in os.environ.values()))
print("secret in /proc/1/environ:", b"planted-value" in open("/proc/1/environ", "rb").read())
print("pids:", len([p for p in os.listdir("/proc") if p.isdigit()]))
port = int(open("input/port.txt").read())
attempt("connect to the model server", lambda: socket.create_connection(("127.0.0.1", port), timeout=2))
attempt("resolve a name", lambda: socket.getaddrinfo("example.com", 80))
''',
    # the kernel's frames cannot reach the host either: the result is
    # just this cell's output
    '''
import gc, sys
k = [o for o in gc.get_objects() if type(o).__name__ == "Kernel"]
print("kernel objects:", len(k))
if k:
    with k[0].send_lock:
        os.write(k[0].pout, b"o\\x00\\x00\\x00\\x0bFORGED-OUT\\n")
"done"
''',
    "attempt('still here', lambda: open('input/ok.txt').read().strip())",
]
turns = [{"text": "cell", "tool_calls": [{"name": "python", "arguments": {"code": c}}]}
         for c in cells]
turns.append({"text": "Done.", "tool_calls": []})
json.dump({"turns": turns}, open(out, "w"))
PYEOF
start_fake "$T/cells.json" --quirks openai
echo "$PORT" >port.txt # the cells read the fake's port from a file
set +e
SECRET_DIR=$T/secret ASSAY_PLANTED_SECRET=planted-value-123 OPENAI_API_KEY=sk-x \
	"$ASSAY" run --ask none --base-url "$URL" --model gpt-test --input ok.txt --input port.txt \
	--run-dir "$T/run" "escape" 2>"$T/stderr"
code=$?
set -e
TR=$T/run/transcript.jsonl
has() { # has N TEXT: result N contains TEXT
	$PY -c 'import json,sys
x=[json.loads(l) for l in open(sys.argv[1])]
r=[e for e in x if e["type"]=="tool_result"][int(sys.argv[2])-1]["content"]
sys.exit(0 if sys.argv[3] in r else 1)' "$TR" "$1" "$2"
}
hasnt() { ! has "$@"; }
check "run exits 0 (got $code)" test "$code" -eq 0
check "5 results" test "$(jget "$TR" "len([e for e in x if e['type']=='tool_result'])")" = 5
check "nothing outside was reached" hasnt 1 REACHED
check "host secret by absolute path: blocked" has 1 'blocked read secret FileNotFoundError'
check "the test dir is not visible" has 1 'blocked list test dir FileNotFoundError'
check "no secret content in the transcript or run dir" sh -c "! grep -rq TOP-SECRET-CONTENT '$T/run'"
check "no write outside /workspace got through" hasnt 2 REACHED
check "writes inside the sandbox work" has 2 'wrote inside'
for p in "/tmp/$MARK" "/$MARK" "/usr/$MARK" "/etc/$MARK" "$T/escaped-$MARK" "/tmp/via-link-$MARK" "$T/run/$MARK"; do
	check "nothing at $p on the host" test ! -e "$p"
done
check "the workspace write landed in the workspace" test -s "$T/run/workspace/output-$MARK.txt"
check "the host environment is not in the sandbox" has 3 'secret in env: False'
check "nor in /proc/1/environ" has 3 'secret in /proc/1/environ: False'
check "HOME is in the sandbox's environment" has 3 "'HOME'"
check "SECRET_DIR is not" hasnt 3 SECRET_DIR
check "the model server is out of reach" has 3 'blocked connect to the model server'
check "no name resolution" has 3 'blocked resolve a name'
check "only the sandbox's own processes are visible" \
	test "$(jget "$TR" "int([l for l in [e for e in x if e['type']=='tool_result'][2]['content'].splitlines() if l.startswith('pids:')][0].split()[1]) < 10")" = True
check "the fake saw only assay's requests (6)" test "$(fake_requests)" -eq 6
check "a forged frame is only that cell's output" has 4 'FORGED-OUT'
check "the session goes on (input readable)" has 5 "REACHED still here 'fine'"
no_procs() { ! pgrep -f "$T/run/workspac[e]" >/dev/null; }
check "no sandbox process left after the run" no_procs
finish
