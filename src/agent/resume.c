/* resume.c: a recorded run goes on instead of starting afresh.
 * Resume (same run dir) rebuilds the conversation from the transcript,
 * each recorded answer from cache/<hash>.json once the rebuilt request
 * hashes to the recorded one, and continues live from the first step
 * without a record. Re-execute (a new run dir) runs every recorded call
 * again and answers from the cache while the requests stay identical;
 * a fork replaces one tool result or user message on the way. Resume
 * decides and the session acts: each hook fills a struct replay_act. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/llm.h"
#include "assay/log.h"
#include "assay/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct replay {
	struct record rec;
	enum session_resume_mode mode;
	char *provider; /* as recorded: the hashes were made with them */
	char *model;
	cJSON *turns;    /* [{turn, hash, answer|null}] in turn order */
	cJSON *queued;   /* user messages to send next [{text, recorded}] */
	int diverged;    /* live from here on */
	char *fork_call; /* the call whose result a fork replaces */
	char *replace;
	uint64_t fork_at; /* the seq the fork replaces (0: none) */
	int forked;
	int prompt; /* resume was given a PROMPT */
	int cached_turns;
};

void replay_free(struct replay *rp)
{
	if (!rp)
		return;
	record_free(&rp->rec);
	free(rp->provider);
	free(rp->model);
	cJSON_Delete(rp->turns);
	cJSON_Delete(rp->queued);
	free(rp->fork_call);
	free(rp->replace);
	free(rp);
}

const char *replay_dir(const struct replay *rp)
{
	return rp->rec.dir;
}

const cJSON *replay_compaction_before(const struct replay *rp, int turn)
{
	if (rp->mode != SESSION_REEXECUTE || rp->diverged)
		return NULL;
	const cJSON *e;
	cJSON_ArrayForEach(e, rp->rec.events)
	{
		if (event_type_of(e) != EV_COMPACTION ||
		    strcmp(ev_str(e, EVF_STATE, ""), "done"))
			continue;
		int at = ev_int(e, EVF_TURN, -1);
		/* a refused turn's compaction carries that turn's number */
		if (!strcmp(ev_str(e, EVF_REASON, ""),
		            "context_length_exceeded"))
			at--;
		if (at == turn - 1)
			return e;
	}
	return NULL;
}

int replay_in_place(const struct replay *rp)
{
	return rp->mode == SESSION_RESUME;
}

const struct record *replay_record(const struct replay *rp)
{
	return &rp->rec;
}

/* The hash the recorded run would have given this request. */
static void replay_hash(const struct replay *rp, const struct session *s,
                        const struct llm_request *req, char out[65])
{
	struct llm_request r = *req;
	if (rp->model)
		r.model = rp->model;
	char *canon = llm_canonical_request_for(
	    rp->provider ? rp->provider : llm_provider(s->llm),
	    llm_model(s->llm), &r);
	sha256_hex(canon, strlen(canon), out);
	free(canon);
}

/* A model_request the run made (not one a resume replayed). */
static int replay_is_turn_request(const cJSON *e)
{
	return event_type_of(e) == EV_MODEL_REQUEST &&
	       !ev_bool(e, EVF_REPLAYED, 0);
}

/* The assistant_message of turn in events, after index from, before
 * the next model_request. */
static const cJSON *replay_recorded_answer(const cJSON *events, int from,
                                           int turn)
{
	int n = cJSON_GetArraySize(events);
	for (int i = from + 1; i < n; i++) {
		const cJSON *e = cJSON_GetArrayItem(events, i);
		if (replay_is_turn_request(e))
			return NULL;
		if (event_type_of(e) == EV_ASSISTANT_MESSAGE &&
		    ev_int(e, EVF_TURN, -1) == turn)
			return e;
	}
	return NULL;
}

/* The answer to model_request i: the cache first (the checkpoint,
 * written before the transcript hears of it), else the transcript. */
