/* test_events.c: the event schema (src/agent/events.c): every type's
 * name parses back to its enum, and every builder makes exactly the
 * members the transcript has always had, in the same order, with the
 * optional ones only when they apply. The expected texts are what the
 * hand-built events printed before the builders existed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/config.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/policy.h"
#include "assay/strv.h"
#include "assay/util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Every member of ev is one of its type's fields (events.c's type
 * table), in the table's order: the table the doc is made from says what
 * the builders write. */
static void check_fields(const cJSON *ev)
{
	enum event_type t = event_type_of(ev);
	if (t == EV_UNKNOWN) /* not an event: a part of one */
		return;
	const enum ev_field *f = ev_type_fields(t);
	size_t at = 0;
	const cJSON *m;
	cJSON_ArrayForEach(m, ev)
	{
		if (!strcmp(m->string, ev_field_name(EVF_TYPE)))
			continue;
		while (f[at] != EVF_NONE &&
		       strcmp(ev_field_name(f[at]), m->string))
			at++;
		if (f[at] == EVF_NONE)
			fail_msg(
			    "%s: member %s is not in its field list (or out of "
			    "order)",
			    event_type_name(t), m->string);
		at++;
	}
}

/* Compare ev as the transcript prints it, then free it. */
static void check_json(cJSON *ev, const char *want)
{
	check_fields(ev);
	char *got = json_print(ev);
	assert_string_equal(got, want);
	free(got);
	cJSON_Delete(ev);
}

static void test_names_round_trip(void **state)
{
	(void)state;
	for (int t = 1; t < EV__COUNT; t++) {
		const char *name = event_type_name((enum event_type)t);
		assert_non_null(name);
		assert_string_not_equal(name, "unknown");
		assert_int_equal(event_type_parse(name), t);
		/* names are distinct */
		for (int u = 1; u < t; u++)
			assert_string_not_equal(
			    name, event_type_name((enum event_type)u));
		cJSON *ev = ev_new((enum event_type)t);
		assert_int_equal(event_type_of(ev), t);
		cJSON_Delete(ev);
	}
	assert_string_equal(event_type_name(EV_TOOL_RESULT), "tool_result");
	assert_string_equal(event_type_name(EV_UNKNOWN), "unknown");
	assert_string_equal(event_type_name(EV__COUNT), "unknown");
	assert_string_equal(event_type_name((enum event_type) - 1), "unknown");
	assert_int_equal(event_type_parse(NULL), EV_UNKNOWN);
	assert_int_equal(event_type_parse("unknown"), EV_UNKNOWN);
	assert_int_equal(event_type_parse("tool_results"), EV_UNKNOWN);
	assert_int_equal(event_type_parse(""), EV_UNKNOWN);
	cJSON *odd = cJSON_Parse("{\"type\":3}");
	assert_int_equal(event_type_of(odd), EV_UNKNOWN);
	cJSON_Delete(odd);
	assert_int_equal(event_type_of(NULL), EV_UNKNOWN);
}

/* Every type has a meaning, a doc line and fields; every field has a
 * distinct name; the typed readers read what the builders write. */
static void test_field_table(void **state)
{
	(void)state;
	for (int t = 1; t < EV__COUNT; t++) {
		assert_true(*ev_type_meaning((enum event_type)t));
		assert_true(*ev_type_doc((enum event_type)t));
		assert_int_not_equal(ev_type_fields((enum event_type)t)[0],
		                     EVF_NONE);
	}
	assert_string_equal(ev_type_doc(EV_UNKNOWN), "");
	assert_int_equal(ev_type_fields(EV_UNKNOWN)[0], EVF_NONE);
	for (int f = 1; f < EVF__COUNT; f++) {
		assert_true(*ev_field_name((enum ev_field)f));
		for (int g = 1; g < f; g++)
			assert_string_not_equal(
			    ev_field_name((enum ev_field)f),
			    ev_field_name((enum ev_field)g));
	}
	assert_string_equal(ev_field_name(EVF_NONE), "");
	assert_string_equal(ev_field_name(EVF_TOOL_CALLS), "tool_calls");
	cJSON *ev = ev_exec_output("c1", "stderr", 9, "oops", 1);
	assert_string_equal(ev_str(ev, EVF_ID, NULL), "c1");
	assert_string_equal(ev_str(ev, EVF_STREAM, NULL), "stderr");
	assert_true(ev_num(ev, EVF_BYTES, 0) == 9);
	assert_int_equal(ev_bool(ev, EVF_TRUNCATED, 0), 1);
	assert_null(ev_item(ev, EVF_NONE));
	assert_string_equal(ev_str(ev, EVF_BYTES, "def"), "def"); /* a number */
	assert_true(ev_num(ev, EVF_TEXT, -1) == -1);              /* a string */
	assert_int_equal(ev_bool(ev, EVF_ERROR, 7), 7);           /* missing */
	assert_null(ev_item(NULL, EVF_ID));
	cJSON_Delete(ev);
}

