/* mounts.c: the inputs a sandbox mounts read-only instead of copying
 * them into the workspace (the local backend binds each with
 * bubblewrap's --ro-bind), so staging costs the same for 1 KB and
 * 10 GB and the original cannot be changed through the sandbox. The
 * table (assay/path.h) is made here, with the placeholders the mount
 * points need in the host workspace; the host-side file operations
 * (hostfs.c, archive.c) map or skip the mounted paths through it. */
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

/* The workspace-relative destination of input in, or NULL and *err. */
static char *input_rel(const struct config_input *in, char **err)
{
	char *rel = NULL, *perr = NULL;
	if (path_normalize(in->dest ? in->dest : "", &rel, &perr) < 0) {
		set_err(err, "input %s: destination %s: %s", in->src,
		        in->dest ? in->dest : "", perr);
		free(perr);
		return NULL;
	}
	return rel;
}

/* An input is mounted unless it asks for a copy or goes to the
 * workspace's root (a mount there would make the workspace
 * read-only: its contents are copied in instead). */
static int wants_mount(const struct config_input *in)
{
	if (in->copy || !in->dest || !*in->dest)
		return 0;
	char *rel = NULL, *perr = NULL;
	int root =
	    path_normalize(in->dest, &rel, &perr) == 0 && !strcmp(rel, ".");
	free(rel);
	free(perr);
	return !root;
}

int sbx_input_mounted(const struct sbx *s, size_t i)
{
	return s->mounts.n && i < s->cfg->n_inputs &&
	       wants_mount(&s->cfg->inputs[i]);
}

/* Whether a lies in b or b in a (as workspace paths). */
static int overlap(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b), n = na < nb ? na : nb;
	return !strncmp(a, b, n) && (a[n] == '/' || a[n] == '\0') &&
	       (b[n] == '/' || b[n] == '\0');
}

/* What of a directory input the sandbox must not see: assay's own
 * state at its top, and the workspace, run dir and out dir when they
 * lie inside it (`--input .` with the run dir under ./.assay). */
static int mount_hide(struct sbx *s, struct path_mount *m, char **err)
{
	struct stat st;
	char *own = xasprintf("%s/.assay", m->src);
	if (lstat(own, &st) == 0 && S_ISDIR(st.st_mode))
		strv_push(&m->hide, ".assay");
	free(own);
	const char *inside[] = {s->workspace, s->run_dir, s->cfg->out_dir};
	size_t n = strlen(m->src);
	for (size_t i = 0; i < sizeof inside / sizeof *inside; i++) {
		char *real = inside[i] ? realpath(inside[i], NULL) : NULL;
		if (real && !strcmp(real, m->src) && i == 0) {
			free(real);
			return set_err(err,
			               "input %s is the workspace itself: give "
			               "another input",
			               m->src);
		}
		if (real && !strncmp(real, m->src, n) && real[n] == '/' &&
		    !path_mount_hidden(m, real + n + 1))
			strv_push(&m->hide, real + n + 1);
		free(real);
	}
	return 0;
}

/* One input into the table: its source resolved and checked. */
static int mount_add(struct sbx *s, const struct config_input *in, char **err)
{
	char *rel = input_rel(in, err);
	if (!rel)
		return -1;
	int rc = -1;
	char *src = realpath(in->src, NULL);
	struct stat st;
	if (!src || stat(src, &st) < 0) {
		if (errno == EACCES)
			set_err(err,
			        "input %s: permission denied: make it readable "
			        "or pick another --input",
			        in->src);
		else
			set_err(err, "input %s: no such file: check --input",
			        in->src);
		goto out;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		set_err(err, "input %s: not a regular file or directory",
		        in->src);
		goto out;
	}
	for (size_t i = 0; i < s->mounts.n; i++)
		if (overlap(rel, s->mounts.v[i].rel)) {
			set_err(err,
			        "input %s: its destination %s overlaps that of "
			        "%s (%s): give each input its own place "
			        "(--input SRC:DEST)",
			        in->src, rel, s->mounts.v[i].src,
			        s->mounts.v[i].rel);
			goto out;
		}
	path_mount_add(&s->mounts, rel, src, S_ISDIR(st.st_mode));
	rc = mount_hide(s, &s->mounts.v[s->mounts.n - 1], err);
out:
	free(src);
	free(rel);
	return rc;
}

/* A copied input must not land inside a mount (the mount would hide
 * it, and its placeholder would be written into the source). */
static int copies_clear(struct sbx *s, char **err)
{
	for (size_t i = 0; i < s->cfg->n_inputs; i++) {
		const struct config_input *in = &s->cfg->inputs[i];
		if (wants_mount(in))
			continue;
		char *rel = input_rel(in, err);
		if (!rel)
			return -1;
		const char *rest = NULL;
		int mi = path_mount_find(&s->mounts, rel, &rest);
		free(rel);
		if (mi >= 0)
			return set_err(
			    err,
			    "input %s: its destination lies in the "
			    "mounted input %s: give it another place "
			    "(--input SRC:DEST)",
			    in->src, s->mounts.v[mi].rel);
	}
	return 0;
}

/* The directory of rel's parent beneath ws_fd (made if missing), and
 * *base its last component. -1 and *err. */
