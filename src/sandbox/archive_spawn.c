/* archive_spawn.c: runs the assay-archive helper (src/helpers/) so that
 * archive work happens outside the main process. */
#include "assay/buf.h"
#include "assay/util.h"
#include "sandbox/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The assay-archive binary: $ASSAY_ARCHIVE_BIN, else beside assay. */
char *sbx_archive_helper(void)
{
	return helper_path("ASSAY_ARCHIVE_BIN", "assay-archive");
}

int sbx_spawn_archive(const char *dir, const char *path, char **err)
{
	char *bin = sbx_archive_helper();
	int pipefd[2] = {-1, -1}, rc = -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (!bin || access(bin, X_OK) < 0) {
		set_err(err,
		        "archive: helper %s not found: reinstall assay "
		        "(assay-archive belongs beside the assay binary) or "
		        "set ASSAY_ARCHIVE_BIN",
		        bin ? bin : "assay-archive");
		goto out;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		set_err(err, "archive: pipe: %s", strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDERR_FILENO);
	char *argv[] = {bin, "create", (char *)path, (char *)dir, NULL};
	pid_t pid;
	/* the helper reads a tree the sandbox wrote: it gets no secrets */
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	int e = posix_spawn(&pid, bin, &fa, NULL, argv, envp);
	close(pipefd[1]);
	pipefd[1] = -1;
	if (e) {
		set_err(err, "archive: cannot run %s: %s", bin, strerror(e));
		goto out;
	}
	struct buf msg;
	buf_init(&msg, 4096);
	char tmp[512];
	ssize_t r;
	while ((r = read(pipefd[0], tmp, sizeof tmp)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		buf_append(&msg, tmp, (size_t)r); /* beyond 4 KiB: dropped */
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		rc = 0;
	} else {
		while (msg.len && msg.data[msg.len - 1] == '\n')
			msg.data[--msg.len] = '\0';
		if (msg.len)
			set_err(err, "%s", buf_str(&msg));
		else if (WIFSIGNALED(status))
			set_err(err, "archive: %s was killed by signal %d", bin,
			        WTERMSIG(status));
		else
			set_err(err, "archive: %s failed with exit code %d",
			        bin, WEXITSTATUS(status));
	}
	buf_free(&msg);
out:
	posix_spawn_file_actions_destroy(&fa);
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	free(bin);
	return rc;
}
