/* resume.c: a recorded run goes on instead of starting afresh.
 * Resume (same run dir) rebuilds the conversation from the transcript,
 * each recorded answer from cache/<hash>.json once the rebuilt request
 * hashes to the recorded one, and continues live from the first step
 * without a record. Re-execute (a new run dir) runs every recorded call
 * again and answers from the cache while the requests stay identical;
 * a fork replaces one tool result or user message on the way. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/json.h"
#include "assay/llm.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAX (64u << 20)

struct replay {
	struct record rec;
	enum session_resume_mode mode;
	char *provider; /* as recorded: the hashes were made with them */
	char *model;
	cJSON *turns;    /* [{turn, hash, answer|null}] in turn order */
	int diverged;    /* live from here on */
	char *fork_call; /* the call whose result a fork replaces */
	char *replace;
	int forked;
	struct llm_result *answer; /* a cached answer on its way */
	uint64_t timer;
	int cached_turns;
};

void replay_free(struct session *s)
{
	struct replay *rp = s->replay;
	if (!rp)
		return;
	if (rp->timer)
		loop_timer_cancel(s->loop, rp->timer);
	llm_result_free(rp->answer);
	record_free(&rp->rec);
	free(rp->provider);
	free(rp->model);
	cJSON_Delete(rp->turns);
	free(rp->fork_call);
	free(rp->replace);
	free(rp);
	s->replay = NULL;
}

/* The hash the recorded run would have given this request. */
static void record_hash(struct session *s, const struct llm_request *req,
                        char out[65])
{
	struct replay *rp = s->replay;
	struct llm recorded = *s->llm;
	struct llm_request r = *req;
	if (rp && rp->provider)
		recorded.provider = rp->provider;
	if (rp && rp->model)
		r.model = rp->model;
	char *canon = llm_canonical_request(&recorded, &r);
	sha256_hex(canon, strlen(canon), out);
	free(canon);
}

/* cache/<hash>.json of dir, or NULL. */
static cJSON *cache_read(const char *dir, const char *hash)
{
	if (!hash || strspn(hash, "0123456789abcdef") != 64 || hash[64])
		return NULL;
	char *path = xasprintf("%s/cache/%s.json", dir, hash);
	cJSON *c = json_parse_file(path, CACHE_MAX, NULL);
	free(path);
	if (c && (!cJSON_IsArray(cJSON_GetObjectItem(c, "tool_calls")) ||
	          strcmp(json_str(c, "request_hash", ""), hash))) {
		cJSON_Delete(c);
		c = NULL;
	}
	return c;
}

/* The assistant_message of turn in events, after index from, before
 * the next model_request. */
static const cJSON *recorded_answer(const cJSON *events, int from, int turn)
{
	int n = cJSON_GetArraySize(events);
	for (int i = from + 1; i < n; i++) {
		const cJSON *e = cJSON_GetArrayItem(events, i);
		const char *type = json_str(e, "type", "");
		if (!strcmp(type, "model_request") &&
		    !json_bool(e, "replayed", 0))
			return NULL;
		if (!strcmp(type, "assistant_message") &&
		    (int)json_num(e, "turn", -1) == turn)
			return e;
	}
	return NULL;
}

/* The answer to model_request i: the cache first (the checkpoint,
 * written before the transcript hears of it), else the transcript. */
static cJSON *find_answer(struct replay *rp, int i)
{
	const cJSON *mr = cJSON_GetArrayItem(rp->rec.events, i);
	cJSON *c = cache_read(rp->rec.dir, json_str(mr, "request_hash", NULL));
	if (c)
		return c;
	const cJSON *am =
	    recorded_answer(rp->rec.events, i, (int)json_num(mr, "turn", -1));
	if (!am)
		return NULL;
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "request_hash",
	                        json_str(mr, "request_hash", ""));
	cJSON_AddStringToObject(c, "text", json_str(am, "text", ""));
	const cJSON *calls = cJSON_GetObjectItem(am, "tool_calls");
	cJSON_AddItemToObject(c, "tool_calls",
	                      calls ? cJSON_Duplicate(calls, 1)
	                            : cJSON_CreateArray());
	cJSON_AddStringToObject(c, "finish_reason",
	                        json_str(am, "finish_reason", ""));
	cJSON_AddStringToObject(c, "source", "transcript");
	return c;
}

static int is_turn_request(const cJSON *e)
{
	return !strcmp(json_str(e, "type", ""), "model_request") &&
	       !json_bool(e, "replayed", 0);
}

