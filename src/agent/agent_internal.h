/* agent_internal.h: what every part of the session needs: struct
 * session (its parts, each in a header of its own that names the
 * files that may write it: rundir.h, conv.h, calls.h, workspace.h,
 * budget.h, step.h, ending.h, images.h), the state machine's entry points
 * (session.c), and resume's seam (record.c, resume.c, inputs.c). Not
 * a public API. */
#ifndef ASSAY_AGENT_INTERNAL_H
#define ASSAY_AGENT_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#include "assay/session.h"
#include "assay/buf.h"
#include "assay/sandbox.h"

#include "budget.h"
#include "calls.h"
#include "conv.h"
#include "rundir.h"
#include "step.h"
#include "workspace.h"
#include "ending.h"
#include "images.h"
#include "mcptool.h"

struct loop;
struct http;
struct llm;
struct sbx;
struct sbx_exec;

struct observer {
	session_event_fn fn;
	void *arg;
};

struct replay;   /* a recorded run followed (resume.c) */
struct outputs;  /* the outputs being delivered (outputs.c) */
struct sbx_call; /* a sandbox operation in flight (session.c) */
struct llm_request;
struct llm_result;
struct llm_usage;

/* Why the session is IDLE (the idle event's reason). */
enum session_idle {
	SESSION_IDLE_READY,
	SESSION_IDLE_ANSWERED,
	SESSION_IDLE_CANCELLED,
	SESSION_IDLE_FAILED, /* the last request failed: ending now fails */
	SESSION_IDLE_BUDGET, /* a budget is spent: session_budget_decide */
};

struct session {
	struct loop *loop;
	struct config *cfg;
	struct http *http;
	struct llm *llm;
	struct sbx *sbx;
	/* written only by session_set_state (session.c) */
	enum session_state state;
	int exit_code;
	char *error; /* why the run did not get going (session_error) */
	struct rundir rundir; /* rundir.h: the run dir, lock, transcript */
	char *system_prompt;
	struct observer *obs;
	size_t nobs;
	int freeing;  /* session_free is tearing down */
	int mcp_then; /* the kernel is ready, the MCP servers not yet */

	/* the conversation and the turn (conv.h) */
	struct conv conv;
	struct budget budget;              /* budget.h */
	struct context ctx;                /* conv.h */
	struct session_budget budget_wait; /* IDLE_BUDGET: what was hit */
	char *budget_why;
	char *prompt;    /* STARTING: the first user message, if any */
	int64_t boot_ms; /* when the sandbox start (or restore) began */
	/* what a resume does once its inputs are checked (inputs.c) */
	void (*inputs_then)(struct session *s);
	int64_t inputs_t0; /* hashing began (inputs.c) */
	/* a resume's hashes, taken to check its inputs: recorded as
	 * input_hashes once the run is announced, not taken again */
	cJSON *inputs_checked;
	int interactive;
	enum session_idle idle_why;

	uint64_t next_timer; /* the state's next step */
	/* the turn's tool calls, their approvals, the python kernel
	 * (calls.h) */
	struct calls calls;
	struct approvals appr;
	struct pystate py;
	/* the workspace (workspace.h) */
	struct scan scan;
	struct diffs diffs;
	struct persist persist;
	struct sbx_call *sbx_calls; /* sandbox operations in flight */
	int sbx_ncalls;

	struct replay *replay; /* resume.c: the record followed, or NULL */
	struct step_ctl step;  /* step.h */

	struct images img;       /* images.h: images to the model */
	struct mcps mcp;         /* mcptool.h: the MCP servers and calls */
	struct ending end;       /* ending.h: ENDING, and what run_end says */
	struct outputs *outputs; /* outputs.c: the delivery in flight */
};

/* A recorded run read back (record.c). */
struct record {
	char *dir;        /* the run dir */
	char *transcript; /* its transcript.jsonl */
	cJSON *events;    /* every complete event, in order */
	const cJSON *run_start;
	size_t complete_bytes; /* up to the end of the last whole line */
	size_t dropped_bytes;  /* a last line cut short (ignored) */
	uint64_t last_seq;
	int64_t last_t;
};
/* Find RUN (run dir, transcript or run id) and read it. */
int record_load(const char *run, struct record *r, char **err);
/* Parse transcript text (a cut last line is dropped); -1 + *err for
 * any other bad line, no run_start, or events resume cannot trust
 * (turn numbers, requests made before the results they need). */
