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

enum mode { M_OFF, M_CHOICE, M_EDIT };

struct stepui {
	struct session *s;
	struct loop *loop;
	int fd;
	enum mode mode;
	struct buf line;
	int exec;     /* the pause is before an execution */
	int editable; /* ... of a shell or python call */
};

static struct stepui U = {.fd = -1};

/* Model and tool text made safe for the terminal, indented. */
static void say_text(const char *text)
{
	char *clean = term_sanitize(text, strlen(text));
	for (char *line = clean, *nl; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		fd_printf(U.fd, "    %s\n", line);
	}
	free(clean);
}

static void choices(void)
{
	if (U.exec)
		fd_printf(U.fd, "  [n] run  %s[k] skip  [x] end the run > ",
		          U.editable ? "[e] edit  " : "");
	else
		fd_printf(U.fd, "  [n] send  [x] end the run > ");
	U.mode = M_CHOICE;
}

static void answer(enum session_step_action a, const char *edited)
{
	char *err = NULL;
	if (session_step(U.s, a, edited, &err) < 0) {
		fd_printf(U.fd, "  cannot: %s\n", err);
		free(err);
		choices();
		return;
	}
	U.mode = M_OFF;
	loop_fd_del(U.loop, U.fd);
}

static void on_line(char *line)
{
	if (U.mode == M_EDIT) {
		if (!*line) {
			fd_printf(U.fd, "  (empty: nothing changed)\n");
			choices();
			return;
		}
		answer(SESSION_STEP_EDIT, line);
		return;
	}
	char c = line[strspn(line, " \t")];
	if (c == 'n' || c == 'N') {
		answer(SESSION_STEP_CONTINUE, NULL);
	} else if ((c == 'e' || c == 'E') && U.exec && U.editable) {
		fd_printf(U.fd, "  the new %s (one line): ",
		          U.editable ? "command or code" : "command");
		U.mode = M_EDIT;
	} else if ((c == 'k' || c == 'K') && U.exec) {
		answer(SESSION_STEP_SKIP, NULL);
	} else if (c == 'x' || c == 'X') {
		answer(SESSION_STEP_END, NULL);
	} else {
		fd_printf(U.fd, "  ?\n");
		choices();
	}
}

static void on_readable(int fd, int revents, void *arg)
{
	(void)arg;
	char chunk[4096];
	ssize_t n = read(fd, chunk, sizeof chunk);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0 || (revents & (POLLHUP | POLLERR) && n <= 0)) {
		/* the terminal is gone: nobody can answer */
		loop_fd_del(U.loop, fd);
		U.mode = M_OFF;
		char *err = NULL;
		if (session_step(U.s, SESSION_STEP_END, NULL, &err) < 0)
			free(err);
		return;
	}
	for (ssize_t i = 0; i < n && U.mode != M_OFF; i++) {
		if (chunk[i] == '\r')
			continue;
		if (chunk[i] != '\n') {
			if (U.line.len < LINE_MAX_BYTES)
				buf_append(&U.line, &chunk[i], 1);
			continue;
		}
		char *line =
		    xstrndup(U.line.data ? U.line.data : "", U.line.len);
		buf_reset(&U.line);
		on_line(line);
		free(line);
	}
}

static void show_request(const struct session_step *st)
{
	fd_printf(U.fd, "\n-- step: before model request, turn %d --\n",
	          st->turn);
	fd_printf(
	    U.fd,
	    "  messages: %zu, input ~%ld tokens (an estimate: characters/4)\n",
	    st->messages, st->est_input_tokens);
	fd_printf(U.fd, "  tools offered:");
	for (size_t i = 0; i < st->ntools; i++)
		fd_printf(U.fd, "%s %s", i ? "," : "", st->tools[i]);
	fd_printf(U.fd, "\n  last message (%s):\n",
	          st->last_role ? st->last_role : "?");
	say_text(st->last_message ? st->last_message : "");
}

static void show_exec(const struct session_step *st)
{
	char *id = term_sanitize(st->id, strlen(st->id));
	fd_printf(U.fd, "\n-- step: before execution of %s (%s) --\n", id,
	          st->tool);
	free(id);
	say_text(st->subject);
}

static void on_pause(void *arg, const struct session_step *st)
{
	(void)arg;
	U.exec = st->kind == SESSION_STEP_EXEC;
	U.editable = U.exec && st->editable;
	if (U.exec)
		show_exec(st);
	else
		show_request(st);
	buf_reset(&U.line);
	choices();
	loop_fd_add(U.loop, U.fd, POLLIN, on_readable, NULL);
}

int step_attach(struct session *s, struct loop *l, char **err)
{
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return set_err(err,
		               "--step asks before each model request and "
		               "each command on the terminal, and there is "
		               "none (/dev/tty: %s): run assay from a "
		               "terminal, or drop --step",
		               strerror(errno));
	U = (struct stepui){.s = s, .loop = l, .fd = fd};
	buf_init(&U.line, 0);
	static const struct session_stepper ops = {on_pause};
	session_set_stepper(s, &ops, NULL);
	session_set_step(s, 1);
	return 0;
}

void step_detach(void)
{
	if (U.fd < 0)
		return;
	loop_fd_del(U.loop, U.fd);
	close(U.fd);
	buf_free(&U.line);
	U = (struct stepui){.fd = -1};
}
