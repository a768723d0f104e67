/* turn.c: the model side of a turn: the request the session makes from
 * its conversation, and the answer's text as it streams in (coalesced
 * into text_delta events, thrown away when the provider retries).
 * The owner of struct conv (conv.h). */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/events.h"
#include "assay/llm.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <stdlib.h>

#define TEXT_DELTA_MS 30

void session_llm_request(const struct session *s, struct llm_request *req)
{
	*req = (struct llm_request){
	    .model = llm_model(s->llm),
	    .system = s->system_prompt,
	    .messages = s->conv.messages,
	    .tools = s->conv.tools,
	    .max_output_tokens = s->cfg->max_output_tokens,
	};
}

/* Emit the text streamed since the last text_delta. */
void session_flush_delta(struct session *s)
{
	if (s->conv.delta_timer) {
		loop_timer_cancel(s->loop, s->conv.delta_timer);
		s->conv.delta_timer = 0;
	}
	if (!s->conv.delta.len)
		return;
	/* hold back a split UTF-8 character for the next flush */
	size_t n = utf8_complete_prefix(s->conv.delta.data, s->conv.delta.len);
	if (!n)
		return;
	char *t = utf8_sanitize(s->conv.delta.data, n, NULL);
	buf_consume(&s->conv.delta, n);
	session_emit(s, ev_text_delta(s->conv.turn, t));
	free(t);
}

/* The coalescing timer of text_delta. */
static void session_delta_timer(void *arg)
{
	struct session *s = arg;
	s->conv.delta_timer = 0;
	session_flush_delta(s);
}

/* Streamed text: coalesced into a text_delta every TEXT_DELTA_MS. */
void session_on_llm_text(void *arg, const char *text, size_t n)
{
	struct session *s = arg;
	if (s->ctx.compacting)
		return; /* the summary is shown whole, in its own block */
	buf_append(&s->conv.turn_text, text, n);
	buf_append(&s->conv.delta, text, n);
	if (!s->conv.delta_timer)
		s->conv.delta_timer = loop_timer_add(s->loop, TEXT_DELTA_MS,
		                                     session_delta_timer, s);
}

/* The provider retries: what streamed so far is thrown away. */
void session_on_llm_retry(void *arg, int attempt, long delay_ms,
                          const char *category, const char *message,
                          size_t discarded)
{
	struct session *s = arg;
	session_flush_delta(s);
	buf_reset(&s->conv.delta);
	buf_reset(&s->conv.turn_text);
	session_emit(s, ev_error_retry(category, message, delay_ms, attempt,
	                               discarded, s->conv.turn));
}

void conv_init(struct conv *c, const struct config *cfg)
{
	c->messages = cJSON_CreateArray();
	c->tools = tools_definitions(cfg);
	buf_init(&c->turn_text, 0);
	buf_init(&c->delta, 0);
}

void conv_free(struct conv *c)
{
	llm_result_free(c->cached);
	cJSON_Delete(c->messages);
	cJSON_Delete(c->tools);
	free(c->request_hash);
	buf_free(&c->turn_text);
	buf_free(&c->delta);
}

void conv_add_tools(struct session *s, const cJSON *defs)
{
	const cJSON *d;
	cJSON_ArrayForEach(d, defs)
	    cJSON_AddItemToArray(s->conv.tools, cJSON_Duplicate(d, 1));
}

void conv_set_messages(struct session *s, cJSON *messages)
{
	cJSON_Delete(s->conv.messages);
	s->conv.messages = messages;
}

void conv_set_turn(struct session *s, int turn)
{
	s->conv.turn = turn;
}

void conv_set_hash(struct session *s, const char *hash)
{
	free(s->conv.request_hash);
	s->conv.request_hash = xstrdup(hash);
}

void conv_cache_answer(struct session *s, struct llm_result *r,
                       void (*fn)(void *arg))
{
	s->conv.cached = r;
	s->conv.cached_timer = loop_timer_add(s->loop, 0, fn, s);
}

struct llm_result *conv_take_cached(struct session *s)
{
	struct llm_result *r = s->conv.cached;
	s->conv.cached_timer = 0;
	s->conv.cached = NULL;
	return r;
}

void conv_drop_cached(struct session *s)
{
	if (!s->conv.cached_timer)
		return;
	loop_timer_cancel(s->loop, s->conv.cached_timer);
	s->conv.cached_timer = 0;
	llm_result_free(s->conv.cached);
	s->conv.cached = NULL;
}

void conv_end_stream(struct session *s)
{
	session_flush_delta(s);
	buf_reset(&s->conv.delta);
}

void conv_reset_turn_text(struct session *s)
{
	buf_reset(&s->conv.turn_text);
}
