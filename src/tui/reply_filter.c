/* reply_filter.c: the keys curses hands over while a terminal's reply
 * to termcaps.c's queries may still come (after its deadline): such a
 * reply is swallowed, not typed into the message box. */
#include "tui/termcaps.h"

#include <curses.h>
#include <string.h>

/* ---- replies that come after the deadline
 * Over a slow link the terminal answers after detection gave up, when
 * curses owns the input: curses knows no such key, so it hands the
 * reply over byte by byte (ESC, '[', '?', '6', '2'...) and the bytes
 * would be typed into the message box. ncurses' define_key cannot
 * match them (their parameters vary), so the keys go through a filter
 * (ui_termcaps_get_wch in place of get_wch) while such a reply may
 * still come: it swallows CSI with a private marker (DA1 ...c,
 * XTSMGRAPHICS ...S, any CSI ?...), CSI 4/6/8;h;w t, the kitty APC
 * (ESC _ G ... ESC \) and the background's OSC 11 (ESC ] 11 ; ... BEL
 * or ESC \: Alt-] stays a key). A key is never held back waiting: what
 * is not a reply as far as the bytes already in goes on as it came (a
 * reply cut right after its ESC by the link leaks). DA1 comes last, so
 * once it arrived the filter is off. */

enum { F_NONE, F_CSI, F_STR, F_STR_ESC };
#define F_MAX_REPLY 4096 /* a longer "reply" is not one: stop swallowing */

void ui_reply_filter_init(struct ui_reply_filter *f, int armed)
{
	memset(f, 0, sizeof *f);
	f->armed = armed;
}

/* A key held back while a reply may be starting. */
static void q_push(struct ui_reply_filter *f, int r, wint_t ch)
{
	if (f->nq < UI_REPLY_LOOKAHEAD) {
		f->q[f->nq].r = r;
		f->q[f->nq].ch = ch;
		f->nq++;
	}
}

/* Inside a reply: 1 when ch is part of it (swallowed), 0 when it is
 * a key after all (the reply broke off). */
static int swallow(struct ui_reply_filter *f, int r, wint_t ch)
{
	if (r != OK || ++f->len > F_MAX_REPLY) {
		f->state = F_NONE;
		return 0;
	}
	switch (f->state) {
	case F_CSI:
		if (ch >= 0x40 && ch <= 0x7e) {
			if (ch == 'c')
				f->armed = 0; /* DA1: the last reply */
			f->state = F_NONE;
		} else if (ch < 0x20 || ch > 0x3f) {
			f->state = F_NONE;
			return 0;
		}
		break;
	case F_STR:
		if (ch == 033)
			f->state = F_STR_ESC;
		else if (ch == '\a')
			f->state = F_NONE;
		break;
	case F_STR_ESC:
		f->state = ch == 033 ? F_STR_ESC : ch == '\\' ? F_NONE : F_STR;
		break;
	}
	f->swallowed++;
	return 1;
}

/* After an ESC: read on while the keys can still be a reply. Returns 1
 * when they are (the state is set, the keys swallowed), else 0 with the
 * keys read queued to go out after the ESC. */
static int after_esc(struct ui_reply_filter *f, int (*get)(void *, wint_t *),
                     void *arg)
{
	struct ui_key k[UI_REPLY_LOOKAHEAD];
	int n = 0, reply = 0, nparams = 0;
	while (n < UI_REPLY_LOOKAHEAD) {
		k[n].r = get(arg, &k[n].ch);
		if (k[n].r == ERR)
			break;
		wint_t c = k[n].ch;
		n++;
		if (k[n - 1].r != OK)
			break;
		if (n == 1) {
			if (c != '[' && c != '_' && c != ']')
				break;
			continue;
		}
		if (k[0].ch == ']') { /* ESC ] 11 ; ...: the background */
			if (c != (wint_t) "]11;"[n - 1])
				break;
			if (n == 4) {
				f->state = F_STR;
				reply = 1;
				break;
			}
			continue;
		}
		if (k[0].ch == '_') { /* ESC _ G: the kitty graphics reply */
			if (c == 'G') {
				f->state = F_STR;
				reply = 1;
			}
			break;
		}
		if (n == 2 && c == '?') { /* a private CSI: no key is one */
			f->state = F_CSI;
			reply = 1;
			break;
		}
		if ((c >= '0' && c <= '9') || c == ';') {
			nparams += c == ';';
			continue;
		}
		/* CSI 4|6|8 ; h ; w t: window and cell sizes */
		reply = c == 't' && nparams == 2 &&
		        (k[1].ch == '4' || k[1].ch == '6' || k[1].ch == '8') &&
		        k[2].ch == ';';
		break;
	}
	if (reply) {
		f->swallowed += (unsigned long)n + 1;
		f->len = n + 1;
		return 1;
	}
	for (int i = 0; i < n; i++)
		q_push(f, k[i].r, k[i].ch);
	return 0;
}

int ui_reply_filter_get(struct ui_reply_filter *f, int (*get)(void *, wint_t *),
                        void *arg, wint_t *ch)
{
	if (f->nq) {
		int r = f->q[0].r;
		*ch = f->q[0].ch;
		f->nq--;
		memmove(f->q, f->q + 1, (size_t)f->nq * sizeof *f->q);
		return r;
	}
	for (;;) {
		int r = get(arg, ch);
		if (r == ERR || (!f->armed && f->state == F_NONE))
			return r;
		if (f->state != F_NONE) {
			if (swallow(f, r, *ch))
				continue;
			return r; /* not part of it: a key */
		}
		if (r != OK || *ch != 033 || !after_esc(f, get, arg))
			return r;
	}
}

static struct ui_reply_filter late;

void ui_late_arm(int armed, enum ui_late_rest rest)
{
	ui_reply_filter_init(&late, armed);
	late.state = rest == UI_LATE_CSI       ? F_CSI
	             : rest == UI_LATE_STR     ? F_STR
	             : rest == UI_LATE_STR_ESC ? F_STR_ESC
	                                       : F_NONE;
}

/* The next key from curses, for the reply filter. */
static int curses_key(void *arg, wint_t *ch)
{
	(void)arg;
	return get_wch(ch);
}

int ui_termcaps_get_wch(wint_t *ch)
{
	return ui_reply_filter_get(&late, curses_key, NULL, ch);
}
