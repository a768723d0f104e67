/* session.c: the run's state machine. A turn streams a model answer;
 * its tool calls run one after another; their results go back in the
 * next request, until the model answers without tool calls or a limit
 * is hit. The states and their transitions are listed in
 * include/assay/session.h; only this file changes s->state, through
 * session_set_state. Step mode (step.c) and resume (resume.c) decide
 * what comes next and this file acts on it. The JSON it reads (a
 * model's tool calls, src/llm's) is not an event. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/events.h"
#include "assay/http.h"
#include "assay/json.h"
#include "assay/llm.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/sandbox.h"
#include "assay/util.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* One sandbox operation in flight (session_sbx_call). */
struct sbx_call {
	struct session *s; /* NULL once the session is freed */
	session_sbx_fn fn;
	void *ctx;
	struct sbx_call *next;
};

/* A call's result on its way into the conversation. */
struct session_result {
	char *id, *name;
	char *content;  /* what the model is told */
	char *original; /* a fork replaced it: what the call gave */
	int is_error;
	int changes; /* the call may have changed files */
};

static void session_run_next_call(struct session *s);
static void session_skip_pending(struct session *s);
static void session_begin(struct session *s);

/* --- states ---------------------------------------------------------- */

static const char *const session_state_names[] = {
    [SESSION_NEW] = "NEW",
    [SESSION_STARTING] = "STARTING",
    [SESSION_LISTING] = "LISTING",
    [SESSION_KERNEL_STARTING] = "KERNEL_STARTING",
    [SESSION_IDLE] = "IDLE",
    [SESSION_REQUESTING] = "REQUESTING",
    [SESSION_TOOL_CALLS_READY] = "TOOL_CALLS_READY",
    [SESSION_AWAITING_APPROVAL] = "AWAITING_APPROVAL",
    [SESSION_PAUSED] = "PAUSED",
    [SESSION_EXECUTING] = "EXECUTING",
    [SESSION_CANCELLING] = "CANCELLING",
    [SESSION_INTERRUPTING] = "INTERRUPTING",
    [SESSION_ENDING] = "ENDING",
    [SESSION_DONE] = "DONE",
};

#define TO(st) (1u << (st))
/* The transitions session.h documents: from each state, the states it
 * may go to. */
static const unsigned session_next_states[] = {
    [SESSION_NEW] = TO(SESSION_STARTING),
    [SESSION_STARTING] = TO(SESSION_LISTING) | TO(SESSION_ENDING),
    [SESSION_LISTING] = TO(SESSION_KERNEL_STARTING) | TO(SESSION_ENDING),
    [SESSION_KERNEL_STARTING] =
        TO(SESSION_REQUESTING) | TO(SESSION_PAUSED) | TO(SESSION_IDLE) |
        TO(SESSION_TOOL_CALLS_READY) | TO(SESSION_ENDING),
    [SESSION_IDLE] =
        TO(SESSION_REQUESTING) | TO(SESSION_PAUSED) | TO(SESSION_ENDING),
    [SESSION_REQUESTING] = TO(SESSION_TOOL_CALLS_READY) | TO(SESSION_IDLE) |
                           TO(SESSION_PAUSED) | TO(SESSION_ENDING),
    [SESSION_TOOL_CALLS_READY] = TO(SESSION_EXECUTING) |
                                 TO(SESSION_AWAITING_APPROVAL) |
                                 TO(SESSION_PAUSED) | TO(SESSION_REQUESTING) |
                                 TO(SESSION_IDLE) | TO(SESSION_ENDING),
    [SESSION_AWAITING_APPROVAL] =
        TO(SESSION_TOOL_CALLS_READY) | TO(SESSION_IDLE) | TO(SESSION_ENDING),
    [SESSION_PAUSED] = TO(SESSION_TOOL_CALLS_READY) | TO(SESSION_REQUESTING) |
                       TO(SESSION_EXECUTING) | TO(SESSION_IDLE) |
                       TO(SESSION_ENDING),
    [SESSION_EXECUTING] = TO(SESSION_TOOL_CALLS_READY) |
                          TO(SESSION_CANCELLING) | TO(SESSION_INTERRUPTING) |
                          TO(SESSION_ENDING),
    [SESSION_CANCELLING] =
        TO(SESSION_IDLE) | TO(SESSION_INTERRUPTING) | TO(SESSION_ENDING),
    [SESSION_INTERRUPTING] = TO(SESSION_ENDING),
    [SESSION_ENDING] = TO(SESSION_DONE),
    [SESSION_DONE] = 0,
};
#undef TO

