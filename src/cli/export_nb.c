/* export_nb.c: `assay export RUN --format ipynb|script`: the analysis
 * to take away rather than a record to read. The walk (export.c) hands
 * every event to exp_nb_event, which gathers the run into cells: the
 * user's and the model's messages as markdown, each python call a code
 * cell with its outputs (its streams, the trailing value and the error
 * with its traceback told apart by exec_end's "python"), each shell
 * call a %%bash cell, each write_file a %%writefile cell (after a
 * mkdir of its directory); the PNGs a call made join its outputs
 * (export_images.c reads them). At the end export_safe.c judges which
 * calls a host may replay; ipynb writes the cells as an nbformat 4.5
 * notebook, each call it may not replay a cell of comments (the reason,
 * then its code) that keeps its outputs; script is export_script.c.
 * The code is the run's own, byte for byte; the model's prose only
 * goes into comments with every line break made a line of its own. */
#include "export_nb.h"

#include "assay/events.h"
#include "assay/imgrender.h"
#include "assay/json.h"
#include "assay/strv.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- gathering ---- */

static struct nb_cell *nb_add(struct exp_nb *nb, enum nb_kind kind)
{
	if (nb->n == nb->cap) {
		nb->cap = nb->cap ? nb->cap * 2 : 32;
		nb->cell = xrealloc(nb->cell, nb->cap * sizeof *nb->cell);
	}
	struct nb_cell *c = &nb->cell[nb->n++];
	memset(c, 0, sizeof *c);
	c->kind = kind;
	buf_init(&c->out[0], 0);
	buf_init(&c->out[1], 0);
	return c;
}

static struct nb_cell *nb_find(struct exp_nb *nb, const char *id)
{
	for (size_t i = nb->n; id && i-- > 0;)
		if (nb->cell[i].id && !strcmp(nb->cell[i].id, id))
			return &nb->cell[i];
	return NULL;
}

static void nb_markdown(struct exp_nb *nb, const char *text)
{
	if (text && *text)
		nb_add(nb, NB_MARKDOWN)->source = xstrdup(text);
}

/* A cell for a call; its source is the tool's own arguments (command,
 * code, path, content), not an event's fields. */
static void nb_on_tool_call(struct exp_nb *nb, const cJSON *e)
{
	const char *name = ev_str(e, EVF_NAME, "");
	const cJSON *args = ev_item(e, EVF_ARGUMENTS);
	struct nb_cell *c;
	if (!strcmp(name, "python")) {
		c = nb_add(nb, NB_PYTHON);
		c->source = xstrdup(json_str(args, "code", ""));
	} else if (!strcmp(name, "shell")) {
		c = nb_add(nb, NB_SHELL);
		c->source = xstrdup(ev_str(args, EVF_COMMAND, ""));
	} else if (!strcmp(name, "write_file")) {
		c = nb_add(nb, NB_WRITE);
		c->path = xstrdup(ev_str(args, EVF_PATH, ""));
		c->source = xstrdup(ev_str(args, EVF_CONTENT, ""));
	} else {
		return; /* read_file, list_files: nothing to replay */
	}
	c->id = xstrdup(ev_str(e, EVF_ID, ""));
}

/* Denied calls never ran; an edited one ran as edited. */
static void nb_on_approval(struct exp_nb *nb, const cJSON *e)
{
	struct nb_cell *c = nb_find(nb, ev_str(e, EVF_ID, NULL));
	const char *d = ev_str(e, EVF_DECISION, "");
	const char *fin = ev_str(e, EVF_FINAL, NULL);
	if (!c)
		return;
	if (!strcmp(d, "denied"))
		c->denied = 1;
	else if (!strcmp(d, "edited") && fin && c->kind != NB_WRITE) {
		free(c->source);
		c->source = xstrdup(fin);
	}
}

static void nb_on_exec_output(struct exp_nb *nb, const cJSON *e)
{
	struct nb_cell *c = nb_find(nb, ev_str(e, EVF_ID, NULL));
	if (!c)
		return;
	const char *text = ev_str(e, EVF_TEXT, "");
	buf_puts(&c->out[!strcmp(ev_str(e, EVF_STREAM, ""), "stderr")], text);
	if (ev_num(e, EVF_BYTES, 0) > (double)strlen(text))
		c->cut = 1;
}

