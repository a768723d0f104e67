/* test_escape.c: attempts to get out of the local sandbox, each of
 * which must fail in the specific way the sandbox promises: host files
 * (by path, through planted and sandbox-made symlinks, through
 * inherited fds, through the host-side file tools), host environment
 * variables, the network (the host's loopback, abstract sockets, the
 * outside), writes outside the workspace, outliving the timeout, a
 * process bomb, a memory bomb, CPU and file-size limits. Needs
 * bubblewrap and user namespaces; without them: exit 77 (skip), or
 * under CI=true a failure that says what is missing (skip.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sandbox_harness.h"
#include "skip.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

static char secret_value[64];

static int setup(void **state)
{
	struct harness *h = xcalloc(1, sizeof *h);
	harness_config(h);
	*state = h;
	return 0;
}

static int teardown(void **state)
{
	struct harness *h = *state;
	harness_free(h);
	free(h);
	return 0;
}

static void start_or_skip(struct harness *h)
{
	if (harness_start(h) == 0)
		return;
	if (harness_unavailable(h))
		test_skip(h->start_err);
	fail_msg("sandbox start failed: %s", h->start_err);
}

/* Run cmd; it must fail (nonzero exit) and never print the secret. */
static void must_fail(struct harness *h, const char *cmd)
{
	struct result r;
	harness_run(h, &r, cmd, 20);
	assert_true(r.done);
	if (r.ex.exit_code == 0)
		fail_msg("'%s' succeeded: %s", cmd, buf_str(&r.out));
	if (strstr(buf_str(&r.out), secret_value) ||
	    strstr(buf_str(&r.err), secret_value))
		fail_msg("'%s' revealed the secret", cmd);
	result_free(&r);
}

/* Run cmd; it must succeed and its stdout must not contain bad. */
static void must_not_show(struct harness *h, const char *cmd, const char *bad)
{
	struct result r;
	harness_run(h, &r, cmd, 20);
	assert_true(r.done);
	if (r.ex.exit_code != 0)
		fail_msg("'%s' failed: %s", cmd, buf_str(&r.err));
	if (strstr(buf_str(&r.out), bad) || strstr(buf_str(&r.err), bad))
		fail_msg("'%s' showed '%s'", cmd, bad);
	result_free(&r);
}

