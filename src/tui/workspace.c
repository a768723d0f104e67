/* workspace.c: the Workspace pane: the sandbox's listing of the
 * workspace (again when the watch sees changes, one at a time), the
 * tree drawn with a cursor that stays on its node, and the pane's keys
 * and clicks. The one writer of struct ui_ws (workspace.h). */
#include "tui/ui.h"
#include "assay/termtext.h"

#include "assay/log.h"
#include "assay/loop.h"
#include "assay/sandbox.h"
#include "assay/session.h"
#include "assay/util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the listing --------------------------------------------------------- */

static void ws_rescan(void *arg);

/* A listing in flight: the view it is for (NULL once that is gone: a
 * view closes while its session goes on). */
struct ui_scan {
	struct ui *u;
};

/* The sandbox's listing of the workspace: the tree takes it, and the
 * watch learns its directories and how long it took. */
static void ws_on_listing(void *arg, int rc, const char *err, struct buf *data,
                          cJSON *list)
{
	struct ui_scan *sc = arg;
	struct ui *u = sc->u;
	(void)data;
	free(sc);
	if (!u)
		return;
	u->ws.scan = NULL;
	int64_t ms = now_ms() - u->ws.scan_t0;
	u->ws.scan_t0 = 0;
	ui_watch_scanned(u->ws.watch, ms);
	if (rc == SBX_FAILED) {
		log_warn("tui: workspace listing: %s", err ? err : "failed");
	} else if (u->ws.events != u->ws.scan_events) {
		/* the session told of changes meanwhile: this listing may
		 * be older than they are */
		u->ws.scan_again = u->m.phase != UI_ENDED;
	} else {
		ui_tree_sync(&u->m.tree, list, rc == SBX_TRUNCATED);
		ui_watch_dirs(u->ws.watch, list);
		ui_touch(u, UI_DIRTY_TREE);
	}
	if (u->ws.scan_again) { /* changes came while it was listed */
		u->ws.scan_again = 0;
		ws_rescan(u);
	}
}

/* The watch saw changes: list the workspace again (one listing at a
 * time; one asked for meanwhile follows it). */
static void ws_rescan(void *arg)
{
	struct ui *u = arg;
	struct sbx *sbx = u->s ? session_sandbox(u->s) : NULL;
	if (!sbx || u->m.phase == UI_ENDED)
		return;
	if (u->ws.scan_t0) {
		u->ws.scan_again = 1;
		return;
	}
	u->ws.scan_t0 = now_ms();
	u->ws.scan_events = u->ws.events;
	u->ws.scan = xcalloc(1, sizeof *u->ws.scan);
	u->ws.scan->u = u;
	sbx_list(sbx, ".", 1, UI_TREE_MAX, ws_on_listing, u->ws.scan);
}

/* The first listing, once the loop runs. */
static void ws_first_scan(void *arg)
{
	struct ui *u = arg;
	u->ws.first_scan_timer = 0;
	ws_rescan(u);
}

/* The workspace is a host directory the workbench may read and watch. */
static int ws_on_host(struct ui *u)
{
	struct sbx *sbx = u->s ? session_sandbox(u->s) : NULL;
	unsigned caps = sbx ? sbx_caps(sbx) : sbx_backend_caps(u->m.backend);
	return u->m.workspace && (caps & SBX_CAP_HOST_WORKSPACE);
}

/* run_start (and run_resume): watch the run's workspace when it is on
 * this host. */
