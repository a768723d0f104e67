/* fdlimit.c: the descriptor limit. Every session holds a dozen or more
 * descriptors at once (run dir files, pipes to its sandbox, libcurl's
 * sockets), so the soft limit (often 1024, sometimes far less) is
 * raised to the hard one at start, as systemd advises for programs that
 * need many; nothing in assay uses select(), whose FD_SETSIZE is why
 * the soft limit is low by default, and the code a sandbox runs gets
 * the first soft limit back (fdlimit_child). */
#include "assay/fdlimit.h"
#include "assay/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

static struct rlimit fdlimit_first; /* as the process started */
static int fdlimit_raised;

void fdlimit_raise(void)
{
	struct rlimit rl;
	if (fdlimit_raised || getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	fdlimit_first = rl;
	fdlimit_raised = 1;
	rlim_t want = rl.rlim_max;
	if (want == RLIM_INFINITY || want > FDLIMIT_CAP)
		want = FDLIMIT_CAP;
	if (want <= rl.rlim_cur)
		return;
	rl.rlim_cur = want;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		/* the kernel's nr_open can be below the hard limit: the
		 * limit stays as it was, and fdlimit_soft says so */
	}
}

int fdlimit_child(void)
{
	if (!fdlimit_raised)
		return 0;
	return setrlimit(RLIMIT_NOFILE, &fdlimit_first);
}

long fdlimit_soft(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return FDLIMIT_CAP;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > FDLIMIT_CAP)
		return FDLIMIT_CAP;
	return (long)rl.rlim_cur;
}

long fdlimit_hard(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return FDLIMIT_CAP;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > FDLIMIT_CAP)
		return FDLIMIT_CAP;
	return (long)rl.rlim_max;
}

int fdlimit_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (d) {
		int n = 0;
		struct dirent *e;
		while ((e = readdir(d)))
			n += e->d_name[0] != '.';
		closedir(d);
		return n - 1; /* the directory's own */
	}
	/* without /proc: ask each descriptor below the limit */
	long soft = fdlimit_soft();
	int n = 0;
	for (long fd = 0; fd < soft; fd++)
		n += fcntl((int)fd, F_GETFD) >= 0;
	return n;
}

char *fdlimit_explain(const char *msg)
{
	if (!msg || strstr(msg, "out of descriptors:"))
		return NULL; /* said already */
	if (strstr(msg, strerror(ENFILE)))
		return xasprintf("%s (out of descriptors: the system's table "
		                 "of open files is full: close other "
		                 "programs, or raise fs.file-max with sysctl)",
		                 msg);
	if (!strstr(msg, strerror(EMFILE)))
		return NULL;
	long soft = fdlimit_soft(), hard = fdlimit_hard();
	if (soft < hard)
		return xasprintf("%s (out of descriptors: assay may hold %ld "
		                 "at once; `ulimit -n %ld` before assay "
		                 "raises that to the hard limit; or run fewer "
		                 "sessions at once, assay eval -j)",
		                 msg, soft, hard);
	return xasprintf("%s (out of descriptors: assay may hold %ld at "
	                 "once, its hard limit: raise it as root (`ulimit "
	                 "-n`, or nofile in /etc/security/limits.conf), or "
	                 "run fewer sessions at once, assay eval -j)",
	                 msg, soft);
}
