/* draw.c: putting stext on curses windows: theme styles to attributes
 * and colour pairs (256 colours, truecolor on a direct-colour terminal,
 * none with NO_COLOR), the SGR colours kept from tool output, and
 * wide characters placed by display width. */
#include "tui/draw.h"

#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

static const struct ui_theme *theme;
static int use_color;
static int direct; /* the terminal takes 24-bit colour numbers */
static int ncolors;
int ui_ascii;

void ui_colors_init(const struct ui_theme *t, int no_color)
{
	theme = t;
	use_color = 0;
	if (!no_color && has_colors() && start_color() == OK) {
		use_default_colors();
		use_color = 1;
		ncolors = COLORS;
		direct = COLORS >= 0x1000000 || tigetflag("RGB") > 0;
	}
}

const struct ui_style *ui_elem_style(enum ui_elem e)
{
	return &theme->el[e < UE_COUNT ? e : UE_NORMAL];
}

/* Elements that tell state by their background only: without colour
 * they are drawn reversed so focus and selection stay visible. */
static int needs_reverse(const struct ui_style *st)
{
	return !use_color && st->bg != UI_COLOR_DEFAULT;
}

static const int basic_rgb[16][3] = {
    {0, 0, 0},       {205, 0, 0},   {0, 205, 0},   {205, 205, 0},
    {0, 0, 238},     {205, 0, 205}, {0, 205, 205}, {229, 229, 229},
    {127, 127, 127}, {255, 0, 0},   {0, 255, 0},   {255, 255, 0},
    {92, 92, 255},   {255, 0, 255}, {0, 255, 255}, {255, 255, 255}};

/* The RGB of a colour: truecolor, the 16 basic ones, the cube or the greys. */
static void rgb_of(int32_t c, int *r, int *g, int *b)
{
	static const int lv[6] = {0, 95, 135, 175, 215, 255};
	if (c & UI_RGB_FLAG) {
		*r = (c >> 16) & 255, *g = (c >> 8) & 255, *b = c & 255;
	} else if (c < 16) {
		*r = basic_rgb[c][0], *g = basic_rgb[c][1],
		*b = basic_rgb[c][2];
	} else if (c < 232) {
		c -= 16;
		*r = lv[c / 36], *g = lv[c / 6 % 6], *b = lv[c % 6];
	} else {
		*r = *g = *b = 8 + 10 * (c - 232);
	}
}

/* A colour the terminal can show. */
static int map_color(int32_t c)
{
	if (c == UI_COLOR_DEFAULT)
		return -1;
	int r, g, b;
	if (direct) {
		rgb_of(c, &r, &g, &b);
		return (r << 16) | (g << 8) | b;
	}
	if (!(c & UI_RGB_FLAG) && c < ncolors)
		return c;
	rgb_of(c, &r, &g, &b);
	if (ncolors >= 256)
		return ui_color_256(r, g, b);
	int best = 0;
	long bd = -1;
	int lim = ncolors >= 16 ? 16 : 8;
	for (int i = 0; i < lim; i++) {
		long d = (long)(basic_rgb[i][0] - r) * (basic_rgb[i][0] - r) +
		         (long)(basic_rgb[i][1] - g) * (basic_rgb[i][1] - g) +
		         (long)(basic_rgb[i][2] - b) * (basic_rgb[i][2] - b);
		if (bd < 0 || d < bd)
			bd = d, best = i;
	}
	return best;
}

