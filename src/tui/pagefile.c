/* pagefile.c: moving through files of any size by byte offset, as less
 * does: the next and previous line are found by reading around the
 * position, search reads in chunks, and nothing is ever loaded whole.
 * A document is a few parts (a header line, a file); lines longer than
 * UI_PG_LINE_MAX are split at fixed distances from their start, the
 * same way in both directions. */
#include "tui/tui.h"

#include "assay/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK 65536
#define BACK_WINDOW (4 << 20) /* how far back a line start is sought */
#define SEARCH_CHUNK (1 << 20)

void ui_pg_init(struct ui_pgdoc *d)
{
	memset(d, 0, sizeof *d);
}

void ui_pg_free(struct ui_pgdoc *d)
{
	for (int i = 0; i < d->n; i++) {
		free(d->part[i].header);
		if (d->part[i].fd >= 0)
			close(d->part[i].fd);
	}
	d->n = 0;
}

void ui_pg_add_header(struct ui_pgdoc *d, const char *text)
{
	if (d->n == 4)
		return;
	d->part[d->n++] = (struct ui_pgpart){xstrdup(text), -1, 1};
}

void ui_pg_add_file(struct ui_pgdoc *d, int fd)
{
	if (d->n == 4) {
		close(fd);
		return;
	}
	d->part[d->n++] = (struct ui_pgpart){NULL, fd, 0};
	ui_pg_refresh(d);
}

void ui_pg_refresh(struct ui_pgdoc *d)
{
	for (int i = 0; i < d->n; i++) {
		struct stat st;
		if (d->part[i].fd >= 0 && fstat(d->part[i].fd, &st) == 0)
			d->part[i].size = st.st_size;
	}
}

int64_t ui_pg_total(const struct ui_pgdoc *d)
{
	int64_t t = 0;
	for (int i = 0; i < d->n; i++)
		t += d->part[i].size;
	return t;
}

int ui_pg_pos_cmp(struct ui_pgpos a, struct ui_pgpos b)
{
	if (a.part != b.part)
		return a.part < b.part ? -1 : 1;
	return a.off < b.off ? -1 : a.off > b.off;
}

