/* docker_files.c: the workspace of a docker sandbox seen from assay.
 * Reads, listings and the confinement checks run inside the container
 * (the fileop script of docker_scripts.c resolves every path there and
 * refuses what lands outside /workspace); writes go in as a one-file
 * tar through the archive API, which only ever writes to volumes (and
 * /workspace is the only one). Staging, persisting and fetching move
 * whole trees as tar streams between the archive API and the
 * assay-archive helper, so libarchive never runs in assay itself. */
#include "assay/config.h"
#include "assay/log.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"
#include "sandbox/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DK_LIST_LINE_MAX 8192

extern char **environ;

static struct docker *dk_of(struct sbx *s)
{
	return s->priv;
}

/* ---- running the fileop script on the loop ---- */

struct fileop {
	struct sbx *s;
	struct buf out, err;
	char *rel;
	size_t max;
	int recursive;
	sbx_done_fn fn;
	void *arg;
	/* write_file */
	char *data;
	size_t n;
	char *dir;
};

static void fileop_free(struct fileop *op)
{
	buf_free(&op->out);
	buf_free(&op->err);
	free(op->rel);
	free(op->data);
	free(op->dir);
	free(op);
}

static void fileop_output(void *arg, enum sbx_stream st, const char *data,
                          size_t n)
{
	struct fileop *op = arg;
	struct buf *b = st == SBX_STDOUT ? &op->out : &op->err;
	if (buf_append(b, data, n) < 0 && b->len < b->max)
		buf_append(b, data, b->max - b->len);
}

/* The reason an operation failed: the script's message or the exec's. */
static char *fileop_error(struct fileop *op, const struct sbx_exit *ex)
{
	if (ex->error)
		return xstrdup(ex->error);
	while (op->err.len && op->err.data[op->err.len - 1] == '\n')
		op->err.data[--op->err.len] = '\0';
	if (op->err.len)
		return utf8_sanitize(op->err.data, op->err.len, NULL);
	return xasprintf("%s: failed (exit code %d)", op->rel, ex->exit_code);
}

static int fileop_run(struct fileop *op, const char *const *argv,
                      size_t out_max,
                      void (*on_exit)(void *, const struct sbx_exit *))
{
	buf_free(&op->out);
	buf_free(&op->err);
	buf_init(&op->out, out_max);
	buf_init(&op->err, 4096);
	struct dk_exec_args a = {.argv = argv, .internal = 2};
	struct sbx_exec_obs obs = {fileop_output, on_exit, op};
	char *err = NULL;
	if (dk_exec_start(op->s, &a, &obs, 0, &err))
		return 0;
	op->fn(op->arg, -1, err, NULL, NULL);
	free(err);
	fileop_free(op);
	return -1;
}

static struct fileop *fileop_new(struct sbx *s, const char *rel, sbx_done_fn fn,
                                 void *arg)
{
	struct fileop *op = xcalloc(1, sizeof *op);
	op->s = s;
	op->rel = xstrdup(rel);
	op->fn = fn;
	op->arg = arg;
	buf_init(&op->out, 0);
	buf_init(&op->err, 0);
	return op;
}

/* ---- read_file ---- */

static void read_done(void *arg, const struct sbx_exit *ex)
{
	struct fileop *op = arg;
	char *err = NULL;
	int rc = -1;
	struct buf b;
	buf_init(&b, 0);
	const char *nl =
	    op->out.len ? memchr(op->out.data, '\n', op->out.len) : NULL;
	if (ex->error || ex->exit_code != 0 || !nl) {
		err = fileop_error(op, ex);
	} else {
		long long size = strtoll(op->out.data, NULL, 10);
		size_t start = (size_t)(nl + 1 - op->out.data);
		buf_append(&b, op->out.data + start, op->out.len - start);
		rc = 0;
		if (size > (long long)op->max) {
			err = xasprintf("%s is %lld bytes; only the first %zu "
			                "were read",
			                op->rel, size, op->max);
			rc = 1;
		}
	}
	op->fn(op->arg, rc, err, rc < 0 ? NULL : &b, NULL);
	buf_free(&b);
	free(err);
	fileop_free(op);
}

