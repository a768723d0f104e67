/* sandbox_bench.c: the figures the sandbox unit tests (test_local,
 * test_escape, test_docker) used to assert and now only guard against
 * a hang, measured on the local or the docker backend (median, min and
 * max of N runs, each operation on the same sandbox):
 *   - the first line of a command that goes on running: how soon it
 *     arrives (was: under 2.5 s, local);
 *   - a command that outlives a 1 s timeout with its detached
 *     children: how long after the timeout on_exit comes (was: under
 *     4 s in all, 8 s for docker);
 *   - a cancel: how long from sbx_exec_cancel to on_exit;
 *   - a command whose background child keeps stdout open: its duration
 *     (was: under 3 s, local);
 *   - reading a fifo (local only): how long until it fails (was: under
 *     1 s);
 *   - archiving 64 MB of noise: how long the call takes to return (was:
 *     under 100 ms), the whole archive, and the longest gap between
 *     the ticks of a 10 ms timer meanwhile (was: under 300 ms);
 *   - listing 30,000 entries (local only): the call, the whole, the
 *     longest gap (was: under 100 ms and 300 ms).
 * Prints the figures and the old bounds beside them; never fails on
 * one. usage: sandbox_bench [local|docker] [-n RUNS] (assay-archive
 * beside it or in ASSAY_ARCHIVE_BIN; built and run by
 * tests/bench/sandbox_bench.sh) */
#include "../unit/sandbox_harness.h"

#include <signal.h>
#include <sys/stat.h>

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* One figure over the runs, with the bound a test once asserted. */
static void report(const char *what, int64_t *v, int n, const char *was)
{
	qsort(v, (size_t)n, sizeof *v, cmp_i64);
	int64_t med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	printf("  %-44s median %6lld ms (min %lld, max %lld)%s%s\n", what,
	       (long long)med, (long long)v[0], (long long)v[n - 1],
	       was ? "  was asserted: " : "", was ? was : "");
}

static void die(const char *what, const char *why)
{
	fprintf(stderr, "sandbox_bench: %s: %s\n", what, why ? why : "?");
	exit(1);
}

/* ms from spawn to the first line of a command that goes on running
 * (it is cancelled then). */
static int64_t first_line(struct harness *h)
{
	struct result r;
	int64_t t0 = now_ms();
	struct sbx_exec *e = harness_spawn(h, &r, "echo first; sleep 100", 120);
	if (!e)
		die("exec", "failed");
	while (!strstr(buf_str(&r.out), "first") && now_ms() - t0 < 60000)
		loop_once(h->loop, 5);
	int64_t ms = now_ms() - t0;
	sbx_exec_cancel(e);
	harness_wait(h, &r, 60000);
	result_free(&r);
	return ms;
}

/* ms after its 1 s timeout until on_exit of a command whose children
 * detach every way a shell can. */
static int64_t timeout_kill(struct harness *h)
{
	struct result r;
	int64_t t0 = now_ms();
	harness_run(h, &r,
	            "(trap '' TERM HUP INT; sleep 987911) & "
	            "(setsid sleep 987912 &) & nohup sleep 987913 "
	            ">/dev/null 2>&1 & disown; exec sleep 987914",
	            1);
	if (!r.done || !r.ex.timed_out)
		die("timeout", "the command was not timed out");
	result_free(&r);
	wait_no_procs("sleep 98791", 10000);
	return r.t_exit - t0 - 1000;
}

/* ms from sbx_exec_cancel to on_exit. */
static int64_t cancel(struct harness *h)
{
	struct result r;
	struct sbx_exec *e = harness_spawn(h, &r, "sleep 987921", 120);
	if (!e || wait_procs(h->loop, "sleep 987921", 1, 30000) < 1)
		die("cancel", "the command did not start");
	int64_t t0 = now_ms();
	sbx_exec_cancel(e);
	harness_wait(h, &r, 60000);
	result_free(&r);
	return r.t_exit - t0;
}

/* The duration of a command whose background child holds stdout. */
static int64_t background_pipe(struct harness *h)
{
	struct result r;
	harness_run(h, &r, "sleep 987931 & echo main done", 60);
	int64_t ms = r.ex.duration_ms;
	result_free(&r);
	wait_no_procs("sleep 987931", 10000);
	return ms;
}

