/* docker_exec.c: commands in the container. By default through the
 * command runner (docker_runner.c: one long-lived exec, a frame per
 * command); with ASSAY_DOCKER_EXEC=exec, when the runner cannot start,
 * and for the backend's own kills and the python kernel, one Docker
 * exec each: create, start with the stream attached (demultiplexed as
 * it arrives, so stdout and stderr are live), then the exit code from
 * the exec's inspect, inside the wrapper of docker_scripts.c.
 *
 * Without stdin the start is an ordinary request on the loop (read to
 * EOF). With stdin (a python kernel, the runner) the connection must
 * carry bytes both ways after the daemon hijacks it, which libcurl's
 * transfers cannot do: a raw connection is opened on the loop
 * (docker_raw.c), the request is written by hand, the 101 is read
 * back, and from then on the socket is a frame stream in and a stdin
 * stream out.
 *
 * Stopping one command (timeout, Ctrl-C) is a kill frame to the runner,
 * or a second exec running the wrapper in kill mode; when that cannot
 * start or the command is still there after a grace period (a process
 * bomb holds every PID), the container is killed and started again:
 * the workspace is a volume and survives, /tmp does not. The restart
 * is a chain of requests on the loop (kill, then start until the
 * daemon takes it); commands started meanwhile wait for its end. */
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DK_STDIN_MAX (16u << 20) /* queued stdin bytes at most */
#define DK_HEAD_MAX (16u << 10)  /* the raw response head */
#define DK_CHUNK 65536           /* raw reads */
#define DK_KILL_GRACE_MS 3000    /* then the container is restarted */
#define DK_INSPECT_TRIES 100     /* ExitCode still null after EOF */
#define DK_INSPECT_RETRY_MS 20
#define DK_SYNC_OUT_MAX (64u << 20)
#define DK_RESTART_TRIES 50 /* starts while the kill is still going on */
#define DK_RESTART_RETRY_MS 100

struct sbx_exec {
	struct sbx *s;
	struct sbx_exec *next;
	char tag[32];
	char *id;
	struct dk_call *call;
	struct dk_raw *raw;
	int connecting;     /* raw: connect/handshake under way */
	struct buf head;    /* raw: the response head so far */
	struct buf req;     /* raw: request bytes not yet sent */
	struct buf pending; /* stdin not yet sent */
	int upgraded, close_stdin, stdin_shut;
	struct dk_demux demux;
	struct sbx_exec_obs obs;
	int sync, keep_stdin, internal;
	int timed_out, cancelled, killing, finished, restarted;
	int waiting;       /* started while the container restarts: not sent */
	int feeding, dead; /* inside a feed: free once it returns */
	char **argv;       /* file operations: to run again at stop */
	/* through the runner (docker_runner.c): its id for this command,
	 * the runner's generation, and what to run if it cannot */
	int via_runner;
	uint32_t rid;
	unsigned rgen;
	char **cmd;
	int exit_code, tries;
	uint64_t timer, grace, retry;
	int64_t t0;
	char *error;
};

static void exec_inspect(struct sbx_exec *e);
static void exec_kill(struct sbx_exec *e);
static void launch_killer(struct sbx *s, const char *tag);

static struct docker *dk_of(struct sbx *s)
{
	return s->priv;
}

static void unlink_exec(struct sbx_exec *e)
{
	struct docker *d = dk_of(e->s);
	for (struct sbx_exec **pp = &d->execs; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			return;
		}
}

static void raw_close(struct sbx_exec *e)
{
	if (!e->raw)
		return;
	dk_raw_free(e->raw);
	e->raw = NULL;
}

static void argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static char **argv_dup(const char *const *argv)
{
	size_t n = 0;
	while (argv[n])
		n++;
	char **v = xcalloc(n + 1, sizeof *v);
	for (size_t i = 0; i < n; i++)
		v[i] = xstrdup(argv[i]);
	return v;
}

static void exec_free(struct sbx_exec *e)
{
	argv_free(e->argv);
	argv_free(e->cmd);
	buf_free(&e->head);
	buf_free(&e->req);
	buf_free(&e->pending);
	free(e->id);
	free(e->error);
	free(e);
}

/* Deliver on_exit and free e (later, if a feed is running: the
 * observer may stop the sandbox from inside its output callback). */
