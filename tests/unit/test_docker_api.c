/* test_docker_api.c: where the docker backend looks for the daemon
 * (DOCKER_HOST, DOCKER_CERT_PATH, DOCKER_TLS_VERIFY) and which API
 * version it speaks: negotiated from what the daemon says, never
 * hard-coded (29.x engines refuse anything below 1.44), with
 * DOCKER_API_VERSION as a pin that a daemon may refuse. The raw
 * connection of an exec with stdin (docker_raw.c): opened on the loop,
 * a stalled TLS handshake never holding the loop up. And which
 * leftovers of dead assays a start removes (only those of runs kept
 * where its own run is). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"
#include "sandbox/owner.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_version_cmp(void **state)
{
	(void)state;
	assert_true(dk_version_cmp("1.41", "1.41") == 0);
	assert_true(dk_version_cmp("1.9", "1.41") < 0); /* numeric, not text */
	assert_true(dk_version_cmp("1.100", "1.99") > 0);
	assert_true(dk_version_cmp("2.0", "1.99") > 0);
	assert_true(dk_version_cmp("junk", "1.0") < 0);
	assert_true(dk_version_cmp("1.41x", "1.0") < 0);
}

static char *nego(const char *pin, const char *max, const char *min, char **err)
{
	char *out = NULL;
	*err = NULL;
	if (dk_negotiate(pin, max, min, &out, err) < 0) {
		assert_null(out);
		assert_non_null(*err);
		return NULL;
	}
	assert_null(*err);
	return out;
}

static void test_negotiate(void **state)
{
	(void)state;
	char *err, *v;
	/* An older daemon: speak its version. */
	v = nego(NULL, "1.41", "1.12", &err);
	assert_string_equal(v, "1.41");
	free(v);
	/* A newer daemon: speak ours, which it still accepts. */
	v = nego(NULL, "1.52", "1.44", &err);
	assert_string_equal(v, DK_API_MAX);
	free(v);
	/* /version missing (no minimum known): still ours at most. */
	v = nego("", "1.60", NULL, &err);
	assert_string_equal(v, DK_API_MAX);
	free(v);
	/* A daemon whose minimum is above what we speak: refused, and
	 * the message says so and what to do. */
	assert_null(nego(NULL, "1.70", "1.60", &err));
	assert_non_null(strstr(err, "API version refused"));
	assert_non_null(strstr(err, "upgrade assay"));
	free(err);
	/* A daemon too old for us. */
	assert_null(nego(NULL, "1.24", "1.12", &err));
	assert_non_null(strstr(err, "upgrade Docker"));
	free(err);
	/* No version header at all. */
	assert_null(nego(NULL, NULL, NULL, &err));
	free(err);
	assert_null(nego(NULL, "garbage", "1.12", &err));
	free(err);
}

static void test_pinned(void **state)
{
	(void)state;
	char *err, *v;
	v = nego("1.40", "1.41", "1.12", &err);
	assert_string_equal(v, "1.40");
	free(v);
	v = nego("v1.41", "1.41", "1.12", &err); /* the v is tolerated */
	assert_string_equal(v, "1.41");
	free(v);
	/* Pinned above the daemon: refused before any request. */
	assert_null(nego("1.99", "1.41", "1.12", &err));
	assert_non_null(strstr(err, "API version refused"));
	assert_non_null(strstr(err, "DOCKER_API_VERSION"));
	free(err);
	/* Pinned below the daemon's minimum (29.x and 1.41). */
	assert_null(nego("1.41", "1.52", "1.44", &err));
	assert_non_null(strstr(err, "at least 1.44"));
	free(err);
	/* Below what assay can speak, or not a version. */
	assert_null(nego("1.20", "1.41", "1.12", &err));
	free(err);
	assert_null(nego("latest", "1.41", "1.12", &err));
	assert_non_null(strstr(err, "not a version"));
	free(err);
}

static void test_endpoint_default_and_unix(void **state)
{
	(void)state;
	struct dk_endpoint ep;
	char *err = NULL;
	assert_int_equal(
	    dk_endpoint_parse(NULL, NULL, NULL, "/root", &ep, &err), 0);
	assert_string_equal(ep.unix_path, "/var/run/docker.sock");
	assert_string_equal(ep.base, "http://docker");
	assert_false(ep.tls);
	dk_endpoint_free(&ep);
	assert_int_equal(dk_endpoint_parse("unix:///run/user/1000/docker.sock",
	                                   NULL, "1", "/root", &ep, &err),
	                 0);
	assert_string_equal(ep.unix_path, "/run/user/1000/docker.sock");
	assert_false(ep.tls); /* TLS settings do not apply to a socket */
	dk_endpoint_free(&ep);
	assert_int_equal(
	    dk_endpoint_parse("unix://", NULL, NULL, "/", &ep, &err), -1);
	free(err);
	err = NULL;
	assert_int_equal(
	    dk_endpoint_parse("ssh://me@host", NULL, NULL, "/", &ep, &err), -1);
	assert_non_null(strstr(err, "ssh -L"));
	free(err);
}

