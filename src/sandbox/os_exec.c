/* os_exec.c: commands in an OpenSandbox sandbox, through execd's
 * POST /command. Its answer is an event stream of bare JSON objects
 * (one a line, blank lines between, maybe a "data:" prefix), parsed as
 * it comes on the loop: init (the command's id), ping, stdout/stderr
 * (one line each, its terminator stripped: put back), then
 * execution_complete (exit 0) or error (exit atoi(evalue), -1 when a
 * signal or execd's timeout ended it). The command is finished on that
 * last event, not on the connection's close (execd keeps it open about
 * a second longer). Closing the connection does not stop a command:
 * a timeout or Ctrl-C sends DELETE /command?id=, which kills its
 * process group.
 *
 * Every command runs under a short bash prelude with the per-process
 * limits (address space, CPU time, file size, no core files); the
 * sandbox's own limits (memory, CPU, processes) are the server's,
 * from the create's resourceLimits.
 *
 * execd gives a command no stdin. A command that wants one (the python
 * kernel) runs in a pipeline between a feeder and a relay (os_cell.c):
 * its stdin goes in by upload of in.N, or for a framed exec (reply_end)
 * by a cell command of its own that brings the reply back (os_cell.c);
 * its stdout comes as lines "OFFSET BASE64", put in order here whichever
 * stream (the kernel's command's or a cell command's) brings them. */
#include "assay/config.h"
#include "assay/http.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/os_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OS_KILL_GRACE_MS 8000     /* from the DELETE to giving up */
#define OS_WRITE_CHUNK (4u << 20) /* stdin bytes per upload */
#define OS_STDIN_MAX (64u << 20)
#define OS_LINE_MAX (16u << 20)
#define OS_HELD_MAX (64u << 20) /* stdout bytes held out of order */
#define OS_HELD_CHUNKS 4096     /* and pieces: each insert walks them */

/* Bytes of a framed exec's stdout that came before the ones ahead of
 * them (by the other stream). */
struct os_held {
	struct os_held *next;
	uint64_t off;
	size_t n;
	char data[];
};

struct os_exec {
	struct sbx_exec base;
	struct os_exec *next;
	struct sbx *s;
	char tag[32];
	struct http_xfer *x;
	struct buf line; /* the stream's line being read */
	struct buf err;  /* an error answer's body */
	long status;
	char *cmd_id;
	struct sbx_exec_obs obs;
	int internal, keep_stdin;
	int timed_out, cancelled, kill_sent, finished, have_code;
	int exit_code;
	uint64_t timer, grace, fin;
	int64_t t0;
	char *error;
	/* stdin: the bytes not yet written, the write command running */
	struct buf pending;
	struct http_xfer *up; /* the upload of in.N */
	struct buf up_err;
	long up_status;
	unsigned up_n;
	int stdin_closed;
	/* framed (reply_end): stdout in order by the lines' offsets, and
	 * the cell command carrying the reply to the last write */
	char *reply_end;
	uint64_t next_off;
	struct os_held *held;
	size_t held_n;      /* their bytes, with their nodes' */
	size_t held_pieces; /* how many */
	struct os_cell *cell;
};

/* ---- base64 and quoting ---- */

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *os_b64_encode(const void *data, size_t n)
{
	const unsigned char *p = data;
	char *out = xmalloc((n + 2) / 3 * 4 + 1), *o = out;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		*o++ = b64[(v >> 18) & 63];
		*o++ = b64[(v >> 12) & 63];
		*o++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		*o++ = i + 2 < n ? b64[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

void os_b64_feed(struct os_b64 *b, const char *data, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = data[i];
		const char *k = c ? strchr(b64, c) : NULL;
		if (c == '=' || c == '\n') { /* the end of one encoded block */
			b->acc = 0;
			b->bits = 0;
			continue;
		}
		if (!k) {
			if (c != '\r' && c != ' ')
				b->bad = 1;
			continue;
		}
		b->acc = (b->acc << 6) | (unsigned)(k - b64);
		b->bits += 6;
		if (b->bits >= 8) {
			b->bits -= 8;
			char byte = (char)((b->acc >> b->bits) & 0xff);
			if (buf_append(&b->out, &byte, 1) < 0)
				b->bad = 1;
		}
	}
}

char *os_quote(const char *s)
{
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "'");
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			buf_puts(&b, "'\\''");
		else
			buf_append(&b, p, 1);
	}
	buf_puts(&b, "'");
	return buf_detach(&b);
}

