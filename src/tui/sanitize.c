/* sanitize.c: the workbench's side of the one filter between untrusted
 * bytes (tool output, file names, model text) and the terminal. Strings
 * are made safe by term_clean (src/core/termtext.c); ui_term reads a
 * stream as a terminal would, as far as that is safe, with the same
 * rules for each character: text, SGR colours, \r and \b inside the
 * line, tabs and erase-in-line. Every other escape sequence (cursor
 * moves, OSC titles and clipboard, DCS, private modes) is dropped and
 * every other control byte is shown as ^X, so nothing can move the
 * cursor, change modes or talk to the terminal. */
#include "tui/tui.h"

#include "assay/termtext.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the stream interpreter ------------------------------------------ */

enum {
	T_GROUND,
	T_ESC,
	T_ESC_INTER, /* ESC + intermediates, waiting for the final */
	T_CSI,
	T_STRING,     /* OSC, DCS, SOS, PM, APC: dropped up to ST/BEL */
	T_STRING_ESC, /* ESC inside a string: maybe ST */
};

static const struct ui_style plain_style = {UI_COLOR_DEFAULT, UI_COLOR_DEFAULT,
                                            0};

void ui_term_init(struct ui_term *t,
                  void (*emit)(void *arg, const char *line, size_t n),
                  void *arg)
{
	memset(t, 0, sizeof *t);
	t->st = plain_style;
	t->emit = emit;
	t->arg = arg;
}

void ui_term_free(struct ui_term *t)
{
	free(t->cells);
	t->cells = NULL;
	t->ncells = t->cap = t->col = 0;
}

/* Whether two styles are the same. */
static int style_eq(const struct ui_style *a, const struct ui_style *b)
{
	return a->fg == b->fg && a->bg == b->bg && a->attrs == b->attrs;
}

/* The SGR parameters of colour c as foreground (38) or background
 * (48). */
static void color_sgr(struct buf *b, int base, int32_t c)
{
	if (c & UI_RGB_FLAG)
		buf_printf(b, ";%d;2;%d;%d;%d", base, (c >> 16) & 255,
		           (c >> 8) & 255, c & 255);
	else
		buf_printf(b, ";%d;5;%d", base, (int)c);
}

/* The canonical SGR of a style: always absolute (starts with 0). */
static void style_sgr(struct buf *b, const struct ui_style *st)
{
	static const struct {
		int attr, code;
	} map[] = {{UI_A_BOLD, 1},      {UI_A_DIM, 2},   {UI_A_ITALIC, 3},
	           {UI_A_UNDERLINE, 4}, {UI_A_BLINK, 5}, {UI_A_REVERSE, 7}};
	buf_puts(b, "\033[0");
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (st->attrs & map[i].attr)
			buf_printf(b, ";%d", map[i].code);
	if (st->fg != UI_COLOR_DEFAULT)
		color_sgr(b, 38, st->fg);
	if (st->bg != UI_COLOR_DEFAULT)
		color_sgr(b, 48, st->bg);
	buf_puts(b, "m");
}

/* The cells [0, n) as stext; trailing plain_style blanks dropped. */
static void cells_stext(const struct ui_cell *c, size_t n, struct buf *out)
{
	while (n > 0 && c[n - 1].cp == ' ' &&
	       style_eq(&c[n - 1].st, &plain_style))
		n--;
	struct ui_style cur = plain_style;
	for (size_t i = 0; i < n; i++) {
		if (!c[i].cp)
			continue; /* right half of a wide character */
		if (!style_eq(&c[i].st, &cur)) {
			style_sgr(out, &c[i].st);
			cur = c[i].st;
		}
		char u[4];
		buf_append(out, u, ui_u8_encode(c[i].cp, u));
	}
	if (!style_eq(&cur, &plain_style))
		buf_puts(out, "\033[0m");
}

void ui_term_peek(const struct ui_term *t, struct buf *out)
{
	cells_stext(t->cells, t->ncells, out);
}

int ui_term_open(const struct ui_term *t)
{
	return t->ncells > 0;
}

/* The open line is complete: emit it as stext and start a new one. */
static void commit(struct ui_term *t)
{
	struct buf b;
	buf_init(&b, 0);
	cells_stext(t->cells, t->ncells, &b);
	t->ncells = 0;
	t->col = 0;
	if (t->emit)
		t->emit(t->arg, buf_str(&b), b.len);
	buf_free(&b);
}

void ui_term_flush(struct ui_term *t)
{
	if (t->ncells)
		commit(t);
}

/* Cell i of the open line (grown with blanks to reach it). */
static void set_cell(struct ui_term *t, size_t i, uint32_t cp,
                     const struct ui_style *st)
{
	if (i >= t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 128;
		while (cap <= i)
			cap *= 2;
		t->cells = xrealloc(t->cells, cap * sizeof *t->cells);
		t->cap = cap;
	}
	while (t->ncells <= i)
		t->cells[t->ncells++] = (struct ui_cell){' ', plain_style};
	t->cells[i] = (struct ui_cell){cp, *st};
}

