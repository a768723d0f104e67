/* docker_internal.h: the pieces of the docker backend (private to
 * src/sandbox/): where the daemon is and which API version to speak
 * (docker_api.c), the 8-byte-header stream demultiplexer
 * (docker_frames.c), the exec machinery (docker_exec.c), the file
 * operations (docker_files.c) and the tar work done in the
 * assay-archive helper (docker_tar.c, never linked into assay). */
#ifndef ASSAY_SANDBOX_DOCKER_INTERNAL_H
#define ASSAY_SANDBOX_DOCKER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>
#include "assay/buf.h"
#include "assay/sandbox.h"

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
 * max_body) and handed to on_done; with it, the body of a 2xx reply
 * streams there instead. sync: run to the end before dk_send returns
 * (for start, stop and the end-of-run work), else on the loop. */
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

/* Blocking JSON request: the status (or -1 and *err when the daemon
 * did not answer); *reply gets the parsed body when wanted. */
long dk_json(struct dk_api *a, const char *method, const char *path,
             const char *json, cJSON **reply, char **err);
/* The daemon's {"message": ...} (or the raw body), for errors. */
char *dk_message(long status, const struct buf *body);
/* A URL-encoded copy of s (for query strings). */
char *dk_escape(const char *s);

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

struct dk_exec_args {
	const char *const *argv; /* run as is (inside the wrapper) */
	const char *stdin_data;  /* internal execs: fixed stdin, or NULL */
	int keep_stdin;
	int timeout_s;
	/* 0 a command; 1 no wrapper limits; 2 a file operation; 3 the
	 * wrapper in kill mode; 4 argv as is, without the wrapper (the
	 * command runner) */
	int internal;
};

struct docker {
	struct dk_api api;
	char *id;   /* container */
	char *name; /* assay-<run>-<pid> */
	struct sbx_exec *execs;
	unsigned seq; /* exec tags */
	char *script; /* the in-container wrapper (docker_exec.c) */
	int started, stopped, restarting;
	int draining; /* stopping: only the backend's own work runs */
	long mem_mb, cpu_s, fsize_mb;
	int threads;              /* BLAS/OpenMP threads per command */
	char *chunk;              /* raw reads */
	struct dk_runner *runner; /* docker_runner.c */
	/* a restart under way (docker_exec.c): its request or retry */
	struct dk_call *restart_call;
	uint64_t restart_timer;
	int restart_tries; /* -1 while the kill is on its way */
};

/* docker_exec.c */
struct sbx_exec *dk_exec_start(struct sbx *s, const struct dk_exec_args *a,
                               const struct sbx_exec_obs *obs, int sync,
                               char **err);
void dk_exec_cancel(struct sbx_exec *e);
int dk_exec_write(struct sbx_exec *e, const void *data, size_t n);
/* Kill every exec (on_exit called for each); file operations still
 * running are run again to their end first (see replay). */
void dk_exec_stop_all(struct sbx *s);
/* Kill the container and start it again: the last resort when a
 * command cannot be stopped from inside (a process bomb). On the loop:
 * it returns at once (-1 and *err only when the kill cannot be sent);
 * commands started meanwhile wait for it (d->restarting). */
int dk_restart(struct sbx *s, char **err);
/* Run argv to its end, blocking; stdout into out (at most max), exit
 * code into *code. Stderr goes to *err when the command fails. */
int dk_run_sync(struct sbx *s, const char *const *argv, struct buf *out,
                size_t max, int *code, char **err);
extern const char dk_fileop_script[]; /* docker_scripts.c */
extern const char dk_wrapper_script[];
extern const char dk_runner_script[];
/* Finish e now with error why (the runner's own exec on a protocol
 * error: closing its connection ends the runner). */
void dk_exec_drop(struct sbx_exec *e, const char *why);
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

/* docker_files.c */
void dk_read_file(struct sbx *s, const char *rel, size_t max, sbx_done_fn fn,
                  void *arg);
void dk_write_file(struct sbx *s, const char *rel, const void *data, size_t n,
                   sbx_done_fn fn, void *arg);
void dk_list(struct sbx *s, const char *rel, int recursive, size_t max,
             sbx_done_fn fn, void *arg);
int dk_fetch(struct sbx *s, const char *rel, const char *dest, char **err);
int dk_export_tar(struct sbx *s, const char *path, char **err);
/* Load a persisted workspace.tar.gz into /workspace (assay-archive
 * restore checks it and writes a clean tar, PUT archive). */
int dk_import_tar(struct sbx *s, const char *path, char **err);
/* Stage the configured inputs: assay-archive packs, PUT archive. */
int dk_stage(struct sbx *s, char **err);
/* A tar stream (from fd) handed to `assay-archive extract`; see
 * docker_tar.c. Used by fetch; the tests feed it hostile tars. */
int dk_extract_fd(int fd, const char *name, const char *dest, char **err);

/* docker_tar.c (the helper only) */
int dk_tar_pack(int out_fd, char *const *specs, int n, char **err);
int dk_tar_extract(int in_fd, const char *name, const char *dest, char **err);
int dk_tar_repack(int in_fd, const char *strip, const char *out_path,
                  char **err);

/* Run `assay-archive ARGS...`: stdin from in_fd (>= 0), or a pipe
 * whose write end lands in *to_child; stdout to a pipe (*from_child)
 * or /dev/null; stderr to a pipe (*err_fd). -1 + *err if it cannot. */
pid_t dk_spawn_helper(char *const *args, int in_fd, int *to_child,
                      int *from_child, int *err_fd, char **err);
/* Wait for the helper (closes err_fd); 0 when it succeeded, else -1
 * and its message. */
int dk_wait_helper(pid_t pid, int err_fd, char **err);

#endif
