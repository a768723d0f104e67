/* context.c: the conversation against the model's context window. Before
 * each request its size is estimated: the last answered request's real
 * input tokens, and the bytes added since at that request's bytes per
 * token. Past context.trim_at of the window, old tool results are
 * replaced in the history by a one-line stub, in a batch (context_trim);
 * past context.compact_at, when the provider refuses a prompt as too
 * long, or on /compact, one request asks the model for a summary of the
 * session and the history becomes that summary and the recent turns
 * (compaction). Between the two the history only grows at its end, so
 * the providers' prompt caches keep hitting. Both are events, which a
 * resume applies to rebuild the same requests; the transcript and exec/
 * keep every full result. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/llm.h"
#include "assay/log.h"
#include "assay/models.h"
#include "assay/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* A result shorter than this is left alone: its stub would save little
 * and cost the cache its prefix. */
#define CONTEXT_STUB_MIN 600
/* A trim goes down to this share of trim_at, so that the next turns
 * append for a while before another (batches, not one per turn). */
#define CONTEXT_TRIM_LOW 0.6
/* The summary request must leave this share of the window free for
 * the answer. */
#define CONTEXT_SUMMARY_FIT 0.9

static const char context_prompt[] =
    "[assay: the conversation is about to outgrow the model's context "
    "window, so its earlier part will be replaced by your summary.] Do "
    "not call any tool now. Write a summary of the session so far that "
    "lets you continue the work without the earlier messages: the "
    "user's requests (quote them exactly), the data (files, columns, "
    "sizes, quirks found), what was found with the exact numbers, the "
    "files written (paths), the code and approaches that worked or "
    "failed, and the open questions and next steps. Be complete but "
    "concise: at most about 800 words.";

void context_setup(struct session *s)
{
	struct context *c = &s->ctx;
	const struct model_info *m =
	    models_find(s->budget.models, llm_model(s->llm));
	c->window = s->cfg->context.window > 0 ? s->cfg->context.window
	            : m                        ? m->context
	                                       : 0;
	if (!c->files)
		c->files = cJSON_CreateObject();
}

void context_free(struct context *c)
{
	cJSON_Delete(c->files);
	cJSON_Delete(c->sum_messages);
	free(c->reason);
	free(c->hash);
	memset(c, 0, sizeof *c);
}

/* Bytes per token: the last measured request's, within what text and
 * JSON tokenize to (2 to 8); 4 before any measure. */
static double context_bpt(const struct context *c)
{
	if (c->last_in <= 0 || !c->last_bytes)
		return 4;
	double bpt = (double)c->last_bytes / (double)c->last_in;
	return bpt < 2 ? 2 : bpt > 8 ? 8 : bpt;
}

long context_estimate(const struct context *c, size_t bytes)
{
	if (c->last_in <= 0 || !c->last_bytes)
		return (long)(bytes / 4) + 1;
	double bpt = context_bpt(c);
	double est =
	    (double)c->last_in + ((double)bytes - (double)c->last_bytes) / bpt;
	double low = (double)bytes / 8;
	return (long)(est < low ? low : est) + 1;
}

/* The canonical size of the request the session would make now. */
static size_t context_bytes(const struct session *s, const cJSON *messages)
{
	struct llm_request req;
	session_llm_request(s, &req);
	if (messages)
		req.messages = messages;
	char *canon = llm_canonical_request(s->llm, &req);
	size_t n = strlen(canon);
	free(canon);
	/* an image is in the canonical request by its hash: it counts as
	 * the bytes its tokens stand for */
	long img = messages_image_tokens(req.messages);
	return n + (size_t)((double)img * context_bpt(&s->ctx));
}

void context_output_file(struct session *s, const char *id, const char *path)
{
	if (!path || !id || !s->ctx.files)
		return;
	const char *base = strrchr(path, '/');
	cJSON_DeleteItemFromObjectCaseSensitive(s->ctx.files, id);
	cJSON_AddStringToObject(s->ctx.files, id, base ? base + 1 : path);
}

/* The stub that stands for a tool result in the history (a message,
 * not an event). */
