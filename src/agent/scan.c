/* scan.c: the workspace as the session last saw it. At the start and
 * after every call that may change files the sandbox's workspace is
 * listed (sbx_list, never blocking the loop); what changed since the
 * last listing becomes workspace_change events (diffs.c reads the text
 * files among the changes first). One listing runs at a
 * time: a scan asked for meanwhile follows it. A listing may be held
 * (scan_hold): the per-call snapshot of persist.c reads what changed
 * before the events are emitted (scan_take); or only looked at
 * (scan_now): the run's end compares it with the archive's. */
#include "agent_internal.h"

#include "assay/events.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <stdlib.h>

#define SCAN_MAX_ENTRIES 100000
#define SCAN_HOLD_MS 15 /* > snapshot_delta's margin */

/* What a listing is for (its ctx): events, none (quiet), held for
 * the caller of scan_hold, or looked at by the caller of scan_now. */
static char scan_quiet, scan_held, scan_peek;

static void scan_start(struct session *s, void *why);

/* A listing arrived: diff it against the last one (unless quiet), keep
 * it, and start the scan that was asked for meanwhile; a held one goes
 * to whoever asked for it instead. */
static void scan_listed(struct session *s, void *ctx, int rc, const char *err,
                        struct buf *data, cJSON *list)
{
	(void)data;
	s->scan.running = 0;
	struct snapshot *now = NULL;
	if (rc < 0) {
		char *msg =
		    xasprintf("workspace scan: %s", err ? err : "failed");
		log_warn("%s", msg);
		session_emit(s, ev_error("sandbox", msg, -1));
		free(msg);
	} else {
		/* a listing taken ahead of the ask (at a python cell's end)
		 * is as old as it is: the next delta's margin counts from
		 * then */
		double taken = sbx_listing_time(s->sbx);
		if (taken > 0 && taken < s->scan.asked)
			s->scan.asked = taken;
		now = snapshot_new(list, s->scan.asked);
	}
	if (ctx == &scan_held || ctx == &scan_peek) {
		void (*fn)(struct session *, struct snapshot *) = s->scan.then;
		s->scan.then = NULL;
		if (rc != SBX_OK) { /* a cut listing is no delta's base */
			snapshot_free(now);
			now = NULL;
		}
		if (now && ctx == &scan_held) /* it becomes the session's */
			s->scan.cut = 0;
		fn(s, now);
		return;
	}
	if (now) {
		s->scan.cut = rc == SBX_TRUNCATED;
		scan_take(s, now, ctx == &scan_quiet);
	}
	persist_scanned(s);
	if (s->scan.again) {
		s->scan.again = 0;
		scan_start(s, NULL);
		return;
	}
	session_scanned(s);
}

/* Ask the sandbox for the whole tree. */
static void scan_start(struct session *s, void *why)
{
	s->scan.running = 1;
	s->scan.asked = (double)wall_ms() / 1000;
	sbx_list(s->sbx, ".", 1, SCAN_MAX_ENTRIES, session_sbx_done,
	         session_sbx_call(s, scan_listed, why));
}

void scan_workspace(struct session *s, int quiet)
{
	if (!s->sbx)
		return;
	if (s->scan.running) {
		s->scan.again = 1; /* the next listing sees this change too */
		return;
	}
	scan_start(s, quiet ? &scan_quiet : NULL);
}

static void scan_held_now(void *arg)
{
	struct session *s = arg;
	s->scan.timer = 0;
	scan_start(s, &scan_held);
}

void scan_hold(struct session *s,
               void (*fn)(struct session *s, struct snapshot *now))
{
	if (s->scan.running) { /* not while calls run: never, in fact */
		fn(s, NULL);
		return;
	}
	s->scan.then = fn;
	s->scan.running = 1;
	/* a tick of the kernel's clock after the call, whatever it wrote
	 * is older than the listing by more than snapshot_delta's margin:
	 * not taken again by the next delta */
	s->scan.timer = loop_timer_add(s->loop, SCAN_HOLD_MS, scan_held_now, s);
}

void scan_now(struct session *s,
              void (*fn)(struct session *s, struct snapshot *now))
{
	if (!s->sbx || s->scan.running) { /* a call's is on its way */
		fn(s, NULL);
		return;
	}
	s->scan.then = fn;
	scan_start(s, &scan_peek);
}

void scan_take(struct session *s, struct snapshot *now, int quiet)
{
	if (!now)
		return;
	/* quiet: the versions of the text files are read all the same */
	snapshot_diff(s->scan.snapshot, now, diffs_change, s);
	snapshot_free(s->scan.snapshot);
	s->scan.snapshot = now;
	diffs_run(s, quiet);
}
