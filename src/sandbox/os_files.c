/* os_files.c: the workspace of an OpenSandbox sandbox seen from assay.
 * Reads, listings and every path's confinement run inside the sandbox
 * through the shared fileop script (fileop.c), as a
 * command whose output is base64 (execd's stream is line-based text);
 * writes are uploaded next to their target (multipart POST
 * /files/upload) and renamed over it by the same command that checks
 * the place. Whole trees (the inputs, the workspace archive, a
 * resume's restore, an output directory) move as a tar file in the
 * sandbox's /tmp/.assay-xfer: `tar` in the sandbox makes or unpacks
 * it, and the two assay-archive helpers of xfer.c move it
 * between that file and the host (`http --headers ... GET` of
 * /files/download, or `http --multipart ... POST` of /files/upload),
 * so neither the bytes nor libarchive pass through assay. Each
 * operation is a job: a stop lets it finish, sbx_free ends it. */
#include "assay/config.h"
#include "assay/http.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/fileop.h"
#include "sandbox/os_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OS_XFER_DIR "/tmp/.assay-xfer"
#define OS_PRELIST_MS 2000 /* a cell's listing serves that long */

struct os_fop {
	struct sbx_job job;
	struct sbx *s;
	struct os_exec *x;
	struct os_call *call;
	struct xfer *xfer;
	struct http_xfer *up; /* write_file's upload */
	struct os_b64 out;    /* stdout, decoded */
	struct buf err;
	long up_status;
	char *rel, *dest, *remote, *path;
	size_t max;
	int recursive, n_done;
	/* it changes the workspace: o->gen moves when it begins and when
	 * it ends (a cell's listing taken meanwhile misses what it did) */
	int changes;
	void (*done)(void *arg, char *err); /* staging: the start's */
	void *done_arg;
};

static void fop_free(struct os_fop *op)
{
	buf_free(&op->out.out);
	buf_free(&op->err);
	free(op->rel);
	free(op->dest);
	free(op->remote);
	free(op->path);
	free(op);
}

/* A tar file left in the sandbox's /tmp goes, whatever happened. */
static void forget(struct sbx *s, const char *remote)
{
	if (!remote || !os_of(s) || !os_of(s)->execd || os_of(s)->expired)
		return;
	char *q = xfer_escape(remote);
	char *path = xasprintf("/files?path=%s", q), *err = NULL;
	struct os_call *c =
	    os_call(s, 1, "DELETE", path, NULL, 30000, NULL, NULL, &err);
	(void)c;
	free(err);
	free(path);
	free(q);
}

static void fop_abort(struct sbx_job *j)
{
	struct os_fop *op = (struct os_fop *)j;
	os_exec_detach(op->x);
	os_call_cancel(op->call);
	xfer_free(op->xfer);
	if (op->up)
		http_cancel(op->up);
	fop_free(op);
}

static void fop_end(struct os_fop *op, int rc, const char *err,
                    struct buf *data, cJSON *list)
{
	if (op->changes)
		os_of(op->s)->gen++;
	if (op->done) { /* the staging of a start, not a job */
		void (*done)(void *, char *) = op->done;
		void *arg = op->done_arg;
		fop_free(op);
		done(arg, rc == SBX_OK ? NULL : xstrdup(err ? err : "failed"));
		return;
	}
	sbx_job_end(&op->job, rc, err, data, list);
	fop_free(op);
}

static void fop_output(void *arg, enum sbx_stream st, const char *data,
                       size_t n)
{
	struct os_fop *op = arg;
	if (st == SBX_STDOUT)
		os_b64_feed(&op->out, data, n);
	else if (op->err.len + n <= 4096)
		buf_append(&op->err, data, n);
}

/* Why a step failed: the script's message (execd may add lines of its
 * own: the last one), or the exec's. */
static char *fop_error(struct os_fop *op, const struct sbx_exit *ex)
{
	return fileop_error(ex, &op->err, op->rel, 1);
}

/* Run a shell script in the sandbox (internal: no limits) for op; with
 * fileop set, `bash -c FILEOP fileop ARGS...` base64'd is put in front
 * as $r's source: the script gets the fileop's output on stdout. */
