/* anthropic.c: the Anthropic Messages API (protocols.md C) for the
 * providers' transport (transport.c): the request body from the neutral
 * conversation (tool results first in the next user message, thinking
 * blocks sent back unchanged with their signatures, prompt-cache
 * breakpoints on the system prompt, the tools and the last message),
 * and a reader of its event stream that fills a chat_stream. Only
 * tool_use blocks become calls: a block of a type this build does not
 * read (a server tool's use and result) is kept as it came, with its
 * deltas, and the answer then goes back whole, in order. */
#include "llm/llm_internal.h"
#include "assay/json.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

#define ANTH_PROVIDER "anthropic"

/* --- the request ------------------------------------------------------ */

static void cache_mark(cJSON *block)
{
	cJSON *cc = cJSON_AddObjectToObject(block, "cache_control");
	cJSON_AddStringToObject(cc, "type", "ephemeral");
}

/* A tool_use id as the API takes it: ^[a-zA-Z0-9_-]+$ (a run recorded
 * against another provider may hold others). */
static void add_tool_id(cJSON *obj, const char *key, const char *id)
{
	char *s = xstrdup(*id ? id : "toolu_none");
	for (char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			*p = '_';
	cJSON_AddStringToObject(obj, key, s);
	free(s);
}

static cJSON *text_block(const char *text)
{
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "type", "text");
	cJSON_AddStringToObject(b, "text", text);
	return b;
}

/* A neutral call as a tool_use block. */
static cJSON *anth_tool_use(const cJSON *call)
{
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "type", "tool_use");
	add_tool_id(b, "id", json_str(call, "id", ""));
	cJSON_AddStringToObject(b, "name", json_str(call, "name", ""));
	/* arguments that did not parse go back as {} (see chat.c) */
	const cJSON *args = cJSON_GetObjectItem(call, "arguments");
	cJSON_AddItemToObject(b, "input",
	                      cJSON_IsObject(args) ? cJSON_Duplicate(args, 1)
	                                           : cJSON_CreateObject());
	return b;
}

/* An answer kept whole (it held blocks this build does not know, such
 * as a server tool's use and result): its blocks in the order they
 * came, each call filled in from the neutral calls, then any call the
 * blocks did not place. Its text is in its blocks, without the notes
 * the person was shown. */
static void anth_ordered(cJSON *content, const cJSON *items, const cJSON *calls)
{
	int n = cJSON_GetArraySize(calls);
	char *placed = xcalloc((size_t)n + 1, 1);
	const cJSON *it;
	cJSON_ArrayForEach(it, items)
	{
		if (strcmp(json_str(it, "type", ""), "tool_use")) {
			cJSON_AddItemToArray(content, cJSON_Duplicate(it, 1));
			continue;
		}
		for (int i = 0; i < n; i++) {
			const cJSON *c = cJSON_GetArrayItem(calls, i);
			if (!placed[i] && !strcmp(json_str(c, "id", ""),
			                          json_str(it, "id", "?"))) {
				cJSON_AddItemToArray(content, anth_tool_use(c));
				placed[i] = 1;
				break;
			}
		}
	}
	for (int i = 0; i < n; i++)
		if (!placed[i])
			cJSON_AddItemToArray(
			    content,
			    anth_tool_use(cJSON_GetArrayItem(calls, i)));
	free(placed);
}

/* The assistant's message: its thinking (as given), text, tool uses;
 * or, kept whole, all its blocks as they came. */
static void anth_assistant(cJSON *out, const cJSON *msg)
{
	cJSON *content = cJSON_CreateArray();
	const cJSON *pi = cJSON_GetObjectItem(msg, "provider_items");
	const cJSON *items = cJSON_GetObjectItem(pi, "items");
	const cJSON *calls = cJSON_GetObjectItem(msg, "tool_calls");
	const cJSON *it;
	int ours = !strcmp(json_str(pi, "provider", ""), ANTH_PROVIDER);
	if (ours && json_bool(pi, "ordered", 0)) {
		anth_ordered(content, items, calls);
	} else {
		if (ours) {
			cJSON_ArrayForEach(it, items)
			{
				cJSON_AddItemToArray(content,
				                     cJSON_Duplicate(it, 1));
			}
		}
		const char *text = json_str(msg, "content", "");
		if (*text)
			cJSON_AddItemToArray(content, text_block(text));
		cJSON_ArrayForEach(it, calls)
		{
			cJSON_AddItemToArray(content, anth_tool_use(it));
		}
	}
	if (!cJSON_GetArraySize(content)) /* the API refuses an empty turn */
		cJSON_AddItemToArray(content, text_block("(no answer)"));
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", "assistant");
	cJSON_AddItemToObject(m, "content", content);
	cJSON_AddItemToArray(out, m);
}