void ui_style_resolve(const struct ui_style *st, unsigned *attr, int *pair)
{
	/* "default" means the theme's normal colours, which may be the
	 * terminal's own */
	struct ui_style eff = *st;
	const struct ui_style *base = &theme->el[UE_NORMAL];
	int rev = needs_reverse(st) && st->bg != base->bg;
	if (eff.fg == UI_COLOR_DEFAULT)
		eff.fg = base->fg;
	if (eff.bg == UI_COLOR_DEFAULT)
		eff.bg = base->bg;
	st = &eff;
	attr_t a = 0;
	if (st->attrs & UI_A_BOLD)
		a |= A_BOLD;
	if (st->attrs & UI_A_DIM)
		a |= A_DIM;
	if (st->attrs & UI_A_ITALIC)
		a |= A_ITALIC;
	if (st->attrs & UI_A_UNDERLINE)
		a |= A_UNDERLINE;
	if (st->attrs & UI_A_BLINK)
		a |= A_BLINK;
	if (st->attrs & UI_A_REVERSE)
		a |= A_REVERSE;
	if (rev)
		a ^= A_REVERSE;
	*pair = 0;
	if (use_color &&
	    (st->fg != UI_COLOR_DEFAULT || st->bg != UI_COLOR_DEFAULT)) {
		int p = alloc_pair(map_color(st->fg), map_color(st->bg));
		*pair = p > 0 ? p : 0;
	}
	*attr = (unsigned)a;
}

void ui_set_style(WINDOW *w, const struct ui_style *st)
{
	unsigned a;
	int pair;
	ui_style_resolve(st, &a, &pair);
	wattr_set(w, (attr_t)a, (short)(pair < 32768 ? pair : 0), &pair);
}

void ui_set_elem(WINDOW *w, enum ui_elem e)
{
	ui_set_style(w, ui_elem_style(e));
}

void ui_background(WINDOW *w)
{
	unsigned a;
	int pair;
	cchar_t c;
	wchar_t sp[2] = {L' ', 0};
	ui_style_resolve(ui_elem_style(UE_NORMAL), &a, &pair);
	setcchar(&c, sp, (attr_t)a & ~A_REVERSE,
	         (short)(pair < 32768 ? pair : 0), &pair);
	wbkgrndset(w, &c);
}

/* Parse a canonical SGR (as ui_term writes it) over a base style. */
static void sgr_overlay(const char *s, size_t n, const struct ui_style *base,
                        struct ui_style *out)
{
	int p[24], np = 0, v = 0;
	for (size_t i = 2; i < n; i++) { /* skip ESC [ */
		if (s[i] == ';' || s[i] == 'm') {
			if (np < 24)
				p[np++] = v;
			v = 0;
		} else if (s[i] >= '0' && s[i] <= '9') {
			v = v * 10 + (s[i] - '0');
		}
	}
	*out = *base;
	for (int i = 0; i < np; i++) {
		switch (p[i]) {
		case 0:
			*out = *base;
			break;
		case 1:
			out->attrs |= UI_A_BOLD;
			break;
		case 2:
			out->attrs |= UI_A_DIM;
			break;
		case 3:
			out->attrs |= UI_A_ITALIC;
			break;
		case 4:
			out->attrs |= UI_A_UNDERLINE;
			break;
		case 5:
			out->attrs |= UI_A_BLINK;
			break;
		case 7:
			out->attrs |= UI_A_REVERSE;
			break;
		case 38:
		case 48: {
			int which = p[i];
			int32_t c = -1;
			if (i + 2 < np && p[i + 1] == 5) {
				c = p[i + 2] & 255;
				i += 2;
			} else if (i + 4 < np && p[i + 1] == 2) {
				c = UI_RGB(p[i + 2] & 255, p[i + 3] & 255,
				           p[i + 4] & 255);
				i += 4;
			}
			if (c >= 0 && which == 38)
				out->fg = c;
			else if (c >= 0)
				out->bg = c;
			break;
		}
		}
	}
}

