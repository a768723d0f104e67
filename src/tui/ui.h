/* ui.h: the workbench's view state, shared by the files that draw and
 * drive it (ui.c: loop, layout, frames; keys.c: keys and the mouse;
 * overlay.c: the overlay stack; panes.c: the panes; pane_tools.c: the
 * Tools pane; pager.c; watch.c).
 * The model it shows lives in struct ui_model (model.c). */
#ifndef ASSAY_TUI_UI_H
#define ASSAY_TUI_UI_H

#include "tui/draw.h"
#include "tui/keys.h"
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
struct ui_budget;
struct ui;

/* ---- the overlay stack (overlay.c) ------------------------------------
 * Everything drawn over the panes is an overlay on one stack: the
 * Approval, Step and Fork dialogs, the help, the quit confirmation, the
 * pager and the large image view. The stack alone answers, topmost
 * first: who gets a key or a click, what is drawn on top, who owns the
 * cursor and whether images must go. An overlay is a struct its owner
 * file keeps (its state around it); pushing it puts it above every
 * overlay of its layer or a lower one. */

enum ui_layer {                /* low to high */
	        UI_LAYER_VIEW, /* whole-screen views: the large image, the pager
	                        */
	        UI_LAYER_DIALOG,  /* Approval, Step, Fork */
	        UI_LAYER_HELP,    /* the keys */
	        UI_LAYER_CONFIRM, /* quit? */
};

enum {
	/* it gets every key first, the workbench's own (Ctrl-Q, Ctrl-C,
	 * Ctrl-L, F1, a resize, the mouse) too; the others get a key
	 * only when the workbench has not used it */
	UI_OV_MODAL = 1,
	/* images on the terminal are taken off while it is up */
	UI_OV_COVERS_IMAGES = 2,
	/* it covers every pane: they are not drawn */
	UI_OV_OPAQUE = 4,
};

/* Where an overlay left the cursor: screen cells, shown when on. */
struct ui_cursor {
	int on, y, x;
};

struct ui_overlay {
	const char *name; /* for the log */
	enum ui_layer layer;
	unsigned flags; /* UI_OV_* */
	/* Put it on the frame (wnoutrefresh, never doupdate). */
	void (*draw)(struct ui *u, struct ui_overlay *o);
	/* A key; 1 if used (the key goes no further). One that changes
	 * the stack returns 1. NULL: every key goes to what is under. */
	int (*key)(struct ui *u, struct ui_overlay *o, int key, int fn);
	/* 1 and the screen cell when it shows the cursor (asked of the
	 * top overlay only); NULL: the cursor is hidden. */
	int (*cursor)(struct ui *u, struct ui_overlay *o, int *y, int *x);
	/* A click or the wheel; 1 if used. NULL: it goes to the panes. */
	int (*mouse)(struct ui *u, struct ui_overlay *o, const MEVENT *me);
	/* It left the stack: release what it holds (NULL: its owner
	 * keeps its state). */
	void (*free)(struct ui *u, struct ui_overlay *o);
	/* the stack's own */
	struct ui_overlay *below;
	int on_stack;
};

/* On the stack (again: nothing happens if it is there). */
void ui_overlay_push(struct ui *u, struct ui_overlay *o);
/* Off the stack wherever it is (then its free runs); NULL or an
 * overlay not on it: nothing. */
void ui_overlay_pop(struct ui *u, struct ui_overlay *o);
void ui_overlay_clear(struct ui *u); /* pop them all */
const struct ui_overlay *ui_overlay_top(const struct ui *u);
/* The UI_OV_* flags of every overlay on the stack. */
unsigned ui_overlay_flags(const struct ui *u);
/* Give a key to the stack, topmost first; workbench (the workbench's
 * own keys) is asked under the modal overlays, over the others. 1 if
 * anyone used it. */
int ui_overlay_key(struct ui *u, int key, int fn,
                   int (*workbench)(struct ui *u, int key, int fn));
