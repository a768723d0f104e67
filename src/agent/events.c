/* events.c: the one place where event type names are written, and the
 * builders of every event type (docs/ARCHITECTURE.md, "Events"). The
 * order members are added in is the order the transcript shows them. */

/* clang-format off */
/* The event table. Every event: seq (1, 2, 3...), t (ms since the run
 * started), then type and the fields below, in this order. [x]: only
 * when it applies; x?: a value or null. Numbers are JSON numbers, flags
 * JSON booleans.
 *
 * | type | fields |
 * |---|---|
 * | run_start | [forked_from {run_id, run_dir, mode "re-execute", [fork_at, replace]}] (before type), version, run_id, run_dir, provider, model, base_url (never the key), [instructions], [script], out, sandbox {backend, image, image_id}, ask, workspace, inputs [{src, dest, mode "mount"/"copy", and for a mount: path (links resolved), kind "file"/"dir", [bytes], mtime}], outputs [path], limits {timeout_s, max_turns, max_tokens, max_cost, memory_mb, processes, cpu_s, file_size_mb, max_output_bytes, max_output_tokens, network}, [project {dir, files, hash, trust "untrusted"/"once"/"remembered"/"flag", applied ["FILE: KEY"], refused or trusted [{file, key, value, why, required}]}] |
 * | run_resume | run_id, run_dir, resumed_from {seq, status, dropped_bytes}, provider, model, base_url, sandbox {backend}, workspace, prompt |
 * | user_message | text |
 * | model_request | turn, request_hash, cached, messages, [est_tokens], [window], [replayed: true] |
 * | text_delta | turn, text |
 * | assistant_message | turn, text, tool_calls [{id, name, arguments}], [finish_reason], [recovered: true] |
 * | usage | turn, [of "compaction"], input_tokens, output_tokens, cached_tokens, [cache_write_tokens], [reasoning_tokens], cost_usd (0 unless priced), priced (the model table has a price), known, [replayed: true], totals {input_tokens, output_tokens, cached_tokens, cost_usd, [unpriced_turns]} |
 * | tool_call | id, name, arguments |
 * | approval_request | id, tool, command, cwd, reasons [text], kinds [name], rules?, no_always?, editable |
 * | approval | id, tool, decision (approved, edited, denied), by (user, rule, mode), mode, [choice], rule?, [rules], reasons [text], kinds [name], original, final?, feedback?, [saved {scope, [path]}], [note] |
 * | exec_start | id, command |
 * | exec_output | id, stream (stdout, stderr), bytes, text, [truncated: true] |
 * | exec_end | id, exit_code, signal, timed_out, cancelled, duration_ms, stdout_bytes, stderr_bytes, output_file, [output_file_cut_at], [error], [python: {[value], [error: {type, message}], [traceback]}] |
 * | tool_result | id, content, is_error, [forked: true, original] |
 * | workspace_change | path, kind (created, modified, deleted), size, [mtime], [call], [diff: {added, removed, hunks, [cut]} or {skipped}] |
 * | input_hashes | inputs [{dest, kind "file"/"dir", bytes, [files], mtime, sha256, cached}]: after run_start once the helper has read them (a directory's sha256 is that of its manifest, without what the sandbox does not see of it) |
 * | progress | what ("hashing", "saving", "staging", "restoring", "delivering"), subject (an input's dest, "the workspace", "the inputs", an output's path), done, total (0: not known yet), elapsed_ms: shown to the frontends while slow work goes on (done == total: over; done -1: it failed), never recorded (no seq, not in the transcript nor in --json) |
 * | python_session | state (started, ended), generation, [python, executable, packages, startup_ms], [reason] |
 * | replay_live | turn, reason, [recorded_hash], [request_hash], cached_turns |
 * | step_pause | kind "request", turn, messages, est_input_tokens, tools [name]; or kind "exec", turn, id, tool, command |
 * | step_resume | action (continue, edit, skip, end), kind (exec, request), [id], [original], [final] |
 * | budget_reached | kind (cost, tokens, turns), spent, limit, why (an interactive run then waits: idle "budget") |
 * | budget_decision | kind, decision (raise, stop), limit (the new one) |
 * | context_trim | turn, ids [call id], at [message index], stubs [text], bytes, est_before, est_after, window |
 * | compaction | state "started": reason (threshold, context_length_exceeded, user), turn, est_tokens, window, messages, keep_from, [left_out]; state "done": reason, turn, request_hash, cached, replaced, kept, est_before, est_after, window, summary; state "failed": reason, turn, message |
 * | idle | reason (ready, answered, failed, cancelled, budget) |
 * | error | category, message, [retry_in_ms]; a request being retried: category, message, retry_in_ms, attempt, discarded_bytes, turn |
 * | run_end | status (completed, failed, budget_exhausted, interrupted), exit_code, outputs [{path, present, bytes, copied_to or error}], totals {turns, input_tokens, output_tokens, cost_usd, [unpriced_turns], duration_ms}, archive? |
 */
