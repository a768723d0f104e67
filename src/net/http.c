/* http.c: HTTP transfers on libcurl's multi interface, driven by the
 * loop: curl tells us which sockets to watch and when to wake it
 * (CURLMOPT_SOCKETFUNCTION / TIMERFUNCTION) and we call it back with
 * curl_multi_socket_action. User callbacks may cancel transfers, start
 * new ones or free the whole http from inside: anything curl forbids
 * from inside its own callbacks is deferred until it has returned. */
#include "assay/http.h"
#include "assay/curllib.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define HTTP_MAX_HEADERS 200
#define HTTP_MAX_HEADER_BYTES (64 * 1024)

struct http_hdr {
	char *name;
	char *value;
};

struct http_xfer {
	struct http *h;
	CURL *easy;
	struct curl_slist *headers;
	void (*on_response)(struct http_xfer *x, long status, void *arg);
	int (*on_data)(struct http_xfer *x, const char *data, size_t n,
	               void *arg);
	void (*on_done)(struct http_xfer *x, int ok, const char *errmsg,
	                void *arg);
	long (*read_body)(char *buf, size_t n, void *arg);
	void *arg;
	long status;
	struct http_hdr *hdrs;
	size_t n_hdrs;
	size_t hdr_bytes;
	int responded;  /* on_response has been called */
	int added;      /* handed to curl_multi_add_handle */
	int cancelled;  /* http_cancel while it could not be freed */
	int in_done;    /* finishing: on_done (or on_response) running */
	int user_abort; /* on_data returned -1 */
	int sock_errno; /* why a socket could not be opened (EMFILE...) */
	struct http_xfer *next;
	char errbuf[CURL_ERROR_SIZE];
};

struct http {
	struct loop *loop;
	CURLM *multi;
	uint64_t timer;
	int depth; /* inside a curl_multi_* call that runs callbacks */
	int busy;  /* inside http_action (curl call + finishing) */
	int freeing;
	struct http_xfer *xfers;
};

static void http_action(struct http *h, curl_socket_t s, int flags);

static void xfer_clear_headers(struct http_xfer *x)
{
	for (size_t i = 0; i < x->n_hdrs; i++) {
		free(x->hdrs[i].name);
		free(x->hdrs[i].value);
	}
	x->n_hdrs = 0;
	x->hdr_bytes = 0;
}

static void xfer_unlink(struct http_xfer *x)
{
	struct http_xfer **pp = &x->h->xfers;

	while (*pp && *pp != x)
		pp = &(*pp)->next;
	if (*pp)
		*pp = x->next;
}

/* Detach from curl and free; only where curl allows removing handles. */
static void xfer_free(struct http_xfer *x)
{
	if (x->added)
		libcurl.multi_remove_handle(x->h->multi, x->easy);
	if (x->h) /* NULL under http_perform */
		xfer_unlink(x);
	libcurl.easy_cleanup(x->easy);
	libcurl.slist_free_all(x->headers);
	xfer_clear_headers(x);
	free(x->hdrs);
	free(x);
}

static void xfer_respond(struct http_xfer *x)
{
	x->responded = 1;
	if (x->status == 0)
		libcurl.easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE,
		                     &x->status);
	if (x->on_response)
		x->on_response(x, x->status, x->arg);
}

static size_t http_write_cb(char *p, size_t size, size_t nmemb, void *arg)
{
	struct http_xfer *x = arg;
	size_t n = size * nmemb;

	if (x->cancelled)
		return 0;
	if (!x->responded)
		xfer_respond(x);
	if (x->cancelled)
		return 0;
	if (x->on_data && x->on_data(x, p, n, x->arg) < 0) {
		x->user_abort = 1;
		return 0;
	}
	return x->cancelled ? 0 : n;
}

