/* http.h: HTTP transfers on libcurl's multi interface, driven by the
 * loop (CURLMOPT_SOCKETFUNCTION / TIMERFUNCTION). Bodies stream to a
 * callback; nothing here blocks. */
#ifndef ASSAY_HTTP_H
#define ASSAY_HTTP_H

#include <stddef.h>

struct loop;
struct http;
struct http_xfer;

struct http_request {
	const char *method; /* "GET", "POST", ... */
	const char *url;
	const char *const *headers; /* "Name: value", NULL-terminated */
	const char *body;           /* may be NULL */
	size_t body_len;
	const char *unix_socket; /* connect through this socket (Docker) */
	long connect_timeout_ms; /* 0 = 10 s */
	long low_speed_time_s; /* abort if < 1 byte/s for this long; 0 = 300 */
	long total_timeout_ms; /* 0 = none (streams) */
	/* A body produced while it is sent, instead of body: return the
	 * bytes put in buf (0 at the end, -1 to abort). It may block only
	 * under http_perform. body_size: its length, -1 if unknown
	 * (chunked). */
	long (*read_body)(char *buf, size_t n, void *arg);
	long long body_size;
	/* TLS (https URLs): CA bundle, client certificate and key (PEM);
	 * NULL = curl's defaults. no_verify skips checking the server. */
	const char *ca_file;
	const char *cert_file;
	const char *key_file;
	int no_verify;

	/* Called once, when the status line and headers are in. */
	void (*on_response)(struct http_xfer *x, long status, void *arg);
	/* Body bytes as they arrive; return -1 to cancel the transfer. */
	int (*on_data)(struct http_xfer *x, const char *data, size_t n,
	               void *arg);
	/* Always called exactly once at the end (not after http_cancel).
	 * ok is 1 when the transfer completed; else errmsg says why. */
	void (*on_done)(struct http_xfer *x, int ok, const char *errmsg,
	                void *arg);
	void *arg;
};

/* Never NULL. It starts loading libcurl (assay/curllib.h) on a thread;
 * the first http_start waits for that, and fails with why if libcurl
 * could not be loaded. */
struct http *http_new(struct loop *l);
void http_free(struct http *h); /* cancels what is running */

/* Start a transfer; the request is copied. NULL + *err on failure. */
struct http_xfer *http_start(struct http *h, const struct http_request *r,
                             char **err);
/* Stop a transfer without calling on_done; frees it. */
void http_cancel(struct http_xfer *x);

/* Run one transfer to its end, blocking, for short control requests
 * and bodies fed by read_body: the callbacks (on_done included) are
 * called before it returns. 0 when it completed, else -1 (*err set
 * only when it could not start; on_done says why otherwise). */
int http_perform(const struct http_request *r, char **err);

long http_status(const struct http_xfer *x);
/* A response header's value, name compared case-insensitively. */
const char *http_header(const struct http_xfer *x, const char *name);

#endif