/* clang-format on */
#include <stdlib.h>
#include <string.h>

#include "assay/config.h"
#include "assay/events.h"
#include "assay/fdlimit.h"
#include "assay/json.h"
#include "assay/policy.h"
#include "assay/util.h"

static const char *const event_names[EV__COUNT] = {
    [EV_UNKNOWN] = "unknown",
    [EV_RUN_START] = "run_start",
    [EV_RUN_RESUME] = "run_resume",
    [EV_USER_MESSAGE] = "user_message",
    [EV_MODEL_REQUEST] = "model_request",
    [EV_TEXT_DELTA] = "text_delta",
    [EV_ASSISTANT_MESSAGE] = "assistant_message",
    [EV_USAGE] = "usage",
    [EV_TOOL_CALL] = "tool_call",
    [EV_APPROVAL_REQUEST] = "approval_request",
    [EV_APPROVAL] = "approval",
    [EV_EXEC_START] = "exec_start",
    [EV_EXEC_OUTPUT] = "exec_output",
    [EV_EXEC_END] = "exec_end",
    [EV_TOOL_RESULT] = "tool_result",
    [EV_WORKSPACE_CHANGE] = "workspace_change",
    [EV_PYTHON_SESSION] = "python_session",
    [EV_INPUT_HASHES] = "input_hashes",
    [EV_PROGRESS] = "progress",
    [EV_REPLAY_LIVE] = "replay_live",
    [EV_STEP_PAUSE] = "step_pause",
    [EV_STEP_RESUME] = "step_resume",
    [EV_BUDGET_REACHED] = "budget_reached",
    [EV_BUDGET_DECISION] = "budget_decision",
    [EV_CONTEXT_TRIM] = "context_trim",
    [EV_COMPACTION] = "compaction",
    [EV_IDLE] = "idle",
    [EV_ERROR] = "error",
    [EV_RUN_END] = "run_end",
};

const char *event_type_name(enum event_type t)
{
	if ((int)t < 0 || t >= EV__COUNT)
		t = EV_UNKNOWN;
	return event_names[t];
}

enum event_type event_type_parse(const char *name)
{
	if (!name)
		return EV_UNKNOWN;
	for (int t = 1; t < EV__COUNT; t++)
		if (!strcmp(event_names[t], name))
			return (enum event_type)t;
	return EV_UNKNOWN;
}

enum event_type event_type_of(const cJSON *ev)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(ev, "type");
	return event_type_parse(cJSON_IsString(t) ? t->valuestring : NULL);
}

/* --- builders ------------------------------------------------------ */

cJSON *ev_new(enum event_type t)
{
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "type", event_type_name(t));
	return ev;
}

/* Add a copy of item under key; NULL adds nothing. */
static void ev_add_copy(cJSON *ev, const char *key, const cJSON *item)
{
	if (item)
		cJSON_AddItemToObject(ev, key, cJSON_Duplicate(item, 1));
}

/* Add s under key, or null when s is NULL. */
static void ev_add_string_or_null(cJSON *ev, const char *key, const char *s)
{
	if (s)
		cJSON_AddStringToObject(ev, key, s);
	else
		cJSON_AddNullToObject(ev, key);
}

/* run_start's forked_from: the run a re-execute starts from. */
static void ev_add_fork(cJSON *ev, const struct ev_fork *f)
{
	cJSON *from = cJSON_AddObjectToObject(ev, "forked_from");
	cJSON_AddStringToObject(from, "run_id", f->run_id);
	cJSON_AddStringToObject(from, "run_dir", f->run_dir);
	cJSON_AddStringToObject(from, "mode", "re-execute");
	if (f->fork_at) {
		cJSON_AddNumberToObject(from, "fork_at", (double)f->fork_at);
		cJSON_AddStringToObject(from, "replace", f->replace);
	}
}