static char *plant_secret(struct harness *h)
{
	snprintf(secret_value, sizeof secret_value, "TOPSECRET-%d-%lld",
	         (int)getpid(), (long long)now_ms());
	char *path = xasprintf("%s/secret.txt", h->run_dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(secret_value, f);
	fclose(f);
	return path;
}

static void test_host_files(void **state)
{
	struct harness *h = *state;
	char *secret = plant_secret(h);
	start_or_skip(h);
	char *cmd = xasprintf("cat %s", secret);
	must_fail(h, cmd);
	free(cmd);
	cmd = xasprintf("cat /proc/1/root%s", secret);
	must_fail(h, cmd);
	free(cmd);
	must_fail(h, "cat ../secret.txt");
	must_fail(h, "cat /etc/shadow");
	must_fail(h, "ls /root");
	must_fail(h, "ls /home");
	must_fail(h, "ls /work");
	must_fail(h, "ls /sys/kernel");
	must_fail(h, "cat /dev/sda /dev/vda /dev/mem");
	/* A link planted in the workspace by the host points at nothing
	 * inside the sandbox. */
	char *leak = ws_path(h, "leak");
	assert_int_equal(symlink(secret, leak), 0);
	must_fail(h, "cat leak");
	free(leak);
	/* The passwd inside is synthetic. */
	must_not_show(h, "cat /etc/passwd", "/root:/bin/bash\nbin:");
	free(secret);
}

static void test_inherited_fds(void **state)
{
	struct harness *h = *state;
	char *secret = plant_secret(h);
	start_or_skip(h);
	/* An fd the host process leaks (no O_CLOEXEC) must not arrive. */
	int fd = open(secret, O_RDONLY);
	assert_true(fd >= 0);
	int dfd = open(h->run_dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	char *cmd =
	    xasprintf("for i in $(seq 3 %d); do cat /proc/self/fd/$i; "
	              "cat /proc/self/fd/$i/secret.txt; done 2>/dev/null; "
	              "ls /proc/self/fd",
	              (fd > dfd ? fd : dfd) + 8);
	must_not_show(h, cmd, secret_value);
	free(cmd);
	close(fd);
	close(dfd);
	free(secret);
}

/* Run one file operation to its completion (checked against the
 * contract); d holds the result. */
static void settle(struct harness *h, struct hdone *d)
{
	if (harness_settle(h->loop, d, 60000) < 0)
		fail_msg("the operation broke the completion contract");
}

static void tool_read_refused(struct harness *h, const char *rel)
{
	struct hdone d = {0};
	sbx_read_file(h->sbx, rel, 1 << 20, hdone_fn, &d);
	settle(h, &d);
	if (d.rc >= 0)
		fail_msg("read_file(%s) worked: %.40s", rel, d.data);
	assert_non_null(d.err);
	hdone_free(&d);
}

static void test_file_tools_and_symlinks(void **state)
{
	struct harness *h = *state;
	char *secret = plant_secret(h);
	start_or_skip(h);
	struct result r;
	char *cmd = xasprintf("ln -s /etc/passwd pw && ln -s / root && "
	                      "ln -s .. up && ln -s %s sec && mkdir d && "
	                      "ln -s ../../.. d/up3",
	                      secret);
	harness_run(h, &r, cmd, 10);
	assert_int_equal(r.ex.exit_code, 0);
	result_free(&r);
	free(cmd);
	tool_read_refused(h, "pw");
	tool_read_refused(h, "root/etc/passwd");
	tool_read_refused(h, "up/secret.txt");
	tool_read_refused(h, "sec");
	tool_read_refused(h, "d/up3/etc/passwd");
	struct hdone d = {0};
	sbx_write_file(h->sbx, "root/tmp/assay-escape-w", "x", 1, hdone_fn, &d);
	settle(h, &d);
	assert_int_equal(d.rc, -1);
	hdone_free(&d);
	sbx_write_file(h->sbx, "up/escape-w.txt", "x", 1, hdone_fn, &d);
	settle(h, &d);
	assert_int_equal(d.rc, -1);
	hdone_free(&d);
	assert_int_equal(access("/tmp/assay-escape-w", F_OK), -1);
	char *p = xasprintf("%s/escape-w.txt", h->run_dir);
	assert_int_equal(access(p, F_OK), -1);
	free(p);
	sbx_list(h->sbx, "root", 1, 100, hdone_fn, &d);
	settle(h, &d);
	assert_int_equal(d.rc, -1);
	hdone_free(&d);
	char *dest = xasprintf("%s/fetched", h->run_dir);
	char *err = NULL;
	assert_int_equal(harness_fetch(h, "sec", dest, &err), -1);
	free(err);
	assert_int_equal(access(dest, F_OK), -1);
	free(dest);
	/* write_file replaces a link, never writes through it. */
	sbx_write_file(h->sbx, "sec", "mine", 4, hdone_fn, &d);
	settle(h, &d);
	assert_int_equal(d.rc, 0);
	hdone_free(&d);
	char *s = read_file_max(secret, 100, NULL, NULL);
	assert_string_equal(s, secret_value);
	free(s);
	free(secret);
}

static void test_environment(void **state)
{
	struct harness *h = *state;
	setenv("ASSAY_PLANTED_SECRET", "sk-planted-4f9a2c", 1);
	setenv("OPENAI_API_KEY", "sk-planted-4f9a2c", 1);
	start_or_skip(h);
	must_not_show(h,
	              "env; cat /proc/1/environ /proc/self/environ | tr '\\0' "
	              "'\\n'",
	              "sk-planted");
	must_not_show(h, "env", "ASSAY_PLANTED_SECRET");
	must_not_show(h, "env", "OPENAI_API_KEY");
	unsetenv("ASSAY_PLANTED_SECRET");
	unsetenv("OPENAI_API_KEY");
}

static int listen_tcp(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof a;
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static int listen_unix(const char *name, int abstract)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	memcpy(a.sun_path + (abstract ? 1 : 0), name, n);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
	                            (abstract ? 1 : 0));
	assert_int_equal(bind(fd, (struct sockaddr *)&a, len), 0);
	assert_int_equal(listen(fd, 8), 0);
	return fd;
}

static void no_connection(int fd)
{
	assert_int_equal(accept(fd, NULL, NULL), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
}

static void test_network(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	int port;
	int tcp = listen_tcp(&port);
	char abs_name[64];
	snprintf(abs_name, sizeof abs_name, "assay-escape-%d", (int)getpid());
	int ab = listen_unix(abs_name, 1);
	char *sock_path = xasprintf("%s/host.sock", h->run_dir);
	int us = listen_unix(sock_path, 0);
	char *cmd =
	    xasprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo CONNECTED", port);
	must_fail(h, cmd);
	free(cmd);
	cmd = xasprintf("python3 -c 'import socket; "
	                "socket.create_connection((\"127.0.0.1\", %d), 2)'",
	                port);
	must_fail(h, cmd);
	free(cmd);
	cmd = xasprintf("python3 -c 'import socket; s = "
	                "socket.socket(socket.AF_UNIX); "
	                "s.connect(\"\\0%s\")'",
	                abs_name);
	must_fail(h, cmd);
	free(cmd);
	cmd = xasprintf("python3 -c 'import socket; s = "
	                "socket.socket(socket.AF_UNIX); s.connect(\"%s\")'",
	                sock_path);
	must_fail(h, cmd);
	free(cmd);
	must_fail(h, "exec 3<>/dev/tcp/1.1.1.1/53");
	must_fail(h, "exec 3<>/dev/tcp/8.8.8.8/443");
	must_fail(h, "getent hosts example.com");
	must_fail(h, "python3 -c 'import urllib.request as u; "
	             "u.urlopen(\"http://example.com\", timeout=3)'");
	/* Only the loopback of its own namespace. */
	must_not_show(h, "cat /proc/net/dev", "eth");
	no_connection(tcp);
	no_connection(ab);
	no_connection(us);
	close(tcp);
	close(ab);
	close(us);
	free(sock_path);
}

static void test_write_outside(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	char tag[64];
	snprintf(tag, sizeof tag, "assay-escape-%d", (int)getpid());
	char *cmd = xasprintf("touch /usr/%s", tag);
	must_fail(h, cmd);
	free(cmd);
	cmd = xasprintf("touch /etc/%s", tag);
	must_fail(h, cmd);
	free(cmd);
	cmd = xasprintf("mkdir /usr/lib/%s", tag);
	must_fail(h, cmd);
	free(cmd);
	/* No capabilities: the read-only binds cannot be remounted. */
	cmd = xasprintf("mount -o remount,rw,bind /usr && touch /usr/%s", tag);
	must_fail(h, cmd);
	free(cmd);
	must_fail(h, "unshare -U true");
	must_fail(h, "unshare -m true");
	must_not_show(h, "grep CapEff /proc/self/status",
	              "CapEff:\t000001"); /* must be all zero */
	/* The sandbox's own root is read-only too; /tmp is private: a
	 * write there succeeds but stays inside. */
	cmd = xasprintf("touch /%s", tag);
	must_fail(h, cmd);
	free(cmd);
	struct result r;
	cmd = xasprintf("echo x > /tmp/%s && ls /tmp/%s", tag, tag);
	harness_run(h, &r, cmd, 10);
	assert_int_equal(r.ex.exit_code, 0);
	result_free(&r);
	free(cmd);
	const char *dirs[] = {"/usr", "/etc", "/usr/lib", "/tmp", ""};
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		char *p = xasprintf("%s/%s", dirs[i], tag);
		if (access(p, F_OK) == 0)
			fail_msg("%s appeared on the host", p);
		free(p);
	}
}

static void test_outlive_timeout(void **state)
{
	struct harness *h = *state;
	start_or_skip(h);
	struct result r;
	int64_t t0 = now_ms();
	/* Detach every way a shell can, ignore signals, then block. */
	harness_run(h, &r,
	            "(trap '' TERM HUP INT; sleep 987711) & "
	            "(setsid sleep 987712 &) & "
	            "nohup sleep 987713 >/dev/null 2>&1 & disown; "
	            "python3 -c 'import os, time\n"
	            "if os.fork() == 0:\n"
	            "    os.setsid()\n"
	            "    if os.fork() == 0:\n"
	            "        os.execvp(\"sleep\", [\"sleep\", \"987714\"])\n"
	            "' ; exec sleep 987715",
	            1);
	assert_true(r.done);
	assert_true(r.ex.timed_out);
	/* a hang guard (10 times the 1 s timeout); how soon the kill
	 * comes: tests/bench/sandbox_bench.sh */
	assert_true(r.t_exit - t0 < 10000);
	assert_int_equal(wait_no_procs("sleep 98771", 1000), 0);
	result_free(&r);
	/* Nor can it see or signal host processes. */
	char *cmd = xasprintf("kill -0 %d", (int)getpid());
	must_fail(h, cmd);
	free(cmd);
	harness_run(h, &r, "ls /proc | grep -c '^[0-9]'", 10);
	assert_true(atoi(buf_str(&r.out)) < 10);
	result_free(&r);
}

static void test_process_bomb(void **state)
{
	struct harness *h = *state;
	h->cfg.nproc = 64;
	start_or_skip(h);
	char marker[64];
	snprintf(marker, sizeof marker, "assay-bomb-%d", (int)getpid());
	char *cmd = xasprintf("bash -c ':(){ :|:& };:' %s; sleep 100", marker);
	struct result r;
	assert_non_null(harness_spawn(h, &r, cmd, 4));
	int most = 0;
	int64_t end = now_ms() + 20000;
	while (!r.done && now_ms() < end) {
		loop_once(h->loop, 100);
		int n = count_procs(marker);
		most = n > most ? n : most;
	}
	fprintf(stderr, "bomb: at most %d processes (limit %ld)\n", most,
	        h->cfg.nproc);
	assert_true(r.done);
	assert_true(r.ex.timed_out);
	assert_true(most > 0);
	/* The limit counts the sandbox's processes; the marker also
	 * matches bwrap's monitor outside the namespace. */
	assert_true(most <= h->cfg.nproc + 1);
	assert_non_null(strstr(buf_str(&r.err), "fork"));
	assert_int_equal(wait_no_procs(marker, 2000), 0);
	result_free(&r);
	free(cmd);
}

static void test_memory_bomb(void **state)
{
	struct harness *h = *state;
	start_or_skip(h); /* the default limits */
	struct result r;
	harness_run(h, &r, "python3 -c 'x = bytearray(10**11)'", 30);
	assert_int_not_equal(r.ex.exit_code, 0);
	assert_non_null(strstr(buf_str(&r.err), "MemoryError"));
	result_free(&r);
}

static void test_memory_bomb_growing(void **state)
{
	struct harness *h = *state;
	h->cfg.mem_mb = 512;
	start_or_skip(h);
	struct result r;
	harness_run(h, &r,
	            "python3 -c 'x = []\n"
	            "while True: x.append(bytearray(10**7))'",
	            60);
	assert_false(r.ex.timed_out);
	assert_int_not_equal(r.ex.exit_code, 0);
	assert_non_null(strstr(buf_str(&r.err), "MemoryError"));
	result_free(&r);
	/* Not only python: a shell doubling a string dies too. */
	harness_run(h, &r, "s=x; while :; do s=$s$s; done", 60);
	assert_false(r.ex.timed_out);
	assert_int_not_equal(r.ex.exit_code, 0);
	result_free(&r);
}

static void test_cpu_limit(void **state)
{
	struct harness *h = *state;
	h->cfg.cpu_s = 1;
	start_or_skip(h);
	struct result r;
	harness_run(h, &r, "python3 -c 'while True: pass'", 30);
	assert_false(r.ex.timed_out);
	/* SIGXCPU at the soft limit (128+24), SIGKILL at the hard one. */
	assert_true(r.ex.signal == SIGXCPU || r.ex.signal == SIGKILL);
	assert_true(r.ex.duration_ms < 10000); /* a hang guard: 10 x 1 s */
	result_free(&r);
}

static void test_file_size_limit(void **state)
{
	struct harness *h = *state;
	h->cfg.fsize_mb = 1;
	start_or_skip(h);
	struct result r;
	harness_run(h, &r, "head -c 3000000 /dev/zero > big", 30);
	assert_int_not_equal(r.ex.exit_code, 0);
	result_free(&r);
	char *p = ws_path(h, "big");
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_true(st.st_size <= (1 << 20));
	free(p);
}

/* NULL when the local sandbox can start here (or fails for a reason
 * the tests report); else why it cannot. */
static char *sandbox_unavailable(void)
{
	struct harness h;
	harness_config(&h);
	char *why = NULL;
	if (harness_start(&h) < 0 && harness_unavailable(&h))
		why = xasprintf("the local sandbox cannot run here: %s",
		                h.start_err);
	harness_free(&h);
	return why;
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	char *why = sandbox_unavailable();
	if (why) {
		int rc = test_skip_all(why);
		free(why);
		return rc;
	}
	const struct CMUnitTest tests[] = {
	    T(test_host_files),
	    T(test_inherited_fds),
	    T(test_file_tools_and_symlinks),
	    T(test_environment),
	    T(test_network),
	    T(test_write_outside),
	    T(test_outlive_timeout),
	    T(test_process_bomb),
	    T(test_memory_bomb),
	    T(test_memory_bomb_growing),
	    T(test_cpu_limit),
	    T(test_file_size_limit),
	};
	return test_skip_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
