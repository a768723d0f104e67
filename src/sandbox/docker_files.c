/* docker_files.c: the workspace of a docker sandbox seen from assay.
 * Reads, listings and the confinement checks run inside the container
 * (the fileop script of docker_scripts.c resolves every path there and
 * refuses what lands outside /workspace); writes go in as a one-file
 * tar through the archive API, which only ever writes to volumes (and
 * /workspace is the only one). Fetching resolves the path here, then
 * moves the tree as a tar stream (docker_xfer.c). Each operation is a
 * job: a stop lets it finish, sbx_free ends it. */
#include "assay/config.h"
#include "assay/log.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"
#include "sandbox/fileop.h"
#include "sandbox/internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DK_LIST_INLINE (128u << 10) /* records sorted in-process at most */

/* ---- running the fileop script on the loop ---- */

struct dk_fop {
	struct sbx_job job;
	struct sbx *s;
	struct dk_exec *x;          /* the fileop script running */
	struct dk_call *call;       /* write_file: the PUT */
	struct xfer *xfer;          /* fetch: the tar stream */
	struct sbx_child *child;    /* list: the helper that sorts */
	struct sbx_listing listing; /* list: its answer so far */
	struct buf out, err;
	char *rel;
	size_t max;
	int recursive;
	/* write_file */
	char *data;
	size_t n;
	char *dest; /* fetch */
};

/* Free op (nothing of it runs any more). */
static void op_free(struct dk_fop *op)
{
	sbx_child_free(op->child);
	sbx_listing_free(&op->listing);
	buf_free(&op->out);
	buf_free(&op->err);
	free(op->rel);
	free(op->data);
	free(op->dest);
	free(op);
}

/* Cut short: stop what runs for it, without a word to its caller. */
static void op_abort(struct sbx_job *j)
{
	struct dk_fop *op = (struct dk_fop *)j;
	dk_exec_detach(op->x);
	dk_cancel(op->call);
	xfer_free(op->xfer);
	op_free(op);
}

/* The operation's end: its caller hears it, op is freed. */
static void op_end(struct dk_fop *op, int rc, const char *err, struct buf *data,
                   cJSON *list)
{
	sbx_job_end(&op->job, rc, err, data, list);
	op_free(op);
}

static void op_output(void *arg, enum sbx_stream st, const char *data, size_t n)
{
	struct dk_fop *op = arg;
	struct buf *b = st == SBX_STDOUT ? &op->out : &op->err;
	if (buf_append(b, data, n) < 0 && b->len < b->max)
		buf_append(b, data, b->max - b->len);
}

/* The reason an operation failed: the script's message or the exec's. */
static char *op_error(struct dk_fop *op, const struct sbx_exit *ex)
{
	return fileop_error(ex, &op->err, op->rel, 0);
}

/* Run the fileop script with argv; on_exit goes on. 0, or -1 and *err
 * when it could not start. */
static int op_run(struct dk_fop *op, const char *const *argv, size_t out_max,
                  void (*on_exit)(void *, const struct sbx_exit *), char **err)
{
	buf_free(&op->out);
	buf_free(&op->err);
	buf_init(&op->out, out_max);
	buf_init(&op->err, 4096);
	struct dk_exec_args a = {.argv = argv, .internal = DK_FILEOP};
	struct sbx_exec_obs obs = {op_output, on_exit, op};
	op->x = dk_exec_start(op->s, &a, &obs, err);
	return op->x ? 0 : -1;
}

/* The first step of an operation: it runs (op becomes a job) or the
 * caller hears from the loop why not (op freed). */
static void op_begin(struct dk_fop *op, const char *what,
                     const char *const *argv, size_t out_max,
                     void (*on_exit)(void *, const struct sbx_exit *),
                     sbx_done_fn fn, void *arg)
{
	char *err = NULL;
	if (op_run(op, argv, out_max, on_exit, &err) < 0) {
		sbx_later(op->s, fn, arg, SBX_FAILED, err, NULL, NULL);
		op_free(op);
		return;
	}
	sbx_job_begin(op->s, &op->job, what, 1, fn, arg, op_abort);
}

/* A file operation on rel, not yet running. */
static struct dk_fop *op_new(struct sbx *s, const char *rel)
{
	struct dk_fop *op = xcalloc(1, sizeof *op);
	op->s = s;
	op->rel = xstrdup(rel);
	buf_init(&op->out, 0);
	buf_init(&op->err, 0);
	return op;
}

/* ---- read_file ---- */

/* The script printed the size, a newline, then at most max bytes. */
static void read_done(void *arg, const struct sbx_exit *ex)
{
	struct dk_fop *op = arg;
	op->x = NULL;
	char *err = NULL;
	struct buf b;
	buf_init(&b, 0);
	int rc = ex->error || ex->exit_code != 0
	             ? SBX_FAILED
	             : fileop_read_result(&op->out, op->rel, op->max, &b, &err);
	if (rc == SBX_FAILED)
		err = op_error(op, ex);
	op_end(op, rc, err, rc < 0 ? NULL : &b, NULL);
	buf_free(&b);
	free(err);
}