static void xfer_add_header(struct http_xfer *x, const char *p, size_t n)
{
	const char *colon = memchr(p, ':', n);

	if (!colon || colon == p || x->n_hdrs >= HTTP_MAX_HEADERS ||
	    x->hdr_bytes + n > HTTP_MAX_HEADER_BYTES)
		return;
	const char *v = colon + 1;
	const char *end = p + n;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (x->n_hdrs % 16 == 0)
		x->hdrs = xrealloc(x->hdrs, (x->n_hdrs + 16) * sizeof *x->hdrs);
	x->hdrs[x->n_hdrs].name = xstrndup(p, (size_t)(colon - p));
	x->hdrs[x->n_hdrs].value = xstrndup(v, (size_t)(end - v));
	x->n_hdrs++;
	x->hdr_bytes += n;
}

/* Each header line; a status line starts a new block (100-continue),
 * so only the last block's headers are kept. The blank line that ends
 * the final block is when on_response comes (as http.h says), not the
 * first body byte: an event stream may send none for long. */
static size_t http_header_cb(char *p, size_t size, size_t nmemb, void *arg)
{
	struct http_xfer *x = arg;
	size_t n = size * nmemb;
	size_t len = n;

	if (x->cancelled)
		return 0;
	while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\r'))
		len--;
	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
		xfer_clear_headers(x);
		const char *sp = memchr(p, ' ', len);
		x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
	} else if (len > 0) {
		xfer_add_header(x, p, len);
	} else if (x->status >= 200 && !x->responded) {
		xfer_respond(x);
	}
	return x->cancelled ? 0 : n;
}

/* A transfer curl has finished: report it once, then free it. */
static void xfer_finish(struct http_xfer *x, CURLcode rc)
{
	if (x->h)
		libcurl.multi_remove_handle(x->h->multi, x->easy);
	x->added = 0;
	x->in_done = 1;
	if (!x->responded && !x->cancelled && (rc == CURLE_OK || x->status))
		xfer_respond(x);
	if (!x->cancelled && x->on_done) {
		const char *msg = NULL;
		if (x->user_abort)
			msg = "transfer stopped by the receiver";
		else if (rc != CURLE_OK)
			msg = x->errbuf[0] ? x->errbuf
			                   : libcurl.easy_strerror(rc);
		char *out = NULL; /* curl says only "Couldn't connect" */
		if (msg && x->sock_errno)
			msg = out =
			    xasprintf("%s: %s", msg, strerror(x->sock_errno));
		x->on_done(x, rc == CURLE_OK && !x->user_abort, msg, x->arg);
		free(out);
	}
	xfer_free(x);
}

/* After curl returned: free what was cancelled from inside its
 * callbacks, add what was started there, report finished transfers. */
static void http_settle(struct http *h)
{
	struct http_xfer *x, *next;
	CURLMsg *msg;
	int left;

	for (x = h->xfers; x; x = next) {
		next = x->next;
		if (x->cancelled && !x->in_done)
			xfer_free(x);
	}
	for (x = h->xfers; x; x = x->next) {
		if (!x->added && !x->in_done &&
		    libcurl.multi_add_handle(h->multi, x->easy) == CURLM_OK)
			x->added = 1;
	}
	while ((msg = libcurl.multi_info_read(h->multi, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		CURLcode rc = msg->data.result;
		x = NULL;
		libcurl.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &x);
		if (x)
			xfer_finish(x, rc);
	}
}

static void http_destroy(struct http *h)
{
	/* Removing handles re-arms the timer: stop listening first. */
	if (h->multi)
		libcurl.multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, NULL);
	if (h->timer)
		loop_timer_cancel(h->loop, h->timer);
	h->timer = 0;
	while (h->xfers)
		xfer_free(h->xfers);
	if (h->multi)
		libcurl.multi_cleanup(h->multi);
	free(h);
}

static void http_action(struct http *h, curl_socket_t s, int flags)
{
	int running;

	h->busy++;
	h->depth++;
	libcurl.multi_socket_action(h->multi, s, flags, &running);
	h->depth--;
	if (!h->freeing)
		http_settle(h);
	h->busy--;
	if (h->busy == 0 && h->freeing)
		http_destroy(h);
}