static char *context_stub(const struct context *c, const cJSON *msg)
{
	const char *id = json_str(msg, "tool_call_id", "");
	const char *name = json_str(msg, "name", "");
	size_t n = strlen(json_str(msg, "content", ""));
	const char *file = json_str(c->files, id, NULL);
	const cJSON *images = cJSON_GetObjectItem(msg, "images");
	if (cJSON_GetArraySize(images) > 0) {
		const cJSON *img = cJSON_GetArrayItem(images, 0);
		int more = cJSON_GetArraySize(images) - 1;
		char others[48] = "";
		if (more > 0)
			snprintf(others, sizeof others, " and %d other%s", more,
			         more > 1 ? "s" : "");
		return xasprintf("[output of call %s (%s) elided to save "
		                 "context, with its image %s%s; view_image "
		                 "shows an image again]",
		                 id, name, json_str(img, "path", ""), others);
	}
	char size[32];
	if (n >= 10240)
		snprintf(size, sizeof size, "%.0f KB", (double)n / 1024);
	else
		snprintf(size, sizeof size, "%.1f KB", (double)n / 1024);
	if (file)
		return xasprintf(
		    "[output of call %s (%s) elided to save "
		    "context: %s; read_file with path \"@exec/%s\" "
		    "shows the full output again]",
		    id, name, size, file);
	return xasprintf("[output of call %s (%s) elided to save context: "
	                 "%s; run the call again if you need it]",
	                 id, name, size);
}

/* Index of the n-th assistant message from the end (n >= 1), moved
 * back over the user messages just before it; -1 when there are fewer
 * than n. */
static int context_turn_start(const cJSON *msgs, int n)
{
	int i = cJSON_GetArraySize(msgs) - 1, seen = 0;
	for (; i >= 0; i--) {
		const char *role =
		    json_str(cJSON_GetArrayItem(msgs, i), "role", "");
		if (!strcmp(role, "assistant") && ++seen == n)
			break;
	}
	if (i < 0)
		return -1;
	while (i > 0 &&
	       !strcmp(json_str(cJSON_GetArrayItem(msgs, i - 1), "role", ""),
	               "user"))
		i--;
	return i;
}

/* Whether message m (not an event) is a tool result worth a stub. */
static int context_trimmable(const cJSON *m)
{
	return !strcmp(json_str(m, "role", ""), "tool") &&
	       !json_bool(m, "elided", 0) &&
	       (strlen(json_str(m, "content", "")) >= CONTEXT_STUB_MIN ||
	        cJSON_GetArraySize(cJSON_GetObjectItem(m, "images")) > 0);
}

static void context_elide(cJSON *m, const char *stub)
{
	cJSON_ReplaceItemInObjectCaseSensitive(m, "content",
	                                       cJSON_CreateString(stub));
	cJSON_DeleteItemFromObjectCaseSensitive(m, "elided");
	cJSON_AddBoolToObject(m, "elided", 1);
	cJSON_DeleteItemFromObjectCaseSensitive(m, "images");
}

struct trim {
	cJSON *ids, *at, *stubs;
	size_t removed;
};

/* Stub message m (index i of the history; not an event); its bytes
 * saved. */
static void trim_one(struct trim *t, const struct context *c, cJSON *m, int i)
{
	char *stub = context_stub(c, m);
	size_t was = strlen(json_str(m, "content", ""));
	const cJSON *img;
	cJSON_ArrayForEach(img, cJSON_GetObjectItem(m, "images"))
	{
		long tk = json_long(img, "tokens", 0);
		if (tk > 0)
			was += (size_t)((double)tk * context_bpt(c));
	}
	t->removed += was > strlen(stub) ? was - strlen(stub) : 0;
	cJSON_AddItemToArray(
	    t->ids, cJSON_CreateString(json_str(m, "tool_call_id", "")));
	cJSON_AddItemToArray(t->at, cJSON_CreateNumber(i));
	cJSON_AddItemToArray(t->stubs, cJSON_CreateString(stub));
	context_elide(m, stub);
	free(stub);
}

/* Trim s->conv.messages when the next request (of *bytes, canonical) would
 * pass trim_at; the estimate after, and *bytes the size after. */
