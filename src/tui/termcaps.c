/* termcaps.c: asks the terminal what it can show before curses takes it:
 * the kitty graphics query, XTSMGRAPHICS, CSI 16 t, its background colour
 * (OSC 11), then DA1 last (every terminal answers DA1, so once its reply
 * is in, whatever did not answer is unsupported: notcurses' trick). The
 * reply parser is a small state machine that tolerates replies split
 * anywhere and keys typed meanwhile; the choice of image mode, and of a
 * light or dark theme for --theme auto, are pure functions of what was
 * parsed. */
#include "tui/termcaps.h"
#include "assay/spawn.h"
#include "assay/termtext.h"
#include "tui/tui.h"

#include "assay/util.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define CELL_GUESS_W 10
#define CELL_GUESS_H 20
#define MAX_PARAMS 24

/* The kitty query transmits a 1x1 RGB image with a=q: a terminal that
 * speaks the protocol answers i=31;OK and stores nothing. OSC 11 ends
 * with BEL, as vim and neovim send it (xterm answers in kind). */
#define Q_KITTY "\033_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\033\\"
#define Q_XTSM "\033[?1;1;0S\033[?2;1;0S"
#define Q_CELL "\033[16t"
#define Q_BG "\033]11;?\a"
#define Q_DA1 "\033[c"

/* A background is light when black text on it has more contrast than
 * white text: WCAG relative luminance above sqrt(1.05 * 0.05) - 0.05. */
#define LIGHT_LUMINANCE 0.1791

/* The last detection's verdict on the background for --theme auto:
 * -1 none yet, 0 dark, 1 light. */
static int last_bg_light = -1;

enum { S_GROUND, S_ESC, S_CSI, S_SS3, S_STR, S_STR_ESC };

void ui_termcaps_init(struct ui_termcaps *tc)
{
	memset(tc, 0, sizeof *tc);
	tc->cell_w = CELL_GUESS_W;
	tc->cell_h = CELL_GUESS_H;
	tc->cell_from = "guess";
	tc->mode = UI_GFX_OFF;
}

void ui_termcaps_parser_init(struct ui_termcaps_parser *p)
{
	memset(p, 0, sizeof *p);
}

const char *ui_termcaps_mode_name(enum ui_gfx m)
{
	switch (m) {
	case UI_GFX_BLOCKS:
		return "blocks";
	case UI_GFX_SIXEL:
		return "sixel";
	case UI_GFX_KITTY:
		return "kitty";
	case UI_GFX_OFF:
		break;
	}
	return "off";
}

/* Keys typed while the terminal was asked, kept for curses. */
static void ta_add(struct ui_termcaps *tc, const char *s, size_t n)
{
	size_t room = sizeof tc->typeahead - tc->n_typeahead;
	if (n > room)
		n = room;
	memcpy(tc->typeahead + tc->n_typeahead, s, n);
	tc->n_typeahead += n;
}

/* One byte more of the sequence being read. */
static void seq_add(struct ui_termcaps_parser *p, char c)
{
	if (p->len < sizeof p->seq - 1)
		p->seq[p->len++] = c;
	else
		p->overflow = 1;
	p->seq[p->len] = '\0';
}

/* A new sequence, in state. */
static void seq_reset(struct ui_termcaps_parser *p, int state)
{
	p->len = 0;
	p->overflow = 0;
	p->seq[0] = '\0';
	p->state = state;
}

/* "63;1;2;4" -> numbers; an empty parameter is 0 ("62;c"). */
static int parse_params(const char *s, size_t n, int *v, int max)
{
	int count = 0;
	long cur = 0;
	int any = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == ';') {
			if (count < max)
				v[count++] = (int)cur;
			cur = 0;
			any = 1;
			continue;
		}
		if (s[i] < '0' || s[i] > '9')
			return -1; /* ':' sub-parameters: not a reply we parse
			            */
		if (cur < 10000000)
			cur = cur * 10 + (s[i] - '0');
	}
	return any ? count : 0;
}

