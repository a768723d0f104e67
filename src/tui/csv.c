/* csv.c: delimited text as a table, without a screen (see csv.h): the
 * sniffer, the RFC 4180 record parser and its chunked twin for indexes,
 * numbers and missing values as pandas reads them, and a column's
 * summary. Pure: no curses, no loop, no files. */
#include "tui/csv.h"

#include "assay/buf.h"
#include "assay/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* where a parse or a scan is inside a record */
enum { S_START, S_UNQ, S_Q, S_QQ };

/* ---- one record ---------------------------------------------------- */

void csv_rec_free(struct csv_rec *r)
{
	free(r->data);
	free(r->off);
	free(r->flen);
	memset(r, 0, sizeof *r);
}

/* A byte of the field under way, while the caps allow. */
static void rec_put(struct csv_rec *r, char c)
{
	if (r->nfields > r->n) /* a field past CSV_MAX_FIELDS */
		return;
	if (r->len - r->off[r->n - 1] >= CSV_FIELD_MAX) {
		r->flags |= CSV_REC_CUT;
		return;
	}
	if (r->len + 2 > r->cap) {
		r->cap = r->cap ? 2 * r->cap : 256;
		r->data = xrealloc(r->data, r->cap);
	}
	r->data[r->len++] = c;
}

/* A new field starts. */
static void rec_begin(struct csv_rec *r)
{
	r->nfields++;
	if (r->n >= CSV_MAX_FIELDS) {
		r->flags |= CSV_REC_CUT;
		return;
	}
	if (r->n == r->ncap) {
		r->ncap = r->ncap ? 2 * r->ncap : 16;
		r->off = xrealloc(r->off, (size_t)r->ncap * sizeof *r->off);
		r->flen = xrealloc(r->flen, (size_t)r->ncap * sizeof *r->flen);
	}
	r->off[r->n++] = r->len;
}

/* The field under way ends: its length, and a NUL after it. */
static void rec_end(struct csv_rec *r)
{
	if (r->nfields > r->n)
		return;
	if (r->len + 1 > r->cap) {
		r->cap = r->cap ? 2 * r->cap : 256;
		r->data = xrealloc(r->data, r->cap);
	}
	r->flen[r->n - 1] = r->len - r->off[r->n - 1];
	r->data[r->len++] = '\0';
}

size_t csv_parse(const char *s, size_t n, char delim, int eof,
                 struct csv_rec *r)
{
	r->len = 0;
	r->n = 0;
	r->nfields = 0;
	r->flags = 0;
	r->blank = 0;
	rec_begin(r);
	int st = S_START;
	size_t i = 0;
	while (i < n) {
		char c = s[i++];
		if (st == S_Q) {
			if (c == '"')
				st = S_QQ;
			else
				rec_put(r, c);
		} else if (c == '\n') {
			/* \r\n: the \r, outside quotes, is the line end's */
			if (i >= 2 && s[i - 2] == '\r' && r->nfields == r->n &&
			    r->len > r->off[r->n - 1] &&
			    r->data[r->len - 1] == '\r')
				r->len--;
			rec_end(r);
			size_t body = i - 1 - (i >= 2 && s[i - 2] == '\r');
			r->blank = body == 0;
			return i;
		} else if (c == delim) {
			rec_end(r);
			rec_begin(r);
			st = S_START;
		} else if (c == '"' && st == S_START) {
			st = S_Q;
		} else {
			/* "" in quotes is a quote; after a closing quote the
			 * rest of the field is taken as it is (as Python's
			 * csv does); a quote inside a bare field is itself */
			rec_put(r, c);
			st = st == S_QQ && c == '"' ? S_Q : S_UNQ;
		}
	}
	if (!eof || n == 0)
		return 0;
	if (st == S_Q)
		r->flags |= CSV_REC_UNTERMINATED;
	rec_end(r);
	return n;
}

/* ---- record boundaries in chunks ---------------------------------- */

