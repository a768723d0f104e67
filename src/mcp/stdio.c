/* stdio.c: the MCP stdio transport: the server is a child of ours in a
 * process group of its own, fed newline-delimited JSON on its stdin,
 * read line by line on its stdout; its stderr is its log. Ending it:
 * stdin closed, then SIGTERM to the group after 2 s, SIGKILL after 5. */
#include "mcp/mcp_internal.h"
#include "assay/buf.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/spawn.h"
#include "assay/strv.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define STDIO_TERM_MS 2000
#define STDIO_KILL_MS 5000
#define STDIO_LOG_LINE 4096
#define STDIO_BAD_LINES 10   /* stdout lines not JSON logged, then none */
#define STDIO_LOG_LINES 2000 /* stderr lines logged, then counted */
#define STDIO_EOF_MS 500     /* stdout closed: the exit should follow */

extern char **environ;

struct stdio_t {
	struct mcp_transport base;
	struct loop *loop;
	char *name;
	struct mcp_transport_cb cb;
	pid_t pid; /* 0 once reaped */
	int in, out, err;
	struct buf pending; /* to write to its stdin */
	struct buf line;    /* a stdout line so far */
	int skipping;       /* a line past the limit: up to its newline */
	struct buf eline;   /* a stderr line so far */
	int bad_lines;
	int closing;
	int failed;
	uint64_t timer;     /* TERM / KILL while closing; the deferred calls */
	uint64_t eof_timer; /* its stdout closed while it lives */
	long log_lines;     /* stderr lines logged (bounded) */
	int kill_step;
};

/* Close one of our ends of the child's pipes. */
static void close_fd(struct stdio_t *t, int *fd)
{
	if (*fd < 0)
		return;
	loop_fd_del(t->loop, *fd);
	close(*fd);
	*fd = -1;
}

/* Report the end once (never while closing: that ends in closed). */
static void stdio_failed(struct stdio_t *t, const char *why)
{
	if (t->failed || t->closing)
		return;
	t->failed = 1;
	t->cb.failed(t->cb.arg, why);
}

/* One whole stdout line: a message, or noise the log hears about. */
static void stdout_line(struct stdio_t *t, const char *p, size_t n)
{
	while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == ' '))
		n--;
	if (n == 0)
		return;
	cJSON *msg = cJSON_ParseWithLength(p, n);
	if (cJSON_IsObject(msg)) {
		t->cb.message(t->cb.arg, msg);
	} else if (cJSON_IsArray(msg)) { /* a batch */
		const cJSON *one;
		cJSON_ArrayForEach(one, msg) t->cb.message(t->cb.arg, one);
	} else if (++t->bad_lines <= STDIO_BAD_LINES) {
		char *line = xasprintf("stdout line not JSON-RPC (%zu bytes): "
		                       "%.80s",
		                       n, p);
		t->cb.log(t->cb.arg, line);
		free(line);
	}
	cJSON_Delete(msg);
}

/* Bytes of stdout: lines out of them, bounded. */
static void stdout_bytes(struct stdio_t *t, const char *p, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t len = nl ? (size_t)(nl - p) : n;
		if (!t->skipping) {
			if (t->line.len + len > MCP_MAX_MESSAGE) {
				char *why = xasprintf("a message over %u MiB "
				                      "dropped",
				                      MCP_MAX_MESSAGE >> 20);
				t->cb.log(t->cb.arg, why);
				free(why);
				buf_reset(&t->line);
				t->skipping = 1;
			} else {
				buf_append(&t->line, p, len);
			}
		}
		if (!nl)
			return;
		if (!t->skipping)
			stdout_line(t, t->line.data ? t->line.data : "",
			            t->line.len);
		buf_reset(&t->line);
		t->skipping = 0;
		p = nl + 1;
		n -= len + 1;
	}
}

/* Bytes of stderr: each line to the log, long ones cut. */
static void stderr_bytes(struct stdio_t *t, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] != '\n' && t->eline.len < STDIO_LOG_LINE) {
			buf_append(&t->eline, p + i, 1);
			continue;
		}
		if (p[i] != '\n')
			continue; /* past the cut: up to the newline */
		if (++t->log_lines <= STDIO_LOG_LINES)
			t->cb.log(t->cb.arg, buf_str(&t->eline));
		else if (t->log_lines == STDIO_LOG_LINES + 1)
			t->cb.log(t->cb.arg, "(more stderr lines not logged)");
		buf_reset(&t->eline);
	}
}

