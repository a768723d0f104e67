/* probe.c: the findings the backends' probes report to `assay doctor`
 * (sbx_probe in sandbox.c runs them): sections of items, each OK, WARN
 * or FAIL with what was seen and what to do. */
#include "assay/sandbox.h"
#include "assay/util.h"
#include "sandbox/internal.h"

#include <stdlib.h>
#include <string.h>

void sbx_probe_section(struct sbx_probe *p, const char *name)
{
	p->v = xrealloc(p->v, (p->n + 1) * sizeof *p->v);
	struct sbx_probe_section *sec = &p->v[p->n++];
	memset(sec, 0, sizeof *sec);
	sec->name = xstrdup(name);
}

void sbx_probe_add(struct sbx_probe *p, enum sbx_probe_status st,
                   const char *name, char *detail, char *fix)
{
	if (!p->n)
		sbx_probe_section(p, "sandbox");
	struct sbx_probe_section *sec = &p->v[p->n - 1];
	sec->items = xrealloc(sec->items, (sec->n + 1) * sizeof *sec->items);
	struct sbx_probe_item *it = &sec->items[sec->n++];
	it->status = st;
	it->name = xstrdup(name);
	it->detail = detail ? detail : xstrdup("");
	it->fix = fix;
}

void sbx_probe_free(struct sbx_probe *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct sbx_probe_section *sec = &p->v[i];
		for (size_t k = 0; k < sec->n; k++) {
			free(sec->items[k].name);
			free(sec->items[k].detail);
			free(sec->items[k].fix);
		}
		free(sec->items);
		free(sec->name);
	}
	free(p->v);
	cJSON_Delete(p->facts);
	memset(p, 0, sizeof *p);
}
