/* replay.h: what the replay and step-mode files of the TUI share (not a
 * public API). transcript.c reads a recorded run and rebuilds the model
 * at any step (no curses: the unit tests use it); replay.c drives the
 * timeline in the workbench; step.c is the step-mode pause dialog. */
#ifndef ASSAY_TUI_REPLAY_H
#define ASSAY_TUI_REPLAY_H

#include <stdint.h>
#include <cjson/cJSON.h>

#include "tui/tui.h"

struct ui;
struct buf;

/* ---- a recorded transcript (transcript.c) ------------------------------ */

/* Bigger files are refused: the events are kept parsed, about ten
 * times their size in memory. */
#define UI_TRANSCRIPT_MAX (64ll << 20)
#define UI_TRANSCRIPT_LINE_MAX (64u << 20)
/* A "turn" above this is not a turn number (it is replaced). */
#define UI_TRANSCRIPT_TURN_MAX 1000000000

struct ui_transcript {
	char *path;    /* the transcript.jsonl read */
	char *run_dir; /* its directory (exec/ outputs live there) */
	cJSON **ev;    /* the events, in order */
	int n, cap;
	int *turn;       /* the turn (1..nturns) each event is in; 0 before */
	int *turn_start; /* each turn's first event (its model_request) */
	int nturns;      /* model_requests present, a repeated one once */
	int dropped;     /* a resumed run's replayed copies of recorded turns */
	int torn;        /* the last line was cut (a killed run): left out */
};

/* Read RUN: a run dir, a run id under .assay/runs/, or a transcript
 * path. -1 + *err when there is none, it is empty, or a line other
 * than the last is not an event. */
int ui_transcript_load(struct ui_transcript *t, const char *run, char **err);
void ui_transcript_free(struct ui_transcript *t);
/* The step (events applied, 1..n) where turn k (1..) begins: its
 * model_request event; 0 if there is no such turn. */
int ui_transcript_turn_step(const struct ui_transcript *t, int k);
/* ] and [ from step `at`: the step where the next (dir > 0) or the
 * previous turn begins (the current one's start when past it); the
 * last step or 1 when there is none. O(1). */
int ui_transcript_turn_jump(const struct ui_transcript *t, int at, int dir);
/* Make m the model after the first `step` events (m is initialised
 * here; free it with ui_model_free). Hooks are kept. */
void ui_transcript_rebuild(struct ui_model *m, const struct ui_transcript *t,
                           int step);
/* Apply event i (0-based) to m; the clock shows the event's time. */
void ui_transcript_feed(struct ui_model *m, const struct ui_transcript *t,
                        int i);

/* ---- the replay timeline (replay.c) ------------------------------------- */

/* Load RUN and show step 1; -1 + *err before the screen opens. */
int ui_replay_attach(struct ui *u, const char *run, char **err);
void ui_replay_free(struct ui *u);
/* A key in replay that no overlay used (the fork editor is one of
 * replay.c's); 1 if used. */
int ui_replay_key(struct ui *u, int key, int fn);
/* The timeline for the status bar ("replay 57/212  turn 3/6  > 2x"). */
void ui_replay_status(struct ui *u, struct buf *b);
/* The hint line (or the go-to prompt) in place of the input box. */
void ui_replay_draw_hint(struct ui *u);
/* The fork the user asked for, once the replay has quit: the event's
 * seq and the edited text (NULL, 0 if none). */
const char *ui_replay_fork(struct ui *u, uint64_t *seq);

/* ---- step mode (step.c) ------------------------------------------------- */

void ui_step_attach(struct ui *u, int on); /* before session_start */
void ui_step_free(struct ui *u);
/* A pause waits and no Approval goes first: the dialog is up. */
int ui_step_shown(struct ui *u);
/* The dialog on the overlay stack while it is shown, else off it. */
void ui_step_sync(struct ui *u);
/* ---- the Budget dialog (budget.c) -------------------------------------- */

void ui_budget_attach(struct ui *u);
void ui_budget_free(struct ui *u);
/* The dialog on the stack while a budget waits for a decision. */
void ui_budget_sync(struct ui *u);

/* `s`: toggle step mode. */
void ui_step_toggle(struct ui *u);
int ui_step_on(struct ui *u);

#endif