/* Its stdout closed and it has not exited: it cannot answer. */
static void stdout_gone(void *arg)
{
	struct stdio_t *t = arg;
	t->eof_timer = 0;
	stdio_failed(t, "the server closed its stdout");
}

/* Read what one of the child's outputs has; EOF closes our end. */
static void on_read(int fd, int revents, void *arg)
{
	struct stdio_t *t = arg;
	(void)revents;
	char chunk[65536];
	for (int i = 0; i < 16; i++) { /* then let others have the loop */
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && (errno == EINTR))
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			int out = fd == t->out;
			close_fd(t, out ? &t->out : &t->err);
			if (out && t->pid && !t->closing && !t->eof_timer)
				t->eof_timer = loop_timer_add(
				    t->loop, STDIO_EOF_MS, stdout_gone, t);
			return;
		}
		if (fd == t->out)
			stdout_bytes(t, chunk, (size_t)n);
		else
			stderr_bytes(t, chunk, (size_t)n);
		if (t->failed)
			return;
	}
}

/* Write what is pending to its stdin. */
static void on_write(int fd, int revents, void *arg)
{
	struct stdio_t *t = arg;
	(void)revents;
	while (t->pending.len > 0) {
		ssize_t n = write(fd, t->pending.data, t->pending.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) { /* EPIPE: it closed its stdin or died */
			buf_reset(&t->pending);
			close_fd(t, &t->in);
			return; /* its exit says the rest */
		}
		memmove(t->pending.data, t->pending.data + n,
		        t->pending.len - (size_t)n);
		t->pending.len -= (size_t)n;
	}
	loop_fd_events(t->loop, fd, 0);
	if (t->closing)
		close_fd(t, &t->in);
}

/* closed, from the loop. */
static void stdio_closed_now(void *arg)
{
	struct stdio_t *t = arg;
	t->timer = 0;
	t->cb.closed(t->cb.arg);
}

/* The child has exited: what is left of its output is read first. */
static void on_exit_child(pid_t pid, int status, void *arg)
{
	struct stdio_t *t = arg;
	(void)pid;
	/* what it started in its group (npx's node, a wrapper's server)
	 * goes with it */
	kill(-t->pid, SIGKILL);
	t->pid = 0;
	if (t->eof_timer)
		loop_timer_cancel(t->loop, t->eof_timer);
	t->eof_timer = 0;
	if (t->out >= 0)
		on_read(t->out, POLLIN, t);
	if (t->err >= 0)
		on_read(t->err, POLLIN, t);
	if (t->eline.len > 0) {
		t->cb.log(t->cb.arg, buf_str(&t->eline));
		buf_reset(&t->eline);
	}
	if (t->closing) {
		if (t->timer)
			loop_timer_cancel(t->loop, t->timer);
		t->timer = 0;
		t->cb.closed(t->cb.arg);
		return;
	}
	char *why;
	if (WIFSIGNALED(status))
		why = xasprintf("the server was killed by signal %d",
		                WTERMSIG(status));
	else
		why = xasprintf("the server exited (status %d)",
		                WEXITSTATUS(status));
	if (!WIFSIGNALED(status) && WEXITSTATUS(status))
		t->cb.log(t->cb.arg,
		          "(a stdio server gets a filtered environment: PATH, "
		          "HOME, the locale, proxies and certificates; name "
		          "what else it needs in \"env_vars\")");
	stdio_failed(t, why);
	free(why);
}

/* Closing: SIGTERM to its group, later SIGKILL. */
static void stdio_kill_step(void *arg)
{
	struct stdio_t *t = arg;
	t->timer = 0;
	if (!t->pid)
		return;
	kill(-t->pid, t->kill_step == 0 ? SIGTERM : SIGKILL);
	if (t->kill_step++ == 0)
		t->timer = loop_timer_add(
		    t->loop, STDIO_KILL_MS - STDIO_TERM_MS, stdio_kill_step, t);
}

