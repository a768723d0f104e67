/* test_docker_frames.c: the demultiplexer of Docker's exec stream. A
 * stream of frames (empty, small, larger than any read, every type) is
 * fed whole, split at every byte boundary, and byte by byte; the
 * output must be the same each time: every payload byte once, on the
 * right stream, in order. The command runner's frames (type, id,
 * length; docker_runner.c) get the same treatment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/buf.h"
#include "sandbox/docker_internal.h"

#include <stdlib.h>
#include <string.h>

struct sink {
	struct buf out, err;
	struct buf order; /* one char per callback: 'o' or 'e' */
};

static void sink_init(struct sink *k)
{
	buf_init(&k->out, 0);
	buf_init(&k->err, 0);
	buf_init(&k->order, 0);
}

static void sink_free(struct sink *k)
{
	buf_free(&k->out);
	buf_free(&k->err);
	buf_free(&k->order);
}

static void on_frame(void *arg, int stream, const char *data, size_t n)
{
	struct sink *k = arg;
	assert_true(n > 0 || stream == 1 || stream == 2);
	buf_append(stream == 2 ? &k->err : &k->out, data, n);
}

static void frame(struct buf *b, unsigned char type, const char *data, size_t n)
{
	unsigned char h[8] = {type,
	                      0,
	                      0,
	                      0,
	                      (unsigned char)(n >> 24),
	                      (unsigned char)(n >> 16),
	                      (unsigned char)(n >> 8),
	                      (unsigned char)n};
	buf_append(b, h, 8);
	buf_append(b, data, n);
}

/* The stream under test and what each side must receive; one frame
 * of big bytes (larger than any read when big is). */
static void build(struct buf *s, struct buf *want_out, struct buf *want_err,
                  size_t big_n)
{
	buf_init(s, 0);
	buf_init(want_out, 0);
	buf_init(want_err, 0);
	frame(s, 1, "hello\n", 6);
	buf_puts(want_out, "hello\n");
	frame(s, 2, "warn: x\n", 8);
	buf_puts(want_err, "warn: x\n");
	frame(s, 1, "", 0);               /* empty frames happen */
	frame(s, 0, "stdin-typed\n", 12); /* 0 is treated as stdout */
	buf_puts(want_out, "stdin-typed\n");
	char *big = malloc(big_n);
	for (size_t i = 0; i < big_n; i++)
		big[i] = (char)('a' + i % 26);
	big[big_n - 1] = '\0';
	frame(s, 1, big, big_n);
	buf_append(want_out, big, big_n);
	free(big);
	frame(s, 3, "daemon error\n", 13); /* 3 goes to stderr */
	buf_puts(want_err, "daemon error\n");
	char bin[256];
	for (int i = 0; i < 256; i++)
		bin[i] = (char)i; /* NULs and header-like bytes in payloads */
	frame(s, 2, bin, 256);
	buf_append(want_err, bin, 256);
	frame(s, 1, "\x01\0\0\0\0\0\0\x05", 8);
	buf_append(want_out, "\x01\0\0\0\0\0\0\x05", 8);
}

static void check(const struct sink *k, const struct buf *wo,
                  const struct buf *we)
{
	assert_int_equal(k->out.len, wo->len);
	assert_memory_equal(k->out.data, wo->data, wo->len);
	assert_int_equal(k->err.len, we->len);
	assert_memory_equal(k->err.data, we->data, we->len);
}

static void test_whole(void **state)
{
	(void)state;
	struct buf s, wo, we;
	build(&s, &wo, &we, 300000); /* larger than any single read */
	struct sink k;
	sink_init(&k);
	struct dk_demux d;
	dk_demux_init(&d);
	assert_int_equal(dk_demux_feed(&d, s.data, s.len, on_frame, &k), 0);
	assert_true(dk_demux_idle(&d));
	check(&k, &wo, &we);
	sink_free(&k);
	buf_free(&s);
	buf_free(&wo);
	buf_free(&we);
}