int ui_draw_st(WINDOW *w, int y, int x, int maxw, const char *s, size_t n,
               enum ui_elem base)
{
	struct ui_style el = *ui_elem_style(base), cur = el;
	int hl = 0, used = 0;
	wchar_t run[256];
	int nrun = 0;
	if (maxw <= 0)
		return 0;
	wmove(w, y, x);
	ui_set_style(w, &cur);
	for (size_t i = 0; i < n;) {
		size_t m = ui_st_marker(s + i, n - i);
		if (m) {
			if (nrun) {
				waddnwstr(w, run, nrun);
				nrun = 0;
			}
			if (s[i] == ST_ELEM && m == 2) {
				el = *ui_elem_style((enum ui_elem)(
				    (unsigned char)s[i + 1] - 1));
				cur = el;
			} else if (s[i] == ST_HL_ON) {
				hl = 1;
			} else if (s[i] == ST_HL_OFF) {
				hl = 0;
			} else if (s[i] == '\033') {
				sgr_overlay(s + i, m, &el, &cur);
			}
			ui_set_style(w, hl ? ui_elem_style(UE_MATCH) : &cur);
			i += m;
			continue;
		}
		uint32_t cp;
		size_t len = ui_u8_decode(s + i, n - i, &cp);
		int cw = ui_cp_width(cp);
		i += len;
		if (cw < 0) {
			cp = '?';
			cw = 1;
		}
		if (cw == 0)
			continue;
		if (ui_ascii && cp > 0x7e) {
			cp = '?';
			cw = 1;
		}
		if (used + cw > maxw)
			break;
		run[nrun++] = (wchar_t)cp;
		used += cw;
		if (nrun == (int)(sizeof run / sizeof *run)) {
			waddnwstr(w, run, nrun);
			nrun = 0;
		}
	}
	if (nrun)
		waddnwstr(w, run, nrun);
	return used;
}

void ui_fill(WINDOW *w, int y, int x, int width, enum ui_elem e)
{
	if (width <= 0)
		return;
	ui_set_elem(w, e);
	mvwhline(w, y, x, ' ', width);
}

int ui_draw_text(WINDOW *w, int y, int x, int maxw, const char *text,
                 enum ui_elem e)
{
	return ui_draw_st(w, y, x, maxw, text, strlen(text), e);
}

const char *ui_glyph(enum ui_glyph g)
{
	static const char *const utf8[] = {
	    [G_GUTTER_OUT] = "\xe2\x94\x82", /* │ */
	    [G_GUTTER_ERR] = "\xe2\x94\x83", /* ┃ */
	    [G_OPEN] = "\xe2\x96\xbe",       /* ▾ */
	    [G_CLOSED] = "\xe2\x96\xb8",     /* ▸ */
	    [G_CALL] = "\xe2\x96\xb8",       /* ▸ */
	    [G_ELLIPSIS] = "\xe2\x80\xa6",   /* … */
	    [G_HRULE] = "\xe2\x94\x80",      /* ─ */
	    [G_ARROW] = "\xe2\x86\x92",      /* → */
	    [G_TIMES] = "\xc3\x97",          /* × */
	};
	static const char *const ascii[] = {
	    [G_GUTTER_OUT] = "|", [G_GUTTER_ERR] = "!", [G_OPEN] = "v",
	    [G_CLOSED] = ">",     [G_CALL] = ">",       [G_ELLIPSIS] = "~",
	    [G_HRULE] = "-",      [G_ARROW] = "->",     [G_TIMES] = "x",
	};
	return ui_ascii ? ascii[g] : utf8[g];
}

const char *ui_spinner(int64_t ms)
{
	static const char *const frames[] = {
	    "\xe2\xa0\x8b", "\xe2\xa0\x99", "\xe2\xa0\xb9", "\xe2\xa0\xb8",
	    "\xe2\xa0\xbc", "\xe2\xa0\xb4", "\xe2\xa0\xa6", "\xe2\xa0\xa7",
	    "\xe2\xa0\x87", "\xe2\xa0\x8f"};
	static const char *const aframes[] = {"|", "/", "-", "\\"};
	if (ms < 0)
		ms = 0;
	if (ui_ascii)
		return aframes[(ms / 100) % 4];
	return frames[(ms / 100) % 10];
}
