/* fuzz_csv.c: libFuzzer harness for the delimited-text parser of the
 * table view (src/tui/csv.c). Any bytes (see fuzz_chunks.h) are sniffed
 * and parsed record by record from start to end: fields in range and
 * NUL-terminated, blank only for an empty line, a record's line end not
 * needing more input nor kept in a field, each record read back the
 * same once re-quoted.
 * The chunked scanner must report exactly the records (start, end,
 * fields, open quote) the parser finds, however the chunks split; the
 * rows from the end (csv_tail) must be the parser's when whole, and a
 * parse's own rows otherwise; a column's summary and sort keys must
 * agree with what the values are. The first byte's high bits choose
 * the delimiter (bit 7: the sniffed one) and how many rows the tail
 * keeps. */
#include "fuzz_chunks.h"
#include "tui/csv.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NCOLS 3 /* columns summarized and sorted */
#define BASE 7  /* where the scanned stream starts, as after a header */

static void must(int ok)
{
	if (!ok)
		abort();
}

/* A copy of s[0..n) in a block of its own, so that ASan sees a read
 * past its end. */
static char *fuzz_copy(const char *s, size_t n)
{
	char *p = malloc(n ? n : 1);
	if (!p)
		abort();
	if (n)
		memcpy(p, s, n);
	return p;
}

/* Records as their start, end, field count and open quote. */
struct recs {
	int64_t *start, *end;
	int *fields, *unterm;
	size_t n, cap;
};

static void recs_add(struct recs *l, int64_t start, int64_t end, int fields,
                     int unterm)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->start = realloc(l->start, l->cap * sizeof *l->start);
		l->end = realloc(l->end, l->cap * sizeof *l->end);
		l->fields = realloc(l->fields, l->cap * sizeof *l->fields);
		l->unterm = realloc(l->unterm, l->cap * sizeof *l->unterm);
		if (!l->start || !l->end || !l->fields || !l->unterm)
			abort();
	}
	l->start[l->n] = start;
	l->end[l->n] = end;
	l->fields[l->n] = fields;
	l->unterm[l->n++] = unterm;
}

static void recs_free(struct recs *l)
{
	free(l->start);
	free(l->end);
	free(l->fields);
	free(l->unterm);
}

/* The fields are in range, in order and NUL-terminated; blank is an
 * empty line and nothing else; the record ends at a line end or at the
 * end of the input (rest bytes from s). */
static void fuzz_check_rec(const struct csv_rec *r, const char *s, size_t used,
                           size_t rest)
{
	must(used > 0 && used <= rest);
	must(r->nfields >= 1 && r->n >= 1);
	must(r->n ==
	     (r->nfields < CSV_MAX_FIELDS ? r->nfields : CSV_MAX_FIELDS));
	size_t at = 0;
	for (int i = 0; i < r->n; i++) {
		must(r->off[i] >= at && r->flen[i] <= CSV_FIELD_MAX);
		must(r->off[i] + r->flen[i] < r->len);
		must(csv_field(r, i) == r->data + r->off[i]);
		must(csv_field(r, i)[csv_field_len(r, i)] == '\0');
		at = r->off[i] + r->flen[i] + 1;
	}
	must(r->len <= used + (size_t)r->n); /* unquoting only takes away */
	must(csv_field_len(r, r->n) == 0 && !*csv_field(r, r->n));
	/* neither cap can be reached by a record this short */
	must(!(r->flags & CSV_REC_CUT) || used > CSV_MAX_FIELDS);
	int empty = (used == 1 && s[0] == '\n') ||
	            (used == 2 && s[0] == '\r' && s[1] == '\n');
	must(r->blank == empty);
	must(s[used - 1] == '\n' || used == rest);
	must(!(r->flags & CSV_REC_UNTERMINATED) || used == rest);
}

/* A record that ends at its line end needs no more input; one that
 * does not (or whose quote is still open) waits for more when more may
 * come. */
static void fuzz_check_more(const struct csv_rec *r, const char *s, size_t used,
                            size_t rest, char delim, struct csv_rec *r2)
{
	if (s[used - 1] == '\n' && !(r->flags & CSV_REC_UNTERMINATED)) {
		must(csv_parse(s, used, delim, 0, r2) == used);
		must(r2->nfields == r->nfields && r2->flags == r->flags);
		must(r2->blank == r->blank);
		must(csv_parse(s, used - 1, delim, 0, r2) == 0);
	} else {
		must(csv_parse(s, rest, delim, 0, r2) == 0);
	}
}

/* The same fields and flags. */
static int fuzz_same_rec(const struct csv_rec *a, const struct csv_rec *b)
{
	if (a->nfields != b->nfields || a->n != b->n || a->flags != b->flags)
		return 0;
	for (int i = 0; i < a->n; i++)
		if (csv_field_len(a, i) != csv_field_len(b, i) ||
		    memcmp(csv_field(a, i), csv_field(b, i),
		           csv_field_len(a, i)))
			return 0;
	return 1;
}

