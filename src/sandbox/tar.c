/* tar.c: the tar work of the docker and opensandbox backends, run only
 * inside the assay-archive helper process (never called in assay):
 *   pack     the configured inputs as a tar stream for PUT .../archive,
 *            with the staging rules of stage.c;
 *   extract  a tar stream from GET .../archive into a host directory,
 *            refusing anything that could land outside it;
 *   repack   a tar stream into workspace.tar.gz. */
#include "assay/path.h"
#include "assay/util.h"
#include "sandbox/tar.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAR_CHUNK (1 << 20)
#define TAR_MAX_DEPTH 128
#define TAR_MAX_ENTRIES 1000000
#define TAR_MAX_SKIP_NOTES 20
#define TAR_RO_UID 65534 /* nobody: the owner of read-only inputs */

int tar_next_header(struct archive *a, struct archive_entry **e)
{
	int r = archive_read_next_header(a, e);
	return r == ARCHIVE_WARN ? ARCHIVE_OK : r;
}

/* ---- pack ---- */

struct pack {
	struct archive *a;
	struct archive_entry *e;
	char *chunk;
	dev_t skip_dev;
	ino_t skip_ino;
	int have_skip;
	int notes;
	int ro; /* the pair being packed is read-only (--ro) */
	char **err;
};

static void note_skip(struct pack *p, const char *src, const char *why)
{
	if (p->notes++ < TAR_MAX_SKIP_NOTES)
		fprintf(stderr, "input %s skipped: %s\n", src, why);
}

static int pack_fail(struct pack *p, const char *what)
{
	return set_err(p->err, "archive: %s: %s", what,
	               archive_error_string(p->a));
}

