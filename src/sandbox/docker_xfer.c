/* docker_xfer.c: whole trees between the container and the host as tar
 * streams through the archive API: staging the inputs, persisting and
 * restoring the workspace, fetching outputs. Each is a transfer of
 * xfer.c (two assay-archive helpers joined by a pipe) whose http side
 * speaks to the daemon; so neither the bytes nor libarchive pass
 * through assay, and a workspace of gigabytes never stalls the loop. */
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

struct xfer *dk_xfer_get(struct sbx *s, const char *cpath, char *const *args,
                         const char *tmp_base,
                         void (*done)(void *arg, char *err), void *arg,
                         char **err)
{
	struct docker *d = dk_of(s);
	char *q = xfer_escape(cpath);
	char *url = xasprintf("%s/v%s/containers/%s/archive?path=%s",
	                      d->api.ep.base, d->api.version, d->id, q);
	struct strv h = {0};
	http_args(s, &h, "GET", url);
	struct xfer *x =
	    xfer_get(s, cpath, h.v, args, tmp_base, done, arg, err);
	strv_free(&h);
	free(url);
	free(q);
	return x;
}

struct xfer *dk_xfer_put(struct sbx *s, char *const *args, const char *what,
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
	struct xfer *x =
	    xfer_put(s, args, h.v, what, p ? p->what : NULL, done, arg, err);
	strv_free(&h);
	free(url);
	return x;
}

/* ---- persist and restore: one transfer each, as a job ---- */

struct dk_xjob {
	struct sbx_job job;
	struct xfer *x;
};

static void xjob_abort(struct sbx_job *j)
{
	struct dk_xjob *xj = (struct dk_xjob *)j;
	xfer_free(xj->x);
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

struct xfer *dk_stage(struct sbx *s, int all,
                      void (*done)(void *arg, char *err), void *arg, char **err)
{
	size_t n = 0;
	int ro = 0;
	char **args = xfer_pack_args(s, all, &n, &ro);
	struct dk_put_progress p = {"staging", "the inputs",
	                            xfer_pack_bytes(args + 3, n - 3)};
	struct xfer *x =
	    n > 3 ? dk_xfer_put(s, args, "stage the inputs", &p, done, arg, err)
	          : NULL;
	free(args);
	/* read-only copies are kept out of the archive and refused to the
	 * file tools as bound ones are: the same table */
	if (x && ro && !s->mounts.n && sbx_mounts_prepare(s, -1, err) < 0) {
		xfer_free(x);
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
