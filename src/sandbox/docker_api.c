/* docker_api.c: talking to the Docker daemon. Where it is (DOCKER_HOST,
 * DOCKER_CERT_PATH, DOCKER_TLS_VERIFY), which API version to speak
 * (negotiated, never hard-coded: engines 29.x refuse anything below
 * 1.44), and requests over http.h: on the loop, or blocking for the
 * two callers without a loop to wait on (sbx_free's last resort and
 * `assay doctor`, whose probe is docker_probe.c). */
#include "assay/http.h"
#include "assay/json.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DK_DEFAULT_SOCKET "/var/run/docker.sock"
#define DK_MAX_BODY (4u << 20)
#define DK_STREAM_STALL_S 1000000000L /* exec streams may be silent */

/* ---- endpoint ---- */

void dk_endpoint_free(struct dk_endpoint *ep)
{
	free(ep->host);
	free(ep->unix_path);
	free(ep->base);
	free(ep->ca);
	free(ep->cert);
	free(ep->key);
	memset(ep, 0, sizeof *ep);
}

/* dir/name when it is readable, else NULL. */
static char *tls_file(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	if (access(p, R_OK) == 0)
		return p;
	free(p);
	return NULL;
}

/* tcp://host[:port] -> http(s)://host:port */
static int parse_tcp(const char *rest, struct dk_endpoint *ep, char **err)
{
	size_t n = strcspn(rest, "/?#");
	if (n == 0)
		return set_err(err,
		               "DOCKER_HOST=%s has no host name: use "
		               "tcp://HOST:PORT",
		               ep->host);
	char *hp = xstrndup(rest, n);
	const char *scheme = ep->tls ? "https" : "http";
	const char *colon = strrchr(hp, ':');
	int bracketed = hp[0] == '[';
	int has_port = colon && (!bracketed || colon > strchr(hp, ']'));
	if (has_port)
		ep->base = xasprintf("%s://%s", scheme, hp);
	else
		ep->base =
		    xasprintf("%s://%s:%d", scheme, hp, ep->tls ? 2376 : 2375);
	free(hp);
	return 0;
}

int dk_endpoint_parse(const char *docker_host, const char *cert_path,
                      const char *tls_verify, const char *home,
                      struct dk_endpoint *ep, char **err)
{
	memset(ep, 0, sizeof *ep);
	const char *h = docker_host && *docker_host
	                    ? docker_host
	                    : "unix://" DK_DEFAULT_SOCKET;
	ep->host = xstrdup(h);
	if (!strncmp(h, "unix://", 7)) {
		if (!h[7]) {
			set_err(err,
			        "DOCKER_HOST=%s names no socket: use "
			        "unix:///var/run/docker.sock",
			        h);
			goto fail;
		}
		ep->unix_path = xstrdup(h + 7);
		ep->base = xstrdup("http://docker");
		return 0;
	}
	if (strncmp(h, "tcp://", 6)) {
		set_err(err,
		        "DOCKER_HOST=%s: assay speaks to unix:// and tcp:// "
		        "daemons (for ssh://, forward the socket with ssh -L "
		        "and use unix:// or tcp://)",
		        h);
		goto fail;
	}
	ep->tls = tls_verify && *tls_verify;
	ep->verify = ep->tls;
	if (ep->tls) {
		char *dir = cert_path && *cert_path
		                ? xstrdup(cert_path)
		                : xasprintf("%s/.docker", home ? home : "");
		ep->ca = tls_file(dir, "ca.pem");
		ep->cert = tls_file(dir, "cert.pem");
		ep->key = tls_file(dir, "key.pem");
		int missing = !ep->ca || !ep->cert || !ep->key;
		if (missing)
			set_err(err,
			        "DOCKER_TLS_VERIFY is set but %s lacks ca.pem, "
			        "cert.pem or key.pem: set DOCKER_CERT_PATH to "
			        "the directory that holds them",
			        dir);
		free(dir);
		if (missing)
			goto fail;
	}
	if (parse_tcp(h + 6, ep, err) < 0)
		goto fail;
	return 0;
fail:
	dk_endpoint_free(ep);
	return -1;
}

/* ---- versions ---- */

/* "1.41" into its two numbers; -1 if it is not a version. */
static int parse_version(const char *v, long *major, long *minor)
{
	char *end;
	if (!v || !isdigit((unsigned char)*v))
		return -1;
	*major = strtol(v, &end, 10);
	if (*end != '.' || !isdigit((unsigned char)end[1]))
		return -1;
	*minor = strtol(end + 1, &end, 10);
	return *end ? -1 : 0;
}

