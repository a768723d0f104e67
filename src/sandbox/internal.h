/* internal.h: helpers shared inside the sandbox layer (private to
 * src/sandbox/): copying, a confined directory walk, and the host-side
 * file operations on a workspace directory that any backend with a
 * host workspace (local, a local Docker daemon) can use. */
#ifndef ASSAY_SANDBOX_INTERNAL_H
#define ASSAY_SANDBOX_INTERNAL_H

#include <stddef.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "assay/buf.h"

/* Copy everything from in (at its offset) to out. -1 with errno set. */
int sbx_copy_data(int in, int out);

/* A walk of a directory tree that never follows a symlink: parents
 * before children, siblings in strcmp order. visit returns <0 to abort
 * (with *err set), 0 to go on (descending into a directory), 1 to skip
 * a directory's contents, 2 to stop the whole walk. */
struct sbx_walk {
	int (*visit)(struct sbx_walk *w, int dirfd, const char *name,
	             const char *path, const struct stat *st);
	void *arg;
	int recursive;
	int max_depth;   /* deeper directories are not entered */
	size_t max_held; /* names held in memory at once, all levels */
	size_t held;
	int truncated; /* a limit cut the walk short */
	char **err;
};

/* Walk the directory dirfd (not taken); paths are prefix/name, or name
 * when prefix is "". 0 or -1. */
int sbx_walk(struct sbx_walk *w, int dirfd, const char *prefix);

/* File operations on the host workspace opened as root_fd; rel is
 * normalised and every open is confined beneath root_fd. */

/* Read at most max bytes into *out (initialised here). 0 when the
 * whole file was read, 1 when it was cut at max (*err says so), -1. */
int sbx_host_read(int root_fd, const char *rel, size_t max, struct buf *out,
                  char **err);
/* Replace rel atomically (temporary file + rename in the same
 * directory), creating parent directories. */
int sbx_host_write(int root_fd, const char *rel, const void *data, size_t n,
                   char **err);
/* Entries under rel as {"path","type","size","mtime"} (path relative
 * to the root; mtime in seconds with a fraction), pre-order with
 * siblings sorted, at most max of them (*truncated set if cut). */
cJSON *sbx_host_list(int root_fd, const char *rel, int recursive, size_t max,
                     int *truncated, char **err);
/* Copy rel (a file, or a directory of files) to the host path dest. */
int sbx_host_fetch(int root_fd, const char *rel, const char *dest, char **err);
/* Write the tree under root_fd to path as a gzipped pax tar archive
 * (symlinks stored as links), through a temporary file. */
int sbx_host_export_tar(int root_fd, const char *path, char **err);

/* Build the directory the local sandbox binds at /etc (etc.c). */
int sbx_etc_snapshot(const char *dir, int network, char **err);
/* Where the assay-archive helper is: $ASSAY_ARCHIVE_BIN, else beside
 * the running binary. NULL if /proc/self/exe cannot be read. */
char *sbx_archive_helper(void);
/* Run `assay-archive create path dir` (beside the assay binary, or
 * $ASSAY_ARCHIVE_BIN) and wait for it. */
int sbx_spawn_archive(const char *dir, const char *path, char **err);
/* A short hash of what a snapshot depends on (see etc.c). */
char *sbx_etc_key(int network);
/* /etc directories bound from the host over their mount points in the
 * snapshot (the second list only with network). NULL-terminated. */
extern const char *const sbx_etc_binds[];
extern const char *const sbx_etc_net_binds[];

#endif
