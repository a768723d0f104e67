/* step.c: step mode. Breakpoints before each model request and before
 * each execution (after approval): the session emits step_pause, waits
 * in SESSION_PAUSED for the frontend's session_step, and records the
 * answer in step_resume (an edit with the original and final command,
 * like an approval edit). */
#include "agent_internal.h"

#include "assay/json.h"
#include "assay/llm.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

static const char *const SKIPPED =
    "[skipped by the user in step mode: this call did not run. Do not "
    "retry it as it is; go on without it or ask the user.]";

struct step_pause {
	struct session_step st;
	const char **tools;
	char *last_role;
	char *last_message;
	char *id;
	char *tool;
	char *subject;
	int idx; /* the call's index in s->pending */
};

static void pause_free(struct step_pause *p)
{
	if (!p)
		return;
	free(p->tools);
	free(p->last_role);
	free(p->last_message);
	free(p->id);
	free(p->tool);
	free(p->subject);
	free(p);
}

void step_clear(struct session *s)
{
	pause_free(s->pause);
	s->pause = NULL;
	s->request_cleared = 0;
	s->call_cleared = 0;
}

void step_free(struct session *s)
{
	if (s->step_timer)
		loop_timer_cancel(s->loop, s->step_timer);
	s->step_timer = 0;
	step_clear(s);
}

void session_set_stepper(struct session *s, const struct session_stepper *ops,
                         void *arg)
{
	s->stepper = ops ? *ops : (struct session_stepper){0};
	s->stepper_arg = arg;
}

void session_set_step(struct session *s, int on)
{
	s->step_on = on;
}

int session_step_mode(const struct session *s)
{
	return s->step_on;
}

const struct session_step *session_step_pending(const struct session *s)
{
	return s->pause ? &s->pause->st : NULL;
}

static int stepping(struct session *s)
{
	return s->step_on && s->stepper.pause && s->state != SESSION_DONE;
}

static void paused(struct session *s, struct step_pause *p, cJSON *ev)
{
	s->pause = p;
	s->state = SESSION_PAUSED;
	session_emit(s, ev);
	s->stepper.pause(s->stepper_arg, &p->st);
}

/* The text of a message as the model would read it. */
static char *message_text(const cJSON *m)
{
	const char *content = json_str(m, "content", "");
	const cJSON *calls = cJSON_GetObjectItem(m, "tool_calls");
	if (!cJSON_GetArraySize(calls))
		return xstrdup(content);
	char *c = json_print(calls);
	char *t =
	    xasprintf("%s%stool calls: %s", content, *content ? "\n" : "", c);
	free(c);
	return t;
}

int step_before_request(struct session *s, const struct llm_request *req)
{
	/* a pass is for this request only, whether step mode is still on
	 * or was turned off and on again meanwhile */
	int cleared = s->request_cleared;
	s->request_cleared = 0;
	if (!stepping(s) || cleared)
		return 0;
	struct step_pause *p = xcalloc(1, sizeof *p);
	int nt = cJSON_GetArraySize(req->tools);
	p->tools = xcalloc((size_t)nt + 1, sizeof *p->tools);
	for (int i = 0; i < nt; i++)
		p->tools[i] =
		    json_str(cJSON_GetArrayItem(req->tools, i), "name", "?");
	char *msgs = json_print(req->messages);
	char *tools = json_print(req->tools);
	size_t chars = strlen(msgs) + strlen(tools) +
	               (req->system ? strlen(req->system) : 0);
	free(msgs);
	free(tools);
	int nm = cJSON_GetArraySize(req->messages);
	const cJSON *last = cJSON_GetArrayItem(req->messages, nm - 1);
	p->last_role = xstrdup(json_str(last, "role", ""));
	p->last_message = last ? message_text(last) : xstrdup("");
	p->st = (struct session_step){
	    .kind = SESSION_STEP_REQUEST,
	    .turn = s->turn + 1,
	    .messages = (size_t)nm,
	    .est_input_tokens = (long)(chars / 4),
	    .tools = p->tools,
	    .ntools = (size_t)nt,
	    .last_role = p->last_role,
	    .last_message = p->last_message,
	};
	cJSON *ev = event_new("step_pause");
	cJSON_AddStringToObject(ev, "kind", "request");
	cJSON_AddNumberToObject(ev, "turn", p->st.turn);
	cJSON_AddNumberToObject(ev, "messages", nm);
	cJSON_AddNumberToObject(ev, "est_input_tokens",
	                        (double)p->st.est_input_tokens);
	cJSON *names = cJSON_AddArrayToObject(ev, "tools");
	for (int i = 0; i < nt; i++)
		cJSON_AddItemToArray(names, cJSON_CreateString(p->tools[i]));
	paused(s, p, ev);
	return 1;
}

