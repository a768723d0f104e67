/* archive_hash.c: `assay-archive hash CACHE SRC...`, the SHA-256 of a
 * run's inputs, so that a resume can tell whether an input is still the
 * one the run had. It runs in the helper because a 10 GB input takes
 * seconds to read, and the loop must not wait for it.
 *
 * A file's hash is the SHA-256 of its bytes. A directory's is the
 * SHA-256 of its manifest: every entry below it, in byte order of the
 * names, as NUL-ended records "D rel", "F size sha rel", "L rel" then
 * the link's target, "S mode rel" (a fifo, socket or device: never
 * read). What the sandbox does not see of a mounted directory (the
 * `--mounts` table's hide list: .assay, a run dir inside it) is left
 * out, so a transcript growing inside `--input .` is no change.
 *
 * CACHE ("" for none) is a JSON file {"version":1,"entries":{realpath:
 * {"key":"size:sec.nsec:dev:ino","sha256","used"}}}: a file whose key
 * is unchanged is not read again. It is read without a lock (it is only
 * ever replaced by rename) and merged under CACHE.lock at the end; it
 * keeps the CACHE_KEEP most recently used files. A file modified in the
 * last seconds is not cached: a write within the same mtime tick would
 * go unseen.
 *
 * stdout: one line per SRC, {"src","kind":"file"|"dir","bytes",
 * ["files"],"mtime","sha256","cached"}, with {"progress":SRC,"done",
 * "total"} lines at most twice a second while a big one is read. */
#include "helpers/archive_hash.h"
#include "assay/json.h"
#include "assay/path.h"
#include "assay/util.h"
#include "sandbox/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HASH_CHUNK (1u << 20) /* read block */
#define HASH_ENTRIES 1000000  /* entries below one directory at most */
#define HASH_DEPTH 256        /* directory depth at most */
#define CACHE_MAX (64u << 20) /* bytes of cache file read at most */
#define CACHE_KEEP 20000      /* files the cache remembers */
#define CACHE_RACY_S 2        /* younger files are not cached */
#define CACHE_TOUCH_S 3600    /* "used" is refreshed this rarely */
#define PROGRESS_MS 500

struct entry {
	char *rel;
	char type; /* D F L S */
	struct stat st;
	char *target; /* L */
};

/* An object's members sorted by name, for lookups in O(log n): a
 * directory of 100,000 files against a cache of 20,000 entries. */
struct index {
	cJSON **v;
	size_t n;
};

struct hash {
	cJSON *cache; /* entries read at the start (never NULL) */
	struct index cache_ix;
	cJSON *add; /* entries to merge back: new ones, refreshed ones */
	time_t now;
	unsigned char *buf;
	EVP_MD_CTX *md;
	const char *src; /* the input being read, for progress */
	double done, total;
	int64_t said_ms;
	int said; /* progress was shown for this input */
	int all_cached;
};

static void hex(const unsigned char *d, unsigned n, char out[65])
{
	static const char x[] = "0123456789abcdef";
	for (unsigned i = 0; i < n && i < 32; i++) {
		out[2 * i] = x[d[i] >> 4];
		out[2 * i + 1] = x[d[i] & 15];
	}
	out[2 * (n < 32 ? n : 32)] = '\0';
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(cJSON *const *)a)->string,
	              (*(cJSON *const *)b)->string);
}

static void index_build(struct index *ix, const cJSON *obj)
{
	ix->n = 0;
	for (const cJSON *e = obj->child; e; e = e->next)
		ix->n++;
	ix->v = xcalloc(ix->n ? ix->n : 1, sizeof *ix->v);
	size_t i = 0;
	for (cJSON *e = obj->child; e; e = e->next)
		ix->v[i++] = e;
	qsort(ix->v, ix->n, sizeof *ix->v, by_name);
}

static cJSON *index_find(const struct index *ix, const char *name)
{
	cJSON key = {.string = (char *)name}, *k = &key;
	cJSON **hit = bsearch(&k, ix->v, ix->n, sizeof *ix->v, by_name);
	return hit ? *hit : NULL;
}

