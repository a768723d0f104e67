/* tableview.c: a CSV or TSV file as a table on the whole screen (an
 * overlay of the VIEW layer): columns aligned to their content, the
 * header row and the first column pinned, scrolling by cell, search,
 * sort and a column's summary. Nothing is loaded whole: rows are read
 * by byte offset as the pager does (pagefile.c), and the file is indexed
 * in steps from the loop (a start offset every TV_CK rows) while it is
 * already shown; the last rows are found before that by parsing back
 * from the end (that reading and the index: tableview_rows.c). Parsing,
 * numbers and summaries are csv.c's. */
#include "tui/tableview.h"

#include "assay/log.h"
#include "assay/loop.h"
#include "assay/path.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TV_SAMPLE (256 << 10) /* what the dialect and widths come from */
#define TV_SAMPLE_ROWS 1000
#define TV_COL_MAX 40            /* cells a column takes at most */
#define TV_SORT_MAX 200000       /* rows sorted; more: a sample */
#define TV_SEARCH_STEP (4 << 20) /* bytes searched per step */

static double tv_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void tv_msg(struct ui_tableview *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The message in the bottom line (NULL: the key hints). */
static void tv_msg(struct ui_tableview *v, const char *fmt, ...)
{
	free(v->msg);
	v->msg = NULL;
	if (!fmt)
		return;
	va_list ap;
	va_start(ap, fmt);
	v->msg = xvasprintf(fmt, ap);
	va_end(ap);
}

/* ---- opening ------------------------------------------------------------ */

static void tv_draw(struct ui *u, struct ui_overlay *o);
static int tv_key(struct ui *u, struct ui_overlay *o, int key, int fn);
static void tv_free(struct ui *u, struct ui_overlay *o);
static void tv_sum_draw(struct ui *u, struct ui_overlay *o);
static int tv_sum_key(struct ui *u, struct ui_overlay *o, int key, int fn);

/* A field as it is drawn: newlines as ↵, then the sanitizer. */
static char *tv_cell(const char *s, size_t n)
{
	struct buf b;
	buf_init(&b, 0);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n')
			continue;
		if (s[i] == '\n')
			buf_puts(&b, ui_ascii ? "\\n" : "\xe2\x86\xb5");
		else
			buf_append(&b, &s[i], 1);
	}
	char *clean = term_clean(b.data ? b.data : "", b.len, TERM_CLEAN_TABS);
	buf_free(&b);
	return clean;
}

/* Widen the columns to the cells of r (up to TV_COL_MAX). */
static void tv_widen(struct ui_tableview *v, const struct csv_rec *r)
{
	for (int c = 0; c < v->ncols && c < r->n; c++) {
		if (v->width[c] >= TV_COL_MAX)
			continue;
		char *t = tv_cell(csv_field(r, c), csv_field_len(r, c));
		int w = ui_st_width(t, strlen(t));
		free(t);
		if (w > v->width[c])
			v->width[c] = w < TV_COL_MAX ? w : TV_COL_MAX;
	}
}

/* The dialect, the header, the widths and which columns are numbers,
 * from the first TV_SAMPLE bytes. */
static void tv_sample(struct ui_tableview *v)
{
	size_t n = v->size < TV_SAMPLE ? (size_t)v->size : TV_SAMPLE;
	tv_window(v, 0, n);
	n = v->win_len < n ? v->win_len : n;
	csv_sniff(v->win, n, (int64_t)n >= v->size, &v->dia);
	v->ncols = v->dia.columns > 0 ? v->dia.columns : 1;
	v->names = xcalloc((size_t)v->ncols, sizeof *v->names);
	v->width = xcalloc((size_t)v->ncols, sizeof *v->width);
	v->numeric = xcalloc((size_t)v->ncols, sizeof *v->numeric);
	struct csv_rec r = {0};
	int64_t off = 0, next;
	if (v->dia.header && tv_rec(v, 0, &r, &next) == 0) {
		for (int c = 0; c < v->ncols; c++)
			v->names[c] =
			    tv_cell(csv_field(&r, c), csv_field_len(&r, c));
		off = next;
	} else {
		for (int c = 0; c < v->ncols; c++)
			v->names[c] = xasprintf("%d", c + 1);
	}
	v->data_start = off;
	for (int c = 0; c < v->ncols; c++)
		v->width[c] = ui_st_width(v->names[c], strlen(v->names[c]));
	int *text = xcalloc((size_t)v->ncols, sizeof *text);
	for (int k = 0; k < TV_SAMPLE_ROWS && off < (int64_t)n; k++) {
		if (tv_rec(v, off, &r, &next) < 0)
			break;
		off = next;
		tv_widen(v, &r);
		for (int c = 0; c < v->ncols && c < r.n; c++) {
			double x;
			const char *f = csv_field(&r, c);
			size_t fl = csv_field_len(&r, c);
			if (csv_missing(f, fl))
				continue;
			if (csv_number(f, fl, &x))
				v->numeric[c] = 1;
			else
				text[c] = 1;
		}
	}
	for (int c = 0; c < v->ncols; c++)
		v->numeric[c] = v->numeric[c] && !text[c];
	free(text);
	csv_rec_free(&r);
}