/* The DA1 reply: the device class, and whether it lists sixel (4). */
static void on_da1(struct ui_termcaps *tc, const char *params, size_t n)
{
	int v[MAX_PARAMS];
	int c = parse_params(params, n, v, MAX_PARAMS);
	if (c <= 0)
		return;
	tc->da1_seen = 1;
	tc->da1_class = v[0];
	snprintf(tc->da1, sizeof tc->da1, "%.*s", (int)n, params);
	/* the first parameter is the class: "?4;6c" is a VT132 */
	tc->sixel = 0;
	for (int i = 1; i < c; i++)
		if (v[i] == 4)
			tc->sixel = 1;
}

/* An XTSMGRAPHICS reply: colour registers or the largest sixel. */
static void on_xtsmgraphics(struct ui_termcaps *tc, const char *params,
                            size_t n)
{
	int v[MAX_PARAMS];
	int c = parse_params(params, n, v, MAX_PARAMS);
	if (c < 2)
		return;
	tc->xtsm_answered = 1;
	if (v[1] != 0)
		return; /* 1 bad item, 2 bad action, 3 failure */
	if (v[0] == 1 && c >= 3 && v[2] > 0)
		tc->color_registers = v[2];
	else if (v[0] == 2 && c >= 4 && v[2] > 0 && v[3] > 0) {
		tc->sixel_max_w = v[2];
		tc->sixel_max_h = v[3];
	}
}

/* A window report (CSI 6/4 ; h ; w t): the cell or text area in pixels. */
static void on_window_report(struct ui_termcaps *tc, const char *params,
                             size_t n)
{
	int v[MAX_PARAMS];
	int c = parse_params(params, n, v, MAX_PARAMS);
	/* CSI 6 ; height ; width t: height first */
	if (c == 3 && v[0] == 6 && v[1] > 0 && v[2] > 0 && v[1] < 1000 &&
	    v[2] < 1000) {
		tc->cell_h = v[1];
		tc->cell_w = v[2];
		tc->cell_from = "CSI 16 t";
	}
}

/* ESC _ G i=31,... ; message ESC \ */
static void on_apc(struct ui_termcaps *tc, const char *s, size_t n)
{
	if (n < 2 || s[0] != '_' || s[1] != 'G')
		return;
	const char *semi = memchr(s, ';', n);
	if (!semi)
		return;
	/* our query's id only: another program's reply is not ours */
	size_t keys = (size_t)(semi - (s + 2));
	int ours = 0;
	for (size_t i = 0; i + 4 <= keys; i++) {
		const char *k = s + 2 + i;
		if ((i == 0 || k[-1] == ',') && !memcmp(k, "i=31", 4) &&
		    (i + 4 == keys || k[4] == ','))
			ours = 1;
	}
	if (!ours)
		return;
	size_t mlen = n - (size_t)(semi + 1 - s);
	tc->kitty_answered = 1;
	snprintf(tc->kitty_reply, sizeof tc->kitty_reply, "%.*s", (int)mlen,
	         semi + 1);
	tc->kitty = mlen == 2 && !memcmp(semi + 1, "OK", 2);
}

/* One channel of an X colour, 1 to 4 hex digits, scaled to 0..255;
 * -1 if it is not one. */
static int x_channel(const char *s, size_t n)
{
	if (n < 1 || n > 4)
		return -1;
	long v = 0, max = 0;
	for (size_t i = 0; i < n; i++) {
		int d = -1;
		if (s[i] >= '0' && s[i] <= '9')
			d = s[i] - '0';
		else if (s[i] >= 'a' && s[i] <= 'f')
			d = s[i] - 'a' + 10;
		else if (s[i] >= 'A' && s[i] <= 'F')
			d = s[i] - 'A' + 10;
		if (d < 0)
			return -1;
		v = v * 16 + d;
		max = max * 16 + 15;
	}
	return (int)((v * 255 + max / 2) / max);
}

