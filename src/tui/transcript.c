/* transcript.c: a recorded run read back for replay: the events of its
 * transcript.jsonl (a last line cut by a killed run is left out), the
 * turn each step belongs to, and the TUI model rebuilt at any step by
 * feeding events 1..N to the same code a live run uses (model.c). */
#include "tui/replay.h"

#include "assay/json.h"
#include "assay/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int is_file(const char *p, struct stat *st)
{
	return stat(p, st) == 0 && S_ISREG(st->st_mode);
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* RUN as a transcript path: a file, a run dir, or a run id. */
static char *find_transcript(const char *run, char **err)
{
	struct stat st;
	if (!*run) {
		set_err(err, "replay: RUN is empty: give a run dir, a run id "
		             "under .assay/runs/ or a transcript.jsonl");
		return NULL;
	}
	if (is_file(run, &st))
		return xstrdup(run);
	char *p = NULL;
	if (is_dir(run)) {
		p = xasprintf("%s/transcript.jsonl", run);
		if (is_file(p, &st))
			return p;
		set_err(err,
		        "replay: %s has no transcript.jsonl: is it a run "
		        "dir (.assay/runs/<run-id>)?",
		        run);
		free(p);
		return NULL;
	}
	if (!strchr(run, '/')) {
		p = xasprintf(".assay/runs/%s/transcript.jsonl", run);
		if (is_file(p, &st))
			return p;
		free(p);
	}
	set_err(err,
	        "replay: no run at '%s': give a run dir, a run id under "
	        ".assay/runs/ or a transcript.jsonl",
	        run);
	return NULL;
}

static void push(struct ui_transcript *t, cJSON *ev)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->ev = xrealloc(t->ev, (size_t)t->cap * sizeof *t->ev);
	}
	t->ev[t->n++] = ev;
}

static int blank(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	return !*s;
}

/* The run dir the events name is where the run was recorded from;
 * outputs are read from where the transcript is now. */
static void fix_run_start(struct ui_transcript *t)
{
	for (int i = 0; i < t->n; i++) {
		cJSON *ev = t->ev[i];
		if (strcmp(json_str(ev, "type", ""), "run_start"))
			continue;
		cJSON_DeleteItemFromObject(ev, "run_dir");
		cJSON_AddStringToObject(ev, "run_dir", t->run_dir);
	}
}

static void index_turns(struct ui_transcript *t)
{
	t->turn = xcalloc((size_t)(t->n ? t->n : 1), sizeof *t->turn);
	int turn = 0;
	for (int i = 0; i < t->n; i++) {
		const cJSON *ev = t->ev[i];
		if (!strcmp(json_str(ev, "type", ""), "model_request")) {
			int k = (int)json_num(ev, "turn", turn + 1);
			turn = k > turn ? k : turn + 1;
		}
		t->turn[i] = turn;
	}
	t->nturns = turn;
}

static char *dir_of(const char *path)
{
	char *real = realpath(path, NULL);
	char *d = xstrdup(real ? real : path);
	free(real);
	char *slash = strrchr(d, '/');
	if (!slash) {
		free(d);
		return xstrdup(".");
	}
	if (slash == d)
		slash[1] = '\0';
	else
		*slash = '\0';
	return d;
}

int ui_transcript_load(struct ui_transcript *t, const char *run, char **err)
{
	memset(t, 0, sizeof *t);
	char *line = NULL;
	size_t cap = 0;
	FILE *f = NULL;
	int rc = -1;
	struct stat st;
	t->path = find_transcript(run, err);
	if (!t->path)
		goto out;
	f = fopen(t->path, "re");
	if (!f || fstat(fileno(f), &st) < 0) {
		set_err(err, "replay: %s: %s", t->path, strerror(errno));
		goto out;
	}
	if (st.st_size > UI_TRANSCRIPT_MAX) {
		set_err(err,
		        "replay: %s is %lld MB, more than replay reads (%lld "
		        "MB): export it instead (assay export)",
		        t->path, (long long)(st.st_size >> 20),
		        UI_TRANSCRIPT_MAX >> 20);
		goto out;
	}
	t->run_dir = dir_of(t->path);
	ssize_t len;
	int lineno = 0, bad = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (bad) { /* only the last line may be cut */
			set_err(err,
			        "replay: %s line %d is not a JSON event: "
			        "the transcript is damaged",
			        t->path, bad);
			goto out;
		}
		if ((size_t)len > UI_TRANSCRIPT_LINE_MAX) {
			set_err(err, "replay: %s line %d is longer than %u MB",
			        t->path, lineno, UI_TRANSCRIPT_LINE_MAX >> 20);
			goto out;
		}
		if (blank(line))
			continue;
		cJSON *ev = cJSON_Parse(line);
		if (!ev || !cJSON_IsObject(ev) ||
		    !cJSON_IsString(cJSON_GetObjectItem(ev, "type"))) {
			cJSON_Delete(ev);
			bad = lineno;
			continue;
		}
		push(t, ev);
	}
	if (ferror(f)) {
		set_err(err, "replay: reading %s: %s", t->path,
		        strerror(errno));
		goto out;
	}
	t->torn = bad != 0;
	if (!t->n) {
		set_err(err,
		        "replay: %s has no events%s: the run never started",
		        t->path, t->torn ? " (only a cut line)" : "");
		goto out;
	}
	fix_run_start(t);
	index_turns(t);
	rc = 0;
out:
	free(line);
	if (f)
		fclose(f);
	if (rc < 0)
		ui_transcript_free(t);
	return rc;
}

void ui_transcript_free(struct ui_transcript *t)
{
	for (int i = 0; i < t->n; i++)
		cJSON_Delete(t->ev[i]);
	free(t->ev);
	free(t->turn);
	free(t->path);
	free(t->run_dir);
	memset(t, 0, sizeof *t);
}

int ui_transcript_turn_step(const struct ui_transcript *t, int k)
{
	for (int i = 0; i < t->n; i++)
		if (t->turn[i] == k &&
		    !strcmp(json_str(t->ev[i], "type", ""), "model_request"))
			return i + 1;
	return 0;
}

void ui_transcript_feed(struct ui_model *m, const struct ui_transcript *t,
                        int i)
{
	if (i < 0 || i >= t->n)
		return;
	ui_model_event(m, t->ev[i]);
	/* the clock shows the time of the step, not of the replay */
	m->fixed_clock = m->last_t;
}

void ui_transcript_rebuild(struct ui_model *m, const struct ui_transcript *t,
                           int step)
{
	void (*start)(void *) = m->on_run_start, (*end)(void *) = m->on_run_end;
	void *arg = m->hook_arg;
	ui_model_free(m);
	ui_model_init(m);
	m->on_run_start = start;
	m->on_run_end = end;
	m->hook_arg = arg;
	m->fixed_clock = 0;
	if (step > t->n)
		step = t->n;
	for (int i = 0; i < step; i++)
		ui_transcript_feed(m, t, i);
	m->dirty =
	    UI_DIRTY_CONV | UI_DIRTY_TOOLS | UI_DIRTY_TREE | UI_DIRTY_STATUS;
}
