/* chat_stream.c: rebuilds one Chat Completions answer from its SSE
 * stream (protocols.md A.2, A.3): text deltas, tool calls assembled
 * from fragments, finish reason and usage. Tolerates the compatible
 * servers' quirks (A.6): whole calls all at index 0 (Ollama), missing
 * or empty ids and absent arguments (vLLM), CRLF, timings and
 * reasoning fields (llama.cpp), a missing [DONE]. */
#include "llm/llm_internal.h"
#include "assay/json.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

void chat_stream_error(struct chat_stream *s, int final, const char *body,
                       char *msg)
{
	if (s->error) {
		free(msg);
		return;
	}
	s->error = msg;
	s->error_final = final;
	if (body)
		s->error_body = xstrdup(body);
}

/* Strict parse of a NUL-terminated text: trailing garbage fails. */
static cJSON *parse_strict(const char *text)
{
	return cJSON_ParseWithOpts(text, NULL, 1);
}

static const char *str_item(const cJSON *obj, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(it) && it->valuestring[0] ? it->valuestring
	                                                : NULL;
}

int chat_stream_text(struct chat_stream *s, const char *t)
{
	size_t n = strlen(t);

	if (n == 0)
		return 0;
	if (buf_append(&s->text, t, n) < 0) {
		chat_stream_error(s, 1, NULL,
		                  xasprintf("the answer passed %d MiB",
		                            LLM_MAX_TEXT / (1024 * 1024)));
		return -1;
	}
	if (s->on_text)
		s->on_text(s->arg, t, n);
	return 0;
}

/* Advance the slot's scan over newly appended argument bytes. */
static void slot_scan(struct chat_slot *sl, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (sl->in_str) {
			if (sl->esc)
				sl->esc = 0;
			else if (c == '\\')
				sl->esc = 1;
			else if (c == '"')
				sl->in_str = 0;
		} else if (c == '"') {
			sl->in_str = 1;
		} else if (c == '{' || c == '[') {
			sl->depth++;
			sl->closed = 0;
		} else if ((c == '}' || c == ']') && sl->depth > 0) {
			if (--sl->depth == 0)
				sl->closed = 1;
		}
	}
}

/* Whether a slot already holds a whole call: a name and arguments that
 * are absent or parse. The scan rules out most fragments cheaply, so a
 * server repeating the name on every fragment costs linear time. */
static int slot_complete(const struct chat_slot *sl)
{
	if (!sl->name)
		return 0;
	if (!sl->have_args)
		return 1;
	if (!sl->closed || sl->depth || sl->in_str)
		return 0;
	cJSON *j = parse_strict(buf_str(&sl->args));
	cJSON_Delete(j);
	return j != NULL;
}

/* The slot a fragment belongs to, or NULL when it starts a new call. */
static struct chat_slot *chat_find_slot(struct chat_stream *s, int index,
                                        const char *id, const char *name)
{
	struct chat_slot *sl = NULL;

	if (index >= 0) {
		for (size_t i = s->n_slots; i-- > 0;)
			if (s->slots[i].index == index) {
				sl = &s->slots[i];
				break;
			}
	} else {
		for (size_t i = s->n_slots; id && !sl && i-- > 0;)
			if (s->slots[i].id && strcmp(s->slots[i].id, id) == 0)
				sl = &s->slots[i];
		if (!sl && s->n_slots > 0)
			sl = &s->slots[s->n_slots - 1];
	}
	if (!sl)
		return NULL;
	/* The same id again is always the same call. */
	if (id && sl->id && strcmp(id, sl->id) == 0)
		return sl;
	/* Ollama: whole calls, all at index 0. A new id or a name arriving
	 * when the slot is already whole means a new call. */
	if ((id && sl->id) || name) {
		if (slot_complete(sl))
			return NULL;
	}
	return sl;
}

struct chat_slot *chat_stream_new_slot(struct chat_stream *s, int index)
{
	if (s->n_slots >= LLM_MAX_TOOL_CALLS) {
		chat_stream_error(
		    s, 1, NULL,
		    xasprintf("more than %d tool calls in one answer",
		              LLM_MAX_TOOL_CALLS));
		return NULL;
	}
	if (s->n_slots % 8 == 0)
		s->slots =
		    xrealloc(s->slots, (s->n_slots + 8) * sizeof *s->slots);
	struct chat_slot *sl = &s->slots[s->n_slots++];
	memset(sl, 0, sizeof *sl);
	sl->index = index;
	buf_init(&sl->args, LLM_MAX_ARGS);
	return sl;
}

