/* panes.c: drawing the workbench: Conversation (messages with light
 * markdown, one-line tool call summaries), Tools (every call with its
 * state, and the selected call's output with stdout and stderr told
 * apart), Workspace (the tree), the input box, the status bar and the
 * overlays. Only the rows that show are rendered; long things are
 * walked from the position shown, never whole. */
#include "tui/ui.h"
#include "assay/termtext.h"
#include "tui/replay.h"

#include "assay/session.h"
#include "assay/util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAIL_BYTES (64 << 10)
#define TAIL_LINES 400

/* ---- boxes ------------------------------------------------------------ */

/* A box-drawing cell in element e (the ASCII form without UTF-8). */
static void cell(cchar_t *c, const char *utf8, const char *ascii,
                 enum ui_elem e)
{
	const char *s = ui_ascii ? ascii : utf8;
	uint32_t cp;
	ui_u8_decode(s, strlen(s), &cp);
	wchar_t wc[2] = {(wchar_t)cp, 0};
	unsigned a;
	int pair;
	ui_style_resolve(ui_elem_style(e), &a, &pair);
	setcchar(c, wc, (attr_t)a, (short)(pair < 32768 ? pair : 0), &pair);
}

void ui_draw_box(WINDOW *w, const char *title, int focused)
{
	int h, wd;
	getmaxyx(w, h, wd);
	enum ui_elem e = focused ? UE_BORDER_FOCUS : UE_BORDER;
	cchar_t hl, vl, tl, tr, bl, br;
	cell(&hl, "\xe2\x94\x80", "-", e);
	cell(&vl, "\xe2\x94\x82", "|", e);
	cell(&tl, "\xe2\x94\x8c", "+", e);
	cell(&tr, "\xe2\x94\x90", "+", e);
	cell(&bl, "\xe2\x94\x94", "+", e);
	cell(&br, "\xe2\x94\x98", "+", e);
	/* curses adds the window's current attributes (and its pair, to a
	 * cell of pair 0) to what it draws: left from the text drawn last
	 * (a dim line, in the mono theme), they would dim the border */
	ui_set_elem(w, e);
	wborder_set(w, &vl, &vl, &hl, &hl, &tl, &tr, &bl, &br);
	if (title && wd > 6) {
		ui_set_elem(w, focused ? UE_TITLE_FOCUS : UE_TITLE);
		mvwaddch(w, 0, 2, ' ');
		int n = ui_draw_text(w, 0, 3, wd - 6, title,
		                     focused ? UE_TITLE_FOCUS : UE_TITLE);
		ui_set_elem(w, focused ? UE_TITLE_FOCUS : UE_TITLE);
		mvwaddch(w, 0, 3 + n, ' ');
	}
	(void)h;
}

void ui_st_add_text(struct ui_rows *out, int width, int indent,
                    const char *label, enum ui_elem le, const char *raw,
                    enum ui_elem e)
{
	char *clean =
	    term_clean(raw, strlen(raw), TERM_CLEAN_NEWLINES | TERM_CLEAN_TABS);
	struct buf b;
	buf_init(&b, 0);
	for (char *line = clean, *nl; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		buf_reset(&b);
		if (label) {
			ui_st_elem(&b, le);
			buf_puts(&b, label);
		}
		ui_st_elem(&b, e);
		buf_puts(&b, line);
		ui_st_wrap(buf_str(&b), b.len, width, indent, out);
	}
	buf_free(&b);
	free(clean);
}

WINDOW *ui_dialog_new(struct ui *u, int h, int wd, const char *title)
{
	WINDOW *w = newwin(h, wd, (u->rows - 1 - h) / 2, (u->cols - wd) / 2);
	ui_background(w);
	werase(w);
	for (int y = 0; y < h; y++)
		ui_fill(w, y, 0, wd, UE_OVERLAY);
	ui_draw_box(w, title, 1);
	return w;
}

void ui_dialog_done(WINDOW *w, struct ui_cursor *at, int cursor, int cy, int cx)
{
	leaveok(w, TRUE); /* the frame places the cursor (overlay.c) */
	at->on = cursor;
	at->y = getbegy(w) + cy;
	at->x = getbegx(w) + cx;
	wnoutrefresh(w);
	delwin(w);
}

void ui_draw_field(WINDOW *w, const struct ui_input *in,
                   const struct ui_input_layout *lo, int y, int x, int width,
                   int rows, int maxy, int *cy, int *cx)
{
	int top = lo->cur_row >= rows ? lo->cur_row - rows + 1 : 0;
	const char *t = buf_str(&in->text);
	for (int i = 0; i < rows && y + i < maxy; i++) {
		ui_fill(w, y + i, x, width, UE_INPUT);
		if (i == 0 && top == 0)
			ui_draw_text(w, y, x, 2, "> ", UE_PROMPT);
		if (top + i < lo->n) {
			size_t a = lo->start[top + i], z = lo->end[top + i];
			/* clean already: ui_input_insert */
			ui_draw_st(w, y + i, x + 2, width - 2, t + a, z - a,
			           UE_INPUT);
		}
	}
	*cy = y + lo->cur_row - top;
	*cx = x + 2 + lo->cur_col;
}

static const char *const pane_titles[] = {"Conversation", "Tools", "Workspace"};

/* A pane's box; when the terminal is too narrow for more than one
 * pane, the top border names the others Tab reaches. */