/* Two pieces, cut at every offset of the stream. */
static void test_every_split(void **state)
{
	(void)state;
	struct buf s, wo, we;
	build(&s, &wo, &we, 700);
	for (size_t cut = 0; cut <= s.len; cut++) {
		struct sink k;
		sink_init(&k);
		struct dk_demux d;
		dk_demux_init(&d);
		assert_int_equal(dk_demux_feed(&d, s.data, cut, on_frame, &k),
		                 0);
		assert_int_equal(
		    dk_demux_feed(&d, s.data + cut, s.len - cut, on_frame, &k),
		    0);
		assert_true(dk_demux_idle(&d));
		check(&k, &wo, &we);
		sink_free(&k);
	}
	buf_free(&s);
	buf_free(&wo);
	buf_free(&we);
}

/* Byte by byte, and in pieces of every small size. */
static void test_small_pieces(void **state)
{
	(void)state;
	struct buf s, wo, we;
	build(&s, &wo, &we, 70000);
	for (size_t step = 1; step <= 17; step++) {
		struct sink k;
		sink_init(&k);
		struct dk_demux d;
		dk_demux_init(&d);
		for (size_t pos = 0; pos < s.len; pos += step) {
			size_t n = s.len - pos < step ? s.len - pos : step;
			assert_int_equal(
			    dk_demux_feed(&d, s.data + pos, n, on_frame, &k),
			    0);
			/* idle only exactly between frames */
		}
		assert_true(dk_demux_idle(&d));
		check(&k, &wo, &we);
		sink_free(&k);
	}
	buf_free(&s);
	buf_free(&wo);
	buf_free(&we);
}

/* Mid-frame is not idle: a stream cut there was truncated. */
static void test_not_idle_mid_frame(void **state)
{
	(void)state;
	struct buf s;
	buf_init(&s, 0);
	frame(&s, 1, "abcdef", 6);
	struct sink k;
	sink_init(&k);
	struct dk_demux d;
	dk_demux_init(&d);
	for (size_t i = 1; i < s.len; i++) {
		dk_demux_init(&d);
		buf_reset(&k.out);
		dk_demux_feed(&d, s.data, i, on_frame, &k);
		assert_false(dk_demux_idle(&d));
	}
	sink_free(&k);
	buf_free(&s);
}

/* Not a multiplexed stream (a Tty, or garbage): the rest is passed on
 * raw as stdout, nothing is lost or invented. */
static void test_bad_header(void **state)
{
	(void)state;
	struct buf s;
	buf_init(&s, 0);
	frame(&s, 1, "ok\n", 3);
	buf_puts(&s, "plain text, not frames\n");
	for (size_t cut = 0; cut <= s.len; cut++) {
		struct sink k;
		sink_init(&k);
		struct dk_demux d;
		dk_demux_init(&d);
		int a = dk_demux_feed(&d, s.data, cut, on_frame, &k);
		int b =
		    dk_demux_feed(&d, s.data + cut, s.len - cut, on_frame, &k);
		assert_true(a == -1 || b == -1);
		assert_string_equal(buf_str(&k.out),
		                    "ok\nplain text, not frames\n");
		assert_int_equal(k.err.len, 0);
		assert_false(dk_demux_idle(&d));
		sink_free(&k);
	}
	buf_free(&s);
}

/* ---- the command runner's frames ---- */

static int rf_record(void *arg, char type, uint32_t id, const char *p, size_t n)
{
	struct buf *b = arg;
	buf_printf(b, "%c:%u:%zu:", type, id, n);
	buf_append(b, p, n);
	buf_puts(b, "|");
	return 0;
}

static void rf_put(struct buf *b, char type, uint32_t id, const char *p,
                   uint32_t n)
{
	unsigned char h[9] = {
	    (unsigned char)type,       (unsigned char)(id >> 24),
	    (unsigned char)(id >> 16), (unsigned char)(id >> 8),
	    (unsigned char)id,         (unsigned char)(n >> 24),
	    (unsigned char)(n >> 16),  (unsigned char)(n >> 8),
	    (unsigned char)n};
	buf_append(b, h, sizeof h);
	buf_append(b, p, n);
}

