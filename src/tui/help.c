/* help.c: the workbench's own two overlays: the keys (F1, ?), which
 * scroll when the terminal is shorter than they are, and the quit?
 * (y/n) question asked while the agent works. Each key's text wraps
 * under its own column, so every line reads whole at any width. */
#include "tui/ui.h"

#include "assay/util.h"

#include <stdio.h>
#include <string.h>

static const char *const help_lines[][2] = {
    {"Tab / Shift-Tab", "move focus: input, Conversation, Tools, Workspace"},
    {"i, Esc", "back to the input box (from a pane)"},
    {"Enter", "send the message (input box)"},
    {"/compact, Enter", "compact the conversation now (a summary)"},
    {"Alt-Enter, Ctrl-J", "new line in the message"},
    {"Up / Down", "history (first/last line), else move between lines"},
    {"Ctrl-R", "search the history, earlier runs too (Esc: back)"},
    {"Ctrl-A/E, Ctrl-U/K/W", "line start/end, delete to start/end/word"},
    {"arrows, j/k", "scroll; select a call (Tools) or a file (Workspace)"},
    {"PgUp / PgDn", "scroll a page (the output, in Tools)"},
    {"g / G, Home / End", "to the top / to the bottom (and follow)"},
    {"[ / ]", "previous / next tool call (Conversation)"},
    {"Enter, o", "open a call's full output in the pager"},
    {"Enter, l / h", "Workspace: open a file, expand / collapse a dir"},
    {"d",
     "the diff of what a call changed (Tools), a file's history (Workspace)"},
    {"/, n, N", "pager: search, next, previous match (diff: hunks)"},
    {"s", "pager: stdout, stderr or both"},
    {"Esc, q", "pager or help: back"},
    {"p", "preview the newest image, in place of Tools (a pane)"},
    {"p in Tools", "the image the model was sent after the call (its copy)"},
    {"Enter on a .png", "Workspace: preview that image"},
    {"Enter on a .csv, t", "Workspace: a table (t: any file; Tools: stdout)"},
    {"hjkl 0 $ g G / n N", "table: by cell, first/last column, ends, search"},
    {"s, i", "table: sort by the column (asc, desc, off), its summary"},
    {"v / Esc", "image preview: as large as the screen / close"},
    {"s", "step mode on/off (a pane): pause before requests, commands"},
    {"mouse", "click focuses or selects, wheel scrolls"},
    {"Ctrl-C", "stop the model or the command; twice when idle: quit"},
    {"Ctrl-Q", "quit (asks y/n while the agent is busy)"},
    {"Ctrl-L", "redraw the screen"},
    {"? or F1", "this help"},
};

#define HELP_NKEYS ((int)(sizeof help_lines / sizeof *help_lines))
#define HELP_KEY_W 22  /* the key column, from the box's x 2 */
#define HELP_TEXT_X 25 /* the text column */
#define HELP_MIN_W 78  /* the box's width, wider where the text needs it */

/* The help laid out for a terminal: the box, and its rows: each
 * entry's text wrapped under the text column, its key on the first. */
struct help_layout {
	int h, wd, room; /* room: the rows shown at once */
	struct ui_rows key, text;
};

/* The box's width: HELP_MIN_W, wider (as far as the terminal goes) so
 * that the longest text fits on one row when there is room. */
static int help_width(const struct ui *u)
{
	int want = HELP_MIN_W;
	for (int i = 0; i < HELP_NKEYS; i++) {
		const char *t = help_lines[i][1];
		int need = HELP_TEXT_X + 2 + ui_st_width(t, strlen(t));
		if (need > want)
			want = need;
	}
	return want < u->lay.cols ? want : u->lay.cols;
}

