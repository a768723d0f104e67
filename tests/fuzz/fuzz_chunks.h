/* fuzz_chunks.h: how the stream harnesses split their input. The first
 * byte's low 3 bits say how many size bytes follow (0 to 7); those give
 * the chunk sizes (1 to 256, used in turn); the rest is the stream.
 * With no size bytes the stream is fed whole. */
#ifndef ASSAY_FUZZ_CHUNKS_H
#define ASSAY_FUZZ_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

struct fuzz_chunks {
	const uint8_t *sizes;
	size_t nsizes, next;
	const char *data; /* the stream */
	size_t size;
};

static inline void fuzz_chunks_init(struct fuzz_chunks *c, const uint8_t *data,
                                    size_t size)
{
	size_t n = size ? data[0] & 7 : 0;
	if (size && n > size - 1)
		n = size - 1;
	c->sizes = size ? data + 1 : data;
	c->nsizes = n;
	c->next = 0;
	c->data = (const char *)data + (size ? 1 + n : 0);
	c->size = size ? size - 1 - n : 0;
}

/* The length of the next chunk, given what is left (left > 0). */
static inline size_t fuzz_chunk_len(struct fuzz_chunks *c, size_t left)
{
	if (c->nsizes == 0)
		return left;
	size_t n = (size_t)c->sizes[c->next++ % c->nsizes] + 1;
	return n < left ? n : left;
}

#endif