static void http_fd_cb(int fd, int revents, void *arg)
{
	int flags = 0;

	if (revents & (POLLIN | POLLHUP))
		flags |= CURL_CSELECT_IN;
	if (revents & POLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (revents & (POLLERR | POLLNVAL))
		flags |= CURL_CSELECT_ERR;
	http_action(arg, fd, flags);
}

static int http_socket_cb(CURL *easy, curl_socket_t s, int what, void *userp,
                          void *socketp)
{
	struct http *h = userp;
	int events = 0;

	if (what == CURL_POLL_REMOVE) {
		loop_fd_del(h->loop, s);
		return 0;
	}
	if (what & CURL_POLL_IN)
		events |= POLLIN;
	if (what & CURL_POLL_OUT)
		events |= POLLOUT;
	if (socketp) {
		loop_fd_events(h->loop, s, events);
	} else {
		loop_fd_add(h->loop, s, events, http_fd_cb, h);
		libcurl.multi_assign(h->multi, s, h);
	}
	return 0;
}

static void http_timeout(void *arg)
{
	struct http *h = arg;

	h->timer = 0;
	http_action(h, CURL_SOCKET_TIMEOUT, 0);
}

/* curl asks to be woken in timeout_ms (0 = soon, -1 = never). */
static int http_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct http *h = userp;

	if (h->timer)
		loop_timer_cancel(h->loop, h->timer);
	h->timer = 0;
	if (timeout_ms >= 0)
		h->timer = loop_timer_add(h->loop, timeout_ms, http_timeout, h);
	return 0;
}

struct http *http_new(struct loop *l)
{
	/* libcurl loads on a thread while the caller goes on; the multi
	 * handle is made at the first transfer */
	curllib_preload();
	struct http *h = xcalloc(1, sizeof *h);
	h->loop = l;
	return h;
}

/* The multi handle, made at the first transfer: 0, or -1 and *err. */
static int http_multi(struct http *h, char **err)
{
	if (h->multi)
		return 0;
	if (curllib_get(err) < 0)
		return -1;
	h->multi = libcurl.multi_init();
	if (!h->multi)
		return set_err(err,
		               "http: cannot create libcurl's multi handle");
	libcurl.multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, http_socket_cb);
	libcurl.multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
	libcurl.multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, http_timer_cb);
	libcurl.multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
	return 0;
}

void http_free(struct http *h)
{
	if (!h)
		return;
	if (h->busy) {
		/* Called from a callback: cancel everything now, free when
		 * curl has returned. */
		for (struct http_xfer *x = h->xfers; x; x = x->next)
			x->cancelled = 1;
		h->freeing = 1;
		return;
	}
	http_destroy(h);
}

static int has_header(const char *const *headers, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; headers && headers[i]; i++)
		if (strncasecmp(headers[i], name, n) == 0 &&
		    headers[i][n] == ':')
			return 1;
	return 0;
}

static size_t http_read_cb(char *p, size_t size, size_t nmemb, void *arg)
{
	struct http_xfer *x = arg;
	long n = x->read_body(p, size * nmemb, x->arg);

	if (n < 0) {
		x->user_abort = 1;
		return CURL_READFUNC_ABORT;
	}
	return (size_t)n;
}

/* A body fed by read_body: PUT (and others) upload, POST posts; an
 * unknown size goes chunked. */
