/* events.h: the event types of a run (docs/ARCHITECTURE.md, "Events").
 * Every event is a JSON object with seq, t and type; the type's name is
 * written in one place (src/agent/events.c). Consumers dispatch on
 * enum event_type through a table indexed by it, never on the string.
 * The builders that make each event are in src/agent/events_build.c:
 * each returns a new object (the caller owns it) with "type" and the
 * type's fields in their transcript order; the session adds seq and t
 * when it emits it. The field table is at the top of events.c. */
#ifndef ASSAY_EVENTS_H
#define ASSAY_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

struct strv;

struct config;
struct policy_verdict;

enum event_type {
	EV_UNKNOWN = 0, /* a type this build does not know (newer record) */
	EV_RUN_START,
	EV_RUN_RESUME,
	EV_USER_MESSAGE,
	EV_MODEL_REQUEST,
	EV_TEXT_DELTA,
	EV_ASSISTANT_MESSAGE,
	EV_USAGE,
	EV_TOOL_CALL,
	EV_APPROVAL_REQUEST,
	EV_APPROVAL,
	EV_EXEC_START,
	EV_EXEC_OUTPUT,
	EV_EXEC_END,
	EV_TOOL_RESULT,
	EV_IMAGE_SENT,
	EV_MCP_TOOLS,
	EV_MCP_CALL,
	EV_MCP_ELICIT,
	EV_WORKSPACE_CHANGE,
	EV_PYTHON_SESSION,
	EV_INPUT_HASHES,
	EV_PROGRESS, /* shown to the frontends, never recorded */
	EV_REPLAY_LIVE,
	EV_STEP_PAUSE,
	EV_STEP_RESUME,
	EV_BUDGET_REACHED,
	EV_BUDGET_DECISION,
	EV_CONTEXT_TRIM,
	EV_COMPACTION,
	EV_IDLE,
	EV_ERROR,
	EV_RUN_END,
	EV__COUNT
};

/* The wire name of a type ("tool_result"); "unknown" for EV_UNKNOWN. */
const char *event_type_name(enum event_type t);
/* The type named by name; EV_UNKNOWN for NULL or a name not known. */
enum event_type event_type_parse(const char *name);
/* The type of an event object (its "type" member). */
enum event_type event_type_of(const cJSON *ev);

/* --- fields and typed readers -------------------------------------------
 * Every member name an event (or an object inside one: totals, limits,
 * sandbox, inputs[], outputs[], tool_calls[], diff, python...) can have.
 * The wire names are written once, in src/agent/events.c's field table;
 * builders (events_build.c, by ev_field_name) and readers both go
 * through it, so no file but events.c spells a field's name. The same field
 * table says which fields each type has (ev_type_fields) and what the type
 * means (the doc's event table is generated from it: scripts/doc-events). */
