/* session.h: one run of the agent: the state machine that turns model
 * answers into tool calls and tool results into the next request, and
 * the event stream every frontend observes (DESIGN.md section 2). */
#ifndef ASSAY_SESSION_H
#define ASSAY_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

struct loop;
struct config;
struct session;
struct sbx;

/* Exit codes (DESIGN.md "Command line"). */
enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,
	EXIT_USAGE = 2,
	EXIT_SANDBOX = 3,
	EXIT_PROVIDER = 4,
	EXIT_BUDGET = 5,
	EXIT_INTERRUPTED = 130,
};

/* The session's states. Only src/agent/session.c moves between them,
 * through one function that also emits what entering a state emits
 * ("idle", "step_pause", "run_end"). Each state says what leads out. */
enum session_state {
	/* made by session_new; session_start or session_resume starts it */
	SESSION_NEW,
	/* the sandbox is created and staged (resume in place: and its
	 * workspace restored); nothing is recorded yet. -> LISTING once it
	 * is up; ENDING when it fails (nothing recorded, session_error
	 * says why) or the run is ended meanwhile */
	SESSION_STARTING,
	/* the run is announced (run_start, or run_resume) and its
	 * workspace listed for the first time (workspace_change of the
	 * staged inputs). -> KERNEL_STARTING (the prompt's user_message
	 * first), ENDING */
	SESSION_LISTING,
	/* the python kernel starts: its hello completes the system prompt.
	 * -> REQUESTING or PAUSED (the first request), IDLE (interactive,
	 * no prompt yet), TOOL_CALLS_READY (a resume runs the calls that
	 * never finished), ENDING */
	SESSION_KERNEL_STARTING,
	/* interactive: waits for session_send ("idle" on entry, with its
	 * reason). -> REQUESTING or PAUSED (a message), ENDING */
	SESSION_IDLE,
	/* a model request streams, or a recorded answer is on its way.
	 * -> TOOL_CALLS_READY (an answer with calls), REQUESTING (a queued
	 * user message follows the answer), IDLE (answered, failed or
	 * cancelled, interactive), PAUSED, ENDING */
	SESSION_REQUESTING,
	/* the turn's calls are in (each had its tool_call event and went
	 * through the policy); the next one is decided and started here.
	 * -> EXECUTING, AWAITING_APPROVAL, PAUSED (its breakpoint),
	 * REQUESTING (every result is in), IDLE (cancelled), ENDING */
	SESSION_TOOL_CALLS_READY,
	/* the next call waits for a person's decision (session_approve).
	 * -> TOOL_CALLS_READY (decided), IDLE (cancelled), ENDING */
	SESSION_AWAITING_APPROVAL,
	/* step mode: stopped at a breakpoint until session_step
	 * ("step_pause" on entry). -> TOOL_CALLS_READY or REQUESTING
	 * (continue, edit), EXECUTING (skip: its result says so), IDLE
	 * (cancelled), ENDING (end) */
	SESSION_PAUSED,
	/* a tool call runs; with a backend that has no host workspace its
	 * result waits for the workspace archive. -> TOOL_CALLS_READY (the
	 * result is in), CANCELLING, INTERRUPTING, ENDING */
	SESSION_EXECUTING,
	/* interactive Ctrl-C during a call: it is being stopped; once its
	 * result is in, the turn's other calls are not run. -> IDLE,
	 * INTERRUPTING, ENDING */
	SESSION_CANCELLING,
	/* interrupted during a call: once the call has stopped and its
	 * result is recorded, the run ends. -> ENDING */
	SESSION_INTERRUPTING,
	/* the outputs are copied out, the workspace archived, the sandbox
	 * stopped, one after another without blocking the loop. -> DONE */
	SESSION_ENDING,
	/* over: run_end emitted (unless the run never got going) and
	 * session_exit_code final. Callers run the loop until here. */
	SESSION_DONE,
};

/* Sees every event (seq, t, type, ...) as it happens. */
typedef void (*session_event_fn)(void *arg, const cJSON *ev);

/* cfg must outlive the session. Never NULL. */
struct session *session_new(struct loop *l, struct config *cfg);
void session_free(struct session *s);

void session_observe(struct session *s, session_event_fn fn, void *arg);

