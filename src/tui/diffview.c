/* diffview.c: what changed, on the whole screen. For a call, the diff
 * of every text file it changed; for a file, its history across the
 * run's calls: each change's hunks as the workspace_change events
 * recorded them (src/agent/diffs.c), coloured, with n/N between hunks.
 * Files with no diff say why (binary, over the size limit). The lines
 * are built once when the view opens (sanitized then); a live run's
 * later changes show when it is opened again. */
#include "tui/ui.h"
#include "assay/termtext.h"

#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

enum dv_kind { DV_TITLE, DV_HUNK, DV_ADD, DV_DEL, DV_CTX, DV_NOTE };

struct dv_line {
	char *text; /* safe to draw */
	enum dv_kind kind;
};

struct ui_diffview {
	struct ui_overlay ov; /* first: the overlay is the view */
	char *title;
	struct dv_line *l;
	int n, cap;
	int top, rows;
	int hunks; /* how many */
	char *msg;
};

static void dv_add(struct ui_diffview *v, enum dv_kind kind, const char *s,
                   size_t n)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 64;
		v->l = xrealloc(v->l, (size_t)v->cap * sizeof *v->l);
	}
	v->l[v->n++] =
	    (struct dv_line){term_clean(s, n, TERM_CLEAN_TABS), kind};
	v->hunks += kind == DV_HUNK;
}

static void dv_addf(struct ui_diffview *v, enum dv_kind kind, const char *fmt,
                    ...) __attribute__((format(printf, 3, 4)));

static void dv_addf(struct ui_diffview *v, enum dv_kind kind, const char *fmt,
                    ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	dv_add(v, kind, s, strlen(s));
	free(s);
}

/* One change: its heading (what names it: the file or the call), then
 * its hunks line by line, or why there are none. */
static void dv_add_change(struct ui_diffview *v, const struct ui_fdiff *f,
                          const char *name)
{
	if (f->skipped) {
		dv_addf(v, DV_TITLE, "%s  %s: %s", name, f->kind, f->skipped);
		return;
	}
	dv_addf(v, DV_TITLE, "%s  %s  +%d -%d", name, f->kind, f->added,
	        f->removed);
	if (!f->added && !f->removed)
		dv_addf(v, DV_NOTE, "  (the same text: only its time changed)");
	for (const char *p = f->hunks ? f->hunks : ""; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		enum dv_kind k = *p == '@'   ? DV_HUNK
		                 : *p == '+' ? DV_ADD
		                 : *p == '-' ? DV_DEL
		                             : DV_CTX;
		dv_add(v, k, p, n);
		p += n + (nl != NULL);
	}
	if (f->cut)
		dv_addf(v, DV_NOTE, "  (cut: the diff was longer than 64 KiB)");
}

static void dv_draw(struct ui *u, struct ui_overlay *o);
static int dv_key(struct ui *u, struct ui_overlay *o, int key, int fn);
static void dv_free(struct ui *u, struct ui_overlay *o);

static struct ui_diffview *dv_new(char *title)
{
	struct ui_diffview *v = xcalloc(1, sizeof *v);
	v->ov = (struct ui_overlay){
	    .name = "diff",
	    .layer = UI_LAYER_VIEW,
	    .flags = UI_OV_OPAQUE | UI_OV_COVERS_IMAGES,
	    .draw = dv_draw,
	    .key = dv_key,
	    .mouse = ui_overlay_mouse_eat,
	    .free = dv_free,
	};
	v->title = title;
	return v;
}

static void dv_show(struct ui *u, struct ui_diffview *v)
{
	ui_overlay_push(u, &v->ov);
	ui_touch(u, UI_DIRTY_EVERYTHING);
}

/* The call's name as the Tools pane shows it: #N name. */
static char *dv_call_name(const struct ui *u, int i)
{
	if (i < 0 || i >= u->m.ncalls)
		return xstrdup("(a listing of no call)");
	const struct ui_call *c = u->m.calls[i];
	return xasprintf("#%d %s %s", i + 1, c->name,
	                 c->summary ? c->summary : "");
}

void ui_diff_open_call(struct ui *u, int i)
{
	if (i < 0 || i >= u->m.ncalls)
		return;
	char *name = dv_call_name(u, i);
	struct ui_diffview *v = dv_new(xasprintf("what %s changed", name));
	free(name);
	for (int k = 0; k < u->m.nfdiffs; k++)
		if (u->m.fdiffs[k].call == i)
			dv_add_change(v, &u->m.fdiffs[k], u->m.fdiffs[k].path);
	if (!v->n) {
		ui_notice(u, "#%d changed no files (or none were recorded)",
		          i + 1);
		dv_free(u, &v->ov);
		return;
	}
	dv_show(u, v);
}

