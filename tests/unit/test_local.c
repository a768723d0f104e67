/* test_local.c: the local (bubblewrap) sandbox driven through sbx_*
 * with a real loop: output streams and exit codes, timeouts and
 * cancellation that leave no process behind, bounded memory on a huge
 * output, stdin, staging of inputs, the host-side file operations and
 * the workspace archive. Needs bubblewrap and user namespaces; without
 * them the whole program reports a skip (exit 77), or under CI=true a
 * failure that says what is missing (skip.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sandbox_harness.h"
#include "skip.h"
#include "sandbox/internal.h" /* sbx_host_list, to compare */

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

static int start_or_skip(struct harness *h)
{
	if (harness_start(h) == 0)
		return 0;
	if (harness_unavailable(h))
		test_skip(h->start_err);
	fail_msg("sandbox start failed: %s", h->start_err);
	return -1;
}

static int setup(void **state)
{
	struct harness *h = xcalloc(1, sizeof *h);
	harness_config(h);
	*state = h;
	return 0;
}

static int teardown(void **state)
{
	struct harness *h = *state;
	harness_free(h);
	free(h);
	return 0;
}

static void test_echo(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct result r;
	harness_run(h, &r, "echo hi", 10);
	assert_true(r.done);
	assert_string_equal(buf_str(&r.out), "hi\n");
	assert_string_equal(buf_str(&r.err), "");
	assert_int_equal(r.ex.exit_code, 0);
	assert_int_equal(r.ex.signal, 0);
	assert_false(r.ex.timed_out);
	result_free(&r);
}

static void test_streams_and_exit_code(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct result r;
	harness_run(h, &r, "echo out; echo err >&2; echo out2; exit 3", 10);
	assert_true(r.done);
	assert_string_equal(buf_str(&r.out), "out\nout2\n");
	assert_string_equal(buf_str(&r.err), "err\n");
	assert_int_equal(r.ex.exit_code, 3);
	assert_int_equal(r.ex.signal, 0);
	result_free(&r);
	/* Killed by a signal inside: 128+n, and the signal named. */
	harness_run(h, &r, "kill -KILL $$", 10);
	assert_int_equal(r.ex.exit_code, 137);
	assert_int_equal(r.ex.signal, SIGKILL);
	result_free(&r);
}

static void test_environment(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct result r;
	harness_run(h, &r,
	            "pwd; echo $HOME; command -v python3; echo $MPLBACKEND; "
	            "echo $MPLCONFIGDIR; echo $LANG; echo $PYTHONUNBUFFERED",
	            10);
	assert_string_equal(buf_str(&r.out), "/workspace\n/workspace\n"
	                                     "/usr/bin/python3\nAgg\n"
	                                     "/var/cache/matplotlib\nC.UTF-8\n"
	                                     "1\n");
	result_free(&r);
}

