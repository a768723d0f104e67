/* keys.c: what a key or a click does in the workbench. The overlay
 * stack gets each key first (overlay.c: the modal ones, then the
 * workbench's own keys below, then the other overlays); what none of
 * them used goes to the replay's timeline, the image preview, the
 * focus keys and the focused pane or the message box. The help and the
 * quit confirmation are overlays of this file. */
#include "tui/history.h"
#include "tui/replay.h"
#include "tui/ui.h"

#include "assay/session.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

/* ---- quitting ---------------------------------------------------------- */

static void keys_confirm_draw(struct ui *u, struct ui_overlay *o);
static int keys_confirm_key(struct ui *u, struct ui_overlay *o, int key,
                            int fn);
static void keys_help_draw(struct ui *u, struct ui_overlay *o);
static int keys_help_key(struct ui *u, struct ui_overlay *o, int key, int fn);

/* Quit? (y/n) over everything; one screen has one. */
static struct ui_overlay confirm_overlay = {
    .name = "quit",
    .layer = UI_LAYER_CONFIRM,
    .flags = UI_OV_MODAL | UI_OV_COVERS_IMAGES,
    .draw = keys_confirm_draw,
    .key = keys_confirm_key,
    .mouse = ui_overlay_mouse_eat,
};

/* The keys, until any key is pressed. */
static struct ui_overlay help_overlay = {
    .name = "help",
    .layer = UI_LAYER_HELP,
    .flags = UI_OV_MODAL | UI_OV_COVERS_IMAGES,
    .draw = keys_help_draw,
    .key = keys_help_key,
    .mouse = ui_overlay_mouse_eat,
};

void ui_quit(struct ui *u)
{
	ui_overlay_pop(u, &confirm_overlay);
	if (u->s && session_state(u->s) != SESSION_DONE)
		session_end(u->s);
	/* the end of a run may take a while (its archive): the loop goes
	 * on until run_end, and the screen with it */
	u->quitting = 1;
	if (!u->s || session_state(u->s) == SESSION_DONE)
		u->quit = 1;
	else
		ui_notice(u, "ending the run: the workspace is being saved");
}

/* The agent is at work: quitting then stops it. */
static int keys_busy(const struct ui *u)
{
	return u->m.phase == UI_STARTING || u->m.phase == UI_REQUESTING ||
	       u->m.phase == UI_EXECUTING;
}

void ui_confirm_quit(struct ui *u)
{
	ui_overlay_push(u, &confirm_overlay);
}

/* Ctrl-Q: asks first while the agent works (a view goes back to its
 * owner: nothing stops). */
static void keys_request_quit(struct ui *u)
{
	if (u->view)
		ui_view_leave(u, 0);
	else if (keys_busy(u) && u->s) /* a replay has nothing to stop */
		ui_confirm_quit(u);
	else
		ui_quit(u);
}

/* Centred over the panes (never over the status bar). */
static WINDOW *keys_center_win(struct ui *u, int h, int w)
{
	if (h > u->rows - 1)
		h = u->rows - 1;
	if (w > u->cols)
		w = u->cols;
	return newwin(h, w, (u->rows - 1 - h) / 2, (u->cols - w) / 2);
}

/* The quit question, centred. */
static void keys_confirm_draw(struct ui *u, struct ui_overlay *o)
{
	(void)o;
	WINDOW *w = keys_center_win(u, 4, 64);
	ui_draw_confirm(u, w);
	wnoutrefresh(w);
	delwin(w);
}

/* y quits; n, Esc, Ctrl-C or Ctrl-Q again go on; the rest is eaten. */
static int keys_confirm_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	if (!fn && (key == 'y' || key == 'Y'))
		ui_quit(u);
	else if (!fn && (key == 'n' || key == 'N' || key == UI_KEY_ESC ||
	                 key == UI_KEY_CTRL_C || key == UI_KEY_CTRL_Q))
		ui_overlay_pop(u, o);
	return 1;
}

