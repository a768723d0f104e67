/* fuzz_docker_frames.c: libFuzzer harness for the demultiplexer of
 * Docker's exec stream (src/sandbox/docker_frames.c). The stream (see
 * fuzz_chunks.h) is fed in chunks and again whole: any bytes must be
 * handled without crashing or reading past the input, only streams 1
 * and 2 may be reported, no byte may be reported that the stream did
 * not hold, and since frames split anywhere, both runs must report
 * the same bytes on the same streams and end in the same state. */
#include "assay/buf.h"
#include "fuzz_chunks.h"
#include "sandbox/docker_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sink {
	struct buf out, err;
};

static void on_frame(void *arg, int stream, const char *data, size_t n)
{
	struct sink *k = arg;
	if (stream != 1 && stream != 2)
		abort();
	buf_append(stream == 2 ? &k->err : &k->out, data, n);
}

/* Feed all the stream in the chunks c gives (whole when whole), as
 * the backend does even after a bad header; returns 0, 1 (the stream
 * ended mid-frame) or -1 (not multiplexed). */
static int run(struct fuzz_chunks *c, int whole, struct sink *k)
{
	struct dk_demux d;
	dk_demux_init(&d);
	buf_init(&k->out, 0);
	buf_init(&k->err, 0);
	int rc = 0;
	for (size_t pos = 0; pos < c->size;) {
		size_t n = whole ? c->size : fuzz_chunk_len(c, c->size - pos);
		if (dk_demux_feed(&d, c->data + pos, n, on_frame, k) < 0)
			rc = -1;
		else if (rc < 0) /* once not multiplexed, always */
			abort();
		pos += n;
	}
	if (rc == 0 && !dk_demux_idle(&d))
		rc = 1;
	return rc;
}

static int same(const struct buf *a, const struct buf *b)
{
	return a->len == b->len &&
	       (!a->len || !memcmp(a->data, b->data, a->len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_chunks c;
	fuzz_chunks_init(&c, data, size);
	struct sink split, whole;
	int rc_split = run(&c, 0, &split);
	int rc_whole = run(&c, 1, &whole);
	if (rc_split != rc_whole || !same(&split.out, &whole.out) ||
	    !same(&split.err, &whole.err) ||
	    split.out.len + split.err.len > c.size)
		abort();
	buf_free(&split.out);
	buf_free(&split.err);
	buf_free(&whole.out);
	buf_free(&whole.err);
	return 0;
}
