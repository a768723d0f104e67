/* replay.c: `assay replay RUN`: the workbench on a recorded transcript,
 * without a session, sandbox or network. A timeline of steps (one per
 * event) moves forward by feeding events to the model and back by
 * rebuilding it (transcript.c); keys step, jump by turn, go to a step,
 * play at a speed; `f` opens an editor on a tool result or a user
 * message and hands the fork to the caller. */
#include "tui/replay.h"
#include "assay/termtext.h"
#include "tui/ui.h"

#include "assay/events.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

#define FIELD_ROWS 8
#define GOTO_MAX 12

static const double SPEEDS[] = {0.25, 0.5, 1, 2, 4, 8, 16, 32};
#define NSPEEDS ((int)(sizeof SPEEDS / sizeof SPEEDS[0]))

struct ui_replay {
	struct ui_transcript t;
	int step; /* events applied, 1..t.n */
	int want; /* where keys asked to go (applied once per batch) */
	uint64_t want_timer;
	int playing;
	int speed; /* index into SPEEDS */
	uint64_t timer;
	int going;            /* the go-to prompt is open */
	char gobuf[GOTO_MAX]; /* its digits */
	/* the fork editor: an overlay, on the stack while it is open */
	struct ui_overlay fork;
	struct ui_cursor cur;
	struct ui_input field;
	uint64_t fork_seq;
	char *fork_what; /* "tool result of #3 shell", cleaned */
	char *msg;
};

/* ---- moving on the timeline --------------------------------------------- */

/* The call an event is about (tool_call, exec_*, tool_result...). */
static int replay_event_call(struct ui *u, const cJSON *ev)
{
	struct ui_call *c = ui_model_call(&u->m, ev_str(ev, EVF_ID, NULL));
	for (int i = u->m.ncalls - 1; c && i >= 0; i--)
		if (u->m.calls[i] == c)
			return i;
	return -1;
}

/* The panes follow the step: the call it is about, else the one that
 * ran last; the conversation shows its end. */
static void replay_follow(struct ui *u)
{
	struct ui_replay *r = u->replay;
	int call =
	    r->step > 0 ? replay_event_call(u, r->t.ev[r->step - 1]) : -1;
	if (call < 0 && u->m.ncalls)
		call = u->m.active_call < u->m.ncalls ? u->m.active_call
		                                      : u->m.ncalls - 1;
	ui_model_take_new_call(&u->m);
	if (call >= 0)
		ui_select_call(u, call, 0);
	ui_conv_follow(u);
	ui_touch(u, ui_model_take_dirty(&u->m) | UI_DIRTY_CONV |
	                UI_DIRTY_TOOLS | UI_DIRTY_TREE | UI_DIRTY_STATUS |
	                UI_DIRTY_INPUT);
}

/* Show step k: forward by feeding events, back by rebuilding the model. */
static void replay_go(struct ui *u, int k)
{
	struct ui_replay *r = u->replay;
	if (k < 1)
		k = 1;
	if (k > r->t.n)
		k = r->t.n;
	if (k == r->step)
		return;
	ui_pager_close(u); /* it shows a call of the step left */
	if (k > r->step) {
		while (r->step < k)
			ui_transcript_feed(&u->m, &r->t, r->step++);
	} else {
		/* back: the model is rebuilt, the view points into it */
		ui_transcript_rebuild(&u->m, &r->t, k);
		r->step = k;
		ui_tools_reset(u);
		ui_preview_close(u); /* its image may not be sent yet */
	}
	replay_follow(u);
}

/* The move keys asked for, once per burst. */
static void replay_on_want(void *arg)
{
	struct ui *u = arg;
	u->replay->want_timer = 0;
	replay_go(u, u->replay->want);
}

/* Keys move here: a burst of them (a held arrow) costs one move, and
 * one rebuild when it goes back. */
