/* snapshot.c: what the workspace held after the last tool call (path,
 * size, mtime of every file), and the difference to a new listing as
 * workspace_change events. A hash index keeps the diff linear: a
 * workspace of 100 000 files must not stall the loop. The JSON it reads
 * (a sandbox listing, a kept one) is not an event. Besides: each
 * entry's ctime (a chmod moves it alone), the difference as a delta,
 * whether two listings are the same, and a listing kept in a file. */
#include "agent_internal.h"

#include "assay/path.h"

#include "assay/json.h"
#include "assay/util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

/* A file written within this long (s) before a listing may be written
 * again within the same tick of the kernel's coarse clock (4 ms at HZ
 * 250) and keep its size and mtime: it counts as changed. */
#define SNAPSHOT_RACY_S 0.01
#define SNAPSHOT_FILE_MAX (256u << 20) /* a kept listing, as JSON */

struct snap_entry {
	char *path;
	double size, mtime, ctime; /* ctime 0: the listing has none */
	char type;                 /* f file, d directory, l link */
	int seen; /* present in the newer listing (during a diff): 2 with
	             another type */
};

struct snapshot {
	struct snap_entry *e;
	size_t n;
	double taken;    /* wall clock, seconds, when the listing was asked */
	size_t *index;   /* open addressing: entry number + 1, 0 = empty */
	size_t cap;      /* a power of two, > 2n */
	uint64_t serial; /* which listing (snapshot_serial) */
};

static uint64_t snapshot_serials; /* the last serial handed out */

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

/* The file at path, or NULL. */
static struct snap_entry *snapshot_file(const struct snapshot *sn,
                                        const char *path)
{
	struct snap_entry *e = snapshot_find(sn, path);
	return e && e->type == 'f' ? e : NULL;
}

int snapshot_has(const struct snapshot *sn, const char *path)
{
	return snapshot_file(sn, path) != NULL;
}

double snapshot_bytes(const struct snapshot *sn, const char *rel,
                      const struct path_mounts *skip)
{
	if (!sn)
		return 0;
	const struct snap_entry *f = *rel ? snapshot_find(sn, rel) : NULL;
	if (f && f->type != 'd')
		return f->type == 'f' ? f->size : 0;
	size_t n = strlen(rel);
	double bytes = 0;
	for (size_t i = 0; i < sn->n; i++)
		if (sn->e[i].type == 'f' &&
		    (!n || (!strncmp(sn->e[i].path, rel, n) &&
		            sn->e[i].path[n] == '/')) &&
		    !(skip && skip->n &&
		      path_mount_find(skip, sn->e[i].path, NULL) >= 0))
			bytes += sn->e[i].size;
	return bytes;
}

/* Files of a sandbox listing ({"path","type","size","mtime"}...). */
struct snapshot *snapshot_new(const cJSON *list, double taken)
{
	struct snapshot *sn = xcalloc(1, sizeof *sn);
	sn->taken = taken;
	sn->serial = ++snapshot_serials;
	size_t n = (size_t)cJSON_GetArraySize(list);
	sn->e = xcalloc(n ? n : 1, sizeof *sn->e);
	sn->cap = 16;
	while (sn->cap < 2 * n + 1)
		sn->cap *= 2;
	sn->index = xcalloc(sn->cap, sizeof *sn->index);
	const cJSON *it;
	cJSON_ArrayForEach(it, list)
	{
		const char *type = json_str(it, "type", "");
		char t = !strcmp(type, "file")   ? 'f'
		         : !strcmp(type, "dir")  ? 'd'
		         : !strcmp(type, "link") ? 'l'
		                                 : 0;
		const char *path = json_str(it, "path", NULL);
		if (!t || !path || snapshot_find(sn, path))
			continue;
		struct snap_entry *e = &sn->e[sn->n++];
		e->path = xstrdup(path);
		e->type = t;
		e->size = json_num(it, "size", 0);
		e->mtime = json_num(it, "mtime", 0);
		e->ctime = json_num(it, "ctime", 0);
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
		if (e->type != 'f')
			continue;
		struct snap_entry *o = snapshot_file(old, e->path);
		if (o)
			o->seen = 1;
		if (!o)
			fn(arg, e->path, "created", e->size, e->mtime);
		else if (o->size != e->size || o->mtime != e->mtime)
			fn(arg, e->path, "modified", e->size, e->mtime);
	}
	for (size_t i = 0; old && i < old->n; i++)
		if (old->e[i].type == 'f' && !old->e[i].seen)
			fn(arg, old->e[i].path, "deleted", 0, 0);
}

