/* persist.c: the per-call snapshot of a workspace that lives in the
 * sandbox (docker). After every call that may change files the
 * workspace is persisted before the call's result is recorded, so a
 * killed run is resumed from a workspace that holds every recorded
 * result's effect. The run dir's first snapshot is the whole archive;
 * after it, where the backend can (SBX_CAP_DELTA), a call's snapshot
 * is a delta of what the call changed (snapshot_delta of the listing
 * before and after it; src/sandbox/layers.c names the files), so a
 * call that writes 10 KB costs a 10 KB archive. The whole archive is
 * written again when the deltas together outgrow it, when too much
 * changed at once, or when a snapshot failed. The run's end writes it
 * too (every backend: the only archive of a host workspace), but not
 * when the archive, without deltas over it, is known to hold a
 * listing the end's fresh listing matches entry for entry: a listing
 * taken before it was written (the held one here; for a host workspace
 * the one kept in a file beside it, RUN/workspace.listing.json), or
 * the first after a resume restored it. */
#include "agent_internal.h"

#include "assay/events.h"
#include "assay/log.h"
#include "assay/path.h"
#include "assay/util.h"

#include <stdlib.h>
#include <sys/stat.h>

#define PERSIST_DELTA_PATHS 2000 /* changed paths a delta holds at most */
#define PERSIST_DELTAS 200       /* deltas over one whole archive */

int session_room(const struct session *s, const char *path, double bytes,
                 const char *what, char **err)
{
	if (sbx_caps(s->sbx) & SBX_CAP_HOST_WORKSPACE)
		return 0;
	return sbx_room(path, bytes, what, err);
}

/* How long the snapshot at path took, and its size, in the log. */
static void persist_took(const struct session *s, const char *what,
                         const char *path)
{
	struct stat st;
	log_info("persist: %s in %lld ms (%lld bytes)", what,
	         (long long)(now_ms() - s->persist.t0),
	         stat(path, &st) == 0 ? (long long)st.st_size : -1ll);
}

/* The snapshot is written (or failed, said): the result goes in. */
static void persist_finish(struct session *s)
{
	if (s->calls.result) {
		session_result_in(s);
		return;
	}
	snapshot_free(s->persist.now);
	s->persist.now = NULL;
}

static void persist_whole_done(struct session *s, void *ctx, int rc,
                               const char *err, struct buf *data, cJSON *list)
{
	(void)ctx;
	(void)data;
	(void)list;
	char *archive = s->persist.writing;
	s->persist.writing = NULL;
	if (rc < 0) {
		char *msg = xasprintf("persisting the workspace: %s",
		                      err ? err : "failed");
		log_warn("%s", msg);
		session_emit(s, ev_error("sandbox", msg, -1));
		free(msg);
		s->persist.whole_next = 1;
	} else {
		sbx_archive_written(archive); /* the deltas are in it */
		s->persist.whole_next = 0;
		persist_took(s, "the whole archive", archive);
	}
	/* listed before it was written: what it holds (not cut short) */
	s->persist.covers = rc == SBX_OK ? snapshot_serial(s->persist.now) : 0;
	free(archive);
	persist_finish(s);
}

/* The whole workspace, as the archive. */
static void persist_whole(struct session *s, const char *why)
{
	if (why)
		log_info("persist: the whole workspace (%s)", why);
	free(s->persist.writing);
	s->persist.writing = sbx_archive_new(s->rundir.run_dir);
	s->persist.t0 = now_ms();
	const struct snapshot *sn =
	    s->persist.now ? s->persist.now : s->scan.snapshot;
	char *err = NULL;
	if (session_room(s, s->persist.writing,
	                 snapshot_bytes(sn, "", sbx_mounts(s->sbx)),
	                 "the workspace", &err) < 0) {
		/* (from a callback: persist_listed's or a delta's) */
		persist_whole_done(s, NULL, -1, err, NULL, NULL);
		free(err);
		return;
	}
	sbx_export_tar(s->sbx, s->persist.writing, session_sbx_done,
	               session_sbx_call(s, persist_whole_done, NULL));
}

static void persist_delta_done(struct session *s, void *ctx, int rc,
                               const char *err, struct buf *data, cJSON *list)
{
	(void)ctx;
	(void)data;
	(void)list;
	if (rc < 0) { /* a file went meanwhile, say: the whole then */
		log_warn("persist: the delta failed (%s)",
		         err ? err : "failed");
		persist_whole(s, "the delta failed");
		return;
	}
	persist_took(s, "a delta", s->persist.writing);
	s->persist.covers = 0; /* the end folds the deltas in */
	free(s->persist.writing);
	s->persist.writing = NULL;
	persist_finish(s);
}