static void xfer_set_upload(struct http_xfer *x, const struct http_request *r,
                            const char *m)
{
	CURL *e = x->easy;
	curl_off_t size = r->body_size >= 0 ? (curl_off_t)r->body_size : -1;

	x->read_body = r->read_body;
	libcurl.easy_setopt(e, CURLOPT_READFUNCTION, http_read_cb);
	libcurl.easy_setopt(e, CURLOPT_READDATA, x);
	/* streamed bodies are large (archives): fewer, larger sends */
	libcurl.easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 1L << 20);
	if (strcmp(m, "POST") == 0) {
		libcurl.easy_setopt(e, CURLOPT_POST, 1L);
		libcurl.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, size);
		return;
	}
	libcurl.easy_setopt(e, CURLOPT_UPLOAD, 1L);
	libcurl.easy_setopt(e, CURLOPT_INFILESIZE_LARGE, size);
	if (strcmp(m, "PUT") != 0)
		libcurl.easy_setopt(e, CURLOPT_CUSTOMREQUEST, m);
}

/* Method and body: POST sends the body; other methods with a body
 * send it under their own verb. The body is copied. */
static void xfer_set_method(struct http_xfer *x, const struct http_request *r)
{
	CURL *e = x->easy;
	const char *m = r->method ? r->method : "GET";
	int has_body = r->body != NULL;

	if (r->read_body) {
		xfer_set_upload(x, r, m);
		return;
	}

	if (strcmp(m, "GET") == 0 && !has_body) {
		libcurl.easy_setopt(e, CURLOPT_HTTPGET, 1L);
		return;
	}
	if (strcmp(m, "HEAD") == 0) {
		libcurl.easy_setopt(e, CURLOPT_NOBODY, 1L);
		return;
	}
	if (strcmp(m, "POST") == 0 || has_body) {
		libcurl.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
		                    (curl_off_t)(has_body ? r->body_len : 0));
		libcurl.easy_setopt(e, CURLOPT_COPYPOSTFIELDS,
		                    has_body ? r->body : "");
	}
	if (strcmp(m, "POST") != 0)
		libcurl.easy_setopt(e, CURLOPT_CUSTOMREQUEST, m);
}

/* curl opens its sockets here, so that why one could not be opened
 * (out of descriptors) is kept: curl's own message does not say. */
static curl_socket_t xfer_socket(void *arg, curlsocktype purpose,
                                 struct curl_sockaddr *a)
{
	struct http_xfer *x = arg;
	(void)purpose;
	curl_socket_t fd =
	    socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
	if (fd == CURL_SOCKET_BAD)
		x->sock_errno = errno;
	return fd;
}

static int xfer_setup(struct http_xfer *x, const struct http_request *r,
                      char **err)
{
	CURL *e = x->easy;

	for (size_t i = 0; r->headers && r->headers[i]; i++)
		x->headers = libcurl.slist_append(x->headers, r->headers[i]);
	/* Never wait for a 100-continue that some servers never send. */
	if (!has_header(r->headers, "Expect"))
		x->headers = libcurl.slist_append(x->headers, "Expect:");
	if (!x->headers)
		return set_err(err, "http: out of memory building headers");

	if (libcurl.easy_setopt(e, CURLOPT_URL, r->url) != CURLE_OK)
		return set_err(err, "http: bad URL '%s'", r->url);
	/* no other scheme, ever: refused, the transfer is not made */
	if (libcurl.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") !=
	    CURLE_OK)
		return set_err(err, "http: this libcurl cannot limit a "
		                    "transfer to http and https "
		                    "(CURLOPT_PROTOCOLS_STR): libcurl 7.85 or "
		                    "newer is needed");
	libcurl.easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
	libcurl.easy_setopt(e, CURLOPT_PRIVATE, x);
	libcurl.easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
	libcurl.easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, xfer_socket);
	libcurl.easy_setopt(e, CURLOPT_OPENSOCKETDATA, x);
	libcurl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	/* a proxy's CONNECT answer is no response of ours */
	libcurl.easy_setopt(e, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
	libcurl.easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	libcurl.easy_setopt(e, CURLOPT_WRITEFUNCTION, http_write_cb);
	libcurl.easy_setopt(e, CURLOPT_WRITEDATA, x);
	libcurl.easy_setopt(e, CURLOPT_HEADERFUNCTION, http_header_cb);
	libcurl.easy_setopt(e, CURLOPT_HEADERDATA, x);
	libcurl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
	                    r->connect_timeout_ms > 0 ? r->connect_timeout_ms
	                                              : 10000L);
	/* Streams get no total timeout: a stall of low_speed_time ends
	 * them instead. */
	libcurl.easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
	libcurl.easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
	                    r->low_speed_time_s > 0 ? r->low_speed_time_s
	                                            : 300L);
	if (r->total_timeout_ms > 0)
		libcurl.easy_setopt(e, CURLOPT_TIMEOUT_MS, r->total_timeout_ms);
	if (r->unix_socket && libcurl.easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH,
	                                          r->unix_socket) != CURLE_OK)
		return set_err(err, "http: cannot use unix socket '%s'",
		               r->unix_socket);
	if (r->ca_file)
		libcurl.easy_setopt(e, CURLOPT_CAINFO, r->ca_file);
	if (r->cert_file)
		libcurl.easy_setopt(e, CURLOPT_SSLCERT, r->cert_file);
	if (r->key_file)
		libcurl.easy_setopt(e, CURLOPT_SSLKEY, r->key_file);
	if (r->no_verify) {
		libcurl.easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		libcurl.easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	xfer_set_method(x, r);
	return 0;
}