/* A mouse event to the stack; 0: the panes get it. */
int ui_overlay_mouse(struct ui *u, const MEVENT *me);
/* A mouse callback for overlays that take the mouse from the panes. */
int ui_overlay_mouse_eat(struct ui *u, struct ui_overlay *o, const MEVENT *me);
/* The cursor: -1 when the stack is empty (the panes place it), 0 when
 * the top overlay hides it, 1 with its cell. */
int ui_overlay_cursor(struct ui *u, int *y, int *x);
/* Draw every overlay, the bottom one first. */
void ui_overlay_draw(struct ui *u);
/* An overlay's cursor callback for a struct ui_cursor it keeps. */
int ui_cursor_get(const struct ui_cursor *c, int *y, int *x);

struct ui {
	struct loop *loop;
	struct session *s; /* NULL when only watching events */
	struct config *cfg;
	const struct ui_opts *opts;
	struct ui_model m;
	struct ui_theme theme;
	struct ui_input in;

	SCREEN *screen;    /* freed at cleanup: a fork from a replay opens
	                      the workbench a second time in one process */
	int screen_closed; /* endwin ran: no more frames */
	int saved_stderr;  /* the terminal's, while stderr is the log */
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
	int ws_fd;       /* the host workspace, for the pager; -1 */
	int64_t scan_t0; /* a listing is on its way since then; else 0 */
	int scan_again;  /* the watch asked for one meanwhile */
	/* workspace_change events seen, and when the listing began: a
	 * listing older than an event is not shown */
	unsigned ws_events, scan_events;

	/* the overlay stack, its top first (overlay.c) */
	struct ui_overlay *overlays;
	struct ui_pager *pager;   /* the pager when open (pager.c) */
	struct ui_approval *appr; /* the Approval dialog (approval.c) */
	struct ui_replay *replay; /* assay replay (replay.c); else NULL */
	struct ui_step *step;     /* step mode's pause dialog (step.c) */
	struct ui_budget *budget; /* the Budget dialog (budget.c) */
	char *notice;
	int64_t notice_until;
	int ctrl_c_armed;
	int help_top; /* the help's first line shown (it scrolls when the
	                 terminal is shorter than it) */
	int quitting; /* quit once the run has ended (its archive...) */
	int quit;     /* leave the loop */
	int in_paste;

	/* frame statistics (ASSAY_TUI_STATS) */
	int stats;
	long frames;
	int64_t stats_t0, frame_us_max;

	struct ui_watch *watch;
	struct ui_preview *preview; /* image previews (preview.c) */
	struct ui_scan *scan;       /* the listing in flight; NULL */
	uint64_t first_scan_timer;

	/* a view of a session another frontend owns (assay eval's live
	 * table, ui_view_open): read-only, Esc goes back to it; NULL in
	 * the workbench of ui_main */
	const struct ui_view_ops *view;
	uint64_t view_timer; /* leaving (or stopping all) from the loop */
	int view_interrupt;  /* ...to stop everything */
	double view_seq;     /* the newest event shown */
};

