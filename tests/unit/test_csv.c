/* test_csv.c: delimited text as a table (src/tui/csv.c): the RFC 4180
 * record parser (quoted delimiters, quoted newlines, "" escapes, CRLF,
 * an open quote at the end, ragged rows), the chunked scanner agreeing
 * with it across every chunk split, the sniffer (, ; \t |, header or
 * not), numbers and missing values, the rows found from the end, and a
 * column's summary against pandas' describe() (expected values made
 * with pandas 1.5.3 on the same text, written here as literals). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tui/csv.c"

/* Parse every record of s; the field counts into counts, the fields
 * joined with '|' and records with '/' into out. */
static int parse_all(const char *s, char delim, int *counts, char *out,
                     size_t outn, unsigned *flags)
{
	struct csv_rec r = {0};
	size_t n = strlen(s), at = 0, used;
	int k = 0;
	out[0] = '\0';
	*flags = 0;
	while ((used = csv_parse(s + at, n - at, delim, 1, &r))) {
		at += used;
		if (r.blank)
			continue;
		counts[k++] = r.nfields;
		*flags |= r.flags;
		for (int i = 0; i < r.n; i++) {
			strncat(out, csv_field(&r, i), outn - strlen(out) - 1);
			strncat(out, i + 1 < r.n ? "|" : "/",
			        outn - strlen(out) - 1);
		}
	}
	csv_rec_free(&r);
	return k;
}

static void test_quotes(void **state)
{
	(void)state;
	int c[8];
	char out[256];
	unsigned fl;
	const char *s = "a,b,c\n"
	                "1,\"x, y\",\"say \"\"hi\"\"\"\n"
	                "2,\"two\nlines\",\"\"\n";
	assert_int_equal(parse_all(s, ',', c, out, sizeof out, &fl), 3);
	assert_string_equal(out, "a|b|c/1|x, y|say \"hi\"/2|two\nlines|/");
	assert_int_equal(c[1], 3);
	assert_int_equal(c[2], 3);
	assert_int_equal(fl, 0);
}

static void test_crlf_and_blank(void **state)
{
	(void)state;
	int c[8];
	char out[256];
	unsigned fl;
	/* \r\n ends a record; inside quotes it is the field's own */
	const char *s = "a,b\r\n1,\"p\r\nq\"\r\n\r\n2,z\r\n";
	assert_int_equal(parse_all(s, ',', c, out, sizeof out, &fl), 3);
	assert_string_equal(out, "a|b/1|p\r\nq/2|z/");
}

static void test_ragged_and_unterminated(void **state)
{
	(void)state;
	int c[8];
	char out[256];
	unsigned fl;
	const char *s = "a,b,c\n1,2\n3,4,5,6\n7,\"open,8\n9,10,11\n";
	assert_int_equal(parse_all(s, ',', c, out, sizeof out, &fl), 4);
	assert_int_equal(c[1], 2);
	assert_int_equal(c[2], 4);
	/* the open quote takes the rest of the file as one field */
	assert_int_equal(c[3], 2);
	assert_true(fl & CSV_REC_UNTERMINATED);
	assert_string_equal(out, "a|b|c/1|2/3|4|5|6/7|open,8\n9,10,11\n/");
	/* not at the end of the input: the record waits for more */
	struct csv_rec r = {0};
	assert_int_equal(csv_parse("1,\"ab\n", 6, ',', 0, &r), 0);
	assert_int_equal(csv_parse("1,2", 3, ',', 0, &r), 0);
	assert_int_equal(csv_parse("1,2", 3, ',', 1, &r), 3);
	assert_int_equal(r.nfields, 2);
	csv_rec_free(&r);
}

struct scan_log {
	int64_t start[16], end[16];
	int fields[16], unterm[16], n;
};

static void scan_rec(void *arg, int64_t start, int64_t end, int fields,
                     int unterminated)
{
	struct scan_log *l = arg;
	assert_true(l->n < 16);
	l->start[l->n] = start;
	l->end[l->n] = end;
	l->fields[l->n] = fields;
	l->unterm[l->n++] = unterminated;
}

/* The scanner finds the parser's nrec records of s whatever the chunks
 * are; the log of the last split into l. */
static void scan_agrees(const char *s, int nrec, struct scan_log *last)
{
	size_t n = strlen(s);
	for (size_t split = 0; split <= n; split++) {
		struct scan_log l = {0};
		struct csv_scan sc;
		csv_scan_init(&sc, ',', 0);
		csv_scan_feed(&sc, s, split, 0, scan_rec, &l);
		csv_scan_feed(&sc, s + split, n - split, (int64_t)split,
		              scan_rec, &l);
		csv_scan_end(&sc, (int64_t)n, scan_rec, &l);
		assert_int_equal(l.n, nrec);
		struct csv_rec r = {0};
		size_t at = 0;
		for (int i = 0; i < l.n; i++) {
			size_t used;
			while ((used = csv_parse(s + at, n - at, ',', 1, &r)) &&
			       r.blank)
				at += used;
			assert_int_equal(l.start[i], (int64_t)at);
			assert_int_equal(l.end[i], (int64_t)(at + used));
			assert_int_equal(l.fields[i], r.nfields);
			assert_int_equal(l.unterm[i],
			                 !!(r.flags & CSV_REC_UNTERMINATED));
			at += used;
		}
		csv_rec_free(&r);
		*last = l;
	}
}

