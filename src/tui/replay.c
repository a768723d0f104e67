/* replay.c: `assay replay RUN`: the workbench on a recorded transcript,
 * without a session, sandbox or network. A timeline of steps (one per
 * event) moves forward by feeding events to the model and back by
 * rebuilding it (transcript.c); keys step, jump by turn, go to a step,
 * play at a speed; `f` opens an editor on a tool result or a user
 * message and hands the fork to the caller. */
#include "tui/replay.h"
#include "tui/ui.h"

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
	/* the fork editor */
	int forking;
	struct ui_input field;
	uint64_t fork_seq;
	char *fork_what; /* "tool result of #3 shell", cleaned */
	char *msg;
};

/* ---- moving on the timeline --------------------------------------------- */

/* The call an event is about (tool_call, exec_*, tool_result...). */
static int event_call(struct ui *u, const cJSON *ev)
{
	struct ui_call *c = ui_model_call(&u->m, json_str(ev, "id", NULL));
	for (int i = u->m.ncalls - 1; c && i >= 0; i--)
		if (u->m.calls[i] == c)
			return i;
	return -1;
}

/* The panes follow the step: the call it is about, else the one that
 * ran last; the conversation shows its end. */
static void follow(struct ui *u)
{
	struct ui_replay *r = u->replay;
	int call = r->step > 0 ? event_call(u, r->t.ev[r->step - 1]) : -1;
	if (call < 0 && u->m.ncalls)
		call = u->m.active_call < u->m.ncalls ? u->m.active_call
		                                      : u->m.ncalls - 1;
	u->m.new_call = 0;
	if (call >= 0)
		ui_select_call(u, call, 0);
	u->conv_follow = 1;
	ui_touch(u, u->m.dirty | UI_DIRTY_CONV | UI_DIRTY_TOOLS |
	                UI_DIRTY_TREE | UI_DIRTY_STATUS | UI_DIRTY_INPUT);
	u->m.dirty = 0;
}

static void go(struct ui *u, int k)
{
	struct ui_replay *r = u->replay;
	if (k < 1)
		k = 1;
	if (k > r->t.n)
		k = r->t.n;
	if (k == r->step)
		return;
	if (u->pager)
		ui_pager_close(u);
	if (k > r->step) {
		while (r->step < k)
			ui_transcript_feed(&u->m, &r->t, r->step++);
	} else {
		/* back: the model is rebuilt, the view points into it */
		ui_transcript_rebuild(&u->m, &r->t, k);
		r->step = k;
		u->sel_call = -1;
		u->conv_sel = -1;
		u->out_scroll = 0;
		ui_tail_free(&u->tail);
	}
	follow(u);
}

static void on_want(void *arg)
{
	struct ui *u = arg;
	u->replay->want_timer = 0;
	go(u, u->replay->want);
}

/* Keys move here: a burst of them (a held arrow) costs one move, and
 * one rebuild when it goes back. */
static void go_later(struct ui *u, int k)
{
	struct ui_replay *r = u->replay;
	r->want = k < 1 ? 1 : k > r->t.n ? r->t.n : k;
	if (!r->want_timer)
		r->want_timer = loop_timer_add(u->loop, 0, on_want, u);
	ui_touch(u, UI_DIRTY_STATUS | UI_DIRTY_INPUT);
}

/* The step shown, or the one keys already asked for. */
static int cur(const struct ui_replay *r)
{
	return r->want_timer ? r->want : r->step;
}

static void stop_play(struct ui *u)
{
	struct ui_replay *r = u->replay;
	if (r->timer)
		loop_timer_cancel(u->loop, r->timer);
	r->timer = 0;
	r->playing = 0;
	ui_touch(u, UI_DIRTY_STATUS | UI_DIRTY_INPUT);
}

static void on_play(void *arg);

/* The next step comes after the time it took in the run, at the
 * speed chosen (long waits shortened, bursts spread out). */
static void schedule(struct ui *u)
{
	struct ui_replay *r = u->replay;
	double dt = 0;
	if (r->step > 0 && r->step < r->t.n)
		dt = json_num(r->t.ev[r->step], "t", 0) -
		     json_num(r->t.ev[r->step - 1], "t", 0);
	if (dt < 40)
		dt = 40;
	if (dt > 1500)
		dt = 1500;
	r->timer = loop_timer_add(u->loop, (int64_t)(dt / SPEEDS[r->speed]),
	                          on_play, u);
}