/* run_start's limits, from the configuration the run has. */
static void ev_add_limits(cJSON *ev, const struct config *c)
{
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
}

cJSON *ev_run_start(const struct ev_run *run, const struct config *cfg,
                    const struct ev_fork *fork)
{
	cJSON *ev = cJSON_CreateObject();
	if (fork)
		ev_add_fork(ev, fork);
	cJSON_AddStringToObject(ev, "type", event_type_name(EV_RUN_START));
	cJSON_AddStringToObject(ev, "version", ASSAY_VERSION);
	cJSON_AddStringToObject(ev, "run_id", run->run_id);
	cJSON_AddStringToObject(ev, "run_dir", run->run_dir);
	cJSON_AddStringToObject(ev, "provider", run->provider);
	cJSON_AddStringToObject(ev, "model", run->model);
	cJSON_AddStringToObject(ev, "base_url",
	                        run->base_url ? run->base_url : "");
	if (run->instructions)
		cJSON_AddStringToObject(ev, "instructions", run->instructions);
	if (run->script)
		cJSON_AddStringToObject(ev, "script", run->script);
	cJSON_AddStringToObject(ev, "out", cfg->out_dir);
	cJSON *sb = cJSON_AddObjectToObject(ev, "sandbox");
	cJSON_AddStringToObject(sb, "backend", run->backend);
	cJSON_AddStringToObject(sb, "image", run->image ? run->image : "");
	cJSON_AddStringToObject(sb, "image_id",
	                        run->image_id ? run->image_id : "");
	cJSON_AddStringToObject(ev, "ask", cfg->ask);
	cJSON_AddStringToObject(ev, "workspace",
	                        run->workspace ? run->workspace : "/workspace");
	cJSON *in =
	    run->inputs ? cJSON_Duplicate(run->inputs, 1) : cJSON_CreateArray();
	cJSON_AddItemToObject(ev, "inputs", in);
	for (size_t i = 0; !run->inputs && i < cfg->n_inputs; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "src", cfg->inputs[i].src);
		cJSON_AddStringToObject(o, "dest", cfg->inputs[i].dest);
		cJSON_AddItemToArray(in, o);
	}
	cJSON *out = cJSON_AddArrayToObject(ev, "outputs");
	for (size_t i = 0; i < cfg->n_outputs; i++)
		cJSON_AddItemToArray(out, cJSON_CreateString(cfg->outputs[i]));
	ev_add_limits(ev, cfg);
	/* what the project files did: applied, refused or trusted */
	if (cfg->project)
		cJSON_AddItemToObject(ev, "project",
		                      cJSON_Duplicate(cfg->project, 1));
	return ev;
}

cJSON *ev_run_resume(const struct ev_run *run,
                     const struct ev_resumed_from *from, int prompt)
{
	cJSON *ev = ev_new(EV_RUN_RESUME);
	cJSON_AddStringToObject(ev, "run_id", run->run_id);
	cJSON_AddStringToObject(ev, "run_dir", run->run_dir);
	cJSON *f = cJSON_AddObjectToObject(ev, "resumed_from");
	cJSON_AddNumberToObject(f, "seq", (double)from->seq);
	cJSON_AddStringToObject(f, "status", from->status);
	cJSON_AddNumberToObject(f, "dropped_bytes",
	                        (double)from->dropped_bytes);
	cJSON_AddStringToObject(ev, "provider", run->provider);
	cJSON_AddStringToObject(ev, "model", run->model);
	cJSON_AddStringToObject(ev, "base_url",
	                        run->base_url ? run->base_url : "");
	cJSON *sb = cJSON_AddObjectToObject(ev, "sandbox");
	cJSON_AddStringToObject(sb, "backend", run->backend);
	cJSON_AddStringToObject(ev, "workspace",
	                        run->workspace ? run->workspace : "/workspace");
	cJSON_AddBoolToObject(ev, "prompt", prompt);
	return ev;
}

cJSON *ev_user_message(const char *text)
{
	cJSON *ev = ev_new(EV_USER_MESSAGE);
	cJSON_AddStringToObject(ev, "text", text);
	return ev;
}

