/* panes.c: drawing the workbench: Conversation (messages with light
 * markdown, one-line tool call summaries) with its scrolling and keys
 * (the one writer of struct ui_conv, panes.h), the input box, the
 * status bar; the pane boxes and dialogs they share. Tools is
 * pane_tools.c, Workspace workspace.c, the help help.c. Only the rows
 * that show are rendered; long things are walked from the position
 * shown, never whole. */
#include "tui/ui.h"
#include "assay/termtext.h"
#include "tui/replay.h"

#include "assay/session.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

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
	WINDOW *w =
	    newwin(h, wd, (u->lay.rows - 1 - h) / 2, (u->lay.cols - wd) / 2);
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
void ui_pane_box(struct ui *u, int p)
{
	WINDOW *w = u->lay.g[p].win;
	ui_draw_box(w, pane_titles[p], u->lay.focus == p);
	if (u->lay.g[P_CONV].shown + u->lay.g[P_TOOLS].shown +
	        u->lay.g[P_TREE].shown >
	    1)
		return;
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, " Tab:");
	for (int i = 0; i < 3; i++)
		if (i != p)
			buf_printf(&b, " %s", pane_titles[i]);
	buf_puts(&b, " ");
	int tw = (int)b.len, x = u->lay.g[p].w - tw - 2;
	if (x > (int)strlen(pane_titles[p]) + 6)
		ui_draw_text(w, 0, x, tw, buf_str(&b), UE_DIM);
	buf_free(&b);
}

/* ---- conversation ----------------------------------------------------- */

int ui_conv_width(const struct ui *u)
{
	int w = u->lay.g[P_CONV].w - 4;
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
		ui_rows_push(&it->rows,
		             ui_call_summary(u, it->call, width, lead));
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
	u->conv.item = 0;
	u->conv.row = 0;
	for (int i = u->m.nitems - 1; i >= 0; i--) {
		struct ui_rows *r = ui_item_rows(u, i, width);
		if (r->n >= need) {
			u->conv.item = i;
			u->conv.row = r->n - need;
			return;
		}
		need -= r->n;
	}
}

void ui_conv_scroll(struct ui *u, int n)
{
	int width = ui_conv_width(u), ch = u->lay.g[P_CONV].h - 2;
	if (!u->m.nitems)
		return;
	if (u->conv.follow)
		conv_anchor_bottom(u, ch, width);
	if (n < 0) {
		u->conv.follow = 0;
		for (; n < 0; n++) {
			if (u->conv.row > 0) {
				u->conv.row--;
			} else if (u->conv.item > 0) {
				u->conv.item--;
				u->conv.row =
				    ui_item_rows(u, u->conv.item, width)->n - 1;
			} else {
				break;
			}
		}
	} else {
		for (; n > 0; n--) {
			if (rows_after(u, u->conv.item, u->conv.row, ch,
			               width) <= ch)
				break;
			struct ui_rows *r =
			    ui_item_rows(u, u->conv.item, width);
			if (++u->conv.row >= r->n) {
				u->conv.item++;
				u->conv.row = 0;
			}
		}
		if (rows_after(u, u->conv.item, u->conv.row, ch, width) <= ch)
			u->conv.follow = 1;
	}
	ui_touch(u, UI_DIRTY_CONV);
}

void ui_conv_home(struct ui *u)
{
	u->conv.follow = 0;
	u->conv.item = 0;
	u->conv.row = 0;
	ui_touch(u, UI_DIRTY_CONV);
}

int ui_conv_item_at(struct ui *u, int y)
{
	int width = ui_conv_width(u), ch = u->lay.g[P_CONV].h - 2;
	int row = 1;
	if (u->conv.follow)
		conv_anchor_bottom(u, ch, width);
	for (int i = u->conv.item; i < u->m.nitems && row <= ch; i++) {
		struct ui_rows *r = ui_item_rows(u, i, width);
		int n = r->n - (i == u->conv.item ? u->conv.row : 0);
		if (y >= row && y < row + n)
			return i;
		row += n;
	}
	return -1;
}

void ui_conv_init(struct ui_conv *c)
{
	c->follow = 1;
	c->sel = -1;
}

void ui_conv_follow(struct ui *u)
{
	u->conv.follow = 1;
}

