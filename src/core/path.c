/* path.c: keeps every path a tool touches inside the workspace. The
 * textual checks give clear messages; the kernel (openat2 with
 * RESOLVE_BENEATH) enforces confinement at the moment of use, so a
 * symlink planted by sandboxed code cannot redirect a host-side tool. */
#include "assay/path.h"
#include "assay/util.h"
#include "assay/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int path_normalize(const char *in, char **out, char **err)
{
	*out = NULL;
	if (!in)
		return set_err(err, "missing path");
	size_t n = strlen(in);
	if (n >= PATH_MAX)
		return set_err(err, "path too long (%zu bytes)", n);
	const char *p = in;
	if (p[0] == '/') {
		if (strncmp(p, "/workspace", 10) ||
		    (p[10] != '\0' && p[10] != '/'))
			return set_err(
			    err,
			    "path '%s' is outside the workspace: use "
			    "a path relative to /workspace",
			    in);
		p += 10;
	}
	struct buf b;
	buf_init(&b, PATH_MAX);
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == 1 && p[0] == '.') {
			p += len;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			buf_free(&b);
			return set_err(err,
			               "path '%s' uses '..': paths must stay "
			               "inside the workspace",
			               in);
		}
		if (b.len)
			buf_append(&b, "/", 1);
		buf_append(&b, p, len);
		p += len;
	}
	*out = b.len ? buf_detach(&b) : xstrdup(".");
	buf_free(&b);
	return 0;
}

static int openat2_beneath(int root_fd, const char *rel, int flags, int mode)
{
	struct open_how how;
	memset(&how, 0, sizeof how);
	how.flags = (unsigned long long)(flags | O_CLOEXEC);
	if (flags & O_CREAT)
		how.mode = (unsigned long long)mode;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, root_fd, rel, &how, sizeof how);
}

static int beneath_error(const char *rel, char **err)
{
	if (errno == EXDEV || errno == ELOOP)
		return set_err(err,
		               "path '%s' leads outside the workspace (through "
		               "a symlink): refused",
		               rel);
	return set_err(err, "%s: %s", rel, strerror(errno));
}

int path_mkdirs_beneath(int root_fd, const char *rel, char **err)
{
	char *p = xstrdup(rel);
	int rc = 0;
	for (char *s = p;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (strcmp(p, ".") && *p) {
			int fd = openat2_beneath(root_fd, p,
			                         O_PATH | O_DIRECTORY, 0);
			if (fd >= 0) {
				close(fd);
			} else if (errno == ENOENT) {
				/* parent is confined (checked last round) */
				char *slash = strrchr(p, '/');
				int pfd = root_fd;
				const char *name = p;
				if (slash) {
					*slash = '\0';
					pfd = openat2_beneath(
					    root_fd, p, O_PATH | O_DIRECTORY,
					    0);
					name = slash + 1;
				}
				int ok = pfd >= 0 &&
				         (mkdirat(pfd, name, 0755) == 0 ||
				          errno == EEXIST);
				if (slash) {
					if (pfd >= 0)
						close(pfd);
					*slash = '/';
				}
				if (!ok) {
					rc = beneath_error(rel, err);
					break;
				}
			} else {
				rc = beneath_error(rel, err);
				break;
			}
		}
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return rc;
}

int path_open_beneath(int root_fd, const char *rel, int flags, int mode,
                      char **err)
{
	if (flags & O_CREAT) {
		char *dir = xstrdup(rel);
		char *slash = strrchr(dir, '/');
		int rc = 0;
		if (slash) {
			*slash = '\0';
			rc = path_mkdirs_beneath(root_fd, dir, err);
		}
		free(dir);
		if (rc < 0)
			return -1;
	}
	int fd = openat2_beneath(root_fd, rel, flags, mode);
	if (fd < 0)
		return beneath_error(rel, err);
	return fd;
}

char *path_resolve(const char *path)
{
	char *p = xstrdup(path), *real = NULL;
	size_t cut = strlen(p);
	while (!(real = realpath(p, NULL))) {
		char *slash = strrchr(p, '/');
		if (!slash || slash == p) {
			real = realpath(slash == p ? "/" : ".", NULL);
			cut = slash == p ? 0 : (size_t)-1;
			break;
		}
		*slash = '\0';
		cut = (size_t)(slash - p);
	}
	if (!real) {
		free(p);
		return NULL;
	}
	/* the part that does not exist yet, as written */
	const char *rest = cut == (size_t)-1 ? path : path + cut;
	while (*rest == '/')
		rest++;
	char *out = *rest ? xasprintf("%s%s%s", real,
	                              strcmp(real, "/") ? "/" : "", rest)
	                  : xstrdup(real);
	free(real);
	free(p);
	return out;
}

int path_lies_inside(const char *path, const char *root)
{
	char *real = path_resolve(path);
	size_t n = strlen(root);
	int in = real && !strncmp(real, root, n) &&
	         (real[n] == '/' || real[n] == '\0' || n == 1);
	/* "a/../.." in the part that does not exist is still outside */
	if (in && real && strstr(real + n, "/.."))
		in = 0;
	free(real);
	return in;
}

/* $var/assay/sub, else $HOME/fallback/assay/sub. */
static char *path_xdg_dir(const char *var, const char *fallback,
                          const char *sub)
{
	const char *xdg = getenv(var);
	const char *home = getenv("HOME");
	const char *sep = sub && *sub ? "/" : "";
	if (!sub)
		sub = "";
	if (xdg && *xdg)
		return xasprintf("%s/assay%s%s", xdg, sep, sub);
	if (home && *home)
		return xasprintf("%s/%s/assay%s%s", home, fallback, sep, sub);
	return NULL;
}

char *path_cache_dir(const char *sub)
{
	return path_xdg_dir("XDG_CACHE_HOME", ".cache", sub);
}

char *path_config_dir(const char *sub)
{
	return path_xdg_dir("XDG_CONFIG_HOME", ".config", sub);
}

char *path_state_dir(const char *sub)
{
	return path_xdg_dir("XDG_STATE_HOME", ".local/state", sub);
}
