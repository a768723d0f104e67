/* llm.h: the model provider interface. The session keeps the
 * conversation in one neutral form; each provider turns it into its
 * wire format, streams the answer back through the observer, and
 * retries what can be retried.
 *
 * Neutral messages (a cJSON array):
 *   {"role":"user","content":"..."}
 *   {"role":"assistant","content":"...",
 *    "tool_calls":[{"id":"..","name":"..","arguments":{...}}],
 *    "provider_items":{"provider":"..","items":[...]}}  (optional: what
 *    that provider wants back unchanged; others ignore it)
 *   {"role":"tool","tool_call_id":"..","name":"..","content":"..",
 *    "is_error":false}
 * Neutral tools: [{"name":..,"description":..,"parameters":{schema}}]
 */
#ifndef ASSAY_LLM_H
#define ASSAY_LLM_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "buf.h"

struct loop;
struct http;
struct config;
struct llm; /* opaque: src/llm/llm_internal.h */

struct llm_request {
	const char *model;
	const char *system;
	const cJSON *messages;
	const cJSON *tools;
	int max_output_tokens;
};

/* The openai provider's model when none is given. */
#define LLM_OPENAI_DEFAULT_MODEL "gpt-4.1"
/* The anthropic provider's. */
#define LLM_ANTHROPIC_DEFAULT_MODEL "claude-sonnet-4-5"

/* Whether provider is one assay speaks (openai, openai-responses,
 * anthropic, ollama, the presets gemini, openrouter, vllm, llamacpp,
 * script); *model (when model is non-NULL) its model when none is
 * given, NULL when one must be. */
int llm_provider_info(const char *provider, const char **model);
/* Whether provider's answers cost nothing, whatever its model is called
 * (script): its runs are priced at $0. */
int llm_provider_free(const char *provider);

/* A turn's tokens. input_tokens counts every input token: those read
 * from a prompt cache (cached_tokens) and written to one
 * (cache_write_tokens, Anthropic) among them. */
struct llm_usage {
	long input_tokens;
	long output_tokens;
	long cached_tokens;
	long cache_write_tokens;
	long reasoning_tokens; /* of output_tokens, spent thinking */
	int known;             /* the provider reported usage */
};

/* Error categories, as the event stream names them. */
#define LLM_ERR_AUTH "provider_auth"
#define LLM_ERR_RATE "provider_rate_limit"
#define LLM_ERR_SERVER "provider_server"
#define LLM_ERR_STREAM "provider_stream"
/* the prompt is longer than the model's context window (the session
 * compacts the conversation and asks again) */
#define LLM_ERR_CONTEXT "provider_context"

struct llm_result {
	int ok;
	char *text;        /* the answer's text ("" if none) */
	cJSON *tool_calls; /* neutral array (may be empty, never NULL if ok) */
	char *finish_reason;
	struct llm_usage usage;
	/* provider state kept with the answer and sent back with it, to
	 * the same provider only (the Responses API's reasoning items):
	 * {"provider": name, "items": [...]}; NULL when none */
	cJSON *items;
	const char *error_category; /* LLM_ERR_*, when !ok */
	char *error_message;        /* names the cause and the fix */
	int attempts;
};

void llm_result_free(struct llm_result *r);

struct llm_observer {
	/* A piece of answer text as it streams. */
	void (*on_text)(void *arg, const char *text, size_t n);
	/* A try failed and will be retried after delay_ms; discarded is
	 * how many bytes of text that try had streamed (now void). */
	void (*on_retry)(void *arg, int attempt, long delay_ms,
	                 const char *category, const char *message,
	                 size_t discarded);
	/* The turn is over (success or final failure). The observer owns
	 * res and frees it with llm_result_free. */
	void (*on_done)(void *arg, struct llm_result *res);
	void *arg;
};

struct llm;

/* Pick the provider named by cfg->provider and initialise it. */
struct llm *llm_new(const struct config *cfg, struct loop *l, struct http *h,
                    const struct llm_observer *obs, char **err);
int llm_start(struct llm *m, const struct llm_request *req, char **err);
void llm_cancel(struct llm *m);
void llm_free(struct llm *m);

/* The provider's name as configured, the resolved model, and the
 * resolved base URL ("" when none; never a key), for run_start. */
const char *llm_provider(const struct llm *m);
const char *llm_model(const struct llm *m);
const char *llm_base_url(const struct llm *m);
/* The provider needs a key it does not have (cfg->key_later): every
 * request fails with this (provider_auth); NULL when it has one. */
const char *llm_no_key(const struct llm *m);

/* Canonical request JSON (provider, model, parameters, system,
 * messages, tools) used for request_hash and the cache. Caller frees. */
char *llm_canonical_request(const struct llm *m, const struct llm_request *r);
/* The same as a given provider and model would have made it (resume:
 * the hash a recorded run would have given the request). */
char *llm_canonical_request_for(const char *provider, const char *model,
                                const struct llm_request *r);

#endif
