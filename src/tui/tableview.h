/* tableview.h: what the table view's files share (tableview.c draws
 * and takes keys, tableview_rows.c reads rows and builds the index):
 * the view's state and the row reading. Private to src/tui. */
#ifndef ASSAY_TUI_TABLEVIEW_H
#define ASSAY_TUI_TABLEVIEW_H

#include "tui/csv.h"
#include "tui/ui.h"

#include <stdint.h>
#include <sys/types.h>

#define TV_CK 64           /* rows between two index entries */
#define TV_CHUNK (1 << 20) /* bytes of one read while indexing */

struct ui_tableview {
	struct ui_overlay ov;  /* first: the overlay is the view */
	struct ui_overlay sov; /* the column summary over it */
	struct ui *u;
	int fd;
	int64_t size;
	char *title;
	struct csv_dialect dia;
	int ncols;
	char **names; /* safe to draw */
	int *width, *numeric;
	int64_t data_start; /* the first row after the header */

	/* the bytes last read, around the rows shown */
	char *win;
	int64_t win_at;
	size_t win_len;

	/* the index: ck[k] is where row k * TV_CK starts */
	int64_t *ck;
	size_t nck, ckcap;
	int64_t rows, bad, scanned;
	int indexed;
	struct csv_scan sc;
	char *chunk;
	uint64_t timer;
	int64_t t0;

	/* the top row: its offset and number (-1: found from the end,
	 * back rows before the end then) */
	int64_t top_off, top_row, back;
	int col0, cur;  /* first scrolled column shown, current column */
	int page, last; /* rows the screen showed, and whether it ended */

	struct csv_key *order; /* sorted: the rows in order, else NULL */
	int64_t norder, otop;
	int sort_col, sort_dir, sort_sample;

	char *needle;
	int prompting, searching, sdir;
	struct buf prompt;
	int64_t s_off, s_row; /* where the search goes on */
	int64_t hit_off;
	int hit_col;
	uint64_t stimer;

	struct csv_summary sum;
	int sum_col, sum_sample;
	char *msg;
};

/* The window holds [off, off + want) or [off, size). */
void tv_window(struct ui_tableview *v, int64_t off, size_t want);
/* The row at off (empty lines skipped): r, and where the next starts;
 * -1 past the last row. A record over TV_REC_MAX is cut there. */
int tv_rec(struct ui_tableview *v, int64_t off, struct csv_rec *r,
           int64_t *next);
/* A ragged row, or one whose quote never closes. */
int tv_rec_bad(const struct ui_tableview *v, const struct csv_rec *r);
/* Where row `row` starts, through the index (it must hold it). */
int64_t tv_row_off(struct ui_tableview *v, int64_t row);
/* The number of the row at off, through the index; -1 if it cannot. */
int64_t tv_row_of(struct ui_tableview *v, int64_t off);
/* The starts of up to want rows before end without the index; *exact:
 * the rows before these are known. Returns how many rows. */
int tv_back(struct ui_tableview *v, int64_t end, int want, int64_t *out,
            int *exact);
/* One step of indexing (arg: the view); the next from the loop until
 * the file is indexed. */
void tv_index_tick(void *arg);

#endif
