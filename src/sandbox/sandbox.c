/* sandbox.c: picks the sandbox backend named by the configuration, owns
 * the parts of struct sbx every backend shares, and wraps the ops in
 * the sbx_* functions callers use. It also keeps the operations in
 * flight (jobs): how a result known at once is delivered from the loop
 * (sbx_later), how a stop lets file operations finish and cuts the
 * rest short (sbx_drain), and how sbx_free ends them all; it refuses
 * file operations while a backend is not ready (ops->ready), and runs
 * the backends' probes for `assay doctor` (sbx_probe). The backends
 * live in files of their own (local.c, docker.c, opensandbox.c and
 * theirs), listed once in backends[]. */
#include "assay/sandbox.h"
#include "assay/config.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/internal.h"

#include <stdlib.h>
#include <string.h>

/* Backends that exist; adding one means adding its ops here (and its
 * files in src/sandbox/): nothing outside this folder names one. */
static const struct sbx_ops *const backends[] = {
    &sbx_local_ops, &sbx_docker_ops, &sbx_opensandbox_ops};

/* A caller of sbx_stop waiting for the end of the stop. */
struct sbx_stop_wait {
	struct sbx_stop_wait *next;
	sbx_done_fn fn;
	void *arg;
};

static void sbx_release(struct sbx *s);

/* The backend named name, or NULL. */
static const struct sbx_ops *backend(const char *name)
{
	for (size_t i = 0; i < sizeof backends / sizeof *backends; i++)
		if (name && !strcmp(backends[i]->name, name))
			return backends[i];
	return NULL;
}

/* The names of the backends with every cap of caps, for messages:
 * "a, b or c", or joined by sep when it is given ("a|b|c"). */
static char *names_with(unsigned caps, const char *sep)
{
	struct buf b;
	buf_init(&b, 0);
	size_t n = 0, total = 0;
	for (size_t i = 0; i < sizeof backends / sizeof *backends; i++)
		if ((backends[i]->caps & caps) == caps)
			total++;
	for (size_t i = 0; i < sizeof backends / sizeof *backends; i++) {
		if ((backends[i]->caps & caps) != caps)
			continue;
		if (n)
			buf_puts(&b, sep              ? sep
			             : n + 1 == total ? " or "
			                              : ", ");
		buf_puts(&b, backends[i]->name);
		n++;
	}
	buf_append(&b, "", 1);
	return buf_detach(&b);
}

int sbx_backend_exists(const char *name)
{
	return backend(name) != NULL;
}

char *sbx_backend_names(const char *sep)
{
	return names_with(0, sep);
}

struct sbx *sbx_new(const struct config *cfg, struct loop *l,
                    const char *run_dir, char **err)
{
	const char *name =
	    cfg->sandbox && *cfg->sandbox ? cfg->sandbox : "local";
	const struct sbx_ops *ops = backend(name);
	if (!ops) {
		char *names = sbx_backend_names(NULL);
		set_err(err, "unknown sandbox '%s': use --sandbox %s", name,
		        names);
		free(names);
		return NULL;
	}
	if (!run_dir || !*run_dir) {
		set_err(err, "sandbox: no run directory given");
		return NULL;
	}
	if (cfg->net_allow.n && !(ops->caps & SBX_CAP_NET_ALLOW)) {
		char *names = names_with(SBX_CAP_NET_ALLOW, NULL);
		set_err(err,
		        "sandbox '%s' cannot honour \"network\": {\"allow\": "
		        "[...]} yet (only --sandbox %s turns it into egress "
		        "rules): use --network for the whole network, or drop "
		        "the allowlist",
		        name, names);
		free(names);
		return NULL;
	}
	struct sbx *s = xcalloc(1, sizeof *s);
	s->ops = ops;
	s->loop = l;
	s->cfg = cfg;
	s->run_dir = xstrdup(run_dir);
	return s;
}

void sbx_config_inherit(struct config *dst, const struct config *src)
{
	config_set(&dst->sandbox, src->sandbox);
	config_set(&dst->image, src->image);
	const struct sbx_ops *o =
	    backend(src->sandbox && *src->sandbox ? src->sandbox : "local");
	if (o && o->config_copy)
		o->config_copy(dst, src);
}