static void nb_on_exec_end(struct exp_nb *nb, const cJSON *e)
{
	struct nb_cell *c = nb_find(nb, ev_str(e, EVF_ID, NULL));
	if (!c)
		return;
	c->ran = 1;
	const cJSON *py = ev_item(e, EVF_PYTHON);
	if (cJSON_IsObject(py))
		c->python = cJSON_Duplicate(py, 1);
	const cJSON *err = ev_item(py, EVF_ERROR);
	const char *how = ev_str(e, EVF_ERROR, NULL);
	if (err)
		c->why = xasprintf("raised %s: %s", ev_str(err, EVF_TYPE, "?"),
		                   ev_str(err, EVF_MESSAGE, ""));
	else if (how)
		c->why = xasprintf("could not run: %s", how);
	else if (ev_bool(e, EVF_TIMED_OUT, 0))
		c->why = xstrdup("timed out");
	else if (ev_bool(e, EVF_CANCELLED, 0))
		c->why = xstrdup("cancelled");
	else if (ev_num(e, EVF_EXIT_CODE, 0) != 0)
		c->why =
		    xasprintf("exit code %.0f", ev_num(e, EVF_EXIT_CODE, 0));
	c->failed = c->why != NULL;
	nb->last_call = c - nb->cell;
}

/* write_file has no exec: its result says how it went. */
static void nb_on_tool_result(struct exp_nb *nb, const cJSON *e)
{
	struct nb_cell *c = nb_find(nb, ev_str(e, EVF_ID, NULL));
	if (!c || c->kind != NB_WRITE || c->denied)
		return;
	c->ran = 1;
	if (ev_bool(e, EVF_IS_ERROR, 0)) {
		c->failed = 1;
		c->why = xstrdup(ev_str(e, EVF_CONTENT, "failed"));
	}
	nb->last_call = c - nb->cell;
}

/* A file a shell or python call made or changed: if it is code, the
 * policy never read it (export_safe.c). */
static void nb_on_made(struct exp_nb *nb, const cJSON *e)
{
	struct nb_cell *c = nb_find(nb, ev_str(e, EVF_CALL, NULL));
	const char *path = ev_str(e, EVF_PATH, NULL);
	if (!c || !path || c->kind == NB_WRITE ||
	    !strcmp(ev_str(e, EVF_KIND, ""), "deleted"))
		return;
	strv_push(&nb->made_paths, path);
	strv_push(&nb->made_by, c->id);
}

static void nb_on_run_start(struct exp_nb *nb, const cJSON *e)
{
	free(nb->run_id);
	free(nb->model);
	nb->run_id = xstrdup(ev_str(e, EVF_RUN_ID, "?"));
	nb->model = xstrdup(ev_str(e, EVF_MODEL, "?"));
	cJSON_Delete(nb->inputs);
	nb->inputs = cJSON_Duplicate(ev_item(e, EVF_INPUTS), 1);
	cJSON_Delete(nb->sandbox);
	nb->sandbox = cJSON_Duplicate(ev_item(e, EVF_SANDBOX), 1);
}

/* A resume on another image: the header says so. */
static void nb_on_run_resume(struct exp_nb *nb, const cJSON *e)
{
	char *s = ev_image_change_text(ev_item(e, EVF_SANDBOX));
	if (s)
		strv_take(&nb->image_changes, s);
}

char *exp_nb_sandbox_text(const struct exp_nb *nb)
{
	struct buf b;
	buf_init(&b, 0);
	const char *backend = ev_str(nb->sandbox, EVF_BACKEND, "");
	const char *image = ev_str(nb->sandbox, EVF_IMAGE, "");
	buf_printf(&b, "sandbox: %s (image %s)", *backend ? backend : "?",
	           *image ? image : "-");
	char *id = ev_image_text(nb->sandbox);
	if (id)
		buf_printf(&b, "\nimage id: %s", id);
	free(id);
	for (size_t i = 0; i < nb->image_changes.n; i++)
		buf_printf(&b, "\nresumed: %s", nb->image_changes.v[i]);
	return buf_detach(&b);
}

