/* ui.c: the interactive workbench: the session's observer, the one
 * poll loop (the terminal is one more fd; SIGWINCH comes through the
 * loop's self-pipe), the layout for wide and small terminals, keys and
 * mouse, and frames coalesced to at most one per UI_FRAME_MS, built with
 * wnoutrefresh and sent with one doupdate. stderr goes to the run's log
 * while curses owns the screen. */
#include "tui/ui.h"
#include "tui/image.h"
#include "tui/replay.h"
#include "tui/termcaps.h"

#include "assay/config.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/sandbox.h"
#include "assay/session.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <unistd.h>

#define KEY_PASTE_BEGIN (KEY_MAX + 1)
#define KEY_PASTE_END (KEY_MAX + 2)
#define NOTICE_MS 4000

static void frame(struct ui *u);

static void on_frame_timer(void *arg)
{
	struct ui *u = arg;
	u->frame_timer = 0;
	frame(u);
}

void ui_touch(struct ui *u, unsigned bits)
{
	u->dirty |= bits;
	if (u->frame_timer || !u->dirty)
		return;
	int64_t due = u->last_frame + UI_FRAME_MS - now_ms();
	u->frame_timer =
	    loop_timer_add(u->loop, due > 0 ? due : 0, on_frame_timer, u);
}

void ui_notice(struct ui *u, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(u->notice);
	char *raw = xvasprintf(fmt, ap);
	va_end(ap);
	u->notice = ui_clean(raw, strlen(raw), 0);
	free(raw);
	u->notice_until = now_ms() + NOTICE_MS;
	ui_touch(u, UI_DIRTY_STATUS);
}

/* ---- layout ------------------------------------------------------------ */

static void drop_windows(struct ui *u)
{
	for (int i = 0; i < P_COUNT; i++) {
		if (u->g[i].win)
			delwin(u->g[i].win);
		u->g[i].win = NULL;
		u->g[i].shown = 0;
	}
	if (u->status)
		delwin(u->status);
	u->status = NULL;
}

static int input_rows_wanted(struct ui *u, int cols)
{
	return ui_input_rows(&u->in, cols - 4, u->rows >= 30 ? 8 : 3);
}

static void place(struct ui *u, int p, int y, int x, int h, int w)
{
	struct ui_geom *g = &u->g[p];
	*g = (struct ui_geom){y, x, h, w, 1, newwin(h, w, y, x)};
	leaveok(g->win, p != P_INPUT);
}

/* Three panes side by side from 120 columns; below that Conversation
 * on the left, Tools over Workspace on the right; on a very narrow
 * terminal the focused pane alone. */
static void layout(struct ui *u)
{
	drop_windows(u);
	getmaxyx(stdscr, u->rows, u->cols);
	u->too_small = u->rows < 10 || u->cols < 40;
	if (u->too_small)
		return;
	u->status = newwin(1, u->cols, u->rows - 1, 0);
	leaveok(u->status, TRUE);
	int ih = input_rows_wanted(u, u->cols) + 2;
	int iy = u->rows - 1 - ih, ph = iy;
	place(u, P_INPUT, iy, 0, ih, u->cols);
	if (u->cols >= 120) {
		int cw = u->cols * 40 / 100, tw = u->cols * 37 / 100;
		place(u, P_CONV, 0, 0, ph, cw);
		place(u, P_TOOLS, 0, cw, ph, tw);
		place(u, P_TREE, 0, cw + tw, ph, u->cols - cw - tw);
	} else if (u->cols >= 60 && ph >= 8) {
		int cw = u->cols / 2, th = ph * 6 / 10;
		place(u, P_CONV, 0, 0, ph, cw);
		place(u, P_TOOLS, 0, cw, th, u->cols - cw);
		place(u, P_TREE, th, cw, ph - th, u->cols - cw);
	} else {
		int p = u->focus == P_INPUT ? P_CONV : u->focus;
		place(u, p, 0, 0, ph, u->cols);
	}
}

/* ---- frames ------------------------------------------------------------ */

