/* script.c: the scripted model (DESIGN.md "Scripted model"). Answers
 * come from a JSON file of turns and stream through the loop like a
 * real provider's: text in small deltas, each on its own timer, then
 * the tool calls. Which turn answers a request depends only on the
 * request (its number of assistant messages), so resume works. */
#include "llm/llm_internal.h"
#include "assay/config.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

#define SCRIPT_MAX_FILE (16 * 1024 * 1024)
#define SCRIPT_WORDS_PER_DELTA 2

struct script;

/* One answer being streamed; outlives a cancel from inside on_text. */
struct script_turn {
	struct llm *m;
	char *text;
	size_t pos; /* next byte of text to stream */
	cJSON *calls;
	uint64_t timer;
	int in_cb;
	int dead;
};

struct script {
	cJSON *doc;
	const cJSON *turns;
	long delay_ms;
	struct script_turn *cur;
};

static void turn_free(struct script_turn *t)
{
	free(t->text);
	cJSON_Delete(t->calls);
	free(t);
}

/* End of the next delta: a couple of words and the blanks after them.
 * Cuts fall on ASCII blanks, so never inside a UTF-8 sequence. */
static size_t next_delta(const char *s, size_t pos)
{
	for (int w = 0; w < SCRIPT_WORDS_PER_DELTA && s[pos]; w++) {
		while (s[pos] && !strchr(" \t\n", s[pos]))
			pos++;
		while (s[pos] && strchr(" \t\n", s[pos]))
			pos++;
	}
	return pos;
}

static void script_tick(void *arg)
{
	struct script_turn *t = arg;
	struct llm *m = t->m;
	struct script *s = m->priv;

	t->timer = 0;
	if (t->text[t->pos]) {
		size_t end = next_delta(t->text, t->pos);
		t->in_cb = 1;
		if (m->obs.on_text)
			m->obs.on_text(m->obs.arg, t->text + t->pos,
			               end - t->pos);
		t->in_cb = 0;
		if (t->dead) {
			turn_free(t);
			return;
		}
		t->pos = end;
		t->timer = loop_timer_add(m->loop, s->delay_ms, script_tick, t);
		return;
	}
	struct llm_result *r = llm_result_new();
	r->ok = 1;
	free(r->text);
	r->text = t->text;
	t->text = NULL;
	cJSON_Delete(r->tool_calls);
	r->tool_calls = t->calls;
	t->calls = NULL;
	r->finish_reason =
	    xstrdup(cJSON_GetArraySize(r->tool_calls) ? "tool_calls" : "stop");
	r->attempts = 1;
	/* nothing was sent anywhere: no tokens, known (so the turn is
	 * priced, at $0) */
	r->usage.known = 1;
	s->cur = NULL;
	turn_free(t);
	llm_deliver(m, r);
}

/* The neutral tool calls of turn k with ids call_<k>_<i>. */
static cJSON *script_calls(const cJSON *turn, int k)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *c;
	int i = 0;

	cJSON_ArrayForEach(c,
	                   cJSON_GetObjectItemCaseSensitive(turn, "tool_calls"))
	{
		const cJSON *args =
		    cJSON_GetObjectItemCaseSensitive(c, "arguments");
		cJSON *call = cJSON_CreateObject();
		char *id = xasprintf("call_%d_%d", k, i++);
		cJSON_AddStringToObject(call, "id", id);
		free(id);
		cJSON_AddStringToObject(call, "name", json_str(c, "name", ""));
		cJSON_AddItemToObject(call, "arguments",
		                      args ? cJSON_Duplicate(args, 1)
		                           : cJSON_CreateObject());
		cJSON_AddItemToArray(out, call);
	}
	return out;
}

