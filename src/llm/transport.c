/* transport.c: the one transport every streaming provider shares:
 * the providers it serves (their dialect, default URL, key variable
 * and model), the HTTP request, tries and retries (retry.c), reading
 * the answer's SSE stream, and the errors the user is shown. What
 * differs between the wire formats comes from the provider's dialect
 * table (struct llm_wire: chat.c, responses.c, anthropic.c): the
 * endpoint, the headers, the request body and the stream reader.
 * One turn is a sequence of tries; each try is one HTTP stream fed to
 * the dialect's chat_stream reader, and failures go through retry.c. */
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

struct transport;

/* One HTTP attempt. Outlives a cancel while its on_data is running. */
struct transport_try {
	struct transport *o;
	struct http_xfer *xfer;
	struct chat_stream st;
	struct buf errbody; /* a non-2xx answer's body */
	long status;
	int in_data; /* inside the stream parser: do not free */
	int dead;    /* cancelled while in_data */
};

struct transport {
	struct llm *m;
	const struct llm_wire *wire; /* the provider's dialect */
	struct llm_wire_args server; /* official, max_tokens_only */
	char *url;                   /* {base}/{wire->path} */
	char *auth;                  /* the key's header: never logged */
	char *key_env;               /* variable named in messages */
	int key_set;
	char *body; /* request of the turn in flight */
	int turn;
	int tries;
	uint64_t timer; /* retry backoff */
	struct transport_try *t;
	cJSON *noted; /* what the streams held and this build does not read,
	                 logged once each */
};

static void transport_retry_fire(void *arg);

static void transport_try_free(struct transport_try *t)
{
	chat_stream_free(&t->st);
	buf_free(&t->errbody);
	free(t);
}

/* Abandon the try in flight without callbacks. */
static void transport_drop_try(struct transport *o)
{
	struct transport_try *t = o->t;

	if (!t)
		return;
	o->t = NULL;
	http_cancel(t->xfer);
	t->xfer = NULL;
	if (t->in_data)
		t->dead = 1;
	else
		transport_try_free(t);
}

static void transport_text(void *arg, const char *text, size_t n)
{
	struct transport_try *t = arg;

	if (t->dead)
		return;
	struct llm *m = t->o->m;
	if (m->obs.on_text)
		m->obs.on_text(m->obs.arg, text, n);
}

static void transport_response(struct http_xfer *x, long status, void *arg)
{
	struct transport_try *t = arg;

	t->status = status;
}

static int transport_data(struct http_xfer *x, const char *data, size_t n,
                          void *arg)
{
	struct transport_try *t = arg;

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
		transport_try_free(t);
		return -1;
	}
	return rc;
}

/* The try failed: wait and try again, or end the turn with an error.
 * Takes ownership of message. */
static void transport_failed(struct transport *o, struct transport_try *t,
                             struct http_xfer *x, int retry,
                             const char *category, char *message)
{
	struct llm *m = o->m;
	size_t discarded = t->st.text.len;
	int attempt = o->tries;

	transport_try_free(t);
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
	o->timer = loop_timer_add(m->loop, delay, transport_retry_fire, o);
	/* Last: the observer may cancel or free us. */
	if (m->obs.on_retry)
		m->obs.on_retry(m->obs.arg, attempt, delay, category, message,
		                discarded);
	free(message);
}

/* Log, once per provider, each kind of thing a stream held that this
 * build does not read (a new block or item type, an event, a delta). */
static void transport_log_noted(struct transport *o, const cJSON *noted)
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

static void transport_succeeded(struct transport *o, struct transport_try *t)
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
	struct llm_wire_args a = o->server;
	a.store = m->cfg->responses_store;
	r->items = o->wire->items ? o->wire->items(&t->st, &a) : NULL;
	r->attempts = o->tries;
	transport_log_noted(o, t->st.noted);
	transport_try_free(t);
	free(o->body);
	o->body = NULL;
	llm_deliver(m, r);
}

static void transport_http_error(struct transport *o, struct transport_try *t,
                                 struct http_xfer *x)
{
	const char *body = buf_str(&t->errbody);
	struct llm_http_fail f = {
	    .provider = o->m->provider,
	    .status = t->status,
	    .url = o->url,
	    .body = body,
	    .request_id = http_header(x, o->wire->request_id_header),
	    .key_env = o->key_env,
	    .key_set = o->key_set,
	    .model = o->m->model,
	};
	int retry =
	    llm_retry_should(t->status, body, http_header(x, "x-should-retry"));
	transport_failed(o, t, x, retry,
	                 llm_context_exceeded(t->status, body)
	                     ? LLM_ERR_CONTEXT
	                     : llm_status_category(t->status),
	                 llm_http_error_message(&f));
}

