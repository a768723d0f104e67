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

#endif
