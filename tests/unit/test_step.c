/* test_step.c: step mode driven through a real session (scripted model,
 * local bubblewrap sandbox). A breakpoint passed while step mode is off
 * must not let a later call of the same index through once step mode
 * is back on (the TUI's `s` toggled off and on); a call the user edited
 * at its approval and then skipped at its breakpoint is told to the
 * model as skipped only, not as "what ran instead". */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/config.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/session.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *SCRIPT =
    "{\"turns\": ["
    "{\"text\": \"one\", \"tool_calls\": [{\"name\": \"shell\", "
    "\"arguments\": {\"command\": \"echo one > one.txt\"}}]},"
    "{\"text\": \"two\", \"tool_calls\": [{\"name\": \"shell\", "
    "\"arguments\": {\"command\": \"echo two > two.txt\"}}]},"
    "{\"text\": \"done\", \"tool_calls\": []}]}";

/* What a scenario does at each pause or approval request. */
struct run {
	struct loop *loop;
	struct session *s;
	cJSON *events;
	int exec_pauses, request_pauses;
	int scenario; /* 1: toggle; 2: edit then skip */
	uint64_t timer;
	char *approve_id;
};

static void on_event(void *arg, const cJSON *ev)
{
	struct run *r = arg;
	cJSON_AddItemToArray(r->events, cJSON_Duplicate(ev, 1));
	/* scenario 1: step mode back on once call 1 has its result */
	if (r->scenario == 1 &&
	    !strcmp(json_str(ev, "type", ""), "tool_result") &&
	    !session_step_mode(r->s))
		session_set_step(r->s, 1);
}

static void answer_pause(void *arg)
{
	struct run *r = arg;
	r->timer = 0;
	const struct session_step *st = session_step_pending(r->s);
	if (!st)
		return;
	char *err = NULL;
	int rc;
	if (st->kind == SESSION_STEP_REQUEST) {
		rc = session_step(r->s, SESSION_STEP_CONTINUE, NULL, &err);
	} else if (r->scenario == 1) {
		/* the first call: step mode off, then continue */
		session_set_step(r->s, 0);
		rc = session_step(r->s, SESSION_STEP_CONTINUE, NULL, &err);
	} else {
		rc = session_step(r->s, SESSION_STEP_SKIP, NULL, &err);
	}
	if (rc < 0)
		fail_msg("session_step: %s", err);
}

static void on_pause(void *arg, const struct session_step *st)
{
	struct run *r = arg;
	if (st->kind == SESSION_STEP_EXEC)
		r->exec_pauses++;
	else
		r->request_pauses++;
	r->timer = loop_timer_add(r->loop, 0, answer_pause, r);
}

static void answer_approval(void *arg)
{
	struct run *r = arg;
	char *err = NULL;
	char *id = r->approve_id;
	r->approve_id = NULL;
	if (session_approve(r->s, id, SESSION_EDIT, "echo edited > edited.txt",
	                    NULL, SESSION_SCOPE_SESSION, &err) < 0)
		fail_msg("session_approve: %s", err);
	free(id);
}

static void on_approval(void *arg, const struct session_approval *req)
{
	struct run *r = arg;
	free(r->approve_id);
	r->approve_id = xstrdup(req->id);
	loop_timer_add(r->loop, 0, answer_approval, r);
}

static void on_cancel(void *arg, const char *id)
{
	(void)arg;
	(void)id;
}

static void give_up(void *arg)
{
	struct run *r = arg;
	fprintf(stderr, "the run did not end in 60 s\n");
	session_interrupt(r->s);
}

/* Run the script in dir with step mode on; scenario as above. */
static void drive(struct run *r, const char *dir, int scenario)
{
	char *script = xasprintf("%s/script.json", dir);
	assert_int_equal(
	    write_file_replace(script, SCRIPT, strlen(SCRIPT), NULL), 0);
	struct config c;
	config_defaults(&c);
	config_set(&c.provider, "script");
	config_set(&c.script, script);
	char *run_dir = xasprintf("%s/run%d", dir, scenario);
	config_set(&c.run_dir, run_dir);
	char *out = xasprintf("%s/out", dir);
	config_set(&c.out_dir, out);
	config_set(&c.ask, scenario == 2 ? "all" : "none");
	memset(r, 0, sizeof *r);
	r->scenario = scenario;
	r->events = cJSON_CreateArray();
	r->loop = loop_new();
	char *err = NULL;
	r->s = session_new(r->loop, &c);
	assert_non_null(r->s);
	session_observe(r->s, on_event, r);
	struct session_stepper st = {on_pause};
	session_set_stepper(r->s, &st, r);
	struct session_approver ap = {on_approval, on_cancel, NULL, NULL};
	session_set_approver(r->s, &ap, r);
	session_set_step(r->s, 1);
	if (session_start(r->s, "make two files", &err) < 0)
		fail_msg("session_start: %s", err);
	uint64_t guard = loop_timer_add(r->loop, 60000, give_up, r);
	while (session_state(r->s) != SESSION_DONE)
		loop_once(r->loop, -1);
	loop_timer_cancel(r->loop, guard);
	session_free(r->s);
	loop_free(r->loop);
	free(r->approve_id);
	config_free(&c);
	free(script);
	free(run_dir);
	free(out);
}

static int pauses_for_call(const cJSON *events, int turn)
{
	int n = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, events)
	{
		if (!strcmp(json_str(e, "type", ""), "step_pause") &&
		    !strcmp(json_str(e, "kind", ""), "exec") &&
		    (int)json_num(e, "turn", 0) == turn)
			n++;
	}
	return n;
}

static void toggled_step_still_pauses(void **state)
{
	const char *dir = *state;
	struct run r;
	drive(&r, dir, 1);
	/* turn 1's call paused (then step mode went off); turn 2's call
	 * is again at index 0 and must pause too */
	assert_int_equal(pauses_for_call(r.events, 1), 1);
	assert_int_equal(pauses_for_call(r.events, 2), 1);
	const cJSON *last =
	    cJSON_GetArrayItem(r.events, cJSON_GetArraySize(r.events) - 1);
	assert_string_equal(json_str(last, "status", ""), "completed");
	cJSON_Delete(r.events);
}

static void skip_after_edit_says_skipped(void **state)
{
	const char *dir = *state;
	struct run r;
	drive(&r, dir, 2);
	int results = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, r.events)
	{
		if (strcmp(json_str(e, "type", ""), "tool_result"))
			continue;
		const char *content = json_str(e, "content", "");
		results++;
		assert_true(!strncmp(content, "[skipped by the user", 20));
		assert_null(strstr(content, "what ran instead"));
		assert_null(strstr(content, "edited"));
	}
	assert_int_equal(results, 2);
	char *edited = xasprintf("%s/run2/workspace/edited.txt", dir);
	assert_int_equal(access(edited, F_OK), -1);
	free(edited);
	cJSON_Delete(r.events);
}

static int setup(void **state)
{
	if (system("bwrap --unshare-all --ro-bind / / true 2>/dev/null") != 0) {
		printf("SKIPPED: bubblewrap cannot create namespaces here\n");
		exit(77);
	}
	char tmpl[] = "/tmp/test_step.XXXXXX";
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
	/* the scripted model answers at once */
	setenv("ASSAY_SCRIPT_DELAY_MS", "0", 1);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(toggled_step_still_pauses),
	    cmocka_unit_test(skip_after_edit_says_skipped),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
