/* test_tui_input.c: the message box (src/tui/input.c): UTF-8 editing
 * at the cursor, kill commands, multi-line movement, history, cleaning
 * of pasted text, the size limit, and the wrapped layout with the
 * cursor's place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tui/text.c"
#include "tui/input.c"

#include <locale.h>

static void type(struct ui_input *in, const char *s)
{
	assert_int_equal(ui_input_insert(in, s, strlen(s)), 0);
}

static const char *text(struct ui_input *in)
{
	return buf_str(&in->text);
}

static void test_insert_and_move(void **state)
{
	(void)state;
	struct ui_input in;
	ui_input_init(&in);
	type(&in, "h\xc3\xa9llo");
	ui_input_left(&in);
	ui_input_left(&in);
	type(&in, "X");
	assert_string_equal(text(&in), "h\xc3\xa9lXlo");
	ui_input_home(&in);
	ui_input_right(&in);
	ui_input_right(&in); /* over the two bytes of é at once */
	type(&in, "_");
	assert_string_equal(text(&in), "h\xc3\xa9_lXlo");
	ui_input_backspace(&in);
	ui_input_backspace(&in);
	assert_string_equal(text(&in), "hlXlo");
	ui_input_end(&in);
	ui_input_delete(&in); /* nothing after the cursor */
	ui_input_backspace(&in);
	assert_string_equal(text(&in), "hlXl");
	ui_input_free(&in);
}

static void test_kills(void **state)
{
	(void)state;
	struct ui_input in;
	ui_input_init(&in);
	type(&in, "first line\nsecond word here");
	ui_input_kill_word(&in);
	assert_string_equal(text(&in), "first line\nsecond word ");
	ui_input_kill_start(&in);
	assert_string_equal(text(&in), "first line\n");
	ui_input_up(&in);
	ui_input_home(&in);
	ui_input_kill_end(&in);
	assert_string_equal(text(&in), "\n");
	ui_input_kill_end(&in); /* at a line end: joins the next */
	assert_string_equal(text(&in), "");
	ui_input_free(&in);
}

static void test_lines_and_history(void **state)
{
	(void)state;
	struct ui_input in;
	ui_input_init(&in);
	type(&in, "one");
	char *m = ui_input_take(&in);
	assert_string_equal(m, "one");
	free(m);
	type(&in, "two");
	free(ui_input_take(&in));
	type(&in, "draft");
	ui_input_up(&in);
	assert_string_equal(text(&in), "two");
	ui_input_up(&in);
	assert_string_equal(text(&in), "one");
	ui_input_up(&in); /* the oldest stays */
	assert_string_equal(text(&in), "one");
	ui_input_down(&in);
	ui_input_down(&in);
	assert_string_equal(text(&in), "draft"); /* what was being typed */
	/* in a multi-line message Up moves between lines first */
	ui_input_end(&in);
	type(&in, "\nab");
	ui_input_up(&in);
	type(&in, "!");
	assert_string_equal(text(&in), "dr!aft\nab");
	ui_input_free(&in);
}

static void test_take_trims_and_skips_blank(void **state)
{
	(void)state;
	struct ui_input in;
	ui_input_init(&in);
	type(&in, "  \n ");
	assert_null(ui_input_take(&in));
	type(&in, "\n  hi there \n");
	char *m = ui_input_take(&in);
	assert_string_equal(m, "hi there");
	free(m);
	assert_string_equal(text(&in), "");
	assert_int_equal(in.cur, 0);
	ui_input_free(&in);
}

static void test_paste_cleaned(void **state)
{
	(void)state;
	struct ui_input in;
	ui_input_init(&in);
	const char paste[] = "a\r\nb\tc\033[31md\x01\xc2\x9b"
	                     "e\r";
	assert_int_equal(ui_input_insert(&in, paste, sizeof paste - 1), 0);
	assert_string_equal(text(&in), "a\nb    c[31mde\n");
	ui_input_free(&in);
}

static void test_limit(void **state)
{
	(void)state;
	struct ui_input in;
	ui_input_init(&in);
	size_t n = UI_INPUT_MAX - 2;
	char *big = xmalloc(n);
	memset(big, 'x', n);
	assert_int_equal(ui_input_insert(&in, big, n), 0);
	assert_int_equal(ui_input_insert(&in, "abc", 3), -1);
	assert_int_equal(in.text.len, n);
	assert_true(in.overflow);
	ui_input_backspace(&in);
	assert_false(in.overflow);
	free(big);
	ui_input_free(&in);
}

static void test_layout(void **state)
{
	(void)state;
	struct ui_input in;
	struct ui_input_layout lo;
	ui_input_init(&in);
	type(&in, "abcdefgh\n\xe4\xb8\x80\xe4\xb8\x81\xe4\xb8\x82");
	ui_input_layout(&in, 5, &lo);
	/* "abcde" "fgh" then wide chars, two per 5-cell row */
	assert_int_equal(lo.n, 4);
	assert_int_equal(lo.end[0] - lo.start[0], 5);
	assert_int_equal(lo.end[1] - lo.start[1], 3);
	assert_int_equal(lo.end[2] - lo.start[2], 6);
	assert_int_equal(lo.cur_row, 3);
	assert_int_equal(lo.cur_col, 2);
	/* the cheap count agrees, and stops at its cap */
	assert_int_equal(ui_input_rows(&in, 5, 10), lo.n);
	assert_int_equal(ui_input_rows(&in, 5, 2), 2);
	ui_input_layout_free(&lo);
	/* the cursor at the end of a full row goes to the next one */
	buf_reset(&in.text);
	in.cur = 0;
	type(&in, "abcde");
	ui_input_layout(&in, 5, &lo);
	assert_int_equal(lo.n, 2);
	assert_int_equal(lo.cur_row, 1);
	assert_int_equal(lo.cur_col, 0);
	assert_int_equal(ui_input_rows(&in, 5, 10), 2);
	ui_input_layout_free(&lo);
	ui_input_free(&in);
}

int main(void)
{
	setlocale(LC_ALL, "C.UTF-8");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_insert_and_move),
	    cmocka_unit_test(test_kills),
	    cmocka_unit_test(test_lines_and_history),
	    cmocka_unit_test(test_take_trims_and_skips_blank),
	    cmocka_unit_test(test_paste_cleaned),
	    cmocka_unit_test(test_limit),
	    cmocka_unit_test(test_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
