/* sse.h: an incremental server-sent-events parser (protocols.md 0).
 * Chunks may split anywhere; lines end in \n with an optional \r. */
#ifndef ASSAY_SSE_H
#define ASSAY_SSE_H

#include <stddef.h>
#include "buf.h"

struct sse_event {
	const char *event; /* "" when no event: field */
	const char *data;  /* joined data: lines, NUL-terminated */
	size_t data_len;
	int error_field; /* came from a non-standard "error:" line */
};

/* Return -1 to stop parsing (sse_feed then returns -1). */
typedef int (*sse_fn)(const struct sse_event *ev, void *arg);

struct sse {
	struct buf line;
	struct buf data;
	struct buf event;
	int have_data;
	int error_field;
	int bare_json; /* accept bare JSON lines as data (OpenSandbox) */
	/* The stream's last event id, for a reconnection's Last-Event-ID:
	 * the latest id: field, taken when its event ends (a blank line)
	 * and kept across events that have none; "" when none was seen (or
	 * the server reset it with an empty id:). An id holding NUL is
	 * ignored. Read it with buf_str(&s->id). */
	struct buf id;
	struct buf id_next; /* the id: of the event being read */
	int id_next_set;
	/* The latest retry: field (digits only), in milliseconds; -1 when
	 * none was seen. */
	long retry;
	sse_fn fn;
	void *arg;
};

/* max bounds one line and one event's data. */
void sse_init(struct sse *s, size_t max, sse_fn fn, void *arg);
void sse_free(struct sse *s);
/* -1 if a line or event exceeds max or the callback stopped. */
int sse_feed(struct sse *s, const char *data, size_t n);
/* End of stream: dispatch what is buffered. */
int sse_finish(struct sse *s);

#endif