const char *const session_idle_names[] = {
    [SESSION_IDLE_READY] = "ready",
    [SESSION_IDLE_ANSWERED] = "answered",
    [SESSION_IDLE_CANCELLED] = "cancelled",
    [SESSION_IDLE_FAILED] = "failed",
    [SESSION_IDLE_BUDGET] = "budget",
};

/* Entering DONE: the exit code is final and run_end says how the run
 * ended (a run that never got going records nothing). */
static void session_emit_run_end(struct session *s)
{
	int code = s->end.code;
	if (code == EXIT_OK && s->end.missing)
		code = EXIT_FAILED;
	s->exit_code = code;
	if (!s->tr.written) {
		cJSON_Delete(s->end.outputs);
		s->end.outputs = NULL;
		return;
	}
	struct ev_run_end e = {
	    .status = s->end.status,
	    .exit_code = code,
	    .outputs = s->end.outputs,
	    .turns = s->turn,
	    .input_tokens = s->budget.in_tokens,
	    .output_tokens = s->budget.out_tokens,
	    .cost_usd = s->budget.cost,
	    .unpriced = s->budget.unpriced,
	    .duration_ms = now_ms() - s->tr.t0,
	    .archive = s->end.archive,
	};
	s->end.outputs = NULL;
	session_emit(s, ev_run_end(&e));
}

/* The one place the state changes. Checks the transition against the
 * table (an illegal one is a bug: logged, and fatal in debug builds),
 * drops what the old state left behind and emits what entering the new
 * one emits. */
static void session_set_state(struct session *s, enum session_state next)
{
	enum session_state prev = s->state;
	if (next == prev)
		return;
	if (!(session_next_states[prev] & (1u << next))) {
		log_warn("session: illegal transition %s -> %s",
		         session_state_names[prev], session_state_names[next]);
		assert(!"illegal session state transition");
	}
	if (prev == SESSION_REQUESTING && s->cached_timer) {
		/* a recorded answer for a turn given up (cancelled) */
		loop_timer_cancel(s->loop, s->cached_timer);
		s->cached_timer = 0;
		llm_result_free(s->cached);
		s->cached = NULL;
	}
	s->state = next;
	switch (next) {
	case SESSION_IDLE:
		session_emit(s, ev_idle(session_idle_names[s->idle_why]));
		break;
	case SESSION_PAUSED:
		session_emit(s, step_pause_event(&s->step));
		step_notify(&s->step);
		break;
	case SESSION_DONE:
		session_emit_run_end(s);
		break;
	default:
		break;
	}
}

/* The state's next step, from the loop: the next call, the rest of a
 * cancelled turn, the end of an interrupted run, or what a step
 * answer let through. */
static void session_go_on(void *arg)
{
	struct session *s = arg;
	s->next_timer = 0;
	/* the workspace listing comes first: the next calls' policy reads
	 * it, and its workspace_change events belong before what follows */
	if (s->scan.running || diffs_busy(s))
		return; /* session_scanned calls again */
	switch (s->state) {
	case SESSION_LISTING: /* announced, its workspace listed */
		session_begin(s);
		break;
	case SESSION_TOOL_CALLS_READY:
		session_run_next_call(s);
		break;
	case SESSION_CANCELLING:
		session_skip_pending(s);
		break;
	case SESSION_INTERRUPTING:
		session_wind_up(s, "interrupted", EXIT_INTERRUPTED);
		break;
	case SESSION_PAUSED:
		if (s->step.pause)
			break; /* a new breakpoint waits for its answer */
		if (step_resumes(&s->step) == SESSION_STEP_EXEC) {
			session_set_state(s, SESSION_TOOL_CALLS_READY);
			session_run_next_call(s);
		} else {
			session_request_turn(s);
		}
		break;
	default:
		break;
	}
}

/* Through the loop: what calls in here (a tool, a frontend's answer)
 * may itself be inside a callback of the session. */
static void session_go_on_later(struct session *s)
{
	if (!s->next_timer)
		s->next_timer = loop_timer_add(s->loop, 0, session_go_on, s);
}

void session_scanned(struct session *s)
{
	session_go_on_later(s);
}

/* --- the session object ------------------------------------------------ */

struct session *session_new(struct loop *l, struct config *cfg, char **err)
{
	struct session *s = xcalloc(1, sizeof *s);
	s->loop = l;
	s->cfg = cfg;
	s->state = SESSION_NEW;
	s->exit_code = EXIT_OK;
	transcript_init(&s->tr);
	s->messages = cJSON_CreateArray();
	s->lock_fd = -1;
	s->tools = tools_definitions();
	buf_init(&s->turn_text, 0);
	buf_init(&s->delta, 0);
	s->http = http_new(l);
	if (!s->http) {
		set_err(err, "cannot initialise libcurl");
		session_free(s);
		return NULL;
	}
	return s;
}

