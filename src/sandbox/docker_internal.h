/* docker_internal.h: the pieces of the docker backend (private to
 * src/sandbox/): where the daemon is and which API version to speak
 * (docker_api.c), the 8-byte-header stream demultiplexer
 * (docker_frames.c), the start (docker_start.c), the exec machinery
 * (docker_exec.c, its kills and restarts in docker_kill.c, the command
 * runner in docker_runner.c), the file operations (docker_files.c),
 * the tar streams between the daemon and the assay-archive helper
 * (docker_xfer.c, over the shared xfer.c). */
#ifndef ASSAY_SANDBOX_DOCKER_INTERNAL_H
#define ASSAY_SANDBOX_DOCKER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>
#include "assay/buf.h"
#include "assay/sandbox.h"
#include "sandbox/internal.h"
#include "sandbox/xfer.h"

struct http;
struct http_xfer;
struct loop;

/* API versions this code speaks: it needs Init, Mounts and
 * VolumeOptions (1.25+) and knows nothing newer than the maximum. */
#define DK_API_MIN "1.25"
#define DK_API_MAX "1.47"

/* ---- where the daemon is (DOCKER_HOST & co) ---- */

struct dk_endpoint {
	char *host;            /* DOCKER_HOST as understood, for messages */
	char *unix_path;       /* unix socket, or NULL for tcp */
	char *base;            /* URL prefix: http://docker or http(s)://h:p */
	char *ca, *cert, *key; /* TLS files, or NULL */
	int tls, verify;
};

/* docker_host NULL/"" = the default socket; cert_path NULL = ~/.docker
 * (home) when TLS is on; tls_verify non-empty = TLS with server
 * verification (Docker's rule). */
int dk_endpoint_parse(const char *docker_host, const char *cert_path,
                      const char *tls_verify, const char *home,
                      struct dk_endpoint *ep, char **err);
void dk_endpoint_free(struct dk_endpoint *ep);

/* Compare "1.41"-style versions; <0, 0, >0. Garbage compares low. */
int dk_version_cmp(const char *a, const char *b);
/* The version to speak: pinned (DOCKER_API_VERSION) if set and the
 * daemon takes it, else min(DK_API_MAX, the daemon's). server_max is
 * /_ping's Api-Version, server_min /version's MinAPIVersion (either
 * may be NULL when unknown). *out is "1.xx". */
int dk_negotiate(const char *pinned, const char *server_max,
                 const char *server_min, char **out, char **err);

/* ---- the exec stream: [type,0,0,0,size u32 BE] + payload ---- */

struct dk_demux {
	unsigned char hdr[8];
	size_t hdr_len; /* header bytes held */
	uint32_t left;  /* payload bytes still due in this frame */
	int stream;     /* of the current frame */
	int bad;        /* a header that cannot be one was seen */
};

/* stream: 1 stdout, 2 stderr (0, stdin, is reported as stdout; 3,
 * a daemon error, as stderr). */
typedef void (*dk_frame_fn)(void *arg, int stream, const char *data, size_t n);

void dk_demux_init(struct dk_demux *d);
/* Feed bytes as they come, split anywhere; payload pieces go to fn
 * in order. -1 on a header that is not a frame header (the stream is
 * then not multiplexed: the rest is reported as stdout). */
int dk_demux_feed(struct dk_demux *d, const char *data, size_t n,
                  dk_frame_fn fn, void *arg);
/* Between frames (a clean end of stream). */
int dk_demux_idle(const struct dk_demux *d);

/* ---- API calls ---- */

struct dk_api {
	struct dk_endpoint ep;
	char *version; /* "1.41" */
	struct http *http;
	struct loop *loop;
};

struct dk_call;

/* One request. Without on_stream the reply body is collected (up to
 * max_body) and handed to on_done (or, parsed, to on_json); with it,
 * the body of a 2xx reply streams there instead. On the loop, unless
 * sync: run to the end before dk_send returns (only for sbx_free's
 * last resort and `assay doctor`, which have no loop to wait on). */
