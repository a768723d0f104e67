/* models_import.c: `assay models --import` (assay/models.h): LiteLLM's
 * model table (model_prices_and_context_window.json) mapped onto ours,
 * what does not fit skipped with its reason, the rest merged into the
 * user's imported table (models.json beside config.json). The JSON it
 * reads (LiteLLM's table, the imported one) is not an event. */
#include "assay/config.h"
#include "assay/json.h"
#include "assay/models.h"
#include "assay/util.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* LiteLLM's table was 1.6 MB in 2026; five times that is not one. */
#define IMPORT_MAX_BYTES (8 << 20)
/* Names a reason keeps as examples. */
#define IMPORT_NAMES 5
/* The longest model name taken. */
#define IMPORT_NAME_MAX 200

/* Why an entry was not taken, in the order the report lists them. */
enum import_skip {
	IMPORT_SKIP_TEMPLATE,
	IMPORT_SKIP_SHAPE,
	IMPORT_SKIP_MODE,
	IMPORT_SKIP_PROVIDER,
	IMPORT_SKIP_UNIT,
	IMPORT_SKIP_TIERS,
	IMPORT_SKIP_NO_PRICE,
	IMPORT_SKIP_VALUE,
	IMPORT_SKIP_NAME,
	IMPORT_SKIP_SAME,
	IMPORT_SKIP_CLASH,
	IMPORT_TAKEN, /* not a reason: the entry fits */
};

static const struct import_reason {
	const char *key, *why;
} import_reasons[] = {
    [IMPORT_SKIP_TEMPLATE] = {"template", "LiteLLM's template of the fields"},
    [IMPORT_SKIP_SHAPE] = {"shape", "not an object"},
    [IMPORT_SKIP_MODE] = {"mode", "not a chat model (mode other than chat, "
                                  "responses or completion)"},
    [IMPORT_SKIP_PROVIDER] = {"provider",
                              "a provider assay does not speak "
                              "(litellm_provider; --provider NAME takes "
                              "one you reach with --base-url)"},
    [IMPORT_SKIP_UNIT] = {"unit", "priced per character or per second"},
    [IMPORT_SKIP_TIERS] = {"tiers", "priced in tiers of use (tiered_pricing)"},
    [IMPORT_SKIP_NO_PRICE] = {"no_price",
                              "no price per input and output token"},
    [IMPORT_SKIP_VALUE] = {"value",
                           "a price or limit that is not a number >= 0, "
                           "or a flag that is not true or false"},
    [IMPORT_SKIP_NAME] = {"name", "a name assay cannot use (empty, over 200 "
                                  "bytes, control characters)"},
    [IMPORT_SKIP_SAME] = {"duplicate", "the same model as another entry (the "
                                       "provider's own name is kept)"},
    [IMPORT_SKIP_CLASH] = {"conflict",
                           "the same model as another entry at other "
                           "prices (neither is kept)"},
};

/* The LiteLLM providers assay speaks, as assay names them. */
static const struct import_provider {
	const char *litellm, *ours;
} import_providers[] = {
    {"openai", "openai"},
    {"text-completion-openai", "openai"},
    {"anthropic", "anthropic"},
    {"gemini", "gemini"},
    {"openrouter", "openrouter"},
    {"ollama", "ollama"},
    {"ollama_chat", "ollama"},
    {"hosted_vllm", "vllm"},
    {"vllm", "vllm"},
};

/* LiteLLM's price fields per token, and ours (per million tokens). */
static const char *const import_prices[][2] = {
    {"input_cost_per_token", "input"},
    {"cache_read_input_token_cost", "cached_input"},
    {"cache_creation_input_token_cost", "cache_write"},
    {"output_cost_per_token", "output"},
};

/* Prices per character or second: none of them is a token's. */
static const char *const import_units[] = {
    "input_cost_per_character", "output_cost_per_character",
    "input_cost_per_second", "output_cost_per_second", NULL};

struct import_tally {
	long count;
	cJSON *by;    /* {KEY: n}, for reasons counted by a field */
	cJSON *names; /* the first LiteLLM keys */
};

struct import {
	const char *const *also; /* more LiteLLM providers to take */
	cJSON *out;              /* name -> our entry */
	cJSON *meta;             /* name -> {"direct", "clash", "keys"} */
	struct import_tally skip[IMPORT_TAKEN];
	long capped;
	cJSON *capped_names;
};

