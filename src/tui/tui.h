/* tui.h: what the files of the interactive workbench share (not a
 * public API). The TUI is an observer: its model (conversation, tool
 * calls with their output, workspace tree) is built from session events
 * only (model.c), so a recorded transcript can drive the same code; the
 * session is only asked to send, cancel and end. One prefix: ui_. */
#ifndef ASSAY_TUI_H
#define ASSAY_TUI_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "assay/buf.h"
#include "assay/path.h"
#include "tui/input.h"
/* the entry points (ui.c, trust_dialog.c, terminal.c) are public */
#include "assay/workbench.h"

struct config;

/* ---- styles and themes (theme.c) -------------------------------------- */

enum ui_elem {
	UE_NORMAL,
	UE_BORDER,
	UE_BORDER_FOCUS,
	UE_TITLE,
	UE_TITLE_FOCUS,
	UE_USER_LABEL,
	UE_USER,
	UE_ASSISTANT_LABEL,
	UE_ASSISTANT,
	UE_HEADING,
	UE_BOLD,
	UE_CODE,
	UE_CODE_BLOCK,
	UE_BULLET,
	UE_TOOL_CALL,
	UE_STDOUT,
	UE_STDERR,
	UE_GUTTER_OUT,
	UE_GUTTER_ERR,
	UE_RUNNING,
	UE_OK,
	UE_FAIL,
	UE_SELECTION,
	UE_STATUS,
	UE_WARNING,
	UE_ERROR,
	UE_APPROVAL,
	UE_INPUT,
	UE_PROMPT,
	UE_TREE_DIR,
	UE_TREE_FILE,
	UE_TREE_LINK,
	UE_TREE_NEW,
	UE_TREE_MODIFIED,
	UE_TREE_SIZE,
	UE_MATCH,
	UE_OVERLAY,
	UE_DIM,
	UE_COUNT
};

/* Colours: -1 the terminal's default, 0..255 indexed, UI_RGB truecolor. */
#define UI_COLOR_DEFAULT (-1)
#define UI_RGB_FLAG 0x1000000
#define UI_RGB(r, g, b) (UI_RGB_FLAG | ((r) << 16) | ((g) << 8) | (b))

enum {
	UI_A_BOLD = 1,
	UI_A_DIM = 2,
	UI_A_ITALIC = 4,
	UI_A_UNDERLINE = 8,
	UI_A_REVERSE = 16,
	UI_A_BLINK = 32,
};

struct ui_style {
	int32_t fg, bg;
	uint16_t attrs;
};

/* part: theme, owner: src/tui/theme.c */
struct ui_theme {
	char *name;
	char *path; /* the file it came from ("built-in" if none) */
	struct ui_style el[UE_COUNT];
};

/* The JSON key of an element ("border_focus"...). */
const char *ui_elem_name(enum ui_elem e);
/* The built-in default (dark) theme. */
void ui_theme_builtin(struct ui_theme *t);
/* Parse a theme document; missing elements keep the built-in values.
 * Errors name the file (origin) and the key. */
int ui_theme_parse(struct ui_theme *t, const cJSON *doc, const char *origin,
                   char **err);
/* Find and load a theme by name: a path, or NAME.json in
 * $XDG_CONFIG_HOME/assay/themes/ then in the bundled themes/. */
int ui_theme_load(struct ui_theme *t, const char *name, char **err);
void ui_theme_free(struct ui_theme *t);
/* Parse one colour ("#rrggbb", "#rgb", 0..255, a name, "default"). */
int ui_color_parse(const cJSON *v, int32_t *out);
/* Nearest xterm-256 index of an RGB colour (16..255). */
int ui_color_256(int r, int g, int b);

/* ---- text (text.c) ----------------------------------------------------- */

/* "stext": sanitised UTF-8 (no control bytes) with in-band markers:
 *   ST_ELEM e  switch to theme element e-1 (resets colours from SGR)
 *   ST_HL_ON / ST_HL_OFF  search-match highlight over the current style
 *   ESC [ ... m  an SGR colour change, only as written by ui_term
 * Markers are control bytes, which term_clean never lets through, so
 * untrusted text can never forge one. */
#define ST_ELEM '\x01'
#define ST_HL_ON '\x02'
#define ST_HL_OFF '\x03'

