/* docker_bench.c: the docker backend against the docker CLI, on the same
 * container in the same run, interleaved:
 *   - the round trip of `true`: sbx exec through the command runner
 *     (the default: one long-lived exec; a frame in, output and exit
 *     frames back; limits, process group and leftover sweep included),
 *     and through an exec per command (ASSAY_DOCKER_EXEC=exec: exec
 *     create, start with the stream attached, inspect, inside the
 *     wrapper), against `docker exec NAME true` (goal: at most half the
 *     CLI's time);
 *   - staging 50 MB of inputs (assay-archive packs, PUT .../archive)
 *     against `docker cp` of the same file (goal: at least as fast).
 * Prints medians and ratios; does not fail on a missed goal.
 *
 * usage: docker_bench [-n RUNS]  (assay-archive beside it; built and
 * run by tests/bench/docker_bench.sh) */
#include "assay/config.h"
#include "assay/loop.h"
#include "assay/sandbox.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct one {
	int done, code;
};

/* A completion (start, stage, stop) waited for on the loop. */
struct wait {
	int done, rc;
	char *err;
};

static void on_wait(void *arg, int rc, const char *err, struct buf *data,
                    cJSON *list)
{
	struct wait *w = arg;
	(void)data, (void)list;
	w->done = 1;
	w->rc = rc;
	w->err = err ? xstrdup(err) : NULL;
}

static void on_staged(void *arg, char *err)
{
	struct wait *w = arg;
	w->done = 1;
	w->rc = err ? -1 : 0;
	w->err = err;
}

static void wait_for(struct loop *l, struct wait *w)
{
	while (!w->done)
		loop_once(l, 100);
}

static void on_exit_cb(void *arg, const struct sbx_exit *ex)
{
	struct one *o = arg;
	o->done = 1;
	o->code = ex->error ? -2 : ex->exit_code;
}

