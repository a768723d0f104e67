/* docker_xfer.c: whole trees between the container and the host as tar
 * streams: staging the inputs, persisting and restoring the workspace,
 * fetching outputs. Each is two assay-archive helpers run as loop
 * children joined by a pipe: `assay-archive http` does the request to
 * the archive API, the other side packs, checks or unpacks the tar. So
 * neither the bytes nor libarchive pass through assay, and a workspace
 * of gigabytes never stalls the loop. */
#include "assay/config.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/spawn.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* `assay-archive http` exits: see src/helpers/assay_archive.c. */
enum {
	XF_STATUS = 3, /* the daemon answered with an error */
	XF_NO_ANSWER = 4,
	XF_BROKEN = 5, /* the reader gave up */
	XF_CUT = 6,    /* the transfer broke after a good answer */
};

#define XF_PROGRESS_LINES 1000000 /* repack's, at most */

struct dk_xfer {
	struct sbx *s;
	struct sbx_child *http, *tar;
	int get;        /* GET: http | tar; else tar | http */
	char *subject;  /* what the errors name: a path or an action */
	char *tmp_base; /* the tar side's output, "%s.tmp.<pid>" meanwhile */
	int http_code, tar_ok;
	/* repack's progress lines (a GET of the workspace), or the http
	 * side's (a PUT), to the sandbox's progress hook as label */
	struct sbx_listing progress;
	const char *label; /* "saving", "staging", "restoring" */
	int64_t t0;
	char *http_err, *tar_err;
	void (*done)(void *arg, char *err);
	void *arg;
};

void dk_xfer_free(struct dk_xfer *x)
{
	if (!x)
		return;
	if (x->tmp_base && x->tar) {
		char *tmp = xasprintf("%s.tmp.%d", x->tmp_base,
		                      (int)sbx_child_pid(x->tar));
		sbx_child_free(x->tar);
		x->tar = NULL;
		unlink(tmp); /* killed mid-archive */
		free(tmp);
	}
	sbx_child_free(x->http);
	sbx_child_free(x->tar);
	sbx_listing_free(&x->progress);
	free(x->subject);
	free(x->tmp_base);
	free(x->http_err);
	free(x->tar_err);
	free(x);
}

/* Both sides are done: the error that says most, or NULL. */
static char *xfer_error(struct dk_xfer *x)
{
	const char *h = x->http_err ? x->http_err : "no answer";
	const char *who = x->s->ops->name;
	if (!x->get) { /* the helper's own failure wins: it says why */
		if (!x->tar_ok)
			return xstrdup(x->tar_err);
		if (x->http_code)
			return xasprintf("%s: cannot %s: %s", who, x->subject,
			                 h);
		return NULL;
	}
	if (x->http_code == XF_STATUS || x->http_code == XF_NO_ANSWER)
		return xasprintf("%s: cannot read %s: %s", who, x->subject, h);
	if (!x->tar_ok)
		return xstrdup(x->tar_err);
	if (x->http_code)
		return xasprintf("%s: reading %s: %s", who, x->subject, h);
	return NULL;
}

/* One side ended; once both have, report. */
static void xfer_side_done(struct dk_xfer *x, struct sbx_child *c)
{
	if (c == x->http) {
		x->http_code = sbx_child_ok(c) ? 0 : sbx_child_code(c);
		if (x->http_code)
			x->http_err = sbx_child_error(c, "the transfer");
		if (x->http_code < 0)
			x->http_code = XF_NO_ANSWER; /* killed: no answer */
		x->http = NULL;
	} else {
		x->tar_ok = sbx_child_ok(c);
		if (x->tar_ok)
			sbx_child_log(c, "archive");
		else
			x->tar_err = sbx_child_error(c, "archive: the helper");
		x->tar = NULL;
	}
	sbx_child_free(c);
	if (x->http || x->tar)
		return;
	void (*done)(void *, char *) = x->done;
	void *arg = x->arg;
	char *err = xfer_error(x);
	if (err)
		sbx_progress_cut(x->s, &x->progress, x->label);
	dk_xfer_free(x);
	done(arg, err);
}

static void xfer_http_exit(void *arg, struct sbx_child *c)
{
	xfer_side_done(arg, c);
}

static void xfer_tar_exit(void *arg, struct sbx_child *c)
{
	xfer_side_done(arg, c);
}

/* repack's stdout (how much of the workspace is saved), or a PUT's
 * http side's (how much is sent). */
