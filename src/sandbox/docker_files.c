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
#include "sandbox/internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DK_LIST_INLINE (128u << 10) /* records sorted in-process at most */

/* ---- running the fileop script on the loop ---- */

struct fileop {
	struct sbx_job job;
	struct sbx *s;
	struct dk_exec *x;          /* the fileop script running */
	struct dk_call *call;       /* write_file: the PUT */
	struct dk_xfer *xfer;       /* fetch: the tar stream */
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
static void fileop_free(struct fileop *op)
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
static void fileop_abort(struct sbx_job *j)
{
	struct fileop *op = (struct fileop *)j;
	dk_exec_detach(op->x);
	dk_cancel(op->call);
	dk_xfer_free(op->xfer);
	fileop_free(op);
}

/* The operation's end: its caller hears it, op is freed. */
static void fileop_end(struct fileop *op, int rc, const char *err,
                       struct buf *data, cJSON *list)
{
	sbx_job_end(&op->job, rc, err, data, list);
	fileop_free(op);
}

static void fileop_output(void *arg, enum sbx_stream st, const char *data,
                          size_t n)
{
	struct fileop *op = arg;
	struct buf *b = st == SBX_STDOUT ? &op->out : &op->err;
	if (buf_append(b, data, n) < 0 && b->len < b->max)
		buf_append(b, data, b->max - b->len);
}

/* The reason an operation failed: the script's message or the exec's. */
static char *fileop_error(struct fileop *op, const struct sbx_exit *ex)
{
	if (ex->error)
		return xstrdup(ex->error);
	while (op->err.len && op->err.data[op->err.len - 1] == '\n')
		op->err.data[--op->err.len] = '\0';
	if (op->err.len)
		return utf8_sanitize(op->err.data, op->err.len, NULL);
	return xasprintf("%s: failed (exit code %d)", op->rel, ex->exit_code);
}

/* Run the fileop script with argv; on_exit goes on. 0, or -1 and *err
 * when it could not start. */
static int fileop_run(struct fileop *op, const char *const *argv,
                      size_t out_max,
                      void (*on_exit)(void *, const struct sbx_exit *),
                      char **err)
{
	buf_free(&op->out);
	buf_free(&op->err);
	buf_init(&op->out, out_max);
	buf_init(&op->err, 4096);
	struct dk_exec_args a = {.argv = argv, .internal = DK_FILEOP};
	struct sbx_exec_obs obs = {fileop_output, on_exit, op};
	op->x = dk_exec_start(op->s, &a, &obs, err);
	return op->x ? 0 : -1;
}

/* The first step of an operation: it runs (op becomes a job) or the
 * caller hears from the loop why not (op freed). */
static void fileop_begin(struct fileop *op, const char *what,
                         const char *const *argv, size_t out_max,
                         void (*on_exit)(void *, const struct sbx_exit *),
                         sbx_done_fn fn, void *arg)
{
	char *err = NULL;
	if (fileop_run(op, argv, out_max, on_exit, &err) < 0) {
		sbx_later(op->s, fn, arg, SBX_FAILED, err, NULL, NULL);
		fileop_free(op);
		return;
	}
	sbx_job_begin(op->s, &op->job, what, 1, fn, arg, fileop_abort);
}

/* A file operation on rel, not yet running. */
static struct fileop *fileop_new(struct sbx *s, const char *rel)
{
	struct fileop *op = xcalloc(1, sizeof *op);
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
	struct fileop *op = arg;
	op->x = NULL;
	char *err = NULL;
	int rc = -1;
	struct buf b;
	buf_init(&b, 0);
	const char *nl =
	    op->out.len ? memchr(op->out.data, '\n', op->out.len) : NULL;
	if (ex->error || ex->exit_code != 0 || !nl) {
		err = fileop_error(op, ex);
	} else {
		long long size = strtoll(op->out.data, NULL, 10);
		size_t start = (size_t)(nl + 1 - op->out.data);
		buf_append(&b, op->out.data + start, op->out.len - start);
		rc = 0;
		if (size > (long long)op->max) {
			err = xasprintf("%s is %lld bytes; only the first %zu "
			                "were read",
			                op->rel, size, op->max);
			rc = SBX_TRUNCATED;
		}
	}
	fileop_end(op, rc, err, rc < 0 ? NULL : &b, NULL);
	buf_free(&b);
	free(err);
}

void dk_read_file(struct sbx *s, const char *rel, size_t max, sbx_done_fn fn,
                  void *arg)
{
	struct fileop *op = fileop_new(s, rel);
	op->max = max;
	char num[32];
	snprintf(num, sizeof num, "%zu", max);
	const char *argv[] = {"read", rel, num, NULL};
	fileop_begin(op, "the read", argv, max + 64, read_done, fn, arg);
}

/* ---- list ---- */

/* The sorted listing as it comes from the helper. */
static void list_out(void *arg, const char *data, size_t n)
{
	struct fileop *op = arg;
	if (sbx_listing_feed(&op->listing, data, n) < 0)
		sbx_child_kill(op->child);
}

/* The sorting helper ended: the listing, whole or cut, or why not. */
static void list_sorted(void *arg, struct sbx_child *c)
{
	struct fileop *op = arg;
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
		err = xasprintf("listing of %s stopped at %zu entries", op->rel,
		                op->max);
	}
	sbx_child_free(c);
	op->child = NULL;
	fileop_end(op, rc, err, NULL, rc < 0 ? NULL : op->listing.list);
	free(err);
}