/* Wrap every entry at the box's width for u's terminal into lo. */
static void help_layout(const struct ui *u, struct help_layout *lo)
{
	memset(lo, 0, sizeof *lo);
	lo->wd = help_width(u);
	int tw = lo->wd - HELP_TEXT_X - 2;
	for (int i = 0; i < HELP_NKEYS; i++) {
		const char *t = help_lines[i][1];
		ui_st_wrap(t, strlen(t), tw, 0, &lo->text);
		ui_rows_push(&lo->key, xstrdup(help_lines[i][0]));
		while (lo->key.n < lo->text.n)
			ui_rows_push(&lo->key, xstrdup(""));
	}
	int rows = u->lay.rows - 1; /* never over the status bar */
	lo->h = lo->text.n + 4 < rows ? lo->text.n + 4 : rows;
	lo->room = lo->h - 3 > 0 ? lo->h - 3 : 0;
}

static void help_layout_free(struct help_layout *lo)
{
	ui_rows_free(&lo->key);
	ui_rows_free(&lo->text);
}

/* The first row shown, kept in range for lo. */
static int help_clamp(int top, const struct help_layout *lo)
{
	int last = lo->text.n - lo->room;
	if (top > last)
		top = last;
	return top < 0 ? 0 : top;
}

/* The help in w, as laid out in lo, from row u->ov.help_top. */
static void help_fill(struct ui *u, WINDOW *w, const struct help_layout *lo)
{
	int h, wd;
	getmaxyx(w, h, wd);
	ui_background(w);
	werase(w);
	wbkgdset(w, ' ');
	for (int y = 0; y < h; y++)
		ui_fill(w, y, 0, wd, UE_OVERLAY);
	ui_draw_box(w, "Keys", 1);
	int n = lo->text.n, room = lo->room;
	u->ov.help_top = help_clamp(u->ov.help_top, lo);
	for (int y = 0; y < room && u->ov.help_top + y < n; y++) {
		int r = u->ov.help_top + y;
		ui_draw_text(w, y + 1, 2, HELP_KEY_W, lo->key.row[r],
		             UE_PROMPT);
		ui_draw_text(w, y + 1, HELP_TEXT_X, wd - HELP_TEXT_X - 2,
		             lo->text.row[r], UE_OVERLAY);
	}
	if (n <= room) {
		ui_draw_text(w, h - 2, 2, wd - 4, "any key closes this help",
		             UE_DIM);
	} else {
		char more[128];
		snprintf(more, sizeof more,
		         "lines %d-%d of %d: j/k, PgUp/PgDn, Home/End "
		         "scroll; other keys close",
		         u->ov.help_top + 1, u->ov.help_top + room, n);
		ui_draw_text(w, h - 2, 2, wd - 4, more, UE_DIM);
	}
}

/* The quit question in w. */
static void confirm_fill(struct ui *u, WINDOW *w)
{
	int h, wd;
	getmaxyx(w, h, wd);
	ui_background(w);
	werase(w);
	for (int y = 0; y < h; y++)
		ui_fill(w, y, 0, wd, UE_APPROVAL);
	ui_draw_box(w, "Quit?", 1);
	const char *what = u->m.phase == UI_IDLE || u->m.phase == UI_ENDED
	                       ? "End the run and quit?"
	                       : "The agent is still working. Stop the run "
	                         "and quit?";
	ui_draw_text(w, 1, 2, wd - 4, what, UE_APPROVAL);
	ui_draw_text(w, 2, 2, wd - 4, "y: quit    n or Esc: go on",
	             UE_APPROVAL);
}

static void confirm_draw(struct ui *u, struct ui_overlay *o);
static int confirm_key(struct ui *u, struct ui_overlay *o, int key, int fn);
static void help_draw(struct ui *u, struct ui_overlay *o);
static int help_key(struct ui *u, struct ui_overlay *o, int key, int fn);
static int help_mouse(struct ui *u, struct ui_overlay *o, const MEVENT *me);

/* Quit? (y/n) over everything; one screen has one. */
static struct ui_overlay confirm_overlay = {
    .name = "quit",
    .layer = UI_LAYER_CONFIRM,
    .flags = UI_OV_MODAL | UI_OV_COVERS_IMAGES,
    .draw = confirm_draw,
    .key = confirm_key,
    .mouse = ui_overlay_mouse_eat,
};

