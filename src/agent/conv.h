/* conv.h: the conversation part of a session: the messages and tools
 * the requests carry, the turn and its streamed text (turn.c), the
 * history against the context window (context.c) and the message
 * builders (messages.c). struct conv is written by turn.c alone,
 * struct context by context.c alone; the rest of the agent calls the
 * functions below (messages_add_* append to the array in hand). */
#ifndef ASSAY_AGENT_CONV_H
#define ASSAY_AGENT_CONV_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "assay/buf.h"

struct session;
struct llm_request;
struct llm_result;

/* The conversation and the turn (turn.c). */
/* part: conv, owner: src/agent/turn.c */
struct conv {
	cJSON *messages; /* neutral conversation */
	cJSON *tools;    /* neutral tool definitions */
	int turn;
	char *request_hash;
	struct buf turn_text; /* text streamed this turn */
	struct buf delta;     /* text not yet emitted as text_delta */
	uint64_t delta_timer;
	struct llm_result *cached; /* a recorded answer on its way */
	uint64_t cached_timer;
};

/* The conversation against the context window (context.c). */
/* part: ctx, owner: src/agent/context.c */
struct context {
	long window;         /* tokens; 0 unknown: only a refusal compacts */
	long last_in;        /* the last measured request's input tokens */
	size_t last_bytes;   /* its canonical size */
	size_t sent_bytes;   /* the request in flight's */
	long est;            /* its estimate */
	int compacting;      /* REQUESTING the summary */
	int retry;           /* then the refused turn is asked again */
	int recovered;       /* the turn in flight compacted after a refusal */
	int no_compact;      /* a compaction failed: not again this turn */
	int user;            /* /compact: 1 + the idle reason it returns to */
	int followed;        /* a re-execute redid the record's compaction
	                        before this turn (1 + turn) */
	char *reason;        /* threshold, context_length_exceeded, user */
	char *hash;          /* the summary request's */
	size_t sum_bytes;    /* its canonical size */
	cJSON *sum_messages; /* its history */
	long est_before;
	int keep_from; /* the first message kept */
	cJSON *files;  /* call id -> its exec/ output file's name */
};

/* turn.c: the request the next turn would make (s->conv.messages, the
 * system prompt, the tools), as the provider gets it. */
void session_llm_request(const struct session *s, struct llm_request *req);
/* Emit the text streamed since the last text_delta. */
void session_flush_delta(struct session *s);
/* The provider's observer: streamed text (a text_delta every 30 ms),
 * and a try given up for another (what it streamed is void). */
void session_on_llm_text(void *arg, const char *text, size_t n);
void session_on_llm_retry(void *arg, int attempt, long delay_ms,
                          const char *category, const char *message,
                          size_t discarded);
/* The empty conversation with the tools offered; conv_free frees it. */
struct config;
void conv_init(struct conv *c, const struct config *cfg);
void conv_free(struct conv *c);
/* The conversation is now messages (taken; a resume rebuilt it). */
/* More tool definitions offered from now on (copied): the MCP servers'
 * (mcptool.c). */
void conv_add_tools(struct session *s, const cJSON *defs);
void conv_set_messages(struct session *s, cJSON *messages);
/* The turn number from now on. */
void conv_set_turn(struct session *s, int turn);
/* The request of the turn in flight hashed to hash (cache/<hash>). */
void conv_set_hash(struct session *s, const char *hash);
/* A recorded answer (taken) delivered from the loop: fn(s) takes it
 * back with conv_take_cached. */
void conv_cache_answer(struct session *s, struct llm_result *r,
                       void (*fn)(void *arg));
struct llm_result *conv_take_cached(struct session *s);
/* A recorded answer on its way is dropped (its turn was given up). */
void conv_drop_cached(struct session *s);
/* The stream is over: the text not yet emitted goes out, and a split
 * character left over is dropped. */
void conv_end_stream(struct session *s);
/* The turn's streamed text is forgotten. */
void conv_reset_turn_text(struct session *s);

/* context.c: the conversation against the model's context window. */
/* The window from the configuration or the model table (after
 * budget_prices). */
void context_setup(struct session *s);
void context_free(struct context *c);
/* The tokens a request of bytes (canonical) is estimated at. */
long context_estimate(const struct context *c, size_t bytes);
/* Before a turn's request: trims s->conv.messages (a context_trim event)
 * when it passes trim_at; 1 when it passes compact_at too and a
 * compaction was prepared (context_compact): the session requests the
 * summary (s->ctx.sum_messages, hash) instead of the turn. */
int context_before_request(struct session *s);
/* Prepare a compaction (compaction started): the summary request's
 * history and hash; keep_turns recent turns stay whole. -1 + *err
 * when there is nothing older to replace. */
int context_compact(struct session *s, const char *reason, int keep_turns,
                    char **err);
/* Its answer arrived: the measured size. */
void context_answered(struct session *s, const struct llm_result *r);
/* A failed turn: 1 when the provider refused the prompt as too long and
 * a compaction was prepared to retry it (s->ctx.retry). */
int context_refused(struct session *s, const struct llm_result *r);
/* The summary arrived (from the provider, or cached): 0 when the
 * history is now the summary and the kept turns (compaction done and
 * its usage emitted); -1 when it failed (compaction failed emitted).
 * r stays the caller's. */
int context_summarized(struct session *s, struct llm_result *r, int cached);
/* A compaction under way is given up (cancelled, the run ends). */
void context_abandon(struct session *s, const char *why);
/* A call's full stdout is in exec/<file> (path): its stub names it. */
void context_output_file(struct session *s, const char *id, const char *path);
/* What a recorded context_trim or compaction (done) did to the
 * history, done again to *messages (resume rebuilds the same
 * requests); other events change nothing. */
void context_apply(cJSON **messages, const cJSON *ev);
/* The user message that heads the history after a compaction. Caller
 * frees. */
char *context_summary_message(const char *summary, int replaced);

/* /compact from the user: 1 + the idle reason the summary returns to. */
void context_set_user(struct session *s, int user);
/* The summary is in: what waited for it (user: 1 + the idle reason;
 * retry: the refused turn is asked again); both cleared. */
void context_take_wait(struct session *s, int *user, int *retry);
/* The window a recorded trim or compaction had (resume). */
void context_set_window(struct session *s, long window);

/* messages.c: the neutral conversation the requests carry. */
void messages_add_user(cJSON *messages, const char *text);
void messages_add_assistant(cJSON *messages, const char *text,
                            const cJSON *tool_calls, const cJSON *items);
void messages_add_tool(cJSON *messages, const char *id, const char *name,
                       const char *content, int is_error);
/* An image (a neutral part, taken) with the result of call id: the last
 * tool message of that call; dropped when there is none. */
void messages_add_image(cJSON *messages, const char *id, cJSON *part);
/* The call whose result carries the image of this sha256 (not elided),
 * or NULL. */
const char *messages_image_call(const cJSON *messages, const char *sha256);
/* The tokens of every image the messages carry. */
long messages_image_tokens(const cJSON *messages);
/* The base64 characters of those images (what a printed request holds
 * beyond its text). */
size_t messages_image_bytes(const cJSON *messages);

#endif
