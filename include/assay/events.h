/* events.h: the event types of a run (docs/ARCHITECTURE.md, "Events").
 * Every event is a JSON object with seq, t and type; the type's name is
 * written in one place (src/agent/events.c). Consumers dispatch on
 * enum event_type through a table indexed by it, never on the string.
 * The builders that make each event live in src/agent/events.c too. */
#ifndef ASSAY_EVENTS_H
#define ASSAY_EVENTS_H

#include <cjson/cJSON.h>

enum event_type {
	EV_UNKNOWN = 0, /* a type this build does not know (newer record) */
	EV_RUN_START,
	EV_RUN_RESUME,
	EV_USER_MESSAGE,
	EV_MODEL_REQUEST,
	EV_TEXT_DELTA,
	EV_ASSISTANT_MESSAGE,
	EV_USAGE,
	EV_TOOL_CALL,
	EV_APPROVAL_REQUEST,
	EV_APPROVAL,
	EV_EXEC_START,
	EV_EXEC_OUTPUT,
	EV_EXEC_END,
	EV_TOOL_RESULT,
	EV_WORKSPACE_CHANGE,
	EV_PYTHON_SESSION,
	EV_REPLAY_LIVE,
	EV_STEP_PAUSE,
	EV_STEP_RESUME,
	EV_IDLE,
	EV_ERROR,
	EV_RUN_END,
	EV__COUNT
};

/* The wire name of a type ("tool_result"); "unknown" for EV_UNKNOWN. */
const char *event_type_name(enum event_type t);
/* The type named by name; EV_UNKNOWN for NULL or a name not known. */
enum event_type event_type_parse(const char *name);
/* The type of an event object (its "type" member). */
enum event_type event_type_of(const cJSON *ev);

#endif