static void pane_box(struct ui *u, int p)
{
	WINDOW *w = u->g[p].win;
	ui_draw_box(w, pane_titles[p], u->focus == p);
	if (u->g[P_CONV].shown + u->g[P_TOOLS].shown + u->g[P_TREE].shown > 1)
		return;
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, " Tab:");
	for (int i = 0; i < 3; i++)
		if (i != p)
			buf_printf(&b, " %s", pane_titles[i]);
	buf_puts(&b, " ");
	int tw = (int)b.len, x = u->g[p].w - tw - 2;
	if (x > (int)strlen(pane_titles[p]) + 6)
		ui_draw_text(w, 0, x, tw, buf_str(&b), UE_DIM);
	buf_free(&b);
}

/* ---- tool call one-liners -------------------------------------------- */

/* A call's state in words (waiting, running, exit 0...) and its element. */
static void call_state(struct ui *u, const struct ui_call *c, char *out,
                       size_t max, enum ui_elem *el)
{
	char d[32];
	ui_fmt_duration(d, sizeof d, c->duration_ms);
	switch (c->state) {
	case UI_CALL_PENDING:
		snprintf(out, max, c->asking ? "needs approval" : "waiting");
		*el = c->asking ? UE_APPROVAL : UE_DIM;
		return;
	case UI_CALL_DENIED:
		snprintf(out, max, "denied");
		*el = UE_FAIL;
		return;
	case UI_CALL_RUNNING: {
		int64_t now = ui_model_now(&u->m);
		ui_fmt_duration(d, sizeof d, now - c->t_start);
		snprintf(out, max, "%s %s", ui_spinner(now), d);
		*el = UE_RUNNING;
		return;
	}
	case UI_CALL_DONE:
		break;
	}
	if (!c->is_exec) {
		snprintf(out, max, "%s %s", c->is_error ? "error" : "ok", d);
		*el = c->is_error ? UE_FAIL : UE_OK;
	} else if (c->timed_out) {
		snprintf(out, max, "timed out %s", d);
		*el = UE_FAIL;
	} else if (c->cancelled) {
		snprintf(out, max, "cancelled %s", d);
		*el = UE_WARNING;
	} else if (c->exit_code < 0 && c->sig) {
		snprintf(out, max, "signal %d %s", c->sig, d);
		*el = UE_FAIL;
	} else if (c->exit_code < 0) {
		snprintf(out, max, "failed");
		*el = UE_FAIL;
	} else {
		snprintf(out, max, "exit %d %s", c->exit_code, d);
		*el = c->exit_code ? UE_FAIL : UE_OK;
	}
	double cost = ui_call_cost(&u->m, c);
	size_t len = strlen(out);
	if (cost >= 0 && len + 12 < max)
		snprintf(out + len, max - len, " $%.4f", cost);
}

/* "#3 shell  head -5 input/x.csv" + the state at the right edge. */
static char *call_line(struct ui *u, int i, int width, const char *lead)
{
	const struct ui_call *c = u->m.calls[i];
	char state[64];
	enum ui_elem el;
	call_state(u, c, state, sizeof state, &el);
	char *name = term_clean(c->name, strlen(c->name), 0);
	char *sum = term_clean(c->summary, strlen(c->summary), TERM_CLEAN_TABS);
	struct buf left;
	buf_init(&left, 0);
	ui_st_elem(&left, UE_TOOL_CALL);
	buf_printf(&left, "%s#%d ", lead, i + 1);
	ui_st_elem(&left, UE_BOLD);
	buf_puts(&left, name);
	ui_st_elem(&left, UE_TOOL_CALL);
	buf_printf(&left, "  %s", sum);
	int sw = ui_st_width(state, strlen(state));
	int lw = width - sw - 1;
	char *fit = ui_st_fit(left.data, left.len, lw > 4 ? lw : 4);
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, fit);
	int pad = width - ui_st_width(fit, strlen(fit)) - sw;
	for (int k = 0; k < pad; k++)
		buf_puts(&b, " ");
	if (pad >= 0) {
		ui_st_elem(&b, el);
		buf_puts(&b, state);
	}
	free(fit);
	free(name);
	free(sum);
	buf_free(&left);
	return buf_detach(&b);
}

/* ---- conversation ----------------------------------------------------- */

int ui_conv_width(const struct ui *u)
{
	int w = u->g[P_CONV].w - 4;
	return w > 4 ? w : 4;
}

/* Untrusted text wrapped after a label, each of its lines. */
static void wrap_text(struct ui_rows *out, const char *label, enum ui_elem lel,
                      const char *text, enum ui_elem el, int width)
{
	char *clean = term_clean(text, strlen(text),
	                         TERM_CLEAN_NEWLINES | TERM_CLEAN_TABS);
	const char *p = clean;
	int first = 1;
	while (1) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		struct buf b;
		buf_init(&b, 0);
		if (first && label) {
			ui_st_elem(&b, lel);
			buf_puts(&b, label);
		}
		ui_st_elem(&b, el);
		buf_append(&b, p, n);
		ui_st_wrap(b.data, b.len, width, 0, out);
		buf_free(&b);
		first = 0;
		if (!nl)
			break;
		p = nl + 1;
	}
	free(clean);
}

