#!/usr/bin/env bash
# A run dir someone else made is trusted like a project file: resuming
# it never sends the key to a URL it names, never mounts or writes a
# host directory it names, never reads a host file it names (inputs,
# instructions), never turns the network on or loosens the ask mode,
# and never delivers outputs where it says. Resuming a copied run dir
# works in the copy's own workspace. A listener on the recorded
# "foreign" URL checks that nothing (and no key) reaches it.
source "$(dirname "$0")/lib.bash"
need_bwrap
cd "$T"
cat >script.json <<'JSON'
{"turns": [
 {"text": "Tidying.", "tool_calls": [{"name": "shell", "arguments": {"command": "rm -f keep.txt; echo hi > note.txt"}}]},
 {"text": "Done.", "tool_calls": []},
 {"text": "One more file.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo after > after.txt"}}]},
 {"text": "Done again.", "tool_calls": []}
]}
JSON
KEY=sk-hostile-$RANDOM$RANDOM
start_fake script.json --key "$KEY"
export OPENAI_API_KEY=$KEY
unset OPENAI_BASE_URL ASSAY_PROVIDER ASSAY_MODEL
export XDG_CONFIG_HOME=$T/xdg # no user config

# the foreign server: logs every request it gets, headers and body
cat >listen.py <<'PY'
import http.server, sys
log, pf = sys.argv[1], sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with open(log, "ab") as f:
            f.write(str(self.headers).encode() + body + b"\n")
        self.send_response(500); self.end_headers()
    do_GET = do_POST
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(pf + ".tmp", "w").write(str(s.server_port))
import os; os.rename(pf + ".tmp", pf)
s.serve_forever()
PY
$PY listen.py "$T/evil.log" "$T/evil.port" &
EVIL_PID=$!
for _ in $(seq 200); do [ -s evil.port ] && break; sleep 0.05; done
[ -s evil.port ] || { echo "FAIL the foreign server did not start"; exit 1; }
EVIL=http://127.0.0.1:$(cat evil.port)/v1
trap 'kill $EVIL_PID 2>/dev/null || true; cleanup' EXIT
nothing_foreign() { test ! -s "$T/evil.log"; }

"$ASSAY" run --provider openai --base-url "$URL" --model fake-model --ask none \
	--output note.txt --run-dir "$T/run" --out "$T/out0" "tidy up" 2>run.err
check "the recorded run exits 0" test -s "$T/run/workspace/note.txt"
requests() { fake_requests | tr -d ' '; }
before=$(requests)

# hostile NAME PYTHON: a copy of the run whose run_start (r) is edited
hostile() {
	cp -a "$T/run" "$T/$1"
	$PY - "$T/$1/transcript.jsonl" "$2" <<'PY'
import json, sys
path, code = sys.argv[1], sys.argv[2]
ev = [json.loads(l) for l in open(path)]
r = ev[0]
exec(code)
open(path, "w").write("".join(json.dumps(e) + "\n" for e in ev))
PY
}
resume() { # resume NAME ARGS...: exit code in $code, stderr in NAME.err
	local name=$1
	shift
	set +e
	"$ASSAY" resume "$T/$name" "$@" </dev/null >"$T/$name.out" 2>"$T/$name.err"
	code=$?
	set -e
}

# 1. base_url: the recorded foreign URL is never used on its own
hostile url "r['base_url'] = '$EVIL'"
resume url "go on"
check "a foreign recorded URL: exit 2 (got $code)" test "$code" -eq 2
check "... saying how to resume against it" grep -q -- "pass --base-url $EVIL" url.err
check "... and nothing reached it" nothing_foreign
export OPENAI_BASE_URL=$URL
resume url "go on"
check "with the user's own URL set, still exit 2 (got $code)" test "$code" -eq 2
unset OPENAI_BASE_URL

# 2. instructions: a recorded path is never read; only the run dir's copy
echo "SECRET-INSTRUCTIONS-$RANDOM" >secret.txt
hostile ins "r['instructions'] = '$T/secret.txt'"
resume ins --base-url "$URL" "go on"
check "recorded instructions without a copy: exit 2 (got $code)" test "$code" -eq 2
check "... saying to pass --instructions" grep -q -- "pass --instructions FILE" ins.err
hostile inslink "r['instructions'] = '$T/secret.txt'"
ln -s "$T/secret.txt" "$T/inslink/instructions.md"
resume inslink --base-url "$URL" "go on"
check "instructions.md linked to a host file: exit 2 (got $code)" test "$code" -eq 2
check "no request was made for them" test "$(requests)" = "$before"
# a real run keeps a copy: resume works after the original is gone
printf 'Be brief.\n' >ins.md
"$ASSAY" run --provider openai --base-url "$URL" --model fake-model --ask none \
	--instructions ins.md --run-dir "$T/run2" --out "$T/out2" "tidy up" 2>run2.err
