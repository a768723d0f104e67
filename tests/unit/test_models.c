/* test_models.c: the model table (src/agent/models.c): the shipped
 * entries (each dated or marked unchecked), lookups of dated versions,
 * overrides from the configuration, the imported layer below them and
 * where each entry's prices come from, malformed overrides, the cost
 * of a turn with cache reads and writes, the --max-cost check, which
 * models take images, the boxes images are scaled to and what an image
 * costs in tokens by each rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/config.h"
#include "assay/models.h"
#include "assay/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_shipped_and_dated(void **state)
{
	(void)state;
	char *err = NULL;
	struct model_table *t = models_load(NULL, &err);
	assert_non_null(t);
	assert_true(models_count(t) >= 10);
	const struct model_info *m = models_find(t, "gpt-4.1-2025-04-14");
	assert_non_null(m);
	assert_string_equal(m->name, "gpt-4.1");
	/* the longest name wins: gpt-4.1-mini, not gpt-4.1 */
	m = models_find(t, "gpt-4.1-mini-2025-04-14");
	assert_string_equal(m->name, "gpt-4.1-mini");
	/* a prefix that is not followed by "-" is another model */
	assert_null(models_find(t, "gpt-4.10"));
	assert_null(models_find(t, "llama3"));
	m = models_find(t, "claude-sonnet-4-5-20250929");
	assert_string_equal(m->name, "claude-sonnet-4-5");
	assert_true(m->priced);
	assert_true(m->cache_write > m->input);
	assert_string_not_equal(models_prices_date(t), "unknown");
	models_free(t);
}

static void test_overrides(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_defaults(&c);
	cJSON *layer =
	    cJSON_Parse("{\"models\": {\"gpt-4.1\": {\"input\": 1.0},"
	                " \"local-llm\": {\"context\": 32768, \"input\": 0, "
	                "\"output\": 0}}}");
	assert_int_equal(config_apply_json(&c, layer, "test", &err), 0);
	struct model_table *t = models_load(&c, &err);
	assert_non_null(t);
	const struct model_info *m = models_find(t, "gpt-4.1");
	assert_true(fabs(m->input - 1.0) < 1e-9);
	assert_true(fabs(m->output - 8.0) < 1e-9); /* kept */
	m = models_find(t, "local-llm");
	assert_non_null(m);
	assert_true(m->priced);
	assert_int_equal(m->context, 32768);
	models_free(t);
	cJSON_Delete(layer);
	config_free(&c);
	/* a field of no use, or a price that is not a number */
	const char *bad[] = {"{\"models\": {\"x\": {\"inptu\": 1}}}",
	                     "{\"models\": {\"x\": {\"input\": \"cheap\"}}}",
	                     "{\"models\": {\"x\": 3}}"};
	for (int i = 0; i < 3; i++) {
		config_defaults(&c);
		layer = cJSON_Parse(bad[i]);
		assert_int_equal(config_apply_json(&c, layer, "test", &err), 0);
		assert_null(models_load(&c, &err));
		assert_non_null(strstr(err, "models.\"x\""));
		free(err);
		err = NULL;
		cJSON_Delete(layer);
		config_free(&c);
	}
}

/* Every shipped entry says when its prices were checked, or that they
 * were not; the newest models' prefixes do not fall to an older entry. */
static void test_shipped_dates(void **state)
{
	(void)state;
	char *err = NULL;
	struct model_table *t = models_load(NULL, &err);
	assert_non_null(t);
	for (size_t i = 0; i < models_count(t); i++) {
		const struct model_info *m = models_at(t, i);
		assert_int_equal(m->from, MODEL_PRICE_TABLE);
		assert_true(m->priced);
		assert_true(*m->date || m->unchecked);
		assert_false(*m->date && m->unchecked);
	}
	const struct model_info *m = models_find(t, "claude-opus-4-5-20251101");
	assert_string_equal(m->name, "claude-opus-4-5");
	assert_true(fabs(m->input - 5.0) < 1e-9); /* not Opus 4's $15 */
	assert_string_equal(m->date, "2026-12-07");
	m = models_find(t, "gpt-5.4-mini-2026-03-17");
	assert_string_equal(m->name, "gpt-5.4-mini");
	models_free(t);
}

/* The imported table sits below every configuration's "models": an
 * entry says where its prices come from and since when. */
