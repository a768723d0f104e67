/* test_image.c: the pure image code behind previews: golden half-block
 * renderings (truecolor and 256 colours, odd heights), the xterm-256
 * nearest colour against a brute-force search, PNG header checks on
 * crafted bytes, fitting and area-average scaling, the palette
 * quantiser, kitty chunking decoded back, and the payload checks; for
 * view: the fitting rule and the PNG, JPEG, GIF and WebP headers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/buf.h"
#include "assay/imgrender.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLK "\xe2\x96\x80"

static char *blocks(const uint8_t *rgb, int w, int h, int truecolor)
{
	struct buf b;
	buf_init(&b, 0);
	assert_int_equal(img_blocks(&b, rgb, w, h, truecolor), 0);
	struct img_geom g = {w, (h + 1) / 2, w, h, 0};
	assert_true(img_payload_ok(IMG_BLOCKS, b.data, b.len, &g));
	g.cols = w + 1;
	assert_false(img_payload_ok(IMG_BLOCKS, b.data, b.len, &g));
	g.cols = w;
	g.rows++;
	assert_false(img_payload_ok(IMG_BLOCKS, b.data, b.len, &g));
	return buf_detach(&b);
}

static void test_blocks_2x2(void **state)
{
	(void)state;
	const uint8_t px[] = {255, 0, 0,   0,   255, 0,    /* top: red green */
	                      0,   0, 255, 255, 255, 255}; /* blue white */
	char *s = blocks(px, 2, 2, 1);
	assert_string_equal(s, "\033[38;2;255;0;0;48;2;0;0;255m" BLK
	                       "\033[38;2;0;255;0;48;2;255;255;255m" BLK
	                       "\033[0m");
	free(s);
	s = blocks(px, 2, 2, 0);
	assert_string_equal(s, "\033[38;5;196;48;5;21m" BLK
	                       "\033[38;5;46;48;5;231m" BLK "\033[0m");
	free(s);
}

/* Repeated colours are not repeated in SGR; an odd last row has the
 * default background. */
static void test_blocks_odd_height(void **state)
{
	(void)state;
	const uint8_t px[] = {10, 20, 30, 10, 20, 30, 10, 20, 30,  /* row 0 */
	                      40, 50, 60, 40, 50, 60, 1,  2,  3,   /* row 1 */
	                      7,  8,  9,  7,  8,  9,  70, 80, 90}; /* row 2 */
	char *s = blocks(px, 3, 3, 1);
	assert_string_equal(s, "\033[38;2;10;20;30;48;2;40;50;60m" BLK BLK
	                       "\033[48;2;1;2;3m" BLK "\033[0m\n"
	                       "\033[38;2;7;8;9;49m" BLK BLK
	                       "\033[38;2;70;80;90m" BLK "\033[0m");
	free(s);
	s = blocks(px, 3, 3, 0);
	/* greys nearer than the cube: (10,20,30) -> 233 (18,18,18),
	 * (40,50,60) -> 236, (7,8,9) -> 232, (70,80,90) -> 239; (1,2,3)
	 * -> 16 (black) */
	assert_string_equal(
	    s, "\033[38;5;233;48;5;236m" BLK BLK "\033[48;5;16m" BLK "\033[0m\n"
	       "\033[38;5;232;49m" BLK BLK "\033[38;5;239m" BLK "\033[0m");
	free(s);
}

/* A horizontal grey gradient, one pixel row: a single line, every cell
 * with default background. */
static void test_blocks_gradient(void **state)
{
	(void)state;
	uint8_t px[4 * 3];
	for (int x = 0; x < 4; x++)
		memset(px + 3 * x, x * 85, 3);
	char *s = blocks(px, 4, 1, 0);
	assert_string_equal(s, "\033[38;5;16;49m" BLK "\033[38;5;240m" BLK
	                       "\033[38;5;248m" BLK "\033[38;5;231m" BLK
	                       "\033[0m");
	free(s);
}

static int dist(int r, int g, int b, int idx)
{
	static const int lv[6] = {0, 95, 135, 175, 215, 255};
	int cr, cg, cb;
	if (idx >= 232) {
		cr = cg = cb = 8 + 10 * (idx - 232);
	} else {
		idx -= 16;
		cr = lv[idx / 36];
		cg = lv[(idx / 6) % 6];
		cb = lv[idx % 6];
	}
	return (r - cr) * (r - cr) + (g - cg) * (g - cg) + (b - cb) * (b - cb);
}

static void test_xterm256(void **state)
{
	(void)state;
	assert_int_equal(img_xterm256(0, 0, 0), 16);
	assert_int_equal(img_xterm256(255, 255, 255), 231);
	assert_int_equal(img_xterm256(255, 0, 0), 196);
	assert_int_equal(img_xterm256(128, 128, 128), 244);
	assert_int_equal(img_xterm256(8, 8, 8), 232);
	assert_int_equal(img_xterm256(238, 238, 238), 255);
	assert_int_equal(img_xterm256(95, 135, 175), 67);
	/* never the unreliable low 16, always a nearest one */
	for (int r = 0; r < 256; r += 5)
		for (int g = 0; g < 256; g += 7)
			for (int b = 0; b < 256; b += 3) {
				int got = img_xterm256(r, g, b);
				assert_in_range(got, 16, 255);
				int best = 1 << 30;
				for (int i = 16; i < 256; i++) {
					int d = dist(r, g, b, i);
					if (d < best)
						best = d;
				}
				if (dist(r, g, b, got) != best)
					fail_msg(
					    "(%d,%d,%d) -> %d: distance %d, "
					    "best %d",
					    r, g, b, got, dist(r, g, b, got),
					    best);
			}
}

/* ---- PNG header ---- */

