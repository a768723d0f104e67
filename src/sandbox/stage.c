/* stage.c: copies the configured inputs (--input SRC[:DEST], manifest
 * inputs) into a host workspace directory. Sources are only ever read;
 * every destination is opened beneath the workspace (openat2
 * RESOLVE_BENEATH, then single components with O_NOFOLLOW).
 *
 * Symlinks: SRC itself is followed (the user named it). Inside a
 * directory, a link to a regular file is copied as a regular file with
 * the target's content, so the workspace is self-contained (the link
 * would dangle inside the sandbox). Links to directories, dangling
 * links, fifos, sockets and devices are skipped and logged: following
 * linked directories invites cycles and trees nobody meant to hand
 * over. The workspace is skipped when it lies inside an input (as with
 * `--input .` and the default run directory under ./.assay). */
#include "assay/sandbox.h"
#include "assay/config.h"
#include "assay/log.h"
#include "assay/path.h"
#include "assay/util.h"
#include "sandbox/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STAGE_MAX_DEPTH 128

struct stage {
	const char *input; /* the SRC as the user gave it, for messages */
	dev_t ws_dev, dest_dev, out_dev;
	ino_t ws_ino, dest_ino, out_ino;
	int out_ok; /* the out dir exists: out_dev/out_ino are set */
	char **err;
};