struct http_xfer *http_start(struct http *h, const struct http_request *r,
                             char **err)
{
	if (!r->url) {
		set_err(err, "http: no URL");
		return NULL;
	}
	if (http_multi(h, err) < 0)
		return NULL;
	struct http_xfer *x = xcalloc(1, sizeof *x);
	x->h = h;
	x->on_response = r->on_response;
	x->on_data = r->on_data;
	x->on_done = r->on_done;
	x->arg = r->arg;
	x->easy = libcurl.easy_init();
	if (!x->easy) {
		set_err(err, "http: cannot create a transfer");
		free(x);
		return NULL;
	}
	x->next = h->xfers;
	h->xfers = x;
	if (xfer_setup(x, r, err) < 0) {
		xfer_free(x);
		return NULL;
	}
	/* Inside curl's callbacks adding is forbidden: http_settle adds
	 * it once curl has returned. */
	if (h->depth == 0) {
		CURLMcode mc = libcurl.multi_add_handle(h->multi, x->easy);
		if (mc != CURLM_OK) {
			set_err(err, "http: cannot start transfer: %s",
			        libcurl.multi_strerror(mc));
			xfer_free(x);
			return NULL;
		}
		x->added = 1;
	}
	return x;
}

void http_cancel(struct http_xfer *x)
{
	if (!x)
		return;
	if (x->in_done || x->h->depth > 0) {
		x->cancelled = 1;
		return;
	}
	xfer_free(x);
}

int http_perform(const struct http_request *r, char **err)
{
	if (!r->url)
		return set_err(err, "http: no URL");
	if (curllib_get(err) < 0)
		return -1;
	struct http_xfer *x = xcalloc(1, sizeof *x);
	x->on_response = r->on_response;
	x->on_data = r->on_data;
	x->on_done = r->on_done;
	x->arg = r->arg;
	x->easy = libcurl.easy_init();
	if (!x->easy) {
		free(x);
		return set_err(err, "http: cannot create a transfer");
	}
	if (xfer_setup(x, r, err) < 0) {
		xfer_free(x);
		return -1;
	}
	CURLcode rc = libcurl.easy_perform(x->easy);
	int ok = rc == CURLE_OK && !x->user_abort;
	xfer_finish(x, rc);
	return ok ? 0 : -1;
}

long http_status(const struct http_xfer *x)
{
	return x->status;
}

const char *http_header(const struct http_xfer *x, const char *name)
{
	for (size_t i = 0; i < x->n_hdrs; i++)
		if (strcasecmp(x->hdrs[i].name, name) == 0)
			return x->hdrs[i].value;
	return NULL;
}