/* A table view over fd (owned) titled title (safe to draw), on top. */
static void tv_open_fd(struct ui *u, int fd, char *title)
{
	double t0 = tv_now_ms();
	struct ui_tableview *v = xcalloc(1, sizeof *v);
	v->ov = (struct ui_overlay){
	    .name = "table",
	    .layer = UI_LAYER_VIEW,
	    .flags = UI_OV_OPAQUE | UI_OV_COVERS_IMAGES,
	    .draw = tv_draw,
	    .key = tv_key,
	    .mouse = ui_overlay_mouse_eat,
	    .free = tv_free,
	};
	v->sov = (struct ui_overlay){
	    .name = "column summary",
	    .layer = UI_LAYER_DIALOG,
	    .flags = UI_OV_MODAL | UI_OV_COVERS_IMAGES,
	    .draw = tv_sum_draw,
	    .key = tv_sum_key,
	    .mouse = ui_overlay_mouse_eat,
	};
	v->u = u;
	v->fd = fd;
	v->title = title;
	struct stat st;
	v->size = fstat(fd, &st) == 0 ? st.st_size : 0;
	v->hit_off = -1;
	v->col0 = 1;
	buf_init(&v->prompt, 1024);
	tv_sample(v);
	v->top_off = v->data_start;
	v->scanned = v->data_start;
	csv_scan_init(&v->sc, v->dia.delim, v->data_start);
	v->chunk = xmalloc(TV_CHUNK);
	v->t0 = now_ms();
	v->timer = loop_timer_add(u->loop, 0, tv_index_tick, v);
	ui_overlay_push(u, &v->ov);
	ui_touch(u, UI_DIRTY_EVERYTHING);
	log_info("tui: table %s opened in %.1f ms (%lld bytes, delimiter "
	         "0x%02x, %d columns, header %d)",
	         v->title, tv_now_ms() - t0, (long long)v->size,
	         (unsigned char)v->dia.delim, v->ncols, v->dia.header);
}

void ui_table_open_file(struct ui *u, const char *rel)
{
	int fd = ui_open_workspace_file(u, rel);
	if (fd < 0)
		return;
	tv_open_fd(u, fd, term_clean(rel, strlen(rel), 0));
}

void ui_table_open_call(struct ui *u, int i)
{
	if (i < 0 || i >= u->m.ncalls || !u->m.calls[i]->is_exec) {
		ui_notice(u, "t: a command's output opens as a table");
		return;
	}
	struct ui_call *c = u->m.calls[i];
	char *path = ui_call_file(&u->m, c, 0);
	char *err = NULL;
	int fd = path ? open_regular(path, O_RDONLY | O_NOFOLLOW, 0, &err) : -1;
	free(path);
	if (fd < 0) {
		if (err && errno != ENOENT)
			ui_notice(u, "#%d: %s", i + 1, err);
		else
			ui_notice(u, "no output file for #%d (yet)", i + 1);
		free(err);
		return;
	}
	char *name = term_clean(c->name, strlen(c->name), 0);
	tv_open_fd(u, fd, xasprintf("#%d %s: stdout", i + 1, name));
	free(name);
}

int ui_table_is_table(const char *path)
{
	size_t n = strlen(path);
	return n > 4 && (!strcasecmp(path + n - 4, ".csv") ||
	                 !strcasecmp(path + n - 4, ".tsv"));
}

