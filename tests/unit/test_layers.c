/* test_layers.c: the persisted workspace's names (src/sandbox/layers.c):
 * which whole archive a run dir holds, where a new one goes, what
 * writing one clears, the deltas' names over each kind, and the tag
 * and listing of an archive. */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "assay/sandbox.h"
#include "assay/strv.h"
#include "assay/util.h"

static char *tmp_dir(void)
{
	char *d = xstrdup("/tmp/assay-layers-XXXXXX");
	assert_non_null(mkdtemp(d));
	return d;
}

/* A file at dir/name, its mtime age seconds in the past. */
static char *put(const char *dir, const char *name, int age)
{
	char *p = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(name, f);
	fclose(f);
	struct timespec ts[2];
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age;
	ts[1] = ts[0];
	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
	return p;
}

static int exists(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	int e = access(p, F_OK) == 0;
	free(p);
	return e;
}

static void rm(const char *dir)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

static void test_find(void **state)
{
	(void)state;
	char *d = tmp_dir();
	assert_null(sbx_archive_find(d)); /* neither */
	free(put(d, "workspace.tar.gz", 10));
	char *f = sbx_archive_find(d);
	char *want = xasprintf("%s/workspace.tar.gz", d);
	assert_string_equal(f, want); /* an older run's */
	free(f);
	free(want);
	/* both: the newer (a crash between writing one and removing the
	 * other), whichever name it has */
	free(put(d, "workspace.tar.zst", 5));
	f = sbx_archive_find(d);
	want = xasprintf("%s/workspace.tar.zst", d);
	assert_string_equal(f, want);
	free(f);
	free(want);
	free(put(d, "workspace.tar.gz", 1));
	f = sbx_archive_find(d);
	want = xasprintf("%s/workspace.tar.gz", d);
	assert_string_equal(f, want);
	free(f);
	free(want);
	rm(d);
	free(d);
}

static void test_new_and_written(void **state)
{
	(void)state;
	char *d = tmp_dir();
	char *n = sbx_archive_new(d);
	char *want = xasprintf("%s/workspace.tar.zst", d); /* Debian's has it */
	assert_string_equal(n, want);
	free(want);
	/* an older .tar.gz and its deltas; then a new whole archive */
	char *gz = put(d, "workspace.tar.gz", 10);
	char *err = NULL;
	char *delta = sbx_delta_next(gz, &err);
	assert_non_null(delta);
	assert_non_null(strstr(delta, "/workspace.d/000001-"));
	assert_string_equal(delta + strlen(delta) - 7, ".tar.gz");
	free(put(d, strstr(delta, "workspace.d/"), 0));
	assert_int_equal(sbx_deltas(gz, NULL, NULL, &err), 1);
	free(put(d, "workspace.tar.zst", 0));
	sbx_archive_written(n);
	assert_false(exists(d, "workspace.tar.gz"));
	assert_true(exists(d, "workspace.tar.zst"));
	assert_false(exists(d, "workspace.d"));
	/* a delta over the new archive takes its kind */
	char *d2 = sbx_delta_next(n, &err);
	assert_non_null(d2);
	assert_string_equal(d2 + strlen(d2) - 8, ".tar.zst");
	free(put(d, strstr(d2, "workspace.d/"), 0));
	char *d3 = sbx_delta_next(n, &err);
	assert_non_null(strstr(d3, "/workspace.d/000002-"));
	struct strv all = {0};
	assert_int_equal(sbx_deltas(n, &all, NULL, &err), 1);
	assert_string_equal(all.v[0], d2);
	strv_free(&all);
	free(d3);
	free(d2);
	free(delta);
	free(gz);
	free(n);
	rm(d);
	free(d);
}

/* The tag an archive's deltas and listing carry: another for an
 * archive written again; its listing beside it, gone with it. */
static void test_tag_and_listing(void **state)
{
	(void)state;
	char *d = tmp_dir();
	char *n = sbx_archive_new(d);
	assert_null(sbx_archive_tag(n)); /* none yet */
	free(put(d, "workspace.tar.zst", 10));
	char *t1 = sbx_archive_tag(n);
	assert_non_null(t1);
	char *l = sbx_archive_listing(n);
	char *want = xasprintf("%s/workspace.listing.json", d);
	assert_string_equal(l, want);
	free(put(d, "workspace.listing.json", 0));
	free(put(d, "workspace.tar.zst", 5)); /* the same size, later */
	char *t2 = sbx_archive_tag(n);
	assert_string_not_equal(t1, t2);
	sbx_archive_written(n);
	assert_false(exists(d, "workspace.listing.json"));
	assert_true(exists(d, "workspace.tar.zst"));
	free(t2);
	free(want);
	free(l);
	free(t1);
	free(n);
	rm(d);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_find),
	    cmocka_unit_test(test_new_and_written),
	    cmocka_unit_test(test_tag_and_listing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
