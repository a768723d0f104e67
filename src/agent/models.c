/* models.c: the model table (assay/models.h): share/models.json as
 * carried in the binary (or $ASSAY_DATA_DIR/share/models.json), the
 * imported models and the configuration's "models" over it (each
 * entry saying where its prices come from), lookups by name and dated
 * version, the cost of a turn, whether a model takes images and what
 * one costs in tokens. The JSON it reads (the model table) is
 * not an event. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/json.h"
#include "assay/llm.h"
#include "assay/models.h"
#include "assay/util.h"

#include <math.h>
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
	                         .output = -1,
	                         .vision = -1};
	return m;
}

static const char *const known_fields[] = {
    "provider",    "context",  "max_output", "input", "cached_input",
    "cache_write", "output",   "vision",     "image", "checked",
    "unchecked",   "imported", NULL};

static const char *const price_fields[] = {"input", "cached_input",
                                           "cache_write", "output", NULL};

/* The rules of "image": {"rule": NAME, ...}, as enum model_image_rule
 * counts them. */
static const char *const image_rules[] = {"", "anthropic", "tiles", "patches",
                                          NULL};

/* A number field of an image rule: -1 + *err when missing or not
 * a number >= min. */
static int image_number(const cJSON *img, const char *key, double min,
                        double *out, const char *origin, const char *name,
                        char **err)
{
	const cJSON *v = cJSON_GetObjectItem(img, key);
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= min) ||
	    !isfinite(v->valuedouble))
		return set_err(err,
		               "%s: models.\"%s\".image.%s must be a number "
		               "%s",
		               origin, name, key, min > 0 ? "> 0" : ">= 0");
	*out = v->valuedouble;
	return 0;
}

/* Parse e's "image" (an object naming its rule and the rule's numbers)
 * into *out: -1 + *err when it is malformed. */
static int parse_image(const cJSON *img, const char *origin, const char *name,
                       struct model_image *out, char **err)
{
	const char *rule = json_str(img, "rule", NULL);
	int r = 0;
	for (int i = 1; rule && image_rules[i]; i++)
		if (!strcmp(rule, image_rules[i]))
			r = i;
	if (!cJSON_IsObject(img) || !r)
		return set_err(err,
		               "%s: models.\"%s\".image must be an object "
		               "like {\"rule\": \"anthropic\"}, {\"rule\": "
		               "\"tiles\", \"base\": 85, \"tile\": 170} or "
		               "{\"rule\": \"patches\", \"multiplier\": 1.62}",
		               origin, name);
	static const char *const keys[][3] = {
	    {NULL}, {NULL}, {"base", "tile", NULL}, {"multiplier", NULL}};
	const cJSON *f;
	cJSON_ArrayForEach(f, img)
	{
		int known = !strcmp(f->string, "rule");
		for (int i = 0; keys[r][i]; i++)
			known |= !strcmp(f->string, keys[r][i]);
		if (!known)
			return set_err(err,
			               "%s: models.\"%s\".image: field \"%s\" "
			               "is not one of rule \"%s\"",
			               origin, name, f->string, rule);
	}
	*out = (struct model_image){.rule = (enum model_image_rule)r};
	double base = 0, tile = 0, mult = 0;
	if (r == MODEL_IMAGE_TILES &&
	    (image_number(img, "base", 0, &base, origin, name, err) < 0 ||
	     image_number(img, "tile", 0, &tile, origin, name, err) < 0))
		return -1;
	if (r == MODEL_IMAGE_PATCHES &&
	    image_number(img, "multiplier", 1e-9, &mult, origin, name, err) < 0)
		return -1;
	out->base = json_num_long(base, 0);
	out->tile = json_num_long(tile, 0);
	out->multiplier = mult;
	return 0;
}

/* Whether s is a date as the table writes them: "YYYY-MM-DD". */
static int date_ok(const char *s)
{
	static const char shape[] = "dddd-dd-dd";
	for (int i = 0; i < 10; i++)
		if (!s[i] ||
		    (shape[i] == 'd' ? s[i] < '0' || s[i] > '9' : s[i] != '-'))
			return 0;
	return s[10] == '\0';
}

