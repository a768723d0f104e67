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

enum approve_mode { M_IDLE, M_CHOICE, M_SCOPE, M_EDIT, M_FEEDBACK };

struct approver {
	struct session *s;
	struct loop *loop;
	int in;  /* the terminal we read keys from (stdin) */
	int out; /* and write to */
	struct termios saved;
	int raw;
	char **queue; /* ids, oldest first; the first is on screen */
	size_t n;
	enum approve_mode mode;
	struct buf field; /* the command being edited, or the feedback */
	uint64_t show_timer;
};

/* Keys one by one without echo while a question is on screen. */
static void approve_raw_on(struct approver *p)
{
	if (p->raw || tcgetattr(p->in, &p->saved) < 0)
		return;
	struct termios t = p->saved;
	/* keys one by one, no echo; Enter stays \r so Ctrl-J can make a
	 * new line; Ctrl-C still interrupts the run */
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_iflag &= ~(tcflag_t)(ICRNL | INLCR);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(p->in, TCSANOW, &t) == 0)
		p->raw = 1;
}

/* The terminal as it was before the first question. */
static void approve_raw_off(struct approver *p)
{
	if (p->raw)
		tcsetattr(p->in, TCSANOW, &p->saved);
	p->raw = 0;
}

/* The request on screen (the head of the queue), if still pending. */
static const struct session_approval *approve_head(struct approver *p)
{
	if (!p->n)
		return NULL;
	for (size_t i = 0; i < session_approvals_pending(p->s); i++) {
		const struct session_approval *r = session_approval_at(p->s, i);
		if (!strcmp(r->id, p->queue[0]))
			return r;
	}
	return NULL;
}

/* The line of choices, and wait for one. */
static void approve_choices(struct approver *p)
{
	const struct session_approval *r = approve_head(p);
	fd_printf(p->out,
	          "  [y] run once  %s[a] always  [n] deny  [f] deny with "
	          "feedback\n> ",
	          r && r->editable ? "[e] edit  " : "");
	p->mode = M_CHOICE;
}

/* The question: the call, where it runs, why it needs approval. */
static void approve_show(struct approver *p)
{
	const struct session_approval *r = approve_head(p);
	if (!r)
		return;
	/* keys typed before the question must not answer it */
	tcflush(p->in, TCIFLUSH);
	approve_raw_on(p);
	fd_printf(
	    p->out,
	    "\n--- Approval ---------------------------------------------\n");
	fd_printf(p->out, "  tool:    %s\n", r->tool);
	fd_printf(p->out, "  %s\n",
	          !strcmp(r->tool, "python")  ? "code:"
	          : !strcmp(r->tool, "shell") ? "command:"
	                                      : "path:");
	tty_say(p->out, "    ", r->subject);
	fd_printf(p->out, "  in:      %s\n", r->cwd);
	if (r->nreasons)
		fd_printf(p->out, "  why it needs approval:\n");
	else
		fd_printf(p->out, "  why: --ask all asks about every call\n");
	for (size_t i = 0; i < r->nreasons; i++)
		tty_say(p->out, "    - ", r->reasons[i]);
	if (p->n > 1)
		fd_printf(p->out, "  (%zu more waiting)\n", p->n - 1);
	approve_choices(p);
}

static void approve_pop(struct approver *p);

/* The deferred show (approve_show_later). */
static void approve_show_fired(void *arg)
{
	struct approver *p = arg;
	p->show_timer = 0;
	if (!p->n || p->mode != M_IDLE)
		return;
	if (approve_head(p))
		approve_show(p);
	else
		approve_pop(p); /* answered elsewhere meanwhile */
}

/* Show the head of the queue from the loop, after what is already
 * queued there: the other calls of the turn have arrived by then (so
 * the count is right) and the last answer's result is printed. */
static void approve_show_later(struct approver *p)
{
	if (!p->show_timer)
		p->show_timer =
		    loop_timer_add(p->loop, 0, approve_show_fired, p);
}

/* The head is answered or gone: on to the next, or stop reading keys. */
static void approve_pop(struct approver *p)
{
	free(p->queue[0]);
	memmove(p->queue, p->queue + 1, (p->n - 1) * sizeof *p->queue);
	p->n--;
	buf_reset(&p->field);
	p->mode = M_IDLE;
	if (p->n) {
		approve_show_later(p);
	} else {
		approve_raw_off(p);
		loop_fd_del(p->loop, p->in);
	}
}