static void transport_done(struct http_xfer *x, int ok, const char *errmsg,
                           void *arg)
{
	struct transport_try *t = arg;
	struct transport *o = t->o;

	t->xfer = NULL;
	o->t = NULL;
	if (!t->status)
		t->status = http_status(x);
	if (t->status == 0) {
		transport_failed(
		    o, t, x, 1, LLM_ERR_SERVER,
		    xasprintf("%s: cannot reach %s: %s (is the server "
		              "running? check --base-url)",
		              o->m->provider, o->url,
		              errmsg ? errmsg : "no answer"));
		return;
	}
	if (t->status < 200 || t->status > 299) {
		transport_http_error(o, t, x);
		return;
	}
	/* A connection lost after the finish reason lost nothing. */
	if (!ok && !t->st.error && t->st.finish_reason) {
		transport_succeeded(o, t);
		return;
	}
	if (ok && chat_stream_finish(&t->st) == 0) {
		transport_succeeded(o, t);
		return;
	}
	const char *why = t->st.error ? t->st.error : errmsg;
	int retry =
	    !t->st.error_final && llm_retry_should(0, t->st.error_body, NULL);
	transport_failed(o, t, x, retry,
	                 t->st.error_context ? LLM_ERR_CONTEXT : LLM_ERR_STREAM,
	                 xasprintf("%s: stream from %s failed: %s",
	                           o->m->provider, o->url,
	                           why ? why : "connection lost"));
}

/* Start one try of the turn in o->body. */
static int transport_begin(struct transport *o, char **err)
{
	struct transport_try *t = xcalloc(1, sizeof *t);
	const char *headers[] = {"Content-Type: application/json",
	                         "Accept: text/event-stream", o->auth,
	                         o->wire->version_header, NULL};

	t->o = o;
	o->wire->stream_init(&t->st, o->turn, transport_text, t);
	buf_init(&t->errbody, LLM_MAX_ERROR_BODY);
	o->tries++;
	struct http_request req = {
	    .method = "POST",
	    .url = o->url,
	    .headers = headers,
	    .body = o->body,
	    .body_len = strlen(o->body),
	    .on_response = transport_response,
	    .on_data = transport_data,
	    .on_done = transport_done,
	    .arg = t,
	};
	t->xfer = http_start(o->m->http, &req, err);
	if (!t->xfer) {
		transport_try_free(t);
		return -1;
	}
	o->t = t;
	return 0;
}

static void transport_retry_fire(void *arg)
{
	struct transport *o = arg;
	char *err = NULL;

	o->timer = 0;
	if (transport_begin(o, &err) < 0) {
		char *msg = xasprintf("%s: %s", o->m->provider, err);
		free(err);
		llm_deliver_error(o->m, LLM_ERR_SERVER, msg, o->tries);
	}
}

/* --- configuration --- */

/* OLLAMA_HOST is "host", "host:port" or a URL without the /v1. */
static char *transport_ollama_base(const char *host)
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

/* The providers this transport serves: their dialect, where they are
 * by default, the variables of their URL and key, and their model when
 * none is given (NULL: it must be, and hint says which). The presets
 * (gemini, openrouter, vllm, llamacpp) are names for Chat Completions
 * servers. */
#define TRANSPORT_SERVED "the one the server serves"
static const struct transport_kind {
	const char *name;
	const struct llm_wire *wire;
	const char *base, *base_env, *key_env;
	/* the base URL from base_env's value (NULL: the value as it is) */
	char *(*env_base)(const char *value);
	int key_needed;      /* at the default base, no key is an error */
	int max_tokens_only; /* the server reads no other limit */
	const char *model, *hint;
} transport_kinds[] = {
    {"openai", &chat_wire, OPENAI_DEFAULT_BASE, "OPENAI_BASE_URL",
     "OPENAI_API_KEY", NULL, 1, 0, LLM_OPENAI_DEFAULT_MODEL, NULL},
    {"openai-responses", &resp_wire, OPENAI_DEFAULT_BASE, "OPENAI_BASE_URL",
     "OPENAI_API_KEY", NULL, 1, 0, LLM_OPENAI_DEFAULT_MODEL, NULL},
    {"anthropic", &anth_wire, ANTHROPIC_DEFAULT_BASE, "ANTHROPIC_BASE_URL",
     "ANTHROPIC_API_KEY", NULL, 1, 0, LLM_ANTHROPIC_DEFAULT_MODEL, NULL},
    {"ollama", &chat_wire, OLLAMA_DEFAULT_BASE, "OLLAMA_HOST", NULL,
     transport_ollama_base, 0, 1, NULL, "one that 'ollama list' shows"},
    {"gemini", &chat_wire,
     "https://generativelanguage.googleapis.com/v1beta/openai", NULL,
     "GEMINI_API_KEY", NULL, 1, 0, "gemini-2.5-flash", NULL},
    {"openrouter", &chat_wire, "https://openrouter.ai/api/v1", NULL,
     "OPENROUTER_API_KEY", NULL, 1, 0, NULL, TRANSPORT_SERVED},
    {"vllm", &chat_wire, "http://127.0.0.1:8000/v1", NULL, "VLLM_API_KEY", NULL,
     0, 0, NULL, TRANSPORT_SERVED},
    {"llamacpp", &chat_wire, "http://127.0.0.1:8080/v1", NULL, NULL, NULL, 0, 0,
     "default", NULL},
};

