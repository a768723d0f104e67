/* events_build.c: the builders of every event type (events.h). Each
 * names its members through the field table (ev_field_name), never by a
 * string of its own; the order members are added in is the order the
 * transcript shows them. */

#include <stdlib.h>
#include <string.h>

#include "assay/config.h"
#include "assay/events.h"
#include "assay/fdlimit.h"
#include "assay/json.h"
#include "assay/policy.h"
#include "assay/strv.h"
#include "assay/util.h"

/* The wire name of f. */
static const char *fname(enum ev_field f)
{
	return ev_field_name(f);
}

/* --- builders ------------------------------------------------------ */

cJSON *ev_new(enum event_type t)
{
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, fname(EVF_TYPE), event_type_name(t));
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
	cJSON *from = cJSON_AddObjectToObject(ev, fname(EVF_FORKED_FROM));
	cJSON_AddStringToObject(from, fname(EVF_RUN_ID), f->run_id);
	cJSON_AddStringToObject(from, fname(EVF_RUN_DIR), f->run_dir);
	cJSON_AddStringToObject(from, fname(EVF_MODE), "re-execute");
	if (f->fork_at) {
		cJSON_AddNumberToObject(from, fname(EVF_FORK_AT),
		                        (double)f->fork_at);
		cJSON_AddStringToObject(from, fname(EVF_REPLACE), f->replace);
	}
}

/* run_start's limits, from the configuration the run has. */
static void ev_add_limits(cJSON *ev, const struct config *c)
{
	cJSON *lim = cJSON_AddObjectToObject(ev, fname(EVF_LIMITS));
	cJSON_AddNumberToObject(lim, fname(EVF_TIMEOUT_S), c->timeout_s);
	cJSON_AddNumberToObject(lim, fname(EVF_MAX_TURNS), c->max_turns);
	cJSON_AddNumberToObject(lim, fname(EVF_MAX_TOKENS),
	                        (double)c->max_tokens);
	cJSON_AddNumberToObject(lim, fname(EVF_MAX_COST), c->max_cost);
	cJSON_AddNumberToObject(lim, fname(EVF_MEMORY_MB), (double)c->mem_mb);
	cJSON_AddNumberToObject(lim, fname(EVF_PROCESSES), (double)c->nproc);
	cJSON_AddNumberToObject(lim, fname(EVF_CPU_S), (double)c->cpu_s);
	cJSON_AddNumberToObject(lim, fname(EVF_FILE_SIZE_MB),
	                        (double)c->fsize_mb);
	cJSON_AddNumberToObject(lim, fname(EVF_MAX_OUTPUT_BYTES),
	                        (double)c->max_output_bytes);
	cJSON_AddNumberToObject(lim, fname(EVF_MAX_OUTPUT_TOKENS),
	                        c->max_output_tokens);
	cJSON_AddBoolToObject(lim, fname(EVF_NETWORK), c->network);
}

/* run_start's and run_resume's sandbox: the backend and what it
 * reports of the image the run runs on. */
static void ev_add_sandbox(cJSON *ev, const struct ev_run *run)
{
	cJSON *sb = cJSON_AddObjectToObject(ev, fname(EVF_SANDBOX));
	cJSON_AddStringToObject(sb, fname(EVF_BACKEND), run->backend);
	cJSON_AddStringToObject(sb, fname(EVF_IMAGE),
	                        run->image ? run->image : "");
	cJSON_AddStringToObject(sb, fname(EVF_IMAGE_ID),
	                        run->image_id ? run->image_id : "");
	if (run->repo_digests) {
		cJSON *d = cJSON_AddArrayToObject(sb, fname(EVF_REPO_DIGESTS));
		for (size_t i = 0; i < run->repo_digests->n; i++)
			cJSON_AddItemToArray(
			    d, cJSON_CreateString(run->repo_digests->v[i]));
	}
	if (run->image_reported)
		ev_add_string_or_null(sb, fname(EVF_IMAGE_REPORTED),
		                      *run->image_reported ? run->image_reported
		                                           : NULL);
	if (run->image_id_was)
		cJSON_AddStringToObject(sb, fname(EVF_IMAGE_ID_WAS),
		                        run->image_id_was);
}

