/* session.c: the run's state machine. A turn streams a model answer;
 * its tool calls run one after another; their results go back in the
 * next request, until the model answers without tool calls or a limit
 * is hit. Every step is an event, written to the transcript and shown
 * to the observers. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/http.h"
#include "assay/json.h"
#include "assay/llm.h"
#include "assay/log.h"
#include "assay/path.h"
#include "assay/loop.h"
#include "assay/sandbox.h"
#include "assay/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TEXT_DELTA_MS 30

static void request_turn(struct session *s);
static void finish(struct session *s, const char *status, int code);
static void go_idle(struct session *s, const char *reason);
static void skip_pending(struct session *s);

cJSON *event_new(const char *type)
{
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "type", type);
	return ev;
}

/* Every string of an event must be valid UTF-8 (JSON, the transcript,
 * the next request): model text, arguments, paths and errors may not
 * be. Fixes them in place. */
static void sanitize_strings(cJSON *item)
{
	for (cJSON *it = item; it; it = it->next) {
		if (cJSON_IsString(it) && it->valuestring &&
		    !utf8_valid(it->valuestring, strlen(it->valuestring))) {
			char *clean = utf8_sanitize(
			    it->valuestring, strlen(it->valuestring), NULL);
			cJSON_free(it->valuestring);
			it->valuestring = cJSON_malloc(strlen(clean) + 1);
			strcpy(it->valuestring, clean);
			free(clean);
		}
		if (it->string && !utf8_valid(it->string, strlen(it->string))) {
			/* object keys come from us, or are paths: same rule */
			char *clean =
			    utf8_sanitize(it->string, strlen(it->string), NULL);
			if (!(it->type & cJSON_StringIsConst))
				cJSON_free(it->string);
			it->type &= ~cJSON_StringIsConst;
			it->string = cJSON_malloc(strlen(clean) + 1);
			strcpy(it->string, clean);
			free(clean);
		}
		if (it->child)
			sanitize_strings(it->child);
	}
}

void session_emit(struct session *s, cJSON *ev)
{
	sanitize_strings(ev->child);
	/* seq and t go first so the transcript reads well */
	cJSON *out = cJSON_CreateObject();
	cJSON_AddNumberToObject(out, "seq", (double)++s->seq);
	cJSON_AddNumberToObject(out, "t", (double)(now_ms() - s->t0));
	cJSON *it = ev->child;
	ev->child = NULL;
	while (it) {
		cJSON *next = it->next;
		it->prev = it->next = NULL;
		cJSON_AddItemToObject(out, it->string, it);
		it = next;
	}
	cJSON_Delete(ev);
	if (s->transcript) {
		char *line = json_print(out);
		fputs(line, s->transcript);
		fputc('\n', s->transcript);
		fflush(s->transcript);
		free(line);
	}
	for (size_t i = 0; i < s->nobs; i++)
		s->obs[i].fn(s->obs[i].arg, out);
	cJSON_Delete(out);
}

static void emit_error(struct session *s, const char *category,
                       const char *message, long retry_in_ms)
{
	cJSON *ev = event_new("error");
	cJSON_AddStringToObject(ev, "category", category);
	cJSON_AddStringToObject(ev, "message", message);
	if (retry_in_ms >= 0)
		cJSON_AddNumberToObject(ev, "retry_in_ms", (double)retry_in_ms);
	session_emit(s, ev);
}