/* The command, code or path a call acts on. */
static const char *subject_of(const cJSON *call)
{
	const cJSON *args = cJSON_GetObjectItem(call, "arguments");
	const char *v = json_str(args, "command", NULL);
	if (!v)
		v = json_str(args, "code", NULL);
	if (!v)
		v = json_str(args, "path", NULL);
	return v ? v : "";
}

int step_before_exec(struct session *s, const cJSON *call)
{
	/* a pass is for this call only (see step_before_request) */
	int cleared = s->call_cleared == s->next_call + 1;
	s->call_cleared = 0;
	if (!stepping(s) || cleared)
		return 0;
	struct step_pause *p = xcalloc(1, sizeof *p);
	p->id = xstrdup(json_str(call, "id", ""));
	p->tool = xstrdup(json_str(call, "name", ""));
	p->subject = xstrdup(subject_of(call));
	p->idx = s->next_call;
	p->st = (struct session_step){
	    .kind = SESSION_STEP_EXEC,
	    .turn = s->turn,
	    .id = p->id,
	    .tool = p->tool,
	    .subject = p->subject,
	    .editable = !strcmp(p->tool, "shell") || !strcmp(p->tool, "python"),
	};
	cJSON *ev = event_new("step_pause");
	cJSON_AddStringToObject(ev, "kind", "exec");
	cJSON_AddNumberToObject(ev, "turn", s->turn);
	cJSON_AddStringToObject(ev, "id", p->id);
	cJSON_AddStringToObject(ev, "tool", p->tool);
	cJSON_AddStringToObject(ev, "command", p->subject);
	paused(s, p, ev);
	return 1;
}

static void resume_timer(void *arg)
{
	struct session *s = arg;
	s->step_timer = 0;
	if (s->state != SESSION_PAUSED)
		return;
	if (s->call_cleared) {
		s->state = SESSION_EXECUTING;
		session_run_next(s);
	} else {
		s->state = SESSION_REQUESTING;
		session_request(s);
	}
}

static void emit_resume(struct session *s, const char *action,
                        const char *original, const char *final)
{
	cJSON *ev = event_new("step_resume");
	cJSON_AddStringToObject(ev, "action", action);
	cJSON_AddStringToObject(
	    ev, "kind",
	    s->pause->st.kind == SESSION_STEP_EXEC ? "exec" : "request");
	if (s->pause->id)
		cJSON_AddStringToObject(ev, "id", s->pause->id);
	if (original)
		cJSON_AddStringToObject(ev, "original", original);
	if (final)
		cJSON_AddStringToObject(ev, "final", final);
	session_emit(s, ev);
}

int session_step(struct session *s, enum session_step_action action,
                 const char *edited, char **err)
{
	struct step_pause *p = s->pause;
	if (!p || s->state != SESSION_PAUSED)
		return set_err(err, "the run is not paused at a step");
	int exec = p->st.kind == SESSION_STEP_EXEC;
	switch (action) {
	case SESSION_STEP_CONTINUE:
		emit_resume(s, "continue", NULL, NULL);
		if (exec)
			s->call_cleared = p->idx + 1;
		else
			s->request_cleared = 1;
		break;
	case SESSION_STEP_EDIT:
		if (!exec)
			return set_err(err, "only a command or code can be "
			                    "edited, not a model request");
		if (!p->st.editable)
			return set_err(err, "a %s call cannot be edited",
			               p->tool);
		if (approval_set_edit(s, p->id, edited, err) < 0)
			return -1;
		emit_resume(s, "edit", p->subject, edited);
		s->call_cleared = p->idx + 1;
		break;
	case SESSION_STEP_SKIP: {
		if (!exec)
			return set_err(err,
			               "a model request cannot be skipped: "
			               "send it (n) or end the run (x)");
		emit_resume(s, "skip", p->subject, NULL);
		char *id = xstrdup(p->id);
		step_clear(s);
		s->next_call++;
		s->state = SESSION_EXECUTING;
		/* nothing ran: not even an approval edit of it */
		s->result_as_is = 1;
		tools_finished(s, id, SKIPPED, 1);
		free(id);
		return 0;
	}
	case SESSION_STEP_END:
		emit_resume(s, "end", NULL, NULL);
		step_clear(s);
		s->interrupted = 1;
		session_finish(s, "interrupted", EXIT_INTERRUPTED);
		return 0;
	default:
		return set_err(err, "unknown step action %d", (int)action);
	}
	int call_cleared = s->call_cleared,
	    request_cleared = s->request_cleared;
	pause_free(s->pause);
	s->pause = NULL;
	s->call_cleared = call_cleared;
	s->request_cleared = request_cleared;
	if (!s->step_timer)
		s->step_timer = loop_timer_add(s->loop, 0, resume_timer, s);
	return 0;
}
