/* test_http.c: http.c against a tiny HTTP server running on the same
 * loop (TCP and unix socket): callbacks in order, headers, methods,
 * and the reentrant cases: cancelling, starting and freeing from
 * inside callbacks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "assay/buf.h"
#include "assay/http.h"
#include "assay/loop.h"
#include "assay/util.h"

/* --- the server --- */

#define MAX_CONNS 64

struct conn;

struct srv {
	struct loop *loop;
	int lfd, ufd;
	int port;
	char upath[108];
	struct conn *conns[MAX_CONNS];
};

struct conn {
	struct srv *srv;
	struct loop *loop;
	int fd;
	struct buf in;
	int pieces; /* /stream: pieces left to send */
	uint64_t timer;
};

static void conn_close(struct conn *c)
{
	for (int i = 0; i < MAX_CONNS; i++)
		if (c->srv->conns[i] == c)
			c->srv->conns[i] = NULL;
	loop_fd_del(c->loop, c->fd);
	if (c->timer)
		loop_timer_cancel(c->loop, c->timer);
	close(c->fd);
	buf_free(&c->in);
	free(c);
}

static void say(int fd, const char *s)
{
	size_t n = strlen(s);
	while (n > 0) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void stream_piece(void *arg)
{
	struct conn *c = arg;

	c->timer = 0;
	if (c->pieces-- <= 0) {
		conn_close(c);
		return;
	}
	say(c->fd, "data: piece\n\n");
	c->timer = loop_timer_add(c->loop, 5, stream_piece, c);
}

/* Answer one complete request; returns 1 when the connection is done. */
static int respond(struct conn *c, const char *req, const char *body)
{
	char method[16] = "", path[128] = "";
	char *out;

	sscanf(req, "%15s %127s", method, path);
	if (strcmp(path, "/hello") == 0) {
		say(c->fd, "HTTP/1.1 200 OK\r\nX-Test: yes\r\nContent-Length: "
		           "5\r\nConnection: close\r\n\r\nhello");
	} else if (strcmp(path, "/nobody") == 0) {
		say(c->fd, "HTTP/1.1 204 No Content\r\nX-A: 1\r\nConnection: "
		           "close\r\n\r\n");
	} else if (strcmp(path, "/continue") == 0) {
		say(c->fd, "HTTP/1.1 100 Continue\r\nX-Early: 1\r\n\r\n"
		           "HTTP/1.1 201 Created\r\nX-Late: 2\r\n"
		           "Content-Length: 2\r\nConnection: close\r\n\r\nok");
	} else if (strcmp(path, "/echo") == 0) {
		out = xasprintf("HTTP/1.1 200 OK\r\nX-Method: %s\r\n"
		                "Content-Length: %zu\r\nConnection: close\r\n"
		                "\r\n%s",
		                method, strlen(body), body);
		say(c->fd, out);
		free(out);
	} else if (strcmp(path, "/quiet") == 0) {
		/* headers now, the body half a second later */
		say(c->fd, "HTTP/1.1 200 OK\r\nContent-Type: "
		           "text/event-stream\r\nConnection: close\r\n\r\n");
		c->pieces = 1;
		c->timer = loop_timer_add(c->loop, 500, stream_piece, c);
		return 0;
	} else if (strcmp(path, "/stream") == 0) {
		say(c->fd, "HTTP/1.1 200 OK\r\nContent-Type: "
		           "text/event-stream\r\nConnection: close\r\n\r\n");
		c->pieces = 5;
		c->timer = loop_timer_add(c->loop, 1, stream_piece, c);
		return 0;
	} else {
		say(c->fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n"
		           "Connection: close\r\n\r\nnope");
	}
	return 1;
}

static void conn_read(int fd, int revents, void *arg)
{
	struct conn *c = arg;
	char tmp[4096];
	ssize_t n = read(fd, tmp, sizeof tmp);

	if (n <= 0) {
		if (n < 0 && errno == EAGAIN)
			return;
		conn_close(c);
		return;
	}
	buf_append(&c->in, tmp, (size_t)n);
	char *end = strstr(c->in.data, "\r\n\r\n");
	if (!end)
		return;
	size_t clen = 0;
	char *cl = strcasestr(c->in.data, "content-length:");
	if (cl && cl < end)
		clen = strtoul(cl + 15, NULL, 10);
	if (c->in.len < (size_t)(end + 4 - c->in.data) + clen)
		return;
	loop_fd_events(c->loop, fd, 0);
	char *body = xstrndup(end + 4, clen);
	if (respond(c, c->in.data, body))
		conn_close(c);
	free(body);
}

static void srv_accept(int fd, int revents, void *arg)
{
	struct srv *s = arg;
	int cfd = accept(fd, NULL, NULL);

	if (cfd < 0)
		return;
	struct conn *c = xcalloc(1, sizeof *c);
	c->srv = s;
	c->loop = s->loop;
	for (int i = 0; i < MAX_CONNS; i++)
		if (!s->conns[i]) {
			s->conns[i] = c;
			break;
		}
	c->fd = cfd;
	buf_init(&c->in, 0);
	fcntl(cfd, F_SETFL, O_NONBLOCK);
	loop_fd_add(s->loop, cfd, POLLIN, conn_read, c);
}

static void srv_start(struct srv *s, struct loop *l)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	socklen_t len = sizeof sin;

	memset(s, 0, sizeof *s);
	s->loop = l;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	assert_int_equal(bind(s->lfd, (struct sockaddr *)&sin, sizeof sin), 0);
	assert_int_equal(listen(s->lfd, 16), 0);
	getsockname(s->lfd, (struct sockaddr *)&sin, &len);
	s->port = ntohs(sin.sin_port);
	loop_fd_add(l, s->lfd, POLLIN, srv_accept, s);

	snprintf(s->upath, sizeof s->upath, "/tmp/assay-test-http-%d.sock",
	         (int)getpid());
	unlink(s->upath);
	strcpy(sun.sun_path, s->upath);
	s->ufd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	assert_int_equal(bind(s->ufd, (struct sockaddr *)&sun, sizeof sun), 0);
	assert_int_equal(listen(s->ufd, 16), 0);
	loop_fd_add(l, s->ufd, POLLIN, srv_accept, s);
}

