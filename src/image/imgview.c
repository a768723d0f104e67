/* imgview.c: the pure code of `assay-image view`, which prepares an
 * image for the model (see imgrender.h): the type told by the bytes,
 * the JPEG, GIF and WebP header walks (PNG's IHDR check is
 * imgrender.c's img_png_ihdr), the view's limits, its media types and
 * its fitting rule. The previews' code is in imgrender.c. */
#include "assay/imgrender.h"
#include "assay/util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- what view takes: PNG, JPEG, GIF, WebP ---- */

static unsigned be16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static unsigned le16(const unsigned char *p)
{
	return (unsigned)p[1] << 8 | p[0];
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[1] << 8 | p[0];
}

static int truncated(char **err, const char *what)
{
	set_err(err,
	        "truncated %s: the file ends before its image data does; "
	        "was it still being written?",
	        what);
	return IMG_ECORRUPT;
}

/* JPEG: the markers walked from SOI, by their lengths, to the first
 * scan; the size is the first SOFn's; an EOI must follow the scan. */
static int jpeg_size(const unsigned char *p, size_t n, struct img_view_hdr *h,
                     char **err)
{
	size_t i = 2;
	int sof = 0;
	while (i < n) {
		if (p[i] != 0xff) {
			set_err(err, "damaged JPEG: no marker at byte %zu", i);
			return IMG_ECORRUPT;
		}
		while (i < n && p[i] == 0xff) /* fill bytes */
			i++;
		if (i + 3 > n)
			break;
		unsigned m = p[i++];
		if (m == 0x01 || (m >= 0xd0 && m <= 0xd7))
			continue; /* TEM, RSTn: no length */
		size_t len = be16(p + i);
		if (m == 0x00 || m == 0xd8 || m == 0xd9 || len < 2) {
			set_err(err, "damaged JPEG: marker 0x%02x at byte %zu",
			        m, i - 1);
			return IMG_ECORRUPT;
		}
		if (i + len > n)
			break;
		if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 &&
		    m != 0xcc && !sof) {
			if (len < 8) {
				set_err(err,
				        "damaged JPEG: short frame header");
				return IMG_ECORRUPT;
			}
			h->h = (int)be16(p + i + 3);
			h->w = (int)be16(p + i + 5);
			sof = 1;
		}
		i += len;
		if (m != 0xda)
			continue;
		if (!sof || !h->w || !h->h) {
			set_err(err, "damaged JPEG: %s",
			        sof ? "no height in its frame header (DNL "
			              "JPEGs are not supported; save it as PNG)"
			            : "a scan before its frame header");
			return IMG_ECORRUPT;
		}
		for (size_t k = n - 2; k >= i; k--)
			if (p[k] == 0xff && p[k + 1] == 0xd9)
				return IMG_OK;
		break;
	}
	return truncated(err, "JPEG");
}

/* GIF: the logical screen, then the blocks walked to the trailer,
 * counting the images. */
static int gif_size(const unsigned char *p, size_t n, struct img_view_hdr *h,
                    char **err)
{
	if (n < 13)
		return truncated(err, "GIF");
	h->w = (int)le16(p + 6);
	h->h = (int)le16(p + 8);
	size_t i = 13 + (p[10] & 0x80 ? 3u << ((p[10] & 7) + 1) : 0);
	int frames = 0;
	while (i < n) {
		unsigned b = p[i++];
		if (b == 0x3b && frames && h->w && h->h) {
			h->frames = frames > 1 ? 2 : 1;
			return IMG_OK;
		}
		if (b == 0x21) {
			i++; /* the extension's label */
		} else if (b == 0x2c && i + 9 <= n) {
			unsigned fl = p[i + 8];
			i += 10 + (fl & 0x80 ? 3u << ((fl & 7) + 1) : 0);
			frames++;
		} else if (b != 0x2c) {
			set_err(err, "damaged GIF: %s at byte %zu",
			        b == 0x3b ? "an empty image"
			                  : "an unknown block",
			        i - 1);
			return IMG_ECORRUPT;
		}
		while (i < n && p[i]) /* data sub-blocks, to the empty one */
			i += p[i] + 1u;
		i++;
	}
	return truncated(err, "GIF");
}

/* WebP: RIFF, then a VP8 (lossy), VP8L (lossless) or VP8X (extended:
 * the canvas, and whether it is animated) chunk. */