cJSON *ev_run_start(const struct ev_run *run, const struct config *cfg,
                    const struct ev_fork *fork)
{
	cJSON *ev = cJSON_CreateObject();
	if (fork)
		ev_add_fork(ev, fork);
	cJSON_AddStringToObject(ev, fname(EVF_TYPE),
	                        event_type_name(EV_RUN_START));
	cJSON_AddStringToObject(ev, fname(EVF_VERSION), ASSAY_VERSION);
	cJSON_AddStringToObject(ev, fname(EVF_RUN_ID), run->run_id);
	cJSON_AddStringToObject(ev, fname(EVF_RUN_DIR), run->run_dir);
	cJSON_AddStringToObject(ev, fname(EVF_PROVIDER), run->provider);
	cJSON_AddStringToObject(ev, fname(EVF_MODEL), run->model);
	cJSON_AddStringToObject(ev, fname(EVF_BASE_URL),
	                        run->base_url ? run->base_url : "");
	if (run->instructions)
		cJSON_AddStringToObject(ev, fname(EVF_INSTRUCTIONS),
		                        run->instructions);
	if (run->script)
		cJSON_AddStringToObject(ev, fname(EVF_SCRIPT), run->script);
	cJSON_AddStringToObject(ev, fname(EVF_OUT), cfg->out_dir);
	ev_add_sandbox(ev, run);
	cJSON_AddStringToObject(ev, fname(EVF_ASK), cfg->ask);
	cJSON_AddStringToObject(ev, fname(EVF_WORKSPACE),
	                        run->workspace ? run->workspace : "/workspace");
	cJSON *in =
	    run->inputs ? cJSON_Duplicate(run->inputs, 1) : cJSON_CreateArray();
	cJSON_AddItemToObject(ev, fname(EVF_INPUTS), in);
	for (size_t i = 0; !run->inputs && i < cfg->n_inputs; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, fname(EVF_SRC), cfg->inputs[i].src);
		cJSON_AddStringToObject(o, fname(EVF_DEST),
		                        cfg->inputs[i].dest);
		cJSON_AddItemToArray(in, o);
	}
	cJSON *out = cJSON_AddArrayToObject(ev, fname(EVF_OUTPUTS));
	for (size_t i = 0; i < cfg->n_outputs; i++)
		cJSON_AddItemToArray(out, cJSON_CreateString(cfg->outputs[i]));
	ev_add_limits(ev, cfg);
	/* what the project files did: applied, refused or trusted */
	if (cfg->project)
		cJSON_AddItemToObject(ev, fname(EVF_PROJECT),
		                      cJSON_Duplicate(cfg->project, 1));
	return ev;
}

cJSON *ev_run_resume(const struct ev_run *run,
                     const struct ev_resumed_from *from, int prompt)
{
	cJSON *ev = ev_new(EV_RUN_RESUME);
	cJSON_AddStringToObject(ev, fname(EVF_RUN_ID), run->run_id);
	cJSON_AddStringToObject(ev, fname(EVF_RUN_DIR), run->run_dir);
	cJSON *f = cJSON_AddObjectToObject(ev, fname(EVF_RESUMED_FROM));
	cJSON_AddNumberToObject(f, fname(EVF_SEQ), (double)from->seq);
	cJSON_AddStringToObject(f, fname(EVF_STATUS), from->status);
	cJSON_AddNumberToObject(f, fname(EVF_DROPPED_BYTES),
	                        (double)from->dropped_bytes);
	cJSON_AddStringToObject(ev, fname(EVF_PROVIDER), run->provider);
	cJSON_AddStringToObject(ev, fname(EVF_MODEL), run->model);
	cJSON_AddStringToObject(ev, fname(EVF_BASE_URL),
	                        run->base_url ? run->base_url : "");
	ev_add_sandbox(ev, run);
	cJSON_AddStringToObject(ev, fname(EVF_WORKSPACE),
	                        run->workspace ? run->workspace : "/workspace");
	cJSON_AddBoolToObject(ev, fname(EVF_PROMPT), prompt);
	return ev;
}

cJSON *ev_user_message(const char *text)
{
	cJSON *ev = ev_new(EV_USER_MESSAGE);
	cJSON_AddStringToObject(ev, fname(EVF_TEXT), text);
	return ev;
}

cJSON *ev_model_request(int turn, const char *request_hash, int cached,
                        int messages, long est_tokens, long window,
                        int replayed)
{
	cJSON *ev = ev_new(EV_MODEL_REQUEST);
	cJSON_AddNumberToObject(ev, fname(EVF_TURN), turn);
	cJSON_AddStringToObject(ev, fname(EVF_REQUEST_HASH), request_hash);
	cJSON_AddBoolToObject(ev, fname(EVF_CACHED), cached);
	cJSON_AddNumberToObject(ev, fname(EVF_MESSAGES), messages);
	if (est_tokens > 0)
		cJSON_AddNumberToObject(ev, fname(EVF_EST_TOKENS),
		                        (double)est_tokens);
	if (window > 0)
		cJSON_AddNumberToObject(ev, fname(EVF_WINDOW), (double)window);
	if (replayed)
		cJSON_AddBoolToObject(ev, fname(EVF_REPLAYED), 1);
	return ev;
}

