/* scan.c: the workspace as the session last saw it. At the start and
 * after every call that may change files the sandbox's workspace is
 * listed (sbx_list, never blocking the loop); what changed since the
 * last listing becomes workspace_change events. One listing runs at a
 * time: a scan asked for meanwhile follows it. */
#include "agent_internal.h"

#include "assay/events.h"
#include "assay/log.h"
#include "assay/util.h"

#include <stdlib.h>

#define SCAN_MAX_ENTRIES 100000

/* snapshot_diff's callback: one change, one event. */
static void scan_emit_change(void *arg, const char *path, const char *kind,
                             double size)
{
	session_emit(arg, ev_workspace_change(path, kind, size));
}

static void scan_start(struct session *s, int quiet);

/* A listing arrived: diff it against the last one (unless quiet), keep
 * it, and start the scan that was asked for meanwhile. */
static void scan_listed(struct session *s, void *ctx, int rc, const char *err,
                        struct buf *data, cJSON *list)
{
	int quiet = ctx != NULL;
	(void)data;
	s->scan.running = 0;
	if (rc < 0) {
		char *msg =
		    xasprintf("workspace scan: %s", err ? err : "failed");
		log_warn("%s", msg);
		session_emit(s, ev_error("sandbox", msg, -1));
		free(msg);
	} else {
		struct snapshot *now = snapshot_new(list);
		if (!quiet)
			snapshot_diff(s->snapshot, now, scan_emit_change, s);
		snapshot_free(s->snapshot);
		s->snapshot = now;
	}
	if (s->scan.again) {
		s->scan.again = 0;
		scan_start(s, 0);
		return;
	}
	session_scanned(s);
}

/* Ask the sandbox for the whole tree. */
static void scan_start(struct session *s, int quiet)
{
	s->scan.running = 1;
	/* ctx only carries the flag: non-NULL is quiet */
	sbx_list(s->sbx, ".", 1, SCAN_MAX_ENTRIES, session_sbx_done,
	         session_sbx_call(s, scan_listed, quiet ? (void *)s : NULL));
}

void scan_workspace(struct session *s, int quiet)
{
	if (!s->sbx)
		return;
	if (s->scan.running) {
		s->scan.again = 1; /* the next listing sees this change too */
		return;
	}
	scan_start(s, quiet);
}