static void test_output_streams_as_produced(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct result r;
	/* The first line must arrive while the command still runs: it
	 * waits for a file only this test makes, once the line is here.
	 * (How soon it arrives: tests/bench/sandbox_bench.sh.) */
	assert_non_null(harness_spawn(
	    h, &r,
	    "echo first; for i in $(seq 600); do [ -e go ] && break; "
	    "sleep 0.05; done; echo second",
	    60));
	int64_t end = now_ms() + 30000;
	while (!strstr(buf_str(&r.out), "first") && now_ms() < end)
		loop_once(h->loop, 100);
	assert_non_null(strstr(buf_str(&r.out), "first"));
	assert_false(r.done);
	char *go = ws_path(h, "go");
	int fd = open(go, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	close(fd);
	free(go);
	harness_wait(h, &r, 30000);
	assert_string_equal(buf_str(&r.out), "first\nsecond\n");
	result_free(&r);
}

static void test_timeout_kills_tree(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct result r;
	int64_t t0 = now_ms();
	harness_run(h, &r,
	            "(sleep 987611 &); setsid nohup sleep 987612 >/dev/null "
	            "2>&1 & nohup sleep 987613 >/dev/null 2>&1 & disown; "
	            "echo started; sleep 100",
	            1);
	assert_true(r.done);
	assert_true(r.ex.timed_out);
	assert_int_equal(r.ex.exit_code, -1);
	assert_int_equal(r.ex.signal, SIGKILL);
	assert_string_equal(buf_str(&r.out), "started\n");
	/* a hang guard (10 times the 1 s timeout); how soon the kill
	 * comes: tests/bench/sandbox_bench.sh */
	assert_true(r.t_exit - t0 < 10000);
	assert_int_equal(wait_no_procs("sleep 98761", 10000), 0);
	result_free(&r);
}

static void test_background_holding_pipe(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct result r;
	/* The main command ends while a background child still holds
	 * stdout: the PID namespace dies with it, so the pipe closes. */
	harness_run(h, &r, "sleep 987621 & echo main done", 30);
	assert_true(r.done);
	assert_false(r.ex.timed_out);
	assert_int_equal(r.ex.exit_code, 0);
	assert_string_equal(buf_str(&r.out), "main done\n");
	/* a hang guard: the child sleeps for days */
	assert_true(r.ex.duration_ms < 30000);
	assert_int_equal(wait_no_procs("sleep 987621", 10000), 0);
	result_free(&r);
}

static void test_cancel(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct result r;
	struct sbx_exec *e = harness_spawn(h, &r, "sleep 987631", 60);
	assert_non_null(e);
	/* cancelled once it runs (its sleep is there) */
	assert_true(wait_procs(h->loop, "sleep 987631", 1, 30000) > 0);
	assert_false(r.done);
	sbx_exec_cancel(e);
	harness_wait(h, &r, 30000); /* a hang guard: it sleeps for days */
	assert_true(r.done);
	assert_true(r.ex.cancelled);
	assert_false(r.ex.timed_out);
	assert_int_equal(wait_no_procs("sleep 987631", 10000), 0);
	result_free(&r);
}

static void test_stop_kills_running(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct result r1, r2;
	assert_non_null(harness_spawn(h, &r1, "sleep 987641", 60));
	assert_non_null(
	    harness_spawn(h, &r2, "sleep 987642 & sleep 987643", 60));
	/* stopped once both run */
	assert_true(wait_procs(h->loop, "sleep 987641", 1, 30000) > 0);
	assert_true(wait_procs(h->loop, "sleep 987643", 1, 30000) > 0);
	assert_int_equal(harness_stop(h), SBX_OK);
	/* the stop's completion comes after every on_exit */
	assert_true(r1.done);
	assert_true(r2.done);
	assert_true(r1.ex.cancelled);
	assert_int_equal(wait_no_procs("sleep 98764", 10000), 0);
	char *err = NULL;
	struct sbx_exec_req req = {.command = "true"};
	struct sbx_exec_obs obs = {result_output, result_exit, &r1};
	assert_null(sbx_exec(h->sbx, &req, &obs, &err));
	assert_non_null(err);
	free(err);
	result_free(&r1);
	result_free(&r2);
}

/* A command cancelled while bwrap is still setting up its sandbox (its
 * inner process exists, but binds itself to the outer one's life only
 * once set up) leaves nothing behind: cancelled every 0.1 ms of its
 * first 12 ms, each bwrap and each command is gone. */
static void test_cancel_during_setup(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	for (int i = 0; i < 120; i++) {
		struct result r;
		struct sbx_exec *e = harness_spawn(h, &r, "sleep 987651", 60);
		assert_non_null(e);
		usleep((useconds_t)i * 100);
		sbx_exec_cancel(e);
		harness_wait(h, &r, 30000); /* a hang guard */
		assert_true(r.done);
		result_free(&r);
	}
	assert_int_equal(wait_no_procs("sleep 987651", 10000), 0);
}

/* The spare assay-archive of ours (a child of this process waiting as
 * "assay-archive spare"), or 0. */
static pid_t find_spare(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;
	while (d && !found && (de = readdir(d))) {
		char path[300], buf[256];
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		int pid = 0, ppid = 0;
		int ok = fscanf(f, "%d %*s %*c %d", &pid, &ppid) == 2;
		fclose(f);
		if (!ok || ppid != getpid())
			continue;
		snprintf(path, sizeof path, "/proc/%s/cmdline", de->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
		if (fd >= 0)
			close(fd);
		buf[n > 0 ? n : 0] = '\0';
		size_t l0 = strlen(buf);
		if (n > 0 && (size_t)n > l0 + 6 &&
		    !strcmp(buf + l0 + 1, "spare") &&
		    strstr(buf, "assay-archive"))
			found = pid;
	}
	if (d)
		closedir(d);
	return found;
}

/* A started sandbox has a spare archive helper; an export runs in it
 * (it is gone once the export is done, showing the command it ran
 * meanwhile), a new one follows a while later, and sbx_free ends it. */
static void test_spare_helper(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	pid_t first = 0;
	for (int i = 0; i < 250 && !(first = find_spare()); i++)
		loop_once(h->loop, 20);
	assert_true(first > 0);
	struct result r;
	harness_run(h, &r, "echo hello > h.txt", 10);
	result_free(&r);
	char *tar = xasprintf("%s/workspace.tar.zst", h->run_dir);
	char *err = NULL;
	if (harness_export(h, tar, &err) != SBX_OK)
		fail_msg("export: %s", err);
	struct stat st;
	assert_int_equal(stat(tar, &st), 0);
	/* the spare ran it: reaped with the export */
	char path[64];
	snprintf(path, sizeof path, "/proc/%d", (int)first);
	assert_true(access(path, F_OK) < 0);
	pid_t second = 0;
	for (int i = 0; i < 250 && !(second = find_spare()); i++)
		loop_once(h->loop, 20);
	assert_true(second > 0 && second != first);
	sbx_free(h->sbx);
	h->sbx = NULL;
	snprintf(path, sizeof path, "/proc/%d", (int)second);
	assert_true(access(path, F_OK) < 0);
	free(tar);
}

static long maxrss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void test_big_output_bounded(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct result r;
	long before = maxrss_kb();
	harness_run(h, &r,
	            "head -c 200000000 /dev/zero; head -c 1000000 /dev/zero "
	            ">&2",
	            60);
	assert_true(r.done);
	assert_int_equal(r.ex.exit_code, 0);
	assert_int_equal(r.out_bytes, 200000000);
	assert_int_equal(r.err_bytes, 1000000);
	/* Nothing accumulates: peak memory barely moves. */
	long grew = maxrss_kb() - before;
	fprintf(stderr, "200 MB streamed in %lld ms, peak RSS grew %ld KiB\n",
	        (long long)r.ex.duration_ms, grew);
	assert_true(grew < 16 * 1024);
	result_free(&r);
}

static void test_stdin(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct result r;
	result_init(&r);
	const char *argv[] = {"wc", "-c", NULL};
	struct sbx_exec_req req = {.argv = argv, .keep_stdin = 1};
	struct sbx_exec_obs obs = {result_output, result_exit, &r};
	char *err = NULL;
	struct sbx_exec *e = sbx_exec(h->sbx, &req, &obs, &err);
	assert_non_null(e);
	/* More than a pipe holds: the rest waits in the bounded queue. */
	size_t n = 3u << 20;
	char *data = xmalloc(n);
	memset(data, 'x', n);
	assert_int_equal(sbx_exec_write(e, data, n), 0);
	assert_int_equal(sbx_exec_write(e, NULL, 0), 0); /* EOF */
	free(data);
	harness_wait(h, &r, 10000);
	assert_true(r.done);
	assert_string_equal(buf_str(&r.out), "3145728\n");
	result_free(&r);
}

static void test_python_stack(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct result r;
	/* pandas, numpy (through the /etc/alternatives BLAS), scipy and
	 * matplotlib, under the default memory and process limits. */
	harness_run(h, &r,
	            "python3 -c '\n"
	            "import numpy as np, pandas as pd, scipy.stats as st\n"
	            "import matplotlib.pyplot as plt\n"
	            "a = np.random.rand(300, 300); b = a @ a\n"
	            "df = pd.DataFrame({\"x\": np.arange(1000)})\n"
	            "plt.plot(df.x, df.x ** 2); plt.savefig(\"plot.png\")\n"
	            "print(\"ok\", df.x.sum(), round(st.norm.cdf(0), 2))\n"
	            "'",
	            120);
	assert_true(r.done);
	if (r.ex.exit_code != 0)
		fail_msg("python failed: %s", buf_str(&r.err));
	assert_string_equal(buf_str(&r.out), "ok 499500 0.5\n");
	char *png = ws_path(h, "plot.png");
	struct stat st;
	assert_int_equal(stat(png, &st), 0);
	assert_true(st.st_size > 1000);
	free(png);
	/* The font cache landed in the per-run MPLCONFIGDIR. */
	result_free(&r);
	harness_run(h, &r, "ls /var/cache/matplotlib", 10);
	assert_non_null(strstr(buf_str(&r.out), "fontlist"));
	result_free(&r);
	char *cache = xasprintf("%s/mplconfig", h->run_dir);
	assert_int_equal(stat(cache, &st), 0);
	free(cache);
}

/* ---- staging ---- */

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	char *err = NULL;
	char *s = read_file_max(path, 1 << 20, NULL, &err);
	free(err);
	return s;
}

/* --input SPEC, parsed as the command line does (DEST defaults). */
static void add_input(struct config *cfg, const char *spec)
{
	struct config_input in = {0};
	char *err = NULL;
	if (config_parse_input(spec, &in, &err) < 0)
		fail_msg("%s: %s", spec, err);
	config_add_input(cfg, in.src, in.dest);
	free(in.src);
	free(in.dest);
}

static void test_stage_inputs(void **state)
{
	struct harness *h = *state;
	char *src = xasprintf("%s/src", h->run_dir);
	char *p;
	mkdir(src, 0755);
	p = xasprintf("%s/data.csv", src);
	write_text(p, "a,b\n1,2\n");
	struct stat orig;
	stat(p, &orig);
	free(p);
	p = xasprintf("%s/dir", src);
	mkdir(p, 0755);
	free(p);
	p = xasprintf("%s/dir/sub", src);
	mkdir(p, 0755);
	free(p);
	p = xasprintf("%s/dir/sub/x.txt", src);
	write_text(p, "X");
	free(p);
	p = xasprintf("%s/dir/link_file", src);
	assert_int_equal(symlink("../data.csv", p), 0);
	free(p);
	p = xasprintf("%s/dir/link_dir", src);
	assert_int_equal(symlink("sub", p), 0);
	free(p);
	p = xasprintf("%s/dir/dangling", src);
	assert_int_equal(symlink("nowhere", p), 0);
	free(p);
	p = xasprintf("%s/dir/fifo", src);
	assert_int_equal(mkfifo(p, 0644), 0);
	free(p);
	char *csv = xasprintf("%s/data.csv", src);
	char *dir = xasprintf("%s/dir", src);
	add_input(&h->cfg, csv);
	char *spec = xasprintf("%s:stuff", dir);
	add_input(&h->cfg, spec);
	free(spec);
	/* copies (an input is mounted unless it asks for a copy: the
	 * mounts are tests/e2e/mounted_inputs.sh's) */
	for (size_t i = 0; i < h->cfg.n_inputs; i++)
		h->cfg.inputs[i].copy = 1;
	start_or_skip(h);

	p = ws_path(h, "input/data.csv");
	char *s = slurp(p);
	assert_string_equal(s, "a,b\n1,2\n");
	free(s);
	free(p);
	p = ws_path(h, "stuff/sub/x.txt");
	s = slurp(p);
	assert_string_equal(s, "X");
	free(s);
	free(p);
	struct stat st;
	p = ws_path(h, "stuff/link_file"); /* a link to a file: a copy */
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	free(p);
	const char *gone[] = {"stuff/link_dir", "stuff/dangling", "stuff/fifo"};
	for (size_t i = 0; i < 3; i++) {
		p = ws_path(h, gone[i]);
		assert_int_equal(lstat(p, &st), -1);
		free(p);
	}
	/* The originals are untouched. */
	struct stat now;
	assert_int_equal(stat(csv, &now), 0);
	assert_int_equal(now.st_mtim.tv_sec, orig.st_mtim.tv_sec);
	assert_int_equal(now.st_mtim.tv_nsec, orig.st_mtim.tv_nsec);
	p = xasprintf("%s/dir/link_file", src);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	free(p);
	/* And the sandbox sees the staged files. */
	struct result r;
	harness_run(h, &r, "cat input/data.csv stuff/sub/x.txt", 10);
	assert_string_equal(buf_str(&r.out), "a,b\n1,2\nX");
	result_free(&r);
	free(csv);
	free(dir);
	free(src);
}

static void expect_start_error(struct harness *h, const char *want)
{
	assert_int_equal(harness_start(h), -1);
	if (harness_unavailable(h))
		test_skip(h->start_err);
	if (!strstr(h->start_err, want))
		fail_msg("error '%s' does not mention '%s'", h->start_err,
		         want);
}

static void test_stage_missing(void **state)
{
	struct harness *h = *state;
	add_input(&h->cfg, "/nonexistent/assay-missing.csv");
	expect_start_error(h, "no such file: check --input");
}

static void test_stage_dest_escapes(void **state)
{
	struct harness *h = *state;
	char *src = xasprintf("%s/f.txt", h->run_dir);
	write_text(src, "F");
	config_add_input(&h->cfg, src, "../escaped.txt");
	expect_start_error(h, "..");
	char *esc = xasprintf("%s/escaped.txt", h->run_dir);
	assert_int_equal(access(esc, F_OK), -1);
	free(esc);
	free(src);
}

static void test_stage_dest_absolute(void **state)
{
	struct harness *h = *state;
	char *src = xasprintf("%s/f.txt", h->run_dir);
	write_text(src, "F");
	config_add_input(&h->cfg, src, "/etc/assay-escaped");
	expect_start_error(h, "outside the workspace");
	assert_int_equal(access("/etc/assay-escaped", F_OK), -1);
	free(src);
}

static void test_workspace_option(void **state)
{
	struct harness *h = *state;
	char *ws = xasprintf("%s/mine", h->run_dir);
	mkdir(ws, 0755);
	config_set(&h->cfg.workspace, ws);
	start_or_skip(h);
	assert_string_equal(sbx_workspace(h->sbx), ws);
	struct result r;
	harness_run(h, &r, "echo made > made.txt", 10);
	result_free(&r);
	char *p = xasprintf("%s/made.txt", ws);
	assert_int_equal(access(p, F_OK), 0);
	free(p);
	free(ws);
}

static void test_workspace_missing(void **state)
{
	struct harness *h = *state;
	config_set(&h->cfg.workspace, "/nonexistent/assay-ws");
	expect_start_error(h, "not an existing directory");
}

static void test_bwrap_missing(void **state)
{
	struct harness *h = *state;
	setenv("ASSAY_BWRAP", "/nonexistent/bwrap", 1);
	assert_int_equal(harness_start(h), -1);
	unsetenv("ASSAY_BWRAP");
	assert_non_null(
	    strstr(h->start_err, "bubblewrap (bwrap) is not installed"));
}

static void test_namespaces_unavailable(void **state)
{
	struct harness *h = *state;
	/* A bwrap that fails the way it does in an unprivileged
	 * container. */
	char *fake = xasprintf("%s/bwrap", h->run_dir);
	write_text(fake, "#!/bin/sh\necho 'bwrap: setting up uid map: "
	                 "Permission denied' >&2\nexit 1\n");
	chmod(fake, 0755);
	setenv("ASSAY_BWRAP", fake, 1);
	assert_int_equal(harness_start(h), -1);
	unsetenv("ASSAY_BWRAP");
	const char *want[] = {"cannot create namespaces",
	                      "setting up uid map: Permission denied",
	                      "user.max_user_namespaces", "--sandbox docker"};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		if (!strstr(h->start_err, want[i]))
			fail_msg("'%s' lacks '%s'", h->start_err, want[i]);
	free(fake);
}

static void test_proc_masked(void **state)
{
	struct harness *h = *state;
	/* A bwrap that fails the way it does in a Docker container whose
	 * /proc paths are masked (namespaces work). */
	char *fake = xasprintf("%s/bwrap", h->run_dir);
	write_text(fake, "#!/bin/sh\necho 'bwrap: Can'\\''t mount proc on "
	                 "/newroot/proc: Operation not permitted' >&2\n"
	                 "exit 1\n");
	chmod(fake, 0755);
	setenv("ASSAY_BWRAP", fake, 1);
	assert_int_equal(harness_start(h), -1);
	unsetenv("ASSAY_BWRAP");
	const char *want[] = {"cannot mount /proc",
	                      "Can't mount proc on /newroot/proc",
	                      "systempaths=unconfined", "--sandbox docker"};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		if (!strstr(h->start_err, want[i]))
			fail_msg("'%s' lacks '%s'", h->start_err, want[i]);
	assert_null(strstr(h->start_err, "user.max_user_namespaces"));
	free(fake);
}

static void test_backend_not_available(void **state)
{
	struct harness *h = *state;
	/* opensandbox exists (its start needs a server: e2e/opensandbox_*) */
	config_set(&h->cfg.sandbox, "opensandbox");
	char *err = NULL;
	struct sbx *s = sbx_new(&h->cfg, h->loop, h->run_dir, &err);
	assert_non_null(s);
	assert_string_equal(sbx_name(s), "opensandbox");
	assert_true(sbx_caps(s) & SBX_CAP_DELTA);
	sbx_free(s);
	/* an allowlist only opensandbox can honour: the others refuse it */
	config_set(&h->cfg.sandbox, "local");
	strv_push(&h->cfg.net_allow, "pypi.org");
	assert_null(sbx_new(&h->cfg, h->loop, h->run_dir, &err));
	assert_non_null(strstr(err, "cannot honour \"network\""));
	assert_non_null(strstr(err, "--network"));
	free(err);
	strv_free(&h->cfg.net_allow);
	config_set(&h->cfg.sandbox, "vmware");
	err = NULL;
	assert_null(sbx_new(&h->cfg, h->loop, h->run_dir, &err));
	assert_non_null(strstr(err, "unknown sandbox"));
	free(err);
}

/* ---- host-side file operations ---- */

/* The completion of the call just made, checked against the contract. */
static void settle(struct harness *h, struct hdone *d)
{
	if (harness_settle(h->loop, d, 60000) < 0)
		fail_msg("the operation broke the completion contract");
}

static void sh(struct harness *h, const char *cmd)
{
	struct result r;
	harness_run(h, &r, cmd, 10);
	if (r.ex.exit_code != 0)
		fail_msg("'%s' failed: %s", cmd, buf_str(&r.err));
	result_free(&r);
}

static void test_file_ops(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct hdone d = {0};
	sbx_write_file(h->sbx, "out/deep/r.md", "# report\n", 9, hdone_fn, &d);
	settle(h, &d);
	assert_int_equal(d.called, 1);
	assert_int_equal(d.rc, SBX_OK);
	hdone_free(&d);
	sh(h, "test \"$(cat out/deep/r.md)\" = '# report'");
	/* Overwrite keeps no temporary behind. */
	sbx_write_file(h->sbx, "out/deep/r.md", "v2", 2, hdone_fn, &d);
	settle(h, &d);
	hdone_free(&d);
	sbx_read_file(h->sbx, "out/deep/r.md", 1 << 20, hdone_fn, &d);
	settle(h, &d);
	assert_int_equal(d.rc, 0);
	assert_string_equal(d.data, "v2");
	hdone_free(&d);
	/* Bounded read: the first max bytes and a note. */
	sh(h, "printf 0123456789 > ten.txt");
	sbx_read_file(h->sbx, "ten.txt", 4, hdone_fn, &d);
	settle(h, &d);
	assert_int_equal(d.rc, 1);
	assert_string_equal(d.data, "0123");
	assert_non_null(strstr(d.err, "first 4"));
	hdone_free(&d);
	sbx_read_file(h->sbx, "missing.txt", 100, hdone_fn, &d);
	settle(h, &d);
	assert_int_equal(d.rc, -1);
	assert_non_null(d.err);
	hdone_free(&d);
	sbx_read_file(h->sbx, "out", 100, hdone_fn, &d);
	settle(h, &d);
	assert_int_equal(d.rc, -1);
	assert_non_null(strstr(d.err, "directory"));
	hdone_free(&d);
	/* A fifo must not hang the loop. */
	sh(h, "mkfifo pipe");
	int64_t t0 = now_ms();
	sbx_read_file(h->sbx, "pipe", 100, hdone_fn, &d);
	settle(h, &d);
	assert_int_equal(d.rc, -1);
	assert_true(now_ms() - t0 < 10000); /* a hang guard */
	hdone_free(&d);
	/* Listing: sorted, pre-order, links reported as links. */
	sh(h, "mkdir -p b/c && touch a.txt b/c/z b/y && ln -s a.txt ln");
	sbx_list(h->sbx, ".", 1, 1000, hdone_fn, &d);
	settle(h, &d);
	assert_int_equal(d.rc, 0);
	char *names = NULL;
	struct buf nb;
	buf_init(&nb, 0);
	const cJSON *e;
	cJSON_ArrayForEach(e, d.list)
	{
		buf_printf(&nb, "%s:%s ",
		           cJSON_GetObjectItem(e, "path")->valuestring,
		           cJSON_GetObjectItem(e, "type")->valuestring);
	}
	names = buf_detach(&nb);
	assert_string_equal(names, "a.txt:file b:dir b/c:dir b/c/z:file "
	                           "b/y:file ln:link out:dir out/deep:dir "
	                           "out/deep/r.md:file pipe:other "
	                           "ten.txt:file ");
	free(names);
	hdone_free(&d);
	sbx_list(h->sbx, "b", 0, 1000, hdone_fn, &d);
	settle(h, &d);
	assert_int_equal(cJSON_GetArraySize(d.list), 2); /* b/c, b/y */
	assert_string_equal(
	    cJSON_GetObjectItem(cJSON_GetArrayItem(d.list, 0), "path")
	        ->valuestring,
	    "b/c");
	hdone_free(&d);
	sbx_list(h->sbx, ".", 1, 3, hdone_fn, &d);
	settle(h, &d);
	assert_int_equal(d.rc, 1);
	assert_int_equal(cJSON_GetArraySize(d.list), 3);
	hdone_free(&d);
}

static void test_fetch(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	sh(h, "mkdir -p output/sub && echo a > output/a.csv && "
	      "echo b > output/sub/b.txt && ln -s /etc/passwd output/pw");
	char *dest = xasprintf("%s/outs/a.csv", h->run_dir);
	char *err = NULL;
	assert_int_equal(harness_fetch(h, "output/a.csv", dest, &err), 0);
	char *s = slurp(dest);
	assert_string_equal(s, "a\n");
	free(s);
	free(dest);
	dest = xasprintf("%s/outs/dir", h->run_dir);
	assert_int_equal(harness_fetch(h, "output", dest, &err), 0);
	char *p = xasprintf("%s/sub/b.txt", dest);
	s = slurp(p);
	assert_string_equal(s, "b\n");
	free(s);
	free(p);
	p = xasprintf("%s/pw", dest); /* the link stays behind */
	struct stat st;
	assert_int_equal(lstat(p, &st), -1);
	free(p);
	free(dest);
	/* A link leading out of the workspace is never followed. */
	dest = xasprintf("%s/outs/pw", h->run_dir);
	assert_int_equal(harness_fetch(h, "output/pw", dest, &err), -1);
	assert_non_null(err);
	free(err);
	assert_int_equal(access(dest, F_OK), -1);
	free(dest);
}

static void test_export_tar(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	sh(h, "mkdir -p d && echo hello > d/h.txt && ln -s /etc/passwd pw && "
	      "ln -s d/h.txt rel");
	/* zstd, as sbx_archive_new names it (the other tests: gzip) */
	char *tar = xasprintf("%s/workspace.tar.zst", h->run_dir);
	char *err = NULL;
	if (harness_export(h, tar, &err) != SBX_OK)
		fail_msg("export: %s", err);
	struct archive *a = archive_read_new();
	archive_read_support_filter_zstd(a); /* and only zstd */
	archive_read_support_format_tar(a);
	assert_int_equal(archive_read_open_filename(a, tar, 65536), ARCHIVE_OK);
	struct archive_entry *ae;
	int seen = 0;
	while (archive_read_next_header(a, &ae) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(ae);
		if (!strcmp(name, "d/h.txt")) {
			char buf[16] = {0};
			assert_int_equal(archive_read_data(a, buf, sizeof buf),
			                 6);
			assert_string_equal(buf, "hello\n");
			seen |= 1;
		} else if (!strcmp(name, "pw")) {
			assert_int_equal(archive_entry_filetype(ae), AE_IFLNK);
			assert_string_equal(archive_entry_symlink(ae),
			                    "/etc/passwd");
			assert_int_equal(archive_entry_size(ae), 0);
			seen |= 2;
		} else if (!strcmp(name, "rel")) {
			assert_int_equal(archive_entry_filetype(ae), AE_IFLNK);
			seen |= 4;
		} else if (!strcmp(name, "d/") || !strcmp(name, "d")) {
			assert_int_equal(archive_entry_filetype(ae), AE_IFDIR);
			seen |= 8;
		}
	}
	assert_int_equal(seen, 15);
	archive_read_free(a);
	char *tmp = xasprintf("%s.tmp.%d", tar, (int)getpid());
	assert_int_equal(access(tmp, F_OK), -1);
	free(tmp);
	free(tar);
}

/* ---- the asynchronous contract ---- */

/* n bytes that gzip cannot shrink, at path. */
static void write_noise(const char *path, size_t n)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	uint64_t chunk[8192];
	for (size_t done = 0; done < n; done += sizeof chunk) {
		for (size_t k = 0; k < sizeof chunk / sizeof *chunk; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			chunk[k] = x;
		}
		assert_int_equal(fwrite(chunk, sizeof chunk, 1, f), 1);
	}
	fclose(f);
}

