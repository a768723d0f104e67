/* sandbox_harness.h: shared by the sandbox tests. Starts a local
 * sandbox in a temporary run directory with a real loop, runs
 * commands to completion collecting their output, and finds host
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

static inline int harness_start(struct harness *h)
{
	char *err = NULL;
	h->sbx = sbx_new(&h->cfg, h->loop, h->run_dir, &err);
	if (h->sbx && h->sbx->ops->start(h->sbx, &err) == 0)
		return 0;
	h->start_err = err ? err : xstrdup("unknown error");
	return -1;
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
	struct sbx_exec *e = h->sbx->ops->exec(h->sbx, &req, &obs, &err);
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

/* How many host processes have marker in their command line. */
static inline int count_procs(const char *marker)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;
	char path[300], buf[4096];
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
		if (strstr(buf, marker))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* Wait up to ms for processes with marker to disappear; the count left. */
static inline int wait_no_procs(const char *marker, int ms)
{
	int64_t end = now_ms() + ms;
	int n;
	while ((n = count_procs(marker)) > 0 && now_ms() < end)
		usleep(20000);
	return n;
}

static inline char *ws_path(struct harness *h, const char *rel)
{
	return xasprintf("%s/%s", h->sbx->workspace, rel);
}

#endif