/* ---- the command line ---- */

static char *command_line(struct os_exec *e, const struct os_exec_args *a)
{
	const struct config *cfg = e->s->cfg;
	if (a->raw)
		return xstrdup(a->command);
	struct buf b;
	buf_init(&b, 0);
	if (!a->internal) {
		buf_puts(&b, "ulimit -c 0");
		if (cfg->mem_mb > 0)
			buf_printf(&b, " -v %ld", cfg->mem_mb * 1024);
		if (cfg->cpu_s > 0)
			buf_printf(&b, " -t %ld", cfg->cpu_s);
		if (cfg->fsize_mb > 0)
			buf_printf(&b, " -f %ld", cfg->fsize_mb * 1024);
		buf_puts(&b, " 2>/dev/null\n");
	}
	char *run;
	if (a->argv) {
		struct buf q;
		buf_init(&q, 0);
		for (size_t i = 0; a->argv[i]; i++) {
			char *w = os_quote(a->argv[i]);
			buf_printf(&q, "%s%s", i ? " " : "", w);
			free(w);
		}
		run = buf_detach(&q);
	} else {
		char *c = os_quote(a->command);
		run = xasprintf("/bin/bash -c %s", c);
		free(c);
	}
	if (a->keep_stdin)
		os_cell_pipeline(&b, e->tag, run, a->reply_end);
	else
		buf_printf(&b, "exec %s\n", run);
	free(run);
	return buf_detach(&b);
}

/* The environment of a command: nothing of the host. */
static cJSON *command_env(struct os_exec *e)
{
	long t = os_of(e->s)->threads > 0 ? os_of(e->s)->threads : 1;
	char n[24];
	snprintf(n, sizeof n, "%ld", t);
	cJSON *env = cJSON_CreateObject();
	cJSON_AddStringToObject(env, "PATH",
	                        "/usr/local/sbin:/usr/local/bin:/usr/sbin:"
	                        "/usr/bin:/sbin:/bin");
	cJSON_AddStringToObject(env, "HOME", "/workspace");
	cJSON_AddStringToObject(env, "SHELL", "/bin/bash");
	cJSON_AddStringToObject(env, "LANG", "C.UTF-8");
	cJSON_AddStringToObject(env, "TERM", "dumb");
	cJSON_AddStringToObject(env, "TMPDIR", "/tmp");
	cJSON_AddStringToObject(env, "MPLBACKEND", "Agg");
	cJSON_AddStringToObject(env, "MPLCONFIGDIR", "/tmp/.mplconfig");
	/* fontconfig's cache, out of the workspace (as the local backend) */
	cJSON_AddStringToObject(env, "XDG_CACHE_HOME", "/tmp/.cache");
	cJSON_AddStringToObject(env, "PYTHONUNBUFFERED", "1");
	cJSON_AddStringToObject(env, "PYTHONPYCACHEPREFIX", "/tmp/.pycache");
	cJSON_AddStringToObject(env, "OPENBLAS_NUM_THREADS", n);
	cJSON_AddStringToObject(env, "OMP_NUM_THREADS", n);
	cJSON_AddStringToObject(env, "ASSAY_EXEC", e->tag);
	return env;
}

/* ---- finishing ---- */

static void exec_unlink(struct os_exec *e)
{
	struct osbx *o = os_of(e->s);
	for (struct os_exec **p = &o->execs; *p; p = &(*p)->next)
		if (*p == e) {
			*p = e->next;
			break;
		}
}

