/* archive_restore.c: `assay-archive restore ARCHIVE.tar.gz` (see
 * assay_archive.c): a persisted workspace, maybe changed since it was
 * written (it lies in a run dir), checked entry by entry and written
 * again as a clean tar on stdout, for the docker backend's resume. And
 * the check of a member's name, which `members` shares. */
#include "assay/util.h"
#include "helpers/archive_delta.h"
#include "helpers/archive_restore.h"
#include "sandbox/internal.h"
#include "sandbox/tar.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A member name that means what it says: relative, no "", "." or ".."
 * component, no control character when ctl is 0 (names go back one per
 * line). */
const char *archive_bad_name(const char *p, int ctl)
{
	if (!*p)
		return "empty";
	if (*p == '/')
		return "an absolute path";
	if (strlen(p) >= PATH_MAX)
		return "too long";
	for (const unsigned char *c = (const unsigned char *)p; *c && !ctl; c++)
		if (*c < 0x20 || *c == 0x7f)
			return "a control character in it";
	for (const char *c = p;;) {
		size_t len = strcspn(c, "/");
		if (len == 2 && !strncmp(c, "..", 2))
			return "a \"..\" component";
		if (!len || (len == 1 && c[0] == '.'))
			return "an empty or \".\" component";
		if (!c[len])
			return NULL;
		c += len + 1;
	}
}

#define RESTORE_ENTRIES 1000000
#define RESTORE_BYTES (64LL << 30) /* of data, all entries together */
#define RESTORE_CHUNK (64u << 10)  /* read block */

/* A set of names (open addressing; never shrinks). */
struct nameset {
	char **slot;
	size_t cap, n;
};

static size_t name_hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return (size_t)h;
}

/* Whether the first len bytes of s are in the set. */
static int set_has(const struct nameset *set, const char *s, size_t len)
{
	if (!set->cap)
		return 0;
	for (size_t i = name_hash(s, len) & (set->cap - 1);;
	     i = (i + 1) & (set->cap - 1)) {
		const char *v = set->slot[i];
		if (!v)
			return 0;
		if (!strncmp(v, s, len) && !v[len])
			return 1;
	}
}

/* Add s to the set (a copy), growing it as needed. */
static void set_add(struct nameset *set, const char *s)
{
	if (set_has(set, s, strlen(s)))
		return;
	if ((set->n + 1) * 2 > set->cap) {
		struct nameset grown = {
		    .cap = set->cap ? set->cap * 2 : 1024,
		};
		grown.slot = xcalloc(grown.cap, sizeof *grown.slot);
		for (size_t i = 0; i < set->cap; i++) {
			char *v = set->slot[i];
			if (!v)
				continue;
			size_t j = name_hash(v, strlen(v)) & (grown.cap - 1);
			while (grown.slot[j])
				j = (j + 1) & (grown.cap - 1);
			grown.slot[j] = v;
		}
		free(set->slot);
		grown.n = set->n;
		*set = grown;
	}
	size_t j = name_hash(s, strlen(s)) & (set->cap - 1);
	while (set->slot[j])
		j = (j + 1) & (set->cap - 1);
	set->slot[j] = xstrdup(s);
	set->n++;
}

static void set_free(struct nameset *set)
{
	for (size_t i = 0; i < set->cap; i++)
		free(set->slot[i]);
	free(set->slot);
	*set = (struct nameset){0};
}

struct restore {
	const char *archive;
	const struct path_mounts *mounts; /* --mounts: their places kept */
	struct nameset links;             /* symbolic links seen so far */
	struct nameset files;             /* regular files seen so far */
	long long bytes;
	size_t count;
	int writing; /* the second pass */
	char **err;
};

/* path without leading "./" and trailing "/" (a copy). */
static char *restore_norm(const char *path)
{
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	char *n = xstrdup(path);
	size_t len = strlen(n);
	while (len > 1 && n[len - 1] == '/')
		n[--len] = '\0';
	if (!strcmp(n, "."))
		n[0] = '\0';
	return n;
}

static int refuse(struct restore *r, const char *path, const char *why)
{
	return set_err(r->err,
	               "restore: %s: entry '%s' refused: %s (the archive was "
	               "not written by assay, or was changed since)",
	               r->archive, path, why);
}

/* Why name (checked, normalised) would land through a link, or NULL. */
static const char *under_link(const struct restore *r, const char *name)
{
	for (const char *c = strchr(name, '/'); c; c = strchr(c + 1, '/'))
		if (set_has(&r->links, name, (size_t)(c - name)))
			return "it lies under a symbolic link of the archive";
	return NULL;
}