static void test_price_origin(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_defaults(&c);
	c.models_imported = cJSON_Parse(
	    "{\"imp\": {\"input\": 1, \"output\": 2, \"imported\": "
	    "\"2026-11-30\"}, \"both\": {\"input\": 1, \"output\": 2, "
	    "\"imported\": \"2026-11-30\"}, \"gpt-4.1\": {\"input\": 9, "
	    "\"imported\": \"2026-11-30\"}}");
	cJSON *layer = cJSON_Parse("{\"models\": {\"both\": {\"output\": 3},"
	                           " \"gpt-4o\": {\"vision\": false}}}");
	assert_int_equal(config_apply_json(&c, layer, "test", &err), 0);
	struct model_table *t = models_load(&c, &err);
	assert_non_null(t);
	const struct model_info *m = models_find(t, "imp");
	assert_int_equal(m->from, MODEL_PRICE_IMPORT);
	assert_string_equal(m->date, "2026-11-30");
	m = models_find(t, "both"); /* the config's price over the import */
	assert_int_equal(m->from, MODEL_PRICE_CONFIG);
	assert_true(fabs(m->output - 3) < 1e-9 && fabs(m->input - 1) < 1e-9);
	m = models_find(t, "gpt-4.1"); /* an import over the shipped table */
	assert_int_equal(m->from, MODEL_PRICE_IMPORT);
	assert_true(fabs(m->input - 9) < 1e-9 && fabs(m->output - 8) < 1e-9);
	m = models_find(t, "gpt-4o"); /* no price given: still the table's */
	assert_int_equal(m->from, MODEL_PRICE_TABLE);
	assert_true(m->unchecked);
	models_free(t);
	cJSON_Delete(layer);
	config_free(&c);
}

/* A date that is not YYYY-MM-DD, a flag that is not a boolean, a number
 * that is not finite: errors naming the field. */
static void test_fields_malformed(void **state)
{
	(void)state;
	const char *bad[] = {
	    "{\"models\": {\"x\": {\"input\": 1, \"checked\": \"12/07/26\"}}}",
	    "{\"models\": {\"x\": {\"input\": 1, \"imported\": 20261207}}}",
	    "{\"models\": {\"x\": {\"input\": 1, \"unchecked\": \"yes\"}}}"};
	const char *field[] = {".checked", ".imported", ".unchecked"};
	for (int i = 0; i < 4; i++) {
		struct config c;
		char *err = NULL;
		config_defaults(&c);
		cJSON *layer =
		    i < 3 ? cJSON_Parse(bad[i]) : cJSON_CreateObject();
		if (i == 3) /* JSON cannot say it; cJSON reads 1e999 so */
			cJSON_AddNumberToObject(
			    cJSON_AddObjectToObject(
			        cJSON_AddObjectToObject(layer, "models"), "x"),
			    "output", INFINITY);
		assert_int_equal(config_apply_json(&c, layer, "test", &err), 0);
		assert_null(models_load(&c, &err));
		assert_non_null(
		    strstr(err, i < 3 ? field[i] : ".output must be"));
		free(err);
		cJSON_Delete(layer);
		config_free(&c);
	}
}

static void test_cost(void **state)
{
	(void)state;
	struct model_info m = {.input = 3.0,
	                       .cached_input = 0.3,
	                       .cache_write = 3.75,
	                       .output = 15.0,
	                       .priced = 1};
	/* 10000 in: 6000 read from the cache, 3000 written, 1000 plain */
	struct model_tokens k = {10000, 6000, 3000, 2000};
	double want =
	    (1000 * 3.0 + 6000 * 0.3 + 3000 * 3.75 + 2000 * 15.0) / 1e6;
	assert_true(fabs(models_cost(&m, &k) - want) < 1e-12);
	m.priced = 0;
	assert_true(models_cost(&m, &k) < 0);
	assert_true(models_cost(NULL, &k) < 0);
}

static void test_cost_budget_needs_price(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_defaults(&c);
	c.max_cost = 1;
	assert_int_equal(models_check_cost_budget(&c, &err), 0); /* gpt-4.1 */
	config_set(&c.model, "my-model");
	assert_int_equal(models_check_cost_budget(&c, &err), -1);
	assert_non_null(strstr(err, "\"my-model\" has none"));
	free(err);
	config_free(&c);
}