void ui_ws_run_start(struct ui *u)
{
	/* a resumed run starts again: its own workspace replaces the
	 * recorded one */
	ui_watch_free(u->ws.watch);
	u->ws.watch = NULL;
	if (u->ws.fd >= 0)
		close(u->ws.fd);
	u->ws.fd = -1;
	if (!ws_on_host(u))
		return;
	u->ws.fd = open(u->m.workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (u->s)
		u->ws.watch =
		    ui_watch_new(u->loop, u->m.workspace, ws_rescan, u);
	if (u->ws.watch && !u->ws.first_scan_timer)
		u->ws.first_scan_timer =
		    loop_timer_add(u->loop, 0, ws_first_scan, u);
}

/* run_end: the workspace no longer changes. */
void ui_ws_run_end(struct ui *u)
{
	ui_watch_free(u->ws.watch);
	u->ws.watch = NULL;
}

/* A workspace_change event: a listing begun before it is stale. */
void ui_ws_changed(struct ui *u)
{
	u->ws.events++;
}

void ui_ws_init(struct ui_ws *w)
{
	w->fd = -1;
}

void ui_ws_free(struct ui *u)
{
	if (u->ws.first_scan_timer)
		loop_timer_cancel(u->loop, u->ws.first_scan_timer);
	u->ws.first_scan_timer = 0;
	if (u->ws.scan) /* its answer comes to no one */
		u->ws.scan->u = NULL;
	u->ws.scan = NULL;
	ui_watch_free(u->ws.watch);
	u->ws.watch = NULL;
	if (u->ws.fd >= 0)
		close(u->ws.fd);
	u->ws.fd = -1;
	free(u->ws.cur_path);
	u->ws.cur_path = NULL;
}

/* ---- the pane ------------------------------------------------------------ */

void ui_draw_tree(struct ui *u)
{
	struct ui_geom *g = &u->lay.g[P_TREE];
	WINDOW *w = g->win;
	int inner = g->w - 2, ch = g->h - 2;
	struct ui_tree *t = &u->m.tree;
	ui_background(w);
	werase(w);
	ui_pane_box(u, P_TREE);
	ui_tree_visible(t);
	if (!t->nvis) {
		ui_draw_text(w, 1, 2, inner - 2,
		             u->m.workspace ? "(empty)" : "(no workspace yet)",
		             UE_DIM);
		return;
	}
	/* keep the cursor on the same node when rows move */
	if (u->ws.cur_path) {
		for (size_t i = 0; i < t->nvis; i++)
			if (!strcmp(t->vis[i]->path, u->ws.cur_path)) {
				u->ws.cur = (int)i;
				break;
			}
	}
	if (u->ws.cur >= (int)t->nvis)
		u->ws.cur = (int)t->nvis - 1;
	if (u->ws.cur < 0)
		u->ws.cur = 0;
	free(u->ws.cur_path);
	u->ws.cur_path = xstrdup(t->vis[u->ws.cur]->path);
	int rows = ch - (t->truncated ? 1 : 0);
	if (u->ws.cur < u->ws.top)
		u->ws.top = u->ws.cur;
	if (u->ws.cur >= u->ws.top + rows)
		u->ws.top = u->ws.cur - rows + 1;
	if (u->ws.top < 0)
		u->ws.top = 0;
	for (int r = 0; r < rows; r++) {
		size_t i = (size_t)(u->ws.top + r);
		if (i >= t->nvis)
			break;
		struct ui_node *n = t->vis[i];
		int y = 1 + r, x = 1;
		int cur = (int)i == u->ws.cur && u->lay.focus == P_TREE;
		enum ui_elem base = cur ? UE_SELECTION : UE_NORMAL;
		if (cur)
			ui_fill(w, y, 1, inner, UE_SELECTION);
		int indent = t->depth[i] * 2;
		if (indent > inner / 3)
			indent = inner / 3;
		x += indent;
		const char *gl = n->type == UI_N_DIR
		                     ? ui_glyph(n->expanded ? G_OPEN : G_CLOSED)
		                     : " ";
		x += ui_draw_text(w, y, x, 2, gl, cur ? UE_SELECTION : UE_DIM);
		/* the right side: size and mark */
		char right[48] = "";
		if (n->type == UI_N_FILE)
			ui_fmt_size(right, sizeof right, n->size);
		const char *mark = n->mark == UI_MARK_NEW   ? " new"
		                   : n->mark == UI_MARK_MOD ? " mod"
		                                            : "";
		int rw = (int)strlen(right) + (int)strlen(mark);
		if (inner - x < rw + 6)
			rw = 0; /* no room: the name matters more */
		char *name = term_clean(n->name, strlen(n->name), 0);
		struct buf b;
		buf_init(&b, 0);
		buf_puts(&b, name);
		if (n->type == UI_N_DIR)
			buf_puts(&b, "/");
		else if (n->type == UI_N_LINK)
			buf_puts(&b, "@");
		enum ui_elem ne = n->type == UI_N_DIR    ? UE_TREE_DIR
		                  : n->type == UI_N_LINK ? UE_TREE_LINK
		                                         : UE_TREE_FILE;
		int nw = inner - x - rw - 1;
		char *fit = ui_st_fit(b.data, b.len, nw);
		ui_draw_st(w, y, x + 1, nw, fit, strlen(fit),
		           cur ? UE_SELECTION : ne);
		free(fit);
		buf_free(&b);
		free(name);
		if (rw) {
			int rx = 1 + inner - rw;
			rx += ui_draw_text(w, y, rx, rw, right,
			                   cur ? base : UE_TREE_SIZE);
			ui_draw_text(w, y, rx, rw, mark,
			             n->mark == UI_MARK_NEW ? UE_TREE_NEW
			                                    : UE_TREE_MODIFIED);
		}
	}
	if (t->truncated)
		ui_draw_text(w, ch, 2, inner - 2, "(listing cut at its limit)",
		             UE_WARNING);
}

/* ---- keys and the mouse -------------------------------------------------- */

/* Workspace: Enter, l, o or Right on a node: a directory opens or
 * closes, a file opens in the pager (an image in the preview, a .csv
 * or .tsv in the table view); t opens any file as a table. */
static void ws_key_open(struct ui *u, struct ui_node *n, int key, int fn)
{
	int enter = !fn && (key == UI_KEY_ENTER || key == 'o');
	if (n->type == UI_N_DIR) {
		ui_tree_expand(&u->m.tree, n, enter ? !n->expanded : 1);
	} else if (n->type == UI_N_FILE && !fn && key == 't') {
		ui_table_open_file(u, n->path);
	} else if (n->type == UI_N_FILE && enter) {
		if (ui_preview_is_image(n->path))
			ui_preview_open(u, n->path, 0);
		else if (ui_table_is_table(n->path))
			ui_table_open_file(u, n->path);
		else
			ui_pager_open_file(u, n->path);
	}
}

/* Workspace: h or Left closes a directory, else goes to its parent. */
static void ws_key_close(struct ui *u, struct ui_node *n)
{
	if (n->type == UI_N_DIR && n->expanded) {
		ui_tree_expand(&u->m.tree, n, 0);
	} else if (n->parent && n->parent->parent) {
		free(u->ws.cur_path);
		u->ws.cur_path = xstrdup(n->parent->path);
	}
}

/* How far a key moves the Workspace's cursor (0: it does not). */
static int ws_key_move(struct ui *u, int key, int fn, int nvis)
{
	int page = u->lay.g[P_TREE].h - 3;
	if ((fn && key == KEY_DOWN) || (!fn && key == 'j'))
		return 1;
	if ((fn && key == KEY_UP) || (!fn && key == 'k'))
		return -1;
	if (fn && key == KEY_NPAGE)
		return page;
	if (fn && key == KEY_PPAGE)
		return -page;
	if ((fn && key == KEY_HOME) || (!fn && key == 'g'))
		return -nvis;
	if ((fn && key == KEY_END) || (!fn && key == 'G'))
		return nvis;
	return 0;
}

void ui_ws_key(struct ui *u, int key, int fn)
{
	struct ui_tree *t = &u->m.tree;
	ui_tree_visible(t);
	if (!t->nvis)
		return;
	struct ui_node *n = t->vis[u->ws.cur < (int)t->nvis ? u->ws.cur : 0];
	int move = ws_key_move(u, key, fn, (int)t->nvis);
	if ((!fn &&
	     (key == UI_KEY_ENTER || key == 'l' || key == 'o' || key == 't')) ||
	    (fn && key == KEY_RIGHT))
		ws_key_open(u, n, key, fn);
	else if ((!fn && key == 'h') || (fn && key == KEY_LEFT))
		ws_key_close(u, n);
	else if (!fn && key == 'd' && n->type == UI_N_FILE)
		ui_diff_open_file(u, n->path);
	if (move) {
		int c = u->ws.cur + move;
		if (c < 0)
			c = 0;
		if (c >= (int)t->nvis)
			c = (int)t->nvis - 1;
		u->ws.cur = c;
		free(u->ws.cur_path);
		u->ws.cur_path = xstrdup(t->vis[c]->path);
	}
	ui_touch(u, UI_DIRTY_TREE);
}

void ui_ws_wheel(struct ui *u, int rows)
{
	u->ws.cur += rows;
	free(u->ws.cur_path);
	u->ws.cur_path = NULL;
	ui_touch(u, UI_DIRTY_TREE);
}

void ui_ws_click(struct ui *u, int row)
{
	u->ws.cur = u->ws.top + row - 1;
	free(u->ws.cur_path);
	u->ws.cur_path = NULL;
	ui_touch(u, UI_DIRTY_TREE);
}