static uint32_t crc(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void make_hdr(unsigned char *p, uint32_t w, uint32_t h, int depth,
                     int ct)
{
	static const unsigned char sig[8] = {0x89, 'P',  'N',  'G',
	                                     '\r', '\n', 0x1a, '\n'};
	memcpy(p, sig, 8);
	put32(p + 8, 13);
	memcpy(p + 12, "IHDR", 4);
	put32(p + 16, w);
	put32(p + 20, h);
	p[24] = (unsigned char)depth;
	p[25] = (unsigned char)ct;
	p[26] = p[27] = p[28] = 0;
	put32(p + 29, crc(p + 12, 17));
}

static int hdr_rc(const unsigned char *p, size_t n, long long size,
                  const char *want_msg)
{
	struct img_hdr h;
	char *err = NULL;
	int rc = img_png_header(p, n, size, &h, &err);
	if (want_msg) {
		assert_non_null(err);
		if (!strstr(err, want_msg))
			fail_msg("message '%s' lacks '%s'", err, want_msg);
	} else {
		assert_null(err);
	}
	free(err);
	return rc;
}

static void test_png_header(void **state)
{
	(void)state;
	unsigned char p[33];
	make_hdr(p, 1600, 900, 8, 6);
	struct img_hdr h;
	assert_int_equal(img_png_header(p, 33, 239378, &h, NULL), IMG_OK);
	assert_int_equal(h.w, 1600);
	assert_int_equal(h.h, 900);
	assert_int_equal(h.color_type, 6);

	assert_int_equal(hdr_rc(p, 0, 0, "empty"), IMG_ENOTPNG);
	assert_int_equal(
	    hdr_rc((const unsigned char *)"GIF89a", 6, 6, "not a PNG"),
	    IMG_ENOTPNG);
	assert_int_equal(hdr_rc((const unsigned char *)"\xff\xd8\xff\xe0"
	                                               "JFIF\0\0\0\0\0\0\0\0",
	                        16, 16, "PNG files only"),
	                 IMG_ENOTPNG);
	assert_int_equal(hdr_rc(p, 8, 8, "truncated"), IMG_ECORRUPT);
	assert_int_equal(hdr_rc(p, 32, 32, "truncated"), IMG_ECORRUPT);

	make_hdr(p, 100000, 100000, 8, 2);
	assert_int_equal(hdr_rc(p, 33, 1000, "100000x100000"), IMG_ETOOBIG);
	make_hdr(p, 10001, 1, 8, 2);
	assert_int_equal(hdr_rc(p, 33, 1000, "too large"), IMG_ETOOBIG);
	make_hdr(p, 10000, 4001, 1, 0); /* 40.01 Mpixel */
	assert_int_equal(hdr_rc(p, 33, 1000, "40 Mpixel"), IMG_ETOOBIG);
	make_hdr(p, 10000, 4000, 1, 0);
	assert_int_equal(hdr_rc(p, 33, 1000, NULL), IMG_OK);
	assert_int_equal(hdr_rc(p, 33, 65LL << 20, "MiB"), IMG_ETOOBIG);

	make_hdr(p, 0, 10, 8, 2);
	assert_int_equal(hdr_rc(p, 33, 100, "invalid IHDR"), IMG_ECORRUPT);
	make_hdr(p, 10, 10, 4, 2); /* RGB at 4 bits does not exist */
	assert_int_equal(hdr_rc(p, 33, 100, "invalid IHDR"), IMG_ECORRUPT);
	make_hdr(p, 10, 10, 8, 2);
	p[30] ^= 1; /* bad CRC */
	assert_int_equal(hdr_rc(p, 33, 100, "IHDR"), IMG_ECORRUPT);
	make_hdr(p, 10, 10, 8, 2);
	memcpy(p + 12, "IDAT", 4);
	assert_int_equal(hdr_rc(p, 33, 100, "IHDR"), IMG_ECORRUPT);
}

/* ---- fitting and scaling ---- */

static void test_fit(void **state)
{
	(void)state;
	int w, h;
	img_fit(1600, 900, 800, 800, 0, &w, &h);
	assert_int_equal(w, 800);
	assert_int_equal(h, 450);
	img_fit(1600, 900, 800, 100, 0, &w, &h);
	assert_int_equal(w, 178);
	assert_int_equal(h, 100);
	img_fit(100, 50, 800, 800, 0, &w, &h);
	assert_int_equal(w, 100);
	assert_int_equal(h, 50);
	img_fit(100, 50, 800, 800, 1, &w, &h);
	assert_int_equal(w, 800);
	assert_int_equal(h, 400);
	img_fit(10, 10000, 800, 100, 0, &w, &h);
	assert_int_equal(w, 1);
	assert_int_equal(h, 100);
	/* half blocks: 80x24 cells of 10x20 px; a cell is 2 pixels tall */
	img_blocks_fit(1600, 900, 80, 24, 10, 20, 0, &w, &h);
	assert_int_equal(w, 80);
	assert_int_equal(h, 45);
	img_blocks_fit(1000, 1000, 80, 24, 10, 20, 0, &w, &h);
	assert_int_equal(w, 48); /* 480 px wide, 48 half-rows of 10 px */
	assert_int_equal(h, 48);
	img_blocks_fit(4, 4, 80, 24, 10, 20, 0, &w, &h);
	assert_int_equal(w, 4);
	assert_int_equal(h, 4);
}

static void test_scale_identity_and_half(void **state)
{
	(void)state;
	uint8_t src[4 * 2 * 3], dst[4 * 2 * 3];
	for (int i = 0; i < 24; i++)
		src[i] = (uint8_t)(i * 37 % 256);
	img_scale(src, 4, 2, dst, 4, 2);
	assert_memory_equal(src, dst, sizeof src);
	/* 4x2 -> 2x1: each output is the mean of a 2x2 block */
	const uint8_t g[] = {0, 255, 0, 255, 255, 255, 0, 0};
	uint8_t s2[8 * 3], d2[2 * 3];
	for (int i = 0; i < 8; i++)
		memset(s2 + 3 * i, g[i], 3);
	img_scale(s2, 4, 2, d2, 2, 1);
	assert_int_equal(d2[0], 191); /* (0+255+255+255)/4 = 191.25 */
	assert_int_equal(d2[3], 64);  /* (0+255+0+0)/4 = 63.75 */
}

/* A flat image stays exactly flat at any ratio, up or down; a two-tone
 * image keeps its mean. */
static void test_scale_ratios(void **state)
{
	(void)state;
	const int sizes[][4] = {{7, 5, 3, 2},       {3, 2, 7, 5},
	                        {100, 1, 33, 1},    {1, 100, 1, 9},
	                        {640, 480, 640, 1}, {5, 5, 13, 4}};
	for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
		int sw = sizes[t][0], sh = sizes[t][1], dw = sizes[t][2],
		    dh = sizes[t][3];
		uint8_t *src = malloc((size_t)sw * sh * 3);
		uint8_t *dst = malloc((size_t)dw * dh * 3);
		for (int i = 0; i < sw * sh; i++) {
			src[3 * i] = 17;
			src[3 * i + 1] = 200;
			src[3 * i + 2] = 255;
		}
		img_scale(src, sw, sh, dst, dw, dh);
		for (int i = 0; i < dw * dh; i++) {
			assert_int_equal(dst[3 * i], 17);
			assert_int_equal(dst[3 * i + 1], 200);
			assert_int_equal(dst[3 * i + 2], 255);
		}
		/* stripes: the mean survives */
		long in = 0, out = 0;
		for (int i = 0; i < sw * sh; i++) {
			src[3 * i] = (i % sw) & 1 ? 200 : 0;
			in += src[3 * i];
		}
		img_scale(src, sw, sh, dst, dw, dh);
		for (int i = 0; i < dw * dh; i++)
			out += dst[3 * i];
		double mi = (double)in / (sw * sh),
		       mo = (double)out / (dw * dh);
		if (mi - mo > 1.0 || mo - mi > 1.0)
			fail_msg("%dx%d -> %dx%d: mean %.2f -> %.2f", sw, sh,
			         dw, dh, mi, mo);
		free(src);
		free(dst);
	}
}