/* Decode one UTF-8 character; invalid bytes give U+FFFD (length 1). */
size_t ui_u8_decode(const char *s, size_t n, uint32_t *cp);
size_t ui_u8_encode(uint32_t cp, char out[4]);
/* Display width of a character: 0, 1 or 2 (-1 if not printable). */
int ui_cp_width(uint32_t cp);
/* Length of the marker at s (0 if s is not a marker). */
size_t ui_st_marker(const char *s, size_t n);
/* Display width of stext. */
int ui_st_width(const char *s, size_t n);
/* Append the element marker for e. */
void ui_st_elem(struct buf *b, enum ui_elem e);

struct ui_rows {
	char **row; /* stext, each row starting with the active style */
	int n, cap;
};
void ui_rows_free(struct ui_rows *r);
void ui_rows_push(struct ui_rows *r, char *row);
/* Word-wrap one stext line into rows of at most width cells; rows
 * after the first start with indent spaces. Words longer than a row
 * are cut. An empty line gives one empty row. */
void ui_st_wrap(const char *s, size_t n, int width, int indent,
                struct ui_rows *out);
/* Cut stext to at most width cells (with a trailing "…" if cut). */
char *ui_st_fit(const char *s, size_t n, int width);
/* The plain text of stext (markers removed). */
char *ui_st_plain(const char *s, size_t n);
/* Copy stext with ST_HL_ON/OFF around each occurrence of needle in its
 * plain text; *found counts them. */
char *ui_st_highlight(const char *s, size_t n, const char *needle, int *found);
/* Human sizes: "512 B", "3.4 KB", "1.2 MB". */
void ui_fmt_size(char *out, size_t max, double bytes);
/* Durations: "0.8s", "12s", "3m05s". */
void ui_fmt_duration(char *out, size_t max, int64_t ms);
/* Token counts: "950", "12.3k", "1.2M". */
void ui_fmt_count(char *out, size_t max, double n);

/* ---- the sanitizer ---------------------------------------------------
 * Untrusted text is made safe to draw by the one sanitizer, term_clean
 * (assay/termtext.h: valid UTF-8, controls as ^X, C1 and bidi/format
 * characters as <U+XXXX>); sanitize.c holds the stream interpreter. */
#include "assay/termtext.h"

#define UI_TERM_MAX_COLS 2048 /* longer lines are broken */

/* A byte stream interpreted as far as it is safe: printable text, SGR
 * colours, \r and \b within the line, tabs, erase-in-line; every other
 * escape sequence is dropped, every other control byte shown as ^X.
 * Completed lines come out as stext through emit. */
struct ui_cell {
	uint32_t cp; /* 0: right half of a wide character */
	struct ui_style st;
};

struct ui_term {
	int state;
	char seq[64];
	size_t seq_len;
	int seq_bad;
	char u8[4];
	size_t u8_len;
	struct ui_style st;
	struct ui_cell *cells;
	size_t ncells, cap, col;
	void (*emit)(void *arg, const char *line, size_t n);
	void *arg;
};

void ui_term_init(struct ui_term *t,
                  void (*emit)(void *arg, const char *line, size_t n),
                  void *arg);
void ui_term_free(struct ui_term *t);
void ui_term_feed(struct ui_term *t, const char *data, size_t n);
/* Emit the open line if it has anything. */
void ui_term_flush(struct ui_term *t);
/* The open line as stext (appended to out). */
void ui_term_peek(const struct ui_term *t, struct buf *out);
int ui_term_open(const struct ui_term *t); /* the open line is non-empty */

/* ---- markdown (markdown.c) ---------------------------------------------- */

/* Render light markdown (cleaned text) as stext lines, each with the
 * indent its wrapped rows continue at. base is the body element. */
struct ui_mdline {
	char *st;
	int indent;
	int nowrap; /* code: cut, not word-wrapped */
};
struct ui_md {
	struct ui_mdline *l;
	int n, cap;
	int ascii; /* no box-drawing glyphs */
};
void ui_md_render(struct ui_md *md, const char *text, enum ui_elem base);
void ui_md_free(struct ui_md *md);

/* ---- paging through big files (pagefile.c) --------------------------------
 */

#define UI_PG_LINE_MAX 16384 /* longer lines are split */

