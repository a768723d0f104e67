/* test_project.c: the project layer's trust rule (src/core/project.c)
 * and the trust store (src/core/trust.c): what an untrusted project
 * file may not loosen, what it may tighten, trust by flag, by "once"
 * and remembered for one content, rules the user saved, revoking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/config.h"
#include "assay/json.h"
#include "assay/path.h"
#include "assay/trust.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/assay-test-project-XXXXXX";
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
	strcpy(dir, "/tmp/assay-test-project-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_non_null(getcwd(oldcwd, sizeof oldcwd));
	/* the project is dir/proj; dir/outside is the rest of the host */
	char *p = xasprintf("%s/proj", dir);
	assert_int_equal(mkdir_p(p, NULL), 0);
	assert_int_equal(chdir(p), 0);
	free(p);
	p = xasprintf("%s/outside", dir);
	assert_int_equal(mkdir_p(p, NULL), 0);
	free(p);
	p = xasprintf("%s/state", dir);
	setenv("XDG_STATE_HOME", p, 1);
	free(p);
	unsetenv("ASSAY_PROVIDER");
	unsetenv("ASSAY_MODEL");
	unsetenv("OPENAI_BASE_URL");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(chdir(oldcwd), 0);
	rm_rf(dir);
	return 0;
}

/* Load the layers (no user file) with trust; 0 or the test fails. */
static void load(struct config *c, enum config_trust trust)
{
	char *err = NULL;
	config_defaults(c);
	c->trust = trust;
	if (config_load(c, NULL, NULL, &err) < 0)
		fail_msg("config_load: %s", err);
}

/* Whether the project record's list (refused/trusted) names key with
 * exactly value. */
static int listed(const struct config *c, const char *list, const char *key,
                  const char *value)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(c->project, list))
	{
		if (!strcmp(json_str(it, "key", ""), key) &&
		    (!value || !strcmp(json_str(it, "value", ""), value)))
			return 1;
	}
	return 0;
}

static void test_untrusted_loosening_refused(void **state)
{
	(void)state;
	char *text = xasprintf(
	    "{\"network\": true, \"ask\": \"none\", \"timeout\": 999,"
	    " \"max_turns\": 500, \"never_save\": [\"deletion\"],"
	    " \"rules\": [{\"match\": \"*\", \"action\": \"allow\"},"
	    "             {\"match\": \"rm *\", \"action\": \"deny\"}],"
	    " \"limits\": {\"memory_mb\": 99999, \"cpu_s\": 10},"
	    " \"instructions\": \"%s/outside/id_rsa\","
	    " \"inputs\": [\"%s/outside:input/keys\", \"data.csv\"],"
	    " \"workspace\": \"../outside\", \"out\": \"../outside/o\","
	    " \"run_dir\": \"/tmp\", \"theme\": \"../outside/t.json\","
	    " \"outputs\": [\"output/a.csv\"], \"model\": \"m1\"}",
	    dir, dir);
	write_text("assay.json", text);
	free(text);
	write_text("data.csv", "a\n1\n");
	struct config c;
	load(&c, CONFIG_TRUST_ASK);
	assert_string_equal(json_str(c.project, "trust", ""), "untrusted");
	/* nothing loosened */
	assert_int_equal(c.network, 0);
	assert_string_equal(c.ask, "risky");
	assert_int_equal(c.timeout_s, 120);
	assert_int_equal(c.max_turns, 50);
	assert_null(c.never_save);
	assert_int_equal(c.mem_mb, 4096);
	assert_null(c.instructions);
	assert_null(c.workspace);
	assert_null(c.run_dir);
	assert_string_equal(c.out_dir, "outputs");
	assert_string_equal(c.theme, "auto"); /* the default kept */
	assert_int_equal(c.n_inputs, 1);      /* data.csv, inside */
	assert_non_null(strstr(c.inputs[0].src, "data.csv"));
	assert_int_equal(cJSON_GetArraySize(c.rules), 1);
	assert_string_equal(
	    json_str(cJSON_GetArrayItem(c.rules, 0), "action", ""), "deny");
	/* what tightens or is neutral applied */
	assert_int_equal(c.cpu_s, 10);
	assert_int_equal(c.n_outputs, 1);
	assert_string_equal(c.model, "m1");
	/* each refusal listed with its value */
	assert_true(listed(&c, "refused", "network", "true"));
	assert_true(listed(&c, "refused", "ask", "\"none\""));
	assert_true(listed(&c, "refused", "timeout", "999"));
	assert_true(listed(&c, "refused", "max_turns", "500"));
	assert_true(listed(&c, "refused", "never_save", NULL));
	assert_true(listed(&c, "refused", "rules",
	                   "{\"match\":\"*\",\"action\":\"allow\"}"));
	assert_false(listed(&c, "refused", "rules",
	                    "{\"match\":\"rm *\",\"action\":\"deny\"}"));
	assert_true(listed(&c, "refused", "limits.memory_mb", "99999"));
	assert_false(listed(&c, "refused", "limits.cpu_s", NULL));
	assert_true(listed(&c, "refused", "instructions", NULL));
	assert_true(listed(&c, "refused", "inputs", NULL));
	assert_true(listed(&c, "refused", "workspace", NULL));
	assert_true(listed(&c, "refused", "out", NULL));
	assert_true(listed(&c, "refused", "run_dir", NULL));
	assert_true(listed(&c, "refused", "theme", NULL));
	assert_non_null(config_project_refused(&c));
	/* an outside input is needed by the run; the network is not */
	const cJSON *it;
	cJSON_ArrayForEach(it, config_project_refused(&c))
	{
		const char *k = json_str(it, "key", "");
		int req = !strcmp(k, "inputs") || !strcmp(k, "workspace");
		assert_int_equal(json_bool(it, "required", -1), req);
	}
	config_free(&c);
}