int ui_termcaps_osc11(const char *s, size_t n, int rgb[3])
{
	/* rgba: rxvt-unicode with a transparent background */
	int rgba = n > 8 && !memcmp(s, "11;rgba:", 8);
	if (!rgba && !(n > 7 && !memcmp(s, "11;rgb:", 7)))
		return -1;
	size_t at = rgba ? 8 : 7;
	int want = rgba ? 4 : 3;
	int v[4];
	for (int c = 0; c < want; c++) {
		size_t end = at;
		while (end < n && s[end] != '/')
			end++;
		if ((end == n) != (c == want - 1))
			return -1; /* too few or too many channels */
		if ((v[c] = x_channel(s + at, end - at)) < 0)
			return -1;
		at = end + 1;
	}
	memcpy(rgb, v, 3 * sizeof *v);
	return 0;
}

/* sRGB 0..255 to linear light (WCAG 2's formula). */
static double srgb_linear(int c)
{
	double x = c / 255.0;
	return x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4);
}

double ui_luminance(int r, int g, int b)
{
	return 0.2126 * srgb_linear(r) + 0.7152 * srgb_linear(g) +
	       0.0722 * srgb_linear(b);
}

int ui_termcaps_colorfgbg(const char *v)
{
	const char *bg = v ? strrchr(v, ';') : NULL;
	if (!bg || !bg[1])
		return -1;
	char *end;
	long c = strtol(bg + 1, &end, 10);
	if (*end || end == bg + 1 || c < 0 || c > 15)
		return -1; /* "default", or not a colour of the 16 */
	/* rxvt's (and vim's) reading: 0-6 and 8 are dark, the others light */
	return !(c <= 6 || c == 8);
}

/* ESC ] 11 ; rgb:... : the background colour. */
static void on_osc(struct ui_termcaps *tc, const char *s, size_t n)
{
	int rgb[3];
	if (ui_termcaps_osc11(s, n, rgb) < 0)
		return;
	tc->bg_answered = 1;
	memcpy(tc->bg_rgb, rgb, sizeof rgb);
}

void ui_termcaps_background(struct ui_termcaps *tc)
{
	int light;
	if (tc->bg_answered) {
		light = ui_luminance(tc->bg_rgb[0], tc->bg_rgb[1],
		                     tc->bg_rgb[2]) > LIGHT_LUMINANCE;
		tc->bg_from = "OSC 11";
	} else if ((light = ui_termcaps_colorfgbg(getenv("COLORFGBG"))) >= 0) {
		tc->bg_from = "COLORFGBG";
	} else {
		light = 0;
		tc->bg_from = "nothing said: dark assumed";
	}
	tc->bg_light = light;
}

int ui_termcaps_theme_auto(const char *want)
{
	return want && !strcmp(want, "auto");
}

const char *ui_termcaps_theme(const char *want)
{
	if (!ui_termcaps_theme_auto(want))
		return want;
	int light = last_bg_light;
	if (light < 0) /* not asked yet */
		light = ui_termcaps_colorfgbg(getenv("COLORFGBG")) == 1;
	return light ? "light" : "default";
}

int ui_termcaps_theme_reload(struct ui_theme *t, const char *want)
{
	if (!ui_termcaps_theme_auto(want))
		return 0;
	const char *name = ui_termcaps_theme(want);
	if (t->name && !strcmp(t->name, name))
		return 0;
	struct ui_theme next;
	char *err = NULL;
	if (ui_theme_load(&next, name, &err) < 0) {
		ui_theme_free(&next); /* the one loaded before stays */
		free(err);
		return -1;
	}
	ui_theme_free(t);
	*t = next;
	return 0;
}

/* A whole CSI sequence is in p->seq ("\033[" ... final). */
static void csi_reply(struct ui_termcaps *tc, struct ui_termcaps_parser *p)
{
	const char *body = p->seq + 2;
	size_t n = p->len - 2;
	char final = p->seq[p->len - 1];
	char mark = n > 1 ? body[0] : 0;
	if (p->overflow) {
		seq_reset(p, S_GROUND);
		return; /* too long for a key or a reply we know */
	}
	if (mark == '?' && final == 'c')
		on_da1(tc, body + 1, n - 2);
	else if (mark == '?' && final == 'S')
		on_xtsmgraphics(tc, body + 1, n - 2);
	else if (final == 't' && mark != '?')
		on_window_report(tc, body, n - 1);
	else if (mark == '?' || mark == '>' || mark == '=')
		; /* some other reply: skipped */
	else
		ta_add(tc, p->seq, p->len); /* a key: arrows, F-keys */
	seq_reset(p, S_GROUND);
}

