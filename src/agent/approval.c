/* approval.c: the POLICY -> ASK -> AWAITING_APPROVAL steps of the
 * session (DESIGN.md section 2). When a turn's tool calls arrive each
 * is classified and decided: allowed or denied by a rule or the mode,
 * or put to the frontend's approver, whose answer comes back through
 * session_approve. Every decision is an `approval` event; calls run in
 * order once their decision is known. The JSON it reads (a model's tool
 * calls, src/llm's, and their arguments) is not an event. */
#include "agent_internal.h"

#include "assay/buf.h"
#include "assay/config.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/policy.h"
#include "assay/trust.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

#define PROJECT_CONFIG ".assay/config.json"
#define WORKDIR "/workspace"

enum approval_state { APPROVAL_ASKING, APPROVAL_RUN, APPROVAL_DENIED };

struct approval {
	enum approval_state state;
	const cJSON *call; /* in s->calls.pending */
	char *id;
	char *tool;
	struct policy_verdict *v;
	cJSON *edited; /* the call with the user's command, when edited */
	char *result;  /* the tool result of a denied call */
	const char **reasons;
	struct session_approval req;
};

static const char *const DENIED_BY_USER =
    "denied by the user: the user chose not to run this call, so it did "
    "not run. Do not retry it as it is; do the task another way, or ask "
    "the user what to do.";

/* Whether a workspace file exists, for the policy (an overwrite or a new
 * file). */
static int approval_exists(void *arg, const char *rel)
{
	struct session *s = arg;
	return snapshot_has(s->scan.snapshot, rel);
}

int approval_init(struct session *s, char **err)
{
	s->appr.policy = policy_new(s->cfg, err);
	if (!s->appr.policy)
		return -1;
	policy_set_exists(s->appr.policy, approval_exists, s);
	return 0;
}

/* Free the turn's decisions. */
static void approval_free_entries(struct session *s)
{
	for (int i = 0; i < s->appr.napprovals; i++) {
		struct approval *a = &s->appr.approvals[i];
		free(a->id);
		free(a->tool);
		policy_verdict_free(a->v);
		cJSON_Delete(a->edited);
		free(a->result);
		free(a->reasons);
	}
	free(s->appr.approvals);
	s->appr.approvals = NULL;
	s->appr.napprovals = 0;
}

void approval_free(struct session *s)
{
	if (s->appr.timer)
		loop_timer_cancel(s->loop, s->appr.timer);
	s->appr.timer = 0;
	approval_free_entries(s);
	policy_free(s->appr.policy);
	s->appr.policy = NULL;
}

void session_set_approver(struct session *s, const struct session_approver *ops,
                          void *arg)
{
	s->appr.approver = ops ? *ops : (struct session_approver){0};
	s->appr.approver_arg = arg;
}

/* The decision about call id of this turn, or NULL. */
static struct approval *approval_find(struct session *s, const char *id)
{
	for (int i = 0; i < s->appr.napprovals; i++)
		if (!strcmp(s->appr.approvals[i].id, id))
			return &s->appr.approvals[i];
	return NULL;
}

/* --- events ------------------------------------------------------ */

/* Emit one decision about call a: the approval event (d says what
 * was decided; the call's id, tool and verdict are filled in here). */
static void approval_emit(struct session *s, const struct approval *a,
                          struct ev_approval *d)
{
	d->id = a->id;
	d->tool = a->tool;
	d->mode = s->cfg->ask;
	d->verdict = a->v;
	if (d->scope && !strcmp(d->scope, "project"))
		d->saved_path = PROJECT_CONFIG;
	session_emit(s, ev_approval(d));
}

/* approval_request: call a is put to the person. */
static void approval_emit_request(struct session *s, const struct approval *a)
{
	session_emit(s, ev_approval_request(&(struct ev_approval_request){
	                    .id = a->id,
	                    .tool = a->tool,
	                    .verdict = a->v,
	                    .cwd = WORKDIR,
	                    .editable = a->req.editable}));
}