enum ev_field {
	EVF_NONE = 0, /* ends a type's field list */
	EVF_SEQ,
	EVF_T,
	EVF_TYPE,
	EVF_VERSION,
	EVF_RUN_ID,
	EVF_RUN_DIR,
	EVF_PROVIDER,
	EVF_MODEL,
	EVF_BASE_URL,
	EVF_INSTRUCTIONS,
	EVF_SCRIPT,
	EVF_OUT,
	EVF_SANDBOX,
	EVF_BACKEND,
	EVF_IMAGE,
	EVF_IMAGE_ID,
	EVF_REPO_DIGESTS,
	EVF_IMAGE_REPORTED,
	EVF_IMAGE_ID_WAS,
	EVF_ASK,
	EVF_WORKSPACE,
	EVF_INPUTS,
	EVF_SRC,
	EVF_DEST,
	EVF_MODE,
	EVF_PATH,
	EVF_KIND,
	EVF_BYTES,
	EVF_MTIME,
	EVF_SHA256,
	EVF_CACHED,
	EVF_FILES,
	EVF_OUTPUTS,
	EVF_LIMITS,
	EVF_TIMEOUT_S,
	EVF_MAX_TURNS,
	EVF_MAX_TOKENS,
	EVF_MAX_COST,
	EVF_MEMORY_MB,
	EVF_PROCESSES,
	EVF_CPU_S,
	EVF_FILE_SIZE_MB,
	EVF_MAX_OUTPUT_BYTES,
	EVF_MAX_OUTPUT_TOKENS,
	EVF_NETWORK,
	EVF_PROJECT,
	EVF_WHY,
	EVF_VALUE,
	EVF_FORKED_FROM,
	EVF_FORK_AT,
	EVF_REPLACE,
	EVF_RESUMED_FROM,
	EVF_STATUS,
	EVF_DROPPED_BYTES,
	EVF_PROMPT,
	EVF_TEXT,
	EVF_TURN,
	EVF_REQUEST_HASH,
	EVF_MESSAGES,
	EVF_EST_TOKENS,
	EVF_WINDOW,
	EVF_REPLAYED,
	EVF_TOOL_CALLS,
	EVF_ID,
	EVF_NAME,
	EVF_ARGUMENTS,
	EVF_ARGUMENTS_ERROR,
	EVF_ARGUMENTS_RAW,
	EVF_CUT_OFF,
	EVF_ARGUMENTS_BYTES,
	EVF_FINISH_REASON,
	EVF_RECOVERED,
	EVF_OF,
	EVF_INPUT_TOKENS,
	EVF_OUTPUT_TOKENS,
	EVF_CACHED_TOKENS,
	EVF_CACHE_WRITE_TOKENS,
	EVF_REASONING_TOKENS,
	EVF_COST_USD,
	EVF_PRICED,
	EVF_KNOWN,
	EVF_TOTALS,
	EVF_UNPRICED_TURNS,
	EVF_TURNS,
	EVF_TOOL,
	EVF_COMMAND,
	EVF_CWD,
	EVF_REASONS,
	EVF_KINDS,
	EVF_RULES,
	EVF_NO_ALWAYS,
	EVF_EDITABLE,
	EVF_DECISION,
	EVF_BY,
	EVF_CHOICE,
	EVF_RULE,
	EVF_ORIGINAL,
	EVF_FINAL,
	EVF_FEEDBACK,
	EVF_SAVED,
	EVF_SCOPE,
	EVF_NOTE,
	EVF_STREAM,
	EVF_TRUNCATED,
	EVF_EXIT_CODE,
	EVF_SIGNAL,
	EVF_TIMED_OUT,
	EVF_CANCELLED,
	EVF_DURATION_MS,
	EVF_STDOUT_BYTES,
	EVF_STDERR_BYTES,
	EVF_OUTPUT_FILE,
	EVF_OUTPUT_FILE_CUT_AT,
	EVF_ERROR,
	EVF_PYTHON,
	EVF_TRACEBACK,
	EVF_MESSAGE,
	EVF_CONTENT,
	EVF_IS_ERROR,
	EVF_FORKED,
	EVF_SIZE,
	EVF_CALL,
	EVF_DIFF,
	EVF_ADDED,
	EVF_REMOVED,
	EVF_HUNKS,
	EVF_CUT,
	EVF_SKIPPED,
	EVF_WHAT,
	EVF_SUBJECT,
	EVF_DONE,
	EVF_TOTAL,
	EVF_ELAPSED_MS,
	EVF_STATE,
	EVF_GENERATION,
	EVF_EXECUTABLE,
	EVF_PACKAGES,
	EVF_STARTUP_MS,
	EVF_REASON,
	EVF_RECORDED_HASH,
	EVF_CACHED_TURNS,
	EVF_EST_INPUT_TOKENS,
	EVF_TOOLS,
	EVF_ACTION,
	EVF_SPENT,
	EVF_LIMIT,
	EVF_CATEGORY,
	EVF_RETRY_IN_MS,
	EVF_ATTEMPT,
	EVF_DISCARDED_BYTES,
	EVF_PRESENT,
	EVF_COPIED_TO,
	EVF_ARCHIVE,
	EVF_IDS,
	EVF_AT,
	EVF_STUBS,
	EVF_EST_BEFORE,
	EVF_EST_AFTER,
	EVF_KEEP_FROM,
	EVF_LEFT_OUT,
	EVF_REPLACED,
	EVF_KEPT,
	EVF_SUMMARY,
	EVF_HOW,
	EVF_MEDIA_TYPE,
	EVF_WIDTH,
	EVF_HEIGHT,
	EVF_SRC_WIDTH,
	EVF_SRC_HEIGHT,
	EVF_FILE,
	EVF_TOKENS,
	EVF_DETAIL,
	EVF_SERVERS,
	EVF_SERVER,
	EVF_TRANSPORT,
	EVF_PROTOCOL,
	EVF_DESCRIPTION,
	EVF_PARAMETERS,
	EVF_ANNOTATIONS,
	EVF_ROWS,
	EVF_COLUMNS,
	EVF_SCHEMA,
	EVF__COUNT
};