static void test_flag_and_once_apply(void **state)
{
	(void)state;
	write_text("assay.json", "{\"network\": true, \"ask\": \"none\"}");
	struct config c;
	load(&c, CONFIG_TRUST_FLAG);
	assert_int_equal(c.network, 1);
	assert_string_equal(c.ask, "none");
	assert_string_equal(json_str(c.project, "trust", ""), "flag");
	assert_true(listed(&c, "trusted", "network", "true"));
	assert_null(config_project_refused(&c));
	config_free(&c);
	load(&c, CONFIG_TRUST_ONCE);
	assert_int_equal(c.network, 1);
	assert_string_equal(json_str(c.project, "trust", ""), "once");
	config_free(&c);
	/* once is not remembered */
	load(&c, CONFIG_TRUST_ASK);
	assert_int_equal(c.network, 0);
	config_free(&c);
}

static void test_remembered_for_this_content(void **state)
{
	(void)state;
	char *err = NULL;
	assert_int_equal(symlink("../outside", "data"), 0);
	write_text("../outside/x.csv", "secret\n");
	write_text("assay.json", "{\"network\": true, "
	                         "\"inputs\": [\"data/x.csv\"]}");
	struct config c;
	load(&c, CONFIG_TRUST_ASK);
	assert_int_equal(c.n_inputs, 0); /* through a link, outside */
	assert_int_equal(trust_remember(json_str(c.project, "dir", ""),
	                                json_str(c.project, "hash", ""), &err),
	                 0);
	config_free(&c);
	load(&c, CONFIG_TRUST_ASK);
	assert_string_equal(json_str(c.project, "trust", ""), "remembered");
	assert_int_equal(c.network, 1);
	assert_int_equal(c.n_inputs, 1);
	config_free(&c);
	/* the link now points elsewhere: asked again */
	assert_int_equal(mkdir_p("../elsewhere", NULL), 0);
	write_text("../elsewhere/x.csv", "other\n");
	assert_int_equal(unlink("data"), 0);
	assert_int_equal(symlink("../elsewhere", "data"), 0);
	load(&c, CONFIG_TRUST_ASK);
	assert_string_equal(json_str(c.project, "trust", ""), "untrusted");
	assert_int_equal(c.network, 0);
	config_free(&c);
	/* back as it was: trusted; then one byte more: asked again */
	assert_int_equal(unlink("data"), 0);
	assert_int_equal(symlink("../outside", "data"), 0);
	load(&c, CONFIG_TRUST_ASK);
	assert_int_equal(c.network, 1);
	config_free(&c);
	write_text("assay.json", "{\"network\": true, "
	                         "\"inputs\": [\"data/x.csv\"]} ");
	load(&c, CONFIG_TRUST_ASK);
	assert_int_equal(c.network, 0);
	config_free(&c);
}

