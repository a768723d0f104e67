/* openai.c: the Chat Completions provider (protocols.md A), for OpenAI
 * and the servers that speak its dialect (Ollama, vLLM, llama.cpp), and
 * the transport the other streaming APIs share: the Responses API
 * (openai-responses, responses.c) and Anthropic's Messages API
 * (anthropic, anthropic.c) build their requests and read their streams
 * there; tries, retries and errors are this file's.
 * One turn is a sequence of tries; each try is one HTTP stream fed to
 * the chat_stream assembler, and failures go through retry.c. */
#include "llm/llm_internal.h"
#include "assay/config.h"
#include "assay/http.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPENAI_DEFAULT_BASE "https://api.openai.com/v1"
#define OLLAMA_DEFAULT_BASE "http://127.0.0.1:11434/v1"
#define ANTHROPIC_DEFAULT_BASE "https://api.anthropic.com"

struct openai;

/* One HTTP attempt. Outlives a cancel while its on_data is running. */
struct openai_try {
	struct openai *o;
	struct http_xfer *xfer;
	struct chat_stream st;
	struct buf errbody; /* a non-2xx answer's body */
	long status;
	int in_data; /* inside the stream parser: do not free */
	int dead;    /* cancelled while in_data */
};

struct openai {
	struct llm *m;
	char *url;     /* {base}/chat/completions */
	char *auth;    /* Authorization header: never logged */
	char *key_env; /* variable named in messages */
	int key_set;
	int official;  /* api.openai.com: max_completion_tokens */
	int ollama;    /* reads max_tokens only */
	int responses; /* the Responses API (responses.c) */
	int anthropic; /* the Messages API (anthropic.c) */
	char *body;    /* request of the turn in flight */
	int turn;
	int tries;
	uint64_t timer; /* retry backoff */
	struct openai_try *t;
	cJSON *noted; /* what the streams held and this build does not read,
	                 logged once each */
};

static void oai_retry_fire(void *arg);

static void try_free(struct openai_try *t)
{
	chat_stream_free(&t->st);
	buf_free(&t->errbody);
	free(t);
}

/* Abandon the try in flight without callbacks. */
static void oai_drop_try(struct openai *o)
{
	struct openai_try *t = o->t;

	if (!t)
		return;
	o->t = NULL;
	http_cancel(t->xfer);
	t->xfer = NULL;
	if (t->in_data)
		t->dead = 1;
	else
		try_free(t);
}

static void oai_text(void *arg, const char *text, size_t n)
{
	struct openai_try *t = arg;

	if (t->dead)
		return;
	struct llm *m = t->o->m;
	if (m->obs.on_text)
		m->obs.on_text(m->obs.arg, text, n);
}

static void oai_response(struct http_xfer *x, long status, void *arg)
{
	struct openai_try *t = arg;

	t->status = status;
}

static int oai_data(struct http_xfer *x, const char *data, size_t n, void *arg)
{
	struct openai_try *t = arg;

	if (t->dead)
		return -1;
	if (t->status < 200 || t->status > 299) {
		size_t room = t->errbody.max - t->errbody.len;
		buf_append(&t->errbody, data, n < room ? n : room);
		return 0;
	}
	t->in_data = 1;
	int rc = chat_stream_feed(&t->st, data, n);
	t->in_data = 0;
	if (t->dead) {
		try_free(t);
		return -1;
	}
	return rc;
}

/* The try failed: wait and try again, or end the turn with an error.
 * Takes ownership of message. */
static void oai_failed(struct openai *o, struct openai_try *t,
                       struct http_xfer *x, int retry, const char *category,
                       char *message)
{
	struct llm *m = o->m;
	size_t discarded = t->st.text.len;
	int attempt = o->tries;

	try_free(t);
	if (!retry || o->tries >= LLM_MAX_TRIES) {
		if (retry) {
			char *s = xasprintf("%s (gave up after %d tries)",
			                    message, o->tries);
			free(message);
			message = s;
		}
		log_error("%s", message);
		llm_deliver_error(m, category, message, o->tries);
		return;
	}
	long delay = llm_retry_delay(
	    o->tries - 1, x ? http_header(x, "retry-after-ms") : NULL,
	    x ? http_header(x, "retry-after") : NULL, wall_ms(),
	    llm_retry_jitter());
	log_warn("%s (try %d of %d; again in %ld ms)", message, attempt,
	         LLM_MAX_TRIES, delay);
	o->timer = loop_timer_add(m->loop, delay, oai_retry_fire, o);
	/* Last: the observer may cancel or free us. */
	if (m->obs.on_retry)
		m->obs.on_retry(m->obs.arg, attempt, delay, category, message,
		                discarded);
	free(message);
}