void exp_nb_event(struct exp *x, const cJSON *e)
{
	struct exp_nb *nb = x->nb;
	switch (event_type_of(e)) {
	case EV_RUN_START:
		nb_on_run_start(nb, e);
		break;
	case EV_RUN_RESUME:
		nb_on_run_resume(nb, e);
		break;
	case EV_USER_MESSAGE:
		if (!nb->script) {
			char *t =
			    xasprintf("**User:** %s", ev_str(e, EVF_TEXT, ""));
			nb_markdown(nb, t);
			free(t);
		} else {
			nb_markdown(nb, ev_str(e, EVF_TEXT, ""));
		}
		break;
	case EV_ASSISTANT_MESSAGE:
		nb_markdown(nb, ev_str(e, EVF_TEXT, ""));
		break;
	case EV_TOOL_CALL:
		nb_on_tool_call(nb, e);
		break;
	case EV_APPROVAL:
		nb_on_approval(nb, e);
		break;
	case EV_EXEC_OUTPUT:
		nb_on_exec_output(nb, e);
		break;
	case EV_EXEC_END:
		nb_on_exec_end(nb, e);
		break;
	case EV_TOOL_RESULT:
		nb_on_tool_result(nb, e);
		break;
	case EV_PYTHON_SESSION:
		if (!strcmp(ev_str(e, EVF_STATE, ""), "started") &&
		    ev_num(e, EVF_GENERATION, 1) > 1) {
			nb->restarts++;
			nb_markdown(nb, "*The Python session started again "
			                "here: what earlier cells defined was "
			                "lost.*");
		}
		break;
	case EV_WORKSPACE_CHANGE: {
		nb_on_made(nb, e);
		/* the call that made an image: images[] grows in the walk */
		int n = x->n_images;
		nb->img_cell = xrealloc(nb->img_cell,
		                        (size_t)(n + 1) * sizeof *nb->img_cell);
		for (int i = 0; i < n; i++)
			if (!strcmp(x->images[i], ev_str(e, EVF_PATH, "")))
				nb->img_cell[i] = nb->last_call;
		nb->img_cell[n] = nb->last_call; /* if it is added now */
		break;
	}
	default:
		break;
	}
}

/* ---- the notebook ---- */

/* Text as nbformat's multiline strings: lines keeping their "\n". */
static cJSON *nb_lines(const char *s, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < n;) {
		const char *nl = memchr(s + i, '\n', n - i);
		size_t len = nl ? (size_t)(nl - (s + i)) + 1 : n - i;
		char *line = xstrndup(s + i, len);
		cJSON_AddItemToArray(a, cJSON_CreateString(line));
		free(line);
		i += len;
	}
	return a;
}

/* s without the suffix tail (and what it was written after): a cell's
 * streams end with its value and its traceback. */
static size_t nb_strip(const struct buf *b, const char *tail)
{
	size_t t = tail ? strlen(tail) : 0;
	if (t && b->len >= t && !memcmp(b->data + b->len - t, tail, t))
		return b->len - t;
	return b->len;
}

static void nb_stream(cJSON *outs, const char *name, const char *s, size_t n)
{
	if (!n)
		return;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "output_type", "stream");
	cJSON_AddStringToObject(o, "name", name);
	cJSON_AddItemToObject(o, "text", nb_lines(s, n));
	cJSON_AddItemToArray(outs, o);
}

/* A python cell's outputs: stdout, stderr, its value, its error. */
static void nb_python_outputs(struct nb_cell *c, cJSON *outs)
{
	const char *value = ev_str(c->python, EVF_VALUE, NULL);
	const char *tb = ev_str(c->python, EVF_TRACEBACK, NULL);
	char *vline = value ? xasprintf("%s\n", value) : NULL;
	nb_stream(outs, "stdout", c->out[0].data, nb_strip(&c->out[0], vline));
	nb_stream(outs, "stderr", c->out[1].data, nb_strip(&c->out[1], tb));
	free(vline);
	if (value) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "output_type", "execute_result");
		cJSON_AddNumberToObject(o, "execution_count", c->count);
		cJSON *d = cJSON_AddObjectToObject(o, "data");
		cJSON_AddItemToObject(d, "text/plain",
		                      nb_lines(value, strlen(value)));
		cJSON_AddObjectToObject(o, "metadata");
		cJSON_AddItemToArray(outs, o);
	}
	const cJSON *err = ev_item(c->python, EVF_ERROR);
	if (err) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "output_type", "error");
		cJSON_AddStringToObject(o, "ename", ev_str(err, EVF_TYPE, "?"));
		cJSON_AddStringToObject(o, "evalue",
		                        ev_str(err, EVF_MESSAGE, ""));
		cJSON *lines = cJSON_AddArrayToObject(o, "traceback");
		const char *t = tb ? tb : "";
		for (const char *p = t; *p;) {
			size_t len = strcspn(p, "\n");
			char *l = xstrndup(p, len);
			cJSON_AddItemToArray(lines, cJSON_CreateString(l));
			free(l);
			p += len + (p[len] == '\n');
		}
		cJSON_AddItemToArray(outs, o);
	}
}

