/* layers.c: a persisted workspace as a whole archive and the deltas
 * over it. A backend whose workspace lives in the sandbox (docker)
 * persists it after every call that may change files; after the first
 * whole archive, each call's snapshot holds only what changed (the
 * post-call scan knows), as RUN/workspace.d/SEQ-SIZE-MTIME.tar.zst
 * (.tar.gz over a .tar.gz archive).
 * SIZE and MTIME (hex, bytes and nanoseconds) name the whole archive
 * the delta goes over: a new whole archive (renamed into place) makes
 * the older deltas stale whatever moment a crash picks, and they are
 * removed. Readers fold the deltas into the archive first
 * (`assay-archive restore` and `members`, src/helpers/archive_delta.c).
 * RUN/workspace.listing.json is the listing of what a whole archive
 * holds, tagged with it the same way, so a later run's end can tell
 * the workspace unchanged (src/agent/persist.c).
 * Here the files are only named (libarchive is the helper's). */
#include "assay/sandbox.h"
#include "sandbox/internal.h"
#include "assay/strv.h"
#include "assay/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DELTA_DIR "workspace.d"
#define LISTING_NAME "workspace.listing.json"
#define ARCHIVE_BASE "workspace"
#define EXT_ZST ".tar.zst"
#define EXT_GZ ".tar.gz"

/* mtime of a regular file path, in ns, or -1 */
static long long file_mtime(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	return (long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
}

char *sbx_archive_find(const char *run_dir)
{
	char *zst = xasprintf("%s/" ARCHIVE_BASE EXT_ZST, run_dir);
	char *gz = xasprintf("%s/" ARCHIVE_BASE EXT_GZ, run_dir);
	long long tz = file_mtime(zst), tg = file_mtime(gz);
	char *pick = tz < 0 && tg < 0 ? NULL : tz >= tg ? zst : gz;
	if (pick != zst)
		free(zst);
	if (pick != gz)
		free(gz);
	return pick;
}

int sbx_archive_zstd(void)
{
#ifdef ASSAY_ARCHIVE_ZSTD
	return 1;
#else
	return 0;
#endif
}

char *sbx_archive_new(const char *run_dir)
{
	return xasprintf("%s/" ARCHIVE_BASE "%s", run_dir,
	                 sbx_archive_zstd() ? EXT_ZST : EXT_GZ);
}

char *sbx_archive_path(const char *run_dir)
{
	char *p = sbx_archive_find(run_dir);
	return p ? p : sbx_archive_new(run_dir);
}

/* Whether archive's name ends in EXT_ZST. */
static int archive_zst(const char *archive)
{
	size_t n = strlen(archive), z = strlen(EXT_ZST);
	return n > z && !strcmp(archive + n - z, EXT_ZST);
}

/* The extension of archive: EXT_ZST or EXT_GZ. */
static const char *archive_ext(const char *archive)
{
	return archive_zst(archive) ? EXT_ZST : EXT_GZ;
}

/* RUN/NAME beside the archive RUN/workspace.tar.zst. */
static char *layer_beside(const char *archive, const char *name)
{
	const char *slash = strrchr(archive, '/');
	if (!slash)
		return xstrdup(name);
	return xasprintf("%.*s/%s", (int)(slash - archive), archive, name);
}

char *sbx_archive_listing(const char *archive)
{
	return layer_beside(archive, LISTING_NAME);
}

void sbx_archive_written(const char *path)
{
	int zst = archive_zst(path);
	size_t n = strlen(path) - strlen(zst ? EXT_ZST : EXT_GZ);
	char *other = xasprintf("%.*s%s", (int)n, path, zst ? EXT_GZ : EXT_ZST);
	unlink(other);
	free(other);
	char *listing = sbx_archive_listing(path); /* of the older one */
	unlink(listing);
	free(listing);
	sbx_deltas_clear(path);
}

/* RUN/workspace.d for the archive RUN/workspace.tar.zst. */
static char *delta_dir(const char *archive)
{
	return layer_beside(archive, DELTA_DIR);
}

char *sbx_archive_tag(const char *archive)
{
	struct stat st;
	if (stat(archive, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	unsigned long long ns =
	    (unsigned long long)st.st_mtim.tv_sec * 1000000000ull +
	    (unsigned long long)st.st_mtim.tv_nsec;
	return xasprintf("%llx-%llx", (unsigned long long)st.st_size, ns);
}

/* A delta's sequence number when name is one of tag's, else 0. */
static unsigned delta_seq(const char *name, const char *tag)
{
	char *end = NULL;
	unsigned long seq = strtoul(name, &end, 10);
	if (!seq || seq > 999999 || end != name + 6 || *end != '-')
		return 0;
	size_t tl = strlen(tag);
	if (strncmp(end + 1, tag, tl) ||
	    (strcmp(end + 1 + tl, EXT_ZST) && strcmp(end + 1 + tl, EXT_GZ)))
		return 0;
	return (unsigned)seq;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The deltas of dir in order (names sort by their sequence number:
 * six digits); stale ones (not over the archive as it is) removed
 * when prune. */
static int delta_scan(const char *archive, struct strv *paths, int64_t *bytes,
                      int prune, unsigned *last, char **err)
{
	char *dir = delta_dir(archive);
	char *tag = sbx_archive_tag(archive);
	DIR *d = opendir(dir);
	int n = 0;
	*last = 0;
	if (bytes)
		*bytes = 0;
	if (!d) {
		int e = errno;
		free(dir);
		free(tag);
		if (e == ENOENT)
			return 0;
		return set_err(err, "%s: %s", archive, strerror(e));
	}
	struct strv found = {0};
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		unsigned seq = tag ? delta_seq(de->d_name, tag) : 0;
		char *p = xasprintf("%s/%s", dir, de->d_name);
		if (!seq) {
			/* over an older archive, or a temporary a kill left */
			if (prune)
				unlink(p);
			free(p);
			continue;
		}
		struct stat st;
		if (bytes && stat(p, &st) == 0)
			*bytes += st.st_size;
		if (seq > *last)
			*last = seq;
		strv_take(&found, p);
	}
	closedir(d);
	if (found.n)
		qsort(found.v, found.n, sizeof *found.v, cmp_str);
	for (size_t i = 0; i < found.n; i++, n++)
		if (paths)
			strv_push(paths, found.v[i]);
	strv_free(&found);
	free(dir);
	free(tag);
	return n;
}

int sbx_deltas(const char *archive, struct strv *paths, int64_t *bytes,
               char **err)
{
	unsigned last;
	return delta_scan(archive, paths, bytes, 0, &last, err);
}

char *sbx_delta_next(const char *archive, char **err)
{
	char *tag = sbx_archive_tag(archive);
	if (!tag) {
		set_err(err, "%s: no whole archive to go over", archive);
		return NULL;
	}
	unsigned last;
	if (delta_scan(archive, NULL, NULL, 1, &last, err) < 0) {
		free(tag);
		return NULL;
	}
	if (last >= 999999) {
		free(tag);
		set_err(err, "%s: too many deltas", archive);
		return NULL;
	}
	char *dir = delta_dir(archive);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		set_err(err, "%s: %s", dir, strerror(errno));
		free(dir);
		free(tag);
		return NULL;
	}
	char *p =
	    xasprintf("%s/%06u-%s%s", dir, last + 1, tag, archive_ext(archive));
	free(dir);
	free(tag);
	return p;
}

void sbx_deltas_clear(const char *archive)
{
	char *dir = delta_dir(archive);
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *p = xasprintf("%s/%s", dir, de->d_name);
		unlink(p);
		free(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
	free(dir);
}