/* The byte after ESC: which kind of sequence follows. */
static void esc_byte(struct ui_termcaps *tc, struct ui_termcaps_parser *p,
                     char c)
{
	switch (c) {
	case '[':
		seq_add(p, c);
		p->state = S_CSI;
		return;
	case 'O':
		seq_add(p, c);
		p->state = S_SS3;
		return;
	case '_':
	case 'P':
	case ']':
	case '^':
	case 'X':
		/* APC, DCS, OSC, PM, SOS: keep the body from the kind on */
		seq_reset(p, S_STR);
		seq_add(p, c);
		return;
	case '\033':
		ta_add(tc, "\033", 1); /* a lone Esc, then another */
		seq_reset(p, S_ESC);
		seq_add(p, c);
		return;
	default:
		seq_add(p, c); /* Alt+key */
		ta_add(tc, p->seq, p->len);
		seq_reset(p, S_GROUND);
	}
}

/* A string sequence ended: an APC (kitty's reply) or an OSC (the
 * background colour) is read. */
static void str_done(struct ui_termcaps *tc, struct ui_termcaps_parser *p)
{
	if (!p->overflow && p->seq[0] == '_')
		on_apc(tc, p->seq, p->len);
	else if (!p->overflow && p->seq[0] == ']')
		on_osc(tc, p->seq + 1, p->len - 1);
	seq_reset(p, S_GROUND);
}

/* One byte of the terminal's answer through the parser. */
static void feed_byte(struct ui_termcaps *tc, struct ui_termcaps_parser *p,
                      char c)
{
	unsigned char u = (unsigned char)c;
	switch (p->state) {
	case S_GROUND:
		if (c == '\033') {
			seq_reset(p, S_ESC);
			seq_add(p, c);
		} else {
			ta_add(tc, &c, 1);
		}
		return;
	case S_ESC:
		esc_byte(tc, p, c);
		return;
	case S_SS3:
		seq_add(p, c);
		ta_add(tc, p->seq, p->len);
		seq_reset(p, S_GROUND);
		return;
	case S_CSI:
		if (u >= 0x20 && u <= 0x3f) {
			seq_add(p, c); /* parameters, intermediates */
		} else if (u >= 0x40 && u <= 0x7e) {
			seq_add(p, c);
			csi_reply(tc, p);
		} else {
			/* broken off: drop it, read the byte afresh */
			seq_reset(p, S_GROUND);
			feed_byte(tc, p, c);
		}
		return;
	case S_STR:
		if (c == '\033')
			p->state = S_STR_ESC;
		else if (c == '\a')
			str_done(tc, p); /* BEL ends OSC (and some APCs) */
		else
			seq_add(p, c);
		return;
	case S_STR_ESC:
		if (c == '\\') {
			str_done(tc, p);
		} else {
			/* not ST: the string was cut; this ESC starts anew */
			seq_reset(p, S_ESC);
			seq_add(p, '\033');
			esc_byte(tc, p, c);
		}
		return;
	}
}

void ui_termcaps_feed(struct ui_termcaps *tc, struct ui_termcaps_parser *p,
                      const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		feed_byte(tc, p, buf[i]);
}

void ui_termcaps_finish(struct ui_termcaps *tc, struct ui_termcaps_parser *p)
{
	/* a lone Esc or an unfinished key sequence was typed; an unfinished
	 * reply (string, private CSI) is dropped */
	if (p->state == S_ESC || p->state == S_SS3 ||
	    (p->state == S_CSI && p->len > 2 && p->seq[2] != '?' &&
	     p->seq[2] != '>' && p->seq[2] != '='))
		ta_add(tc, p->seq, p->len);
	else if (p->state == S_CSI && p->len == 2)
		ta_add(tc, p->seq, p->len);
	seq_reset(p, S_GROUND);
}