/* Whether the entry's parent directory was in old and is gone from now
 * (or is no longer a directory): then the parent's removal covers it. */
static int parent_gone(const struct snapshot *old, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return 0;
	char *parent = xasprintf("%.*s", (int)(slash - path), path);
	const struct snap_entry *p = snapshot_find(old, parent);
	free(parent);
	return p && p->type == 'd' && p->seen != 1;
}

size_t snapshot_delta(struct snapshot *old, const struct snapshot *now,
                      struct sbx_delta *d)
{
	for (size_t i = 0; i < old->n; i++)
		old->e[i].seen = 0;
	/* a file whose mtime is that close to the listing is taken again
	 * (the host's clock: the container's with a local daemon); one
	 * whose ctime moved alone had its mode changed */
	double racy = old->taken - SNAPSHOT_RACY_S;
	for (size_t i = 0; i < now->n; i++) {
		const struct snap_entry *e = &now->e[i];
		struct snap_entry *o = snapshot_find(old, e->path);
		if (o)
			o->seen = o->type == e->type ? 1 : 2;
		int same = o && o->seen == 1;
		if (e->type == 'd') {
			if (!same)
				strv_push(&d->dirs, e->path);
		} else if (!same || o->size != e->size ||
		           o->mtime != e->mtime || o->ctime != e->ctime ||
		           e->mtime >= racy) {
			strv_push(&d->files, e->path);
		}
	}
	for (size_t i = 0; i < old->n; i++)
		if (!old->e[i].seen && !parent_gone(old, old->e[i].path))
			strv_push(&d->gone, old->e[i].path);
	return d->files.n + d->dirs.n + d->gone.n;
}

uint64_t snapshot_serial(const struct snapshot *sn)
{
	return sn ? sn->serial : 0;
}

int snapshot_same(const struct snapshot *old, const struct snapshot *now)
{
	if (!old || !now || old->n != now->n)
		return 0;
	double racy = old->taken - SNAPSHOT_RACY_S;
	/* the same count and unique paths: each of now's in old is all */
	for (size_t i = 0; i < now->n; i++) {
		const struct snap_entry *e = &now->e[i];
		const struct snap_entry *o = snapshot_find(old, e->path);
		if (!o || o->type != e->type || o->size != e->size ||
		    o->mtime != e->mtime || o->ctime != e->ctime ||
		    e->mtime >= racy)
			return 0;
	}
	return 1;
}

/* The listing's name of an entry's type. */
static const char *snapshot_type_name(char t)
{
	return t == 'f' ? "file" : t == 'd' ? "dir" : "link";
}

int snapshot_save(const struct snapshot *sn, const char *path, const char *tag,
                  double taken, char **err)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "tag", tag);
	cJSON_AddNumberToObject(j, "taken", taken);
	cJSON *list = cJSON_AddArrayToObject(j, "entries");
	for (size_t i = 0; i < sn->n; i++) {
		const struct snap_entry *e = &sn->e[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "path", e->path);
		cJSON_AddStringToObject(o, "type", snapshot_type_name(e->type));
		cJSON_AddNumberToObject(o, "size", e->size);
		cJSON_AddNumberToObject(o, "mtime", e->mtime);
		cJSON_AddNumberToObject(o, "ctime", e->ctime);
		cJSON_AddItemToArray(list, o);
	}
	char *text = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	int rc = write_file_replace(path, text, strlen(text), err);
	free(text);
	return rc;
}

struct snapshot *snapshot_load(const char *path, const char *tag)
{
	size_t len = 0;
	char *err = NULL;
	char *text =
	    read_file_flags(path, O_NOFOLLOW, SNAPSHOT_FILE_MAX, &len, &err);
	free(err);
	if (!text)
		return NULL;
	cJSON *j = cJSON_ParseWithLength(text, len);
	free(text);
	struct snapshot *sn = NULL;
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(j, "entries");
	double taken = json_num(j, "taken", 0);
	if (cJSON_IsArray(list) && taken > 0 &&
	    !strcmp(json_str(j, "tag", ""), tag))
		sn = snapshot_new(list, taken);
	cJSON_Delete(j);
	return sn;
}