/* -1 + *err when a field of e is unknown or not of its type. */
static int check_field(const cJSON *f, const char *origin, const char *name,
                       char **err)
{
	int known = 0;
	for (int i = 0; known_fields[i]; i++)
		known |= !strcmp(f->string, known_fields[i]);
	if (!known)
		return set_err(err,
		               "%s: models.\"%s\": unknown field \"%s\" "
		               "(known: provider, context, max_output, "
		               "input, cached_input, cache_write, output, "
		               "vision, image, checked, unchecked, imported)",
		               origin, name, f->string);
	const char *k = f->string;
	if ((!strcmp(k, "vision") || !strcmp(k, "unchecked")) &&
	    !cJSON_IsBool(f))
		return set_err(err,
		               "%s: models.\"%s\".%s must be true or false",
		               origin, name, k);
	if ((!strcmp(k, "checked") || !strcmp(k, "imported")) &&
	    !(cJSON_IsString(f) && date_ok(f->valuestring)))
		return set_err(err,
		               "%s: models.\"%s\".%s must be a date like "
		               "\"2026-12-07\"",
		               origin, name, k);
	int number = strcmp(k, "provider") && strcmp(k, "vision") &&
	             strcmp(k, "image") && strcmp(k, "unchecked") &&
	             strcmp(k, "checked") && strcmp(k, "imported");
	if (number && (!cJSON_IsNumber(f) || !(f->valuedouble >= 0) ||
	               !isfinite(f->valuedouble)))
		return set_err(err,
		               "%s: models.\"%s\".%s must be a number "
		               ">= 0",
		               origin, name, k);
	return 0;
}

/* Say where m's prices come from, when e (of a layer giving from) sets
 * one. */
static void merge_price_origin(struct model_info *m, const cJSON *e,
                               enum model_price_from from)
{
	int sets = 0;
	for (int i = 0; price_fields[i]; i++)
		sets |= cJSON_GetObjectItem(e, price_fields[i]) != NULL;
	if (!sets)
		return;
	const char *imported = json_str(e, "imported", NULL);
	const char *checked = json_str(e, "checked", NULL);
	m->from = from;
	snprintf(m->date, sizeof m->date, "%s",
	         imported  ? imported
	         : checked ? checked
	                   : "");
	m->unchecked = cJSON_IsTrue(cJSON_GetObjectItem(e, "unchecked"));
}

/* Merge the fields of e (an object, of a layer giving from) into the
 * entry of its name. */
static int merge(struct model_table *t, const cJSON *e, const char *origin,
                 enum model_price_from from, char **err)
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
		if (check_field(f, origin, e->string, err) < 0)
			return -1;
	}
	const cJSON *img = cJSON_GetObjectItem(e, "image");
	struct model_image image = {0};
	if (img && parse_image(img, origin, e->string, &image, err) < 0)
		return -1;
	struct model_info *m = entry(t, e->string);
	/* an image rule says the model takes images, unless "vision" says
	 * otherwise */
	if (img) {
		m->image = image;
		m->vision = 1;
	}
	const cJSON *vision = cJSON_GetObjectItem(e, "vision");
	if (vision)
		m->vision = cJSON_IsTrue(vision);
	const char *prov = json_str(e, "provider", NULL);
	if (prov)
		config_set(&m->provider, prov);
	m->context = json_num_long(field(e, "context", (double)m->context), 0);
	m->max_output =
	    json_num_long(field(e, "max_output", (double)m->max_output), 0);
	m->input = field(e, "input", m->input);
	m->cached_input = field(e, "cached_input", m->cached_input);
	m->cache_write = field(e, "cache_write", m->cache_write);
	m->output = field(e, "output", m->output);
	m->priced = m->input >= 0 && m->output >= 0;
	merge_price_origin(m, e, from);
	return 0;
}

/* Merge every entry of a layer's "models" (from: the layer's kind). */
static int merge_all(struct model_table *t, const cJSON *models,
                     const char *origin, enum model_price_from from, char **err)
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
		if (merge(t, e, origin, from, err) < 0)
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
	                       "share/models.json", MODEL_PRICE_TABLE, err)
	           : -1;
	t->date = xstrdup(json_str(d, "prices_date", "unknown"));
	cJSON_Delete(d);
	if (rc == 0 && cfg)
		rc = merge_all(t, cfg->models_imported,
		               "the imported models.json", MODEL_PRICE_IMPORT,
		               err);
	if (rc == 0 && cfg)
		rc = merge_all(t, cfg->models, "configuration",
		               MODEL_PRICE_CONFIG, err);
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

/* provider, or m's own when provider is NULL ("" when neither says). */
static const char *provider_of(const struct model_info *m, const char *provider)
{
	if (provider)
		return provider;
	return m && m->provider ? m->provider : "";
}

