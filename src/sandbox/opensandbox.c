/* opensandbox.c: the `opensandbox` sandbox backend. One sandbox per run
 * on an OpenSandbox server (alibaba/OpenSandbox: a lifecycle server
 * that runs sandboxes on a Docker host or a Kubernetes cluster, and an
 * execd daemon inside each), driven over HTTP: created from the image
 * with the limits sent as resourceLimits, the network denied unless
 * --network (or an allowlist) says otherwise, metadata naming the run
 * and its owner so that a later start deletes what a crashed assay
 * left, its expiration renewed while the run lives, deleted at the
 * end, on Ctrl-C and on errors. Here: the requests, the start, the
 * renewals, the stop and the release. Commands: os_exec.c; files:
 * os_files.c. Wire facts: ../shared/reference/protocols.md section E. */
#include "assay/config.h"
#include "assay/curllib.h"
#include "assay/http.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/os_internal.h"
#include "sandbox/owner.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define OS_CALL_MS 30000   /* a control request */
#define OS_READY_MS 300000 /* from the create to Running */
#define OS_DELETE_MS 15000 /* the stop's DELETE */
#define OS_DRAIN_MS 10000  /* file operations may finish at stop */
#define OS_MAX_BODY (8u << 20)
/* Descriptors an OpenSandbox sandbox holds at most here: 10. Measured
 * as for LOCAL_FDS (local.c), the same suite with "sandbox":
 * "opensandbox" against tests/fakes/fake_opensandbox.py: clean under
 * `ulimit -n 23`, not under 22. */
#define OS_FDS 10

/* ---- requests ---- */

struct os_call {
	struct sbx *s;
	struct os_call *next; /* in the sandbox's list of calls */
	struct http_xfer *x;
	struct buf body;
	long status;
	os_reply_fn fn;
	void *arg;
};

char *os_server_message(long status, const struct buf *body)
{
	cJSON *j =
	    body->len ? cJSON_ParseWithLength(body->data, body->len) : NULL;
	char *m = NULL;
	const char *msg = json_str(j, "message", NULL);
	const char *code = json_str(j, "code", NULL);
	const cJSON *detail = cJSON_GetObjectItem(j, "detail");
	if (msg && *msg)
		m = code && *code
		        ? xasprintf("%s (%s, HTTP %ld)", msg, code, status)
		        : xasprintf("%s (HTTP %ld)", msg, status);
	else if (cJSON_IsArray(detail) && cJSON_GetArraySize(detail) > 0) {
		const cJSON *d0 = cJSON_GetArrayItem(detail, 0);
		char *loc = json_print(cJSON_GetObjectItem(d0, "loc"));
		m = xasprintf("the server refused the request: %s at %s (HTTP "
		              "%ld)",
		              json_str(d0, "msg", "invalid"), loc ? loc : "?",
		              status);
		free(loc);
	} else if (cJSON_IsString(detail))
		m = xasprintf("%s (HTTP %ld)", detail->valuestring, status);
	else if (body->len)
		m = xasprintf("%.*s (HTTP %ld)",
		              (int)(body->len > 300 ? 300 : body->len),
		              body->data, status);
	else
		m = xasprintf("HTTP %ld", status);
	cJSON_Delete(j);
	return m;
}

static void oc_response(struct http_xfer *x, long status, void *arg)
{
	(void)x;
	((struct os_call *)arg)->status = status;
}

static int oc_data(struct http_xfer *x, const char *data, size_t n, void *arg)
{
	(void)x;
	struct os_call *c = arg;
	return buf_append(&c->body, data, n) < 0 ? -1 : 0;
}

/* Take c out of its sandbox's list. */
static void oc_unlink(struct os_call *c)
{
	struct osbx *o = os_of(c->s);
	for (struct os_call **p = &o->calls; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			return;
		}
}

static void oc_done(struct http_xfer *x, int ok, const char *errmsg, void *arg)
{
	(void)x;
	struct os_call *c = arg;
	oc_unlink(c);
	cJSON *reply = c->body.len
	                   ? cJSON_ParseWithLength(c->body.data, c->body.len)
	                   : NULL;
	char *err = NULL;
	long status = ok ? c->status : 0;
	if (!ok)
		err = xstrdup(errmsg ? errmsg : "no answer");
	else if (status >= 300)
		err = os_server_message(status, &c->body);
	if (c->fn)
		c->fn(c->arg, status, reply, err);
	cJSON_Delete(reply);
	free(err);
	buf_free(&c->body);
	free(c);
}

const char **os_execd_headers(struct sbx *s, const char *extra)
{
	struct osbx *o = os_of(s);
	const char **h = xcalloc(o->hdrs.n + 3, sizeof *h);
	size_t n = 0;
	for (size_t i = 0; i < o->hdrs.n; i++)
		h[n++] = o->hdrs.v[i];
	if (extra)
		h[n++] = extra;
	return h;
}