/* Count key under reason (by: the value it is counted by, or NULL). */
static void import_skip(struct import *im, enum import_skip why,
                        const char *key, const char *by)
{
	struct import_tally *t = &im->skip[why];
	t->count++;
	if (!t->names)
		t->names = cJSON_CreateArray();
	if (cJSON_GetArraySize(t->names) < IMPORT_NAMES)
		cJSON_AddItemToArray(t->names, cJSON_CreateString(key));
	if (!by)
		return;
	if (!t->by)
		t->by = cJSON_CreateObject();
	cJSON *n = cJSON_GetObjectItemCaseSensitive(t->by, by);
	if (n)
		cJSON_SetNumberValue(n, n->valuedouble + 1);
	else
		cJSON_AddNumberToObject(t->by, by, 1);
}

/* assay's name for LiteLLM provider lp: "" for one of also (the user's
 * choice, reached through --base-url); NULL when assay does not speak
 * it. */
static const char *import_provider_ours(const struct import *im, const char *lp)
{
	if (!lp)
		return NULL;
	for (size_t i = 0;
	     i < sizeof import_providers / sizeof *import_providers; i++)
		if (!strcmp(lp, import_providers[i].litellm))
			return import_providers[i].ours;
	for (size_t i = 0; im->also && im->also[i]; i++)
		if (!strcmp(lp, im->also[i]))
			return "";
	return NULL;
}

/* The prompt size where a higher price starts: the least N of the
 * "<price>_above_N[k|m]_tokens" fields (the 1-hour cache's and the
 * service tiers' fields do not end so); 0 when there is none. */
static long import_tier_start(const cJSON *e)
{
	long least = 0;
	const cJSON *f;
	cJSON_ArrayForEach(f, e)
	{
		for (size_t i = 0; i < 4; i++) {
			size_t n = strlen(import_prices[i][0]);
			const char *k = f->string;
			if (strncmp(k, import_prices[i][0], n) ||
			    strncmp(k + n, "_above_", 7))
				continue;
			char *end;
			errno = 0;
			long v = strtol(k + n + 7, &end, 10);
			if (end == k + n + 7 || errno || v <= 0 ||
			    v > 1000000000)
				continue;
			if (*end == 'k' || *end == 'm')
				v *= *end++ == 'k' ? 1000 : 1000000;
			if (strcmp(end, "_tokens"))
				continue;
			if (!least || v < least)
				least = v;
		}
	}
	return least;
}

/* Add LiteLLM's price field from (USD per token) to out as key (USD
 * per million tokens, to the nano-dollar); -1 when it is not a number
 * >= 0. */
static int import_price(cJSON *out, const cJSON *e, const char *from,
                        const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, from);
	if (!v)
		return 0;
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0))
		return -1;
	double m = round(v->valuedouble * 1e15) / 1e9;
	if (!isfinite(m))
		return -1;
	cJSON_AddNumberToObject(out, key, m);
	return 0;
}

/* Add LiteLLM's token count from to out as key, at most cap when cap
 * is not 0 (cap itself when there is none): -1 when it is not a number
 * >= 0 (up to 2^53), 1 when cap cut or gave it, else 0. */
static int import_limit(cJSON *out, const cJSON *e, const char *from,
                        const char *key, long cap)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, from);
	if (!v && !cap)
		return 0;
	double n = v ? v->valuedouble : 0;
	if (v && (!cJSON_IsNumber(v) || !(n >= 0) || n > 9007199254740992.0))
		return -1;
	int cut = cap && (!v || n > (double)cap);
	if (cut)
		n = (double)cap;
	cJSON_AddNumberToObject(out, key, floor(n));
	return cut;
}

/* e's prices, limits and vision as our fields into out (provider ours;
 * the context cut to cap when cap is not 0, *cut saying whether it
 * was): the reason when one is not of its type, else IMPORT_TAKEN. */
static enum import_skip import_fields(cJSON *out, const cJSON *e,
                                      const char *ours, long cap, int *cut)
{
	if (*ours)
		cJSON_AddStringToObject(out, "provider", ours);
	*cut = import_limit(out, e, "max_input_tokens", "context", cap);
	if (*cut < 0 ||
	    import_limit(out, e, "max_output_tokens", "max_output", 0) < 0)
		return IMPORT_SKIP_VALUE;
	for (size_t i = 0; i < 4; i++)
		if (import_price(out, e, import_prices[i][0],
		                 import_prices[i][1]) < 0)
			return IMPORT_SKIP_VALUE;
	const cJSON *vision =
	    cJSON_GetObjectItemCaseSensitive(e, "supports_vision");
	if (vision && !cJSON_IsBool(vision))
		return IMPORT_SKIP_VALUE;
	if (vision)
		cJSON_AddBoolToObject(out, "vision", cJSON_IsTrue(vision));
	return IMPORT_TAKEN;
}

