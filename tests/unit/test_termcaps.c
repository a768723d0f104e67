/* test_termcaps.c: the terminal reply parser, the image-mode choice and
 * the light-or-dark verdict (src/tui/termcaps.c) on real terminals'
 * replies, split at every byte,
 * mixed with keystrokes and garbage; then the whole detection on a pty
 * whose other end answers like foot, or not at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "skip.h"
#include "tui/text.c"
#include "tui/sanitize.c"
#include "tui/termcaps.c"
#include "tui/reply_filter.c"
#include "tui/theme.c"

#include <locale.h>
#include <math.h>
#include <stdlib.h>

/* the tests that need a pty: skipped without one (under CI=true, failed) */
#define NO_PTY() test_skip("no pty here (posix_openpt, grantpt or open)")

/* Where each reply comes from:
 * - xterm 379 (Debian 12), captured here under Xvfb by sending our
 *   queries to `xterm -ti vt340 -xrm 'XTerm*numColorRegisters: 256'`
 *   and to a plain `xterm` (whose XTSMGRAPHICS answers Ps=3, failure).
 * - mlterm, WezTerm, kitty: DA1 table in BourgeoisBear/rasterm README.md
 *   ("known responses", CSI 0 c) and jquast/ucs-detect's CSI_0_C table.
 * - foot: csi.c, `const char *reply = "\033[?62;4;22c";`.
 * - tmux 3.3a: input.c INPUT_CSI_DA, input_reply(ictx, "\033[?1;2c");
 *   tmux built with ENABLE_SIXEL (3.4+) answers "\033[?1;2;4c" (its
 *   regress test device_attributes_and_status_reports).
 * - kitty graphics: "\033_Gi=31;OK\033\\" (kitty's graphics protocol
 *   docs: the reply echoes the id, then OK or an error code).
 * - OSC 11: xterm 379 under Xvfb, `xterm -bg white` and `-bg black`
 *   asked ESC ] 11 ; ? BEL answer in kind, four hex digits a channel
 *   (tests/e2e/tui_light_xterm.sh sees it whole); ST-ended and shorter
 *   forms from xterm's ctlseqs ("rgb:r/g/b", 1 to 4 digits); rgba:
 *   from rxvt-unicode with a transparent background. */
#define XTERM_VT340                                                            \
	"\033[?1;0;256S\033[?2;0;480;312S\033[?63;1;2;4;6;9;15;16;22;28c"
#define XTERM_PLAIN "\033[?1;3S\033[?2;3S\033[?64;1;2;6;9;15;16;17;18;21;22;28c"
#define MLTERM "\033[?63;1;2;3;4;7;29c"
#define WEZTERM "\033[?65;4;6;18;22c"
#define FOOT "\033[?62;4;22c"
#define KITTY "\033_Gi=31;OK\033\\\033[?62;c"
#define TMUX33 "\033[?1;2c"
#define TMUX_SIXEL "\033[?1;2;4c"
#define CELL "\033[6;20;10t"
#define BG_WHITE "\033]11;rgb:ffff/ffff/ffff\a"
#define BG_BLACK "\033]11;rgb:0000/0000/0000\a"

struct parsed {
	struct ui_termcaps tc;
	struct ui_termcaps_parser p;
};

static void parse_pieces(struct parsed *r, const char *s, size_t n, size_t step)
{
	ui_termcaps_init(&r->tc);
	ui_termcaps_parser_init(&r->p);
	for (size_t i = 0; i < n; i += step)
		ui_termcaps_feed(&r->tc, &r->p, s + i,
		                 n - i < step ? n - i : step);
	ui_termcaps_finish(&r->tc, &r->p);
}

static struct ui_termcaps parse(const char *s)
{
	struct parsed r;
	parse_pieces(&r, s, strlen(s), strlen(s) ? strlen(s) : 1);
	return r.tc;
}

static struct ui_termcaps parse_split(const char *s, size_t at)
{
	struct parsed r;
	ui_termcaps_init(&r.tc);
	ui_termcaps_parser_init(&r.p);
	ui_termcaps_feed(&r.tc, &r.p, s, at);
	ui_termcaps_feed(&r.tc, &r.p, s + at, strlen(s) - at);
	ui_termcaps_finish(&r.tc, &r.p);
	return r.tc;
}

/* Everything parsed, excluding why (written by choose). */
static void assert_same(const struct ui_termcaps *a,
                        const struct ui_termcaps *b)
{
	assert_int_equal(a->da1_seen, b->da1_seen);
	assert_int_equal(a->da1_class, b->da1_class);
	assert_string_equal(a->da1, b->da1);
	assert_int_equal(a->sixel, b->sixel);
	assert_int_equal(a->kitty, b->kitty);
	assert_int_equal(a->kitty_answered, b->kitty_answered);
	assert_int_equal(a->xtsm_answered, b->xtsm_answered);
	assert_int_equal(a->color_registers, b->color_registers);
	assert_int_equal(a->sixel_max_w, b->sixel_max_w);
	assert_int_equal(a->sixel_max_h, b->sixel_max_h);
	assert_int_equal(a->cell_w, b->cell_w);
	assert_int_equal(a->cell_h, b->cell_h);
	assert_string_equal(a->cell_from, b->cell_from);
	assert_int_equal(a->n_typeahead, b->n_typeahead);
	assert_memory_equal(a->typeahead, b->typeahead, a->n_typeahead);
}

static enum ui_gfx choose_auto(struct ui_termcaps *tc, int in_tmux)
{
	tc->queried = 1;
	tc->in_tmux = in_tmux;
	assert_int_equal(ui_termcaps_choose(tc, "auto", 1), 0);
	return tc->mode;
}

