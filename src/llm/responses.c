/* responses.c: the OpenAI Responses API (protocols.md B) for the openai
 * provider's transport (transport.c): the request body from the neutral
 * conversation, and a reader of its event stream that fills the same
 * chat_stream the Chat Completions reader fills (text, calls by slot,
 * finish reason, usage), plus the reasoning items to send back. The
 * run is stateless: store false, the whole history each turn, reasoning
 * kept as encrypted items (include reasoning.encrypted_content). Only
 * function_call items become calls: an item of a type this build does
 * not read (web_search_call...) is kept as it came, and the answer then
 * goes back whole, its output items in order. */
#include "llm/llm_internal.h"
#include "assay/json.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESP_PROVIDER "openai-responses"
/* --- the request ------------------------------------------------------ */

/* A neutral call as a function_call item. */
static cJSON *resp_call(const cJSON *call)
{
	cJSON *fc = cJSON_CreateObject();
	cJSON_AddStringToObject(fc, "type", "function_call");
	chat_add_id(fc, "call_id", json_str(call, "id", ""));
	cJSON_AddStringToObject(fc, "name", json_str(call, "name", ""));
	/* arguments that did not parse go back as {} (see chat.c) */
	const cJSON *args = cJSON_GetObjectItem(call, "arguments");
	char *s = cJSON_IsObject(args) ? json_print(args) : xstrdup("{}");
	cJSON_AddStringToObject(fc, "arguments", s);
	free(s);
	return fc;
}

static void resp_text(cJSON *input, const char *text)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", "assistant");
	cJSON_AddStringToObject(m, "content", text);
	cJSON_AddItemToArray(input, m);
}

/* An answer kept whole (it held items this build does not know, such
 * as a server tool's call): its output items in the order they came,
 * each call filled in from the neutral calls, then any call they did
 * not place. Its text is in its message items, without the notes the
 * person was shown (the neutral text goes only when none came). */
static void resp_ordered(cJSON *input, const cJSON *items, const cJSON *msg)
{
	const cJSON *calls = cJSON_GetObjectItem(msg, "tool_calls");
	int n = cJSON_GetArraySize(calls), text = 0;
	char *placed = xcalloc((size_t)n + 1, 1);
	const cJSON *it;
	cJSON_ArrayForEach(it, items)
	{
		const char *type = json_str(it, "type", "");
		text |= !strcmp(type, "message");
		if (strcmp(type, "function_call")) {
			cJSON_AddItemToArray(input, cJSON_Duplicate(it, 1));
			continue;
		}
		for (int i = 0; i < n; i++) {
			const cJSON *c = cJSON_GetArrayItem(calls, i);
			if (!placed[i] &&
			    !strcmp(json_str(c, "id", ""),
			            json_str(it, "call_id", "?"))) {
				cJSON_AddItemToArray(input, resp_call(c));
				placed[i] = 1;
				break;
			}
		}
	}
	if (!text && *json_str(msg, "content", ""))
		resp_text(input, json_str(msg, "content", ""));
	for (int i = 0; i < n; i++)
		if (!placed[i])
			cJSON_AddItemToArray(
			    input, resp_call(cJSON_GetArrayItem(calls, i)));
	free(placed);
}

/* One neutral assistant message as input items: the reasoning items
 * this provider gave with it, its text, its calls; or, kept whole, all
 * its output items as they came. */
static void resp_assistant(cJSON *input, const cJSON *msg)
{
	const cJSON *pi = cJSON_GetObjectItem(msg, "provider_items");
	const cJSON *items = cJSON_GetObjectItem(pi, "items");
	const cJSON *it;
	int ours = !strcmp(json_str(pi, "provider", ""), RESP_PROVIDER);
	if (ours && json_bool(pi, "ordered", 0)) {
		resp_ordered(input, items, msg);
		return;
	}
	if (ours) {
		cJSON_ArrayForEach(it, items)
		{
			cJSON_AddItemToArray(input, cJSON_Duplicate(it, 1));
		}
	}
	const char *text = json_str(msg, "content", "");
	if (*text)
		resp_text(input, text);
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(msg, "tool_calls"))
	{
		cJSON_AddItemToArray(input, resp_call(it));
	}
}