static void test_simple_events(void **state)
{
	(void)state;
	check_json(ev_user_message("hi \"you\""),
	           "{\"type\":\"user_message\",\"text\":\"hi \\\"you\\\"\"}");
	check_json(ev_text_delta(3, "abc"),
	           "{\"type\":\"text_delta\",\"turn\":3,\"text\":\"abc\"}");
	check_json(ev_idle("ready"),
	           "{\"type\":\"idle\",\"reason\":\"ready\"}");
	check_json(ev_exec_start("c1", "ls -l"),
	           "{\"type\":\"exec_start\",\"id\":\"c1\",\"command\":"
	           "\"ls -l\"}");
	check_json(
	    ev_workspace_change("out/a.csv", "created", 12, 0, NULL, NULL),
	    "{\"type\":\"workspace_change\",\"path\":\"out/a.csv\","
	    "\"kind\":\"created\",\"size\":12}");
	cJSON *diff = cJSON_CreateObject();
	cJSON_AddStringToObject(diff, "skipped", "binary");
	check_json(ev_workspace_change("a.png", "modified", 3, 1700000000.5,
	                               "c1", diff),
	           "{\"type\":\"workspace_change\",\"path\":\"a.png\","
	           "\"kind\":\"modified\",\"size\":3,\"mtime\":1700000000.5,"
	           "\"call\":\"c1\","
	           "\"diff\":{\"skipped\":\"binary\"}}");
}

static void test_model_request(void **state)
{
	(void)state;
	check_json(ev_model_request(1, "ab12", 0, 2, 0, 0, 0),
	           "{\"type\":\"model_request\",\"turn\":1,\"request_hash\":"
	           "\"ab12\",\"cached\":false,\"messages\":2}");
	check_json(ev_model_request(2, "cd", 0, 4, 1500, 16000, 0),
	           "{\"type\":\"model_request\",\"turn\":2,\"request_hash\":"
	           "\"cd\",\"cached\":false,\"messages\":4,\"est_tokens\":"
	           "1500,\"window\":16000}");
	check_json(ev_model_request(4, "ff", 1, 9, 0, 0, 1),
	           "{\"type\":\"model_request\",\"turn\":4,\"request_hash\":"
	           "\"ff\",\"cached\":true,\"messages\":9,\"replayed\":true}");
}

static void test_assistant_message(void **state)
{
	(void)state;
	cJSON *calls = cJSON_Parse("[{\"id\":\"c1\",\"name\":\"shell\","
	                           "\"arguments\":{\"command\":\"ls\"}}]");
	check_json(ev_assistant_message(2, "ok", calls, "tool_calls", 0),
	           "{\"type\":\"assistant_message\",\"turn\":2,\"text\":\"ok\","
	           "\"tool_calls\":[{\"id\":\"c1\",\"name\":\"shell\","
	           "\"arguments\":{\"command\":\"ls\"}}],\"finish_reason\":"
	           "\"tool_calls\"}");
	/* the calls were copied, not taken */
	assert_int_equal(cJSON_GetArraySize(calls), 1);
	cJSON_Delete(calls);
	check_json(ev_assistant_message(1, NULL, NULL, NULL, 1),
	           "{\"type\":\"assistant_message\",\"turn\":1,\"text\":\"\","
	           "\"tool_calls\":[],\"recovered\":true}");
}

static void test_usage(void **state)
{
	(void)state;
	struct ev_usage u = {.turn = 2,
	                     .input_tokens = 100,
	                     .output_tokens = 20,
	                     .cached_tokens = 5,
	                     .cost_usd = 0.0125,
	                     .priced = 1,
	                     .known = 1,
	                     .totals = {150, 30, 5, 0.25, 0}};
	check_json(ev_usage(&u),
	           "{\"type\":\"usage\",\"turn\":2,\"input_tokens\":100,"
	           "\"output_tokens\":20,\"cached_tokens\":5,"
	           "\"cost_usd\":0.0125,\"priced\":true,"
	           "\"known\":true,\"totals\":{\"input_tokens\":150,"
	           "\"output_tokens\":30,\"cached_tokens\":5,\"cost_usd\":0.25}"
	           "}");
	struct ev_usage z = {.turn = 3, .known = 1, .replayed = 1};
	check_json(ev_usage(&z),
	           "{\"type\":\"usage\",\"turn\":3,\"input_tokens\":0,"
	           "\"output_tokens\":0,\"cached_tokens\":0,\"cost_usd\":0,"
	           "\"priced\":false,\"known\":true,\"replayed\":true,"
	           "\"totals\":{\"input_tokens\":0,\"output_tokens\":0,"
	           "\"cached_tokens\":0,\"cost_usd\":0}}");
	/* Anthropic's cache writes, and turns of unknown cost so far */
	struct ev_usage w = {.turn = 4,
	                     .input_tokens = 1000,
	                     .cached_tokens = 600,
	                     .cache_write_tokens = 300,
	                     .known = 1,
	                     .totals = {1000, 0, 600, 0, 2}};
	check_json(ev_usage(&w),
	           "{\"type\":\"usage\",\"turn\":4,\"input_tokens\":1000,"
	           "\"output_tokens\":0,\"cached_tokens\":600,"
	           "\"cache_write_tokens\":300,\"cost_usd\":0,"
	           "\"priced\":false,\"known\":true,\"totals\":{"
	           "\"input_tokens\":1000,\"output_tokens\":0,"
	           "\"cached_tokens\":600,\"cost_usd\":0,"
	           "\"unpriced_turns\":2}}");
	struct ev_usage unknown = {.turn = 1};
	cJSON *ev = ev_usage(&unknown);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(ev, "known")));
	cJSON_Delete(ev);
}

