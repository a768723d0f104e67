/* mounts.c: the table of inputs mounted read-only into a workspace
 * (assay/path.h), and opening a workspace path through it: a path at or
 * below a mount point is opened beneath the mount's source instead of
 * the workspace's empty placeholder. */
#include "assay/path.h"
#include "assay/json.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int path_mount_find(const struct path_mounts *m, const char *rel,
                    const char **rest)
{
	if (!m)
		return -1;
	for (size_t i = 0; i < m->n; i++) {
		const char *r = m->v[i].rel;
		size_t n = strlen(r);
		if (strncmp(rel, r, n) || (rel[n] && rel[n] != '/'))
			continue;
		if (rest)
			*rest = rel[n] ? rel + n + 1 : "";
		return (int)i;
	}
	return -1;
}

int path_mount_hidden(const struct path_mount *m, const char *rest)
{
	for (size_t i = 0; i < m->hide.n; i++) {
		const char *h = m->hide.v[i];
		size_t n = strlen(h);
		if (!strncmp(rest, h, n) && (!rest[n] || rest[n] == '/'))
			return 1;
	}
	return 0;
}

char *path_mount_readonly(const struct path_mount *m, const char *rel)
{
	if (!strcmp(rel, m->rel))
		return xasprintf("%s is an input, mounted read-only: write "
		                 "elsewhere in the workspace (e.g. output/)",
		                 rel);
	return xasprintf("%s is in the input %s, which is mounted read-only: "
	                 "write elsewhere in the workspace (e.g. output/)",
	                 rel, m->rel);
}

int path_open_mapped(int root_fd, const struct path_mounts *m, const char *rel,
                     int flags, int mode, char **err)
{
	const char *rest = NULL;
	int i = path_mount_find(m, rel, &rest);
	if (i < 0)
		return path_open_beneath(root_fd, rel, flags, mode, err);
	const struct path_mount *pm = &m->v[i];
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC))) {
		if (err) {
			free(*err);
			*err = path_mount_readonly(pm, rel);
		}
		errno = EROFS;
		return -1;
	}
	if (path_mount_hidden(pm, rest)) {
		set_err(err, "%s: no such file or directory", rel);
		errno = ENOENT;
		return -1;
	}
	if (!pm->dir) {
		if (*rest) {
			set_err(err, "%s: not a directory", rel);
			errno = ENOTDIR;
			return -1;
		}
		int fd = open(pm->src, flags | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			set_err(err, "%s (the input %s): %s", rel, pm->src,
			        strerror(errno));
		return fd;
	}
	int dfd = open(pm->src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		set_err(err, "%s (the input %s): %s", rel, pm->src,
		        strerror(errno));
		return -1;
	}
	int fd = path_open_beneath(dfd, *rest ? rest : ".", flags, mode, err);
	int e = errno;
	close(dfd);
	errno = e;
	return fd;
}

void path_mount_add(struct path_mounts *m, const char *rel, const char *src,
                    int dir)
{
	m->v = xrealloc(m->v, (m->n + 1) * sizeof *m->v);
	struct path_mount *pm = &m->v[m->n++];
	memset(pm, 0, sizeof *pm);
	pm->rel = xstrdup(rel);
	pm->src = xstrdup(src);
	pm->dir = dir;
}

cJSON *path_mounts_json(const struct path_mounts *m)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; m && i < m->n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "rel", m->v[i].rel);
		cJSON_AddStringToObject(o, "src", m->v[i].src);
		cJSON_AddBoolToObject(o, "dir", m->v[i].dir);
		cJSON *h = cJSON_AddArrayToObject(o, "hide");
		for (size_t k = 0; k < m->v[i].hide.n; k++)
			cJSON_AddItemToArray(
			    h, cJSON_CreateString(m->v[i].hide.v[k]));
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

int path_mounts_from_json(struct path_mounts *m, const cJSON *arr, char **err)
{
	memset(m, 0, sizeof *m);
	if (!cJSON_IsArray(arr))
		return set_err(err, "mounts: not an array");
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		const char *rel = json_str(it, "rel", NULL);
		const char *src = json_str(it, "src", NULL);
		char *norm = NULL, *perr = NULL;
		if (!rel || !src || src[0] != '/' ||
		    path_normalize(rel, &norm, &perr) < 0 ||
		    strcmp(norm, rel) || !strcmp(norm, ".")) {
			free(norm);
			free(perr);
			path_mounts_free(m);
			return set_err(err, "mounts: a bad entry");
		}
		free(norm);
		path_mount_add(m, rel, src, json_bool(it, "dir", 0));
		const cJSON *h;
		cJSON_ArrayForEach(h, cJSON_GetObjectItem(it, "hide"))
		{
			if (cJSON_IsString(h) && *h->valuestring)
				strv_push(&m->v[m->n - 1].hide, h->valuestring);
		}
	}
	return 0;
}

void path_mounts_free(struct path_mounts *m)
{
	for (size_t i = 0; m && i < m->n; i++) {
		free(m->v[i].rel);
		free(m->v[i].src);
		strv_free(&m->v[i].hide);
	}
	if (m) {
		free(m->v);
		m->v = NULL;
		m->n = 0;
	}
}