/* Put a printable character of width w at the cursor, as a terminal
 * would: overwriting, and repairing a wide character it cuts in two. */
static void put_char(struct ui_term *t, uint32_t cp, int w,
                     const struct ui_style *st)
{
	if (t->col + (size_t)w > UI_TERM_MAX_COLS)
		commit(t);
	size_t c = t->col;
	if (c < t->ncells && t->cells[c].cp == 0 && c > 0)
		t->cells[c - 1].cp = ' ';
	if (w == 2 && c + 1 < t->ncells && t->cells[c + 1].cp != 0 &&
	    c + 2 < t->ncells && t->cells[c + 2].cp == 0)
		t->cells[c + 2].cp = ' ';
	if (w == 1 && c + 1 < t->ncells && t->cells[c + 1].cp == 0)
		t->cells[c + 1].cp = ' ';
	set_cell(t, c, cp, st);
	if (w == 2)
		set_cell(t, c + 1, 0, st);
	t->col += (size_t)w;
}

/* A control or unprintable character made visible, reversed. */
static void put_visible(struct ui_term *t, const char *text)
{
	struct ui_style st = t->st;
	st.attrs ^= UI_A_REVERSE;
	for (const char *p = text; *p; p++)
		put_char(t, (unsigned char)*p, 1, &st);
}

/* A character of the stream at the cursor, as term_clean would show
 * it: controls and invisible characters made visible. */
static void put_cp(struct ui_term *t, uint32_t cp)
{
	char tmp[16];
	enum term_form form = term_cp_form(cp);
	if (form == TERM_CARET) {
		snprintf(tmp, sizeof tmp, "^%c", cp == 0x7f ? '?' : cp + 64);
		put_visible(t, tmp);
		return;
	}
	if (form == TERM_CODE) {
		snprintf(tmp, sizeof tmp, "<U+%04X>", (unsigned)cp);
		put_visible(t, tmp);
		return;
	}
	int w = term_cp_width(cp);
	if (w == 0) {
		/* combining marks would join whatever cell they land
		 * on; drop them rather than risk a broken layout */
		return;
	}
	put_char(t, cp, w, &t->st);
}

/* The colour of an extended SGR 38/48 (5;N or 2;R;G;B) at p[*i]. */
static int32_t sgr_color(const int *p, int np, int *i)
{
	/* p[*i] is 38 or 48; returns -2 when malformed */
	if (*i + 1 >= np)
		return -2;
	if (p[*i + 1] == 5 && *i + 2 < np) {
		int v = p[*i + 2];
		*i += 2;
		return v >= 0 && v <= 255 ? v : -2;
	}
	if (p[*i + 1] == 2 && *i + 4 < np) {
		int r = p[*i + 2], g = p[*i + 3], b = p[*i + 4];
		*i += 4;
		if (r < 0 || r > 255 || g < 0 || g > 255 || b < 0 || b > 255)
			return -2;
		return UI_RGB(r, g, b);
	}
	return -2;
}

/* An SGR sequence's parameters applied to the current style; one
 * that is not plain digits and separators is ignored whole. */
static void apply_sgr(struct ui_term *t, const char *s, size_t n)
{
	int p[32], np = 0, v = -1;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == ';' || s[i] == ':') {
			if (np < 32)
				p[np++] = v < 0 ? 0 : v;
			v = -1;
		} else if (s[i] >= '0' && s[i] <= '9') {
			v = (v < 0 ? 0 : v) * 10 + (s[i] - '0');
			if (v > 100000)
				v = 100000;
		} else {
			return; /* not a plain_style SGR: ignore it whole */
		}
	}
	struct ui_style *st = &t->st;
	for (int i = 0; i < np; i++) {
		int c = p[i];
		int32_t col;
		if (c == 0)
			*st = plain_style;
		else if (c == 1)
			st->attrs |= UI_A_BOLD;
		else if (c == 2)
			st->attrs |= UI_A_DIM;
		else if (c == 3)
			st->attrs |= UI_A_ITALIC;
		else if (c == 4 || c == 21)
			st->attrs |= UI_A_UNDERLINE;
		else if (c == 5 || c == 6)
			st->attrs |= UI_A_BLINK;
		else if (c == 7)
			st->attrs |= UI_A_REVERSE;
		else if (c == 22)
			st->attrs &= ~(UI_A_BOLD | UI_A_DIM);
		else if (c == 23)
			st->attrs &= ~UI_A_ITALIC;
		else if (c == 24)
			st->attrs &= ~UI_A_UNDERLINE;
		else if (c == 25)
			st->attrs &= ~UI_A_BLINK;
		else if (c == 27)
			st->attrs &= ~UI_A_REVERSE;
		else if (c >= 30 && c <= 37)
			st->fg = c - 30;
		else if (c >= 90 && c <= 97)
			st->fg = c - 90 + 8;
		else if (c == 39)
			st->fg = UI_COLOR_DEFAULT;
		else if (c >= 40 && c <= 47)
			st->bg = c - 40;
		else if (c >= 100 && c <= 107)
			st->bg = c - 100 + 8;
		else if (c == 49)
			st->bg = UI_COLOR_DEFAULT;
		else if ((c == 38 || c == 48) &&
		         (col = sgr_color(p, np, &i)) != -2) {
			if (c == 38)
				st->fg = col;
			else
				st->bg = col;
		}
		/* 8 (hidden) and the rest are ignored: text stays visible */
	}
}