static void on_play(void *arg)
{
	struct ui *u = arg;
	struct ui_replay *r = u->replay;
	r->timer = 0;
	if (!r->playing)
		return;
	go(u, r->step + 1);
	if (r->step >= r->t.n)
		stop_play(u);
	else
		schedule(u);
}

static void toggle_play(struct ui *u)
{
	struct ui_replay *r = u->replay;
	if (r->playing) {
		stop_play(u);
		return;
	}
	if (r->step >= r->t.n)
		go(u, 1);
	r->playing = 1;
	schedule(u);
	ui_touch(u, UI_DIRTY_STATUS | UI_DIRTY_INPUT);
}

/* ] and [: the start of the next or previous turn (its request). */
static void turn_jump(struct ui *u, int dir)
{
	struct ui_replay *r = u->replay;
	go_later(u, ui_transcript_turn_jump(&r->t, cur(r), dir));
}

/* ---- the fork editor ------------------------------------------------------
 */

static void set_msg(struct ui_replay *r, const char *text)
{
	free(r->msg);
	r->msg = text ? ui_clean(text, strlen(text), 0) : NULL;
}

/* The event a fork starts from: the step's own tool result or user
 * message, else the result of the call selected. */
static const cJSON *fork_event(struct ui *u)
{
	struct ui_replay *r = u->replay;
	const cJSON *ev = r->t.ev[r->step - 1];
	const char *type = json_str(ev, "type", "");
	if (!strcmp(type, "tool_result") || !strcmp(type, "user_message"))
		return ev;
	if (u->sel_call < 0 || u->sel_call >= u->m.ncalls)
		return NULL;
	const char *id = u->m.calls[u->sel_call]->id;
	for (int i = 0; i < r->t.n; i++) {
		ev = r->t.ev[i];
		if (!strcmp(json_str(ev, "type", ""), "tool_result") &&
		    !strcmp(json_str(ev, "id", ""), id))
			return ev;
	}
	return NULL;
}

static void fork_open(struct ui *u)
{
	struct ui_replay *r = u->replay;
	const cJSON *ev = fork_event(u);
	if (!ev) {
		ui_notice(u, "f forks at a tool result or a user message: "
		             "step to one, or select a call that has a result");
		return;
	}
	int user = !strcmp(json_str(ev, "type", ""), "user_message");
	const char *text = json_str(ev, user ? "text" : "content", "");
	r->fork_seq = (uint64_t)json_num(ev, "seq", 0);
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
		    ui_model_call(&u->m, json_str(ev, "id", NULL));
		char *raw = xasprintf("the result of %s %s (event %llu)",
		                      json_str(ev, "id", "?"), c ? c->name : "",
		                      (unsigned long long)r->fork_seq);
		r->fork_what = ui_clean(raw, strlen(raw), 0);
		free(raw);
	}
	stop_play(u);
	buf_reset(&r->field.text);
	r->field.cur = 0;
	ui_input_insert(&r->field, text, strlen(text));
	r->forking = 1;
	set_msg(r, NULL);
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_INPUT);
}

static void fork_submit(struct ui *u)
{
	struct ui_replay *r = u->replay;
	if (!u->opts->fork) {
		set_msg(r, "forking is not available here");
		return;
	}
	free(u->opts->fork->text);
	u->opts->fork->text = xstrdup(buf_str(&r->field.text));
	u->opts->fork->seq = r->fork_seq;
	u->quit = 1;
}

static void fork_key(struct ui *u, int key, int fn)
{
	struct ui_replay *r = u->replay;
	struct ui_input *in = &r->field;
	if (!fn && key == '\r' && !u->in_paste) {
		fork_submit(u);
	} else if (!fn && key == 27) {
		r->forking = 0;
	} else {
		ui_field_key(in, key, fn);
	}
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_INPUT);
}

