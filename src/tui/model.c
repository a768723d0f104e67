/* model.c: what the workbench shows, built from session events only
 * (DESIGN.md: the TUI is a function of the event stream plus its own
 * view state): the conversation items, every tool call with a bounded
 * ring of its recent output lines, the workspace tree and the figures of
 * the status bar. A recorded transcript fed here gives the same model. */
#include "tui/tui.h"
#include "assay/termtext.h"

#include "assay/events.h"
#include "assay/json.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RESULT_MAX (64u << 10)
#define DETAIL_MAX (64u << 10)

void ui_model_init(struct ui_model *m)
{
	memset(m, 0, sizeof *m);
	ui_tree_init(&m->tree);
	m->t0_mono = now_ms();
	m->phase = UI_STARTING;
	m->exit_code = -1;
	m->last_cost = -1;
	m->last_sent_call = -1;
	const char *fixed = getenv("ASSAY_TUI_CLOCK_MS");
	m->fixed_clock = fixed && *fixed ? strtoll(fixed, NULL, 10) : -1;
}

/* A call and its output lines. */
static void call_free(struct ui_call *c)
{
	free(c->id);
	free(c->name);
	free(c->summary);
	free(c->detail);
	free(c->result);
	free(c->progress);
	for (int i = 0; i < c->nsent; i++) {
		free(c->sent[i].path);
		free(c->sent[i].file);
		free(c->sent[i].error);
	}
	free(c->sent);
	ui_term_free(&c->term[0]);
	ui_term_free(&c->term[1]);
	for (size_t i = 0; i < c->nline; i++)
		free(c->line[(c->head + i) % UI_CALL_LINES_MAX].st);
	free(c->line);
	free(c);
}

void ui_model_free(struct ui_model *m)
{
	free(m->provider);
	free(m->model_name);
	free(m->backend);
	free(m->ask);
	free(m->workspace);
	path_mounts_free(&m->mounts);
	free(m->run_dir);
	free(m->run_id);
	free(m->end_status);
	free(m->last_idle_reason);
	free(m->progress);
	free(m->last_image);
	for (int i = 0; i < m->nitems; i++) {
		buf_free(&m->items[i].text);
		ui_rows_free(&m->items[i].rows);
	}
	free(m->items);
	for (int i = 0; i < m->ncalls; i++)
		call_free(m->calls[i]);
	free(m->calls);
	free(m->turn_cost);
	for (int i = 0; i < m->nfdiffs; i++) {
		free(m->fdiffs[i].path);
		free(m->fdiffs[i].kind);
		free(m->fdiffs[i].hunks);
		free(m->fdiffs[i].skipped);
	}
	free(m->fdiffs);
	ui_tree_free(&m->tree);
	memset(m, 0, sizeof *m);
}

int64_t ui_model_now(const struct ui_model *m)
{
	if (m->fixed_clock >= 0)
		return m->fixed_clock;
	return now_ms() - m->t0_mono;
}

static void set_str(char **field, const char *v)
{
	free(*field);
	*field = v ? xstrdup(v) : NULL;
}

/* A new conversation item at the end. */
static struct ui_item *item_add(struct ui_model *m, enum ui_item_kind kind,
                                const char *text)
{
	if (m->nitems == m->capitems) {
		m->capitems = m->capitems ? m->capitems * 2 : 32;
		m->items =
		    xrealloc(m->items, (size_t)m->capitems * sizeof *m->items);
	}
	struct ui_item *it = &m->items[m->nitems++];
	memset(it, 0, sizeof *it);
	it->kind = kind;
	it->call = -1;
	it->rows_dirty = 1;
	buf_init(&it->text, 0);
	if (text)
		buf_puts(&it->text, text);
	m->dirty |= UI_DIRTY_CONV;
	return it;
}

/* The assistant item this turn streams into, or NULL. */
static struct ui_item *streaming_item(struct ui_model *m)
{
	if (m->nitems && m->items[m->nitems - 1].kind == UI_ITEM_ASSISTANT &&
	    m->items[m->nitems - 1].streaming &&
	    m->items[m->nitems - 1].turn == m->turn)
		return &m->items[m->nitems - 1];
	return NULL;
}

struct ui_call *ui_model_call(struct ui_model *m, const char *id)
{
	if (!id)
		return NULL;
	for (int i = m->ncalls - 1; i >= 0; i--)
		if (!strcmp(m->calls[i]->id, id))
			return m->calls[i];
	return NULL;
}

const struct ui_oline *ui_call_line(const struct ui_call *c, size_t i)
{
	if (i >= c->nline)
		return NULL;
	size_t k = (c->head + c->nline - 1 - i) % UI_CALL_LINES_MAX;
	return &c->line[k];
}