/* Log, once per provider, each kind of thing a stream held that this
 * build does not read (a new block or item type, an event, a delta). */
static void oai_log_noted(struct openai *o, const cJSON *noted)
{
	const cJSON *n, *seen;
	if (!o->noted)
		o->noted = cJSON_CreateArray();
	cJSON_ArrayForEach(n, noted)
	{
		int old = 0;
		cJSON_ArrayForEach(seen, o->noted)
		{
			old |= !strcmp(seen->valuestring, n->valuestring);
		}
		if (old)
			continue;
		log_info("%s: the stream held a kind of thing this build does "
		         "not read, %s: ignored, or kept as it came and sent "
		         "back unchanged; never run as a tool",
		         o->m->provider, n->valuestring);
		cJSON_AddItemToArray(o->noted,
		                     cJSON_CreateString(n->valuestring));
	}
}

static void oai_succeeded(struct openai *o, struct openai_try *t)
{
	struct llm_result *r = llm_result_new();
	struct llm *m = o->m;

	r->ok = 1;
	free(r->text);
	r->text = buf_detach(&t->st.text);
	cJSON_Delete(r->tool_calls);
	r->tool_calls = chat_stream_tool_calls(&t->st);
	if (t->st.finish_reason)
		r->finish_reason = xstrdup(t->st.finish_reason);
	else
		r->finish_reason = xstrdup(
		    cJSON_GetArraySize(r->tool_calls) ? "tool_calls" : "stop");
	r->usage = t->st.usage;
	r->items = o->anthropic
	               ? anth_stream_items(&t->st)
	               : resp_stream_items(&t->st, m->cfg->responses_store);
	r->attempts = o->tries;
	oai_log_noted(o, t->st.noted);
	try_free(t);
	free(o->body);
	o->body = NULL;
	llm_deliver(m, r);
}

static void oai_http_error(struct openai *o, struct openai_try *t,
                           struct http_xfer *x)
{
	const char *body = buf_str(&t->errbody);
	struct llm_http_fail f = {
	    .provider = o->m->provider,
	    .status = t->status,
	    .url = o->url,
	    .body = body,
	    .request_id =
	        http_header(x, o->anthropic ? "request-id" : "x-request-id"),
	    .key_env = o->key_env,
	    .key_set = o->key_set,
	    .model = o->m->model,
	};
	int retry =
	    llm_retry_should(t->status, body, http_header(x, "x-should-retry"));
	oai_failed(o, t, x, retry,
	           llm_context_exceeded(t->status, body)
	               ? LLM_ERR_CONTEXT
	               : llm_status_category(t->status),
	           llm_http_error_message(&f));
}

static void oai_done(struct http_xfer *x, int ok, const char *errmsg, void *arg)
{
	struct openai_try *t = arg;
	struct openai *o = t->o;

	t->xfer = NULL;
	o->t = NULL;
	if (!t->status)
		t->status = http_status(x);
	if (t->status == 0) {
		oai_failed(o, t, x, 1, LLM_ERR_SERVER,
		           xasprintf("%s: cannot reach %s: %s (is the server "
		                     "running? check --base-url)",
		                     o->m->provider, o->url,
		                     errmsg ? errmsg : "no answer"));
		return;
	}
	if (t->status < 200 || t->status > 299) {
		oai_http_error(o, t, x);
		return;
	}
	/* A connection lost after the finish reason lost nothing. */
	if (!ok && !t->st.error && t->st.finish_reason) {
		oai_succeeded(o, t);
		return;
	}
	if (ok && chat_stream_finish(&t->st) == 0) {
		oai_succeeded(o, t);
		return;
	}
	const char *why = t->st.error ? t->st.error : errmsg;
	int retry =
	    !t->st.error_final && llm_retry_should(0, t->st.error_body, NULL);
	oai_failed(o, t, x, retry,
	           t->st.error_context ? LLM_ERR_CONTEXT : LLM_ERR_STREAM,
	           xasprintf("%s: stream from %s failed: %s", o->m->provider,
	                     o->url, why ? why : "connection lost"));
}

