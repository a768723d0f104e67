/* child.c: helper processes run as loop children. The sandbox layer's
 * slow work (archives, big listings, copies, the bwrap probe, transfers
 * to and from the Docker daemon) runs in a child process; the loop
 * reads its stdout and stderr as they come and reaps it, so the
 * process that draws the screen never waits. A child is done once it
 * has been reaped and both pipes are at EOF (or a grace period after
 * the exit has passed: something it started may hold them). */
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/spawn.h"
#include "assay/util.h"
#include "sandbox/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_CHUNK 65536

extern char **environ;

struct sbx_child {
	struct loop *loop;
	pid_t pid;
	int kill_group;
	int out_fd, err_fd;
	int in_fd;      /* the pipe the loop feeds (in_data), or -1 */
	size_t in_off;  /* of in_data written so far */
	struct buf err; /* the tail of its stderr */
	int status, reaped, done, timed_out;
	uint64_t timer, grace;
	char *chunk;
	struct sbx_child_spec sp;
};

/* Stop watching one of c's pipes and close it. */
static void child_close(struct sbx_child *c, int *fd)
{
	if (*fd < 0)
		return;
	loop_fd_del(c->loop, *fd);
	close(*fd);
	*fd = -1;
}

/* Reaped and both pipes at EOF: tell the owner. The last thing that
 * touches c (on_exit may free it). */
static void child_maybe_done(struct sbx_child *c)
{
	if (c->done || !c->reaped || c->out_fd >= 0 || c->err_fd >= 0)
		return;
	c->done = 1;
	child_close(c, &c->in_fd);
	if (c->timer)
		loop_timer_cancel(c->loop, c->timer);
	if (c->grace)
		loop_timer_cancel(c->loop, c->grace);
	c->timer = c->grace = 0;
	if (c->sp.on_exit)
		c->sp.on_exit(c->sp.arg, c);
}

/* Keep the last SBX_CHILD_ERR_MAX bytes of stderr: the reason a
 * helper gives comes last. */
static void child_keep_err(struct sbx_child *c, const char *data, size_t n)
{
	if (n >= SBX_CHILD_ERR_MAX) {
		buf_reset(&c->err);
		data += n - SBX_CHILD_ERR_MAX;
		n = SBX_CHILD_ERR_MAX;
	} else if (c->err.len + n > SBX_CHILD_ERR_MAX) {
		buf_consume(&c->err, c->err.len + n - SBX_CHILD_ERR_MAX);
	}
	buf_append(&c->err, data, n);
}

/* One read per readiness of stdout or stderr; EOF closes it. */
static void child_on_fd(int fd, int revents, void *arg)
{
	struct sbx_child *c = arg;
	(void)revents;
	ssize_t n = read(fd, c->chunk, CHILD_CHUNK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		if (fd == c->err_fd)
			child_keep_err(c, c->chunk, (size_t)n);
		else if (c->sp.on_out)
			c->sp.on_out(c->sp.arg, c->chunk, (size_t)n);
		return;
	}
	child_close(c, fd == c->err_fd ? &c->err_fd : &c->out_fd);
	child_maybe_done(c);
}

/* Exited but its pipes stay open (a grandchild holds them): stop
 * waiting for them. */
static void child_on_grace(void *arg)
{
	struct sbx_child *c = arg;
	c->grace = 0;
	child_close(c, &c->out_fd);
	child_close(c, &c->err_fd);
	child_maybe_done(c);
}

/* The loop reaped it: done once the pipes are at EOF too. */
static void child_on_reaped(pid_t pid, int status, void *arg)
{
	struct sbx_child *c = arg;
	(void)pid;
	c->reaped = 1;
	c->status = status;
	child_close(c, &c->in_fd); /* nobody reads it any more */
	if (c->out_fd >= 0 || c->err_fd >= 0)
		c->grace = loop_timer_add(c->loop, SBX_CHILD_GRACE_MS,
		                          child_on_grace, c);
	child_maybe_done(c);
}

