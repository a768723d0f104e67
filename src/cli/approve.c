/* approve.c: the approver of `assay run` when stdin is a terminal. Each
 * request is shown on the terminal with the choices of the TUI's
 * dialog (run once, edit, always, deny, deny with feedback); keys are
 * read through the loop with the terminal in raw mode, never with a
 * blocking read. Requests queue; one is shown at a time. */
#include "cli.h"

#include "assay/buf.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define FIELD_MAX (1u << 20)

enum mode { M_IDLE, M_CHOICE, M_SCOPE, M_EDIT, M_FEEDBACK };

struct prompt {
	struct session *s;
	struct loop *loop;
	int in;  /* the terminal we read keys from (stdin) */
	int out; /* and write to */
	struct termios saved;
	int raw;
	char **queue; /* ids, oldest first; the first is on screen */
	size_t n;
	enum mode mode;
	struct buf field; /* the command being edited, or the feedback */
	uint64_t show_timer;
};

static struct prompt P = {.in = -1, .out = -1};

/* Text from the model on the terminal: control bytes made visible. */
static void say_text(const char *text, const char *indent)
{
	char *clean = term_sanitize(text, strlen(text));
	for (char *line = clean, *nl; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		fd_printf(P.out, "%s%s\n", indent, line);
	}
	free(clean);
}

static void raw_on(void)
{
	if (P.raw || tcgetattr(P.in, &P.saved) < 0)
		return;
	struct termios t = P.saved;
	/* keys one by one, no echo; Enter stays \r so Ctrl-J can make a
	 * new line; Ctrl-C still interrupts the run */
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_iflag &= ~(tcflag_t)(ICRNL | INLCR);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(P.in, TCSANOW, &t) == 0)
		P.raw = 1;
}

static void raw_off(void)
{
	if (P.raw)
		tcsetattr(P.in, TCSANOW, &P.saved);
	P.raw = 0;
}

static const struct session_approval *head(void)
{
	if (!P.n)
		return NULL;
	for (size_t i = 0; i < session_approvals_pending(P.s); i++) {
		const struct session_approval *r = session_approval_at(P.s, i);
		if (!strcmp(r->id, P.queue[0]))
			return r;
	}
	return NULL;
}

static void choices(void)
{
	const struct session_approval *r = head();
	fd_printf(P.out,
	          "  [y] run once  %s[a] always  [n] deny  [f] deny with "
	          "feedback\n> ",
	          r && r->editable ? "[e] edit  " : "");
	P.mode = M_CHOICE;
}

static void show(void)
{
	const struct session_approval *r = head();
	if (!r)
		return;
	/* keys typed before the question must not answer it */
	tcflush(P.in, TCIFLUSH);
	raw_on();
	fd_printf(
	    P.out,
	    "\n--- Approval ---------------------------------------------\n");
	fd_printf(P.out, "  tool:    %s\n", r->tool);
	fd_printf(P.out, "  %s\n",
	          !strcmp(r->tool, "python")  ? "code:"
	          : !strcmp(r->tool, "shell") ? "command:"
	                                      : "path:");
	say_text(r->subject, "    ");
	fd_printf(P.out, "  in:      %s\n", r->cwd);
	if (r->nreasons)
		fd_printf(P.out, "  why it needs approval:\n");
	else
		fd_printf(P.out, "  why: --ask all asks about every call\n");
	for (size_t i = 0; i < r->nreasons; i++)
		say_text(r->reasons[i], "    - ");
	if (P.n > 1)
		fd_printf(P.out, "  (%zu more waiting)\n", P.n - 1);
	choices();
}

static void pop(void);

static void show_timer_fired(void *arg)
{
	(void)arg;
	P.show_timer = 0;
	if (!P.n || P.mode != M_IDLE)
		return;
	if (head())
		show();
	else
		pop(); /* answered elsewhere meanwhile */
}

/* Show the head of the queue from the loop, after what is already
 * queued there: the other calls of the turn have arrived by then (so
 * the count is right) and the last answer's result is printed. */
static void show_later(void)
{
	if (!P.show_timer)
		P.show_timer =
		    loop_timer_add(P.loop, 0, show_timer_fired, NULL);
}

static void pop(void)
{
	free(P.queue[0]);
	memmove(P.queue, P.queue + 1, (P.n - 1) * sizeof *P.queue);
	P.n--;
	buf_reset(&P.field);
	P.mode = M_IDLE;
	if (P.n) {
		show_later();
	} else {
		raw_off();
		loop_fd_del(P.loop, P.in);
	}
}

static void answer(enum session_decision d, const char *edited,
                   const char *feedback, enum session_scope scope,
                   const char *what)
{
	char *err = NULL;
	char *id = xstrdup(P.queue[0]);
	if (session_approve(P.s, id, d, edited, feedback, scope, &err) < 0) {
		fd_printf(P.out, "\n  could not do that: ");
		say_text(err, "");
		free(err);
		free(id);
		choices();
		return;
	}
	free(id);
	fd_printf(P.out, "%s\n", what);
	pop();
}

static void start_field(enum mode m, const char *prefill, const char *help)
{
	P.mode = m;
	buf_reset(&P.field);
	buf_puts(&P.field, prefill);
	fd_printf(P.out, "\n  %s\n  ", help);
	char *clean = term_sanitize(prefill, strlen(prefill));
	fd_printf(P.out, "%s", clean);
	free(clean);
}