static void exec_finish(struct sbx_exec *e)
{
	struct loop *l = e->s->loop;
	if (e->finished)
		return;
	e->finished = 1;
	if (e->timer)
		loop_timer_cancel(l, e->timer);
	if (e->grace)
		loop_timer_cancel(l, e->grace);
	if (e->retry)
		loop_timer_cancel(l, e->retry);
	dk_cancel(e->call);
	e->call = NULL;
	raw_close(e);
	unlink_exec(e);
	struct sbx_exit ex = {.exit_code = -1,
	                      .timed_out = e->timed_out,
	                      .cancelled = e->cancelled,
	                      .duration_ms = now_ms() - e->t0,
	                      .error = e->error};
	if (e->timed_out || e->cancelled) {
		ex.signal = SIGKILL;
	} else if (!e->error) {
		/* The wrapper (bash) reports a command killed by signal n
		 * as 128+n, as local's bwrap does. */
		ex.exit_code = e->exit_code;
		if (ex.exit_code > 128 && ex.exit_code < 128 + 65)
			ex.signal = ex.exit_code - 128;
		else if (ex.exit_code < 0)
			ex.signal = SIGKILL;
	}
	/* A command killed by a signal may have taken its wrapper with
	 * it: sweep what it left behind. */
	struct docker *d = dk_of(e->s);
	if (!e->internal && !e->via_runner && !e->error && !e->killing &&
	    !e->restarted && e->exit_code > 128 && !d->stopped && !d->draining)
		launch_killer(e->s, e->tag);
	if (e->obs.on_exit)
		e->obs.on_exit(e->obs.arg, &ex);
	if (e->feeding)
		e->dead = 1;
	else
		exec_free(e);
}

static void exec_fail(struct sbx_exec *e, const char *fmt, const char *detail)
{
	if (!e->error)
		e->error = xasprintf(fmt, detail ? detail : "");
	exec_finish(e);
}

/* ---- output ---- */

static void on_frame(void *arg, int stream, const char *data, size_t n)
{
	struct sbx_exec *e = arg;
	if (e->obs.on_output && n && !e->finished)
		e->obs.on_output(
		    e->obs.arg, stream == 2 ? SBX_STDERR : SBX_STDOUT, data, n);
}

static int on_stream(void *arg, const char *data, size_t n)
{
	struct sbx_exec *e = arg;
	e->feeding++;
	dk_demux_feed(&e->demux, data, n, on_frame, e);
	e->feeding--;
	if (e->dead) {
		exec_free(e);
		return -1;
	}
	return 0;
}

/* ---- inspect: the exit code once the stream has ended ---- */

static void inspect_again(void *arg)
{
	struct sbx_exec *e = arg;
	e->retry = 0;
	exec_inspect(e);
}

static void on_inspected(void *arg, long status, struct buf *body,
                         const char *err)
{
	struct sbx_exec *e = arg;
	e->call = NULL;
	if (status != 200) {
		char *m = err ? xstrdup(err) : dk_message(status, body);
		if (status == 404 && (e->killing || e->restarted)) {
			/* the container went away under a kill */
			e->exit_code = -1;
			free(m);
			exec_finish(e);
			return;
		}
		exec_fail(e, "docker: cannot read the exit code: %s", m);
		free(m);
		return;
	}
	cJSON *j = cJSON_ParseWithLength(body->data, body->len);
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(j, "ExitCode");
	int running = json_bool(j, "Running", 0);
	int known = cJSON_IsNumber(code);
	e->exit_code = known ? code->valueint : -1;
	cJSON_Delete(j);
	if (known && !running) {
		exec_finish(e);
		return;
	}
	if (!running && (e->restarted || e->killing)) {
		exec_finish(e); /* killed with its container */
		return;
	}
	if (++e->tries > DK_INSPECT_TRIES) {
		exec_fail(e,
		          "docker: the exec's stream ended but it has no "
		          "exit code%s",
		          NULL);
		return;
	}
	if (e->sync) {
		usleep(DK_INSPECT_RETRY_MS * 1000);
		exec_inspect(e);
	} else {
		e->retry = loop_timer_add(e->s->loop, DK_INSPECT_RETRY_MS,
		                          inspect_again, e);
	}
}

static void exec_inspect(struct sbx_exec *e)
{
	struct docker *d = dk_of(e->s);
	char *path = xasprintf("/exec/%s/json", e->id);
	struct dk_req r = {.method = "GET",
	                   .path = path,
	                   .on_done = on_inspected,
	                   .arg = e,
	                   .timeout_ms = 60000,
	                   .sync = e->sync};
	char *err = NULL;
	int sync = e->sync;
	struct dk_call *c = dk_send(&d->api, &r, &err);
	free(path);
	if (err) {
		exec_fail(e, "docker: %s", err);
		free(err);
	} else if (!sync) {
		e->call = c; /* sync: e may be gone already */
	}
}

/* ---- start: an ordinary streamed request ---- */

static void on_stream_done(void *arg, long status, struct buf *body,
                           const char *err)
{
	struct sbx_exec *e = arg;
	e->call = NULL;
	if (status < 200 || status >= 300) {
		char *m =
		    err && !status ? xstrdup(err) : dk_message(status, body);
		if (e->killing || e->restarted) {
			free(m);
			exec_inspect(e);
			return;
		}
		exec_fail(e, "docker: cannot start the command: %s", m);
		free(m);
		return;
	}
	/* A stream cut short (daemon gone, container killed) still has
	 * an exit code to read, or says why it has none. */
	if (err)
		log_info("docker: exec %s stream ended: %s", e->tag, err);
	exec_inspect(e);
}