static void tv_order_free(struct ui_tableview *v)
{
	for (int64_t i = 0; i < v->norder; i++)
		free(v->order[i].s);
	free(v->order);
	v->order = NULL;
	v->norder = 0;
}

/* Off the stack: the view goes, its summary first. */
static void tv_free(struct ui *u, struct ui_overlay *o)
{
	struct ui_tableview *v = (struct ui_tableview *)o;
	ui_overlay_pop(u, &v->sov);
	if (v->timer)
		loop_timer_cancel(u->loop, v->timer);
	if (v->stimer)
		loop_timer_cancel(u->loop, v->stimer);
	for (int c = 0; c < v->ncols; c++)
		free(v->names[c]);
	free(v->names);
	free(v->width);
	free(v->numeric);
	free(v->win);
	free(v->ck);
	free(v->chunk);
	tv_order_free(v);
	free(v->needle);
	buf_free(&v->prompt);
	csv_sum_free(&v->sum);
	free(v->title);
	free(v->msg);
	close(v->fd);
	free(v);
	ui_touch(u, UI_DIRTY_EVERYTHING);
}

/* ---- moving -------------------------------------------------------------- */

/* The last rows on the screen: the top moves to the page-th last. */
static void tv_end(struct ui_tableview *v)
{
	int page = v->page > 0 ? v->page : 1;
	double t0 = tv_now_ms();
	if (v->order) {
		v->otop = v->norder > page ? v->norder - page : 0;
		return;
	}
	if (v->indexed) {
		v->top_row = v->rows > page ? v->rows - page : 0;
		v->top_off =
		    v->rows ? tv_row_off(v, v->top_row) : v->data_start;
	} else {
		int64_t *s = xmalloc((size_t)page * sizeof *s);
		int exact, n = tv_back(v, v->size, page, s, &exact);
		if (n > 0) {
			int k = n < page ? n : page;
			v->top_off = s[0];
			v->back = k;
			v->top_row = !exact ? -1 : n > page ? n - page : 0;
		}
		free(s);
	}
	log_info("tui: table %s: the last rows found in %.1f ms%s", v->title,
	         tv_now_ms() - t0, v->indexed ? " (indexed)" : "");
}

/* The top n rows on (or back), by the order, the index or parsing. */
static void tv_move(struct ui_tableview *v, int64_t n)
{
	if (v->order) {
		v->otop += n;
		if (v->otop > v->norder - 1)
			v->otop = v->norder - 1;
		if (v->otop < 0)
			v->otop = 0;
		return;
	}
	struct csv_rec r = {0};
	int64_t next;
	for (; n > 0; n--) {
		if (tv_rec(v, v->top_off, &r, &next) < 0 || next >= v->size)
			break;
		v->top_off = next;
		if (v->top_row >= 0)
			v->top_row++;
		else
			v->back--;
	}
	csv_rec_free(&r);
	if (n >= 0 || v->top_off <= v->data_start)
		return;
	if (v->top_row >= 0 && v->top_row < v->rows) { /* the index holds it */
		v->top_row = v->top_row + n > 0 ? v->top_row + n : 0;
		v->top_off = tv_row_off(v, v->top_row);
		return;
	}
	int want = (int)(-n < 100000 ? -n : 100000), exact;
	int64_t *s = xmalloc((size_t)want * sizeof *s);
	int got = tv_back(v, v->top_off, want, s, &exact);
	if (got > 0) {
		int k = got < want ? got : want;
		v->top_off = s[0];
		if (v->top_row >= 0)
			v->top_row -= k;
		else
			v->back += k;
		if (exact)
			v->top_row = got > want ? got - want : 0;
	}
	free(s);
}

/* The current column in view (the first one is always there). */
static void tv_show_cur(struct ui_tableview *v, int width)
{
	if (v->cur < 1)
		return;
	if (v->col0 > v->cur || v->col0 < 1)
		v->col0 = v->cur;
	for (;;) {
		int x = 0;
		for (int c = v->col0; c <= v->cur; c++)
			x += v->width[c] + 2;
		if (x <= width || v->col0 == v->cur)
			return;
		v->col0++;
	}
}

/* ---- sorting --------------------------------------------------------------
 */

/* s: by the current column, ascending, descending, then off. The
 * first TV_SORT_MAX rows when there are more (said so). */