struct dk_req {
	const char *method;
	const char *path; /* after the version: "/containers/json" */
	const char *json; /* request body, or NULL */
	size_t body_len;  /* of json when it is not a string (a tar) */
	const char *content_type;
	long (*read_body)(char *buf, size_t n, void *arg);
	int (*on_stream)(void *arg, const char *data, size_t n);
	/* status 0 and err set when no reply came; body never NULL. */
	void (*on_done)(void *arg, long status, struct buf *body,
	                const char *err);
	/* Instead of on_done: the body parsed (NULL when empty or not
	 * JSON); err when no answer came (status 0) or, for a status of
	 * 300 and over, the daemon's message. */
	void (*on_json)(void *arg, long status, cJSON *reply, const char *err);
	void *arg;
	size_t max_body; /* 0 = 4 MiB */
	long timeout_ms; /* 0 = none */
	int sync;
	int unversioned; /* /_ping before the version is known */
	/* A response header to keep: its value lands in *header_value
	 * (malloc'd, or NULL) before on_done. */
	const char *header_name;
	char **header_value;
};

/* NULL when it could not start (*err set; on_done is not called);
 * for sync requests the handle is already gone: do not use it. */
struct dk_call *dk_send(struct dk_api *a, const struct dk_req *r, char **err);
/* Stop an async request; on_done is not called. */
void dk_cancel(struct dk_call *c);

/* An asynchronous JSON request (on_json): the call, or NULL and *err
 * when it could not be sent. */
struct dk_call *
dk_json_call(struct dk_api *a, const char *method, const char *path,
             const char *json, long timeout_ms,
             void (*fn)(void *arg, long status, cJSON *reply, const char *err),
             void *arg, char **err);
/* Blocking JSON request (sbx_free, doctor): the status (or -1 and *err
 * when the daemon did not answer); *reply gets the parsed body when
 * wanted. */
long dk_json(struct dk_api *a, const char *method, const char *path,
             const char *json, cJSON **reply, char **err);
/* ---- the raw connection of an exec with stdin (docker_raw.c) ---- */

struct dk_raw;
/* err NULL: connected (dk_raw_fd is the socket; watch it yourself). */
typedef void (*dk_raw_ready_fn)(void *arg, const char *err);
/* Connect (and TLS handshake) on the loop; ready is called once, from
 * the loop, never from here. NULL and *err if it cannot even begin. */
struct dk_raw *dk_raw_connect(struct loop *l, const struct dk_endpoint *ep,
                              const char *url, dk_raw_ready_fn ready, void *arg,
                              char **err);
int dk_raw_fd(const struct dk_raw *r);
/* Bytes sent, 0 when it would block, -1 on error. */
long dk_raw_send(struct dk_raw *r, const void *data, size_t n);
/* Bytes read, 0 at EOF, -2 when it would block, -1 on error. */
long dk_raw_recv(struct dk_raw *r, void *buf, size_t n);
/* Half-close (not over TLS: -1). */
int dk_raw_shutdown_write(struct dk_raw *r);
void dk_raw_free(struct dk_raw *r);

/* ---- the backend's shared state ---- */

/* What an exec is for (dk_exec_args.internal). */
enum dk_kind {
	DK_COMMAND = 0,   /* a command: the wrapper with the limits */
	DK_UNLIMITED = 1, /* the wrapper without limits */
	DK_FILEOP = 2,    /* a file operation (the fileop script) */
	DK_KILLER = 3,    /* the wrapper in kill mode */
	DK_RUNNER = 4,    /* argv as is, without the wrapper */
};

struct dk_exec_args {
	const char *const *argv; /* run as is (inside the wrapper) */
	const char *stdin_data;  /* internal execs: fixed stdin, or NULL */
	int keep_stdin;
	int timeout_s;
	int internal; /* enum dk_kind */
};

struct dk_start;

struct docker {
	struct dk_api api;
	char *id;   /* container */
	char *name; /* assay-<run>-<pid> */
	/* with mounted inputs: the workspace volume's name (<name>-ws), so
	 * it can be seen a second time, without the inputs bound into it,
	 * at DK_WS_BARE (what the archive reads); removed after the
	 * container */
	char *volume;
	int created; /* a create was sent: name may exist on the daemon */
	struct dk_exec *execs;
	unsigned seq; /* exec tags */
	int started, stopped, restarting;
	int draining; /* stopping: only the backend's own work runs */
	long mem_mb, cpu_s, fsize_mb;
	int threads;              /* BLAS/OpenMP threads per command */
	char *chunk;              /* raw reads */
	struct dk_runner *runner; /* docker_runner.c */
	/* a restart under way (docker_kill.c): its request or retry */
	struct dk_call *restart_call;
	uint64_t restart_timer;
	int restart_tries;           /* -1 while the kill is on its way */
	struct dk_call *remove_call; /* the stop's DELETE */
	uint64_t remove_timer;
	uint64_t stop_timer; /* the stop's first step */
	int remove_tries;
};

