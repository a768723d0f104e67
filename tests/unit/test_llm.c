/* test_llm.c: the provider interface: choosing providers, the scripted
 * model streaming through the loop, and the canonical request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "assay/buf.h"
#include "assay/config.h"
#include "assay/llm.h"
#include "llm/llm_internal.h"
#include "assay/loop.h"
#include "assay/util.h"

struct obs {
	struct loop *loop;
	struct llm *m;
	struct buf text;
	int deltas;
	struct llm_result *res;
	int cancel_at_delta;
	int free_at_delta;
};

static void on_text(void *arg, const char *t, size_t n)
{
	struct obs *o = arg;

	buf_append(&o->text, t, n);
	o->deltas++;
	if (o->cancel_at_delta && o->deltas == o->cancel_at_delta)
		llm_cancel(o->m);
	if (o->free_at_delta && o->deltas == o->free_at_delta) {
		llm_free(o->m);
		o->m = NULL;
	}
}

static void on_done(void *arg, struct llm_result *r)
{
	struct obs *o = arg;

	o->res = r;
}

static char *write_tmp(const char *text)
{
	char *path = xstrdup("/tmp/assay-test-llm-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static const char script[] =
    "{\"turns\": [\n"
    "  // comments are allowed\n"
    "  {\"text\": \"Let me look at the data first.\",\n"
    "   \"tool_calls\": [{\"name\": \"shell\", \"arguments\": "
    "{\"command\": \"ls\"}},\n"
    "                  {\"name\": \"list_files\"}]},\n"
    "  {\"text\": \"Done.\", \"tool_calls\": []}\n"
    "]}\n";

static struct llm *new_script(struct config *cfg, struct loop *l, struct obs *o,
                              const char *text, char **err)
{
	struct llm_observer obs = {on_text, NULL, on_done, o};

	config_defaults(cfg);
	config_set(&cfg->provider, "script");
	char *path = write_tmp(text);
	config_set(&cfg->script, path);
	struct llm *m = llm_new(cfg, l, NULL, &obs, err);
	unlink(path);
	free(path);
	return m;
}

static cJSON *messages(int assistants)
{
	cJSON *a = cJSON_CreateArray();
	cJSON *u = cJSON_CreateObject();

	cJSON_AddStringToObject(u, "role", "user");
	cJSON_AddStringToObject(u, "content", "go");
	cJSON_AddItemToArray(a, u);
	for (int i = 0; i < assistants; i++) {
		cJSON *m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "role", "assistant");
		cJSON_AddStringToObject(m, "content", "x");
		cJSON_AddItemToArray(a, m);
	}
	return a;
}

static void run_turn(struct obs *o, int assistants)
{
	cJSON *msgs = messages(assistants);
	struct llm_request req = {.messages = msgs};
	char *err = NULL;

	assert_int_equal(llm_start(o->m, &req, &err), 0);
	/* Nothing is delivered synchronously. */
	assert_int_equal(o->deltas, 0);
	assert_null(o->res);
	/* Run until the answer (or, once cancelled, for a while), then a
	 * little more to see that nothing else comes. */
	int64_t end = now_ms() + 5000;
	while (!o->res && now_ms() < end &&
	       !(o->cancel_at_delta && o->deltas >= o->cancel_at_delta) &&
	       !(o->free_at_delta && o->deltas >= o->free_at_delta))
		loop_once(o->loop, 10);
	for (int i = 0; i < 5; i++)
		loop_once(o->loop, 1);
	cJSON_Delete(msgs);
}