static void ox_free(struct os_exec *e)
{
	if (e->cell)
		os_cell_detach(e->cell);
	while (e->held) {
		struct os_held *h = e->held;
		e->held = h->next;
		free(h);
	}
	free(e->reply_end);
	if (e->x)
		http_cancel(e->x);
	struct loop *l = e->s->loop;
	if (e->timer)
		loop_timer_cancel(l, e->timer);
	if (e->grace)
		loop_timer_cancel(l, e->grace);
	if (e->fin)
		loop_timer_cancel(l, e->fin);
	buf_free(&e->line);
	buf_free(&e->err);
	if (e->up)
		http_cancel(e->up);
	buf_free(&e->pending);
	buf_free(&e->up_err);
	free(e->cmd_id);
	free(e->error);
	free(e);
}

/* Deliver on_exit (the last touch of s: it may free it) and free e. */
static void exec_finish(struct os_exec *e)
{
	exec_unlink(e);
	if (!e->internal) /* what it did to the workspace is done */
		os_of(e->s)->gen++;
	struct sbx_exit ex = {
	    .exit_code = e->have_code ? e->exit_code : -1,
	    .timed_out = e->timed_out,
	    .cancelled = e->cancelled,
	    .duration_ms = now_ms() - e->t0,
	    .error = e->error,
	};
	if (e->have_code && e->exit_code == -1)
		ex.signal = 9;
	else if (e->have_code && e->exit_code > 128 && e->exit_code < 160 &&
	         (e->timed_out || e->cancelled))
		ex.signal = e->exit_code - 128;
	if (e->error) /* what ended it was ours: the error says it */
		ex.signal = 0;
	if (ex.signal)
		ex.exit_code = -1;
	struct sbx_exec_obs obs = e->obs;
	e->finished = 1;
	struct sbx_exit copy = ex;
	char *err = e->error;
	e->error = NULL;
	copy.error = err;
	ox_free(e);
	if (obs.on_exit)
		obs.on_exit(obs.arg, &copy);
	free(err);
}

static void on_fin(void *arg)
{
	struct os_exec *e = arg;
	e->fin = 0;
	exec_finish(e);
}

/* Finish from the loop, outside curl's callbacks. */
static void finish_soon(struct os_exec *e)
{
	if (e->fin || e->finished)
		return;
	e->finished = 1;
	e->fin = loop_timer_add(e->s->loop, 0, on_fin, e);
}

/* ---- killing ---- */

static void on_killed(void *arg, long status, cJSON *reply, const char *err)
{
	(void)arg;
	(void)reply;
	if (status != 200 && status != 0)
		log_info("opensandbox: DELETE /command: %s", err ? err : "?");
}

static void send_kill(struct os_exec *e)
{
	if (e->kill_sent || !e->cmd_id)
		return;
	e->kill_sent = 1;
	char *q = xfer_escape(e->cmd_id);
	char *path = xasprintf("/command?id=%s", q), *err = NULL;
	struct os_call *c = os_call(e->s, 1, "DELETE", path, NULL, 10000,
	                            on_killed, NULL, &err);
	if (!c)
		log_warn("opensandbox: cannot interrupt command %s: %s",
		         e->cmd_id, err ? err : "?");
	free(err);
	free(path);
	free(q);
}

/* The DELETE did not end the stream in time: give up on it. */
static void on_grace(void *arg)
{
	struct os_exec *e = arg;
	e->grace = 0;
	if (!e->error)
		e->error = xstrdup("opensandbox: the command did not end after "
		                   "DELETE /command");
	finish_soon(e);
}

static void exec_kill(struct os_exec *e)
{
	send_kill(e);
	if (!e->grace && !e->finished)
		e->grace =
		    loop_timer_add(e->s->loop, OS_KILL_GRACE_MS, on_grace, e);
}

