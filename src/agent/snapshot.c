/* snapshot.c: what the workspace held after the last tool call (path,
 * size, mtime of every file), and the difference to a new listing as
 * workspace_change events. A hash index keeps the diff linear: a
 * workspace of 100 000 files must not stall the loop. */
#include "agent_internal.h"

#include "assay/json.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

struct snap_entry {
	char *path;
	double size, mtime;
	int seen; /* present in the newer listing (during a diff) */
};

struct snapshot {
	struct snap_entry *e;
	size_t n;
	size_t *index; /* open addressing: entry number + 1, 0 = empty */
	size_t cap;    /* a power of two, > 2n */
};

/* FNV-1a of a path, for the snapshot's index. */
static size_t snapshot_hash(const char *s)
{
	size_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The entry of path in the snapshot, or NULL. */
static struct snap_entry *snapshot_find(const struct snapshot *sn,
                                        const char *path)
{
	if (!sn || !sn->cap)
		return NULL;
	for (size_t i = snapshot_hash(path) & (sn->cap - 1);;
	     i = (i + 1) & (sn->cap - 1)) {
		size_t k = sn->index[i];
		if (!k)
			return NULL;
		if (!strcmp(sn->e[k - 1].path, path))
			return &sn->e[k - 1];
	}
}

int snapshot_has(const struct snapshot *sn, const char *path)
{
	return snapshot_find(sn, path) != NULL;
}

/* Files of a sandbox listing ({"path","type","size","mtime"}...). */
struct snapshot *snapshot_new(const cJSON *list)
{
	struct snapshot *sn = xcalloc(1, sizeof *sn);
	size_t n = (size_t)cJSON_GetArraySize(list);
	sn->e = xcalloc(n ? n : 1, sizeof *sn->e);
	sn->cap = 16;
	while (sn->cap < 2 * n + 1)
		sn->cap *= 2;
	sn->index = xcalloc(sn->cap, sizeof *sn->index);
	const cJSON *it;
	cJSON_ArrayForEach(it, list)
	{
		if (strcmp(json_str(it, "type", ""), "file"))
			continue;
		const char *path = json_str(it, "path", NULL);
		if (!path || snapshot_find(sn, path))
			continue;
		struct snap_entry *e = &sn->e[sn->n++];
		e->path = xstrdup(path);
		e->size = json_num(it, "size", 0);
		e->mtime = json_num(it, "mtime", 0);
		size_t i = snapshot_hash(path) & (sn->cap - 1);
		while (sn->index[i])
			i = (i + 1) & (sn->cap - 1);
		sn->index[i] = sn->n;
	}
	return sn;
}

void snapshot_free(struct snapshot *sn)
{
	if (!sn)
		return;
	for (size_t i = 0; i < sn->n; i++)
		free(sn->e[i].path);
	free(sn->e);
	free(sn->index);
	free(sn);
}

void snapshot_diff(struct snapshot *old, const struct snapshot *now,
                   snapshot_change_fn fn, void *arg)
{
	for (size_t i = 0; old && i < old->n; i++)
		old->e[i].seen = 0;
	for (size_t i = 0; i < now->n; i++) {
		const struct snap_entry *e = &now->e[i];
		struct snap_entry *o = snapshot_find(old, e->path);
		if (o)
			o->seen = 1;
		if (!o)
			fn(arg, e->path, "created", e->size);
		else if (o->size != e->size || o->mtime != e->mtime)
			fn(arg, e->path, "modified", e->size);
	}
	for (size_t i = 0; old && i < old->n; i++)
		if (!old->e[i].seen)
			fn(arg, old->e[i].path, "deleted", 0);
}