/* Create the run dir and start the sandbox (SESSION_STARTING); once it
 * is up, emit run_start and send the prompt. A run refused at once
 * (configuration, run dir, provider) returns -1 with *err and the exit
 * code in session_exit_code (2 configuration, 1 run dir...). Else 0:
 * the caller runs the loop until SESSION_DONE; a sandbox that cannot
 * start then ends the run with exit code 3 and session_error saying
 * why (nothing recorded, no run dir left behind). */
int session_start(struct session *s, const char *prompt, char **err);
/* Why a run that session_start or session_resume accepted could not
 * get going (the sandbox did not start, a resumed workspace could not
 * be restored): the message to show as the start's error, or NULL. */
const char *session_error(const struct session *s);
/* The descriptors a session of cfg holds at most at once, its
 * sandbox's included (measured: see rundir.c), to fit -j to the
 * limit. */
int session_fds(const struct config *cfg);

/* Ctrl-C: cancel the model stream or command in flight and end the run
 * as interrupted (a running command's result is recorded first; a
 * second call ends the run without waiting for it). The run is over at
 * SESSION_DONE. */
void session_interrupt(struct session *s);

enum session_state session_state(const struct session *s);
int session_exit_code(const struct session *s);
const char *session_run_dir(const struct session *s);
/* The provider has no key (cfg->key_later): why, and every request
 * fails with it; NULL when it has one or has not been made yet. */
const char *session_no_key(const struct session *s);
/* The run's clock now: ms since its t = 0 (the events' t), for a
 * frontend that attaches to a run under way. */
int64_t session_clock(const struct session *s);

/* Interactive mode (the TUI). When the model answers without tool
 * calls the run does not end: the session goes IDLE (an "idle" event)
 * and waits for session_send; session_end finishes the run. Set it
 * before session_start, which may then be given a NULL prompt. */
void session_set_interactive(struct session *s, int on);
/* Continue an IDLE interactive run with the user's next message; -1
 * with *err when the agent is busy or the run is over. */
int session_send(struct session *s, const char *text, char **err);
/* Interactive Ctrl-C: stop the model stream or the running command
 * (the turn's remaining calls are not run) and go IDLE. Returns 0 when
 * there was nothing to stop. Outside interactive mode it is
 * session_interrupt. */
int session_cancel(struct session *s);
/* End the run: stop what runs, deliver the outputs, persist the
 * workspace, stop the sandbox and emit run_end (completed when idle,
 * interrupted when busy). The end goes on through the loop
 * (SESSION_ENDING): run the loop until SESSION_DONE. */
void session_end(struct session *s);
/* The run's sandbox, for the workspace tree (NULL until it is up). */
struct sbx *session_sandbox(const struct session *s);

/* --- approvals ----------------------------------------------------
 * Every tool call of a turn goes through the policy when the turn's
 * answer arrives (each gets its tool_call event then). A call the
 * policy asks about becomes a request to the approver; the calls run
 * in order, so the session waits (SESSION_AWAITING_APPROVAL) when the
 * next one has no decision yet, while the loop goes on. Without an
 * approver, a call that needs asking is denied: its result starts
 * with "not approved:" and says how to allow it. */

/* A call waiting for a decision. Valid until it is answered or
 * cancelled. */
struct session_approval {
	const char *id;             /* the tool call's id */
	const char *tool;           /* shell, python, write_file... */
	const char *subject;        /* the complete command, code or path */
	const char *cwd;            /* where it runs: "/workspace" */
	const char *const *reasons; /* in words, for the user */
	size_t nreasons;
	/* the exact rules "always" saves ([{"match", "action"[, "tool"]}]),
	 * or NULL when "always" is not offered; then no_always says why */
	const cJSON *rules;
	const char *no_always;
	int editable; /* the subject can be edited (shell, python) */
};

/* An MCP server's question to the person (elicitation/create), while
 * one of its tools runs or at any time. Valid until it is answered or
 * cancelled. The message and the schema are the server's words: not
 * sanitized. */
struct session_elicitation {
	const char *id;      /* "elicit-N" */
	const char *server;  /* the server's name in mcp_servers */
	const char *call;    /* the tool call in flight, or NULL */
	const char *message; /* what it asks */
	const cJSON *schema; /* requestedSchema: {properties, required} */
};

enum session_decision {
	SESSION_RUN_ONCE, /* run it this time */
	SESSION_EDIT,     /* run the edited command instead */
	SESSION_ALWAYS,   /* save the rules shown, then run it */
	SESSION_DENY,     /* the model is told the user denied it */
	SESSION_FEEDBACK, /* denied; the feedback is the tool result */
};

