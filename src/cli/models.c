/* models.c: `assay models [--json]`: the model table (share/models.json
 * with the configuration's "models" over it, what `assay models
 * --import` took from LiteLLM's table among them): each model's
 * provider, context window, maximum output, prices per million tokens
 * and where they come from, and whether it takes images (and how it
 * counts their tokens). `--import FILE` reads LiteLLM's table and says
 * what it took and what it skipped. The JSON it reads (the table, an
 * import's report) is not an event. */
#include "cli.h"

#include "assay/config.h"
#include "assay/json.h"
#include "assay/models.h"
#include "assay/strv.h"
#include "assay/termtext.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* Where m's prices come from, as the table writes it: "checked" or
 * "unchecked" (share/models.json), "imported" (assay models --import),
 * or "prices_from": "config". */
static void price_json(cJSON *e, const struct model_info *m)
{
	if (m->from == MODEL_PRICE_CONFIG)
		cJSON_AddStringToObject(e, "prices_from", "config");
	if (m->from == MODEL_PRICE_IMPORT)
		cJSON_AddStringToObject(e, "prices_from", "import");
	if (m->from == MODEL_PRICE_TABLE)
		cJSON_AddStringToObject(e, "prices_from", "table");
	if (m->unchecked)
		cJSON_AddBoolToObject(e, "unchecked", 1);
	if (*m->date)
		cJSON_AddStringToObject(
		    e, m->from == MODEL_PRICE_IMPORT ? "imported" : "checked",
		    m->date);
}

/* The prices column: the date they were checked, "unchecked",
 * "imported DATE", "config", or "-" without a price. */
static void price_origin(char *out, size_t n, const struct model_info *m)
{
	if (m->from == MODEL_PRICE_IMPORT)
		snprintf(out, n, "imported %s", *m->date ? m->date : "?");
	else if (m->from == MODEL_PRICE_CONFIG)
		snprintf(out, n, "config");
	else if (m->from == MODEL_PRICE_TABLE && m->unchecked)
		snprintf(out, n, "unchecked");
	else if (m->from == MODEL_PRICE_TABLE)
		snprintf(out, n, "%s", *m->date ? m->date : "?");
	else
		snprintf(out, n, "-");
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
		price_json(e, m);
	}
	char *s = cJSON_Print(d);
	printf("%s\n", s);
	free(s);
	cJSON_Delete(d);
}

static void print_table(const struct model_table *t)
{
	/* the name column as wide as the longest name, within 22..48 */
	int w = 22;
	for (size_t i = 0; i < models_count(t); i++) {
		size_t n = strlen(models_at(t, i)->name);
		if ((int)n > w)
			w = n > 48 ? 48 : (int)n;
	}
	printf("%-*s %-10s %9s %8s %9s %9s %9s %9s %-19s %6s\n", w, "model",
	       "provider", "context", "output", "input", "cached", "cache-wr",
	       "output", "prices", "vision");
	for (size_t i = 0; i < models_count(t); i++) {
		const struct model_info *m = models_at(t, i);
		char p[4][32];
		price(p[0], sizeof p[0], m->input);
		price(p[1], sizeof p[1], m->cached_input);
		price(p[2], sizeof p[2], m->cache_write);
		price(p[3], sizeof p[3], m->output);
		char from[32];
		price_origin(from, sizeof from, m);
		char *name = term_clean(m->name, strlen(m->name), 0);
		char *prov = term_clean(m->provider, strlen(m->provider), 0);
		printf("%-*s %-10s %9ld %8ld %9s %9s %9s %9s %-19s %6s\n", w,
		       name, *prov ? prov : "-", m->context, m->max_output,
		       p[0], p[1], p[2], p[3], from,
		       models_vision(m, NULL) ? "yes" : "no");
		free(name);
		free(prov);
	}
	printf("prices in USD per million tokens; \"prices\": the day they "
	       "were checked on the provider's page (the table's newest: %s), "
	       "\"unchecked\", \"imported DAY\" (assay models --import) or "
	       "\"config\"; a model not listed has no price (cost unknown); "
	       "vision: whether it takes images.\n"
	       "Override or add one in your config: \"models\": {\"NAME\": "
	       "{\"input\": 2.0, \"cached_input\": 0.5, \"output\": 8.0, "
	       "\"context\": 128000, \"vision\": true}}, or import "
	       "LiteLLM's table: assay models --import FILE\n",
	       models_prices_date(t));
}

/* One line of text from outside (a file name, a model name), made
 * safe for the terminal. */
static void print_clean(const char *fmt, const char *text)
{
	char *c = term_clean(text, strlen(text), 0);
	printf(fmt, c);
	free(c);
}

/* A skipped reason's detail: its counts by field value, most first (up
 * to six), or its first names. */
static void print_skip_detail(const cJSON *s)
{
	const cJSON *by = cJSON_GetObjectItemCaseSensitive(s, "by");
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(s, "names");
	int n = cJSON_GetArraySize(by), shown = 0;
	const cJSON **order = xcalloc((size_t)n + 1, sizeof *order);
	const cJSON *v;
	int i = 0;
	cJSON_ArrayForEach(v, by) order[i++] = v;
	/* by count, most first (insertion sort: a few dozen at most) */
	for (int a = 1; a < n; a++)
		for (int b = a;
		     b > 0 && order[b]->valuedouble > order[b - 1]->valuedouble;
		     b--) {
			const cJSON *x = order[b];
			order[b] = order[b - 1];
			order[b - 1] = x;
		}
	for (i = 0; i < n && i < 6; i++, shown++) {
		print_clean(i ? ", %s" : ": %s", order[i]->string);
		printf(" %.0f", order[i]->valuedouble);
	}
	if (n > shown)
		printf(" and %d more", n - shown);
	free(order);
	if (n)
		return;
	i = 0;
	cJSON_ArrayForEach(v, names)
	{
		print_clean(i++ ? ", %s" : ": %s", v->valuestring);
	}
	if (i && json_long(s, "count", 0) > i)
		printf(", ...");
}

