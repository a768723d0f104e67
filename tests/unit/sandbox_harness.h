/* sandbox_harness.h: shared by the sandbox tests. Starts a local
 * sandbox in a temporary run directory with a real loop, runs
 * commands to completion collecting their output, waits for the
 * completions of the other operations (checking the contract: called
 * once, from the loop, never before the call returns), and finds host
 * processes by a marker in their command line. */
#ifndef ASSAY_TEST_SANDBOX_HARNESS_H
#define ASSAY_TEST_SANDBOX_HARNESS_H

#include "assay/buf.h"
#include "assay/config.h"
#include "assay/loop.h"
#include "assay/sandbox.h"
#include "assay/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HARNESS_KEEP (1u << 20) /* output kept per stream for asserts */

struct harness {
	struct config cfg;
	struct loop *loop;
	struct sbx *sbx;
	char *run_dir;
	char *start_err;
};

struct result {
	struct buf out, err;
	uint64_t out_bytes, err_bytes;
	int done;
	struct sbx_exit ex;
	int64_t t_exit; /* now_ms() when on_exit came */
};

static inline void result_output(void *arg, enum sbx_stream s, const char *data,
                                 size_t n)
{
	struct result *r = arg;
	struct buf *b = s == SBX_STDOUT ? &r->out : &r->err;
	if (s == SBX_STDOUT)
		r->out_bytes += n;
	else
		r->err_bytes += n;
	if (b->len + n <= HARNESS_KEEP)
		buf_append(b, data, n);
}

static inline void result_exit(void *arg, const struct sbx_exit *ex)
{
	struct result *r = arg;
	r->ex = *ex;
	r->ex.error = NULL;
	r->done = 1;
	r->t_exit = now_ms();
}

static inline void result_init(struct result *r)
{
	memset(r, 0, sizeof *r);
	buf_init(&r->out, 0);
	buf_init(&r->err, 0);
}

static inline void result_free(struct result *r)
{
	buf_free(&r->out);
	buf_free(&r->err);
}

/* Start a sandbox with cfg tweaked by the caller beforehand (h->cfg
 * initialised by harness_config). 0, or -1 with h->start_err set. */
static inline void harness_config(struct harness *h)
{
	memset(h, 0, sizeof *h);
	config_defaults(&h->cfg);
	char tmpl[] = "/tmp/assay-test-XXXXXX";
	h->run_dir = xstrdup(mkdtemp(tmpl));
	h->loop = loop_new();
}

/* ---- completions of operations other than exec ---- */

struct hdone {
	int called;  /* how many times fn came (the contract: once) */
	int early;   /* it came before the call returned */
	int waiting; /* the call has returned */
	int rc;
	char *err;
	char *data; /* read_file's, NUL-terminated */
	size_t len;
	cJSON *list; /* list's, a copy */
	int64_t t;   /* now_ms() when it came */
};

static inline void hdone_fn(void *arg, int rc, const char *err,
                            struct buf *data, cJSON *list)
{
	struct hdone *d = arg;
	if (!d->waiting)
		d->early = 1;
	d->called++;
	d->rc = rc;
	free(d->err);
	d->err = err ? xstrdup(err) : NULL;
	free(d->data);
	d->data =
	    data ? xstrndup(data->data ? data->data : "", data->len) : NULL;
	d->len = data ? data->len : 0;
	cJSON_Delete(d->list);
	d->list = list ? cJSON_Duplicate(list, 1) : NULL;
	d->t = now_ms();
}

static inline void hdone_free(struct hdone *d)
{
	free(d->err);
	free(d->data);
	cJSON_Delete(d->list);
	memset(d, 0, sizeof *d);
}

/* The call that takes d has returned: run the loop until d comes (at
 * most max_ms), then a little longer to see it does not come twice.
 * 0, or -1 with a reason on stderr when the contract was broken or it
 * never came. */
static inline int harness_settle(struct loop *l, struct hdone *d,
                                 int64_t max_ms)
{
	if (d->called) {
		fprintf(stderr, "completion called before the call returned\n");
		return -1;
	}
	d->waiting = 1;
	int64_t end = now_ms() + max_ms;
	while (!d->called && now_ms() < end)
		loop_once(l, 100);
	for (int i = 0; i < 3; i++)
		loop_once(l, 0);
	if (d->called != 1 || d->early) {
		fprintf(stderr, "completion called %d times%s\n", d->called,
		        d->early ? ", early" : "");
		return -1;
	}
	return 0;
}

static inline int harness_start(struct harness *h)
{
	char *err = NULL;
	h->sbx = sbx_new(&h->cfg, h->loop, h->run_dir, &err);
	if (!h->sbx) {
		h->start_err = err ? err : xstrdup("unknown error");
		return -1;
	}
	struct hdone d = {0};
	sbx_start(h->sbx, 1, hdone_fn, &d);
	if (harness_settle(h->loop, &d, 180000) < 0 || d.rc < 0) {
		h->start_err =
		    xstrdup(d.err ? d.err : "start broke its contract");
		hdone_free(&d);
		return -1;
	}
	hdone_free(&d);
	return 0;
}

/* sbx_stop to its end: its rc. */
static inline int harness_stop(struct harness *h)
{
	struct hdone d = {0};
	sbx_stop(h->sbx, hdone_fn, &d);
	int rc = harness_settle(h->loop, &d, 60000) < 0 ? -2 : d.rc;
	hdone_free(&d);
	return rc;
}

/* sbx_fetch to its end: its rc; *err (if it failed) is the caller's. */
static inline int harness_fetch(struct harness *h, const char *rel,
                                const char *dest, char **err)
{
	struct hdone d = {0};
	sbx_fetch(h->sbx, rel, dest, hdone_fn, &d);
	int rc = harness_settle(h->loop, &d, 120000) < 0 ? -2 : d.rc;
	if (rc < 0 && err) {
		free(*err);
		*err = d.err ? xstrdup(d.err) : xstrdup("fetch failed");
	}
	hdone_free(&d);
	return rc;
}

