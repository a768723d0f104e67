/* archive_delta.c: `assay-archive delta`, a call's snapshot of a docker
 * workspace as what changed only, and the fold of such deltas into
 * their whole archive (src/sandbox/layers.c names the files).
 *
 * A delta is a .tar.gz whose first entry, "/.assay-delta" (absolute: no
 * workspace entry can be), is {"gone":[paths]}; the entries after it
 * are the files, links and directories the call made or changed. Folded
 * over the whole archive oldest first, an entry of a later layer hides
 * every older entry of its path and below it, and a path gone hides
 * them too. */
#include "helpers/archive_delta.h"

#include "assay/buf.h"
#include "assay/sandbox.h"
#include "assay/strv.h"
#include "assay/util.h"
#include "sandbox/tar.h"
#include "sandbox/xfer.h"

#include <archive.h>
#include <archive_entry.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DELTA_HEAD "/.assay-delta"
#define DELTA_STDIN_MAX (256u << 20) /* the records */
#define DELTA_CHUNK (64u << 10)
#define FOLD_ENTRIES 10000000 /* the deltas' entries, all together */

/* ---- writing ---- */

/* The archive out writes to path: pax, zstd or gzip (the extension
 * decides: sbx_archive_filter). */
static struct archive *layer_create(const char *path, char **err)
{
	struct archive *a = archive_write_new();
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    sbx_archive_filter(a, path) != ARCHIVE_OK ||
	    archive_write_open_filename(a, path) != ARCHIVE_OK) {
		set_err(err, "archive: %s: %s", path, archive_error_string(a));
		archive_write_free(a);
		return NULL;
	}
	return a;
}

/* An entry of its own making: the delta's head, or a directory. */
static int put_entry(struct archive *out, const char *name, mode_t type,
                     const char *data, size_t n, char **err)
{
	struct archive_entry *e = archive_entry_new();
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, type == AE_IFDIR ? 0755 : 0644);
	archive_entry_set_size(e, (la_int64_t)n);
	archive_entry_set_mtime(e, time(NULL), 0);
	int rc = 0;
	if (archive_write_header(out, e) < ARCHIVE_WARN ||
	    (n && archive_write_data(out, data, n) != (la_ssize_t)n))
		rc = set_err(err, "archive: %s", archive_error_string(out));
	archive_entry_free(e);
	return rc;
}

/* Copy the current entry's data from in to out; bytes counts it. */
static int copy_data(struct archive *in, struct archive *out, double *bytes,
                     char **err)
{
	const void *buf;
	size_t size;
	la_int64_t off;
	int r;
	while ((r = archive_read_data_block(in, &buf, &size, &off)) ==
	       ARCHIVE_OK) {
		if (archive_write_data(out, buf, size) < 0)
			return set_err(err, "archive: %s",
			               archive_error_string(out));
		if (bytes)
			*bytes += (double)size;
	}
	if (r != ARCHIVE_EOF)
		return set_err(err, "archive: %s", archive_error_string(in));
	return 0;
}

/* ---- delta ---- */

struct delta_get {
	char *const *http; /* the http options */
	int n_http;
	const char *prefix, *root;
	double bytes;
	void (*progress)(double done, double total);
	int64_t said;
	/* --tar: the files come from this tar on stdin instead, one entry
	 * each, in the records' order (an OpenSandbox sandbox made it) */
	struct archive *tar;
};

/* The GET of root/rel, its body (a tar) on the returned fd; *pid the
 * child doing it. */
static int get_start(struct delta_get *g, const char *rel, pid_t *pid,
                     char **err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return set_err(err, "delta: pipe: %s", strerror(errno));
	char *cpath = xasprintf("%s/%s", g->root, rel);
	char *q = xfer_escape(cpath);
	char *url = xasprintf("%s%s", g->prefix, q);
	free(q);
	free(cpath);
	fflush(stdout);
	*pid = fork();
	if (*pid == 0) {
		dup2(p[1], 1);
		char **args = xcalloc((size_t)g->n_http + 3, sizeof *args);
		for (int i = 0; i < g->n_http; i++)
			args[i] = g->http[i];
		args[g->n_http] = "GET";
		args[g->n_http + 1] = url;
		_exit(archive_http(g->n_http + 2, args));
	}
	free(url);
	close(p[1]);
	if (*pid < 0) {
		close(p[0]);
		return set_err(err, "delta: fork: %s", strerror(errno));
	}
	return p[0];
}