/* The assistant's markdown as rows. */
static void assistant_rows(struct ui_rows *out, const struct ui_item *it,
                           int width, const char *label)
{
	char *clean = term_clean(buf_str(&it->text), it->text.len,
	                         TERM_CLEAN_NEWLINES | TERM_CLEAN_TABS);
	struct ui_md md = {.ascii = ui_ascii};
	ui_md_render(&md, clean, UE_ASSISTANT);
	for (int i = 0; i < md.n; i++) {
		struct buf b;
		buf_init(&b, 0);
		if (i == 0) {
			ui_st_elem(&b, UE_ASSISTANT_LABEL);
			buf_puts(&b, label);
		}
		buf_puts(&b, md.l[i].st);
		if (i == md.n - 1 && it->streaming) {
			ui_st_elem(&b, UE_DIM);
			buf_puts(&b, ui_glyph(G_ELLIPSIS));
		}
		if (md.l[i].nowrap)
			ui_rows_push(out, ui_st_fit(b.data, b.len, width));
		else
			ui_st_wrap(b.data, b.len, width, md.l[i].indent, out);
		buf_free(&b);
	}
	ui_md_free(&md);
	free(clean);
}

/* "image output/chart.png created: press p in a pane to preview it". */
static void image_rows(struct ui_rows *out, const struct ui_item *it, int width)
{
	const char *t = buf_str(&it->text);
	const char *sp = strchr(t, ' ');
	char *path = term_clean(sp ? sp + 1 : t, strlen(sp ? sp + 1 : t), 0);
	struct buf b;
	buf_init(&b, 0);
	ui_st_elem(&b, UE_TOOL_CALL);
	buf_puts(&b, "image ");
	ui_st_elem(&b, UE_BOLD);
	buf_puts(&b, path);
	ui_st_elem(&b, UE_TOOL_CALL);
	buf_printf(&b, " %.*s", sp ? (int)(sp - t) : 0, t);
	ui_st_elem(&b, UE_DIM);
	buf_puts(&b, ": press p in a pane to preview it");
	ui_st_wrap(b.data, b.len, width, 2, out);
	buf_free(&b);
	free(path);
}

struct ui_rows *ui_item_rows(struct ui *u, int i, int width)
{
	struct ui_item *it = &u->m.items[i];
	if (it->kind == UI_ITEM_CALL &&
	    u->m.calls[it->call]->state == UI_CALL_RUNNING)
		it->rows_dirty = 1; /* the spinner moves */
	if (!it->rows_dirty && it->rows_w == width)
		return &it->rows;
	ui_rows_free(&it->rows);
	it->rows_w = width;
	it->rows_dirty = 0;
	int next_is_call =
	    i + 1 < u->m.nitems && u->m.items[i + 1].kind == UI_ITEM_CALL;
	switch (it->kind) {
	case UI_ITEM_USER:
		wrap_text(&it->rows, "you: ", UE_USER_LABEL, buf_str(&it->text),
		          UE_USER, width);
		break;
	case UI_ITEM_ASSISTANT:
		assistant_rows(&it->rows, it, width, "assistant: ");
		break;
	case UI_ITEM_SUMMARY:
		assistant_rows(&it->rows, it, width, "summary: ");
		break;
	case UI_ITEM_CALL: {
		char lead[16];
		snprintf(lead, sizeof lead, "%s ", ui_glyph(G_CALL));
		ui_rows_push(&it->rows, call_line(u, it->call, width, lead));
		if (next_is_call)
			return &it->rows;
		break;
	}
	case UI_ITEM_NOTICE:
		wrap_text(&it->rows, NULL, UE_DIM, buf_str(&it->text), UE_DIM,
		          width);
		break;
	case UI_ITEM_ERROR:
		wrap_text(&it->rows, NULL, UE_ERROR, buf_str(&it->text),
		          UE_ERROR, width);
		break;
	case UI_ITEM_END: {
		const char *t = buf_str(&it->text);
		const char *nl = strchr(t, '\n');
		char *first = xstrndup(t, nl ? (size_t)(nl - t) : strlen(t));
		int ok = u->m.exit_code == 0;
		wrap_text(&it->rows, NULL, UE_OK, first,
		          ok ? UE_OK : UE_WARNING, width);
		if (nl)
			wrap_text(&it->rows, NULL, UE_DIM, nl + 1, UE_DIM,
			          width);
		free(first);
		break;
	}
	case UI_ITEM_IMAGE:
		image_rows(&it->rows, it, width);
		break;
	}
	ui_rows_push(&it->rows, xstrdup(""));
	return &it->rows;
}

/* Rows from (item, row) to the end, counting at most limit. */
static int rows_after(struct ui *u, int item, int row, int limit, int width)
{
	int n = 0;
	for (int i = item; i < u->m.nitems && n <= limit; i++) {
		struct ui_rows *r = ui_item_rows(u, i, width);
		n += r->n - (i == item ? row : 0);
	}
	return n;
}

/* Place the anchor so the last rows of the conversation show. */
static void conv_anchor_bottom(struct ui *u, int ch, int width)
{
	int need = ch;
	u->conv_item = 0;
	u->conv_row = 0;
	for (int i = u->m.nitems - 1; i >= 0; i--) {
		struct ui_rows *r = ui_item_rows(u, i, width);
		if (r->n >= need) {
			u->conv_item = i;
			u->conv_row = r->n - need;
			return;
		}
		need -= r->n;
	}
}