static char *cache_key(const struct stat *st)
{
	return xasprintf("%lld:%lld.%09ld:%llu:%llu", (long long)st->st_size,
	                 (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
	                 (unsigned long long)st->st_dev,
	                 (unsigned long long)st->st_ino);
}

/* The cached hash of path (whose stat is st) into out, or 0. */
static int cache_get(struct hash *h, const char *path, const struct stat *st,
                     char out[65])
{
	const cJSON *e = index_find(&h->cache_ix, path);
	char *key = cache_key(st);
	const char *sha = json_str(e, "sha256", "");
	int hit = !strcmp(json_str(e, "key", ""), key) && strlen(sha) == 64;
	free(key);
	if (!hit)
		return 0;
	memcpy(out, sha, 65);
	if (json_num(e, "used", 0) < (double)(h->now - CACHE_TOUCH_S))
		cJSON_AddItemToObject(h->add, path,
		                      cJSON_Duplicate(e, 1)); /* refreshed */
	return 1;
}

static void cache_put(struct hash *h, const char *path, const struct stat *st,
                      const char *sha)
{
	if (st->st_mtim.tv_sec >= h->now - CACHE_RACY_S)
		return;
	cJSON *e = cJSON_CreateObject();
	char *key = cache_key(st);
	cJSON_AddStringToObject(e, "key", key);
	free(key);
	cJSON_AddStringToObject(e, "sha256", sha);
	cJSON_AddItemToObject(h->add, path, e); /* a twice-seen path: merged */
}

/* The entries object of the cache file, or an empty one. */
static cJSON *cache_read(const char *file)
{
	size_t len = 0;
	char *err = NULL;
	char *text = read_file_max(file, CACHE_MAX, &len, &err);
	int had = text != NULL;
	cJSON *root = text ? cJSON_ParseWithLength(text, len) : NULL;
	free(text);
	cJSON *ent = cJSON_DetachItemFromObjectCaseSensitive(root, "entries");
	if (had && (!cJSON_IsObject(ent) || json_num(root, "version", 0) != 1))
		fprintf(stderr,
		        "hash: the cache %s is not one assay wrote; "
		        "it is started afresh\n",
		        file);
	if (!cJSON_IsObject(ent)) {
		cJSON_Delete(ent);
		ent = cJSON_CreateObject();
	}
	cJSON_Delete(root);
	free(err);
	return ent;
}

static int by_used(const void *a, const void *b)
{
	double x = json_num(*(cJSON *const *)a, "used", 0);
	double y = json_num(*(cJSON *const *)b, "used", 0);
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Forget all but the CACHE_KEEP most recently used entries. */
static void cache_trim(cJSON *ent)
{
	int n = cJSON_GetArraySize(ent);
	if (n <= CACHE_KEEP)
		return;
	cJSON **v = xcalloc((size_t)n, sizeof *v);
	int i = 0;
	for (cJSON *e = ent->child; e; e = e->next)
		v[i++] = e;
	qsort(v, (size_t)n, sizeof *v, by_used);
	for (i = CACHE_KEEP; i < n; i++)
		cJSON_Delete(cJSON_DetachItemViaPointer(ent, v[i]));
	free(v);
}

/* Merge what this run learnt into the cache file, under its lock. A
 * cache that cannot be written costs time later, never correctness:
 * it is reported and the hashes stand. */
static void cache_write(struct hash *h, const char *file)
{
	if (!*file || !h->add->child)
		return;
	char *dir = xstrdup(file), *slash = strrchr(dir, '/');
	char *lock = xasprintf("%s.lock", file), *err = NULL;
	if (slash)
		*slash = '\0';
	int fd = -1;
	if ((slash && mkdir_p(dir, &err) < 0) ||
	    (fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0 ||
	    flock(fd, LOCK_EX) < 0) {
		fprintf(stderr, "hash: cannot lock the cache %s: %s\n", lock,
		        err ? err : strerror(errno));
		goto out;
	}
	/* the file as it is now (another assay may have written it), less
	 * what this run learnt anew, then that, once per path */
	cJSON *ent = cache_read(file);
	struct index add;
	index_build(&add, h->add);
	cJSON *e = ent->child;
	while (e) {
		cJSON *next = e->next;
		if (index_find(&add, e->string))
			cJSON_Delete(cJSON_DetachItemViaPointer(ent, e));
		e = next;
	}
	for (size_t i = 0; i < add.n; i++) {
		if (i + 1 < add.n && !by_name(&add.v[i], &add.v[i + 1]))
			continue; /* the same file met twice: one hash */
		cJSON *c = cJSON_Duplicate(add.v[i], 1);
		cJSON_DeleteItemFromObjectCaseSensitive(c, "used");
		cJSON_AddNumberToObject(c, "used", (double)h->now);
		cJSON_AddItemToObject(ent, add.v[i]->string, c);
	}
	free(add.v);
	cache_trim(ent);
	cJSON *root = cJSON_CreateObject();
	cJSON_AddNumberToObject(root, "version", 1);
	cJSON_AddItemToObject(root, "entries", ent);
	char *text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (write_file_replace(file, text, strlen(text), &err) < 0)
		fprintf(stderr, "hash: cannot write the cache: %s\n", err);
	free(text);
out:
	if (fd >= 0)
		close(fd);
	free(err);
	free(lock);
	free(dir);
}

/* o (taken) as one line on stdout, at once: the sandbox reads it as
 * it comes. */
static void put_line(cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);
	printf("%s\n", s);
	fflush(stdout);
	free(s);
	cJSON_Delete(o);
}

static void progress(struct hash *h, int force)
{
	int64_t t = now_ms();
	if (!force && t - h->said_ms < PROGRESS_MS)
		return;
	h->said_ms = t;
	h->said = 1;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "progress", h->src);
	cJSON_AddNumberToObject(o, "done", h->done);
	cJSON_AddNumberToObject(o, "total", h->total);
	put_line(o);
}

/* The SHA-256 of the open file fd (path, stat st) into out; through
 * the cache. */
static int hash_file(struct hash *h, int fd, const char *path,
                     const struct stat *st, char out[65], char **err)
{
	if (cache_get(h, path, st, out)) {
		h->done += (double)st->st_size;
		return 0;
	}
	h->all_cached = 0;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (!EVP_DigestInit_ex(h->md, EVP_sha256(), NULL)) {
		*err = xstrdup("hash: OpenSSL has no SHA-256");
		return -1;
	}
	for (;;) {
		ssize_t n = read(fd, h->buf, HASH_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*err = xasprintf("%s: %s", path, strerror(errno));
			return -1;
		}
		if (n == 0)
			break;
		EVP_DigestUpdate(h->md, h->buf, (size_t)n);
		h->done += (double)n;
		progress(h, 0);
	}
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned dn = 0;
	EVP_DigestFinal_ex(h->md, d, &dn);
	hex(d, dn, out);
	struct stat after;
	if (fstat(fd, &after) == 0 && after.st_size == st->st_size &&
	    after.st_mtim.tv_sec == st->st_mtim.tv_sec &&
	    after.st_mtim.tv_nsec == st->st_mtim.tv_nsec)
		cache_put(h, path, st, out);
	return 0;
}

struct walk {
	struct entry *v;
	size_t n, cap;
	const struct path_mount *m; /* for its hide list, or NULL */
};

static void entries_free(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++) {
		free(w->v[i].rel);
		free(w->v[i].target);
	}
	free(w->v);
}