/* Free a result that waited (or never joined the conversation). */
static void session_result_free(struct session_result *r)
{
	if (!r)
		return;
	free(r->id);
	free(r->name);
	free(r->content);
	free(r->original);
	free(r);
}

void session_free(struct session *s)
{
	if (!s)
		return;
	/* stopping the sandbox below may still report the command it
	 * kills: nothing may react to that any more */
	s->freeing = 1;
	uint64_t timers[] = {s->delta_timer, s->next_timer, s->cached_timer,
	                     s->record_timer, s->scan.timer};
	for (size_t i = 0; i < sizeof timers / sizeof *timers; i++)
		if (timers[i])
			loop_timer_cancel(s->loop, timers[i]);
	/* operations still in flight complete into nothing */
	for (struct sbx_call *c = s->calls; c; c = c->next)
		c->s = NULL;
	tools_cancel(s);
	if (s->llm)
		llm_free(s->llm);
	sbx_free(s->sbx); /* stops one still running */
	http_free(s->http);
	rundir_close(s);
	approval_free(s);
	replay_free(s->replay);
	step_free(&s->step);
	budget_free(&s->budget);
	context_free(&s->ctx);
	free(s->budget_why);
	outputs_free(s->outputs);
	session_result_free(s->result);
	llm_result_free(s->cached);
	cJSON_Delete(s->messages);
	cJSON_Delete(s->tools);
	cJSON_Delete(s->pending);
	cJSON_Delete(s->end.outputs);
	cJSON_Delete(s->inputs_checked);
	snapshot_free(s->snapshot);
	diffs_free(s);
	snapshot_free(s->persist.now);
	free(s->persist.writing);
	buf_free(&s->turn_text);
	buf_free(&s->delta);
	free(s->obs);
	free(s->run_id);
	free(s->run_dir);
	free(s->system_prompt);
	free(s->request_hash);
	free(s->prompt);
	free(s->error);
	free(s->end.archive);
	free(s);
}

void session_observe(struct session *s, session_event_fn fn, void *arg)
{
	s->obs = xrealloc(s->obs, (s->nobs + 1) * sizeof *s->obs);
	s->obs[s->nobs++] = (struct observer){fn, arg};
}

enum session_state session_state(const struct session *s)
{
	return s->state;
}

int session_exit_code(const struct session *s)
{
	if (s->tr.failed && s->exit_code == EXIT_OK)
		return EXIT_FAILED; /* even its run_end was not recorded */
	return s->exit_code;
}

const char *session_error(const struct session *s)
{
	return s->error;
}

const char *session_run_dir(const struct session *s)
{
	return s->run_dir;
}

const char *session_no_key(const struct session *s)
{
	return llm_no_key(s->llm);
}

void session_set_interactive(struct session *s, int on)
{
	s->interactive = on;
}

struct sbx *session_sandbox(const struct session *s)
{
	if (s->state == SESSION_NEW || s->state == SESSION_STARTING)
		return NULL;
	return s->sbx;
}

int session_fail(struct session *s, int code)
{
	s->exit_code = code;
	return -1;
}

void session_emit(struct session *s, cJSON *ev)
{
	cJSON *out = transcript_stamp(&s->tr, ev);
	if (transcript_write(&s->tr, out) < 0)
		s->record_timer =
		    loop_timer_add(s->loop, 0, session_record_failed, s);
	for (size_t i = 0; i < s->nobs; i++)
		s->obs[i].fn(s->obs[i].arg, out);
	cJSON_Delete(out);
}

void session_show(struct session *s, const cJSON *ev)
{
	for (size_t i = 0; i < s->nobs; i++)
		s->obs[i].fn(s->obs[i].arg, ev);
}

/* --- sandbox operations in flight ---------------------------------- */

void *session_sbx_call(struct session *s, session_sbx_fn fn, void *ctx)
{
	struct sbx_call *c = xcalloc(1, sizeof *c);
	c->s = s;
	c->fn = fn;
	c->ctx = ctx;
	c->next = s->calls;
	s->calls = c;
	s->ncalls++;
	return c;
}