/* Erase in line, the only cursor-relative command kept: it cannot
 * leave the line, and progress bars use it ("\r\033[K"). */
static void erase_line(struct ui_term *t, int mode)
{
	if (mode == 0 && t->col < t->ncells) {
		t->ncells = t->col;
	} else if (mode == 1) {
		for (size_t i = 0; i <= t->col && i < t->ncells; i++)
			t->cells[i] = (struct ui_cell){' ', plain_style};
	} else if (mode == 2) {
		t->ncells = 0;
	}
}

/* A complete CSI sequence: SGR and erase-in-line are kept. */
static void csi_done(struct ui_term *t, char final)
{
	if (t->seq_bad)
		return;
	if (final == 'm') {
		apply_sgr(t, t->seq, t->seq_len);
	} else if (final == 'K') {
		int mode = t->seq_len ? atoi(t->seq) : 0;
		if (t->seq_len == 0 ||
		    (t->seq_len == 1 && t->seq[0] >= '0' && t->seq[0] <= '2'))
			erase_line(t, mode);
	}
	/* everything else (cursor movement, modes, queries) dropped */
}

/* A character outside any escape sequence. */
static void ground_cp(struct ui_term *t, uint32_t cp)
{
	switch (cp) {
	case '\n':
		commit(t);
		break;
	case '\r':
		t->col = 0;
		break;
	case '\b':
		if (t->col > 0)
			t->col--;
		break;
	case '\t':
		do {
			put_char(t, ' ', 1, &t->st);
		} while (t->col % 8);
		break;
	case 0x1b:
		t->state = T_ESC;
		break;
	default:
		put_cp(t, cp);
	}
}

/* A byte inside an escape sequence, string or CSI. */
static void feed_byte_seq(struct ui_term *t, unsigned char c)
{
	switch (t->state) {
	case T_ESC:
		if (c == '[') {
			t->state = T_CSI;
			t->seq_len = 0;
			t->seq_bad = 0;
		} else if (c == ']' || c == 'P' || c == 'X' || c == '^' ||
		           c == '_') {
			t->state = T_STRING;
		} else if (c >= 0x20 && c <= 0x2f) {
			t->state = T_ESC_INTER;
		} else {
			t->state = T_GROUND; /* ESC c, ESC 7, ...: dropped */
		}
		break;
	case T_ESC_INTER:
		if (c < 0x20 || c > 0x2f)
			t->state = T_GROUND;
		break;
	case T_CSI:
		if (c >= 0x40 && c <= 0x7e) {
			t->state = T_GROUND;
			csi_done(t, (char)c);
		} else if (c < 0x20 || c >= 0x7f) {
			t->state = T_GROUND; /* broken sequence */
		} else if (t->seq_len + 1 < sizeof t->seq) {
			if (!((c >= '0' && c <= '9') || c == ';' || c == ':'))
				t->seq_bad = 1;
			t->seq[t->seq_len++] = (char)c;
			t->seq[t->seq_len] = '\0';
		} else {
			t->seq_bad = 1;
		}
		break;
	case T_STRING:
		if (c == 0x07 || c == 0x18 || c == 0x1a)
			t->state = T_GROUND;
		else if (c == 0x1b)
			t->state = T_STRING_ESC;
		break;
	case T_STRING_ESC:
		t->state = c == '\\' ? T_GROUND : T_STRING;
		break;
	}
}

void ui_term_feed(struct ui_term *t, const char *data, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)data[i];
		if (t->state != T_GROUND) {
			feed_byte_seq(t, c);
			continue;
		}
		if (t->u8_len == 0 && c < 0x80) {
			ground_cp(t, c);
			continue;
		}
		/* gather a UTF-8 sequence that may be split across feeds */
		t->u8[t->u8_len++] = (char)c;
		uint32_t cp;
		size_t used = ui_u8_decode(t->u8, t->u8_len, &cp);
		size_t need = (unsigned char)t->u8[0] >= 0xF0   ? 4
		              : (unsigned char)t->u8[0] >= 0xE0 ? 3
		                                                : 2;
		if (cp == 0xFFFD && used == 1 && t->u8_len < need &&
		    (unsigned char)t->u8[0] >= 0xC2 &&
		    (unsigned char)t->u8[0] <= 0xF4 &&
		    (t->u8_len == 1 ||
		     ((unsigned char)t->u8[t->u8_len - 1] & 0xC0) == 0x80))
			continue; /* incomplete so far */
		char rest[4];
		size_t held = t->u8_len;
		memcpy(rest, t->u8, held);
		t->u8_len = 0;
		ground_cp(t, cp);
		if (used < held) /* bad sequence: replay the rest */
			ui_term_feed(t, rest + used, held - used);
	}
}