/* Start one try of the turn in o->body. */
static int oai_begin(struct openai *o, char **err)
{
	struct openai_try *t = xcalloc(1, sizeof *t);
	const char *headers[] = {
	    "Content-Type: application/json", "Accept: text/event-stream",
	    o->auth, o->anthropic ? "anthropic-version: 2023-06-01" : NULL,
	    NULL};

	t->o = o;
	if (o->responses)
		resp_stream_init(&t->st, o->turn, oai_text, t);
	else if (o->anthropic)
		anth_stream_init(&t->st, o->turn, oai_text, t);
	else
		chat_stream_init(&t->st, o->turn, oai_text, t);
	buf_init(&t->errbody, LLM_MAX_ERROR_BODY);
	o->tries++;
	struct http_request req = {
	    .method = "POST",
	    .url = o->url,
	    .headers = headers,
	    .body = o->body,
	    .body_len = strlen(o->body),
	    .on_response = oai_response,
	    .on_data = oai_data,
	    .on_done = oai_done,
	    .arg = t,
	};
	t->xfer = http_start(o->m->http, &req, err);
	if (!t->xfer) {
		try_free(t);
		return -1;
	}
	o->t = t;
	return 0;
}

static void oai_retry_fire(void *arg)
{
	struct openai *o = arg;
	char *err = NULL;

	o->timer = 0;
	if (oai_begin(o, &err) < 0) {
		char *msg = xasprintf("%s: %s", o->m->provider, err);
		free(err);
		llm_deliver_error(o->m, LLM_ERR_SERVER, msg, o->tries);
	}
}

/* --- the request --- */

static cJSON *oai_tool_call(const cJSON *call)
{
	cJSON *tc = cJSON_CreateObject();
	cJSON *fn = cJSON_CreateObject();
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(call, "arguments");
	char *s;

	oai_add_id(tc, "id", json_str(call, "id", ""));
	cJSON_AddStringToObject(tc, "type", "function");
	cJSON_AddStringToObject(fn, "name", json_str(call, "name", ""));
	/* Arguments that did not parse (arguments_raw, kept in the record)
	 * are never sent back: the API refuses a request whose history
	 * holds them (400), so the call goes back as "{}" and its result
	 * says what was wrong. */
	if (cJSON_IsObject(args))
		s = json_print(args);
	else
		s = xstrdup("{}");
	cJSON_AddStringToObject(fn, "arguments", s);
	free(s);
	cJSON_AddItemToObject(tc, "function", fn);
	return tc;
}

static cJSON *oai_message(const cJSON *msg)
{
	const char *role = json_str(msg, "role", "user");
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
	cJSON *out = cJSON_CreateObject();

	cJSON_AddStringToObject(out, "role", role);
	if (strcmp(role, "tool") == 0) {
		oai_add_id(out, "tool_call_id",
		           json_str(msg, "tool_call_id", ""));
		cJSON_AddStringToObject(out, "content",
		                        json_str(msg, "content", ""));
		return out;
	}
	if (strcmp(role, "assistant") != 0) {
		cJSON_AddItemToObject(out, "content",
		                      content ? cJSON_Duplicate(content, 1)
		                              : cJSON_CreateString(""));
		return out;
	}
	const cJSON *calls =
	    cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
	int n = cJSON_GetArraySize(calls);
	const char *text = json_str(msg, "content", "");
	if (*text || n == 0)
		cJSON_AddStringToObject(out, "content", text);
	else
		cJSON_AddNullToObject(out, "content");
	if (n > 0) {
		cJSON *arr = cJSON_AddArrayToObject(out, "tool_calls");
		const cJSON *c;
		cJSON_ArrayForEach(c, calls)
		{
			cJSON_AddItemToArray(arr, oai_tool_call(c));
		}
	}
	return out;
}