/* The wire name of a field ("tool_calls"); "" for EVF_NONE or out of
 * range. */
const char *ev_field_name(enum ev_field f);
/* The fields a type's events have at their top level, in transcript
 * order (every variant's, each once), ending with EVF_NONE. */
const enum ev_field *ev_type_fields(enum event_type t);
/* What events of a type mean, and their fields as the doc describes
 * them (nested members, [optional], x? nullable); "" for EV_UNKNOWN. */
const char *ev_type_meaning(enum event_type t);
const char *ev_type_doc(enum event_type t);

/* Read member f of obj (an event or an object inside one; NULL reads
 * nothing): the member, or NULL. The readers below return def when the
 * member is missing or not of their kind, as json_str and friends do. */
cJSON *ev_item(const cJSON *obj, enum ev_field f);
const char *ev_str(const cJSON *obj, enum ev_field f, const char *def);
/* Whether an image_sent event's file names a copy the run dir can hold:
 * "images/<64 hex>.<1 to 5 of a-z0-9>" (a record may come from anyone:
 * nothing else is opened). */
int ev_image_file_ok(const char *file);
double ev_num(const cJSON *obj, enum ev_field f, double def);
/* A number as an integer, saturated (ev_long to +-2^53, ev_int to int's
 * range): a record's numbers never overflow a cast. */
long ev_long(const cJSON *obj, enum ev_field f, long def);
int ev_int(const cJSON *obj, enum ev_field f, int def);
int ev_bool(const cJSON *obj, enum ev_field f, int def);

/* What a sandbox object (run_start's or run_resume's) records of its
 * image beyond its name, in words: "sha256:...; repo digests: ..."
 * (docker), that the server reports a name only (opensandbox), and a
 * change since the run began; NULL when it records nothing more (the
 * local sandbox, a record made before). Untrusted text: a terminal
 * gets it sanitized. Caller frees. */
char *ev_image_text(const cJSON *sandbox);
/* A resume or re-execute on another image than the run had
 * (image_id_was): one line naming both ids; else NULL. Caller frees. */
char *ev_image_change_text(const cJSON *sandbox);

/* --- builders ---------------------------------------------------------
 * Strings are copied; a NULL string makes no member unless said. */

/* {"type"} alone. */
cJSON *ev_new(enum event_type t);

/* What run_start and run_resume both say about the run. */
struct ev_run {
	const char *run_id, *run_dir;
	const char *provider, *model;
	const char *base_url; /* NULL: "" (never the key) */
	const char *backend;  /* the sandbox's (sbx_name) */
	const char *image;    /* NULL: "" */
	const char *image_id; /* NULL: "" */
	/* sbx_repo_digests (docker): repo_digests [..], even empty; NULL:
	 * no member */
	const struct strv *repo_digests;
	/* sbx_image_reported (opensandbox): image_reported, null for "";
	 * NULL: no member */
	const char *image_reported;
	/* a resume or re-execute: the image id the run recorded last, when
	 * this sandbox's differs (image_id_was); NULL: no member */
	const char *image_id_was;
	const char *workspace; /* the host directory; NULL: "/workspace" */
	/* run_start: the files the run reads (their kept copies are in
	 * the run dir); NULL: not given, no member */
	const char *instructions, *script;
	/* run_start: the inputs as the sandbox took them
	 * (sbx_inputs_record; copied); NULL: those of the configuration */
	const cJSON *inputs;
};

/* The run a re-execute forks (run_start's forked_from). */
struct ev_fork {
	const char *run_id, *run_dir;
	uint64_t fork_at;    /* 0: re-executed whole (no fork_at, replace) */
	const char *replace; /* the user message's new text, with fork_at */
};

/* run_start: [forked_from {run_id, run_dir, mode, fork_at, replace}],
 * type, version, run_id, run_dir, provider, model, base_url,
 * [instructions], [script], out, sandbox {backend, image, image_id,
 * [repo_digests], [image_reported], [image_id_was]},
 * ask, workspace, inputs [{src, dest}], outputs [path], limits
 * {timeout_s, max_turns, max_tokens, max_cost, memory_mb, processes,
 * cpu_s, file_size_mb, max_output_bytes, max_output_tokens, network}.
 * out, ask, inputs, outputs and limits come from cfg; fork may be NULL
 * (forked_from comes before type, as it always has). */
cJSON *ev_run_start(const struct ev_run *run, const struct config *cfg,
                    const struct ev_fork *fork);

