/* ui.h: the workbench's view state, shared by the files that draw and
 * drive it. struct ui is made of parts, each written by its owner file
 * alone (its header says which; the others call its functions): the
 * model (tui.h: model.c), the theme (tui.h: theme.c), the message box
 * (input.h: input.c), the layout (layout.h: layout.c), the
 * Conversation (panes.h: panes.c), Tools (pane_tools.h: pane_tools.c),
 * the Workspace (workspace.h: workspace.c), the keys' memory (keys.h:
 * keys.c), the overlay stack (overlay.h: overlay.c, help.c), and the
 * terminal and frames (here: ui.c). ui.c wires them. */
#ifndef ASSAY_TUI_UI_H
#define ASSAY_TUI_UI_H

#include "tui/draw.h"
#include "tui/keys.h"
#include "tui/layout.h"
#include "tui/overlay.h"
#include "tui/pane_tools.h"
#include "tui/panes.h"
#include "tui/tui.h"
#include "tui/workspace.h"

struct loop;
struct session;
struct config;

enum {
	UI_DIRTY_INPUT = 16,
	UI_DIRTY_LAYOUT = 32,
	UI_DIRTY_OVERLAY = 64,
	UI_DIRTY_PAGER = 128,
	UI_DIRTY_EVERYTHING = 255,
};

struct ui_pager;
struct ui_watch;
struct ui_approval;
struct ui_elicit;
struct ui_replay;
struct ui_step;
struct ui_budget;
struct ui;

/* The terminal while the workbench holds it. */
/* part: scr, owner: src/tui/ui.c */
struct ui_screen {
	SCREEN *screen;    /* freed at cleanup: a fork from a replay opens
	                      the workbench a second time in one process */
	int screen_closed; /* endwin ran: no more frames */
	int saved_stderr;  /* the terminal's, while stderr is the log */
};

/* Frames: what must be drawn again (UI_DIRTY_*), the timers that draw
 * it, and the statistics of ASSAY_TUI_STATS (ui.c). */
/* part: fr, owner: src/tui/ui.c */
struct ui_frames {
	unsigned dirty;
	uint64_t frame_timer, tick_timer, stats_timer;
	int64_t last_frame;
	int stats;
	long frames;
	int64_t stats_t0, frame_us_max;
};

struct ui {
	/* ui.c's own: the wiring, the terminal, frames, notices, quitting
	 * and the view link */
	struct loop *loop;
	struct session *s; /* NULL when only watching events */
	struct config *cfg;
	const struct ui_opts *opts;
	struct ui_screen scr; /* the terminal: curses, stderr */
	struct ui_frames fr;  /* frames: what to draw, when */
	char *notice;
	int64_t notice_until;
	int quitting; /* quit once the run has ended (its archive...) */
	int quit;     /* leave the loop */
	/* a view of a session another frontend owns (assay eval's live
	 * table, ui_view_open): read-only, Esc goes back to it; NULL in
	 * the workbench of ui_main */
	const struct ui_view_ops *view;
	uint64_t view_timer; /* leaving (or stopping all) from the loop */
	int view_interrupt;  /* ...to stop everything */
	double view_seq;     /* the newest event shown */

	/* the parts: each written by its owner alone (see its header) */
	struct ui_model m;     /* model.c */
	struct ui_theme theme; /* theme.c */
	struct ui_input in;    /* the message box: input.c */
	struct ui_layout lay;  /* layout.c */
	struct ui_conv conv;   /* panes.c */
	struct ui_tools tools; /* pane_tools.c */
	struct ui_ws ws;       /* workspace.c */
	struct ui_keys keys;   /* keys.c */
	struct ui_overlays ov; /* overlay.c, help.c */

	/* the overlays' owners: each pointer set by its own file alone */
	struct ui_pager *pager;     /* the pager when open (pager.c) */
	struct ui_approval *appr;   /* the Approval dialog (approval.c) */
	struct ui_elicit *elicit;   /* the Input dialog (elicit.c) */
	struct ui_replay *replay;   /* assay replay (replay.c); else NULL */
	struct ui_step *step;       /* step mode's pause dialog (step.c) */
	struct ui_budget *budget;   /* the Budget dialog (budget.c) */
	struct ui_preview *preview; /* image previews (preview.c) */
};

/* Ask for a frame soon (coalesced: at most one per UI_FRAME_MS). */
void ui_touch(struct ui *u, unsigned bits);
void ui_notice(struct ui *u, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* End the run and leave (once the run has ended: its archive...). */
void ui_quit(struct ui *u);
/* Leave the loop now (a replay's q, a fork). */
void ui_leave_loop(struct ui *u);

/* keys.c */
/* A key (fn: a curses function key) from the terminal. */
void ui_handle_key(struct ui *u, int key, int fn);
/* A view (u->view): back to its owner, or (interrupt) stop all; from
 * the loop, never inside the key handler that asks. */
void ui_view_leave(struct ui *u, int interrupt);

/* panes.c */
void ui_draw_conv(struct ui *u);
void ui_draw_input(struct ui *u);
void ui_draw_status(struct ui *u);
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
/* The rows of an item at a width (cached). */
struct ui_rows *ui_item_rows(struct ui *u, int i, int width);
int ui_conv_width(const struct ui *u);
/* Map a click in the conversation to an item (or -1). */
int ui_conv_item_at(struct ui *u, int row);

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

/* elicit.c: the Input dialog, an MCP server's question to the person
 * (its requests come through the approver's elicit). */
void ui_elicit_attach(struct ui *u);
void ui_elicit_free(struct ui *u);
/* A question waits (the dialog is up). */
int ui_elicit_shown(struct ui *u);
/* The dialog on the overlay stack while a question waits, else off. */
void ui_elicit_sync(struct ui *u);
void ui_elicit_on_request(struct ui *u);
void ui_elicit_on_cancel(struct ui *u, const char *id);

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