static int fop_run(struct os_fop *op, const char *script, size_t out_max,
                   void (*on_exit)(void *, const struct sbx_exit *), char **err)
{
	buf_free(&op->out.out);
	buf_init(&op->out.out, out_max);
	op->out.acc = 0;
	op->out.bits = 0;
	op->out.bad = 0;
	buf_free(&op->err);
	buf_init(&op->err, 0);
	struct os_exec_args a = {
	    .command = script, .internal = 1, .timeout_s = 3600};
	struct sbx_exec_obs obs = {fop_output, on_exit, op};
	op->x = os_exec_start(op->s, &a, &obs, err);
	return op->x ? 0 : -1;
}

/* `bash -c FILEOP fileop ARGS...` as a shell word list. */
static char *fileop_cmd(const char *const *argv)
{
	struct buf b;
	buf_init(&b, 0);
	char *script = os_quote(fileop_script);
	buf_printf(&b, "bash -c %s fileop", script);
	free(script);
	for (size_t i = 0; argv[i]; i++) {
		char *w = os_quote(argv[i]);
		buf_printf(&b, " %s", w);
		free(w);
	}
	return buf_detach(&b);
}

/* The fileop with argv, its output base64'd (execd's stream is text),
 * as a script. */
static char *fileop_b64(const char *const *argv)
{
	char *f = fileop_cmd(argv);
	char *script = xasprintf("set -o pipefail\n%s | base64\n", f);
	free(f);
	return script;
}

/* The first step: it runs (op becomes a job) or the caller hears why
 * not from the loop. */
static void fop_begin(struct os_fop *op, const char *what, const char *script,
                      size_t out_max,
                      void (*on_exit)(void *, const struct sbx_exit *),
                      sbx_done_fn fn, void *arg)
{
	char *err = NULL;
	if (fop_run(op, script, out_max, on_exit, &err) < 0) {
		sbx_later(op->s, fn, arg, SBX_FAILED, err, NULL, NULL);
		fop_free(op);
		return;
	}
	sbx_job_begin(op->s, &op->job, what, 1, fn, arg, fop_abort);
}

static struct os_fop *fop_new(struct sbx *s, const char *rel)
{
	struct os_fop *op = xcalloc(1, sizeof *op);
	op->s = s;
	op->rel = xstrdup(rel ? rel : "");
	buf_init(&op->out.out, 0);
	buf_init(&op->err, 0);
	return op;
}

/* An operation that changes the workspace: the generation moves now
 * and again at its end (fop_end). */
static struct os_fop *fop_new_changing(struct sbx *s, const char *rel)
{
	os_of(s)->gen++;
	struct os_fop *op = fop_new(s, rel);
	op->changes = 1;
	return op;
}

/* ---- read_file ---- */

static void fop_read_done(void *arg, const struct sbx_exit *ex)
{
	struct os_fop *op = arg;
	op->x = NULL;
	char *err = NULL;
	struct buf b;
	buf_init(&b, 0);
	int rc =
	    ex->error || ex->exit_code != 0 || op->out.bad
	        ? SBX_FAILED
	        : fileop_read_result(&op->out.out, op->rel, op->max, &b, &err);
	if (rc == SBX_FAILED)
		err = fop_error(op, ex);
	fop_end(op, rc, err, rc < 0 ? NULL : &b, NULL);
	buf_free(&b);
	free(err);
}

void os_read_file(struct sbx *s, const char *rel, size_t max, sbx_done_fn fn,
                  void *arg)
{
	struct os_fop *op = fop_new(s, rel);
	op->max = max;
	struct fileop_args a;
	fileop_read_args(&a, rel, max);
	char *script = fileop_b64(a.argv);
	fop_begin(op, "the read", script, a.out_max, fop_read_done, fn, arg);
	free(script);
}

/* ---- list ---- */

static void fop_list_done(void *arg, const struct sbx_exit *ex)
{
	struct os_fop *op = arg;
	op->x = NULL;
	if (ex->error || ex->exit_code != 0 || op->out.bad) {
		char *err = fop_error(op, ex);
		fop_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
		return;
	}
	int rc = SBX_OK;
	char *err = NULL;
	cJSON *list =
	    fileop_list_result(&op->out.out, op->rel, op->max, &rc, &err);
	fop_end(op, rc, err, NULL, list);
	free(err);
	cJSON_Delete(list);
}

int os_prelist_args(struct sbx *s, struct fileop_args *a)
{
	struct osbx *o = os_of(s);
	if (!o->list_max)
		return -1;
	fileop_list_args(a, ".", 1, o->list_max);
	return 0;
}