static int parent_dir(int ws_fd, const char *rel, const char **base, char **err)
{
	const char *slash = strrchr(rel, '/');
	*base = slash ? slash + 1 : rel;
	if (!slash)
		return openat(ws_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *dir = xstrndup(rel, (size_t)(slash - rel));
	int fd =
	    path_mkdirs_beneath(ws_fd, dir, err) < 0
	        ? -1
	        : path_open_beneath(ws_fd, dir, O_RDONLY | O_DIRECTORY, 0, err);
	free(dir);
	return fd;
}

/* Whether the directory name under dfd is empty. */
static int dir_empty(int dfd, const char *name)
{
	int fd =
	    openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	int empty = 1;
	struct dirent *de;
	while (empty && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = 0;
	closedir(d);
	return empty;
}

/* Whether what is at name can be the mount point of m: an empty file
 * or directory (one that a crashed run left is taken over; anything
 * else would be hidden by the mount, and is refused). *ours: it is
 * this sandbox's kind of placeholder (a 0444 empty file), to be
 * removed at the end. */
static int is_placeholder(int dfd, const char *name, const struct path_mount *m,
                          int *ours)
{
	struct stat st;
	*ours = 0;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (!m->dir) {
		*ours = S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0444;
		return S_ISREG(st.st_mode) && st.st_size == 0;
	}
	return S_ISDIR(st.st_mode) && dir_empty(dfd, name);
}

/* The mount point of m in the workspace. */
static int placeholder_make(int ws_fd, struct path_mount *m, char **err)
{
	const char *base;
	int dfd = parent_dir(ws_fd, m->rel, &base, err);
	if (dfd < 0)
		return -1;
	int rc = 0;
	if (m->dir ? mkdirat(dfd, base, 0755) == 0 : 0) {
		m->made = 1;
	} else if (!m->dir) {
		int fd = openat(dfd, base,
		                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		                    O_CLOEXEC | O_NONBLOCK,
		                0444);
		if (fd >= 0) {
			close(fd);
			m->made = 1;
		}
	}
	int ours = 0;
	if (!m->made && errno != EEXIST)
		rc = set_err(err, "input %s: cannot make its place %s: %s",
		             m->src, m->rel, strerror(errno));
	else if (!m->made && !is_placeholder(dfd, base, m, &ours))
		rc = set_err(err,
		             "input %s: %s already holds something in the "
		             "workspace, which the input would hide: give the "
		             "input another place (--input SRC:DEST) or move "
		             "it away",
		             m->src, m->rel);
	else if (!m->made)
		m->made = ours;
	close(dfd);
	return rc;
}

int sbx_mounts_prepare(struct sbx *s, int ws_fd, char **err)
{
	for (size_t i = 0; i < s->cfg->n_inputs; i++)
		if (wants_mount(&s->cfg->inputs[i]) &&
		    mount_add(s, &s->cfg->inputs[i], err) < 0)
			return -1;
	if (!s->mounts.n)
		return 0;
	if (copies_clear(s, err) < 0)
		return -1;
	for (size_t i = 0; i < s->mounts.n; i++) {
		if (ws_fd >= 0 &&
		    placeholder_make(ws_fd, &s->mounts.v[i], err) < 0)
			return -1;
		log_info("input %s mounted read-only at %s", s->mounts.v[i].src,
		         s->mounts.v[i].rel);
	}
	cJSON *j = path_mounts_json(&s->mounts);
	s->mounts_json = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	return 0;
}

void sbx_mounts_release(struct sbx *s)
{
	if (!s->workspace)
		return;
	int ws_fd = -1;
	for (size_t i = 0; i < s->mounts.n; i++) {
		struct path_mount *m = &s->mounts.v[i];
		if (!m->made)
			continue;
		m->made = 0;
		if (ws_fd < 0)
			ws_fd = open(s->workspace,
			             O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		const char *base;
		char *err = NULL;
		int dfd =
		    ws_fd < 0 ? -1 : parent_dir(ws_fd, m->rel, &base, &err);
		int ours = 0;
		if (dfd >= 0 && is_placeholder(dfd, base, m, &ours) &&
		    unlinkat(dfd, base, m->dir ? AT_REMOVEDIR : 0) < 0)
			log_warn("input %s: its place %s stays: %s", m->src,
			         m->rel, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		free(err);
	}
	if (ws_fd >= 0)
		close(ws_fd);
}

const struct path_mounts *sbx_mounts(const struct sbx *s)
{
	return &s->mounts;
}

cJSON *sbx_inputs_record(const struct sbx *s)
{
	cJSON *arr = cJSON_CreateArray();
	size_t k = 0; /* the mounts are in the inputs' order */
	for (size_t i = 0; i < s->cfg->n_inputs; i++) {
		const struct config_input *in = &s->cfg->inputs[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, o);
		cJSON_AddStringToObject(o, "src", in->src);
		cJSON_AddStringToObject(o, "dest", in->dest);
		int mounted = sbx_input_mounted(s, i) && k < s->mounts.n;
		cJSON_AddStringToObject(o, "mode", mounted ? "mount" : "copy");
		if (!mounted)
			continue;
		const struct path_mount *m = &s->mounts.v[k++];
		cJSON_AddStringToObject(o, "path", m->src);
		cJSON_AddStringToObject(o, "kind", m->dir ? "dir" : "file");
		struct stat st;
		if (stat(m->src, &st) == 0) {
			if (!m->dir)
				cJSON_AddNumberToObject(o, "bytes",
				                        (double)st.st_size);
			cJSON_AddNumberToObject(o, "mtime", sbx_mtime(&st));
		}
	}
	return arr;
}