static void test_scan_agrees(void **state)
{
	(void)state;
	struct scan_log l;
	scan_agrees("h1,h2\n\"a\nb\",\"c,\"\"d\"\"\"\n\n1,2,3\r\nx,\"y\n", 4,
	            &l);
	assert_int_equal(l.fields[2], 3);
	assert_int_equal(l.unterm[3], 1);
}

/* Found by tests/fuzz/fuzz_csv.c: the scanner skipped any line of \r
 * alone ("\r\r\n", a "\r" at the end) as empty, where the parser
 * (blank: \n or \r\n only) reads a record, so the index counted fewer
 * rows than the table view walks. */
static void test_scan_cr_lines(void **state)
{
	(void)state;
	struct scan_log l;
	scan_agrees("a\n\r\r\nb\n\r\n\r", 4, &l);
	assert_int_equal(l.start[1], 2);
	assert_int_equal(l.end[1], 5);
	assert_int_equal(l.start[3], 9);
	assert_int_equal(l.end[3], 10);
	scan_agrees("\r", 1, &l);
	scan_agrees("\r\n\n", 0, &l);
}

static void test_sniff(void **state)
{
	(void)state;
	struct csv_dialect d;
	const char *comma =
	    "name,age,city\nann,31,\"Paris; France\"\nbob,42,Oslo\n";
	csv_sniff(comma, strlen(comma), 1, &d);
	assert_int_equal(d.delim, ',');
	assert_true(d.header);
	assert_int_equal(d.columns, 3);
	const char *semi = "a;b\n1,5;2,5\n3,0;4,0\n";
	csv_sniff(semi, strlen(semi), 1, &d);
	assert_int_equal(d.delim, ';');
	assert_int_equal(d.columns, 2);
	const char *tab = "x\ty\tz\n1\t2\t3\n4\t5\t6\n";
	csv_sniff(tab, strlen(tab), 1, &d);
	assert_int_equal(d.delim, '\t');
	assert_true(d.header);
	const char *pipe = "1|2.5|a\n3|4|b\n5|6|c\n";
	csv_sniff(pipe, strlen(pipe), 1, &d);
	assert_int_equal(d.delim, '|');
	assert_false(d.header); /* numbers in the first row */
	/* a sample cut in the middle of a record still sniffs */
	const char *cut = "k|v\n1|2\n3|4\n5|\"long";
	csv_sniff(cut, strlen(cut), 0, &d);
	assert_int_equal(d.delim, '|');
	assert_true(d.header);
}

static void test_numbers(void **state)
{
	(void)state;
	double v;
	assert_true(csv_number("42", 2, &v));
	assert_true(v == 42);
	assert_true(csv_number(" -2.25 ", 7, &v));
	assert_true(v == -2.25);
	assert_true(csv_number("1e2", 3, &v));
	assert_true(v == 100);
	assert_true(csv_number(".5", 2, &v) && v == 0.5);
	assert_true(csv_number("+3.", 3, &v) && v == 3);
	assert_false(csv_number("1,5", 3, &v));
	assert_false(csv_number("0x10", 4, &v));
	assert_false(csv_number("1e", 2, &v));
	assert_false(csv_number("-", 1, &v));
	assert_false(csv_number("", 0, &v));
	assert_false(csv_number("nan", 3, &v));
	assert_false(csv_number("12abc", 5, &v));
	assert_true(csv_missing("", 0));
	assert_true(csv_missing("NA", 2));
	assert_true(csv_missing("NaN", 3));
	assert_true(csv_missing("null", 4));
	assert_false(csv_missing("0", 1));
	assert_false(csv_missing("na", 2));
}

/* The summary of column col of a CSV text. */
static void summarize(const char *s, char delim, int col,
                      struct csv_summary *sum)
{
	struct csv_rec r = {0};
	size_t n = strlen(s), at = 0, used;
	int header = 1;
	csv_sum_init(sum);
	while ((used = csv_parse(s + at, n - at, delim, 1, &r))) {
		at += used;
		if (r.blank || header-- > 0)
			continue;
		csv_sum_add(sum, csv_field(&r, col), csv_field_len(&r, col));
	}
	csv_rec_free(&r);
	csv_sum_finish(sum);
}