cJSON *ev_text_delta(int turn, const char *text)
{
	cJSON *ev = ev_new(EV_TEXT_DELTA);
	cJSON_AddNumberToObject(ev, fname(EVF_TURN), turn);
	cJSON_AddStringToObject(ev, fname(EVF_TEXT), text);
	return ev;
}

cJSON *ev_assistant_message(int turn, const char *text, const cJSON *tool_calls,
                            const char *finish_reason, int recovered)
{
	cJSON *ev = ev_new(EV_ASSISTANT_MESSAGE);
	cJSON_AddNumberToObject(ev, fname(EVF_TURN), turn);
	cJSON_AddStringToObject(ev, fname(EVF_TEXT), text ? text : "");
	cJSON_AddItemToObject(ev, fname(EVF_TOOL_CALLS),
	                      tool_calls ? cJSON_Duplicate(tool_calls, 1)
	                                 : cJSON_CreateArray());
	if (finish_reason)
		cJSON_AddStringToObject(ev, fname(EVF_FINISH_REASON),
		                        finish_reason);
	if (recovered)
		cJSON_AddBoolToObject(ev, fname(EVF_RECOVERED), 1);
	return ev;
}

cJSON *ev_usage(const struct ev_usage *u)
{
	cJSON *ev = ev_new(EV_USAGE);
	cJSON_AddNumberToObject(ev, fname(EVF_TURN), u->turn);
	if (u->compaction)
		cJSON_AddStringToObject(ev, fname(EVF_OF), "compaction");
	cJSON_AddNumberToObject(ev, fname(EVF_INPUT_TOKENS),
	                        (double)u->input_tokens);
	cJSON_AddNumberToObject(ev, fname(EVF_OUTPUT_TOKENS),
	                        (double)u->output_tokens);
	cJSON_AddNumberToObject(ev, fname(EVF_CACHED_TOKENS),
	                        (double)u->cached_tokens);
	if (u->cache_write_tokens)
		cJSON_AddNumberToObject(ev, fname(EVF_CACHE_WRITE_TOKENS),
		                        (double)u->cache_write_tokens);
	if (u->reasoning_tokens)
		cJSON_AddNumberToObject(ev, fname(EVF_REASONING_TOKENS),
		                        (double)u->reasoning_tokens);
	cJSON_AddNumberToObject(ev, fname(EVF_COST_USD), u->cost_usd);
	cJSON_AddBoolToObject(ev, fname(EVF_PRICED), u->priced);
	cJSON_AddBoolToObject(ev, fname(EVF_KNOWN), u->known);
	if (u->replayed)
		cJSON_AddBoolToObject(ev, fname(EVF_REPLAYED), 1);
	cJSON *tot = cJSON_AddObjectToObject(ev, fname(EVF_TOTALS));
	cJSON_AddNumberToObject(tot, fname(EVF_INPUT_TOKENS),
	                        (double)u->totals.input_tokens);
	cJSON_AddNumberToObject(tot, fname(EVF_OUTPUT_TOKENS),
	                        (double)u->totals.output_tokens);
	cJSON_AddNumberToObject(tot, fname(EVF_CACHED_TOKENS),
	                        (double)u->totals.cached_tokens);
	cJSON_AddNumberToObject(tot, fname(EVF_COST_USD), u->totals.cost_usd);
	if (u->totals.unpriced)
		cJSON_AddNumberToObject(tot, fname(EVF_UNPRICED_TURNS),
		                        u->totals.unpriced);
	return ev;
}

cJSON *ev_tool_call(const char *id, const char *name, const cJSON *arguments)
{
	cJSON *ev = ev_new(EV_TOOL_CALL);
	cJSON_AddStringToObject(ev, fname(EVF_ID), id);
	cJSON_AddStringToObject(ev, fname(EVF_NAME), name);
	ev_add_copy(ev, fname(EVF_ARGUMENTS), arguments);
	return ev;
}

/* reasons (every reason's text) and kinds (each kind once) of a
 * verdict; NULL: both empty. */
static void ev_add_reasons(cJSON *ev, const struct policy_verdict *v)
{
	cJSON *r = cJSON_AddArrayToObject(ev, fname(EVF_REASONS));
	cJSON *k = cJSON_AddArrayToObject(ev, fname(EVF_KINDS));
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
	cJSON_AddStringToObject(ev, fname(EVF_ID), r->id);
	cJSON_AddStringToObject(ev, fname(EVF_TOOL), r->tool);
	cJSON_AddStringToObject(ev, fname(EVF_COMMAND), v->subject);
	cJSON_AddStringToObject(ev, fname(EVF_CWD), r->cwd);
	ev_add_reasons(ev, v);
	if (v->save)
		cJSON_AddItemToObject(ev, fname(EVF_RULES),
		                      cJSON_Duplicate(v->save, 1));
	else
		cJSON_AddNullToObject(ev, fname(EVF_RULES));
	ev_add_string_or_null(ev, fname(EVF_NO_ALWAYS), v->no_save);
	cJSON_AddBoolToObject(ev, fname(EVF_EDITABLE), r->editable);
	return ev;
}

