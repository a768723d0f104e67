/* outputs.c: delivery of the declared outputs at the end of a run: each
 * is copied out of the sandbox into the out dir (sbx_fetch, one after
 * another, never blocking the loop) and described for run_end. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/events.h"
#include "assay/path.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct outputs {
	size_t next; /* the declared output being fetched */
	char *rel;   /* its normalised path */
	char *dest;  /* where it is copied */
	cJSON *list; /* run_end's outputs so far */
	int missing; /* outputs not delivered */
	outputs_done_fn done;
};

void outputs_free(struct outputs *o)
{
	if (!o)
		return;
	free(o->rel);
	free(o->dest);
	cJSON_Delete(o->list);
	free(o);
}

/* Record output o->next: delivered to o->dest, or missing with why. */
static void outputs_record(struct session *s, struct outputs *o, int ok,
                           const char *why)
{
	const char *path = s->cfg->outputs[o->next];
	struct stat st;
	double bytes = ok && stat(o->dest, &st) == 0 ? (double)st.st_size : 0;
	cJSON_AddItemToArray(o->list,
	                     ev_run_output(path, ok, bytes, o->dest, why));
	o->missing += !ok;
	free(o->rel);
	free(o->dest);
	o->rel = o->dest = NULL;
	o->next++;
}

static void outputs_next(struct session *s, struct outputs *o);

/* The fetch of the current output completed. */
static void outputs_fetched(struct session *s, void *ctx, int rc,
                            const char *err, struct buf *data, cJSON *list)
{
	struct outputs *o = ctx;
	(void)data;
	(void)list;
	if (rc < 0 && snapshot_has(s->scan.snapshot, o->rel)) {
		/* the file is there: the sandbox failed to hand it over */
		char *msg = xasprintf("output %s: %s", o->rel,
		                      err ? err : "cannot be copied out");
		session_emit(s, ev_error("sandbox", msg, -1));
		free(msg);
	}
	outputs_record(s, o, rc >= 0, rc >= 0 ? NULL : err ? err : "missing");
	outputs_next(s, o);
}

/* Start the fetch of the next declared output, or hand the list over
 * when every one is done. */
static void outputs_next(struct session *s, struct outputs *o)
{
	const struct config *c = s->cfg;
	while (o->next < c->n_outputs) {
		char *err = NULL;
		if (path_normalize(c->outputs[o->next], &o->rel, &err) < 0) {
			outputs_record(s, o, 0, err);
			free(err);
			continue;
		}
		o->dest = xasprintf("%s/%s", c->out_dir, o->rel);
		char *dir = xstrdup(o->dest);
		*strrchr(dir, '/') = '\0';
		int made = mkdir_p(dir, &err);
		free(dir);
		if (made < 0 ||
		    session_room(s, o->dest,
		                 snapshot_bytes(s->scan.snapshot, o->rel, NULL),
		                 o->rel, &err) < 0) {
			outputs_record(s, o, 0, err);
			free(err);
			continue;
		}
		sbx_fetch(s->sbx, o->rel, o->dest, session_sbx_done,
		          session_sbx_call(s, outputs_fetched, o));
		return;
	}
	/* done: the delivery is over before its callback runs */
	cJSON *list = o->list;
	int missing = o->missing;
	outputs_done_fn fn = o->done;
	o->list = NULL;
	s->outputs = NULL;
	outputs_free(o);
	fn(s, list, missing);
}

void outputs_deliver(struct session *s, outputs_done_fn done)
{
	struct outputs *o = xcalloc(1, sizeof *o);
	o->list = cJSON_CreateArray();
	o->done = done;
	s->outputs = o;
	outputs_next(s, o);
}
