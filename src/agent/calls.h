/* calls.h: the calls part of a session: the turn's tool calls and the
 * result on its way (calls.c), running them (tools.c, pytool.c,
 * pyframe.c), and their approvals (approval.c). Each part struct is
 * written by its owners only; the others call the functions below. */
#ifndef ASSAY_AGENT_CALLS_H
#define ASSAY_AGENT_CALLS_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "assay/buf.h"
#include "assay/sandbox.h"
#include "assay/session.h"

struct session;
struct tool_run;       /* one tool call in flight (tools.c) */
struct session_result; /* a call's result on its way (calls.c) */
struct pykernel;       /* the python tool's kernel (pytool.c) */
struct policy;
struct config;
struct approval; /* one call's decision */

/* The turn's tool calls: calls.c hands them out one by one and keeps
 * the result of the one that ran; tools.c the call running. */
/* part: calls, owner: src/agent/calls.c, src/agent/tools.c */
struct calls {
	cJSON *pending; /* tool calls of the current turn */
	int next_call;
	struct tool_run *running;
	struct session_result *result; /* waiting for the archive */
};

/* Approvals (approval.c): the policy, one entry per call of the turn,
 * and the frontend that asks a person. */
/* part: appr, owner: src/agent/approval.c */
struct approvals {
	struct policy *policy;
	struct approval *approvals;
	int napprovals;
	struct session_approver approver;
	void *approver_arg;
	uint64_t timer;
};

/* The python tool's kernel (pytool.c). */
/* part: py, owner: src/agent/pytool.c */
struct pystate {
	struct pykernel *kernel;
	int generation; /* kernels started so far */
	int lost;       /* a kernel died: the next cell says so */
};

/* calls.c: the turn's calls. */
/* The turn's calls are pending (taken; the first is next). */
void calls_set(struct session *s, cJSON *pending);
/* The turn's calls are over. */
void calls_clear(struct session *s);
/* The call at next_call, which moves on to the one after it. */
const cJSON *calls_advance(struct session *s);
/* A call ended with content (and images: [{event, part}] from
 * images.c, taken; NULL: none): the result as the model is told it (an
 * approval's or a fork's wording unless as_is) waits in
 * s->calls.result. 1 when the call may have changed files. */
int calls_result_new(struct session *s, const char *id, const char *content,
                     int is_error, int as_is, cJSON *images);
/* The result waiting joins the record and the conversation; 1 when its
 * call may have changed files. */
int calls_result_record(struct session *s);
void calls_free(struct calls *c);
/* Run the next call now: a decision arrived (session.c). */
void session_run_next(struct session *s);

/* Neutral tool definitions offered to the model (view_image unless
 * send_images is "off"). */
cJSON *tools_definitions(const struct config *cfg);
/* Run one tool call ({"id","name","arguments"}); calls
 * tools_finished(s, id, content, is_error) when done (possibly before
 * returning). */
void tools_run(struct session *s, const cJSON *call);
void tools_cancel(struct session *s);
void tools_finished(struct session *s, const char *id, const char *content,
                    int is_error);
/* The same with the images that go with the result (images.c; taken). */
void tools_finished_images(struct session *s, const char *id,
                           const char *content, int is_error, cJSON *images);

/* approval.c: each call of a turn through the policy. */
struct approval; /* one call's decision */
/* Make the policy from the configuration (its rules are checked). */
int approval_init(struct session *s, char **err);
void approval_free(struct session *s);
/* The turn's calls (s->calls.pending) arrived: emit their tool_call events,
 * decide each, and ask the approver about those that need a person. */
void approval_turn(struct session *s);
/* The call at s->calls.next_call: 0 while it waits for a decision; else 1
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

/* approval.c: a step-mode edit of call id (deny rules checked); the
 * result then says what ran instead. */
int approval_set_edit(struct session *s, const char *id, const char *edited,
                      char **err);

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
/* A python cell's result ({[value], [error: {type, message}],
 * [traceback]}, taken) goes into its exec_end as "python". */
void tool_run_python(struct tool_run *r, cJSON *result);

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
