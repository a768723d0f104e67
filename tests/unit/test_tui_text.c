/* test_tui_text.c: display text for the TUI: display width of UTF-8
 * (wide characters), word wrapping with style carried across rows,
 * cutting, search highlighting, and the light markdown of the
 * conversation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tui/text.c"
#include "tui/sanitize.c"
#include "tui/markdown.c"

#include <locale.h>

static char *plain(const char *st)
{
	return ui_st_plain(st, strlen(st));
}

static void test_width(void **state)
{
	(void)state;
	assert_int_equal(ui_st_width("abc", 3), 3);
	assert_int_equal(ui_st_width("\xe4\xb8\xad\xe6\x96\x87", 6), 4);
	assert_int_equal(ui_st_width("\xc3\xa9", 2), 1);
	/* markers take no room */
	assert_int_equal(ui_st_width("\x01\x05"
	                             "ab\033[0;1mc\002d\003",
	                             13),
	                 4);
	uint32_t cp;
	assert_int_equal(ui_u8_decode("\xc0\xaf", 2, &cp), 1); /* overlong */
	assert_int_equal(cp, 0xFFFD);
	assert_int_equal(ui_u8_decode("\xed\xa0\x80", 3, &cp),
	                 1); /* surrogate */
	assert_int_equal(cp, 0xFFFD);
}

static void test_wrap_words(void **state)
{
	(void)state;
	struct ui_rows r = {0};
	const char *s = "the quick brown fox jumps";
	ui_st_wrap(s, strlen(s), 10, 0, &r);
	assert_int_equal(r.n, 3);
	assert_string_equal(r.row[0], "the quick ");
	assert_string_equal(r.row[1], "brown fox ");
	assert_string_equal(r.row[2], "jumps");
	ui_rows_free(&r);
	/* a word longer than a row is cut; indent on continuation rows */
	s = "- abcdefghijklmnop";
	ui_st_wrap(s, strlen(s), 8, 2, &r);
	assert_int_equal(r.n, 4);
	assert_string_equal(r.row[0], "- ");
	assert_string_equal(r.row[1], "  abcdef");
	assert_string_equal(r.row[2], "  ghijkl");
	assert_string_equal(r.row[3], "  mnop");
	ui_rows_free(&r);
	ui_st_wrap("", 0, 8, 0, &r);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.row[0], "");
	ui_rows_free(&r);
}

static void test_wrap_wide_and_style(void **state)
{
	(void)state;
	struct ui_rows r = {0};
	/* five wide characters in rows of 4 cells: 2 per row */
	const char *s = "\x01\x03\xe4\xb8\x80\xe4\xb8\x81\xe4\xb8\x82\xe4\xb8"
	                "\x83\xe4\xb8\x84";
	ui_st_wrap(s, strlen(s), 4, 0, &r);
	assert_int_equal(r.n, 3);
	for (int i = 0; i < r.n; i++) {
		/* each row starts in the element in force */
		assert_int_equal(r.row[i][0], ST_ELEM);
		assert_int_equal(r.row[i][1], 3);
		assert_true(ui_st_width(r.row[i], strlen(r.row[i])) <= 4);
	}
	ui_rows_free(&r);
	/* an SGR colour carries over too */
	s = "\033[0;38;5;1mred red red";
	ui_st_wrap(s, strlen(s), 8, 0, &r);
	assert_int_equal(r.n, 2);
	assert_memory_equal(r.row[1], "\033[0;38;5;1m", 11);
	char *p = plain(r.row[1]);
	assert_string_equal(p, "red");
	free(p);
	ui_rows_free(&r);
}

static void test_fit(void **state)
{
	(void)state;
	char *f = ui_st_fit("hello world", 11, 8);
	assert_string_equal(f, "hello w\xe2\x80\xa6");
	assert_int_equal(ui_st_width(f, strlen(f)), 8);
	free(f);
	f = ui_st_fit("short", 5, 8);
	assert_string_equal(f, "short");
	free(f);
	f = ui_st_fit("\xe4\xb8\x80\xe4\xb8\x81\xe4\xb8\x82", 9, 4);
	assert_true(ui_st_width(f, strlen(f)) <= 4);
	free(f);
}