static void test_xterm_vt340(void **state)
{
	(void)state;
	struct ui_termcaps tc = parse(XTERM_VT340 CELL);
	assert_true(tc.da1_seen);
	assert_int_equal(tc.da1_class, 63);
	assert_string_equal(tc.da1, "63;1;2;4;6;9;15;16;22;28");
	assert_true(tc.sixel);
	assert_false(tc.kitty);
	assert_int_equal(tc.color_registers, 256);
	assert_int_equal(tc.sixel_max_w, 480);
	assert_int_equal(tc.sixel_max_h, 312);
	assert_int_equal(tc.cell_w, 10);
	assert_int_equal(tc.cell_h, 20);
	assert_string_equal(tc.cell_from, "CSI 16 t");
	assert_int_equal(tc.n_typeahead, 0);
	assert_int_equal(choose_auto(&tc, 0), UI_GFX_SIXEL);
	assert_false(tc.registers_assumed);
	assert_non_null(strstr(tc.why, "sixel: DA1 lists 4"));
	assert_non_null(strstr(tc.why, "256 colour registers"));
}

static void test_xterm_plain(void **state)
{
	(void)state;
	struct ui_termcaps tc = parse(XTERM_PLAIN);
	assert_true(tc.da1_seen);
	assert_int_equal(tc.da1_class, 64);
	assert_false(tc.sixel);
	assert_true(tc.xtsm_answered);
	assert_int_equal(tc.color_registers, 0); /* Ps=3: failure */
	assert_int_equal(tc.sixel_max_w, 0);
	assert_string_equal(tc.cell_from, "guess");
	assert_int_equal(choose_auto(&tc, 0), UI_GFX_BLOCKS);
	assert_non_null(strstr(tc.why, "XTSMGRAPHICS refused"));
}

static void test_sixel_terminals(void **state)
{
	(void)state;
	const char *sixel[] = {MLTERM, WEZTERM, FOOT};
	int classes[] = {63, 65, 62};
	for (int i = 0; i < 3; i++) {
		struct ui_termcaps tc = parse(sixel[i]);
		assert_true(tc.da1_seen);
		assert_int_equal(tc.da1_class, classes[i]);
		assert_true(tc.sixel);
		assert_int_equal(tc.color_registers, 0);
		assert_int_equal(choose_auto(&tc, 0), UI_GFX_SIXEL);
		/* unknown registers: 256 assumed and said so */
		assert_int_equal(tc.color_registers, 256);
		assert_true(tc.registers_assumed);
		assert_non_null(strstr(tc.why, "assumed"));
	}
}

static void test_kitty(void **state)
{
	(void)state;
	struct ui_termcaps tc = parse(KITTY);
	assert_true(tc.kitty);
	assert_true(tc.kitty_answered);
	assert_string_equal(tc.kitty_reply, "OK");
	assert_true(tc.da1_seen);
	assert_int_equal(tc.da1_class, 62);
	assert_string_equal(tc.da1, "62;");
	assert_false(tc.sixel);
	assert_int_equal(choose_auto(&tc, 0), UI_GFX_KITTY);

	/* an error is an answer, but not support */
	tc = parse("\033_Gi=31;ENOTSUPPORTED:no graphics\033\\" FOOT);
	assert_false(tc.kitty);
	assert_true(tc.kitty_answered);
	assert_string_equal(tc.kitty_reply, "ENOTSUPPORTED:no graphics");
	assert_int_equal(choose_auto(&tc, 0), UI_GFX_SIXEL);

	/* another image id is another program's reply */
	tc = parse("\033_Gi=1;OK\033\\\033_Gi=310;OK\033\\" TMUX33);
	assert_false(tc.kitty);
	assert_false(tc.kitty_answered);
}

static void test_tmux(void **state)
{
	(void)state;
	struct ui_termcaps tc = parse(TMUX33);
	assert_true(tc.da1_seen);
	assert_int_equal(tc.da1_class, 1);
	assert_false(tc.sixel);
	assert_int_equal(choose_auto(&tc, 1), UI_GFX_BLOCKS);
	assert_non_null(strstr(tc.why, "inside tmux"));
	assert_non_null(strstr(tc.why, "DA1 answered ?1;2"));

	tc = parse(TMUX_SIXEL);
	assert_true(tc.sixel);
	assert_int_equal(choose_auto(&tc, 1), UI_GFX_SIXEL);
}

static void test_vt132_is_not_sixel(void **state)
{
	(void)state;
	struct ui_termcaps tc = parse("\033[?4;6c");
	assert_true(tc.da1_seen);
	assert_int_equal(tc.da1_class, 4);
	assert_false(tc.sixel);
	tc = parse("\033[?6c"); /* PuTTY, st, the Linux console */
	assert_true(tc.da1_seen);
	assert_false(tc.sixel);
}

/* The same fields whatever the reads' boundaries: two pieces split at
 * every byte, and one byte at a time. */
static void test_split_everywhere(void **state)
{
	(void)state;
	const char *all[] = {XTERM_VT340 CELL,
	                     XTERM_PLAIN,
	                     MLTERM,
	                     WEZTERM,
	                     FOOT,
	                     KITTY,
	                     TMUX33,
	                     "\033_Gi=31;EINVAL:bad\033\\" CELL TMUX_SIXEL,
	                     "x\033[A" FOOT "\033OPq\033"};
	for (size_t k = 0; k < sizeof all / sizeof *all; k++) {
		struct ui_termcaps whole = parse(all[k]);
		assert_true(whole.da1_seen);
		size_t n = strlen(all[k]);
		for (size_t at = 0; at <= n; at++) {
			struct ui_termcaps t = parse_split(all[k], at);
			assert_same(&whole, &t);
		}
		struct parsed r;
		parse_pieces(&r, all[k], n, 1);
		assert_same(&whole, &r.tc);
	}
}

/* Keys typed while the replies arrive are kept, in order, for the
 * caller; the replies are still understood. */