struct os_call *os_call(struct sbx *s, int execd, const char *method,
                        const char *path, const char *json, long timeout_ms,
                        os_reply_fn fn, void *arg, char **err)
{
	struct osbx *o = os_of(s);
	char *url = xasprintf("%s%s", execd ? o->execd : o->api, path);
	char *key =
	    o->key ? xasprintf("OPEN-SANDBOX-API-KEY: %s", o->key) : NULL;
	const char *ctype = json ? "Content-Type: application/json" : NULL;
	const char **h;
	if (execd) {
		h = os_execd_headers(s, ctype);
	} else {
		h = xcalloc(4, sizeof *h);
		size_t n = 0;
		if (key)
			h[n++] = key;
		if (ctype)
			h[n++] = ctype;
	}
	struct os_call *c = xcalloc(1, sizeof *c);
	c->s = s;
	c->fn = fn;
	c->arg = arg;
	buf_init(&c->body, OS_MAX_BODY);
	struct http_request r = {
	    .method = method,
	    .url = url,
	    .headers = h,
	    .body = json,
	    .body_len = json ? strlen(json) : 0,
	    .total_timeout_ms = timeout_ms,
	    .on_response = oc_response,
	    .on_data = oc_data,
	    .on_done = oc_done,
	    .arg = c,
	};
	c->x = http_start(o->http, &r, err);
	free(h);
	free(key);
	free(url);
	if (!c->x) {
		buf_free(&c->body);
		free(c);
		return NULL;
	}
	c->next = o->calls;
	o->calls = c;
	return c;
}

void os_call_cancel(struct os_call *c)
{
	if (!c)
		return;
	oc_unlink(c);
	http_cancel(c->x);
	buf_free(&c->body);
	free(c);
}

/* A blocking request (the release): its status, or -1. */
static long call_sync(struct sbx *s, const char *method, const char *path)
{
	struct osbx *o = os_of(s);
	char *url = xasprintf("%s%s", o->api, path);
	char *key =
	    o->key ? xasprintf("OPEN-SANDBOX-API-KEY: %s", o->key) : NULL;
	const char *h[] = {key, NULL};
	struct http_request r = {.method = method,
	                         .url = url,
	                         .headers = key ? h : NULL,
	                         .connect_timeout_ms = 3000,
	                         .total_timeout_ms = 5000};
	struct os_call c = {0};
	r.on_response = oc_response;
	r.arg = &c;
	char *err = NULL;
	int rc = http_perform(&r, &err);
	free(err);
	free(key);
	free(url);
	return rc == 0 ? c.status : -1;
}

void os_mark_expired(struct sbx *s)
{
	struct osbx *o = os_of(s);
	if (o->expired)
		return;
	o->expired = 1;
	s->lost = os_expired_msg(s);
	log_error("%s", s->lost);
	if (o->renew_timer)
		loop_timer_cancel(s->loop, o->renew_timer);
	o->renew_timer = 0;
	free(o->id); /* nothing left to delete */
	o->id = NULL;
}

char *os_expired_msg(struct sbx *s)
{
	struct osbx *o = os_of(s);
	return xasprintf("opensandbox: sandbox %s is gone from %s (it expired "
	                 "or was deleted under the run); the workspace as of "
	                 "the last call is kept: 'assay resume %s' continues "
	                 "in a new sandbox",
	                 o && o->id ? o->id : "?", o ? o->server : "?",
	                 s->run_dir);
}

/* ---- the renewals ---- */

static void renew_arm(struct sbx *s);

/* RFC 3339, UTC, for the server. */
static void rfc3339(time_t t, char out[32])
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void on_renewed(void *arg, long status, cJSON *reply, const char *err)
{
	struct sbx *s = arg;
	struct osbx *o = os_of(s);
	o->renew_call = NULL;
	if (status == 200) {
		o->renewals++;
		log_info("opensandbox: sandbox %s renewed until %s", o->id,
		         json_str(reply, "expiresAt", "?"));
	} else if (status == 404) {
		os_mark_expired(s);
		return;
	} else {
		log_warn(
		    "opensandbox: cannot renew sandbox %s: %s (tried again "
		    "in 10 s)",
		    o->id, err ? err : "no answer");
		o->renew_timer =
		    loop_timer_add(s->loop, 10000, (loop_timer_fn)renew_arm, s);
		return;
	}
	renew_arm(s);
}