cJSON *ev_model_request(int turn, const char *request_hash, int cached,
                        int messages, long est_tokens, long window,
                        int replayed)
{
	cJSON *ev = ev_new(EV_MODEL_REQUEST);
	cJSON_AddNumberToObject(ev, "turn", turn);
	cJSON_AddStringToObject(ev, "request_hash", request_hash);
	cJSON_AddBoolToObject(ev, "cached", cached);
	cJSON_AddNumberToObject(ev, "messages", messages);
	if (est_tokens > 0)
		cJSON_AddNumberToObject(ev, "est_tokens", (double)est_tokens);
	if (window > 0)
		cJSON_AddNumberToObject(ev, "window", (double)window);
	if (replayed)
		cJSON_AddBoolToObject(ev, "replayed", 1);
	return ev;
}

cJSON *ev_text_delta(int turn, const char *text)
{
	cJSON *ev = ev_new(EV_TEXT_DELTA);
	cJSON_AddNumberToObject(ev, "turn", turn);
	cJSON_AddStringToObject(ev, "text", text);
	return ev;
}

cJSON *ev_assistant_message(int turn, const char *text, const cJSON *tool_calls,
                            const char *finish_reason, int recovered)
{
	cJSON *ev = ev_new(EV_ASSISTANT_MESSAGE);
	cJSON_AddNumberToObject(ev, "turn", turn);
	cJSON_AddStringToObject(ev, "text", text ? text : "");
	cJSON_AddItemToObject(ev, "tool_calls",
	                      tool_calls ? cJSON_Duplicate(tool_calls, 1)
	                                 : cJSON_CreateArray());
	if (finish_reason)
		cJSON_AddStringToObject(ev, "finish_reason", finish_reason);
	if (recovered)
		cJSON_AddBoolToObject(ev, "recovered", 1);
	return ev;
}

cJSON *ev_usage(const struct ev_usage *u)
{
	cJSON *ev = ev_new(EV_USAGE);
	cJSON_AddNumberToObject(ev, "turn", u->turn);
	if (u->compaction)
		cJSON_AddStringToObject(ev, "of", "compaction");
	cJSON_AddNumberToObject(ev, "input_tokens", (double)u->input_tokens);
	cJSON_AddNumberToObject(ev, "output_tokens", (double)u->output_tokens);
	cJSON_AddNumberToObject(ev, "cached_tokens", (double)u->cached_tokens);
	if (u->cache_write_tokens)
		cJSON_AddNumberToObject(ev, "cache_write_tokens",
		                        (double)u->cache_write_tokens);
	if (u->reasoning_tokens)
		cJSON_AddNumberToObject(ev, "reasoning_tokens",
		                        (double)u->reasoning_tokens);
	cJSON_AddNumberToObject(ev, "cost_usd", u->cost_usd);
	cJSON_AddBoolToObject(ev, "priced", u->priced);
	cJSON_AddBoolToObject(ev, "known", u->known);
	if (u->replayed)
		cJSON_AddBoolToObject(ev, "replayed", 1);
	cJSON *tot = cJSON_AddObjectToObject(ev, "totals");
	cJSON_AddNumberToObject(tot, "input_tokens",
	                        (double)u->totals.input_tokens);
	cJSON_AddNumberToObject(tot, "output_tokens",
	                        (double)u->totals.output_tokens);
	cJSON_AddNumberToObject(tot, "cached_tokens",
	                        (double)u->totals.cached_tokens);
	cJSON_AddNumberToObject(tot, "cost_usd", u->totals.cost_usd);
	if (u->totals.unpriced)
		cJSON_AddNumberToObject(tot, "unpriced_turns",
		                        u->totals.unpriced);
	return ev;
}

cJSON *ev_tool_call(const char *id, const char *name, const cJSON *arguments)
{
	cJSON *ev = ev_new(EV_TOOL_CALL);
	cJSON_AddStringToObject(ev, "id", id);
	cJSON_AddStringToObject(ev, "name", name);
	ev_add_copy(ev, "arguments", arguments);
	return ev;
}

/* reasons (every reason's text) and kinds (each kind once) of a
 * verdict; NULL: both empty. */