static void test_endpoint_tcp(void **state)
{
	(void)state;
	struct dk_endpoint ep;
	char *err = NULL;
	assert_int_equal(dk_endpoint_parse("tcp://10.0.0.5:2375", NULL, NULL,
	                                   "/", &ep, &err),
	                 0);
	assert_null(ep.unix_path);
	assert_string_equal(ep.base, "http://10.0.0.5:2375");
	dk_endpoint_free(&ep);
	/* No port: Docker's defaults, 2375 plain and 2376 with TLS. */
	assert_int_equal(
	    dk_endpoint_parse("tcp://dockerhost", NULL, NULL, "/", &ep, &err),
	    0);
	assert_string_equal(ep.base, "http://dockerhost:2375");
	dk_endpoint_free(&ep);
	assert_int_equal(
	    dk_endpoint_parse("tcp://", NULL, NULL, "/", &ep, &err), -1);
	free(err);
}

static void test_endpoint_tls(void **state)
{
	(void)state;
	char dir[] = "/tmp/assay-dkcert-XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct dk_endpoint ep;
	char *err = NULL;
	/* DOCKER_TLS_VERIFY without the files: a clear error. */
	assert_int_equal(
	    dk_endpoint_parse("tcp://h:2376", dir, "1", "/", &ep, &err), -1);
	assert_non_null(strstr(err, "DOCKER_CERT_PATH"));
	free(err);
	err = NULL;
	const char *names[] = {"ca.pem", "cert.pem", "key.pem"};
	for (int i = 0; i < 3; i++) {
		char *p = xasprintf("%s/%s", dir, names[i]);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fputs("x", f);
		fclose(f);
		free(p);
	}
	assert_int_equal(dk_endpoint_parse("tcp://h", dir, "1", "/", &ep, &err),
	                 0);
	assert_string_equal(ep.base, "https://h:2376");
	assert_true(ep.tls && ep.verify);
	assert_non_null(strstr(ep.ca, "/ca.pem"));
	assert_non_null(strstr(ep.cert, "/cert.pem"));
	assert_non_null(strstr(ep.key, "/key.pem"));
	dk_endpoint_free(&ep);
	/* Without DOCKER_CERT_PATH: ~/.docker. */
	char *home = xasprintf("%s/home", dir);
	char *dd = xasprintf("%s/.docker", home);
	assert_int_equal(mkdir(home, 0700), 0);
	assert_int_equal(mkdir(dd, 0700), 0);
	for (int i = 0; i < 3; i++) {
		char *p = xasprintf("%s/%s", dd, names[i]);
		FILE *f = fopen(p, "w");
		fputs("x", f);
		fclose(f);
		free(p);
	}
	assert_int_equal(
	    dk_endpoint_parse("tcp://h:1234", NULL, "yes", home, &ep, &err), 0);
	assert_string_equal(ep.base, "https://h:1234");
	assert_non_null(strstr(ep.ca, "/home/.docker/ca.pem"));
	dk_endpoint_free(&ep);
	rm_rf(dir);
	free(home);
	free(dd);
}

/* ---- the raw connection, on the loop ---- */

struct ready {
	int called;
	char *err;
};

static void on_ready(void *arg, const char *err)
{
	struct ready *r = arg;
	r->called++;
	r->err = err ? xstrdup(err) : NULL;
}

static void tick(void *arg)
{
	++*(int *)arg;
}

