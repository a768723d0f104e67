/* session.h: one run of the agent: the state machine that turns model
 * answers into tool calls and tool results into the next request, and
 * the event stream every frontend observes (DESIGN.md section 2). */
#ifndef ASSAY_SESSION_H
#define ASSAY_SESSION_H

#include <cjson/cJSON.h>

struct loop;
struct config;
struct session;

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

#endif
