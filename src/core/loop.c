/* loop.c: one poll() loop for the whole program. It owns every fd
 * watch, one-shot timers, a self-pipe that turns signals into events,
 * and the reaping of child processes. Callbacks may add and remove
 * watches and timers freely, including their own. */
#include "assay/loop.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct watch {
	int fd;
	int events;
	loop_fd_fn fn;
	void *arg;
	uint64_t gen; /* changes when the slot is reused */
};

struct timer {
	uint64_t id;
	int64_t due;
	loop_timer_fn fn;
	void *arg;
};

struct child {
	pid_t pid;
	loop_child_fn fn;
	void *arg;
};

#define NSIG_HANDLED 5
static const int handled_signals[NSIG_HANDLED] = {SIGINT, SIGTERM, SIGWINCH,
                                                  SIGCHLD, SIGHUP};

struct loop {
	struct watch *w;
	size_t nw, capw;
	struct timer *t;
	size_t nt, capt;
	struct child *c;
	size_t nc, capc;
	uint64_t next_timer_id;
	uint64_t gen;
	loop_signal_fn sigfn[NSIG_HANDLED];
	void *sigarg[NSIG_HANDLED];
	int stopped;
	struct pollfd *pfd;
	uint64_t *pgen;
	size_t cappfd;
	int64_t busiest; /* the longest stretch between two polls, ms */
};

static int self_pipe[2] = {-1, -1};

/* What a second SIGINT or SIGTERM needs, readable from its handler:
 * the watched children (a slot is 0 when free; past LOOP_KILL_MAX
 * children the rest go unkilled), the terminal curses holds. */
#define LOOP_KILL_MAX 512
static volatile pid_t kill_list[LOOP_KILL_MAX];
static volatile sig_atomic_t stop_signals;
static volatile sig_atomic_t term_fd = -1;
static struct termios term_tio;
static const char *volatile term_reset;

/* The second SIGINT/SIGTERM: children and their groups killed, the
 * terminal put back, gone. Async-signal-safe calls only. */
static void loop_die(int sig)
{
	for (int i = 0; i < LOOP_KILL_MAX; i++) {
		pid_t p = kill_list[i];
		if (p > 0) {
			kill(-p, SIGKILL); /* a group leader: its group */
			kill(p, SIGKILL);
		}
	}
	int fd = term_fd;
	const char *reset = term_reset;
	if (fd >= 0) {
		tcsetattr(fd, TCSANOW, &term_tio);
		if (reset && write(fd, reset, strlen(reset)) < 0) {
			/* nothing more to do on the way out */
		}
	}
	static const char msg[] = "assay: a second signal: its commands "
	                          "killed, ending at once\n";
	if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
		/* stderr gone */
	}
	_exit(128 + sig);
}

/* Keep pid (add) or let it go (!add) in the second signal's list. */
static void kill_list_set(pid_t pid, int add)
{
	for (int i = 0; i < LOOP_KILL_MAX; i++)
		if (kill_list[i] == (add ? 0 : pid)) {
			kill_list[i] = add ? pid : 0;
			return;
		}
}

void loop_terminal_guard(int fd, const struct termios *tio, const char *reset)
{
	term_fd = -1; /* the handler never reads half of it */
	if (fd < 0 || !tio)
		return;
	term_tio = *tio;
	term_reset = reset;
	term_fd = fd;
}

static void on_signal(int sig)
{
	int saved = errno;
	if ((sig == SIGINT || sig == SIGTERM) && ++stop_signals >= 2)
		loop_die(sig);
	unsigned char c = (unsigned char)sig;
	if (write(self_pipe[1], &c, 1) < 0) {
		/* pipe full: a wake-up is already pending */
	}
	errno = saved;
}

static void self_pipe_read(int fd, int revents, void *arg);