static cJSON *replay_find_answer(struct replay *rp, int i)
{
	const cJSON *mr = cJSON_GetArrayItem(rp->rec.events, i);
	cJSON *c = cache_load(rp->rec.dir, ev_str(mr, EVF_REQUEST_HASH, NULL));
	if (c)
		return c;
	const cJSON *am =
	    replay_recorded_answer(rp->rec.events, i, ev_int(mr, EVF_TURN, -1));
	if (!am)
		return NULL;
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "request_hash",
	                        ev_str(mr, EVF_REQUEST_HASH, ""));
	cJSON_AddStringToObject(c, "text", ev_str(am, EVF_TEXT, ""));
	const cJSON *calls = ev_item(am, EVF_TOOL_CALLS);
	cJSON_AddItemToObject(c, "tool_calls",
	                      calls ? cJSON_Duplicate(calls, 1)
	                            : cJSON_CreateArray());
	cJSON_AddStringToObject(c, "finish_reason",
	                        ev_str(am, EVF_FINISH_REASON, ""));
	cJSON_AddStringToObject(c, "source", "transcript");
	return c;
}

/* From here the run is live: replay_live says why. */
static void replay_emit_live(struct replay *rp, struct session *s, int turn,
                             const char *reason, const char *recorded,
                             const char *hash)
{
	rp->diverged = 1;
	session_emit(
	    s, ev_replay_live(turn, reason, recorded, hash, rp->cached_turns));
	log_info("replay: live from turn %d: %s", turn, reason);
}

/* --- re-execute: answers while the requests stay identical -------- */

void replay_request(struct replay *rp, struct session *s,
                    const struct llm_request *req, int turn,
                    struct replay_act *act)
{
	act->what = REPLAY_LIVE;
	if (rp->diverged || rp->mode != SESSION_REEXECUTE)
		return;
	char hash[65];
	replay_hash(rp, s, req, hash);
	const cJSON *t = cJSON_GetArrayItem(rp->turns, turn - 1);
	if (!t) {
		replay_emit_live(rp, s, turn, "past the recorded turns", NULL,
		                 hash);
		return;
	}
	const char *recorded = json_str(t, "hash", "");
	if (strcmp(recorded, hash)) {
		replay_emit_live(rp, s, turn,
		                 "the request differs from the recorded one (a "
		                 "tool result or message changed)",
		                 recorded, hash);
		return;
	}
	const cJSON *ans = cJSON_GetObjectItem(t, "answer");
	if (!cJSON_IsObject(ans) && json_bool(t, "later", 0)) {
		/* cancelled or failed, and the run went on without it:
		 * with the user's next message, or by asking again */
		log_info("re-execute: turn %d has no answer and later "
		         "turns were recorded: skipped",
		         turn);
		act->what = REPLAY_SKIP;
		act->turn = turn;
		act->user_next = json_bool(t, "user_next", 0);
		return;
	}
	if (!cJSON_IsObject(ans)) {
		replay_emit_live(rp, s, turn,
		                 "the recorded turn never completed (no answer "
		                 "in cache/ or the transcript)",
		                 recorded, hash);
		return;
	}
	session_emit(s, ev_model_request(turn, hash, 1,
	                                 cJSON_GetArraySize(req->messages),
	                                 s->ctx.est, s->ctx.window, 0));
	rp->cached_turns++;
	act->what = REPLAY_CACHED;
	act->turn = turn;
	memcpy(act->hash, hash, sizeof act->hash);
	act->answer = cache_result(ans);
}

const char *replay_fork_result(struct replay *rp, const char *id)
{
	if (!rp->fork_call || rp->forked || strcmp(rp->fork_call, id))
		return NULL;
	rp->forked = 1;
	return rp->replace;
}

/* --- queued user messages ----------------------------------------- */

char *replay_next_user(struct replay *rp)
{
	cJSON *q = rp->queued;
	/* recorded messages are only sent while the run follows the
	 * record; resume's own PROMPT always is */
	while (cJSON_GetArraySize(q) > 0) {
		cJSON *m = cJSON_DetachItemFromArray(q, 0);
		int recorded = json_bool(m, "recorded", 0);
		char *text = xstrdup(ev_str(m, EVF_TEXT, ""));
		cJSON_Delete(m);
		if (recorded && rp->diverged) {
			free(text);
			continue;
		}
		return text;
	}
	return NULL;
}

/* Queue a user message (recorded: only sent while following). */
static void replay_queue_user(struct replay *rp, const char *text, int recorded)
{
	if (!rp->queued)
		rp->queued = cJSON_CreateArray();
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "text", text);
	cJSON_AddBoolToObject(m, "recorded", recorded);
	cJSON_AddItemToArray(rp->queued, m);
}

/* --- resume: the conversation rebuilt from the transcript ---------- */