/* ---- quantiser ---- */

static void test_quantize_exact(void **state)
{
	(void)state;
	enum { W = 50, H = 20 };
	uint8_t rgb[W * H * 3], pal[256 * 3], idx[W * H];
	for (int i = 0; i < W * H; i++) { /* 200 distinct colours */
		rgb[3 * i] = (uint8_t)(i % 200);
		rgb[3 * i + 1] = (uint8_t)(255 - i % 200);
		rgb[3 * i + 2] = 7;
	}
	int n = img_quantize(rgb, W * H, 256, pal, idx);
	assert_int_equal(n, 200);
	for (int i = 0; i < W * H; i++)
		assert_memory_equal(pal + 3 * idx[i], rgb + 3 * i, 3);
}

static void test_quantize_cut(void **state)
{
	(void)state;
	enum { W = 64, H = 64 };
	uint8_t rgb[W * H * 3], pal[256 * 3], idx[W * H];
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			uint8_t *p = rgb + 3 * (y * W + x);
			p[0] = (uint8_t)(x * 4);
			p[1] = (uint8_t)(y * 4);
			p[2] = (uint8_t)((x + y) * 2);
		}
	const int maxcs[] = {256, 64, 16};
	const int tol[] = {24, 48, 96};
	for (int t = 0; t < 3; t++) {
		int n = img_quantize(rgb, W * H, maxcs[t], pal, idx);
		assert_in_range(n, 2, maxcs[t]);
		long worst = 0;
		for (int i = 0; i < W * H; i++) {
			assert_in_range(idx[i], 0, n - 1);
			for (int k = 0; k < 3; k++) {
				long d = labs((long)pal[3 * idx[i] + k] -
				              rgb[3 * i + k]);
				if (d > worst)
					worst = d;
			}
		}
		if (worst > tol[t])
			fail_msg("%d colours: a channel off by %ld", maxcs[t],
			         worst);
	}
}

/* ---- kitty ---- */

static int b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

static size_t unbase64(const char *s, size_t n, uint8_t *out)
{
	size_t o = 0;
	assert_int_equal(n % 4, 0);
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		for (int k = 0; k < 4; k++)
			v[k] = s[i + k] == '=' ? 0 : b64val(s[i + k]);
		for (int k = 0; k < 4; k++)
			assert_true(v[k] >= 0);
		uint32_t x =
		    (uint32_t)v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3];
		out[o++] = (uint8_t)(x >> 16);
		if (s[i + 2] != '=')
			out[o++] = (uint8_t)(x >> 8);
		if (s[i + 3] != '=')
			out[o++] = (uint8_t)x;
	}
	return o;
}