static WINDOW *center_win(struct ui *u, int h, int w)
{
	if (h > u->rows - 1)
		h = u->rows - 1;
	if (w > u->cols)
		w = u->cols;
	return newwin(h, w, (u->rows - 1 - h) / 2, (u->cols - w) / 2);
}

/* The dialogs over the panes; 1 when the Approval field has the
 * cursor (nothing is drawn over it). */
static int draw_overlays(struct ui *u)
{
	int cursor = 0;
	if (!u->too_small && ui_approval_shown(u))
		cursor = ui_approval_draw(u);
	else if (!u->too_small && ui_step_shown(u))
		cursor = ui_step_draw(u);
	else if (!u->too_small && u->replay)
		cursor = ui_replay_draw(u);
	if (u->help) {
		WINDOW *w = center_win(u, ui_help_lines() + 4, 78);
		ui_draw_help(u, w);
		wnoutrefresh(w);
		delwin(w);
	}
	if (u->confirm_quit) {
		WINDOW *w = center_win(u, 4, 64);
		ui_draw_confirm(u, w);
		wnoutrefresh(w);
		delwin(w);
	}
	return cursor && !u->help && !u->confirm_quit;
}

static void frame(struct ui *u)
{
	int64_t t0 = now_ms();
	struct timeval tv0, tv1;
	if (ui_preview_busy(u))
		return; /* drawn when the image's bytes are out */
	gettimeofday(&tv0, NULL);
	if (u->dirty & UI_DIRTY_LAYOUT) {
		layout(u);
		u->dirty = UI_DIRTY_EVERYTHING & ~UI_DIRTY_LAYOUT;
		wnoutrefresh(stdscr);
	}
	unsigned d = u->dirty;
	u->dirty = 0;
	if (u->too_small) {
		werase(stdscr);
		mvwaddstr(stdscr, 0, 0, "terminal too small for assay (40x10)");
		wnoutrefresh(stdscr);
		ui_preview_draw(u); /* only erases a placed image */
		doupdate();
		ui_preview_emit(u); /* kitty's delete */
		u->last_frame = t0;
		return;
	}
	int overlay = u->help || u->confirm_quit || ui_approval_shown(u);
	if (u->pager) {
		WINDOW *w = newwin(u->rows - 1, u->cols, 0, 0);
		leaveok(w, TRUE);
		ui_pager_draw(u, w);
		wnoutrefresh(w);
		delwin(w);
	} else {
		static const int bit[P_COUNT] = {UI_DIRTY_CONV, UI_DIRTY_TOOLS,
		                                 UI_DIRTY_TREE, UI_DIRTY_INPUT};
		static void (*const draw[P_COUNT])(struct ui *) = {
		    ui_draw_conv, ui_draw_tools, ui_draw_tree, ui_draw_input};
		for (int p = 0; p < P_COUNT; p++) {
			if (!u->g[p].shown)
				continue;
			if ((d & bit[p]) || (d & UI_DIRTY_OVERLAY)) {
				draw[p](u);
				wnoutrefresh(u->g[p].win);
			}
		}
	}
	ui_preview_draw(u); /* over the Tools pane, under the overlays */
	ui_draw_status(u);
	wnoutrefresh(u->status);
	int field = draw_overlays(u);
	int cursor =
	    u->focus == P_INPUT && !overlay && !u->pager && u->g[P_INPUT].shown;
	if (cursor) /* the cursor goes where the input window left it */
		wnoutrefresh(u->g[P_INPUT].win);
	curs_set(cursor || field ? 1 : 0);
	doupdate();
	ui_preview_emit(u); /* images go onto what curses has sent */
	u->last_frame = t0;
	gettimeofday(&tv1, NULL);
	int64_t us = (int64_t)(tv1.tv_sec - tv0.tv_sec) * 1000000 +
	             (tv1.tv_usec - tv0.tv_usec);
	u->frames++;
	if (us > u->frame_us_max)
		u->frame_us_max = us;
}

