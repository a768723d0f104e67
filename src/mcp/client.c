/* client.c: the MCP client's JSON-RPC engine over a transport
 * (mcp_internal.h): the lifecycle (initialize, initialized, tools/list
 * paginated and again on list_changed), our requests and their answers,
 * timeouts and cancellation, progress, the server's requests (ping,
 * elicitation through the hook) and notifications. Two id spaces: a
 * message with a method is the server's, one with result or error
 * answers ours. */
#include "assay/mcp.h"
#include "mcp/mcp_internal.h"
#include "assay/http.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MCP_INIT_TIMEOUT_MS 30000
#define MCP_LIST_TIMEOUT_MS 30000
#define MCP_MAX_PAGES 100
#define MCP_MAX_TOOLS 2000
#define MCP_RELIST_MS 100
#define MCP_MAX_LOG_LINES 5000         /* log lines of one connection */
#define MCP_MAX_TOOL_BYTES (64u << 10) /* one tool's definition */
#define MCP_MAX_LIST_BYTES (16u << 20) /* all of them */

enum req_kind {
	REQ_INITIALIZE,
	REQ_LIST,
	REQ_CALL,
};

/* One request of ours waiting for its answer. */
struct req {
	struct req *next;
	struct mcp *m;
	uint64_t id;
	enum req_kind kind;
	uint64_t timer;
	int timeout_ms;
	int held; /* mcp_call_hold: its timeout waits for a person */
	mcp_done_fn done;
	mcp_progress_fn progress;
	void *arg;
	char *late; /* a call not sent: why, told from the loop */
};

/* One elicitation the hook holds, by its token. */
struct elicit {
	struct elicit *next;
	uint64_t token;
	cJSON *id;     /* the server's request id, as it came */
	cJSON *schema; /* requestedSchema, for the defaults */
	int gen;       /* the transport it came on */
};

struct mcp {
	struct loop *loop;
	struct http *http;
	struct http *own_http; /* made here when the caller gave none */
	char *name;
	cJSON *spec;
	struct mcp_hooks hooks;
	struct mcp_transport *t;
	int gen; /* counts transports: a restart is a new one */
	int restarts;
	enum mcp_state state;
	char *why;
	char *version;
	cJSON *server_info;
	cJSON *tools;   /* the list in force */
	cJSON *listing; /* pages gathered by a listing under way */
	int pages;
	size_t listing_bytes;
	long logged; /* log lines so far (mcp_say) */
	int relist;  /* list_changed while a listing was under way */
	uint64_t relist_timer;
	uint64_t next_id;
	uint64_t next_token;
	struct req *reqs;
	struct elicit *elicits;
	int closing;
};

static void mcp_begin(struct mcp *m);

int mcp_version_ok(const char *v)
{
	/* 2025-03-26: the first with Streamable HTTP (the conformance
	 * suite's sse-retry server answers it) */
	return v && (!strcmp(v, "2025-11-25") || !strcmp(v, "2025-06-18") ||
	             !strcmp(v, "2025-03-26"));
}

/* Tell the frontend: the state or the tools changed. */
static void mcp_changed(struct mcp *m)
{
	if (m->hooks.changed)
		m->hooks.changed(m, m->hooks.arg);
}

/* One line to the log hook, at most MCP_MAX_LOG_LINES per connection
 * (a server that floods its log or sends requests in a loop cannot fill
 * the run's log). */
static void mcp_say(struct mcp *m, const char *level, const char *text)
{
	if (!m->hooks.log || m->logged > MCP_MAX_LOG_LINES)
		return;
	if (++m->logged > MCP_MAX_LOG_LINES)
		text = "(more log lines of this server not logged)";
	m->hooks.log(m, level, text, m->hooks.arg);
}

