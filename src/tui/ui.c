/* ui.c: the interactive workbench: the session's observer, the one
 * poll loop (the terminal is one more fd; SIGWINCH comes through the
 * loop's self-pipe), and frames coalesced to at most one per
 * UI_FRAME_MS, built with wnoutrefresh and sent with one doupdate. It
 * wires the parts of struct ui (ui.h), each written by its owner: the
 * layout is layout.c's, the Workspace's listing workspace.c's, what is
 * drawn over the panes the overlay stack's (overlay.c); keys go to
 * keys.c. stderr goes to the run's log while curses owns the screen. */
#include "tui/ui.h"
#include "assay/termtext.h"
#include "tui/history.h"
#include "tui/image.h"
#include "tui/replay.h"
#include "tui/termcaps.h"

#include "assay/config.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/sandbox.h"
#include "assay/session.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <unistd.h>

#define NOTICE_MS 4000
/* What a second signal's exit writes while curses holds the terminal:
 * bracketed paste and the mouse off, attributes reset, the cursor shown,
 * the main screen back. */
#define UI_TERM_RESET                                                          \
	"\033[?2004l\033[?1000l\033[?1002l\033[?1006l\033[0m\033[?25h"         \
	"\033[?1049l\r\n"

static void ui_frame(struct ui *u);

/* The coalescing timer: one frame for everything touched meanwhile. */
static void ui_on_frame_timer(void *arg)
{
	struct ui *u = arg;
	u->fr.frame_timer = 0;
	ui_frame(u);
}

void ui_touch(struct ui *u, unsigned bits)
{
	u->fr.dirty |= bits;
	if (u->fr.frame_timer || !u->fr.dirty)
		return;
	int64_t due = u->fr.last_frame + UI_FRAME_MS - now_ms();
	u->fr.frame_timer =
	    loop_timer_add(u->loop, due > 0 ? due : 0, ui_on_frame_timer, u);
}

void ui_notice(struct ui *u, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(u->notice);
	char *raw = xvasprintf(fmt, ap);
	va_end(ap);
	u->notice = term_clean(raw, strlen(raw), 0);
	free(raw);
	u->notice_until = now_ms() + NOTICE_MS;
	ui_touch(u, UI_DIRTY_STATUS);
}

/* ---- leaving ----------------------------------------------------------- */

void ui_quit(struct ui *u)
{
	ui_confirm_quit_close(u);
	if (u->s && session_state(u->s) != SESSION_DONE)
		session_end(u->s);
	/* the end of a run may take a while (its archive): the loop goes
	 * on until run_end, and the screen with it */
	u->quitting = 1;
	if (!u->s || session_state(u->s) == SESSION_DONE)
		u->quit = 1;
	else
		ui_notice(u, "ending the run: the workspace is being saved");
}

void ui_leave_loop(struct ui *u)
{
	u->quit = 1;
}

/* ---- frames ------------------------------------------------------------ */

/* The dialogs follow the session: an Approval while a call waits for
 * a decision, else the step-mode pause. */
static void ui_sync_dialogs(struct ui *u)
{
	ui_approval_sync(u);
	ui_elicit_sync(u);
	ui_step_sync(u);
	ui_budget_sync(u);
}

/* A frame for a terminal too small to lay out. */
static void ui_frame_small(struct ui *u)
{
	werase(stdscr);
	mvwaddstr(stdscr, 0, 0, "terminal too small for assay (40x10)");
	wnoutrefresh(stdscr);
	ui_preview_draw(u); /* only erases a placed image */
	doupdate();
	ui_preview_emit(u); /* kitty's delete */
}

/* The panes that changed (all of them when an overlay did), unless
 * an overlay covers them all. */
static void ui_frame_panes(struct ui *u, unsigned d)
{
	static const int bit[P_COUNT] = {UI_DIRTY_CONV, UI_DIRTY_TOOLS,
	                                 UI_DIRTY_TREE, UI_DIRTY_INPUT};
	static void (*const draw[P_COUNT])(struct ui *) = {
	    ui_draw_conv, ui_draw_tools, ui_draw_tree, ui_draw_input};
	if (ui_overlay_flags(u) & UI_OV_OPAQUE)
		return;
	for (int p = 0; p < P_COUNT; p++) {
		if (!u->lay.g[p].shown)
			continue;
		if ((d & bit[p]) || (d & UI_DIRTY_OVERLAY)) {
			draw[p](u);
			wnoutrefresh(u->lay.g[p].win);
		}
	}
}