static void on_timeout(void *arg)
{
	struct os_exec *e = arg;
	e->timer = 0;
	e->timed_out = 1;
	exec_kill(e);
}

void os_exec_cancel(struct os_exec *e)
{
	if (e->finished)
		return;
	e->cancelled = 1;
	exec_kill(e);
}

/* ---- a kernel's stdout, in order ---- */

/* Bytes [off, off+n) of e's stdout at or before the next offset: what
 * is new goes to the observer. */
static void stdout_deliver(struct os_exec *e, uint64_t off, const char *data,
                           size_t n)
{
	if (off + n <= e->next_off)
		return;
	size_t skip = (size_t)(e->next_off - off);
	e->next_off = off + n;
	if (e->obs.on_output)
		e->obs.on_output(e->obs.arg, SBX_STDOUT, data + skip, n - skip);
}

/* Bytes [off, off+n) of e's stdout: what is new goes to the observer,
 * then what was held and now follows; bytes past a gap wait for it
 * (the other stream brings it). -1 when too much waits (the offsets
 * come from inside the sandbox: bytes, with each piece's own size,
 * and pieces are bounded). */
static int stdout_take(struct os_exec *e, uint64_t off, const char *data,
                       size_t n)
{
	if (!n)
		return 0;
	if (off > e->next_off) {
		size_t cost = sizeof(struct os_held) + n;
		if (e->held_n + cost > OS_HELD_MAX ||
		    e->held_pieces >= OS_HELD_CHUNKS)
			return -1;
		struct os_held *h = xmalloc(cost), **p = &e->held;
		h->off = off;
		h->n = n;
		memcpy(h->data, data, n);
		while (*p && (*p)->off <= off)
			p = &(*p)->next;
		h->next = *p;
		*p = h;
		e->held_n += cost;
		e->held_pieces++;
		return 0;
	}
	stdout_deliver(e, off, data, n);
	while (e->held && e->held->off <= e->next_off && !e->finished) {
		struct os_held *h = e->held;
		e->held = h->next;
		e->held_n -= sizeof *h + h->n;
		e->held_pieces--;
		stdout_deliver(e, h->off, h->data, h->n);
		free(h);
	}
	return 0;
}

/* A relay's line "OFFSET BASE64" (from the kernel's own stream or from
 * a cell command's). */
static void stdout_line(struct os_exec *e, const char *text)
{
	char *end = NULL;
	unsigned long long off = strtoull(text, &end, 10);
	if (end == text || *end != ' ') {
		log_warn("opensandbox: %s: a line not from the relay dropped",
		         e->tag);
		return;
	}
	struct os_b64 b = {0};
	buf_init(&b.out, 0);
	os_b64_feed(&b, end + 1, strlen(end + 1));
	if (stdout_take(e, off, b.out.data, b.out.len) < 0 && !e->error) {
		e->error = xasprintf("opensandbox: %s: over %u MiB of output "
		                     "arrived out of order",
		                     e->tag, OS_HELD_MAX >> 20);
		exec_kill(e);
	}
	buf_free(&b.out);
}

/* ---- the event stream ---- */

static void deliver(struct os_exec *e, enum sbx_stream st, const char *text)
{
	if (!e->obs.on_output)
		return;
	if (e->keep_stdin && st == SBX_STDOUT) {
		stdout_line(e, text);
		return;
	}
	if (!strcmp(text, "\n")) {
		e->obs.on_output(e->obs.arg, st, "\n", 1);
		return;
	}
	char *line = xasprintf("%s\n", text);
	e->obs.on_output(e->obs.arg, st, line, strlen(line));
	free(line);
}

