/* eval_live.c: `assay eval` on a terminal. Below the progress lines, a
 * table of the sessions under way (state, turn, tokens, cost, elapsed)
 * redrawn in place; with stdin a terminal too, its keys: Up/Down (or
 * j/k) select a session, Enter opens its workbench view (tui's
 * ui_view_open: read-only while it runs, its Approval dialog when a
 * call waits for a decision, its record while it is checked), and Esc
 * there comes back. Every session has an approver here: a call that
 * asks waits ("asking" in the table) until someone answers it in the
 * view. The lines the eval says while a view is open are held and
 * printed when it closes. The terminal's modes are the eval's only
 * while the table has the keys (cbreak, no echo, Ctrl-C still a
 * signal) and the view's while it is open. */
#include "cli/eval.h"

#include "assay/loop.h"
#include "assay/session.h"
#include "assay/util.h"

#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIVE_ROWS 20 /* sessions shown at most */
#define LIVE_TICK_MS 250

enum live_key { LK_NONE, LK_UP, LK_DOWN, LK_ENTER };

static void live_on_stdin(int fd, int revents, void *arg);

/* ---- the table ---- */

/* Take the table off the screen (the cursor back where it began). */
static void live_erase(struct eval *ev)
{
	if (!ev->live || !ev->live_lines)
		return;
	fprintf(stderr, "\033[%dA\033[J", ev->live_lines);
	ev->live_lines = 0;
}

/* The jobs the table shows, in order: running or being checked. */
static size_t live_rows(struct eval *ev, size_t *row)
{
	size_t n = 0;
	for (size_t i = 0; i < ev->n && n < LIVE_ROWS; i++)
		if (ev->jobs[i].state == JOB_RUNNING ||
		    ev->jobs[i].state == JOB_CHECKING)
			row[n++] = i;
	return n;
}

static int live_asking(const struct job *jb)
{
	return jb->state == JOB_RUNNING && jb->s &&
	       session_state(jb->s) == SESSION_AWAITING_APPROVAL;
}

/* The selection on a row still shown: the same job, else the next
 * one below it, else the last. */
static void live_fix_sel(struct eval *ev, const size_t *row, size_t n)
{
	if (!ev->interactive || !n) {
		ev->sel = -1;
		return;
	}
	for (size_t r = 0; r < n; r++)
		if ((long)row[r] >= ev->sel) {
			ev->sel = (long)row[r];
			return;
		}
	ev->sel = (long)row[n - 1];
}

static void live_draw_row(struct eval *ev, const struct job *jb, int sel)
{
	char who[96];
	snprintf(who, sizeof who, "%s x %s r%d", jb->name, job_model(jb),
	         jb->repeat);
	const char *state = jb->state == JOB_CHECKING ? "checking"
	                    : live_asking(jb)         ? "asking"
	                                              : "running";
	fprintf(stderr,
	        "%s%c %-40.40s %-8s turn %-3d %8.0f tok  $%-8.4f %6.1f s%s\n",
	        sel ? "\033[7m" : "", sel ? '>' : ' ', who, state,
	        jb->live_turn, jb->live_tok, jb->live_cost,
	        (double)(now_ms() - jb->t0) / 1000, sel ? "\033[0m" : "");
	ev->live_lines++;
}

/* The sessions under way: state, turn, tokens, cost, elapsed. */
static void live_draw(struct eval *ev)
{
	if (!ev->live || ev->view)
		return;
	live_erase(ev);
	size_t row[LIVE_ROWS] = {0};
	size_t n = live_rows(ev, row), passed = 0, asking = 0;
	live_fix_sel(ev, row, n);
	for (size_t i = 0; i < ev->n; i++) {
		passed += ev->jobs[i].state == JOB_REPORTED && ev->jobs[i].pass;
		asking += live_asking(&ev->jobs[i]);
	}
	fprintf(stderr,
	        "\033[1m%zu of %zu done, %zu passed, %zu running\033[0m",
	        ev->done, ev->n, passed, ev->running);
	if (asking)
		fprintf(stderr, ", \033[1;33m%zu asking for approval\033[0m",
		        asking);
	fputc('\n', stderr);
	ev->live_lines = 1;
	for (size_t r = 0; r < n; r++)
		live_draw_row(ev, &ev->jobs[row[r]], (long)row[r] == ev->sel);
	if (ev->interactive && n) {
		fprintf(stderr, "\033[2m  Up/Down select, Enter opens the "
		                "session, Ctrl-C stops all\033[0m\n");
		ev->live_lines++;
	}
	fflush(stderr);
}

