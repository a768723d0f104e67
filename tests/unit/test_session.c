/* test_session.c: the session's states driven through a real session
 * (scripted model, local bubblewrap sandbox). The sandbox starts
 * through the loop: session_start returns in STARTING and a sandbox
 * that cannot start ends the run later with exit code 3, its reason in
 * session_error and nothing recorded; the end goes through ENDING (the
 * outputs, the archive and the stop complete from the loop) before
 * DONE and run_end; an interrupt during a call waits in INTERRUPTING
 * for the call's result, which is recorded before run_end; an
 * interactive Ctrl-C during a call goes CANCELLING, and the turn's
 * other calls get "not run" results before the session is IDLE. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/config.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/session.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct run {
	struct loop *loop;
	struct session *s;
	struct config c;
	cJSON *events;
	int act_on_exec;          /* 1: interrupt, 2: cancel at exec_start */
	enum session_state after; /* the state right after acting */
	char *dir;
};

static void on_event(void *arg, const cJSON *ev)
{
	struct run *r = arg;
	cJSON_AddItemToArray(r->events, cJSON_Duplicate(ev, 1));
}

static void act_timer(void *arg)
{
	struct run *r = arg;
	if (r->act_on_exec == 1)
		session_interrupt(r->s);
	else
		assert_int_equal(session_cancel(r->s), 1);
	r->after = session_state(r->s);
	r->act_on_exec = 0;
}

/* Act once the first command runs (from the loop, as a frontend). */
static void on_exec_event(void *arg, const cJSON *ev)
{
	struct run *r = arg;
	if (r->act_on_exec && event_type_of(ev) == EV_EXEC_START)
		loop_timer_add(r->loop, 200, act_timer, r);
}

static void give_up(void *arg)
{
	struct run *r = arg;
	fail_msg("the session did not reach the state in 60 s (it is in %d)",
	         (int)session_state(r->s));
}

/* Run the loop until the session is in state st. */
static void wait_state(struct run *r, enum session_state st)
{
	uint64_t guard = loop_timer_add(r->loop, 60000, give_up, r);
	while (session_state(r->s) != st)
		loop_once(r->loop, -1);
	loop_timer_cancel(r->loop, guard);
}

static void setup_run(struct run *r, const char *dir, const char *name,
                      const char *script)
{
	memset(r, 0, sizeof *r);
	r->dir = xasprintf("%s/%s", dir, name);
	assert_int_equal(mkdir_p(r->dir, NULL), 0);
	char *path = xasprintf("%s/script.json", r->dir);
	assert_int_equal(write_file_replace(path, script, strlen(script), NULL),
	                 0);
	config_defaults(&r->c);
	config_set(&r->c.provider, "script");
	config_set(&r->c.script, path);
	free(path);
	char *run_dir = xasprintf("%s/run", r->dir);
	config_set(&r->c.run_dir, run_dir);
	free(run_dir);
	char *out = xasprintf("%s/out", r->dir);
	config_set(&r->c.out_dir, out);
	free(out);
	config_set(&r->c.ask, "none");
	r->events = cJSON_CreateArray();
	r->loop = loop_new();
	r->s = session_new(r->loop, &r->c);
	assert_non_null(r->s);
	session_observe(r->s, on_event, r);
	session_observe(r->s, on_exec_event, r);
}

static void free_run(struct run *r)
{
	session_free(r->s);
	loop_free(r->loop);
	config_free(&r->c);
	cJSON_Delete(r->events);
	free(r->dir);
}

static const cJSON *last_event(const struct run *r)
{
	return cJSON_GetArrayItem(r->events, cJSON_GetArraySize(r->events) - 1);
}

/* The index of the first event of type t with id (NULL: any), or -1. */
static int index_of(const struct run *r, enum event_type t, const char *id)
{
	int i = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, r->events)
	{
		if (event_type_of(e) == t &&
		    (!id || !strcmp(json_str(e, "id", ""), id)))
			return i;
		i++;
	}
	return -1;
}

static int count_of(const struct run *r, enum event_type t)
{
	int n = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, r->events)
	{
		n += event_type_of(e) == t;
	}
	return n;
}

static const char *ONE_ANSWER =
    "{\"turns\": [{\"text\": \"hello\", \"tool_calls\": []}]}";

static void start_failure_arrives_later(void **state)
{
	struct run r;
	setup_run(&r, *state, "nodocker", ONE_ANSWER);
	config_set(&r.c.sandbox, "docker");
	char *sock = xasprintf("unix://%s/no-such.sock", r.dir);
	setenv("DOCKER_HOST", sock, 1);
	char *err = NULL;
	assert_int_equal(session_start(r.s, "hi", &err), 0);
	assert_int_equal(session_state(r.s), SESSION_STARTING);
	assert_null(session_sandbox(r.s));
	wait_state(&r, SESSION_DONE);
	unsetenv("DOCKER_HOST");
	assert_int_equal(session_exit_code(r.s), EXIT_SANDBOX);
	assert_non_null(session_error(r.s));
	/* the run never got going: nothing seen, nothing recorded */
	assert_int_equal(cJSON_GetArraySize(r.events), 0);
	char *run_dir = xstrdup(session_run_dir(r.s));
	free_run(&r);
	struct stat st;
	assert_int_equal(stat(run_dir, &st), -1);
	free(run_dir);
	free(sock);
}

