/* local.c: the `local` sandbox backend: its start, file operations,
 * stop and release (commands: local_exec.c; the command line, the
 * cgroup and the probe: local_probe.c). Every command runs in its own
 * bubblewrap sandbox: new user, mount, PID, network, IPC, UTS and
 * cgroup namespaces, no capabilities, read-only system directories,
 * the workspace read-write at /workspace, a private /tmp, a clean
 * environment, and resource limits. bwrap is spawned in its own
 * process group; killing that group kills bwrap, and with it (through
 * --die-with-parent and the PID namespace) everything the command
 * started. Output streams through the loop as it arrives.
 *
 * Nothing here waits: the start is a chain on the loop, and what can
 * take long (the bwrap probe when its answer is not cached, staging
 * the inputs, a listing of more than a few thousand entries, copies
 * out, the workspace archive) runs as a loop child: bwrap itself, or
 * the assay-archive helper.
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
#include "sandbox/local_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOCAL_DRAIN_MS 10000 /* file operations may finish at stop */
#define LOCAL_CG_TRIES 200   /* the cgroup empties after the reap */
#define LOCAL_CG_RETRY_MS 5
#define LOCAL_LIST_INLINE 2000       /* entries walked in-process at most */
#define LOCAL_PROGRESS_LINES 1000000 /* the archive helper's, at most */
/* Descriptors a local sandbox holds at most: 14. Measured: a scripted
 * session of sample-data/eval/suite.json (python, charts, outputs,
 * check scripts) ran clean under `ulimit -n 27` at -j 1 and not under
 * 26; the eval held 8 before it and the session itself 5 (its run dir's
 * three files, libcurl's socketpair; seen in /proc/PID/fd). */
#define LOCAL_FDS 14

/* The /etc snapshot. Building it costs a few milliseconds of copies
 * and as many to delete, on every run; so it lives in the user's cache
 * under a key of what it was made from, and runs share it (read-only).
 * Without a cache directory it is made in the run dir. */
