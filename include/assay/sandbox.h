/* sandbox.h: where commands run. Each backend (local.c, docker.c,
 * opensandbox.c) fills an ops table inside src/sandbox/; every
 * caller outside goes through the sbx_* functions below. Nothing here
 * blocks the loop: commands stream through it, and every other
 * operation reports through a completion called from the loop, never
 * before the call that began it returns. */
#ifndef ASSAY_SANDBOX_H
#define ASSAY_SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

struct path_mounts;
#include "buf.h"
#include "strv.h"

struct loop;
struct config;
struct sbx;      /* opaque: src/sandbox/internal.h */
struct sbx_exec; /* opaque: each backend's handle */

/* ---- commands ---- */

enum sbx_stream { SBX_STDOUT = 1, SBX_STDERR = 2 };

struct sbx_exit {
	int exit_code; /* -1 when killed by a signal or not started */
	int signal;    /* 0 if none */
	int timed_out;
	int cancelled;
	int64_t duration_ms;
	const char *error; /* could not run at all, else NULL */
};

struct sbx_exec_req {
	const char *command;     /* run with bash -c in /workspace */
	const char *const *argv; /* instead of command (e.g. a kernel) */
	int timeout_s;           /* 0 = the configured default */
	int keep_stdin;          /* stdin is a pipe: see sbx_exec_write */
	/* with keep_stdin: stdin and stdout carry frames (a type byte, a
	 * 4-byte big-endian length, the payload), and a frame of one of
	 * these types on stdout ends the reply to what was written; a
	 * backend without a pipe into the sandbox (opensandbox) carries
	 * each write and its reply in one request. NULL: plain bytes. */
	const char *reply_end;
};

struct sbx_exec_obs {
	void (*on_output)(void *arg, enum sbx_stream s, const char *data,
	                  size_t n);
	/* Called exactly once, from the loop (a stop, and sbx_free, call
	 * it for what they kill); the exec handle is freed after it. */
	void (*on_exit)(void *arg, const struct sbx_exit *ex);
	void *arg;
};

/* ---- completions ---- */

/* The rc of every completion (sbx_done_fn). */
enum sbx_rc {
	SBX_FAILED = -1,   /* err says what failed and what to do */
	SBX_OK = 0,        /* done, whole */
	SBX_TRUNCATED = 1, /* done, but cut at a limit (err says which):
	                      read_file and list hold what fits;
	                      export_tar wrote an archive that lacks
	                      entries beyond the walk's limits */
};

/* Completion of an operation: called exactly once, from the loop,
 * never before the call that began it returns. data: read_file's
 * contents (else NULL); list: list's entries (else NULL), an array of
 * {"path","type":"file|dir|link|other","size","mtime","ctime"} (times
 * in seconds, to the millisecond; ctime moves with a chmod too). err: a human
 * message (cause and fix) when rc is not SBX_OK; with SBX_OK only
 * from sbx_start and sbx_stop, as a warning worth showing (the
 * sandbox works, less well than configured). All three belong to
 * the sandbox and are valid only during the call. A caller reports
 * a failure as an `error` event of category "sandbox". */
typedef void (*sbx_done_fn)(void *arg, int rc, const char *err,
                            struct buf *data, cJSON *list);

/* ---- what a backend can do, for callers that must not compare
 * backend names ---- */
enum sbx_cap {
	/* the workspace is a host directory (sbx_workspace) that outlives
	 * the sandbox: a frontend may watch it (inotify) and open files
	 * in it directly, a resume in place uses it as it is, and a
	 * recorded run's images can be read from it */
	SBX_CAP_HOST_WORKSPACE = 1u << 0,
	/* the workspace lives in the sandbox: it is persisted as an
	 * archive after every call that can change files, and a resume
	 * restores that archive (sbx_import_tar) */
	SBX_CAP_IMPORT_TAR = 1u << 1,
	/* the backend turns cfg->net_allow (a network allowlist) into
	 * egress rules; the others refuse a configuration with one */
	SBX_CAP_NET_ALLOW = 1u << 2,
	/* after a call, only what changed may be persisted: a delta over
	 * the whole archive (sbx_export_delta) */
	SBX_CAP_DELTA = 1u << 3,
};

/* ---- the sandbox ---- */

