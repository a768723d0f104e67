/* diffs.c: what each call changed in the workspace's text files. The
 * changes a listing found (snapshot_diff) wait here while the text
 * files among them (at most DIFFS_FILE_MAX bytes, DIFFS_READS a
 * listing) are read through the sandbox, one at a time on the loop.
 * Each is compared with the version read after the call before it
 * (kept in memory, DIFFS_KEPT_MAX in all), and the workspace_change
 * events go out in the listing's order, each with its diff (or why
 * there is none) and the call's id. A listing of no call (the staged
 * inputs, a resumed workspace) only reads the versions. The session
 * goes on when the events are out (diffs_busy). */
#include "agent_internal.h"

#include "assay/events.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DIFFS_FILE_MAX (256 << 10) /* bytes of a file diffed */
#define DIFFS_TEXT_MAX (64 << 10)  /* bytes of a file's hunks kept */
#define DIFFS_KEPT_MAX (64 << 20)  /* bytes of versions kept */
#define DIFFS_READS 64             /* files read for one listing */

struct diff_change {
	char *path;
	const char *kind; /* static */
	double size, mtime;
	cJSON *diff; /* what the event carries (NULL: nothing) */
	int read;    /* its text is to be read */
};

struct diff_version {
	char *path;
	char *text;
	size_t n;
};

/* The version kept of path, or NULL. */
static struct diff_version *diffs_version(struct diffs *d, const char *path)
{
	for (size_t i = 0; i < d->nv; i++)
		if (!strcmp(d->v[i].path, path))
			return &d->v[i];
	return NULL;
}

static void diffs_forget(struct diffs *d, const char *path)
{
	struct diff_version *v = diffs_version(d, path);
	if (!v)
		return;
	d->kept -= v->n;
	free(v->path);
	free(v->text);
	*v = d->v[--d->nv];
}

/* Keep text as path's version (unless versions fill their room). */
static void diffs_keep(struct diffs *d, const char *path, const char *text,
                       size_t n)
{
	diffs_forget(d, path);
	if (d->kept + n > DIFFS_KEPT_MAX)
		return;
	if (d->nv == d->capv) {
		d->capv = d->capv ? 2 * d->capv : 32;
		d->v = xrealloc(d->v, d->capv * sizeof *d->v);
	}
	char *copy = xmalloc(n + 1);
	memcpy(copy, text, n);
	copy[n] = '\0';
	d->v[d->nv++] = (struct diff_version){xstrdup(path), copy, n};
	d->kept += n;
}

static cJSON *diffs_skipped(const char *why)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "skipped", why);
	return o;
}

/* The diff object of old -> now. */
static cJSON *diffs_of(const char *old, size_t nold, const char *now,
                       size_t nnow)
{
	struct linediff ld;
	linediff(old, nold, now, nnow, DIFFS_TEXT_MAX, &ld);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "added", ld.added);
	cJSON_AddNumberToObject(o, "removed", ld.removed);
	cJSON_AddStringToObject(o, "hunks", buf_str(&ld.hunks));
	if (ld.cut)
		cJSON_AddBoolToObject(o, "cut", 1);
	buf_free(&ld.hunks);
	return o;
}

/* Known binary formats by name: not worth a read. */
static int diffs_binary_name(const char *path)
{
	static const char *const ext[] = {
	    "png",     "jpg",    "jpeg", "gif", "webp",   "pdf",
	    "zip",     "gz",     "bz2",  "xz",  "zst",    "parquet",
	    "feather", "xlsx",   "xls",  "pkl", "pickle", "npy",
	    "npz",     "sqlite", "db",   "so",  "pyc",    "tar"};
	const char *dot = strrchr(path, '.');
	if (!dot || strchr(dot, '/'))
		return 0;
	for (size_t i = 0; i < sizeof ext / sizeof *ext; i++)
		if (!strcasecmp(dot + 1, ext[i]))
			return 1;
	return 0;
}

void diffs_change(void *arg, const char *path, const char *kind, double size,
                  double mtime)
{
	struct session *s = arg;
	struct diffs *d = &s->diffs;
	if (d->nq == d->capq) {
		d->capq = d->capq ? 2 * d->capq : 16;
		d->q = xrealloc(d->q, d->capq * sizeof *d->q);
	}
	struct diff_change *c = &d->q[d->nq++];
	*c = (struct diff_change){xstrdup(path), kind, size, mtime, NULL, 0};
	int calls = d->call != NULL;
	struct diff_version *v = diffs_version(d, path);
	if (!strcmp(kind, "deleted")) {
		if (v && calls)
			c->diff = diffs_of(v->text, v->n, "", 0);
		diffs_forget(d, path);
	} else if (diffs_binary_name(path)) {
		c->diff = calls ? diffs_skipped("binary") : NULL;
		diffs_forget(d, path);
	} else if (size > DIFFS_FILE_MAX) {
		c->diff = calls ? diffs_skipped("over 256 KiB") : NULL;
		diffs_forget(d, path);
	} else if (d->reads == DIFFS_READS) {
		c->diff =
		    calls ? diffs_skipped("more than 64 files changed at once")
		          : NULL;
		diffs_forget(d, path);
	} else {
		c->read = 1;
		d->reads++;
	}
}

