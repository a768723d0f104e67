/* cli.h: what the command-line files share. */
#ifndef ASSAY_CLI_H
#define ASSAY_CLI_H

#include "assay/session.h"

/* Print progress on stderr, or events as JSON lines on stdout. */
void headless_attach(struct session *s, int json);

#endif
