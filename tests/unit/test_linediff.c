/* test_linediff.c: the hunks of src/agent/linediff.c. Fixed cases
 * against what GNU diff -u prints for them; then random pairs of texts
 * where applying the hunks to the old text must give the new one, and
 * the lines added and removed must be the fewest there are (the
 * longest common subsequence, by dynamic programming). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "agent/agent_internal.h"
#include "assay/util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void diff_is(const char *a, const char *b, const char *hunks, int added,
                    int removed)
{
	struct linediff d;
	linediff(a, strlen(a), b, strlen(b), 1 << 20, &d);
	if (strcmp(buf_str(&d.hunks), hunks))
		fprintf(stderr, "got:\n%s\nwanted:\n%s\n", buf_str(&d.hunks),
		        hunks);
	assert_string_equal(buf_str(&d.hunks), hunks);
	assert_int_equal(d.added, added);
	assert_int_equal(d.removed, removed);
	assert_false(d.cut);
	buf_free(&d.hunks);
}

static void test_fixed(void **state)
{
	(void)state;
	diff_is("", "", "", 0, 0);
	diff_is("a\nb\n", "a\nb\n", "", 0, 0);
	diff_is("", "x\ny\n", "@@ -0,0 +1,2 @@\n+x\n+y\n", 2, 0);
	diff_is("x\n", "", "@@ -1 +0,0 @@\n-x\n", 0, 1);
	diff_is("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
	        "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n", 1, 1);
	/* two changes 7 lines apart: two hunks (diff -u merges up to 6) */
	diff_is("a\n1\n2\n3\n4\n5\n6\n7\nb\n", "A\n1\n2\n3\n4\n5\n6\n7\nB\n",
	        "@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n"
	        "@@ -6,4 +6,4 @@\n 5\n 6\n 7\n-b\n+B\n",
	        2, 2);
	/* 6 apart: one */
	diff_is("a\n1\n2\n3\n4\n5\n6\nb\n", "A\n1\n2\n3\n4\n5\n6\nB\n",
	        "@@ -1,8 +1,8 @@\n-a\n+A\n 1\n 2\n 3\n 4\n 5\n 6\n-b\n+B\n", 2,
	        2);
	/* appended to a last line without its newline */
	diff_is("a\nb", "a\nb\nc\n", "@@ -1,2 +1,3 @@\n a\n-b\n+b\n+c\n", 2, 1);
}

/* Apply hunks to a: the new text (or NULL when they do not apply). */
static char *apply(const char *a, const char *hunks)
{
	struct buf out;
	buf_init(&out, 0);
	const char *pa = a, *h = hunks;
	int line = 1; /* a's next line */
	while (*h) {
		int s1, l1 = 1, s2, l2 = 1;
		if (sscanf(h, "@@ -%d,%d +%d,%d @@", &s1, &l1, &s2, &l2) != 4 &&
		    sscanf(h, "@@ -%d +%d,%d @@", &s1, &s2, &l2) != 3 &&
		    sscanf(h, "@@ -%d,%d +%d @@", &s1, &l1, &s2) != 3 &&
		    sscanf(h, "@@ -%d +%d @@", &s1, &s2) != 2)
			goto bad;
		int from = l1 ? s1 : s1 + 1;
		while (line < from) { /* untouched lines */
			const char *nl = strchr(pa, '\n');
			if (!nl)
				goto bad;
			buf_append(&out, pa, (size_t)(nl - pa) + 1);
			pa = nl + 1, line++;
		}
		h = strchr(h, '\n') + 1;
		while (*h && *h != '@') {
			const char *nl = strchr(h, '\n');
			size_t n = (size_t)(nl - h) - 1; /* without the sign */
			if (*h == ' ' || *h == '-') {
				if (strncmp(pa, h + 1, n) ||
				    (pa[n] != '\n' && pa[n]))
					goto bad;
				pa += n + (pa[n] == '\n');
				line++;
			}
			if (*h == ' ' || *h == '+')
				buf_append(&out, h + 1, n),
				    buf_puts(&out, "\n");
			h = nl + 1;
		}
	}
	buf_puts(&out, pa);
	return buf_detach(&out);
bad:
	buf_free(&out);
	return NULL;
}

/* The length of the longest common subsequence of two line lists. */
static int lcs(char **a, int n, char **b, int m)
{
	int *row = calloc((size_t)(m + 1) * (size_t)(n + 1), sizeof *row);
	for (int i = 1; i <= n; i++)
		for (int j = 1; j <= m; j++) {
			int *c = &row[i * (m + 1) + j];
			if (!strcmp(a[i - 1], b[j - 1]))
				*c = row[(i - 1) * (m + 1) + j - 1] + 1;
			else {
				int up = row[(i - 1) * (m + 1) + j];
				int left = row[i * (m + 1) + j - 1];
				*c = up > left ? up : left;
			}
		}
	int r = row[n * (m + 1) + m];
	free(row);
	return r;
}

/* A random text of n lines over a small alphabet (repeats are likely). */
static void random_text(char **lines, int n, struct buf *text)
{
	static const char *const words[] = {"a", "b", "c", "d", "e", "f"};
	buf_reset(text);
	for (int i = 0; i < n; i++) {
		lines[i] = (char *)words[rand() % 6];
		buf_puts(text, lines[i]);
		buf_puts(text, "\n");
	}
}

static void test_random(void **state)
{
	(void)state;
	srand(7);
	char *la[40], *lb[40];
	struct buf ta, tb;
	buf_init(&ta, 0);
	buf_init(&tb, 0);
	for (int round = 0; round < 3000; round++) {
		int n = rand() % 40, m = rand() % 40;
		random_text(la, n, &ta);
		random_text(lb, m, &tb);
		struct linediff d;
		linediff(ta.data ? ta.data : "", ta.len, tb.data ? tb.data : "",
		         tb.len, 1 << 20, &d);
		char *got = apply(ta.data ? ta.data : "", buf_str(&d.hunks));
		assert_non_null(got);
		assert_string_equal(got, tb.data ? tb.data : "");
		int common = lcs(la, n, lb, m);
		assert_int_equal(d.removed, n - common);
		assert_int_equal(d.added, m - common);
		free(got);
		buf_free(&d.hunks);
	}
	buf_free(&ta);
	buf_free(&tb);
}

/* A change too large to search is still a correct diff, and a cut one
 * says so. */
static void test_large(void **state)
{
	(void)state;
	struct buf a, b;
	buf_init(&a, 0);
	buf_init(&b, 0);
	for (int i = 0; i < 6000; i++) {
		buf_printf(&a, "old %d\n", i);
		buf_printf(&b, "new %d\n", i);
	}
	struct linediff d;
	linediff(a.data, a.len, b.data, b.len, 1 << 30, &d);
	assert_int_equal(d.added, 6000);
	assert_int_equal(d.removed, 6000);
	char *got = apply(a.data, buf_str(&d.hunks));
	assert_non_null(got);
	assert_string_equal(got, b.data);
	free(got);
	buf_free(&d.hunks);
	linediff(a.data, a.len, b.data, b.len, 4096, &d);
	assert_true(d.cut);
	assert_true(d.hunks.len < 4096 + 100); /* a line past the limit */
	buf_free(&d.hunks);
	buf_free(&a);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fixed),
	    cmocka_unit_test(test_random),
	    cmocka_unit_test(test_large),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
