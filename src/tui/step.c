/* step.c: step mode in the workbench. The session pauses before each
 * model request and each execution (session.h, "step mode"); this
 * dialog shows what is about to happen and answers from the loop: n
 * goes on, e edits a command first, k skips it, x ends the run. It is
 * drawn only when no Approval waits (approval first, then the pause). */
#include "tui/replay.h"
#include "assay/termtext.h"
#include "tui/ui.h"

#include "assay/session.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIALOG_W 100
#define FIELD_ROWS 6

struct ui_step {
	struct ui_overlay ov; /* on the stack while a pause is shown */
	struct ui_cursor cur; /* the field's, while editing */
	int on;
	int editing;
	struct ui_input field;
	int scroll, body_shown;
	char *msg;
	struct ui_rows body;
	int body_w;
	int stale; /* a new pause: the body is made again */
};

static const struct session_step *step_pending(struct ui *u)
{
	return u->step && u->s ? session_step_pending(u->s) : NULL;
}

int ui_step_shown(struct ui *u)
{
	return step_pending(u) && !ui_approval_shown(u);
}

void ui_step_sync(struct ui *u)
{
	if (!u->step)
		return;
	if (ui_step_shown(u))
		ui_overlay_push(u, &u->step->ov);
	else
		ui_overlay_pop(u, &u->step->ov);
}

int ui_step_on(struct ui *u)
{
	return u->step && u->s && session_step_mode(u->s);
}

static void step_set_msg(struct ui_step *p, const char *text)
{
	free(p->msg);
	p->msg = text ? term_clean(text, strlen(text), 0) : NULL;
}

/* The session paused: a new dialog. */
static void step_on_pause(void *arg, const struct session_step *st)
{
	struct ui *u = arg;
	struct ui_step *p = u->step;
	(void)st;
	p->stale = 1;
	p->editing = 0;
	p->scroll = 0;
	step_set_msg(p, NULL);
	ui_step_sync(u);
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_STATUS);
}

static void step_draw(struct ui *u, struct ui_overlay *o);
static int step_key(struct ui *u, struct ui_overlay *o, int key, int fn);
static int step_cursor(struct ui *u, struct ui_overlay *o, int *y, int *x);

void ui_step_attach(struct ui *u, int on)
{
	static const struct session_stepper ops = {step_on_pause};
	u->step = xcalloc(1, sizeof *u->step);
	u->step->ov = (struct ui_overlay){
	    .name = "step",
	    .layer = UI_LAYER_DIALOG,
	    .flags = UI_OV_COVERS_IMAGES,
	    .draw = step_draw,
	    .key = step_key,
	    .cursor = step_cursor,
	};
	ui_input_init(&u->step->field);
	session_set_stepper(u->s, &ops, u);
	if (on)
		session_set_step(u->s, 1);
}

void ui_step_free(struct ui *u)
{
	struct ui_step *p = u->step;
	if (!p)
		return;
	ui_overlay_pop(u, &p->ov);
	ui_input_free(&p->field);
	ui_rows_free(&p->body);
	free(p->msg);
	free(p);
	u->step = NULL;
}

void ui_step_toggle(struct ui *u)
{
	if (!u->step || !u->s) {
		ui_notice(u, "step mode needs a live run");
		return;
	}
	int on = !session_step_mode(u->s);
	session_set_step(u->s, on);
	ui_notice(u, on ? "step mode on: the run pauses before each request "
	                  "and each command"
	                : "step mode off");
	ui_touch(u, UI_DIRTY_STATUS);
}

/* ---- rows ---------------------------------------------------------------- */