int record_parse(const char *text, size_t len, struct record *r, char **err);
void record_free(struct record *r);
/* Files of a run dir: the lock held while a session writes it, and the
 * copies of the instructions and the scripted model the run read. */
#define RECORD_LOCK "run.lock"
#define RECORD_INSTRUCTIONS "instructions.md"
#define RECORD_SCRIPT "script.json"
/* What the record may not decide, checked before a resume or fork
 * starts (cfg is final): in place, no planted links and no workspace
 * outside the run dir unless the user names it; re-execute, inputs the
 * user gives; instructions only from the run dir's copy. */
int record_resume_check(struct session *s, const struct record *r,
                        enum session_resume_mode mode, char **err);
/* After session_prepare: the provider URL now used is the recorded
 * one, or the user passed --base-url (given); else -1 + *err. */
int record_check_url(const struct session *s, const struct record *r, int given,
                     char **err);
/* The image id the run's sandbox had last (its last run_resume that
 * records one, else run_start's): "" when none was recorded. */
const char *record_image_id(const struct record *r);
/* run_start: keep copies of the instructions and the script in the
 * run dir, and set *instructions and *script to the paths run_start
 * records (NULL: none); caller frees. */
void record_copies(struct session *s, char **instructions, char **script);

/* --- session.c: what the session's other files call --------------- */

/* Emit an event: fills seq and t, writes the transcript, tells every
 * observer; takes ownership of ev. */
void session_emit(struct session *s, cJSON *ev);
/* Show an event to the observers only, unrecorded (a resumed run's
 * history, already in the transcript). */
void session_show(struct session *s, const cJSON *ev);
/* A progress event shown (sbx_progress_fn; arg: the session). */
void session_show_progress(void *arg, const char *what, const char *subject,
                           double done, double total, int64_t elapsed_ms);
/* What run_start and run_resume say about this run. */
struct ev_run;
struct ev_fork;
void session_run_info(const struct session *s, struct ev_run *run);
/* run_start (fork: a re-execute's forked_from, or NULL), with copies
 * of the instructions and script kept in the run dir. */
void session_emit_run_start(struct session *s, const struct ev_fork *fork);
/* A run that did not get going ends with why (taken; session_error). */
void session_start_failed(struct session *s, char *why, int code);
/* A refusal before anything started: the exit code, then -1. */
int session_fail(struct session *s, int code);
/* Shared by session_start and session_resume once the run dir is open:
 * checks the layout, makes the system prompt, the provider and the
 * (not yet started) sandbox. -1 + *err and the exit code set. */
int session_prepare(struct session *s, char **err);
/* Start the sandbox: SESSION_STARTING until it is up, then the run is
 * announced (run_start, or the replay's) and the kernel starts. */
void session_boot(struct session *s, int stage_inputs);
/* start.c: bring the sandbox up (session_boot, in STARTING). */
void session_start_sandbox(struct session *s, int stage_inputs);
/* sbx_start completed (start.c): the inputs checked, a resumed
 * workspace restored, then session_announce. */
void session_sandbox_started(struct session *s, void *ctx, int rc,
                             const char *err, struct buf *data, cJSON *list);
/* The sandbox is up with its workspace: announce the run, list the
 * workspace, start the kernel (SESSION_LISTING). */
void session_announce(struct session *s);
/* The workspace listing is done (scan.c): what waited for it goes on. */
void session_scanned(struct session *s);

/* A sandbox operation's completion, delivered to a session function:
 * fn(s, ctx, rc, err, data, list) as sbx_done_fn has them. Give an sbx_*
 * operation session_sbx_done and session_sbx_call(s, fn, ctx): the
 * operation counts as in flight until then (ENDING waits for it), and
 * a session freed meanwhile drops the completion. */
typedef void (*session_sbx_fn)(struct session *s, void *ctx, int rc,
                               const char *err, struct buf *data, cJSON *list);
void *session_sbx_call(struct session *s, session_sbx_fn fn, void *ctx);
void session_sbx_done(void *call, int rc, const char *err, struct buf *data,
                      cJSON *list);

/* session.c: the provider's answer is complete (the observer
 * gives the provider). */
void session_on_llm_done(void *arg, struct llm_result *r);

/* session.c's steps that budget.c takes too. */
void session_request_turn(struct session *s);
void session_wind_up(struct session *s, const char *status, int code);
void session_idle(struct session *s, enum session_idle why);
/* The idle event's reason from now on (the state stays). */
void session_set_idle_why(struct session *s, enum session_idle why);
extern const char *const session_idle_names[];
/* The result waiting in s->result joins the record and the
 * conversation (session.c). */