/* Where a resume picks the record up (run_resume's resumed_from). */
struct ev_resumed_from {
	uint64_t seq;         /* the record's last event */
	const char *status;   /* its run_end's, or how it stopped */
	size_t dropped_bytes; /* a cut last line, ignored */
};

/* run_resume: run_id, run_dir, resumed_from {seq, status,
 * dropped_bytes}, provider, model, base_url, sandbox {backend, image,
 * image_id, [repo_digests], [image_reported], [image_id_was]} (the new
 * sandbox's, as run_start's), workspace, prompt (bool: a new user
 * message follows). */
cJSON *ev_run_resume(const struct ev_run *run,
                     const struct ev_resumed_from *from, int prompt);

/* user_message: text. */
cJSON *ev_user_message(const char *text);

/* model_request: turn, request_hash, cached (bool), messages (count),
 * [est_tokens] (the request's size, estimated; when > 0), [window] (the
 * model's context window; when known), [replayed: true] (a resumed run
 * re-sending a recorded turn). */
cJSON *ev_model_request(int turn, const char *request_hash, int cached,
                        int messages, long est_tokens, long window,
                        int replayed);

/* text_delta: turn, text. */
cJSON *ev_text_delta(int turn, const char *text);

/* assistant_message: turn, text (NULL: ""), tool_calls (a copy; NULL:
 * []), [finish_reason], [recovered: true] (an answer found only in the
 * cache, recorded by the resume). */
cJSON *ev_assistant_message(int turn, const char *text, const cJSON *tool_calls,
                            const char *finish_reason, int recovered);

/* The numbers of a usage event. */
struct ev_usage {
	int turn;
	long input_tokens, output_tokens, cached_tokens, cache_write_tokens;
	long reasoning_tokens; /* of output_tokens */
	double cost_usd;       /* 0 when !priced */
	int priced;            /* the model has a price (the model table) */
	int known;             /* the provider reported usage */
	int replayed;   /* a recorded turn a resume replays: nothing billed */
	int compaction; /* of a compaction's summary request: "of" */
	struct {
		long input_tokens, output_tokens, cached_tokens;
		double cost_usd; /* of the priced turns */
		int unpriced;    /* turns whose cost is unknown */
	} totals;                /* the run's so far */
};

/* usage: turn, [of "compaction"], input_tokens, output_tokens,
 * cached_tokens, [cache_write_tokens], [reasoning_tokens], cost_usd, priced
 * (bool), known (bool), [replayed: true], totals {input_tokens, output_tokens,
 * cached_tokens, cost_usd, [unpriced_turns]}. */
cJSON *ev_usage(const struct ev_usage *u);

/* tool_call: id, name, arguments (a copy; NULL: no member). */
cJSON *ev_tool_call(const char *id, const char *name, const cJSON *arguments);

/* What an approval_request says (a call put to a person). */
struct ev_approval_request {
	const char *id, *tool;
	const struct policy_verdict *verdict; /* command, reasons, kinds,
	                                         rules, no_always */
	const char *cwd;
	int editable;
};

/* approval_request: id, tool, command, cwd, reasons [text], kinds
 * [name, no repeats], rules (the rules "always" would save, or null),
 * no_always (why "always" is not offered, or null), editable (bool). */
cJSON *ev_approval_request(const struct ev_approval_request *r);

/* One decision about a call. */
struct ev_approval {
	const char *id, *tool;
	const char *decision; /* approved, edited, denied */
	const char *by;       /* user, rule, mode */
	const char *mode;     /* the ask mode */
	const char *choice;   /* what the user picked; NULL: no member */
	const cJSON *rule;    /* the deciding or saved rule; NULL: null */
	const cJSON *rules;   /* every rule saved; NULL: no member */
	const struct policy_verdict *verdict; /* reasons, kinds, original;
	                                         NULL: [], [], "" */
	const char *final;      /* what runs; NULL: null (denied) */
	const char *feedback;   /* NULL: null */
	const char *scope;      /* where "always" saved; NULL: no saved */
	const char *saved_path; /* the file saved to; NULL: no member */
	const char *note;       /* NULL: no member */
};

/* approval: id, tool, decision, by, mode, [choice], rule, [rules],
 * reasons [text], kinds [name], original, final, feedback, [saved
 * {scope, [path]}], [note]. */
cJSON *ev_approval(const struct ev_approval *a);

/* exec_start: id, command (what runs: a shell command or a cell). */
cJSON *ev_exec_start(const char *id, const char *command);