/* One output line into a call's ring; the oldest go past its limits. */
static void push_line(struct ui_call *c, const char *st, size_t n, int err)
{
	if (!c->line)
		c->line = xcalloc(UI_CALL_LINES_MAX, sizeof *c->line);
	while (c->nline && (c->nline == UI_CALL_LINES_MAX ||
	                    c->line_bytes + n > UI_CALL_BYTES_MAX)) {
		struct ui_oline *old = &c->line[c->head];
		c->line_bytes -= strlen(old->st);
		free(old->st);
		old->st = NULL;
		c->head = (c->head + 1) % UI_CALL_LINES_MAX;
		c->nline--;
		c->lines_dropped++;
	}
	size_t k = (c->head + c->nline) % UI_CALL_LINES_MAX;
	c->line[k].st = xstrndup(st, n);
	c->line[k].err = (uint8_t)err;
	c->nline++;
	c->line_bytes += n;
}

static void emit_out(void *arg, const char *line, size_t n)
{
	push_line(arg, line, n, 0);
}

static void emit_err(void *arg, const char *line, size_t n)
{
	push_line(arg, line, n, 1);
}

/* At most max bytes of s (a cut character is mended when drawn). */
static char *dup_max(const char *s, size_t max)
{
	return xstrndup(s, strnlen(s, max));
}

/* The first line of what a call does, for one-line summaries. */
static char *call_summary(const char *name, const cJSON *args, char **detail)
{
	const char *keys[] = {"command", "code", "path"};
	const char *what = NULL;
	for (int i = 0; i < 3 && !what; i++)
		what = json_str(args, keys[i], NULL);
	if (!what) {
		char *j = json_print(args);
		*detail = dup_max(j, DETAIL_MAX);
		char *s = dup_max(j, 200);
		free(j);
		return s;
	}
	/* write_file's own argument: not an event field */
	const char *content = json_str(args, "content", NULL);
	if (!strcmp(name, "write_file") && content)
		*detail = dup_max(content, DETAIL_MAX);
	else
		*detail = dup_max(what, DETAIL_MAX);
	while (*what == '\n' || *what == ' ')
		what++;
	size_t n = strcspn(what, "\n");
	return xstrndup(what, n < 400 ? n : 400);
}

/* A call the model asked for: listed in Tools and the conversation. */
static void model_on_tool_call(struct ui_model *m, const cJSON *ev, int64_t t)
{
	if (m->ncalls == m->capcalls) {
		m->capcalls = m->capcalls ? m->capcalls * 2 : 16;
		m->calls =
		    xrealloc(m->calls, (size_t)m->capcalls * sizeof *m->calls);
	}
	struct ui_call *c = xcalloc(1, sizeof *c);
	m->calls[m->ncalls] = c;
	c->id = xstrdup(ev_str(ev, EVF_ID, "?"));
	c->name = xstrdup(ev_str(ev, EVF_NAME, "?"));
	c->summary =
	    call_summary(c->name, ev_item(ev, EVF_ARGUMENTS), &c->detail);
	c->state = UI_CALL_PENDING;
	c->exit_code = -1;
	c->t_start = t;
	c->turn = m->turn;
	ui_term_init(&c->term[0], emit_out, c);
	ui_term_init(&c->term[1], emit_err, c);
	c->term_live = 1;
	struct ui_item *it = item_add(m, UI_ITEM_CALL, NULL);
	it->call = m->ncalls;
	c->item = m->nitems - 1;
	m->ncalls++;
	m->phase = UI_EXECUTING;
	m->dirty |= UI_DIRTY_TOOLS | UI_DIRTY_STATUS;
}

/* A call starts or finishes (a turn announces all its calls first):
 * the frontend may follow it, and the tree's marks start over, so that
 * they tell what this call changes. */
static void call_active(struct ui_model *m, struct ui_call *c)
{
	for (int i = m->ncalls - 1; i >= 0; i--)
		if (m->calls[i] == c)
			m->active_call = i;
	m->new_call = 1;
	ui_tree_clear_marks(&m->tree);
	m->dirty |= UI_DIRTY_TREE;
}

/* A call changed: its row in Tools and its summary are drawn again. */
static void touch_call(struct ui_model *m, struct ui_call *c)
{
	m->dirty |= UI_DIRTY_TOOLS;
	if (c->item >= 0 && c->item < m->nitems) {
		m->items[c->item].rows_dirty = 1;
		m->dirty |= UI_DIRTY_CONV;
	}
}

/* Output of a command: counted, and its lines into the call's ring. */
static void model_on_exec_output(struct ui_model *m, const cJSON *ev, int64_t t)
{
	(void)t;
	struct ui_call *c = ui_model_call(m, ev_str(ev, EVF_ID, NULL));
	if (!c)
		return;
	int err = !strcmp(ev_str(ev, EVF_STREAM, "stdout"), "stderr");
	const cJSON *text = ev_item(ev, EVF_TEXT);
	const char *s = cJSON_IsString(text) ? text->valuestring : "";
	size_t n = strlen(s);
	double bytes = ev_num(ev, EVF_BYTES, (double)n);
	c->bytes[err] += (uint64_t)bytes;
	if (ev_bool(ev, EVF_TRUNCATED, 0) || (double)n < bytes)
		c->truncated = 1;
	if (c->term_live)
		ui_term_feed(&c->term[err], s, n);
	m->dirty |= UI_DIRTY_TOOLS; /* its one-liner did not change */
}

