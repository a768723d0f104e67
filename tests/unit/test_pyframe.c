/* test_pyframe.c: the framing between assay and its Python kernel
 * (src/agent/pyframe.c): frames split at every possible place, a large
 * stream in odd-sized reads with the reader's memory bounded, payloads
 * that are not UTF-8 (or hold NULs) delivered byte for byte, and
 * streams that cannot be valid refused at once. Also the prompt's
 * rendering of the kernel's hello. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/agent_internal.h"
#include "assay/config.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

struct got {
	int n;
	char types[64];
	struct buf payloads; /* all payloads, each followed by '|' */
	uint64_t bytes;      /* payload bytes seen, when not kept */
	int keep;
};

static void on_frame(void *arg, char type, const char *p, size_t n)
{
	struct got *g = arg;
	if (g->n < 63)
		g->types[g->n] = type;
	g->n++;
	g->bytes += n;
	if (g->keep) {
		buf_append(&g->payloads, p, n);
		buf_append(&g->payloads, "|", 1);
	}
}

static void got_init(struct got *g)
{
	memset(g, 0, sizeof *g);
	buf_init(&g->payloads, 0);
	g->keep = 1;
}

/* Three frames, one empty and one not UTF-8 with a NUL inside. */
static void sample_stream(struct buf *s)
{
	buf_init(s, 0);
	pyframe_encode(s, 'h', "{\"python\":\"3\"}", 14);
	pyframe_encode(s, 'o', "", 0);
	pyframe_encode(s, 'e', "bad \xff\xfe\0 \xe2\x82", 10);
	pyframe_encode(s, 'r', "{}", 2);
}

static void check_sample(const struct got *g)
{
	assert_int_equal(g->n, 4);
	assert_memory_equal(g->types, "hoer", 4);
	static const char want[] =
	    "{\"python\":\"3\"}||bad \xff\xfe\0 \xe2\x82|{}|";
	assert_int_equal(g->payloads.len, sizeof want - 1);
	assert_memory_equal(g->payloads.data, want, sizeof want - 1);
}

static void test_encode_header(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b, 0);
	pyframe_encode(&b, 'x', "abc", 3);
	assert_int_equal(b.len, 8);
	assert_memory_equal(b.data, "x\0\0\0\3abc", 8);
	buf_reset(&b);
	char big[300];
	memset(big, 'a', sizeof big);
	pyframe_encode(&b, 'i', big, sizeof big);
	assert_memory_equal(b.data, "i\0\0\1\x2c", 5);
	buf_free(&b);
}

/* Whole, then cut at every offset into two reads, then byte by byte:
 * the same frames every time. */
static void test_partial_reads(void **state)
{
	(void)state;
	struct buf s;
	sample_stream(&s);
	for (size_t cut = 0; cut <= s.len; cut++) {
		struct pyframe_reader r;
		struct got g;
		char *err = NULL;
		pyframe_reader_init(&r, "hoer", 1024);
		got_init(&g);
		assert_int_equal(
		    pyframe_feed(&r, s.data, cut, on_frame, &g, &err), 0);
		assert_int_equal(pyframe_feed(&r, s.data + cut, s.len - cut,
		                              on_frame, &g, &err),
		                 0);
		check_sample(&g);
		assert_int_equal(r.partial.len, 0);
		buf_free(&g.payloads);
		pyframe_reader_free(&r);
	}
	struct pyframe_reader r;
	struct got g;
	pyframe_reader_init(&r, "hoer", 1024);
	got_init(&g);
	for (size_t i = 0; i < s.len; i++)
		assert_int_equal(
		    pyframe_feed(&r, s.data + i, 1, on_frame, &g, NULL), 0);
	check_sample(&g);
	buf_free(&g.payloads);
	pyframe_reader_free(&r);
	buf_free(&s);
}

/* 64 MiB of output frames in reads of odd sizes: every byte arrives,
 * and the reader never holds more than one frame. */
static void test_huge_stream_bounded(void **state)
{
	(void)state;
	enum { FRAME = 65536, COUNT = 1024 };
	struct buf one;
	buf_init(&one, 0);
	char *payload = xmalloc(FRAME);
	for (size_t i = 0; i < FRAME; i++)
		payload[i] = (char)(i * 7);
	pyframe_encode(&one, 'o', payload, FRAME);
	struct pyframe_reader r;
	struct got g;
	pyframe_reader_init(&r, "hoer", PYFRAME_MAX);
	got_init(&g);
	g.keep = 0;
	size_t sizes[] = {1, 4099, 65541, 3, 200000, 5, 65536};
	size_t k = 0, pos = 0, most = 0;
	uint64_t total = (uint64_t)one.len * COUNT, fed = 0;
	while (fed < total) {
		size_t want = sizes[k++ % (sizeof sizes / sizeof *sizes)];
		/* the next want bytes of the endless repetition of one */
		while (want > 0 && fed < total) {
			size_t n = one.len - pos < want ? one.len - pos : want;
			assert_int_equal(pyframe_feed(&r, one.data + pos, n,
			                              on_frame, &g, NULL),
			                 0);
			pos = (pos + n) % one.len;
			want -= n;
			fed += n;
			if (r.partial.cap > most)
				most = r.partial.cap;
		}
	}
	assert_int_equal(g.n, COUNT);
	assert_true(g.bytes == (uint64_t)FRAME * COUNT);
	assert_int_equal(r.partial.len, 0);
	/* one frame at most (buffer growth rounds up to a power of 2) */
	assert_true(most <= 2 * (FRAME + PYFRAME_HEADER));
	pyframe_reader_free(&r);
	buf_free(&one);
	free(payload);
}

