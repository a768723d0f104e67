/* http.c: the MCP client's Streamable HTTP transport: each message is a
 * POST answered with JSON or an SSE stream (requests and notifications
 * may come before the response), HTTP errors become an error response
 * for that request, close DELETEs the session. The streams that come
 * back (a request's resumed stream, the standalone GET stream) are in
 * http_resume.c, the spec's checks in http_spec.c. Everything runs on
 * the loop through net/http.c; nothing blocks. */
#include "mcp/http_internal.h"
#include "assay/http.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MH_ERR_BODY 200            /* an error answer's bytes in messages */
#define MH_MAX_SESSION_ID 1024     /* bytes of Mcp-Session-Id */
#define MH_DELETE_TIMEOUT_MS 2000L /* the DELETE at close, in all */
#define MH_IDLE_S 3600L            /* a request's answer may be slow */
#define MH_LISTEN_IDLE_S 86400L    /* the GET stream may be silent */
#define MH_ERR_CODE (-32000)       /* our own error responses */

static void mh_destroy(struct mhttp *m);

/* A transfer's record freed (its transfer stopped or over). */
static void mh_stream_free(struct mh_stream *st)
{
	sse_free(&st->sse);
	buf_free(&st->buf);
	free(st);
}

/* Leave a callback: at the outermost level, free the transfers that
 * are done, and the transport if free was called meanwhile. */
void mh_leave(struct mhttp *m)
{
	if (--m->depth > 0)
		return;
	for (struct mh_stream **pp = &m->streams; *pp;) {
		struct mh_stream *st = *pp;
		if (!st->done) {
			pp = &st->next;
			continue;
		}
		*pp = st->next;
		mh_stream_free(st);
	}
	if (m->freed)
		mh_destroy(m);
}

/* s made one line: control bytes become spaces. */
static char *mh_one_line(char *s)
{
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	return s;
}

/* One line for the client's log. */
void mh_log(struct mhttp *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	char *line = mh_one_line(xvasprintf(fmt, ap));
	va_end(ap);
	if (m->cb.log)
		m->cb.log(m->cb.arg, line);
	free(line);
}

/* Whether content type ct is an event stream (parameters allowed). */
static int mh_is_sse(const char *ct)
{
	static const char t[] = "text/event-stream";

	while (ct && (*ct == ' ' || *ct == '\t'))
		ct++;
	return ct && strncasecmp(ct, t, sizeof t - 1) == 0 &&
	       strchr("; \t", ct[sizeof t - 1]); /* or its end */
}

/* Stop a transfer without its callbacks; freed by mh_leave. */
static void mh_stream_cancel(struct mh_stream *st)
{
	if (st->done)
		return;
	st->done = 1;
	if (st->xfer)
		http_cancel(st->xfer);
	st->xfer = NULL;
	if (st->req && st->req->st == st)
		st->req->st = NULL;
	st->req = NULL;
	if (st->m->listen == st)
		st->m->listen = NULL;
}

/* Forget a request: its timer, its resumed GET (a POST stream runs to
 * its end: closing it would not cancel the call). */
static void mh_req_free(struct mhttp *m, struct mh_req *r)
{
	struct mh_req **pp = &m->reqs;

	while (*pp && *pp != r)
		pp = &(*pp)->next;
	if (*pp)
		*pp = r->next;
	if (r->timer)
		loop_timer_cancel(m->l, r->timer);
	if (r->st) {
		struct mh_stream *st = r->st;
		st->req = NULL;
		r->st = NULL;
		if (st->kind == MH_RESUME)
			mh_stream_cancel(st);
	}
	cJSON_Delete(r->id);
	free(r->last_id);
	free(r);
}

