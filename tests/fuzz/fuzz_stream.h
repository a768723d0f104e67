/* fuzz_stream.h: the body of the stream-reader harnesses
 * (fuzz_chat_stream.c, fuzz_responses_stream.c, fuzz_anthropic_stream.c):
 * each defines FUZZ_STREAM_INIT, the reader's init (every reader fills
 * a struct chat_stream), then includes this. The body (fuzz_chunks.h)
 * is fed in chunks and again whole: any bytes must be rebuilt or
 * refused with a message, without crashing or leaking; a failure always
 * says why; the calls always come out as an array, each with a name;
 * and both runs must rebuild the same answer. Seeds are in
 * tests/fuzz/corpus/<harness>/ (unknown_content: a fake's
 * --unknown-content stream, chunk sizes 7 and 13): ./fuzz_chat_stream
 * -max_total_time=60 tests/fuzz/corpus/fuzz_chat_stream (a copy: the
 * fuzzer adds to the directory it is given). */
#ifndef FUZZ_STREAM_H
#define FUZZ_STREAM_H

#include "assay/buf.h"
#include "assay/util.h"
#include "fuzz_chunks.h"
#include "llm/llm_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void collect_text(void *arg, const char *text, size_t n)
{
	buf_append(arg, text, n);
}

static void put_str(struct buf *b, const char *s)
{
	buf_puts(b, s ? s : "(null)");
	buf_append(b, "", 1);
}

/* Everything the stream rebuilt, and what was streamed, into out. */
static void summarize(const struct chat_stream *s, int rc,
                      const struct buf *streamed, struct buf *out)
{
	if (rc < 0 && !s->error)
		abort(); /* a failure must say why */
	cJSON *calls = chat_stream_tool_calls(s);
	if (!cJSON_IsArray(calls))
		abort();
	/* a call always has a name: one without could be neither run nor
	 * sent back (a block of another type is never a call) */
	const cJSON *call;
	cJSON_ArrayForEach(call, calls)
	{
		const cJSON *name = cJSON_GetObjectItem(call, "name");
		if (!cJSON_IsString(name) || !*name->valuestring)
			abort();
	}
	char *json = cJSON_PrintUnformatted(calls);
	cJSON_Delete(calls);
	const struct llm_usage *u = &s->usage;
	char *nums = xasprintf("%d %d %d %d %zu %ld %ld %ld %d", rc,
	                       s->saw_done, s->chunks, s->error_final,
	                       s->reasoning_bytes, u->input_tokens,
	                       u->output_tokens, u->cached_tokens, u->known);
	put_str(out, nums);
	put_str(out, s->error);
	put_str(out, s->error_body);
	put_str(out, s->finish_reason);
	put_str(out, json);
	char *items = s->items ? cJSON_PrintUnformatted(s->items) : NULL;
	put_str(out, items);
	free(items);
	buf_append(out, s->text.data, s->text.len);
	buf_append(out, "", 1);
	buf_append(out, streamed->data, streamed->len);
	free(nums);
	free(json);
}

/* Feed the body in the chunks c gives (whole when whole), up to the
 * first failure, and finish it. */
static void run(struct fuzz_chunks *c, int whole, struct buf *out)
{
	struct chat_stream s;
	struct buf streamed;
	buf_init(&streamed, 0);
	FUZZ_STREAM_INIT(&s, 3, collect_text, &streamed);
	int rc = 0;
	for (size_t pos = 0; pos < c->size && rc == 0;) {
		size_t n = whole ? c->size : fuzz_chunk_len(c, c->size - pos);
		rc = chat_stream_feed(&s, c->data + pos, n);
		pos += n;
	}
	if (rc == 0)
		rc = chat_stream_finish(&s);
	summarize(&s, rc, &streamed, out);
	chat_stream_free(&s);
	buf_free(&streamed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_chunks c;
	fuzz_chunks_init(&c, data, size);
	struct buf split, whole;
	buf_init(&split, 0);
	buf_init(&whole, 0);
	run(&c, 0, &split);
	run(&c, 1, &whole);
	if (split.len != whole.len || memcmp(split.data, whole.data, split.len))
		abort();
	buf_free(&split);
	buf_free(&whole);
	return 0;
}

#endif
