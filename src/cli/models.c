/* models.c: `assay models [--json]`: the model table (share/models.json
 * with the configuration's "models" over it): each model's provider,
 * context window, maximum output, prices per million tokens, and
 * whether it takes images (and how it counts their tokens). */
#include "cli.h"

#include "assay/config.h"
#include "assay/models.h"
#include "assay/termtext.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A price column: "$2.00", or "-" when the table has none. */
static void price(char *out, size_t n, double v)
{
	if (v < 0)
		snprintf(out, n, "-");
	else
		snprintf(out, n, "$%.3f", v);
}

/* The JSON of m's image rule; NULL when the table gives none. */
static cJSON *image_json(const struct model_info *m)
{
	static const char *const rules[] = {[MODEL_IMAGE_ANTHROPIC] =
	                                        "anthropic",
	                                    [MODEL_IMAGE_TILES] = "tiles",
	                                    [MODEL_IMAGE_PATCHES] = "patches"};
	if (m->image.rule == MODEL_IMAGE_NONE)
		return NULL;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "rule", rules[m->image.rule]);
	if (m->image.rule == MODEL_IMAGE_TILES) {
		cJSON_AddNumberToObject(o, "base", (double)m->image.base);
		cJSON_AddNumberToObject(o, "tile", (double)m->image.tile);
	} else if (m->image.rule == MODEL_IMAGE_PATCHES) {
		cJSON_AddNumberToObject(o, "multiplier", m->image.multiplier);
	}
	return o;
}

static void print_json(const struct model_table *t)
{
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "prices_date", models_prices_date(t));
	cJSON *ms = cJSON_AddObjectToObject(d, "models");
	for (size_t i = 0; i < models_count(t); i++) {
		const struct model_info *m = models_at(t, i);
		cJSON *e = cJSON_AddObjectToObject(ms, m->name);
		cJSON_AddStringToObject(e, "provider", m->provider);
		cJSON_AddNumberToObject(e, "context", (double)m->context);
		cJSON_AddNumberToObject(e, "max_output", (double)m->max_output);
		const double v[] = {m->input, m->cached_input, m->cache_write,
		                    m->output};
		const char *k[] = {"input", "cached_input", "cache_write",
		                   "output"};
		for (int j = 0; j < 4; j++)
			if (v[j] >= 0)
				cJSON_AddNumberToObject(e, k[j], v[j]);
		/* as a run would take it: the table's word, else the
		 * provider's default */
		cJSON_AddBoolToObject(e, "vision", models_vision(m, NULL));
		cJSON *img = image_json(m);
		if (img)
			cJSON_AddItemToObject(e, "image", img);
	}
	char *s = cJSON_Print(d);
	printf("%s\n", s);
	free(s);
	cJSON_Delete(d);
}

static void print_table(const struct model_table *t)
{
	printf("%-22s %-10s %9s %8s %9s %9s %9s %9s %6s\n", "model", "provider",
	       "context", "output", "input", "cached", "cache-wr", "output",
	       "vision");
	for (size_t i = 0; i < models_count(t); i++) {
		const struct model_info *m = models_at(t, i);
		char p[4][32];
		price(p[0], sizeof p[0], m->input);
		price(p[1], sizeof p[1], m->cached_input);
		price(p[2], sizeof p[2], m->cache_write);
		price(p[3], sizeof p[3], m->output);
		char *name = term_clean(m->name, strlen(m->name), 0);
		char *prov = term_clean(m->provider, strlen(m->provider), 0);
		printf("%-22s %-10s %9ld %8ld %9s %9s %9s %9s %6s\n", name,
		       *prov ? prov : "-", m->context, m->max_output, p[0],
		       p[1], p[2], p[3], models_vision(m, NULL) ? "yes" : "no");
		free(name);
		free(prov);
	}
	printf("prices in USD per million tokens, taken %s; a model not "
	       "listed has no price (cost unknown); vision: whether it "
	       "takes images.\n"
	       "Override or add one in your config: \"models\": {\"NAME\": "
	       "{\"input\": 2.0, \"cached_input\": 0.5, \"output\": 8.0, "
	       "\"context\": 128000, \"vision\": true}}\n",
	       models_prices_date(t));
}

int cmd_models(int argc, char **argv)
{
	int json = argc == 2 && !strcmp(argv[1], "--json");
	if (argc == 2 &&
	    (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: assay models [--json]\n"
		       "  the model table: context window, output limit, "
		       "prices per million\n"
		       "  tokens and whether it takes images, of every known "
		       "model\n"
		       "  (share/models.json and your config's \"models\")\n"
		       "  --json   the table as one JSON object\n");
		return EXIT_OK;
	}
	if (argc > 2 || (argc == 2 && !json)) {
		fprintf(stderr, "assay: usage: assay models [--json]\n");
		return EXIT_USAGE;
	}
	struct config c;
	char *err = NULL;
	config_defaults(&c);
	char *user = config_user_file();
	int rc = config_load(&c, user, NULL, &err);
	free(user);
	struct model_table *t = rc == 0 ? models_load(&c, &err) : NULL;
	if (!t) {
		fprintf(stderr, "assay: %s\n", err);
		free(err);
		config_free(&c);
		return EXIT_USAGE;
	}
	if (json)
		print_json(t);
	else
		print_table(t);
	models_free(t);
	config_free(&c);
	return 0;
}