static cJSON *oai_tools(const cJSON *tools)
{
	cJSON *arr = cJSON_CreateArray();
	const cJSON *t;

	cJSON_ArrayForEach(t, tools)
	{
		cJSON *w = cJSON_CreateObject();
		cJSON *fn = cJSON_CreateObject();
		const cJSON *params =
		    cJSON_GetObjectItemCaseSensitive(t, "parameters");
		cJSON_AddStringToObject(w, "type", "function");
		cJSON_AddStringToObject(fn, "name", json_str(t, "name", ""));
		cJSON_AddStringToObject(fn, "description",
		                        json_str(t, "description", ""));
		cJSON_AddItemToObject(fn, "parameters",
		                      params
		                          ? cJSON_Duplicate(params, 1)
		                          : cJSON_Parse("{\"type\":\"object\","
		                                        "\"properties\":{}}"));
		cJSON_AddItemToObject(w, "function", fn);
		cJSON_AddItemToArray(arr, w);
	}
	return arr;
}

/* OpenAI's reasoning models (o1, o3, o4-mini, gpt-5...) refuse
 * max_tokens, behind api.openai.com or a gateway in front of it. */
static int oai_reasoning_model(const char *model)
{
	const char *slash = strrchr(model, '/');
	if (slash)
		model = slash + 1; /* openai/o3 on a router */
	static const char *const families[] = {"o1", "o3", "o4", "gpt-5"};
	for (size_t i = 0; i < sizeof families / sizeof *families; i++) {
		size_t n = strlen(families[i]);
		if (!strncmp(model, families[i], n) &&
		    (model[n] == '\0' || model[n] == '-' || model[n] == '.'))
			return 1;
	}
	return 0;
}

/* The wire request (A.1). api.openai.com and OpenAI's reasoning models
 * get max_completion_tokens; compatible servers get max_tokens, the
 * only one many of them read (Ollama reads nothing else). */
static char *oai_body(struct openai *o, const struct llm_request *req)
{
	cJSON *b = cJSON_CreateObject();
	cJSON *msgs;
	const cJSON *msg;
	int max = req->max_output_tokens > 0 ? req->max_output_tokens
	                                     : o->m->cfg->max_output_tokens;

	cJSON_AddStringToObject(b, "model",
	                        req->model ? req->model : o->m->model);
	msgs = cJSON_AddArrayToObject(b, "messages");
	if (req->system && *req->system) {
		cJSON *sys = cJSON_CreateObject();
		cJSON_AddStringToObject(sys, "role", "system");
		cJSON_AddStringToObject(sys, "content", req->system);
		cJSON_AddItemToArray(msgs, sys);
	}
	cJSON_ArrayForEach(msg, req->messages)
	{
		cJSON_AddItemToArray(msgs, oai_message(msg));
	}
	if (cJSON_GetArraySize(req->tools) > 0) {
		cJSON_AddItemToObject(b, "tools", oai_tools(req->tools));
		cJSON_AddStringToObject(b, "tool_choice", "auto");
	}
	const char *model = req->model ? req->model : o->m->model;
	int completion =
	    o->official || (!o->ollama && oai_reasoning_model(model));
	if (max > 0)
		cJSON_AddNumberToObject(
		    b, completion ? "max_completion_tokens" : "max_tokens",
		    max);
	cJSON_AddTrueToObject(b, "stream");
	cJSON *so = cJSON_AddObjectToObject(b, "stream_options");
	cJSON_AddTrueToObject(so, "include_usage");
	char *s = json_print(b);
	cJSON_Delete(b);
	return s;
}

/* --- configuration --- */

/* OLLAMA_HOST is "host", "host:port" or a URL without the /v1. */
static char *ollama_base(const char *host)
{
	const char *scheme = strstr(host, "://") ? "" : "http://";
	const char *h = strncmp(host, "0.0.0.0", 7) == 0 ? "127.0.0.1" : "";
	const char *rest = *h ? host + 7 : host;
	const char *colon = strrchr(host, ':');
	int has_port = colon && colon[1] >= '0' && colon[1] <= '9';

	/* "host:port/" must not become "host:port//v1" */
	size_t n = strlen(rest);
	while (n > 0 && rest[n - 1] == '/')
		n--;
	return xasprintf("%s%s%.*s%s/v1", scheme, h, (int)n, rest,
	                 has_port ? "" : ":11434");
}

