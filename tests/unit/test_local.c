/* test_local.c: the local (bubblewrap) sandbox driven through its ops
 * with a real loop: output streams and exit codes, timeouts and
 * cancellation that leave no process behind, bounded memory on a huge
 * output, stdin, staging of inputs, the host-side file operations and
 * the workspace archive. Needs bubblewrap and user namespaces; without
 * them the whole program reports a skip (exit 77). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sandbox_harness.h"

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
	if (harness_unavailable(h)) {
		fprintf(stderr, "skipping: %s\n", h->start_err);
		skip();
	}
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
	/* The first line must arrive while the command still runs. */
	assert_non_null(
	    harness_spawn(h, &r, "echo first; sleep 3; echo second", 10));
	int64_t t0 = now_ms();
	while (!strstr(buf_str(&r.out), "first") && now_ms() - t0 < 5000)
		loop_once(h->loop, 100);
	assert_non_null(strstr(buf_str(&r.out), "first"));
	assert_false(r.done);
	assert_true(now_ms() - t0 < 2500);
	harness_wait(h, &r, 10000);
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
	assert_true(r.t_exit - t0 < 4000);
	assert_int_equal(wait_no_procs("sleep 98761", 1000), 0);
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
	assert_true(r.ex.duration_ms < 3000);
	assert_int_equal(wait_no_procs("sleep 987621", 1000), 0);
	result_free(&r);
}

