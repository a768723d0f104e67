/* test_fdlimit.c: the descriptor limit (core/fdlimit.c): raised to the
 * hard limit, the first soft limit back in a child, what is open, and
 * the words for running out. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "assay/fdlimit.h"

/* The soft limit lowered to 64 (the hard one kept) is raised to the
 * hard one, or FDLIMIT_CAP; a child gets 64 back; fdlimit_open counts
 * a pipe's two ends. */
static void test_raise_and_child(void **state)
{
	(void)state;
	struct rlimit rl;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max <= 64)
		skip(); /* nothing to raise to */
	rl.rlim_cur = 64;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	fdlimit_raise();
	long want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > FDLIMIT_CAP
	                ? FDLIMIT_CAP
	                : (long)rl.rlim_max;
	assert_int_equal(fdlimit_soft(), want);
	int before = fdlimit_open(), p[2];
	assert_true(before >= 3);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(fdlimit_open(), before + 2);
	close(p[0]);
	close(p[1]);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit c;
		_exit(fdlimit_child() == 0 &&
		              getrlimit(RLIMIT_NOFILE, &c) == 0 &&
		              c.rlim_cur == 64 && c.rlim_max == rl.rlim_max
		          ? 0
		          : 1);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Running out says what to do, with the limit, once; other messages are
 * left alone. */
static void test_explain(void **state)
{
	(void)state;
	assert_null(fdlimit_explain("workspace: No such file or directory"));
	assert_null(fdlimit_explain(NULL));
	char *m = NULL;
	char *x = NULL;
	if (asprintf(&m, "sandbox: pipe: %s", strerror(EMFILE)) < 0)
		fail();
	x = fdlimit_explain(m);
	assert_non_null(x);
	assert_true(strncmp(x, m, strlen(m)) == 0);
	assert_non_null(strstr(x, "ulimit -n"));
	char lim[32];
	snprintf(lim, sizeof lim, "hold %ld at once", fdlimit_soft());
	assert_non_null(strstr(x, lim));
	assert_null(fdlimit_explain(x)); /* not said twice */
	free(x);
	free(m);
	if (asprintf(&m, "socket: %s", strerror(ENFILE)) < 0)
		fail();
	x = fdlimit_explain(m);
	assert_non_null(x);
	assert_non_null(strstr(x, "fs.file-max"));
	assert_null(strstr(x, "ulimit"));
	free(x);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_raise_and_child),
	    cmocka_unit_test(test_explain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
