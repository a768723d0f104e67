/* hostfs.c: the file tools' view of a workspace that lives on the host
 * (read, write, list, fetch). Sandboxed code controls everything in
 * the workspace, including symlinks, so every open goes through
 * openat2 RESOLVE_BENEATH or a single O_NOFOLLOW component under an
 * already-confined directory fd: no path a tool is given can reach a
 * host file outside. Opens use O_NONBLOCK so a planted fifo cannot
 * hang the loop. */
#include "assay/path.h"
#include "assay/util.h"
#include "sandbox/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define HOSTFS_CHUNK 65536

/* Names in strcmp order (qsort). */
static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read the names of one directory (at most what the walk may hold). */
static char **read_names(struct sbx_walk *w, DIR *d, size_t *count)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (w->max_held && w->held >= w->max_held) {
			w->truncated = 1;
			break;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			names = xrealloc(names, cap * sizeof *names);
		}
		names[n++] = xstrdup(de->d_name);
		w->held++;
	}
	if (n > 1)
		qsort(names, n, sizeof *names, cmp_names);
	*count = n;
	return names;
}

/* The entry path is a mount point (w->mounts): the mount, with st
 * the stat of its source; NULL when it is not one (or the source is
 * gone: then nothing is visited). *gone says the latter. */
static const struct path_mount *
walk_mount_at(struct sbx_walk *w, const char *path, struct stat *st, int *gone)
{
	const char *rest = NULL;
	int i = path_mount_find(w->mounts, path, &rest);
	*gone = 0;
	if (i < 0 || *rest)
		return NULL;
	const struct path_mount *m = &w->mounts->v[i];
	if (w->skip_mounts || stat(m->src, st) < 0 ||
	    (m->dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))) {
		*gone = 1;
		return NULL;
	}
	return m;
}

static int walk_level(struct sbx_walk *w, int fd, const char *prefix, int depth,
                      const struct path_mount *in, size_t in_len);

/* Visit one entry of a level (path is prefix/name), then descend into
 * it when it is a directory the visitor wants entered: the mount's
 * source when the entry is a mount point. Returns <0, 0 or 2. */
static int walk_entry(struct sbx_walk *w, int dfd, const char *name,
                      const char *path, struct stat *st, int depth,
                      const struct path_mount *in, size_t in_len)
{
	if (in && path_mount_hidden(in, path + in_len))
		return 0;
	int gone = 0;
	const struct path_mount *m =
	    in || !w->mounts ? NULL : walk_mount_at(w, path, st, &gone);
	if (gone)
		return 0;
	/* a mount is visited by its source's path (dirfd AT_FDCWD) */
	int v = m ? w->visit(w, AT_FDCWD, m->src, path, st)
	          : w->visit(w, dfd, name, path, st);
	if (v < 0 || v == 2)
		return v;
	if (v != 0 || !S_ISDIR(st->st_mode) || !w->recursive)
		return 0;
	if (depth + 1 >= w->max_depth) {
		w->truncated = 1;
		return 0;
	}
	int cfd = m ? open(m->src, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
	            : openat(dfd, name,
	                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd < 0)
		return 0;
	if (m)
		return walk_level(w, cfd, path, depth + 1, m, strlen(path) + 1);
	return walk_level(w, cfd, path, depth + 1, in, in_len);
}

/* One level of the walk; takes ownership of fd. in: the mount whose
 * source is being walked (in_len: where a path's part below it
 * starts), or NULL. Returns <0, 0 or 2. */
static int walk_level(struct sbx_walk *w, int fd, const char *prefix, int depth,
                      const struct path_mount *in, size_t in_len)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return set_err(w->err, "cannot read %s: %s",
		               *prefix ? prefix : ".", strerror(errno));
	}
	size_t n;
	char **names = read_names(w, d, &n);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (rc == 0 && fstatat(dirfd(d), names[i], &st,
		                       AT_SYMLINK_NOFOLLOW) == 0) {
			char *path = *prefix
			                 ? xasprintf("%s/%s", prefix, names[i])
			                 : xstrdup(names[i]);
			rc = walk_entry(w, dirfd(d), names[i], path, &st, depth,
			                in, in_len);
			free(path);
		}
		free(names[i]);
	}
	w->held -= n;
	free(names);
	closedir(d);
	return rc;
}