static void xfer_progress_out(void *arg, const char *data, size_t n)
{
	struct dk_xfer *x = arg;
	sbx_progress_feed(x->s, &x->progress, x->label, x->t0, data, n);
}

void dk_http_opts(struct sbx *s, struct strv *a)
{
	const struct dk_endpoint *ep = &dk_of(s)->api.ep;
	if (ep->unix_path)
		strv_pushv(a, 2, "--unix", ep->unix_path);
	if (ep->ca)
		strv_pushv(a, 2, "--ca", ep->ca);
	if (ep->cert)
		strv_pushv(a, 2, "--cert", ep->cert);
	if (ep->key)
		strv_pushv(a, 2, "--key", ep->key);
	if (ep->tls && !ep->verify)
		strv_push(a, "--insecure");
}

/* `assay-archive http ... METHOD URL` for the daemon of s. */
static void http_args(struct sbx *s, struct strv *a, const char *method,
                      const char *url)
{
	strv_push(a, "http");
	dk_http_opts(s, a);
	strv_pushv(a, 2, method, url);
}

/* Start both sides, the first writing into the second. */
static struct dk_xfer *xfer_start(struct sbx *s, struct dk_xfer *x,
                                  char *const *first, char *const *second,
                                  char **err)
{
	int p[2] = {-1, -1};
	if (pipe2(p, O_CLOEXEC) < 0) {
		set_err(err, "docker: pipe: %s", strerror(errno));
		dk_xfer_free(x);
		return NULL;
	}
	/* fewer, larger reads and writes between the two */
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	struct sbx_child_spec a = {.in_fd = -1, .out_fd = p[1], .arg = x};
	struct sbx_child_spec b = {.in_fd = p[0], .out_fd = -1, .arg = x};
	if (x->get && !strcmp(second[0], "repack"))
		x->label = "saving";
	else if (x->get && !strcmp(second[0], "extract") && second[1] &&
	         !strcmp(second[1], "--progress"))
		x->label = "delivering"; /* an output */
	if (x->label) { /* the second side's stdout is free either way */
		b.out_fd = SBX_CHILD_PIPE;
		b.on_out = xfer_progress_out;
		sbx_listing_init(&x->progress, XF_PROGRESS_LINES);
		x->t0 = now_ms();
	}
	a.on_exit = x->get ? xfer_http_exit : xfer_tar_exit;
	b.on_exit = x->get ? xfer_tar_exit : xfer_http_exit;
	struct sbx_child *ca = sbx_archive_spawn(s->loop, first, 1, &a, err);
	struct sbx_child *cb =
	    ca ? sbx_archive_spawn(s->loop, second, 1, &b, err) : NULL;
	close(p[0]);
	close(p[1]);
	x->http = x->get ? ca : cb;
	x->tar = x->get ? cb : ca;
	if (!ca || !cb) {
		dk_xfer_free(x);
		return NULL;
	}
	return x;
}

/* A transfer, its two children not yet started. */
static struct dk_xfer *xfer_new(struct sbx *s, int get, const char *subject,
                                void (*done)(void *arg, char *err), void *arg)
{
	struct dk_xfer *x = xcalloc(1, sizeof *x);
	x->s = s;
	x->get = get;
	x->subject = xstrdup(subject);
	x->done = done;
	x->arg = arg;
	return x;
}

struct dk_xfer *sbx_xfer_get(struct sbx *s, const char *subject,
                             char *const *http_argv, char *const *args,
                             const char *tmp_base,
                             void (*done)(void *arg, char *err), void *arg,
                             char **err)
{
	struct dk_xfer *x = xfer_new(s, 1, subject, done, arg);
	x->tmp_base = tmp_base ? xstrdup(tmp_base) : NULL;
	return xfer_start(s, x, http_argv, args, err);
}

struct dk_xfer *sbx_xfer_put(struct sbx *s, char *const *args,
                             char *const *http_argv, const char *what,
                             const char *label,
                             void (*done)(void *arg, char *err), void *arg,
                             char **err)
{
	struct dk_xfer *x = xfer_new(s, 0, what, done, arg);
	x->label = label;
	return xfer_start(s, x, args, http_argv, err);
}

struct dk_xfer *dk_xfer_get(struct sbx *s, const char *cpath, char *const *args,
                            const char *tmp_base,
                            void (*done)(void *arg, char *err), void *arg,
                            char **err)
{
	struct docker *d = dk_of(s);
	char *q = dk_escape(cpath);
	char *url = xasprintf("%s/v%s/containers/%s/archive?path=%s",
	                      d->api.ep.base, d->api.version, d->id, q);
	struct strv h = {0};
	http_args(s, &h, "GET", url);
	struct dk_xfer *x =
	    sbx_xfer_get(s, cpath, h.v, args, tmp_base, done, arg, err);
	strv_free(&h);
	free(url);
	free(q);
	return x;
}

