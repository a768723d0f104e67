/* archive_http.c: `assay-archive http`, one transfer with a Docker
 * daemon's archive API or an OpenSandbox execd's files API: GET writes
 * the body to stdout, PUT and POST send stdin (POST --multipart as
 * execd's upload form), progress lines for what is sent; the exit
 * codes are in assay_archive.c's usage. */
#include "assay/buf.h"
#include "assay/http.h"
#include "assay/strv.h"
#include "assay/util.h"
#include "helpers/archive_delta.h"
#include "sandbox/xfer.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HTTP_ERR_BODY (64u << 10)

struct hx {
	long status;
	struct buf body; /* of an error answer */
	char *err;
	int broken;
	const char *progress; /* the subject of PUT's progress lines */
	double sent, total;
	int64_t said; /* when the last line was printed */
	/* --multipart: stdin as the file part of an execd upload, between
	 * the metadata part (pre) and the closing boundary (post) */
	struct buf pre, post;
	size_t pre_off, post_off;
	int in_eof;
};

/* --headers FILE: one "Name: value" a line (an endpoint's headers,
 * kept out of argv), after the fixed ones. */
static int hx_headers(const char *file, struct strv *out)
{
	size_t len = 0;
	char *err = NULL;
	char *text = read_file_max(file, 1u << 20, &len, &err);
	if (!text) {
		fprintf(stderr, "%s\n", err ? err : "cannot read the headers");
		free(err);
		return -1;
	}
	for (char *line = text, *nl; *line; line = nl) {
		nl = line + strcspn(line, "\n");
		if (*nl)
			*nl++ = '\0';
		if (*line)
			strv_push(out, line);
	}
	free(text);
	return 0;
}

/* PUT's progress: a JSON line on stdout (the sandbox relays it). */
static void hx_progress(struct hx *h, double total)
{
	archive_progress_line(h->progress, h->sent, total);
	h->said = now_ms();
}

static void hx_response(struct http_xfer *x, long status, void *arg)
{
	(void)x;
	((struct hx *)arg)->status = status;
}

/* A 2xx body goes to stdout; an error's is kept for its message. */
static int hx_data(struct http_xfer *x, const char *data, size_t n, void *arg)
{
	struct hx *h = arg;
	(void)x;
	if (h->status < 200 || h->status >= 300) {
		if (h->body.len + n <= h->body.max)
			buf_append(&h->body, data, n);
		return 0;
	}
	while (n > 0) {
		ssize_t w = write(1, data, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			h->broken = 1;
			return -1;
		}
		data += w;
		n -= (size_t)w;
	}
	return 0;
}

static void hx_done(struct http_xfer *x, int ok, const char *errmsg, void *arg)
{
	struct hx *h = arg;
	(void)x;
	if (!ok)
		h->err = xstrdup(errmsg ? errmsg : "transfer failed");
}

/* Copy what is left of part (from *off) into b. */
static long hx_part(const struct buf *part, size_t *off, char *b, size_t n)
{
	size_t k = part->len - *off < n ? part->len - *off : n;
	memcpy(b, part->data + *off, k);
	*off += k;
	return (long)k;
}

/* The PUT body: stdin, blocking (this process does nothing else). */
static long hx_read(char *b, size_t n, void *arg)
{
	struct hx *h = arg;
	if (h->pre.data && h->pre_off < h->pre.len)
		return hx_part(&h->pre, &h->pre_off, b, n);
	if (h->post.data && h->in_eof)
		return hx_part(&h->post, &h->post_off, b, n);
	for (;;) {
		ssize_t r = read(0, b, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0 && h->progress) {
			h->sent += (double)r;
			if (now_ms() - h->said >= 500)
				hx_progress(h, h->total);
		}
		if (r == 0 && h->post.data && !h->in_eof) {
			h->in_eof = 1;
			return hx_part(&h->post, &h->post_off, b, n);
		}
		return r < 0 ? -1 : (long)r;
	}
}

/* http [options] GET|PUT URL: see the top of the file. */
int archive_http(int argc, char **argv)
{
	struct http_request r = {.body_size = -1};
	struct hx h = {0};
	struct strv hdrs = {0};
	const char *upload = NULL;
	int i = 0, rc = 0;
	for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--insecure"))
			r.no_verify = 1;
		else if (!strcmp(argv[i], "--unix"))
			r.unix_socket = argv[++i];
		else if (!strcmp(argv[i], "--ca"))
			r.ca_file = argv[++i];
		else if (!strcmp(argv[i], "--cert"))
			r.cert_file = argv[++i];
		else if (!strcmp(argv[i], "--key"))
			r.key_file = argv[++i];
		else if (!strcmp(argv[i], "--progress"))
			h.progress = argv[++i];
		else if (!strcmp(argv[i], "--total"))
			h.total = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--multipart"))
			upload = argv[++i];
		else if (!strcmp(argv[i], "--headers")) {
			if (hx_headers(argv[++i], &hdrs) < 0)
				return 1;
		} else
			return archive_usage();
	}
	if (argc - i != 2 ||
	    (strcmp(argv[i], "GET") && strcmp(argv[i], "PUT") &&
	     strcmp(argv[i], "POST")))
		return archive_usage();
	h.said = now_ms();
	buf_init(&h.body, HTTP_ERR_BODY);
	strv_push(&hdrs, upload ? XFER_UPLOAD_CTYPE
	                        : "Content-Type: application/x-tar");
	if (upload) /* execd's upload form around stdin */
		xfer_upload_form(upload, &h.pre, &h.post);
	r.method = argv[i];
	r.url = argv[i + 1];
	r.on_response = hx_response;
	r.on_data = hx_data;
	r.on_done = hx_done;
	r.arg = &h;
	if (strcmp(r.method, "GET")) {
		r.read_body = hx_read;
	} else {
		r.low_speed_time_s = 1000000000L; /* the reader sets the pace */
		free(hdrs.v[--hdrs.n]);           /* no body, no type */
		hdrs.v[hdrs.n] = NULL;
	}
	r.headers = (const char *const *)hdrs.v;
	char *err = NULL;
	if (http_perform(&r, &err) < 0 && err) {
		h.err = err;
		err = NULL;
	}
	if (h.broken) {
		rc = 5;
	} else if (h.status && (h.status < 200 || h.status >= 300)) {
		char *m = xfer_message(h.status, &h.body);
		fprintf(stderr, "%s\n", m);
		free(m);
		rc = 3;
	} else if (h.err || !h.status) {
		fprintf(stderr, "%s\n", h.err ? h.err : "no answer");
		rc = h.status ? 6 : 4; /* cut short, or no answer at all */
	} else if (h.progress && h.sent > 0) {
		hx_progress(&h, h.sent); /* the whole */
	}
	free(h.err);
	buf_free(&h.body);
	buf_free(&h.pre);
	buf_free(&h.post);
	strv_free(&hdrs);
	return rc;
}
