/* messages.c: the neutral conversation every request carries (the
 * provider files translate it): the user's messages, the model's
 * answers with their tool calls, and each call's result (with the
 * images that go with it), in order. What it reads, the conversation,
 * is not an event. */
#include "agent_internal.h"

#include "assay/json.h"

#include <string.h>

void messages_add_user(cJSON *messages, const char *text)
{
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "role", "user");
	cJSON_AddStringToObject(msg, "content", text);
	cJSON_AddItemToArray(messages, msg);
}

void messages_add_assistant(cJSON *messages, const char *text,
                            const cJSON *tool_calls, const cJSON *items)
{
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "role", "assistant");
	cJSON_AddStringToObject(msg, "content", text ? text : "");
	if (cJSON_GetArraySize(tool_calls) > 0)
		cJSON_AddItemToObject(msg, "tool_calls",
		                      cJSON_Duplicate(tool_calls, 1));
	if (cJSON_IsObject(items))
		cJSON_AddItemToObject(msg, "provider_items",
		                      cJSON_Duplicate(items, 1));
	cJSON_AddItemToArray(messages, msg);
}

void messages_add_tool(cJSON *messages, const char *id, const char *name,
                       const char *content, int is_error)
{
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "role", "tool");
	cJSON_AddStringToObject(msg, "tool_call_id", id);
	cJSON_AddStringToObject(msg, "name", name);
	cJSON_AddStringToObject(msg, "content", content);
	cJSON_AddBoolToObject(msg, "is_error", is_error);
	cJSON_AddItemToArray(messages, msg);
}

void messages_add_image(cJSON *messages, const char *id, cJSON *part)
{
	cJSON *msg, *last = NULL;
	cJSON_ArrayForEach(msg, messages)
	{
		if (!strcmp(json_str(msg, "role", ""), "tool") &&
		    !strcmp(json_str(msg, "tool_call_id", ""), id))
			last = msg;
	}
	if (!last) {
		cJSON_Delete(part);
		return;
	}
	cJSON *images = cJSON_GetObjectItem(last, "images");
	if (!images)
		images = cJSON_AddArrayToObject(last, "images");
	cJSON_AddItemToArray(images, part);
}

size_t messages_image_bytes(const cJSON *messages)
{
	size_t n = 0;
	const cJSON *msg, *img;
	cJSON_ArrayForEach(msg, messages)
	{
		cJSON_ArrayForEach(img, cJSON_GetObjectItem(msg, "images"))
		{
			n += strlen(json_str(img, "data", ""));
		}
	}
	return n;
}

long messages_image_tokens(const cJSON *messages)
{
	long n = 0;
	const cJSON *msg, *img;
	cJSON_ArrayForEach(msg, messages)
	{
		cJSON_ArrayForEach(img, cJSON_GetObjectItem(msg, "images"))
		{
			n += json_long(img, "tokens", 0);
		}
	}
	return n;
}

const char *messages_image_call(const cJSON *messages, const char *sha256)
{
	const cJSON *msg, *img;
	cJSON_ArrayForEach(msg, messages)
	{
		cJSON_ArrayForEach(img, cJSON_GetObjectItem(msg, "images"))
		{
			if (!strcmp(json_str(img, "sha256", ""), sha256))
				return json_str(msg, "tool_call_id", "");
		}
	}
	return NULL;
}
