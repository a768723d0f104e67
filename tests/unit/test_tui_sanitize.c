/* test_tui_sanitize.c: the one filter between untrusted bytes and the
 * terminal (src/tui/sanitize.c): SGR kept, every other sequence and
 * control byte neutralised, \r progress overwritten, wide characters,
 * broken UTF-8, sequences split across reads, bounded lines. The TUI
 * files are compiled into the binary, not the library, so the test
 * includes them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tui/text.c"
#include "assay/termtext.h"
#include "tui/sanitize.c"

#include <locale.h>

struct lines {
	char *l[64];
	int n;
};

static void collect(void *arg, const char *line, size_t n)
{
	struct lines *ls = arg;
	if (ls->n < 64)
		ls->l[ls->n++] = xstrndup(line, n);
}

static void lines_free(struct lines *ls)
{
	for (int i = 0; i < ls->n; i++)
		free(ls->l[i]);
	ls->n = 0;
}

/* Feed s, flush, and return the lines. */
static void run(struct lines *ls, const char *s, size_t n)
{
	struct ui_term t;
	ls->n = 0;
	ui_term_init(&t, collect, ls);
	ui_term_feed(&t, s, n);
	ui_term_flush(&t);
	ui_term_free(&t);
}

/* Nothing a terminal would act on may be left, except our SGR. */
static void assert_safe(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == 0x1b) {
			assert_int_equal(p[1], '[');
			const unsigned char *q = p + 2;
			while ((*q >= '0' && *q <= '9') || *q == ';')
				q++;
			assert_int_equal(*q, 'm');
			p = q;
			continue;
		}
		assert_true(*p >= 0x20 && *p != 0x7f);
	}
	uint32_t cp;
	for (size_t i = 0, n = strlen(s); i < n;) {
		i += ui_u8_decode(s + i, n - i, &cp);
		assert_false(cp >= 0x80 && cp < 0xa0);
	}
}

static void test_plain_lines(void **state)
{
	(void)state;
	struct lines ls;
	run(&ls, "one\ntwo\r\nthree", 14);
	assert_int_equal(ls.n, 3);
	assert_string_equal(ls.l[0], "one");
	assert_string_equal(ls.l[1], "two");
	assert_string_equal(ls.l[2], "three");
	lines_free(&ls);
}

static void test_carriage_return_overwrites(void **state)
{
	(void)state;
	struct lines ls;
	const char *s = "progress 10%\rprogress 100%\n"
	                "abcdef\rXY\n"
	                "50%\r\033[Kdone\n";
	run(&ls, s, strlen(s));
	assert_int_equal(ls.n, 3);
	assert_string_equal(ls.l[0], "progress 100%");
	assert_string_equal(ls.l[1], "XYcdef");
	assert_string_equal(ls.l[2], "done");
	lines_free(&ls);
}

static void test_sgr_kept(void **state)
{
	(void)state;
	struct lines ls;
	const char *s =
	    "\033[1;31mred\033[0m plain \033[38;5;208mo\033[38;2;1;2;3mt";
	run(&ls, s, strlen(s));
	assert_int_equal(ls.n, 1);
	assert_string_equal(ls.l[0], "\033[0;1;38;5;1mred\033[0m plain "
	                             "\033[0;38;5;208mo\033[0;38;2;1;2;3mt"
	                             "\033[0m");
	assert_safe(ls.l[0]);
	lines_free(&ls);
}

static void test_other_sequences_dropped(void **state)
{
	(void)state;
	struct lines ls;
	/* title (OSC 0 and 2, BEL and ST ended), clipboard (OSC 52),
	 * hyperlink, cursor moves, clear screen, alternate screen, DCS,
	 * APC, charset, RIS, device queries */
	const char *s = "a\033]0;pwned\007b\033]2;x\033\\c\033]52;c;Zm9v\007d"
	                "\033]8;;http://x\033\\link\033]8;;\033\\"
	                "\033[2J\033[H\033[10;10H\033[?1049h\033[6n"
	                "\033P+q544e\033\\\033_apc\033\\\033(B\033c\033[>c"
	                "e";
	run(&ls, s, strlen(s));
	assert_int_equal(ls.n, 1);
	assert_string_equal(ls.l[0], "abcdlinke");
	lines_free(&ls);
}

static void test_controls_visible(void **state)
{
	(void)state;
	struct lines ls;
	const char s[] = "bell\007 nul\0 del\177 so\016";
	run(&ls, s, sizeof s - 1);
	assert_int_equal(ls.n, 1);
	char *plain = ui_st_plain(ls.l[0], strlen(ls.l[0]));
	assert_string_equal(plain, "bell^G nul^@ del^? so^N");
	free(plain);
	assert_safe(ls.l[0]);
	lines_free(&ls);
}

static void test_c1_and_bidi_neutralised(void **state)
{
	(void)state;
	struct lines ls;
	/* U+009B is CSI for an 8-bit terminal; U+202E reverses text;
	 * a raw 0x9b byte is not UTF-8 at all */
	const char *s = "a\xc2\x9b"
	                "31mb\xe2\x80\xae"
	                "c\x9b"
	                "d";
	run(&ls, s, strlen(s));
	char *plain = ui_st_plain(ls.l[0], strlen(ls.l[0]));
	assert_string_equal(plain, "a<U+009B>31mb<U+202E>c\xef\xbf\xbd"
	                           "d");
	free(plain);
	assert_safe(ls.l[0]);
	lines_free(&ls);
}

/* The stream shows every bidi control as term_clean does: by its code
 * point, never raw. */
