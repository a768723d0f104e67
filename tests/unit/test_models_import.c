/* test_models_import.c: `assay models --import` (src/agent/models_import.c)
 * on LiteLLM-shaped files: where a price tier starts (and the fields
 * that only look like one), prices per token to per million, limits
 * that are not counts, a provider asked for, a file with nothing that
 * fits (nothing written), a number that is not finite anywhere, a
 * damaged imported table (left as it was). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/config.h"
#include "assay/json.h"
#include "assay/models.h"
#include "assay/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/assay-test-import-XXXXXX";
static char src[256], dest[256];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/assay-test-import-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(src, sizeof src, "%s/litellm.json", dir);
	snprintf(dest, sizeof dest, "%s/conf/assay/models.json", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rm_rf(dir);
	return 0;
}

static void write_src(const char *text)
{
	FILE *f = fopen(src, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The imported entry name (NULL when the import wrote none). */
static cJSON *entry_of(cJSON *d, const char *name)
{
	return cJSON_GetObjectItem(d, name);
}

/* The count of a skipped reason in the report. */
static long skipped(const cJSON *r, const char *reason)
{
	const cJSON *s;
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(r, "skipped"))
	{
		if (!strcmp(json_str(s, "reason", ""), reason))
			return json_long(s, "count", 0);
	}
	return 0;
}

#define CHAT "\"litellm_provider\": \"openai\", \"mode\": \"chat\", "

/* The least "<price>_above_N_tokens" field cuts the context; the
 * 1-hour cache's and the service tiers' fields are not tiers of size. */
static void test_tiers(void **state)
{
	(void)state;
	write_src(
	    "{\"a\": {" CHAT "\"input_cost_per_token\": 1e-06, "
	    "\"output_cost_per_token\": 2e-06, \"max_input_tokens\": "
	    "1000000, \"input_cost_per_token_above_272k_tokens\": 2e-06, "
	    "\"output_cost_per_token_above_199999_tokens\": 3e-06},"
	    " \"b\": {" CHAT "\"input_cost_per_token\": 1e-06, "
	    "\"output_cost_per_token\": 2e-06, \"max_input_tokens\": "
	    "400000, \"cache_creation_input_token_cost_above_1hr\": 1e-06,"
	    " \"cache_creation_input_token_cost_above_1hr_above_200k_"
	    "tokens\": 1e-06, \"input_cost_per_token_above_200k_tokens_"
	    "priority\": 1e-06},"
	    " \"c\": {" CHAT "\"input_cost_per_token\": 1e-06, "
	    "\"output_cost_per_token\": 2e-06, \"max_input_tokens\": "
	    "100000, \"input_cost_per_token_above_128k_tokens\": 2e-06},"
	    " \"d\": {" CHAT "\"input_cost_per_token\": 1e-06, "
	    "\"output_cost_per_token\": 2e-06, "
	    "\"input_cost_per_token_above_1m_tokens\": 2e-06}}");
	char *err = NULL;
	cJSON *r = models_import_litellm(src, dest, NULL, "2026-12-07", &err);
	assert_non_null(r);
	assert_int_equal(json_long(r, "new", 0), 4);
	/* a and d were cut; c is under its tier already */
	assert_int_equal(
	    json_long(cJSON_GetObjectItem(r, "capped"), "count", 0), 2);
	cJSON *d = json_parse_file(dest, 1 << 20, &err);
	assert_non_null(d);
	assert_int_equal(json_long(entry_of(d, "a"), "context", 0), 199999);
	assert_int_equal(json_long(entry_of(d, "b"), "context", 0), 400000);
	assert_int_equal(json_long(entry_of(d, "c"), "context", 0), 100000);
	assert_int_equal(json_long(entry_of(d, "d"), "context", 0), 1000000);
	cJSON_Delete(d);
	cJSON_Delete(r);
}

/* Per token to per million, to the nano-dollar; a limit that is not a
 * count is a skip; a provider asked for has no provider of ours. */