static void live_tick(void *arg)
{
	struct eval *ev = arg;
	live_draw(ev);
	ev->live_timer = loop_timer_add(ev->loop, LIVE_TICK_MS, live_tick, ev);
}

void eval_say(struct eval *ev, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *line = xvasprintf(fmt, ap);
	va_end(ap);
	if (ev->view) {
		buf_append(&ev->held, line, strlen(line));
	} else {
		live_erase(ev);
		fputs(line, stderr);
		fflush(stderr);
	}
	free(line);
}

/* ---- the keys ---- */

/* The table's modes: keys one by one, not echoed; Ctrl-C stays the
 * signal that stops the eval. on 0: the terminal's own again. */
static void live_tty(struct eval *ev, int on)
{
	if (!ev->interactive)
		return;
	if (!on) {
		if (ev->tio_saved)
			tcsetattr(STDIN_FILENO, TCSANOW, &ev->tio);
		loop_fd_del(ev->loop, STDIN_FILENO);
		return;
	}
	if (!ev->tio_saved) {
		if (tcgetattr(STDIN_FILENO, &ev->tio) < 0) {
			ev->interactive = 0;
			return;
		}
		ev->tio_saved = 1;
	}
	struct termios t = ev->tio;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &t);
	ev->nkeys = 0;
	loop_fd_add(ev->loop, STDIN_FILENO, POLLIN, live_on_stdin, ev);
}

/* The first key in ev->keys, taken off; LK_NONE with *wait when a
 * sequence is still cut. Arrows come as ESC [ A or ESC O A. */
static enum live_key live_parse(struct eval *ev, int *wait)
{
	char *k = ev->keys;
	size_t used = 1;
	enum live_key key = LK_NONE;
	*wait = 0;
	if (k[0] == '\033') {
		if (ev->nkeys < 2 ||
		    ((k[1] == '[' || k[1] == 'O') && ev->nkeys < 3)) {
			*wait = 1;
			return LK_NONE;
		}
		if (k[1] == '[' || k[1] == 'O') {
			used = 2;
			while (used < ev->nkeys &&
			       !(k[used] >= '@' && k[used] <= '~'))
				used++;
			if (used == ev->nkeys) { /* no final byte yet */
				*wait = ev->nkeys < sizeof ev->keys;
				used = *wait ? 0 : ev->nkeys;
			} else {
				key = k[used] == 'A'   ? LK_UP
				      : k[used] == 'B' ? LK_DOWN
				                       : LK_NONE;
				used++;
			}
		}
	} else if (k[0] == 'k') {
		key = LK_UP;
	} else if (k[0] == 'j') {
		key = LK_DOWN;
	} else if (k[0] == '\r' || k[0] == '\n') {
		key = LK_ENTER;
	}
	memmove(k, k + used, ev->nkeys - used);
	ev->nkeys -= used;
	return key;
}

/* Up or Down: the row above or below the selected one. */
static void live_move(struct eval *ev, int dir)
{
	size_t row[LIVE_ROWS] = {0};
	size_t n = live_rows(ev, row);
	live_fix_sel(ev, row, n);
	for (size_t r = 0; r < n; r++)
		if ((long)row[r] == ev->sel) {
			long to = (long)r + dir;
			if (to >= 0 && to < (long)n)
				ev->sel = (long)row[to];
			break;
		}
	live_draw(ev);
}

static void live_leave(void *arg)
{
	live_close(arg);
}

static void live_stop_all(void *arg)
{
	struct eval *ev = arg;
	live_close(ev);
	eval_interrupt(ev);
}

/* Enter: the selected session's workbench view takes the terminal. */
static void live_open(struct eval *ev)
{
	if (ev->sel < 0 || ev->view)
		return;
	struct job *jb = &ev->jobs[ev->sel];
	if (jb->state != JOB_RUNNING && jb->state != JOB_CHECKING)
		return;
	live_erase(ev);
	live_tty(ev, 0);
	ev->view_ops =
	    (struct ui_view_ops){live_leave, live_stop_all, ev, ev->dir};
	char *err = NULL;
	ev->view = ui_view_open(ev->loop, &jb->cfg,
	                        jb->state == JOB_RUNNING ? jb->s : NULL,
	                        jb->run_dir, &ev->view_ops, &err);
	if (!ev->view) {
		live_tty(ev, 1);
		eval_say(ev, "assay eval: cannot open %s: %s\n", jb->run_dir,
		         err ? err : "the view failed");
		free(err);
		return;
	}
	ev->view_job = jb;
	ev->over_told = 0;
	if (jb->state == JOB_CHECKING)
		ui_view_notice(ev->view, "the session has ended: its check "
		                         "runs (Esc: back to the table)");
}

