/* archive_hash.h: `assay-archive hash` (archive_hash.c). */
#ifndef ASSAY_ARCHIVE_HASH_H
#define ASSAY_ARCHIVE_HASH_H

#include "assay/path.h"

/* The SHA-256 of each input srcs[0..n) as JSON lines on stdout, through
 * the cache file (cache "" for none); ms, the sandbox's mounts, tells
 * what of a mounted directory to leave out. Exit status: 0, or 1 with
 * the reason on stderr. */
int archive_hash(const char *cache, char **srcs, int n,
                 const struct path_mounts *ms);

#endif
