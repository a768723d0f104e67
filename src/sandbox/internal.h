/* internal.h: what the sandbox layer shares inside itself (private to
 * src/sandbox/ and the assay-archive helper): struct sbx and the ops
 * table a backend fills, the operations in flight (jobs) and how they
 * complete, helper processes run as loop children, a string vector,
 * a confined directory walk, and the host-side file operations on a
 * workspace directory that any backend with a host workspace uses. */
#ifndef ASSAY_SANDBOX_INTERNAL_H
#define ASSAY_SANDBOX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <cjson/cJSON.h>
#include "assay/buf.h"
#include "assay/path.h"
#include "assay/strv.h"
#include "assay/sandbox.h"

struct config;
struct config_input;
struct loop;
struct sbx_job;

/* ---- the backend interface ----
 * Every operation that takes a completion calls it exactly once, from
 * the loop, never before it returns (sbx_later delivers a result known
 * at once). Nothing an operation does may block the loop for more than
 * a few milliseconds: slow work runs in a child (sbx_child) or as a
 * request on the loop. */
struct sbx_ops {
	const char *name;
	unsigned caps; /* enum sbx_cap */
	/* descriptors a sandbox of this backend holds at most while it
	 * runs a session's commands (measured: see where it is set) */
	int fds;
	/* Create the sandbox; stage cfg->inputs when stage_inputs. */
	void (*start)(struct sbx *s, int stage_inputs, sbx_done_fn fn,
	              void *arg);
	struct sbx_exec *(*exec)(struct sbx *s, const struct sbx_exec_req *r,
	                         const struct sbx_exec_obs *obs, char **err);
	void (*cancel)(struct sbx_exec *e);
	int (*exec_write)(struct sbx_exec *e, const void *data, size_t n);
	/* Whether the sandbox has a place to work in now (started, not
	 * gone): sandbox.c refuses the file operations below (read_file
	 * to export_delta) while it has not, with sbx_lost's message or
	 * "sandbox: not running". NULL: the backend checks for itself. */
	int (*ready)(const struct sbx *s);
	/* rel is workspace-relative and already normalised. */
	void (*read_file)(struct sbx *s, const char *rel, size_t max,
	                  sbx_done_fn fn, void *arg);
	void (*write_file)(struct sbx *s, const char *rel, const void *data,
	                   size_t n, sbx_done_fn fn, void *arg);
	void (*list)(struct sbx *s, const char *rel, int recursive, size_t max,
	             sbx_done_fn fn, void *arg);
	void (*fetch)(struct sbx *s, const char *rel, const char *dest,
	              sbx_done_fn fn, void *arg);
	void (*export_tar)(struct sbx *s, const char *path, sbx_done_fn fn,
	                   void *arg);
	/* NULL without SBX_CAP_IMPORT_TAR. */
	void (*import_tar)(struct sbx *s, const char *path, sbx_done_fn fn,
	                   void *arg);
	/* NULL without SBX_CAP_DELTA. */
	void (*export_delta)(struct sbx *s, const char *path,
	                     const struct sbx_delta *d, sbx_done_fn fn,
	                     void *arg);
	/* Begin stopping: kill the commands now (their on_exit follows
	 * from the loop), let the file operations drain (sbx_drain),
	 * release, then report with sbx_stopped. Called once. */
	void (*stop)(struct sbx *s);
	/* Release at once, blocking briefly if it must (sbx_free); the
	 * jobs are gone already. */
	void (*destroy)(struct sbx *s);
	/* For `assay doctor` (blocking, no loop): whether this backend can
	 * work here, as sections of findings (sbx_probe_section,
	 * sbx_probe_add); required: it is the one chosen (what fails is
	 * then FAIL, else WARN). NULL: nothing to check. */
	void (*probe)(const struct config *cfg, int required, long timeout_ms,
	              struct sbx_probe *p);
	/* probe it only when it is the one chosen (it needs a server the
	 * user names); else it is probed whichever is chosen */
	int probe_chosen_only;
	/* Copy into dst the settings of this backend's own that src holds
	 * (sbx_config_inherit); NULL: it has none. */
	void (*config_copy)(struct config *dst, const struct config *src);
};