static void test_tightening_only(void **state)
{
	(void)state;
	write_text("assay.json",
	           "{\"ask\": \"all\", \"limits\": {\"memory_mb\": 512},"
	           " \"max_turns\": 3, \"max_tokens\": 1000,"
	           " \"rules\": [{\"match\": \"*secret*\", \"action\": "
	           "\"deny\"}], \"never_save\": [\"deletion\", \"network\", "
	           "\"hidden\", \"outside\"]}");
	struct config c;
	load(&c, CONFIG_TRUST_ASK);
	assert_null(config_project_refused(&c));
	assert_string_equal(c.ask, "all");
	assert_int_equal(c.mem_mb, 512);
	assert_int_equal(c.max_turns, 3);
	assert_int_equal(c.max_tokens, 1000);
	assert_int_equal(cJSON_GetArraySize(c.rules), 1);
	assert_int_equal(cJSON_GetArraySize(c.never_save), 4);
	config_free(&c);
}

static void test_budget_removed_is_loose(void **state)
{
	(void)state;
	write_text("user.json", "{\"max_tokens\": 5000}");
	write_text("assay.json", "{\"max_tokens\": 0}");
	struct config c;
	char *err = NULL;
	config_defaults(&c);
	assert_int_equal(config_load(&c, "user.json", NULL, &err), 0);
	assert_int_equal(c.max_tokens, 5000);
	assert_true(listed(&c, "refused", "max_tokens", "0"));
	config_free(&c);
}

static void test_saved_rules_are_the_users(void **state)
{
	(void)state;
	char *err = NULL;
	assert_int_equal(mkdir_p(".assay", NULL), 0);
	const char *rule_text = "{\"match\": \"cat x\", \"action\": \"allow\"}";
	char *text = xasprintf("{\"rules\": [%s]}", rule_text);
	write_text(".assay/config.json", text);
	free(text);
	struct config c;
	load(&c, CONFIG_TRUST_ASK);
	assert_int_equal(cJSON_GetArraySize(c.rules), 0); /* nobody vouched */
	char *root = xstrdup(json_str(c.project, "dir", ""));
	config_free(&c);
	cJSON *rules = cJSON_Parse("[{\"match\": \"cat x\", "
	                           "\"action\": \"allow\"}]");
	assert_int_equal(trust_add_saved_rules(root, rules, NULL, NULL, &err),
	                 0);
	load(&c, CONFIG_TRUST_ASK);
	assert_int_equal(cJSON_GetArraySize(c.rules), 1);
	assert_null(config_project_refused(&c));
	config_free(&c);
	/* a trusted project stays trusted across the user's own save */
	write_text("assay.json", "{\"network\": true}");
	load(&c, CONFIG_TRUST_ASK);
	char old[65];
	strcpy(old, json_str(c.project, "hash", ""));
	assert_int_equal(trust_remember(root, old, &err), 0);
	config_free(&c);
	write_text(".assay/config.json",
	           "{\"rules\": [{\"match\": \"cat x\", \"action\": "
	           "\"allow\"}, {\"match\": \"cat y\", \"action\": "
	           "\"allow\"}]}");
	char now[65];
	assert_int_equal(config_project_digest(now, &err), 0);
	assert_string_not_equal(old, now);
	cJSON *more = cJSON_Parse("[{\"match\": \"cat y\", "
	                          "\"action\": \"allow\"}]");
	assert_int_equal(trust_add_saved_rules(root, more, old, now, &err), 0);
	load(&c, CONFIG_TRUST_ASK);
	assert_string_equal(json_str(c.project, "trust", ""), "remembered");
	assert_int_equal(c.network, 1);
	assert_int_equal(cJSON_GetArraySize(c.rules), 2);
	config_free(&c);
	cJSON_Delete(rules);
	cJSON_Delete(more);
	free(root);
}