/* A command ended: its exit, duration and byte counts. */
static void model_on_exec_end(struct ui_model *m, const cJSON *ev, int64_t t)
{
	struct ui_call *c = ui_model_call(m, ev_str(ev, EVF_ID, NULL));
	if (!c)
		return;
	c->is_exec = 1;
	c->exit_code = ev_int(ev, EVF_EXIT_CODE, -1);
	c->sig = ev_int(ev, EVF_SIGNAL, 0);
	c->timed_out = ev_bool(ev, EVF_TIMED_OUT, 0);
	c->cancelled = ev_bool(ev, EVF_CANCELLED, 0);
	c->duration_ms =
	    (int64_t)ev_long(ev, EVF_DURATION_MS, (long)(t - c->t_start));
	c->bytes[0] =
	    (uint64_t)ev_long(ev, EVF_STDOUT_BYTES, (long)c->bytes[0]);
	c->bytes[1] =
	    (uint64_t)ev_long(ev, EVF_STDERR_BYTES, (long)c->bytes[1]);
	const char *error = ev_str(ev, EVF_ERROR, NULL);
	if (error) {
		free(c->result);
		c->result = term_clean(error, strlen(error), 0);
	}
	for (int i = 0; i < 2; i++) {
		ui_term_flush(&c->term[i]);
		ui_term_free(&c->term[i]);
	}
	c->term_live = 0;
	c->state = UI_CALL_DONE;
	touch_call(m, c);
}

/* What the tool answered; the call is done. */
static void model_on_tool_result(struct ui_model *m, const cJSON *ev, int64_t t)
{
	struct ui_call *c = ui_model_call(m, ev_str(ev, EVF_ID, NULL));
	if (!c)
		return;
	const char *content = ev_str(ev, EVF_CONTENT, "");
	/* the session's listing after this result reports the changes
	 * of this call alone */
	call_active(m, c);
	free(c->result);
	c->result = dup_max(content, RESULT_MAX);
	c->is_error = ev_bool(ev, EVF_IS_ERROR, 0);
	if (c->state != UI_CALL_DONE && c->state != UI_CALL_DENIED) {
		c->state = UI_CALL_DONE;
		c->duration_ms = t - c->t_start;
	}
	touch_call(m, c);
}

/* An image the agent made: a line in the conversation (once per
 * change, from the events: a replay shows it too) and the newest one
 * for the preview key. */
static void image_changed(struct ui_model *m, const char *path,
                          const char *kind, double mtime)
{
	size_t n = strlen(path);
	if (n < 5 || strcasecmp(path + n - 4, ".png"))
		return;
	/* the newest by its time, not the last named: one call's changes
	 * come in name order */
	if (!mtime || mtime >= m->last_image_mtime || !m->last_image) {
		set_str(&m->last_image, path);
		m->last_image_mtime = mtime;
	}
	/* an image changed: newer than what view_image sent, and the
	 * copies sent of this one are no longer what it is */
	m->last_sent_call = -1;
	for (int i = 0; i < m->ncalls; i++)
		for (int k = 0; k < m->calls[i]->nsent; k++)
			if (!strcmp(m->calls[i]->sent[k].path, path))
				m->calls[i]->sent[k].stale = 1;
	char *text = xasprintf(
	    "%s %s", !strcmp(kind, "created") ? "created" : "updated", path);
	struct ui_item *last = m->nitems ? &m->items[m->nitems - 1] : NULL;
	if (!last || last->kind != UI_ITEM_IMAGE ||
	    strcmp(buf_str(&last->text), text))
		item_add(m, UI_ITEM_IMAGE, text);
	free(text);
}

char *ui_sent_line(const struct ui_sent *s, const char *times,
                   const char *other)
{
	const char *sep = other && strcmp(s->path, other) ? ": " : "";
	const char *path = *sep ? s->path : "";
	if (s->error)
		return xasprintf("%s%snot sent to the model: %s", path, sep,
		                 s->error);
	return xasprintf("%s%ssent to the model: %d%s%d, ~%ld tokens", path,
	                 sep, s->width, times, s->height, s->tokens);
}

const struct ui_sent *ui_model_sent_copy(const struct ui_model *m,
                                         const char *path)
{
	for (int i = m->ncalls - 1; path && i >= 0; i--)
		for (int k = m->calls[i]->nsent - 1; k >= 0; k--) {
			const struct ui_sent *s = &m->calls[i]->sent[k];
			if (!s->error && !s->stale && !strcmp(s->path, path))
				return s;
		}
	return NULL;
}

/* An image sent to the model (or refused) after a call: kept with the
 * call for the Tools pane and the preview key. */