/* The listing a python cell's command took at its end, when it still
 * holds: nothing that may change the workspace ran or began since that
 * cell (o->gen), nothing runs, and it is at most OS_PRELIST_MS old (the
 * listing after a call is asked for at once). It serves once. */
static int prelist_serve(struct sbx *s, size_t max, sbx_done_fn fn, void *arg)
{
	struct osbx *o = os_of(s);
	struct os_prelist *p = &o->pre;
	int fresh = p->valid && p->gen == o->gen && max <= p->max &&
	            now_ms() - p->at <= OS_PRELIST_MS && !os_exec_busy(s);
	p->valid = 0;
	if (!fresh) {
		buf_free(&p->recs);
		return 0;
	}
	int rc = SBX_OK;
	char *err = NULL;
	cJSON *list = fileop_list_result(&p->recs, ".", max, &rc, &err);
	buf_free(&p->recs);
	sbx_later_listing(s, fn, arg, rc, err, list, p->taken);
	return 1;
}

void os_list(struct sbx *s, const char *rel, int recursive, size_t max,
             sbx_done_fn fn, void *arg)
{
	struct osbx *o = os_of(s);
	if (recursive && !strcmp(rel, ".")) {
		if (max > o->list_max)
			o->list_max = max;
		if (prelist_serve(s, max, fn, arg))
			return;
	}
	struct os_fop *op = fop_new(s, rel);
	op->max = max;
	op->recursive = recursive;
	struct fileop_args a;
	fileop_list_args(&a, rel, recursive, max);
	char *script = fileop_b64(a.argv);
	fop_begin(op, "the listing", script, a.out_max, fop_list_done, fn, arg);
	free(script);
}

/* ---- write_file: upload beside the target, then rename over it ---- */

/* The last command of an operation: done, or why not (a file it
 * left in the sandbox goes). */
static void last_step(void *arg, const struct sbx_exit *ex)
{
	struct os_fop *op = arg;
	op->x = NULL;
	if (ex->error || ex->exit_code != 0) {
		char *err = fop_error(op, ex);
		forget(op->s, op->remote);
		fop_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
		return;
	}
	fop_end(op, SBX_OK, NULL, NULL, NULL);
}

static void up_response(struct http_xfer *x, long status, void *arg)
{
	(void)x;
	((struct os_fop *)arg)->up_status = status;
}

static int up_data(struct http_xfer *x, const char *data, size_t n, void *arg)
{
	(void)x;
	struct os_fop *op = arg;
	if (op->err.len + n <= 4096)
		buf_append(&op->err, data, n);
	return 0;
}

static void uploaded(struct http_xfer *x, int ok, const char *errmsg, void *arg)
{
	(void)x;
	struct os_fop *op = arg;
	op->up = NULL;
	if (!ok || op->up_status != 200) {
		cJSON *j = cJSON_ParseWithLength(
		    op->err.data ? op->err.data : "", op->err.len);
		char *err =
		    !ok ? xasprintf("opensandbox: cannot write %s: %s", op->rel,
		                    errmsg ? errmsg : "failed")
		        : xasprintf("opensandbox: cannot write %s: %s "
		                    "(HTTP %ld)",
		                    op->rel, json_str(j, "message", "refused"),
		                    op->up_status);
		cJSON_Delete(j);
		fop_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
		return;
	}
	/* the fileop's prepare checks (and makes) the directory inside
	 * the workspace; the rename is atomic on one filesystem */
	const char *argv[] = {"prepare", op->rel, NULL};
	char *f = fileop_cmd(argv);
	const char *base = strrchr(op->rel, '/');
	base = base ? base + 1 : op->rel;
	char *qb = os_quote(base), *qr = os_quote(op->remote);
	char *script = xasprintf("r=$(%s) || { rm -f -- %s; exit 3; }\n"
	                         "exec mv -f -- %s \"$r\"/%s\n",
	                         f, qr, qr, qb);
	char *err = NULL;
	if (fop_run(op, script, 4096, last_step, &err) < 0) {
		fop_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
	}
	free(script);
	free(qb);
	free(qr);
	free(f);
}