void csv_scan_init(struct csv_scan *sc, char delim, int64_t at)
{
	memset(sc, 0, sizeof *sc);
	sc->delim = delim;
	sc->state = S_START;
	sc->fields = 1;
	sc->empty = 1;
	sc->rec_start = at;
}

void csv_scan_feed(struct csv_scan *sc, const char *s, size_t n, int64_t at,
                   csv_scan_fn fn, void *arg)
{
	const char *p = s, *e = s + n;
	const char d = sc->delim;
	int st = sc->state;
	while (p < e) {
		if (st == S_Q) { /* only a quote can end it */
			const char *q = memchr(p, '"', (size_t)(e - p));
			sc->empty = 0;
			if (!q) {
				p = e;
				break;
			}
			p = q + 1;
			st = S_QQ;
			continue;
		}
		char c = *p++;
		if (c == '\n') {
			int64_t end = at + (p - s);
			if (!sc->empty)
				fn(arg, sc->rec_start, end, sc->fields, 0);
			sc->rec_start = end;
			sc->fields = 1;
			sc->empty = 1;
			st = S_START;
			continue;
		}
		/* an empty line is \n or \r\n (csv_parse's blank): a first
		 * \r may be the line end's (empty 2), not a second one */
		sc->empty = c == '\r' && sc->empty == 1 ? 2 : 0;
		if (c == d) {
			sc->fields++;
			st = S_START;
		} else if (c == '"') {
			if (st == S_START || st == S_QQ)
				st = S_Q; /* opening, or "" inside quotes */
		} else {
			st = S_UNQ;
		}
	}
	sc->state = st;
}

void csv_scan_end(struct csv_scan *sc, int64_t at, csv_scan_fn fn, void *arg)
{
	/* a lone \r at the end is a record, as csv_parse reads it */
	if (at > sc->rec_start && sc->empty != 1)
		fn(arg, sc->rec_start, at, sc->fields, sc->state == S_Q);
	sc->rec_start = at;
	sc->fields = 1;
	sc->empty = 1;
	sc->state = S_START;
}

/* ---- rows from the end --------------------------------------------- */

/* The rows of s[from..n) (see csv_tail); *good: they look right. */
static int tail_from(const char *s, size_t n, size_t from, char delim,
                     int ncols, int64_t *out, int max, int *good)
{
	struct csv_rec r = {0};
	int cnt = 0, bad = 0;
	size_t used;
	for (size_t at = from; at < n; at += used) {
		if (!(used = csv_parse(s + at, n - at, delim, 1, &r)))
			break;
		if (r.blank)
			continue;
		out[cnt % max] = (int64_t)at;
		cnt++;
		bad += r.nfields != ncols || (r.flags & CSV_REC_UNTERMINATED);
	}
	*good = cnt && bad * 10 <= cnt && !(r.flags & CSV_REC_UNTERMINATED);
	csv_rec_free(&r);
	if (cnt > max) { /* oldest first */
		int64_t *tmp = xmalloc((size_t)max * sizeof *tmp);
		for (int i = 0; i < max; i++)
			tmp[i] = out[(cnt + i) % max];
		memcpy(out, tmp, (size_t)max * sizeof *tmp);
		free(tmp);
	}
	return cnt;
}

int csv_tail(const char *s, size_t n, int whole, char delim, int ncols,
             int64_t *out, int max)
{
	int good, first = -1;
	if (whole)
		return tail_from(s, n, 0, delim, ncols, out, max, &good);
	const char *p = s, *e = s + n;
	for (int tries = 0; tries < 64 && p < e; tries++) {
		if (!(p = memchr(p, '\n', (size_t)(e - p))))
			break;
		size_t from = (size_t)(++p - s);
		int cnt = tail_from(s, n, from, delim, ncols, out, max, &good);
		if (good)
			return cnt;
		if (first < 0)
			first = (int)from;
	}
	/* nothing looked right: the rows after the first line end */
	return first < 0 ? 0
	                 : tail_from(s, n, (size_t)first, delim, ncols, out,
	                             max, &good);
}