static void test_revoke_and_list(void **state)
{
	(void)state;
	char *err = NULL;
	write_text("assay.json", "{\"network\": true}");
	struct config c;
	load(&c, CONFIG_TRUST_ASK);
	char *root = xstrdup(json_str(c.project, "dir", ""));
	assert_int_equal(
	    trust_remember(root, json_str(c.project, "hash", ""), &err), 0);
	config_free(&c);
	cJSON *list = trust_list(&err);
	assert_int_equal(cJSON_GetArraySize(list), 1);
	assert_string_equal(json_str(cJSON_GetArrayItem(list, 0), "dir", ""),
	                    root);
	cJSON_Delete(list);
	assert_int_equal(trust_revoke(root, &err), 1);
	assert_int_equal(trust_revoke(root, &err), 0);
	load(&c, CONFIG_TRUST_ASK);
	assert_int_equal(c.network, 0);
	config_free(&c);
	free(root);
}

static void test_no_project_files(void **state)
{
	(void)state;
	struct config c;
	load(&c, CONFIG_TRUST_ASK);
	assert_null(c.project);
	assert_null(config_project_refused(&c));
	config_free(&c);
}

static void test_path_resolve(void **state)
{
	(void)state;
	char *cwd = getcwd(NULL, 0);
	char *r = path_resolve("no/such/file");
	char *want = xasprintf("%s/no/such/file", cwd);
	assert_string_equal(r, want);
	free(r);
	free(want);
	r = path_resolve("/");
	assert_string_equal(r, "/");
	free(r);
	r = path_resolve("/nonexistent-assay-dir/x");
	assert_string_equal(r, "/nonexistent-assay-dir/x");
	free(r);
	assert_int_equal(symlink("..", "up"), 0);
	assert_false(path_lies_inside("up/outside", cwd));
	assert_true(path_lies_inside("sub/new", cwd));
	assert_false(path_lies_inside("sub/../../x", cwd));
	free(cwd);
}

/* Apply obj (JSON text) as content of the suite at file; the refused
 * items' keys, in order, joined by spaces, into keys. */
static void content(struct config *c, const char *file, int flag,
                    const char *obj, char *keys, size_t n)
{
	struct config_content cc;
	char *err = NULL;
	if (config_content_open(&cc, file, flag, &err) < 0)
		fail_msg("config_content_open: %s", err);
	cJSON *j = cJSON_Parse(obj), *refused = cJSON_CreateArray();
	char *base = realpath("eval", NULL);
	assert_non_null(base);
	if (config_apply_content(c, NULL, &cc, j, file, base, refused, &err) <
	    0)
		fail_msg("config_apply_content: %s", err);
	cJSON *scr = cJSON_CreateString("../../outside/check.py");
	assert_int_equal(config_content_path(&cc, file, "check.script", scr,
	                                     base, "runs", refused),
	                 strcmp(cc.trust, "untrusted") != 0);
	keys[0] = '\0';
	const cJSON *it;
	cJSON_ArrayForEach(it, refused)
	{
		snprintf(keys + strlen(keys), n - strlen(keys), "%s%s",
		         *keys ? " " : "", json_str(it, "key", "?"));
	}
	cJSON_Delete(scr);
	cJSON_Delete(j);
	cJSON_Delete(refused);
	free(base);
	config_content_close(&cc);
}

/* A suite is its project's content: the project is the nearest dir
 * with .git; untrusted, what loosens is refused; trusted, it applies;
 * the keys deciding where the API key goes never do. */
static void test_suite_content(void **state)
{
	(void)state;
	char keys[256];
	assert_int_equal(mkdir_p(".git", NULL), 0);
	assert_int_equal(mkdir_p("eval", NULL), 0);
	write_text("../outside/i.md", "secret\n");
	const char *obj = "{\"network\": true, \"base_url\": \"http://x\", "
	                  "\"inputs\": [\"../data.csv\"], \"$schema\": \"s\", "
	                  "\"instructions\": \"../../outside/i.md\", "
	                  "\"max_turns\": 9}";
	struct config c;
	config_defaults(&c);
	content(&c, "eval/suite.json", 0, obj, keys, sizeof keys);
	assert_string_equal(keys, "base_url network instructions "
	                          "check.script");
	assert_int_equal(c.network, 0);
	assert_null(c.base_url);
	assert_null(c.instructions);
	assert_int_equal(c.n_inputs, 1);  /* inside: the project's own */
	assert_int_equal(c.max_turns, 9); /* a lower limit: tightens */
	config_free(&c);
	config_defaults(&c);
	content(&c, "eval/suite.json", 1, obj, keys, sizeof keys);
	assert_string_equal(keys, "base_url");
	assert_int_equal(c.network, 1);
	assert_null(c.base_url);
	assert_non_null(c.instructions);
	config_free(&c);
	/* without .git the project is the suite's own dir: ../data.csv
	 * lies outside it */
	assert_int_equal(rmdir(".git"), 0);
	config_defaults(&c);
	content(&c, "eval/suite.json", 0, "{\"inputs\": [\"../data.csv\"]}",
	        keys, sizeof keys);
	assert_string_equal(keys, "inputs check.script");
	assert_int_equal(c.n_inputs, 0);
	config_free(&c);
}

