/* test_config.c: configuration layering, JSON with comments, the
 * assay.json manifest and input specs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/config.h"
#include "assay/json.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/assay-test-config-XXXXXX";
static char oldcwd[4096];

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/assay-test-config-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_non_null(getcwd(oldcwd, sizeof oldcwd));
	assert_int_equal(chdir(dir), 0);
	unsetenv("ASSAY_PROVIDER");
	unsetenv("ASSAY_MODEL");
	unsetenv("OPENAI_BASE_URL");
	unsetenv("OLLAMA_HOST");
	/* a trust store of the test's own, never the user's */
	char *sd = xasprintf("%s/state", dir);
	setenv("XDG_STATE_HOME", sd, 1);
	free(sd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(chdir(oldcwd), 0);
	rm_rf(dir);
	return 0;
}

static void test_defaults(void **state)
{
	(void)state;
	struct config c;
	config_defaults(&c);
	assert_string_equal(c.provider, "openai");
	assert_string_equal(c.sandbox, "local");
	assert_string_equal(c.ask, "risky");
	assert_int_equal(c.timeout_s, 120);
	assert_int_equal(c.max_turns, 50);
	assert_int_equal(c.max_output_bytes, 16384);
	config_free(&c);
}

static void test_layers_later_wins(void **state)
{
	(void)state;
	write_text("user.json", "{\"model\": \"from-user\", \"timeout\": 10,"
	                        " \"max_turns\": 7}");
	assert_int_equal(mkdir_p(".assay", NULL), 0);
	write_text(".assay/config.json",
	           "// project config\n{\"model\": \"from-project\", "
	           "/* block */ \"timeout\": 5,}\n");
	write_text("extra.json", "{\"model\": \"from-extra\"}");
	struct config c;
	config_defaults(&c);
	char *err = NULL;
	assert_int_equal(config_load(&c, "user.json", NULL, &err), 0);
	assert_string_equal(c.model, "from-project");
	assert_int_equal(c.timeout_s, 5); /* lower: a project may */
	assert_int_equal(c.max_turns, 7); /* only the user set it */
	assert_int_equal(config_load(&c, "user.json", "extra.json", &err), 0);
	assert_string_equal(c.model, "from-extra");
	setenv("ASSAY_MODEL", "from-env", 1);
	assert_int_equal(config_load(&c, "user.json", "extra.json", &err), 0);
	assert_string_equal(c.model, "from-env");
	unsetenv("ASSAY_MODEL");
	config_free(&c);
}

/* The imported model table beside the user's file is read into its own
 * field (models.c puts it below every "models"), only beside a user
 * file, and a file of another shape is an error naming it. */
static void test_models_file(void **state)
{
	(void)state;
	assert_int_equal(mkdir_p("u", NULL), 0);
	write_text("u/config.json", "{\"models\": {\"m\": {\"output\": 3}}}");
	write_text("u/models.json", "{\"m\": {\"input\": 1, \"output\": 2, "
	                            "\"imported\": \"2026-12-07\"}}");
	char *p = config_models_file("u/config.json");
	assert_string_equal(p, "u/models.json");
	free(p);
	assert_null(config_models_file(NULL));
	struct config c;
	char *err = NULL;
	config_defaults(&c);
	assert_int_equal(config_load(&c, "u/config.json", NULL, &err), 0);
	const cJSON *imp = cJSON_GetObjectItem(c.models_imported, "m");
	assert_int_equal(json_long(imp, "output", 0), 2);
	/* the user's own "models" stay apart, over it */
	assert_int_equal(
	    json_long(cJSON_GetObjectItem(c.models, "m"), "output", 0), 3);
	config_free(&c);
	config_defaults(&c);
	assert_int_equal(config_load(&c, NULL, NULL, &err), 0);
	assert_null(c.models_imported);
	config_free(&c);
	write_text("u/models.json", "[\"gpt-4o\"]");
	config_defaults(&c);
	assert_int_equal(config_load(&c, "u/config.json", NULL, &err), -1);
	assert_non_null(strstr(err, "u/models.json: must be a JSON object"));
	free(err);
	config_free(&c);
}

static void test_env_base_url(void **state)
{
	(void)state;
	struct config c;
	config_defaults(&c);
	/* the provider reads it (src/llm/openai.c), not the layers: a
	 * --provider given later must not inherit another's URL */
	setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1", 1);
	assert_int_equal(config_apply_env(&c, NULL), 0);
	assert_null(c.base_url);
	unsetenv("OPENAI_BASE_URL");
	config_free(&c);
}