void ui_diff_open_file(struct ui *u, const char *path)
{
	struct ui_diffview *v = dv_new(xasprintf("%s: its history", path));
	for (int k = 0; k < u->m.nfdiffs; k++) {
		const struct ui_fdiff *f = &u->m.fdiffs[k];
		if (strcmp(f->path, path))
			continue;
		char *name = dv_call_name(u, f->call);
		dv_add_change(v, f, name);
		free(name);
	}
	if (!v->n) {
		char *clean = term_clean(path, strlen(path), 0);
		ui_notice(u, "no call of this run changed %s", clean);
		free(clean);
		dv_free(u, &v->ov);
		return;
	}
	dv_show(u, v);
}

static void dv_free(struct ui *u, struct ui_overlay *o)
{
	struct ui_diffview *v = (struct ui_diffview *)o;
	for (int i = 0; i < v->n; i++)
		free(v->l[i].text);
	free(v->l);
	free(v->title);
	free(v->msg);
	free(v);
	ui_touch(u, UI_DIRTY_EVERYTHING);
}

static enum ui_elem dv_elem(enum dv_kind k)
{
	switch (k) {
	case DV_TITLE:
		return UE_HEADING;
	case DV_HUNK:
		return UE_TITLE;
	case DV_ADD:
		return UE_OK;
	case DV_DEL:
		return UE_FAIL;
	case DV_NOTE:
		return UE_DIM;
	default:
		return UE_NORMAL;
	}
}

static void dv_draw(struct ui *u, struct ui_overlay *o)
{
	struct ui_diffview *v = (struct ui_diffview *)o;
	WINDOW *w = newwin(u->lay.rows - 1, u->lay.cols, 0, 0);
	int h, wd;
	leaveok(w, TRUE);
	getmaxyx(w, h, wd);
	ui_background(w);
	werase(w);
	v->rows = h - 2;
	int hunk = 0; /* the hunk at the top (the first before any) */
	for (int i = 0; i <= v->top && i < v->n; i++)
		hunk += v->l[i].kind == DV_HUNK;
	char *head = xasprintf(" %s  (hunk %d of %d)", v->title,
	                       hunk ? hunk : v->hunks > 0, v->hunks);
	char *clean = term_clean(head, strlen(head), 0);
	ui_fill(w, 0, 0, wd, UE_STATUS);
	ui_draw_text(w, 0, 0, wd, clean, UE_STATUS);
	free(clean);
	free(head);
	for (int y = 1, i = v->top; y <= v->rows && i < v->n; y++, i++)
		ui_draw_text(w, y, 0, wd - 1, v->l[i].text,
		             dv_elem(v->l[i].kind));
	ui_fill(w, h - 1, 0, wd, UE_STATUS);
	if (v->msg)
		ui_draw_text(w, h - 1, 0, wd, v->msg, UE_WARNING);
	else
		ui_draw_text(
		    w, h - 1, 0, wd,
		    " j/k scroll  PgUp/PgDn  g/G top/end  n/N next/prev "
		    "hunk  Esc back",
		    UE_STATUS);
	wnoutrefresh(w);
	delwin(w);
}

/* The top moved to the next (dir 1) or previous hunk or file heading. */
static void dv_jump(struct ui_diffview *v, int dir)
{
	for (int i = v->top + dir; i >= 0 && i < v->n; i += dir)
		if (v->l[i].kind == DV_HUNK) {
			v->top = i;
			return;
		}
	free(v->msg);
	v->msg = xstrdup(dir > 0 ? " no later hunk" : " no earlier hunk");
}

static void dv_scroll(struct ui_diffview *v, int n)
{
	int last = v->n - (v->rows > 0 ? v->rows : 1);
	v->top += n;
	if (v->top > last)
		v->top = last;
	if (v->top < 0)
		v->top = 0;
}

static int dv_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	struct ui_diffview *v = (struct ui_diffview *)o;
	int page = v->rows > 1 ? v->rows - 1 : 1;
	free(v->msg);
	v->msg = NULL;
	if (!fn && (key == UI_KEY_ESC || key == 'q')) {
		ui_overlay_pop(u, o); /* v is gone */
		return 1;
	}
	if ((fn && key == KEY_DOWN) ||
	    (!fn && (key == 'j' || key == UI_KEY_ENTER)))
		dv_scroll(v, 1);
	else if ((fn && key == KEY_UP) || (!fn && key == 'k'))
		dv_scroll(v, -1);
	else if ((fn && key == KEY_NPAGE) || (!fn && key == ' '))
		dv_scroll(v, page);
	else if ((fn && key == KEY_PPAGE) || (!fn && key == 'b'))
		dv_scroll(v, -page);
	else if ((fn && key == KEY_HOME) || (!fn && key == 'g'))
		v->top = 0;
	else if ((fn && key == KEY_END) || (!fn && key == 'G'))
		dv_scroll(v, v->n);
	else if (!fn && (key == 'n' || key == 'N'))
		dv_jump(v, key == 'n' ? 1 : -1);
	ui_touch(u, UI_DIRTY_PAGER);
	return 1;
}
