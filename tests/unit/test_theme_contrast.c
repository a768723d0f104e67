/* test_theme_contrast.c: every bundled theme is readable on the terminal
 * it is for. Each element's text colour against its background (its own,
 * else the theme's normal one, else the terminal's) meets WCAG AA, 4.5:1;
 * lines (borders, output gutters) 3:1. Reverse swaps the two, dim is
 * counted as text halfway to its background (VTE, kitty and others
 * blend it so), and a #rrggbb colour must pass both as itself and as
 * the nearest of 256 colours (what a 256-colour terminal shows). The
 * terminals: dark is black with xterm's grey text, light is white with
 * black text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tui/theme.c"

#include <math.h>
#include <stdio.h>

struct rgb {
	double r, g, b;
};

struct term {
	const char *name;
	struct rgb bg, fg;
};

static const struct term DARK = {"dark", {0, 0, 0}, {229, 229, 229}};
static const struct term LIGHT = {"light", {255, 255, 255}, {0, 0, 0}};

/* The bundled themes and the terminals each is for (mono: any). */
static const struct {
	const char *theme;
	const struct term *term;
} bundled[] = {
    {"default", &DARK},        {"light", &LIGHT}, {"high-contrast", &DARK},
    {"solarized-dark", &DARK}, {"mono", &DARK},   {"mono", &LIGHT},
};
#define NBUNDLED (sizeof bundled / sizeof *bundled)

static const double TEXT_MIN = 4.5, LINE_MIN = 3.0;

/* Lines and marks, not text: WCAG's 3:1 for graphical objects. */
static int is_line(enum ui_elem e)
{
	return e == UE_BORDER || e == UE_BORDER_FOCUS || e == UE_GUTTER_OUT ||
	       e == UE_GUTTER_ERR;
}

/* What xterm shows for a colour: truecolor, the 16, the cube, the greys.
 * as256: a truecolor one as the nearest of 256 (draw.c's map_color). */
static struct rgb color_rgb(int32_t c, int as256)
{
	static const int basic[16][3] = {
	    {0, 0, 0},       {205, 0, 0},   {0, 205, 0},   {205, 205, 0},
	    {0, 0, 238},     {205, 0, 205}, {0, 205, 205}, {229, 229, 229},
	    {127, 127, 127}, {255, 0, 0},   {0, 255, 0},   {255, 255, 0},
	    {92, 92, 255},   {255, 0, 255}, {0, 255, 255}, {255, 255, 255}};
	static const int lv[6] = {0, 95, 135, 175, 215, 255};
	if (c & UI_RGB_FLAG) {
		int r = (c >> 16) & 255, g = (c >> 8) & 255, b = c & 255;
		if (!as256)
			return (struct rgb){r, g, b};
		c = ui_color_256(r, g, b);
	}
	if (c < 16)
		return (struct rgb){basic[c][0], basic[c][1], basic[c][2]};
	if (c < 232) {
		c -= 16;
		return (struct rgb){lv[c / 36], lv[c / 6 % 6], lv[c % 6]};
	}
	double v = 8 + 10 * (c - 232);
	return (struct rgb){v, v, v};
}

/* WCAG 2 relative luminance. */
static double luminance(struct rgb c)
{
	double ch[3] = {c.r / 255, c.g / 255, c.b / 255};
	for (int i = 0; i < 3; i++)
		ch[i] = ch[i] <= 0.04045 ? ch[i] / 12.92
		                         : pow((ch[i] + 0.055) / 1.055, 2.4);
	return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
}

static double contrast(struct rgb a, struct rgb b)
{
	double la = luminance(a), lb = luminance(b);
	return la > lb ? (la + 0.05) / (lb + 0.05) : (lb + 0.05) / (la + 0.05);
}

/* The contrast of element e of t as drawn on term. */
static double elem_contrast(const struct ui_theme *t, enum ui_elem e,
                            const struct term *term, int as256)
{
	const struct ui_style *st = &t->el[e], *base = &t->el[UE_NORMAL];
	int32_t fgc = st->fg != UI_COLOR_DEFAULT ? st->fg : base->fg;
	int32_t bgc = st->bg != UI_COLOR_DEFAULT ? st->bg : base->bg;
	struct rgb fg =
	    fgc == UI_COLOR_DEFAULT ? term->fg : color_rgb(fgc, as256);
	struct rgb bg =
	    bgc == UI_COLOR_DEFAULT ? term->bg : color_rgb(bgc, as256);
	if (st->attrs & UI_A_REVERSE) {
		struct rgb x = fg;
		fg = bg;
		bg = x;
	}
	if (st->attrs & UI_A_DIM)
		fg = (struct rgb){(fg.r + bg.r) / 2, (fg.g + bg.g) / 2,
		                  (fg.b + bg.b) / 2};
	return contrast(fg, bg);
}