static void event(struct os_exec *e, const char *data, size_t n)
{
	while (n && (data[n - 1] == '\r' || data[n - 1] == ' '))
		n--;
	if (n >= 5 && !strncmp(data, "data:", 5)) {
		data += 5;
		n -= 5;
		while (n && *data == ' ')
			data++, n--;
	}
	if (!n || e->finished)
		return;
	cJSON *ev = cJSON_ParseWithLength(data, n);
	const char *type = json_str(ev, "type", "");
	const char *text = json_str(ev, "text", "");
	if (!strcmp(type, "init")) {
		free(e->cmd_id);
		e->cmd_id = xstrdup(text);
		if (e->timed_out || e->cancelled)
			send_kill(e);
	} else if (!strcmp(type, "stdout")) {
		deliver(e, SBX_STDOUT, text);
	} else if (!strcmp(type, "stderr")) {
		deliver(e, SBX_STDERR, text);
	} else if (!strcmp(type, "execution_complete")) {
		e->have_code = 1;
		e->exit_code = 0;
		finish_soon(e);
	} else if (!strcmp(type, "error")) {
		const cJSON *er = cJSON_GetObjectItem(ev, "error");
		const char *ev_ = json_str(er, "evalue", "");
		char *end = NULL;
		long code = strtol(ev_, &end, 10);
		e->have_code = 1;
		if (end != ev_ && !*end) {
			e->exit_code = (int)code;
		} else { /* not an exit code: execd could not run it */
			e->exit_code = -1;
			e->error =
			    xasprintf("opensandbox: %s: %s",
			              json_str(er, "ename", "error"), ev_);
		}
		finish_soon(e);
	}
	cJSON_Delete(ev);
}

static void on_response(struct http_xfer *x, long status, void *arg)
{
	(void)x;
	struct os_exec *e = arg;
	e->status = status;
}

static int on_data(struct http_xfer *x, const char *data, size_t n, void *arg)
{
	(void)x;
	struct os_exec *e = arg;
	if (e->status != 200) {
		if (e->err.len < 65536)
			buf_append(&e->err, data, n);
		return 0;
	}
	while (n) {
		const char *nl = memchr(data, '\n', n);
		size_t k = nl ? (size_t)(nl - data) : n;
		if (e->line.len + k > OS_LINE_MAX)
			return -1;
		buf_append(&e->line, data, k);
		if (!nl)
			break;
		event(e, e->line.data ? e->line.data : "", e->line.len);
		buf_reset(&e->line);
		data += k + 1;
		n -= k + 1;
	}
	return 0;
}

static void on_done(struct http_xfer *x, int ok, const char *errmsg, void *arg)
{
	(void)x;
	struct os_exec *e = arg;
	e->x = NULL; /* curl frees it */
	if (e->finished)
		return;
	if (e->line.len)
		event(e, e->line.data, e->line.len);
	if (e->finished)
		return;
	if (e->status == 404) {
		os_mark_expired(e->s);
		e->error = xstrdup(e->s->lost);
	} else if (e->status && e->status != 200) {
		cJSON *j = cJSON_ParseWithLength(e->err.data ? e->err.data : "",
		                                 e->err.len);
		e->error =
		    xasprintf("opensandbox: execd refused the command: "
		              "%s (HTTP %ld)",
		              json_str(j, "message", "no message"), e->status);
		cJSON_Delete(j);
	} else if (!e->timed_out && !e->cancelled) {
		e->error = xasprintf("opensandbox: the command's stream ended "
		                     "without its exit code (%s)",
		                     ok       ? "closed"
		                     : errmsg ? errmsg
		                              : "broken");
	}
	finish_soon(e);
}

