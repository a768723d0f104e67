/* assay_image.c: the `assay-image` helper process. Image previews are
 * decoded (libpng) and encoded (libsixel, kitty, half blocks) here, not
 * in assay: the PNG comes from code the agent ran, so a hostile or huge
 * file meets a process with CPU, memory and file limits that the TUI
 * kills after a timeout, and the main process never loads libpng or
 * libsixel.
 *
 *   assay-image MODE [key=value...] < FILE.png
 *     MODE      sixel | kitty | blocks | info
 *     cells=CxR the box in cells (default 80x24)
 *     cell=WxH  pixels per cell (default 10x20)
 *     box=WxH   the box in pixels (sixel, kitty; default cells x cell)
 *     colors=N  sixel colour registers, 2..256 (default 256)
 *     truecolor=0|1  blocks: 24-bit SGR, else the 256-colour cube
 *     id=N      kitty image id (default 1)
 *     bg=RRGGBB colour under transparent pixels (default 000000)
 *     upscale=0|1  scale small images up to the box (default 0)
 *   assay-image view max=LONG mpx=PIXELS short=SHORT [bg=RRGGBB] < IMAGE
 *     an image for the model: PNG, JPEG, GIF or WebP by its bytes,
 *     fitted (img_view_fit: long side <= max, then w*h <= mpx, then
 *     short side <= short; 0: no limit; never upscaled). A PNG is always
 *     decoded and re-encoded (IHDR, IDAT, IEND: the same input, the
 *     same bytes), its transparency over bg (default ffffff). A JPEG,
 *     GIF or WebP that fits (one frame, <= 3.9 MB) goes through as is;
 *     else a JPEG or GIF (its first frame) is decoded by libsixel's
 *     loaders and sent as PNG, and a WebP is refused (exit 4). Output:
 *     "ok view W H SRC_W SRC_H NBYTES MEDIA_TYPE\n", then the image.
 *     Refused from the header: over 25 Mpixel, 10000 px a side, 64 MiB.
 *
 * The file is stdin, already opened by the caller (assay opens it
 * beneath the workspace), so this process never resolves a path. A
 * regular file is read from offset 0 whatever its offset; a pipe works
 * too.
 *
 * Output on success (exit 0): one header line
 *     ok MODE COLS ROWS PX_W PX_H SRC_W SRC_H NBYTES\n
 * then exactly NBYTES of payload: sixel: one DCS "\033P...\033\\";
 * kitty: APC chunks "\033_G...;BASE64\033\\" (<= 4096 base64 bytes each,
 * m=1 ... m=0; a=t, f=24, o=z, i=ID, q=2: stored, not shown; the TUI
 * places it with a=p,i=ID); blocks: ROWS lines joined by
 * '\n', each SGR + COLS "▀" + "\033[0m"; info: "width=W height=H
 * color_type=T bit_depth=D interlace=I\n". COLS x ROWS is the footprint
 * in cells. Nothing from the file other than its pixels reaches the
 * payload (text chunks are discarded unread).
 *
 * The process confines itself first (image_confine.c): rlimits (CPU 4 s,
 * address space 1 GiB, no file writes, 16 descriptors) and a seccomp filter
 * that allows only memory, reading stdin, writing stdout and stderr, and
 * exiting (`assay-image selfcheck` prints what is in force;
 * `selfcheck-syscalls DIR` tries forbidden calls, for the tests).
 * ASSAY_IMAGE_TIMING=1 prints each stage's time on stderr.
 *
 * On failure: one line on stderr and exit code 1 (internal, out of
 * memory), 2 (usage), 3 (not a PNG; view: nor JPEG, GIF, WebP), 4 (over
 * the size limits: checked from the header before decoding; view: or
 * not to be brought within the box), 5 (truncated or damaged image). */
#include "assay/buf.h"
#include "assay/imgrender.h"
#include "assay/util.h"
#include "helpers/image_confine.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <sixel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

struct opts {
	enum img_mode mode;
	const char *mode_name;
	int cols, rows, cell_w, cell_h, box_w, box_h;
	int colors, truecolor, upscale;
	unsigned id;
	int bg[3];
	/* view: the box for the model (0: no limit), which were given */
	int view, max, short_side, given;
	long mpx;
};

struct input {
	unsigned char hdr[33];
	size_t hdr_len, hdr_off;
	const unsigned char *mem; /* view: the whole file, read first */
	size_t mem_len, mem_off;
	long long total;
	char msg[256];
	jmp_buf jb;
};