struct dk_xfer *dk_xfer_put(struct sbx *s, char *const *args, const char *what,
                            const struct dk_put_progress *p,
                            void (*done)(void *arg, char *err), void *arg,
                            char **err)
{
	struct docker *d = dk_of(s);
	char *url = xasprintf("%s/v%s/containers/%s/archive?path=/workspace"
	                      "&copyUIDGID=1",
	                      d->api.ep.base, d->api.version, d->id);
	struct strv h = {0};
	strv_push(&h, "http");
	dk_http_opts(s, &h);
	if (p) {
		char total[32];
		snprintf(total, sizeof total, "%.0f", p->total);
		strv_pushv(&h, 4, "--progress", p->subject, "--total", total);
	}
	strv_pushv(&h, 2, "PUT", url);
	struct dk_xfer *x = sbx_xfer_put(s, args, h.v, what, p ? p->what : NULL,
	                                 done, arg, err);
	strv_free(&h);
	free(url);
	return x;
}

/* ---- persist and restore: one transfer each, as a job ---- */

struct dk_xjob {
	struct sbx_job job;
	struct dk_xfer *x;
};

static void xjob_abort(struct sbx_job *j)
{
	struct dk_xjob *xj = (struct dk_xjob *)j;
	dk_xfer_free(xj->x);
	free(xj);
}

/* The transfer ended: the job's caller hears how. */
static void xjob_done(void *arg, char *err)
{
	struct dk_xjob *xj = arg;
	xj->x = NULL;
	sbx_job_end(&xj->job, err ? SBX_FAILED : SBX_OK, err, NULL, NULL);
	free(err);
	free(xj);
}

/* Register x (or say why it did not start) as the job of fn. */
static void xjob_begin(struct sbx *s, struct dk_xjob *xj, const char *what,
                       sbx_done_fn fn, void *arg, char *err)
{
	if (!xj->x) {
		sbx_later(s, fn, arg, SBX_FAILED, err, NULL, NULL);
		free(xj);
		return;
	}
	sbx_job_begin(s, &xj->job, what, 0, fn, arg, xjob_abort);
}

void dk_export_tar(struct sbx *s, const char *path, sbx_done_fn fn, void *arg)
{
	struct docker *d = dk_of(s);
	if (!d || !d->started) {
		sbx_later(s, fn, arg, SBX_FAILED,
		          xstrdup("sandbox: not running"), NULL, NULL);
		return;
	}
	struct dk_xjob *xj = xcalloc(1, sizeof *xj);
	/* with inputs bound into the workspace, the archive reads the
	 * volume where it is seen without them (their mount points, made
	 * by the daemon, are left out) */
	char *args[] = {"repack", (char *)path, "workspace", NULL};
	/* a remote daemon's read-only inputs (dk_stage) left out too */
	char *skip[] = {"repack",     "--mounts",  s->mounts_json,
	                (char *)path, "workspace", NULL};
	char *bare[] = {"repack",     "--mounts",     s->mounts_json,
	                (char *)path, DK_WS_BARE + 1, NULL};
	char *err = NULL;
	xj->x = dk_xfer_get(s, d->volume ? DK_WS_BARE : "/workspace",
	                    d->volume        ? bare
	                    : s->mounts_json ? skip
	                                     : args,
	                    path, xjob_done, xj, &err);
	xjob_begin(s, xj, "the archive", fn, arg, err);
}

void dk_import_tar(struct sbx *s, const char *path, sbx_done_fn fn, void *arg)
{
	struct docker *d = dk_of(s);
	if (!d || !d->started || d->stopped) {
		sbx_later(s, fn, arg, SBX_FAILED,
		          xstrdup("sandbox: not running"), NULL, NULL);
		return;
	}
	struct dk_xjob *xj = xcalloc(1, sizeof *xj);
	/* the helper checks every entry before it writes the clean tar */
	/* the directories above the inputs keep the modes they were
	 * staged or bound with */
	char *args[] = {"restore", (char *)path, NULL};
	char *skip[] = {"restore", "--mounts", s->mounts_json, (char *)path,
	                NULL};
	char *err = NULL;
	/* the tar's size is known only at the end */
	struct dk_put_progress p = {"restoring", "the workspace", 0};
	xj->x = dk_xfer_put(s, s->mounts_json ? skip : args,
	                    "restore the workspace", &p, xjob_done, xj, &err);
	xjob_begin(s, xj, "the restore", fn, arg, err);
}