/* Every entry below the directory fd (at rel, "" for the top) onto w,
 * each directory's names in byte order, depth first. */
static int walk(struct walk *w, int fd, const char *rel, int depth, char **err)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		*err = xasprintf("%s: %s", *rel ? rel : ".", strerror(errno));
		return -1;
	}
	size_t first = w->n;
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *r = *rel ? xasprintf("%s/%s", rel, de->d_name)
		               : xstrdup(de->d_name);
		struct stat st;
		if ((w->m && path_mount_hidden(w->m, r)) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) <
		        0) {
			free(r);
			continue;
		}
		if (w->n >= HASH_ENTRIES) {
			*err = xasprintf("more than %d entries to hash: give a "
			                 "smaller directory as the input",
			                 HASH_ENTRIES);
			free(r);
			rc = -1;
			break;
		}
		if (w->n == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 256;
			w->v = xrealloc(w->v, w->cap * sizeof *w->v);
		}
		struct entry *e = &w->v[w->n++];
		*e = (struct entry){.rel = r, .st = st};
		e->type = S_ISDIR(st.st_mode)   ? 'D'
		          : S_ISREG(st.st_mode) ? 'F'
		          : S_ISLNK(st.st_mode) ? 'L'
		                                : 'S';
		if (e->type == 'L') {
			char t[PATH_MAX];
			ssize_t n =
			    readlinkat(dirfd(d), de->d_name, t, sizeof t - 1);
			t[n > 0 ? n : 0] = '\0';
			e->target = xstrdup(t);
		}
	}
	/* then into each subdirectory (its entries go after these: the
	 * manifest order is made by one sort at the end) */
	size_t last = w->n;
	for (size_t i = first; rc == 0 && i < last; i++) {
		if (w->v[i].type != 'D')
			continue;
		if (depth >= HASH_DEPTH) {
			*err = xasprintf("%s: deeper than %d directories",
			                 w->v[i].rel, HASH_DEPTH);
			rc = -1;
			break;
		}
		const char *name = strrchr(w->v[i].rel, '/');
		name = name ? name + 1 : w->v[i].rel;
		int sub =
		    openat(dirfd(d), name,
		           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) /* unreadable: listed, its contents not */
			rc = walk(w, sub, w->v[i].rel, depth + 1, err);
	}
	closedir(d);
	return rc;
}