static const struct transport_kind *transport_kind(const char *provider)
{
	for (size_t i = 0; i < sizeof transport_kinds / sizeof *transport_kinds;
	     i++)
		if (!strcmp(transport_kinds[i].name, provider))
			return &transport_kinds[i];
	return NULL;
}

int transport_provider(const char *provider, const char **model)
{
	const struct transport_kind *k = transport_kind(provider);
	if (model)
		*model = k ? k->model : NULL;
	return k != NULL;
}

char *transport_names(void)
{
	struct buf b;

	buf_init(&b, 0);
	for (size_t i = 0; i < sizeof transport_kinds / sizeof *transport_kinds;
	     i++)
		buf_printf(&b, "%s%s", i ? ", " : "", transport_kinds[i].name);
	return buf_detach(&b);
}

static char *transport_base_url(const struct config *cfg,
                                const struct transport_kind *k)
{
	const char *env = k->base_env ? getenv(k->base_env) : NULL;
	char *base;

	if (cfg->base_url && *cfg->base_url)
		base = xstrdup(cfg->base_url);
	else if (env && *env)
		base = k->env_base ? k->env_base(env) : xstrdup(env);
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
static char *transport_key(const char *env)
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

static int transport_init(struct llm *m, char **err)
{
	const struct config *cfg = m->cfg;
	const struct transport_kind *k = transport_kind(m->provider);
	struct transport *o = xcalloc(1, sizeof *o);

	m->priv = o;
	o->m = m;
	if (!k)
		return set_err(err, "%s: not a provider of this transport",
		               m->provider);
	o->wire = k->wire;
	o->server.max_tokens_only = k->max_tokens_only;
	m->base_url = transport_base_url(cfg, k);
	o->server.official =
	    strncmp(m->base_url, "https://api.openai.com", 22) == 0 &&
	    (m->base_url[22] == '\0' || m->base_url[22] == '/');
	o->url = xasprintf("%s/%s", m->base_url, o->wire->path);
	const char *key_env = cfg->api_key_env ? cfg->api_key_env : k->key_env;
	o->key_env = xstrdup(key_env ? key_env : "OPENAI_API_KEY");
	/* Ollama and llama.cpp need no key unless one is named. */
	char *key = key_env ? transport_key(key_env) : NULL;
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
	o->auth = xasprintf("%s%s", o->wire->auth_prefix, key ? key : "none");
	free(key);

	if (cfg->model && *cfg->model)
		m->model = xstrdup(cfg->model);
	else if (k->model)
		m->model = xstrdup(k->model);
	else
		return set_err(err, "%s: no model: pass --model NAME (%s)",
		               m->provider, k->hint);
	return 0;
}

static int transport_start(struct llm *m, const struct llm_request *req,
                           char **err)
{
	struct transport *o = m->priv;

	if (o->t || o->timer)
		return set_err(err, "%s: a turn is already in flight",
		               m->provider);
	free(o->body);
	struct llm_wire_args a = o->server;
	a.model = req->model ? req->model : m->model;
	a.max_output_tokens = req->max_output_tokens > 0
	                          ? req->max_output_tokens
	                          : m->cfg->max_output_tokens;
	a.store = m->cfg->responses_store;
	o->body = o->wire->body(&a, req);
	o->turn = llm_turn_index(req->messages);
	o->tries = 0;
	log_info("%s: POST %s (turn %d, %zu bytes)", m->provider, o->url,
	         o->turn, strlen(o->body));
	if (transport_begin(o, err) < 0) {
		free(o->body);
		o->body = NULL;
		return -1;
	}
	return 0;
}

static void transport_cancel(struct llm *m)
{
	struct transport *o = m->priv;

	if (!o)
		return;
	if (o->timer)
		loop_timer_cancel(m->loop, o->timer);
	o->timer = 0;
	transport_drop_try(o);
	free(o->body);
	o->body = NULL;
}

static void transport_destroy(struct llm *m)
{
	struct transport *o = m->priv;

	if (!o)
		return;
	transport_cancel(m);
	free(o->url);
	if (o->auth)
		memset(o->auth, 0, strlen(o->auth));
	free(o->auth);
	free(o->key_env);
	cJSON_Delete(o->noted);
	free(o);
	m->priv = NULL;
}

const struct llm_ops transport_ops = {
    .name = "openai",
    .init = transport_init,
    .start = transport_start,
    .cancel = transport_cancel,
    .destroy = transport_destroy,
};