/* Which models take images: the table's word, else the provider's. */
static void test_vision(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_defaults(&c);
	cJSON *layer =
	    cJSON_Parse("{\"models\": {\"llava\": {\"vision\": true},"
	                " \"gpt-4o\": {\"vision\": false},"
	                " \"my-vl\": {\"image\": {\"rule\": \"patches\", "
	                "\"multiplier\": 1.5}},"
	                " \"blind-claude\": {\"provider\": \"anthropic\", "
	                "\"vision\": false}}}");
	assert_int_equal(config_apply_json(&c, layer, "test", &err), 0);
	struct model_table *t = models_load(NULL, &err);
	const struct model_info *m = models_find(t, "gpt-4.1-mini-2025-04-14");
	assert_int_equal(m->vision, 1);
	assert_int_equal(m->image.rule, MODEL_IMAGE_PATCHES);
	assert_true(fabs(m->image.multiplier - 1.62) < 1e-9);
	assert_int_equal(models_vision(m, "openrouter"), 1);
	m = models_find(t, "claude-haiku-4-5");
	assert_int_equal(models_vision(m, NULL), 1);
	assert_int_equal(m->image.rule, MODEL_IMAGE_ANTHROPIC);
	m = models_find(t, "gpt-4o");
	assert_int_equal(models_vision(m, "openai"), 1);
	assert_int_equal(m->image.base, 85);
	assert_int_equal(m->image.tile, 170);
	/* unknown models: anthropic's and openai's take images, the
	 * others' do not */
	assert_null(models_find(t, "llava"));
	assert_int_equal(models_vision(NULL, "anthropic"), 1);
	assert_int_equal(models_vision(NULL, "openai"), 1);
	assert_int_equal(models_vision(NULL, "openai-responses"), 1);
	assert_int_equal(models_vision(NULL, "ollama"), 0);
	assert_int_equal(models_vision(NULL, "vllm"), 0);
	assert_int_equal(models_vision(NULL, NULL), 0);
	models_free(t);
	/* the configuration says otherwise */
	t = models_load(&c, &err);
	assert_non_null(t);
	m = models_find(t, "llava");
	assert_int_equal(models_vision(m, "ollama"), 1);
	assert_int_equal(m->image.rule, MODEL_IMAGE_NONE);
	m = models_find(t, "gpt-4o-2024-08-06");
	assert_int_equal(models_vision(m, "openai"), 0);
	/* the rule given in the table stays when only vision is said */
	assert_int_equal(m->image.rule, MODEL_IMAGE_TILES);
	m = models_find(t, "my-vl");
	assert_int_equal(models_vision(m, "vllm"), 1); /* a rule says so */
	m = models_find(t, "blind-claude");
	assert_int_equal(models_vision(m, NULL), 0);
	models_free(t);
	cJSON_Delete(layer);
	config_free(&c);
}

/* Malformed vision and image overrides are refused, naming the field. */
static void test_vision_malformed(void **state)
{
	(void)state;
	const char *bad[][2] = {
	    {"{\"x\": {\"vision\": 1}}", "vision must be true"},
	    {"{\"x\": {\"image\": {\"rule\": \"pixels\"}}}",
	     "image must be an object"},
	    {"{\"x\": {\"image\": true}}", "image must be an object"},
	    {"{\"x\": {\"image\": {\"rule\": \"tiles\", \"base\": 85}}}",
	     "image.tile must be a number >= 0"},
	    {"{\"x\": {\"image\": {\"rule\": \"patches\", "
	     "\"multiplier\": 0}}}",
	     "image.multiplier must be a number > 0"},
	    {"{\"x\": {\"image\": {\"rule\": \"anthropic\", "
	     "\"base\": 85}}}",
	     "field \"base\" is not one of rule \"anthropic\""},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct config c;
		char *err = NULL;
		config_defaults(&c);
		char *json = xasprintf("{\"models\": %s}", bad[i][0]);
		cJSON *layer = cJSON_Parse(json);
		assert_non_null(layer);
		assert_int_equal(config_apply_json(&c, layer, "test", &err), 0);
		assert_null(models_load(&c, &err));
		if (!strstr(err, bad[i][1]) || !strstr(err, "models.\"x\""))
			fail_msg("%s: %s", bad[i][0], err);
		free(err);
		free(json);
		cJSON_Delete(layer);
		config_free(&c);
	}
}

static void test_image_boxes(void **state)
{
	(void)state;
	struct model_image_box b = models_image_box("anthropic", NULL);
	assert_int_equal(b.max, 1568);
	assert_int_equal(b.mpx, 1150000);
	assert_int_equal(b.shortside, 0);
	b = models_image_box("anthropic", "low"); /* no detail there */
	assert_int_equal(b.max, 1568);
	const char *auto_high[] = {NULL, "auto", "high"};
	for (int i = 0; i < 3; i++) {
		b = models_image_box("openai", auto_high[i]);
		assert_int_equal(b.max, 2048);
		assert_int_equal(b.mpx, 0);
		assert_int_equal(b.shortside, 768);
	}
	b = models_image_box("ollama", "low");
	assert_int_equal(b.max, 512);
	assert_int_equal(b.mpx, 0);
	assert_int_equal(b.shortside, 0);
	b = models_image_box(NULL, NULL);
	assert_int_equal(b.max, 2048);
}

