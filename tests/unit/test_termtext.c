/* test_termtext.c: the one sanitizer between untrusted text and a
 * terminal (src/core/termtext.c): escapes and control bytes shown as
 * ^X, C1 and every bidi or invisible formatting character as <U+XXXX>,
 * invalid UTF-8 as U+FFFD (never the byte), newlines and tabs only as
 * the flags say; printable text (accents, wide and combining
 * characters) kept as it is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/termtext.h"
#include "assay/util.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bidi controls: embeddings and overrides, isolates, marks. */
static const uint32_t bidi[] = {0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066,
                                0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C};

/* UTF-8 of cp into out (NUL-terminated). */
static void enc(uint32_t cp, char out[5])
{
	if (cp < 0x80) {
		out[0] = (char)cp, out[1] = 0;
	} else if (cp < 0x800) {
		out[0] = (char)(0xC0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3F)), out[2] = 0;
	} else {
		out[0] = (char)(0xE0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F)), out[3] = 0;
	}
}

/* Nothing a terminal would act on: no byte below 0x20 but the kept \n
 * and \t, no DEL, no C1 or bidi character. */
static void assert_inert(const char *s, int nl_tab_ok)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = utf8_decode(s + i, n - i, &cp);
		if (nl_tab_ok && (cp == '\n' || cp == '\t')) {
			i += len;
			continue;
		}
		assert_true(cp >= 0x20 && cp != 0x7f);
		assert_false(cp >= 0x80 && cp < 0xA0);
		for (size_t k = 0; k < sizeof bidi / sizeof *bidi; k++)
			assert_true(cp != bidi[k]);
		i += len;
	}
}

static void test_escapes_and_controls(void **state)
{
	(void)state;
	const char name[] = "evil\033]0;pwned\007\nname\xe2\x80\xae\x01";
	char *c = term_clean(name, sizeof name - 1, 0);
	assert_string_equal(c, "evil^[]0;pwned^G^Jname<U+202E>^A");
	assert_inert(c, 0);
	free(c);
	/* markers of styled text cannot be forged: they are controls */
	c = term_clean("\x01\x05x\x02", 4, 0);
	assert_string_equal(c, "^A^Ex^B");
	free(c);
	/* NUL and DEL (a length, not a C string) */
	c = term_clean("a\0b\x7f", 4, 0);
	assert_string_equal(c, "a^@b^?");
	free(c);
}

/* What the headless printer used term_sanitize for: an SGR, a title
 * and an 8-bit CSI all shown, never obeyed; lines and tabs kept. */
static void test_headless_flags(void **state)
{
	(void)state;
	const char *evil = "red\033[31m\x07title\033]0;pwn\x07\xc2\x9b"
	                   "2J\n\tx";
	int fl = TERM_CLEAN_NEWLINES | TERM_CLEAN_KEEP_TABS;
	char *s = term_clean(evil, strlen(evil), fl);
	assert_null(strchr(s, '\033'));
	assert_null(strchr(s, '\x07'));
	assert_null(strstr(s, "\xc2\x9b"));
	assert_non_null(strstr(s, "^["));
	assert_string_equal(s, "red^[[31m^Gtitle^[]0;pwn^G<U+009B>2J\n\tx");
	assert_inert(s, 1);
	free(s);
}

static void test_newlines_and_tabs(void **state)
{
	(void)state;
	char *c =
	    term_clean("a\r\nb\tc", 6, TERM_CLEAN_NEWLINES | TERM_CLEAN_TABS);
	assert_string_equal(c, "a\nb   c");
	free(c);
	/* without the flags both are shown */
	c = term_clean("a\r\nb\tc", 6, 0);
	assert_string_equal(c, "a^M^Jb^Ic");
	free(c);
	/* a lone \r would go back over the line: shown, even with
	 * newlines kept */
	c = term_clean("rm -rf /\rls", 11, TERM_CLEAN_NEWLINES);
	assert_string_equal(c, "rm -rf /^Mls");
	free(c);
	/* tabs kept as they are; expansion wins over keeping */
	c = term_clean("\ta\tb", 4, TERM_CLEAN_KEEP_TABS);
	assert_string_equal(c, "\ta\tb");
	free(c);
	c = term_clean("ab\tc", 4, TERM_CLEAN_TABS | TERM_CLEAN_KEEP_TABS);
	assert_string_equal(c, "ab  c");
	free(c);
	/* tab stops count what the shown forms take */
	c = term_clean("\x01\t|", 3, TERM_CLEAN_TABS);
	assert_string_equal(c, "^A  |");
	free(c);
}