/* Whether name can name a model here: not empty, not too long, no
 * control characters (the terminal sees it through the sanitizer
 * anyway; a name is also a key of the user's files). */
static int import_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (!n || n > IMPORT_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return 0;
	return 1;
}

/* LiteLLM's entry e of key mapped onto ours: *out named *name (key
 * without its "PROVIDER/"); the reason it does not fit otherwise
 * (*by: what it is counted by). */
static enum import_skip import_map(struct import *im, const cJSON *e,
                                   const char **name, cJSON **out,
                                   const char **by)
{
	const char *key = e->string;
	if (!strcmp(key, "sample_spec"))
		return IMPORT_SKIP_TEMPLATE;
	if (!cJSON_IsObject(e))
		return IMPORT_SKIP_SHAPE;
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(e, "mode");
	if (mode && !cJSON_IsString(mode))
		return IMPORT_SKIP_VALUE;
	if (mode && strcmp(mode->valuestring, "chat") &&
	    strcmp(mode->valuestring, "responses") &&
	    strcmp(mode->valuestring, "completion")) {
		*by = mode->valuestring;
		return IMPORT_SKIP_MODE;
	}
	const char *lp = json_str(e, "litellm_provider", NULL);
	const char *ours = import_provider_ours(im, lp);
	if (!ours) {
		*by = lp ? lp : "(none)";
		return IMPORT_SKIP_PROVIDER;
	}
	for (size_t i = 0; import_units[i]; i++)
		if (cJSON_GetObjectItemCaseSensitive(e, import_units[i]))
			return IMPORT_SKIP_UNIT;
	if (cJSON_GetObjectItemCaseSensitive(e, "tiered_pricing"))
		return IMPORT_SKIP_TIERS;
	if (!cJSON_GetObjectItemCaseSensitive(e, import_prices[0][0]) ||
	    !cJSON_GetObjectItemCaseSensitive(e, import_prices[3][0]))
		return IMPORT_SKIP_NO_PRICE;
	size_t n = strlen(lp);
	*name = !strncmp(key, lp, n) && key[n] == '/' ? key + n + 1 : key;
	if (!import_name_ok(*name))
		return IMPORT_SKIP_NAME;
	int cut = 0;
	*out = cJSON_CreateObject();
	enum import_skip why =
	    import_fields(*out, e, ours, import_tier_start(e), &cut);
	if (why != IMPORT_TAKEN) {
		cJSON_Delete(*out);
		*out = NULL;
	} else if (cut) {
		im->capped++;
		if (cJSON_GetArraySize(im->capped_names) < IMPORT_NAMES)
			cJSON_AddItemToArray(im->capped_names,
			                     cJSON_CreateString(*name));
	}
	return why;
}

/* Take entry (of LiteLLM's key, named name) unless an entry taken
 * before names the same model: the one whose key is the name itself
 * (the provider's own) wins; two of other keys are one when their
 * fields agree, else neither is taken (import_settle). */
static void import_add(struct import *im, const char *key, const char *name,
                       cJSON *entry)
{
	int direct = !strcmp(key, name);
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(im->meta, name);
	if (!meta) {
		cJSON_AddItemToObject(im->out, name, entry);
		meta = cJSON_AddObjectToObject(im->meta, name);
		cJSON_AddBoolToObject(meta, "direct", direct);
		cJSON_AddBoolToObject(meta, "clash", 0);
		cJSON_AddItemToArray(cJSON_AddArrayToObject(meta, "keys"),
		                     cJSON_CreateString(key));
		return;
	}
	cJSON *keys = cJSON_GetObjectItemCaseSensitive(meta, "keys");
	cJSON *held = cJSON_GetObjectItemCaseSensitive(im->out, name);
	int held_direct =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(meta, "direct"));
	if (direct && !held_direct) {
		cJSON_ReplaceItemInObjectCaseSensitive(im->out, name, entry);
		cJSON_ReplaceItemInObjectCaseSensitive(meta, "direct",
		                                       cJSON_CreateTrue());
		cJSON_InsertItemInArray(keys, 0, cJSON_CreateString(key));
		return;
	}
	if (!held_direct && !cJSON_Compare(held, entry, 1))
		cJSON_ReplaceItemInObjectCaseSensitive(meta, "clash",
		                                       cJSON_CreateTrue());
	cJSON_AddItemToArray(keys, cJSON_CreateString(key));
	cJSON_Delete(entry);
}