/* A record's line end (\n, or \r\n outside quotes) is none of its
 * fields': without it, at the end of the input, it reads the same. */
static void fuzz_check_line_end(const struct csv_rec *r, const char *s,
                                size_t used, char delim, struct csv_rec *r2)
{
	if (r->blank || s[used - 1] != '\n' ||
	    (r->flags & CSV_REC_UNTERMINATED))
		return;
	size_t body = used - 1 - (used >= 2 && s[used - 2] == '\r');
	if (!body)
		return;
	char *b = fuzz_copy(s, body);
	must(csv_parse(b, body, delim, 1, r2) == body);
	must(fuzz_same_rec(r, r2));
	free(b);
}

/* Written back with every field quoted, the record reads the same. */
static void fuzz_check_requote(const struct csv_rec *r, char delim,
                               struct csv_rec *r2)
{
	if (r->blank || r->flags || r->nfields != r->n)
		return;
	size_t cap = 3 * (size_t)r->n + 1;
	for (int i = 0; i < r->n; i++)
		cap += 2 * csv_field_len(r, i);
	char *b = malloc(cap), *p = b;
	if (!b)
		abort();
	for (int i = 0; i < r->n; i++) {
		const char *f = csv_field(r, i);
		*p++ = '"';
		for (size_t j = 0; j < csv_field_len(r, i); j++) {
			if (f[j] == '"')
				*p++ = '"';
			*p++ = f[j];
		}
		*p++ = '"';
		*p++ = i + 1 < r->n ? delim : '\n';
	}
	size_t n = (size_t)(p - b);
	must(csv_parse(b, n, delim, 0, r2) == n);
	must(fuzz_same_rec(r, r2));
	free(b);
}

/* What the values of one column add up to. */
struct column {
	struct csv_summary sum;
	struct csv_key *keys;
	int64_t nkeys, cap, numbers, missing;
	double min, max;
};

static void column_add(struct column *c, const char *v, size_t n, int64_t off)
{
	double x;
	csv_sum_add(&c->sum, v, n);
	if (c->nkeys == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->keys = realloc(c->keys, (size_t)c->cap * sizeof *c->keys);
		if (!c->keys)
			abort();
	}
	struct csv_key *k = &c->keys[c->nkeys];
	*k = (struct csv_key){.off = off, .row = c->nkeys};
	csv_key_set(k, v, n);
	c->nkeys++;
	if (csv_missing(v, n)) {
		c->missing++;
	} else if (csv_number(v, n, &x)) {
		c->min = c->numbers && c->min < x ? c->min : x;
		c->max = c->numbers && c->max > x ? c->max : x;
		c->numbers++;
	}
}

/* The summary counts every value once, its top values are in order,
 * and its numbers lie between the smallest and the largest. */
static void fuzz_check_sum(struct column *c)
{
	struct csv_summary *s = &c->sum;
	csv_sum_finish(s);
	must(s->count + s->missing == c->nkeys && s->missing == c->missing);
	must(s->numbers == c->numbers && s->numbers <= s->count);
	must(s->distinct <= s->count && (!s->count || s->distinct >= 1));
	must(s->ntop ==
	     (s->distinct < CSV_SUM_TOP ? s->distinct : CSV_SUM_TOP));
	int64_t top = 0;
	for (int i = 0; i < s->ntop; i++) {
		must(s->top[i].n >= 1 &&
		     (!i || s->top[i].n <= s->top[i - 1].n));
		top += s->top[i].n;
	}
	must(top <= s->count);
	must(csv_sum_numeric(s) == (s->count > 0 && s->numbers == s->count));
	if (s->numbers) {
		must(s->min == c->min && s->max == c->max);
		/* the median of -inf and inf is NaN, as for numpy */
		int undefined = isinf(s->min) && isinf(s->max) && s->min < 0 &&
		                s->max > 0 && isnan(s->median);
		must(undefined || (s->min <= s->median && s->median <= s->max));
	}
	char *t = csv_sum_text(s);
	must(t && *t && t[strlen(t) - 1] == '\n');
	free(t);
	csv_sum_free(s);
}

/* Sorted, the keys are in csv_key_cmp's strict order, numbers before
 * text before missing values; reversed, all but the missing ones turn
 * round and those stay last. */
