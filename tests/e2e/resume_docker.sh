#!/usr/bin/env bash
# assay resume of a run made with --sandbox docker, against a real
# daemon and the fake OpenAI server (which logs every request): the run
# writes files across turns and is killed with kill -9 in the middle of
# turn 3; resume starts a fresh container, loads the workspace from the
# run's workspace.tar.zst (persisted after every call), answers turns 1-2
# from the cache (zero requests) and goes live at turn 3, whose command
# reads the files written before the kill. Then a completed run resumed
# again (zero requests); a kill -9 in the middle of a command whose turn
# had finished another call (that call's file is in the archive, only
# the unfinished command runs again); and archives changed in the run dir
# (an entry "../x", an absolute path, a device node, a setuid file, a
# path through a link, a cut gzip, none at all): each refused with a
# clear message naming the file (exit 2), nothing run, nothing sent;
# the assay-archive restore check case by case (hard links, fifos, the
# rewritten headers). No container or volume is left. Skipped (77) only
# when no daemon answers.
source "$(dirname "$0")/lib.bash"
need_docker_image
cd "$T"
P=dkres$$- # run directory names, which label the containers
DOCKER_REAP=$P # what a failed check leaves goes at the exit

requests() { fake_requests | tr -d ' '; }

cat >script.json <<'JSON'
{"turns": [
 {"text": "Step one.", "tool_calls": [{"name": "shell", "arguments": {"command": "mkdir -p output && echo one > output/one.txt && ln -s one.txt output/link.txt"}}]},
 {"text": "Step two.", "tool_calls": [{"name": "write_file", "arguments": {"path": "output/two.txt", "content": "two\n"}}]},
 {"text": "Step three, streamed slowly before the last command.", "tool_calls": [{"name": "shell", "arguments": {"command": "cat output/link.txt output/two.txt > output/three.txt && echo read: $(cat output/one.txt output/two.txt) && echo input: $(cat input/data.txt)"}}]},
 {"text": "Finished.", "tool_calls": []}
]}
JSON
echo "the input" >data.txt
# a copied input (a bound one is bound again, after its hash check:
# mounted_inputs_docker.sh): resume must not stage it again
cat >copy.json <<JSON
{"inputs": [{"src": "$T/data.txt", "dest": "input/data.txt", "copy": true}]}
JSON
# request 3 (turn 3) sends its first event, then stalls for 60 s
start_fake script.json --fault 'stall@3:60'
export OPENAI_API_KEY=sk-resume-docker
R=$T/${P}run
tr=$R/transcript.jsonl
outs=(--output output/one.txt --output output/two.txt --output output/three.txt)
"$ASSAY" run --sandbox docker --provider openai --base-url "$URL" --model fake-model \
	--config copy.json "${outs[@]}" --run-dir "$R" --out "$T/out" "make three files" \
	</dev/null 2>run.err &
pid=$!
# inside turn 3's request: the server has it (and stalls after its
# first event), the record's last event is its model_request
in_turn3() {
	[ "$(requests)" -ge 3 ] &&
		[ "$(jget "$tr" '(x[-1]["type"], x[-1].get("turn"))' 2>/dev/null)" = "('model_request', 3)" ]
}
for _ in $(seq 1200); do in_turn3 && break; sleep 0.05; done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
check "the run was killed during turn 3's request (no answer to it)" \
	test "$(jget "$tr" '[(e["type"],e["turn"]) for e in x if e["type"] in ("model_request","assistant_message")][-1]')" = "('model_request', 3)"
check "the killed run left its container behind (what resume must sweep)" \
	test "$(docker_left ${P}run)" -gt 0
check "the workspace was persisted after each call: the first call's file in it" \
	ws_has "$R" output/one.txt
check "... and the second's (whole archive, then deltas)" ws_has "$R" output/two.txt
check "... the second call's snapshot is a delta holding only its file" \
	test "$(tar -tf "$R"/workspace.d/000001-*.tar.zst 2>/dev/null | tr '\n' ' ')" = "/.assay-delta output/two.txt "
