/* imgrender.h: the pure parts of image previews (src/image/), shared by
 * the assay-image helper, the TUI client and export and unit-tested on
 * their own: PNG header checks, fitting and area-average scaling, the
 * half-block renderer, the xterm 256-colour mapping, a palette quantiser
 * for sixel, kitty graphics chunking, and a check that a payload holds
 * only the escape sequences these encoders make. No libpng, no libsixel:
 * linked into assay too (the TUI checks every payload the helper sends,
 * export a notebook image's header); only assay-image decodes and
 * encodes. For `assay-image view` (an image for the model): the PNG,
 * JPEG, GIF and WebP headers, the view's limits and its fitting rule.
 * The previews' parts are in src/image/imgrender.c, the view's in
 * src/image/imgview.c. */
#ifndef ASSAY_IMGRENDER_H
#define ASSAY_IMGRENDER_H

#include "assay/buf.h"

#include <stddef.h>
#include <stdint.h>

/* Refused before decoding. */
#define IMG_MAX_SIDE 10000
#define IMG_MAX_PIXELS 40000000LL
#define IMG_MAX_FILE (64LL << 20)
/* assay-image view (an image for the model) decodes less than a
 * preview: a larger image is refused from its header. A JPEG, GIF or
 * WebP within the box goes through unchanged only up to this many
 * bytes, whose base64 is Anthropic's limit per image (5 MiB); past
 * it, it is re-encoded or refused. */
#define IMG_VIEW_MAX_PIXELS 25000000LL
#define IMG_VIEW_MAX_PASS (5LL * 1024 * 1024 / 4 * 3)
/* Largest box the helper renders into, in pixels per side. */
#define IMG_MAX_BOX 8192
/* Largest payload the helper writes / the client accepts. */
#define IMG_MAX_PAYLOAD (96u << 20)

/* Exit codes of assay-image (and return codes of the checks below). */
enum img_status {
	IMG_OK = 0,
	IMG_EINTERNAL = 1, /* out of memory, write error, ... */
	IMG_EUSAGE = 2,    /* bad arguments */
	IMG_ENOTPNG = 3,   /* not a PNG file (view: nor JPEG, GIF, WebP) */
	IMG_ETOOBIG = 4,   /* dimensions or file size over the limits */
	IMG_ECORRUPT = 5,  /* truncated or damaged image */
};

enum img_mode { IMG_INFO, IMG_BLOCKS, IMG_SIXEL, IMG_KITTY };

struct img_hdr {
	uint32_t w, h;
	int depth, color_type, interlace;
};

/* Check the PNG signature and IHDR in p[0..n) (the first 33 bytes of
 * the file). IMG_OK, or IMG_ENOTPNG / IMG_ECORRUPT / IMG_ETOOBIG with
 * a message in *err. file_size < 0: not checked. */
int img_png_header(const void *p, size_t n, long long file_size,
                   struct img_hdr *h, char **err);
/* The signature and IHDR only, no limits: img_png_header's first
 * step, and img_view_header's for a PNG. */
int img_png_ihdr(const void *p, size_t n, struct img_hdr *h, char **err);

/* The largest w x h with the aspect of sw x sh that fits bw x bh;
 * never larger than sw x sh unless upscale; at least 1 x 1. */
void img_fit(int sw, int sh, int bw, int bh, int upscale, int *w, int *h);
/* Half-block grid (pixels: w columns, h = 2 per cell row) for an sw x
 * sh image in a cols x rows box of cell_w x cell_h pixel cells. */
void img_blocks_fit(int sw, int sh, int cols, int rows, int cell_w, int cell_h,
                    int upscale, int *w, int *h);

/* The view's fitting rule, for the model: scale by the smallest of
 * max / long side, sqrt(mpx / (sw * sh)) and short_side / short side
 * (each 0: no limit), never above 1; w x h then meets every limit
 * (w * h <= mpx although rounding) and is at least 1 x 1. */
void img_view_fit(int sw, int sh, int max, long mpx, int short_side, int *w,
                  int *h);

/* What `assay-image view` takes, told by the bytes (never the name). */
enum img_type { IMG_PNG, IMG_JPEG, IMG_GIF, IMG_WEBP };
struct img_view_hdr {
	enum img_type type;
	int w, h;   /* PNG: IHDR; JPEG: the first SOFn; GIF: the logical
	             * screen; WebP: VP8, VP8L or VP8X's canvas */
	int frames; /* 1, or 2 for more than one (GIF frames, animated WebP) */
	struct img_hdr png; /* PNG only */
};
/* Sniff and check the whole file p[0..n): its type and size from the
 * headers (JPEG's markers walked to the first scan, GIF's blocks to
 * the trailer, WebP's RIFF length), no pixel decoded. IMG_OK, or
 * IMG_ENOTPNG (none of the four) / IMG_ECORRUPT (truncated, damaged)
 * with a message in *err. No size limit is checked here. */