int models_vision(const struct model_info *m, const char *provider)
{
	if (m && m->vision >= 0)
		return m->vision;
	provider = provider_of(m, provider);
	/* the scripted model stands in for any: the images go the way
	 * they would (its tests and the demo look at their charts) */
	return !strcmp(provider, "anthropic") || !strcmp(provider, "openai") ||
	       !strcmp(provider, "openai-responses") ||
	       !strcmp(provider, "script");
}

struct model_image_box models_image_box(const char *provider,
                                        const char *detail)
{
	if (provider && !strcmp(provider, "anthropic"))
		return (struct model_image_box){1568, 1150000, 0};
	if (detail && !strcmp(detail, "low"))
		return (struct model_image_box){512, 0, 0};
	return (struct model_image_box){2048, 0, 768};
}

/* ceil of x, forgiving the last bits of a product that should be whole
 * (1000 * 1.62 is 1620.0000000000002). */
static long ceil_near(double x)
{
	return (long)ceil(x - 1e-7);
}

/* Anthropic: scaled (keeping the aspect) into a long side of 1568 and
 * 1.15 Mpixel when larger, then ceil(w * h / 750). */
static long tokens_anthropic(double w, double h)
{
	double s = 1;
	if (fmax(w, h) > 1568)
		s = 1568 / fmax(w, h);
	if (w * h * s * s > 1150000)
		s = sqrt(1150000 / (w * h));
	if (s < 1) {
		w = fmax(1, floor(w * s));
		h = fmax(1, floor(h * s));
	}
	return ceil_near(w * h / 750);
}

/* OpenAI's tiles: detail low costs base; else fit in 2048 x 2048, bring
 * the short side down to 768, and each 512 px tile costs tile. Sizes
 * round half to even, as the API was seen to (2050x513 is 4 tiles,
 * 2049x513 8). */
static long tokens_tiles(const struct model_image *r, double w, double h,
                         const char *detail)
{
	if (detail && !strcmp(detail, "low"))
		return r->base;
	if (fmax(w, h) > 2048) {
		double s = 2048 / fmax(w, h);
		w = fmax(1, rint(w * s));
		h = fmax(1, rint(h * s));
	}
	if (fmin(w, h) > 768) {
		double s = 768 / fmin(w, h);
		w = fmax(1, rint(w * s));
		h = fmax(1, rint(h * s));
	}
	long tiles = (long)(ceil(w / 512) * ceil(h / 512));
	return r->base + r->tile * tiles;
}

/* OpenAI's patches: the 32 px patches that cover the image; over 1536,
 * scaled down so that a whole number of patches covers one side and at
 * most 1536 the whole; capped at 1536; times the model's multiplier. */
static long tokens_patches(const struct model_image *r, double w, double h)
{
	double patches = ceil(w / 32) * ceil(h / 32);
	if (patches > 1536) {
		double s = sqrt(32.0 * 32.0 * 1536 / (w * h));
		double pw = w * s / 32, ph = h * s / 32, f = 1;
		/* a side under one patch (a sliver of an image) is left be */
		if (pw >= 1)
			f = fmin(f, floor(pw) / pw);
		if (ph >= 1)
			f = fmin(f, floor(ph) / ph);
		s *= f;
		patches = (double)ceil_near(w * s / 32) *
		          (double)ceil_near(h * s / 32);
		if (patches > 1536)
			patches = 1536;
	}
	return ceil_near(patches * r->multiplier);
}

long models_image_tokens(const struct model_info *m, const char *provider,
                         int w, int h, const char *detail)
{
	if (w <= 0 || h <= 0)
		return 0;
	struct model_image r = {MODEL_IMAGE_TILES, 85, 170, 0};
	if (m && m->image.rule != MODEL_IMAGE_NONE)
		r = m->image;
	else if (!strcmp(provider_of(m, provider), "anthropic"))
		r.rule = MODEL_IMAGE_ANTHROPIC;
	switch (r.rule) {
	case MODEL_IMAGE_ANTHROPIC:
		return tokens_anthropic(w, h);
	case MODEL_IMAGE_PATCHES:
		return tokens_patches(&r, w, h);
	default:
		return tokens_tiles(&r, w, h, detail);
	}
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
	if (cfg->max_cost <= 0 || llm_provider_free(cfg->provider))
		return 0; /* a run that costs nothing never crosses it */
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