void ui_conv_select(struct ui *u, int item)
{
	u->conv.sel = item;
}

/* ] and [ in the Conversation: the next or previous call's summary. */
static void conv_jump_call(struct ui *u, int dir)
{
	int i = u->conv.sel >= 0 ? u->conv.sel + dir
	                         : (dir > 0 ? 0 : u->m.nitems - 1);
	for (; i >= 0 && i < u->m.nitems; i += dir)
		if (u->m.items[i].kind == UI_ITEM_CALL) {
			ui_select_call(u, u->m.items[i].call, 1);
			/* bring it into view */
			u->conv.follow = 0;
			u->conv.item = i;
			u->conv.row = 0;
			ui_conv_scroll(u, -(u->lay.g[P_CONV].h - 2) / 2);
			return;
		}
}

void ui_conv_key(struct ui *u, int key, int fn)
{
	int page = u->lay.g[P_CONV].h - 3;
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
		u->conv.follow = 1;
		ui_touch(u, UI_DIRTY_CONV);
	} else if (!fn && (key == ']' || key == '['))
		conv_jump_call(u, key == ']' ? 1 : -1);
	else if (!fn && (key == UI_KEY_ENTER || key == 'o') &&
	         u->conv.sel >= 0 && u->conv.sel < u->m.nitems)
		ui_pager_open_call(u, u->m.items[u->conv.sel].call);
}

void ui_draw_conv(struct ui *u)
{
	struct ui_geom *g = &u->lay.g[P_CONV];
	WINDOW *w = g->win;
	int ch = g->h - 2, width = ui_conv_width(u);
	ui_background(w);
	werase(w);
	ui_pane_box(u, P_CONV);
	if (u->conv.item >= u->m.nitems)
		u->conv.follow = 1;
	if (u->conv.follow)
		conv_anchor_bottom(u, ch, width);
	int y = 1;
	for (int i = u->conv.item; i < u->m.nitems && y <= ch; i++) {
		struct ui_rows *r = ui_item_rows(u, i, width);
		int sel = i == u->conv.sel;
		for (int k = i == u->conv.item ? u->conv.row : 0;
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
	if (!u->conv.follow && g->w > 12) {
		ui_set_elem(w, UE_WARNING);
		mvwaddstr(w, g->h - 1, g->w - 10,
		          ui_ascii ? " more v " : " more \xe2\x86\x93 ");
	}
	u->conv.rows_shown = ch;
}

/* ---- input ------------------------------------------------------------ */

void ui_draw_input(struct ui *u)
{
	if (u->replay) { /* the replay's keys instead of a message box */
		ui_replay_draw_hint(u);
		return;
	}
	struct ui_geom *g = &u->lay.g[P_INPUT];
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
	ui_draw_box(w, NULL, u->lay.focus == P_INPUT);
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
	WINDOW *w = u->lay.status;
	struct ui_model *m = &u->m;
	ui_background(w);
	werase(w);
	ui_fill(w, 0, 0, u->lay.cols, UE_STATUS);
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
	    !ui_elicit_shown(u) && !ui_step_shown(u))
		phase = m->progress; /* sanitized below with the whole bar */
	else if (m->phase != UI_ENDED && u->s &&
	         session_state(u->s) == SESSION_ENDING)
		phase = "ending: saving the workspace";
	else if (m->phase != UI_ENDED && ui_approval_shown(u))
		phase = "waiting for approval";
	else if (m->phase != UI_ENDED && ui_elicit_shown(u))
		phase = "an MCP server asks you";
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
	 * never shown as $0; a run that has cost nothing (the scripted
	 * model) says so */
	if (m->cost <= 0 && m->last_cost == 0 && !m->unpriced) {
		buf_puts(&b, "  $0.00");
	} else if (m->cost > 0 || m->last_cost >= 0) {
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
	if (rw > u->lay.cols)
		rw = u->lay.cols;
	char *clean = term_clean(b.data, b.len, 0);
	char *fit = ui_st_fit(clean, strlen(clean), u->lay.cols - rw);
	ui_draw_text(w, 0, 0, u->lay.cols - rw, fit, UE_STATUS);
	ui_draw_text(w, 0, u->lay.cols - rw, rw, right, rel);
	free(fit);
	free(clean);
	buf_free(&b);
}