void os_write_file(struct sbx *s, const char *rel, const void *data, size_t n,
                   sbx_done_fn fn, void *arg)
{
	struct osbx *o = os_of(s);
	struct os_fop *op = fop_new_changing(s, rel);
	op->remote = xasprintf("/workspace/.assay-upload.%d.%u", (int)getpid(),
	                       ++o->seq);
	struct buf body, post;
	xfer_upload_form(op->remote, &body, &post);
	buf_append(&body, data, n);
	buf_append(&body, post.data, post.len);
	buf_free(&post);
	char *url = xasprintf("%s/files/upload", o->execd);
	const char **h = os_execd_headers(s, XFER_UPLOAD_CTYPE);
	struct http_request r = {
	    .method = "POST",
	    .url = url,
	    .headers = h,
	    .body = body.data,
	    .body_len = body.len,
	    .on_response = up_response,
	    .on_data = up_data,
	    .on_done = uploaded,
	    .arg = op,
	};
	char *err = NULL;
	op->up = http_start(o->http, &r, &err);
	free(h);
	free(url);
	buf_free(&body);
	if (!op->up) {
		sbx_later(s, fn, arg, SBX_FAILED, err, NULL, NULL);
		fop_free(op);
		return;
	}
	sbx_job_begin(s, &op->job, "the write", 1, fn, arg, fop_abort);
}

/* ---- whole trees: a tar file in the sandbox's /tmp ---- */

/* `assay-archive http --headers F [more] METHOD URL` for execd. */
static void http_argv(struct sbx *s, struct strv *a, const char *method,
                      const char *path, const char *upload,
                      const char *progress, double total)
{
	struct osbx *o = os_of(s);
	strv_pushv(a, 3, "http", "--headers", o->hdr_file);
	if (upload)
		strv_pushv(a, 2, "--multipart", upload);
	if (progress) {
		char t[32];
		snprintf(t, sizeof t, "%.0f", total);
		strv_pushv(a, 4, "--progress", progress, "--total", t);
	}
	strv_push(a, method);
	if (upload) {
		strv_take(a, xasprintf("%s/files/upload", o->execd));
	} else {
		char *q = xfer_escape(path);
		strv_take(a,
		          xasprintf("%s/files/download?path=%s", o->execd, q));
		free(q);
	}
}

static char *xfer_name(struct sbx *s)
{
	return xasprintf(OS_XFER_DIR "/%d.%u.tar", (int)getpid(),
	                 ++os_of(s)->seq);
}

/* ---- GET: a command makes the tar, a helper pair takes it ---- */

static void got(void *arg, char *err)
{
	struct os_fop *op = arg;
	op->xfer = NULL;
	forget(op->s, op->remote);
	fop_end(op, err ? SBX_FAILED : SBX_OK, err, NULL, NULL);
	free(err);
}

/* The tar is made (its member's name on stdout): take it. */
static void tar_made(void *arg, const struct sbx_exit *ex)
{
	struct os_fop *op = arg;
	op->x = NULL;
	if (ex->error || (ex->exit_code != 0 && ex->exit_code != 1)) {
		char *err = fop_error(op, ex);
		forget(op->s, op->remote);
		fop_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
		return;
	}
	struct strv h = {0};
	http_argv(op->s, &h, "GET", op->remote, NULL, NULL, 0);
	char *err = NULL;
	if (op->path) { /* the workspace archive */
		/* the read-only inputs' places left out, as docker's */
		char *args[] = {"repack", op->path, "workspace", NULL};
		char *skip[] = {"repack", "--mounts",  op->s->mounts_json,
		                op->path, "workspace", NULL};
		op->xfer = xfer_get(op->s, "the workspace", h.v,
		                    op->s->mounts_json ? skip : args, op->path,
		                    got, op, &err);
	} else { /* an output */
		char *name = buf_detach(&op->out.out);
		buf_init(&op->out.out, 0);
		name[strcspn(name, "\n")] = '\0';
		char *args[] = {"extract",
		                "--progress",
		                op->rel,
		                op->dest,
		                *name ? name : "workspace",
		                NULL};
		op->xfer =
		    xfer_get(op->s, op->rel, h.v, args, NULL, got, op, &err);
		free(name);
	}
	strv_free(&h);
	if (!op->xfer) {
		forget(op->s, op->remote);
		fop_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
	}
}

