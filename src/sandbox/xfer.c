/* xfer.c: what the backends whose workspace lives elsewhere (docker,
 * opensandbox) share to move it: whole trees as tar streams between
 * two assay-archive helpers run as loop children joined by a pipe
 * (`assay-archive http` does the request, the other side packs, checks
 * or unpacks the tar, so neither the bytes nor libarchive pass through
 * assay), the pack arguments of the inputs, a delta's records, and the
 * HTTP pieces both servers need (a URL-escaped path, an error reply's
 * message, the upload form). */
#include "assay/config.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/xfer.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* `assay-archive http` exits: see src/helpers/assay_archive.c. */
enum {
	XF_STATUS = 3, /* the daemon answered with an error */
	XF_NO_ANSWER = 4,
	XF_BROKEN = 5, /* the reader gave up */
	XF_CUT = 6,    /* the transfer broke after a good answer */
};

#define XF_PROGRESS_LINES 1000000 /* repack's, at most */

struct xfer {
	struct sbx *s;
	struct sbx_child *http, *tar;
	int get;        /* GET: http | tar; else tar | http */
	char *subject;  /* what the errors name: a path or an action */
	char *tmp_base; /* the tar side's output, "%s.tmp.<pid>" meanwhile */
	int http_code, tar_ok;
	/* repack's progress lines (a GET of the workspace), or the http
	 * side's (a PUT), to the sandbox's progress hook as label */
	struct sbx_listing progress;
	const char *label; /* "saving", "staging", "restoring" */
	int64_t t0;
	char *http_err, *tar_err;
	void (*done)(void *arg, char *err);
	void *arg;
};

void xfer_free(struct xfer *x)
{
	if (!x)
		return;
	if (x->tmp_base && x->tar) {
		char *tmp = xasprintf("%s.tmp.%d", x->tmp_base,
		                      (int)sbx_child_pid(x->tar));
		sbx_child_free(x->tar);
		x->tar = NULL;
		unlink(tmp); /* killed mid-archive */
		free(tmp);
	}
	sbx_child_free(x->http);
	sbx_child_free(x->tar);
	sbx_listing_free(&x->progress);
	free(x->subject);
	free(x->tmp_base);
	free(x->http_err);
	free(x->tar_err);
	free(x);
}

/* Both sides are done: the error that says most, or NULL. */
static char *xfer_error(struct xfer *x)
{
	const char *h = x->http_err ? x->http_err : "no answer";
	const char *who = x->s->ops->name;
	if (!x->get) { /* the helper's own failure wins: it says why */
		if (!x->tar_ok)
			return xstrdup(x->tar_err);
		if (x->http_code)
			return xasprintf("%s: cannot %s: %s", who, x->subject,
			                 h);
		return NULL;
	}
	if (x->http_code == XF_STATUS || x->http_code == XF_NO_ANSWER)
		return xasprintf("%s: cannot read %s: %s", who, x->subject, h);
	if (!x->tar_ok)
		return xstrdup(x->tar_err);
	if (x->http_code)
		return xasprintf("%s: reading %s: %s", who, x->subject, h);
	return NULL;
}

/* One side ended; once both have, report. */
static void xfer_side_done(struct xfer *x, struct sbx_child *c)
{
	if (c == x->http) {
		x->http_code = sbx_child_ok(c) ? 0 : sbx_child_code(c);
		if (x->http_code)
			x->http_err = sbx_child_error(c, "the transfer");
		if (x->http_code < 0)
			x->http_code = XF_NO_ANSWER; /* killed: no answer */
		x->http = NULL;
	} else {
		x->tar_ok = sbx_child_ok(c);
		if (x->tar_ok)
			sbx_child_log(c, "archive");
		else
			x->tar_err = sbx_child_error(c, "archive: the helper");
		x->tar = NULL;
	}
	sbx_child_free(c);
	if (x->http || x->tar)
		return;
	void (*done)(void *, char *) = x->done;
	void *arg = x->arg;
	char *err = xfer_error(x);
	if (err)
		sbx_progress_cut(x->s, &x->progress, x->label);
	xfer_free(x);
	done(arg, err);
}