static void tv_sort(struct ui_tableview *v)
{
	int dir = v->order && v->sort_col == v->cur ? -v->sort_dir : 1;
	if (v->order && v->sort_col == v->cur && v->sort_dir < 0)
		dir = 0;
	int64_t keep = v->order ? v->order[v->otop].off : v->top_off;
	tv_order_free(v);
	v->sort_dir = dir;
	if (!dir) {
		v->top_off = keep;
		v->top_row = tv_row_of(v, keep);
		tv_msg(v, "not sorted");
		return;
	}
	double t0 = tv_now_ms();
	struct csv_rec r = {0};
	int64_t off = v->data_start, next, cap = 0;
	v->sort_sample = 0;
	while (tv_rec(v, off, &r, &next) == 0) {
		if (v->norder == TV_SORT_MAX) {
			v->sort_sample = 1;
			break;
		}
		if (v->norder == cap) {
			cap = cap ? 2 * cap : 1024;
			v->order =
			    xrealloc(v->order, (size_t)cap * sizeof *v->order);
		}
		struct csv_key k = {.off = off, .row = v->norder};
		csv_key_set(&k, csv_field(&r, v->cur),
		            csv_field_len(&r, v->cur));
		v->order[v->norder++] = k;
		off = next;
	}
	csv_rec_free(&r);
	qsort(v->order, (size_t)v->norder, sizeof *v->order, csv_key_cmp);
	if (dir < 0)
		csv_keys_reverse(v->order, v->norder);
	v->sort_col = v->cur;
	v->otop = 0;
	if (!v->norder)
		tv_order_free(v);
	tv_msg(v, "sorted by %s, %s, in %.0f ms%s", v->names[v->cur],
	       dir > 0 ? "ascending" : "descending", tv_now_ms() - t0,
	       v->sort_sample ? " (a sample: the first 200000 rows)" : "");
}

/* ---- searching ------------------------------------------------------------
 */

/* The first field of r holding the needle, or -1. */
static int tv_match(const struct ui_tableview *v, const struct csv_rec *r)
{
	for (int c = 0; c < r->n && c < v->ncols; c++)
		if (strstr(csv_field(r, c), v->needle))
			return c;
	return -1;
}

/* The search found row (offset off, number row, or order index). */
static void tv_found(struct ui_tableview *v, int64_t off, int64_t row, int col)
{
	v->searching = 0;
	v->hit_off = off;
	v->hit_col = col;
	v->cur = col;
	if (v->order) {
		v->otop = row;
		row = v->order[row].row;
	} else {
		v->top_off = off;
		v->top_row = row >= 0 ? row : tv_row_of(v, off);
		v->back = -1;
		row = v->top_row;
	}
	if (row >= 0)
		tv_msg(v, "%s: found in row %lld", v->needle,
		       (long long)row + 1);
	else
		tv_msg(v, "%s: found", v->needle);
}

/* Backward through the index, a block of TV_CK rows at a time, at
 * most blocks of them; 1 if found. */
static int tv_search_back(struct ui_tableview *v, struct csv_rec *r, int blocks)
{
	int64_t best = -1, boff = 0, next;
	int bcol = 0;
	for (int64_t blk = (v->s_row - 1) / TV_CK;
	     blk >= 0 && best < 0 && blocks-- > 0; blk--) {
		int64_t off = v->ck[blk];
		for (int64_t row = blk * TV_CK; row < v->s_row; row++) {
			if (tv_rec(v, off, r, &next) < 0)
				break;
			int c = tv_match(v, r);
			if (c >= 0) {
				best = row;
				boff = off;
				bcol = c;
			}
			off = next;
		}
		v->s_row = blk * TV_CK;
	}
	if (best >= 0)
		tv_found(v, boff, best, bcol);
	return best >= 0;
}