static void emit_live(struct session *s, int turn, const char *reason,
                      const char *recorded, const char *hash)
{
	struct replay *rp = s->replay;
	rp->diverged = 1;
	cJSON *ev = event_new("replay_live");
	cJSON_AddNumberToObject(ev, "turn", turn);
	cJSON_AddStringToObject(ev, "reason", reason);
	if (recorded)
		cJSON_AddStringToObject(ev, "recorded_hash", recorded);
	if (hash)
		cJSON_AddStringToObject(ev, "request_hash", hash);
	cJSON_AddNumberToObject(ev, "cached_turns", rp->cached_turns);
	session_emit(s, ev);
	log_info("replay: live from turn %d: %s", turn, reason);
}

static void emit_cached_request(struct session *s, const char *hash)
{
	cJSON *ev = event_new("model_request");
	cJSON_AddNumberToObject(ev, "turn", s->turn);
	cJSON_AddStringToObject(ev, "request_hash", hash);
	cJSON_AddBoolToObject(ev, "cached", 1);
	cJSON_AddNumberToObject(ev, "messages",
	                        cJSON_GetArraySize(s->messages));
	if (s->replay->mode == SESSION_RESUME)
		cJSON_AddBoolToObject(ev, "replayed", 1);
	session_emit(s, ev);
}

/* --- re-execute: answers while the requests stay identical -------- */

static void deliver_timer(void *arg)
{
	struct session *s = arg;
	struct replay *rp = s->replay;
	rp->timer = 0;
	struct llm_result *r = rp->answer;
	rp->answer = NULL;
	/* cancelled meanwhile (Ctrl-C in the TUI): the turn is gone */
	if (s->state != SESSION_REQUESTING || !r) {
		llm_result_free(r);
		return;
	}
	s->cached_answer = 1;
	session_deliver(s, r);
}

static struct llm_result *result_from(const cJSON *c)
{
	struct llm_result *r = xcalloc(1, sizeof *r);
	r->ok = 1;
	r->text = xstrdup(json_str(c, "text", ""));
	r->tool_calls =
	    cJSON_Duplicate(cJSON_GetObjectItem(c, "tool_calls"), 1);
	const char *fr = json_str(c, "finish_reason", "");
	r->finish_reason = *fr ? xstrdup(fr) : NULL;
	const cJSON *u = cJSON_GetObjectItem(c, "usage");
	r->usage.input_tokens = (long)json_num(u, "input_tokens", 0);
	r->usage.output_tokens = (long)json_num(u, "output_tokens", 0);
	r->usage.known = 1;
	return r;
}

int replay_request(struct session *s, const struct llm_request *req)
{
	struct replay *rp = s->replay;
	if (!rp || rp->diverged || rp->mode != SESSION_REEXECUTE)
		return 0;
	int turn = s->turn + 1;
	char hash[65];
	record_hash(s, req, hash);
	const cJSON *t = cJSON_GetArrayItem(rp->turns, turn - 1);
	if (!t) {
		emit_live(s, turn, "past the recorded turns", NULL, hash);
		return 0;
	}
	const char *recorded = json_str(t, "hash", "");
	if (strcmp(recorded, hash)) {
		emit_live(s, turn,
		          "the request differs from the recorded one (a tool "
		          "result or message changed)",
		          recorded, hash);
		return 0;
	}
	const cJSON *ans = cJSON_GetObjectItem(t, "answer");
	if (!cJSON_IsObject(ans) && json_bool(t, "later", 0)) {
		/* cancelled or failed, and the run went on without it:
		 * with the user's next message, or by asking again */
		s->turn = turn;
		log_info("re-execute: turn %d has no answer and later "
		         "turns were recorded: skipped",
		         turn);
		if (json_bool(t, "user_next", 0))
			return replay_next_user(s);
		return replay_request(s, req);
	}
	if (!cJSON_IsObject(ans)) {
		emit_live(s, turn,
		          "the recorded turn never completed (no answer in "
		          "cache/ or the transcript)",
		          recorded, hash);
		return 0;
	}
	s->turn = turn;
	free(s->request_hash);
	s->request_hash = xstrdup(hash);
	emit_cached_request(s, hash);
	rp->cached_turns++;
	s->state = SESSION_REQUESTING;
	if (rp->timer) /* one cancelled before it was delivered */
		loop_timer_cancel(s->loop, rp->timer);
	llm_result_free(rp->answer);
	rp->answer = result_from(ans);
	rp->timer = loop_timer_add(s->loop, 0, deliver_timer, s);
	return 1;
}

