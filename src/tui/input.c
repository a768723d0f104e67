/* input.c: the message box: multi-line UTF-8 editing with a cursor,
 * kill commands, a history browsed with Up/Down from the first or last
 * line, and the layout of the text in a box of some width. No curses
 * here, so it is tested on its own. */
#include "tui/history.h"
#include "tui/tui.h"

#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

void ui_input_init(struct ui_input *in)
{
	memset(in, 0, sizeof *in);
	buf_init(&in->text, UI_INPUT_MAX);
}

void ui_input_free(struct ui_input *in)
{
	buf_free(&in->text);
	for (size_t i = 0; i < in->nhist; i++)
		free(in->hist[i]);
	free(in->hist);
	free(in->draft);
	memset(in, 0, sizeof *in);
}

static const char *txt(const struct ui_input *in)
{
	return buf_str(&in->text);
}

int ui_input_insert(struct ui_input *in, const char *s, size_t n)
{
	struct buf add;
	buf_init(&add, 0);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = ui_u8_decode(s + i, n - i, &cp);
		if (cp == '\r') {
			if (!(i + 1 < n && s[i + 1] == '\n'))
				buf_append(&add, "\n", 1);
		} else if (cp == '\n') {
			buf_append(&add, "\n", 1);
		} else if (cp == '\t') {
			buf_append(&add, "    ", 4);
		} else if (cp >= 0x20 && cp != 0x7f &&
		           !(cp >= 0x80 && cp < 0xA0)) {
			char u[4];
			buf_append(&add, u, ui_u8_encode(cp, u));
		}
		i += len;
	}
	int rc = 0;
	if (in->text.len + add.len > UI_INPUT_MAX) {
		in->overflow = 1;
		rc = -1;
	} else if (add.len) {
		/* insert at the cursor: append, then rotate into place */
		size_t tail = in->text.len - in->cur;
		char *rest = xstrndup(
		    in->text.data ? in->text.data + in->cur : "", tail);
		in->text.len = in->cur;
		if (in->text.data)
			in->text.data[in->cur] = '\0';
		buf_append(&in->text, add.data, add.len);
		buf_append(&in->text, rest, tail);
		free(rest);
		in->cur += add.len;
	}
	buf_free(&add);
	return rc;
}

/* The start of the character before pos. */
static size_t prev_char(const struct ui_input *in, size_t pos)
{
	const char *t = txt(in);
	if (pos == 0)
		return 0;
	pos--;
	while (pos > 0 && ((unsigned char)t[pos] & 0xC0) == 0x80)
		pos--;
	return pos;
}

/* The end of the character at pos. */
static size_t next_char(const struct ui_input *in, size_t pos)
{
	const char *t = txt(in);
	if (pos >= in->text.len)
		return in->text.len;
	uint32_t cp;
	return pos + ui_u8_decode(t + pos, in->text.len - pos, &cp);
}

/* Delete bytes a..z, keeping the cursor on the same text. */
static void erase(struct ui_input *in, size_t a, size_t z)
{
	if (z <= a)
		return;
	memmove(in->text.data + a, in->text.data + z, in->text.len - z + 1);
	in->text.len -= z - a;
	if (in->cur > z)
		in->cur -= z - a;
	else if (in->cur > a)
		in->cur = a;
	in->overflow = 0;
}

void ui_input_backspace(struct ui_input *in)
{
	erase(in, prev_char(in, in->cur), in->cur);
}

void ui_input_delete(struct ui_input *in)
{
	erase(in, in->cur, next_char(in, in->cur));
}

void ui_input_left(struct ui_input *in)
{
	in->cur = prev_char(in, in->cur);
}

void ui_input_right(struct ui_input *in)
{
	in->cur = next_char(in, in->cur);
}

/* The start of the line holding pos. */
static size_t line_start(const struct ui_input *in, size_t pos)
{
	const char *t = txt(in);
	while (pos > 0 && t[pos - 1] != '\n')
		pos--;
	return pos;
}