/* The pause's rows: the request's figures, or the call about to run. */
static void step_build_body(struct ui_step *p, const struct session_step *st,
                            int width)
{
	if (!p->stale && p->body_w == width)
		return;
	ui_rows_free(&p->body);
	memset(&p->body, 0, sizeof p->body);
	p->body_w = width;
	p->stale = 0;
	struct ui_rows *b = &p->body;
	char line[256];
	if (st->kind == SESSION_STEP_REQUEST) {
		snprintf(line, sizeof line, "%d", st->turn);
		ui_st_add_text(b, width, 0, "turn:      ", UE_DIM, line,
		               UE_OVERLAY);
		snprintf(line, sizeof line, "%zu", st->messages);
		ui_st_add_text(b, width, 0, "messages:  ", UE_DIM, line,
		               UE_OVERLAY);
		snprintf(line, sizeof line, "~%ld (estimated)",
		         st->est_input_tokens);
		ui_st_add_text(b, width, 0, "input:     ", UE_DIM, line,
		               UE_OVERLAY);
		struct buf t;
		buf_init(&t, 0);
		for (size_t i = 0; i < st->ntools; i++)
			buf_printf(&t, "%s%s", i ? ", " : "", st->tools[i]);
		ui_st_add_text(b, width, 11, "tools:     ", UE_DIM,
		               st->ntools ? buf_str(&t) : "(none)", UE_OVERLAY);
		buf_free(&t);
		snprintf(line, sizeof line, "the last message (%s), in full:",
		         st->last_role ? st->last_role : "?");
		ui_st_add_text(b, width, 0, NULL, UE_DIM, line, UE_DIM);
		ui_st_add_text(b, width, 2, "  ", UE_DIM,
		               st->last_message ? st->last_message : "",
		               UE_APPROVAL);
	} else {
		ui_st_add_text(b, width, 11, "tool:      ", UE_DIM,
		               st->tool ? st->tool : "?", UE_OVERLAY);
		ui_st_add_text(b, width, 11, "call:      ", UE_DIM,
		               st->id ? st->id : "?", UE_OVERLAY);
		ui_st_add_text(b, width, 0, NULL, UE_DIM,
		               st->tool && !strcmp(st->tool, "python") ? "code:"
		               : st->tool && !strcmp(st->tool, "shell")
		                   ? "command:"
		                   : "subject:",
		               UE_DIM);
		ui_st_add_text(b, width, 2, "  ", UE_DIM,
		               st->subject ? st->subject : "", UE_APPROVAL);
	}
}

/* The choices a pause offers. */
static const char *step_choices(const struct session_step *st)
{
	if (st->kind == SESSION_STEP_REQUEST)
		return "[n] send it  [x] end the run";
	return st->editable ? "[n] run it  [e] edit it first  [k] skip it  "
	                      "[x] end the run"
	                    : "[n] run it  [k] skip it  [x] end the run";
}

/* ---- drawing ------------------------------------------------------------- */

/* The pause over the frame: what is about to happen, then the
 * choices or the edit field. */
static void step_draw(struct ui *u, struct ui_overlay *o)
{
	const struct session_step *st = step_pending(u);
	struct ui_step *p = u->step;
	(void)o;
	p->cur.on = 0;
	if (!st || ui_approval_shown(u))
		return;
	int wd = u->lay.cols - 2 < DIALOG_W ? u->lay.cols - 2 : DIALOG_W;
	int inner = wd - 4;
	step_build_body(p, st, inner);
	struct ui_input_layout lo = {0};
	int frows = 0;
	if (p->editing) {
		ui_input_layout(&p->field, inner - 2, &lo);
		frows = lo.n < FIELD_ROWS ? lo.n : FIELD_ROWS;
		if (frows < 1)
			frows = 1;
	}
	int footer = 1 + (p->editing ? frows + 1 : 0) + (p->msg ? 1 : 0);
	int want = p->body.n + 1 + footer + 2;
	int h = want < u->lay.rows - 1 ? want : u->lay.rows - 1;
	int body_h = h - 3 - footer;
	if (body_h < 1)
		body_h = 1;
	int max_scroll = p->body.n > body_h ? p->body.n - body_h : 0;
	if (p->scroll > max_scroll)
		p->scroll = max_scroll;
	p->body_shown = body_h;

	WINDOW *w = ui_dialog_new(u, h, wd,
	                          st->kind == SESSION_STEP_REQUEST
	                              ? "Step: before the model request"
	                              : "Step: before the execution");
	for (int i = 0; i < body_h && p->scroll + i < p->body.n; i++) {
		const char *row = p->body.row[p->scroll + i];
		ui_draw_st(w, 1 + i, 2, inner, row, strlen(row), UE_OVERLAY);
	}
	if (max_scroll > 0) {
		char pos[64];
		snprintf(pos, sizeof pos, " PgUp/PgDn: %d-%d of %d ",
		         p->scroll + 1, p->scroll + body_h, p->body.n);
		int pw = (int)strlen(pos);
		ui_draw_text(w, h - 1, wd - pw - 2, pw, pos, UE_DIM);
	}
	int y = 1 + body_h + 1, cy = -1, cx = -1;
	if (p->editing && y < h - 1) {
		ui_draw_text(w, y++, 2, inner,
		             "edit, then Enter runs it (Ctrl-U clears, "
		             "Alt-Enter new line, Esc back):",
		             UE_DIM);
		ui_draw_field(w, &p->field, &lo, y, 2, inner, frows, h - 1, &cy,
		              &cx);
		y += frows;
	} else if (y < h - 1) {
		ui_draw_text(w, y++, 2, inner, step_choices(st), UE_APPROVAL);
	}
	if (p->msg && y < h - 1)
		ui_draw_text(w, y, 2, inner, p->msg, UE_ERROR);
	if (p->editing)
		ui_input_layout_free(&lo);
	ui_dialog_done(w, &p->cur, cy >= 1 && cy < h - 1, cy, cx);
}

