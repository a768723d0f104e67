/* archive_delta.h: `assay-archive delta` and the fold of deltas into
 * their whole archive (archive_delta.c). */
#ifndef ASSAY_ARCHIVE_DELTA_H
#define ASSAY_ARCHIVE_DELTA_H

#include "assay/path.h"

/* delta [HTTP OPTIONS] PREFIX ROOT OUT, argv from the options on
 * (or delta --tar RECORDS OUT: the records from that file, the files
 * from a tar on stdin holding exactly them, in order):
 * the records on stdin into the delta OUT (through a temporary). m:
 * the mounted inputs, never written. Exit status: 0, 2 for a bad
 * command line, or 1 with the reason on stderr. */
int archive_delta(int argc, char **argv, const struct path_mounts *m,
                  void (*progress)(double done, double total));
/* Fold the deltas over archive (sbx_deltas) into one whole archive at
 * out_path (through a temporary; out_path may be archive): the number
 * of deltas folded (0: none, nothing written), or -1 and *err. */
int archive_fold(const char *archive, const char *out_path, char **err);
/* `assay-archive http` (archive_http.c): argv from its options on. */
int archive_http(int argc, char **argv);
/* A progress line {"progress": subject, "done", "total"} on stdout
 * (assay_archive.c). */
void archive_progress_line(const char *subject, double done, double total);
/* The usage message on stderr; exit status 2 (assay_archive.c). */
int archive_usage(void);

#endif