/* tool_call: one call of the turn, as the model sent it. */
static void approval_emit_tool_call(struct session *s, const cJSON *call)
{
	session_emit(s, ev_tool_call(json_str(call, "id", ""),
	                             json_str(call, "name", ""),
	                             cJSON_GetObjectItem(call, "arguments")));
}

/* --- deciding ---------------------------------------------------- */

/* A rule that would let this call run, for the "not approved" text. */
static char *approval_example_rule(const struct approval *a)
{
	const struct policy_verdict *v = a->v;
	if (v->save)
		return json_print(cJSON_GetArrayItem(v->save, 0));
	for (size_t k = 0; k < v->nparts; k++) {
		if (!v->parts[k].nreasons && v->nparts > 1)
			continue;
		cJSON *r = cJSON_CreateObject();
		char *glob = policy_glob_escape(v->parts[k].text);
		cJSON_AddStringToObject(r, "match", glob);
		free(glob);
		cJSON_AddStringToObject(r, "action", "allow");
		if (strcmp(a->tool, "shell"))
			cJSON_AddStringToObject(r, "tool", a->tool);
		char *text = json_print(r);
		cJSON_Delete(r);
		return text;
	}
	return NULL;
}

/* The result of a call that needs a person when there is none to ask: why,
 * and how to let it run. */
static char *approval_not_approved(struct session *s, const struct approval *a)
{
	struct buf b;
	buf_init(&b, 0);
	buf_printf(&b,
	           "not approved: this %s call needs a person's approval "
	           "and there is no one to ask (assay runs without a "
	           "terminal), so it did not run.",
	           a->tool);
	if (a->v->nreasons) {
		buf_puts(&b, " Why it needs approval: ");
		for (size_t k = 0; k < a->v->nreasons; k++)
			buf_printf(&b, "%s%s", k ? "; " : "",
			           a->v->reasons[k].text);
		buf_puts(&b, ".");
	} else {
		buf_printf(&b, " --ask %s asks about every call.", s->cfg->ask);
	}
	/* no rule is suggested for what cannot be seen: it would allow
	 * more than anyone can read */
	int blind = 0;
	for (size_t k = 0; k < a->v->nreasons; k++)
		blind |= a->v->reasons[k].kind == POLICY_HIDDEN ||
		         a->v->reasons[k].kind == POLICY_UNPARSED;
	char *rule = blind ? NULL : approval_example_rule(a);
	buf_puts(&b, " To let calls like it run, the user can start assay "
	             "with --ask none (nothing is asked; deny rules still "
	             "apply) or add an allow rule to .assay/config.json or "
	             "assay.json");
	if (rule)
		buf_printf(&b, ", for example \"rules\": [%s]", rule);
	buf_puts(&b, ". Until then, do the task without this call.");
	free(rule);
	return buf_detach(&b);
}

/* The result of a call a deny rule forbids. */
static char *approval_denied_by_rule(const cJSON *rule)
{
	char *r = json_print(rule);
	char *text = xasprintf(
	    "denied by a rule: %s in the configuration forbids this call, so "
	    "it did not run. Do not try to get around the rule; do the task "
	    "another way, or tell the user what you need.",
	    r);
	free(r);
	return text;
}

/* What the approver is shown about call a. */
static void approval_fill_request(struct approval *a)
{
	const struct policy_verdict *v = a->v;
	a->reasons = xcalloc(v->nreasons + 1, sizeof *a->reasons);
	for (size_t k = 0; k < v->nreasons; k++)
		a->reasons[k] = v->reasons[k].text;
	a->req = (struct session_approval){
	    .id = a->id,
	    .tool = a->tool,
	    .subject = v->subject,
	    .cwd = WORKDIR,
	    .reasons = a->reasons,
	    .nreasons = v->nreasons,
	    .rules = v->save,
	    .no_always = v->no_save,
	    .editable = !strcmp(a->tool, "shell") || !strcmp(a->tool, "python"),
	};
}

/* Arguments the tool will refuse anyway need no decision. */
static int approval_bad_arguments(const cJSON *call)
{
	return json_str(call, "arguments_error", NULL) ||
	       !cJSON_IsObject(cJSON_GetObjectItem(call, "arguments"));
}