struct session *session_new(struct loop *l, struct config *cfg, char **err)
{
	struct session *s = xcalloc(1, sizeof *s);
	s->loop = l;
	s->cfg = cfg;
	s->exit_code = EXIT_OK;
	s->t0 = now_ms();
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

void session_free(struct session *s)
{
	if (!s)
		return;
	/* stopping the sandbox below may still report the command it
	 * kills: nothing may react to that any more */
	s->freeing = 1;
	if (s->delta_timer)
		loop_timer_cancel(s->loop, s->delta_timer);
	if (s->next_timer)
		loop_timer_cancel(s->loop, s->next_timer);
	tools_cancel(s);
	if (s->llm)
		llm_free(s->llm);
	if (s->sbx) {
		s->sbx->ops->stop(s->sbx);
		sbx_free(s->sbx);
	}
	http_free(s->http);
	if (s->transcript)
		fclose(s->transcript);
	if (s->lock_fd >= 0)
		close(s->lock_fd); /* the run dir is free again */
	/* a start that failed before run_start leaves nothing behind */
	if (s->seq == 0 && s->made_run_dir && s->run_dir)
		rm_rf(s->run_dir);
	approval_free(s);
	replay_free(s);
	step_free(s);
	cJSON_Delete(s->queued);
	cJSON_Delete(s->messages);
	cJSON_Delete(s->tools);
	cJSON_Delete(s->pending);
	snapshot_free(s->snapshot);
	buf_free(&s->turn_text);
	buf_free(&s->delta);
	free(s->obs);
	free(s->run_id);
	free(s->run_dir);
	free(s->system_prompt);
	free(s->request_hash);
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
	return s->exit_code;
}

const char *session_run_dir(const struct session *s)
{
	return s->run_dir;
}

/* --- text streaming ------------------------------------------------ */

static void flush_delta(struct session *s)
{
	if (s->delta_timer) {
		loop_timer_cancel(s->loop, s->delta_timer);
		s->delta_timer = 0;
	}
	if (!s->delta.len)
		return;
	/* hold back a split UTF-8 character for the next flush */
	size_t n = utf8_complete_prefix(s->delta.data, s->delta.len);
	if (!n)
		return;
	cJSON *ev = event_new("text_delta");
	cJSON_AddNumberToObject(ev, "turn", s->turn);
	char *t = utf8_sanitize(s->delta.data, n, NULL);
	cJSON_AddStringToObject(ev, "text", t);
	free(t);
	buf_consume(&s->delta, n);
	session_emit(s, ev);
}

static void delta_timer_fired(void *arg)
{
	struct session *s = arg;
	s->delta_timer = 0;
	flush_delta(s);
}

static void on_llm_text(void *arg, const char *text, size_t n)
{
	struct session *s = arg;
	buf_append(&s->turn_text, text, n);
	buf_append(&s->delta, text, n);
	if (!s->delta_timer)
		s->delta_timer = loop_timer_add(s->loop, TEXT_DELTA_MS,
		                                delta_timer_fired, s);
}

static void on_llm_retry(void *arg, int attempt, long delay_ms,
                         const char *category, const char *message,
                         size_t discarded)
{
	struct session *s = arg;
	flush_delta(s);
	buf_reset(&s->delta);
	buf_reset(&s->turn_text);
	cJSON *ev = event_new("error");
	cJSON_AddStringToObject(ev, "category", category);
	cJSON_AddStringToObject(ev, "message", message);
	cJSON_AddNumberToObject(ev, "retry_in_ms", (double)delay_ms);
	cJSON_AddNumberToObject(ev, "attempt", attempt);
	cJSON_AddNumberToObject(ev, "discarded_bytes", (double)discarded);
	cJSON_AddNumberToObject(ev, "turn", s->turn);
	session_emit(s, ev);
}

/* --- the turn ------------------------------------------------------ */

static void save_cache(struct session *s, const struct llm_result *r)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "request_hash", s->request_hash);
	cJSON_AddStringToObject(c, "text", r->text ? r->text : "");
	cJSON_AddItemToObject(c, "tool_calls",
	                      cJSON_Duplicate(r->tool_calls, 1));
	cJSON_AddStringToObject(c, "finish_reason",
	                        r->finish_reason ? r->finish_reason : "");
	cJSON *u = cJSON_AddObjectToObject(c, "usage");
	cJSON_AddNumberToObject(u, "input_tokens", r->usage.input_tokens);
	cJSON_AddNumberToObject(u, "output_tokens", r->usage.output_tokens);
	cJSON_AddNumberToObject(u, "cached_tokens", r->usage.cached_tokens);
	char *text = json_print(c);
	char *path = xasprintf("%s/cache/%s.json", s->run_dir, s->request_hash);
	char *err = NULL;
	if (write_file_replace(path, text, strlen(text), &err) < 0) {
		log_warn("cache: %s", err);
		free(err);
	}
	free(path);
	free(text);
	cJSON_Delete(c);
}

static void emit_usage(struct session *s, const struct llm_result *r)
{
	if (s->cached_answer) {
		/* nothing was sent: nothing is billed */
		struct llm_result zero = *r;
		zero.usage = (struct llm_usage){.known = 1};
		s->cached_answer = 0;
		emit_usage(s, &zero);
		return;
	}
	s->in_tokens += r->usage.input_tokens;
	s->out_tokens += r->usage.output_tokens;
	s->cached_tokens += r->usage.cached_tokens;
	cJSON *ev = event_new("usage");
	cJSON_AddNumberToObject(ev, "turn", s->turn);
	cJSON_AddNumberToObject(ev, "input_tokens", r->usage.input_tokens);
	cJSON_AddNumberToObject(ev, "output_tokens", r->usage.output_tokens);
	cJSON_AddNumberToObject(ev, "cached_tokens", r->usage.cached_tokens);
	cJSON_AddNumberToObject(ev, "cost_usd", 0);
	cJSON_AddBoolToObject(ev, "known", r->usage.known);
	cJSON *tot = cJSON_AddObjectToObject(ev, "totals");
	cJSON_AddNumberToObject(tot, "input_tokens", (double)s->in_tokens);
	cJSON_AddNumberToObject(tot, "output_tokens", (double)s->out_tokens);
	cJSON_AddNumberToObject(tot, "cached_tokens", (double)s->cached_tokens);
	cJSON_AddNumberToObject(tot, "cost_usd", s->cost);
	session_emit(s, ev);
}