static int chat_tool_call(struct chat_stream *s, const cJSON *tc)
{
	const cJSON *idx = cJSON_GetObjectItemCaseSensitive(tc, "index");
	const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
	int index = cJSON_IsNumber(idx) ? idx->valueint : -1;
	const char *id = str_item(tc, "id");
	const char *name = str_item(fn, "name");
	const char *type = str_item(tc, "type");
	int foreign = type && strcmp(type, "function");

	struct chat_slot *sl = chat_find_slot(s, index, id, name);
	/* A call of another type (custom, a server's own) is never run:
	 * its slot only soaks up the fragments that follow it. */
	if (sl && sl->foreign != foreign && (type || name))
		sl = NULL;
	if (!sl && !(sl = chat_stream_new_slot(s, index)))
		return -1;
	if (foreign && !sl->foreign) {
		sl->foreign = 1;
		chat_stream_note(s, "tool call of type", type);
	}
	if (sl->foreign) {
		if (id && !sl->id)
			sl->id = xstrdup(id);
		return 0;
	}
	if (id && !sl->id)
		sl->id = xstrdup(id);
	if (name && !sl->name)
		sl->name = xstrdup(name);
	if (!args || cJSON_IsNull(args))
		return 0;
	sl->have_args = 1;
	/* Some servers send the arguments as an object. */
	char *p = cJSON_IsString(args) ? xstrdup(args->valuestring)
	                               : cJSON_PrintUnformatted(args);
	size_t n = p ? strlen(p) : 0;
	int rc = -1;
	if (p && n <= LLM_MAX_ARGS - s->args_total &&
	    buf_append(&sl->args, p, n) == 0) {
		slot_scan(sl, p, n);
		s->args_total += n;
		rc = 0;
	}
	free(p);
	if (rc < 0)
		chat_stream_error(s, 1, NULL,
		                  xasprintf("tool call arguments passed %d MiB",
		                            LLM_MAX_ARGS / (1024 * 1024)));
	return rc;
}

static void chat_usage(struct chat_stream *s, const cJSON *u)
{
	const cJSON *det =
	    cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens_details");
	const cJSON *it;

	s->usage.known = 1;
	it = cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens");
	s->usage.input_tokens =
	    cJSON_IsNumber(it) ? json_num_long(it->valuedouble, 0) : 0;
	it = cJSON_GetObjectItemCaseSensitive(u, "completion_tokens");
	s->usage.output_tokens =
	    cJSON_IsNumber(it) ? json_num_long(it->valuedouble, 0) : 0;
	it = cJSON_GetObjectItemCaseSensitive(det, "cached_tokens");
	s->usage.cached_tokens =
	    cJSON_IsNumber(it) ? json_num_long(it->valuedouble, 0) : 0;
	det = cJSON_GetObjectItemCaseSensitive(u, "completion_tokens_details");
	it = cJSON_GetObjectItemCaseSensitive(det, "reasoning_tokens");
	s->usage.reasoning_tokens =
	    cJSON_IsNumber(it) ? json_num_long(it->valuedouble, 0) : 0;
}

/* One choice of a chunk; only choice 0 is asked for. A whole
 * non-streamed answer carries "message" where a chunk has "delta". */