/* A line for the log. */
static void mcp_log(struct mcp *m, const char *level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void mcp_log(struct mcp *m, const char *level, const char *fmt, ...)
{
	if (!m->hooks.log)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *text = NULL;
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (text)
		mcp_say(m, level, text);
	free(text);
}

/* Take request id out of the list (NULL if not waiting). */
static struct req *req_take(struct mcp *m, uint64_t id)
{
	for (struct req **p = &m->reqs; *p; p = &(*p)->next) {
		if ((*p)->id == id) {
			struct req *r = *p;
			*p = r->next;
			if (r->timer)
				loop_timer_cancel(m->loop, r->timer);
			return r;
		}
	}
	return NULL;
}

/* A request done with. */
static void req_free(struct req *r)
{
	free(r->late);
	free(r);
}

/* Send one message; -1 when the transport refused it (err set). */
static int mcp_send(struct mcp *m, cJSON *msg, enum mcp_msg kind, char **err)
{
	char *text = json_print(msg);
	int rc = -1;
	if (m->t)
		rc = m->t->ops->send(m->t, text, strlen(text), kind, err);
	else if (err)
		*err = xstrdup("not connected");
	free(text);
	return rc;
}

/* The server is gone for good (or cannot start): every request fails. */
static void mcp_fail(struct mcp *m, const char *why)
{
	if (m->state == MCP_FAILED || m->state == MCP_CLOSED)
		return;
	free(m->why);
	m->why = xstrdup(why);
	m->state = MCP_FAILED;
	mcp_log(m, "error", "%s", why);
	while (m->reqs) {
		struct req *r = req_take(m, m->reqs->id);
		if (r->done)
			r->done(m, NULL, why, r->arg);
		req_free(r);
	}
	mcp_changed(m);
}

/* A request's time is up: the server is told, the caller gets an error. */
static void req_timeout(void *arg);

/* Send a request of ours; its answer comes to mcp_answer. 0 or -1 (the
 * request is not kept; err set). */
static int mcp_request(struct mcp *m, const char *method, cJSON *params,
                       struct req *r, char **err)
{
	r->m = m;
	r->id = ++m->next_id;
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
	cJSON_AddNumberToObject(msg, "id", (double)r->id);
	cJSON_AddStringToObject(msg, "method", method);
	if (params)
		cJSON_AddItemToObject(msg, "params", params);
	r->next = m->reqs;
	m->reqs = r;
	int rc = mcp_send(m, msg, MCP_MSG_REQUEST, err);
	cJSON_Delete(msg);
	if (rc < 0) {
		req_take(m, r->id);
		return -1;
	}
	if (r->timeout_ms > 0)
		r->timer =
		    loop_timer_add(m->loop, r->timeout_ms, req_timeout, r);
	return 0;
}

/* A notification of ours. */
static void mcp_notify(struct mcp *m, const char *method, cJSON *params)
{
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
	cJSON_AddStringToObject(msg, "method", method);
	if (params)
		cJSON_AddItemToObject(msg, "params", params);
	char *err = NULL;
	if (mcp_send(m, msg, MCP_MSG_NOTIFY, &err) < 0) {
		mcp_log(m, "info", "%s not sent: %s", method, err);
		free(err);
	}
	cJSON_Delete(msg);
}

/* notifications/cancelled for request id. */
static void mcp_send_cancel(struct mcp *m, uint64_t id, const char *reason)
{
	cJSON *p = cJSON_CreateObject();
	cJSON_AddNumberToObject(p, "requestId", (double)id);
	if (reason)
		cJSON_AddStringToObject(p, "reason", reason);
	mcp_notify(m, "notifications/cancelled", p);
}

static void req_timeout(void *arg)
{
	struct req *r = arg;
	struct mcp *m = r->m;
	r->timer = 0;
	req_take(m, r->id);
	char *why =
	    xasprintf("no answer from the server after %d s",
	              r->timeout_ms / 1000 + (r->timeout_ms % 1000 != 0));
	if (r->kind == REQ_CALL) {
		mcp_send_cancel(m, r->id, "timed out");
		if (r->done)
			r->done(m, NULL, why, r->arg);
	} else {
		char *full = xasprintf("%s: %s",
		                       r->kind == REQ_INITIALIZE ? "initialize"
		                                                 : "tools/list",
		                       why);
		mcp_fail(m, full);
		free(full);
	}
	free(why);
	req_free(r);
}

/* The error of an answer, as one line: "CODE MESSAGE". */
static char *answer_error(const cJSON *error)
{
	const char *msg = json_str(error, "message", "");
	long code = json_long(error, "code", 0);
	return xasprintf("%s (error %ld)", *msg ? msg : "error", code);
}

/* tools/list: one more page of tools, or the list is complete. */
static void mcp_list(struct mcp *m, const char *cursor);

/* A listing's page came in: gather it, ask for the next or finish. */
static void list_page(struct mcp *m, const cJSON *result)
{
	const cJSON *tools = cJSON_GetObjectItem(result, "tools"), *t;
	if (!m->listing)
		m->listing = cJSON_CreateArray();
	cJSON_ArrayForEach(t, tools)
	{
		if (!cJSON_IsString(cJSON_GetObjectItem(t, "name")))
			continue; /* a tool without a name cannot be called */
		char *one = cJSON_PrintUnformatted(t);
		size_t n = one ? strlen(one) : 0;
		free(one);
		if (n > MCP_MAX_TOOL_BYTES) {
			mcp_log(m, "info",
			        "tool %.80s left out: its definition "
			        "is %zu bytes",
			        json_str(t, "name", ""), n);
			continue;
		}
		m->listing_bytes += n;
		if (cJSON_GetArraySize(m->listing) >= MCP_MAX_TOOLS ||
		    m->listing_bytes > MCP_MAX_LIST_BYTES) {
			mcp_log(m, "info",
			        "more than %d tools or %u bytes of them: the "
			        "rest left out",
			        MCP_MAX_TOOLS, MCP_MAX_LIST_BYTES);
			break;
		}
		cJSON_AddItemToArray(m->listing, cJSON_Duplicate(t, 1));
	}
	const char *next = json_str(result, "nextCursor", NULL);
	if (next && *next && ++m->pages < MCP_MAX_PAGES &&
	    cJSON_GetArraySize(m->listing) < MCP_MAX_TOOLS) {
		mcp_list(m, next);
		return;
	}
	if (next && *next)
		mcp_log(m, "info", "tools/list: stopped after %d pages",
		        m->pages + 1);
	cJSON_Delete(m->tools);
	m->tools = m->listing;
	m->listing = NULL;
	m->pages = 0;
	m->listing_bytes = 0;
	int was_ready = m->state == MCP_READY;
	m->state = MCP_READY;
	if (!was_ready)
		mcp_log(m, "info", "ready: %s, %d tools", m->version,
		        cJSON_GetArraySize(m->tools));
	mcp_changed(m);
	if (m->relist) {
		m->relist = 0;
		mcp_list(m, NULL);
	}
}

/* initialize's answer: the version checked, initialized sent, tools
 * listed. */
static void init_answer(struct mcp *m, const cJSON *result)
{
	const char *v = json_str(result, "protocolVersion", "");
	if (!mcp_version_ok(v)) {
		char *why = xasprintf("the server speaks protocol version "
		                      "\"%.40s\"; assay speaks 2025-11-25, "
		                      "2025-06-18 and 2025-03-26",
		                      v);
		mcp_fail(m, why);
		free(why);
		return;
	}
	free(m->version);
	m->version = xstrdup(v);
	cJSON_Delete(m->server_info);
	m->server_info =
	    cJSON_Duplicate(cJSON_GetObjectItem(result, "serverInfo"), 1);
	if (m->t->ops->initialized)
		m->t->ops->initialized(m->t, v);
	mcp_notify(m, "notifications/initialized", NULL);
	mcp_list(m, NULL);
}

/* An answer to one of our requests. */
static void mcp_answer(struct mcp *m, const cJSON *msg)
{
	const cJSON *id = cJSON_GetObjectItem(msg, "id");
	if (!cJSON_IsNumber(id))
		return; /* our ids are numbers: not ours */
	struct req *r =
	    req_take(m, (uint64_t)json_num_long(id->valuedouble, 0));
	if (!r)
		return; /* cancelled, timed out, or never asked */
	const cJSON *result = cJSON_GetObjectItem(msg, "result");
	const cJSON *error = cJSON_GetObjectItem(msg, "error");
	char *err = NULL;
	if (!cJSON_IsObject(result))
		err = cJSON_IsObject(error)
		          ? answer_error(error)
		          : xstrdup("an answer without result or error");
	switch (r->kind) {
	case REQ_INITIALIZE:
		if (err) {
			char *why = xasprintf("initialize: %s", err);
			mcp_fail(m, why);
			free(why);
		} else {
			init_answer(m, result);
		}
		break;
	case REQ_LIST:
		if (err) {
			char *why = xasprintf("tools/list: %s", err);
			cJSON_Delete(m->listing);
			m->listing = NULL;
			mcp_fail(m, why);
			free(why);
		} else {
			list_page(m, result);
		}
		break;
	case REQ_CALL:
		if (r->done)
			r->done(m, err ? NULL : result, err, r->arg);
		break;
	}
	free(err);
	req_free(r);
}

/* Our answer to a server's request id: result, or an error. */
static void mcp_reply(struct mcp *m, const cJSON *id, cJSON *result, int code,
                      const char *message)
{
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
	cJSON_AddItemToObject(msg, "id", cJSON_Duplicate(id, 1));
	if (result) {
		cJSON_AddItemToObject(msg, "result", result);
	} else {
		cJSON *e = cJSON_AddObjectToObject(msg, "error");
		cJSON_AddNumberToObject(e, "code", code);
		cJSON_AddStringToObject(e, "message", message);
	}
	char *err = NULL;
	if (mcp_send(m, msg, MCP_MSG_RESPONSE, &err) < 0) {
		mcp_log(m, "info", "an answer to the server not sent: %s", err);
		free(err);
	}
	cJSON_Delete(msg);
}

/* elicitation/create: to the hook, or declined. */
static void server_elicit(struct mcp *m, const cJSON *id, const cJSON *params)
{
	const char *mode = json_str(params, "mode", "form");
	if (strcmp(mode, "form")) { /* only form is declared (url: not) */
		mcp_log(m, "info",
		        "the server asked for a %.40s elicitation, which assay "
		        "does not offer: refused",
		        mode);
		mcp_reply(m, id, NULL, -32602,
		          "only form elicitation is supported");
		return;
	}
	if (!m->hooks.elicit) {
		mcp_log(m, "info",
		        "the server asked the user something (elicitation); "
		        "declined: nobody to ask here");
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "action", "decline");
		mcp_reply(m, id, r, 0, NULL);
		return;
	}
	struct elicit *e = xcalloc(1, sizeof *e);
	e->token = ++m->next_token;
	e->id = cJSON_Duplicate(id, 1);
	e->schema =
	    cJSON_Duplicate(cJSON_GetObjectItem(params, "requestedSchema"), 1);
	e->gen = m->gen;
	e->next = m->elicits;
	m->elicits = e;
	m->hooks.elicit(m, e->token, params, m->hooks.arg);
}

