/* ui.h: the workbench's view state, shared by the files that draw and
 * drive it (ui.c: loop, layout, keys; panes.c: the panes; pager.c;
 * watch.c). The model it shows lives in struct ui_model (model.c). */
#ifndef ASSAY_TUI_UI_H
#define ASSAY_TUI_UI_H

#include "tui/draw.h"
#include "tui/tui.h"

struct loop;
struct session;
struct config;

enum ui_pane { P_CONV, P_TOOLS, P_TREE, P_INPUT, P_COUNT };

enum {
	UI_DIRTY_INPUT = 16,
	UI_DIRTY_LAYOUT = 32,
	UI_DIRTY_OVERLAY = 64,
	UI_DIRTY_PAGER = 128,
	UI_DIRTY_EVERYTHING = 255,
};

struct ui_geom {
	int y, x, h, w;
	int shown;
	WINDOW *win;
};

/* The newest output of a call read back from its files, for when the
 * events no longer carry it all (a big output). */
struct ui_tail {
	int call;
	uint64_t bytes[2];
	struct ui_oline *line;
	size_t n, cap;
};

struct ui_pager;
struct ui_watch;
struct ui_approval;
struct ui_replay;
struct ui_step;

struct ui {
	struct loop *loop;
	struct session *s; /* NULL when only watching events */
	struct config *cfg;
	const struct ui_opts *opts;
	struct ui_model m;
	struct ui_theme theme;
	struct ui_input in;

	int rows, cols;
	int too_small;
	struct ui_geom g[P_COUNT];
	WINDOW *status;
	int focus;
	unsigned dirty;
	uint64_t frame_timer, tick_timer, stats_timer;
	int64_t last_frame;

	/* Conversation: the first row shown (item, row in it), or follow */
	int conv_follow;
	int conv_item, conv_row;
	int conv_sel; /* the item of the selected call summary, -1 */
	int conv_rows_shown;

	/* Tools */
	int sel_call;       /* -1: none */
	int sel_follow;     /* select each new call */
	int out_scroll;     /* output rows up from the bottom */
	int out_rows_shown; /* output rows the pane had last time */
	int list_top;
	struct ui_tail tail;

	/* Workspace */
	int tree_cur, tree_top;
	char *tree_cur_path;
	int ws_fd; /* the host workspace, for the pager; -1 */

	/* overlays */
	int help;
	int confirm_quit;
	struct ui_pager *pager;
	struct ui_approval *appr; /* the Approval dialog (approval.c) */
	struct ui_replay *replay; /* assay replay (replay.c); else NULL */
	struct ui_step *step;     /* step mode's pause dialog (step.c) */
	char *notice;
	int64_t notice_until;
	int ctrl_c_armed;
	int quit;
	int in_paste;

	/* frame statistics (ASSAY_TUI_STATS) */
	int stats;
	long frames;
	int64_t stats_t0, frame_us_max;

	struct ui_watch *watch;
	struct ui_preview *preview; /* image previews (preview.c) */
};