/* Manifest order: by path, with '/' below every other byte, so that a
 * directory's subtree follows it ("a", "a/x", "a-b"). */
static int by_path(const void *a, const void *b)
{
	const unsigned char *x =
	    (const unsigned char *)((const struct entry *)a)->rel;
	const unsigned char *y =
	    (const unsigned char *)((const struct entry *)b)->rel;
	while (*x && *x == *y)
		x++, y++;
	int cx = *x == '/' ? 1 : *x ? *x + 1 : 0;
	int cy = *y == '/' ? 1 : *y ? *y + 1 : 0;
	return cx - cy;
}

/* The manifest hash of the directory src (fd open on it). */
static int hash_dir(struct hash *h, int fd, const char *src,
                    const struct path_mount *m, double *bytes, double *files,
                    char out[65], char **err)
{
	struct walk w = {.m = m};
	int rc = walk(&w, fd, "", 0, err);
	if (rc < 0)
		goto out;
	qsort(w.v, w.n, sizeof *w.v, by_path);
	for (size_t i = 0; i < w.n; i++)
		if (w.v[i].type == 'F')
			h->total += (double)w.v[i].st.st_size;
	EVP_MD_CTX *man = EVP_MD_CTX_new();
	EVP_DigestInit_ex(man, EVP_sha256(), NULL);
	int top = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = 0; rc == 0 && i < w.n; i++) {
		struct entry *e = &w.v[i];
		char *rec = NULL;
		if (e->type == 'F') {
			char sha[65], *path = xasprintf("%s/%s", src, e->rel);
			char *why = NULL;
			int f = path_open_beneath(
			    top, e->rel, O_RDONLY | O_NOFOLLOW, 0, &why);
			struct stat st;
			if (f < 0 || fstat(f, &st) < 0) {
				*err = xasprintf("hash: %s: %s", path,
				                 why ? why : strerror(errno));
				free(why);
				rc = -1;
			} else {
				rc = hash_file(h, f, path, &st, sha, err);
			}
			if (f >= 0)
				close(f);
			free(path);
			if (rc < 0)
				break;
			*bytes += (double)st.st_size;
			*files += 1;
			rec = xasprintf("F %lld %s %s", (long long)st.st_size,
			                sha, e->rel);
		} else if (e->type == 'L') {
			rec = xasprintf("L %s", e->rel);
			EVP_DigestUpdate(man, rec, strlen(rec) + 1);
			free(rec);
			rec = xstrdup(e->target);
		} else if (e->type == 'D') {
			rec = xasprintf("D %s", e->rel);
		} else {
			rec = xasprintf("S %o %s", (unsigned)e->st.st_mode,
			                e->rel);
		}
		EVP_DigestUpdate(man, rec, strlen(rec) + 1);
		free(rec);
	}
	if (top >= 0)
		close(top);
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned dn = 0;
	EVP_DigestFinal_ex(man, d, &dn);
	EVP_MD_CTX_free(man);
	hex(d, dn, out);