/* Count the entries import_add did not take: names held by the
 * provider's own key or agreeing keep their first key; names whose
 * keys disagree are dropped whole. */
static void import_settle(struct import *im)
{
	for (cJSON *meta = im->meta->child; meta; meta = meta->next) {
		int direct = cJSON_IsTrue(
		    cJSON_GetObjectItemCaseSensitive(meta, "direct"));
		int clash =
		    !direct && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
		                   meta, "clash"));
		const cJSON *keys =
		    cJSON_GetObjectItemCaseSensitive(meta, "keys");
		int i = 0;
		for (const cJSON *k = keys->child; k; k = k->next, i++)
			if (clash || i > 0)
				import_skip(im,
				            clash ? IMPORT_SKIP_CLASH
				                  : IMPORT_SKIP_SAME,
				            k->valuestring, NULL);
		if (clash)
			cJSON_DeleteItemFromObjectCaseSensitive(im->out,
			                                        meta->string);
	}
}

/* The first number in j that is not finite (cJSON reads 1e999 as
 * infinity); NULL when none. Depth is bounded by cJSON's nesting
 * limit. */
static const cJSON *import_nonfinite(const cJSON *j)
{
	if (cJSON_IsNumber(j) && !isfinite(j->valuedouble))
		return j;
	for (const cJSON *c = j->child; c; c = c->next) {
		const cJSON *bad = import_nonfinite(c);
		if (bad)
			return bad;
	}
	return NULL;
}

/* LiteLLM's table at src; NULL + *err when it is not JSON, not an
 * object, too large or holds a number that is not finite. */