static void model_on_image_sent(struct ui_model *m, const cJSON *ev, int64_t t)
{
	(void)t;
	struct ui_call *c = ui_model_call(m, ev_str(ev, EVF_ID, NULL));
	if (!c)
		return;
	if (c->nsent == UI_SENT_MAX) {
		c->sent_dropped++;
		touch_call(m, c);
		return;
	}
	c->sent = xrealloc(c->sent, (size_t)(c->nsent + 1) * sizeof *c->sent);
	struct ui_sent *s = &c->sent[c->nsent++];
	memset(s, 0, sizeof *s);
	s->path = dup_max(ev_str(ev, EVF_PATH, "?"), 4096);
	const char *err = ev_str(ev, EVF_ERROR, NULL);
	if (err) {
		s->error = dup_max(err, 1024);
		touch_call(m, c);
		return;
	}
	const char *file = ev_str(ev, EVF_FILE, NULL);
	if (ev_image_file_ok(file))
		s->file = xstrdup(file);
	s->width = ev_int(ev, EVF_WIDTH, 0);
	s->height = ev_int(ev, EVF_HEIGHT, 0);
	s->tokens = ev_long(ev, EVF_TOKENS, 0);
	/* what the model asked to see is the newest image for p; an image
	 * sent with a call's result is the copy of the image it made */
	int view = !strcmp(ev_str(ev, EVF_HOW, ""), "view");
	for (int i = m->ncalls - 1; view && i >= 0; i--)
		if (m->calls[i] == c) {
			m->last_sent_call = i;
			m->last_sent_idx = c->nsent - 1;
			break;
		}
	touch_call(m, c);
}

/* The diff a workspace_change carries, kept for the diff view. */
static void model_add_fdiff(struct ui_model *m, const cJSON *ev,
                            const char *path, const char *kind)
{
	const cJSON *d = ev_item(ev, EVF_DIFF);
	if (!cJSON_IsObject(d))
		return;
	if (m->nfdiffs == m->capfdiffs) {
		m->capfdiffs = m->capfdiffs ? 2 * m->capfdiffs : 16;
		m->fdiffs = xrealloc(m->fdiffs,
		                     (size_t)m->capfdiffs * sizeof *m->fdiffs);
	}
	const char *id = ev_str(ev, EVF_CALL, "");
	int call = m->ncalls - 1;
	while (call >= 0 && strcmp(m->calls[call]->id, id))
		call--;
	const char *hunks = ev_str(d, EVF_HUNKS, NULL);
	const char *skipped = ev_str(d, EVF_SKIPPED, NULL);
	size_t n = hunks ? strlen(hunks) : 0;
	if (m->fdiff_bytes + n > UI_FDIFF_BYTES) {
		hunks = NULL;
		skipped = "not kept: the run's diffs fill their room";
	}
	m->fdiff_bytes += hunks ? n : 0;
	m->fdiffs[m->nfdiffs++] = (struct ui_fdiff){
	    call,
	    xstrdup(path),
	    xstrdup(kind),
	    hunks ? xstrdup(hunks) : NULL,
	    skipped ? xstrdup(skipped) : NULL,
	    ev_int(d, EVF_ADDED, 0),
	    ev_int(d, EVF_REMOVED, 0),
	    cJSON_IsTrue(ev_item(d, EVF_CUT)),
	};
}

/* A file made, changed or deleted: the tree follows. */
static void model_on_workspace_change(struct ui_model *m, const cJSON *ev,
                                      int64_t t)
{
	(void)t;
	const char *path = ev_str(ev, EVF_PATH, NULL);
	const char *kind = ev_str(ev, EVF_KIND, "");
	if (!path)
		return;
	model_add_fdiff(m, ev, path, kind);
	if (!strcmp(kind, "deleted")) {
		ui_tree_remove(&m->tree, path);
	} else {
		struct ui_node *old = ui_tree_find(&m->tree, path);
		enum ui_mark mark =
		    !strcmp(kind, "created") ? UI_MARK_NEW : UI_MARK_MOD;
		/* a listing may have seen it first: keep its mark */
		if (old && old->size == ev_num(ev, EVF_SIZE, 0) &&
		    old->mark != UI_MARK_NONE)
			mark = old->mark;
		double mtime = ev_num(ev, EVF_MTIME, old ? old->mtime : 0);
		ui_tree_set(&m->tree, path, UI_N_FILE, ev_num(ev, EVF_SIZE, 0),
		            mtime, mark);
		image_changed(m, path, kind, ev_num(ev, EVF_MTIME, 0));
	}
	m->dirty |= UI_DIRTY_TREE;
}

/* The run's figures for the status bar; the frontend may watch it. */
/* The mounted inputs of run_start's "inputs" (mode "mount"). */
static void model_mounts(struct ui_model *m, const cJSON *inputs)
{
	path_mounts_free(&m->mounts);
	const cJSON *it;
	cJSON_ArrayForEach(it, inputs)
	{
		const char *dest = ev_str(it, EVF_DEST, NULL);
		const char *path = ev_str(it, EVF_PATH, NULL);
		char *rel = NULL, *err = NULL;
		if (strcmp(ev_str(it, EVF_MODE, ""), "mount") || !dest ||
		    !path || path[0] != '/' ||
		    path_normalize(dest, &rel, &err) < 0 || !strcmp(rel, ".")) {
			free(rel);
			free(err);
			continue;
		}
		path_mount_add(&m->mounts, rel, path,
		               !strcmp(ev_str(it, EVF_KIND, ""), "dir"));
		free(rel);
	}
}

/* A resume or re-execute on another image than the run had: a notice
 * naming both ids. */
static void model_image_changed(struct ui_model *m, const cJSON *ev)
{
	char *s = ev_image_change_text(ev_item(ev, EVF_SANDBOX));
	if (s)
		item_add(m, UI_ITEM_NOTICE, s);
	free(s);
}