void ui_help_open(struct ui *u)
{
	u->help_top = 0;
	ui_overlay_push(u, &help_overlay);
}

/* The keys, centred. */
static void keys_help_draw(struct ui *u, struct ui_overlay *o)
{
	(void)o;
	WINDOW *w = keys_center_win(u, ui_help_lines() + 4, 78);
	ui_draw_help(u, w);
	wnoutrefresh(w);
	delwin(w);
}

/* Any key closes the help (and does nothing else), but the ones that
 * scroll it when the terminal is too short for it. */
static int keys_help_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	int n = ui_help_lines();
	int room = (n + 4 > u->rows - 1 ? u->rows - 1 : n + 4) - 3;
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
	u->help_top += step;
	if (u->help_top > n - room)
		u->help_top = n - room;
	if (u->help_top < 0)
		u->help_top = 0;
	ui_touch(u, UI_DIRTY_OVERLAY);
	return 1;
}

/* Ctrl-C: stops what runs; when nothing does, twice quits. */
static void keys_ctrl_c(struct ui *u)
{
	if (ui_pager_busy(u)) {
		ui_pager_cancel_search(u);
		return;
	}
	if (ui_hist_search_cancel(u)) /* the draft back, nothing stopped */
		return;
	if (u->view) { /* its owner's sessions, all of them */
		if (u->ctrl_c_armed)
			ui_view_leave(u, 1);
		u->ctrl_c_armed = !u->ctrl_c_armed;
		if (u->ctrl_c_armed)
			ui_notice(u, "Ctrl-C again stops every session of the "
			             "eval (Esc: back to the table)");
		return;
	}
	if (u->s && session_cancel(u->s)) {
		u->ctrl_c_armed = 0;
		ui_notice(u, "stopping: the agent waits for your next message");
		return;
	}
	if (u->ctrl_c_armed) {
		u->ctrl_c_armed = 0;
		ui_confirm_quit(u);
		return;
	}
	u->ctrl_c_armed = 1;
	ui_notice(u, "nothing is running: Ctrl-C again to quit");
}

/* ---- the message box ------------------------------------------------- */

/* Enter: the box's text goes to the agent, if it can take it now. */
static void keys_send_input(struct ui *u)
{
	if (u->m.phase == UI_ENDED) {
		ui_notice(u, "the run has ended: Ctrl-Q quits");
		return;
	}
	if (u->m.phase != UI_IDLE) {
		ui_notice(u, "the agent is busy: wait, or Ctrl-C to stop it");
		return;
	}
	char *msg = ui_input_take(&u->in);
	if (!msg)
		return;
	char *err = NULL;
	if (!u->s || session_send(u->s, msg, &err) < 0) {
		ui_notice(u, "%s", err ? err : "cannot send");
		ui_input_insert(&u->in, msg, strlen(msg));
	} else {
		ui_hist_record(u, msg); /* for later runs */
	}
	free(err);
	free(msg);
	u->conv_follow = 1;
}

void ui_field_key(struct ui_input *in, int key, int fn)
{
	if (ui_key_enter(key, fn)) {
		ui_input_insert(in, "\n", 1);
	} else if (!fn && key == UI_KEY_CTRL_U) { /* the whole field */
		buf_reset(&in->text);
		in->cur = 0;
		in->overflow = 0;
	} else if (!fn && key == UI_KEY_TAB) {
		ui_input_insert(in, "\t", 1);
	} else {
		ui_edit_key(in, key, fn);
	}
}

