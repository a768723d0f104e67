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
	cJSON *outputs = ending_take_outputs(s);
	if (!s->rundir.tr.written) {
		cJSON_Delete(outputs);
		return;
	}
	struct ev_run_end e = {
	    .status = s->end.status,
	    .exit_code = code,
	    .outputs = outputs,
	    .turns = s->conv.turn,
	    .input_tokens = s->budget.in_tokens,
	    .output_tokens = s->budget.out_tokens,
	    .cost_usd = s->budget.cost,
	    .unpriced = s->budget.unpriced,
	    .duration_ms = now_ms() - s->rundir.tr.t0,
	    .archive = s->end.archive,
	};
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
	if (prev == SESSION_REQUESTING) /* a turn given up (cancelled) */
		conv_drop_cached(s);
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
	if (s->scan.running || diffs_busy(s) || images_busy(s))
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

struct session *session_new(struct loop *l, struct config *cfg)
{
	struct session *s = xcalloc(1, sizeof *s);
	s->loop = l;
	s->cfg = cfg;
	s->state = SESSION_NEW;
	s->exit_code = EXIT_OK;
	rundir_init(&s->rundir);
	conv_init(&s->conv, cfg);
	images_init(&s->img);
	s->http = http_new(l); /* libcurl's load says at the first request */
	return s;
}

void session_free(struct session *s)
{
	if (!s)
		return;
	/* stopping the sandbox below may still report the command it
	 * kills: nothing may react to that any more */
	s->freeing = 1;
	uint64_t timers[] = {s->conv.delta_timer, s->next_timer,
	                     s->conv.cached_timer, s->rundir.timer,
	                     s->scan.timer};
	for (size_t i = 0; i < sizeof timers / sizeof *timers; i++)
		if (timers[i])
			loop_timer_cancel(s->loop, timers[i]);
	/* operations still in flight complete into nothing */
	for (struct sbx_call *c = s->sbx_calls; c; c = c->next)
		c->s = NULL;
	tools_cancel(s);
	mcptool_free(s); /* before the HTTP it may use */
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
	calls_free(&s->calls);
	conv_free(&s->conv);
	cJSON_Delete(s->end.outputs);
	cJSON_Delete(s->inputs_checked);
	snapshot_free(s->scan.snapshot);
	diffs_free(s);
	images_free(s);
	persist_free(s);
	free(s->obs);
	free(s->system_prompt);
	free(s->prompt);
	free(s->error);
	free(s->end.archive);
	rundir_set(s, NULL, NULL);
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
	if (s->rundir.tr.failed && s->exit_code == EXIT_OK)
		return EXIT_FAILED; /* even its run_end was not recorded */
	return s->exit_code;
}

const char *session_error(const struct session *s)
{
	return s->error;
}

const char *session_run_dir(const struct session *s)
{
	return s->rundir.run_dir;
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
	cJSON *out = transcript_record(s, ev);
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
	c->next = s->sbx_calls;
	s->sbx_calls = c;
	s->sbx_ncalls++;
	return c;
}