void session_sbx_done(void *arg, int rc, const char *err, struct buf *data,
                      cJSON *list)
{
	struct sbx_call *c = arg;
	struct session *s = c->s;
	if (s) {
		struct sbx_call **p = &s->calls;
		while (*p != c)
			p = &(*p)->next;
		*p = c->next;
		s->ncalls--;
		c->fn(s, c->ctx, rc, err, data, list);
	}
	free(c);
	if (s)
		ending_check(s); /* ENDING waits for the last one */
}

/* --- the turn ------------------------------------------------------ */

/* Emit user_message and add it to the conversation. */
static void session_say(struct session *s, const char *text)
{
	session_emit(s, ev_user_message(text));
	messages_add_user(s->messages, text);
}

/* Send the next queued message of a followed record; 0 when none. */
static int session_next_user(struct session *s)
{
	char *text = s->replay ? replay_next_user(s->replay) : NULL;
	if (!text)
		return 0;
	session_say(s, text);
	free(text);
	session_request_turn(s);
	return 1;
}

static void session_cached_timer(void *arg);
static void session_deliver(struct session *s, struct llm_result *r,
                            int cached);

/* Request the summary context_compact prepared: from the cache when this
 * run or the one it re-executes already has it, else from the
 * provider. */
static void session_compact_request(struct session *s)
{
	session_set_state(s, SESSION_REQUESTING);
	cJSON *c = cache_load(s->run_dir, s->ctx.hash);
	if (!c && s->replay)
		c = cache_load(replay_dir(s->replay), s->ctx.hash);
	if (c) {
		s->cached = cache_result(c);
		cJSON_Delete(c);
		s->cached_timer =
		    loop_timer_add(s->loop, 0, session_cached_timer, s);
		return;
	}
	struct llm_request req;
	session_llm_request(s, &req);
	req.messages = s->ctx.sum_messages;
	char *err = NULL;
	if (llm_start(s->llm, &req, &err) < 0) {
		struct llm_result *f = xcalloc(1, sizeof *f);
		f->error_category = LLM_ERR_SERVER;
		f->error_message = err;
		session_deliver(s, f, 0);
	}
}

/* The summary arrived (or failed): the refused turn is asked again, the
 * turn goes on, or (/compact) the session waits. */
static void session_compacted(struct session *s, struct llm_result *r,
                              int cached)
{
	int user = s->ctx.user, retry = s->ctx.retry;
	s->ctx.user = s->ctx.retry = 0;
	int rc = context_summarized(s, r, cached);
	llm_result_free(r);
	if (user) { /* the same wait as before (a failed turn stays one) */
		session_idle(s, (enum session_idle)(user - 1));
		return;
	}
	if (rc < 0 && retry) { /* the refusal stands */
		if (s->interactive)
			session_idle(s, SESSION_IDLE_FAILED);
		else
			session_wind_up(s, "failed", EXIT_PROVIDER);
		return;
	}
	if (retry)
		s->turn--; /* the same turn, asked again */
	session_request_turn(s);
}

/* The answer of the turn (from the provider, or cached: then nothing
 * was billed): recorded, then its calls run or the run goes on. */
static void session_deliver(struct session *s, struct llm_result *r, int cached)
{
	if (s->state != SESSION_REQUESTING) {
		llm_result_free(r); /* a turn given up meanwhile */
		return;
	}
	session_flush_delta(s);
	/* a cut character must not leak into the next turn */
	buf_reset(&s->delta);
	if (s->ctx.compacting) {
		session_compacted(s, r, cached);
		return;
	}
	if (!r->ok) {
		session_emit(s,
		             ev_error(r->error_category ? r->error_category
		                                        : LLM_ERR_SERVER,
		                      r->error_message ? r->error_message
		                                       : "model request failed",
		                      -1));
		if (context_refused(s, r)) {
			llm_result_free(r);
			session_compact_request(s);
			return;
		}
		llm_result_free(r);
		if (s->interactive) /* the user may try again */
			session_idle(s, SESSION_IDLE_FAILED);
		else
			session_wind_up(s, "failed", EXIT_PROVIDER);
		return;
	}
	cache_save(s->run_dir, s->request_hash, r);
	context_answered(s, r);
	session_emit(s, ev_assistant_message(s->turn, r->text, r->tool_calls,
	                                     r->finish_reason, 0));
	struct llm_usage none = {.known = 1};
	session_emit(s, budget_usage(&s->budget, s->turn,
	                             cached ? &none : &r->usage, 0));
	messages_add_assistant(s->messages, r->text, r->tool_calls, r->items);
	buf_reset(&s->turn_text);
	if (cJSON_GetArraySize(r->tool_calls) == 0) {
		llm_result_free(r);
		if (session_next_user(s))
			return;
		if (s->interactive)
			session_idle(s, SESSION_IDLE_ANSWERED);
		else
			session_wind_up(s, "completed", EXIT_OK);
		return;
	}
	cJSON_Delete(s->pending);
	s->pending = cJSON_Duplicate(r->tool_calls, 1);
	s->next_call = 0;
	llm_result_free(r);
	session_set_state(s, SESSION_TOOL_CALLS_READY);
	approval_turn(s);
	if (s->state == SESSION_TOOL_CALLS_READY)
		session_run_next_call(s);
}

