/* image_confine.h: the self-confinement of `assay-image`
 * (image_confine.c). */
#ifndef ASSAY_IMAGE_CONFINE_H
#define ASSAY_IMAGE_CONFINE_H

#include <sys/stat.h>

/* Before reading anything: no descriptors but 0, 1, 2, the rlimits,
 * then the seccomp filter. *in_st is stdin's fstat, taken before the
 * filter (which allows no fstat); returns 1 if it was taken, else 0. */
int image_confine(struct stat *in_st);

/* `assay-image selfcheck`: what the confinement allows, on stdout;
 * returns the exit status (0). */
int image_selfcheck(void);

/* `assay-image selfcheck-syscalls DIR` (for tests): the forbidden calls
 * tried on DIR/victim and DIR/empty; returns the exit status (0: all
 * refused, 1: some allowed, 3: the filter is not in force). */
int image_selfcheck_syscalls(const char *dir);

#endif