static void child_on_timeout(void *arg)
{
	struct sbx_child *c = arg;
	c->timer = 0;
	c->timed_out = 1;
	sbx_child_kill(c);
}

/* The stdin pipe takes more of in_data: write it; at the end (or when
 * the child stopped reading) close it. */
static void child_on_in(int fd, int revents, void *arg)
{
	struct sbx_child *c = arg;
	(void)revents;
	while (c->in_off < c->sp.in_len) {
		ssize_t w = write(fd, c->sp.in_data + c->in_off,
		                  c->sp.in_len - c->in_off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return; /* more when it takes more */
		if (w < 0)
			break; /* EPIPE: it says why on stderr */
		c->in_off += (size_t)w;
	}
	child_close(c, &c->in_fd);
}

/* Watch pid, its stderr and (maybe) its stdout on the loop. */
static struct sbx_child *child_watch(struct loop *l, pid_t pid, int err_fd,
                                     int out_fd, int in_fd, int kill_group,
                                     const struct sbx_child_spec *sp)
{
	struct sbx_child *c = xcalloc(1, sizeof *c);
	c->loop = l;
	c->pid = pid;
	c->kill_group = kill_group;
	c->sp = *sp;
	c->sp.argv = c->sp.envp = NULL;
	c->in_fd = -1;
	c->err_fd = err_fd;
	c->out_fd = out_fd;
	c->in_fd = in_fd;
	c->chunk = xmalloc(CHILD_CHUNK);
	buf_init(&c->err, 0);
	if (c->err_fd >= 0) {
		fcntl(c->err_fd, F_SETFL, O_NONBLOCK);
		loop_fd_add(l, c->err_fd, POLLIN, child_on_fd, c);
	}
	if (c->out_fd >= 0) {
		fcntl(c->out_fd, F_SETFL, O_NONBLOCK);
		loop_fd_add(l, c->out_fd, POLLIN, child_on_fd, c);
	}
	if (c->in_fd >= 0) {
		fcntl(c->in_fd, F_SETFL, O_NONBLOCK);
		loop_fd_add(l, c->in_fd, POLLOUT, child_on_in, c);
	}
	loop_child_watch(l, pid, child_on_reaped, c);
	if (sp->timeout_ms > 0)
		c->timer =
		    loop_timer_add(l, sp->timeout_ms, child_on_timeout, c);
	return c;
}

struct sbx_child *sbx_child_adopt(struct loop *l, pid_t pid, int err_fd,
                                  int kill_group,
                                  const struct sbx_child_spec *sp)
{
	return child_watch(l, pid, err_fd, -1, -1, kill_group, sp);
}

struct sbx_child *sbx_child_spawn(struct loop *l,
                                  const struct sbx_child_spec *sp, char **err)
{
	struct spawn_opts o = {.argv = sp->argv, .envp = sp->envp};
	o.io[0] = sp->in_data      ? (struct spawn_io){SPAWN_PIPE, -1}
	          : sp->in_fd >= 0 ? (struct spawn_io){SPAWN_FD, sp->in_fd}
	                           : (struct spawn_io){SPAWN_NULL, -1};
	o.io[1] = sp->out_fd == SBX_CHILD_PIPE
	              ? (struct spawn_io){SPAWN_PIPE, -1}
	          : sp->out_fd >= 0 ? (struct spawn_io){SPAWN_FD, sp->out_fd}
	                            : (struct spawn_io){SPAWN_NULL, -1};
	o.io[2] = (struct spawn_io){SPAWN_PIPE, -1};
	struct spawn_proc p;
	char *why = NULL;
	if (spawn_start(&o, &p, &why) < 0) {
		set_err(err, "sandbox: %s", why);
		free(why);
		return NULL;
	}
	return child_watch(l, p.pid, p.fd[2], p.fd[1], p.fd[0], 0, sp);
}

void sbx_child_kill(struct sbx_child *c)
{
	if (!c || c->reaped)
		return; /* after the reap the pid may be someone else's */
	if (c->kill_group)
		kill(-c->pid, SIGKILL);
	kill(c->pid, SIGKILL);
}

void sbx_child_free(struct sbx_child *c)
{
	if (!c)
		return;
	if (!c->reaped) {
		sbx_child_kill(c);
		int st;
		while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
			;
		loop_child_unwatch(c->loop, c->pid);
	}
	child_close(c, &c->out_fd);
	child_close(c, &c->err_fd);
	child_close(c, &c->in_fd);
	if (c->timer)
		loop_timer_cancel(c->loop, c->timer);
	if (c->grace)
		loop_timer_cancel(c->loop, c->grace);
	buf_free(&c->err);
	free(c->chunk);
	free(c);
}

int sbx_child_ok(const struct sbx_child *c)
{
	return c->reaped && !c->timed_out && WIFEXITED(c->status) &&
	       WEXITSTATUS(c->status) == 0;
}

int sbx_child_code(const struct sbx_child *c)
{
	return c->reaped && WIFEXITED(c->status) ? WEXITSTATUS(c->status) : -1;
}

int sbx_child_timed_out(const struct sbx_child *c)
{
	return c->timed_out;
}

pid_t sbx_child_pid(const struct sbx_child *c)
{
	return c->pid;
}

const struct buf *sbx_child_stderr(const struct sbx_child *c)
{
	return &c->err;
}

/* The last line of stderr (a copy), or NULL when there is none. */
static char *last_line(const struct buf *b)
{
	size_t n = b->len;
	while (n && (b->data[n - 1] == '\n' || b->data[n - 1] == '\r'))
		n--;
	if (!n)
		return NULL;
	size_t start = n;
	while (start && b->data[start - 1] != '\n')
		start--;
	return utf8_sanitize(b->data + start, n - start, NULL);
}

char *sbx_child_error(const struct sbx_child *c, const char *name)
{
	if (c->timed_out)
		return xasprintf("%s took too long: stopped", name);
	if (sbx_child_ok(c))
		return NULL;
	char *line = last_line(&c->err);
	if (line)
		return line;
	if (WIFSIGNALED(c->status))
		return xasprintf("%s was killed by signal %d", name,
		                 WTERMSIG(c->status));
	return xasprintf("%s failed with exit code %d", name,
	                 sbx_child_code(c));
}

/* "2024-01-02T03:04:05Z warn text": a log line of the helper (it logs
 * to stderr with ASSAY_LOG_STDERR); its level, and the text in *msg. */
static int log_level_of(const char *line, const char **msg)
{
	static const char *const names[] = {"debug ", "info ", "warn ",
	                                    "error "};
	if (strlen(line) < 22 || line[4] != '-' || line[10] != 'T' ||
	    line[19] != 'Z' || line[20] != ' ')
		return -1;
	for (int i = 0; i < 4; i++)
		if (!strncmp(line + 21, names[i], strlen(names[i]))) {
			*msg = line + 21 + strlen(names[i]);
			return i;
		}
	return -1;
}

void sbx_child_log(const struct sbx_child *c, const char *name)
{
	char *text =
	    utf8_sanitize(c->err.data ? c->err.data : "", c->err.len, NULL);
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *msg = line;
		int lvl = log_level_of(line, &msg);
		if (name)
			log_msg(lvl < 0 ? LOG_INFO : (enum log_level)lvl,
			        "%s: %s", name, msg);
		else
			log_msg(lvl < 0 ? LOG_INFO : (enum log_level)lvl, "%s",
			        msg);
	}
	free(text);
}