void os_fetch(struct sbx *s, const char *rel, const char *dest, sbx_done_fn fn,
              void *arg)
{
	struct os_fop *op = fop_new(s, rel);
	op->dest = xstrdup(dest);
	op->remote = xfer_name(s);
	const char *argv[] = {"resolve", rel, NULL};
	char *f = fileop_cmd(argv);
	char *qr = os_quote(op->remote);
	char *script =
	    xasprintf("r=$(%s) || exit 3\n"
	              "p=${r%%/*}; [ -n \"$p\" ] || p=/; n=${r##*/}\n"
	              "mkdir -p " OS_XFER_DIR " || exit 1\n"
	              "tar -C \"$p\" -cf %s -- \"$n\" || exit 2\n"
	              "printf '%%s\\n' \"$n\" | base64\n",
	              f, qr);
	fop_begin(op, "the copy", script, PATH_MAX, tar_made, fn, arg);
	free(script);
	free(qr);
	free(f);
}

void os_export_tar(struct sbx *s, const char *path, sbx_done_fn fn, void *arg)
{
	struct os_fop *op = fop_new(s, "the workspace");
	op->path = xstrdup(path);
	op->remote = xfer_name(s);
	char *qr = os_quote(op->remote);
	/* the read-only inputs never leave the sandbox again: no archive
	 * holds them (a resume copies them in afresh) */
	struct buf ex;
	buf_init(&ex, 0);
	for (size_t i = 0; i < s->mounts.n; i++) {
		char *w = xasprintf("workspace/%s", s->mounts.v[i].rel);
		char *q = os_quote(w);
		buf_printf(&ex, " --exclude=%s", q);
		free(q);
		free(w);
	}
	/* exit 1: a file changed while it was read (the archive is
	 * still whole for what it holds) */
	char *script = xasprintf(
	    "mkdir -p " OS_XFER_DIR " || exit 2\n"
	    "tar -C / --exclude='workspace/.assay-upload.*' --anchored "
	    "--no-wildcards%s -cf %s workspace\n",
	    ex.data ? ex.data : "", qr);
	buf_free(&ex);
	char *err = NULL;
	if (fop_run(op, script, 4096, tar_made, &err) < 0) {
		sbx_later(s, fn, arg, SBX_FAILED, err, NULL, NULL);
		fop_free(op);
	} else {
		sbx_job_begin(s, &op->job, "the archive", 0, fn, arg,
		              fop_abort);
	}
	free(script);
	free(qr);
}

/* ---- a call's delta: a tar of the changed files only ---- */

#define OS_DELTA_LIST_MAX (64u << 10) /* the file list, in the command */

static void delta_got(void *arg, char *err)
{
	struct os_fop *op = arg;
	op->xfer = NULL;
	forget(op->s, op->remote);
	unlink(op->dest); /* the records */
	fop_end(op, err ? SBX_FAILED : SBX_OK, err, NULL, NULL);
	free(err);
}

/* The tar of the changed files is made: into the delta. */
static void delta_tar_made(void *arg, const struct sbx_exit *ex)
{
	struct os_fop *op = arg;
	op->x = NULL;
	char *err = NULL;
	if (ex->error || ex->exit_code != 0) {
		/* a file went or changed meanwhile: the caller writes the
		 * whole archive instead */
		err = fop_error(op, ex);
		forget(op->s, op->remote);
		unlink(op->dest);
		fop_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
		return;
	}
	struct strv h = {0};
	http_argv(op->s, &h, "GET", op->remote, NULL, NULL, 0);
	char *args[] = {"delta", "--tar", op->dest, op->path, NULL};
	char *margs[] = {"delta", "--mounts", op->s->mounts_json,
	                 "--tar", op->dest,   op->path,
	                 NULL};
	op->xfer =
	    xfer_get(op->s, "the delta", h.v, op->s->mounts_json ? margs : args,
	             op->path, delta_got, op, &err);
	strv_free(&h);
	if (!op->xfer) {
		forget(op->s, op->remote);
		unlink(op->dest);
		fop_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
	}
}