static void on_stats(void *arg)
{
	struct ui *u = arg;
	int64_t t = now_ms();
	log_info("tui: frames %ld in %lld ms (longest %lld us)", u->frames,
	         (long long)(t - u->stats_t0), (long long)u->frame_us_max);
	u->frames = 0;
	u->frame_us_max = 0;
	u->stats_t0 = t;
	u->stats_timer = loop_timer_add(u->loop, 1000, on_stats, u);
}

/* Spinners and clocks move: a frame now and then while it matters. */
static void on_tick(void *arg)
{
	struct ui *u = arg;
	int running = 0;
	for (int i = u->m.ncalls - 1; i >= 0 && i >= u->m.ncalls - 8; i--)
		running |= u->m.calls[i]->state == UI_CALL_RUNNING;
	unsigned bits = UI_DIRTY_STATUS;
	if (running)
		bits |= UI_DIRTY_TOOLS | UI_DIRTY_CONV;
	if (u->m.phase != UI_ENDED || (u->notice && now_ms() < u->notice_until))
		ui_touch(u, bits);
	u->tick_timer =
	    loop_timer_add(u->loop, running ? 100 : 1000, on_tick, u);
}

/* ---- the live tree --------------------------------------------------------
 */

static void on_listing(void *arg, int rc, const char *err, struct buf *data,
                       cJSON *list)
{
	struct ui *u = arg;
	(void)data;
	if (rc < 0) {
		log_warn("tui: workspace listing: %s", err ? err : "failed");
		return;
	}
	ui_tree_sync(&u->m.tree, list, rc > 0);
	ui_watch_dirs(u->watch, list);
	ui_touch(u, UI_DIRTY_TREE);
}

static void rescan(void *arg)
{
	struct ui *u = arg;
	struct sbx *sbx = u->s ? session_sandbox(u->s) : NULL;
	if (!sbx || u->m.phase == UI_ENDED)
		return;
	int64_t t0 = now_ms();
	sbx->ops->list(sbx, ".", 1, UI_TREE_MAX, on_listing, u);
	ui_watch_scanned(u->watch, now_ms() - t0);
}

static void first_scan(void *arg)
{
	rescan(arg);
}