static int stdio_send(struct mcp_transport *base, const char *json, size_t n,
                      enum mcp_msg kind, char **err)
{
	struct stdio_t *t = (struct stdio_t *)base;
	(void)kind;
	if (t->in < 0 || t->closing || t->failed) {
		*err = xstrdup("the server's stdin is closed");
		return -1;
	}
	if (memchr(json, '\n', n)) {
		*err = xstrdup("a message with a newline");
		return -1;
	}
	if (t->pending.len + n + 1 > MCP_MAX_MESSAGE) {
		*err = xstrdup("the server is not reading its stdin");
		return -1;
	}
	int idle = t->pending.len == 0;
	buf_append(&t->pending, json, n);
	buf_append(&t->pending, "\n", 1);
	loop_fd_events(t->loop, t->in, POLLOUT);
	/* written now when nothing waits before it (a pipe takes it at
	 * once): a message sent just before the end, a call's
	 * notifications/cancelled, must not wait for a loop pass that may
	 * not come */
	if (idle)
		on_write(t->in, POLLOUT, t);
	return 0;
}

static void stdio_close(struct mcp_transport *base)
{
	struct stdio_t *t = (struct stdio_t *)base;
	if (t->closing)
		return;
	t->closing = 1;
	if (!t->pid) {
		t->timer = loop_timer_add(t->loop, 0, stdio_closed_now, t);
		return;
	}
	if (t->in >= 0 && t->pending.len == 0)
		close_fd(t, &t->in); /* EOF: the spec's way to end */
	t->timer = loop_timer_add(t->loop, STDIO_TERM_MS, stdio_kill_step, t);
}

/* A child given up on is reaped whenever it goes. */
static void reap_later(pid_t pid, int status, void *arg)
{
	(void)pid;
	(void)status;
	(void)arg;
}

static void stdio_free(struct mcp_transport *base)
{
	struct stdio_t *t = (struct stdio_t *)base;
	if (!t)
		return;
	if (t->timer)
		loop_timer_cancel(t->loop, t->timer);
	if (t->eof_timer)
		loop_timer_cancel(t->loop, t->eof_timer);
	close_fd(t, &t->in);
	close_fd(t, &t->out);
	close_fd(t, &t->err);
	if (t->pid) {
		kill(-t->pid, SIGKILL);
		loop_child_unwatch(t->loop, t->pid);
		loop_child_watch(t->loop, t->pid, reap_later, NULL);
	}
	buf_free(&t->pending);
	buf_free(&t->line);
	buf_free(&t->eline);
	free(t->name);
	free(t);
}

static const struct mcp_transport_ops stdio_ops = {
    .name = "stdio",
    .send = stdio_send,
    .initialized = NULL,
    .close = stdio_close,
    .free = stdio_free,
};

/* Whether a variable of ours goes to a server unasked: what programs
 * need to run (paths, the user, the locale, the terminal, proxies and
 * certificates), never the API keys and tokens assay itself holds. */
static int env_passed(const char *name, size_t n, const cJSON *env_vars)
{
	static const char *const plain[] = {"PATH",
	                                    "HOME",
	                                    "USER",
	                                    "LOGNAME",
	                                    "SHELL",
	                                    "LANG",
	                                    "LANGUAGE",
	                                    "TERM",
	                                    "TMPDIR",
	                                    "TZ",
	                                    "http_proxy",
	                                    "https_proxy",
	                                    "no_proxy",
	                                    "HTTP_PROXY",
	                                    "HTTPS_PROXY",
	                                    "NO_PROXY",
	                                    "ALL_PROXY",
	                                    "all_proxy",
	                                    "SSL_CERT_FILE",
	                                    "SSL_CERT_DIR",
	                                    "NODE_EXTRA_CA_CERTS",
	                                    "REQUESTS_CA_BUNDLE",
	                                    "CURL_CA_BUNDLE",
	                                    "DOCKER_HOST",
	                                    "DOCKER_CONFIG",
	                                    "DOCKER_CONTEXT",
	                                    "SSH_AUTH_SOCK",
	                                    "DISPLAY",
	                                    "WAYLAND_DISPLAY",
	                                    "DBUS_SESSION_BUS_ADDRESS",
	                                    NULL};
	for (int i = 0; plain[i]; i++)
		if (strlen(plain[i]) == n && !strncmp(name, plain[i], n))
			return 1;
	if ((n > 3 && !strncmp(name, "LC_", 3)) ||
	    (n > 4 && !strncmp(name, "XDG_", 4)))
		return 1;
	const cJSON *it;
	cJSON_ArrayForEach(
	    it, env_vars) if (cJSON_IsString(it) &&
	                      strlen(it->valuestring) == n &&
	                      !strncmp(name, it->valuestring, n)) return 1;
	return 0;
}