static long context_trim(struct session *s, size_t *bytes, long est)
{
	struct context *c = &s->ctx;
	const struct config *cfg = s->cfg;
	double limit = cfg->context.trim_at * (double)c->window;
	if ((double)est <= limit)
		return est;
	struct trim t = {cJSON_CreateArray(), cJSON_CreateArray(),
	                 cJSON_CreateArray(), 0};
	/* first every result older than the turns kept whole */
	int keep =
	    context_turn_start(s->conv.messages, cfg->context.keep_turns);
	int last = context_turn_start(s->conv.messages, 1);
	for (int i = 0; i < keep; i++) {
		cJSON *m = cJSON_GetArrayItem(s->conv.messages, i);
		if (context_trimmable(m))
			trim_one(&t, c, m, i);
	}
	/* then, oldest first, those of the kept turns but the last, down
	 * to the low-water mark */
	double low = limit * CONTEXT_TRIM_LOW;
	for (int i = keep < 0 ? 0 : keep; i < last; i++) {
		if ((double)context_estimate(c, *bytes - t.removed) <= low)
			break;
		cJSON *m = cJSON_GetArrayItem(s->conv.messages, i);
		if (context_trimmable(m))
			trim_one(&t, c, m, i);
	}
	long after = est;
	if (cJSON_GetArraySize(t.ids) > 0) {
		*bytes = context_bytes(s, NULL);
		after = context_estimate(c, *bytes);
		session_emit(s, ev_context_trim(s->conv.turn + 1, t.ids, t.at,
		                                t.stubs, t.removed, est, after,
		                                c->window));
		log_info("context: %d results elided before turn %d (%zu "
		         "bytes): about %ld -> %ld tokens of %ld",
		         cJSON_GetArraySize(t.ids), s->conv.turn + 1, t.removed,
		         est, after, c->window);
	}
	cJSON_Delete(t.ids);
	cJSON_Delete(t.at);
	cJSON_Delete(t.stubs);
	return after;
}

/* The history the summary request carries: s->conv.messages and the ask,
 * made to fit the window (more results elided, then the oldest turns
 * left out) when it would not. */
static cJSON *context_summary_input(struct session *s, int *left_out)
{
	struct context *c = &s->ctx;
	cJSON *msgs = cJSON_Duplicate(s->conv.messages, 1);
	/* all of it is sent: no chain of responses stored at the provider
	 * (responses_store), which would send only the ask */
	cJSON *it;
	cJSON_ArrayForEach(it, msgs)
	{
		cJSON_DeleteItemFromObjectCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(it, "provider_items"),
		    "response_id");
	}
	messages_add_user(msgs, context_prompt);
	*left_out = 0;
	if (c->window <= 0)
		return msgs;
	/* room for the answer: the output limit, at most a quarter */
	double reserve = (double)s->cfg->max_output_tokens;
	if (reserve > (double)c->window / 4)
		reserve = (double)c->window / 4;
	double fit = CONTEXT_SUMMARY_FIT * (double)c->window - reserve;
	if ((double)context_estimate(c, context_bytes(s, msgs)) <= fit)
		return msgs;
	int last = context_turn_start(msgs, 1);
	for (int i = 0; i < last; i++) {
		cJSON *m = cJSON_GetArrayItem(msgs, i);
		if (context_trimmable(m)) {
			char *stub = context_stub(c, m);
			context_elide(m, stub);
			free(stub);
		}
	}
	/* the user's first messages (and an earlier summary) stay; whole
	 * turns after them go, oldest first, while the rest does not fit */
	int head = 0, n = cJSON_GetArraySize(msgs);
	while (head < n &&
	       strcmp(json_str(cJSON_GetArrayItem(msgs, head), "role", ""),
	              "assistant"))
		head++;
	while ((double)context_estimate(c, context_bytes(s, msgs)) > fit) {
		n = cJSON_GetArraySize(msgs);
		int end = head + 1;
		while (end < n && strcmp(json_str(cJSON_GetArrayItem(msgs, end),
		                                  "role", ""),
		                         "assistant"))
			end++;
		if (end >= context_turn_start(msgs, 1) || end >= n)
			break; /* only the last turn is left */
		for (int i = head; i < end; i++)
			cJSON_DeleteItemFromArray(msgs, head);
		*left_out += end - head;
	}
	if (*left_out) {
		char *note =
		    xasprintf("[assay: %d messages after these are left "
		              "out here: they do not fit the context "
		              "window]",
		              *left_out);
		cJSON *m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "role", "user");
		cJSON_AddStringToObject(m, "content", note);
		/* (cJSON_InsertItemInArray, as Debian's cJSON has it, did
		 * not insert here: the sanitizer build saw the note leak) */
		cJSON *rest = cJSON_CreateArray();
		while (cJSON_GetArraySize(msgs) > head)
			cJSON_AddItemToArray(
			    rest, cJSON_DetachItemFromArray(msgs, head));
		cJSON_AddItemToArray(msgs, m);
		while (cJSON_GetArraySize(rest) > 0)
			cJSON_AddItemToArray(
			    msgs, cJSON_DetachItemFromArray(rest, 0));
		cJSON_Delete(rest);
		free(note);
	}
	return msgs;
}

