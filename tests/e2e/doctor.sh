#!/bin/bash
# doctor.sh: `assay doctor` on real terminals and real backends.
# 1. Without a terminal: graphics off, the local sandbox and its python
#    checked for real, keys reported as set / not set (never their
#    values), a dead DOCKER_HOST reported quickly, bad --images refused.
# 2. Inside tmux 3.3 (answers DA1 itself, no sixel): blocks, and why.
# 3. Inside xterm -ti vt340 under Xvfb: sixel with 256 colour registers
#    and a real cell size; a plain xterm: blocks.
# Parts whose tools are missing are skipped (exit 77 when nothing failed).
source "$(dirname "$0")/lib.bash"

SKIPS=()
part_skip() {
	echo "skipped part: $*"
	SKIPS+=("$*")
}

# jget FILE EXPR: a value from the JSON report (python expression on d)
jget() {
	$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# ---- 1. no terminal ----
# setsid: no controlling terminal, so /dev/tty cannot be opened either
secret=sk-doctor-e2e-$RANDOM$RANDOM
set +e
OPENAI_API_KEY=$secret ANTHROPIC_API_KEY= DOCKER_HOST=unix://$T/no-docker.sock \
	setsid -w "$ASSAY" doctor --json </dev/null >"$T/plain.json" 2>"$T/plain.err"
rc=$?
RC0=$rc
set -e
check "doctor --json prints one JSON object" \
	$PY -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/plain.json"
check "no terminal: graphics off, not queried" \
	test "$(jget "$T/plain.json" "d['graphics']['mode'], d['graphics']['queried']")" = "('off', False)"
check "why says there is no terminal" \
	grep -q 'output is not a terminal' "$T/plain.json"
check "a key is reported as set" \
	test "$(jget "$T/plain.json" "d['keys']['OPENAI_API_KEY'], d['keys']['ANTHROPIC_API_KEY']")" = "(True, False)"
check "a key's value is never printed" \
	bash -c "! grep -q '$secret' '$T/plain.json' '$T/plain.err'"
check "a dead DOCKER_HOST is a WARN naming it (docker is not the default)" \
	test "$(jget "$T/plain.json" "[i['status'] for s in d['sections'] if s['name']=='sandbox: docker' for i in s['items']]")" = "['WARN']"
grep -q "no-docker.sock" "$T/plain.json" && ok "the docker item names the socket" || fail "the docker item names the socket"
if command -v bwrap >/dev/null && bwrap --unshare-all --ro-bind / / true 2>/dev/null; then
	check "with bubblewrap and python here, the default setup works (exit 0)" test "$rc" = 0
	check "python libraries found in the sandbox" \
		test "$(jget "$T/plain.json" "all(d['python'][k] for k in ('pandas','matplotlib','numpy'))")" = True
else
	check "without a usable bubblewrap the default setup fails (exit 1)" test "$rc" = 1
fi

# the configured sandbox is docker and the daemon is unreachable: FAIL
echo '{"sandbox": "docker"}' >"$T/docker.json"
set +e
DOCKER_HOST=unix://$T/no-docker.sock setsid -w "$ASSAY" doctor --config "$T/docker.json" \
	</dev/null >"$T/docker.txt" 2>&1
rc=$?
set -e
check "docker configured but unreachable: exit 1" test "$rc" = 1
check "... with FAIL and what to do" \
	grep -q 'FAIL  daemon: no answer from unix://.*no-docker.sock' "$T/docker.txt"
grep -q 'start the daemon' "$T/docker.txt" && ok "... says to start the daemon" || fail "... says to start the daemon"

# bad values are usage errors, with the valid ones named
set +e
"$ASSAY" doctor --images pixels >"$T/bad.out" 2>&1
rc1=$?
echo '{"images": "svg"}' >"$T/bad.json"
"$ASSAY" --config "$T/bad.json" "a prompt" >"$T/bad2.out" 2>&1
rc2=$?
set -e
check "doctor --images pixels exits 2" test "$rc1" = 2
check "... naming the modes" grep -q "auto, sixel, kitty, blocks or off (got 'pixels')" "$T/bad.out"
check "config images: svg exits 2" test "$rc2" = 2
check "... naming the key" grep -q '"images" key' "$T/bad2.out"
check "--help lists --images with its default" \
	bash -c "'$ASSAY' --help | grep -A1 -- '--images MODE' | grep -q '\[auto\]'"

# ---- 2. tmux ----
if command -v tmux >/dev/null; then
	sock=assay-doctor-$$-$RANDOM
	tmux -L "$sock" -f /dev/null new-session -d -x 100 -y 30 \
		"cd $T && '$ASSAY' doctor --json >tmux.json; '$ASSAY' doctor >tmux.txt; echo \$? >tmux.rc; sleep 60"
	wait_until 20 'test -s "$T/tmux.rc"' || true
	tmux -L "$sock" kill-server 2>/dev/null || true
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock"
	if [ -s "$T/tmux.json" ]; then
		g="d['graphics']"
		check "tmux: DA1 answered (by tmux itself)" test "$(jget "$T/tmux.json" "$g['da1_seen']")" = True
		check "tmux: inside tmux" test "$(jget "$T/tmux.json" "$g['in_tmux']")" = True
		tver=$(tmux -V)
		if [ "$(jget "$T/tmux.json" "$g['sixel']")" = False ]; then
			check "tmux without sixel ($tver): blocks" \
				test "$(jget "$T/tmux.json" "$g['mode']")" = blocks
			check "... and why says tmux" grep -q 'blocks: inside tmux' "$T/tmux.txt"
			check "... the tmux item is a WARN" grep -q 'WARN  tmux:' "$T/tmux.txt"
		else
			check "tmux with sixel ($tver): sixel" \
				test "$(jget "$T/tmux.json" "$g['mode']")" = sixel
		fi
		# a hang guard: 10 times its 150 ms bound (how long detection
		# takes, answered and silent: tests/bench/termcaps.sh)
		check "tmux: detection never hangs" \
			test "$(jget "$T/tmux.json" "$g['ms'] < 1500")" = True
	else
		fail "tmux: doctor wrote no report"
	fi
else
	part_skip "tmux is not installed"
fi

# ---- 3. xterm under Xvfb ----
if command -v xterm >/dev/null && command -v xvfb-run >/dev/null; then
	run_xterm() { # NAME XTERM-OPTIONS...
		local name=$1
		shift
		timeout 60 xvfb-run -a -s "-screen 0 1024x768x24" xterm "$@" \
			-e sh -c "cd $T && '$ASSAY' doctor --json >$name.json; '$ASSAY' doctor >$name.txt; echo \$? >$name.rc" \
			>"$T/$name.xlog" 2>&1 || true
	}
	run_xterm vt340 -ti vt340 -xrm 'XTerm*numColorRegisters: 256'
	if [ -s "$T/vt340.json" ]; then
		g="d['graphics']"
		check "xterm vt340: sixel" test "$(jget "$T/vt340.json" "$g['mode']")" = sixel
		check "xterm vt340: 256 colour registers from XTSMGRAPHICS" \
			test "$(jget "$T/vt340.json" "$g['color_registers'], $g['registers_assumed']")" = "(256, False)"
		check "xterm vt340: a real cell size" \
			test "$(jget "$T/vt340.json" "$g['cell_from'] != 'guess' and $g['cell_w'] > 0 and $g['cell_h'] > 0")" = True
		check "xterm vt340: the text report says so" grep -q 'OK    image mode: sixel: DA1 lists 4' "$T/vt340.txt"
		check "xterm vt340: same exit code as without a terminal ($RC0)" \
			test "$(cat "$T/vt340.rc")" = "$RC0"
		echo "xterm vt340: $(jget "$T/vt340.json" "$g['why']")"
	else
		fail "xterm vt340: doctor wrote no report ($(head -3 "$T/vt340.xlog"))"
	fi
	run_xterm xplain
	if [ -s "$T/xplain.json" ] && [ -s "$T/xplain.rc" ]; then
		check "plain xterm (no sixel in DA1): blocks" \
			test "$(jget "$T/xplain.json" "d['graphics']['mode']")" = blocks
		check "plain xterm: XTSMGRAPHICS refused is reported" \
			grep -q 'XTSMGRAPHICS refused' "$T/xplain.json"
	else
		fail "plain xterm: doctor wrote no report"
	fi
else
	part_skip "xterm or xvfb-run is not installed (scripts/setup installs xvfb xterm)"
fi

# ---- 4. a fake terminal on a pty (tests/fakes/fake_tty.py) ----
# what a terminal sends is shown, never obeyed: a hostile kitty reply
# (an 8-bit CSI, a carriage return to overwrite the line, backspaces)
# comes out cleaned in the text report and JSON-escaped in --json
FAKETTY=$SRC/tests/fakes/fake_tty.py
EVIL='\x1b_Gi=31;\x9b2J\rFAKE: all OK\x08\x08\x1b\\\x1b[?62;4;22c'
TERM=xterm-256color $PY "$FAKETTY" --reply "$EVIL" --timeout 120 \
	--out "$T/evil.out" -- "$ASSAY" doctor >"$T/evil.st"
check "hostile kitty reply: doctor completes" \
	test "$(jget "$T/evil.st" "d['signal'], d['queried']")" = "(None, True)"
check "... the reply is in the report, cleaned" \
	grep -aq 'kitty graphics answered .*2J^.FAKE: all OK^H^H' "$T/evil.out"
check "... no 8-bit CSI, backspace or bare CR from it on the terminal" \
	$PY -c 'import sys; o = open(sys.argv[1], "rb").read()
sys.exit(b"\x9b" in o or b"\x08" in o or b"\rFAKE" in o)' "$T/evil.out"
TERM=xterm-256color $PY "$FAKETTY" --reply "$EVIL" --timeout 120 \
	-- sh -c "'$ASSAY' doctor --json >'$T/evil.json'" >"$T/evil2.st"
check "--json: the reply as a JSON string, escaped" \
	test "$(jget "$T/evil.json" "d['graphics']['kitty_reply'] == '\ufffd2J\rFAKE: all OK\b\b'")" = True
check "--json: valid UTF-8, no raw control byte" \
	$PY -c 'import sys; o = open(sys.argv[1], "rb").read(); o.decode("utf-8")
sys.exit(any(b < 0x20 and b != 0x0a for b in o) or b"\xc2\x9b" in o)' "$T/evil.json"

# Ctrl-C right after the queries (the terminal raw, ISIG off): doctor
# stops as interrupted (130) and leaves the terminal as it found it
TERM=xterm-256color $PY "$FAKETTY" --after-query '\x03' --timeout 60 \
	--out "$T/intr.out" -- "$ASSAY" doctor >"$T/intr.st"
cat "$T/intr.st"
check "Ctrl-C during the query: doctor exits 130, not killed mid-query" \
	test "$(jget "$T/intr.st" "d['exit'], d['signal']")" = "(130, None)"
check "... echo and line editing back on" \
	test "$(jget "$T/intr.st" "d['echo'], d['icanon'], d['isig']")" = "(True, True, True)"
check "... and says so" grep -aq 'assay doctor: interrupted' "$T/intr.out"

# --sandbox NAME: the backend that must work (the config's otherwise)
set +e
"$ASSAY" doctor --sandbox nosuch >"$T/sb.out" 2>&1
code=$?
set -e
check "--sandbox nosuch: usage error (exit $code)" test "$code" = 2
check "... naming the backends" grep -q "unknown sandbox 'nosuch': use --sandbox local, docker or opensandbox" "$T/sb.out"
set +e
OPEN_SANDBOX_API_KEY=k "$ASSAY" doctor --json --images off --sandbox opensandbox \
	--opensandbox-url 127.0.0.1:9 >"$T/sb.json" 2>"$T/sb.err"
code=$?
set -e
check "--sandbox opensandbox with no server there: exit 1 (got $code)" test "$code" = 1
check "... the report names that backend" test "$(jget "$T/sb.json" "d['sandbox']")" = opensandbox
check "... its section fails, naming the URL given" \
	test "$(jget "$T/sb.json" "[i['status'] for s in d['sections'] if s['name'] == 'sandbox: opensandbox' for i in s['items'] if '127.0.0.1:9' in i['detail']]")" = "['FAIL']"
check "... local only warns there (not the one that must work)" \
	test "$(jget "$T/sb.json" "'FAIL' in [i['status'] for s in d['sections'] if s['name'].startswith('sandbox: local') for i in s['items']]")" = False

finish || exit 1
if [ ${#SKIPS[@]} -gt 0 ]; then
	skip "${SKIPS[*]}"
fi