/* How many "NAME.tmp.*" files sit beside path. */
static int tmp_files(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	*slash = '\0';
	const char *base = slash + 1;
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, base, strlen(base)) &&
		    !strncmp(de->d_name + strlen(base), ".tmp.", 5))
			n++;
	if (d)
		closedir(d);
	free(dir);
	return n;
}

/* A workspace archive that takes a while is written by a helper the
 * loop waits on: timers keep firing meanwhile, and the completion
 * comes from the loop. */
static void test_export_keeps_loop_running(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	char *big = ws_path(h, "noise.bin");
	write_noise(big, 96u << 20);
	char *tar = xasprintf("%s/workspace.tar.gz", h->run_dir);
	/* (its helper named by this run's own path: other tests run
	 * helpers too) */
	char *helper = xasprintf("assay-archive create %s", tar);
	struct ticker t;
	ticker_start(&t, h->loop);
	t.marker = helper;
	int64_t t0 = now_ms();
	struct hdone d = {0};
	sbx_export_tar(h->sbx, tar, hdone_fn, &d);
	int64_t call_ms = now_ms() - t0;
	assert_int_equal(harness_settle(h->loop, &d, 300000), 0);
	int64_t took = d.t - t0;
	ticker_stop(&t);
	fprintf(stderr,
	        "export of 96 MB: the call returned in %lld ms, the archive "
	        "took %lld ms, %d ticks (%d while the helper ran), longest "
	        "gap %lld ms\n",
	        (long long)call_ms, (long long)took, t.ticks, t.ticks_alive,
	        (long long)t.max_gap);
	assert_int_equal(d.rc, SBX_OK);
	assert_true(call_ms < 1000); /* a hang guard */
	/* the loop ran its timers while the helper worked (the figures,
	 * gaps and times: tests/bench/sandbox_bench.sh) */
	assert_true(t.ticks_alive >= 2);
	struct stat st;
	assert_int_equal(stat(tar, &st), 0);
	assert_true(st.st_size > (90 << 20));
	assert_int_equal(tmp_files(tar), 0);
	hdone_free(&d);
	free(helper);
	free(tar);
	free(big);
}