cp -a "$R" "$T/pristine" # the run as the kill left it, for the hostile cases
echo "changed since" >data.txt # resume must not stage the inputs again

# --- resume after kill -9 --------------------------------------------
kill "$FAKE_PID" 2>/dev/null || true
wait "$FAKE_PID" 2>/dev/null || true
FAKE_PID=
start_fake script.json
set +e
"$ASSAY" resume "$R" --base-url "$URL" --out "$T/out" </dev/null 2>resume.err
code=$?
set -e
check "resume exits 0 (got $code)" test "$code" -eq 0
[ "$code" -eq 0 ] || cat resume.err
check "the recorded sandbox was docker, and resume used it" \
	test "$(jget "$tr" '[e["sandbox"]["backend"] for e in x if e["type"]=="run_resume"]')" = "['docker']"
sent=$($PY -c 'import json,sys; print([json.loads(l)["turn_index"] for l in open(sys.argv[1])])' "$FAKE_LOG")
check "zero requests for the recorded turns: only turns 3 and 4 were sent (turn indexes $sent)" \
	test "$sent" = "[2, 3]"
check "turns 1 and 2 came from the cache" \
	test "$(jget "$tr" '[e["turn"] for e in x if e["type"]=="model_request" and e["cached"]]')" = "[1, 2]"
check "no recorded command ran again (one exec after the resume)" \
	test "$(jget "$tr" 'len([e for e in x[[i for i,e in enumerate(x) if e["type"]=="run_resume"][0]:] if e["type"]=="exec_start"])')" = 1
res=$(jget "$tr" '[e["content"] for e in x if e["type"]=="tool_result"][-1]')
check "turn 3's command read the files written before the kill (got: $res)" \
	grep -q "read: one two" <<<"$res"
check "... through the symbolic link the run made" cmp -s "$T/out/output/three.txt" - <<<"one
two"
check "the input is the one the run staged, not staged again" \
	grep -q "input: the input" <<<"$res"
check "the run completed" test "$(jget "$tr" 'x[-1]["status"]')" = completed
for f in one two three; do
	check "output/$f.txt delivered" test -s "$T/out/output/$f.txt"
done
check "every line of the transcript is whole JSON" \
	$PY -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$tr"
check "the assay log says the workspace was restored" \
	grep -q "workspace restored from" "$R/assay.log"
check "no container or volume left (the killed run's swept too)" test "$(docker_left ${P}run)" -eq 0

# --- the completed run resumed again: nothing sent, outputs again ----
n=$(requests)
set +e
"$ASSAY" resume "$R" --base-url "$URL" --out "$T/out2" </dev/null 2>again.err
code=$?
set -e
check "resume of the completed docker run exits 0 (got $code)" test "$code" -eq 0
[ "$code" -eq 0 ] || cat again.err
check "... sending nothing" test "$(requests)" = "$n"
check "... and delivers the same three.txt from the restored container" \
	cmp -s "$T/out/output/three.txt" "$T/out2/output/three.txt"
check "no container or volume left" test "$(docker_left ${P}run)" -eq 0

# --- kill -9 in the middle of a command, after a call of the same turn -
# the archive is persisted after every call, so the write_file that
# finished before the kill is in it though its turn never ended
cat >script2.json <<'JSON'
{"turns": [
 {"text": "One.", "tool_calls": [{"name": "shell", "arguments": {"command": "mkdir -p output && echo one > output/one.txt"}}]},
 {"text": "Two calls.", "tool_calls": [
   {"name": "write_file", "arguments": {"path": "output/two.txt", "content": "two\n"}},
   {"name": "shell", "arguments": {"command": "echo started; sleep 4; cat output/one.txt output/two.txt > output/three.txt; echo done: $(cat output/three.txt)"}}]},
 {"text": "Finished.", "tool_calls": []}
]}
JSON
start_fake script2.json
R2=$T/${P}mid
"$ASSAY" run --sandbox docker --provider openai --base-url "$URL" --model fake-model \
	--output output/three.txt --run-dir "$R2" --out "$T/outmid" "three files" \
	</dev/null 2>mid.err &