cJSON *ev_approval(const struct ev_approval *a)
{
	cJSON *ev = ev_new(EV_APPROVAL);
	cJSON_AddStringToObject(ev, fname(EVF_ID), a->id);
	cJSON_AddStringToObject(ev, fname(EVF_TOOL), a->tool);
	cJSON_AddStringToObject(ev, fname(EVF_DECISION), a->decision);
	cJSON_AddStringToObject(ev, fname(EVF_BY), a->by);
	cJSON_AddStringToObject(ev, fname(EVF_MODE), a->mode);
	if (a->choice)
		cJSON_AddStringToObject(ev, fname(EVF_CHOICE), a->choice);
	if (a->rule)
		cJSON_AddItemToObject(ev, fname(EVF_RULE),
		                      cJSON_Duplicate(a->rule, 1));
	else
		cJSON_AddNullToObject(ev, fname(EVF_RULE));
	ev_add_copy(ev, fname(EVF_RULES), a->rules);
	ev_add_reasons(ev, a->verdict);
	cJSON_AddStringToObject(ev, fname(EVF_ORIGINAL),
	                        a->verdict ? a->verdict->subject : "");
	ev_add_string_or_null(ev, fname(EVF_FINAL), a->final);
	ev_add_string_or_null(ev, fname(EVF_FEEDBACK), a->feedback);
	if (a->scope) {
		cJSON *saved = cJSON_AddObjectToObject(ev, fname(EVF_SAVED));
		cJSON_AddStringToObject(saved, fname(EVF_SCOPE), a->scope);
		if (a->saved_path)
			cJSON_AddStringToObject(saved, fname(EVF_PATH),
			                        a->saved_path);
	}
	if (a->note)
		cJSON_AddStringToObject(ev, fname(EVF_NOTE), a->note);
	return ev;
}

cJSON *ev_exec_start(const char *id, const char *command)
{
	cJSON *ev = ev_new(EV_EXEC_START);
	cJSON_AddStringToObject(ev, fname(EVF_ID), id);
	cJSON_AddStringToObject(ev, fname(EVF_COMMAND), command);
	return ev;
}

cJSON *ev_exec_output(const char *id, const char *stream, uint64_t bytes,
                      const char *text, int truncated)
{
	cJSON *ev = ev_new(EV_EXEC_OUTPUT);
	cJSON_AddStringToObject(ev, fname(EVF_ID), id);
	cJSON_AddStringToObject(ev, fname(EVF_STREAM), stream);
	cJSON_AddNumberToObject(ev, fname(EVF_BYTES), (double)bytes);
	cJSON_AddStringToObject(ev, fname(EVF_TEXT), text);
	if (truncated)
		cJSON_AddBoolToObject(ev, fname(EVF_TRUNCATED), 1);
	return ev;
}

cJSON *ev_exec_end(const struct ev_exec_end *e)
{
	cJSON *ev = ev_new(EV_EXEC_END);
	cJSON_AddStringToObject(ev, fname(EVF_ID), e->id);
	cJSON_AddNumberToObject(ev, fname(EVF_EXIT_CODE), e->exit_code);
	cJSON_AddNumberToObject(ev, fname(EVF_SIGNAL), e->signal);
	cJSON_AddBoolToObject(ev, fname(EVF_TIMED_OUT), e->timed_out);
	cJSON_AddBoolToObject(ev, fname(EVF_CANCELLED), e->cancelled);
	cJSON_AddNumberToObject(ev, fname(EVF_DURATION_MS),
	                        (double)e->duration_ms);
	cJSON_AddNumberToObject(ev, fname(EVF_STDOUT_BYTES),
	                        (double)e->stdout_bytes);
	cJSON_AddNumberToObject(ev, fname(EVF_STDERR_BYTES),
	                        (double)e->stderr_bytes);
	cJSON_AddStringToObject(ev, fname(EVF_OUTPUT_FILE), e->output_file);
	if (e->output_file_cut)
		cJSON_AddNumberToObject(ev, fname(EVF_OUTPUT_FILE_CUT_AT),
		                        (double)e->output_file_cut_at);
	if (e->error)
		cJSON_AddStringToObject(ev, fname(EVF_ERROR), e->error);
	if (e->python)
		cJSON_AddItemToObject(ev, fname(EVF_PYTHON),
		                      cJSON_Duplicate(e->python, 1));
	return ev;
}