/* The elements of t below the minimum on term, listed into out (with
 * their ratios); their count. */
static int failures(const struct ui_theme *t, const struct term *term,
                    char *out, size_t outsz)
{
	int n = 0;
	size_t used = 0;
	out[0] = '\0';
	for (int e = 0; e < UE_COUNT; e++)
		for (int as256 = 0; as256 < 2; as256++) {
			double r = elem_contrast(t, e, term, as256);
			double min = is_line(e) ? LINE_MIN : TEXT_MIN;
			if (r >= min)
				continue;
			n++;
			if (used < outsz)
				used += (size_t)snprintf(
				    out + used, outsz - used, " %s%s %.2f",
				    ui_elem_name(e), as256 ? " (256)" : "", r);
			break;
		}
	return n;
}

static int setup(void **state)
{
	(void)state;
	/* the bundled files, not a user's themes of the same name */
	setenv("XDG_CONFIG_HOME", "/nonexistent-assay-contrast", 1);
	unsetenv("ASSAY_DATA_DIR");
	return 0;
}

static void load(struct ui_theme *t, const char *name)
{
	char *err = NULL;
	if (ui_theme_load(t, name, &err) < 0)
		fail_msg("%s: %s", name, err);
	assert_non_null(strstr(t->path, "/themes/"));
}

/* Every bundled theme, every element, on the terminal it is for. */
static void test_bundled_themes_contrast(void **state)
{
	(void)state;
	int bad = 0;
	for (size_t i = 0; i < NBUNDLED; i++) {
		struct ui_theme t;
		load(&t, bundled[i].theme);
		double lo_text = 99, lo_line = 99;
		for (int e = 0; e < UE_COUNT; e++)
			for (int as256 = 0; as256 < 2; as256++) {
				double r = elem_contrast(&t, e, bundled[i].term,
				                         as256);
				double *lo = is_line(e) ? &lo_line : &lo_text;
				if (r < *lo)
					*lo = r;
			}
		char why[1024];
		int n = failures(&t, bundled[i].term, why, sizeof why);
		print_message(
		    "%-15s on %-5s: lowest text %.2f, lines %.2f%s%s\n",
		    bundled[i].theme, bundled[i].term->name, lo_text, lo_line,
		    n ? "; below the minimum:" : "", why);
		bad += n;
		ui_theme_free(&t);
	}
	assert_int_equal(bad, 0);
}

/* Each file in themes/ has a row above: a new theme is checked too. */
static void test_every_bundled_theme_listed(void **state)
{
	(void)state;
	char *dir = bundled_theme_dir();
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *ent;
	int files = 0;
	while ((ent = readdir(d))) {
		size_t n = strlen(ent->d_name);
		if (n <= 5 || strcmp(ent->d_name + n - 5, ".json"))
			continue;
		files++;
		int listed = 0;
		for (size_t i = 0; i < NBUNDLED; i++)
			if (strlen(bundled[i].theme) == n - 5 &&
			    !strncmp(bundled[i].theme, ent->d_name, n - 5))
				listed = 1;
		if (!listed)
			fail_msg(
			    "themes/%s: say in test_theme_contrast.c which "
			    "terminal (dark, light) it is for",
			    ent->d_name);
	}
	closedir(d);
	free(dir);
	assert_true(files >= 5);
}

/* The check can fail: the dark theme on a white terminal (the issue's
 * unreadable titles), and dim text on white. */
static void test_dark_theme_on_white_fails(void **state)
{
	(void)state;
	struct ui_theme t;
	load(&t, "default");
	char why[1024];
	assert_true(failures(&t, &LIGHT, why, sizeof why) > 0);
	assert_true(elem_contrast(&t, UE_TITLE, &LIGHT, 0) < TEXT_MIN);
	assert_true(elem_contrast(&t, UE_USER, &LIGHT, 0) < TEXT_MIN);
	assert_true(elem_contrast(&t, UE_TITLE, &DARK, 0) >= TEXT_MIN);
	t.el[UE_DIM] =
	    (struct ui_style){UI_COLOR_DEFAULT, UI_COLOR_DEFAULT, UI_A_DIM};
	assert_true(elem_contrast(&t, UE_DIM, &LIGHT, 0) < TEXT_MIN);
	ui_theme_free(&t);
	/* the formula: black on white is 21:1, a colour on itself 1:1 */
	assert_true(fabs(contrast(LIGHT.bg, DARK.bg) - 21.0) < 1e-9);
	assert_true(fabs(contrast(DARK.fg, DARK.fg) - 1.0) < 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bundled_themes_contrast),
	    cmocka_unit_test(test_every_bundled_theme_listed),
	    cmocka_unit_test(test_dark_theme_on_white_fails),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
