/* cli.h: what the command-line files share. */
#ifndef ASSAY_CLI_H
#define ASSAY_CLI_H

#include "assay/session.h"

/* Print progress on stderr, or events as JSON lines on stdout. */
void headless_attach(struct session *s, int json);

struct loop;
/* With a terminal on stdin: ask it about the calls that need approval
 * (approve.c); detach restores the terminal. */
void approve_attach(struct session *s, struct loop *l);
void approve_detach(void);

/* assay export RUN --format md|html [-o FILE] (export.c); argv[0]
 * is "export". Returns the exit code. */
int cmd_export(int argc, char **argv);

#endif