void session_sbx_done(void *arg, int rc, const char *err, struct buf *data,
                      cJSON *list)
{
	struct sbx_call *c = arg;
	struct session *s = c->s;
	if (s) {
		struct sbx_call **p = &s->sbx_calls;
		while (*p != c)
			p = &(*p)->next;
		*p = c->next;
		s->sbx_ncalls--;
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
	messages_add_user(s->conv.messages, text);
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
	cJSON *c = cache_load(s->rundir.run_dir, s->ctx.hash);
	if (!c && s->replay)
		c = cache_load(replay_dir(s->replay), s->ctx.hash);
	if (c) {
		conv_cache_answer(s, cache_result(c), session_cached_timer);
		cJSON_Delete(c);
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
	int user, retry;
	context_take_wait(s, &user, &retry);
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
		conv_set_turn(s, s->conv.turn - 1); /* asked again */
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
	/* a cut character must not leak into the next turn */
	conv_end_stream(s);
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
	cache_save(s->rundir.run_dir, s->conv.request_hash, r);
	context_answered(s, r);
	session_emit(s,
	             ev_assistant_message(s->conv.turn, r->text, r->tool_calls,
	                                  r->finish_reason, 0));
	struct llm_usage none = {.known = 1};
	session_emit(s, budget_usage(&s->budget, s->conv.turn,
	                             cached ? &none : &r->usage, 0));
	messages_add_assistant(s->conv.messages, r->text, r->tool_calls,
	                       r->items);
	conv_reset_turn_text(s);
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
	calls_set(s, cJSON_Duplicate(r->tool_calls, 1));
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
	session_deliver(s, conv_take_cached(s), 1);
}

/* A re-execute answers from its record while the requests stay the
 * recorded ones; 1 when it did (the answer is on its way) or the turn
 * went to the next user message. */
static int session_replayed_turn(struct session *s,
                                 const struct llm_request *req)
{
	for (;;) {
		struct replay_act a = {0};
		replay_request(s->replay, s, req, s->conv.turn + 1, &a);
		if (a.what == REPLAY_SKIP) {
			conv_set_turn(s, a.turn);
			if (!a.user_next)
				continue; /* asked again: the next turn */
			return session_next_user(s);
		}
		if (a.what != REPLAY_CACHED)
			return 0;
		conv_set_turn(s, a.turn);
		conv_set_hash(s, a.hash);
		session_set_state(s, SESSION_REQUESTING);
		conv_cache_answer(s, a.answer, session_cached_timer);
		return 1;
	}
}

/* Make the next model request (budgets and breakpoints first). */
void session_request_turn(struct session *s)
{
	char *why = NULL;
	struct budget_hit hit;
	if (!budget_left(&s->budget, s->cfg, s->conv.turn, &why, &hit)) {
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
	if (step_before_request(&s->step, &req, s->conv.turn + 1) ==
	    STEP_PAUSE) {
		session_set_state(s, SESSION_PAUSED);
		return;
	}
	char *canon = llm_canonical_request(s->llm, &req);
	if (!budget_request_fits(&s->budget, s->cfg, strlen(canon),
	                         messages_image_tokens(req.messages), &why,
	                         &hit)) {
		free(canon);
		session_budget_spent(s, why, &hit);
		return;
	}
	conv_set_turn(s, s->conv.turn + 1);
	char hash[65];
	sha256_hex(canon, strlen(canon), hash);
	free(canon);
	conv_set_hash(s, hash);
	session_emit(s, ev_model_request(s->conv.turn, hash, 0,
	                                 cJSON_GetArraySize(s->conv.messages),
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
	int n = cJSON_GetArraySize(s->calls.pending);
	if (s->calls.next_call >= n) {
		calls_clear(s);
		session_request_turn(s);
		return;
	}
	const cJSON *call = NULL;
	const char *denied = NULL;
	if (!approval_next(s, &call, &denied)) {
		session_set_state(s, SESSION_AWAITING_APPROVAL);
		return;
	}
	if (!denied && step_before_exec(&s->step, call, s->calls.next_call,
	                                s->conv.turn) == STEP_PAUSE) {
		session_set_state(s, SESSION_PAUSED);
		return;
	}
	calls_advance(s);
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
	int n = cJSON_GetArraySize(s->calls.pending);
	/* questions still open go away; every call already had its
	 * tool_call event when the turn arrived (approval.c) */
	approval_cancel_all(s);
	while (s->calls.next_call < n) {
		const cJSON *call = calls_advance(s);
		const char *id = json_str(call, "id", "");
		session_emit(s, ev_tool_result(id, why, 1));
		messages_add_tool(s->conv.messages, id,
		                  json_str(call, "name", ""), why, 1);
	}
	calls_clear(s);
	session_idle(s, SESSION_IDLE_CANCELLED);
}

/* The result joins the record and the conversation; the workspace is
 * scanned (or its held listing taken) and the state goes on (but an
 * ending run only records it). */
void session_result_in(struct session *s)
{
	struct snapshot *held = persist_take_held(s);
	int changes = calls_result_record(s);
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
                                const char *content, int is_error, int as_is,
                                cJSON *images)
{
	if (s->freeing || !session_takes_results(s)) {
		cJSON_Delete(images);
		return;
	}
	int changes = calls_result_new(s, id, content, is_error, as_is, images);
	int persist =
	    changes && (sbx_caps(s->sbx) & SBX_CAP_IMPORT_TAR) &&
	    (s->state == SESSION_EXECUTING || s->state == SESSION_CANCELLING);
	if (persist)
		persist_result(s);
	else /* an ending run archives at its end */
		session_result_in(s);
}

void tools_finished(struct session *s, const char *id, const char *content,
                    int is_error)
{
	session_take_result(s, id, content, is_error, 0, NULL);
}

void tools_finished_images(struct session *s, const char *id,
                           const char *content, int is_error, cJSON *images)
{
	session_take_result(s, id, content, is_error, 0, images);
}

/* --- starting ------------------------------------------------------ */

/* The start's states; making the run's parts and bringing the sandbox
 * up are in start.c. */

static void session_kernel_ready(struct session *s);

/* The MCP servers have started: the kernel may have been waiting. */
static void session_mcp_ready(struct session *s)
{
	if (s->mcp_then) {
		s->mcp_then = 0;
		session_kernel_ready(s);
	}
}

/* The python kernel is ready (or cannot start), and the MCP servers:
 * the first step. */
static void session_kernel_ready(struct session *s)
{
	if (s->state != SESSION_KERNEL_STARTING)
		return;
	if (mcptool_busy(s)) { /* the MCP servers' tools first */
		s->mcp_then = 1;
		return;
	}
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
		conv_set_messages(s, a.messages);
		budget_take_totals(&s->budget, &a.totals);
		conv_set_turn(s, a.turn);
	}
	switch (a.what) {
	case REPLAY_REQUEST:
		conv_set_turn(s, a.turn);
		session_request_turn(s);
		break;
	case REPLAY_CALLS:
		calls_set(s, a.calls);
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
	if (!s->replay) /* a resume offers the recorded tools */
		mcptool_start(s, session_mcp_ready);
	pytool_start(s, session_kernel_ready);
}

void session_boot(struct session *s, int stage_inputs)
{
	session_set_state(s, SESSION_STARTING);
	session_start_sandbox(s, stage_inputs);
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
	session_set_state(s, SESSION_ENDING);
	mcptool_close(s); /* the servers end with the run */
	ending_start(s, status, code);
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

void session_set_idle_why(struct session *s, enum session_idle why)
{
	s->idle_why = why;
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
		/* the wait it goes back to */
		context_set_user(s, 1 + (int)s->idle_why);
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
		conv_end_stream(s);
		conv_reset_turn_text(s);
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
		int exec = s->calls.pending != NULL;
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
	const cJSON *call = calls_advance(s);
	char *id = xstrdup(json_str(call, "id", ""));
	session_set_state(s, SESSION_EXECUTING);
	/* nothing ran: not even an approval edit of it */
	session_take_result(s, id, STEP_SKIPPED, 1, 1, NULL);
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
