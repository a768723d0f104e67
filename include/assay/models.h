/* models.h: the model table (share/models.json, carried in the binary,
 * extended and overridden by the configuration's "models"): each
 * model's context window, maximum output and prices, and what a turn's
 * usage costs. An unknown model has no price: its cost is unknown,
 * never 0. */
#ifndef ASSAY_MODELS_H
#define ASSAY_MODELS_H

#include <stddef.h>
#include <cjson/cJSON.h>

struct config;

struct model_info {
	char *name;
	char *provider;  /* "" when the entry does not say */
	long context;    /* tokens; 0 unknown */
	long max_output; /* tokens; 0 unknown */
	/* USD per million tokens; priced is 0 when input or output is
	 * missing (then cost is unknown) */
	double input, cached_input, cache_write, output;
	int priced;
};

struct model_table;

/* The shipped table with cfg's "models" over it (an entry there adds a
 * model or replaces the given fields of one); NULL + *err when an
 * override is malformed. */
struct model_table *models_load(const struct config *cfg, char **err);
void models_free(struct model_table *t);
/* The entry for model: its own name, or the longest name that model
 * starts with followed by "-" (a dated version); NULL when none. */
const struct model_info *models_find(const struct model_table *t,
                                     const char *model);
size_t models_count(const struct model_table *t);
const struct model_info *models_at(const struct model_table *t, size_t i);
/* When the shipped prices were taken ("2025-10-01"). */
const char *models_prices_date(const struct model_table *t);

/* A turn's usage in tokens. input counts every input token, cached
 * (read from a prompt cache) and cache_write (written to one) among
 * them. */
struct model_tokens {
	long input, cached, cache_write, output;
};
/* Its cost in USD; -1 when m has no price. */
double models_cost(const struct model_info *m, const struct model_tokens *t);

/* Whether assay speaks provider (llm_provider_info, for frontends). */
int models_provider_known(const char *provider);
/* The model a run of cfg talks to (cfg->model, else the provider's
 * default); NULL when there is none (ollama without --model). */
const char *models_run_model(const struct config *cfg);
/* --max-cost needs a price for the run's model: -1 + *err (naming the
 * model and how to give it a price) when it has none. */
int models_check_cost_budget(const struct config *cfg, char **err);

#endif