static void renew_now(void *arg)
{
	struct sbx *s = arg;
	struct osbx *o = os_of(s);
	o->renew_timer = 0;
	if (o->draining || o->expired)
		return;
	char at[32], *err = NULL;
	rfc3339(time(NULL) + o->ttl_s, at);
	char *body = xasprintf("{\"expiresAt\":\"%s\"}", at);
	char *path = xasprintf("/sandboxes/%s/renew-expiration", o->id);
	o->renew_call =
	    os_call(s, 0, "POST", path, body, OS_CALL_MS, on_renewed, s, &err);
	if (!o->renew_call) {
		log_warn("opensandbox: cannot renew: %s", err ? err : "?");
		o->renew_timer = loop_timer_add(s->loop, 10000, renew_now, s);
	}
	free(err);
	free(path);
	free(body);
}

/* The next renewal: a third of the TTL from now, well before half of
 * it is gone. */
static void renew_arm(struct sbx *s)
{
	struct osbx *o = os_of(s);
	o->renew_timer = 0;
	if (o->draining || o->expired)
		return;
	o->renew_timer =
	    loop_timer_add(s->loop, o->ttl_s * 1000 / 3, renew_now, s);
}

/* ---- the start ---- */

struct os_start {
	struct sbx_job job;
	struct sbx *s;
	struct os_call *call;
	uint64_t timer;
	int64_t t0;
	int stage, pings;
	struct os_fop *staging;
	struct os_exec *check; /* whose execd answers (os_check_mine) */
	struct buf seen;
	struct strv sweep; /* ids of leftovers to delete */
	size_t swept;
};

static void ost_free(struct os_start *st)
{
	os_call_cancel(st->call);
	os_fop_cancel(st->staging);
	os_exec_detach(st->check);
	buf_free(&st->seen);
	if (st->timer)
		loop_timer_cancel(st->s->loop, st->timer);
	strv_free(&st->sweep);
	free(st);
}

static void ost_abort(struct sbx_job *j)
{
	ost_free((struct os_start *)j);
}

/* The start is over: err (taken) NULL when the sandbox is ready. */
static void ost_end(struct os_start *st, char *err)
{
	struct sbx *s = st->s;
	struct osbx *o = os_of(s);
	st->call = NULL;
	if (!err) {
		o->started = 1;
		renew_arm(s);
		log_info("opensandbox: sandbox %s ready in %lld ms", o->id,
		         (long long)(now_ms() - st->t0));
		/* the one warning of the run: on stderr too (the session
		 * takes a start's warning as a note only) */
		err = os_server_net_warning(s->cfg);
		if (err) {
			log_warn("%s", err);
			fprintf(stderr, "assay: warning: %s\n", err);
		}
	}
	sbx_job_end(&st->job, o->started ? SBX_OK : SBX_FAILED, err, NULL,
	            NULL);
	free(err);
	st->timer = 0;
	ost_free(st);
}

/* A request of the start; its failure ends the start with what. */
static void ost_call(struct os_start *st, int execd, const char *method,
                     const char *path, const char *json, os_reply_fn fn)
{
	char *err = NULL;
	st->call =
	    os_call(st->s, execd, method, path, json, OS_CALL_MS, fn, st, &err);
	if (!st->call)
		ost_end(st, xasprintf("opensandbox: %s", err ? err : "?"));
	free(err);
}

int os_policy_refused(long status, const char *err)
{
	return status == 400 && err && strstr(err, "networkPolicy");
}

char *os_no_egress_msg(const char *server, const char *why)
{
	return xasprintf(
	    "opensandbox: the server at %s cannot keep a sandbox off the "
	    "network: it refuses any networkPolicy, saying \"%s\". Its "
	    "Docker runtime has no egress component (or runs sandboxes with "
	    "network_mode \"host\"), and assay does not start a sandbox "
	    "with a network you did not ask for. Either configure the server's "
	    "egress (in "
	    "its config, ~/.sandbox.toml: [egress] image = "
	    "\"opensandbox/egress:...\" and [docker] network_mode = "
	    "\"bridge\"; see its server/README.md), or accept the server's "
	    "network: run with --network, or set \"opensandbox\": "
	    "{\"network_policy\": \"server\"} in your user config",
	    server, why ? why : "HTTP 400");
}

char *os_server_net_warning(const struct config *cfg)
{
	if (cfg->network || !cfg->opensandbox_server_net)
		return NULL;
	return xstrdup(
	    cfg->net_allow.n
	        ? "opensandbox: network_policy is \"server\": no "
	          "networkPolicy sent, so network.allow is not enforced; the "
	          "sandbox's network is whatever the server gives it"
	        : "opensandbox: network_policy is \"server\": no "
	          "networkPolicy sent; the sandbox's network is whatever the "
	          "server gives it (often the host's), not none");
}