extern const struct sbx_ops sbx_local_ops;
extern const struct sbx_ops sbx_docker_ops;
extern const struct sbx_ops sbx_opensandbox_ops;

/* The sandbox. Only sandbox.c writes the fields below priv. */
struct sbx {
	const struct sbx_ops *ops;
	struct loop *loop;
	const struct config *cfg;
	char *run_dir;
	char *workspace; /* host directory, or NULL (remote) */
	char *image;     /* for run_start */
	char *image_id;
	/* docker: the image's RepoDigests (sbx_repo_digests), else NULL */
	struct strv *repo_digests;
	/* opensandbox: the image as its server reports the sandbox's
	 * (sbx_image_reported), else NULL */
	char *image_reported;
	/* the inputs mounted read-only, not copied (mounts.c); their
	 * table as JSON for the helper's --mounts, or NULL when none */
	struct path_mounts mounts;
	char *mounts_json;
	/* why the sandbox is gone for good under the run (the server
	 * reaped it), or NULL: sbx_lost */
	char *lost;
	double listed_at; /* the completion's job's taken (sbx_job_end) */
	sbx_progress_fn progress; /* sbx_set_progress, or NULL */
	void *progress_arg;
	void *priv; /* the backend's */
	struct sbx_job *jobs;
	int stopping, stopped;
	struct sbx_stop_wait *stop_waits;
	int stop_rc;
	char *stop_err;
	uint64_t stop_timer;
	void (*drain_then)(struct sbx *s);
	uint64_t drain_timer, drain_fire;
	int64_t drain_ms;
	int drain_cut;    /* the jobs that do not drain are cut */
	int depth;        /* inside a completion sandbox.c delivers */
	int free_pending; /* sbx_free called from inside one */
	int releasing;    /* inside sbx_free */
};

/* Every backend's exec handle starts with this (sbx_exec_cancel and
 * sbx_exec_write find the backend through it). */
struct sbx_exec {
	struct sbx *s;
};

/* ---- operations in flight ----
 * A backend registers each operation it has begun as a job, so that
 * sbx_stop can let it finish or cut it short and sbx_free can end it. */
struct sbx_job {
	struct sbx *s;
	struct sbx_job *next;
	const char *what; /* "the listing": for "stopped before ..." */
	int drain;        /* sbx_stop lets it finish (a file operation) */
	double taken;     /* a listing taken ahead: sbx_listing_time */
	sbx_done_fn fn;
	void *arg;
	/* End what the job runs (children killed and reaped, requests
	 * cancelled, temporary files removed) and free it; no callback. */
	void (*abort)(struct sbx_job *j);
};

void sbx_job_begin(struct sbx *s, struct sbx_job *j, const char *what,
                   int drain, sbx_done_fn fn, void *arg,
                   void (*abort)(struct sbx_job *j));
/* Unlink j and call its completion. The last thing that may touch s:
 * fn may free the sandbox. The caller frees j afterwards. */
void sbx_job_end(struct sbx_job *j, int rc, const char *err, struct buf *data,
                 cJSON *list);
/* Deliver a result known now from the loop. Takes err and list; data
 * (may be NULL) is moved out (left empty). */
void sbx_later(struct sbx *s, sbx_done_fn fn, void *arg, int rc, char *err,
               struct buf *data, cJSON *list);
/* sbx_later for a listing the backend took before it was asked for,
 * at wall-clock time taken (the sandbox's clock): sbx_listing_time
 * says so during the completion. */
void sbx_later_listing(struct sbx *s, sbx_done_fn fn, void *arg, int rc,
                       char *err, cJSON *list, double taken);
/* For stop: jobs that drain may finish for at most ms; then the rest
 * (and at once those that do not drain) complete with SBX_FAILED and
 * are aborted, and then(s) is called from the loop. */