/* The tar pack makes of the SRC DEST pairs' files (a header and the
 * data in 512-byte blocks each, two blocks at the end), for the
 * staging's progress: 0 (not known) when a SRC is a directory. */
double sbx_pack_bytes(char *const *pairs, size_t n)
{
	double bytes = 1024;
	for (size_t i = 0; i + 1 < n; i += 2) {
		if (!strcmp(pairs[i], "--ro")) {
			i--;
			continue;
		}
		struct stat st;
		if (stat(pairs[i], &st) < 0 || !S_ISREG(st.st_mode))
			return 0;
		bytes += 512 + (double)((st.st_size + 511) / 512 * 512);
	}
	return bytes;
}

char **sbx_pack_args(struct sbx *s, int all, size_t *count, int *ro_out)
{
	const struct config *cfg = s->cfg;
	char **args = xcalloc(6 + 2 * cfg->n_inputs, sizeof *args);
	size_t n = 0;
	args[n++] = "pack";
	args[n++] = "--skip";
	args[n++] = s->run_dir;
	/* the copies first, then (a daemon that cannot bind this
	 * machine's files) the inputs that would be bound, read-only:
	 * their parents' modes are the last said */
	int ro = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < cfg->n_inputs; i++) {
			/* bound, not copied; on a resume only what the run
			 * had bound (a copy is in the restored workspace) */
			if (sbx_input_mounted(s, i) ||
			    (!all && cfg->inputs[i].copy) ||
			    (pass == 0) != (cfg->inputs[i].copy != 0))
				continue;
			if (pass && !ro++)
				args[n++] = "--ro";
			args[n++] = cfg->inputs[i].src;
			args[n++] = cfg->inputs[i].dest;
		}
	}
	*count = n;
	*ro_out = ro;
	return args;
}

struct dk_xfer *dk_stage(struct sbx *s, int all,
                         void (*done)(void *arg, char *err), void *arg,
                         char **err)
{
	size_t n = 0;
	int ro = 0;
	char **args = sbx_pack_args(s, all, &n, &ro);
	struct dk_put_progress p = {"staging", "the inputs",
	                            sbx_pack_bytes(args + 3, n - 3)};
	struct dk_xfer *x =
	    n > 3 ? dk_xfer_put(s, args, "stage the inputs", &p, done, arg, err)
	          : NULL;
	free(args);
	/* read-only copies are kept out of the archive and refused to the
	 * file tools as bound ones are: the same table */
	if (x && ro && !s->mounts.n && sbx_mounts_prepare(s, -1, err) < 0) {
		dk_xfer_free(x);
		return NULL;
	}
	return x;
}

/* ---- for the tests ---- */

int dk_extract_fd(int fd, const char *name, const char *dest, char **err)
{
	char *bin = sbx_archive_helper();
	if (!bin || access(bin, X_OK) < 0) {
		free(bin);
		return set_err(err, "archive: helper not found");
	}
	char *argv[] = {bin, "extract", (char *)dest, (char *)name, NULL};
	struct spawn_opts o = {
	    .argv = argv,
	    .io = {{SPAWN_FD, fd}, {SPAWN_INHERIT, -1}, {SPAWN_PIPE, -1}}};
	struct spawn_proc p;
	char *why = NULL;
	if (spawn_start(&o, &p, &why) < 0) {
		set_err(err, "archive: %s", why);
		free(why);
		free(bin);
		return -1;
	}
	struct buf msg;
	buf_init(&msg, 4096);
	char tmp[512];
	ssize_t r;
	while ((r = read(p.fd[2], tmp, sizeof tmp)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		buf_append(&msg, tmp, (size_t)r);
	}
	close(p.fd[2]);
	int status = 0;
	while (waitpid(p.pid, &status, 0) < 0 && errno == EINTR)
		;
	int rc = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		while (msg.len && msg.data[msg.len - 1] == '\n')
			msg.data[--msg.len] = '\0';
		char *last = msg.len ? strrchr(msg.data, '\n') : NULL;
		rc = set_err(err, "%s",
		             msg.len ? (last ? last + 1 : msg.data)
		                     : "archive: the helper failed");
	}
	buf_free(&msg);
	free(bin);
	return rc;
}