struct walk {
	struct replay *rp;
	struct session *s; /* read, and told the replayed events */
	cJSON *messages;   /* the conversation rebuilt */
	struct budget totals;
	int turn;
	cJSON *calls;      /* the last answer's tool calls */
	cJSON *answered;   /* ids with a result */
	int answered_last; /* the last answer had no tool calls */
	int user_last;     /* a user message waits for its request */
	int live_turn;     /* > 0: go live with this request; < 0: the
	                      resume was refused (the run ends) */
};

/* Whether the string id is in arr. */
static int replay_has_id(const cJSON *arr, const char *id)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		if (cJSON_IsString(it) && !strcmp(it->valuestring, id))
			return 1;
	}
	return 0;
}

/* The call of calls with that id, or NULL. */
static const cJSON *replay_find_call(const cJSON *calls, const char *id)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, calls)
	{
		if (!strcmp(ev_str(c, EVF_ID, ""), id))
			return c;
	}
	return NULL;
}

/* Whether a request of the run was recorded after event i. */
static int replay_later_request(const cJSON *events, int i)
{
	const cJSON *e = cJSON_GetArrayItem(events, i);
	for (e = e ? e->next : NULL; e; e = e->next)
		if (replay_is_turn_request(e))
			return 1;
	return 0;
}

/* An answer found only in cache/ (the run died between checkpointing
 * it and recording it): the transcript gets it now, so that it (and
 * export) holds what the model said. */
static void walk_emit_recovered(struct walk *w, const cJSON *ans)
{
	const char *fr = ev_str(ans, EVF_FINISH_REASON, "");
	session_emit(w->s,
	             ev_assistant_message(w->turn, ev_str(ans, EVF_TEXT, ""),
	                                  ev_item(ans, EVF_TOOL_CALLS),
	                                  *fr ? fr : NULL, 1));
}

/* End the resume with an error (exit 2): nothing more is sent or run. */
static void walk_refuse(struct walk *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void walk_refuse(struct walk *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	session_emit(w->s, ev_error("internal", msg, -1));
	log_warn("resume: %s", msg);
	free(msg);
	w->live_turn = -1;
}

/* The first call of the last answer without a result, or NULL. */
static const char *walk_unanswered(const struct walk *w)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, w->calls)
	{
		const char *id = ev_str(c, EVF_ID, "");
		if (!replay_has_id(w->answered, id))
			return id;
	}
	return NULL;
}

/* The first request already differs and the run was recorded by
 * another version of assay (its prompt or tools changed): going live
 * from turn 1 over the workspace the run already changed would mix
 * two runs; refuse. 1 when refused. */
static int walk_other_version(struct walk *w)
{
	const char *v = ev_str(w->rp->rec.run_start, EVF_VERSION, "");
	if (w->rp->cached_turns || w->turn || !strcmp(v, ASSAY_VERSION))
		return 0;
	walk_refuse(w,
	            "the run was recorded by assay %s and this is %s: its "
	            "first request cannot be rebuilt the same, so nothing "
	            "recorded can be reused, and going on live over the "
	            "workspace it already changed would mix two runs; use "
	            "assay resume --re-execute (a fresh sandbox from the "
	            "inputs)",
	            *v ? v : "(unknown)", ASSAY_VERSION);
	return 1;
}

/* A recorded answer joins the conversation (events as replayed). */
static void walk_take_answer(struct walk *w, int i, const char *hash,
                             cJSON *ans)
{
	struct replay *rp = w->rp;
	session_emit(w->s, ev_model_request(w->turn, hash, 1,
	                                    cJSON_GetArraySize(w->messages), 0,
	                                    0, 1));
	if (!replay_recorded_answer(rp->rec.events, i, w->turn))
		walk_emit_recovered(w, ans);
	struct llm_usage none = {.known = 1};
	session_emit(w->s, budget_usage(&w->totals, w->turn, &none, 1));
	rp->cached_turns++;
	const cJSON *calls = ev_item(ans, EVF_TOOL_CALLS);
	messages_add_assistant(w->messages, ev_str(ans, EVF_TEXT, ""), calls,
	                       cJSON_GetObjectItem(ans, "provider_items"));
	cJSON_Delete(w->calls);
	w->calls = cJSON_Duplicate(calls, 1);
	cJSON_Delete(w->answered);
	w->answered = cJSON_CreateArray();
	w->answered_last = cJSON_GetArraySize(w->calls) == 0;
	w->user_last = 0;
}

/* One recorded model_request (index i): its answer joins the
 * conversation when the rebuilt request hashes the same; else the
 * walk stops and the run goes live at this turn. */
