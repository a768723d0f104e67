/* fileop.h: the file operations run inside a sandbox whose workspace
 * lives elsewhere (fileop.c; private to src/sandbox/): the fileop
 * script, the words of each operation, and what its output means. The
 * backend runs it (docker: an exec; opensandbox: an execd command whose
 * output is base64) and keeps the operation as a job. */
#ifndef ASSAY_SANDBOX_FILEOP_H
#define ASSAY_SANDBOX_FILEOP_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "assay/buf.h"
#include "assay/sandbox.h"
#include "sandbox/internal.h"

/* The script, run as `bash -c SCRIPT fileop OP ARGS...` (see fileop.c
 * for the operations: resolve, read, list, prepare). */
extern const char fileop_script[];

/* The script's words for one operation, and how much of its stdout to
 * keep. */
struct fileop_args {
	const char *argv[6];
	char num[32];
	size_t out_max;
};
/* read REL MAX: "SIZE\n" then at most max bytes. */
void fileop_read_args(struct fileop_args *a, const char *rel, size_t max);
/* list REL RECURSIVE MAX+1: NUL-separated records. */
void fileop_list_args(struct fileop_args *a, const char *rel, int recursive,
                      size_t max);

/* Why an operation on rel failed: the exec's error, else the script's
 * stderr err (trimmed; last_line: only its last line, for a transport
 * that adds lines of its own), else how it ended. */
char *fileop_error(const struct sbx_exit *ex, struct buf *err, const char *rel,
                   int last_line);
/* A read's output as read_file's result: SBX_OK or SBX_TRUNCATED (*err
 * says so) with data appended to, or SBX_FAILED when it is not
 * a read's output (the caller says why). */
int fileop_read_result(const struct buf *out, const char *rel, size_t max,
                       struct buf *data, char **err);
/* A list's records (out, kept up to its max) sorted into the listing,
 * at most max entries: *rc SBX_OK, or SBX_TRUNCATED with *err. */
cJSON *fileop_list_result(const struct buf *out, const char *rel, size_t max,
                          int *rc, char **err);
/* The path prefix a listing of rel gives its entries ("" for "."). */
const char *fileop_list_prefix(const char *rel);
/* The message of a listing of rel cut at max entries. */
char *fileop_list_cut(const char *rel, size_t max);

#endif