/* Decide call a by the policy: allowed, denied, or put to the approver. */
static void approval_decide(struct session *s, struct approval *a)
{
	const cJSON *args = cJSON_GetObjectItem(a->call, "arguments");
	if (approval_bad_arguments(a->call)) {
		a->state = APPROVAL_RUN;
		approval_emit(s, a,
		              &(struct ev_approval){
		                  .decision = "approved",
		                  .by = "mode",
		                  .final = "",
		                  .note = "the arguments are not valid: the "
		                          "tool reports the error"});
		return;
	}
	if (mcptool_is(s, a->tool)) { /* judged as its server and tool */
		cJSON *m = mcptool_policy_args(s, a->tool, args);
		a->v = policy_check(s->appr.policy, "mcp", m);
		cJSON_Delete(m);
	} else {
		a->v = policy_check(s->appr.policy, a->tool, args);
	}
	struct policy_verdict *v = a->v;
	if (v->action == POLICY_ALLOW) {
		a->state = APPROVAL_RUN;
		approval_emit(s, a,
		              &(struct ev_approval){.decision = "approved",
		                                    .by = v->by,
		                                    .rule = v->rule,
		                                    .final = v->subject});
	} else if (v->action == POLICY_DENY) {
		a->state = APPROVAL_DENIED;
		a->result = approval_denied_by_rule(v->rule);
		approval_emit(s, a,
		              &(struct ev_approval){.decision = "denied",
		                                    .by = "rule",
		                                    .rule = v->rule});
	} else if (!s->appr.approver.request) {
		a->state = APPROVAL_DENIED;
		a->result = approval_not_approved(s, a);
		approval_emit(s, a,
		              &(struct ev_approval){
		                  .decision = "denied",
		                  .by = "mode",
		                  .rule = v->rule,
		                  .note = "no one to ask: assay runs without "
		                          "a terminal"});
	} else {
		a->state = APPROVAL_ASKING;
		approval_fill_request(a);
		approval_emit_request(s, a);
		s->appr.approver.request(s->appr.approver_arg, &a->req);
	}
}

void approval_turn(struct session *s)
{
	approval_free_entries(s);
	int n = cJSON_GetArraySize(s->calls.pending);
	s->appr.approvals =
	    xcalloc(n > 0 ? (size_t)n : 1, sizeof *s->appr.approvals);
	s->appr.napprovals = n;
	for (int i = 0; i < n; i++) {
		struct approval *a = &s->appr.approvals[i];
		a->call = cJSON_GetArrayItem(s->calls.pending, i);
		a->id = xstrdup(json_str(a->call, "id", ""));
		a->tool = xstrdup(json_str(a->call, "name", ""));
		a->state = APPROVAL_ASKING; /* until decided below */
	}
	/* every call is announced before any is asked about, so a
	 * frontend sees the whole turn */
	for (int i = 0; i < n; i++)
		approval_emit_tool_call(s, s->appr.approvals[i].call);
	for (int i = 0; i < n && s->state != SESSION_DONE; i++)
		approval_decide(s, &s->appr.approvals[i]);
}

int approval_next(struct session *s, const cJSON **run, const char **denied)
{
	*run = cJSON_GetArrayItem(s->calls.pending, s->calls.next_call);
	*denied = NULL;
	struct approval *a = s->calls.next_call < s->appr.napprovals
	                         ? &s->appr.approvals[s->calls.next_call]
	                         : NULL;
	if (!a)
		return 1;
	if (a->state == APPROVAL_ASKING)
		return 0;
	if (a->state == APPROVAL_DENIED)
		*denied = a->result;
	else if (a->edited)
		*run = a->edited;
	return 1;
}

char *approval_result(struct session *s, const char *id, const char *content)
{
	struct approval *a = approval_find(s, id);
	if (!a || !a->edited)
		return xstrdup(content);
	const cJSON *args = cJSON_GetObjectItem(a->edited, "arguments");
	const char *ran =
	    json_str(args, !strcmp(a->tool, "python") ? "code" : "command", "");
	return xasprintf("[the user edited this call before it ran; what ran "
	                 "instead of your %s:\n%s\n]\n%s",
	                 !strcmp(a->tool, "python") ? "code" : "command", ran,
	                 content);
}