/* ---- the assay-archive helper ---- */

char *sbx_archive_helper(void)
{
	return helper_path("ASSAY_ARCHIVE_BIN", "assay-archive");
}

/* Whether the helper command args talks to a daemon over HTTP: then
 * assay-xfer runs it (assay-archive, without libcurl, starts faster
 * for the rest). */
static int archive_needs_http(char *const *args)
{
	if (!strcmp(args[0], "http"))
		return 1;
	if (strcmp(args[0], "delta"))
		return 0;
	for (int i = 1; args[i]; i++)
		if (!strcmp(args[i], "--tar"))
			return 0;
	return 1;
}

/* The helper binary for args: assay-xfer beside assay-archive (or
 * ASSAY_XFER_BIN) for HTTP, else assay-archive. */
static char *archive_bin_for(char *const *args)
{
	if (!archive_needs_http(args))
		return sbx_archive_helper();
	const char *over = getenv("ASSAY_XFER_BIN");
	if (over && *over)
		return xstrdup(over);
	char *arc = sbx_archive_helper(); /* ASSAY_ARCHIVE_BIN's dir too */
	if (!arc)
		return NULL;
	char *slash = strrchr(arc, '/');
	char *x = slash ? xasprintf("%.*s/assay-xfer", (int)(slash - arc), arc)
	                : xstrdup("assay-xfer");
	free(arc);
	return x;
}

