/* models.h: the model table (share/models.json, carried in the binary,
 * extended and overridden by what `assay models --import` took from
 * LiteLLM's table, then by the configuration's "models"): each model's
 * context window, maximum output and prices (and where they come
 * from), what a turn's usage costs; whether it takes images and what
 * one costs in tokens; the import itself. An unknown model has no
 * price: its cost is unknown, never 0. */
#ifndef ASSAY_MODELS_H
#define ASSAY_MODELS_H

#include <stddef.h>
#include <cjson/cJSON.h>

struct config;

/* How a model counts an image's input tokens (share/models.json's
 * "image": {"rule": ...}). */
enum model_image_rule {
	MODEL_IMAGE_NONE,      /* the table does not say */
	MODEL_IMAGE_ANTHROPIC, /* ceil(w*h/750) in a 1568 px, 1.15 Mpx box */
	MODEL_IMAGE_TILES,     /* base + tile per 512 px tile (OpenAI) */
	MODEL_IMAGE_PATCHES,   /* 32 px patches (<= 1536) times multiplier */
};

struct model_image {
	enum model_image_rule rule;
	long base, tile;   /* tiles: tokens of any image, of each tile */
	double multiplier; /* patches: tokens per patch */
};

/* Where an entry's prices come from (the layer that last set one). */
enum model_price_from {
	MODEL_PRICE_NONE,   /* no layer gave a price */
	MODEL_PRICE_TABLE,  /* share/models.json ("checked" or "unchecked") */
	MODEL_PRICE_IMPORT, /* assay models --import ("imported") */
	MODEL_PRICE_CONFIG, /* a configuration's "models" */
};

struct model_info {
	char *name;
	char *provider;  /* "" when the entry does not say */
	long context;    /* tokens; 0 unknown */
	long max_output; /* tokens; 0 unknown */
	/* USD per million tokens; priced is 0 when input or output is
	 * missing (then cost is unknown) */
	double input, cached_input, cache_write, output;
	int priced;
	int vision; /* takes images: 1 yes, 0 no, -1 the table does not say */
	struct model_image image;
	enum model_price_from from;
	/* "YYYY-MM-DD": when the prices were checked against the provider's
	 * page (the table's "checked") or imported ("imported"); "" when
	 * the entry does not say */
	char date[11];
	int unchecked; /* the table's "unchecked": no page confirmed them */
};

struct model_table;

/* The shipped table, cfg's imported models over it, cfg's "models" over
 * those (an entry adds a model or replaces the given fields of one;
 * cfg NULL: the shipped table alone); NULL + *err when an entry is
 * malformed. */
struct model_table *models_load(const struct config *cfg, char **err);
void models_free(struct model_table *t);
/* The entry for model: its own name, or the longest name that model
 * starts with followed by "-" (a dated version); NULL when none. */
const struct model_info *models_find(const struct model_table *t,
                                     const char *model);
size_t models_count(const struct model_table *t);
const struct model_info *models_at(const struct model_table *t, size_t i);
/* When the shipped table was last checked against the providers'
 * pages ("2026-12-07"; each entry has its own date). */
const char *models_prices_date(const struct model_table *t);

/* A turn's usage in tokens. input counts every input token, cached
 * (read from a prompt cache) and cache_write (written to one) among
 * them. */
struct model_tokens {
	long input, cached, cache_write, output;
};
/* Its cost in USD; -1 when m has no price. */
double models_cost(const struct model_info *m, const struct model_tokens *t);

/* The box an image is scaled to before it is sent: long side <= max,
 * width * height <= mpx, short side <= shortside (0: no such bound). */
struct model_image_box {
	int max, mpx, shortside;
};
/* Whether model m (may be NULL: unknown) of provider takes images: 1
 * yes, 0 no. The table's (or the configuration's) "vision" when it
 * says; else anthropic, openai, openai-responses and script (the stand-in) yes
 * (all their current models do), every other provider (ollama, vllm, ...) no.
 * provider NULL: m's own. */
int models_vision(const struct model_info *m, const char *provider);
/* The box images are scaled to before sending, per provider and detail
 * ("low", "high", "auto" or NULL): anthropic 1568/1150000/0 whatever the
 * detail; every other provider (they speak OpenAI's dialects) high and
 * auto 2048/0/768, low 512/0/0. */
struct model_image_box models_image_box(const char *provider,
                                        const char *detail);
/* Estimated input tokens of a w x h image (as sent) for m: m's rule, or
 * (m NULL or without one) the provider's default: anthropic's for
 * anthropic, else tiles 85/170. 0 when w or h is not positive. */
long models_image_tokens(const struct model_info *m, const char *provider,
                         int w, int h, const char *detail);

/* `assay models --import`: read LiteLLM's model table
 * (model_prices_and_context_window.json) at src, map what fits onto
 * this table's fields and merge it into dest (the user's imported
 * table, config_models_file; made when missing, written whole through
 * a temporary file and a rename). Entries of LiteLLM providers assay
 * speaks are taken, and those of also (NULL-terminated LiteLLM provider
 * names; may be NULL) under the name their API uses; each is dated
 * today ("YYYY-MM-DD"); an entry already in dest is replaced whole,
 * the others there are kept. The report: {"file", "into", "entries",
 * "new", "updated", "unchanged", "capped": {"count", "names"} (whose
 * context was cut to where a higher price starts), "skipped":
 * [{"reason", "why", "count", "by": {KEY: n}, "names": [...]}]}; when
 * nothing fits, dest is left as it was. NULL + *err, nothing written,
 * when src is not such a table (not JSON, not an object, over the size
 * limit, a number that is not finite) or dest cannot be read or
 * written. */
cJSON *models_import_litellm(const char *src, const char *dest,
                             const char *const *also, const char *today,
                             char **err);

/* Whether assay speaks provider (llm_provider_info, for frontends). */
int models_provider_known(const char *provider);
/* The model a run of cfg talks to (cfg->model, else the provider's
 * default); NULL when there is none (ollama without --model). */
const char *models_run_model(const struct config *cfg);
/* --max-cost needs a price for the run's model: -1 + *err (naming the
 * model and how to give it a price) when it has none. */
int models_check_cost_budget(const struct config *cfg, char **err);

#endif