static void test_kitty_chunks(void **state)
{
	(void)state;
	const size_t sizes[] = {1, 2, 3, 3072, 3073, 10000};
	for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
		size_t n = sizes[t];
		uint8_t *data = malloc(n), *back = malloc(n + 3);
		for (size_t i = 0; i < n; i++)
			data[i] = (uint8_t)(i * 131 + 7);
		struct img_kitty k = {24, 1, 40, 30, 42};
		struct buf b;
		buf_init(&b, 0);
		assert_int_equal(img_kitty(&b, data, n, &k), 0);
		struct img_geom g = {4, 2, 40, 30, 42};
		assert_true(img_payload_ok(IMG_KITTY, b.data, b.len, &g));
		g.kitty_id = 0; /* any id */
		assert_true(img_payload_ok(IMG_KITTY, b.data, b.len, &g));
		g.kitty_id = 43;
		assert_false(img_payload_ok(IMG_KITTY, b.data, b.len, &g));
		g.kitty_id = 42;
		g.px_w = 41;
		assert_false(img_payload_ok(IMG_KITTY, b.data, b.len, &g));
		g.px_w = 40;
		/* cut after any chunk: the m=0 one is missing */
		const char *cut = strstr(b.data, "\033\\");
		if (cut + 2 < b.data + b.len)
			assert_false(img_payload_ok(
			    IMG_KITTY, b.data, (size_t)(cut + 2 - b.data), &g));
		/* walk the chunks */
		struct buf all;
		buf_init(&all, 0);
		const char *p = b.data, *end = b.data + b.len;
		int chunks = 0, last_m = -1;
		while (p < end) {
			assert_memory_equal(p, "\033_G", 3);
			const char *semi = memchr(p, ';', (size_t)(end - p));
			const char *st = strstr(p, "\033\\");
			assert_non_null(semi);
			assert_non_null(st);
			char keys[200];
			snprintf(keys, sizeof keys, "%.*s", (int)(semi - p - 3),
			         p + 3);
			if (chunks == 0)
				assert_non_null(strstr(
				    keys,
				    "a=t,f=24,o=z,s=40,v=30,i=42,q=2,m="));
			else
				assert_memory_equal(keys, "m=", 2);
			last_m = keys[strlen(keys) - 1] - '0';
			size_t len = (size_t)(st - semi - 1);
			assert_true(len <= IMG_KITTY_CHUNK);
			assert_int_equal(len % 4, 0);
			if (st + 2 < end) {
				assert_int_equal(last_m, 1);
				assert_int_equal(len, IMG_KITTY_CHUNK);
			}
			buf_append(&all, semi + 1, len);
			chunks++;
			p = st + 2;
		}
		assert_int_equal(last_m, 0);
		assert_int_equal(chunks,
		                 (int)((4 * ((n + 2) / 3) + 4095) / 4096));
		assert_int_equal(unbase64(all.data, all.len, back), n);
		assert_memory_equal(back, data, n);
		buf_free(&all);
		buf_free(&b);
		free(data);
		free(back);
	}
	char out[8];
	assert_int_equal(img_base64("Man", 3, out), 4);
	assert_memory_equal(out, "TWFu", 4);
	assert_int_equal(img_base64("Ma", 2, out), 4);
	assert_memory_equal(out, "TWE=", 4);
	assert_int_equal(img_base64("M", 1, out), 4);
	assert_memory_equal(out, "TQ==", 4);
}

/* Forged payloads: each is something a subverted helper could send to
 * make the terminal do more than draw pixels. */
