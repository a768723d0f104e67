/* test_config_keys.c: the table of configuration keys (core/config_keys.c)
 * is whole (every row can be applied, stored, documented and judged by
 * the trust rule) and what is printed from it names every key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/config.h"
#include "assay/util.h"
#include "core/config_keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The size of what a row stores, 0 for rows that store nothing. */
static size_t stored_size(const struct config_key *k)
{
	switch (k->type) {
	case CONFIG_T_STRING:
	case CONFIG_T_FILE:
		return sizeof(char *);
	case CONFIG_T_BOOL:
	case CONFIG_T_INT:
	case CONFIG_T_ENUM:
		return sizeof(int);
	case CONFIG_T_LONG:
		return sizeof(long);
	case CONFIG_T_SIZE:
		return sizeof(size_t);
	case CONFIG_T_REAL:
	case CONFIG_T_SHARE:
		return sizeof(double);
	default:
		return 0;
	}
}

/* Rows are whole: unique names, members under an object row, storage
 * inside struct config and no two rows on one field, a doc line, a why
 * where the trust rule words a refusal with it, an apply for CUSTOM. */
static void test_rows_whole(void **state)
{
	(void)state;
	const struct config_key *keys = config_keys();
	for (const struct config_key *k = keys; k->name; k++) {
		assert_non_null(k->doc);
		assert_true(*k->doc);
		assert_true(k->by & CONFIG_BY_USER);
		for (const struct config_key *o = keys; o < k; o++) {
			assert_string_not_equal(o->name, k->name);
			if (stored_size(k) && stored_size(o))
				assert_true(o->off != k->off);
		}
		assert_true(k->off + stored_size(k) <= sizeof(struct config));
		const char *dot = strchr(k->name, '.');
		if (dot && k->type != CONFIG_T_IGNORED) {
			char *parent =
			    xstrndup(k->name, (size_t)(dot - k->name));
			const struct config_key *p =
			    config_key_find(NULL, parent);
			assert_non_null(p);
			assert_true(p->type == CONFIG_T_OBJECT ||
			            p->type == CONFIG_T_NUMBERS);
			assert_ptr_equal(config_key_find(parent, dot + 1), k);
			assert_int_equal(k->by, p->by);
			free(parent);
		} else {
			assert_ptr_equal(config_key_find(NULL, k->name), k);
		}
		if (k->type == CONFIG_T_CUSTOM)
			assert_non_null(k->apply);
		if (k->type == CONFIG_T_ENUM)
			assert_non_null(k->values);
		if (k->max > 0)
			assert_true(k->min <= k->max);
		switch (k->loose) {
		case CONFIG_LOOSE_TRUE:
		case CONFIG_LOOSE_ALWAYS:
		case CONFIG_LOOSE_PATH:
		case CONFIG_LOOSE_PATH_IF_FILE:
		case CONFIG_LOOSE_INPUTS:
		case CONFIG_LOOSE_ALLOW:
		case CONFIG_LOOSE_KINDS:
			assert_non_null(k->why);
			break;
		case CONFIG_LOOSE_ABOVE:
		case CONFIG_LOOSE_BUDGET:
			assert_true(stored_size(k) > 0);
			break;
		default:
			break;
		}
	}
}

/* The defaults the table gives are the ones assay always had. */
static void test_defaults_from_rows(void **state)
{
	(void)state;
	struct config c;
	config_defaults(&c);
	assert_string_equal(c.provider, "openai");
	assert_null(c.model);
	assert_string_equal(c.sandbox, "local");
	assert_string_equal(c.ask, "risky");
	assert_string_equal(c.out_dir, "outputs");
	assert_string_equal(c.theme, "auto");
	assert_string_equal(c.images, "auto");
	assert_string_equal(c.image, "assay-sandbox:latest");
	assert_int_equal(c.timeout_s, 120);
	assert_int_equal(c.max_turns, 50);
	assert_int_equal(c.max_output_bytes, 16384);
	assert_int_equal(c.max_output_tokens, 8192);
	assert_true(c.context.trim_at == 0.70);
	assert_true(c.context.compact_at == 0.85);
	assert_int_equal(c.context.keep_turns, 4);
	assert_int_equal(c.mem_mb, 4096);
	assert_int_equal(c.nproc, 256);
	assert_int_equal(c.cpu_s, 600);
	assert_int_equal(c.fsize_mb, 2048);
	assert_int_equal(c.cpus, 0);
	assert_int_equal(c.network, 0);
	assert_int_equal(c.step, 0);
	assert_int_equal(c.responses_store, 0);
	assert_null(c.never_save);
	config_free(&c);
}

/* Who may set what: the keys that decide where an API key goes are the
 * user's alone; everything else a project or suite may set (subject to
 * the trust rule). */
static void test_settable(void **state)
{
	(void)state;
	const char *const user_only[] = {"base_url", "api_key_env",
	                                 "opensandbox"};
	for (int i = 0; i < 3; i++) {
		assert_false(
		    config_key_settable(user_only[i], CONFIG_BY_PROJECT));
		assert_false(
		    config_key_settable(user_only[i], CONFIG_BY_SUITE));
		assert_true(config_key_settable(user_only[i], CONFIG_BY_USER));
	}
	assert_true(config_key_settable("network", CONFIG_BY_PROJECT));
	assert_true(config_key_settable("network", CONFIG_BY_SUITE));
	/* unknown keys pass here and fail when applied */
	assert_true(config_key_settable("nosuch", CONFIG_BY_PROJECT));
	assert_null(config_key_find(NULL, "limits.memory_mb"));
	assert_null(config_key_find("limits", "nosuch"));
}

/* An unknown member's error lists the members the table has, in order. */
static void test_unknown_member_lists_rows(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_defaults(&c);
	cJSON *j = cJSON_Parse("{\"limits\": {\"nosuch\": 2}}");
	assert_int_equal(config_apply_json(&c, j, "t.json", &err), -1);
	assert_string_equal(err, "t.json: unknown key \"limits.nosuch\" "
	                         "(known: memory_mb, processes, cpu_s, "
	                         "file_size_mb, cpus, sessions)");
	free(err);
	cJSON_Delete(j);
	config_free(&c);
}

/* The help and the doc's table name every key once, with its default. */
static void test_printed_tables(void **state)
{
	(void)state;
	char *text = NULL, *md = NULL;
	size_t n = 0, m = 0;
	FILE *f = open_memstream(&text, &n);
	config_keys_write(f, 0);
	fclose(f);
	f = open_memstream(&md, &m);
	config_keys_write(f, 1);
	fclose(f);
	for (const struct config_key *k = config_keys(); k->name; k++) {
		if (k->type == CONFIG_T_IGNORED)
			continue;
		char *line = xasprintf("\n  %-26s  ", k->name);
		assert_non_null(strstr(text, line));
		free(line);
		line = xasprintf("\n| `%s` |", k->name);
		char *at = strstr(md, line);
		assert_non_null(at);
		assert_null(strstr(at + 1, line));
		free(line);
		if (k->flag)
			assert_non_null(strstr(text, k->flag));
	}
	assert_non_null(strstr(md, "| `timeout` | integer >= 1 | `120` |"));
	assert_non_null(strstr(md, "| `base_url` | string |  | user, "
	                           "`--base-url` | user only"));
	free(text);
	free(md);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows_whole),
	    cmocka_unit_test(test_defaults_from_rows),
	    cmocka_unit_test(test_settable),
	    cmocka_unit_test(test_unknown_member_lists_rows),
	    cmocka_unit_test(test_printed_tables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