void sbx_probe(const struct config *cfg, long timeout_ms, struct sbx_probe *p)
{
	memset(p, 0, sizeof *p);
	const struct sbx_ops *chosen =
	    backend(cfg->sandbox && *cfg->sandbox ? cfg->sandbox : "local");
	for (size_t i = 0; i < sizeof backends / sizeof *backends; i++) {
		const struct sbx_ops *o = backends[i];
		if (o->probe && (o == chosen || !o->probe_chosen_only))
			o->probe(cfg, o == chosen, timeout_ms, p);
	}
}

/* ---- jobs ---- */

/* Take j off the sandbox's list of jobs. */
static void job_unlink(struct sbx_job *j)
{
	for (struct sbx_job **pp = &j->s->jobs; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	j->next = NULL;
}

void sbx_job_begin(struct sbx *s, struct sbx_job *j, const char *what,
                   int drain, sbx_done_fn fn, void *arg,
                   void (*abort)(struct sbx_job *j))
{
	j->s = s;
	j->what = what;
	j->drain = drain;
	j->taken = 0;
	j->fn = fn;
	j->arg = arg;
	j->abort = abort;
	j->next = s->jobs;
	s->jobs = j;
}

/* After a completion sandbox.c delivered: release a sandbox freed from
 * inside it. 1 when s is gone. */
static int sbx_settle(struct sbx *s)
{
	if (s->depth || !s->free_pending || s->releasing)
		return 0;
	sbx_release(s);
	return 1;
}

static void drain_run(void *arg);
static void drain_timeout(void *arg);

/* A job ended: a stop waiting for the last one goes on. */
static void drain_poke(struct sbx *s)
{
	if (s->drain_then && s->drain_cut && !s->jobs && !s->drain_fire)
		s->drain_fire = loop_timer_add(s->loop, 0, drain_run, s);
}

void sbx_job_end(struct sbx_job *j, int rc, const char *err, struct buf *data,
                 cJSON *list)
{
	struct sbx *s = j->s;
	job_unlink(j);
	s->listed_at = j->taken;
	s->depth++;
	if (j->fn)
		j->fn(j->arg, rc, err, data, list);
	s->depth--;
	if (!sbx_settle(s))
		drain_poke(s);
}

/* End j early: abort what it runs, then tell its caller why. 1 when the
 * caller freed the sandbox from there. */
static int job_cut(struct sbx *s, struct sbx_job *j, const char *how)
{
	sbx_done_fn fn = j->fn;
	void *arg = j->arg;
	char *why = xasprintf("sandbox: %s before %s finished", how,
	                      j->what ? j->what : "the operation");
	job_unlink(j);
	j->abort(j);
	s->listed_at = 0;
	s->depth++;
	if (fn)
		fn(arg, SBX_FAILED, why, NULL, NULL);
	s->depth--;
	free(why);
	return sbx_settle(s);
}

/* Cut every job (all) or those that do not drain. 1 when s is gone. */
static int cut_jobs(struct sbx *s, int all)
{
	for (;;) {
		struct sbx_job *j = s->jobs;
		while (j && !all && j->drain)
			j = j->next;
		if (!j)
			return 0;
		if (job_cut(s, j, "stopped"))
			return 1;
	}
}

void sbx_hold(struct sbx *s)
{
	s->depth++;
}

int sbx_unhold(struct sbx *s)
{
	s->depth--;
	return sbx_settle(s);
}

/* ---- results known at once ---- */

struct sbx_later {
	struct sbx_job job;
	uint64_t timer;
	int rc;
	char *err;
	struct buf data;
	int has_data;
	cJSON *list;
};

static void later_free(struct sbx_later *l)
{
	free(l->err);
	buf_free(&l->data);
	cJSON_Delete(l->list);
	free(l);
}

/* From the loop: deliver the result, then free it. */
static void later_fire(void *arg)
{
	struct sbx_later *l = arg;
	l->timer = 0;
	sbx_job_end(&l->job, l->rc, l->err, l->has_data ? &l->data : NULL,
	            l->list);
	later_free(l);
}

static void later_abort(struct sbx_job *j)
{
	struct sbx_later *l = (struct sbx_later *)j;
	if (l->timer)
		loop_timer_cancel(j->s->loop, l->timer);
	later_free(l);
}

/* sbx_later's job, queued (NULL when the sandbox is being released:
 * the result is dropped). */
static struct sbx_later *later_queue(struct sbx *s, sbx_done_fn fn, void *arg,
                                     int rc, char *err, struct buf *data,
                                     cJSON *list)
{
	struct sbx_later *l = xcalloc(1, sizeof *l);
	l->rc = rc;
	l->err = err;
	l->list = list;
	buf_init(&l->data, 0);
	if (data) {
		l->data = *data; /* moved: the caller's is left empty */
		buf_init(data, 0);
		l->has_data = 1;
	}
	if (s->releasing) {
		log_warn("sandbox: a result after the release was dropped");
		later_free(l);
		return NULL;
	}
	sbx_job_begin(s, &l->job, "the operation", 1, fn, arg, later_abort);
	l->timer = loop_timer_add(s->loop, 0, later_fire, l);
	return l;
}

void sbx_later(struct sbx *s, sbx_done_fn fn, void *arg, int rc, char *err,
               struct buf *data, cJSON *list)
{
	later_queue(s, fn, arg, rc, err, data, list);
}

void sbx_later_listing(struct sbx *s, sbx_done_fn fn, void *arg, int rc,
                       char *err, cJSON *list, double taken)
{
	struct sbx_later *l = later_queue(s, fn, arg, rc, err, NULL, list);
	if (l)
		l->job.taken = taken;
}

/* ---- stopping ---- */

/* The drain is over: the backend goes on with its stop. */
static void drain_finish(struct sbx *s)
{
	void (*then)(struct sbx *) = s->drain_then;
	if (s->drain_timer)
		loop_timer_cancel(s->loop, s->drain_timer);
	s->drain_timer = 0;
	s->drain_then = NULL;
	if (then)
		then(s);
}

/* From the loop: cut what does not drain, then wait for the rest. */
static void drain_run(void *arg)
{
	struct sbx *s = arg;
	s->drain_fire = 0;
	if (!s->drain_cut) {
		s->drain_cut = 1;
		if (cut_jobs(s, 0))
			return;
		if (s->jobs) {
			s->drain_timer = loop_timer_add(s->loop, s->drain_ms,
			                                drain_timeout, s);
			return;
		}
	}
	if (!s->jobs)
		drain_finish(s);
}

/* The drain took too long: cut what is left. */
static void drain_timeout(void *arg)
{
	struct sbx *s = arg;
	s->drain_timer = 0;
	log_warn("sandbox: file operations still running %lld ms into the "
	         "stop: cut short",
	         (long long)s->drain_ms);
	if (cut_jobs(s, 1))
		return;
	drain_finish(s);
}

void sbx_drain(struct sbx *s, int64_t ms, void (*then)(struct sbx *s))
{
	s->drain_then = then;
	s->drain_ms = ms;
	s->drain_cut = 0;
	if (!s->drain_fire)
		s->drain_fire = loop_timer_add(s->loop, 0, drain_run, s);
}

/* From the loop: tell sbx_stop's callers, one at a time. */
static void stop_fire(void *arg)
{
	struct sbx *s = arg;
	s->stop_timer = 0;
	struct sbx_stop_wait *w;
	while ((w = s->stop_waits)) {
		s->stop_waits = w->next;
		s->depth++;
		if (w->fn)
			w->fn(w->arg, s->stop_rc, s->stop_err, NULL, NULL);
		s->depth--;
		free(w);
		if (sbx_settle(s))
			return;
	}
}

void sbx_stopped(struct sbx *s, int rc, const char *err)
{
	s->stopped = 1;
	s->stop_rc = rc;
	free(s->stop_err);
	s->stop_err = err ? xstrdup(err) : NULL;
	if (!s->stop_timer && !s->releasing)
		s->stop_timer = loop_timer_add(s->loop, 0, stop_fire, s);
}

void sbx_stop(struct sbx *s, sbx_done_fn fn, void *arg)
{
	if (s->releasing)
		return;
	if (s->stopped && !s->stop_timer) {
		sbx_later(s, fn, arg, s->stop_rc,
		          s->stop_err ? xstrdup(s->stop_err) : NULL, NULL,
		          NULL);
		return;
	}
	struct sbx_stop_wait *w = xcalloc(1, sizeof *w), **pp = &s->stop_waits;
	w->fn = fn;
	w->arg = arg;
	while (*pp)
		pp = &(*pp)->next;
	*pp = w;
	if (s->stopping)
		return;
	s->stopping = 1;
	s->ops->stop(s);
}

/* ---- release ---- */

/* Everything still in flight completes (SBX_FAILED), the backend
 * releases what it holds, and sbx_stop's callers hear SBX_OK. */
static void sbx_release(struct sbx *s)
{
	s->releasing = 1;
	s->depth++;
	if (s->drain_fire)
		loop_timer_cancel(s->loop, s->drain_fire);
	if (s->drain_timer)
		loop_timer_cancel(s->loop, s->drain_timer);
	if (s->stop_timer)
		loop_timer_cancel(s->loop, s->stop_timer);
	s->drain_then = NULL;
	struct sbx_job *j;
	while ((j = s->jobs))
		job_cut(s, j, "released");
	if (s->ops && s->ops->destroy)
		s->ops->destroy(s);
	sbx_mounts_release(s); /* the commands are gone */
	path_mounts_free(&s->mounts);
	free(s->mounts_json);
	struct sbx_stop_wait *w;
	while ((w = s->stop_waits)) {
		s->stop_waits = w->next;
		if (w->fn)
			w->fn(w->arg, SBX_OK, NULL, NULL, NULL);
		free(w);
	}
	free(s->stop_err);
	free(s->run_dir);
	free(s->workspace);
	free(s->image);
	free(s->image_id);
	if (s->repo_digests)
		strv_free(s->repo_digests);
	free(s->repo_digests);
	free(s->image_reported);
	free(s->lost);
	free(s);
}

void sbx_set_progress(struct sbx *s, sbx_progress_fn fn, void *arg)
{
	s->progress = fn;
	s->progress_arg = arg;
}

void sbx_free(struct sbx *s)
{
	if (!s || s->releasing)
		return;
	if (s->depth) {
		s->free_pending = 1; /* when the completion returns */
		return;
	}
	sbx_release(s);
}

/* ---- the wrapped operations ---- */

const char *sbx_name(const struct sbx *s)
{
	return s->ops->name;
}

unsigned sbx_backend_caps(const char *name)
{
	for (size_t i = 0; name && i < sizeof backends / sizeof *backends; i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i]->caps;
	return 0;
}

int sbx_backend_fds(const struct config *cfg)
{
	const char *name =
	    cfg->sandbox && *cfg->sandbox ? cfg->sandbox : "local";
	int most = 0;
	for (size_t i = 0; i < sizeof backends / sizeof *backends; i++) {
		if (!strcmp(backends[i]->name, name))
			return backends[i]->fds;
		most = backends[i]->fds > most ? backends[i]->fds : most;
	}
	return most; /* unknown: sbx_new will say so */
}

unsigned sbx_caps(const struct sbx *s)
{
	return s->ops->caps;
}

const char *sbx_workspace(const struct sbx *s)
{
	return s->workspace;
}

const char *sbx_lost(const struct sbx *s)
{
	return s ? s->lost : NULL;
}

double sbx_listing_time(const struct sbx *s)
{
	return s ? s->listed_at : 0;
}

const char *sbx_image(const struct sbx *s)
{
	return s->image ? s->image : "";
}

const char *sbx_image_id(const struct sbx *s)
{
	return s->image_id ? s->image_id : "";
}

const struct strv *sbx_repo_digests(const struct sbx *s)
{
	return s->repo_digests;
}

const char *sbx_image_reported(const struct sbx *s)
{
	return s->image_reported;
}

/* An operation on a sandbox that is stopping or gone fails (from the
 * loop) without reaching the backend. 1 when refused. */
static int refused(struct sbx *s, sbx_done_fn fn, void *arg)
{
	if (s->releasing)
		return 1;
	if (!s->stopping && !s->stopped)
		return 0;
	sbx_later(s, fn, arg, SBX_FAILED, xstrdup("sandbox: not running"), NULL,
	          NULL);
	return 1;
}

/* A file operation: refused as any other, and while the backend has no
 * place to work in (ops->ready) too. 1 when refused. */
static int not_ready(struct sbx *s, sbx_done_fn fn, void *arg)
{
	if (refused(s, fn, arg))
		return 1;
	if (!s->ops->ready || s->ops->ready(s))
		return 0;
	sbx_later(s, fn, arg, SBX_FAILED,
	          xstrdup(s->lost ? s->lost : "sandbox: not running"), NULL,
	          NULL);
	return 1;
}

void sbx_start(struct sbx *s, int stage_inputs, sbx_done_fn fn, void *arg)
{
	if (!refused(s, fn, arg))
		s->ops->start(s, stage_inputs, fn, arg);
}

struct sbx_exec *sbx_exec(struct sbx *s, const struct sbx_exec_req *r,
                          const struct sbx_exec_obs *obs, char **err)
{
	if (s->stopping || s->stopped || s->releasing) {
		set_err(err, "sandbox: not running");
		return NULL;
	}
	return s->ops->exec(s, r, obs, err);
}

void sbx_exec_cancel(struct sbx_exec *e)
{
	if (e)
		e->s->ops->cancel(e);
}

int sbx_exec_write(struct sbx_exec *e, const void *data, size_t n)
{
	return e ? e->s->ops->exec_write(e, data, n) : -1;
}

void sbx_read_file(struct sbx *s, const char *rel, size_t max, sbx_done_fn fn,
                   void *arg)
{
	if (!not_ready(s, fn, arg))
		s->ops->read_file(s, rel, max, fn, arg);
}

void sbx_write_file(struct sbx *s, const char *rel, const void *data, size_t n,
                    sbx_done_fn fn, void *arg)
{
	if (!not_ready(s, fn, arg))
		s->ops->write_file(s, rel, data, n, fn, arg);
}

void sbx_list(struct sbx *s, const char *rel, int recursive, size_t max,
              sbx_done_fn fn, void *arg)
{
	if (!not_ready(s, fn, arg))
		s->ops->list(s, rel, recursive, max, fn, arg);
}

void sbx_fetch(struct sbx *s, const char *rel, const char *dest, sbx_done_fn fn,
               void *arg)
{
	if (!not_ready(s, fn, arg))
		s->ops->fetch(s, rel, dest, fn, arg);
}

void sbx_export_tar(struct sbx *s, const char *path, sbx_done_fn fn, void *arg)
{
	if (!not_ready(s, fn, arg))
		s->ops->export_tar(s, path, fn, arg);
}

void sbx_import_tar(struct sbx *s, const char *path, sbx_done_fn fn, void *arg)
{
	if (not_ready(s, fn, arg))
		return;
	if (s->ops->import_tar)
		s->ops->import_tar(s, path, fn, arg);
	else
		sbx_later(s, fn, arg, SBX_FAILED,
		          xasprintf("sandbox '%s' cannot restore a workspace "
		                    "archive",
		                    s->ops->name),
		          NULL, NULL);
}

void sbx_export_delta(struct sbx *s, const char *path,
                      const struct sbx_delta *d, sbx_done_fn fn, void *arg)
{
	if (not_ready(s, fn, arg))
		return;
	if (s->ops->export_delta)
		s->ops->export_delta(s, path, d, fn, arg);
	else
		sbx_later(s, fn, arg, SBX_FAILED,
		          xasprintf("sandbox '%s' persists whole archives "
		                    "only",
		                    s->ops->name),
		          NULL, NULL);
}