void os_export_delta(struct sbx *s, const char *path, const struct sbx_delta *d,
                     sbx_done_fn fn, void *arg)
{
	struct buf recs, list;
	buf_init(&recs, 0);
	buf_init(&list, 0);
	xfer_delta_records(&recs, d);
	for (size_t i = 0; i < d->files.n; i++)
		buf_append(&list, d->files.v[i], strlen(d->files.v[i]) + 1);
	char *err = NULL;
	if (list.len > OS_DELTA_LIST_MAX) {
		sbx_later(s, fn, arg, SBX_FAILED,
		          xasprintf("opensandbox: %zu changed files: too many "
		                    "for a delta",
		                    d->files.n),
		          NULL, NULL);
		goto out;
	}
	struct os_fop *op = fop_new(s, "the delta");
	op->path = xstrdup(path);
	op->remote = xfer_name(s);
	op->dest = xasprintf("%s.records.%d", path, (int)getpid());
	if (write_file_replace(op->dest, recs.data ? recs.data : "", recs.len,
	                       &err) < 0) {
		sbx_later(s, fn, arg, SBX_FAILED, err, NULL, NULL);
		fop_free(op);
		goto out;
	}
	char *enc = os_b64_encode(list.data ? list.data : "", list.len);
	char *qr = os_quote(op->remote);
	/* in the records' order, links as links, hard links as files */
	char *script =
	    xasprintf("mkdir -p " OS_XFER_DIR " || exit 2\n"
	              "printf %%s '%s' | base64 -d | tar -C /workspace --null "
	              "--no-recursion --hard-dereference -T - -cf %s\n",
	              enc, qr);
	if (fop_run(op, script, 4096, delta_tar_made, &err) < 0) {
		unlink(op->dest);
		sbx_later(s, fn, arg, SBX_FAILED, err, NULL, NULL);
		fop_free(op);
	} else {
		sbx_job_begin(s, &op->job, "the delta", 0, fn, arg, fop_abort);
	}
	free(script);
	free(qr);
	free(enc);
out:
	buf_free(&recs);
	buf_free(&list);
}

/* ---- PUT: a helper pair uploads the tar, a command unpacks it ---- */

static void fop_put_done(void *arg, char *err)
{
	struct os_fop *op = arg;
	op->xfer = NULL;
	if (err) {
		forget(op->s, op->remote);
		fop_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
		return;
	}
	char *qr = os_quote(op->remote);
	char *script = xasprintf("tar -C /workspace --no-same-owner -xf %s\n"
	                         "rc=$?; rm -f -- %s; exit $rc\n",
	                         qr, qr);
	char *e2 = NULL;
	if (fop_run(op, script, 4096, last_step, &e2) < 0) {
		forget(op->s, op->remote);
		fop_end(op, SBX_FAILED, e2, NULL, NULL);
		free(e2);
	}
	free(script);
	free(qr);
}

/* Upload what `assay-archive ARGS...` writes, then unpack it. */
static int put_tar(struct os_fop *op, char *const *args, const char *what,
                   const char *label, const char *subject, double total,
                   char **err)
{
	op->remote = xfer_name(op->s);
	struct strv h = {0};
	http_argv(op->s, &h, "POST", NULL, op->remote, subject, total);
	op->xfer =
	    xfer_put(op->s, args, h.v, what, label, fop_put_done, op, err);
	strv_free(&h);
	return op->xfer ? 0 : -1;
}

void os_import_tar(struct sbx *s, const char *path, sbx_done_fn fn, void *arg)
{
	struct os_fop *op = fop_new_changing(s, "the workspace");
	char *args[] = {"restore", (char *)path, NULL};
	char *skip[] = {"restore", "--mounts", s->mounts_json, (char *)path,
	                NULL};
	char *err = NULL;
	if (put_tar(op, s->mounts_json ? skip : args, "restore the workspace",
	            "restoring", "the workspace", 0, &err) < 0) {
		sbx_later(s, fn, arg, SBX_FAILED, err, NULL, NULL);
		fop_free(op);
		return;
	}
	sbx_job_begin(s, &op->job, "the restore", 0, fn, arg, fop_abort);
}

void os_fop_cancel(struct os_fop *op)
{
	if (op)
		fop_abort(&op->job);
}

struct os_fop *os_stage(struct sbx *s, int all,
                        void (*done)(void *arg, char *err), void *arg,
                        char **err)
{
	size_t n = 0;
	int ro = 0;
	char **args = xfer_pack_args(s, all, &n, &ro);
	if (n <= 3) {
		free(args);
		return NULL;
	}
	/* read-only copies are refused to the file tools and kept out of
	 * the archive, as the docker backend's on a remote daemon */
	if (ro && !s->mounts.n && sbx_mounts_prepare(s, -1, err) < 0) {
		free(args);
		return NULL;
	}
	struct os_fop *op = fop_new_changing(s, "the inputs");
	op->done = done;
	op->done_arg = arg;
	int rc = put_tar(op, args, "stage the inputs", "staging", "the inputs",
	                 xfer_pack_bytes(args + 3, n - 3), err);
	free(args);
	if (rc < 0) {
		fop_free(op);
		return NULL;
	}
	return op;
}