static void on_choice(int c)
{
	const struct session_approval *r = head();
	switch (c) {
	case 'y':
		answer(SESSION_RUN_ONCE, NULL, NULL, 0, "run once");
		break;
	case 'n':
		answer(SESSION_DENY, NULL, NULL, 0, "denied");
		break;
	case 'e':
		if (r->editable)
			start_field(M_EDIT, r->subject,
			            "edit, then Enter runs it (Ctrl-U clears, "
			            "Ctrl-J new line, Esc back):");
		break;
	case 'f':
		start_field(M_FEEDBACK, "",
		            "feedback for the model, then Enter (Esc back):");
		break;
	case 'a':
		if (!r->rules) {
			fd_printf(P.out, "\n  \"always\" is not offered: ");
			say_text(r->no_always ? r->no_always : "", "");
			choices();
			break;
		}
		fd_printf(P.out, "\n  the rule%s saved:\n",
		          cJSON_GetArraySize(r->rules) > 1 ? "s that would be"
		                                           : " that would be");
		const cJSON *rule;
		cJSON_ArrayForEach(rule, r->rules)
		{
			char *j = json_print(rule);
			say_text(j, "    ");
			free(j);
		}
		fd_printf(P.out, "  [s] for this session  [p] for the project "
		                 "(.assay/config.json)  Esc back\n> ");
		P.mode = M_SCOPE;
		break;
	default:
		break;
	}
}

static void on_scope(int c)
{
	if (c == 's')
		answer(SESSION_ALWAYS, NULL, NULL, SESSION_SCOPE_SESSION,
		       "always (this session)");
	else if (c == 'p')
		answer(SESSION_ALWAYS, NULL, NULL, SESSION_SCOPE_PROJECT,
		       "always (saved in .assay/config.json)");
	else if (c == 0x1b) {
		fd_printf(P.out, "\n");
		choices();
	}
}

/* Remove the last character (a whole UTF-8 sequence). */
static int field_backspace(void)
{
	if (!P.field.len)
		return 0;
	size_t n = P.field.len - 1;
	while (n > 0 && ((unsigned char)P.field.data[n] & 0xc0) == 0x80)
		n--;
	int newline = P.field.data[n] == '\n';
	P.field.len = n;
	P.field.data[n] = '\0';
	return newline ? 2 : 1;
}

static void on_field(int c)
{
	if (c == '\r') {
		char *text = xstrdup(buf_str(&P.field));
		if (P.mode == M_EDIT)
			answer(SESSION_EDIT, text, NULL, 0, "\n  edited");
		else
			answer(SESSION_FEEDBACK, NULL, text, 0,
			       "\n  denied, with feedback");
		free(text);
	} else if (c == 0x1b) {
		buf_reset(&P.field);
		fd_printf(P.out, "\n");
		choices();
	} else if (c == 0x15) { /* Ctrl-U */
		buf_reset(&P.field);
		fd_printf(P.out, "\n  (cleared)\n  ");
	} else if (c == 0x7f || c == 0x08) {
		int k = field_backspace();
		if (k == 1)
			fd_printf(P.out, "\b \b");
		else if (k == 2) { /* a line back: show the field again */
			char *clean =
			    term_sanitize(buf_str(&P.field), P.field.len);
			fd_printf(P.out, "\n  %s", clean);
			free(clean);
		}
	} else if (c == '\n' || c == '\t' || c >= 0x20) {
		char ch = (char)c;
		if (buf_append(&P.field, &ch, 1) == 0)
			fd_printf(P.out, c == '\n' ? "\n  " : "%c", c);
	}
}

static void on_key(int c)
{
	if (!head() || P.mode == M_IDLE)
		return;
	switch (P.mode) {
	case M_CHOICE:
		on_choice(c);
		break;
	case M_SCOPE:
		on_scope(c);
		break;
	case M_EDIT:
	case M_FEEDBACK:
		on_field(c);
		break;
	default:
		break;
	}
}

static void on_readable(int fd, int revents, void *arg)
{
	(void)arg;
	char buf[256];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n <= 0) {
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			return;
		/* the terminal is gone: nobody can answer any more */
		loop_fd_del(P.loop, fd);
		raw_off();
		return;
	}
	(void)revents;
	for (ssize_t i = 0; i < n && P.n; i++)
		on_key((unsigned char)buf[i]);
}

static void on_request(void *arg, const struct session_approval *req)
{
	(void)arg;
	P.queue = xrealloc(P.queue, (P.n + 1) * sizeof *P.queue);
	P.queue[P.n++] = xstrdup(req->id);
	if (P.n == 1) {
		loop_fd_add(P.loop, P.in, POLLIN, on_readable, NULL);
		show_later();
	}
}

static void on_cancel(void *arg, const char *id)
{
	(void)arg;
	for (size_t i = 0; i < P.n; i++) {
		if (strcmp(P.queue[i], id))
			continue;
		if (i == 0) {
			fd_printf(P.out, "\n  (no longer waiting: %s)\n", id);
			pop();
		} else {
			free(P.queue[i]);
			memmove(P.queue + i, P.queue + i + 1,
			        (P.n - i - 1) * sizeof *P.queue);
			P.n--;
		}
		return;
	}
}

void approve_attach(struct session *s, struct loop *l)
{
	P.s = s;
	P.loop = l;
	P.in = STDIN_FILENO;
	P.out = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (P.out < 0)
		P.out = dup(STDERR_FILENO);
	buf_init(&P.field, FIELD_MAX);
	static const struct session_approver ops = {on_request, on_cancel};
	session_set_approver(s, &ops, NULL);
}

void approve_detach(void)
{
	if (!P.s)
		return;
	raw_off();
	if (P.show_timer)
		loop_timer_cancel(P.loop, P.show_timer);
	if (P.n)
		loop_fd_del(P.loop, P.in);
	for (size_t i = 0; i < P.n; i++)
		free(P.queue[i]);
	free(P.queue);
	buf_free(&P.field);
	if (P.out >= 0)
		close(P.out);
	P = (struct prompt){.in = -1, .out = -1};
}