/* One step of the search; the next from the loop until it ends. */
static void tv_search_tick(void *arg)
{
	struct ui_tableview *v = arg;
	struct csv_rec r = {0};
	int64_t next, budget = TV_SEARCH_STEP;
	v->stimer = 0;
	while (v->searching && budget > 0) {
		if (v->order) {
			int64_t i = v->s_row;
			if (i < 0 || i >= v->norder)
				break;
			int c = tv_rec(v, v->order[i].off, &r, &next) == 0
			            ? tv_match(v, &r)
			            : -1;
			if (c >= 0)
				tv_found(v, v->order[i].off, i, c);
			v->s_row += v->sdir;
			budget -= 512;
		} else if (v->sdir < 0) {
			if (v->s_row > 0 && !tv_search_back(v, &r, 1024) &&
			    v->s_row > 0)
				budget = 0; /* more in the next step */
			break;
		} else {
			if (tv_rec(v, v->s_off, &r, &next) < 0)
				break;
			int c = tv_match(v, &r);
			if (c >= 0)
				tv_found(v, v->s_off, v->s_row, c);
			budget -= next - v->s_off;
			v->s_off = next;
			if (v->s_row >= 0)
				v->s_row++;
		}
	}
	csv_rec_free(&r);
	if (v->searching && budget > 0) {
		v->searching = 0;
		tv_msg(v, "%s: no %s match", v->needle,
		       v->sdir > 0 ? "further" : "earlier");
	} else if (v->searching) {
		v->stimer = loop_timer_add(v->u->loop, 0, tv_search_tick, v);
	}
	ui_touch(v->u, UI_DIRTY_PAGER);
}

/* Search from the top row (fresh) or from the last match. */
static void tv_search(struct ui_tableview *v, int dir, int fresh)
{
	if (!v->needle || !*v->needle)
		return;
	struct csv_rec r = {0};
	int64_t next;
	int from_hit = !fresh && v->hit_off >= 0;
	if (v->order) {
		v->s_row = v->otop + (from_hit ? dir : 0);
	} else {
		v->s_off = v->top_off;
		v->s_row = v->top_row;
		if (from_hit && dir > 0 &&
		    tv_rec(v, v->s_off, &r, &next) == 0) {
			v->s_off = next;
			v->s_row += v->s_row >= 0;
		}
		if (dir < 0 && (v->s_row < 0 || v->s_row > v->rows)) {
			tv_msg(v, "backward search needs the rows counted: "
			          "wait a moment");
			csv_rec_free(&r);
			return;
		}
	}
	csv_rec_free(&r);
	v->sdir = dir;
	v->searching = 1;
	tv_msg(v, "searching...");
	if (!v->stimer)
		v->stimer = loop_timer_add(v->u->loop, 0, tv_search_tick, v);
}

/* ---- the column summary ----------------------------------------------------
 */

/* i: the current column summed up over its rows (a sample of the first
 * TV_SORT_MAX when there are more), shown over the table. */
static void tv_summary(struct ui_tableview *v)
{
	struct csv_rec r = {0};
	int64_t off = v->data_start, next, n = 0;
	csv_sum_free(&v->sum);
	csv_sum_init(&v->sum);
	v->sum_sample = 0;
	while (tv_rec(v, off, &r, &next) == 0) {
		if (n++ == TV_SORT_MAX) {
			v->sum_sample = 1;
			break;
		}
		csv_sum_add(&v->sum, csv_field(&r, v->cur),
		            csv_field_len(&r, v->cur));
		off = next;
	}
	csv_rec_free(&r);
	csv_sum_finish(&v->sum);
	v->sum_col = v->cur;
	ui_overlay_push(v->u, &v->sov);
}

/* The summary in a small dialog over the table. */
static void tv_sum_draw(struct ui *u, struct ui_overlay *o)
{
	struct ui_tableview *v =
	    (struct ui_tableview *)((char *)o -
	                            offsetof(struct ui_tableview, sov));
	struct ui_rows rows = {0};
	char *text = csv_sum_text(&v->sum);
	for (char *p = text, *nl; (nl = strchr(p, '\n')); p = nl + 1)
		ui_rows_push(&rows, tv_cell(p, (size_t)(nl - p)));
	free(text);
	if (v->sum_sample)
		ui_rows_push(&rows, xasprintf("(a sample: the first %d rows)",
		                              TV_SORT_MAX));
	char *title =
	    xasprintf("column %d: %s", v->sum_col + 1, v->names[v->sum_col]);
	WINDOW *w = ui_dialog_new(u, rows.n + 4, 52, title);
	free(title);
	for (int i = 0; i < rows.n; i++)
		ui_draw_text(w, i + 1, 2, 48, rows.row[i], UE_OVERLAY);
	ui_draw_text(w, rows.n + 2, 2, 48, "any key closes this", UE_DIM);
	ui_rows_free(&rows);
	struct ui_cursor none;
	ui_dialog_done(w, &none, 0, 0, 0);
}