/* A frame announcing more than the limit is refused before anything
 * is allocated for it, whether its header comes whole or in pieces. */
static void test_oversized_refused(void **state)
{
	(void)state;
	static const char h[] = "o\xff\xff\xff\xf0";
	for (size_t cut = 0; cut <= 5; cut++) {
		struct pyframe_reader r;
		struct got g;
		char *err = NULL;
		pyframe_reader_init(&r, "hoer", PYFRAME_MAX);
		got_init(&g);
		int rc = pyframe_feed(&r, h, cut, on_frame, &g, &err);
		if (rc == 0)
			rc = pyframe_feed(&r, h + cut, 5 - cut, on_frame, &g,
			                  &err);
		assert_int_equal(rc, -1);
		assert_non_null(err);
		assert_non_null(strstr(err, "4294967280 bytes"));
		assert_int_equal(g.n, 0);
		assert_true(r.partial.cap <= 64);
		free(err);
		buf_free(&g.payloads);
		pyframe_reader_free(&r);
	}
}

/* Bytes that are not frames (a stray print on the protocol fd) stop
 * the stream at the first header; frames before it still count. */
static void test_unknown_type_refused(void **state)
{
	(void)state;
	struct buf s;
	buf_init(&s, 0);
	pyframe_encode(&s, 'o', "ok", 2);
	buf_puts(&s, "Traceback (most recent call last):\n");
	struct pyframe_reader r;
	struct got g;
	char *err = NULL;
	pyframe_reader_init(&r, "hoer", 1024);
	got_init(&g);
	assert_int_equal(pyframe_feed(&r, s.data, s.len, on_frame, &g, &err),
	                 -1);
	assert_int_equal(g.n, 1);
	assert_non_null(strstr(err, "unknown frame type 0x54"));
	free(err);
	err = NULL;
	/* a type assay sends but a kernel must not */
	buf_reset(&s);
	pyframe_encode(&s, 'x', "{}", 2);
	pyframe_reader_free(&r);
	pyframe_reader_init(&r, "hoer", 1024);
	assert_int_equal(pyframe_feed(&r, s.data, 1, on_frame, &g, &err), 0);
	assert_int_equal(
	    pyframe_feed(&r, s.data + 1, s.len - 1, on_frame, &g, &err), -1);
	assert_non_null(strstr(err, "0x78"));
	free(err);
	buf_free(&g.payloads);
	pyframe_reader_free(&r);
	buf_free(&s);
}

/* The hello's libraries end up in the prompt with their versions and
 * import names; invalid UTF-8 from a kernel does not reach it raw. */
static void test_prompt_python(void **state)
{
	(void)state;
	struct config cfg;
	config_defaults(&cfg);
	char *p = xstrdup("base\n");
	cJSON *h = cJSON_Parse(
	    "{\"python\":\"3.11.2\",\"packages\":["
	    "{\"name\":\"numpy\",\"version\":\"1.24.2\",\"import\":\"numpy\"},"
	    "{\"name\":\"scikit-learn\",\"version\":\"1.2.1\","
	    "\"import\":\"sklearn\"},"
	    "{\"name\":\"mpmath\",\"version\":\"0.0.0\",\"import\":\"mpmath\"}"
	    "]}");
	prompt_add_python(&p, &cfg, h, NULL);
	assert_non_null(strstr(p, "base\n"));
	assert_non_null(strstr(p, "Python 3.11.2 with numpy 1.24.2, "
	                          "scikit-learn 1.2.1 (import sklearn), "
	                          "mpmath;"));
	assert_non_null(strstr(p, "no network"));
	cJSON_Delete(h);
	free(p);
	p = xstrdup("");
	prompt_add_python(&p, &cfg, NULL, "python3: not found");
	assert_non_null(strstr(p, "not available in this sandbox "
	                          "(python3: not found)"));
	free(p);
	config_free(&cfg);
}

/* The built-in instructions and the kernel are embedded in the binary;
 * ASSAY_DATA_DIR replaces them only when it holds the file. */
static void test_data_files(void **state)
{
	(void)state;
	char *k =
	    agent_data_file("kernel/assay_kernel.py", embed_assay_kernel_py);
	assert_non_null(strstr(k, "def main():"));
	free(k);
	char tmpl[] = "/tmp/assay-pyframe-XXXXXX";
	char *dir = mkdtemp(tmpl);
	assert_non_null(dir);
	char *sub = xasprintf("%s/share", dir);
	assert_int_equal(mkdir_p(sub, NULL), 0);
	char *f = xasprintf("%s/instructions.md", sub);
	assert_int_equal(write_file_replace(f, "custom\n", 7, NULL), 0);
	setenv("ASSAY_DATA_DIR", dir, 1);
	char *i = agent_data_file("instructions.md", embed_instructions_md);
	assert_string_equal(i, "custom\n");
	free(i);
	k = agent_data_file("kernel/assay_kernel.py", embed_assay_kernel_py);
	assert_string_equal(k, embed_assay_kernel_py);
	free(k);
	unsetenv("ASSAY_DATA_DIR");
	i = agent_data_file("instructions.md", embed_instructions_md);
	assert_non_null(strstr(i, "practical data analyst"));
	free(i);
	rm_rf(dir);
	free(f);
	free(sub);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_encode_header),
	    cmocka_unit_test(test_partial_reads),
	    cmocka_unit_test(test_huge_stream_bounded),
	    cmocka_unit_test(test_oversized_refused),
	    cmocka_unit_test(test_unknown_type_refused),
	    cmocka_unit_test(test_prompt_python),
	    cmocka_unit_test(test_data_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
