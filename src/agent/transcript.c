/* transcript.c: the run's event stream on its way out. Each event is
 * stamped (seq, t), made valid UTF-8, appended to transcript.jsonl and
 * flushed at once (a crash loses at most the event in flight). */
#include "agent_internal.h"

#include "assay/json.h"
#include "assay/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void transcript_init(struct transcript *t)
{
	memset(t, 0, sizeof *t);
	t->t0 = now_ms();
}

int transcript_open(struct transcript *t, const char *run_dir, char **err)
{
	char *p = xasprintf("%s/transcript.jsonl", run_dir);
	t->file = fopen(p, "ae");
	if (!t->file)
		set_err(err, "cannot create %s: %s", p, strerror(errno));
	free(p);
	return t->file ? 0 : -1;
}

void transcript_continue(struct transcript *t, uint64_t last_seq,
                         int64_t last_t)
{
	t->seq = last_seq;
	t->t0 = now_ms() - last_t - 1;
}

void transcript_close(struct transcript *t)
{
	if (t->file)
		fclose(t->file);
	t->file = NULL;
}

/* Replace a string that is not valid UTF-8 by its sanitised copy
 * (cJSON's allocator owns both). */
static char *transcript_clean_string(char *s, int owned)
{
	char *clean = utf8_sanitize(s, strlen(s), NULL);
	if (owned)
		cJSON_free(s);
	char *out = cJSON_malloc(strlen(clean) + 1);
	strcpy(out, clean);
	free(clean);
	return out;
}

/* Every string of an event must be valid UTF-8 (JSON, the transcript,
 * the next request): model text, arguments, paths and errors may not
 * be. Fixes them in place. */
static void transcript_sanitize(cJSON *item)
{
	for (cJSON *it = item; it; it = it->next) {
		if (cJSON_IsString(it) && it->valuestring &&
		    !utf8_valid(it->valuestring, strlen(it->valuestring)))
			it->valuestring =
			    transcript_clean_string(it->valuestring, 1);
		if (it->string && !utf8_valid(it->string, strlen(it->string))) {
			/* object keys come from us, or are paths: same rule */
			it->string = transcript_clean_string(
			    it->string, !(it->type & cJSON_StringIsConst));
			it->type &= ~cJSON_StringIsConst;
		}
		if (it->child)
			transcript_sanitize(it->child);
	}
}

cJSON *transcript_stamp(struct transcript *t, cJSON *ev)
{
	transcript_sanitize(ev->child);
	/* seq and t go first so the transcript reads well */
	cJSON *out = cJSON_CreateObject();
	cJSON_AddNumberToObject(out, "seq", (double)++t->seq);
	cJSON_AddNumberToObject(out, "t", (double)(now_ms() - t->t0));
	cJSON *it = ev->child;
	ev->child = NULL;
	while (it) {
		cJSON *next = it->next;
		it->prev = it->next = NULL;
		cJSON_AddItemToObject(out, it->string, it);
		it = next;
	}
	cJSON_Delete(ev);
	t->written++;
	return out;
}

void transcript_write(struct transcript *t, const cJSON *ev)
{
	if (!t->file)
		return;
	char *line = json_print(ev);
	fputs(line, t->file);
	fputc('\n', t->file);
	fflush(t->file);
	free(line);
}
