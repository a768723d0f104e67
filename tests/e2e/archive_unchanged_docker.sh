#!/usr/bin/env bash
# The run's end does not archive an unchanged workspace again (issue 41;
# src/agent/persist.c), docker sandbox, against a real daemon: the
# first call's snapshot is the whole archive and a call that changes
# nothing keeps it, so the end keeps it too (the log says so); a chmod
# of a file goes into a per-call delta, which the end folds into a new
# whole archive; a chmod of a directory (in no delta) makes the end
# archive again; a resume restores the archive, and its end keeps it
# when its call changes nothing; a mounted input makes the end archive
# always. No container or volume is left. Skipped (77) only when no
# daemon answers.
source "$(dirname "$0")/lib.bash"
need_docker_image
cd "$T"
P=dkunch$$- # run directory names, which label the containers
DOCKER_REAP=$P # what a failed check leaves goes at the exit
cat >script.json <<'JSON'
{"turns": [
 {"text": "Making a file.", "tool_calls": [{"name": "shell", "arguments": {"command": "mkdir -p sub && echo one > sub/a.txt"}}]},
 {"text": "Reading it.", "tool_calls": [{"name": "shell", "arguments": {"command": "cat sub/a.txt"}}]},
 {"text": "Done.", "tool_calls": []},
 {"text": "A chmod.", "tool_calls": [{"name": "shell", "arguments": {"command": "chmod +x sub/a.txt"}}]},
 {"text": "Done.", "tool_calls": []},
 {"text": "A chmod of the directory.", "tool_calls": [{"name": "shell", "arguments": {"command": "chmod 700 sub"}}]},
 {"text": "Done.", "tool_calls": []},
 {"text": "Reading it.", "tool_calls": [{"name": "shell", "arguments": {"command": "cat sub/a.txt"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
start_fake script.json --key sk-unchanged-docker
export OPENAI_API_KEY=sk-unchanged-docker
R=$T/${P}run
A=$R/workspace.tar.zst
unchanged="end: the workspace is unchanged since $A: not archived again"
# said TEXT N: whether the Nth run's end (1-based; one decision line
# each in the log: archived, and why, or unchanged) says TEXT
said() {
	grep -E 'end: the workspace is (archived \(|unchanged since)' "$R/assay.log" |
		sed -n "$2p" | grep -qF "$1"
}
stamp() { stat -c '%i %s %Y.%y' "$A"; }
member() { tar --zstd -xOf "$A" "$1"; }
mode() { tar --zstd -tvf "$A" "$1" | awk 'NR == 1 { print substr($0, 1, 10) }'; } # its first entry's
go() { # go PROMPT: a resume with PROMPT, exit 0
	local code=0
	"$ASSAY" resume "$R" --ask none --base-url "$URL" "$1" >go.out 2>go.err || code=$?
	check "resume '$1' exits 0 (got $code)" test "$code" -eq 0
}

set +e
"$ASSAY" run --sandbox docker --provider openai --base-url "$URL" --model fake-model \
	--ask none --run-dir "$R" "make a file" >run.out 2>run.err
code=$?
set -e
check "the run exits 0 (got $code)" test "$code" -eq 0
check "its first call's snapshot was the whole archive" \
	grep -q "persist: the whole workspace (no whole archive yet)" "$R/assay.log"
check "its end kept it: the second call changed nothing (the log says so)" said "$unchanged" 1
check "... run_end names it, and it holds sub/a.txt" \
	test "$(jget "$R/transcript.jsonl" '[e for e in x if e["type"]=="run_end"][-1]["archive"]')|$(member sub/a.txt)" = "$A|one"

# 1. a chmod of a file: a per-call delta (its ctime moved), folded at the end
go "chmod the file"
check "a chmod alone is a delta" grep -q "persist: a delta" "$R/assay.log"
check "... which the end folds into a new whole archive" said "end: the workspace is archived (deltas to fold in)" 2
check "... that holds the new mode, and no delta is left" \
	sh -c "test \"\$(tar --zstd -tvf '$A' sub/a.txt | cut -c1-10)\" = -rwxr-xr-x && test ! -e '$R/workspace.d'"

# 2. a chmod of a directory (no delta holds it): archived again at the end
go "chmod the directory"
check "a directory's chmod makes the end archive again" \
	said "end: the workspace is archived (what it holds is not the last listing)" 3
check "... the archive holds the new mode" test "$(mode sub/)" = drwx------

# 3. a resume (the archive restored) whose call changes nothing
before=$(stamp)
go "read it again"
check "... the restored file is read (by the resume's call)" \
	grep -q "^one" "$(ls -t "$R"/exec/*.stdout | head -1)"
check "a resume whose call changes nothing keeps the archive" said "$unchanged" 4
check "... untouched" test "$(stamp)" = "$before"
check "no container or volume is left" test "$(docker_left "${P}run")" = 0

# 4. a mounted input: archived at the end, always
echo data >data.txt
start_fake script.json --key sk-unchanged-docker
R2=$T/${P}mount
set +e
"$ASSAY" run --sandbox docker --provider openai --base-url "$URL" --model fake-model \
	--ask none --input data.txt --run-dir "$R2" "make a file" >run2.out 2>run2.err
code=$?
set -e
check "a run with a mounted input exits 0 (got $code)" test "$code" -eq 0
check "... its end archives again (mounted inputs: not in it)" \
	grep -q "end: the workspace is archived (mounted inputs: not in it)" "$R2/assay.log"
check "... and no container or volume is left" test "$(docker_left "${P}mount")" = 0
finish