static void test_cancel(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct result r;
	struct sbx_exec *e = harness_spawn(h, &r, "sleep 987631", 60);
	assert_non_null(e);
	int64_t t0 = now_ms();
	while (now_ms() - t0 < 300)
		loop_once(h->loop, 50);
	assert_false(r.done);
	h->sbx->ops->cancel(e);
	harness_wait(h, &r, 5000);
	assert_true(r.done);
	assert_true(r.ex.cancelled);
	assert_false(r.ex.timed_out);
	assert_true(r.t_exit - t0 < 3000);
	assert_int_equal(wait_no_procs("sleep 987631", 1000), 0);
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
	int64_t t0 = now_ms();
	while (now_ms() - t0 < 200)
		loop_once(h->loop, 50);
	h->sbx->ops->stop(h->sbx);
	/* stop delivers on_exit itself. */
	assert_true(r1.done);
	assert_true(r2.done);
	assert_true(r1.ex.cancelled);
	assert_int_equal(wait_no_procs("sleep 98764", 1000), 0);
	char *err = NULL;
	struct sbx_exec_req req = {.command = "true"};
	struct sbx_exec_obs obs = {result_output, result_exit, &r1};
	assert_null(h->sbx->ops->exec(h->sbx, &req, &obs, &err));
	assert_non_null(err);
	free(err);
	result_free(&r1);
	result_free(&r2);
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
	struct sbx_exec *e = h->sbx->ops->exec(h->sbx, &req, &obs, &err);
	assert_non_null(e);
	/* More than a pipe holds: the rest waits in the bounded queue. */
	size_t n = 3u << 20;
	char *data = xmalloc(n);
	memset(data, 'x', n);
	assert_int_equal(h->sbx->ops->exec_write(e, data, n), 0);
	assert_int_equal(h->sbx->ops->exec_write(e, NULL, 0), 0); /* EOF */
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
	if (harness_unavailable(h)) {
		fprintf(stderr, "skipping: %s\n", h->start_err);
		skip();
	}
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
	assert_string_equal(h->sbx->workspace, ws);
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

static void test_backend_not_available(void **state)
{
	struct harness *h = *state;
	config_set(&h->cfg.sandbox, "opensandbox");
	char *err = NULL;
	assert_null(sbx_new(&h->cfg, h->loop, h->run_dir, &err));
	assert_non_null(strstr(err, "not available yet"));
	assert_non_null(strstr(err, "--sandbox local"));
	free(err);
	config_set(&h->cfg.sandbox, "vmware");
	err = NULL;
	assert_null(sbx_new(&h->cfg, h->loop, h->run_dir, &err));
	assert_non_null(strstr(err, "unknown sandbox"));
	free(err);
}

/* ---- host-side file operations ---- */

struct done {
	int called, rc;
	char *err;
	char *data;
	size_t len;
	cJSON *list;
};

static void on_done(void *arg, int rc, const char *err, struct buf *data,
                    cJSON *list)
{
	struct done *d = arg;
	d->called++;
	d->rc = rc;
	d->err = err ? xstrdup(err) : NULL;
	if (data) {
		d->data = xstrndup(data->data ? data->data : "", data->len);
		d->len = data->len;
	}
	d->list = list ? cJSON_Duplicate(list, 1) : NULL;
}

static void done_free(struct done *d)
{
	free(d->err);
	free(d->data);
	cJSON_Delete(d->list);
	memset(d, 0, sizeof *d);
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
	const struct sbx_ops *ops = h->sbx->ops;
	struct done d = {0};
	ops->write_file(h->sbx, "out/deep/r.md", "# report\n", 9, on_done, &d);
	assert_int_equal(d.called, 1);
	assert_int_equal(d.rc, 0);
	done_free(&d);
	sh(h, "test \"$(cat out/deep/r.md)\" = '# report'");
	/* Overwrite keeps no temporary behind. */
	ops->write_file(h->sbx, "out/deep/r.md", "v2", 2, on_done, &d);
	done_free(&d);
	ops->read_file(h->sbx, "out/deep/r.md", 1 << 20, on_done, &d);
	assert_int_equal(d.rc, 0);
	assert_string_equal(d.data, "v2");
	done_free(&d);
	/* Bounded read: the first max bytes and a note. */
	sh(h, "printf 0123456789 > ten.txt");
	ops->read_file(h->sbx, "ten.txt", 4, on_done, &d);
	assert_int_equal(d.rc, 1);
	assert_string_equal(d.data, "0123");
	assert_non_null(strstr(d.err, "first 4"));
	done_free(&d);
	ops->read_file(h->sbx, "missing.txt", 100, on_done, &d);
	assert_int_equal(d.rc, -1);
	assert_non_null(d.err);
	done_free(&d);
	ops->read_file(h->sbx, "out", 100, on_done, &d);
	assert_int_equal(d.rc, -1);
	assert_non_null(strstr(d.err, "directory"));
	done_free(&d);
	/* A fifo must not hang the loop. */
	sh(h, "mkfifo pipe");
	int64_t t0 = now_ms();
	ops->read_file(h->sbx, "pipe", 100, on_done, &d);
	assert_int_equal(d.rc, -1);
	assert_true(now_ms() - t0 < 1000);
	done_free(&d);
	/* Listing: sorted, pre-order, links reported as links. */
	sh(h, "mkdir -p b/c && touch a.txt b/c/z b/y && ln -s a.txt ln");
	ops->list(h->sbx, ".", 1, 1000, on_done, &d);
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
	done_free(&d);
	ops->list(h->sbx, "b", 0, 1000, on_done, &d);
	assert_int_equal(cJSON_GetArraySize(d.list), 2); /* b/c, b/y */
	assert_string_equal(
	    cJSON_GetObjectItem(cJSON_GetArrayItem(d.list, 0), "path")
	        ->valuestring,
	    "b/c");
	done_free(&d);
	ops->list(h->sbx, ".", 1, 3, on_done, &d);
	assert_int_equal(d.rc, 1);
	assert_int_equal(cJSON_GetArraySize(d.list), 3);
	done_free(&d);
}

static void test_fetch(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	sh(h, "mkdir -p output/sub && echo a > output/a.csv && "
	      "echo b > output/sub/b.txt && ln -s /etc/passwd output/pw");
	char *dest = xasprintf("%s/outs/a.csv", h->run_dir);
	char *err = NULL;
	assert_int_equal(h->sbx->ops->fetch(h->sbx, "output/a.csv", dest, &err),
	                 0);
	char *s = slurp(dest);
	assert_string_equal(s, "a\n");
	free(s);
	free(dest);
	dest = xasprintf("%s/outs/dir", h->run_dir);
	assert_int_equal(h->sbx->ops->fetch(h->sbx, "output", dest, &err), 0);
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
	assert_int_equal(h->sbx->ops->fetch(h->sbx, "output/pw", dest, &err),
	                 -1);
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
	char *tar = xasprintf("%s/workspace.tar.gz", h->run_dir);
	char *err = NULL;
	if (h->sbx->ops->export_tar(h->sbx, tar, &err) < 0)
		fail_msg("export: %s", err);
	struct archive *a = archive_read_new();
	archive_read_support_filter_gzip(a);
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

static int sandbox_available(void)
{
	struct harness h;
	harness_config(&h);
	int ok = harness_start(&h) == 0;
	if (!ok && !harness_unavailable(&h))
		ok = 1; /* a real failure: let the tests report it */
	if (!ok)
		fprintf(stderr, "SKIP: the local sandbox cannot run here: %s\n",
		        h.start_err);
	harness_free(&h);
	return ok;
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	if (!sandbox_available())
		return 77;
	const struct CMUnitTest tests[] = {
	    T(test_echo),
	    T(test_streams_and_exit_code),
	    T(test_environment),
	    T(test_output_streams_as_produced),
	    T(test_timeout_kills_tree),
	    T(test_background_holding_pipe),
	    T(test_cancel),
	    T(test_stop_kills_running),
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
	    T(test_backend_not_available),
	    T(test_file_ops),
	    T(test_fetch),
	    T(test_export_tar),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
