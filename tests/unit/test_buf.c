/* test_buf.c: bounded buffers, the head+tail capture, UTF-8 and
 * terminal sanitising, sha256. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/buf.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

static void test_buf_max(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b, 8);
	assert_int_equal(buf_puts(&b, "12345"), 0);
	assert_int_equal(buf_puts(&b, "6789"), -1); /* would pass 8 */
	assert_int_equal(b.len, 5);
	assert_int_equal(buf_puts(&b, "678"), 0);
	assert_string_equal(buf_str(&b), "12345678");
	buf_consume(&b, 3);
	assert_string_equal(buf_str(&b), "45678");
	buf_free(&b);
}

static void test_headtail_small_is_whole(void **state)
{
	(void)state;
	struct headtail h;
	headtail_init(&h, 10, 10);
	headtail_feed(&h, "hello ", 6);
	headtail_feed(&h, "world", 5);
	char *s = headtail_render(&h, "x");
	assert_string_equal(s, "hello world");
	free(s);
	headtail_free(&h);
}

static void test_headtail_bounded(void **state)
{
	(void)state;
	struct headtail h;
	headtail_init(&h, 100, 100);
	char chunk[1000];
	for (int i = 0; i < 10000; i++) { /* 10 MB through 200 bytes */
		memset(chunk, 'a' + i % 26, sizeof chunk);
		headtail_feed(&h, chunk, sizeof chunk);
	}
	headtail_feed(&h, "THE-END", 7);
	char *s = headtail_render(&h, "exec/1.stdout");
	assert_true(strlen(s) < 400);
	assert_int_equal(strncmp(s, "aaaa", 4), 0);
	assert_non_null(strstr(s, "omitted"));
	assert_non_null(strstr(s, "exec/1.stdout"));
	assert_non_null(strstr(s, "10000007 in total"));
	assert_non_null(strstr(s, "THE-END"));
	assert_int_equal(h.total, 10000007);
	free(s);
	headtail_free(&h);
}

static void test_headtail_utf8_cuts(void **state)
{
	(void)state;
	struct headtail h;
	headtail_init(&h, 5, 5);
	/* "é" is 2 bytes: the head cut at 5 falls inside one */
	const char *text = "ab\xc3\xa9\xc3\xa9----------\xc3\xa9\xc3\xa9z";
	headtail_feed(&h, text, strlen(text));
	char *s = headtail_render(&h, NULL);
	size_t n;
	char *clean = utf8_sanitize(s, strlen(s), &n);
	assert_string_equal(s, clean); /* no broken sequence left */
	free(clean);
	free(s);
	headtail_free(&h);
}

static void test_utf8(void **state)
{
	(void)state;
	char *s = utf8_sanitize("ok\xff\xc3(\xe2\x82\xac", 8, NULL);
	assert_string_equal(s, "ok\xef\xbf\xbd\xef\xbf\xbd(\xe2\x82\xac");
	free(s);
	assert_int_equal(utf8_complete_prefix("ab\xe2\x82", 4), 2);
	assert_int_equal(utf8_complete_prefix("ab\xe2\x82\xac", 5), 5);
	assert_int_equal(utf8_complete_prefix("ab", 2), 2);
}

/* One character at a time: its length and code point; anything that
 * is not a whole valid sequence is one byte of U+FFFD. */
static void test_utf8_decode(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		size_t n, len;
		uint32_t cp;
	} cases[] = {
	    {"A", 1, 1, 'A'},
	    {"\0", 1, 1, 0},
	    {"\xc3\xa9", 2, 2, 0xE9},
	    {"\xe2\x80\xae", 3, 3, 0x202E},
	    {"\xf0\x9f\x98\x80", 4, 4, 0x1F600},
	    {"\xe2\x80", 2, 1, 0xFFFD},         /* cut short */
	    {"\xc0\x9b", 2, 1, 0xFFFD},         /* overlong */
	    {"\xed\xa0\x80", 3, 1, 0xFFFD},     /* surrogate */
	    {"\xf4\x90\x80\x80", 4, 1, 0xFFFD}, /* past U+10FFFF */
	    {"\x9b", 1, 1, 0xFFFD},             /* a lone continuation */
	    {"", 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		uint32_t cp = 1;
		assert_int_equal(utf8_decode(cases[i].s, cases[i].n, &cp),
		                 cases[i].len);
		assert_int_equal(cp, cases[i].cp);
	}
}

static void test_sha256(void **state)
{
	(void)state;
	char out[65];
	sha256_hex("abc", 3, out);
	assert_string_equal(out, "ba7816bf8f01cfea414140de5dae2223"
	                         "b00361a396177a9cb410ff61f20015ad");
	sha256_hex("", 0, out);
	assert_string_equal(out, "e3b0c44298fc1c149afbf4c8996fb924"
	                         "27ae41e4649b934ca495991b7852b855");
	char big[1000];
	memset(big, 'a', sizeof big);
	sha256_hex(big, 56, out); /* padding spills into a second block */
	assert_string_equal(out, "b35439a4ac6f0948b6d6f9e3c6af0f5f"
	                         "590ce20f1bde7090ef7970686ec6738a");
}

static void test_bytes_human(void **state)
{
	(void)state;
	char out[16];
	const struct {
		double n;
		const char *s;
	} cases[] = {{0, "0 B"},          {999, "999 B"},
	             {1000, "1.0 kB"},    {12345, "12 kB"},
	             {340e6, "340 MB"},   {2147483648.0, "2.1 GB"},
	             {9.99e15, "9990 TB"}};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		bytes_human(cases[i].n, out);
		assert_string_equal(out, cases[i].s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_buf_max),
	    cmocka_unit_test(test_headtail_small_is_whole),
	    cmocka_unit_test(test_headtail_bounded),
	    cmocka_unit_test(test_headtail_utf8_cuts),
	    cmocka_unit_test(test_utf8),
	    cmocka_unit_test(test_utf8_decode),
	    cmocka_unit_test(test_sha256),
	    cmocka_unit_test(test_bytes_human),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