/* Every transfer and timer stopped, no callback. */
static void mh_stop_all(struct mhttp *m)
{
	while (m->reqs)
		mh_req_free(m, m->reqs);
	for (struct mh_stream *st = m->streams; st; st = st->next)
		mh_stream_cancel(st);
	if (m->listen_timer)
		loop_timer_cancel(m->l, m->listen_timer);
	m->listen_timer = 0;
	m->listen_pending = 0;
	if (m->hold_timer)
		loop_timer_cancel(m->l, m->hold_timer);
	m->hold_timer = 0;
	m->hold = 0;
}

/* The transport is gone: stop everything and tell the client once.
 * Only from the loop's callbacks, never from send or close. */
static void mh_fail(struct mhttp *m, const char *why)
{
	if (!mh_live(m))
		return;
	m->failed = 1;
	m->why = xstrdup(why);
	mh_stop_all(m);
	if (m->cb.failed)
		m->cb.failed(m->cb.arg, why);
}

/* 404 with a session id: no DELETE for it at close. */
static void mh_session_gone(struct mhttp *m)
{
	free(m->session);
	m->session = NULL;
	mh_fail(m, "the server ended the session (404)");
}

/* Hand one message to the client; a response to a request of ours
 * ends the wait for it (and a resumed GET carrying it). */
static void mh_deliver(struct mhttp *m, const cJSON *msg)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");

	if (id && !cJSON_HasObjectItem(msg, "method") &&
	    (cJSON_HasObjectItem(msg, "result") ||
	     cJSON_HasObjectItem(msg, "error"))) {
		for (struct mh_req *r = m->reqs; r; r = r->next)
			if (cJSON_Compare(r->id, id, 1)) {
				mh_req_free(m, r);
				break;
			}
	}
	if (m->cb.message)
		m->cb.message(m->cb.arg, msg);
}

/* Answer request r ourselves with a JSON-RPC error, so the client fails
 * that call alone; status is the HTTP status (0: none). */
void mh_req_error(struct mhttp *m, struct mh_req *r, long status,
                  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", cJSON_Duplicate(r->id, 1));
	cJSON *e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddNumberToObject(e, "code", MH_ERR_CODE);
	cJSON_AddStringToObject(e, "message", msg);
	if (status > 0)
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(e, "data"),
		                        "httpStatus", (double)status);
	mh_req_free(m, r); /* first: the client may send from its callback */
	if (m->cb.message)
		m->cb.message(m->cb.arg, o);
	cJSON_Delete(o);
	free(msg);
}

/* Messages in one JSON text (an object or an array of them); what is
 * not JSON is skipped with a log line. */
static void mh_deliver_text(struct mhttp *m, const char *text, size_t n)
{
	cJSON *j = cJSON_ParseWithLength(text, n);

	if (!cJSON_IsArray(j) && !cJSON_IsObject(j)) {
		mh_log(m,
		       "skipped a message that is not a JSON object or "
		       "array (%zu bytes)",
		       n);
	} else if (cJSON_IsArray(j)) {
		const cJSON *el;
		cJSON_ArrayForEach(el, j)
		{
			if (!mh_live(m))
				break;
			if (cJSON_IsObject(el))
				mh_deliver(m, el);
		}
	} else {
		mh_deliver(m, j);
	}
	cJSON_Delete(j);
}

/* An error answer's first bytes as one line of valid UTF-8. */
static char *mh_err_body(const struct mh_stream *st)
{
	size_t n = utf8_complete_prefix(st->buf.data, st->buf.len);
	return mh_one_line(
	    utf8_sanitize(st->buf.data ? st->buf.data : "", n, NULL));
}

/* What an HTTP error status means for the user, if we know. */
static const char *mh_status_hint(long status)
{
	if (status == 401 || status == 403)
		return " (the server wants authorization: set headers or "
		       "bearer_token_env in its configuration)";
	if (status >= 300 && status < 400)
		return " (a redirect: not followed; configure the URL it "
		       "points to)";
	return "";
}

