/* ending.c: the work of SESSION_ENDING, one step after another through
 * the loop: the sandbox operations in flight finish, the declared
 * outputs are copied out (outputs.c), the workspace is persisted
 * (persist.c: not again when unchanged), the sandbox stopped; then the
 * session goes DONE (session_ended). Each sandbox failure on the way
 * is an error event. The only writer of struct ending (ending.h). */
#include "agent_internal.h"

#include "assay/events.h"
#include "assay/log.h"
#include "assay/util.h"

#include <stdlib.h>

/* The steps of ENDING, in order. */
enum ending_stage {
	ENDING_DRAIN,   /* sandbox operations in flight finish first */
	ENDING_OUTPUTS, /* the declared outputs are copied out */
	ENDING_ARCHIVE, /* the workspace is persisted */
	ENDING_STOP,    /* the sandbox is stopped */
};

/* The sandbox stopped: the run is over. */
static void ending_stopped(struct session *s, void *ctx, int rc,
                           const char *err, struct buf *data, cJSON *list)
{
	(void)ctx;
	(void)data;
	(void)list;
	if (rc < 0 && s->rundir.tr.written)
		session_emit(s, ev_error("sandbox",
		                         err ? err : "the sandbox did not stop",
		                         -1));
	session_ended(s);
}

/* Stop the sandbox: the last step. */
static void ending_stop(struct session *s)
{
	s->end.stage = ENDING_STOP;
	sbx_stop(s->sbx, session_sbx_done,
	         session_sbx_call(s, ending_stopped, NULL));
}

/* The workspace is persisted (run_end names the archive, written now
 * or unchanged since it was), or the archive failed. */
static void ending_archived(struct session *s, char *archive, int written,
                            const char *err)
{
	long long ms = (long long)(now_ms() - s->end.t0);
	s->end.archive = archive;
	if (!archive)
		session_emit(s, ev_error("sandbox", err, -1));
	else if (written)
		log_info("end: the workspace archived in %lld ms", ms);
	else
		log_info("end: the workspace is unchanged since %s: not "
		         "archived again (checked in %lld ms)",
		         archive, ms);
	ending_stop(s);
}

/* The outputs are delivered: persist the workspace (persist.c). */
static void ending_delivered(struct session *s, cJSON *outputs, int missing)
{
	s->end.outputs = outputs;
	s->end.missing = missing;
	s->end.stage = ENDING_ARCHIVE;
	s->end.t0 = now_ms();
	persist_end(s, ending_archived);
}

/* Nothing else is in flight: deliver, persist and stop (a run that
 * never got going only stops its sandbox). */
static void ending_drained(struct session *s)
{
	if (!s->sbx) {
		session_ended(s);
		return;
	}
	if (!s->rundir.tr.written) {
		ending_stop(s);
		return;
	}
	s->end.stage = ENDING_OUTPUTS;
	outputs_deliver(s, ending_delivered);
}

void ending_start(struct session *s, const char *status, int code)
{
	s->end.status = status;
	s->end.code = code;
	s->end.stage = ENDING_DRAIN;
	if (!s->sbx_ncalls)
		ending_drained(s);
}

void ending_check(struct session *s)
{
	if (s->state == SESSION_ENDING && s->end.stage == ENDING_DRAIN &&
	    !s->sbx_ncalls)
		ending_drained(s);
}

cJSON *ending_take_outputs(struct session *s)
{
	cJSON *outputs = s->end.outputs;
	s->end.outputs = NULL;
	return outputs;
}
