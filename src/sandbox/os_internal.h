/* os_internal.h: the pieces of the opensandbox backend (private to
 * src/sandbox/): requests to the lifecycle server and to a sandbox's
 * execd (opensandbox.c), commands through execd's event stream
 * (os_exec.c), a kernel's stdin and stdout in them (os_cell.c), the
 * workspace's files (os_files.c) and what doctor asks the server
 * (os_doctor.c). */
#ifndef ASSAY_SANDBOX_OS_INTERNAL_H
#define ASSAY_SANDBOX_OS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "assay/buf.h"
#include "assay/sandbox.h"
#include "assay/strv.h"
#include "sandbox/internal.h"
#include "sandbox/xfer.h"

struct fileop_args;
struct http;
struct http_xfer;

#define OS_EXECD_PORT 44772

struct os_exec;

/* The listing a python cell's command took of the whole workspace at
 * its end (os_cell.c), for the os_list that follows the call. */
struct os_prelist {
	struct buf recs; /* records as fileop's list gives them */
	double taken;    /* when (wall clock, the sandbox's) */
	int64_t at;      /* when it arrived (now_ms) */
	unsigned gen;    /* o->gen when the cell began */
	size_t max;      /* the entries it was asked for */
	int valid;
};

struct osbx {
	struct http *http;
	char *server;     /* host:port as configured, for messages */
	char *api;        /* http://host:port/v1 */
	char *key;        /* OPEN_SANDBOX_API_KEY, or NULL */
	char *id;         /* the sandbox, once created */
	char *execd;      /* http://endpoint (no trailing slash) */
	struct strv hdrs; /* the endpoint's headers, "Name: value" */
	char *hdr_file;   /* the same for the helpers (0600, run dir) */
	int64_t ttl_s;    /* the sandbox timeout sent, renewed */
	uint64_t renew_timer, stop_timer;
	struct os_call *renew_call, *delete_call;
	struct os_call *calls; /* every request in flight */
	int renewals;
	int started, draining, expired;
	struct os_exec *execs;
	unsigned seq;
	long threads;
	char mark[17]; /* ASSAY_SANDBOX_MARK: which sandbox execd is */
	/* one more each time a command that may change the workspace
	 * starts or ends, or a write, import or staging begins */
	unsigned gen;
	size_t list_max; /* the largest os_list of the whole workspace */
	struct os_prelist pre;
};

static inline struct osbx *os_of(struct sbx *s)
{
	return s->priv;
}

/* ---- requests (opensandbox.c) ---- */

/* OPEN_SANDBOX_DOMAIN-style "host:port" or a URL: *server as given
 * (for messages), *api the base (http://host:port/v1). 0, or -1 and
 * *err. */
int os_server_url(const char *v, char **server, char **api, char **err);
/* The server's words for an error answer ({"code","message"}, a 422's
 * detail, or the body's start). */
char *os_server_message(long status, const struct buf *body);

struct os_call;
/* status 0 and err set when no answer came; for a status of 300 and
 * over, err is the server's message ({"code","message"} or a 422's
 * detail); reply: the body parsed (NULL when empty or not JSON). */
typedef void (*os_reply_fn)(void *arg, long status, cJSON *reply,
                            const char *err);
/* A JSON request to the lifecycle API (path after /v1) or, execd 1, to
 * the sandbox's execd (its headers added). NULL and *err when it
 * cannot be sent. */
struct os_call *os_call(struct sbx *s, int execd, const char *method,
                        const char *path, const char *json, long timeout_ms,
                        os_reply_fn fn, void *arg, char **err);
void os_call_cancel(struct os_call *c);
/* The headers an execd request carries, NULL-terminated (the caller
 * frees the array, not the strings). */
const char **os_execd_headers(struct sbx *s, const char *extra);
/* The sandbox is gone under the run (404 from execd or the lifecycle
 * API while it should live): the message that says so. */
char *os_expired_msg(struct sbx *s);
/* Say so once (sbx_lost, the log); later operations fail with it. */
void os_mark_expired(struct sbx *s);

/* ---- the start (opensandbox.c) ---- */
void os_start(struct sbx *s, int stage_inputs, sbx_done_fn fn, void *arg);
/* A create refused for its networkPolicy (400, the message names it):
 * a server without the egress component (protocols.md E.5). */
int os_policy_refused(long status, const char *err);
/* What to tell the user then: the cause and the two ways on. */
char *os_no_egress_msg(const char *server, const char *why);
/* The warning of a run that sends no policy because the user config
 * says "network_policy": "server" (NULL when it does not apply). */
char *os_server_net_warning(const struct config *cfg);

/* ---- what `assay doctor` asks (os_doctor.c, sbx_ops.probe): whether
 * the server answers and takes the key, and whether it can keep a
 * sandbox off the network ---- */
void os_probe(const struct config *cfg, int required, long timeout_ms,
              struct sbx_probe *p);

/* ---- commands (os_exec.c) ---- */