void dk_read_file(struct sbx *s, const char *rel, size_t max, sbx_done_fn fn,
                  void *arg)
{
	struct fileop *op = fileop_new(s, rel, fn, arg);
	op->max = max;
	char num[32];
	snprintf(num, sizeof num, "%zu", max);
	const char *argv[] = {"read", rel, num, NULL};
	fileop_run(op, argv, max + 64, read_done);
}

/* ---- list ---- */

/* Pre-order with siblings in strcmp order, as the local backend. */
static int path_cmp(const char *a, const char *b)
{
	for (;;) {
		size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
		int c = memcmp(a, b, la < lb ? la : lb);
		if (c)
			return c;
		if (la != lb)
			return la < lb ? -1 : 1;
		if (!a[la] || !b[lb])
			return (a[la] != 0) - (b[lb] != 0);
		a += la + 1;
		b += lb + 1;
	}
}

static int item_cmp(const void *x, const void *y)
{
	const cJSON *a = *(const cJSON *const *)x,
	            *b = *(const cJSON *const *)y;
	return path_cmp(json_str(a, "path", ""), json_str(b, "path", ""));
}

static const char *type_name(char y)
{
	switch (y) {
	case 'f':
		return "file";
	case 'd':
		return "dir";
	case 'l':
		return "link";
	default:
		return "other";
	}
}

/* One "%y %s %T@ %P" record. */
static cJSON *list_item(const char *rec, const char *prefix)
{
	char y;
	long long size;
	double mtime;
	int used = 0;
	if (sscanf(rec, "%c %lld %lf %n", &y, &size, &mtime, &used) != 3 ||
	    !used || !rec[used])
		return NULL;
	cJSON *e = cJSON_CreateObject();
	char *path = *prefix ? xasprintf("%s/%s", prefix, rec + used)
	                     : xstrdup(rec + used);
	char *clean = utf8_sanitize(path, strlen(path), NULL);
	cJSON_AddStringToObject(e, "path", clean);
	cJSON_AddStringToObject(e, "type", type_name(y));
	cJSON_AddNumberToObject(e, "size", y == 'd' ? 0 : (double)size);
	cJSON_AddNumberToObject(e, "mtime", floor(mtime * 1000) / 1000);
	free(path);
	free(clean);
	return e;
}

static void list_done(void *arg, const struct sbx_exit *ex)
{
	struct fileop *op = arg;
	if (ex->error || ex->exit_code != 0) {
		char *err = fileop_error(op, ex);
		op->fn(op->arg, -1, err, NULL, NULL);
		free(err);
		fileop_free(op);
		return;
	}
	const char *prefix = strcmp(op->rel, ".") ? op->rel : "";
	size_t n = 0, cap = 64;
	cJSON **items = xmalloc(cap * sizeof *items);
	int truncated = 0;
	for (size_t pos = 0; pos < op->out.len;) {
		const char *rec = op->out.data + pos;
		size_t len = strnlen(rec, op->out.len - pos);
		pos += len + 1;
		if (n >= op->max) {
			truncated = 1;
			break;
		}
		cJSON *e =
		    len < DK_LIST_LINE_MAX ? list_item(rec, prefix) : NULL;
		if (!e)
			continue;
		if (n == cap)
			items = xrealloc(items, (cap *= 2) * sizeof *items);
		items[n++] = e;
	}
	if (op->out.len >= op->out.max)
		truncated = 1;
	qsort(items, n, sizeof *items, item_cmp);
	cJSON *list = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(list, items[i]);
	free(items);
	char *err = truncated ? xasprintf("listing of %s stopped at %zu "
	                                  "entries",
	                                  op->rel, op->max)
	                      : NULL;
	op->fn(op->arg, truncated, err, NULL, list);
	free(err);
	cJSON_Delete(list);
	fileop_free(op);
}