int ui_edit_key(struct ui_input *in, int key, int fn)
{
	if (ui_key_backspace(key, fn))
		ui_input_backspace(in);
	else if ((fn && key == KEY_DC) || (!fn && key == UI_KEY_CTRL_D))
		ui_input_delete(in);
	else if (fn && key == KEY_LEFT)
		ui_input_left(in);
	else if (fn && key == KEY_RIGHT)
		ui_input_right(in);
	else if ((fn && key == KEY_HOME) || (!fn && key == UI_KEY_CTRL_A))
		ui_input_home(in);
	else if ((fn && key == KEY_END) || (!fn && key == UI_KEY_CTRL_E))
		ui_input_end(in);
	else if (!fn && key == UI_KEY_CTRL_K)
		ui_input_kill_end(in);
	else if (!fn && key == UI_KEY_CTRL_W)
		ui_input_kill_word(in);
	else if (fn && key == KEY_UP)
		ui_input_up(in);
	else if (fn && key == KEY_DOWN)
		ui_input_down(in);
	else if (ui_key_text(key, fn)) {
		char u8[4];
		ui_input_insert(in, u8, ui_u8_encode((uint32_t)key, u8));
	} else
		return 0;
	return 1;
}

/* A key in the message box; the box grows or shrinks with its text. */
static void keys_input(struct ui *u, int key, int fn)
{
	struct ui_input *in = &u->in;
	int before = ui_input_rows_wanted(u, u->cols);
	if (!fn && u->in_paste &&
	    (key == UI_KEY_ENTER || key == UI_KEY_CTRL_J ||
	     key == UI_KEY_TAB)) {
		char c = key == UI_KEY_TAB ? '\t' : '\n';
		ui_input_insert(in, &c, 1);
	} else if (!fn && key == UI_KEY_ENTER) {
		keys_send_input(u);
	} else if (!fn && key == UI_KEY_CTRL_J) {
		ui_input_insert(in, "\n", 1);
	} else if (!fn && key == UI_KEY_CTRL_U) {
		ui_input_kill_start(in);
	} else if (!fn && key == UI_KEY_CTRL_R && !u->in_paste) {
		ui_hist_search_open(u);
	} else if (ui_edit_key(in, key, fn)) {
		/* done */
	} else if (fn && (key == KEY_PPAGE || key == KEY_NPAGE)) {
		int page = u->g[P_CONV].h - 3;
		ui_conv_scroll(u, key == KEY_PPAGE ? -page : page);
	} else {
		return;
	}
	if (ui_input_rows_wanted(u, u->cols) != before)
		ui_touch(u, UI_DIRTY_LAYOUT);
	ui_touch(u, UI_DIRTY_INPUT);
}

/* ---- the panes ----------------------------------------------------------- */

/* ] and [ in the Conversation: the next or previous call's summary. */
static void keys_conv_jump_call(struct ui *u, int dir)
{
	int i = u->conv_sel >= 0 ? u->conv_sel + dir
	                         : (dir > 0 ? 0 : u->m.nitems - 1);
	for (; i >= 0 && i < u->m.nitems; i += dir)
		if (u->m.items[i].kind == UI_ITEM_CALL) {
			ui_select_call(u, u->m.items[i].call, 1);
			/* bring it into view */
			u->conv_follow = 0;
			u->conv_item = i;
			u->conv_row = 0;
			ui_conv_scroll(u, -(u->g[P_CONV].h - 2) / 2);
			return;
		}
}

/* Scrolling the Conversation; Enter opens the selected call. */
static void keys_conv(struct ui *u, int key, int fn)
{
	int page = u->g[P_CONV].h - 3;
	if ((fn && key == KEY_DOWN) || (!fn && key == 'j'))
		ui_conv_scroll(u, 1);
	else if ((fn && key == KEY_UP) || (!fn && key == 'k'))
		ui_conv_scroll(u, -1);
	else if (fn && key == KEY_NPAGE)
		ui_conv_scroll(u, page);
	else if (fn && key == KEY_PPAGE)
		ui_conv_scroll(u, -page);
	else if ((fn && key == KEY_HOME) || (!fn && key == 'g'))
		ui_conv_home(u);
	else if ((fn && key == KEY_END) || (!fn && key == 'G')) {
		u->conv_follow = 1;
		ui_touch(u, UI_DIRTY_CONV);
	} else if (!fn && (key == ']' || key == '['))
		keys_conv_jump_call(u, key == ']' ? 1 : -1);
	else if (!fn && (key == UI_KEY_ENTER || key == 'o') &&
	         u->conv_sel >= 0 && u->conv_sel < u->m.nitems)
		ui_pager_open_call(u, u->m.items[u->conv_sel].call);
}