/* The environment into v: ours as env_passed lets it through (the
 * spec's env_vars name more), with the spec's env over it. */
static int stdio_env(const cJSON *env, const cJSON *env_vars, struct strv *v,
                     char **err)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, env)
	{
		if (!cJSON_IsString(it) || !it->string || !*it->string ||
		    strchr(it->string, '=')) {
			*err = xasprintf("\"env\": \"%.40s\" must be a name "
			                 "with a string value",
			                 it->string ? it->string : "");
			return -1;
		}
	}
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || !env_passed(*e, (size_t)(eq - *e), env_vars))
			continue;
		char *key = xstrndup(*e, (size_t)(eq - *e));
		int over = cJSON_GetObjectItemCaseSensitive(env, key) != NULL;
		free(key);
		if (!over)
			strv_push(v, *e);
	}
	cJSON_ArrayForEach(it, env)
	    strv_take(v, xasprintf("%s=%s", it->string, it->valuestring));
	return 0;
}

/* The argv: the command, then args (strings only). */
static int stdio_argv(const cJSON *spec, struct strv *v, char **err)
{
	strv_push(v, json_str(spec, "command", ""));
	const cJSON *args = cJSON_GetObjectItem(spec, "args"), *a;
	if (args && !cJSON_IsArray(args)) {
		*err = xstrdup("\"args\" must be an array of strings");
		return -1;
	}
	cJSON_ArrayForEach(a, args)
	{
		if (!cJSON_IsString(a)) {
			*err = xstrdup("\"args\" must be an array of strings");
			return -1;
		}
		strv_push(v, a->valuestring);
	}
	return 0;
}

/* Our end of a pipe, not blocking. */
static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

struct mcp_transport *mcp_stdio_new(struct loop *l, const char *name,
                                    const cJSON *spec,
                                    const struct mcp_transport_cb *cb,
                                    char **err)
{
	const char *cmd = json_str(spec, "command", "");
	const char *cwd = json_str(spec, "cwd", NULL);
	struct strv argv = {0}, envv = {0};
	char *path = NULL, *why = NULL;
	struct stdio_t *t = NULL;
	if (!*cmd) {
		why = xstrdup("\"command\" is empty");
		goto fail;
	}
	path = strchr(cmd, '/') ? xstrdup(cmd) : spawn_which(cmd);
	if (!path) {
		why = xasprintf("%s: not found in PATH", cmd);
		goto fail;
	}
	if (stdio_argv(spec, &argv, &why) < 0 ||
	    stdio_env(cJSON_GetObjectItem(spec, "env"),
	              cJSON_GetObjectItem(spec, "env_vars"), &envv, &why) < 0)
		goto fail;
	struct spawn_opts o = {
	    .argv = argv.v,
	    .path = path,
	    .envp = envv.v,
	    .io = {{SPAWN_PIPE, -1}, {SPAWN_PIPE, -1}, {SPAWN_PIPE, -1}},
	    .new_pgroup = 1,
	    .user_fdlimit = 1,
	    .cwd = cwd,
	};
	struct spawn_proc p;
	if (spawn_start(&o, &p, &why) < 0)
		goto fail;
	t = xcalloc(1, sizeof *t);
	t->base.ops = &stdio_ops;
	t->loop = l;
	t->name = xstrdup(name);
	t->cb = *cb;
	t->pid = p.pid;
	t->in = p.fd[0];
	t->out = p.fd[1];
	t->err = p.fd[2];
	buf_init(&t->pending, 0);
	buf_init(&t->line, 0);
	buf_init(&t->eline, 0);
	for (int i = 0; i < 3; i++)
		nonblock(p.fd[i]);
	loop_fd_add(l, t->in, 0, on_write, t);
	loop_fd_add(l, t->out, POLLIN, on_read, t);
	loop_fd_add(l, t->err, POLLIN, on_read, t);
	loop_child_watch(l, t->pid, on_exit_child, t);
	strv_free(&argv);
	strv_free(&envv);
	free(path);
	return &t->base;
fail:
	*err = xasprintf("MCP server \"%s\": %s", name, why ? why : "?");
	free(why);
	strv_free(&argv);
	strv_free(&envv);
	free(path);
	return NULL;
}