int img_view_header(const void *p, size_t n, struct img_view_hdr *h,
                    char **err);
/* The view's limits on a header: IMG_VIEW_MAX_PIXELS, IMG_MAX_SIDE a
 * side, IMG_MAX_FILE bytes. IMG_OK or IMG_ETOOBIG with a message. */
int img_view_limits(const struct img_view_hdr *h, long long file_size,
                    char **err);
/* "image/png", "image/jpeg", "image/gif", "image/webp". */
const char *img_media_type(enum img_type t);

/* Area-average (box filter) scaling to 8-bit RGB, fed one source row
 * at a time in order, so a large image never has to be held whole.
 * Source pixels are bpp bytes apart (3: RGB, 4: RGBA, alpha unused). */
struct img_scaler;
struct img_scaler *img_scaler_new(int sw, int sh, int dw, int dh, int bpp);
void img_scaler_row(struct img_scaler *s, const uint8_t *px);
/* The dw x dh RGB result; valid after all sh rows, until _free. */
const uint8_t *img_scaler_result(struct img_scaler *s);
void img_scaler_free(struct img_scaler *s);
/* Whole-image convenience: src sw x sh RGB into dst dw x dh RGB. */
void img_scale(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw,
               int dh);

/* Nearest xterm colour among 16..255 (6x6x6 cube and grey ramp). */
int img_xterm256(int r, int g, int b);
/* Half blocks for a w x h RGB image: ceil(h/2) lines joined by '\n',
 * each SGR + w "▀" + "\033[0m". An odd last pixel row gets the
 * default background. -1 if out would pass its maximum. */
int img_blocks(struct buf *out, const uint8_t *rgb, int w, int h,
               int truecolor);

/* At most maxc colours for npix RGB pixels: the exact colours when
 * they fit, else a median cut over a 5-bit histogram. Fills pal
 * (3 * maxc bytes) and idx (npix bytes); returns the colour count. */
int img_quantize(const uint8_t *rgb, size_t npix, int maxc, uint8_t *pal,
                 uint8_t *idx);
/* The exact palette only: -1 (pal and idx undefined) when the image
 * has more than maxc colours. */
int img_quantize_exact(const uint8_t *rgb, size_t npix, int maxc, uint8_t *pal,
                       uint8_t *idx);

/* Standard base64 of n bytes; returns the length written to out
 * (4 * ceil(n / 3) bytes, no NUL). */
size_t img_base64(const void *in, size_t n, char *out);

struct img_kitty {
	int format;     /* 24, 32 or 100 */
	int compressed; /* data is zlib-deflated (o=z) */
	int w, h;       /* pixels (for f=24/32) */
	unsigned id;
};
/* The kitty graphics transmit sequence(s) for data, stored under id
 * and not shown (a=t; the TUI places it with a=p,i=ID): APC chunks of
 * at most IMG_KITTY_CHUNK base64 bytes, m=1 / last m=0. */
#define IMG_KITTY_CHUNK 4096
int img_kitty(struct buf *out, const void *data, size_t n,
              const struct img_kitty *k);

/* A sixel DCS for a w x h image of palette indices (pal: n RGB
 * colours), the same form as libsixel's ("\033Pq\"1;1;W;H", colour
 * registers, bands, ST), written here for many-coloured images: its
 * cost is the pixels plus the colours each band uses over the span
 * they cover, not registers x width for every band. -1 past out's
 * maximum. */
int img_sixel(struct buf *out, const uint8_t *idx, int w, int h,
              const uint8_t *pal, int n);

/* What a payload claims to be: its footprint in cells, its size in
 * pixels and (kitty) the image id; 0 there: any id. */
struct img_geom {
	int cols, rows, px_w, px_h;
	unsigned kitty_id;
};
/* Whether p[0..n) is a payload the encoders of this mode could have
 * made for g: sixel: one DCS "\033P[0-9;]*q" with a raster no larger
 * than g's pixels and only sixel data inside it; kitty: the a=t
 * chunks of img_kitty with g's size and id, no other keys; blocks:
 * g->rows lines of g->cols "▀" with img_blocks' SGRs. The client
 * refuses anything else before it reaches the terminal. */
int img_payload_ok(enum img_mode mode, const char *p, size_t n,
                   const struct img_geom *g);

#endif
