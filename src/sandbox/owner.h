/* owner.h: who owns a sandbox that outlives its assay (owner.c): the
 * labels a docker container and volume, or an OpenSandbox sandbox's
 * metadata, carry, and the rule by which a start removes what a dead
 * assay left (private to src/sandbox/). */
#ifndef ASSAY_SANDBOX_OWNER_H
#define ASSAY_SANDBOX_OWNER_H

#include <cjson/cJSON.h>
#include "sandbox/internal.h"

/* The label every owned sandbox carries (a filter finds them by it). */
#define OWNER_LABEL_PID "assay.owner.pid"
/* The directory the run dir is in. */
#define OWNER_LABEL_ROOT "assay.root"

/* The labels (or OpenSandbox metadata) naming the run and its owner:
 * assay.run, assay.root (root_label, or the run dir's directory when
 * NULL), assay.owner.{pid,host,boot,start}, assay.version. */
cJSON *owner_labels(struct sbx *s, const char *root_label);
/* Whether the assay those labels name is alive (owners on other hosts
 * are presumed so). */
int owner_alive(const cJSON *labels);
/* Whether a container or volume with these labels is what a dead assay
 * left of a run kept in root (the directory of this run's run dir): a
 * start removes those, and only those. */
int owner_leftover(const cJSON *labels, const char *root);
/* This machine's name as the labels record it ("unknown" when it has
 * none). */
void owner_host(char *out, size_t n);
/* The directory a run dir is in, resolved. */
char *owner_run_root(const char *run_dir);

#endif
