/* llm.c: the provider interface: picking a provider by name, starting
 * and cancelling turns, results, and the canonical request that names
 * a turn in the cache (request_hash). */
#include "llm/llm_internal.h"
#include "assay/config.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

/* The providers that are not the transport's (transport.c lists its
 * own, one row each). */
static const struct {
	const char *name;
	const struct llm_ops *ops;
} providers[] = {
    {"script", &llm_script_ops},
};

int llm_provider_info(const char *provider, const char **model)
{
	if (provider && !strcmp(provider, "script")) {
		if (model)
			*model = NULL;
		return 1;
	}
	return provider && transport_provider(provider, model);
}

int llm_provider_free(const char *provider)
{
	for (size_t i = 0; provider && i < sizeof providers / sizeof *providers;
	     i++)
		if (!strcmp(providers[i].name, provider))
			return providers[i].ops->free_of_charge;
	return 0;
}

static const struct llm_ops *llm_find(const char *name, char **err)
{
	for (size_t i = 0; i < sizeof providers / sizeof providers[0]; i++)
		if (strcmp(providers[i].name, name) == 0)
			return providers[i].ops;
	if (transport_provider(name, NULL))
		return &transport_ops;
	char *names = transport_names();
	set_err(err, "unknown provider '%s': choose %s or script", name, names);
	free(names);
	return NULL;
}

struct llm *llm_new(const struct config *cfg, struct loop *l, struct http *h,
                    const struct llm_observer *obs, char **err)
{
	const char *name = cfg->provider ? cfg->provider : "openai";
	const struct llm_ops *ops = llm_find(name, err);

	if (!ops)
		return NULL;
	struct llm *m = xcalloc(1, sizeof *m);
	m->ops = ops;
	m->loop = l;
	m->http = h;
	m->cfg = cfg;
	m->obs = *obs;
	m->provider = xstrdup(name);
	if (ops->init(m, err) < 0) {
		llm_free(m);
		return NULL;
	}
	return m;
}

const char *llm_provider(const struct llm *m)
{
	return m->provider;
}

const char *llm_model(const struct llm *m)
{
	return m->model;
}

const char *llm_base_url(const struct llm *m)
{
	return m->base_url ? m->base_url : "";
}

const char *llm_no_key(const struct llm *m)
{
	return m ? m->no_key : NULL;
}

/* A request without the key it needs fails as a refused one would,
 * from the loop (the observer is never called inside llm_start). */
static void llm_no_key_fire(void *arg)
{
	struct llm *m = arg;
	m->no_key_timer = 0;
	llm_deliver_error(m, LLM_ERR_AUTH, xstrdup(m->no_key), 0);
}

int llm_start(struct llm *m, const struct llm_request *req, char **err)
{
	if (m->no_key) {
		if (m->no_key_timer)
			return set_err(err, "%s: a turn is already in flight",
			               m->provider);
		m->no_key_timer =
		    loop_timer_add(m->loop, 0, llm_no_key_fire, m);
		return 0;
	}
	return m->ops->start(m, req, err);
}

void llm_cancel(struct llm *m)
{
	if (m && m->no_key_timer) {
		loop_timer_cancel(m->loop, m->no_key_timer);
		m->no_key_timer = 0;
	}
	if (m && m->ops->cancel)
		m->ops->cancel(m);
}

void llm_free(struct llm *m)
{
	if (!m)
		return;
	llm_cancel(m);
	if (m->ops->destroy)
		m->ops->destroy(m);
	free(m->provider);
	free(m->model);
	free(m->base_url);
	free(m->no_key);
	free(m);
}

struct llm_result *llm_result_new(void)
{
	struct llm_result *r = xcalloc(1, sizeof *r);

	r->text = xstrdup("");
	r->tool_calls = cJSON_CreateArray();
	return r;
}

void llm_result_free(struct llm_result *r)
{
	if (!r)
		return;
	free(r->text);
	cJSON_Delete(r->tool_calls);
	cJSON_Delete(r->items);
	free(r->finish_reason);
	free(r->error_message);
	free(r);
}

void llm_deliver(struct llm *m, struct llm_result *res)
{
	if (m->obs.on_done)
		m->obs.on_done(m->obs.arg, res);
	else
		llm_result_free(res);
}

void llm_deliver_error(struct llm *m, const char *category, char *message,
                       int attempts)
{
	struct llm_result *r = llm_result_new();

	r->ok = 0;
	r->error_category = category;
	r->error_message = message;
	r->attempts = attempts;
	llm_deliver(m, r);
}

int llm_turn_index(const cJSON *messages)
{
	const cJSON *msg;
	int n = 0;

	cJSON_ArrayForEach(msg, messages)
	{
		const cJSON *role =
		    cJSON_GetObjectItemCaseSensitive(msg, "role");
		if (cJSON_IsString(role) &&
		    strcmp(role->valuestring, "assistant") == 0)
			n++;
	}
	return n;
}

static int key_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a;
	const cJSON *y = *(const cJSON *const *)b;
	return strcmp(x->string, y->string);
}

/* Sort object keys at every depth so equal requests print equal. */
static void json_sort_keys(cJSON *j)
{
	size_t n = 0;
	cJSON *c;

	cJSON_ArrayForEach(c, j)
	{
		json_sort_keys(c);
		n++;
	}
	if (!cJSON_IsObject(j) || n < 2)
		return;
	cJSON **v = xmalloc(n * sizeof *v);
	n = 0;
	for (c = j->child; c; c = c->next)
		v[n++] = c;
	qsort(v, n, sizeof *v, key_cmp);
	for (size_t i = 0; i < n; i++) {
		v[i]->prev = i ? v[i - 1] : v[n - 1];
		v[i]->next = i + 1 < n ? v[i + 1] : NULL;
	}
	j->child = v[0];
	free(v);
}

static cJSON *dup_or(const cJSON *j, cJSON *def)
{
	if (!j)
		return def;
	cJSON_Delete(def);
	return cJSON_Duplicate(j, 1);
}

char *llm_canonical_request(const struct llm *m, const struct llm_request *r)
{
	return llm_canonical_request_for(m->provider, m->model, r);
}

char *llm_canonical_request_for(const char *provider, const char *model,
                                const struct llm_request *r)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "provider", provider ? provider : "");
	cJSON_AddStringToObject(o, "model",
	                        r->model ? r->model
	                        : model  ? model
	                                 : "");
	cJSON_AddNumberToObject(o, "max_output_tokens", r->max_output_tokens);
	if (r->system)
		cJSON_AddStringToObject(o, "system", r->system);
	else
		cJSON_AddNullToObject(o, "system");
	cJSON *msgs = dup_or(r->messages, cJSON_CreateArray()), *m;
	/* an image counts by its sha256, not its bytes (which are in
	 * the run dir, not the record) */
	cJSON_ArrayForEach(m, msgs)
	{
		cJSON *img;
		cJSON_ArrayForEach(img, cJSON_GetObjectItem(m, "images"))
		{
			cJSON_DeleteItemFromObjectCaseSensitive(img, "data");
		}
	}
	cJSON_AddItemToObject(o, "messages", msgs);
	cJSON_AddItemToObject(o, "tools",
	                      dup_or(r->tools, cJSON_CreateArray()));
	json_sort_keys(o);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s ? s : xstrdup("{}");
}
