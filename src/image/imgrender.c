/* imgrender.c: pure image code for previews (see imgrender.h): PNG
 * header checks, fitting, area-average scaling, half blocks, the
 * xterm-256 mapping, palette quantisation, a sixel encoder for
 * many-coloured images, kitty chunking and the payload checks. The
 * PNG signature and IHDR check is shared with `assay-image view`,
 * whose own parts (preparing an image for the model) are in
 * imgview.c. */
#include "assay/imgrender.h"
#include "assay/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- PNG header ---- */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint32_t crc32_png(const unsigned char *p, size_t n)
{
	static uint32_t table[256];
	if (!table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++)
		c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static int depth_ok(int ct, int d)
{
	switch (ct) {
	case 0:
		return d == 1 || d == 2 || d == 4 || d == 8 || d == 16;
	case 3:
		return d == 1 || d == 2 || d == 4 || d == 8;
	case 2:
	case 4:
	case 6:
		return d == 8 || d == 16;
	}
	return 0;
}

/* The signature and IHDR, no limits (img_view_header's PNG too). */
int img_png_ihdr(const void *data, size_t n, struct img_hdr *h, char **err)
{
	static const unsigned char sig[8] = {0x89, 'P',  'N',  'G',
	                                     '\r', '\n', 0x1a, '\n'};
	const unsigned char *p = data;
	size_t m = n < 8 ? n : 8;
	if (n == 0) {
		set_err(err, "the file is empty: not a PNG image");
		return IMG_ENOTPNG;
	}
	if (memcmp(p, sig, m)) {
		set_err(err, "not a PNG image (previews show PNG files only; "
		             "save charts with plt.savefig(\"NAME.png\"))");
		return IMG_ENOTPNG;
	}
	if (n < 33) {
		set_err(err,
		        "truncated PNG: the file ends inside its header "
		        "(%zu bytes); was it still being written?",
		        n);
		return IMG_ECORRUPT;
	}
	if (be32(p + 8) != 13 || memcmp(p + 12, "IHDR", 4) ||
	    crc32_png(p + 12, 17) != be32(p + 29)) {
		set_err(err, "damaged PNG: its IHDR header is invalid");
		return IMG_ECORRUPT;
	}
	h->w = be32(p + 16);
	h->h = be32(p + 20);
	h->depth = p[24];
	h->color_type = p[25];
	h->interlace = p[28];
	if (!h->w || !h->h || h->w > INT32_MAX || h->h > INT32_MAX ||
	    !depth_ok(h->color_type, h->depth) || p[26] || p[27] ||
	    h->interlace > 1) {
		set_err(err,
		        "damaged PNG: invalid IHDR (%ux%u, depth %d, "
		        "colour type %d)",
		        h->w, h->h, h->depth, h->color_type);
		return IMG_ECORRUPT;
	}
	return IMG_OK;
}

int img_png_header(const void *data, size_t n, long long file_size,
                   struct img_hdr *h, char **err)
{
	int rc = img_png_ihdr(data, n, h, err);
	if (rc != IMG_OK)
		return rc;
	if (h->w > IMG_MAX_SIDE || h->h > IMG_MAX_SIDE ||
	    (long long)h->w * h->h > IMG_MAX_PIXELS) {
		set_err(err,
		        "image is %ux%u pixels: too large to preview "
		        "(limits: %d pixels a side, %lld Mpixel); open it "
		        "in an image viewer",
		        h->w, h->h, IMG_MAX_SIDE, IMG_MAX_PIXELS / 1000000);
		return IMG_ETOOBIG;
	}
	if (file_size > IMG_MAX_FILE) {
		set_err(err,
		        "image file is %lld MiB: too large to preview "
		        "(limit %lld MiB)",
		        file_size >> 20, IMG_MAX_FILE >> 20);
		return IMG_ETOOBIG;
	}
	return IMG_OK;
}

/* ---- fitting ---- */

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void img_fit(int sw, int sh, int bw, int bh, int upscale, int *w, int *h)
{
	double sx = (double)bw / sw, sy = (double)bh / sh;
	double s = sx < sy ? sx : sy;
	if (!upscale && s > 1)
		s = 1;
	*w = clampi((int)(sw * s + 0.5), 1, bw > 1 ? bw : 1);
	*h = clampi((int)(sh * s + 0.5), 1, bh > 1 ? bh : 1);
}

void img_blocks_fit(int sw, int sh, int cols, int rows, int cell_w, int cell_h,
                    int upscale, int *w, int *h)
{
	int pw, ph;
	img_fit(sw, sh, cols * cell_w, rows * cell_h, 1, &pw, &ph);
	/* a half block is cell_w x cell_h/2 physical pixels */
	int gw = clampi((int)((double)pw / cell_w + 0.5), 1, cols);
	int gh = clampi((int)(2.0 * ph / cell_h + 0.5), 1, rows * 2);
	if (!upscale && (gw > sw || gh > sh)) {
		double fx = (double)sw / gw, fy = (double)sh / gh;
		double f = fx < fy ? fx : fy;
		gw = clampi((int)(gw * f + 0.5), 1, cols);
		gh = clampi((int)(gh * f + 0.5), 1, rows * 2);
	}
	*w = gw;
	*h = gh;
}

/* ---- area-average scaling ---- */

#define WBITS 12 /* weights sum to 1 << WBITS per output pixel */

struct contrib {
	int start, n, w; /* source range; index of the first weight */
};

/* Which source pixels (and how much of each) make each of dn output
 * pixels along an axis of sn source pixels. */
static void contribs(int sn, int dn, struct contrib *c, uint16_t *wts)
{
	int wi = 0;
	for (int i = 0; i < dn; i++) {
		/* output pixel i is source [i*sn, (i+1)*sn) / dn */
		long long a = (long long)i * sn, b = (long long)(i + 1) * sn;
		int start = (int)(a / dn), end = (int)((b + dn - 1) / dn);
		c[i].start = start;
		c[i].n = end - start;
		c[i].w = wi;
		int sum = 0, big = wi;
		for (int k = start; k < end; k++) {
			long long lo = (long long)k * dn, hi = lo + dn;
			long long ov = (b < hi ? b : hi) - (a > lo ? a : lo);
			int wv = (int)((ov << WBITS) / sn);
			wts[wi] = (uint16_t)wv;
			if (wv > wts[big])
				big = wi;
			sum += wv;
			wi++;
		}
		wts[big] = (uint16_t)(wts[big] + ((1 << WBITS) - sum));
	}
}

/* Vertical first: each source row is added, weighted, into the open
 * output rows it covers (a contiguous, vectorisable loop over the
 * source width); the horizontal pass then runs only once per output
 * row, on the finished sums. */
struct img_scaler {
	int sw, sh, dw, dh, bpp, y, jlo, ring;
	struct contrib *hc, *vc;
	uint16_t *hw, *vw;
	uint32_t *acc; /* ring of `ring` open rows, sw * bpp sums each */
	uint8_t *out;
};

struct img_scaler *img_scaler_new(int sw, int sh, int dw, int dh, int bpp)
{
	struct img_scaler *s = xcalloc(1, sizeof *s);
	s->sw = sw;
	s->sh = sh;
	s->dw = dw;
	s->dh = dh;
	s->bpp = bpp;
	s->hc = xmalloc((size_t)dw * sizeof *s->hc);
	s->vc = xmalloc((size_t)dh * sizeof *s->vc);
	s->hw = xcalloc((size_t)sw + dw + 1, sizeof *s->hw);
	s->vw = xcalloc((size_t)sh + dh + 1, sizeof *s->vw);
	contribs(sw, dw, s->hc, s->hw);
	contribs(sh, dh, s->vc, s->vw);
	/* a source row feeds at most ceil(dh / sh) + 1 output rows */
	s->ring = (dh + sh - 1) / sh + 2;
	s->acc = xmalloc((size_t)sw * bpp * s->ring * sizeof *s->acc);
	s->out = xmalloc((size_t)dw * dh * 3);
	return s;
}

/* Output row j from its vertical sums a (values << WBITS). */
static void finish_row(struct img_scaler *s, int j, const uint32_t *a)
{
	uint8_t *o = s->out + (size_t)j * s->dw * 3;
	const int bpp = s->bpp;
	for (int x = 0; x < s->dw; x++, o += 3) {
		const struct contrib *c = &s->hc[x];
		const uint32_t *p = a + (size_t)c->start * bpp;
		const uint16_t *w = s->hw + c->w;
		uint64_t r = 0, g = 0, b = 0;
		for (int k = 0; k < c->n; k++, p += bpp) {
			r += (uint64_t)w[k] * p[0];
			g += (uint64_t)w[k] * p[1];
			b += (uint64_t)w[k] * p[2];
		}
		const uint64_t half = 1u << (2 * WBITS - 1);
		o[0] = (uint8_t)((r + half) >> (2 * WBITS));
		o[1] = (uint8_t)((g + half) >> (2 * WBITS));
		o[2] = (uint8_t)((b + half) >> (2 * WBITS));
	}
}

void img_scaler_row(struct img_scaler *s, const uint8_t *px)
{
	if (s->y >= s->sh)
		return;
	int y = s->y++;
	size_t n = (size_t)s->sw * s->bpp;
	for (int j = s->jlo; j < s->dh && s->vc[j].start <= y; j++) {
		const struct contrib *c = &s->vc[j];
		if (y >= c->start + c->n)
			continue;
		uint32_t wv = s->vw[c->w + (y - c->start)];
		uint32_t *a = s->acc + (size_t)(j % s->ring) * n;
		if (y == c->start) /* the row's first source row */
			for (size_t i = 0; i < n; i++)
				a[i] = wv * px[i];
		else
			for (size_t i = 0; i < n; i++)
				a[i] += wv * px[i];
		if (y == c->start + c->n - 1)
			finish_row(s, j, a);
	}
	while (s->jlo < s->dh && s->vc[s->jlo].start + s->vc[s->jlo].n - 1 <= y)
		s->jlo++;
}

const uint8_t *img_scaler_result(struct img_scaler *s)
{
	return s->out;
}

void img_scaler_free(struct img_scaler *s)
{
	if (!s)
		return;
	free(s->hc);
	free(s->vc);
	free(s->hw);
	free(s->vw);
	free(s->acc);
	free(s->out);
	free(s);
}

void img_scale(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh)
{
	struct img_scaler *s = img_scaler_new(sw, sh, dw, dh, 3);
	for (int y = 0; y < sh; y++)
		img_scaler_row(s, src + (size_t)y * sw * 3);
	memcpy(dst, s->out, (size_t)dw * dh * 3);
	img_scaler_free(s);
}

/* ---- xterm 256 colours ---- */

static const int cube[6] = {0, 95, 135, 175, 215, 255};

static int cube_index(int v)
{
	if (v < 48)
		return 0;
	if (v < 115)
		return 1;
	return (v - 35) / 40;
}

int img_xterm256(int r, int g, int b)
{
	int ri = cube_index(r), gi = cube_index(g), bi = cube_index(b);
	int cr = cube[ri], cg = cube[gi], cb = cube[bi];
	int dc =
	    (r - cr) * (r - cr) + (g - cg) * (g - cg) + (b - cb) * (b - cb);
	int avg = (r + g + b) / 3;
	int gy = avg > 238 ? 23 : avg < 3 ? 0 : (avg - 3) / 10;
	/* the nearer of the two grey levels around avg */
	if (gy < 23 && avg - (8 + 10 * gy) > (8 + 10 * (gy + 1)) - avg)
		gy++;
	int gv = 8 + 10 * gy;
	int dg =
	    (r - gv) * (r - gv) + (g - gv) * (g - gv) + (b - gv) * (b - gv);
	return dg < dc ? 232 + gy : 16 + 36 * ri + 6 * gi + bi;
}

/* ---- half blocks ---- */

static void sgr_colour(struct buf *out, int bg, int truecolor, const uint8_t *p)
{
	if (!p)
		buf_puts(out, "49");
	else if (truecolor)
		buf_printf(out, "%d;2;%d;%d;%d", bg ? 48 : 38, p[0], p[1],
		           p[2]);
	else
		buf_printf(out, "%d;5;%d", bg ? 48 : 38,
		           img_xterm256(p[0], p[1], p[2]));
}

/* A comparable code for a colour as the terminal will get it. */
static long colour_key(int truecolor, const uint8_t *p)
{
	if (!p)
		return -1;
	if (truecolor)
		return (long)p[0] << 16 | p[1] << 8 | p[2];
	return img_xterm256(p[0], p[1], p[2]);
}

int img_blocks(struct buf *out, const uint8_t *rgb, int w, int h, int truecolor)
{
	for (int y = 0; y < h; y += 2) {
		long pf = -2, pb = -2;
		if (y)
			buf_puts(out, "\n");
		for (int x = 0; x < w; x++) {
			const uint8_t *top = rgb + ((size_t)y * w + x) * 3;
			const uint8_t *bot =
			    y + 1 < h ? top + (size_t)w * 3 : NULL;
			long kf = colour_key(truecolor, top);
			long kb = colour_key(truecolor, bot);
			if (kf != pf || kb != pb) {
				buf_puts(out, "\033[");
				if (kf != pf)
					sgr_colour(out, 0, truecolor, top);
				if (kf != pf && kb != pb)
					buf_puts(out, ";");
				if (kb != pb)
					sgr_colour(out, 1, truecolor, bot);
				buf_puts(out, "m");
				pf = kf;
				pb = kb;
			}
			buf_puts(out, "\xe2\x96\x80"); /* ▀ */
		}
		if (buf_puts(out, "\033[0m") < 0)
			return -1;
	}
	return 0;
}

/* ---- quantisation ---- */

/* Exact palette when the image has at most maxc colours; -1 if not. */
static int quantize_exact(const uint8_t *rgb, size_t npix, int maxc,
                          uint8_t *pal, uint8_t *idx)
{
	enum { HSIZE = 1024 }; /* > 2 * 256 slots */
	uint32_t keys[HSIZE];
	int16_t vals[HSIZE];
	memset(vals, -1, sizeof vals);
	int n = 0;
	uint32_t last = 0xffffffffu;
	int lasti = 0;
	for (size_t i = 0; i < npix; i++, rgb += 3) {
		uint32_t c = (uint32_t)rgb[0] << 16 | rgb[1] << 8 | rgb[2];
		if (c != last) {
			uint32_t hsh = (c * 2654435761u) >> 22; /* 10 bits */
			while (vals[hsh] >= 0 && keys[hsh] != c)
				hsh = (hsh + 1) & (HSIZE - 1);
			if (vals[hsh] < 0) {
				if (n == maxc)
					return -1;
				keys[hsh] = c;
				vals[hsh] = (int16_t)n;
				memcpy(pal + 3 * n, rgb, 3);
				n++;
			}
			last = c;
			lasti = vals[hsh];
		}
		idx[i] = (uint8_t)lasti;
	}
	return n;
}

struct qbin {
	uint8_t c[3]; /* the bin's average colour */
	uint16_t bin;
	uint32_t count;
};

struct qbox {
	int lo, hi; /* items [lo, hi) */
	int axis;
	uint64_t score;
};

static int cmp_axis(const void *a, const void *b, void *axis)
{
	int ax = *(const int *)axis;
	const struct qbin *x = a, *y = b;
	if (x->c[ax] != y->c[ax])
		return x->c[ax] < y->c[ax] ? -1 : 1;
	return x->bin < y->bin ? -1 : x->bin > y->bin;
}

static void box_measure(struct qbox *bx, const struct qbin *it)
{
	int mn[3] = {255, 255, 255}, mx[3] = {0, 0, 0};
	uint64_t count = 0;
	for (int i = bx->lo; i < bx->hi; i++) {
		for (int k = 0; k < 3; k++) {
			if (it[i].c[k] < mn[k])
				mn[k] = it[i].c[k];
			if (it[i].c[k] > mx[k])
				mx[k] = it[i].c[k];
		}
		count += it[i].count;
	}
	int best = 0;
	for (int k = 1; k < 3; k++)
		if (mx[k] - mn[k] > mx[best] - mn[best])
			best = k;
	uint64_t range = (uint64_t)(mx[best] - mn[best]);
	bx->axis = best;
	bx->score = bx->hi - bx->lo < 2 ? 0 : range * range * count;
}

/* Median cut over the occupied bins of a 5-bit-per-channel histogram;
 * every pixel then takes its bin's nearest palette colour. */
static int quantize_cut(const uint8_t *rgb, size_t npix, int maxc, uint8_t *pal,
                        uint8_t *idx)
{
	enum { NB = 32768 };
	uint32_t *cnt = xcalloc(NB, sizeof *cnt);
	uint64_t *sum = xcalloc((size_t)NB * 3, sizeof *sum);
	for (size_t i = 0; i < npix; i++) {
		const uint8_t *p = rgb + 3 * i;
		unsigned b = (unsigned)(p[0] >> 3) << 10 |
		             (unsigned)(p[1] >> 3) << 5 | (p[2] >> 3);
		cnt[b]++;
		sum[3 * b] += p[0];
		sum[3 * b + 1] += p[1];
		sum[3 * b + 2] += p[2];
	}
	int nit = 0;
	for (int b = 0; b < NB; b++)
		nit += cnt[b] != 0;
	struct qbin *it = xmalloc((size_t)nit * sizeof *it);
	nit = 0;
	for (int b = 0; b < NB; b++) {
		if (!cnt[b])
			continue;
		for (int k = 0; k < 3; k++)
			it[nit].c[k] =
			    (uint8_t)((sum[3 * b + k] + cnt[b] / 2) / cnt[b]);
		it[nit].bin = (uint16_t)b;
		it[nit].count = cnt[b];
		nit++;
	}
	struct qbox *bx = xmalloc((size_t)maxc * sizeof *bx);
	int nb = 1;
	bx[0] = (struct qbox){0, nit, 0, 0};
	box_measure(&bx[0], it);
	while (nb < maxc) {
		int best = -1;
		for (int i = 0; i < nb; i++)
			if (bx[i].score &&
			    (best < 0 || bx[i].score > bx[best].score))
				best = i;
		if (best < 0)
			break;
		struct qbox *b = &bx[best];
		qsort_r(it + b->lo, (size_t)(b->hi - b->lo), sizeof *it,
		        cmp_axis, &b->axis);
		uint64_t total = 0, run = 0;
		for (int i = b->lo; i < b->hi; i++)
			total += it[i].count;
		int cut = b->lo + 1;
		for (int i = b->lo; i < b->hi - 1; i++) {
			run += it[i].count;
			cut = i + 1;
			if (run * 2 >= total)
				break;
		}
		bx[nb] = (struct qbox){cut, b->hi, 0, 0};
		b->hi = cut;
		box_measure(b, it);
		box_measure(&bx[nb], it);
		nb++;
	}
	for (int i = 0; i < nb; i++) {
		uint64_t s[3] = {0, 0, 0}, n = 0;
		for (int k = bx[i].lo; k < bx[i].hi; k++) {
			unsigned b = it[k].bin;
			for (int c = 0; c < 3; c++)
				s[c] += sum[3 * b + c];
			n += cnt[b];
		}
		for (int c = 0; c < 3; c++)
			pal[3 * i + c] = (uint8_t)((s[c] + n / 2) / n);
	}
	/* each occupied bin -> nearest palette entry (reuse cnt) */
	for (int k = 0; k < nit; k++) {
		int best = 0, bd = INT_MAX;
		for (int i = 0; i < nb && bd; i++) {
			int dr = it[k].c[0] - pal[3 * i];
			int dg = it[k].c[1] - pal[3 * i + 1];
			int db = it[k].c[2] - pal[3 * i + 2];
			int d = 2 * dr * dr + 4 * dg * dg + 3 * db * db;
			if (d < bd) {
				bd = d;
				best = i;
			}
		}
		cnt[it[k].bin] = (uint32_t)best;
	}
	for (size_t i = 0; i < npix; i++) {
		const uint8_t *p = rgb + 3 * i;
		unsigned b = (unsigned)(p[0] >> 3) << 10 |
		             (unsigned)(p[1] >> 3) << 5 | (p[2] >> 3);
		idx[i] = (uint8_t)cnt[b];
	}
	free(bx);
	free(it);
	free(sum);
	free(cnt);
	return nb;
}

int img_quantize_exact(const uint8_t *rgb, size_t npix, int maxc, uint8_t *pal,
                       uint8_t *idx)
{
	return quantize_exact(rgb, npix, clampi(maxc, 2, 256), pal, idx);
}

int img_quantize(const uint8_t *rgb, size_t npix, int maxc, uint8_t *pal,
                 uint8_t *idx)
{
	maxc = clampi(maxc, 2, 256);
	int n = quantize_exact(rgb, npix, maxc, pal, idx);
	if (n >= 0)
		return n;
	return quantize_cut(rgb, npix, maxc, pal, idx);
}

/* ---- sixel for many colours ---- */

/* A run of count sixels c: "!N" c from four on (shorter), else c
 * repeated. Returns the bytes written to o. */
static size_t sixel_run(char *o, int c, int count)
{
	size_t k = 0;
	if (count > 3) {
		char d[12];
		int nd = 0;
		o[k++] = '!';
		for (; count; count /= 10)
			d[nd++] = (char)('0' + count % 10);
		while (nd)
			o[k++] = d[--nd];
		o[k++] = (char)c;
	} else {
		while (count--)
			o[k++] = (char)c;
	}
	return k;
}

int img_sixel(struct buf *out, const uint8_t *idx, int w, int h,
              const uint8_t *pal, int n)
{
	/* per colour: its six-row bit masks over the band, and the span
	 * [lo, hi] where it occurs (cleared again after each band) */
	uint8_t *bits = xcalloc((size_t)n * w, 1);
	int *lo = xmalloc((size_t)n * sizeof *lo);
	int *hi = xmalloc((size_t)n * sizeof *hi);
	char *line = xmalloc((size_t)w + 32);
	buf_printf(out, "\033Pq\"1;1;%d;%d", w, h);
	for (int i = 0; i < n; i++)
		buf_printf(out, "#%d;2;%d;%d;%d", i,
		           (pal[3 * i] * 100 + 127) / 255,
		           (pal[3 * i + 1] * 100 + 127) / 255,
		           (pal[3 * i + 2] * 100 + 127) / 255);
	for (int y0 = 0; y0 < h; y0 += 6) {
		int rows = h - y0 < 6 ? h - y0 : 6;
		for (int c = 0; c < n; c++) {
			lo[c] = w;
			hi[c] = -1;
		}
		for (int r = 0; r < rows; r++) {
			const uint8_t *row = idx + (size_t)(y0 + r) * w;
			for (int x = 0; x < w; x++) {
				int c = row[x] < n ? row[x] : 0;
				bits[(size_t)c * w + x] |= (uint8_t)(1 << r);
				if (x < lo[c])
					lo[c] = x;
				if (x > hi[c])
					hi[c] = x;
			}
		}
		int first = 1;
		for (int c = 0; c < n; c++) {
			if (hi[c] < 0)
				continue;
			uint8_t *b = bits + (size_t)c * w;
			size_t k = (size_t)snprintf(line, 16, "%s#%d",
			                            first ? "" : "$", c);
			first = 0;
			if (lo[c])
				k += sixel_run(line + k, '?', lo[c]);
			for (int x = lo[c]; x <= hi[c];) {
				int e = x + 1;
				while (e <= hi[c] && b[e] == b[x])
					e++;
				k += sixel_run(line + k, '?' + b[x], e - x);
				x = e;
			}
			memset(b + lo[c], 0, (size_t)(hi[c] - lo[c] + 1));
			buf_append(out, line, k);
		}
		if (y0 + 6 < h)
			buf_append(out, "-", 1);
	}
	int rc = buf_puts(out, "\033\\");
	free(line);
	free(hi);
	free(lo);
	free(bits);
	return rc < 0 ? -1 : 0;
}

/* ---- kitty ---- */

size_t img_base64(const void *in, size_t n, char *out)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                          "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = in;
	char *o = out;
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | p[i + 1] << 8 | p[i + 2];
		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		*o++ = tab[(v >> 6) & 63];
		*o++ = tab[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		*o++ = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	return (size_t)(o - out);
}

int img_kitty(struct buf *out, const void *data, size_t n,
              const struct img_kitty *k)
{
	size_t blen = 4 * ((n + 2) / 3);
	char *b64 = xmalloc(blen + 1);
	img_base64(data, n, b64);
	int rc = 0;
	size_t off = 0;
	do {
		size_t len = blen - off;
		if (len > IMG_KITTY_CHUNK)
			len = IMG_KITTY_CHUNK;
		int more = off + len < blen;
		if (off == 0) {
			buf_printf(out, "\033_Ga=t,f=%d,", k->format);
			if (k->compressed)
				buf_puts(out, "o=z,");
			if (k->format != 100)
				buf_printf(out, "s=%d,v=%d,", k->w, k->h);
			buf_printf(out, "i=%u,q=2,m=%d;", k->id ? k->id : 1,
			           more);
		} else {
			buf_printf(out, "\033_Gm=%d;", more);
		}
		buf_append(out, b64 + off, len);
		if (buf_puts(out, "\033\\") < 0) {
			rc = -1;
			break;
		}
		off += len;
	} while (off < blen);
	free(b64);
	return rc;
}

/* ---- payload check ---- */

/* A decimal number of at most 9 digits at p[*i]; -1 if none. */
static long num_at(const char *p, size_t n, size_t *i)
{
	long v = 0;
	size_t s = *i;
	while (*i < n && p[*i] >= '0' && p[*i] <= '9' && *i - s < 9)
		v = v * 10 + (p[(*i)++] - '0');
	return *i == s || (*i < n && p[*i] >= '0' && p[*i] <= '9') ? -1 : v;
}

static int lit_at(const char *p, size_t n, size_t *i, const char *s)
{
	size_t k = strlen(s);
	if (n - *i < k || memcmp(p + *i, s, k))
		return 0;
	*i += k;
	return 1;
}

/* "\033P[0-9;]*q", a raster attribute '"1;1;W;H' no larger than the
 * declared pixels, then only colour introducers, repeats, sixel data,
 * '$' and '-' that stay inside that raster, and ST: no other DCS
 * (DECRQSS, DECUDK...) and nothing after it. */
static int sixel_ok(const char *p, size_t n, const struct img_geom *g)
{
	size_t i = 2;
	if (n < 8 || memcmp(p, "\033P", 2) || memcmp(p + n - 2, "\033\\", 2))
		return 0;
	n -= 2;
	while (i < n && ((p[i] >= '0' && p[i] <= '9') || p[i] == ';'))
		i++;
	if (!lit_at(p, n, &i, "q\"1;1;"))
		return 0;
	long w = num_at(p, n, &i);
	if (!lit_at(p, n, &i, ";"))
		return 0;
	long h = num_at(p, n, &i);
	if (w < 1 || h < 1 || w > g->px_w || h > g->px_h)
		return 0;
	long x = 0, bands = 1, maxb = (h + 5) / 6;
	while (i < n) {
		unsigned char c = (unsigned char)p[i];
		long rep = 1;
		if (c == '#') { /* #N or #N;2;R;G;B */
			i++;
			if (num_at(p, n, &i) < 0)
				return 0;
			if (i < n && p[i] == ';') {
				i++;
				for (int k = 0; k < 4; k++) {
					long v = num_at(p, n, &i);
					if (v < 0 || v > (k ? 100 : 2) ||
					    (k < 3 && !lit_at(p, n, &i, ";")))
						return 0;
				}
			}
			continue;
		}
		if (c == '$' || c == '-') {
			x = 0;
			bands += c == '-';
			i++;
			continue;
		}
		if (c == '!') {
			i++;
			rep = num_at(p, n, &i);
			if (rep < 1 || i >= n)
				return 0;
			c = (unsigned char)p[i];
		}
		if (c < '?' || c > '~')
			return 0;
		x += rep;
		i++;
		if (x > w || bands > maxb)
			return 0;
	}
	return 1;
}

/* Exactly what img_kitty makes: a first chunk "a=t,f=F,[o=z,][s=W,v=H,]
 * i=ID,q=2,m=M" with the declared size and id, then "m=M" chunks of
 * base64 (m=1 on all but the last), ST after each. No other keys: no
 * t=f (a file the terminal would read), no q=0 (replies on stdin). */
static int kitty_ok(const char *p, size_t n, const struct img_geom *g)
{
	size_t i = 0;
	int first = 1, more = 1;
	if (!n)
		return 0;
	while (i < n) {
		if (!more)
			return 0; /* a chunk after the last */
		if (!lit_at(p, n, &i, "\033_G"))
			return 0;
		if (first) {
			if (!lit_at(p, n, &i, "a=t,f="))
				return 0;
			long f = num_at(p, n, &i);
			if ((f != 24 && f != 32 && f != 100) ||
			    !lit_at(p, n, &i, ","))
				return 0;
			lit_at(p, n, &i, "o=z,");
			if (f != 100) {
				if (!lit_at(p, n, &i, "s="))
					return 0;
				long w = num_at(p, n, &i);
				if (w != g->px_w || !lit_at(p, n, &i, ",v="))
					return 0;
				long h = num_at(p, n, &i);
				if (h != g->px_h || !lit_at(p, n, &i, ","))
					return 0;
			}
			if (!lit_at(p, n, &i, "i="))
				return 0;
			long id = num_at(p, n, &i);
			if (id < 1 ||
			    (g->kitty_id && id != (long)g->kitty_id) ||
			    !lit_at(p, n, &i, ",q=2,"))
				return 0;
			first = 0;
		}
		if (lit_at(p, n, &i, "m=1;"))
			more = 1;
		else if (lit_at(p, n, &i, "m=0;"))
			more = 0;
		else
			return 0;
		size_t s = i;
		while (i < n && p[i] != '\033') {
			char c = p[i++];
			if (!((c >= 'a' && c <= 'z') ||
			      (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || c == '+' || c == '/' ||
			      c == '='))
				return 0;
		}
		if (i - s > IMG_KITTY_CHUNK || (i - s) % 4 ||
		    !lit_at(p, n, &i, "\033\\"))
			return 0;
	}
	return !more;
}

/* One SGR of img_blocks: ";"-joined 38/48;2;R;G;B, 38/48;5;N, 49. */
static int sgr_ok(const char *p, size_t n, size_t *i)
{
	if (!lit_at(p, n, i, "\033["))
		return 0;
	for (int items = 0;; items++) {
		if (items && !lit_at(p, n, i, ";"))
			break;
		long v = num_at(p, n, i);
		if (v == 49)
			continue;
		if ((v != 38 && v != 48) || !lit_at(p, n, i, ";"))
			return 0;
		long kind = num_at(p, n, i);
		int k = kind == 2 ? 3 : kind == 5 ? 1 : 0;
		if (!k)
			return 0;
		while (k--) {
			long c;
			if (!lit_at(p, n, i, ";") ||
			    (c = num_at(p, n, i)) < 0 || c > 255)
				return 0;
		}
	}
	return lit_at(p, n, i, "m");
}

/* rows lines joined by '\n', each cols "▀" among its SGRs, then
 * "\033[0m". */
static int blocks_ok(const char *p, size_t n, const struct img_geom *g)
{
	size_t i = 0;
	for (int r = 0; r < g->rows; r++) {
		if (r && !lit_at(p, n, &i, "\n"))
			return 0;
		int cells = 0;
		for (;;) {
			if (lit_at(p, n, &i, "\xe2\x96\x80")) /* ▀ */
				cells++;
			else if (lit_at(p, n, &i, "\033[0m"))
				break;
			else if (!sgr_ok(p, n, &i))
				return 0;
		}
		if (cells != g->cols)
			return 0;
	}
	return i == n && g->rows > 0;
}

int img_payload_ok(enum img_mode mode, const char *p, size_t n,
                   const struct img_geom *g)
{
	switch (mode) {
	case IMG_SIXEL:
		return sixel_ok(p, n, g);
	case IMG_KITTY:
		return kitty_ok(p, n, g);
	case IMG_BLOCKS:
		return blocks_ok(p, n, g);
	case IMG_INFO:
		for (size_t i = 0; i < n; i++)
			if ((p[i] < 0x20 && p[i] != '\n') || p[i] > 0x7e)
				return 0;
		return 1;
	}
	return 0;
}