static void hook_run_start(void *arg)
{
	struct ui *u = arg;
	/* a resumed run starts again: its own workspace replaces the
	 * recorded one */
	ui_watch_free(u->watch);
	u->watch = NULL;
	if (u->ws_fd >= 0)
		close(u->ws_fd);
	u->ws_fd = -1;
	if (!u->m.workspace || !u->m.backend || strcmp(u->m.backend, "local"))
		return;
	u->ws_fd = open(u->m.workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (u->s)
		u->watch = ui_watch_new(u->loop, u->m.workspace, rescan, u);
	if (u->watch)
		loop_timer_add(u->loop, 0, first_scan, u);
}

static void hook_run_end(void *arg)
{
	struct ui *u = arg;
	ui_watch_free(u->watch);
	u->watch = NULL;
}

static void end_run_timer(void *arg)
{
	struct ui *u = arg;
	if (u->s)
		session_end(u->s);
}

static void on_event(void *arg, const cJSON *ev)
{
	struct ui *u = arg;
	enum ui_phase before = u->m.phase;
	ui_model_event(&u->m, ev);
	const char *type = json_str(ev, "type", "");
	if (u->m.phase != before) /* the input box tells the phase */
		u->m.dirty |= UI_DIRTY_INPUT;
	if (!strcmp(type, "tool_call") && u->sel_call < 0)
		ui_select_call(u, u->m.ncalls - 1, 0);
	if (u->m.new_call) { /* follow the call that runs */
		u->m.new_call = 0;
		if (u->sel_follow)
			ui_select_call(u, u->m.active_call, 0);
	}
	if (!strcmp(type, "idle") && u->opts->end_when_done &&
	    !strcmp(json_str(ev, "reason", ""), "answered"))
		loop_timer_add(u->loop, 0, end_run_timer, u);
	if (u->pager && !strcmp(type, "exec_output"))
		u->m.dirty |= UI_DIRTY_PAGER;
	ui_touch(u, u->m.dirty);
	u->m.dirty = 0;
}

/* ---- keys ---------------------------------------------------------------- */

static void do_quit(struct ui *u)
{
	u->confirm_quit = 0;
	if (u->s && session_state(u->s) != SESSION_DONE)
		session_end(u->s);
	u->quit = 1;
}

static int busy(const struct ui *u)
{
	return u->m.phase == UI_STARTING || u->m.phase == UI_REQUESTING ||
	       u->m.phase == UI_EXECUTING;
}

static void request_quit(struct ui *u)
{
	if (busy(u) && u->s) { /* a replay has nothing to stop */
		u->confirm_quit = 1;
		ui_touch(u, UI_DIRTY_OVERLAY);
	} else {
		do_quit(u);
	}
}

static void ctrl_c(struct ui *u)
{
	if (ui_pager_busy(u)) {
		ui_pager_cancel_search(u);
		return;
	}
	if (u->s && session_cancel(u->s)) {
		u->ctrl_c_armed = 0;
		ui_notice(u, "stopping: the agent waits for your next message");
		return;
	}
	if (u->ctrl_c_armed) {
		u->ctrl_c_armed = 0;
		u->confirm_quit = 1;
		ui_touch(u, UI_DIRTY_OVERLAY);
		return;
	}
	u->ctrl_c_armed = 1;
	ui_notice(u, "nothing is running: Ctrl-C again to quit");
}

static void set_focus(struct ui *u, int f)
{
	u->focus = (f + P_COUNT) % P_COUNT;
	/* the narrow layout shows the focused pane only */
	if (u->cols < 60 || !u->g[P_TOOLS].shown || !u->g[P_TREE].shown)
		ui_touch(u, UI_DIRTY_LAYOUT);
	ui_touch(u, UI_DIRTY_EVERYTHING & ~UI_DIRTY_LAYOUT);
}

static void send_input(struct ui *u)
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
	}
	free(err);
	free(msg);
	u->conv_follow = 1;
}

void ui_field_key(struct ui_input *in, int key, int fn)
{
	if (!fn && (key == '\r' || key == '\n')) {
		ui_input_insert(in, "\n", 1);
	} else if (!fn && key == 21) { /* Ctrl-U: the whole field */
		buf_reset(&in->text);
		in->cur = 0;
		in->overflow = 0;
	} else if (!fn && key == '\t') {
		ui_input_insert(in, "\t", 1);
	} else {
		ui_edit_key(in, key, fn);
	}
}

int ui_edit_key(struct ui_input *in, int key, int fn)
{
	if ((fn && key == KEY_BACKSPACE) || (!fn && (key == 127 || key == 8)))
		ui_input_backspace(in);
	else if ((fn && key == KEY_DC) || (!fn && key == 4))
		ui_input_delete(in);
	else if (fn && key == KEY_LEFT)
		ui_input_left(in);
	else if (fn && key == KEY_RIGHT)
		ui_input_right(in);
	else if ((fn && key == KEY_HOME) || (!fn && key == 1))
		ui_input_home(in);
	else if ((fn && key == KEY_END) || (!fn && key == 5))
		ui_input_end(in);
	else if (!fn && key == 11)
		ui_input_kill_end(in);
	else if (!fn && key == 23)
		ui_input_kill_word(in);
	else if (fn && key == KEY_UP)
		ui_input_up(in);
	else if (fn && key == KEY_DOWN)
		ui_input_down(in);
	else if (!fn && key >= 0x20 && key != 0x7f) {
		char u8[4];
		ui_input_insert(in, u8, ui_u8_encode((uint32_t)key, u8));
	} else
		return 0;
	return 1;
}