static void fuzz_check_keys(struct column *c)
{
	struct csv_key *k = c->keys;
	int64_t n = c->nkeys, nmissing = 0;
	if (n)
		qsort(k, (size_t)n, sizeof *k, csv_key_cmp);
	for (int64_t i = 0; i < n; i++) {
		nmissing += k[i].kind == 2;
		if (i + 1 == n)
			break;
		must(csv_key_cmp(&k[i], &k[i + 1]) < 0);
		must(csv_key_cmp(&k[i + 1], &k[i]) > 0);
		must(k[i].kind <= k[i + 1].kind);
		if (k[i].kind == 0 && k[i + 1].kind == 0)
			must(k[i].x <= k[i + 1].x);
		if (k[i].kind == 1 && k[i + 1].kind == 1)
			must(strcmp(k[i].s, k[i + 1].s) <= 0);
	}
	must(nmissing == c->missing);
	csv_keys_reverse(k, n);
	for (int64_t i = 0; i + 1 < n; i++) {
		int cmp = csv_key_cmp(&k[i], &k[i + 1]);
		must(i + 1 < n - nmissing ? cmp > 0 : cmp < 0);
	}
	for (int64_t i = 0; i < n; i++)
		free(k[i].s);
	free(k);
}

/* Parse s[0..n) from its start to its end, checking every record. */
static void fuzz_parse_all(const char *s, size_t n, char delim,
                           struct recs *seq, struct column *cols)
{
	struct csv_rec r = {0}, r2 = {0};
	for (size_t at = 0; at < n;) {
		size_t used = csv_parse(s + at, n - at, delim, 1, &r);
		fuzz_check_rec(&r, s + at, used, n - at);
		if (!r.blank) {
			recs_add(seq, (int64_t)at, (int64_t)(at + used),
			         r.nfields, !!(r.flags & CSV_REC_UNTERMINATED));
			for (int i = 0; i < NCOLS; i++)
				column_add(&cols[i], csv_field(&r, i),
				           csv_field_len(&r, i), (int64_t)at);
		}
		fuzz_check_requote(&r, delim, &r2);
		fuzz_check_line_end(&r, s + at, used, delim, &r2);
		fuzz_check_more(&r, s + at, used, n - at, delim, &r2);
		at += used;
	}
	csv_rec_free(&r);
	csv_rec_free(&r2);
}

static void scan_rec(void *arg, int64_t start, int64_t end, int fields,
                     int unterminated)
{
	struct recs *l = arg;
	must(start < end && fields >= 1 && (unterminated & ~1) == 0);
	must(!l->n || start >= l->end[l->n - 1]);
	recs_add(l, start, end, fields, unterminated);
}

/* The scanner over the stream in the chunks c gives, each chunk in a
 * block of its own, the stream starting at offset BASE. */
static void fuzz_scan(struct fuzz_chunks *c, char delim, struct recs *out)
{
	struct csv_scan sc;
	csv_scan_init(&sc, delim, BASE);
	c->next = 0;
	for (size_t pos = 0; pos < c->size;) {
		size_t k = fuzz_chunk_len(c, c->size - pos);
		char *chunk = fuzz_copy(c->data + pos, k);
		csv_scan_feed(&sc, chunk, k, BASE + (int64_t)pos, scan_rec,
		              out);
		free(chunk);
		pos += k;
	}
	csv_scan_end(&sc, BASE + (int64_t)c->size, scan_rec, out);
}

/* The first record's field count, as the sniffer reports it. */
static int fuzz_first_fields(const char *s, size_t n, char delim, int eof)
{
	struct csv_rec r = {0};
	size_t at = 0, used;
	int fields = 1;
	while ((used = csv_parse(s + at, n - at, delim, eof, &r))) {
		at += used;
		if (!r.blank) {
			fields = r.nfields;
			break;
		}
	}
	csv_rec_free(&r);
	return fields;
}

static void fuzz_check_sniff(const char *s, size_t n, int eof)
{
	struct csv_dialect d;
	csv_sniff(s, n, eof, &d);
	must(d.delim == ',' || d.delim == ';' || d.delim == '\t' ||
	     d.delim == '|');
	must(d.header == 0 || d.header == 1);
	must(d.columns == fuzz_first_fields(s, n, d.delim, eof));
}

/* The rows of s[0..end) from its start (end: a row's start or the
 * input's end) are the last of seq before end. */
static void fuzz_check_tail_whole(const char *s, size_t end, char delim,
                                  int max, const struct recs *seq)
{
	char *w = fuzz_copy(s, end);
	int64_t *out = malloc((size_t)max * sizeof *out);
	if (!out)
		abort();
	int cnt = csv_tail(w, end, 1, delim, 3, out, max);
	size_t want = 0;
	while (want < seq->n && seq->start[want] < (int64_t)end)
		want++;
	must(cnt >= 0 && (size_t)cnt == want);
	int k = cnt < max ? cnt : max;
	for (int i = 0; i < k; i++)
		must(out[i] == seq->start[want - (size_t)k + (size_t)i]);
	free(out);
	free(w);
}

/* The rows of w[from..n) (starts into rows); whether they look right
 * as csv_tail says: nine in ten of ncols fields, no open quote at the
 * end. */
