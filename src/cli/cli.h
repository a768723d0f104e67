/* cli.h: what the command-line files share. Each part of a headless
 * run (the printer, the approver, the step prompt, the resume options)
 * is a context its attach or init makes and main.c owns; nothing is
 * kept in file-level variables. */
#ifndef ASSAY_CLI_H
#define ASSAY_CLI_H

#include <stddef.h>

#include "assay/session.h"

struct loop;
struct config;

/* Print progress on stderr, or events as JSON lines on stdout
 * (headless.c). Free after the session. */
struct headless *headless_attach(struct session *s, int json);
void headless_free(struct headless *h);

/* With a terminal on stdin: ask it about the calls that need approval
 * (approve.c); detach (before the session is freed) restores the
 * terminal. */
struct approver *approve_attach(struct session *s, struct loop *l);
void approve_detach(struct approver *p);

/* Headless --step (step.c): ask at each breakpoint on /dev/tty; NULL
 * with *err without a terminal. Detach before the session is freed. */
struct stepui *stepui_attach(struct session *s, struct loop *l, char **err);
void stepui_detach(struct stepui *u);

/* What the terminal prompts share (tty.c): untrusted text cleaned for
 * the terminal (newlines and tabs kept), and shown on fd line by line,
 * each line after indent. */
char *tty_clean(const char *s, size_t n);
void tty_say(int fd, const char *indent, const char *text);

/* assay resume RUN [OPTIONS] [PROMPT] (resume.c). */
struct resume_cli {
	struct session_resume_opts ro;
	/* the configuration, and its base URL before the options: a URL
	 * the options change was passed on this command line */
	const struct config *cfg;
	char *layer_url;
};
void resume_cli_init(struct resume_cli *r);
void resume_cli_free(struct resume_cli *r);
/* argv[0] is "resume" and argv[1] RUN; applies the run's recorded
 * settings to c (below the options) and shifts argv past "resume". */
int resume_prepare(struct resume_cli *r, struct config *c, int *argc,
                   char ***argv, char **err);
/* --re-execute (which 0), --fork-at SEQ (1), --replace TEXT (2);
 * resume says whether the command is resume. */
int resume_option(struct resume_cli *r, int resume, int which, const char *arg,
                  char **err);
const struct session_resume_opts *resume_opts(struct resume_cli *r);

/* assay eval SUITE [-j N] [-n R] [--model M]... (eval.c); argv[0] is
 * "eval". Returns the exit code. */
int cmd_eval(int argc, char **argv);
/* DIR/report.html from DIR/results.jsonl (eval_report.c), each
 * session's record exported beside its run. 0, or -1 and *err. */
int eval_report(const char *dir, const char *title, char **err);
/* assay export RUN --format md|html [-o FILE] (export.c); argv[0]
 * is "export". Returns the exit code. */
int cmd_export(int argc, char **argv);
/* assay mcp list|call|conformance-client (mcp.c); argv[0] is "mcp".
 * Returns the exit code. */
int cmd_mcp(int argc, char **argv);
/* Start each server of servers ("mcp_servers"), wait at most timeout_ms,
 * end them: [{name, transport, status (ready, failed, not answering),
 * [why], tools (a count)}] (doctor). */
cJSON *mcp_probe(const cJSON *servers, int timeout_ms);
/* assay replay RUN (replay.c): the workbench on a recorded run; argv[0]
 * is "replay". Returns the exit code. */
int cmd_replay(int argc, char **argv);

/* Project trust (trust.c). The project settings this run did not
 * apply, named on stderr; EXIT_USAGE when the run needs one of them,
 * else 0. */
int trust_report(const struct config *c);
/* One refused project setting ({file, key, value, why, required,
 * user_only}) on stderr as trust_report names them, prog first; needs
 * is said of a required one, how (may be NULL) of each one trust would
 * apply. */
void trust_say_refused(const char *prog, const cJSON *it, const char *needs,
                       const char *how);
/* assay trust [--list | --revoke DIR]; argv[0] is "trust". */
int cmd_trust(int argc, char **argv);

/* assay models [--json] (models.c): the model table as this
 * configuration has it. */
int cmd_models(int argc, char **argv);

/* assay doctor [--json] [--images MODE] (doctor.c); argv[0] is
 * "doctor". 0 when the default setup works, 1 when not, 2 usage. */
int cmd_doctor(int argc, char **argv);

#endif