/* The content of the user message being gathered at the end of out:
 * tool results and the user's text that follow an assistant turn are
 * one user message (the messages alternate). */
static cJSON *anth_user_content(cJSON *out)
{
	cJSON *last = cJSON_GetArrayItem(out, cJSON_GetArraySize(out) - 1);
	if (last && !strcmp(json_str(last, "role", ""), "user"))
		return cJSON_GetObjectItem(last, "content");
	cJSON *user = cJSON_CreateObject();
	cJSON_AddStringToObject(user, "role", "user");
	cJSON *content = cJSON_AddArrayToObject(user, "content");
	cJSON_AddItemToArray(out, user);
	return content;
}

/* A tool's result as a tool_result block of the user message. */
static void anth_tool_result(cJSON *out, const cJSON *msg)
{
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "type", "tool_result");
	add_tool_id(b, "tool_use_id", json_str(msg, "tool_call_id", ""));
	const char *c = json_str(msg, "content", "");
	const cJSON *images = cJSON_GetObjectItem(msg, "images"), *img;
	if (cJSON_GetArraySize(images) <= 0) {
		cJSON_AddStringToObject(b, "content", *c ? c : "(empty)");
	} else { /* text and image blocks */
		cJSON *blocks = cJSON_AddArrayToObject(b, "content");
		cJSON_AddItemToArray(blocks, text_block(*c ? c : "(empty)"));
		cJSON_ArrayForEach(img, images)
		{
			char *cap = llm_image_caption(img);
			cJSON_AddItemToArray(blocks, text_block(cap));
			free(cap);
			cJSON *im = cJSON_CreateObject();
			cJSON *src = cJSON_CreateObject();
			cJSON_AddStringToObject(im, "type", "image");
			cJSON_AddStringToObject(src, "type", "base64");
			cJSON_AddStringToObject(
			    src, "media_type",
			    json_str(img, "media_type", "image/png"));
			cJSON_AddStringToObject(src, "data",
			                        json_str(img, "data", ""));
			cJSON_AddItemToObject(im, "source", src);
			cJSON_AddItemToArray(blocks, im);
		}
	}
	if (json_bool(msg, "is_error", 0))
		cJSON_AddTrueToObject(b, "is_error");
	cJSON_AddItemToArray(anth_user_content(out), b);
}

/* A user's text as a text block of the user message. */
static void anth_user(cJSON *out, const cJSON *msg)
{
	const char *t = json_str(msg, "content", "");
	cJSON_AddItemToArray(anth_user_content(out),
	                     text_block(*t ? t : "(empty)"));
}

/* The neutral history as alternating messages, the tool results first
 * in each user message. */
static cJSON *anth_messages(const cJSON *messages)
{
	cJSON *out = cJSON_CreateArray();
	llm_wire_messages(&anth_wire, out, messages, 0);
	/* the cache breakpoint that moves with the conversation */
	cJSON *last = cJSON_GetArrayItem(out, cJSON_GetArraySize(out) - 1);
	cJSON *blocks = cJSON_GetObjectItem(last, "content");
	cJSON *lb = cJSON_GetArrayItem(blocks, cJSON_GetArraySize(blocks) - 1);
	const char *lt = json_str(lb, "type", "");
	/* not thinking, nor a block kept as it came (server tools) */
	if (!strcmp(lt, "text") || !strcmp(lt, "tool_result") ||
	    !strcmp(lt, "tool_use"))
		cache_mark(lb);
	return out;
}

static cJSON *anth_tools(const cJSON *tools)
{
	cJSON *arr = cJSON_CreateArray();
	const cJSON *t;
	cJSON *w = NULL;
	cJSON_ArrayForEach(t, tools)
	{
		w = cJSON_CreateObject();
		const cJSON *params = cJSON_GetObjectItem(t, "parameters");
		cJSON_AddStringToObject(w, "name", json_str(t, "name", ""));
		cJSON_AddStringToObject(w, "description",
		                        json_str(t, "description", ""));
		cJSON_AddItemToObject(
		    w, "input_schema",
		    params ? cJSON_Duplicate(params, 1)
		           : cJSON_Parse(
		                 "{\"type\":\"object\",\"properties\":{}}"));
		cJSON_AddItemToArray(arr, w);
	}
	if (w)
		cache_mark(w); /* the tools are the same every turn */
	return arr;
}