static void xfer_http_exit(void *arg, struct sbx_child *c)
{
	xfer_side_done(arg, c);
}

static void xfer_tar_exit(void *arg, struct sbx_child *c)
{
	xfer_side_done(arg, c);
}

/* repack's stdout (how much of the workspace is saved), or a PUT's
 * http side's (how much is sent). */
static void xfer_progress_out(void *arg, const char *data, size_t n)
{
	struct xfer *x = arg;
	sbx_progress_feed(x->s, &x->progress, x->label, x->t0, data, n);
}

/* Start both sides, the first writing into the second. */
static struct xfer *xfer_start(struct sbx *s, struct xfer *x,
                               char *const *first, char *const *second,
                               char **err)
{
	int p[2] = {-1, -1};
	if (pipe2(p, O_CLOEXEC) < 0) {
		set_err(err, "%s: pipe: %s", s->ops->name, strerror(errno));
		xfer_free(x);
		return NULL;
	}
	/* fewer, larger reads and writes between the two */
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	struct sbx_child_spec a = {.in_fd = -1, .out_fd = p[1], .arg = x};
	struct sbx_child_spec b = {.in_fd = p[0], .out_fd = -1, .arg = x};
	if (x->get && !strcmp(second[0], "repack"))
		x->label = "saving";
	else if (x->get && !strcmp(second[0], "extract") && second[1] &&
	         !strcmp(second[1], "--progress"))
		x->label = "delivering"; /* an output */
	if (x->label) { /* the second side's stdout is free either way */
		b.out_fd = SBX_CHILD_PIPE;
		b.on_out = xfer_progress_out;
		sbx_listing_init(&x->progress, XF_PROGRESS_LINES);
		x->t0 = now_ms();
	}
	a.on_exit = x->get ? xfer_http_exit : xfer_tar_exit;
	b.on_exit = x->get ? xfer_tar_exit : xfer_http_exit;
	struct sbx_child *ca = sbx_archive_spawn(s->loop, first, 1, &a, err);
	struct sbx_child *cb =
	    ca ? sbx_archive_spawn(s->loop, second, 1, &b, err) : NULL;
	close(p[0]);
	close(p[1]);
	x->http = x->get ? ca : cb;
	x->tar = x->get ? cb : ca;
	if (!ca || !cb) {
		xfer_free(x);
		return NULL;
	}
	return x;
}

/* A transfer, its two children not yet started. */
static struct xfer *xfer_new(struct sbx *s, int get, const char *subject,
                             void (*done)(void *arg, char *err), void *arg)
{
	struct xfer *x = xcalloc(1, sizeof *x);
	x->s = s;
	x->get = get;
	x->subject = xstrdup(subject);
	x->done = done;
	x->arg = arg;
	return x;
}

struct xfer *xfer_get(struct sbx *s, const char *subject,
                      char *const *http_argv, char *const *args,
                      const char *tmp_base, void (*done)(void *arg, char *err),
                      void *arg, char **err)
{
	struct xfer *x = xfer_new(s, 1, subject, done, arg);
	x->tmp_base = tmp_base ? xstrdup(tmp_base) : NULL;
	return xfer_start(s, x, http_argv, args, err);
}

struct xfer *xfer_put(struct sbx *s, char *const *args, char *const *http_argv,
                      const char *what, const char *label,
                      void (*done)(void *arg, char *err), void *arg, char **err)
{
	struct xfer *x = xfer_new(s, 0, what, done, arg);
	x->label = label;
	return xfer_start(s, x, args, http_argv, err);
}

/* The tar pack makes of the SRC DEST pairs' files (a header and the
 * data in 512-byte blocks each, two blocks at the end), for the
 * staging's progress: 0 (not known) when a SRC is a directory. */