static void model_on_run_start(struct ui_model *m, const cJSON *ev, int64_t t)
{
	m->t0_mono = now_ms() - t;
	set_str(&m->provider, ev_str(ev, EVF_PROVIDER, ""));
	set_str(&m->model_name, ev_str(ev, EVF_MODEL, ""));
	set_str(&m->backend, ev_str(ev_item(ev, EVF_SANDBOX), EVF_BACKEND, ""));
	set_str(&m->ask, ev_str(ev, EVF_ASK, ""));
	set_str(&m->workspace, ev_str(ev, EVF_WORKSPACE, NULL));
	set_str(&m->run_dir, ev_str(ev, EVF_RUN_DIR, NULL));
	model_mounts(m, ev_item(ev, EVF_INPUTS));
	set_str(&m->run_id, ev_str(ev, EVF_RUN_ID, ""));
	m->max_turns = ev_int(ev_item(ev, EVF_LIMITS), EVF_MAX_TURNS, 0);
	m->sandbox_running = 1;
	model_image_changed(m, ev);
	if (m->on_run_start)
		m->on_run_start(m->hook_arg);
}

/* A resumed run goes on after the recorded run_end: the sandbox is up
 * again, maybe another provider or model, and the workspace is the
 * resumed run dir's own. */
static void model_on_run_resume(struct ui_model *m, const cJSON *ev, int64_t t)
{
	(void)t;
	static const enum ev_field keys[] = {EVF_PROVIDER, EVF_MODEL,
	                                     EVF_WORKSPACE, EVF_RUN_DIR};
	char **fields[] = {&m->provider, &m->model_name, &m->workspace,
	                   &m->run_dir};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		const char *v = ev_str(ev, keys[i], NULL);
		if (v && *v)
			set_str(fields[i], v);
	}
	const char *backend =
	    ev_str(ev_item(ev, EVF_SANDBOX), EVF_BACKEND, NULL);
	if (backend && *backend)
		set_str(&m->backend, backend);
	m->phase = UI_STARTING;
	m->sandbox_running = 1;
	model_image_changed(m, ev);
	if (m->on_run_start)
		m->on_run_start(m->hook_arg);
}

/* An error in the conversation; a retried request's text is void. */
static void model_on_error(struct ui_model *m, const cJSON *ev, int64_t t)
{
	(void)t;
	const char *cat = ev_str(ev, EVF_CATEGORY, "error");
	const char *msg = ev_str(ev, EVF_MESSAGE, "");
	double retry = ev_num(ev, EVF_RETRY_IN_MS, -1);
	struct buf b;
	buf_init(&b, 0);
	buf_printf(&b, "%s: %s", cat, msg);
	if (retry >= 0) {
		buf_printf(&b, " (retrying in %.1fs)", retry / 1000);
		/* what that try had streamed is void: the next try
		 * streams into a new item, below this notice */
		struct ui_item *it = streaming_item(m);
		if (it) {
			buf_free(&it->text);
			ui_rows_free(&it->rows);
			m->nitems--;
		}
	}
	item_add(m, UI_ITEM_ERROR, buf_str(&b));
	buf_free(&b);
}

/* The run's summary: totals, outputs and the archive. */
static void model_on_run_end(struct ui_model *m, const cJSON *ev, int64_t t)
{
	(void)t;
	const cJSON *tot = ev_item(ev, EVF_TOTALS);
	set_str(&m->end_status, ev_str(ev, EVF_STATUS, "?"));
	m->exit_code = ev_int(ev, EVF_EXIT_CODE, -1);
	m->end_ms = (int64_t)ev_long(tot, EVF_DURATION_MS, 0);
	m->phase = UI_ENDED;
	m->sandbox_running = 0;
	struct buf b;
	buf_init(&b, 0);
	char in[16], out[16], dur[16];
	ui_fmt_count(in, sizeof in, ev_num(tot, EVF_INPUT_TOKENS, 0));
	ui_fmt_count(out, sizeof out, ev_num(tot, EVF_OUTPUT_TOKENS, 0));
	ui_fmt_duration(dur, sizeof dur, m->end_ms);
	buf_printf(&b, "run %s: %.0f turns, %s tokens in, %s out, %s",
	           m->end_status, ev_num(tot, EVF_TURNS, 0), in, out, dur);
	const cJSON *o;
	cJSON_ArrayForEach(o, ev_item(ev, EVF_OUTPUTS))
	{
		char sz[16];
		ui_fmt_size(sz, sizeof sz, ev_num(o, EVF_BYTES, 0));
		if (ev_bool(o, EVF_PRESENT, 0))
			buf_printf(&b, "\noutput %s -> %s (%s)",
			           ev_str(o, EVF_PATH, "?"),
			           ev_str(o, EVF_COPIED_TO, "?"), sz);
		else
			buf_printf(&b, "\noutput %s missing: %s",
			           ev_str(o, EVF_PATH, "?"),
			           ev_str(o, EVF_ERROR, ""));
	}
	const char *archive = ev_str(ev, EVF_ARCHIVE, NULL);
	if (archive)
		buf_printf(&b, "\nworkspace archive: %s", archive);
	item_add(m, UI_ITEM_END, buf_str(&b));
	buf_free(&b);
	if (m->on_run_end)
		m->on_run_end(m->hook_arg);
}

