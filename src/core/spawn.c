/* spawn.c: every child process assay starts goes through spawn_start.
 * Everything the child needs is prepared before the fork (pipes,
 * /dev/null, the path), so between fork and exec the child makes only
 * async-signal-safe calls (libcurl's resolver may run threads). A step
 * that fails there writes which step and errno to a close-on-exec pipe
 * and exits; the parent reads that pipe until EOF (the exec closed it)
 * or a report, as posix_spawn does, so exec errors are the caller's to
 * word. */
#include "assay/spawn.h"
#include "assay/fdlimit.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The steps in the child that can fail, as the parent words them. */
enum spawn_step {
	SPAWN_STEP_EXEC,
	SPAWN_STEP_PGROUP,
	SPAWN_STEP_CGROUP,
	SPAWN_STEP_LIMIT,
	SPAWN_STEP_STDIO,
	SPAWN_STEP_NOFILE,
	SPAWN_STEP_CWD,
};

static const char *const spawn_step_name[] = {
    [SPAWN_STEP_EXEC] = NULL,
    [SPAWN_STEP_PGROUP] = "setpgid",
    [SPAWN_STEP_CGROUP] = "cannot join the cgroup",
    [SPAWN_STEP_LIMIT] = "setrlimit",
    [SPAWN_STEP_STDIO] = "placing stdin/stdout/stderr",
    [SPAWN_STEP_NOFILE] = "setrlimit(RLIMIT_NOFILE)",
    [SPAWN_STEP_CWD] = "cannot enter its directory",
};

/* What the child writes to the report pipe when a step fails. */
struct spawn_report {
	int step;
	int err;
};

/* The child's side, all of it prepared before the fork. */
struct spawn_child {
	const struct spawn_opts *o;
	const char *path;
	int src[3];      /* placed on 0, 1, 2; -1: left as it is */
	int report;      /* the write end of the report pipe (above 3) */
	int join_cgroup; /* not placed there by clone3 */
};

/* ---- the child between fork and exec: async-signal-safe only ---- */

/* In the child: report the failed step and its errno, and exit. */
static void __attribute__((noreturn))
spawn_child_fail(const struct spawn_child *c, enum spawn_step step)
{
	struct spawn_report r = {step, errno};
	if (write(c->report, &r, sizeof r) < 0) {
		/* the parent then sees EOF and an exit status of 127 */
	}
	_exit(127);
}

/* Signals as a fresh process has them: the loop ignores SIGPIPE (kept
 * across exec) and catches others with handlers that write to its
 * self-pipe. */
static void spawn_child_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Put src[i] on i, and fd3 on 3. Every source moves above 3 first, so
 * one that sits on another's target cannot be clobbered (dup2 leaves
 * the placed copies open across the exec). */
static int spawn_child_stdio(const struct spawn_child *c)
{
	int high[4] = {-1, -1, -1, -1};
	int src[4] = {c->src[0], c->src[1], c->src[2],
	              c->o->fd3 ? *c->o->fd3 : -1};
	for (int i = 0; i < 4; i++)
		if (src[i] >= 0 &&
		    (high[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 4)) < 0)
			return -1;
	for (int i = 0; i < 4; i++)
		if (high[i] >= 0 && dup2(high[i], i) < 0)
			return -1;
	return 0;
}

/* Nothing of ours but 0-2 (and 3 when placed) reaches the program: the
 * rest is marked close-on-exec (the report pipe must stay open until
 * the exec); a kernel without CLOSE_RANGE_CLOEXEC closes them now
 * instead. */
