/* keys.c: what a key or a click does in the workbench. The overlay
 * stack gets each key first (overlay.c: the modal ones, then the
 * workbench's own keys below, then the other overlays); what none of
 * them used goes to the replay's timeline, the image preview, the
 * focus keys and the focused pane or the message box (a pane's own
 * keys are its owner's: panes.c, pane_tools.c, workspace.c). */
#include "tui/history.h"
#include "tui/replay.h"
#include "tui/ui.h"

#include "assay/session.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

/* ---- quitting ---------------------------------------------------------- */

/* The agent is at work: quitting then stops it. */
static int keys_busy(const struct ui *u)
{
	return u->m.phase == UI_STARTING || u->m.phase == UI_REQUESTING ||
	       u->m.phase == UI_EXECUTING;
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
		if (u->keys.ctrl_c_armed)
			ui_view_leave(u, 1);
		u->keys.ctrl_c_armed = !u->keys.ctrl_c_armed;
		if (u->keys.ctrl_c_armed)
			ui_notice(u, "Ctrl-C again stops every session of the "
			             "eval (Esc: back to the table)");
		return;
	}
	if (u->s && session_cancel(u->s)) {
		u->keys.ctrl_c_armed = 0;
		ui_notice(u, "stopping: the agent waits for your next message");
		return;
	}
	if (u->keys.ctrl_c_armed) {
		u->keys.ctrl_c_armed = 0;
		ui_confirm_quit(u);
		return;
	}
	u->keys.ctrl_c_armed = 1;
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
	ui_conv_follow(u);
}

void ui_field_key(struct ui_input *in, int key, int fn)
{
	if (ui_key_enter(key, fn)) {
		ui_input_insert(in, "\n", 1);
	} else if (!fn && key == UI_KEY_CTRL_U) { /* the whole field */
		ui_input_set(in, "", 0);
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
	int before = ui_input_rows_wanted(u, u->lay.cols);
	if (!fn && u->keys.in_paste &&
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
	} else if (!fn && key == UI_KEY_CTRL_R && !u->keys.in_paste) {
		ui_hist_search_open(u);
	} else if (ui_edit_key(in, key, fn)) {
		/* done */
	} else if (fn && (key == KEY_PPAGE || key == KEY_NPAGE)) {
		int page = u->lay.g[P_CONV].h - 3;
		ui_conv_scroll(u, key == KEY_PPAGE ? -page : page);
	} else {
		return;
	}
	if (ui_input_rows_wanted(u, u->lay.cols) != before)
		ui_touch(u, UI_DIRTY_LAYOUT);
	ui_touch(u, UI_DIRTY_INPUT);
}

/* ---- the panes ----------------------------------------------------------- */

/* ---- the mouse ------------------------------------------------------------
 */

/* The pane under a screen cell, or -1. */
static int keys_pane_at(struct ui *u, int y, int x)
{
	for (int p = 0; p < P_COUNT; p++) {
		struct ui_geom *g = &u->lay.g[p];
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
		ui_tools_wheel(u, wheel);
	} else if (p == P_TREE) {
		ui_ws_wheel(u, wheel);
	}
}

/* A click focuses the pane and selects the call or the node under it. */
static void keys_click(struct ui *u, int p, int y)
{
	struct ui_geom *g = &u->lay.g[p];
	if (u->lay.focus != p)
		ui_set_focus(u, p);
	int row = y - g->y;
	if (p == P_CONV) {
		int i = ui_conv_item_at(u, row);
		if (i >= 0 && u->m.items[i].kind == UI_ITEM_CALL)
			ui_select_call(u, u->m.items[i].call, 1);
	} else if (p == P_TOOLS && row >= 1) {
		int i = u->tools.list_top + row - 1;
		if (i < u->m.ncalls && row - 1 < (g->h - 2) / 3 + 1)
			ui_select_call(u, i, 1);
	} else if (p == P_TREE && row >= 1) {
		ui_ws_click(u, row);
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
	if (u->lay.focus != P_INPUT ||
	    (!fn && (key == UI_KEY_TAB || key == '?')) ||
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
		if (u->keys.in_paste && u->lay.focus != P_INPUT)
			ui_set_focus(u, P_INPUT);
		return;
	}
	if (ui_replay_key(u, key, fn) || ui_preview_key(u, key, fn))
		return;
	if (u->view && keys_view(u, key, fn))
		return;
	if (!fn && key == UI_KEY_TAB && !u->keys.in_paste) {
		ui_set_focus(u, u->lay.focus + 1);
		return;
	}
	if (fn && key == KEY_BTAB) {
		ui_set_focus(u, u->lay.focus - 1);
		return;
	}
	if (u->lay.focus == P_INPUT &&
	    !(!fn && key == '?' && !u->in.text.len && !u->keys.in_paste)) {
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
	else if (u->lay.focus == P_CONV)
		ui_conv_key(u, key, fn);
	else if (u->lay.focus == P_TOOLS)
		ui_tools_key(u, key, fn);
	else if (u->lay.focus == P_TREE)
		ui_ws_key(u, key, fn);
}

void ui_handle_key(struct ui *u, int key, int fn)
{
	if (!(!fn && key == UI_KEY_CTRL_C))
		u->keys.ctrl_c_armed = 0;
	if (fn && (key == UI_KEY_PASTE_BEGIN || key == UI_KEY_PASTE_END))
		u->keys.in_paste = key == UI_KEY_PASTE_BEGIN;
	if (!ui_overlay_key(u, key, fn, keys_workbench))
		keys_panes(u, key, fn);
}