/* Check one entry; 0 to take it, 1 to leave it out (the root, a fifo
 * or socket), -1 to refuse the archive. *name gets the clean name. */
static int restore_check(struct restore *r, struct archive_entry *e,
                         char **name)
{
	const char *path = archive_entry_pathname(e);
	if (!path)
		return refuse(r, "(none)", "it has no name");
	mode_t type = archive_entry_filetype(e);
	const char *hl = archive_entry_hardlink(e);
	if (++r->count > RESTORE_ENTRIES)
		return set_err(r->err, "restore: %s has more than %d entries",
		               r->archive, RESTORE_ENTRIES);
	if (path[0] == '/')
		return refuse(r, path, "an absolute path");
	*name = restore_norm(path);
	if (!**name && !hl && type == AE_IFDIR)
		return 1; /* the workspace itself */
	const char *why = archive_bad_name(*name, 1);
	if (!why)
		why = under_link(r, *name);
	if (why)
		return refuse(r, path, why);
	if (hl) {
		char *t = restore_norm(hl);
		why = t[0] == '/' ? "an absolute path" : archive_bad_name(t, 1);
		if (!why && !set_has(&r->files, t, strlen(t)))
			why = "not an earlier file of the archive";
		char *msg =
		    why ? xasprintf("a hard link to '%s', %s", hl, why) : NULL;
		int rc = why ? refuse(r, path, msg) : 0;
		free(msg);
		free(t);
		return rc;
	}
	if (type == AE_IFCHR || type == AE_IFBLK)
		return refuse(r, path, "a device node");
	if (type == AE_IFIFO || type == AE_IFSOCK) {
		if (r->writing)
			fprintf(stderr, "restore: %s left out (a %s)\n", *name,
			        type == AE_IFIFO ? "fifo" : "socket");
		return 1;
	}
	if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
		return refuse(r, path, "not a file, directory or link");
	if (type == AE_IFREG && (archive_entry_mode(e) & (S_ISUID | S_ISGID)))
		return refuse(r, path, "a setuid or setgid file");
	la_int64_t size = type == AE_IFREG ? archive_entry_size(e) : 0;
	if (size < 0 || size > RESTORE_BYTES - r->bytes)
		return set_err(r->err,
		               "restore: %s holds more than %lld bytes of "
		               "data",
		               r->archive, (long long)RESTORE_BYTES);
	r->bytes += size;
	if (type == AE_IFLNK)
		set_add(&r->links, *name); /* its target stays as it is */
	else if (type == AE_IFREG)
		set_add(&r->files, *name);
	return 0;
}

/* The archive could not be read further: -1, with why. */
static int read_err(const struct restore *r, struct archive *in)
{
	return set_err(r->err, "restore: %s: %s", r->archive,
	               archive_error_string(in));
}

/* The entry as a clean header: name, type, permissions, time, size,
 * link target; owners root (copyUIDGID gives them to the sandbox user). */
static int restore_write(struct restore *r, struct archive *in,
                         struct archive *out, struct archive_entry *e,
                         const char *name)
{
	struct archive_entry *c = archive_entry_new();
	const char *hl = archive_entry_hardlink(e);
	mode_t type = archive_entry_filetype(e);
	int rc = -1, st;
	archive_entry_set_pathname(c, name);
	if (hl) {
		char *t = restore_norm(hl);
		archive_entry_set_filetype(c, AE_IFREG);
		archive_entry_set_hardlink(c, t);
		free(t);
	} else {
		archive_entry_set_filetype(c, type);
	}
	archive_entry_set_perm(c, archive_entry_perm(e) & 0777);
	archive_entry_set_mtime(c, archive_entry_mtime(e),
	                        archive_entry_mtime_nsec(e));
	archive_entry_set_size(
	    c, !hl && type == AE_IFREG ? archive_entry_size(e) : 0);
	if (!hl && type == AE_IFLNK)
		archive_entry_set_symlink(c, archive_entry_symlink(e));
	if (archive_write_header(out, c) < ARCHIVE_WARN) {
		set_err(r->err, "restore: %s: %s", name,
		        archive_error_string(out));
		goto out;
	}
	if (!hl && type == AE_IFREG) {
		const void *buf;
		size_t size;
		la_int64_t off, left = archive_entry_size(e);
		while ((st = archive_read_data_block(in, &buf, &size, &off)) ==
		       ARCHIVE_OK) {
			if ((la_int64_t)size > left)
				size = (size_t)left; /* never past the header */
			if (size && archive_write_data(out, buf, size) < 0) {
				set_err(r->err, "restore: %s: %s", name,
				        archive_error_string(out));
				goto out;
			}
			left -= (la_int64_t)size;
		}
		if (st != ARCHIVE_EOF) {
			read_err(r, in);
			goto out;
		}
	}
	rc = 0;
out:
	archive_entry_free(c);
	return rc;
}