/* Ask for a frame soon (coalesced: at most one per UI_FRAME_MS). */
void ui_touch(struct ui *u, unsigned bits);
void ui_notice(struct ui *u, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* panes.c */
void ui_draw_conv(struct ui *u);
void ui_draw_tools(struct ui *u);
void ui_draw_tree(struct ui *u);
void ui_draw_input(struct ui *u);
void ui_draw_status(struct ui *u);
void ui_draw_help(struct ui *u, WINDOW *w);
int ui_help_lines(void);
void ui_draw_confirm(struct ui *u, WINDOW *w);
void ui_draw_box(WINDOW *w, const char *title, int focused);
/* Untrusted text (ui_clean'd), each of its lines wrapped into out
 * after label (in element le, or none when NULL), the text in e. */
void ui_st_add_text(struct ui_rows *out, int width, int indent,
                    const char *label, enum ui_elem le, const char *raw,
                    enum ui_elem e);
/* A dialog of h x wd cells centred over the panes, filled and boxed;
 * ui_dialog_done puts it on the frame (the cursor at cy, cx when
 * cursor) and frees it; it returns cursor. */
WINDOW *ui_dialog_new(struct ui *u, int h, int wd, const char *title);
int ui_dialog_done(WINDOW *w, int cursor, int cy, int cx);
/* A dialog's text field laid out as lo: rows rows at (y, x) after a
 * "> " prompt, the last of them that shows the cursor at the bottom,
 * drawn only above maxy; the cursor's place into cy, cx. */
void ui_draw_field(WINDOW *w, const struct ui_input *in,
                   const struct ui_input_layout *lo, int y, int x, int width,
                   int rows, int maxy, int *cy, int *cx);
/* Conversation scrolling by rows (negative: up). */
void ui_conv_scroll(struct ui *u, int rows);
void ui_conv_home(struct ui *u);
/* The rows of an item at a width (cached). */
struct ui_rows *ui_item_rows(struct ui *u, int i, int width);
int ui_conv_width(const struct ui *u);
/* Map a click in the conversation to an item (or -1). */
int ui_conv_item_at(struct ui *u, int row);
void ui_tail_free(struct ui_tail *t);
/* Select a call in Tools (and in the conversation). */
void ui_select_call(struct ui *u, int call, int user);

/* pager.c */
/* Open the full output of call i, or a workspace file. */
void ui_pager_open_call(struct ui *u, int i);
void ui_pager_open_file(struct ui *u, const char *rel);
void ui_pager_close(struct ui *u);
void ui_pager_draw(struct ui *u, WINDOW *w);
/* A key while the pager is open; 1 if used. */
int ui_pager_key(struct ui *u, int key, int is_fn);
int ui_pager_busy(const struct ui *u); /* a search runs */
void ui_pager_cancel_search(struct ui *u);

/* approval.c: the Approval dialog, the session's approver. */
void ui_approval_attach(struct ui *u); /* before session_start */
void ui_approval_free(struct ui *u);
/* A call waits for a decision: the dialog is on screen. */
int ui_approval_shown(struct ui *u);
/* Draw it over the frame; 1 when it left the cursor in its field. */
int ui_approval_draw(struct ui *u);
/* A key while it is shown; 1 if used. */
int ui_approval_key(struct ui *u, int key, int fn);

/* watch.c: inotify on the host workspace; rescan calls back. */
struct ui_watch *ui_watch_new(struct loop *l, const char *root,
                              void (*rescan)(void *arg), void *arg);
/* Watch these directories too (from a listing). */
void ui_watch_dirs(struct ui_watch *w, const cJSON *list);
/* A rescan happened now and took ms. */
void ui_watch_scanned(struct ui_watch *w, int64_t ms);
void ui_watch_free(struct ui_watch *w);

#define UI_FRAME_MS 16

/* The editing keys every text field shares (the message box, the
 * approval dialog's field): 1 if key was one of them and was applied. */
int ui_edit_key(struct ui_input *in, int key, int fn);
/* A dialog field's keys after its own Enter and Esc: Alt-Enter and
 * Ctrl-J insert a new line, Tab a tab, Ctrl-U clears, then
 * ui_edit_key. */
void ui_field_key(struct ui_input *in, int key, int fn);

/* preview.c: image previews. Ask the terminal what it shows (before
 * newterm), then give back the keys typed meanwhile (after it). */
void ui_preview_detect(struct ui *u);
void ui_preview_typeahead(struct ui *u);
/* In a frame: draw the box after the panes (before the overlays);
 * place the image on the tty after doupdate. */
void ui_preview_draw(struct ui *u);
void ui_preview_emit(struct ui *u);
/* p, v, Esc (and every key while the large view is up); 1 if used. */
int ui_preview_key(struct ui *u, int key, int fn);
void ui_preview_open(struct ui *u, const char *rel, int large);
int ui_preview_close(struct ui *u); /* 1 if one was open */
int ui_preview_is_image(const char *path);
void ui_preview_free(struct ui *u);

#endif
