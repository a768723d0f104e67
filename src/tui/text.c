/* text.c: display text for the workbench: UTF-8 decoding, display
 * width, and "stext" (sanitised text with in-band style markers, see
 * tui.h): measuring, word-wrapping, cutting and highlighting it. */
#include "tui/tui.h"

#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

size_t ui_u8_decode(const char *str, size_t n, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t c;
	size_t len;
	if (!n) {
		*cp = 0;
		return 0;
	}
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		len = 2;
		c = s[0] & 0x1F;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		len = 3;
		c = s[0] & 0x0F;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		goto bad;
	}
	if (n < len)
		goto bad;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			goto bad;
		c = (c << 6) | (s[i] & 0x3F);
	}
	/* overlong, surrogates, beyond U+10FFFF */
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
		goto bad;
	*cp = c;
	return len;
bad:
	*cp = 0xFFFD;
	return 1;
}

size_t ui_u8_encode(uint32_t cp, char out[4])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

int ui_cp_width(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
		return -1;
	if (cp < 0x7F)
		return 1;
	int w = wcwidth((wchar_t)cp);
	return w;
}

size_t ui_st_marker(const char *s, size_t n)
{
	if (!n)
		return 0;
	if (s[0] == ST_ELEM)
		return n >= 2 ? 2 : 1;
	if (s[0] == ST_HL_ON || s[0] == ST_HL_OFF)
		return 1;
	if (s[0] == '\033') {
		size_t i = 1;
		while (i < n && s[i] != 'm')
			i++;
		return i < n ? i + 1 : n;
	}
	return 0;
}

/* One step over stext: a marker (width 0, *cp = 0) or a character. */
static size_t st_step(const char *s, size_t n, uint32_t *cp, int *w)
{
	size_t m = ui_st_marker(s, n);
	if (m) {
		*cp = 0;
		*w = 0;
		return m;
	}
	size_t len = ui_u8_decode(s, n, cp);
	*w = ui_cp_width(*cp);
	if (*w < 0)
		*w = 1; /* drawn as a replacement */
	return len;
}

int ui_st_width(const char *s, size_t n)
{
	int width = 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		int w;
		i += st_step(s + i, n - i, &cp, &w);
		width += w;
	}
	return width;
}

void ui_st_elem(struct buf *b, enum ui_elem e)
{
	char m[2] = {ST_ELEM, (char)(e + 1)};
	buf_append(b, m, 2);
}

void ui_rows_free(struct ui_rows *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->row[i]);
	free(r->row);
	r->row = NULL;
	r->n = r->cap = 0;
}

void ui_rows_push(struct ui_rows *r, char *row)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 8;
		r->row = xrealloc(r->row, (size_t)r->cap * sizeof *r->row);
	}
	r->row[r->n++] = row;
}

/* The style in force at the end of s[0..n): the last element marker,
 * the last SGR, and the highlight state, as a prefix for a new row. */
static void style_prefix(const char *s, size_t n, struct buf *out)
{
	const char *elem = NULL, *sgr = NULL;
	size_t sgr_len = 0;
	int hl = 0;
	for (size_t i = 0; i < n;) {
		size_t m = ui_st_marker(s + i, n - i);
		if (!m) {
			uint32_t cp;
			i += ui_u8_decode(s + i, n - i, &cp);
			continue;
		}
		if (s[i] == ST_ELEM && m == 2) {
			elem = s + i;
			sgr = NULL; /* an element resets colours */
		} else if (s[i] == ST_HL_ON) {
			hl = 1;
		} else if (s[i] == ST_HL_OFF) {
			hl = 0;
		} else if (s[i] == '\033') {
			sgr = s + i;
			sgr_len = m;
		}
		i += m;
	}
	if (elem)
		buf_append(out, elem, 2);
	if (sgr)
		buf_append(out, sgr, sgr_len);
	if (hl)
		buf_append(out, "\002", 1);
}

/* A row of s (bytes start..end) with the style active there and indent
 * spaces. */
static char *make_row(const char *s, size_t start, size_t end, int indent)
{
	struct buf b;
	buf_init(&b, 0);
	style_prefix(s, start, &b);
	for (int i = 0; i < indent; i++)
		buf_append(&b, " ", 1);
	buf_append(&b, s + start, end - start);
	return buf_detach(&b);
}