static void replay_go_later(struct ui *u, int k)
{
	struct ui_replay *r = u->replay;
	r->want = k < 1 ? 1 : k > r->t.n ? r->t.n : k;
	if (!r->want_timer)
		r->want_timer = loop_timer_add(u->loop, 0, replay_on_want, u);
	ui_touch(u, UI_DIRTY_STATUS | UI_DIRTY_INPUT);
}

/* The step shown, or the one keys already asked for. */
static int replay_cur(const struct ui_replay *r)
{
	return r->want_timer ? r->want : r->step;
}

/* Playing stops. */
static void replay_stop_play(struct ui *u)
{
	struct ui_replay *r = u->replay;
	if (r->timer)
		loop_timer_cancel(u->loop, r->timer);
	r->timer = 0;
	r->playing = 0;
	ui_touch(u, UI_DIRTY_STATUS | UI_DIRTY_INPUT);
}

static void replay_on_play(void *arg);

/* The next step comes after the time it took in the run, at the
 * speed chosen (long waits shortened, bursts spread out). */
static void replay_schedule(struct ui *u)
{
	struct ui_replay *r = u->replay;
	double dt = 0;
	if (r->step > 0 && r->step < r->t.n)
		dt = ev_num(r->t.ev[r->step], EVF_T, 0) -
		     ev_num(r->t.ev[r->step - 1], EVF_T, 0);
	if (dt < 40)
		dt = 40;
	if (dt > 1500)
		dt = 1500;
	r->timer = loop_timer_add(u->loop, (int64_t)(dt / SPEEDS[r->speed]),
	                          replay_on_play, u);
}

/* Playing: the next step, and the one after it scheduled. */
static void replay_on_play(void *arg)
{
	struct ui *u = arg;
	struct ui_replay *r = u->replay;
	r->timer = 0;
	if (!r->playing)
		return;
	replay_go(u, r->step + 1);
	if (r->step >= r->t.n)
		replay_stop_play(u);
	else
		replay_schedule(u);
}

/* Space: play from here (from the start at the end), or pause. */
static void replay_toggle_play(struct ui *u)
{
	struct ui_replay *r = u->replay;
	if (r->playing) {
		replay_stop_play(u);
		return;
	}
	if (r->step >= r->t.n)
		replay_go(u, 1);
	r->playing = 1;
	replay_schedule(u);
	ui_touch(u, UI_DIRTY_STATUS | UI_DIRTY_INPUT);
}

/* ] and [: the start of the next or previous turn (its request). */
static void replay_turn_jump(struct ui *u, int dir)
{
	struct ui_replay *r = u->replay;
	replay_go_later(u, ui_transcript_turn_jump(&r->t, replay_cur(r), dir));
}

/* ---- the fork editor ------------------------------------------------------
 */

static void replay_set_msg(struct ui_replay *r, const char *text)
{
	free(r->msg);
	r->msg = text ? term_clean(text, strlen(text), 0) : NULL;
}

/* The events a fork can start from, and the member with the text the
 * fork replaces. */
static const enum ev_field fork_text[EV__COUNT] = {
    [EV_USER_MESSAGE] = EVF_TEXT,
    [EV_TOOL_RESULT] = EVF_CONTENT,
};

/* The event a fork starts from: the step's own tool result or user
 * message, else the result of the call selected. */
static const cJSON *replay_fork_event(struct ui *u)
{
	struct ui_replay *r = u->replay;
	const cJSON *ev = r->t.ev[r->step - 1];
	if (fork_text[event_type_of(ev)])
		return ev;
	if (u->tools.sel < 0 || u->tools.sel >= u->m.ncalls)
		return NULL;
	const char *id = u->m.calls[u->tools.sel]->id;
	for (int i = 0; i < r->t.n; i++) {
		ev = r->t.ev[i];
		if (event_type_of(ev) == EV_TOOL_RESULT &&
		    !strcmp(ev_str(ev, EVF_ID, ""), id))
			return ev;
	}
	return NULL;
}

