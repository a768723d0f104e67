/* sandbox.c: picks the sandbox backend named by the configuration and
 * owns the parts of struct sbx every backend shares. The backends
 * themselves live in one file each (local.c, docker.c, later
 * opensandbox.c). */
#include "assay/sandbox.h"
#include "assay/config.h"
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