const char *exp_nb_kind_name(enum nb_kind k)
{
	return k == NB_PYTHON  ? "python"
	       : k == NB_SHELL ? "shell"
	                       : "write_file";
}

char *exp_nb_commented(const char *prefix, const char *s)
{
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "# ");
	buf_puts(&b, prefix);
	for (const char *p = s; *p; p++) {
		if (*p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') {
			buf_puts(&b, "\n# ");
			buf_puts(&b, prefix);
		} else {
			buf_append(&b, p, 1);
		}
	}
	buf_puts(&b, "\n");
	return buf_detach(&b);
}

/* A JSON string literal, which is a Python one too. */
char *exp_nb_literal(const char *s)
{
	cJSON *j = cJSON_CreateString(s);
	char *t = cJSON_PrintUnformatted(j);
	char *out = xstrdup(t);
	cJSON_free(t);
	cJSON_Delete(j);
	return out;
}

static void nb_code(cJSON *cells, int *id, const char *src, int count,
                    cJSON *outs);

/* write_file as cells: %%writefile (after a cell that makes its
 * directory: %%writefile makes none) when the path is plain, since
 * IPython expands {} and $ in a magic's line; else Python that writes
 * the text. */
static char *nb_write_source(struct nb_cell *c, cJSON *cells, int *id)
{
	const char *p = c->path;
	int plain =
	    *p &&
	    strspn(p, "abcdefghijklmnopqrstuvwxyz"
	              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-") == strlen(p);
	const char *slash = strrchr(p, '/');
	char *lit = exp_nb_literal(p), *src;
	if (!plain) {
		char *text = exp_nb_literal(c->source);
		src =
		    xasprintf("import os\n"
		              "_p = %s\n"
		              "if os.path.dirname(_p):\n"
		              "    os.makedirs(os.path.dirname(_p), "
		              "exist_ok=True)\n"
		              "with open(_p, \"w\", encoding=\"utf-8\") as f:\n"
		              "    f.write(%s)\n",
		              lit, text);
		free(text);
		free(lit);
		return src;
	}
	if (slash && slash != p) {
		char *dir = xstrndup(p, (size_t)(slash - p));
		char *dl = exp_nb_literal(dir);
		char *mk =
		    xasprintf("import os\nos.makedirs(%s, exist_ok=True)", dl);
		nb_code(cells, id, mk, 0, cJSON_CreateArray());
		free(mk);
		free(dl);
		free(dir);
	}
	free(lit);
	return xasprintf("%%%%writefile %s\n%s", p, c->source);
}

static cJSON *nb_cell_json(const char *type, int id, const char *src)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "cell_type", type);
	char cid[32];
	snprintf(cid, sizeof cid, "cell-%d", id);
	cJSON_AddStringToObject(j, "id", cid);
	cJSON_AddObjectToObject(j, "metadata");
	cJSON_AddItemToObject(j, "source", nb_lines(src, strlen(src)));
	return j;
}

/* A code cell of src with outputs (taken). */
static void nb_code(cJSON *cells, int *id, const char *src, int count,
                    cJSON *outs)
{
	cJSON *j = nb_cell_json("code", (*id)++, src);
	if (count)
		cJSON_AddNumberToObject(j, "execution_count", count);
	else
		cJSON_AddNullToObject(j, "execution_count");
	cJSON_AddItemToObject(j, "outputs", outs);
	cJSON_AddItemToArray(cells, j);
}

