/* test_spawn.c: starting a child (core/spawn.c): stdin, stdout and
 * stderr placed, signals as a fresh process has them, nothing else of
 * ours inherited, the options applied, and a failure in the child
 * reported as an error with no child left behind. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "assay/spawn.h"
#include "assay/util.h"

/* All of fd into a fresh string, then close it. */
static char *read_all(int fd)
{
	size_t len = 0, cap = 4096;
	char *s = xmalloc(cap);
	ssize_t n;
	while ((n = read(fd, s + len, cap - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		assert_true(n > 0);
		len += (size_t)n;
		if (len == cap - 1)
			s = xrealloc(s, cap *= 2);
	}
	s[len] = '\0';
	close(fd);
	return s;
}

/* Reap pid; its exit code (-1 when killed). */
static int reap(pid_t pid)
{
	int st = 0;
	while (waitpid(pid, &st, 0) < 0)
		assert_int_equal(errno, EINTR);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Run o with stdout piped (and stderr, into *err_out, when given);
 * what it printed on stdout. It must exit 0. */
static char *run(struct spawn_opts *o, char **err_out)
{
	struct spawn_proc p;
	char *err = NULL;
	o->io[1].how = SPAWN_PIPE;
	if (err_out)
		o->io[2].how = SPAWN_PIPE;
	if (spawn_start(o, &p, &err) < 0)
		fail_msg("spawn: %s", err);
	char *out = read_all(p.fd[1]);
	if (err_out)
		*err_out = read_all(p.fd[2]);
	assert_int_equal(reap(p.pid), 0);
	return out;
}

/* Pipes for stdout and stderr, a given fd for stdin, our environment or
 * the one given. */
static void test_stdio(void **state)
{
	(void)state;
	char path[] = "/tmp/test_spawn_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, "from stdin", 10), 10);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	char *argv[] = {"/bin/sh", "-c", "cat; echo \" $X\" >&2", NULL};
	char *envp[] = {"X=given", NULL};
	struct spawn_opts o = {.argv = argv, .envp = envp};
	o.io[0] = (struct spawn_io){SPAWN_FD, fd};
	char *err, *out = run(&o, &err);
	assert_string_equal(out, "from stdin");
	assert_string_equal(err, " given\n");
	free(out);
	free(err);
	/* fd was not taken */
	assert_true(fcntl(fd, F_GETFD) >= 0);
	close(fd);
	/* stdin /dev/null: cat ends at once */
	char *cat[] = {"/bin/cat", NULL};
	struct spawn_opts o2 = {.argv = cat};
	out = run(&o2, NULL);
	assert_string_equal(out, "");
	free(out);
}

/* Nothing ignored or blocked in the child though we ignore SIGPIPE and
 * block SIGUSR1; only 0-2 reach it, though we hold a descriptor that is
 * not close-on-exec. */
static void test_fresh_child(void **state)
{
	(void)state;
	signal(SIGPIPE, SIG_IGN);
	sigset_t usr1, old;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	int leak = open("/dev/null", O_RDONLY);
	assert_true(leak >= 3);
	char *argv[] = {"/bin/grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status",
	                NULL};
	struct spawn_opts o = {.argv = argv};
	char *out = run(&o, NULL);
	assert_string_equal(out, "SigBlk:\t0000000000000000\n"
	                         "SigIgn:\t0000000000000000\n");
	free(out);
	/* ours stay as they were: the child reset its own copy */
	struct sigaction sa;
	sigaction(SIGPIPE, NULL, &sa);
	assert_true(sa.sa_handler == SIG_IGN);
	char *ls[] = {"/bin/ls", "/proc/self/fd", NULL};
	struct spawn_opts o2 = {.argv = ls};
	out = run(&o2, NULL);
	assert_string_equal(out, "0\n1\n2\n3\n"); /* 3: ls's own listing */
	free(out);
	close(leak);
	sigprocmask(SIG_SETMASK, &old, NULL);
	signal(SIGPIPE, SIG_DFL);
}

/* fd3: the program gets that descriptor as its 3 (bwrap's --info-fd 3)
 * and still nothing else of ours, also when the descriptor given is
 * 3 itself. */
static void test_fd3(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	int leak = open("/dev/null", O_RDONLY);
	char *argv[] = {"/bin/sh", "-c", "echo said >&3; ls /proc/self/fd",
	                NULL};
	struct spawn_opts o = {.argv = argv, .fd3 = &p[1]};
	char *out = run(&o, NULL);
	/* 0-2, 3, and 4 (ls's own listing) */
	assert_string_equal(out, "0\n1\n2\n3\n4\n");
	free(out);
	close(p[1]);
	out = read_all(p[0]);
	assert_string_equal(out, "said\n");
	free(out);
	close(leak);
	/* the descriptor given is 3 itself */
	assert_int_equal(pipe(p), 0);
	int r = fcntl(p[0], F_DUPFD_CLOEXEC, 10);
	int w = fcntl(p[1], F_DUPFD_CLOEXEC, 10);
	close(p[0]);
	close(p[1]);
	/* what sits on 3 (the test runner's, close-on-exec) moves aside */
	int saved = fcntl(3, F_DUPFD_CLOEXEC, 10);
	int three = dup2(w, 3);
	assert_int_equal(three, 3);
	close(w);
	struct spawn_opts o2 = {.argv = argv, .fd3 = &three};
	out = run(&o2, NULL);
	assert_string_equal(out, "0\n1\n2\n3\n4\n");
	free(out);
	close(three);
	if (saved >= 0) {
		dup2(saved, 3);
		fcntl(3, F_SETFD, FD_CLOEXEC);
		close(saved);
	}
	out = read_all(r);
	assert_string_equal(out, "said\n");
	free(out);
}

/* Limits set, and a group of its own (in place before spawn_start
 * returns, so a kill(-pid) cannot miss). */
static void test_limits_and_group(void **state)
{
	(void)state;
	struct spawn_limit lim[] = {{RLIMIT_CPU, {7, 7}}};
	char *argv[] = {"/bin/grep", "^Max cpu time", "/proc/self/limits",
	                NULL};
	struct spawn_opts o = {.argv = argv, .limits = lim, .n_limits = 1};
	struct rlimit before, after;
	getrlimit(RLIMIT_CPU, &before);
	sigset_t mask_before, mask_after;
	sigprocmask(SIG_SETMASK, NULL, &mask_before);
	char *out = run(&o, NULL);
	assert_non_null(strstr(out, " 7 "));
	free(out);
	/* the child's limits, signals and group are its own, though it
	 * ran on our memory until its exec */
	getrlimit(RLIMIT_CPU, &after);
	assert_true(before.rlim_cur == after.rlim_cur &&
	            before.rlim_max == after.rlim_max);
	sigprocmask(SIG_SETMASK, NULL, &mask_after);
	for (int sig = 1; sig < NSIG; sig++)
		assert_int_equal(sigismember(&mask_before, sig),
		                 sigismember(&mask_after, sig));
	assert_int_equal(getpgid(0), getpgrp());
	char *sleep[] = {"/bin/sleep", "30", NULL};
	struct spawn_opts o2 = {.argv = sleep, .new_pgroup = 1};
	struct spawn_proc p;
	assert_int_equal(spawn_start(&o2, &p, NULL), 0);
	assert_int_equal(getpgid(p.pid), p.pid);
	assert_int_equal(p.fd[0], -1);
	assert_int_equal(kill(-p.pid, SIGKILL), 0);
	assert_int_equal(reap(p.pid), -1);
}

/* A failed exec or step comes back as the error, reaped, nothing open. */
static void test_failures(void **state)
{
	(void)state;
	char *argv[] = {"/nonexistent/prog", NULL};
	struct spawn_opts o = {.argv = argv, .io = {{SPAWN_PIPE, -1}}};
	struct spawn_proc p;
	char *err = NULL;
	int before = open("/dev/null", O_RDONLY);
	close(before);
	assert_int_equal(spawn_start(&o, &p, &err), -1);
	assert_string_equal(err, "cannot run /nonexistent/prog: No such file "
	                         "or directory");
	free(err);
	err = NULL;
	assert_int_equal(p.pid, -1);
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	int after = open("/dev/null", O_RDONLY);
	assert_int_equal(after, before); /* no descriptor left open */
	close(after);
	struct spawn_limit bad[] = {{RLIMIT_NOFILE, {10, 5}}};
	char *t[] = {"/bin/true", NULL};
	struct spawn_opts o2 = {.argv = t, .limits = bad, .n_limits = 1};
	assert_int_equal(spawn_start(&o2, &p, &err), -1);
	assert_string_equal(err, "cannot run /bin/true: setrlimit: Invalid "
	                         "argument");
	free(err);
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
}

/* spawn_which finds a program in PATH's absolute directories only. */
static void test_which(void **state)
{
	(void)state;
	char *old = getenv("PATH") ? xstrdup(getenv("PATH")) : NULL;
	setenv("PATH", "relative:/nonexistent:/bin", 1);
	char *sh = spawn_which("sh");
	assert_string_equal(sh, "/bin/sh");
	free(sh);
	assert_null(spawn_which("no-such-program-here"));
	if (old)
		setenv("PATH", old, 1);
	free(old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stdio),
	    cmocka_unit_test(test_fresh_child),
	    cmocka_unit_test(test_fd3),
	    cmocka_unit_test(test_limits_and_group),
	    cmocka_unit_test(test_failures),
	    cmocka_unit_test(test_which),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