/* No answer, or an error answer: what to tell the user. */
static char *start_error(struct os_start *st, const char *what, long status,
                         const char *err)
{
	struct osbx *o = os_of(st->s);
	if (!status)
		return xasprintf("opensandbox: cannot reach the server at %s "
		                 "(%s): is it running? point --opensandbox-url "
		                 "(or OPEN_SANDBOX_DOMAIN) at it, or use "
		                 "--sandbox local",
		                 o->server, err ? err : "no answer");
	if (status == 401 || status == 403)
		return xasprintf("opensandbox: the server at %s refused the "
		                 "key: %s; set OPEN_SANDBOX_API_KEY to a key "
		                 "of that server",
		                 o->server, err ? err : "unauthorized");
	return xasprintf("opensandbox: cannot %s: %s", what,
	                 err ? err : "error");
}

static void on_staged(void *arg, char *err)
{
	struct os_start *st = arg;
	st->staging = NULL;
	ost_end(st, err);
}

static void on_ping(void *arg, long status, cJSON *reply, const char *err);
static void check_mine(struct os_start *st);

static void ping_again(void *arg)
{
	struct os_start *st = arg;
	st->timer = 0;
	ost_call(st, 1, "GET", "/ping", NULL, on_ping);
}

/* execd answers: stage the inputs, then the start is over. */
static void on_ping(void *arg, long status, cJSON *reply, const char *err)
{
	struct os_start *st = arg;
	(void)reply;
	st->call = NULL;
	if (status != 200) {
		if (++st->pings < 100) {
			st->timer =
			    loop_timer_add(st->s->loop, 200, ping_again, st);
			return;
		}
		ost_end(st, xasprintf("opensandbox: the sandbox's execd does "
		                      "not answer: %s",
		                      err ? err : "no answer"));
		return;
	}
	check_mine(st);
}

static void stage(struct os_start *st)
{
	char *serr = NULL;
	st->staging = os_stage(st->s, st->stage, on_staged, st, &serr);
	if (!st->staging)
		ost_end(st, serr);
}

static void on_check_output(void *arg, enum sbx_stream stream, const char *data,
                            size_t n)
{
	struct os_start *st = arg;
	if (stream == SBX_STDOUT && st->seen.len + n < 256)
		buf_append(&st->seen, data, n);
}

/* The sandbox whose execd answered: ours, or (network_mode host: one
 * port 44772 for every sandbox of the host) another's. */
static void on_checked(void *arg, const struct sbx_exit *ex)
{
	struct os_start *st = arg;
	struct osbx *o = os_of(st->s);
	st->check = NULL;
	if (ex->exit_code != 0) {
		ost_end(st,
		        xasprintf("opensandbox: the first command in "
		                  "sandbox %s failed (exit %d%s%s)",
		                  o->id, ex->exit_code, ex->error ? ": " : "",
		                  ex->error ? ex->error : ""));
		return;
	}
	const char *seen = st->seen.data ? st->seen.data : "";
	while (st->seen.len && isspace((unsigned char)seen[st->seen.len - 1]))
		st->seen.data[--st->seen.len] = '\0';
	/* empty: an execd whose commands do not inherit the sandbox's
	 * environment; nothing to tell then */
	if (*seen && strcmp(seen, o->mark)) {
		ost_end(st, xasprintf(
		                "opensandbox: the execd the server gave for "
		                "sandbox %s (%s) belongs to another sandbox: "
		                "the server runs sandboxes with network_mode "
		                "\"host\", where all share the host's port "
		                "%d and only the first one's execd answers. "
		                "Run one assay at a time on this server (no "
		                "eval -j, no second run), or configure it with "
		                "[docker] network_mode = \"bridge\"",
		                o->id, o->execd, OS_EXECD_PORT));
		return;
	}
	stage(st);
}

static void check_mine(struct os_start *st)
{
	struct os_exec_args a = {
	    .command = "printf '%s\\n' \"${ASSAY_SANDBOX_MARK-}\"",
	    .internal = 1,
	    .timeout_s = 60};
	struct sbx_exec_obs obs = {on_check_output, on_checked, st};
	char *err = NULL;
	buf_init(&st->seen, 0);
	st->check = os_exec_start(st->s, &a, &obs, &err);
	if (!st->check)
		ost_end(st, xasprintf("opensandbox: %s", err ? err : "?"));
	free(err);
}

/* The endpoint's headers, also in a 0600 file for the helpers. */
static int keep_headers(struct sbx *s, const cJSON *headers, char **err)
{
	struct osbx *o = os_of(s);
	struct buf b;
	buf_init(&b, 0);
	const cJSON *h;
	cJSON_ArrayForEach(h, headers)
	{
		if (!cJSON_IsString(h) || strpbrk(h->string, "\r\n:") ||
		    strpbrk(h->valuestring, "\r\n"))
			continue;
		char *line = xasprintf("%s: %s", h->string, h->valuestring);
		buf_printf(&b, "%s\n", line);
		strv_take(&o->hdrs, line);
	}
	o->hdr_file = xasprintf("%s/.opensandbox-headers", s->run_dir);
	mode_t old = umask(077); /* the headers may hold a token */
	int rc =
	    write_file_atomic(o->hdr_file, b.data ? b.data : "", b.len, err);
	umask(old);
	buf_free(&b);
	return rc;
}

