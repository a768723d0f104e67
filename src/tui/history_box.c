/* history_box.c: the message box's history in the workbench. At start
 * the project's earlier messages come back into the box (history.c
 * keeps the file); each message the box sends is kept for later runs;
 * Ctrl-R is a reverse incremental search (readline's), an overlay over
 * the box until it is accepted or cancelled. Dialog fields never come
 * here: only keys.c's send of the message box records. */
#include "tui/history.h"
#include "tui/ui.h"

#include "assay/log.h"
#include "assay/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The one message box of the process (a fork from a replay opens a
 * second workbench: it attaches again). */
static struct ui_hist box_hist;

/* Ctrl-R's state while it is up. */
struct hist_search {
	struct ui_overlay ov;
	struct buf query;
	size_t match; /* the entry shown; nhist: none yet */
	int failed;   /* no older entry holds the query */
	char *draft;  /* the box before the search */
	size_t draft_cur;
	char *last; /* the previous search's query (Ctrl-R Ctrl-R) */
	struct ui_cursor at;
};

static void hsearch_draw(struct ui *u, struct ui_overlay *o);
static int hsearch_key(struct ui *u, struct ui_overlay *o, int key, int fn);
static int hsearch_cursor(struct ui *u, struct ui_overlay *o, int *y, int *x);
static void hsearch_free(struct ui *u, struct ui_overlay *o);

static struct hist_search hsearch = {
    .ov =
        {
            .name = "history search",
            .layer = UI_LAYER_VIEW, /* under every dialog */
            .draw = hsearch_draw,
            .key = hsearch_key,
            .cursor = hsearch_cursor,
            .free = hsearch_free,
        },
};

void ui_hist_attach(struct ui *u)
{
	ui_hist_free(&box_hist);
	if (u->replay || u->view || !u->s)
		return;
	/* the project is the directory the run starts in (project.c) */
	char *root = realpath(".", NULL), *err = NULL;
	if (!root) {
		log_warn("tui: history: the current directory: %s",
		         strerror(errno));
		return;
	}
	ui_hist_init(&box_hist, NULL, root);
	free(root);
	if (ui_hist_load(&box_hist, &u->in, &err) < 0)
		log_warn("tui: history: %s", err);
	free(err);
}

void ui_hist_record(struct ui *u, const char *msg)
{
	char *err = NULL;
	(void)u;
	if (box_hist.project &&
	    ui_hist_add(&box_hist, msg, (int64_t)time(NULL), &err) < 0)
		log_warn("tui: history: %s", err);
	free(err);
}

/* ---- Ctrl-R ---------------------------------------------------------------
 */

void ui_hist_search_open(struct ui *u)
{
	struct hist_search *s = &hsearch;
	if (u->replay || u->view || s->ov.on_stack)
		return;
	buf_init(&s->query, 4096);
	s->match = u->in.nhist;
	s->failed = 0;
	s->draft = xstrdup(buf_str(&u->in.text));
	s->draft_cur = u->in.cur;
	ui_overlay_push(u, &s->ov);
	ui_touch(u, UI_DIRTY_INPUT);
}

/* The search is over (its text stays in the box, or the draft comes
 * back): the overlay goes. */
static void hsearch_end(struct ui *u, struct hist_search *s, int accept)
{
	struct ui_input *in = &u->in;
	if (accept && s->match < in->nhist) {
		/* Up and Down go on from the entry found; past the newest
		 * the draft comes back */
		ui_input_hist_resume(in, s->match, s->draft);
		s->draft = NULL;
	} else {
		ui_input_restore(in, s->draft, s->draft_cur);
	}
	if (s->query.len) {
		free(s->last);
		s->last = xstrdup(buf_str(&s->query));
	}
	ui_overlay_pop(u, &s->ov);
	ui_touch(u, UI_DIRTY_LAYOUT);
}

/* The newest entry at or before from that holds the query into the
 * box, the cursor on the match; else the search has failed (what was
 * shown stays). */
static void hsearch_find(struct ui *u, struct hist_search *s, size_t from)
{
	struct ui_input *in = &u->in;
	size_t at, off;
	if (from < in->nhist &&
	    ui_input_hist_find(in, buf_str(&s->query), from, &at, &off)) {
		s->match = at;
		s->failed = 0;
		ui_input_set(in, in->hist[at], off);
	} else {
		s->failed = 1;
	}
	ui_touch(u, UI_DIRTY_LAYOUT);
}

/* Ctrl-R again: the next older match (an empty query takes the last
 * search's). */
static void hsearch_older(struct ui *u, struct hist_search *s)
{
	if (!s->query.len && s->last) {
		buf_puts(&s->query, s->last);
		hsearch_find(
		    u, s, s->match < u->in.nhist ? s->match : u->in.nhist - 1);
		return;
	}
	if (s->match == 0) {
		s->failed = 1;
		ui_touch(u, UI_DIRTY_INPUT);
		return;
	}
	hsearch_find(u, s, s->match - 1);
}

/* Backspace: the query one character shorter, searched again from the
 * newest entry (an empty query shows the draft). */