/* Tools: select a call, scroll its output, open it in the pager. */
static void keys_tools(struct ui *u, int key, int fn)
{
	int page = u->out_rows_shown > 2 ? u->out_rows_shown - 1 : 1;
	int sel = u->sel_call < 0 ? u->m.ncalls - 1 : u->sel_call;
	if ((fn && key == KEY_DOWN) || (!fn && key == 'j'))
		ui_select_call(u, sel + 1, 1);
	else if ((fn && key == KEY_UP) || (!fn && key == 'k'))
		ui_select_call(u, sel - 1, 1);
	else if (!fn && key == 'g')
		ui_select_call(u, 0, 1);
	else if (!fn && key == 'G')
		ui_select_call(u, u->m.ncalls - 1, 1);
	else if (fn && key == KEY_PPAGE)
		u->out_scroll += page;
	else if (fn && key == KEY_NPAGE)
		u->out_scroll = u->out_scroll > page ? u->out_scroll - page : 0;
	else if (fn && key == KEY_HOME)
		u->out_scroll = 1 << 20;
	else if (fn && key == KEY_END)
		u->out_scroll = 0;
	else if (!fn && (key == UI_KEY_ENTER || key == 'o'))
		ui_pager_open_call(u, sel);
	else if (!fn && key == 'd')
		ui_diff_open_call(u, sel);
	else if (!fn && key == 't')
		ui_table_open_call(u, sel);
	ui_touch(u, UI_DIRTY_TOOLS);
}

/* Workspace: Enter, l, o or Right on a node: a directory opens or
 * closes, a file opens in the pager (an image in the preview, a .csv
 * or .tsv in the table view); t opens any file as a table. */
static void keys_tree_open(struct ui *u, struct ui_node *n, int key, int fn)
{
	int enter = !fn && (key == UI_KEY_ENTER || key == 'o');
	if (n->type == UI_N_DIR) {
		n->expanded = enter ? !n->expanded : 1;
		u->m.tree.vis_dirty = 1;
	} else if (n->type == UI_N_FILE && !fn && key == 't') {
		ui_table_open_file(u, n->path);
	} else if (n->type == UI_N_FILE && enter) {
		if (ui_preview_is_image(n->path))
			ui_preview_open(u, n->path, 0);
		else if (ui_table_is_table(n->path))
			ui_table_open_file(u, n->path);
		else
			ui_pager_open_file(u, n->path);
	}
}

/* Workspace: h or Left closes a directory, else goes to its parent. */
static void keys_tree_close(struct ui *u, struct ui_node *n)
{
	if (n->type == UI_N_DIR && n->expanded) {
		n->expanded = 0;
		u->m.tree.vis_dirty = 1;
	} else if (n->parent && n->parent->parent) {
		free(u->tree_cur_path);
		u->tree_cur_path = xstrdup(n->parent->path);
	}
}

/* How far a key moves the Workspace's cursor (0: it does not). */
static int keys_tree_move(struct ui *u, int key, int fn, int nvis)
{
	int page = u->g[P_TREE].h - 3;
	if ((fn && key == KEY_DOWN) || (!fn && key == 'j'))
		return 1;
	if ((fn && key == KEY_UP) || (!fn && key == 'k'))
		return -1;
	if (fn && key == KEY_NPAGE)
		return page;
	if (fn && key == KEY_PPAGE)
		return -page;
	if ((fn && key == KEY_HOME) || (!fn && key == 'g'))
		return -nvis;
	if ((fn && key == KEY_END) || (!fn && key == 'G'))
		return nvis;
	return 0;
}

