/* step.c: step mode. Breakpoints before each model request and before
 * each execution (after approval). Step decides and the session acts:
 * a breakpoint makes the session enter PAUSED (which emits step_pause
 * and tells the stepper); an answer is checked and recorded here
 * (step_resume, an edit with the original and final command, like an
 * approval edit) and handed back as what the session does next. The
 * JSON it reads (messages, a model's tool calls and their arguments) is
 * not an event. */
#include "agent_internal.h"

#include "assay/events.h"
#include "assay/json.h"
#include "assay/llm.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

const char STEP_SKIPPED[] =
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
	int idx; /* the call's index in the turn */
	int nmessages;
};

/* Free a breakpoint and the strings it shows. */
static void step_pause_free(struct step_pause *p)
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

void step_clear(struct step_ctl *st)
{
	step_pause_free(st->pause);
	st->pause = NULL;
	st->request_cleared = 0;
	st->call_cleared = 0;
}

void step_free(struct step_ctl *st)
{
	step_clear(st);
}

void session_set_stepper(struct session *s, const struct session_stepper *ops,
                         void *arg)
{
	s->step.ops = ops ? *ops : (struct session_stepper){0};
	s->step.arg = arg;
}

void session_set_step(struct session *s, int on)
{
	s->step.on = on;
}

int session_step_mode(const struct session *s)
{
	return s->step.on;
}

const struct session_step *session_step_pending(const struct session *s)
{
	return s->step.pause ? &s->step.pause->st : NULL;
}

/* Whether breakpoints apply: step mode on, and a frontend to answer. */
static int step_active(const struct step_ctl *st)
{
	return st->on && st->ops.pause;
}

/* The text of a message as the model would read it. */
static char *step_message_text(const cJSON *m)
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

enum step_do step_before_request(struct step_ctl *st,
                                 const struct llm_request *req, int turn)
{
	/* a pass is for this request only, whether step mode is still on
	 * or was turned off and on again meanwhile */
	int cleared = st->request_cleared;
	st->request_cleared = 0;
	if (!step_active(st) || cleared)
		return STEP_GO;
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
	p->last_message = last ? step_message_text(last) : xstrdup("");
	p->nmessages = nm;
	p->st = (struct session_step){
	    .kind = SESSION_STEP_REQUEST,
	    .turn = turn,
	    .messages = (size_t)nm,
	    /* images by their tokens, not their base64 */
	    .est_input_tokens =
	        (long)((chars - messages_image_bytes(req->messages)) / 4) +
	        messages_image_tokens(req->messages),
	    .tools = p->tools,
	    .ntools = (size_t)nt,
	    .last_role = p->last_role,
	    .last_message = p->last_message,
	};
	step_pause_free(st->pause);
	st->pause = p;
	return STEP_PAUSE;
}

/* The command, code or path a call acts on. */
static const char *step_subject_of(const cJSON *call)
{
	const cJSON *args = cJSON_GetObjectItem(call, "arguments");
	const char *v = json_str(args, "command", NULL);
	if (!v)
		v = json_str(args, "code", NULL);
	if (!v)
		v = json_str(args, "path", NULL);
	return v ? v : "";
}

enum step_do step_before_exec(struct step_ctl *st, const cJSON *call, int idx,
                              int turn)
{
	/* a pass is for this call only (see step_before_request) */
	int cleared = st->call_cleared == idx + 1;
	st->call_cleared = 0;
	if (!step_active(st) || cleared)
		return STEP_GO;
	struct step_pause *p = xcalloc(1, sizeof *p);
	p->id = xstrdup(json_str(call, "id", ""));
	p->tool = xstrdup(json_str(call, "name", ""));
	p->subject = xstrdup(step_subject_of(call));
	p->idx = idx;
	p->st = (struct session_step){
	    .kind = SESSION_STEP_EXEC,
	    .turn = turn,
	    .id = p->id,
	    .tool = p->tool,
	    .subject = p->subject,
	    .editable = !strcmp(p->tool, "shell") || !strcmp(p->tool, "python"),
	};
	step_pause_free(st->pause);
	st->pause = p;
	return STEP_PAUSE;
}

cJSON *step_pause_event(const struct step_ctl *st)
{
	const struct step_pause *p = st->pause;
	if (p->st.kind == SESSION_STEP_EXEC)
		return ev_step_pause_exec(p->st.turn, p->id, p->tool,
		                          p->subject);
	return ev_step_pause_request(p->st.turn, p->nmessages,
	                             p->st.est_input_tokens, p->st.tools,
	                             p->st.ntools);
}

void step_notify(struct step_ctl *st)
{
	if (st->pause && st->ops.pause)
		st->ops.pause(st->arg, &st->pause->st);
}

/* Record the answer (step_resume). */
static void step_emit_resume(struct session *s, const struct step_pause *p,
                             const char *action, const char *original,
                             const char *final)
{
	session_emit(
	    s, ev_step_resume(
	           action, p->st.kind == SESSION_STEP_EXEC ? "exec" : "request",
	           p->id, original, final));
}

/* The pause is answered with a pass: it goes away, the pass stays until
 * the session goes through that request or call again. */
static enum step_answer step_pass(struct step_ctl *st)
{
	struct step_pause *p = st->pause;
	if (p->st.kind == SESSION_STEP_EXEC)
		st->call_cleared = p->idx + 1;
	else
		st->request_cleared = 1;
	st->pause = NULL;
	step_pause_free(p);
	return STEP_RESUME;
}

enum step_answer step_answer(struct step_ctl *st, struct session *s,
                             enum session_step_action action,
                             const char *edited, char **err)
{
	struct step_pause *p = st->pause;
	if (!p) {
		set_err(err, "the run is not paused at a step");
		return STEP_REFUSED;
	}
	int exec = p->st.kind == SESSION_STEP_EXEC;
	switch (action) {
	case SESSION_STEP_CONTINUE:
		step_emit_resume(s, p, "continue", NULL, NULL);
		return step_pass(st);
	case SESSION_STEP_EDIT:
		if (!exec) {
			set_err(err, "only a command or code can be edited, "
			             "not a model request");
			return STEP_REFUSED;
		}
		if (!p->st.editable) {
			set_err(err, "a %s call cannot be edited", p->tool);
			return STEP_REFUSED;
		}
		if (approval_set_edit(s, p->id, edited, err) < 0)
			return STEP_REFUSED;
		step_emit_resume(s, p, "edit", p->subject, edited);
		return step_pass(st);
	case SESSION_STEP_SKIP:
		if (!exec) {
			set_err(err, "a model request cannot be skipped: "
			             "send it (n) or end the run (x)");
			return STEP_REFUSED;
		}
		step_emit_resume(s, p, "skip", p->subject, NULL);
		step_clear(st);
		return STEP_SKIP;
	case SESSION_STEP_END:
		step_emit_resume(s, p, "end", NULL, NULL);
		step_clear(st);
		return STEP_END;
	}
	set_err(err, "unknown step action %d", (int)action);
	return STEP_REFUSED;
}

enum session_step_kind step_resumes(const struct step_ctl *st)
{
	return st->call_cleared ? SESSION_STEP_EXEC : SESSION_STEP_REQUEST;
}