int sbx_walk(struct sbx_walk *w, int dirfd, const char *prefix)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return set_err(w->err, "cannot read %s: %s",
		               *prefix ? prefix : ".", strerror(errno));
	if (w->max_depth <= 0)
		w->max_depth = 64;
	/* a walk that starts in a mount's source (dirfd is it) */
	const char *rest = NULL;
	int mi = *prefix ? path_mount_find(w->mounts, prefix, &rest) : -1;
	const struct path_mount *in = mi >= 0 ? &w->mounts->v[mi] : NULL;
	size_t in_len = in ? strlen(in->rel) + 1 : 0;
	return walk_level(w, fd, prefix, 0, in, in_len) < 0 ? -1 : 0;
}

/* Open rel for reading if it is a regular file beneath the root. */
static int hostfs_open_regular(int root_fd, const struct path_mounts *m,
                               const char *rel, struct stat *st, char **err)
{
	int fd = path_open_mapped(root_fd, m, rel,
	                          O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, err);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0) {
		set_err(err, "%s: %s", rel, strerror(errno));
	} else if (S_ISDIR(st->st_mode)) {
		set_err(err, "%s is a directory", rel);
	} else if (!S_ISREG(st->st_mode)) {
		set_err(err, "%s is %s, not a regular file", rel,
		        file_type_name(st->st_mode));
	} else {
		return fd;
	}
	close(fd);
	return -1;
}

int sbx_host_read(int root_fd, const struct path_mounts *m, const char *rel,
                  size_t max, struct buf *out, char **err)
{
	buf_init(out, 0);
	struct stat st;
	int fd = hostfs_open_regular(root_fd, m, rel, &st, err);
	if (fd < 0)
		return -1;
	int rc = 0;
	char *chunk = xmalloc(HOSTFS_CHUNK);
	while (out->len < max) {
		size_t room = max - out->len;
		ssize_t r =
		    read(fd, chunk, room < HOSTFS_CHUNK ? room : HOSTFS_CHUNK);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = set_err(err, "%s: %s", rel, strerror(errno));
			break;
		}
		if (r == 0)
			break;
		buf_append(out, chunk, (size_t)r);
	}
	free(chunk);
	if (rc == 0 && out->len == max) {
		char c;
		if ((size_t)st.st_size > max || read(fd, &c, 1) == 1) {
			set_err(err,
			        "%s is %lld bytes; only the first %zu were "
			        "read",
			        rel, (long long)st.st_size, max);
			rc = SBX_TRUNCATED;
		}
	}
	close(fd);
	if (rc < 0)
		buf_free(out);
	return rc;
}

/* write(2) until all of data is written (or an error). */
static int write_all(int fd, const void *data, size_t n)
{
	const char *p = data;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int sbx_host_write(int root_fd, const struct path_mounts *m, const char *rel,
                   const void *data, size_t n, char **err)
{
	static unsigned seq;
	if (!strcmp(rel, "."))
		return set_err(err, "the workspace itself is a directory: "
		                    "give a file path");
	int mi = path_mount_find(m, rel, NULL);
	if (mi >= 0) {
		free(*err);
		*err = path_mount_readonly(&m->v[mi], rel);
		return -1;
	}
	char *dir = xstrdup(rel);
	char *slash = strrchr(dir, '/');
	const char *base = rel + (slash ? slash - dir + 1 : 0);
	char *tmp = NULL;
	int dfd = -1, fd = -1, rc = -1;
	if (slash) {
		*slash = '\0';
		if (path_mkdirs_beneath(root_fd, dir, err) < 0)
			goto out;
		dfd = path_open_beneath(root_fd, dir, O_RDONLY | O_DIRECTORY, 0,
		                        err);
	} else {
		dfd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			set_err(err, "workspace: %s", strerror(errno));
	}
	if (dfd < 0)
		goto out;
	mode_t mode = 0644;
	struct stat st;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(st.st_mode)) {
			set_err(err, "%s is a directory", rel);
			goto out;
		}
		if (S_ISREG(st.st_mode))
			mode = st.st_mode & 0777;
	}
	tmp = xasprintf(".assay-tmp-%d-%u", (int)getpid(), ++seq);
	fd = openat(dfd, tmp,
	            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		set_err(err, "%s: %s", rel, strerror(errno));
		goto out;
	}
	if (write_all(fd, data, n) < 0 || fchmod(fd, mode) < 0) {
		set_err(err, "%s: %s", rel, strerror(errno));
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		set_err(err, "%s: %s", rel, strerror(errno));
		goto out;
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, base) < 0) {
		set_err(err, "%s: %s", rel, strerror(errno));
		goto out;
	}
	free(tmp);
	tmp = NULL;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (tmp && dfd >= 0)
		unlinkat(dfd, tmp, 0);
	if (dfd >= 0)
		close(dfd);
	free(tmp);
	free(dir);
	return rc;
}

