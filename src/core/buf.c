/* buf.c: bounded growable buffers and the head+tail capture used to
 * show a model a bounded view of a long output. */
#include "assay/buf.h"
#include "assay/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t max)
{
	memset(b, 0, sizeof *b);
	b->max = max;
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

int buf_append(struct buf *b, const void *data, size_t n)
{
	if (b->max && (n > b->max || b->len > b->max - n))
		return -1;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + n + 1)
			cap *= 2;
		b->data = xrealloc(b->data, cap);
		b->cap = cap;
	}
	if (n)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	int rc = buf_puts(b, s);
	free(s);
	return rc;
}

void buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

char *buf_detach(struct buf *b)
{
	char *p = b->data ? b->data : xstrdup("");
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

const char *buf_str(const struct buf *b)
{
	return b->data ? b->data : "";
}

void headtail_init(struct headtail *h, size_t head_max, size_t tail_max)
{
	memset(h, 0, sizeof *h);
	h->head_max = head_max;
	h->tail_max = tail_max;
	h->head = xmalloc(head_max + 1);
	h->tail = xmalloc(tail_max + 1);
}

void headtail_free(struct headtail *h)
{
	free(h->head);
	free(h->tail);
	h->head = h->tail = NULL;
}

void headtail_feed(struct headtail *h, const char *data, size_t n)
{
	h->total += n;
	size_t room = h->head_max - h->head_len;
	size_t take = n < room ? n : room;
	memcpy(h->head + h->head_len, data, take);
	h->head_len += take;
	data += take;
	n -= take;
	if (h->tail_max == 0)
		return;
	if (n > h->tail_max) {
		data += n - h->tail_max;
		n = h->tail_max;
	}
	for (size_t i = 0; i < n; i++) {
		h->tail[h->tail_pos] = data[i];
		h->tail_pos = (h->tail_pos + 1) % h->tail_max;
	}
	h->tail_len =
	    h->tail_len + n > h->tail_max ? h->tail_max : h->tail_len + n;
}

/* Length of the longest prefix of s[0..n) that does not end inside a
 * UTF-8 sequence. */
static size_t utf8_trim_end(const char *s, size_t n)
{
	size_t i = n, back = 0;
	while (i > 0 && back < 4 && ((unsigned char)s[i - 1] & 0xC0) == 0x80) {
		i--;
		back++;
	}
	if (i == 0)
		return n;
	unsigned char c = (unsigned char)s[i - 1];
	size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
	if (need > 1 && back + 1 < need)
		return i - 1;
	return n;
}

char *headtail_render(const struct headtail *h, const char *where)
{
	struct buf out;
	buf_init(&out, 0);
	if (h->total == h->head_len + h->tail_len) {
		buf_append(&out, h->head, h->head_len);
		size_t start = (h->tail_pos + h->tail_max - h->tail_len) %
		               (h->tail_max ? h->tail_max : 1);
		for (size_t i = 0; i < h->tail_len; i++)
			buf_append(&out, &h->tail[(start + i) % h->tail_max],
			           1);
		return buf_detach(&out);
	}
	buf_append(&out, h->head, utf8_trim_end(h->head, h->head_len));
	char *tail = xmalloc(h->tail_len + 1);
	size_t start = h->tail_max ? (h->tail_pos + h->tail_max - h->tail_len) %
	                                 h->tail_max
	                           : 0;
	for (size_t i = 0; i < h->tail_len; i++)
		tail[i] = h->tail[(start + i) % h->tail_max];
	size_t skip = 0;
	while (skip < h->tail_len && skip < 4 &&
	       ((unsigned char)tail[skip] & 0xC0) == 0x80)
		skip++;
	uint64_t omitted = h->total - h->head_len - h->tail_len;
	buf_printf(&out,
	           "\n[... %llu bytes omitted (%llu in total); full output "
	           "in %s ...]\n",
	           (unsigned long long)omitted, (unsigned long long)h->total,
	           where ? where : "the run directory");
	buf_append(&out, tail + skip, h->tail_len - skip);
	free(tail);
	return buf_detach(&out);
}
