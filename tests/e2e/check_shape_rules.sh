#!/usr/bin/env bash
# scripts/check-shape catches a planted violation of each rule that
# checks the record (docs/ARCHITECTURE.md against the tree): a folder
# including a header the layering forbids (a tui-private header from
# cli/, a layer above from core/, another backend's own header), a file
# missing from the file map or with a stale row, a generated table out
# of date (when scripts/doc-events / doc-config exist), a field of a part
# written outside its owner, an event field read by string, a config
# key spelled outside its table, a fork outside core/spawn.c; and a
# file near the length limit is a warning, not a failure. Each plant goes into a fresh copy of the tree
# (src, include, scripts, docs); what check-shape says there beyond what
# it says on the unplanted copy must be the plant's message, which is
# printed.
source "$(dirname "$0")/lib.bash"
C=$T/c
# the copy has no build: scripts/doc-config asks this binary for the table
export ASSAY

# fresh: a new copy of the tree in $C
fresh() {
	rm -rf "$C"
	mkdir -p "$C"
	cp -r "$SRC/src" "$SRC/include" "$SRC/scripts" "$SRC/docs" "$C/"
}

# shape OUT: check-shape on the copy, its output in OUT (the count line
# left out), its exit status in $rc
shape() {
	rc=0
	$PY "$C/scripts/check-shape" "$C" >"$1.all" 2>&1 || rc=$?
	grep -v '^check-shape: ' "$1.all" | sort >"$1" || true
}

# planted NAME REGEX COUNT: check-shape on the copy fails, and the lines
# it adds to the unplanted copy's are COUNT lines, all matching REGEX
planted() {
	local name=$1 re=$2 count=$3 new
	shape "$T/$name.out"
	comm -13 "$T/clean.out" "$T/$name.out" >"$T/$name.new"
	echo "---- $name: check-shape says (beyond the unplanted copy):"
	sed 's/^/     /' "$T/$name.new"
	check "$name: check-shape fails (exit $rc)" test "$rc" = 1
	new=$(wc -l <"$T/$name.new")
	check "$name: $count new message(s) (got $new)" test "$new" = "$count"
	check "$name: each names the breach" all_match "$re" "$T/$name.new"
}

# all_match REGEX FILE: FILE has lines, and every one matches REGEX
all_match() { grep -qE -- "$1" "$2" && ! grep -vE -- "$1" "$2" >/dev/null; }

fresh
shape "$T/clean.out"
echo "---- the unplanted copy: exit $rc, $(wc -l <"$T/clean.out") breach(es) and warning(s)"
sed 's/^/     /' "$T/clean.out"
check "the tree as it is passes (exit $rc)" test "$rc" = 0

# 1. layering: cli/ includes a header private to tui/
fresh
echo '#include "tui/tui.h"' >>"$C/src/cli/tty.c"
planted cli-includes-tui-private \
	'^src/cli/tty\.c:[0-9]+: breaks the layering .*"tui/tui\.h", private to src/tui/$' 1

# 2. layering: core/ includes a layer above it (agent's public header)
fresh
echo '#include "assay/session.h"' >>"$C/src/core/strv.c"
planted core-includes-agent \
	"^src/core/strv\.c:[0-9]+: breaks the layering .*core/ includes agent/'s header" 1

# 3. layering: a backend includes another backend's own header
fresh
echo '#include "sandbox/local_internal.h"' >>"$C/src/sandbox/docker.c"
planted backend-includes-other-backend \
	"^src/sandbox/docker\.c:[0-9]+: breaks the layering .*the local backend's own header$" 1

# 4. the file map: a file's row is missing
fresh
grep -v '^| `src/core/strv\.c` |' "$SRC/docs/ARCHITECTURE.md" >"$C/docs/ARCHITECTURE.md"
planted file-missing-from-map '^src/core/strv\.c: not in the file map' 1

# 5. the file map: a row no longer what scripts/file-map prints
fresh
sed -i 's/^\(| `src\/core\/strv\.c` | .*\) |$/\1 (planted) |/' "$C/docs/ARCHITECTURE.md"
planted file-map-row-stale "^src/core/strv\.c: the file map's row is stale" 1

