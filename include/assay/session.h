/* session.h: one run of the agent: the state machine that turns model
 * answers into tool calls and tool results into the next request, and
 * the event stream every frontend observes (DESIGN.md section 2). */
#ifndef ASSAY_SESSION_H
#define ASSAY_SESSION_H

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

enum session_state {
	SESSION_IDLE,
	SESSION_REQUESTING,
	SESSION_EXECUTING,
	SESSION_DONE,
	/* the next call waits for a person's decision (session_approve) */
	SESSION_AWAITING_APPROVAL,
};

/* Sees every event (seq, t, type, ...) as it happens. */
typedef void (*session_event_fn)(void *arg, const cJSON *ev);

/* cfg must outlive the session. */
struct session *session_new(struct loop *l, struct config *cfg, char **err);
void session_free(struct session *s);

void session_observe(struct session *s, session_event_fn fn, void *arg);

/* Create the run dir and sandbox, emit run_start and send the prompt.
 * On failure returns -1 with *err and the exit code in
 * session_exit_code (3 sandbox, 2 configuration...). */
int session_start(struct session *s, const char *prompt, char **err);

/* Ctrl-C: cancel the model stream or command in flight and end the run
 * as interrupted (a second call kills without waiting). */
void session_interrupt(struct session *s);

enum session_state session_state(const struct session *s);
int session_exit_code(const struct session *s);
const char *session_run_dir(const struct session *s);

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
/* End the run now: stop what runs, deliver the outputs, persist the
 * workspace, stop the sandbox and emit run_end (completed when idle,
 * interrupted when busy). */
void session_end(struct session *s);
/* The run's sandbox, for the workspace tree (NULL before start). */
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

#endif
