/* step.c: headless --step. At each breakpoint the session pauses and
 * this asks on the controlling terminal (/dev/tty): what is about to be
 * sent or run, then n (continue), e (edit: one replacement line), k
 * (skip) or x (end the run). Lines are read through the loop, never
 * with a blocking read; without a terminal --step refuses to start. */
#include "cli.h"

#include "assay/buf.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_BYTES (1u << 20)

enum stepui_mode { M_OFF, M_CHOICE, M_EDIT };

struct stepui {
	struct session *s;
	struct loop *loop;
	int fd;
	enum stepui_mode mode;
	struct buf line;
	int exec;     /* the pause is before an execution */
	int editable; /* ... of a shell or python call */
};

/* The choices of this pause, and wait for a line. */
static void stepui_choices(struct stepui *u)
{
	if (u->exec)
		fd_printf(u->fd, "  [n] run  %s[k] skip  [x] end the run > ",
		          u->editable ? "[e] edit  " : "");
	else
		fd_printf(u->fd, "  [n] send  [x] end the run > ");
	u->mode = M_CHOICE;
}

/* Answer the pause; on refusal say why and ask again. */
static void stepui_answer(struct stepui *u, enum session_step_action a,
                          const char *edited)
{
	char *err = NULL;
	if (session_step(u->s, a, edited, &err) < 0) {
		fd_printf(u->fd, "  cannot: %s\n", err);
		free(err);
		stepui_choices(u);
		return;
	}
	u->mode = M_OFF;
	loop_fd_del(u->loop, u->fd);
}

/* One line typed: a choice, or the replacement when editing. */
static void stepui_on_line(struct stepui *u, char *line)
{
	if (u->mode == M_EDIT) {
		if (!*line) {
			fd_printf(u->fd, "  (empty: nothing changed)\n");
			stepui_choices(u);
			return;
		}
		stepui_answer(u, SESSION_STEP_EDIT, line);
		return;
	}
	char c = line[strspn(line, " \t")];
	if (c == 'n' || c == 'N') {
		stepui_answer(u, SESSION_STEP_CONTINUE, NULL);
	} else if ((c == 'e' || c == 'E') && u->exec && u->editable) {
		fd_printf(u->fd, "  the new %s (one line): ",
		          u->editable ? "command or code" : "command");
		u->mode = M_EDIT;
	} else if ((c == 'k' || c == 'K') && u->exec) {
		stepui_answer(u, SESSION_STEP_SKIP, NULL);
	} else if (c == 'x' || c == 'X') {
		stepui_answer(u, SESSION_STEP_END, NULL);
	} else {
		fd_printf(u->fd, "  ?\n");
		stepui_choices(u);
	}
}

/* Bytes from the terminal, through the loop, gathered into lines. */
static void stepui_on_readable(int fd, int revents, void *arg)
{
	struct stepui *u = arg;
	char chunk[4096];
	ssize_t n = read(fd, chunk, sizeof chunk);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0 || (revents & (POLLHUP | POLLERR) && n <= 0)) {
		/* the terminal is gone: nobody can answer */
		loop_fd_del(u->loop, fd);
		u->mode = M_OFF;
		char *err = NULL;
		if (session_step(u->s, SESSION_STEP_END, NULL, &err) < 0)
			free(err);
		return;
	}
	for (ssize_t i = 0; i < n && u->mode != M_OFF; i++) {
		if (chunk[i] == '\r')
			continue;
		if (chunk[i] != '\n') {
			if (u->line.len < LINE_MAX_BYTES)
				buf_append(&u->line, &chunk[i], 1);
			continue;
		}
		char *line =
		    xstrndup(u->line.data ? u->line.data : "", u->line.len);
		buf_reset(&u->line);
		stepui_on_line(u, line);
		free(line);
	}
}

/* The pause before a model request: what would be sent. */
static void stepui_show_request(struct stepui *u, const struct session_step *st)
{
	fd_printf(u->fd, "\n-- step: before model request, turn %d --\n",
	          st->turn);
	fd_printf(
	    u->fd,
	    "  messages: %zu, input ~%ld tokens (an estimate: characters/4)\n",
	    st->messages, st->est_input_tokens);
	fd_printf(u->fd, "  tools offered:");
	for (size_t i = 0; i < st->ntools; i++)
		fd_printf(u->fd, "%s %s", i ? "," : "", st->tools[i]);
	fd_printf(u->fd, "\n  last message (%s):\n",
	          st->last_role ? st->last_role : "?");
	tty_say(u->fd, "    ", st->last_message ? st->last_message : "");
}

/* The pause before an execution: the call and what it would run. */
static void stepui_show_exec(struct stepui *u, const struct session_step *st)
{
	char *id = tty_clean(st->id, strlen(st->id));
	fd_printf(u->fd, "\n-- step: before execution of %s (%s) --\n", id,
	          st->tool);
	free(id);
	tty_say(u->fd, "    ", st->subject);
}

/* The session paused: show where, then read the answer. */
static void stepui_on_pause(void *arg, const struct session_step *st)
{
	struct stepui *u = arg;
	u->exec = st->kind == SESSION_STEP_EXEC;
	u->editable = u->exec && st->editable;
	if (u->exec)
		stepui_show_exec(u, st);
	else
		stepui_show_request(u, st);
	buf_reset(&u->line);
	stepui_choices(u);
	loop_fd_add(u->loop, u->fd, POLLIN, stepui_on_readable, u);
}

struct stepui *stepui_attach(struct session *s, struct loop *l, char **err)
{
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		set_err(err,
		        "--step asks before each model request and each "
		        "command on the terminal, and there is none "
		        "(/dev/tty: %s): run assay from a terminal, or drop "
		        "--step",
		        strerror(errno));
		return NULL;
	}
	struct stepui *u = xcalloc(1, sizeof *u);
	*u = (struct stepui){.s = s, .loop = l, .fd = fd};
	buf_init(&u->line, 0);
	static const struct session_stepper ops = {stepui_on_pause};
	session_set_stepper(s, &ops, u);
	session_set_step(s, 1);
	return u;
}

void stepui_detach(struct stepui *u)
{
	if (!u)
		return;
	session_set_stepper(u->s, NULL, NULL); /* nothing comes after this */
	loop_fd_del(u->loop, u->fd);
	close(u->fd);
	buf_free(&u->line);
	free(u);
}