static int chat_choice(struct chat_stream *s, const cJSON *c)
{
	const cJSON *idx = cJSON_GetObjectItemCaseSensitive(c, "index");
	if (cJSON_IsNumber(idx) && idx->valueint != 0)
		return 0;
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "delta");
	if (!cJSON_IsObject(d))
		d = cJSON_GetObjectItemCaseSensitive(c, "message");
	const char *t;

	if ((t = str_item(d, "content")) && chat_stream_text(s, t) < 0)
		return -1;
	if ((t = str_item(d, "refusal")) && chat_stream_text(s, t) < 0)
		return -1;
	/* Reasoning is not answer text (llama.cpp, Ollama). */
	if ((t = str_item(d, "reasoning_content")))
		s->reasoning_bytes += strlen(t);
	if ((t = str_item(d, "reasoning")))
		s->reasoning_bytes += strlen(t);

	const cJSON *tcs = cJSON_GetObjectItemCaseSensitive(d, "tool_calls");
	const cJSON *tc;
	cJSON_ArrayForEach(tc, tcs)
	{
		if (cJSON_IsObject(tc) && chat_tool_call(s, tc) < 0)
			return -1;
	}
	if ((t = str_item(c, "finish_reason"))) {
		free(s->finish_reason);
		s->finish_reason = xstrdup(t);
	}
	return 0;
}

/* An error reported inside the stream: {"error":..}, a flat vLLM
 * {"object":"error"}, an "event: error" or an "error:" field. */
static int chat_is_error(const struct sse_event *ev, const cJSON *j)
{
	const cJSON *obj = cJSON_GetObjectItemCaseSensitive(j, "object");

	if (ev->error_field || strcmp(ev->event, "error") == 0)
		return 1;
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "error");
	if (err && !cJSON_IsNull(err))
		return 1;
	return cJSON_IsString(obj) && strcmp(obj->valuestring, "error") == 0;
}

static int chat_event(const struct sse_event *ev, void *arg)
{
	struct chat_stream *s = arg;
	const char *p = ev->data;
	size_t n = ev->data_len;

	while (n > 0 && (*p == ' ' || *p == '\t' || *p == '\r')) {
		p++;
		n--;
	}
	if (n == 0 || s->saw_done)
		return 0;
	if (n == 6 && memcmp(p, "[DONE]", 6) == 0) {
		s->saw_done = 1;
		return 0;
	}
	cJSON *j = parse_strict(p);
	if (!j || chat_is_error(ev, j)) {
		char *msg = llm_error_body_message(ev->data);
		if (j || ev->error_field)
			chat_stream_error(
			    s, 0, ev->data,
			    xasprintf("error inside the stream: %s", msg));
		else
			chat_stream_error(
			    s, 0, NULL,
			    xasprintf("invalid JSON in the stream: "
			              "%s",
			              msg));
		free(msg);
		cJSON_Delete(j);
		return -1;
	}
	s->chunks++;
	int rc = 0;
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "usage");
	if (cJSON_IsObject(u))
		chat_usage(s, u);
	const cJSON *c;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(j, "choices"))
	{
		if (cJSON_IsObject(c) && (rc = chat_choice(s, c)) < 0)
			break;
	}
	cJSON_Delete(j);
	return rc;
}

void chat_stream_init(struct chat_stream *s, int turn,
                      void (*on_text)(void *arg, const char *text, size_t n),
                      void *arg)
{
	memset(s, 0, sizeof *s);
	sse_init(&s->sse, LLM_MAX_EVENT, chat_event, s);
	/* A server that ignores stream:true answers one JSON line. */
	s->sse.bare_json = 1;
	buf_init(&s->text, LLM_MAX_TEXT);
	s->turn = turn;
	s->on_text = on_text;
	s->arg = arg;
}

void chat_stream_free(struct chat_stream *s)
{
	sse_free(&s->sse);
	buf_free(&s->text);
	for (size_t i = 0; i < s->n_slots; i++) {
		free(s->slots[i].id);
		free(s->slots[i].item_id);
		free(s->slots[i].name);
		buf_free(&s->slots[i].args);
	}
	free(s->slots);
	cJSON_Delete(s->items);
	for (size_t i = 0; i < s->n_blocks; i++) {
		cJSON_Delete(s->blocks[i].json);
		free(s->blocks[i].id);
		buf_free(&s->blocks[i].acc);
		free(s->blocks[i].acc_field);
	}
	free(s->blocks);
	cJSON_Delete(s->noted);
	free(s->response_id);
	free(s->finish_reason);
	free(s->error);
	free(s->error_body);
	memset(s, 0, sizeof *s);
}