cJSON *ev_tool_result(const char *id, const char *content, int is_error)
{
	cJSON *ev = ev_new(EV_TOOL_RESULT);
	cJSON_AddStringToObject(ev, fname(EVF_ID), id);
	cJSON_AddStringToObject(ev, fname(EVF_CONTENT), content);
	cJSON_AddBoolToObject(ev, fname(EVF_IS_ERROR), is_error);
	return ev;
}

cJSON *ev_tool_result_forked(const char *id, const char *content, int is_error,
                             const char *original)
{
	cJSON *ev = ev_tool_result(id, content, is_error);
	cJSON_AddBoolToObject(ev, fname(EVF_FORKED), 1);
	cJSON_AddStringToObject(ev, fname(EVF_ORIGINAL), original);
	return ev;
}

cJSON *ev_image_sent(const struct ev_image *im)
{
	cJSON *ev = ev_new(EV_IMAGE_SENT);
	cJSON_AddStringToObject(ev, fname(EVF_ID), im->id);
	cJSON_AddStringToObject(ev, fname(EVF_PATH), im->path);
	cJSON_AddStringToObject(ev, fname(EVF_HOW), im->how);
	if (im->error) {
		cJSON_AddStringToObject(ev, fname(EVF_ERROR), im->error);
		return ev;
	}
	cJSON_AddStringToObject(ev, fname(EVF_MEDIA_TYPE), im->media_type);
	cJSON_AddNumberToObject(ev, fname(EVF_WIDTH), im->width);
	cJSON_AddNumberToObject(ev, fname(EVF_HEIGHT), im->height);
	cJSON_AddNumberToObject(ev, fname(EVF_SRC_WIDTH), im->src_width);
	cJSON_AddNumberToObject(ev, fname(EVF_SRC_HEIGHT), im->src_height);
	cJSON_AddNumberToObject(ev, fname(EVF_BYTES), im->bytes);
	cJSON_AddStringToObject(ev, fname(EVF_SHA256), im->sha256);
	cJSON_AddStringToObject(ev, fname(EVF_FILE), im->file);
	cJSON_AddNumberToObject(ev, fname(EVF_TOKENS), (double)im->tokens);
	cJSON_AddStringToObject(ev, fname(EVF_DETAIL), im->detail);
	return ev;
}

cJSON *ev_mcp_tools(cJSON *servers, cJSON *tools)
{
	cJSON *ev = ev_new(EV_MCP_TOOLS);
	cJSON_AddItemToObject(ev, fname(EVF_SERVERS), servers);
	cJSON_AddItemToObject(ev, fname(EVF_TOOLS), tools);
	return ev;
}

cJSON *ev_mcp_call(const struct ev_mcp_call *c)
{
	cJSON *ev = ev_new(EV_MCP_CALL);
	cJSON_AddStringToObject(ev, fname(EVF_ID), c->id);
	cJSON_AddStringToObject(ev, fname(EVF_SERVER), c->server);
	cJSON_AddStringToObject(ev, fname(EVF_TOOL), c->tool);
	cJSON_AddNumberToObject(ev, fname(EVF_DURATION_MS), c->duration_ms);
	cJSON_AddBoolToObject(ev, fname(EVF_IS_ERROR), c->is_error);
	if (c->error)
		cJSON_AddStringToObject(ev, fname(EVF_ERROR), c->error);
	if (c->file)
		cJSON_AddStringToObject(ev, fname(EVF_FILE), c->file);
	if (c->rows >= 0) {
		cJSON_AddNumberToObject(ev, fname(EVF_ROWS), (double)c->rows);
		cJSON_AddNumberToObject(ev, fname(EVF_COLUMNS),
		                        (double)c->columns);
	}
	if (!c->error)
		cJSON_AddNumberToObject(ev, fname(EVF_BYTES), c->bytes);
	return ev;
}

cJSON *ev_mcp_elicit(const struct ev_mcp_elicit *e)
{
	cJSON *ev = ev_new(EV_MCP_ELICIT);
	cJSON_AddStringToObject(ev, fname(EVF_ID), e->id);
	cJSON_AddStringToObject(ev, fname(EVF_SERVER), e->server);
	if (e->call)
		cJSON_AddStringToObject(ev, fname(EVF_CALL), e->call);
	cJSON_AddStringToObject(ev, fname(EVF_MESSAGE), e->message);
	cJSON_AddItemToObject(ev, fname(EVF_SCHEMA),
	                      e->schema ? cJSON_Duplicate(e->schema, 1)
	                                : cJSON_CreateObject());
	cJSON_AddStringToObject(ev, fname(EVF_ACTION), e->action);
	if (e->content)
		cJSON_AddItemToObject(ev, fname(EVF_CONTENT),
		                      cJSON_Duplicate(e->content, 1));
	cJSON_AddStringToObject(ev, fname(EVF_BY), e->by);
	return ev;
}