/* Create (not start) the backend named by cfg->sandbox ("local" when
 * unset). NULL and *err for an unknown or unavailable backend. */
struct sbx *sbx_new(const struct config *cfg, struct loop *l,
                    const char *run_dir, char **err);
/* Release the sandbox, at once (the last resort at teardown: it may
 * wait briefly for the backend, e.g. to remove a container). Before
 * it returns, operations still in flight complete with SBX_FAILED,
 * commands get on_exit (cancelled) and sbx_stop's callers SBX_OK;
 * nothing is called after. Called from inside a completion, the
 * release happens when that completion returns. */
void sbx_free(struct sbx *s);

const char *sbx_name(const struct sbx *s);
/* NULL while the sandbox can work; else why it is gone for good under
 * the run (an OpenSandbox sandbox expired or deleted by someone else):
 * the run cannot go on, a resume can. */
const char *sbx_lost(const struct sbx *s);
unsigned sbx_caps(const struct sbx *s);
/* The caps of the backend a record names ("local", "docker"...), for
 * readers of a recorded run without a sandbox; 0 when unknown. */
unsigned sbx_backend_caps(const char *name);
/* The descriptors a sandbox of the backend cfg->sandbox names holds at
 * most (measured per backend), for fitting sessions to the limit. */
int sbx_backend_fds(const struct config *cfg);
/* The host workspace directory once started, or NULL (see
 * SBX_CAP_HOST_WORKSPACE). */
const char *sbx_workspace(const struct sbx *s);
/* The image and its id, for run_start ("" when the backend has none):
 * docker's image id (sha256:..., from the image inspect the start does
 * anyway); the others report none. */
const char *sbx_image(const struct sbx *s);
const char *sbx_image_id(const struct sbx *s);
/* docker, once started: the image's repo digests (RepoDigests,
 * NAME@sha256:...) as the daemon reports them, empty for an image built
 * here and never pushed or pulled; NULL for the other backends. */
const struct strv *sbx_repo_digests(const struct sbx *s);
/* opensandbox, once started: the image as the server reports the
 * sandbox's (GET /sandboxes/{id}: its lifecycle API names the image,
 * no digest), "" when it named none; NULL for the other backends. */
const char *sbx_image_reported(const struct sbx *s);
/* The configured inputs as run_start records them, once started:
 * [{src (as given), dest, mode "mount" or "copy", and for a mount path
 * (links resolved), kind "file"/"dir", [bytes], mtime}]. Caller frees. */
cJSON *sbx_inputs_record(const struct sbx *s);
/* Slow work of the sandbox's own as it goes (the workspace archive):
 * what ("saving"), subject ("the workspace"), bytes done of total (0:
 * not known yet; done == total: the end), ms since it began; work
 * that failed after showing progress ends with done -1. Set it once,
 * after sbx_new; NULL turns it off. */
typedef void (*sbx_progress_fn)(void *arg, const char *what,
                                const char *subject, double done, double total,
                                int64_t elapsed_ms);
void sbx_set_progress(struct sbx *s, sbx_progress_fn fn, void *arg);
/* How far hashing an input has come (bytes of total; -1: the hashing
 * failed after showing progress). */
typedef void (*sbx_hash_progress_fn)(void *arg, const char *dest, double done,
                                     double total);
/* The SHA-256 of every configured input, read where the sandbox reads
 * it on the host, in a helper process, through the user's cache
 * ($XDG_CACHE_HOME/assay/input-hashes.json: a file unchanged in path,
 * size, mtime and inode is not read again). Once started. list: [{dest,
 * kind "file"/"dir", bytes, [files], mtime, sha256, cached}] in the
 * inputs' order; progress(parg, ...) (may be NULL) while a big one is
 * read. It
 * drains at sbx_stop. */
void sbx_hash_inputs(struct sbx *s, sbx_hash_progress_fn progress, void *parg,
                     sbx_done_fn fn, void *arg);
/* The mounted inputs (assay/path.h), for whatever opens workspace
 * files on the host; empty when none. */
const struct path_mounts *sbx_mounts(const struct sbx *s);

/* Create the sandbox and stage cfg's inputs (stage_inputs 0: an empty
 * workspace, for a resume that restores one). rc SBX_OK (err may hold
 * a warning) or SBX_FAILED (err says why and what to do: the run exits
 * with code 3). */