/* The history after a compaction: the summary, then messages from keep
 * on. A kept answer loses the id of a response stored at the provider
 * (responses_store): chaining from it would bring back the whole stored
 * conversation, so the next request starts a new chain. */
static cJSON *context_compacted(const cJSON *messages, int keep,
                                const char *summary)
{
	cJSON *next = cJSON_CreateArray();
	char *head = context_summary_message(summary, keep);
	messages_add_user(next, head);
	free(head);
	int n = cJSON_GetArraySize(messages);
	for (int i = keep; i < n; i++) {
		cJSON *m = cJSON_Duplicate(cJSON_GetArrayItem(messages, i), 1);
		cJSON *pi =
		    cJSON_GetObjectItemCaseSensitive(m, "provider_items");
		cJSON_DeleteItemFromObjectCaseSensitive(pi, "response_id");
		cJSON_AddItemToArray(next, m);
	}
	return next;
}

char *context_summary_message(const char *summary, int replaced)
{
	return xasprintf("[assay: a summary of the session so far, written by "
	                 "the model when the conversation grew too long for "
	                 "its context window; it replaces the %d earlier "
	                 "messages, which the run's transcript keeps.]\n\n%s",
	                 replaced, summary);
}

/* Prepare the compaction that keeps the messages from keep on. */
static void context_compact_from(struct session *s, const char *reason,
                                 int keep)
{
	struct context *c = &s->ctx;
	int left_out = 0;
	cJSON_Delete(c->sum_messages);
	c->sum_messages = context_summary_input(s, &left_out);
	struct llm_request req;
	session_llm_request(s, &req);
	req.messages = c->sum_messages;
	char *canon = llm_canonical_request(s->llm, &req);
	char hash[65];
	sha256_hex(canon, strlen(canon), hash);
	c->sum_bytes = strlen(canon);
	free(canon);
	free(c->hash);
	c->hash = xstrdup(hash);
	free(c->reason);
	c->reason = xstrdup(reason);
	c->keep_from = keep;
	c->est_before = context_estimate(c, context_bytes(s, NULL));
	c->compacting = 1;
	session_emit(s,
	             ev_compaction_started(
	                 reason, s->conv.turn, c->est_before, c->window,
	                 cJSON_GetArraySize(s->conv.messages), keep, left_out));
	log_info("context: compacting (%s) before turn %d: %d messages, "
	         "about %ld tokens of %ld",
	         reason, s->conv.turn + 1, cJSON_GetArraySize(s->conv.messages),
	         c->est_before, c->window);
}

int context_compact(struct session *s, const char *reason, int keep_turns,
                    char **err)
{
	int keep = context_turn_start(s->conv.messages, keep_turns);
	while (keep <= 0 && keep_turns > 1)
		keep = context_turn_start(s->conv.messages, --keep_turns);
	if (keep <= 0)
		return set_err(err, "nothing to compact: the conversation is "
		                    "only its last turn");
	context_compact_from(s, reason, keep);
	return 0;
}

/* Whether replacing the messages before keep by a summary would shrink
 * a request of about est tokens much: they are estimated at a quarter
 * of it at least. (A history whose size is mostly its last turns, or a
 * provider whose token counts do not follow the bytes, would be
 * compacted again and again for nothing.) What it reads is the
 * history: not an event. */