/* A request from the server. */
static void server_request(struct mcp *m, const cJSON *msg)
{
	const char *method = json_str(msg, "method", "");
	const cJSON *id = cJSON_GetObjectItem(msg, "id");
	const cJSON *params = cJSON_GetObjectItem(msg, "params");
	if (!strcmp(method, "ping")) {
		mcp_reply(m, id, cJSON_CreateObject(), 0, NULL);
	} else if (!strcmp(method, "elicitation/create")) {
		server_elicit(m, id, params);
	} else {
		/* sampling and roots are not declared: not offered */
		mcp_log(m, "info", "the server asked for %.60s: not offered",
		        method);
		mcp_reply(m, id, NULL, -32601, "Method not found");
	}
}

/* The call a progress token names (our tokens are the calls' ids). */
static void server_progress(struct mcp *m, const cJSON *params)
{
	const cJSON *tok = cJSON_GetObjectItem(params, "progressToken");
	if (!cJSON_IsNumber(tok))
		return;
	uint64_t id = (uint64_t)json_num_long(tok->valuedouble, 0);
	for (struct req *r = m->reqs; r; r = r->next) {
		if (r->id != id || r->kind != REQ_CALL || !r->progress)
			continue;
		r->progress(m, json_num(params, "progress", 0),
		            json_num(params, "total", -1),
		            json_str(params, "message", NULL), r->arg);
		return;
	}
}