/* The script's records, NUL-separated: sorted (and made entries) in
 * the helper, so that a tree of 100,000 entries never holds the loop. */
static void list_done(void *arg, const struct sbx_exit *ex)
{
	struct fileop *op = arg;
	op->x = NULL;
	if (ex->error || ex->exit_code != 0) {
		char *err = fileop_error(op, ex);
		fileop_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
		return;
	}
	if (op->out.len <= DK_LIST_INLINE) {
		/* a few thousand entries at most: sorted here in a few ms */
		int truncated = 0;
		cJSON *list = sbx_listing_sort(
		    op->out.data ? op->out.data : "", op->out.len,
		    op->out.len >= op->out.max,
		    strcmp(op->rel, ".") ? op->rel : "", op->max, &truncated);
		char *err = truncated ? xasprintf("listing of %s stopped at "
		                                  "%zu entries",
		                                  op->rel, op->max)
		                      : NULL;
		fileop_end(op, truncated ? SBX_TRUNCATED : SBX_OK, err, NULL,
		           list);
		free(err);
		cJSON_Delete(list);
		return;
	}
	char num[32];
	snprintf(num, sizeof num, "%zu", op->max);
	char *args[] = {"sortlist", strcmp(op->rel, ".") ? op->rel : "", num,
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
		fileop_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
	}
}

void dk_list(struct sbx *s, const char *rel, int recursive, size_t max,
             sbx_done_fn fn, void *arg)
{
	struct fileop *op = fileop_new(s, rel);
	op->max = max;
	op->recursive = recursive;
	char num[32];
	snprintf(num, sizeof num, "%zu", max + 1);
	const char *argv[] = {"list", rel, recursive ? "1" : "0", num, NULL};
	/* a generous bound per entry; the count is the real limit */
	size_t cap = (max + 1) * 512;
	fileop_begin(op, "the listing", argv,
	             cap < (256u << 20) ? cap : (256u << 20), list_done, fn,
	             arg);
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
	struct fileop *op = arg;
	op->call = NULL;
	char *msg = NULL;
	if (status != 200)
		msg = err && !status ? xasprintf("%s: %s", op->rel, err)
		                     : dk_message(status, body);
	if (msg && (strstr(msg, "read-only") || strstr(msg, "not a directory")))
		fileop_end(op, SBX_FAILED,
		           "path leads outside the workspace: refused", NULL,
		           NULL);
	else
		fileop_end(op, msg ? SBX_FAILED : SBX_OK, msg, NULL, NULL);
	free(msg);
}

/* The script made the directory (and said where it is): PUT the file
 * there. */
static void prepared(void *arg, const struct sbx_exit *ex)
{
	struct fileop *op = arg;
	struct docker *d = dk_of(op->s);
	op->x = NULL;
	if (ex->error || ex->exit_code != 0 || !op->out.len) {
		char *err = fileop_error(op, ex);
		fileop_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
		return;
	}
	const char *base = strrchr(op->rel, '/');
	base = base ? base + 1 : op->rel;
	struct buf tar;
	buf_init(&tar, 0);
	tar_one(&tar, base, op->data, op->n);
	char *dir = dk_escape(buf_str(&op->out));
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
		fileop_end(op, SBX_FAILED, err, NULL, NULL);
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
	struct fileop *op = fileop_new(s, rel);
	op->data = xmalloc(n ? n : 1);
	memcpy(op->data, data, n);
	op->n = n;
	const char *argv[] = {"prepare", rel, NULL};
	fileop_begin(op, "the write", argv, PATH_MAX + 16, prepared, fn, arg);
}

/* ---- fetch: resolve in the container, then a tar stream ---- */

static void fetched(void *arg, char *err)
{
	struct fileop *op = arg;
	op->xfer = NULL;
	fileop_end(op, err ? SBX_FAILED : SBX_OK, err, NULL, NULL);
	free(err);
}

/* The script said where rel really is (confined): read that tree. */
static void resolved(void *arg, const struct sbx_exit *ex)
{
	struct fileop *op = arg;
	op->x = NULL;
	char *err = NULL;
	if (ex->error || ex->exit_code != 0) {
		err = fileop_error(op, ex);
		fileop_end(op, SBX_FAILED, err, NULL, NULL);
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
		fileop_end(op, SBX_FAILED, err, NULL, NULL);
		free(err);
	}
}

void dk_fetch(struct sbx *s, const char *rel, const char *dest, sbx_done_fn fn,
              void *arg)
{
	struct docker *d = dk_of(s);
	if (!d || !d->started || d->stopped) {
		sbx_later(s, fn, arg, SBX_FAILED,
		          xstrdup("sandbox: not running"), NULL, NULL);
		return;
	}
	struct fileop *op = fileop_new(s, rel);
	op->dest = xstrdup(dest);
	const char *argv[] = {"resolve", rel, NULL};
	fileop_begin(op, "the copy", argv, PATH_MAX, resolved, fn, arg);
}