/* The cursor: the top overlay's; with none, the message box's when it
 * has the focus. */
static void ui_frame_cursor(struct ui *u)
{
	int y = 0, x = 0;
	int on = ui_overlay_cursor(u, &y, &x);
	if (on < 0) {
		WINDOW *w = u->lay.g[P_INPUT].win;
		on = u->lay.focus == P_INPUT && u->lay.g[P_INPUT].shown;
		if (on) { /* where the input window left it */
			y = getbegy(w) + getcury(w);
			x = getbegx(w) + getcurx(w);
		}
	}
	if (on)
		setsyx(y, x);
	curs_set(on ? 1 : 0);
}

/* The frame's time, for ASSAY_TUI_STATS. */
static void ui_frame_stats(struct ui *u, const struct timeval *tv0)
{
	struct timeval tv1;
	gettimeofday(&tv1, NULL);
	int64_t us = (int64_t)(tv1.tv_sec - tv0->tv_sec) * 1000000 +
	             (tv1.tv_usec - tv0->tv_usec);
	u->fr.frames++;
	if (us > u->fr.frame_us_max)
		u->fr.frame_us_max = us;
}

/* One frame: the panes, the preview box, the status bar, the overlays
 * bottom first, then the cursor; one doupdate, then the images. */
static void ui_frame(struct ui *u)
{
	int64_t t0 = now_ms();
	struct timeval tv0;
	if (!u->scr.screen || u->scr.screen_closed)
		return; /* the sandbox may start before the screen opens */
	if (ui_preview_busy(u))
		return; /* drawn when the image's bytes are out */
	gettimeofday(&tv0, NULL);
	ui_sync_dialogs(u);
	if (u->fr.dirty & UI_DIRTY_LAYOUT) {
		ui_layout_apply(u);
		u->fr.dirty = UI_DIRTY_EVERYTHING & ~UI_DIRTY_LAYOUT;
		wnoutrefresh(stdscr);
	}
	unsigned d = u->fr.dirty;
	u->fr.dirty = 0;
	if (u->lay.too_small) {
		ui_frame_small(u);
		u->fr.last_frame = t0;
		return;
	}
	ui_frame_panes(u, d);
	ui_preview_draw(u); /* over the Tools pane, under the overlays */
	ui_draw_status(u);
	wnoutrefresh(u->lay.status);
	ui_overlay_draw(u);
	ui_frame_cursor(u);
	doupdate();
	ui_preview_emit(u); /* images go onto what curses has sent */
	u->fr.last_frame = t0;
	ui_frame_stats(u, &tv0);
}

/* Once a second with ASSAY_TUI_STATS: frames and the longest. */
static void ui_on_stats(void *arg)
{
	struct ui *u = arg;
	int64_t t = now_ms();
	log_info("tui: frames %ld in %lld ms (longest %lld us)", u->fr.frames,
	         (long long)(t - u->fr.stats_t0),
	         (long long)u->fr.frame_us_max);
	u->fr.frames = 0;
	u->fr.frame_us_max = 0;
	u->fr.stats_t0 = t;
	u->fr.stats_timer = loop_timer_add(u->loop, 1000, ui_on_stats, u);
}

/* Spinners and clocks move: a frame now and then while it matters. */
static void ui_on_tick(void *arg)
{
	struct ui *u = arg;
	int running = 0;
	for (int i = u->m.ncalls - 1; i >= 0 && i >= u->m.ncalls - 8; i--)
		running |= u->m.calls[i]->state == UI_CALL_RUNNING;
	unsigned bits = UI_DIRTY_STATUS;
	if (running)
		bits |= UI_DIRTY_TOOLS | UI_DIRTY_CONV;
	if (u->m.phase != UI_ENDED || (u->notice && now_ms() < u->notice_until))
		ui_touch(u, bits);
	u->fr.tick_timer =
	    loop_timer_add(u->loop, running ? 100 : 1000, ui_on_tick, u);
}

/* run_start (and run_resume): the workspace pane watches the run's
 * workspace when it is on this host. */
static void ui_hook_run_start(void *arg)
{
	ui_ws_run_start(arg);
}

/* run_end: the workspace no longer changes. */
static void ui_hook_run_end(void *arg)
{
	ui_ws_run_end(arg);
}

/* The demo ends its run once the model has answered. */
static void ui_end_run_timer(void *arg)
{
	struct ui *u = arg;
	if (u->s)
		session_end(u->s);
}

