/* llm_internal.h: what the providers share and the unit tests reach:
 * finishing a turn (llm.c), the retry policy (retry.c), the stream
 * assembler every dialect fills (chat_stream.c) and the wire table of
 * each dialect (chat.c, responses.c, anthropic.c) that the one
 * transport (transport.c) drives. Not a public header. */
#ifndef ASSAY_LLM_INTERNAL_H
#define ASSAY_LLM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "assay/buf.h"
#include "assay/llm.h"
#include "assay/sse.h"

/* A provider: its ops and the state every provider shares. */
struct llm_ops {
	const char *name;
	int (*init)(struct llm *m, char **err);
	/* Begin a turn; results arrive through the observer. */
	int (*start)(struct llm *m, const struct llm_request *req, char **err);
	/* Abandon the turn in flight; no more callbacks for it. */
	void (*cancel)(struct llm *m);
	void (*destroy)(struct llm *m);
	/* its answers cost nothing whatever the model is called (the
	 * scripted model): the run's price is $0 */
	int free_of_charge;
};

struct llm {
	const struct llm_ops *ops;
	struct loop *loop;
	struct http *http;
	const struct config *cfg;
	struct llm_observer obs;
	char *provider; /* name as configured */
	char *model;    /* resolved model name */
	char *base_url; /* resolved, for run_start (never a key) */
	char *no_key;   /* set by init when the key is missing (key_later) */
	uint64_t no_key_timer;
	void *priv;
};

extern const struct llm_ops transport_ops;
extern const struct llm_ops llm_script_ops;

#define LLM_MAX_TRIES 5
#define LLM_MAX_ERROR_BODY (64 * 1024)
#define LLM_MAX_EVENT (4 * 1024 * 1024) /* one SSE line or event */
#define LLM_MAX_TEXT (8 * 1024 * 1024)  /* answer text of one turn */
#define LLM_MAX_ARGS (4 * 1024 * 1024)  /* all tool calls' arguments */
#define LLM_MAX_TOOL_CALLS 128
#define LLM_MAX_BLOCKS 1024             /* content blocks / output items */
#define LLM_MAX_KEPT (16 * 1024 * 1024) /* bytes of them kept verbatim */

/* --- llm.c: finishing a turn --- */

/* A zeroed result with text "" and an empty tool_calls array. */
struct llm_result *llm_result_new(void);
/* Hand res to the observer. m may be freed by the observer: touch
 * nothing of it afterwards. */
void llm_deliver(struct llm *m, struct llm_result *res);
/* Deliver a final failure; takes ownership of message. */
void llm_deliver_error(struct llm *m, const char *category, char *message,
                       int attempts);
/* Which turn a request is: the number of assistant messages in it. */
int llm_turn_index(const cJSON *messages);

/* --- retry.c: the retry policy of the official SDKs (protocols A.5) ---
 * Usable by every provider. */

/* Whether a failed try deserves another. status is the HTTP status, or
 * 0 for a connection failure, a cut stream or an error event inside a
 * 200 stream; body is the error JSON if any; should_retry the value of
 * x-should-retry if present ("true" forces, "false" forbids). Never
 * retried: 400, 401, 403, 404 and other 4xx but 408/409/429, a body
 * whose code is insufficient_quota, flat vLLM bodies with a 4xx code. */
int llm_retry_should(long status, const char *body, const char *should_retry);
/* Milliseconds before retry number retries+1 (retries = retries made
 * so far). retry-after-ms, then retry-after (seconds, float, or an
 * HTTP date compared with now_wall_ms) are honoured when they say 0 to
 * 120 s; else 500 ms x 2^retries capped at 8 s, shortened by up to 25%
 * with jitter in [0, 1). */
long llm_retry_delay(int retries, const char *retry_after_ms,
                     const char *retry_after, int64_t now_wall_ms,
                     double jitter);