static int webp_size(const unsigned char *p, size_t n, struct img_view_hdr *h,
                     char **err)
{
	if (n < 30 || (uint64_t)le32(p + 4) + 8 > n)
		return truncated(err, "WebP");
	if (!memcmp(p + 12, "VP8 ", 4) && !memcmp(p + 23, "\x9d\x01\x2a", 3)) {
		h->w = (int)(le16(p + 26) & 0x3fff);
		h->h = (int)(le16(p + 28) & 0x3fff);
	} else if (!memcmp(p + 12, "VP8L", 4) && p[20] == 0x2f) {
		uint32_t b = le32(p + 21);
		h->w = (int)(b & 0x3fff) + 1;
		h->h = (int)((b >> 14) & 0x3fff) + 1;
	} else if (!memcmp(p + 12, "VP8X", 4)) {
		h->w = (int)(le32(p + 24) & 0xffffff) + 1;
		h->h = (int)(le32(p + 27) & 0xffffff) + 1;
		h->frames = p[20] & 0x02 ? 2 : 1;
	} else {
		set_err(err, "damaged WebP: no VP8, VP8L or VP8X header");
		return IMG_ECORRUPT;
	}
	if (!h->w || !h->h) {
		set_err(err, "damaged WebP: an empty image");
		return IMG_ECORRUPT;
	}
	return IMG_OK;
}

int img_view_header(const void *data, size_t n, struct img_view_hdr *h,
                    char **err)
{
	const unsigned char *p = data;
	*h = (struct img_view_hdr){.frames = 1};
	if (n >= 8 && !memcmp(p, "\x89PNG\r\n\x1a\n", 8)) {
		h->type = IMG_PNG;
		int rc = img_png_ihdr(p, n, &h->png, err);
		h->w = (int)h->png.w;
		h->h = (int)h->png.h;
		return rc;
	}
	if (n >= 3 && !memcmp(p, "\xff\xd8\xff", 3)) {
		h->type = IMG_JPEG;
		return jpeg_size(p, n, h, err);
	}
	if (n >= 6 && (!memcmp(p, "GIF87a", 6) || !memcmp(p, "GIF89a", 6))) {
		h->type = IMG_GIF;
		return gif_size(p, n, h, err);
	}
	if (n >= 16 && !memcmp(p, "RIFF", 4) && !memcmp(p + 8, "WEBPVP8", 7)) {
		h->type = IMG_WEBP;
		return webp_size(p, n, h, err);
	}
	const char *is =
	    !n                                ? "the file is empty"
	    : n >= 4 && !memcmp(p, "%PDF", 4) ? "this is a PDF"
	    : n >= 4 && (!memcmp(p, "<svg", 4) || !memcmp(p, "<?xm", 4))
	        ? "this is SVG or XML"
	        : "its first bytes are not PNG, JPEG, GIF or WebP";
	set_err(err,
	        "not an image the model can view: %s (PNG, JPEG, GIF and "
	        "WebP only; save charts with plt.savefig(\"NAME.png\"))",
	        is);
	return IMG_ENOTPNG;
}

int img_view_limits(const struct img_view_hdr *h, long long file_size,
                    char **err)
{
	if (h->w > IMG_MAX_SIDE || h->h > IMG_MAX_SIDE ||
	    (long long)h->w * h->h > IMG_VIEW_MAX_PIXELS) {
		set_err(err,
		        "image is %dx%d pixels: too large to view (limits: %d "
		        "pixels a side, %lld Mpixel); save a smaller figure "
		        "(a lower dpi or figsize)",
		        h->w, h->h, IMG_MAX_SIDE,
		        IMG_VIEW_MAX_PIXELS / 1000000);
		return IMG_ETOOBIG;
	}
	if (file_size > IMG_MAX_FILE) {
		set_err(err,
		        "image file is %lld MiB: too large to view (limit "
		        "%lld MiB); save a smaller figure",
		        file_size >> 20, IMG_MAX_FILE >> 20);
		return IMG_ETOOBIG;
	}
	return IMG_OK;
}

const char *img_media_type(enum img_type t)
{
	static const char *const names[] = {"image/png", "image/jpeg",
	                                    "image/gif", "image/webp"};
	return names[t];
}

/* ---- fitting ---- */

void img_view_fit(int sw, int sh, int max, long mpx, int short_side, int *w,
                  int *h)
{
	int lo = sw < sh ? sw : sh, hi = sw < sh ? sh : sw;
	double s = 1;
	if (max > 0 && (double)max / hi < s)
		s = (double)max / hi;
	if (mpx > 0 && (double)mpx / ((double)sw * sh) < s * s)
		s = sqrt((double)mpx / ((double)sw * sh));
	if (short_side > 0 && (double)short_side / lo < s)
		s = (double)short_side / lo;
	if (s >= 1) {
		*w = sw;
		*h = sh;
		return;
	}
	long ww = lround(sw * s), hh = lround(sh * s);
	/* rounding up both sides can pass the pixel limit; down cannot */
	if (mpx > 0 && ww * hh > mpx) {
		ww = (long)(sw * s);
		hh = (long)(sh * s);
	}
	int iw = (int)ww, ih = (int)hh;
	*w = iw < 1 ? 1 : iw > sw ? sw : iw;
	*h = ih < 1 ? 1 : ih > sh ? sh : ih;
}
