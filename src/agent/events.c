/* events.c: the one place where event type names are written, and the
 * builders of every event type (docs/ARCHITECTURE.md, "Events"). */
#include <string.h>

#include "assay/events.h"

static const char *const event_names[EV__COUNT] = {
    [EV_UNKNOWN] = "unknown",
    [EV_RUN_START] = "run_start",
    [EV_RUN_RESUME] = "run_resume",
    [EV_USER_MESSAGE] = "user_message",
    [EV_MODEL_REQUEST] = "model_request",
    [EV_TEXT_DELTA] = "text_delta",
    [EV_ASSISTANT_MESSAGE] = "assistant_message",
    [EV_USAGE] = "usage",
    [EV_TOOL_CALL] = "tool_call",
    [EV_APPROVAL_REQUEST] = "approval_request",
    [EV_APPROVAL] = "approval",
    [EV_EXEC_START] = "exec_start",
    [EV_EXEC_OUTPUT] = "exec_output",
    [EV_EXEC_END] = "exec_end",
    [EV_TOOL_RESULT] = "tool_result",
    [EV_WORKSPACE_CHANGE] = "workspace_change",
    [EV_PYTHON_SESSION] = "python_session",
    [EV_REPLAY_LIVE] = "replay_live",
    [EV_STEP_PAUSE] = "step_pause",
    [EV_STEP_RESUME] = "step_resume",
    [EV_IDLE] = "idle",
    [EV_ERROR] = "error",
    [EV_RUN_END] = "run_end",
};

const char *event_type_name(enum event_type t)
{
	if ((int)t < 0 || t >= EV__COUNT)
		t = EV_UNKNOWN;
	return event_names[t];
}

enum event_type event_type_parse(const char *name)
{
	if (!name)
		return EV_UNKNOWN;
	for (int t = 1; t < EV__COUNT; t++)
		if (!strcmp(event_names[t], name))
			return (enum event_type)t;
	return EV_UNKNOWN;
}

enum event_type event_type_of(const cJSON *ev)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(ev, "type");
	return event_type_parse(cJSON_IsString(t) ? t->valuestring : NULL);
}
