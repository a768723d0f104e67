/* skip.h: what a unit test does when this machine lacks something it
 * needs (bubblewrap, a Docker daemon, a pty, a helper binary). On a
 * developer's machine it is a skip: cmocka's skip() for one test, and
 * the binary exits 77 (ctest's skip) when nothing failed. Under CI=true
 * nothing may be missing: a skip is a failure that names what was, as
 * tests/e2e/lib.bash's skip. Include it after cmocka.h. */
#ifndef ASSAY_TEST_SKIP_H
#define ASSAY_TEST_SKIP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tests skipped so far, for test_skip_exit. */
static int test_skipped;

static inline int test_in_ci(void)
{
	const char *ci = getenv("CI");
	return ci && !strcmp(ci, "true");
}

/* Inside a cmocka test: skip it, or under CI=true fail it, saying what
 * is missing. Does not return. */
static inline void test_skip(const char *what)
{
	if (test_in_ci())
		fail_msg("CI=true, a skip is a failure: %s", what);
	print_message("SKIPPED: %s\n", what);
	test_skipped++;
	skip();
}

/* Before any test runs, when none of them can run here: says why, and
 * gives the binary's exit code (77, or 1 under CI=true). */
static inline int test_skip_all(const char *what)
{
	int ci = test_in_ci();
	fprintf(stderr, "%s: %s\n",
	        ci ? "FAIL (CI=true, a skip is a failure)" : "SKIPPED", what);
	return ci ? 1 : 77;
}

/* cmocka's result (the number of failed tests) as the binary's exit
 * code: 77 when tests were skipped and none failed. */
static inline int test_skip_exit(int failed)
{
	return failed ? failed : test_skipped ? 77 : 0;
}

#endif
