/* buf.h: growable byte buffers with a hard maximum, and a head+tail
 * capture that keeps a bounded view of an unbounded stream. */
#ifndef ASSAY_BUF_H
#define ASSAY_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	char *data; /* always NUL-terminated when non-NULL */
	size_t len;
	size_t cap;
	size_t max; /* appends that would pass this fail; 0 = no limit */
};

void buf_init(struct buf *b, size_t max);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
/* Append n bytes; -1 (nothing appended) if len would exceed max. */
int buf_append(struct buf *b, const void *data, size_t n);
int buf_puts(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Drop the first n bytes. */
void buf_consume(struct buf *b, size_t n);
/* Take ownership of the data (NUL-terminated, never NULL). */
char *buf_detach(struct buf *b);
/* The contents as a C string ("" when empty). */
const char *buf_str(const struct buf *b);

/* Head and tail of a stream: the first head_max bytes and the last
 * tail_max bytes, with the total count. Memory stays bounded. */
struct headtail {
	char *head;
	size_t head_len, head_max;
	char *tail; /* ring buffer */
	size_t tail_pos, tail_len, tail_max;
	uint64_t total;
};

void headtail_init(struct headtail *h, size_t head_max, size_t tail_max);
void headtail_free(struct headtail *h);
void headtail_feed(struct headtail *h, const char *data, size_t n);
/* Render for a model: the whole stream if it fit, else head, a line
 * "[... N bytes omitted; full output in WHERE ...]", and tail. Cuts are
 * moved to UTF-8 boundaries. Caller frees. */
char *headtail_render(const struct headtail *h, const char *where);

#endif
