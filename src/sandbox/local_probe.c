/* local_probe.c: the local backend's command line and what it depends
 * on: finding bwrap, the options every command runs under, the pids
 * cgroup that caps processes when assay runs as root, and the probe
 * that finds which options this bwrap and kernel accept. The probe is
 * a whole bwrap start, so its answer is kept per boot in the user's
 * cache, and when it must run it runs as loop children. */
#include "assay/config.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/path.h"
#include "assay/util.h"
#include "sandbox/local_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOCAL_PROBE_MS 10000 /* the start-up probe */

/* Top-level directories that are either merged-/usr links or real
 * directories (older layouts). */
static const char *const usr_links[] = {"bin",   "sbin",  "lib",
                                        "lib32", "lib64", "libx32"};

/* ---- building the bwrap command line ---- */

char *local_find_bwrap(void)
{
	const char *env = getenv("ASSAY_BWRAP");
	if (env && *env)
		return access(env, X_OK) == 0 ? xstrdup(env) : NULL;
	char *found = spawn_which("bwrap");
	if (!found && access("/usr/bin/bwrap", X_OK) == 0)
		found = xstrdup("/usr/bin/bwrap");
	return found;
}

/* Bind /etc/name from the host when it is a directory. */
static void local_add_etc_bind(struct strv *a, const char *name)
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
		local_add_etc_bind(a, sbx_etc_binds[i]);
	for (size_t i = 0; network && sbx_etc_net_binds[i]; i++)
		local_add_etc_bind(a, sbx_etc_net_binds[i]);
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
void local_build_base(struct sbx *s, struct local *lp, const char *mpl)
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
	/* the inputs, read-only over their placeholders (mounts.c); what
	 * a directory input must not show is covered by an empty,
	 * read-only tmpfs */
	for (size_t i = 0; i < s->mounts.n; i++) {
		const struct path_mount *m = &s->mounts.v[i];
		char *at = xasprintf("/workspace/%s", m->rel);
		strv_pushv(a, 3, "--ro-bind", m->src, at);
		for (size_t k = 0; k < m->hide.n; k++) {
			char *h = xasprintf("%s/%s", at, m->hide.v[k]);
			strv_pushv(a, 4, "--tmpfs", h, "--remount-ro", h);
			free(h);
		}
		free(at);
	}
	/* Once every mount point exists: only /workspace, /tmp, /dev/shm
	 * and the matplotlib cache stay writable. */
	strv_pushv(a, 4, "--remount-ro", "/dev", "--remount-ro", "/");
	strv_pushv(a, 2, "--chdir", "/workspace");
	add_env(a);
}

/* The full argv for one command: the base options, then (without a
 * pids cgroup) the in-sandbox wrapper that caps the process count. */