static int start_streamed(struct sbx_exec *e, char **err)
{
	struct docker *d = dk_of(e->s);
	char *path = xasprintf("/exec/%s/start", e->id);
	struct dk_req r = {.method = "POST",
	                   .path = path,
	                   .json = "{\"Detach\":false,\"Tty\":false}",
	                   .on_stream = on_stream,
	                   .on_done = on_stream_done,
	                   .arg = e,
	                   .max_body = 1u << 20,
	                   .sync = e->sync};
	int sync = e->sync;
	struct dk_call *c = dk_send(&d->api, &r, err);
	free(path);
	if (*err)
		return -1;
	if (!sync)
		e->call = c; /* sync: e may be gone already */
	return 0;
}

/* ---- start: the raw upgraded connection (stdin attached) ---- */

static void raw_event(int fd, int revents, void *arg);

static void raw_watch(struct sbx_exec *e)
{
	int ev = POLLIN;
	if (e->req.len || (e->upgraded && e->pending.len) ||
	    (e->upgraded && e->close_stdin && !e->stdin_shut))
		ev |= POLLOUT;
	loop_fd_add(e->s->loop, dk_raw_fd(e->raw), ev, raw_event, e);
}

/* Send what the socket takes now: the request, then (once the daemon
 * has answered) stdin. -1 on a broken connection. */
static int raw_flush(struct sbx_exec *e)
{
	struct buf *b = e->req.len ? &e->req : &e->pending;
	while (b->len && (b == &e->req || e->upgraded)) {
		long n = dk_raw_send(e->raw, b->data, b->len);
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		buf_consume(b, (size_t)n);
		if (b == &e->req && !b->len)
			b = &e->pending;
	}
	if (e->upgraded && !e->pending.len && e->close_stdin &&
	    !e->stdin_shut) {
		e->stdin_shut = 1;
		if (dk_raw_shutdown_write(e->raw) < 0)
			log_info("docker: cannot end stdin of %s over TLS; "
			         "it ends with the command",
			         e->tag);
	}
	return 0;
}

/* The response head: 101 (or 200) starts the frame stream. */
static int raw_head(struct sbx_exec *e, const char *data, size_t n)
{
	if (buf_append(&e->head, data, n) < 0) {
		exec_fail(e,
		          "docker: the daemon's answer to exec start is "
		          "too long%s",
		          NULL);
		return -1;
	}
	const char *end = strstr(buf_str(&e->head), "\r\n\r\n");
	if (!end)
		return 0;
	long status = 0;
	sscanf(buf_str(&e->head), "HTTP/%*s %ld", &status);
	size_t used = (size_t)(end + 4 - e->head.data);
	if (status != 101 && status != 200) {
		struct buf rest;
		buf_init(&rest, 0);
		buf_append(&rest, e->head.data + used, e->head.len - used);
		char *m = dk_message(status, &rest);
		buf_free(&rest);
		exec_fail(e, "docker: cannot start the command: %s", m);
		free(m);
		return -1;
	}
	e->upgraded = 1;
	size_t left = e->head.len - used;
	if (left)
		dk_demux_feed(&e->demux, e->head.data + used, left, on_frame,
		              e);
	buf_free(&e->head);
	return 0;
}

static void raw_event_run(struct sbx_exec *e, int revents);

static void raw_event(int fd, int revents, void *arg)
{
	struct sbx_exec *e = arg;
	(void)fd;
	e->feeding++;
	raw_event_run(e, revents);
	e->feeding--;
	if (e->dead)
		exec_free(e);
}

static void raw_event_run(struct sbx_exec *e, int revents)
{
	struct docker *d = dk_of(e->s);
	if ((revents & POLLOUT) && raw_flush(e) < 0) {
		raw_close(e);
		exec_inspect(e);
		return;
	}
	char *chunk = d->chunk;
	for (;;) {
		long n = dk_raw_recv(e->raw, chunk, DK_CHUNK);
		if (n == -2)
			break;
		if (n <= 0) {
			raw_close(e);
			if (!e->upgraded)
				exec_fail(e,
				          "docker: the daemon closed the "
				          "exec connection%s",
				          NULL);
			else
				exec_inspect(e);
			return;
		}
		if (!e->upgraded) {
			if (raw_head(e, chunk, (size_t)n) < 0)
				return;
			if (e->upgraded && raw_flush(e) < 0) {
				raw_close(e);
				exec_inspect(e);
				return;
			}
		} else {
			dk_demux_feed(&e->demux, chunk, (size_t)n, on_frame, e);
		}
		if (e->finished)
			return;
	}
	raw_watch(e);
}

