/* wire.c: the neutral conversation walked through a dialect's encoders
 * (struct llm_wire, llm_internal.h): each message to the encoder of its
 * part, the one place a dialect's table is driven for the history. */
#include "llm/llm_internal.h"
#include "assay/json.h"

#include <string.h>

void llm_wire_messages(const struct llm_wire *w, cJSON *out,
                       const cJSON *messages, int first)
{
	const cJSON *msg;
	int i = 0;

	cJSON_ArrayForEach(msg, messages)
	{
		if (i++ < first)
			continue;
		const char *role = json_str(msg, "role", "user");
		if (!strcmp(role, "assistant"))
			w->assistant(out, msg);
		else if (!strcmp(role, "tool"))
			w->tool_result(out, msg);
		else
			w->user(out, msg);
	}
}