struct os_exec_args {
	const char *command;     /* bash -c, or */
	const char *const *argv; /* run as is */
	int raw; /* command is the script execd runs, as it is */
	int keep_stdin;
	/* with keep_stdin: stdin and stdout carry frames (a type byte, a
	 * 4-byte big-endian length, the payload) and a frame of one of
	 * these types ends the reply to a write; each write then is one
	 * command that puts it in, brings back its reply and lists the
	 * workspace (os_cell.c). NULL: plain bytes. */
	const char *reply_end;
	int timeout_s;
	int internal; /* a file operation: no limits, kept at stop */
};

struct os_exec *os_exec_start(struct sbx *s, const struct os_exec_args *a,
                              const struct sbx_exec_obs *obs, char **err);
void os_exec_cancel(struct os_exec *e);
/* End e without a word to its observer (a job cut short). NULL ok. */
void os_exec_detach(struct os_exec *e);
int os_exec_write(struct os_exec *e, const void *data, size_t n);
/* Stopping: cancel the commands (internal ones too when all). */
void os_exec_stop(struct sbx *s, int all);
/* Finish every exec at once (sbx_free): on_exit for each. */
void os_exec_free_all(struct sbx *s);
/* Whether a command that may change the workspace runs now (a python
 * kernel between cells does not count). */
int os_exec_busy(struct sbx *s);
/* The command's stdout, base64 lines decoded as they come (the file
 * operations read binary output that way). */
struct os_b64 {
	unsigned acc;
	int bits;
	struct buf out;
	int bad;
};
void os_b64_feed(struct os_b64 *b, const char *data, size_t n);
/* Standard base64 of n bytes into a new string. */
char *os_b64_encode(const void *data, size_t n);
/* s single-quoted for the shell. */
char *os_quote(const char *s);

/* ---- a kernel's stdin and stdout (os_cell.c) ---- */

struct os_cell;

/* Append to b the pipeline that runs run (shell words) between the
 * feeder of its stdin and the relay of its stdout, in
 * /tmp/.assay-io/tag; reply_end as os_exec_args has it. */
void os_cell_pipeline(struct buf *b, const char *tag, const char *run,
                      const char *reply_end);
/* What a cell command tells the framed exec it writes to. */
struct os_cell_hooks {
	/* a line of the reply, "OFFSET BASE64" as the relay sends it */
	void (*line)(void *arg, const char *line);
	/* the cell lets go of the exec: its reply is in, or its command
	 * ended first; why: NULL, or why the request did not go in */
	void (*done)(void *arg, const char *why);
	void *arg;
};
/* Whether n bytes fit a cell command's text (else: by upload). */
int os_cell_fits(const void *data, size_t n);
/* Put data in as request n of the framed exec in /tmp/.assay-io/tag by
 * a cell command, which brings its reply back through h and lists the
 * workspace at its end (o->pre). NULL and *err when it cannot begin. */
struct os_cell *os_cell_start(struct sbx *s, const char *tag, unsigned n,
                              const void *data, size_t len,
                              const struct os_cell_hooks *h, char **err);
/* End a cell command at once, without a word (its exec is gone). */
void os_cell_detach(struct os_cell *c);
/* Whether its listing came back whole. */
int os_cell_listed(const struct os_cell *c);

/* ---- files (os_files.c) ---- */

void os_read_file(struct sbx *s, const char *rel, size_t max, sbx_done_fn fn,
                  void *arg);
void os_write_file(struct sbx *s, const char *rel, const void *data, size_t n,
                   sbx_done_fn fn, void *arg);
void os_list(struct sbx *s, const char *rel, int recursive, size_t max,
             sbx_done_fn fn, void *arg);
/* The fileop's list of the whole workspace as the largest os_list of
 * it asked for so far (its count, a->num, and output bound), for the
 * listing a python cell's relay takes at the reply's end: 0, or -1
 * while none was asked for. */
int os_prelist_args(struct sbx *s, struct fileop_args *a);
void os_fetch(struct sbx *s, const char *rel, const char *dest, sbx_done_fn fn,
              void *arg);
void os_export_tar(struct sbx *s, const char *path, sbx_done_fn fn, void *arg);
void os_import_tar(struct sbx *s, const char *path, sbx_done_fn fn, void *arg);
/* Persist only d: a tar of the changed files made in the sandbox,
 * downloaded into `assay-archive delta --tar`. */
void os_export_delta(struct sbx *s, const char *path, const struct sbx_delta *d,
                     sbx_done_fn fn, void *arg);
/* Stage the configured inputs (a tar from `assay-archive pack` uploaded
 * and unpacked in the sandbox; all 0: a resume's, see xfer_pack_args);
 * done(arg, err) once, err taken. The staging, or NULL: nothing to be
 * staged, or (*err set) it cannot begin; done is not called then. */
struct os_fop;
struct os_fop *os_stage(struct sbx *s, int all,
                        void (*done)(void *arg, char *err), void *arg,
                        char **err);
/* End a staging without a word (its start was cut short). */
void os_fop_cancel(struct os_fop *op);

#endif