/* Connected (or not): send the start request, then watch. */
static void raw_ready(void *arg, const char *why)
{
	struct sbx_exec *e = arg;
	struct docker *d = dk_of(e->s);
	e->connecting = 0;
	if (why) {
		char *m = xasprintf("docker: cannot connect to %s: %s",
		                    d->api.ep.host, why);
		exec_fail(e, "%s", m); /* e is gone */
		free(m);
		return;
	}
	if (raw_flush(e) < 0) {
		exec_fail(e, "docker: the exec connection broke%s", NULL);
		return;
	}
	raw_watch(e);
}

static int start_raw(struct sbx_exec *e, char **err)
{
	struct docker *d = dk_of(e->s);
	const char *body = "{\"Detach\":false,\"Tty\":false}";
	char *url = xasprintf("%s/v%s/exec/%s/start", d->api.ep.base,
	                      d->api.version, e->id);
	char *why = NULL;
	e->raw =
	    dk_raw_connect(e->s->loop, &d->api.ep, url, raw_ready, e, &why);
	free(url);
	if (!e->raw) {
		set_err(err, "docker: cannot connect to %s: %s", d->api.ep.host,
		        why);
		free(why);
		return -1;
	}
	e->connecting = 1;
	buf_printf(&e->req,
	           "POST /v%s/exec/%s/start HTTP/1.1\r\n"
	           "Host: docker\r\n"
	           "User-Agent: assay\r\n"
	           "Content-Type: application/json\r\n"
	           "Connection: Upgrade\r\n"
	           "Upgrade: tcp\r\n"
	           "Content-Length: %zu\r\n\r\n%s",
	           d->api.version, e->id, strlen(body), body);
	return 0;
}

/* ---- create ---- */

static void on_created(void *arg, long status, struct buf *body,
                       const char *err)
{
	struct sbx_exec *e = arg;
	e->call = NULL;
	if (status != 201) {
		char *m =
		    err && !status ? xstrdup(err) : dk_message(status, body);
		exec_fail(e, "docker: cannot create the command: %s", m);
		free(m);
		return;
	}
	cJSON *j = cJSON_ParseWithLength(body->data, body->len);
	const char *id = json_str(j, "Id", NULL);
	e->id = id ? xstrdup(id) : NULL;
	cJSON_Delete(j);
	if (!e->id) {
		exec_fail(e, "docker: exec create gave no id%s", NULL);
		return;
	}
	if (e->cancelled || e->timed_out) {
		exec_finish(e); /* never started */
		return;
	}
	char *why = NULL;
	int rc = e->keep_stdin ? start_raw(e, &why) : start_streamed(e, &why);
	if (rc < 0) {
		exec_fail(e, "%s", why);
		free(why);
	}
}

static void env_add(cJSON *env, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void env_add(cJSON *env, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	cJSON_AddItemToArray(env, cJSON_CreateString(s));
	free(s);
}

/* The whole environment of a command: nothing of the host. */
static cJSON *exec_env(const struct docker *d, const char *tag)
{
	cJSON *env = cJSON_CreateArray();
	env_add(env, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
	             "/sbin:/bin");
	env_add(env, "HOME=/workspace");
	env_add(env, "SHELL=/bin/bash");
	env_add(env, "LANG=C.UTF-8");
	env_add(env, "TERM=dumb");
	env_add(env, "TMPDIR=/tmp");
	env_add(env, "MPLBACKEND=Agg");
	env_add(env, "MPLCONFIGDIR=/tmp/.mplconfig");
	env_add(env, "PYTHONUNBUFFERED=1");
	env_add(env, "PYTHONPYCACHEPREFIX=/tmp/.pycache");
	env_add(env, "OPENBLAS_NUM_THREADS=%d", d->threads);
	env_add(env, "OMP_NUM_THREADS=%d", d->threads);
	env_add(env, "ASSAY_EXEC=%s", tag);
	return env;
}

static char *exec_body(struct sbx_exec *e, const struct dk_exec_args *a)
{
	struct docker *d = dk_of(e->s);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "AttachStdin", a->keep_stdin);
	cJSON_AddBoolToObject(o, "AttachStdout", 1);
	cJSON_AddBoolToObject(o, "AttachStderr", 1);
	cJSON_AddBoolToObject(o, "Tty", 0);
	cJSON_AddStringToObject(o, "WorkingDir", "/workspace");
	cJSON_AddItemToObject(o, "Env", exec_env(d, e->tag));
	cJSON *cmd = cJSON_AddArrayToObject(o, "Cmd");
	if (a->internal != 4) {
		cJSON_AddItemToArray(cmd, cJSON_CreateString("/bin/bash"));
		cJSON_AddItemToArray(cmd, cJSON_CreateString("-c"));
	}
	if (a->internal == 4) {
		/* argv as is */
	} else if (a->internal == 2) {
		cJSON_AddItemToArray(cmd, cJSON_CreateString(dk_fileop_script));
		cJSON_AddItemToArray(cmd, cJSON_CreateString("assay-fileop"));
	} else {
		char num[3][24];
		snprintf(num[0], sizeof num[0], "%ld",
		         a->internal ? 0 : d->mem_mb);
		snprintf(num[1], sizeof num[1], "%ld",
		         a->internal ? 0 : d->cpu_s);
		snprintf(num[2], sizeof num[2], "%ld",
		         a->internal ? 0 : d->fsize_mb);
		cJSON_AddItemToArray(cmd,
		                     cJSON_CreateString(dk_wrapper_script));
		cJSON_AddItemToArray(cmd, cJSON_CreateString("assay-exec"));
		if (a->internal != 3) {
			cJSON_AddItemToArray(cmd, cJSON_CreateString("run"));
			cJSON_AddItemToArray(cmd, cJSON_CreateString(e->tag));
			for (int i = 0; i < 3; i++)
				cJSON_AddItemToArray(
				    cmd, cJSON_CreateString(num[i]));
		}
	}
	for (size_t i = 0; a->argv[i]; i++)
		cJSON_AddItemToArray(cmd, cJSON_CreateString(a->argv[i]));
	char *s = json_print(o);
	cJSON_Delete(o);
	return s;
}