/* f: the fork editor, with the text of the event it forks at. */
static void replay_fork_open(struct ui *u)
{
	struct ui_replay *r = u->replay;
	const cJSON *ev = replay_fork_event(u);
	if (!ev) {
		ui_notice(u, "f forks at a tool result or a user message: "
		             "step to one, or select a call that has a result");
		return;
	}
	enum event_type type = event_type_of(ev);
	int user = type == EV_USER_MESSAGE;
	const char *text = ev_str(ev, fork_text[type], "");
	r->fork_seq = (uint64_t)ev_long(ev, EVF_SEQ, 0);
	if (!r->fork_seq) {
		ui_notice(u, "this event has no seq: it cannot be forked");
		return;
	}
	free(r->fork_what);
	if (user) {
		r->fork_what = xasprintf("the user message (event %llu)",
		                         (unsigned long long)r->fork_seq);
	} else {
		struct ui_call *c =
		    ui_model_call(&u->m, ev_str(ev, EVF_ID, NULL));
		char *raw = xasprintf("the result of %s %s (event %llu)",
		                      ev_str(ev, EVF_ID, "?"), c ? c->name : "",
		                      (unsigned long long)r->fork_seq);
		r->fork_what = term_clean(raw, strlen(raw), 0);
		free(raw);
	}
	replay_stop_play(u);
	buf_reset(&r->field.text);
	r->field.cur = 0;
	ui_input_insert(&r->field, text, strlen(text));
	ui_overlay_push(u, &r->fork);
	replay_set_msg(r, NULL);
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_INPUT);
}

/* Enter in the fork editor: the fork goes to the caller, the replay quits. */
static void replay_fork_submit(struct ui *u)
{
	struct ui_replay *r = u->replay;
	if (!u->opts->fork) {
		replay_set_msg(r, "forking is not available here");
		return;
	}
	free(u->opts->fork->text);
	u->opts->fork->text = xstrdup(buf_str(&r->field.text));
	u->opts->fork->seq = r->fork_seq;
	ui_leave_loop(u);
}

/* Every key while the fork editor is open: Enter forks, Esc closes
 * it, the rest edits. */
static int replay_fork_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	struct ui_replay *r = u->replay;
	struct ui_input *in = &r->field;
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_INPUT);
	if (!fn && key == UI_KEY_ENTER && !u->keys.in_paste)
		replay_fork_submit(u);
	else if (!fn && key == UI_KEY_ESC)
		ui_overlay_pop(u, o);
	else
		ui_field_key(in, key, fn);
	return 1;
}

/* The fork editor over the frame. */
static void replay_fork_draw(struct ui *u, struct ui_overlay *o)
{
	struct ui_replay *r = u->replay;
	(void)o;
	int wd = u->lay.cols - 2 < 100 ? u->lay.cols - 2 : 100, inner = wd - 4;
	struct ui_input_layout lo;
	ui_input_layout(&r->field, inner - 2, &lo);
	int frows = lo.n < FIELD_ROWS ? lo.n : FIELD_ROWS;
	if (frows < 1)
		frows = 1;
	int h = frows + 5 + (r->msg ? 1 : 0);
	if (h > u->lay.rows - 1)
		h = u->lay.rows - 1;
	WINDOW *w = ui_dialog_new(u, h, wd, "Fork");
	char *head = xasprintf("a new run re-executes up to %s, then goes "
	                       "on live with this text:",
	                       r->fork_what ? r->fork_what : "?");
	ui_draw_text(w, 1, 2, inner, head, UE_OVERLAY);
	free(head);
	int cy, cx;
	ui_draw_field(w, &r->field, &lo, 2, 2, inner, frows, h - 2, &cy, &cx);
	int y = 2 + frows + 1;
	if (r->msg && y < h - 1)
		ui_draw_text(w, y++, 2, inner, r->msg, UE_ERROR);
	if (y < h - 1)
		ui_draw_text(w, y, 2, inner,
		             "Enter forks  Alt-Enter new line  Ctrl-U clears  "
		             "Esc back",
		             UE_APPROVAL);
	ui_input_layout_free(&lo);
	ui_dialog_done(w, &r->cur, cy >= 2 && cy < h - 1, cy, cx);
}

