/* local.c: the `local` sandbox backend. Every command runs in its own
 * bubblewrap sandbox: new user, mount, PID, network, IPC, UTS and
 * cgroup namespaces, no capabilities, read-only system directories,
 * the workspace read-write at /workspace, a private /tmp, a clean
 * environment, and resource limits. bwrap is spawned in its own
 * process group; killing that group kills bwrap, and with it (through
 * --die-with-parent and the PID namespace) everything the command
 * started. Output streams through the loop as it arrives.
 *
 * Limits: RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE and RLIMIT_CORE are set
 * before bwrap is executed and are inherited. The process count is
 * capped with RLIMIT_NPROC, set inside the sandbox after bwrap has
 * created the user namespace, where the kernel counts only the
 * sandbox's own processes. The kernel never applies RLIMIT_NPROC to
 * host root, so when assay runs as root a pids cgroup per sandbox
 * (v1 pids hierarchy or the v2 root) carries the cap instead. */
#include "assay/sandbox.h"
#include "assay/config.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/path.h"
#include "assay/util.h"
#include "sandbox/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOCAL_CHUNK 65536                     /* read per readiness */
#define LOCAL_STDIN_MAX (16u << 20)           /* stdin bytes queued at most */
#define LOCAL_GRACE_MS 2000                   /* reaped but pipes still open */
#define LOCAL_PROBE_MS 10000                  /* the start-up probe */
#define LOCAL_MPL_DIR "/var/cache/matplotlib" /* inside the sandbox */

/* Top-level directories that are either merged-/usr links or real
 * directories (older layouts). */
static const char *const usr_links[] = {"bin",   "sbin",  "lib",
                                        "lib32", "lib64", "libx32"};

struct strv {
	char **v;
	size_t n, cap;
};

struct local {
	char *bwrap;
	struct strv base;    /* bwrap and every option up to the command */
	char *etc_dir;       /* what the sandbox sees at /etc (etc.c) */
	int etc_shared;      /* etc_dir is in the user's cache: keep it */
	char *limits_script; /* sets RLIMIT_NPROC inside, then execs; NULL
	                      * when the cgroup caps processes */
	struct rlimit rl_as, rl_cpu, rl_fsize;
	int use_userns, disable_userns;
	int ws_fd;
	char *cg_dir;   /* our pids cgroup, or NULL */
	int cg_join_fd; /* v1 "tasks" or v2 "cgroup.procs": the child
	                 * writes "0" to it before exec */
	int cg_dir_fd;  /* v2: for clone3 CLONE_INTO_CGROUP */
	struct sbx_exec *execs;
	char *chunk;
	int started, stopped;
};

struct sbx_exec {
	struct sbx *s;
	struct sbx_exec *next;
	pid_t pid;
	int out_fd, err_fd, in_fd;
	int close_stdin; /* close once pending is flushed */
	struct buf pending;
	int status;
	int reaped, finished;
	int timed_out, cancelled;
	uint64_t timer, grace;
	int64_t t0;
	struct sbx_exec_obs obs;
};

/* The child's side of one spawn, prepared before fork so the child
 * only makes async-signal-safe calls. */
struct spawn {
	char *const *argv;
	int fd[3];       /* stdin, stdout, stderr */
	int join_cgroup; /* not placed there by clone3 */
	const struct local *lp;
};

static void strv_push(struct strv *a, const char *s)
{
	if (a->n + 2 > a->cap) {
		a->cap = a->cap ? a->cap * 2 : 64;
		a->v = xrealloc(a->v, a->cap * sizeof *a->v);
	}
	a->v[a->n++] = xstrdup(s);
	a->v[a->n] = NULL;
}

static void strv_pushv(struct strv *a, int n, ...)
{
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		strv_push(a, va_arg(ap, const char *));
	va_end(ap);
}

static void strv_free(struct strv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof *a);
}

static void strv_copy(struct strv *dst, const struct strv *src)
{
	for (size_t i = 0; i < src->n; i++)
		strv_push(dst, src->v[i]);
}

/* ---- the child between fork and exec: async-signal-safe only ---- */

static void child_fail(const char *what)
{
	static const char pre[] = "assay: cannot start the sandbox: ";
	if (write(2, pre, sizeof pre - 1) < 0 ||
	    write(2, what, strlen(what)) < 0 || write(2, "\n", 1) < 0) {
		/* nothing more we can do */
	}
	_exit(127);
}

/* Reset what the loop changed (signal dispositions and mask), join
 * the cgroup, set the limits, place stdin/stdout/stderr and exec bwrap
 * with an empty environment. */
static void __attribute__((noreturn)) child_run(const struct spawn *sp)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL); /* SIGPIPE was ignored */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setpgid(0, 0) < 0)
		child_fail("setpgid failed");
	const struct local *lp = sp->lp;
	if (sp->join_cgroup && write(lp->cg_join_fd, "0", 1) != 1)
		child_fail("cannot join the sandbox's pids cgroup");
	struct rlimit core = {0, 0};
	if (setrlimit(RLIMIT_AS, &lp->rl_as) < 0 ||
	    setrlimit(RLIMIT_CPU, &lp->rl_cpu) < 0 ||
	    setrlimit(RLIMIT_FSIZE, &lp->rl_fsize) < 0 ||
	    setrlimit(RLIMIT_CORE, &core) < 0)
		child_fail("setrlimit failed");
	/* Move every fd out of the way before placing it, so a source
	 * that happens to sit on another's target cannot be clobbered. */
	int high[3];
	for (int i = 0; i < 3; i++) {
		high[i] = fcntl(sp->fd[i], F_DUPFD_CLOEXEC, 3);
		if (high[i] < 0)
			child_fail("fcntl failed");
	}
	for (int i = 0; i < 3; i++)
		if (dup2(high[i], i) < 0)
			child_fail("dup2 failed");
	/* Nothing else of ours may reach bwrap or the sandbox. */
	close_range(3, ~0U, 0);
	char *const envp[] = {NULL};
	execve(lp->bwrap, sp->argv, envp);
	child_fail("cannot execute bwrap");
	_exit(127);
}