/* Refuse a delta whose files are more than the room beside path. */
static int persist_delta_room(const struct session *s,
                              const struct snapshot *now,
                              const struct sbx_delta *d, const char *path,
                              char **err)
{
	double bytes = 0;
	for (size_t i = 0; i < d->files.n; i++)
		bytes += snapshot_bytes(now, d->files.v[i], NULL);
	return session_room(s, path, bytes, "the call's changes", err);
}

/* Why this call's snapshot cannot be a delta, or NULL (then *next is
 * where it goes and d what it holds). */
static const char *persist_no_delta(struct session *s, struct snapshot *now,
                                    struct sbx_delta *d, char **next,
                                    char **err)
{
	if (!now)
		return "the listing failed or was cut";
	if (s->persist.whole_next)
		return "the last snapshot failed";
	if (!s->scan.snapshot || s->scan.cut)
		return "no listing to compare with";
	char *archive = sbx_archive_find(s->rundir.run_dir);
	struct stat st;
	int64_t bytes = 0;
	int n = archive ? sbx_deltas(archive, NULL, &bytes, err) : 0;
	const char *why = NULL;
	if (!archive || stat(archive, &st) < 0)
		why = "no whole archive yet";
	else if (n < 0 || n >= PERSIST_DELTAS || bytes > st.st_size)
		why = "the deltas outgrew the archive";
	else if (snapshot_delta(s->scan.snapshot, now, d) > PERSIST_DELTA_PATHS)
		why = "too much changed";
	else if (persist_delta_room(s, now, d, archive, err) < 0)
		why = *err; /* the whole will not fit either: it says so */
	else if (d->files.n + d->dirs.n + d->gone.n &&
	         !(*next = sbx_delta_next(archive, err)))
		why = *err;
	free(archive);
	return why;
}

/* Nothing to persist after the call: what the archive holds is now's
 * workspace too when nothing changed at all (a directory's mode is in
 * no delta). */
static void persist_unchanged(struct session *s, const struct snapshot *now)
{
	const struct snapshot *was = s->scan.snapshot;
	int same = s->persist.covers &&
	           s->persist.covers == snapshot_serial(was) &&
	           snapshot_same(was, now);
	s->persist.covers = same ? snapshot_serial(now) : 0;
	persist_finish(s);
}

/* The listing after the call: what goes into its snapshot. */
static void persist_listed(struct session *s, struct snapshot *now)
{
	s->persist.now = now;
	struct sbx_delta d = {0};
	char *next = NULL, *err = NULL;
	const char *why = persist_no_delta(s, now, &d, &next, &err);
	if (why)
		persist_whole(s, why);
	else if (!next) /* nothing the delta takes changed */
		persist_unchanged(s, now);
	else {
		s->persist.t0 = now_ms();
		free(s->persist.writing);
		s->persist.writing = next; /* named in the log */
		next = NULL;
		sbx_export_delta(s->sbx, s->persist.writing, &d,
		                 session_sbx_done,
		                 session_sbx_call(s, persist_delta_done, NULL));
	}
	free(next);
	free(err);
	strv_free(&d.files);
	strv_free(&d.dirs);
	strv_free(&d.gone);
}

void persist_result(struct session *s)
{
	if (sbx_caps(s->sbx) & SBX_CAP_DELTA)
		scan_hold(s, persist_listed);
	else
		persist_whole(s, NULL);
}

struct snapshot *persist_take_held(struct session *s)
{
	struct snapshot *held = s->persist.now;
	s->persist.now = NULL;
	return held;
}

void persist_restored(struct session *s)
{
	s->persist.restored = 1;
}

void persist_scanned(struct session *s)
{
	if (!s->persist.restored)
		return;
	s->persist.restored = 0;
	s->persist.covers = s->scan.cut ? 0 : snapshot_serial(s->scan.snapshot);
}

/* The end is over: done hears it. */
static void persist_end_done(struct session *s, char *archive, int written,
                             const char *err)
{
	snapshot_free(s->persist.base);
	snapshot_free(s->persist.listed);
	s->persist.base = s->persist.listed = NULL;
	persist_end_fn done = s->persist.done;
	s->persist.done = NULL;
	done(s, archive, written, err);
}

/* A host workspace's listing beside its new archive, for the next
 * run's end: the end's own, else the session's (both taken before the
 * archive was). */