void dk_read_file(struct sbx *s, const char *rel, size_t max, sbx_done_fn fn,
                  void *arg)
{
	struct dk_fop *op = op_new(s, rel);
	op->max = max;
	struct fileop_args a;
	fileop_read_args(&a, rel, max);
	op_begin(op, "the read", a.argv, a.out_max, read_done, fn, arg);
}

/* ---- list ---- */

/* The sorted listing as it comes from the helper. */
static void list_out(void *arg, const char *data, size_t n)
{
	struct dk_fop *op = arg;
	if (sbx_listing_feed(&op->listing, data, n) < 0)
		sbx_child_kill(op->child);
}

/* The sorting helper ended: the listing, whole or cut, or why not. */
static void list_sorted(void *arg, struct sbx_child *c)
{
	struct dk_fop *op = arg;
	int code = sbx_child_code(c);
	int rc = code == 0 ? SBX_OK : code == 3 ? SBX_TRUNCATED : SBX_FAILED;
	char *err = NULL;
	if (op->listing.bad) {
		rc = SBX_FAILED;
		err = xasprintf("listing of %s: the helper's answer is not a "
		                "listing of at most %zu entries",
		                op->rel, op->max);
	} else if (rc == SBX_FAILED) {
		err = sbx_child_error(c, "listing");
	} else if (rc == SBX_TRUNCATED) {
		err = fileop_list_cut(op->rel, op->max);
	}
	sbx_child_free(c);
	op->child = NULL;
	op_end(op, rc, err, NULL, rc < 0 ? NULL : op->listing.list);
	free(err);
}

/* The script's records, NUL-separated: sorted (and made entries) in
 * the helper, so that a tree of 100,000 entries never holds the loop. */
static void list_done(void *arg, const struct sbx_exit *ex)
{
	struct dk_fop *op = arg;
	op->x = NULL;
	if (ex->error || ex->exit_code != 0) {
		char *err = op_error(op, ex);
		op_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
		return;
	}
	if (op->out.len <= DK_LIST_INLINE) {
		/* a few thousand entries at most: sorted here in a few ms */
		int rc = SBX_OK;
		char *err = NULL;
		cJSON *list =
		    fileop_list_result(&op->out, op->rel, op->max, &rc, &err);
		op_end(op, rc, err, NULL, list);
		free(err);
		cJSON_Delete(list);
		return;
	}
	char num[32];
	snprintf(num, sizeof num, "%zu", op->max);
	char *args[] = {"sortlist", (char *)fileop_list_prefix(op->rel), num,
	                op->out.len >= op->out.max ? "1" : "0", NULL};
	struct sbx_child_spec cs = {.in_fd = -1,
	                            .in_data = op->out.data ? op->out.data : "",
	                            .in_len = op->out.len,
	                            .out_fd = SBX_CHILD_PIPE,
	                            .on_out = list_out,
	                            .on_exit = list_sorted,
	                            .arg = op};
	char *err = NULL;
	sbx_listing_init(&op->listing, op->max);
	op->child = sbx_archive_spawn(op->s->loop, args, 0, &cs, &err);
	if (!op->child) {
		op_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
	}
}

void dk_list(struct sbx *s, const char *rel, int recursive, size_t max,
             sbx_done_fn fn, void *arg)
{
	struct dk_fop *op = op_new(s, rel);
	op->max = max;
	op->recursive = recursive;
	struct fileop_args a;
	fileop_list_args(&a, rel, recursive, max);
	op_begin(op, "the listing", a.argv, a.out_max, list_done, fn, arg);
}

/* ---- write_file: a one-file tar through the archive API ---- */

/* A tar header's octal number field. */
static void tar_field(char *f, size_t w, unsigned long long v)
{
	snprintf(f, w, "%0*llo", (int)(w - 1), v);
}

/* A ustar header for name. */
static void tar_header(struct buf *b, const char *name, size_t size, char type)
{
	char h[512];
	memset(h, 0, sizeof h);
	snprintf(h, 100, "%s", name);
	tar_field(h + 100, 8, 0644);
	tar_field(h + 108, 8, 0);
	tar_field(h + 116, 8, 0);
	tar_field(h + 124, 12, size);
	tar_field(h + 136, 12, (unsigned long long)time(NULL));
	memset(h + 148, ' ', 8);
	h[156] = type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	unsigned sum = 0;
	for (size_t i = 0; i < sizeof h; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum);
	buf_append(b, h, sizeof h);
}

/* Zeros up to the next 512-byte block. */
static void tar_pad(struct buf *b, size_t n)
{
	static const char zero[512];
	if (n % 512)
		buf_append(b, zero, 512 - n % 512);
}

