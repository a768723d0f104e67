# chromium.bash: headless Chromium for the tests that look at a page
# (sourced after lib.bash, not run): chrome OUT PAGE, and CHROME_LEFT,
# the count of its processes that outlived it.

# chrome OUT.png|OUT.dom PAGE.html: one headless Chromium, in a session
# of its own so that whatever it leaves (crashpad, zygotes) is killed
# with it, with a private profile that is removed afterwards.
CHROME_LEFT=0
chrome() {
	local out=$1 page=$2 prof=$T/profile.$RANDOM pid rc=0 so=$1.stdout
	local args=(--headless --disable-gpu --hide-scrollbars --no-first-run
		--force-device-scale-factor=1 --disable-extensions
		--disable-background-networking --disable-crash-reporter
		--user-data-dir="$prof" --window-size=1280,10000)
	[ "$(id -u)" -eq 0 ] && args+=(--no-sandbox)
	case $out in
	*.png) args+=(--screenshot="$out") ;;
	*) args+=(--dump-dom) so=$out ;;
	esac
	mkdir -p "$prof"
	# without job control a background job is no group leader, so
	# setsid makes it one without forking: its pid names the group
	HOME=$prof XDG_CONFIG_HOME=$prof XDG_CACHE_HOME=$prof \
		setsid timeout -s KILL 60 "$CHROMIUM" "${args[@]}" "file://$page" \
		>"$so" 2>"$out.log" </dev/null &
	pid=$!
	wait "$pid" || rc=$?
	kill -KILL -- "-$pid" 2>/dev/null || true
	for _ in $(seq 50); do
		pgrep -g "$pid" >/dev/null || break
		sleep 0.1
	done
	if pgrep -g "$pid" >/dev/null; then
		CHROME_LEFT=$((CHROME_LEFT + 1))
		pgrep -a -g "$pid"
	fi
	rm -rf "$prof"
	[ "$rc" -eq 0 ] || { echo "chromium failed ($rc) on $page:"; tail -5 "$out.log"; }
	return "$rc"
}