/* ---- one handler per event type -------------------------------------- */

static void model_on_user_message(struct ui_model *m, const cJSON *ev,
                                  int64_t t)
{
	(void)t;
	item_add(m, UI_ITEM_USER, ev_str(ev, EVF_TEXT, ""));
}

static void model_on_model_request(struct ui_model *m, const cJSON *ev,
                                   int64_t t)
{
	(void)t;
	m->turn = ev_int(ev, EVF_TURN, m->turn + 1);
	m->phase = UI_REQUESTING;
	m->ctx_tokens = ev_num(ev, EVF_EST_TOKENS, m->ctx_tokens);
	m->ctx_window = ev_num(ev, EVF_WINDOW, m->ctx_window);
	m->dirty |= UI_DIRTY_STATUS;
}

/* Old results became stubs: said, so that nothing is hidden. */
static void model_on_context_trim(struct ui_model *m, const cJSON *ev,
                                  int64_t t)
{
	(void)t;
	char *s = xasprintf(
	    "context: %d old tool results elided from the "
	    "history (%.0f KB; the record keeps them): about "
	    "%.0f -> %.0f tokens of %.0f",
	    cJSON_GetArraySize(ev_item(ev, EVF_IDS)),
	    ev_num(ev, EVF_BYTES, 0) / 1024, ev_num(ev, EVF_EST_BEFORE, 0),
	    ev_num(ev, EVF_EST_AFTER, 0), ev_num(ev, EVF_WINDOW, 0));
	item_add(m, UI_ITEM_NOTICE, s);
	free(s);
	m->ctx_tokens = ev_num(ev, EVF_EST_AFTER, m->ctx_tokens);
	m->dirty |= UI_DIRTY_STATUS;
}

/* A compaction: under way, its summary as a block of its own, or why
 * it failed. */
static void model_on_compaction(struct ui_model *m, const cJSON *ev, int64_t t)
{
	(void)t;
	const char *state = ev_str(ev, EVF_STATE, "");
	const char *reason = ev_str(ev, EVF_REASON, "");
	const char *why = !strcmp(reason, "user") ? "you asked (/compact)"
	                  : !strcmp(reason, "context_length_exceeded")
	                      ? "the provider refused the prompt as too long"
	                      : "the conversation nears the context window";
	char *s = NULL;
	if (!strcmp(state, "started")) {
		m->compacting = 1;
		m->phase = UI_REQUESTING;
		s = xasprintf("compacting the conversation (%s): about %.0f "
		              "tokens of %.0f; the model writes a summary",
		              why, ev_num(ev, EVF_EST_TOKENS, 0),
		              ev_num(ev, EVF_WINDOW, 0));
		item_add(m, UI_ITEM_NOTICE, s);
	} else if (!strcmp(state, "done")) {
		m->compacting = 0;
		s = xasprintf(
		    "compacted: %.0f earlier messages replaced by the "
		    "model's summary below%s (about %.0f -> %.0f "
		    "tokens); the record keeps them all",
		    ev_num(ev, EVF_REPLACED, 0),
		    ev_bool(ev, EVF_CACHED, 0) ? " (from the cache)" : "",
		    ev_num(ev, EVF_EST_BEFORE, 0),
		    ev_num(ev, EVF_EST_AFTER, 0));
		item_add(m, UI_ITEM_NOTICE, s);
		item_add(m, UI_ITEM_SUMMARY, ev_str(ev, EVF_SUMMARY, ""));
		m->ctx_tokens = ev_num(ev, EVF_EST_AFTER, m->ctx_tokens);
	} else {
		m->compacting = 0;
		s = xasprintf("compaction failed: %s",
		              ev_str(ev, EVF_MESSAGE, "?"));
		item_add(m, UI_ITEM_ERROR, s);
	}
	free(s);
	m->dirty |= UI_DIRTY_STATUS | UI_DIRTY_CONV;
}

/* Streamed text goes into the turn's assistant item. */
static void model_on_text_delta(struct ui_model *m, const cJSON *ev, int64_t t)
{
	(void)t;
	struct ui_item *it = streaming_item(m);
	if (!it) {
		it = item_add(m, UI_ITEM_ASSISTANT, NULL);
		it->streaming = 1;
		it->turn = m->turn;
	}
	buf_puts(&it->text, ev_str(ev, EVF_TEXT, ""));
	it->rows_dirty = 1;
	m->dirty |= UI_DIRTY_CONV;
}

/* The whole answer replaces what was streamed of it. */
static void model_on_assistant_message(struct ui_model *m, const cJSON *ev,
                                       int64_t t)
{
	(void)t;
	struct ui_item *it = streaming_item(m);
	const char *text = ev_str(ev, EVF_TEXT, "");
	if (!it && *text)
		it = item_add(m, UI_ITEM_ASSISTANT, NULL);
	if (it) {
		buf_reset(&it->text);
		buf_puts(&it->text, text);
		it->streaming = 0;
		it->turn = m->turn;
		it->rows_dirty = 1;
	}
	m->dirty |= UI_DIRTY_CONV;
}