static int prepare_etc(struct sbx *s, struct local *lp, char **err)
{
	char *base = path_cache_dir("sandbox-etc");
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

/* The inputs mounted instead of copied, with their places in the
 * workspace (mounts.c); bwrap binds them (local_build_base). */
static int local_mounts(struct sbx *s, char **err)
{
	int fd = open(s->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return set_err(err, "workspace %s: %s", s->workspace,
		               strerror(errno));
	int rc = sbx_mounts_prepare(s, fd, err);
	close(fd);
	return rc;
}

/* ---- start ---- */

/* A start in flight: preparations, the probe, the staging. */
struct local_start {
	struct sbx_job job;
	struct sbx *s;
	uint64_t timer;
	struct local_probe *probe;
	struct sbx_child *stage;
	struct buf warn; /* what works less well than configured */
	int stage_inputs;
	char *mpl;
};

/* Free a start cut short (its children killed and reaped). */
static void local_start_free(struct local_start *st)
{
	struct local *lp = st->s->priv;
	if (lp && lp->starting == st)
		lp->starting = NULL;
	if (st->timer)
		loop_timer_cancel(st->s->loop, st->timer);
	local_probe_free(st->probe);
	sbx_child_free(st->stage);
	buf_free(&st->warn);
	free(st->mpl);
	free(st);
}

static void local_start_abort(struct sbx_job *j)
{
	local_start_free((struct local_start *)j);
}

/* The start's end: err (taken) says why it failed, else the sandbox
 * is ready. */
static void local_start_end(struct local_start *st, char *err)
{
	struct local *lp = st->s->priv;
	lp->starting = NULL;
	local_probe_free(st->probe);
	sbx_child_free(st->stage);
	st->probe = NULL;
	st->stage = NULL;
	char *warn = st->warn.len ? xstrdup(buf_str(&st->warn)) : NULL;
	sbx_job_end(&st->job, err ? SBX_FAILED : SBX_OK, err ? err : warn, NULL,
	            NULL);
	/* s may be gone: only st's own memory from here */
	free(warn);
	free(err);
	buf_free(&st->warn);
	free(st->mpl);
	free(st);
}

/* Staged (or nothing to stage): open the workspace and be ready. */
static void local_start_ready(struct local_start *st)
{
	struct sbx *s = st->s;
	struct local *lp = s->priv;
	lp->ws_fd = open(s->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lp->ws_fd < 0) {
		char *err = xasprintf("workspace %s: %s", s->workspace,
		                      strerror(errno));
		local_start_end(st, err);
		return;
	}
	lp->chunk = xmalloc(LOCAL_CHUNK);
	free(s->image);
	s->image = xstrdup("host");
	lp->started = 1;
	/* the archive helper's start, ahead of the first archive step */
	sbx_archive_warm(s->loop);
	local_start_end(st, NULL);
}

/* The staging helper ended: ready, or fail with why. */
static void local_staged(void *arg, struct sbx_child *c)
{
	struct local_start *st = arg;
	sbx_child_log(c, NULL);
	char *err = sbx_child_error(c, "staging the inputs");
	sbx_child_free(c);
	st->stage = NULL;
	if (err)
		local_start_end(st, err);
	else
		local_start_ready(st);
}

/* Copy the inputs in, with `assay-archive stage` (a big input takes
 * as long as a copy does). */
static void local_stage(struct local_start *st)
{
	struct sbx *s = st->s;
	const struct config *cfg = s->cfg;
	struct strv a = {0};
	strv_pushv(&a, 3, "stage", s->workspace,
	           cfg->out_dir ? cfg->out_dir : "");
	for (size_t i = 0; st->stage_inputs && i < cfg->n_inputs; i++) {
		const struct config_input *in = &cfg->inputs[i];
		if (sbx_input_mounted(s, i))
			continue; /* bound, not copied */
		strv_push(&a, in->src ? in->src : "");
		strv_push(&a, in->dest ? in->dest : "");
	}
	if (a.n == 3) {
		strv_free(&a);
		local_start_ready(st);
		return;
	}
	struct sbx_child_spec cs = {
	    .in_fd = -1, .out_fd = -1, .on_exit = local_staged, .arg = st};
	char *err = NULL;
	st->stage = sbx_archive_spawn(s->loop, a.v, 0, &cs, &err);
	strv_free(&a);
	if (!st->stage)
		local_start_end(st, err);
}

/* The probe ended: stage, or fail with why. */
static void local_probed(void *arg, char *err)
{
	struct local_start *st = arg;
	st->probe = NULL;
	if (err)
		local_start_end(st, err);
	else
		local_stage(st);
}

/* The limits, and without a pids cgroup the shell inside that caps
 * the process count once the user namespace exists (see the top). */
static void local_limits(struct sbx *s, struct local *lp, struct buf *warn)
{
	local_set_limit(&lp->rl_as, RLIMIT_AS, s->cfg->mem_mb, 1L << 20, 0);
	local_set_limit(&lp->rl_cpu, RLIMIT_CPU, s->cfg->cpu_s, 1, 5);
	local_set_limit(&lp->rl_fsize, RLIMIT_FSIZE, s->cfg->fsize_mb, 1L << 20,
	                0);
	local_cgroup_setup(lp, s->cfg->nproc, warn);
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
}

/* Find bwrap, prepare the workspace, /etc and limits (each a few
 * milliseconds at most), then probe. */
static void local_start_step(void *arg)
{
	struct local_start *st = arg;
	struct sbx *s = st->s;
	struct local *lp = s->priv;
	char *err = NULL;
	st->timer = 0;
	lp->bwrap = local_find_bwrap();
	if (!lp->bwrap) {
		set_err(&err, "bubblewrap (bwrap) is not installed: "
		              "apt-get install bubblewrap, or use --sandbox "
		              "docker");
		goto fail;
	}
	if (prepare_workspace(s, &err) < 0 || local_mounts(s, &err) < 0)
		goto fail;
	st->mpl = xasprintf("%s/mplconfig", s->run_dir);
	if (mkdir_p(st->mpl, &err) < 0)
		goto fail;
	char *real = realpath(st->mpl, NULL);
	if (real) {
		free(st->mpl);
		st->mpl = real;
	}
	if (prepare_etc(s, lp, &err) < 0)
		goto fail;
	local_limits(s, lp, &st->warn);
	st->probe =
	    local_probe_start(s, lp, st->mpl, &st->warn, local_probed, st);
	if (!st->probe)
		local_stage(st); /* the probe cache knew */
	return;
fail:
	local_start_end(st, err);
}

/* sbx_start: the start runs from the loop (local_start_step). */
static void local_start(struct sbx *s, int stage_inputs, sbx_done_fn fn,
                        void *arg)
{
	if (s->priv) {
		sbx_later(s, fn, arg, SBX_FAILED,
		          xstrdup("sandbox: already started"), NULL, NULL);
		return;
	}
	struct local *lp = xcalloc(1, sizeof *lp);
	lp->ws_fd = -1;
	lp->cg_join_fd = lp->cg_dir_fd = -1;
	s->priv = lp;
	struct local_start *st = xcalloc(1, sizeof *st);
	st->s = s;
	st->stage_inputs = stage_inputs;
	buf_init(&st->warn, 0);
	lp->starting = st;
	sbx_job_begin(s, &st->job, "the start", 0, fn, arg, local_start_abort);
	st->timer = loop_timer_add(s->loop, 0, local_start_step, st);
}

/* ---- files: small ones in-process, the rest in the helper ---- */

/* The workspace fd, or -1 (and fn hears "not running"). */
static int local_ws(struct sbx *s, sbx_done_fn fn, void *arg)
{
	struct local *lp = s->priv;
	if (lp && lp->ws_fd >= 0 && lp->started && !lp->stopped)
		return lp->ws_fd;
	sbx_later(s, fn, arg, SBX_FAILED, xstrdup("sandbox: not running"), NULL,
	          NULL);
	return -1;
}

/* A bounded read, in-process (max bytes at most). */
static void local_read_file(struct sbx *s, const char *rel, size_t max,
                            sbx_done_fn fn, void *arg)
{
	int fd = local_ws(s, fn, arg);
	if (fd < 0)
		return;
	char *err = NULL;
	struct buf b;
	int rc = sbx_host_read(fd, &s->mounts, rel, max, &b,
	                       &err); /* bounded by max */
	sbx_later(s, fn, arg, rc, err, rc < 0 ? NULL : &b, NULL);
	buf_free(&b);
}

/* A write of the caller's bytes, in-process. */
static void local_write_file(struct sbx *s, const char *rel, const void *data,
                             size_t n, sbx_done_fn fn, void *arg)
{
	int fd = local_ws(s, fn, arg);
	if (fd < 0)
		return;
	char *err = NULL;
	int rc = sbx_host_write(fd, &s->mounts, rel, data, n,
	                        &err); /* n is the caller's */
	sbx_later(s, fn, arg, rc < 0 ? SBX_FAILED : SBX_OK, err, NULL, NULL);
}

/* An operation run by the assay-archive helper: list, fetch, export. */
struct local_op {
	struct sbx_job job;
	struct sbx_child *child;
	char *rel;
	size_t max;
	char *tmp_base; /* export: path, whose temporary the helper names */
	int64_t t0;     /* export: when it began (progress) */
	struct sbx_listing listing; /* list: the entries so far */
};

/* Free op (its helper killed and reaped if still there). */
static void local_op_free(struct local_op *op)
{
	sbx_child_free(op->child);
	free(op->rel);
	free(op->tmp_base);
	sbx_listing_free(&op->listing);
	free(op);
}

/* Cut short: a helper killed mid-archive leaves its temporary file. */
static void local_op_abort(struct sbx_job *j)
{
	struct local_op *op = (struct local_op *)j;
	if (op->tmp_base && op->child) {
		char *tmp = xasprintf("%s.tmp.%d", op->tmp_base,
		                      (int)sbx_child_pid(op->child));
		sbx_child_free(op->child);
		op->child = NULL;
		unlink(tmp);
		free(tmp);
	}
	local_op_free(op);
}

/* Run `assay-archive ARGS...` for op; on_exit decides. 0, or -1 when
 * it could not start (op's caller told, op freed). */
static int local_op_run(struct sbx *s, struct local_op *op, char *const *args,
                        void (*on_out)(void *, const char *, size_t),
                        void (*on_exit)(void *, struct sbx_child *))
{
	struct sbx_child_spec cs = {.in_fd = -1,
	                            .out_fd = on_out ? SBX_CHILD_PIPE : -1,
	                            .on_out = on_out,
	                            .on_exit = on_exit,
	                            .arg = op};
	char *err = NULL;
	struct strv a = {0};
	strv_push(&a, args[0]);
	if (s->mounts_json) /* the helper maps and skips them too */
		strv_pushv(&a, 2, "--mounts", s->mounts_json);
	for (size_t i = 1; args[i]; i++)
		strv_push(&a, args[i]);
	op->child = sbx_archive_spawn(s->loop, a.v, 0, &cs, &err);
	strv_free(&a);
	if (op->child)
		return 0;
	sbx_job_end(&op->job, SBX_FAILED, err, NULL, NULL);
	free(err);
	local_op_free(op);
	return -1;
}

static struct local_op *local_op_new(struct sbx *s, const char *what, int drain,
                                     sbx_done_fn fn, void *arg)
{
	struct local_op *op = xcalloc(1, sizeof *op);
	sbx_job_begin(s, &op->job, what, drain, fn, arg, local_op_abort);
	return op;
}

/* The helper's stdout as it comes: a JSON entry a line. */
static void local_list_out(void *arg, const char *data, size_t n)
{
	struct local_op *op = arg;
	if (sbx_listing_feed(&op->listing, data, n) < 0)
		sbx_child_kill(op->child);
}

/* The listing helper ended: the entries, whole or cut, or why not. */
static void local_list_done(void *arg, struct sbx_child *c)
{
	struct local_op *op = arg;
	int code = sbx_child_code(c);
	char *err = NULL;
	int rc = SBX_FAILED;
	if (op->listing.bad)
		err = xasprintf("listing of %s: the helper's answer is not a "
		                "listing of at most %zu entries",
		                op->rel, op->max);
	else if (code == 0 || code == 3)
		rc = code ? SBX_TRUNCATED : SBX_OK;
	if (!op->listing.bad && rc != SBX_OK)
		err = sbx_child_error(c, "listing");
	if (rc == SBX_TRUNCATED && !err)
		err = xasprintf("listing of %s stopped at %zu entries", op->rel,
		                op->max);
	sbx_child_free(c);
	op->child = NULL;
	sbx_job_end(&op->job, rc, err, NULL, rc < 0 ? NULL : op->listing.list);
	free(err);
	local_op_free(op);
}

/* The listing: a small one here, a big one (up to 100,000 entries) by
 * `assay-archive list`. */
static void local_list(struct sbx *s, const char *rel, int recursive,
                       size_t max, sbx_done_fn fn, void *arg)
{
	int fd = local_ws(s, fn, arg);
	if (fd < 0)
		return;
	/* A small tree is walked here (a few ms); a bigger one again in
	 * the helper, whose walk is the same. */
	size_t inline_max = max < LOCAL_LIST_INLINE ? max : LOCAL_LIST_INLINE;
	int truncated = 0;
	char *err = NULL;
	cJSON *list = sbx_host_list(fd, &s->mounts, rel, recursive, inline_max,
	                            &truncated, NULL, NULL, &err);
	if (!list || !truncated || max <= LOCAL_LIST_INLINE) {
		if (list && truncated)
			set_err(&err, "listing of %s stopped at %zu entries",
			        rel, max);
		sbx_later(s, fn, arg,
		          !list       ? SBX_FAILED
		          : truncated ? SBX_TRUNCATED
		                      : SBX_OK,
		          err, NULL, list);
		return;
	}
	cJSON_Delete(list);
	free(err);
	struct local_op *op = local_op_new(s, "the listing", 1, fn, arg);
	op->rel = xstrdup(rel);
	op->max = max;
	sbx_listing_init(&op->listing, max);
	char num[32];
	snprintf(num, sizeof num, "%zu", max);
	char *args[] = {"list",      s->workspace,
	                (char *)rel, recursive ? "1" : "0",
	                num,         NULL};
	local_op_run(s, op, args, local_list_out, local_list_done);
}

/* fetch and export: the helper's exit says it all. */
static void local_op_done(void *arg, struct sbx_child *c)
{
	struct local_op *op = arg;
	int code = sbx_child_code(c);
	int rc = code == 0                   ? SBX_OK
	         : code == 3 && op->tmp_base ? SBX_TRUNCATED
	                                     : SBX_FAILED;
	char *err = rc == SBX_OK ? NULL : sbx_child_error(c, "archive");
	if (rc == SBX_OK)
		sbx_child_log(c, "archive");
	else
		sbx_progress_cut(op->job.s, &op->listing, "saving");
	sbx_child_free(c);
	op->child = NULL;
	sbx_job_end(&op->job, rc, err, NULL, NULL);
	free(err);
	local_op_free(op);
}

/* A copy out of the workspace, by `assay-archive fetch`. */
static void local_fetch(struct sbx *s, const char *rel, const char *dest,
                        sbx_done_fn fn, void *arg)
{
	if (local_ws(s, fn, arg) < 0)
		return;
	struct local_op *op = local_op_new(s, "the copy", 1, fn, arg);
	char *args[] = {"fetch", s->workspace, (char *)rel, (char *)dest, NULL};
	local_op_run(s, op, args, NULL, local_op_done);
}

/* The archive helper's progress lines, to sbx_set_progress's hook. */
static void local_export_out(void *arg, const char *data, size_t n)
{
	struct local_op *op = arg;
	sbx_progress_feed(op->job.s, &op->listing, "saving", op->t0, data, n);
}

/* The archive, by `assay-archive create` (a big tree takes seconds). */
static void local_export_tar(struct sbx *s, const char *path, sbx_done_fn fn,
                             void *arg)
{
	if (local_ws(s, fn, arg) < 0)
		return;
	struct local_op *op = local_op_new(s, "the archive", 0, fn, arg);
	op->tmp_base = xstrdup(path);
	op->t0 = now_ms();
	sbx_listing_init(&op->listing, LOCAL_PROGRESS_LINES);
	char *args[] = {"create", (char *)path, s->workspace, NULL};
	local_op_run(s, op, args, local_export_out, local_op_done);
}

/* ---- stop ---- */

/* Retry removing the cgroup until its processes have left. */
static void local_cg_retry(void *arg)
{
	struct sbx *s = arg;
	struct local *lp = s->priv;
	lp->stop_timer = 0;
	if (local_cgroup_remove_try(lp) && ++lp->cg_tries < LOCAL_CG_TRIES) {
		lp->stop_timer = loop_timer_add(s->loop, LOCAL_CG_RETRY_MS,
		                                local_cg_retry, s);
		return;
	}
	lp->stop_phase = 3;
	sbx_mounts_release(s); /* no command holds a mount now */
	sbx_stopped(s, SBX_OK, NULL);
}

void local_execs_gone(struct sbx *s)
{
	struct local *lp = s->priv;
	if (lp->stop_phase == 1 && !lp->stop_timer) {
		lp->stop_phase = 2;
		lp->stop_timer = loop_timer_add(s->loop, 0, local_cg_retry, s);
	}
}

/* The file operations are done: wait for the killed commands. */
static void local_drained(struct sbx *s)
{
	struct local *lp = s->priv;
	lp->stop_phase = 1;
	if (!lp->execs)
		local_execs_gone(s);
}

/* sbx_stop: commands killed now, file operations drain. */
static void local_stop(struct sbx *s)
{
	struct local *lp = s->priv;
	if (!lp) {
		sbx_stopped(s, SBX_OK, NULL);
		return;
	}
	lp->stopped = 1;
	local_kill_all(s);
	sbx_drain(s, LOCAL_DRAIN_MS, local_drained);
}

/* sbx_free: kill and reap everything now, remove the cgroup. */
static void local_destroy(struct sbx *s)
{
	struct local *lp = s->priv;
	if (!lp)
		return;
	lp->stopped = 1;
	lp->stop_phase = 3;
	if (lp->stop_timer)
		loop_timer_cancel(s->loop, lp->stop_timer);
	lp->stop_timer = 0;
	local_reap_all(s);
	sbx_archive_spare_drop(s->loop);
	for (int i = 0; local_cgroup_remove_try(lp) && i < LOCAL_CG_TRIES; i++)
		usleep(LOCAL_CG_RETRY_MS * 1000);
	if (lp->ws_fd >= 0)
		close(lp->ws_fd);
	strv_free(&lp->base);
	if (lp->etc_dir && !lp->etc_shared)
		rm_rf(lp->etc_dir);
	free(lp->etc_dir);
	free(lp->limits_script);
	free(lp->bwrap);
	free(lp->chunk);
	free(lp->cg_dir);
	free(lp);
	s->priv = NULL;
}

const struct sbx_ops sbx_local_ops = {
    .name = "local",
    .caps = SBX_CAP_HOST_WORKSPACE,
    .fds = LOCAL_FDS,
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
    .probe = local_doctor,
};