/* A tool's result as a function_call_output item. */
static void resp_tool_result(cJSON *input, const cJSON *msg)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", "function_call_output");
	chat_add_id(o, "call_id", json_str(msg, "tool_call_id", ""));
	const cJSON *images = cJSON_GetObjectItem(msg, "images"), *img;
	if (cJSON_GetArraySize(images) <= 0) {
		cJSON_AddStringToObject(o, "output",
		                        json_str(msg, "content", ""));
		cJSON_AddItemToArray(input, o);
		return;
	}
	/* text and images: a list of input parts */
	cJSON *parts = cJSON_AddArrayToObject(o, "output");
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "type", "input_text");
	cJSON_AddStringToObject(t, "text", json_str(msg, "content", ""));
	cJSON_AddItemToArray(parts, t);
	cJSON_ArrayForEach(img, images)
	{
		char *cap = llm_image_caption(img),
		     *url = llm_image_data_url(img);
		cJSON *c = cJSON_CreateObject(), *p = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "type", "input_text");
		cJSON_AddStringToObject(c, "text", cap);
		cJSON_AddItemToArray(parts, c);
		cJSON_AddStringToObject(p, "type", "input_image");
		cJSON_AddStringToObject(p, "image_url", url);
		cJSON_AddStringToObject(p, "detail",
		                        json_str(img, "detail", "auto"));
		cJSON_AddItemToArray(parts, p);
		free(cap);
		free(url);
	}
	cJSON_AddItemToArray(input, o);
}

/* A user's (or any other role's) message with its text. */
static void resp_user(cJSON *input, const cJSON *msg)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", json_str(msg, "role", "user"));
	cJSON_AddStringToObject(m, "content", json_str(msg, "content", ""));
	cJSON_AddItemToArray(input, m);
}

/* Function tools in the flat shape. */
static cJSON *resp_tools(const cJSON *tools)
{
	cJSON *arr = cJSON_CreateArray();
	const cJSON *t;
	cJSON_ArrayForEach(t, tools)
	{
		cJSON *w = cJSON_CreateObject();
		const cJSON *params = cJSON_GetObjectItem(t, "parameters");
		cJSON_AddStringToObject(w, "type", "function");
		cJSON_AddStringToObject(w, "name", json_str(t, "name", ""));
		cJSON_AddStringToObject(w, "description",
		                        json_str(t, "description", ""));
		cJSON_AddItemToObject(
		    w, "parameters",
		    params ? cJSON_Duplicate(params, 1)
		           : cJSON_Parse(
		                 "{\"type\":\"object\",\"properties\":{}}"));
		cJSON_AddFalseToObject(w, "strict");
		cJSON_AddItemToArray(arr, w);
	}
	return arr;
}

/* Stored: the last answer that OpenAI keeps (its resp_ id) and the
 * index of the first message after it; NULL when there is none. */
static const char *resp_chain(const cJSON *messages, int *first)
{
	const char *id = NULL;
	int i = 0;
	const cJSON *msg;
	cJSON_ArrayForEach(msg, messages)
	{
		const cJSON *pi = cJSON_GetObjectItem(msg, "provider_items");
		const char *rid = json_str(pi, "response_id", NULL);
		if (rid &&
		    !strcmp(json_str(pi, "provider", ""), RESP_PROVIDER)) {
			id = rid;
			*first = i + 1;
		}
		i++;
	}
	return id;
}

char *resp_body(const struct llm_wire_args *a, const struct llm_request *req)
{
	cJSON *b = cJSON_CreateObject();
	int max_output_tokens = a->max_output_tokens, store = a->store;
	cJSON_AddStringToObject(b, "model", a->model);
	if (req->system && *req->system)
		cJSON_AddStringToObject(b, "instructions", req->system);
	int first = 0;
	const char *prev = store ? resp_chain(req->messages, &first) : NULL;
	if (prev) /* the stored chain holds the rest */
		cJSON_AddStringToObject(b, "previous_response_id", prev);
	else
		first = 0;
	cJSON *input = cJSON_AddArrayToObject(b, "input");
	llm_wire_messages(&resp_wire, input, req->messages, first);
	if (cJSON_GetArraySize(req->tools) > 0) {
		cJSON_AddItemToObject(b, "tools", resp_tools(req->tools));
		cJSON_AddStringToObject(b, "tool_choice", "auto");
	}
	if (max_output_tokens > 0)
		cJSON_AddNumberToObject(
		    b, "max_output_tokens",
		    max_output_tokens < 16 ? 16 : max_output_tokens);
	cJSON_AddBoolToObject(b, "store", store);
	if (!store) { /* reasoning comes back with the answer, sealed */
		cJSON *inc = cJSON_AddArrayToObject(b, "include");
		cJSON_AddItemToArray(
		    inc, cJSON_CreateString("reasoning.encrypted_content"));
	}
	cJSON_AddTrueToObject(b, "stream");
	char *s = json_print(b);
	cJSON_Delete(b);
	return s;
}