/* The post-call walk: a listing of many entries runs in the helper and
 * is the very list the in-process walk makes (order and fields), whole
 * or cut at max. */
static void test_list_large(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	int ws = open(sbx_workspace(h->sbx), O_RDONLY | O_DIRECTORY);
	assert_true(ws >= 0);
	char name[64];
	for (int i = 0; i < 60; i++) {
		snprintf(name, sizeof name, "d%02d", i);
		assert_int_equal(mkdirat(ws, name, 0755), 0);
		int dfd = openat(ws, name, O_RDONLY | O_DIRECTORY);
		for (int j = 0; j < 500; j++) {
			snprintf(name, sizeof name, "f%03d-%s.txt", j,
			         j % 7 ? "x" : "a\"b\\c \xc3\xa9\x01");
			int fd = openat(dfd, name, O_WRONLY | O_CREAT, 0644);
			if (j % 3 == 0 && write(fd, name, 7) != 7)
				fail_msg("write");
			close(fd);
		}
		close(dfd);
	}
	size_t limits[] = {100000, 5000};
	char *helper =
	    xasprintf("assay-archive list %s", sbx_workspace(h->sbx));
	for (size_t k = 0; k < 2; k++) {
		int truncated = 0;
		char *err = NULL;
		cJSON *want = sbx_host_list(ws, NULL, ".", 1, limits[k],
		                            &truncated, NULL, NULL, &err);
		assert_non_null(want);
		struct ticker t;
		ticker_start(&t, h->loop);
		t.marker = helper;
		struct hdone d = {0};
		int64_t t0 = now_ms();
		sbx_list(h->sbx, ".", 1, limits[k], hdone_fn, &d);
		assert_true(now_ms() - t0 < 1000); /* a hang guard */
		assert_int_equal(harness_settle(h->loop, &d, 120000), 0);
		ticker_stop(&t);
		fprintf(stderr,
		        "list of %d entries (max %zu): %lld ms, %d ticks while "
		        "the helper ran, longest gap %lld ms\n",
		        cJSON_GetArraySize(d.list), limits[k],
		        (long long)(d.t - t0), t.ticks_alive,
		        (long long)t.max_gap);
		assert_int_equal(d.rc, truncated ? SBX_TRUNCATED : SBX_OK);
		assert_int_equal(truncated, k == 1);
		assert_int_equal(cJSON_GetArraySize(d.list),
		                 k ? 5000 : 60 + 60 * 500);
		assert_true(cJSON_Compare(want, d.list, 1));
		/* the walk ran in the helper, the loop meanwhile (the
		 * whole walk: long enough for a tick whatever the load) */
		if (k == 0)
			assert_true(t.ticks_alive >= 1);
		cJSON_Delete(want);
		hdone_free(&d);
	}
	free(helper);
	close(ws);
}