char *anth_body(const struct llm_wire_args *a, const struct llm_request *req)
{
	cJSON *b = cJSON_CreateObject();
	int max_tokens = a->max_output_tokens;
	cJSON_AddStringToObject(b, "model", a->model);
	cJSON_AddNumberToObject(b, "max_tokens",
	                        max_tokens > 0 ? max_tokens : 8192);
	if (req->system && *req->system) {
		cJSON *sys = cJSON_AddArrayToObject(b, "system");
		cJSON *blk = text_block(req->system);
		cache_mark(blk);
		cJSON_AddItemToArray(sys, blk);
	}
	cJSON_AddItemToObject(b, "messages", anth_messages(req->messages));
	if (cJSON_GetArraySize(req->tools) > 0) {
		cJSON_AddItemToObject(b, "tools", anth_tools(req->tools));
		cJSON *tc = cJSON_AddObjectToObject(b, "tool_choice");
		cJSON_AddStringToObject(tc, "type", "auto");
	}
	cJSON_AddTrueToObject(b, "stream");
	char *s = json_print(b);
	cJSON_Delete(b);
	return s;
}

/* --- the stream ------------------------------------------------------- */

/* The tool_use slot of content block index, or NULL. */
static struct chat_slot *anth_slot(struct chat_stream *s, int index)
{
	for (size_t i = 0; i < s->n_slots; i++)
		if (s->slots[i].index == index)
			return &s->slots[i];
	return NULL;
}

/* The kept block of content index, or NULL. */
static struct chat_block *anth_block(struct chat_stream *s, int index)
{
	for (size_t i = s->n_blocks; i-- > 0;)
		if (s->blocks[i].index == index)
			return &s->blocks[i];
	return NULL;
}

/* The block types this build reads; any other is kept and sent back
 * as it came, never run (server_tool_use, web_search_tool_result...). */
static int anth_known(const char *type)
{
	static const char *const known[] = {"text", "thinking",
	                                    "redacted_thinking", "tool_use"};
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		if (!strcmp(type, known[i]))
			return 1;
	return 0;
}

/* The usage of message_start (input) or message_delta (output; the
 * input counts again, as totals). Every input token counts in
 * input_tokens, the cache reads and writes among them. */
static void anth_usage(struct chat_stream *s, const cJSON *u)
{
	if (!cJSON_IsObject(u))
		return;
	const cJSON *in = cJSON_GetObjectItem(u, "input_tokens");
	if (cJSON_IsNumber(in)) {
		long read = json_long(u, "cache_read_input_tokens", 0);
		long write = json_long(u, "cache_creation_input_tokens", 0);
		s->usage.input_tokens =
		    json_num_long(in->valuedouble, 0) + read + write;
		s->usage.cached_tokens = read;
		s->usage.cache_write_tokens = write;
	}
	const cJSON *out = cJSON_GetObjectItem(u, "output_tokens");
	if (cJSON_IsNumber(out))
		s->usage.output_tokens = json_num_long(out->valuedouble, 0);
	s->usage.known = 1;
}

static const char *finish_of(const char *stop)
{
	if (!strcmp(stop, "tool_use"))
		return "tool_calls";
	if (!strcmp(stop, "end_turn") || !strcmp(stop, "stop_sequence"))
		return "stop";
	if (!strcmp(stop, "max_tokens") ||
	    !strcmp(stop, "model_context_window_exceeded"))
		return "length";
	if (!strcmp(stop, "refusal"))
		return "content_filter";
	return stop;
}

/* A tool call's arguments fragment, into its slot. */
static int anth_args(struct chat_stream *s, struct chat_slot *sl, const char *p)
{
	sl->have_args = 1;
	s->args_total += strlen(p);
	if (buf_puts(&sl->args, p) < 0 || s->args_total > LLM_MAX_TEXT) {
		chat_stream_error(
		    s, 1, NULL,
		    xstrdup("the tool call arguments passed the bound"));
		return -1;
	}
	return 0;
}

/* A delta of a kept block merged into it: JSON into its input,
 * citations into its list, any other delta's strings onto the fields
 * of the same name (text_delta's text, thinking_delta's thinking...). */