static void test_project_cannot_redirect_key(void **state)
{
	(void)state;
	struct config c;
	config_defaults(&c);
	char *err = NULL;
	write_text("assay.json", "{\"base_url\": \"http://evil.example/v1\"}");
	assert_int_equal(config_load(&c, NULL, NULL, &err), -1);
	assert_non_null(strstr(err, "assay.json"));
	assert_non_null(strstr(err, "base_url"));
	assert_null(c.base_url);
	free(err);
	err = NULL;
	write_text("assay.json", "{\"api_key_env\": \"GITHUB_TOKEN\"}");
	assert_int_equal(config_load(&c, NULL, NULL, &err), -1);
	assert_non_null(strstr(err, "api_key_env"));
	free(err);
	err = NULL;
	/* the same keys are fine in the user's own file and --config */
	write_text("assay.json", "{}");
	write_text("mine.json", "{\"base_url\": \"http://127.0.0.1:1/v1\","
	                        " \"api_key_env\": \"MY_KEY\"}");
	assert_int_equal(config_load(&c, "mine.json", NULL, &err), 0);
	assert_string_equal(c.base_url, "http://127.0.0.1:1/v1");
	assert_string_equal(c.api_key_env, "MY_KEY");
	config_free(&c);
}

static void test_missing_extra_is_error(void **state)
{
	(void)state;
	struct config c;
	config_defaults(&c);
	char *err = NULL;
	assert_int_equal(config_load(&c, "nope.json", "absent.json", &err), -1);
	assert_non_null(strstr(err, "absent.json"));
	free(err);
	config_free(&c);
}

static void test_errors_name_file_and_key(void **state)
{
	(void)state;
	struct config c;
	config_defaults(&c);
	char *err = NULL;
	write_text("bad.json", "{\n\"model\": \"x\",\n\"colour\": 1}");
	assert_int_equal(config_apply_file(&c, "bad.json", 1, &err), -1);
	assert_non_null(strstr(err, "bad.json"));
	assert_non_null(strstr(err, "colour"));
	free(err);
	err = NULL;
	write_text("syntax.json", "{\n\"model\": \"x\"\n\"timeout\": 3}");
	assert_int_equal(config_apply_file(&c, "syntax.json", 1, &err), -1);
	assert_non_null(strstr(err, "syntax.json"));
	assert_non_null(strstr(err, "line"));
	free(err);
	err = NULL;
	write_text("type.json", "{\"timeout\": \"soon\"}");
	assert_int_equal(config_apply_file(&c, "type.json", 1, &err), -1);
	assert_non_null(strstr(err, "timeout"));
	free(err);
	config_free(&c);
}

static void test_manifest(void **state)
{
	(void)state;
	assert_int_equal(mkdir_p("proj/data", NULL), 0);
	write_text(
	    "proj/assay.json",
	    "{\n"
	    "  // a team's shared setup\n"
	    "  \"inputs\": [\"data/a.csv\", \"/abs/b.csv:raw/b.csv\",\n"
	    "             {\"src\": \"data\", \"dest\": \"input/all\"}],\n"
	    "  \"outputs\": [\"output/report.md\", \"output/x.png\"],\n"
	    "  \"instructions\": \"prompt.md\",\n"
	    "  \"image\": \"team/img:1\",\n"
	    "  \"ask\": \"all\",\n"
	    "  \"rules\": [{\"match\": \"ls *\", \"action\": \"allow\"}]\n"
	    "}\n");
	struct config c;
	config_defaults(&c);
	char *err = NULL;
	assert_int_equal(config_apply_file(&c, "proj/assay.json", 1, &err), 0);
	assert_int_equal(c.n_inputs, 3);
	assert_string_equal(c.inputs[0].src, "proj/data/a.csv");
	assert_string_equal(c.inputs[0].dest, "input/a.csv");
	assert_string_equal(c.inputs[1].src, "/abs/b.csv");
	assert_string_equal(c.inputs[1].dest, "raw/b.csv");
	assert_string_equal(c.inputs[2].src, "proj/data");
	assert_string_equal(c.inputs[2].dest, "input/all");
	assert_int_equal(c.n_outputs, 2);
	assert_string_equal(c.outputs[1], "output/x.png");
	assert_string_equal(c.instructions, "proj/prompt.md");
	assert_string_equal(c.image, "team/img:1");
	assert_string_equal(c.ask, "all");
	assert_int_equal(cJSON_GetArraySize(c.rules), 1);
	/* a declared output is not added twice */
	config_add_output(&c, "output/x.png");
	assert_int_equal(c.n_outputs, 2);
	config_free(&c);

	config_defaults(&c);
	write_text("m2.json", "{\"inputs\": [42]}");
	assert_int_equal(config_apply_file(&c, "m2.json", 1, &err), -1);
	assert_non_null(strstr(err, "inputs"));
	free(err);
	err = NULL;
	write_text("m3.json", "{\"outputs\": \"a.csv\"}");
	assert_int_equal(config_apply_file(&c, "m3.json", 1, &err), -1);
	assert_non_null(strstr(err, "outputs"));
	free(err);
	config_free(&c);
}