/* Fail request r with st's HTTP error status and body. */
static void mh_req_http_error(struct mhttp *m, struct mh_req *r,
                              const struct mh_stream *st, const char *what)
{
	char *body = mh_err_body(st);

	mh_req_error(m, r, st->status, "%sHTTP %ld%s%s%s", what, st->status,
	             mh_status_hint(st->status), *body ? ": " : "", body);
	free(body);
}

/* The session id from the initialize answer, checked before it goes
 * into a header. 0, or -1 when the transport failed. */
static int mh_take_session(struct mhttp *m, struct http_xfer *x)
{
	const char *sid = http_header(x, "Mcp-Session-Id");

	if (!sid || m->session)
		return 0;
	if (!mcp_http_ascii_ok(sid, strlen(sid), MH_MAX_SESSION_ID, 1)) {
		mh_fail(m, "the server's Mcp-Session-Id is not 1 to 1024 "
		           "visible ASCII characters");
		return -1;
	}
	m->session = xstrdup(sid);
	return 0;
}

/* A transfer's status and headers: how to read its body. A GET
 * stream that is no event stream means the server has none. */
static void mh_on_response(struct http_xfer *x, long status, void *arg)
{
	struct mh_stream *st = arg;
	struct mhttp *m = st->m;
	const char *ct = http_header(x, "Content-Type");
	int sse = mh_is_sse(ct);

	if (st->done || st->kind == MH_DELETE)
		return;
	mh_enter(m);
	st->status = status;
	if (st->kind == MH_LISTEN && (status / 100 != 2 || !sse)) {
		mh_log(m, "no GET stream (HTTP %ld%s%s)", status, ct ? " " : "",
		       ct ? ct : "");
		mh_stream_cancel(st);
	} else if (status == 404 && m->session) {
		mh_session_gone(m);
	} else if (status / 100 != 2) {
		st->body = MH_BODY_ERR;
	} else if (st->req && st->req->init && mh_take_session(m, x) < 0) {
		/* failed */
	} else if (st->kind == MH_POST && st->msg != MCP_MSG_REQUEST) {
		st->body = MH_BODY_NONE;
	} else if (sse) {
		st->body = MH_BODY_SSE;
	} else {
		/* a POST: application/json, or a guess; a resumed GET: no */
		st->body = st->kind == MH_POST ? MH_BODY_JSON : MH_BODY_ERR;
	}
	if (st->kind == MH_LISTEN)
		mh_release(m);
	mh_leave(m);
}

/* One event of an SSE answer: its data is a message (or an array);
 * empty data (a priming event) is skipped. */
static int mh_event(const struct sse_event *ev, void *arg)
{
	struct mh_stream *st = arg;
	struct mhttp *m = st->m;

	if (st->done || !mh_live(m))
		return -1;
	if (ev->data_len == 0)
		return 0;
	if (st->kind == MH_LISTEN)
		m->reconnects = 0;
	mh_deliver_text(m, ev->data, ev->data_len);
	return st->done || !mh_live(m) ? -1 : 0;
}

/* Body bytes: fed to the SSE parser, or kept (bounded), or dropped. */
static int mh_on_data(struct http_xfer *x, const char *data, size_t n,
                      void *arg)
{
	struct mh_stream *st = arg;
	struct mhttp *m = st->m;
	int rc = 0;

	if (st->done)
		return -1;
	mh_enter(m);
	switch (st->body) {
	case MH_BODY_NONE:
		break;
	case MH_BODY_ERR:
		if (st->buf.len < MH_ERR_BODY)
			buf_append(&st->buf, data,
			           n < MH_ERR_BODY - st->buf.len
			               ? n
			               : MH_ERR_BODY - st->buf.len);
		break;
	case MH_BODY_JSON:
		if (buf_append(&st->buf, data, n) < 0) {
			st->toobig = 1;
			rc = -1;
		}
		break;
	case MH_BODY_SSE:
		rc = sse_feed(&st->sse, data, n);
		if (rc < 0 && !st->done && mh_live(m))
			st->toobig = 1;
		break;
	}
	mh_leave(m);
	return rc;
}

