/* test_mcp_http_spec.c: an HTTP MCP server's spec checked before
 * anything is sent (src/mcp/http_spec.c): the URL, the headers (no line
 * breaks or other unprintable bytes, nothing the transport sets) and the
 * bearer token, whose value never shows in a message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "assay/strv.h"
#include "mcp/http_internal.h"

/* The spec's JSON checked: 0 with *url and headers joined by '|', or
 * -1 with the message in *err. */
static int spec(const char *json, char **url, char **hdrs, char **err)
{
	cJSON *j = cJSON_Parse(json);
	struct strv h = {0};
	size_t len = 1;

	assert_non_null(j);
	*url = *hdrs = *err = NULL;
	int rc = mcp_http_spec("srv", j, url, &h, err);
	for (size_t i = 0; i < h.n; i++)
		len += strlen(h.v[i]) + 1;
	*hdrs = calloc(1, len);
	for (size_t i = 0; i < h.n; i++) {
		if (i)
			strcat(*hdrs, "|");
		strcat(*hdrs, h.v[i]);
	}
	strv_free(&h);
	cJSON_Delete(j);
	return rc;
}

/* The spec is refused with a message holding want. */
static void refused(const char *json, const char *want)
{
	char *url, *hdrs, *err;

	assert_int_equal(spec(json, &url, &hdrs, &err), -1);
	assert_non_null(err);
	if (!strstr(err, want))
		fail_msg("'%s' does not say '%s'", err, want);
	assert_non_null(strstr(err, "MCP server srv"));
	free(url);
	free(hdrs);
	free(err);
}

/* The spec is taken: its URL and header lines. */
static void taken(const char *json, const char *want_url, const char *want_hdrs)
{
	char *url, *hdrs, *err;

	assert_int_equal(spec(json, &url, &hdrs, &err), 0);
	assert_null(err);
	assert_string_equal(url, want_url);
	assert_string_equal(hdrs, want_hdrs);
	free(url);
	free(hdrs);
}

static void test_url(void **state)
{
	taken("{\"url\":\"http://127.0.0.1:8080/mcp\"}",
	      "http://127.0.0.1:8080/mcp", "");
	taken("{\"url\":\"HTTPS://example.com\"}", "HTTPS://example.com", "");
	refused("{}", "no \"url\" string");
	refused("{\"url\":5}", "no \"url\" string");
	refused("{\"url\":\"ftp://example.com/\"}", "http:// or https://");
	refused("{\"url\":\"file:///etc/passwd\"}", "http:// or https://");
	refused("{\"url\":\"example.com/mcp\"}", "http:// or https://");
	refused("{\"url\":\"http://\"}", "no host");
	refused("{\"url\":\"http:///mcp\"}", "no host");
	refused("{\"url\":\"http://a b/mcp\"}", "a space");
	refused("{\"url\":\"http://a/\\r\\nX: y\"}", "a line break");
}

static void test_headers(void **state)
{
	taken("{\"url\":\"http://h\",\"headers\":{\"X-A\":\"1\",\"X-B\":"
	      "\"two words\",\"X-Empty\":\"\"}}",
	      "http://h", "X-A: 1|X-B: two words|X-Empty: ");
	taken("{\"url\":\"http://h\",\"headers\":null}", "http://h", "");
	taken("{\"url\":\"http://h\",\"headers\":{}}", "http://h", "");
	refused("{\"url\":\"http://h\",\"headers\":[\"X-A: 1\"]}",
	        "must be an object");
	refused("{\"url\":\"http://h\",\"headers\":\"X-A: 1\"}",
	        "must be an object");
	refused("{\"url\":\"http://h\",\"headers\":{\"X-A\":1}}",
	        "header X-A: the value must be a string");
	/* Header injection through a value, or any control byte. */
	refused("{\"url\":\"http://h\",\"headers\":{\"X-A\":\"a\\r\\nX-B: "
	        "b\"}}",
	        "header X-A: the value has a line break");
	refused("{\"url\":\"http://h\",\"headers\":{\"X-A\":\"a\\nb\"}}",
	        "line break");
	refused("{\"url\":\"http://h\",\"headers\":{\"X-A\":\"a\\tb\"}}",
	        "not printable ASCII");
	refused("{\"url\":\"http://h\",\"headers\":{\"X-A\":\"caf\xc3\xa9\"}}",
	        "not printable ASCII");
	/* Names: visible ASCII, no ':'. */
	refused("{\"url\":\"http://h\",\"headers\":{\"X A\":\"1\"}}",
	        "a name in \"headers\"");
	refused("{\"url\":\"http://h\",\"headers\":{\"X:A\":\"1\"}}",
	        "a name in \"headers\"");
	refused("{\"url\":\"http://h\",\"headers\":{\"\":\"1\"}}",
	        "a name in \"headers\"");
	refused("{\"url\":\"http://h\",\"headers\":{\"X\\r\\nA\":\"1\"}}",
	        "a name in \"headers\"");
	/* What the transport sets itself, in any case. */
	refused("{\"url\":\"http://h\",\"headers\":{\"accept\":\"*/*\"}}",
	        "header accept is assay's to set");
	refused("{\"url\":\"http://h\",\"headers\":{\"MCP-SESSION-ID\":\"x\"}}",
	        "is assay's to set");
	refused("{\"url\":\"http://h\",\"headers\":{\"Mcp-Protocol-Version\":"
	        "\"x\"}}",
	        "is assay's to set");
	refused("{\"url\":\"http://h\",\"headers\":{\"last-event-id\":\"x\"}}",
	        "is assay's to set");
}