static void nb_add_streams(struct nb_cell *c, cJSON *outs)
{
	nb_stream(outs, "stdout", c->out[0].data, c->out[0].len);
	nb_stream(outs, "stderr", c->out[1].data, c->out[1].len);
}

/* A call a host may not replay, as a cell that runs nothing: the
 * reason, then its code (the cell it would have been) as comments. */
static char *nb_skipped_source(const struct nb_cell *c)
{
	char *why = exp_nb_commented("assay: not run on replay: ", c->skip);
	char *code =
	    c->kind == NB_PYTHON ? xstrdup(c->source)
	    : c->kind == NB_SHELL
	        ? xasprintf("%%%%bash\n%s", c->source)
	        : xasprintf("%%%%writefile %s\n%s", c->path, c->source);
	char *body = exp_nb_commented("", code);
	char *src = xasprintf("%s%s", why, body);
	size_t n = strlen(src);
	if (n && src[n - 1] == '\n')
		src[n - 1] = '\0'; /* a cell's last line has no newline */
	free(why);
	free(code);
	free(body);
	return src;
}

/* One call as its cells (a write_file into a directory: a mkdir cell
 * first, %%writefile makes no directory). */
static void nb_call_cells(struct nb_cell *c, cJSON *cells, int *id)
{
	cJSON *outs = cJSON_CreateArray();
	char *src;
	if (c->skip) {
		src = nb_skipped_source(c);
		if (c->kind == NB_PYTHON && c->ran)
			nb_python_outputs(c, outs);
		else if (c->kind == NB_SHELL)
			nb_add_streams(c, outs);
	} else if (c->kind == NB_PYTHON) {
		src = xstrdup(c->source);
		if (c->ran)
			nb_python_outputs(c, outs);
	} else if (c->kind == NB_SHELL) {
		src = xasprintf("%%%%bash\n%s", c->source);
		nb_add_streams(c, outs);
	} else {
		src = nb_write_source(c, cells, id);
	}
	if (c->cut) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "output_type", "stream");
		cJSON_AddStringToObject(o, "name", "stderr");
		char *t = xasprintf("[assay: the output is cut here; all of it "
		                    "is in the run's exec/%s.stdout and "
		                    ".stderr]\n",
		                    c->id);
		cJSON_AddItemToObject(o, "text", nb_lines(t, strlen(t)));
		free(t);
		cJSON_AddItemToArray(outs, o);
	}
	for (cJSON *d = c->displays ? c->displays->child : NULL; d;) {
		cJSON *next = d->next;
		cJSON_AddItemToArray(
		    outs, cJSON_DetachItemViaPointer(c->displays, d));
		d = next;
	}
	nb_code(cells, id, src, c->ran ? c->count : 0, outs);
	free(src);
}

/* The notebook's first cell: which run it is, and what it ran on, in
 * a fenced block (longer than any run of backticks in it): the record's
 * text is shown as it is, never read as markdown or HTML. */
static cJSON *nb_head_cell(const struct exp_nb *nb, int id)
{
	char *where = exp_nb_sandbox_text(nb);
	char *text = xasprintf("assay run %s, model %s\n%s",
	                       nb->run_id ? nb->run_id : "?",
	                       nb->model ? nb->model : "?", where);
	free(where);
	size_t run = 0, most = 0;
	for (const char *p = text; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		most = run > most ? run : most;
	}
	struct buf fence, md;
	buf_init(&fence, 0);
	buf_init(&md, 0);
	for (size_t i = 0; i < (most >= 3 ? most + 1 : 3); i++)
		buf_puts(&fence, "`");
	buf_printf(&md, "%s\n%s\n%s", buf_str(&fence), text, buf_str(&fence));
	cJSON *c = nb_cell_json("markdown", id, buf_str(&md));
	buf_free(&fence);
	buf_free(&md);
	free(text);
	return c;
}

