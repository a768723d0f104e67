/* sse.c: the incremental server-sent-events parser (protocols.md 0).
 * Bytes arrive in chunks split anywhere; complete lines are handled as
 * they appear and a blank line dispatches the event built so far. */
#include "assay/sse.h"

#include <limits.h>
#include <string.h>

void sse_init(struct sse *s, size_t max, sse_fn fn, void *arg)
{
	memset(s, 0, sizeof *s);
	buf_init(&s->line, max);
	buf_init(&s->data, max);
	buf_init(&s->event, max);
	buf_init(&s->id, max);
	buf_init(&s->id_next, max);
	s->retry = -1;
	s->fn = fn;
	s->arg = arg;
}

void sse_free(struct sse *s)
{
	buf_free(&s->line);
	buf_free(&s->data);
	buf_free(&s->event);
	buf_free(&s->id);
	buf_free(&s->id_next);
}

/* Hand the buffered event to the callback and start a new one. An
 * event without any data line is dropped, as the SSE spec says, but its
 * id: still becomes the stream's last event id. */
static int sse_dispatch(struct sse *s)
{
	int rc = 0;

	if (s->id_next_set) {
		buf_reset(&s->id);
		if (buf_append(&s->id, s->id_next.data, s->id_next.len) < 0)
			return -1;
		s->id_next_set = 0;
	}
	if (s->have_data) {
		struct sse_event ev = {
		    .event = buf_str(&s->event),
		    .data = buf_str(&s->data),
		    .data_len = s->data.len,
		    .error_field = s->error_field,
		};
		rc = s->fn(&ev, s->arg) < 0 ? -1 : 0;
	}
	buf_reset(&s->data);
	buf_reset(&s->event);
	s->have_data = 0;
	s->error_field = 0;
	return rc;
}

/* Append one data (or error) line's value; lines join with \n. */
static int sse_add_data(struct sse *s, const char *v, size_t n, int error)
{
	if (s->have_data && buf_append(&s->data, "\n", 1) < 0)
		return -1;
	if (buf_append(&s->data, v, n) < 0)
		return -1;
	s->have_data = 1;
	if (error)
		s->error_field = 1;
	return 0;
}

/* An id: field: kept unless it holds NUL (the SSE spec). */
static int sse_set_id(struct sse *s, const char *v, size_t n)
{
	if (memchr(v, '\0', n))
		return 0;
	buf_reset(&s->id_next);
	s->id_next_set = 1;
	return buf_append(&s->id_next, v, n);
}

/* A retry: field: only ASCII digits count (the SSE spec); too large a
 * value saturates. */
static void sse_set_retry(struct sse *s, const char *v, size_t n)
{
	long ms = 0;

	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return;
		if (ms < LONG_MAX / 10 - 10)
			ms = ms * 10 + (v[i] - '0');
	}
	s->retry = ms;
}

/* One complete line, without its \n. */
static int sse_line(struct sse *s, const char *p, size_t n)
{
	if (n > 0 && p[n - 1] == '\r')
		n--;
	if (n == 0)
		return sse_dispatch(s);
	if (p[0] == ':')
		return 0;
	if (s->bare_json && p[0] == '{')
		return sse_add_data(s, p, n, 0);

	const char *colon = memchr(p, ':', n);
	size_t flen = colon ? (size_t)(colon - p) : n;
	const char *v = colon ? colon + 1 : p + n;
	size_t vlen = (size_t)(p + n - v);

	if (vlen > 0 && v[0] == ' ') {
		v++;
		vlen--;
	}
	if (flen == 4 && memcmp(p, "data", 4) == 0)
		return sse_add_data(s, v, vlen, 0);
	if (flen == 5 && memcmp(p, "error", 5) == 0)
		return sse_add_data(s, v, vlen, 1);
	if (flen == 5 && memcmp(p, "event", 5) == 0) {
		buf_reset(&s->event);
		return buf_append(&s->event, v, vlen);
	}
	if (flen == 2 && memcmp(p, "id", 2) == 0)
		return sse_set_id(s, v, vlen);
	if (flen == 5 && memcmp(p, "retry", 5) == 0)
		sse_set_retry(s, v, vlen);
	return 0; /* unknown fields */
}

int sse_feed(struct sse *s, const char *data, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(data, '\n', n);
		if (!nl)
			return buf_append(&s->line, data, n);

		size_t len = (size_t)(nl - data);
		int rc;
		if (s->line.len == 0) {
			/* Whole line in this chunk: no copy. */
			if (s->line.max && len > s->line.max)
				return -1;
			rc = sse_line(s, data, len);
		} else {
			if (buf_append(&s->line, data, len) < 0)
				return -1;
			rc = sse_line(s, s->line.data, s->line.len);
			buf_reset(&s->line);
		}
		if (rc < 0)
			return -1;
		data = nl + 1;
		n -= len + 1;
	}
	return 0;
}

int sse_finish(struct sse *s)
{
	if (s->line.len > 0) {
		int rc = sse_line(s, s->line.data, s->line.len);
		buf_reset(&s->line);
		if (rc < 0)
			return -1;
	}
	return sse_dispatch(s);
}