void sbx_drain(struct sbx *s, int64_t ms, void (*then)(struct sbx *s));
/* The backend has stopped (rc and a copy of err for sbx_stop's
 * callers); they hear it from the loop. */
void sbx_stopped(struct sbx *s, int rc, const char *err);
/* Around a backend's own loop over callbacks (on_exit of what a stop
 * kills): an sbx_free from inside waits for sbx_unhold, which says 1
 * when it has freed s (touch nothing of it then). */
void sbx_hold(struct sbx *s);
int sbx_unhold(struct sbx *s);

/* ---- a probe's findings (probe.c) ---- */

/* A new section of p named name; findings go into the last one. */
void sbx_probe_section(struct sbx_probe *p, const char *name);
/* A finding of the last section; takes detail and fix (fix may be
 * NULL). */
void sbx_probe_add(struct sbx_probe *p, enum sbx_probe_status st,
                   const char *name, char *detail, char *fix);

/* ---- helper processes on the loop (child.c) ---- */

struct sbx_child;

/* stdout of a child: a pipe whose bytes go to on_out. */
#define SBX_CHILD_PIPE (-2)
#define SBX_CHILD_ERR_MAX 4096  /* stderr kept, the rest dropped */
#define SBX_CHILD_GRACE_MS 2000 /* pipes open after the exit */

struct sbx_child_spec {
	char *const *argv; /* argv[0] is the program */
	char *const *envp; /* NULL: assay's environment */
	int in_fd;         /* stdin (not taken); -1: /dev/null */
	/* instead of in_fd: stdin is a pipe the loop feeds with these
	 * bytes, then closes (the caller keeps them until on_exit) */
	const char *in_data;
	size_t in_len;
	int out_fd;         /* stdout (not taken); -1: /dev/null; or
	                     * SBX_CHILD_PIPE */
	int64_t timeout_ms; /* then it is killed; 0: none */
	void (*on_out)(void *arg, const char *data, size_t n);
	/* Once: the child has been reaped and its pipes are at EOF. */
	void (*on_exit)(void *arg, struct sbx_child *c);
	void *arg;
};

/* posix_spawn sp->argv on the loop. NULL and *err if it cannot. */
struct sbx_child *sbx_child_spawn(struct loop *l,
                                  const struct sbx_child_spec *sp, char **err);
/* Watch a process spawned elsewhere (pid; err_fd its stderr, taken;
 * kill_group: kill -pid as well). */
struct sbx_child *sbx_child_adopt(struct loop *l, pid_t pid, int err_fd,
                                  int kill_group,
                                  const struct sbx_child_spec *sp);
/* Kill it now (on_exit still comes). */
void sbx_child_kill(struct sbx_child *c);
/* Kill, reap (waiting briefly) and free without on_exit. NULL ok. */
void sbx_child_free(struct sbx_child *c);
/* After on_exit: whether it exited 0; its status; timed out. */
int sbx_child_ok(const struct sbx_child *c);
int sbx_child_code(const struct sbx_child *c); /* exit code, -1 if killed */
int sbx_child_timed_out(const struct sbx_child *c);
pid_t sbx_child_pid(const struct sbx_child *c);
/* The tail of its stderr (SBX_CHILD_ERR_MAX bytes at most). */
const struct buf *sbx_child_stderr(const struct sbx_child *c);
/* Why it failed (NULL when it did not): the last line of its stderr,
 * else how it ended; name says who for the latter. */
char *sbx_child_error(const struct sbx_child *c, const char *name);
/* Log its stderr as "name: line" (name NULL: the line alone);
 * assay-archive's log lines keep their level. */
void sbx_child_log(const struct sbx_child *c, const char *name);

/* `assay-archive ARGS...` (ASSAY_ARCHIVE_BIN or beside assay) with a
 * clean environment unless keep_env; spec's argv is ignored. */