static int step_cursor(struct ui *u, struct ui_overlay *o, int *y, int *x)
{
	(void)o;
	return ui_cursor_get(&u->step->cur, y, x);
}

/* ---- keys ------------------------------------------------------------------
 */

/* The answer to the session; why it was refused stays on screen. */
static void step_answer(struct ui *u, enum session_step_action a,
                        const char *edit)
{
	char *err = NULL;
	if (session_step(u->s, a, edit, &err) < 0)
		step_set_msg(u->step, err ? err : "the answer was refused");
	else
		u->step->editing = 0;
	free(err);
}

/* A key in the edit field: Enter runs the edit, Esc goes back. */
static void step_field_key(struct ui *u, int key, int fn)
{
	struct ui_step *p = u->step;
	struct ui_input *in = &p->field;
	if (!fn && key == UI_KEY_ENTER && !u->keys.in_paste) {
		char *text = xstrdup(buf_str(&in->text));
		step_answer(u, SESSION_STEP_EDIT, text);
		free(text);
	} else if (!fn && key == UI_KEY_ESC) {
		p->editing = 0;
		step_set_msg(p, NULL);
	} else {
		ui_field_key(in, key, fn);
	}
}

/* Every key while paused (a resize goes on to the workbench). */
static int step_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	const struct session_step *st = step_pending(u);
	struct ui_step *p = u->step;
	(void)o;
	if (!st || ui_approval_shown(u))
		return 0;
	int page = p->body_shown > 1 ? p->body_shown - 1 : 1;
	if (fn && key == KEY_PPAGE) {
		p->scroll = p->scroll > page ? p->scroll - page : 0;
	} else if (fn && key == KEY_NPAGE) {
		p->scroll += page; /* clamped when drawn */
	} else if (p->editing) {
		step_field_key(u, key, fn);
	} else if (fn && key == KEY_UP) {
		p->scroll = p->scroll > 0 ? p->scroll - 1 : 0;
	} else if (fn && key == KEY_DOWN) {
		p->scroll++;
	} else if (!fn && key == 'n') {
		step_set_msg(p, NULL);
		step_answer(u, SESSION_STEP_CONTINUE, NULL);
	} else if (!fn && key == 'x') {
		step_set_msg(p, NULL);
		step_answer(u, SESSION_STEP_END, NULL);
	} else if (!fn && key == 'k' && st->kind == SESSION_STEP_EXEC) {
		step_set_msg(p, NULL);
		step_answer(u, SESSION_STEP_SKIP, NULL);
	} else if (!fn && key == 'e' && st->kind == SESSION_STEP_EXEC &&
	           st->editable) {
		p->editing = 1;
		step_set_msg(p, NULL);
		buf_reset(&p->field.text);
		p->field.cur = 0;
		const char *s = st->subject ? st->subject : "";
		ui_input_insert(&p->field, s, strlen(s));
	} else if (!fn && key == 's') {
		ui_step_toggle(u);
	} else if (fn && key == KEY_RESIZE) {
		return 0;
	}
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_STATUS);
	return 1;
}
