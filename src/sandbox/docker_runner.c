/* docker_runner.c: commands through one long-lived runner in the
 * container. An exec per command costs what the daemon's exec start
 * costs (runc exec: 35-45 ms here, about as much as the whole `docker
 * exec` of the CLI), so the run starts one exec, python3 running
 * dk_runner_script (docker_scripts.c), and sends it each command as a
 * frame over that exec's hijacked stdin; output and exit codes come
 * back as frames inside the exec's stdout. The runner does for each
 * command what the wrapper does for an exec (session and process group,
 * limits, environment, cwd, leftovers reaped, OOM note); timeouts and
 * Ctrl-C send it a kill frame.
 *
 * If the runner cannot start (no python3 in the image), or its hello
 * says it could not make itself non-dumpable and a subreaper (no
 * ctypes: it exits without running anything), the commands waiting
 * for it go through an exec each, and so does every later one;
 * if it dies after it started (a command killed it), the commands it
 * was running fail with the reason and the next command starts a new
 * runner (at most DK_RUNNER_LIVES times). ASSAY_DOCKER_EXEC=exec turns
 * the runner off. */
#include "assay/log.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DK_RUNNER_LIVES 5
#define DK_RFRAME_MAX (4u << 20) /* the runner sends 64 KiB at most */
#define DK_RUNNER_ERR_MAX 4096

/* One runner process (one generation): its exec and its parser. */
struct rconn {
	struct sbx *s;
	struct dk_exec *x;
	struct dk_rframes fr;
	struct buf err; /* its own stderr, for the reason it died */
	unsigned gen;
	int hello, parsing, dead;
	int refused; /* its hello said it cannot protect itself */
	int64_t t0;
};

struct dk_runner {
	struct rconn *c;
	unsigned gen;
	int deaths;
	int off; /* never again (no python3, or died too often) */
};

int dk_rframes_feed(struct dk_rframes *f, const char *data, size_t n,
                    size_t max, dk_rframe_fn fn, void *arg)
{
	if (buf_append(&f->in, data, n) < 0)
		return -1;
	size_t off = 0;
	while (f->in.len - off >= 9) {
		const unsigned char *h =
		    (const unsigned char *)f->in.data + off;
		uint32_t id = (uint32_t)h[1] << 24 | (uint32_t)h[2] << 16 |
		              (uint32_t)h[3] << 8 | h[4];
		uint32_t len = (uint32_t)h[5] << 24 | (uint32_t)h[6] << 16 |
		               (uint32_t)h[7] << 8 | h[8];
		if (len > max)
			return -1;
		if (f->in.len - off - 9 < len)
			break;
		if (fn(arg, (char)h[0], id, f->in.data + off + 9, len))
			return 1; /* f may be gone */
		off += 9 + (size_t)len;
	}
	buf_consume(&f->in, off);
	return 0;
}

/* The runner's state, made on first use. */
static struct dk_runner *runner_of(struct sbx *s)
{
	struct docker *d = s->priv;
	if (!d->runner)
		d->runner = xcalloc(1, sizeof *d->runner);
	return d->runner;
}

/* Free one runner connection's state (its exec is gone). */
static void rconn_free(struct rconn *c)
{
	buf_free(&c->fr.in);
	buf_free(&c->err);
	free(c);
}

/* What came instead of frames, as one line of text. */
static char *raw_text(const struct buf *b)
{
	size_t k = b->len < 300 ? b->len : 300;
	char *text = utf8_sanitize(b->data ? b->data : "", k, NULL);
	for (char *q = text; *q; q++)
		if (*q == '\n' || *q == '\r')
			*q = ' ';
	return text;
}

/* One frame from the runner: hello, output, or an exit code. */
static int on_rframe(void *arg, char type, uint32_t id, const char *p, size_t n)
{
	struct rconn *c = arg;
	switch (type) {
	case 'h': {
		char hello[200];
		size_t k = n < sizeof hello - 1 ? n : sizeof hello - 1;
		memcpy(hello, p, k);
		hello[k] = '\0';
		c->hello = 1;
		/* Without both, a command could forge frames through
		 * /proc/<runner>/fd/1 or outlive its timeout: it exits. */
		if (!strstr(hello, "dumpable 0") ||
		    !strstr(hello, "subreaper 1")) {
			c->refused = 1;
			log_warn(
			    "docker: the command runner cannot make itself "
			    "non-dumpable and a subreaper (%s; python3 "
			    "without ctypes?): running an exec per command",
			    hello);
			break;
		}
		log_info("docker: command runner up in %lld ms: %s",
		         (long long)(now_ms() - c->t0), hello);
		break;
	}
	case 'o':
	case 'e':
		dk_exec_runner_output(c->s, id, type == 'e' ? 2 : 1, p, n);
		break;
	case 'x': {
		char num[16];
		size_t k = n < sizeof num - 1 ? n : sizeof num - 1;
		memcpy(num, p, k);
		num[k] = '\0';
		dk_exec_runner_exit(c->s, id, atoi(num));
		break;
	}
	default:
		break; /* unknown: ignored */
	}
	return c->dead;
}