static void test_bearer(void **state)
{
	setenv("MCP_SPEC_TOKEN", "s3cret-t0ken", 1);
	taken("{\"url\":\"http://h\",\"bearer_token_env\":\"MCP_SPEC_TOKEN\","
	      "\"headers\":{\"X-A\":\"1\"}}",
	      "http://h", "X-A: 1|Authorization: Bearer s3cret-t0ken");
	taken("{\"url\":\"http://h\",\"bearer_token_env\":null}", "http://h",
	      "");
	/* An Authorization header alone is fine; both is ambiguous. */
	taken("{\"url\":\"http://h\",\"headers\":{\"Authorization\":\"Basic "
	      "eDp5\"}}",
	      "http://h", "Authorization: Basic eDp5");
	refused("{\"url\":\"http://h\",\"bearer_token_env\":\"MCP_SPEC_TOKEN\","
	        "\"headers\":{\"authorization\":\"x\"}}",
	        "keep one");
	/* Unset or empty: an error naming the variable. */
	unsetenv("MCP_SPEC_UNSET");
	refused(
	    "{\"url\":\"http://h\",\"bearer_token_env\":\"MCP_SPEC_UNSET\"}",
	    "bearer_token_env names MCP_SPEC_UNSET, which is not set");
	setenv("MCP_SPEC_EMPTY", "", 1);
	refused(
	    "{\"url\":\"http://h\",\"bearer_token_env\":\"MCP_SPEC_EMPTY\"}",
	    "MCP_SPEC_EMPTY, which is not set");
	refused("{\"url\":\"http://h\",\"bearer_token_env\":\"\"}",
	        "must name an environment variable");
	refused("{\"url\":\"http://h\",\"bearer_token_env\":7}",
	        "must name an environment variable");
	/* A token that would break the header: refused, never shown. */
	setenv("MCP_SPEC_BAD", "abc\r\nX-Evil: 1", 1);
	char *url, *hdrs, *err;
	assert_int_equal(
	    spec("{\"url\":\"http://h\",\"bearer_token_env\":\"MCP_SPEC_BAD\"}",
	         &url, &hdrs, &err),
	    -1);
	assert_non_null(strstr(err, "the token in $MCP_SPEC_BAD"));
	assert_null(strstr(err, "abc"));
	assert_null(strstr(err, "Evil"));
	free(url);
	free(hdrs);
	free(err);
	setenv("MCP_SPEC_BAD", "two words", 1);
	refused("{\"url\":\"http://h\",\"bearer_token_env\":\"MCP_SPEC_BAD\"}",
	        "has a space");
}

static void test_ascii_ok(void **state)
{
	assert_true(mcp_http_ascii_ok("a b", 3, 10, 0));
	assert_false(mcp_http_ascii_ok("a b", 3, 10, 1));
	assert_true(mcp_http_ascii_ok("!~", 2, 2, 1));
	assert_false(mcp_http_ascii_ok("abc", 3, 2, 1)); /* over max */
	assert_false(mcp_http_ascii_ok("", 0, 10, 0));   /* empty */
	assert_false(mcp_http_ascii_ok("a\x7f", 2, 10, 0));
	assert_false(mcp_http_ascii_ok("a\x80", 2, 10, 0));
	assert_false(mcp_http_ascii_ok("a\0b", 3, 10, 0));
	assert_false(mcp_http_ascii_ok("a\rb", 3, 10, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_url),
	    cmocka_unit_test(test_headers),
	    cmocka_unit_test(test_bearer),
	    cmocka_unit_test(test_ascii_ok),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