static void spawn_child_close_rest(int report, unsigned first)
{
	if (close_range(first, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
	if ((unsigned)report > first)
		close_range(first, (unsigned)report - 1, 0);
	close_range((unsigned)report + 1, ~0U, 0);
}

/* In the child: each option in turn, then the exec. */
static void __attribute__((noreturn))
spawn_child_run(const struct spawn_child *c)
{
	const struct spawn_opts *o = c->o;
	spawn_child_signals();
	if (o->new_pgroup && setpgid(0, 0) < 0)
		spawn_child_fail(c, SPAWN_STEP_PGROUP);
	if (c->join_cgroup && write(o->cgroup->procs_fd, "0", 1) != 1)
		spawn_child_fail(c, SPAWN_STEP_CGROUP);
	for (int i = 0; i < o->n_limits; i++)
		if (setrlimit(o->limits[i].resource, &o->limits[i].rl) < 0)
			spawn_child_fail(c, SPAWN_STEP_LIMIT);
	if (spawn_child_stdio(c) < 0)
		spawn_child_fail(c, SPAWN_STEP_STDIO);
	spawn_child_close_rest(c->report, o->fd3 ? 4 : 3);
	/* what it runs gets the descriptor limit its user set (ours was
	 * raised for the sessions); only 0-2 stay open across the exec */
	if (o->user_fdlimit && fdlimit_child() < 0)
		spawn_child_fail(c, SPAWN_STEP_NOFILE);
	if (o->cwd && chdir(o->cwd) < 0)
		spawn_child_fail(c, SPAWN_STEP_CWD);
	execve(c->path, o->argv, o->envp ? o->envp : environ);
	spawn_child_fail(c, SPAWN_STEP_EXEC);
}

/* ---- the parent ---- */

/* The child runs on our memory until its exec (as posix_spawn's does):
 * no copy of our page tables, which for assay's costs 2-3 ms a start.
 * Not under ASan, whose bookkeeping assumes every task on our memory is
 * a thread it made. */
#if defined(__SANITIZE_ADDRESS__)
#define SPAWN_SHARED 0
#else
#define SPAWN_SHARED 1
#define SPAWN_STACK 65536 /* the child's stack, in the parent's frame */
/* clone's entry: the child, on its own stack. */
static int spawn_child_entry(void *arg)
{
	spawn_child_run(arg);
}
#endif

/* With a cgroup v2 directory, a fork straight into it: joining by a
 * write to cgroup.procs takes the kernel's global threadgroup lock and
 * waits for an RCU grace period (milliseconds) on every start. The
 * pid (0 in the child, which then runs c), or -1 when it could not. */
static pid_t spawn_fork_cgroup(struct spawn_child *c)
{
#ifdef SYS_clone3
	const struct spawn_cgroup *cg = c->o->cgroup;
	if (cg && cg->dir_fd >= 0) {
		struct clone_args ca;
		memset(&ca, 0, sizeof ca);
		ca.flags = CLONE_INTO_CGROUP;
		ca.exit_signal = SIGCHLD;
		ca.cgroup = (uint64_t)cg->dir_fd;
		long pid = syscall(SYS_clone3, &ca, sizeof ca);
		if (pid == 0)
			spawn_child_run(c);
		return (pid_t)pid;
	}
#endif
	(void)c;
	return -1;
}

/* Start the child with every signal blocked (no handler of ours may run
 * in it) and run c there; the pid or -1 with errno. With shared
 * memory, it returns once the child has exec'd or failed. */
static pid_t spawn_fork_run(struct spawn_child *c)
{
	const struct spawn_cgroup *cg = c->o->cgroup;
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	c->join_cgroup = 0;
	pid_t pid = spawn_fork_cgroup(c);
	if (pid < 0) {
		c->join_cgroup = cg && cg->procs_fd >= 0;
#if SPAWN_SHARED
		char stack[SPAWN_STACK] __attribute__((aligned(16)));
		pid = clone(spawn_child_entry, stack + sizeof stack,
		            CLONE_VM | CLONE_VFORK | SIGCHLD, c);
#else
		pid = fork();
		if (pid == 0)
			spawn_child_run(c);
#endif
	}
	int saved = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid > 0 && c->o->new_pgroup)
		setpgid(pid, pid); /* also in the child: no race on kill */
	errno = saved;
	return pid;
}

/* Wait for the exec: 0, or -1 and *err from the child's report (the
 * child reaped). */
static int spawn_await_exec(pid_t pid, int rfd, const char *path, char **err)
{
	struct spawn_report r;
	size_t got = 0;
	while (got < sizeof r) {
		ssize_t n = read(rfd, (char *)&r + got, sizeof r - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < sizeof r)
		return 0; /* EOF: the exec closed the pipe */
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	const char *step = r.step >= 0 && r.step <= SPAWN_STEP_CWD
	                       ? spawn_step_name[r.step]
	                       : "setup";
	if (!step)
		return set_err(err, "cannot run %s: %s", path, strerror(r.err));
	return set_err(err, "cannot run %s: %s: %s", path, step,
	               strerror(r.err));
}

/* Move *fd above 3 (our stdin, stdout or stderr was closed, or it is
 * 3), so the child placing its own cannot land on it. */
static int spawn_fd_above_3(int *fd)
{
	int high = fcntl(*fd, F_DUPFD_CLOEXEC, 4);
	if (high < 0)
		return -1;
	close(*fd);
	*fd = high;
	return 0;
}

/* The child's end of io (in *child, -1: leave it) and ours (a pipe's
 * other end, in *mine). */
static int spawn_io_open(const struct spawn_io *io, int i, int *child,
                         int *mine, char **err)
{
	int p[2];
	*child = *mine = -1;
	switch (io->how) {
	case SPAWN_INHERIT:
		return 0;
	case SPAWN_FD:
		*child = io->fd;
		return 0;
	case SPAWN_PIPE:
		if (pipe2(p, O_CLOEXEC) < 0)
			return set_err(err, "pipe: %s", strerror(errno));
		*child = p[i == 0 ? 0 : 1];
		*mine = p[i == 0 ? 1 : 0];
		return 0;
	case SPAWN_NULL:
		break;
	}
	*child = open("/dev/null", (i == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
	if (*child < 0)
		return set_err(err, "/dev/null: %s", strerror(errno));
	return 0;
}

int spawn_start(const struct spawn_opts *o, struct spawn_proc *p, char **err)
{
	struct spawn_child c = {.o = o, .path = o->path ? o->path : o->argv[0]};
	int mine[3] = {-1, -1, -1}, rep[2] = {-1, -1}, rc = -1;
	c.src[0] = c.src[1] = c.src[2] = -1;
	p->pid = p->fd[0] = p->fd[1] = p->fd[2] = -1;
	for (int i = 0; i < 3; i++)
		if (spawn_io_open(&o->io[i], i, &c.src[i], &mine[i], err) < 0)
			goto out;
	if (pipe2(rep, O_CLOEXEC) < 0 ||
	    (rep[1] < 4 && spawn_fd_above_3(&rep[1]) < 0)) {
		set_err(err, "pipe: %s", strerror(errno));
		goto out;
	}
	c.report = rep[1];
	pid_t pid = spawn_fork_run(&c);
	if (pid < 0) {
		set_err(err, "cannot run %s: %s", c.path, strerror(errno));
		goto out;
	}
	close(rep[1]);
	rep[1] = -1;
	if (spawn_await_exec(pid, rep[0], c.path, err) < 0)
		goto out;
	p->pid = pid;
	for (int i = 0; i < 3; i++) {
		p->fd[i] = mine[i];
		mine[i] = -1;
	}
	rc = 0;
out:
	for (int i = 0; i < 3; i++) {
		if (o->io[i].how != SPAWN_FD && c.src[i] >= 0)
			close(c.src[i]);
		if (mine[i] >= 0)
			close(mine[i]);
	}
	for (int i = 0; i < 2; i++)
		if (rep[i] >= 0)
			close(rep[i]);
	return rc;
}

char *spawn_which(const char *name)
{
	const char *path = getenv("PATH");
	char *dirs = xstrdup(path && *path ? path : "/usr/bin:/bin");
	char *found = NULL, *save = NULL;
	for (char *d = strtok_r(dirs, ":", &save); d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		char *cand = xasprintf("%s/%s", d, name);
		if (*d == '/' && access(cand, X_OK) == 0)
			found = cand;
		else
			free(cand);
	}
	free(dirs);
	return found;
}
