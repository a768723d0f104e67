/* agent_internal.h: what the session's files share: the session
 * struct, the event helpers and the tool runners. Not a public API. */
#ifndef ASSAY_AGENT_INTERNAL_H
#define ASSAY_AGENT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#include "assay/session.h"
#include "assay/buf.h"
#include "assay/sandbox.h"

struct loop;
struct http;
struct llm;
struct sbx;
struct sbx_exec;

struct observer {
	session_event_fn fn;
	void *arg;
};

struct tool_run;   /* one tool call in flight (tools.c) */
struct replay;     /* resume.c */
struct step_pause; /* step.c */
struct llm_request;
struct llm_result;

struct session {
	struct loop *loop;
	struct config *cfg;
	struct http *http;
	struct llm *llm;
	struct sbx *sbx;
	enum session_state state;
	int exit_code;
	int interrupted;
	char *run_id;
	char *run_dir;
	char *system_prompt;
	FILE *transcript;
	int64_t t0;
	uint64_t seq;
	struct observer *obs;
	size_t nobs;

	cJSON *messages; /* neutral conversation */
	cJSON *tools;    /* neutral tool definitions */
	int turn;
	char *request_hash;
	struct buf turn_text; /* text streamed this turn */
	struct buf delta;     /* text not yet emitted as text_delta */
	uint64_t delta_timer;

	cJSON *pending; /* tool calls of the current turn */
	int next_call;
	struct tool_run *running;
	struct pykernel *py;       /* the python tool's kernel, if alive */
	int py_generation;         /* kernels started so far */
	int py_lost;               /* a kernel died: the next cell says so */
	struct snapshot *snapshot; /* the workspace after the last call */
	uint64_t next_timer;       /* runs the next tool call */
	int freeing;               /* session_free is tearing down */
	int made_run_dir;          /* the run dir did not exist before */
	int lock_fd;               /* run.lock, held while the run lives */

	long in_tokens, out_tokens, cached_tokens;
	double cost;

	/* interactive runs (the TUI): IDLE between the user's messages */
	int interactive;
	int cancelling; /* Ctrl-C: the turn's other calls are not run */
	int failed;     /* the last model request failed */
	int awaiting;   /* IDLE, waiting for session_send */

	/* approvals (approval.c): the policy, one entry per call of the
	 * turn, and the frontend that asks a person */
	struct policy *policy;
	struct approval *approvals;
	int napprovals;
	struct session_approver approver;
	void *approver_arg;
	uint64_t approval_timer;

	/* resume.c: the recorded run being followed (NULL when live) */
	struct replay *replay;
	cJSON *queued;         /* user messages to send next (strings) */
	int cached_answer;     /* the turn being delivered came from cache/ */
	int persist_each_turn; /* no host workspace: archive every turn */