static void test_tool_call_and_result(void **state)
{
	(void)state;
	cJSON *args = cJSON_Parse("{\"code\":\"1+1\"}");
	check_json(ev_tool_call("c2", "python", args),
	           "{\"type\":\"tool_call\",\"id\":\"c2\",\"name\":\"python\","
	           "\"arguments\":{\"code\":\"1+1\"}}");
	cJSON_Delete(args);
	/* a call without arguments has no member for them */
	check_json(ev_tool_call("c3", "shell", NULL),
	           "{\"type\":\"tool_call\",\"id\":\"c3\",\"name\":\"shell\"}");
	check_json(ev_tool_result("c2", "2\n", 0),
	           "{\"type\":\"tool_result\",\"id\":\"c2\",\"content\":"
	           "\"2\\n\",\"is_error\":false}");
	check_json(ev_tool_result("c4", "[not run]", 1),
	           "{\"type\":\"tool_result\",\"id\":\"c4\",\"content\":"
	           "\"[not run]\",\"is_error\":true}");
	check_json(ev_tool_result_forked("c5", "mine", 0, "theirs"),
	           "{\"type\":\"tool_result\",\"id\":\"c5\",\"content\":"
	           "\"mine\",\"is_error\":false,\"forked\":true,\"original\":"
	           "\"theirs\"}");
}

static void test_exec_events(void **state)
{
	(void)state;
	check_json(ev_exec_output("c1", "stderr", 70000, "abc", 1),
	           "{\"type\":\"exec_output\",\"id\":\"c1\",\"stream\":"
	           "\"stderr\",\"bytes\":70000,\"text\":\"abc\",\"truncated\":"
	           "true}");
	check_json(ev_exec_output("c1", "stdout", 3, "abc", 0),
	           "{\"type\":\"exec_output\",\"id\":\"c1\",\"stream\":"
	           "\"stdout\",\"bytes\":3,\"text\":\"abc\"}");
	struct ev_exec_end e = {.id = "c1",
	                        .exit_code = 2,
	                        .duration_ms = 41,
	                        .stdout_bytes = 10,
	                        .stderr_bytes = 1,
	                        .output_file = "r/exec/c1.stdout"};
	check_json(ev_exec_end(&e),
	           "{\"type\":\"exec_end\",\"id\":\"c1\",\"exit_code\":2,"
	           "\"signal\":0,\"timed_out\":false,\"cancelled\":false,"
	           "\"duration_ms\":41,\"stdout_bytes\":10,\"stderr_bytes\":1,"
	           "\"output_file\":\"r/exec/c1.stdout\"}");
	e = (struct ev_exec_end){.id = "c2",
	                         .exit_code = -1,
	                         .signal = 9,
	                         .timed_out = 1,
	                         .cancelled = 1,
	                         .output_file = "o",
	                         .output_file_cut = 1,
	                         .output_file_cut_at = 0,
	                         .error = "no bash"};
	check_json(ev_exec_end(&e),
	           "{\"type\":\"exec_end\",\"id\":\"c2\",\"exit_code\":-1,"
	           "\"signal\":9,\"timed_out\":true,\"cancelled\":true,"
	           "\"duration_ms\":0,\"stdout_bytes\":0,\"stderr_bytes\":0,"
	           "\"output_file\":\"o\",\"output_file_cut_at\":0,\"error\":"
	           "\"no bash\"}");
	/* a python cell's result: copied, the caller keeps its own */
	cJSON *py = cJSON_Parse("{\"value\":\"42\"}");
	e = (struct ev_exec_end){.id = "c3", .output_file = "p", .python = py};
	check_json(ev_exec_end(&e),
	           "{\"type\":\"exec_end\",\"id\":\"c3\",\"exit_code\":0,"
	           "\"signal\":0,\"timed_out\":false,\"cancelled\":false,"
	           "\"duration_ms\":0,\"stdout_bytes\":0,\"stderr_bytes\":0,"
	           "\"output_file\":\"p\",\"python\":{\"value\":\"42\"}}");
	cJSON_Delete(py);
}

/* A verdict with two reasons of one kind and one of another. */
static struct policy_verdict *sample_verdict(void)
{
	static struct policy_reason reasons[3] = {
	    {POLICY_DELETION, "deletion: rm"},
	    {POLICY_NETWORK, "network: curl"},
	    {POLICY_DELETION, "deletion: > file"},
	};
	static struct policy_verdict v;
	v = (struct policy_verdict){.action = POLICY_ASK,
	                            .by = "mode",
	                            .subject = "rm x; curl y",
	                            .reasons = reasons,
	                            .nreasons = 3};
	return &v;
}

static void test_approval_request(void **state)
{
	(void)state;
	struct policy_verdict *v = sample_verdict();
	struct ev_approval_request r = {
	    .id = "c1", .tool = "shell", .verdict = v, .cwd = "/workspace"};
	check_json(ev_approval_request(&r),
	           "{\"type\":\"approval_request\",\"id\":\"c1\",\"tool\":"
	           "\"shell\",\"command\":\"rm x; curl y\",\"cwd\":"
	           "\"/workspace\",\"reasons\":[\"deletion: rm\",\"network: "
	           "curl\",\"deletion: > file\"],\"kinds\":[\"deletion\","
	           "\"network\"],\"rules\":null,\"no_always\":null,"
	           "\"editable\":false}");
	v->save = cJSON_Parse("[{\"match\":\"rm x\",\"action\":\"allow\"}]");
	v->no_save = NULL;
	r.editable = 1;
	cJSON *ev = ev_approval_request(&r);
	v->no_save = "hidden";
	cJSON *ev2 = ev_approval_request(&r);
	check_json(ev, "{\"type\":\"approval_request\",\"id\":\"c1\",\"tool\":"
	               "\"shell\",\"command\":\"rm x; curl y\",\"cwd\":"
	               "\"/workspace\",\"reasons\":[\"deletion: rm\","
	               "\"network: curl\",\"deletion: > file\"],\"kinds\":["
	               "\"deletion\",\"network\"],\"rules\":[{\"match\":"
	               "\"rm x\",\"action\":\"allow\"}],\"no_always\":null,"
	               "\"editable\":true}");
	assert_string_equal(json_str(ev2, "no_always", ""), "hidden");
	cJSON_Delete(ev2);
	cJSON_Delete(v->save);
	v->save = NULL;
	v->no_save = NULL;
}