static void input_key(struct ui *u, int key, int fn)
{
	struct ui_input *in = &u->in;
	int before = input_rows_wanted(u, u->cols);
	if (!fn && u->in_paste && (key == '\r' || key == '\n' || key == '\t')) {
		char c = key == '\t' ? '\t' : '\n';
		ui_input_insert(in, &c, 1);
	} else if (!fn && key == '\r') {
		send_input(u);
	} else if (!fn && key == '\n') {
		ui_input_insert(in, "\n", 1);
	} else if (!fn && key == 21) {
		ui_input_kill_start(in);
	} else if (ui_edit_key(in, key, fn)) {
		/* done */
	} else if (fn && (key == KEY_PPAGE || key == KEY_NPAGE)) {
		int page = u->g[P_CONV].h - 3;
		ui_conv_scroll(u, key == KEY_PPAGE ? -page : page);
	} else {
		return;
	}
	if (input_rows_wanted(u, u->cols) != before)
		ui_touch(u, UI_DIRTY_LAYOUT);
	ui_touch(u, UI_DIRTY_INPUT);
}

static void conv_jump_call(struct ui *u, int dir)
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

static void conv_key(struct ui *u, int key, int fn)
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
		conv_jump_call(u, key == ']' ? 1 : -1);
	else if (!fn && (key == '\r' || key == 'o') && u->conv_sel >= 0 &&
	         u->conv_sel < u->m.nitems)
		ui_pager_open_call(u, u->m.items[u->conv_sel].call);
}

static void tools_key(struct ui *u, int key, int fn)
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
	else if (!fn && (key == '\r' || key == 'o'))
		ui_pager_open_call(u, sel);
	ui_touch(u, UI_DIRTY_TOOLS);
}