/* ---- numbers and missing values ----------------------------------- */

int csv_number(const char *s, size_t n, double *v)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!n || n > 64)
		return 0;
	size_t i = 0, digits = 0;
	if (s[i] == '+' || s[i] == '-')
		i++;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			digits++;
	if (!digits)
		return 0;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		size_t e = ++i;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			e = ++i;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == e)
			return 0;
	}
	if (i != n)
		return 0;
	char tmp[72];
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	*v = strtod(tmp, NULL);
	return 1;
}

int csv_missing(const char *s, size_t n)
{
	/* pandas.read_csv's default na_values (pandas 1.5) */
	static const char *const na[] = {
	    "#N/A", "#N/A N/A", "#NA",     "-1.#IND", "-1.#QNAN", "-NaN",
	    "-nan", "1.#IND",   "1.#QNAN", "<NA>",    "N/A",      "NA",
	    "NULL", "NaN",      "None",    "n/a",     "nan",      "null",
	};
	if (!n)
		return 1;
	for (size_t i = 0; i < sizeof na / sizeof *na; i++)
		if (strlen(na[i]) == n && !memcmp(na[i], s, n))
			return 1;
	return 0;
}

/* ---- sniffing ------------------------------------------------------ */

#define SNIFF_RECORDS 40

/* Parse up to SNIFF_RECORDS records of the sample with delim; the
 * field count most of them have, and how many have it. */
static int sniff_mode(const char *s, size_t n, int eof, char delim, int *freq)
{
	struct csv_rec r = {0};
	int counts[SNIFF_RECORDS], k = 0;
	size_t at = 0;
	while (k < SNIFF_RECORDS && at < n) {
		size_t used = csv_parse(s + at, n - at, delim, eof, &r);
		if (!used)
			break;
		at += used;
		if (!r.blank)
			counts[k++] = r.nfields;
	}
	csv_rec_free(&r);
	int best = 1, bestf = 0;
	for (int i = 0; i < k; i++) {
		int f = 0;
		for (int j = 0; j < k; j++)
			f += counts[j] == counts[i];
		if (f > bestf || (f == bestf && counts[i] > best)) {
			best = counts[i];
			bestf = f;
		}
	}
	*freq = bestf;
	return best;
}

/* Does the first record name the columns? A column whose first value
 * is text over numbers below says so; else a first record without a
 * number, empty or repeated name (pandas' default: a header). */
static int sniff_header(const char *s, size_t n, int eof, char delim)
{
	struct csv_rec first = {0}, r = {0};
	size_t at = 0, used;
	int header = 1, strong = 0;
	while ((used = csv_parse(s + at, n - at, delim, eof, &first)) &&
	       first.blank)
		at += used;
	if (!used) {
		header = 0;
		goto out;
	}
	at += used;
	int *numeric = xcalloc((size_t)first.n + 1, sizeof *numeric);
	for (int k = 0; k < SNIFF_RECORDS && at < n; k++) {
		used = csv_parse(s + at, n - at, delim, eof, &r);
		if (!used)
			break;
		at += used;
		for (int i = 0; i < first.n && i < r.n; i++) {
			double v;
			const char *f = csv_field(&r, i);
			size_t fl = csv_field_len(&r, i);
			if (csv_missing(f, fl))
				continue;
			if (numeric[i] >= 0)
				numeric[i] = csv_number(f, fl, &v) ? 1 : -1;
		}
	}
	for (int i = 0; i < first.n; i++) {
		double v;
		const char *f = csv_field(&first, i);
		size_t fl = csv_field_len(&first, i);
		int num = csv_number(f, fl, &v);
		if (num || !fl)
			header = 0;
		if (!num && !csv_missing(f, fl) && numeric[i] == 1)
			strong = 1;
		for (int j = 0; j < i; j++)
			if (fl == csv_field_len(&first, j) &&
			    !memcmp(f, csv_field(&first, j), fl))
				header = 0;
	}
	free(numeric);
	header = header || strong;
out:
	csv_rec_free(&first);
	csv_rec_free(&r);
	return header;
}