/* The one entry of root/rel's tar into out, named rel. */
static int get_one(struct delta_get *g, struct archive *out, const char *rel,
                   char **err)
{
	pid_t pid = -1;
	int fd = get_start(g, rel, &pid, err);
	if (fd < 0)
		return -1;
	struct archive *in = archive_read_new();
	struct archive_entry *e;
	int rc = -1, r;
	archive_read_support_format_tar(in);
	archive_read_support_filter_none(in);
	if (archive_read_open_fd(in, fd, DELTA_CHUNK) != ARCHIVE_OK ||
	    (r = tar_next_header(in, &e)) != ARCHIVE_OK) {
		set_err(err, "delta: %s: no answer from the daemon", rel);
		goto out;
	}
	mode_t type = archive_entry_filetype(e);
	if (type != AE_IFREG && type != AE_IFLNK) {
		set_err(err, "delta: %s is no longer a file", rel);
		goto out;
	}
	archive_entry_set_pathname(e, rel);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_uname(e, NULL);
	archive_entry_set_gname(e, NULL);
	if (archive_write_header(out, e) < ARCHIVE_WARN) {
		set_err(err, "archive: %s", archive_error_string(out));
		goto out;
	}
	if (copy_data(in, out, &g->bytes, err) < 0)
		goto out;
	if (tar_next_header(in, &e) != ARCHIVE_EOF) {
		set_err(err, "delta: %s: more than one entry", rel);
		goto out;
	}
	rc = 0;
out:
	archive_read_free(in);
	close(fd);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc == 0 && (!WIFEXITED(status) || WEXITSTATUS(status))) {
		free(*err);
		*err = NULL;
		rc = set_err(err, "delta: cannot read %s from the container",
		             rel);
	}
	if (rc == 0 && g->progress && now_ms() - g->said >= 500) {
		g->said = now_ms();
		g->progress(g->bytes, 0);
	}
	return rc;
}

/* The next entry of the tar on stdin into out: it must be rel. */
static int tar_one(struct delta_get *g, struct archive *out, const char *rel,
                   char **err)
{
	struct archive_entry *e;
	if (tar_next_header(g->tar, &e) != ARCHIVE_OK)
		return set_err(err, "delta: %s is not in the sandbox's tar",
		               rel);
	const char *name = archive_entry_pathname(e);
	while (name && name[0] == '.' && name[1] == '/')
		name += 2;
	mode_t type = archive_entry_filetype(e);
	if (!name || strcmp(name, rel) || archive_entry_hardlink(e))
		return set_err(err,
		               "delta: the sandbox's tar has %s where %s "
		               "was due",
		               name ? name : "?", rel);
	if (type != AE_IFREG && type != AE_IFLNK)
		return set_err(err, "delta: %s is no longer a file", rel);
	archive_entry_set_pathname(e, rel);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_uname(e, NULL);
	archive_entry_set_gname(e, NULL);
	if (archive_write_header(out, e) < ARCHIVE_WARN)
		return set_err(err, "archive: %s", archive_error_string(out));
	return copy_data(g->tar, out, &g->bytes, err);
}

/* stdin, whole (the records are small: paths). */
static int read_records(struct buf *b, char **err)
{
	char tmp[65536];
	for (;;) {
		ssize_t r = read(0, tmp, sizeof tmp);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return set_err(err, "delta: stdin: %s",
			               strerror(errno));
		if (r == 0)
			return 0;
		if (b->len + (size_t)r > DELTA_STDIN_MAX)
			return set_err(err, "delta: too many records");
		buf_append(b, tmp, (size_t)r);
	}
}

/* The records' gone paths as the head's JSON. */
static char *delta_head(const struct buf *b)
{
	cJSON *j = cJSON_CreateObject();
	cJSON *gone = cJSON_AddArrayToObject(j, "gone");
	for (size_t i = 0; i < b->len; i += strlen(b->data + i) + 1)
		if (b->data[i] == 'x')
			cJSON_AddItemToArray(
			    gone, cJSON_CreateString(b->data + i + 1));
	char *s = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	return s;
}