int chat_stream_feed(struct chat_stream *s, const char *data, size_t n)
{
	if (s->error)
		return -1;
	if (sse_feed(&s->sse, data, n) < 0) {
		chat_stream_error(s, 1, NULL,
		                  xasprintf("a stream event passed %d MiB",
		                            LLM_MAX_EVENT / (1024 * 1024)));
		return -1;
	}
	return 0;
}

int chat_stream_finish(struct chat_stream *s)
{
	if (s->error)
		return -1;
	if (sse_finish(&s->sse) < 0) {
		chat_stream_error(s, 1, NULL,
		                  xasprintf("a stream event passed %d MiB",
		                            LLM_MAX_EVENT / (1024 * 1024)));
		return -1;
	}
	if (!s->saw_done && !s->finish_reason) {
		chat_stream_error(
		    s, 0, NULL,
		    xstrdup("the stream ended before the answer was "
		            "complete (no finish_reason, no [DONE])"));
		return -1;
	}
	return 0;
}

/* One rebuilt call in neutral form. */
static cJSON *chat_call(const struct chat_stream *s, size_t i)
{
	const struct chat_slot *sl = &s->slots[i];
	cJSON *call = cJSON_CreateObject();
	char *id =
	    sl->id ? xstrdup(sl->id) : xasprintf("call_%d_%zu", s->turn, i);
	const char *raw = sl->args.data ? sl->args.data : "";
	size_t len = sl->args.len;

	cJSON_AddStringToObject(call, "id", id);
	cJSON_AddStringToObject(call, "name", sl->name ? sl->name : "");
	free(id);
	while (len > 0 && strchr(" \t\r\n", raw[len - 1]))
		len--;
	if (len == 0) {
		cJSON_AddItemToObject(call, "arguments", cJSON_CreateObject());
		return call;
	}
	cJSON *args = parse_strict(raw);
	if (cJSON_IsObject(args)) {
		cJSON_AddItemToObject(call, "arguments", args);
		return call;
	}
	/* The answer ran out of output tokens inside this call: what
	 * arrived is a prefix. The call is not run; its result asks for a
	 * shorter one, and the history sent back holds "{}" for it. */
	int cut =
	    !args && s->finish_reason && !strcmp(s->finish_reason, "length");
	char *why =
	    cut    ? xasprintf("the call was cut off after %zu bytes of "
	                          "arguments: the answer reached the output "
	                          "token limit",
	                       len)
	    : args ? xstrdup("the arguments are not a JSON object")
	           : xasprintf("the arguments are not valid JSON (%zu bytes)",
	                       len);
	cJSON_AddStringToObject(call, "arguments_error", why);
	free(why);
	if (cut) {
		cJSON_AddBoolToObject(call, "cut_off", 1);
		cJSON_AddNumberToObject(call, "arguments_bytes", (double)len);
	}
	cJSON_Delete(args);
	cJSON_AddItemToObject(call, "arguments", cJSON_CreateObject());
	cJSON_AddStringToObject(call, "arguments_raw", raw);
	return call;
}

cJSON *chat_stream_tool_calls(const struct chat_stream *s)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < s->n_slots; i++) {
		const struct chat_slot *sl = &s->slots[i];
		/* a call without a name cannot be run nor sent back */
		if (!sl->name || !*sl->name || sl->foreign)
			continue;
		cJSON_AddItemToArray(arr, chat_call(s, i));
	}
	return arr;
}

cJSON *chat_stream_event_json(struct chat_stream *s, const struct sse_event *ev)
{
	cJSON *j = parse_strict(ev->data);
	if (!j) {
		char *msg = llm_error_body_message(ev->data);
		chat_stream_error(
		    s, 0, NULL,
		    xasprintf("invalid JSON in the stream: %s", msg));
		free(msg);
		return NULL;
	}
	s->chunks++;
	return j;
}

cJSON *chat_stream_take_items(struct chat_stream *s, const char *provider)
{
	if (!cJSON_GetArraySize(s->items))
		return NULL;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "provider", provider);
	cJSON_AddItemToObject(o, "items", s->items);
	s->items = NULL;
	return o;
}