/* The providers this transport serves: their wire format, where they
 * are by default, the variables of their URL and key, and their model
 * when none is given (NULL: it must be). The presets (gemini,
 * openrouter, vllm, llamacpp) are names for Chat Completions servers. */
enum oai_wire { WIRE_CHAT, WIRE_RESPONSES, WIRE_ANTHROPIC };
static const struct oai_kind {
	const char *name;
	enum oai_wire wire;
	const char *base, *base_env, *key_env;
	int key_needed; /* at the default base, no key is an error */
	const char *model;
} oai_kinds[] = {
    {"openai", WIRE_CHAT, OPENAI_DEFAULT_BASE, "OPENAI_BASE_URL",
     "OPENAI_API_KEY", 1, LLM_OPENAI_DEFAULT_MODEL},
    {"openai-responses", WIRE_RESPONSES, OPENAI_DEFAULT_BASE, "OPENAI_BASE_URL",
     "OPENAI_API_KEY", 1, LLM_OPENAI_DEFAULT_MODEL},
    {"anthropic", WIRE_ANTHROPIC, ANTHROPIC_DEFAULT_BASE, "ANTHROPIC_BASE_URL",
     "ANTHROPIC_API_KEY", 1, LLM_ANTHROPIC_DEFAULT_MODEL},
    {"ollama", WIRE_CHAT, OLLAMA_DEFAULT_BASE, "OLLAMA_HOST", NULL, 0, NULL},
    {"gemini", WIRE_CHAT,
     "https://generativelanguage.googleapis.com/v1beta/openai", NULL,
     "GEMINI_API_KEY", 1, "gemini-2.5-flash"},
    {"openrouter", WIRE_CHAT, "https://openrouter.ai/api/v1", NULL,
     "OPENROUTER_API_KEY", 1, NULL},
    {"vllm", WIRE_CHAT, "http://127.0.0.1:8000/v1", NULL, "VLLM_API_KEY", 0,
     NULL},
    {"llamacpp", WIRE_CHAT, "http://127.0.0.1:8080/v1", NULL, NULL, 0,
     "default"},
};

static const struct oai_kind *oai_kind(const char *provider)
{
	for (size_t i = 0; i < sizeof oai_kinds / sizeof *oai_kinds; i++)
		if (!strcmp(oai_kinds[i].name, provider))
			return &oai_kinds[i];
	return NULL;
}

int llm_transport_provider(const char *provider, const char **model)
{
	const struct oai_kind *k = oai_kind(provider);
	if (model)
		*model = k ? k->model : NULL;
	return k != NULL;
}

static char *oai_base_url(const struct config *cfg, const struct oai_kind *k)
{
	int ollama = !strcmp(k->name, "ollama");
	const char *env = k->base_env ? getenv(k->base_env) : NULL;
	char *base;

	if (cfg->base_url && *cfg->base_url)
		base = xstrdup(cfg->base_url);
	else if (env && *env)
		base = ollama ? ollama_base(env) : xstrdup(env);
	else
		base = xstrdup(k->base);
	size_t n = strlen(base);
	while (n > 0 && base[n - 1] == '/')
		base[--n] = '\0';
	/* Tolerate a full endpoint given as the base. */
	const char *suffix = "/chat/completions";
	size_t sl = strlen(suffix);
	if (n > sl && strcmp(base + n - sl, suffix) == 0)
		base[n - sl] = '\0';
	return base;
}

/* The key from its variable; trailing blanks dropped. NULL if unset or
 * unusable in a header. */
static char *oai_key(const char *env)
{
	const char *v = env ? getenv(env) : NULL;

	if (!v)
		return NULL;
	char *k = xstrdup(v);
	size_t n = strlen(k);
	while (n > 0 && strchr(" \t\r\n", k[n - 1]))
		k[--n] = '\0';
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)k[i] < 0x20 || k[i] == 0x7f)
			n = 0;
	if (n == 0) {
		free(k);
		return NULL;
	}
	return k;
}