static void walk_request(struct walk *w, int i)
{
	struct replay *rp = w->rp;
	const struct session *s = w->s;
	const cJSON *mr = cJSON_GetArrayItem(rp->rec.events, i);
	int turn = ev_int(mr, EVF_TURN, w->turn + 1);
	const char *recorded = ev_str(mr, EVF_REQUEST_HASH, "");
	struct llm_request req = {
	    .model = llm_model(s->llm),
	    .system = s->system_prompt,
	    .messages = w->messages,
	    .tools = s->conv.tools,
	    .max_output_tokens = s->cfg->max_output_tokens,
	};
	const char *open = walk_unanswered(w);
	if (open) {
		/* cache/ and the transcript disagree: a request now would
		 * be one no provider accepts */
		walk_refuse(w,
		            "the transcript is damaged: turn %d was requested "
		            "before call %s had a result (cache/ and the "
		            "transcript disagree)",
		            turn, open);
		return;
	}
	char hash[65];
	replay_hash(rp, s, &req, hash);
	if (strcmp(hash, recorded)) {
		if (walk_other_version(w))
			return;
		replay_emit_live(
		    rp, w->s, turn,
		    "the rebuilt request differs from the recorded "
		    "one (the system prompt, instructions, tools or "
		    "limits changed?): the cache cannot be used",
		    recorded, hash);
		w->live_turn = turn;
		return;
	}
	cJSON *ans = replay_find_answer(rp, i);
	if (!ans && replay_later_request(rp->rec.events, i)) {
		/* cancelled or failed, and the run went on without it:
		 * what it sent next is rebuilt from what follows */
		w->turn = turn;
		log_info("resume: turn %d has no answer and later turns "
		         "were recorded: skipped",
		         turn);
		return;
	}
	if (!ans) {
		replay_emit_live(
		    rp, w->s, turn,
		    "the turn was interrupted: requesting it again", recorded,
		    hash);
		w->live_turn = turn;
		return;
	}
	w->turn = turn;
	walk_take_answer(w, i, hash, ans);
	cJSON_Delete(ans);
}

/* Whether the turn request at index i was interrupted and asked again
 * later (a run resumed after a kill): the later request holds the turn,
 * and the cache may already hold its answer under the same hash. */
static int replay_superseded(const cJSON *events, int i)
{
	int turn = ev_int(cJSON_GetArrayItem(events, i), EVF_TURN, -1);
	int n = cJSON_GetArraySize(events);
	for (int j = i + 1; j < n; j++) {
		const cJSON *e = cJSON_GetArrayItem(events, j);
		if (ev_int(e, EVF_TURN, -2) != turn)
			continue;
		if (event_type_of(e) == EV_ASSISTANT_MESSAGE)
			return 0;
		if (replay_is_turn_request(e))
			return 1;
	}
	return 0;
}

/* A recorded tool result of the last answer joins the conversation. */
static void walk_result(struct walk *w, const cJSON *e)
{
	const char *id = ev_str(e, EVF_ID, "");
	const cJSON *call = replay_find_call(w->calls, id);
	if (!call || replay_has_id(w->answered, id))
		return;
	messages_add_tool(w->messages, id, ev_str(call, EVF_NAME, ""),
	                  ev_str(e, EVF_CONTENT, ""),
	                  ev_bool(e, EVF_IS_ERROR, 0));
	cJSON_AddItemToArray(w->answered, cJSON_CreateString(id));
}

/* A recorded image joins its call's result, its bytes from the run
 * dir (the request is then the one recorded); one that cannot be read
 * back is left out (the request differs: asked live). */
static void walk_image(struct walk *w, const cJSON *e)
{
	char *err = NULL;
	cJSON *part = images_part(w->rp->rec.dir, e, &err);
	if (!part) {
		if (!ev_item(e, EVF_ERROR))
			log_warn("resume: image of call %s left out: %s",
			         ev_str(e, EVF_ID, ""), err);
		free(err);
		return;
	}
	messages_add_image(w->messages, ev_str(e, EVF_ID, ""), part);
}

