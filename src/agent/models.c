/* models.c: the model table (assay/models.h): share/models.json as
 * carried in the binary (or $ASSAY_DATA_DIR/share/models.json), the
 * configuration's "models" over it, lookups by name and dated
 * version, and the cost of a turn. The JSON it reads (the model table)
 * is not an event. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/json.h"
#include "assay/llm.h"
#include "assay/models.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

struct model_table {
	struct model_info *m;
	size_t n;
	char *date;
};

extern const char embed_models_json[];

/* A price or size field: v when it is a number >= 0, else def. */
static double field(const cJSON *e, const char *key, double def)
{
	const cJSON *v = cJSON_GetObjectItem(e, key);
	return cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble : def;
}

/* The entry of name, made when missing. */
static struct model_info *entry(struct model_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->m[i].name, name))
			return &t->m[i];
	t->m = xrealloc(t->m, (t->n + 1) * sizeof *t->m);
	struct model_info *m = &t->m[t->n++];
	*m = (struct model_info){.name = xstrdup(name),
	                         .provider = xstrdup(""),
	                         .input = -1,
	                         .cached_input = -1,
	                         .cache_write = -1,
	                         .output = -1};
	return m;
}

static const char *const known_fields[] = {
    "provider",     "context",     "max_output", "input",
    "cached_input", "cache_write", "output",     NULL};

/* Merge the fields of e (an object) into the entry of its name. */
static int merge(struct model_table *t, const cJSON *e, const char *origin,
                 char **err)
{
	if (!cJSON_IsObject(e))
		return set_err(err,
		               "%s: models.\"%s\" must be an object like "
		               "{\"input\": 2.0, \"output\": 8.0} (USD per "
		               "million tokens)",
		               origin, e->string);
	const cJSON *f;
	cJSON_ArrayForEach(f, e)
	{
		int known = 0;
		for (int i = 0; known_fields[i]; i++)
			known |= !strcmp(f->string, known_fields[i]);
		if (!known)
			return set_err(
			    err,
			    "%s: models.\"%s\": unknown field \"%s\" "
			    "(known: provider, context, max_output, "
			    "input, cached_input, cache_write, output)",
			    origin, e->string, f->string);
		if (strcmp(f->string, "provider") &&
		    (!cJSON_IsNumber(f) || f->valuedouble < 0))
			return set_err(err,
			               "%s: models.\"%s\".%s must be a number "
			               ">= 0",
			               origin, e->string, f->string);
	}
	struct model_info *m = entry(t, e->string);
	const char *prov = json_str(e, "provider", NULL);
	if (prov)
		config_set(&m->provider, prov);
	m->context = (long)field(e, "context", (double)m->context);
	m->max_output = (long)field(e, "max_output", (double)m->max_output);
	m->input = field(e, "input", m->input);
	m->cached_input = field(e, "cached_input", m->cached_input);
	m->cache_write = field(e, "cache_write", m->cache_write);
	m->output = field(e, "output", m->output);
	m->priced = m->input >= 0 && m->output >= 0;
	return 0;
}

static int merge_all(struct model_table *t, const cJSON *models,
                     const char *origin, char **err)
{
	if (!models)
		return 0;
	if (!cJSON_IsObject(models))
		return set_err(err,
		               "%s: \"models\" must be an object of "
		               "model names",
		               origin);
	const cJSON *e;
	cJSON_ArrayForEach(e, models)
	{
		if (merge(t, e, origin, err) < 0)
			return -1;
	}
	return 0;
}

struct model_table *models_load(const struct config *cfg, char **err)
{
	struct model_table *t = xcalloc(1, sizeof *t);
	char *text = agent_data_file("models.json", embed_models_json);
	cJSON *d = json_parse_relaxed(text, "share/models.json", err);
	free(text);
	int rc = d ? merge_all(t, cJSON_GetObjectItem(d, "models"),
	                       "share/models.json", err)
	           : -1;
	t->date = xstrdup(json_str(d, "prices_date", "unknown"));
	cJSON_Delete(d);
	if (rc == 0 && cfg)
		rc = merge_all(t, cfg->models, "configuration", err);
	if (rc < 0) {
		models_free(t);
		return NULL;
	}
	return t;
}

void models_free(struct model_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->m[i].name);
		free(t->m[i].provider);
	}
	free(t->m);
	free(t->date);
	free(t);
}

/* An entry of exactly this name (a user's "vendor/model" override). */
static const struct model_info *models_find_exact(const struct model_table *t,
                                                  const char *model)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (!strcmp(t->m[i].name, model))
			return &t->m[i];
	return NULL;
}

const struct model_info *models_find(const struct model_table *t,
                                     const char *model)
{
	const struct model_info *best = NULL;
	size_t best_len = 0;
	/* a router's "vendor/model" is the vendor's model */
	const char *slash = model ? strrchr(model, '/') : NULL;
	if (slash && !models_find_exact(t, model))
		model = slash + 1;
	for (size_t i = 0; t && model && i < t->n; i++) {
		size_t n = strlen(t->m[i].name);
		if (strncmp(model, t->m[i].name, n) ||
		    (model[n] != '\0' && model[n] != '-'))
			continue;
		if (n > best_len) {
			best = &t->m[i];
			best_len = n;
		}
	}
	return best;
}

size_t models_count(const struct model_table *t)
{
	return t ? t->n : 0;
}

const struct model_info *models_at(const struct model_table *t, size_t i)
{
	return t && i < t->n ? &t->m[i] : NULL;
}

const char *models_prices_date(const struct model_table *t)
{
	return t ? t->date : "unknown";
}

double models_cost(const struct model_info *m, const struct model_tokens *k)
{
	if (!m || !m->priced)
		return -1;
	double cached = m->cached_input >= 0 ? m->cached_input : m->input;
	double write = m->cache_write >= 0 ? m->cache_write : m->input;
	long plain = k->input - k->cached - k->cache_write;
	if (plain < 0)
		plain = 0;
	return ((double)plain * m->input + (double)k->cached * cached +
	        (double)k->cache_write * write +
	        (double)k->output * m->output) /
	       1e6;
}

int models_provider_known(const char *provider)
{
	return llm_provider_info(provider, NULL);
}

const char *models_run_model(const struct config *cfg)
{
	if (cfg->model && *cfg->model)
		return cfg->model;
	const char *model = NULL;
	llm_provider_info(cfg->provider, &model);
	return model;
}

int models_check_cost_budget(const struct config *cfg, char **err)
{
	if (cfg->max_cost <= 0)
		return 0;
	const char *model = models_run_model(cfg);
	struct model_table *t = models_load(cfg, err);
	if (!t)
		return -1;
	const struct model_info *m = models_find(t, model);
	int ok = m && m->priced;
	models_free(t);
	if (ok)
		return 0;
	return set_err(err,
	               "--max-cost needs the price of the model, and %s%s%s "
	               "has none in the model table (assay models lists "
	               "it): add it to your config as \"models\": {\"%s\": "
	               "{\"input\": USD, \"output\": USD}} (per million "
	               "tokens), or use --max-tokens",
	               model ? "\"" : "", model ? model : "the run's model",
	               model ? "\"" : "", model ? model : "NAME");
}
