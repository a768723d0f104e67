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
/* assay replay RUN (replay.c): the workbench on a recorded run; argv[0]
 * is "replay". Returns the exit code. */
int cmd_replay(int argc, char **argv);

/* assay doctor [--json] [--images MODE] (doctor.c); argv[0] is
 * "doctor". 0 when the default setup works, 1 when not, 2 usage. */
int cmd_doctor(int argc, char **argv);

struct config;
/* assay resume RUN [OPTIONS] [PROMPT] (resume.c): argv[0] is "resume"
 * and argv[1] RUN; applies the run's recorded settings to c (below
 * the options) and shifts argv past "resume". */
int resume_prepare(struct config *c, int *argc, char ***argv, char **err);
/* --re-execute (which 0), --fork-at SEQ (1), --replace TEXT (2);
 * resume says whether the command is resume. */
int resume_option(int resume, int which, const char *arg, char **err);
const struct session_resume_opts *resume_opts(void);

/* Headless --step (step.c): ask at each breakpoint on /dev/tty; -1
 * with *err without a terminal. */
int step_attach(struct session *s, struct loop *l, char **err);
void step_detach(void);

#endif
