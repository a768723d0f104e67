/* archive.c: persists a host workspace as a compressed tar (pax
 * restricted, zstd or gzip by its name) with libarchive. Symlinks are
 * stored as symlinks and never followed; fifos, sockets and devices are
 * left out; the archive is written to a temporary file and renamed into
 * place. */
#include "assay/log.h"
#include "assay/util.h"
#include "sandbox/internal.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ARCHIVE_CHUNK 65536

struct tar_ctx {
	struct archive *a;
	sbx_tar_progress_fn progress; /* or NULL */
	double done, total;
	int64_t said_ms;
	struct archive_entry *e;
	dev_t self_dev; /* the archive being written, if inside the tree */
	ino_t self_ino;
	char *chunk;
};

/* The archive writer failed on path: say so through the walk. */
static int tar_fail(struct sbx_walk *w, struct tar_ctx *c, const char *path)
{
	return set_err(w->err, "archive: %s: %s", path,
	               archive_error_string(c->a));
}

/* Copy a regular file's data (at most size bytes) into the entry. */
static int tar_data(struct sbx_walk *w, struct tar_ctx *c, int fd,
                    const char *path, off_t size)
{
	off_t left = size;
	while (left > 0) {
		size_t want =
		    left < ARCHIVE_CHUNK ? (size_t)left : ARCHIVE_CHUNK;
		ssize_t r = read(fd, c->chunk, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break; /* shrank meanwhile: the entry is padded */
		if (archive_write_data(c->a, c->chunk, (size_t)r) < 0)
			return tar_fail(w, c, path);
		left -= r;
		c->done += (double)r;
		if (c->progress && now_ms() - c->said_ms >= 500) {
			c->said_ms = now_ms();
			c->progress(c->done, c->total);
		}
	}
	return 0;
}

/* One tree entry into the archive: directories and links as headers,
 * regular files with their data (read through a fresh O_NOFOLLOW open). */
static int tar_visit(struct sbx_walk *w, int dirfd, const char *name,
                     const char *path, const struct stat *st)
{
	struct tar_ctx *c = w->arg;
	struct stat fst = *st;
	int fd = -1, rc = 0;
	char target[PATH_MAX];
	if (st->st_dev == c->self_dev && st->st_ino == c->self_ino)
		return 0;
	archive_entry_clear(c->e);
	if (S_ISREG(st->st_mode)) {
		fd = openat(dirfd, name,
		            O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
		                O_CLOEXEC);
		if (fd < 0 || fstat(fd, &fst) < 0 || !S_ISREG(fst.st_mode)) {
			log_warn("archive: skipping %s: %s", path,
			         fd < 0 ? strerror(errno) : "changed type");
			goto out;
		}
	} else if (S_ISLNK(st->st_mode)) {
		ssize_t n = readlinkat(dirfd, name, target, sizeof target - 1);
		if (n < 0)
			goto out;
		target[n] = '\0';
	} else if (!S_ISDIR(st->st_mode)) {
		goto out;
	}
	archive_entry_copy_stat(c->e, &fst);
	archive_entry_set_pathname(c->e, path);
	if (S_ISLNK(fst.st_mode))
		archive_entry_set_symlink(c->e, target);
	if (!S_ISREG(fst.st_mode))
		archive_entry_set_size(c->e, 0);
	if (archive_write_header(c->a, c->e) < ARCHIVE_WARN) {
		rc = tar_fail(w, c, path);
		goto out;
	}
	if (fd >= 0)
		rc = tar_data(w, c, fd, path, fst.st_size);
	if (rc == 0 && archive_write_finish_entry(c->a) < ARCHIVE_WARN)
		rc = tar_fail(w, c, path);
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The walk of both passes over the workspace: every entry, the
 * mounted inputs left out (the run did not make them). */
static struct sbx_walk
workspace_walk(int (*visit)(struct sbx_walk *, int, const char *, const char *,
                            const struct stat *),
               void *arg, const struct path_mounts *m, char **err)
{
	return (struct sbx_walk){.visit = visit,
	                         .arg = arg,
	                         .recursive = 1,
	                         .max_depth = 256,
	                         .max_held = 1000000,
	                         .mounts = m,
	                         .skip_mounts = 1,
	                         .err = err};
}

int sbx_archive_filter(struct archive *a, const char *path)
{
	/* the name's, or its temporary's (NAME.tmp.PID) */
	const char *base = strrchr(path, '/');
	if (strstr(base ? base : path, ".tar.zst"))
		return archive_write_add_filter_zstd(a);
	return archive_write_add_filter_gzip(a);
}

/* Sum the regular files' sizes (the archive's data, before
 * compression). */
static int size_visit(struct sbx_walk *w, int dirfd, const char *name,
                      const char *path, const struct stat *st)
{
	(void)dirfd, (void)name, (void)path;
	if (S_ISREG(st->st_mode))
		*(double *)w->arg += (double)st->st_size;
	return 0;
}

/* Refuse before writing a byte when the workspace's files are larger
 * than the free space where the archive goes: a disk filled by the
 * archive would cost the transcript its last lines too. Counted before
 * compression, so it errs on the safe side. */
static int sbx_archive_room(int root_fd, const struct path_mounts *m,
                            const char *path, double *total, char **err)
{
	double bytes = 0;
	struct sbx_walk w = workspace_walk(size_visit, &bytes, m, err);
	if (sbx_walk(&w, root_fd, "") < 0)
		return -1;
	*total = bytes;
	return sbx_room(path, bytes, "the workspace", err);
}

int sbx_host_export_tar(int root_fd, const struct path_mounts *m,
                        const char *path, sbx_tar_progress_fn progress,
                        char **err)
{
	struct tar_ctx c = {.progress = progress, .said_ms = now_ms()};
	if (sbx_archive_room(root_fd, m, path, &c.total, err) < 0)
		return SBX_FAILED;
	char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	int rc = -1, opened = 0;
	c.a = archive_write_new();
	c.e = archive_entry_new();
	c.chunk = xmalloc(ARCHIVE_CHUNK);
	if (sbx_archive_filter(c.a, path) != ARCHIVE_OK ||
	    archive_write_set_format_pax_restricted(c.a) != ARCHIVE_OK ||
	    archive_write_open_filename(c.a, tmp) != ARCHIVE_OK) {
		set_err(err, "archive %s: %s", tmp, archive_error_string(c.a));
		goto out;
	}
	opened = 1;
	struct stat self;
	if (stat(tmp, &self) == 0) {
		c.self_dev = self.st_dev;
		c.self_ino = self.st_ino;
	}
	struct sbx_walk w = workspace_walk(tar_visit, &c, m, err);
	if (sbx_walk(&w, root_fd, "") < 0)
		goto out;
	if (c.progress && c.done > 0)
		c.progress(c.done, c.total); /* the whole */
	if (archive_write_close(c.a) != ARCHIVE_OK) {
		set_err(err, "archive %s: %s", tmp, archive_error_string(c.a));
		goto out;
	}
	if (rename(tmp, path) < 0) {
		set_err(err, "archive %s: %s", path, strerror(errno));
		goto out;
	}
	rc = SBX_OK;
	if (w.truncated) {
		set_err(err,
		        "archive %s: the workspace is nested or wide beyond "
		        "the walk's limits; some entries are missing",
		        path);
		rc = SBX_TRUNCATED;
	}
out:
	archive_write_free(c.a);
	archive_entry_free(c.e);
	if (rc == SBX_FAILED && opened)
		unlink(tmp);
	free(c.chunk);
	free(tmp);
	return rc;
}
