/* test_image_client.c: the TUI's image client (src/tui/image.c) driving
 * the real assay-image helper through a real loop: sixel output decoded
 * back to pixels, half blocks with alpha over a background, kitty
 * chunks, the cache, cancelling, and hostile files (huge dimensions,
 * truncated, not a PNG, a FIFO, a symlink out of the workspace, a hung
 * helper) that must end in a clear message without blocking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "skip.h"
#include "tui/image.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char *tmp_dir;
static int dir_fd = -1;
static struct loop *lp;

/* ---- a tiny PNG writer (stored deflate blocks, no zlib needed) ---- */

static uint32_t crc_upd(uint32_t c, const unsigned char *p, size_t n)
{
	c = ~c;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

static void be32(struct buf *b, uint32_t v)
{
	unsigned char p[4] = {(unsigned char)(v >> 24),
	                      (unsigned char)(v >> 16), (unsigned char)(v >> 8),
	                      (unsigned char)v};
	buf_append(b, p, 4);
}

static void chunk(struct buf *b, const char *type, const void *data, size_t n)
{
	be32(b, (uint32_t)n);
	size_t at = b->len;
	buf_append(b, type, 4);
	buf_append(b, data, n);
	be32(b, crc_upd(0, (unsigned char *)b->data + at, n + 4));
}

/* The filtered scanlines: plain, or the 7 Adam7 passes. */
static void scanlines(struct buf *raw, int w, int h, int ch, const uint8_t *px,
                      int interlace)
{
	static const int adam7[7][4] = {
	    {0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
	    {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
	static const int plain[1][4] = {{0, 0, 1, 1}};
	const int(*passes)[4] = interlace ? adam7 : plain;
	for (int p = 0; p < (interlace ? 7 : 1); p++) {
		int x0 = passes[p][0], y0 = passes[p][1];
		int dx = passes[p][2], dy = passes[p][3];
		if (x0 >= w || y0 >= h)
			continue;
		for (int y = y0; y < h; y += dy) {
			buf_append(raw, "", 1); /* filter: none */
			for (int x = x0; x < w; x += dx)
				buf_append(raw, px + ((size_t)y * w + x) * ch,
				           (size_t)ch);
		}
	}
}

/* A PNG of w x h pixels with ch channels (3 = RGB, 4 = RGBA), 8-bit,
 * Adam7-interlaced if interlace. */
static void make_png_i(struct buf *b, int w, int h, int ch, const uint8_t *px,
                       int interlace)
{
	static const unsigned char sig[8] = {0x89, 'P',  'N',  'G',
	                                     '\r', '\n', 0x1a, '\n'};
	buf_append(b, sig, 8);
	unsigned char ihdr[13] = {0};
	for (int i = 0; i < 4; i++) {
		ihdr[i] = (unsigned char)((uint32_t)w >> (24 - 8 * i));
		ihdr[4 + i] = (unsigned char)((uint32_t)h >> (24 - 8 * i));
	}
	ihdr[8] = 8;
	ihdr[9] = ch == 4 ? 6 : 2;
	ihdr[12] = (unsigned char)interlace;
	chunk(b, "IHDR", ihdr, 13);
	static const char text[] = "Comment\0\033]0;pwned\a\033[2J";
	chunk(b, "tEXt", text, sizeof text - 1);
	struct buf raw, z;
	buf_init(&raw, 0);
	buf_init(&z, 0);
	scanlines(&raw, w, h, ch, px, interlace);
	buf_append(&z, "\x78\x01", 2);
	uint32_t a = 1, s2 = 0;
	for (size_t i = 0; i < raw.len; i++) {
		a = (a + (unsigned char)raw.data[i]) % 65521;
		s2 = (s2 + a) % 65521;
	}
	for (size_t off = 0; off < raw.len || off == 0;) {
		size_t n = raw.len - off > 65535 ? 65535 : raw.len - off;
		unsigned char hd[5] = {off + n >= raw.len, (unsigned char)n,
		                       (unsigned char)(n >> 8),
		                       (unsigned char)~n,
		                       (unsigned char)(~n >> 8)};
		buf_append(&z, hd, 5);
		buf_append(&z, raw.data + off, n);
		off += n;
		if (!n)
			break;
	}
	be32(&z, s2 << 16 | a);
	chunk(b, "IDAT", z.data, z.len);
	chunk(b, "IEND", "", 0);
	buf_free(&raw);
	buf_free(&z);
}

static void make_png(struct buf *b, int w, int h, int ch, const uint8_t *px)
{
	make_png_i(b, w, h, ch, px, 0);
}

static void write_at(const char *name, const void *p, size_t n)
{
	char *path = xasprintf("%s/%s", tmp_dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	fclose(f);
	free(path);
}

/* Quadrants: red, green / blue, white: w x h, RGB. */
static void quadrants(uint8_t *px, int w, int h)
{
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			uint8_t *p = px + 3 * (y * w + x);
			int q = (y >= h / 2) * 2 + (x >= w / 2);
			static const uint8_t c[4][3] = {{255, 0, 0},
			                                {0, 255, 0},
			                                {0, 0, 255},
			                                {255, 255, 255}};
			memcpy(p, c[q], 3);
		}
}

/* ---- running requests ---- */

struct result {
	int calls;
	struct ui_img *img;
	char *err;
};

static void on_done(void *arg, const struct ui_img *img, const char *err)
{
	struct result *r = arg;
	r->calls++;
	if (img)
		r->img = ui_img_ref(img);
	if (err)
		r->err = xstrdup(err);
}

static void wait_for(struct result *r, int64_t max_ms)
{
	int64_t end = now_ms() + max_ms;
	while (!r->calls && now_ms() < end)
		loop_once(lp, 50);
	if (!r->calls)
		fail_msg("no callback after %lld ms", (long long)max_ms);
}

static void result_free(struct result *r)
{
	ui_img_unref(r->img);
	free(r->err);
	memset(r, 0, sizeof *r);
}

static struct ui_img_req req(const char *rel, enum ui_gfx mode, int cols,
                             int rows)
{
	struct ui_img_req r = {.dirfd = dir_fd,
	                       .rel = rel,
	                       .fd = -1,
	                       .mode = mode,
	                       .box_cols = cols,
	                       .box_rows = rows,
	                       .cell_w = 10,
	                       .cell_h = 12,
	                       .bg_rgb = -1};
	return r;
}

static void render(struct ui_imgcache *c, const struct ui_img_req *q,
                   struct result *r)
{
	ui_img_render(c, q, on_done, r);
	assert_int_equal(r->calls, 0); /* never from inside the call */
	wait_for(r, 60000);            /* a hang guard */
	assert_int_equal(r->calls, 1);
}

static int setup(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/assay-img-test.XXXXXX";
	tmp_dir = xstrdup(mkdtemp(tmpl));
	dir_fd = open(tmp_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	lp = loop_new();
	char *bin = ui_img_helper();
	if (access(bin, X_OK) < 0) {
		char *why = xasprintf("%s not built", bin);
		exit(test_skip_all(why));
	}
	free(bin);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	loop_free(lp);
	close(dir_fd);
	rm_rf(tmp_dir);
	free(tmp_dir);
	return 0;
}

/* ---- a minimal sixel decoder, to check what terminals will see ---- */

struct sixel_img {
	int w, h;
	uint8_t *px; /* RGB */
};

static void sixel_decode(const char *s, size_t n, struct sixel_img *out)
{
	int pal[256][3] = {{0}};
	int x = 0, band = 0, colour = 0;
	const char *p = s, *end = s + n;
	assert_memory_equal(p, "\033P", 2);
	p = memchr(p, 'q', (size_t)(end - p));
	assert_non_null(p);
	p++;
	assert_int_equal(*p, '"');
	int pan, pad;
	assert_int_equal(
	    sscanf(p, "\"%d;%d;%d;%d", &pan, &pad, &out->w, &out->h), 4);
	assert_true(out->w > 0 && out->h > 0);
	out->px = xcalloc((size_t)out->w * out->h, 3);
	p++;
	while (p < end && (*p == ';' || (*p >= '0' && *p <= '9')))
		p++;
	while (p < end - 2) {
		char c = *p;
		if (c == '#') {
			int v[5], k = 0;
			p++;
			while (k < 5) {
				v[k++] = (int)strtol(p, (char **)&p, 10);
				if (*p != ';')
					break;
				p++;
			}
			colour = v[0];
			assert_in_range(colour, 0, 255);
			if (k == 5) {
				assert_int_equal(v[1], 2); /* RGB percent */
				for (int i = 0; i < 3; i++)
					pal[colour][i] =
					    (v[2 + i] * 255 + 50) / 100;
			}
			continue;
		}
		if (c == '$') {
			x = 0;
			p++;
			continue;
		}
		if (c == '-') {
			x = 0;
			band++;
			p++;
			continue;
		}
		int rep = 1;
		if (c == '!') {
			p++;
			rep = (int)strtol(p, (char **)&p, 10);
			c = *p;
		}
		assert_true(c >= 0x3f && c <= 0x7e);
		int bits = c - 0x3f;
		for (int r = 0; r < rep; r++, x++)
			for (int b = 0; b < 6; b++) {
				int y = band * 6 + b;
				if (!(bits >> b & 1) || y >= out->h ||
				    x >= out->w)
					continue;
				uint8_t *px =
				    out->px + 3 * ((size_t)y * out->w + x);
				for (int i = 0; i < 3; i++)
					px[i] = (uint8_t)pal[colour][i];
			}
		p++;
	}
	assert_memory_equal(end - 2, "\033\\", 2);
}

static void test_sixel_roundtrip(void **state)
{
	(void)state;
	enum { W = 60, H = 36 };
	uint8_t px[W * H * 3];
	quadrants(px, W, H);
	struct buf png;
	buf_init(&png, 0);
	make_png(&png, W, H, 3, px);
	write_at("quad.png", png.data, png.len);
	buf_free(&png);

	struct ui_imgcache *c = ui_imgcache_new(lp, 0);
	struct ui_img_req q = req("quad.png", UI_GFX_SIXEL, 6, 3);
	struct result r = {0};
	render(c, &q, &r);
	if (!r.img)
		fail_msg("error: %s", r.err);
	assert_int_equal(r.img->mode, UI_GFX_SIXEL);
	assert_int_equal(r.img->cols, 6); /* 60 px / 10 */
	assert_int_equal(r.img->rows, 3); /* 36 px / 12 */
	assert_int_equal(r.img->px_w, W);
	assert_int_equal(r.img->px_h, H);
	assert_int_equal(r.img->src_w, W);
	struct sixel_img si;
	sixel_decode(r.img->data, r.img->len, &si);
	assert_int_equal(si.w, W);
	assert_int_equal(si.h, H);
	for (int i = 0; i < W * H * 3; i++)
		if (abs(si.px[i] - px[i]) > 2)
			fail_msg("pixel %d channel %d: %d, want %d", i / 3 % W,
			         i % 3, si.px[i], px[i]);
	free(si.px);
	/* nothing of the tEXt chunk reaches the output */
	assert_null(memmem(r.img->data, r.img->len, "pwned", 5));

	/* a box half the size: 30x18, footprint 3x2 cells; a terminal
	 * reporting 1024 registers gets 256 */
	struct result r2 = {0};
	q.box_cols = 3;
	q.box_rows = 2;
	q.colors = 1024;
	render(c, &q, &r2);
	assert_non_null(r2.img);
	assert_int_equal(r2.img->px_w, 30);
	assert_int_equal(r2.img->px_h, 18);
	assert_int_equal(r2.img->cols, 3);
	assert_int_equal(r2.img->rows, 2);
	sixel_decode(r2.img->data, r2.img->len, &si);
	assert_int_equal(si.w, 30);
	assert_int_equal(si.h, 18);
	/* the top-right pixel is still pure green */
	assert_int_equal(si.px[3 * 29 + 1], 255);
	assert_int_equal(si.px[3 * 29], 0);
	free(si.px);

	/* the same request again: a cache hit, the same rendering, and
	 * still delivered from the loop */
	struct result r3 = {0};
	render(c, &q, &r3);
	assert_ptr_equal(r3.img, r2.img);
	assert_ptr_equal(ui_img_lookup(c, &q), r2.img);
	/* a new mtime makes it stale */
	struct timespec ts[2] = {{0, UTIME_OMIT}, {12345, 0}};
	assert_int_equal(utimensat(dir_fd, "quad.png", ts, 0), 0);
	assert_null(ui_img_lookup(c, &q));
	struct result r4 = {0};
	render(c, &q, &r4);
	assert_non_null(r4.img);
	assert_ptr_not_equal(r4.img, r2.img);
	result_free(&r);
	result_free(&r2);
	result_free(&r3);
	result_free(&r4);
	ui_imgcache_free(c);
}

/* An Adam7-interlaced PNG (odd size, so some passes are empty) decodes
 * to the same pixels as a plain one. */
static void test_interlaced(void **state)
{
	(void)state;
	enum { W = 13, H = 7 };
	uint8_t px[W * H * 3];
	for (int i = 0; i < W * H * 3; i++)
		px[i] = (uint8_t)(i * 29 + 3);
	struct buf png;
	buf_init(&png, 0);
	make_png_i(&png, W, H, 3, px, 1);
	write_at("adam7.png", png.data, png.len);
	buf_free(&png);
	struct ui_imgcache *c = ui_imgcache_new(lp, 0);
	struct ui_img_req q = req("adam7.png", UI_GFX_BLOCKS, W, 4);
	q.cell_h = 20;
	q.truecolor = 1;
	struct result r = {0};
	render(c, &q, &r);
	if (!r.img)
		fail_msg("error: %s", r.err);
	assert_int_equal(r.img->px_w, W);
	assert_int_equal(r.img->px_h, H);
	struct buf want;
	buf_init(&want, 0);
	assert_int_equal(img_blocks(&want, px, W, H, 1), 0);
	assert_string_equal(r.img->data, want.data);
	buf_free(&want);
	result_free(&r);
	ui_imgcache_free(c);
}

/* Half blocks with alpha composited over the requested background. */
static void test_blocks_alpha(void **state)
{
	(void)state;
	const uint8_t px[] = {0,   0,   255, 0,   /* transparent */
	                      0,   0,   255, 255, /* blue */
	                      255, 255, 255, 128, /* half white */
	                      0,   0,   0,   255};
	struct buf png;
	buf_init(&png, 0);
	make_png(&png, 2, 2, 4, px);
	write_at("alpha.png", png.data, png.len);
	buf_free(&png);
	struct ui_imgcache *c = ui_imgcache_new(lp, 0);
	struct ui_img_req q = req("alpha.png", UI_GFX_BLOCKS, 2, 1);
	q.cell_h = 20;
	q.truecolor = 1;
	q.bg_rgb = 0xff0000;
	struct result r = {0};
	render(c, &q, &r);
	if (!r.img)
		fail_msg("error: %s", r.err);
	assert_int_equal(r.img->cols, 2);
	assert_int_equal(r.img->rows, 1);
	/* over red: transparent -> red; half white -> 255,128,128 */
	assert_string_equal(r.img->data,
	                    "\033[38;2;255;0;0;48;2;255;128;128m\xe2\x96\x80"
	                    "\033[38;2;0;0;255;48;2;0;0;0m\xe2\x96\x80"
	                    "\033[0m");
	/* 256 colours over the default black */
	struct result r2 = {0};
	q.truecolor = 0;
	q.bg_rgb = -1;
	render(c, &q, &r2);
	assert_non_null(r2.img);
	assert_string_equal(r2.img->data, "\033[38;5;16;48;5;244m\xe2\x96\x80"
	                                  "\033[38;5;21;48;5;16m\xe2\x96\x80"
	                                  "\033[0m");
	result_free(&r);
	result_free(&r2);
	ui_imgcache_free(c);
}

static void test_kitty(void **state)
{
	(void)state;
	enum { W = 300, H = 200 };
	uint8_t *px = malloc(W * H * 3);
	for (int i = 0; i < W * H * 3; i++)
		px[i] = (uint8_t)(i * 2654435761u >> 24); /* noise */
	struct buf png;
	buf_init(&png, 0);
	make_png(&png, W, H, 3, px);
	write_at("noise.png", png.data, png.len);
	buf_free(&png);
	free(px);
	struct ui_imgcache *c = ui_imgcache_new(lp, 0);
	struct ui_img_req q = req("noise.png", UI_GFX_KITTY, 30, 10);
	q.kitty_id = 77;
	struct result r = {0};
	render(c, &q, &r);
	if (!r.img)
		fail_msg("error: %s", r.err);
	/* 300x200 in 300x120: 180x120, 18x10 cells */
	assert_int_equal(r.img->px_w, 180);
	assert_int_equal(r.img->px_h, 120);
	assert_int_equal(r.img->cols, 18);
	assert_int_equal(r.img->rows, 10);
	assert_non_null(strstr(r.img->data, "\033_Ga=t,f=24,o=z,s=180,v=120,"
	                                    "i=77,q=2,m=1;"));
	assert_non_null(strstr(r.img->data, "\033_Gm=0;"));
	struct img_geom g = {18, 10, 180, 120, 77};
	assert_true(img_payload_ok(IMG_KITTY, r.img->data, r.img->len, &g));
	result_free(&r);
	ui_imgcache_free(c);
}

static void expect_error(struct ui_imgcache *c, struct ui_img_req *q,
                         const char *want)
{
	struct result r = {0};
	int64_t t0 = now_ms();
	render(c, q, &r);
	assert_null(r.img);
	assert_non_null(r.err);
	if (!strstr(r.err, want))
		fail_msg("error '%s' lacks '%s'", r.err, want);
	printf("  %s -> %s (%lld ms)\n", q->rel ? q->rel : "(fd)", r.err,
	       (long long)(now_ms() - t0));
	result_free(&r);
}

static void test_hostile(void **state)
{
	(void)state;
	struct ui_imgcache *c = ui_imgcache_new(lp, 0);
	uint8_t px[8 * 8 * 3];
	quadrants(px, 8, 8);
	struct buf png;
	buf_init(&png, 0);
	make_png(&png, 8, 8, 3, px);
	/* IHDR claiming 100000 x 100000 (CRC fixed up) */
	struct buf big;
	buf_init(&big, 0);
	buf_append(&big, png.data, png.len);
	unsigned char *ih = (unsigned char *)big.data + 16;
	ih[0] = ih[4] = 0;
	ih[1] = ih[5] = 0x01;
	ih[2] = ih[6] = 0x86;
	ih[3] = ih[7] = 0xa0;
	uint32_t crc = crc_upd(0, (unsigned char *)big.data + 12, 17);
	for (int i = 0; i < 4; i++)
		big.data[29 + i] = (char)(crc >> (24 - 8 * i));
	write_at("huge.png", big.data, big.len);
	write_at("trunc.png", png.data, png.len - 30);
	write_at("fake.png", "GIF89a\x01\x00\x01\x00", 10);
	write_at("empty.png", "", 0);
	buf_free(&big);
	buf_free(&png);

	struct ui_img_req q = req("huge.png", UI_GFX_SIXEL, 80, 24);
	expect_error(c, &q, "100000x100000 pixels: too large");
	q.rel = "trunc.png";
	expect_error(c, &q, "truncated");
	q.rel = "fake.png";
	expect_error(c, &q, "not a PNG");
	q.rel = "empty.png";
	expect_error(c, &q, "empty");
	q.rel = "missing.png";
	expect_error(c, &q, "missing.png");
	/* a FIFO would block a plain open() or read() forever */
	char *fifo = xasprintf("%s/pipe.png", tmp_dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	free(fifo);
	q.rel = "pipe.png";
	expect_error(c, &q, "not a regular file");
	/* a symlink leading out of the workspace */
	char *link = xasprintf("%s/out.png", tmp_dir);
	assert_int_equal(symlink("/etc/passwd", link), 0);
	free(link);
	q.rel = "out.png";
	expect_error(c, &q, "outside the workspace");
	q.rel = "quad.png";
	q.mode = UI_GFX_OFF;
	expect_error(c, &q, "images are off");

	/* the header probe */
	int w, h;
	long long bytes;
	char *err = NULL;
	assert_int_equal(
	    ui_img_probe(dir_fd, NULL, "huge.png", &w, &h, &bytes, &err), 0);
	assert_int_equal(w, 100000);
	assert_int_equal(h, 100000);
	assert_int_equal(
	    ui_img_probe(dir_fd, NULL, "fake.png", &w, &h, &bytes, &err), -1);
	assert_non_null(strstr(err, "not a PNG"));
	free(err);
	err = NULL;
	assert_int_equal(
	    ui_img_probe(dir_fd, NULL, "pipe.png", &w, &h, &bytes, &err), -1);
	free(err);
	ui_imgcache_free(c);
}

/* An already open fd (a memfd, as a non-local backend would pass):
 * rendered the same; a pipe is refused without blocking. */
static void test_fd(void **state)
{
	(void)state;
	enum { W = 8, H = 8 };
	uint8_t px[W * H * 3];
	quadrants(px, W, H);
	struct buf png;
	buf_init(&png, 0);
	make_png(&png, W, H, 3, px);
	int mfd = memfd_create("img", MFD_CLOEXEC);
	assert_true(mfd >= 0);
	assert_int_equal(write(mfd, png.data, png.len), (ssize_t)png.len);
	buf_free(&png);
	struct ui_imgcache *c = ui_imgcache_new(lp, 0);
	struct ui_img_req q = req(NULL, UI_GFX_BLOCKS, W, H / 2);
	q.dirfd = -1;
	q.fd = mfd; /* its offset is at the end: the helper must not care */
	q.cell_h = 20;
	q.truecolor = 1;
	struct result r = {0};
	render(c, &q, &r);
	if (!r.img)
		fail_msg("error: %s", r.err);
	struct buf want;
	buf_init(&want, 0);
	img_blocks(&want, px, W, H, 1);
	assert_string_equal(r.img->data, want.data);
	buf_free(&want);
	result_free(&r);
	int p[2];
	assert_int_equal(pipe(p), 0);
	q.fd = p[0];
	q.rel = "stream.png";
	expect_error(c, &q, "stream.png: not a regular file");
	close(p[0]);
	close(p[1]);
	close(mfd);
	ui_imgcache_free(c);
}

/* Cancelled requests never call back; the rest of the queue runs. */
static void test_cancel_and_queue(void **state)
{
	(void)state;
	struct ui_imgcache *c = ui_imgcache_new(lp, 0);
	struct ui_img_req q = req("quad.png", UI_GFX_BLOCKS, 40, 10);
	struct result a = {0}, b = {0}, d = {0};
	uint64_t ia = ui_img_render(c, &q, on_done, &a);
	q.box_cols = 20;
	uint64_t ib = ui_img_render(c, &q, on_done, &b);
	q.box_cols = 10;
	ui_img_render(c, &q, on_done, &d);
	assert_true(ia && ib && ia != ib);
	ui_img_cancel(c, ia); /* the running one: killed */
	ui_img_cancel(c, ib); /* a waiting one */
	wait_for(&d, 60000);
	for (int i = 0; i < 5; i++)
		loop_once(lp, 20);
	assert_int_equal(a.calls, 0);
	assert_int_equal(b.calls, 0);
	assert_int_equal(d.calls, 1);
	assert_non_null(d.img);
	assert_int_equal(d.img->cols, 10);
	result_free(&d);
	/* freeing the cache with a child running kills and reaps it */
	struct result e = {0};
	ui_img_render(c, &q, on_done, &e); /* a cache hit: queued delivery */
	q.box_cols = 11;
	ui_img_render(c, &q, on_done, &e);
	pid_t pid = c->pid;
	assert_true(pid > 0);
	ui_imgcache_free(c);
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(e.calls, 0);
}

/* A helper that hangs is killed after the timeout; the loop keeps
 * running meanwhile. */
static void test_timeout(void **state)
{
	(void)state;
	char *script = xasprintf("%s/hang.sh", tmp_dir);
	FILE *f = fopen(script, "w");
	fputs("#!/bin/sh\nexec sleep 60\n", f);
	fclose(f);
	chmod(script, 0755);
	setenv("ASSAY_IMAGE_BIN", script, 1);
	struct ui_imgcache *c = ui_imgcache_new(lp, 0);
	struct ui_img_req q = req("quad.png", UI_GFX_SIXEL, 80, 24);
	struct result r = {0};
	int64_t t0 = now_ms();
	ui_img_render(c, &q, on_done, &r);
	pid_t pid = c->pid;
	int iterations = 0;
	while (!r.calls && now_ms() - t0 < 60000) { /* a hang guard */
		loop_once(lp, 100);
		iterations++;
	}
	unsetenv("ASSAY_IMAGE_BIN");
	assert_int_equal(r.calls, 1);
	assert_non_null(r.err);
	assert_non_null(strstr(r.err, "longer than 5 s"));
	assert_true(now_ms() - t0 >= 4900);
	assert_true(iterations > 10);       /* the loop was never blocked */
	assert_int_equal(kill(pid, 0), -1); /* killed and reaped */
	result_free(&r);
	ui_imgcache_free(c);
	free(script);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sixel_roundtrip),
	    cmocka_unit_test(test_interlaced),
	    cmocka_unit_test(test_blocks_alpha),
	    cmocka_unit_test(test_kitty),
	    cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_fd),
	    cmocka_unit_test(test_cancel_and_queue),
	    cmocka_unit_test(test_timeout),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
