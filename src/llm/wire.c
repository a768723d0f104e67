/* wire.c: the neutral conversation walked through a dialect's encoders
 * (struct llm_wire, llm_internal.h): each message to the encoder of its
 * part, the one place a dialect's table is driven for the history. */
#include "llm/llm_internal.h"
#include "assay/json.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

char *llm_image_data_url(const cJSON *img)
{
	return xasprintf("data:%s;base64,%s",
	                 json_str(img, "media_type", "image/png"),
	                 json_str(img, "data", ""));
}

char *llm_image_caption(const cJSON *img)
{
	return xasprintf("[image %s, %dx%d]", json_str(img, "path", ""),
	                 json_int(img, "width", 0),
	                 json_int(img, "height", 0));
}

void llm_wire_messages(const struct llm_wire *w, cJSON *out,
                       const cJSON *messages, int first)
{
	const cJSON *msg, *tools = NULL;
	int i = 0, ntools = 0;

	cJSON_ArrayForEach(msg, messages)
	{
		if (i++ < first)
			continue;
		const char *role = json_str(msg, "role", "user");
		if (strcmp(role, "tool") && ntools && w->tools_end)
			w->tools_end(out, tools, ntools);
		if (strcmp(role, "tool"))
			ntools = 0;
		if (!strcmp(role, "assistant")) {
			w->assistant(out, msg);
		} else if (!strcmp(role, "tool")) {
			if (!ntools++)
				tools = msg;
			w->tool_result(out, msg);
		} else {
			w->user(out, msg);
		}
	}
	if (ntools && w->tools_end)
		w->tools_end(out, tools, ntools);
}