/* exec_output: id, stream ("stdout", "stderr"), bytes (of output this
 * event stands for), text (perhaps less: bounded), [truncated: true]
 * (bytes holds output that text does not). */
cJSON *ev_exec_output(const char *id, const char *stream, uint64_t bytes,
                      const char *text, int truncated);

/* The end of a command (or a cell). */
struct ev_exec_end {
	const char *id;
	int exit_code, signal, timed_out, cancelled;
	int64_t duration_ms;
	uint64_t stdout_bytes, stderr_bytes;
	const char *output_file; /* the full stdout in the run dir */
	int output_file_cut;     /* the files stopped growing at ... */
	uint64_t output_file_cut_at;
	const char *error; /* could not run at all; NULL: no member */
	/* a python cell's result: the trailing value (the last bytes of
	 * stdout, then a newline), the error and its traceback (the last
	 * bytes of stderr); NULL: no member */
	const cJSON *python;
};

/* exec_end: id, exit_code, signal, timed_out, cancelled, duration_ms,
 * stdout_bytes, stderr_bytes, output_file, [output_file_cut_at],
 * [error], [python: {[value], [error: {type, message}], [traceback]}]. */
cJSON *ev_exec_end(const struct ev_exec_end *e);

/* tool_result: id, content (what the model is told), is_error. */
cJSON *ev_tool_result(const char *id, const char *content, int is_error);
/* tool_result of a fork's replaced call: id, content, is_error,
 * forked: true, original (what the call gave). */
/* An image of call id sent to the model (or, with error, not sent). */
struct ev_image {
	const char *id, *path, *how; /* how: "view" or "auto" */
	const char *media_type, *sha256, *file, *detail;
	int width, height, src_width, src_height;
	double bytes;
	long tokens;
	const char *error; /* not sent: why (then only id, path, how) */
};
cJSON *ev_image_sent(const struct ev_image *im);
/* mcp_tools: the MCP servers of the run as they started (servers:
 * [{name, transport, status, [why], [protocol], [server]}]) and the
 * tools offered from them ([{name, server, tool, [description],
 * parameters, [annotations]}]); both taken. */
cJSON *ev_mcp_tools(cJSON *servers, cJSON *tools);
/* mcp_call: a call of an MCP tool ended (the tool_result follows): id,
 * server, tool, duration_ms, is_error, [error] (no answer: why), [file]
 * (the workspace file its result landed in), [rows, columns] (a table),
 * [bytes] (of the result). */
struct ev_mcp_call {
	const char *id, *server, *tool, *error, *file;
	double duration_ms, bytes;
	int is_error;
	long rows, columns; /* -1: not a table */
};
cJSON *ev_mcp_call(const struct ev_mcp_call *c);
/* mcp_elicit: an MCP server asked the person something
 * (elicitation/create) and was answered: id ("elicit-N"), server,
 * [call] (the tool call in flight), message, schema (its
 * requestedSchema), action (accept, decline, cancel), [content] (what
 * was sent: accept's fields, defaults filled), by ("person";
 * "nobody": no one to ask, declined; "assay": a form too big to put to
 * a person, declined). Copied. */
struct ev_mcp_elicit {
	const char *id, *server, *call, *message, *action, *by;
	const cJSON *schema, *content;
};
cJSON *ev_mcp_elicit(const struct ev_mcp_elicit *e);
cJSON *ev_tool_result_forked(const char *id, const char *content, int is_error,
                             const char *original);

/* workspace_change: path, kind (created, modified, deleted), size;
 * mtime (seconds; 0: not given, a deletion); call: the id of the call
 * that changed it (NULL: none); diff (taken, may be NULL): {added,
 * removed, hunks (diff -u), cut} or {skipped}. */
cJSON *ev_workspace_change(const char *path, const char *kind, double size,
                           double mtime, const char *call, cJSON *diff);

/* inputs: [{dest, kind, bytes, [files], mtime, sha256, cached}]
 * (copied). */
cJSON *ev_input_hashes(const cJSON *inputs);
/* progress (shown, never recorded): what ("hashing", "saving"),
 * subject (an input's dest, "the workspace"), done and total bytes
 * (total 0: not known yet; done -1: the work failed), elapsed_ms since
 * it began. */
cJSON *ev_progress(const char *what, const char *subject, double done,
                   double total, int64_t elapsed_ms);
/* progress of an MCP call (notifications/progress): what "mcp",
 * subject the tool call's id, done and total in the server's units
 * (total 0: not known), [message] (the server's words). */
