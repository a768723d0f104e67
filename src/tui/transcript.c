/* transcript.c: a recorded run read back for replay: the events of its
 * transcript.jsonl (a last line cut by a killed run is left out), the
 * turn each step belongs to, and the TUI model rebuilt at any step by
 * feeding events 1..N to the same code a live run uses (model.c). */
#include "tui/replay.h"

#include "assay/events.h"
#include "assay/json.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
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
		/* anything there is read (or refused by its type) */
		if (lstat(p, &st) == 0)
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

/* One event more. */
static void push(struct ui_transcript *t, cJSON *ev)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->ev = xrealloc(t->ev, (size_t)t->cap * sizeof *t->ev);
	}
	t->ev[t->n++] = ev;
}

/* A line with nothing but white space. */
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
		if (event_type_of(ev) != EV_RUN_START)
			continue;
		cJSON_DeleteItemFromObject(ev, "run_dir");
		cJSON_AddStringToObject(ev, "run_dir", t->run_dir);
	}
}

/* ---- turns ---------------------------------------------------------------
 * The events' own numbers are not trusted: a turn is a model_request
 * actually present. A resumed run's transcript repeats, after
 * run_resume, a model_request ("cached", "replayed": true) and a zero
 * usage for every recorded turn it took from the cache: they are the
 * turns above seen again, so the replay leaves them out and shows the
 * run as it happened. */

/* The event's "turn" when it is a sane turn number, else 0. */
static int turn_field(const cJSON *ev)
{
	const cJSON *v = ev_item(ev, EVF_TURN);
	if (!cJSON_IsNumber(v))
		return 0;
	double d = v->valuedouble;
	if (!(d >= 1 && d <= UI_TRANSCRIPT_TURN_MAX) || d != (double)(int)d)
		return 0;
	return (int)d;
}

/* The event starts a turn (a model request). */
static int is_request(const cJSON *ev)
{
	return event_type_of(ev) == EV_MODEL_REQUEST;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Leave out the replayed copies of recorded turns (sorted hashes of the
 * recorded requests: one pass, n log n). A replayed request whose hash
 * was never recorded stays: it is all there is of that turn. */
static void drop_replayed(struct ui_transcript *t)
{
	const char **hashes =
	    xcalloc((size_t)(t->n ? t->n : 1), sizeof *hashes);
	size_t nh = 0;
	for (int i = 0; i < t->n; i++) {
		const char *h = ev_str(t->ev[i], EVF_REQUEST_HASH, NULL);
		if (is_request(t->ev[i]) && h &&
		    !ev_bool(t->ev[i], EVF_REPLAYED, 0))
			hashes[nh++] = h;
	}
	qsort(hashes, nh, sizeof *hashes, cmp_str);
	int kept = 0, dup = 0;
	for (int i = 0; i < t->n; i++) {
		cJSON *ev = t->ev[i];
		if (ev_bool(ev, EVF_REPLAYED, 0)) {
			if (is_request(ev)) {
				const char *h =
				    ev_str(ev, EVF_REQUEST_HASH, "");
				dup = bsearch(&h, hashes, nh, sizeof *hashes,
				              cmp_str) != NULL;
			}
			if (dup) { /* the request, then its usage */
				cJSON_Delete(ev);
				t->dropped++;
				continue;
			}
		} else {
			dup = 0;
		}
		t->ev[kept++] = ev;
	}
	t->n = kept;
	free(hashes);
}

/* One pass: each turn's first event and the turn of every event. A
 * request that repeats the turn number of the one before (the same
 * turn asked again after an interruption) stays in that turn; a
 * missing or absurd number is replaced by the turn's place. */
static void index_turns(struct ui_transcript *t)
{
	t->turn = xcalloc((size_t)(t->n ? t->n : 1), sizeof *t->turn);
	t->turn_start =
	    xcalloc((size_t)(t->n ? t->n : 1), sizeof *t->turn_start);
	int last = 0;
	for (int i = 0; i < t->n; i++) {
		cJSON *ev = t->ev[i];
		if (is_request(ev)) {
			int k = turn_field(ev);
			if (!t->nturns || !k || k != last)
				t->turn_start[t->nturns++] = i;
			last = k;
			if (!k) {
				cJSON_DeleteItemFromObject(ev, "turn");
				cJSON_AddNumberToObject(ev, "turn", t->nturns);
			}
		}
		t->turn[i] = t->nturns;
	}
}

/* The directory of a path (resolved). */
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
	f = fopen_regular(t->path, O_RDONLY | O_NOFOLLOW, 0, err);
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
		    !cJSON_IsString(ev_item(ev, EVF_TYPE))) {
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
	drop_replayed(t);
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
	free(t->turn_start);
	free(t->path);
	free(t->run_dir);
	memset(t, 0, sizeof *t);
}

int ui_transcript_check(const char *run, char **err)
{
	struct ui_transcript t;
	if (ui_transcript_load(&t, run, err) < 0)
		return -1;
	ui_transcript_free(&t);
	return 0;
}

int ui_transcript_turn_step(const struct ui_transcript *t, int k)
{
	return k >= 1 && k <= t->nturns ? t->turn_start[k - 1] + 1 : 0;
}

int ui_transcript_turn_jump(const struct ui_transcript *t, int at, int dir)
{
	if (at < 1 || at > t->n)
		return dir > 0 ? t->n : 1;
	int k = t->turn[at - 1]; /* the turn step `at` is in (0: before) */
	if (dir > 0)
		return k < t->nturns ? t->turn_start[k] + 1 : t->n;
	if (k >= 1 && t->turn_start[k - 1] + 1 < at)
		return t->turn_start[k - 1] + 1;
	return k >= 2 ? t->turn_start[k - 2] + 1 : 1;
}

void ui_transcript_feed(struct ui_model *m, const struct ui_transcript *t,
                        int i)
{
	if (i < 0 || i >= t->n)
		return;
	ui_model_event(m, t->ev[i]);
	/* the clock shows the time of the step, not of the replay */
	ui_model_fix_clock(m, m->last_t);
}

void ui_transcript_rebuild(struct ui_model *m, const struct ui_transcript *t,
                           int step)
{
	void (*start)(void *) = m->on_run_start, (*end)(void *) = m->on_run_end;
	void *arg = m->hook_arg;
	ui_model_free(m);
	ui_model_init(m);
	ui_model_hooks(m, start, end, arg);
	ui_model_fix_clock(m, 0);
	if (step > t->n)
		step = t->n;
	for (int i = 0; i < step; i++)
		ui_transcript_feed(m, t, i);
	ui_model_take_dirty(m);
	ui_model_touch(m, UI_DIRTY_CONV | UI_DIRTY_TOOLS | UI_DIRTY_TREE |
	                      UI_DIRTY_STATUS);
}