int dk_version_cmp(const char *a, const char *b)
{
	long amaj = -1, amin = -1, bmaj = -1, bmin = -1;
	if (parse_version(a, &amaj, &amin) < 0)
		amaj = amin = -1;
	if (parse_version(b, &bmaj, &bmin) < 0)
		bmaj = bmin = -1;
	if (amaj != bmaj)
		return amaj < bmaj ? -1 : 1;
	if (amin != bmin)
		return amin < bmin ? -1 : 1;
	return 0;
}

/* Whether DOCKER_API_VERSION can be spoken with this daemon. */
static int check_pinned(const char *v, const char *server_max,
                        const char *server_min, char **err)
{
	long maj, min;
	if (parse_version(v, &maj, &min) < 0)
		return set_err(err,
		               "DOCKER_API_VERSION=%s is not a version like "
		               "1.41: fix or unset it",
		               v);
	if (dk_version_cmp(v, DK_API_MIN) < 0)
		return set_err(err,
		               "DOCKER_API_VERSION=%s is older than assay can "
		               "speak (%s): unset it",
		               v, DK_API_MIN);
	if (server_max && dk_version_cmp(v, server_max) > 0)
		return set_err(err,
		               "API version refused: DOCKER_API_VERSION=%s but "
		               "the daemon speaks at most %s: unset "
		               "DOCKER_API_VERSION or set it to %s",
		               v, server_max, server_max);
	if (server_min && dk_version_cmp(v, server_min) < 0)
		return set_err(err,
		               "API version refused: DOCKER_API_VERSION=%s but "
		               "the daemon needs at least %s: unset "
		               "DOCKER_API_VERSION",
		               v, server_min);
	return 0;
}

int dk_negotiate(const char *pinned, const char *server_max,
                 const char *server_min, char **out, char **err)
{
	*out = NULL;
	if (pinned && *pinned) {
		const char *v = pinned[0] == 'v' ? pinned + 1 : pinned;
		if (check_pinned(v, server_max, server_min, err) < 0)
			return -1;
		*out = xstrdup(v);
		return 0;
	}
	long maj, min;
	if (!server_max || parse_version(server_max, &maj, &min) < 0)
		return set_err(err,
		               "the daemon did not say which API version it "
		               "speaks (Docker older than 1.13?): assay needs "
		               "API %s or newer",
		               DK_API_MIN);
	const char *v = dk_version_cmp(server_max, DK_API_MAX) < 0 ? server_max
	                                                           : DK_API_MAX;
	if (dk_version_cmp(v, DK_API_MIN) < 0)
		return set_err(err,
		               "the daemon speaks API %s at most; assay needs "
		               "%s or newer: upgrade Docker",
		               server_max, DK_API_MIN);
	if (server_min && dk_version_cmp(server_min, v) > 0)
		return set_err(err,
		               "API version refused: the daemon needs API %s "
		               "or newer and this assay speaks %s at most: "
		               "upgrade assay",
		               server_min, DK_API_MAX);
	*out = xstrdup(v);
	return 0;
}

/* ---- requests ---- */

struct dk_call {
	struct dk_api *a;
	struct http_xfer *x;
	struct dk_req r;
	struct buf body;
	long status;
	int streaming;
	int too_big;
};

/* The status is in: keep it and the header asked for. */
static void call_response(struct http_xfer *x, long status, void *arg)
{
	struct dk_call *c = arg;
	c->status = status;
	c->streaming = c->r.on_stream && status >= 200 && status < 300;
	if (c->r.header_name && c->r.header_value) {
		const char *v = http_header(x, c->r.header_name);
		free(*c->r.header_value);
		*c->r.header_value = v ? xstrdup(v) : NULL;
	}
}

/* Body bytes: streamed to on_stream, else collected (bounded). */
static int call_data(struct http_xfer *x, const char *data, size_t n, void *arg)
{
	struct dk_call *c = arg;
	(void)x;
	if (c->streaming)
		return c->r.on_stream(c->r.arg, data, n);
	if (buf_append(&c->body, data, n) < 0) {
		c->too_big = 1;
		return -1;
	}
	return 0;
}

static long call_read(char *buf, size_t n, void *arg)
{
	struct dk_call *c = arg;
	return c->r.read_body(buf, n, c->r.arg);
}