static void hsearch_shorter(struct ui *u, struct hist_search *s)
{
	size_t n = s->query.len;
	if (!n)
		return;
	while (n > 0 && ((unsigned char)s->query.data[--n] & 0xC0) == 0x80)
		;
	s->query.len = n;
	s->query.data[n] = '\0';
	if (!n) {
		s->match = u->in.nhist;
		s->failed = 0;
		ui_input_set(&u->in, s->draft, s->draft_cur);
		ui_touch(u, UI_DIRTY_LAYOUT);
		return;
	}
	hsearch_find(u, s, u->in.nhist - 1);
}

int ui_hist_search_cancel(struct ui *u)
{
	if (!hsearch.ov.on_stack)
		return 0;
	hsearch_end(u, &hsearch, 0);
	return 1;
}

/* Typing narrows, Ctrl-R goes older, Enter takes the entry, Esc and
 * Ctrl-G give the draft back; any other key takes the entry and then
 * does what it does in the box. */
static int hsearch_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	struct hist_search *s = (struct hist_search *)o;
	if (u->lay.focus != P_INPUT) { /* a click took the focus away */
		hsearch_end(u, s, 1);
		ui_handle_key(u, key, fn);
	} else if (!fn && key == UI_KEY_CTRL_R) {
		hsearch_older(u, s);
	} else if (!fn && (key == UI_KEY_ESC || key == UI_KEY_CTRL_G)) {
		hsearch_end(u, s, 0);
	} else if (!fn && key == UI_KEY_ENTER) {
		hsearch_end(u, s, 1);
	} else if (ui_key_backspace(key, fn)) {
		hsearch_shorter(u, s);
	} else if (ui_key_text(key, fn) && !u->keys.in_paste) {
		char u8[4];
		size_t was = s->query.len;
		if (buf_append(&s->query, u8,
		               ui_u8_encode((uint32_t)key, u8)) == 0)
			hsearch_find(u, s,
			             s->match < u->in.nhist ? s->match
			                                    : u->in.nhist - 1);
		else
			s->query.len = was;
	} else {
		hsearch_end(u, s, 1);
		ui_handle_key(u, key, fn);
	}
	return 1;
}

/* The box with "(reverse-i-search)'query': " before the entry shown,
 * wrapped as the box wraps its text, the cursor on the match. */
static void hsearch_draw(struct ui *u, struct ui_overlay *o)
{
	struct hist_search *s = (struct hist_search *)o;
	struct ui_geom *g = &u->lay.g[P_INPUT];
	s->at.on = 0;
	if (!g->shown || u->lay.too_small || g->h < 3 || g->w < 8)
		return;
	WINDOW *w = newwin(g->h, g->w, g->y, g->x);
	int inner = g->w - 2, rows = g->h - 2;
	ui_background(w);
	werase(w);
	ui_draw_box(w, NULL, 1);
	const char *hint = "Ctrl-R older, Enter takes it, Esc back";
	int hw = (int)strlen(hint);
	if (g->w > hw + 8)
		ui_draw_text(w, 0, g->w - hw - 3, hw, hint, UE_DIM);
	char *prompt =
	    xasprintf("(%sreverse-i-search)'%s': ", s->failed ? "failed " : "",
	              buf_str(&s->query));
	struct ui_input t;
	ui_input_init(&t);
	ui_input_insert(&t, prompt, strlen(prompt));
	size_t plen = t.text.len;
	ui_input_insert(&t, buf_str(&u->in.text), u->in.text.len);
	t.cur = plen + u->in.cur;
	struct ui_input_layout lo;
	ui_input_layout(&t, inner, &lo);
	int top = lo.cur_row >= rows ? lo.cur_row - rows + 1 : 0;
	const char *txt = buf_str(&t.text);
	for (int r = 0; r < rows && top + r < lo.n; r++) {
		size_t a = lo.start[top + r], z = lo.end[top + r];
		ui_draw_st(w, 1 + r, 1, inner, txt + a, z - a, UE_INPUT);
		if (a < plen) /* the prompt stands out */
			ui_draw_st(w, 1 + r, 1, inner, txt + a,
			           (z < plen ? z : plen) - a,
			           s->failed ? UE_WARNING : UE_PROMPT);
	}
	s->at.on = 1;
	s->at.y = g->y + 1 + lo.cur_row - top;
	s->at.x = g->x + 1 + lo.cur_col;
	ui_input_layout_free(&lo);
	ui_input_free(&t);
	free(prompt);
	leaveok(w, TRUE);
	wnoutrefresh(w);
	delwin(w);
}

static int hsearch_cursor(struct ui *u, struct ui_overlay *o, int *y, int *x)
{
	(void)u;
	return ui_cursor_get(&((struct hist_search *)o)->at, y, x);
}

/* Off the stack (accepted, cancelled, or the workbench closing). */
static void hsearch_free(struct ui *u, struct ui_overlay *o)
{
	struct hist_search *s = (struct hist_search *)o;
	(void)u;
	buf_free(&s->query);
	free(s->draft);
	s->draft = NULL;
}