struct os_exec *os_exec_start(struct sbx *s, const struct os_exec_args *a,
                              const struct sbx_exec_obs *obs, char **err)
{
	struct osbx *o = os_of(s);
	struct os_exec *e = xcalloc(1, sizeof *e);
	e->base.s = s;
	e->s = s;
	e->obs = *obs;
	e->internal = a->internal;
	e->keep_stdin = a->keep_stdin;
	if (a->keep_stdin && a->reply_end && *a->reply_end)
		e->reply_end = xstrdup(a->reply_end);
	e->t0 = now_ms();
	snprintf(e->tag, sizeof e->tag, "x%d-%u", (int)getpid(), ++o->seq);
	buf_init(&e->line, 0);
	buf_init(&e->err, 0);
	buf_init(&e->pending, OS_STDIN_MAX);
	buf_init(&e->up_err, 4096);
	char *cmd = command_line(e, a);
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "command", cmd);
	cJSON_AddStringToObject(req, "cwd", "/workspace");
	cJSON_AddBoolToObject(req, "background", 0);
	if (a->timeout_s > 0) /* execd's own, a backstop to ours */
		cJSON_AddNumberToObject(req, "timeout",
		                        ((double)a->timeout_s + 30) * 1000);
	cJSON_AddItemToObject(req, "envs", command_env(e));
	char *body = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	free(cmd);
	char *url = xasprintf("%s/command", o->execd);
	const char **h = os_execd_headers(s, "Content-Type: application/json");
	struct http_request r = {
	    .method = "POST",
	    .url = url,
	    .headers = h,
	    .body = body,
	    .body_len = strlen(body),
	    .low_speed_time_s = 60, /* pings come every 3 s */
	    .on_response = on_response,
	    .on_data = on_data,
	    .on_done = on_done,
	    .arg = e,
	};
	e->x = http_start(o->http, &r, err);
	free(h);
	free(url);
	free(body);
	if (!e->x) {
		ox_free(e);
		return NULL;
	}
	if (a->timeout_s > 0)
		e->timer = loop_timer_add(s->loop, (int64_t)a->timeout_s * 1000,
		                          on_timeout, e);
	e->next = o->execs;
	o->execs = e;
	if (!e->internal)
		o->gen++;
	return e;
}

/* ---- a framed exec's requests: cell commands (os_cell.c) ---- */

/* A line of the reply its cell command brought back. */
static void kernel_cell_line(void *arg, const char *line)
{
	stdout_line(arg, line);
}

/* Its cell command let go of k. One that could not put the request in
 * leaves a kernel nothing reaches: that one is ended, with why. */
static void kernel_cell_done(void *arg, const char *why)
{
	struct os_exec *k = arg;
	k->cell = NULL;
	if (!why || k->finished || k->error)
		return;
	k->error = xasprintf("opensandbox: cannot send %s its request: %s",
	                     k->tag, why);
	k->stdin_closed = 1;
	exec_kill(k);
}

int os_exec_busy(struct sbx *s)
{
	for (struct os_exec *e = os_of(s)->execs; e; e = e->next)
		if (!e->internal && !e->finished &&
		    (!e->keep_stdin || (e->cell && !os_cell_listed(e->cell)) ||
		     e->up || e->pending.len))
			return 1;
	return 0;
}

/* ---- stdin ---- */

static void write_next(struct os_exec *e);

static void ox_up_response(struct http_xfer *x, long status, void *arg)
{
	(void)x;
	((struct os_exec *)arg)->up_status = status;
}

static int ox_up_data(struct http_xfer *x, const char *data, size_t n,
                      void *arg)
{
	(void)x;
	struct os_exec *e = arg;
	if (e->up_err.len + n <= 4096)
		buf_append(&e->up_err, data, n);
	return 0;
}

static void ox_uploaded(struct http_xfer *x, int ok, const char *errmsg,
                        void *arg)
{
	(void)x;
	struct os_exec *e = arg;
	e->up = NULL; /* curl frees it */
	if (!ok || e->up_status != 200) {
		cJSON *j = cJSON_ParseWithLength(
		    e->up_err.data ? e->up_err.data : "", e->up_err.len);
		log_warn("opensandbox: writing to %s's stdin failed: %s "
		         "(HTTP %ld); its stdin is closed",
		         e->tag,
		         !ok ? (errmsg ? errmsg : "no answer")
		             : json_str(j, "message", "refused"),
		         e->up_status);
		cJSON_Delete(j);
		e->stdin_closed = 1;
		buf_reset(&e->pending);
		return;
	}
	e->up_n++;
	write_next(e);
}