/* The runner exec's stdout is frames; its stderr, why it died. */
static void runner_output(void *arg, enum sbx_stream st, const char *data,
                          size_t n)
{
	struct rconn *c = arg;
	if (c->dead)
		return;
	if (st == SBX_STDERR) {
		if (buf_append(&c->err, data, n) < 0 && c->err.len < c->err.max)
			buf_append(&c->err, data, c->err.max - c->err.len);
		return;
	}
	c->parsing++;
	int rc = dk_rframes_feed(&c->fr, data, n, DK_RFRAME_MAX, on_rframe, c);
	c->parsing--;
	if (c->dead) {
		if (!c->parsing)
			rconn_free(c);
		return;
	}
	if (rc < 0 && !c->hello) {
		/* not the runner talking: the daemon's or a shell's error */
		char *text = raw_text(&c->fr.in);
		char *why = xasprintf("it said: %s", text);
		dk_exec_drop(c->x, why);
		free(why);
		free(text);
	} else if (rc < 0) {
		dk_exec_drop(c->x, "the command runner sent a frame that is "
		                   "not one: stopped");
	}
}

/* The runner is gone: count it, and end or move what ran through it. */
static void runner_exit(void *arg, const struct sbx_exit *ex)
{
	struct rconn *c = arg;
	struct sbx *s = c->s;
	struct dk_runner *r = runner_of(s);
	int detached = r->c != c; /* killed with the container */
	c->dead = 1;
	if (r->c == c)
		r->c = NULL;
	while (c->err.len && c->err.data[c->err.len - 1] == '\n')
		c->err.data[--c->err.len] = '\0';
	char *why;
	if (ex->error)
		why = xstrdup(ex->error);
	else if (!c->hello && c->fr.in.len) {
		char *text = raw_text(&c->fr.in);
		why = xasprintf("exit %d: %s", ex->exit_code, text);
		free(text);
	} else if (c->err.len)
		why = xasprintf("exit %d: %.1000s", ex->exit_code,
		                buf_str(&c->err));
	else if (ex->signal)
		why = xasprintf("killed by signal %d", ex->signal);
	else
		why = xasprintf("exit %d", ex->exit_code);
	struct docker *d = s->priv;
	if (d->stopped) {
		/* nothing waits for it any more */
	} else if (detached || d->draining) {
		/* killed with the container, or the sandbox stops: what
		 * ran through it ends here */
		dk_exec_runner_lost(s, c->gen, c->hello && !c->refused, why);
	} else {
		if (c->refused) {
			r->off = 1; /* said why in on_rframe; ran nothing */
		} else if (!c->hello) {
			r->off = 1;
			log_warn("docker: the command runner did not start "
			         "(%s): running an exec per command",
			         why);
		} else if (++r->deaths >= DK_RUNNER_LIVES) {
			r->off = 1;
			log_warn("docker: the command runner died %d times "
			         "(%s): running an exec per command",
			         r->deaths, why);
		} else {
			log_warn("docker: the command runner died (%s)", why);
		}
		dk_exec_runner_lost(s, c->gen, c->hello && !c->refused, why);
	}
	free(why);
	if (!c->parsing)
		rconn_free(c);
}

int dk_runner_wanted(struct sbx *s)
{
	struct docker *d = s->priv;
	const char *mode = getenv("ASSAY_DOCKER_EXEC");
	if (mode && !strcmp(mode, "exec"))
		return 0;
	return !runner_of(s)->off && !d->draining && !d->stopped &&
	       !d->restarting;
}

int dk_runner_start(struct sbx *s, char **err)
{
	struct dk_runner *r = runner_of(s);
	if (r->c)
		return 0;
	struct rconn *c = xcalloc(1, sizeof *c);
	c->s = s;
	c->gen = ++r->gen;
	c->t0 = now_ms();
	buf_init(&c->fr.in, DK_RFRAME_MAX + 9 + 65536);
	buf_init(&c->err, DK_RUNNER_ERR_MAX);
	const char *argv[] = {"python3",        "-S",           "-c",
	                      dk_runner_script, "assay-runner", NULL};
	struct dk_exec_args a = {
	    .argv = argv, .keep_stdin = 1, .internal = DK_RUNNER};
	struct sbx_exec_obs obs = {runner_output, runner_exit, c};
	c->x = dk_exec_start(s, &a, &obs, err);
	if (!c->x) {
		rconn_free(c);
		return -1;
	}
	r->c = c;
	return 0;
}

int dk_runner_send(struct sbx *s, char type, uint32_t id, const void *p,
                   size_t n, unsigned *gen)
{
	struct dk_runner *r = runner_of(s);
	if (!r->c) {
		char *err = NULL;
		if (dk_runner_start(s, &err) < 0) {
			log_warn("docker: cannot start the command runner: %s",
			         err);
			free(err);
			return -1;
		}
	}
	unsigned char h[9] = {
	    (unsigned char)type,       (unsigned char)(id >> 24),
	    (unsigned char)(id >> 16), (unsigned char)(id >> 8),
	    (unsigned char)id,         (unsigned char)(n >> 24),
	    (unsigned char)(n >> 16),  (unsigned char)(n >> 8),
	    (unsigned char)n};
	struct buf f;
	buf_init(&f, 0);
	buf_append(&f, h, sizeof h);
	if (n)
		buf_append(&f, p, n);
	int rc = dk_exec_write(r->c->x, f.data, f.len);
	buf_free(&f);
	if (gen)
		*gen = r->c->gen;
	return rc;
}

void dk_runner_detach(struct sbx *s)
{
	runner_of(s)->c = NULL;
}

void dk_runner_free(struct sbx *s)
{
	struct docker *d = s->priv;
	if (!d || !d->runner)
		return;
	/* the runner's exec is finished by then (dk_exec_stop_all) */
	free(d->runner);
	d->runner = NULL;
}
