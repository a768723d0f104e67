/* turn.c: the model side of a turn: the request the session makes from
 * its conversation, and the answer's text as it streams in (coalesced
 * into text_delta events, thrown away when the provider retries). */
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
	    .messages = s->messages,
	    .tools = s->tools,
	    .max_output_tokens = s->cfg->max_output_tokens,
	};
}

/* Emit the text streamed since the last text_delta. */
void session_flush_delta(struct session *s)
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
	char *t = utf8_sanitize(s->delta.data, n, NULL);
	buf_consume(&s->delta, n);
	session_emit(s, ev_text_delta(s->turn, t));
	free(t);
}

/* The coalescing timer of text_delta. */
static void session_delta_timer(void *arg)
{
	struct session *s = arg;
	s->delta_timer = 0;
	session_flush_delta(s);
}

/* Streamed text: coalesced into a text_delta every TEXT_DELTA_MS. */
void session_on_llm_text(void *arg, const char *text, size_t n)
{
	struct session *s = arg;
	if (s->ctx.compacting)
		return; /* the summary is shown whole, in its own block */
	buf_append(&s->turn_text, text, n);
	buf_append(&s->delta, text, n);
	if (!s->delta_timer)
		s->delta_timer = loop_timer_add(s->loop, TEXT_DELTA_MS,
		                                session_delta_timer, s);
}

/* The provider retries: what streamed so far is thrown away. */
void session_on_llm_retry(void *arg, int attempt, long delay_ms,
                          const char *category, const char *message,
                          size_t discarded)
{
	struct session *s = arg;
	session_flush_delta(s);
	buf_reset(&s->delta);
	buf_reset(&s->turn_text);
	session_emit(s, ev_error_retry(category, message, delay_ms, attempt,
	                               discarded, s->turn));
}