/* Check one turn of the file; i is 0-based, messages say 1-based. */
static int script_check_turn(const cJSON *turn, int i, const char *path,
                             char **err)
{
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(turn, "text");
	const cJSON *calls =
	    cJSON_GetObjectItemCaseSensitive(turn, "tool_calls");
	const cJSON *c;
	int j = 0;

	if (!cJSON_IsObject(turn))
		return set_err(err, "script %s: turn %d is not an object", path,
		               i + 1);
	if (!text && !calls)
		return set_err(err,
		               "script %s: turn %d has neither \"text\" nor "
		               "\"tool_calls\"",
		               path, i + 1);
	if (text && !cJSON_IsString(text))
		return set_err(err,
		               "script %s: turn %d: \"text\" must be a "
		               "string",
		               path, i + 1);
	if (calls && !cJSON_IsArray(calls))
		return set_err(err,
		               "script %s: turn %d: \"tool_calls\" must be an "
		               "array",
		               path, i + 1);
	cJSON_ArrayForEach(c, calls)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
		const cJSON *args =
		    cJSON_GetObjectItemCaseSensitive(c, "arguments");
		j++;
		if (!cJSON_IsString(name) || !name->valuestring[0])
			return set_err(err,
			               "script %s: turn %d, tool call %d: "
			               "\"name\" must be a non-empty string",
			               path, i + 1, j);
		if (args && !cJSON_IsObject(args))
			return set_err(err,
			               "script %s: turn %d, tool call %d: "
			               "\"arguments\" must be an object",
			               path, i + 1, j);
	}
	return 0;
}

static int script_load(struct script *s, const char *path, char **err)
{
	char *e = NULL;
	char *text = read_file_max(path, SCRIPT_MAX_FILE, NULL, &e);

	if (!text) {
		set_err(err, "script: cannot read %s (pass --script FILE)", e);
		free(e);
		return -1;
	}
	s->doc = json_parse_relaxed(text, path, &e);
	free(text);
	if (!s->doc) {
		set_err(err, "script: %s", e);
		free(e);
		return -1;
	}
	s->turns = cJSON_GetObjectItemCaseSensitive(s->doc, "turns");
	if (!cJSON_IsArray(s->turns))
		return set_err(err,
		               "script %s: expected {\"turns\": [...]} at the "
		               "top",
		               path);
	const cJSON *turn;
	int i = 0;
	cJSON_ArrayForEach(turn, s->turns)
	{
		if (script_check_turn(turn, i++, path, err) < 0)
			return -1;
	}
	return 0;
}

static int script_init(struct llm *m, char **err)
{
	const char *path = m->cfg->script;
	struct script *s = xcalloc(1, sizeof *s);
	const char *delay = getenv("ASSAY_SCRIPT_DELAY_MS");

	m->priv = s;
	m->model =
	    xstrdup(m->cfg->model && *m->cfg->model ? m->cfg->model : "script");
	if (delay && *delay)
		s->delay_ms = strtol(delay, NULL, 10);
	if (s->delay_ms < 0)
		s->delay_ms = 0;
	if (!path || !*path)
		return set_err(err, "script: no script file: pass --script "
		                    "FILE");
	m->base_url = xasprintf("script:%s", path);
	return script_load(s, path, err);
}

static int script_start(struct llm *m, const struct llm_request *req,
                        char **err)
{
	struct script *s = m->priv;

	if (s->cur)
		return set_err(err, "script: a turn is already in flight");
	int k = llm_turn_index(req->messages);
	const cJSON *turn = cJSON_GetArrayItem(s->turns, k);
	struct script_turn *t = xcalloc(1, sizeof *t);

	t->m = m;
	/* Past the last turn: an empty answer, which ends the run. */
	t->text = xstrdup(json_str(turn, "text", ""));
	t->calls = script_calls(turn, k);
	s->cur = t;
	t->timer = loop_timer_add(m->loop, 0, script_tick, t);
	return 0;
}

static void script_cancel(struct llm *m)
{
	struct script *s = m->priv;
	struct script_turn *t = s ? s->cur : NULL;

	if (!t)
		return;
	s->cur = NULL;
	if (t->timer)
		loop_timer_cancel(m->loop, t->timer);
	t->timer = 0;
	if (t->in_cb)
		t->dead = 1; /* script_tick frees it */
	else
		turn_free(t);
}

static void script_destroy(struct llm *m)
{
	struct script *s = m->priv;

	if (!s)
		return;
	script_cancel(m);
	cJSON_Delete(s->doc);
	free(s);
	m->priv = NULL;
}

const struct llm_ops llm_script_ops = {
    .name = "script",
    .init = script_init,
    .start = script_start,
    .cancel = script_cancel,
    .destroy = script_destroy,
    .free_of_charge = 1,
};
