/* pane_tools.h: the Tools pane's state (pane_tools.c): the selected
 * call, the list's and the output's scrolling, and the tail of a big
 * output read back from its files. pane_tools.c alone writes them; the
 * others select and scroll through these functions. */
#ifndef ASSAY_TUI_PANE_TOOLS_H
#define ASSAY_TUI_PANE_TOOLS_H

#include <stddef.h>
#include <stdint.h>

struct ui;
struct ui_oline;

/* The newest output of a call read back from its files, for when the
 * events no longer carry it all (a big output). */
struct ui_tail {
	int call;
	uint64_t bytes[2];
	struct ui_oline *line;
	size_t n, cap;
};

/* part: tools, owner: src/tui/pane_tools.c */
struct ui_tools {
	int sel;            /* the selected call; -1: none */
	int follow;         /* select each new call */
	int out_scroll;     /* output rows up from the bottom */
	int out_rows_shown; /* output rows the pane had last time */
	int list_top;       /* the first call of the list shown */
	struct ui_tail tail;
};

/* Nothing selected, following each new call. */
void ui_tools_init(struct ui_tools *t);
/* A replay went back: nothing selected (in the Conversation either),
 * the tail dropped. */
void ui_tools_reset(struct ui *u);
void ui_draw_tools(struct ui *u);
/* The Tools pane's keys; the wheel over it (rows: down). */
void ui_tools_key(struct ui *u, int key, int fn);
void ui_tools_wheel(struct ui *u, int rows);
/* Select a call in Tools (and in the conversation). */
void ui_select_call(struct ui *u, int call, int user);
/* Call i on one line of width cells after lead: "#3 shell  head -5
 * input/x.csv" with its state at the right edge (a styled string). */
char *ui_call_summary(struct ui *u, int i, int width, const char *lead);
void ui_tail_free(struct ui_tail *t);

#endif