static void test_interleaved_keys(void **state)
{
	(void)state;
	const char *in = "a\033[A"             /* a, Up */
	                 "\033_Gi=31;OK\033\\" /* kitty */
	                 "b\033OP"             /* b, F1 (SS3) */
	                 "\033[?1;0;256S"      /* registers */
	                 "\033x"               /* Alt+x */
	                 "\033[6;19;9t"        /* cell */
	                 "\033[1;5C"           /* Ctrl+Right */
	                 "\033[?63;1;2;4;22c"  /* DA1 */
	                 "\r\033";             /* Enter, Esc */
	struct ui_termcaps tc = parse(in);
	assert_true(tc.kitty);
	assert_true(tc.sixel);
	assert_int_equal(tc.color_registers, 256);
	assert_int_equal(tc.cell_w, 9);
	assert_int_equal(tc.cell_h, 19);
	const char *keys = "a\033[Ab\033OP\033x\033[1;5C\r\033";
	assert_int_equal(tc.n_typeahead, strlen(keys));
	assert_memory_equal(tc.typeahead, keys, strlen(keys));
}

static void test_garbage(void **state)
{
	(void)state;
	/* replies we do not know are skipped, not taken for keys */
	struct ui_termcaps tc =
	    parse("\033[?2026;2$y\033[>1;4000;19c\033]11;rgb:0/0/0\a"
	          "\033P>|xterm(379)\033\\\033[4;600;800t\033[6;0;0t" FOOT);
	assert_true(tc.sixel);
	assert_int_equal(tc.n_typeahead, 0);
	assert_string_equal(tc.cell_from, "guess");

	/* a CSI broken by a control byte, an overlong CSI, junk numbers */
	tc = parse("\033[?63;1\n\033[?"
	           "11111111111111111111111111111111111111111111111111111111"
	           "11111111111111111111111111111111111111111111111111111111"
	           "11111111111111111111111111111111111111111111111111111111"
	           ";4c\033[?99999999999999999999;4c\033[?1:2;4S" TMUX33);
	assert_true(tc.da1_seen);
	assert_int_equal(tc.da1_class, 1);
	assert_false(tc.sixel); /* the last DA1 counts */
	assert_true(tc.n_typeahead <= UI_TERMCAPS_TYPEAHEAD);

	/* pseudo-random bytes: bounded typeahead, no crash, and a reply
	 * after a terminator is still read */
	char junk[4096];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof junk; i++) {
		x = x * 1103515245u + 12345u;
		junk[i] = (char)(x >> 16);
	}
	struct parsed r;
	ui_termcaps_init(&r.tc);
	ui_termcaps_parser_init(&r.p);
	ui_termcaps_feed(&r.tc, &r.p, junk, sizeof junk);
	ui_termcaps_feed(&r.tc, &r.p, "\033\\\030" FOOT, strlen(FOOT) + 3);
	ui_termcaps_finish(&r.tc, &r.p);
	assert_true(r.tc.n_typeahead <= UI_TERMCAPS_TYPEAHEAD);
	assert_true(r.tc.sixel);
	assert_int_equal(r.tc.da1_class, 62);

	/* more keys than the typeahead holds: the rest is dropped */
	char many[200];
	memset(many, 'k', sizeof many);
	ui_termcaps_init(&r.tc);
	ui_termcaps_parser_init(&r.p);
	ui_termcaps_feed(&r.tc, &r.p, many, sizeof many);
	assert_int_equal(r.tc.n_typeahead, UI_TERMCAPS_TYPEAHEAD);
}

/* want x what the terminal said x terminal or not -> mode. */
static void test_choice_matrix(void **state)
{
	(void)state;
	struct {
		const char *replies;
		int in_tmux, is_tty, queried;
		const char *want;
		enum ui_gfx mode;
		const char *why;
	} m[] = {
	    {KITTY, 0, 1, 1, "auto", UI_GFX_KITTY, "kitty: the terminal"},
	    {"\033_Gi=31;OK\033\\" FOOT, 0, 1, 1, "auto", UI_GFX_KITTY,
	     "accepted"},
	    {FOOT, 0, 1, 1, "auto", UI_GFX_SIXEL, "DA1 lists 4"},
	    {XTERM_PLAIN, 0, 1, 1, "auto", UI_GFX_BLOCKS, "neither"},
	    {TMUX33, 1, 1, 1, "auto", UI_GFX_BLOCKS, "inside tmux"},
	    {"", 0, 1, 1, "auto", UI_GFX_BLOCKS, "answered nothing"},
	    {"", 0, 1, 0, "auto", UI_GFX_OFF, "TERM=dumb"},
	    {FOOT, 0, 0, 1, "auto", UI_GFX_OFF, "not a terminal"},
	    {FOOT, 0, 1, 1, "off", UI_GFX_OFF, "asked for"},
	    {KITTY, 0, 1, 1, "blocks", UI_GFX_BLOCKS, "asked for"},
	    {FOOT, 0, 1, 1, "sixel", UI_GFX_SIXEL, "asked for"},
	    {TMUX33, 1, 1, 1, "sixel", UI_GFX_SIXEL, "did not report sixel"},
	    {FOOT, 0, 1, 1, "kitty", UI_GFX_KITTY, "did not confirm"},
	    {KITTY, 0, 1, 1, "kitty", UI_GFX_KITTY, "kitty: asked for"},
	    {"", 0, 0, 0, "sixel", UI_GFX_SIXEL, "did not report"},
	};
	for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
		struct ui_termcaps tc = parse(m[i].replies);
		tc.in_tmux = m[i].in_tmux;
		tc.queried = m[i].queried;
		assert_int_equal(
		    ui_termcaps_choose(&tc, m[i].want, m[i].is_tty), 0);
		if (tc.mode != m[i].mode || !strstr(tc.why, m[i].why))
			fail_msg("case %zu: got %s, why '%s'", i,
			         ui_termcaps_mode_name(tc.mode), tc.why);
	}
	struct ui_termcaps tc = parse(FOOT);
	assert_int_equal(ui_termcaps_choose(&tc, "pixels", 1), -1);
	assert_int_equal(tc.mode, UI_GFX_OFF);
	assert_non_null(strstr(tc.why, "unknown image mode 'pixels'"));
	/* truecolor is a hint that shows in the words for blocks */
	tc = parse(XTERM_PLAIN);
	tc.queried = 1;
	tc.truecolor = 1;
	ui_termcaps_choose(&tc, "auto", 1);
	assert_non_null(strstr(tc.why, "24-bit"));
}