/* Whether the directory name lies above a mount point (--mounts): it
 * is there already (staging or the daemon made it, with the modes the
 * inputs need, read-only ones' nobody 0555), and the archive's entry
 * would change them. */
static int above_mount(const struct restore *r, struct archive_entry *e,
                       const char *name)
{
	if (archive_entry_filetype(e) != AE_IFDIR)
		return 0;
	size_t n = strlen(name);
	while (n && name[n - 1] == '/')
		n--;
	for (size_t i = 0; n && r->mounts && i < r->mounts->n; i++) {
		const char *rel = r->mounts->v[i].rel;
		if (!strncmp(rel, name, n) && rel[n] == '/')
			return 1;
	}
	return 0;
}

/* One pass over the archive at fd (rewound): every entry checked, and
 * written to out when out is not NULL. */
static int restore_pass(struct restore *r, int fd, struct archive *out)
{
	struct archive *in = archive_read_new();
	struct archive_entry *e;
	int rc = -1, st;
	set_free(&r->links);
	set_free(&r->files);
	r->bytes = 0;
	r->count = 0;
	r->writing = out != NULL;
	archive_read_support_format_tar(in);
	archive_read_support_filter_gzip(in);
	archive_read_support_filter_zstd(in);
	archive_read_support_filter_none(in);
	if (lseek(fd, 0, SEEK_SET) < 0 ||
	    archive_read_open_fd(in, fd, RESTORE_CHUNK) != ARCHIVE_OK) {
		set_err(r->err, "restore: %s: %s", r->archive,
		        archive_error_string(in) ? archive_error_string(in)
		                                 : strerror(errno));
		goto out;
	}
	while ((st = tar_next_header(in, &e)) == ARCHIVE_OK) {
		char *name = NULL;
		int c = restore_check(r, e, &name);
		if (c == 0 && out && !above_mount(r, e, name))
			c = restore_write(r, in, out, e, name);
		else if (c >= 0 && archive_read_data_skip(in) != ARCHIVE_OK)
			c = read_err(r, in);
		free(name);
		if (c < 0)
			goto out;
	}
	if (st != ARCHIVE_EOF) {
		read_err(r, in);
		goto out;
	}
	rc = 0;
out:
	archive_read_free(in);
	return rc;
}

/* The whole archive is read once to check it (a damaged or hostile one
 * writes nothing), then again to write the clean tar. */
int archive_restore(const char *archive, const struct path_mounts *ms)
{
	char *err = NULL;
	struct restore r = {.archive = archive, .mounts = ms, .err = &err};
	struct archive *out = NULL;
	int rc = -1, fd = -1;
	/* the deltas a killed docker run left are folded into its whole
	 * archive (a resume in place holds the run dir's lock) */
	int nf = archive_fold(archive, archive, &err);
	if (nf < 0)
		goto out;
	if (nf > 0)
		sbx_deltas_clear(archive);
	fd = open_regular(archive, O_RDONLY | O_NOFOLLOW, 0, &err);
	if (fd < 0)
		goto out;
	if (restore_pass(&r, fd, NULL) < 0)
		goto out;
	out = archive_write_new();
	if (archive_write_set_format_pax_restricted(out) != ARCHIVE_OK ||
	    archive_write_add_filter_none(out) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(out, 1) != ARCHIVE_OK ||
	    archive_write_open_fd(out, STDOUT_FILENO) != ARCHIVE_OK) {
		set_err(&err, "restore: %s", archive_error_string(out));
		goto out;
	}
	if (restore_pass(&r, fd, out) < 0)
		goto out;
	if (archive_write_close(out) != ARCHIVE_OK) {
		set_err(&err, "restore: %s", archive_error_string(out));
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	archive_write_free(out);
	set_free(&r.links);
	set_free(&r.files);
	if (rc < 0)
		fprintf(stderr, "%s\n", err ? err : "restore failed");
	free(err);
	return rc < 0 ? 1 : 0;
}
