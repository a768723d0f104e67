/* sandbox.h: where commands run. Each backend (local.c, docker.c,
 * opensandbox.c) fills a struct sbx_ops; the session only talks to this
 * interface. Operations never block the loop for long: exec streams
 * through the loop; file operations report through a callback (a
 * backend may call it before returning). */
#ifndef ASSAY_SANDBOX_H
#define ASSAY_SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "buf.h"

struct loop;
struct config;
struct sbx;
struct sbx_exec;

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
};

struct sbx_exec_obs {
	void (*on_output)(void *arg, enum sbx_stream s, const char *data,
	                  size_t n);
	/* Called exactly once; the exec handle is freed after it. */
	void (*on_exit)(void *arg, const struct sbx_exit *ex);
	void *arg;
};

/* The rc of every completion (sbx_done_fn). */
enum sbx_rc {
	SBX_FAILED = -1,   /* err says what failed and what to do */
	SBX_OK = 0,        /* done, whole */
	SBX_TRUNCATED = 1, /* read_file/list: the result was cut at max
	                      (err says so); data/list hold what fits */
};

/* Completion of an operation. data: read_file contents; list: an
 * array of {"path","type":"file|dir|link|other","size","mtime"}.
 * Both belong to the sandbox and are valid only during the call. */
typedef void (*sbx_done_fn)(void *arg, int rc, const char *err,
                            struct buf *data, cJSON *list);

struct sbx_ops {
	const char *name;
	unsigned caps; /* enum sbx_cap */
	/* Create the sandbox and stage the configured inputs. On failure
	 * *err says why and what to do; the run exits with code 3. */
	int (*start)(struct sbx *s, char **err);
	struct sbx_exec *(*exec)(struct sbx *s, const struct sbx_exec_req *r,
	                         const struct sbx_exec_obs *obs, char **err);
	/* Kill the command's whole process tree; on_exit still comes. */
	void (*cancel)(struct sbx_exec *e);
	int (*exec_write)(struct sbx_exec *e, const void *data, size_t n);
	/* rel is workspace-relative and already normalised. */
	void (*read_file)(struct sbx *s, const char *rel, size_t max,
	                  sbx_done_fn fn, void *arg);
	void (*write_file)(struct sbx *s, const char *rel, const void *data,
	                   size_t n, sbx_done_fn fn, void *arg);
	/* recursive: the whole tree under rel (bounded to max entries). */
	void (*list)(struct sbx *s, const char *rel, int recursive, size_t max,
	             sbx_done_fn fn, void *arg);
	/* Copy workspace file rel to host path dest (confined on both
	 * sides: the copy never follows a link out of the workspace). */
	int (*fetch)(struct sbx *s, const char *rel, const char *dest,
	             char **err);
	/* Persist the whole workspace as a .tar.gz at path. */
	int (*export_tar)(struct sbx *s, const char *path, char **err);
	/* Load a .tar.gz that export_tar wrote (maybe changed since: it
	 * is checked entry by entry) into the workspace of a sandbox just
	 * started without inputs; resume of a backend without a host
	 * workspace. Synchronous, like start. NULL: a backend with a host
	 * workspace directory, which resume uses as it is. */
	int (*import_tar)(struct sbx *s, const char *path, char **err);
	/* Kill everything still running and release the sandbox. */
	void (*stop)(struct sbx *s);
	void (*destroy)(struct sbx *s);
};

struct sbx {
	const struct sbx_ops *ops;
	struct loop *loop;
	const struct config *cfg;
	char *run_dir;
	char *workspace; /* host directory for local; NULL if remote */
	char *image;     /* for run_start */
	char *image_id;
	void *priv;
};

extern const struct sbx_ops sbx_local_ops;
extern const struct sbx_ops sbx_docker_ops;

/* --- the interface every caller outside src/sandbox/ uses ----------
 * Every operation is asynchronous: its completion fn is called exactly
 * once, from the loop, never before the call returns (so a caller may
 * free nothing it still needs in fn until then). What the backend does
 * meanwhile (an HTTP request, a helper process) runs on the loop or in
 * a child the loop reaps: the loop is never blocked. */

/* What a backend can do, for callers that must not compare names. */
enum sbx_cap {
	/* the workspace is a host directory (sbx_workspace): a frontend
	 * may watch it and open files in it directly */
	SBX_CAP_HOST_WORKSPACE = 1u << 0,
	/* the workspace survives the sandbox on the host, so a resume in
	 * place uses it as it is; else the archive is restored
	 * (sbx_import_tar) and persisted after every call that can
	 * change files */
	SBX_CAP_IMPORT_TAR = 1u << 1,
};

const char *sbx_name(const struct sbx *s);
unsigned sbx_caps(const struct sbx *s);
/* The caps of the backend a record names ("local", "docker"...), for
 * readers of a recorded run without a sandbox; 0 when unknown. */
unsigned sbx_backend_caps(const char *name);
/* The host workspace directory, or NULL (SBX_CAP_HOST_WORKSPACE). */
const char *sbx_workspace(const struct sbx *s);
/* The image and its id, for run_start ("" when the backend has none). */
const char *sbx_image(const struct sbx *s);
const char *sbx_image_id(const struct sbx *s);

/* Create the sandbox and stage the configured inputs (stage_inputs 0:
 * an empty workspace, for a resume that restores one). On failure err
 * says why and what to do; the run exits with code 3. */
void sbx_start(struct sbx *s, int stage_inputs, sbx_done_fn fn, void *arg);
/* Kill everything still running and release the sandbox. */
void sbx_stop(struct sbx *s, sbx_done_fn fn, void *arg);
struct sbx_exec *sbx_exec(struct sbx *s, const struct sbx_exec_req *r,
                          const struct sbx_exec_obs *obs, char **err);
/* Kill the command's whole process tree; on_exit still comes. */
void sbx_exec_cancel(struct sbx_exec *e);
int sbx_exec_write(struct sbx_exec *e, const void *data, size_t n);
void sbx_read_file(struct sbx *s, const char *rel, size_t max, sbx_done_fn fn,
                   void *arg);
void sbx_write_file(struct sbx *s, const char *rel, const void *data, size_t n,
                    sbx_done_fn fn, void *arg);
void sbx_list(struct sbx *s, const char *rel, int recursive, size_t max,
              sbx_done_fn fn, void *arg);
/* Copy workspace file rel to host path dest (confined on both sides). */
void sbx_fetch(struct sbx *s, const char *rel, const char *dest,
               sbx_done_fn fn, void *arg);
/* Persist the whole workspace as a .tar.gz at path (through a
 * temporary file: path is whole or absent). */
void sbx_export_tar(struct sbx *s, const char *path, sbx_done_fn fn,
                    void *arg);
/* Load an archive sbx_export_tar wrote (checked entry by entry) into
 * the workspace of a sandbox started without inputs. Only for a
 * backend with SBX_CAP_IMPORT_TAR (else fn gets SBX_FAILED). */
void sbx_import_tar(struct sbx *s, const char *path, sbx_done_fn fn,
                    void *arg);

/* Create (not start) the backend named by cfg->sandbox. */
struct sbx *sbx_new(const struct config *cfg, struct loop *l,
                    const char *run_dir, char **err);
/* Release the sandbox; one still running is stopped at once (the last
 * resort at teardown: it may wait for the backend). */
void sbx_free(struct sbx *s);

/* Copy the configured inputs into a host workspace directory
 * (files and directories; the originals are never touched). */
int sbx_stage_local(const struct config *cfg, const char *workspace,
                    char **err);

#endif
