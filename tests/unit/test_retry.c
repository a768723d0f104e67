/* test_retry.c: the shared retry policy: which failures are retried,
 * how long to wait, and what the final message says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "llm/llm_internal.h"

static void test_classify_status(void **state)
{
	long yes[] = {0, 408, 409, 429, 500, 502, 503, 504, 529};
	long no[] = {400, 401, 403, 404, 413, 422};

	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		assert_int_equal(llm_retry_should(yes[i], NULL, NULL), 1);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		assert_int_equal(llm_retry_should(no[i], NULL, NULL), 0);
}

static void test_classify_body(void **state)
{
	const char *quota = "{\"error\":{\"message\":\"You exceeded your "
	                    "current quota\",\"type\":\"insufficient_quota\","
	                    "\"param\":null,\"code\":\"insufficient_quota\"}}";
	const char *rate = "{\"error\":{\"message\":\"Rate limit reached\","
	                   "\"type\":\"requests\",\"code\":"
	                   "\"rate_limit_exceeded\"}}";
	const char *flat400 = "{\"object\":\"error\",\"message\":\"bad\","
	                      "\"type\":\"BadRequestError\",\"code\":400}";
	const char *flat500 = "{\"object\":\"error\",\"message\":\"oops\","
	                      "\"code\":500}";

	assert_int_equal(llm_retry_should(429, quota, NULL), 0);
	assert_int_equal(llm_retry_should(429, rate, NULL), 1);
	assert_int_equal(llm_retry_should(400, flat400, NULL), 0);
	/* Inside a 200 stream (status 0) the body still decides. */
	assert_int_equal(llm_retry_should(0, flat400, NULL), 0);
	assert_int_equal(llm_retry_should(0, quota, NULL), 0);
	assert_int_equal(llm_retry_should(500, flat500, NULL), 1);
	assert_int_equal(llm_retry_should(0, "not json", NULL), 1);
	assert_int_equal(llm_retry_should(503, "<html>busy</html>", NULL), 1);
}

static void test_should_retry_header(void **state)
{
	assert_int_equal(llm_retry_should(500, NULL, "false"), 0);
	assert_int_equal(llm_retry_should(429, NULL, "false"), 0);
	assert_int_equal(llm_retry_should(400, NULL, "true"), 1);
	assert_int_equal(llm_retry_should(500, NULL, "maybe"), 1);
}

static void test_backoff(void **state)
{
	/* No jitter: 0.5 s x 2^n, capped at 8 s. */
	assert_int_equal(llm_retry_delay(0, NULL, NULL, 0, 0), 500);
	assert_int_equal(llm_retry_delay(1, NULL, NULL, 0, 0), 1000);
	assert_int_equal(llm_retry_delay(2, NULL, NULL, 0, 0), 2000);
	assert_int_equal(llm_retry_delay(3, NULL, NULL, 0, 0), 4000);
	assert_int_equal(llm_retry_delay(4, NULL, NULL, 0, 0), 8000);
	assert_int_equal(llm_retry_delay(5, NULL, NULL, 0, 0), 8000);
	assert_int_equal(llm_retry_delay(60, NULL, NULL, 0, 0), 8000);
	/* Jitter takes off at most 25%. */
	assert_int_equal(llm_retry_delay(0, NULL, NULL, 0, 0.5), 437);
	assert_int_equal(llm_retry_delay(4, NULL, NULL, 0, 0.999999), 6000);
	for (int i = 0; i < 1000; i++) {
		double j = llm_retry_jitter();
		assert_true(j >= 0 && j < 1);
		long d = llm_retry_delay(2, NULL, NULL, 0, j);
		assert_true(d >= 1500 && d <= 2000);
	}
}

static void test_server_delay(void **state)
{
	/* retry-after-ms first, then retry-after. */
	assert_int_equal(llm_retry_delay(0, "250", "10", 0, 0), 250);
	assert_int_equal(llm_retry_delay(0, NULL, "3", 0, 0), 3000);
	assert_int_equal(llm_retry_delay(0, NULL, "1.5", 0, 0), 1500);
	assert_int_equal(llm_retry_delay(3, NULL, "0", 0, 0), 0);
	assert_int_equal(llm_retry_delay(0, "bogus", "2", 0, 0), 2000);
	assert_int_equal(llm_retry_delay(0, NULL, " 7 ", 0, 0), 7000);
	/* 120 s is the most a server may ask; beyond, back off as usual. */
	assert_int_equal(llm_retry_delay(0, NULL, "120", 0, 0), 120000);
	assert_int_equal(llm_retry_delay(0, NULL, "121", 0, 0), 500);
	assert_int_equal(llm_retry_delay(1, "500000", NULL, 0, 0), 1000);
	assert_int_equal(llm_retry_delay(0, NULL, "-1", 0, 0), 500);
	assert_int_equal(llm_retry_delay(0, NULL, "soon", 0, 0), 500);
}

static void test_http_date(void **state)
{
	int64_t t = llm_parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT");
	assert_int_equal(t, 784111777);
	assert_int_equal(llm_parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"),
	                 0);
	assert_int_equal(llm_parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT"),
	                 -1);
	assert_int_equal(llm_parse_http_date("yesterday"), -1);

	int64_t now = 784111777LL * 1000 - 30000; /* 30 s before */
	assert_int_equal(
	    llm_retry_delay(0, NULL, "Sun, 06 Nov 1994 08:49:37 GMT", now, 0),
	    30000);
	/* Too far ahead or in the past: backoff. */
	now = 784111777LL * 1000 - 600000;
	assert_int_equal(
	    llm_retry_delay(1, NULL, "Sun, 06 Nov 1994 08:49:37 GMT", now, 0),
	    1000);
	now = 784111777LL * 1000 + 5000;
	assert_int_equal(
	    llm_retry_delay(0, NULL, "Sun, 06 Nov 1994 08:49:37 GMT", now, 0),
	    500);
}

