/* events.c: the one place where event type names and field names are
 * written: the type and field tables and the typed readers over them
 * (docs/ARCHITECTURE.md, "Events"), and what a recorded sandbox says of
 * its image, in words for the readers (export, eval, the frontends).
 * The builders, which name every member through the field table, are in
 * events_build.c. */

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "assay/events.h"
#include "assay/buf.h"
#include "assay/json.h"
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
    [EV_IMAGE_SENT] = "image_sent",
    [EV_MCP_TOOLS] = "mcp_tools",
    [EV_MCP_CALL] = "mcp_call",
    [EV_MCP_ELICIT] = "mcp_elicit",
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

/* clang-format off */
/* The field table: every member name of an event or of an object in one,
 * written here only (events.h, "fields and typed readers"). */
static const char *const field_names[EVF__COUNT] = {
    [EVF_SEQ] = "seq", [EVF_T] = "t", [EVF_TYPE] = "type",
    [EVF_VERSION] = "version", [EVF_RUN_ID] = "run_id",
    [EVF_RUN_DIR] = "run_dir", [EVF_PROVIDER] = "provider",
    [EVF_MODEL] = "model", [EVF_BASE_URL] = "base_url",
    [EVF_INSTRUCTIONS] = "instructions", [EVF_SCRIPT] = "script",
    [EVF_OUT] = "out", [EVF_SANDBOX] = "sandbox", [EVF_BACKEND] = "backend",
    [EVF_IMAGE] = "image", [EVF_IMAGE_ID] = "image_id",
    [EVF_REPO_DIGESTS] = "repo_digests",
    [EVF_IMAGE_REPORTED] = "image_reported",
    [EVF_IMAGE_ID_WAS] = "image_id_was", [EVF_ASK] = "ask",
    [EVF_WORKSPACE] = "workspace",
    [EVF_INPUTS] = "inputs", [EVF_SRC] = "src", [EVF_DEST] = "dest",
    [EVF_MODE] = "mode", [EVF_PATH] = "path", [EVF_KIND] = "kind",
    [EVF_BYTES] = "bytes", [EVF_MTIME] = "mtime", [EVF_SHA256] = "sha256",
    [EVF_CACHED] = "cached", [EVF_FILES] = "files",
    [EVF_OUTPUTS] = "outputs", [EVF_LIMITS] = "limits",
    [EVF_TIMEOUT_S] = "timeout_s", [EVF_MAX_TURNS] = "max_turns",
    [EVF_MAX_TOKENS] = "max_tokens", [EVF_MAX_COST] = "max_cost",
    [EVF_MEMORY_MB] = "memory_mb", [EVF_PROCESSES] = "processes",
    [EVF_CPU_S] = "cpu_s", [EVF_FILE_SIZE_MB] = "file_size_mb",
    [EVF_MAX_OUTPUT_BYTES] = "max_output_bytes",
    [EVF_MAX_OUTPUT_TOKENS] = "max_output_tokens", [EVF_NETWORK] = "network",
    [EVF_PROJECT] = "project", [EVF_WHY] = "why", [EVF_VALUE] = "value",
    [EVF_FORKED_FROM] = "forked_from", [EVF_FORK_AT] = "fork_at",
    [EVF_REPLACE] = "replace", [EVF_RESUMED_FROM] = "resumed_from",
    [EVF_STATUS] = "status", [EVF_DROPPED_BYTES] = "dropped_bytes",
    [EVF_PROMPT] = "prompt",
    [EVF_TEXT] = "text", [EVF_TURN] = "turn",
    [EVF_REQUEST_HASH] = "request_hash", [EVF_MESSAGES] = "messages",
    [EVF_EST_TOKENS] = "est_tokens", [EVF_WINDOW] = "window",
    [EVF_REPLAYED] = "replayed",
    [EVF_TOOL_CALLS] = "tool_calls", [EVF_ID] = "id", [EVF_NAME] = "name",
    [EVF_ARGUMENTS] = "arguments", [EVF_ARGUMENTS_ERROR] = "arguments_error",
    [EVF_ARGUMENTS_RAW] = "arguments_raw", [EVF_CUT_OFF] = "cut_off",
    [EVF_ARGUMENTS_BYTES] = "arguments_bytes",
    [EVF_FINISH_REASON] = "finish_reason", [EVF_RECOVERED] = "recovered",
    [EVF_OF] = "of", [EVF_INPUT_TOKENS] = "input_tokens",
    [EVF_OUTPUT_TOKENS] = "output_tokens",
    [EVF_CACHED_TOKENS] = "cached_tokens",
    [EVF_CACHE_WRITE_TOKENS] = "cache_write_tokens",
    [EVF_REASONING_TOKENS] = "reasoning_tokens", [EVF_COST_USD] = "cost_usd",
    [EVF_PRICED] = "priced", [EVF_KNOWN] = "known", [EVF_TOTALS] = "totals",
    [EVF_UNPRICED_TURNS] = "unpriced_turns", [EVF_TURNS] = "turns",
    [EVF_TOOL] = "tool", [EVF_COMMAND] = "command", [EVF_CWD] = "cwd",
    [EVF_REASONS] = "reasons", [EVF_KINDS] = "kinds", [EVF_RULES] = "rules",
    [EVF_NO_ALWAYS] = "no_always", [EVF_EDITABLE] = "editable",
    [EVF_DECISION] = "decision", [EVF_BY] = "by", [EVF_CHOICE] = "choice",
    [EVF_RULE] = "rule", [EVF_ORIGINAL] = "original", [EVF_FINAL] = "final",
    [EVF_FEEDBACK] = "feedback", [EVF_SAVED] = "saved", [EVF_SCOPE] = "scope",
    [EVF_NOTE] = "note",
    [EVF_STREAM] = "stream", [EVF_TRUNCATED] = "truncated",
    [EVF_EXIT_CODE] = "exit_code", [EVF_SIGNAL] = "signal",
    [EVF_TIMED_OUT] = "timed_out", [EVF_CANCELLED] = "cancelled",
    [EVF_DURATION_MS] = "duration_ms", [EVF_STDOUT_BYTES] = "stdout_bytes",
    [EVF_STDERR_BYTES] = "stderr_bytes", [EVF_OUTPUT_FILE] = "output_file",
    [EVF_OUTPUT_FILE_CUT_AT] = "output_file_cut_at", [EVF_ERROR] = "error",
    [EVF_PYTHON] = "python", [EVF_TRACEBACK] = "traceback",
    [EVF_MESSAGE] = "message",
    [EVF_CONTENT] = "content", [EVF_IS_ERROR] = "is_error",
    [EVF_FORKED] = "forked", [EVF_SIZE] = "size", [EVF_CALL] = "call",
    [EVF_DIFF] = "diff", [EVF_ADDED] = "added", [EVF_REMOVED] = "removed",
    [EVF_HUNKS] = "hunks", [EVF_CUT] = "cut", [EVF_SKIPPED] = "skipped",
    [EVF_WHAT] = "what", [EVF_SUBJECT] = "subject", [EVF_DONE] = "done",
    [EVF_TOTAL] = "total", [EVF_ELAPSED_MS] = "elapsed_ms",
    [EVF_STATE] = "state", [EVF_GENERATION] = "generation",
    [EVF_EXECUTABLE] = "executable", [EVF_PACKAGES] = "packages",
    [EVF_STARTUP_MS] = "startup_ms", [EVF_REASON] = "reason",
    [EVF_RECORDED_HASH] = "recorded_hash", [EVF_CACHED_TURNS] = "cached_turns",
    [EVF_EST_INPUT_TOKENS] = "est_input_tokens", [EVF_TOOLS] = "tools",
    [EVF_ACTION] = "action", [EVF_SPENT] = "spent", [EVF_LIMIT] = "limit",
    [EVF_CATEGORY] = "category", [EVF_RETRY_IN_MS] = "retry_in_ms",
    [EVF_ATTEMPT] = "attempt", [EVF_DISCARDED_BYTES] = "discarded_bytes",
    [EVF_PRESENT] = "present", [EVF_COPIED_TO] = "copied_to",
    [EVF_ARCHIVE] = "archive", [EVF_IDS] = "ids", [EVF_AT] = "at",
    [EVF_STUBS] = "stubs", [EVF_EST_BEFORE] = "est_before",
    [EVF_EST_AFTER] = "est_after", [EVF_KEEP_FROM] = "keep_from",
    [EVF_LEFT_OUT] = "left_out", [EVF_REPLACED] = "replaced",
    [EVF_KEPT] = "kept", [EVF_SUMMARY] = "summary",
    [EVF_HOW] = "how", [EVF_MEDIA_TYPE] = "media_type", [EVF_WIDTH] = "width",
    [EVF_HEIGHT] = "height", [EVF_SRC_WIDTH] = "src_width",
    [EVF_SRC_HEIGHT] = "src_height", [EVF_FILE] = "file",
    [EVF_TOKENS] = "tokens", [EVF_DETAIL] = "detail",
    [EVF_SERVERS] = "servers", [EVF_SERVER] = "server",
    [EVF_TRANSPORT] = "transport", [EVF_PROTOCOL] = "protocol",
    [EVF_DESCRIPTION] = "description", [EVF_PARAMETERS] = "parameters",
    [EVF_ANNOTATIONS] = "annotations", [EVF_ROWS] = "rows",
    [EVF_COLUMNS] = "columns", [EVF_SCHEMA] = "schema",
};