cJSON *ev_mcp_progress(const char *id, double done, double total,
                       const char *message, int64_t elapsed_ms);
/* python_session: state (started, ended), generation, and with a hello
 * python, executable, packages (a copy; none: []), startup_ms; then
 * [reason]. */
cJSON *ev_python_session(const char *state, int generation, const cJSON *hello,
                         int64_t startup_ms, const char *reason);

/* replay_live: turn, reason, [recorded_hash], [request_hash],
 * cached_turns (answered from the record before it). */
cJSON *ev_replay_live(int turn, const char *reason, const char *recorded_hash,
                      const char *request_hash, int cached_turns);

/* step_pause before a request: kind "request", turn, messages,
 * est_input_tokens, tools [name]. */
cJSON *ev_step_pause_request(int turn, int messages, long est_input_tokens,
                             const char *const *tools, size_t ntools);
/* step_pause before a call runs: kind "exec", turn, id, tool, command
 * (the command, code or path it acts on). */
cJSON *ev_step_pause_exec(int turn, const char *id, const char *tool,
                          const char *command);
/* step_resume: action, kind (exec, request), [id], [original],
 * [final]. */
cJSON *ev_step_resume(const char *action, const char *kind, const char *id,
                      const char *original, const char *final);

/* budget_reached: kind (cost, tokens, turns), spent, limit, why: an
 * interactive run waits (idle "budget") for a decision. */
cJSON *ev_budget_reached(const char *kind, double spent, double limit,
                         const char *why);
/* budget_decision: kind, decision (raise, stop), limit (the new one). */
cJSON *ev_budget_decision(const char *kind, const char *decision, double limit);

/* idle: reason (ready, answered, failed, cancelled, budget). */
cJSON *ev_idle(const char *reason);

/* error: category, message, [retry_in_ms] (retry_in_ms < 0: none). */
cJSON *ev_error(const char *category, const char *message, long retry_in_ms);
/* error of a provider request being retried: category, message,
 * retry_in_ms, attempt, discarded_bytes (streamed text thrown away),
 * turn. */
cJSON *ev_error_retry(const char *category, const char *message,
                      long retry_in_ms, int attempt, size_t discarded_bytes,
                      int turn);

/* The end of a run. */
struct ev_run_end {
	const char *status; /* completed, failed, budget_exhausted,
	                       interrupted */
	int exit_code;
	cJSON *outputs; /* an array of ev_run_output: taken; NULL: [] */
	int turns;
	long input_tokens, output_tokens;
	double cost_usd; /* of the priced turns */
	int unpriced;    /* turns of unknown cost: [unpriced_turns] */
	int64_t duration_ms;
	const char *archive; /* the workspace archive; NULL: null */
};

/* One entry of run_end's outputs: path, present (bool), bytes, and
 * copied_to (present) or error (missing; NULL: "missing"). */
cJSON *ev_run_output(const char *path, int present, double bytes,
                     const char *copied_to, const char *error);

/* run_end: status, exit_code, outputs, totals {turns, input_tokens,
 * output_tokens, cost_usd, duration_ms}, archive. Takes e->outputs. */
cJSON *ev_run_end(const struct ev_run_end *e);

/* context_trim: turn (the request it comes before), ids [call ids whose
 * results became stubs], at [their messages' indexes in the history],
 * stubs [their stubs], all in the same order, bytes (saved), est_before,
 * est_after (tokens), window. */
cJSON *ev_context_trim(int turn, const cJSON *ids, const cJSON *at,
                       const cJSON *stubs, size_t bytes, long est_before,
                       long est_after, long window);

/* compaction, state "started": reason (threshold,
 * context_length_exceeded, user), turn (the last one made), est_tokens,
 * window, messages (the history's), keep_from (the first message kept),
 * [left_out] (messages the summary request could not carry). */
cJSON *ev_compaction_started(const char *reason, int turn, long est_tokens,
                             long window, int messages, int keep_from,
                             int left_out);
struct ev_compaction {
	const char *reason;
	int turn;
	const char *request_hash;
	int cached;
	int replaced, kept; /* messages */
	long est_before, est_after, window;
	const char *summary;
};
/* compaction, state "done": reason, turn, request_hash, cached,
 * replaced, kept (messages), est_before, est_after, window, summary. */
cJSON *ev_compaction_done(const struct ev_compaction *c);
/* compaction, state "failed": reason, turn, message. */
cJSON *ev_compaction_failed(const char *reason, int turn, const char *message);

#endif