void dk_list(struct sbx *s, const char *rel, int recursive, size_t max,
             sbx_done_fn fn, void *arg)
{
	struct fileop *op = fileop_new(s, rel, fn, arg);
	op->max = max;
	op->recursive = recursive;
	char num[32];
	snprintf(num, sizeof num, "%zu", max + 1);
	const char *argv[] = {"list", rel, recursive ? "1" : "0", num, NULL};
	/* a generous bound per entry; the count is the real limit */
	size_t cap = (max + 1) * 512;
	fileop_run(op, argv, cap < (256u << 20) ? cap : (256u << 20),
	           list_done);
}

/* ---- write_file: a one-file tar through the archive API ---- */

static void tar_field(char *f, size_t w, unsigned long long v)
{
	snprintf(f, w, "%0*llo", (int)(w - 1), v);
}

static void tar_header(struct buf *b, const char *name, size_t size, char type)
{
	char h[512];
	memset(h, 0, sizeof h);
	snprintf(h, 100, "%s", name);
	tar_field(h + 100, 8, 0644);
	tar_field(h + 108, 8, 0);
	tar_field(h + 116, 8, 0);
	tar_field(h + 124, 12, size);
	tar_field(h + 136, 12, (unsigned long long)time(NULL));
	memset(h + 148, ' ', 8);
	h[156] = type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	unsigned sum = 0;
	for (size_t i = 0; i < sizeof h; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum);
	buf_append(b, h, sizeof h);
}

static void tar_pad(struct buf *b, size_t n)
{
	static const char zero[512];
	if (n % 512)
		buf_append(b, zero, 512 - n % 512);
}

/* name (a single component) with n bytes of data; long names go in a
 * pax header. */
static void tar_one(struct buf *b, const char *name, const char *data, size_t n)
{
	static const char zero[1024];
	if (strlen(name) >= 100) {
		size_t body = strlen(name) + strlen(" path=\n");
		size_t len = body + 1;
		while (len != body + (size_t)snprintf(NULL, 0, "%zu", len))
			len = body + (size_t)snprintf(NULL, 0, "%zu", len);
		char *rec = xasprintf("%zu path=%s\n", len, name);
		tar_header(b, "PaxHeader", strlen(rec), 'x');
		buf_append(b, rec, strlen(rec));
		tar_pad(b, strlen(rec));
		free(rec);
	}
	tar_header(b, name, n, '0');
	buf_append(b, data, n);
	tar_pad(b, n);
	buf_append(b, zero, sizeof zero);
}

static void put_done(void *arg, long status, struct buf *body, const char *err)
{
	struct fileop *op = arg;
	char *msg = NULL;
	if (status != 200)
		msg = err && !status ? xasprintf("%s: %s", op->rel, err)
		                     : dk_message(status, body);
	if (msg && (strstr(msg, "read-only") || strstr(msg, "not a directory")))
		op->fn(op->arg, -1, "path leads outside the workspace: refused",
		       NULL, NULL);
	else
		op->fn(op->arg, msg ? -1 : 0, msg, NULL, NULL);
	free(msg);
	fileop_free(op);
}

