/* budget.c: the Budget dialog. When an interactive run reaches
 * --max-cost, --max-tokens or --max-turns the session waits
 * (session_budget_pending) before the next request; this dialog says
 * what was spent against which budget and answers: r raises it by the
 * same amount again, e takes a new limit typed in, s stops the run. */
#include "tui/replay.h"
#include "tui/ui.h"

#include "assay/session.h"
#include "assay/termtext.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUDGET_W 76

struct ui_budget {
	struct ui_overlay ov;
	struct ui_cursor cur;
	double first; /* the budget as the run began: r adds it again */
	int editing;
	char field[32];
	char *msg;
};

static const struct session_budget *budget_pending(struct ui *u)
{
	return u->budget && u->s ? session_budget_pending(u->s) : NULL;
}

/* The figure as the user reads it: $0.4350, 12000 tokens, 6 turns. */
static void budget_figure(char *out, size_t n, const char *kind, double v)
{
	if (!strcmp(kind, "cost"))
		snprintf(out, n, "$%.4f", v);
	else
		snprintf(out, n, "%.0f %s", v, kind);
}

/* What r raises the limit to: the first budget once more on top. */
static double budget_next(const struct ui_budget *p,
                          const struct session_budget *b)
{
	double step = p->first > 0 ? p->first : b->limit;
	double next = b->limit + step;
	while (next <= b->spent)
		next += step;
	return next;
}

static void budget_draw(struct ui *u, struct ui_overlay *o)
{
	const struct session_budget *b = budget_pending(u);
	struct ui_budget *p = u->budget;
	(void)o;
	p->cur.on = 0;
	if (!b)
		return;
	if (p->first <= 0)
		p->first = b->limit;
	int wd = u->lay.cols - 2 < BUDGET_W ? u->lay.cols - 2 : BUDGET_W;
	int inner = wd - 4, h = 9 + (p->msg ? 1 : 0);
	WINDOW *w = ui_dialog_new(u, h, wd, "Budget reached");
	char spent[48], limit[48], next[48], line[256];
	budget_figure(spent, sizeof spent, b->kind, b->spent);
	budget_figure(limit, sizeof limit, b->kind, b->limit);
	budget_figure(next, sizeof next, b->kind, budget_next(p, b));
	snprintf(line, sizeof line, "The %s budget: %s spent of %s.", b->kind,
	         spent, limit);
	ui_draw_text(w, 1, 2, inner, line, UE_OVERLAY);
	char *why = term_clean(b->why, strlen(b->why), 0);
	ui_draw_text(w, 2, 2, inner, why, UE_DIM);
	free(why);
	snprintf(line, sizeof line,
	         "So far: %d turns, %.0f tokens in, %.0f out, $%.4f%s.",
	         u->m.turn, u->m.in_tokens, u->m.out_tokens, u->m.cost,
	         u->m.unpriced ? " (some turns of unknown cost)" : "");
	ui_draw_text(w, 3, 2, inner, line, UE_OVERLAY);
	ui_draw_text(w, 4, 2, inner,
	             "The run waits here: nothing more is sent until you "
	             "answer.",
	             UE_DIM);
	int cy = -1, cx = -1;
	if (p->editing) {
		snprintf(line, sizeof line,
		         "new %s limit (Enter, Esc back): %s", b->kind,
		         p->field);
		ui_draw_text(w, 6, 2, inner, line, UE_APPROVAL);
		cy = 6;
		cx = 2 + (int)strlen(line);
	} else {
		snprintf(line, sizeof line,
		         "r raise to %s   e enter a new limit   s stop the run",
		         next);
		ui_draw_text(w, 6, 2, inner, line, UE_APPROVAL);
	}
	if (p->msg)
		ui_draw_text(w, 7, 2, inner, p->msg, UE_ERROR);
	ui_dialog_done(w, &p->cur, cy > 0, cy, cx);
}

static int budget_cursor(struct ui *u, struct ui_overlay *o, int *y, int *x)
{
	(void)o;
	return ui_cursor_get(&u->budget->cur, y, x);
}

static void budget_set_msg(struct ui_budget *p, const char *text)
{
	free(p->msg);
	p->msg = text ? term_clean(text, strlen(text), 0) : NULL;
}

/* The answer to the session; a refusal stays on screen. */
static void budget_answer(struct ui *u, double limit)
{
	char *err = NULL;
	if (session_budget_decide(u->s, limit, &err) < 0) {
		budget_set_msg(u->budget, err ? err : "refused");
	} else {
		u->budget->editing = 0;
		u->budget->field[0] = '\0';
		budget_set_msg(u->budget, NULL);
	}
	free(err);
}

/* A key while the limit is typed: digits and one point. */
static void budget_field_key(struct ui *u, int key, int fn)
{
	struct ui_budget *p = u->budget;
	size_t n = strlen(p->field);
	if (ui_key_enter(key, fn)) {
		char *end;
		double v = strtod(p->field, &end);
		if (!n || *end || v <= 0)
			budget_set_msg(p, "type a number above what was spent");
		else
			budget_answer(u, v);
	} else if (!fn && key == UI_KEY_ESC) {
		p->editing = 0;
		budget_set_msg(p, NULL);
	} else if (ui_key_backspace(key, fn)) {
		if (n)
			p->field[n - 1] = '\0';
	} else if (!fn &&
	           ((key >= '0' && key <= '9') ||
	            (key == '.' && !strchr(p->field, '.'))) &&
	           n + 1 < sizeof p->field) {
		p->field[n] = (char)key;
		p->field[n + 1] = '\0';
	}
}

static int budget_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	const struct session_budget *b = budget_pending(u);
	struct ui_budget *p = u->budget;
	(void)o;
	if (!b)
		return 0;
	if (fn && key == KEY_RESIZE)
		return 0;
	if (p->editing)
		budget_field_key(u, key, fn);
	else if (!fn && key == 'r')
		budget_answer(u, budget_next(p, b));
	else if (!fn && key == 'e') {
		p->editing = 1;
		p->field[0] = '\0';
		budget_set_msg(p, NULL);
	} else if (!fn && key == 's')
		budget_answer(u, 0);
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_STATUS);
	return 1;
}

void ui_budget_attach(struct ui *u)
{
	u->budget = xcalloc(1, sizeof *u->budget);
	u->budget->ov = (struct ui_overlay){
	    .name = "budget",
	    .layer = UI_LAYER_DIALOG,
	    .flags = UI_OV_MODAL | UI_OV_COVERS_IMAGES,
	    .draw = budget_draw,
	    .key = budget_key,
	    .cursor = budget_cursor,
	    .mouse = ui_overlay_mouse_eat,
	};
}

void ui_budget_free(struct ui *u)
{
	if (!u->budget)
		return;
	ui_overlay_pop(u, &u->budget->ov);
	free(u->budget->msg);
	free(u->budget);
	u->budget = NULL;
}

void ui_budget_sync(struct ui *u)
{
	if (!u->budget)
		return;
	if (budget_pending(u))
		ui_overlay_push(u, &u->budget->ov);
	else
		ui_overlay_pop(u, &u->budget->ov);
}