static cJSON *import_read(const char *src, char **err)
{
	char *why = NULL;
	cJSON *j = json_parse_file(src, IMPORT_MAX_BYTES, &why);
	if (!j) {
		set_err(err,
		        "%s: LiteLLM's model_prices_and_context_window.json "
		        "is one JSON object of models; nothing was imported",
		        why);
		free(why);
		return NULL;
	}
	if (!cJSON_IsObject(j)) {
		set_err(err,
		        "%s: not a JSON object of models (as LiteLLM's "
		        "model_prices_and_context_window.json is); nothing "
		        "was imported",
		        src);
		cJSON_Delete(j);
		return NULL;
	}
	const cJSON *e;
	cJSON_ArrayForEach(e, j)
	{
		const cJSON *bad = import_nonfinite(e);
		if (!bad)
			continue;
		set_err(err,
		        "%s: \"%s\"%s%s holds a number that is not finite "
		        "(too large for a double); nothing was imported",
		        src, e->string, bad != e && bad->string ? "." : "",
		        bad != e && bad->string ? bad->string : "");
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

/* The imported table at dest ({} when there is none yet); NULL +
 * *err when it is there but cannot be read or is not an object. */
static cJSON *import_dest(const char *dest, char **err)
{
	if (access(dest, F_OK) < 0 && errno == ENOENT)
		return cJSON_CreateObject();
	char *why = NULL;
	cJSON *d = json_parse_file(dest, CONFIG_MODELS_MAX_BYTES, &why);
	if (cJSON_IsObject(d))
		return d;
	if (why)
		set_err(err,
		        "%s: fix or remove it (it holds what 'assay models "
		        "--import' took before); nothing was imported",
		        why);
	else
		set_err(err,
		        "%s: not a JSON object of models: fix or remove it "
		        "(it holds what 'assay models --import' took before); "
		        "nothing was imported",
		        dest);
	free(why);
	cJSON_Delete(d);
	return NULL;
}

/* Move what was taken into models (the imported table), each dated
 * today; n counts the new ones, the changed ones and those that were
 * already so. */
static void import_merge(struct import *im, cJSON *models, const char *today,
                         long n[3])
{
	while (im->out->child) {
		cJSON *take =
		    cJSON_DetachItemViaPointer(im->out, im->out->child);
		char *name = xstrdup(take->string);
		cJSON *old = cJSON_GetObjectItemCaseSensitive(models, name);
		cJSON *was = old ? cJSON_Duplicate(old, 1) : NULL;
		cJSON_DeleteItemFromObjectCaseSensitive(was, "imported");
		n[!old ? 0 : cJSON_Compare(was, take, 1) ? 2 : 1]++;
		cJSON_Delete(was);
		cJSON_AddStringToObject(take, "imported", today);
		if (old)
			cJSON_ReplaceItemInObjectCaseSensitive(models, name,
			                                       take);
		else
			cJSON_AddItemToObject(models, name, take);
		free(name);
	}
}

/* d written to dest whole: a temporary file beside it, then a rename. */
static int import_write(const cJSON *d, const char *dest, char **err)
{
	char *dir = xstrdup(dest);
	int rc = mkdir_p(dirname(dir), err);
	free(dir);
	if (rc < 0)
		return -1;
	char *text = cJSON_Print(d);
	size_t len = strlen(text);
	if (len > CONFIG_MODELS_MAX_BYTES)
		rc = set_err(err,
		             "%s would hold %zu bytes, more than the %d assay "
		             "reads back; nothing was imported",
		             dest, len, CONFIG_MODELS_MAX_BYTES);
	else
		rc = write_file_atomic(dest, text, len, err);
	free(text);
	return rc;
}

/* The report of an import (models.h says its shape). */
static cJSON *import_report(const struct import *im, const char *src,
                            const char *dest, int entries, const long n[3])
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "file", src);
	cJSON_AddStringToObject(r, "into", dest);
	cJSON_AddNumberToObject(r, "entries", entries);
	cJSON_AddNumberToObject(r, "new", (double)n[0]);
	cJSON_AddNumberToObject(r, "updated", (double)n[1]);
	cJSON_AddNumberToObject(r, "unchanged", (double)n[2]);
	cJSON *c = cJSON_AddObjectToObject(r, "capped");
	cJSON_AddNumberToObject(c, "count", (double)im->capped);
	cJSON_AddItemToObject(c, "names", cJSON_Duplicate(im->capped_names, 1));
	cJSON *skipped = cJSON_AddArrayToObject(r, "skipped");
	for (int i = 0; i < IMPORT_TAKEN; i++) {
		const struct import_tally *t = &im->skip[i];
		if (!t->count)
			continue;
		cJSON *s = cJSON_CreateObject();
		cJSON_AddStringToObject(s, "reason", import_reasons[i].key);
		cJSON_AddStringToObject(s, "why", import_reasons[i].why);
		cJSON_AddNumberToObject(s, "count", (double)t->count);
		if (t->by)
			cJSON_AddItemToObject(s, "by",
			                      cJSON_Duplicate(t->by, 1));
		cJSON_AddItemToObject(s, "names", cJSON_Duplicate(t->names, 1));
		cJSON_AddItemToArray(skipped, s);
	}
	return r;
}

cJSON *models_import_litellm(const char *src, const char *dest,
                             const char *const *also, const char *today,
                             char **err)
{
	struct import im = {.also = also,
	                    .out = cJSON_CreateObject(),
	                    .meta = cJSON_CreateObject(),
	                    .capped_names = cJSON_CreateArray()};
	cJSON *report = NULL, *d = NULL, *doc = import_read(src, err);
	if (!doc || !(d = import_dest(dest, err)))
		goto out;
	const cJSON *e;
	cJSON_ArrayForEach(e, doc)
	{
		const char *name = NULL, *by = NULL;
		cJSON *entry = NULL;
		enum import_skip why = import_map(&im, e, &name, &entry, &by);
		if (why == IMPORT_TAKEN)
			import_add(&im, e->string, name, entry);
		else
			import_skip(&im, why, e->string, by);
	}
	import_settle(&im);
	long n[3] = {0, 0, 0};
	import_merge(&im, d, today, n);
	if (n[0] + n[1] + n[2] > 0 && import_write(d, dest, err) < 0)
		goto out;
	report = import_report(&im, src, dest, cJSON_GetArraySize(doc), n);
out:
	for (int i = 0; i < IMPORT_TAKEN; i++) {
		cJSON_Delete(im.skip[i].by);
		cJSON_Delete(im.skip[i].names);
	}
	cJSON_Delete(im.out);
	cJSON_Delete(im.meta);
	cJSON_Delete(im.capped_names);
	cJSON_Delete(doc);
	cJSON_Delete(d);
	return report;
}