/* Ask for a frame soon (coalesced: at most one per UI_FRAME_MS). */
void ui_touch(struct ui *u, unsigned bits);
void ui_notice(struct ui *u, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The focus to pane f (P_INPUT: the message box). */
void ui_set_focus(struct ui *u, int f);
/* The rows the message box wants at a width. */
int ui_input_rows_wanted(struct ui *u, int cols);

/* keys.c */
/* A key (fn: a curses function key) from the terminal. */
void ui_handle_key(struct ui *u, int key, int fn);
/* End the run and leave (once the run has ended: its archive...). */
void ui_quit(struct ui *u);
/* The quit? (y/n) overlay; the help overlay. */
void ui_confirm_quit(struct ui *u);
void ui_help_open(struct ui *u);
/* A view (u->view): back to its owner, or (interrupt) stop all; from
 * the loop, never inside the key handler that asks. */
void ui_view_leave(struct ui *u, int interrupt);

/* panes.c */
void ui_draw_conv(struct ui *u);
void ui_draw_tree(struct ui *u);
void ui_draw_input(struct ui *u);
void ui_draw_status(struct ui *u);
/* The help in w from line u->help_top (kept in range). */
void ui_draw_help(struct ui *u, WINDOW *w);
int ui_help_lines(void);
void ui_draw_confirm(struct ui *u, WINDOW *w);
void ui_draw_box(WINDOW *w, const char *title, int focused);
/* Pane p's box; when it is the only pane shown, the top border names
 * the others Tab reaches. */
void ui_pane_box(struct ui *u, int p);
/* Untrusted text (term_clean'd), each of its lines wrapped into out
 * after label (in element le, or none when NULL), the text in e. */
void ui_st_add_text(struct ui_rows *out, int width, int indent,
                    const char *label, enum ui_elem le, const char *raw,
                    enum ui_elem e);
/* A dialog of h x wd cells centred over the panes, filled and boxed;
 * ui_dialog_done puts it on the frame and frees it; *at says where
 * the cursor goes: the window's cy, cx on the screen when cursor. */
WINDOW *ui_dialog_new(struct ui *u, int h, int wd, const char *title);
void ui_dialog_done(WINDOW *w, struct ui_cursor *at, int cursor, int cy,
                    int cx);
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

/* pane_tools.c */
void ui_draw_tools(struct ui *u);
/* Call i on one line of width cells after lead: "#3 shell  head -5
 * input/x.csv" with its state at the right edge (a styled string). */
char *ui_call_summary(struct ui *u, int i, int width, const char *lead);
void ui_tail_free(struct ui_tail *t);
/* Select a call in Tools (and in the conversation). */
void ui_select_call(struct ui *u, int call, int user);

/* pager.c */
/* Open the full output of call i, or a workspace file. */
void ui_pager_open_call(struct ui *u, int i);
void ui_pager_open_file(struct ui *u, const char *rel);
/* A workspace file opened for reading through the mounts (a staged
 * input is read from its host source); -1 with a notice said. */
int ui_open_workspace_file(struct ui *u, const char *rel);

/* tableview.c: a .csv/.tsv workspace file, or call i's stdout, as a
 * table (an overlay of the VIEW layer); is path named as a table? */
void ui_table_open_file(struct ui *u, const char *rel);
void ui_table_open_call(struct ui *u, int i);
int ui_table_is_table(const char *path);

/* diffview.c: the diff of every text file call i changed; the history
 * of file rel across the run's calls. */
void ui_diff_open_call(struct ui *u, int i);
void ui_diff_open_file(struct ui *u, const char *rel);
void ui_pager_close(struct ui *u);
int ui_pager_busy(const struct ui *u); /* a search runs */
void ui_pager_cancel_search(struct ui *u);

/* approval.c: the Approval dialog, the session's approver. */
/* The dialog; approver: it is the session's approver too (before
 * session_start), else the session's owner forwards its requests
 * (ui_view_request). */
void ui_approval_attach(struct ui *u, int approver);
void ui_approval_free(struct ui *u);
/* A call waits for a decision (the dialog is up). */
int ui_approval_shown(struct ui *u);
/* The dialog on the overlay stack while a call waits, else off it. */
void ui_approval_sync(struct ui *u);
/* The approver's two calls, for one that forwards them. */
void ui_approval_on_request(struct ui *u);
void ui_approval_on_cancel(struct ui *u, const char *id);

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
/* p, v and Esc from a pane (the large view is an overlay with keys of
 * its own); 1 if used. */
int ui_preview_key(struct ui *u, int key, int fn);
void ui_preview_open(struct ui *u, const char *rel, int large);
int ui_preview_close(struct ui *u); /* 1 if one was open */
int ui_preview_is_image(const char *path);
void ui_preview_free(struct ui *u);

#endif