/* The Workspace pane's keys. */
static void keys_tree(struct ui *u, int key, int fn)
{
	struct ui_tree *t = &u->m.tree;
	ui_tree_visible(t);
	if (!t->nvis)
		return;
	struct ui_node *n =
	    t->vis[u->tree_cur < (int)t->nvis ? u->tree_cur : 0];
	int move = keys_tree_move(u, key, fn, (int)t->nvis);
	if ((!fn &&
	     (key == UI_KEY_ENTER || key == 'l' || key == 'o' || key == 't')) ||
	    (fn && key == KEY_RIGHT))
		keys_tree_open(u, n, key, fn);
	else if ((!fn && key == 'h') || (fn && key == KEY_LEFT))
		keys_tree_close(u, n);
	else if (!fn && key == 'd' && n->type == UI_N_FILE)
		ui_diff_open_file(u, n->path);
	if (move) {
		int c = u->tree_cur + move;
		if (c < 0)
			c = 0;
		if (c >= (int)t->nvis)
			c = (int)t->nvis - 1;
		u->tree_cur = c;
		free(u->tree_cur_path);
		u->tree_cur_path = xstrdup(t->vis[c]->path);
	}
	ui_touch(u, UI_DIRTY_TREE);
}

/* ---- the mouse ------------------------------------------------------------
 */

/* The pane under a screen cell, or -1. */
static int keys_pane_at(struct ui *u, int y, int x)
{
	for (int p = 0; p < P_COUNT; p++) {
		struct ui_geom *g = &u->g[p];
		if (g->shown && y >= g->y && y < g->y + g->h && x >= g->x &&
		    x < g->x + g->w)
			return p;
	}
	return -1;
}

/* The wheel over a pane scrolls it. */
static void keys_wheel(struct ui *u, int p, int wheel)
{
	if (p == P_CONV) {
		ui_conv_scroll(u, wheel);
	} else if (p == P_TOOLS) {
		u->out_scroll -= wheel;
		if (u->out_scroll < 0)
			u->out_scroll = 0;
		ui_touch(u, UI_DIRTY_TOOLS);
	} else if (p == P_TREE) {
		u->tree_cur += wheel;
		free(u->tree_cur_path);
		u->tree_cur_path = NULL;
		ui_touch(u, UI_DIRTY_TREE);
	}
}

/* A click focuses the pane and selects the call or the node under it. */
static void keys_click(struct ui *u, int p, int y)
{
	struct ui_geom *g = &u->g[p];
	if (u->focus != p)
		ui_set_focus(u, p);
	int row = y - g->y;
	if (p == P_CONV) {
		int i = ui_conv_item_at(u, row);
		if (i >= 0 && u->m.items[i].kind == UI_ITEM_CALL)
			ui_select_call(u, u->m.items[i].call, 1);
	} else if (p == P_TOOLS && row >= 1) {
		int i = u->list_top + row - 1;
		if (i < u->m.ncalls && row - 1 < (g->h - 2) / 3 + 1)
			ui_select_call(u, i, 1);
	} else if (p == P_TREE && row >= 1) {
		u->tree_cur = u->tree_top + row - 1;
		free(u->tree_cur_path);
		u->tree_cur_path = NULL;
		ui_touch(u, UI_DIRTY_TREE);
	}
}

/* KEY_MOUSE: the stack first (the pager and the modal ones keep it),
 * then the pane under the pointer. */