/* A backend without a host workspace keeps its files remote: archive
 * them after every call that may change them, before its result is
 * recorded, so a killed run is resumed (resume.c) from a workspace
 * that holds every recorded result's effect. */
static void persist_workspace(struct session *s)
{
	if (!s->persist_each_turn || !s->sbx || s->interrupted ||
	    s->state == SESSION_DONE)
		return; /* finish() archives at the end */
	char *path = xasprintf("%s/workspace.tar.gz", s->run_dir);
	char *err = NULL;
	if (s->sbx->ops->export_tar(s->sbx, path, &err) < 0) {
		log_warn("persisting the workspace: %s", err);
		free(err);
	}
	free(path);
}

/* The next call of the turn, once its decision is known (approval.c
 * decides; a call that waits for a person leaves the session in
 * AWAITING_APPROVAL until session_approve wakes it). */
static void run_next_call(struct session *s)
{
	if (s->interrupted) {
		finish(s, "interrupted", EXIT_INTERRUPTED);
		return;
	}
	int n = cJSON_GetArraySize(s->pending);
	if (s->next_call >= n) {
		cJSON_Delete(s->pending);
		s->pending = NULL;
		request_turn(s);
		return;
	}
	const cJSON *call = NULL;
	const char *denied = NULL;
	if (!approval_next(s, &call, &denied)) {
		s->state = SESSION_AWAITING_APPROVAL;
		return;
	}
	if (!denied && step_before_exec(s, call))
		return;
	s->next_call++;
	s->state = SESSION_EXECUTING;
	if (denied)
		tools_finished(s, json_str(call, "id", ""), denied, 1);
	else
		tools_run(s, call);
}

void session_run_next(struct session *s)
{
	run_next_call(s);
}

static void on_llm_done(void *arg, struct llm_result *r)
{
	session_deliver(arg, r);
}

void session_deliver(struct session *s, struct llm_result *r)
{
	flush_delta(s);
	buf_reset(
	    &s->delta); /* a cut character must not leak into the next turn */
	if (!r->ok) {
		emit_error(
		    s, r->error_category ? r->error_category : LLM_ERR_SERVER,
		    r->error_message ? r->error_message
		                     : "model request failed",
		    -1);
		llm_result_free(r);
		if (s->interactive) { /* the user may try again */
			s->failed = 1;
			go_idle(s, "failed");
			return;
		}
		finish(s, "failed", EXIT_PROVIDER);
		return;
	}
	save_cache(s, r);
	cJSON *ev = event_new("assistant_message");
	cJSON_AddNumberToObject(ev, "turn", s->turn);
	cJSON_AddStringToObject(ev, "text", r->text ? r->text : "");
	cJSON_AddItemToObject(ev, "tool_calls",
	                      cJSON_Duplicate(r->tool_calls, 1));
	if (r->finish_reason)
		cJSON_AddStringToObject(ev, "finish_reason", r->finish_reason);
	session_emit(s, ev);
	emit_usage(s, r);

	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "role", "assistant");
	cJSON_AddStringToObject(msg, "content", r->text ? r->text : "");
	int ncalls = cJSON_GetArraySize(r->tool_calls);
	if (ncalls > 0)
		cJSON_AddItemToObject(msg, "tool_calls",
		                      cJSON_Duplicate(r->tool_calls, 1));
	cJSON_AddItemToArray(s->messages, msg);
	buf_reset(&s->turn_text);

	if (ncalls == 0) {
		llm_result_free(r);
		if (replay_next_user(s))
			return;
		if (s->interactive)
			go_idle(s, "answered");
		else
			finish(s, "completed", EXIT_OK);
		return;
	}
	cJSON_Delete(s->pending);
	s->pending = cJSON_Duplicate(r->tool_calls, 1);
	s->next_call = 0;
	llm_result_free(r);
	approval_turn(s);
	if (s->state != SESSION_DONE)
		run_next_call(s);
}