/* The tar header of one packed entry. */
static int pack_header(struct pack *p, const char *dest, const struct stat *st,
                       mode_t type)
{
	archive_entry_clear(p->e);
	archive_entry_set_pathname(p->e, dest);
	archive_entry_set_filetype(p->e, type);
	archive_entry_set_perm(p->e, (st->st_mode & 0777) | 0600 |
	                                 (type == AE_IFDIR ? 0100 : 0));
	archive_entry_set_size(p->e, type == AE_IFREG ? st->st_size : 0);
	archive_entry_set_mtime(p->e, st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
	archive_entry_set_uid(p->e, 0);
	archive_entry_set_gid(p->e, 0);
	if (p->ro) {
		/* not root's: root without capabilities (the container's)
		 * can neither write nor chmod it, nor unlink in its dirs */
		archive_entry_set_perm(p->e, type == AE_IFDIR ? 0555 : 0444);
		archive_entry_set_uid(p->e, TAR_RO_UID);
		archive_entry_set_gid(p->e, TAR_RO_UID);
	}
	if (archive_write_header(p->a, p->e) < ARCHIVE_WARN)
		return pack_fail(p, dest);
	return 0;
}

/* The open regular file fd as dest; the size is the one written in
 * the header, whatever the file does meanwhile. */
static int pack_file(struct pack *p, int fd, const char *dest,
                     const struct stat *st)
{
	if (pack_header(p, dest, st, AE_IFREG) < 0)
		return -1;
	off_t left = st->st_size;
	while (left > 0) {
		size_t want = left < TAR_CHUNK ? (size_t)left : TAR_CHUNK;
		ssize_t r = read(fd, p->chunk, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return set_err(p->err, "input %s: %s", dest,
			               strerror(errno));
		if (r == 0) { /* shrank: pad with zeros */
			memset(p->chunk, 0, want);
			r = (ssize_t)want;
		}
		if (archive_write_data(p->a, p->chunk, (size_t)r) < 0)
			return pack_fail(p, dest);
		left -= r;
	}
	return 0;
}

static int pack_dir(struct pack *p, int dfd, const char *src, const char *dest,
                    int depth);

/* One entry of a directory: files (and links to files) as files,
 * directories recursed, the rest skipped, as stage.c does. */
static int pack_entry(struct pack *p, int dfd, const char *name,
                      const char *src, const char *dest, int depth)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return set_err(p->err, "input %s: %s", src, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		if (p->have_skip && st.st_dev == p->skip_dev &&
		    st.st_ino == p->skip_ino)
			return 0; /* the run directory */
		int sub = openat(
		    dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			return set_err(p->err, "input %s: %s", src,
			               strerror(errno));
		int rc = pack_dir(p, sub, src, dest, depth + 1);
		close(sub);
		return rc;
	}
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		note_skip(p, src, "not a regular file or directory");
		return 0;
	}
	int fd =
	    openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		note_skip(p, src,
		          S_ISLNK(st.st_mode) ? "dangling link"
		                              : strerror(errno));
		return 0;
	}
	int rc = 0;
	if (fstat(fd, &st) < 0)
		rc = set_err(p->err, "input %s: %s", src, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		note_skip(p, src, "a link to a directory or a special file");
	else
		rc = pack_file(p, fd, dest, &st);
	close(fd);
	return rc;
}

/* A directory and (recursively) what it holds, under dest. */
static int pack_dir(struct pack *p, int dfd, const char *src, const char *dest,
                    int depth)
{
	struct stat st;
	if (depth > TAR_MAX_DEPTH)
		return set_err(p->err, "input %s: deeper than %d levels", src,
		               TAR_MAX_DEPTH);
	if (fstat(dfd, &st) < 0 || pack_header(p, dest, &st, AE_IFDIR) < 0)
		return set_err(p->err, "input %s: %s", src, strerror(errno));
	int dup = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
	if (!d) {
		if (dup >= 0)
			close(dup);
		return set_err(p->err, "input %s: %s", src, strerror(errno));
	}
	/* sorted: the same tar for the same tree */
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap)
			names = xrealloc(names, (cap = cap ? cap * 2 : 64) *
			                            sizeof *names);
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names,
	      (int (*)(const void *, const void *))strcmp);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (rc == 0) {
			char *s2 = xasprintf("%s/%s", src, names[i]);
			char *d2 = xasprintf("%s/%s", dest, names[i]);
			rc = pack_entry(p, dfd, names[i], s2, d2, depth);
			free(s2);
			free(d2);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

/* Directory entries for the parents of dest ("a/b/c" -> a, a/b). */
static int pack_parents(struct pack *p, const char *dest)
{
	struct stat st = {.st_mode = 0755, .st_mtim = {time(NULL), 0}};
	char *d = xstrdup(dest);
	int rc = 0;
	for (char *s = strchr(d, '/'); s && rc == 0; s = strchr(s + 1, '/')) {
		*s = '\0';
		rc = pack_header(p, d, &st, AE_IFDIR);
		*s = '/';
	}
	free(d);
	return rc;
}

/* specs: "--skip" DIR, then SRC DEST pairs, each pair after "--ro"
 * read-only (owned by nobody, with its parents: a remote daemon's
 * inputs) until "--rw". SRC itself is followed. */
int tar_pack(int out_fd, char *const *specs, int n, char **err)
{
	struct pack p = {.err = err};
	int rc = -1, i = 0;
	if (n >= 2 && !strcmp(specs[0], "--skip")) {
		struct stat st;
		if (stat(specs[1], &st) == 0) {
			p.have_skip = 1;
			p.skip_dev = st.st_dev;
			p.skip_ino = st.st_ino;
		}
		i = 2;
	}
	int pairs = 0;
	for (int k = i; k < n; k++)
		pairs += strcmp(specs[k], "--ro") && strcmp(specs[k], "--rw");
	if (pairs % 2)
		return set_err(err, "pack: SRC DEST pairs expected");
	p.a = archive_write_new();
	p.e = archive_entry_new();
	p.chunk = xmalloc(TAR_CHUNK);
	if (archive_write_set_format_pax_restricted(p.a) != ARCHIVE_OK ||
	    archive_write_add_filter_none(p.a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(p.a, TAR_CHUNK) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(p.a, 1) != ARCHIVE_OK ||
	    archive_write_open_fd(p.a, out_fd) != ARCHIVE_OK) {
		pack_fail(&p, "pack");
		goto out;
	}
	for (; i < n; i += 2) {
		if (!strcmp(specs[i], "--ro") || !strcmp(specs[i], "--rw")) {
			p.ro = specs[i][2] == 'r' && specs[i][3] == 'o';
			i--; /* one token, not a pair */
			continue;
		}
		if (i + 1 >= n)
			break;
		const char *src = specs[i], *dest = specs[i + 1];
		struct stat st;
		if (stat(src, &st) < 0) {
			set_err(err, "input %s: %s", src, strerror(errno));
			goto out;
		}
		if (pack_parents(&p, dest) < 0)
			goto out;
		int fd =
		    open(src, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
		                  (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
		if (fd < 0) {
			set_err(err, "input %s: %s", src, strerror(errno));
			goto out;
		}
		int r =
		    S_ISDIR(st.st_mode) ? pack_dir(&p, fd, src, dest, 0)
		    : S_ISREG(st.st_mode)
		        ? pack_file(&p, fd, dest, &st)
		        : set_err(err, "input %s is not a file or directory",
		                  src);
		close(fd);
		if (r < 0)
			goto out;
	}
	if (archive_write_close(p.a) != ARCHIVE_OK) {
		pack_fail(&p, "pack");
		goto out;
	}
	rc = 0;
out:
	archive_entry_free(p.e);
	archive_write_free(p.a);
	free(p.chunk);
	return rc;
}

/* ---- extract ---- */

/* Is path NAME or NAME/...; no absolute path, no "..", no empty or
 * "." component (a tar that means something else than it says)? */
static int entry_inside(const char *path, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(path, name, n) || (path[n] && path[n] != '/'))
		return 0;
	for (const char *c = path; *c;) {
		size_t len = strcspn(c, "/");
		if ((len == 2 && !strncmp(c, "..", 2)) ||
		    (len == 1 && c[0] == '.'))
			return 0;
		c += len;
		while (*c == '/')
			c++;
	}
	return path[0] != '/';
}

/* Move the tree at from (in dir tmp) to dest: a rename when dest is
 * new or a file replaced by a file; merged file by file when both are
 * directories (like the local backend, which writes into what is
 * there). */
static int place(const char *from, const char *dest, char **err)
{
	struct stat fs, ds;
	if (lstat(from, &fs) < 0)
		return set_err(err, "extract: %s: %s", from, strerror(errno));
	if (lstat(dest, &ds) < 0 ||
	    (!S_ISDIR(fs.st_mode) && !S_ISDIR(ds.st_mode))) {
		if (rename(from, dest) < 0)
			return set_err(err, "extract: %s: %s", dest,
			               strerror(errno));
		return 0;
	}
	if (!S_ISDIR(fs.st_mode) || !S_ISDIR(ds.st_mode))
		return set_err(err, "extract: %s exists and is %s", dest,
		               S_ISDIR(ds.st_mode) ? "a directory"
		                                   : "not a directory");
	DIR *d = opendir(from);
	if (!d)
		return set_err(err, "extract: %s: %s", from, strerror(errno));
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *f = xasprintf("%s/%s", from, de->d_name);
		char *t = xasprintf("%s/%s", dest, de->d_name);
		rc = place(f, t, err);
		free(f);
		free(t);
	}
	closedir(d);
	return rc;
}

/* Copy the current entry's data from in to out. */
/* An extract's progress: the files' bytes written so far. */
struct extract_progress {
	sbx_tar_progress_fn fn;
	double done;
	int64_t said;
};

static int copy_data(struct archive *in, struct archive *out,
                     struct extract_progress *p, char **err)
{
	const void *buf;
	size_t size;
	la_int64_t off;
	for (;;) {
		int r = archive_read_data_block(in, &buf, &size, &off);
		if (r == ARCHIVE_EOF)
			return 0;
		if (r != ARCHIVE_OK)
			return set_err(err, "archive: %s",
			               archive_error_string(in));
		if (archive_write_data_block(out, buf, size, off) != ARCHIVE_OK)
			return set_err(err, "archive: %s",
			               archive_error_string(out));
		p->done += (double)size;
		if (p->fn && now_ms() - p->said >= 500) {
			p->said = now_ms();
			p->fn(p->done, 0); /* the total is not known */
		}
	}
}

/* Every entry of in, checked to lie under name, written to out. */
static int extract_entries(struct archive *in, struct archive *out,
                           const char *name, struct extract_progress *p,
                           char **err)
{
	struct archive_entry *e;
	size_t count = 0;
	int r;
	while ((r = tar_next_header(in, &e)) == ARCHIVE_OK) {
		const char *path = archive_entry_pathname(e);
		if (++count > TAR_MAX_ENTRIES)
			return set_err(err, "extract: more than %d entries",
			               TAR_MAX_ENTRIES);
		if (!path || !entry_inside(path, name))
			return set_err(err,
			               "extract: entry '%s' would land outside "
			               "%s: the archive is refused",
			               path ? path : "(none)", name);
		const char *hl = archive_entry_hardlink(e);
		if (hl && !entry_inside(hl, name))
			return set_err(err,
			               "extract: hard link '%s' -> '%s' points "
			               "outside %s: the archive is refused",
			               path, hl, name);
		mode_t type = archive_entry_filetype(e);
		if (!hl && type != AE_IFREG && type != AE_IFDIR)
			continue; /* links and specials stay behind */
		archive_entry_set_uid(e, getuid());
		archive_entry_set_gid(e, getgid());
		archive_entry_set_perm(e, (archive_entry_perm(e) & 0777) |
		                              0600 |
		                              (type == AE_IFDIR ? 0700 : 0));
		if (archive_write_header(out, e) < ARCHIVE_WARN)
			return set_err(err, "extract: %s: %s", path,
			               archive_error_string(out));
		if (archive_entry_size(e) > 0 && copy_data(in, out, p, err) < 0)
			return -1;
		if (archive_write_finish_entry(out) != ARCHIVE_OK)
			return set_err(err, "extract: %s: %s", path,
			               archive_error_string(out));
	}
	if (r != ARCHIVE_EOF)
		return set_err(err, "extract: %s", archive_error_string(in));
	if (!count)
		return set_err(err, "extract: the archive is empty");
	return 0;
}

static void rm_tree(const char *path)
{
	rm_rf(path);
}

/* Read a tar from in_fd whose entries all lie under name, into a new
 * directory beside dest, then move name into place as dest. */
int tar_extract(int in_fd, const char *name, const char *dest,
                sbx_tar_progress_fn progress, char **err)
{
	struct extract_progress p = {.fn = progress, .said = now_ms()};
	if (!*name || strchr(name, '/') || !strcmp(name, "..") ||
	    !strcmp(name, "."))
		return set_err(err, "extract: bad name '%s'", name);
	char *d = xstrdup(dest);
	char *parent = xstrdup(dirname(d));
	free(d);
	char *tmp = xasprintf("%s/.assay-extract-XXXXXX", parent);
	int rc = -1;
	struct archive *in = archive_read_new();
	struct archive *out = archive_write_disk_new();
	char cwd[PATH_MAX];
	int have_cwd = getcwd(cwd, sizeof cwd) != NULL;
	if (mkdir_p(parent, err) < 0)
		goto out;
	if (!mkdtemp(tmp)) {
		set_err(err, "extract: %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (chdir(tmp) < 0) {
		set_err(err, "extract: %s: %s", tmp, strerror(errno));
		goto out;
	}
	archive_read_support_format_tar(in);
	archive_read_support_filter_none(in);
	archive_write_disk_set_options(
	    out,
	    ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
	        ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS | ARCHIVE_EXTRACT_TIME);
	if (archive_read_open_fd(in, in_fd, TAR_CHUNK) != ARCHIVE_OK) {
		set_err(err, "extract: %s", archive_error_string(in));
		goto out;
	}
	if (extract_entries(in, out, name, &p, err) < 0 ||
	    archive_write_close(out) != ARCHIVE_OK)
		goto out;
	if (have_cwd && chdir(cwd) < 0) {
		/* paths below are absolute or relative to the old cwd */
	}
	char *from = xasprintf("%s/%s", tmp, name);
	rc = place(from, dest, err);
	free(from);
	if (rc == 0 && progress && p.done > 0)
		progress(p.done, p.done); /* the whole, in place */
out:
	if (have_cwd && chdir(cwd) < 0) {
		/* nothing more to do */
	}
	archive_read_free(in);
	archive_write_free(out);
	rm_tree(tmp);
	free(tmp);
	free(parent);
	return rc;
}

/* ---- repack ---- */

/* Copy a tar stream to path as a compressed tar, without the leading
 * "strip/" of every name (entries elsewhere are dropped), and without
 * the mounted inputs' places (skip: their mount points, which the
 * daemon made in the workspace volume). */
int tar_repack(int in_fd, const char *strip, const char *out_path,
               const struct path_mounts *skip, sbx_tar_progress_fn progress,
               char **err)
{
	double done = 0;
	int64_t said = now_ms();
	char *tmp = xasprintf("%s.tmp.%d", out_path, (int)getpid());
	struct archive *in = archive_read_new();
	struct archive *out = archive_write_new();
	struct archive_entry *e;
	size_t n = strlen(strip);
	int rc = -1, r;
	archive_read_support_format_tar(in);
	archive_read_support_filter_none(in);
	if (archive_write_set_format_pax_restricted(out) != ARCHIVE_OK ||
	    sbx_archive_filter(out, out_path) != ARCHIVE_OK ||
	    archive_write_open_filename(out, tmp) != ARCHIVE_OK) {
		set_err(err, "archive: %s: %s", tmp, archive_error_string(out));
		goto out;
	}
	if (archive_read_open_fd(in, in_fd, TAR_CHUNK) != ARCHIVE_OK) {
		set_err(err, "archive: %s", archive_error_string(in));
		goto out;
	}
	while ((r = tar_next_header(in, &e)) == ARCHIVE_OK) {
		const char *p = archive_entry_pathname(e);
		if (!p || strncmp(p, strip, n) || p[n] != '/' || !p[n + 1] ||
		    !entry_inside(p, strip))
			continue;
		if (path_mount_find(skip, p + n + 1, NULL) >= 0)
			continue;
		char *rel = xstrdup(p + n + 1);
		archive_entry_set_pathname(e, rel);
		free(rel);
		const char *hl = archive_entry_hardlink(e);
		if (hl) {
			if (strncmp(hl, strip, n) || hl[n] != '/' ||
			    path_mount_find(skip, hl + n + 1, NULL) >= 0)
				continue;
			char *h = xstrdup(hl + n + 1);
			archive_entry_set_hardlink(e, h);
			free(h);
		}
		if (archive_write_header(out, e) < ARCHIVE_WARN) {
			set_err(err, "archive: %s", archive_error_string(out));
			goto out;
		}
		const void *buf;
		size_t size;
		la_int64_t off;
		while ((r = archive_read_data_block(in, &buf, &size, &off)) ==
		       ARCHIVE_OK) {
			if (archive_write_data(out, buf, size) < 0)
				break;
			done += (double)size;
			if (progress && now_ms() - said >= 500) {
				said = now_ms();
				progress(done, 0); /* the total is not known */
			}
		}
		if (r != ARCHIVE_EOF) {
			set_err(err, "archive: %s", archive_error_string(in));
			goto out;
		}
	}
	if (r != ARCHIVE_EOF) {
		set_err(err, "archive: %s", archive_error_string(in));
		goto out;
	}
	if (archive_write_close(out) != ARCHIVE_OK) {
		set_err(err, "archive: %s", archive_error_string(out));
		goto out;
	}
	if (rename(tmp, out_path) < 0) {
		set_err(err, "archive: %s: %s", out_path, strerror(errno));
		goto out;
	}
	if (progress && done > 0)
		progress(done, done); /* the whole */
	rc = 0;
out:
	archive_read_free(in);
	archive_write_free(out);
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc;
}