/* A stop cuts an archive in flight short (the helper killed and reaped,
 * no temporary left), lets a listing finish, and completes after both. */
static void test_stop_in_flight(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	char *big = ws_path(h, "noise.bin");
	write_noise(big, 96u << 20);
	char *tar = xasprintf("%s/workspace.tar.gz", h->run_dir);
	char *helper = xasprintf("assay-archive create %s", tar);
	struct hdone ex = {0}, ls = {0}, st = {0};
	sbx_export_tar(h->sbx, tar, hdone_fn, &ex);
	sbx_list(h->sbx, ".", 1, 1000, hdone_fn, &ls);
	ex.waiting = ls.waiting = 1;
	/* stopped once the archive is under way */
	assert_true(wait_procs(h->loop, helper, 1, 30000) > 0);
	assert_false(ex.called);
	sbx_stop(h->sbx, hdone_fn, &st);
	assert_false(st.called || ex.called);
	assert_int_equal(harness_settle(h->loop, &st, 30000), 0);
	assert_int_equal(st.rc, SBX_OK);
	assert_int_equal(ex.called, 1);
	assert_int_equal(ex.rc, SBX_FAILED);
	assert_non_null(strstr(ex.err, "stopped before the archive finished"));
	assert_true(ex.t <= st.t);
	assert_false(ex.early || ls.early);
	assert_int_equal(ls.called, 1);
	assert_int_equal(ls.rc, SBX_OK); /* a file operation drains */
	assert_true(ls.t <= st.t);
	assert_int_equal(wait_no_procs(helper, 2000), 0);
	assert_int_equal(access(tar, F_OK), -1);
	assert_int_equal(tmp_files(tar), 0);
	/* what comes after the stop fails, from the loop */
	struct hdone late = {0};
	sbx_read_file(h->sbx, "noise.bin", 10, hdone_fn, &late);
	assert_int_equal(harness_settle(h->loop, &late, 5000), 0);
	assert_int_equal(late.rc, SBX_FAILED);
	hdone_free(&ex);
	hdone_free(&ls);
	hdone_free(&st);
	hdone_free(&late);
	free(helper);
	free(tar);
	free(big);
}