static void mh_on_done(struct http_xfer *x, int ok, const char *errmsg,
                       void *arg);

/* A transfer's record, last in the list (held POSTs go in order). */
static struct mh_stream *mh_stream_new(struct mhttp *m, enum mh_kind kind)
{
	struct mh_stream *st = xcalloc(1, sizeof *st), **pp = &m->streams;

	st->m = m;
	st->kind = kind;
	sse_init(&st->sse, MCP_MAX_MESSAGE, mh_event, st);
	buf_init(&st->buf, MCP_MAX_MESSAGE);
	while (*pp)
		pp = &(*pp)->next;
	*pp = st;
	return st;
}

/* Start st's transfer: POST body, or GET (with Last-Event-ID when
 * last_id), or DELETE. -1 and *err when it cannot start (st is done). */
int mh_go(struct mh_stream *st, const char *body, size_t n, const char *last_id,
          char **err)
{
	struct mhttp *m = st->m;
	struct strv hv = {0};

	if (st->kind == MH_POST) {
		strv_push(&hv, "Content-Type: application/json");
		strv_push(&hv, "Accept: application/json, text/event-stream");
	} else if (st->kind != MH_DELETE) {
		strv_push(&hv, "Accept: text/event-stream");
	}
	for (size_t i = 0; i < m->headers.n; i++)
		strv_push(&hv, m->headers.v[i]);
	if (m->version)
		strv_take(&hv,
		          xasprintf("MCP-Protocol-Version: %s", m->version));
	if (m->session)
		strv_take(&hv, xasprintf("Mcp-Session-Id: %s", m->session));
	if (last_id)
		strv_take(&hv, xasprintf("Last-Event-ID: %s", last_id));
	struct http_request rq = {
	    .method = st->kind == MH_POST     ? "POST"
	              : st->kind == MH_DELETE ? "DELETE"
	                                      : "GET",
	    .url = m->url,
	    .headers = (const char *const *)hv.v,
	    .body = body,
	    .body_len = n,
	    .low_speed_time_s =
	        st->kind == MH_LISTEN ? MH_LISTEN_IDLE_S : MH_IDLE_S,
	    .on_response = mh_on_response,
	    .on_data = mh_on_data,
	    .on_done = mh_on_done,
	    .arg = st,
	};
	if (st->kind == MH_DELETE) {
		rq.connect_timeout_ms = MH_DELETE_TIMEOUT_MS;
		rq.total_timeout_ms = MH_DELETE_TIMEOUT_MS;
	}
	st->xfer = http_start(m->h, &rq, err);
	strv_free(&hv);
	st->done = !st->xfer;
	return st->xfer ? 0 : -1;
}

/* A GET or the DELETE started; NULL and *err when it cannot start. */
struct mh_stream *mh_start(struct mhttp *m, enum mh_kind kind,
                           const char *last_id, char **err)
{
	struct mh_stream *st = mh_stream_new(m, kind);

	return mh_go(st, NULL, 0, last_id, err) < 0 ? NULL : st;
}

/* The end of a transfer carrying request r (a POST or a resumed GET). */
static void mh_req_done(struct mh_stream *st, int ok, const char *errmsg)
{
	struct mhttp *m = st->m;
	struct mh_req *r = st->req;

	if (st->toobig) {
		mh_req_error(m, r, 0, "the server's answer is over %u MB",
		             MCP_MAX_MESSAGE >> 20);
		return;
	}
	if (st->body == MH_BODY_ERR) {
		mh_req_http_error(
		    m, r, st,
		    st->kind == MH_RESUME ? "cannot resume the stream: " : "");
		return;
	}
	if (st->status == 0 && st->kind == MH_POST) {
		mh_req_error(m, r, 0, "cannot reach the server: %s",
		             errmsg ? errmsg : "no answer");
		return;
	}
	if (st->body == MH_BODY_JSON) {
		if (ok)
			mh_deliver_text(m, buf_str(&st->buf), st->buf.len);
		if (st->req && mh_live(m))
			mh_req_error(m, st->req, st->status,
			             "the server answered HTTP %ld without "
			             "the response%s%s",
			             st->status, ok ? "" : ": ",
			             ok ? "" : errmsg);
		return;
	}
	if (ok)
		sse_finish(&st->sse);
	if (st->req && mh_live(m))
		mh_resume_later(m, st->req, st, ok ? NULL : errmsg);
}

