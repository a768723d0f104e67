/* path.h: confinement of paths to the workspace, and the user's
 * directories (XDG). A tool's path is
 * workspace-relative; "/workspace/x" is accepted as "x". Nothing may
 * resolve outside the root: no "..", no absolute path elsewhere, no
 * symlink leading out (checked by the kernel with openat2
 * RESOLVE_BENEATH, so there is no check-then-use race). */
#ifndef ASSAY_PATH_H
#define ASSAY_PATH_H

#include <stddef.h>
#include <sys/types.h>
#include <cjson/cJSON.h>
#include "assay/strv.h"

/* Normalise a tool path to a clean relative path ("." for the root).
 * -1 + *err for absolute paths outside /workspace, "..", NUL bytes,
 * empty components beyond slashes, or paths longer than PATH_MAX. */
int path_normalize(const char *in, char **out, char **err);

/* Open rel beneath the directory fd root_fd with flags/mode (as
 * openat), refusing every escape including through symlinks.
 * Returns an fd or -1 + *err. With O_CREAT, missing parent
 * directories are created first (also confined). */
int path_open_beneath(int root_fd, const char *rel, int flags, int mode,
                      char **err);

/* mkdir -p of rel beneath root_fd, confined. */
int path_mkdirs_beneath(int root_fd, const char *rel, char **err);

/* Whether host path (which need not exist: its longest existing prefix
 * is resolved) lies inside root, an absolute path without links (a
 * realpath). */
int path_lies_inside(const char *path, const char *root);
/* path with links resolved: the realpath of its longest existing
 * prefix, then the rest as written (NULL when nothing resolves). */
char *path_resolve(const char *path);

/* ---- mounted inputs (mounts.c) ----
 * An input that is not copied is mounted read-only at rel inside the
 * workspace; on the host the workspace holds only an empty
 * placeholder there, so whatever opens workspace files on the host
 * (the file tools, listings, the archive, the workbench's pager and
 * previews) maps rel to the source through this table. */
struct path_mount {
	char *rel;        /* workspace-relative, normalised, never "." */
	char *src;        /* the host path, links resolved */
	int dir;          /* a directory (else a regular file) */
	struct strv hide; /* paths below a directory mount the sandbox
	                   * does not see (assay's own files in it) */
	int made;         /* the sandbox made the placeholder (removes it) */
};

struct path_mounts {
	struct path_mount *v;
	size_t n;
};

/* The mount rel lies in (rel itself or a path below it): its index and
 * *rest, the part below ("" for the mount point); -1 when none. Hidden
 * paths are found too (path_mount_hidden tells them). */
int path_mount_find(const struct path_mounts *m, const char *rel,
                    const char **rest);
/* Whether rest (below mount m) is one of its hidden paths or below
 * one. */
int path_mount_hidden(const struct path_mount *m, const char *rest);
/* Open rel beneath root_fd as path_open_beneath does, or, when it lies
 * in a mount, beneath the mount's source (read-only: an open for
 * writing is refused with a message naming the input). m may be NULL. */
int path_open_mapped(int root_fd, const struct path_mounts *m, const char *rel,
                     int flags, int mode, char **err);
/* The message for a write refused under a mount. */
char *path_mount_readonly(const struct path_mount *m, const char *rel);
/* As JSON [{"rel","src","dir","hide":[...]}] and back (the helper
 * gets the table on its command line; the workbench builds it from
 * run_start). from_json: 0, or -1 and *err on a malformed table. */
cJSON *path_mounts_json(const struct path_mounts *m);
int path_mounts_from_json(struct path_mounts *m, const cJSON *arr, char **err);
void path_mount_add(struct path_mounts *m, const char *rel, const char *src,
                    int dir);
void path_mounts_free(struct path_mounts *m);

/* The user's assay directories, $XDG_CACHE_HOME/assay/<sub>,
 * $XDG_CONFIG_HOME/assay/<sub> and $XDG_STATE_HOME/assay/<sub>
 * (~/.cache, ~/.config, ~/.local/state when unset; sub ""
 * for the directory itself). NULL when neither variable nor HOME is
 * set. Caller frees. The one place these paths are built. */
char *path_cache_dir(const char *sub);
char *path_config_dir(const char *sub);
char *path_state_dir(const char *sub);

#endif