void approval_cancel_all(struct session *s)
{
	for (int i = 0; i < s->appr.napprovals; i++) {
		struct approval *a = &s->appr.approvals[i];
		if (a->state != APPROVAL_ASKING || !a->v)
			continue;
		a->state = APPROVAL_DENIED;
		a->result = xstrdup("[not run: the run ended before the user "
		                    "decided]");
		if (s->appr.approver.cancel)
			s->appr.approver.cancel(s->appr.approver_arg, a->id);
	}
}

/* --- the person's answer ----------------------------------------- */

/* A decision arrived: run the next call from the loop. */
static void approval_timer_fired(void *arg)
{
	struct session *s = arg;
	s->appr.timer = 0;
	if (s->state == SESSION_AWAITING_APPROVAL)
		session_run_next(s);
}

/* Through the loop: session_approve may be called from anywhere,
 * even from inside the approver's request. */
static void approval_wake(struct session *s)
{
	if (!s->appr.timer)
		s->appr.timer =
		    loop_timer_add(s->loop, 0, approval_timer_fired, s);
}

/* The user's edited command or code replaces a's (deny rules checked); -1
 * + *err. */
static int approval_edit(struct session *s, struct approval *a,
                         const char *edited, char **err)
{
	if (!a->req.editable)
		return set_err(err, "a %s call cannot be edited", a->tool);
	if (!edited || !*edited)
		return set_err(err, "the edited %s is empty",
		               !strcmp(a->tool, "python") ? "code" : "command");
	cJSON *call = cJSON_Duplicate(a->call, 1);
	cJSON *args = cJSON_GetObjectItem(call, "arguments");
	const char *key = !strcmp(a->tool, "python") ? "code" : "command";
	cJSON_ReplaceItemInObject(args, key, cJSON_CreateString(edited));
	/* the user's own deny rules still hold for what they type */
	struct policy_verdict *v = policy_check(s->appr.policy, a->tool, args);
	if (v->action == POLICY_DENY) {
		char *r = json_print(v->rule);
		set_err(err, "the edited %s is denied by the rule %s", key, r);
		free(r);
		policy_verdict_free(v);
		cJSON_Delete(call);
		return -1;
	}
	policy_verdict_free(v);
	a->edited = call;
	return 0;
}

int approval_set_edit(struct session *s, const char *id, const char *edited,
                      char **err)
{
	struct approval *a = approval_find(s, id);
	if (!a)
		return set_err(err, "no call %s in this turn", id);
	a->req.editable =
	    !strcmp(a->tool, "shell") || !strcmp(a->tool, "python");
	cJSON *before = a->edited;
	a->edited = NULL;
	if (approval_edit(s, a, edited, err) < 0) {
		a->edited = before;
		return -1;
	}
	cJSON_Delete(before);
	return 0;
}

/* After "always": other waiting calls the new rules allow run too. */
static void approval_recheck_waiting(struct session *s)
{
	for (int i = 0; i < s->appr.napprovals; i++) {
		struct approval *a = &s->appr.approvals[i];
		if (a->state != APPROVAL_ASKING || !a->v)
			continue;
		struct policy_verdict *v =
		    policy_check(s->appr.policy, a->tool,
		                 cJSON_GetObjectItem(a->call, "arguments"));
		if (v->action != POLICY_ALLOW) {
			policy_verdict_free(v);
			continue;
		}
		a->state = APPROVAL_RUN;
		approval_emit(s, a,
		              &(struct ev_approval){.decision = "approved",
		                                    .by = v->by,
		                                    .rule = v->rule,
		                                    .final = v->subject});
		policy_verdict_free(v);
		if (s->appr.approver.cancel)
			s->appr.approver.cancel(s->appr.approver_arg, a->id);
	}
}

/* Rules the user saved into the project are the user's own: the trust
 * store remembers them (so they apply in an untrusted project too), and
 * moves a trust given to the files before the save to the files after. */
