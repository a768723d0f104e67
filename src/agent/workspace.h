/* workspace.h: the workspace part of a session: its listing and the
 * snapshot of it (scan.c, snapshot.c), the changes and their diffs
 * (diffs.c, linediff.c), and its archive after each call (persist.c).
 * Each part struct is written by its owner file only; the others call
 * the functions below. */
#ifndef ASSAY_AGENT_WORKSPACE_H
#define ASSAY_AGENT_WORKSPACE_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "assay/buf.h"

struct session;
struct sbx_delta;
struct path_mounts;
struct snapshot;

/* The workspace listing (scan.c). */
/* part: scan, owner: src/agent/scan.c */
struct scan {
	struct snapshot *snapshot; /* the workspace after the last call */
	int running;               /* a listing is on its way */
	int again;                 /* another is wanted after it */
	int cut;        /* snapshot is of a listing cut at its limit */
	double asked;   /* wall clock (s) when the listing was asked */
	uint64_t timer; /* a held listing's start */
	/* the held listing's taker (scan_hold) */
	void (*then)(struct session *s, struct snapshot *now);
};

/* The run's end persisted the workspace (persist_end): archive
 * (taken) is the whole archive the run dir holds, NULL when it could
 * not be written (err says why); written is 0 when it was not written
 * again, the workspace unchanged since it was. */
typedef void (*persist_end_fn)(struct session *s, char *archive, int written,
                               const char *err);

/* The workspace archived after a call and at the end (persist.c). */
/* part: persist, owner: src/agent/persist.c */
struct persist {
	struct snapshot *now; /* held until the result is in */
	int whole_next;       /* the last snapshot failed */
	char *writing;        /* the whole archive being written */
	int64_t t0;           /* when the snapshot's writing began */
	/* the listing (snapshot_serial) of the workspace the archive
	 * holds, 0: none known (the end checks no delta is over it) */
	uint64_t covers;
	int restored; /* from the archive: its first listing is covered */
	/* the end: the listing a host workspace's archive holds (from
	 * its file), the one taken before the archive is written again,
	 * the archive, when its writing began (wall clock, s), and who
	 * hears the outcome */
	struct snapshot *base, *listed;
	char *archive;
	double end_wall;
	persist_end_fn done;
};

/* The changes of the listings in hand and the last text of each file
 * (diffs.c). */
struct diff_change;
struct diff_version;
/* part: diffs, owner: src/agent/diffs.c */
struct diffs {
	struct diff_change *q; /* the changes, in the listing's order */
	size_t nq, capq;
	size_t next; /* the change being read */
	size_t reads;
	int busy;
	int quiet;
	char *call; /* whose changes (NULL: no call's) */
	struct diff_version *v;
	size_t nv, capv;
	size_t kept; /* bytes of text in v */
};

/* scan.c: list the workspace into s->scan.snapshot; quiet: without
 * workspace_change events (a resumed workspace is already known). */
void scan_workspace(struct session *s, int quiet);
/* List the workspace for fn, which gets the snapshot (NULL when the
 * listing failed or was cut) without events: it hands it to scan_take
 * or frees it. */
void scan_hold(struct session *s,
               void (*fn)(struct session *s, struct snapshot *now));
/* The same at once, for fn to look at (the session's snapshot stays):
 * NULL too when another listing is on its way. */
void scan_now(struct session *s,
              void (*fn)(struct session *s, struct snapshot *now));
/* now (may be NULL: nothing) becomes the session's snapshot, what
 * changed since the last as workspace_change events unless quiet. */
void scan_take(struct session *s, struct snapshot *now, int quiet);

/* diffs.c: the changes of a listing with the diffs of their text.
 * diffs_change is snapshot_diff's callback (arg: the session): it
 * queues one; diffs_run reads what it must and emits the queue as
 * workspace_change events (none if quiet), attributed to the call
 * diffs_call named (NULL: none; then no diffs, the versions only). */
void diffs_change(void *arg, const char *path, const char *kind, double size,
                  double mtime);