const char *replay_fork_result(struct session *s, const char *id)
{
	struct replay *rp = s->replay;
	if (!rp || !rp->fork_call || rp->forked || strcmp(rp->fork_call, id))
		return NULL;
	rp->forked = 1;
	return rp->replace;
}

/* --- queued user messages ----------------------------------------- */

static void send_user(struct session *s, const char *text)
{
	cJSON *ev = event_new("user_message");
	cJSON_AddStringToObject(ev, "text", text);
	session_emit(s, ev);
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "role", "user");
	cJSON_AddStringToObject(msg, "content", text);
	cJSON_AddItemToArray(s->messages, msg);
}

int replay_next_user(struct session *s)
{
	cJSON *q = s->queued;
	/* recorded messages are only sent while the run follows the
	 * record; resume's own PROMPT always is */
	while (cJSON_GetArraySize(q) > 0) {
		cJSON *m = cJSON_DetachItemFromArray(q, 0);
		int recorded = json_bool(m, "recorded", 0);
		if (recorded && s->replay && s->replay->diverged) {
			cJSON_Delete(m);
			continue;
		}
		send_user(s, json_str(m, "text", ""));
		cJSON_Delete(m);
		session_request(s);
		return 1;
	}
	return 0;
}

static void queue_user(struct session *s, const char *text, int recorded)
{
	if (!s->queued)
		s->queued = cJSON_CreateArray();
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "text", text);
	cJSON_AddBoolToObject(m, "recorded", recorded);
	cJSON_AddItemToArray(s->queued, m);
}

/* --- resume: the conversation rebuilt from the transcript ---------- */

struct walk {
	cJSON *calls;      /* the last answer's tool calls */
	cJSON *answered;   /* ids with a result */
	int answered_last; /* the last answer had no tool calls */
	int user_last;     /* a user message waits for its request */
	int live_turn;     /* > 0: go live with this request; < 0: the
	                      resume was refused (the run has ended) */
};

static void add_assistant(struct session *s, const cJSON *ans)
{
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "role", "assistant");
	cJSON_AddStringToObject(msg, "content", json_str(ans, "text", ""));
	const cJSON *calls = cJSON_GetObjectItem(ans, "tool_calls");
	if (cJSON_GetArraySize(calls) > 0)
		cJSON_AddItemToObject(msg, "tool_calls",
		                      cJSON_Duplicate(calls, 1));
	cJSON_AddItemToArray(s->messages, msg);
}

static int has_id(const cJSON *arr, const char *id)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		if (cJSON_IsString(it) && !strcmp(it->valuestring, id))
			return 1;
	}
	return 0;
}

static const cJSON *find_call(const cJSON *calls, const char *id)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, calls)
	{
		if (!strcmp(json_str(c, "id", ""), id))
			return c;
	}
	return NULL;
}

static void emit_zero_usage(struct session *s)
{
	cJSON *ev = event_new("usage");
	cJSON_AddNumberToObject(ev, "turn", s->turn);
	cJSON_AddNumberToObject(ev, "input_tokens", 0);
	cJSON_AddNumberToObject(ev, "output_tokens", 0);
	cJSON_AddNumberToObject(ev, "cached_tokens", 0);
	cJSON_AddNumberToObject(ev, "cost_usd", 0);
	cJSON_AddBoolToObject(ev, "known", 1);
	cJSON_AddBoolToObject(ev, "replayed", 1);
	cJSON *tot = cJSON_AddObjectToObject(ev, "totals");
	cJSON_AddNumberToObject(tot, "input_tokens", (double)s->in_tokens);
	cJSON_AddNumberToObject(tot, "output_tokens", (double)s->out_tokens);
	cJSON_AddNumberToObject(tot, "cached_tokens", (double)s->cached_tokens);
	cJSON_AddNumberToObject(tot, "cost_usd", s->cost);
	session_emit(s, ev);
}

/* Whether a request of the run was recorded after event i. */
static int later_request(const cJSON *events, int i)
{
	const cJSON *e = cJSON_GetArrayItem(events, i);
	for (e = e ? e->next : NULL; e; e = e->next)
		if (is_turn_request(e))
			return 1;
	return 0;
}

/* An answer found only in cache/ (the run died between checkpointing
 * it and recording it): the transcript gets it now, so that it (and
 * export) holds what the model said. */
