/* local_exec.c: commands in the local sandbox. Each runs in a bwrap of
 * its own, forked in its own process group (killing the group kills
 * bwrap, and with it, through --die-with-parent and the PID namespace,
 * everything the command started), with the limits set between fork
 * and exec (spawn_start); stdout and stderr stream through the loop as
 * they arrive, stdin is queued and written as the pipe takes it.
 *
 * One gap in that: bwrap's inner process (pid 1 of the sandbox) leaves
 * the group (--new-session) a moment before it binds itself to bwrap's
 * life, so a kill in that moment would leave it, and the command it
 * then starts, running on its own. bwrap says the inner pid on its
 * --info-fd; a kill kills that process too (lx_kill_tree). */
#include "assay/config.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/spawn.h"
#include "assay/util.h"
#include "sandbox/local_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOCAL_STDIN_MAX (16u << 20) /* stdin bytes queued at most */
#define LOCAL_GRACE_MS 2000         /* reaped but pipes still open */

struct local_exec {
	struct sbx_exec base; /* base.s: the sandbox */
	struct local_exec *next;
	pid_t pid;
	int out_fd, err_fd, in_fd;
	int close_stdin; /* close once pending is flushed */
	struct buf pending;
	int status;
	int reaped, finished;
	int timed_out, cancelled;
	int info_fd;      /* bwrap's --info-fd, read end; -1 */
	pid_t inner;      /* bwrap's inner process, once it said; 0 */
	int inner_killed; /* a kill went to inner */
	char info[128];
	size_t info_len;
	uint64_t timer, grace;
	int64_t t0;
	struct sbx_exec_obs obs;
};

/* ---- the spawn ---- */

pid_t local_spawn_bwrap(const struct local *lp, char *const *argv,
                        const struct spawn_io io[3], const int *info_fd,
                        struct spawn_proc *p, char **err)
{
	const struct spawn_limit limits[] = {{RLIMIT_AS, lp->rl_as},
	                                     {RLIMIT_CPU, lp->rl_cpu},
	                                     {RLIMIT_FSIZE, lp->rl_fsize},
	                                     {RLIMIT_CORE, {0, 0}}};
	const struct spawn_cgroup cg = {lp->cg_dir_fd, lp->cg_join_fd};
	/* bwrap gets an empty environment and none of our descriptors */
	char *const envp[] = {NULL};
	struct spawn_opts o = {.argv = argv,
	                       .path = lp->bwrap,
	                       .envp = envp,
	                       .io = {io[0], io[1], io[2]},
	                       .new_pgroup = 1,
	                       .limits = limits,
	                       .n_limits = 4,
	                       .user_fdlimit = 1,
	                       .cgroup = &cg,
	                       .fd3 = info_fd};
	char *why = NULL;
	if (spawn_start(&o, p, &why) < 0) {
		set_err(err, "sandbox: %s", why);
		free(why);
		return -1;
	}
	return p->pid;
}

/* ---- exec ---- */

/* Stop watching and close one of e's pipes. */
static void lx_close(struct local_exec *e, int *fd)
{
	if (*fd < 0)
		return;
	loop_fd_del(e->base.s->loop, *fd);
	close(*fd);
	*fd = -1;
}

/* Take e off the sandbox's list of commands. */
static void lx_unlink(struct local_exec *e)
{
	struct local *lp = e->base.s->priv;
	for (struct local_exec **pp = &lp->execs; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			return;
		}
}

/* Deliver on_exit and free e. The last thing that touches e. */
static void lx_finish(struct local_exec *e)
{
	struct loop *l = e->base.s->loop;
	e->finished = 1;
	if (e->timer)
		loop_timer_cancel(l, e->timer);
	if (e->grace)
		loop_timer_cancel(l, e->grace);
	lx_close(e, &e->in_fd);
	lx_close(e, &e->out_fd);
	lx_close(e, &e->err_fd);
	if (e->info_fd >= 0)
		close(e->info_fd);
	lx_unlink(e);
	struct local *lp = e->base.s->priv;
	if (lp->stopped && !lp->execs)
		local_execs_gone(e->base.s); /* goes on from the loop */
	struct sbx_exit ex = {.exit_code = -1,
	                      .timed_out = e->timed_out,
	                      .cancelled = e->cancelled,
	                      .duration_ms = now_ms() - e->t0};
	int st = e->status;
	if (e->timed_out || e->cancelled) {
		ex.signal = SIGKILL;
	} else if (WIFSIGNALED(st)) {
		ex.signal = WTERMSIG(st);
	} else if (WIFEXITED(st)) {
		/* bwrap reports a command killed by signal n as 128+n, as
		 * shells do; keep the code and name the likely signal. */
		ex.exit_code = WEXITSTATUS(st);
		if (ex.exit_code > 128 && ex.exit_code < 128 + 32)
			ex.signal = ex.exit_code - 128;
	}
	buf_free(&e->pending);
	struct sbx_exec_obs obs = e->obs;
	free(e);
	if (obs.on_exit)
		obs.on_exit(obs.arg, &ex);
}