/* The end of the line holding pos (before its \n). */
static size_t line_end(const struct ui_input *in, size_t pos)
{
	const char *t = txt(in);
	while (pos < in->text.len && t[pos] != '\n')
		pos++;
	return pos;
}

void ui_input_home(struct ui_input *in)
{
	in->cur = line_start(in, in->cur);
}

void ui_input_end(struct ui_input *in)
{
	in->cur = line_end(in, in->cur);
}

void ui_input_kill_start(struct ui_input *in)
{
	erase(in, line_start(in, in->cur), in->cur);
}

void ui_input_kill_end(struct ui_input *in)
{
	size_t z = line_end(in, in->cur);
	if (z == in->cur && z < in->text.len)
		z++; /* at the end of a line: join the next */
	erase(in, in->cur, z);
}

void ui_input_kill_word(struct ui_input *in)
{
	const char *t = txt(in);
	size_t a = in->cur;
	while (a > 0 && (t[a - 1] == ' ' || t[a - 1] == '\n'))
		a--;
	while (a > 0 && t[a - 1] != ' ' && t[a - 1] != '\n')
		a--;
	erase(in, a, in->cur);
}

/* Characters (not bytes) from a to b. */
static size_t chars_between(const struct ui_input *in, size_t a, size_t b)
{
	size_t n = 0;
	while (a < b) {
		a = next_char(in, a);
		n++;
	}
	return n;
}

/* n characters on from a, not past limit. */
static size_t advance_chars(const struct ui_input *in, size_t a, size_t n,
                            size_t limit)
{
	while (n-- > 0 && a < limit)
		a = next_char(in, a);
	return a;
}

/* The box holds s, the cursor at its end. */
static void set_text(struct ui_input *in, const char *s)
{
	buf_reset(&in->text);
	buf_puts(&in->text, s);
	in->cur = in->text.len;
}

/* One message back (dir < 0) or on in the history; the draft is kept. */
static void history_go(struct ui_input *in, int dir)
{
	if (!in->nhist)
		return;
	if (dir < 0 && in->hpos == 0)
		return;
	if (dir > 0 && in->hpos >= in->nhist)
		return;
	if (in->hpos == in->nhist) {
		free(in->draft);
		in->draft = xstrdup(txt(in));
	}
	in->hpos = dir < 0 ? in->hpos - 1 : in->hpos + 1;
	set_text(in, in->hpos == in->nhist ? (in->draft ? in->draft : "")
	                                   : in->hist[in->hpos]);
}

void ui_input_up(struct ui_input *in)
{
	size_t ls = line_start(in, in->cur);
	if (ls == 0) {
		history_go(in, -1);
		return;
	}
	size_t col = chars_between(in, ls, in->cur);
	size_t pls = line_start(in, ls - 1);
	in->cur = advance_chars(in, pls, col, ls - 1);
}

void ui_input_down(struct ui_input *in)
{
	size_t le = line_end(in, in->cur);
	if (le >= in->text.len) {
		history_go(in, +1);
		return;
	}
	size_t col = chars_between(in, line_start(in, in->cur), in->cur);
	in->cur = advance_chars(in, le + 1, col, line_end(in, le + 1));
}

char *ui_input_take(struct ui_input *in)
{
	const char *t = txt(in);
	size_t a = 0, z = in->text.len;
	while (a < z && (t[a] == ' ' || t[a] == '\n'))
		a++;
	while (z > a && (t[z - 1] == ' ' || t[z - 1] == '\n'))
		z--;
	if (a == z)
		return NULL;
	char *msg = xstrndup(t + a, z - a);
	ui_input_remember(in, msg);
	buf_reset(&in->text);
	in->cur = 0;
	in->overflow = 0;
	return msg;
}

void ui_input_remember(struct ui_input *in, const char *msg)
{
	if (!in->nhist || strcmp(in->hist[in->nhist - 1], msg)) {
		if (in->nhist == UI_HISTORY_MAX) {
			free(in->hist[0]);
			memmove(in->hist, in->hist + 1,
			        (in->nhist - 1) * sizeof *in->hist);
			in->nhist--;
		}
		in->hist =
		    xrealloc(in->hist, (in->nhist + 1) * sizeof *in->hist);
		in->hist[in->nhist++] = xstrdup(msg);
	}
	in->hpos = in->nhist;
	free(in->draft);
	in->draft = NULL;
}