/* The provider's answer (llm_observer). */
void session_on_llm_done(void *arg, struct llm_result *r)
{
	session_deliver(arg, r, 0);
}

/* A recorded answer arrives, as a provider's would, from the loop. */
static void session_cached_timer(void *arg)
{
	struct session *s = arg;
	struct llm_result *r = s->cached;
	s->cached_timer = 0;
	s->cached = NULL;
	session_deliver(s, r, 1);
}

/* A re-execute answers from its record while the requests stay the
 * recorded ones; 1 when it did (the answer is on its way) or the turn
 * went to the next user message. */
static int session_replayed_turn(struct session *s,
                                 const struct llm_request *req)
{
	for (;;) {
		struct replay_act a = {0};
		replay_request(s->replay, s, req, s->turn + 1, &a);
		if (a.what == REPLAY_SKIP) {
			s->turn = a.turn;
			if (!a.user_next)
				continue; /* asked again: the next turn */
			return session_next_user(s);
		}
		if (a.what != REPLAY_CACHED)
			return 0;
		s->turn = a.turn;
		free(s->request_hash);
		s->request_hash = xstrdup(a.hash);
		session_set_state(s, SESSION_REQUESTING);
		s->cached = a.answer;
		s->cached_timer =
		    loop_timer_add(s->loop, 0, session_cached_timer, s);
		return 1;
	}
}

/* Make the next model request (budgets and breakpoints first). */
void session_request_turn(struct session *s)
{
	char *why = NULL;
	struct budget_hit hit;
	if (!budget_left(&s->budget, s->cfg, s->turn, &why, &hit)) {
		session_budget_spent(s, why, &hit);
		return;
	}
	if (context_before_request(s)) {
		session_compact_request(s);
		return;
	}
	struct llm_request req;
	session_llm_request(s, &req);
	if (s->replay && session_replayed_turn(s, &req))
		return;
	if (step_before_request(&s->step, &req, s->turn + 1) == STEP_PAUSE) {
		session_set_state(s, SESSION_PAUSED);
		return;
	}
	char *canon = llm_canonical_request(s->llm, &req);
	if (!budget_request_fits(&s->budget, s->cfg, strlen(canon), &why,
	                         &hit)) {
		free(canon);
		session_budget_spent(s, why, &hit);
		return;
	}
	s->turn++;
	char hash[65];
	sha256_hex(canon, strlen(canon), hash);
	free(canon);
	free(s->request_hash);
	s->request_hash = xstrdup(hash);
	session_emit(s, ev_model_request(s->turn, hash, 0,
	                                 cJSON_GetArraySize(s->messages),
	                                 s->ctx.est, s->ctx.window, 0));
	session_set_state(s, SESSION_REQUESTING);
	char *err = NULL;
	if (llm_start(s->llm, &req, &err) < 0) {
		session_emit(s, ev_error(LLM_ERR_SERVER, err, -1));
		free(err);
		session_wind_up(s, "failed", EXIT_PROVIDER);
	}
}

/* --- tool calls ------------------------------------------------------ */

/* The next call of the turn, once its decision is known (approval.c
 * decides; a call that waits for a person leaves the session in
 * AWAITING_APPROVAL until session_approve wakes it). */
static void session_run_next_call(struct session *s)
{
	int n = cJSON_GetArraySize(s->pending);
	if (s->next_call >= n) {
		cJSON_Delete(s->pending);
		s->pending = NULL;
		session_request_turn(s);
		return;
	}
	const cJSON *call = NULL;
	const char *denied = NULL;
	if (!approval_next(s, &call, &denied)) {
		session_set_state(s, SESSION_AWAITING_APPROVAL);
		return;
	}
	if (!denied && step_before_exec(&s->step, call, s->next_call,
	                                s->turn) == STEP_PAUSE) {
		session_set_state(s, SESSION_PAUSED);
		return;
	}
	s->next_call++;
	session_set_state(s, SESSION_EXECUTING);
	if (denied)
		tools_finished(s, json_str(call, "id", ""), denied, 1);
	else
		tools_run(s, call);
}