/* A document of one or more parts, each a header line or a file read
 * on demand (nothing is loaded whole). A position is (part, offset). */
struct ui_pgpart {
	char *header; /* a one-line header, or NULL for a file */
	int fd;
	int64_t size; /* refreshed by ui_pg_refresh */
};
struct ui_pgdoc {
	struct ui_pgpart part[4];
	int n;
};
struct ui_pgpos {
	int part;
	int64_t off;
};

void ui_pg_init(struct ui_pgdoc *d);
void ui_pg_free(struct ui_pgdoc *d); /* closes the fds */
void ui_pg_add_header(struct ui_pgdoc *d, const char *text);
void ui_pg_add_file(struct ui_pgdoc *d, int fd); /* takes the fd */
void ui_pg_refresh(struct ui_pgdoc *d);          /* re-read sizes */
int64_t ui_pg_total(const struct ui_pgdoc *d);
int ui_pg_pos_cmp(struct ui_pgpos a, struct ui_pgpos b);
/* The next/previous line start; 0 on success, -1 at the end/start. */
int ui_pg_next(const struct ui_pgdoc *d, struct ui_pgpos *p);
int ui_pg_prev(const struct ui_pgdoc *d, struct ui_pgpos *p);
struct ui_pgpos ui_pg_head(const struct ui_pgdoc *d);
struct ui_pgpos ui_pg_end(const struct ui_pgdoc *d); /* past the last line */
/* The start of the line holding p. */
struct ui_pgpos ui_pg_line_start(const struct ui_pgdoc *d, struct ui_pgpos p);
/* Read the line at p (without its \n, at most UI_PG_LINE_MAX bytes). */
int ui_pg_read(const struct ui_pgdoc *d, struct ui_pgpos p, struct buf *out);
/* Bytes before p, for a percentage. */
int64_t ui_pg_offset(const struct ui_pgdoc *d, struct ui_pgpos p);

/* An incremental search: each step scans at most budget bytes so the
 * loop stays responsive. */
struct ui_pgsearch {
	char *needle;
	int dir;            /* +1 forward, -1 backward */
	struct ui_pgpos at; /* where the scan goes on */
	struct ui_pgpos hit;
	int64_t scanned;
	int done, found;
};
void ui_pg_search_start(struct ui_pgsearch *s, const char *needle, int dir,
                        struct ui_pgpos from);
/* 1 when finished (found says whether), 0 to be called again. */
int ui_pg_search_step(struct ui_pgsearch *s, const struct ui_pgdoc *d,
                      int64_t budget);
void ui_pg_search_free(struct ui_pgsearch *s);

/* ---- the workspace tree (tree.c) ----------------------------------------- */

enum ui_ntype { UI_N_FILE, UI_N_DIR, UI_N_LINK, UI_N_OTHER };
enum ui_mark { UI_MARK_NONE, UI_MARK_NEW, UI_MARK_MOD };

struct ui_node {
	char *name;
	char *path; /* workspace-relative */
	enum ui_ntype type;
	double size, mtime;
	enum ui_mark mark;
	int expanded;
	int seen; /* sync generation */
	struct ui_node *parent;
	struct ui_node **kid;
	size_t nkid, capkid;
};

#define UI_TREE_MAX 20000 /* nodes kept */

struct ui_tree {
	struct ui_node root;
	size_t count;
	int truncated;
	int gen;
	/* the visible rows, rebuilt when dirty */
	struct ui_node **vis;
	int *depth;
	size_t nvis, capvis;
	int vis_dirty;
};

void ui_tree_init(struct ui_tree *t);
void ui_tree_free(struct ui_tree *t);
/* Create or update path (parents become directories). */
struct ui_node *ui_tree_set(struct ui_tree *t, const char *path,
                            enum ui_ntype type, double size, double mtime,
                            enum ui_mark mark);
void ui_tree_remove(struct ui_tree *t, const char *path);
struct ui_node *ui_tree_find(struct ui_tree *t, const char *path);
/* Make the tree match a full listing ({"path","type","size","mtime"}),
 * marking what is new or changed since the last listing. */
void ui_tree_sync(struct ui_tree *t, const cJSON *list, int truncated);
void ui_tree_clear_marks(struct ui_tree *t);
/* A directory opened (open) or closed. */
void ui_tree_expand(struct ui_tree *t, struct ui_node *n, int open);
/* The visible rows (expanded directories' children), in order. */
void ui_tree_visible(struct ui_tree *t);