double xfer_pack_bytes(char *const *pairs, size_t n)
{
	double bytes = 1024;
	for (size_t i = 0; i + 1 < n; i += 2) {
		if (!strcmp(pairs[i], "--ro")) {
			i--;
			continue;
		}
		struct stat st;
		if (stat(pairs[i], &st) < 0 || !S_ISREG(st.st_mode))
			return 0;
		bytes += 512 + (double)((st.st_size + 511) / 512 * 512);
	}
	return bytes;
}

char **xfer_pack_args(struct sbx *s, int all, size_t *count, int *ro_out)
{
	const struct config *cfg = s->cfg;
	char **args = xcalloc(6 + 2 * cfg->n_inputs, sizeof *args);
	size_t n = 0;
	args[n++] = "pack";
	args[n++] = "--skip";
	args[n++] = s->run_dir;
	/* the copies first, then (a daemon that cannot bind this
	 * machine's files) the inputs that would be bound, read-only:
	 * their parents' modes are the last said */
	int ro = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < cfg->n_inputs; i++) {
			/* bound, not copied; on a resume only what the run
			 * had bound (a copy is in the restored workspace) */
			if (sbx_input_mounted(s, i) ||
			    (!all && cfg->inputs[i].copy) ||
			    (pass == 0) != (cfg->inputs[i].copy != 0))
				continue;
			if (pass && !ro++)
				args[n++] = "--ro";
			args[n++] = cfg->inputs[i].src;
			args[n++] = cfg->inputs[i].dest;
		}
	}
	*count = n;
	*ro_out = ro;
	return args;
}

void xfer_delta_records(struct buf *b, const struct sbx_delta *d)
{
	const struct strv *lists[] = {&d->gone, &d->dirs, &d->files};
	const char kinds[] = "xdf";
	for (int k = 0; k < 3; k++)
		for (size_t i = 0; i < lists[k]->n; i++) {
			buf_append(b, &kinds[k], 1);
			buf_append(b, lists[k]->v[i],
			           strlen(lists[k]->v[i]) + 1);
		}
}

char *xfer_message(long status, const struct buf *body)
{
	cJSON *j = body && body->len
	               ? cJSON_ParseWithLength(body->data, body->len)
	               : NULL;
	const char *m = json_str(j, "message", NULL);
	char *out;
	if (m)
		out = xstrdup(m);
	else if (body && body->len)
		out = utf8_sanitize(body->data,
		                    body->len < 300 ? body->len : 300, NULL);
	else
		out = xasprintf("HTTP status %ld", status);
	cJSON_Delete(j);
	/* one line */
	for (char *p = out; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return out;
}

char *xfer_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	struct buf b;
	buf_init(&b, 0);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (isalnum(*p) || strchr("-_.~/", *p)) {
			char ch = (char)*p;
			buf_append(&b, &ch, 1);
		} else {
			char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
			buf_append(&b, e, 3);
		}
	}
	return buf_detach(&b);
}

void xfer_upload_form(const char *path, struct buf *pre, struct buf *post)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "path", path);
	cJSON_AddNumberToObject(m, "mode", 644);
	char *meta = cJSON_PrintUnformatted(m);
	cJSON_Delete(m);
	buf_init(pre, 0);
	buf_init(post, 0);
	buf_printf(pre,
	           "--" XFER_UPLOAD_BOUNDARY "\r\n"
	           "Content-Disposition: form-data; name=\"metadata\"; "
	           "filename=\"metadata\"\r\n"
	           "Content-Type: application/json\r\n\r\n%s\r\n"
	           "--" XFER_UPLOAD_BOUNDARY "\r\n"
	           "Content-Disposition: form-data; name=\"file\"; "
	           "filename=\"upload\"\r\n"
	           "Content-Type: application/octet-stream\r\n\r\n",
	           meta);
	buf_puts(post, "\r\n--" XFER_UPLOAD_BOUNDARY "--\r\n");
	free(meta);
}
