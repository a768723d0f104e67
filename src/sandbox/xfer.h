/* xfer.h: what the backends whose workspace lives elsewhere (docker,
 * opensandbox) share to move it (xfer.c; private to src/sandbox/ and
 * the assay-archive helper): a tar stream between a server and the
 * helper, the inputs' pack arguments, a delta's records, and the HTTP
 * pieces both servers need. */
#ifndef ASSAY_SANDBOX_XFER_H
#define ASSAY_SANDBOX_XFER_H

#include <stddef.h>
#include "assay/buf.h"
#include "assay/sandbox.h"
#include "sandbox/internal.h"

/* ---- a tar stream, as two loop children (`assay-archive http ...`
 * and the tar side) joined by a pipe ---- */
struct xfer;
/* GET: `assay-archive` with http_argv (`http ... GET URL`) writes into
 * `assay-archive ARGS...` (extract, repack, delta); subject names what
 * is read in errors; tmp_base: ARGS's output, whose temporary a kill
 * leaves. done(arg, err) once, err taken (NULL: it worked). NULL and
 * *err when it cannot start (done is not called then). */
struct xfer *xfer_get(struct sbx *s, const char *subject,
                      char *const *http_argv, char *const *args,
                      const char *tmp_base, void (*done)(void *arg, char *err),
                      void *arg, char **err);
/* PUT: `assay-archive ARGS...` (pack, restore) writes into http_argv;
 * what names it for errors ("stage the inputs"); label: the progress
 * hook's what for the http side's progress lines, or NULL. */
struct xfer *xfer_put(struct sbx *s, char *const *args, char *const *http_argv,
                      const char *what, const char *label,
                      void (*done)(void *arg, char *err), void *arg,
                      char **err);
/* Kill and reap both children (removing what they left), no callback.
 * NULL ok. */
void xfer_free(struct xfer *x);

/* `assay-archive pack` args for the configured inputs that are not
 * bound (all 0: a resume's, only those the run had bound, which the
 * restored workspace lacks), NULL-terminated, *n of them (3 when there
 * is nothing to stage), *ro when some go read-only; the caller frees
 * the array. */
char **xfer_pack_args(struct sbx *s, int all, size_t *n, int *ro);
/* The tar pack writes of those pairs, for progress (0: not known). */
double xfer_pack_bytes(char *const *pairs, size_t n);
/* The delta helper's records of d: a kind byte (f content, d
 * directory, x gone) and the path, each ended by a NUL. */
void xfer_delta_records(struct buf *b, const struct sbx_delta *d);

/* ---- HTTP pieces ---- */

/* A URL-encoded copy of s (for query strings). */
char *xfer_escape(const char *s);
/* A server's {"message": ...} (or the raw body's start, or the status),
 * on one line, for errors. */
char *xfer_message(long status, const struct buf *body);
/* An upload form (OpenSandbox execd's POST /files/upload): a metadata
 * part naming the sandbox path, then the file part, whose bytes go
 * between pre and post (both initialised here). Sent with the header
 * XFER_UPLOAD_CTYPE. */
#define XFER_UPLOAD_BOUNDARY "assay-upload-4f1c9e0b7d2a"
#define XFER_UPLOAD_CTYPE                                                      \
	"Content-Type: multipart/form-data; boundary=" XFER_UPLOAD_BOUNDARY
void xfer_upload_form(const char *path, struct buf *pre, struct buf *post);

#endif
