/* tar.h: the tar work done inside the assay-archive helper for the
 * backends whose workspace lives elsewhere (tar.c; never called in
 * assay itself): packing the inputs, extracting a stream into a host
 * directory, repacking a stream into the workspace archive. */
#ifndef ASSAY_SANDBOX_TAR_H
#define ASSAY_SANDBOX_TAR_H

#include "assay/path.h"
#include "sandbox/internal.h"

struct archive;
struct archive_entry;

/* archive_read_next_header, with a name the locale cannot convert
 * (latin-1 bytes in a pax path, which must be UTF-8) taken as its
 * bytes: ARCHIVE_WARN, whose entry is whole, becomes ARCHIVE_OK. The
 * helper runs in C.UTF-8 (assay_archive.c's main); a write of such a
 * name is ARCHIVE_WARN too, and stored as binary (hdrcharset). */
int tar_next_header(struct archive *a, struct archive_entry **e);

/* specs (n of them): "--skip" DIR, then SRC DEST pairs, each pair
 * after "--ro" read-only until "--rw", as a tar stream to out_fd, with
 * the staging rules of stage.c. 0, or -1 and *err. */
int tar_pack(int out_fd, char *const *specs, int n, char **err);
/* The tar stream in_fd (member name: what it is called in errors) into
 * the host directory dest, refusing anything that would land outside
 * it. progress (may be NULL): the files' bytes written, every 500 ms
 * and at the end. */
int tar_extract(int in_fd, const char *name, const char *dest,
                sbx_tar_progress_fn progress, char **err);
/* The tar stream in_fd, the leading strip/ taken off and the mounted
 * inputs skip left out, as the compressed workspace archive out_path
 * (through a temporary file). */
int tar_repack(int in_fd, const char *strip, const char *out_path,
               const struct path_mounts *skip, sbx_tar_progress_fn progress,
               char **err);

#endif
