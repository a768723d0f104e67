/* workspace.h: the Workspace pane (workspace.c): its cursor, the host
 * workspace's fd and watch, and the listing in flight. workspace.c
 * alone writes them; ui.c calls it when a run starts or ends and on a
 * workspace_change event, keys.c with the pane's keys and clicks. */
#ifndef ASSAY_TUI_WORKSPACE_H
#define ASSAY_TUI_WORKSPACE_H

#include <stdint.h>

struct ui;
struct ui_watch;
struct ui_scan;

/* part: ws, owner: src/tui/workspace.c */
struct ui_ws {
	int cur, top;   /* the cursor's row and the first row shown */
	char *cur_path; /* the node under the cursor: it stays on it */
	int fd;         /* the host workspace, for the pager; -1 */
	struct ui_watch *watch;
	struct ui_scan *scan; /* the listing in flight; NULL */
	int64_t scan_t0;      /* a listing is on its way since then; else 0 */
	int scan_again;       /* the watch asked for one meanwhile */
	/* workspace_change events seen, and when the listing began: a
	 * listing older than an event is not shown */
	unsigned events, scan_events;
	uint64_t first_scan_timer;
};

void ui_ws_init(struct ui_ws *w);
/* All it holds (the listing in flight answers no one). */
void ui_ws_free(struct ui *u);
/* run_start (and run_resume): watch the run's workspace when it is on
 * this host; run_end (or the session gone): stop watching. */
void ui_ws_run_start(struct ui *u);
void ui_ws_run_end(struct ui *u);
/* A workspace_change event came. */
void ui_ws_changed(struct ui *u);
void ui_draw_tree(struct ui *u);
/* The pane's keys; the wheel (rows: down); a click on a row of it. */
void ui_ws_key(struct ui *u, int key, int fn);
void ui_ws_wheel(struct ui *u, int rows);
void ui_ws_click(struct ui *u, int row);

#endif
