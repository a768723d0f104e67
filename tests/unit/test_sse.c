/* test_sse.c: the SSE parser against every rule of protocols.md 0,
 * fed whole, split at every byte boundary, and byte by byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assay/buf.h"
#include "assay/sse.h"
#include "assay/util.h"

/* Events rendered as "event|data|error_field\n" lines. */
struct rec {
	struct buf out;
	int n;
	int stop_after; /* return -1 from this event on (0 = never) */
};

static int rec_fn(const struct sse_event *ev, void *arg)
{
	struct rec *r = arg;

	assert_int_equal(strlen(ev->data), ev->data_len);
	buf_printf(&r->out, "%s|%s|%d\n", ev->event, ev->data, ev->error_field);
	r->n++;
	return r->stop_after && r->n >= r->stop_after ? -1 : 0;
}

/* Parse text in chunks of the given sizes (cuts[] are split points). */
static char *parse_cuts(const char *text, const size_t *cuts, size_t ncuts,
                        int bare_json, size_t max, int *rc)
{
	struct rec r = {0};
	struct sse s;
	size_t len = strlen(text), pos = 0;

	buf_init(&r.out, 0);
	sse_init(&s, max, rec_fn, &r);
	s.bare_json = bare_json;
	*rc = 0;
	for (size_t i = 0; i <= ncuts && *rc == 0; i++) {
		size_t end = i < ncuts ? cuts[i] : len;
		*rc = sse_feed(&s, text + pos, end - pos);
		pos = end;
	}
	if (*rc == 0)
		*rc = sse_finish(&s);
	sse_free(&s);
	return buf_detach(&r.out);
}

static char *parse(const char *text, int bare_json)
{
	int rc;
	char *out = parse_cuts(text, NULL, 0, bare_json, 1 << 20, &rc);
	assert_int_equal(rc, 0);
	return out;
}

static void expect(const char *text, int bare_json, const char *want)
{
	char *got = parse(text, bare_json);
	assert_string_equal(got, want);
	free(got);
}

static void test_basic_fields(void **state)
{
	expect("event: ping\ndata: {\"a\":1}\n\n", 0, "ping|{\"a\":1}|0\n");
	expect("data:no-space\n\n", 0, "|no-space|0\n");
	/* Only one leading space is dropped. */
	expect("data:  two\n\n", 0, "| two|0\n");
	expect("data: a\ndata: b\ndata:\ndata: c\n\n", 0, "|a\nb\n\nc|0\n");
	/* The event name applies to one event only. */
	expect("event: x\ndata: 1\n\ndata: 2\n\n", 0, "x|1|0\n|2|0\n");
	/* A field name alone is a field with an empty value. */
	expect("data\n\n", 0, "||0\n");
}

static void test_comments_and_unknown(void **state)
{
	expect(": keep-alive\n\n:x\ndata: d\n: mid\n\n", 0, "|d|0\n");
	expect("id: 7\nretry: 100\nfoo: bar\ndata: d\n\n", 0, "|d|0\n");
	/* A blank line without data dispatches nothing and resets. */
	expect("event: a\n\ndata: d\n\n", 0, "|d|0\n");
	expect("\n\n\n", 0, "");
}

static void test_crlf(void **state)
{
	expect("event: e\r\ndata: x\r\n\r\ndata: y\r\n\r\n", 0,
	       "e|x|0\n|y|0\n");
	/* Only the \r before the \n goes. */
	expect("data: a\rb\r\n\r\n", 0, "|a\rb|0\n");
}

static void test_error_field(void **state)
{
	expect("error: {\"message\":\"boom\"}\n\n", 0,
	       "|{\"message\":\"boom\"}|1\n");
	expect("data: ok\n\nerror: bad\n\ndata: after\n\n", 0,
	       "|ok|0\n|bad|1\n|after|0\n");
}

static void test_finish_dispatches(void **state)
{
	/* No final blank line. */
	expect("data: a\n\ndata: tail\n", 0, "|a|0\n|tail|0\n");
	/* No final newline at all. */
	expect("data: a\n\ndata: tail", 0, "|a|0\n|tail|0\n");
	expect("data: tail\r", 0, "|tail|0\n");
}

static void test_bare_json(void **state)
{
	const char *text = "{\"type\":\"init\"}\n\n"
	                   "data: {\"type\":\"stdout\"}\n\n"
	                   "{\"type\":\"ping\"}\n";
	expect(text, 1,
	       "|{\"type\":\"init\"}|0\n|{\"type\":\"stdout\"}|0\n"
	       "|{\"type\":\"ping\"}|0\n");
	/* Without the mode a bare line is an unknown field. */
	expect(text, 0, "|{\"type\":\"stdout\"}|0\n");
}

