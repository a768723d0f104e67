/* step.h: the step part of a session: step mode's breakpoints (step.c,
 * its only writer). Step decides, the session acts. */
#ifndef ASSAY_AGENT_STEP_H
#define ASSAY_AGENT_STEP_H

#include <cjson/cJSON.h>

#include "assay/session.h"

struct session;
struct step_pause;
struct llm_request;

/* Step mode (step.c): its switch, its frontend, the breakpoint waiting
 * and the one it let through (a pass is for that request or call only). */
/* part: step, owner: src/agent/step.c */
struct step_ctl {
	int on;
	struct session_stepper ops;
	void *arg;
	struct step_pause *pause; /* the breakpoint waiting, or NULL */
	int request_cleared;      /* the next request passed its pause */
	int call_cleared;         /* 1 + the call that passed its pause */
};

/* step.c: the breakpoints. */
enum step_do {
	STEP_GO,    /* no breakpoint here (or passed): go on */
	STEP_PAUSE, /* a breakpoint: the session enters PAUSED */
};
enum step_do step_before_request(struct step_ctl *st,
                                 const struct llm_request *req, int turn);
enum step_do step_before_exec(struct step_ctl *st, const cJSON *call, int idx,
                              int turn);
/* Entering PAUSED: the step_pause event of the waiting breakpoint;
 * then step_notify tells the frontend. */
cJSON *step_pause_event(const struct step_ctl *st);
void step_notify(struct step_ctl *st);
/* What an answer to the pause asks of the session. */
enum step_answer {
	STEP_REFUSED = -1, /* *err says why; still paused */
	STEP_RESUME,       /* go on from the loop (step_resumes) */
	STEP_SKIP,         /* the call does not run: STEP_SKIPPED is its
	                      result */
	STEP_END,          /* end the run, interrupted */
};
extern const char STEP_SKIPPED[];
/* Check and record (step_resume) an answer; an edit goes to the
 * approval of the call. */
enum step_answer step_answer(struct step_ctl *st, struct session *s,
                             enum session_step_action action,
                             const char *edited, char **err);
/* After STEP_RESUME: the kind of step the answer lets through. */
enum session_step_kind step_resumes(const struct step_ctl *st);
/* Forget the breakpoint waiting and any pass (the run ends or the turn
 * is cancelled). */
void step_clear(struct step_ctl *st);
void step_free(struct step_ctl *st);

#endif