static int context_worth(const struct context *c, const cJSON *messages,
                         int keep, long est)
{
	double old = 0;
	for (int i = 0; i < keep; i++) {
		const cJSON *m = cJSON_GetArrayItem(messages, i), *img;
		char *t = cJSON_PrintUnformatted(m);
		old += t ? (double)strlen(t) : 0;
		free(t);
		/* an image by its tokens, as the estimate counts it, not its
		 * base64 */
		cJSON_ArrayForEach(img, cJSON_GetObjectItem(m, "images"))
		{
			old -= (double)strlen(json_str(img, "data", ""));
			old += json_num(img, "tokens", 0) * context_bpt(c);
		}
	}
	return old / context_bpt(c) * 4 >= (double)est;
}

/* A re-execute following its record compacts where the record did
 * (also where a refusal made it: none comes now), keeping as many
 * messages; 1 when it prepared that compaction. */
static int context_follow(struct session *s)
{
	struct context *c = &s->ctx;
	const cJSON *e =
	    s->replay ? replay_compaction_before(s->replay, s->conv.turn + 1)
	              : NULL;
	if (!e || c->followed == s->conv.turn + 2)
		return 0;
	/* the same history so far: the same first message kept */
	int keep = ev_int(e, EVF_REPLACED, -1);
	if (keep < 1 || keep >= cJSON_GetArraySize(s->conv.messages))
		return 0;
	c->followed = s->conv.turn + 2;
	/* a refusal lowered the record's window: so here */
	if (ev_num(e, EVF_WINDOW, 0) > 0)
		c->window = ev_long(e, EVF_WINDOW, 0);
	context_compact_from(s, ev_str(e, EVF_REASON, "threshold"), keep);
	return 1;
}

int context_before_request(struct session *s)
{
	struct context *c = &s->ctx;
	size_t bytes = context_bytes(s, NULL);
	long est = context_estimate(c, bytes);
	if (c->window > 0 &&
	    (double)est > s->cfg->context.trim_at * (double)c->window) {
		est = context_trim(s, &bytes, est);
	}
	c->sent_bytes = bytes;
	c->est = est;
	/* a re-execute compacts where its record did, after the same
	 * trim */
	if (context_follow(s))
		return 1;
	if (c->window <= 0 ||
	    (double)est <= s->cfg->context.compact_at * (double)c->window ||
	    c->no_compact)
		return 0;
	int keep_turns = s->cfg->context.keep_turns;
	int keep = context_turn_start(s->conv.messages, keep_turns);
	while (keep <= 0 && keep_turns > 1)
		keep = context_turn_start(s->conv.messages, --keep_turns);
	if (keep <= 0 || !context_worth(c, s->conv.messages, keep, est)) {
		log_info(
		    "context: about %ld tokens of %ld, but a summary would "
		    "replace little: not compacting before turn %d",
		    est, c->window, s->conv.turn + 1);
		c->no_compact = 1;
		return 0;
	}
	context_compact_from(s, "threshold", keep);
	return 1;
}

void context_answered(struct session *s, const struct llm_result *r)
{
	struct context *c = &s->ctx;
	c->no_compact = 0;
	c->recovered = 0;
	if (r->usage.known && r->usage.input_tokens > 0 && c->sent_bytes) {
		c->last_in = r->usage.input_tokens;
		c->last_bytes = c->sent_bytes;
	}
}

int context_refused(struct session *s, const struct llm_result *r)
{
	struct context *c = &s->ctx;
	if (!r->error_category || strcmp(r->error_category, LLM_ERR_CONTEXT) ||
	    c->recovered)
		return 0;
	c->recovered = 1;
	/* what was sent did not fit: the window is at most its size */
	if (c->est > 0 && (c->window <= 0 || c->est < c->window))
		c->window = c->est;
	char *err = NULL;
	if (context_compact(s, "context_length_exceeded", 1, &err) < 0) {
		log_info("context: %s", err);
		free(err);
		return 0;
	}
	c->retry = 1;
	return 1;
}

/* The compaction is over (failed: why): the state it leaves. */
static void context_end(struct context *c)
{
	c->compacting = 0;
	cJSON_Delete(c->sum_messages);
	c->sum_messages = NULL;
}