void session_run_next(struct session *s)
{
	session_set_state(s, SESSION_TOOL_CALLS_READY);
	session_run_next_call(s);
}

/* After a Ctrl-C during a turn's calls: the remaining calls get a
 * result saying they did not run (every call needs one), then the
 * session waits for the user. */
static void session_skip_pending(struct session *s)
{
	static const char *why = "[not run: cancelled by the user]";
	int n = cJSON_GetArraySize(s->pending);
	/* questions still open go away; every call already had its
	 * tool_call event when the turn arrived (approval.c) */
	approval_cancel_all(s);
	while (s->next_call < n) {
		const cJSON *call =
		    cJSON_GetArrayItem(s->pending, s->next_call++);
		const char *id = json_str(call, "id", "");
		session_emit(s, ev_tool_result(id, why, 1));
		messages_add_tool(s->messages, id, json_str(call, "name", ""),
		                  why, 1);
	}
	cJSON_Delete(s->pending);
	s->pending = NULL;
	session_idle(s, SESSION_IDLE_CANCELLED);
}

/* The result joins the record and the conversation; the workspace is
 * scanned (or its held listing taken) and the state goes on (but an
 * ending run only records it). */
void session_result_in(struct session *s)
{
	struct snapshot *held = s->persist.now;
	s->persist.now = NULL;
	struct session_result *r = s->result;
	s->result = NULL;
	if (r->original)
		session_emit(s,
		             ev_tool_result_forked(r->id, r->content,
		                                   r->is_error, r->original));
	else
		session_emit(s, ev_tool_result(r->id, r->content, r->is_error));
	messages_add_tool(s->messages, r->id, r->name, r->content, r->is_error);
	int changes = r->changes;
	diffs_call(s, r->id); /* what the listing finds, this call did */
	session_result_free(r);
	const char *lost = sbx_lost(s->sbx);
	if (lost && s->state != SESSION_ENDING) { /* nowhere to go on */
		session_emit(s, ev_error("sandbox", lost, -1));
		session_wind_up(s, "failed", EXIT_SANDBOX);
	}
	if (s->state == SESSION_ENDING) {
		snapshot_free(held);
		return;
	}
	if (held)
		scan_take(s, held, 0);
	else if (changes)
		scan_workspace(s, 0);
	if (s->state == SESSION_EXECUTING)
		session_set_state(s, SESSION_TOOL_CALLS_READY);
	session_go_on_later(s);
}

/* Whether a call's result may be taken in this state. */
static int session_takes_results(const struct session *s)
{
	return s->state == SESSION_EXECUTING ||
	       s->state == SESSION_CANCELLING ||
	       s->state == SESSION_INTERRUPTING || s->state == SESSION_ENDING;
}

/* A call ended with content. as_is: that is what the model is told (a
 * skip), without an approval's or a fork's wording. A backend without
 * a host workspace archives it first after a call that may change
 * files, so a killed run is resumed from a workspace that holds every
 * recorded result's effect. */
static void session_take_result(struct session *s, const char *id,
                                const char *content, int is_error, int as_is)
{
	if (s->freeing || !session_takes_results(s))
		return;
	const char *forked =
	    s->replay ? replay_fork_result(s->replay, id) : NULL;
	char *told = forked || as_is ? xstrdup(forked ? forked : content)
	                             : approval_result(s, id, content);
	struct session_result *r = xcalloc(1, sizeof *r);
	r->id = xstrdup(id);
	/* what the model is sent must be valid UTF-8 */
	r->content = utf8_sanitize(told, strlen(told), NULL);
	free(told);
	r->original = forked ? xstrdup(content) : NULL;
	r->is_error = is_error;
	const cJSON *call = cJSON_GetArrayItem(s->pending, s->next_call - 1);
	r->name = xstrdup(json_str(call, "name", ""));
	/* reading and listing change nothing: no scan, no archive */
	r->changes =
	    strcmp(r->name, "read_file") && strcmp(r->name, "list_files");
	session_result_free(s->result);
	s->result = r;
	int persist =
	    r->changes && (sbx_caps(s->sbx) & SBX_CAP_IMPORT_TAR) &&
	    (s->state == SESSION_EXECUTING || s->state == SESSION_CANCELLING);
	if (persist)
		persist_result(s);
	else /* an ending run archives at its end */
		session_result_in(s);
}

void tools_finished(struct session *s, const char *id, const char *content,
                    int is_error)
{
	session_take_result(s, id, content, is_error, 0);
}

