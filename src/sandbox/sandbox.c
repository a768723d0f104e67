/* sandbox.c: picks the sandbox backend named by the configuration and
 * owns the parts of struct sbx every backend shares. The backends
 * themselves live in one file each (local.c, docker.c, later
 * opensandbox.c). */
#include "assay/sandbox.h"
#include "assay/config.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

/* Backends that exist; adding one means adding its ops here. */
static const struct sbx_ops *const backends[] = {&sbx_local_ops,
                                                 &sbx_docker_ops};

/* Backends the design promises but this build does not have yet. */
static const char *const planned[] = {"opensandbox"};

struct sbx *sbx_new(const struct config *cfg, struct loop *l,
                    const char *run_dir, char **err)
{
	const char *name =
	    cfg->sandbox && *cfg->sandbox ? cfg->sandbox : "local";
	const struct sbx_ops *ops = NULL;
	for (size_t i = 0; i < sizeof backends / sizeof *backends; i++)
		if (!strcmp(backends[i]->name, name))
			ops = backends[i];
	if (!ops) {
		for (size_t i = 0; i < sizeof planned / sizeof *planned; i++)
			if (!strcmp(planned[i], name)) {
				set_err(err,
				        "sandbox '%s' is not available yet: "
				        "use --sandbox local",
				        name);
				return NULL;
			}
		set_err(err,
		        "unknown sandbox '%s': use --sandbox local, docker or "
		        "opensandbox",
		        name);
		return NULL;
	}
	if (!run_dir || !*run_dir) {
		set_err(err, "sandbox: no run directory given");
		return NULL;
	}
	struct sbx *s = xcalloc(1, sizeof *s);
	s->ops = ops;
	s->loop = l;
	s->cfg = cfg;
	s->run_dir = xstrdup(run_dir);
	return s;
}

void sbx_free(struct sbx *s)
{
	if (!s)
		return;
	if (s->ops && s->ops->destroy)
		s->ops->destroy(s); /* stops first if still running */
	free(s->run_dir);
	free(s->workspace);
	free(s->image);
	free(s->image_id);
	free(s);
}

/* --- the wrapped operations ------------------------------------------
 * Callers outside src/sandbox/ use only these. An operation a backend
 * still does synchronously has its completion delivered from a loop
 * timer, so the contract (fn never before the call returns) holds for
 * every backend. */

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

unsigned sbx_caps(const struct sbx *s)
{
	return s->ops->caps;
}

const char *sbx_workspace(const struct sbx *s)
{
	return s->workspace;
}

const char *sbx_image(const struct sbx *s)
{
	return s->image ? s->image : "";
}

const char *sbx_image_id(const struct sbx *s)
{
	return s->image_id ? s->image_id : "";
}

/* A completion waiting for its loop timer. */
struct sbx_later {
	sbx_done_fn fn;
	void *arg;
	int rc;
	char *err;
};

static void sbx_later_fire(void *arg)
{
	struct sbx_later *d = arg;
	d->fn(d->arg, d->rc, d->err, NULL, NULL);
	free(d->err);
	free(d);
}

/* Deliver (rc, err) to fn from the loop; takes err. */
static void sbx_complete_later(struct sbx *s, sbx_done_fn fn, void *arg,
                               int rc, char *err)
{
	if (!fn) {
		free(err);
		return;
	}
	struct sbx_later *d = xcalloc(1, sizeof *d);
	d->fn = fn;
	d->arg = arg;
	d->rc = rc;
	d->err = err;
	loop_timer_add(s->loop, 0, sbx_later_fire, d);
}

void sbx_start(struct sbx *s, int stage_inputs, sbx_done_fn fn, void *arg)
{
	char *err = NULL;
	/* a backend stages cfg->inputs; a resumed workspace has them */
	struct config *c = (struct config *)s->cfg;
	size_t n_inputs = c->n_inputs;
	if (!stage_inputs)
		c->n_inputs = 0;
	int rc = s->ops->start(s, &err);
	c->n_inputs = n_inputs;
	sbx_complete_later(s, fn, arg, rc < 0 ? SBX_FAILED : SBX_OK, err);
}

void sbx_stop(struct sbx *s, sbx_done_fn fn, void *arg)
{
	s->ops->stop(s);
	sbx_complete_later(s, fn, arg, SBX_OK, NULL);
}

struct sbx_exec *sbx_exec(struct sbx *s, const struct sbx_exec_req *r,
                          const struct sbx_exec_obs *obs, char **err)
{
	return s->ops->exec(s, r, obs, err);
}

void sbx_exec_cancel(struct sbx_exec *e)
{
	/* every exec handle starts with its sandbox (see the backends) */
	struct sbx *s = *(struct sbx **)e;
	s->ops->cancel(e);
}

int sbx_exec_write(struct sbx_exec *e, const void *data, size_t n)
{
	struct sbx *s = *(struct sbx **)e;
	return s->ops->exec_write(e, data, n);
}

void sbx_read_file(struct sbx *s, const char *rel, size_t max, sbx_done_fn fn,
                   void *arg)
{
	s->ops->read_file(s, rel, max, fn, arg);
}

void sbx_write_file(struct sbx *s, const char *rel, const void *data, size_t n,
                    sbx_done_fn fn, void *arg)
{
	s->ops->write_file(s, rel, data, n, fn, arg);
}

void sbx_list(struct sbx *s, const char *rel, int recursive, size_t max,
              sbx_done_fn fn, void *arg)
{
	s->ops->list(s, rel, recursive, max, fn, arg);
}

void sbx_fetch(struct sbx *s, const char *rel, const char *dest,
               sbx_done_fn fn, void *arg)
{
	char *err = NULL;
	int rc = s->ops->fetch(s, rel, dest, &err);
	sbx_complete_later(s, fn, arg, rc < 0 ? SBX_FAILED : SBX_OK, err);
}

void sbx_export_tar(struct sbx *s, const char *path, sbx_done_fn fn,
                    void *arg)
{
	char *err = NULL;
	int rc = s->ops->export_tar(s, path, &err);
	sbx_complete_later(s, fn, arg, rc < 0 ? SBX_FAILED : SBX_OK, err);
}

void sbx_import_tar(struct sbx *s, const char *path, sbx_done_fn fn,
                    void *arg)
{
	char *err = NULL;
	int rc = -1;
	if (s->ops->import_tar)
		rc = s->ops->import_tar(s, path, &err);
	else
		set_err(&err, "sandbox '%s' cannot restore a workspace archive",
		        s->ops->name);
	sbx_complete_later(s, fn, arg, rc < 0 ? SBX_FAILED : SBX_OK, err);
}