/* A record's path as it may be written: relative, no "." or ".."
 * component, not under a mounted input. */
static int record_ok(const char *p, const struct path_mounts *m)
{
	if (!*p || *p == '/')
		return 0;
	for (const char *c = p; *c;) {
		size_t n = strcspn(c, "/");
		if (!n || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		c += n;
		if (*c)
			c++;
	}
	return path_mount_find(m, p, NULL) < 0;
}

static int delta_write(struct delta_get *g, const struct buf *recs,
                       const char *tmp, const struct path_mounts *m, char **err)
{
	struct archive *out = layer_create(tmp, err);
	if (!out)
		return -1;
	char *head = delta_head(recs);
	int rc = put_entry(out, DELTA_HEAD, AE_IFREG, head, strlen(head), err);
	free(head);
	for (size_t i = 0; rc == 0 && i < recs->len;) {
		const char *r = recs->data + i;
		i += strlen(r) + 1;
		if (*r == 'x' || !record_ok(r + 1, m))
			continue;
		if (*r == 'd')
			rc = put_entry(out, r + 1, AE_IFDIR, NULL, 0, err);
		else if (*r == 'f')
			rc = g->tar ? tar_one(g, out, r + 1, err)
			            : get_one(g, out, r + 1, err);
	}
	if (rc == 0 && archive_write_close(out) != ARCHIVE_OK)
		rc = set_err(err, "archive: %s", archive_error_string(out));
	archive_write_free(out);
	return rc;
}

/* Check the records, write the delta through its temporary and say how
 * it went (rc and err: what came before; err is taken). The exit code. */
static int delta_run(struct delta_get *g, const struct buf *recs, int rc,
                     char *err, const char *out, const struct path_mounts *m)
{
	char *tmp = xasprintf("%s.tmp.%d", out, (int)getpid());
	if (rc == 0 && recs->len && recs->data[recs->len - 1])
		rc = set_err(&err, "delta: the last record has no NUL");
	if (rc == 0)
		rc = delta_write(g, recs, tmp, m, &err);
	if (rc == 0 && rename(tmp, out) < 0)
		rc = set_err(&err, "delta: %s: %s", out, strerror(errno));
	if (rc < 0)
		unlink(tmp);
	else if (g->progress)
		g->progress(g->bytes, g->bytes);
	free(tmp);
	if (rc < 0)
		fprintf(stderr, "%s\n", err ? err : "delta failed");
	free(err);
	return rc < 0 ? 1 : 0;
}

/* delta --tar RECORDS OUT: the records from a file, the files from the
 * tar on stdin. */
static int delta_from_tar(const char *records, const char *out,
                          const struct path_mounts *m,
                          void (*progress)(double done, double total))
{
	struct delta_get g = {.progress = progress, .said = now_ms()};
	char *err = NULL;
	size_t len = 0;
	char *text = read_file_max(records, DELTA_STDIN_MAX, &len, &err);
	struct buf recs = {.data = text, .len = len, .max = DELTA_STDIN_MAX};
	int rc = text ? 0 : -1;
	g.tar = archive_read_new();
	archive_read_support_format_tar(g.tar);
	archive_read_support_filter_none(g.tar);
	if (rc == 0 &&
	    archive_read_open_fd(g.tar, 0, DELTA_CHUNK) != ARCHIVE_OK)
		rc = set_err(&err, "delta: %s", archive_error_string(g.tar));
	int code = delta_run(&g, &recs, rc, err, out, m);
	archive_read_free(g.tar);
	free(text);
	return code;
}

int archive_delta(int argc, char **argv, const struct path_mounts *m,
                  void (*progress)(double done, double total))
{
	if (argc == 3 && !strcmp(argv[0], "--tar"))
		return delta_from_tar(argv[1], argv[2], m, progress);
	if (argc < 3)
		return 2;
	struct delta_get g = {.http = argv,
	                      .n_http = argc - 3,
	                      .prefix = argv[argc - 3],
	                      .root = argv[argc - 2],
	                      .progress = progress,
	                      .said = now_ms()};
	char *err = NULL;
	struct buf recs;
	buf_init(&recs, DELTA_STDIN_MAX);
	int rc = read_records(&recs, &err);
	int code = delta_run(&g, &recs, rc, err, argv[argc - 1], m);
	buf_free(&recs);
	return code;
}

/* ---- fold ---- */

/* path -> the newest layer that names it (an entry or gone). */
struct layer_map {
	char **key;
	int *layer;
	size_t cap, n;
};

static size_t map_hash(const char *s, size_t len)
{
	size_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static size_t map_slot(const struct layer_map *m, const char *s, size_t len)
{
	size_t i = map_hash(s, len) & (m->cap - 1);
	while (m->key[i] &&
	       (strlen(m->key[i]) != len || memcmp(m->key[i], s, len)))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static void map_set(struct layer_map *m, const char *s, int layer)
{
	if (2 * (m->n + 1) > m->cap) {
		struct layer_map big = {0};
		big.cap = m->cap ? 2 * m->cap : 1024;
		big.key = xcalloc(big.cap, sizeof *big.key);
		big.layer = xcalloc(big.cap, sizeof *big.layer);
		for (size_t i = 0; i < m->cap; i++)
			if (m->key[i]) {
				size_t j = map_slot(&big, m->key[i],
				                    strlen(m->key[i]));
				big.key[j] = m->key[i];
				big.layer[j] = m->layer[i];
			}
		big.n = m->n;
		free(m->key);
		free(m->layer);
		*m = big;
	}
	size_t i = map_slot(m, s, strlen(s));
	if (!m->key[i]) {
		m->key[i] = xstrdup(s);
		m->n++;
	}
	if (layer > m->layer[i])
		m->layer[i] = layer;
}

/* The newest layer naming s[0..len), or 0. */
static int map_get(const struct layer_map *m, const char *s, size_t len)
{
	if (!m->cap)
		return 0;
	size_t i = map_slot(m, s, len);
	return m->key[i] ? m->layer[i] : 0;
}

static void map_free(struct layer_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->key[i]);
	free(m->key);
	free(m->layer);
}

/* An entry's name as a workspace path: no "./" before, no "/" after. */
static char *norm_name(const char *p)
{
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	size_t n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		n--;
	return xasprintf("%.*s", (int)n, p);
}

/* Whether a layer newer than layer names path or a directory above
 * it. */
static int hidden(const struct layer_map *m, const char *path, int layer)
{
	for (const char *c = path;; c++) {
		if (!*c || *c == '/') {
			if (map_get(m, path, (size_t)(c - path)) > layer)
				return 1;
			if (!*c)
				return 0;
		}
	}
}

static struct archive *layer_open(const char *path, int *fd, char **err)
{
	/* a copied run dir's layer: a regular file, never a FIFO (the
	 * read would wait for ever) nor a link */
	*fd = open_regular(path, O_RDONLY | O_NOFOLLOW, 0, err);
	if (*fd < 0)
		return NULL;
	struct archive *in = archive_read_new();
	archive_read_support_format_tar(in);
	archive_read_support_filter_gzip(in);
	archive_read_support_filter_zstd(in);
	archive_read_support_filter_none(in);
	if (archive_read_open_fd(in, *fd, DELTA_CHUNK) != ARCHIVE_OK) {
		set_err(err, "fold: %s: %s", path, archive_error_string(in));
		archive_read_free(in);
		close(*fd);
		*fd = -1;
		return NULL;
	}
	return in;
}

/* The head's gone paths into the map as layer's. */
static int head_read(struct archive *in, struct archive_entry *e,
                     struct layer_map *m, int layer, const char *path,
                     char **err)
{
	la_int64_t size = archive_entry_size(e);
	if (size < 0 || size > (la_int64_t)DELTA_STDIN_MAX)
		return set_err(err, "fold: %s: a bad head", path);
	char *data = xmalloc((size_t)size + 1);
	la_ssize_t got = archive_read_data(in, data, (size_t)size);
	data[got > 0 ? got : 0] = '\0';
	cJSON *j = got == size ? cJSON_Parse(data) : NULL;
	free(data);
	const cJSON *gone = cJSON_GetObjectItemCaseSensitive(j, "gone");
	if (!cJSON_IsArray(gone)) {
		cJSON_Delete(j);
		return set_err(err, "fold: %s: a bad head", path);
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, gone)
	{
		if (cJSON_IsString(it))
			map_set(m, it->valuestring, layer);
	}
	cJSON_Delete(j);
	return 0;
}

/* Pass one: what each delta names. */
static int fold_index(char **deltas, int n, struct layer_map *m, char **err)
{
	size_t count = 0;
	for (int i = 0; i < n; i++) {
		int fd;
		struct archive *in = layer_open(deltas[i], &fd, err);
		if (!in)
			return -1;
		struct archive_entry *e;
		int r, rc = 0;
		while (rc == 0 && (r = tar_next_header(in, &e)) == ARCHIVE_OK) {
			const char *p = archive_entry_pathname(e);
			if (++count > FOLD_ENTRIES)
				rc = set_err(err, "fold: too many entries");
			else if (p && !strcmp(p, DELTA_HEAD))
				rc = head_read(in, e, m, i + 1, deltas[i], err);
			else if (p) {
				char *k = norm_name(p);
				map_set(m, k, i + 1);
				free(k);
			}
		}
		if (rc == 0 && r != ARCHIVE_EOF)
			rc = set_err(err, "fold: %s: %s", deltas[i],
			             archive_error_string(in));
		archive_read_free(in);
		close(fd);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Pass two: one layer's entries that no newer layer hides, to out. */
static int fold_layer(const char *path, int layer, const struct layer_map *m,
                      struct archive *out, char **err)
{
	int fd;
	struct archive *in = layer_open(path, &fd, err);
	if (!in)
		return -1;
	struct archive_entry *e;
	int r, rc = 0;
	while (rc == 0 && (r = tar_next_header(in, &e)) == ARCHIVE_OK) {
		const char *p = archive_entry_pathname(e);
		if (!p || !strcmp(p, DELTA_HEAD))
			continue;
		char *k = norm_name(p);
		int skip = hidden(m, k, layer);
		free(k);
		const char *hl = archive_entry_hardlink(e);
		if (!skip && hl) {
			char *t = norm_name(hl);
			if (hidden(m, t, layer))
				rc = set_err(err,
				             "fold: %s is a hard link to %s, "
				             "which a later call changed",
				             p, hl);
			free(t);
		}
		if (skip || rc < 0)
			continue;
		if (archive_write_header(out, e) < ARCHIVE_WARN)
			rc = set_err(err, "archive: %s",
			             archive_error_string(out));
		else
			rc = copy_data(in, out, NULL, err);
	}
	if (rc == 0 && r != ARCHIVE_EOF)
		rc = set_err(err, "fold: %s: %s", path,
		             archive_error_string(in));
	archive_read_free(in);
	close(fd);
	return rc;
}

int archive_fold(const char *archive, const char *out_path, char **err)
{
	struct strv deltas = {0};
	int n = sbx_deltas(archive, &deltas, NULL, err);
	if (n <= 0) {
		strv_free(&deltas);
		return n;
	}
	struct layer_map m = {0};
	char *tmp = xasprintf("%s.tmp.%d", out_path, (int)getpid());
	struct archive *out = NULL;
	int rc = fold_index(deltas.v, n, &m, err);
	if (rc == 0)
		out = layer_create(tmp, err);
	if (!out)
		rc = -1;
	for (int i = 0; rc == 0 && i <= n; i++)
		rc = fold_layer(i ? deltas.v[i - 1] : archive, i, &m, out, err);
	if (rc == 0 && archive_write_close(out) != ARCHIVE_OK)
		rc = set_err(err, "archive: %s", archive_error_string(out));
	archive_write_free(out);
	if (rc == 0 && rename(tmp, out_path) < 0)
		rc = set_err(err, "fold: %s: %s", out_path, strerror(errno));
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	map_free(&m);
	strv_free(&deltas);
	return rc < 0 ? -1 : n;
}