static void tree_key(struct ui *u, int key, int fn)
{
	struct ui_tree *t = &u->m.tree;
	ui_tree_visible(t);
	if (!t->nvis)
		return;
	struct ui_node *n =
	    t->vis[u->tree_cur < (int)t->nvis ? u->tree_cur : 0];
	int page = u->g[P_TREE].h - 3;
	int move = 0;
	if ((fn && key == KEY_DOWN) || (!fn && key == 'j'))
		move = 1;
	else if ((fn && key == KEY_UP) || (!fn && key == 'k'))
		move = -1;
	else if (fn && key == KEY_NPAGE)
		move = page;
	else if (fn && key == KEY_PPAGE)
		move = -page;
	else if ((fn && key == KEY_HOME) || (!fn && key == 'g'))
		move = -(int)t->nvis;
	else if ((fn && key == KEY_END) || (!fn && key == 'G'))
		move = (int)t->nvis;
	else if ((!fn && (key == '\r' || key == 'l' || key == 'o')) ||
	         (fn && key == KEY_RIGHT)) {
		if (n->type == UI_N_DIR) {
			n->expanded =
			    key == '\r' || key == 'o' ? !n->expanded : 1;
			t->vis_dirty = 1;
		} else if (n->type == UI_N_FILE && !fn &&
		           (key == '\r' || key == 'o')) {
			if (ui_preview_is_image(n->path))
				ui_preview_open(u, n->path, 0);
			else
				ui_pager_open_file(u, n->path);
		}
	} else if ((!fn && key == 'h') || (fn && key == KEY_LEFT)) {
		if (n->type == UI_N_DIR && n->expanded) {
			n->expanded = 0;
			t->vis_dirty = 1;
		} else if (n->parent && n->parent->parent) {
			free(u->tree_cur_path);
			u->tree_cur_path = xstrdup(n->parent->path);
		}
	}
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

static int pane_at(struct ui *u, int y, int x)
{
	for (int p = 0; p < P_COUNT; p++) {
		struct ui_geom *g = &u->g[p];
		if (g->shown && y >= g->y && y < g->y + g->h && x >= g->x &&
		    x < g->x + g->w)
			return p;
	}
	return -1;
}

static void mouse(struct ui *u)
{
	MEVENT me;
	if (getmouse(&me) != OK || u->pager || u->help || u->confirm_quit)
		return;
	int p = pane_at(u, me.y, me.x);
	if (p < 0)
		return;
	struct ui_geom *g = &u->g[p];
	int wheel = me.bstate & BUTTON4_PRESSED   ? -3
	            : me.bstate & BUTTON5_PRESSED ? 3
	                                          : 0;
	if (wheel) {
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
		return;
	}
	if (!(me.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)))
		return;
	if (u->focus != p)
		set_focus(u, p);
	int row = me.y - g->y;
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

static void handle_key(struct ui *u, int key, int fn)
{
	if (!(!fn && key == 3))
		u->ctrl_c_armed = 0;
	if (u->confirm_quit) {
		if (!fn && (key == 'y' || key == 'Y'))
			do_quit(u);
		else if (!fn && (key == 'n' || key == 'N' || key == 27 ||
		                 key == 3 || key == 17)) {
			u->confirm_quit = 0;
			ui_touch(u, UI_DIRTY_OVERLAY);
		}
		return;
	}
	if (u->help) {
		u->help = 0;
		ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_PAGER);
		return;
	}
	if (!fn && key == 17) {
		request_quit(u);
		return;
	}
	if (!fn && key == 3) {
		ctrl_c(u);
		return;
	}
	if (!fn && key == 12) {
		clearok(curscr, TRUE);
		ui_touch(u, UI_DIRTY_EVERYTHING);
		return;
	}
	if (fn && key == KEY_RESIZE) {
		ui_touch(u, UI_DIRTY_LAYOUT);
		return;
	}
	if (fn && key == KEY_MOUSE) {
		mouse(u);
		return;
	}
	if (fn && (key == KEY_PASTE_BEGIN || key == KEY_PASTE_END)) {
		u->in_paste = key == KEY_PASTE_BEGIN;
		if (u->in_paste && u->focus != P_INPUT && !u->pager &&
		    !ui_approval_shown(u))
			set_focus(u, P_INPUT);
		return;
	}
	if (fn && key == KEY_F(1)) {
		u->help = 1;
		ui_touch(u, UI_DIRTY_OVERLAY);
		return;
	}
	if (ui_replay_key(u, key, fn))
		return;
	if (ui_approval_key(u, key, fn))
		return;
	if (ui_step_key(u, key, fn)) /* after approvals are answered */
		return;
	if (u->pager) {
		ui_pager_key(u, key, fn);
		return;
	}
	if (ui_preview_key(u, key, fn))
		return;
	if (!fn && key == '\t' && !u->in_paste) {
		set_focus(u, u->focus + 1);
		return;
	}
	if (fn && key == KEY_BTAB) {
		set_focus(u, u->focus - 1);
		return;
	}
	if (u->focus == P_INPUT &&
	    !(!fn && key == '?' && !u->in.text.len && !u->in_paste)) {
		/* ? in an empty box is the help, as in the panes */
		input_key(u, key, fn);
		return;
	}
	if (!fn && key == '?') {
		u->help = 1;
		ui_touch(u, UI_DIRTY_OVERLAY);
	} else if (!fn && key == 's') {
		ui_step_toggle(u);
	} else if (!fn && (key == 'i' || key == 27)) {
		set_focus(u, P_INPUT);
	} else if (u->focus == P_CONV) {
		conv_key(u, key, fn);
	} else if (u->focus == P_TOOLS) {
		tools_key(u, key, fn);
	} else if (u->focus == P_TREE) {
		tree_key(u, key, fn);
	}
}

static void on_stdin(int fd, int revents, void *arg)
{
	struct ui *u = arg;
	wint_t ch;
	int r;
	(void)fd;
	if (revents & (POLLHUP | POLLERR | POLLNVAL)) {
		/* the terminal is gone: end the run and leave */
		loop_fd_del(u->loop, STDIN_FILENO);
		do_quit(u);
		return;
	}
	while ((r = ui_termcaps_get_wch(&ch)) != ERR) {
		int fn = r == KEY_CODE_YES, key = (int)ch;
		if (!fn && key == 27) {
			/* Alt-x arrives as ESC x: Alt-Enter is a new line */
			wint_t ch2;
			int r2 = ui_termcaps_get_wch(&ch2);
			if (r2 == OK && (ch2 == '\r' || ch2 == '\n')) {
				if (!u->help && !u->confirm_quit &&
				    ui_approval_shown(u))
					ui_approval_key(u, '\n', 0);
				else if (u->focus == P_INPUT && !u->pager &&
				         !u->help && !u->confirm_quit)
					input_key(u, '\n', 0);
				continue;
			}
			if (r2 != ERR) {
				fn = r2 == KEY_CODE_YES;
				key = (int)ch2;
			}
		}
		handle_key(u, key, fn);
		if (u->quit)
			break;
	}
}