static void test_categories(void **state)
{
	assert_string_equal(llm_status_category(401), LLM_ERR_AUTH);
	assert_string_equal(llm_status_category(403), LLM_ERR_AUTH);
	assert_string_equal(llm_status_category(404), LLM_ERR_AUTH);
	assert_string_equal(llm_status_category(429), LLM_ERR_RATE);
	assert_string_equal(llm_status_category(500), LLM_ERR_SERVER);
	assert_string_equal(llm_status_category(400), LLM_ERR_SERVER);
}

static void test_messages(void **state)
{
	struct llm_http_fail f = {
	    .provider = "openai",
	    .status = 401,
	    .url = "http://127.0.0.1:9/v1/chat/completions",
	    .body = "{\"error\":{\"message\":\"Incorrect API key "
	            "provided\",\"type\":\"invalid_request_error\","
	            "\"code\":\"invalid_api_key\"}}",
	    .request_id = "req_123",
	    .key_env = "OPENAI_API_KEY",
	    .key_set = 1,
	    .model = "gpt-x",
	};
	char *m = llm_http_error_message(&f);
	assert_string_equal(m, "openai: 401 Unauthorized from "
	                       "http://127.0.0.1:9/v1/chat/completions: "
	                       "Incorrect API key provided (check "
	                       "OPENAI_API_KEY) [request id req_123]");
	free(m);

	f.status = 429;
	f.request_id = NULL;
	f.body = "{\"error\":{\"message\":\"You exceeded your current "
	         "quota\",\"type\":\"insufficient_quota\",\"code\":"
	         "\"insufficient_quota\"}}";
	m = llm_http_error_message(&f);
	assert_non_null(strstr(m, "insufficient_quota: add credit"));
	free(m);

	f.status = 404;
	f.body = "{\"error\":{\"message\":\"The model `gpt-x` does not "
	         "exist\",\"code\":\"model_not_found\"}}";
	m = llm_http_error_message(&f);
	assert_non_null(strstr(m, "404 Not Found"));
	assert_non_null(strstr(m, "model 'gpt-x' not found: check --model"));
	free(m);

	f.body = "404 page not found";
	m = llm_http_error_message(&f);
	assert_non_null(strstr(m, "404 page not found (check --base-url"));
	free(m);

	/* Flat vLLM bodies and control characters from outside. */
	f.status = 400;
	f.body = "{\"object\":\"error\",\"message\":\"bad\\u001b[31m\","
	         "\"code\":400}";
	m = llm_http_error_message(&f);
	assert_non_null(strstr(m, ": bad [31m ("));
	free(m);

	f.status = 401;
	f.key_set = 0;
	f.body = NULL;
	m = llm_http_error_message(&f);
	assert_non_null(strstr(m, "OPENAI_API_KEY is not set"));
	free(m);
}

/* A prompt over the context window, in each dialect the providers
 * speak (the bodies of tests/fakes/, as the servers send them), and
 * what is not one. */
static void test_context_exceeded(void **state)
{
	(void)state;
	static const char *const yes[] = {
	    /* OpenAI, the Responses API */
	    "{\"error\":{\"message\":\"This model's maximum context length "
	    "is 16000 tokens.\",\"type\":\"invalid_request_error\","
	    "\"param\":\"messages\",\"code\":\"context_length_exceeded\"}}",
	    /* vLLM, flat */
	    "{\"object\":\"error\",\"message\":\"This model's maximum "
	    "context length is 8192 tokens. However, your request has 9000 "
	    "input tokens.\",\"type\":\"BadRequestError\",\"code\":400}",
	    /* llama.cpp */
	    "{\"error\":{\"code\":400,\"message\":\"request (9000 tokens) "
	    "exceeds the available context size (8192 tokens)\",\"type\":"
	    "\"exceed_context_size_error\"}}",
	    /* Anthropic */
	    "{\"type\":\"error\",\"error\":{\"type\":"
	    "\"invalid_request_error\",\"message\":\"prompt is too long: "
	    "210000 tokens > 200000 maximum\"}}",
	};
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
		assert_true(llm_context_exceeded(400, yes[i]));
	assert_true(llm_context_exceeded(0, yes[0])); /* in a stream */
	/* a rate limit on tokens is not a full window */
	assert_false(llm_context_exceeded(
	    429, "{\"error\":{\"message\":\"Rate limit reached: too many "
	         "tokens per min\",\"code\":\"rate_limit_exceeded\"}}"));
	assert_false(llm_context_exceeded(
	    400, "{\"error\":{\"message\":\"Invalid 'messages[2].content'"
	         "\",\"code\":\"invalid_value\"}}"));
	assert_false(llm_context_exceeded(400, NULL));
	/* the message says the window is passed, and no longer says to
	 * start a new run (the session compacts) */
	struct llm_http_fail f = {.provider = "openai",
	                          .status = 400,
	                          .url = "u",
	                          .body = yes[0],
	                          .key_env = "OPENAI_API_KEY",
	                          .key_set = 1};
	char *m = llm_http_error_message(&f);
	assert_non_null(strstr(m, "longer than the model's context window"));
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_context_exceeded),
	    cmocka_unit_test(test_classify_status),
	    cmocka_unit_test(test_classify_body),
	    cmocka_unit_test(test_should_retry_header),
	    cmocka_unit_test(test_backoff),
	    cmocka_unit_test(test_server_delay),
	    cmocka_unit_test(test_http_date),
	    cmocka_unit_test(test_categories),
	    cmocka_unit_test(test_messages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