static int budget_left(struct session *s, char **why)
{
	const struct config *c = s->cfg;
	if (s->turn >= c->max_turns) {
		*why = xasprintf("turn limit reached (%d turns): raise "
		                 "--max-turns to go on",
		                 c->max_turns);
		return 0;
	}
	if (c->max_tokens > 0 &&
	    s->in_tokens + s->out_tokens >= c->max_tokens) {
		*why = xasprintf("token budget reached (%ld of %ld): raise "
		                 "--max-tokens to go on",
		                 s->in_tokens + s->out_tokens, c->max_tokens);
		return 0;
	}
	if (c->max_cost > 0 && s->cost >= c->max_cost) {
		*why = xasprintf("cost budget reached ($%.4f of $%.4f): raise "
		                 "--max-cost to go on",
		                 s->cost, c->max_cost);
		return 0;
	}
	return 1;
}

void session_request(struct session *s)
{
	request_turn(s);
}

void session_finish(struct session *s, const char *status, int code)
{
	finish(s, status, code);
}

void session_idle(struct session *s, const char *reason)
{
	go_idle(s, reason);
}

static void request_turn(struct session *s)
{
	char *why = NULL;
	if (s->interrupted) {
		finish(s, "interrupted", EXIT_INTERRUPTED);
		return;
	}
	if (!budget_left(s, &why)) {
		emit_error(s, "budget", why, -1);
		free(why);
		finish(s, "budget_exhausted", EXIT_BUDGET);
		return;
	}
	struct llm_request req = {
	    .model = s->llm->model,
	    .system = s->system_prompt,
	    .messages = s->messages,
	    .tools = s->tools,
	    .max_output_tokens = s->cfg->max_output_tokens,
	};
	if (replay_request(s, &req))
		return;
	if (step_before_request(s, &req))
		return;
	s->turn++;
	char *canon = llm_canonical_request(s->llm, &req);
	char hash[65];
	sha256_hex(canon, strlen(canon), hash);
	free(canon);
	free(s->request_hash);
	s->request_hash = xstrdup(hash);
	cJSON *ev = event_new("model_request");
	cJSON_AddNumberToObject(ev, "turn", s->turn);
	cJSON_AddStringToObject(ev, "request_hash", hash);
	cJSON_AddBoolToObject(ev, "cached", 0);
	cJSON_AddNumberToObject(ev, "messages",
	                        cJSON_GetArraySize(s->messages));
	session_emit(s, ev);
	s->state = SESSION_REQUESTING;
	char *err = NULL;
	if (llm_start(s->llm, &req, &err) < 0) {
		emit_error(s, LLM_ERR_SERVER, err, -1);
		free(err);
		finish(s, "failed", EXIT_PROVIDER);
	}
}

/* --- workspace changes --------------------------------------------- */

static void emit_change(void *arg, const char *path, const char *kind,
                        double size)
{
	cJSON *ev = event_new("workspace_change");
	cJSON_AddStringToObject(ev, "path", path);
	cJSON_AddStringToObject(ev, "kind", kind);
	cJSON_AddNumberToObject(ev, "size", size);
	session_emit(arg, ev);
}

static void on_tree(void *arg, int rc, const char *err, struct buf *data,
                    cJSON *list)
{
	struct session *s = arg;
	(void)data;
	if (s->freeing)
		return;
	if (rc < 0) {
		log_warn("workspace scan: %s", err ? err : "failed");
		return;
	}
	struct snapshot *now = snapshot_new(list);
	snapshot_diff(s->snapshot, now, emit_change, s);
	snapshot_free(s->snapshot);
	s->snapshot = now;
}

static void scan_workspace(struct session *s)
{
	s->sbx->ops->list(s->sbx, ".", 1, 100000, on_tree, s);
}

static void on_tree_quiet(void *arg, int rc, const char *err, struct buf *data,
                          cJSON *list)
{
	struct session *s = arg;
	(void)data;
	if (s->freeing || rc < 0) {
		if (rc < 0)
			log_warn("workspace scan: %s", err ? err : "failed");
		return;
	}
	snapshot_free(s->snapshot);
	s->snapshot = snapshot_new(list);
}

void session_scan(struct session *s, int quiet)
{
	if (quiet)
		s->sbx->ops->list(s->sbx, ".", 1, 100000, on_tree_quiet, s);
	else
		scan_workspace(s);
}

static void next_call_timer(void *arg)
{
	struct session *s = arg;
	if (s->cancelling && s->state != SESSION_DONE) {
		skip_pending(s);
		return;
	}
	run_next_call(s);
}