static int has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

void ui_termcaps_env(struct ui_termcaps *tc)
{
	const char *term = getenv("TERM");
	const char *ct = getenv("COLORTERM");
	const char *tmux = getenv("TMUX");
	if (!term)
		term = "";
	tc->truecolor =
	    (ct && (!strcmp(ct, "truecolor") || !strcmp(ct, "24bit"))) ||
	    has_suffix(term, "-direct");
	tc->in_tmux = (tmux && *tmux) || !strncmp(term, "tmux", 4) ||
	              !strncmp(term, "screen", 6);
}

char *ui_termcaps_printable(const char *s, size_t n)
{
	/* term_clean keeps the bytes of what it decodes, and an invalid
	 * byte (a lone 0x9b is CSI to an 8-bit terminal) decodes as
	 * U+FFFD: make it one first */
	struct buf b;
	buf_init(&b, 0);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = ui_u8_decode(s + i, n - i, &cp);
		if (cp == 0xFFFD && len == 1)
			buf_append(&b, "\xef\xbf\xbd", 3);
		else
			buf_append(&b, s + i, len);
		i += len;
	}
	char *out = term_clean(b.data ? b.data : "", b.len, 0);
	buf_free(&b);
	return out;
}

static void why_add(struct ui_termcaps *tc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Why this mode was chosen, for the log and doctor. */
static void why_add(struct ui_termcaps *tc, const char *fmt, ...)
{
	size_t used = strlen(tc->why);
	if (used >= sizeof tc->why - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tc->why + used, sizeof tc->why - used, fmt, ap);
	va_end(ap);
}

/* What the terminal said, in words, into why. */
static void describe_answers(struct ui_termcaps *tc)
{
	if (!tc->queried) {
		why_add(tc, "not asked");
		return;
	}
	if (tc->da1_seen)
		why_add(tc, "DA1 answered ?%s (%s)", tc->da1,
		        tc->sixel ? "4 = sixel" : "no 4: no sixel");
	else
		why_add(tc, "no DA1 answer in time");
	if (tc->kitty_answered) {
		/* the terminal's own words: shown, never obeyed */
		char *reply = ui_termcaps_printable(tc->kitty_reply,
		                                    strlen(tc->kitty_reply));
		why_add(tc, "; kitty graphics answered %s", reply);
		free(reply);
	} else
		why_add(tc, "; kitty graphics: no answer");
	if (tc->color_registers)
		why_add(tc, "; XTSMGRAPHICS %d colour registers",
		        tc->color_registers);
	else if (tc->xtsm_answered)
		why_add(tc, "; XTSMGRAPHICS refused");
	else
		why_add(tc, "; XTSMGRAPHICS: no answer");
	if (tc->sixel_max_w)
		why_add(tc, ", max %dx%d", tc->sixel_max_w, tc->sixel_max_h);
	why_add(tc, "; cell %dx%d px (%s)", tc->cell_w, tc->cell_h,
	        tc->cell_from);
}

/* The background and the theme --theme auto takes, into why. */
static void describe_background(struct ui_termcaps *tc)
{
	if (!tc->bg_from)
		return;
	why_add(tc, "; background ");
	if (tc->bg_answered)
		why_add(tc, "#%02x%02x%02x ", tc->bg_rgb[0], tc->bg_rgb[1],
		        tc->bg_rgb[2]);
	why_add(tc, "%s (%s): --theme auto is %s",
	        tc->bg_light ? "light" : "dark", tc->bg_from,
	        tc->bg_light ? "light" : "default");
}

/* The mode asked for by name; -1 for a name not known. */
static int want_mode(const char *want, enum ui_gfx *m, int *is_auto)
{
	static const struct {
		const char *name;
		enum ui_gfx mode;
	} names[] = {{"off", UI_GFX_OFF},
	             {"blocks", UI_GFX_BLOCKS},
	             {"sixel", UI_GFX_SIXEL},
	             {"kitty", UI_GFX_KITTY}};
	*is_auto = !want || !strcmp(want, "auto");
	if (*is_auto)
		return 0;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(want, names[i].name)) {
			*m = names[i].mode;
			return 0;
		}
	return -1;
}