/* ---- timeouts and kills ---- */

static void on_timeout(void *arg)
{
	struct sbx_exec *e = arg;
	e->timer = 0;
	if (e->finished)
		return;
	e->timed_out = 1;
	exec_kill(e);
}

static void on_grace(void *arg)
{
	struct sbx_exec *e = arg;
	e->grace = 0;
	if (e->finished)
		return;
	log_warn("docker: %s survived its kill for %d ms; restarting the "
	         "container",
	         e->tag, DK_KILL_GRACE_MS);
	char *err = NULL;
	if (dk_restart(e->s, &err) < 0) {
		log_error("%s", err);
		free(err);
	}
}

struct killer {
	struct sbx *s;
	char target[32];
};

static struct sbx_exec *find_tag(struct sbx *s, const char *tag)
{
	for (struct sbx_exec *e = dk_of(s)->execs; e; e = e->next)
		if (!strcmp(e->tag, tag))
			return e;
	return NULL;
}

static void killer_done(void *arg, const struct sbx_exit *ex)
{
	struct killer *k = arg;
	struct sbx_exec *t = find_tag(k->s, k->target);
	if (t && !t->finished && (ex->error || ex->exit_code != 0)) {
		log_warn("docker: the kill of %s failed (%s); restarting the "
		         "container",
		         k->target, ex->error ? ex->error : "nonzero exit");
		char *err = NULL;
		if (dk_restart(k->s, &err) < 0) {
			log_error("%s", err);
			free(err);
		}
	}
	free(k);
}

/* Start the wrapper in kill mode for tag; the loop reports back. */
static void launch_killer(struct sbx *s, const char *tag)
{
	if (dk_of(s)->draining || dk_of(s)->restarting)
		return; /* the restart kills everything */
	struct killer *k = xcalloc(1, sizeof *k);
	k->s = s;
	snprintf(k->target, sizeof k->target, "%s", tag);
	const char *argv[] = {"kill", tag, NULL};
	struct dk_exec_args a = {.argv = argv, .internal = 3};
	struct sbx_exec_obs obs = {NULL, killer_done, k};
	char *err = NULL;
	if (!dk_exec_start(s, &a, &obs, 0, &err)) {
		log_warn("docker: cannot start the kill of %s: %s", tag, err);
		free(err);
		free(k);
	}
}

static void exec_kill(struct sbx_exec *e)
{
	if (e->killing || e->finished)
		return;
	e->killing = 1;
	if (e->waiting) {
		exec_finish(e); /* never sent */
		return;
	}
	if (e->restarted)
		return; /* it ends with the container's kill */
	if (e->via_runner) {
		if (dk_runner_send(e->s, 'k', e->rid, NULL, 0, NULL) < 0) {
			exec_finish(e); /* no runner: nothing runs */
			return;
		}
	} else if (!e->id) {
		return; /* on_created sees the flag */
	} else {
		launch_killer(e->s, e->tag);
	}
	e->grace = loop_timer_add(e->s->loop, DK_KILL_GRACE_MS, on_grace, e);
}

void dk_exec_cancel(struct sbx_exec *e)
{
	if (!e || e->finished)
		return;
	if (!e->timed_out)
		e->cancelled = 1;
	exec_kill(e);
}

static int exec_submit(struct sbx_exec *e, const struct dk_exec_args *a,
                       char **err);