/* Upload the next chunk of what is queued as in.N, then in.N.ok. */
static void write_next(struct os_exec *e)
{
	if (e->up || !e->pending.len || e->finished)
		return;
	struct osbx *o = os_of(e->s);
	size_t n =
	    e->pending.len < OS_WRITE_CHUNK ? e->pending.len : OS_WRITE_CHUNK;
	struct buf body, ok_pre, post;
	char *path = xasprintf("/tmp/.assay-io/%s/in.%u", e->tag, e->up_n);
	char *ok = xasprintf("%s.ok", path);
	/* two pairs: in.N with the bytes, then in.N.ok, empty */
	xfer_upload_form(path, &body, &post);
	buf_append(&body, e->pending.data, n);
	buf_puts(&body, "\r\n");
	buf_free(&post);
	xfer_upload_form(ok, &ok_pre, &post);
	buf_append(&body, ok_pre.data, ok_pre.len);
	buf_append(&body, post.data, post.len);
	buf_free(&ok_pre);
	buf_free(&post);
	buf_consume(&e->pending, n);
	char *url = xasprintf("%s/files/upload", o->execd);
	const char **h = os_execd_headers(e->s, XFER_UPLOAD_CTYPE);
	buf_reset(&e->up_err);
	e->up_status = 0;
	struct http_request r = {
	    .method = "POST",
	    .url = url,
	    .headers = h,
	    .body = body.data,
	    .body_len = body.len,
	    .total_timeout_ms = 60000,
	    .on_response = ox_up_response,
	    .on_data = ox_up_data,
	    .on_done = ox_uploaded,
	    .arg = e,
	};
	char *err = NULL;
	e->up = http_start(o->http, &r, &err);
	if (!e->up) {
		log_warn("opensandbox: cannot write stdin: %s",
		         err ? err : "?");
		e->stdin_closed = 1;
	}
	free(err);
	free(h);
	free(url);
	free(ok);
	free(path);
	buf_free(&body);
}

int os_exec_write(struct os_exec *e, const void *data, size_t n)
{
	if (!e->keep_stdin || e->stdin_closed || e->finished)
		return -1;
	if (n == 0) {
		e->stdin_closed = 1; /* the feeder waits on: EOF never comes */
		return 0;
	}
	/* the kernel may change files now (an interrupt comes before the
	 * open reply's own listing) */
	if (!e->cell)
		os_of(e->s)->gen++;
	if (e->reply_end && !e->cell && !e->up && !e->pending.len &&
	    os_cell_fits(data, n)) {
		char *err = NULL;
		struct os_cell_hooks h = {kernel_cell_line, kernel_cell_done,
		                          e};
		e->cell =
		    os_cell_start(e->s, e->tag, e->up_n, data, n, &h, &err);
		if (e->cell) {
			e->up_n++;
			return 0;
		}
		log_warn("opensandbox: %s: %s; the request goes by upload",
		         e->tag, err ? err : "?");
		free(err);
	}
	if (buf_append(&e->pending, data, n) < 0)
		return -1;
	write_next(e);
	return 0;
}

/* ---- stopping ---- */

void os_exec_stop(struct sbx *s, int all)
{
	struct osbx *o = os_of(s);
	struct os_exec *e = o->execs, *next;
	for (; e; e = next) {
		next = e->next;
		if (e->internal && !all)
			continue;
		if (e->finished)
			continue;
		e->cancelled = 1;
		send_kill(e);
		exec_finish(e);
		next = o->execs; /* on_exit may have ended others */
	}
}

void os_exec_free_all(struct sbx *s)
{
	struct osbx *o = os_of(s);
	while (o->execs) {
		struct os_exec *e = o->execs;
		if (!e->finished)
			e->cancelled = 1;
		exec_finish(e);
	}
}

void os_exec_detach(struct os_exec *e)
{
	if (!e)
		return;
	if (!e->finished)
		send_kill(e);
	exec_unlink(e);
	ox_free(e);
}
