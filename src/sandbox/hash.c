/* hash.c: the SHA-256 of a run's inputs, taken by `assay-archive hash`
 * (a loop child: a 2 GB input never stalls the loop) with the user's
 * cache ($XDG_CACHE_HOME/assay/input-hashes.json, by path, size, mtime
 * and inode), so a resume can tell whether an input changed. The
 * helper's answer comes back a JSON line per input, with progress
 * lines while a big one is read. */
#include "assay/config.h"
#include "assay/json.h"
#include "assay/path.h"
#include "assay/util.h"
#include "sandbox/internal.h"

#include <stdlib.h>
#include <string.h>

#define HASH_LINES_MAX 100000 /* answers and progress lines */

struct hash_op {
	struct sbx_job job;
	struct sbx *s;
	struct sbx_child *child;
	struct sbx_listing lines;
	size_t seen;      /* lines of lines.list looked at */
	struct strv dest; /* the inputs' places, in the helper's order */
	cJSON *out;       /* the answers, with dest */
	sbx_hash_progress_fn progress;
	void *parg;
	int shown; /* progress was relayed */
};

static void hash_op_free(struct hash_op *op)
{
	sbx_child_free(op->child);
	sbx_listing_free(&op->lines);
	strv_free(&op->dest);
	cJSON_Delete(op->out);
	free(op);
}

static void hash_op_abort(struct sbx_job *j)
{
	hash_op_free((struct hash_op *)j);
}

/* The helper's stdout: progress goes to the caller as it comes, the
 * answers are kept (with the input's place added). */
static void hash_out(void *arg, const char *data, size_t n)
{
	struct hash_op *op = arg;
	if (sbx_listing_feed(&op->lines, data, n) < 0) {
		sbx_child_kill(op->child);
		return;
	}
	cJSON *e;
	while ((e = cJSON_DetachItemFromArray(op->lines.list, 0))) {
		const char *p = json_str(e, "progress", NULL);
		size_t k = (size_t)cJSON_GetArraySize(op->out);
		if (p && op->progress && k < op->dest.n) {
			op->shown = 1;
			op->progress(op->parg, op->dest.v[k],
			             json_num(e, "done", 0),
			             json_num(e, "total", 0));
		}
		if (!p && k < op->dest.n) {
			cJSON_DeleteItemFromObject(e, "src");
			cJSON_AddStringToObject(e, "dest", op->dest.v[k]);
			cJSON_AddItemToArray(op->out, e);
			continue;
		}
		cJSON_Delete(e);
	}
}

static void hash_done(void *arg, struct sbx_child *c)
{
	struct hash_op *op = arg;
	int whole = sbx_child_ok(c) && !op->lines.bad &&
	            (size_t)cJSON_GetArraySize(op->out) == op->dest.n;
	char *err = whole ? NULL : sbx_child_error(c, "hashing the inputs");
	if (!whole && !err)
		err = xstrdup("hashing the inputs: the helper's answer is "
		              "incomplete");
	if (!whole && op->shown)
		op->progress(op->parg, "", -1, 0); /* no frontend shows it on */
	sbx_child_free(c);
	op->child = NULL;
	sbx_job_end(&op->job, whole ? SBX_OK : SBX_FAILED, err, NULL,
	            whole ? op->out : NULL);
	free(err);
	hash_op_free(op);
}

/* Where input i is read on the host: a mount's resolved source, else
 * the path given. */
static const char *input_source(const struct sbx *s, size_t i, size_t *k)
{
	if (sbx_input_mounted(s, i) && *k < s->mounts.n)
		return s->mounts.v[(*k)++].src;
	return s->cfg->inputs[i].src;
}

void sbx_hash_inputs(struct sbx *s, sbx_hash_progress_fn progress, void *parg,
                     sbx_done_fn fn, void *arg)
{
	struct hash_op *op = xcalloc(1, sizeof *op);
	op->s = s;
	op->progress = progress;
	op->parg = parg;
	op->out = cJSON_CreateArray();
	sbx_listing_init(&op->lines, HASH_LINES_MAX);
	sbx_job_begin(s, &op->job, "the inputs' hashes", 1, fn, arg,
	              hash_op_abort);
	char *cache = path_cache_dir("input-hashes.json");
	struct strv a = {0};
	strv_push(&a, "hash");
	if (s->mounts.n) {
		cJSON *mj = path_mounts_json(&s->mounts);
		char *text = cJSON_PrintUnformatted(mj);
		strv_pushv(&a, 2, "--mounts", text);
		free(text);
		cJSON_Delete(mj);
	}
	strv_push(&a, cache ? cache : "");
	free(cache);
	size_t k = 0;
	for (size_t i = 0; i < s->cfg->n_inputs; i++) {
		strv_push(&a, input_source(s, i, &k));
		strv_push(&op->dest, s->cfg->inputs[i].dest);
	}
	struct sbx_child_spec cs = {.in_fd = -1,
	                            .out_fd = SBX_CHILD_PIPE,
	                            .on_out = hash_out,
	                            .on_exit = hash_done,
	                            .arg = op};
	char *err = NULL;
	op->child = sbx_archive_spawn(s->loop, a.v, 0, &cs, &err);
	strv_free(&a);
	if (!op->child) {
		sbx_job_end(&op->job, SBX_FAILED, err, NULL, NULL);
		free(err);
		hash_op_free(op);
	}
}