/* The run's token and cost totals so far. */
static void model_on_usage(struct ui_model *m, const cJSON *ev, int64_t t)
{
	(void)t;
	const cJSON *tot = ev_item(ev, EVF_TOTALS);
	m->in_tokens = ev_num(tot, EVF_INPUT_TOKENS, m->in_tokens);
	m->out_tokens = ev_num(tot, EVF_OUTPUT_TOKENS, m->out_tokens);
	m->cost = ev_num(tot, EVF_COST_USD, m->cost);
	m->unpriced = ev_int(tot, EVF_UNPRICED_TURNS, 0);
	m->last_cost =
	    ev_bool(ev, EVF_PRICED, 0) ? ev_num(ev, EVF_COST_USD, 0) : -1;
	int compaction = ev_item(ev, EVF_OF) != NULL;
	if (!compaction && !ev_bool(ev, EVF_REPLAYED, 0) &&
	    ev_num(ev, EVF_INPUT_TOKENS, 0) > 0)
		m->ctx_tokens = ev_num(ev, EVF_INPUT_TOKENS, 0); /* measured */
	m->dirty |= UI_DIRTY_STATUS;
	int turn = compaction ? 0 : ev_int(ev, EVF_TURN, 0);
	if (turn < 1 || turn >= 1000000)
		return;
	if (turn >= m->nturn_cost) {
		int n = turn + 16;
		m->turn_cost =
		    xrealloc(m->turn_cost, (size_t)n * sizeof *m->turn_cost);
		for (int i = m->nturn_cost; i < n; i++)
			m->turn_cost[i] = -1;
		m->nturn_cost = n;
	}
	m->turn_cost[turn] = m->last_cost;
	m->dirty |= UI_DIRTY_TOOLS | UI_DIRTY_STATUS; /* the calls' costs */
}

double ui_call_cost(const struct ui_model *m, const struct ui_call *c)
{
	int t = c->turn, n = 0;
	if (t < 1 || t + 1 >= m->nturn_cost || m->turn_cost[t] < 0 ||
	    m->turn_cost[t + 1] < 0)
		return -1;
	for (int i = 0; i < m->ncalls; i++)
		n += m->calls[i]->turn == t;
	return n ? (m->turn_cost[t] + m->turn_cost[t + 1]) / n : -1;
}

/* A call waits for a person. */
static void model_on_approval_request(struct ui_model *m, const cJSON *ev,
                                      int64_t t)
{
	(void)t;
	struct ui_call *c = ui_model_call(m, ev_str(ev, EVF_ID, NULL));
	if (c) {
		c->asking = 1;
		touch_call(m, c);
	}
}

/* The decision on a call (denied: it will not run). */
static void model_on_approval(struct ui_model *m, const cJSON *ev, int64_t t)
{
	(void)t;
	struct ui_call *c = ui_model_call(m, ev_str(ev, EVF_ID, NULL));
	if (c) {
		c->asking = 0;
		if (!strcmp(ev_str(ev, EVF_DECISION, ""), "denied"))
			c->state = UI_CALL_DENIED;
		touch_call(m, c);
	}
}

/* A command starts running. */
static void model_on_exec_start(struct ui_model *m, const cJSON *ev, int64_t t)
{
	struct ui_call *c = ui_model_call(m, ev_str(ev, EVF_ID, NULL));
	if (c) {
		c->is_exec = 1;
		c->state = UI_CALL_RUNNING;
		c->t_start = t;
		call_active(m, c);
		touch_call(m, c);
	}
}

/* The model waits for the user: what streamed is whole, and a cancel
 * says so in the conversation. */
static void model_on_idle(struct ui_model *m, const cJSON *ev, int64_t t)
{
	(void)t;
	struct ui_item *it = streaming_item(m);
	if (it)
		it->streaming = 0;
	set_str(&m->last_idle_reason, ev_str(ev, EVF_REASON, ""));
	if (!strcmp(ev_str(ev, EVF_REASON, ""), "cancelled"))
		item_add(m, UI_ITEM_NOTICE,
		         "cancelled: the agent waits for your next "
		         "message");
	m->phase = UI_IDLE;
	m->dirty |= UI_DIRTY_CONV;
}

/* Slow work: named in the status bar after its first second, until it
 * is done. */
/* An MCP call's progress: its line in Tools while it runs. */
static void model_on_call_progress(struct ui_model *m, const cJSON *ev,
                                   int64_t t)
{
	struct ui_call *c = ui_model_call(m, ev_str(ev, EVF_SUBJECT, NULL));
	if (!c || c->state == UI_CALL_DONE || c->state == UI_CALL_DENIED)
		return;
	double done = ev_num(ev, EVF_DONE, 0), total = ev_num(ev, EVF_TOTAL, 0);
	const char *msg = ev_str(ev, EVF_MESSAGE, NULL);
	free(c->progress);
	if (total > 0)
		c->progress = xasprintf("progress %g of %g (%.0f%%)%s%.200s",
		                        done, total, 100 * done / total,
		                        msg ? ": " : "", msg ? msg : "");
	else
		c->progress = xasprintf("progress %g%s%.200s", done,
		                        msg ? ": " : "", msg ? msg : "");
	if (c->state == UI_CALL_PENDING) {
		c->state = UI_CALL_RUNNING;
		c->t_start = t - (int64_t)ev_long(ev, EVF_ELAPSED_MS, 0);
	}
	touch_call(m, c);
}