/* Keys typed while the terminal was asked about images were pushed
 * back into curses (ui_preview_typeahead): read them now, not with the
 * next key. */
static void drain_typeahead(void *arg)
{
	on_stdin(STDIN_FILENO, 0, arg);
}

static void on_winch(int sig, void *arg)
{
	struct ui *u = arg;
	struct winsize ws;
	(void)sig;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 &&
	    ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
	ui_touch(u, UI_DIRTY_LAYOUT);
}

static void on_terminate(int sig, void *arg)
{
	struct ui *u = arg;
	log_info("tui: signal %d: ending the run", sig);
	do_quit(u);
}

/* ---- start and end ----------------------------------------------------- */

/* The curses screen: freed at the end, since a fork from a replay
 * opens the workbench a second time in the same process. */
static SCREEN *screen;

static int screen_open(struct ui *u)
{
	ui_preview_detect(u); /* asks the terminal: before curses */
	screen = newterm(NULL, stdout, stdin);
	if (!screen)
		return -1;
	ui_preview_typeahead(u);
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	meta(stdscr, TRUE);
	set_escdelay(25);
	mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED |
	              BUTTON5_PRESSED,
	          NULL);
	mouseinterval(0);
	define_key("\033[200~", KEY_PASTE_BEGIN);
	define_key("\033[201~", KEY_PASTE_END);
	const char *nc = getenv("NO_COLOR");
	ui_colors_init(&u->theme, nc && *nc);
	fputs("\033[?2004h", stdout); /* bracketed paste */
	fflush(stdout);
	u->dirty = UI_DIRTY_EVERYTHING;
	return 0;
}

static void screen_close(void)
{
	fputs("\033[?2004l", stdout);
	fflush(stdout);
	curs_set(1);
	endwin();
}

/* stderr into the run's log while curses owns the terminal. */
static int redirect_stderr(const char *run_dir)
{
	/* a replay writes nothing into the run it shows */
	char *path =
	    run_dir ? xasprintf("%s/assay.log", run_dir) : xstrdup("/dev/null");
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	free(path);
	if (fd < 0)
		return -1;
	int saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
	return saved;
}

static void ui_free(struct ui *u)
{
	drop_windows(u);
	ui_preview_free(u);
	ui_watch_free(u->watch);
	if (u->ws_fd >= 0)
		close(u->ws_fd);
	ui_tail_free(&u->tail);
	ui_model_free(&u->m);
	ui_input_free(&u->in);
	ui_theme_free(&u->theme);
	free(u->notice);
	free(u->tree_cur_path);
}