static void emit_recovered(struct session *s, const cJSON *ans)
{
	cJSON *ev = event_new("assistant_message");
	cJSON_AddNumberToObject(ev, "turn", s->turn);
	cJSON_AddStringToObject(ev, "text", json_str(ans, "text", ""));
	const cJSON *calls = cJSON_GetObjectItem(ans, "tool_calls");
	cJSON_AddItemToObject(ev, "tool_calls",
	                      calls ? cJSON_Duplicate(calls, 1)
	                            : cJSON_CreateArray());
	const char *fr = json_str(ans, "finish_reason", "");
	if (*fr)
		cJSON_AddStringToObject(ev, "finish_reason", fr);
	cJSON_AddBoolToObject(ev, "recovered", 1);
	session_emit(s, ev);
}

/* End the resume with an error (exit 2): nothing more is sent or run. */
static void refuse(struct session *s, struct walk *w, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void refuse(struct session *s, struct walk *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	cJSON *ev = event_new("error");
	cJSON_AddStringToObject(ev, "category", "internal");
	cJSON_AddStringToObject(ev, "message", msg);
	session_emit(s, ev);
	log_warn("resume: %s", msg);
	free(msg);
	w->live_turn = -1;
	session_finish(s, "failed", EXIT_USAGE);
}

/* The first call of the last answer without a result, or NULL. */
static const char *unanswered(const struct walk *w)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, w->calls)
	{
		const char *id = json_str(c, "id", "");
		if (!has_id(w->answered, id))
			return id;
	}
	return NULL;
}

/* The first request already differs and the run was recorded by
 * another version of assay (its prompt or tools changed): going live
 * from turn 1 over the workspace the run already changed would mix
 * two runs; refuse. 1 when refused (the run has ended). */
static int other_version(struct session *s, struct walk *w)
{
	struct replay *rp = s->replay;
	const char *v = json_str(rp->rec.run_start, "version", "");
	if (rp->cached_turns || s->turn || !strcmp(v, ASSAY_VERSION))
		return 0;
	refuse(s, w,
	       "the run was recorded by assay %s and this is %s: its first "
	       "request cannot be rebuilt the same, so nothing recorded can "
	       "be reused, and going on live over the workspace it already "
	       "changed would mix two runs; use assay resume --re-execute "
	       "(a fresh sandbox from the inputs)",
	       *v ? v : "(unknown)", ASSAY_VERSION);
	return 1;
}

/* One recorded model_request (index i): its answer joins the
 * conversation when the rebuilt request hashes the same; else the
 * walk stops and the run goes live at this turn. */
static int walk_request(struct session *s, struct walk *w, int i)
{
	struct replay *rp = s->replay;
	const cJSON *mr = cJSON_GetArrayItem(rp->rec.events, i);
	int turn = (int)json_num(mr, "turn", s->turn + 1);
	const char *recorded = json_str(mr, "request_hash", "");
	struct llm_request req = {
	    .model = s->llm->model,
	    .system = s->system_prompt,
	    .messages = s->messages,
	    .tools = s->tools,
	    .max_output_tokens = s->cfg->max_output_tokens,
	};
	const char *open = unanswered(w);
	if (open) {
		/* cache/ and the transcript disagree: a request now would
		 * be one no provider accepts */
		refuse(s, w,
		       "the transcript is damaged: turn %d was requested "
		       "before call %s had a result (cache/ and the "
		       "transcript disagree)",
		       turn, open);
		return -1;
	}
	char hash[65];
	record_hash(s, &req, hash);
	if (strcmp(hash, recorded)) {
		if (other_version(s, w))
			return -1;
		emit_live(s, turn,
		          "the rebuilt request differs from the recorded one "
		          "(the system prompt, instructions, tools or limits "
		          "changed?): the cache cannot be used",
		          recorded, hash);
		w->live_turn = turn;
		return -1;
	}
	cJSON *ans = find_answer(rp, i);
	if (!ans && later_request(rp->rec.events, i)) {
		/* cancelled or failed, and the run went on without it:
		 * what it sent next is rebuilt from what follows */
		s->turn = turn;
		log_info("resume: turn %d has no answer and later turns "
		         "were recorded: skipped",
		         turn);
		return 0;
	}
	if (!ans) {
		emit_live(s, turn,
		          "the turn was interrupted: requesting it again",
		          recorded, hash);
		w->live_turn = turn;
		return -1;
	}
	s->turn = turn;
	emit_cached_request(s, hash);
	if (!recorded_answer(rp->rec.events, i, turn))
		emit_recovered(s, ans);
	emit_zero_usage(s);
	rp->cached_turns++;
	add_assistant(s, ans);
	cJSON_Delete(w->calls);
	w->calls = cJSON_Duplicate(cJSON_GetObjectItem(ans, "tool_calls"), 1);
	cJSON_Delete(w->answered);
	w->answered = cJSON_CreateArray();
	w->answered_last = cJSON_GetArraySize(w->calls) == 0;
	w->user_last = 0;
	cJSON_Delete(ans);
	return 0;
}