static void test_summary_pandas(void **state)
{
	(void)state;
	/* pandas 1.5.3: pd.read_csv(io.StringIO(data))["value"].describe()
	 * count 7.0, mean 22.964285714285715, min -2.25, 50% 7.0, max
	 * 100.0; isna().sum() 2, nunique() 7 */
	const char *data = "id,value,label\n1,3.5,a\n2,,b\n3,10,a\n4,-2.25,c\n"
	                   "5,7,a\n6,NA,b\n7,1e2,c\n8,0.5,a\n9,42,\n";
	struct csv_summary s;
	summarize(data, ',', 1, &s);
	assert_true(csv_sum_numeric(&s));
	assert_int_equal(s.count, 7);
	assert_int_equal(s.missing, 2);
	assert_int_equal(s.distinct, 7);
	assert_true(s.min == -2.25);
	assert_true(s.median == 7.0);
	assert_true(s.max == 100.0);
	assert_true(fabs(s.mean - 22.964285714285715) < 1e-12);
	char *text = csv_sum_text(&s);
	assert_non_null(strstr(text, "type      number\n"));
	assert_non_null(strstr(text, "median    7\n"));
	assert_non_null(strstr(text, "min       -2.25\n"));
	free(text);
	csv_sum_free(&s);
	/* an even count: 50% is the mean of the middle two. pandas:
	 * pd.read_csv(..., sep=";")["x"].describe(): count 6.0, mean
	 * 3.25, min -1.0, 50% 2.5, max 10.5 */
	summarize("x;y\n4;q\n1;r\n3;q\n2;s\n10.5;q\n-1;r\n", ';', 0, &s);
	assert_int_equal(s.count, 6);
	assert_true(s.median == 2.5);
	assert_true(s.min == -1.0 && s.max == 10.5 && s.mean == 3.25);
	csv_sum_free(&s);
	/* text: value_counts() a 4, b 2, c 2; isna().sum() 1, nunique 3 */
	summarize(data, ',', 2, &s);
	assert_false(csv_sum_numeric(&s));
	assert_int_equal(s.count, 8);
	assert_int_equal(s.missing, 1);
	assert_int_equal(s.distinct, 3);
	assert_int_equal(s.ntop, 3);
	assert_string_equal(s.top[0].value, "a");
	assert_int_equal(s.top[0].n, 4);
	assert_string_equal(s.top[1].value, "b");
	assert_int_equal(s.top[1].n, 2);
	csv_sum_free(&s);
	/* found by tests/fuzz/fuzz_csv.c: the middle two summed overflowed
	 * to inf, a median above the max (pandas' 50%: 1.25e308) */
	summarize("x\n1e308\n1.5e308\n", ',', 0, &s);
	assert_true(s.max == 1.5e308);
	assert_true(s.median == 1.25e308);
	csv_sum_free(&s);
	summarize("x\n-1e308\n-1.5e308\n", ',', 0, &s);
	assert_true(s.median == -1.25e308);
	csv_sum_free(&s);
}

/* Rows from the end: a window that starts inside a quoted field must
 * not be parsed as if it did not. */
static void test_tail(void **state)
{
	(void)state;
	const char *s = "1,\"x\ny\nz\",a\n2,\"p\nq\",b\n3,plain,c\n4,last,d\n";
	size_t n = strlen(s);
	int64_t out[8];
	/* whole: every row */
	assert_int_equal(csv_tail(s, n, 1, ',', 3, out, 8), 4);
	assert_int_equal(out[0], 0);
	/* a window from inside the first quoted field: "y\nz\",a\n..."
	 * would be a ragged row and an open quote; the realigned start is
	 * row 2's */
	const char *w = strchr(s, '\n') + 1;
	int k = csv_tail(w, n - (size_t)(w - s), 0, ',', 3, out, 8);
	assert_int_equal(k, 3);
	assert_string_equal(w + out[0], strstr(s, "2,\"p"));
	assert_string_equal(w + out[2], strstr(s, "4,last"));
	/* only the last two asked for: the oldest first */
	k = csv_tail(s, n, 1, ',', 3, out, 2);
	assert_int_equal(k, 4);
	assert_string_equal(s + out[0], strstr(s, "3,plain"));
	assert_string_equal(s + out[1], strstr(s, "4,last"));
}

static void test_sort_keys(void **state)
{
	(void)state;
	const char *v[] = {"10", "b", "", "-3", "a", "2.5", "NA"};
	struct csv_key k[7];
	for (int i = 0; i < 7; i++) {
		k[i] = (struct csv_key){.off = i, .row = i};
		csv_key_set(&k[i], v[i], strlen(v[i]));
	}
	qsort(k, 7, sizeof *k, csv_key_cmp);
	int64_t asc[] = {3, 5, 0, 4, 1, 2, 6};
	for (int i = 0; i < 7; i++)
		assert_int_equal(k[i].row, asc[i]);
	csv_keys_reverse(k, 7);
	int64_t desc[] = {1, 4, 0, 5, 3, 2, 6}; /* missing stay last */
	for (int i = 0; i < 7; i++)
		assert_int_equal(k[i].row, desc[i]);
	for (int i = 0; i < 7; i++)
		free(k[i].s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quotes),
	    cmocka_unit_test(test_crlf_and_blank),
	    cmocka_unit_test(test_ragged_and_unterminated),
	    cmocka_unit_test(test_scan_agrees),
	    cmocka_unit_test(test_scan_cr_lines),
	    cmocka_unit_test(test_sniff),
	    cmocka_unit_test(test_numbers),
	    cmocka_unit_test(test_summary_pandas),
	    cmocka_unit_test(test_tail),
	    cmocka_unit_test(test_sort_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
