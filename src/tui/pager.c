/* pager.c: the full output of a call (exec/<id>.stdout|stderr in the
 * run dir) or a workspace file, on the whole screen, read on demand
 * through pagefile.c: scroll, head/tail (following a growing file at
 * the tail), search forward and back in steps that keep the loop
 * responsive, and stdout / stderr / both. Every line goes through the
 * sanitizer like live output does. */
#include "tui/ui.h"
#include "assay/termtext.h"

#include "assay/loop.h"
#include "assay/path.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SEARCH_BUDGET (16 << 20) /* bytes per step of the loop */
#define PEEK_BYTES 8192

enum { MODE_OUT, MODE_ERR, MODE_BOTH };

struct ui_pager {
	struct ui_overlay ov; /* on the stack while it is open */
	struct ui_pgdoc doc;
	char *title;
	int call; /* -1: a file */
	int mode;
	int err_part; /* the part that is stderr, -1 */
	struct ui_pgpos top;
	int follow;
	char *needle;
	struct ui_pgsearch srch;
	int searching;
	int search_dir;
	uint64_t timer;
	int prompting;
	int prompt_dir;
	struct buf prompt;
	char *msg;
	struct ui_pgpos hit;
	int have_hit;
	int rows;
	int lines_shown;
};

static void pager_set_msg(struct ui_pager *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The message in the bottom line (NULL: the key hints). */
static void pager_set_msg(struct ui_pager *p, const char *fmt, ...)
{
	free(p->msg);
	p->msg = NULL;
	if (!fmt)
		return;
	va_list ap;
	va_start(ap, fmt);
	p->msg = xvasprintf(fmt, ap);
	va_end(ap);
}

/* A run dir's or a workspace's file: never a FIFO (the open would
 * block the loop), never through a link. */
static int pager_open_ro(const char *path)
{
	return path ? open_regular(path, O_RDONLY | O_NOFOLLOW, 0, NULL) : -1;
}

/* (Re)build the document of a call for the current mode. */
static int pager_build_call_doc(struct ui *u, struct ui_pager *p)
{
	struct ui_call *c = u->m.calls[p->call];
	ui_pg_free(&p->doc);
	ui_pg_init(&p->doc);
	p->err_part = -1;
	if (!c->is_exec) {
		/* what the tool was given and what it answered: small,
		 * from the events; a memfd lets the pager read it */
		int fd = memfd_create("assay-result", MFD_CLOEXEC);
		if (fd < 0)
			return -1;
		struct buf b;
		buf_init(&b, 0);
		buf_printf(&b, "%s\n\n-- result --\n%s\n",
		           c->detail ? c->detail : "",
		           c->result ? c->result : "(none yet)");
		ssize_t w = write(fd, b.data, b.len);
		buf_free(&b);
		if (w < 0) {
			close(fd);
			return -1;
		}
		ui_pg_add_file(&p->doc, fd);
		return 0;
	}
	char *out = ui_call_file(&u->m, c, 0), *err = ui_call_file(&u->m, c, 1);
	int fo = p->mode != MODE_ERR ? pager_open_ro(out) : -1;
	int fe = p->mode != MODE_OUT ? pager_open_ro(err) : -1;
	free(out);
	free(err);
	if (p->mode == MODE_BOTH) {
		char sz[16];
		ui_fmt_size(sz, sizeof sz, (double)c->bytes[0]);
		char *h = xasprintf("---- stdout (%s) ----", sz);
		ui_pg_add_header(&p->doc, h);
		free(h);
	}
	if (fo >= 0)
		ui_pg_add_file(&p->doc, fo);
	if (p->mode == MODE_BOTH) {
		char sz[16];
		ui_fmt_size(sz, sizeof sz, (double)c->bytes[1]);
		char *h = xasprintf("---- stderr (%s) ----", sz);
		ui_pg_add_header(&p->doc, h);
		free(h);
	}
	if (fe >= 0) {
		p->err_part = p->doc.n;
		ui_pg_add_file(&p->doc, fe);
	}
	return (fo >= 0 || fe >= 0) ? 0 : -1;
}

static const char *pager_mode_name(int mode)
{
	return mode == MODE_OUT   ? "stdout"
	       : mode == MODE_ERR ? "stderr"
	                          : "stdout+stderr";
}

static void pager_draw(struct ui *u, struct ui_overlay *o);
static int pager_key(struct ui *u, struct ui_overlay *o, int key, int fn);
static void pager_overlay_free(struct ui *u, struct ui_overlay *o);

/* A pager on nothing yet: the caller adds the document's parts. */
static struct ui_pager *pager_new(void)
{
	struct ui_pager *p = xcalloc(1, sizeof *p);
	p->ov = (struct ui_overlay){
	    .name = "pager",
	    .layer = UI_LAYER_VIEW,
	    .flags = UI_OV_OPAQUE | UI_OV_COVERS_IMAGES,
	    .draw = pager_draw,
	    .key = pager_key,
	    .mouse = ui_overlay_mouse_eat,
	    .free = pager_overlay_free,
	};
	ui_pg_init(&p->doc);
	buf_init(&p->prompt, 1024);
	p->err_part = -1;
	p->call = -1;
	return p;
}

/* A pager and its document. */
static void pager_free(struct ui *u, struct ui_pager *p)
{
	if (p->timer)
		loop_timer_cancel(u->loop, p->timer);
	ui_pg_free(&p->doc);
	ui_pg_search_free(&p->srch);
	buf_free(&p->prompt);
	free(p->title);
	free(p->needle);
	free(p->msg);
	free(p);
}

/* Off the stack: the pager goes. */
static void pager_overlay_free(struct ui *u, struct ui_overlay *o)
{
	(void)o;
	pager_free(u, u->pager);
	u->pager = NULL;
	ui_touch(u, UI_DIRTY_EVERYTHING);
}

void ui_pager_close(struct ui *u)
{
	if (u->pager)
		ui_overlay_pop(u, &u->pager->ov);
}

/* p on the screen, in place of the one open. */
static void pager_show(struct ui *u, struct ui_pager *p)
{
	ui_pager_close(u);
	u->pager = p;
	ui_overlay_push(u, &p->ov);
	ui_touch(u, UI_DIRTY_EVERYTHING);
}

void ui_pager_open_call(struct ui *u, int i)
{
	if (i < 0 || i >= u->m.ncalls)
		return;
	struct ui_call *c = u->m.calls[i];
	struct ui_pager *p = pager_new();
	p->call = i;
	p->mode = c->bytes[0] && c->bytes[1] ? MODE_BOTH
	          : c->bytes[1]              ? MODE_ERR
	                                     : MODE_OUT;
	if (pager_build_call_doc(u, p) < 0) {
		pager_free(u, p);
		ui_notice(u, "no output file for #%d (yet)", i + 1);
		return;
	}
	char *name = term_clean(c->name, strlen(c->name), 0);
	p->title = xasprintf("#%d %s", i + 1, name);
	free(name);
	p->top = ui_pg_head(&p->doc);
	pager_show(u, p);
}

int ui_open_workspace_file(struct ui *u, const char *rel)
{
	char *err = NULL;
	if (u->ws.fd < 0) {
		ui_notice(u, "files can be opened with the local sandbox only");
		return -1;
	}
	int fd = path_open_mapped(u->ws.fd, &u->m.mounts, rel,
	                          O_RDONLY | O_CLOEXEC, 0, &err);
	if (fd < 0) {
		char *clean = term_clean(err, strlen(err), 0);
		ui_notice(u, "%s", clean);
		free(clean);
		free(err);
	}
	return fd;
}

void ui_pager_open_file(struct ui *u, const char *rel)
{
	int fd = ui_open_workspace_file(u, rel);
	if (fd < 0)
		return;
	char peek[PEEK_BYTES];
	ssize_t n = pread(fd, peek, sizeof peek, 0);
	if (n > 8 && !memcmp(peek, "\x89PNG\r\n\x1a\n", 8)) {
		close(fd);
		ui_preview_open(u, rel, 0); /* a PNG by its bytes */
		return;
	}
	if (n > 0 && memchr(peek, '\0', (size_t)n)) {
		close(fd);
		ui_notice(u, "a binary file: not shown");
		return;
	}
	struct ui_pager *p = pager_new();
	ui_pg_add_file(&p->doc, fd);
	p->title = term_clean(rel, strlen(rel), 0);
	p->top = ui_pg_head(&p->doc);
	pager_show(u, p);
}

/* ---- drawing ---------------------------------------------------------- */

struct line_sink {
	struct ui_rows *rows;
};

static void pager_line_emit(void *arg, const char *line, size_t n)
{
	struct line_sink *k = arg;
	ui_rows_push(k->rows, xstrndup(line, n));
}

/* The display rows of the line at pos (sanitised, highlighted). */
static void pager_line_rows(struct ui_pager *p, struct ui_pgpos pos, int width,
                            struct ui_rows *out)
{
	struct buf raw;
	buf_init(&raw, 0);
	ui_pg_read(&p->doc, pos, &raw);
	struct ui_rows lines = {0};
	struct line_sink sink = {&lines};
	struct ui_term t;
	ui_term_init(&t, pager_line_emit, &sink);
	ui_term_feed(&t, raw.data ? raw.data : "", raw.len);
	ui_term_flush(&t);
	ui_term_free(&t);
	if (!lines.n)
		ui_rows_push(&lines, xstrdup(""));
	for (int i = 0; i < lines.n; i++) {
		int found = 0;
		char *hl = ui_st_highlight(lines.row[i], strlen(lines.row[i]),
		                           p->needle, &found);
		ui_st_wrap(hl, strlen(hl), width, 0, out);
		free(hl);
	}
	ui_rows_free(&lines);
	buf_free(&raw);
}

/* Put the last lines on the screen. */
static void pager_anchor_bottom(struct ui_pager *p, int rows, int width)
{
	struct ui_pgpos pos = ui_pg_end(&p->doc), best = ui_pg_head(&p->doc);
	int used = 0;
	while (ui_pg_prev(&p->doc, &pos) == 0) {
		struct ui_rows r = {0};
		pager_line_rows(p, pos, width, &r);
		int n = r.n;
		ui_rows_free(&r);
		if (used + n > rows && used > 0)
			break;
		used += n;
		best = pos;
		if (used >= rows)
			break;
	}
	p->top = best;
}

/* The page over the whole screen but the status bar. */
static void pager_draw(struct ui *u, struct ui_overlay *o)
{
	struct ui_pager *p = u->pager;
	WINDOW *w = newwin(u->lay.rows - 1, u->lay.cols, 0, 0);
	int h, wd;
	(void)o;
	leaveok(w, TRUE);
	getmaxyx(w, h, wd);
	ui_background(w);
	werase(w);
	ui_pg_refresh(&p->doc);
	int rows = h - 2, width = wd - 1;
	p->rows = rows;
	if (p->follow)
		pager_anchor_bottom(p, rows, width);
	int64_t total = ui_pg_total(&p->doc);
	int64_t at = ui_pg_offset(&p->doc, p->top);
	char sz[16];
	ui_fmt_size(sz, sizeof sz, (double)total);
	/* a long path keeps its end, where the file's name is */
	const char *title = p->title;
	int tmax = wd / 2 > 8 ? wd / 2 : 8;
	while (ui_st_width(title, strlen(title)) > tmax) {
		uint32_t cp;
		title += ui_u8_decode(title, strlen(title), &cp);
	}
	char *head = xasprintf(" %s%s%s%s  %s  %d%%%s",
	                       title == p->title ? "" : ui_glyph(G_ELLIPSIS),
	                       title, p->call >= 0 ? ": " : "",
	                       p->call >= 0 ? pager_mode_name(p->mode) : "", sz,
	                       total ? (int)(at * 100 / total) : 100,
	                       p->follow ? "  (following)" : "");
	ui_fill(w, 0, 0, wd, UE_STATUS);
	ui_draw_text(w, 0, 0, wd, head, UE_STATUS);
	free(head);
	struct ui_pgpos pos = p->top;
	int y = 1, lines = 0;
	if (pos.part < p->doc.n) {
		while (y <= rows) {
			struct ui_rows r = {0};
			pager_line_rows(p, pos, width, &r);
			enum ui_elem base =
			    p->doc.part[pos.part].header ? UE_DIM
			    : pos.part == p->err_part    ? UE_STDERR
			                                 : UE_STDOUT;
			int k = 0;
			for (; k < r.n && y <= rows; k++, y++)
				ui_draw_st(w, y, 0, width, r.row[k],
				           strlen(r.row[k]), base);
			if (k == r.n)
				lines++;
			ui_rows_free(&r);
			if (ui_pg_next(&p->doc, &pos) < 0)
				break;
		}
	} else {
		ui_draw_text(w, 1, 0, width, "(empty)", UE_DIM);
	}
	p->lines_shown = lines;
	ui_fill(w, h - 1, 0, wd, UE_STATUS);
	if (p->prompting) {
		char *shown = term_clean(buf_str(&p->prompt), p->prompt.len, 0);
		char *line =
		    xasprintf("%c%s", p->prompt_dir > 0 ? '/' : '?', shown);
		ui_draw_text(w, h - 1, 0, wd, line, UE_STATUS);
		free(line);
		free(shown);
	} else if (p->msg) {
		ui_draw_text(w, h - 1, 0, wd, p->msg, UE_WARNING);
	} else {
		ui_draw_text(w, h - 1, 0, wd,
		             " j/k scroll  PgUp/PgDn  g/G head/tail  / ? "
		             "search  n/N next/prev  s stdout/stderr/both  "
		             "Esc back",
		             UE_STATUS);
	}
	wnoutrefresh(w);
	delwin(w);
}

/* ---- moving ------------------------------------------------------------ */

/* The top line n lines on (or back). */
static void pager_move_lines(struct ui_pager *p, int n)
{
	for (; n > 0; n--) {
		struct ui_pgpos nx = p->top;
		if (ui_pg_next(&p->doc, &nx) < 0)
			break;
		p->top = nx;
	}
	for (; n < 0; n++)
		if (ui_pg_prev(&p->doc, &p->top) < 0)
			break;
}

static void pager_search_tick(void *arg);

/* Start searching for the needle, from the top line or after the last hit. */
static void pager_search_begin(struct ui *u, int dir, int fresh)
{
	struct ui_pager *p = u->pager;
	if (!p->needle || !*p->needle)
		return;
	struct ui_pgpos from = p->top;
	if (!fresh && p->have_hit) {
		from = p->hit;
		if (dir > 0)
			from.off++;
	}
	ui_pg_search_start(&p->srch, p->needle, dir, from);
	p->searching = 1;
	p->search_dir = dir;
	pager_set_msg(p, "searching...");
	if (!p->timer)
		p->timer = loop_timer_add(u->loop, 0, pager_search_tick, u);
	ui_touch(u, UI_DIRTY_PAGER);
}

/* One step of the search (SEARCH_BUDGET bytes), then the loop again. */
static void pager_search_tick(void *arg)
{
	struct ui *u = arg;
	struct ui_pager *p = u->pager;
	p->timer = 0;
	if (!p->searching)
		return;
	int64_t total = ui_pg_total(&p->doc);
	if (!ui_pg_search_step(&p->srch, &p->doc, SEARCH_BUDGET)) {
		pager_set_msg(p, "searching... %d%%",
		              total ? (int)(p->srch.scanned * 100 / total) : 0);
		p->timer = loop_timer_add(u->loop, 0, pager_search_tick, u);
		ui_touch(u, UI_DIRTY_PAGER);
		return;
	}
	p->searching = 0;
	char *shown = term_clean(p->needle, strlen(p->needle), 0);
	if (p->srch.found) {
		p->hit = p->srch.hit;
		p->have_hit = 1;
		p->follow = 0;
		p->top = ui_pg_line_start(&p->doc, p->hit);
		int64_t at = ui_pg_offset(&p->doc, p->hit);
		pager_set_msg(p, "%s: match at byte %lld (%d%%)", shown,
		              (long long)at,
		              total ? (int)(at * 100 / total) : 100);
	} else {
		pager_set_msg(p, "%s: no %s match", shown,
		              p->search_dir > 0 ? "further" : "earlier");
	}
	free(shown);
	ui_touch(u, UI_DIRTY_PAGER);
}

int ui_pager_busy(const struct ui *u)
{
	return u->pager && u->pager->searching;
}

void ui_pager_cancel_search(struct ui *u)
{
	struct ui_pager *p = u->pager;
	if (!p || !p->searching)
		return;
	p->searching = 0;
	if (p->timer)
		loop_timer_cancel(u->loop, p->timer);
	p->timer = 0;
	pager_set_msg(p, "search stopped");
	ui_touch(u, UI_DIRTY_PAGER);
}

/* A key in the / or ? prompt; Enter starts the search. */
static int pager_prompt_key(struct ui *u, int key, int is_fn)
{
	struct ui_pager *p = u->pager;
	if (ui_key_enter(key, is_fn)) {
		p->prompting = 0;
		if (p->prompt.len) {
			free(p->needle);
			p->needle = xstrdup(buf_str(&p->prompt));
			p->have_hit = 0;
			pager_search_begin(u, p->prompt_dir, 1);
		}
	} else if (!is_fn && key == UI_KEY_ESC) {
		p->prompting = 0;
	} else if (ui_key_backspace(key, is_fn)) {
		if (p->prompt.len) {
			size_t n = p->prompt.len - 1;
			while (n > 0 && ((unsigned char)p->prompt.data[n] &
			                 0xC0) == 0x80)
				n--;
			p->prompt.len = n;
			p->prompt.data[n] = '\0';
		}
	} else if (ui_key_text(key, is_fn)) {
		char u8[4];
		buf_append(&p->prompt, u8, ui_u8_encode((uint32_t)key, u8));
	}
	ui_touch(u, UI_DIRTY_PAGER);
	return 1;
}

/* A pager key: what curses names is mapped to its letter first. */
static int pager_key_map(int key)
{
	switch (key) {
	case KEY_DOWN:
		return 'j';
	case KEY_UP:
		return 'k';
	case KEY_NPAGE:
		return ' ';
	case KEY_PPAGE:
		return 'b';
	case KEY_HOME:
		return 'g';
	case KEY_END:
		return 'G';
	default:
		return 0;
	}
}

/* s: stdout, stderr or both of a command. */
static void pager_switch_mode(struct ui *u, struct ui_pager *p)
{
	if (p->call < 0 || !u->m.calls[p->call]->is_exec)
		return;
	ui_pager_cancel_search(u);
	p->mode = (p->mode + 1) % 3;
	p->have_hit = 0;
	if (pager_build_call_doc(u, p) < 0)
		pager_set_msg(p, "no %s file", pager_mode_name(p->mode));
	p->top = ui_pg_head(&p->doc);
	p->follow = 0;
}

/* Every key while the pager is open; what it does not know is eaten. */
static int pager_key(struct ui *u, struct ui_overlay *o, int key, int is_fn)
{
	struct ui_pager *p = u->pager;
	(void)o;
	if (p->prompting)
		return pager_prompt_key(u, key, is_fn);
	int page = p->rows > 1 ? p->rows - 1 : 1;
	if (is_fn && !(key = pager_key_map(key)))
		return 1;
	pager_set_msg(p, NULL);
	switch (key) {
	case UI_KEY_ESC:
	case 'q':
		ui_pager_close(u); /* p is gone */
		return 1;
	case 'j':
	case UI_KEY_ENTER:
		pager_move_lines(p, 1);
		break;
	case 'k':
		p->follow = 0;
		pager_move_lines(p, -1);
		break;
	case ' ':
	case UI_KEY_CTRL_F:
		pager_move_lines(p,
		                 p->lines_shown > 1 ? p->lines_shown - 1 : 1);
		break;
	case 'b':
	case UI_KEY_CTRL_B:
		p->follow = 0;
		pager_move_lines(p, -page);
		break;
	case 'g':
		p->follow = 0;
		p->top = ui_pg_head(&p->doc);
		break;
	case 'G':
		p->follow = 1;
		break;
	case '/':
	case '?':
		p->prompting = 1;
		p->prompt_dir = key == '/' ? 1 : -1;
		buf_reset(&p->prompt);
		break;
	case 'n':
		pager_search_begin(u, p->search_dir ? p->search_dir : 1, 0);
		break;
	case 'N':
		pager_search_begin(u, p->search_dir ? -p->search_dir : -1, 0);
		break;
	case 's':
		pager_switch_mode(u, p);
		break;
	default:
		return 1;
	}
	ui_touch(u, UI_DIRTY_PAGER);
	return 1;
}
