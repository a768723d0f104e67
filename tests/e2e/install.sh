#!/usr/bin/env bash
# cmake --install: a copy of the source tree is built (without tests)
# and installed into a temporary prefix, then the copy and its build
# are deleted; the installed assay finds its helpers (libexec/assay),
# its themes and the demo's data (share/assay) with no source tree,
# runs the demo headless to its end with the findings of the real one,
# and its manual renders with every subcommand.
source "$(dirname "$0")/lib.bash"
need_bwrap
command -v cmake >/dev/null || skip "cmake is not installed"
cd "$T"
mkdir src
# the tree as it is, without its build trees and state (a stable tar:
# its hash names the tree's content)
tar -C "$SRC" --exclude='./build*' --exclude=./.git --exclude=./state \
	--exclude=./.assay --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
	-cf "$T/tree.tar" .
# The copy is built the same whatever the suite (it does not use
# ASSAY_BIN: the ASan suite's run builds the same normal binary), so
# the prefix it installs is kept, named by the tree's content and the
# tools' versions, and a later run on the same tree (the ASan suite's)
# checks that prefix again in place of building it again, in its own
# $T/prefix. ASSAY_INSTALL_FRESH=1 always builds.
CACHE=${TMPDIR:-/tmp}/assay-install-cache.$(id -u)
key=$({ sha256sum <"$T/tree.tar"; cmake --version | head -1; cc --version | head -1; } | sha256sum | cut -c1-32)
mkdir -p "$CACHE"
# entries of other trees, a day old, go
find "$CACHE" -mindepth 1 -maxdepth 1 -mtime +0 ! -name "$key" -exec rm -rf {} + 2>/dev/null || true
if [ "${ASSAY_INSTALL_FRESH:-}" != 1 ] && [ -x "$CACHE/$key/bin/assay" ]; then
	echo "# the prefix installed from this same tree by an earlier run: $CACHE/$key"
	touch "$CACHE/$key"
	cp -a "$CACHE/$key" "$T/prefix"
else
	tar -C "$T/src" -xf "$T/tree.tar"
	cmake -S "$T/src" -B "$T/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DASSAY_TESTS=OFF >"$T/cmake.log" 2>&1
	built=0
	cmake --build "$T/build" -j"$(nproc)" >>"$T/cmake.log" 2>&1 || { tail -20 "$T/cmake.log"; built=1; }
	cmake --install "$T/build" --prefix "$T/prefix" >"$T/install.log" 2>&1 || { tail -20 "$T/install.log"; built=1; }
	# kept for the next run only when built and installed (mv -T: a
	# run beside this one may have kept the same first)
	if [ "$built" = 0 ]; then
		cp -a "$T/prefix" "$CACHE/$key.$$" &&
			{ mv -T "$CACHE/$key.$$" "$CACHE/$key" 2>/dev/null || rm -rf "$CACHE/$key.$$"; }
	fi
fi
rm -f "$T/tree.tar"
P=$T/prefix
check "installed: assay in bin" test -x "$P/bin/assay"
check "... its helpers in libexec/assay" test -x "$P/libexec/assay/assay-archive" -a -x "$P/libexec/assay/assay-xfer" -a -x "$P/libexec/assay/assay-image"
check "... the themes and the demo's data in share/assay" \
	test -s "$P/share/assay/themes/light.json" -a -s "$P/share/assay/sample-data/building_energy.csv"
check "... the manual in share/man/man1" test -s "$P/share/man/man1/assay.1"
rm -rf "$T/src" "$T/build" # nothing of the source tree is left
mkdir "$T/elsewhere" && cd "$T/elsewhere"
env -u ASSAY_DATA_DIR -u ASSAY_ARCHIVE_BIN -u ASSAY_IMAGE_BIN PATH=/usr/bin:/bin \
	"$P/bin/assay" demo --run-dir "$T/run" --out "$T/out" </dev/null >"$T/demo.out" 2>&1
code=$?
check "the installed demo runs to its end (exit $code)" test "$code" -eq 0 || tail -5 "$T/demo.out"
check "... its findings match the ground truth" \
	$PY "$SRC/sample-data/check_findings.py" "$T/out/output" "$SRC/sample-data/building_energy.truth.json"
check "... the workspace archived by the installed helper" test -s "$(ws_archive "$T/run")"
# the themes are read by the installed workbench (tmux)
source "$SRC/tests/e2e/tui_helpers.bash"
ASSAY=$P/bin/assay
tui_start 200 30 -- --theme nosuch --provider script --script "$SRC/tests/e2e/data/short.json" hi
check "an unknown theme is refused, naming the installed themes" \
	wait_for 'not found in .*/share/assay/themes' 10
check "... and listing the bundled ones" wait_for 'available: .*light' 5
tui_start 100 30 -- --theme light --provider script --script "$SRC/tests/e2e/data/short.json" hi
check "a bundled theme (light) opens the workbench" wait_for ' Conversation ' 20
# C-q while the run still goes asks first ("Quit?"): once it waits
wait_for 'waiting for you' 20 >/dev/null || true
keys C-q
wait_exit 20 >/dev/null
MANWIDTH=100 man -l "$P/share/man/man1/assay.1" >"$T/man.txt" 2>"$T/man.err"
check "the manual renders (man -l)" test -s "$T/man.txt" || cat "$T/man.err"
for sub in resume replay export eval doctor trust models; do
	check "... and documents assay $sub" grep -q "^   assay $sub" "$T/man.txt"
done
check "... its options are those of --help" \
	sh -c "for o in \$('$P/bin/assay' --help | grep -oE '^  --[a-z-]+'); do grep -q -- \"\$o\" '$T/man.txt' || exit 1; done"
finish