void ui_conv_scroll(struct ui *u, int n)
{
	int width = ui_conv_width(u), ch = u->g[P_CONV].h - 2;
	if (!u->m.nitems)
		return;
	if (u->conv_follow)
		conv_anchor_bottom(u, ch, width);
	if (n < 0) {
		u->conv_follow = 0;
		for (; n < 0; n++) {
			if (u->conv_row > 0) {
				u->conv_row--;
			} else if (u->conv_item > 0) {
				u->conv_item--;
				u->conv_row =
				    ui_item_rows(u, u->conv_item, width)->n - 1;
			} else {
				break;
			}
		}
	} else {
		for (; n > 0; n--) {
			if (rows_after(u, u->conv_item, u->conv_row, ch,
			               width) <= ch)
				break;
			struct ui_rows *r =
			    ui_item_rows(u, u->conv_item, width);
			if (++u->conv_row >= r->n) {
				u->conv_item++;
				u->conv_row = 0;
			}
		}
		if (rows_after(u, u->conv_item, u->conv_row, ch, width) <= ch)
			u->conv_follow = 1;
	}
	ui_touch(u, UI_DIRTY_CONV);
}

void ui_conv_home(struct ui *u)
{
	u->conv_follow = 0;
	u->conv_item = 0;
	u->conv_row = 0;
	ui_touch(u, UI_DIRTY_CONV);
}

int ui_conv_item_at(struct ui *u, int y)
{
	int width = ui_conv_width(u), ch = u->g[P_CONV].h - 2;
	int row = 1;
	if (u->conv_follow)
		conv_anchor_bottom(u, ch, width);
	for (int i = u->conv_item; i < u->m.nitems && row <= ch; i++) {
		struct ui_rows *r = ui_item_rows(u, i, width);
		int n = r->n - (i == u->conv_item ? u->conv_row : 0);
		if (y >= row && y < row + n)
			return i;
		row += n;
	}
	return -1;
}

void ui_draw_conv(struct ui *u)
{
	struct ui_geom *g = &u->g[P_CONV];
	WINDOW *w = g->win;
	int ch = g->h - 2, width = ui_conv_width(u);
	ui_background(w);
	werase(w);
	pane_box(u, P_CONV);
	if (u->conv_item >= u->m.nitems)
		u->conv_follow = 1;
	if (u->conv_follow)
		conv_anchor_bottom(u, ch, width);
	int y = 1;
	for (int i = u->conv_item; i < u->m.nitems && y <= ch; i++) {
		struct ui_rows *r = ui_item_rows(u, i, width);
		int sel = i == u->conv_sel;
		for (int k = i == u->conv_item ? u->conv_row : 0;
		     k < r->n && y <= ch; k++, y++) {
			if (sel && k == 0) {
				ui_fill(w, y, 1, g->w - 2, UE_SELECTION);
				ui_draw_st(w, y, 2, width, r->row[k],
				           strlen(r->row[k]), UE_SELECTION);
			} else {
				ui_draw_st(w, y, 2, width, r->row[k],
				           strlen(r->row[k]), UE_NORMAL);
			}
		}
	}
	if (!u->m.nitems)
		ui_draw_text(w, 1, 2, width, "starting...", UE_DIM);
	if (!u->conv_follow && g->w > 12) {
		ui_set_elem(w, UE_WARNING);
		mvwaddstr(w, g->h - 1, g->w - 10,
		          ui_ascii ? " more v " : " more \xe2\x86\x93 ");
	}
	u->conv_rows_shown = ch;
}

/* ---- tools ----------------------------------------------------------- */

void ui_tail_free(struct ui_tail *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->line[i].st);
	free(t->line);
	memset(t, 0, sizeof *t);
	t->call = -1;
}

struct tail_sink {
	struct ui_tail *t;
	int err;
};

/* A line of the tail read back from an output file. */
static void tail_emit(void *arg, const char *line, size_t n)
{
	struct tail_sink *k = arg;
	struct ui_tail *t = k->t;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->line = xrealloc(t->line, t->cap * sizeof *t->line);
	}
	t->line[t->n++] = (struct ui_oline){xstrndup(line, n), (uint8_t)k->err};
}

/* Read the end of one output file into the tail, up to the bytes the
 * events have reported (a replay shows the output as it was then). */
static void tail_read(struct ui_tail *t, const char *path, int err,
                      uint64_t upto)
{
	/* a replayed run dir's file may be a FIFO: never waited on */
	int fd = path ? open_regular(path, O_RDONLY | O_NOFOLLOW, 0, NULL) : -1;
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || st.st_size == 0 || upto == 0) {
		close(fd);
		return;
	}
	off_t size = (uint64_t)st.st_size < upto ? st.st_size : (off_t)upto;
	off_t off = size > TAIL_BYTES ? size - TAIL_BYTES : 0;
	char *buf = xmalloc(TAIL_BYTES);
	ssize_t r = pread(fd, buf, (size_t)(size - off), off);
	close(fd);
	if (r > 0) {
		const char *p = buf;
		if (off > 0) { /* start at a line boundary */
			const char *nl = memchr(buf, '\n', (size_t)r);
			p = nl ? nl + 1 : buf + r;
		}
		size_t first = t->n;
		struct tail_sink sink = {t, err};
		struct ui_term term;
		ui_term_init(&term, tail_emit, &sink);
		ui_term_feed(&term, p, (size_t)(buf + r - p));
		ui_term_flush(&term);
		ui_term_free(&term);
		/* keep the newest lines only */
		size_t have = t->n - first;
		if (have > TAIL_LINES) {
			size_t drop = have - TAIL_LINES;
			for (size_t i = first; i < first + drop; i++)
				free(t->line[i].st);
			memmove(t->line + first, t->line + first + drop,
			        TAIL_LINES * sizeof *t->line);
			t->n -= drop;
		}
	}
	free(buf);
}