static void test_env_hints(void **state)
{
	(void)state;
	struct ui_termcaps tc;
	ui_termcaps_init(&tc);
	setenv("TERM", "xterm-direct", 1);
	unsetenv("COLORTERM");
	unsetenv("TMUX");
	ui_termcaps_env(&tc);
	assert_true(tc.truecolor);
	assert_false(tc.in_tmux);
	setenv("TERM", "screen-256color", 1);
	setenv("COLORTERM", "24bit", 1);
	ui_termcaps_env(&tc);
	assert_true(tc.truecolor);
	assert_true(tc.in_tmux);
	setenv("TERM", "xterm-256color", 1);
	setenv("COLORTERM", "yes", 1);
	setenv("TMUX", "/tmp/tmux-0/default,1,0", 1);
	ui_termcaps_env(&tc);
	assert_false(tc.truecolor);
	assert_true(tc.in_tmux);
	unsetenv("TMUX");
	unsetenv("COLORTERM");
}

/* A pty whose master side plays a terminal: reads the queries until DA1
 * and answers with `replies` (NULL: never answers). */
static pid_t fake_terminal(int master, const char *replies, const char *keys)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid)
		return pid;
	char got[512];
	size_t n = 0;
	if (keys && write(master, keys, strlen(keys)) < 0)
		_exit(2);
	while (n < sizeof got - 1) {
		ssize_t r = read(master, got + n, sizeof got - 1 - n);
		if (r <= 0)
			_exit(3);
		n += (size_t)r;
		got[n] = '\0';
		if (strstr(got, "\033[c"))
			break;
	}
	/* every query, in order, DA1 last */
	if (!strstr(got, "\033_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\033\\"
	                 "\033[?1;1;0S\033[?2;1;0S\033[16t\033]11;?\a\033[c"))
		_exit(4);
	if (replies && write(master, replies, strlen(replies)) < 0)
		_exit(5);
	pause(); /* keep the master open until the parent kills it */
	_exit(0);
}

static int open_pty(int *master, int *slave)
{
	*master = posix_openpt(O_RDWR | O_NOCTTY);
	if (*master < 0 || grantpt(*master) < 0 || unlockpt(*master) < 0)
		return -1;
	*slave = open(ptsname(*master), O_RDWR | O_NOCTTY);
	return *slave < 0 ? -1 : 0;
}

static void test_detect_on_a_pty(void **state)
{
	(void)state;
	int master, slave;
	if (open_pty(&master, &slave) < 0)
		NO_PTY();
	setenv("TERM", "xterm-256color", 1);
	unsetenv("TMUX");
	unsetenv("COLORTERM");
	unsetenv("COLORFGBG");
	pid_t pid = fake_terminal(master, CELL BG_WHITE FOOT, "q");
	struct ui_termcaps tc;
	long t0 = tc_now_ms();
	assert_int_equal(ui_termcaps_detect(slave, slave, "auto", 20000, &tc),
	                 0);
	long took = tc_now_ms() - t0;
	int status;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	assert_true(tc.queried);
	assert_true(tc.da1_seen);
	assert_false(tc.timed_out);
	assert_int_equal(tc.mode, UI_GFX_SIXEL);
	assert_int_equal(tc.cell_w, 10);
	assert_string_equal(tc.cell_from, "CSI 16 t");
	/* the background: white, so --theme auto is light */
	assert_true(tc.bg_answered);
	assert_true(tc.bg_light);
	assert_string_equal(tc.bg_from, "OSC 11");
	assert_string_equal(ui_termcaps_theme("auto"), "light");
	assert_string_equal(ui_termcaps_theme("solarized-dark"),
	                    "solarized-dark");
	assert_non_null(strstr(tc.why, "background #ffffff light (OSC 11)"));
	/* the key typed before the replies is handed back */
	assert_int_equal(tc.n_typeahead, 1);
	assert_int_equal(tc.typeahead[0], 'q');
	/* answered: done at DA1, not at the 20 s timeout (a hang guard with
	 * a wide margin; the speed is tests/bench/termcaps.sh's figure) */
	assert_true(took < 10000);
	/* raw mode was undone */
	struct termios t;
	assert_int_equal(tcgetattr(slave, &t), 0);
	assert_true(t.c_lflag & ICANON);
	assert_true(t.c_lflag & ECHO);
	close(slave);
	close(master);
}

