/* workbench.h: the workbench (src/tui/) as the command line uses it,
 * its one public surface: the workbench on the terminal (a run, a
 * replay, a fork), a view of a session another frontend owns (assay
 * eval), the project trust question, whether a terminal can be driven,
 * and what the terminal can show (assay doctor asks it too). One
 * prefix: ui_. */
#ifndef ASSAY_WORKBENCH_H
#define ASSAY_WORKBENCH_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

struct config;

/* ---- entry (ui.c) ---------------------------------------------------- */

struct session_resume_opts;

/* replay: the fork the user asked for (f), the text malloc'd. */
struct ui_fork {
	uint64_t seq;
	char *text;
};

struct ui_opts {
	const char *prompt; /* sent at once; NULL waits for the user */
	int end_when_done;  /* demo: end the run when the model stops */
	/* assay replay: the recorded run to show (no session, no sandbox);
	 * a fork asked for there lands in *fork and the replay quits */
	const char *replay;
	struct ui_fork *fork;
	/* session_resume instead of session_start (a fork) */
	const struct session_resume_opts *resume;
};

/* The workbench on the terminal (stdin and stdout are ttys); returns
 * the process exit code. Errors before the screen opens are printed
 * on stderr. */
int ui_main(struct config *c, const struct ui_opts *o);

/* A view of a session another frontend runs on its own loop (assay
 * eval's live table): the workbench's panes built from the run's
 * transcript so far, then from the events the owner forwards;
 * read-only (nothing can be sent), but its Approval dialog answers the
 * calls that wait. The owner keeps the session, its approver and the
 * loop's SIGINT/SIGTERM/SIGHUP; the view takes the terminal (stdin,
 * SIGWINCH) until it is closed. */
struct loop;
struct session;
struct ui;
struct ui_view_ops {
	/* Esc or Ctrl-Q: the owner closes the view (ui_view_close) */
	void (*leave)(void *arg);
	/* Ctrl-C twice: the owner closes the view and stops everything */
	void (*interrupt)(void *arg);
	void *arg;
	const char *log_dir; /* stderr goes to its assay.log meanwhile */
};
/* s: the session under way, or NULL for its record only (its check
 * runs). NULL + *err when the view cannot open (the terminal is as it
 * was). ops must outlive the view. */
struct ui *ui_view_open(struct loop *l, struct config *c, struct session *s,
                        const char *run_dir, const struct ui_view_ops *ops,
                        char **err);
/* One of the session's events (one the transcript had is skipped). */
void ui_view_event(struct ui *u, const cJSON *ev);
/* The session's approver calls, forwarded. */
void ui_view_request(struct ui *u);
void ui_view_cancel(struct ui *u, const char *id);
/* The session is about to be freed: the view keeps what it shows. */
void ui_view_detach(struct ui *u, const char *why);
void ui_view_notice(struct ui *u, const char *text);
/* The terminal back as it was; u is freed. */
void ui_view_close(struct ui *u);
/* Ask "Trust this project?" for the project settings c refused
 * (trust_dialog.c): 't' trust and remember, 'o' once, 'n' without
 * them, 'q' quit; -1 when the screen cannot open. */
int ui_trust_ask(const struct config *c);
/* The terminal can be driven by curses (terminal.c). */
int ui_terminal_check(char **err);
/* Read RUN as `assay replay` would (a run dir, a run id under
 * .assay/runs/, or a transcript path) and let it go: 0, or -1 + *err
 * saying why it cannot be replayed (transcript.c). */
int ui_transcript_check(const char *run, char **err);

/* ---- what the terminal can show (termcaps.c) -------------------------- */

/* The graphics a preview is encoded for (src/tui/image.h). */
enum ui_gfx { UI_GFX_OFF, UI_GFX_BLOCKS, UI_GFX_SIXEL, UI_GFX_KITTY };

#define UI_TERMCAPS_TYPEAHEAD 64 /* keystrokes kept from the query window */