/* Finish once bwrap is reaped and both pipes are at EOF. */
static void lx_maybe_finish(struct local_exec *e)
{
	if (!e->finished && e->reaped && e->out_fd < 0 && e->err_fd < 0)
		lx_finish(e);
}

/* Read what bwrap has said on its --info-fd ({"child-pid": N}, written
 * once it has cloned its inner process) and note the inner pid. */
static void lx_read_info(struct local_exec *e)
{
	while (e->info_fd >= 0 && !e->inner &&
	       e->info_len < sizeof e->info - 1) {
		ssize_t n = read(e->info_fd, e->info + e->info_len,
		                 sizeof e->info - 1 - e->info_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* nothing yet, or bwrap closed it */
		e->info_len += (size_t)n;
		e->info[e->info_len] = '\0';
		static const char key[] = "\"child-pid\":";
		const char *k = strstr(e->info, key);
		char *end = NULL;
		long pid = k ? strtol(k + sizeof key - 1, &end, 10) : 0;
		if (pid > 1 && end && *end) /* the number is whole */
			e->inner = (pid_t)pid;
	}
}

/* Kill bwrap's inner process once (pid 1 of the sandbox: the kernel
 * ends everything in it). /proc says it is still a bwrap: a kill comes
 * right after it was seen alive, never long after. */
static void lx_kill_inner(struct local_exec *e)
{
	if (!e->inner || e->inner_killed)
		return;
	char path[48], comm[32] = "";
	snprintf(path, sizeof path, "/proc/%d/comm", (int)e->inner);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, comm, sizeof comm - 1);
	close(fd);
	comm[n > 0 ? n : 0] = '\0';
	if (strcmp(comm, "bwrap\n") != 0)
		return;
	kill(e->inner, SIGKILL);
	e->inner_killed = 1;
}

/* Kill bwrap's process group (and with it the command's tree), and
 * bwrap's inner process when bwrap has said it. */
static void lx_kill_tree(struct local_exec *e)
{
	/* After the reap the pid may belong to someone else. */
	if (e->reaped)
		return;
	lx_read_info(e);
	kill(-e->pid, SIGKILL);
	kill(e->pid, SIGKILL);
	lx_kill_inner(e);
}

/* bwrap is reaped after a kill: it may have said its inner pid only
 * after the kill read its --info-fd (everything it wrote is there
 * now); without --die-with-parent in force yet, that process lives on
 * unless killed here. */
static void lx_reaped_after_kill(struct local_exec *e)
{
	if (!e->timed_out && !e->cancelled)
		return;
	lx_read_info(e);
	lx_kill_inner(e);
}

/* One read per readiness; EOF closes the stream. */
static void lx_on_output(int fd, int revents, void *arg)
{
	struct local_exec *e = arg;
	struct local *lp = e->base.s->priv;
	enum sbx_stream which = fd == e->out_fd ? SBX_STDOUT : SBX_STDERR;
	ssize_t n = read(fd, lp->chunk, LOCAL_CHUNK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		/* The observer may cancel or even stop the sandbox from
		 * here; e must not be touched after this call. */
		if (e->obs.on_output)
			e->obs.on_output(e->obs.arg, which, lp->chunk,
			                 (size_t)n);
		return;
	}
	lx_close(e, which == SBX_STDOUT ? &e->out_fd : &e->err_fd);
	lx_maybe_finish(e);
}

/* Reaped, but something still holds the pipes open: close them. */
static void lx_on_grace(void *arg)
{
	struct local_exec *e = arg;
	e->grace = 0;
	log_warn("sandbox: output pipes of pid %d still open after exit; "
	         "closing them",
	         (int)e->pid);
	lx_close(e, &e->out_fd);
	lx_close(e, &e->err_fd);
	lx_maybe_finish(e);
}

/* bwrap exited; on_exit waits for both pipes to reach EOF too. */
static void lx_on_reaped(pid_t pid, int status, void *arg)
{
	struct local_exec *e = arg;
	(void)pid;
	e->reaped = 1;
	e->status = status;
	lx_reaped_after_kill(e);
	if (e->out_fd >= 0 || e->err_fd >= 0)
		e->grace = loop_timer_add(e->base.s->loop, LOCAL_GRACE_MS,
		                          lx_on_grace, e);
	lx_maybe_finish(e);
}

/* The command's time is up: kill it (on_exit says timed_out). */
static void lx_on_timeout(void *arg)
{
	struct local_exec *e = arg;
	e->timer = 0;
	if (e->finished || e->reaped)
		return;
	e->timed_out = 1;
	lx_kill_tree(e);
}

void local_cancel(struct sbx_exec *x)
{
	struct local_exec *e = (struct local_exec *)x;
	if (!e || e->finished || e->reaped)
		return;
	if (!e->timed_out)
		e->cancelled = 1;
	lx_kill_tree(e);
}