/* sbx_export_tar to its end, as harness_fetch. */
static inline int harness_export(struct harness *h, const char *path,
                                 char **err)
{
	struct hdone d = {0};
	sbx_export_tar(h->sbx, path, hdone_fn, &d);
	int rc = harness_settle(h->loop, &d, 300000) < 0 ? -2 : d.rc;
	if (rc < 0 && err) {
		free(*err);
		*err = d.err ? xstrdup(d.err) : xstrdup("export failed");
	}
	hdone_free(&d);
	return rc;
}

/* Is the failure one of "this machine cannot sandbox"? */
static inline int harness_unavailable(const struct harness *h)
{
	return h->start_err &&
	       (strstr(h->start_err, "cannot create namespaces") ||
	        strstr(h->start_err, "is not installed"));
}

static inline void harness_free(struct harness *h)
{
	sbx_free(h->sbx);
	loop_free(h->loop);
	if (h->run_dir)
		rm_rf(h->run_dir);
	free(h->run_dir);
	free(h->start_err);
	config_free(&h->cfg);
	memset(h, 0, sizeof *h);
}

/* Run the loop until r is done or max_ms pass. */
static inline void harness_wait(struct harness *h, struct result *r,
                                int64_t max_ms)
{
	int64_t end = now_ms() + max_ms;
	while (!r->done && now_ms() < end)
		loop_once(h->loop, 100);
}

static inline struct sbx_exec *harness_spawn(struct harness *h,
                                             struct result *r, const char *cmd,
                                             int timeout_s)
{
	result_init(r);
	struct sbx_exec_req req = {.command = cmd, .timeout_s = timeout_s};
	struct sbx_exec_obs obs = {result_output, result_exit, r};
	char *err = NULL;
	struct sbx_exec *e = sbx_exec(h->sbx, &req, &obs, &err);
	if (!e) {
		fprintf(stderr, "exec failed: %s\n", err);
		free(err);
	}
	return e;
}

/* Run cmd to the end (at most 60 s of waiting). */
static inline void harness_run(struct harness *h, struct result *r,
                               const char *cmd, int timeout_s)
{
	if (harness_spawn(h, r, cmd, timeout_s))
		harness_wait(h, r, 60000);
}

static inline int count_procs(const char *marker);

/* A 10 ms timer that notes the longest gap between its ticks (how long
 * the loop was kept from running timers: a figure to print, never to
 * assert, it depends on the machine's load) and, when marker is set,
 * how many ticks came while a host process with marker in its command
 * line was alive: more than one means the loop ran while that process
 * (a helper, a probe) did its work, whatever the load. */
struct ticker {
	struct loop *l;
	uint64_t id;
	int64_t last, max_gap;
	int ticks;
	const char *marker;
	int ticks_alive;
};

static inline void ticker_tick(void *arg)
{
	struct ticker *t = arg;
	int64_t now = now_ms();
	if (now - t->last > t->max_gap)
		t->max_gap = now - t->last;
	t->last = now;
	t->ticks++;
	if (t->marker && count_procs(t->marker) > 0)
		t->ticks_alive++;
	t->id = loop_timer_add(t->l, 10, ticker_tick, t);
}

static inline void ticker_start(struct ticker *t, struct loop *l)
{
	memset(t, 0, sizeof *t);
	t->l = l;
	t->last = now_ms();
	t->id = loop_timer_add(l, 10, ticker_tick, t);
}

static inline void ticker_stop(struct ticker *t)
{
	if (t->id)
		loop_timer_cancel(t->l, t->id);
	t->id = 0;
}

/* How many host processes have marker in their command line; with
 * show, each is printed (pid, state, command line) to stderr. */
static inline int scan_procs(const char *marker, int show)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;
	char path[300], buf[4096], stat[512];
	while (d && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/cmdline", de->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t len = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (len <= 0)
			continue;
		for (ssize_t i = 0; i < len; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[len] = '\0';
		if (!strstr(buf, marker))
			continue;
		n++;
		if (!show)
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		stat[0] = '\0';
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t k = read(fd, stat, sizeof stat - 1);
			stat[k > 0 ? k : 0] = '\0';
			close(fd);
		}
		fprintf(stderr, "left: pid %s stat [%.80s] cmdline [%.200s]\n",
		        de->d_name, stat, buf);
	}
	if (d)
		closedir(d);
	return n;
}

static inline int count_procs(const char *marker)
{
	return scan_procs(marker, 0);
}

/* Run the loop until at least n host processes have marker in their
 * command line (a command, a helper: started and under way), at most
 * ms; the count. */
static inline int wait_procs(struct loop *l, const char *marker, int n, int ms)
{
	int64_t end = now_ms() + ms;
	int c;
	while ((c = count_procs(marker)) < n && now_ms() < end)
		loop_once(l, 20);
	return c;
}

/* Wait up to ms for processes with marker to disappear; the count left
 * (those left are printed). ms is a hang guard, not a speed target: a
 * loaded machine takes its time to schedule a killed process. */
static inline int wait_no_procs(const char *marker, int ms)
{
	int64_t end = now_ms() + ms;
	int n;
	while ((n = count_procs(marker)) > 0 && now_ms() < end)
		usleep(20000);
	if (n > 0)
		scan_procs(marker, 1);
	return n;
}

static inline char *ws_path(struct harness *h, const char *rel)
{
	return xasprintf("%s/%s", sbx_workspace(h->sbx), rel);
}

#endif