/* --- the stream ------------------------------------------------------- */

/* The slot of the call whose fc_ item is item_id, or NULL. */
static struct chat_slot *resp_find_slot(struct chat_stream *s,
                                        const char *item_id)
{
	for (size_t i = 0; i < s->n_slots; i++)
		if (s->slots[i].item_id &&
		    !strcmp(s->slots[i].item_id, item_id))
			return &s->slots[i];
	return NULL;
}

/* The slot of the call whose fc_ item is item_id (made when missing;
 * NULL + s->error past the bound on calls). */
static struct chat_slot *resp_slot(struct chat_stream *s, const char *item_id)
{
	struct chat_slot *sl = resp_find_slot(s, item_id);
	if (sl)
		return sl;
	sl = chat_stream_new_slot(s, (int)s->n_slots);
	if (sl)
		sl->item_id = xstrdup(item_id);
	return sl;
}

static void set_str(char **field, const char *v)
{
	if (v && *v) {
		free(*field);
		*field = xstrdup(v);
	}
}

/* The kept output item of id, or NULL. */
static struct chat_block *resp_block(struct chat_stream *s, const char *id)
{
	for (size_t i = 0; id && i < s->n_blocks; i++)
		if (s->blocks[i].id && !strcmp(s->blocks[i].id, id))
			return &s->blocks[i];
	return NULL;
}

/* Whether item_id names an output item that is not a function call
 * (its deltas never make one). */
static int resp_foreign(struct chat_stream *s, const char *item_id)
{
	struct chat_block *b = resp_block(s, item_id);
	return b && strcmp(json_str(b->json, "type", ""), "function_call");
}

/* The item types this build reads; any other is kept and sent back as
 * it came, never run (web_search_call, mcp_call...). */
static int resp_known(const char *type)
{
	return !strcmp(type, "function_call") || !strcmp(type, "message") ||
	       !strcmp(type, "reasoning");
}

/* A server tool's call (web_search_call...) is shown when done. */
static int resp_server_note(struct chat_stream *s, const cJSON *item)
{
	const char *type = json_str(item, "type", "");
	size_t n = strlen(type);
	if (n <= 5 || strcmp(type + n - 5, "_call"))
		return 0;
	static const char *const inputs[] = {"action", "arguments", "code",
	                                     "queries", "input"};
	const cJSON *in = NULL;
	for (size_t i = 0; !in && i < sizeof inputs / sizeof *inputs; i++)
		in = cJSON_GetObjectItem(item, inputs[i]);
	char *name = xasprintf("%.*s", (int)(n - 5), type);
	const char *given = json_str(item, "name", NULL);
	char *full = given ? xasprintf("%s %s", name, given) : xstrdup(name);
	int rc = chat_stream_server_note(s, full, in);
	free(full);
	free(name);
	return rc;
}

/* An output item, as added or done: every item is kept in order (the
 * done one replaces the added); a call's ids and name (and, when done,
 * its whole arguments) go to its slot; a finished reasoning item is
 * kept to send back. */
static int resp_item(struct chat_stream *s, const cJSON *item, int done)
{
	const char *type = json_str(item, "type", "");
	const char *id = json_str(item, "id", NULL);
	struct chat_block *b = resp_block(s, id);
	if (!cJSON_IsObject(item))
		return 0;
	if (!b) {
		if (!(b = chat_stream_new_block(s, cJSON_Duplicate(item, 1))))
			return -1;
		b->id = id ? xstrdup(id) : NULL;
		if (!resp_known(type)) {
			s->unknown = 1;
			chat_stream_note(s, "output item", type);
		}
	} else if (done) {
		if (chat_stream_kept(s, s->ev_len) < 0)
			return -1;
		cJSON_Delete(b->json);
		b->json = cJSON_Duplicate(item, 1);
	}
	if (!strcmp(type, "function_call")) {
		struct chat_slot *sl = resp_slot(s, id ? id : "?");
		if (!sl)
			return -1;
		set_str(&sl->id, json_str(item, "call_id", NULL));
		set_str(&sl->name, json_str(item, "name", NULL));
		const char *args = json_str(item, "arguments", NULL);
		if (done && args && strlen(args) >= sl->args.len) {
			buf_reset(&sl->args);
			if (buf_puts(&sl->args, args) < 0)
				return -1;
			sl->have_args = 1;
		}
	}
	if (!done || b->stopped)
		return 0;
	b->stopped = 1;
	if (!strcmp(type, "reasoning")) {
		if (!s->items)
			s->items = cJSON_CreateArray();
		cJSON *keep = cJSON_Duplicate(item, 1);
		cJSON_DeleteItemFromObject(keep, "status");
		cJSON_AddItemToArray(s->items, keep);
	}
	return resp_known(type) ? 0 : resp_server_note(s, item);
}