/* Read the tail of call idx's output files again if it grew. */
static void tail_refresh(struct ui *u, int idx)
{
	struct ui_call *c = u->m.calls[idx];
	struct ui_tail *t = &u->tail;
	if (t->call == idx && t->bytes[0] == c->bytes[0] &&
	    t->bytes[1] == c->bytes[1])
		return;
	ui_tail_free(t);
	t->call = idx;
	t->bytes[0] = c->bytes[0];
	t->bytes[1] = c->bytes[1];
	for (int e = 0; e < 2; e++) {
		char *path = ui_call_file(&u->m, c, e);
		tail_read(t, path, e, c->bytes[e]);
		free(path);
	}
}

/* The output lines of a call, newest first: what get() returns. */
struct outsrc {
	struct ui *u;
	struct ui_call *c;
	int mode;           /* 0 ring, 1 tail, 2 text */
	struct buf open[2]; /* the open (partial) lines */
	int open_which[2];  /* stdout's shows above stderr's */
	int nopen;
	char **text; /* mode 2: result lines */
	int ntext;
	int more; /* older output exists beyond what is here */
};

/* How many lines the output source has. */
static size_t src_count(const struct outsrc *s)
{
	if (s->mode == 1)
		return s->u->tail.n;
	if (s->mode == 2)
		return (size_t)s->ntext;
	return (size_t)s->nopen + s->c->nline;
}

/* Line k of the output source, newest first. */
static const char *src_get(const struct outsrc *s, size_t k, int *err)
{
	if (s->mode == 1) {
		const struct ui_oline *l =
		    &s->u->tail.line[s->u->tail.n - 1 - k];
		*err = l->err;
		return l->st;
	}
	if (s->mode == 2) {
		*err = s->c->is_error;
		return s->text[s->ntext - 1 - k];
	}
	if (k < (size_t)s->nopen) {
		int which = s->open_which[s->nopen - 1 - (int)k];
		*err = which;
		return buf_str(&s->open[which]);
	}
	const struct ui_oline *l = ui_call_line(s->c, k - (size_t)s->nopen);
	*err = l->err;
	return l->st;
}

/* Where a call's output comes from: its result, the files' tail, or the
 * ring. */
static void src_init(struct outsrc *s, struct ui *u, int idx)
{
	memset(s, 0, sizeof *s);
	s->u = u;
	s->c = u->m.calls[idx];
	buf_init(&s->open[0], 0);
	buf_init(&s->open[1], 0);
	struct ui_call *c = s->c;
	if (!c->is_exec || (c->result && !c->bytes[0] && !c->bytes[1] &&
	                    c->state == UI_CALL_DONE)) {
		s->mode = 2;
		const char *r = c->result ? c->result : "";
		char *clean = term_clean(r, strlen(r),
		                         TERM_CLEAN_NEWLINES | TERM_CLEAN_TABS);
		/* every line, the blank ones too; not the final \n */
		size_t n = strlen(clean);
		if (n && clean[n - 1] == '\n')
			clean[--n] = '\0';
		for (char *line = n ? clean : NULL; line;) {
			char *nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			s->text = xrealloc(s->text, (size_t)(s->ntext + 1) *
			                                sizeof *s->text);
			s->text[s->ntext++] = xstrdup(line);
			line = nl ? nl + 1 : NULL;
		}
		free(clean);
		return;
	}
	if (c->truncated) {
		s->mode = 1;
		tail_refresh(u, idx);
		s->more = 1;
		return;
	}
	for (int e = 0; e < 2; e++)
		if (c->term_live && ui_term_open(&c->term[e]))
			ui_term_peek(&c->term[e], &s->open[e]);
	for (int e = 0; e < 2; e++)
		if (s->open[e].len)
			s->open_which[s->nopen++] = e;
	s->more = c->lines_dropped > 0;
}

/* What an output source holds. */
static void src_free(struct outsrc *s)
{
	buf_free(&s->open[0]);
	buf_free(&s->open[1]);
	for (int i = 0; i < s->ntext; i++)
		free(s->text[i]);
	free(s->text);
}