static void walk_totals(struct session *s, const cJSON *usage)
{
	const cJSON *tot = cJSON_GetObjectItem(usage, "totals");
	s->in_tokens =
	    (long)json_num(tot, "input_tokens", (double)s->in_tokens);
	s->out_tokens =
	    (long)json_num(tot, "output_tokens", (double)s->out_tokens);
	s->cached_tokens =
	    (long)json_num(tot, "cached_tokens", (double)s->cached_tokens);
	s->cost = json_num(tot, "cost_usd", s->cost);
}

/* Whether the turn request at index i was interrupted and asked again
 * later (a run resumed after a kill): the later request holds the turn,
 * and the cache may already hold its answer under the same hash. */
static int superseded(const cJSON *events, int i)
{
	int turn = (int)json_num(cJSON_GetArrayItem(events, i), "turn", -1);
	int n = cJSON_GetArraySize(events);
	for (int j = i + 1; j < n; j++) {
		const cJSON *e = cJSON_GetArrayItem(events, j);
		if ((int)json_num(e, "turn", -2) != turn)
			continue;
		if (!strcmp(json_str(e, "type", ""), "assistant_message"))
			return 0;
		if (is_turn_request(e))
			return 1;
	}
	return 0;
}

/* Rebuild the conversation; then go on from the first unrecorded step. */
static void resume_go(struct session *s)
{
	struct replay *rp = s->replay;
	struct walk w = {.calls = cJSON_CreateArray(),
	                 .answered = cJSON_CreateArray()};
	int n = cJSON_GetArraySize(rp->rec.events);
	for (int i = 0; i < n && !w.live_turn; i++) {
		const cJSON *e = cJSON_GetArrayItem(rp->rec.events, i);
		const char *type = json_str(e, "type", "");
		if (!strcmp(type, "user_message")) {
			cJSON *msg = cJSON_CreateObject();
			cJSON_AddStringToObject(msg, "role", "user");
			cJSON_AddStringToObject(msg, "content",
			                        json_str(e, "text", ""));
			cJSON_AddItemToArray(s->messages, msg);
			w.user_last = 1;
			w.answered_last = 0;
		} else if (is_turn_request(e) &&
		           !superseded(rp->rec.events, i)) {
			walk_request(s, &w, i);
		} else if (!strcmp(type, "usage") &&
		           !json_bool(e, "replayed", 0)) {
			walk_totals(s, e);
		} else if (!strcmp(type, "tool_result")) {
			const char *id = json_str(e, "id", "");
			const cJSON *call = find_call(w.calls, id);
			if (!call || has_id(w.answered, id))
				continue;
			session_add_tool_message(s, id,
			                         json_str(call, "name", ""),
			                         json_str(e, "content", ""),
			                         json_bool(e, "is_error", 0));
			cJSON_AddItemToArray(w.answered,
			                     cJSON_CreateString(id));
		}
	}
	if (w.live_turn < 0)
		goto out;
	if (w.live_turn) {
		s->turn = w.live_turn - 1;
		session_request(s);
		goto out;
	}
	/* the calls of the last answer that never got a result run now */
	cJSON *left = cJSON_CreateArray();
	const cJSON *c;
	cJSON_ArrayForEach(c, w.calls)
	{
		if (!has_id(w.answered, json_str(c, "id", "")))
			cJSON_AddItemToArray(left, cJSON_Duplicate(c, 1));
	}
	if (cJSON_GetArraySize(left) > 0) {
		emit_live(s, s->turn, "running the calls that never finished",
		          NULL, NULL);
		cJSON_Delete(s->pending);
		s->pending = left;
		s->next_call = 0;
		approval_turn(s);
		if (s->state != SESSION_DONE)
			session_run_next(s);
		goto out;
	}
	cJSON_Delete(left);
	if (w.answered_last) {
		/* the model had finished: only a new PROMPT goes on */
		if (replay_next_user(s))
			goto out;
		if (s->interactive) { /* the TUI: the user goes on */
			session_idle(s, "ready");
			goto out;
		}
		emit_live(s, s->turn,
		          "the recorded run had completed and no PROMPT was "
		          "given: nothing to do but deliver its outputs",
		          NULL, NULL);
		session_finish(s, "completed", EXIT_OK);
		goto out;
	}
	if (!w.user_last && s->turn == 0 && !cJSON_GetArraySize(s->messages)) {
		if (replay_next_user(s))
			goto out;
		if (s->interactive) {
			session_idle(s, "ready");
			goto out;
		}
		emit_live(s, 0,
		          "the recorded run has no message and no PROMPT "
		          "was given",
		          NULL, NULL);
		session_finish(s, "failed", EXIT_USAGE);
		goto out;
	}
	/* every result is in (or a message waits): the next request */
	emit_live(s, s->turn + 1, "the next request was never made", NULL,
	          NULL);
	session_request(s);
out:
	cJSON_Delete(w.calls);
	cJSON_Delete(w.answered);
}