/* Read n bytes at off (fewer only at the end); -1 on error. */
static ssize_t pread_full(int fd, char *buf, size_t n, int64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, buf + got, n - got, (off_t)off + got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 && !got ? -1 : (ssize_t)got;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* The last '\n' at or before pos, looking back at most limit bytes:
 * its offset, -1 when the file start was reached, -2 when not found. */
static int64_t rfind_nl(int fd, int64_t pos, int64_t limit)
{
	char *buf = xmalloc(BLOCK);
	int64_t stop = pos - limit < 0 ? 0 : pos - limit;
	int64_t end = pos + 1, res = -2;
	while (end > stop) {
		int64_t start = end - BLOCK < stop ? stop : end - BLOCK;
		ssize_t r = pread_full(fd, buf, (size_t)(end - start), start);
		if (r <= 0)
			break;
		const char *nl = memrchr(buf, '\n', (size_t)r);
		if (nl) {
			res = start + (nl - buf);
			break;
		}
		end = start;
	}
	if (res == -2 && end <= stop && stop == 0)
		res = -1;
	free(buf);
	return res;
}

/* Start of the line segment holding position p of a file. */
static int64_t seg_start(int fd, int64_t p)
{
	if (p <= 0)
		return 0;
	int64_t nl = rfind_nl(fd, p - 1, BACK_WINDOW);
	if (nl == -2)
		return p - (p % UI_PG_LINE_MAX);
	int64_t rs = nl + 1;
	return rs + (p - rs) / UI_PG_LINE_MAX * UI_PG_LINE_MAX;
}

/* Next segment start after off in a file (size when none). */
static int64_t file_next(int fd, int64_t size, int64_t off)
{
	int64_t lim = off + UI_PG_LINE_MAX < size ? off + UI_PG_LINE_MAX : size;
	char *buf = xmalloc(BLOCK);
	int64_t res = lim;
	for (int64_t at = off; at < lim;) {
		size_t want = (size_t)(lim - at < BLOCK ? lim - at : BLOCK);
		ssize_t r = pread_full(fd, buf, want, at);
		if (r <= 0) {
			res = size;
			break;
		}
		const char *nl = memchr(buf, '\n', (size_t)r);
		if (nl) {
			res = at + (nl - buf) + 1;
			break;
		}
		at += r;
	}
	free(buf);
	return res;
}

static int part_empty(const struct ui_pgpart *p)
{
	return p->size <= 0;
}

struct ui_pgpos ui_pg_head(const struct ui_pgdoc *d)
{
	for (int i = 0; i < d->n; i++)
		if (!part_empty(&d->part[i]))
			return (struct ui_pgpos){i, 0};
	return (struct ui_pgpos){d->n, 0};
}

struct ui_pgpos ui_pg_end(const struct ui_pgdoc *d)
{
	return (struct ui_pgpos){d->n, 0};
}

int ui_pg_next(const struct ui_pgdoc *d, struct ui_pgpos *p)
{
	if (p->part >= d->n)
		return -1;
	const struct ui_pgpart *pt = &d->part[p->part];
	int64_t nx = pt->header ? 1 : file_next(pt->fd, pt->size, p->off);
	if (nx < pt->size) {
		p->off = nx;
		return 0;
	}
	for (int i = p->part + 1; i < d->n; i++)
		if (!part_empty(&d->part[i])) {
			*p = (struct ui_pgpos){i, 0};
			return 0;
		}
	return -1; /* p stays on the last line */
}

int ui_pg_prev(const struct ui_pgdoc *d, struct ui_pgpos *p)
{
	int part = p->part;
	int64_t off = p->off;
	if (part >= d->n) { /* from the end: the last line */
		part = d->n;
		off = 0;
	}
	while (off <= 0) {
		if (--part < 0)
			return -1;
		off = d->part[part].size;
		if (off > 0)
			break;
	}
	const struct ui_pgpart *pt = &d->part[part];
	p->part = part;
	p->off = pt->header ? 0 : seg_start(pt->fd, off - 1);
	return 0;
}

struct ui_pgpos ui_pg_line_start(const struct ui_pgdoc *d, struct ui_pgpos p)
{
	if (p.part >= d->n || d->part[p.part].header)
		return (struct ui_pgpos){p.part, 0};
	p.off = seg_start(d->part[p.part].fd, p.off);
	return p;
}

int ui_pg_read(const struct ui_pgdoc *d, struct ui_pgpos p, struct buf *out)
{
	if (p.part >= d->n)
		return -1;
	const struct ui_pgpart *pt = &d->part[p.part];
	if (pt->header)
		return buf_puts(out, pt->header);
	int64_t n = pt->size - p.off;
	if (n > UI_PG_LINE_MAX)
		n = UI_PG_LINE_MAX;
	if (n <= 0)
		return 0;
	char *tmp = xmalloc((size_t)n);
	ssize_t r = pread_full(pt->fd, tmp, (size_t)n, p.off);
	if (r > 0) {
		const char *nl = memchr(tmp, '\n', (size_t)r);
		buf_append(out, tmp, nl ? (size_t)(nl - tmp) : (size_t)r);
	}
	free(tmp);
	return r < 0 ? -1 : 0;
}

int64_t ui_pg_offset(const struct ui_pgdoc *d, struct ui_pgpos p)
{
	int64_t t = 0;
	for (int i = 0; i < d->n && i < p.part; i++)
		t += d->part[i].size;
	return t + (p.part < d->n ? p.off : 0);
}

/* ---- search ---------------------------------------------------------- */

void ui_pg_search_start(struct ui_pgsearch *s, const char *needle, int dir,
                        struct ui_pgpos from)
{
	free(s->needle);
	memset(s, 0, sizeof *s);
	s->needle = xstrdup(needle);
	s->dir = dir < 0 ? -1 : 1;
	s->at = from;
}

void ui_pg_search_free(struct ui_pgsearch *s)
{
	free(s->needle);
	memset(s, 0, sizeof *s);
}

/* Forward in one file part from s->at.off; returns bytes scanned. */
static int64_t scan_fwd(struct ui_pgsearch *s, const struct ui_pgpart *pt,
                        char *buf, int64_t budget)
{
	size_t nl = strlen(s->needle);
	int64_t scanned = 0;
	while (scanned < budget && s->at.off < pt->size) {
		int64_t want = pt->size - s->at.off;
		if (want > SEARCH_CHUNK)
			want = SEARCH_CHUNK;
		ssize_t r = pread_full(pt->fd, buf, (size_t)want, s->at.off);
		if (r <= 0)
			break;
		const char *hit = memmem(buf, (size_t)r, s->needle, nl);
		if (hit) {
			s->hit = (struct ui_pgpos){s->at.part,
			                           s->at.off + (hit - buf)};
			s->found = 1;
			return scanned + r;
		}
		/* keep an overlap so a match across chunks is seen */
		int64_t step = r > (ssize_t)nl ? r - (ssize_t)nl + 1 : r;
		if (s->at.off + r >= pt->size)
			step = r;
		s->at.off += step;
		scanned += step;
	}
	return scanned;
}

/* Backward: a match starting before s->at.off. */
static int64_t scan_back(struct ui_pgsearch *s, const struct ui_pgpart *pt,
                         char *buf, int64_t budget)
{
	size_t nl = strlen(s->needle);
	int64_t scanned = 0;
	while (scanned < budget && s->at.off > 0) {
		int64_t end = s->at.off + (int64_t)nl - 1;
		if (end > pt->size)
			end = pt->size;
		int64_t start =
		    s->at.off - SEARCH_CHUNK < 0 ? 0 : s->at.off - SEARCH_CHUNK;
		ssize_t r =
		    pread_full(pt->fd, buf, (size_t)(end - start), start);
		if (r <= 0)
			break;
		const char *last = NULL, *p = buf;
		while ((p = memmem(p, (size_t)(buf + r - p), s->needle, nl))) {
			if (start + (p - buf) >= s->at.off)
				break;
			last = p++;
		}
		if (last) {
			s->hit =
			    (struct ui_pgpos){s->at.part, start + (last - buf)};
			s->found = 1;
			return scanned + (s->at.off - start);
		}
		scanned += s->at.off - start;
		s->at.off = start;
	}
	return scanned;
}

int ui_pg_search_step(struct ui_pgsearch *s, const struct ui_pgdoc *d,
                      int64_t budget)
{
	if (s->done)
		return 1;
	if (!s->needle || !*s->needle) {
		s->done = 1;
		return 1;
	}
	/* a backward read spans a chunk and a needle's length */
	char *buf = xmalloc(SEARCH_CHUNK + strlen(s->needle) + 1);
	while (budget > 0 && !s->found) {
		if (s->at.part < 0 || s->at.part >= d->n) {
			if (s->dir < 0 && s->at.part >= d->n) {
				/* from the end: the last part, at its end */
				s->at.part = d->n - 1;
				s->at.off = d->n ? d->part[d->n - 1].size : 0;
				continue;
			}
			break;
		}
		const struct ui_pgpart *pt = &d->part[s->at.part];
		int64_t used = 0;
		if (!pt->header)
			used = s->dir > 0 ? scan_fwd(s, pt, buf, budget)
			                  : scan_back(s, pt, buf, budget);
		budget -= used > 0 ? used : 1;
		s->scanned += used;
		if (s->found)
			break;
		int at_edge = s->dir > 0 ? s->at.off >= pt->size || pt->header
		                         : s->at.off <= 0 || pt->header;
		if (!at_edge)
			continue; /* the budget ran out inside the part */
		s->at.part += s->dir;
		if (s->dir > 0)
			s->at.off = 0;
		else if (s->at.part >= 0)
			s->at.off = d->part[s->at.part].size;
	}
	free(buf);
	if (s->found || s->at.part < 0 || s->at.part >= d->n)
		s->done = 1;
	return s->done;
}