pid=$!
# the second call's command is running (it said so) and the first
# call's file is in the archive (persisted after each call)
mid_call() {
	[ "$(grep -c '"type":"exec_start"' "$R2/transcript.jsonl" 2>/dev/null)" = 2 ] &&
		grep -qx started "$R2/exec/"*.stdout 2>/dev/null &&
		ws_files "$R2" 2>/dev/null | grep -x output/two.txt >/dev/null
}
for _ in $(seq 1200); do mid_call && break; sleep 0.05; done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
check "mid-call: killed while turn 2's second call ran (one of its two results recorded)" \
	test "$(jget "$R2/transcript.jsonl" 'len([e for e in x if e["type"]=="tool_result"])')" = 2
check "mid-call: the archive holds the first call's file" \
	ws_has "$R2" output/two.txt
n=$(requests)
set +e
"$ASSAY" resume "$R2" --base-url "$URL" --out "$T/outmid" </dev/null 2>midres.err
code=$?
set -e
check "mid-call: resume exits 0 (got $code)" test "$code" -eq 0
[ "$code" -eq 0 ] || cat midres.err
check "mid-call: one request, for the turn after the recorded ones" \
	test "$($PY -c 'import json,sys; print([json.loads(l)["turn_index"] for l in open(sys.argv[1])][int(sys.argv[2]):])' "$FAKE_LOG" "$n")" = "[2]"
check "mid-call: only the unfinished command ran again, and saw both files" \
	test "$(jget "$R2/transcript.jsonl" '[e["content"].split(chr(10))[:2] for e in x if e["type"]=="tool_result"][2:]')" = "[['started', 'done: one two']]"
check "mid-call: output delivered" cmp -s "$T/outmid/output/three.txt" - <<<"one
two"
check "mid-call: no container or volume left" test "$(docker_left ${P}mid)" -eq 0

