/* archive_members.c: reading a few files out of a persisted workspace
 * archive, for `assay export` (which has no loop: it waits here). The
 * archive was written by a sandbox's contents, so libarchive reads it
 * in the assay-archive helper, under its limits, never in assay. */
#include "assay/sandbox.h"
#include "assay/spawn.h"
#include "assay/util.h"
#include "sandbox/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Drain the helper's stdout and stderr until both close or the time
 * is up (then it is killed): -1 on the timeout. */
static int members_drain(pid_t pid, int out_fd, int err_fd, struct buf *out,
                         struct buf *msg, int timeout_ms)
{
	struct pollfd p[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
	struct buf *to[2] = {out, msg};
	int64_t deadline = now_ms() + timeout_ms;
	char tmp[4096];
	while (p[0].fd >= 0 || p[1].fd >= 0) {
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			kill(pid, SIGKILL);
			return -1;
		}
		if (poll(p, 2, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			kill(pid, SIGKILL);
			return -1;
		}
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			ssize_t r = read(p[i].fd, tmp, sizeof tmp);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				p[i].fd = -1;
				continue;
			}
			buf_append(to[i], tmp,
			           (size_t)r); /* past max: dropped */
		}
	}
	return 0;
}

int sbx_archive_members(const char *archive, const char *dir, size_t max,
                        char *const *names, int n, struct buf *report,
                        int timeout_ms, char **err)
{
	char *bin = sbx_archive_helper(), *maxs = xasprintf("%zu", max);
	char **argv = xcalloc((size_t)n + 6, sizeof *argv);
	int rc = -1, status = 0;
	struct spawn_proc p = {-1, {-1, -1, -1}};
	struct buf msg;
	buf_init(&msg, 4096);
	if (!bin || access(bin, X_OK) < 0) {
		set_err(err,
		        "helper %s not found: reinstall assay (assay-archive "
		        "belongs beside the assay binary) or set "
		        "ASSAY_ARCHIVE_BIN",
		        bin ? bin : "assay-archive");
		goto out;
	}
	argv[0] = bin;
	argv[1] = "members";
	argv[2] = (char *)archive;
	argv[3] = (char *)dir;
	argv[4] = maxs;
	for (int i = 0; i < n; i++)
		argv[5 + i] = names[i];
	/* it reads what a sandbox made: no secrets in its environment */
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	struct spawn_opts o = {
	    .argv = argv,
	    .envp = envp,
	    .io = {{SPAWN_NULL, -1}, {SPAWN_PIPE, -1}, {SPAWN_PIPE, -1}}};
	if (spawn_start(&o, &p, err) < 0)
		goto out;
	pid_t pid = p.pid;
	int timed_out =
	    members_drain(pid, p.fd[1], p.fd[2], report, &msg, timeout_ms) < 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	while (msg.len && msg.data[msg.len - 1] == '\n')
		msg.data[--msg.len] = '\0';
	if (timed_out)
		set_err(err, "%s took over %d s: stopped", bin,
		        timeout_ms / 1000);
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		rc = 0;
	else if (msg.len)
		set_err(err, "%s", buf_str(&msg));
	else
		set_err(err, "%s failed (status %d)", bin, status);
out:
	for (int i = 1; i < 3; i++)
		if (p.fd[i] >= 0)
			close(p.fd[i]);
	buf_free(&msg);
	free(argv);
	free(maxs);
	free(bin);
	return rc;
}