struct loop *loop_new(void)
{
	struct loop *l = xcalloc(1, sizeof *l);
	if (self_pipe[0] < 0) {
		if (pipe2(self_pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
			free(l);
			return NULL;
		}
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	loop_fd_add(l, self_pipe[0], POLLIN, self_pipe_read, l);
	return l;
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (int i = 0; i < NSIG_HANDLED; i++)
		if (l->sigfn[i] && handled_signals[i] != SIGCHLD)
			sigaction(handled_signals[i], &sa, NULL);
	/* for benchmarks: how long the loop once could not answer */
	const char *stats = getenv("ASSAY_LOOP_STATS");
	if (stats && *stats) {
		FILE *f = fopen(stats, "a");
		if (f) {
			fprintf(f, "loop busiest_ms %lld\n",
			        (long long)l->busiest);
			fclose(f);
		}
	}
	free(l->w);
	free(l->t);
	free(l->c);
	free(l->pfd);
	free(l->pgen);
	free(l);
}

static struct watch *find_watch(struct loop *l, int fd)
{
	for (size_t i = 0; i < l->nw; i++)
		if (l->w[i].fd == fd)
			return &l->w[i];
	return NULL;
}

void loop_fd_add(struct loop *l, int fd, int events, loop_fd_fn fn, void *arg)
{
	struct watch *w = find_watch(l, fd);
	if (!w) {
		if (l->nw == l->capw) {
			l->capw = l->capw ? l->capw * 2 : 16;
			l->w = xrealloc(l->w, l->capw * sizeof *l->w);
		}
		w = &l->w[l->nw++];
	}
	w->fd = fd;
	w->events = events;
	w->fn = fn;
	w->arg = arg;
	w->gen = ++l->gen;
}

void loop_fd_events(struct loop *l, int fd, int events)
{
	struct watch *w = find_watch(l, fd);
	if (w)
		w->events = events;
}

void loop_fd_del(struct loop *l, int fd)
{
	for (size_t i = 0; i < l->nw; i++) {
		if (l->w[i].fd != fd)
			continue;
		l->w[i] = l->w[--l->nw];
		return;
	}
}

uint64_t loop_timer_add(struct loop *l, int64_t ms, loop_timer_fn fn, void *arg)
{
	if (l->nt == l->capt) {
		l->capt = l->capt ? l->capt * 2 : 16;
		l->t = xrealloc(l->t, l->capt * sizeof *l->t);
	}
	struct timer *t = &l->t[l->nt++];
	t->id = ++l->next_timer_id;
	t->due = now_ms() + (ms > 0 ? ms : 0);
	t->fn = fn;
	t->arg = arg;
	return t->id;
}

void loop_timer_cancel(struct loop *l, uint64_t id)
{
	for (size_t i = 0; i < l->nt; i++) {
		if (l->t[i].id != id)
			continue;
		memmove(&l->t[i], &l->t[i + 1], (l->nt - i - 1) * sizeof *l->t);
		l->nt--;
		return;
	}
}

void loop_signal(struct loop *l, int sig, loop_signal_fn fn, void *arg)
{
	for (int i = 0; i < NSIG_HANDLED; i++) {
		if (handled_signals[i] != sig || sig == SIGCHLD)
			continue;
		l->sigfn[i] = fn;
		l->sigarg[i] = arg;
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = fn ? on_signal : SIG_DFL;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(sig, &sa, NULL);
	}
}

void loop_child_watch(struct loop *l, pid_t pid, loop_child_fn fn, void *arg)
{
	if (l->nc == l->capc) {
		l->capc = l->capc ? l->capc * 2 : 8;
		l->c = xrealloc(l->c, l->capc * sizeof *l->c);
	}
	l->c[l->nc++] = (struct child){pid, fn, arg};
	kill_list_set(pid, 1);
	/* It may have exited before we watched it. */
	on_signal(SIGCHLD);
}

void loop_child_unwatch(struct loop *l, pid_t pid)
{
	for (size_t i = 0; i < l->nc; i++) {
		if (l->c[i].pid != pid)
			continue;
		l->c[i] = l->c[--l->nc];
		kill_list_set(pid, 0);
		return;
	}
}

static void reap_children(struct loop *l)
{
	for (size_t i = 0; i < l->nc;) {
		int status;
		pid_t r = waitpid(l->c[i].pid, &status, WNOHANG);
		if (r == 0 || (r < 0 && errno == EINTR)) {
			i++;
			continue;
		}
		struct child c = l->c[i];
		l->c[i] = l->c[--l->nc];
		kill_list_set(c.pid, 0);
		if (r < 0)
			status = 0xff00; /* already reaped elsewhere */
		c.fn(c.pid, status, c.arg);
		i = 0; /* the callback may have changed the list */
	}
}

static void self_pipe_read(int fd, int revents, void *arg)
{
	struct loop *l = arg;
	unsigned char sigs[64];
	ssize_t n;
	int seen[NSIG_HANDLED] = {0};
	while ((n = read(fd, sigs, sizeof sigs)) > 0)
		for (ssize_t i = 0; i < n; i++)
			for (int k = 0; k < NSIG_HANDLED; k++)
				if (sigs[i] == handled_signals[k])
					seen[k] = 1;
	for (int k = 0; k < NSIG_HANDLED; k++) {
		if (!seen[k])
			continue;
		if (handled_signals[k] == SIGCHLD)
			reap_children(l);
		else if (l->sigfn[k])
			l->sigfn[k](handled_signals[k], l->sigarg[k]);
	}
}

static void run_timers(struct loop *l)
{
	int64_t now = now_ms();
	/* Only timers already due when we start, so a timer that re-arms
	 * itself at 0 ms cannot starve the fds. */
	uint64_t limit = l->next_timer_id;
	for (;;) {
		size_t best = l->nt;
		for (size_t i = 0; i < l->nt; i++)
			if (l->t[i].due <= now && l->t[i].id <= limit &&
			    (best == l->nt || l->t[i].due < l->t[best].due))
				best = i;
		if (best == l->nt)
			return;
		struct timer t = l->t[best];
		memmove(&l->t[best], &l->t[best + 1],
		        (l->nt - best - 1) * sizeof *l->t);
		l->nt--;
		t.fn(t.arg);
	}
}

void loop_once(struct loop *l, int max_wait_ms)
{
	int64_t wait = max_wait_ms;
	int64_t now = now_ms();
	for (size_t i = 0; i < l->nt; i++) {
		int64_t d = l->t[i].due - now;
		if (d < 0)
			d = 0;
		if (wait < 0 || d < wait)
			wait = d;
	}
	if (l->nw > l->cappfd) {
		l->cappfd = l->nw * 2;
		l->pfd = xrealloc(l->pfd, l->cappfd * sizeof *l->pfd);
		l->pgen = xrealloc(l->pgen, l->cappfd * sizeof *l->pgen);
	}
	size_t n = l->nw;
	for (size_t i = 0; i < n; i++) {
		l->pfd[i].fd = l->w[i].fd;
		l->pfd[i].events = (short)l->w[i].events;
		l->pfd[i].revents = 0;
		l->pgen[i] = l->w[i].gen;
	}
	int r = poll(l->pfd, n, wait > 0x7fffffff ? 0x7fffffff : (int)wait);
	int64_t woke = now_ms();
	if (r > 0) {
		for (size_t i = 0; i < n; i++) {
			if (!l->pfd[i].revents)
				continue;
			struct watch *w = find_watch(l, l->pfd[i].fd);
			if (!w || w->gen != l->pgen[i])
				continue; /* removed or replaced meanwhile */
			w->fn(w->fd, l->pfd[i].revents, w->arg);
		}
	}
	run_timers(l);
	if (now_ms() - woke > l->busiest)
		l->busiest = now_ms() - woke;
}

void loop_run(struct loop *l)
{
	while (!l->stopped)
		loop_once(l, -1);
}

void loop_stop(struct loop *l)
{
	l->stopped = 1;
}

int loop_stopped(const struct loop *l)
{
	return l->stopped;
}