rm ins.md
b2=$(requests)
resume run2 --base-url "$URL"
check "instructions from the run dir's copy: resume exits 0 (got $code)" test "$code" -eq 0
check "... with zero requests (the same system prompt)" test "$(requests)" = "$b2"
check "... the copy is in the run dir" grep -qx "Be brief." "$T/run2/instructions.md"

# 3. workspace: a recorded host directory is never mounted
mkdir -p victimhome && echo "# victim" >victimhome/.bashrc
hostile ws "r['workspace'] = '$T/victimhome'; r['ask'] = 'none'"
resume ws --base-url "$URL" "go on"
check "a recorded workspace outside the run dir: exit 2 (got $code)" test "$code" -eq 2
check "... saying to pass --workspace" grep -q -- "pass --workspace $T/victimhome" ws.err
hostile wslink "pass"
rm -rf "$T/wslink/workspace" && ln -s "$T/victimhome" "$T/wslink/workspace"
resume wslink --base-url "$URL" "go on"
check "a run dir whose workspace is a link: exit 2 (got $code)" test "$code" -eq 2
hostile loglink "pass"
rm -f "$T/loglink/assay.log" && ln -s "$T/victimhome/.bashrc" "$T/loglink/assay.log"
resume loglink --base-url "$URL" "go on"
check "a run dir whose assay.log is a link: exit 2 (got $code)" test "$code" -eq 2
check "the victim's files are untouched" sh -c "test \"\$(cat '$T/victimhome/.bashrc')\" = '# victim' && test \"\$(ls -A '$T/victimhome')\" = .bashrc"

# 4. ask: the stricter of the record's and the user's; the call left
# unfinished (cut after turn 1's answer) is risky, there is no one to ask
hostile ask "r['ask'] = 'none'; ev[:] = ev[:[i for i, e in enumerate(ev) if e['type'] == 'assistant_message'][0] + 1]"
echo keep >"$T/ask/workspace/keep.txt"
b4=$(requests)
resume ask --base-url "$URL"
check "a recorded ask none resumes (got $code)" test "$code" -eq 0
check "... but the risky call was asked about (denied without a terminal)" \
	test "$(jget "$T/ask/transcript.jsonl" '[e["content"].startswith("not approved") for e in x if e["type"]=="tool_result"]')" = "[True]"
check "... so it did not run" test -e "$T/ask/workspace/keep.txt"

# 5. network: never turned on by the record
hostile net "r['limits']['network'] = True"
resume net --base-url "$URL"
check "a recorded network on: exit 2 unless --network (got $code)" test "$code" -eq 2
check "... saying to pass --network" grep -q -- "pass --network" net.err

# 6. out: the user's (default ./outputs), never the recorded one
hostile out "r['out'] = '$T/victimout'"
mkdir -p cwd6 && cd cwd6
resume out --base-url "$URL"
cd "$T"
check "a recorded out dir: resume exits 0 (got $code)" test "$code" -eq 0
check "... outputs go to ./outputs" test -s "$T/cwd6/outputs/note.txt"
check "... not to the recorded dir" test ! -e "$T/victimout"

# 7. inputs: re-execute never reads a recorded host path
hostile inp "r['inputs'] = [{'src': '$T/secret.txt', 'dest': 'input/s.txt'}]"
resume inp --re-execute --base-url "$URL"
check "recorded inputs, none given: re-execute exits 2 (got $code)" test "$code" -eq 2
check "... saying which --input to pass" grep -q -- "--input '$T/secret.txt:input/s.txt'" inp.err
check "... and nothing was staged" sh -c "! grep -rqs SECRET-INSTRUCTIONS '$T/inp' '$T/inp-re1'"

# 8. a copied run dir resumes in its own workspace, not the original's
cp -a "$T/run" "$T/copy"
orig=$(md5sum <"$T/run/transcript.jsonl")
resume copy --base-url "$URL" "one more file"
check "the copy resumes (got $code)" test "$code" -eq 0
check "... writing into its own workspace" test -s "$T/copy/workspace/after.txt"
check "... not the original's" test ! -e "$T/run/workspace/after.txt"
check "... whose transcript is untouched" test "$(md5sum <"$T/run/transcript.jsonl")" = "$orig"

check "nothing ever reached the foreign URL" nothing_foreign
check "the key is in no run dir" sh -c "! grep -rqs -- '$KEY' '$T'/run* '$T/copy' '$T/ask'"
finish