static void ev_add_reasons(cJSON *ev, const struct policy_verdict *v)
{
	cJSON *r = cJSON_AddArrayToObject(ev, "reasons");
	cJSON *k = cJSON_AddArrayToObject(ev, "kinds");
	unsigned seen = 0;
	for (size_t i = 0; v && i < v->nreasons; i++) {
		cJSON_AddItemToArray(r, cJSON_CreateString(v->reasons[i].text));
		if (seen & (1u << v->reasons[i].kind))
			continue;
		seen |= 1u << v->reasons[i].kind;
		cJSON_AddItemToArray(k, cJSON_CreateString(policy_kind_name(
		                            v->reasons[i].kind)));
	}
}

cJSON *ev_approval_request(const struct ev_approval_request *r)
{
	const struct policy_verdict *v = r->verdict;
	cJSON *ev = ev_new(EV_APPROVAL_REQUEST);
	cJSON_AddStringToObject(ev, "id", r->id);
	cJSON_AddStringToObject(ev, "tool", r->tool);
	cJSON_AddStringToObject(ev, "command", v->subject);
	cJSON_AddStringToObject(ev, "cwd", r->cwd);
	ev_add_reasons(ev, v);
	if (v->save)
		cJSON_AddItemToObject(ev, "rules", cJSON_Duplicate(v->save, 1));
	else
		cJSON_AddNullToObject(ev, "rules");
	ev_add_string_or_null(ev, "no_always", v->no_save);
	cJSON_AddBoolToObject(ev, "editable", r->editable);
	return ev;
}

cJSON *ev_approval(const struct ev_approval *a)
{
	cJSON *ev = ev_new(EV_APPROVAL);
	cJSON_AddStringToObject(ev, "id", a->id);
	cJSON_AddStringToObject(ev, "tool", a->tool);
	cJSON_AddStringToObject(ev, "decision", a->decision);
	cJSON_AddStringToObject(ev, "by", a->by);
	cJSON_AddStringToObject(ev, "mode", a->mode);
	if (a->choice)
		cJSON_AddStringToObject(ev, "choice", a->choice);
	if (a->rule)
		cJSON_AddItemToObject(ev, "rule", cJSON_Duplicate(a->rule, 1));
	else
		cJSON_AddNullToObject(ev, "rule");
	ev_add_copy(ev, "rules", a->rules);
	ev_add_reasons(ev, a->verdict);
	cJSON_AddStringToObject(ev, "original",
	                        a->verdict ? a->verdict->subject : "");
	ev_add_string_or_null(ev, "final", a->final);
	ev_add_string_or_null(ev, "feedback", a->feedback);
	if (a->scope) {
		cJSON *saved = cJSON_AddObjectToObject(ev, "saved");
		cJSON_AddStringToObject(saved, "scope", a->scope);
		if (a->saved_path)
			cJSON_AddStringToObject(saved, "path", a->saved_path);
	}
	if (a->note)
		cJSON_AddStringToObject(ev, "note", a->note);
	return ev;
}

cJSON *ev_exec_start(const char *id, const char *command)
{
	cJSON *ev = ev_new(EV_EXEC_START);
	cJSON_AddStringToObject(ev, "id", id);
	cJSON_AddStringToObject(ev, "command", command);
	return ev;
}

cJSON *ev_exec_output(const char *id, const char *stream, uint64_t bytes,
                      const char *text, int truncated)
{
	cJSON *ev = ev_new(EV_EXEC_OUTPUT);
	cJSON_AddStringToObject(ev, "id", id);
	cJSON_AddStringToObject(ev, "stream", stream);
	cJSON_AddNumberToObject(ev, "bytes", (double)bytes);
	cJSON_AddStringToObject(ev, "text", text);
	if (truncated)
		cJSON_AddBoolToObject(ev, "truncated", 1);
	return ev;
}