/* ---- the model built from events (model.c) --------------------------------
 */

enum ui_phase {
	UI_STARTING,
	UI_REQUESTING,
	UI_EXECUTING,
	UI_IDLE,
	UI_ENDED,
};

enum ui_item_kind {
	UI_ITEM_USER,
	UI_ITEM_ASSISTANT,
	UI_ITEM_CALL,
	UI_ITEM_NOTICE,
	UI_ITEM_ERROR,
	UI_ITEM_END,
	UI_ITEM_IMAGE,   /* an image made or changed: "created|updated PATH" */
	UI_ITEM_SUMMARY, /* a compaction's summary (the model's text) */
};

struct ui_item {
	enum ui_item_kind kind;
	struct buf text; /* raw (untrusted) text */
	int call;        /* UI_ITEM_CALL: index into calls */
	int streaming;
	int turn;
	/* rendered rows at a width, made again when dirty */
	struct ui_rows rows;
	int rows_w;
	int rows_dirty;
};

enum ui_call_state {
	UI_CALL_PENDING,
	UI_CALL_RUNNING,
	UI_CALL_DONE,
	UI_CALL_DENIED,
};

/* One output line of a call, stdout or stderr. */
struct ui_oline {
	char *st;
	uint8_t err;
};

#define UI_CALL_LINES_MAX 2000
#define UI_CALL_BYTES_MAX (256u << 10)

/* An image sent to the model after a call (image_sent): what it saw,
 * or why it was not sent. */
struct ui_sent {
	char *path;  /* the workspace path named */
	char *file;  /* the run dir's copy, "images/<sha256>.<ext>" (a
	                 form checked: NULL otherwise, or not sent) */
	char *error; /* not sent: why; NULL when sent */
	int width, height;
	long tokens;
	int stale; /* the workspace file changed after it was sent */
};

#define UI_SENT_MAX 16 /* per call; more are counted, not kept */

struct ui_call {
	char *id;
	char *name;
	char *summary; /* first line of the command, code or path */
	char *detail;  /* the whole command or content (bounded) */
	enum ui_call_state state;
	int is_exec;
	int exit_code, sig, timed_out, cancelled, is_error;
	int asking; /* an approval_request waits for a person */
	int64_t t_start, duration_ms; /* event clock */
	uint64_t bytes[2];            /* stdout, stderr */
	int truncated;  /* the events lost some output: read the files */
	char *result;   /* tool_result content (bounded) */
	char *progress; /* an MCP call's last progress, while it runs */
	struct ui_term term[2];
	int term_live;
	/* recent output lines: a ring */
	struct ui_oline *line;
	size_t nline, head; /* head: index of the oldest */
	size_t line_bytes;
	uint64_t lines_dropped;
	int item;             /* its summary in the conversation */
	int turn;             /* the turn that asked for it */
	struct ui_sent *sent; /* images sent to the model after it */
	int nsent, sent_dropped;
};

/* What a call changed in a file (workspace_change's diff). */
struct ui_fdiff {
	int call; /* index into calls, -1 unknown */
	char *path;
	char *kind;    /* created, modified, deleted */
	char *hunks;   /* diff -u's hunks, NULL: none kept */
	char *skipped; /* why there is no diff (binary, over 256 KiB) */
	int added, removed, cut;
};

enum {
	UI_DIRTY_CONV = 1,
	UI_DIRTY_TOOLS = 2,
	UI_DIRTY_TREE = 4,
	UI_DIRTY_STATUS = 8,
};

