/* archive_restore.h: `assay-archive restore` (archive_restore.c). */
#ifndef ASSAY_ARCHIVE_RESTORE_H
#define ASSAY_ARCHIVE_RESTORE_H

#include "assay/path.h"

/* Why p is not a member name that means what it says (absolute, empty,
 * "." or ".." components, too long; a control character when ctl is
 * 0: names go back one per line), or NULL. */
const char *archive_bad_name(const char *p, int ctl);

/* The persisted workspace archive (its deltas folded in first) as a
 * clean tar on stdout, every entry checked before a byte is written;
 * directories above the mounts' places are left as they are. Exit
 * status: 0, or 1 with the reason on stderr. */
int archive_restore(const char *archive, const struct path_mounts *ms);

#endif