void ui_st_wrap(const char *s, size_t n, int width, int indent,
                struct ui_rows *out)
{
	if (width < 1)
		width = 1;
	if (indent > width / 2)
		indent = width / 2;
	size_t start = 0; /* of the current row */
	int first = 1;
	while (1) {
		int avail = first ? width : width - indent;
		int used = 0;
		size_t i = start, brk = 0;
		int have_brk = 0;
		/* skip spaces that would begin a continuation row */
		if (!first) {
			while (i < n && s[i] == ' ')
				i++;
			start = i;
		}
		while (i < n) {
			uint32_t cp;
			int w;
			size_t len = st_step(s + i, n - i, &cp, &w);
			if (used + w > avail)
				break;
			used += w;
			i += len;
			if (cp == ' ') {
				brk = i;
				have_brk = 1;
			}
		}
		if (i >= n) {
			ui_rows_push(out,
			             make_row(s, start, n, first ? 0 : indent));
			return;
		}
		size_t end = i;
		if (have_brk && brk > start)
			end = brk;
		if (end == start) { /* a character wider than the row */
			uint32_t cp;
			int w;
			end = start + st_step(s + start, n - start, &cp, &w);
		}
		ui_rows_push(out, make_row(s, start, end, first ? 0 : indent));
		start = end;
		first = 0;
	}
}

char *ui_st_fit(const char *s, size_t n, int width)
{
	if (ui_st_width(s, n) <= width)
		return xstrndup(s, n);
	struct buf b;
	buf_init(&b, 0);
	int used = 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		int w;
		size_t len = st_step(s + i, n - i, &cp, &w);
		if (used + w > width - 1)
			break;
		buf_append(&b, s + i, len);
		used += w;
		i += len;
	}
	if (width >= 1)
		buf_puts(&b, "\xe2\x80\xa6"); /* … */
	return buf_detach(&b);
}

char *ui_st_plain(const char *s, size_t n)
{
	struct buf b;
	buf_init(&b, 0);
	for (size_t i = 0; i < n;) {
		size_t m = ui_st_marker(s + i, n - i);
		if (m) {
			i += m;
			continue;
		}
		uint32_t cp;
		size_t len = ui_u8_decode(s + i, n - i, &cp);
		buf_append(&b, s + i, len);
		i += len;
	}
	return buf_detach(&b);
}

char *ui_st_highlight(const char *s, size_t n, const char *needle, int *found)
{
	size_t nl = needle ? strlen(needle) : 0;
	*found = 0;
	if (!nl)
		return xstrndup(s, n);
	/* plain text with a map back to stext offsets */
	char *plain = xmalloc(n + 1);
	size_t *map = xmalloc((n + 1) * sizeof *map);
	size_t p = 0;
	for (size_t i = 0; i < n;) {
		size_t m = ui_st_marker(s + i, n - i);
		if (m) {
			i += m;
			continue;
		}
		map[p] = i;
		plain[p++] = s[i++];
	}
	map[p] = n;
	plain[p] = '\0';
	struct buf b;
	buf_init(&b, 0);
	size_t copied = 0, from = 0;
	const char *hit;
	while (from < p && (hit = memmem(plain + from, p - from, needle, nl))) {
		size_t a = (size_t)(hit - plain), z = a + nl;
		buf_append(&b, s + copied, map[a] - copied);
		buf_append(&b, "\002", 1);
		/* the match itself, markers inside it kept */
		buf_append(&b, s + map[a], map[z - 1] + 1 - map[a]);
		buf_append(&b, "\003", 1);
		copied = map[z - 1] + 1;
		from = z;
		(*found)++;
	}
	buf_append(&b, s + copied, n - copied);
	free(plain);
	free(map);
	return buf_detach(&b);
}

void ui_fmt_size(char *out, size_t max, double bytes)
{
	if (bytes < 1024)
		snprintf(out, max, "%.0f B", bytes);
	else if (bytes < 1024 * 1024)
		snprintf(out, max, "%.1f KB", bytes / 1024);
	else if (bytes < 1024.0 * 1024 * 1024)
		snprintf(out, max, "%.1f MB", bytes / (1024 * 1024));
	else
		snprintf(out, max, "%.1f GB", bytes / (1024.0 * 1024 * 1024));
}

void ui_fmt_duration(char *out, size_t max, int64_t ms)
{
	if (ms < 0)
		ms = 0;
	if (ms < 10000)
		snprintf(out, max, "%.1fs", (double)ms / 1000);
	else if (ms < 60000)
		snprintf(out, max, "%llds", (long long)(ms / 1000));
	else
		snprintf(out, max, "%lldm%02llds", (long long)(ms / 60000),
		         (long long)(ms / 1000 % 60));
}

void ui_fmt_count(char *out, size_t max, double n)
{
	if (n < 1000)
		snprintf(out, max, "%.0f", n);
	else if (n < 1e6)
		snprintf(out, max, "%.1fk", n / 1e3);
	else
		snprintf(out, max, "%.1fM", n / 1e6);
}