struct sbx_child *sbx_archive_spawn(struct loop *l, char *const *args,
                                    int keep_env,
                                    const struct sbx_child_spec *sp,
                                    char **err);
/* Where the assay-archive helper is: $ASSAY_ARCHIVE_BIN, else beside
 * the running binary. NULL if /proc/self/exe cannot be read. */
char *sbx_archive_helper(void);
/* Start the spare assay-archive on l if there is none (child.c): the
 * next sbx_archive_spawn that can use it skips the helper's start.
 * ASSAY_NO_SPARE set: never. */
void sbx_archive_warm(struct loop *l);
/* Kill and reap l's spare and stop starting new ones (a sandbox on l
 * is freed). */
void sbx_archive_spare_drop(struct loop *l);

/* ---- a listing as JSON lines from a helper (listing.c) ---- */

struct sbx_listing {
	cJSON *list; /* the entries so far */
	size_t n, max;
	struct buf line; /* the line being read */
	int bad;         /* not a listing of at most max entries */
};

void sbx_listing_init(struct sbx_listing *l, size_t max);
/* Bytes of the helper's stdout, split anywhere: -1 once they are not
 * JSON objects, one a line, at most max of them. */
int sbx_listing_feed(struct sbx_listing *l, const char *data, size_t n);
void sbx_listing_free(struct sbx_listing *l);
/* A helper's progress lines ({"progress": subject, "done", "total"},
 * fed to l as they come) to the sandbox's progress hook as what; t0:
 * when the work began. Anything else stops the relaying, never the
 * work. */
void sbx_progress_feed(struct sbx *s, struct sbx_listing *l, const char *what,
                       int64_t t0, const char *data, size_t n);
/* The work whose progress l relayed failed: its end (done -1), so no
 * frontend goes on showing it. */
void sbx_progress_cut(struct sbx *s, const struct sbx_listing *l,
                      const char *what);
/* The docker fileop's NUL-separated "%y %s %T@ %C@ %P" records of the tree
 * under prefix ("" for the root) as the sorted listing, at most max
 * entries (*truncated set when cut, or when full: the records were
 * cut already). For the helper's sortlist. */
cJSON *sbx_listing_sort(const char *data, size_t len, int full,
                        const char *prefix, size_t max, int *truncated);

/* ---- the host workspace (hostfs.c, stage.c, archive.c) ---- */

/* Copy everything from in (at its offset) to out. -1 with errno set. */
int sbx_copy_data(int in, int out);

/* A walk of a directory tree that never follows a symlink: parents
 * before children, siblings in strcmp order. visit returns <0 to abort
 * (with *err set), 0 to go on (descending into a directory), 1 to skip
 * a directory's contents, 2 to stop the whole walk. */
struct sbx_walk {
	int (*visit)(struct sbx_walk *w, int dirfd, const char *name,
	             const char *path, const struct stat *st);
	void *arg;
	int recursive;
	int max_depth;   /* deeper directories are not entered */
	size_t max_held; /* names held in memory at once, all levels */
	size_t held;
	/* mount points (sandbox/ mounted inputs) are visited and entered
	 * as their sources (visit gets dirfd AT_FDCWD and the source's
	 * path as name), their hidden paths left out; or, with
	 * skip_mounts, left out (the archive) */
	const struct path_mounts *mounts;
	int skip_mounts;
	int truncated; /* a limit cut the walk short */
	char **err;
};

/* Walk the directory dirfd (not taken); paths are prefix/name, or name
 * when prefix is "". 0 or -1. */
int sbx_walk(struct sbx_walk *w, int dirfd, const char *prefix);

/* File operations on the host workspace opened as root_fd; rel is
 * normalised and every open is confined beneath root_fd, or beneath
 * a mount's source for a path in a mounted input (m: the mounts, may
 * be NULL; they are read-only). */

/* Read at most max bytes into *out (initialised here): SBX_OK, or
 * SBX_TRUNCATED when cut at max (*err says so), or SBX_FAILED. */
