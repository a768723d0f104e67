/* help.c: the workbench's own two overlays: the keys (F1, ?), which
 * scroll when the terminal is shorter than they are, and the quit?
 * (y/n) question asked while the agent works. */
#include "tui/ui.h"

#include <stdio.h>

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

static int help_nlines(void)
{
	return (int)(sizeof help_lines / sizeof *help_lines);
}

/* The help in w from line u->ov.help_top (kept in range). */
static void help_fill(struct ui *u, WINDOW *w)
{
	int h, wd;
	getmaxyx(w, h, wd);
	ui_background(w);
	werase(w);
	wbkgdset(w, ' ');
	for (int y = 0; y < h; y++)
		ui_fill(w, y, 0, wd, UE_OVERLAY);
	ui_draw_box(w, "Keys", 1);
	int n = help_nlines(), room = h - 3 > 0 ? h - 3 : 0;
	if (u->ov.help_top > n - room)
		u->ov.help_top = n - room > 0 ? n - room : 0;
	for (int y = 0; y < room && u->ov.help_top + y < n; y++) {
		const char *const *l = help_lines[u->ov.help_top + y];
		ui_draw_text(w, y + 1, 2, 22, l[0], UE_PROMPT);
		ui_draw_text(w, y + 1, 25, wd - 27, l[1], UE_OVERLAY);
	}
	if (n <= room) {
		ui_draw_text(w, h - 2, 2, wd - 4, "any key closes this help",
		             UE_DIM);
	} else {
		char more[96];
		snprintf(more, sizeof more,
		         "lines %d-%d of %d: j/k, PgUp/PgDn scroll; any other "
		         "key closes",
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

/* Quit? (y/n) over everything; one screen has one. */
static struct ui_overlay confirm_overlay = {
    .name = "quit",
    .layer = UI_LAYER_CONFIRM,
    .flags = UI_OV_MODAL | UI_OV_COVERS_IMAGES,
    .draw = confirm_draw,
    .key = confirm_key,
    .mouse = ui_overlay_mouse_eat,
};

/* The keys, until any key is pressed. */
static struct ui_overlay help_overlay = {
    .name = "help",
    .layer = UI_LAYER_HELP,
    .flags = UI_OV_MODAL | UI_OV_COVERS_IMAGES,
    .draw = help_draw,
    .key = help_key,
    .mouse = ui_overlay_mouse_eat,
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
	WINDOW *w = help_center_win(u, help_nlines() + 4, 78);
	help_fill(u, w);
	wnoutrefresh(w);
	delwin(w);
}

/* Any key closes the help (and does nothing else), but the ones that
 * scroll it when the terminal is too short for it. */
static int help_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	int n = help_nlines();
	int room = (n + 4 > u->lay.rows - 1 ? u->lay.rows - 1 : n + 4) - 3;
	int step = 0;
	if (n > room && room > 0) {
		if ((fn && key == KEY_DOWN) || (!fn && key == 'j'))
			step = 1;
		else if ((fn && key == KEY_UP) || (!fn && key == 'k'))
			step = -1;
		else if ((fn && key == KEY_NPAGE) || (!fn && key == ' '))
			step = room;
		else if (fn && key == KEY_PPAGE)
			step = -room;
	}
	if (!step) {
		ui_overlay_pop(u, o);
		return 1;
	}
	u->ov.help_top += step;
	if (u->ov.help_top > n - room)
		u->ov.help_top = n - room;
	if (u->ov.help_top < 0)
		u->ov.help_top = 0;
	ui_touch(u, UI_DIRTY_OVERLAY);
	return 1;
}

void ui_confirm_quit_close(struct ui *u)
{
	ui_overlay_pop(u, &confirm_overlay);
}