/* The transfer ended: hand the answer over, then free the call. */
static void call_done(struct http_xfer *x, int ok, const char *errmsg,
                      void *arg)
{
	struct dk_call *c = arg;
	(void)x;
	char *msg = NULL;
	if (c->too_big)
		msg = xasprintf("the daemon's reply passed %zu bytes",
		                c->body.max);
	else if (!ok)
		msg = xstrdup(errmsg ? errmsg : "transfer failed");
	if (c->r.on_json) {
		cJSON *j = c->body.len ? cJSON_ParseWithLength(c->body.data,
		                                               c->body.len)
		                       : NULL;
		char *m = !msg && c->status >= 300
		              ? xfer_message(c->status, &c->body)
		              : NULL;
		c->r.on_json(c->r.arg, msg ? 0 : c->status, j, msg ? msg : m);
		cJSON_Delete(j);
		free(m);
	} else if (c->r.on_done) {
		c->r.on_done(c->r.arg, c->status, &c->body, msg);
	}
	free(msg);
	buf_free(&c->body);
	free(c);
}

struct dk_call *dk_send(struct dk_api *a, const struct dk_req *r, char **err)
{
	struct dk_call *c = xcalloc(1, sizeof *c);
	c->a = a;
	c->r = *r;
	buf_init(&c->body, r->max_body ? r->max_body : DK_MAX_BODY);
	char *url =
	    r->unversioned || !a->version
	        ? xasprintf("%s%s", a->ep.base, r->path)
	        : xasprintf("%s/v%s%s", a->ep.base, a->version, r->path);
	char *ctype = NULL;
	if (r->content_type || r->json)
		ctype = xasprintf("Content-Type: %s", r->content_type
		                                          ? r->content_type
		                                          : "application/json");
	const char *headers[] = {ctype, NULL};
	struct http_request hr = {
	    .method = r->method,
	    .url = url,
	    .headers = headers,
	    .body = r->json,
	    .body_len = r->body_len ? r->body_len
	                : r->json   ? strlen(r->json)
	                            : 0,
	    .unix_socket = a->ep.unix_path,
	    .low_speed_time_s = r->on_stream ? DK_STREAM_STALL_S : 0,
	    .total_timeout_ms = r->timeout_ms,
	    .on_response = call_response,
	    .on_data = call_data,
	    .on_done = call_done,
	    .arg = c,
	    .read_body = r->read_body ? call_read : NULL,
	    .body_size = -1,
	    .ca_file = a->ep.ca,
	    .cert_file = a->ep.cert,
	    .key_file = a->ep.key,
	    .no_verify = a->ep.tls && !a->ep.verify,
	};
	struct dk_call *ret = c;
	if (r->sync) {
		char *e = NULL;
		if (http_perform(&hr, &e) < 0 && e) {
			/* could not start: call_done did not run */
			set_err(err, "docker: %s", e);
			free(e);
			buf_free(&c->body);
			free(c);
		}
		ret = NULL;
	} else {
		c->x = http_start(a->http, &hr, err);
		if (!c->x) {
			buf_free(&c->body);
			free(c);
			ret = NULL;
		}
	}
	free(url);
	free(ctype);
	return ret;
}

void dk_cancel(struct dk_call *c)
{
	if (!c)
		return;
	http_cancel(c->x);
	buf_free(&c->body);
	free(c);
}

struct dk_call *
dk_json_call(struct dk_api *a, const char *method, const char *path,
             const char *json, long timeout_ms,
             void (*fn)(void *arg, long status, cJSON *reply, const char *err),
             void *arg, char **err)
{
	struct dk_req r = {.method = method,
	                   .path = path,
	                   .json = json,
	                   .on_json = fn,
	                   .arg = arg,
	                   .timeout_ms = timeout_ms};
	return dk_send(a, &r, err);
}

struct json_wait {
	long status;
	char *err;
	struct buf body;
	int done;
};

/* dk_json: keep what came back for the caller waiting. */
static void json_done(void *arg, long status, struct buf *body, const char *err)
{
	struct json_wait *w = arg;
	w->status = status;
	w->err = err ? xstrdup(err) : NULL;
	buf_append(&w->body, body->data ? body->data : "", body->len);
	w->done = 1;
}

long dk_json(struct dk_api *a, const char *method, const char *path,
             const char *json, cJSON **reply, char **err)
{
	struct json_wait w = {0};
	buf_init(&w.body, 0);
	struct dk_req r = {.method = method,
	                   .path = path,
	                   .json = json,
	                   .on_done = json_done,
	                   .arg = &w,
	                   .timeout_ms = 120000,
	                   .sync = 1};
	if (reply)
		*reply = NULL;
	dk_send(a, &r, err);
	long status = -1;
	if (!w.done) {
		/* dk_send said why */
	} else if (!w.status) {
		set_err(err, "%s", w.err ? w.err : "no reply");
	} else {
		status = w.status;
		if (reply && w.body.len)
			*reply = cJSON_ParseWithLength(w.body.data, w.body.len);
		if (status >= 300 && err && !*err)
			*err = xfer_message(status, &w.body);
	}
	free(w.err);
	buf_free(&w.body);
	return status;
}