/* The newest output lines of call idx that fit in rows, bottom up. */
static void draw_output(struct ui *u, WINDOW *w, int y0, int rows, int width,
                        int idx)
{
	struct outsrc src;
	src_init(&src, u, idx);
	size_t count = src_count(&src);
	int tw = width - 2; /* after the gutter */
	if (tw < 4)
		tw = 4;
	/* rows bottom-up: (line k, row j of its wrap) */
	char **row = xcalloc((size_t)rows, sizeof *row);
	int *rerr = xcalloc((size_t)rows, sizeof *rerr);
	int *first = xcalloc((size_t)rows, sizeof *first);
	int skip = u->out_scroll, fill = rows;
	size_t k = 0;
	for (; k < count && fill > 0; k++) {
		int err;
		const char *st = src_get(&src, k, &err);
		struct ui_rows wr = {0};
		ui_st_wrap(st, strlen(st), tw, 0, &wr);
		for (int j = wr.n - 1; j >= 0 && fill > 0; j--) {
			if (skip > 0) {
				skip--;
				continue;
			}
			fill--;
			row[fill] = wr.row[j];
			wr.row[j] = NULL;
			rerr[fill] = err;
			first[fill] = j == 0;
		}
		ui_rows_free(&wr);
	}
	if (skip > 0 && u->out_scroll > 0) {
		/* scrolled past the top: clamp */
		u->out_scroll -= skip;
	}
	/* short output reads from the top, long output shows its end */
	int top = fill, shift = 0;
	if (fill > 0 && src.more && count)
		ui_draw_text(w, y0 + fill - 1, 1, width,
		             "... earlier output: Enter opens the pager",
		             UE_DIM);
	else
		shift = fill;
	if (!count) {
		const char *msg = u->m.calls[idx]->state == UI_CALL_DONE
		                      ? "(no output)"
		                      : "(no output yet)";
		ui_draw_text(w, y0, 1, width, msg, UE_DIM);
	}
	for (int r = top; r < rows; r++) {
		enum ui_elem ge = rerr[r] ? UE_GUTTER_ERR : UE_GUTTER_OUT;
		int y = y0 + r - shift;
		ui_draw_text(
		    w, y, 1, 2,
		    first[r] ? ui_glyph(rerr[r] ? G_GUTTER_ERR : G_GUTTER_OUT)
		             : " ",
		    ge);
		ui_draw_st(w, y, 3, tw, row[r], strlen(row[r]),
		           rerr[r] ? UE_STDERR : UE_STDOUT);
		free(row[r]);
	}
	free(row);
	free(rerr);
	free(first);
	src_free(&src);
}

void ui_select_call(struct ui *u, int call, int user)
{
	if (call < 0 || call >= u->m.ncalls)
		return;
	if (user)
		u->sel_follow = call == u->m.ncalls - 1;
	if (u->sel_call != call)
		u->out_scroll = 0;
	u->sel_call = call;
	u->conv_sel = u->m.calls[call]->item;
	ui_touch(u, UI_DIRTY_TOOLS | UI_DIRTY_CONV);
}

void ui_draw_tools(struct ui *u)
{
	struct ui_geom *g = &u->g[P_TOOLS];
	WINDOW *w = g->win;
	int inner = g->w - 2, ch = g->h - 2;
	ui_background(w);
	werase(w);
	pane_box(u, P_TOOLS);
	if (!u->m.ncalls) {
		ui_draw_text(w, 1, 2, inner - 2, "no tool calls yet", UE_DIM);
		return;
	}
	int lh = u->m.ncalls;
	int maxl = ch / 3 > 3 ? ch / 3 : 3;
	if (lh > maxl)
		lh = maxl;
	if (lh > ch - 2)
		lh = ch - 2 > 1 ? ch - 2 : 1;
	int sel = u->sel_call < 0 ? u->m.ncalls - 1 : u->sel_call;
	if (sel < u->list_top)
		u->list_top = sel;
	if (sel >= u->list_top + lh)
		u->list_top = sel - lh + 1;
	if (u->list_top > u->m.ncalls - lh)
		u->list_top = u->m.ncalls - lh;
	if (u->list_top < 0)
		u->list_top = 0;
	for (int r = 0; r < lh; r++) {
		int i = u->list_top + r;
		if (i >= u->m.ncalls)
			break;
		char *line = call_line(u, i, inner - 1, "");
		enum ui_elem base = i == sel ? UE_SELECTION : UE_NORMAL;
		if (i == sel)
			ui_fill(w, 1 + r, 1, inner, UE_SELECTION);
		ui_draw_st(w, 1 + r, 2, inner - 1, line, strlen(line), base);
		free(line);
	}
	/* a rule naming the call whose output follows */
	int ry = 1 + lh;
	struct ui_call *c = u->m.calls[sel];
	char sz0[16], sz1[16];
	ui_fmt_size(sz0, sizeof sz0, (double)c->bytes[0]);
	ui_fmt_size(sz1, sizeof sz1, (double)c->bytes[1]);
	char *rule = c->is_exec
	                 ? xasprintf(" #%d output: stdout %s, stderr %s ",
	                             sel + 1, sz0, sz1)
	                 : xasprintf(" #%d result ", sel + 1);
	ui_set_elem(w, UE_BORDER);
	for (int x = 1; x <= inner; x++)
		mvwaddstr(w, ry, x, ui_glyph(G_HRULE));
	ui_draw_text(w, ry, 2, inner - 2, rule, UE_DIM);
	free(rule);
	int oy = ry + 1, oh = ch - lh - 1;
	u->out_rows_shown = oh;
	if (oh > 0)
		draw_output(u, w, oy, oh, inner, sel);
}

/* ---- workspace -------------------------------------------------------- */