static void test_detect_silent_terminal(void **state)
{
	(void)state;
	int master, slave;
	if (open_pty(&master, &slave) < 0)
		NO_PTY();
	setenv("TERM", "xterm-256color", 1);
	pid_t pid = fake_terminal(master, NULL, NULL);
	struct ui_termcaps tc;
	long t0 = tc_now_ms();
	assert_int_equal(ui_termcaps_detect(slave, slave, "auto", 150, &tc), 0);
	long took = tc_now_ms() - t0;
	int status;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	assert_true(tc.timed_out);
	assert_int_equal(tc.mode, UI_GFX_BLOCKS);
	assert_non_null(strstr(tc.why, "no DA1 answer in time"));
	/* no answer, no COLORFGBG: dark */
	assert_false(tc.bg_answered);
	assert_false(tc.bg_light);
	assert_string_equal(ui_termcaps_theme("auto"), "default");
	/* it waited the 150 ms asked, and the timeout bounds it (a hang
	 * guard with a wide margin; how close to 150 ms it ends is
	 * tests/bench/termcaps.sh's figure) */
	assert_true(took >= 140);
	assert_true(took < 5000);

	/* TERM=dumb and "off": no query at all, at once */
	setenv("TERM", "dumb", 1);
	assert_int_equal(ui_termcaps_detect(slave, slave, "auto", 150, &tc), 0);
	assert_false(tc.queried);
	assert_int_equal(tc.mode, UI_GFX_OFF);
	setenv("TERM", "xterm", 1);
	assert_int_equal(ui_termcaps_detect(slave, slave, "off", 150, &tc), 0);
	assert_false(tc.queried);
	assert_int_equal(tc.mode, UI_GFX_OFF);
	close(slave);
	close(master);

	/* not a terminal: a pipe */
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(ui_termcaps_detect(fds[0], fds[1], "auto", 150, &tc),
	                 0);
	assert_false(tc.queried);
	assert_int_equal(tc.mode, UI_GFX_OFF);
	assert_non_null(strstr(tc.why, "not a terminal"));
	assert_int_equal(ui_termcaps_detect(fds[0], fds[1], "nope", 150, &tc),
	                 -1);
	close(fds[0]);
	close(fds[1]);
}

static void test_cells_from_winsize(void **state)
{
	(void)state;
	int master, slave;
	if (open_pty(&master, &slave) < 0)
		NO_PTY();
	struct ui_termcaps tc;
	ui_termcaps_init(&tc);
	struct winsize ws = {.ws_row = 40, .ws_col = 100};
	assert_int_equal(ioctl(slave, TIOCSWINSZ, &ws), 0);
	ui_termcaps_cells(slave, &tc); /* no pixels: keeps the guess */
	assert_string_equal(tc.cell_from, "guess");
	ws.ws_xpixel = 900;
	ws.ws_ypixel = 760;
	assert_int_equal(ioctl(slave, TIOCSWINSZ, &ws), 0);
	ui_termcaps_cells(slave, &tc);
	assert_int_equal(tc.cell_w, 9);
	assert_int_equal(tc.cell_h, 19);
	assert_string_equal(tc.cell_from, "TIOCGWINSZ");
	close(slave);
	close(master);
}

/* A hostile kitty reply: what the terminal says is shown, never obeyed
 * (no control byte, no lone 0x9b, which is CSI to an 8-bit terminal). */
static void test_hostile_reply_printable(void **state)
{
	(void)state;
	setlocale(LC_ALL, "C.UTF-8"); /* as assay runs */
	static const char evil[] = "\x9b"
	                           "2J\rFAKE: all OK\b\b";
	struct ui_termcaps tc = parse("\033_Gi=31;\x9b"
	                              "2J\rFAKE: all OK\b\b\033\\" FOOT);
	assert_true(tc.kitty_answered);
	assert_false(tc.kitty);
	choose_auto(&tc, 0);
	for (const char *c = tc.why; *c; c++) {
		assert_true((unsigned char)*c >= 0x20);
		assert_true((unsigned char)*c != 0x7f);
		assert_true((unsigned char)*c != 0x9b);
	}
	assert_non_null(strstr(tc.why, "2J^MFAKE: all OK^H^H"));
	char *p = ui_termcaps_printable(evil, strlen(evil));
	assert_string_equal(p, "\xef\xbf\xbd"
	                       "2J^MFAKE: all OK^H^H");
	free(p);
	/* C1 as a code point, and plain text unchanged */
	p = ui_termcaps_printable("\xc2\x9b"
	                          "1m ok",
	                          7);
	assert_string_equal(p, "<U+009B>1m ok");
	free(p);
}

/* ---- the background: OSC 11, COLORFGBG, the verdict ---- */

/* The OSC 11 body of s (after ESC ], before BEL or ST) parsed. */
static int osc11(const char *s, int rgb[3])
{
	return ui_termcaps_osc11(s, strlen(s), rgb);
}

static void test_osc11_parse(void **state)
{
	(void)state;
	int c[3];
	assert_int_equal(osc11("11;rgb:ffff/ffff/ffff", c), 0);
	assert_int_equal(c[0], 255);
	assert_int_equal(c[1], 255);
	assert_int_equal(c[2], 255);
	/* 1 to 4 digits a channel, each scaled on its own */
	assert_int_equal(osc11("11;rgb:f/80/123", c), 0);
	assert_int_equal(c[0], 255);
	assert_int_equal(c[1], 128);
	assert_int_equal(c[2], 18); /* 0x123 * 255 / 0xfff = 18.2 */
	assert_int_equal(osc11("11;rgb:2B2B/3636/0000", c), 0);
	assert_int_equal(c[0], 43);
	assert_int_equal(c[1], 54);
	assert_int_equal(c[2], 0);
	assert_int_equal(osc11("11;rgba:0000/0000/0000/c8c8", c), 0);
	assert_int_equal(c[0] + c[1] + c[2], 0);
	/* not a background: other OSCs, broken colours */
	const char *bad[] = {
	    "10;rgb:ffff/ffff/ffff", "11;?",
	    "11;rgb:ffff/ffff",      "11;rgb:ffff/ffff/ffff/ffff",
	    "11;rgb:fffff/0/0",      "11;rgb://0",
	    "11;rgb:gg/00/00",       "11;#ffffff",
	    "11;rgb:ff/ff/ff;",      "11;rgba:0/0/0",
	    "111;rgb:0/0/0",         ""};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		c[0] = c[1] = c[2] = -7;
		if (osc11(bad[i], c) != -1)
			fail_msg("parsed %s", bad[i]);
		assert_int_equal(c[0], -7);
	}
}

/* The reply through the whole parser: BEL or ST, split anywhere,
 * among the other replies and keys; another OSC is not it. */