static void test_highlight(void **state)
{
	(void)state;
	int n;
	const char *s = "a needle and \033[0;1mneedle\033[0m";
	char *h = ui_st_highlight(s, strlen(s), "needle", &n);
	assert_int_equal(n, 2);
	assert_string_equal(h, "a \002needle\003 and \033[0;1m\002needle\003"
	                       "\033[0m");
	free(h);
	h = ui_st_highlight("nothing", 7, "x", &n);
	assert_int_equal(n, 0);
	assert_string_equal(h, "nothing");
	free(h);
}

static void test_markdown(void **state)
{
	(void)state;
	struct ui_md md = {0};
	ui_md_render(&md,
	             "# Title\n"
	             "Some **bold** and `code` here.\n"
	             "- item one\n"
	             "  2. nested\n"
	             "```python\n"
	             "x = **not bold**\n"
	             "```\n"
	             "---\n"
	             "> quoted",
	             UE_ASSISTANT);
	assert_int_equal(md.n, 9);
	char *p = plain(md.l[0].st);
	assert_string_equal(p, "Title");
	free(p);
	assert_int_equal(md.l[0].st[0], ST_ELEM);
	assert_int_equal(md.l[0].st[1], UE_HEADING + 1);
	/* bold and code switch elements and come back */
	const char *l1 = md.l[1].st;
	assert_non_null(strstr(l1, "\x01\x0b"
	                           "bold")); /* UE_BOLD */
	assert_non_null(strstr(l1, "\x01\x0c"
	                           "code")); /* UE_CODE */
	p = plain(l1);
	assert_string_equal(p, "Some bold and code here.");
	free(p);
	p = plain(md.l[2].st);
	assert_string_equal(p, "\xe2\x80\xa2 item one");
	free(p);
	assert_int_equal(md.l[2].indent, 2);
	p = plain(md.l[3].st);
	assert_string_equal(p, "  2. nested");
	free(p);
	assert_int_equal(md.l[3].indent, 5);
	/* inside a fence nothing is markup */
	p = plain(md.l[5].st);
	assert_string_equal(p, "\xe2\x94\x82 x = **not bold**");
	free(p);
	assert_int_equal(md.l[7].nowrap, 1); /* the rule */
	ui_md_free(&md);
	/* unclosed markup (a message still streaming) stays as typed */
	ui_md_render(&md, "half **open and `tick", UE_ASSISTANT);
	p = plain(md.l[0].st);
	assert_string_equal(p, "half **open and `tick");
	free(p);
	ui_md_free(&md);
}

static void test_formats(void **state)
{
	(void)state;
	char b[32];
	ui_fmt_size(b, sizeof b, 512);
	assert_string_equal(b, "512 B");
	ui_fmt_size(b, sizeof b, 1536);
	assert_string_equal(b, "1.5 KB");
	ui_fmt_size(b, sizeof b, 100.0 * 1024 * 1024);
	assert_string_equal(b, "100.0 MB");
	ui_fmt_duration(b, sizeof b, 800);
	assert_string_equal(b, "0.8s");
	ui_fmt_duration(b, sizeof b, 185000);
	assert_string_equal(b, "3m05s");
	ui_fmt_count(b, sizeof b, 12345);
	assert_string_equal(b, "12.3k");
}

int main(void)
{
	setlocale(LC_ALL, "C.UTF-8");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_width),
	    cmocka_unit_test(test_wrap_words),
	    cmocka_unit_test(test_wrap_wide_and_style),
	    cmocka_unit_test(test_fit),
	    cmocka_unit_test(test_highlight),
	    cmocka_unit_test(test_markdown),
	    cmocka_unit_test(test_formats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