/* --- starting ------------------------------------------------------ */

/* The start's states; making the run's parts and bringing the sandbox
 * up are in start.c. */

/* The python kernel is ready (or cannot start): the first step. */
static void session_kernel_ready(struct session *s)
{
	if (s->state != SESSION_KERNEL_STARTING)
		return;
	if (!s->replay) {
		if (s->prompt) /* its user_message is already out */
			session_request_turn(s);
		else /* interactive: the user speaks first */
			session_idle(s, SESSION_IDLE_READY);
		return;
	}
	struct replay_act a = {0};
	replay_go(s->replay, s, &a);
	if (a.messages) { /* the conversation resume rebuilt */
		cJSON_Delete(s->messages);
		s->messages = a.messages;
		budget_take_totals(&s->budget, &a.totals);
		s->turn = a.turn;
	}
	switch (a.what) {
	case REPLAY_REQUEST:
		s->turn = a.turn;
		session_request_turn(s);
		break;
	case REPLAY_CALLS:
		cJSON_Delete(s->pending);
		s->pending = a.calls;
		s->next_call = 0;
		session_set_state(s, SESSION_TOOL_CALLS_READY);
		approval_turn(s);
		if (s->state == SESSION_TOOL_CALLS_READY)
			session_run_next_call(s);
		break;
	case REPLAY_SEND:
		session_say(s, a.text);
		free(a.text);
		session_request_turn(s);
		break;
	case REPLAY_IDLE:
		session_idle(s, SESSION_IDLE_READY);
		break;
	case REPLAY_END:
		session_wind_up(s, a.status, a.code);
		break;
	default:
		log_warn("resume: nothing to do after the record (%d)",
		         (int)a.what);
		session_wind_up(s, "failed", EXIT_USAGE);
		break;
	}
}

/* The sandbox is up with its workspace: announce the run, list the
 * workspace, start the kernel. */
void session_announce(struct session *s)
{
	int quiet = 0;
	if (s->replay)
		quiet = replay_announce(s->replay, s);
	else
		session_emit_run_start(s, NULL);
	inputs_hash(s); /* input_hashes when they are in */
	session_set_state(s, SESSION_LISTING);
	scan_workspace(s, quiet); /* the staged inputs, or the resumed */
	session_go_on_later(s);   /* session_begin, once it is listed */
}

/* The run is announced and its workspace listed: the prompt, then the
 * kernel. */
static void session_begin(struct session *s)
{
	if (!s->replay && s->prompt)
		session_say(s, s->prompt);
	/* the first request waits for the python kernel's hello, which
	 * completes the system prompt (pytool.c) */
	session_set_state(s, SESSION_KERNEL_STARTING);
	pytool_start(s, session_kernel_ready);
}

void session_boot(struct session *s, int stage_inputs)
{
	session_set_state(s, SESSION_STARTING);
	s->boot_ms = now_ms();
	sbx_start(s->sbx, stage_inputs, session_sbx_done,
	          session_sbx_call(s, session_sandbox_started, NULL));
}

/* --- ending ---------------------------------------------------------- */

/* The run ends with status and exit code: ENDING, then DONE. */
void session_wind_up(struct session *s, const char *status, int code)
{
	if (s->state == SESSION_ENDING || s->state == SESSION_DONE)
		return;
	step_clear(&s->step);
	approval_cancel_all(s);
	context_abandon(s, "the run ended first");
	session_flush_delta(s);
	if (s->next_timer)
		loop_timer_cancel(s->loop, s->next_timer);
	s->next_timer = 0;
	s->end.status = status;
	s->end.code = code;
	session_set_state(s, SESSION_ENDING);
	ending_start(s);
}

void session_ended(struct session *s)
{
	session_set_state(s, SESSION_DONE);
}

/* --- interactive runs, interrupts ------------------------------------ */

/* Interactive: wait for the user's next message. */
void session_idle(struct session *s, enum session_idle why)
{
	session_flush_delta(s);
	s->idle_why = why;
	session_set_state(s, SESSION_IDLE);
}

void session_interrupt(struct session *s)
{
	switch (s->state) {
	case SESSION_NEW:
	case SESSION_ENDING:
	case SESSION_DONE:
		return;
	case SESSION_EXECUTING:
	case SESSION_CANCELLING:
		/* the command's exit ends the run */
		session_set_state(s, SESSION_INTERRUPTING);
		tools_cancel(s);
		return;
	default: /* a second interrupt does not wait for the command */
		if (s->llm)
			llm_cancel(s->llm);
		tools_cancel(s);
		session_wind_up(s, "interrupted", EXIT_INTERRUPTED);
		return;
	}
}

