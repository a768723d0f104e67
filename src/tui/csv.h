/* csv.h: delimited text as a table, without a screen (csv.c): the
 * dialect sniffed from a sample, the RFC 4180 record parser (quoted
 * fields hold delimiters, newlines and "" for a quote), a scanner that
 * finds record boundaries in a stream of chunks for an index, numbers
 * and missing values as pandas reads them, and a column's summary.
 * The table view (tableview.c) draws what these give; the unit tests
 * (tests/unit/test_csv.c) check them alone. */
#ifndef ASSAY_TUI_CSV_H
#define ASSAY_TUI_CSV_H

#include <stddef.h>
#include <stdint.h>

#define CSV_MAX_FIELDS 4096      /* fields of a record kept (all counted) */
#define CSV_FIELD_MAX (16 << 10) /* bytes of a field kept (the rest cut) */

/* What a file's sample says it is. */
struct csv_dialect {
	char delim;  /* , ; \t or | */
	int header;  /* the first record names the columns */
	int columns; /* fields of the first record */
};

/* Sniff the delimiter among , ; \t | (the one giving the most records
 * with the same field count above one) and whether the first record is
 * a header, from a sample that starts at the file's start; eof: the
 * sample is the whole file. */
void csv_sniff(const char *s, size_t n, int eof, struct csv_dialect *d);

enum {
	CSV_REC_UNTERMINATED = 1, /* a quoted field runs to the end */
	CSV_REC_CUT = 2,          /* a field or the field count was cut */
};

/* One parsed record: field i is data + off[i], len[i] bytes, unquoted
 * and NUL-terminated. nfields counts every field, even those past
 * CSV_MAX_FIELDS, which are not kept (n of them are). */
struct csv_rec {
	char *data;
	size_t len, cap;
	size_t *off, *flen;
	int n, ncap;
	int nfields;
	unsigned flags; /* CSV_REC_* */
	int blank;      /* an empty line: no record (skipped, as pandas does) */
};

void csv_rec_free(struct csv_rec *r);
static inline const char *csv_field(const struct csv_rec *r, int i)
{
	return i < r->n ? r->data + r->off[i] : "";
}
static inline size_t csv_field_len(const struct csv_rec *r, int i)
{
	return i < r->n ? r->flen[i] : 0;
}

/* Parse the record that starts at s: the bytes it takes with its line
 * end (\n or \r\n; a newline inside quotes is the field's), or 0 when
 * it does not end within n bytes and more may come (!eof). At eof a
 * record without a line end ends there (an open quote: UNTERMINATED). */
size_t csv_parse(const char *s, size_t n, char delim, int eof,
                 struct csv_rec *r);

/* The record boundaries of a stream read in chunks, for an index: the
 * state between chunks, and each record's start and field count. */
struct csv_scan {
	char delim;
	int state;
	int fields;        /* of the record under way */
	int empty;         /* nothing but a line end so far */
	int64_t rec_start; /* where it started */
};
typedef void (*csv_scan_fn)(void *arg, int64_t start, int64_t end, int fields,
                            int unterminated);

void csv_scan_init(struct csv_scan *sc, char delim, int64_t at);
/* The chunk s[0..n), whose first byte is at offset at of the stream:
 * fn for each record that ends in it (empty lines are not records). */
void csv_scan_feed(struct csv_scan *sc, const char *s, size_t n, int64_t at,
                   csv_scan_fn fn, void *arg);
/* The stream ended at offset at: fn for a last record without a line
 * end (unterminated if a quote is open). */
void csv_scan_end(struct csv_scan *sc, int64_t at, csv_scan_fn fn, void *arg);

/* The starts of the last rows of s[0..n), which ends where a row ends
 * (a file's end, or the start of a known row), for finding rows
 * backwards without an index: parsed from s's start when whole (s
 * starts a row), else from the first line start that gives rows of
 * ncols fields (nine in ten) and no open quote at the end (one inside
 * a quoted field would not). The last max starts (offsets in s) go to
 * out, oldest first; returns how many rows there are from there. */
int csv_tail(const char *s, size_t n, int whole, char delim, int ncols,
             int64_t *out, int max);

/* s[0..n) as a number (decimal, optional sign, fraction, exponent,
 * blanks around): 1 and *v; else 0. */
int csv_number(const char *s, size_t n, double *v);
/* pandas' default missing values: "", NA, N/A, NaN, null, None... */
int csv_missing(const char *s, size_t n);

/* A column's summary (pandas' describe() for numbers: count, mean,
 * min, 50%, max; for text the most frequent values). Values are added
 * one by one; csv_sum_finish computes the rest. */
#define CSV_SUM_TOP 3
#define CSV_SUM_DISTINCT_MAX (1 << 20) /* distinct values tracked */

struct csv_sum_slot;

struct csv_summary {
	int64_t count;   /* values that are not missing */
	int64_t missing; /* empty, NA, NaN... */
	int64_t numbers; /* of count, those that are numbers */
	int64_t distinct;
	int distinct_capped; /* more distinct values than tracked */
	double min, max, mean, median;
	struct {
		char *value;
		int64_t n;
	} top[CSV_SUM_TOP];
	int ntop;
	/* private */
	double *num;
	size_t nnum, numcap;
	struct csv_sum_slot *slot;
	size_t nslot, used;
};

void csv_sum_init(struct csv_summary *s);
void csv_sum_add(struct csv_summary *s, const char *v, size_t n);
void csv_sum_finish(struct csv_summary *s);
void csv_sum_free(struct csv_summary *s);
/* The column is numbers (every value that is not missing). */
int csv_sum_numeric(const struct csv_summary *s);

/* The summary as lines of text ("type      number", "min       2.5"...,
 * the top values for text), each ending in \n; values are the file's
 * own bytes: they must go through the sanitizer to be shown. */
char *csv_sum_text(const struct csv_summary *s);

/* A row's sort key: where it is, its number, its field's value. */
struct csv_key {
	int64_t off, row;
	int kind; /* 0 a number, 1 text, 2 missing */
	double x;
	char *s; /* text: the value's first 256 bytes */
};

void csv_key_set(struct csv_key *k, const char *v, size_t n);
/* For qsort: numbers (by value), then text (bytewise), then missing
 * values, the row's number breaking ties. */
int csv_key_cmp(const void *a, const void *b);
/* Descending: the order of all but the missing values reversed. */
void csv_keys_reverse(struct csv_key *k, int64_t n);

#endif