/* What each type means, its fields as the doc's event table shows them
 * (scripts/doc-events prints that table from here: [x] only when it
 * applies, x? a value or null; numbers are JSON numbers, flags JSON
 * booleans), and the fields its events have at their top level, in
 * transcript order after seq, t and type (every variant's, each once). */
struct ev_type_info {
	const char *meaning;
	const char *doc;
	enum ev_field fields[20];
};

static const struct ev_type_info type_info[EV__COUNT] = {
    [EV_RUN_START] = {
	.meaning = "a run begins: what it runs with",
	.doc =
	    "[forked_from {run_id, run_dir, mode \"re-execute\", [fork_at, "
	    "replace]}] (before type), version, run_id, run_dir, provider, "
	    "model, base_url (never the key), [instructions], [script], out, "
	    "sandbox {backend, image, image_id (docker's image id; \"\" when "
	    "the backend reports none), [repo_digests] (docker: the image's "
	    "RepoDigests, [] for one built locally, never pushed or pulled), "
	    "[image_reported] (opensandbox: the image as the server reports "
	    "it, by name, no digest; null when it named none), [image_id_was] "
	    "(a resume or re-execute whose image changed: the id the run had)}"
	    ", ask, workspace, inputs [{src, "
	    "dest, mode \"mount\"/\"copy\", and for a mount: path (links "
	    "resolved), kind \"file\"/\"dir\", [bytes], mtime}], outputs "
	    "[path], limits {timeout_s, max_turns, max_tokens, max_cost, "
	    "memory_mb, processes, cpu_s, file_size_mb, max_output_bytes, "
	    "max_output_tokens, network}, [project {dir, files, hash, trust "
	    "\"untrusted\"/\"once\"/\"remembered\"/\"flag\", applied [\"FILE: "
	    "KEY\"], refused or trusted [{file, key, value, why, required}]}]",
	.fields = {EVF_FORKED_FROM, EVF_VERSION, EVF_RUN_ID, EVF_RUN_DIR,
	           EVF_PROVIDER, EVF_MODEL, EVF_BASE_URL, EVF_INSTRUCTIONS,
	           EVF_SCRIPT, EVF_OUT, EVF_SANDBOX, EVF_ASK, EVF_WORKSPACE,
	           EVF_INPUTS, EVF_OUTPUTS, EVF_LIMITS, EVF_PROJECT},
    },
    [EV_RUN_RESUME] = {
	.meaning = "a recorded run is picked up again (assay resume)",
	.doc =
	    "run_id, run_dir, resumed_from {seq, status, dropped_bytes}, "
	    "provider, model, base_url, sandbox {backend, image, image_id, "
	    "[repo_digests], [image_reported], [image_id_was]} (the new "
	    "sandbox's, as in run_start), workspace, prompt",
	.fields = {EVF_RUN_ID, EVF_RUN_DIR, EVF_RESUMED_FROM, EVF_PROVIDER,
	           EVF_MODEL, EVF_BASE_URL, EVF_SANDBOX, EVF_WORKSPACE,
	           EVF_PROMPT},
    },
    [EV_USER_MESSAGE] = {
	.meaning = "the user's message to the model",
	.doc = "text",
	.fields = {EVF_TEXT},
    },
    [EV_MODEL_REQUEST] = {
	.meaning =
	    "a request to the model goes out (or is answered from the cache)",
	.doc =
	    "turn, request_hash, cached, messages, [est_tokens], [window], "
	    "[replayed: true]",
	.fields = {EVF_TURN, EVF_REQUEST_HASH, EVF_CACHED, EVF_MESSAGES,
	           EVF_EST_TOKENS, EVF_WINDOW, EVF_REPLAYED},
    },
    [EV_TEXT_DELTA] = {
	.meaning = "a piece of the model's answer as it streams",
	.doc = "turn, text",
	.fields = {EVF_TURN, EVF_TEXT},
    },
    [EV_ASSISTANT_MESSAGE] = {
	.meaning = "the model's whole answer of a turn",
	.doc =
	    "turn, text, tool_calls [{id, name, arguments, [arguments_error, "
	    "arguments_raw, cut_off, arguments_bytes]}], [finish_reason], "
	    "[recovered: true]",
	.fields = {EVF_TURN, EVF_TEXT, EVF_TOOL_CALLS, EVF_FINISH_REASON,
	           EVF_RECOVERED},
    },
    [EV_USAGE] = {
	.meaning = "the tokens and cost of a turn, and the run's totals so far",
	.doc =
	    "turn, [of \"compaction\"], input_tokens, output_tokens, "
	    "cached_tokens, [cache_write_tokens], [reasoning_tokens], cost_usd "
	    "(0 unless priced), priced (the model table has a price), known, "
	    "[replayed: true], totals {input_tokens, output_tokens, "
	    "cached_tokens, cost_usd, [unpriced_turns]}",
	.fields = {EVF_TURN, EVF_OF, EVF_INPUT_TOKENS, EVF_OUTPUT_TOKENS,
	           EVF_CACHED_TOKENS, EVF_CACHE_WRITE_TOKENS,
	           EVF_REASONING_TOKENS, EVF_COST_USD, EVF_PRICED, EVF_KNOWN,
	           EVF_REPLAYED, EVF_TOTALS},
    },
    [EV_TOOL_CALL] = {
	.meaning = "the model asks for a tool",
	.doc = "id, name, arguments",
	.fields = {EVF_ID, EVF_NAME, EVF_ARGUMENTS},
    },
    [EV_APPROVAL_REQUEST] = {
	.meaning = "a call is put to a person",
	.doc =
	    "id, tool, command, cwd, reasons [text], kinds [name], rules?, "
	    "no_always?, editable",
	.fields = {EVF_ID, EVF_TOOL, EVF_COMMAND, EVF_CWD, EVF_REASONS, EVF_KINDS,
	           EVF_RULES, EVF_NO_ALWAYS, EVF_EDITABLE},
    },
    [EV_APPROVAL] = {
	.meaning = "a call is decided: by the user, a rule or the mode",
	.doc =
	    "id, tool, decision (approved, edited, denied), by (user, rule, "
	    "mode), mode, [choice], rule?, [rules], reasons [text], kinds "
	    "[name], original, final?, feedback?, [saved {scope, [path]}], "
	    "[note]",
	.fields = {EVF_ID, EVF_TOOL, EVF_DECISION, EVF_BY, EVF_MODE, EVF_CHOICE,
	           EVF_RULE, EVF_RULES, EVF_REASONS, EVF_KINDS, EVF_ORIGINAL,
	           EVF_FINAL, EVF_FEEDBACK, EVF_SAVED, EVF_NOTE},
    },
    [EV_EXEC_START] = {
	.meaning = "a command (or a python cell) starts in the sandbox",
	.doc = "id, command",
	.fields = {EVF_ID, EVF_COMMAND},
    },
    [EV_EXEC_OUTPUT] = {
	.meaning = "output of a running command",
	.doc = "id, stream (stdout, stderr), bytes, text, [truncated: true]",
	.fields = {EVF_ID, EVF_STREAM, EVF_BYTES, EVF_TEXT, EVF_TRUNCATED},
    },
    [EV_EXEC_END] = {
	.meaning = "a command ends",
	.doc =
	    "id, exit_code, signal, timed_out, cancelled, duration_ms, "
	    "stdout_bytes, stderr_bytes, output_file, [output_file_cut_at], "
	    "[error], [python: {[value], [error: {type, message}], "
	    "[traceback]}]",
	.fields = {EVF_ID, EVF_EXIT_CODE, EVF_SIGNAL, EVF_TIMED_OUT,
	           EVF_CANCELLED, EVF_DURATION_MS, EVF_STDOUT_BYTES,
	           EVF_STDERR_BYTES, EVF_OUTPUT_FILE, EVF_OUTPUT_FILE_CUT_AT,
	           EVF_ERROR, EVF_PYTHON},
    },
    [EV_TOOL_RESULT] = {
	.meaning = "what the model is told a call gave",
	.doc = "id, content, is_error, [forked: true, original]",
	.fields = {EVF_ID, EVF_CONTENT, EVF_IS_ERROR, EVF_FORKED, EVF_ORIGINAL},
    },
    [EV_IMAGE_SENT] = {
	.meaning = "an image went to the model with a call's result "
	           "(view_image, or one the call made)",
	.doc = "id, path, how (view, auto), media_type, width, height, "
	       "src_width, src_height, bytes, sha256, file (in the run dir), "
	       "tokens, detail; or id, path, how, error (not sent)",
	.fields = {EVF_ID, EVF_PATH, EVF_HOW, EVF_MEDIA_TYPE, EVF_WIDTH,
	           EVF_HEIGHT, EVF_SRC_WIDTH, EVF_SRC_HEIGHT, EVF_BYTES,
	           EVF_SHA256, EVF_FILE, EVF_TOKENS, EVF_DETAIL, EVF_ERROR},
    },
    [EV_MCP_TOOLS] = {
	.meaning = "the MCP servers of the run started, and the tools "
	           "offered from them",
	.doc = "servers: [{name, transport, status (ready, failed), [why], "
	       "[protocol], [server]}], tools: [{name (as offered: "
	       "SERVER__TOOL), server, tool, [description], parameters, "
	       "[annotations]}]",
	.fields = {EVF_SERVERS, EVF_TOOLS},
    },
    [EV_MCP_CALL] = {
	.meaning = "a call of an MCP server's tool ended (its tool_result "
	           "follows)",
	.doc = "id, server, tool, duration_ms, is_error, [error], [file], "
	       "[rows, columns], [bytes]",
	.fields = {EVF_ID, EVF_SERVER, EVF_TOOL, EVF_DURATION_MS,
	           EVF_IS_ERROR, EVF_ERROR, EVF_FILE, EVF_ROWS, EVF_COLUMNS,
	           EVF_BYTES},
    },
    [EV_MCP_ELICIT] = {
	.meaning = "an MCP server asked the person something (elicitation) "
	           "and was answered, or declined when nobody could answer",
	.doc = "id, server, [call], message, schema, action (accept, "
	       "decline, cancel), [content], by (person; nobody: no one to ask; "
	       "assay: a form too big to put to a person)",
	.fields = {EVF_ID, EVF_SERVER, EVF_CALL, EVF_MESSAGE, EVF_SCHEMA,
	           EVF_ACTION, EVF_CONTENT, EVF_BY},
    },
    [EV_WORKSPACE_CHANGE] = {
	.meaning = "a file of the workspace was created, modified or deleted",
	.doc =
	    "path, kind (created, modified, deleted), size, [mtime], [call], "
	    "[diff: {added, removed, hunks, [cut]} or {skipped}]",
	.fields = {EVF_PATH, EVF_KIND, EVF_SIZE, EVF_MTIME, EVF_CALL, EVF_DIFF},
    },
    [EV_PYTHON_SESSION] = {
	.meaning = "the python session started or ended",
	.doc =
	    "state (started, ended), generation, [python, executable, "
	    "packages, startup_ms], [reason]",
	.fields = {EVF_STATE, EVF_GENERATION, EVF_PYTHON, EVF_EXECUTABLE,
	           EVF_PACKAGES, EVF_STARTUP_MS, EVF_REASON},
    },
    [EV_INPUT_HASHES] = {
	.meaning =
	    "after run_start once the helper has read them: the inputs' hashes "
	    "(a directory's sha256 is that of its manifest, without what the "
	    "sandbox does not see of it)",
	.doc =
	    "inputs [{dest, kind \"file\"/\"dir\", bytes, [files], mtime, "
	    "sha256, cached}]",
	.fields = {EVF_INPUTS},
    },
    [EV_PROGRESS] = {
	.meaning =
	    "shown to the frontends while slow work goes on (done == total: "
	    "over; done -1: it failed), never recorded (no seq, not in the "
	    "transcript nor in --json)",
	.doc =
	    "what (\"hashing\", \"saving\", \"staging\", \"restoring\", "
	    "\"delivering\", \"mcp\"), subject (an input's dest, \"the "
	    "workspace\", \"the inputs\", an output's path; mcp: the tool "
	    "call's id), done, total (0: not known yet), elapsed_ms, "
	    "[message] (mcp: the server's words)",
	.fields = {EVF_WHAT, EVF_SUBJECT, EVF_DONE, EVF_TOTAL, EVF_ELAPSED_MS,
	           EVF_MESSAGE},
    },
    [EV_REPLAY_LIVE] = {
	.meaning =
	    "a resumed run's request differs from the record: from here on the "
	    "model is asked live",
	.doc = "turn, reason, [recorded_hash], [request_hash], cached_turns",
	.fields = {EVF_TURN, EVF_REASON, EVF_RECORDED_HASH, EVF_REQUEST_HASH,
	           EVF_CACHED_TURNS},
    },
    [EV_STEP_PAUSE] = {
	.meaning = "step mode waits before a request or a call",
	.doc =
	    "kind \"request\", turn, messages, est_input_tokens, tools [name]; "
	    "or kind \"exec\", turn, id, tool, command",
	.fields = {EVF_KIND, EVF_TURN, EVF_MESSAGES, EVF_EST_INPUT_TOKENS,
	           EVF_TOOLS, EVF_ID, EVF_TOOL, EVF_COMMAND},
    },
    [EV_STEP_RESUME] = {
	.meaning = "step mode goes on: what the user chose",
	.doc =
	    "action (continue, edit, skip, end), kind (exec, request), [id], "
	    "[original], [final]",
	.fields = {EVF_ACTION, EVF_KIND, EVF_ID, EVF_ORIGINAL, EVF_FINAL},
    },
    [EV_BUDGET_REACHED] = {
	.meaning = "a limit of cost, tokens or turns is reached",
	.doc =
	    "kind (cost, tokens, turns), spent, limit, why (an interactive run "
	    "then waits: idle \"budget\")",
	.fields = {EVF_KIND, EVF_SPENT, EVF_LIMIT, EVF_WHY},
    },
    [EV_BUDGET_DECISION] = {
	.meaning = "the user raised the limit or stopped",
	.doc = "kind, decision (raise, stop), limit (the new one)",
	.fields = {EVF_KIND, EVF_DECISION, EVF_LIMIT},
    },
    [EV_CONTEXT_TRIM] = {
	.meaning = "old tool results became stubs to fit the context window",
	.doc =
	    "turn, ids [call id], at [message index], stubs [text], bytes, "
	    "est_before, est_after, window",
	.fields = {EVF_TURN, EVF_IDS, EVF_AT, EVF_STUBS, EVF_BYTES,
	           EVF_EST_BEFORE, EVF_EST_AFTER, EVF_WINDOW},
    },
    [EV_COMPACTION] = {
	.meaning = "the history is summarised to fit the context window",
	.doc =
	    "state \"started\": reason (threshold, context_length_exceeded, "
	    "user), turn, est_tokens, window, messages, keep_from, [left_out]; "
	    "state \"done\": reason, turn, request_hash, cached, replaced, "
	    "kept, est_before, est_after, window, summary; state \"failed\": "
	    "reason, turn, message",
	.fields = {EVF_STATE, EVF_REASON, EVF_TURN, EVF_REQUEST_HASH, EVF_CACHED,
	           EVF_REPLACED, EVF_KEPT, EVF_EST_TOKENS, EVF_EST_BEFORE,
	           EVF_EST_AFTER, EVF_WINDOW, EVF_MESSAGES, EVF_KEEP_FROM,
	           EVF_LEFT_OUT, EVF_SUMMARY, EVF_MESSAGE},
    },
    [EV_IDLE] = {
	.meaning = "the session waits for the user",
	.doc = "reason (ready, answered, failed, cancelled, budget)",
	.fields = {EVF_REASON},
    },
    [EV_ERROR] = {
	.meaning =
	    "something failed (a request being retried says when it is tried "
	    "again)",
	.doc =
	    "category, message, [retry_in_ms]; a request being retried: "
	    "category, message, retry_in_ms, attempt, discarded_bytes, turn",
	.fields = {EVF_CATEGORY, EVF_MESSAGE, EVF_RETRY_IN_MS, EVF_ATTEMPT,
	           EVF_DISCARDED_BYTES, EVF_TURN},
    },
    [EV_RUN_END] = {
	.meaning = "the run is over: how, what it produced, what it cost",
	.doc =
	    "status (completed, failed, budget_exhausted, interrupted), "
	    "exit_code, outputs [{path, present, bytes, copied_to or error}], "
	    "totals {turns, input_tokens, output_tokens, cost_usd, "
	    "[unpriced_turns], duration_ms}, archive?",
	.fields = {EVF_STATUS, EVF_EXIT_CODE, EVF_OUTPUTS, EVF_TOTALS,
	           EVF_ARCHIVE},
    },
};
/* clang-format on */

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
	const cJSON *t = ev_item(ev, EVF_TYPE);
	return event_type_parse(cJSON_IsString(t) ? t->valuestring : NULL);
}