struct ui_termcaps {
	int da1_seen;         /* the terminal answered DA1 (CSI c) */
	int da1_class;        /* DA1's first parameter (62, 63, 64, 65, 1...) */
	char da1[64];         /* DA1's parameters as sent, e.g. "63;1;2;4" */
	int sixel;            /* DA1 has attribute 4 after the class */
	int kitty;            /* the kitty graphics query was answered OK */
	int kitty_answered;   /* answered at all (OK or an error) */
	char kitty_reply[48]; /* its message: "OK" or "ENOTSUPPORTED:..." */
	int xtsm_answered;    /* XTSMGRAPHICS answered (success or not) */
	int color_registers;  /* XTSMGRAPHICS Pi=1; 0 = unknown, but 256
	                         (assumed, registers_assumed) once sixel
	                         is chosen */
	int registers_assumed;
	int sixel_max_w, sixel_max_h; /* XTSMGRAPHICS Pi=2; 0 = unknown */
	int cell_w, cell_h;           /* pixels per cell (10x20 when unknown) */
	const char *cell_from;        /* "CSI 16 t", "TIOCGWINSZ" or "guess" */
	int truecolor;       /* COLORTERM=truecolor|24bit or TERM *-direct
	                        (a hint: blocks use 24-bit colour) */
	int in_tmux;         /* $TMUX set, or TERM=tmux* / screen* */
	int tmux_sixel;      /* inside tmux and tmux's DA1 says sixel (3.4+
	                        built with sixel); 0 otherwise */
	int bg_answered;     /* OSC 11 answered with a colour: bg_rgb */
	int bg_rgb[3];       /* the background, 0..255 a channel */
	int bg_light;        /* the verdict (ui_termcaps_background) */
	const char *bg_from; /* "OSC 11", "COLORFGBG", or that nothing
	                        said (dark assumed); NULL: not decided */
	int queried;         /* the queries were sent (a terminal both ways) */
	int timed_out;       /* no DA1 reply within the timeout */
	enum ui_gfx mode;    /* the choice */
	char why[512];       /* in words: asked, answered, chosen */
	char typeahead[UI_TERMCAPS_TYPEAHEAD]; /* see ui_termcaps_detect */
	size_t n_typeahead;
	int sig_typed; /* SIGINT, SIGQUIT or SIGTSTP: its key was typed
	                  during the query (ISIG was off): 0 if none */
};

/* A string the terminal sent (the kitty reply...), made safe to print
 * (invalid UTF-8 replaced, then term_clean: controls as ^X, C1 as
 * <U+009B>). Free it. */
char *ui_termcaps_printable(const char *s, size_t n);

/* Query the terminal on in_fd/out_fd and choose the mode for want.
 * Sends the kitty graphics query, XTSMGRAPHICS (registers, geometry),
 * CSI 16 t, OSC 11 (the background colour), then DA1 last; the input is in raw
 * mode meanwhile and restored after. Waits until the DA1 reply or timeout_ms
 * (use ~150), never longer. Not a terminal, TERM=dumb or want "off": no query,
 * returns at once. Call it before curses takes the terminal. Keys the
 * person typed during the window are in tc->typeahead: the caller may
 * push them back (ncurses ungetch, in reverse order) or drop them.
 * Signals from keys are off meanwhile (a Ctrl-C there is typeahead,
 * and tc->sig_typed says so: the caller acts on it as on a typed
 * Ctrl-C), and the terminal modes are restored on every way out, a
 * signal from elsewhere included. When the terminal did not answer in
 * time, late replies are kept out of ui_termcaps_get_wch's keys.
 * Returns 0, or -1 for an unknown want (tc->why says so). */
int ui_termcaps_detect(int in_fd, int out_fd, const char *want, int timeout_ms,
                       struct ui_termcaps *tc);

/* "off", "blocks", "sixel", "kitty". */
const char *ui_termcaps_mode_name(enum ui_gfx m);

/* Inside tmux, ask tmux itself: `tmux display -p '#{sixel_support}'`,
 * at most timeout_ms. 1 yes, 0 no (or tmux < 3.4: an empty answer),
 * -1 could not ask. For `assay doctor`; detect does not run it. */
int ui_termcaps_tmux_sixel(int timeout_ms);

#endif