static void approval_trust_saved(struct session *s, const cJSON *rules)
{
	char digest[65], *err = NULL;
	char *root = realpath(".", NULL);
	const char *old = json_str(s->cfg->project, "hash", NULL);
	if (!root || config_project_digest(digest, &err) < 0 ||
	    trust_add_saved_rules(root, rules, old, digest, &err) < 0) {
		log_warn("trust store: the saved rule is not remembered as "
		         "yours (%s): the next run asks about it",
		         err ? err : "no current directory");
	} else if (s->cfg->project) {
		cJSON_ReplaceItemInObject(s->cfg->project, "hash",
		                          cJSON_CreateString(digest));
	}
	free(err);
	free(root);
}

/* "Always": add the rules the call offers, to the session or the project;
 * -1 + *err. */
static int approval_always(struct session *s, struct approval *a,
                           enum session_scope scope, char **err)
{
	if (!a->v->save)
		return set_err(err,
		               "\"always\" is not offered for this call: %s",
		               a->v->no_save ? a->v->no_save : "no rule");
	if (scope == SESSION_SCOPE_PROJECT &&
	    policy_save_rules(PROJECT_CONFIG, a->v->save, err) < 0)
		return -1;
	if (scope == SESSION_SCOPE_PROJECT)
		approval_trust_saved(s, a->v->save);
	const cJSON *r;
	cJSON_ArrayForEach(r, a->v->save)
	{
		if (policy_add_rule(s->appr.policy, r, err) < 0)
			return -1;
	}
	return 0;
}

int session_approve(struct session *s, const char *id,
                    enum session_decision decision, const char *edited,
                    const char *feedback, enum session_scope scope, char **err)
{
	struct approval *a = id ? approval_find(s, id) : NULL;
	if (!a || a->state != APPROVAL_ASKING || !a->v ||
	    s->state == SESSION_DONE)
		return set_err(err, "no call %s is waiting for approval",
		               id ? id : "(null)");
	struct ev_approval d = {.by = "user", .final = a->v->subject};
	switch (decision) {
	case SESSION_RUN_ONCE:
		d.decision = "approved";
		d.choice = "run_once";
		break;
	case SESSION_EDIT:
		if (approval_edit(s, a, edited, err) < 0)
			return -1;
		d.decision = "edited";
		d.choice = "edit";
		d.final = edited;
		break;
	case SESSION_ALWAYS:
		if (approval_always(s, a, scope, err) < 0)
			return -1;
		d.decision = "approved";
		d.choice = "always";
		d.rule = cJSON_GetArrayItem(a->v->save, 0);
		d.rules = a->v->save;
		d.scope =
		    scope == SESSION_SCOPE_PROJECT ? "project" : "session";
		break;
	case SESSION_DENY:
		d.decision = "denied";
		d.choice = "deny";
		d.final = NULL;
		a->result = xstrdup(DENIED_BY_USER);
		break;
	case SESSION_FEEDBACK:
		if (!feedback || !*feedback)
			return set_err(err, "the feedback is empty");
		d.decision = "denied";
		d.choice = "feedback";
		d.final = NULL;
		d.feedback = feedback;
		a->result = xasprintf("denied by the user, who did not run "
		                      "this call and says:\n%s",
		                      feedback);
		break;
	default:
		return set_err(err, "unknown decision %d", (int)decision);
	}
	a->state = d.final ? APPROVAL_RUN : APPROVAL_DENIED;
	approval_emit(s, a, &d);
	if (decision == SESSION_ALWAYS)
		approval_recheck_waiting(s);
	approval_wake(s);
	return 0;
}

size_t session_approvals_pending(const struct session *s)
{
	size_t n = 0;
	for (int i = 0; i < s->appr.napprovals; i++)
		n += s->appr.approvals[i].state == APPROVAL_ASKING &&
		     s->appr.approvals[i].v;
	return n;
}

const struct session_approval *session_approval_at(const struct session *s,
                                                   size_t i)
{
	for (int k = 0; k < s->appr.napprovals; k++) {
		const struct approval *a = &s->appr.approvals[k];
		if (a->state != APPROVAL_ASKING || !a->v)
			continue;
		if (i-- == 0)
			return &a->req;
	}
	return NULL;
}
