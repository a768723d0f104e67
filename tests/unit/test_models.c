/* test_models.c: the model table (src/agent/models.c): the shipped
 * entries, lookups of dated versions, overrides from the configuration,
 * malformed overrides, the cost of a turn with cache reads and writes,
 * and the --max-cost check. */
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

int main(void)
{
	unsetenv("ASSAY_DATA_DIR");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shipped_and_dated),
	    cmocka_unit_test(test_overrides),
	    cmocka_unit_test(test_cost),
	    cmocka_unit_test(test_cost_budget_needs_price),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