/* A jitter value in [0, 1). */
double llm_retry_jitter(void);
/* The LLM_ERR_* category of an HTTP status. */
const char *llm_status_category(long status);
/* Whether an error (HTTP status, 0 for one inside a stream; its body)
 * says the prompt is longer than the model's context window, in any
 * dialect: OpenAI's and the Responses API's code
 * context_length_exceeded, vLLM's "maximum context length", llama.cpp's
 * exceed_context_size_error, Anthropic's "prompt is too long". */
int llm_context_exceeded(long status, const char *body);
/* The human message inside an error body (error.message, flat
 * message, detail, or the sanitized start of the body). Never NULL. */
char *llm_error_body_message(const char *body);
/* Parse an HTTP date (IMF-fixdate); seconds since the epoch or -1. */
int64_t llm_parse_http_date(const char *s);

/* An HTTP error to describe to the user: cause and fix in one line. */
struct llm_http_fail {
	const char *provider; /* "openai" */
	long status;
	const char *url;
	const char *body;       /* may be NULL */
	const char *request_id; /* may be NULL */
	const char *key_env;    /* variable that holds the key */
	int key_set;
	const char *model;
};
char *llm_http_error_message(const struct llm_http_fail *f);

/* --- chat_stream.c: Chat Completions stream assembler (A.2, A.3, A.6)
 * Fed the raw body of a 200 answer in any chunking; rebuilds text,
 * tool calls, finish reason and usage, tolerating the quirks of
 * Ollama, vLLM and llama.cpp. */

struct chat_slot {
	int index; /* tool_calls[].index, -1 when absent */
	char *id;
	char *item_id; /* Responses API: the fc_ item the deltas name */
	char *name;
	struct buf args;
	int have_args; /* an arguments field was seen */
	int foreign;   /* Chat: a tool call of a type other than function */
	/* A running scan of args, so that telling whether the call is
	 * whole costs nothing per fragment: JSON nesting depth outside
	 * strings, and whether a top-level value has closed. */
	int depth, in_str, esc, closed;
};

/* A content block (Anthropic) or output item (Responses) kept as it
 * came, so that it can go back unchanged: the deltas of its fields
 * gather in acc and are merged when the field changes or it stops. */
struct chat_block {
	cJSON *json;
	int index; /* Anthropic: the content index */
	char *id;  /* Responses: the item id */
	struct buf acc;
	char *acc_field;
	int stopped;
};

struct chat_stream {
	struct sse sse;
	struct buf text;        /* the answer, at most LLM_MAX_TEXT */
	size_t reasoning_bytes; /* reasoning text seen (not answer) */
	struct chat_slot *slots;
	size_t n_slots;
	size_t args_total;   /* bytes of arguments, all slots */
	char *finish_reason; /* last non-null finish_reason */
	struct llm_usage usage;
	int saw_done;      /* data: [DONE] */
	int chunks;        /* JSON chunks handled */
	int turn;          /* for made-up ids: call_<turn>_<i> */
	char *error;       /* what went wrong, when feed/finish failed */
	char *error_body;  /* the error JSON of an error event, if any */
	int error_final;   /* retrying cannot help (a bound was passed) */
	int error_context; /* the error says the prompt is too long */
	cJSON *items;      /* Responses: reasoning items to send back */
	char *response_id; /* Responses API: the answer's resp_ id */
	/* Anthropic and Responses: every block / item, in order */
	struct chat_block *blocks;
	size_t n_blocks;
	size_t kept_bytes; /* their bytes, at most LLM_MAX_KEPT */
	size_t ev_len;     /* bytes of the event being read */
	int unknown;       /* one is of a type this build does not know */
	cJSON *noted;      /* what was seen and not understood, once each */
	void (*on_text)(void *arg, const char *text, size_t n);
	void *arg;
};

void chat_stream_init(struct chat_stream *s, int turn,
                      void (*on_text)(void *arg, const char *text, size_t n),
                      void *arg);
void chat_stream_free(struct chat_stream *s);
/* -1 when the stream reported an error or passed a bound: s->error. */
int chat_stream_feed(struct chat_stream *s, const char *data, size_t n);
/* End of the body. -1 (s->error) on an error, or a cut stream: no
 * finish_reason and no [DONE]. */
