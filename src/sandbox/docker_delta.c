/* docker_delta.c: a call's snapshot of a docker workspace holds only
 * what the call changed (src/sandbox/layers.c). One `assay-archive
 * delta` helper, a loop child, gets the changed files one by one from
 * the archive API and writes them, the directories made and the list
 * of what is gone into the delta: a call that writes 10 KB costs a
 * 10 KB archive, whatever the workspace holds. */
#include "assay/log.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DELTA_PROGRESS_LINES 1000000

struct dk_delta {
	struct sbx_job job;
	struct sbx *s;
	struct sbx_child *child;
	struct buf records; /* the helper's stdin, kept until it exits */
	struct sbx_listing progress;
	int64_t t0;
	char *path;
};

static void delta_free(struct dk_delta *op)
{
	if (op->child) { /* killed mid-delta: its temporary goes */
		char *tmp = xasprintf("%s.tmp.%d", op->path,
		                      (int)sbx_child_pid(op->child));
		sbx_child_free(op->child);
		unlink(tmp);
		free(tmp);
	}
	buf_free(&op->records);
	sbx_listing_free(&op->progress);
	free(op->path);
	free(op);
}

static void delta_abort(struct sbx_job *j)
{
	delta_free((struct dk_delta *)j);
}

static void delta_out(void *arg, const char *data, size_t n)
{
	struct dk_delta *op = arg;
	sbx_progress_feed(op->s, &op->progress, "saving", op->t0, data, n);
}

static void delta_exit(void *arg, struct sbx_child *c)
{
	struct dk_delta *op = arg;
	op->child = NULL;
	char *err = NULL;
	if (sbx_child_ok(c))
		sbx_child_log(c, "delta");
	else
		err = sbx_child_error(c, "delta: the helper");
	sbx_child_free(c);
	if (err)
		sbx_progress_cut(op->s, &op->progress, "saving");
	sbx_job_end(&op->job, err ? SBX_FAILED : SBX_OK, err, NULL, NULL);
	free(err);
	delta_free(op);
}

void dk_export_delta(struct sbx *s, const char *path, const struct sbx_delta *d,
                     sbx_done_fn fn, void *arg)
{
	struct docker *dk = dk_of(s);
	struct dk_delta *op = xcalloc(1, sizeof *op);
	op->s = s;
	op->path = xstrdup(path);
	op->t0 = now_ms();
	buf_init(&op->records, (size_t)1 << 30);
	xfer_delta_records(&op->records, d);
	sbx_listing_init(&op->progress, DELTA_PROGRESS_LINES);
	char *prefix =
	    xasprintf("%s/v%s/containers/%s/archive?path=", dk->api.ep.base,
	              dk->api.version, dk->id);
	struct strv a = {0};
	strv_push(&a, "delta");
	/* the mounted inputs' places are never the delta's */
	if (s->mounts_json)
		strv_pushv(&a, 2, "--mounts", s->mounts_json);
	dk_http_opts(s, &a);
	strv_pushv(&a, 3, prefix, dk->volume ? DK_WS_BARE : "/workspace", path);
	struct sbx_child_spec sp = {
	    .in_fd = -1,
	    .in_data = op->records.data ? op->records.data : "",
	    .in_len = op->records.len,
	    .out_fd = SBX_CHILD_PIPE,
	    .on_out = delta_out,
	    .on_exit = delta_exit,
	    .arg = op,
	};
	char *err = NULL;
	op->child = sbx_archive_spawn(s->loop, a.v, 1, &sp, &err);
	strv_free(&a);
	free(prefix);
	if (!op->child) {
		delta_free(op);
		sbx_later(s, fn, arg, SBX_FAILED, err, NULL, NULL);
		return;
	}
	sbx_job_begin(s, &op->job, "the delta", 0, fn, arg, delta_abort);
}