static void test_osc11_in_replies(void **state)
{
	(void)state;
	const char *all = "k" CELL "\033]11;rgb:fafa/f0f0/e6e6\033\\" FOOT "j";
	for (size_t step = 1; step <= strlen(all); step++) {
		struct parsed r;
		parse_pieces(&r, all, strlen(all), step);
		assert_true(r.tc.bg_answered);
		assert_int_equal(r.tc.bg_rgb[0], 250);
		assert_int_equal(r.tc.bg_rgb[1], 240);
		assert_int_equal(r.tc.bg_rgb[2], 230);
		assert_true(r.tc.da1_seen);
		assert_int_equal(r.tc.n_typeahead, 2);
		assert_memory_equal(r.tc.typeahead, "kj", 2);
	}
	struct ui_termcaps tc = parse(BG_BLACK FOOT);
	assert_true(tc.bg_answered);
	assert_int_equal(tc.bg_rgb[0] + tc.bg_rgb[1] + tc.bg_rgb[2], 0);
	tc = parse("\033]10;rgb:ffff/ffff/ffff\a" FOOT);
	assert_false(tc.bg_answered);
	tc = parse("\033]11;rgb:ff\033x"); /* cut: Alt-x is a key */
	assert_false(tc.bg_answered);
	assert_int_equal(tc.n_typeahead, 2);
}

/* Decide on tc as detect does, with COLORFGBG set to fgbg (NULL:
 * unset). */
static int verdict(struct ui_termcaps *tc, const char *fgbg)
{
	if (fgbg)
		setenv("COLORFGBG", fgbg, 1);
	else
		unsetenv("COLORFGBG");
	ui_termcaps_background(tc);
	return tc->bg_light;
}

static void test_background_verdict(void **state)
{
	(void)state;
	/* luminance: WCAG's numbers */
	assert_true(fabs(ui_luminance(255, 255, 255) - 1.0) < 1e-9);
	assert_true(fabs(ui_luminance(0, 0, 0)) < 1e-9);
	assert_true(fabs(ui_luminance(128, 128, 128) - 0.2158605) < 1e-6);
	/* OSC 11 decides: light above 0.179, the point where black text
	 * has more contrast than white */
	static const struct {
		int rgb[3];
		int light;
	} bgs[] = {
	    {{255, 255, 255}, 1}, {{0, 0, 0}, 0},     {{0, 43, 54}, 0},
	    {{253, 246, 227}, 1}, {{40, 44, 52}, 0},  {{118, 118, 118}, 1},
	    {{115, 115, 115}, 0}, {{255, 255, 0}, 1}, {{0, 0, 255}, 0}};
	for (size_t i = 0; i < sizeof bgs / sizeof *bgs; i++) {
		struct ui_termcaps tc;
		ui_termcaps_init(&tc);
		tc.bg_answered = 1;
		memcpy(tc.bg_rgb, bgs[i].rgb, sizeof tc.bg_rgb);
		/* COLORFGBG says the opposite: the terminal's answer wins */
		if (verdict(&tc, bgs[i].light ? "15;0" : "0;15") !=
		    bgs[i].light)
			fail_msg("#%02x%02x%02x: want %s", bgs[i].rgb[0],
			         bgs[i].rgb[1], bgs[i].rgb[2],
			         bgs[i].light ? "light" : "dark");
		assert_string_equal(tc.bg_from, "OSC 11");
	}
	/* no answer: COLORFGBG (its last field), then dark */
	static const struct {
		const char *v;
		int light;
	} env[] = {
	    {"0;15", 1}, {"0;7", 1},  {"15;0", 0},   {"0;default;15", 1},
	    {"7;8", 0},  {"0;12", 1}, {"15;6", 0},   {"default;default", -1},
	    {"15", -1},  {"0;", -1},  {"0;15x", -1}, {"0;16", -1},
	    {"", -1}};
	for (size_t i = 0; i < sizeof env / sizeof *env; i++) {
		if (ui_termcaps_colorfgbg(env[i].v) != env[i].light)
			fail_msg("COLORFGBG=%s: want %d", env[i].v,
			         env[i].light);
		struct ui_termcaps tc;
		ui_termcaps_init(&tc);
		assert_int_equal(verdict(&tc, env[i].v), env[i].light == 1);
		assert_string_equal(
		    tc.bg_from, env[i].light < 0 ? "nothing said: dark assumed"
		                                 : "COLORFGBG");
	}
	struct ui_termcaps tc;
	ui_termcaps_init(&tc);
	assert_false(verdict(&tc, NULL));
	assert_int_equal(ui_termcaps_colorfgbg(NULL), -1);
	unsetenv("COLORFGBG");
}

/* --theme auto before any detection reads COLORFGBG; other settings
 * pass through; reload swaps the theme in place once asked. */
static void test_theme_pick(void **state)
{
	(void)state;
	char xdg[] = "/tmp/assay-termcaps-theme.XXXXXX";
	assert_non_null(mkdtemp(xdg));
	setenv("XDG_CONFIG_HOME", xdg, 1); /* the bundled themes only */
	unsetenv("ASSAY_DATA_DIR");
	last_bg_light = -1;
	setenv("COLORFGBG", "0;15", 1);
	assert_string_equal(ui_termcaps_theme("auto"), "light");
	setenv("COLORFGBG", "15;0", 1);
	assert_string_equal(ui_termcaps_theme("auto"), "default");
	unsetenv("COLORFGBG");
	assert_string_equal(ui_termcaps_theme("auto"), "default");
	assert_string_equal(ui_termcaps_theme("mono"), "mono");
	assert_null(ui_termcaps_theme(NULL));
	assert_true(ui_termcaps_theme_auto("auto"));
	assert_false(ui_termcaps_theme_auto("light"));
	assert_false(ui_termcaps_theme_auto(NULL));

	struct ui_theme t;
	char *err = NULL;
	assert_int_equal(ui_theme_load(&t, ui_termcaps_theme("auto"), &err), 0);
	assert_string_equal(t.name, "default");
	struct ui_theme *where = &t;
	last_bg_light = 1; /* a detection found a light background */
	assert_int_equal(ui_termcaps_theme_reload(&t, "auto"), 0);
	assert_ptr_equal(where, &t);
	assert_string_equal(t.name, "light");
	assert_non_null(strstr(t.path, "/themes/light.json"));
	struct ui_theme light;
	assert_int_equal(ui_theme_load(&light, "light", &err), 0);
	assert_memory_equal(t.el, light.el, sizeof t.el);
	ui_theme_free(&light);
	/* a named theme is never swapped */
	assert_int_equal(ui_termcaps_theme_reload(&t, "default"), 0);
	assert_string_equal(t.name, "light");
	last_bg_light = 0;
	assert_int_equal(ui_termcaps_theme_reload(&t, "auto"), 0);
	assert_string_equal(t.name, "default");
	ui_theme_free(&t);
	last_bg_light = -1;
	rm_rf(xdg);
	unsetenv("XDG_CONFIG_HOME");
}