static void srv_stop(struct srv *s)
{
	for (int i = 0; i < MAX_CONNS; i++)
		if (s->conns[i])
			conn_close(s->conns[i]);
	loop_fd_del(s->loop, s->lfd);
	loop_fd_del(s->loop, s->ufd);
	close(s->lfd);
	close(s->ufd);
	unlink(s->upath);
}

/* --- the client side --- */

struct fx {
	struct loop *loop;
	struct http *http;
	struct srv srv;
	int stop_after_done; /* loop stops after this many on_done */
	int ndone;
};

/* What one transfer saw, in order. */
struct rec {
	struct fx *fx;
	struct buf log; /* "R<status>" "D<data>" "E<ok>:<msg>" */
	struct buf body;
	int cancel_self_on_data;
	struct http_xfer *cancel_other;
	int abort_on_data;
	int free_http_on_data;
	int stop_on_response;
	char hdr_test[32], hdr_early[8], hdr_late[8], hdr_method[16];
	struct http_xfer *x;
	void (*then)(struct rec *r); /* run from on_done */
};

static void rec_response(struct http_xfer *x, long status, void *arg)
{
	struct rec *r = arg;
	const char *v;

	buf_printf(&r->log, "R%ld ", status);
	assert_int_equal(http_status(x), status);
	if ((v = http_header(x, "x-test")))
		snprintf(r->hdr_test, sizeof r->hdr_test, "%s", v);
	if ((v = http_header(x, "X-EARLY")))
		snprintf(r->hdr_early, sizeof r->hdr_early, "%s", v);
	if ((v = http_header(x, "x-late")))
		snprintf(r->hdr_late, sizeof r->hdr_late, "%s", v);
	if ((v = http_header(x, "X-Method")))
		snprintf(r->hdr_method, sizeof r->hdr_method, "%s", v);
	if (r->stop_on_response)
		loop_stop(r->fx->loop);
}

static int rec_data(struct http_xfer *x, const char *d, size_t n, void *arg)
{
	struct rec *r = arg;

	buf_append(&r->body, d, n);
	buf_puts(&r->log, "D ");
	if (r->cancel_other) {
		http_cancel(r->cancel_other);
		r->cancel_other = NULL;
	}
	if (r->free_http_on_data) {
		http_free(r->fx->http);
		r->fx->http = NULL;
		loop_stop(r->fx->loop);
		return 0;
	}
	if (r->cancel_self_on_data) {
		http_cancel(x);
		loop_stop(r->fx->loop);
		return 0;
	}
	return r->abort_on_data ? -1 : 0;
}

static void rec_done(struct http_xfer *x, int ok, const char *msg, void *arg)
{
	struct rec *r = arg;

	buf_printf(&r->log, "E%d", ok);
	if (!ok)
		assert_non_null(msg);
	if (r->then)
		r->then(r);
	if (++r->fx->ndone >= r->fx->stop_after_done)
		loop_stop(r->fx->loop);
}