void session_add_tool_message(struct session *s, const char *id,
                              const char *name, const char *content,
                              int is_error)
{
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "role", "tool");
	cJSON_AddStringToObject(msg, "tool_call_id", id);
	cJSON_AddStringToObject(msg, "name", name);
	cJSON_AddStringToObject(msg, "content", content);
	cJSON_AddBoolToObject(msg, "is_error", is_error);
	cJSON_AddItemToArray(s->messages, msg);
}

void tools_finished(struct session *s, const char *id, const char *content,
                    int is_error)
{
	if (s->freeing)
		return;
	/* what the model is sent must be valid UTF-8; an edited call
	 * says what ran instead */
	const char *original = content;
	const char *forked = replay_fork_result(s, id);
	char *told = forked || s->result_as_is
	                 ? xstrdup(forked ? forked : content)
	                 : approval_result(s, id, content);
	s->result_as_is = 0;
	char *clean = utf8_sanitize(told, strlen(told), NULL);
	free(told);
	content = clean;
	const cJSON *call = cJSON_GetArrayItem(s->pending, s->next_call - 1);
	/* reading and listing change nothing: no scan, no archive */
	const char *name = json_str(call, "name", "");
	int changes = strcmp(name, "read_file") && strcmp(name, "list_files");
	if (changes)
		persist_workspace(s);
	cJSON *ev = event_new("tool_result");
	cJSON_AddStringToObject(ev, "id", id);
	cJSON_AddStringToObject(ev, "content", content);
	cJSON_AddBoolToObject(ev, "is_error", is_error);
	if (forked) {
		/* a fork: the user's text replaces what the call gave */
		cJSON_AddBoolToObject(ev, "forked", 1);
		cJSON_AddStringToObject(ev, "original", original);
	}
	session_emit(s, ev);

	session_add_tool_message(s, id, name, content, is_error);
	free(clean);
	if (changes)
		scan_workspace(s);
	/* through the loop: a tool may finish inside tools_run */
	s->next_timer = loop_timer_add(s->loop, 0, next_call_timer, s);
}

/* --- start and end ------------------------------------------------- */

static char *make_run_id(void)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", &tm);
	unsigned r = (unsigned)(now_ms() ^ (getpid() << 8));
	return xasprintf("%s-%04x", ts, r & 0xffff);
}

static int make_run_dir(struct session *s, char **err)
{
	s->run_id = make_run_id();
	s->run_dir = s->cfg->run_dir ? xstrdup(s->cfg->run_dir)
	                             : xasprintf(".assay/runs/%s", s->run_id);
	return session_open_run_dir(s, err);
}

int session_open_run_dir(struct session *s, char **err)
{
	char *sub[] = {"exec", "cache"};
	struct stat st;
	s->made_run_dir = stat(s->run_dir, &st) < 0;
	if (mkdir_p(s->run_dir, err) < 0 || record_lock(s, err) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		char *p = xasprintf("%s/%s", s->run_dir, sub[i]);
		int rc = mkdir_p(p, err);
		free(p);
		if (rc < 0)
			return -1;
	}
	char *p = xasprintf("%s/assay.log", s->run_dir);
	int rc = log_open(p, err);
	free(p);
	if (rc < 0)
		return -1;
	p = xasprintf("%s/transcript.jsonl", s->run_dir);
	s->transcript = fopen(p, "ae");
	if (!s->transcript)
		set_err(err, "cannot create %s: %s", p, strerror(errno));
	free(p);
	return s->transcript ? 0 : -1;
}