static void prepared(void *arg, const struct sbx_exit *ex)
{
	struct fileop *op = arg;
	struct docker *d = dk_of(op->s);
	if (d->draining && !ex->error) {
		op->fn(op->arg, -1, "sandbox: stopping", NULL, NULL);
		fileop_free(op);
		return;
	}
	if (ex->error || ex->exit_code != 0 || !op->out.len) {
		char *err = fileop_error(op, ex);
		op->fn(op->arg, -1, err, NULL, NULL);
		free(err);
		fileop_free(op);
		return;
	}
	const char *base = strrchr(op->rel, '/');
	base = base ? base + 1 : op->rel;
	struct buf tar;
	buf_init(&tar, 0);
	tar_one(&tar, base, op->data, op->n);
	char *dir = dk_escape(buf_str(&op->out));
	char *path = xasprintf("/containers/%s/archive?path=%s"
	                       "&noOverwriteDirNonDir=true&copyUIDGID=1",
	                       d->id, dir);
	struct dk_req r = {.method = "PUT",
	                   .path = path,
	                   .json = tar.data,
	                   .body_len = tar.len,
	                   .content_type = "application/x-tar",
	                   .on_done = put_done,
	                   .arg = op,
	                   .timeout_ms = 120000};
	char *err = NULL;
	if (!dk_send(&d->api, &r, &err)) {
		op->fn(op->arg, -1, err, NULL, NULL);
		free(err);
		fileop_free(op);
	}
	free(dir);
	free(path);
	buf_free(&tar);
}

void dk_write_file(struct sbx *s, const char *rel, const void *data, size_t n,
                   sbx_done_fn fn, void *arg)
{
	if (!strcmp(rel, ".")) {
		fn(arg, -1,
		   "the workspace itself is a directory: give a file path",
		   NULL, NULL);
		return;
	}
	struct fileop *op = fileop_new(s, rel, fn, arg);
	op->data = xmalloc(n ? n : 1);
	memcpy(op->data, data, n);
	op->n = n;
	const char *argv[] = {"prepare", rel, NULL};
	fileop_run(op, argv, PATH_MAX + 16, prepared);
}

/* ---- the helper process ---- */

static void close_pair(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
	p[0] = p[1] = -1;
}