/* Go through the record until the first step it cannot answer. */
static void walk_events(struct walk *w)
{
	struct replay *rp = w->rp;
	int n = cJSON_GetArraySize(rp->rec.events);
	for (int i = 0; i < n && !w->live_turn; i++) {
		const cJSON *e = cJSON_GetArrayItem(rp->rec.events, i);
		switch (event_type_of(e)) {
		case EV_USER_MESSAGE:
			messages_add_user(w->messages, ev_str(e, EVF_TEXT, ""));
			w->user_last = 1;
			w->answered_last = 0;
			break;
		case EV_MODEL_REQUEST:
			if (replay_is_turn_request(e) &&
			    !replay_superseded(rp->rec.events, i))
				walk_request(w, i);
			break;
		case EV_USAGE:
			if (!ev_bool(e, EVF_REPLAYED, 0))
				budget_restore(&w->totals,
				               ev_item(e, EVF_TOTALS));
			break;
		case EV_TOOL_RESULT:
			walk_result(w, e);
			break;
		case EV_IMAGE_SENT:
			walk_image(w, e);
			break;
		case EV_MCP_TOOLS: /* the same tools offered again */
			mcptool_restore(w->s, ev_item(e, EVF_TOOLS));
			break;
		case EV_EXEC_END:
			context_output_file(w->s, ev_str(e, EVF_ID, NULL),
			                    ev_str(e, EVF_OUTPUT_FILE, NULL));
			break;
		case EV_CONTEXT_TRIM:
		case EV_COMPACTION:
			/* what the run did to its history, done again, with
			 * the window it had then (a refusal lowers it) */
			context_apply(&w->messages, e);
			if (ev_num(e, EVF_WINDOW, 0) > 0)
				context_set_window(w->s,
				                   ev_long(e, EVF_WINDOW, 0));
			break;
		default:
			break;
		}
	}
}

/* The calls of the last answer that never got a result, or NULL. */
static cJSON *walk_left_calls(const struct walk *w)
{
	cJSON *left = cJSON_CreateArray();
	const cJSON *c;
	cJSON_ArrayForEach(c, w->calls)
	{
		if (!replay_has_id(w->answered, ev_str(c, EVF_ID, "")))
			cJSON_AddItemToArray(left, cJSON_Duplicate(c, 1));
	}
	if (cJSON_GetArraySize(left) > 0)
		return left;
	cJSON_Delete(left);
	return NULL;
}

/* Nothing recorded is left to do: the next queued message, the user
 * (interactive), or the end (status, code, why in replay_live). */
static void walk_nothing_left(struct walk *w, struct replay_act *act,
                              const char *status, int code, const char *why)
{
	act->text = replay_next_user(w->rp);
	if (act->text) {
		act->what = REPLAY_SEND;
		return;
	}
	if (w->s->interactive) { /* the TUI: the user goes on */
		act->what = REPLAY_IDLE;
		return;
	}
	replay_emit_live(w->rp, w->s, w->turn, why, NULL, NULL);
	act->what = REPLAY_END;
	act->status = status;
	act->code = code;
}

/* What the walk leads to, once the record is rebuilt as far as it
 * goes. */
static void walk_decide(struct walk *w, struct replay_act *act)
{
	if (w->live_turn < 0) {
		act->what = REPLAY_END;
		act->status = "failed";
		act->code = EXIT_USAGE;
		return;
	}
	if (w->live_turn) {
		act->what = REPLAY_REQUEST;
		act->turn = w->live_turn - 1;
		return;
	}
	cJSON *left = walk_left_calls(w);
	if (left) {
		replay_emit_live(w->rp, w->s, w->turn,
		                 "running the calls that never finished", NULL,
		                 NULL);
		act->what = REPLAY_CALLS;
		act->calls = left;
		return;
	}
	if (w->answered_last) {
		/* the model had finished: only a new PROMPT goes on */
		walk_nothing_left(w, act, "completed", EXIT_OK,
		                  "the recorded run had completed and no "
		                  "PROMPT was given: nothing to do but deliver "
		                  "its outputs");
		return;
	}
	if (!w->user_last && w->turn == 0 && !cJSON_GetArraySize(w->messages)) {
		walk_nothing_left(w, act, "failed", EXIT_USAGE,
		                  "the recorded run has no message and no "
		                  "PROMPT was given");
		return;
	}
	/* every result is in (or a message waits): the next request */
	replay_emit_live(w->rp, w->s, w->turn + 1,
	                 "the next request was never made", NULL, NULL);
	act->what = REPLAY_REQUEST;
	act->turn = w->turn;
}

