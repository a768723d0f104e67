/* history.h: the message box's history across runs. Every message sent
 * from the box is kept in one file, $XDG_STATE_HOME/assay/history (mode
 * 0600), a JSON line each, tagged with its project's root:
 *   {"project": "/abs/root", "t": 1718000000, "text": "..."}
 * A run reads the entries of its own project back into the box (Up/Down,
 * Ctrl-R). Bounded: past UI_HIST_KEEP * 3/2 entries (or
 * UI_HIST_FILE_MAX bytes) the file is rewritten (a temp file, renamed)
 * with the newest UI_HIST_KEEP; otherwise each entry is an O_APPEND
 * write. A message that looks like a secret is never written, nor is
 * anything typed in a dialog's field: only the box records. */
#ifndef ASSAY_TUI_HISTORY_H
#define ASSAY_TUI_HISTORY_H

#include "tui/tui.h"

#include <stdint.h>

#define UI_HIST_KEEP 1000            /* entries kept, all projects */
#define UI_HIST_TEXT_MAX (64u << 10) /* longer messages are not kept */
#define UI_HIST_FILE_MAX (8u << 20)  /* past this the file is trimmed */

/* One project's view of the history file. */
struct ui_hist {
	char *path;    /* the file; NULL: nothing is kept across runs */
	char *project; /* the project's root (a realpath) */
	size_t keep;   /* entries the file keeps after a trim */
	size_t lines;  /* entries in the file, as far as this run knows */
	size_t bytes;  /* ...and its size */
	char *last;    /* this project's newest entry, or NULL */
};

/* h for project (a realpath) and the file at path (NULL: the default,
 * path_state_dir("history")). */
void ui_hist_init(struct ui_hist *h, const char *path, const char *project);
void ui_hist_free(struct ui_hist *h);
/* The project's entries, oldest first, into in's history (the newest
 * UI_HISTORY_MAX of them); 0 (an absent file is empty), or -1 + *err
 * when the file cannot be read. */
int ui_hist_load(struct ui_hist *h, struct ui_input *in, char **err);
/* Keep text, sent at t (epoch seconds), unless it is blank, too long,
 * the project's newest entry already, or looks like a secret; 0 (also
 * when it was not kept), or -1 + *err when the file cannot be written. */
int ui_hist_add(struct ui_hist *h, const char *text, int64_t t, char **err);
/* Whether text looks like it holds a secret: an API key (sk-...,
 * sk-ant-..., ghp_..., AKIA...), a private key, a long random token,
 * or NAME=value where NAME says key, token, secret or password. */
int ui_hist_secret(const char *text);

/* history_box.c: the workbench's side. */
struct ui;
/* At start: this project's history into the message box. */
void ui_hist_attach(struct ui *u);
/* The message box sent msg: keep it for later runs. */
void ui_hist_record(struct ui *u, const char *msg);
/* Ctrl-R in the message box: a reverse incremental search of its
 * history (an overlay over the box until accepted or cancelled). */
void ui_hist_search_open(struct ui *u);
/* Ctrl-C: a search that is up ends as Esc ends it (the draft back); 1
 * if there was one. */
int ui_hist_search_cancel(struct ui *u);

#endif