static void end_goes_through_ending(void **state)
{
	struct run r;
	setup_run(&r, *state, "end", ONE_ANSWER);
	session_set_interactive(r.s, 1);
	char *err = NULL;
	assert_int_equal(session_start(r.s, NULL, &err), 0);
	wait_state(&r, SESSION_IDLE);
	assert_null(session_error(r.s));
	assert_int_equal(event_type_of(last_event(&r)), EV_IDLE);
	session_end(r.s);
	/* the outputs, the archive and the stop come from the loop */
	assert_int_equal(session_state(r.s), SESSION_ENDING);
	assert_int_equal(index_of(&r, EV_RUN_END, NULL), -1);
	wait_state(&r, SESSION_DONE);
	const cJSON *end = last_event(&r);
	assert_int_equal(event_type_of(end), EV_RUN_END);
	assert_string_equal(json_str(end, "status", ""), "completed");
	assert_int_equal(session_exit_code(r.s), EXIT_OK);
	struct stat st;
	assert_int_equal(stat(json_str(end, "archive", ""), &st), 0);
	assert_int_equal(session_send(r.s, "more", &err), -1);
	assert_non_null(strstr(err, "ended"));
	free(err);
	free_run(&r);
}

static const char *SLEEPY =
    "{\"turns\": [{\"text\": \"two calls\", \"tool_calls\": ["
    "{\"name\": \"shell\", \"arguments\": {\"command\": \"sleep 30\"}},"
    "{\"name\": \"shell\", \"arguments\": {\"command\": \"echo never > "
    "never.txt\"}}]},"
    "{\"text\": \"done\", \"tool_calls\": []}]}";

static void interrupt_records_the_running_call(void **state)
{
	struct run r;
	setup_run(&r, *state, "interrupt", SLEEPY);
	r.act_on_exec = 1;
	char *err = NULL;
	assert_int_equal(session_start(r.s, "sleep", &err), 0);
	wait_state(&r, SESSION_DONE);
	assert_int_equal(r.after, SESSION_INTERRUPTING);
	assert_int_equal(session_exit_code(r.s), EXIT_INTERRUPTED);
	const cJSON *end = last_event(&r);
	assert_string_equal(json_str(end, "status", ""), "interrupted");
	const cJSON *start =
	    cJSON_GetArrayItem(r.events, index_of(&r, EV_EXEC_START, NULL));
	const char *id = json_str(start, "id", "");
	int result = index_of(&r, EV_TOOL_RESULT, id);
	assert_true(result > 0);
	assert_true(result < index_of(&r, EV_RUN_END, NULL));
	/* the second call never ran and no second request was made */
	assert_int_equal(count_of(&r, EV_EXEC_START), 1);
	assert_int_equal(count_of(&r, EV_MODEL_REQUEST), 1);
	char *never = xasprintf("%s/run/workspace/never.txt", r.dir);
	assert_int_equal(access(never, F_OK), -1);
	free(never);
	free_run(&r);
}

static void cancel_skips_the_rest_of_the_turn(void **state)
{
	struct run r;
	setup_run(&r, *state, "cancel", SLEEPY);
	session_set_interactive(r.s, 1);
	r.act_on_exec = 2;
	char *err = NULL;
	assert_int_equal(session_start(r.s, "sleep", &err), 0);
	wait_state(&r, SESSION_IDLE);
	assert_int_equal(r.after, SESSION_CANCELLING);
	const cJSON *idle = last_event(&r);
	assert_int_equal(event_type_of(idle), EV_IDLE);
	assert_string_equal(json_str(idle, "reason", ""), "cancelled");
	/* both calls have a result; the second says it did not run */
	int results = 0;
	const cJSON *e, *last = NULL;
	cJSON_ArrayForEach(e, r.events)
	{
		if (event_type_of(e) == EV_TOOL_RESULT) {
			results++;
			last = e;
		}
	}
	assert_int_equal(results, 2);
	assert_non_null(strstr(json_str(last, "content", ""), "not run"));
	session_end(r.s);
	wait_state(&r, SESSION_DONE);
	assert_string_equal(json_str(last_event(&r), "status", ""),
	                    "completed");
	free_run(&r);
}

static int setup(void **state)
{
	char tmpl[] = "/tmp/test_session.XXXXXX";
	char *dir = mkdtemp(tmpl);
	assert_non_null(dir);
	*state = xstrdup(dir);
	return 0;
}

static int teardown(void **state)
{
	rm_rf(*state);
	free(*state);
	return 0;
}

int main(void)
{
	if (system("bwrap --unshare-all --ro-bind / / true 2>/dev/null") != 0) {
		printf("SKIPPED: bubblewrap cannot create namespaces here\n");
		return 77;
	}
	/* the scripted model answers at once */
	setenv("ASSAY_SCRIPT_DELAY_MS", "0", 1);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(start_failure_arrives_later),
	    cmocka_unit_test(end_goes_through_ending),
	    cmocka_unit_test(interrupt_records_the_running_call),
	    cmocka_unit_test(cancel_skips_the_rest_of_the_turn),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