int session_send(struct session *s, const char *text, char **err)
{
	if (s->state == SESSION_DONE || s->state == SESSION_ENDING)
		return set_err(err, "the run has ended");
	if (!s->interactive || s->state != SESSION_IDLE)
		return set_err(err, "the agent is busy: wait for it, or press "
		                    "Ctrl-C to stop it");
	if (!strcmp(text, "/compact")) {
		if (s->idle_why == SESSION_IDLE_BUDGET)
			return set_err(err, "a budget is spent: raise it (the "
			                    "Budget dialog) before compacting");
		if (context_compact(s, "user", s->cfg->context.keep_turns,
		                    err) < 0)
			return -1;
		s->ctx.user =
		    1 + (int)s->idle_why; /* the wait it goes back to */
		session_compact_request(s);
		return 0;
	}
	session_say(s, text);
	session_request_turn(s);
	return 0;
}

int session_cancel(struct session *s)
{
	if (!s->interactive) {
		session_interrupt(s);
		return 1;
	}
	switch (s->state) {
	case SESSION_REQUESTING:
		/* the turn is abandoned: its text never joins the
		 * conversation, and the same request can be made again */
		if (s->llm)
			llm_cancel(s->llm);
		context_abandon(s, "cancelled by the user");
		session_flush_delta(s);
		buf_reset(&s->delta);
		buf_reset(&s->turn_text);
		session_idle(s, SESSION_IDLE_CANCELLED);
		return 1;
	case SESSION_EXECUTING:
		/* the call's result comes back through tools_finished;
		 * then the rest of the turn is skipped */
		session_set_state(s, SESSION_CANCELLING);
		tools_cancel(s);
		return 1;
	case SESSION_CANCELLING:
		tools_cancel(s);
		return 1;
	case SESSION_INTERRUPTING:
		return 1; /* stopping already */
	case SESSION_TOOL_CALLS_READY:
	case SESSION_AWAITING_APPROVAL:
		session_skip_pending(s); /* nothing runs: the turn ends */
		return 1;
	case SESSION_PAUSED: {
		/* a step breakpoint: before a call, the turn's calls are
		 * not run; before a request, it is not sent */
		int exec = s->pending != NULL;
		step_clear(&s->step);
		if (exec)
			session_skip_pending(s);
		else
			session_idle(s, SESSION_IDLE_CANCELLED);
		return 1;
	}
	default:
		return 0;
	}
}

void session_end(struct session *s)
{
	switch (s->state) {
	case SESSION_NEW:
	case SESSION_ENDING:
	case SESSION_DONE:
		return;
	case SESSION_IDLE:
		if (s->idle_why == SESSION_IDLE_FAILED)
			session_wind_up(s, "failed", EXIT_PROVIDER);
		else if (s->idle_why == SESSION_IDLE_BUDGET)
			session_wind_up(s, "budget_exhausted", EXIT_BUDGET);
		else
			session_wind_up(s, "completed", EXIT_OK);
		return;
	case SESSION_EXECUTING:
	case SESSION_CANCELLING:
		/* the running call's result is recorded first */
		session_set_state(s, SESSION_INTERRUPTING);
		tools_cancel(s);
		return;
	default:
		if (s->llm)
			llm_cancel(s->llm);
		tools_cancel(s);
		session_wind_up(s, "interrupted", EXIT_INTERRUPTED);
		return;
	}
}

/* --- step answers ---------------------------------------------------- */

/* A skipped call: its result says it did not run. */
static void session_skip_call(struct session *s)
{
	const cJSON *call = cJSON_GetArrayItem(s->pending, s->next_call);
	char *id = xstrdup(json_str(call, "id", ""));
	s->next_call++;
	session_set_state(s, SESSION_EXECUTING);
	/* nothing ran: not even an approval edit of it */
	session_take_result(s, id, STEP_SKIPPED, 1, 1);
	free(id);
}

int session_step(struct session *s, enum session_step_action action,
                 const char *edited, char **err)
{
	if (s->state != SESSION_PAUSED || !s->step.pause)
		return set_err(err, "the run is not paused at a step");
	switch (step_answer(&s->step, s, action, edited, err)) {
	case STEP_REFUSED:
		return -1;
	case STEP_RESUME:
		session_go_on_later(s);
		break;
	case STEP_SKIP:
		session_skip_call(s);
		break;
	case STEP_END:
		session_wind_up(s, "interrupted", EXIT_INTERRUPTED);
		break;
	}
	return 0;
}