static int anth_merge(struct chat_stream *s, struct chat_block *b,
                      const cJSON *d, const char *type)
{
	if (!strcmp(type, "input_json_delta"))
		return chat_block_append(s, b, "input",
		                         json_str(d, "partial_json", ""));
	if (!strcmp(type, "citations_delta")) {
		const cJSON *c = cJSON_GetObjectItem(d, "citation");
		cJSON *list = cJSON_GetObjectItem(b->json, "citations");
		if (!cJSON_IsArray(list)) {
			cJSON_DeleteItemFromObject(b->json, "citations");
			list = cJSON_AddArrayToObject(b->json, "citations");
		}
		if (chat_stream_kept(s, s->ev_len) < 0)
			return -1;
		if (c)
			cJSON_AddItemToArray(list, cJSON_Duplicate(c, 1));
		return 0;
	}
	static const char *const known[] = {"text_delta", "thinking_delta",
	                                    "signature_delta"};
	int k = 0;
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		k |= !strcmp(type, known[i]);
	if (!k)
		chat_stream_note(s, "content block delta", type);
	const cJSON *f;
	cJSON_ArrayForEach(f, d)
	{
		if (cJSON_IsString(f) && strcmp(f->string, "type") &&
		    chat_block_append(s, b, f->string, f->valuestring) < 0)
			return -1;
	}
	return 0;
}

/* A delta: a call's arguments go to its slot, answer text to the
 * answer, and every kept block gathers its own. */
static int anth_delta(struct chat_stream *s, const cJSON *j)
{
	const cJSON *d = cJSON_GetObjectItem(j, "delta");
	const char *type = json_str(d, "type", "");
	int index = json_int(j, "index", -1);
	struct chat_slot *sl = anth_slot(s, index);
	if (sl)
		return !strcmp(type, "input_json_delta")
		           ? anth_args(s, sl, json_str(d, "partial_json", ""))
		           : 0;
	struct chat_block *b = anth_block(s, index);
	const char *btype = b ? json_str(b->json, "type", "") : "text";
	if (!strcmp(type, "text_delta") && !strcmp(btype, "text") &&
	    chat_stream_text(s, json_str(d, "text", "")) < 0)
		return -1;
	if (!strcmp(type, "thinking_delta"))
		s->reasoning_bytes += strlen(json_str(d, "thinking", ""));
	if (!b) { /* a delta of no block: nothing to keep it in */
		chat_stream_note(s, "delta without its block", type);
		return 0;
	}
	return anth_merge(s, b, d, type);
}

/* A content block opens: a tool_use gets its slot; every block is kept
 * as it came, to gather its deltas. */
static int anth_block_start(struct chat_stream *s, const cJSON *j)
{
	const cJSON *b = cJSON_GetObjectItem(j, "content_block");
	const char *type = json_str(b, "type", "");
	int index = json_int(j, "index", -1);
	if (!cJSON_IsObject(b))
		return 0;
	struct chat_block *kb = chat_stream_new_block(s, cJSON_Duplicate(b, 1));
	if (!kb)
		return -1;
	kb->index = index;
	if (!strcmp(type, "tool_use")) {
		struct chat_slot *sl = anth_slot(s, index);
		if (!sl && !(sl = chat_stream_new_slot(s, index)))
			return -1;
		free(sl->id);
		sl->id = xstrdup(json_str(b, "id", ""));
		free(sl->name);
		sl->name = xstrdup(json_str(b, "name", ""));
	} else if (!anth_known(type)) {
		s->unknown = 1;
		chat_stream_note(s, "content block", type);
	}
	return 0;
}

/* A block closes: its deltas merged; a server tool's use is shown. */
static int anth_block_stop(struct chat_stream *s, const cJSON *j)
{
	struct chat_block *b = anth_block(s, json_int(j, "index", -1));
	if (!b || b->stopped)
		return 0;
	chat_block_merge(b);
	b->stopped = 1;
	const char *type = json_str(b->json, "type", "");
	size_t n = strlen(type);
	if (n > 9 && !strcmp(type + n - 9, "_tool_use"))
		return chat_stream_server_note(
		    s, json_str(b->json, "name", type),
		    cJSON_GetObjectItem(b->json, "input"));
	return 0;
}

