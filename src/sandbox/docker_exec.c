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
 * Stopping one command (timeout, Ctrl-C) and restarting the container
 * when that fails: docker_kill.c. */
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"
#include "sandbox/fileop.h"

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
#define DK_INSPECT_TRIES 100     /* ExitCode still null after EOF */
#define DK_INSPECT_RETRY_MS 20

static void exec_inspect(struct dk_exec *e);

/* Take e off the sandbox's list. */
static void dx_unlink(struct dk_exec *e)
{
	struct docker *d = dk_of(e->base.s);
	for (struct dk_exec **pp = &d->execs; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			return;
		}
}

static void raw_close(struct dk_exec *e)
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

/* A copy of a NULL-terminated argv. */
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

/* Free e (its requests are gone). */
static void exec_free(struct dk_exec *e)
{
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
void dk_exec_finish(struct dk_exec *e)
{
	struct loop *l = e->base.s->loop;
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
	dx_unlink(e);
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
	struct docker *d = dk_of(e->base.s);
	if (e->internal == DK_COMMAND && !e->via_runner && !e->error &&
	    !e->killing && !e->restarted && e->exit_code > 128 && !d->stopped &&
	    !d->draining)
		dk_launch_killer(e->base.s, e->tag);
	if (e->obs.on_exit)
		e->obs.on_exit(e->obs.arg, &ex);
	if (e->feeding)
		e->dead = 1;
	else
		exec_free(e);
}

void dk_exec_fail(struct dk_exec *e, const char *fmt, const char *detail)
{
	if (!e->error)
		e->error = xasprintf(fmt, detail ? detail : "");
	dk_exec_finish(e);
}

/* ---- output ---- */

static void on_frame(void *arg, int stream, const char *data, size_t n)
{
	struct dk_exec *e = arg;
	if (e->obs.on_output && n && !e->finished)
		e->obs.on_output(
		    e->obs.arg, stream == 2 ? SBX_STDERR : SBX_STDOUT, data, n);
}

/* Output of a streamed start: demultiplexed as it comes. */
static int on_stream(void *arg, const char *data, size_t n)
{
	struct dk_exec *e = arg;
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
	struct dk_exec *e = arg;
	e->retry = 0;
	exec_inspect(e);
}

/* The exec's state: its exit code, or ask again shortly. */
static void on_inspected(void *arg, long status, struct buf *body,
                         const char *err)
{
	struct dk_exec *e = arg;
	e->call = NULL;
	if (status != 200) {
		char *m = err ? xstrdup(err) : xfer_message(status, body);
		if (status == 404 && (e->killing || e->restarted)) {
			/* the container went away under a kill */
			e->exit_code = -1;
			free(m);
			dk_exec_finish(e);
			return;
		}
		dk_exec_fail(e, "docker: cannot read the exit code: %s", m);
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
		dk_exec_finish(e);
		return;
	}
	if (!running && (e->restarted || e->killing)) {
		dk_exec_finish(e); /* killed with its container */
		return;
	}
	if (++e->tries > DK_INSPECT_TRIES) {
		dk_exec_fail(e,
		             "docker: the exec's stream ended but it has no "
		             "exit code%s",
		             NULL);
		return;
	}
	e->retry = loop_timer_add(e->base.s->loop, DK_INSPECT_RETRY_MS,
	                          inspect_again, e);
}

/* Ask the daemon for the exit code of e's exec. */
static void exec_inspect(struct dk_exec *e)
{
	struct docker *d = dk_of(e->base.s);
	char *path = xasprintf("/exec/%s/json", e->id);
	struct dk_req r = {.method = "GET",
	                   .path = path,
	                   .on_done = on_inspected,
	                   .arg = e,
	                   .timeout_ms = 60000};
	char *err = NULL;
	struct dk_call *c = dk_send(&d->api, &r, &err);
	free(path);
	if (err) {
		dk_exec_fail(e, "docker: %s", err);
		free(err);
	} else {
		e->call = c;
	}
}

/* ---- start: an ordinary streamed request ---- */

/* The streamed start ended: read the exit code. */
static void on_stream_done(void *arg, long status, struct buf *body,
                           const char *err)
{
	struct dk_exec *e = arg;
	e->call = NULL;
	if (status < 200 || status >= 300) {
		char *m =
		    err && !status ? xstrdup(err) : xfer_message(status, body);
		if (e->killing || e->restarted) {
			free(m);
			exec_inspect(e);
			return;
		}
		dk_exec_fail(e, "docker: cannot start the command: %s", m);
		free(m);
		return;
	}
	/* A stream cut short (daemon gone, container killed) still has
	 * an exit code to read, or says why it has none. */
	if (err)
		log_info("docker: exec %s stream ended: %s", e->tag, err);
	exec_inspect(e);
}

/* Start the exec as an ordinary request read to EOF. */
static int start_streamed(struct dk_exec *e, char **err)
{
	struct docker *d = dk_of(e->base.s);
	char *path = xasprintf("/exec/%s/start", e->id);
	struct dk_req r = {.method = "POST",
	                   .path = path,
	                   .json = "{\"Detach\":false,\"Tty\":false}",
	                   .on_stream = on_stream,
	                   .on_done = on_stream_done,
	                   .arg = e,
	                   .max_body = 1u << 20};
	struct dk_call *c = dk_send(&d->api, &r, err);
	free(path);
	if (*err)
		return -1;
	e->call = c;
	return 0;
}

/* ---- start: the raw upgraded connection (stdin attached) ---- */

static void raw_event(int fd, int revents, void *arg);

/* Watch the raw socket for what e waits for. */
static void raw_watch(struct dk_exec *e)
{
	int ev = POLLIN;
	if (e->req.len || (e->upgraded && e->pending.len) ||
	    (e->upgraded && e->close_stdin && !e->stdin_shut))
		ev |= POLLOUT;
	loop_fd_add(e->base.s->loop, dk_raw_fd(e->raw), ev, raw_event, e);
}

/* Send what the socket takes now: the request, then (once the daemon
 * has answered) stdin. -1 on a broken connection. */
static int raw_flush(struct dk_exec *e)
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
static int raw_head(struct dk_exec *e, const char *data, size_t n)
{
	if (buf_append(&e->head, data, n) < 0) {
		dk_exec_fail(e,
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
		char *m = xfer_message(status, &rest);
		buf_free(&rest);
		dk_exec_fail(e, "docker: cannot start the command: %s", m);
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

static void raw_event_run(struct dk_exec *e, int revents);

/* The raw connection is ready: e may be freed by what it runs. */
static void raw_event(int fd, int revents, void *arg)
{
	struct dk_exec *e = arg;
	(void)fd;
	e->feeding++;
	raw_event_run(e, revents);
	e->feeding--;
	if (e->dead)
		exec_free(e);
}

/* Write what is queued, read what came, until it would block. */
static void raw_event_run(struct dk_exec *e, int revents)
{
	struct docker *d = dk_of(e->base.s);
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
				dk_exec_fail(e,
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
	struct dk_exec *e = arg;
	struct docker *d = dk_of(e->base.s);
	e->connecting = 0;
	if (why) {
		char *m = xasprintf("docker: cannot connect to %s: %s",
		                    d->api.ep.host, why);
		dk_exec_fail(e, "%s", m); /* e is gone */
		free(m);
		return;
	}
	if (raw_flush(e) < 0) {
		dk_exec_fail(e, "docker: the exec connection broke%s", NULL);
		return;
	}
	raw_watch(e);
}

/* Open the raw connection that carries stdin (docker_raw.c). */
static int start_raw(struct dk_exec *e, char **err)
{
	struct docker *d = dk_of(e->base.s);
	const char *body = "{\"Detach\":false,\"Tty\":false}";
	char *url = xasprintf("%s/v%s/exec/%s/start", d->api.ep.base,
	                      d->api.version, e->id);
	char *why = NULL;
	e->raw = dk_raw_connect(e->base.s->loop, &d->api.ep, url, raw_ready, e,
	                        &why);
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

/* The exec exists: start it (streamed, or raw with stdin). */
static void on_created(void *arg, long status, struct buf *body,
                       const char *err)
{
	struct dk_exec *e = arg;
	e->call = NULL;
	if (status != 201) {
		char *m =
		    err && !status ? xstrdup(err) : xfer_message(status, body);
		dk_exec_fail(e, "docker: cannot create the command: %s", m);
		free(m);
		return;
	}
	cJSON *j = cJSON_ParseWithLength(body->data, body->len);
	const char *id = json_str(j, "Id", NULL);
	e->id = id ? xstrdup(id) : NULL;
	cJSON_Delete(j);
	if (!e->id) {
		dk_exec_fail(e, "docker: exec create gave no id%s", NULL);
		return;
	}
	if (e->cancelled || e->timed_out) {
		dk_exec_finish(e); /* never started */
		return;
	}
	char *why = NULL;
	int rc = e->keep_stdin ? start_raw(e, &why) : start_streamed(e, &why);
	if (rc < 0) {
		dk_exec_fail(e, "%s", why);
		free(why);
	}
}

static void env_add(cJSON *env, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* One NAME=value of a command's environment. */
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

/* The exec create body: the wrapper, its limits, the argv. */
static char *exec_body(struct dk_exec *e, const struct dk_exec_args *a)
{
	struct docker *d = dk_of(e->base.s);
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
		cJSON_AddItemToArray(cmd, cJSON_CreateString(fileop_script));
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

/* ---- the exec entry points ---- */

int dk_exec_create(struct dk_exec *e, const struct dk_exec_args *a, char **err)
{
	struct docker *d = dk_of(e->base.s);
	char *body = exec_body(e, a);
	char *path = xasprintf("/containers/%s/exec", d->id);
	struct dk_req r = {.method = "POST",
	                   .path = path,
	                   .json = body,
	                   .on_done = on_created,
	                   .arg = e,
	                   .timeout_ms = 60000};
	char *why = NULL;
	struct dk_call *c = dk_send(&d->api, &r, &why);
	free(body);
	free(path);
	if (why) {
		set_err(err, "%s", why);
		free(why);
		return -1;
	}
	e->call = c;
	return 0;
}

/* What the runner runs for a command: the same argv the exec would
 * run inside the wrapper, the same environment, limits and cwd, as
 * NUL-separated fields: tag, cwd, mem MB, cpu s, fsize MB, argc,
 * argv..., env... */
static void runner_field(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s) + 1);
}

/* Send e to the runner as a run frame. */
static int runner_submit(struct dk_exec *e)
{
	struct docker *d = dk_of(e->base.s);
	struct buf b;
	buf_init(&b, 0);
	runner_field(&b, e->tag);
	runner_field(&b, "/workspace");
	int lim = !e->internal;
	long nums[3] = {lim ? d->mem_mb : 0, lim ? d->cpu_s : 0,
	                lim ? d->fsize_mb : 0};
	char num[32];
	for (int i = 0; i < 3; i++) {
		snprintf(num, sizeof num, "%ld", nums[i]);
		runner_field(&b, num);
	}
	size_t n = 0;
	while (e->cmd[n])
		n++;
	snprintf(num, sizeof num, "%zu", n + (e->internal == 2 ? 4 : 0));
	runner_field(&b, num);
	if (e->internal == 2) {
		runner_field(&b, "/bin/bash");
		runner_field(&b, "-c");
		runner_field(&b, fileop_script);
		runner_field(&b, "assay-fileop");
	}
	for (size_t i = 0; i < n; i++)
		runner_field(&b, e->cmd[i]);
	cJSON *env = exec_env(d, e->tag);
	const cJSON *v;
	cJSON_ArrayForEach(v, env) runner_field(&b, v->valuestring);
	cJSON_Delete(env);
	if (b.len)
		b.len--; /* no NUL after the last field */
	int rc =
	    dk_runner_send(e->base.s, 'r', e->rid, b.data, b.len, &e->rgen);
	buf_free(&b);
	return rc;
}

int dk_exec_submit(struct dk_exec *e, const struct dk_exec_args *a, char **err)
{
	if (!e->keep_stdin &&
	    (a->internal == DK_COMMAND || a->internal == DK_FILEOP) &&
	    dk_runner_wanted(e->base.s)) {
		e->via_runner = 1;
		if (!e->cmd)
			e->cmd = argv_dup(a->argv);
		if (runner_submit(e) == 0)
			return 0;
		e->via_runner = 0; /* an exec of its own, then */
	}
	return dk_exec_create(e, a, err);
}

/* Take back an exec that was never sent. */
static void exec_unmake(struct dk_exec *e)
{
	dx_unlink(e);
	exec_free(e);
}

struct dk_exec *dk_exec_start(struct sbx *s, const struct dk_exec_args *a,
                              const struct sbx_exec_obs *obs, char **err)
{
	struct docker *d = dk_of(s);
	if (!d || !d->started || d->stopped) {
		set_err(err, "sandbox: not running");
		return NULL;
	}
	struct dk_exec *e = xcalloc(1, sizeof *e);
	e->base.s = s;
	e->obs = *obs;
	e->keep_stdin = a->keep_stdin;
	e->internal = a->internal;
	e->t0 = now_ms();
	e->rid = ++d->seq;
	snprintf(e->tag, sizeof e->tag, "x%u-%d", e->rid, (int)getpid());
	dk_demux_init(&e->demux);
	buf_init(&e->head, DK_HEAD_MAX);
	buf_init(&e->req, 0);
	buf_init(&e->pending, DK_STDIN_MAX);
	e->next = d->execs;
	d->execs = e;
	if (d->restarting) {
		e->waiting = 1; /* resume_waiting sends it */
		e->cmd = argv_dup(a->argv);
	} else if (dk_exec_submit(e, a, err) < 0) {
		exec_unmake(e);
		return NULL;
	}
	if (a->timeout_s > 0)
		e->timer = loop_timer_add(s->loop, (int64_t)a->timeout_s * 1000,
		                          dk_exec_on_timeout, e);
	return e;
}

void dk_exec_drop(struct dk_exec *e, const char *why)
{
	if (e && !e->finished)
		dk_exec_fail(e, "%s", why);
}

/* The command the runner knows as rid. */
static struct dk_exec *find_rid(struct sbx *s, uint32_t rid)
{
	for (struct dk_exec *e = dk_of(s)->execs; e; e = e->next)
		if (e->via_runner && e->rid == rid && !e->finished)
			return e;
	return NULL;
}

void dk_exec_runner_output(struct sbx *s, uint32_t rid, int stream,
                           const char *data, size_t n)
{
	struct dk_exec *e = find_rid(s, rid);
	if (e)
		on_frame(e, stream, data, n);
}

void dk_exec_runner_exit(struct sbx *s, uint32_t rid, int code)
{
	struct dk_exec *e = find_rid(s, rid);
	if (!e)
		return;
	e->exit_code = code;
	dk_exec_finish(e);
}

/* A command still running through the runner of generation gen. */
static struct dk_exec *find_gen(struct sbx *s, unsigned gen)
{
	for (struct dk_exec *e = dk_of(s)->execs; e; e = e->next)
		if (e->via_runner && e->rgen == gen && !e->finished)
			return e;
	return NULL;
}

void dk_exec_runner_lost(struct sbx *s, unsigned gen, int started,
                         const char *why)
{
	struct docker *d = dk_of(s);
	struct dk_exec *e;
	while (!d->stopped && (e = find_gen(s, gen))) {
		if (d->draining) {
			/* stopping: what still ran through it ends here */
			dk_exec_fail(
			    e,
			    "docker: the command runner ended while the "
			    "sandbox stopped (%s)",
			    why);
			continue;
		}
		if (e->killing || e->restarted || e->timed_out ||
		    e->cancelled) {
			e->exit_code = -1; /* killed with the runner */
			dk_exec_finish(e);
			continue;
		}
		if (started) {
			/* what it started may still run: sweep its tag */
			dk_launch_killer(s, e->tag);
			dk_exec_fail(
			    e,
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
		if (dk_exec_create(e, &a, &err) < 0) {
			dk_exec_fail(e, "%s", err);
			free(err);
		}
	}
}

int dk_exec_write(struct dk_exec *e, const void *data, size_t n)
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

void dk_exec_detach(struct dk_exec *e)
{
	if (!e || e->finished)
		return;
	e->obs.on_exit = NULL;
	e->obs.on_output = NULL;
	if (!e->timed_out)
		e->cancelled = 1;
	dk_exec_finish(e);
}

void dk_exec_stop_commands(struct sbx *s)
{
	struct docker *d = dk_of(s);
	for (int again = 1; again;) {
		again = 0;
		for (struct dk_exec *e = d->execs; e; e = e->next) {
			if (e->finished || e->internal == DK_FILEOP ||
			    e->internal == DK_RUNNER)
				continue;
			if (!e->timed_out)
				e->cancelled = 1;
			dk_exec_finish(e); /* on_exit may change the list */
			again = 1;
			break;
		}
	}
}

void dk_exec_stop_all(struct sbx *s)
{
	struct docker *d = dk_of(s);
	dk_restart_cancel(s);
	while (d->execs) {
		struct dk_exec *e = d->execs;
		if (!e->timed_out)
			e->cancelled = 1;
		dk_exec_finish(e);
	}
}