	/* step.c: breakpoints before requests and executions */
	int step_on;
	struct session_stepper stepper;
	void *stepper_arg;
	struct step_pause *pause; /* the breakpoint waiting, or NULL */
	int request_cleared;      /* the next request passed its pause */
	int call_cleared;         /* 1 + the call that passed its pause */
	int result_as_is; /* tools_finished: the content is what the model
	                     is told (a skip), no approval wording */
	uint64_t step_timer;
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
/* Lock s->run_dir (run.lock, flock) for the session's lifetime; -1 +
 * *err "run is in use (pid N)" when another process holds it. */
int record_lock(struct session *s, char **err);
/* run_start: record the instructions' and script's paths and keep
 * copies of them in the run dir. */
void record_keep_copies(struct session *s, cJSON *ev);

/* resume.c: hooks of the state machine while a record is followed. */
/* request_turn: answer turn s->turn + 1 from the cache when the
 * request (req) is the recorded one; 1 when it did (the answer is on
 * its way through the loop). */
int replay_request(struct session *s, const struct llm_request *req);
/* The model answered without calls: send the next queued user
 * message (a recorded one, or resume's PROMPT); 1 when it did. */
int replay_next_user(struct session *s);
/* The content a tool result is replaced with by a fork, or NULL. */
const char *replay_fork_result(struct session *s, const char *id);
void replay_free(struct session *s);
/* Deliver a turn's answer as if the provider sent it (session.c). */
void session_deliver(struct session *s, struct llm_result *r);
/* The next request (session.c), for resume and step. */
void session_request(struct session *s);
/* Interactive: wait for the user's next message (session.c). */
void session_idle(struct session *s, const char *reason);
/* The run's end (session.c). */
void session_finish(struct session *s, const char *status, int code);
/* Shared by session_start and session_resume: llm, sandbox, prompt. */
int session_prepare(struct session *s, int stage_inputs, char **err);
/* Open (create) the run dir s->run_dir and its transcript. */
int session_open_run_dir(struct session *s, char **err);
void session_emit_run_start(struct session *s, cJSON *extra);
/* A tool message for the conversation. */
void session_add_tool_message(struct session *s, const char *id,
                              const char *name, const char *content,
                              int is_error);

/* step.c: the breakpoints. 1 when the session paused (the caller
 * returns; the answer resumes it). */
int step_before_request(struct session *s, const struct llm_request *req);
int step_before_exec(struct session *s, const cJSON *call);
void step_free(struct session *s);
/* Forget the breakpoint waiting (the run ends or the turn is
 * cancelled). */
void step_clear(struct session *s);
/* List the workspace into s->snapshot; quiet: without
 * workspace_change events (a resumed workspace is already known). */
void session_scan(struct session *s, int quiet);
/* approval.c: a step-mode edit of call id (deny rules checked); the
 * result then says what ran instead. */
int approval_set_edit(struct session *s, const char *id, const char *edited,
                      char **err);

/* Emit an event: fills seq and t, writes the transcript, tells every
 * observer; takes ownership of ev. */
void session_emit(struct session *s, cJSON *ev);
/* A new event object with its type set. */
cJSON *event_new(const char *type);

/* Neutral tool definitions offered to the model. */
cJSON *tools_definitions(void);
/* Run one tool call ({"id","name","arguments"}); calls
 * tools_finished(s, id, content, is_error) when done (possibly before
 * returning). */
void tools_run(struct session *s, const cJSON *call);
void tools_cancel(struct session *s);
void tools_finished(struct session *s, const char *id, const char *content,
                    int is_error);

/* The workspace's files at one moment, and what changed since. */
struct snapshot;
typedef void (*snapshot_change_fn)(void *arg, const char *path,
                                   const char *kind, double size);
struct snapshot *snapshot_new(const cJSON *list);
void snapshot_free(struct snapshot *sn);
/* Calls fn for each file created, modified or deleted from old to now
 * (old may be NULL: everything is created). */
void snapshot_diff(struct snapshot *old, const struct snapshot *now,
                   snapshot_change_fn fn, void *arg);

/* Whether the snapshot holds a file at path (workspace-relative). */
int snapshot_has(const struct snapshot *sn, const char *path);

/* approval.c: each call of a turn through the policy. */
struct approval; /* one call's decision */
/* Make the policy from the configuration (its rules are checked). */
int approval_init(struct session *s, char **err);
void approval_free(struct session *s);
/* The turn's calls (s->pending) arrived: emit their tool_call events,
 * decide each, and ask the approver about those that need a person. */
void approval_turn(struct session *s);
/* The call at s->next_call: 0 while it waits for a decision; else 1
 * with *run the call to run (perhaps edited) or, for a denied call,
 * *denied the tool result to give (and *run the original call). */
int approval_next(struct session *s, const cJSON **run, const char **denied);
/* Withdraw every request still waiting (the run or turn ends). */
void approval_cancel_all(struct session *s);
/* The tool result as the model is told it (an edited call says what
 * ran instead). Caller frees. */
char *approval_result(struct session *s, const char *id, const char *content);
/* Run the next call now (session.c): after a decision arrives. */
void session_run_next(struct session *s);

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

/* The output side of a command-like call (shell, python cell): opens
 * exec/<id>.stdout|stderr, emits exec_start and makes it s->running.
 * NULL + *err if the files cannot be made. */
struct tool_run *tool_run_begin(struct session *s, const char *id,
                                const char *command, char **err);
/* One chunk of output (an sbx_exec_obs on_output; arg is the run). */
void tool_run_output(void *run, enum sbx_stream which, const char *data,
                     size_t n);
/* Emit exec_end for ex, free the run and return the model's view of
 * its output (head and tail of stdout, then "[stderr]" and stderr). */
char *tool_run_end(struct tool_run *r, const struct sbx_exit *ex);

/* pytool.c: the python tool. Start the kernel at the start of the run
 * (its hello tells the prompt which libraries exist), then call
 * ready(s); ready is called even when Python is unavailable. */
void pytool_start(struct session *s, void (*ready)(struct session *));
void pytool_run(struct session *s, const char *id, const cJSON *args);
/* Interrupt the running cell (the kernel is killed if it does not
 * stop); forget a pending start. */
void pytool_cancel(struct session *s);

/* pyframe.c: the framing between assay and the kernel. A frame is a
 * type byte, a 4-byte big-endian payload length and the payload. */
#define PYFRAME_HEADER 5
#define PYFRAME_MAX (1u << 20) /* largest payload taken from a kernel */

struct pyframe_reader {
	struct buf partial; /* an incomplete frame */
	size_t max;         /* payload limit */
	const char *types;  /* the frame types allowed */
};

typedef void (*pyframe_fn)(void *arg, char type, const char *payload, size_t n);

void pyframe_reader_init(struct pyframe_reader *r, const char *types,
                         size_t max);
void pyframe_reader_free(struct pyframe_reader *r);
/* Feed bytes; fn is called for every complete frame. -1 + *err when
 * the stream cannot be a valid one (unknown type, payload over max):
 * nothing after that can be trusted. */
int pyframe_feed(struct pyframe_reader *r, const char *data, size_t n,
                 pyframe_fn fn, void *arg, char **err);
/* Append one frame to out. */
void pyframe_encode(struct buf *out, char type, const void *payload, size_t n);

#endif
