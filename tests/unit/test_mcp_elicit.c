/* test_mcp_elicit.c: what an answer to an MCP server's question must be
 * (mcp_elicit_check), its defaults (mcp_elicit_defaults) and choices
 * (mcp_elicit_choices), on the spec's restricted schemas. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/mcp.h"

#include <stdlib.h>
#include <string.h>

static const char SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\",\"title\":\"Your name\",\"minLength\":2,"
    "\"maxLength\":5},"
    "\"mail\":{\"type\":\"string\",\"format\":\"email\"},"
    "\"day\":{\"type\":\"string\",\"format\":\"date\"},"
    "\"n\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10,\"default\":3},"
    "\"x\":{\"type\":\"number\"},"
    "\"ok\":{\"type\":\"boolean\"},"
    "\"color\":{\"type\":\"string\",\"oneOf\":[{\"const\":\"r\",\"title\":"
    "\"Red\"},{\"const\":\"g\",\"title\":\"Green\"}]},"
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"enum\":"
    "[\"a\",\"b\",\"c\"]},\"maxItems\":2}},"
    "\"required\":[\"name\",\"ok\"]}";

/* check(content): 0 or -1, and the reason must hold want. */
static void expect(const char *content, int rc, const char *want)
{
	cJSON *s = cJSON_Parse(SCHEMA), *c = cJSON_Parse(content);
	assert_non_null(s);
	assert_non_null(c);
	char *why = NULL;
	int got = mcp_elicit_check(s, c, &why);
	if (got != rc || (want && (!why || !strstr(why, want))))
		fail_msg("%s: rc %d (want %d), why %s (want %s)", content, got,
		         rc, why ? why : "-", want ? want : "-");
	free(why);
	cJSON_Delete(s);
	cJSON_Delete(c);
}

static void test_check(void **state)
{
	(void)state;
	expect("{\"name\":\"Al\",\"ok\":true}", 0, NULL);
	expect("{\"name\":\"Al\",\"ok\":true,\"n\":10,\"x\":-2.5,\"color\":"
	       "\"g\",\"tags\":[\"a\",\"c\"],\"mail\":\"a@b.io\",\"day\":"
	       "\"2026-12-07\"}",
	       0, NULL);
	expect("{\"ok\":true}", -1, "Your name: required");
	expect("{\"name\":\"Al\"}", -1, "ok: required");
	expect("{\"name\":\"A\",\"ok\":true}", -1, "at least 2 characters");
	expect("{\"name\":\"Alberto\",\"ok\":true}", -1, "at most 5");
	/* characters, not bytes: five accented letters fit */
	expect("{\"name\":\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\","
	       "\"ok\":true}",
	       0, NULL);
	expect("{\"name\":\"Al\",\"ok\":\"yes\"}", -1, "yes or no");
	expect("{\"name\":\"Al\",\"ok\":true,\"n\":0}", -1, "at least 1");
	expect("{\"name\":\"Al\",\"ok\":true,\"n\":2.5}", -1, "whole number");
	expect("{\"name\":\"Al\",\"ok\":true,\"n\":\"3\"}", -1, "a number");
	expect("{\"name\":\"Al\",\"ok\":true,\"color\":\"b\"}", -1,
	       "not one of the choices");
	expect("{\"name\":\"Al\",\"ok\":true,\"tags\":[\"a\",\"z\"]}", -1,
	       "not one of the choices");
	expect("{\"name\":\"Al\",\"ok\":true,\"tags\":[\"a\",\"b\",\"c\"]}", -1,
	       "at most 2");
	expect("{\"name\":\"Al\",\"ok\":true,\"mail\":\"nope\"}", -1,
	       "not a valid email");
	expect("{\"name\":\"Al\",\"ok\":true,\"day\":\"2026-13-01\"}", -1,
	       "not a valid date");
	expect("{\"name\":\"Al\",\"ok\":true,\"extra\":1}", -1,
	       "not a field it asked for");
	expect("[]", -1, "not an object");
	/* names are exact: "Name" is not "name" */
	expect("{\"Name\":\"Al\",\"name\":\"Al\",\"ok\":true}", -1,
	       "Name: not a field it asked for");
}

/* oneOf entries without const are not a list of choices. */
static void test_oneof_without_const(void **state)
{
	(void)state;
	cJSON *p = cJSON_Parse("{\"type\":\"string\",\"oneOf\":[{\"const\":"
	                       "\"a\"},{\"pattern\":\"x\"}]}");
	assert_null(mcp_elicit_choices(p));
	cJSON_Delete(p);
}

static void test_defaults_and_choices(void **state)
{
	(void)state;
	cJSON *s = cJSON_Parse(SCHEMA);
	cJSON *c = cJSON_Parse("{\"name\":\"Al\"}");
	cJSON *f = mcp_elicit_defaults(s, c);
	char *p = cJSON_PrintUnformatted(f);
	assert_string_equal(p, "{\"name\":\"Al\",\"n\":3}");
	free(p);
	const cJSON *props = cJSON_GetObjectItem(s, "properties");
	cJSON *ch = mcp_elicit_choices(cJSON_GetObjectItem(props, "color"));
	p = cJSON_PrintUnformatted(ch);
	assert_string_equal(p, "[\"r\",\"g\"]");
	free(p);
	cJSON_Delete(ch);
	ch = mcp_elicit_choices(cJSON_GetObjectItem(props, "tags"));
	p = cJSON_PrintUnformatted(ch);
	assert_string_equal(p, "[\"a\",\"b\",\"c\"]");
	free(p);
	cJSON_Delete(ch);
	assert_null(mcp_elicit_choices(cJSON_GetObjectItem(props, "name")));
	cJSON_Delete(f);
	cJSON_Delete(c);
	cJSON_Delete(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_check),
	    cmocka_unit_test(test_defaults_and_choices),
	    cmocka_unit_test(test_oneof_without_const),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