/* --- starting ------------------------------------------------------ */

/* The recorded turns for re-execute, by turn number: hash, answer,
 * whether a later request was recorded ("later") and whether a user
 * message came before it ("user_next"). Turn numbers were checked
 * against the number of requests (record.c). */
static void collect_turns(struct replay *rp)
{
	rp->turns = cJSON_CreateArray();
	int nturns = 0, i = -1;
	cJSON *last = NULL; /* the entry of the latest request */
	const cJSON *e;
	cJSON_ArrayForEach(e, rp->rec.events)
	{
		i++;
		if (!strcmp(json_str(e, "type", ""), "user_message")) {
			if (last)
				cJSON_ReplaceItemInObject(last, "user_next",
				                          cJSON_CreateTrue());
			continue;
		}
		if (!is_turn_request(e))
			continue;
		int turn = (int)json_num(e, "turn", 0);
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
		                        json_str(e, "request_hash", ""));
		cJSON *ans = find_answer(rp, i);
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
static int collect_messages(struct session *s,
                            const struct session_resume_opts *o, char **err)
{
	struct replay *rp = s->replay;
	int n = cJSON_GetArraySize(rp->rec.events);
	int found = !o->fork_at;
	for (int i = 0; i < n; i++) {
		const cJSON *e = cJSON_GetArrayItem(rp->rec.events, i);
		const char *type = json_str(e, "type", "");
		uint64_t seq = (uint64_t)json_num(e, "seq", 0);
		int at = o->fork_at && seq == o->fork_at;
		if (at && !strcmp(type, "tool_result")) {
			rp->fork_call = xstrdup(json_str(e, "id", ""));
			found = 1;
			break; /* later messages belong to the old branch */
		}
		if (!strcmp(type, "user_message")) {
			queue_user(s, at ? o->replace : json_str(e, "text", ""),
			           1);
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
			    (unsigned long long)o->fork_at, type);
		}
	}
	if (!found)
		return set_err(
		    err, "--fork-at %llu: no event with that seq in %s",
		    (unsigned long long)o->fork_at, rp->rec.transcript);
	if (!cJSON_GetArraySize(s->queued))
		return set_err(err, "%s has no user message to start from",
		               rp->rec.transcript);
	return 0;
}

/* <old>-reN, the first that does not exist. */
static char *new_run_dir(const char *old, char **id)
{
	for (int k = 1;; k++) {
		char *d = xasprintf("%s-re%d", old, k);
		struct stat st;
		if (stat(d, &st) < 0) {
			const char *slash = strrchr(d, '/');
			*id = xstrdup(slash ? slash + 1 : d);
			return d;
		}
		free(d);
	}
}

static void reexecute_go(struct session *s)
{
	/* the first recorded message opens the run */
	replay_next_user(s);
}

static const char *last_status(const struct record *r)
{
	const char *status = "unfinished";
	const cJSON *e;
	cJSON_ArrayForEach(e, r->events)
	{
		const char *type = json_str(e, "type", "");
		if (!strcmp(type, "run_end"))
			status = json_str(e, "status", "?");
		else if (!strcmp(type, "run_resume"))
			status = "unfinished";
	}
	return status;
}

