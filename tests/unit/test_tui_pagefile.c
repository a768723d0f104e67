/* test_tui_pagefile.c: moving through files by byte offset without
 * loading them (src/tui/pagefile.c): next/previous line agree in both
 * directions (long lines split the same way), documents of several
 * parts, head and end, and the stepwise search forward and backward,
 * including matches across read chunks and across parts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tui/pagefile.c"

#include <fcntl.h>
#include <stdio.h>

static int tmpfile_with(const char *data, size_t n)
{
	char path[] = "/tmp/assay-pg.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	return fd;
}

static char *line_at(struct ui_pgdoc *d, struct ui_pgpos p)
{
	struct buf b;
	buf_init(&b, 0);
	ui_pg_read(d, p, &b);
	return buf_detach(&b);
}

static void test_lines_both_ways(void **state)
{
	(void)state;
	struct ui_pgdoc d;
	ui_pg_init(&d);
	ui_pg_add_file(&d, tmpfile_with("a\nbb\n\nccc", 9));
	struct ui_pgpos p = ui_pg_head(&d);
	const char *want[] = {"a", "bb", "", "ccc"};
	struct ui_pgpos seen[4];
	for (int i = 0; i < 4; i++) {
		char *l = line_at(&d, p);
		assert_string_equal(l, want[i]);
		free(l);
		seen[i] = p;
		int rc = ui_pg_next(&d, &p);
		assert_int_equal(rc, i < 3 ? 0 : -1);
	}
	p = ui_pg_end(&d);
	for (int i = 3; i >= 0; i--) {
		assert_int_equal(ui_pg_prev(&d, &p), 0);
		assert_int_equal(ui_pg_pos_cmp(p, seen[i]), 0);
	}
	assert_int_equal(ui_pg_prev(&d, &p), -1);
	ui_pg_free(&d);
}

static void test_long_lines_split_alike(void **state)
{
	(void)state;
	/* a line of 2.5 x the limit, then a short one */
	size_t n = UI_PG_LINE_MAX * 5 / 2;
	char *data = xmalloc(n + 8);
	memset(data, 'x', n);
	memcpy(data + n, "\nshort\n", 7);
	struct ui_pgdoc d;
	ui_pg_init(&d);
	ui_pg_add_file(&d, tmpfile_with(data, n + 7));
	struct ui_pgpos p = ui_pg_head(&d), fwd[8];
	int k = 0;
	do {
		fwd[k++] = p;
	} while (ui_pg_next(&d, &p) == 0 && k < 8);
	assert_int_equal(k, 4); /* 3 pieces + "short" */
	assert_int_equal(fwd[1].off, UI_PG_LINE_MAX);
	char *l = line_at(&d, fwd[3]);
	assert_string_equal(l, "short");
	free(l);
	p = ui_pg_end(&d);
	for (int i = k - 1; i >= 0; i--) {
		assert_int_equal(ui_pg_prev(&d, &p), 0);
		assert_int_equal(p.off, fwd[i].off);
	}
	/* the start of the line holding any offset is one of them */
	struct ui_pgpos mid = {0, UI_PG_LINE_MAX + 77};
	assert_int_equal(ui_pg_line_start(&d, mid).off, UI_PG_LINE_MAX);
	ui_pg_free(&d);
	free(data);
}

static void test_parts(void **state)
{
	(void)state;
	struct ui_pgdoc d;
	ui_pg_init(&d);
	ui_pg_add_header(&d, "-- stdout --");
	ui_pg_add_file(&d, tmpfile_with("out1\nout2\n", 10));
	ui_pg_add_header(&d, "-- stderr --");
	ui_pg_add_file(&d, tmpfile_with("", 0)); /* empty: skipped */
	struct ui_pgpos p = ui_pg_head(&d);
	const char *want[] = {"-- stdout --", "out1", "out2", "-- stderr --"};
	for (int i = 0; i < 4; i++) {
		char *l = line_at(&d, p);
		assert_string_equal(l, want[i]);
		free(l);
		assert_int_equal(ui_pg_next(&d, &p), i < 3 ? 0 : -1);
	}
	assert_int_equal(ui_pg_total(&d), 1 + 10 + 1);
	ui_pg_free(&d);
}

/* Run a search to its end in small steps. */
static int search(struct ui_pgdoc *d, const char *needle, int dir,
                  struct ui_pgpos from, struct ui_pgpos *hit, int *steps)
{
	struct ui_pgsearch s = {0};
	ui_pg_search_start(&s, needle, dir, from);
	*steps = 0;
	while (!ui_pg_search_step(&s, d, 300000))
		(*steps)++;
	int found = s.found;
	*hit = s.hit;
	ui_pg_search_free(&s);
	return found;
}

static void test_search(void **state)
{
	(void)state;
	/* 3 MB of filler with needles placed across the 1 MB read chunks */
	size_t n = 3u << 20;
	char *data = xmalloc(n);
	for (size_t i = 0; i < n; i++)
		data[i] = (i % 64 == 63) ? '\n' : (char)('a' + i % 7);
	const size_t at[] = {10, (1u << 20) - 3, (2u << 20) + 5, n - 6};
	for (int i = 0; i < 4; i++)
		memcpy(data + at[i], "NEEDLE", 6);
	struct ui_pgdoc d;
	ui_pg_init(&d);
	ui_pg_add_header(&d, "header NEEDLE is not searched");
	ui_pg_add_file(&d, tmpfile_with(data, n));
	struct ui_pgpos from = ui_pg_head(&d), hit;
	int steps;
	for (int i = 0; i < 4; i++) {
		assert_true(search(&d, "NEEDLE", 1, from, &hit, &steps));
		assert_int_equal(hit.part, 1);
		assert_int_equal(hit.off, (int64_t)at[i]);
		from = hit;
		from.off++;
	}
	assert_false(search(&d, "NEEDLE", 1, from, &hit, &steps));
	/* backward from the end finds them in reverse */
	from = ui_pg_end(&d);
	for (int i = 3; i >= 0; i--) {
		assert_true(search(&d, "NEEDLE", -1, from, &hit, &steps));
		assert_int_equal(hit.off, (int64_t)at[i]);
		from = hit;
	}
	assert_false(search(&d, "NEEDLE", -1, from, &hit, &steps));
	assert_false(search(&d, "absent", 1, ui_pg_head(&d), &hit, &steps));
	assert_true(steps >= 2); /* 3 MB took several bounded steps */
	ui_pg_free(&d);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lines_both_ways),
	    cmocka_unit_test(test_long_lines_split_alike),
	    cmocka_unit_test(test_parts),
	    cmocka_unit_test(test_search),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