void replay_go(struct replay *rp, struct session *s, struct replay_act *act)
{
	if (rp->mode == SESSION_REEXECUTE) {
		/* the first recorded message opens the run */
		act->text = replay_next_user(rp);
		act->what = act->text ? REPLAY_SEND : REPLAY_END;
		act->status = "failed";
		act->code = EXIT_USAGE;
		return;
	}
	struct walk w = {.rp = rp,
	                 .s = s,
	                 .messages = cJSON_CreateArray(),
	                 .calls = cJSON_CreateArray(),
	                 .answered = cJSON_CreateArray()};
	walk_events(&w);
	walk_decide(&w, act);
	act->messages = w.messages;
	act->totals = w.totals;
	if (act->what != REPLAY_REQUEST)
		act->turn = w.turn;
	cJSON_Delete(w.calls);
	cJSON_Delete(w.answered);
}

/* --- starting ------------------------------------------------------ */

/* The recorded turns for re-execute, by turn number: hash, answer,
 * whether a later request was recorded ("later") and whether a user
 * message came before it ("user_next"). Turn numbers were checked
 * against the number of requests (record.c). */
static void replay_collect_turns(struct replay *rp)
{
	rp->turns = cJSON_CreateArray();
	int nturns = 0, i = -1;
	cJSON *last = NULL; /* the entry of the latest request */
	const cJSON *e;
	cJSON_ArrayForEach(e, rp->rec.events)
	{
		i++;
		if (event_type_of(e) == EV_USER_MESSAGE) {
			if (last)
				cJSON_ReplaceItemInObject(last, "user_next",
				                          cJSON_CreateTrue());
			continue;
		}
		if (!replay_is_turn_request(e))
			continue;
		int turn = ev_int(e, EVF_TURN, 0);
		if (turn < 1)
			continue;
		for (; nturns < turn; nturns++) {
			cJSON *t = cJSON_CreateObject();
			cJSON_AddNullToObject(t, "answer");
			cJSON_AddItemToArray(rp->turns, t);
		}
		if (last)
			cJSON_ReplaceItemInObject(last, "later",
			                          cJSON_CreateTrue());
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "hash",
		                        ev_str(e, EVF_REQUEST_HASH, ""));
		cJSON *ans = replay_find_answer(rp, i);
		cJSON_AddItemToObject(t, "answer",
		                      ans ? ans : cJSON_CreateNull());
		cJSON_AddFalseToObject(t, "later");
		cJSON_AddFalseToObject(t, "user_next");
		cJSON_ReplaceItemInArray(rp->turns, turn - 1, t);
		last = t;
	}
}

/* The recorded user messages, the fork applied; 0 or -1 + *err when
 * fork_at names no tool_result or user_message. */
static int replay_collect_messages(struct replay *rp,
                                   const struct session_resume_opts *o,
                                   char **err)
{
	int n = cJSON_GetArraySize(rp->rec.events);
	int found = !o->fork_at;
	for (int i = 0; i < n; i++) {
		const cJSON *e = cJSON_GetArrayItem(rp->rec.events, i);
		enum event_type type = event_type_of(e);
		uint64_t seq = (uint64_t)ev_long(e, EVF_SEQ, 0);
		int at = o->fork_at && seq == o->fork_at;
		if (at && type == EV_TOOL_RESULT) {
			rp->fork_call = xstrdup(ev_str(e, EVF_ID, ""));
			found = 1;
			break; /* later messages belong to the old branch */
		}
		if (type == EV_USER_MESSAGE) {
			replay_queue_user(
			    rp, at ? o->replace : ev_str(e, EVF_TEXT, ""), 1);
			if (at) {
				found = 1;
				break;
			}
		} else if (at) {
			return set_err(
			    err,
			    "--fork-at %llu names a %s event: fork at a "
			    "tool_result or a user_message (see the "
			    "seq numbers in transcript.jsonl)",
			    (unsigned long long)o->fork_at,
			    ev_str(e, EVF_TYPE, ""));
		}
	}
	if (!found)
		return set_err(
		    err, "--fork-at %llu: no event with that seq in %s",
		    (unsigned long long)o->fork_at, rp->rec.transcript);
	if (!cJSON_GetArraySize(rp->queued))
		return set_err(err, "%s has no user message to start from",
		               rp->rec.transcript);
	return 0;
}

/* <old>-reN, the first that does not exist. */
static char *replay_new_run_dir(const char *old)
{
	for (int k = 1;; k++) {
		char *d = xasprintf("%s-re%d", old, k);
		struct stat st;
		if (stat(d, &st) < 0)
			return d;
		free(d);
	}
}