static void test_input_spec(void **state)
{
	(void)state;
	struct config_input in;
	assert_int_equal(config_parse_input("data/x.csv", &in, NULL), 0);
	assert_string_equal(in.src, "data/x.csv");
	assert_string_equal(in.dest, "input/x.csv");
	free(in.src);
	free(in.dest);
	assert_int_equal(config_parse_input("dir/sub/:stage/here", &in, NULL),
	                 0);
	assert_string_equal(in.src, "dir/sub/");
	assert_string_equal(in.dest, "stage/here");
	free(in.src);
	free(in.dest);
	assert_int_equal(config_parse_input("dir/sub/", &in, NULL), 0);
	assert_string_equal(in.dest, "input/sub");
	free(in.src);
	free(in.dest);
	char *err = NULL;
	assert_int_equal(config_parse_input(":x", &in, &err), -1);
	free(err);
}

static void test_strip_comments_keeps_strings(void **state)
{
	(void)state;
	char *s = json_strip_comments(
	    "{\"url\": \"http://x//y\", /* c */ \"a\": [1, 2,], // t\n}");
	cJSON *j = cJSON_Parse(s);
	assert_non_null(j);
	assert_string_equal(json_str(j, "url", ""), "http://x//y");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "a")), 2);
	cJSON_Delete(j);
	free(s);
}

/* The user's file is under the XDG config directory (path_config_dir). */
static void test_user_file(void **state)
{
	(void)state;
	setenv("HOME", "/home/u", 1);
	setenv("XDG_CONFIG_HOME", "/xdg", 1);
	char *p = config_user_file();
	assert_string_equal(p, "/xdg/assay/config.json");
	free(p);
	setenv("XDG_CONFIG_HOME", "", 1);
	p = config_user_file();
	assert_string_equal(p, "/home/u/.config/assay/config.json");
	free(p);
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("HOME");
	assert_null(config_user_file());
}

/* "context": shares of the window, checked; compact_at never below
 * trim_at; unknown keys named. */