static void rf_stream(struct buf *b, struct buf *expect)
{
	buf_init(b, 0);
	buf_init(expect, 0);
	static char big[70000];
	memset(big, 'z', sizeof big);
	rf_put(b, 'h', 0, "pid 7, python 3.11", 18);
	rf_put(b, 'o', 7, "abc", 3);
	rf_put(b, 'e', 7, "", 0);
	rf_put(b, 'o', 4000000000u, big, sizeof big);
	rf_put(b, 'x', 7, "137", 3);
	buf_puts(expect,
	         "h:0:18:pid 7, python 3.11|o:7:3:abc|e:7:0:|o:4000000000:"
	         "70000:");
	buf_append(expect, big, sizeof big);
	buf_puts(expect, "|x:7:3:137|");
}

static void test_runner_frames_split(void **state)
{
	(void)state;
	struct buf in, expect;
	rf_stream(&in, &expect);
	for (size_t cut = 0; cut <= in.len; cut += cut < 200 ? 1 : 997) {
		struct dk_rframes f;
		buf_init(&f.in, 0);
		struct buf got;
		buf_init(&got, 0);
		assert_int_equal(dk_rframes_feed(&f, in.data, cut, 1u << 20,
		                                 rf_record, &got),
		                 0);
		assert_int_equal(dk_rframes_feed(&f, in.data + cut,
		                                 in.len - cut, 1u << 20,
		                                 rf_record, &got),
		                 0);
		assert_int_equal(got.len, expect.len);
		assert_memory_equal(got.data, expect.data, expect.len);
		assert_int_equal(f.in.len, 0);
		buf_free(&got);
		buf_free(&f.in);
	}
	/* byte by byte */
	struct dk_rframes f;
	buf_init(&f.in, 0);
	struct buf got;
	buf_init(&got, 0);
	for (size_t i = 0; i < in.len; i++)
		assert_int_equal(dk_rframes_feed(&f, in.data + i, 1, 1u << 20,
		                                 rf_record, &got),
		                 0);
	assert_int_equal(got.len, expect.len);
	assert_memory_equal(got.data, expect.data, expect.len);
	buf_free(&got);
	buf_free(&f.in);
	buf_free(&in);
	buf_free(&expect);
}

static int rf_stop(void *arg, char type, uint32_t id, const char *p, size_t n)
{
	(void)type;
	(void)id;
	(void)p;
	(void)n;
	++*(int *)arg;
	return 1;
}

static void test_runner_frames_bad(void **state)
{
	(void)state;
	struct dk_rframes f;
	buf_init(&f.in, 0);
	struct buf b;
	buf_init(&b, 0);
	/* a length over the maximum is refused before waiting for it */
	rf_put(&b, 'o', 1, "", 0);
	b.data[5] = 0x7f;
	int calls = 0;
	assert_int_equal(
	    dk_rframes_feed(&f, b.data, b.len, 1u << 20, rf_stop, &calls), -1);
	assert_int_equal(calls, 0);
	buf_free(&f.in);
	/* a callback that stops the parser: nothing more is delivered */
	buf_init(&f.in, 0);
	buf_reset(&b);
	rf_put(&b, 'o', 1, "a", 1);
	rf_put(&b, 'o', 1, "b", 1);
	assert_int_equal(
	    dk_rframes_feed(&f, b.data, b.len, 1u << 20, rf_stop, &calls), 1);
	assert_int_equal(calls, 1);
	buf_free(&f.in);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_whole),
	    cmocka_unit_test(test_every_split),
	    cmocka_unit_test(test_small_pieces),
	    cmocka_unit_test(test_not_idle_mid_frame),
	    cmocka_unit_test(test_bad_header),
	    cmocka_unit_test(test_runner_frames_split),
	    cmocka_unit_test(test_runner_frames_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