/* How the recorded run stopped, for run_resume. */
static const char *replay_last_status(const struct record *r)
{
	const char *status = "unfinished";
	const cJSON *e;
	cJSON_ArrayForEach(e, r->events)
	{
		enum event_type type = event_type_of(e);
		if (type == EV_RUN_END)
			status = ev_str(e, EVF_STATUS, "?");
		else if (type == EV_RUN_RESUME)
			status = "unfinished";
	}
	return status;
}

/* Drop a last line cut short, so appended events start on their own. */
static int replay_cut_partial(struct replay *rp, char **err)
{
	if (!rp->rec.dropped_bytes)
		return 0;
	if (truncate(rp->rec.transcript, (off_t)rp->rec.complete_bytes) < 0)
		return set_err(err, "%s: cannot drop the cut last line: %s",
		               rp->rec.transcript, strerror(errno));
	return 0;
}

/* Resume in place: the recorded run dir, appended to. */
static int replay_open_in_place(struct session *s, struct replay *rp,
                                char **err)
{
	rundir_set(s, rp->rec.dir,
	           ev_str(rp->rec.run_start, EVF_RUN_ID, "run"));
	if (replay_cut_partial(rp, err) < 0)
		return -1;
	/* the local backend's workspace is the one the run left: its
	 * own <run dir>/workspace, or the user's --workspace (checked in
	 * record_resume_check) */
	if (rundir_open(s, err) < 0)
		return -1;
	transcript_continue(&s->rundir.tr, rp->rec.last_seq, rp->rec.last_t);
	return 0;
}

/* Re-execute: a new run dir (given, or <old>-reN). */
static int replay_open_new(struct session *s, struct replay *rp,
                           const struct session_resume_opts *o, char **err)
{
	const char *given = o->run_dir ? o->run_dir : s->cfg->run_dir;
	char *dir = given ? xstrdup(given) : replay_new_run_dir(rp->rec.dir);
	char *t = xasprintf("%s/transcript.jsonl", dir);
	int taken = access(t, F_OK) == 0;
	free(t);
	if (taken) {
		set_err(
		    err,
		    "%s already holds a run: --re-execute writes a new run, "
		    "so give --run-dir a new directory (or leave it out for "
		    "%s-reN)",
		    dir, rp->rec.dir);
		free(dir);
		return session_fail(s, EXIT_USAGE);
	}
	const char *slash = strrchr(dir, '/');
	rundir_set(s, dir, slash ? slash + 1 : dir);
	free(dir);
	if (rundir_open(s, err) < 0)
		return session_fail(s, EXIT_FAILED);
	return 0;
}

int replay_announce(struct replay *rp, struct session *s)
{
	const cJSON *rs = rp->rec.run_start;
	const char *was = record_image_id(&rp->rec);
	if (*was && *sbx_image_id(s->sbx) && strcmp(was, sbx_image_id(s->sbx)))
		log_warn("resume: the image changed since the run was "
		         "recorded: it ran on %s, this sandbox runs %s (%s)",
		         was, sbx_image_id(s->sbx), sbx_image(s->sbx));
	if (rp->mode == SESSION_REEXECUTE) {
		struct ev_fork fork = {
		    .run_id = ev_str(rs, EVF_RUN_ID, ""),
		    .run_dir = rp->rec.dir,
		    .fork_at = rp->fork_at,
		    .replace = rp->replace,
		};
		session_emit_run_start(s, &fork);
		return 0;
	}
	/* observers (a TUI) see the recorded history first, marked
	 * replayed; the transcript already holds it */
	const cJSON *e;
	cJSON_ArrayForEach(e, rp->rec.events)
	{
		cJSON *copy = cJSON_Duplicate(e, 1);
		cJSON_DeleteItemFromObject(copy, "replayed");
		cJSON_AddBoolToObject(copy, "replayed", 1);
		session_show(s, copy);
		cJSON_Delete(copy);
	}
	struct ev_run run;
	session_run_info(s, &run);
	struct ev_resumed_from from = {
	    .seq = rp->rec.last_seq,
	    .status = replay_last_status(&rp->rec),
	    .dropped_bytes = rp->rec.dropped_bytes,
	};
	session_emit(s, ev_run_resume(&run, &from, rp->prompt));
	return 1; /* the workspace is the recorded one: known */
}

/* A backend without a host workspace (docker) resumes from the archive
 * the run persisted after every call: missing, nothing to resume. */