static void persist_keep_listing(struct session *s, const char *archive)
{
	const struct snapshot *sn = s->persist.listed;
	if (!sn && !s->scan.cut)
		sn = s->scan.snapshot;
	if (!(sbx_caps(s->sbx) & SBX_CAP_HOST_WORKSPACE) || !sn ||
	    sbx_mounts(s->sbx)->n)
		return;
	char *tag = sbx_archive_tag(archive);
	char *path = sbx_archive_listing(archive);
	char *err = NULL;
	/* a file written after the archive began shows a later mtime, or
	 * one so close to its start that it counts as changed */
	if (tag && snapshot_save(sn, path, tag, s->persist.end_wall, &err) < 0)
		log_warn("end: the archive's listing: %s", err);
	free(err);
	free(path);
	free(tag);
}

/* The end's archive is written (or failed). */
static void persist_end_written(struct session *s, void *ctx, int rc,
                                const char *err, struct buf *data, cJSON *list)
{
	(void)ctx;
	(void)data;
	(void)list;
	char *archive = s->persist.archive;
	s->persist.archive = NULL;
	if (rc < 0) {
		free(archive);
		archive = NULL;
	} else {
		sbx_archive_written(archive); /* the deltas are in it */
		if (rc == SBX_OK) /* not cut short: all the listing says */
			persist_keep_listing(s, archive);
	}
	persist_end_done(s, archive, 1,
	                 rc < 0 ? (err ? err : "the archive failed") : NULL);
}

/* Write the whole archive at the end. */
static void persist_end_write(struct session *s, const char *why)
{
	log_info("end: the workspace is archived (%s)", why);
	free(s->persist.archive);
	s->persist.archive = sbx_archive_new(s->rundir.run_dir);
	s->persist.end_wall = (double)wall_ms() / 1000;
	char *err = NULL;
	if (session_room(
	        s, s->persist.archive,
	        snapshot_bytes(s->scan.snapshot, "", sbx_mounts(s->sbx)),
	        "the workspace", &err) < 0) {
		persist_end_written(s, NULL, -1, err, NULL, NULL);
		free(err);
		return;
	}
	sbx_export_tar(s->sbx, s->persist.archive, session_sbx_done,
	               session_sbx_call(s, persist_end_written, NULL));
}

/* The end's fresh listing: the archive stays when it holds that. */
static void persist_end_listed(struct session *s, struct snapshot *now)
{
	const struct snapshot *base =
	    s->persist.base ? s->persist.base : s->scan.snapshot;
	if (now && snapshot_same(base, now)) {
		snapshot_free(now);
		char *archive = s->persist.archive;
		s->persist.archive = NULL;
		persist_end_done(s, archive, 0, NULL);
		return;
	}
	s->persist.listed = now; /* what the new archive holds */
	persist_end_write(s, now ? "it changed since the archive was written"
	                         : "the workspace could not be listed");
}

/* Why the archive the run dir holds (found into s->persist.archive)
 * may not hold the workspace as it is, or NULL: then the listing it
 * holds is s->persist.base (a host workspace's, from its file) or the
 * session's. */
static const char *persist_end_doubt(struct session *s)
{
	if (sbx_mounts(s->sbx)->n)
		return "mounted inputs: not in it";
	s->persist.archive = sbx_archive_find(s->rundir.run_dir);
	if (!s->persist.archive)
		return "no archive yet";
	char *err = NULL;
	int deltas = sbx_deltas(s->persist.archive, NULL, NULL, &err);
	free(err);
	if (deltas)
		return "deltas to fold in";
	if (!(sbx_caps(s->sbx) & SBX_CAP_HOST_WORKSPACE)) {
		if (s->persist.whole_next)
			return "the last snapshot failed";
		if (!s->persist.covers ||
		    s->persist.covers != snapshot_serial(s->scan.snapshot))
			return "what it holds is not the last listing";
		return NULL;
	}
	char *tag = sbx_archive_tag(s->persist.archive);
	char *path = sbx_archive_listing(s->persist.archive);
	s->persist.base = tag ? snapshot_load(path, tag) : NULL;
	free(path);
	free(tag);
	return s->persist.base ? NULL : "no listing of what it holds";
}

void persist_end(struct session *s, persist_end_fn done)
{
	s->persist.done = done;
	const char *why = persist_end_doubt(s);
	if (why)
		persist_end_write(s, why);
	else
		scan_now(s, persist_end_listed);
}

void persist_free(struct session *s)
{
	snapshot_free(s->persist.now);
	snapshot_free(s->persist.base);
	snapshot_free(s->persist.listed);
	free(s->persist.writing);
	free(s->persist.archive);
}