void sbx_start(struct sbx *s, int stage_inputs, sbx_done_fn fn, void *arg);
/* Stop: commands are killed at once (their on_exit comes from the
 * loop before fn); file operations in flight (read, write, list,
 * fetch) may finish (for up to 10 s), other operations (start,
 * export, import) are cut short; what is cut completes with
 * SBX_FAILED. Then the sandbox is released. rc SBX_OK, or SBX_FAILED
 * when something could not be cleaned up (err says what is left: the
 * next run removes it). Later operations fail; a second sbx_stop gets
 * the first one's result. */
void sbx_stop(struct sbx *s, sbx_done_fn fn, void *arg);

/* Run a command; NULL and *err if it cannot start (then on_exit is
 * not called). */
struct sbx_exec *sbx_exec(struct sbx *s, const struct sbx_exec_req *r,
                          const struct sbx_exec_obs *obs, char **err);
/* Kill the command's whole process tree; on_exit still comes. */
void sbx_exec_cancel(struct sbx_exec *e);
/* Queue stdin bytes (keep_stdin); n == 0 ends stdin once the queue is
 * written. 0, or -1 when stdin is closed or the queue is full. */
int sbx_exec_write(struct sbx_exec *e, const void *data, size_t n);

/* rel is workspace-relative and normalised (path_normalize). */
/* At most max bytes of file rel: SBX_OK with data, SBX_TRUNCATED with
 * the first max bytes, or SBX_FAILED. */
void sbx_read_file(struct sbx *s, const char *rel, size_t max, sbx_done_fn fn,
                   void *arg);
/* Replace file rel (atomically), creating its directories: SBX_OK or
 * SBX_FAILED. */
void sbx_write_file(struct sbx *s, const char *rel, const void *data, size_t n,
                    sbx_done_fn fn, void *arg);
/* The entries under directory rel (recursive: the whole tree), in
 * pre-order with siblings in strcmp order: SBX_OK with list,
 * SBX_TRUNCATED with the first max, or SBX_FAILED. */
void sbx_list(struct sbx *s, const char *rel, int recursive, size_t max,
              sbx_done_fn fn, void *arg);
/* During a list's completion: when the listing was taken (wall-clock
 * seconds, the sandbox's clock) if the backend took it before it was
 * asked for (opensandbox lists the workspace at the end of a python
 * cell, in the cell's own command); else 0: it was taken after the
 * call. */
double sbx_listing_time(const struct sbx *s);
/* Copy workspace file or directory rel to host path dest (confined on
 * both sides: never through a link out of the workspace): SBX_OK or
 * SBX_FAILED. */
void sbx_fetch(struct sbx *s, const char *rel, const char *dest, sbx_done_fn fn,
               void *arg);
/* Persist the whole workspace as a compressed tar at path (zstd for
 * a .zst name: sbx_archive_new; through a
 * temporary file: path is whole or untouched): SBX_OK, SBX_TRUNCATED
 * (written without what lies beyond the walk's limits) or SBX_FAILED. */
void sbx_export_tar(struct sbx *s, const char *path, sbx_done_fn fn, void *arg);
/* Load an archive sbx_export_tar wrote (checked entry by entry) into
 * the workspace of a sandbox started without inputs. Only for a
 * backend with SBX_CAP_IMPORT_TAR (else SBX_FAILED): SBX_OK or
 * SBX_FAILED. */
void sbx_import_tar(struct sbx *s, const char *path, sbx_done_fn fn, void *arg);

/* ---- the persisted workspace: the whole archive and the deltas
 * over it (src/sandbox/layers.c) ---- */

/* The whole archive run_dir holds: RUN/workspace.tar.zst, or
 * RUN/workspace.tar.gz (a run recorded before zstd, or by a libarchive
 * without it); the newer when both are there (a crash between writing
 * one and removing the other). NULL when there is neither. */
char *sbx_archive_find(const char *run_dir);
/* Where a new whole archive of run_dir goes: RUN/workspace.tar.zst
 * where libarchive writes zstd, else RUN/workspace.tar.gz. */
char *sbx_archive_new(const char *run_dir);
/* sbx_archive_find's, or when there is none, sbx_archive_new's: the
 * name to load or to name in a message. */
