/* panes.h: the Conversation pane's place (panes.c): the first row
 * shown or following the end, and the selected call summary. panes.c
 * alone writes them; the others scroll, follow and select through
 * these functions. */
#ifndef ASSAY_TUI_PANES_H
#define ASSAY_TUI_PANES_H

struct ui;

/* part: conv, owner: src/tui/panes.c */
struct ui_conv {
	/* the first row shown (item, row in it), or follow the end */
	int follow;
	int item, row;
	int sel;        /* the item of the selected call summary, -1 */
	int rows_shown; /* the rows the pane had last time */
};

/* Following the end, nothing selected. */
void ui_conv_init(struct ui_conv *c);
/* Show the end from now on (new messages scroll it). */
void ui_conv_follow(struct ui *u);
/* The call summary of item is the selected one (-1: none). */
void ui_conv_select(struct ui *u, int item);
/* The Conversation's keys: scrolling, [ and ], Enter on a call. */
void ui_conv_key(struct ui *u, int key, int fn);
/* Scrolling by rows (negative: up); the top. */
void ui_conv_scroll(struct ui *u, int rows);
void ui_conv_home(struct ui *u);

#endif