static void resp_usage(struct chat_stream *s, const cJSON *resp)
{
	const cJSON *u = cJSON_GetObjectItem(resp, "usage");
	if (!cJSON_IsObject(u))
		return;
	const cJSON *in = cJSON_GetObjectItem(u, "input_tokens_details");
	s->usage.input_tokens = json_long(u, "input_tokens", 0);
	s->usage.output_tokens = json_long(u, "output_tokens", 0);
	s->usage.cached_tokens = json_long(in, "cached_tokens", 0);
	s->usage.cache_write_tokens =
	    json_long(in, "cache_write_tokens", 0);
	s->usage.reasoning_tokens =
	    json_long(cJSON_GetObjectItem(u, "output_tokens_details"),
	                   "reasoning_tokens", 0);
	s->usage.known = 1;
}

/* The error of an error event or a failed response, as the user reads
 * it; whether retrying can help. */
static void resp_error(struct chat_stream *s, const cJSON *err, const char *raw)
{
	const char *code = json_str(err, "code", "");
	const char *msg = json_str(err, "message", "no message");
	s->error_context = !strcmp(code, "context_length_exceeded");
	int final = !strcmp(code, "context_length_exceeded") ||
	            !strcmp(code, "invalid_prompt") ||
	            !strcmp(json_str(err, "type", ""), "invalid_request_error");
	chat_stream_error(s, final, raw,
	                  xasprintf("error inside the stream: %s%s%s", msg,
	                            *code ? " (" : "", *code ? code : ""));
	if (*code) {
		char *m = s->error;
		s->error = xasprintf("%s)", m);
		free(m);
	}
}

/* The answer is complete (completed or incomplete). */
static void resp_end(struct chat_stream *s, const cJSON *resp, int complete)
{
	resp_usage(s, resp);
	const char *why = json_str(
	    cJSON_GetObjectItem(resp, "incomplete_details"), "reason", "");
	free(s->finish_reason);
	if (!complete)
		s->finish_reason =
		    xstrdup(!strcmp(why, "content_filter") ? "content_filter"
		                                           : "length");
	else
		s->finish_reason = xstrdup(s->n_slots ? "tool_calls" : "stop");
	s->saw_done = 1;
}