static void test_approval(void **state)
{
	(void)state;
	/* by the mode, arguments not valid: no verdict */
	struct ev_approval a = {.id = "c1",
	                        .tool = "shell",
	                        .decision = "approved",
	                        .by = "mode",
	                        .mode = "risky",
	                        .final = "",
	                        .note = "bad args"};
	check_json(ev_approval(&a),
	           "{\"type\":\"approval\",\"id\":\"c1\",\"tool\":\"shell\","
	           "\"decision\":\"approved\",\"by\":\"mode\",\"mode\":"
	           "\"risky\",\"rule\":null,\"reasons\":[],\"kinds\":[],"
	           "\"original\":\"\",\"final\":\"\",\"feedback\":null,"
	           "\"note\":\"bad args\"}");
	/* the user, always, saved to the project */
	struct policy_verdict *v = sample_verdict();
	cJSON *rules = cJSON_Parse("[{\"match\":\"rm x\"},{\"match\":\"c\"}]");
	a = (struct ev_approval){.id = "c2",
	                         .tool = "shell",
	                         .decision = "approved",
	                         .by = "user",
	                         .mode = "all",
	                         .choice = "always",
	                         .rule = cJSON_GetArrayItem(rules, 0),
	                         .rules = rules,
	                         .verdict = v,
	                         .final = v->subject,
	                         .scope = "project",
	                         .saved_path = ".assay/config.json"};
	check_json(ev_approval(&a),
	           "{\"type\":\"approval\",\"id\":\"c2\",\"tool\":\"shell\","
	           "\"decision\":\"approved\",\"by\":\"user\",\"mode\":\"all\","
	           "\"choice\":\"always\",\"rule\":{\"match\":\"rm x\"},"
	           "\"rules\":[{\"match\":\"rm x\"},{\"match\":\"c\"}],"
	           "\"reasons\":[\"deletion: rm\",\"network: curl\","
	           "\"deletion: > file\"],\"kinds\":[\"deletion\",\"network\"],"
	           "\"original\":\"rm x; curl y\",\"final\":\"rm x; curl y\","
	           "\"feedback\":null,\"saved\":{\"scope\":\"project\","
	           "\"path\":\".assay/config.json\"}}");
	/* the user's feedback, in the session scope: no path */
	a.choice = "feedback";
	a.decision = "denied";
	a.rule = NULL;
	a.rules = NULL;
	a.final = NULL;
	a.feedback = "use ls";
	a.scope = "session";
	a.saved_path = NULL;
	cJSON *ev = ev_approval(&a);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(ev, "rule")));
	assert_null(cJSON_GetObjectItem(ev, "rules"));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(ev, "final")));
	assert_string_equal(json_str(ev, "feedback", ""), "use ls");
	cJSON *saved = cJSON_GetObjectItem(ev, "saved");
	assert_string_equal(json_str(saved, "scope", ""), "session");
	assert_null(cJSON_GetObjectItem(saved, "path"));
	assert_null(cJSON_GetObjectItem(ev, "note"));
	cJSON_Delete(ev);
	cJSON_Delete(rules);
}

static void test_python_session(void **state)
{
	(void)state;
	cJSON *hello = cJSON_Parse("{\"python\":\"3.11.2\",\"executable\":"
	                           "\"/usr/bin/python3\",\"packages\":{"
	                           "\"numpy\":\"1.24\"}}");
	check_json(ev_python_session("started", 1, hello, 38, NULL),
	           "{\"type\":\"python_session\",\"state\":\"started\","
	           "\"generation\":1,\"python\":\"3.11.2\",\"executable\":"
	           "\"/usr/bin/python3\",\"packages\":{\"numpy\":\"1.24\"},"
	           "\"startup_ms\":38}");
	cJSON_Delete(hello);
	hello = cJSON_Parse("{\"python\":3}");
	check_json(ev_python_session("started", 2, hello, 5, NULL),
	           "{\"type\":\"python_session\",\"state\":\"started\","
	           "\"generation\":2,\"python\":\"\",\"executable\":\"\","
	           "\"packages\":[],\"startup_ms\":5}");
	cJSON_Delete(hello);
	check_json(ev_python_session("ended", 2, NULL, 99, "exited"),
	           "{\"type\":\"python_session\",\"state\":\"ended\","
	           "\"generation\":2,\"reason\":\"exited\"}");
}