static void on_endpoint(void *arg, long status, cJSON *reply, const char *err)
{
	struct os_start *st = arg;
	struct osbx *o = os_of(st->s);
	st->call = NULL;
	const char *ep = json_str(reply, "endpoint", NULL);
	if (status != 200 || !ep || !*ep) {
		ost_end(st, start_error(st, "find the sandbox's execd", status,
		                        err ? err : "no endpoint"));
		return;
	}
	/* scheme-less "host:port/path"; a scheme is taken as given */
	size_t n = strlen(ep);
	while (n && ep[n - 1] == '/')
		n--;
	o->execd = strstr(ep, "://") ? xstrndup(ep, n)
	                             : xasprintf("http://%.*s", (int)n, ep);
	char *herr = NULL;
	if (keep_headers(st->s, cJSON_GetObjectItem(reply, "headers"), &herr) <
	    0) {
		ost_end(st, xasprintf("opensandbox: %s", herr));
		free(herr);
		return;
	}
	ost_call(st, 1, "GET", "/ping", NULL, on_ping);
}

static void on_state(void *arg, long status, cJSON *reply, const char *err);

/* What run_start records of the image: the server's account of it in
 * the sandbox it polled (the lifecycle API's ImageSpec names the image,
 * uri, and no digest; its auth is never kept), "" when it named none.
 * No request of its own: the poll that saw Running carries it. */
static void os_image_reported(struct sbx *s, const cJSON *reply)
{
	const char *uri =
	    json_str(cJSON_GetObjectItem(reply, "image"), "uri", "");
	free(s->image_reported);
	s->image_reported = xstrndup(uri, strnlen(uri, 512));
	log_info("opensandbox: the server reports the image as '%s' (no "
	         "digest: its API has none)",
	         s->image_reported);
}

static void poll_again(void *arg)
{
	struct os_start *st = arg;
	st->timer = 0;
	char *path = xasprintf("/sandboxes/%s", os_of(st->s)->id);
	ost_call(st, 0, "GET", path, NULL, on_state);
	free(path);
}

/* The sandbox's state: wait for Running. */
static void on_state(void *arg, long status, cJSON *reply, const char *err)
{
	struct os_start *st = arg;
	struct osbx *o = os_of(st->s);
	st->call = NULL;
	if (status != 200) {
		ost_end(st,
		        start_error(st, "see the new sandbox", status, err));
		return;
	}
	const cJSON *stat = cJSON_GetObjectItem(reply, "status");
	const char *state = json_str(stat, "state", "");
	if (!strcmp(state, "Running")) {
		os_image_reported(st->s, reply);
		char *path = xasprintf("/sandboxes/%s/endpoints/%d", o->id,
		                       OS_EXECD_PORT);
		ost_call(st, 0, "GET", path, NULL, on_endpoint);
		free(path);
		return;
	}
	if (!strcmp(state, "Failed") || !strcmp(state, "Terminated") ||
	    !strcmp(state, "Stopping")) {
		ost_end(st, xasprintf("opensandbox: sandbox %s is %s: %s (%s); "
		                      "check the image (--image) and the "
		                      "limits against the server's",
		                      o->id, state,
		                      json_str(stat, "message", "no message"),
		                      json_str(stat, "reason", "no reason")));
		return;
	}
	if (now_ms() - st->t0 > OS_READY_MS) {
		ost_end(st, xasprintf("opensandbox: sandbox %s still %s after "
		                      "%d s (%s)",
		                      o->id, state, OS_READY_MS / 1000,
		                      json_str(stat, "message", "")));
		return;
	}
	int64_t wait = now_ms() - st->t0 < 2000 ? 100 : 500;
	st->timer = loop_timer_add(st->s->loop, wait, poll_again, st);
}

static void os_on_created(void *arg, long status, cJSON *reply, const char *err)
{
	struct os_start *st = arg;
	struct osbx *o = os_of(st->s);
	st->call = NULL;
	const char *id = json_str(reply, "id", NULL);
	if (os_policy_refused(status, err)) {
		ost_end(st, os_no_egress_msg(o->server, err));
		return;
	}
	if ((status != 202 && status != 200 && status != 201) || !id) {
		ost_end(st, start_error(st, "create a sandbox", status,
		                        err ? err : "no id in the answer"));
		return;
	}
	o->id = xstrdup(id);
	log_info("opensandbox: sandbox %s created on %s", o->id, o->server);
	on_state(st, 200, reply, NULL);
}