void session_emit_run_start(struct session *s, cJSON *extra)
{
	const struct config *c = s->cfg;
	cJSON *ev = extra ? extra : cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "type", "run_start");
	cJSON_AddStringToObject(ev, "version", ASSAY_VERSION);
	cJSON_AddStringToObject(ev, "run_id", s->run_id);
	cJSON_AddStringToObject(ev, "run_dir", s->run_dir);
	cJSON_AddStringToObject(ev, "provider", s->llm->provider);
	cJSON_AddStringToObject(ev, "model", s->llm->model);
	cJSON_AddStringToObject(ev, "base_url",
	                        s->llm->base_url ? s->llm->base_url : "");
	/* what resume needs to ask the same questions again: copies of
	 * the files, kept in the run dir */
	record_keep_copies(s, ev);
	cJSON_AddStringToObject(ev, "out", c->out_dir);
	cJSON *sb = cJSON_AddObjectToObject(ev, "sandbox");
	cJSON_AddStringToObject(sb, "backend", s->sbx->ops->name);
	cJSON_AddStringToObject(sb, "image",
	                        s->sbx->image ? s->sbx->image : "");
	cJSON_AddStringToObject(sb, "image_id",
	                        s->sbx->image_id ? s->sbx->image_id : "");
	cJSON_AddStringToObject(ev, "ask", c->ask);
	cJSON_AddStringToObject(ev, "workspace",
	                        s->sbx->workspace ? s->sbx->workspace
	                                          : "/workspace");
	cJSON *in = cJSON_AddArrayToObject(ev, "inputs");
	for (size_t i = 0; i < c->n_inputs; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "src", c->inputs[i].src);
		cJSON_AddStringToObject(o, "dest", c->inputs[i].dest);
		cJSON_AddItemToArray(in, o);
	}
	cJSON *out = cJSON_AddArrayToObject(ev, "outputs");
	for (size_t i = 0; i < c->n_outputs; i++)
		cJSON_AddItemToArray(out, cJSON_CreateString(c->outputs[i]));
	cJSON *lim = cJSON_AddObjectToObject(ev, "limits");
	cJSON_AddNumberToObject(lim, "timeout_s", c->timeout_s);
	cJSON_AddNumberToObject(lim, "max_turns", c->max_turns);
	cJSON_AddNumberToObject(lim, "max_tokens", (double)c->max_tokens);
	cJSON_AddNumberToObject(lim, "max_cost", c->max_cost);
	cJSON_AddNumberToObject(lim, "memory_mb", (double)c->mem_mb);
	cJSON_AddNumberToObject(lim, "processes", (double)c->nproc);
	cJSON_AddNumberToObject(lim, "cpu_s", (double)c->cpu_s);
	cJSON_AddNumberToObject(lim, "file_size_mb", (double)c->fsize_mb);
	cJSON_AddNumberToObject(lim, "max_output_bytes",
	                        (double)c->max_output_bytes);
	cJSON_AddNumberToObject(lim, "max_output_tokens", c->max_output_tokens);
	cJSON_AddBoolToObject(lim, "network", c->network);
	session_emit(s, ev);
}

static void ready_idle(struct session *s)
{
	go_idle(s, "ready");
}

/* Whether path (existing, or the nearest existing parent of it) lies
 * inside the directory root. */
static int lies_inside(const char *path, const char *root)
{
	char *p = xstrdup(path), *real = NULL;
	while (!(real = realpath(p, NULL))) {
		char *slash = strrchr(p, '/');
		if (!slash || slash == p) {
			real = realpath(slash == p ? "/" : ".", NULL);
			break;
		}
		*slash = '\0';
	}
	free(p);
	size_t n = strlen(root);
	int in = real && !strncmp(real, root, n) &&
	         (real[n] == '/' || real[n] == '\0' || n == 1);
	free(real);
	return in;
}

/* With --workspace, what the sandbox can write must not hold what assay
 * trusts later: a planted symlink or file in the run dir or the out dir
 * would let sandboxed code write host files or rewrite the transcript. */
static int check_layout(struct session *s, char **err)
{
	if (!s->cfg->workspace)
		return 0;
	char *ws = realpath(s->cfg->workspace, NULL);
	if (!ws)
		return set_err(err, "workspace %s: %s", s->cfg->workspace,
		               strerror(errno));
	int rc = 0;
	if (lies_inside(s->run_dir, ws))
		rc = set_err(err,
		             "the run dir %s is inside the workspace %s, where "
		             "sandboxed code could rewrite it: pass --run-dir "
		             "with a directory outside the workspace",
		             s->run_dir, ws);
	else if (s->cfg->n_outputs && lies_inside(s->cfg->out_dir, ws))
		rc =
		    set_err(err,
		            "the out dir %s is inside the workspace %s, where "
		            "sandboxed code could plant links: pass --out with "
		            "a directory outside the workspace",
		            s->cfg->out_dir, ws);
	free(ws);
	return rc;
}

int session_start(struct session *s, const char *prompt, char **err)
{
	if (approval_init(s, err) < 0) {
		s->exit_code = EXIT_USAGE;
		return -1;
	}
	if (make_run_dir(s, err) < 0) {
		s->exit_code = EXIT_FAILED;
		return -1;
	}
	if (session_prepare(s, 1, err) < 0)
		return -1;
	session_emit_run_start(s, NULL);
	scan_workspace(s); /* the staged inputs */
	if (!prompt) {     /* interactive: the user speaks first */
		pytool_start(s, ready_idle);
		return 0;
	}
	cJSON *ev = event_new("user_message");
	cJSON_AddStringToObject(ev, "text", prompt);
	session_emit(s, ev);
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "role", "user");
	cJSON_AddStringToObject(msg, "content", prompt);
	cJSON_AddItemToArray(s->messages, msg);
	/* the first request waits for the python kernel's hello, which
	 * completes the system prompt (pytool.c) */
	pytool_start(s, request_turn);
	return 0;
}