/* Copy in to out by read and write (copy_file_range cannot). */
static int copy_rw(int in, int out)
{
	char buf[65536];
	for (;;) {
		ssize_t r = read(in, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -1 : 0;
		for (ssize_t off = 0; off < r;) {
			ssize_t w = write(out, buf + off, (size_t)(r - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -1;
			off += w;
		}
	}
}

int sbx_copy_data(int in, int out)
{
	/* copy_file_range shares extents where the filesystem can; fall
	 * back to read/write where it cannot (other fs, old kernel). */
	for (int first = 1;; first = 0) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
		if (n > 0)
			continue;
		if (n == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (first &&
		    (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
		     errno == EOPNOTSUPP || errno == EBADF))
			return copy_rw(in, out);
		return -1;
	}
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Copy the open regular file in to out (already open, not truncated),
 * keeping permissions and times. A destination that is the source
 * itself (a hard link, or an input already inside the workspace) is
 * left alone: truncating it would destroy the original. */
static int copy_file_fds(struct stage *st, int in, int out, const char *shown)
{
	struct stat si, so;
	if (fstat(in, &si) < 0 || fstat(out, &so) < 0)
		return set_err(st->err, "input %s: cannot stat %s: %s",
		               st->input, shown, strerror(errno));
	if (!S_ISREG(si.st_mode))
		return set_err(st->err, "input %s: %s is not a regular file",
		               st->input, shown);
	if (same_file(&si, &so))
		return 0;
	if (!S_ISREG(so.st_mode))
		return set_err(st->err,
		               "input %s: the destination of %s exists and is "
		               "not a regular file",
		               st->input, shown);
	if (ftruncate(out, 0) < 0 || sbx_copy_data(in, out) < 0)
		return set_err(st->err, "input %s: cannot copy %s: %s",
		               st->input, shown, strerror(errno));
	fchmod(out, (si.st_mode & 0777) | S_IRUSR | S_IWUSR);
	struct timespec ts[2] = {si.st_atim, si.st_mtim};
	futimens(out, ts);
	return 0;
}

/* Open a source entry for reading, never through a link. */
static int open_source(struct stage *st, int dirfd, const char *name,
                       const char *shown)
{
	/* O_NONBLOCK: a fifo swapped in after the stat must not hang us. */
	int fd =
	    openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		set_err(st->err, "input %s: cannot read %s: %s", st->input,
		        shown, strerror(errno));
	return fd;
}

/* Copy one regular file of an input directory. */
static int copy_entry_file(struct stage *st, int sfd, int dfd, const char *name,
                           const char *shown)
{
	int in = open_source(st, sfd, name, shown);
	if (in < 0)
		return -1;
	int out = openat(
	    dfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
	    0600);
	int rc;
	if (out < 0)
		rc = set_err(st->err, "input %s: cannot create %s: %s",
		             st->input, name, strerror(errno));
	else
		rc = copy_file_fds(st, in, out, shown);
	close(in);
	if (out >= 0)
		close(out);
	return rc;
}

static int copy_tree(struct stage *st, int sfd, int dfd, const char *shown,
                     int depth);

/* Recreate a source directory under dfd and copy its contents. */
static int copy_entry_dir(struct stage *st, int sfd, int dfd, const char *name,
                          const struct stat *sst, const char *shown, int depth)
{
	if ((sst->st_dev == st->ws_dev && sst->st_ino == st->ws_ino) ||
	    (sst->st_dev == st->dest_dev && sst->st_ino == st->dest_ino)) {
		log_info("input %s: skipping %s (the workspace itself)",
		         st->input, shown);
		return 0;
	}
	/* assay's own state (run dirs, project config) and the outputs
	 * of earlier runs would otherwise grow into every new run */
	if (!strcmp(name, ".assay") ||
	    (st->out_ok && sst->st_dev == st->out_dev &&
	     sst->st_ino == st->out_ino)) {
		log_info("input %s: skipping %s (assay's own files)", st->input,
		         shown);
		return 0;
	}
	if (depth >= STAGE_MAX_DEPTH)
		return set_err(st->err,
		               "input %s: %s is nested more than %d "
		               "directories deep",
		               st->input, shown, STAGE_MAX_DEPTH);
	if (mkdirat(dfd, name, 0755) < 0 && errno != EEXIST)
		return set_err(st->err, "input %s: cannot create %s: %s",
		               st->input, shown, strerror(errno));
	int nd =
	    openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (nd < 0)
		return set_err(st->err, "input %s: cannot create %s: %s",
		               st->input, shown, strerror(errno));
	int ns =
	    openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ns < 0) {
		close(nd);
		return set_err(st->err, "input %s: cannot read %s: %s",
		               st->input, shown, strerror(errno));
	}
	int rc = copy_tree(st, ns, nd, shown, depth + 1); /* closes ns */
	close(nd);
	return rc;
}

/* One directory entry: regular files and directories are copied,
 * links to regular files become files, everything else is skipped. */
static int stage_copy_entry(struct stage *st, int sfd, int dfd,
                            const char *name, const char *shown, int depth)
{
	struct stat sst;
	if (fstatat(sfd, name, &sst, AT_SYMLINK_NOFOLLOW) < 0)
		return set_err(st->err, "input %s: cannot stat %s: %s",
		               st->input, shown, strerror(errno));
	if (S_ISREG(sst.st_mode))
		return copy_entry_file(st, sfd, dfd, name, shown);
	if (S_ISDIR(sst.st_mode))
		return copy_entry_dir(st, sfd, dfd, name, &sst, shown, depth);
	if (S_ISLNK(sst.st_mode)) {
		struct stat tst;
		if (fstatat(sfd, name, &tst, 0) == 0 && S_ISREG(tst.st_mode))
			return copy_entry_file(st, sfd, dfd, name, shown);
		log_warn("input %s: skipping symlink %s (not a link to a "
		         "regular file)",
		         st->input, shown);
		return 0;
	}
	log_warn("input %s: skipping %s (not a regular file or directory)",
	         st->input, shown);
	return 0;
}

/* Copy the contents of directory sfd into dfd. Takes ownership of sfd. */
static int copy_tree(struct stage *st, int sfd, int dfd, const char *shown,
                     int depth)
{
	DIR *d = fdopendir(sfd);
	if (!d) {
		close(sfd);
		return set_err(st->err, "input %s: cannot read %s: %s",
		               st->input, shown, strerror(errno));
	}
	int rc = 0;
	struct dirent *de;
	errno = 0;
	while (rc == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *child = xasprintf("%s/%s", shown, de->d_name);
		rc = stage_copy_entry(st, dirfd(d), dfd, de->d_name, child,
		                      depth);
		free(child);
		errno = 0;
	}
	if (rc == 0 && errno)
		rc = set_err(st->err, "input %s: cannot read %s: %s", st->input,
		             shown, strerror(errno));
	closedir(d);
	return rc;
}

/* Why an input cannot be read, with what to do. */
static int source_error(const char *src, char **err)
{
	if (errno == ENOENT || errno == ENOTDIR)
		return set_err(err, "input %s: no such file: check --input",
		               src);
	if (errno == EACCES)
		return set_err(err,
		               "input %s: permission denied: make it "
		               "readable or pick another --input",
		               src);
	return set_err(err, "input %s: %s", src, strerror(errno));
}

/* A directory input: its contents go into the directory rel. */
static int stage_dir(struct stage *st, int ws_fd, const char *src,
                     const char *rel)
{
	int sfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0)
		return source_error(src, st->err);
	if (strcmp(rel, ".") && path_mkdirs_beneath(ws_fd, rel, st->err) < 0) {
		close(sfd);
		return -1;
	}
	int dfd =
	    path_open_beneath(ws_fd, rel, O_RDONLY | O_DIRECTORY, 0, st->err);
	if (dfd < 0) {
		close(sfd);
		return -1;
	}
	struct stat dst;
	if (fstat(dfd, &dst) == 0) {
		st->dest_dev = dst.st_dev;
		st->dest_ino = dst.st_ino;
	}
	int rc = copy_tree(st, sfd, dfd, src, 0);
	close(dfd);
	return rc;
}

/* A file input: copied to rel, parents created. */
static int stage_file(struct stage *st, int ws_fd, const char *src,
                      const char *rel)
{
	if (!strcmp(rel, "."))
		return set_err(st->err,
		               "input %s: a file cannot replace the "
		               "workspace: give a destination (SRC:DEST)",
		               src);
	int in = open_source(st, AT_FDCWD, src, src);
	if (in < 0)
		return -1;
	int out = path_open_beneath(
	    ws_fd, rel, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0600,
	    st->err);
	int rc = out < 0 ? -1 : copy_file_fds(st, in, out, src);
	close(in);
	if (out >= 0)
		close(out);
	return rc;
}

/* One --input: resolve the destination, then copy. */
static int stage_one(int ws_fd, const struct stat *ws,
                     const struct config_input *in, const char *out_dir,
                     char **err)
{
	char *dest = NULL, *rel = NULL, *perr = NULL;
	int rc = -1;
	const char *src = in->src;
	if (!src || !*src)
		return set_err(err, "input: empty source path");
	if (in->dest && *in->dest) {
		dest = xstrdup(in->dest);
	} else {
		const char *e = src + strlen(src);
		while (e > src + 1 && e[-1] == '/')
			e--;
		const char *b = e;
		while (b > src && b[-1] != '/')
			b--;
		dest = xasprintf("input/%.*s", (int)(e - b), b);
	}
	if (path_normalize(dest, &rel, &perr) < 0) {
		set_err(err, "input %s: destination %s: %s", src, dest, perr);
		goto out;
	}
	struct stat sst;
	if (stat(src, &sst) < 0) {
		source_error(src, err);
		goto out;
	}
	struct stage st = {.input = src,
	                   .ws_dev = ws->st_dev,
	                   .ws_ino = ws->st_ino,
	                   .err = err};
	struct stat ost;
	if (out_dir && stat(out_dir, &ost) == 0) {
		st.out_ok = 1;
		st.out_dev = ost.st_dev;
		st.out_ino = ost.st_ino;
	}
	if (S_ISDIR(sst.st_mode))
		rc = stage_dir(&st, ws_fd, src, rel);
	else if (S_ISREG(sst.st_mode))
		rc = stage_file(&st, ws_fd, src, rel);
	else
		rc = set_err(err, "input %s: not a regular file or directory",
		             src);
	if (rc == 0)
		log_info("staged input %s as %s", src, rel);
out:
	free(dest);
	free(rel);
	free(perr);
	return rc;
}

int sbx_stage_inputs(const struct config_input *in, size_t n,
                     const char *out_dir, const char *workspace, char **err)
{
	int ws_fd = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ws_fd < 0)
		return set_err(err, "workspace %s: %s", workspace,
		               strerror(errno));
	struct stat ws;
	int rc = fstat(ws_fd, &ws) < 0 ? set_err(err, "workspace %s: %s",
	                                         workspace, strerror(errno))
	                               : 0;
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = stage_one(ws_fd, &ws, &in[i], out_dir, err);
	close(ws_fd);
	return rc;
}
