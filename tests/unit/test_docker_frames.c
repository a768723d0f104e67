/* test_docker_frames.c: the demultiplexer of Docker's exec stream. A
 * stream of frames (empty, small, larger than any read, every type) is
 * fed whole, split at every byte boundary, and byte by byte; the
 * output must be the same each time: every payload byte once, on the
 * right stream, in order. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_whole),
	    cmocka_unit_test(test_every_split),
	    cmocka_unit_test(test_small_pieces),
	    cmocka_unit_test(test_not_idle_mid_frame),
	    cmocka_unit_test(test_bad_header),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