/* What an import took and skipped, for a person. */
static void print_import(const cJSON *r)
{
	long n[3] = {json_long(r, "new", 0), json_long(r, "updated", 0),
	             json_long(r, "unchanged", 0)};
	long taken = n[0] + n[1] + n[2];
	print_clean("read %s", json_str(r, "file", ""));
	printf(": %ld entries\n", json_long(r, "entries", 0));
	if (taken) {
		printf(
		    "imported %ld: %ld new, %ld updated, %ld unchanged, into ",
		    taken, n[0], n[1], n[2]);
		print_clean("%s\n", json_str(r, "into", ""));
	} else {
		print_clean("imported none: %s is as it was\n",
		            json_str(r, "into", ""));
	}
	const cJSON *capped = cJSON_GetObjectItemCaseSensitive(r, "capped");
	long nc = json_long(capped, "count", 0);
	if (nc) {
		printf("  %ld of them priced by prompt size: their base prices "
		       "taken, their context cut to where a higher price "
		       "starts",
		       nc);
		print_skip_detail(capped);
		printf("\n");
	}
	const cJSON *skipped = cJSON_GetObjectItemCaseSensitive(r, "skipped");
	long ns = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, skipped) ns += json_long(s, "count", 0);
	printf("skipped %ld%s\n", ns, ns ? ":" : "");
	cJSON_ArrayForEach(s, skipped)
	{
		printf("  %5ld  %s", json_long(s, "count", 0),
		       json_str(s, "why", ""));
		print_skip_detail(s);
		printf("\n");
	}
}

/* assay models --import FILE: LiteLLM's table into the user's
 * imported one (json: the report as JSON). */
static int models_import(const char *file, const struct strv *also, int json)
{
	char *user = config_user_file();
	char *dest = config_models_file(user);
	free(user);
	if (!dest) {
		fprintf(stderr, "assay: models --import: neither "
		                "XDG_CONFIG_HOME nor HOME is set: no place for "
		                "the imported table\n");
		return EXIT_USAGE;
	}
	char today[16];
	time_t now = time(NULL);
	struct tm tm;
	strftime(today, sizeof today, "%Y-%m-%d", localtime_r(&now, &tm));
	char *err = NULL;
	cJSON *r = models_import_litellm(
	    file, dest, (const char *const *)also->v, today, &err);
	free(dest);
	if (!r) {
		char *c = term_clean(err, strlen(err), 0);
		fprintf(stderr, "assay: models --import: %s\n", c);
		free(c);
		free(err);
		return EXIT_USAGE;
	}
	if (json) {
		char *s = cJSON_Print(r);
		printf("%s\n", s);
		free(s);
	} else {
		print_import(r);
	}
	cJSON_Delete(r);
	return EXIT_OK;
}

/* The listing: the table with the user's layers over it. */
static int models_list(int json)
{
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

/* --provider A,B: each name of the list onto also. */
static void models_push_providers(struct strv *also, const char *list)
{
	char *copy = xstrdup(list), *save = NULL;
	for (char *p = strtok_r(copy, ",", &save); p;
	     p = strtok_r(NULL, ",", &save))
		strv_push(also, p);
	free(copy);
}

static const char MODELS_USAGE[] =
    "usage: assay models [--json]\n"
    "       assay models --import FILE [--provider NAME]... [--json]\n";

int cmd_models(int argc, char **argv)
{
	int json = 0;
	const char *import = NULL;
	struct strv also = {0};
	int rc = -1;
	for (int i = 1; i < argc && rc < 0; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf("%s", MODELS_USAGE);
			printf(
			    "  the model table: context window, output limit, "
			    "prices per million\n"
			    "  tokens (and the day they were checked or "
			    "imported) and whether it\n"
			    "  takes images, of every known model "
			    "(share/models.json, what was\n"
			    "  imported, your config's \"models\")\n"
			    "  --json           the table (or the import's "
			    "report) as one JSON object\n"
			    "  --import FILE    take the models of LiteLLM's "
			    "model_prices_and_context_window.json\n"
			    "                   that fit (chat models priced "
			    "per "
			    "token, of a provider assay\n"
			    "                   speaks) into models.json "
			    "beside "
			    "your config.json, saying\n"
			    "                   what was new, updated and "
			    "skipped, and why\n"
			    "  --provider NAME  with --import: also the models "
			    "LiteLLM files under NAME\n"
			    "                   (e.g. deepseek), for a server "
			    "you "
			    "reach with --base-url\n");
			rc = EXIT_OK;
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if ((!strcmp(a, "--import") ||
		            !strcmp(a, "--provider")) &&
		           i + 1 < argc && *argv[i + 1]) {
			if (!strcmp(a, "--import"))
				import = argv[++i];
			else
				models_push_providers(&also, argv[++i]);
		} else {
			fprintf(stderr,
			        "assay: models: unknown or incomplete "
			        "option '%s'\n%s",
			        a, MODELS_USAGE);
			rc = EXIT_USAGE;
		}
	}
	if (rc < 0 && also.n && !import) {
		fprintf(stderr,
		        "assay: models: --provider goes with --import\n%s",
		        MODELS_USAGE);
		rc = EXIT_USAGE;
	}
	if (rc < 0)
		rc = import ? models_import(import, &also, json)
		            : models_list(json);
	strv_free(&also);
	return rc;
}