int session_prepare(struct session *s, int stage_inputs, char **err)
{
	if (check_layout(s, err) < 0) {
		s->exit_code = EXIT_USAGE;
		return -1;
	}
	s->system_prompt = prompt_system(s->cfg, err);
	if (!s->system_prompt) {
		s->exit_code = EXIT_USAGE;
		return -1;
	}
	struct llm_observer lo = {on_llm_text, on_llm_retry, on_llm_done, s};
	s->llm = llm_new(s->cfg, s->loop, s->http, &lo, err);
	if (!s->llm) {
		s->exit_code = strcmp(s->cfg->provider, "script")
		                   ? EXIT_PROVIDER
		                   : EXIT_USAGE;
		return -1;
	}
	s->sbx = sbx_new(s->cfg, s->loop, s->run_dir, err);
	if (!s->sbx) {
		s->exit_code = EXIT_USAGE;
		return -1;
	}
	/* a resumed run's workspace already holds its inputs */
	struct config *c = s->cfg;
	size_t n_inputs = c->n_inputs;
	if (!stage_inputs)
		c->n_inputs = 0;
	int rc = s->sbx->ops->start(s->sbx, err);
	c->n_inputs = n_inputs;
	if (rc < 0) {
		s->exit_code = EXIT_SANDBOX;
		return -1;
	}
	s->persist_each_turn = !s->sbx->workspace;
	return 0;
}

static cJSON *deliver_outputs(struct session *s, int *missing)
{
	const struct config *c = s->cfg;
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < c->n_outputs; i++) {
		char *rel = NULL, *err = NULL;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "path", c->outputs[i]);
		char *dest = NULL;
		int ok = path_normalize(c->outputs[i], &rel, &err) == 0;
		if (ok) {
			dest = xasprintf("%s/%s", c->out_dir, rel);
			char *dir = xstrdup(dest);
			*strrchr(dir, '/') = '\0';
			ok = mkdir_p(dir, &err) == 0 &&
			     s->sbx->ops->fetch(s->sbx, rel, dest, &err) == 0;
			free(dir);
		}
		struct stat st;
		cJSON_AddBoolToObject(o, "present", ok);
		cJSON_AddNumberToObject(
		    o, "bytes",
		    ok && stat(dest, &st) == 0 ? (double)st.st_size : 0);
		if (ok)
			cJSON_AddStringToObject(o, "copied_to", dest);
		else
			cJSON_AddStringToObject(o, "error",
			                        err ? err : "missing");
		*missing += !ok;
		cJSON_AddItemToArray(arr, o);
		free(dest);
		free(rel);
		free(err);
	}
	return arr;
}

static void finish(struct session *s, const char *status, int code)
{
	if (s->state == SESSION_DONE)
		return;
	step_clear(s);
	approval_cancel_all(s);
	flush_delta(s);
	int missing = 0;
	cJSON *outputs = NULL;
	char *archive = NULL;
	if (s->sbx) {
		outputs = deliver_outputs(s, &missing);
		archive = xasprintf("%s/workspace.tar.gz", s->run_dir);
		char *err = NULL;
		if (s->sbx->ops->export_tar(s->sbx, archive, &err) < 0) {
			emit_error(s, "sandbox", err, -1);
			free(err);
			free(archive);
			archive = NULL;
		}
		s->sbx->ops->stop(s->sbx);
	}
	if (code == EXIT_OK && missing)
		code = EXIT_FAILED;
	cJSON *ev = event_new("run_end");
	cJSON_AddStringToObject(ev, "status", status);
	cJSON_AddNumberToObject(ev, "exit_code", code);
	cJSON_AddItemToObject(ev, "outputs",
	                      outputs ? outputs : cJSON_CreateArray());
	cJSON *tot = cJSON_AddObjectToObject(ev, "totals");
	cJSON_AddNumberToObject(tot, "turns", s->turn);
	cJSON_AddNumberToObject(tot, "input_tokens", (double)s->in_tokens);
	cJSON_AddNumberToObject(tot, "output_tokens", (double)s->out_tokens);
	cJSON_AddNumberToObject(tot, "cost_usd", s->cost);
	cJSON_AddNumberToObject(tot, "duration_ms", (double)(now_ms() - s->t0));
	if (archive)
		cJSON_AddStringToObject(ev, "archive", archive);
	else
		cJSON_AddNullToObject(ev, "archive");
	free(archive);
	s->exit_code = code;
	s->state = SESSION_DONE;
	session_emit(s, ev);
}