/* Every session event: the model takes it, the view follows it. */
static void ui_on_event(void *arg, const cJSON *ev)
{
	struct ui *u = arg;
	enum ui_phase before = u->m.phase;
	enum event_type type = event_type_of(ev);
	ui_model_event(&u->m, ev);
	if (u->m.phase != before) /* the input box tells the phase */
		ui_model_touch(&u->m, UI_DIRTY_INPUT);
	if (type == EV_TOOL_CALL && u->tools.sel < 0)
		ui_select_call(u, u->m.ncalls - 1, 0);
	if (ui_model_take_new_call(&u->m)) { /* follow the call that runs */
		if (u->tools.follow)
			ui_select_call(u, u->m.active_call, 0);
	}
	if (type == EV_IDLE && u->opts->end_when_done &&
	    !strcmp(ev_str(ev, EVF_REASON, ""), "answered"))
		loop_timer_add(u->loop, 0, ui_end_run_timer, u);
	if (type == EV_WORKSPACE_CHANGE)
		ui_ws_changed(u);
	if (type == EV_EXEC_OUTPUT) /* the pager may show it */
		ui_model_touch(&u->m, UI_DIRTY_PAGER);
	if (u->quitting && session_state(u->s) == SESSION_DONE)
		u->quit = 1; /* the end it waited for */
	ui_sync_dialogs(u);
	ui_touch(u, ui_model_take_dirty(&u->m));
}

/* ---- the terminal ------------------------------------------------------- */

/* Keys from the terminal, all that curses has. Alt-x arrives as ESC
 * x: Alt-Enter is a new line (Ctrl-J), other Alt keys are the key. */
static void ui_on_stdin(int fd, int revents, void *arg)
{
	struct ui *u = arg;
	wint_t ch;
	int r;
	(void)fd;
	if (revents & (POLLHUP | POLLERR | POLLNVAL)) {
		/* the terminal is gone: end the run and leave */
		loop_fd_del(u->loop, STDIN_FILENO);
		if (u->view)
			ui_view_leave(u, 1);
		else
			ui_quit(u);
		return;
	}
	while ((r = ui_termcaps_get_wch(&ch)) != ERR) {
		int fn = r == KEY_CODE_YES, key = (int)ch;
		if (!fn && key == UI_KEY_ESC) {
			wint_t ch2;
			int r2 = ui_termcaps_get_wch(&ch2);
			if (r2 == OK && ui_key_enter((int)ch2, 0)) {
				key = UI_KEY_CTRL_J;
			} else if (r2 != ERR) {
				fn = r2 == KEY_CODE_YES;
				key = (int)ch2;
			}
		}
		ui_handle_key(u, key, fn);
		ui_sync_dialogs(u);
		if (u->quit)
			break;
	}
}

/* Keys typed while the terminal was asked about images were pushed
 * back into curses (ui_preview_typeahead): read them now, not with the
 * next key. */
static void ui_drain_typeahead(void *arg)
{
	ui_on_stdin(STDIN_FILENO, 0, arg);
}

/* SIGWINCH: curses learns the size; the next frame lays out again. */
static void ui_on_winch(int sig, void *arg)
{
	struct ui *u = arg;
	struct winsize ws;
	(void)sig;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 &&
	    ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
	ui_touch(u, UI_DIRTY_LAYOUT);
}

/* SIGTERM, SIGINT, SIGHUP: end the run and leave. */
static void ui_on_terminate(int sig, void *arg)
{
	struct ui *u = arg;
	log_info("tui: signal %d: ending the run", sig);
	ui_quit(u);
}

/* ---- start and end ----------------------------------------------------- */

/* curses on the terminal, after the terminal was asked what it shows. */
static int ui_screen_open(struct ui *u)
{
	ui_preview_detect(u); /* asks the terminal: before curses */
	ui_termcaps_theme_reload(&u->theme, u->cfg->theme); /* auto: answered */
	struct termios before;
	int saved = tcgetattr(STDOUT_FILENO, &before) == 0;
	u->scr.screen = newterm(NULL, stdout, stdin);
	if (!u->scr.screen)
		return -1;
	/* a second SIGTERM ends assay from its handler: the terminal back */
	if (saved)
		loop_terminal_guard(STDOUT_FILENO, &before, UI_TERM_RESET);
	ui_preview_typeahead(u);
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	meta(stdscr, TRUE);
	set_escdelay(25);
	mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED |
	              BUTTON5_PRESSED,
	          NULL);
	mouseinterval(0);
	define_key("\033[200~", UI_KEY_PASTE_BEGIN);
	define_key("\033[201~", UI_KEY_PASTE_END);
	const char *nc = getenv("NO_COLOR");
	ui_colors_init(&u->theme, nc && *nc);
	fputs("\033[?2004h", stdout); /* bracketed paste */
	fflush(stdout);
	u->fr.dirty = UI_DIRTY_EVERYTHING;
	return 0;
}