/* Every bidi control, alone and inside text, in every flag set. */
static void test_bidi_visible(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof bidi / sizeof *bidi; k++) {
		char u[5], in[32], want[32];
		enc(bidi[k], u);
		snprintf(in, sizeof in, "a%sb", u);
		snprintf(want, sizeof want, "a<U+%04X>b", (unsigned)bidi[k]);
		for (int fl = 0; fl < 8; fl++) {
			char *c = term_clean(in, strlen(in), fl);
			assert_string_equal(c, want);
			assert_inert(c, 0);
			free(c);
		}
		assert_int_equal(term_cp_form(bidi[k]), TERM_CODE);
	}
	/* the other invisible formatting characters too */
	const uint32_t other[] = {0x00AD, 0x200B, 0x200C, 0x200D, 0x2060,
	                          0x2064, 0x206F, 0xFEFF, 0xFFF9, 0xFFFB};
	for (size_t k = 0; k < sizeof other / sizeof *other; k++)
		assert_int_equal(term_cp_form(other[k]), TERM_CODE);
}

static void test_c1_and_invalid(void **state)
{
	(void)state;
	for (uint32_t cp = 0x80; cp < 0xA0; cp++) {
		char u[5], want[16];
		enc(cp, u);
		snprintf(want, sizeof want, "<U+%04X>", (unsigned)cp);
		char *c = term_clean(u, strlen(u), TERM_CLEAN_NEWLINES);
		assert_string_equal(c, want);
		free(c);
	}
	/* invalid UTF-8 (a lone 0x9b is CSI to an 8-bit terminal; an
	 * overlong ESC; a surrogate; a cut sequence) becomes U+FFFD,
	 * never the byte itself */
	char *c = term_clean("a\x9b"
	                     "2Jb\xff",
	                     6, 0);
	assert_string_equal(c, "a\xEF\xBF\xBD"
	                       "2Jb\xEF\xBF\xBD");
	free(c);
	c = term_clean("\xc0\x9b|\xed\xa0\x80|\xe2\x80", 9, 0);
	assert_string_equal(c, "\xEF\xBF\xBD\xEF\xBF\xBD|\xEF\xBF\xBD"
	                       "\xEF\xBF\xBD\xEF\xBF\xBD|\xEF\xBF\xBD"
	                       "\xEF\xBF\xBD");
	assert_inert(c, 0);
	free(c);
	for (uint32_t cp = 0; cp < 0x20; cp++)
		assert_int_equal(term_cp_form(cp), TERM_CARET);
	assert_int_equal(term_cp_form(0x7f), TERM_CARET);
}

/* Printable text is not touched: accents, CJK (wide), combining marks,
 * emoji, a real U+FFFD. */
static void test_printable_kept(void **state)
{
	(void)state;
	const char *s = "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac e\xcc\x81 "
	                "\xf0\x9f\x98\x80 \xef\xbf\xbd ok";
	char *c = term_clean(s, strlen(s), 0);
	assert_string_equal(c, s);
	free(c);
	assert_int_equal(term_cp_width(0x65E5), 2);
	assert_int_equal(term_cp_width(0x0301), 0);
	assert_int_equal(term_cp_width('a'), 1);
	assert_int_equal(term_cp_width(0x1b), -1);
	assert_int_equal(term_cp_width(0x85), -1);
	assert_int_equal(term_cp_form(0xE9), TERM_AS_IS);
	/* a noncharacter has no width: shown by its code point */
	c = term_clean("\xef\xbf\xbf", 3, 0);
	assert_string_equal(c, "<U+FFFF>");
	free(c);
}

/* In a locale without UTF-8 the terminal cannot show what is not
 * ASCII: it is named, never passed as bytes a Latin-1 terminal could
 * read as C1 controls. */
static void test_ascii_locale(void **state)
{
	(void)state;
	setlocale(LC_ALL, "C");
	char *c = term_clean("caf\xc3\xa9 \xe2\x80\xae", 9, 0);
	assert_string_equal(c, "caf<U+00E9> <U+202E>");
	free(c);
	setlocale(LC_ALL, "C.UTF-8");
}

int main(void)
{
	setlocale(LC_ALL, "C.UTF-8"); /* as assay runs */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_escapes_and_controls),
	    cmocka_unit_test(test_headless_flags),
	    cmocka_unit_test(test_newlines_and_tabs),
	    cmocka_unit_test(test_bidi_visible),
	    cmocka_unit_test(test_c1_and_invalid),
	    cmocka_unit_test(test_printable_kept),
	    cmocka_unit_test(test_ascii_locale),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
