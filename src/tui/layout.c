/* layout.c: where the panes go: three side by side on a wide
 * terminal, Tools over Workspace on a middling one, the focused pane
 * alone on a narrow one; the message box grows with its text. The one
 * writer of struct ui_layout (layout.h). */
#include "tui/ui.h"

void ui_layout_drop(struct ui *u)
{
	for (int i = 0; i < P_COUNT; i++) {
		if (u->lay.g[i].win)
			delwin(u->lay.g[i].win);
		u->lay.g[i].win = NULL;
		u->lay.g[i].shown = 0;
	}
	if (u->lay.status)
		delwin(u->lay.status);
	u->lay.status = NULL;
}

int ui_input_rows_wanted(struct ui *u, int cols)
{
	return ui_input_rows(&u->in, cols - 4, u->lay.rows >= 30 ? 8 : 3);
}

/* Pane p's window at a rect. */
static void ui_place(struct ui *u, int p, int y, int x, int h, int w)
{
	struct ui_geom *g = &u->lay.g[p];
	*g = (struct ui_geom){y, x, h, w, 1, newwin(h, w, y, x)};
	leaveok(g->win, p != P_INPUT);
}

/* Three panes side by side from 120 columns; below that Conversation
 * on the left, Tools over Workspace on the right; on a very narrow
 * terminal the focused pane alone. */
void ui_layout_apply(struct ui *u)
{
	ui_layout_drop(u);
	getmaxyx(stdscr, u->lay.rows, u->lay.cols);
	u->lay.too_small = u->lay.rows < 10 || u->lay.cols < 40;
	if (u->lay.too_small)
		return;
	u->lay.status = newwin(1, u->lay.cols, u->lay.rows - 1, 0);
	leaveok(u->lay.status, TRUE);
	int ih = ui_input_rows_wanted(u, u->lay.cols) + 2;
	int iy = u->lay.rows - 1 - ih, ph = iy;
	ui_place(u, P_INPUT, iy, 0, ih, u->lay.cols);
	if (u->lay.cols >= 120) {
		int cw = u->lay.cols * 40 / 100, tw = u->lay.cols * 37 / 100;
		ui_place(u, P_CONV, 0, 0, ph, cw);
		ui_place(u, P_TOOLS, 0, cw, ph, tw);
		ui_place(u, P_TREE, 0, cw + tw, ph, u->lay.cols - cw - tw);
	} else if (u->lay.cols >= 60 && ph >= 8) {
		int cw = u->lay.cols / 2, th = ph * 6 / 10;
		ui_place(u, P_CONV, 0, 0, ph, cw);
		ui_place(u, P_TOOLS, 0, cw, th, u->lay.cols - cw);
		ui_place(u, P_TREE, th, cw, ph - th, u->lay.cols - cw);
	} else {
		int p = u->lay.focus == P_INPUT ? P_CONV : u->lay.focus;
		ui_place(u, p, 0, 0, ph, u->lay.cols);
	}
}

void ui_set_focus(struct ui *u, int f)
{
	u->lay.focus = (f + P_COUNT) % P_COUNT;
	/* the narrow layout shows the focused pane only */
	if (u->lay.cols < 60 || !u->lay.g[P_TOOLS].shown ||
	    !u->lay.g[P_TREE].shown)
		ui_touch(u, UI_DIRTY_LAYOUT);
	ui_touch(u, UI_DIRTY_EVERYTHING & ~UI_DIRTY_LAYOUT);
}

void ui_layout_focus(struct ui_layout *l, int f)
{
	l->focus = f;
}