void diffs_call(struct session *s, const char *id);
void diffs_run(struct session *s, int quiet);
/* Changes are being read: the session waits (session_scanned ends it). */
int diffs_busy(const struct session *s);
void diffs_free(struct session *s);

/* linediff.c: the hunks of a -> b as diff -u prints them (at most
 * about max bytes, then cut), and the lines added and removed. */
struct linediff {
	int added, removed;
	int cut; /* hunks stop before the end */
	struct buf hunks;
};
int linediff(const char *a, size_t na, const char *b, size_t nb, size_t max,
             struct linediff *d);

/* persist.c: after a call that may change files, a backend without a
 * host workspace persists it before the result is recorded: a delta
 * of what changed over the whole archive where it can, else the whole
 * archive. Then session_result_in. */
void persist_result(struct session *s);
/* The listing held until the result is in (taken; NULL: none). */
struct snapshot *persist_take_held(struct session *s);
/* The run's end: the whole archive is written, unless the one the run
 * dir holds (without deltas) already holds the workspace as a fresh
 * listing shows it (never with mounted inputs); then done. */
void persist_end(struct session *s, persist_end_fn done);
/* The workspace was restored from the archive (a resume): the next
 * listing the session takes is what it holds. */
void persist_restored(struct session *s);
/* A listing became the session's, or failed (scan.c). */
void persist_scanned(struct session *s);
void persist_free(struct session *s);

/* The workspace's files at one moment, and what changed since. */
struct snapshot;
/* mtime: the file's (seconds), 0 for a deleted one. */
typedef void (*snapshot_change_fn)(void *arg, const char *path,
                                   const char *kind, double size, double mtime);
/* taken: the wall clock (seconds) when the listing was asked for. */
struct snapshot *snapshot_new(const cJSON *list, double taken);
void snapshot_free(struct snapshot *sn);
/* Calls fn for each file created, modified or deleted from old to now
 * (old may be NULL: everything is created). */
void snapshot_diff(struct snapshot *old, const struct snapshot *now,
                   snapshot_change_fn fn, void *arg);

/* What changed from old to now as a delta (assay/sandbox.h): files
 * and links new or changed (or written so soon after old's listing
 * that a change may not show), directories new, and the top of each
 * tree gone. The number of paths in d. */
size_t snapshot_delta(struct snapshot *old, const struct snapshot *now,
                      struct sbx_delta *d);

/* Which listing the snapshot is of: a number no other snapshot of the
 * process has (0 for NULL). */
uint64_t snapshot_serial(const struct snapshot *sn);
/* Whether now lists what old did, entry for entry (path, type, size,
 * mtime, ctime), none written so soon before old's listing that a
 * change may not show (0 when either is NULL). */
int snapshot_same(const struct snapshot *old, const struct snapshot *now);
/* Keep sn in the file at path (replaced whole) with tag, taken
 * standing for its listing's time; snapshot_load reads it back when
 * its tag is tag (else, or when it is missing or bad, NULL). */
int snapshot_save(const struct snapshot *sn, const char *path, const char *tag,
                  double taken, char **err);
struct snapshot *snapshot_load(const char *path, const char *tag);

/* Whether the snapshot holds a file at path (workspace-relative). */
int snapshot_has(const struct snapshot *sn, const char *path);
/* The bytes of the files at rel and under it ("" the whole workspace;
 * 0 when the snapshot is NULL or does not know rel), those in the
 * mounts skip (may be NULL: the mounted inputs, which no archive
 * holds) left out. */
double snapshot_bytes(const struct snapshot *sn, const char *rel,
                      const struct path_mounts *skip);

/* Before a snapshot or an output is written at path: refuse (-1 and
 * *err, nothing written) when what it holds by the last listing
 * (bytes) is more than the free space there (persist.c). Backends
 * with a host workspace count exactly themselves; this counts for the
 * others, whose data streams in. */
int session_room(const struct session *s, const char *path, double bytes,
                 const char *what, char **err);

#endif
