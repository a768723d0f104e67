/* tableview_rows.c: the table view's rows read by byte offset (a window
 * of the file around the rows shown, one row parsed at an offset, rows
 * found back from an offset) and the index of row starts built in steps. */
#include "tui/tableview.h"

#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define TV_WINDOW (256 << 10)   /* bytes read around the rows shown */
#define TV_REC_MAX (4 << 20)    /* a longer record is cut there */
#define TV_INDEX_STEP (8 << 20) /* bytes indexed per step of the loop */
#define TV_BACK_MAX (16 << 20)  /* how far back rows are looked for */

/* ---- reading rows ----------------------------------------------------- */

static ssize_t tv_pread(int fd, char *buf, size_t n, int64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* The window holds [off, off + want) or [off, size). */
void tv_window(struct ui_tableview *v, int64_t off, size_t want)
{
	int64_t end =
	    off + (int64_t)want < v->size ? off + (int64_t)want : v->size;
	if (off >= v->win_at && end <= v->win_at + (int64_t)v->win_len)
		return;
	size_t n =
	    (size_t)(end - off) > TV_WINDOW ? (size_t)(end - off) : TV_WINDOW;
	free(v->win);
	v->win = xmalloc(n);
	ssize_t r = tv_pread(v->fd, v->win, n, off);
	v->win_at = off;
	v->win_len = r > 0 ? (size_t)r : 0;
}

/* The row at off (empty lines skipped): r, and where the next starts;
 * -1 past the last row. A record over TV_REC_MAX is cut there. */
int tv_rec(struct ui_tableview *v, int64_t off, struct csv_rec *r,
           int64_t *next)
{
	size_t want = 64 << 10;
	while (off < v->size) {
		tv_window(v, off, want);
		const char *p = v->win + (off - v->win_at);
		size_t avail = (size_t)(v->win_at + (int64_t)v->win_len - off);
		int eof = v->win_at + (int64_t)v->win_len >= v->size;
		if (!avail)
			return -1;
		size_t used = csv_parse(p, avail, v->dia.delim, eof, r);
		if (!used && want >= TV_REC_MAX) {
			used = csv_parse(p, avail, v->dia.delim, 1, r);
			r->flags |= CSV_REC_CUT;
		}
		if (!used) {
			want *= 2;
			continue;
		}
		off += (int64_t)used;
		want = 64 << 10;
		if (r->blank)
			continue;
		*next = off;
		return 0;
	}
	return -1;
}

/* A ragged row, or one whose quote never closes. */
int tv_rec_bad(const struct ui_tableview *v, const struct csv_rec *r)
{
	return r->nfields != v->ncols || (r->flags & CSV_REC_UNTERMINATED);
}

/* Where row `row` starts, through the index (it must hold it). */
int64_t tv_row_off(struct ui_tableview *v, int64_t row)
{
	struct csv_rec r = {0};
	int64_t off = v->ck[row / TV_CK], next;
	for (int64_t k = row / TV_CK * TV_CK; k < row; k++) {
		if (tv_rec(v, off, &r, &next) < 0)
			break;
		off = next;
	}
	csv_rec_free(&r);
	return off;
}

/* The number of the row at off, through the index; -1 if it cannot. */
int64_t tv_row_of(struct ui_tableview *v, int64_t off)
{
	if (!v->nck || off < v->ck[0])
		return -1;
	size_t lo = 0, hi = v->nck;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (v->ck[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	struct csv_rec r = {0};
	int64_t at = v->ck[lo], row = (int64_t)lo * TV_CK, next;
	while (at < off && tv_rec(v, at, &r, &next) == 0) {
		at = next;
		row++;
	}
	csv_rec_free(&r);
	return at == off ? row : -1;
}

/* The starts of up to want rows before end (a row's start or the
 * file's end) without the index (csv_tail), from a window before end
 * that grows until it holds them; *exact: the window reached the first
 * row, so the rows before these are known. Returns how many rows. */
int tv_back(struct ui_tableview *v, int64_t end, int want, int64_t *out,
            int *exact)
{
	for (int64_t span = TV_WINDOW;; span *= 4) {
		int64_t ws =
		    end - span > v->data_start ? end - span : v->data_start;
		*exact = ws == v->data_start;
		tv_window(v, ws, (size_t)(end - ws));
		int n = csv_tail(v->win + (ws - v->win_at), (size_t)(end - ws),
		                 *exact, v->dia.delim, v->ncols, out, want);
		for (int i = 0; i < n && i < want; i++)
			out[i] += ws;
		if (*exact || n >= want || span >= TV_BACK_MAX)
			return n;
	}
}

/* ---- the index, in steps ---------------------------------------------- */

static void tv_index_rec(void *arg, int64_t start, int64_t end, int fields,
                         int unterminated)
{
	struct ui_tableview *v = arg;
	(void)end;
	if (v->rows % TV_CK == 0) {
		if (v->nck == v->ckcap) {
			v->ckcap = v->ckcap ? 2 * v->ckcap : 1024;
			v->ck = xrealloc(v->ck, v->ckcap * sizeof *v->ck);
		}
		v->ck[v->nck++] = start;
	}
	v->rows++;
	v->bad += fields != v->ncols || unterminated;
}

/* The index is complete: what was found from the end gets its number. */
static void tv_index_done(struct ui_tableview *v)
{
	v->indexed = 1;
	free(v->chunk);
	v->chunk = NULL;
	log_info("tui: table %s indexed: %lld rows, %lld bad, in %lld ms",
	         v->title, (long long)v->rows, (long long)v->bad,
	         (long long)(now_ms() - v->t0));
	if (v->top_row < 0)
		v->top_row = tv_row_of(v, v->top_off);
}

void tv_index_tick(void *arg)
{
	struct ui_tableview *v = arg;
	v->timer = 0;
	int64_t budget = TV_INDEX_STEP;
	while (budget > 0 && v->scanned < v->size) {
		size_t want = v->size - v->scanned < TV_CHUNK
		                  ? (size_t)(v->size - v->scanned)
		                  : TV_CHUNK;
		ssize_t r = tv_pread(v->fd, v->chunk, want, v->scanned);
		if (r <= 0) {
			v->size = v->scanned; /* cut short under us */
			break;
		}
		csv_scan_feed(&v->sc, v->chunk, (size_t)r, v->scanned,
		              tv_index_rec, v);
		v->scanned += r;
		budget -= r;
	}
	if (v->scanned >= v->size) {
		csv_scan_end(&v->sc, v->size, tv_index_rec, v);
		tv_index_done(v);
	} else {
		v->timer = loop_timer_add(v->u->loop, 0, tv_index_tick, v);
	}
	ui_touch(v->u, UI_DIRTY_PAGER);
}
