/* preview.c: image previews in the workbench. What the terminal can show
 * (sixel, kitty, half blocks or nothing) is asked once before curses
 * starts (termcaps.c); renderings come from the assay-image helper
 * (image.c) without blocking the loop; this file decides where an image
 * goes and writes it to the tty after curses has sent the frame.
 *
 * Placement (terminal.md): curses never knows about the pixels. The
 * preview box is a window of ours in place of the Tools pane (or the
 * whole screen above the status bar with v); its inside is blank cells
 * that nothing but overlays ever draws over, so curses has no reason to
 * write there and the image is sent once, not every frame. It is erased
 * (kitty: a delete command; sixel and blocks: wredrawln, so that curses
 * rewrites those cells) when an overlay, the pager or a clear of the
 * screen covers it, when the box moves or the file changes, or when
 * curscr shows that something else was drawn in its cells; it is placed
 * again after the first frame that leaves its cells blank.
 *
 * The bytes go out through a queue that the loop drains as the terminal
 * takes them (preview_tty.c), so a slow terminal never stalls the loop;
 * no curses frame is sent while a placement is half written. kitty gets the
 * image once (a=t, under our id) and each placement is a few bytes (a=p); an
 * erase deletes the placement and keeps the data (d=i), a new rendering frees
 * the old data first (d=I). */
#include "tui/ui.h"
#include "assay/termtext.h"

#include "tui/image.h"
#include "tui/preview_internal.h"
#include "tui/replay.h"
#include "tui/termcaps.h"

#include "assay/events.h"
#include "assay/config.h"
#include "assay/log.h"
#include "assay/path.h"
#include "assay/sandbox.h"
#include "assay/session.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#define REMOTE_MAX (32u << 20) /* a file read from a remote sandbox */
#define DETECT_MS 150          /* the terminal's time to answer */
#define IMG_BG 0xffffff        /* under transparent pixels */

/* A read of the file from a remote sandbox; outlives the preview if
 * the sandbox answers late. */
struct pv_read {
	struct ui *u; /* NULL once the preview is gone */
	unsigned gen;
};

/* ---- the terminal: what it shows -------------------------------------- */

static void preview_large_draw(struct ui *u, struct ui_overlay *o);
static int preview_large_key(struct ui *u, struct ui_overlay *o, int key,
                             int fn);

/* A preview of nothing yet. */
static struct ui_preview *pv_new(void)
{
	struct ui_preview *p = xcalloc(1, sizeof *p);
	p->large = (struct ui_overlay){
	    .name = "image",
	    .layer = UI_LAYER_VIEW,
	    .draw = preview_large_draw,
	    .key = preview_large_key,
	};
	p->fd = -1;
	p->run_fd = -1;
	p->out_fd = -1;
	buf_init(&p->out, 0);
	ui_termcaps_init(&p->tc);
	return p;
}

void ui_preview_detect(struct ui *u)
{
	if (!u->preview)
		u->preview = pv_new();
	struct ui_preview *p = u->preview;
	const char *want = u->cfg && u->cfg->images ? u->cfg->images : "auto";
	if (ui_termcaps_detect(STDIN_FILENO, STDOUT_FILENO, want, DETECT_MS,
	                       &p->tc) < 0)
		p->tc.mode = UI_GFX_OFF;
	log_info("tui: images: %s (%s)", ui_termcaps_mode_name(p->tc.mode),
	         p->tc.why);
}

/* Keys typed while the terminal was asked go back to curses. */
void ui_preview_typeahead(struct ui *u)
{
	struct ui_preview *p = u->preview;
	if (!p)
		return;
	for (size_t i = p->tc.n_typeahead; i > 0; i--)
		ungetch((unsigned char)p->tc.typeahead[i - 1]);
	p->tc.n_typeahead = 0;
}

/* The preview state, made on first use (placeholders only). */
static struct ui_preview *preview_get(struct ui *u)
{
	if (!u->preview) {
		/* not asked (no terminal query ran): text placeholders */
		u->preview = pv_new();
		u->preview->tc.mode = UI_GFX_OFF;
	}
	return u->preview;
}

/* ---- what to show ---------------------------------------------------------
 */

int ui_preview_is_image(const char *path)
{
	size_t n = path ? strlen(path) : 0;
	return n > 4 && !strcasecmp(path + n - 4, ".png");
}

