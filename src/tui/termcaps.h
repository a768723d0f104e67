/* termcaps.h: what the terminal can show (sixel, the kitty graphics
 * protocol, or neither), how large its cells are in pixels and whether
 * its background is light, asked of the terminal itself before curses
 * takes it over. The reply parser is pure (bytes in, fields out) so
 * tests feed it real terminals' replies. */
#ifndef ASSAY_TUI_TERMCAPS_H
#define ASSAY_TUI_TERMCAPS_H

#include <stddef.h>
#include <wchar.h>

/* struct ui_termcaps, enum ui_gfx and the query the command line makes
 * too (assay doctor) are public: assay/workbench.h */
#include "assay/workbench.h"

/* The reply parser's state between reads: a sequence may arrive split
 * at any byte. Zero it (or ui_termcaps_parser_init) before the first
 * feed. */
struct ui_termcaps_parser {
	int state;
	char seq[128]; /* the sequence being collected (longer: skipped) */
	size_t len;
	int overflow;
};

void ui_termcaps_init(struct ui_termcaps *tc);
void ui_termcaps_parser_init(struct ui_termcaps_parser *p);

/* Feed reply bytes. Recognised replies (DA1, XTSMGRAPHICS, CSI 6;h;w t,
 * kitty APC, OSC 11) fill tc; other replies (CSI with a private marker ? > =,
 * DCS/OSC/APC/PM/SOS strings) are skipped; everything else (keys the
 * person typed meanwhile, arrow-key sequences included) is appended to
 * tc->typeahead (at most UI_TERMCAPS_TYPEAHEAD bytes; the rest dropped).
 * 7-bit controls only (ESC [, ESC _, ESC \). */
void ui_termcaps_feed(struct ui_termcaps *tc, struct ui_termcaps_parser *p,
                      const char *buf, size_t n);
/* End of input: a sequence left unfinished that could be a key (a lone
 * ESC, ESC x) goes to typeahead; an unfinished reply is dropped. */
void ui_termcaps_finish(struct ui_termcaps *tc, struct ui_termcaps_parser *p);

/* The hints from the environment: truecolor, in_tmux. */
void ui_termcaps_env(struct ui_termcaps *tc);

/* Choose tc->mode for want ("auto", "sixel", "kitty", "blocks", "off")
 * from what was parsed, and write tc->why. is_tty: stdout is a
 * terminal. auto: kitty if its query answered OK, else sixel if DA1
 * says 4, else blocks; off when not a terminal. A forced mode is
 * honoured; why says when the terminal did not confirm it. Returns -1
 * for an unknown want (mode off). */
int ui_termcaps_choose(struct ui_termcaps *tc, const char *want, int is_tty);

/* ---- the background, and the theme --theme auto takes ----------------
 * A background is light when black text on it has more contrast than
 * white text (WCAG relative luminance above 0.179). */

/* The body of an OSC 11 reply, after ESC ] and before BEL or ST:
 * "11;rgb:RRRR/GGGG/BBBB", 1 to 4 hex digits a channel ("rgba:" with a
 * fourth, ignored), into rgb as 0..255. -1 if it is not one. */
int ui_termcaps_osc11(const char *s, size_t n, int rgb[3]);
/* WCAG 2 relative luminance of an sRGB colour: 0 black .. 1 white. */
double ui_luminance(int r, int g, int b);
/* $COLORFGBG ("15;0", "0;default;15": the background last): 1 light
 * (7, 9-15), 0 dark (0-6, 8), -1 when it does not say. */
int ui_termcaps_colorfgbg(const char *v);
/* Decide tc->bg_light and bg_from: OSC 11's colour when the terminal
 * answered, else $COLORFGBG, else dark. ui_termcaps_detect calls it. */
void ui_termcaps_background(struct ui_termcaps *tc);
/* 1 when the theme setting is "auto": a light or dark theme, as the
 * terminal's background is. */
int ui_termcaps_theme_auto(const char *want);
/* The theme to load for a theme setting: want itself, or for "auto"
 * "light" or "default" as the last ui_termcaps_detect found the
 * background (before any: $COLORFGBG, else "default"). */
const char *ui_termcaps_theme(const char *want);
/* For "auto", once the terminal was asked: t becomes the theme
 * ui_termcaps_theme picks now, if that is another one (in place: what
 * points at t stays good). Other settings: nothing. -1 if the pick
 * cannot load (t stays as it was). */
struct ui_theme;
int ui_termcaps_theme_reload(struct ui_theme *t, const char *want);

/* Replies that arrive after the deadline (see termcaps.c): a filter
 * between get_wch and the key handler. Pure: the keys come from get
 * (get_wch's contract: OK, KEY_CODE_YES or ERR). */
#define UI_REPLY_LOOKAHEAD 16
struct ui_reply_filter {
	int armed; /* a reply may still come */
	int state; /* inside one: its rest is swallowed */
	int len;   /* keys of the current reply */
	struct ui_key {
		int r;
		wint_t ch;
	} q[UI_REPLY_LOOKAHEAD]; /* read ahead, not a reply: handed out */
	int nq;
	unsigned long swallowed; /* keys dropped, in all */
};
void ui_reply_filter_init(struct ui_reply_filter *f, int armed);
int ui_reply_filter_get(struct ui_reply_filter *f, int (*get)(void *, wint_t *),
                        void *arg, wint_t *ch);
/* get_wch for the TUI's input, through the filter the last
 * ui_termcaps_detect armed (or not) (reply_filter.c). */
int ui_termcaps_get_wch(wint_t *ch);
/* What of a reply the deadline cut (its rest is swallowed first). */
enum ui_late_rest {
	UI_LATE_NONE,
	UI_LATE_CSI,     /* a CSI with a private marker */
	UI_LATE_STR,     /* an APC or OSC string */
	UI_LATE_STR_ESC, /* ... right after its closing ESC */
};
/* Arm ui_termcaps_get_wch's filter: armed while DA1 has not come;
 * rest: what the deadline cut. */
void ui_late_arm(int armed, enum ui_late_rest rest);

/* Re-read the cell size after a resize (TIOCGWINSZ only, no query:
 * curses owns the input). Keeps the previous size when the ioctl gives
 * no pixels. */
void ui_termcaps_cells(int fd, struct ui_termcaps *tc);

#endif