static struct http_xfer *get(struct fx *fx, struct rec *r, const char *path,
                             const char *method, const char *body, int use_unix)
{
	char *url = xasprintf("http://127.0.0.1:%d%s", fx->srv.port, path);
	const char *hdrs[] = {"X-Client: test", NULL};
	struct http_request req = {
	    .method = method,
	    .url = url,
	    .headers = hdrs,
	    .body = body,
	    .body_len = body ? strlen(body) : 0,
	    .unix_socket = use_unix ? fx->srv.upath : NULL,
	    .on_response = rec_response,
	    .on_data = rec_data,
	    .on_done = rec_done,
	    .arg = r,
	};
	char *err = NULL;

	r->fx = fx;
	if (!r->log.data) {
		buf_init(&r->log, 0);
		buf_init(&r->body, 0);
	}
	r->x = http_start(fx->http, &req, &err);
	assert_non_null(r->x);
	free(url);
	return r->x;
}

static void rec_free(struct rec *r)
{
	buf_free(&r->log);
	buf_free(&r->body);
}

static void run_loop(struct fx *fx, int max_ms)
{
	int64_t end = now_ms() + max_ms;

	while (!loop_stopped(fx->loop) && now_ms() < end)
		loop_once(fx->loop, 50);
}

static int setup(void **state)
{
	struct fx *fx = xcalloc(1, sizeof *fx);

	fx->loop = loop_new();
	fx->http = http_new(fx->loop);
	srv_start(&fx->srv, fx->loop);
	fx->stop_after_done = 1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	http_free(fx->http);
	srv_stop(&fx->srv);
	loop_free(fx->loop);
	free(fx);
	return 0;
}

static void test_get(void **state)
{
	struct fx *fx = *state;
	struct rec r = {0};

	get(fx, &r, "/hello", "GET", NULL, 0);
	run_loop(fx, 5000);
	assert_string_equal(buf_str(&r.log), "R200 D E1");
	assert_string_equal(buf_str(&r.body), "hello");
	assert_string_equal(r.hdr_test, "yes");
	rec_free(&r);
}

static void test_no_body(void **state)
{
	struct fx *fx = *state;
	struct rec r = {0};

	get(fx, &r, "/nobody", "GET", NULL, 0);
	run_loop(fx, 5000);
	/* on_response still comes, before on_done. */
	assert_string_equal(buf_str(&r.log), "R204 E1");
	rec_free(&r);
}

static void test_headers_reset_on_new_status(void **state)
{
	struct fx *fx = *state;
	struct rec r = {0};

	get(fx, &r, "/continue", "POST", "x", 0);
	run_loop(fx, 5000);
	assert_string_equal(buf_str(&r.log), "R201 D E1");
	assert_string_equal(r.hdr_early, "");
	assert_string_equal(r.hdr_late, "2");
	rec_free(&r);
}

static void test_methods_and_body(void **state)
{
	struct fx *fx = *state;
	struct rec a = {0}, b = {0}, c = {0};

	fx->stop_after_done = 3;
	get(fx, &a, "/echo", "POST", "{\"a\":1}", 0);
	get(fx, &b, "/echo", "PUT", "tarball", 0);
	get(fx, &c, "/echo", "DELETE", NULL, 0);
	run_loop(fx, 5000);
	assert_string_equal(buf_str(&a.body), "{\"a\":1}");
	assert_string_equal(a.hdr_method, "POST");
	assert_string_equal(buf_str(&b.body), "tarball");
	assert_string_equal(b.hdr_method, "PUT");
	assert_string_equal(c.hdr_method, "DELETE");
	rec_free(&a);
	rec_free(&b);
	rec_free(&c);
}

static void test_unix_socket(void **state)
{
	struct fx *fx = *state;
	struct rec r = {0};

	get(fx, &r, "/hello", "GET", NULL, 1);
	run_loop(fx, 5000);
	assert_string_equal(buf_str(&r.log), "R200 D E1");
	assert_string_equal(buf_str(&r.body), "hello");
	rec_free(&r);
}

static void test_stream_pieces(void **state)
{
	struct fx *fx = *state;
	struct rec r = {0};

	get(fx, &r, "/stream", "GET", NULL, 0);
	run_loop(fx, 5000);
	assert_string_equal(buf_str(&r.body), "data: piece\n\ndata: piece\n\n"
	                                      "data: piece\n\ndata: piece\n\n"
	                                      "data: piece\n\n");
	assert_non_null(strstr(buf_str(&r.log), "E1"));
	rec_free(&r);
}

/* on_response comes when the headers are in, not with the first body
 * byte: an event stream may stay silent for long. */