/* fork(), or on cgroup v2 a fork straight into our cgroup: joining
 * by a write to cgroup.procs would take the kernel's global
 * threadgroup lock and wait for an RCU grace period (milliseconds)
 * on every command. */
static pid_t fork_child(const struct local *lp, int *joined)
{
	*joined = 0;
#ifdef SYS_clone3
	if (lp->cg_dir_fd >= 0) {
		struct clone_args ca;
		memset(&ca, 0, sizeof ca);
		ca.flags = CLONE_INTO_CGROUP;
		ca.exit_signal = SIGCHLD;
		ca.cgroup = (uint64_t)lp->cg_dir_fd;
		long pid = syscall(SYS_clone3, &ca, sizeof ca);
		if (pid >= 0) {
			*joined = 1;
			return (pid_t)pid;
		}
	}
#endif
	return fork();
}

/* Fork and exec bwrap with sp; returns the pid or -1 + *err. */
static pid_t spawn_bwrap(struct spawn *sp, char **err)
{
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	int joined;
	pid_t pid = fork_child(sp->lp, &joined);
	if (pid == 0) {
		sp->join_cgroup = sp->lp->cg_join_fd >= 0 && !joined;
		child_run(sp);
	}
	int saved = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid < 0)
		set_err(err, "sandbox: cannot fork: %s", strerror(saved));
	else
		setpgid(pid, pid); /* also in the child: no race on kill */
	return pid;
}

/* ---- building the bwrap command line ---- */

static char *find_bwrap(void)
{
	const char *env = getenv("ASSAY_BWRAP");
	if (env && *env)
		return access(env, X_OK) == 0 ? xstrdup(env) : NULL;
	const char *path = getenv("PATH");
	char *dirs = xstrdup(path && *path ? path : "/usr/bin:/bin");
	char *found = NULL, *save = NULL;
	for (char *d = strtok_r(dirs, ":", &save); d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		char *cand = xasprintf("%s/bwrap", d);
		if (*d == '/' && access(cand, X_OK) == 0)
			found = cand;
		else
			free(cand);
	}
	free(dirs);
	if (!found && access("/usr/bin/bwrap", X_OK) == 0)
		found = xstrdup("/usr/bin/bwrap");
	return found;
}

static void add_etc_bind(struct strv *a, const char *name)
{
	char *host = xasprintf("/etc/%s", name);
	struct stat st;
	if (stat(host, &st) == 0 && S_ISDIR(st.st_mode))
		strv_pushv(a, 3, "--ro-bind", host, host);
	free(host);
}

/* /usr read-only, the merged-/usr links, and the /etc snapshot. */
static void add_system_dirs(struct strv *a, const struct local *lp, int network)
{
	strv_pushv(a, 3, "--ro-bind", "/usr", "/usr");
	for (size_t i = 0; i < sizeof usr_links / sizeof *usr_links; i++) {
		char *host = xasprintf("/%s", usr_links[i]);
		char target[PATH_MAX];
		struct stat st;
		ssize_t n;
		if (lstat(host, &st) < 0) {
			/* not on this system */
		} else if (S_ISLNK(st.st_mode) &&
		           (n = readlink(host, target, sizeof target - 1)) >
		               0) {
			target[n] = '\0';
			strv_pushv(a, 3, "--symlink", target, host);
		} else if (S_ISDIR(st.st_mode)) {
			strv_pushv(a, 3, "--ro-bind", host, host);
		}
		free(host);
	}
	strv_pushv(a, 3, "--ro-bind", lp->etc_dir, "/etc");
	for (size_t i = 0; sbx_etc_binds[i]; i++)
		add_etc_bind(a, sbx_etc_binds[i]);
	for (size_t i = 0; network && sbx_etc_net_binds[i]; i++)
		add_etc_bind(a, sbx_etc_net_binds[i]);
}

/* The whole environment of a sandboxed command: nothing of the host. */
static void add_env(struct strv *a)
{
	/* BLAS threads each reserve address space; a few keep a numpy
	 * job well inside the RLIMIT_AS budget on a many-core host. */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	char threads[16];
	snprintf(threads, sizeof threads, "%ld", ncpu < 4 ? ncpu : 4);
	const char *user = getuid() == 0 ? "root" : "sandbox";
	strv_push(a, "--clearenv");
	strv_pushv(a, 3, "--setenv", "PATH", "/usr/bin:/bin:/usr/local/bin");
	strv_pushv(a, 3, "--setenv", "HOME", "/workspace");
	strv_pushv(a, 3, "--setenv", "USER", user);
	strv_pushv(a, 3, "--setenv", "LOGNAME", user);
	strv_pushv(a, 3, "--setenv", "SHELL", "/bin/bash");
	strv_pushv(a, 3, "--setenv", "LANG", "C.UTF-8");
	strv_pushv(a, 3, "--setenv", "TERM", "dumb");
	strv_pushv(a, 3, "--setenv", "TMPDIR", "/tmp");
	strv_pushv(a, 3, "--setenv", "MPLBACKEND", "Agg");
	strv_pushv(a, 3, "--setenv", "MPLCONFIGDIR", LOCAL_MPL_DIR);
	/* fontconfig's cache too: kept for the run, out of the workspace */
	strv_pushv(a, 3, "--setenv", "XDG_CACHE_HOME", LOCAL_MPL_DIR "/cache");
	strv_pushv(a, 3, "--setenv", "PYTHONUNBUFFERED", "1");
	/* bytecode of /usr is used as shipped; scripts in the workspace
	 * leave no __pycache__ behind */
	strv_pushv(a, 3, "--setenv", "PYTHONDONTWRITEBYTECODE", "1");
	strv_pushv(a, 3, "--setenv", "OPENBLAS_NUM_THREADS", threads);
	strv_pushv(a, 3, "--setenv", "OMP_NUM_THREADS", threads);
}