/* Kubernetes quantities from the limits. */
static cJSON *resource_limits(struct sbx *s)
{
	const struct config *cfg = s->cfg;
	cJSON *r = cJSON_CreateObject();
	char v[32];
	snprintf(v, sizeof v, "%ldMi", cfg->mem_mb > 0 ? cfg->mem_mb : 4096);
	cJSON_AddStringToObject(r, "memory", v);
	long cpus = cfg->cpus > 0 ? cfg->cpus : 1;
	snprintf(v, sizeof v, "%ld", cpus);
	cJSON_AddStringToObject(r, "cpu", v);
	os_of(s)->threads = cpus > 4 ? 4 : cpus;
	return r;
}

/* deny-all unless --network; an allowlist becomes egress rules. None
 * either with opensandbox.network_policy "server": the user accepted
 * the server's network (its start says so). */
static void network_policy(struct sbx *s, cJSON *o)
{
	const struct config *cfg = s->cfg;
	if (cfg->network || cfg->opensandbox_server_net)
		return; /* the server's default: open */
	cJSON *p = cJSON_AddObjectToObject(o, "networkPolicy");
	cJSON_AddStringToObject(p, "defaultAction", "deny");
	cJSON *eg = cJSON_AddArrayToObject(p, "egress");
	for (size_t i = 0; i < cfg->net_allow.n; i++) {
		cJSON *rule = cJSON_CreateObject();
		cJSON_AddStringToObject(rule, "action", "allow");
		cJSON_AddStringToObject(rule, "target", cfg->net_allow.v[i]);
		cJSON_AddItemToArray(eg, rule);
	}
}

/* A short digest of the run dir's directory: metadata values must be
 * label values on Kubernetes (63 characters, no slashes). */
static char *root_digest(const char *run_dir)
{
	char *root = owner_run_root(run_dir), hex[65];
	sha256_hex(root, strlen(root), hex);
	free(root);
	return xstrndup(hex, 16);
}

static char *create_body(struct sbx *s)
{
	struct osbx *o = os_of(s);
	cJSON *b = cJSON_CreateObject();
	cJSON *img = cJSON_AddObjectToObject(b, "image");
	cJSON_AddStringToObject(img, "uri", s->image);
	cJSON *ep = cJSON_AddArrayToObject(b, "entrypoint");
	cJSON_AddItemToArray(ep, cJSON_CreateString("tail"));
	cJSON_AddItemToArray(ep, cJSON_CreateString("-f"));
	cJSON_AddItemToArray(ep, cJSON_CreateString("/dev/null"));
	cJSON_AddNumberToObject(b, "timeout", (double)o->ttl_s);
	cJSON_AddItemToObject(b, "resourceLimits", resource_limits(s));
	/* a mark only this sandbox has: its first command reads it back */
	cJSON *env = cJSON_AddObjectToObject(b, "env");
	cJSON_AddStringToObject(env, "ASSAY_SANDBOX_MARK", o->mark);
	char *digest = root_digest(s->run_dir);
	cJSON_AddItemToObject(b, "metadata", owner_labels(s, digest));
	free(digest);
	network_policy(s, b);
	char *json = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	return json;
}

static void create(struct os_start *st)
{
	char *body = create_body(st->s);
	ost_call(st, 0, "POST", "/sandboxes", body, os_on_created);
	free(body);
}

static void ost_sweep_next(struct os_start *st);

static void on_swept(void *arg, long status, cJSON *reply, const char *err)
{
	struct os_start *st = arg;
	(void)reply;
	st->call = NULL;
	const char *id = st->sweep.v[st->swept - 1];
	if (status == 204 || status == 200 || status == 404)
		log_info("opensandbox: deleted sandbox %s, left by a run whose "
		         "assay is gone",
		         id);
	else
		log_warn("opensandbox: cannot delete leftover sandbox %s: %s",
		         id, err ? err : "no answer");
	ost_sweep_next(st);
}

/* Delete the leftovers one by one, then create. */
static void ost_sweep_next(struct os_start *st)
{
	if (st->swept >= st->sweep.n) {
		create(st);
		return;
	}
	char *path = xasprintf("/sandboxes/%s", st->sweep.v[st->swept++]);
	ost_call(st, 0, "DELETE", path, NULL, on_swept);
	free(path);
}

/* This host's sandboxes: those whose assay is dead, of runs kept
 * where this run's is, are deleted; the answer also says the server
 * and the key work. */
static void on_listed(void *arg, long status, cJSON *reply, const char *err)
{
	struct os_start *st = arg;
	st->call = NULL;
	if (status != 200) {
		ost_end(st, start_error(st, "list the sandboxes", status, err));
		return;
	}
	char *digest = root_digest(st->s->run_dir);
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(reply, "items"))
	{
		const cJSON *meta = cJSON_GetObjectItem(it, "metadata");
		const char *id = json_str(it, "id", NULL);
		const char *root = json_str(meta, "assay.root", "");
		if (id && !strcmp(root, digest) && !owner_alive(meta))
			strv_push(&st->sweep, id);
	}
	free(digest);
	ost_sweep_next(st);
}