static void nb_write_ipynb(struct exp *x, struct exp_nb *nb)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *cells = cJSON_AddArrayToObject(doc, "cells");
	int id = 1;
	cJSON_AddItemToArray(cells, nb_head_cell(nb, id++));
	for (size_t i = 0; i < nb->n; i++) {
		struct nb_cell *c = &nb->cell[i];
		if (c->kind == NB_MARKDOWN) {
			cJSON *j = nb_cell_json("markdown", id++, c->source);
			if (c->attachments) {
				cJSON_AddItemToObject(j, "attachments",
				                      c->attachments);
				c->attachments = NULL;
			}
			cJSON_AddItemToArray(cells, j);
		} else if (c->denied) {
			char *t = xasprintf("*Not run: the %s call %s was "
			                    "denied.*",
			                    exp_nb_kind_name(c->kind), c->id);
			cJSON_AddItemToArray(cells,
			                     nb_cell_json("markdown", id++, t));
			free(t);
		} else {
			nb_call_cells(c, cells, &id);
		}
	}
	for (size_t i = 0; i < nb->notes.n; i++)
		cJSON_AddItemToArray(
		    cells, nb_cell_json("markdown", id++, nb->notes.v[i]));
	cJSON *md = cJSON_AddObjectToObject(doc, "metadata");
	cJSON *ks = cJSON_AddObjectToObject(md, "kernelspec");
	cJSON_AddStringToObject(ks, "name", "python3");
	cJSON_AddStringToObject(ks, "display_name", "Python 3");
	cJSON_AddStringToObject(ks, "language", "python");
	cJSON *li = cJSON_AddObjectToObject(md, "language_info");
	cJSON_AddStringToObject(li, "name", "python");
	cJSON *as = cJSON_AddObjectToObject(md, "assay");
	cJSON_AddStringToObject(as, "run_id", nb->run_id ? nb->run_id : "?");
	cJSON_AddStringToObject(as, "model", nb->model ? nb->model : "?");
	/* the record's own: backend, image, its id and digests */
	if (nb->sandbox)
		cJSON_AddItemToObject(as, "sandbox",
		                      cJSON_Duplicate(nb->sandbox, 1));
	cJSON_AddNumberToObject(doc, "nbformat", 4);
	cJSON_AddNumberToObject(doc, "nbformat_minor", 5);
	char *text = cJSON_Print(doc);
	exp_puts(x, text);
	exp_puts(x, "\n");
	cJSON_free(text);
	cJSON_Delete(doc);
}

/* ---- the format's callbacks ---- */

static void nb_begin(struct exp *x, const char *title)
{
	(void)title;
	x->nb->last_call = -1;
}

/* Cells get their execution counts in order, then the document. */
static void nb_end(struct exp *x)
{
	struct exp_nb *nb = x->nb;
	int count = 0;
	for (size_t i = 0; i < nb->n; i++)
		if (nb->cell[i].kind != NB_MARKDOWN && nb->cell[i].ran)
			nb->cell[i].count = ++count;
	exp_safe_judge(nb);
	if (nb->script)
		exp_nb_write_script(x, nb);
	else
		nb_write_ipynb(x, nb);
}

static void nb_heading(struct exp *x, int level, const char *text)
{
	(void)x;
	(void)level;
	(void)text;
}

static void nb_text(struct exp *x, const char *text)
{
	(void)x;
	(void)text;
}

static void nb_item(struct exp *x, const char *label, const char *value)
{
	(void)x;
	(void)label;
	(void)value;
}

/* Only the image notes come here (the walk's own go nowhere). */
static void nb_note(struct exp *x, const char *text)
{
	if (!strncmp(text, "image ", 6) || strstr(text, "images not") ||
	    strstr(text, "transcript"))
		strv_push(&x->nb->notes, text);
}

/* A PNG a call made: a display_data output of that call's cell. */
static void nb_image(struct exp *x, const char *path, const unsigned char *png,
                     size_t n)
{
	struct exp_nb *nb = x->nb;
	long at = -1;
	for (int i = 0; i < x->n_images; i++)
		if (!strcmp(x->images[i], path))
			at = nb->img_cell ? nb->img_cell[i] : -1;
	if (at < 0 || nb->script)
		return;
	struct nb_cell *c = &nb->cell[at];
	char *b64 = xmalloc(4 * ((n + 2) / 3) + 1);
	b64[img_base64(png, n, b64)] = '\0';
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "output_type", "display_data");
	cJSON *d = cJSON_AddObjectToObject(o, "data");
	cJSON_AddStringToObject(d, "image/png", b64);
	cJSON_AddStringToObject(d, "text/plain", path);
	cJSON_AddObjectToObject(o, "metadata");
	free(b64);
	if (!c->displays)
		c->displays = cJSON_CreateArray();
	cJSON_AddItemToArray(c->displays, o);
}