cJSON *ev_exec_end(const struct ev_exec_end *e)
{
	cJSON *ev = ev_new(EV_EXEC_END);
	cJSON_AddStringToObject(ev, "id", e->id);
	cJSON_AddNumberToObject(ev, "exit_code", e->exit_code);
	cJSON_AddNumberToObject(ev, "signal", e->signal);
	cJSON_AddBoolToObject(ev, "timed_out", e->timed_out);
	cJSON_AddBoolToObject(ev, "cancelled", e->cancelled);
	cJSON_AddNumberToObject(ev, "duration_ms", (double)e->duration_ms);
	cJSON_AddNumberToObject(ev, "stdout_bytes", (double)e->stdout_bytes);
	cJSON_AddNumberToObject(ev, "stderr_bytes", (double)e->stderr_bytes);
	cJSON_AddStringToObject(ev, "output_file", e->output_file);
	if (e->output_file_cut)
		cJSON_AddNumberToObject(ev, "output_file_cut_at",
		                        (double)e->output_file_cut_at);
	if (e->error)
		cJSON_AddStringToObject(ev, "error", e->error);
	if (e->python)
		cJSON_AddItemToObject(ev, "python",
		                      cJSON_Duplicate(e->python, 1));
	return ev;
}

cJSON *ev_tool_result(const char *id, const char *content, int is_error)
{
	cJSON *ev = ev_new(EV_TOOL_RESULT);
	cJSON_AddStringToObject(ev, "id", id);
	cJSON_AddStringToObject(ev, "content", content);
	cJSON_AddBoolToObject(ev, "is_error", is_error);
	return ev;
}

cJSON *ev_tool_result_forked(const char *id, const char *content, int is_error,
                             const char *original)
{
	cJSON *ev = ev_tool_result(id, content, is_error);
	cJSON_AddBoolToObject(ev, "forked", 1);
	cJSON_AddStringToObject(ev, "original", original);
	return ev;
}

cJSON *ev_workspace_change(const char *path, const char *kind, double size,
                           double mtime, const char *call, cJSON *diff)
{
	cJSON *ev = ev_new(EV_WORKSPACE_CHANGE);
	cJSON_AddStringToObject(ev, "path", path);
	cJSON_AddStringToObject(ev, "kind", kind);
	cJSON_AddNumberToObject(ev, "size", size);
	if (mtime > 0)
		cJSON_AddNumberToObject(ev, "mtime", mtime);
	if (call)
		cJSON_AddStringToObject(ev, "call", call);
	if (diff)
		cJSON_AddItemToObject(ev, "diff", diff);
	return ev;
}

cJSON *ev_input_hashes(const cJSON *inputs)
{
	cJSON *ev = ev_new(EV_INPUT_HASHES);
	cJSON_AddItemToObject(ev, "inputs", cJSON_Duplicate(inputs, 1));
	return ev;
}

cJSON *ev_progress(const char *what, const char *subject, double done,
                   double total, int64_t elapsed_ms)
{
	cJSON *ev = ev_new(EV_PROGRESS);
	cJSON_AddStringToObject(ev, "what", what);
	cJSON_AddStringToObject(ev, "subject", subject);
	cJSON_AddNumberToObject(ev, "done", done);
	cJSON_AddNumberToObject(ev, "total", total);
	cJSON_AddNumberToObject(ev, "elapsed_ms", (double)elapsed_ms);
	return ev;
}

cJSON *ev_python_session(const char *state, int generation, const cJSON *hello,
                         int64_t startup_ms, const char *reason)
{
	cJSON *ev = ev_new(EV_PYTHON_SESSION);
	cJSON_AddStringToObject(ev, "state", state);
	cJSON_AddNumberToObject(ev, "generation", generation);
	if (hello) {
		cJSON_AddStringToObject(ev, "python",
		                        json_str(hello, "python", ""));
		cJSON_AddStringToObject(ev, "executable",
		                        json_str(hello, "executable", ""));
		const cJSON *pkgs = cJSON_GetObjectItem(hello, "packages");
		cJSON_AddItemToObject(ev, "packages",
		                      pkgs ? cJSON_Duplicate(pkgs, 1)
		                           : cJSON_CreateArray());
		cJSON_AddNumberToObject(ev, "startup_ms", (double)startup_ms);
	}
	if (reason)
		cJSON_AddStringToObject(ev, "reason", reason);
	return ev;
}

cJSON *ev_replay_live(int turn, const char *reason, const char *recorded_hash,
                      const char *request_hash, int cached_turns)
{
	cJSON *ev = ev_new(EV_REPLAY_LIVE);
	cJSON_AddNumberToObject(ev, "turn", turn);
	cJSON_AddStringToObject(ev, "reason", reason);
	if (recorded_hash)
		cJSON_AddStringToObject(ev, "recorded_hash", recorded_hash);
	if (request_hash)
		cJSON_AddStringToObject(ev, "request_hash", request_hash);
	cJSON_AddNumberToObject(ev, "cached_turns", cached_turns);
	return ev;
}