int chat_stream_finish(struct chat_stream *s);
/* The rebuilt calls as a neutral array: {"id","name","arguments"};
 * arguments that are not a JSON object become {} with
 * "arguments_error" (why) and "arguments_raw" (what came). */
cJSON *chat_stream_tool_calls(const struct chat_stream *s);
/* For the other stream readers that fill a chat_stream: the first
 * error wins (msg taken); text appended and observed (-1 past the
 * bound). */
void chat_stream_error(struct chat_stream *s, int final, const char *body,
                       char *msg);
int chat_stream_text(struct chat_stream *s, const char *t);
/* A new call slot (NULL + s->error past LLM_MAX_TOOL_CALLS). */
struct chat_slot *chat_stream_new_slot(struct chat_stream *s, int index);
/* An event's JSON, strictly parsed and counted; NULL + s->error. */
cJSON *chat_stream_event_json(struct chat_stream *s,
                              const struct sse_event *ev);
/* The kept items as {"provider", "items"} (taken), or NULL if none. */
cJSON *chat_stream_take_items(struct chat_stream *s, const char *provider);
/* Note once that something of this kind was not understood ("content
 * block server_tool_use"); the transport logs each once (transport.c). */
void chat_stream_note(struct chat_stream *s, const char *what,
                      const char *type);
/* Count n more bytes kept verbatim; -1 + s->error past the bounds. */
int chat_stream_kept(struct chat_stream *s, size_t n);
/* Keep json (taken) as a new block, counting the event's bytes; NULL
 * + s->error past LLM_MAX_BLOCKS or LLM_MAX_KEPT. */
struct chat_block *chat_stream_new_block(struct chat_stream *s, cJSON *json);
/* Append to a block's field (a string, or "input": JSON text) and
 * merge what gathered; -1 + s->error past LLM_MAX_KEPT. */
int chat_block_append(struct chat_stream *s, struct chat_block *b,
                      const char *field, const char *text);
void chat_block_merge(struct chat_block *b);
/* A server-side tool's use, shown to the person in the answer text:
 * "[server tool NAME: INPUT]" on a line of its own. */
int chat_stream_server_note(struct chat_stream *s, const char *name,
                            const cJSON *input);
/* The provider_items of an answer whose items go back in order, all
 * of them (text and calls included): {"provider", "items", "ordered"}. */
cJSON *chat_stream_ordered(const char *provider, cJSON *items);

/* --- the dialects: one wire table each ------------------------------
 * The transport (transport.c) speaks HTTP, reads SSE, retries and
 * reports errors the same way for every provider; what differs between
 * the wire formats is all in a struct llm_wire, one per dialect file:
 * chat.c (Chat Completions), responses.c (the Responses API),
 * anthropic.c (the Messages API). Nothing outside these tables asks
 * which dialect is in use. */

/* What a dialect's request body is built from, resolved by the
 * transport: facts about the server and the run, not dialect flags. */
struct llm_wire_args {
	const char *model;     /* the request's, else the provider's */
	int max_output_tokens; /* the request's, else the config's; 0 none */
	int store;             /* responses_store (read by the Responses API) */
	int official;          /* the base URL is api.openai.com */
	int max_tokens_only;   /* the server reads max_tokens only (Ollama) */
};