/* Size of the private /tmp and /dev/shm: tmpfs pages are host memory
 * that RLIMIT_AS does not see. */
static void push_size(struct strv *a, long mem_mb)
{
	char size[32];
	long mb = mem_mb > 0 ? mem_mb / 4 : 1024;
	snprintf(size, sizeof size, "%ld", (mb < 64 ? 64 : mb) << 20);
	strv_pushv(a, 2, "--size", size);
}

/* Every bwrap option up to the command; see the top of the file. */
static void build_base(struct sbx *s, struct local *lp, const char *mpl)
{
	struct strv *a = &lp->base;
	strv_free(a);
	strv_push(a, lp->bwrap);
	strv_push(a, "--unshare-all");
	if (lp->use_userns)
		strv_push(a, "--unshare-user");
	if (lp->disable_userns)
		strv_push(a, "--disable-userns");
	if (s->cfg->network)
		strv_push(a, "--share-net");
	strv_pushv(a, 6, "--die-with-parent", "--new-session", "--cap-drop",
	           "ALL", "--hostname", "assay");
	add_system_dirs(a, lp, s->cfg->network);
	strv_pushv(a, 4, "--proc", "/proc", "--dev", "/dev");
	push_size(a, s->cfg->mem_mb);
	strv_pushv(a, 2, "--tmpfs", "/tmp");
	push_size(a, s->cfg->mem_mb);
	strv_pushv(a, 2, "--tmpfs", "/dev/shm");
	strv_pushv(a, 3, "--bind", mpl, LOCAL_MPL_DIR);
	strv_pushv(a, 3, "--bind", s->workspace, "/workspace");
	/* Once every mount point exists: only /workspace, /tmp, /dev/shm
	 * and the matplotlib cache stay writable. */
	strv_pushv(a, 4, "--remount-ro", "/dev", "--remount-ro", "/");
	strv_pushv(a, 2, "--chdir", "/workspace");
	add_env(a);
}

/* The full argv for one command: the base options, then (without a
 * pids cgroup) the in-sandbox wrapper that caps the process count. */
static void build_argv(const struct local *lp, struct strv *a,
                       const struct sbx_exec_req *r)
{
	strv_copy(a, &lp->base);
	strv_push(a, "--");
	if (lp->limits_script)
		strv_pushv(a, 4, "/bin/bash", "-c", lp->limits_script,
		           "assay-sandbox");
	if (r->argv) {
		for (size_t i = 0; r->argv[i]; i++)
			strv_push(a, r->argv[i]);
	} else {
		strv_pushv(a, 3, "/bin/bash", "-c", r->command);
	}
}

/* Limit res to value*mul (hard limit extra_hard above), never above
 * the current hard limit; value <= 0 keeps what we have. */
static void set_limit(struct rlimit *rl, int res, long value, long mul,
                      long extra_hard)
{
	getrlimit(res, rl);
	if (value <= 0)
		return;
	rlim_t v = (rlim_t)value * (rlim_t)mul;
	rlim_t hard = v + (rlim_t)extra_hard;
	if (rl->rlim_max != RLIM_INFINITY && hard > rl->rlim_max)
		hard = rl->rlim_max;
	if (v > hard)
		v = hard;
	rl->rlim_cur = v;
	rl->rlim_max = hard;
}

/* ---- the pids cgroup (root only) ---- */

static void cgroup_sweep(const char *root)
{
	DIR *d = opendir(root);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		int pid;
		if (sscanf(de->d_name, "assay-%d-", &pid) != 1)
			continue;
		if (kill(pid, 0) < 0 && errno == ESRCH) {
			char *p = xasprintf("%s/%s", root, de->d_name);
			rmdir(p); /* only succeeds when empty */
			free(p);
		}
	}
	if (d)
		closedir(d);
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int cgroup_v2_has_pids(const char *root)
{
	char *p = xasprintf("%s/cgroup.subtree_control", root);
	char *text = read_file_max(p, 4096, NULL, NULL);
	free(p);
	int ok = text && strstr(text, "pids") != NULL;
	free(text);
	return ok;
}

/* As root, a pids cgroup for this sandbox: every command joins it
 * before exec, so pids.max bounds the whole tree. */