out:
	entries_free(&w);
	return rc;
}

/* The mount whose source is real, or NULL. */
static const struct path_mount *mount_of(const struct path_mounts *ms,
                                         const char *real)
{
	for (size_t i = 0; ms && i < ms->n; i++)
		if (!strcmp(ms->v[i].src, real))
			return &ms->v[i];
	return NULL;
}

/* One input: its answer line on stdout. */
static int hash_one(struct hash *h, const char *src,
                    const struct path_mounts *ms, char **err)
{
	char *real = realpath(src, NULL);
	struct stat st;
	/* an input may be anything: a FIFO must not hold the hash up */
	int fd = real ? open(real, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
	              : -1;
	if (fd < 0 || fstat(fd, &st) < 0) {
		*err = xasprintf("hash: %s: %s", src, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(real);
		return -1;
	}
	h->src = src;
	h->done = 0;
	h->total = S_ISREG(st.st_mode) ? (double)st.st_size : 0;
	h->said_ms = now_ms();
	h->said = 0;
	h->all_cached = 1;
	double bytes = 0, files = 0;
	char sha[65];
	int rc;
	if (S_ISREG(st.st_mode)) {
		rc = hash_file(h, fd, real, &st, sha, err);
		bytes = (double)st.st_size;
		close(fd);
	} else if (S_ISDIR(st.st_mode)) {
		rc = hash_dir(h, fd, real, mount_of(ms, real), &bytes, &files,
		              sha, err); /* fd is the walk's */
	} else {
		*err = xasprintf("hash: %s is neither a file nor a directory",
		                 src);
		close(fd);
		rc = -1;
	}
	free(real);
	if (rc < 0)
		return -1;
	if (h->said)
		progress(h, 1); /* the whole, after the last partial one */
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "src", src);
	cJSON_AddStringToObject(o, "kind",
	                        S_ISDIR(st.st_mode) ? "dir" : "file");
	cJSON_AddNumberToObject(o, "bytes", bytes);
	if (S_ISDIR(st.st_mode))
		cJSON_AddNumberToObject(o, "files", files);
	cJSON_AddNumberToObject(o, "mtime", sbx_mtime(&st));
	cJSON_AddStringToObject(o, "sha256", sha);
	cJSON_AddBoolToObject(o, "cached", h->all_cached);
	put_line(o);
	return 0;
}

int archive_hash(const char *cache, char **srcs, int n,
                 const struct path_mounts *ms)
{
	struct hash h = {.now = time(NULL)};
	h.cache = *cache ? cache_read(cache) : cJSON_CreateObject();
	index_build(&h.cache_ix, h.cache);
	h.add = cJSON_CreateObject();
	h.buf = xmalloc(HASH_CHUNK);
	h.md = EVP_MD_CTX_new();
	char *err = NULL;
	int rc = h.md ? 0 : -1;
	if (rc < 0)
		err = xstrdup("hash: OpenSSL could not start a digest");
	for (int i = 0; rc == 0 && i < n; i++)
		rc = hash_one(&h, srcs[i], ms, &err);
	cache_write(&h, cache); /* what was learnt stands, even on error */
	if (rc < 0)
		fprintf(stderr, "%s\n", err ? err : "hash failed");
	free(err);
	EVP_MD_CTX_free(h.md);
	free(h.buf);
	free(h.cache_ix.v);
	cJSON_Delete(h.cache);
	cJSON_Delete(h.add);
	return rc < 0 ? 1 : 0;
}
