/* input.h: a text field being edited (the message box, a dialog's
 * field) and its history. Only input.c writes a struct ui_input's
 * fields; everyone else edits one through these functions. */
#ifndef ASSAY_TUI_INPUT_H
#define ASSAY_TUI_INPUT_H

#include "assay/buf.h"

#include <stddef.h>

#define UI_INPUT_MAX (1u << 20)
#define UI_HISTORY_MAX 200

/* part: in, owner: src/tui/input.c */
struct ui_input {
	struct buf text; /* UTF-8, no control bytes except \n */
	size_t cur;      /* byte offset of the cursor */
	char **hist;
	size_t nhist;
	size_t hpos;  /* == nhist when editing a new message */
	char *draft;  /* what was typed before browsing history */
	int overflow; /* an insert was refused: too long */
};

void ui_input_init(struct ui_input *in);
void ui_input_free(struct ui_input *in);
/* Insert text (cleaned: tabs to spaces, \r\n to \n, controls dropped);
 * -1 (nothing inserted) past UI_INPUT_MAX. */
int ui_input_insert(struct ui_input *in, const char *s, size_t n);
void ui_input_backspace(struct ui_input *in);
void ui_input_delete(struct ui_input *in);
void ui_input_left(struct ui_input *in);
void ui_input_right(struct ui_input *in);
void ui_input_home(struct ui_input *in); /* start of the line */
void ui_input_end(struct ui_input *in);  /* end of the line */
void ui_input_kill_start(struct ui_input *in);
void ui_input_kill_end(struct ui_input *in);
void ui_input_kill_word(struct ui_input *in);
/* Up/Down: move between lines, or through history from the first or
 * last line. */
void ui_input_up(struct ui_input *in);
void ui_input_down(struct ui_input *in);
/* The message to send (NULL if blank); clears the box and remembers
 * the message in the history. */
char *ui_input_take(struct ui_input *in);
/* Remember msg as the newest entry (not twice in a row; the oldest
 * goes past UI_HISTORY_MAX); the box browses from the new end. */
void ui_input_remember(struct ui_input *in, const char *msg);
/* The newest entry at or before index from (from < nhist) holding q:
 * 1 with its index in *at and q's byte offset in *off, else 0. */
int ui_input_hist_find(const struct ui_input *in, const char *q, size_t from,
                       size_t *at, size_t *off);
/* The box holds s with the cursor at byte cur. */
void ui_input_set(struct ui_input *in, const char *s, size_t cur);
/* A history search is over: the box shows entry at, which Up and
 * Down go on from; past the newest, draft (taken) comes back. */
void ui_input_hist_resume(struct ui_input *in, size_t at, char *draft);
/* The box holds s with the cursor at byte cur, browsing history from
 * the new end again. */
void ui_input_restore(struct ui_input *in, const char *s, size_t cur);
/* Rows of the text wrapped at width (hard wrap), and where the cursor
 * is; rows are byte ranges of in->text. */
struct ui_input_layout {
	size_t *start, *end;
	int n;
	int cur_row, cur_col;
};
void ui_input_layout(const struct ui_input *in, int width,
                     struct ui_input_layout *lo);
void ui_input_layout_free(struct ui_input_layout *lo);
/* How many rows the text takes at width, counting at most cap (cheap
 * for a long text: it stops there). */
int ui_input_rows(const struct ui_input *in, int width, int cap);

#endif