/* list_changed: list again, once a burst is over. */
static void relist_now(void *arg)
{
	struct mcp *m = arg;
	m->relist_timer = 0;
	if (m->state != MCP_READY)
		return;
	if (m->listing)
		m->relist = 1; /* after the one under way */
	else
		mcp_list(m, NULL);
}

/* A notification from the server. */
static void server_notify(struct mcp *m, const cJSON *msg)
{
	const char *method = json_str(msg, "method", "");
	const cJSON *params = cJSON_GetObjectItem(msg, "params");
	if (!strcmp(method, "notifications/progress")) {
		server_progress(m, params);
	} else if (!strcmp(method, "notifications/message")) {
		const cJSON *data = cJSON_GetObjectItem(params, "data");
		char *text = cJSON_IsString(data) ? xstrdup(data->valuestring)
		                                  : json_print(data);
		const char *logger = json_str(params, "logger", NULL);
		char *line =
		    logger ? xasprintf("%s: %s", logger, text) : xstrdup(text);
		mcp_say(m, json_str(params, "level", "info"), line);
		free(line);
		free(text);
	} else if (!strcmp(method, "notifications/tools/list_changed")) {
		if (m->state == MCP_READY && !m->relist_timer)
			m->relist_timer = loop_timer_add(m->loop, MCP_RELIST_MS,
			                                 relist_now, m);
	}
	/* others (resources, prompts, cancelled of its own requests) are
	 * not used */
}

