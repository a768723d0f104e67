/* docker_raw.c: the raw connection an exec with stdin needs (the daemon
 * hijacks it after the start request), opened on the loop: libcurl's
 * multi interface with CURLOPT_CONNECT_ONLY does the connect and, for
 * TLS, the handshake, driven by the loop's fds and timers, so a slow
 * or remote daemon never stalls the loop. The easy handle stays in its
 * multi handle while the connection is used (curl_easy_send/recv need
 * that: CURLOPT_CONNECT_ONLY(3)). */
#include "assay/curllib.h"
#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define DK_RAW_CONNECT_MS 15000
#define DK_RAW_FDS 4 /* sockets curl may try at once (happy eyeballs) */

struct dk_raw {
	struct loop *loop;
	CURLM *m;
	CURL *easy;
	int fd; /* once connected */
	int tls, connected, done;
	int fds[DK_RAW_FDS]; /* watched for curl while connecting */
	uint64_t timer;
	dk_raw_ready_fn ready;
	void *arg;
	char errbuf[CURL_ERROR_SIZE];
};

/* Stop watching every fd and the timer of the connect. */
static void unwatch_all(struct dk_raw *r)
{
	for (int i = 0; i < DK_RAW_FDS; i++)
		if (r->fds[i] >= 0) {
			loop_fd_del(r->loop, r->fds[i]);
			r->fds[i] = -1;
		}
	if (r->timer)
		loop_timer_cancel(r->loop, r->timer);
	r->timer = 0;
}

/* The transfer (the connect) is over: tell the caller, once. r may be
 * freed by the callback: nothing touches it afterwards. */
static void check_done(struct dk_raw *r)
{
	int left;
	CURLMsg *msg;
	while ((msg = libcurl.multi_info_read(r->m, &left)))
		if (msg->msg == CURLMSG_DONE && msg->easy_handle == r->easy &&
		    !r->done) {
			r->done = 1;
			CURLcode cc = msg->data.result;
			curl_socket_t s = CURL_SOCKET_BAD;
			if (cc == CURLE_OK)
				cc = libcurl.easy_getinfo(
				    r->easy, CURLINFO_ACTIVESOCKET, &s);
			unwatch_all(r);
			if (cc == CURLE_OK && s != CURL_SOCKET_BAD) {
				r->fd = (int)s;
				r->connected = 1;
				r->ready(r->arg, NULL);
			} else {
				r->ready(r->arg,
				         r->errbuf[0]
				             ? r->errbuf
				             : libcurl.easy_strerror(cc));
			}
			return;
		}
}

/* A socket curl watches is ready: let curl go on. */
static void on_sock(int fd, int revents, void *arg)
{
	struct dk_raw *r = arg;
	int action = 0, running = 0;
	if (revents & POLLIN)
		action |= CURL_CSELECT_IN;
	if (revents & POLLOUT)
		action |= CURL_CSELECT_OUT;
	if (revents & (POLLERR | POLLHUP | POLLNVAL))
		action |= CURL_CSELECT_ERR;
	libcurl.multi_socket_action(r->m, fd, action, &running);
	check_done(r);
}

/* curl's timer is due: let curl go on. */
static void on_timer(void *arg)
{
	struct dk_raw *r = arg;
	int running = 0;
	r->timer = 0;
	libcurl.multi_socket_action(r->m, CURL_SOCKET_TIMEOUT, 0, &running);
	check_done(r);
}

/* curl says which socket to watch for what. */
static int sock_cb(CURL *e, curl_socket_t s, int what, void *userp,
                   void *socketp)
{
	struct dk_raw *r = userp;
	(void)e;
	(void)socketp;
	if (r->done)
		return 0; /* the socket is ours now */
	int slot = -1, free_slot = -1;
	for (int i = 0; i < DK_RAW_FDS; i++)
		if (r->fds[i] == (int)s)
			slot = i;
		else if (r->fds[i] < 0 && free_slot < 0)
			free_slot = i;
	if (what == CURL_POLL_REMOVE) {
		if (slot >= 0) {
			loop_fd_del(r->loop, s);
			r->fds[slot] = -1;
		}
		return 0;
	}
	if (slot < 0)
		slot = free_slot;
	if (slot < 0)
		return -1; /* more sockets than we watch */
	int ev = 0;
	if (what & CURL_POLL_IN)
		ev |= POLLIN;
	if (what & CURL_POLL_OUT)
		ev |= POLLOUT;
	r->fds[slot] = (int)s;
	loop_fd_add(r->loop, s, ev, on_sock, r);
	return 0;
}