static void anth_error(struct chat_stream *s, const cJSON *j, const char *raw)
{
	const cJSON *e = cJSON_GetObjectItem(j, "error");
	const char *type = json_str(e, "type", "error");
	int final = !strcmp(type, "invalid_request_error") ||
	            !strcmp(type, "authentication_error") ||
	            !strcmp(type, "permission_error");
	chat_stream_error(s, final, raw,
	                  xasprintf("error inside the stream: %s (%s)",
	                            json_str(e, "message", "no message"),
	                            type));
}

static int anth_event(const struct sse_event *ev, void *arg)
{
	struct chat_stream *s = arg;
	if (!ev->data_len || s->saw_done)
		return 0;
	cJSON *j = chat_stream_event_json(s, ev);
	if (!j)
		return -1;
	const char *type = json_str(j, "type", ev->event);
	int rc = 0;
	s->ev_len = ev->data_len;
	if (!strcmp(type, "message_start")) {
		anth_usage(s, cJSON_GetObjectItem(
		                  cJSON_GetObjectItem(j, "message"), "usage"));
	} else if (!strcmp(type, "content_block_start")) {
		rc = anth_block_start(s, j);
	} else if (!strcmp(type, "content_block_delta")) {
		rc = anth_delta(s, j);
	} else if (!strcmp(type, "content_block_stop")) {
		rc = anth_block_stop(s, j);
	} else if (!strcmp(type, "message_delta")) {
		const char *stop = json_str(cJSON_GetObjectItem(j, "delta"),
		                            "stop_reason", NULL);
		if (stop) {
			free(s->finish_reason);
			s->finish_reason = xstrdup(finish_of(stop));
		}
		anth_usage(s, cJSON_GetObjectItem(j, "usage"));
	} else if (!strcmp(type, "message_stop")) {
		s->saw_done = 1;
	} else if (!strcmp(type, "error")) {
		anth_error(s, j, ev->data);
		rc = -1;
	} else if (strcmp(type, "ping")) {
		chat_stream_note(s, "event", type);
	}
	/* ping and event types this build does not know: ignored */
	cJSON_Delete(j);
	return rc;
}

void anth_stream_init(struct chat_stream *s, int turn,
                      void (*on_text)(void *arg, const char *text, size_t n),
                      void *arg)
{
	chat_stream_init(s, turn, on_text, arg);
	sse_free(&s->sse);
	sse_init(&s->sse, LLM_MAX_EVENT, anth_event, s);
	s->sse.bare_json = 0;
}

/* One kept block as it goes back: thinking only when whole, a call as
 * its id when it is one (the neutral call fills it in), text only
 * when not empty; NULL when it does not go back. */
static cJSON *anth_item(struct chat_stream *s, struct chat_block *b)
{
	const char *type = json_str(b->json, "type", "");
	chat_block_merge(b);
	if (!strcmp(type, "thinking"))
		return b->stopped ? cJSON_Duplicate(b->json, 1) : NULL;
	if (!strcmp(type, "redacted_thinking"))
		return cJSON_Duplicate(b->json, 1);
	if (!s->unknown) /* the neutral message holds the rest */
		return NULL;
	if (!strcmp(type, "tool_use")) {
		struct chat_slot *sl = anth_slot(s, b->index);
		if (!sl || !sl->name || !*sl->name)
			return NULL;
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "type", "tool_use");
		cJSON_AddStringToObject(c, "id", sl->id ? sl->id : "");
		return c;
	}
	if (!strcmp(type, "text") && !*json_str(b->json, "text", ""))
		return NULL;
	return cJSON_Duplicate(b->json, 1);
}

cJSON *anth_stream_items(struct chat_stream *s, const struct llm_wire_args *a)
{
	(void)a;
	cJSON *items = cJSON_CreateArray();
	for (size_t i = 0; i < s->n_blocks; i++) {
		cJSON *it = anth_item(s, &s->blocks[i]);
		if (it)
			cJSON_AddItemToArray(items, it);
	}
	if (s->unknown)
		return chat_stream_ordered(ANTH_PROVIDER, items);
	cJSON_Delete(s->items);
	s->items = items;
	return chat_stream_take_items(s, ANTH_PROVIDER);
}

const struct llm_wire anth_wire = {
    .name = "anthropic",
    .path = "v1/messages",
    .auth_prefix = "x-api-key: ",
    .version_header = "anthropic-version: 2023-06-01",
    .request_id_header = "request-id",
    .body = anth_body,
    .user = anth_user,
    .tool_result = anth_tool_result,
    .assistant = anth_assistant,
    .stream_init = anth_stream_init,
    .items = anth_stream_items,
};