/* One message from the transport. */
static void on_message(void *arg, const cJSON *msg)
{
	struct mcp *m = arg;
	if (!cJSON_IsObject(msg))
		return;
	if (cJSON_IsString(cJSON_GetObjectItem(msg, "method"))) {
		const cJSON *id = cJSON_GetObjectItem(msg, "id");
		if (id && (cJSON_IsNumber(id) || cJSON_IsString(id)))
			server_request(m, msg);
		else
			server_notify(m, msg);
	} else {
		mcp_answer(m, msg);
	}
}

/* The transport is gone: a stdio server that was ready is started again
 * once; otherwise the connection has failed. */
static void on_failed(void *arg, const char *why)
{
	struct mcp *m = arg;
	if (m->closing)
		return;
	int again = m->state == MCP_READY && m->restarts == 0 &&
	            !strcmp(m->t->ops->name, "stdio");
	if (!again) {
		mcp_fail(m, why);
		return;
	}
	m->restarts++;
	mcp_log(m, "info", "%s; starting it again (once)", why);
	while (m->reqs) { /* what was in flight is lost with it */
		struct req *r = req_take(m, m->reqs->id);
		if (r->done)
			r->done(m, NULL, why, r->arg);
		req_free(r);
	}
	m->t->ops->free(m->t);
	m->t = NULL;
	cJSON_Delete(m->listing); /* a listing under way is gone with it */
	m->listing = NULL;
	m->pages = 0;
	m->relist = 0;
	if (m->closing) { /* closed from a callback above */
		m->state = MCP_CLOSED;
		mcp_changed(m);
		return;
	}
	m->state = MCP_STARTING;
	mcp_changed(m);
	if (m->closing || m->state != MCP_STARTING)
		return;
	mcp_begin(m);
}

/* A line of the server's log. */
static void on_log(void *arg, const char *line)
{
	struct mcp *m = arg;
	mcp_log(m, "stderr", "%s", line);
}

/* close has finished. */
static void on_closed(void *arg)
{
	struct mcp *m = arg;
	m->state = MCP_CLOSED;
	mcp_changed(m);
}

static void mcp_list(struct mcp *m, const char *cursor)
{
	struct req *r = xcalloc(1, sizeof *r);
	r->kind = REQ_LIST;
	r->timeout_ms = MCP_LIST_TIMEOUT_MS;
	cJSON *p = NULL;
	if (cursor) {
		p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "cursor", cursor);
	}
	if (!m->listing) {
		m->listing = cJSON_CreateArray();
		m->listing_bytes = 0;
	}
	char *err = NULL;
	if (mcp_request(m, "tools/list", p, r, &err) < 0) {
		char *why = xasprintf("tools/list: %s", err);
		free(r);
		mcp_fail(m, why);
		free(why);
	}
	free(err);
}

/* The transport, then initialize. */
static void mcp_begin(struct mcp *m)
{
	struct mcp_transport_cb cb = {
	    .message = on_message,
	    .failed = on_failed,
	    .log = on_log,
	    .closed = on_closed,
	    .arg = m,
	};
	char *err = NULL;
	m->gen++;
	if (cJSON_GetObjectItem(m->spec, "url"))
		m->t =
		    mcp_http_new(m->loop, m->http, m->name, m->spec, &cb, &err);
	else
		m->t = mcp_stdio_new(m->loop, m->name, m->spec, &cb, &err);
	if (!m->t) {
		mcp_fail(m, err ? err : "cannot start");
		free(err);
		return;
	}
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "protocolVersion", MCP_VERSION);
	cJSON *caps = cJSON_AddObjectToObject(p, "capabilities");
	if (m->hooks.elicit)
		cJSON_AddObjectToObject(
		    cJSON_AddObjectToObject(caps, "elicitation"), "form");
	cJSON *info = cJSON_AddObjectToObject(p, "clientInfo");
	cJSON_AddStringToObject(info, "name", "assay");
	cJSON_AddStringToObject(info, "version", ASSAY_VERSION);
	struct req *r = xcalloc(1, sizeof *r);
	r->kind = REQ_INITIALIZE;
	r->timeout_ms = MCP_INIT_TIMEOUT_MS;
	if (mcp_request(m, "initialize", p, r, &err) < 0) {
		char *why = xasprintf("initialize: %s", err);
		free(r);
		mcp_fail(m, why);
		free(why);
	}
	free(err);
}