void chat_stream_note(struct chat_stream *s, const char *what, const char *type)
{
	char *n = xasprintf("%s %s", what, type);
	const cJSON *it;
	if (!s->noted)
		s->noted = cJSON_CreateArray();
	cJSON_ArrayForEach(it, s->noted)
	{
		if (!strcmp(it->valuestring, n)) {
			free(n);
			return;
		}
	}
	cJSON_AddItemToArray(s->noted, cJSON_CreateString(n));
	free(n);
}

int chat_stream_kept(struct chat_stream *s, size_t n)
{
	s->kept_bytes += n;
	if (s->kept_bytes <= LLM_MAX_KEPT)
		return 0;
	chat_stream_error(s, 1, NULL,
	                  xasprintf("the answer's content blocks passed %d MiB",
	                            LLM_MAX_KEPT / (1024 * 1024)));
	return -1;
}

struct chat_block *chat_stream_new_block(struct chat_stream *s, cJSON *json)
{
	if (s->n_blocks >= LLM_MAX_BLOCKS)
		chat_stream_error(
		    s, 1, NULL,
		    xasprintf("more than %d content blocks in one "
		              "answer",
		              LLM_MAX_BLOCKS));
	if (s->n_blocks >= LLM_MAX_BLOCKS || chat_stream_kept(s, s->ev_len)) {
		cJSON_Delete(json);
		return NULL;
	}
	if (s->n_blocks % 8 == 0)
		s->blocks =
		    xrealloc(s->blocks, (s->n_blocks + 8) * sizeof *s->blocks);
	struct chat_block *b = &s->blocks[s->n_blocks++];
	memset(b, 0, sizeof *b);
	b->json = json;
	b->index = -1;
	buf_init(&b->acc, LLM_MAX_KEPT);
	return b;
}

/* A field's value as a string ("" when absent or not a string). */
static const char *block_str(const cJSON *json, const char *field)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(json, field);
	return cJSON_IsString(v) ? v->valuestring : "";
}

void chat_block_merge(struct chat_block *b)
{
	if (!b->acc_field)
		return;
	const char *f = b->acc_field;
	cJSON *v;
	if (!strcmp(f, "input")) {
		/* streamed JSON replaces the placeholder input of the start */
		v = b->acc.len ? parse_strict(buf_str(&b->acc)) : NULL;
		if (b->acc.len && !cJSON_IsObject(v)) {
			cJSON_Delete(v);
			v = cJSON_CreateObject();
		}
	} else {
		char *joined =
		    xasprintf("%s%s", block_str(b->json, f), buf_str(&b->acc));
		v = cJSON_CreateString(joined);
		free(joined);
	}
	if (v) {
		cJSON_DeleteItemFromObjectCaseSensitive(b->json, f);
		cJSON_AddItemToObject(b->json, f, v);
	}
	buf_reset(&b->acc);
	free(b->acc_field);
	b->acc_field = NULL;
}

int chat_block_append(struct chat_stream *s, struct chat_block *b,
                      const char *field, const char *text)
{
	size_t n = strlen(text);
	if (b->acc_field && strcmp(b->acc_field, field))
		chat_block_merge(b);
	if (!b->acc_field)
		b->acc_field = xstrdup(field);
	if (chat_stream_kept(s, n) < 0)
		return -1;
	return buf_append(&b->acc, text, n); /* acc's max is the bound's */
}

int chat_stream_server_note(struct chat_stream *s, const char *name,
                            const cJSON *input)
{
	char *in = input ? cJSON_PrintUnformatted(input) : xstrdup("");
	size_t n = strlen(in ? in : "");
	const char *more = "";
	if (n > 200) { /* cut on a character's first byte */
		n = 200;
		while (n > 0 && ((unsigned char)in[n] & 0xc0) == 0x80)
			n--;
		more = "...";
	}
	const char *lead =
	    s->text.len && s->text.data[s->text.len - 1] != '\n' ? "\n" : "";
	char *note = xasprintf("%s[server tool %s%s%.*s%s]\n", lead, name,
	                       n ? ": " : "", (int)n, in ? in : "", more);
	int rc = chat_stream_text(s, note);
	free(note);
	free(in);
	return rc;
}

cJSON *chat_stream_ordered(const char *provider, cJSON *items)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "provider", provider);
	cJSON_AddItemToObject(o, "items", items);
	cJSON_AddTrueToObject(o, "ordered");
	return o;
}