void session_result_in(struct session *s);

/* --- resume.c: a recorded run followed ------------------------------
 * Resume decides, the session acts: each hook fills a struct
 * replay_act saying what the session does next. */
enum replay_do {
	REPLAY_LIVE,    /* nothing recorded applies: go on live */
	REPLAY_CACHED,  /* deliver answer as turn `turn` (hash) */
	REPLAY_SKIP,    /* turn `turn` was never answered but the run went
	                   on: skip it (user_next: a user message came
	                   next) */
	REPLAY_REQUEST, /* the conversation is rebuilt up to turn `turn`:
	                   request the next */
	REPLAY_CALLS,   /* run `calls`, the last answer's calls that never
	                   finished */
	REPLAY_SEND,    /* send the user message `text`, then request */
	REPLAY_IDLE,    /* interactive: wait for the user */
	REPLAY_END,     /* end the run: status, code */
};

struct replay_act {
	enum replay_do what;
	int turn;
	char hash[65];
	int user_next;
	struct llm_result *answer; /* CACHED: taken by the session */
	cJSON *calls;              /* CALLS: taken */
	char *text;                /* SEND: taken */
	const char *status;        /* END */
	int code;
	/* replay_walk: the conversation and totals rebuilt (taken) */
	cJSON *messages;
	struct budget totals;
};
/* request_turn in a re-execute: whether turn `turn` (request req) is
 * answered from the record: LIVE, CACHED or SKIP. */
void replay_request(struct replay *rp, struct session *s,
                    const struct llm_request *req, int turn,
                    struct replay_act *act);
/* The next queued user message to send (a recorded one while the
 * record is followed, or resume's PROMPT), or NULL. Caller frees. */
char *replay_next_user(struct replay *rp);
/* The content a tool result is replaced with by a fork, or NULL. */
const char *replay_fork_result(struct replay *rp, const char *id);
/* The recorded run's dir (its cache/ answers a re-executed
 * compaction). */
const char *replay_dir(const struct replay *rp);
/* A re-execute still following its record: the compaction (done) the
 * record made before its request of turn, or NULL. */
const cJSON *replay_compaction_before(const struct replay *rp, int turn);
/* Resume in place (the workspace is the run's: restore it, it is not
 * staged), not a re-execute. */
int replay_in_place(const struct replay *rp);
/* The recorded run being resumed or re-executed. */
const struct record *replay_record(const struct replay *rp);

/* --- inputs.c: the inputs by content -------------------------------- */
/* Once the run is announced: hash its inputs (input_hashes follows). */
void inputs_hash(struct session *s);
/* Resume in place with mounted inputs: check that each is the file the
 * run had (its hash, else its size and mtime) and call then(s); a
 * changed one ends the start with exit 2. 0 when there is nothing to
 * check (the caller goes on itself). */
int inputs_verify(struct session *s, void (*then)(struct session *s));
/* The message of a workspace that cannot be restored from path (why:
 * the sandbox's reason; NULL: the backend cannot load archives).
 * Caller frees. */
char *replay_restore_error(const char *path, const char *backend,
                           const char *why);
/* The sandbox is up: emit run_start (re-execute) or the history and
 * run_resume; 1 when the workspace is already known (a quiet scan). */
int replay_announce(struct replay *rp, struct session *s);
/* The kernel is ready: what comes first. Resume in place rebuilds
 * the conversation from the transcript (emitting the replayed
 * requests); re-execute sends its first recorded message. */
void replay_go(struct replay *rp, struct session *s, struct replay_act *act);
void replay_free(struct replay *rp);

/* The default system prompt with the workspace layout filled in. */
char *prompt_system(const struct config *cfg, char **err);
/* Append what the kernel's hello says about the sandbox's Python (its
 * version and libraries), or why there is none (hello NULL). */
void prompt_add_python(char **prompt, const struct config *cfg,
                       const cJSON *hello, const char *why_not);
/* A data file shipped with assay (rel under share/): from
 * $ASSAY_DATA_DIR when set and the file is there, else the copy
 * embedded at build time. Caller frees. */
char *agent_data_file(const char *rel, const char *embedded);
extern const char embed_assay_kernel_py[];
extern const char embed_instructions_md[];

#endif