/* ---- the public surface ---- */

struct mcp *mcp_new(struct loop *l, struct http *h, const char *name,
                    const cJSON *spec, const struct mcp_hooks *hooks,
                    char **err)
{
	const char *cmd = json_str(spec, "command", NULL);
	const char *url = json_str(spec, "url", NULL);
	if (!cJSON_IsObject(spec) || !!cmd == !!url) {
		*err = xasprintf("MCP server \"%s\": give either \"command\" "
		                 "(a program, stdio) or \"url\" (Streamable "
		                 "HTTP)",
		                 name);
		return NULL;
	}
	struct mcp *m = xcalloc(1, sizeof *m);
	m->loop = l;
	m->http = h;
	if (url && !h) /* a multi handle of its own */
		m->http = m->own_http = http_new(l);
	m->name = xstrdup(name);
	m->spec = cJSON_Duplicate(spec, 1);
	if (hooks)
		m->hooks = *hooks;
	m->state = MCP_STARTING;
	return m;
}

int mcp_start(struct mcp *m)
{
	mcp_begin(m);
	return m->state == MCP_FAILED ? -1 : 0;
}

enum mcp_state mcp_state(const struct mcp *m)
{
	return m->state;
}

const char *mcp_name(const struct mcp *m)
{
	return m->name;
}

const char *mcp_transport_name(const struct mcp *m)
{
	return cJSON_GetObjectItem(m->spec, "url") ? "http" : "stdio";
}

const char *mcp_why(const struct mcp *m)
{
	return m->state == MCP_FAILED ? m->why : NULL;
}

const char *mcp_version(const struct mcp *m)
{
	return m->version;
}

const cJSON *mcp_server_info(const struct mcp *m)
{
	return m->server_info;
}

const cJSON *mcp_tools(const struct mcp *m)
{
	return m->tools;
}

const cJSON *mcp_tool(const struct mcp *m, const char *name)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, m->tools)
	{
		if (!strcmp(json_str(t, "name", ""), name))
			return t;
	}
	return NULL;
}

/* A call that could not be sent ends from the loop all the same. */
static void late_fail_run(void *arg)
{
	struct req *r = arg;
	struct mcp *m = r->m;
	r->timer = 0;
	req_take(m, r->id);
	if (r->done)
		r->done(m, NULL, r->late, r->arg);
	req_free(r);
}

uint64_t mcp_call(struct mcp *m, const char *tool, const cJSON *args,
                  int timeout_ms, mcp_done_fn done, mcp_progress_fn progress,
                  void *arg)
{
	struct req *r = xcalloc(1, sizeof *r);
	r->kind = REQ_CALL;
	r->timeout_ms = timeout_ms;
	r->done = done;
	r->progress = progress;
	r->arg = arg;
	char *err = NULL;
	int rc = -1;
	if (m->state == MCP_READY) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "name", tool);
		cJSON_AddItemToObject(p, "arguments",
		                      cJSON_IsObject(args)
		                          ? cJSON_Duplicate(args, 1)
		                          : cJSON_CreateObject());
		/* the progress token is the call's id, known once sent: the
		 * id to come */
		cJSON *meta = cJSON_AddObjectToObject(p, "_meta");
		cJSON_AddNumberToObject(meta, "progressToken",
		                        (double)(m->next_id + 1));
		rc = mcp_request(m, "tools/call", p, r, &err);
	} else {
		err = xstrdup(m->state == MCP_FAILED && m->why
		                  ? m->why
		                  : "the server is not ready");
	}
	if (rc == 0) {
		free(err);
		return r->id;
	}
	/* keep it waiting under an id of its own, failed from the loop */
	r->m = m;
	r->id = ++m->next_id;
	r->timeout_ms = 0;
	r->next = m->reqs;
	m->reqs = r;
	r->late = err ? err : xstrdup("not sent");
	r->timer = loop_timer_add(m->loop, 0, late_fail_run, r);
	return r->id;
}