/* The keys, until a key that does not scroll them is pressed. */
static struct ui_overlay help_overlay = {
    .name = "help",
    .layer = UI_LAYER_HELP,
    .flags = UI_OV_MODAL | UI_OV_COVERS_IMAGES,
    .draw = help_draw,
    .key = help_key,
    .mouse = help_mouse,
};

/* Centred over the panes (never over the status bar). */
static WINDOW *help_center_win(struct ui *u, int h, int w)
{
	if (h > u->lay.rows - 1)
		h = u->lay.rows - 1;
	if (w > u->lay.cols)
		w = u->lay.cols;
	return newwin(h, w, (u->lay.rows - 1 - h) / 2, (u->lay.cols - w) / 2);
}

/* The quit question, centred. */
static void confirm_draw(struct ui *u, struct ui_overlay *o)
{
	(void)o;
	WINDOW *w = help_center_win(u, 4, 64);
	confirm_fill(u, w);
	wnoutrefresh(w);
	delwin(w);
}

/* y quits; n, Esc, Ctrl-C or Ctrl-Q again go on; the rest is eaten. */
static int confirm_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	if (!fn && (key == 'y' || key == 'Y'))
		ui_quit(u);
	else if (!fn && (key == 'n' || key == 'N' || key == UI_KEY_ESC ||
	                 key == UI_KEY_CTRL_C || key == UI_KEY_CTRL_Q))
		ui_overlay_pop(u, o);
	return 1;
}

void ui_confirm_quit(struct ui *u)
{
	ui_overlay_push(u, &confirm_overlay);
}

void ui_help_open(struct ui *u)
{
	u->ov.help_top = 0;
	ui_overlay_push(u, &help_overlay);
}

/* The keys, centred. */
static void help_draw(struct ui *u, struct ui_overlay *o)
{
	(void)o;
	struct help_layout lo;
	help_layout(u, &lo);
	WINDOW *w = help_center_win(u, lo.h, lo.wd);
	help_fill(u, w, &lo);
	wnoutrefresh(w);
	delwin(w);
	help_layout_free(&lo);
}

/* How far a key scrolls the help (room rows shown of n); 0: it is not
 * one of the keys that scroll. */
static int help_step(int key, int fn, int room, int n)
{
	if ((fn && key == KEY_DOWN) || (!fn && key == 'j'))
		return 1;
	if ((fn && key == KEY_UP) || (!fn && key == 'k'))
		return -1;
	if ((fn && key == KEY_NPAGE) || (!fn && key == ' '))
		return room;
	if (fn && key == KEY_PPAGE)
		return -room;
	if ((fn && key == KEY_HOME) || (!fn && key == 'g'))
		return -n;
	if ((fn && key == KEY_END) || (!fn && key == 'G'))
		return n;
	return 0;
}

/* Scroll the help by step rows (kept in range). */
static void help_scroll(struct ui *u, int step)
{
	struct help_layout lo;
	help_layout(u, &lo);
	u->ov.help_top = help_clamp(u->ov.help_top + step, &lo);
	help_layout_free(&lo);
	ui_touch(u, UI_DIRTY_OVERLAY);
}

/* Any key closes the help (and does nothing else), but the ones that
 * scroll it when the terminal is too short for it. */
static int help_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	struct help_layout lo;
	help_layout(u, &lo);
	int n = lo.text.n, room = lo.room;
	help_layout_free(&lo);
	int step = n > room && room > 0 ? help_step(key, fn, room, n) : 0;
	if (!step) {
		ui_overlay_pop(u, o);
		return 1;
	}
	help_scroll(u, step);
	return 1;
}

/* The wheel scrolls the help; every click stays with it. */
static int help_mouse(struct ui *u, struct ui_overlay *o, const MEVENT *me)
{
	(void)o;
	if (me->bstate & BUTTON4_PRESSED)
		help_scroll(u, -3);
	else if (me->bstate & BUTTON5_PRESSED)
		help_scroll(u, 3);
	return 1;
}

void ui_confirm_quit_close(struct ui *u)
{
	ui_overlay_pop(u, &confirm_overlay);
}