/* ASSAY_IMAGE_TIMING=1: each stage's time on stderr (benchmarks). */
static int timing;

static void stage(const char *what)
{
	static struct timespec last;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (timing && last.tv_sec)
		fprintf(stderr, "  %-10s %6.2f ms\n", what,
		        (double)(now.tv_sec - last.tv_sec) * 1e3 +
		            (double)(now.tv_nsec - last.tv_nsec) / 1e6);
	last = now;
}

/* stdin's fstat, taken by image_confine() before the filter (which
 * allows no fstat). */
static struct stat in_st;
static int in_st_ok;

static int fail(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int fail(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("image: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return code;
}

static int usage(void)
{
	fprintf(stderr,
	        "usage: assay-image sixel|kitty|blocks|info [cells=CxR] "
	        "[cell=WxH] [box=WxH] [colors=N] [truecolor=0|1] [id=N] "
	        "[bg=RRGGBB] [upscale=0|1] < FILE.png\n"
	        "       assay-image view max=LONG mpx=PIXELS short=SHORT "
	        "[bg=RRGGBB] < IMAGE\n");
	return IMG_EUSAGE;
}

static int parse_pair(const char *v, int *a, int *b, int max)
{
	char *end;
	long x = strtol(v, &end, 10);
	if (*end != 'x' || x < 1 || x > max)
		return -1;
	long y = strtol(end + 1, &end, 10);
	if (*end || y < 1 || y > max)
		return -1;
	*a = (int)x;
	*b = (int)y;
	return 0;
}

static int parse_int(const char *v, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

static int parse_bg(struct opts *o, const char *v)
{
	char *end;
	unsigned long c = strtoul(v, &end, 16);
	if (strlen(v) != 6 || *end)
		return -1;
	o->bg[0] = (int)(c >> 16) & 255;
	o->bg[1] = (int)(c >> 8) & 255;
	o->bg[2] = (int)c & 255;
	return 0;
}

static int parse_opt(struct opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq)
		return -1;
	size_t kl = (size_t)(eq - arg);
	const char *v = eq + 1;
	long x;
	if (kl == 5 && !strncmp(arg, "cells", 5))
		return parse_pair(v, &o->cols, &o->rows, 4000);
	if (kl == 4 && !strncmp(arg, "cell", 4))
		return parse_pair(v, &o->cell_w, &o->cell_h, 512);
	if (kl == 3 && !strncmp(arg, "box", 3))
		return parse_pair(v, &o->box_w, &o->box_h, IMG_MAX_BOX);
	if (kl == 6 && !strncmp(arg, "colors", 6)) {
		if (parse_int(v, 2, 256, &x) < 0)
			return -1;
		o->colors = (int)x;
		return 0;
	}
	if (kl == 9 && !strncmp(arg, "truecolor", 9)) {
		if (parse_int(v, 0, 1, &x) < 0)
			return -1;
		o->truecolor = (int)x;
		return 0;
	}
	if (kl == 7 && !strncmp(arg, "upscale", 7)) {
		if (parse_int(v, 0, 1, &x) < 0)
			return -1;
		o->upscale = (int)x;
		return 0;
	}
	if (kl == 2 && !strncmp(arg, "id", 2)) {
		if (parse_int(v, 1, 0x7fffffff, &x) < 0)
			return -1;
		o->id = (unsigned)x;
		return 0;
	}
	if (kl == 2 && !strncmp(arg, "bg", 2))
		return parse_bg(o, v);
	return -1;
}

/* view's keys: max=, mpx= and short= (each needed), bg= */
static int parse_view_opt(struct opts *o, const char *arg)
{
	static const char *const keys[] = {"max=", "mpx=", "short="};
	long x;
	if (!strncmp(arg, "bg=", 3))
		return parse_bg(o, arg + 3);
	for (int k = 0; k < 3; k++) {
		size_t kl = strlen(keys[k]);
		if (strncmp(arg, keys[k], kl) ||
		    parse_int(arg + kl, 0, k == 1 ? 1000000000L : 1000000, &x) <
		        0)
			continue;
		if (k == 0)
			o->max = (int)x;
		else if (k == 1)
			o->mpx = x;
		else
			o->short_side = (int)x;
		o->given |= 1 << k;
		return 0;
	}
	return -1;
}

static int parse_args(struct opts *o, int argc, char **argv)
{
	static const struct {
		const char *name;
		enum img_mode mode;
	} modes[] = {{"sixel", IMG_SIXEL},
	             {"kitty", IMG_KITTY},
	             {"blocks", IMG_BLOCKS},
	             {"info", IMG_INFO}};
	*o = (struct opts){.cols = 80,
	                   .rows = 24,
	                   .cell_w = 10,
	                   .cell_h = 20,
	                   .colors = 256,
	                   .id = 1};
	if (argc < 2)
		return -1;
	o->mode_name = NULL;
	if (!strcmp(argv[1], "view")) {
		o->view = 1;
		o->mode_name = "view";
		/* a chart with a transparent background is drawn for a
		 * white page: black under it would hide its text */
		o->bg[0] = o->bg[1] = o->bg[2] = 255;
	}
	for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
		if (!strcmp(argv[1], modes[i].name)) {
			o->mode = modes[i].mode;
			o->mode_name = modes[i].name;
		}
	if (!o->mode_name)
		return -1;
	for (int i = 2; i < argc; i++)
		if ((o->view ? parse_view_opt(o, argv[i])
		             : parse_opt(o, argv[i])) < 0) {
			fprintf(stderr, "image: bad argument '%s'\n", argv[i]);
			return -1;
		}
	if (o->view && o->given != 7) {
		fprintf(stderr, "image: view needs max=, mpx= and short= "
		                "(0: no limit)\n");
		return -1;
	}
	if (!o->box_w) {
		long bw = (long)o->cols * o->cell_w,
		     bh = (long)o->rows * o->cell_h;
		o->box_w = (int)(bw > IMG_MAX_BOX ? IMG_MAX_BOX : bw);
		o->box_h = (int)(bh > IMG_MAX_BOX ? IMG_MAX_BOX : bh);
	}
	return 0;
}

/* ---- input ---- */

/* Where stdin is read from: a regular file from offset 0 with pread
 * (the caller's descriptor may be anywhere, and its offset is shared
 * with ours, so it is left alone); a pipe sequentially. */
static off_t in_pos = -1;

static ssize_t read_full(int fd, void *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = in_pos >= 0 ? pread(fd, (char *)p + got, n - got,
		                                in_pos + (off_t)got)
		                        : read(fd, (char *)p + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	if (in_pos >= 0)
		in_pos += (off_t)got;
	return (ssize_t)got;
}

static void on_png_error(png_structp png, png_const_charp msg)
{
	struct input *in = png_get_error_ptr(png);
	snprintf(in->msg, sizeof in->msg, "%s", msg);
	longjmp(in->jb, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

/* libpng's reads: the header bytes already taken, then stdin. */
static void on_png_read(png_structp png, png_bytep out, size_t n)
{
	struct input *in = png_get_io_ptr(png);
	if (in->mem) {
		size_t got = in->mem_len - in->mem_off;
		if (got > n)
			got = n;
		memcpy(out, in->mem + in->mem_off, got);
		in->mem_off += got;
		if (got < n)
			png_error(png,
			          "truncated PNG: the file ends before the "
			          "image data does; was it still being "
			          "written?");
		return;
	}
	size_t from_hdr = in->hdr_len - in->hdr_off;
	if (from_hdr > n)
		from_hdr = n;
	memcpy(out, in->hdr + in->hdr_off, from_hdr);
	in->hdr_off += from_hdr;
	ssize_t r = read_full(STDIN_FILENO, out + from_hdr, n - from_hdr);
	if (r < 0)
		png_error(png, "read error");
	in->total += r;
	if (in->total > IMG_MAX_FILE)
		png_error(png, "file larger than 64 MiB");
	if ((size_t)r < n - from_hdr)
		png_error(png, "truncated PNG: the file ends before the image "
		               "data does; was it still being written?");
}

/* Blend the translucent pixels of an RGBA row over bg, in place. */
static void composite(uint8_t *rgba, int w, const int *bg)
{
	for (int x = 0; x < w; x++, rgba += 4) {
		unsigned a = rgba[3];
		if (a == 255)
			continue;
		for (int k = 0; k < 3; k++)
			rgba[k] =
			    (uint8_t)((rgba[k] * a +
			               (unsigned)bg[k] * (255 - a) + 127) /
			              255);
	}
}

struct decoded {
	struct img_scaler *sc;
	int w, h;
};

/* Decode stdin into the scaler for a dw x dh result. */
static int decode(struct input *in, const struct opts *o,
                  const struct img_hdr *h, int dw, int dh, struct decoded *d)
{
	/* volatile: read after longjmp */
	png_structp volatile png = NULL;
	png_infop volatile info = NULL;
	uint8_t *volatile rgba = NULL;
	struct img_scaler *volatile sc = NULL;
	int rc = IMG_ECORRUPT;
	png = png_create_read_struct(PNG_LIBPNG_VER_STRING, in, on_png_error,
	                             on_png_warning);
	if (!png)
		return fail(IMG_EINTERNAL, "out of memory");
	info = png_create_info_struct(png);
	if (!info || setjmp(in->jb)) {
		rc = !info ? fail(IMG_EINTERNAL, "out of memory")
		     : !strncmp(in->msg, "truncated", 9)
		         ? fail(IMG_ECORRUPT, "%s", in->msg)
		         : fail(IMG_ECORRUPT,
		                "damaged PNG: %s (its header says %ux%u); "
		                "save it again",
		                in->msg, h->w, h->h);
		goto out;
	}
	png_set_read_fn(png, in, on_png_read);
	/* the chunk CRCs still guard the data; zlib's own checksum of the
	 * inflated stream is redundant work */
	png_set_option(png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
	png_set_user_limits(png, IMG_MAX_SIDE, IMG_MAX_SIDE);
	png_set_chunk_cache_max(png, 128);
	png_set_chunk_malloc_max(png, 4u << 20);
	/* text, profiles and anything unknown: skipped, never inflated */
	static const png_byte skip[] = "tEXt\0zTXt\0iTXt\0iCCP\0sPLT\0eXIf\0";
	png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
	png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, skip, 6);
	png_read_info(png, info);
	png_set_expand(png);
	png_set_strip_16(png);
	png_set_gray_to_rgb(png);
	png_set_filler(png, 0xff, PNG_FILLER_AFTER);
	int passes = png_set_interlace_handling(png);
	png_read_update_info(png, info);
	if (png_get_rowbytes(png, info) != (size_t)h->w * 4) {
		rc = fail(IMG_EINTERNAL, "unexpected row layout");
		goto out;
	}
	size_t w = h->w;
	sc = img_scaler_new((int)h->w, (int)h->h, dw, dh, 4);
	if (passes > 1) {
		/* Adam7: the whole image first (bounded by the pixel limit) */
		rgba = malloc(w * 4 * h->h);
		if (!rgba) {
			rc = fail(IMG_EINTERNAL, "out of memory for %ux%u",
			          h->w, h->h);
			goto out;
		}
		for (int p = 0; p < passes; p++)
			for (uint32_t y = 0; y < h->h; y++)
				png_read_row(png, rgba + y * w * 4, NULL);
		for (uint32_t y = 0; y < h->h; y++) {
			composite(rgba + y * w * 4, (int)w, o->bg);
			img_scaler_row(sc, rgba + y * w * 4);
		}
	} else {
		rgba = malloc(w * 4);
		if (!rgba) {
			rc = fail(IMG_EINTERNAL, "out of memory");
			goto out;
		}
		for (uint32_t y = 0; y < h->h; y++) {
			png_read_row(png, rgba, NULL);
			composite(rgba, (int)w, o->bg);
			img_scaler_row(sc, rgba);
		}
	}
	/* the image is complete; trailing chunks do not matter */
	d->sc = sc;
	d->w = dw;
	d->h = dh;
	sc = NULL;
	rc = IMG_OK;
out:
	png_destroy_read_struct((png_structpp)&png, (png_infopp)&info, NULL);
	free(rgba);
	img_scaler_free(sc);
	return rc;
}

/* ---- encoders ---- */

static int on_sixel_write(char *data, int size, void *priv)
{
	return buf_append(priv, data, (size_t)size) < 0 ? -1 : size;
}

/* Colour runs per band, summed: a colour starts a run in a pixel
 * column it covers when it did not cover the column before. */
static double band_runs(const uint8_t *idx, int w, int h)
{
	double runs = 0;
	for (int y0 = 0; y0 < h; y0 += 6) {
		int rows = h - y0 < 6 ? h - y0 : 6;
		int prev[6] = {-1, -1, -1, -1, -1, -1}, cur[6];
		for (int x = 0; x < w; x++) {
			for (int r = 0; r < rows; r++) {
				int c = idx[(size_t)(y0 + r) * w + x], seen = 0;
				for (int k = 0; k < rows && !seen; k++)
					seen = prev[k] == c ||
					       (k < r && cur[k] == c);
				runs += !seen;
				cur[r] = c;
			}
			memcpy(prev, cur, sizeof prev);
		}
	}
	return runs;
}

static int encode_sixel(const struct opts *o, const uint8_t *rgb, int w, int h,
                        struct buf *out)
{
	size_t npix = (size_t)w * h;
	uint8_t pal[256 * 3];
	uint8_t *idx = malloc(npix);
	sixel_output_t *so = NULL;
	sixel_dither_t *dither = NULL;
	int rc = IMG_EINTERNAL;
	if (!idx)
		return fail(IMG_EINTERNAL, "out of memory");
	int n = img_quantize_exact(rgb, npix, o->colors, pal, idx);
	if (n < 0)
		n = img_quantize(rgb, npix, o->colors, pal, idx);
	stage("quantize");
	/* libsixel keeps a band's colour runs in a sorted list: its time
	 * grows with their square, fine for a chart (a third of a run per
	 * pixel column: white, grid, a few lines), seconds for a heatmap
	 * or noise (3 to 6 runs a column). Those go to our encoder,
	 * whose cost is the pixels plus the runs. */
	double runs = band_runs(idx, w, h);
	if (runs > (double)w * ((h + 5) / 6)) {
		int bad = img_sixel(out, idx, w, h, pal, n) < 0;
		stage("sixel (own)");
		free(idx);
		return bad ? fail(IMG_EINTERNAL, "output too large") : IMG_OK;
	}
	if (n < 2) /* libsixel wants two registers at least */
		memcpy(pal + 3, pal, 3), n = 2;
	if (SIXEL_FAILED(sixel_output_new(&so, on_sixel_write, out, NULL)) ||
	    SIXEL_FAILED(sixel_dither_new(&dither, n, NULL))) {
		fail(IMG_EINTERNAL, "libsixel: out of memory");
		goto out;
	}
	sixel_output_set_encode_policy(so, SIXEL_ENCODEPOLICY_FAST);
	sixel_dither_set_palette(dither, pal);
	sixel_dither_set_pixelformat(dither, SIXEL_PIXELFORMAT_PAL8);
	int bad = SIXEL_FAILED(sixel_encode(idx, w, h, 1, dither, so));
	stage("sixel");
	if (bad) {
		fail(IMG_EINTERNAL,
		     "libsixel: encoding failed (output over "
		     "%u MiB?)",
		     IMG_MAX_PAYLOAD >> 20);
		goto out;
	}
	rc = IMG_OK;
out:
	if (dither)
		sixel_dither_unref(dither);
	if (so)
		sixel_output_unref(so);
	free(idx);
	return rc;
}

static int encode_kitty(const struct opts *o, const uint8_t *rgb, int w, int h,
                        struct buf *out)
{
	uLong n = (uLong)w * h * 3;
	uLongf zn = compressBound(n);
	Bytef *z = malloc(zn);
	if (!z)
		return fail(IMG_EINTERNAL, "out of memory");
	if (compress2(z, &zn, rgb, n, 1) != Z_OK) {
		free(z);
		return fail(IMG_EINTERNAL, "zlib: compression failed");
	}
	struct img_kitty k = {
	    .format = 24, .compressed = 1, .w = w, .h = h, .id = o->id};
	int rc = img_kitty(out, z, zn, &k);
	free(z);
	return rc < 0 ? fail(IMG_EINTERNAL, "output too large") : IMG_OK;
}

static int write_all(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(STDOUT_FILENO, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int emit(const struct opts *o, int cols, int rows, int pw, int ph,
                const struct img_hdr *h, const struct buf *payload)
{
	char head[160];
	int hn = snprintf(head, sizeof head, "ok %s %d %d %d %d %u %u %zu\n",
	                  o->mode_name, cols, rows, pw, ph, h->w, h->h,
	                  payload->len);
	if (write_all(head, (size_t)hn) < 0 ||
	    write_all(payload->data ? payload->data : "", payload->len) < 0)
		return fail(IMG_EINTERNAL, "write: %s", strerror(errno));
	return IMG_OK;
}

/* ---- view: an image for the model ---- */

static void on_png_write(png_structp png, png_bytep data, size_t n)
{
	if (buf_append(png_get_io_ptr(png), data, n) < 0)
		png_error(png, "output too large");
}

static void on_png_flush(png_structp png)
{
	(void)png;
}

/* rgb as a PNG of IHDR, IDAT and IEND only (no time, no text): the
 * same pixels give the same bytes, so a resumed run rebuilds its
 * requests byte for byte. */
static int encode_png(const uint8_t *rgb, int w, int h, struct buf *out)
{
	struct input e = {0};
	png_structp volatile png = png_create_write_struct(
	    PNG_LIBPNG_VER_STRING, &e, on_png_error, on_png_warning);
	png_infop volatile info = png ? png_create_info_struct(png) : NULL;
	int rc = IMG_OK;
	if (!info)
		rc = fail(IMG_EINTERNAL, "out of memory");
	else if (setjmp(e.jb))
		rc = fail(IMG_EINTERNAL, "PNG encoding failed: %s", e.msg);
	else {
		png_set_write_fn(png, out, on_png_write, on_png_flush);
		png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8,
		             PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
		             PNG_COMPRESSION_TYPE_DEFAULT,
		             PNG_FILTER_TYPE_DEFAULT);
		/* charts (flat areas, antialiased edges) deflate smaller
		 * and twice as fast unfiltered as with libpng's adaptive
		 * filters (172 KB, 40 ms against 174 KB, 66 ms) */
		png_set_filter(png, 0, PNG_FILTER_NONE);
		png_set_compression_level(png, 6);
		png_write_info(png, info);
		for (int y = 0; y < h; y++)
			png_write_row(png, rgb + (size_t)y * w * 3);
		png_write_end(png, NULL);
	}
	png_destroy_write_struct((png_structpp)&png, (png_infopp)&info);
	return rc;
}

struct frame_ctx {
	int sw, sh, dw, dh;
	struct img_scaler *sc;
	char msg[160];
};

/* libsixel's loader hands over the decoded first frame: scaled here,
 * as it is freed when this returns. */
static SIXELSTATUS on_frame(sixel_frame_t *f, void *priv)
{
	struct frame_ctx *c = priv;
	int w = sixel_frame_get_width(f), h = sixel_frame_get_height(f);
	if (sixel_frame_get_pixelformat(f) != SIXEL_PIXELFORMAT_RGB888 ||
	    w != c->sw || h != c->sh || c->sc) {
		snprintf(c->msg, sizeof c->msg,
		         "it decodes to %dx%d pixels, its header says %dx%d", w,
		         h, c->sw, c->sh);
		return SIXEL_BAD_INPUT;
	}
	const uint8_t *px = sixel_frame_get_pixels(f);
	c->sc = img_scaler_new(w, h, c->dw, c->dh, 3);
	for (int y = 0; y < h; y++)
		img_scaler_row(c->sc, px + (size_t)y * w * 3);
	return SIXEL_OK;
}

/* A JPEG or GIF (its first frame) decoded by libsixel's own loaders
 * (stb_image, libsixel's GIF reader) into the scaler. The loader of
 * libsixel 1.10 takes a file name only, "-" being the FILE stdin:
 * stdin is pointed at the bytes already read (fmemopen), so nothing
 * is opened and the seccomp filter holds. */
static int decode_other(const struct opts *o, const struct buf *file,
                        const struct img_view_hdr *h, int dw, int dh,
                        struct decoded *d)
{
	sixel_allocator_t *al = NULL;
	FILE *saved = stdin, *mem = NULL;
	unsigned char bg[3] = {(unsigned char)o->bg[0], (unsigned char)o->bg[1],
	                       (unsigned char)o->bg[2]};
	int cancel = 0;
	struct frame_ctx c = {h->w, h->h, dw, dh, NULL, ""};
	if (SIXEL_FAILED(sixel_allocator_new(&al, NULL, NULL, NULL, NULL)) ||
	    !(mem = fmemopen(file->data, file->len, "r"))) {
		if (al)
			sixel_allocator_unref(al);
		return fail(IMG_EINTERNAL, "out of memory");
	}
	stdin = mem;
	SIXELSTATUS st =
	    sixel_helper_load_image_file("-", 1, 0, 256, bg, SIXEL_LOOP_DISABLE,
	                                 on_frame, 0, &cancel, &c, al);
	stdin = saved;
	fclose(mem);
	sixel_allocator_unref(al);
	const char *kind = h->type == IMG_GIF ? "GIF" : "JPEG";
	if (SIXEL_FAILED(st) || !c.sc) {
		const char *why = c.msg[0] ? c.msg
		                  : SIXEL_FAILED(st)
		                      ? sixel_helper_get_additional_message()
		                      : "no image in it";
		img_scaler_free(c.sc);
		return fail(IMG_ECORRUPT,
		            "cannot decode this %s (%s); save it as PNG", kind,
		            why && *why ? why : "damaged");
	}
	d->sc = c.sc;
	d->w = dw;
	d->h = dh;
	return IMG_OK;
}

/* What the model takes, for a message: "1568 px a side, 1.15 Mpixel" */
static const char *box_text(const struct opts *o)
{
	static char s[96];
	int k = 0;
	s[0] = 0;
	if (o->max)
		k += snprintf(s, sizeof s, "%d px a side", o->max);
	if (o->mpx)
		k += snprintf(s + k, sizeof s - (size_t)k, "%s%.2f Mpixel",
		              k ? ", " : "", (double)o->mpx / 1e6);
	if (o->short_side)
		snprintf(s + k, sizeof s - (size_t)k,
		         "%s%d px on the short side", k ? ", " : "",
		         o->short_side);
	return s;
}

/* The file, read whole (a JPEG's size can follow megabytes of
 * metadata, and what goes through unchanged is its bytes). */
static int read_input(struct buf *file)
{
	char chunk[65536];
	if (in_st_ok && S_ISREG(in_st.st_mode)) {
		in_pos = 0;
		if (in_st.st_size > IMG_MAX_FILE)
			return fail(IMG_ETOOBIG,
			            "image file is %lld MiB: too large to view "
			            "(limit %lld MiB); save a smaller figure",
			            (long long)in_st.st_size >> 20,
			            IMG_MAX_FILE >> 20);
	}
	for (;;) {
		ssize_t r = read_full(STDIN_FILENO, chunk, sizeof chunk);
		if (r < 0)
			return fail(IMG_EINTERNAL, "cannot read the image: %s",
			            strerror(errno));
		if (buf_append(file, chunk, (size_t)r) < 0)
			return fail(IMG_ETOOBIG,
			            "image file is over %lld MiB: too large to "
			            "view; save a smaller figure",
			            IMG_MAX_FILE >> 20);
		if ((size_t)r < sizeof chunk)
			return IMG_OK;
	}
}

/* Why an image that must be scaled cannot be (WebP: no decoder here). */
static int refuse_webp(const struct opts *o, const struct img_view_hdr *h,
                       size_t n)
{
	if (h->frames > 1)
		return fail(IMG_ETOOBIG,
		            "an animated WebP: the model takes one still "
		            "image; save the frame to look at as PNG");
	if (n > IMG_VIEW_MAX_PASS)
		return fail(IMG_ETOOBIG,
		            "a WebP of %.1f MB is more than one image may "
		            "be (%.1f MB: 5 MiB in base64); save it smaller "
		            "or as PNG",
		            (double)n / 1e6, IMG_VIEW_MAX_PASS / 1e6);
	return fail(IMG_ETOOBIG,
	            "a WebP of %dx%d is larger than the model takes (%s); "
	            "save it smaller or as PNG",
	            h->w, h->h, box_text(o));
}

static int emit_view(int w, int h, const struct img_view_hdr *src,
                     const char *data, size_t n, const char *media)
{
	char head[160];
	int hn = snprintf(head, sizeof head, "ok view %d %d %d %d %zu %s\n", w,
	                  h, src->w, src->h, n, media);
	if (write_all(head, (size_t)hn) < 0 || write_all(data, n) < 0)
		return fail(IMG_EINTERNAL, "write: %s", strerror(errno));
	return IMG_OK;
}

/* `view`: sniffed, checked against the limits from its header, fitted
 * to the box; a PNG always decoded and re-encoded, a JPEG, GIF or WebP
 * that fits passed through. */
static int run_view(const struct opts *o)
{
	struct buf file, out;
	struct img_view_hdr h;
	struct decoded d = {0};
	char *err = NULL;
	int dw, dh;
	buf_init(&file, IMG_MAX_FILE);
	buf_init(&out, IMG_MAX_PAYLOAD);
	stage("start");
	int rc = read_input(&file);
	stage("read");
	if (rc == IMG_OK &&
	    (rc = img_view_header(file.data, file.len, &h, &err)) == IMG_OK)
		rc = img_view_limits(&h, (long long)file.len, &err);
	if (err)
		fail(rc, "%s", err);
	if (rc != IMG_OK)
		goto out;
	img_view_fit(h.w, h.h, o->max, o->mpx, o->short_side, &dw, &dh);
	if (h.type != IMG_PNG && dw == h.w && dh == h.h && h.frames == 1 &&
	    file.len <= IMG_VIEW_MAX_PASS) {
		rc = emit_view(dw, dh, &h, file.data, file.len,
		               img_media_type(h.type));
		goto out;
	}
	if (h.type == IMG_WEBP) {
		rc = refuse_webp(o, &h, file.len);
		goto out;
	}
	if (h.type == IMG_PNG) {
		struct input in = {.mem = (const unsigned char *)file.data,
		                   .mem_len = file.len};
		rc = decode(&in, o, &h.png, dw, dh, &d);
	} else {
		rc = decode_other(o, &file, &h, dw, dh, &d);
	}
	stage("decode");
	if (rc == IMG_OK)
		rc = encode_png(img_scaler_result(d.sc), dw, dh, &out);
	stage("encode");
	if (rc == IMG_OK)
		rc = emit_view(dw, dh, &h, out.data, out.len, "image/png");
out:
	img_scaler_free(d.sc);
	free(err);
	buf_free(&file);
	buf_free(&out);
	return rc;
}

static int ceil_div(int a, int b)
{
	return (a + b - 1) / b;
}

static int run(const struct opts *o)
{
	struct input in = {0};
	struct img_hdr h;
	char *err = NULL;
	long long size = -1;
	if (in_st_ok && S_ISREG(in_st.st_mode)) {
		size = in_st.st_size;
		in_pos = 0;
	}
	ssize_t r = read_full(STDIN_FILENO, in.hdr, sizeof in.hdr);
	if (r < 0)
		return fail(IMG_EINTERNAL, "cannot read the image: %s",
		            strerror(errno));
	in.hdr_len = (size_t)r;
	int rc = img_png_header(in.hdr, in.hdr_len, size, &h, &err);
	if (rc != IMG_OK) {
		fail(rc, "%s", err);
		free(err);
		return rc;
	}
	struct buf out;
	buf_init(&out, IMG_MAX_PAYLOAD);
	int cols = 0, rows = 0, dw, dh;
	if (o->mode == IMG_INFO) {
		buf_printf(&out,
		           "width=%u height=%u color_type=%d bit_depth=%d "
		           "interlace=%d\n",
		           h.w, h.h, h.color_type, h.depth, h.interlace);
		rc = emit(o, 0, 0, 0, 0, &h, &out);
		buf_free(&out);
		return rc;
	}
	if (o->mode == IMG_BLOCKS)
		img_blocks_fit((int)h.w, (int)h.h, o->cols, o->rows, o->cell_w,
		               o->cell_h, o->upscale, &dw, &dh);
	else
		img_fit((int)h.w, (int)h.h, o->box_w, o->box_h, o->upscale, &dw,
		        &dh);
	struct decoded d = {0};
	in.total = in.hdr_len;
	stage("start");
	rc = decode(&in, o, &h, dw, dh, &d);
	stage("decode");
	if (rc != IMG_OK) {
		buf_free(&out);
		return rc;
	}
	const uint8_t *px = img_scaler_result(d.sc);
	switch (o->mode) {
	case IMG_BLOCKS:
		cols = dw;
		rows = ceil_div(dh, 2);
		rc = img_blocks(&out, px, dw, dh, o->truecolor) < 0
		         ? fail(IMG_EINTERNAL, "output too large")
		         : IMG_OK;
		break;
	case IMG_SIXEL:
		cols = ceil_div(dw, o->cell_w);
		rows = ceil_div(dh, o->cell_h);
		rc = encode_sixel(o, px, dw, dh, &out);
		break;
	case IMG_KITTY:
		cols = ceil_div(dw, o->cell_w);
		rows = ceil_div(dh, o->cell_h);
		rc = encode_kitty(o, px, dw, dh, &out);
		break;
	case IMG_INFO:
		break;
	}
	img_scaler_free(d.sc);
	if (rc == IMG_OK)
		rc = emit(o, cols, rows, dw, dh, &h, &out);
	buf_free(&out);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	const char *t = getenv("ASSAY_IMAGE_TIMING");
	timing = t && *t == '1';
	in_st_ok = image_confine(&in_st);
	if (argc == 2 && !strcmp(argv[1], "selfcheck"))
		return image_selfcheck();
	if (argc == 3 && !strcmp(argv[1], "selfcheck-syscalls"))
		return image_selfcheck_syscalls(argv[2]);
	if (parse_args(&o, argc, argv) < 0)
		return usage();
	return o.view ? run_view(&o) : run(&o);
}