void mcp_cancel(struct mcp *m, uint64_t call, const char *reason)
{
	struct req *r = req_take(m, call);
	if (!r)
		return;
	if (!r->late && m->t)
		mcp_send_cancel(m, call, reason);
	req_free(r);
}

cJSON *mcp_elicit_defaults(const cJSON *schema, const cJSON *content)
{
	cJSON *out = cJSON_IsObject(content) ? cJSON_Duplicate(content, 1)
	                                     : cJSON_CreateObject();
	const cJSON *prop;
	cJSON_ArrayForEach(prop, cJSON_GetObjectItem(schema, "properties"))
	{
		const cJSON *def = cJSON_GetObjectItem(prop, "default");
		if (!prop->string || !def ||
		    cJSON_GetObjectItemCaseSensitive(out, prop->string))
			continue;
		cJSON_AddItemToObject(out, prop->string,
		                      cJSON_Duplicate(def, 1));
	}
	return out;
}

void mcp_elicit_reply(struct mcp *m, uint64_t token, cJSON *result)
{
	struct elicit *e = NULL;
	for (struct elicit **p = &m->elicits; *p; p = &(*p)->next) {
		if ((*p)->token == token) {
			e = *p;
			*p = e->next;
			break;
		}
	}
	if (!e) {
		cJSON_Delete(result);
		return;
	}
	if (!result) {
		result = cJSON_CreateObject();
		cJSON_AddStringToObject(result, "action", "decline");
	}
	if (!strcmp(json_str(result, "action", ""), "accept")) {
		cJSON *filled = mcp_elicit_defaults(
		    e->schema, cJSON_GetObjectItem(result, "content"));
		cJSON_DeleteItemFromObject(result, "content");
		cJSON_AddItemToObject(result, "content", filled);
	}
	if (e->gen == m->gen && m->t && !m->closing && m->state != MCP_FAILED &&
	    m->state != MCP_CLOSED)
		mcp_reply(m, e->id, result, 0, NULL);
	else
		cJSON_Delete(result); /* asked by a server since gone */
	cJSON_Delete(e->id);
	cJSON_Delete(e->schema);
	free(e);
}

void mcp_call_hold(struct mcp *m, uint64_t call, int hold)
{
	struct req *r;
	for (r = m->reqs; r && r->id != call; r = r->next)
		;
	/* a release of a call that was not held leaves its time running */
	if (!r || r->timeout_ms <= 0 || r->held == !!hold)
		return;
	r->held = !!hold;
	if (r->timer)
		loop_timer_cancel(m->loop, r->timer);
	r->timer =
	    hold ? 0 : loop_timer_add(m->loop, r->timeout_ms, req_timeout, r);
}

int mcp_elicit_live(const struct mcp *m, uint64_t token)
{
	for (const struct elicit *e = m->elicits; e; e = e->next)
		if (e->token == token)
			return e->gen == m->gen && m->t && !m->closing &&
			       m->state != MCP_FAILED && m->state != MCP_CLOSED;
	return 0;
}

void mcp_close(struct mcp *m)
{
	if (m->closing)
		return;
	m->closing = 1;
	while (m->reqs) {
		struct req *r = req_take(m, m->reqs->id);
		if (r->kind == REQ_CALL && r->done)
			r->done(m, NULL, "the connection was closed", r->arg);
		req_free(r);
	}
	if (m->t) {
		m->t->ops->close(m->t);
	} else {
		m->state = MCP_CLOSED;
		mcp_changed(m);
	}
}

void mcp_free(struct mcp *m)
{
	if (!m)
		return;
	while (m->reqs)
		req_free(req_take(m, m->reqs->id));
	while (m->elicits) {
		struct elicit *e = m->elicits;
		m->elicits = e->next;
		cJSON_Delete(e->id);
		cJSON_Delete(e->schema);
		free(e);
	}
	if (m->relist_timer)
		loop_timer_cancel(m->loop, m->relist_timer);
	if (m->t)
		m->t->ops->free(m->t);
	if (m->own_http)
		http_free(m->own_http);
	cJSON_Delete(m->spec);
	cJSON_Delete(m->server_info);
	cJSON_Delete(m->tools);
	cJSON_Delete(m->listing);
	free(m->name);
	free(m->why);
	free(m->version);
	free(m);
}