static void list_mine(struct os_start *st)
{
	char host[256];
	if (gethostname(host, sizeof host) < 0)
		snprintf(host, sizeof host, "unknown");
	host[sizeof host - 1] = '\0';
	char *kv = xasprintf("assay.owner.host=%s", host);
	char *q = xfer_escape(kv);
	/* the escape keeps '/', and '=' must go as %3D inside the value */
	char *path = xasprintf("/sandboxes?metadata=%s&pageSize=100", q);
	ost_call(st, 0, "GET", path, NULL, on_listed);
	free(path);
	free(q);
	free(kv);
}

int os_server_url(const char *v, char **server, char **api, char **err)
{
	if (!v || !*v)
		return set_err(err, "opensandbox: no server: set "
		                    "--opensandbox-url URL (or opensandbox.url "
		                    "in the config, or OPEN_SANDBOX_DOMAIN)");
	const char *scheme = strstr(v, "://");
	if (scheme && strncmp(v, "http://", 7) && strncmp(v, "https://", 8))
		return set_err(err, "opensandbox: '%s' is not an http(s) URL",
		               v);
	size_t n = strlen(v);
	while (n && v[n - 1] == '/')
		n--;
	char *base =
	    scheme ? xstrndup(v, n) : xasprintf("http://%.*s", (int)n, v);
	size_t bl = strlen(base);
	if (bl >= 3 && !strcmp(base + bl - 3, "/v1"))
		base[bl - 3] = '\0';
	*server = xstrdup(v);
	*api = xasprintf("%s/v1", base);
	free(base);
	return 0;
}

void os_start(struct sbx *s, int stage_inputs, sbx_done_fn fn, void *arg)
{
	const struct config *cfg = s->cfg;
	struct osbx *o = xcalloc(1, sizeof *o);
	s->priv = o;
	char *err = NULL;
	const char *url = cfg->opensandbox_url;
	if (!url || !*url)
		url = getenv("OPEN_SANDBOX_DOMAIN");
	if (os_server_url(url, &o->server, &o->api, &err) < 0) {
		sbx_later(s, fn, arg, SBX_FAILED, err, NULL, NULL);
		return;
	}
	const char *key = getenv("OPEN_SANDBOX_API_KEY");
	o->key = key && *key ? xstrdup(key) : NULL;
	o->ttl_s = cfg->opensandbox_ttl_s >= 60 ? cfg->opensandbox_ttl_s : 3600;
	o->http = http_new(s->loop);
	if (curllib_get(&err) < 0) { /* said as itself, not as the server's */
		sbx_later(s, fn, arg, SBX_FAILED,
		          xasprintf("opensandbox: %s", err), NULL, NULL);
		free(err);
		return;
	}
	free(s->image);
	s->image = xstrdup(cfg->image && *cfg->image ? cfg->image
	                                             : "assay-sandbox:latest");
	uint64_t rnd;
	if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		rnd = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 40);
	snprintf(o->mark, sizeof o->mark, "%016llx", (unsigned long long)rnd);
	struct os_start *st = xcalloc(1, sizeof *st);
	st->s = s;
	st->stage = stage_inputs;
	st->t0 = now_ms();
	sbx_job_begin(s, &st->job, "the start", 0, fn, arg, ost_abort);
	list_mine(st);
}

/* ---- the ops ---- */

static struct sbx_exec *os_exec(struct sbx *s, const struct sbx_exec_req *r,
                                const struct sbx_exec_obs *obs, char **err)
{
	struct osbx *o = os_of(s);
	if (!r->command && (!r->argv || !r->argv[0])) {
		set_err(err, "sandbox: nothing to run");
		return NULL;
	}
	if (!o || !o->started || o->draining) {
		set_err(err, "sandbox: %s",
		        o && o->draining ? "stopping" : "not running");
		return NULL;
	}
	if (o->expired) {
		*err = xstrdup(s->lost);
		return NULL;
	}
	struct os_exec_args a = {
	    .command = r->command,
	    .argv = r->argv,
	    .keep_stdin = r->keep_stdin,
	    .reply_end = r->reply_end,
	    .timeout_s = r->timeout_s > 0 ? r->timeout_s : s->cfg->timeout_s,
	};
	struct os_exec *e = os_exec_start(s, &a, obs, err);
	return (struct sbx_exec *)e;
}

static void os_cancel(struct sbx_exec *e)
{
	os_exec_cancel((struct os_exec *)e);
}

static int os_write(struct sbx_exec *e, const void *data, size_t n)
{
	return os_exec_write((struct os_exec *)e, data, n);
}

