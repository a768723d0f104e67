/* chat.c: the Chat Completions wire (protocols.md A), for OpenAI and
 * the servers that speak its dialect (Ollama, vLLM, llama.cpp, the
 * presets): the request body from the neutral conversation, one
 * encoder per part of it, and the table the transport (transport.c)
 * drives; chat_stream.c reads the answer's stream. */
#include "llm/llm_internal.h"
#include "assay/json.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAT_MAX_ID 40 /* the longest tool call id OpenAI takes */

/* A tool call id as the API takes it: OpenAI refuses ids over 40
 * characters, and a run recorded against another server (vLLM's are
 * 46) may be resumed or forked onto it. A longer id is replaced by a
 * hash of it, the same for the call and its result. */
void chat_add_id(cJSON *obj, const char *key, const char *id)
{
	if (strlen(id) <= CHAT_MAX_ID) {
		cJSON_AddStringToObject(obj, key, id);
		return;
	}
	char hex[65], out[CHAT_MAX_ID + 1];
	sha256_hex(id, strlen(id), hex);
	snprintf(out, sizeof out, "call_%.*s", CHAT_MAX_ID - 5, hex);
	cJSON_AddStringToObject(obj, key, out);
}

static cJSON *chat_encode_call(const cJSON *call)
{
	cJSON *tc = cJSON_CreateObject();
	cJSON *fn = cJSON_CreateObject();
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(call, "arguments");
	char *s;

	chat_add_id(tc, "id", json_str(call, "id", ""));
	cJSON_AddStringToObject(tc, "type", "function");
	cJSON_AddStringToObject(fn, "name", json_str(call, "name", ""));
	/* Arguments that did not parse (arguments_raw, kept in the record)
	 * are never sent back: the API refuses a request whose history
	 * holds them (400), so the call goes back as "{}" and its result
	 * says what was wrong. */
	if (cJSON_IsObject(args))
		s = json_print(args);
	else
		s = xstrdup("{}");
	cJSON_AddStringToObject(fn, "arguments", s);
	free(s);
	cJSON_AddItemToObject(tc, "function", fn);
	return tc;
}

/* A tool's result as a "tool" message. */
static void chat_tool_result(cJSON *out, const cJSON *msg)
{
	cJSON *m = cJSON_CreateObject();

	cJSON_AddStringToObject(m, "role", "tool");
	chat_add_id(m, "tool_call_id", json_str(msg, "tool_call_id", ""));
	const cJSON *images = cJSON_GetObjectItem(msg, "images");
	if (cJSON_GetArraySize(images) > 0) {
		/* a tool message takes text only: the images follow in a
		 * user message after the turn's results (chat_tools_end) */
		int many = cJSON_GetArraySize(images) > 1;
		char *text = xasprintf(
		    "%s\n[the image%s of this result follow%s in the next "
		    "user message]",
		    json_str(msg, "content", ""), many ? "s" : "",
		    many ? "" : "s");
		cJSON_AddStringToObject(m, "content", text);
		free(text);
	} else {
		cJSON_AddStringToObject(m, "content",
		                        json_str(msg, "content", ""));
	}
	cJSON_AddItemToArray(out, m);
}

/* The images of a run of tool results, in one user message after them
 * (tool messages take no image parts). */
static void chat_tools_end(cJSON *out, const cJSON *first, int n)
{
	cJSON *parts = NULL;
	const cJSON *msg = first;
	for (int i = 0; i < n && msg; i++, msg = msg->next) {
		const cJSON *img;
		cJSON_ArrayForEach(img, cJSON_GetObjectItem(msg, "images"))
		{
			if (!parts)
				parts = cJSON_CreateArray();
			char *cap = llm_image_caption(img);
			char *text =
			    xasprintf("%s from the result of call %s", cap,
			              json_str(msg, "tool_call_id", ""));
			cJSON *t = cJSON_CreateObject();
			cJSON_AddStringToObject(t, "type", "text");
			cJSON_AddStringToObject(t, "text", text);
			cJSON_AddItemToArray(parts, t);
			free(text);
			free(cap);
			char *url = llm_image_data_url(img);
			cJSON *p = cJSON_CreateObject(),
			      *u = cJSON_CreateObject();
			cJSON_AddStringToObject(p, "type", "image_url");
			cJSON_AddStringToObject(u, "url", url);
			cJSON_AddStringToObject(
			    u, "detail", json_str(img, "detail", "auto"));
			cJSON_AddItemToObject(p, "image_url", u);
			cJSON_AddItemToArray(parts, p);
			free(url);
		}
	}
	if (!parts)
		return;
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", "user");
	cJSON_AddItemToObject(m, "content", parts);
	cJSON_AddItemToArray(out, m);
}