/* ms until reading a fifo in the workspace fails. */
static int64_t fifo_read(struct harness *h)
{
	struct result r;
	harness_run(h, &r, "rm -f pipe; mkfifo pipe", 10);
	result_free(&r);
	struct hdone d = {0};
	int64_t t0 = now_ms();
	sbx_read_file(h->sbx, "pipe", 100, hdone_fn, &d);
	harness_settle(h->loop, &d, 60000);
	hdone_free(&d);
	return now_ms() - t0;
}

/* An operation (export or list) timed: the call, the whole, the
 * longest gap of a 10 ms timer meanwhile. */
static void timed_op(struct harness *h, int list, const char *tar,
                     int64_t *call, int64_t *whole, int64_t *gap)
{
	struct ticker t;
	ticker_start(&t, h->loop);
	struct hdone d = {0};
	int64_t t0 = now_ms();
	if (list)
		sbx_list(h->sbx, ".", 1, 100000, hdone_fn, &d);
	else
		sbx_export_tar(h->sbx, tar, hdone_fn, &d);
	*call = now_ms() - t0;
	if (harness_settle(h->loop, &d, 300000) < 0 || d.rc < 0)
		die(list ? "list" : "export", d.err);
	*whole = d.t - t0;
	ticker_stop(&t);
	*gap = t.max_gap;
	hdone_free(&d);
}

int main(int argc, char **argv)
{
	const char *backend = "local";
	int runs = 10;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else
			backend = argv[i];
	if (runs < 1 || runs > 200)
		runs = 10;
	int local = !strcmp(backend, "local");
	signal(SIGPIPE, SIG_IGN);
	struct harness h;
	harness_config(&h);
	config_set(&h.cfg.sandbox, backend);
	if (harness_start(&h) < 0)
		die("start", h.start_err);
	printf("%s sandbox, %d runs of each\n", backend, runs);

	int64_t *v = xcalloc((size_t)runs, sizeof *v);
	for (int i = 0; i < runs; i++)
		v[i] = first_line(&h);
	report("first line of a running command", v, runs,
	       local ? "< 2500 ms" : NULL);
	for (int i = 0; i < runs; i++)
		v[i] = timeout_kill(&h);
	report("timeout: on_exit after the 1 s timeout", v, runs,
	       local ? "< 3000 ms after" : "< 7000 ms after");
	for (int i = 0; i < runs; i++)
		v[i] = cancel(&h);
	report("cancel: on_exit after sbx_exec_cancel", v, runs, NULL);
	for (int i = 0; i < runs; i++)
		v[i] = background_pipe(&h);
	report("a background child holding stdout: duration", v, runs,
	       local ? "< 3000 ms" : NULL);
	if (local) {
		for (int i = 0; i < runs; i++)
			v[i] = fifo_read(&h);
		report("reading a fifo: until it fails", v, runs, "< 1000 ms");
	}

	/* 64 MB of noise (incompressible: the archive takes a while) */
	struct result r;
	harness_run(&h, &r, "head -c 67108864 /dev/urandom > noise.bin", 120);
	if (r.ex.exit_code != 0)
		die("noise.bin", buf_str(&r.err));
	result_free(&r);
	char *tar = xasprintf("%s/bench.tar.gz", h.run_dir);
	int64_t *call = xcalloc((size_t)runs, sizeof *call);
	int64_t *gap = xcalloc((size_t)runs, sizeof *gap);
	for (int i = 0; i < runs; i++) {
		timed_op(&h, 0, tar, &call[i], &v[i], &gap[i]);
		unlink(tar);
	}
	report("archive of 64 MB: the call", call, runs, "< 100 ms");
	report("archive of 64 MB: the whole", v, runs, NULL);
	report("archive: longest gap of a 10 ms timer", gap, runs, "< 300 ms");
	if (local) {
		harness_run(&h, &r,
		            "rm -f noise.bin; for d in $(seq 60); do mkdir "
		            "d$d; (cd d$d && touch $(seq -f f%g.txt 500)); "
		            "done",
		            120);
		result_free(&r);
		for (int i = 0; i < runs; i++)
			timed_op(&h, 1, NULL, &call[i], &v[i], &gap[i]);
		report("list of 30,060 entries: the call", call, runs,
		       "< 100 ms");
		report("list of 30,060 entries: the whole", v, runs, NULL);
		report("list: longest gap of a 10 ms timer", gap, runs,
		       "< 300 ms");
	}
	free(tar);
	free(v);
	free(call);
	free(gap);
	harness_stop(&h);
	harness_free(&h);
	return 0;
}