/* A task's keys are judged against the user's configuration (ref): after
 * the suite's defaults lowered max_turns, a task may raise it up to the
 * user's limit, not above. */
static void test_suite_against_user(void **state)
{
	(void)state;
	struct config_content cc;
	struct config c, ref;
	char *err = NULL;
	assert_int_equal(mkdir_p("eval", NULL), 0);
	assert_int_equal(config_content_open(&cc, "eval/s.json", 0, &err), 0);
	config_defaults(&ref);
	config_defaults(&c);
	c.max_turns = 5; /* the defaults' */
	cJSON *refused = cJSON_CreateArray();
	cJSON *up = cJSON_Parse("{\"max_turns\": 30}");
	cJSON *over = cJSON_Parse("{\"max_turns\": 51}");
	assert_int_equal(
	    config_apply_content(&c, &ref, &cc, up, "t", NULL, refused, &err),
	    0);
	assert_int_equal(c.max_turns, 30);
	assert_int_equal(cJSON_GetArraySize(refused), 0);
	assert_int_equal(
	    config_apply_content(&c, &ref, &cc, over, "t", NULL, refused, &err),
	    0);
	assert_int_equal(c.max_turns, 30);
	assert_int_equal(cJSON_GetArraySize(refused), 1);
	c.max_turns = 5; /* without ref: against c itself */
	assert_int_equal(
	    config_apply_content(&c, NULL, &cc, up, "t", NULL, refused, &err),
	    0);
	assert_int_equal(c.max_turns, 5);
	cJSON_Delete(up);
	cJSON_Delete(over);
	cJSON_Delete(refused);
	config_free(&c);
	config_free(&ref);
	config_content_close(&cc);
}

/* The trust store holding the suite's project with its files' digest
 * trusts the suite, read from any directory (the cwd is kept). */
static void test_suite_remembered(void **state)
{
	(void)state;
	char keys[256], *err = NULL, digest[65], here[4096], now[4096];
	assert_int_equal(mkdir_p(".git", NULL), 0);
	assert_int_equal(mkdir_p("eval", NULL), 0);
	write_text("assay.json", "{\"limits\": {\"memory_mb\": 1024}}");
	assert_int_equal(config_project_digest(digest, &err), 0);
	char *root = realpath(".", NULL);
	assert_int_equal(trust_remember(root, digest, &err), 0);
	struct config_content cc;
	assert_int_equal(chdir("../outside"), 0);
	assert_non_null(getcwd(here, sizeof here));
	assert_int_equal(
	    config_content_open(&cc, "../proj/eval/suite.json", 0, &err), 0);
	assert_non_null(getcwd(now, sizeof now));
	assert_string_equal(here, now);
	assert_string_equal(cc.root, root);
	assert_string_equal(cc.trust, "remembered");
	config_content_close(&cc);
	assert_int_equal(chdir(root), 0);
	struct config c;
	config_defaults(&c);
	content(&c, "eval/suite.json", 0, "{\"network\": true}", keys,
	        sizeof keys);
	assert_int_equal(c.network, 1);
	config_free(&c);
	/* the project's files changed: no longer */
	write_text("assay.json", "{\"limits\": {\"memory_mb\": 512}}");
	config_defaults(&c);
	content(&c, "eval/suite.json", 0, "{\"network\": true}", keys,
	        sizeof keys);
	assert_int_equal(c.network, 0);
	assert_string_equal(keys, "network check.script");
	config_free(&c);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_untrusted_loosening_refused,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_flag_and_once_apply, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_remembered_for_this_content,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_tightening_only, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_budget_removed_is_loose, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_saved_rules_are_the_users,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_revoke_and_list, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_no_project_files, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_path_resolve, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_suite_content, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_suite_remembered, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_suite_against_user, setup,
	                                    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