static void test_context_keys(void **state)
{
	(void)state;
	struct config cfg, *c = &cfg;
	config_defaults(c);
	char *err = NULL;
	assert_true(c->context.trim_at > 0.69 && c->context.trim_at < 0.71);
	assert_int_equal(c->context.keep_turns, 4);
	cJSON *j = cJSON_Parse("{\"context\": {\"trim_at\": 0.5, "
	                       "\"compact_at\": 0.6, \"keep_turns\": 2, "
	                       "\"window\": 32768}}");
	assert_int_equal(config_apply_json(c, j, "t.json", &err), 0);
	cJSON_Delete(j);
	assert_true(c->context.compact_at > 0.59 &&
	            c->context.compact_at < 0.61);
	assert_int_equal(c->context.keep_turns, 2);
	assert_int_equal(c->context.window, 32768);
	static const char *const bad[][2] = {
	    {"{\"context\": {\"trim_at\": 1.5}}",
	     "share of the context window"},
	    {"{\"context\": {\"compact_at\": 0.3}}", "must not be below"},
	    {"{\"context\": {\"keep_turns\": 0}}", "keep_turns"},
	    {"{\"context\": {\"trim\": 0.5}}", "unknown key \"context.trim\""},
	    {"{\"context\": 3}", "\"context\" must be an object"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		j = cJSON_Parse(bad[i][0]);
		assert_int_equal(config_apply_json(c, j, "t.json", &err), -1);
		assert_non_null(strstr(err, bad[i][1]));
		free(err);
		err = NULL;
		cJSON_Delete(j);
	}
	config_free(c);
}

/* "mcp_servers": each server checked by its kind; a later layer's
 * server of the same name replaces the earlier one whole. */
static void test_mcp_servers(void **state)
{
	(void)state;
	struct config cfg, *c = &cfg;
	config_defaults(c);
	char *err = NULL;
	cJSON *j = cJSON_Parse(
	    "{\"mcp_servers\": {\"db\": {\"command\": \"dbhub\", \"args\": "
	    "[\"--transport\", \"stdio\"], \"env\": {\"TZ\": \"UTC\"}}, "
	    "\"web\": {\"url\": \"http://h/mcp\", \"headers\": {\"X\": "
	    "\"1\"}}}}");
	assert_int_equal(config_apply_json(c, j, "t.json", &err), 0);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"mcp_servers\": {\"db\": {\"url\": "
	                "\"http://db/mcp\"}}}");
	assert_int_equal(config_apply_json(c, j, "u.json", &err), 0);
	cJSON_Delete(j);
	const cJSON *db = cJSON_GetObjectItem(c->mcp_servers, "db");
	assert_string_equal(json_str(db, "url", ""), "http://db/mcp");
	assert_null(cJSON_GetObjectItem(db, "command")); /* replaced whole */
	assert_non_null(cJSON_GetObjectItem(c->mcp_servers, "web"));
	static const char *const bad[][2] = {
	    {"{\"mcp_servers\": {\"a\": {}}}", "give either \"command\""},
	    {"{\"mcp_servers\": {\"a\": {\"command\": \"x\", \"url\": "
	     "\"http://h\"}}}",
	     "give either"},
	    {"{\"mcp_servers\": {\"a\": {\"command\": \"x\", \"headers\": "
	     "{}}}}",
	     "\"headers\" is not known (a stdio server takes command"},
	    {"{\"mcp_servers\": {\"a\": {\"command\": \"x\", \"args\": "
	     "[1]}}}",
	     "\"args\" has the wrong type"},
	    {"{\"mcp_servers\": {\"a__b\": {\"command\": \"x\"}}}",
	     "no \"__\""},
	    {"{\"mcp_servers\": {\"a b\": {\"command\": \"x\"}}}",
	     "1 to 32 letters"},
	    {"{\"mcp_servers\": [1]}", "\"mcp_servers\" must be an object"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		j = cJSON_Parse(bad[i][0]);
		assert_int_equal(config_apply_json(c, j, "t.json", &err), -1);
		if (!strstr(err, bad[i][1]))
			fail_msg("%s: %s", bad[i][0], err);
		free(err);
		err = NULL;
		cJSON_Delete(j);
	}
	config_free(c);
}

/* "network": {"allow": [...]} and "opensandbox": {...}. */
static void test_network_and_opensandbox(void **state)
{
	(void)state;
	struct config cfg, *c = &cfg;
	config_defaults(c);
	char *err = NULL;
	cJSON *j = cJSON_Parse("{\"network\": {\"allow\": [\"pypi.org\", "
	                       "\"*.pythonhosted.org\"]}, \"opensandbox\": "
	                       "{\"url\": \"osb:8080\", \"timeout_s\": 600}, "
	                       "\"limits\": {\"cpus\": 2}}");
	assert_int_equal(config_apply_json(c, j, "t.json", &err), 0);
	cJSON_Delete(j);
	assert_int_equal(c->net_allow.n, 2);
	assert_string_equal(c->net_allow.v[1], "*.pythonhosted.org");
	assert_int_equal(c->network, 0);
	assert_string_equal(c->opensandbox_url, "osb:8080");
	assert_int_equal(c->opensandbox_ttl_s, 600);
	assert_int_equal(c->cpus, 2);
	static const char *const bad[][2] = {
	    {"{\"network\": {\"deny\": []}}", "{\"allow\": [\"host\", ...]}"},
	    {"{\"network\": {\"allow\": [\"a b\"]}}", "a host name"},
	    {"{\"network\": \"on\"}", "must be true, false or"},
	    {"{\"opensandbox\": {\"timeout_s\": 30}}", "60 or more"},
	    {"{\"opensandbox\": {\"key\": \"x\"}}",
	     "unknown key \"opensandbox.key\""},
	    {"{\"opensandbox\": \"osb:8080\"}", "must be an object"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		j = cJSON_Parse(bad[i][0]);
		assert_int_equal(config_apply_json(c, j, "t.json", &err), -1);
		if (!strstr(err, bad[i][1]))
			fail_msg("'%s' lacks '%s'", err, bad[i][1]);
		free(err);
		err = NULL;
		cJSON_Delete(j);
	}
	config_free(c);
	/* a project file cannot point the key at a server of its choice */
	config_defaults(c);
	write_text("assay.json", "{\"opensandbox\": {\"url\": \"evil:1\"}}");
	assert_int_equal(config_load(c, NULL, NULL, &err), -1);
	assert_non_null(strstr(err, "opensandbox"));
	assert_null(c->opensandbox_url);
	free(err);
	write_text("assay.json", "{}");
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_network_and_opensandbox, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_layers_later_wins, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_env_base_url, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_project_cannot_redirect_key,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_missing_extra_is_error, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_errors_name_file_and_key,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_manifest, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_input_spec, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_strip_comments_keeps_strings,
	                                    setup, teardown),
	    cmocka_unit_test(test_user_file),
	    cmocka_unit_test_setup_teardown(test_models_file, setup, teardown),
	    cmocka_unit_test(test_context_keys),
	    cmocka_unit_test_setup_teardown(test_mcp_servers, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