static void keys_mouse(struct ui *u)
{
	MEVENT me;
	if (getmouse(&me) != OK || ui_overlay_mouse(u, &me))
		return;
	int p = keys_pane_at(u, me.y, me.x);
	if (p < 0)
		return;
	int wheel = me.bstate & BUTTON4_PRESSED   ? -3
	            : me.bstate & BUTTON5_PRESSED ? 3
	                                          : 0;
	if (wheel)
		keys_wheel(u, p, wheel);
	else if (me.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED))
		keys_click(u, p, me.y);
}

/* ---- dispatch ------------------------------------------------------------ */

/* The workbench's own keys, under the modal overlays and over the
 * others; 1 if key was one. */
static int keys_workbench(struct ui *u, int key, int fn)
{
	if (!fn && key == UI_KEY_CTRL_Q) {
		keys_request_quit(u);
	} else if (!fn && key == UI_KEY_CTRL_C) {
		keys_ctrl_c(u);
	} else if (!fn && key == UI_KEY_CTRL_L) {
		clearok(curscr, TRUE);
		ui_touch(u, UI_DIRTY_EVERYTHING);
	} else if (fn && key == KEY_RESIZE) {
		ui_touch(u, UI_DIRTY_LAYOUT);
	} else if (fn && key == KEY_MOUSE) {
		keys_mouse(u);
	} else if (fn && key == KEY_F(1)) {
		ui_help_open(u);
	} else {
		return 0;
	}
	return 1;
}

/* A view's own keys: Esc leaves; the message box takes nothing. */
static int keys_view(struct ui *u, int key, int fn)
{
	if (!fn && key == UI_KEY_ESC) {
		ui_view_leave(u, 0);
		return 1;
	}
	if (u->focus != P_INPUT || (!fn && (key == UI_KEY_TAB || key == '?')) ||
	    (fn && (key == KEY_BTAB || key == KEY_PPAGE || key == KEY_NPAGE)))
		return 0;
	ui_notice(u, "read-only: a session of assay eval (Esc: back to the "
	             "table)");
	return 1;
}

/* What no overlay used: the replay's timeline, the preview, the focus
 * keys, then the message box or the focused pane. */
static void keys_panes(struct ui *u, int key, int fn)
{
	if (fn && (key == UI_KEY_PASTE_BEGIN || key == UI_KEY_PASTE_END)) {
		/* a paste goes into the message box */
		if (u->in_paste && u->focus != P_INPUT)
			ui_set_focus(u, P_INPUT);
		return;
	}
	if (ui_replay_key(u, key, fn) || ui_preview_key(u, key, fn))
		return;
	if (u->view && keys_view(u, key, fn))
		return;
	if (!fn && key == UI_KEY_TAB && !u->in_paste) {
		ui_set_focus(u, u->focus + 1);
		return;
	}
	if (fn && key == KEY_BTAB) {
		ui_set_focus(u, u->focus - 1);
		return;
	}
	if (u->focus == P_INPUT &&
	    !(!fn && key == '?' && !u->in.text.len && !u->in_paste)) {
		/* ? in an empty box is the help, as in the panes */
		keys_input(u, key, fn);
		return;
	}
	if (!fn && key == '?')
		ui_help_open(u);
	else if (!fn && key == 's')
		ui_step_toggle(u);
	else if (!fn && (key == 'i' || key == UI_KEY_ESC))
		ui_set_focus(u, P_INPUT);
	else if (u->focus == P_CONV)
		keys_conv(u, key, fn);
	else if (u->focus == P_TOOLS)
		keys_tools(u, key, fn);
	else if (u->focus == P_TREE)
		keys_tree(u, key, fn);
}

void ui_handle_key(struct ui *u, int key, int fn)
{
	if (!(!fn && key == UI_KEY_CTRL_C))
		u->ctrl_c_armed = 0;
	if (fn && (key == UI_KEY_PASTE_BEGIN || key == UI_KEY_PASTE_END))
		u->in_paste = key == UI_KEY_PASTE_BEGIN;
	if (!ui_overlay_key(u, key, fn, keys_workbench))
		keys_panes(u, key, fn);
}