enum session_scope {
	SESSION_SCOPE_SESSION, /* "always" rules last for this run */
	SESSION_SCOPE_PROJECT, /* ...and are saved in .assay/config.json */
};

/* The frontend that asks a person. Neither function may block: answer
 * later, from the loop, with session_approve. */
struct session_approver {
	void (*request)(void *arg, const struct session_approval *req);
	/* the request is gone unanswered (run ended, turn cancelled,
	 * or an "always" rule now allows it) */
	void (*cancel)(void *arg, const char *id);
	/* an MCP server asks the person something (may be NULL: then
	 * every elicitation is declined, "nobody to ask") */
	void (*elicit)(void *arg, const struct session_elicitation *e);
	/* the question id is gone unanswered (its call or the run ended,
	 * its server restarted) */
	void (*elicit_cancel)(void *arg, const char *id);
};

/* Set before session_start; ops is copied. */
void session_set_approver(struct session *s, const struct session_approver *ops,
                          void *arg);
/* Decide the pending call id. edited is the new command or code
 * (SESSION_EDIT), feedback the text for SESSION_FEEDBACK, scope where
 * SESSION_ALWAYS saves. -1 + *err (and the call stays pending) when
 * there is no such request, an edit is empty or denied by a rule, or
 * the rules cannot be saved. */
int session_approve(struct session *s, const char *id,
                    enum session_decision decision, const char *edited,
                    const char *feedback, enum session_scope scope, char **err);
/* The requests still waiting, oldest first (for a frontend that
 * redraws its queue). */
size_t session_approvals_pending(const struct session *s);
const struct session_approval *session_approval_at(const struct session *s,
                                                   size_t i);

/* Answer the elicitation id: action "accept" with content (an object
 * of the schema's fields; omitted ones with a default are filled),
 * "decline" or "cancel". -1 + *err (and it stays pending) when there
 * is no such request or accept's content does not fit the schema (a
 * required field missing, a wrong type, a value outside its enum,
 * bounds or length). The answer is recorded (mcp_elicit). */
int session_elicit(struct session *s, const char *id, const char *action,
                   const cJSON *content, char **err);
/* The values a property of an elicitation's schema offers to choose
 * from (enum, oneOf/anyOf's consts, an array's items'), a new array;
 * NULL when it offers none. */
cJSON *session_elicit_choices(const cJSON *prop);
/* The elicitations waiting, oldest first. */
size_t session_elicitations_pending(const struct session *s);
const struct session_elicitation *
session_elicitation_at(const struct session *s, size_t i);

/* --- resume, re-execute, fork --------------------------------------
 * A recorded run (its transcript.jsonl, cache/ and workspace) goes on
 * instead of starting afresh: call session_resume instead of
 * session_start. Recorded model answers come from cache/<hash>.json
 * (a `model_request` with "cached": true, usage with zero tokens,
 * nothing sent to the provider) for as long as the request rebuilt
 * here hashes to the recorded request_hash (computed with the
 * recorded provider and model); the first request that differs, or
 * that has no recorded answer, goes to the provider and the run is
 * live from there (a `replay_live` event says why). A recorded request
 * that never got an answer (cancelled, failed) but was followed by
 * later ones is skipped: the run went on without it. */
enum session_resume_mode {
	/* Same run dir, appended to: the workspace as the run left it,
	 * recorded tool results taken from the transcript (nothing runs
	 * again). The transcript gets a `run_resume` event. */
	SESSION_RESUME,
	/* A new run dir (run_start has "forked_from"): a fresh sandbox
	 * staged from the recorded inputs, every recorded tool call runs
	 * again; recorded user messages are sent again in order. */
	SESSION_REEXECUTE,
};

struct session_resume_opts {
	const char *run; /* a run dir, a run id under .assay/runs/, or a
	                    transcript path */
	enum session_resume_mode mode;
	/* SESSION_REEXECUTE: the new run's dir; NULL: <old dir>-reN,
	 * the first N that does not exist */
	const char *run_dir;
	/* Fork (SESSION_REEXECUTE only): seq of a recorded tool_result or
	 * user_message whose content is replaced by `replace`; the run is
	 * live from there. 0 = no fork. */
	uint64_t fork_at;
	const char *replace;
	/* the user passed --base-url on this command line: it may differ
	 * from the recorded URL (else the URL the settings give must be
	 * the recorded one, or the resume is refused) */
	int base_url_given;
};