/* ---- the spare: an assay-archive started ahead of need ---- */

/* Most of a small archive step is the helper's start (its exec and the
 * ~20 libraries libarchive brings). The spare is started while nothing
 * waits for it (when a sandbox is ready, and a while after each use),
 * blocked on its stdin; the next command that needs no stdin, no HTTP
 * and no environment is written there (NUL-ended arguments, then EOF)
 * and the spare runs it as if started with it (it shows those
 * arguments as its command line too). One per process; EOF without
 * arguments (assay gone) ends it. */
#define SPARE_ROOM 4000  /* the command line's room for those arguments */
#define SPARE_ARGS 60000 /* at most this much goes by the stdin pipe */
#define SPARE_AGAIN_MS 400

static struct {
	struct loop *loop;
	pid_t pid; /* 0: none */
	int in_fd, out_fd, err_fd;
	uint64_t again;
} spare;

/* Close the spare's pipes and forget it (it died, or was dropped). */
static void spare_forget(void)
{
	if (spare.pid > 0) {
		close(spare.in_fd);
		close(spare.out_fd);
		close(spare.err_fd);
	}
	spare.pid = 0;
}

/* The spare died before it was given work. */
static void spare_on_reaped(pid_t pid, int status, void *arg)
{
	(void)pid, (void)status, (void)arg;
	spare_forget();
}