static void test_script_turns(void **state)
{
	struct config cfg;
	struct obs o = {0};
	char *err = NULL;

	o.loop = loop_new();
	buf_init(&o.text, 0);
	o.m = new_script(&cfg, o.loop, &o, script, &err);
	assert_non_null(o.m);

	run_turn(&o, 0);
	assert_non_null(o.res);
	assert_int_equal(o.res->ok, 1);
	assert_string_equal(o.res->text, "Let me look at the data first.");
	assert_string_equal(buf_str(&o.text), o.res->text);
	assert_true(o.deltas >= 3); /* streamed in pieces */
	char *calls = cJSON_PrintUnformatted(o.res->tool_calls);
	assert_string_equal(calls,
	                    "[{\"id\":\"call_0_0\",\"name\":\"shell\","
	                    "\"arguments\":{\"command\":\"ls\"}},"
	                    "{\"id\":\"call_0_1\",\"name\":\"list_files\","
	                    "\"arguments\":{}}]");
	free(calls);
	assert_string_equal(o.res->finish_reason, "tool_calls");
	/* it costs nothing: no tokens, and that is known (priced at $0) */
	assert_int_equal(o.res->usage.known, 1);
	assert_int_equal(o.res->usage.input_tokens, 0);
	assert_int_equal(o.res->usage.output_tokens, 0);
	assert_int_equal(llm_provider_free("script"), 1);
	assert_int_equal(llm_provider_free("openai"), 0);
	assert_int_equal(llm_provider_free("ollama"), 0);
	assert_int_equal(llm_provider_free(NULL), 0);
	llm_result_free(o.res);
	o.res = NULL;

	/* The turn follows the request, not a counter: ask turn 2 again,
	 * then twice past the end. */
	for (int k = 0; k < 2; k++) {
		o.deltas = 0;
		buf_reset(&o.text);
		run_turn(&o, 1);
		assert_string_equal(o.res->text, "Done.");
		assert_int_equal(cJSON_GetArraySize(o.res->tool_calls), 0);
		assert_string_equal(o.res->finish_reason, "stop");
		llm_result_free(o.res);
		o.res = NULL;
	}
	o.deltas = 0;
	run_turn(&o, 5);
	assert_int_equal(o.res->ok, 1);
	assert_string_equal(o.res->text, "");
	assert_int_equal(cJSON_GetArraySize(o.res->tool_calls), 0);
	llm_result_free(o.res);

	llm_free(o.m);
	loop_free(o.loop);
	buf_free(&o.text);
	config_free(&cfg);
}

static void test_script_cancel_inside_text(void **state)
{
	struct config cfg;
	struct obs o = {0};
	char *err = NULL;

	o.loop = loop_new();
	buf_init(&o.text, 0);
	o.m = new_script(&cfg, o.loop, &o, script, &err);
	o.cancel_at_delta = 2;
	run_turn(&o, 0);
	assert_int_equal(o.deltas, 2);
	assert_null(o.res);
	/* Usable again after a cancel. */
	o.cancel_at_delta = 0;
	o.deltas = 0;
	run_turn(&o, 1);
	assert_non_null(o.res);
	assert_string_equal(o.res->text, "Done.");
	llm_result_free(o.res);
	o.res = NULL;
	llm_free(o.m);
	config_free(&cfg);

	/* Freed from inside on_text. */
	o.deltas = 0;
	o.free_at_delta = 1;
	o.m = new_script(&cfg, o.loop, &o, script, &err);
	run_turn(&o, 0);
	assert_null(o.m);
	assert_int_equal(o.deltas, 1);
	assert_null(o.res);
	loop_free(o.loop);
	buf_free(&o.text);
	config_free(&cfg);
}

static void expect_script_error(const char *text, const char *want)
{
	struct config cfg;
	struct obs o = {0};
	char *err = NULL;
	struct loop *l = loop_new();

	assert_null(new_script(&cfg, l, &o, text, &err));
	assert_non_null(err);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
	free(err);
	loop_free(l);
	config_free(&cfg);
}

static void test_script_errors(void **state)
{
	expect_script_error("{\"turns\": [", "invalid JSON");
	expect_script_error("{\"steps\": []}", "expected {\"turns\"");
	expect_script_error("{\"turns\": [{\"tool\": 1}]}",
	                    "turn 1 has neither");
	expect_script_error("{\"turns\": [{\"text\": \"a\"}, {\"tool_calls\": "
	                    "[{\"name\": \"x\", \"arguments\": [1]}]}]}",
	                    "turn 2, tool call 1: \"arguments\" must be an "
	                    "object");
	expect_script_error("{\"turns\": [{\"tool_calls\": [{\"arguments\": "
	                    "{}}]}]}",
	                    "\"name\" must be");

	struct config cfg;
	struct llm_observer obs = {0};
	char *err = NULL;
	config_defaults(&cfg);
	config_set(&cfg.provider, "script");
	config_set(&cfg.script, "/nonexistent/script.json");
	assert_null(llm_new(&cfg, NULL, NULL, &obs, &err));
	assert_non_null(strstr(err, "/nonexistent/script.json"));
	free(err);
	err = NULL;
	config_set(&cfg.script, NULL);
	assert_null(llm_new(&cfg, NULL, NULL, &obs, &err));
	assert_non_null(strstr(err, "--script"));
	free(err);
	config_free(&cfg);
}