static void test_replay_and_step(void **state)
{
	(void)state;
	check_json(
	    ev_replay_live(3, "changed", "aa", "bb", 2),
	    "{\"type\":\"replay_live\",\"turn\":3,\"reason\":\"changed\","
	    "\"recorded_hash\":\"aa\",\"request_hash\":\"bb\","
	    "\"cached_turns\":2}");
	check_json(ev_replay_live(1, "end", NULL, NULL, 0),
	           "{\"type\":\"replay_live\",\"turn\":1,\"reason\":\"end\","
	           "\"cached_turns\":0}");
	const char *tools[] = {"shell", "python"};
	check_json(ev_step_pause_request(2, 5, 1234, tools, 2),
	           "{\"type\":\"step_pause\",\"kind\":\"request\",\"turn\":2,"
	           "\"messages\":5,\"est_input_tokens\":1234,\"tools\":["
	           "\"shell\",\"python\"]}");
	check_json(ev_step_pause_request(1, 0, 0, NULL, 0),
	           "{\"type\":\"step_pause\",\"kind\":\"request\",\"turn\":1,"
	           "\"messages\":0,\"est_input_tokens\":0,\"tools\":[]}");
	check_json(ev_step_pause_exec(2, "c1", "shell", "ls"),
	           "{\"type\":\"step_pause\",\"kind\":\"exec\",\"turn\":2,"
	           "\"id\":\"c1\",\"tool\":\"shell\",\"command\":\"ls\"}");
	check_json(ev_step_resume("edit", "exec", "c1", "ls", "ls -a"),
	           "{\"type\":\"step_resume\",\"action\":\"edit\",\"kind\":"
	           "\"exec\",\"id\":\"c1\",\"original\":\"ls\",\"final\":"
	           "\"ls -a\"}");
	check_json(ev_step_resume("continue", "request", NULL, NULL, NULL),
	           "{\"type\":\"step_resume\",\"action\":\"continue\",\"kind\":"
	           "\"request\"}");
}

static void test_errors(void **state)
{
	(void)state;
	check_json(ev_error("sandbox", "no docker", -1),
	           "{\"type\":\"error\",\"category\":\"sandbox\",\"message\":"
	           "\"no docker\"}");
	check_json(ev_error("provider_rate_limit", "slow down", 0),
	           "{\"type\":\"error\",\"category\":\"provider_rate_limit\","
	           "\"message\":\"slow down\",\"retry_in_ms\":0}");
	check_json(ev_error_retry("provider_server", "503", 2000, 2, 17, 4),
	           "{\"type\":\"error\",\"category\":\"provider_server\","
	           "\"message\":\"503\",\"retry_in_ms\":2000,\"attempt\":2,"
	           "\"discarded_bytes\":17,\"turn\":4}");
}

/* A configuration with one input, two outputs and known limits. */
static void sample_config(struct config *c)
{
	config_defaults(c);
	config_set(&c->out_dir, "out");
	config_set(&c->ask, "risky");
	config_add_input(c, "/h/data.csv", "input/data.csv");
	config_add_output(c, "output/a.png");
	config_add_output(c, "output/b.csv");
	c->timeout_s = 60;
	c->max_turns = 10;
	c->max_tokens = 5000;
	c->max_cost = 1.5;
	c->mem_mb = 512;
	c->nproc = 64;
	c->cpu_s = 30;
	c->fsize_mb = 100;
	c->max_output_bytes = 16384;
	c->max_output_tokens = 4096;
	c->network = 0;
}

#define LIMITS_JSON                                                            \
	"\"limits\":{\"timeout_s\":60,\"max_turns\":10,\"max_tokens\":5000,"   \
	"\"max_cost\":1.5,\"memory_mb\":512,\"processes\":64,\"cpu_s\":30,"    \
	"\"file_size_mb\":100,\"max_output_bytes\":16384,"                     \
	"\"max_output_tokens\":4096,\"network\":false}"