void csv_sniff(const char *s, size_t n, int eof, struct csv_dialect *d)
{
	static const char cand[] = {',', '\t', ';', '|'};
	int best = 0, bestf = 0;
	for (int i = 0; i < 4; i++) {
		int f, mode = sniff_mode(s, n, eof, cand[i], &f);
		if (mode > 1 && f > bestf) {
			best = i;
			bestf = f;
		}
	}
	d->delim = cand[best];
	d->header = sniff_header(s, n, eof, d->delim);
	struct csv_rec r = {0};
	size_t at = 0, used;
	d->columns = 1;
	while ((used = csv_parse(s + at, n - at, d->delim, eof, &r))) {
		at += used;
		if (!r.blank) {
			d->columns = r.nfields;
			break;
		}
	}
	csv_rec_free(&r);
}

/* ---- a column's summary ------------------------------------------- */

struct csv_sum_slot {
	uint64_t h;
	char *v; /* NULL: free */
	size_t n;
	int64_t count;
};

void csv_sum_init(struct csv_summary *s)
{
	memset(s, 0, sizeof *s);
}

static uint64_t sum_hash(const char *v, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)v[i]) * 1099511628211ull;
	return h;
}

/* A table twice as large, the values where they now go. */
static void sum_grow(struct csv_summary *s)
{
	size_t nn = s->nslot ? 2 * s->nslot : 256;
	struct csv_sum_slot *t = xcalloc(nn, sizeof *t);
	for (size_t i = 0; i < s->nslot; i++) {
		if (!s->slot[i].v)
			continue;
		size_t j = s->slot[i].h & (nn - 1);
		while (t[j].v)
			j = (j + 1) & (nn - 1);
		t[j] = s->slot[i];
	}
	free(s->slot);
	s->slot = t;
	s->nslot = nn;
}

/* Count one more of v among the distinct values. */
static void sum_count(struct csv_summary *s, const char *v, size_t n)
{
	if (2 * (s->used + 1) > s->nslot) {
		if (s->used >= CSV_SUM_DISTINCT_MAX) {
			s->distinct_capped = 1;
			goto find_only;
		}
		sum_grow(s);
	}
find_only:;
	uint64_t h = sum_hash(v, n);
	size_t j = h & (s->nslot - 1);
	for (; s->slot[j].v; j = (j + 1) & (s->nslot - 1))
		if (s->slot[j].h == h && s->slot[j].n == n &&
		    !memcmp(s->slot[j].v, v, n)) {
			s->slot[j].count++;
			return;
		}
	if (s->distinct_capped)
		return;
	s->slot[j] = (struct csv_sum_slot){h, xstrndup(v, n), n, 1};
	s->used++;
}

void csv_sum_add(struct csv_summary *s, const char *v, size_t n)
{
	if (csv_missing(v, n)) {
		s->missing++;
		return;
	}
	s->count++;
	double x;
	if (csv_number(v, n, &x)) {
		if (s->nnum == s->numcap) {
			s->numcap = s->numcap ? 2 * s->numcap : 64;
			s->num = xrealloc(s->num, s->numcap * sizeof *s->num);
		}
		s->num[s->nnum++] = x;
		s->numbers++;
	}
	sum_count(s, v, n);
}

static int sum_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Slot a ranks before slot b among the top values. */
static int sum_before(const struct csv_sum_slot *a,
                      const struct csv_sum_slot *b)
{
	if (a->count != b->count)
		return a->count > b->count;
	size_t n = a->n < b->n ? a->n : b->n;
	int c = memcmp(a->v, b->v, n);
	return c ? c < 0 : a->n < b->n;
}