int ui_input_hist_find(const struct ui_input *in, const char *q, size_t from,
                       size_t *at, size_t *off)
{
	if (from >= in->nhist)
		return 0;
	for (size_t i = from + 1; i-- > 0;) {
		const char *hit = strstr(in->hist[i], q);
		if (hit) {
			*at = i;
			*off = (size_t)(hit - in->hist[i]);
			return 1;
		}
	}
	return 0;
}

void ui_input_set(struct ui_input *in, const char *s, size_t cur)
{
	set_text(in, s);
	in->cur = cur < in->text.len ? cur : in->text.len;
	in->overflow = 0;
}

void ui_input_hist_resume(struct ui_input *in, size_t at, char *draft)
{
	in->hpos = at;
	free(in->draft);
	in->draft = draft;
}

void ui_input_restore(struct ui_input *in, const char *s, size_t cur)
{
	ui_input_set(in, s, cur);
	in->hpos = in->nhist;
}

/* One more row (bytes a..z) in a layout. */
static void lo_push(struct ui_input_layout *lo, size_t a, size_t z, int *cap)
{
	if (lo->n == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		lo->start = xrealloc(lo->start, (size_t)*cap * sizeof(size_t));
		lo->end = xrealloc(lo->end, (size_t)*cap * sizeof(size_t));
	}
	lo->start[lo->n] = a;
	lo->end[lo->n] = z;
	lo->n++;
}

void ui_input_layout(const struct ui_input *in, int width,
                     struct ui_input_layout *lo)
{
	const char *t = txt(in);
	int cap = 0;
	memset(lo, 0, sizeof *lo);
	if (width < 2)
		width = 2;
	size_t a = 0, i = 0;
	int col = 0;
	lo->cur_row = -1;
	while (1) {
		uint32_t cp = 0;
		size_t len = 0;
		int w = 0;
		if (i < in->text.len && t[i] != '\n') {
			len = ui_u8_decode(t + i, in->text.len - i, &cp);
			w = ui_cp_width(cp);
			if (w < 1)
				w = w < 0 ? 1 : 0;
			if (col + w > width && col > 0) {
				lo_push(lo, a, i, &cap);
				a = i;
				col = 0;
			}
		}
		if (i == in->cur && lo->cur_row < 0) {
			if (col >= width) { /* cursor past a full row */
				lo_push(lo, a, i, &cap);
				a = i;
				col = 0;
			}
			lo->cur_row = lo->n;
			lo->cur_col = col;
		}
		if (i >= in->text.len) {
			lo_push(lo, a, i, &cap);
			break;
		}
		if (t[i] == '\n') {
			lo_push(lo, a, i, &cap);
			i++;
			a = i;
			col = 0;
			continue;
		}
		col += w;
		i += len;
	}
}

int ui_input_rows(const struct ui_input *in, int width, int cap)
{
	const char *t = txt(in);
	int rows = 1, col = 0;
	if (width < 2)
		width = 2;
	for (size_t i = 0; i < in->text.len && rows <= cap;) {
		uint32_t cp;
		if (t[i] == '\n') {
			rows++;
			col = 0;
			i++;
			continue;
		}
		i += ui_u8_decode(t + i, in->text.len - i, &cp);
		int w = ui_cp_width(cp);
		w = w < 0 ? 1 : w;
		if (col + w > width) {
			rows++;
			col = 0;
		}
		col += w;
	}
	/* the cursor after a full last row opens one more */
	if (col >= width && in->cur == in->text.len)
		rows++;
	return rows < cap ? rows : cap;
}

void ui_input_layout_free(struct ui_input_layout *lo)
{
	free(lo->start);
	free(lo->end);
	memset(lo, 0, sizeof *lo);
}
