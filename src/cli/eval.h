/* eval.h: what the files of `assay eval` share (not a public API):
 * eval.c plans, runs and reports the jobs; eval_check.c gives each
 * finished session its verdict (the task's check); eval_live.c is the
 * live table on a terminal, its keys and the workbench view of a
 * session it opens. */
#ifndef ASSAY_CLI_EVAL_H
#define ASSAY_CLI_EVAL_H

#include "assay/buf.h"
#include "assay/config.h"
#include "assay/workbench.h"

#include <stdint.h>
#include <stdio.h>
#include <termios.h>
#include <cjson/cJSON.h>

struct session;
struct sbx;
struct sbx_exec;

#define EVAL_MAX_J 64
#define EVAL_CHECK_S 120 /* a check script's time */
/* descriptors kept beside the sessions': a workbench view of one opened
 * from the live table holds 3 more (seen in /proc/PID/fd: inotify, its
 * workspace's directory, the log stderr goes to), a preview's helper 3
 * while it runs; the rest is a margin (the report, a check's spikes) */
#define EVAL_FD_RESERVE 16

enum job_state {
	JOB_QUEUED,
	JOB_RUNNING,  /* its session */
	JOB_CHECKING, /* its check, in a sandbox of its own */
	JOB_DONE,     /* to be reported */
	JOB_REPORTED,
};

struct job {
	struct eval *ev;
	const cJSON *task;
	char *name, *model, *run_dir, *out_dir;
	int repeat;
	enum job_state state;
	struct config cfg;
	struct session *s;
	/* what the session said */
	char *answer, *category, *error;
	const char *status;
	int exit_code, turns;
	double in_tok, out_tok, cost;
	int missing; /* declared outputs not delivered */
	/* the sandbox the session ran on last (run_start's or
	 * run_resume's): backend, image, its id and digests */
	cJSON *sandbox;
	int64_t t0, wall_ms;
	/* the check */
	struct config ccfg;
	struct sbx *sbx;
	struct sbx_exec *x;
	struct buf check_out;
	int check_code, check_timed_out;
	int pass;
	char *reason;
	char key[65];  /* what the result depends on (job_key) */
	cJSON *reused; /* the previous eval's result, taken as it is */
	int resume;    /* interrupted last time: resumed, not started afresh */
	/* the settings of the suite (and of the project here) not applied
	 * ({file, key, value, why, required...}, config_apply_content);
	 * blocked: why the task cannot run without one of them */
	cJSON *refused;
	char *blocked;
	int live_turn; /* as it goes: the turn, tokens and cost so far */
	double live_tok, live_cost;
};

struct eval {
	struct loop *loop;
	char *suite_path, *suite_dir, *dir;
	cJSON *suite;
	struct job *jobs;
	size_t n, done, running;
	int j;
	int interrupted;
	FILE *results;
	cJSON *previous; /* the last results.jsonl here, by key */
	int rerun_all, rerun_failed;
	size_t reused;
	int json;        /* every session's events on stdout */
	const char *ask; /* --ask: every task's ask mode */
	/* the suite is its project's content: trusted by --trust-project
	 * (trust_flag, which trusts the project here too) or the store */
	int trust_flag;
	struct config_content content;
	/* on a terminal: the table of the sessions under way, redrawn in
	 * place below the progress lines (live_lines: its height now) */
	int live, live_lines;
	uint64_t live_timer;
	/* ...with keys (stdin a terminal too): a row selected (its job's
	 * index, -1 none), Enter opens its workbench view */
	int interactive;
	long sel;
	struct termios tio; /* the terminal's modes before */
	int tio_saved;
	char keys[8]; /* a key sequence read in part */
	size_t nkeys;
	struct ui *view; /* the view open, of view_job */
	struct job *view_job;
	struct ui_view_ops view_ops;
	struct buf held; /* the lines said while it was open */
	int over_told;   /* the view was told the eval is over */
};

/* The model a job runs, as the results name it. */
const char *job_model(const struct job *jb);
/* Stop every session (Ctrl-C, SIGTERM, SIGHUP). */
void eval_interrupt(struct eval *ev);

/* eval_check.c */
/* The host paths the task's check names, through the project files'
 * rule (origin: the file they come from); refusals go to jb->refused. */
void job_check_paths(struct job *jb, const char *origin);
/* The script of the task's check, resolved; NULL when it has none. */
char *check_script(struct job *jb);
/* The job's verdict (reason: taken): it is done. */
void check_done(struct job *jb, int pass, char *reason);
/* The session is over: take what it said, check it. */
void job_ended(struct job *jb);

/* eval_live.c */
/* The table (and its keys) when stderr (and stdin, stdout) is a
 * terminal; live_stop takes it off and gives the terminal back. */
void live_start(struct eval *ev);
void live_stop(struct eval *ev);
/* A line for stderr: above the table, or held while a view is open. */
void eval_say(struct eval *ev, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Where a job's session and the view meet: its events, its
 * approver's calls (live_approver before session_start), its end
 * (before session_free), its result. */
void live_event(struct job *jb, const cJSON *e);
void live_approver(struct job *jb);
void live_detach(struct job *jb);
void live_result(struct job *jb, const char *line);
/* The view closed (the eval stops; everything has ended). */
void live_close(struct eval *ev);
/* Every session has ended: 1 while a view keeps the eval open. */
int live_holds(struct eval *ev);

#endif