static void model_on_progress(struct ui_model *m, const cJSON *ev, int64_t t)
{
	if (!strcmp(ev_str(ev, EVF_WHAT, ""), "mcp")) {
		model_on_call_progress(m, ev, t);
		return;
	}
	double done = ev_num(ev, EVF_DONE, 0), total = ev_num(ev, EVF_TOTAL, 0);
	double ms = ev_num(ev, EVF_ELAPSED_MS, 0);
	free(m->progress);
	m->progress = NULL;
	if (ms < 1000 || done < 0 || (total > 0 && done >= total))
		return; /* not yet worth naming, or over */
	char r[16], d[16];
	bytes_human(done * 1000 / (ms > 0 ? ms : 1), r);
	bytes_human(done, d);
	const char *what = ev_str(ev, EVF_WHAT, ""),
	           *subject = ev_str(ev, EVF_SUBJECT, "");
	m->progress = total > 0
	                  ? xasprintf("%s %s: %.0f%%, %s/s", what, subject,
	                              100 * done / total, r)
	                  : xasprintf("%s %s: %s, %s/s", what, subject, d, r);
}

typedef void (*model_handler)(struct ui_model *m, const cJSON *ev, int64_t t);

/* What each event type does to the model; the others (and types this
 * build does not know) change nothing but the clock. */
static const model_handler model_handlers[EV__COUNT] = {
    [EV_RUN_START] = model_on_run_start,
    [EV_RUN_RESUME] = model_on_run_resume,
    [EV_USER_MESSAGE] = model_on_user_message,
    [EV_MODEL_REQUEST] = model_on_model_request,
    [EV_TEXT_DELTA] = model_on_text_delta,
    [EV_ASSISTANT_MESSAGE] = model_on_assistant_message,
    [EV_USAGE] = model_on_usage,
    [EV_TOOL_CALL] = model_on_tool_call,
    [EV_APPROVAL_REQUEST] = model_on_approval_request,
    [EV_APPROVAL] = model_on_approval,
    [EV_EXEC_START] = model_on_exec_start,
    [EV_EXEC_OUTPUT] = model_on_exec_output,
    [EV_EXEC_END] = model_on_exec_end,
    [EV_TOOL_RESULT] = model_on_tool_result,
    [EV_WORKSPACE_CHANGE] = model_on_workspace_change,
    [EV_IMAGE_SENT] = model_on_image_sent,
    [EV_CONTEXT_TRIM] = model_on_context_trim,
    [EV_COMPACTION] = model_on_compaction,
    [EV_ERROR] = model_on_error,
    [EV_IDLE] = model_on_idle,
    [EV_RUN_END] = model_on_run_end,
    [EV_PROGRESS] = model_on_progress,
};

void ui_model_notice(struct ui_model *m, const char *text)
{
	item_add(m, UI_ITEM_NOTICE, text);
	m->dirty |= UI_DIRTY_CONV;
}

void ui_model_event(struct ui_model *m, const cJSON *ev)
{
	enum event_type type = event_type_of(ev);
	int64_t t = (int64_t)ev_long(ev, EVF_T, (long)m->last_t);
	m->last_t = t;
	m->dirty |= UI_DIRTY_STATUS;
	if (type < EV__COUNT && model_handlers[type])
		model_handlers[type](m, ev, t);
}

/* Call ids come from the model; tools.c keeps file names to this
 * alphabet and length, and so must we to find them. */
char *ui_call_file(const struct ui_model *m, const struct ui_call *c, int err)
{
	if (!m->run_dir)
		return NULL;
	char *id = xstrndup(c->id, strnlen(c->id, 64));
	for (char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
			*p = '_';
	char *path = xasprintf("%s/exec/%s.%s", m->run_dir, id,
	                       err ? "stderr" : "stdout");
	free(id);
	return path;
}

void ui_model_hooks(struct ui_model *m, void (*start)(void *arg),
                    void (*end)(void *arg), void *arg)
{
	m->on_run_start = start;
	m->on_run_end = end;
	m->hook_arg = arg;
}

void ui_model_touch(struct ui_model *m, unsigned bits)
{
	m->dirty |= bits;
}

unsigned ui_model_take_dirty(struct ui_model *m)
{
	unsigned d = m->dirty;
	m->dirty = 0;
	return d;
}

int ui_model_take_new_call(struct ui_model *m)
{
	int n = m->new_call;
	m->new_call = 0;
	return n;
}

void ui_model_set_clock(struct ui_model *m, int64_t t)
{
	m->t0_mono = now_ms() - t;
}

void ui_model_fix_clock(struct ui_model *m, int64_t t)
{
	m->fixed_clock = t;
}

void ui_model_set_no_key(struct ui_model *m)
{
	m->no_key = 1;
}
