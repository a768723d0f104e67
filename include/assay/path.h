/* path.h: confinement of paths to the workspace, and the user's
 * directories (XDG). A tool's path is
 * workspace-relative; "/workspace/x" is accepted as "x". Nothing may
 * resolve outside the root: no "..", no absolute path elsewhere, no
 * symlink leading out (checked by the kernel with openat2
 * RESOLVE_BENEATH, so there is no check-then-use race). */
#ifndef ASSAY_PATH_H
#define ASSAY_PATH_H

#include <stddef.h>

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

/* The user's assay directories, $XDG_CACHE_HOME/assay/<sub>,
 * $XDG_CONFIG_HOME/assay/<sub> and $XDG_STATE_HOME/assay/<sub>
 * (~/.cache, ~/.config, ~/.local/state when unset; sub ""
 * for the directory itself). NULL when neither variable nor HOME is
 * set. Caller frees. The one place these paths are built. */
char *path_cache_dir(const char *sub);
char *path_config_dir(const char *sub);
char *path_state_dir(const char *sub);

#endif