/* Decide the head; what is printed as the answer once it is taken. */
static void approve_answer(struct approver *p, enum session_decision d,
                           const char *edited, const char *feedback,
                           enum session_scope scope, const char *what)
{
	char *err = NULL;
	char *id = xstrdup(p->queue[0]);
	if (session_approve(p->s, id, d, edited, feedback, scope, &err) < 0) {
		fd_printf(p->out, "\n  could not do that: ");
		tty_say(p->out, "", err);
		free(err);
		free(id);
		approve_choices(p);
		return;
	}
	free(id);
	fd_printf(p->out, "%s\n", what);
	approve_pop(p);
}

/* Edit a text field (the command, or feedback) starting from prefill. */
static void approve_start_field(struct approver *p, enum approve_mode m,
                                const char *prefill, const char *help)
{
	p->mode = m;
	buf_reset(&p->field);
	buf_puts(&p->field, prefill);
	fd_printf(p->out, "\n  %s\n  ", help);
	char *clean = tty_clean(prefill, strlen(prefill));
	fd_printf(p->out, "%s", clean);
	free(clean);
}

/* "always": the rules that would be saved, then ask where. */
static void approve_offer_always(struct approver *p,
                                 const struct session_approval *r)
{
	if (!r->rules) {
		fd_printf(p->out, "\n  \"always\" is not offered: ");
		tty_say(p->out, "", r->no_always ? r->no_always : "");
		approve_choices(p);
		return;
	}
	fd_printf(p->out, "\n  the rule%s saved:\n",
	          cJSON_GetArraySize(r->rules) > 1 ? "s that would be"
	                                           : " that would be");
	const cJSON *rule;
	cJSON_ArrayForEach(rule, r->rules)
	{
		char *j = json_print(rule);
		tty_say(p->out, "    ", j);
		free(j);
	}
	fd_printf(p->out, "  [s] for this session  [p] for the project "
	                  "(.assay/config.json)  Esc back\n> ");
	p->mode = M_SCOPE;
}

/* A key at the line of choices. */
static void approve_on_choice(struct approver *p, int c)
{
	const struct session_approval *r = approve_head(p);
	switch (c) {
	case 'y':
		approve_answer(p, SESSION_RUN_ONCE, NULL, NULL, 0, "run once");
		break;
	case 'n':
		approve_answer(p, SESSION_DENY, NULL, NULL, 0, "denied");
		break;
	case 'e':
		if (r->editable)
			approve_start_field(
			    p, M_EDIT, r->subject,
			    "edit, then Enter runs it (Ctrl-U clears, "
			    "Ctrl-J new line, Esc back):");
		break;
	case 'f':
		approve_start_field(
		    p, M_FEEDBACK, "",
		    "feedback for the model, then Enter (Esc back):");
		break;
	case 'a':
		approve_offer_always(p, r);
		break;
	default:
		break;
	}
}

/* A key at "for this session or the project?". */
static void approve_on_scope(struct approver *p, int c)
{
	if (c == 's')
		approve_answer(p, SESSION_ALWAYS, NULL, NULL,
		               SESSION_SCOPE_SESSION, "always (this session)");
	else if (c == 'p')
		approve_answer(p, SESSION_ALWAYS, NULL, NULL,
		               SESSION_SCOPE_PROJECT,
		               "always (saved in .assay/config.json)");
	else if (c == 0x1b) {
		fd_printf(p->out, "\n");
		approve_choices(p);
	}
}

/* Remove the last character (a whole UTF-8 sequence). */
static int approve_field_backspace(struct approver *p)
{
	if (!p->field.len)
		return 0;
	size_t n = p->field.len - 1;
	while (n > 0 && ((unsigned char)p->field.data[n] & 0xc0) == 0x80)
		n--;
	int newline = p->field.data[n] == '\n';
	p->field.len = n;
	p->field.data[n] = '\0';
	return newline ? 2 : 1;
}