char *sbx_archive_path(const char *run_dir);
/* A whole archive was written at path: the one under the other name,
 * every delta and the listing of the older one go. */
void sbx_archive_written(const char *path);
/* What names the whole archive as it is ("SIZE-MTIME", hex: its bytes
 * and its mtime in ns; another archive written there has another),
 * or NULL when there is none. Its deltas and its listing carry it. */
char *sbx_archive_tag(const char *archive);
/* Where the listing of what the whole archive holds goes:
 * RUN/workspace.listing.json (src/agent/persist.c writes and reads
 * it). */
char *sbx_archive_listing(const char *archive);

/* What changed since the archive the delta goes over, by workspace
 * path: regular files and links whose content is taken, directories
 * made, and what is gone (the top of each tree deleted). */
struct sbx_delta {
	struct strv files, dirs, gone;
};
/* Persist only d as the delta at path (sbx_delta_next), through a
 * temporary file: path is whole or absent. Only with SBX_CAP_DELTA
 * (else SBX_FAILED). SBX_FAILED also when a file changed again or
 * went meanwhile: the caller then writes the whole archive. */
void sbx_export_delta(struct sbx *s, const char *path,
                      const struct sbx_delta *d, sbx_done_fn fn, void *arg);
/* The deltas over the whole archive as it is, oldest first, into paths
 * (may be NULL), their total size on disk in *bytes (may be NULL):
 * their count, or -1 and *err. */
int sbx_deltas(const char *archive, struct strv *paths, int64_t *bytes,
               char **err);
/* Where the next delta over archive goes (stale deltas, over an older
 * archive, are removed): NULL and *err when there is no whole archive
 * yet or the delta directory cannot be made. */
char *sbx_delta_next(const char *archive, char **err);
/* Remove every delta (a whole archive was written over them). */
void sbx_deltas_clear(const char *archive);

/* 0 when the filesystem path goes to (its nearest existing directory)
 * has room for bytes; else -1 and *err saying what (named by what)
 * holds how much against how much is free, before anything is written
 * (the workspace archive, an output's copy). */
int sbx_room(const char *path, double bytes, const char *what, char **err);

/* ---- for the command line, without a loop (blocking) ---- */

/* What `assay doctor` reports of the backends: findings under
 * headings ("sandbox: docker"), each OK, WARN or FAIL with what was
 * seen and what to do. */
enum sbx_probe_status { SBX_PROBE_OK, SBX_PROBE_WARN, SBX_PROBE_FAIL };

struct sbx_probe_item {
	enum sbx_probe_status status;
	char *name;
	char *detail; /* what was seen */
	char *fix;    /* what to do, or NULL */
};

struct sbx_probe_section {
	char *name;
	struct sbx_probe_item *items;
	size_t n;
};

struct sbx_probe {
	struct sbx_probe_section *v;
	size_t n;
	/* facts the report carries besides (the local sandbox's python
	 * and libraries: {"python": {...}}), or NULL */
	cJSON *facts;
};

/* Probe the backends, in the backend table's order: the one
 * cfg->sandbox names must work (what fails is FAIL), the others that
 * can be checked without being chosen are checked too (what fails is
 * WARN); requests to a daemon or server are bounded by timeout_ms. */
void sbx_probe(const struct config *cfg, long timeout_ms, struct sbx_probe *p);
void sbx_probe_free(struct sbx_probe *p);
/* Make dst (defaults) name the sandbox src names: the same backend,
 * image and the backend's own settings (its server), for a second,
 * fresh sandbox of the same kind (an eval task's check). */
void sbx_config_inherit(struct config *dst, const struct config *src);
/* Whether a backend of that name exists. */
int sbx_backend_exists(const char *name);
/* The backends' names, for messages: "local, docker or opensandbox"
 * (sep "|": "local|docker|opensandbox"). Caller frees. */
char *sbx_backend_names(const char *sep);

/* Copy the regular files names[0..n) (at most max bytes each) of a
 * workspace archive sbx_export_tar wrote into the empty directory dir,
 * with the assay-archive helper (at most timeout_ms). report gets a
 * "NAME<TAB>why" line for each name not written. 0, or -1 and *err. */
int sbx_archive_members(const char *archive, const char *dir, size_t max,
                        char *const *names, int n, struct buf *report,
                        int timeout_ms, char **err);

#endif