/* --- fields and typed readers -------------------------------------- */

const char *ev_field_name(enum ev_field f)
{
	if ((int)f <= EVF_NONE || f >= EVF__COUNT)
		return "";
	return field_names[f];
}

const enum ev_field *ev_type_fields(enum event_type t)
{
	if ((int)t < 0 || t >= EV__COUNT)
		t = EV_UNKNOWN;
	return type_info[t].fields;
}

const char *ev_type_meaning(enum event_type t)
{
	if ((int)t <= 0 || t >= EV__COUNT)
		return "";
	return type_info[t].meaning;
}

const char *ev_type_doc(enum event_type t)
{
	if ((int)t <= 0 || t >= EV__COUNT)
		return "";
	return type_info[t].doc;
}

cJSON *ev_item(const cJSON *obj, enum ev_field f)
{
	if ((int)f <= EVF_NONE || f >= EVF__COUNT)
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(obj, field_names[f]);
}

const char *ev_str(const cJSON *obj, enum ev_field f, const char *def)
{
	const cJSON *v = ev_item(obj, f);
	return cJSON_IsString(v) ? v->valuestring : def;
}

double ev_num(const cJSON *obj, enum ev_field f, double def)
{
	const cJSON *v = ev_item(obj, f);
	return cJSON_IsNumber(v) ? v->valuedouble : def;
}