# --- archives changed in the run dir ----------------------------------
# hostile NAME KIND: a copy of the killed run whose workspace.tar.zst is
# replaced by a workspace.tar.gz (as older runs have) with an entry of
# KIND, or cut in half, or removed
hostile() {
	local d=$T/${P}$1
	cp -a "$T/pristine" "$d"
	$PY - "$d/workspace.tar.zst" "$2" <<'EOF'
import io, os, sys, tarfile
zst, kind = sys.argv[1], sys.argv[2]
if kind == "cut":
    data = open(zst, "rb").read(); open(zst, "wb").write(data[: len(data) // 2]); sys.exit()
os.unlink(zst)
if kind == "none":
    sys.exit()
path = zst[: -len(".zst")] + ".gz"
def add(t, name, typ=tarfile.REGTYPE, data=b"evil\n", mode=0o644, link=""):
    ti = tarfile.TarInfo(name); ti.type = typ; ti.mode = mode; ti.linkname = link
    if typ == tarfile.CHRTYPE: ti.devmajor, ti.devminor = 1, 3
    ti.size = len(data) if typ == tarfile.REGTYPE else 0
    t.addfile(ti, io.BytesIO(data) if typ == tarfile.REGTYPE else None)
with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as t:
    add(t, "output/one.txt", data=b"one\n")
    if kind == "dotdot": add(t, "../x")
    if kind == "abs": add(t, "/etc/evil")
    if kind == "dev": add(t, "output/null", tarfile.CHRTYPE)
    if kind == "suid": add(t, "output/sh", mode=0o4755)
    if kind == "through":
        add(t, "etc", tarfile.SYMTYPE, link="/etc")
        add(t, "etc/evil")
EOF
}
for c in "dotdot:entry '../x' refused" "abs:entry '/etc/evil' refused" \
	"dev:a device node" "suid:a setuid or setgid file" \
	"through:under a symbolic link" "cut:truncated" "none:is missing"; do
	kind=${c%%:*} want=${c#*:}
	hostile "$kind" "$kind"
	d=$T/${P}$kind
	before=$(wc -c <"$d/transcript.jsonl")
	n=$(requests)
	set +e
	"$ASSAY" resume "$d" --base-url "$URL" --out "$T/out-$kind" </dev/null 2>"$kind.err"
	code=$?
	set -e
	check "$kind: refused with exit 2 (got $code)" test "$code" -eq 2
	check "$kind: the message says why ($want)" grep -qi -- "$want" "$kind.err"
	check "$kind: ... names the archive and suggests --re-execute" \
		sh -c "grep -q -- '$d/workspace.tar.[gz][zs]' '$kind.err' && grep -q -- --re-execute '$kind.err'"
	check "$kind: nothing sent, nothing recorded, no output" \
		sh -c "test '$(requests)' = '$n' && test \$(wc -c <'$d/transcript.jsonl') = '$before' && test ! -e '$T/out-$kind'"
	check "$kind: no container or volume left" test "$(docker_left ${P}$kind)" -eq 0
done
# --- the helper's check and clean stream, case by case ----------------
ARC=${ASSAY_ARCHIVE_BIN:-$(dirname "$ASSAY")/assay-archive}
$PY - "$T/h" <<'EOF'
import io, os, sys, tarfile
d = sys.argv[1]; os.makedirs(d)
def mk(name, entries):
    with tarfile.open(f"{d}/{name}.tar.gz", "w:gz", format=tarfile.PAX_FORMAT) as t:
        for n, typ, link, mode, pax in entries:
            ti = tarfile.TarInfo(n); ti.type = typ; ti.linkname = link; ti.mode = mode
            ti.uid, ti.uname, ti.pax_headers = 1234, "someone", pax
            data = b"data\n" if typ == tarfile.REGTYPE else b""
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data) if data else None)
R, D, L, H, F = tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.FIFOTYPE
mk("good", [("sub", D, "", 0o2755, {}), ("sub/f", R, "", 0o640, {"SCHILY.xattr.security.capability": "x"}),
            ("sub/hard", H, "sub/f", 0o640, {}), ("venv-python", L, "/usr/bin/python3", 0o777, {}),
            ("pipe", F, "", 0o644, {})])
mk("hardout", [("h", H, "../../etc/passwd", 0o644, {})])
mk("hardlater", [("h", H, "f", 0o644, {}), ("f", R, "", 0o644, {})])
EOF
check "helper: a clean archive is accepted" sh -c "'$ARC' restore '$T/h/good.tar.gz' >'$T/h/clean.tar' 2>'$T/h/good.err'"
check "helper: ... the fifo is left out, and said so" grep -q "pipe left out" "$T/h/good.err"
check "helper: ... headers rewritten: owners root, no xattrs, no setgid, links kept" \
	$PY - "$T/h/clean.tar" <<'EOF'
import sys, tarfile
t = tarfile.open(sys.argv[1]); m = {i.name: i for i in t.getmembers()}
assert sorted(m) == ["sub", "sub/f", "sub/hard", "venv-python"], sorted(m)
assert all(i.uid == 0 and not i.uname for i in m.values()), [(i.uid, i.uname) for i in m.values()]
assert not any(k.startswith("SCHILY.xattr") for i in m.values() for k in i.pax_headers)
assert m["sub"].mode == 0o755 and m["sub/f"].mode == 0o640, (oct(m["sub"].mode), oct(m["sub/f"].mode))
assert m["sub/hard"].islnk() and m["sub/hard"].linkname == "sub/f"
assert m["venv-python"].issym() and m["venv-python"].linkname == "/usr/bin/python3"
assert t.extractfile("sub/f").read() == b"data\n"
EOF
for c in "hardout:a hard link to '../../etc/passwd'" "hardlater:not an earlier file"; do
	kind=${c%%:*} want=${c#*:}
	set +e
	"$ARC" restore "$T/h/$kind.tar.gz" >"$T/h/$kind.tar" 2>"$T/h/$kind.err"
	code=$?
	set -e
	check "helper: $kind refused (exit $code), nothing written" \
		sh -c "test $code -eq 1 && test ! -s '$T/h/$kind.tar'"
	check "helper: $kind: the reason ($want)" grep -q -- "$want" "$T/h/$kind.err"
done

echo "--- a refusal, as the user sees it:"
cat dotdot.err
finish