static void test_payload_checks(void **state)
{
	(void)state;
	struct img_geom g = {1, 1, 2, 2, 7};
#define OK(m, s) assert_true(img_payload_ok(m, s, sizeof s - 1, &g))
#define BAD(m, s) assert_false(img_payload_ok(m, s, sizeof s - 1, &g))
	OK(IMG_SIXEL, "\033Pq\"1;1;2;2#0;2;0;0;0#0~~\033\\");
	OK(IMG_SIXEL, "\033P0;0;8q\"1;1;2;2#0;2;0;0;0#0!2~$#1~-\033\\");
	BAD(IMG_SIXEL, "\033Pq#0~~\033\\\033]0;pwned\a\033Pq~\033\\");
	BAD(IMG_SIXEL, "\033Pq\"1;1;2;2#0~~");
	BAD(IMG_SIXEL, "xx\033Pq\"1;1;2;2#0~~\033\\");
	/* DECRQSS: the terminal's reply would arrive as typed keys */
	BAD(IMG_SIXEL, "\033P$qm\033\\");
	BAD(IMG_SIXEL, "\033P$q\"1;1;2;2#0~~\033\\");
	/* DECUDK: reprograms function keys */
	BAD(IMG_SIXEL, "\033P0;1|17/6C73202F0A\033\\");
	/* no raster, or one larger than the declared pixels */
	BAD(IMG_SIXEL, "\033Pq#0~~\033\\");
	BAD(IMG_SIXEL, "\033Pq\"1;1;3;2#0~~\033\\");
	BAD(IMG_SIXEL, "\033Pq\"1;1;2;3000#0~~\033\\");
	/* drawing past the raster: wider, or more bands (scrolls) */
	BAD(IMG_SIXEL, "\033Pq\"1;1;2;2#0!3~\033\\");
	BAD(IMG_SIXEL, "\033Pq\"1;1;2;2#0~~-~~\033\\");
	/* other bytes inside: a control, a second raster, 8-bit C1 */
	BAD(IMG_SIXEL, "\033Pq\"1;1;2;2#0~\a~\033\\");
	BAD(IMG_SIXEL, "\033Pq\"1;1;2;2\"1;1;9;9#0~~\033\\");
	BAD(IMG_SIXEL, "\033Pq\"1;1;2;2#0~\x9c~\033\\");
	BAD(IMG_SIXEL, "\033Pq\"1;1;2;2#0;2;300;0;0#0~~\033\\");

	g = (struct img_geom){1, 1, 2, 2, 7};
	OK(IMG_KITTY, "\033_Ga=t,f=24,o=z,s=2,v=2,i=7,q=2,m=1;QUJD\033\\"
	              "\033_Gm=0;QUJD\033\\");
	OK(IMG_KITTY, "\033_Ga=t,f=100,i=7,q=2,m=0;QUJD\033\\");
	/* t=f: the terminal reads a file named by the payload */
	BAD(IMG_KITTY,
	    "\033_Ga=t,t=f,f=100,i=7,q=2,m=0;L2V0Yy9wYXNzd2Q=\033\\");
	BAD(IMG_KITTY,
	    "\033_Ga=t,f=100,t=f,i=7,q=2,m=0;L2V0Yy9wYXNzd2Q=\033\\");
	/* q=0 / no q: replies arrive on stdin */
	BAD(IMG_KITTY, "\033_Ga=t,f=100,i=7,q=0,m=0;QUJD\033\\");
	BAD(IMG_KITTY, "\033_Ga=t,f=100,i=7,m=0;QUJD\033\\");
	/* shown at once, placed, deleted, queried: not ours to do */
	BAD(IMG_KITTY, "\033_Ga=T,f=100,i=7,q=2,m=0;QUJD\033\\");
	BAD(IMG_KITTY, "\033_Ga=p,i=7,q=2\033\\");
	BAD(IMG_KITTY, "\033_Ga=d,d=A,q=2\033\\");
	BAD(IMG_KITTY, "\033_Ga=q,f=100,i=7,q=2,m=0;QUJD\033\\");
	/* another id, another size */
	BAD(IMG_KITTY, "\033_Ga=t,f=100,i=8,q=2,m=0;QUJD\033\\");
	BAD(IMG_KITTY, "\033_Ga=t,f=24,s=2,v=3,i=7,q=2,m=0;QUJD\033\\");
	/* a key on a continuation chunk, a chunk after the last, no last */
	BAD(IMG_KITTY, "\033_Ga=t,f=100,i=7,q=2,m=1;QUJD\033\\"
	               "\033_Gt=f,m=0;QUJD\033\\");
	BAD(IMG_KITTY, "\033_Ga=t,f=100,i=7,q=2,m=0;QUJD\033\\"
	               "\033_Gm=0;QUJD\033\\");
	BAD(IMG_KITTY, "\033_Ga=t,f=100,i=7,q=2,m=1;QUJD\033\\");
	BAD(IMG_KITTY, "\033_Ga=t,f=100,i=7,q=2,m=0;QUJD\033\\\a");
	BAD(IMG_KITTY, "\033_Ga=t,f=100,i=7,q=2,m=0;QU JD\033\\");
	BAD(IMG_KITTY, "\033_Ga=t,f=100,i=7,q=2,m=0;QUJ\033\\");
	BAD(IMG_KITTY, "\033_Ga=t,f=100,i=7,q=2,m=0;QUJD");

	g = (struct img_geom){1, 2, 1, 3, 0};
	OK(IMG_BLOCKS, "\033[38;2;1;2;3;49m" BLK "\033[0m\n"
	               "\033[38;5;4;48;5;200m" BLK "\033[0m");
	/* wrong geometry: more lines than rows, more cells than cols */
	BAD(IMG_BLOCKS,
	    "\033[38;2;1;2;3m" BLK "\033[0m\n" BLK "\033[0m\n" BLK "\033[0m");
	BAD(IMG_BLOCKS, "\033[38;2;1;2;3m" BLK BLK "\033[0m\n" BLK "\033[0m");
	BAD(IMG_BLOCKS, "\033[38;2;1;2;3m" BLK "\033[0m");
	BAD(IMG_BLOCKS, "\033[38;2;1;2;3m" BLK "\033]0;title\a");
	BAD(IMG_BLOCKS, "\033[2J");
	BAD(IMG_BLOCKS, "\033[38;5;1mX");
	/* SGRs beyond colours: conceal, blink, a colour out of range */
	BAD(IMG_BLOCKS, "\033[8m" BLK "\033[0m\n" BLK "\033[0m");
	BAD(IMG_BLOCKS, "\033[38;5;1;5m" BLK "\033[0m\n" BLK "\033[0m");
	BAD(IMG_BLOCKS, "\033[38;5;256m" BLK "\033[0m\n" BLK "\033[0m");
	BAD(IMG_BLOCKS, "\033[38;5;1m" BLK "\033[0m\n" BLK "\033[0m\n");
#undef OK
#undef BAD
}

/* Decode a sixel DCS of img_sixel back into palette indices. */
static void unsixel(const char *s, int w, int h, uint8_t *idx)
{
	char hdr[64];
	snprintf(hdr, sizeof hdr, "\033Pq\"1;1;%d;%d", w, h);
	assert_memory_equal(s, hdr, strlen(hdr));
	memset(idx, 0xff, (size_t)w * h);
	const char *p = s + strlen(hdr);
	int c = 0, x = 0, y0 = 0;
	while (strncmp(p, "\033\\", 2)) {
		if (*p == '#') {
			c = (int)strtol(p + 1, (char **)&p, 10);
			if (*p == ';') /* a definition */
				for (int k = 0; k < 4; k++)
					strtol(p + 1, (char **)&p, 10);
			continue;
		}
		if (*p == '$' || *p == '-') {
			x = 0;
			y0 += *p == '-' ? 6 : 0;
			p++;
			continue;
		}
		int rep = 1;
		if (*p == '!')
			rep = (int)strtol(p + 1, (char **)&p, 10);
		int bits = *p++ - '?';
		assert_in_range(bits, 0, 63);
		for (; rep > 0; rep--, x++)
			for (int r = 0; r < 6; r++)
				if (bits >> r & 1) {
					assert_in_range(x, 0, w - 1);
					assert_in_range(y0 + r, 0, h - 1);
					/* one colour per pixel */
					assert_int_equal(
					    idx[(size_t)(y0 + r) * w + x],
					    0xff);
					idx[(size_t)(y0 + r) * w + x] =
					    (uint8_t)c;
				}
	}
}

