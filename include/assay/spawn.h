/* spawn.h: starting a child process, the one way assay does it. The
 * child begins with its signals as a fresh process has them (default
 * dispositions, nothing blocked), its stdin, stdout and stderr placed as
 * asked (and 3 when fd3 is given), every other descriptor closed on exec, and
 * the options below applied; a failure in the child before or at exec comes
 * back to the caller as an error message, not as an exit code. Reaping is the
 * caller's (loop_child_watch, or waitpid). */
#ifndef ASSAY_SPAWN_H
#define ASSAY_SPAWN_H

#include <sys/resource.h>
#include <sys/types.h>

/* What one of the child's stdin, stdout and stderr is. */
enum spawn_how {
	SPAWN_NULL,    /* /dev/null (the zero value) */
	SPAWN_INHERIT, /* ours, as it is */
	SPAWN_PIPE,    /* a pipe; our end comes back in spawn_proc.fd[] */
	SPAWN_FD,      /* the descriptor fd (not taken: the caller closes) */
};

struct spawn_io {
	enum spawn_how how;
	int fd; /* for SPAWN_FD */
};

/* A resource limit set in the child (setrlimit). */
struct spawn_limit {
	int resource; /* RLIMIT_AS, ... */
	struct rlimit rl;
};

/* The cgroup the child starts in (as root, the local sandbox's). */
struct spawn_cgroup {
	int dir_fd;   /* cgroup v2 directory: clone3 CLONE_INTO_CGROUP; -1 */
	int procs_fd; /* "cgroup.procs" or v1 "tasks": else the child
	               * writes "0" to it before exec; -1 */
};

struct spawn_opts {
	char *const *argv;     /* argv[0] is the program unless path */
	const char *path;      /* the file to execute; NULL: argv[0] */
	char *const *envp;     /* the whole environment; NULL: ours */
	struct spawn_io io[3]; /* stdin, stdout, stderr */
	int new_pgroup;        /* in a process group of its own, set by
	                        * both sides (a kill(-pid) never misses) */
	const struct spawn_limit *limits; /* n_limits, set before exec */
	int n_limits;
	/* RLIMIT_NOFILE back to the soft limit assay started with
	 * (fdlimit_child), after the descriptors are placed */
	int user_fdlimit;
	const struct spawn_cgroup *cgroup; /* NULL: ours */
	const char *cwd;                   /* its directory; NULL: ours */
	/* a descriptor of ours the program gets as its 3 (bwrap's
	 * --info-fd 3; not taken: the caller closes); NULL: none */
	const int *fd3;
};

/* A started child. fd[i] is our end of io[i] when that is SPAWN_PIPE
 * (O_CLOEXEC, blocking: stdin's for writing, the others for reading),
 * else -1. */
struct spawn_proc {
	pid_t pid;
	int fd[3];
};

/* Start o->argv. 0 and *p, or -1 and *err (may be NULL: "pipe: ...",
 * "cannot run PROGRAM: ...", "cannot run PROGRAM: setrlimit: ..."),
 * with nothing left open and no child left behind. Returns once the
 * child has exec'd or failed. */
int spawn_start(const struct spawn_opts *o, struct spawn_proc *p, char **err);

/* The executable name in one of $PATH's absolute directories
 * ("/usr/bin:/bin" when PATH is unset or empty), or NULL. */
char *spawn_which(const char *name);

#endif