static void cgroup_setup(struct local *lp, long nproc)
{
	static unsigned seq;
	if (geteuid() != 0 || nproc <= 0)
		return;
	/* v1: the child moves itself with "tasks", which (one thread,
	 * itself) skips the global lock that "cgroup.procs" takes. */
	const char *root = NULL, *join = NULL;
	if (access("/sys/fs/cgroup/pids/tasks", W_OK) == 0) {
		root = "/sys/fs/cgroup/pids";
		join = "tasks";
	} else if (access("/sys/fs/cgroup/cgroup.procs", W_OK) == 0 &&
	           cgroup_v2_has_pids("/sys/fs/cgroup")) {
		root = "/sys/fs/cgroup";
		join = "cgroup.procs";
	}
	if (!root) {
		log_warn("sandbox: running as root without a writable pids "
		         "cgroup: the process limit (%ld) is not enforced "
		         "(the kernel exempts root from RLIMIT_NPROC)",
		         nproc);
		return;
	}
	cgroup_sweep(root);
	char *dir = xasprintf("%s/assay-%d-%u", root, (int)getpid(), ++seq);
	char *max = xasprintf("%s/pids.max", dir);
	char *path = xasprintf("%s/%s", dir, join);
	char value[32];
	snprintf(value, sizeof value, "%ld", nproc);
	int fd = -1;
	if (mkdir(dir, 0755) < 0 || write_text(max, value) < 0 ||
	    (fd = open(path, O_WRONLY | O_CLOEXEC)) < 0) {
		log_warn("sandbox: cannot set up pids cgroup %s: %s; the "
		         "process limit is not enforced",
		         dir, strerror(errno));
		rmdir(dir);
		free(dir);
	} else {
		lp->cg_dir = dir;
		lp->cg_join_fd = fd;
		if (!strcmp(join, "cgroup.procs"))
			lp->cg_dir_fd =
			    open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		log_info("sandbox: process limit %ld via cgroup %s", nproc,
		         dir);
	}
	free(max);
	free(path);
}

/* Close and remove the cgroup once every command has been reaped. */
static void cgroup_remove(struct local *lp)
{
	if (lp->cg_join_fd >= 0)
		close(lp->cg_join_fd);
	if (lp->cg_dir_fd >= 0)
		close(lp->cg_dir_fd);
	lp->cg_join_fd = lp->cg_dir_fd = -1;
	if (!lp->cg_dir)
		return;
	/* The PID namespace empties asynchronously after bwrap is reaped. */
	for (int i = 0; i < 200 && rmdir(lp->cg_dir) < 0 && errno == EBUSY; i++)
		usleep(5000);
	free(lp->cg_dir);
	lp->cg_dir = NULL;
}

/* ---- start ---- */

/* Run bwrap with the real options and `true`, synchronously, and
 * return its stderr (NULL when it worked). */