pid_t dk_spawn_helper(char *const *args, int in_fd, int *to_child,
                      int *from_child, int *err_fd, char **err)
{
	char *bin = sbx_archive_helper();
	int in[2] = {-1, -1}, out[2] = {-1, -1}, ep[2] = {-1, -1};
	pid_t pid = -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (!bin || access(bin, X_OK) < 0) {
		set_err(err,
		        "archive: helper %s not found: reinstall assay "
		        "(assay-archive belongs beside the assay binary) or "
		        "set ASSAY_ARCHIVE_BIN",
		        bin ? bin : "assay-archive");
		goto out;
	}
	if ((in_fd < 0 && pipe2(in, O_CLOEXEC) < 0) ||
	    (from_child && pipe2(out, O_CLOEXEC) < 0) ||
	    pipe2(ep, O_CLOEXEC) < 0) {
		set_err(err, "archive: pipe: %s", strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_adddup2(&fa, in_fd >= 0 ? in_fd : in[0], 0);
	if (from_child)
		posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	else
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY,
		                                 0);
	posix_spawn_file_actions_adddup2(&fa, ep[1], 2);
	size_t n = 0;
	while (args[n])
		n++;
	char **argv = xcalloc(n + 2, sizeof *argv);
	argv[0] = bin;
	memcpy(argv + 1, args, n * sizeof *argv);
	int e = posix_spawn(&pid, bin, &fa, NULL, argv, environ);
	free(argv);
	if (e) {
		pid = -1;
		set_err(err, "archive: cannot run %s: %s", bin, strerror(e));
		goto out;
	}
	if (to_child) {
		*to_child = in[1];
		in[1] = -1;
	}
	if (from_child) {
		*from_child = out[0];
		out[0] = -1;
	}
	*err_fd = ep[0];
	ep[0] = -1;
out:
	posix_spawn_file_actions_destroy(&fa);
	close_pair(in);
	close_pair(out);
	close_pair(ep);
	free(bin);
	return pid;
}

int dk_wait_helper(pid_t pid, int err_fd, char **err)
{
	struct buf msg;
	buf_init(&msg, 4096);
	char tmp[512];
	ssize_t r;
	while ((r = read(err_fd, tmp, sizeof tmp)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		buf_append(&msg, tmp, (size_t)r); /* beyond 4 KiB: dropped */
	}
	close(err_fd);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	int rc = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		while (msg.len && msg.data[msg.len - 1] == '\n')
			msg.data[--msg.len] = '\0';
		char *last = msg.len ? strrchr(msg.data, '\n') : NULL;
		rc = set_err(err, "%s",
		             msg.len ? (last ? last + 1 : msg.data)
		             : WIFSIGNALED(status)
		                 ? "archive: the helper was killed"
		                 : "archive: the helper failed");
	} else if (msg.len) {
		log_info("archive: %s", buf_str(&msg));
	}
	buf_free(&msg);
	return rc;
}

/* ---- streams between the archive API and the helper ---- */

struct pump {
	int fd;
	int broken;
	long status;
	char *err;
	struct buf body;
};

static int pump_write(void *arg, const char *data, size_t n)
{
	struct pump *p = arg;
	while (n > 0) {
		ssize_t w = write(p->fd, data, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			p->broken = 1; /* the helper gave up: it says why */
			return -1;
		}
		data += w;
		n -= (size_t)w;
	}
	return 0;
}

static long pump_read(char *buf, size_t n, void *arg)
{
	struct pump *p = arg;
	for (;;) {
		ssize_t r = read(p->fd, buf, n);
		if (r < 0 && errno == EINTR)
			continue;
		return r < 0 ? -1 : (long)r;
	}
}

static void pump_done(void *arg, long status, struct buf *body, const char *err)
{
	struct pump *p = arg;
	p->status = status;
	p->err = err ? xstrdup(err) : NULL;
	buf_append(&p->body, body->data ? body->data : "", body->len);
}

/* GET .../archive?path=cpath into the helper's stdin. */
static int archive_to_helper(struct sbx *s, const char *cpath,
                             char *const *args, char **err)
{
	struct docker *d = dk_of(s);
	int to = -1, efd = -1;
	pid_t pid = dk_spawn_helper(args, -1, &to, NULL, &efd, err);
	if (pid < 0)
		return -1;
	struct pump p = {.fd = to};
	buf_init(&p.body, 1u << 20);
	char *q = dk_escape(cpath);
	char *path = xasprintf("/containers/%s/archive?path=%s", d->id, q);
	struct dk_req r = {.method = "GET",
	                   .path = path,
	                   .on_stream = pump_write,
	                   .on_done = pump_done,
	                   .arg = &p,
	                   .sync = 1};
	char *why = NULL;
	dk_send(&d->api, &r, &why);
	close(to);
	char *herr = NULL;
	int hrc = dk_wait_helper(pid, efd, &herr);
	int rc = 0;
	if (why) {
		rc = set_err(err, "%s", why);
	} else if (p.status != 200) {
		char *m = p.status ? dk_message(p.status, &p.body) : NULL;
		rc = set_err(err, "docker: cannot read %s: %s", cpath,
		             m       ? m
		             : p.err ? p.err
		                     : "no answer");
		free(m);
	} else if (hrc < 0) {
		rc = set_err(err, "%s", herr);
	} else if (p.err && !p.broken) {
		rc = set_err(err, "docker: reading %s: %s", cpath, p.err);
	}
	free(herr);
	free(why);
	free(p.err);
	buf_free(&p.body);
	free(q);
	free(path);
	return rc;
}

int dk_fetch(struct sbx *s, const char *rel, const char *dest, char **err)
{
	struct docker *d = dk_of(s);
	if (!d || !d->started || d->stopped)
		return set_err(err, "sandbox: not running");
	const char *argv[] = {"resolve", rel, NULL};
	struct buf out;
	int code = -1;
	if (dk_run_sync(s, argv, &out, PATH_MAX, &code, err) < 0)
		return -1;
	if (code != 0) {
		buf_free(&out);
		return -1; /* *err says why */
	}
	char *cpath = buf_detach(&out);
	const char *name = strrchr(cpath, '/');
	name = name && name[1] ? name + 1 : "workspace";
	char *args[] = {"extract", (char *)dest, (char *)name, NULL};
	int rc = archive_to_helper(s, cpath, args, err);
	free(cpath);
	return rc;
}

int dk_export_tar(struct sbx *s, const char *path, char **err)
{
	struct docker *d = dk_of(s);
	if (!d || !d->started)
		return set_err(err, "sandbox: not running");
	char *args[] = {"repack", (char *)path, "workspace", NULL};
	return archive_to_helper(s, "/workspace", args, err);
}

int dk_extract_fd(int fd, const char *name, const char *dest, char **err)
{
	char *args[] = {"extract", (char *)dest, (char *)name, NULL};
	int efd = -1;
	pid_t pid = dk_spawn_helper(args, fd, NULL, NULL, &efd, err);
	if (pid < 0)
		return -1;
	return dk_wait_helper(pid, efd, err);
}

/* ---- staging the inputs, restoring a workspace ---- */

/* PUT the tar that `assay-archive ARGS...` writes on its stdout into
 * /workspace; what says what for errors ("stage the inputs"). The
 * helper's own failure wins: it says why its tar was cut. */
static int put_from_helper(struct sbx *s, char *const *args, const char *what,
                           char **err)
{
	struct docker *d = dk_of(s);
	int from = -1, efd = -1;
	pid_t pid = dk_spawn_helper(args, -1, NULL, &from, &efd, err);
	if (pid < 0)
		return -1;
	/* fewer, larger reads and writes between the helper and curl */
	fcntl(from, F_SETPIPE_SZ, 1 << 20);
	struct pump p = {.fd = from};
	buf_init(&p.body, 1u << 20);
	char *path = xasprintf("/containers/%s/archive?path=/workspace"
	                       "&copyUIDGID=1",
	                       d->id);
	struct dk_req r = {.method = "PUT",
	                   .path = path,
	                   .content_type = "application/x-tar",
	                   .read_body = pump_read,
	                   .on_done = pump_done,
	                   .arg = &p,
	                   .sync = 1};
	char *why = NULL;
	dk_send(&d->api, &r, &why);
	close(from);
	char *herr = NULL;
	int hrc = dk_wait_helper(pid, efd, &herr);
	int rc = 0;
	if (hrc < 0) {
		rc = set_err(err, "%s", herr);
	} else if (why) {
		rc = set_err(err, "%s", why);
	} else if (p.status != 200) {
		char *m = p.status ? dk_message(p.status, &p.body) : NULL;
		rc = set_err(err, "docker: cannot %s: %s", what,
		             m       ? m
		             : p.err ? p.err
		                     : "no answer");
		free(m);
	}
	free(herr);
	free(why);
	free(p.err);
	buf_free(&p.body);
	free(path);
	return rc;
}

int dk_stage(struct sbx *s, char **err)
{
	const struct config *cfg = s->cfg;
	if (!cfg->n_inputs)
		return 0;
	char **args = xcalloc(4 + 2 * cfg->n_inputs, sizeof *args);
	size_t n = 0;
	args[n++] = "pack";
	args[n++] = "--skip";
	args[n++] = s->run_dir;
	for (size_t i = 0; i < cfg->n_inputs; i++) {
		args[n++] = cfg->inputs[i].src;
		args[n++] = cfg->inputs[i].dest;
	}
	int rc = put_from_helper(s, args, "stage the inputs", err);
	free(args);
	return rc;
}

int dk_import_tar(struct sbx *s, const char *path, char **err)
{
	struct docker *d = dk_of(s);
	if (!d || !d->started || d->stopped)
		return set_err(err, "sandbox: not running");
	/* the helper checks every entry before it writes the clean tar */
	char *args[] = {"restore", (char *)path, NULL};
	return put_from_helper(s, args, "restore the workspace", err);
}