void csv_sum_finish(struct csv_summary *s)
{
	s->distinct = (int64_t)s->used;
	if (s->nnum) {
		qsort(s->num, s->nnum, sizeof *s->num, sum_cmp_double);
		double sum = 0;
		for (size_t i = 0; i < s->nnum; i++)
			sum += s->num[i];
		s->mean = sum / (double)s->nnum;
		s->min = s->num[0];
		s->max = s->num[s->nnum - 1];
		size_t m = s->nnum / 2;
		/* halves first: (a + b) / 2 overflows to inf for two
		 * numbers near DBL_MAX, a median above the max */
		s->median =
		    s->nnum % 2 ? s->num[m] : s->num[m - 1] / 2 + s->num[m] / 2;
	} else {
		s->min = s->max = s->mean = s->median = NAN;
	}
	const struct csv_sum_slot *top[CSV_SUM_TOP] = {0};
	int nt = 0;
	for (size_t i = 0; i < s->nslot; i++) {
		const struct csv_sum_slot *c = &s->slot[i];
		if (!c->v)
			continue;
		int at = nt;
		while (at > 0 && sum_before(c, top[at - 1]))
			at--;
		if (at >= CSV_SUM_TOP)
			continue;
		int last = nt < CSV_SUM_TOP ? nt : CSV_SUM_TOP - 1;
		memmove(&top[at + 1], &top[at],
		        (size_t)(last - at) * sizeof *top);
		top[at] = c;
		if (nt < CSV_SUM_TOP)
			nt++;
	}
	for (int i = 0; i < nt; i++) {
		s->top[i].value = xstrndup(top[i]->v, top[i]->n);
		s->top[i].n = top[i]->count;
	}
	s->ntop = nt;
}

int csv_sum_numeric(const struct csv_summary *s)
{
	return s->count > 0 && s->numbers == s->count;
}

void csv_sum_free(struct csv_summary *s)
{
	for (size_t i = 0; i < s->nslot; i++)
		free(s->slot[i].v);
	for (int i = 0; i < s->ntop; i++)
		free(s->top[i].value);
	free(s->slot);
	free(s->num);
	memset(s, 0, sizeof *s);
}

char *csv_sum_text(const struct csv_summary *s)
{
	struct buf b;
	int num = csv_sum_numeric(s);
	buf_init(&b, 0);
	buf_printf(&b, "type      %s\n",
	           num        ? "number"
	           : s->count ? "text"
	                      : "empty");
	buf_printf(&b, "count     %lld\nmissing   %lld\ndistinct  %lld%s\n",
	           (long long)s->count, (long long)s->missing,
	           (long long)s->distinct, s->distinct_capped ? "+" : "");
	if (num)
		buf_printf(&b,
		           "min       %.10g\nmedian    %.10g\nmax       "
		           "%.10g\nmean      %.10g\n",
		           s->min, s->median, s->max, s->mean);
	for (int i = 0; !num && i < s->ntop; i++)
		buf_printf(&b, "%s %.40s  x%lld\n",
		           i ? "         " : "top      ", s->top[i].value,
		           (long long)s->top[i].n);
	return buf_detach(&b);
}

/* ---- sort keys ------------------------------------------------------ */

void csv_key_set(struct csv_key *k, const char *v, size_t n)
{
	k->kind = 2;
	k->s = NULL;
	if (csv_missing(v, n))
		return;
	k->kind = csv_number(v, n, &k->x) ? 0 : 1;
	if (k->kind == 1)
		k->s = xstrndup(v, n < 256 ? n : 256);
}

int csv_key_cmp(const void *a, const void *b)
{
	const struct csv_key *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	int c = x->kind == 0   ? (x->x > y->x) - (x->x < y->x)
	        : x->kind == 1 ? strcmp(x->s, y->s)
	                       : 0;
	return c ? c : (x->row > y->row) - (x->row < y->row);
}

void csv_keys_reverse(struct csv_key *k, int64_t n)
{
	while (n > 0 && k[n - 1].kind == 2)
		n--;
	for (int64_t i = 0; i < n / 2; i++) {
		struct csv_key t = k[i];
		k[i] = k[n - 1 - i];
		k[n - 1 - i] = t;
	}
}
