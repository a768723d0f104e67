/* draw.h: the curses side of the workbench (draw.c): styles to
 * attributes and colour pairs, and stext onto windows. */
#ifndef ASSAY_TUI_DRAW_H
#define ASSAY_TUI_DRAW_H

#include "tui/tui.h"

#include <curses.h>

/* Non-zero when the locale cannot show UTF-8: glyphs become ASCII. */
extern int ui_ascii;

/* Colour support of the terminal, decided once after initscr; with
 * no_color (NO_COLOR) only attributes are used. */
void ui_colors_init(const struct ui_theme *t, int no_color);
const struct ui_style *ui_elem_style(enum ui_elem e);
/* The curses attributes and colour pair for a style. */
void ui_style_resolve(const struct ui_style *st, unsigned *attr, int *pair);
void ui_set_style(WINDOW *w, const struct ui_style *st);
void ui_set_elem(WINDOW *w, enum ui_elem e);
/* Blank cells of w take the theme's normal colours. */
void ui_background(WINDOW *w);

/* Draw stext at (y, x), at most maxw cells, in element base; returns
 * the cells used. Never writes past maxw (wide characters included). */
int ui_draw_st(WINDOW *w, int y, int x, int maxw, const char *s, size_t n,
               enum ui_elem base);
int ui_draw_text(WINDOW *w, int y, int x, int maxw, const char *text,
                 enum ui_elem e);
void ui_fill(WINDOW *w, int y, int x, int width, enum ui_elem e);

enum ui_glyph {
	G_GUTTER_OUT,
	G_GUTTER_ERR,
	G_OPEN,
	G_CLOSED,
	G_CALL,
	G_ELLIPSIS,
	G_HRULE,
	G_ARROW,
	G_TIMES, /* 800×450 */
};
const char *ui_glyph(enum ui_glyph g);
/* The spinner frame at a time. */
const char *ui_spinner(int64_t ms);

#endif