static int resp_event(const struct sse_event *ev, void *arg)
{
	struct chat_stream *s = arg;
	if (!ev->data_len || s->saw_done)
		return 0;
	if (ev->data_len == 6 && !memcmp(ev->data, "[DONE]", 6))
		return 0; /* not in the official set: accepted, ignored */
	cJSON *j = chat_stream_event_json(s, ev);
	if (!j)
		return -1;
	const char *type = json_str(j, "type", ev->event);
	const cJSON *resp = cJSON_GetObjectItem(j, "response");
	const cJSON *item = cJSON_GetObjectItem(j, "item");
	int rc = 0;
	s->ev_len = ev->data_len;
	if (json_str(resp, "id", NULL)) {
		free(s->response_id);
		s->response_id = xstrdup(json_str(resp, "id", ""));
	}
	if (!strcmp(type, "response.output_text.delta")) {
		rc = chat_stream_text(s, json_str(j, "delta", ""));
	} else if (strstr(type, "function_call_arguments") &&
	           resp_foreign(s, json_str(j, "item_id", "?"))) {
		/* deltas of an item that is not a call: its done has all */
	} else if (!strcmp(type, "response.function_call_arguments.delta")) {
		struct chat_slot *sl =
		    resp_slot(s, json_str(j, "item_id", "?"));
		const char *d = json_str(j, "delta", "");
		if (!sl) {
			cJSON_Delete(j);
			return -1;
		}
		sl->have_args = 1;
		s->args_total += strlen(d);
		if (buf_puts(&sl->args, d) < 0 ||
		    s->args_total > LLM_MAX_TEXT) {
			chat_stream_error(
			    s, 1, NULL,
			    xstrdup("the tool call arguments passed "
			            "the bound"));
			rc = -1;
		}
	} else if (!strcmp(type, "response.function_call_arguments.done")) {
		struct chat_slot *sl =
		    resp_slot(s, json_str(j, "item_id", "?"));
		if (!sl) {
			cJSON_Delete(j);
			return -1;
		}
		set_str(&sl->name, json_str(j, "name", NULL));
		buf_reset(&sl->args);
		rc = buf_puts(&sl->args, json_str(j, "arguments", ""));
		sl->have_args = 1;
	} else if (!strcmp(type, "response.output_item.added") ||
	           !strcmp(type, "response.output_item.done")) {
		rc = resp_item(s, item,
		               !strcmp(type, "response.output_item.done"));
	} else if (!strcmp(type, "response.completed")) {
		resp_end(s, resp, 1);
	} else if (!strcmp(type, "response.incomplete")) {
		resp_end(s, resp, 0);
	} else if (!strcmp(type, "response.failed")) {
		const cJSON *err = cJSON_GetObjectItem(resp, "error");
		resp_error(s, err, ev->data);
		rc = -1;
	} else if (!strcmp(type, "error")) {
		/* nested (as seen from the API) or flat (as the SDK types) */
		const cJSON *err = cJSON_GetObjectItem(j, "error");
		resp_error(s, cJSON_IsObject(err) ? err : j, ev->data);
		rc = -1;
	}
	/* every other event type is ignored */
	cJSON_Delete(j);
	return rc < 0 ? -1 : 0;
}

void resp_stream_init(struct chat_stream *s, int turn,
                      void (*on_text)(void *arg, const char *text, size_t n),
                      void *arg)
{
	chat_stream_init(s, turn, on_text, arg);
	sse_free(&s->sse);
	sse_init(&s->sse, LLM_MAX_EVENT, resp_event, s);
}

/* All the answer's output items in order, as they go back: finished
 * ones (reasoning without its status, as kept above), a call as its
 * call_id when it is one (the neutral call fills it in). */
static cJSON *resp_ordered_items(struct chat_stream *s)
{
	cJSON *items = cJSON_CreateArray();
	for (size_t i = 0; i < s->n_blocks; i++) {
		struct chat_block *b = &s->blocks[i];
		const char *type = json_str(b->json, "type", "");
		cJSON *it = NULL;
		if (!strcmp(type, "function_call")) {
			struct chat_slot *sl =
			    resp_find_slot(s, b->id ? b->id : "?");
			if (sl && sl->name && *sl->name && sl->id) {
				it = cJSON_CreateObject();
				cJSON_AddStringToObject(it, "type", type);
				cJSON_AddStringToObject(it, "call_id", sl->id);
			}
		} else if (b->stopped || !resp_known(type)) {
			it = cJSON_Duplicate(b->json, 1);
			if (!strcmp(type, "reasoning"))
				cJSON_DeleteItemFromObject(it, "status");
		}
		if (it)
			cJSON_AddItemToArray(items, it);
	}
	return items;
}

cJSON *resp_stream_items(struct chat_stream *s, const struct llm_wire_args *a)
{
	int store = a->store;
	/* stored, the chain keeps the reasoning: only the id is needed */
	if (!store && s->unknown)
		return chat_stream_ordered(RESP_PROVIDER,
		                           resp_ordered_items(s));
	if (!store)
		return chat_stream_take_items(s, RESP_PROVIDER);
	if (!s->response_id)
		return NULL;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "provider", RESP_PROVIDER);
	cJSON_AddStringToObject(o, "response_id", s->response_id);
	cJSON_AddArrayToObject(o, "items");
	return o;
}

const struct llm_wire resp_wire = {
    .name = "responses",
    .path = "responses",
    .auth_prefix = "Authorization: Bearer ",
    .version_header = NULL,
    .request_id_header = "x-request-id",
    .body = resp_body,
    .user = resp_user,
    .tool_result = resp_tool_result,
    .assistant = resp_assistant,
    .stream_init = resp_stream_init,
    .items = resp_stream_items,
};
