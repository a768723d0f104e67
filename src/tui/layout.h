/* layout.h: where the panes are: the terminal's size, each pane's
 * window and the status bar's, and which pane has the focus. layout.c
 * alone writes them (a new layout on a frame, a new focus); everyone
 * else reads u->lay. */
#ifndef ASSAY_TUI_LAYOUT_H
#define ASSAY_TUI_LAYOUT_H

#include <curses.h>

struct ui;

enum ui_pane { P_CONV, P_TOOLS, P_TREE, P_INPUT, P_COUNT };

struct ui_geom {
	int y, x, h, w;
	int shown;
	WINDOW *win;
};

/* part: lay, owner: src/tui/layout.c */
struct ui_layout {
	int rows, cols;
	int too_small; /* nothing is laid out: a notice instead */
	struct ui_geom g[P_COUNT];
	WINDOW *status;
	int focus; /* enum ui_pane */
};

/* The panes laid out again for the terminal's size (new windows). */
void ui_layout_apply(struct ui *u);
/* Every window goes (a new layout makes them again). */
void ui_layout_drop(struct ui *u);
/* The focus to pane f (P_INPUT: the message box), with a frame. */
void ui_set_focus(struct ui *u, int f);
/* The focus before anything is drawn (no frame asked for). */
void ui_layout_focus(struct ui_layout *l, int f);
/* The rows the message box wants at a width. */
int ui_input_rows_wanted(struct ui *u, int cols);

#endif