int sbx_host_read(int root_fd, const struct path_mounts *m, const char *rel,
                  size_t max, struct buf *out, char **err);
/* Replace rel atomically (temporary file + rename in the same
 * directory), creating parent directories. */
int sbx_host_write(int root_fd, const struct path_mounts *m, const char *rel,
                   const void *data, size_t n, char **err);
/* One entry of a listing as the list op reports it. */
cJSON *sbx_host_entry(const char *path, const struct stat *st);
/* A file's mtime as the listings, run_start and input_hashes record
 * it: seconds, to the millisecond. */
double sbx_mtime(const struct stat *st);
/* Entries under rel as {"path","type","size","mtime"} (path relative
 * to the root; mtime in seconds with a fraction), pre-order with
 * siblings sorted, at most max of them (*truncated set if cut). Each
 * goes to fn (which takes it) when fn is set, else into the array
 * returned. NULL (and *err) on failure. */
cJSON *sbx_host_list(int root_fd, const struct path_mounts *m, const char *rel,
                     int recursive, size_t max, int *truncated,
                     void (*fn)(void *arg, cJSON *entry), void *arg,
                     char **err);
/* Copy rel (a file, or a directory of files) to the host path dest. */
int sbx_host_fetch(int root_fd, const struct path_mounts *m, const char *rel,
                   const char *dest, char **err);
/* Give a, an archive being written to path, its compression: zstd
 * when the file's name has ".tar.zst" (NAME.tar.zst or its temporary
 * NAME.tar.zst.tmp.PID), else gzip (sbx_archive_new picks the name). */
struct archive;
int sbx_archive_filter(struct archive *a, const char *path);
/* Whether libarchive writes zstd (decided at build time: CMakeLists.txt,
 * ASSAY_ARCHIVE_ZSTD; assay itself never calls libarchive). */
int sbx_archive_zstd(void);
/* Write the tree under root_fd to path as a compressed pax tar archive
 * (symlinks stored as links; the mounts m left out: the run did not
 * make them), through a temporary file: SBX_OK, or
 * SBX_TRUNCATED when the walk's limits left entries out (*err says
 * so; the archive is written), or SBX_FAILED. */
/* The archive's progress: bytes of the files' data written, of
 * total (what the room check counted). */
typedef void (*sbx_tar_progress_fn)(double done, double total);
int sbx_host_export_tar(int root_fd, const struct path_mounts *m,
                        const char *path, sbx_tar_progress_fn progress,
                        char **err);
/* Copy the inputs into a host workspace directory (files and
 * directories; the originals are never touched). out_dir (may be
 * NULL) is never copied in. */
int sbx_stage_inputs(const struct config_input *in, size_t n,
                     const char *out_dir, const char *workspace, char **err);

/* ---- mounted inputs (mounts.c) ---- */

/* The mount table from the configured inputs that are not copies
 * (s->mounts, s->mounts_json), and their placeholders in the host
 * workspace ws_fd: an empty file (mode 0444) or directory at each
 * mount point, made here unless one is there already (ws_fd -1: no
 * host workspace, the docker daemon makes them). 0, or -1 and *err
 * naming the input and what to do. */
int sbx_mounts_prepare(struct sbx *s, int ws_fd, char **err);
/* Whether the configured input i is mounted (not staged as a copy). */
int sbx_input_mounted(const struct sbx *s, size_t i);
/* Remove the placeholders this sandbox made (once its commands are
 * gone), leaving whatever else is there. */
void sbx_mounts_release(struct sbx *s);

/* ---- the local backend's /etc (etc.c) ---- */

/* Build the directory the local sandbox binds at /etc. */
int sbx_etc_snapshot(const char *dir, int network, char **err);
/* A short hash of what a snapshot depends on. */
char *sbx_etc_key(int network);
/* /etc directories bound from the host over their mount points in the
 * snapshot (the second list only with network). NULL-terminated. */
extern const char *const sbx_etc_binds[];
extern const char *const sbx_etc_net_binds[];

#endif