/* part: m, owner: src/tui/model.c */
struct ui_model {
	/* the inputs mounted into the workspace (run_start's inputs of
	 * mode "mount"): their files are read from their sources */
	struct path_mounts mounts;
	char *provider, *model_name, *backend, *ask, *workspace, *run_dir,
	    *run_id;
	int max_turns;
	int turn;
	double in_tokens, out_tokens, cost;
	double last_cost; /* the last turn's; -1 unknown */
	int unpriced;     /* turns of unknown cost (no price) */
	/* the conversation's size: the last request's (estimated, then
	 * measured) against the model's context window (0 unknown) */
	double ctx_tokens, ctx_window;
	int compacting; /* a compaction's summary is on its way */
	/* slow work the status bar names once it takes a second ("hashing
	 * input/x: 61%, 1.4 GB/s"), NULL when none */
	char *progress;
	double *turn_cost; /* [turn]: its cost, -1 unknown (turns from 1) */
	int nturn_cost;
	int64_t t0_mono;     /* now_ms() at event t = 0 */
	int64_t last_t;      /* t of the last event */
	int64_t end_ms;      /* duration once ended */
	int64_t fixed_clock; /* ASSAY_TUI_CLOCK_MS, or -1 */
	enum ui_phase phase;
	char *end_status;
	int exit_code;
	int sandbox_running;
	struct ui_item *items;
	int nitems, capitems;
	struct ui_call **calls; /* stable addresses: terms point at them */
	int ncalls, capcalls;
	struct ui_tree tree;
	struct ui_fdiff *fdiffs; /* in the order of the events */
	int nfdiffs, capfdiffs;
	size_t fdiff_bytes; /* hunks kept (at most UI_FDIFF_BYTES) */
	unsigned dirty;
	int new_call;    /* a call started or ended since the UI looked */
	int active_call; /* which one */
	char *last_idle_reason;
	char *last_image;        /* the newest image the events named */
	double last_image_mtime; /* its mtime (0: not known) */
	/* the image view_image sent last, when no image changed since:
	 * call, index in its sent[]; call -1 otherwise */
	int last_sent_call, last_sent_idx;
	int no_key; /* the provider has no API key */
	/* hooks for the live frontend (may be NULL) */
	void (*on_run_start)(void *arg);
	void (*on_run_end)(void *arg);
	void *hook_arg;
};

/* What call c cost: an even share of the turn that asked for it and of
 * the turn that read its result (the next); -1 while unknown (no
 * price, or a turn not reported yet). */
double ui_call_cost(const struct ui_model *m, const struct ui_call *c);

#define UI_FDIFF_BYTES (64u << 20)

void ui_model_init(struct ui_model *m);
/* "sent to the model: 800×450, ~480 tokens" (times: the glyph between
 * the numbers), or "not sent to the model: WHY"; with the path when it
 * is not the call's own (other: the call's summary). Caller frees. */
char *ui_sent_line(const struct ui_sent *s, const char *times,
                   const char *other);
/* The copy the model was last sent of the workspace image path, as it
 * is now (sent since it last changed), or NULL. */
const struct ui_sent *ui_model_sent_copy(const struct ui_model *m,
                                         const char *path);
void ui_model_free(struct ui_model *m);
/* The hooks run_start (and run_resume) and run_end call (NULL: none). */
void ui_model_hooks(struct ui_model *m, void (*start)(void *arg),
                    void (*end)(void *arg), void *arg);
/* The view must redraw these (UI_DIRTY_*) too; what it must redraw
 * since it last asked (then nothing). */
void ui_model_touch(struct ui_model *m, unsigned bits);
unsigned ui_model_take_dirty(struct ui_model *m);
/* A call started or ended since the view last asked. */
int ui_model_take_new_call(struct ui_model *m);
/* The clocks go on from run time t now. */
void ui_model_set_clock(struct ui_model *m, int64_t t);
/* The clock stands at run time t (a replay's step), whatever the time. */
void ui_model_fix_clock(struct ui_model *m, int64_t t);
/* The provider has no API key (the status bar marks the model). */
void ui_model_set_no_key(struct ui_model *m);
void ui_model_event(struct ui_model *m, const cJSON *ev);
/* A notice of the frontend's own in the conversation. */
void ui_model_notice(struct ui_model *m, const char *text);
struct ui_call *ui_model_call(struct ui_model *m, const char *id);
/* The i-th newest line of a call (0 = newest); NULL past the ring. */
const struct ui_oline *ui_call_line(const struct ui_call *c, size_t i);
/* exec/<id>.stdout|stderr of a call in the run dir (caller frees). */
char *ui_call_file(const struct ui_model *m, const struct ui_call *c, int err);
/* Milliseconds on the run's clock (ASSAY_TUI_CLOCK_MS pins it). */
int64_t ui_model_now(const struct ui_model *m);

#endif