/* Any key closes the summary. */
static int tv_sum_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	(void)key;
	(void)fn;
	ui_overlay_pop(u, o);
	return 1;
}

/* ---- drawing ----------------------------------------------------------------
 */

/* The rows: counted, or estimated from the part indexed so far. */
static int64_t tv_rows_est(const struct ui_tableview *v)
{
	int64_t done = v->scanned - v->data_start;
	if (v->indexed || done <= 0)
		return v->rows;
	return (int64_t)((double)v->rows * (double)(v->size - v->data_start) /
	                 (double)done);
}

/* The rows x columns, the size, the bad rows and what is under way. */
static char *tv_status(struct ui_tableview *v)
{
	char sz[16], rows[64], bad[48] = "", sort[160] = "";
	ui_fmt_size(sz, sizeof sz, (double)v->size);
	if (v->indexed) {
		snprintf(rows, sizeof rows, "%lld rows", (long long)v->rows);
	} else {
		snprintf(rows, sizeof rows, "~%lld rows (counting %d%%)",
		         (long long)tv_rows_est(v),
		         (int)(v->scanned * 100 / (v->size ? v->size : 1)));
	}
	if (v->bad)
		snprintf(bad, sizeof bad, "  %lld bad row%s%s",
		         (long long)v->bad, v->bad == 1 ? "" : "s",
		         v->indexed ? "" : " so far");
	if (v->order)
		snprintf(sort, sizeof sort, "  sorted by %s %s%s",
		         v->names[v->sort_col],
		         v->sort_dir > 0 ? "asc" : "desc",
		         v->sort_sample ? " (sample: first 200000 rows)" : "");
	return xasprintf(" %s  %s x %d cols  %s%s%s", v->title, rows, v->ncols,
	                 sz, bad, sort);
}

/* One cell at x, w cells wide: numbers right aligned. */
static void tv_draw_cell(WINDOW *win, int y, int x, int w, int maxx,
                         const char *text, int right, enum ui_elem e)
{
	if (x >= maxx)
		return;
	int avail = maxx - x < w ? maxx - x : w;
	char *fit = ui_st_fit(text, strlen(text), w);
	int tw = ui_st_width(fit, strlen(fit));
	ui_fill(win, y, x, avail, e);
	int at = right && tw < w ? x + w - tw : x;
	if (at < maxx)
		ui_draw_st(win, y, at, maxx - at, fit, strlen(fit), e);
	free(fit);
}

/* The gutter's text for the i-th row on the screen: its number, or
 * how far before the end it is when only that is known yet. */
static void tv_gutter(struct ui_tableview *v, int i, char *out, size_t n)
{
	if (v->order)
		snprintf(out, n, "%lld",
		         (long long)v->order[v->otop + i].row + 1);
	else if (v->top_row >= 0)
		snprintf(out, n, "%lld", (long long)(v->top_row + i + 1));
	else if (v->back - i - 1 > 0)
		snprintf(out, n, "end-%lld", (long long)(v->back - i - 1));
	else if (v->back - i - 1 == 0)
		snprintf(out, n, "end");
	else
		snprintf(out, n, "?");
}

/* One line: the gutter, the pinned first column, then from col0. */
static void tv_draw_line(struct ui_tableview *v, WINDOW *w, int y, int wd,
                         int gw, const char *gut, char **cells, int bad,
                         int hit_col, int header)
{
	enum ui_elem base = header ? UE_HEADING : bad ? UE_WARNING : UE_NORMAL;
	ui_fill(w, y, 0, wd, base);
	char g[40];
	snprintf(g, sizeof g, "%*s%s", gw - 2, gut, bad ? "!" : " ");
	ui_draw_text(w, y, 0, gw, g, bad ? UE_ERROR : UE_DIM);
	int x = gw;
	for (int c = 0; c < v->ncols && x < wd; c = c ? c + 1 : v->col0) {
		enum ui_elem e = c == hit_col            ? UE_MATCH
		                 : header && c == v->cur ? UE_SELECTION
		                                         : base;
		int right = !header && v->numeric[c];
		double d;
		if (right && !csv_number(cells[c], strlen(cells[c]), &d))
			right = 0;
		tv_draw_cell(w, y, x, v->width[c], wd, cells[c], right, e);
		x += v->width[c];
		if (x < wd)
			ui_draw_text(w, y, x, wd - x,
			             c ? "  " : " \xe2\x94\x82 ", UE_DIM);
		x += c ? 2 : 3;
	}
}