/* The text of a change read: its diff against the version before. */
static void diffs_read_in(struct session *s, struct diff_change *c, int rc,
                          const char *err, struct buf *data)
{
	struct diffs *d = &s->diffs;
	int calls = d->call != NULL;
	const char *why = NULL;
	char *failed = NULL;
	if (rc == SBX_FAILED)
		why = failed = xasprintf("not read: %s", err ? err : "failed");
	else if (rc == SBX_TRUNCATED || !data)
		why = "over 256 KiB";
	else if (memchr(data->data ? data->data : "", '\0', data->len))
		why = "binary";
	if (why) {
		c->diff = calls ? diffs_skipped(why) : NULL;
		diffs_forget(d, c->path);
		free(failed);
		return;
	}
	struct diff_version *v = diffs_version(d, c->path);
	if (calls && v)
		c->diff = diffs_of(v->text, v->n, data->data, data->len);
	else if (calls && !strcmp(c->kind, "created"))
		c->diff = diffs_of("", 0, data->data, data->len);
	else if (calls)
		c->diff = diffs_skipped("no earlier version kept");
	diffs_keep(d, c->path, data->data ? data->data : "", data->len);
}

/* Every change read: the events go out, the session goes on. */
static void diffs_flush(struct session *s)
{
	struct diffs *d = &s->diffs;
	for (size_t i = 0; i < d->nq; i++) {
		struct diff_change *c = &d->q[i];
		if (!d->quiet)
			session_emit(s, ev_workspace_change(c->path, c->kind,
			                                    c->size, c->mtime,
			                                    d->call, c->diff));
		else
			cJSON_Delete(c->diff);
		/* an image the call made goes to the model (images.c) */
		if (!d->quiet && strcmp(c->kind, "deleted"))
			images_changed(s, d->call, c->path);
		free(c->path);
	}
	d->nq = d->next = 0;
	d->reads = 0;
	d->busy = 0;
	free(d->call);
	d->call = NULL;
	session_scanned(s);
}

static void diffs_next(struct session *s);

static void diffs_read_done(struct session *s, void *ctx, int rc,
                            const char *err, struct buf *data, cJSON *list)
{
	(void)ctx;
	(void)list;
	diffs_read_in(s, &s->diffs.q[s->diffs.next++], rc, err, data);
	diffs_next(s);
}

/* Read the next change that wants its text, or flush. */
static void diffs_next(struct session *s)
{
	struct diffs *d = &s->diffs;
	while (d->next < d->nq && !d->q[d->next].read)
		d->next++;
	if (s->state == SESSION_DONE)
		d->quiet = 1; /* nothing goes out after the run's end */
	if (d->next == d->nq || s->state == SESSION_DONE) {
		diffs_flush(s);
		return;
	}
	sbx_read_file(s->sbx, d->q[d->next].path, DIFFS_FILE_MAX,
	              session_sbx_done,
	              session_sbx_call(s, diffs_read_done, NULL));
}

void diffs_call(struct session *s, const char *id)
{
	free(s->diffs.call);
	s->diffs.call = id ? xstrdup(id) : NULL;
}

void diffs_run(struct session *s, int quiet)
{
	struct diffs *d = &s->diffs;
	if (d->busy) /* a listing meanwhile: its changes join the queue */
		return;
	d->quiet = quiet;
	d->busy = 1;
	d->next = 0;
	diffs_next(s);
}

int diffs_busy(const struct session *s)
{
	return s->diffs.busy;
}

void diffs_free(struct session *s)
{
	struct diffs *d = &s->diffs;
	for (size_t i = 0; i < d->nq; i++) {
		free(d->q[i].path);
		cJSON_Delete(d->q[i].diff);
	}
	free(d->q);
	for (size_t i = 0; i < d->nv; i++) {
		free(d->v[i].path);
		free(d->v[i].text);
	}
	free(d->v);
	free(d->call);
	memset(d, 0, sizeof *d);
}
