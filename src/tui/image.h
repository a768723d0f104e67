/* image.h: inline image previews for the TUI. Decoding and encoding run
 * in the assay-image helper process (src/helpers/assay_image.c) under
 * rlimits and a timeout; this client spawns it from the poll loop,
 * reads its output without blocking and caches the finished renderings.
 *
 * Payload (struct ui_img.data), what the TUI writes to the tty:
 *   UI_GFX_SIXEL  one DCS sixel sequence "\033P...q\"1;1;W;H..." ending
 *                 in ST "\033\\"; covers cols x rows cells from the
 *                 cursor position (cursor save/position/restore is the
 *                 TUI's job).
 *   UI_GFX_KITTY  kitty graphics APC chunks "\033_Ga=t,f=24,o=z,s=W,v=H,
 *                 i=ID,q=2,m=1;<base64>\033\\" ... (each chunk <= 4096
 *                 base64 bytes, the last has m=0): the image is stored
 *                 under ID, not shown; the TUI transmits it once and
 *                 places it with "\033_Ga=p,i=ID,c=COLS,r=ROWS,C=1,q=2".
 *   UI_GFX_BLOCKS rows lines joined by '\n' (no trailing '\n'); each line
 *                 is SGR colour sequences + cols "▀" glyphs + "\033[0m".
 *                 The TUI positions each line itself (CSI row;col H).
 * The bytes come only from the helper's own encoders: nothing of the
 * image file (text chunks, names) is ever copied into them, and this
 * client checks that a payload is exactly what those encoders make for
 * its declared size (img_payload_ok). */
#ifndef ASSAY_TUI_IMAGE_H
#define ASSAY_TUI_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "assay/workbench.h"

struct path_mounts;

struct loop;

/* enum ui_gfx is in assay/workbench.h */

struct ui_img_req {
	int dirfd; /* the host workspace dir (O_DIRECTORY) */
	const struct path_mounts *mounts; /* its mounted inputs, or NULL */
	const char *rel;        /* path relative to it: opened RESOLVE_BENEATH
	                           (with fd >= 0: only the name for messages) */
	int fd;                 /* or an open fd (>= 0 wins, e.g. a memfd);
	                           the cache dup()s it, the caller keeps its own */
	enum ui_gfx mode;       /* BLOCKS, SIXEL or KITTY (OFF: an error) */
	int box_cols, box_rows; /* the box in cells */
	int cell_w, cell_h;     /* pixels per cell (<= 0: 10 x 20) */
	int colors;        /* sixel colour registers (0 or over 256: 256) */
	int truecolor;     /* blocks: 24-bit SGR, else 256 colours */
	unsigned kitty_id; /* kitty image id (i=), 1..2^31-1; 0 = 1 */
	int bg_rgb;        /* 0xRRGGBB under transparency, -1 = black */
	int upscale;       /* allow scaling small images up to the box */
};

/* A finished rendering. Owned by the cache; valid during the callback.
 * To keep it longer (to re-place it after a redraw), take a reference
 * with ui_img_ref and drop it with ui_img_unref. */
struct ui_img {
	enum ui_gfx mode;
	int cols, rows;   /* footprint in cells */
	int px_w, px_h;   /* the scaled image in pixels */
	int src_w, src_h; /* the PNG's own size */
	char *data;       /* bytes for the tty, see above (NUL-terminated) */
	size_t len;
	int refs; /* private */
};

struct ui_imgcache;

/* img is NULL and err a message on failure, e.g. "image: output/x.png:
 * image is 100000x100000 pixels: too large to preview (limits: ...)"
 * (terminal-safe text). Both are only valid during the call. */
typedef void (*ui_img_fn)(void *arg, const struct ui_img *img, const char *err);

/* A cache holding at most max_bytes of payloads (0 = 32 MiB). */
struct ui_imgcache *ui_imgcache_new(struct loop *l, size_t max_bytes);
/* Kills and reaps a running child; pending callbacks are not called.
 * Not from inside one of this cache's callbacks. */
void ui_imgcache_free(struct ui_imgcache *c);
/* Drop every cached rendering (e.g. after a resize or a font change). */
void ui_imgcache_clear(struct ui_imgcache *c);

/* Render asynchronously in a child process. fn is called exactly once,
 * later, from the loop (never from inside this call), also for a cache
 * hit and for errors such as a missing file; not at all after
 * ui_img_cancel or ui_imgcache_free. Cached by (dev, inode, mtime,
 * size, mode, box, cell size, colours, truecolor, bg, kitty id).
 * One child runs at a time; requests queue (at most 8 waiting: the
 * oldest waiting one then fails with "superseded"). The child is
 * killed after 5 s. Returns a request id > 0. */
uint64_t ui_img_render(struct ui_imgcache *c, const struct ui_img_req *r,
                       ui_img_fn fn, void *arg);
/* Forget request id: its callback will not be called; kills its child
 * if it is the one running. Unknown or finished ids are ignored. */
void ui_img_cancel(struct ui_imgcache *c, uint64_t id);

/* A cached rendering for r right now (stat()s the file), or NULL. The
 * pointer is valid until the next call into the cache; ui_img_ref it
 * to keep it. */
const struct ui_img *ui_img_lookup(struct ui_imgcache *c,
                                   const struct ui_img_req *r);

struct ui_img *ui_img_ref(const struct ui_img *img);
void ui_img_unref(struct ui_img *img);

/* Synchronous header-only probe for placeholders (reads the PNG
 * signature and IHDR, no decode): 0 with *w, *h and *bytes (the file
 * size), also for sizes over the preview limits (rendering then fails
 * with a message), or -1 + *err ("not a PNG", missing file, ...). */
int ui_img_probe(int dirfd, const struct path_mounts *mounts, const char *rel,
                 int *w, int *h, long long *bytes, char **err);
int ui_img_probe_fd(int fd, int *w, int *h, long long *bytes, char **err);

/* The assay-image helper: $ASSAY_IMAGE_BIN, else beside the running
 * binary. Caller frees. */
char *ui_img_helper(void);

/* preview.c, for ui.c's frames: 1 while a placement is still going out
 * to the terminal (the frame waits: no curses output may land inside
 * an image's bytes; it is drawn once they are out); and the rest of
 * them, before curses leaves the screen. */
struct ui;
int ui_preview_busy(struct ui *u);
void ui_preview_flush(struct ui *u);

#endif