void local_build_argv(const struct local *lp, struct strv *a,
                      const struct sbx_exec_req *r, int info)
{
	strv_copy(a, &lp->base);
	if (info)
		strv_pushv(a, 2, "--info-fd", "3");
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

void local_set_limit(struct rlimit *rl, int res, long value, long mul,
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

/* Remove the empty cgroups of assays that are gone. */
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

/* Write text to an existing file: 0 or -1. */
static int cgroup_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Whether the v2 root hands the pids controller to its children. */
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
void local_cgroup_setup(struct local *lp, long nproc, struct buf *warn)
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
		buf_printf(warn,
		           "%ssandbox: running as root without a writable "
		           "pids cgroup: the process limit (%ld) is not "
		           "enforced (the kernel exempts root from "
		           "RLIMIT_NPROC)",
		           warn->len ? "; " : "", nproc);
		return;
	}
	cgroup_sweep(root);
	char *dir = xasprintf("%s/assay-%d-%u", root, (int)getpid(), ++seq);
	char *max = xasprintf("%s/pids.max", dir);
	char *path = xasprintf("%s/%s", dir, join);
	char value[32];
	snprintf(value, sizeof value, "%ld", nproc);
	int fd = -1;
	if (mkdir(dir, 0755) < 0 || cgroup_write(max, value) < 0 ||
	    (fd = open(path, O_WRONLY | O_CLOEXEC)) < 0) {
		log_warn("sandbox: cannot set up pids cgroup %s: %s; the "
		         "process limit is not enforced",
		         dir, strerror(errno));
		buf_printf(warn,
		           "%ssandbox: cannot set up pids cgroup %s: %s; the "
		           "process limit is not enforced",
		           warn->len ? "; " : "", dir, strerror(errno));
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

int local_cgroup_remove_try(struct local *lp)
{
	if (lp->cg_join_fd >= 0)
		close(lp->cg_join_fd);
	if (lp->cg_dir_fd >= 0)
		close(lp->cg_dir_fd);
	lp->cg_join_fd = lp->cg_dir_fd = -1;
	if (!lp->cg_dir)
		return 0;
	/* The PID namespace empties asynchronously after bwrap is reaped. */
	if (rmdir(lp->cg_dir) < 0 && errno == EBUSY)
		return 1;
	free(lp->cg_dir);
	lp->cg_dir = NULL;
	return 0;
}

/* ---- the probe ---- */

/* Whether bwrap's complaint is about namespaces (the host forbids
 * them) rather than about bwrap itself. */
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
	local_build_argv(lp, &a, &r, 0);
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
	char *path = path_cache_dir("bwrap-probe");
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

/* Remember the profile that worked under key. */
static void probe_remember(const struct local *lp, const char *key)
{
	char *path = path_cache_dir("bwrap-probe");
	char *dir = path_cache_dir("");
	if (path && dir && key) {
		char *text = xasprintf("%s\nprofile=%d,%d\n", key,
		                       lp->use_userns, lp->disable_userns);
		if (mkdir_p(dir, NULL) == 0)
			write_file_replace(path, text, strlen(text), NULL);
		free(text);
	}
	free(dir);
	free(path);
}

/* Profiles tried in order: the full set first, then without
 * --disable-userns (bwrap < 0.8), then (root only) without a user
 * namespace at all. */
static const int probe_profiles[][2] = {{1, 1}, {1, 0}, {0, 0}};

struct local_probe {
	struct sbx *s;
	struct local *lp;
	char *mpl;
	struct buf *warn;
	void (*done)(void *arg, char *err);
	void *arg;
	char *key;
	char *first; /* why the first profile failed */
	size_t i;    /* the profile being tried */
	int64_t t0;
	uint64_t timer;
	struct sbx_child *child;
};

static void probe_try(struct local_probe *p);

void local_probe_free(struct local_probe *p)
{
	if (!p)
		return;
	if (p->timer)
		loop_timer_cancel(p->s->loop, p->timer);
	sbx_child_free(p->child);
	free(p->mpl);
	free(p->key);
	free(p->first);
	free(p);
}

/* The probe's end: done(arg, err) with the probe already freed. */
static void probe_end(struct local_probe *p, char *err)
{
	void (*done)(void *, char *) = p->done;
	void *arg = p->arg;
	p->child = NULL;
	local_probe_free(p);
	done(arg, err);
}

/* Every profile failed: say why in terms of what to do. */
static void probe_fail(struct local_probe *p)
{
	const char *first = p->first ? p->first : "no profile could be tried";
	char *err = NULL;
	if (strstr(first, "Can't mount proc"))
		/* namespaces work, but /proc is masked: a Docker container */
		set_err(
		    &err,
		    "local sandbox: bubblewrap cannot mount /proc (%s): "
		    "inside a Docker container, run it with --security-opt "
		    "systempaths=unconfined (or --privileged), or run assay "
		    "outside it, or use --sandbox docker",
		    first);
	else if (looks_like_userns(first))
		set_err(&err,
		        "local sandbox: bubblewrap cannot create namespaces "
		        "(%s): enable unprivileged user namespaces (sysctl "
		        "kernel.unprivileged_userns_clone=1 / "
		        "user.max_user_namespaces), or run assay outside this "
		        "container, or use --sandbox docker",
		        first);
	else
		set_err(
		    &err,
		    "local sandbox: bubblewrap cannot start a sandbox (%s): "
		    "check the bubblewrap installation or use --sandbox "
		    "docker",
		    first);
	probe_end(p, err);
}

/* The profile being tried works: remember it. */
static void probe_ok(struct local_probe *p)
{
	struct local *lp = p->lp;
	log_info("sandbox: bwrap probe ok in %lld ms (userns %d, "
	         "disable-userns %d)",
	         (long long)(now_ms() - p->t0), lp->use_userns,
	         lp->disable_userns);
	log_command(lp);
	probe_remember(lp, p->key);
	if (!lp->use_userns) {
		log_warn("sandbox: no user namespace; running as root without "
		         "capabilities");
		buf_printf(p->warn,
		           "%ssandbox: no user namespace; running as root "
		           "without capabilities",
		           p->warn->len ? "; " : "");
	}
	probe_end(p, NULL);
}

/* This profile failed (why taken): keep the first reason, try the
 * next. */
static void probe_failed(struct local_probe *p, char *why)
{
	log_info("sandbox: bwrap probe failed: %s", why);
	if (!p->first)
		p->first = why;
	else
		free(why);
	p->i++;
	probe_try(p);
}

/* The probe's sandbox ended: what it wrote on stderr says why it
 * failed, if it did. */
static void probe_exited(void *arg, struct sbx_child *c)
{
	struct local_probe *p = arg;
	if (sbx_child_ok(c)) {
		sbx_child_free(c);
		p->child = NULL;
		probe_ok(p);
		return;
	}
	struct buf b;
	buf_init(&b, 0);
	const struct buf *e = sbx_child_stderr(c);
	buf_append(&b, e->data ? e->data : "", e->len);
	if (sbx_child_timed_out(c))
		buf_puts(&b, "timed out");
	while (b.len && b.data[b.len - 1] == '\n')
		b.data[--b.len] = '\0';
	char *why = xstrdup(b.len ? buf_str(&b) : "exit status nonzero");
	buf_free(&b);
	sbx_child_free(c);
	p->child = NULL;
	probe_failed(p, why);
}

/* Start bwrap with the current profile and `true`, as a loop child. */
static int probe_spawn(struct local_probe *p, char **err)
{
	struct sbx_exec_req r = {.argv = (const char *const[]){"true", NULL}};
	const struct spawn_io io[3] = {
	    {SPAWN_NULL, -1}, {SPAWN_NULL, -1}, {SPAWN_PIPE, -1}};
	struct spawn_proc sp;
	struct strv a = {0};
	local_build_argv(p->lp, &a, &r, 0);
	p->t0 = now_ms();
	pid_t pid = local_spawn_bwrap(p->lp, a.v, io, NULL, &sp, err);
	strv_free(&a);
	if (pid < 0)
		return -1;
	struct sbx_child_spec cs = {
	    .timeout_ms = LOCAL_PROBE_MS, .on_exit = probe_exited, .arg = p};
	p->child = sbx_child_adopt(p->s->loop, pid, sp.fd[2], 1, &cs);
	return 0;
}

/* Try the next profile there is, or give up. */
static void probe_try(struct local_probe *p)
{
	struct local *lp = p->lp;
	size_t n = sizeof probe_profiles / sizeof *probe_profiles;
	if (p->i >= n || (!probe_profiles[p->i][0] && geteuid() != 0)) {
		probe_fail(p);
		return;
	}
	lp->use_userns = probe_profiles[p->i][0];
	lp->disable_userns = probe_profiles[p->i][1];
	local_build_base(p->s, lp, p->mpl);
	char *why = NULL;
	if (probe_spawn(p, &why) < 0)
		probe_failed(p, why);
}

static void probe_begin(void *arg)
{
	struct local_probe *p = arg;
	p->timer = 0;
	probe_try(p);
}

struct local_probe *local_probe_start(struct sbx *s, struct local *lp,
                                      const char *mpl, struct buf *warn,
                                      void (*done)(void *arg, char *err),
                                      void *arg)
{
	char *key = probe_cache_key(lp);
	if (probe_cached(lp, key) == 0) {
		local_build_base(s, lp, mpl);
		log_info("sandbox: bwrap profile from the probe cache "
		         "(userns %d, disable-userns %d)",
		         lp->use_userns, lp->disable_userns);
		log_command(lp);
		free(key);
		return NULL;
	}
	struct local_probe *p = xcalloc(1, sizeof *p);
	p->s = s;
	p->lp = lp;
	p->mpl = xstrdup(mpl);
	p->warn = warn;
	p->done = done;
	p->arg = arg;
	p->key = key;
	p->timer = loop_timer_add(s->loop, 0, probe_begin, p);
	return p;
}