/* The offsets of the rows on the screen, up to max; how many. */
static int tv_screen_rows(struct ui_tableview *v, int64_t *off, int max)
{
	int n = 0;
	if (v->order) {
		for (; n < max && v->otop + n < v->norder; n++)
			off[n] = v->order[v->otop + n].off;
		return n;
	}
	struct csv_rec r = {0};
	int64_t at = v->top_off, next;
	while (n < max && tv_rec(v, at, &r, &next) == 0) {
		off[n++] = at;
		at = next;
	}
	csv_rec_free(&r);
	return n;
}

/* The table's rows, each its cells (widths widened first). */
static void tv_draw_rows(struct ui_tableview *v, WINDOW *w, int rows, int wd,
                         int gw)
{
	int64_t *off = xmalloc((size_t)(rows > 0 ? rows : 1) * sizeof *off);
	int n = tv_screen_rows(v, off, rows);
	int at_head = v->order ? v->otop == 0 : v->top_off <= v->data_start;
	if (n < rows && !at_head) { /* a short last page: fill the screen */
		tv_end(v);
		n = tv_screen_rows(v, off, rows);
	}
	struct csv_rec *rec = xcalloc((size_t)(n ? n : 1), sizeof *rec);
	int64_t next;
	for (int i = 0; i < n; i++) {
		tv_rec(v, off[i], &rec[i], &next);
		tv_widen(v, &rec[i]);
	}
	char **cells = xcalloc((size_t)v->ncols, sizeof *cells);
	for (int i = 0; i < n; i++) {
		for (int c = 0; c < v->ncols; c++)
			cells[c] = tv_cell(csv_field(&rec[i], c),
			                   csv_field_len(&rec[i], c));
		char gut[32];
		tv_gutter(v, i, gut, sizeof gut);
		tv_draw_line(v, w, 2 + i, wd, gw, gut, cells,
		             tv_rec_bad(v, &rec[i]),
		             off[i] == v->hit_off ? v->hit_col : -1, 0);
		for (int c = 0; c < v->ncols; c++)
			free(cells[c]);
		csv_rec_free(&rec[i]);
	}
	free(cells);
	free(rec);
	free(off);
	v->last = n < rows;
	if (!n)
		ui_draw_text(w, 2, gw, wd - gw, "(no rows)", UE_DIM);
}

static const char tv_hints[] =
    " arrows/hjkl cell  PgUp/PgDn  g/G top/end  0/$ first/last col  / n N "
    "search  s sort  i summary  Esc back";

/* The table over the whole screen but the status bar. */
static void tv_draw(struct ui *u, struct ui_overlay *o)
{
	struct ui_tableview *v = (struct ui_tableview *)o;
	WINDOW *w = newwin(u->lay.rows - 1, u->lay.cols, 0, 0);
	int h, wd;
	leaveok(w, TRUE);
	getmaxyx(w, h, wd);
	ui_background(w);
	werase(w);
	v->page = h - 3 > 1 ? h - 3 : 1;
	int64_t most = tv_rows_est(v) * 2 + 1;
	int gw = snprintf(NULL, 0, "%lld", (long long)most) + 2;
	gw = gw < 7 ? 7 : gw;
	if (!v->order && !v->indexed && v->top_row < 0)
		gw = gw < 12 ? 12 : gw;
	tv_show_cur(v, wd - gw - v->width[0] - 3);
	char *head = tv_status(v);
	ui_fill(w, 0, 0, wd, UE_STATUS);
	ui_draw_text(w, 0, 0, wd, head, UE_STATUS);
	free(head);
	tv_draw_rows(v, w, v->page, wd, gw);
	tv_draw_line(v, w, 1, wd, gw, "#", v->names, 0, -1, 1);
	ui_fill(w, h - 1, 0, wd, UE_STATUS);
	if (v->prompting) {
		char *shown = term_clean(buf_str(&v->prompt), v->prompt.len, 0);
		char *line = xasprintf("/%s", shown);
		ui_draw_text(w, h - 1, 0, wd, line, UE_STATUS);
		free(line);
		free(shown);
	} else if (v->msg) {
		char *shown = term_clean(v->msg, strlen(v->msg), 0);
		ui_draw_text(w, h - 1, 0, wd, shown, UE_WARNING);
		free(shown);
	} else {
		ui_draw_text(w, h - 1, 0, wd, tv_hints, UE_STATUS);
	}
	wnoutrefresh(w);
	delwin(w);
}