/* The end of a POST that carried no awaited request: a note if it
 * went wrong. */
static void mh_other_done(struct mh_stream *st, int ok, const char *errmsg)
{
	const char *what = st->msg == MCP_MSG_NOTIFY     ? "notification"
	                   : st->msg == MCP_MSG_RESPONSE ? "response"
	                                                 : "request";

	if (st->body == MH_BODY_ERR) {
		char *body = mh_err_body(st);
		mh_log(st->m, "the server answered HTTP %ld to a %s%s%s",
		       st->status, what, *body ? ": " : "", body);
		free(body);
	} else if (!ok && st->msg != MCP_MSG_REQUEST) {
		mh_log(st->m, "cannot send a %s: %s", what, errmsg);
	}
}

/* close has finished (the DELETE answered, or a 0 ms timer): tell the
 * client, once. */
static void mh_closed_fire(void *arg)
{
	struct mhttp *m = arg;

	m->closed_timer = 0;
	if (m->closed_sent || m->freed)
		return;
	m->closed_sent = 1;
	mh_enter(m);
	if (m->cb.closed)
		m->cb.closed(m->cb.arg);
	mh_leave(m);
}

static void mh_on_done(struct http_xfer *x, int ok, const char *errmsg,
                       void *arg)
{
	struct mh_stream *st = arg;
	struct mhttp *m = st->m;

	if (st->done)
		return;
	mh_enter(m);
	st->xfer = NULL; /* http frees it when this returns */
	if (st->kind == MH_DELETE) {
		mh_closed_fire(m);
	} else if (!mh_live(m)) {
		/* stopped meanwhile: nothing more to say */
	} else if (st->kind == MH_LISTEN) {
		mh_listen_done(st, ok, errmsg);
	} else if (st->req) {
		mh_req_done(st, ok, errmsg);
	} else {
		mh_other_done(st, ok, errmsg);
	}
	if (st->opens_listen && mh_live(m) && m->listen_pending) {
		m->listen_pending = 0;
		mh_listen_start(m);
	}
	mh_stream_cancel(st);
	mh_leave(m);
}

/* A request's record: NULL and *err when msg has no id. */
static struct mh_req *mh_req_new(struct mhttp *m, const cJSON *msg, char **err)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");

	if (!cJSON_IsString(id) && !cJSON_IsNumber(id)) {
		set_err(err, "MCP server %s: a request without an id", m->name);
		return NULL;
	}
	struct mh_req *r = xcalloc(1, sizeof *r);
	r->m = m;
	r->id = cJSON_Duplicate(id, 1);
	r->init = strcmp(json_str(msg, "method", ""), "initialize") == 0;
	r->retry = -1;
	return r;
}

static int mh_send(struct mcp_transport *t, const char *json, size_t n,
                   enum mcp_msg kind, char **err)
{
	struct mhttp *m = (struct mhttp *)t;
	struct mh_req *r = NULL;
	cJSON *msg = NULL;
	int rc = -1;