static int replay_no_archive(struct replay *rp, char **err)
{
	char *path = sbx_archive_path(rp->rec.dir);
	struct stat st;
	int e = stat(path, &st) < 0 ? errno : 0;
	int missing = e || !S_ISREG(st.st_mode);
	if (missing)
		set_err(err,
		        "resuming in place needs the run's workspace, and %s "
		        "is %s (the run was stopped before its first call "
		        "ended?): use --re-execute (a fresh sandbox from the "
		        "original inputs)",
		        path,
		        e == ENOENT ? "missing"
		        : e         ? strerror(e)
		                    : "not a file");
	free(path);
	return missing;
}

char *replay_restore_error(const char *path, const char *backend,
                           const char *why)
{
	if (!path)
		return xasprintf("the %s sandbox cannot load a workspace "
		                 "archive: resume with --re-execute (a fresh "
		                 "sandbox from the original inputs)",
		                 backend);
	const char *w = why ? why : "failed";
	int named = strstr(w, path) != NULL; /* the helper names it */
	return xasprintf("cannot restore the workspace%s%s: %s; resume with "
	                 "--re-execute instead (a fresh sandbox from the "
	                 "original inputs)",
	                 named ? "" : " from ", named ? "" : path, w);
}

/* The options that go together (fork, replace, re-execute). */
static int replay_check_opts(const struct session_resume_opts *o, char **err)
{
	if (o->fork_at && o->mode != SESSION_REEXECUTE)
		return set_err(err, "a fork re-executes the run: use "
		                    "--re-execute with --fork-at");
	if (o->fork_at && !o->replace)
		return set_err(err, "--fork-at needs --replace TEXT (the new "
		                    "tool result or user message)");
	if (o->replace && !o->fork_at)
		return set_err(err, "--replace needs --fork-at SEQ (the "
		                    "tool_result or user_message it replaces)");
	return 0;
}

/* In place: one session at a time writes a run dir. */
static int replay_lock(struct session *s, struct replay *rp, char **err)
{
	rundir_set(s, rp->rec.dir, NULL);
	int locked = rundir_lock(s, err);
	rundir_set(s, NULL, NULL);
	return locked;
}

int session_resume(struct session *s, const struct session_resume_opts *o,
                   const char *prompt, char **err)
{
	if (s->replay || s->rundir.run_dir || session_state(s) != SESSION_NEW)
		return set_err(err, "the session has already started");
	struct replay *rp = xcalloc(1, sizeof *rp);
	s->replay = rp;
	rp->mode = o->mode;
	rp->prompt = prompt != NULL;
	if (record_load(o->run, &rp->rec, err) < 0 ||
	    replay_check_opts(o, err) < 0)
		return session_fail(s, EXIT_USAGE);
	if (o->mode == SESSION_RESUME && replay_lock(s, rp, err) < 0)
		return session_fail(s, EXIT_USAGE);
	if (record_resume_check(s, &rp->rec, o->mode, err) < 0)
		return session_fail(s, EXIT_USAGE);
	const cJSON *rs = rp->rec.run_start;
	rp->provider = xstrdup(ev_str(rs, EVF_PROVIDER, s->cfg->provider));
	rp->model = xstrdup(ev_str(rs, EVF_MODEL, ""));
	if (o->replace)
		rp->replace = xstrdup(o->replace);
	rp->fork_at = o->fork_at;
	if (approval_init(s, err) < 0)
		return session_fail(s, EXIT_USAGE);
	if (o->mode == SESSION_REEXECUTE) {
		if (replay_collect_messages(rp, o, err) < 0)
			return session_fail(s, EXIT_USAGE);
		replay_collect_turns(rp);
		if (replay_open_new(s, rp, o, err) < 0)
			return -1;
	} else if ((sbx_backend_caps(s->cfg->sandbox) & SBX_CAP_IMPORT_TAR) &&
	           replay_no_archive(rp, err)) {
		return session_fail(s, EXIT_USAGE);
	} else if (replay_open_in_place(s, rp, err) < 0) {
		return session_fail(s, EXIT_FAILED);
	}
	if (prompt)
		replay_queue_user(rp, prompt, 0);
	if (session_prepare(s, err) < 0)
		return -1;
	if (record_check_url(s, &rp->rec, o->base_url_given, err) < 0)
		return session_fail(s, EXIT_USAGE);
	/* a resumed workspace already holds its inputs */
	session_boot(s, o->mode == SESSION_REEXECUTE);
	return 0;
}