/* The newest image: the last one the events named, else the newest
 * .png of the tree. */
static const char *preview_newest_image(struct ui *u)
{
	struct ui_tree *t = &u->m.tree;
	if (u->m.last_image && ui_tree_find(t, u->m.last_image))
		return u->m.last_image;
	const char *best = NULL;
	double when = -1;
	/* every node, not only the visible rows */
	struct ui_node *stack[64];
	size_t idx[64];
	int sp = 0;
	stack[0] = &t->root;
	idx[0] = 0;
	while (sp >= 0) {
		struct ui_node *n = stack[sp];
		if (idx[sp] >= n->nkid) {
			sp--;
			continue;
		}
		struct ui_node *k = n->kid[idx[sp]++];
		if (k->type == UI_N_FILE && ui_preview_is_image(k->path) &&
		    k->mtime > when) {
			when = k->mtime;
			best = k->path;
		}
		if (k->type == UI_N_DIR && k->nkid && sp + 1 < 64) {
			stack[++sp] = k;
			idx[sp] = 0;
		}
	}
	if (!best && u->m.last_image)
		best = u->m.last_image;
	return best;
}

static void preview_set_msg(struct ui_preview *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* An error with the file (cleaned), shown in the box. */
static void preview_set_msg(struct ui_preview *p, const char *fmt, ...)
{
	free(p->msg);
	p->msg = NULL;
	if (!fmt)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *raw = xvasprintf(fmt, ap);
	va_end(ap);
	p->msg = term_clean(raw, strlen(raw), 0);
	free(raw);
}

/* The rendering (and a request for one) goes. */
static void preview_drop_rendering(struct ui_preview *p)
{
	if (p->req && p->cache)
		ui_img_cancel(p->cache, p->req);
	p->req = 0;
	ui_img_unref(p->img);
	p->img = NULL;
}

/* The image on the tty goes: kitty deletes it; for the others curses
 * forgets what it believes is in those cells and rewrites them (with
 * the overlay, or blanks in explicit colours) in the next doupdate. */
static void preview_erase_placed(struct ui *u)
{
	struct ui_preview *p = u->preview;
	if (!p->placed)
		return;
	p->placed = 0;
	if (p->pmode == UI_GFX_KITTY) {
		p->kitty_delete = 1;
		return;
	}
	int rows, cols;
	getmaxyx(curscr, rows, cols);
	int y = p->py, x = p->px, h = p->prows, w = p->pcols;
	if (y >= rows || x >= cols)
		return;
	if (y + h > rows)
		h = rows - y;
	if (x + w > cols)
		w = cols - x;
	WINDOW *tmp = newwin(h, w, y, x);
	if (tmp) {
		wredrawln(tmp, 0, h);
		delwin(tmp);
	}
}

static void preview_on_read(void *arg, int rc, const char *err,
                            struct buf *data, cJSON *list);

/* An image sent to the model: its copy in the run dir, opened beneath
 * it (the run dir is the host's, whatever the sandbox). */
static void preview_load_sent(struct ui *u)
{
	struct ui_preview *p = u->preview;
	char *err = NULL;
	if (p->run_fd >= 0)
		close(p->run_fd);
	p->run_fd = u->m.run_dir
	                ? open(u->m.run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
	                : -1;
	if (!ev_image_file_ok(p->rel))
		preview_set_msg(p, "%s: not an image the run dir keeps",
		                p->rel);
	else if (p->run_fd < 0)
		preview_set_msg(p, "the run dir %s: %s",
		                u->m.run_dir ? u->m.run_dir : "(none)",
		                strerror(errno));
	else if (ui_img_probe(p->run_fd, NULL, p->rel, &p->src_w, &p->src_h,
	                      &p->bytes, &err) == 0)
		p->have_probe = 1;
	else
		preview_set_msg(p, "%s", err ? err : "cannot read the image");
	free(err);
}

/* (Re)load the file: its header for the title, and for a remote
 * sandbox its bytes into a memfd first. */
static void preview_load(struct ui *u)
{
	struct ui_preview *p = u->preview;
	preview_drop_rendering(p);
	preview_erase_placed(u);
	preview_set_msg(p, NULL);
	free(p->rmsg);
	p->rmsg = NULL;
	p->gen++;
	p->have_probe = 0;
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	if (p->rd)
		p->rd->u = NULL; /* a late answer is dropped */
	p->rd = NULL;
	struct ui_node *n = p->sent ? NULL : ui_tree_find(&u->m.tree, p->rel);
	p->node_size = n ? n->size : -1;
	char *err = NULL;
	if (p->sent) {
		preview_load_sent(u);
		return;
	}
	if (u->ws.fd >= 0) {
		if (ui_img_probe(u->ws.fd, &u->m.mounts, p->rel, &p->src_w,
		                 &p->src_h, &p->bytes, &err) == 0)
			p->have_probe = 1;
		else
			preview_set_msg(p, "%s",
			                err ? err : "cannot read the image");
		free(err);
		return;
	}
	struct sbx *sbx = u->s ? session_sandbox(u->s) : NULL;
	if (!sbx || u->m.phase == UI_ENDED) {
		preview_set_msg(
		    p,
		    "%s: the workspace is not reachable (the sandbox "
		    "has stopped); previews of a finished run need "
		    "the local backend",
		    p->rel);
		return;
	}
	p->rd = xcalloc(1, sizeof *p->rd);
	p->rd->u = u;
	p->rd->gen = p->gen;
	sbx_read_file(sbx, p->rel, REMOTE_MAX, preview_on_read, p->rd);
}

/* A remote sandbox's read_file is binary-safe (a length, not a string):
 * the bytes go to a memfd that the renderer reads like a file. */
static void preview_on_read(void *arg, int rc, const char *err,
                            struct buf *data, cJSON *list)
{
	struct pv_read *rd = arg;
	struct ui *u = rd->u;
	(void)list;
	if (!u || !u->preview || u->preview->rd != rd ||
	    u->preview->gen != rd->gen) {
		free(rd);
		return;
	}
	struct ui_preview *p = u->preview;
	p->rd = NULL;
	free(rd);
	if (rc == SBX_FAILED || !data) {
		preview_set_msg(p, "%s: %s", p->rel,
		                err ? err : "cannot read it");
	} else if (rc == SBX_TRUNCATED) {
		preview_set_msg(p,
		                "%s is larger than %u MB: too large to preview",
		                p->rel, REMOTE_MAX >> 20);
	} else {
		int fd = memfd_create("assay-preview", MFD_CLOEXEC);
		size_t off = 0;
		while (fd >= 0 && off < data->len) {
			ssize_t w =
			    write(fd, data->data + off, data->len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				close(fd);
				fd = -1;
				break;
			}
			off += (size_t)w;
		}
		char *perr = NULL;
		if (fd < 0) {
			preview_set_msg(p, "%s: cannot keep it in memory (%s)",
			                p->rel, strerror(errno));
		} else {
			lseek(fd, 0, SEEK_SET);
			p->fd = fd;
			if (ui_img_probe_fd(fd, &p->src_w, &p->src_h, &p->bytes,
			                    &perr) == 0)
				p->have_probe = 1;
			else
				preview_set_msg(p, "%s",
				                perr ? perr : "not an image");
			free(perr);
		}
	}
	ui_touch(u, UI_DIRTY_STATUS);
}

/* The view changes: the large one is an overlay of its own. */
static void preview_set_view(struct ui *u, enum pv_view view)
{
	struct ui_preview *p = u->preview;
	p->view = view;
	if (view == PV_LARGE)
		ui_overlay_push(u, &p->large);
	else
		ui_overlay_pop(u, &p->large);
}

/* What a preview shows: a workspace file, or (sent) the run dir's copy
 * of an image sent to the model, titled label. */
struct pv_target {
	const char *rel;
	int sent;
	const char *label;
};

/* Show t (loaded again when it is another file) in a view. */
static void preview_open_target(struct ui *u, const struct pv_target *t,
                                enum pv_view view)
{
	struct ui_preview *p = preview_get(u);
	if (!p->rel || strcmp(p->rel, t->rel) || p->sent != t->sent) {
		char *rel = xstrdup(t->rel); /* t may be p's own */
		char *label = t->label ? xstrdup(t->label) : NULL;
		free(p->rel);
		free(p->label);
		p->rel = rel;
		p->label = label;
		p->sent = t->sent;
		preview_load(u);
	}
	preview_set_view(u, view);
	ui_touch(u, UI_DIRTY_EVERYTHING & ~UI_DIRTY_LAYOUT);
}

static void preview_open_path(struct ui *u, const char *rel, enum pv_view view)
{
	struct pv_target t = {rel, 0, NULL};
	preview_open_target(u, &t, view);
}

void ui_preview_open(struct ui *u, const char *rel, int large)
{
	preview_open_path(u, rel, large ? PV_LARGE : PV_PANE);
}

/* The image the model was sent after call i (the last one sent), or
 * NULL. */
static const struct ui_sent *preview_sent_of(struct ui *u, int i)
{
	if (i < 0 || i >= u->m.ncalls)
		return NULL;
	const struct ui_call *c = u->m.calls[i];
	for (int k = c->nsent - 1; k >= 0; k--)
		if (!c->sent[k].error)
			return &c->sent[k];
	return NULL;
}

/* What p shows: in Tools, the image sent after the selected call;
 * else the newest image (the one view_image sent when no image changed
 * since), as the model was sent it when it was (0: none; -1: a sent
 * image without a copy to show, said in a notice). label is t's, to
 * free. */
static int preview_target(struct ui *u, struct pv_target *t, char **label)
{
	const struct ui_sent *s = NULL;
	const char *rel = NULL;
	*label = NULL;
	if (u->lay.focus == P_TOOLS)
		s = preview_sent_of(u, u->tools.sel < 0 ? u->m.ncalls - 1
		                                        : u->tools.sel);
	if (!s && u->m.last_sent_call >= 0)
		s = &u->m.calls[u->m.last_sent_call]->sent[u->m.last_sent_idx];
	if (!s) {
		rel = preview_newest_image(u);
		s = ui_model_sent_copy(&u->m, rel);
	}
	if (s && !s->file) {
		ui_notice(u, "the image sent to the model has no copy in the "
		             "run dir (images/<sha256>.png) to preview");
		return -1;
	}
	if (s) {
		*label = xasprintf("sent: %s", s->path);
		*t = (struct pv_target){s->file, 1, *label};
		return 1;
	}
	if (u->replay) {
		/* the workspace is not kept for each step; these are */
		ui_notice(u, "replay previews the images sent to the model: "
		             "none yet at this step");
		return -1;
	}
	*t = (struct pv_target){rel, 0, NULL};
	return rel != NULL;
}

int ui_preview_close(struct ui *u)
{
	struct ui_preview *p = u->preview;
	if (!p || p->view == PV_CLOSED)
		return 0;
	preview_set_view(u, PV_CLOSED);
	preview_erase_placed(u);
	/* the Tools pane (or every pane, after v) comes back */
	ui_touch(u, UI_DIRTY_EVERYTHING & ~UI_DIRTY_LAYOUT);
	return 1;
}

/* The large view has the screen: its keys only (a paste goes on to
 * the message box). */
static int preview_large_key(struct ui *u, struct ui_overlay *o, int key,
                             int fn)
{
	struct ui_preview *p = u->preview;
	(void)o;
	if (u->keys.in_paste)
		return 0;
	if (!fn && (key == UI_KEY_ESC || key == 'q' || key == 'p'))
		ui_preview_close(u);
	else if (!fn && key == 'v') {
		struct pv_target t = {p->rel, p->sent, p->label};
		preview_open_target(u, &t, PV_PANE);
	}
	return 1;
}

int ui_preview_key(struct ui *u, int key, int fn)
{
	struct ui_preview *p = u->preview;
	int open = p && p->view != PV_CLOSED;
	if (u->keys.in_paste)
		return 0;
	if (open && !fn && key == UI_KEY_ESC)
		return ui_preview_close(u);
	if (u->lay.focus == P_INPUT || fn || (key != 'p' && key != 'v'))
		return 0;
	struct pv_target t;
	if (key == 'v' && open) {
		t = (struct pv_target){p->rel, p->sent, p->label};
		preview_open_target(u, &t, PV_LARGE);
		return 1;
	}
	char *label;
	int have = preview_target(u, &t, &label);
	if (have > 0 && key == 'p' && open && !strcmp(p->rel, t.rel) &&
	    p->sent == t.sent) {
		free(label);
		return ui_preview_close(u);
	}
	if (!have)
		ui_notice(u, "no image in the workspace yet");
	else if (have > 0)
		preview_open_target(u, &t, key == 'v' ? PV_LARGE : PV_PANE);
	free(label);
	return 1;
}

/* ---- rendering -------------------------------------------------------------
 */

/* A rendering arrived, or failed for this box. */
static void preview_on_rendered(void *arg, const struct ui_img *img,
                                const char *err)
{
	struct ui *u = arg;
	struct ui_preview *p = u->preview;
	p->req = 0;
	ui_img_unref(p->img);
	p->img = NULL;
	if (img) {
		p->img = ui_img_ref(img);
		log_info("tui: preview %s: %s %dx%d cells, %zu bytes", p->rel,
		         ui_termcaps_mode_name(img->mode), img->cols, img->rows,
		         img->len);
	} else {
		/* for this box only: another box (v, a resize) tries again */
		free(p->rmsg);
		p->rmsg = term_clean(
		    err ? err : "cannot render the image",
		    strlen(err ? err : "cannot render the image"), 0);
		p->rmsg_cols = p->req_cols;
		p->rmsg_rows = p->req_rows;
		p->rmsg_large = p->req_large;
	}
	ui_touch(u, UI_DIRTY_STATUS);
}

/* The image's box, in cells, for the terminal's limits. */
static void preview_box_limits(struct ui_preview *p, int *cols, int *rows)
{
	const struct ui_termcaps *tc = &p->tc;
	int cw = tc->cell_w > 0 ? tc->cell_w : 10;
	int chh = tc->cell_h > 0 ? tc->cell_h : 20;
	if (tc->mode == UI_GFX_SIXEL && tc->sixel_max_w > 0 &&
	    *cols * cw > tc->sixel_max_w)
		*cols = tc->sixel_max_w / cw;
	if (tc->mode == UI_GFX_SIXEL && tc->sixel_max_h > 0 &&
	    *rows * chh > tc->sixel_max_h)
		*rows = tc->sixel_max_h / chh;
}

/* The rendering's failure, if it was for the box shown now. */
static const char *preview_render_error(struct ui_preview *p)
{
	int cols = p->box_cols, rows = p->box_rows;
	preview_box_limits(p, &cols, &rows);
	if (p->rmsg && p->rmsg_cols == cols && p->rmsg_rows == rows &&
	    p->rmsg_large == (p->view == PV_LARGE))
		return p->rmsg;
	return NULL;
}

/* Ask for a rendering for the box now, unless there is one. */
static void preview_request(struct ui *u)
{
	struct ui_preview *p = u->preview;
	if (p->tc.mode == UI_GFX_OFF || p->msg || !p->have_probe || p->req)
		return;
	int large = p->view == PV_LARGE;
	int cols = p->box_cols, rows = p->box_rows;
	preview_box_limits(p, &cols, &rows);
	if (cols < 2 || rows < 1 || preview_render_error(p))
		return;
	free(p->rmsg); /* it was for another box */
	p->rmsg = NULL;
	if (p->img && p->req_cols == cols && p->req_rows == rows &&
	    p->req_large == large)
		return;
	if (!p->cache) {
		p->cache = ui_imgcache_new(u->loop, 0);
		if (!p->cache) {
			preview_set_msg(p, "cannot start the image renderer");
			return;
		}
	}
	preview_drop_rendering(p);
	preview_erase_placed(u);
	struct ui_img_req r = {
	    .dirfd = p->sent ? p->run_fd : u->ws.fd,
	    .mounts = p->sent ? NULL : &u->m.mounts,
	    .rel = p->rel,
	    .fd = p->fd,
	    .mode = p->tc.mode,
	    .box_cols = cols,
	    .box_rows = rows,
	    .cell_w = p->tc.cell_w,
	    .cell_h = p->tc.cell_h,
	    .colors = p->tc.color_registers,
	    .truecolor = p->tc.truecolor,
	    .kitty_id = KITTY_ID,
	    .bg_rgb = IMG_BG,
	    .upscale = large,
	};
	p->req_cols = cols;
	p->req_rows = rows;
	p->req_large = large;
	p->req = ui_img_render(p->cache, &r, preview_on_rendered, u);
}

/* ---- the box --------------------------------------------------------------
 */

/* An overlay says images must go (the stack decides). */
static int preview_covered(struct ui *u)
{
	/* any other window drawn over it is caught in ui_preview_emit
	 * (curscr), a frame later */
	return u->lay.too_small ||
	       (ui_overlay_flags(u) & UI_OV_COVERS_IMAGES) != 0;
}

/* Where the box goes: in place of the Tools pane, else (a narrow
 * terminal) the whole screen above the status bar, as with v. */
static void preview_box_rect(struct ui *u, int *y, int *x, int *h, int *w)
{
	struct ui_preview *p = u->preview;
	if (p->view == PV_PANE && u->lay.g[P_TOOLS].shown &&
	    u->lay.g[P_TOOLS].h >= 6) {
		struct ui_geom *g = &u->lay.g[P_TOOLS];
		*y = g->y;
		*x = g->x;
		*h = g->h;
		*w = g->w;
		return;
	}
	*y = 0;
	*x = 0;
	*h = u->lay.rows - 1;
	*w = u->lay.cols;
}

/* Text wrapped into the box from row y. */
static void preview_draw_lines(WINDOW *w, int y, int x, int width,
                               const char *text, enum ui_elem e, int maxy)
{
	struct ui_rows rows = {0};
	struct buf b;
	buf_init(&b, 0);
	ui_st_elem(&b, e);
	buf_puts(&b, text);
	ui_st_wrap(b.data, b.len, width, 0, &rows);
	for (int i = 0; i < rows.n && y + i <= maxy; i++)
		ui_draw_st(w, y + i, x, width, rows.row[i], strlen(rows.row[i]),
		           e);
	ui_rows_free(&rows);
	buf_free(&b);
}

/* The box: its title, its footer, and what stands for the image. */
static void preview_draw_box(struct ui *u)
{
	struct ui_preview *p = u->preview;
	WINDOW *w = p->win;
	ui_background(w);
	werase(w);
	struct buf t;
	buf_init(&t, 0);
	buf_printf(&t, "%s", p->label ? p->label : p->rel);
	if (p->have_probe) {
		char sz[16];
		ui_fmt_size(sz, sizeof sz, (double)p->bytes);
		buf_printf(&t, "  %s  %dx%d", sz, p->src_w, p->src_h);
	}
	char *title = term_clean(t.data, t.len, 0);
	buf_free(&t);
	ui_draw_box(w, title, p->view == PV_LARGE || u->lay.focus == P_TOOLS);
	const char *hint = p->view == PV_LARGE ? " v smaller  Esc close "
	                                       : " v larger  Esc close ";
	char foot[96];
	snprintf(foot, sizeof foot, " %s |%s",
	         ui_termcaps_mode_name(p->tc.mode), hint);
	int fw = (int)strlen(foot);
	if (p->ww > fw + 4)
		ui_draw_text(w, p->wh - 1, p->ww - fw - 2, fw, foot, UE_DIM);
	int iw = p->ww - 4, maxy = p->wh - 2;
	const char *err = p->msg ? p->msg : preview_render_error(p);
	if (err) {
		preview_draw_lines(w, 1, 2, iw, err, UE_ERROR, maxy);
	} else if (p->tc.mode == UI_GFX_OFF) {
		const char *label = p->label ? p->label : p->rel;
		char *name = term_clean(label, strlen(label), 0);
		char *msg;
		if (p->have_probe) {
			char sz[16];
			ui_fmt_size(sz, sizeof sz, (double)p->bytes);
			msg = xasprintf("[image %s: %s, %dx%d pixels]", name,
			                sz, p->src_w, p->src_h);
		} else {
			msg = xasprintf("[image %s: reading...]", name);
		}
		preview_draw_lines(w, 1, 2, iw, msg, UE_NORMAL, maxy);
		free(msg);
		free(name);
		preview_draw_lines(
		    w, 3, 2, iw,
		    "pixels are off: --images off, or the terminal shows "
		    "no graphics (try --images blocks)",
		    UE_DIM, maxy);
	} else if (!p->img) {
		preview_draw_lines(
		    w, 1, 2, iw, p->have_probe ? "rendering..." : "reading...",
		    UE_DIM, maxy);
	}
	free(title);
}

/* The window at the box's rect, made again when it moves. */
static int preview_place_window(struct ui *u)
{
	struct ui_preview *p = u->preview;
	int y, x, h, w;
	preview_box_rect(u, &y, &x, &h, &w);
	if (h < 4 || w < 12)
		return -1;
	if (p->win && y == p->wy && x == p->wx && h == p->wh && w == p->ww)
		return 0;
	if (p->win)
		delwin(p->win);
	preview_erase_placed(u); /* the box moves: the image goes with it */
	p->win = newwin(h, w, y, x);
	if (!p->win)
		return -1;
	leaveok(p->win, TRUE);
	p->wy = y;
	p->wx = x;
	p->wh = h;
	p->ww = w;
	/* the image's box: inside the border, a column of margin */
	p->box_y = y + 1;
	p->box_x = x + 2;
	p->box_rows = h - 2;
	p->box_cols = w - 4;
	return 0;
}

/* The terminal changed size: re-read the cell size (a font change
 * comes with one); renderings for other cell sizes are stale. */
static void preview_check_terminal(struct ui *u)
{
	struct ui_preview *p = u->preview;
	if (p->term_rows == u->lay.rows && p->term_cols == u->lay.cols)
		return;
	int cw = p->tc.cell_w, chh = p->tc.cell_h;
	if (p->term_rows)
		ui_termcaps_cells(STDOUT_FILENO, &p->tc);
	p->term_rows = u->lay.rows;
	p->term_cols = u->lay.cols;
	if (cw != p->tc.cell_w || chh != p->tc.cell_h) {
		preview_drop_rendering(p);
		if (p->cache)
			ui_imgcache_clear(p->cache);
	}
}

/* The box's state for this frame: the image erased where it must go,
 * its rendering asked for; 1 when the box is to be drawn. */
static int preview_prepare(struct ui *u)
{
	struct ui_preview *p = u->preview;
	if (is_cleared(curscr) && p->placed) {
		/* the screen is cleared: every image goes with it */
		p->placed = 0;
		p->kitty_delete = p->pmode == UI_GFX_KITTY;
	}
	if (u->lay.too_small) {
		preview_erase_placed(u);
		return 0;
	}
	preview_check_terminal(u);
	if (p->view == PV_CLOSED) {
		preview_erase_placed(u);
		return 0;
	}
	/* the file changed since it was loaded */
	struct ui_node *n = p->sent ? NULL : ui_tree_find(&u->m.tree, p->rel);
	if (n && n->size != p->node_size)
		preview_load(u);
	if (preview_place_window(u) < 0) {
		preview_erase_placed(u);
		return 0;
	}
	if (preview_covered(u))
		preview_erase_placed(u);
	if (ui_overlay_flags(u) & UI_OV_OPAQUE)
		return 0; /* the pager has the screen */
	preview_request(u);
	if (p->img && !p->req &&
	    (p->img->cols > p->box_cols || p->img->rows > p->box_rows))
		preview_drop_rendering(p); /* for an older, larger box */
	return 1;
}

/* The box onto the frame. */
static void preview_paint(struct ui *u)
{
	struct ui_preview *p = u->preview;
	preview_draw_box(u);
	touchwin(p->win);
	wnoutrefresh(p->win);
}

/* Before the overlays are drawn: the box in place of the Tools pane
 * (the large one is drawn as an overlay), and the image erased where
 * it must go. */
void ui_preview_draw(struct ui *u)
{
	struct ui_preview *p = u->preview;
	if (!p)
		return;
	p->ready = preview_prepare(u);
	if (p->ready && p->view == PV_PANE)
		preview_paint(u);
}

/* The large view, in its place on the overlay stack. */
static void preview_large_draw(struct ui *u, struct ui_overlay *o)
{
	(void)o;
	if (u->preview->ready && u->preview->view == PV_LARGE)
		preview_paint(u);
}

/* The rect holds only the blanks we drew (curscr: what is on the
 * terminal, as curses knows it). */
static int preview_rect_clean(int y, int x, int h, int w)
{
	for (int r = y; r < y + h; r++)
		for (int c = x; c < x + w; c++) {
			cchar_t cc;
			wchar_t wc[CCHARW_MAX + 1];
			attr_t a;
			short pair;
			if (mvwin_wch(curscr, r, c, &cc) == ERR ||
			    getcchar(&cc, wc, &a, &pair, NULL) == ERR)
				return 0;
			if (wc[0] != L' ')
				return 0;
		}
	return 1;
}

/* Queue the image's bytes for the tty at (y, x) and send them. */
static void preview_emit(struct ui *u, int y, int x)
{
	struct ui_preview *p = u->preview;
	const struct ui_img *img = p->img;
	/* straight into the queue: a payload can be megabytes */
	struct buf *b = &p->out;
	size_t from = b->len;
	if (img->mode == UI_GFX_KITTY && p->kitty_sent != img) {
		/* the terminal gets the pixels once: a=t, not shown */
		if (p->kitty_sent)
			buf_printf(b, "\033_Ga=d,d=I,i=%u,q=2\033\\", KITTY_ID);
		buf_append(b, img->data, img->len);
		ui_img_unref(p->kitty_sent);
		p->kitty_sent = ui_img_ref(img);
	}
	buf_puts(b, "\033[?2026h\0337");
	if (img->mode == UI_GFX_BLOCKS) {
		const char *s = img->data, *end = img->data + img->len;
		for (int r = 0; s < end && r < img->rows; r++) {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
			buf_printf(b, "\033[%d;%dH", y + r + 1, x + 1);
			buf_append(b, s, n);
			s += n + (nl ? 1 : 0);
		}
	} else if (img->mode == UI_GFX_KITTY) {
		buf_printf(b, "\033[%d;%dH", y + 1, x + 1);
		buf_printf(b, "\033_Ga=p,i=%u,p=1,c=%d,r=%d,C=1,q=2\033\\",
		           KITTY_ID, img->cols, img->rows);
	} else {
		buf_printf(b, "\033[%d;%dH", y + 1, x + 1);
		buf_append(b, img->data, img->len);
	}
	buf_puts(b, "\0338\033[?2026l");
	size_t len = b->len - from;
	preview_tty_send(u);
	p->emits++;
	p->emit_bytes += len;
	log_info("tui: preview placed at %d,%d (%dx%d cells, %zu bytes, "
	         "placement %ld%s)",
	         y, x, img->cols, img->rows, len, p->emits,
	         preview_pending(p) ? ", the rest from the loop" : "");
	p->placed = 1;
	p->py = y;
	p->px = x;
	p->prows = img->rows;
	p->pcols = img->cols;
	p->pmode = img->mode;
}

/* After doupdate: the image goes onto the frame curses has sent. */
void ui_preview_emit(struct ui *u)
{
	struct ui_preview *p = u->preview;
	if (!p)
		return;
	if (p->kitty_delete) {
		/* the placement goes; the terminal keeps the pixels */
		buf_printf(&p->out, "\033_Ga=d,d=i,i=%u,q=2\033\\", KITTY_ID);
		preview_tty_send(u);
		p->kitty_delete = 0;
	}
	if (p->placed &&
	    !preview_rect_clean(p->py, p->px, p->prows, p->pcols)) {
		/* something we do not know of drew over it */
		preview_erase_placed(u);
		ui_touch(u, UI_DIRTY_STATUS);
		return;
	}
	if (p->view == PV_CLOSED || !p->win || !p->img || p->req ||
	    preview_covered(u))
		return;
	const struct ui_img *img = p->img;
	int y = p->box_y;
	int x = p->box_x + (p->box_cols - img->cols) / 2;
	/* never the last row: an image there scrolls the screen */
	if (img->rows < 1 || img->cols < 1 || y + img->rows > u->lay.rows - 1 ||
	    x + img->cols > u->lay.cols)
		return;
	if (!p->placed && preview_rect_clean(y, x, img->rows, img->cols))
		preview_emit(u, y, x);
}

void ui_preview_free(struct ui *u)
{
	struct ui_preview *p = u->preview;
	if (!p)
		return;
	ui_overlay_pop(u, &p->large);
	preview_drop_rendering(p);
	if (p->cache)
		ui_imgcache_free(p->cache);
	if (p->rd)
		p->rd->u = NULL;
	if (p->fd >= 0)
		close(p->fd);
	if (p->win)
		delwin(p->win);
	if (p->emits)
		log_info("tui: preview: %ld placements, %zu bytes", p->emits,
		         p->emit_bytes);
	preview_tty_close(p);
	ui_img_unref(p->kitty_sent);
	if (p->run_fd >= 0)
		close(p->run_fd);
	free(p->rel);
	free(p->label);
	free(p->msg);
	free(p->rmsg);
	free(p);
	u->preview = NULL;
}