cJSON *ev_workspace_change(const char *path, const char *kind, double size,
                           double mtime, const char *call, cJSON *diff)
{
	cJSON *ev = ev_new(EV_WORKSPACE_CHANGE);
	cJSON_AddStringToObject(ev, fname(EVF_PATH), path);
	cJSON_AddStringToObject(ev, fname(EVF_KIND), kind);
	cJSON_AddNumberToObject(ev, fname(EVF_SIZE), size);
	if (mtime > 0)
		cJSON_AddNumberToObject(ev, fname(EVF_MTIME), mtime);
	if (call)
		cJSON_AddStringToObject(ev, fname(EVF_CALL), call);
	if (diff)
		cJSON_AddItemToObject(ev, fname(EVF_DIFF), diff);
	return ev;
}

cJSON *ev_input_hashes(const cJSON *inputs)
{
	cJSON *ev = ev_new(EV_INPUT_HASHES);
	cJSON_AddItemToObject(ev, fname(EVF_INPUTS),
	                      cJSON_Duplicate(inputs, 1));
	return ev;
}

cJSON *ev_progress(const char *what, const char *subject, double done,
                   double total, int64_t elapsed_ms)
{
	cJSON *ev = ev_new(EV_PROGRESS);
	cJSON_AddStringToObject(ev, fname(EVF_WHAT), what);
	cJSON_AddStringToObject(ev, fname(EVF_SUBJECT), subject);
	cJSON_AddNumberToObject(ev, fname(EVF_DONE), done);
	cJSON_AddNumberToObject(ev, fname(EVF_TOTAL), total);
	cJSON_AddNumberToObject(ev, fname(EVF_ELAPSED_MS), (double)elapsed_ms);
	return ev;
}

cJSON *ev_mcp_progress(const char *id, double done, double total,
                       const char *message, int64_t elapsed_ms)
{
	cJSON *ev = ev_progress("mcp", id, done, total, elapsed_ms);
	if (message)
		cJSON_AddStringToObject(ev, fname(EVF_MESSAGE), message);
	return ev;
}

/* hello is the kernel's first line (pyframe.c), not an event. */
cJSON *ev_python_session(const char *state, int generation, const cJSON *hello,
                         int64_t startup_ms, const char *reason)
{
	cJSON *ev = ev_new(EV_PYTHON_SESSION);
	cJSON_AddStringToObject(ev, fname(EVF_STATE), state);
	cJSON_AddNumberToObject(ev, fname(EVF_GENERATION), generation);
	if (hello) {
		cJSON_AddStringToObject(ev, fname(EVF_PYTHON),
		                        json_str(hello, "python", ""));
		cJSON_AddStringToObject(ev, fname(EVF_EXECUTABLE),
		                        json_str(hello, "executable", ""));
		const cJSON *pkgs = cJSON_GetObjectItem(hello, "packages");
		cJSON_AddItemToObject(ev, fname(EVF_PACKAGES),
		                      pkgs ? cJSON_Duplicate(pkgs, 1)
		                           : cJSON_CreateArray());
		cJSON_AddNumberToObject(ev, fname(EVF_STARTUP_MS),
		                        (double)startup_ms);
	}
	if (reason)
		cJSON_AddStringToObject(ev, fname(EVF_REASON), reason);
	return ev;
}

cJSON *ev_replay_live(int turn, const char *reason, const char *recorded_hash,
                      const char *request_hash, int cached_turns)
{
	cJSON *ev = ev_new(EV_REPLAY_LIVE);
	cJSON_AddNumberToObject(ev, fname(EVF_TURN), turn);
	cJSON_AddStringToObject(ev, fname(EVF_REASON), reason);
	if (recorded_hash)
		cJSON_AddStringToObject(ev, fname(EVF_RECORDED_HASH),
		                        recorded_hash);
	if (request_hash)
		cJSON_AddStringToObject(ev, fname(EVF_REQUEST_HASH),
		                        request_hash);
	cJSON_AddNumberToObject(ev, fname(EVF_CACHED_TURNS), cached_turns);
	return ev;
}

cJSON *ev_step_pause_request(int turn, int messages, long est_input_tokens,
                             const char *const *tools, size_t ntools)
{
	cJSON *ev = ev_new(EV_STEP_PAUSE);
	cJSON_AddStringToObject(ev, fname(EVF_KIND), "request");
	cJSON_AddNumberToObject(ev, fname(EVF_TURN), turn);
	cJSON_AddNumberToObject(ev, fname(EVF_MESSAGES), messages);
	cJSON_AddNumberToObject(ev, fname(EVF_EST_INPUT_TOKENS),
	                        (double)est_input_tokens);
	cJSON *names = cJSON_AddArrayToObject(ev, fname(EVF_TOOLS));
	for (size_t i = 0; i < ntools; i++)
		cJSON_AddItemToArray(names, cJSON_CreateString(tools[i]));
	return ev;
}