/* ---- late replies: the filter between get_wch and the keys ---- */

struct keysrc {
	const int *r; /* OK, KEY_CODE_YES, ERR */
	const wint_t *ch;
	int n, i;
};

static int src_get(void *arg, wint_t *ch)
{
	struct keysrc *k = arg;
	if (k->i >= k->n)
		return ERR;
	*ch = k->ch[k->i];
	return k->r[k->i++];
}

/* Feed `in` (ERR where a '\x01' stands: the next read finds nothing
 * yet) and return what came out, as a string (function keys as '#'). */
static char *filtered(struct ui_reply_filter *f, const char *in)
{
	int r[256];
	wint_t ch[256];
	int n = 0;
	for (const char *c = in; *c && n < 256; c++, n++) {
		r[n] = *c == '\x01' ? ERR : *c == '#' ? KEY_CODE_YES : OK;
		ch[n] = *c == '#' ? KEY_UP : (unsigned char)*c;
	}
	struct keysrc k = {r, ch, n, 0};
	static char out[256];
	size_t o = 0;
	while (k.i < k.n || f->nq) {
		wint_t c;
		int got = ui_reply_filter_get(f, src_get, &k, &c);
		if (got == ERR)
			continue; /* a pause in the input: read on */
		out[o++] = got == KEY_CODE_YES ? '#' : (char)c;
	}
	out[o] = '\0';
	return out;
}

static void test_late_reply_filter(void **state)
{
	(void)state;
	struct ui_reply_filter f;
	/* armed: a late DA1 is not typed into the message box */
	ui_reply_filter_init(&f, 1);
	assert_string_equal(filtered(&f, "hi" FOOT "x"), "hix");
	assert_false(f.armed); /* DA1 is the last reply */
	assert_int_equal(f.swallowed, strlen(FOOT));
	/* not armed (the terminal answered in time): keys as they come */
	assert_string_equal(filtered(&f, "a" FOOT), "a" FOOT);
	ui_reply_filter_init(&f, 1);
	/* every reply we asked for, typed keys around them */
	assert_string_equal(filtered(&f, "a" XTERM_VT340 "b"), "ab");
	ui_reply_filter_init(&f, 1);
	assert_string_equal(filtered(&f, "a" CELL "b\033[4;400;800tc"), "abc");
	assert_string_equal(filtered(&f, "a" BG_WHITE "b"), "ab");
	assert_string_equal(
	    filtered(&f, "\033]11;rgb:0/0/0\033\\c\033]11;\x01rgb:\x01"
	                 "1/2/3\ad"),
	    "cd");
	assert_string_equal(filtered(&f, "a\033_Gi=31;OK\033\\b"), "ab");
	assert_string_equal(
	    filtered(&f, "\033_Gi=31;ENOTSUPPORTED:x\033\\ok\033_Gi=31;"
	                 "OK\a!"),
	    "ok!");
	/* split by the link: the rest of a started reply is swallowed */
	assert_string_equal(filtered(&f, "\033[?62;\x01\x01"
	                                 "4;22cz"),
	                    "z");
	ui_reply_filter_init(&f, 1);
	assert_string_equal(filtered(&f, "\033_Gi=31;\x01O\x01K\033\x01\\q"),
	                    "q");
	/* keys are not replies: Esc, Alt-x, Alt-[, an unknown sequence,
	 * a function key, CSI 1 t, Esc then an arrow */
	assert_string_equal(filtered(&f, "\033\x01"), "\033");
	assert_string_equal(filtered(&f, "\033x"), "\033x");
	assert_string_equal(filtered(&f, "\033[\x01"
	                                 "a"),
	                    "\033[a");
	assert_string_equal(filtered(&f, "\033[1;5Z"), "\033[1;5Z");
	assert_string_equal(filtered(&f, "\033[1t\033[6;1t"),
	                    "\033[1t\033[6;1t");
	assert_string_equal(filtered(&f, "\033#\033_x"), "\033#\033_x");
	/* Alt-] and what follows it are keys, not the background */
	assert_string_equal(filtered(&f, "\033]ab\033]1x\033]10;z"),
	                    "\033]ab\033]1x\033]10;z");
	assert_string_equal(filtered(&f, "\033[12345678901234567890~"),
	                    "\033[12345678901234567890~");
	assert_true(f.armed);
	/* a reply broken off by a key: the key goes through */
	assert_string_equal(filtered(&f, "\033[?6#k"), "#k");
}

/* Detection arms the filter when the terminal was too slow, and with
 * the state of a reply cut by the deadline. */
