/* pyframe.c: the framing between assay and its Python kernel (see
 * share/kernel/assay_kernel.py): a type byte, a 4-byte big-endian
 * payload length, the payload. The reader takes the kernel's output in
 * whatever pieces the pipe gives, never holds more than one frame, and
 * refuses a stream that cannot be valid instead of guessing. */
#include "agent_internal.h"

#include "assay/util.h"

#include <string.h>

void pyframe_reader_init(struct pyframe_reader *r, const char *types,
                         size_t max)
{
	buf_init(&r->partial, max + PYFRAME_HEADER);
	r->max = max;
	r->types = types;
}

void pyframe_reader_free(struct pyframe_reader *r)
{
	buf_free(&r->partial);
}

/* A 4-byte big-endian length. */
static uint32_t pyframe_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Check a header; -1 + *err if no valid stream can start this way. */
static int pyframe_header(const struct pyframe_reader *r, const char *h,
                          size_t *len, char **err)
{
	if (!h[0] || !strchr(r->types, h[0]))
		return set_err(err,
		               "unknown frame type 0x%02x: the kernel's "
		               "output is not in the protocol",
		               (unsigned char)h[0]);
	*len = pyframe_be32((const unsigned char *)h + 1);
	if (*len > r->max)
		return set_err(err,
		               "frame of %zu bytes announced (at most %zu "
		               "accepted)",
		               *len, r->max);
	return 0;
}

int pyframe_feed(struct pyframe_reader *r, const char *data, size_t n,
                 pyframe_fn fn, void *arg, char **err)
{
	size_t len;
	while (n > 0) {
		if (r->partial.len == 0) {
			/* whole frames straight from the input, no copy */
			if (n >= PYFRAME_HEADER) {
				if (pyframe_header(r, data, &len, err) < 0)
					return -1;
				if (n - PYFRAME_HEADER >= len) {
					fn(arg, data[0], data + PYFRAME_HEADER,
					   len);
					data += PYFRAME_HEADER + len;
					n -= PYFRAME_HEADER + len;
					continue;
				}
			}
			buf_append(&r->partial, data, n);
			return 0;
		}
		/* a split frame: complete its header, then its payload */
		if (r->partial.len < PYFRAME_HEADER) {
			size_t take = PYFRAME_HEADER - r->partial.len;
			take = take < n ? take : n;
			buf_append(&r->partial, data, take);
			data += take;
			n -= take;
			if (r->partial.len < PYFRAME_HEADER)
				return 0;
			if (pyframe_header(r, r->partial.data, &len, err) < 0)
				return -1;
		}
		len = pyframe_be32((const unsigned char *)r->partial.data + 1);
		size_t take = PYFRAME_HEADER + len - r->partial.len;
		take = take < n ? take : n;
		buf_append(&r->partial, data, take);
		data += take;
		n -= take;
		if (r->partial.len < PYFRAME_HEADER + len)
			return 0;
		fn(arg, r->partial.data[0], r->partial.data + PYFRAME_HEADER,
		   len);
		buf_reset(&r->partial);
	}
	return 0;
}

void pyframe_encode(struct buf *out, char type, const void *payload, size_t n)
{
	unsigned char h[PYFRAME_HEADER] = {
	    (unsigned char)type, (unsigned char)(n >> 24),
	    (unsigned char)(n >> 16), (unsigned char)(n >> 8),
	    (unsigned char)n};
	buf_append(out, h, sizeof h);
	buf_append(out, payload, n);
}
