/* agent_internal.h: what the session's files share: the session
 * struct, the event helpers and the tool runners. Not a public API. */
#ifndef ASSAY_AGENT_INTERNAL_H
#define ASSAY_AGENT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#include "assay/session.h"
#include "assay/buf.h"

struct loop;
struct http;
struct llm;
struct sbx;
struct sbx_exec;

struct observer {
	session_event_fn fn;
	void *arg;
};

struct tool_run; /* one tool call in flight (tools.c) */

struct session {
	struct loop *loop;
	struct config *cfg;
	struct http *http;
	struct llm *llm;
	struct sbx *sbx;
	enum session_state state;
	int exit_code;
	int interrupted;
	char *run_id;
	char *run_dir;
	char *system_prompt;
	FILE *transcript;
	int64_t t0;
	uint64_t seq;
	struct observer *obs;
	size_t nobs;

	cJSON *messages; /* neutral conversation */
	cJSON *tools;    /* neutral tool definitions */
	int turn;
	char *request_hash;
	struct buf turn_text; /* text streamed this turn */
	struct buf delta;     /* text not yet emitted as text_delta */
	uint64_t delta_timer;

	cJSON *pending; /* tool calls of the current turn */
	int next_call;
	struct tool_run *running;
	cJSON *snapshot; /* workspace {path: [size, mtime]} */

	long in_tokens, out_tokens, cached_tokens;
	double cost;
};

/* Emit an event: fills seq and t, writes the transcript, tells every
 * observer; takes ownership of ev. */
void session_emit(struct session *s, cJSON *ev);
/* A new event object with its type set. */
cJSON *event_new(const char *type);

/* Neutral tool definitions offered to the model. */
cJSON *tools_definitions(void);
/* Run one tool call ({"id","name","arguments"}); calls
 * tools_finished(s, id, content, is_error) when done (possibly before
 * returning). */
void tools_run(struct session *s, const cJSON *call);
void tools_cancel(struct session *s);
void tools_finished(struct session *s, const char *id, const char *content,
                    int is_error);

/* The default system prompt with the workspace layout filled in. */
char *prompt_system(const struct config *cfg, char **err);

#endif