static void test_every_bidi_control(void **state)
{
	(void)state;
	static const uint32_t bidi[] = {0x202A, 0x202B, 0x202C, 0x202D,
	                                0x202E, 0x2066, 0x2067, 0x2068,
	                                0x2069, 0x200E, 0x200F, 0x061C};
	for (size_t k = 0; k < sizeof bidi / sizeof *bidi; k++) {
		char u[4], in[16], want[16];
		size_t n = ui_u8_encode(bidi[k], u);
		snprintf(in, sizeof in, "x%.*sy\n", (int)n, u);
		snprintf(want, sizeof want, "x<U+%04X>y", (unsigned)bidi[k]);
		struct lines ls;
		run(&ls, in, strlen(in));
		assert_int_equal(ls.n, 1);
		char *plain = ui_st_plain(ls.l[0], strlen(ls.l[0]));
		assert_string_equal(plain, want);
		free(plain);
		assert_safe(ls.l[0]);
		assert_null(memmem(ls.l[0], strlen(ls.l[0]), u, n));
		char *c = term_clean(in, strlen(in) - 1, 0);
		assert_string_equal(c, want);
		free(c);
		lines_free(&ls);
	}
}

static void test_split_feeds(void **state)
{
	(void)state;
	/* a sequence and a UTF-8 character split at every byte */
	const char *s = "x\033[32mgr\xc3\xa9\033]0;t\007n\xe4\xb8\xad\n";
	struct lines ls = {0};
	struct ui_term t;
	ui_term_init(&t, collect, &ls);
	for (size_t i = 0; s[i]; i++)
		ui_term_feed(&t, s + i, 1);
	ui_term_flush(&t);
	ui_term_free(&t);
	assert_int_equal(ls.n, 1);
	assert_string_equal(ls.l[0], "x\033[0;38;5;2mgr\xc3\xa9n\xe4\xb8\xad"
	                             "\033[0m");
	lines_free(&ls);
}

static void test_wide_overwrite(void **state)
{
	(void)state;
	struct lines ls;
	/* a narrow character over half of a wide one blanks the rest */
	const char *s = "\xe4\xb8\xad\xe6\x96\x87\rab\n";
	run(&ls, s, strlen(s));
	assert_string_equal(ls.l[0], "ab\xe6\x96\x87");
	lines_free(&ls);
	s = "ab\rX\xe4\xb8\xad\n"; /* the wide one lands at col 1 */
	run(&ls, s, strlen(s));
	assert_string_equal(ls.l[0], "X\xe4\xb8\xad");
	lines_free(&ls);
	assert_int_equal(ui_st_width("\xe4\xb8\xad"
	                             "a",
	                             4),
	                 3);
}

static void test_long_line_is_broken(void **state)
{
	(void)state;
	size_t n = UI_TERM_MAX_COLS * 2 + 10;
	char *s = xmalloc(n);
	memset(s, 'x', n);
	struct lines ls;
	run(&ls, s, n);
	assert_int_equal(ls.n, 3);
	assert_int_equal(strlen(ls.l[0]), UI_TERM_MAX_COLS);
	assert_int_equal(strlen(ls.l[2]), 10);
	lines_free(&ls);
	free(s);
}

static void test_unterminated_string_swallowed(void **state)
{
	(void)state;
	/* an OSC that never ends eats what follows (as a terminal
	 * would) but nothing reaches the output */
	struct lines ls;
	const char *s = "ok\n\033]0;never ending\nmore\nlines";
	run(&ls, s, strlen(s));
	assert_int_equal(ls.n, 1);
	assert_string_equal(ls.l[0], "ok");
	lines_free(&ls);
}

static void test_tabs_and_backspace(void **state)
{
	(void)state;
	struct lines ls;
	const char *s = "a\tb\nabc\b\bX\n";
	run(&ls, s, strlen(s));
	assert_string_equal(ls.l[0], "a       b");
	assert_string_equal(ls.l[1], "aXc");
	lines_free(&ls);
}

static void test_clean_names(void **state)
{
	(void)state;
	const char name[] = "evil\033]0;pwned\007\nname\xe2\x80\xae\x01";
	char *c = term_clean(name, sizeof name - 1, 0);
	assert_string_equal(c, "evil^[]0;pwned^G^Jname<U+202E>^A");
	free(c);
	c = term_clean("a\r\nb\tc", 6, TERM_CLEAN_NEWLINES | TERM_CLEAN_TABS);
	assert_string_equal(c, "a\nb   c");
	free(c);
	/* markers cannot be forged: they are control bytes */
	c = term_clean("\x01\x05x\x02", 4, 0);
	assert_string_equal(c, "^A^Ex^B");
	assert_int_equal(ui_st_marker(c, strlen(c)), 0);
	free(c);
	/* invalid UTF-8 (a lone 0x9b is CSI to an 8-bit terminal) becomes
	 * U+FFFD, never the byte itself */
	c = term_clean("a\x9b"
	               "2Jb\xff",
	               6, 0);
	assert_string_equal(c, "a\xEF\xBF\xBD"
	                       "2Jb\xEF\xBF\xBD");
	free(c);
}

int main(void)
{
	setlocale(LC_ALL, "C.UTF-8");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain_lines),
	    cmocka_unit_test(test_carriage_return_overwrites),
	    cmocka_unit_test(test_sgr_kept),
	    cmocka_unit_test(test_other_sequences_dropped),
	    cmocka_unit_test(test_controls_visible),
	    cmocka_unit_test(test_c1_and_bidi_neutralised),
	    cmocka_unit_test(test_every_bidi_control),
	    cmocka_unit_test(test_split_feeds),
	    cmocka_unit_test(test_wide_overwrite),
	    cmocka_unit_test(test_long_line_is_broken),
	    cmocka_unit_test(test_unterminated_string_swallowed),
	    cmocka_unit_test(test_tabs_and_backspace),
	    cmocka_unit_test(test_clean_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
