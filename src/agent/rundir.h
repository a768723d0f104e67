/* rundir.h: the record part of a session: the run directory, its
 * lock, the transcript and the cache of answers (rundir.c,
 * transcript.c, cache.c). Only rundir.c and transcript.c write its
 * fields; the other files read them and call these functions. */
#ifndef ASSAY_AGENT_RUNDIR_H
#define ASSAY_AGENT_RUNDIR_H

#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

struct session;
struct config;
struct llm_result;

/* The event stream's bookkeeping (transcript.c). */
struct transcript {
	int fd;              /* transcript.jsonl, appended to; -1 closed */
	off_t good;          /* its size after the last whole line */
	int failed;          /* errno of a write that failed: nothing more */
	int failed_cut;      /* and the partial line could not be taken back */
	uint64_t failed_seq; /* the first event not recorded */
	uint64_t seq;        /* the last event's seq */
	int64_t t0;          /* t = 0 (a resumed run goes on from its last t) */
	uint64_t written;    /* events this session emitted */
};

/* The run's record on disk. */
/* part: rundir, owner: src/agent/rundir.c, src/agent/transcript.c */
struct rundir {
	char *run_id;
	char *run_dir;
	int made_run_dir; /* the run dir did not exist before */
	int lock_fd;      /* run.lock, held while the run lives */
	struct transcript tr;
	uint64_t timer; /* the transcript failed: end the run */
};

/* rundir.c: the run directory. */
/* No run dir yet, no lock. */
void rundir_init(struct rundir *rd);
/* A new run: its id and dir (cfg's, or .assay/runs/<id>), open. */
int rundir_create(struct session *s, char **err);
/* Set the run dir and id (copied; NULL clears). */
void rundir_set(struct session *s, const char *dir, const char *id);
/* Make and lock the run dir, its exec/ and cache/, open assay.log and
 * the transcript. */
int rundir_open(struct session *s, char **err);
/* With --workspace: neither the run dir nor the out dir may lie inside
 * it, where sandboxed code could plant links. */
int rundir_check_layout(const struct config *cfg, const char *run_dir,
                        char **err);
/* Close the transcript and the lock; a run dir this session made and
 * never wrote to is removed. */
void rundir_close(struct session *s);

/* Lock the run dir (run.lock, flock) for the session's lifetime; -1 +
 * *err "run is in use (pid N)" when another process holds it. */
int rundir_lock(struct session *s, char **err);

/* transcript.c: the event stream's file and stamps. */
void transcript_init(struct transcript *t);
/* Open <run_dir>/transcript.jsonl for appending. */
int transcript_open(struct transcript *t, const char *run_dir, char **err);
/* Go on from a record's last event (seq, t). */
void transcript_continue(struct transcript *t, uint64_t last_seq,
                         int64_t last_t);
/* seq and t first, every string valid UTF-8; takes ev, returns the
 * stamped event (caller deletes). */
cJSON *transcript_stamp(struct transcript *t, cJSON *ev);
/* Append the event just stamped: 0, or -1 when this write failed
 * (t->failed says why; the file keeps its whole lines and nothing
 * more is written: later calls return 0). */
int transcript_write(struct transcript *t, const cJSON *ev);
/* A loop timer's callback once a write failed: tells the frontends and
 * ends the run (exit 1). */
void session_record_failed(void *arg);
void transcript_close(struct transcript *t);
/* Stamp ev (taken), append it to the transcript and return it (caller
 * deletes); a failed write arms the timer that ends the run
 * (session_record_failed). */
cJSON *transcript_record(struct session *s, cJSON *ev);
/* Every string (and key) of item and the items after it made valid
 * UTF-8, in place: what an event holds, or what goes in a request. */
void transcript_sanitize(cJSON *item);

/* cache.c: cache/<hash>.json. */
void cache_save(const char *run_dir, const char *hash,
                const struct llm_result *r);
/* The answer to request hash in run_dir's cache, or NULL (none, or
 * not the answer to that hash). */
cJSON *cache_load(const char *run_dir, const char *hash);
/* A cached answer as the provider would have given it. */
struct llm_result *cache_result(const cJSON *c);

#endif