static void test_run_start(void **state)
{
	(void)state;
	struct config c;
	sample_config(&c);
	struct ev_run run = {.run_id = "r1",
	                     .run_dir = "/runs/r1",
	                     .provider = "script",
	                     .model = "m",
	                     .backend = "local",
	                     .workspace = "/runs/r1/workspace"};
	check_json(
	    ev_run_start(&run, &c, NULL),
	    "{\"type\":\"run_start\",\"version\":\"" ASSAY_VERSION "\","
	    "\"run_id\":\"r1\",\"run_dir\":\"/runs/r1\",\"provider\":"
	    "\"script\",\"model\":\"m\",\"base_url\":\"\",\"out\":"
	    "\"out\",\"sandbox\":{\"backend\":\"local\",\"image\":\"\","
	    "\"image_id\":\"\"},\"ask\":\"risky\",\"workspace\":"
	    "\"/runs/r1/workspace\",\"inputs\":[{\"src\":\"/h/data.csv\","
	    "\"dest\":\"input/data.csv\"}],\"outputs\":[\"output/a.png\","
	    "\"output/b.csv\"]," LIMITS_JSON "}");
	/* a fork of a run, with instructions and a script, in docker */
	run.base_url = "http://h/v1";
	run.instructions = "/p/instr.md";
	run.script = "/p/s.json";
	run.backend = "docker";
	run.image = "assay:1";
	run.image_id = "sha256:9";
	struct strv digests = {0};
	strv_push(&digests, "reg/assay@sha256:7");
	run.repo_digests = &digests;
	run.workspace = NULL;
	struct ev_fork fork = {.run_id = "r0",
	                       .run_dir = "/runs/r0",
	                       .fork_at = 7,
	                       .replace = "x"};
	c.network = 1;
	cJSON *ev = ev_run_start(&run, &c, &fork);
	assert_int_equal(event_type_of(ev), EV_RUN_START);
	check_json(
	    ev,
	    "{\"forked_from\":{\"run_id\":\"r0\",\"run_dir\":\"/runs/r0\","
	    "\"mode\":\"re-execute\",\"fork_at\":7,\"replace\":\"x\"},"
	    "\"type\":\"run_start\",\"version\":\"" ASSAY_VERSION "\","
	    "\"run_id\":\"r1\",\"run_dir\":\"/runs/r1\",\"provider\":"
	    "\"script\",\"model\":\"m\",\"base_url\":\"http://h/v1\","
	    "\"instructions\":\"/p/instr.md\",\"script\":\"/p/s.json\","
	    "\"out\":\"out\",\"sandbox\":{\"backend\":\"docker\",\"image\":"
	    "\"assay:1\",\"image_id\":\"sha256:9\",\"repo_digests\":"
	    "[\"reg/assay@sha256:7\"]},\"ask\":\"risky\","
	    "\"workspace\":\"/workspace\",\"inputs\":[{\"src\":\"/h/data.csv\","
	    "\"dest\":\"input/data.csv\"}],\"outputs\":[\"output/a.png\","
	    "\"output/b.csv\"],\"limits\":{\"timeout_s\":60,\"max_turns\":10,"
	    "\"max_tokens\":5000,\"max_cost\":1.5,\"memory_mb\":512,"
	    "\"processes\":64,\"cpu_s\":30,\"file_size_mb\":100,"
	    "\"max_output_bytes\":16384,\"max_output_tokens\":4096,"
	    "\"network\":true}}");
	/* re-executed whole: no fork_at, no replace; the image changed
	 * since (image_id_was), and built locally (no repo digests) */
	fork.fork_at = 0;
	strv_free(&digests);
	run.image_id_was = "sha256:8";
	ev = ev_run_start(&run, &c, &fork);
	char *from = json_print(cJSON_GetObjectItem(ev, "forked_from"));
	assert_string_equal(from, "{\"run_id\":\"r0\",\"run_dir\":\"/runs/r0\","
	                          "\"mode\":\"re-execute\"}");
	free(from);
	char *sb = json_print(ev_item(ev, EVF_SANDBOX));
	assert_string_equal(sb, "{\"backend\":\"docker\",\"image\":\"assay:1\","
	                        "\"image_id\":\"sha256:9\",\"repo_digests\":[],"
	                        "\"image_id_was\":\"sha256:8\"}");
	free(sb);
	cJSON_Delete(ev);
	/* opensandbox: what the server reports (null: it named none) */
	run.backend = "opensandbox";
	run.image_id = "";
	run.image_id_was = NULL;
	run.repo_digests = NULL;
	const char *reported[] = {"assay:1", ""};
	const char *want[] = {"\"image_reported\":\"assay:1\"}",
	                      "\"image_reported\":null}"};
	for (int i = 0; i < 2; i++) {
		run.image_reported = reported[i];
		ev = ev_run_start(&run, &c, NULL);
		sb = json_print(ev_item(ev, EVF_SANDBOX));
		char *exp = xasprintf("{\"backend\":\"opensandbox\",\"image\":"
		                      "\"assay:1\",\"image_id\":\"\",%s",
		                      want[i]);
		assert_string_equal(sb, exp);
		free(exp);
		free(sb);
		cJSON_Delete(ev);
	}
	config_free(&c);
}

/* What a recorded sandbox says of its image, in words: docker's id
 * and digests, opensandbox's name only, a change on resume; nothing
 * for the local sandbox or a record made before the fields were. */
static void test_image_text(void **state)
{
	(void)state;
	static const struct {
		const char *sandbox, *text, *change;
	} cases[] = {
	    {"{\"backend\":\"docker\",\"image\":\"a:1\",\"image_id\":"
	     "\"sha256:9\",\"repo_digests\":[\"r/a@sha256:7\",\"q/"
	     "a@sha256:7\"]}",
	     "sha256:9; repo digests: r/a@sha256:7, q/a@sha256:7", NULL},
	    {"{\"backend\":\"docker\",\"image\":\"a:1\",\"image_id\":"
	     "\"sha256:9\",\"repo_digests\":[]}",
	     "sha256:9; repo digests: none (built locally: never pushed to "
	     "or pulled from a registry)",
	     NULL},
	    /* recorded before repo_digests */
	    {"{\"backend\":\"docker\",\"image\":\"a:1\",\"image_id\":"
	     "\"sha256:9\"}",
	     "sha256:9; repo digests not recorded", NULL},
	    {"{\"backend\":\"docker\",\"image\":\"a:1\",\"image_id\":"
	     "\"sha256:9\",\"repo_digests\":[],\"image_id_was\":\"sha256:8\"}",
	     "sha256:9; repo digests: none (built locally: never pushed to "
	     "or pulled from a registry) (changed: the run had sha256:8)",
	     "the image changed since the run was recorded: it ran on "
	     "sha256:8, this sandbox runs sha256:9 (a:1)"},
	    {"{\"backend\":\"opensandbox\",\"image\":\"a:1\",\"image_id\":"
	     "\"\",\"image_reported\":\"a:1\"}",
	     "not reported: the server names the image only (\"a:1\"), no "
	     "digest",
	     NULL},
	    {"{\"backend\":\"opensandbox\",\"image\":\"a:1\",\"image_id\":"
	     "\"\",\"image_reported\":null}",
	     "not reported: the server named no image", NULL},
	    {"{\"backend\":\"local\",\"image\":\"host\",\"image_id\":\"\"}",
	     NULL, NULL},
	    {"{\"backend\":\"local\"}", NULL, NULL}, /* an old run_resume */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		cJSON *sb = cJSON_Parse(cases[i].sandbox);
		char *t = ev_image_text(sb), *c = ev_image_change_text(sb);
		if (cases[i].text)
			assert_string_equal(t, cases[i].text);
		else
			assert_null(t);
		if (cases[i].change)
			assert_string_equal(c, cases[i].change);
		else
			assert_null(c);
		free(t);
		free(c);
		cJSON_Delete(sb);
	}
	assert_null(ev_image_text(NULL));
}

