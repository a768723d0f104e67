/* http_resume.c: the streams of the Streamable HTTP transport that come
 * back: a request's stream that ended before its response, resumed with
 * GET and Last-Event-ID after the server's retry (SEP-1699), and the
 * standalone GET stream (opened after notifications/initialized, POSTs
 * held until it answers, reconnected after its retry). */
#include "mcp/http_internal.h"
#include "assay/http.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

#define MH_MAX_RESUMES 3         /* GETs for one request's answer */
#define MH_MAX_RECONNECTS 5      /* GET stream, without a message */
#define MH_DEFAULT_RETRY_MS 1000 /* a stream that gave no retry: */
#define MH_MAX_RETRY_MS 60000    /* a retry: longer than this is cut */
#define MH_MAX_EVENT_ID 1024     /* bytes of a Last-Event-ID we send */
#define MH_HOLD_MS 3000          /* POSTs wait for the GET stream */

/* A stream's last event id, when it can go into Last-Event-ID. */
static const char *mh_event_id(const struct sse *s)
{
	const char *id = buf_str(&s->id);

	return mcp_http_ascii_ok(id, s->id.len, MH_MAX_EVENT_ID, 0) ? id : NULL;
}

/* retry ms after a request's stream ended: GET it again. */
static void mh_resume_fire(void *arg)
{
	struct mh_req *r = arg;
	struct mhttp *m = r->m;
	char *err = NULL;

	r->timer = 0;
	mh_enter(m);
	r->resumes++;
	struct mh_stream *st = mh_start(m, MH_RESUME, r->last_id, &err);
	if (st) {
		st->req = r;
		r->st = st;
	} else {
		mh_req_error(m, r, 0, "cannot resume the stream: %s", err);
	}
	free(err);
	mh_leave(m);
}

/* A request's stream ended without its response: resume after the
 * stream's retry with GET + Last-Event-ID, or fail the request when
 * the server gave no id or the resumptions are used up. */
void mh_resume_later(struct mhttp *m, struct mh_req *r, struct mh_stream *st,
                     const char *errmsg)
{
	int64_t ended = now_ms();
	const char *id = mh_event_id(&st->sse);

	if (id) {
		free(r->last_id);
		r->last_id = xstrdup(id);
	}
	if (st->sse.retry >= 0)
		r->retry = st->sse.retry;
	r->st = NULL;
	st->req = NULL;
	if (!r->last_id || r->resumes >= MH_MAX_RESUMES) {
		mh_req_error(
		    m, r, 0,
		    "the server closed the stream before answering%s%s%s",
		    r->last_id ? " (resumed 3 times)" : "", errmsg ? ": " : "",
		    errmsg ? errmsg : "");
		return;
	}
	long wait = r->retry >= 0 ? r->retry : MH_DEFAULT_RETRY_MS;
	if (wait > MH_MAX_RETRY_MS)
		wait = MH_MAX_RETRY_MS;
	/* measured from the end seen, whatever ran since */
	int64_t left = ended + wait - now_ms();
	r->timer = loop_timer_add(m->l, left > 0 ? left : 0, mh_resume_fire, r);
}

/* retry ms after the GET stream ended: open it again. */
static void mh_listen_fire(void *arg)
{
	struct mhttp *m = arg;

	m->listen_timer = 0;
	mh_listen_start(m);
}

/* The GET stream ended: again after its retry when the server gave an
 * id and a retry (at most MH_MAX_RECONNECTS in a row without a
 * message), else a log line. */
void mh_listen_done(struct mh_stream *st, int ok, const char *errmsg)
{
	struct mhttp *m = st->m;

	m->listen = NULL;
	mh_release(m);
	if (st->body != MH_BODY_SSE) {
		mh_log(m, "no GET stream (%s)", errmsg ? errmsg : "no answer");
		return;
	}
	if (ok)
		sse_finish(&st->sse);
	if (!mh_live(m))
		return;
	const char *id = mh_event_id(&st->sse);
	if (st->toobig || !id || st->sse.retry < 0 ||
	    m->reconnects >= MH_MAX_RECONNECTS) {
		mh_log(m, "the GET stream ended%s%s%s", ok ? "" : ": ",
		       ok ? "" : errmsg,
		       st->toobig ? " (a message over the size limit)" : "");
		return;
	}
	m->reconnects++;
	free(m->listen_last_id);
	m->listen_last_id = xstrdup(id);
	long wait =
	    st->sse.retry < MH_MAX_RETRY_MS ? st->sse.retry : MH_MAX_RETRY_MS;
	m->listen_timer = loop_timer_add(m->l, wait, mh_listen_fire, m);
}

/* Open the standalone GET stream (after a reconnect: from the last id
 * seen on it). */
void mh_listen_start(struct mhttp *m)
{
	char *err = NULL;

	if (!mh_live(m) || m->listen)
		return;
	mh_enter(m);
	m->listen = mh_start(m, MH_LISTEN, m->listen_last_id, &err);
	if (!m->listen) {
		mh_log(m, "no GET stream: %s", err);
		mh_release(m);
	}
	free(err);
	mh_leave(m);
}

/* Send the POSTs held while the GET stream opened, in order. */
void mh_release(struct mhttp *m)
{
	if (!m->hold)
		return;
	m->hold = 0;
	if (m->hold_timer)
		loop_timer_cancel(m->l, m->hold_timer);
	m->hold_timer = 0;
	for (struct mh_stream *st = m->streams; st && mh_live(m);
	     st = st->next) {
		char *err = NULL;
		if (!st->held || st->done)
			continue;
		st->held = 0;
		if (mh_go(st, st->buf.data, st->buf.len, NULL, &err) == 0)
			buf_reset(&st->buf); /* http_start copied it */
		else if (st->req)
			mh_req_error(m, st->req, 0, "cannot send: %s", err);
		else
			mh_log(m, "cannot send a message: %s", err);
		free(err);
	}
}

/* MH_HOLD_MS passed and the GET stream has not answered yet. */
static void mh_release_fire(void *arg)
{
	struct mhttp *m = arg;

	m->hold_timer = 0;
	mh_enter(m);
	mh_release(m);
	mh_leave(m);
}

/* Hold the POSTs sent from now on until the GET stream answers, for a
 * server sends its own requests there and drops them while it is not
 * open (or MH_HOLD_MS, for a server that answers only with data). */
void mh_hold(struct mhttp *m)
{
	m->hold = 1;
	m->hold_timer = loop_timer_add(m->l, MH_HOLD_MS, mh_release_fire, m);
}