/* A user's (or any other role's) message, its content as it is. */
static void chat_user(cJSON *out, const cJSON *msg)
{
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
	cJSON *m = cJSON_CreateObject();

	cJSON_AddStringToObject(m, "role", json_str(msg, "role", "user"));
	cJSON_AddItemToObject(m, "content",
	                      content ? cJSON_Duplicate(content, 1)
	                              : cJSON_CreateString(""));
	cJSON_AddItemToArray(out, m);
}

/* The assistant's answer: its text (null when it only calls), its
 * calls as nested function calls. */
static void chat_assistant(cJSON *out, const cJSON *msg)
{
	cJSON *m = cJSON_CreateObject();
	const cJSON *calls =
	    cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
	int n = cJSON_GetArraySize(calls);
	const char *text = json_str(msg, "content", "");

	cJSON_AddStringToObject(m, "role", "assistant");
	if (*text || n == 0)
		cJSON_AddStringToObject(m, "content", text);
	else
		cJSON_AddNullToObject(m, "content");
	if (n > 0) {
		cJSON *arr = cJSON_AddArrayToObject(m, "tool_calls");
		const cJSON *c;
		cJSON_ArrayForEach(c, calls)
		{
			cJSON_AddItemToArray(arr, chat_encode_call(c));
		}
	}
	cJSON_AddItemToArray(out, m);
}

static cJSON *chat_tools(const cJSON *tools)
{
	cJSON *arr = cJSON_CreateArray();
	const cJSON *t;

	cJSON_ArrayForEach(t, tools)
	{
		cJSON *w = cJSON_CreateObject();
		cJSON *fn = cJSON_CreateObject();
		const cJSON *params =
		    cJSON_GetObjectItemCaseSensitive(t, "parameters");
		cJSON_AddStringToObject(w, "type", "function");
		cJSON_AddStringToObject(fn, "name", json_str(t, "name", ""));
		cJSON_AddStringToObject(fn, "description",
		                        json_str(t, "description", ""));
		cJSON_AddItemToObject(fn, "parameters",
		                      params
		                          ? cJSON_Duplicate(params, 1)
		                          : cJSON_Parse("{\"type\":\"object\","
		                                        "\"properties\":{}}"));
		cJSON_AddItemToObject(w, "function", fn);
		cJSON_AddItemToArray(arr, w);
	}
	return arr;
}

/* OpenAI's reasoning models (o1, o3, o4-mini, gpt-5...) refuse
 * max_tokens, behind api.openai.com or a gateway in front of it. */
static int chat_reasoning_model(const char *model)
{
	const char *slash = strrchr(model, '/');
	if (slash)
		model = slash + 1; /* openai/o3 on a router */
	static const char *const families[] = {"o1", "o3", "o4", "gpt-5"};
	for (size_t i = 0; i < sizeof families / sizeof *families; i++) {
		size_t n = strlen(families[i]);
		if (!strncmp(model, families[i], n) &&
		    (model[n] == '\0' || model[n] == '-' || model[n] == '.'))
			return 1;
	}
	return 0;
}

/* The wire request (A.1). api.openai.com and OpenAI's reasoning models
 * get max_completion_tokens; compatible servers get max_tokens, the
 * only one many of them read (Ollama reads nothing else). */
char *chat_body(const struct llm_wire_args *a, const struct llm_request *req)
{
	cJSON *b = cJSON_CreateObject();
	cJSON *msgs;
	int max = a->max_output_tokens;

	cJSON_AddStringToObject(b, "model", a->model);
	msgs = cJSON_AddArrayToObject(b, "messages");
	if (req->system && *req->system) {
		cJSON *sys = cJSON_CreateObject();
		cJSON_AddStringToObject(sys, "role", "system");
		cJSON_AddStringToObject(sys, "content", req->system);
		cJSON_AddItemToArray(msgs, sys);
	}
	llm_wire_messages(&chat_wire, msgs, req->messages, 0);
	if (cJSON_GetArraySize(req->tools) > 0) {
		cJSON_AddItemToObject(b, "tools", chat_tools(req->tools));
		cJSON_AddStringToObject(b, "tool_choice", "auto");
	}
	int completion = a->official || (!a->max_tokens_only &&
	                                 chat_reasoning_model(a->model));
	if (max > 0)
		cJSON_AddNumberToObject(
		    b, completion ? "max_completion_tokens" : "max_tokens",
		    max);
	cJSON_AddTrueToObject(b, "stream");
	cJSON *so = cJSON_AddObjectToObject(b, "stream_options");
	cJSON_AddTrueToObject(so, "include_usage");
	char *s = json_print(b);
	cJSON_Delete(b);
	return s;
}

const struct llm_wire chat_wire = {
    .name = "chat",
    .path = "chat/completions",
    .auth_prefix = "Authorization: Bearer ",
    .version_header = NULL,
    .request_id_header = "x-request-id",
    .body = chat_body,
    .user = chat_user,
    .tool_result = chat_tool_result,
    .tools_end = chat_tools_end,
    .assistant = chat_assistant,
    .stream_init = chat_stream_init,
    .items = NULL, /* Chat Completions keeps no provider state */
};