static void test_detect_arms_filter(void **state)
{
	(void)state;
	struct ui_termcaps tc;
	struct ui_termcaps_parser p;
	ui_termcaps_init(&tc);
	ui_termcaps_parser_init(&p);
	ui_termcaps_feed(&tc, &p, "\033[?62;4", 7);
	filter_arm(&tc, &p);
	assert_true(late.armed);
	assert_string_equal(filtered(&late, ";22cX"), "X");
	assert_false(late.armed);
	ui_termcaps_init(&tc);
	ui_termcaps_parser_init(&p);
	ui_termcaps_feed(&tc, &p, FOOT, strlen(FOOT));
	filter_arm(&tc, &p);
	assert_false(late.armed);
	/* cut inside OSC 11: its rest is swallowed, then DA1 */
	ui_termcaps_init(&tc);
	ui_termcaps_parser_init(&p);
	ui_termcaps_feed(&tc, &p, "\033]11;rgb:ff", 11);
	filter_arm(&tc, &p);
	assert_true(late.armed);
	assert_string_equal(filtered(&late, "ff/ffff/ffff\aY" FOOT "Z"), "YZ");
	assert_false(late.armed);
}

/* Run detect in a child whose controlling terminal is the pty's slave
 * (so Ctrl-C there is a real SIGINT), with the master playing the
 * terminal: `before` is written once the queries are in, then after
 * delay_ms `replies`. The child reports on fd 3 of the pipe: the tty
 * modes after detect and what it parsed. Returns the wait status. */
static int detect_in_child(const char *before, int delay_ms,
                           const char *replies, int signal_it, char *report,
                           size_t cap, int *echo_after)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0)
		return -1;
	char name[64];
	snprintf(name, sizeof name, "%s", ptsname(master));
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(master);
		close(fds[0]);
		setsid();
		int tty = open(name, O_RDWR); /* the controlling terminal */
		if (tty < 0)
			_exit(90);
		struct ui_termcaps tc;
		ui_termcaps_detect(tty, tty, "auto", signal_it ? 3000 : 1000,
		                   &tc);
		struct termios t;
		tcgetattr(tty, &t);
		dprintf(fds[1], "echo=%d icanon=%d isig=%d sig=%d n=%zu t0=%d",
		        !!(t.c_lflag & ECHO), !!(t.c_lflag & ICANON),
		        !!(t.c_lflag & ISIG), tc.sig_typed, tc.n_typeahead,
		        tc.n_typeahead ? tc.typeahead[0] : -1);
		_exit(0);
	}
	close(fds[1]);
	/* the queries, then the terminal's part */
	char got[512];
	size_t n = 0;
	while (n < sizeof got - 1 && !strstr(got, "\033[c")) {
		ssize_t r = read(master, got + n, sizeof got - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		got[n] = '\0';
	}
	if (before && write(master, before, strlen(before)) < 0)
		fail_msg("write to the pty");
	if (signal_it) {
		usleep(100000);
		kill(pid, SIGTERM);
	}
	usleep((useconds_t)delay_ms * 1000);
	if (replies && write(master, replies, strlen(replies)) < 0)
		fail_msg("write to the pty");
	int status = 0;
	waitpid(pid, &status, 0);
	ssize_t r = read(fds[0], report, cap - 1);
	report[r > 0 ? r : 0] = '\0';
	close(fds[0]);
	/* the modes as the terminal is left, whoever ended the child */
	int slave = open(name, O_RDWR | O_NOCTTY);
	struct termios t;
	*echo_after = slave >= 0 && tcgetattr(slave, &t) == 0
	                  ? (t.c_lflag & (ECHO | ICANON)) == (ECHO | ICANON)
	                  : -1;
	if (slave >= 0)
		close(slave);
	close(master);
	return status;
}

/* Ctrl-C right after the queries: not a signal during the query (the
 * terminal would be left without echo), a byte the caller acts on. */
static void test_ctrl_c_during_query(void **state)
{
	(void)state;
	setenv("TERM", "xterm-256color", 1);
	unsetenv("TMUX");
	char report[256];
	int echo;
	int st =
	    detect_in_child("\x03", 50, FOOT, 0, report, sizeof report, &echo);
	if (st == -1)
		NO_PTY();
	if (WIFSIGNALED(st))
		fail_msg("detect died by signal %d", WTERMSIG(st));
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_string_equal(report, "echo=1 icanon=1 isig=1 sig=2 n=1 t0=3");
	assert_int_equal(echo, 1);
}

/* A signal from elsewhere while the terminal is raw: the process dies
 * as it would, the terminal is left as it was. */
static void test_signal_during_query(void **state)
{
	(void)state;
	setenv("TERM", "xterm-256color", 1);
	char report[256];
	int echo;
	int st =
	    detect_in_child(NULL, 0, NULL, 1, report, sizeof report, &echo);
	if (st == -1)
		NO_PTY();
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	assert_int_equal(echo, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_xterm_vt340),
	    cmocka_unit_test(test_xterm_plain),
	    cmocka_unit_test(test_sixel_terminals),
	    cmocka_unit_test(test_kitty),
	    cmocka_unit_test(test_tmux),
	    cmocka_unit_test(test_vt132_is_not_sixel),
	    cmocka_unit_test(test_split_everywhere),
	    cmocka_unit_test(test_interleaved_keys),
	    cmocka_unit_test(test_garbage),
	    cmocka_unit_test(test_choice_matrix),
	    cmocka_unit_test(test_env_hints),
	    cmocka_unit_test(test_detect_on_a_pty),
	    cmocka_unit_test(test_detect_silent_terminal),
	    cmocka_unit_test(test_cells_from_winsize),
	    cmocka_unit_test(test_hostile_reply_printable),
	    cmocka_unit_test(test_osc11_parse),
	    cmocka_unit_test(test_osc11_in_replies),
	    cmocka_unit_test(test_background_verdict),
	    cmocka_unit_test(test_theme_pick),
	    cmocka_unit_test(test_late_reply_filter),
	    cmocka_unit_test(test_detect_arms_filter),
	    cmocka_unit_test(test_ctrl_c_during_query),
	    cmocka_unit_test(test_signal_during_query),
	};
	return test_skip_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