/* An image's bytes as a MIME bundle {media_type: base64}, with its
 * caption as text/plain when asked. */
static cJSON *nb_bundle(const struct exp_sent *s, const char *text)
{
	char *b64 = xmalloc(4 * ((s->n + 2) / 3) + 1);
	b64[img_base64(s->data, s->n, b64)] = '\0';
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, s->media_type, b64);
	if (text)
		cJSON_AddStringToObject(d, "text/plain", text);
	free(b64);
	return d;
}

/* An image sent to the model: an output of its call's cell (a
 * display_data with the caption), else (view_image has no cell, and
 * the script) a markdown cell of the caption, the image attached. */
static void nb_sent(struct exp *x, const struct exp_sent *s)
{
	struct exp_nb *nb = x->nb;
	struct nb_cell *c = nb_find(nb, s->id);
	char *text = xasprintf("image %s %s%s%s%s", s->path, s->caption,
	                       s->why ? " (its copy is not shown: " : "",
	                       s->why ? s->why : "", s->why ? ")" : "");
	if (c && !c->denied && s->data && !nb->script) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "output_type", "display_data");
		cJSON_AddItemToObject(o, "data", nb_bundle(s, text));
		cJSON_AddObjectToObject(o, "metadata");
		if (!c->displays)
			c->displays = cJSON_CreateArray();
		cJSON_AddItemToArray(c->displays, o);
		free(text);
		return;
	}
	if (nb->script) { /* a comment line */
		nb_markdown(nb, text);
		free(text);
		return;
	}
	/* the caption as plain text: no markdown of the run's own */
	const char *name = s->data && strcmp(s->media_type, "image/png")
	                       ? "sent.jpg"
	                       : "sent.png";
	/* a fence longer than any run of backticks in the text */
	int run = 0, most = 2;
	for (const char *q = text; *q; q++)
		if ((run = *q == '`' ? run + 1 : 0) > most)
			most = run;
	char *fence = xmalloc((size_t)most + 2);
	memset(fence, '`', (size_t)most + 1);
	fence[most + 1] = '\0';
	struct nb_cell *m = nb_add(nb, NB_MARKDOWN);
	m->source = xasprintf("%s%s%s%s\n%s\n%s",
	                      s->data ? "![sent to the model](attachment:" : "",
	                      s->data ? name : "", s->data ? ")\n\n" : "",
	                      fence, text, fence);
	free(fence);
	if (s->data) {
		m->attachments = cJSON_CreateObject();
		cJSON_AddItemToObject(m->attachments, name, nb_bundle(s, NULL));
	}
	free(text);
}

static void nb_code_block(struct exp *x, const char *text)
{
	(void)x;
	(void)text;
}

const struct exp_ops exp_nb_ops = {
    nb_begin,      nb_end,  nb_heading, nb_text, nb_item,
    nb_code_block, nb_note, nb_image,   nb_sent,
};

void exp_nb_new(struct exp *x, int script)
{
	x->nb = xcalloc(1, sizeof *x->nb);
	x->nb->script = script;
	x->nb->last_call = -1;
}

void exp_nb_free(struct exp *x)
{
	struct exp_nb *nb = x->nb;
	if (!nb)
		return;
	for (size_t i = 0; i < nb->n; i++) {
		struct nb_cell *c = &nb->cell[i];
		free(c->id);
		free(c->source);
		free(c->path);
		free(c->why);
		free(c->skip);
		free(c->rel);
		buf_free(&c->out[0]);
		buf_free(&c->out[1]);
		cJSON_Delete(c->python);
		cJSON_Delete(c->displays);
		cJSON_Delete(c->attachments);
	}
	free(nb->cell);
	free(nb->run_id);
	free(nb->model);
	free(nb->img_cell);
	cJSON_Delete(nb->inputs);
	cJSON_Delete(nb->sandbox);
	strv_free(&nb->image_changes);
	strv_free(&nb->notes);
	strv_free(&nb->made_paths);
	strv_free(&nb->made_by);
	free(nb);
	x->nb = NULL;
}