/* The commands started during the restart go now, or fail with why. */
static void resume_waiting(struct sbx *s, const char *why)
{
	struct docker *d = dk_of(s);
	for (int again = 1; again;) {
		again = 0;
		for (struct sbx_exec *e = d->execs; e; e = e->next) {
			if (!e->waiting || e->finished)
				continue;
			e->waiting = 0;
			again = 1;
			char *err = NULL;
			struct dk_exec_args a = {
			    .argv = (const char *const *)e->cmd,
			    .keep_stdin = e->keep_stdin,
			    .internal = e->internal};
			if (why)
				exec_fail(e,
				          "docker: the container could not be "
				          "restarted: %s",
				          why);
			else if (exec_submit(e, &a, &err) < 0)
				exec_fail(e, "%s", err);
			free(err);
			break; /* the list may have changed */
		}
	}
}

static void restart_end(struct sbx *s, const char *why)
{
	struct docker *d = dk_of(s);
	d->restarting = 0;
	d->restart_call = NULL;
	if (why)
		log_error("docker: cannot restart container %s: %s", d->name,
		          why);
	else
		log_warn("docker: container %s restarted", d->name);
	resume_waiting(s, why);
}

static int restart_send(struct sbx *s, char **err);

/* The next step, or the end of the restart when it cannot be sent. */
static void restart_next(struct sbx *s)
{
	char *err = NULL;
	if (restart_send(s, &err) < 0) {
		restart_end(s, err);
		free(err);
	}
}

static void restart_retry(void *arg)
{
	struct sbx *s = arg;
	dk_of(s)->restart_timer = 0;
	restart_next(s);
}

static void on_restart_reply(void *arg, long status, struct buf *body,
                             const char *err)
{
	struct sbx *s = arg;
	struct docker *d = dk_of(s);
	d->restart_call = NULL;
	if (d->restart_tries < 0) { /* the kill: start it, whatever it said */
		d->restart_tries = 0;
		restart_next(s);
		return;
	}
	if (status == 204) {
		restart_end(s, NULL);
		return;
	}
	/* Killing is asynchronous in the daemon: start may still find
	 * it running (304) for a moment. Gone (404) is for good. */
	if (status != 404 && ++d->restart_tries < DK_RESTART_TRIES) {
		d->restart_timer = loop_timer_add(s->loop, DK_RESTART_RETRY_MS,
		                                  restart_retry, s);
		return;
	}
	char *m = err && !status ? xstrdup(err) : dk_message(status, body);
	restart_end(s, m);
	free(m);
}

/* The kill (restart_tries -1) or a start, on the loop. */
static int restart_send(struct sbx *s, char **err)
{
	struct docker *d = dk_of(s);
	char *path =
	    d->restart_tries < 0
	        ? xasprintf("/containers/%s/kill?signal=SIGKILL", d->id)
	        : xasprintf("/containers/%s/start", d->id);
	struct dk_req r = {.method = "POST",
	                   .path = path,
	                   .on_done = on_restart_reply,
	                   .arg = s,
	                   .timeout_ms = 60000};
	struct dk_call *c = dk_send(&d->api, &r, err);
	free(path);
	if (!c)
		return -1;
	d->restart_call = c;
	return 0;
}

int dk_restart(struct sbx *s, char **err)
{
	struct docker *d = dk_of(s);
	if (!d->id || d->stopped || d->draining || d->restarting)
		return 0;
	d->restarting = 1;
	d->restart_tries = -1;
	for (struct sbx_exec *e = d->execs; e; e = e->next)
		e->restarted = 1;
	dk_runner_detach(s); /* it dies with the container */
	char *why = NULL;
	if (restart_send(s, &why) < 0) {
		d->restarting = 0;
		set_err(err, "docker: cannot restart container %s: %s", d->name,
		        why);
		free(why);
		return -1;
	}
	return 0;
}

/* ---- the exec entry points ---- */

/* Exec create for e (the start follows in on_created); -1 and *err
 * when the request could not be sent (e untouched). With e->sync the
 * whole exec has run when this returns and e is gone. */
static int exec_create(struct sbx_exec *e, const struct dk_exec_args *a,
                       char **err)
{
	struct docker *d = dk_of(e->s);
	char *body = exec_body(e, a);
	char *path = xasprintf("/containers/%s/exec", d->id);
	struct dk_req r = {.method = "POST",
	                   .path = path,
	                   .json = body,
	                   .on_done = on_created,
	                   .arg = e,
	                   .timeout_ms = 60000,
	                   .sync = e->sync};
	int sync = e->sync;
	char *why = NULL;
	struct dk_call *c = dk_send(&d->api, &r, &why);
	free(body);
	free(path);
	if (why) {
		set_err(err, "%s", why);
		free(why);
		return -1;
	}
	if (!sync)
		e->call = c;
	return 0;
}

/* What the runner runs for a command: the same argv the exec would
 * run inside the wrapper, the same environment, limits and cwd, as
 * NUL-separated fields: tag, cwd, mem MB, cpu s, fsize MB, argc,
 * argv..., env... */
static void field(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s) + 1);
}