/* Where the workspace volume is seen without the mounted inputs. */
#define DK_WS_BARE "/.assay-ws"

static inline struct docker *dk_of(struct sbx *s)
{
	return s->priv;
}

/* One exec (docker_exec.c; kills and restarts in docker_kill.c). */
struct dk_exec {
	struct sbx_exec base; /* base.s: the sandbox */
	struct dk_exec *next;
	char tag[32];
	char *id;
	struct dk_call *call;
	struct dk_raw *raw;
	int connecting;     /* raw: connect/handshake under way */
	struct buf head;    /* raw: the response head so far */
	struct buf req;     /* raw: request bytes not yet sent */
	struct buf pending; /* stdin not yet sent */
	int upgraded, close_stdin, stdin_shut;
	struct dk_demux demux;
	struct sbx_exec_obs obs;
	int keep_stdin, internal;
	int timed_out, cancelled, killing, finished, restarted;
	int waiting;       /* started while the container restarts: not sent */
	int feeding, dead; /* inside a feed: free once it returns */
	/* through the runner (docker_runner.c): its id for this command,
	 * the runner's generation, and what to run if it cannot */
	int via_runner;
	uint32_t rid;
	unsigned rgen;
	char **cmd;
	int exit_code, tries;
	uint64_t timer, grace, retry;
	int64_t t0;
	char *error;
};

/* docker_exec.c */
struct dk_exec *dk_exec_start(struct sbx *s, const struct dk_exec_args *a,
                              const struct sbx_exec_obs *obs, char **err);
int dk_exec_write(struct dk_exec *e, const void *data, size_t n);
/* Finish e now with error why (the runner's own exec on a protocol
 * error: closing its connection ends the runner). */
void dk_exec_drop(struct dk_exec *e, const char *why);
/* Finish e without telling its observer (a job cut short). */
void dk_exec_detach(struct dk_exec *e);
/* Deliver on_exit and free e (later, if a feed is running). */
void dk_exec_finish(struct dk_exec *e);
/* Finish e with the error fmt (one %s: detail). */
void dk_exec_fail(struct dk_exec *e, const char *fmt, const char *detail);
/* Submit e (again): through the runner or an exec of its own; -1 and
 * *err when it cannot be sent. */
int dk_exec_submit(struct dk_exec *e, const struct dk_exec_args *a, char **err);
/* An exec of its own for e, even if it went through the runner. */
int dk_exec_create(struct dk_exec *e, const struct dk_exec_args *a, char **err);
/* Stopping: finish every command (cancelled), but the file operations
 * and the runner they go through, which may drain. */
void dk_exec_stop_commands(struct sbx *s);
/* Finish every exec (on_exit called for each). */
void dk_exec_stop_all(struct sbx *s);

/* docker_kill.c */
/* Time out, cancel and kill one exec (by the runner, a killer exec,
 * and when it survives that, a restart of the container). */
void dk_exec_on_timeout(void *arg);
void dk_exec_cancel(struct dk_exec *e);
void dk_exec_kill(struct dk_exec *e);
/* Start the wrapper in kill mode for tag. */
void dk_launch_killer(struct sbx *s, const char *tag);
/* Kill the container and start it again: the last resort when a
 * command cannot be stopped from inside (a process bomb). On the loop:
 * it returns at once (-1 and *err only when the kill cannot be sent);
 * commands started meanwhile wait for it (d->restarting). */
int dk_restart(struct sbx *s, char **err);
/* Stop a restart under way (the sandbox stops). */
void dk_restart_cancel(struct sbx *s);

extern const char dk_wrapper_script[]; /* docker_scripts.c */
extern const char dk_runner_script[];
/* From the runner (docker_runner.c): output of, and the exit code of,
 * the command with runner id rid; the runner of generation gen is gone
 * (started: it had said hello, so its commands may have run). */
void dk_exec_runner_output(struct sbx *s, uint32_t rid, int stream,
                           const char *data, size_t n);
void dk_exec_runner_exit(struct sbx *s, uint32_t rid, int code);
void dk_exec_runner_lost(struct sbx *s, unsigned gen, int started,
                         const char *why);

/* docker_runner.c: commands through one long-lived runner in the
 * container instead of one exec each (ASSAY_DOCKER_EXEC=runner, the
 * default; =exec for an exec per command). */
