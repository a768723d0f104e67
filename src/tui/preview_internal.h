/* preview_internal.h: the state of an image preview, shared by the
 * files of previews (private to them): preview.c decides what is shown
 * and where, preview_tty.c writes the bytes to the terminal through a
 * queue the loop drains. */
#ifndef ASSAY_TUI_PREVIEW_INTERNAL_H
#define ASSAY_TUI_PREVIEW_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "assay/buf.h"
#include "tui/image.h"
#include "tui/termcaps.h"
#include "tui/ui.h"

#define KITTY_ID 7311u /* our one kitty image */

enum pv_view { PV_CLOSED, PV_PANE, PV_LARGE };

struct loop;
struct pv_read;

struct ui_preview {
	struct ui_overlay large; /* the large view (v), on the stack */
	int ready;               /* this frame has the box to draw */
	struct ui_termcaps tc;
	struct ui_imgcache *cache;

	enum pv_view view;
	char *rel; /* the workspace-relative path shown */
	/* rel is in the run dir (run_fd): the copy of an image sent to the
	 * model, named images/<sha256>.<ext>; label: its title */
	int sent;
	int run_fd;
	char *label;
	unsigned gen;       /* bumped for each file (re)load */
	double node_size;   /* the tree's size when it was loaded */
	int fd;             /* a memfd with the file (remote sandbox), -1 */
	struct pv_read *rd; /* a read in flight */
	char *msg;          /* an error with the file (cleaned), or NULL */
	/* a rendering that failed, for the box it was asked for: shown
	 * (and not asked again) only while the box is the same */
	char *rmsg;
	int rmsg_cols, rmsg_rows, rmsg_large;
	int have_probe;
	int src_w, src_h;
	long long bytes;

	/* the rendering: for the box it was asked for */
	uint64_t req;
	int req_cols, req_rows, req_large;
	struct ui_img *img;

	/* the box: our window and the image's box inside it */
	WINDOW *win;
	int wy, wx, wh, ww;
	int term_rows, term_cols;
	int box_y, box_x, box_cols, box_rows; /* screen cells */

	/* the registry: the image on the tty now */
	int placed;
	int py, px, prows, pcols;
	enum ui_gfx pmode;
	int kitty_delete;          /* send the delete after this frame */
	struct ui_img *kitty_sent; /* the rendering the terminal holds */

	/* bytes for the tty not yet taken, from out_off */
	struct buf out;
	size_t out_off;
	int out_fd;    /* our non-blocking descriptor of the tty, or 1 */
	int out_watch; /* POLLOUT watched */
	int held;      /* a frame waited for the queue */
	struct loop *loop;

	long emits; /* placements written (logged) */
	size_t emit_bytes;
};

/* preview_tty.c: the queue to the terminal (p->out). 1 while bytes
 * wait in it; send what was queued (now as far as the terminal takes
 * it, the rest from the loop); and at the end, the watch and our
 * descriptor of the tty go, with what is left queued. */
int preview_pending(const struct ui_preview *p);
void preview_tty_send(struct ui *u);
void preview_tty_close(struct ui_preview *p);

#endif
