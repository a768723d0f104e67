/* ending.h: the end part of a session: what ENDING does, one step
 * after another (ending.c), and the declared outputs it copies out
 * (outputs.c). ending.c alone writes struct ending. */
#ifndef ASSAY_AGENT_ENDING_H
#define ASSAY_AGENT_ENDING_H

#include <stdint.h>
#include <cjson/cJSON.h>

struct session;
struct outputs;

/* ENDING, and what run_end says. */
/* part: end, owner: src/agent/ending.c */
struct ending {
	const char *status;
	int code;
	int stage;      /* ending.c's step */
	cJSON *outputs; /* run_end's outputs, once delivered */
	int missing;    /* declared outputs not delivered */
	char *archive;  /* the workspace archive, once written */
	int64_t t0;     /* when its writing began */
};

/* ending.c: ENDING's steps. Start them once the state is ENDING; a
 * completed sandbox operation checks whether the drain is over. Then
 * session_ended (session.c) makes the session DONE. */
void ending_start(struct session *s, const char *status, int code);
void ending_check(struct session *s);
void session_ended(struct session *s);
/* run_end's outputs (taken: NULL from then on). */
cJSON *ending_take_outputs(struct session *s);

/* outputs.c: copy the declared outputs out (ENDING). done gets run_end's
 * outputs (taken) and how many are missing, from the loop. */
typedef void (*outputs_done_fn)(struct session *s, cJSON *outputs, int missing);
void outputs_deliver(struct session *s, outputs_done_fn done);
void outputs_free(struct outputs *o);

#endif