struct list_ctx {
	cJSON *arr;
	size_t n, max;
	void (*fn)(void *arg, cJSON *entry);
	void *arg;
};

/* The list op's name of a file type. */
static const char *hostfs_type_name(mode_t m)
{
	if (S_ISREG(m))
		return "file";
	if (S_ISDIR(m))
		return "dir";
	if (S_ISLNK(m))
		return "link";
	return "other";
}

double sbx_mtime(const struct stat *st)
{
	return (double)st->st_mtim.tv_sec +
	       (double)(st->st_mtim.tv_nsec / 1000000) / 1000.0;
}

/* When the entry's inode last changed (its data, mode, owner, links),
 * in seconds to the millisecond as sbx_mtime: a chmod shows here only. */
static double hostfs_ctime(const struct stat *st)
{
	return (double)st->st_ctim.tv_sec +
	       (double)(st->st_ctim.tv_nsec / 1000000) / 1000.0;
}

cJSON *sbx_host_entry(const char *path, const struct stat *st)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "path", path);
	cJSON_AddStringToObject(e, "type", hostfs_type_name(st->st_mode));
	cJSON_AddNumberToObject(e, "size",
	                        S_ISDIR(st->st_mode) ? 0 : (double)st->st_size);
	cJSON_AddNumberToObject(e, "mtime", sbx_mtime(st));
	cJSON_AddNumberToObject(e, "ctime", hostfs_ctime(st));
	return e;
}

/* Add one entry to the listing; stop at the maximum. */
static int list_visit(struct sbx_walk *w, int dirfd, const char *name,
                      const char *path, const struct stat *st)
{
	struct list_ctx *c = w->arg;
	(void)dirfd, (void)name;
	if (c->n >= c->max) {
		w->truncated = 1;
		return 2;
	}
	cJSON *e = sbx_host_entry(path, st);
	if (c->fn)
		c->fn(c->arg, e);
	else
		cJSON_AddItemToArray(c->arr, e);
	c->n++;
	return 0;
}

cJSON *sbx_host_list(int root_fd, const struct path_mounts *m, const char *rel,
                     int recursive, size_t max, int *truncated,
                     void (*fn)(void *arg, cJSON *entry), void *arg, char **err)
{
	*truncated = 0;
	int fd =
	    path_open_mapped(root_fd, m, rel, O_RDONLY | O_DIRECTORY, 0, err);
	if (fd < 0)
		return NULL;
	struct list_ctx c = {cJSON_CreateArray(), 0, max, fn, arg};
	struct sbx_walk w = {.visit = list_visit,
	                     .arg = &c,
	                     .recursive = recursive,
	                     .max_depth = 64,
	                     .max_held = max + 4096,
	                     .mounts = m,
	                     .err = err};
	int rc = sbx_walk(&w, fd, strcmp(rel, ".") ? rel : "");
	close(fd);
	if (rc < 0) {
		cJSON_Delete(c.arr);
		return NULL;
	}
	*truncated = w.truncated;
	return c.arr;
}

/* Copy the open file in to a new host file dest via a temporary file
 * in the same directory. */
static int copy_out(int in, const struct stat *st, const char *dest, char **err)
{
	char *dir = xstrdup(dest);
	char *slash = strrchr(dir, '/');
	int rc = 0;
	if (slash && slash != dir) {
		*slash = '\0';
		rc = mkdir_p(dir, err);
	}
	free(dir);
	if (rc < 0)
		return -1;
	char *tmp = xasprintf("%s.tmp.%d", dest, (int)getpid());
	unlink(tmp); /* left by a crash */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	              0600);
	if (fd < 0) {
		rc = set_err(err, "%s: %s", tmp, strerror(errno));
	} else if (sbx_copy_data(in, fd) < 0 ||
	           fchmod(fd, (st->st_mode & 0777) | S_IRUSR) < 0) {
		rc = set_err(err, "%s: %s", dest, strerror(errno));
	}
	if (fd >= 0 && close(fd) < 0 && rc == 0)
		rc = set_err(err, "%s: %s", dest, strerror(errno));
	if (rc == 0 && rename(tmp, dest) < 0)
		rc = set_err(err, "%s: %s", dest, strerror(errno));
	if (rc < 0 && fd >= 0)
		unlink(tmp);
	free(tmp);
	return rc;
}