/* What the half blocks will use, for the log. */
static void blocks_words(struct ui_termcaps *tc)
{
	why_add(tc, " (%s colour)",
	        tc->truecolor ? "24-bit: COLORTERM/TERM say so" : "256");
}

int ui_termcaps_choose(struct ui_termcaps *tc, const char *want, int is_tty)
{
	enum ui_gfx forced = UI_GFX_OFF;
	int is_auto;
	tc->why[0] = '\0';
	if (want_mode(want, &forced, &is_auto) < 0) {
		tc->mode = UI_GFX_OFF;
		why_add(tc,
		        "unknown image mode '%s': use auto, sixel, kitty, "
		        "blocks or off",
		        want);
		return -1;
	}
	if (!is_auto) {
		tc->mode = forced;
		why_add(tc, "%s: asked for (--images/config)",
		        ui_termcaps_mode_name(forced));
		if (forced == UI_GFX_SIXEL && !tc->sixel)
			why_add(tc, ", but the terminal did not report sixel");
		else if (forced == UI_GFX_KITTY && !tc->kitty)
			why_add(tc, ", but the terminal did not confirm the "
			            "kitty graphics protocol");
		else if (forced == UI_GFX_BLOCKS)
			blocks_words(tc);
	} else if (!is_tty) {
		tc->mode = UI_GFX_OFF;
		why_add(tc, "off: output is not a terminal");
	} else if (tc->kitty) {
		tc->mode = UI_GFX_KITTY;
		why_add(tc, "kitty: the terminal accepted the kitty graphics "
		            "query");
	} else if (tc->sixel) {
		tc->mode = UI_GFX_SIXEL;
		why_add(tc, "sixel: DA1 lists 4");
	} else if (!tc->queried) {
		tc->mode = UI_GFX_OFF;
		why_add(tc, "off: TERM=dumb or unset, no graphics");
	} else {
		tc->mode = UI_GFX_BLOCKS;
		if (tc->in_tmux)
			why_add(tc, "blocks: inside tmux/screen without sixel "
			            "(tmux 3.4+ built with sixel says 4 in "
			            "DA1)");
		else if (!tc->da1_seen)
			why_add(tc, "blocks: the terminal answered nothing");
		else
			why_add(tc, "blocks: neither sixel nor kitty graphics");
		blocks_words(tc);
	}
	if (tc->mode == UI_GFX_SIXEL && !tc->color_registers) {
		tc->color_registers = 256;
		tc->registers_assumed = 1;
		why_add(tc, "; 256 colour registers assumed");
	}
	why_add(tc, ". ");
	describe_answers(tc);
	describe_background(tc);
	return 0;
}

void ui_termcaps_cells(int fd, struct ui_termcaps *tc)
{
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) < 0 || !ws.ws_col || !ws.ws_row ||
	    !ws.ws_xpixel || !ws.ws_ypixel)
		return;
	int w = ws.ws_xpixel / ws.ws_col, h = ws.ws_ypixel / ws.ws_row;
	if (w <= 0 || h <= 0)
		return;
	tc->cell_w = w;
	tc->cell_h = h;
	tc->cell_from = "TIOCGWINSZ";
}

/* A monotonic clock in ms (the query's deadline). */
static long tc_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* All of s to fd; -1 if it cannot. */
static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ---- the query on the terminal ------------------------------------------
 * While the terminal is in raw mode a signal that kills the process
 * would leave it without echo. ISIG is off during the query, so Ctrl-C,
 * Ctrl-\ and Ctrl-Z arrive as bytes (typeahead, and tc->sig_typed says
 * which signal they meant); a signal sent by another process meets a
 * handler that puts the terminal back before the default action. */