/* Whether commands should go through the runner now. */
int dk_runner_wanted(struct sbx *s);
/* Start the runner's exec if it is not running (the frames sent
 * before it answers wait in its stdin queue). */
int dk_runner_start(struct sbx *s, char **err);
/* Queue a frame; -1 when there is no runner to take it. *gen gets the
 * runner's generation (for dk_exec_runner_lost). */
int dk_runner_send(struct sbx *s, char type, uint32_t id, const void *p,
                   size_t n, unsigned *gen);
void dk_runner_free(struct sbx *s);
/* Forget the runner (the container is being restarted under it): its
 * end is not counted as a death, and the next command starts another. */
void dk_runner_detach(struct sbx *s);
/* Frame parser, exposed for the unit test: feed bytes split anywhere;
 * fn gets each whole frame; -1 on a frame longer than max. */
struct dk_rframes {
	struct buf in;
};
typedef int (*dk_rframe_fn)(void *arg, char type, uint32_t id, const char *p,
                            size_t n);
int dk_rframes_feed(struct dk_rframes *f, const char *data, size_t n,
                    size_t max, dk_rframe_fn fn, void *arg);

/* docker_probe.c: what `assay doctor` asks the daemon (sbx_ops.probe). */
void dk_probe(const struct config *cfg, int required, long timeout_ms,
              struct sbx_probe *p);

/* docker_start.c: create the container and stage the inputs, on the
 * loop (sbx_start). */
void dk_start(struct sbx *s, int stage_inputs, sbx_done_fn fn, void *arg);

/* docker_files.c */
void dk_read_file(struct sbx *s, const char *rel, size_t max, sbx_done_fn fn,
                  void *arg);
void dk_write_file(struct sbx *s, const char *rel, const void *data, size_t n,
                   sbx_done_fn fn, void *arg);
void dk_list(struct sbx *s, const char *rel, int recursive, size_t max,
             sbx_done_fn fn, void *arg);
void dk_fetch(struct sbx *s, const char *rel, const char *dest, sbx_done_fn fn,
              void *arg);

/* docker_xfer.c: a tar stream between the archive API and the helper,
 * as two loop children (`assay-archive http` and the tar side). */
/* GET .../archive?path=cpath into `assay-archive ARGS...` (extract,
 * repack); tmp_base: ARGS's output, whose temporary a kill leaves. */
struct xfer *dk_xfer_get(struct sbx *s, const char *cpath, char *const *args,
                         const char *tmp_base,
                         void (*done)(void *arg, char *err), void *arg,
                         char **err);
/* A PUT's progress, relayed to the sandbox's hook: what ("staging"),
 * subject ("the inputs"), the total bytes (0: not known ahead). */
struct dk_put_progress {
	const char *what, *subject;
	double total;
};
/* PUT the tar `assay-archive ARGS...` writes (pack, restore) into
 * /workspace; what names it for errors ("stage the inputs"); p (may
 * be NULL) asks for progress. */
struct xfer *dk_xfer_put(struct sbx *s, char *const *args, const char *what,
                         const struct dk_put_progress *p,
                         void (*done)(void *arg, char *err), void *arg,
                         char **err);
void dk_export_tar(struct sbx *s, const char *path, sbx_done_fn fn, void *arg);
/* Persist only what changed (docker_delta.c): `assay-archive delta`
 * reads each changed file from the archive API into the delta. */
void dk_export_delta(struct sbx *s, const char *path, const struct sbx_delta *d,
                     sbx_done_fn fn, void *arg);
/* The options of `assay-archive http` that reach the daemon of s
 * (--unix, TLS files), appended to a. */
void dk_http_opts(struct sbx *s, struct strv *a);
/* Load a persisted workspace.tar.gz into /workspace (assay-archive
 * restore checks it and writes a clean tar, PUT archive). */
void dk_import_tar(struct sbx *s, const char *path, sbx_done_fn fn, void *arg);
/* Stage the configured inputs that are not bound (all 0, a resume:
 * only those the run had bound, which the restored workspace lacks):
 * assay-archive packs, PUT archive. NULL (and no *err) when there is
 * nothing to stage. */
struct xfer *dk_stage(struct sbx *s, int all,
                      void (*done)(void *arg, char *err), void *arg,
                      char **err);
/* A tar stream (from fd) handed to `assay-archive extract`, waited
 * for: for the tests, which feed it hostile tars. */
int dk_extract_fd(int fd, const char *name, const char *dest, char **err);

#endif