static void test_response_before_body(void **state)
{
	struct fx *fx = *state;
	struct rec r = {.stop_on_response = 1};
	int64_t t0 = now_ms();

	struct http_xfer *x = get(fx, &r, "/quiet", "GET", NULL, 0);
	run_loop(fx, 5000);
	assert_string_equal(buf_str(&r.log), "R200 ");
	assert_true(now_ms() - t0 < 400);
	http_cancel(x);
	rec_free(&r);
}

/* Cancel from inside on_data: no on_done, and http stays usable. */
static void test_cancel_self_in_data(void **state)
{
	struct fx *fx = *state;
	struct rec r = {0};

	r.cancel_self_on_data = 1;
	get(fx, &r, "/stream", "GET", NULL, 0);
	run_loop(fx, 5000);
	assert_string_equal(buf_str(&r.log), "R200 D ");
	/* Let curl settle: still no on_done. */
	for (int i = 0; i < 10; i++)
		loop_once(fx->loop, 10);
	assert_string_equal(buf_str(&r.log), "R200 D ");
	rec_free(&r);
}

static void test_cancel_other_in_data(void **state)
{
	struct fx *fx = *state;
	struct rec a = {0}, b = {0};

	/* b streams slowly; a's first data cancels b. */
	struct http_xfer *xb = get(fx, &b, "/stream", "GET", NULL, 0);
	a.cancel_other = xb;
	get(fx, &a, "/hello", "GET", NULL, 0);
	fx->stop_after_done = 1;
	run_loop(fx, 5000);
	assert_string_equal(buf_str(&a.log), "R200 D E1");
	for (int i = 0; i < 20; i++)
		loop_once(fx->loop, 10);
	assert_null(strstr(buf_str(&b.log), "E"));
	rec_free(&a);
	rec_free(&b);
}

static void test_abort_from_data(void **state)
{
	struct fx *fx = *state;
	struct rec r = {0};

	r.abort_on_data = 1;
	get(fx, &r, "/stream", "GET", NULL, 0);
	run_loop(fx, 5000);
	assert_string_equal(buf_str(&r.log), "R200 D E0");
	rec_free(&r);
}

/* on_done starts the next transfer. */
static struct rec chained;
static void start_chained(struct rec *r)
{
	r->then = NULL;
	r->fx->stop_after_done = 2;
	get(r->fx, &chained, "/hello", "GET", NULL, 0);
}

static void test_start_from_done(void **state)
{
	struct fx *fx = *state;
	struct rec r = {0};

	r.then = start_chained;
	fx->stop_after_done = 99;
	get(fx, &r, "/hello", "GET", NULL, 0);
	run_loop(fx, 5000);
	assert_string_equal(buf_str(&r.log), "R200 D E1");
	assert_string_equal(buf_str(&chained.log), "R200 D E1");
	rec_free(&r);
	rec_free(&chained);
	memset(&chained, 0, sizeof chained);
}

static void test_free_from_data(void **state)
{
	struct fx *fx = *state;
	struct rec a = {0}, b = {0};

	a.free_http_on_data = 1;
	get(fx, &b, "/stream", "GET", NULL, 0);
	get(fx, &a, "/stream", "GET", NULL, 0);
	run_loop(fx, 5000);
	assert_null(fx->http);
	assert_null(strstr(buf_str(&b.log), "E"));
	rec_free(&a);
	rec_free(&b);
}

static void test_refused(void **state)
{
	struct fx *fx = *state;
	struct rec r = {0};
	struct http_request req = {
	    .url = "http://127.0.0.1:1/",
	    .on_response = rec_response,
	    .on_data = rec_data,
	    .on_done = rec_done,
	    .arg = &r,
	};
	char *err = NULL;

	r.fx = fx;
	buf_init(&r.log, 0);
	buf_init(&r.body, 0);
	assert_non_null(http_start(fx->http, &req, &err));
	run_loop(fx, 5000);
	assert_string_equal(buf_str(&r.log), "E0");
	rec_free(&r);
}

static void test_cancel_before_running(void **state)
{
	struct fx *fx = *state;
	struct rec r = {0};

	struct http_xfer *x = get(fx, &r, "/hello", "GET", NULL, 0);
	http_cancel(x);
	for (int i = 0; i < 10; i++)
		loop_once(fx->loop, 10);
	assert_string_equal(buf_str(&r.log), "");
	rec_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_get, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_body, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_headers_reset_on_new_status,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_methods_and_body, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_unix_socket, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stream_pieces, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_response_before_body, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_cancel_self_in_data, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_cancel_other_in_data, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_abort_from_data, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_start_from_done, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_free_from_data, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cancel_before_running, setup,
	                                    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