static int oai_init(struct llm *m, char **err)
{
	const struct config *cfg = m->cfg;
	const struct oai_kind *k = oai_kind(m->provider);
	struct openai *o = xcalloc(1, sizeof *o);

	m->priv = o;
	o->m = m;
	if (!k)
		return set_err(err, "%s: not a provider of this transport",
		               m->provider);
	o->anthropic = k->wire == WIRE_ANTHROPIC;
	o->responses = k->wire == WIRE_RESPONSES;
	o->ollama = !strcmp(k->name, "ollama");
	m->base_url = oai_base_url(cfg, k);
	o->official = strncmp(m->base_url, "https://api.openai.com", 22) == 0 &&
	              (m->base_url[22] == '\0' || m->base_url[22] == '/');
	o->url = xasprintf("%s/%s", m->base_url,
	                   o->anthropic   ? "v1/messages"
	                   : o->responses ? "responses"
	                                  : "chat/completions");
	const char *key_env = cfg->api_key_env ? cfg->api_key_env : k->key_env;
	o->key_env = xstrdup(key_env ? key_env : "OPENAI_API_KEY");
	/* Ollama and llama.cpp need no key unless one is named. */
	char *key = key_env ? oai_key(key_env) : NULL;
	o->key_set = key != NULL;
	if (!key && k->key_needed && !strcmp(m->base_url, k->base)) {
		char *why = xasprintf("%s: no API key for %s: set %s (or use "
		                      "--base-url for a compatible server)",
		                      m->provider, m->base_url, o->key_env);
		if (!cfg->key_later) {
			*err = why;
			return -1;
		}
		m->no_key = why; /* each request fails with it (llm.c) */
	}
	/* Compatible servers mostly ignore the key; some proxies want the
	 * header present, so send a placeholder rather than none. */
	o->auth = o->anthropic ? xasprintf("x-api-key: %s", key ? key : "none")
	                       : xasprintf("Authorization: Bearer %s",
	                                   key ? key : "none");
	free(key);

	if (cfg->model && *cfg->model)
		m->model = xstrdup(cfg->model);
	else if (k->model)
		m->model = xstrdup(k->model);
	else
		return set_err(err, "%s: no model: pass --model NAME (%s)",
		               m->provider,
		               o->ollama ? "one that 'ollama list' shows"
		                         : "the one the server serves");
	return 0;
}

static int oai_start(struct llm *m, const struct llm_request *req, char **err)
{
	struct openai *o = m->priv;

	if (o->t || o->timer)
		return set_err(err, "%s: a turn is already in flight",
		               m->provider);
	free(o->body);
	int max = req->max_output_tokens > 0 ? req->max_output_tokens
	                                     : m->cfg->max_output_tokens;
	const char *model = req->model ? req->model : m->model;
	if (o->responses)
		o->body = resp_body(model, req, max, m->cfg->responses_store);
	else if (o->anthropic)
		o->body = anth_body(model, req, max);
	else
		o->body = oai_body(o, req);
	o->turn = llm_turn_index(req->messages);
	o->tries = 0;
	log_info("%s: POST %s (turn %d, %zu bytes)", m->provider, o->url,
	         o->turn, strlen(o->body));
	if (oai_begin(o, err) < 0) {
		free(o->body);
		o->body = NULL;
		return -1;
	}
	return 0;
}

static void oai_cancel(struct llm *m)
{
	struct openai *o = m->priv;

	if (!o)
		return;
	if (o->timer)
		loop_timer_cancel(m->loop, o->timer);
	o->timer = 0;
	oai_drop_try(o);
	free(o->body);
	o->body = NULL;
}

static void oai_destroy(struct llm *m)
{
	struct openai *o = m->priv;

	if (!o)
		return;
	oai_cancel(m);
	free(o->url);
	if (o->auth)
		memset(o->auth, 0, strlen(o->auth));
	free(o->auth);
	free(o->key_env);
	cJSON_Delete(o->noted);
	free(o);
	m->priv = NULL;
}

const struct llm_ops llm_openai_ops = {
    .name = "openai",
    .init = oai_init,
    .start = oai_start,
    .cancel = oai_cancel,
    .destroy = oai_destroy,
};