static void test_providers(void **state)
{
	struct config cfg;
	struct llm_observer obs = {0};
	char *err = NULL;

	config_defaults(&cfg);
	/* Anthropic at its own URL without a key fails at once, naming
	 * its key variable */
	unsetenv("ANTHROPIC_API_KEY");
	unsetenv("ANTHROPIC_BASE_URL");
	config_set(&cfg.provider, "anthropic");
	assert_null(llm_new(&cfg, NULL, NULL, &obs, &err));
	assert_non_null(strstr(err, "ANTHROPIC_API_KEY"));
	assert_non_null(strstr(err, "https://api.anthropic.com"));
	free(err);
	err = NULL;
	config_set(&cfg.provider, "gpt");
	assert_null(llm_new(&cfg, NULL, NULL, &obs, &err));
	assert_non_null(strstr(err, "unknown provider 'gpt'"));
	free(err);
	err = NULL;

	/* The real OpenAI without a key fails at once, naming the key. */
	unsetenv("OPENAI_API_KEY");
	unsetenv("OPENAI_BASE_URL");
	config_set(&cfg.provider, "openai");
	config_set(&cfg.base_url, NULL);
	assert_null(llm_new(&cfg, NULL, NULL, &obs, &err));
	assert_non_null(strstr(err, "OPENAI_API_KEY"));
	free(err);
	err = NULL;

	/* A compatible server needs no key. */
	config_set(&cfg.base_url, "http://127.0.0.1:8080/v1/");
	struct llm *m = llm_new(&cfg, NULL, NULL, &obs, &err);
	assert_non_null(m);
	assert_string_equal(m->base_url, "http://127.0.0.1:8080/v1");
	llm_free(m);

	/* Ollama: its default address, a model is required. */
	config_set(&cfg.provider, "ollama");
	config_set(&cfg.base_url, NULL);
	config_set(&cfg.model, NULL);
	unsetenv("OLLAMA_HOST");
	assert_null(llm_new(&cfg, NULL, NULL, &obs, &err));
	assert_non_null(strstr(err, "--model"));
	free(err);
	err = NULL;
	config_set(&cfg.model, "qwen3");
	m = llm_new(&cfg, NULL, NULL, &obs, &err);
	assert_non_null(m);
	assert_string_equal(m->base_url, "http://127.0.0.1:11434/v1");
	assert_string_equal(m->model, "qwen3");
	llm_free(m);
	setenv("OLLAMA_HOST", "0.0.0.0:9999", 1);
	m = llm_new(&cfg, NULL, NULL, &obs, &err);
	assert_string_equal(m->base_url, "http://127.0.0.1:9999/v1");
	llm_free(m);
	unsetenv("OLLAMA_HOST");
	config_free(&cfg);
}

static void test_canonical_request(void **state)
{
	struct config cfg;
	struct obs o = {0};
	char *err = NULL;
	struct loop *l = loop_new();
	struct llm *m = new_script(&cfg, l, &o, script, &err);

	cJSON *a = cJSON_Parse("[{\"role\":\"user\",\"content\":\"hi\"},"
	                       "{\"role\":\"assistant\",\"content\":\"\","
	                       "\"tool_calls\":[{\"id\":\"c\",\"name\":\"s\","
	                       "\"arguments\":{\"b\":1,\"a\":2}}]}]");
	/* Same content, keys in another order. */
	cJSON *b = cJSON_Parse("[{\"content\":\"hi\",\"role\":\"user\"},"
	                       "{\"tool_calls\":[{\"arguments\":{\"a\":2,"
	                       "\"b\":1},\"name\":\"s\",\"id\":\"c\"}],"
	                       "\"role\":\"assistant\",\"content\":\"\"}]");
	cJSON *tools = cJSON_Parse("[{\"name\":\"s\",\"parameters\":{}}]");
	struct llm_request ra = {.model = "m1",
	                         .system = "sys",
	                         .messages = a,
	                         .tools = tools,
	                         .max_output_tokens = 100};
	struct llm_request rb = ra;
	rb.messages = b;
	char *ca = llm_canonical_request(m, &ra);
	char *cb = llm_canonical_request(m, &rb);
	assert_string_equal(ca, cb);
	assert_non_null(strstr(ca, "\"provider\":\"script\""));
	assert_non_null(strstr(ca, "\"model\":\"m1\""));
	assert_non_null(strstr(ca, "\"max_output_tokens\":100"));
	assert_null(strchr(ca, '\n'));
	/* Any change shows. */
	rb.max_output_tokens = 101;
	char *cc = llm_canonical_request(m, &rb);
	assert_string_not_equal(ca, cc);
	free(ca);
	free(cb);
	free(cc);
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(tools);
	llm_free(m);
	loop_free(l);
	config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_script_turns),
	    cmocka_unit_test(test_script_cancel_inside_text),
	    cmocka_unit_test(test_script_errors),
	    cmocka_unit_test(test_providers),
	    cmocka_unit_test(test_canonical_request),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