static void test_raw_unix(void **state)
{
	(void)state;
	char dir[] = "/tmp/assay-raw-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *path = xasprintf("%s/s", dir);
	int srv = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	assert_int_equal(bind(srv, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(srv, 4), 0);
	struct loop *l = loop_new();
	struct dk_endpoint ep = {.unix_path = path};
	struct ready rd = {0};
	char *err = NULL;
	struct dk_raw *r =
	    dk_raw_connect(l, &ep, "http://docker/x", on_ready, &rd, &err);
	assert_non_null(r);
	assert_int_equal(rd.called, 0); /* never from the call itself */
	int64_t end = now_ms() + 5000;
	while (!rd.called && now_ms() < end)
		loop_once(l, 50);
	assert_int_equal(rd.called, 1);
	assert_null(rd.err);
	int c = accept(srv, NULL, NULL);
	assert_true(c >= 0);
	assert_int_equal(dk_raw_send(r, "ping", 4), 4);
	char b[8] = "";
	assert_int_equal(read(c, b, sizeof b), 4);
	assert_memory_equal(b, "ping", 4);
	assert_int_equal(write(c, "pong", 4), 4);
	struct pollfd p = {.fd = dk_raw_fd(r), .events = POLLIN};
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(dk_raw_recv(r, b, sizeof b), 4);
	assert_memory_equal(b, "pong", 4);
	assert_int_equal(dk_raw_shutdown_write(r), 0);
	assert_int_equal(read(c, b, sizeof b), 0); /* half-closed */
	dk_raw_free(r);
	close(c);
	/* nothing listening: the error comes through the loop too */
	unlink(path);
	rd.called = 0;
	r = dk_raw_connect(l, &ep, "http://docker/x", on_ready, &rd, &err);
	assert_non_null(r);
	end = now_ms() + 5000;
	while (!rd.called && now_ms() < end)
		loop_once(l, 50);
	assert_int_equal(rd.called, 1);
	assert_non_null(rd.err);
	free(rd.err);
	dk_raw_free(r);
	close(srv);
	loop_free(l);
	rmdir(dir);
	free(path);
}

/* A daemon that takes the TCP connection but never answers the TLS
 * handshake: the loop keeps running (its timers fire) meanwhile. */
static void test_raw_tls_stall(void **state)
{
	(void)state;
	int srv = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(srv, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(srv, 4), 0);
	socklen_t len = sizeof sa;
	getsockname(srv, (struct sockaddr *)&sa, &len);
	char *url = xasprintf("https://127.0.0.1:%d/x", ntohs(sa.sin_port));
	struct loop *l = loop_new();
	struct dk_endpoint ep = {.tls = 1, .verify = 0};
	struct ready rd = {0};
	char *err = NULL;
	int64_t t0 = now_ms();
	struct dk_raw *r = dk_raw_connect(l, &ep, url, on_ready, &rd, &err);
	assert_non_null(r);
	/* a hang guard: the handshake never ends, so a blocking connect
	 * would return only at its 15 s limit */
	assert_true(now_ms() - t0 < 2000);
	/* the timers fire, one after the other, while the handshake
	 * stalls (at most 10 s, under the connect limit) */
	int ticks = 0;
	for (int i = 0; i < 6; i++)
		loop_timer_add(l, 50 * (i + 1), tick, &ticks);
	int64_t end = now_ms() + 10000;
	while (ticks < 6 && now_ms() < end)
		loop_once(l, 20);
	assert_int_equal(ticks, 6);
	assert_int_equal(rd.called, 0); /* still in the handshake */
	dk_raw_free(r);
	loop_free(l);
	close(srv);
	free(url);
}

/* The labels an assay gives its container, for an owner pid, a run
 * dir's directory (NULL: none, as an older assay made them) and a
 * host (NULL: this one). */
static cJSON *labels(int pid, const char *root, const char *host)
{
	char me[256], boot[64] = "", num[24];
	if (gethostname(me, sizeof me) < 0)
		snprintf(me, sizeof me, "unknown");
	me[sizeof me - 1] = '\0';
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (f) {
		if (!fgets(boot, sizeof boot, f))
			boot[0] = '\0';
		fclose(f);
	}
	boot[strcspn(boot, "\n")] = '\0';
	snprintf(num, sizeof num, "%d", pid);
	cJSON *l = cJSON_CreateObject();
	cJSON_AddStringToObject(l, "assay.run", "run-x");
	cJSON_AddStringToObject(l, "assay.owner.pid", num);
	cJSON_AddStringToObject(l, "assay.owner.host", host ? host : me);
	cJSON_AddStringToObject(l, "assay.owner.boot", boot);
	/* a start time no process has: a reused pid is not the owner */
	cJSON_AddStringToObject(l, "assay.owner.start",
	                        pid == getpid() ? "" : "1");
	if (root)
		cJSON_AddStringToObject(l, "assay.root", root);
	return l;
}

/* A start removes what a dead assay left of a run kept in the same
 * directory as its own, nothing of a live one, nothing of runs kept
 * elsewhere (another test's, another project's) and nothing of another
 * host's; what an assay without the label made goes as before. */
static void test_leftover_scope(void **state)
{
	(void)state;
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	assert_true(dead > 0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	const char *root = "/tmp/assay-e2e.AAAAAA";
	struct {
		int pid;
		const char *root, *host;
		int leftover;
	} cases[] = {
	    {dead, root, NULL, 1},
	    {dead, "/tmp/assay-e2e.BBBBBB", NULL, 0},
	    {dead, "/tmp", NULL, 0},
	    {dead, NULL, NULL, 1},
	    {(int)getpid(), root, NULL, 0},
	    {(int)getpid(), NULL, NULL, 0},
	    {dead, root, "another-host.example", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		cJSON *l = labels(cases[i].pid, cases[i].root, cases[i].host);
		if (owner_leftover(l, root) != cases[i].leftover)
			fail_msg("case %zu: pid %d, root %s, host %s: want %d",
			         i, cases[i].pid,
			         cases[i].root ? cases[i].root : "(none)",
			         cases[i].host ? cases[i].host : "(this)",
			         cases[i].leftover);
		cJSON_Delete(l);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_version_cmp),
	    cmocka_unit_test(test_negotiate),
	    cmocka_unit_test(test_pinned),
	    cmocka_unit_test(test_endpoint_default_and_unix),
	    cmocka_unit_test(test_endpoint_tcp),
	    cmocka_unit_test(test_endpoint_tls),
	    cmocka_unit_test(test_raw_unix),
	    cmocka_unit_test(test_raw_tls_stall),
	    cmocka_unit_test(test_leftover_scope),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
