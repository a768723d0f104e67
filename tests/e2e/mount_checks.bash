# What mounted_inputs.sh (local) and mounted_inputs_docker.sh share:
# the inputs (a file, and a directory with its own .assay/) and the
# checks of a run of data/mount_tries.json, which tries to change them
# every way the sandbox offers. Sourced after lib.bash, in $T.

# mount_data: data/energy.csv and data/dir, with their stamps taken
# (before, sum_before) to compare after the run.
stamp() { stat -c '%s %y %i' "$@"; }
mount_data() {
	mkdir -p data/dir/sub data/dir/.assay
	printf 'day,kwh\n1,42\n2,43\n' >data/energy.csv
	echo inner >data/dir/sub/f.txt
	echo own-state >data/dir/.assay/state
	touch -d '2021-03-04 05:06:07.123456789' data/energy.csv data/dir/sub/f.txt
	before=$(stamp data/energy.csv data/dir/sub/f.txt)
	sum_before=$(cat data/energy.csv data/dir/sub/f.txt | sha256sum)
}

# mount_tries_checks RUN_DIR: the run of mount_tries.json read both
# inputs and changed neither, through any tool.
mount_tries_checks() {
	local tr=$1/transcript.jsonl out listed
	out=$(cat "$1"/exec/*.stdout 2>/dev/null)
	check "the sandbox reads both inputs" \
		sh -c "printf '%s' \"\$1\" | grep -q '^1,42$' && printf '%s' \"\$1\" | grep -qx 6" _ "$out"
	for k in append trunc rm mv chmod touch dirwrite dircreate rmdir py utime; do
		check "shell/python: $k fails" sh -c "printf '%s\n' \"\$1\" | grep -qx '$k=[1-9][0-9]*'" _ "$out"
	done
	check "a directory input does not show its .assay/ (empty, and its file is not there)" \
		sh -c "printf '%s\n' \"\$1\" | grep -qx 0 && printf '%s\n' \"\$1\" | grep -qx 'own=1' && ! printf '%s' \"\$1\" | grep -q own-state" _ "$out"
	check "write_file into either input is refused, saying it is read-only" \
		test "$(jget "$tr" "[e['is_error'] and 'mounted read-only' in e['content'] for e in x if e['type'] == 'tool_result'][1:3]")" = "[True, True]"
	check "read_file reads the inputs' real bytes" \
		test "$(jget "$tr" "[e['content'] for e in x if e['type'] == 'tool_result'][3:5]")" = "['day,kwh\\n1,42\\n2,43\\n', 'inner\\n']"
	check "read_file does not reach the hidden .assay/" \
		test "$(jget "$tr" "[e['is_error'] for e in x if e['type'] == 'tool_result'][5]")" = True
	listed=$(jget "$tr" "[e['content'] for e in x if e['type'] == 'tool_result'][6]")
	check "list_files shows the inputs with their real sizes" \
		sh -c "printf '%s' \"\$1\" | grep -q 'input/energy.csv  18 bytes' && printf '%s' \"\$1\" | grep -q 'input/dir/sub/f.txt  6 bytes'" _ "$listed"
	check "python reads it (sum 85) and cannot append (errno 30)" \
		test "$(jget "$tr" "[e['content'] for e in x if e['type'] == 'tool_result'][7]")" = "$(printf '85\nrefused 30')"
	check "the host files' bytes are unchanged" test "$(cat data/energy.csv data/dir/sub/f.txt | sha256sum)" = "$sum_before"
	check "the host files' size, mtime (ns) and inode are unchanged" test "$(stamp data/energy.csv data/dir/sub/f.txt)" = "$before"
	check "the host dir has no new file" test "$(find data | sort | tr '\n' ' ')" = \
		"data data/dir data/dir/.assay data/dir/.assay/state data/dir/sub data/dir/sub/f.txt data/energy.csv "
}

# mount_copy_check RUN_DIR [ASSAY OPTIONS...]: "copy": true gives a
# writable copy, recorded as such and kept in the archive; the original
# is untouched. Uses edit.json, which it writes.
mount_copy_check() {
	local run=$1 code
	shift
	cat >copy.json <<JSON
{"inputs": [{"src": "$T/data/energy.csv", "dest": "input/energy.csv", "copy": true}]}
JSON
	cat >edit.json <<'JSON'
{"turns": [
 {"text": "Editing.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo 3,44 >> input/energy.csv && wc -l < input/energy.csv"}}]},
 {"text": "Done.", "tool_calls": []}
]}
JSON
	set +e
	"$ASSAY" run "$@" --provider script --script edit.json --ask none --run-dir "$run" \
		--config copy.json "edit" </dev/null >copy.out 2>copy.err
	code=$?
	set -e
	check "a copy input is writable (exit $code, 4 lines)" \
		sh -c "test $code -eq 0 && grep -qx 4 '$run'/exec/*.stdout"
	check "... recorded as a copy, kept in the archive, the original untouched" \
		sh -c "test \"\$2\" = copy && tar -tf '$run/workspace.tar.zst' | grep -qx input/energy.csv &&
			test \"\$(stat -c '%s %y %i' data/energy.csv data/dir/sub/f.txt)\" = \"\$1\"" _ "$before" \
		"$(jget "$run/transcript.jsonl" "x[0]['inputs'][0]['mode']")"
}