/* sbx_free with operations in flight: each completes (SBX_FAILED)
 * before sbx_free returns and never after; the helpers are gone. */
static void test_free_in_flight(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	char *big = ws_path(h, "noise.bin");
	write_noise(big, 64u << 20);
	char *tar = xasprintf("%s/workspace.tar.gz", h->run_dir);
	char *helper = xasprintf("assay-archive create %s", tar);
	struct hdone ex = {0}, st = {0};
	sbx_export_tar(h->sbx, tar, hdone_fn, &ex);
	ex.waiting = 1;
	/* freed once the archive is under way */
	assert_true(wait_procs(h->loop, helper, 1, 30000) > 0);
	assert_false(ex.called);
	sbx_stop(h->sbx, hdone_fn, &st);
	st.waiting = 1;
	sbx_free(h->sbx);
	h->sbx = NULL;
	assert_int_equal(ex.called, 1);
	assert_false(ex.early || st.early);
	assert_int_equal(ex.rc, SBX_FAILED);
	assert_non_null(strstr(ex.err, "before the archive finished"));
	assert_int_equal(st.called, 1);
	for (int i = 0; i < 10; i++)
		loop_once(h->loop, 20);
	assert_int_equal(ex.called, 1);
	assert_int_equal(st.called, 1);
	assert_int_equal(count_procs(helper), 0);
	free(helper);
	assert_int_equal(tmp_files(tar), 0);
	free(big);
	/* a start cut short the same way */
	char *err = NULL;
	h->sbx = sbx_new(&h->cfg, h->loop, h->run_dir, &err);
	struct hdone sd = {0};
	sbx_start(h->sbx, 1, hdone_fn, &sd);
	sd.waiting = 1;
	assert_false(sd.called);
	sbx_free(h->sbx);
	h->sbx = NULL;
	assert_int_equal(sd.called, 1);
	assert_int_equal(sd.rc, SBX_FAILED);
	for (int i = 0; i < 10; i++)
		loop_once(h->loop, 20);
	assert_int_equal(sd.called, 1);
	hdone_free(&ex);
	hdone_free(&st);
	hdone_free(&sd);
	free(tar);
}