int ui_replay_draw(struct ui *u)
{
	struct ui_replay *r = u->replay;
	if (!r || !r->forking)
		return 0;
	int wd = u->cols - 2 < 100 ? u->cols - 2 : 100, inner = wd - 4;
	struct ui_input_layout lo;
	ui_input_layout(&r->field, inner - 2, &lo);
	int frows = lo.n < FIELD_ROWS ? lo.n : FIELD_ROWS;
	if (frows < 1)
		frows = 1;
	int h = frows + 5 + (r->msg ? 1 : 0);
	if (h > u->rows - 1)
		h = u->rows - 1;
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
	return ui_dialog_done(w, cy >= 2 && cy < h - 1, cy, cx);
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

static void goto_key(struct ui *u, int key, int fn)
{
	struct ui_replay *r = u->replay;
	size_t n = strlen(r->gobuf);
	if (!fn && key >= '0' && key <= '9' && n + 1 < GOTO_MAX) {
		r->gobuf[n] = (char)key;
		r->gobuf[n + 1] = '\0';
	} else if ((fn && key == KEY_BACKSPACE) ||
	           (!fn && (key == 127 || key == 8))) {
		if (n)
			r->gobuf[n - 1] = '\0';
	} else if (!fn && (key == '\r' || key == '\n')) {
		r->going = 0;
		if (n)
			go_later(u, atoi(r->gobuf));
	} else if (!fn && (key == 27 || key == 'g' || key == 'q')) {
		r->going = 0;
	}
	ui_touch(u, UI_DIRTY_INPUT | UI_DIRTY_STATUS);
}

static void focus_pane(struct ui *u, int dir)
{
	/* the panes only: there is no message box in a replay */
	int f = u->focus;
	do
		f = (f + dir + P_COUNT) % P_COUNT;
	while (f == P_INPUT);
	u->focus = f;
	if (u->cols < 60 || !u->g[P_TOOLS].shown || !u->g[P_TREE].shown)
		ui_touch(u, UI_DIRTY_LAYOUT);
	ui_touch(u, UI_DIRTY_EVERYTHING & ~UI_DIRTY_LAYOUT);
}

int ui_replay_key(struct ui *u, int key, int fn)
{
	struct ui_replay *r = u->replay;
	if (!r || u->pager)
		return 0;
	if (r->forking) {
		fork_key(u, key, fn);
		return 1;
	}
	if (r->going) {
		goto_key(u, key, fn);
		return 1;
	}
	if (fn && key == KEY_RIGHT) {
		stop_play(u);
		go_later(u, cur(r) + 1);
	} else if (fn && key == KEY_LEFT) {
		stop_play(u);
		go_later(u, cur(r) - 1);
	} else if (!fn && (key == ']' || key == '[')) {
		stop_play(u);
		turn_jump(u, key == ']' ? 1 : -1);
	} else if ((fn && key == KEY_HOME) || (!fn && key == '<')) {
		stop_play(u);
		go_later(u, 1);
	} else if ((fn && key == KEY_END) || (!fn && key == '>')) {
		stop_play(u);
		go_later(u, r->t.n);
	} else if (!fn && key == 'g') {
		stop_play(u);
		r->going = 1;
		r->gobuf[0] = '\0';
		ui_touch(u, UI_DIRTY_INPUT);
	} else if (!fn && key == ' ') {
		toggle_play(u);
	} else if (!fn && (key == '+' || key == '=' || key == '-')) {
		r->speed += key == '-' ? -1 : 1;
		r->speed = r->speed < 0          ? 0
		           : r->speed >= NSPEEDS ? NSPEEDS - 1
		                                 : r->speed;
		ui_touch(u, UI_DIRTY_STATUS);
	} else if (!fn && key == 'q') {
		u->quit = 1;
	} else if (!fn && key == 'f') {
		fork_open(u);
	} else if (!fn && key == '\t') {
		focus_pane(u, 1);
	} else if (fn && key == KEY_BTAB) {
		focus_pane(u, -1);
	} else if (!fn &&
	           (key == 'i' || key == 27 || key == 's' || key == 'p')) {
		/* no message box, no session to step */
	} else if (u->focus == P_TREE && !fn && (key == '\r' || key == 'o')) {
		ui_notice(u, "replay shows the tree as it was: files are not "
		             "kept for each step");
	} else {
		return u->focus == P_INPUT; /* the panes' own keys */
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
	struct ui_geom *g = &u->g[P_INPUT];
	WINDOW *w = g->win;
	ui_background(w);
	werase(w);
	ui_draw_box(w, "Replay", 0);
	const char *ev = json_str(r->t.ev[r->step - 1], "type", "?");
	char *line;
	if (r->going)
		line = xasprintf("go to step (1-%d): %s_   Enter go, Esc back",
		                 r->t.n, r->gobuf);
	else if (r->forking)
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
	ui_input_init(&r->field);
	u->replay = r;
	/* the live hooks watch a sandbox's workspace: none here */
	u->m.on_run_start = NULL;
	u->m.on_run_end = NULL;
	u->focus = P_CONV;
	r->step = 0;
	ui_transcript_rebuild(&u->m, &r->t, 0);
	go(u, 1);
	return 0;
}

void ui_replay_free(struct ui *u)
{
	struct ui_replay *r = u->replay;
	if (!r)
		return;
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