static double api_cmd(struct sbx *s, struct loop *l, const char *cmd)
{
	struct one o = {0};
	struct sbx_exec_req r = {.command = cmd, .timeout_s = 30};
	struct sbx_exec_obs obs = {NULL, on_exit_cb, &o};
	char *err = NULL;
	int64_t t0 = now_ms();
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (!sbx_exec(s, &r, &obs, &err)) {
		fprintf(stderr, "exec: %s\n", err);
		exit(1);
	}
	while (!o.done && now_ms() - t0 < 30000)
		loop_once(l, 100);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (o.code != 0) {
		fprintf(stderr, "%s through the API failed (%d)\n", cmd,
		        o.code);
		exit(1);
	}
	return (double)(b.tv_sec - a.tv_sec) * 1e3 +
	       (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

static double api_true(struct sbx *s, struct loop *l)
{
	return api_cmd(s, l, "true");
}

/* Wall milliseconds of argv, which must succeed. */
static double run_cmd(char *const *argv)
{
	struct timespec a, b;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid_t pid;
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		perror(argv[0]);
		exit(1);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	posix_spawn_file_actions_destroy(&fa);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "%s %s failed\n", argv[0], argv[1]);
		exit(1);
	}
	return (double)(b.tv_sec - a.tv_sec) * 1e3 +
	       (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void report(const char *what, double *a, double *b, int n,
                   const char *an, const char *bn, const char *goal)
{
	if (!b) {
		double ma = median(a, n);
		printf("  %-34s median %7.1f ms (min %.1f, max %.1f)\n", an, ma,
		       a[0], a[n - 1]);
		return;
	}
	double ratio[256];
	for (int i = 0; i < n; i++)
		ratio[i] = a[i] / b[i];
	double mr = median(ratio, n);
	double ma = median(a, n), mb = median(b, n);
	printf("%s (%d runs, interleaved):\n", what, n);
	printf("  %-34s median %7.1f ms (min %.1f, max %.1f)\n", an, ma, a[0],
	       a[n - 1]);
	printf("  %-34s median %7.1f ms (min %.1f, max %.1f)\n", bn, mb, b[0],
	       b[n - 1]);
	printf("  ratio: median %.2fx (%s)\n", mr, goal);
}

int main(int argc, char **argv)
{
	int runs = 20;
	if (argc == 3 && !strcmp(argv[1], "-n"))
		runs = atoi(argv[2]);
	if (runs < 1 || runs > 256)
		runs = 20;
	signal(SIGPIPE, SIG_IGN);
	char tmpl[] = "/tmp/assay-dkbench-XXXXXX";
	char *dir = mkdtemp(tmpl);
	struct config cfg;
	config_defaults(&cfg);
	config_set(&cfg.sandbox, "docker");
	struct loop *l = loop_new();
	char *err = NULL;
	struct sbx *s = sbx_new(&cfg, l, dir, &err);
	struct wait sw = {0};
	if (s) {
		sbx_start(s, 1, on_wait, &sw);
		wait_for(l, &sw);
	}
	if (!s || sw.rc < 0) {
		fprintf(stderr, "docker sandbox: %s\n", s ? sw.err : err);
		return 1;
	}
	free(sw.err);
	struct docker *d = s->priv;
	char *name = d->name;
	printf("container %s, image %s, API %s\n", name, sbx_image(s),
	       d->api.version);

	/* -- true -- */
	double *api = xcalloc((size_t)runs, sizeof *api);
	double *cli = xcalloc((size_t)runs, sizeof *cli);
	double *per = xcalloc((size_t)runs, sizeof *per);
	double *cli2 = xcalloc((size_t)runs, sizeof *cli2);
	char *exec_argv[] = {"docker", "exec", name, "true", NULL};
	api_true(s, l); /* warm-up (and the runner up) */
	run_cmd(exec_argv);
	for (int i = 0; i < runs; i++) {
		api[i] = api_true(s, l);
		cli[i] = run_cmd(exec_argv);
		setenv("ASSAY_DOCKER_EXEC", "exec", 1);
		per[i] = api_true(s, l);
		unsetenv("ASSAY_DOCKER_EXEC");
		cli2[i] = run_cmd(exec_argv);
	}
	for (int i = 0; i < runs; i++)
		cli2[i] = (cli[i] + cli2[i]) / 2; /* the CLI beside either */
	double *cli_copy = xcalloc((size_t)runs, sizeof *cli_copy);
	memcpy(cli_copy, cli2, (size_t)runs * sizeof *cli_copy);
	report("round trip of `true`", api, cli2, runs,
	       "assay, command runner (default)", "docker exec (CLI)",
	       "goal <= 0.5x");
	report("round trip of `true`, an exec per command", per, cli_copy, runs,
	       "assay, ASSAY_DOCKER_EXEC=exec", "docker exec (CLI)",
	       "the runner's reason");

	/* -- 100 MB of output: the runner relays it once more -- */
	{
		const char *big_out = "head -c 104857600 /dev/zero";
		int m = runs < 6 ? runs : 6;
		double *ro = xcalloc((size_t)m, sizeof *ro);
		double *eo = xcalloc((size_t)m, sizeof *eo);
		for (int i = 0; i < m; i++) {
			ro[i] = api_cmd(s, l, big_out);
			setenv("ASSAY_DOCKER_EXEC", "exec", 1);
			eo[i] = api_cmd(s, l, big_out);
			unsetenv("ASSAY_DOCKER_EXEC");
		}
		report("100 MB of stdout", ro, eo, m,
		       "assay, command runner (default)",
		       "assay, ASSAY_DOCKER_EXEC=exec", "runner / exec");
		free(ro);
		free(eo);
	}

	/* -- 50 MB of inputs -- */
	char *big = xasprintf("%s/input-50mb.bin", dir);
	char *cmd = xasprintf("head -c 52428800 /dev/urandom > %s", big);
	if (system(cmd) != 0)
		return 1;
	free(cmd);
	config_add_input(&cfg, big, "input/input-50mb.bin");
	char *dest = xasprintf("%s:/workspace/input/", name);
	char *cp_argv[] = {"docker", "cp", big, dest, NULL};
	int n = runs < 8 ? runs : 8;
	double *st = xcalloc((size_t)n, sizeof *st);
	double *cp = xcalloc((size_t)n, sizeof *cp);
	for (int i = 0; i <= n; i++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		struct wait w = {0};
		if (!dk_stage(s, on_staged, &w, &err)) {
			fprintf(stderr, "stage: %s\n", err);
			return 1;
		}
		wait_for(l,
		         &w); /* the loop runs: the two helpers are children */
		if (w.rc < 0) {
			fprintf(stderr, "stage: %s\n", w.err);
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		double t = (double)(b.tv_sec - a.tv_sec) * 1e3 +
		           (double)(b.tv_nsec - a.tv_nsec) / 1e6;
		double c = run_cmd(cp_argv);
		if (i == 0)
			continue; /* warm-up: page cache */
		st[i - 1] = t;
		cp[i - 1] = c;
	}
	report("staging 50 MB", st, cp, n,
	       "assay (assay-archive + PUT archive)", "docker cp (CLI)",
	       "goal <= 1x");
	struct wait stw = {0};
	sbx_stop(s, on_wait, &stw);
	wait_for(l, &stw);
	free(stw.err);
	sbx_free(s);
	loop_free(l);
	config_free(&cfg);
	rm_rf(dir);
	free(api);
	free(cli);
	free(per);
	free(cli2);
	free(cli_copy);
	free(st);
	free(cp);
	free(big);
	free(dest);
	return 0;
}