static int replay_fork_cursor(struct ui *u, struct ui_overlay *o, int *y,
                              int *x)
{
	(void)o;
	return ui_cursor_get(&u->replay->cur, y, x);
}

const char *ui_replay_fork(struct ui *u, uint64_t *seq)
{
	if (!u->opts->fork || !u->opts->fork->text) {
		*seq = 0;
		return NULL;
	}
	*seq = u->opts->fork->seq;
	return u->opts->fork->text;
}

/* ---- keys ---------------------------------------------------------------- */

/* A key in the go-to prompt: digits, Enter goes, Esc back. */
static void replay_goto_key(struct ui *u, int key, int fn)
{
	struct ui_replay *r = u->replay;
	size_t n = strlen(r->gobuf);
	if (!fn && key >= '0' && key <= '9' && n + 1 < GOTO_MAX) {
		r->gobuf[n] = (char)key;
		r->gobuf[n + 1] = '\0';
	} else if (ui_key_backspace(key, fn)) {
		if (n)
			r->gobuf[n - 1] = '\0';
	} else if (ui_key_enter(key, fn)) {
		r->going = 0;
		if (n)
			replay_go_later(u, atoi(r->gobuf));
	} else if (!fn && (key == UI_KEY_ESC || key == 'g' || key == 'q')) {
		r->going = 0;
	}
	ui_touch(u, UI_DIRTY_INPUT | UI_DIRTY_STATUS);
}

/* Tab in a replay: the next pane (there is no message box). */
static void replay_focus_pane(struct ui *u, int dir)
{
	/* the panes only: there is no message box in a replay */
	int f = u->lay.focus;
	do
		f = (f + dir + P_COUNT) % P_COUNT;
	while (f == P_INPUT);
	ui_set_focus(u, f);
}

int ui_replay_key(struct ui *u, int key, int fn)
{
	struct ui_replay *r = u->replay;
	if (!r)
		return 0;
	if (r->going) {
		replay_goto_key(u, key, fn);
		return 1;
	}
	if (fn && key == KEY_RIGHT) {
		replay_stop_play(u);
		replay_go_later(u, replay_cur(r) + 1);
	} else if (fn && key == KEY_LEFT) {
		replay_stop_play(u);
		replay_go_later(u, replay_cur(r) - 1);
	} else if (!fn && (key == ']' || key == '[')) {
		replay_stop_play(u);
		replay_turn_jump(u, key == ']' ? 1 : -1);
	} else if ((fn && key == KEY_HOME) || (!fn && key == '<')) {
		replay_stop_play(u);
		replay_go_later(u, 1);
	} else if ((fn && key == KEY_END) || (!fn && key == '>')) {
		replay_stop_play(u);
		replay_go_later(u, r->t.n);
	} else if (!fn && key == 'g') {
		replay_stop_play(u);
		r->going = 1;
		r->gobuf[0] = '\0';
		ui_touch(u, UI_DIRTY_INPUT);
	} else if (!fn && key == ' ') {
		replay_toggle_play(u);
	} else if (!fn && (key == '+' || key == '=' || key == '-')) {
		r->speed += key == '-' ? -1 : 1;
		r->speed = r->speed < 0          ? 0
		           : r->speed >= NSPEEDS ? NSPEEDS - 1
		                                 : r->speed;
		ui_touch(u, UI_DIRTY_STATUS);
	} else if (!fn && key == 'q') {
		ui_leave_loop(u);
	} else if (!fn && key == 'f') {
		replay_fork_open(u);
	} else if (!fn && key == UI_KEY_TAB) {
		replay_focus_pane(u, 1);
	} else if (fn && key == KEY_BTAB) {
		replay_focus_pane(u, -1);
	} else if (!fn && (key == 'p' || key == 'v' || key == UI_KEY_ESC) &&
	           ui_preview_key(u, key, fn)) {
		/* the images sent to the model: the run dir keeps them */
	} else if (!fn && (key == 'i' || key == UI_KEY_ESC || key == 's' ||
	                   key == 'p' || key == 'v')) {
		/* no message box, no session to step */
	} else if (u->lay.focus == P_TREE && !fn &&
	           (key == UI_KEY_ENTER || key == 'o')) {
		ui_notice(u, "replay shows the tree as it was: files are not "
		             "kept for each step");
	} else {
		return u->lay.focus == P_INPUT; /* the panes' own keys */
	}
	return 1;
}