static char *probe(struct local *lp, int64_t *ms)
{
	struct sbx_exec_req r = {.argv = (const char *const[]){"true", NULL}};
	struct strv a = {0};
	build_argv(lp, &a, &r);
	int errp[2] = {-1, -1}, devnull = -1;
	struct spawn sp = {.argv = a.v, .lp = lp};
	char *err = NULL, *out = NULL;
	int64_t t0 = now_ms();
	if (pipe2(errp, O_CLOEXEC) < 0 ||
	    (devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		out = xasprintf("pipe: %s", strerror(errno));
		goto done;
	}
	sp.fd[0] = sp.fd[1] = devnull;
	sp.fd[2] = errp[1];
	pid_t pid = spawn_bwrap(&sp, &err);
	close(errp[1]);
	errp[1] = -1;
	if (pid < 0)
		goto done;
	struct buf b;
	buf_init(&b, 4096);
	char tmp[512];
	for (;;) {
		struct pollfd p = {errp[0], POLLIN, 0};
		int left = (int)(LOCAL_PROBE_MS - (now_ms() - t0));
		if (left <= 0 || poll(&p, 1, left) == 0) {
			kill(-pid, SIGKILL);
			buf_puts(&b, "timed out");
			break;
		}
		ssize_t n = read(errp[0], tmp, sizeof tmp);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		buf_append(&b, tmp, (size_t)n);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	*ms = now_ms() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		while (b.len && (b.data[b.len - 1] == '\n'))
			b.data[--b.len] = '\0';
		out = xstrdup(b.len ? buf_str(&b) : "exit status nonzero");
	}
	buf_free(&b);
done:
	if (!out && err)
		out = err;
	else
		free(err);
	if (errp[0] >= 0)
		close(errp[0]);
	if (errp[1] >= 0)
		close(errp[1]);
	if (devnull >= 0)
		close(devnull);
	strv_free(&a);
	return out;
}

static int looks_like_userns(const char *msg)
{
	static const char *const hints[] = {
	    "namespace",         "uid map",
	    "setting up uid",    "Operation not permitted",
	    "Permission denied", "No permissions",
	    "No space left"};
	for (size_t i = 0; i < sizeof hints / sizeof *hints; i++)
		if (strstr(msg, hints[i]))
			return 1;
	return 0;
}

/* The command line every exec uses, for the log. */
static void log_command(const struct local *lp)
{
	struct sbx_exec_req r = {.command = "COMMAND"};
	struct strv a = {0};
	struct buf b;
	build_argv(lp, &a, &r);
	buf_init(&b, 0);
	for (size_t i = 0; i < a.n; i++)
		buf_printf(&b, i ? " '%s'" : "%s", a.v[i]);
	log_info("sandbox: %s", buf_str(&b));
	buf_free(&b);
	strv_free(&a);
}

/* The probe costs a whole bwrap start (~7 ms, more on a loaded machine)
 * on every run. Its answer only changes with the boot, the bwrap binary
 * or the user, so it is remembered under that key in the user's cache. */
static char *probe_cache_path(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (xdg && *xdg)
		return xasprintf("%s/assay/bwrap-probe", xdg);
	if (home && *home)
		return xasprintf("%s/.cache/assay/bwrap-probe", home);
	return NULL;
}

static char *probe_cache_key(const struct local *lp)
{
	char boot[64] = "";
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (f) {
		if (!fgets(boot, sizeof boot, f))
			boot[0] = '\0';
		fclose(f);
		boot[strcspn(boot, "\n")] = '\0';
	}
	struct stat st;
	if (!boot[0] || stat(lp->bwrap, &st) < 0)
		return NULL;
	return xasprintf("v1 euid=%d boot=%s bwrap=%s:%lld:%lld:%lld",
	                 (int)geteuid(), boot, lp->bwrap, (long long)st.st_ino,
	                 (long long)st.st_size, (long long)st.st_mtime);
}

/* 0 and the profile set when the cache knows the answer. */
static int probe_cached(struct local *lp, const char *key)
{
	char *path = probe_cache_path();
	char *text = path ? read_file_max(path, 4096, NULL, NULL) : NULL;
	int rc = -1, userns, disable;
	if (text && key) {
		size_t n = strlen(key);
		if (!strncmp(text, key, n) &&
		    sscanf(text + n, "\nprofile=%d,%d", &userns, &disable) ==
		        2) {
			lp->use_userns = userns;
			lp->disable_userns = disable;
			rc = 0;
		}
	}
	free(text);
	free(path);
	return rc;
}

static void probe_remember(const struct local *lp, const char *key)
{
	char *path = probe_cache_path();
	if (!path || !key) {
		free(path);
		return;
	}
	char *dir = xstrdup(path);
	*strrchr(dir, '/') = '\0';
	char *text = xasprintf("%s\nprofile=%d,%d\n", key, lp->use_userns,
	                       lp->disable_userns);
	if (mkdir_p(dir, NULL) == 0)
		write_file_replace(path, text, strlen(text), NULL);
	free(text);
	free(dir);
	free(path);
}

/* Find options this bwrap and kernel accept: the full set first, then
 * without --disable-userns (bwrap < 0.8), then (root only) without a
 * user namespace at all. */
static int probe_profiles(struct sbx *s, struct local *lp, const char *mpl,
                          char **err)
{
	static const int profiles[][2] = {{1, 1}, {1, 0}, {0, 0}};
	char *first = NULL;
	int rc = -1;
	char *key = probe_cache_key(lp);
	if (probe_cached(lp, key) == 0) {
		build_base(s, lp, mpl);
		log_info("sandbox: bwrap profile from the probe cache "
		         "(userns %d, disable-userns %d)",
		         lp->use_userns, lp->disable_userns);
		log_command(lp);
		free(key);
		return 0;
	}
	for (size_t i = 0; i < 3; i++) {
		if (!profiles[i][0] && geteuid() != 0)
			break;
		lp->use_userns = profiles[i][0];
		lp->disable_userns = profiles[i][1];
		build_base(s, lp, mpl);
		int64_t ms = 0;
		char *why = probe(lp, &ms);
		if (!why) {
			log_info("sandbox: bwrap probe ok in %lld ms "
			         "(userns %d, disable-userns %d)",
			         (long long)ms, lp->use_userns,
			         lp->disable_userns);
			log_command(lp);
			probe_remember(lp, key);
			if (!lp->use_userns)
				log_warn("sandbox: no user namespace; running "
				         "as root without capabilities");
			rc = 0;
			break;
		}
		log_info("sandbox: bwrap probe failed: %s", why);
		if (!first)
			first = why;
		else
			free(why);
	}
	free(key);
	if (rc < 0) {
		if (looks_like_userns(first))
			set_err(err,
			        "local sandbox: bubblewrap cannot create "
			        "namespaces (%s): enable unprivileged user "
			        "namespaces (sysctl "
			        "kernel.unprivileged_userns_clone=1 / "
			        "user.max_user_namespaces), or run assay "
			        "outside this container, or use --sandbox "
			        "docker",
			        first);
		else
			set_err(err,
			        "local sandbox: bubblewrap cannot start a "
			        "sandbox (%s): check the bubblewrap "
			        "installation or use --sandbox docker",
			        first);
	}
	free(first);
	return rc;
}

/* The /etc snapshot. Building it costs a few milliseconds of copies
 * and as many to delete, on every run; so it lives in the user's cache
 * under a key of what it was made from, and runs share it (read-only).
 * Without a cache directory it is made in the run dir. */
static int prepare_etc(struct sbx *s, struct local *lp, char **err)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char *base = xdg && *xdg ? xasprintf("%s/assay/sandbox-etc", xdg)
	             : home && *home
	                 ? xasprintf("%s/.cache/assay/sandbox-etc", home)
	                 : NULL;
	char *key = sbx_etc_key(s->cfg->network);
	char *dir = base ? xasprintf("%s/%s", base, key) : NULL;
	struct stat st;
	int rc = -1;
	if (dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
		lp->etc_shared = 1;
	} else if (dir && mkdir_p(base, NULL) == 0) {
		char *tmp = xasprintf("%s.tmp.%d", dir, (int)getpid());
		rm_rf(tmp);
		if (sbx_etc_snapshot(tmp, s->cfg->network, err) == 0 &&
		    (rename(tmp, dir) == 0 || errno == EEXIST ||
		     errno == ENOTEMPTY))
			lp->etc_shared = 1;
		rm_rf(tmp); /* a concurrent run won the rename */
		free(tmp);
	}
	if (!lp->etc_shared) {
		free(dir);
		dir = xasprintf("%s/sandbox-etc", s->run_dir);
		if (sbx_etc_snapshot(dir, s->cfg->network, err) < 0)
			goto out;
	}
	lp->etc_dir = realpath(dir, NULL);
	if (!lp->etc_dir) {
		set_err(err, "sandbox /etc %s: %s", dir, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(base);
	free(key);
	free(dir);
	return rc;
}

/* --workspace (must exist) or <run_dir>/workspace (created). */
static int prepare_workspace(struct sbx *s, char **err)
{
	const struct config *cfg = s->cfg;
	if (cfg->workspace && *cfg->workspace) {
		char *real = realpath(cfg->workspace, NULL);
		struct stat st;
		if (!real || stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
			free(real);
			return set_err(err,
			               "workspace %s is not an existing "
			               "directory: create it or drop "
			               "--workspace",
			               cfg->workspace);
		}
		s->workspace = real;
		return 0;
	}
	char *ws = xasprintf("%s/workspace", s->run_dir);
	if (mkdir_p(ws, err) < 0) {
		free(ws);
		return -1;
	}
	s->workspace = realpath(ws, NULL);
	free(ws);
	if (!s->workspace)
		return set_err(err, "workspace: %s", strerror(errno));
	return 0;
}

/* Find bwrap, prepare the workspace, /etc and limits, probe that a
 * sandbox really starts here, then stage the inputs. */
static int local_start(struct sbx *s, char **err)
{
	struct local *lp = s->priv;
	char *mpl = NULL;
	int rc = -1;
	if (lp)
		return set_err(err, "sandbox: already started");
	lp = xcalloc(1, sizeof *lp);
	lp->ws_fd = -1;
	lp->cg_join_fd = lp->cg_dir_fd = -1;
	s->priv = lp;
	lp->bwrap = find_bwrap();
	if (!lp->bwrap)
		return set_err(err, "bubblewrap (bwrap) is not installed: "
		                    "apt-get install bubblewrap, or use "
		                    "--sandbox docker");
	if (prepare_workspace(s, err) < 0)
		return -1;
	mpl = xasprintf("%s/mplconfig", s->run_dir);
	if (mkdir_p(mpl, err) < 0)
		goto out;
	char *real = realpath(mpl, NULL);
	if (real) {
		free(mpl);
		mpl = real;
	}
	set_limit(&lp->rl_as, RLIMIT_AS, s->cfg->mem_mb, 1L << 20, 0);
	set_limit(&lp->rl_cpu, RLIMIT_CPU, s->cfg->cpu_s, 1, 5);
	set_limit(&lp->rl_fsize, RLIMIT_FSIZE, s->cfg->fsize_mb, 1L << 20, 0);
	if (prepare_etc(s, lp, err) < 0)
		goto out;
	cgroup_setup(lp, s->cfg->nproc);
	/* Without a cgroup, a shell inside caps the process count once
	 * the user namespace exists (see the top of this file). */
	if (!lp->cg_dir && s->cfg->nproc > 0) {
		struct rlimit np;
		rlim_t n = (rlim_t)s->cfg->nproc;
		if (getrlimit(RLIMIT_NPROC, &np) == 0 &&
		    np.rlim_max != RLIM_INFINITY && np.rlim_max < n)
			n = np.rlim_max; /* ulimit cannot raise it */
		lp->limits_script =
		    xasprintf("ulimit -u %llu || exit 126; exec \"$@\"",
		              (unsigned long long)n);
	}
	if (probe_profiles(s, lp, mpl, err) < 0)
		goto out;
	if (sbx_stage_local(s->cfg, s->workspace, err) < 0)
		goto out;
	lp->ws_fd = open(s->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lp->ws_fd < 0) {
		set_err(err, "workspace %s: %s", s->workspace, strerror(errno));
		goto out;
	}
	lp->chunk = xmalloc(LOCAL_CHUNK);
	free(s->image);
	s->image = xstrdup("host");
	lp->started = 1;
	rc = 0;
out:
	free(mpl);
	return rc;
}

/* ---- exec ---- */

static void close_fd(struct sbx_exec *e, int *fd)
{
	if (*fd < 0)
		return;
	loop_fd_del(e->s->loop, *fd);
	close(*fd);
	*fd = -1;
}

static void unlink_exec(struct sbx_exec *e)
{
	struct local *lp = e->s->priv;
	for (struct sbx_exec **pp = &lp->execs; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			return;
		}
}

/* Deliver on_exit and free e. The last thing that touches e. */
static void finish(struct sbx_exec *e)
{
	struct loop *l = e->s->loop;
	e->finished = 1;
	if (e->timer)
		loop_timer_cancel(l, e->timer);
	if (e->grace)
		loop_timer_cancel(l, e->grace);
	close_fd(e, &e->in_fd);
	close_fd(e, &e->out_fd);
	close_fd(e, &e->err_fd);
	unlink_exec(e);
	struct sbx_exit ex = {.exit_code = -1,
	                      .timed_out = e->timed_out,
	                      .cancelled = e->cancelled,
	                      .duration_ms = now_ms() - e->t0};
	int st = e->status;
	if (e->timed_out || e->cancelled) {
		ex.signal = SIGKILL;
	} else if (WIFSIGNALED(st)) {
		ex.signal = WTERMSIG(st);
	} else if (WIFEXITED(st)) {
		/* bwrap reports a command killed by signal n as 128+n, as
		 * shells do; keep the code and name the likely signal. */
		ex.exit_code = WEXITSTATUS(st);
		if (ex.exit_code > 128 && ex.exit_code < 128 + 32)
			ex.signal = ex.exit_code - 128;
	}
	buf_free(&e->pending);
	struct sbx_exec_obs obs = e->obs;
	free(e);
	if (obs.on_exit)
		obs.on_exit(obs.arg, &ex);
}

static void maybe_finish(struct sbx_exec *e)
{
	if (!e->finished && e->reaped && e->out_fd < 0 && e->err_fd < 0)
		finish(e);
}

static void kill_tree(struct sbx_exec *e)
{
	/* After the reap the pid may belong to someone else. */
	if (e->reaped)
		return;
	kill(-e->pid, SIGKILL);
	kill(e->pid, SIGKILL);
}

/* One read per readiness; EOF closes the stream. */
static void on_output(int fd, int revents, void *arg)
{
	struct sbx_exec *e = arg;
	struct local *lp = e->s->priv;
	enum sbx_stream which = fd == e->out_fd ? SBX_STDOUT : SBX_STDERR;
	ssize_t n = read(fd, lp->chunk, LOCAL_CHUNK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		/* The observer may cancel or even stop the sandbox from
		 * here; e must not be touched after this call. */
		if (e->obs.on_output)
			e->obs.on_output(e->obs.arg, which, lp->chunk,
			                 (size_t)n);
		return;
	}
	close_fd(e, which == SBX_STDOUT ? &e->out_fd : &e->err_fd);
	maybe_finish(e);
}

static void on_grace(void *arg)
{
	struct sbx_exec *e = arg;
	e->grace = 0;
	log_warn("sandbox: output pipes of pid %d still open after exit; "
	         "closing them",
	         (int)e->pid);
	close_fd(e, &e->out_fd);
	close_fd(e, &e->err_fd);
	maybe_finish(e);
}

/* bwrap exited; on_exit waits for both pipes to reach EOF too. */
static void on_reaped(pid_t pid, int status, void *arg)
{
	struct sbx_exec *e = arg;
	(void)pid;
	e->reaped = 1;
	e->status = status;
	if (e->out_fd >= 0 || e->err_fd >= 0)
		e->grace =
		    loop_timer_add(e->s->loop, LOCAL_GRACE_MS, on_grace, e);
	maybe_finish(e);
}

static void on_timeout(void *arg)
{
	struct sbx_exec *e = arg;
	e->timer = 0;
	if (e->finished || e->reaped)
		return;
	e->timed_out = 1;
	kill_tree(e);
}

static void local_cancel(struct sbx_exec *e)
{
	if (!e || e->finished || e->reaped)
		return;
	if (!e->timed_out)
		e->cancelled = 1;
	kill_tree(e);
}

/* Pipes, argv and the spawn for one command. */
static int local_exec_setup(struct sbx_exec *e, const struct sbx_exec_req *r,
                            char **err)
{
	struct local *lp = e->s->priv;
	int out[2] = {-1, -1}, errp[2] = {-1, -1}, in[2] = {-1, -1};
	struct spawn sp = {.lp = lp};
	struct strv a = {0};
	int rc = -1;
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		set_err(err, "sandbox: pipe: %s", strerror(errno));
		goto out;
	}
	if (r->keep_stdin
	        ? pipe2(in, O_CLOEXEC) < 0
	        : (in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		set_err(err, "sandbox: stdin: %s", strerror(errno));
		goto out;
	}
	sp.fd[0] = in[0];
	sp.fd[1] = out[1];
	sp.fd[2] = errp[1];
	build_argv(lp, &a, r);
	sp.argv = a.v;
	e->t0 = now_ms();
	e->pid = spawn_bwrap(&sp, err);
	if (e->pid < 0)
		goto out;
	e->out_fd = out[0];
	e->err_fd = errp[0];
	e->in_fd = in[1];
	out[0] = errp[0] = in[1] = -1;
	fcntl(e->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(e->err_fd, F_SETFL, O_NONBLOCK);
	if (e->in_fd >= 0)
		fcntl(e->in_fd, F_SETFL, O_NONBLOCK);
	rc = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (errp[i] >= 0)
			close(errp[i]);
		if (in[i] >= 0)
			close(in[i]);
	}
	strv_free(&a);
	return rc;
}

static struct sbx_exec *local_exec(struct sbx *s, const struct sbx_exec_req *r,
                                   const struct sbx_exec_obs *obs, char **err)
{
	struct local *lp = s->priv;
	if (!lp || !lp->started || lp->stopped) {
		set_err(err, "sandbox: not running");
		return NULL;
	}
	if (!r->command && (!r->argv || !r->argv[0])) {
		set_err(err, "sandbox: nothing to run");
		return NULL;
	}
	struct sbx_exec *e = xcalloc(1, sizeof *e);
	e->s = s;
	e->obs = *obs;
	e->out_fd = e->err_fd = e->in_fd = -1;
	buf_init(&e->pending, LOCAL_STDIN_MAX);
	if (local_exec_setup(e, r, err) < 0) {
		free(e);
		return NULL;
	}
	e->next = lp->execs;
	lp->execs = e;
	loop_fd_add(s->loop, e->out_fd, POLLIN, on_output, e);
	loop_fd_add(s->loop, e->err_fd, POLLIN, on_output, e);
	loop_child_watch(s->loop, e->pid, on_reaped, e);
	int timeout = r->timeout_s > 0 ? r->timeout_s : s->cfg->timeout_s;
	if (timeout > 0)
		e->timer = loop_timer_add(s->loop, (int64_t)timeout * 1000,
		                          on_timeout, e);
	return e;
}

/* ---- stdin for long-lived commands ---- */

static void flush_stdin(int fd, int revents, void *arg);

/* Write what the pipe takes now; the rest waits for POLLOUT. */
static int push_stdin(struct sbx_exec *e)
{
	while (e->pending.len) {
		ssize_t w = write(e->in_fd, e->pending.data, e->pending.len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			break;
		if (w < 0) {
			buf_reset(&e->pending);
			close_fd(e, &e->in_fd);
			return -1;
		}
		buf_consume(&e->pending, (size_t)w);
	}
	if (e->pending.len)
		loop_fd_add(e->s->loop, e->in_fd, POLLOUT, flush_stdin, e);
	else if (e->close_stdin)
		close_fd(e, &e->in_fd);
	else
		loop_fd_del(e->s->loop, e->in_fd);
	return 0;
}

static void flush_stdin(int fd, int revents, void *arg)
{
	(void)fd, (void)revents;
	push_stdin(arg);
}

/* Queue data for the command's stdin; n == 0 closes stdin once the
 * queue is written (end of input). */
static int local_exec_write(struct sbx_exec *e, const void *data, size_t n)
{
	if (!e || e->finished || e->in_fd < 0 || e->close_stdin)
		return -1;
	if (n == 0) {
		e->close_stdin = 1;
		return push_stdin(e);
	}
	if (buf_append(&e->pending, data, n) < 0)
		return -1;
	return push_stdin(e);
}

/* ---- files: host-side, confined beneath the workspace ---- */

static void local_read_file(struct sbx *s, const char *rel, size_t max,
                            sbx_done_fn fn, void *arg)
{
	struct local *lp = s->priv;
	char *err = NULL;
	struct buf b;
	int rc;
	if (!lp || lp->ws_fd < 0) {
		buf_init(&b, 0);
		rc = set_err(&err, "sandbox: not running");
	} else {
		rc = sbx_host_read(lp->ws_fd, rel, max, &b, &err);
	}
	fn(arg, rc, err, rc < 0 ? NULL : &b, NULL);
	buf_free(&b);
	free(err);
}

static void local_write_file(struct sbx *s, const char *rel, const void *data,
                             size_t n, sbx_done_fn fn, void *arg)
{
	struct local *lp = s->priv;
	char *err = NULL;
	int rc = !lp || lp->ws_fd < 0
	             ? set_err(&err, "sandbox: not running")
	             : sbx_host_write(lp->ws_fd, rel, data, n, &err);
	fn(arg, rc, err, NULL, NULL);
	free(err);
}

static void local_list(struct sbx *s, const char *rel, int recursive,
                       size_t max, sbx_done_fn fn, void *arg)
{
	struct local *lp = s->priv;
	char *err = NULL;
	int truncated = 0;
	cJSON *list = NULL;
	if (!lp || lp->ws_fd < 0)
		set_err(&err, "sandbox: not running");
	else
		list = sbx_host_list(lp->ws_fd, rel, recursive, max, &truncated,
		                     &err);
	if (list && truncated)
		set_err(&err, "listing of %s stopped at %zu entries", rel, max);
	fn(arg, list ? truncated : -1, err, NULL, list);
	cJSON_Delete(list);
	free(err);
}

static int local_fetch(struct sbx *s, const char *rel, const char *dest,
                       char **err)
{
	struct local *lp = s->priv;
	if (!lp || lp->ws_fd < 0)
		return set_err(err, "sandbox: not running");
	return sbx_host_fetch(lp->ws_fd, rel, dest, err);
}

static int local_export_tar(struct sbx *s, const char *path, char **err)
{
	struct local *lp = s->priv;
	if (!lp || lp->ws_fd < 0)
		return set_err(err, "sandbox: not running");
	(void)lp;
	return sbx_spawn_archive(s->workspace, path, err);
}

/* ---- stop ---- */

static void local_stop(struct sbx *s)
{
	struct local *lp = s->priv;
	if (!lp || lp->stopped)
		return;
	lp->stopped = 1;
	while (lp->execs) {
		struct sbx_exec *e = lp->execs;
		if (!e->reaped) {
			if (!e->timed_out)
				e->cancelled = 1;
			kill_tree(e);
			int st = 0;
			while (waitpid(e->pid, &st, 0) < 0 && errno == EINTR)
				;
			loop_child_unwatch(s->loop, e->pid);
			e->reaped = 1;
			e->status = st;
		}
		finish(e); /* closes the pipes, calls on_exit */
	}
	cgroup_remove(lp);
}

static void local_destroy(struct sbx *s)
{
	struct local *lp = s->priv;
	if (!lp)
		return;
	local_stop(s);
	if (lp->ws_fd >= 0)
		close(lp->ws_fd);
	strv_free(&lp->base);
	if (lp->etc_dir && !lp->etc_shared)
		rm_rf(lp->etc_dir);
	free(lp->etc_dir);
	free(lp->limits_script);
	free(lp->bwrap);
	free(lp->chunk);
	free(lp);
	s->priv = NULL;
}

const struct sbx_ops sbx_local_ops = {
    .name = "local",
    .caps = SBX_CAP_HOST_WORKSPACE,
    .start = local_start,
    .exec = local_exec,
    .cancel = local_cancel,
    .exec_write = local_exec_write,
    .read_file = local_read_file,
    .write_file = local_write_file,
    .list = local_list,
    .fetch = local_fetch,
    .export_tar = local_export_tar,
    .import_tar = NULL, /* resume uses its workspace directory */
    .stop = local_stop,
    .destroy = local_destroy,
};