/* ---- stop ---- */

static void on_deleted(void *arg, long status, cJSON *reply, const char *err)
{
	struct sbx *s = arg;
	struct osbx *o = os_of(s);
	(void)reply;
	o->delete_call = NULL;
	if (status == 204 || status == 200 || status == 404) {
		log_info("opensandbox: sandbox %s deleted (%d renewals)", o->id,
		         o->renewals);
		free(o->id);
		o->id = NULL;
		sbx_stopped(s, SBX_OK, NULL);
		return;
	}
	char *why = xasprintf("opensandbox: cannot delete sandbox %s: %s (the "
	                      "next run deletes it, or it expires)",
	                      o->id, err ? err : "no answer");
	log_warn("%s", why);
	sbx_stopped(s, SBX_FAILED, why);
	free(why);
}

static void os_drained(struct sbx *s)
{
	struct osbx *o = os_of(s);
	sbx_hold(s);
	os_exec_free_all(s);
	if (sbx_unhold(s))
		return;
	if (!o->id) {
		sbx_stopped(s, SBX_OK, NULL);
		return;
	}
	char *path = xasprintf("/sandboxes/%s", o->id), *err = NULL;
	o->delete_call = os_call(s, 0, "DELETE", path, NULL, OS_DELETE_MS,
	                         on_deleted, s, &err);
	if (!o->delete_call)
		on_deleted(s, 0, NULL, err);
	free(err);
	free(path);
}

static void stop_begin(void *arg)
{
	struct sbx *s = arg;
	os_of(s)->stop_timer = 0;
	sbx_hold(s);
	os_exec_stop(s, 0);
	if (sbx_unhold(s))
		return;
	sbx_drain(s, OS_DRAIN_MS, os_drained);
}

static void os_stop(struct sbx *s)
{
	struct osbx *o = os_of(s);
	if (!o) {
		sbx_stopped(s, SBX_OK, NULL);
		return;
	}
	o->draining = 1;
	if (o->renew_timer)
		loop_timer_cancel(s->loop, o->renew_timer);
	o->renew_timer = 0;
	os_call_cancel(o->renew_call);
	o->renew_call = NULL;
	o->stop_timer = loop_timer_add(s->loop, 0, stop_begin, s);
}

static void os_destroy(struct sbx *s)
{
	struct osbx *o = os_of(s);
	if (!o)
		return;
	o->draining = 1;
	if (o->renew_timer)
		loop_timer_cancel(s->loop, o->renew_timer);
	if (o->stop_timer)
		loop_timer_cancel(s->loop, o->stop_timer);
	os_exec_free_all(s);
	while (o->calls) /* the renewal, the DELETE, those nobody waits for */
		os_call_cancel(o->calls);
	if (o->id) {
		char *path = xasprintf("/sandboxes/%s", o->id);
		long st = call_sync(s, "DELETE", path);
		if (st == 204 || st == 200 || st == 404)
			log_info("opensandbox: sandbox %s deleted", o->id);
		else
			log_warn("opensandbox: cannot delete sandbox %s (the "
			         "next run deletes it, or it expires)",
			         o->id);
		free(path);
	}
	http_free(o->http);
	if (o->hdr_file)
		unlink(o->hdr_file);
	free(o->hdr_file);
	strv_free(&o->hdrs);
	buf_free(&o->pre.recs);
	free(o->server);
	free(o->api);
	free(o->key);
	free(o->id);
	free(o->execd);
	free(o);
	s->priv = NULL;
}

/* A second sandbox of this kind talks to the same server. */
static void os_config_copy(struct config *dst, const struct config *src)
{
	config_set(&dst->opensandbox_url, src->opensandbox_url);
}

/* Whether there is a sandbox to work in (sandbox.c refuses the file
 * operations when not, with sbx_lost's message once it expired). */
static int os_ready(const struct sbx *s)
{
	const struct osbx *o = s->priv;
	return o && o->started && !o->draining && !o->expired;
}

const struct sbx_ops sbx_opensandbox_ops = {
    .name = "opensandbox",
    .caps = SBX_CAP_IMPORT_TAR | SBX_CAP_DELTA | SBX_CAP_NET_ALLOW,
    .fds = OS_FDS,
    .start = os_start,
    .exec = os_exec,
    .cancel = os_cancel,
    .exec_write = os_write,
    .ready = os_ready,
    .read_file = os_read_file,
    .write_file = os_write_file,
    .list = os_list,
    .fetch = os_fetch,
    .export_tar = os_export_tar,
    .import_tar = os_import_tar,
    .export_delta = os_export_delta,
    .stop = os_stop,
    .destroy = os_destroy,
    .probe = os_probe,
    .probe_chosen_only = 1,
    .config_copy = os_config_copy,
};