	if (m->failed)
		return set_err(err, "MCP server %s: %s", m->name, m->why);
	if (m->closing || m->freed)
		return set_err(err, "MCP server %s: the connection is closed",
		               m->name);
	mh_enter(m);
	if (kind != MCP_MSG_RESPONSE)
		msg = cJSON_ParseWithLength(json, n);
	if (kind == MCP_MSG_REQUEST && !(r = mh_req_new(m, msg, err)))
		goto out;
	struct mh_stream *st = mh_stream_new(m, MH_POST);
	st->msg = kind;
	st->held = m->hold; /* until the GET stream is open: mh_release */
	if (!st->held)
		rc = mh_go(st, json, n, NULL, err);
	else if (buf_append(&st->buf, json, n) < 0)
		rc = set_err(err, "MCP server %s: a message over %u MB",
		             m->name, MCP_MAX_MESSAGE >> 20);
	else
		rc = 0;
	if (rc < 0) {
		st->done = 1;
		if (r)
			mh_req_free(m, r);
		goto out;
	}
	/* The GET stream opens once notifications/initialized is through;
	 * what is sent meanwhile waits for it (a server sends requests
	 * there, and drops them if it is not open yet). */
	if (kind == MCP_MSG_NOTIFY && m->listen_pending && !m->hold &&
	    !strcmp(json_str(msg, "method", ""), "notifications/initialized")) {
		st->opens_listen = 1;
		mh_hold(m);
	}
	if (r) {
		r->st = st;
		st->req = r;
		r->next = m->reqs;
		m->reqs = r;
	}
out:
	cJSON_Delete(msg);
	mh_leave(m);
	return rc;
}

static void mh_initialized(struct mcp_transport *t, const char *version)
{
	struct mhttp *m = (struct mhttp *)t;

	if (!version || !mcp_http_ascii_ok(version, strlen(version), 64, 1)) {
		mh_log(m, "the negotiated protocol version is not a short "
		          "visible ASCII string: not sent");
	} else {
		free(m->version);
		m->version = xstrdup(version);
	}
	/* The GET stream opens once notifications/initialized is sent. */
	m->listen_pending = 1;
}

static void mh_close(struct mcp_transport *t)
{
	struct mhttp *m = (struct mhttp *)t;
	char *err = NULL;

	if (m->closing || m->freed)
		return;
	mh_enter(m);
	m->closing = 1;
	mh_stop_all(m);
	if (!m->session || !mh_start(m, MH_DELETE, NULL, &err))
		m->closed_timer = loop_timer_add(m->l, 0, mh_closed_fire, m);
	free(err);
	mh_leave(m);
}

/* Free everything; the transfers are cancelled without callbacks. */
static void mh_destroy(struct mhttp *m)
{
	mh_stop_all(m);
	if (m->closed_timer)
		loop_timer_cancel(m->l, m->closed_timer);
	while (m->streams) {
		struct mh_stream *st = m->streams;
		m->streams = st->next;
		mh_stream_free(st);
	}
	strv_free(&m->headers);
	free(m->name);
	free(m->url);
	free(m->session);
	free(m->version);
	free(m->listen_last_id);
	free(m->why);
	free(m);
}

static void mh_free(struct mcp_transport *t)
{
	struct mhttp *m = (struct mhttp *)t;

	if (!m || m->freed)
		return;
	m->freed = 1;
	mh_stop_all(m);
	if (m->depth == 0)
		mh_destroy(m);
}

static const struct mcp_transport_ops mh_ops = {
    .name = "http",
    .send = mh_send,
    .initialized = mh_initialized,
    .close = mh_close,
    .free = mh_free,
};

struct mcp_transport *mcp_http_new(struct loop *l, struct http *h,
                                   const char *name, const cJSON *spec,
                                   const struct mcp_transport_cb *cb,
                                   char **err)
{
	struct mhttp *m = xcalloc(1, sizeof *m);

	m->t.ops = &mh_ops;
	m->l = l;
	m->h = h;
	m->name = xstrdup(name);
	m->cb = *cb;
	if (mcp_http_spec(name, spec, &m->url, &m->headers, err) < 0) {
		mh_destroy(m);
		return NULL;
	}
	return &m->t;
}