struct freer {
	struct harness *h;
	int called;
};

/* A completion that frees the sandbox it came from. */
static void free_in_fn(void *arg, int rc, const char *err, struct buf *data,
                       cJSON *list)
{
	struct freer *f = arg;
	(void)rc, (void)err, (void)data, (void)list;
	f->called++;
	sbx_free(f->h->sbx);
	f->h->sbx = NULL;
}

/* sbx_free from inside a completion happens when it returns; what was
 * still in flight completes once, and a second sbx_stop waits for the
 * first. */
static void test_free_from_completion(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct hdone a = {0}, b = {0};
	sbx_stop(h->sbx, hdone_fn, &a);
	sbx_stop(h->sbx, hdone_fn, &b);
	b.waiting = 1;
	assert_int_equal(harness_settle(h->loop, &a, 30000), 0);
	assert_int_equal(b.called, 1);
	assert_false(b.early);
	assert_int_equal(a.rc, SBX_OK);
	assert_int_equal(b.rc, SBX_OK);
	hdone_free(&a);
	hdone_free(&b);
	sbx_free(h->sbx);
	h->sbx = NULL;
	assert_int_equal(harness_start(h), 0);
	sh(h, "mkdir -p x && touch x/y");
	struct freer f = {h, 0};
	struct hdone r = {0};
	sbx_list(h->sbx, ".", 1, 100, free_in_fn, &f);
	sbx_read_file(h->sbx, "x/y", 10, hdone_fn, &r);
	r.waiting = 1;
	int64_t end = now_ms() + 10000;
	while ((!f.called || !r.called) && now_ms() < end)
		loop_once(h->loop, 50);
	assert_int_equal(f.called, 1);
	assert_int_equal(r.called, 1);
	assert_null(h->sbx);
	for (int i = 0; i < 10; i++)
		loop_once(h->loop, 10);
	assert_int_equal(f.called, 1);
	assert_int_equal(r.called, 1);
	hdone_free(&r);
}