/* Argv and the spawn for one command, its stdin a pipe or /dev/null. */
static int lx_setup(struct local_exec *e, const struct sbx_exec_req *r,
                    char **err)
{
	struct local *lp = e->base.s->priv;
	const struct spawn_io io[3] = {
	    {r->keep_stdin ? SPAWN_PIPE : SPAWN_NULL, -1},
	    {SPAWN_PIPE, -1},
	    {SPAWN_PIPE, -1}};
	struct spawn_proc p;
	struct strv a = {0};
	int info[2];
	if (pipe2(info, O_CLOEXEC) < 0)
		return set_err(err, "sandbox: pipe: %s", strerror(errno));
	local_build_argv(lp, &a, r, 1);
	e->t0 = now_ms();
	e->pid = local_spawn_bwrap(lp, a.v, io, &info[1], &p, err);
	strv_free(&a);
	close(info[1]);
	if (e->pid < 0) {
		close(info[0]);
		return -1;
	}
	e->info_fd = info[0];
	fcntl(e->info_fd, F_SETFL, O_NONBLOCK);
	e->in_fd = p.fd[0];
	e->out_fd = p.fd[1];
	e->err_fd = p.fd[2];
	fcntl(e->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(e->err_fd, F_SETFL, O_NONBLOCK);
	if (e->in_fd >= 0)
		fcntl(e->in_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

struct sbx_exec *local_exec(struct sbx *s, const struct sbx_exec_req *r,
                            const struct sbx_exec_obs *obs, char **err)
{
	struct local *lp = s->priv;
	if (!lp || !lp->started || lp->stopped) {
		set_err(err, "sandbox: not running");
		return NULL;
	}
	if (!r->command && (!r->argv || !r->argv[0])) {
		set_err(err, "sandbox: nothing to run");
		return NULL;
	}
	struct local_exec *e = xcalloc(1, sizeof *e);
	e->base.s = s;
	e->obs = *obs;
	e->out_fd = e->err_fd = e->in_fd = e->info_fd = -1;
	buf_init(&e->pending, LOCAL_STDIN_MAX);
	if (lx_setup(e, r, err) < 0) {
		free(e);
		return NULL;
	}
	e->next = lp->execs;
	lp->execs = e;
	loop_fd_add(s->loop, e->out_fd, POLLIN, lx_on_output, e);
	loop_fd_add(s->loop, e->err_fd, POLLIN, lx_on_output, e);
	loop_child_watch(s->loop, e->pid, lx_on_reaped, e);
	int timeout = r->timeout_s > 0 ? r->timeout_s : s->cfg->timeout_s;
	if (timeout > 0)
		e->timer = loop_timer_add(s->loop, (int64_t)timeout * 1000,
		                          lx_on_timeout, e);
	return &e->base;
}

/* ---- stdin for long-lived commands ---- */

static void lx_flush_stdin(int fd, int revents, void *arg);

/* Write what the pipe takes now; the rest waits for POLLOUT. */
static int lx_push_stdin(struct local_exec *e)
{
	while (e->pending.len) {
		ssize_t w = write(e->in_fd, e->pending.data, e->pending.len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			break;
		if (w < 0) {
			buf_reset(&e->pending);
			lx_close(e, &e->in_fd);
			return -1;
		}
		buf_consume(&e->pending, (size_t)w);
	}
	if (e->pending.len)
		loop_fd_add(e->base.s->loop, e->in_fd, POLLOUT, lx_flush_stdin,
		            e);
	else if (e->close_stdin)
		lx_close(e, &e->in_fd);
	else
		loop_fd_del(e->base.s->loop, e->in_fd);
	return 0;
}

/* The stdin pipe takes more: write what is queued. */
static void lx_flush_stdin(int fd, int revents, void *arg)
{
	(void)fd, (void)revents;
	lx_push_stdin(arg);
}

/* Queue data for the command's stdin; n == 0 closes stdin once the
 * queue is written (end of input). */
int local_exec_write(struct sbx_exec *x, const void *data, size_t n)
{
	struct local_exec *e = (struct local_exec *)x;
	if (!e || e->finished || e->in_fd < 0 || e->close_stdin)
		return -1;
	if (n == 0) {
		e->close_stdin = 1;
		return lx_push_stdin(e);
	}
	if (buf_append(&e->pending, data, n) < 0)
		return -1;
	return lx_push_stdin(e);
}

/* ---- stop ---- */

void local_kill_all(struct sbx *s)
{
	struct local *lp = s->priv;
	for (struct local_exec *e = lp->execs; e; e = e->next) {
		if (e->reaped)
			continue;
		if (!e->timed_out)
			e->cancelled = 1;
		lx_kill_tree(e);
	}
}

void local_reap_all(struct sbx *s)
{
	struct local *lp = s->priv;
	while (lp && lp->execs) {
		struct local_exec *e = lp->execs;
		if (!e->reaped) {
			if (!e->timed_out)
				e->cancelled = 1;
			lx_kill_tree(e);
			int st = 0;
			while (waitpid(e->pid, &st, 0) < 0 && errno == EINTR)
				;
			loop_child_unwatch(s->loop, e->pid);
			e->reaped = 1;
			e->status = st;
			lx_reaped_after_kill(e);
		}
		lx_finish(e); /* closes the pipes, calls on_exit */
	}
}