cJSON *ev_step_pause_request(int turn, int messages, long est_input_tokens,
                             const char *const *tools, size_t ntools)
{
	cJSON *ev = ev_new(EV_STEP_PAUSE);
	cJSON_AddStringToObject(ev, "kind", "request");
	cJSON_AddNumberToObject(ev, "turn", turn);
	cJSON_AddNumberToObject(ev, "messages", messages);
	cJSON_AddNumberToObject(ev, "est_input_tokens",
	                        (double)est_input_tokens);
	cJSON *names = cJSON_AddArrayToObject(ev, "tools");
	for (size_t i = 0; i < ntools; i++)
		cJSON_AddItemToArray(names, cJSON_CreateString(tools[i]));
	return ev;
}

cJSON *ev_step_pause_exec(int turn, const char *id, const char *tool,
                          const char *command)
{
	cJSON *ev = ev_new(EV_STEP_PAUSE);
	cJSON_AddStringToObject(ev, "kind", "exec");
	cJSON_AddNumberToObject(ev, "turn", turn);
	cJSON_AddStringToObject(ev, "id", id);
	cJSON_AddStringToObject(ev, "tool", tool);
	cJSON_AddStringToObject(ev, "command", command);
	return ev;
}

cJSON *ev_step_resume(const char *action, const char *kind, const char *id,
                      const char *original, const char *final)
{
	cJSON *ev = ev_new(EV_STEP_RESUME);
	cJSON_AddStringToObject(ev, "action", action);
	cJSON_AddStringToObject(ev, "kind", kind);
	if (id)
		cJSON_AddStringToObject(ev, "id", id);
	if (original)
		cJSON_AddStringToObject(ev, "original", original);
	if (final)
		cJSON_AddStringToObject(ev, "final", final);
	return ev;
}

cJSON *ev_budget_reached(const char *kind, double spent, double limit,
                         const char *why)
{
	cJSON *ev = ev_new(EV_BUDGET_REACHED);
	cJSON_AddStringToObject(ev, "kind", kind);
	cJSON_AddNumberToObject(ev, "spent", spent);
	cJSON_AddNumberToObject(ev, "limit", limit);
	cJSON_AddStringToObject(ev, "why", why);
	return ev;
}

cJSON *ev_budget_decision(const char *kind, const char *decision, double limit)
{
	cJSON *ev = ev_new(EV_BUDGET_DECISION);
	cJSON_AddStringToObject(ev, "kind", kind);
	cJSON_AddStringToObject(ev, "decision", decision);
	cJSON_AddNumberToObject(ev, "limit", limit);
	return ev;
}

cJSON *ev_idle(const char *reason)
{
	cJSON *ev = ev_new(EV_IDLE);
	cJSON_AddStringToObject(ev, "reason", reason);
	return ev;
}

cJSON *ev_error(const char *category, const char *message, long retry_in_ms)
{
	cJSON *ev = ev_new(EV_ERROR);
	cJSON_AddStringToObject(ev, "category", category);
	char *told = fdlimit_explain(message); /* out of descriptors */
	cJSON_AddStringToObject(ev, "message", told ? told : message);
	free(told);
	if (retry_in_ms >= 0)
		cJSON_AddNumberToObject(ev, "retry_in_ms", (double)retry_in_ms);
	return ev;
}

cJSON *ev_error_retry(const char *category, const char *message,
                      long retry_in_ms, int attempt, size_t discarded_bytes,
                      int turn)
{
	cJSON *ev = ev_new(EV_ERROR);
	cJSON_AddStringToObject(ev, "category", category);
	char *told = fdlimit_explain(message); /* out of descriptors */
	cJSON_AddStringToObject(ev, "message", told ? told : message);
	free(told);
	cJSON_AddNumberToObject(ev, "retry_in_ms", (double)retry_in_ms);
	cJSON_AddNumberToObject(ev, "attempt", attempt);
	cJSON_AddNumberToObject(ev, "discarded_bytes", (double)discarded_bytes);
	cJSON_AddNumberToObject(ev, "turn", turn);
	return ev;
}