long ev_long(const cJSON *obj, enum ev_field f, long def)
{
	const cJSON *v = ev_item(obj, f);
	return cJSON_IsNumber(v) ? json_num_long(v->valuedouble, def) : def;
}

int ev_int(const cJSON *obj, enum ev_field f, int def)
{
	long v = ev_long(obj, f, def);
	return v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : (int)v;
}

int ev_bool(const cJSON *obj, enum ev_field f, int def)
{
	const cJSON *v = ev_item(obj, f);
	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : def;
}

int ev_image_file_ok(const char *file)
{
	if (!file || strncmp(file, "images/", 7))
		return 0;
	const char *h = file + 7;
	for (int i = 0; i < 64; i++)
		if (!((h[i] >= '0' && h[i] <= '9') ||
		      (h[i] >= 'a' && h[i] <= 'f')))
			return 0;
	if (h[64] != '.') /* the name may end here: read no further */
		return 0;
	size_t n = strspn(h + 65, "abcdefghijklmnopqrstuvwxyz0123456789");
	return n >= 1 && n <= 5 && !h[65 + n];
}

/* --- what a recorded sandbox says of its image --------------------- */

/* The repo digests a sandbox records, "a, b", or what their absence
 * means. */
static void ev_image_digests(struct buf *b, const cJSON *sb)
{
	const cJSON *d = ev_item(sb, EVF_REPO_DIGESTS), *e;
	if (!cJSON_IsArray(d)) {
		buf_puts(b, "; repo digests not recorded");
		return;
	}
	int n = 0;
	cJSON_ArrayForEach(e, d)
	{
		if (cJSON_IsString(e))
			buf_printf(b, "%s%s", n++ ? ", " : "; repo digests: ",
			           e->valuestring);
	}
	if (!n)
		buf_puts(b, "; repo digests: none (built locally: never pushed "
		            "to or pulled from a registry)");
}

