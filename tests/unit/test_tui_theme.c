/* test_tui_theme.c: colour themes (src/tui/theme.c): every bundled
 * theme loads, default.json says what the built-in theme says, user
 * themes in $XDG_CONFIG_HOME/assay/themes/ come first, and a broken
 * file is an error naming the file and the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tui/theme.c"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static char xdg[64];

static void write_theme(const char *name, const char *text)
{
	char *dir = xasprintf("%s/assay/themes", xdg);
	char *err = NULL;
	assert_int_equal(mkdir_p(dir, &err), 0);
	char *path = xasprintf("%s/%s.json", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
	free(dir);
}

static int setup(void **state)
{
	(void)state;
	strcpy(xdg, "/tmp/assay-theme.XXXXXX");
	assert_non_null(mkdtemp(xdg));
	setenv("XDG_CONFIG_HOME", xdg, 1);
	unsetenv("ASSAY_DATA_DIR");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rm_rf(xdg);
	return 0;
}

static void test_bundled_themes_load(void **state)
{
	(void)state;
	const char *names[] = {"default", "light", "high-contrast",
	                       "solarized-dark", "mono"};
	for (int i = 0; i < 5; i++) {
		struct ui_theme t;
		char *err = NULL;
		int rc = ui_theme_load(&t, names[i], &err);
		if (rc < 0)
			fail_msg("%s: %s", names[i], err);
		assert_non_null(strstr(t.path, "/themes/"));
		ui_theme_free(&t);
	}
}

static void test_default_file_is_builtin(void **state)
{
	(void)state;
	struct ui_theme file, builtin;
	char *err = NULL;
	assert_int_equal(ui_theme_load(&file, "default", &err), 0);
	ui_theme_builtin(&builtin);
	for (int e = 0; e < UE_COUNT; e++) {
		const struct ui_style *a = &file.el[e], *b = &builtin.el[e];
		if (a->fg != b->fg || a->bg != b->bg || a->attrs != b->attrs)
			fail_msg("element %s differs", ui_elem_name(e));
	}
	ui_theme_free(&file);
	ui_theme_free(&builtin);
}

static void test_mono_has_no_colour(void **state)
{
	(void)state;
	struct ui_theme t;
	char *err = NULL;
	assert_int_equal(ui_theme_load(&t, "mono", &err), 0);
	for (int e = 0; e < UE_COUNT; e++) {
		assert_int_equal(t.el[e].fg, UI_COLOR_DEFAULT);
		assert_int_equal(t.el[e].bg, UI_COLOR_DEFAULT);
	}
	/* focus and selection still show */
	assert_true(t.el[UE_TITLE_FOCUS].attrs & UI_A_REVERSE);
	assert_true(t.el[UE_SELECTION].attrs & UI_A_REVERSE);
	ui_theme_free(&t);
}

static void test_user_theme_first(void **state)
{
	(void)state;
	write_theme("light", "{\"elements\": {\"user\": \"#ff0000\"}}");
	write_theme("mine", "// comments are fine\n"
	                    "{\"palette\": {\"hot\": \"#f00\"},\n"
	                    " \"elements\": {\"border\": {\"fg\": \"hot\", "
	                    "\"bg\": 17, \"attrs\": [\"bold\"]}}}");
	struct ui_theme t;
	char *err = NULL;
	assert_int_equal(ui_theme_load(&t, "light", &err), 0);
	assert_non_null(strstr(t.path, xdg));
	assert_int_equal(t.el[UE_USER].fg, UI_RGB(255, 0, 0));
	ui_theme_free(&t);
	assert_int_equal(ui_theme_load(&t, "mine", &err), 0);
	assert_int_equal(t.el[UE_BORDER].fg, UI_RGB(255, 0, 0));
	assert_int_equal(t.el[UE_BORDER].bg, 17);
	assert_int_equal(t.el[UE_BORDER].attrs, UI_A_BOLD);
	/* what the file leaves out is the built-in value */
	assert_int_equal(t.el[UE_OK].fg, 114);
	ui_theme_free(&t);
}

static void expect_error(const char *name, const char *text, const char *key)
{
	write_theme(name, text);
	struct ui_theme t;
	char *err = NULL;
	assert_int_equal(ui_theme_load(&t, name, &err), -1);
	char *file = xasprintf("%s/assay/themes/%s.json", xdg, name);
	if (!strstr(err, file) || !strstr(err, key))
		fail_msg("error \"%s\" should name %s and %s", err, file, key);
	free(file);
	free(err);
	ui_theme_free(&t);
}

static void test_broken_themes(void **state)
{
	(void)state;
	expect_error("b1", "{\"elements\": {\"bordr\": \"red\"}}",
	             "elements.bordr");
	expect_error("b2", "{\"elements\": {\"border\": {\"fg\": \"purpl\"}}}",
	             "elements.border.fg");
	expect_error("b3",
	             "{\"elements\": {\"title\": {\"attrs\": [\"shiny\"]}}}",
	             "elements.title.attrs");
	expect_error("b4", "{\"colours\": {}}", "colours");
	expect_error("b5", "{\"elements\": {\"ok\": 300}}", "elements.ok");
	expect_error("b6", "{\"elements\": {\n\"ok\": \"red\",,\n}", "line");
	expect_error("b7", "{\"palette\": {\"x\": \"#12345\"}}", "palette.x");
}

static void test_not_found_lists_themes(void **state)
{
	(void)state;
	struct ui_theme t;
	char *err = NULL;
	assert_int_equal(ui_theme_load(&t, "nope", &err), -1);
	assert_non_null(strstr(err, "\"nope\" not found"));
	assert_non_null(strstr(err, "solarized-dark"));
	free(err);
	err = NULL;
	assert_int_equal(ui_theme_load(&t, "../etc", &err), -1);
	free(err);
	ui_theme_free(&t);
}

static void test_colors(void **state)
{
	(void)state;
	int32_t c;
	cJSON *v = cJSON_CreateString("#5fafff");
	assert_int_equal(ui_color_parse(v, &c), 0);
	assert_int_equal(c, UI_RGB(0x5f, 0xaf, 0xff));
	assert_int_equal(ui_color_256(0x5f, 0xaf, 0xff), 75);
	assert_int_equal(ui_color_256(0x80, 0x80, 0x80), 244);
	assert_int_equal(ui_color_256(0, 0, 0), 16);
	cJSON_SetValuestring(v, "bright-red");
	assert_int_equal(ui_color_parse(v, &c), 0);
	assert_int_equal(c, 9);
	cJSON_SetValuestring(v, "#abc");
	assert_int_equal(ui_color_parse(v, &c), 0);
	assert_int_equal(c, UI_RGB(0xaa, 0xbb, 0xcc));
	cJSON_SetValuestring(v, "#ggg");
	assert_int_equal(ui_color_parse(v, &c), -1);
	cJSON_Delete(v);
	v = cJSON_CreateNumber(255.5);
	assert_int_equal(ui_color_parse(v, &c), -1);
	cJSON_Delete(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bundled_themes_load),
	    cmocka_unit_test(test_default_file_is_builtin),
	    cmocka_unit_test(test_mono_has_no_colour),
	    cmocka_unit_test(test_user_theme_first),
	    cmocka_unit_test(test_broken_themes),
	    cmocka_unit_test(test_not_found_lists_themes),
	    cmocka_unit_test(test_colors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
