/* overlay.h: the overlay stack (overlay.c), and the help and the quit
 * question (help.c), two overlays of the workbench's own.
 *
 * Everything drawn over the panes is an overlay on one stack: the
 * Approval, Step and Fork dialogs, the help, the quit confirmation, the
 * pager and the large image view. The stack alone answers, topmost
 * first: who gets a key or a click, what is drawn on top, who owns the
 * cursor and whether images must go. An overlay is a struct its owner
 * file keeps (its state around it); pushing it puts it above every
 * overlay of its layer or a lower one. */
#ifndef ASSAY_TUI_OVERLAY_H
#define ASSAY_TUI_OVERLAY_H

#include <curses.h>

struct ui;

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

/* part: ov, owner: src/tui/overlay.c, src/tui/help.c */
struct ui_overlays {
	struct ui_overlay *top; /* the stack, its top first (overlay.c) */
	int help_top; /* the help's first row shown (its entries wrapped):
	                 it scrolls when the terminal is shorter than it
	                 (help.c) */
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

/* help.c: the keys (F1, ?); the quit? (y/n) question; the question off
 * the stack (quitting is decided). */
void ui_help_open(struct ui *u);
void ui_confirm_quit(struct ui *u);
void ui_confirm_quit_close(struct ui *u);

#endif