void ui_draw_tree(struct ui *u)
{
	struct ui_geom *g = &u->g[P_TREE];
	WINDOW *w = g->win;
	int inner = g->w - 2, ch = g->h - 2;
	struct ui_tree *t = &u->m.tree;
	ui_background(w);
	werase(w);
	pane_box(u, P_TREE);
	ui_tree_visible(t);
	if (!t->nvis) {
		ui_draw_text(w, 1, 2, inner - 2,
		             u->m.workspace ? "(empty)" : "(no workspace yet)",
		             UE_DIM);
		return;
	}
	/* keep the cursor on the same node when rows move */
	if (u->tree_cur_path) {
		for (size_t i = 0; i < t->nvis; i++)
			if (!strcmp(t->vis[i]->path, u->tree_cur_path)) {
				u->tree_cur = (int)i;
				break;
			}
	}
	if (u->tree_cur >= (int)t->nvis)
		u->tree_cur = (int)t->nvis - 1;
	if (u->tree_cur < 0)
		u->tree_cur = 0;
	free(u->tree_cur_path);
	u->tree_cur_path = xstrdup(t->vis[u->tree_cur]->path);
	int rows = ch - (t->truncated ? 1 : 0);
	if (u->tree_cur < u->tree_top)
		u->tree_top = u->tree_cur;
	if (u->tree_cur >= u->tree_top + rows)
		u->tree_top = u->tree_cur - rows + 1;
	if (u->tree_top < 0)
		u->tree_top = 0;
	for (int r = 0; r < rows; r++) {
		size_t i = (size_t)(u->tree_top + r);
		if (i >= t->nvis)
			break;
		struct ui_node *n = t->vis[i];
		int y = 1 + r, x = 1;
		int cur = (int)i == u->tree_cur && u->focus == P_TREE;
		enum ui_elem base = cur ? UE_SELECTION : UE_NORMAL;
		if (cur)
			ui_fill(w, y, 1, inner, UE_SELECTION);
		int indent = t->depth[i] * 2;
		if (indent > inner / 3)
			indent = inner / 3;
		x += indent;
		const char *gl = n->type == UI_N_DIR
		                     ? ui_glyph(n->expanded ? G_OPEN : G_CLOSED)
		                     : " ";
		x += ui_draw_text(w, y, x, 2, gl, cur ? UE_SELECTION : UE_DIM);
		/* the right side: size and mark */
		char right[48] = "";
		if (n->type == UI_N_FILE)
			ui_fmt_size(right, sizeof right, n->size);
		const char *mark = n->mark == UI_MARK_NEW   ? " new"
		                   : n->mark == UI_MARK_MOD ? " mod"
		                                            : "";
		int rw = (int)strlen(right) + (int)strlen(mark);
		if (inner - x < rw + 6)
			rw = 0; /* no room: the name matters more */
		char *name = term_clean(n->name, strlen(n->name), 0);
		struct buf b;
		buf_init(&b, 0);
		buf_puts(&b, name);
		if (n->type == UI_N_DIR)
			buf_puts(&b, "/");
		else if (n->type == UI_N_LINK)
			buf_puts(&b, "@");
		enum ui_elem ne = n->type == UI_N_DIR    ? UE_TREE_DIR
		                  : n->type == UI_N_LINK ? UE_TREE_LINK
		                                         : UE_TREE_FILE;
		int nw = inner - x - rw - 1;
		char *fit = ui_st_fit(b.data, b.len, nw);
		ui_draw_st(w, y, x + 1, nw, fit, strlen(fit),
		           cur ? UE_SELECTION : ne);
		free(fit);
		buf_free(&b);
		free(name);
		if (rw) {
			int rx = 1 + inner - rw;
			rx += ui_draw_text(w, y, rx, rw, right,
			                   cur ? base : UE_TREE_SIZE);
			ui_draw_text(w, y, rx, rw, mark,
			             n->mark == UI_MARK_NEW ? UE_TREE_NEW
			                                    : UE_TREE_MODIFIED);
		}
	}
	if (t->truncated)
		ui_draw_text(w, ch, 2, inner - 2, "(listing cut at its limit)",
		             UE_WARNING);
}

/* ---- input ------------------------------------------------------------ */

void ui_draw_input(struct ui *u)
{
	if (u->replay) { /* the replay's keys instead of a message box */
		ui_replay_draw_hint(u);
		return;
	}
	struct ui_geom *g = &u->g[P_INPUT];
	WINDOW *w = g->win;
	int inner = g->w - 4, rows = g->h - 2;
	ui_background(w);
	werase(w);
	const char *hint;
	enum ui_phase ph = u->m.phase;
	if (u->view)
		hint = "read-only (assay eval): Esc back to the table";
	else if (ph == UI_ENDED)
		hint = "run ended: Ctrl-Q quits";
	else if (ph == UI_IDLE)
		hint = "Enter sends, Alt-Enter new line, ? or F1 help";
	else
		hint = "agent busy: Ctrl-C stops it";
	ui_draw_box(w, NULL, u->focus == P_INPUT);
	int hw = (int)strlen(hint);
	if (g->w > hw + 8)
		ui_draw_text(w, 0, g->w - hw - 3, hw, hint, UE_DIM);
	ui_draw_text(w, 1, 1, 2, "> ", ph == UI_IDLE ? UE_PROMPT : UE_DIM);
	struct ui_input_layout lo;
	ui_input_layout(&u->in, inner, &lo);
	int top = 0;
	if (lo.cur_row >= rows)
		top = lo.cur_row - rows + 1;
	const char *t = buf_str(&u->in.text);
	for (int r = 0; r < rows && top + r < lo.n; r++) {
		size_t a = lo.start[top + r], z = lo.end[top + r];
		/* the text is clean already (ui_input_insert) */
		ui_draw_st(w, 1 + r, 3, inner, t + a, z - a, UE_INPUT);
	}
	if (u->in.overflow)
		ui_draw_text(w, g->h - 1, 2, inner, " message too long ",
		             UE_WARNING);
	wmove(w, 1 + lo.cur_row - top, 3 + lo.cur_col);
	ui_input_layout_free(&lo);
}