cJSON *ev_step_pause_exec(int turn, const char *id, const char *tool,
                          const char *command)
{
	cJSON *ev = ev_new(EV_STEP_PAUSE);
	cJSON_AddStringToObject(ev, fname(EVF_KIND), "exec");
	cJSON_AddNumberToObject(ev, fname(EVF_TURN), turn);
	cJSON_AddStringToObject(ev, fname(EVF_ID), id);
	cJSON_AddStringToObject(ev, fname(EVF_TOOL), tool);
	cJSON_AddStringToObject(ev, fname(EVF_COMMAND), command);
	return ev;
}

cJSON *ev_step_resume(const char *action, const char *kind, const char *id,
                      const char *original, const char *final)
{
	cJSON *ev = ev_new(EV_STEP_RESUME);
	cJSON_AddStringToObject(ev, fname(EVF_ACTION), action);
	cJSON_AddStringToObject(ev, fname(EVF_KIND), kind);
	if (id)
		cJSON_AddStringToObject(ev, fname(EVF_ID), id);
	if (original)
		cJSON_AddStringToObject(ev, fname(EVF_ORIGINAL), original);
	if (final)
		cJSON_AddStringToObject(ev, fname(EVF_FINAL), final);
	return ev;
}

cJSON *ev_budget_reached(const char *kind, double spent, double limit,
                         const char *why)
{
	cJSON *ev = ev_new(EV_BUDGET_REACHED);
	cJSON_AddStringToObject(ev, fname(EVF_KIND), kind);
	cJSON_AddNumberToObject(ev, fname(EVF_SPENT), spent);
	cJSON_AddNumberToObject(ev, fname(EVF_LIMIT), limit);
	cJSON_AddStringToObject(ev, fname(EVF_WHY), why);
	return ev;
}

cJSON *ev_budget_decision(const char *kind, const char *decision, double limit)
{
	cJSON *ev = ev_new(EV_BUDGET_DECISION);
	cJSON_AddStringToObject(ev, fname(EVF_KIND), kind);
	cJSON_AddStringToObject(ev, fname(EVF_DECISION), decision);
	cJSON_AddNumberToObject(ev, fname(EVF_LIMIT), limit);
	return ev;
}

cJSON *ev_idle(const char *reason)
{
	cJSON *ev = ev_new(EV_IDLE);
	cJSON_AddStringToObject(ev, fname(EVF_REASON), reason);
	return ev;
}

cJSON *ev_error(const char *category, const char *message, long retry_in_ms)
{
	cJSON *ev = ev_new(EV_ERROR);
	cJSON_AddStringToObject(ev, fname(EVF_CATEGORY), category);
	char *told = fdlimit_explain(message); /* out of descriptors */
	cJSON_AddStringToObject(ev, fname(EVF_MESSAGE), told ? told : message);
	free(told);
	if (retry_in_ms >= 0)
		cJSON_AddNumberToObject(ev, fname(EVF_RETRY_IN_MS),
		                        (double)retry_in_ms);
	return ev;
}

cJSON *ev_error_retry(const char *category, const char *message,
                      long retry_in_ms, int attempt, size_t discarded_bytes,
                      int turn)
{
	cJSON *ev = ev_new(EV_ERROR);
	cJSON_AddStringToObject(ev, fname(EVF_CATEGORY), category);
	char *told = fdlimit_explain(message); /* out of descriptors */
	cJSON_AddStringToObject(ev, fname(EVF_MESSAGE), told ? told : message);
	free(told);
	cJSON_AddNumberToObject(ev, fname(EVF_RETRY_IN_MS),
	                        (double)retry_in_ms);
	cJSON_AddNumberToObject(ev, fname(EVF_ATTEMPT), attempt);
	cJSON_AddNumberToObject(ev, fname(EVF_DISCARDED_BYTES),
	                        (double)discarded_bytes);
	cJSON_AddNumberToObject(ev, fname(EVF_TURN), turn);
	return ev;
}

cJSON *ev_run_output(const char *path, int present, double bytes,
                     const char *copied_to, const char *error)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, fname(EVF_PATH), path);
	cJSON_AddBoolToObject(o, fname(EVF_PRESENT), present);
	cJSON_AddNumberToObject(o, fname(EVF_BYTES), bytes);
	if (present)
		cJSON_AddStringToObject(o, fname(EVF_COPIED_TO), copied_to);
	else
		cJSON_AddStringToObject(o, fname(EVF_ERROR),
		                        error ? error : "missing");
	return o;
}