/* A key while a field is edited. */
static void approve_on_field(struct approver *p, int c)
{
	if (c == '\r') {
		char *text = xstrdup(buf_str(&p->field));
		if (p->mode == M_EDIT)
			approve_answer(p, SESSION_EDIT, text, NULL, 0,
			               "\n  edited");
		else
			approve_answer(p, SESSION_FEEDBACK, NULL, text, 0,
			               "\n  denied, with feedback");
		free(text);
	} else if (c == 0x1b) {
		buf_reset(&p->field);
		fd_printf(p->out, "\n");
		approve_choices(p);
	} else if (c == 0x15) { /* Ctrl-U */
		buf_reset(&p->field);
		fd_printf(p->out, "\n  (cleared)\n  ");
	} else if (c == 0x7f || c == 0x08) {
		int k = approve_field_backspace(p);
		if (k == 1)
			fd_printf(p->out, "\b \b");
		else if (k == 2) { /* a line back: show the field again */
			char *clean =
			    tty_clean(buf_str(&p->field), p->field.len);
			fd_printf(p->out, "\n  %s", clean);
			free(clean);
		}
	} else if (c == '\n' || c == '\t' || c >= 0x20) {
		char ch = (char)c;
		if (buf_append(&p->field, &ch, 1) == 0)
			fd_printf(p->out, c == '\n' ? "\n  " : "%c", c);
	}
}

/* One key, to whatever is being asked. */
static void approve_on_key(struct approver *p, int c)
{
	if (!approve_head(p) || p->mode == M_IDLE)
		return;
	switch (p->mode) {
	case M_CHOICE:
		approve_on_choice(p, c);
		break;
	case M_SCOPE:
		approve_on_scope(p, c);
		break;
	case M_EDIT:
	case M_FEEDBACK:
		approve_on_field(p, c);
		break;
	default:
		break;
	}
}

/* Keys from the terminal, through the loop. */
static void approve_on_readable(int fd, int revents, void *arg)
{
	struct approver *p = arg;
	char buf[256];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n <= 0) {
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			return;
		/* the terminal is gone: nobody can answer any more */
		loop_fd_del(p->loop, fd);
		approve_raw_off(p);
		return;
	}
	(void)revents;
	for (ssize_t i = 0; i < n && p->n; i++)
		approve_on_key(p, (unsigned char)buf[i]);
}

/* The session asks: queue the request, show it when it is the head. */
static void approve_on_request(void *arg, const struct session_approval *req)
{
	struct approver *p = arg;
	p->queue = xrealloc(p->queue, (p->n + 1) * sizeof *p->queue);
	p->queue[p->n++] = xstrdup(req->id);
	if (p->n == 1) {
		loop_fd_add(p->loop, p->in, POLLIN, approve_on_readable, p);
		approve_show_later(p);
	}
}

/* The session no longer waits for id: drop it from the queue. */
static void approve_on_cancel(void *arg, const char *id)
{
	struct approver *p = arg;
	for (size_t i = 0; i < p->n; i++) {
		if (strcmp(p->queue[i], id))
			continue;
		if (i == 0) {
			fd_printf(p->out, "\n  (no longer waiting: %s)\n", id);
			approve_pop(p);
		} else {
			free(p->queue[i]);
			memmove(p->queue + i, p->queue + i + 1,
			        (p->n - i - 1) * sizeof *p->queue);
			p->n--;
		}
		return;
	}
}

struct approver *approve_attach(struct session *s, struct loop *l)
{
	struct approver *p = xcalloc(1, sizeof *p);
	p->s = s;
	p->loop = l;
	p->in = STDIN_FILENO;
	p->out = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (p->out < 0)
		p->out = dup(STDERR_FILENO);
	buf_init(&p->field, FIELD_MAX);
	static const struct session_approver ops = {approve_on_request,
	                                            approve_on_cancel, NULL, NULL};
	session_set_approver(s, &ops, p);
	return p;
}

void approve_detach(struct approver *p)
{
	if (!p)
		return;
	session_set_approver(p->s, NULL, NULL); /* nothing comes after this */
	approve_raw_off(p);
	if (p->show_timer)
		loop_timer_cancel(p->loop, p->show_timer);
	if (p->n)
		loop_fd_del(p->loop, p->in);
	for (size_t i = 0; i < p->n; i++)
		free(p->queue[i]);
	free(p->queue);
	buf_free(&p->field);
	if (p->out >= 0)
		close(p->out);
	free(p);
}