/* ---- status bar -------------------------------------------------------- */

void ui_draw_status(struct ui *u)
{
	WINDOW *w = u->status;
	struct ui_model *m = &u->m;
	ui_background(w);
	werase(w);
	ui_fill(w, 0, 0, u->cols, UE_STATUS);
	struct buf b;
	buf_init(&b, 0);
	char in[16], out[16], el[48];
	ui_fmt_count(in, sizeof in, m->in_tokens);
	ui_fmt_count(out, sizeof out, m->out_tokens);
	int64_t now = m->phase == UI_ENDED ? m->end_ms : ui_model_now(m);
	snprintf(el, sizeof el, "%02lld:%02lld", (long long)(now / 60000),
	         (long long)(now / 1000 % 60));
	const char *phase = "";
	switch (m->phase) {
	case UI_STARTING:
		phase = "starting";
		break;
	case UI_REQUESTING:
		phase = "thinking";
		break;
	case UI_EXECUTING:
		phase = "running tools";
		break;
	case UI_IDLE:
		phase = "waiting for you";
		break;
	case UI_ENDED:
		phase = m->end_status ? m->end_status : "ended";
		break;
	}
	/* slow work is named unless a person is asked something */
	if (m->phase != UI_ENDED && m->progress && !ui_approval_shown(u) &&
	    !ui_step_shown(u))
		phase = m->progress; /* sanitized below with the whole bar */
	else if (m->phase != UI_ENDED && u->s &&
	         session_state(u->s) == SESSION_ENDING)
		phase = "ending: saving the workspace";
	else if (m->phase != UI_ENDED && ui_approval_shown(u))
		phase = "waiting for approval";
	else if (m->phase != UI_ENDED && ui_step_shown(u))
		phase = "paused at a breakpoint";
	else if (m->phase == UI_REQUESTING && m->compacting)
		phase = "compacting";
	/* the phase first: a notice may cover the figures, not it */
	ui_replay_status(u, &b);
	if (m->phase == UI_ENDED)
		buf_printf(&b, " run %s (exit %d) |", phase, m->exit_code);
	else
		buf_printf(&b, " %s |", phase);
	if (ui_step_on(u))
		buf_puts(&b, " STEP |");
	buf_printf(&b, " %s/%s%s  in %s out %s",
	           m->provider ? m->provider : "-",
	           m->model_name ? m->model_name : "-",
	           m->no_key ? " (no API key)" : "", in, out);
	if (m->ctx_window > 0 && m->ctx_tokens > 0)
		buf_printf(&b, "  ctx %.0f%%",
		           100 * m->ctx_tokens / m->ctx_window);
	/* money: the run's and the last turn's; unknown without a price,
	 * never shown as $0 */
	if (m->cost > 0 || m->last_cost >= 0) {
		buf_printf(&b, "  $%.4f%s", m->cost, m->unpriced ? "+?" : "");
		if (m->last_cost >= 0)
			buf_printf(&b, " (last $%.4f)", m->last_cost);
	} else if (m->unpriced) {
		buf_puts(&b, "  $?");
	}
	buf_printf(&b, "  turn %d/%d  %s  %s:%s  ask:%s  %s", m->turn,
	           m->max_turns, el, m->backend ? m->backend : "-",
	           m->sandbox_running ? "up" : "stopped", m->ask ? m->ask : "-",
	           ui_step_on(u) ? "step:on" : "step:off");
	const char *right = " ? help ";
	enum ui_elem rel = UE_STATUS;
	if (u->notice && now_ms() < u->notice_until) {
		right = u->notice; /* a notice wins over the figures */
		rel = UE_WARNING;
	}
	int rw = ui_st_width(right, strlen(right)) + 1;
	if (rw > u->cols)
		rw = u->cols;
	char *clean = term_clean(b.data, b.len, 0);
	char *fit = ui_st_fit(clean, strlen(clean), u->cols - rw);
	ui_draw_text(w, 0, 0, u->cols - rw, fit, UE_STATUS);
	ui_draw_text(w, 0, u->cols - rw, rw, right, rel);
	free(fit);
	free(clean);
	buf_free(&b);
}

/* ---- overlays --------------------------------------------------------- */

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

int ui_help_lines(void)
{
	return (int)(sizeof help_lines / sizeof *help_lines);
}

void ui_draw_help(struct ui *u, WINDOW *w)
{
	int h, wd;
	getmaxyx(w, h, wd);
	ui_background(w);
	werase(w);
	wbkgdset(w, ' ');
	for (int y = 0; y < h; y++)
		ui_fill(w, y, 0, wd, UE_OVERLAY);
	ui_draw_box(w, "Keys", 1);
	int n = ui_help_lines(), room = h - 3 > 0 ? h - 3 : 0;
	if (u->help_top > n - room)
		u->help_top = n - room > 0 ? n - room : 0;
	for (int y = 0; y < room && u->help_top + y < n; y++) {
		const char *const *l = help_lines[u->help_top + y];
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
		         u->help_top + 1, u->help_top + room, n);
		ui_draw_text(w, h - 2, 2, wd - 4, more, UE_DIM);
	}
}

void ui_draw_confirm(struct ui *u, WINDOW *w)
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