static int runner_submit(struct sbx_exec *e)
{
	struct docker *d = dk_of(e->s);
	struct buf b;
	buf_init(&b, 0);
	field(&b, e->tag);
	field(&b, "/workspace");
	int lim = !e->internal;
	long nums[3] = {lim ? d->mem_mb : 0, lim ? d->cpu_s : 0,
	                lim ? d->fsize_mb : 0};
	char num[32];
	for (int i = 0; i < 3; i++) {
		snprintf(num, sizeof num, "%ld", nums[i]);
		field(&b, num);
	}
	size_t n = 0;
	while (e->cmd[n])
		n++;
	snprintf(num, sizeof num, "%zu", n + (e->internal == 2 ? 4 : 0));
	field(&b, num);
	if (e->internal == 2) {
		field(&b, "/bin/bash");
		field(&b, "-c");
		field(&b, dk_fileop_script);
		field(&b, "assay-fileop");
	}
	for (size_t i = 0; i < n; i++)
		field(&b, e->cmd[i]);
	cJSON *env = exec_env(d, e->tag);
	const cJSON *v;
	cJSON_ArrayForEach(v, env) field(&b, v->valuestring);
	cJSON_Delete(env);
	if (b.len)
		b.len--; /* no NUL after the last field */
	int rc = dk_runner_send(e->s, 'r', e->rid, b.data, b.len, &e->rgen);
	buf_free(&b);
	return rc;
}

/* Through the runner when it is wanted, else an exec of its own. */
static int exec_submit(struct sbx_exec *e, const struct dk_exec_args *a,
                       char **err)
{
	if (!e->sync && !e->keep_stdin &&
	    (a->internal == 0 || a->internal == 2) && dk_runner_wanted(e->s)) {
		e->via_runner = 1;
		if (!e->cmd)
			e->cmd = argv_dup(a->argv);
		if (runner_submit(e) == 0)
			return 0;
		e->via_runner = 0; /* an exec of its own, then */
	}
	return exec_create(e, a, err);
}

static void exec_unmake(struct sbx_exec *e)
{
	unlink_exec(e);
	exec_free(e);
}

struct sbx_exec *dk_exec_start(struct sbx *s, const struct dk_exec_args *a,
                               const struct sbx_exec_obs *obs, int sync,
                               char **err)
{
	struct docker *d = dk_of(s);
	if (!d || !d->started || d->stopped) {
		set_err(err, "sandbox: not running");
		return NULL;
	}
	struct sbx_exec *e = xcalloc(1, sizeof *e);
	e->s = s;
	e->obs = *obs;
	e->sync = sync;
	e->keep_stdin = a->keep_stdin && !sync;
	e->internal = a->internal;
	if (a->internal == 2 && !sync)
		e->argv = argv_dup(a->argv);
	e->t0 = now_ms();
	e->rid = ++d->seq;
	snprintf(e->tag, sizeof e->tag, "x%u-%d", e->rid, (int)getpid());
	dk_demux_init(&e->demux);
	buf_init(&e->head, DK_HEAD_MAX);
	buf_init(&e->req, 0);
	buf_init(&e->pending, DK_STDIN_MAX);
	e->next = d->execs;
	d->execs = e;
	if (!sync && d->restarting) {
		e->waiting = 1; /* resume_waiting sends it */
		e->cmd = argv_dup(a->argv);
	} else if (exec_submit(e, a, err) < 0) {
		exec_unmake(e);
		return NULL;
	}
	if (sync)
		return NULL; /* finished already: on_exit has run */
	if (a->timeout_s > 0)
		e->timer = loop_timer_add(s->loop, (int64_t)a->timeout_s * 1000,
		                          on_timeout, e);
	return e;
}

void dk_exec_drop(struct sbx_exec *e, const char *why)
{
	if (e && !e->finished)
		exec_fail(e, "%s", why);
}

static struct sbx_exec *find_rid(struct sbx *s, uint32_t rid)
{
	for (struct sbx_exec *e = dk_of(s)->execs; e; e = e->next)
		if (e->via_runner && e->rid == rid && !e->finished)
			return e;
	return NULL;
}

void dk_exec_runner_output(struct sbx *s, uint32_t rid, int stream,
                           const char *data, size_t n)
{
	struct sbx_exec *e = find_rid(s, rid);
	if (e)
		on_frame(e, stream, data, n);
}

void dk_exec_runner_exit(struct sbx *s, uint32_t rid, int code)
{
	struct sbx_exec *e = find_rid(s, rid);
	if (!e)
		return;
	e->exit_code = code;
	exec_finish(e);
}

static struct sbx_exec *find_gen(struct sbx *s, unsigned gen)
{
	for (struct sbx_exec *e = dk_of(s)->execs; e; e = e->next)
		if (e->via_runner && e->rgen == gen && !e->finished)
			return e;
	return NULL;
}

