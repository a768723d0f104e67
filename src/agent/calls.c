/* calls.c: the turn's tool calls as the session hands them out, one
 * after another, and the result of the one that ran on its way into
 * the record and the conversation (an approval's edit or a fork's
 * replacement worded in). The owner of struct calls with tools.c
 * (calls.h); session.c decides when. The JSON it reads (the model's
 * tool calls, src/llm's) is not an event. */
#include "agent_internal.h"

#include "assay/events.h"
#include "assay/json.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

/* A call's result on its way into the conversation. */
struct session_result {
	char *id, *name;
	char *content;  /* what the model is told */
	char *original; /* a fork replaced it: what the call gave */
	int is_error;
	int changes;   /* the call may have changed files */
	cJSON *images; /* [{event, part}] that go with it (view_image) */
};

/* Free a result that waited (or never joined the conversation). */
static void calls_result_free(struct session_result *r)
{
	if (!r)
		return;
	free(r->id);
	free(r->name);
	free(r->content);
	free(r->original);
	cJSON_Delete(r->images);
	free(r);
}

void calls_set(struct session *s, cJSON *pending)
{
	cJSON_Delete(s->calls.pending);
	s->calls.pending = pending;
	s->calls.next_call = 0;
}

void calls_clear(struct session *s)
{
	cJSON_Delete(s->calls.pending);
	s->calls.pending = NULL;
}

const cJSON *calls_advance(struct session *s)
{
	return cJSON_GetArrayItem(s->calls.pending, s->calls.next_call++);
}

int calls_result_new(struct session *s, const char *id, const char *content,
                     int is_error, int as_is, cJSON *images)
{
	const char *forked =
	    s->replay ? replay_fork_result(s->replay, id) : NULL;
	char *told = forked || as_is ? xstrdup(forked ? forked : content)
	                             : approval_result(s, id, content);
	struct session_result *r = xcalloc(1, sizeof *r);
	r->id = xstrdup(id);
	/* what the model is sent must be valid UTF-8 */
	r->content = utf8_sanitize(told, strlen(told), NULL);
	free(told);
	r->original = forked ? xstrdup(content) : NULL;
	r->is_error = is_error;
	/* a fork's replacement is text: the images were the call's */
	r->images = forked ? NULL : images;
	if (forked)
		cJSON_Delete(images);
	const cJSON *call =
	    cJSON_GetArrayItem(s->calls.pending, s->calls.next_call - 1);
	r->name = xstrdup(json_str(call, "name", ""));
	/* reading and listing change nothing: no scan, no archive */
	r->changes = strcmp(r->name, "read_file") &&
	             strcmp(r->name, "list_files") &&
	             strcmp(r->name, "view_image");
	calls_result_free(s->calls.result);
	s->calls.result = r;
	return r->changes;
}

int calls_result_record(struct session *s)
{
	struct session_result *r = s->calls.result;
	s->calls.result = NULL;
	if (r->original)
		session_emit(s,
		             ev_tool_result_forked(r->id, r->content,
		                                   r->is_error, r->original));
	else
		session_emit(s, ev_tool_result(r->id, r->content, r->is_error));
	messages_add_tool(s->conv.messages, r->id, r->name, r->content,
	                  r->is_error);
	cJSON *im;
	cJSON_ArrayForEach(im, r->images)
	{
		session_emit(s, cJSON_DetachItemFromObject(im, "event"));
		messages_add_image(s->conv.messages, r->id,
		                   cJSON_DetachItemFromObject(im, "part"));
	}
	int changes = r->changes;
	diffs_call(s, r->id); /* what the listing finds, this call did */
	calls_result_free(r);
	return changes;
}

void calls_free(struct calls *c)
{
	calls_result_free(c->result);
	cJSON_Delete(c->pending);
}