/* The terminal back as it was (the screen is freed at cleanup). */
static void ui_screen_close(void)
{
	fputs("\033[?2004l", stdout);
	fflush(stdout);
	curs_set(1);
	endwin();
	loop_terminal_guard(-1, NULL, NULL);
}

/* stderr into the run's log while curses owns the terminal; the old
 * stderr is kept in u->scr.saved_stderr. */
static void ui_redirect_stderr(struct ui *u, const char *run_dir)
{
	/* a replay writes nothing into the run it shows */
	char *path = run_dir ? xasprintf("%s/assay.log", run_dir) : NULL;
	int fd = path ? open_regular(path,
	                             O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW,
	                             0644, NULL)
	              : open("/dev/null", O_WRONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return;
	u->scr.saved_stderr = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
}

/* stderr is the terminal's again. */
static void ui_restore_stderr(struct ui *u)
{
	if (u->scr.saved_stderr < 0)
		return;
	dup2(u->scr.saved_stderr, STDERR_FILENO);
	close(u->scr.saved_stderr);
	u->scr.saved_stderr = -1;
}

/* The view state before anything is shown. */
static void ui_defaults(struct ui *u, struct config *c, const struct ui_opts *o)
{
	memset(u, 0, sizeof *u);
	u->cfg = c;
	u->opts = o;
	ui_ws_init(&u->ws);
	u->scr.saved_stderr = -1;
	ui_tools_init(&u->tools);
	ui_conv_init(&u->conv);
	ui_layout_focus(&u->lay, P_INPUT);
	ui_input_init(&u->in);
	ui_model_init(&u->m);
	ui_model_hooks(&u->m, ui_hook_run_start, ui_hook_run_end, u);
}

/* The session (or the recorded run) the workbench shows; -1 + *err
 * and *code when it cannot start. */
static int ui_attach(struct ui *u, char **err, int *code)
{
	const struct ui_opts *o = u->opts;
	if (o->replay) { /* a recorded run: no session, no sandbox */
		*code = EXIT_USAGE;
		return ui_replay_attach(u, o->replay, err);
	}
	*code = EXIT_FAILED;
	u->s = session_new(u->loop, u->cfg);
	session_set_interactive(u->s, 1);
	session_observe(u->s, ui_on_event, u);
	/* risky calls ask in the Approval dialog instead of being denied */
	ui_approval_attach(u, 1);
	ui_step_attach(u, u->cfg->step);
	ui_budget_attach(u);
	if ((o->resume ? session_resume(u->s, o->resume, o->prompt, err)
	               : session_start(u->s, o->prompt, err)) < 0) {
		*code = session_exit_code(u->s);
		return -1;
	}
	/* the sandbox starts through the loop; one that cannot start is
	 * told like a refused start, before the screen opens */
	while (session_state(u->s) == SESSION_STARTING)
		loop_once(u->loop, -1);
	if (session_error(u->s)) {
		while (session_state(u->s) != SESSION_DONE)
			loop_once(u->loop, -1);
		*err = xstrdup(session_error(u->s));
		*code = session_exit_code(u->s);
		return -1;
	}
	return 0;
}

/* The terminal, the signals and the timers the loop serves (a view's
 * owner keeps the signals that end it). */
static void ui_watch_terminal(struct ui *u)
{
	loop_fd_add(u->loop, STDIN_FILENO, POLLIN, ui_on_stdin, u);
	loop_timer_add(u->loop, 0, ui_drain_typeahead, u);
	loop_signal(u->loop, SIGWINCH, ui_on_winch, u);
	if (u->view) {
		if (u->m.fixed_clock < 0 || u->m.phase != UI_ENDED)
			u->fr.tick_timer =
			    loop_timer_add(u->loop, 100, ui_on_tick, u);
		ui_touch(u, UI_DIRTY_EVERYTHING);
		return;
	}
	loop_signal(u->loop, SIGTERM, ui_on_terminate, u);
	loop_signal(u->loop, SIGINT, ui_on_terminate, u);
	loop_signal(u->loop, SIGHUP, ui_on_terminate, u);
	u->fr.stats = getenv("ASSAY_TUI_STATS") && *getenv("ASSAY_TUI_STATS");
	if (u->fr.stats) {
		u->fr.stats_t0 = now_ms();
		u->fr.stats_timer =
		    loop_timer_add(u->loop, 1000, ui_on_stats, u);
	}
	if (u->m.fixed_clock < 0)
		u->fr.tick_timer = loop_timer_add(u->loop, 100, ui_on_tick, u);
	ui_touch(u, UI_DIRTY_EVERYTHING);
}

/* No API key (a first run): the workbench opens all the same and says
 * the ways on; the status bar marks the model. */
static void ui_no_key_notice(struct ui *u)
{
	const char *why = u->s ? session_no_key(u->s) : NULL;
	if (!why)
		return;
	ui_model_set_no_key(&u->m);
	char *text = xasprintf(
	    "%s. Until then what you send fails. Three ways on: set the key "
	    "and start assay again; --provider ollama (a local model, no "
	    "key); or assay demo (a scripted model, to see the workbench "
	    "work).",
	    why);
	ui_model_notice(&u->m, text);
	free(text);
}

/* Everything up to the first frame; -1 with *code when the workbench
 * cannot open (what went wrong is printed on stderr). */
static int ui_init(struct ui *u, struct config *c, const struct ui_opts *o,
                   int *code)
{
	char *err = NULL;
	ui_defaults(u, c, o);
	*code = EXIT_USAGE;
	if (ui_theme_load(&u->theme, ui_termcaps_theme(c->theme), &err) < 0 ||
	    ui_terminal_check(&err) < 0)
		goto fail;
	setlocale(LC_ALL, "");
	ui_ascii = strcmp(nl_langinfo(CODESET), "UTF-8") != 0;
	*code = EXIT_FAILED;
	u->loop = loop_new();
	if (!u->loop) {
		err = xstrdup("cannot create the event loop");
		goto fail;
	}
	if (ui_attach(u, &err, code) < 0)
		goto fail;
	ui_no_key_notice(u);
	ui_redirect_stderr(u, u->s ? session_run_dir(u->s) : NULL);
	ui_hist_attach(u); /* the project's earlier messages */
	if (ui_screen_open(u) < 0) {
		ui_restore_stderr(u);
		fprintf(stderr,
		        "assay: cannot open the terminal (TERM=%s): "
		        "try assay run for a headless run\n",
		        getenv("TERM") ? getenv("TERM") : "");
		if (u->s) {
			session_end(u->s);
			while (session_state(u->s) != SESSION_DONE)
				loop_once(u->loop, -1);
		}
		*code = EXIT_FAILED;
		return -1;
	}
	ui_watch_terminal(u);
	return 0;
fail:
	fprintf(stderr, "assay: %s\n", err ? err : "cannot start");
	free(err);
	return -1;
}

/* The loop until the user quits (and the run has ended); the exit
 * code. */
static int ui_run(struct ui *u)
{
	while (!u->quit) {
		loop_once(u->loop, -1);
		if (u->quitting &&
		    (!u->s || session_state(u->s) == SESSION_DONE))
			u->quit = 1;
	}
	if (u->fr.stats)
		ui_on_stats(u);
	ui_preview_flush(u);
	ui_screen_close();
	u->scr.screen_closed = 1;
	ui_restore_stderr(u);
	if (!u->s) /* a replay */
		return EXIT_OK;
	int code = session_exit_code(u->s);
	fprintf(stderr, "assay: run %s (exit %d); run dir %s\n",
	        u->m.end_status ? u->m.end_status : "ended", code,
	        session_run_dir(u->s));
	return code;
}

/* Everything ui_init made, in the order that nothing is used after it
 * is freed (the overlays before their owners, windows before the
 * screen, the loop last); a view's owner keeps the session and the
 * loop. */
static void ui_cleanup(struct ui *u)
{
	ui_overlay_clear(u);
	uint64_t *timers[] = {&u->fr.frame_timer, &u->fr.tick_timer,
	                      &u->fr.stats_timer, &u->view_timer};
	for (size_t i = 0; i < sizeof timers / sizeof *timers; i++)
		if (*timers[i])
			loop_timer_cancel(u->loop, *timers[i]);
	if (!u->view)
		session_free(u->s);
	ui_ws_free(u);
	ui_approval_free(u);
	ui_replay_free(u);
	ui_step_free(u);
	ui_budget_free(u);
	ui_layout_drop(u);
	ui_preview_free(u);
	ui_tail_free(&u->tools.tail);
	ui_model_free(&u->m);
	ui_input_free(&u->in);
	ui_theme_free(&u->theme);
	free(u->notice);
	if (u->scr.screen) /* after its windows */
		delscreen(u->scr.screen);
	if (u->loop && !u->view)
		loop_free(u->loop);
}

int ui_main(struct config *c, const struct ui_opts *o)
{
	struct ui u;
	int code;
	if (ui_init(&u, c, o, &code) == 0)
		code = ui_run(&u);
	ui_cleanup(&u);
	return code;
}

/* ---- a view of a session another frontend owns ------------------------ */

static void ui_view_on_timer(void *arg)
{
	struct ui *u = arg;
	u->view_timer = 0;
	if (u->view_interrupt)
		u->view->interrupt(u->view->arg);
	else
		u->view->leave(u->view->arg);
}

void ui_view_leave(struct ui *u, int interrupt)
{
	u->view_interrupt |= interrupt;
	u->quit = 1; /* no more keys: the rest are the owner's */
	if (!u->view_timer)
		u->view_timer = loop_timer_add(u->loop, 0, ui_view_on_timer, u);
}

void ui_view_event(struct ui *u, const cJSON *ev)
{
	double seq = ev_num(ev, EVF_SEQ, 0);
	if (!u || (seq > 0 && seq <= u->view_seq))
		return;
	if (seq > 0)
		u->view_seq = seq;
	ui_on_event(u, ev);
}

/* The run so far from its transcript; none yet is fine while the
 * session starts. */
static int ui_view_load(struct ui *u, const char *run_dir, char **err)
{
	struct ui_transcript t;
	char *terr = NULL;
	if (ui_transcript_load(&t, run_dir, &terr) < 0) {
		if (!u->s) {
			*err = terr;
			return -1;
		}
		free(terr);
		return 0;
	}
	for (int i = 0; i < t.n; i++)
		ui_view_event(u, t.ev[i]);
	ui_transcript_free(&t);
	return 0;
}

struct ui *ui_view_open(struct loop *l, struct config *c, struct session *s,
                        const char *run_dir, const struct ui_view_ops *ops,
                        char **err)
{
	static const struct ui_opts none;
	struct ui *u = xmalloc(sizeof *u);
	ui_defaults(u, c, &none);
	u->loop = l;
	u->s = s;
	u->view = ops;
	if (ui_theme_load(&u->theme, ui_termcaps_theme(c->theme), err) < 0 ||
	    ui_terminal_check(err) < 0 || ui_view_load(u, run_dir, err) < 0)
		goto fail;
	setlocale(LC_ALL, "");
	ui_ascii = strcmp(nl_langinfo(CODESET), "UTF-8") != 0;
	/* the clocks go on from the run's time now */
	ui_model_set_clock(&u->m, s ? session_clock(s) : u->m.last_t);
	if (s)
		ui_approval_attach(u, 0);
	ui_redirect_stderr(u, ops->log_dir);
	if (ui_screen_open(u) < 0) {
		ui_restore_stderr(u);
		*err = xasprintf("cannot open the terminal (TERM=%s)",
		                 getenv("TERM") ? getenv("TERM") : "");
		goto fail;
	}
	ui_watch_terminal(u);
	ui_approval_sync(u);
	return u;
fail:
	ui_cleanup(u);
	free(u);
	return NULL;
}

void ui_view_request(struct ui *u)
{
	if (u)
		ui_approval_on_request(u);
}

void ui_view_cancel(struct ui *u, const char *id)
{
	if (u)
		ui_approval_on_cancel(u, id);
}

void ui_view_detach(struct ui *u, const char *why)
{
	if (!u)
		return;
	ui_approval_free(u);
	ui_ws_run_end(u);
	u->s = NULL;
	if (why)
		ui_notice(u, "%s", why);
	ui_touch(u, UI_DIRTY_EVERYTHING);
}

void ui_view_notice(struct ui *u, const char *text)
{
	if (u)
		ui_notice(u, "%s", text);
}

void ui_view_close(struct ui *u)
{
	if (!u)
		return;
	ui_preview_flush(u);
	ui_screen_close();
	u->scr.screen_closed = 1;
	ui_restore_stderr(u);
	loop_fd_del(u->loop, STDIN_FILENO);
	loop_signal(u->loop, SIGWINCH, NULL, NULL);
	ui_cleanup(u);
	free(u);
}