/* Apply a recorded run's settings to cfg, which the caller then
 * overrides with its own options. Call before session_new. A run dir
 * is trusted like a project file: the record gives provider, model,
 * sandbox backend and image, outputs, turn and token limits; the ask
 * mode and sandbox limits only where stricter than cfg's; the
 * instructions and scripted model from the copies in the run dir.
 * Never the base URL, network, out dir, workspace or inputs: those
 * stay the user's (session_resume refuses what does not fit). Keys
 * are never recorded: they still come from the environment. */
int session_record_config(const char *run, struct config *cfg, char **err);

/* Continue the recorded run o->run; prompt (may be NULL) is sent once
 * the recorded part is done (one new request). A run that completed
 * and gets no prompt ends at once with its outputs delivered again
 * (run_end "completed"). -1 + *err (and session_exit_code) when the
 * record cannot be read or the resume is refused; then, as with
 * session_start, the sandbox starts while the loop runs (a failure, or
 * a workspace that cannot be restored, ends the run with session_error
 * set). Observers see the new events as usual. */
int session_resume(struct session *s, const struct session_resume_opts *o,
                   const char *prompt, char **err);

/* --- step mode -----------------------------------------------------
 * Breakpoints before each model request and before each execution
 * (after approval: an approved call still pauses). At one, the
 * session emits `step_pause`, goes SESSION_PAUSED and calls the
 * stepper's pause; the frontend answers later, from the loop, with
 * session_step (which emits `step_resume`). Without a stepper, step
 * mode never pauses. */
enum session_step_kind {
	SESSION_STEP_REQUEST, /* a model request is about to be sent */
	SESSION_STEP_EXEC,    /* a tool call is about to run */
};

/* What is about to happen. Valid until session_step answers it. */
struct session_step {
	enum session_step_kind kind;
	/* SESSION_STEP_REQUEST */
	int turn;                 /* the turn number the request opens */
	size_t messages;          /* messages sent (not counting system) */
	long est_input_tokens;    /* an estimate: characters / 4 */
	const char *const *tools; /* the tool names offered */
	size_t ntools;
	const char *last_role;    /* user, assistant or tool */
	const char *last_message; /* the last message in full */
	/* SESSION_STEP_EXEC */
	const char *id;      /* the tool call's id */
	const char *tool;    /* shell, python, write_file... */
	const char *subject; /* the command, code or path */
	int editable;        /* shell and python calls can be edited */
};

enum session_step_action {
	SESSION_STEP_CONTINUE, /* n: send the request / run the call */
	SESSION_STEP_EDIT,     /* e: run the edited command or code */
	SESSION_STEP_SKIP,     /* k: do not run; the model is told */
	SESSION_STEP_END,      /* x: end the run (interrupted) */
};

struct session_stepper {
	/* Must not block: answer later with session_step. */
	void (*pause)(void *arg, const struct session_step *st);
};

/* ops is copied; set any time. */
void session_set_stepper(struct session *s, const struct session_stepper *ops,
                         void *arg);
/* Turn step mode on or off at any time (the TUI's `s`); turning it
 * off while paused does not resume: answer the pause. */
void session_set_step(struct session *s, int on);
int session_step_mode(const struct session *s);
/* The pause waiting for an answer, or NULL. */
const struct session_step *session_step_pending(const struct session *s);
/* A budget an interactive run reached (--max-cost, --max-tokens,
 * --max-turns): the session waits in IDLE ("budget") for
 * session_budget_decide; budget_reached was emitted. */
struct session_budget {
	const char *kind; /* cost, tokens, turns */
	double spent, limit;
	const char *why; /* in words */
};
/* The budget waiting for a decision, or NULL. */
const struct session_budget *session_budget_pending(const struct session *s);
/* Go on with limit as the new budget (above what was spent), or, with
 * limit <= 0, stop: the run ends budget_exhausted (exit 5). The decision
 * is a budget_decision event. -1 + *err when nothing waits or limit
 * would not let the run go on. */
int session_budget_decide(struct session *s, double limit, char **err);
/* Answer the pause. EDIT needs edited (a non-empty command or code;
 * the user's deny rules still apply) and is only for an execution;
 * SKIP only for an execution. -1 + *err when nothing is paused or the
 * action does not fit. */
int session_step(struct session *s, enum session_step_action action,
                 const char *edited, char **err);

#endif