struct llm_wire {
	const char *name; /* the dialect, for the log */
	/* the endpoint, after the base URL and a "/" */
	const char *path;
	/* the header that carries the key: this, then the key */
	const char *auth_prefix;
	/* one more header every request carries, or NULL */
	const char *version_header;
	/* the response header naming the request in error messages */
	const char *request_id_header;
	/* The request body of one turn (JSON text, caller frees). */
	char *(*body)(const struct llm_wire_args *a,
	              const struct llm_request *req);
	/* The neutral conversation's parts, each encoded in one place
	 * (llm_wire_messages walks the history through them): a user's
	 * message, a tool's result, the assistant's answer. Each appends
	 * what it makes to out (a wire message, an item, or a block of the
	 * message being gathered); msg is the neutral message (llm.h). */
	void (*user)(cJSON *out, const cJSON *msg);
	void (*tool_result)(cJSON *out, const cJSON *msg);
	void (*assistant)(cJSON *out, const cJSON *msg);
	/* After a run of n tool results (the first is first, the others
	 * its siblings): what they carry that a tool message cannot (Chat:
	 * their images, in a user message); NULL: nothing. */
	void (*tools_end)(cJSON *out, const cJSON *first, int n);
	/* Start reading one answer's stream into s (the chat_stream every
	 * dialect fills: text, calls by slot, finish reason, usage,
	 * in-stream errors). */
	void (*stream_init)(struct chat_stream *s, int turn,
	                    void (*on_text)(void *arg, const char *text,
	                                    size_t n),
	                    void *arg);
	/* The answer's provider items (llm_result.items), or NULL; NULL
	 * for a dialect that keeps no provider state with an answer. */
	cJSON *(*items)(struct chat_stream *s, const struct llm_wire_args *a);
};

extern const struct llm_wire chat_wire;
extern const struct llm_wire resp_wire;
extern const struct llm_wire anth_wire;

/* Append the wire form of the neutral messages from the first'th on to
 * out, each part through w's encoder for it (wire.c). */
void llm_wire_messages(const struct llm_wire *w, cJSON *out,
                       const cJSON *messages, int first);

/* --- chat.c: the Chat Completions wire (protocols.md A) --------------- */

/* A call id within what OpenAI's APIs take (a longer one hashed);
 * Chat Completions and the Responses API share the rule. */
void chat_add_id(cJSON *obj, const char *key, const char *id);
/* The request body: the system prompt as the first message, nested
 * function tools; max_completion_tokens for api.openai.com and
 * OpenAI's reasoning models, max_tokens elsewhere. */
char *chat_body(const struct llm_wire_args *a, const struct llm_request *req);

/* --- responses.c: the Responses API (protocols.md B) ----------------- */

/* The request body: instructions, the neutral history as input items
 * (reasoning items kept from earlier answers first), flat tools,
 * store false with encrypted reasoning included. */
char *resp_body(const struct llm_wire_args *a, const struct llm_request *req);
/* A chat_stream that reads the Responses event stream (B.2). */
void resp_stream_init(struct chat_stream *s, int turn,
                      void (*on_text)(void *arg, const char *text, size_t n),
                      void *arg);
/* The answer's reasoning items (and, stored, its response id) as an
 * llm_result's items, or NULL; when it holds items of types this build
 * does not know (server tools), all its output items in order, calls
 * as {"type":"function_call","call_id"}. */
cJSON *resp_stream_items(struct chat_stream *s, const struct llm_wire_args *a);

/* --- anthropic.c: the Messages API (protocols.md C) ------------------ */

/* The request body: system, tools and the last message marked as
 * cache breakpoints; tool results first in the next user message. */
char *anth_body(const struct llm_wire_args *a, const struct llm_request *req);
void anth_stream_init(struct chat_stream *s, int turn,
                      void (*on_text)(void *arg, const char *text, size_t n),
                      void *arg);
/* The answer's thinking blocks as an llm_result's items, or NULL; when
 * it holds blocks of types this build does not know (server tools),
 * all its blocks in order, calls as {"type":"tool_use","id"}. */
cJSON *anth_stream_items(struct chat_stream *s, const struct llm_wire_args *a);

/* --- transport.c: the providers it serves ---------------------------- */

/* Whether the transport serves provider, and its model when none is
 * given (NULL: it must be given). */
int transport_provider(const char *provider, const char **model);
/* Their names in the table's order: "openai, openai-responses, ...". */
char *transport_names(void);

/* wire.c: a tool result's images (the neutral message's "images":
 * [{path, media_type, width, height, tokens, detail, sha256, data}]). */
/* "data:MEDIA;base64,DATA" (caller frees). */
char *llm_image_data_url(const cJSON *img);
/* What the model is told an image is: "[image PATH, WxH]" (caller
 * frees). */
char *llm_image_caption(const cJSON *img);

#endif