/* Children of this process, running or not yet reaped. */
static int count_children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;
	char path[300], line[1024];
	while (d && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		char *p =
		    fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
		int ppid = 0;
		if (p && sscanf(p + 1, " %*c %d", &ppid) == 1 &&
		    ppid == (int)getpid())
			n++;
		fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/* Without the probe cache the probe is a real bwrap start, run as a
 * loop child: between two passes of the loop, before the start
 * completes, a child of ours is under way (or not yet reaped); its
 * answer is remembered. */
static void test_probe_uncached(void **state)
{
	struct harness *h = *state;
	char *cache = xasprintf("%s/cache", h->run_dir);
	const char *old = getenv("XDG_CACHE_HOME");
	char *saved = old ? xstrdup(old) : NULL;
	setenv("XDG_CACHE_HOME", cache, 1);
	int before = count_children();
	char *err = NULL;
	h->sbx = sbx_new(&h->cfg, h->loop, h->run_dir, &err);
	assert_non_null(h->sbx);
	struct hdone d = {0};
	sbx_start(h->sbx, 1, hdone_fn, &d);
	d.waiting = !d.called;
	int child = 0;
	int64_t end = now_ms() + 180000;
	while (!d.called && now_ms() < end) {
		loop_once(h->loop, 100);
		if (!d.called && count_children() > before)
			child = 1;
	}
	for (int i = 0; i < 3; i++)
		loop_once(h->loop, 0);
	int rc = d.called == 1 && !d.early && d.rc == 0 ? 0 : -1;
	if (rc < 0)
		h->start_err =
		    xstrdup(d.err ? d.err : "start broke its contract");
	hdone_free(&d);
	char *probe = xasprintf("%s/assay/bwrap-probe", cache);
	int cached = access(probe, F_OK) == 0;
	if (saved)
		setenv("XDG_CACHE_HOME", saved, 1);
	else
		unsetenv("XDG_CACHE_HOME");
	if (rc < 0) {
		if (harness_unavailable(h))
			test_skip(h->start_err);
		fail_msg("start: %s", h->start_err);
	}
	assert_true(cached);
	assert_true(child);
	struct result r;
	harness_run(h, &r, "echo ok", 10);
	assert_string_equal(buf_str(&r.out), "ok\n");
	result_free(&r);
	free(probe);
	free(cache);
	free(saved);
}

/* NULL when the local sandbox can start here (or fails for a reason
 * the tests report); else why it cannot. */
static char *sandbox_unavailable(void)
{
	struct harness h;
	harness_config(&h);
	char *why = NULL;
	if (harness_start(&h) < 0 && harness_unavailable(&h))
		why = xasprintf("the local sandbox cannot run here: %s",
		                h.start_err);
	harness_free(&h);
	return why;
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	char *why = sandbox_unavailable();
	if (why) {
		int rc = test_skip_all(why);
		free(why);
		return rc;
	}
	const struct CMUnitTest tests[] = {
	    T(test_echo),
	    T(test_streams_and_exit_code),
	    T(test_environment),
	    T(test_output_streams_as_produced),
	    T(test_timeout_kills_tree),
	    T(test_background_holding_pipe),
	    T(test_cancel),
	    T(test_stop_kills_running),
	    T(test_cancel_during_setup),
	    T(test_spare_helper),
	    T(test_big_output_bounded),
	    T(test_stdin),
	    T(test_python_stack),
	    T(test_stage_inputs),
	    T(test_stage_missing),
	    T(test_stage_dest_escapes),
	    T(test_stage_dest_absolute),
	    T(test_workspace_option),
	    T(test_workspace_missing),
	    T(test_bwrap_missing),
	    T(test_namespaces_unavailable),
	    T(test_proc_masked),
	    T(test_backend_not_available),
	    T(test_file_ops),
	    T(test_fetch),
	    T(test_export_tar),
	    T(test_export_keeps_loop_running),
	    T(test_list_large),
	    T(test_stop_in_flight),
	    T(test_free_in_flight),
	    T(test_free_from_completion),
	    T(test_probe_uncached),
	};
	return test_skip_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