static void test_sixel_many_colours(void **state)
{
	(void)state;
	const int sizes[][2] = {{1, 1}, {7, 13}, {64, 6}, {301, 200}};
	for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
		int w = sizes[t][0], h = sizes[t][1];
		size_t npix = (size_t)w * h;
		uint8_t *rgb = malloc(npix * 3), *idx = malloc(npix),
		        *back = malloc(npix), pal[256 * 3];
		uint32_t x = 12345;
		for (size_t i = 0; i < npix * 3; i++) {
			x = x * 1103515245u + 12345u;
			rgb[i] = (uint8_t)(x >> 16);
		}
		int n = img_quantize(rgb, npix, 256, pal, idx);
		struct buf b;
		buf_init(&b, 0);
		assert_int_equal(img_sixel(&b, idx, w, h, pal, n), 0);
		struct img_geom g = {1, 1, w, h, 0};
		assert_true(img_payload_ok(IMG_SIXEL, b.data, b.len, &g));
		unsixel(buf_str(&b), w, h, back);
		assert_memory_equal(back, idx, npix);
		/* the registers: the palette in percent */
		char reg[64];
		snprintf(reg, sizeof reg, "#%d;2;%d;%d;%d", n - 1,
		         (pal[3 * (n - 1)] * 100 + 127) / 255,
		         (pal[3 * (n - 1) + 1] * 100 + 127) / 255,
		         (pal[3 * (n - 1) + 2] * 100 + 127) / 255);
		assert_non_null(strstr(buf_str(&b), reg));
		/* smaller declared pixels: refused */
		g.px_h = h - 1;
		if (h > 1)
			assert_false(
			    img_payload_ok(IMG_SIXEL, b.data, b.len, &g));
		buf_free(&b);
		free(rgb);
		free(idx);
		free(back);
	}
}

/* ---- view: the fitting rule and the four formats' headers ---- */

static void fit_is(int sw, int sh, int max, long mpx, int sm, int ww, int wh)
{
	int w, h;
	img_view_fit(sw, sh, max, mpx, sm, &w, &h);
	if (w != ww || h != wh)
		fail_msg("%dx%d in max=%d mpx=%ld short=%d: %dx%d, not %dx%d",
		         sw, sh, max, mpx, sm, w, h, ww, wh);
}

static void test_view_fit(void **state)
{
	(void)state;
	/* Anthropic: the long side, then the pixels: 1384x831 would be
	 * 1,150,104 pixels, so both sides are rounded down */
	fit_is(3000, 1800, 1568, 1150000, 0, 1384, 830);
	fit_is(1600, 900, 1568, 1150000, 0, 1430, 804);
	fit_is(1568, 400, 1568, 1150000, 0, 1568, 400); /* fits: unchanged */
	fit_is(2000, 400, 1568, 1150000, 0, 1568, 314); /* the long side */
	fit_is(800, 450, 1568, 1150000, 0, 800, 450);   /* never upscaled */
	/* OpenAI high: 2048 a side, then 768 on the short side; low */
	fit_is(4000, 3000, 2048, 0, 768, 1024, 768);
	fit_is(3000, 1800, 2048, 0, 768, 1280, 768);
	fit_is(1800, 3000, 2048, 0, 768, 768, 1280);
	fit_is(3000, 1800, 512, 0, 0, 512, 307);
	fit_is(600, 500, 2048, 0, 768, 600, 500);
	fit_is(100, 50, 0, 0, 0, 100, 50);   /* no limits */
	fit_is(10000, 1, 100, 0, 0, 100, 1); /* at least one pixel */
	fit_is(10000, 10, 1568, 1150000, 0, 1568, 2);
	/* any size in any box: within every limit, the aspect kept to a
	 * pixel, and as large as the binding limit allows */
	unsigned seed = 7;
	for (int i = 0; i < 20000; i++) {
		seed = seed * 1103515245u + 12345u;
		int sw = 1 + (int)(seed >> 8) % 10000;
		seed = seed * 1103515245u + 12345u;
		int sh = 1 + (int)(seed >> 8) % 10000;
		seed = seed * 1103515245u + 12345u;
		int max = (int)(seed >> 8) % 3000;
		long mpx =
		    (long)(seed >> 4) % 3 ? (long)(seed >> 9) % 4000000 : 0;
		int sm = (seed >> 3) % 2 ? (int)(seed >> 12) % 1500 : 0;
		if (mpx && mpx < 100)
			mpx = 100;
		int w, h;
		img_view_fit(sw, sh, max, mpx, sm, &w, &h);
		int lo = w < h ? w : h, hi = w < h ? h : w;
		int slo = sw < sh ? sw : sh, shi = sw < sh ? sh : sw;
		assert_true(w >= 1 && h >= 1 && w <= sw && h <= sh);
		if (max && shi > 1)
			assert_true(hi <= max || lo == 1);
		if (mpx)
			assert_true((long)w * h <= mpx || lo == 1);
		if (sm)
			assert_true(lo <= sm || lo == 1);
		if (lo > 1) /* the aspect: off by rounding only */
			assert_true(labs((long)w * sh - (long)h * sw) <=
			            (long)sw + sh);
		if (w == sw && h == sh)
			continue;
		/* shrunk: some limit binds (within two pixels) */
		int bound = (max && hi + 2 > max) ||
		            (mpx && (long)(w + 2) * (h + 2) > mpx) ||
		            (sm && lo + 2 > sm);
		if (!bound)
			fail_msg("%dx%d max=%d mpx=%ld short=%d: %dx%d is "
			         "smaller than it needs (%d %d)",
			         sw, sh, max, mpx, sm, w, h, slo, shi);
	}
}