/* curl says when to wake it. */
static int timer_cb(CURLM *m, long timeout_ms, void *userp)
{
	struct dk_raw *r = userp;
	(void)m;
	if (r->timer)
		loop_timer_cancel(r->loop, r->timer);
	r->timer = 0;
	if (timeout_ms >= 0 && !r->done)
		r->timer = loop_timer_add(r->loop, timeout_ms, on_timer, r);
	return 0;
}

struct dk_raw *dk_raw_connect(struct loop *l, const struct dk_endpoint *ep,
                              const char *url, dk_raw_ready_fn ready, void *arg,
                              char **err)
{
	if (curllib_get(err) < 0)
		return NULL;
	struct dk_raw *r = xcalloc(1, sizeof *r);
	r->loop = l;
	r->fd = -1;
	r->ready = ready;
	r->arg = arg;
	r->tls = ep->tls;
	for (int i = 0; i < DK_RAW_FDS; i++)
		r->fds[i] = -1;
	r->m = libcurl.multi_init();
	r->easy = libcurl.easy_init();
	if (!r->m || !r->easy) {
		dk_raw_free(r);
		set_err(err, "cannot create a libcurl transfer");
		return NULL;
	}
	CURL *e = r->easy;
	if (libcurl.easy_setopt(e, CURLOPT_URL, url) != CURLE_OK ||
	    libcurl.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") !=
	        CURLE_OK) {
		dk_raw_free(r);
		set_err(err, "cannot open a connection to %s with libcurl",
		        url);
		return NULL;
	}
	libcurl.easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
	libcurl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	libcurl.easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	libcurl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
	                    (long)DK_RAW_CONNECT_MS);
	libcurl.easy_setopt(e, CURLOPT_CONNECT_ONLY, 1L);
	if (ep->unix_path)
		libcurl.easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, ep->unix_path);
	if (ep->ca)
		libcurl.easy_setopt(e, CURLOPT_CAINFO, ep->ca);
	if (ep->cert)
		libcurl.easy_setopt(e, CURLOPT_SSLCERT, ep->cert);
	if (ep->key)
		libcurl.easy_setopt(e, CURLOPT_SSLKEY, ep->key);
	if (ep->tls && !ep->verify) {
		libcurl.easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		libcurl.easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	libcurl.multi_setopt(r->m, CURLMOPT_SOCKETFUNCTION, sock_cb);
	libcurl.multi_setopt(r->m, CURLMOPT_SOCKETDATA, r);
	libcurl.multi_setopt(r->m, CURLMOPT_TIMERFUNCTION, timer_cb);
	libcurl.multi_setopt(r->m, CURLMOPT_TIMERDATA, r);
	if (libcurl.multi_add_handle(r->m, e) != CURLM_OK) {
		dk_raw_free(r);
		set_err(err, "cannot start a libcurl transfer");
		return NULL;
	}
	/* the timer callback has asked for a start: the loop kicks it */
	return r;
}

int dk_raw_fd(const struct dk_raw *r)
{
	return r->fd;
}

long dk_raw_send(struct dk_raw *r, const void *data, size_t n)
{
	size_t sent = 0;
	CURLcode rc = libcurl.easy_send(r->easy, data, n, &sent);
	if (rc == CURLE_AGAIN)
		return 0;
	return rc == CURLE_OK ? (long)sent : -1;
}

long dk_raw_recv(struct dk_raw *r, void *buf, size_t n)
{
	size_t got = 0;
	CURLcode rc = libcurl.easy_recv(r->easy, buf, n, &got);
	if (rc == CURLE_AGAIN)
		return -2;
	return rc == CURLE_OK ? (long)got : -1;
}

int dk_raw_shutdown_write(struct dk_raw *r)
{
	if (r->tls || r->fd < 0)
		return -1;
	return shutdown(r->fd, SHUT_WR);
}

void dk_raw_free(struct dk_raw *r)
{
	if (!r)
		return;
	r->done = 1; /* callbacks from here on change nothing */
	unwatch_all(r);
	if (r->connected)
		loop_fd_del(r->loop, r->fd);
	if (r->m && r->easy)
		libcurl.multi_remove_handle(r->m, r->easy);
	if (r->easy)
		libcurl.easy_cleanup(r->easy);
	if (r->m)
		libcurl.multi_cleanup(r->m);
	if (r->timer)
		loop_timer_cancel(r->loop, r->timer);
	free(r);
}
