/* test_strv.c: the one string vector (core/strv.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "assay/strv.h"
#include "assay/util.h"

static void test_push_terminates(void **state)
{
	struct strv a = {0};
	for (int i = 0; i < 100; i++) {
		char n[16];
		snprintf(n, sizeof n, "s%d", i);
		strv_push(&a, n);
		assert_null(a.v[a.n]); /* argv-ready after every push */
	}
	assert_int_equal(a.n, 100);
	assert_string_equal(a.v[0], "s0");
	assert_string_equal(a.v[99], "s99");
	strv_pushv(&a, 3, "--ro-bind", "/usr", "/usr");
	assert_int_equal(a.n, 103);
	assert_string_equal(a.v[102], "/usr");
	assert_null(a.v[103]);
	struct strv b = {0};
	strv_copy(&b, &a);
	assert_int_equal(b.n, a.n);
	assert_ptr_not_equal(b.v[5], a.v[5]);
	assert_string_equal(b.v[5], a.v[5]);
	strv_free(&a);
	assert_null(a.v);
	assert_int_equal(a.n, 0);
	strv_free(&b);
}

static void test_unique(void **state)
{
	struct strv a = {0};
	strv_add_unique(&a, xstrdup("rm -rf x"));
	strv_add_unique(&a, xstrdup("rm"));
	strv_add_unique(&a, xstrdup("rm -rf x")); /* freed, not added */
	strv_take(&a, xstrdup("rm"));             /* take keeps repeats */
	assert_int_equal(a.n, 3);
	assert_string_equal(a.v[0], "rm -rf x");
	assert_string_equal(a.v[1], "rm");
	assert_string_equal(a.v[2], "rm");
	assert_null(a.v[3]);
	strv_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_push_terminates),
	    cmocka_unit_test(test_unique),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