int ui_main(struct config *c, const struct ui_opts *o)
{
	struct ui u;
	char *err = NULL;
	int code = EXIT_FAILED;
	memset(&u, 0, sizeof u);
	u.cfg = c;
	u.opts = o;
	u.ws_fd = -1;
	u.sel_call = -1;
	u.sel_follow = 1;
	u.conv_follow = 1;
	u.conv_sel = -1;
	u.tail.call = -1;
	u.focus = P_INPUT;
	if (ui_theme_load(&u.theme, c->theme, &err) < 0) {
		fprintf(stderr, "assay: %s\n", err);
		free(err);
		ui_theme_free(&u.theme);
		return EXIT_USAGE;
	}
	if (ui_terminal_check(&err) < 0) {
		fprintf(stderr, "assay: %s\n", err);
		free(err);
		ui_theme_free(&u.theme);
		return EXIT_USAGE;
	}
	setlocale(LC_ALL, "");
	ui_ascii = strcmp(nl_langinfo(CODESET), "UTF-8") != 0;
	ui_input_init(&u.in);
	ui_model_init(&u.m);
	u.m.on_run_start = hook_run_start;
	u.m.on_run_end = hook_run_end;
	u.m.hook_arg = &u;
	u.loop = loop_new();
	if (!u.loop) {
		fprintf(stderr, "assay: cannot create the event loop\n");
		ui_free(&u);
		return EXIT_FAILED;
	}
	if (o->replay) { /* a recorded run: no session, no sandbox */
		if (ui_replay_attach(&u, o->replay, &err) < 0) {
			code = EXIT_USAGE;
			goto fail;
		}
		goto show;
	}
	u.s = session_new(u.loop, c, &err);
	if (!u.s)
		goto fail;
	session_set_interactive(u.s, 1);
	session_observe(u.s, on_event, &u);
	/* risky calls ask in the Approval dialog instead of being denied */
	ui_approval_attach(&u);
	ui_step_attach(&u, c->step);
	if ((o->resume ? session_resume(u.s, o->resume, o->prompt, &err)
	               : session_start(u.s, o->prompt, &err)) < 0) {
		code = session_exit_code(u.s);
		goto fail;
	}
show:;
	int saved = redirect_stderr(u.s ? session_run_dir(u.s) : NULL);
	if (screen_open(&u) < 0) {
		if (saved >= 0) {
			dup2(saved, STDERR_FILENO);
			close(saved);
		}
		fprintf(stderr,
		        "assay: cannot open the terminal (TERM=%s): "
		        "try assay run for a headless run\n",
		        getenv("TERM") ? getenv("TERM") : "");
		if (u.s)
			session_end(u.s);
		code = EXIT_FAILED;
		goto out;
	}
	loop_fd_add(u.loop, STDIN_FILENO, POLLIN, on_stdin, &u);
	loop_timer_add(u.loop, 0, drain_typeahead, &u);
	loop_signal(u.loop, SIGWINCH, on_winch, &u);
	loop_signal(u.loop, SIGTERM, on_terminate, &u);
	loop_signal(u.loop, SIGINT, on_terminate, &u);
	loop_signal(u.loop, SIGHUP, on_terminate, &u);
	u.stats = getenv("ASSAY_TUI_STATS") && *getenv("ASSAY_TUI_STATS");
	if (u.stats) {
		u.stats_t0 = now_ms();
		u.stats_timer = loop_timer_add(u.loop, 1000, on_stats, &u);
	}
	if (u.m.fixed_clock < 0)
		u.tick_timer = loop_timer_add(u.loop, 100, on_tick, &u);
	ui_touch(&u, UI_DIRTY_EVERYTHING);
	while (!u.quit)
		loop_once(u.loop, -1);
	if (u.stats)
		on_stats(&u);
	ui_preview_flush(&u);
	screen_close();
	if (saved >= 0) {
		dup2(saved, STDERR_FILENO);
		close(saved);
	}
	if (!u.s) { /* a replay */
		code = EXIT_OK;
		goto out;
	}
	code = session_exit_code(u.s);
	fprintf(stderr, "assay: run %s (exit %d); run dir %s\n",
	        u.m.end_status ? u.m.end_status : "ended", code,
	        session_run_dir(u.s));
	goto out;
fail:
	fprintf(stderr, "assay: %s\n", err ? err : "cannot start");
	free(err);
out:
	if (u.frame_timer)
		loop_timer_cancel(u.loop, u.frame_timer);
	if (u.tick_timer)
		loop_timer_cancel(u.loop, u.tick_timer);
	if (u.stats_timer)
		loop_timer_cancel(u.loop, u.stats_timer);
	if (u.pager)
		ui_pager_close(&u);
	session_free(u.s);
	ui_approval_free(&u);
	ui_replay_free(&u);
	ui_step_free(&u);
	ui_free(&u);
	if (screen) { /* after its windows */
		delscreen(screen);
		screen = NULL;
	}
	loop_free(u.loop);
	return code;
}
