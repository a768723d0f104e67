/* pane_tools.c: the Tools pane: every call on one line with its state
 * (the Conversation's tool call summaries too), and the selected call's
 * output, stdout and stderr told apart; only the rows that show. The
 * pane's selection, scrolling and keys: the one writer of struct
 * ui_tools (pane_tools.h). */
#include "tui/ui.h"
#include "assay/termtext.h"

#include "assay/util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAIL_BYTES (64 << 10)
#define TAIL_LINES 400

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
	/* a call that cost nothing (the scripted model) says nothing: the
	 * status bar has the run's $0.00 */
	if (cost > 0 && len + 12 < max)
		snprintf(out + len, max - len, " $%.4f", cost);
}

/* "#3 shell  head -5 input/x.csv" + the state at the right edge. */
char *ui_call_summary(struct ui *u, int i, int width, const char *lead)
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
	struct ui_tail *t = &u->tools.tail;
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
		return s->u->tools.tail.n;
	if (s->mode == 2)
		return (size_t)s->ntext;
	return (size_t)s->nopen + s->c->nline;
}

/* Line k of the output source, newest first. */
static const char *src_get(const struct outsrc *s, size_t k, int *err)
{
	if (s->mode == 1) {
		const struct ui_oline *l =
		    &s->u->tools.tail.line[s->u->tools.tail.n - 1 - k];
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
		const char *r = c->result     ? c->result
		                : c->progress ? c->progress
		                              : "";
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
	int skip = u->tools.out_scroll, fill = rows;
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
	if (skip > 0 && u->tools.out_scroll > 0) {
		/* scrolled past the top: clamp */
		u->tools.out_scroll -= skip;
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

/* Under the rule, what the model was sent after call c: "sent to the
 * model: 800×450, ~480 tokens" (or why not), each wrapped to the
 * width, in at most rows; the rows used. */
static int draw_sent(WINDOW *w, const struct ui_call *c, int y, int rows,
                     int width)
{
	int n = 0;
	for (int i = 0; i < c->nsent && n < rows; i++) {
		const struct ui_sent *s = &c->sent[i];
		char *raw = ui_sent_line(s, ui_glyph(G_TIMES), c->summary);
		char *line = term_clean(raw, strlen(raw), TERM_CLEAN_TABS);
		enum ui_elem e = s->error ? UE_WARNING : UE_TOOL_CALL;
		struct ui_rows wr = {0};
		ui_st_wrap(line, strlen(line), width - 3, 0, &wr);
		ui_draw_text(w, y + n, 1, 2, ui_glyph(G_ARROW), UE_DIM);
		for (int k = 0; k < wr.n && n < rows; k++, n++)
			ui_draw_st(w, y + n, 3, width - 3, wr.row[k],
			           strlen(wr.row[k]), e);
		ui_rows_free(&wr);
		free(line);
		free(raw);
	}
	if (c->sent_dropped && n < rows) {
		char *more = xasprintf("... %d more images", c->sent_dropped);
		ui_draw_text(w, y + n++, 3, width - 3, more, UE_DIM);
		free(more);
	}
	return n;
}

void ui_select_call(struct ui *u, int call, int user)
{
	if (call < 0 || call >= u->m.ncalls)
		return;
	if (user)
		u->tools.follow = call == u->m.ncalls - 1;
	if (u->tools.sel != call)
		u->tools.out_scroll = 0;
	u->tools.sel = call;
	ui_conv_select(u, u->m.calls[call]->item);
	ui_touch(u, UI_DIRTY_TOOLS | UI_DIRTY_CONV);
}

void ui_tools_key(struct ui *u, int key, int fn)
{
	int page =
	    u->tools.out_rows_shown > 2 ? u->tools.out_rows_shown - 1 : 1;
	int sel = u->tools.sel < 0 ? u->m.ncalls - 1 : u->tools.sel;
	if ((fn && key == KEY_DOWN) || (!fn && key == 'j'))
		ui_select_call(u, sel + 1, 1);
	else if ((fn && key == KEY_UP) || (!fn && key == 'k'))
		ui_select_call(u, sel - 1, 1);
	else if (!fn && key == 'g')
		ui_select_call(u, 0, 1);
	else if (!fn && key == 'G')
		ui_select_call(u, u->m.ncalls - 1, 1);
	else if (fn && key == KEY_PPAGE)
		u->tools.out_scroll += page;
	else if (fn && key == KEY_NPAGE)
		u->tools.out_scroll =
		    u->tools.out_scroll > page ? u->tools.out_scroll - page : 0;
	else if (fn && key == KEY_HOME)
		u->tools.out_scroll = 1 << 20;
	else if (fn && key == KEY_END)
		u->tools.out_scroll = 0;
	else if (!fn && (key == UI_KEY_ENTER || key == 'o'))
		ui_pager_open_call(u, sel);
	else if (!fn && key == 'd')
		ui_diff_open_call(u, sel);
	else if (!fn && key == 't')
		ui_table_open_call(u, sel);
	ui_touch(u, UI_DIRTY_TOOLS);
}

void ui_tools_wheel(struct ui *u, int rows)
{
	u->tools.out_scroll -= rows;
	if (u->tools.out_scroll < 0)
		u->tools.out_scroll = 0;
	ui_touch(u, UI_DIRTY_TOOLS);
}

void ui_tools_init(struct ui_tools *t)
{
	t->sel = -1;
	t->follow = 1;
	t->tail.call = -1;
}

void ui_tools_reset(struct ui *u)
{
	u->tools.sel = -1;
	ui_conv_select(u, -1);
	u->tools.out_scroll = 0;
	ui_tail_free(&u->tools.tail);
}

void ui_draw_tools(struct ui *u)
{
	struct ui_geom *g = &u->lay.g[P_TOOLS];
	WINDOW *w = g->win;
	int inner = g->w - 2, ch = g->h - 2;
	ui_background(w);
	werase(w);
	ui_pane_box(u, P_TOOLS);
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
	int sel = u->tools.sel < 0 ? u->m.ncalls - 1 : u->tools.sel;
	if (sel < u->tools.list_top)
		u->tools.list_top = sel;
	if (sel >= u->tools.list_top + lh)
		u->tools.list_top = sel - lh + 1;
	if (u->tools.list_top > u->m.ncalls - lh)
		u->tools.list_top = u->m.ncalls - lh;
	if (u->tools.list_top < 0)
		u->tools.list_top = 0;
	for (int r = 0; r < lh; r++) {
		int i = u->tools.list_top + r;
		if (i >= u->m.ncalls)
			break;
		char *line = ui_call_summary(u, i, inner - 1, "");
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
	int sent = draw_sent(w, c, oy, oh - 1, inner);
	oy += sent;
	oh -= sent;
	u->tools.out_rows_shown = oh;
	if (oh > 0)
		draw_output(u, w, oy, oh, inner, sel);
}