struct fetch_ctx {
	int dest_fd;
	size_t strip; /* walk paths start with the fetched path and a '/' */
};

/* Mirror one entry of a fetched directory on the host: directories
 * and regular files only. */
static int fetch_visit(struct sbx_walk *w, int dirfd, const char *name,
                       const char *path, const struct stat *st)
{
	struct fetch_ctx *c = w->arg;
	const char *sub = path + c->strip;
	if (S_ISDIR(st->st_mode))
		return path_mkdirs_beneath(c->dest_fd, sub, w->err) < 0 ? -1
		                                                        : 0;
	if (!S_ISREG(st->st_mode))
		return 0; /* links and specials stay behind */
	int in =
	    openat(dirfd, name,
	           O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (in < 0)
		return set_err(w->err, "%s: %s", path, strerror(errno));
	struct stat ist;
	int rc = 0;
	if (fstat(in, &ist) < 0 || !S_ISREG(ist.st_mode)) {
		close(in);
		return 0;
	}
	int out = path_open_beneath(c->dest_fd, sub,
	                            O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW,
	                            (ist.st_mode & 0777) | S_IRUSR, w->err);
	if (out < 0)
		rc = -1;
	else if (sbx_copy_data(in, out) < 0)
		rc = set_err(w->err, "%s: %s", path, strerror(errno));
	if (out >= 0)
		close(out);
	close(in);
	return rc;
}

int sbx_room(const char *path, double bytes, const char *what, char **err)
{
	/* the nearest directory that exists: path and its parents may not */
	char *dir = xstrdup(path), *slash;
	const char *where = ".";
	struct statvfs vfs;
	int known = 0;
	while (!known && (slash = strrchr(dir, '/'))) {
		*slash = '\0';
		where = *dir ? dir : "/";
		known = statvfs(where, &vfs) == 0;
	}
	if (!known) {
		where = ".";
		known = statvfs(where, &vfs) == 0;
	}
	double room = known ? (double)vfs.f_bavail * (double)vfs.f_frsize : 0;
	int rc = 0;
	if (known && bytes > room) {
		char b[16], r[16];
		bytes_human(bytes, b);
		bytes_human(room, r);
		rc = set_err(err,
		             "%s: %s holds %s and %s has %s free: nothing was "
		             "written; free space there (what the run made is "
		             "kept in the sandbox's workspace)",
		             path, what, b, where, r);
	}
	free(dir);
	return rc;
}

int sbx_host_fetch(int root_fd, const struct path_mounts *m, const char *rel,
                   const char *dest, char **err)
{
	int fd = path_open_mapped(root_fd, m, rel,
	                          O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, err);
	if (fd < 0)
		return -1;
	struct stat st;
	int rc;
	if (fstat(fd, &st) < 0) {
		rc = set_err(err, "%s: %s", rel, strerror(errno));
	} else if (S_ISREG(st.st_mode)) {
		rc = sbx_room(dest, (double)st.st_size, rel, err);
		if (rc == 0)
			rc = copy_out(fd, &st, dest, err);
	} else if (S_ISDIR(st.st_mode)) {
		int dfd = -1;
		rc = mkdir_p(dest, err);
		if (rc == 0) {
			dfd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (dfd < 0)
				rc = set_err(err, "%s: %s", dest,
				             strerror(errno));
		}
		if (rc == 0) {
			struct fetch_ctx c = {
			    dfd, strcmp(rel, ".") ? strlen(rel) + 1 : 0};
			struct sbx_walk w = {.visit = fetch_visit,
			                     .arg = &c,
			                     .recursive = 1,
			                     .max_depth = 64,
			                     .max_held = 1000000,
			                     .mounts = m,
			                     .err = err};
			rc = sbx_walk(&w, fd, strcmp(rel, ".") ? rel : "");
		}
		if (dfd >= 0)
			close(dfd);
	} else {
		rc = set_err(err, "%s is not a regular file or directory", rel);
	}
	close(fd);
	return rc;
}