/* The same events whatever the chunking. */
static void test_every_split(void **state)
{
	const char *text = ": hello\r\n"
	                   "event: message\r\n"
	                   "data: {\"x\":\"caf\xc3\xa9\"}\r\n"
	                   "data: second\n"
	                   "\n"
	                   "id: 3\n"
	                   "error: {\"error\":1}\n"
	                   "\r\n"
	                   "data:last";
	char *want = parse(text, 0);
	size_t len = strlen(text);
	int rc;

	assert_string_equal(want, "message|{\"x\":\"caf\xc3\xa9\"}\nsecond|0\n"
	                          "|{\"error\":1}|1\n|last|0\n");
	for (size_t cut = 1; cut < len; cut++) {
		char *got = parse_cuts(text, &cut, 1, 0, 1 << 20, &rc);
		assert_int_equal(rc, 0);
		assert_string_equal(got, want);
		free(got);
	}
	/* Two cuts at every pair of points. */
	for (size_t a = 1; a < len; a++)
		for (size_t b = a; b < len; b++) {
			size_t cuts[2] = {a, b};
			char *got = parse_cuts(text, cuts, 2, 0, 1 << 20, &rc);
			assert_int_equal(rc, 0);
			assert_string_equal(got, want);
			free(got);
		}
	/* One byte at a time. */
	size_t *cuts = malloc(len * sizeof *cuts);
	for (size_t i = 0; i < len - 1; i++)
		cuts[i] = i + 1;
	char *got = parse_cuts(text, cuts, len - 1, 0, 1 << 20, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(got, want);
	free(got);
	free(cuts);
	free(want);
}

static void test_bounds(void **state)
{
	int rc;
	char *got;
	char line[200];

	/* A line longer than max, whole or in pieces. */
	memset(line, 'a', sizeof line);
	memcpy(line, "data: ", 6);
	line[sizeof line - 2] = '\n';
	line[sizeof line - 1] = '\0';
	got = parse_cuts(line, NULL, 0, 0, 100, &rc);
	assert_int_equal(rc, -1);
	free(got);
	size_t cut = 50;
	got = parse_cuts(line, &cut, 1, 0, 100, &rc);
	assert_int_equal(rc, -1);
	free(got);
	/* An unterminated line grows past max. */
	line[sizeof line - 2] = 'a';
	got = parse_cuts(line, &cut, 1, 0, 100, &rc);
	assert_int_equal(rc, -1);
	free(got);
	/* Many short data lines: the event passes max. */
	struct buf b;
	buf_init(&b, 0);
	for (int i = 0; i < 20; i++)
		buf_puts(&b, "data: 0123456789\n");
	got = parse_cuts(b.data, NULL, 0, 0, 100, &rc);
	assert_int_equal(rc, -1);
	free(got);
	/* Just under the bound is fine. */
	got = parse_cuts("data: 0123456789\n\n", NULL, 0, 0, 16, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(got, "|0123456789|0\n");
	free(got);
	buf_free(&b);
}

static void test_callback_stops(void **state)
{
	struct rec r = {0};
	struct sse s;
	const char *text = "data: 1\n\ndata: 2\n\ndata: 3\n\n";

	buf_init(&r.out, 0);
	r.stop_after = 2;
	sse_init(&s, 1024, rec_fn, &r);
	assert_int_equal(sse_feed(&s, text, strlen(text)), -1);
	assert_int_equal(r.n, 2);
	sse_free(&s);
	buf_free(&r.out);
}

/* Events rendered as "id|retry|data\n": the stream's last event id
 * and retry as the callback sees them. */
struct idrec {
	struct sse *s;
	struct buf out;
};

static int idrec_fn(const struct sse_event *ev, void *arg)
{
	struct idrec *r = arg;

	buf_printf(&r->out, "%s|%ld|%s\n", buf_str(&r->s->id), r->s->retry,
	           ev->data);
	return 0;
}

/* text[0..len) fed in pieces of step bytes (0 = whole), then finished;
 * the events, then "end:ID|RETRY". */
static char *parse_ids(const char *text, size_t len, size_t step)
{
	struct sse s;
	struct idrec r = {.s = &s};

	buf_init(&r.out, 0);
	sse_init(&s, 1 << 20, idrec_fn, &r);
	for (size_t pos = 0; pos < len;) {
		size_t n = step && len - pos > step ? step : len - pos;
		assert_int_equal(sse_feed(&s, text + pos, n), 0);
		pos += n;
	}
	assert_int_equal(sse_finish(&s), 0);
	buf_printf(&r.out, "end:%s|%ld", buf_str(&s.id), s.retry);
	sse_free(&s);
	return buf_detach(&r.out);
}

/* The same fields whole, in 1..7-byte pieces. */
static void expect_ids(const char *text, size_t len, const char *want)
{
	for (size_t step = 0; step < 8; step++) {
		char *got = parse_ids(text, len, step);
		assert_string_equal(got, want);
		free(got);
	}
}

#define EXPECT_IDS(lit, want) expect_ids(lit, sizeof lit - 1, want)

static void test_id(void **state)
{
	/* None seen: "". The id persists across events without one. */
	EXPECT_IDS("data: a\n\nid: 1\ndata: b\n\ndata: c\n\n",
	           "|-1|a\n1|-1|b\n1|-1|c\nend:1|-1");
	EXPECT_IDS("id: 1\ndata: a\n\nid: 2\r\ndata: b\r\n\r\n",
	           "1|-1|a\n2|-1|b\nend:2|-1");
	/* An empty id: resets it. */
	EXPECT_IDS("id: 1\ndata: a\n\nid\ndata: b\n\n",
	           "1|-1|a\n|-1|b\nend:|-1");
	EXPECT_IDS("id: 1\ndata: a\n\nid:\ndata: b\n\n",
	           "1|-1|a\n|-1|b\nend:|-1");
	/* An id holding NUL is ignored; the one before stays. */
	EXPECT_IDS("id: 1\ndata: a\n\nid: x\0y\ndata: b\n\n",
	           "1|-1|a\n1|-1|b\nend:1|-1");
	/* An event with an id and no data: not dispatched, its id kept. */
	EXPECT_IDS("id: 5\n\ndata: x\n\n", "5|-1|x\nend:5|-1");
	/* The last id: of an event wins; only one space is dropped. */
	EXPECT_IDS("id: a\nid:  b\ndata: x\n\n", " b|-1|x\nend: b|-1");
	/* The priming event of an MCP stream: an id, a retry, empty data,
	 * dispatched with data_len 0. */
	EXPECT_IDS("id: event-1\nretry: 500\ndata: \n\n",
	           "event-1|500|\nend:event-1|500");
}

/* An event's id counts once its event has ended: a stream cut in the
 * middle of an event resumes from the event before. */
static void test_id_waits_for_event_end(void **state)
{
	struct sse s;
	struct idrec r = {.s = &s};
	const char *text = "id: 1\ndata: a\n\nid: 2\ndata: b\n";

	buf_init(&r.out, 0);
	sse_init(&s, 1024, idrec_fn, &r);
	assert_string_equal(buf_str(&s.id), "");
	assert_int_equal(sse_feed(&s, text, strlen(text)), 0);
	assert_string_equal(buf_str(&s.id), "1");
	assert_int_equal(sse_feed(&s, "\n", 1), 0);
	assert_string_equal(buf_str(&s.id), "2");
	assert_string_equal(buf_str(&r.out), "1|-1|a\n2|-1|b\n");
	sse_free(&s);
	buf_free(&r.out);
}

static void test_retry(void **state)
{
	EXPECT_IDS("retry: 100\ndata: a\n\ndata: b\n\nretry:250\ndata: c\n\n",
	           "|100|a\n|100|b\n|250|c\nend:|250");
	/* Anything but digits is ignored; the value before stays. */
	EXPECT_IDS("retry: 100\nretry: 5x\nretry: -1\nretry: \nretry\n"
	           "retry:  7\nretry: 1.5\ndata: a\n\n",
	           "|100|a\nend:|100");
	EXPECT_IDS("retry: x\ndata: a\n\n", "|-1|a\nend:|-1");
	/* It applies at once, even to an event without data. */
	EXPECT_IDS("retry: 0\n\n", "end:|0");
	/* Too many digits saturate instead of overflowing. */
	const char *big = "retry: 99999999999999999999999999999\n";
	char *got = parse_ids(big, strlen(big), 0);
	long v = strtol(strchr(got, '|') + 1, NULL, 10);
	assert_true(v > 1000000000L);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basic_fields),
	    cmocka_unit_test(test_comments_and_unknown),
	    cmocka_unit_test(test_crlf),
	    cmocka_unit_test(test_error_field),
	    cmocka_unit_test(test_finish_dispatches),
	    cmocka_unit_test(test_bare_json),
	    cmocka_unit_test(test_every_split),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_callback_stops),
	    cmocka_unit_test(test_id),
	    cmocka_unit_test(test_id_waits_for_event_end),
	    cmocka_unit_test(test_retry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
