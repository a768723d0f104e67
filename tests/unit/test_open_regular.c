/* test_open_regular.c: opening files assay did not make (core/util.c's
 * open_regular): a FIFO, a socket, a device or a link is refused by
 * type without blocking; a regular file opens blocking again. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static char dir[] = "/tmp/assay-openreg.XXXXXX";

static char *at(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

/* open_regular(path, flags) must fail naming path's type `kind`. */
static void refused(const char *name, int flags, const char *kind)
{
	char *p = at(name), *err = NULL;
	int64_t t0 = now_ms();
	int fd = open_regular(p, flags, 0644, &err);
	assert_int_equal(fd, -1);
	assert_true(now_ms() - t0 < 1000); /* never waited on */
	assert_non_null(err);
	char *want = xasprintf("%s is %s, not a", p, kind);
	if (!strstr(err, want))
		fail_msg("%s: got \"%s\"", want, err);
	free(want);
	free(err);
	free(p);
}

static void test_regular_opens_blocking(void **state)
{
	(void)state;
	char *p = at("plain.txt"), *err = NULL;
	assert_int_equal(write_file_replace(p, "hello", 5, &err), 0);
	int fd = open_regular(p, O_RDONLY, 0, &err);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	char buf[8];
	assert_int_equal(read(fd, buf, sizeof buf), 5);
	close(fd);
	size_t len = 0;
	char *text = read_file_flags(p, O_NOFOLLOW, 100, &len, &err);
	assert_non_null(text);
	assert_int_equal(len, 5);
	free(text);
	/* appending creates it when it is not there */
	char *q = at("new.log");
	fd = open_regular(q, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0644,
	                  &err);
	assert_true(fd >= 0);
	close(fd);
	assert_null(err);
	free(q);
	free(p);
}

static void test_fifo_refused(void **state)
{
	(void)state;
	char *p = at("fifo");
	assert_int_equal(mkfifo(p, 0644), 0);
	free(p);
	refused("fifo", O_RDONLY, "a FIFO");
	/* appending to it (a copied run dir's transcript) neither */
	refused("fifo", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, "a FIFO");
	char *q = at("fifo"), *err = NULL;
	assert_null(read_file_max(q, 100, NULL, &err));
	assert_non_null(strstr(err, "is a FIFO"));
	free(err);
	free(q);
}

static void test_socket_refused(void **state)
{
	(void)state;
	char *p = at("sock");
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s", p);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	refused("sock", O_RDONLY, "a socket");
	close(s);
	free(p);
}

static void test_links(void **state)
{
	(void)state;
	char *p = at("to-passwd"), *d = at("dangling"), *z = at("to-zero");
	assert_int_equal(symlink("/etc/passwd", p), 0);
	assert_int_equal(symlink("/nonexistent/x", d), 0);
	assert_int_equal(symlink("/dev/zero", z), 0);
	refused("to-passwd", O_RDONLY | O_NOFOLLOW, "a symbolic link");
	refused("dangling", O_RDONLY | O_NOFOLLOW, "a symbolic link");
	refused("dangling", O_WRONLY | O_CREAT | O_NOFOLLOW, "a symbolic link");
	/* followed where links are allowed, the target is what counts */
	refused("to-zero", O_RDONLY, "a character device");
	char *err = NULL;
	int fd = open_regular(p, O_RDONLY, 0, &err);
	assert_true(fd >= 0);
	close(fd);
	free(p);
	free(d);
	free(z);
}

static void test_directory(void **state)
{
	(void)state;
	refused("", O_RDONLY, "a directory");
	char *err = NULL;
	int fd = open_regular(dir, O_RDONLY | O_DIRECTORY, 0, &err);
	assert_true(fd >= 0);
	close(fd);
	char *p = at("plain.txt");
	refused("plain.txt", O_RDONLY | O_DIRECTORY, "a regular file");
	free(p);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_regular_opens_blocking),
	    cmocka_unit_test(test_fifo_refused),
	    cmocka_unit_test(test_socket_refused),
	    cmocka_unit_test(test_links),
	    cmocka_unit_test(test_directory),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