void context_abandon(struct session *s, const char *why)
{
	struct context *c = &s->ctx;
	if (!c->compacting)
		return;
	session_emit(s, ev_compaction_failed(c->reason, s->conv.turn, why));
	context_end(c);
	c->retry = c->user = c->recovered = 0;
}

int context_summarized(struct session *s, struct llm_result *r, int cached)
{
	struct context *c = &s->ctx;
	const char *text = r->ok ? r->text : NULL;
	while (text && isspace((unsigned char)*text))
		text++;
	if (!text || !*text) {
		char *why = r->ok ? xstrdup("the model answered without a "
		                            "summary")
		                  : xstrdup(r->error_message ? r->error_message
		                                             : "the request "
		                                               "failed");
		context_abandon(s, why);
		free(why);
		c->no_compact = 1;
		return -1;
	}
	cache_save(s->rundir.run_dir, c->hash, r);
	int n = cJSON_GetArraySize(s->conv.messages);
	int keep = c->keep_from;
	cJSON *next = context_compacted(s->conv.messages, keep, text);
	size_t after_bytes = context_bytes(s, next);
	/* the summary request was measured: its bytes per token serve */
	if (r->usage.known && r->usage.input_tokens > 0) {
		c->last_in = r->usage.input_tokens;
		c->last_bytes = c->sum_bytes;
	}
	long after = context_estimate(c, after_bytes);
	struct llm_usage none = {.known = 1};
	struct ev_compaction done = {
	    .reason = c->reason,
	    .turn = s->conv.turn,
	    .request_hash = c->hash,
	    .cached = cached,
	    .replaced = keep,
	    .kept = n - keep,
	    .est_before = c->est_before,
	    .est_after = after,
	    .window = c->window,
	    .summary = text,
	};
	session_emit(s, ev_compaction_done(&done));
	session_emit(s, budget_usage_of(&s->budget, s->conv.turn,
	                                cached ? &none : &r->usage, 0, 1));
	log_info("context: compacted: %d messages replaced by a summary of "
	         "%zu bytes, %d kept: about %ld -> %ld tokens",
	         keep, strlen(text), n - keep, c->est_before, after);
	conv_set_messages(s, next);
	context_end(c);
	return 0;
}

void context_apply(cJSON **messages, const cJSON *ev)
{
	if (event_type_of(ev) == EV_CONTEXT_TRIM) {
		const cJSON *ids = ev_item(ev, EVF_IDS);
		const cJSON *at = ev_item(ev, EVF_AT);
		const cJSON *stubs = ev_item(ev, EVF_STUBS);
		int n = cJSON_GetArraySize(ids);
		for (int i = 0; i < n; i++) {
			const char *id =
			    cJSON_GetStringValue(cJSON_GetArrayItem(ids, i));
			const char *stub =
			    cJSON_GetStringValue(cJSON_GetArrayItem(stubs, i));
			/* the message it was (an id a model repeats names
			 * more than one) */
			const cJSON *k = cJSON_GetArrayItem(at, i);
			cJSON *m =
			    cJSON_IsNumber(k)
			        ? cJSON_GetArrayItem(*messages, k->valueint)
			        : NULL;
			if (id && stub && m &&
			    !strcmp(json_str(m, "role", ""), "tool") &&
			    !strcmp(json_str(m, "tool_call_id", ""), id))
				context_elide(m, stub);
		}
		return;
	}
	if (event_type_of(ev) != EV_COMPACTION ||
	    strcmp(ev_str(ev, EVF_STATE, ""), "done"))
		return;
	int replaced = ev_int(ev, EVF_REPLACED, 0);
	int n = cJSON_GetArraySize(*messages);
	if (replaced <= 0 || replaced > n)
		return;
	cJSON *next =
	    context_compacted(*messages, replaced, ev_str(ev, EVF_SUMMARY, ""));
	cJSON_Delete(*messages);
	*messages = next;
}

void context_set_user(struct session *s, int user)
{
	s->ctx.user = user;
}

void context_take_wait(struct session *s, int *user, int *retry)
{
	*user = s->ctx.user;
	*retry = s->ctx.retry;
	s->ctx.user = s->ctx.retry = 0;
}

void context_set_window(struct session *s, long window)
{
	s->ctx.window = window;
}