# 6. the generated tables: a row of each made table is taken out of the
# doc (the last row scripts/doc-X prints that the doc holds as it is)
for gen in doc-events doc-config; do
	if [ ! -e "$SRC/scripts/$gen" ]; then
		echo "---- $gen: not tried: scripts/$gen does not exist in this tree (its helper adds it)"
		continue
	fi
	fresh
	run=("$PY" "$C/scripts/$gen")
	[ -x "$C/scripts/$gen" ] && run=("$C/scripts/$gen")
	row=$("${run[@]}" 2>/dev/null | grep '^| ' | grep -v -- '---' |
		while IFS= read -r l; do grep -qxF -- "$l" "$C/docs/ARCHITECTURE.md" && echo "$l"; done | tail -1 || true)
	if [ -n "$row" ]; then
		grep -vxF -- "$row" "$SRC/docs/ARCHITECTURE.md" >"$C/docs/ARCHITECTURE.md"
	else
		echo "     ($gen prints no row the doc holds as it is: every table row outside section 8 is taken out)"
		awk '/^## 8\./{m=1} /^## /&&!/^## 8\./{m=0} m || !/^\| /' "$SRC/docs/ARCHITECTURE.md" >"$C/docs/ARCHITECTURE.md"
	fi
	shape "$T/$gen.out"
	comm -13 "$T/clean.out" "$T/$gen.out" | grep -F "scripts/$gen --check" >"$T/$gen.new" || true
	echo "---- $gen-stale: check-shape says:"
	sed 's/^/     /' "$T/$gen.new"
	check "$gen-stale: check-shape fails (exit $rc)" test "$rc" = 1
	check "$gen-stale: names the stale table" test -s "$T/$gen.new"
done

# 7. a part's fields written outside its owner: a part struct planted in
# a header, written from its owner (allowed) and from another file
# (four writes: op=, prefix ++, an array element, an anonymous union's
# member; a comparison and a read are not writes)
fresh
cat >>"$C/include/assay/strv.h" <<'EOF'
/* part: planted, owner: src/core/strv.c */
struct planted_part {
	int hits;
	char *name, *why;
	char tag[8];
	void (*fn)(void *arg, int n);
	union {
		int a;
		long b;
	};
};
EOF
cat >>"$C/src/core/strv.c" <<'EOF'
void planted_owner(struct planted_holder *s);
void planted_owner(struct planted_holder *s)
{
	s->planted.hits = 0;
}
EOF
cat >>"$C/src/core/util.c" <<'EOF'
void planted_other(struct planted_holder *s, void *x);
void planted_other(struct planted_holder *s, void *x)
{
	s->planted.hits += 1;
	++s->planted.why;
	s->planted.tag[0] = 'x';
	s->planted.b = 2;
	if (s->planted.hits == 2 || s->planted.name != x)
		x = (void *)s->planted.fn;
}
EOF
planted part-written-outside-owner \
	'^src/core/util\.c:[0-9]+: writes planted\.(hits|why|tag|b) \(struct planted_part\) outside its owner: include/assay/strv\.h, src/core/strv\.c$' 4

# 9. an event field read by its string key outside events.c
fresh
cat >>"$C/src/cli/headless.c" <<'EOF'
double planted_seq(const cJSON *ev);
double planted_seq(const cJSON *ev)
{
	return json_num(ev, "seq", 0);
}
EOF
planted event-read-by-string \
	'^src/cli/headless\.c:[0-9]+: reads event field "seq" by string' 1

# 10. a config key spelled outside the key table (a strcmp chain again)
fresh
cat >>"$C/src/core/project.c" <<'EOF'
int planted_is_network(const char *k);
int planted_is_network(const char *k)
{
	return !strcmp(k, "network");
}
EOF
planted config-key-outside-table \
	'^src/core/project\.c:[0-9]+: config key "network" spelled outside src/core/config_keys\.c' 1

# 11. a child process started outside src/core/spawn.c
fresh
cat >>"$C/src/tui/watch.c" <<'EOF'
int planted_spawn(void);
int planted_spawn(void)
{
	return fork();
}
EOF
planted spawn-outside-core \
	'^src/tui/watch\.c:[0-9]+: fork\(\) outside src/core/spawn\.c' 1

# 8. a file near the limit: a warning, not a failure
fresh
for _ in $(seq 1100); do echo '/* planted */'; done >>"$C/src/core/strv.c"
shape "$T/near.out"
comm -13 "$T/clean.out" "$T/near.out" >"$T/near.new"
echo "---- near-limit: check-shape says (beyond the unplanted copy):"
sed 's/^/     /' "$T/near.new"
check "near-limit: one warning naming the file" test "$(wc -l <"$T/near.new")" = 1
check "near-limit: the warning names the file" \
	all_match '^warning: src/core/strv\.c: [0-9]+ lines, near the limit of 1200' "$T/near.new"
fresh
clean_rc=0
$PY "$C/scripts/check-shape" "$C" >/dev/null 2>&1 || clean_rc=$?
check "near-limit: not a failure (exit $rc, as the unplanted copy's $clean_rc)" test "$rc" = "$clean_rc"

finish
