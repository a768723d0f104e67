/* fuzz_pyframe.c: libFuzzer harness for the reader of the python
 * kernel's frames (src/agent/pyframe.c). The stream (see
 * fuzz_chunks.h) is fed in chunks and again whole: any bytes must be
 * read or refused with a message, without crashing, leaking or
 * reading past the input; only allowed types and payloads within the
 * limit may be delivered; and since frames split anywhere, both runs
 * must deliver the same frames and agree on refusing the stream. */
#include "agent/agent_internal.h"
#include "assay/buf.h"
#include "fuzz_chunks.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TYPES "hoer" /* as the kernel's reader (pytool.c) */
#define MAX 300      /* small, so that the limit is reached */

/* Every frame as type, payload length, payload. */
static void on_frame(void *arg, char type, const char *p, size_t n)
{
	struct buf *b = arg;
	if (!type || !strchr(TYPES, type) || n > MAX)
		abort();
	buf_append(b, &type, 1);
	buf_append(b, &n, sizeof n);
	buf_append(b, p, n);
}

/* Feed the stream in the chunks c gives (whole when whole), up to the
 * first refusal; 0 or -1. */
static int run(struct fuzz_chunks *c, int whole, struct buf *out)
{
	struct pyframe_reader r;
	pyframe_reader_init(&r, TYPES, MAX);
	int rc = 0;
	for (size_t pos = 0; pos < c->size && rc == 0;) {
		size_t n = whole ? c->size : fuzz_chunk_len(c, c->size - pos);
		char *err = NULL;
		rc = pyframe_feed(&r, c->data + pos, n, on_frame, out, &err);
		if ((rc < 0) != (err != NULL))
			abort();
		free(err);
		pos += n;
	}
	pyframe_reader_free(&r);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_chunks c;
	fuzz_chunks_init(&c, data, size);
	struct buf split, whole;
	buf_init(&split, 0);
	buf_init(&whole, 0);
	int rc_split = run(&c, 0, &split);
	int rc_whole = run(&c, 1, &whole);
	if (rc_split != rc_whole || split.len != whole.len ||
	    (split.len && memcmp(split.data, whole.data, split.len)))
		abort();
	buf_free(&split);
	buf_free(&whole);
	return 0;
}
