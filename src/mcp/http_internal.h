/* http_internal.h: what the Streamable HTTP transport's files share
 * (private to src/mcp/): its state (the transport, its transfers, the
 * requests awaiting a response), the steps http.c and http_resume.c
 * call in each other, and the server's spec checked (http_spec.c). */
#ifndef ASSAY_MCP_HTTP_INTERNAL_H
#define ASSAY_MCP_HTTP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "assay/buf.h"
#include "assay/sse.h"
#include "assay/strv.h"
#include "mcp/mcp_internal.h"

struct http_xfer;
struct mhttp;
struct mh_stream;

/* What a transfer is for. */
enum mh_kind {
	MH_POST,   /* a message sent */
	MH_RESUME, /* GET + Last-Event-ID: a request's stream again */
	MH_LISTEN, /* the standalone GET stream */
	MH_DELETE, /* the session's end, at close */
};

/* What is done with an answer's body. */
enum mh_body {
	MH_BODY_NONE, /* ignored (a notification's answer) */
	MH_BODY_JSON, /* one message or an array of them */
	MH_BODY_SSE,  /* an event stream of messages */
	MH_BODY_ERR,  /* an error status: its first bytes are kept */
};

/* A request sent whose response is awaited. */
struct mh_req {
	struct mhttp *m;
	struct mh_req *next;
	cJSON *id;
	int init;             /* initialize: its answer has the session id */
	int resumes;          /* GETs made for it so far */
	char *last_id;        /* the last event id of its streams */
	long retry;           /* their last retry: in ms, -1 if none */
	uint64_t timer;       /* a resumption waiting for retry ms */
	struct mh_stream *st; /* the transfer carrying it now */
};

/* One HTTP transfer; freed once done, when no callback is running. */
struct mh_stream {
	struct mhttp *m;
	struct mh_stream *next;
	enum mh_kind kind;
	enum mcp_msg msg;   /* MH_POST: what was sent */
	struct mh_req *req; /* the request it carries, if any */
	struct http_xfer *xfer;
	long status;
	enum mh_body body;
	struct sse sse;
	struct buf buf;   /* a JSON answer, or an error answer's first bytes */
	int toobig;       /* stopped: a message over MCP_MAX_MESSAGE */
	int opens_listen; /* notifications/initialized: GET after it */
	int held;         /* waits for the GET stream: body in buf */
	int done;
};

struct mhttp {
	struct mcp_transport t; /* first: the client sees this */
	struct loop *l;
	struct http *h;
	char *name;
	char *url;
	struct mcp_transport_cb cb;
	struct strv headers; /* the spec's, and Authorization */
	char *session;       /* Mcp-Session-Id */
	char *version;       /* MCP-Protocol-Version, after initialized */
	struct mh_req *reqs;
	struct mh_stream *streams;
	struct mh_stream *listen; /* the standalone GET stream */
	int listen_pending;       /* open it after notifications/initialized */
	int hold;                 /* POSTs wait until the GET stream answers */
	uint64_t hold_timer;      /* ... or MH_HOLD_MS */
	int reconnects;           /* of the GET stream, since a message */
	char *listen_last_id;
	uint64_t listen_timer;
	uint64_t closed_timer;
	char *why; /* why it failed */
	int depth; /* inside our callbacks: frees wait */
	int failed, closing, closed_sent, freed;
};

/* Whether it may still send and call back (not failed, closing or
 * freed). */
static inline int mh_live(const struct mhttp *m)
{
	return !m->failed && !m->closing && !m->freed;
}

/* Around every entry from the loop (and the client's ops): frees wait
 * until the outermost mh_leave, so a callback may free or close. */
static inline void mh_enter(struct mhttp *m)
{
	m->depth++;
}
void mh_leave(struct mhttp *m);

/* http.c: a line for the client's log (made one line); a request
 * answered by us with a JSON-RPC error (status: HTTP's, 0 if none); a
 * transfer started (-1 and *err: st is done); a GET or the DELETE
 * started in one go (NULL and *err). */
void mh_log(struct mhttp *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void mh_req_error(struct mhttp *m, struct mh_req *r, long status,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int mh_go(struct mh_stream *st, const char *body, size_t n, const char *last_id,
          char **err);
struct mh_stream *mh_start(struct mhttp *m, enum mh_kind kind,
                           const char *last_id, char **err);

/* http_resume.c: request r's stream st ended before its response:
 * resume it after the retry, or fail r (errmsg: why it broke, NULL if
 * it ended). */
void mh_resume_later(struct mhttp *m, struct mh_req *r, struct mh_stream *st,
                     const char *errmsg);
/* The standalone GET stream: open it (after notifications/initialized,
 * and again on reconnects), and its end. */
void mh_listen_start(struct mhttp *m);
void mh_listen_done(struct mh_stream *st, int ok, const char *errmsg);
/* POSTs wait (mh_hold) until the GET stream has answered or failed, or
 * MH_HOLD_MS (mh_release sends them, in order). */
void mh_hold(struct mhttp *m);
void mh_release(struct mhttp *m);

/* http_spec.c: whether s[0..n) may go into a header: 1 to max bytes
 * of printable ASCII (0x20-0x7E; only the visible 0x21-0x7E when
 * visible). */
int mcp_http_ascii_ok(const char *s, size_t n, size_t max, int visible);
/* An HTTP server's spec ({"url", "headers", "bearer_token_env"}) for
 * the server called name: *url (http:// or https://, a host, no space
 * or control byte) and its header lines ("Name: value", the spec's
 * headers then "Authorization: Bearer TOKEN" from $bearer_token_env)
 * appended to headers. 0, or -1 and *err saying what is wrong (a token
 * is never shown). */
int mcp_http_spec(const char *name, const cJSON *spec, char **url,
                  struct strv *headers, char **err);

#endif