void sbx_archive_warm(struct loop *l)
{
	if (spare.pid > 0 || getenv("ASSAY_NO_SPARE"))
		return;
	char *bin = sbx_archive_helper();
	if (!bin || access(bin, X_OK) < 0) {
		free(bin); /* the next spawn says it is missing */
		return;
	}
	char pad[SPARE_ROOM + 1];
	memset(pad, ' ', SPARE_ROOM);
	pad[SPARE_ROOM] = '\0';
	char *argv[] = {bin, "spare", pad, NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", "ASSAY_LOG_STDERR=1", NULL};
	struct spawn_opts o = {.argv = argv, .envp = envp};
	o.io[0] = o.io[1] = o.io[2] = (struct spawn_io){SPAWN_PIPE, -1};
	struct spawn_proc p;
	char *why = NULL;
	if (spawn_start(&o, &p, &why) < 0) {
		log_warn("archive: no spare helper: %s", why);
		free(why);
		free(bin);
		return;
	}
	free(bin);
	spare.loop = l;
	spare.pid = p.pid;
	spare.in_fd = p.fd[0];
	spare.out_fd = p.fd[1];
	spare.err_fd = p.fd[2];
	loop_child_watch(l, p.pid, spare_on_reaped, NULL);
}

/* A while after a use: a spare again. */
static void spare_again(void *arg)
{
	spare.again = 0;
	sbx_archive_warm(arg);
}

void sbx_archive_spare_drop(struct loop *l)
{
	if (spare.loop != l)
		return;
	if (spare.again)
		loop_timer_cancel(l, spare.again);
	spare.again = 0;
	if (spare.pid > 0) {
		kill(spare.pid, SIGKILL);
		int st;
		while (waitpid(spare.pid, &st, 0) < 0 && errno == EINTR)
			;
		loop_child_unwatch(l, spare.pid);
		spare_forget();
	}
	spare.loop = NULL;
}

/* Hand args to the spare, watched as sp says: the child, or NULL when
 * the spare cannot take them (none, another loop, stdin or an fd
 * wanted, or too long: it stays for the next; or it is gone: then it
 * is dropped). */
static struct sbx_child *spare_take(struct loop *l, char *const *args,
                                    const struct sbx_child_spec *sp)
{
	if (spare.pid <= 0 || spare.loop != l || sp->in_data ||
	    sp->in_fd >= 0 || (sp->out_fd >= 0 && sp->out_fd != SBX_CHILD_PIPE))
		return NULL;
	struct buf b;
	buf_init(&b, SPARE_ARGS); /* within the pipe's buffer: no wait */
	for (size_t i = 0; args[i]; i++)
		if (buf_append(&b, args[i], strlen(args[i]) + 1) < 0) {
			buf_free(&b);
			return NULL;
		}
	int ok = 1;
	for (size_t off = 0; ok && off < b.len;) {
		ssize_t w = write(spare.in_fd, b.data + off, b.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			ok = 0; /* it died: EPIPE */
		else
			off += (size_t)w;
	}
	buf_free(&b);
	if (!ok) {
		sbx_archive_spare_drop(l);
		return NULL;
	}
	pid_t pid = spare.pid;
	int out = spare.out_fd, err = spare.err_fd;
	close(spare.in_fd); /* EOF: the arguments are complete */
	spare.pid = 0;
	loop_child_unwatch(l, pid);
	if (!spare.again)
		spare.again = loop_timer_add(l, SPARE_AGAIN_MS, spare_again, l);
	return child_watch(l, pid, err, out, -1, 0, sp);
}

struct sbx_child *sbx_archive_spawn(struct loop *l, char *const *args,
                                    int keep_env,
                                    const struct sbx_child_spec *sp, char **err)
{
	if (!keep_env && !archive_needs_http(args)) {
		struct sbx_child *c = spare_take(l, args, sp);
		if (c)
			return c;
	}
	char *bin = archive_bin_for(args);
	struct sbx_child *c = NULL;
	if (!bin || access(bin, X_OK) < 0) {
		set_err(err,
		        "archive: helper %s not found: reinstall assay "
		        "(assay-archive and assay-xfer belong beside the "
		        "assay binary) or set ASSAY_ARCHIVE_BIN",
		        bin ? bin : "assay-archive");
		free(bin);
		return NULL;
	}
	size_t n = 0, ne = 0;
	while (args[n])
		n++;
	char **argv = xcalloc(n + 2, sizeof *argv);
	argv[0] = bin;
	memcpy(argv + 1, args, n * sizeof *argv);
	/* The helper reads what a sandbox made: it gets no secrets unless
	 * it must reach the daemon; it logs to stderr for us to relay. */
	static char *clean[] = {"PATH=/usr/bin:/bin", "ASSAY_LOG_STDERR=1",
	                        NULL};
	char **envp = clean;
	if (keep_env) {
		while (environ[ne])
			ne++;
		envp = xcalloc(ne + 2, sizeof *envp);
		memcpy(envp, environ, ne * sizeof *envp);
		envp[ne] = "ASSAY_LOG_STDERR=1";
	}
	struct sbx_child_spec s2 = *sp;
	s2.argv = argv;
	s2.envp = envp;
	c = sbx_child_spawn(l, &s2, err);
	if (envp != clean)
		free(envp);
	free(argv);
	free(bin);
	return c;
}