/* Drop a last line cut short, so appended events start on their own. */
static int cut_partial(struct replay *rp, char **err)
{
	if (!rp->rec.dropped_bytes)
		return 0;
	if (truncate(rp->rec.transcript, (off_t)rp->rec.complete_bytes) < 0)
		return set_err(err, "%s: cannot drop the cut last line: %s",
		               rp->rec.transcript, strerror(errno));
	return 0;
}

static int open_resume(struct session *s, char **err)
{
	struct replay *rp = s->replay;
	s->run_dir = xstrdup(rp->rec.dir);
	s->run_id = xstrdup(json_str(rp->rec.run_start, "run_id", "run"));
	if (cut_partial(rp, err) < 0)
		return -1;
	/* the local backend's workspace is the one the run left: its
	 * own <run dir>/workspace, or the user's --workspace (checked in
	 * record_resume_check) */
	if (session_open_run_dir(s, err) < 0)
		return -1;
	s->seq = rp->rec.last_seq;
	s->t0 = now_ms() - rp->rec.last_t - 1;
	return 0;
}

static void emit_resume(struct session *s, const char *prompt)
{
	struct replay *rp = s->replay;
	cJSON *ev = event_new("run_resume");
	cJSON_AddStringToObject(ev, "run_id", s->run_id);
	cJSON_AddStringToObject(ev, "run_dir", s->run_dir);
	cJSON *from = cJSON_AddObjectToObject(ev, "resumed_from");
	cJSON_AddNumberToObject(from, "seq", (double)rp->rec.last_seq);
	cJSON_AddStringToObject(from, "status", last_status(&rp->rec));
	cJSON_AddNumberToObject(from, "dropped_bytes",
	                        (double)rp->rec.dropped_bytes);
	cJSON_AddStringToObject(ev, "provider", s->llm->provider);
	cJSON_AddStringToObject(ev, "model", s->llm->model);
	cJSON_AddStringToObject(ev, "base_url",
	                        s->llm->base_url ? s->llm->base_url : "");
	cJSON *sb = cJSON_AddObjectToObject(ev, "sandbox");
	cJSON_AddStringToObject(sb, "backend", s->sbx->ops->name);
	cJSON_AddStringToObject(ev, "workspace",
	                        s->sbx->workspace ? s->sbx->workspace
	                                          : "/workspace");
	cJSON_AddBoolToObject(ev, "prompt", prompt != NULL);
	session_emit(s, ev);
}

/* Observers (a TUI) see the recorded history first, marked replayed;
 * the transcript already holds it. */
static void show_history(struct session *s)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, s->replay->rec.events)
	{
		cJSON *copy = cJSON_Duplicate(e, 1);
		cJSON_DeleteItemFromObject(copy, "replayed");
		cJSON_AddBoolToObject(copy, "replayed", 1);
		for (size_t i = 0; i < s->nobs; i++)
			s->obs[i].fn(s->obs[i].arg, copy);
		cJSON_Delete(copy);
	}
}

static int fail(struct session *s, int code)
{
	s->exit_code = code;
	return -1;
}

/* A backend without a host workspace (docker) resumes from the archive
 * the run persisted after every call: missing, nothing to resume. */