/* name (a single component) with n bytes of data; long names go in a
 * pax header. */
static void tar_one(struct buf *b, const char *name, const char *data, size_t n)
{
	static const char zero[1024];
	if (strlen(name) >= 100) {
		size_t body = strlen(name) + strlen(" path=\n");
		size_t len = body + 1;
		while (len != body + (size_t)snprintf(NULL, 0, "%zu", len))
			len = body + (size_t)snprintf(NULL, 0, "%zu", len);
		char *rec = xasprintf("%zu path=%s\n", len, name);
		tar_header(b, "PaxHeader", strlen(rec), 'x');
		buf_append(b, rec, strlen(rec));
		tar_pad(b, strlen(rec));
		free(rec);
	}
	tar_header(b, name, n, '0');
	buf_append(b, data, n);
	tar_pad(b, n);
	buf_append(b, zero, sizeof zero);
}

/* The daemon's answer to the one-file tar. */
static void put_done(void *arg, long status, struct buf *body, const char *err)
{
	struct dk_fop *op = arg;
	op->call = NULL;
	char *msg = NULL;
	if (status != 200)
		msg = err && !status ? xasprintf("%s: %s", op->rel, err)
		                     : xfer_message(status, body);
	if (msg && (strstr(msg, "read-only") || strstr(msg, "not a directory")))
		op_end(op, SBX_FAILED,
		       "path leads outside the workspace: refused", NULL, NULL);
	else
		op_end(op, msg ? SBX_FAILED : SBX_OK, msg, NULL, NULL);
	free(msg);
}

/* The script made the directory (and said where it is): PUT the file
 * there. */
static void prepared(void *arg, const struct sbx_exit *ex)
{
	struct dk_fop *op = arg;
	struct docker *d = dk_of(op->s);
	op->x = NULL;
	if (ex->error || ex->exit_code != 0 || !op->out.len) {
		char *err = op_error(op, ex);
		op_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
		return;
	}
	const char *base = strrchr(op->rel, '/');
	base = base ? base + 1 : op->rel;
	struct buf tar;
	buf_init(&tar, 0);
	tar_one(&tar, base, op->data, op->n);
	char *dir = xfer_escape(buf_str(&op->out));
	char *path = xasprintf("/containers/%s/archive?path=%s"
	                       "&noOverwriteDirNonDir=true&copyUIDGID=1",
	                       d->id, dir);
	struct dk_req r = {.method = "PUT",
	                   .path = path,
	                   .json = tar.data,
	                   .body_len = tar.len,
	                   .content_type = "application/x-tar",
	                   .on_done = put_done,
	                   .arg = op,
	                   .timeout_ms = 120000};
	char *err = NULL;
	op->call = dk_send(&d->api, &r, &err);
	free(dir);
	free(path);
	buf_free(&tar);
	if (!op->call) {
		op_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
	}
}

void dk_write_file(struct sbx *s, const char *rel, const void *data, size_t n,
                   sbx_done_fn fn, void *arg)
{
	if (!strcmp(rel, ".")) {
		sbx_later(s, fn, arg, SBX_FAILED,
		          xstrdup("the workspace itself is a directory: give a "
		                  "file path"),
		          NULL, NULL);
		return;
	}
	struct dk_fop *op = op_new(s, rel);
	op->data = xmalloc(n ? n : 1);
	memcpy(op->data, data, n);
	op->n = n;
	const char *argv[] = {"prepare", rel, NULL};
	op_begin(op, "the write", argv, PATH_MAX + 16, prepared, fn, arg);
}

/* ---- fetch: resolve in the container, then a tar stream ---- */

static void fetched(void *arg, char *err)
{
	struct dk_fop *op = arg;
	op->xfer = NULL;
	op_end(op, err ? SBX_FAILED : SBX_OK, err, NULL, NULL);
	free(err);
}

/* The script said where rel really is (confined): read that tree. */
static void resolved(void *arg, const struct sbx_exit *ex)
{
	struct dk_fop *op = arg;
	op->x = NULL;
	char *err = NULL;
	if (ex->error || ex->exit_code != 0) {
		err = op_error(op, ex);
		op_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
		return;
	}
	const char *cpath = buf_str(&op->out);
	const char *name = strrchr(cpath, '/');
	name = name && name[1] ? name + 1 : "workspace";
	char *args[] = {"extract", "--progress", op->rel,
	                op->dest,  (char *)name, NULL};
	op->xfer = dk_xfer_get(op->s, cpath, args, NULL, fetched, op, &err);
	if (!op->xfer) {
		op_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
	}
}

void dk_fetch(struct sbx *s, const char *rel, const char *dest, sbx_done_fn fn,
              void *arg)
{
	struct dk_fop *op = op_new(s, rel);
	op->dest = xstrdup(dest);
	const char *argv[] = {"resolve", rel, NULL};
	op_begin(op, "the copy", argv, PATH_MAX, resolved, fn, arg);
}