cJSON *ev_run_end(const struct ev_run_end *e)
{
	cJSON *ev = ev_new(EV_RUN_END);
	cJSON_AddStringToObject(ev, fname(EVF_STATUS), e->status);
	cJSON_AddNumberToObject(ev, fname(EVF_EXIT_CODE), e->exit_code);
	cJSON_AddItemToObject(ev, fname(EVF_OUTPUTS),
	                      e->outputs ? e->outputs : cJSON_CreateArray());
	cJSON *tot = cJSON_AddObjectToObject(ev, fname(EVF_TOTALS));
	cJSON_AddNumberToObject(tot, fname(EVF_TURNS), e->turns);
	cJSON_AddNumberToObject(tot, fname(EVF_INPUT_TOKENS),
	                        (double)e->input_tokens);
	cJSON_AddNumberToObject(tot, fname(EVF_OUTPUT_TOKENS),
	                        (double)e->output_tokens);
	cJSON_AddNumberToObject(tot, fname(EVF_COST_USD), e->cost_usd);
	if (e->unpriced)
		cJSON_AddNumberToObject(tot, fname(EVF_UNPRICED_TURNS),
		                        e->unpriced);
	cJSON_AddNumberToObject(tot, fname(EVF_DURATION_MS),
	                        (double)e->duration_ms);
	ev_add_string_or_null(ev, fname(EVF_ARCHIVE), e->archive);
	return ev;
}

cJSON *ev_context_trim(int turn, const cJSON *ids, const cJSON *at,
                       const cJSON *stubs, size_t bytes, long est_before,
                       long est_after, long window)
{
	cJSON *ev = ev_new(EV_CONTEXT_TRIM);
	cJSON_AddNumberToObject(ev, fname(EVF_TURN), turn);
	ev_add_copy(ev, fname(EVF_IDS), ids);
	ev_add_copy(ev, fname(EVF_AT), at);
	ev_add_copy(ev, fname(EVF_STUBS), stubs);
	cJSON_AddNumberToObject(ev, fname(EVF_BYTES), (double)bytes);
	cJSON_AddNumberToObject(ev, fname(EVF_EST_BEFORE), (double)est_before);
	cJSON_AddNumberToObject(ev, fname(EVF_EST_AFTER), (double)est_after);
	cJSON_AddNumberToObject(ev, fname(EVF_WINDOW), (double)window);
	return ev;
}

/* The fields every compaction event starts with. */
static cJSON *ev_compaction(const char *state, const char *reason, int turn)
{
	cJSON *ev = ev_new(EV_COMPACTION);
	cJSON_AddStringToObject(ev, fname(EVF_STATE), state);
	cJSON_AddStringToObject(ev, fname(EVF_REASON), reason ? reason : "");
	cJSON_AddNumberToObject(ev, fname(EVF_TURN), turn);
	return ev;
}

cJSON *ev_compaction_started(const char *reason, int turn, long est_tokens,
                             long window, int messages, int keep_from,
                             int left_out)
{
	cJSON *ev = ev_compaction("started", reason, turn);
	cJSON_AddNumberToObject(ev, fname(EVF_EST_TOKENS), (double)est_tokens);
	cJSON_AddNumberToObject(ev, fname(EVF_WINDOW), (double)window);
	cJSON_AddNumberToObject(ev, fname(EVF_MESSAGES), messages);
	cJSON_AddNumberToObject(ev, fname(EVF_KEEP_FROM), keep_from);
	if (left_out)
		cJSON_AddNumberToObject(ev, fname(EVF_LEFT_OUT), left_out);
	return ev;
}

cJSON *ev_compaction_done(const struct ev_compaction *c)
{
	cJSON *ev = ev_compaction("done", c->reason, c->turn);
	cJSON_AddStringToObject(ev, fname(EVF_REQUEST_HASH), c->request_hash);
	cJSON_AddBoolToObject(ev, fname(EVF_CACHED), c->cached);
	cJSON_AddNumberToObject(ev, fname(EVF_REPLACED), c->replaced);
	cJSON_AddNumberToObject(ev, fname(EVF_KEPT), c->kept);
	cJSON_AddNumberToObject(ev, fname(EVF_EST_BEFORE),
	                        (double)c->est_before);
	cJSON_AddNumberToObject(ev, fname(EVF_EST_AFTER), (double)c->est_after);
	cJSON_AddNumberToObject(ev, fname(EVF_WINDOW), (double)c->window);
	cJSON_AddStringToObject(ev, fname(EVF_SUMMARY),
	                        c->summary ? c->summary : "");
	return ev;
}

cJSON *ev_compaction_failed(const char *reason, int turn, const char *message)
{
	cJSON *ev = ev_compaction("failed", reason, turn);
	cJSON_AddStringToObject(ev, fname(EVF_MESSAGE), message ? message : "");
	return ev;
}