cJSON *ev_run_output(const char *path, int present, double bytes,
                     const char *copied_to, const char *error)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddBoolToObject(o, "present", present);
	cJSON_AddNumberToObject(o, "bytes", bytes);
	if (present)
		cJSON_AddStringToObject(o, "copied_to", copied_to);
	else
		cJSON_AddStringToObject(o, "error", error ? error : "missing");
	return o;
}

cJSON *ev_run_end(const struct ev_run_end *e)
{
	cJSON *ev = ev_new(EV_RUN_END);
	cJSON_AddStringToObject(ev, "status", e->status);
	cJSON_AddNumberToObject(ev, "exit_code", e->exit_code);
	cJSON_AddItemToObject(ev, "outputs",
	                      e->outputs ? e->outputs : cJSON_CreateArray());
	cJSON *tot = cJSON_AddObjectToObject(ev, "totals");
	cJSON_AddNumberToObject(tot, "turns", e->turns);
	cJSON_AddNumberToObject(tot, "input_tokens", (double)e->input_tokens);
	cJSON_AddNumberToObject(tot, "output_tokens", (double)e->output_tokens);
	cJSON_AddNumberToObject(tot, "cost_usd", e->cost_usd);
	if (e->unpriced)
		cJSON_AddNumberToObject(tot, "unpriced_turns", e->unpriced);
	cJSON_AddNumberToObject(tot, "duration_ms", (double)e->duration_ms);
	ev_add_string_or_null(ev, "archive", e->archive);
	return ev;
}

cJSON *ev_context_trim(int turn, const cJSON *ids, const cJSON *at,
                       const cJSON *stubs, size_t bytes, long est_before,
                       long est_after, long window)
{
	cJSON *ev = ev_new(EV_CONTEXT_TRIM);
	cJSON_AddNumberToObject(ev, "turn", turn);
	ev_add_copy(ev, "ids", ids);
	ev_add_copy(ev, "at", at);
	ev_add_copy(ev, "stubs", stubs);
	cJSON_AddNumberToObject(ev, "bytes", (double)bytes);
	cJSON_AddNumberToObject(ev, "est_before", (double)est_before);
	cJSON_AddNumberToObject(ev, "est_after", (double)est_after);
	cJSON_AddNumberToObject(ev, "window", (double)window);
	return ev;
}

/* The fields every compaction event starts with. */
static cJSON *ev_compaction(const char *state, const char *reason, int turn)
{
	cJSON *ev = ev_new(EV_COMPACTION);
	cJSON_AddStringToObject(ev, "state", state);
	cJSON_AddStringToObject(ev, "reason", reason ? reason : "");
	cJSON_AddNumberToObject(ev, "turn", turn);
	return ev;
}

cJSON *ev_compaction_started(const char *reason, int turn, long est_tokens,
                             long window, int messages, int keep_from,
                             int left_out)
{
	cJSON *ev = ev_compaction("started", reason, turn);
	cJSON_AddNumberToObject(ev, "est_tokens", (double)est_tokens);
	cJSON_AddNumberToObject(ev, "window", (double)window);
	cJSON_AddNumberToObject(ev, "messages", messages);
	cJSON_AddNumberToObject(ev, "keep_from", keep_from);
	if (left_out)
		cJSON_AddNumberToObject(ev, "left_out", left_out);
	return ev;
}

cJSON *ev_compaction_done(const struct ev_compaction *c)
{
	cJSON *ev = ev_compaction("done", c->reason, c->turn);
	cJSON_AddStringToObject(ev, "request_hash", c->request_hash);
	cJSON_AddBoolToObject(ev, "cached", c->cached);
	cJSON_AddNumberToObject(ev, "replaced", c->replaced);
	cJSON_AddNumberToObject(ev, "kept", c->kept);
	cJSON_AddNumberToObject(ev, "est_before", (double)c->est_before);
	cJSON_AddNumberToObject(ev, "est_after", (double)c->est_after);
	cJSON_AddNumberToObject(ev, "window", (double)c->window);
	cJSON_AddStringToObject(ev, "summary", c->summary ? c->summary : "");
	return ev;
}

cJSON *ev_compaction_failed(const char *reason, int turn, const char *message)
{
	cJSON *ev = ev_compaction("failed", reason, turn);
	cJSON_AddStringToObject(ev, "message", message ? message : "");
	return ev;
}