/* ---- keys -----------------------------------------------------------------
 */

/* A key in the / prompt; Enter searches. */
static int tv_prompt_key(struct ui_tableview *v, int key, int fn)
{
	if (ui_key_enter(key, fn)) {
		v->prompting = 0;
		if (v->prompt.len) {
			free(v->needle);
			v->needle = xstrdup(buf_str(&v->prompt));
			v->hit_off = -1;
			tv_search(v, 1, 1);
		}
	} else if (!fn && key == UI_KEY_ESC) {
		v->prompting = 0;
	} else if (ui_key_backspace(key, fn)) {
		size_t n = v->prompt.len;
		while (n > 0 &&
		       ((unsigned char)v->prompt.data[--n] & 0xC0) == 0x80)
			;
		v->prompt.len = n;
		if (v->prompt.data)
			v->prompt.data[n] = '\0';
	} else if (ui_key_text(key, fn)) {
		char u8[4];
		buf_append(&v->prompt, u8, ui_u8_encode((uint32_t)key, u8));
	}
	ui_touch(v->u, UI_DIRTY_PAGER);
	return 1;
}

/* Curses' names for keys to the letters they mean here. */
static int tv_key_map(int key)
{
	static const int map[][2] = {
	    {KEY_DOWN, 'j'},  {KEY_UP, 'k'},    {KEY_LEFT, 'h'},
	    {KEY_RIGHT, 'l'}, {KEY_NPAGE, ' '}, {KEY_PPAGE, 'b'},
	    {KEY_HOME, 'g'},  {KEY_END, 'G'},
	};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (map[i][0] == key)
			return map[i][1];
	return 0;
}

/* Moving keys: 1 if key was one. */
static int tv_move_key(struct ui_tableview *v, int key)
{
	switch (key) {
	case 'j':
		tv_move(v, 1);
		break;
	case 'k':
		tv_move(v, -1);
		break;
	case ' ':
	case UI_KEY_CTRL_F:
		tv_move(v, v->page > 1 ? v->page - 1 : 1);
		break;
	case 'b':
	case UI_KEY_CTRL_B:
		tv_move(v, -(v->page > 1 ? v->page - 1 : 1));
		break;
	case 'g':
		v->otop = 0;
		v->top_off = v->data_start;
		v->top_row = 0;
		break;
	case 'G':
		tv_end(v);
		break;
	case 'h':
		v->cur = v->cur > 0 ? v->cur - 1 : 0;
		break;
	case 'l':
		v->cur = v->cur + 1 < v->ncols ? v->cur + 1 : v->cur;
		break;
	case '0':
		v->cur = 0;
		v->col0 = 1;
		break;
	case '$':
		v->cur = v->ncols - 1;
		break;
	default:
		return 0;
	}
	return 1;
}

/* Every key while the table is open; what it does not know is eaten. */
static int tv_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	struct ui_tableview *v = (struct ui_tableview *)o;
	if (v->prompting)
		return tv_prompt_key(v, key, fn);
	if (fn && !(key = tv_key_map(key)))
		return 1;
	tv_msg(v, NULL);
	if (tv_move_key(v, key)) {
		/* a short last page: the last rows fill the screen */
		ui_touch(u, UI_DIRTY_PAGER);
		return 1;
	}
	switch (key) {
	case UI_KEY_ESC:
	case 'q':
		ui_overlay_pop(u, o); /* v is gone */
		return 1;
	case '/':
		v->prompting = 1;
		buf_reset(&v->prompt);
		break;
	case 'n':
		tv_search(v, v->sdir ? v->sdir : 1, 0);
		break;
	case 'N':
		tv_search(v, v->sdir ? -v->sdir : -1, 0);
		break;
	case 's':
		tv_sort(v);
		break;
	case 'i':
		tv_summary(v);
		break;
	default:
		return 1;
	}
	ui_touch(u, UI_DIRTY_PAGER);
	return 1;
}
