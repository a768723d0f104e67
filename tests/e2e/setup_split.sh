#!/usr/bin/env bash
# scripts/demo installs what building and running assay need and no
# more (scripts/setup --run); scripts/test adds the test tools. The
# run list covers every library the build asks pkg-config for (each .pc
# file's package is in it), bubblewrap and the sandbox's python
# libraries, and holds none of the tests' tools; setup says what it
# will install and why before installing (shown on a dry list here:
# nothing is installed by this test).
source "$(dirname "$0")/lib.bash"
command -v dpkg >/dev/null || skip "not a Debian system (dpkg)"
cd "$T"
"$SRC/scripts/setup" --list --run >run.txt
"$SRC/scripts/setup" --list --test >test.txt
cut -f1 run.txt | sort >run.names
cut -f1 test.txt | sort >test.names
check "setup --run lists packages, each with why" \
	sh -c "test -s run.txt && ! awk -F'\t' '\$2 == \"\"' run.txt | grep -q ."
check "... every one of them is in the test list too" \
	sh -c "comm -23 run.names test.names | { ! grep -q .; }"
for tool in chromium clang xvfb xterm imagemagick libcmocka-dev tmux jupyter-nbconvert; do
	check "... not $tool (a test tool)" sh -c "! grep -qx '$tool' run.names"
	check "... which --test has" grep -qx "$tool" test.names
done
# the libraries the build links or loads (libcurl), by their pkg-config
# names in CMakeLists (a version asked for, libcurl>=7.85, cut off)
mods=$(sed -n '/pkg_check_modules(/,/)/p' "$SRC/CMakeLists.txt" |
	grep -v cmocka | tr ' ()' '\n\n\n' | sed 's/[<>=].*//' |
	grep -E '^(lib[a-z0-9]+|ncursesw|zlib)$' | sort -u)
check "CMakeLists names the libraries it links, libcurl too" \
	sh -c "test $(echo "$mods" | wc -l) -ge 8 && echo '$mods' | grep -qx libcurl"
for m in $mods; do
	pc=$(pkg-config --variable=pcfiledir "$m" 2>/dev/null)/$m.pc
	pkg=$(dpkg -S "$pc" 2>/dev/null | cut -d: -f1 | head -1)
	check "$m ($pc) comes from a package of the run list ($pkg)" \
		sh -c "test -n '$pkg' && grep -qx '$pkg' run.names"
done
for p in bubblewrap cmake python3-pandas python3-matplotlib python3-scipy python3-numpy; do
	check "the run list has $p" grep -qx "$p" run.names
done
check "scripts/demo installs with --run" grep -q '^./scripts/setup --run' "$SRC/scripts/demo"
check "... and builds without the tests (no cmocka needed)" grep -q 'ASSAY_TESTS=OFF' "$SRC/scripts/demo"
check "scripts/test installs with --test" grep -q '^./scripts/setup --test' "$SRC/scripts/test"
# before installing, setup says what and why: run it against a dpkg
# that knows nothing (every package missing) and an apt-get that only
# records what it was asked, so nothing is installed
mkdir bin
printf '#!/bin/sh\nexit 1\n' >bin/dpkg-query
printf '#!/bin/sh\necho "apt-get $*" >>%s/apt.log\n' "$T" >bin/apt-get
printf '#!/bin/sh\nexec "$@"\n' >bin/sudo
chmod +x bin/*
PATH=$T/bin:$PATH "$SRC/scripts/setup" --run >said.txt 2>&1
check "with packages missing, setup --run says what it installs and why" \
	grep -q '^setup: installing 19 missing package(s) for building and running assay:' said.txt || cat said.txt
check "... each group with its reason" grep -q '^  bubblewrap: the local sandbox$' said.txt
check "... before apt-get installs exactly the run list" \
	sh -c "grep 'apt-get install' apt.log | tr ' ' '\n' | grep -v -- '^-' | sed '1,2d' | sort | cmp -s - run.names"
finish