static void live_on_stdin(int fd, int revents, void *arg)
{
	struct eval *ev = arg;
	if (revents & (POLLHUP | POLLERR | POLLNVAL)) {
		loop_fd_del(ev->loop, fd);
		return;
	}
	ssize_t n = read(fd, ev->keys + ev->nkeys, sizeof ev->keys - ev->nkeys);
	if (n <= 0) {
		if (n == 0)
			loop_fd_del(ev->loop, fd);
		return;
	}
	ev->nkeys += (size_t)n;
	int wait = 0;
	while (ev->nkeys && !wait && !ev->view) {
		enum live_key k = live_parse(ev, &wait);
		if (k == LK_UP || k == LK_DOWN)
			live_move(ev, k == LK_UP ? -1 : 1);
		else if (k == LK_ENTER)
			live_open(ev);
	}
}

/* ---- the view and the sessions ---- */

void live_close(struct eval *ev)
{
	if (!ev->view)
		return;
	ui_view_close(ev->view);
	ev->view = NULL;
	ev->view_job = NULL;
	live_tty(ev, 1);
	if (ev->held.len) {
		fwrite(ev->held.data, 1, ev->held.len, stderr);
		buf_reset(&ev->held);
	}
	live_draw(ev);
}

int live_holds(struct eval *ev)
{
	if (!ev->view)
		return 0;
	if (!ev->over_told++)
		ui_view_notice(ev->view, "the eval is over: Esc for its "
		                         "summary");
	return 1;
}

void live_event(struct job *jb, const cJSON *e)
{
	if (jb->ev->view_job == jb)
		ui_view_event(jb->ev->view, e);
}

void live_detach(struct job *jb)
{
	if (jb->ev->view_job == jb)
		ui_view_detach(jb->ev->view, "the session has ended: its "
		                             "check runs (Esc: back to the "
		                             "table)");
}

void live_result(struct job *jb, const char *line)
{
	struct eval *ev = jb->ev;
	if (ev->view_job != jb)
		return;
	if (ev->done < ev->n) {
		ui_view_notice(ev->view, line);
		return;
	}
	char *said =
	    xasprintf("%s; the eval is over: Esc for its summary", line);
	ui_view_notice(ev->view, said);
	free(said);
	ev->over_told = 1;
}

/* A call of the job's session waits for a decision: its view's
 * dialog shows it, else the table says "asking". */
static void live_on_request(void *arg, const struct session_approval *req)
{
	struct job *jb = arg;
	(void)req;
	if (jb->ev->view_job == jb)
		ui_view_request(jb->ev->view);
	else
		live_draw(jb->ev);
}

static void live_on_cancel(void *arg, const char *id)
{
	struct job *jb = arg;
	if (jb->ev->view_job == jb)
		ui_view_cancel(jb->ev->view, id);
}

void live_approver(struct job *jb)
{
	static const struct session_approver ops = {live_on_request,
	                                            live_on_cancel, NULL, NULL};
	if (jb->ev->interactive)
		session_set_approver(jb->s, &ops, jb);
}

void live_start(struct eval *ev)
{
	ev->sel = -1;
	ev->live = isatty(STDERR_FILENO) && !getenv("ASSAY_EVAL_PLAIN");
	if (!ev->live)
		return;
	ev->interactive =
	    isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && !ev->json;
	buf_init(&ev->held, 0);
	live_tty(ev, 1);
	ev->live_timer = loop_timer_add(ev->loop, 0, live_tick, ev);
}

void live_stop(struct eval *ev)
{
	live_close(ev);
	if (ev->live_timer)
		loop_timer_cancel(ev->loop, ev->live_timer);
	ev->live_timer = 0;
	live_erase(ev);
	live_tty(ev, 0);
	if (ev->live)
		buf_free(&ev->held);
}
