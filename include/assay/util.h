/* util.h: allocation that aborts on exhaustion, string helpers, clocks.
 * Used for bookkeeping only; sizes from the outside world are checked
 * by the caller before they reach these. */
#ifndef ASSAY_UTIL_H
#define ASSAY_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>

#define ASSAY_VERSION "0.1.0"

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a fresh string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap);

/* Set *err (if err is non-NULL and *err is NULL) to a formatted message;
 * always returns -1 so callers can `return set_err(err, ...)`. */
int set_err(char **err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A copy of s[0..n) that is valid UTF-8 (invalid bytes become U+FFFD)
 * and free of NUL bytes, for JSON strings. *out_len may be NULL. */
char *utf8_sanitize(const char *s, size_t n, size_t *out_len);
/* Whether s[0..n) is valid UTF-8 without NUL bytes. */
int utf8_valid(const char *s, size_t n);
/* How many bytes of s[0..n) end on a UTF-8 character boundary (an
 * incomplete sequence at the end is held back; at most 3 bytes). */
size_t utf8_complete_prefix(const char *s, size_t n);
/* The character at s[0..n): its length (1-4) and *cp; an invalid or
 * cut-short sequence is one byte decoded as U+FFFD; 0 when n is 0. */
size_t utf8_decode(const char *s, size_t n, uint32_t *cp);

/* Monotonic milliseconds (CLOCK_MONOTONIC). */
int64_t now_ms(void);
/* Wall clock milliseconds since the epoch. */
int64_t wall_ms(void);

/* A byte count for people: "512 B", "12 kB", "340 MB", "1.2 GB"
 * (powers of 1000). */
void bytes_human(double n, char out[16]);

/* Lowercase hex sha256 of data into out (65 bytes). */
void sha256_hex(const void *data, size_t len, char out[65]);

/* Open a file assay did not make itself (in a run dir, a workspace, an
 * input, a project, a theme, the history) so that it can neither block
 * nor be something else than it seems: opened O_NONBLOCK (a FIFO opens
 * at once), O_NOCTTY and O_CLOEXEC, its type checked with fstat (a
 * regular file; a directory under O_DIRECTORY) before O_NONBLOCK is
 * cleared. Anything else is refused with its type named ("exec/x.stdout
 * is a FIFO, not a regular file: ..."), a device before it is opened.
 * flags: the access mode and O_NOFOLLOW (a link is refused as one),
 * O_APPEND, O_CREAT, O_EXCL, O_TRUNC, O_DIRECTORY. -1 and *err on
 * failure, errno kept (EINVAL for a file of the wrong type). */
int open_regular(const char *path, int flags, unsigned mode, char **err);
/* The same for name relative to dirfd; shown names it in messages
 * (name when NULL). */
int open_regular_at(int dirfd, const char *name, int flags, unsigned mode,
                    const char *shown, char **err);
/* open_regular as a stdio stream, its mode from flags ("r", "w", "a",
 * "r+", "a+"). */
FILE *fopen_regular(const char *path, int flags, unsigned mode, char **err);
/* What a file of this st_mode is, for messages: "a FIFO", "a socket". */
const char *file_type_name(unsigned mode);
/* Read a whole regular file of at most max bytes (links followed);
 * NULL + *err on failure (a FIFO, a device... refused: open_regular). */
char *read_file_max(const char *path, size_t max, size_t *len, char **err);
/* The same with open_regular's flags (O_NOFOLLOW for a run dir's files). */
char *read_file_flags(const char *path, int flags, size_t max, size_t *len,
                      char **err);
/* Write data to path atomically (tmp file + fsync + rename). */
int write_file_atomic(const char *path, const void *data, size_t len,
                      char **err);
/* The same without fsync: never half-written, but a crash may lose it.
 * For what can be made again (caches). */
int write_file_replace(const char *path, const void *data, size_t len,
                       char **err);
/* printf to a file descriptor, the whole text written (retrying short
 * writes and EINTR); a write error drops the rest. For terminals. */
void fd_printf(int fd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A helper program: $env when set and non-empty, else `name` beside the
 * running executable; NULL when /proc/self/exe cannot be read. */
char *helper_path(const char *env, const char *name);
/* The directory of assay's data (themes/, sample-data/): $ASSAY_DATA_DIR,
 * else <prefix>/share/assay beside an installed binary, else the source
 * tree it was built from. */
const char *data_dir(void);
/* mkdir -p with mode 0755. */
int mkdir_p(const char *path, char **err);
/* rm -rf (does not follow symlinks). */
int rm_rf(const char *path);

#endif