void session_interrupt(struct session *s)
{
	if (s->state == SESSION_DONE)
		return;
	if (s->interrupted || s->state != SESSION_EXECUTING) {
		s->interrupted = 1;
		if (s->llm)
			llm_cancel(s->llm);
		tools_cancel(s);
		finish(s, "interrupted", EXIT_INTERRUPTED);
		return;
	}
	s->interrupted = 1;
	tools_cancel(s); /* the command's exit ends the run */
}

/* --- interactive runs ---------------------------------------------- */

void session_set_interactive(struct session *s, int on)
{
	s->interactive = on;
}

struct sbx *session_sandbox(const struct session *s)
{
	return s->sbx;
}

static void go_idle(struct session *s, const char *reason)
{
	if (s->state == SESSION_DONE)
		return;
	flush_delta(s);
	s->state = SESSION_IDLE;
	s->awaiting = 1;
	cJSON *ev = event_new("idle");
	cJSON_AddStringToObject(ev, "reason", reason);
	session_emit(s, ev);
}

/* After a Ctrl-C during a call: the turn's remaining calls get a
 * result saying they did not run (every call needs one), then the
 * session waits for the user. */
static void skip_pending(struct session *s)
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
		cJSON *ev = event_new("tool_result");
		cJSON_AddStringToObject(ev, "id", id);
		cJSON_AddStringToObject(ev, "content", why);
		cJSON_AddBoolToObject(ev, "is_error", 1);
		session_emit(s, ev);
		cJSON *msg = cJSON_CreateObject();
		cJSON_AddStringToObject(msg, "role", "tool");
		cJSON_AddStringToObject(msg, "tool_call_id", id);
		cJSON_AddStringToObject(msg, "name",
		                        json_str(call, "name", ""));
		cJSON_AddStringToObject(msg, "content", why);
		cJSON_AddBoolToObject(msg, "is_error", 1);
		cJSON_AddItemToArray(s->messages, msg);
	}
	cJSON_Delete(s->pending);
	s->pending = NULL;
	s->cancelling = 0;
	go_idle(s, "cancelled");
}

int session_send(struct session *s, const char *text, char **err)
{
	if (s->state == SESSION_DONE)
		return set_err(err, "the run has ended");
	if (!s->interactive || !s->awaiting)
		return set_err(err, "the agent is busy: wait for it, or press "
		                    "Ctrl-C to stop it");
	s->awaiting = 0;
	s->failed = 0;
	cJSON *ev = event_new("user_message");
	cJSON_AddStringToObject(ev, "text", text);
	session_emit(s, ev);
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "role", "user");
	cJSON_AddStringToObject(msg, "content", text);
	cJSON_AddItemToArray(s->messages, msg);
	request_turn(s);
	return 0;
}

int session_cancel(struct session *s)
{
	if (!s->interactive) {
		session_interrupt(s);
		return 1;
	}
	if (s->state == SESSION_DONE || s->awaiting)
		return 0;
	if (s->state == SESSION_REQUESTING) {
		/* the turn is abandoned: its text never joins the
		 * conversation, and the same request can be made again */
		if (s->llm)
			llm_cancel(s->llm);
		flush_delta(s);
		buf_reset(&s->delta);
		buf_reset(&s->turn_text);
		go_idle(s, "cancelled");
		return 1;
	}
	if (s->state == SESSION_EXECUTING) {
		/* the call's result comes back through tools_finished;
		 * next_call_timer then skips the rest of the turn */
		s->cancelling = 1;
		tools_cancel(s);
		return 1;
	}
	if (s->state == SESSION_AWAITING_APPROVAL) {
		skip_pending(s); /* nothing runs: the turn ends here */
		return 1;
	}
	if (s->state == SESSION_PAUSED) {
		/* a step breakpoint: before a call, the turn's calls are
		 * not run; before a request, it is not sent */
		int exec = s->pending != NULL;
		step_clear(s);
		if (exec)
			skip_pending(s);
		else
			go_idle(s, "cancelled");
		return 1;
	}
	return 0;
}

void session_end(struct session *s)
{
	if (s->state == SESSION_DONE)
		return;
	int busy = !s->awaiting;
	s->interrupted = 1; /* timers still queued end in finish() */
	s->cancelling = 0;
	if (s->llm)
		llm_cancel(s->llm);
	tools_cancel(s);
	if (busy)
		finish(s, "interrupted", EXIT_INTERRUPTED);
	else if (s->failed)
		finish(s, "failed", EXIT_PROVIDER);
	else
		finish(s, "completed", EXIT_OK);
}
