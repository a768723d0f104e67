/* fuzz_sse.c: libFuzzer harness for the SSE parser (src/net/sse.c).
 * The stream (see fuzz_chunks.h) is fed in chunks, then again whole to
 * a second parser: any bytes must parse without crashing, leaking or
 * reading past the input, every event's data must be NUL-terminated
 * at data_len, and since chunks may split anywhere, the two parsers
 * must report the same events when both accept the stream. */
#include "assay/buf.h"
#include "assay/sse.h"
#include "fuzz_chunks.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LINE 64 /* small, so that the bound is reached */

/* Every event as event, NUL, error flag, data length, data. */
static int record(const struct sse_event *ev, void *arg)
{
	struct buf *b = arg;
	if (!ev->event || !ev->data || ev->data[ev->data_len] != '\0')
		abort();
	char flag = ev->error_field ? 'E' : 'D';
	buf_append(b, ev->event, strlen(ev->event) + 1);
	buf_append(b, &flag, 1);
	buf_append(b, &ev->data_len, sizeof ev->data_len);
	buf_append(b, ev->data, ev->data_len);
	return 0;
}

/* Feed the stream in the chunks c gives (whole when whole); 0 or -1. */
static int run(struct fuzz_chunks *c, int whole, int bare, struct buf *out)
{
	struct sse s;
	sse_init(&s, MAX_LINE, record, out);
	s.bare_json = bare;
	int rc = 0;
	for (size_t pos = 0; pos < c->size && rc == 0;) {
		size_t n = whole ? c->size : fuzz_chunk_len(c, c->size - pos);
		rc = sse_feed(&s, c->data + pos, n);
		pos += n;
	}
	if (rc == 0)
		rc = sse_finish(&s);
	sse_free(&s);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_chunks c;
	fuzz_chunks_init(&c, data, size);
	int bare = size > 0 && (data[0] & 8);
	struct buf split, whole;
	buf_init(&split, 0);
	buf_init(&whole, 0);
	int rc_split = run(&c, 0, bare, &split);
	int rc_whole = run(&c, 1, bare, &whole);
	if (rc_split == 0 && rc_whole == 0 &&
	    (split.len != whole.len ||
	     (split.len && memcmp(split.data, whole.data, split.len))))
		abort();
	buf_free(&split);
	buf_free(&whole);
	return 0;
}