static size_t jpeg_bytes(unsigned char *p, int w, int h)
{
	static const unsigned char app0[] = {0xff, 0xe0, 0, 16, 'J', 'F',
	                                     'I',  'F',  0, 1,  1,   0,
	                                     0,    1,    0, 1,  0,   0};
	size_t n = 0;
	p[n++] = 0xff;
	p[n++] = 0xd8;
	memcpy(p + n, app0, sizeof app0);
	n += sizeof app0;
	unsigned char sof[] = {0xff,
	                       0xc2,
	                       0,
	                       11,
	                       8,
	                       (unsigned char)(h >> 8),
	                       (unsigned char)h,
	                       (unsigned char)(w >> 8),
	                       (unsigned char)w,
	                       1,
	                       1,
	                       0x11,
	                       0};
	memcpy(p + n, sof, sizeof sof);
	n += sizeof sof;
	static const unsigned char sos[] = {0xff, 0xda, 0, 8,    1,
	                                    1,    0,    0, 0x3f, 0};
	memcpy(p + n, sos, sizeof sos);
	n += sizeof sos;
	memset(p + n, 0x55, 40); /* entropy-coded data */
	n += 40;
	p[n++] = 0xff;
	p[n++] = 0xd9;
	return n;
}

static size_t gif_bytes(unsigned char *p, int w, int h, int frames)
{
	size_t n = 0;
	memcpy(p, "GIF89a", 6);
	n = 6;
	p[n++] = (unsigned char)w;
	p[n++] = (unsigned char)(w >> 8);
	p[n++] = (unsigned char)h;
	p[n++] = (unsigned char)(h >> 8);
	p[n++] = 0x80; /* a global table of 2 colours */
	p[n++] = 0;
	p[n++] = 0;
	memset(p + n, 0x7f, 6);
	n += 6;
	static const unsigned char gce[] = {0x21, 0xf9, 4, 0, 0, 0, 0, 0};
	static const unsigned char img[] = {0x2c, 0, 0, 0, 0,    1, 0, 1,
	                                    0,    0, 2, 2, 0x4c, 1, 0};
	for (int f = 0; f < frames; f++) {
		memcpy(p + n, gce, sizeof gce);
		n += sizeof gce;
		memcpy(p + n, img, sizeof img);
		n += sizeof img;
	}
	p[n++] = 0x3b;
	return n;
}

static size_t webp_bytes(unsigned char *p, const char *kind, int w, int h,
                         int anim)
{
	memset(p, 0, 64);
	memcpy(p, "RIFF", 4);
	memcpy(p + 8, "WEBP", 4);
	memcpy(p + 12, kind, 4);
	p[16] = 20; /* the chunk's length */
	if (!strcmp(kind, "VP8 ")) {
		memcpy(p + 23, "\x9d\x01\x2a", 3);
		p[26] = (unsigned char)w;
		p[27] = (unsigned char)(w >> 8);
		p[28] = (unsigned char)h;
		p[29] = (unsigned char)(h >> 8);
	} else if (!strcmp(kind, "VP8L")) {
		uint32_t b = (uint32_t)(w - 1) | (uint32_t)(h - 1) << 14;
		p[20] = 0x2f;
		for (int k = 0; k < 4; k++)
			p[21 + k] = (unsigned char)(b >> (8 * k));
	} else {
		p[20] = anim ? 0x02 : 0;
		for (int k = 0; k < 3; k++) {
			p[24 + k] = (unsigned char)((w - 1) >> (8 * k));
			p[27 + k] = (unsigned char)((h - 1) >> (8 * k));
		}
	}
	p[4] = 40 - 8; /* RIFF length: the file is 40 bytes */
	return 40;
}

static int view_rc(const unsigned char *p, size_t n, struct img_view_hdr *h,
                   const char *want_msg)
{
	char *err = NULL;
	int rc = img_view_header(p, n, h, &err);
	if (want_msg && (!err || !strstr(err, want_msg)))
		fail_msg("message '%s' lacks '%s'", err ? err : "(none)",
		         want_msg);
	if (!want_msg && err)
		fail_msg("unexpected message '%s'", err);
	free(err);
	return rc;
}

/* Every proper prefix of a file whose end the parser needs (JPEG's
 * EOI, GIF's trailer, the RIFF length) is refused as truncated. */
static void prefixes_refused(const unsigned char *p, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		struct img_view_hdr h;
		unsigned char *copy = malloc(k ? k : 1); /* ASan: exact */
		memcpy(copy, p, k);
		int rc = img_view_header(copy, k, &h, NULL);
		free(copy);
		if (rc == IMG_OK)
			fail_msg("a %zu-byte prefix of %zu bytes accepted", k,
			         n);
	}
}