static void test_run_resume(void **state)
{
	(void)state;
	struct ev_run run = {.run_id = "r1",
	                     .run_dir = "/runs/r1",
	                     .provider = "openai",
	                     .model = "gpt",
	                     .base_url = "http://h",
	                     .backend = "local",
	                     .image = "host",
	                     .instructions = "ignored",
	                     .workspace = "/runs/r1/workspace"};
	struct ev_resumed_from from = {
	    .seq = 41, .status = "interrupted", .dropped_bytes = 12};
	check_json(ev_run_resume(&run, &from, 1),
	           "{\"type\":\"run_resume\",\"run_id\":\"r1\",\"run_dir\":"
	           "\"/runs/r1\",\"resumed_from\":{\"seq\":41,\"status\":"
	           "\"interrupted\",\"dropped_bytes\":12},\"provider\":"
	           "\"openai\",\"model\":\"gpt\",\"base_url\":\"http://h\","
	           "\"sandbox\":{\"backend\":\"local\",\"image\":\"host\","
	           "\"image_id\":\"\"},\"workspace\":"
	           "\"/runs/r1/workspace\",\"prompt\":true}");
	run.base_url = NULL;
	run.workspace = NULL;
	from.status = "unfinished";
	from.dropped_bytes = 0;
	check_json(ev_run_resume(&run, &from, 0),
	           "{\"type\":\"run_resume\",\"run_id\":\"r1\",\"run_dir\":"
	           "\"/runs/r1\",\"resumed_from\":{\"seq\":41,\"status\":"
	           "\"unfinished\",\"dropped_bytes\":0},\"provider\":"
	           "\"openai\",\"model\":\"gpt\",\"base_url\":\"\",\"sandbox\":"
	           "{\"backend\":\"local\",\"image\":\"host\",\"image_id\":"
	           "\"\"},\"workspace\":\"/workspace\","
	           "\"prompt\":false}");
	/* docker, resumed on another image than the run had */
	struct strv digests = {0};
	run.backend = "docker";
	run.image = "a:1";
	run.image_id = "sha256:9";
	run.repo_digests = &digests;
	run.image_id_was = "sha256:8";
	cJSON *ev = ev_run_resume(&run, &from, 0);
	char *sb = json_print(ev_item(ev, EVF_SANDBOX));
	assert_string_equal(sb, "{\"backend\":\"docker\",\"image\":\"a:1\","
	                        "\"image_id\":\"sha256:9\",\"repo_digests\":[],"
	                        "\"image_id_was\":\"sha256:8\"}");
	free(sb);
	cJSON_Delete(ev);
}

static void test_run_end(void **state)
{
	(void)state;
	cJSON *outputs = cJSON_CreateArray();
	cJSON_AddItemToArray(outputs, ev_run_output("output/a.png", 1, 2048,
	                                            "out/output/a.png", NULL));
	cJSON_AddItemToArray(outputs,
	                     ev_run_output("output/b.csv", 0, 0, NULL, NULL));
	cJSON_AddItemToArray(outputs, ev_run_output("../x", 0, 0, NULL,
	                                            "outside the workspace"));
	struct ev_run_end e = {.status = "completed",
	                       .exit_code = 0,
	                       .outputs = outputs,
	                       .turns = 3,
	                       .input_tokens = 900,
	                       .output_tokens = 80,
	                       .cost_usd = 0,
	                       .duration_ms = 1500,
	                       .archive = "/runs/r1/workspace.tar.gz"};
	check_json(
	    ev_run_end(&e),
	    "{\"type\":\"run_end\",\"status\":\"completed\",\"exit_code\":"
	    "0,\"outputs\":[{\"path\":\"output/a.png\",\"present\":true,"
	    "\"bytes\":2048,\"copied_to\":\"out/output/a.png\"},{"
	    "\"path\":\"output/b.csv\",\"present\":false,\"bytes\":0,"
	    "\"error\":\"missing\"},{\"path\":\"../x\",\"present\":false,"
	    "\"bytes\":0,\"error\":\"outside the workspace\"}],"
	    "\"totals\":{\"turns\":3,\"input_tokens\":900,"
	    "\"output_tokens\":80,\"cost_usd\":0,\"duration_ms\":1500},"
	    "\"archive\":\"/runs/r1/workspace.tar.gz\"}");
	e = (struct ev_run_end){.status = "interrupted", .exit_code = 130};
	check_json(ev_run_end(&e),
	           "{\"type\":\"run_end\",\"status\":\"interrupted\","
	           "\"exit_code\":130,\"outputs\":[],\"totals\":{\"turns\":0,"
	           "\"input_tokens\":0,\"output_tokens\":0,\"cost_usd\":0,"
	           "\"duration_ms\":0},\"archive\":null}");
}