static const int RESTORE_SIGNALS[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
#define NRESTORE ((int)(sizeof RESTORE_SIGNALS / sizeof *RESTORE_SIGNALS))

static volatile sig_atomic_t restore_fd = -1;
static struct termios restore_tio;

/* A signal while the terminal is raw: its mode back, then the signal. */
static void restore_and_die(int sig)
{
	if (restore_fd >= 0)
		tcsetattr(restore_fd, TCSANOW, &restore_tio);
	signal(sig, SIG_DFL);
	raise(sig); /* delivered when the handler returns */
}

/* Handlers only where the default (death) would act: the caller's own
 * handlers stay. */
static void guard_signals(int fd, const struct termios *saved,
                          struct sigaction old[NRESTORE], int set[NRESTORE])
{
	restore_tio = *saved;
	restore_fd = fd;
	for (int i = 0; i < NRESTORE; i++) {
		set[i] = 0;
		if (sigaction(RESTORE_SIGNALS[i], NULL, &old[i]) < 0 ||
		    old[i].sa_handler != SIG_DFL)
			continue;
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = restore_and_die;
		sigemptyset(&sa.sa_mask);
		set[i] = sigaction(RESTORE_SIGNALS[i], &sa, NULL) == 0;
	}
}

/* The signal handlers of before. */
static void unguard_signals(const struct sigaction old[NRESTORE],
                            const int set[NRESTORE])
{
	for (int i = 0; i < NRESTORE; i++)
		if (set[i])
			sigaction(RESTORE_SIGNALS[i], &old[i], NULL);
	restore_fd = -1;
}

/* Ctrl-C (or the terminal's VINTR...) among the bytes typed meanwhile:
 * the signal it would have sent, first one wins. */
static int typed_signal(const struct ui_termcaps *tc, const struct termios *t)
{
	static const struct {
		int cc, sig;
	} keys[] = {{VINTR, SIGINT}, {VQUIT, SIGQUIT}, {VSUSP, SIGTSTP}};
	for (size_t i = 0; i < tc->n_typeahead; i++)
		for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
			cc_t c = t->c_cc[keys[k].cc];
			if (c != _POSIX_VDISABLE &&
			    (unsigned char)tc->typeahead[i] == c)
				return keys[k].sig;
		}
	return 0;
}

static void filter_arm(const struct ui_termcaps *tc,
                       const struct ui_termcaps_parser *p);

/* Send the queries and read replies until DA1 or the deadline. */
static void query(int in_fd, int out_fd, int timeout_ms, struct ui_termcaps *tc)
{
	struct termios saved, raw;
	if (tcgetattr(in_fd, &saved) < 0)
		return;
	raw = saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG);
	/* the bytes as sent: replies and keys (Enter stays \r, Ctrl-Q a
	 * key, not flow control) */
	raw.c_iflag &= ~(tcflag_t)(ICRNL | INLCR | IGNCR | IXON);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	struct sigaction old[NRESTORE];
	int set[NRESTORE];
	guard_signals(in_fd, &saved, old, set);
	if (tcsetattr(in_fd, TCSANOW, &raw) < 0) {
		unguard_signals(old, set);
		return;
	}
	struct ui_termcaps_parser p;
	ui_termcaps_parser_init(&p);
	/* tmux takes an APC string for a pane title and passes no kitty
	 * graphics without passthrough: skip that query inside it. The
	 * Linux console reads ESC ] as its palette command and would print
	 * the rest of OSC 11 (its background is black anyway). */
	const char *term = getenv("TERM");
	int linux_console = term && !strncmp(term, "linux", 5);
	char q[sizeof Q_KITTY Q_XTSM Q_CELL Q_BG Q_DA1];
	snprintf(q, sizeof q, "%s%s%s%s%s", tc->in_tmux ? "" : Q_KITTY, Q_XTSM,
	         Q_CELL, linux_console ? "" : Q_BG, Q_DA1);
	if (write_all(out_fd, q, strlen(q)) == 0) {
		tc->queried = 1;
		long deadline = tc_now_ms() + timeout_ms;
		while (!tc->da1_seen) {
			long left = deadline - tc_now_ms();
			if (left <= 0)
				break;
			struct pollfd pfd = {.fd = in_fd, .events = POLLIN};
			int r = poll(&pfd, 1, (int)left);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0 || !(pfd.revents & POLLIN))
				break;
			char buf[256];
			ssize_t n = read(in_fd, buf, sizeof buf);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0)
				break;
			ui_termcaps_feed(tc, &p, buf, (size_t)n);
		}
		tc->timed_out = !tc->da1_seen;
	}
	if (tc->queried)
		filter_arm(tc, &p);
	ui_termcaps_finish(tc, &p);
	tcsetattr(in_fd, TCSANOW, &saved);
	unguard_signals(old, set);
	tc->sig_typed = typed_signal(tc, &saved);
}