static int no_archive(struct replay *rp, char **err)
{
	char *path = xasprintf("%s/workspace.tar.gz", rp->rec.dir);
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

/* The sandbox started empty (no inputs staged): load the workspace the
 * run left. A backend with a host directory already has it. */
static int restore_workspace(struct session *s, char **err)
{
	struct sbx *x = s->sbx;
	if (x->workspace)
		return 0;
	if (!x->ops->import_tar)
		return set_err(
		    err,
		    "the %s sandbox cannot load a workspace archive: "
		    "resume with --re-execute (a fresh sandbox from "
		    "the original inputs)",
		    x->ops->name);
	char *path = xasprintf("%s/workspace.tar.gz", s->run_dir);
	char *why = NULL;
	int64_t t0 = now_ms();
	int rc = x->ops->import_tar(x, path, &why);
	if (rc < 0) {
		const char *w = why ? why : "failed";
		int named = strstr(w, path) != NULL; /* the helper names it */
		set_err(err,
		        "cannot restore the workspace%s%s: %s; resume with "
		        "--re-execute instead (a fresh sandbox from the "
		        "original inputs)",
		        named ? "" : " from ", named ? "" : path, w);
	} else {
		log_info("resume: workspace restored from %s in %lld ms", path,
		         (long long)(now_ms() - t0));
	}
	free(why);
	free(path);
	return rc;
}

int session_resume(struct session *s, const struct session_resume_opts *o,
                   const char *prompt, char **err)
{
	if (s->replay || s->run_dir)
		return set_err(err, "the session has already started");
	struct replay *rp = xcalloc(1, sizeof *rp);
	s->replay = rp;
	rp->mode = o->mode;
	if (record_load(o->run, &rp->rec, err) < 0)
		return fail(s, EXIT_USAGE);
	if (o->fork_at && o->mode != SESSION_REEXECUTE) {
		set_err(err, "a fork re-executes the run: use --re-execute "
		             "with --fork-at");
		return fail(s, EXIT_USAGE);
	}
	if (o->fork_at && !o->replace) {
		set_err(err, "--fork-at needs --replace TEXT (the new tool "
		             "result or user message)");
		return fail(s, EXIT_USAGE);
	}
	if (o->replace && !o->fork_at) {
		set_err(err, "--replace needs --fork-at SEQ (the tool_result "
		             "or user_message it replaces)");
		return fail(s, EXIT_USAGE);
	}
	/* in place: one session at a time writes a run dir */
	if (o->mode == SESSION_RESUME) {
		s->run_dir = xstrdup(rp->rec.dir);
		int locked = record_lock(s, err);
		free(s->run_dir);
		s->run_dir = NULL;
		if (locked < 0)
			return fail(s, EXIT_USAGE);
	}
	if (record_resume_check(s, &rp->rec, o->mode, err) < 0)
		return fail(s, EXIT_USAGE);
	const cJSON *rs = rp->rec.run_start;
	rp->provider = xstrdup(json_str(rs, "provider", s->cfg->provider));
	rp->model = xstrdup(json_str(rs, "model", ""));
	if (o->replace)
		rp->replace = xstrdup(o->replace);
	if (approval_init(s, err) < 0)
		return fail(s, EXIT_USAGE);
	if (o->mode == SESSION_REEXECUTE) {
		if (collect_messages(s, o, err) < 0)
			return fail(s, EXIT_USAGE);
		collect_turns(rp);
		const char *dir = o->run_dir ? o->run_dir : s->cfg->run_dir;
		s->run_dir =
		    dir ? xstrdup(dir) : new_run_dir(rp->rec.dir, &s->run_id);
		char *t = xasprintf("%s/transcript.jsonl", s->run_dir);
		int taken = access(t, F_OK) == 0;
		free(t);
		if (taken) {
			set_err(
			    err,
			    "%s already holds a run: --re-execute writes a "
			    "new run, so give --run-dir a new directory (or "
			    "leave it out for %s-reN)",
			    s->run_dir, rp->rec.dir);
			return fail(s, EXIT_USAGE);
		}
		if (!s->run_id) {
			const char *slash = strrchr(s->run_dir, '/');
			s->run_id = xstrdup(slash ? slash + 1 : s->run_dir);
		}
		if (session_open_run_dir(s, err) < 0)
			return fail(s, EXIT_FAILED);
	} else if (strcmp(s->cfg->sandbox, "local") && no_archive(rp, err)) {
		return fail(s, EXIT_USAGE);
	} else if (open_resume(s, err) < 0) {
		return fail(s, EXIT_FAILED);
	}
	if (prompt)
		queue_user(s, prompt, 0);
	if (session_prepare(s, o->mode == SESSION_REEXECUTE, err) < 0)
		return -1;
	if (record_check_url(s, &rp->rec, o->base_url_given, err) < 0)
		return fail(s, EXIT_USAGE);
	if (o->mode == SESSION_RESUME && restore_workspace(s, err) < 0)
		return fail(s, EXIT_USAGE);
	if (o->mode == SESSION_REEXECUTE) {
		cJSON *extra = cJSON_CreateObject();
		cJSON *from = cJSON_AddObjectToObject(extra, "forked_from");
		cJSON_AddStringToObject(from, "run_id",
		                        json_str(rs, "run_id", ""));
		cJSON_AddStringToObject(from, "run_dir", rp->rec.dir);
		cJSON_AddStringToObject(from, "mode", "re-execute");
		if (o->fork_at) {
			cJSON_AddNumberToObject(from, "fork_at",
			                        (double)o->fork_at);
			cJSON_AddStringToObject(from, "replace", o->replace);
		}
		session_emit_run_start(s, extra);
		session_scan(s, 0);
		pytool_start(s, reexecute_go);
		return 0;
	}
	show_history(s);
	emit_resume(s, prompt);
	session_scan(s, 1);
	pytool_start(s, resume_go);
	return 0;
}