/* mcp_tools and mcp_call. */
static void test_mcp(void **state)
{
	(void)state;
	check_json(ev_mcp_tools(cJSON_Parse("[{\"name\":\"db\",\"transport\":"
	                                    "\"stdio\",\"status\":\"ready\"}]"),
	                        cJSON_Parse("[{\"name\":\"db__q\",\"server\":"
	                                    "\"db\",\"tool\":\"q\"}]")),
	           "{\"type\":\"mcp_tools\",\"servers\":[{\"name\":\"db\","
	           "\"transport\":\"stdio\",\"status\":\"ready\"}],\"tools\":"
	           "[{\"name\":\"db__q\",\"server\":\"db\",\"tool\":\"q\"}]}");
	struct ev_mcp_call c = {.id = "c1",
	                        .server = "db",
	                        .tool = "q",
	                        .duration_ms = 12,
	                        .file = "mcp/db/q-1.csv",
	                        .rows = 3,
	                        .columns = 2,
	                        .bytes = 99};
	check_json(ev_mcp_call(&c),
	           "{\"type\":\"mcp_call\",\"id\":\"c1\",\"server\":"
	           "\"db\",\"tool\":\"q\",\"duration_ms\":12,"
	           "\"is_error\":false,\"file\":\"mcp/db/q-1.csv\","
	           "\"rows\":3,\"columns\":2,\"bytes\":99}");
	c = (struct ev_mcp_call){.id = "c2",
	                         .server = "db",
	                         .tool = "q",
	                         .duration_ms = 5,
	                         .is_error = 1,
	                         .error = "timed out",
	                         .rows = -1};
	check_json(ev_mcp_call(&c),
	           "{\"type\":\"mcp_call\",\"id\":\"c2\",\"server\":"
	           "\"db\",\"tool\":\"q\",\"duration_ms\":5,"
	           "\"is_error\":true,\"error\":\"timed out\"}");
	cJSON *schema = cJSON_Parse("{\"type\":\"object\"}");
	cJSON *content = cJSON_Parse("{\"n\":2}");
	struct ev_mcp_elicit el = {.id = "elicit-1",
	                           .server = "db",
	                           .call = "c3",
	                           .message = "how many?",
	                           .schema = schema,
	                           .action = "accept",
	                           .content = content,
	                           .by = "person"};
	check_json(ev_mcp_elicit(&el),
	           "{\"type\":\"mcp_elicit\",\"id\":\"elicit-1\",\"server\":"
	           "\"db\",\"call\":\"c3\",\"message\":\"how many?\","
	           "\"schema\":{\"type\":\"object\"},\"action\":\"accept\","
	           "\"content\":{\"n\":2},\"by\":\"person\"}");
	el = (struct ev_mcp_elicit){.id = "elicit-2",
	                            .server = "db",
	                            .message = "m",
	                            .action = "decline",
	                            .by = "nobody"};
	check_json(ev_mcp_elicit(&el),
	           "{\"type\":\"mcp_elicit\",\"id\":\"elicit-2\",\"server\":"
	           "\"db\",\"message\":\"m\",\"schema\":{},\"action\":"
	           "\"decline\",\"by\":\"nobody\"}");
	cJSON_Delete(schema);
	cJSON_Delete(content);
	check_json(ev_mcp_progress("c1", 3, 10, "rows", 1500),
	           "{\"type\":\"progress\",\"what\":\"mcp\",\"subject\":"
	           "\"c1\",\"done\":3,\"total\":10,\"elapsed_ms\":1500,"
	           "\"message\":\"rows\"}");
}

/* Numbers from a record or a stream past an integer's range saturate
 * (a cast of them was undefined: the Anthropic fuzzer's index 1e300). */
static void test_numbers_saturate(void **state)
{
	(void)state;
	cJSON *j = cJSON_Parse("{\"turn\":1e300,\"seq\":-1e300,\"window\":7.9,"
	                       "\"exit_code\":\"3\",\"index\":-2147483649}");
	assert_non_null(j);
	assert_int_equal(ev_int(j, EVF_TURN, 0), INT_MAX);
	assert_true(ev_long(j, EVF_SEQ, 0) == -9007199254740992L);
	assert_int_equal(ev_long(j, EVF_WINDOW, 0), 7);
	assert_int_equal(ev_int(j, EVF_EXIT_CODE, -1), -1); /* not a number */
	assert_int_equal(json_int(j, "index", 0), INT_MIN);
	assert_int_equal(json_int(j, "turn", 0), INT_MAX);
	assert_int_equal(json_long(j, "missing", 5), 5);
	assert_int_equal(json_num_long(0.0 / 0.0, 9), 9);
	cJSON_Delete(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names_round_trip),
	    cmocka_unit_test(test_field_table),
	    cmocka_unit_test(test_simple_events),
	    cmocka_unit_test(test_model_request),
	    cmocka_unit_test(test_assistant_message),
	    cmocka_unit_test(test_usage),
	    cmocka_unit_test(test_tool_call_and_result),
	    cmocka_unit_test(test_exec_events),
	    cmocka_unit_test(test_approval_request),
	    cmocka_unit_test(test_approval),
	    cmocka_unit_test(test_python_session),
	    cmocka_unit_test(test_replay_and_step),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_run_start),
	    cmocka_unit_test(test_image_text),
	    cmocka_unit_test(test_run_resume),
	    cmocka_unit_test(test_run_end),
	    cmocka_unit_test(test_numbers_saturate),
	    cmocka_unit_test(test_mcp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