/* Watch keys for the rest of a reply that comes after the deadline. */
static void filter_arm(const struct ui_termcaps *tc,
                       const struct ui_termcaps_parser *p)
{
	enum ui_late_rest rest = UI_LATE_NONE;
	/* a reply cut by the deadline: its rest comes later */
	if (p->state == S_CSI && p->len > 2 && p->seq[2] == '?')
		rest = UI_LATE_CSI;
	else if ((p->state == S_STR || p->state == S_STR_ESC) &&
	         (p->seq[0] == '_' || p->seq[0] == ']'))
		rest = p->state == S_STR ? UI_LATE_STR : UI_LATE_STR_ESC;
	ui_late_arm(!tc->da1_seen, rest);
}

int ui_termcaps_detect(int in_fd, int out_fd, const char *want, int timeout_ms,
                       struct ui_termcaps *tc)
{
	enum ui_gfx m;
	int is_auto;
	ui_termcaps_init(tc);
	ui_termcaps_env(tc);
	int is_tty = isatty(in_fd) && isatty(out_fd);
	const char *term = getenv("TERM");
	int dumb = !term || !*term || !strcmp(term, "dumb");
	int known = want_mode(want, &m, &is_auto) == 0;
	if (known && (is_auto || m != UI_GFX_OFF) && is_tty && !dumb)
		query(in_fd, out_fd, timeout_ms, tc);
	if (strcmp(tc->cell_from, "CSI 16 t") && is_tty)
		ui_termcaps_cells(out_fd, tc);
	ui_termcaps_background(tc);
	last_bg_light = tc->bg_light;
	/* tmux answers DA1 itself: 4 there means tmux can show sixel */
	if (tc->in_tmux)
		tc->tmux_sixel = tc->sixel;
	return ui_termcaps_choose(tc, want, is_tty);
}

int ui_termcaps_tmux_sixel(int timeout_ms)
{
	const char *tmux = getenv("TMUX");
	if (!tmux || !*tmux)
		return -1;
	char *bin = spawn_which("tmux");
	char *argv[] = {"tmux", "display", "-p", "#{sixel_support}", NULL};
	/* stdin and stderr: /dev/null */
	struct spawn_opts o = {
	    .argv = argv, .path = bin, .io[1].how = SPAWN_PIPE};
	struct spawn_proc p;
	int started = bin && spawn_start(&o, &p, NULL) == 0;
	free(bin);
	if (!started)
		return -1;
	pid_t pid = p.pid;
	char out[16] = "";
	size_t got = 0;
	long deadline = tc_now_ms() + timeout_ms;
	for (;;) {
		long left = deadline - tc_now_ms();
		struct pollfd pfd = {.fd = p.fd[1], .events = POLLIN};
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			break;
		ssize_t n = read(p.fd[1], out + got, sizeof out - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == sizeof out - 1)
			break;
	}
	out[got] = '\0';
	close(p.fd[1]);
	int status = 0;
	pid_t w;
	while ((w = waitpid(pid, &status, WNOHANG)) == 0 &&
	       tc_now_ms() < deadline) {
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
	if (w != pid) {
		kill(pid, SIGKILL); /* late: tmux server busy or gone */
		waitpid(pid, &status, 0);
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return out[0] == '1';
}