/* Known sizes give known tokens, by each rule. */
static void test_image_tokens(void **state)
{
	(void)state;
	char *err = NULL;
	struct model_table *t = models_load(NULL, &err);
	const struct model_info *claude = models_find(t, "claude-sonnet-4-5");
	const struct model_info *g4o = models_find(t, "gpt-4o");
	const struct model_info *mini = models_find(t, "gpt-4o-mini");
	const struct model_info *m41 = models_find(t, "gpt-4.1-mini");
	const struct model_info *nano = models_find(t, "gpt-4.1-nano");
	const struct model_info *o4 = models_find(t, "o4-mini");
	/* anthropic: ceil(w*h/750); over the box, scaled first */
	assert_int_equal(
	    models_image_tokens(claude, "anthropic", 1000, 1000, NULL), 1334);
	assert_int_equal(models_image_tokens(NULL, "anthropic", 750, 1, NULL),
	                 1);
	/* 2000x1000 -> 1568x784 (1229312 px) -> 1516x758 (1.15 Mpx) */
	assert_int_equal(models_image_tokens(claude, NULL, 2000, 1000, NULL),
	                 (1516 * 758 + 749) / 750);
	/* tiles: 1024x1024 -> 768x768, 4 tiles */
	assert_int_equal(models_image_tokens(g4o, "openai", 1024, 1024, "high"),
	                 765);
	assert_int_equal(models_image_tokens(g4o, "openai", 1024, 1024, NULL),
	                 765);
	assert_int_equal(models_image_tokens(g4o, "openai", 1024, 1024, "low"),
	                 85);
	/* 2048x4096 -> 1024x2048 -> 768x1536, 6 tiles */
	assert_int_equal(models_image_tokens(g4o, "openai", 2048, 4096, "auto"),
	                 85 + 170 * 6);
	/* small: no scaling up, one tile */
	assert_int_equal(models_image_tokens(g4o, "openai", 100, 50, "high"),
	                 255);
	/* 2049x513 -> 2048x513 (512.75 rounds up): 4x2 tiles; 2050x513 ->
	 * 2048x512 (512.5 to even): 4x1 */
	assert_int_equal(models_image_tokens(g4o, "openai", 2049, 513, NULL),
	                 85 + 170 * 8);
	assert_int_equal(models_image_tokens(g4o, "openai", 2050, 513, NULL),
	                 85 + 170 * 4);
	assert_int_equal(models_image_tokens(mini, "openai", 1024, 1024, NULL),
	                 2833 + 5667 * 4);
	assert_int_equal(models_image_tokens(mini, "openai", 1024, 1024, "low"),
	                 2833);
	/* unknown models: the provider's default, tiles 85/170 */
	assert_int_equal(models_image_tokens(NULL, "ollama", 1024, 1024, NULL),
	                 765);
	assert_int_equal(models_image_tokens(NULL, NULL, 512, 512, "low"), 85);
	/* patches: 1024x1024 is 32x32 = 1024 patches; 1000 is 32 (31.25
	 * rounded up) a side */
	assert_int_equal(models_image_tokens(m41, "openai", 1024, 1024, NULL),
	                 1659); /* 1024 * 1.62 = 1658.88 */
	assert_int_equal(models_image_tokens(o4, "openai", 1000, 1000, NULL),
	                 1762); /* 1024 * 1.72 = 1761.28 */
	/* 100x50: 4x2 patches, 8 * 2.46 = 19.68 */
	assert_int_equal(models_image_tokens(nano, "openai", 100, 50, NULL),
	                 20);
	/* 1800x2400: 57x75 = 4275 patches, over 1536: scaled by
	 * sqrt(1536*32*32/(1800*2400)) = 0.6034 to 1086x1448 (33.94 x
	 * 45.25 patches), then by 33/33.94 to 1056x1408: 33x44 = 1452
	 * patches, * 1.62 = 2352.24 */
	assert_int_equal(models_image_tokens(m41, "openai", 1800, 2400, NULL),
	                 2353);
	/* 2048x768 is exactly 64x24 = 1536 patches: not scaled */
	assert_int_equal(models_image_tokens(m41, "openai", 2048, 768, NULL),
	                 2489); /* 1536 * 1.62 = 2488.32 */
	/* never over the cap, however long the image */
	assert_true(models_image_tokens(m41, "openai", 100000, 10, NULL) <=
	            2489);
	assert_int_equal(models_image_tokens(g4o, "openai", 0, 10, NULL), 0);
	models_free(t);
}

int main(void)
{
	unsetenv("ASSAY_DATA_DIR");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shipped_and_dated),
	    cmocka_unit_test(test_overrides),
	    cmocka_unit_test(test_shipped_dates),
	    cmocka_unit_test(test_price_origin),
	    cmocka_unit_test(test_fields_malformed),
	    cmocka_unit_test(test_cost),
	    cmocka_unit_test(test_cost_budget_needs_price),
	    cmocka_unit_test(test_vision),
	    cmocka_unit_test(test_vision_malformed),
	    cmocka_unit_test(test_image_boxes),
	    cmocka_unit_test(test_image_tokens),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