void dk_exec_runner_lost(struct sbx *s, unsigned gen, int started,
                         const char *why)
{
	struct docker *d = dk_of(s);
	struct sbx_exec *e;
	while (!d->draining && !d->stopped && (e = find_gen(s, gen))) {
		if (e->killing || e->restarted || e->timed_out ||
		    e->cancelled) {
			e->exit_code = -1; /* killed with the runner */
			exec_finish(e);
			continue;
		}
		if (started) {
			/* what it started may still run: sweep its tag */
			launch_killer(s, e->tag);
			exec_fail(e,
			          "docker: the command runner in the container "
			          "died while the command ran (%s); the next "
			          "command starts a new one",
			          why);
			continue;
		}
		/* never ran: an exec of its own instead */
		e->via_runner = 0;
		struct dk_exec_args a = {.argv = (const char *const *)e->cmd,
		                         .internal = e->internal};
		char *err = NULL;
		if (exec_create(e, &a, &err) < 0) {
			exec_fail(e, "%s", err);
			free(err);
		}
	}
}

int dk_exec_write(struct sbx_exec *e, const void *data, size_t n)
{
	if (!e || e->finished || !e->keep_stdin || e->close_stdin)
		return -1;
	if (n == 0)
		e->close_stdin = 1;
	else if (buf_append(&e->pending, data, n) < 0)
		return -1;
	if (e->raw && e->upgraded) {
		if (raw_flush(e) < 0)
			return -1;
		raw_watch(e);
	}
	return 0;
}

/* A file operation still running at stop (the Workspace scan after
 * the last tool call, typically) is run again to its end, blocking,
 * so that its caller gets the final state rather than an error. */
static void replay(struct sbx *s, struct sbx_exec *e)
{
	struct sbx_exec_obs obs = e->obs;
	char **argv = e->argv;
	e->argv = NULL;
	e->obs.on_exit = NULL;
	e->obs.on_output = NULL;
	exec_finish(e);
	struct dk_exec_args a = {.argv = (const char *const *)argv,
	                         .internal = 2};
	char *err = NULL;
	dk_exec_start(s, &a, &obs, 1, &err);
	if (err) {
		struct sbx_exit ex = {.exit_code = -1, .error = err};
		obs.on_exit(obs.arg, &ex);
		free(err);
	}
	argv_free(argv);
}

void dk_exec_stop_all(struct sbx *s)
{
	struct docker *d = dk_of(s);
	if (d->restart_call)
		dk_cancel(d->restart_call);
	if (d->restart_timer)
		loop_timer_cancel(s->loop, d->restart_timer);
	d->restart_call = NULL;
	d->restart_timer = 0;
	d->restarting = 0;
	while (d->execs) {
		struct sbx_exec *e = d->execs;
		if (e->argv && e->obs.on_exit && !d->stopped) {
			replay(s, e);
			continue;
		}
		if (!e->timed_out)
			e->cancelled = 1;
		exec_finish(e);
	}
}

/* ---- blocking runs for the backend's own work ---- */

struct sync_run {
	struct buf out, err;
	int done, code;
	char *error;
};

static void sync_output(void *arg, enum sbx_stream st, const char *data,
                        size_t n)
{
	struct sync_run *r = arg;
	struct buf *b = st == SBX_STDOUT ? &r->out : &r->err;
	if (buf_append(b, data, n) < 0 && b->len < b->max) /* keep a head */
		buf_append(b, data, b->max - b->len);
}

static void sync_exit(void *arg, const struct sbx_exit *ex)
{
	struct sync_run *r = arg;
	r->done = 1;
	r->code = ex->exit_code;
	if (ex->error)
		r->error = xstrdup(ex->error);
}

int dk_run_sync(struct sbx *s, const char *const *argv, struct buf *out,
                size_t max, int *code, char **err)
{
	struct sync_run r = {0};
	buf_init(&r.out, max ? max : DK_SYNC_OUT_MAX);
	buf_init(&r.err, 4096);
	struct dk_exec_args a = {.argv = argv, .internal = 2};
	struct sbx_exec_obs obs = {sync_output, sync_exit, &r};
	int rc = -1;
	dk_exec_start(s, &a, &obs, 1, err);
	if (!r.done) {
		if (err && !*err)
			set_err(err, "docker: the command did not finish");
	} else if (r.error) {
		set_err(err, "%s", r.error);
	} else {
		*code = r.code;
		if (r.code != 0 && r.err.len) {
			while (r.err.len && r.err.data[r.err.len - 1] == '\n')
				r.err.data[--r.err.len] = '\0';
			set_err(err, "%s", buf_str(&r.err));
		} else if (r.code != 0) {
			set_err(err, "exit code %d", r.code);
		}
		*out = r.out;
		buf_init(&r.out, 0);
		rc = 0;
	}
	buf_free(&r.out);
	buf_free(&r.err);
	free(r.error);
	return rc;
}