static void test_values(void **state)
{
	(void)state;
	write_src(
	    "{\"p\": {" CHAT "\"input_cost_per_token\": 2.5e-06, "
	    "\"output_cost_per_token\": 3.75e-08, "
	    "\"cache_read_input_token_cost\": 1.25e-07},"
	    " \"neg\": {" CHAT "\"input_cost_per_token\": 1e-06, "
	    "\"output_cost_per_token\": 2e-06, \"max_input_tokens\": -1},"
	    " \"big\": {" CHAT "\"input_cost_per_token\": 1e-06, "
	    "\"output_cost_per_token\": 2e-06, \"max_output_tokens\": 1e300},"
	    " \"nomode\": {\"litellm_provider\": \"anthropic\", "
	    "\"input_cost_per_token\": 1e-06, \"output_cost_per_token\": "
	    "2e-06},"
	    " \"deepseek/ds\": {\"litellm_provider\": \"deepseek\", "
	    "\"mode\": \"chat\", \"input_cost_per_token\": 1e-06, "
	    "\"output_cost_per_token\": 2e-06}}");
	const char *also[] = {"deepseek", NULL};
	char *err = NULL;
	cJSON *r = models_import_litellm(src, dest, also, "2026-12-07", &err);
	assert_non_null(r);
	assert_int_equal(json_long(r, "new", 0), 3);
	assert_int_equal(skipped(r, "value"), 2);
	cJSON *d = json_parse_file(dest, 1 << 20, &err);
	const cJSON *p = entry_of(d, "p");
	assert_true(json_num(p, "input", 0) == 2.5);
	assert_true(json_num(p, "output", 0) == 0.0375);
	assert_true(json_num(p, "cached_input", 0) == 0.125);
	assert_string_equal(json_str(p, "imported", ""), "2026-12-07");
	assert_non_null(entry_of(d, "nomode")); /* no mode: a chat model */
	assert_null(cJSON_GetObjectItem(entry_of(d, "ds"), "provider"));
	cJSON_Delete(d);
	cJSON_Delete(r);
}

/* Nothing that fits: a report, and no file made. */
static void test_nothing_fits(void **state)
{
	(void)state;
	write_src("{\"sample_spec\": {\"mode\": \"one of: chat\"}, "
	          "\"e\": {\"litellm_provider\": \"openai\", \"mode\": "
	          "\"embedding\", \"input_cost_per_token\": 1e-07}}");
	char *err = NULL;
	cJSON *r = models_import_litellm(src, dest, NULL, "2026-12-07", &err);
	assert_non_null(r);
	assert_int_equal(json_long(r, "new", 0), 0);
	assert_int_equal(skipped(r, "template") + skipped(r, "mode"), 2);
	assert_int_equal(access(dest, F_OK), -1);
	cJSON_Delete(r);
}

/* A number that is not finite, even in a field of no use here, or a
 * damaged imported table: an error, and nothing written. */
static void test_refused(void **state)
{
	(void)state;
	write_src("{\"e\": {\"litellm_provider\": \"openai\", \"mode\": "
	          "\"embedding\", \"x\": {\"y\": -1e999}}}");
	char *err = NULL;
	assert_null(models_import_litellm(src, dest, NULL, "2026-12-07", &err));
	assert_non_null(
	    strstr(err, "\"e\".y holds a number that is not finite"));
	free(err);
	err = NULL;
	assert_int_equal(mkdir_p(dir, NULL), 0);
	char *conf = xasprintf("%s/conf/assay", dir);
	assert_int_equal(mkdir_p(conf, NULL), 0);
	free(conf);
	FILE *f = fopen(dest, "w");
	fputs("[\"not\", \"a table\"]", f);
	fclose(f);
	write_src("{\"m\": {" CHAT "\"input_cost_per_token\": 1e-06, "
	          "\"output_cost_per_token\": 2e-06}}");
	assert_null(models_import_litellm(src, dest, NULL, "2026-12-07", &err));
	assert_non_null(strstr(err, "not a JSON object of models"));
	free(err);
	size_t len = 0;
	char *kept = read_file_max(dest, 1024, &len, NULL);
	assert_string_equal(kept, "[\"not\", \"a table\"]");
	free(kept);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_tiers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_values, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_nothing_fits, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