static int fuzz_rows(const char *w, size_t n, size_t from, char delim,
                     int ncols, struct recs *rows)
{
	struct csv_rec r = {0};
	size_t used;
	int bad = 0;
	for (size_t at = from; at < n; at += used) {
		used = csv_parse(w + at, n - at, delim, 1, &r);
		must(used > 0);
		if (r.blank)
			continue;
		recs_add(rows, (int64_t)at, (int64_t)(at + used), r.nfields, 0);
		bad += r.nfields != ncols || (r.flags & CSV_REC_UNTERMINATED);
	}
	int good = rows->n && (size_t)bad * 10 <= rows->n &&
	           !(r.flags & CSV_REC_UNTERMINATED);
	csv_rec_free(&r);
	return good;
}

/* From the middle of a row (not whole), csv_tail guesses where rows
 * start: its rows must follow a line end and be what a parse from the
 * first of them finds, in order, to the window's end; they are the
 * rows from the first line start whose rows look right, if one does. */
static void fuzz_check_tail_window(const char *s, size_t n, char delim,
                                   int ncols, int max)
{
	char *w = fuzz_copy(s, n);
	int64_t *out = malloc((size_t)max * sizeof *out);
	if (!out)
		abort();
	int cnt = csv_tail(w, n, 0, delim, ncols, out, max);
	must(cnt >= 0);
	size_t k = (size_t)(cnt < max ? cnt : max);
	struct recs got = {0};
	if (k) {
		must(out[0] > 0 && (size_t)out[0] < n && w[out[0] - 1] == '\n');
		fuzz_rows(w, n, (size_t)out[0], delim, ncols, &got);
	}
	must(got.n == k);
	for (size_t i = 0; i < k; i++)
		must(out[i] == got.start[i]);
	/* the first line start whose rows look right, when there are few
	 * (csv_tail tries a bounded number on a huge window) */
	size_t lines = 0;
	for (size_t i = 0; i < n; i++)
		lines += w[i] == '\n';
	for (const char *nl = w; lines <= 64 && nl < w + n; nl++) {
		if (!(nl = memchr(nl, '\n', (size_t)(w + n - nl))))
			break;
		struct recs first = {0};
		int good =
		    fuzz_rows(w, n, (size_t)(nl + 1 - w), delim, ncols, &first);
		if (good) {
			must((size_t)cnt == first.n);
			for (size_t i = 0; i < k; i++)
				must(out[i] == first.start[first.n - k + i]);
		}
		recs_free(&first);
		if (good)
			break;
	}
	recs_free(&got);
	free(out);
	free(w);
}

static void fuzz_check_tail(const char *s, size_t n, char delim, int max,
                            const struct recs *seq, int ncols)
{
	fuzz_check_tail_whole(s, n, delim, max, seq);
	if (seq->n)
		fuzz_check_tail_whole(s, (size_t)seq->start[seq->n / 2], delim,
		                      max, seq);
	size_t from[] = {1, n / 3, n / 2, n - n / 4};
	for (size_t i = 0; i < sizeof from / sizeof *from; i++)
		if (from[i] > 0 && from[i] < n)
			fuzz_check_tail_window(s + from[i], n - from[i], delim,
			                       ncols, max);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char cand[] = {',', '\t', ';', '|'};
	struct fuzz_chunks c;
	fuzz_chunks_init(&c, data, size);
	char *s = fuzz_copy(c.data, c.size);
	size_t n = c.size;
	fuzz_check_sniff(s, n, 1);
	fuzz_check_sniff(s, n, 0);
	struct csv_dialect d;
	csv_sniff(s, n, 1, &d);
	char delim = size && (data[0] & 0x80)
	                 ? d.delim
	                 : cand[size ? data[0] >> 3 & 3 : 0];
	int max = 1 + (size ? data[0] >> 5 & 3 : 0);

	struct recs seq = {0}, scan = {0};
	struct column cols[NCOLS] = {0};
	for (int i = 0; i < NCOLS; i++)
		csv_sum_init(&cols[i].sum);
	fuzz_parse_all(s, n, delim, &seq, cols);

	fuzz_scan(&c, delim, &scan);
	must(scan.n == seq.n);
	for (size_t i = 0; i < seq.n; i++)
		must(scan.start[i] == BASE + seq.start[i] &&
		     scan.end[i] == BASE + seq.end[i] &&
		     scan.fields[i] == seq.fields[i] &&
		     scan.unterm[i] == seq.unterm[i]);

	fuzz_check_tail(s, n, delim, max, &seq, seq.n ? seq.fields[0] : 1);
	for (int i = 0; i < NCOLS; i++) {
		fuzz_check_sum(&cols[i]);
		fuzz_check_keys(&cols[i]);
	}
	recs_free(&seq);
	recs_free(&scan);
	free(s);
	return 0;
}
