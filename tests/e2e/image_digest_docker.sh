#!/usr/bin/env bash
# A docker run records the image it ran on: run_start's image id is
# what `docker image inspect` says, and its repo digests too (none for
# the offline-built image: said, not left out); every export's header
# shows the id (md, script, ipynb); `assay doctor` shows it whole. Then
# the image under the run's tag changes (a commit of a container of it,
# offline): a re-execute and a resume each warn, naming both ids, and
# record the id the run had (image_id_was); the resumed run's export says
# so where it went on. Works on a tag of this test's own, removed at the
# end. Skipped (77) only when no Docker daemon answers.
source "$(dirname "$0")/lib.bash"
need_docker_image
cd "$T"
TAG=assay-e2e-digest:$$
trap 'docker rm -f "assay-e2e-digest-$$" >/dev/null 2>&1 || true
	docker rmi -f "$TAG" >/dev/null 2>&1 || true; cleanup' EXIT
docker tag "$image" "$TAG"
cat >script.json <<'JSON'
{"turns": [
 {"text": "Writing.", "tool_calls": [{"name": "shell", "arguments": {"command": "mkdir -p output && echo hi > output/a.txt"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
R=$T/run
tr=$R/transcript.jsonl
sb() { jget "$1" "[e['sandbox'] for e in x if e['type'] in ('run_start','run_resume')][${2:-0}]$3"; }
id1=$(docker image inspect -f '{{.Id}}' "$TAG")
digests1=$(docker image inspect -f '{{json .RepoDigests}}' "$TAG")

set +e
"$ASSAY" run --sandbox docker --image "$TAG" --provider script --script script.json \
	--run-dir "$R" "write a" </dev/null 2>run.stderr
code=$?
set -e
check "the docker run exits 0 (got $code)" test "$code" -eq 0 || tail -5 run.stderr
check "run_start records the image id docker inspect gives ($id1)" \
	test "$(sb "$tr" 0 "['image_id']")" = "$id1"
check "... and its repo digests as docker inspect gives them ($digests1)" \
	$PY -c 'import json,sys; x=json.loads(open(sys.argv[1]).readline()); assert x["sandbox"]["repo_digests"] == (json.loads(sys.argv[2]) or []), x["sandbox"]' \
	"$tr" "$digests1"
echo "start: $(grep -o 'ready in [0-9]* ms' "$R/assay.log" | head -1) (the image facts come from the image inspect the start makes anyway)"
"$ASSAY" export "$R" --format md -o "$T/r.md"
"$ASSAY" export "$R" --format script -o "$T/r.py"
"$ASSAY" export "$R" --format ipynb -o "$T/r.ipynb"
check "export md shows the image id" grep -qF -- "- **image id**: $id1; repo digests: " "$T/r.md"
check "export script's header shows it" sh -c "head -12 '$T/r.py' | grep -qF '#   image id: $id1; repo digests: '"
check "export ipynb's first cell and metadata show it" $PY - "$T/r.ipynb" "$id1" <<'PY'
import json, sys
nb = json.load(open(sys.argv[1]))
assert ("image id: " + sys.argv[2]) in "".join(nb["cells"][0]["source"]), nb["cells"][0]
assert nb["metadata"]["assay"]["sandbox"]["image_id"] == sys.argv[2], nb["metadata"]["assay"]
PY
if [ "$digests1" = "[]" ] || [ "$digests1" = null ]; then
	check "... a locally built image: no repo digests, and said so" \
		grep -qF "repo digests: none (built locally: never pushed to or pulled from a registry)" "$T/r.md"
fi
printf '{"sandbox": "docker", "image": "%s"}\n' "$TAG" >dk.json
"$ASSAY" doctor --config dk.json </dev/null >doctor.txt 2>&1 || true
check "doctor shows the whole id" grep -qF "OK    image: $TAG is present: id $id1; repo digests: " doctor.txt

# --- the image changes under the tag ----------------------------------
docker create --name "assay-e2e-digest-$$" "$TAG" true >/dev/null
docker commit -c "LABEL assay.e2e.digest=$$" "assay-e2e-digest-$$" "$TAG" >/dev/null
docker rm -f "assay-e2e-digest-$$" >/dev/null
id2=$(docker image inspect -f '{{.Id}}' "$TAG")
check "the tag now names another image" test "$id2" != "$id1"
set +e
"$ASSAY" resume "$R" --re-execute --run-dir "$T/re" </dev/null 2>re.stderr
code=$?
set -e
check "re-execute on the changed image exits 0 (got $code)" test "$code" -eq 0 || tail -5 re.stderr
check "... warns, naming both ids" \
	grep -qF "warning: the image changed since the run was recorded: it ran on $id1, this sandbox runs $id2 ($TAG)" re.stderr
check "... its run_start records the new id and the one the run had" \
	test "$(sb "$T/re/transcript.jsonl" 0 "['image_id'], x[0]['sandbox']['image_id_was']")" = "('$id2', '$id1')"
set +e
"$ASSAY" resume "$R" </dev/null 2>resume.stderr
code=$?
set -e
check "resume in place on the changed image exits 0 (got $code)" test "$code" -eq 0 || tail -5 resume.stderr
check "... warns, naming both ids" \
	grep -qF "warning: the image changed since the run was recorded: it ran on $id1, this sandbox runs $id2 ($TAG)" resume.stderr
check "... its run_resume records both" \
	test "$(sb "$tr" 1 "['image_id'], [e for e in x if e['type']=='run_resume'][0]['sandbox']['image_id_was']")" = "('$id2', '$id1')"
check "... and the log says so" grep -q "the image changed since the run was recorded" "$R/assay.log"
"$ASSAY" export "$R" --format md -o "$T/r2.md"
check "the resumed run's export says where it went on on another image" \
	grep -qF "the image changed since the run was recorded: it ran on $id1, this sandbox runs $id2" "$T/r2.md"
check "... and its header still shows the image the run began on" grep -qF -- "- **image id**: $id1" "$T/r2.md"
set +e
"$ASSAY" resume "$R" </dev/null 2>again.stderr
set -e
check "a second resume on the same image warns no more" sh -c "! grep -q 'image changed' again.stderr"
finish