char *ev_image_text(const cJSON *sb)
{
	const char *id = ev_str(sb, EVF_IMAGE_ID, "");
	const cJSON *rep = ev_item(sb, EVF_IMAGE_REPORTED);
	struct buf b;
	buf_init(&b, 0);
	if (*id) {
		buf_puts(&b, id);
		ev_image_digests(&b, sb);
	} else if (cJSON_IsString(rep)) {
		buf_printf(&b,
		           "not reported: the server names the image only "
		           "(\"%s\"), no digest",
		           rep->valuestring);
	} else if (cJSON_IsNull(rep)) {
		buf_puts(&b, "not reported: the server named no image");
	}
	const char *was = ev_str(sb, EVF_IMAGE_ID_WAS, NULL);
	if (b.len && was)
		buf_printf(&b, " (changed: the run had %s)", was);
	return b.len ? buf_detach(&b) : (buf_free(&b), NULL);
}

char *ev_image_change_text(const cJSON *sb)
{
	const char *was = ev_str(sb, EVF_IMAGE_ID_WAS, NULL);
	if (!was)
		return NULL;
	return xasprintf("the image changed since the run was recorded: it "
	                 "ran on %s, this sandbox runs %s (%s)",
	                 was, ev_str(sb, EVF_IMAGE_ID, "?"),
	                 ev_str(sb, EVF_IMAGE, "?"));
}