static void test_view_header(void **state)
{
	(void)state;
	unsigned char p[256];
	struct img_view_hdr h;
	make_hdr(p, 1600, 900, 8, 6);
	assert_int_equal(view_rc(p, 33, &h, NULL), IMG_OK);
	assert_int_equal(h.type, IMG_PNG);
	assert_int_equal(h.w, 1600);
	assert_int_equal(h.h, 900);
	assert_string_equal(img_media_type(h.type), "image/png");
	make_hdr(p, 8000, 5000, 8, 6); /* limits are checked apart */
	assert_int_equal(view_rc(p, 33, &h, NULL), IMG_OK);
	assert_int_equal(view_rc(p, 20, &h, "truncated PNG"), IMG_ECORRUPT);

	size_t n = jpeg_bytes(p, 1200, 700);
	assert_int_equal(view_rc(p, n, &h, NULL), IMG_OK);
	assert_int_equal(h.type, IMG_JPEG);
	assert_int_equal(h.w, 1200);
	assert_int_equal(h.h, 700);
	assert_string_equal(img_media_type(h.type), "image/jpeg");
	prefixes_refused(p, n);
	assert_int_equal(view_rc(p, n - 2, &h, "truncated JPEG"), IMG_ECORRUPT);
	p[2 + 18 + 5] = p[2 + 18 + 6] = 0; /* height 0: DNL */
	assert_int_equal(view_rc(p, n, &h, "DNL"), IMG_ECORRUPT);
	n = jpeg_bytes(p, 1200, 700);
	p[2 + 18] = 0x12; /* no marker where the SOF was */
	assert_int_equal(view_rc(p, n, &h, "damaged JPEG"), IMG_ECORRUPT);
	n = jpeg_bytes(p, 1200, 700);
	memmove(p + 2 + 18, p + 2 + 18 + 13, n - 2 - 18 - 13); /* no SOF */
	assert_int_equal(view_rc(p, n - 13, &h, "scan before its frame"),
	                 IMG_ECORRUPT);

	n = gif_bytes(p, 640, 480, 1);
	assert_int_equal(view_rc(p, n, &h, NULL), IMG_OK);
	assert_int_equal(h.type, IMG_GIF);
	assert_int_equal(h.w, 640);
	assert_int_equal(h.h, 480);
	assert_int_equal(h.frames, 1);
	assert_string_equal(img_media_type(h.type), "image/gif");
	prefixes_refused(p, n);
	n = gif_bytes(p, 640, 480, 3);
	assert_int_equal(view_rc(p, n, &h, NULL), IMG_OK);
	assert_int_equal(h.frames, 2);
	prefixes_refused(p, n);
	n = gif_bytes(p, 640, 480, 0);
	assert_int_equal(view_rc(p, n, &h, "empty image"), IMG_ECORRUPT);
	n = gif_bytes(p, 640, 480, 1);
	p[19] = 0x99; /* not a block */
	assert_int_equal(view_rc(p, n, &h, "unknown block"), IMG_ECORRUPT);

	static const char *const kinds[] = {"VP8 ", "VP8L", "VP8X"};
	for (int k = 0; k < 3; k++) {
		n = webp_bytes(p, kinds[k], 3000, 1800, 0);
		assert_int_equal(view_rc(p, n, &h, NULL), IMG_OK);
		assert_int_equal(h.type, IMG_WEBP);
		assert_int_equal(h.w, 3000);
		assert_int_equal(h.h, 1800);
		assert_int_equal(h.frames, 1);
		prefixes_refused(p, n);
	}
	assert_string_equal(img_media_type(IMG_WEBP), "image/webp");
	n = webp_bytes(p, "VP8X", 16000, 9, 1);
	assert_int_equal(view_rc(p, n, &h, NULL), IMG_OK);
	assert_int_equal(h.w, 16000);
	assert_int_equal(h.frames, 2);
	n = webp_bytes(p, "VP8Z", 30, 30, 0);
	assert_int_equal(view_rc(p, n, &h, "no VP8, VP8L or VP8X"),
	                 IMG_ECORRUPT);

	assert_int_equal(view_rc(p, 0, &h, "the file is empty"), IMG_ENOTPNG);
	memcpy(p, "%PDF-1.7\n", 9);
	assert_int_equal(view_rc(p, 9, &h, "this is a PDF"), IMG_ENOTPNG);
	memcpy(p, "<svg xmlns=", 11);
	assert_int_equal(view_rc(p, 11, &h, "save charts with plt.savefig"),
	                 IMG_ENOTPNG);
	memcpy(p, "BM\0\0\0\0", 6);
	assert_int_equal(view_rc(p, 6, &h, "not PNG, JPEG, GIF or WebP"),
	                 IMG_ENOTPNG);
}

static void test_view_limits(void **state)
{
	(void)state;
	struct img_view_hdr h = {.w = 5000, .h = 5000};
	char *err = NULL;
	assert_int_equal(img_view_limits(&h, 1000, &err), IMG_OK); /* 25 M */
	h.w = 5001;
	assert_int_equal(img_view_limits(&h, 1000, &err), IMG_ETOOBIG);
	assert_non_null(strstr(err, "image is 5001x5000 pixels: too large to "
	                            "view (limits: 10000 pixels a side, 25 "
	                            "Mpixel)"));
	free(err);
	err = NULL;
	h.w = 10001;
	h.h = 10;
	assert_int_equal(img_view_limits(&h, 1000, NULL), IMG_ETOOBIG);
	h.w = 1000;
	assert_int_equal(img_view_limits(&h, IMG_MAX_FILE + 1, &err),
	                 IMG_ETOOBIG);
	assert_non_null(strstr(err, "too large to view (limit 64 MiB)"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_blocks_2x2),
	    cmocka_unit_test(test_blocks_odd_height),
	    cmocka_unit_test(test_blocks_gradient),
	    cmocka_unit_test(test_xterm256),
	    cmocka_unit_test(test_png_header),
	    cmocka_unit_test(test_fit),
	    cmocka_unit_test(test_scale_identity_and_half),
	    cmocka_unit_test(test_scale_ratios),
	    cmocka_unit_test(test_quantize_exact),
	    cmocka_unit_test(test_quantize_cut),
	    cmocka_unit_test(test_kitty_chunks),
	    cmocka_unit_test(test_payload_checks),
	    cmocka_unit_test(test_sixel_many_colours),
	    cmocka_unit_test(test_view_fit),
	    cmocka_unit_test(test_view_header),
	    cmocka_unit_test(test_view_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