/* ---- drawing --------------------------------------------------------------
 */

void ui_replay_status(struct ui *u, struct buf *b)
{
	struct ui_replay *r = u->replay;
	if (!r)
		return;
	double sp = SPEEDS[r->speed];
	buf_printf(b, " replay %d/%d  turn %d/%d  %s ", r->step, r->t.n,
	           r->t.turn[r->step - 1], r->t.nturns,
	           r->playing ? (ui_ascii ? ">" : "\xe2\x96\xb6") : "||");
	if (sp < 1)
		buf_printf(b, "%gx |", sp);
	else
		buf_printf(b, "%.0fx |", sp);
}

void ui_replay_draw_hint(struct ui *u)
{
	struct ui_replay *r = u->replay;
	struct ui_geom *g = &u->lay.g[P_INPUT];
	WINDOW *w = g->win;
	ui_background(w);
	werase(w);
	ui_draw_box(w, "Replay", 0);
	const char *ev = event_type_name(event_type_of(r->t.ev[r->step - 1]));
	char *line;
	if (r->going)
		line = xasprintf("go to step (1-%d): %s_   Enter go, Esc back",
		                 r->t.n, r->gobuf);
	else if (r->fork.on_stack)
		line = xasprintf("fork: edit the text, Enter forks, Esc back");
	else
		line = xasprintf("step %d: %s | <-/-> step  [/] turn  g go to  "
		                 "space %s  +/- speed  f fork  q quit",
		                 r->step, ev, r->playing ? "pause" : "play");
	ui_draw_text(w, 1, 2, g->w - 4, line, UE_DIM);
	free(line);
	if (r->t.torn && g->h > 2)
		ui_draw_text(w, g->h - 1, 2, g->w - 4,
		             " the last line was cut (the run was killed): "
		             "left out ",
		             UE_WARNING);
}

/* ---- start and end ------------------------------------------------------- */

int ui_replay_attach(struct ui *u, const char *run, char **err)
{
	struct ui_replay *r = xcalloc(1, sizeof *r);
	if (ui_transcript_load(&r->t, run, err) < 0) {
		free(r);
		return -1;
	}
	r->speed = 2; /* 1x */
	r->fork = (struct ui_overlay){
	    .name = "fork",
	    .layer = UI_LAYER_DIALOG,
	    .flags = UI_OV_COVERS_IMAGES,
	    .draw = replay_fork_draw,
	    .key = replay_fork_key,
	    .cursor = replay_fork_cursor,
	};
	ui_input_init(&r->field);
	u->replay = r;
	/* the live hooks watch a sandbox's workspace: none here */
	ui_model_hooks(&u->m, NULL, NULL, NULL);
	ui_layout_focus(&u->lay, P_CONV);
	r->step = 0;
	ui_transcript_rebuild(&u->m, &r->t, 0);
	replay_go(u, 1);
	return 0;
}

void ui_replay_free(struct ui *u)
{
	struct ui_replay *r = u->replay;
	if (!r)
		return;
	ui_overlay_pop(u, &r->fork);
	if (r->timer)
		loop_timer_cancel(u->loop, r->timer);
	if (r->want_timer)
		loop_timer_cancel(u->loop, r->want_timer);
	ui_transcript_free(&r->t);
	ui_input_free(&r->field);
	free(r->fork_what);
	free(r->msg);
	free(r);
	u->replay = NULL;
}
