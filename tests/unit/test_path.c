/* test_path.c: confinement of tool paths to the workspace: the textual
 * normalisation, and opens beneath a root that must refuse every
 * escape, through symlinks too (absolute, relative, chained, as a
 * directory on the way to O_CREAT). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/path.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Normalise in; expect want (NULL = an error). */
static void norm(const char *in, const char *want)
{
	char *out = NULL, *err = NULL;
	int rc = path_normalize(in, &out, &err);
	if (want) {
		if (rc != 0)
			fail_msg("'%s': unexpected error: %s", in, err);
		assert_string_equal(out, want);
		assert_null(err);
	} else {
		if (rc != -1)
			fail_msg("'%s' was accepted as '%s'", in, out);
		assert_null(out);
		assert_non_null(err);
	}
	free(out);
	free(err);
}

static void test_normalize_plain(void **state)
{
	(void)state;
	norm("a", "a");
	norm("a/b/c.txt", "a/b/c.txt");
	norm("./a//b/", "a/b");
	norm("a/./b/.", "a/b");
	norm(".", ".");
	norm("", ".");
	norm("...", "...");
	norm("..a/b..", "..a/b..");
	norm(".hidden", ".hidden");
}

static void test_normalize_workspace_prefix(void **state)
{
	(void)state;
	norm("/workspace/x", "x");
	norm("/workspace/out/r.md", "out/r.md");
	norm("/workspace", ".");
	norm("/workspace/", ".");
	norm("//workspace/x", NULL); /* not the /workspace prefix */
	norm("/workspacex/y", NULL);
	norm("/workspace/../etc", NULL);
	norm("/workspace/a/../../etc/passwd", NULL);
}

static void test_normalize_escapes(void **state)
{
	(void)state;
	norm("..", NULL);
	norm("../x", NULL);
	norm("a/../../b", NULL);
	norm("a/..", NULL);
	norm("a/b/../c", NULL); /* harmless but refused: no '..' at all */
	norm("/etc/passwd", NULL);
	norm("/", NULL);
	norm("/tmp/x", NULL);
	norm("./../x", NULL);
}

static void test_normalize_nul_and_long(void **state)
{
	(void)state;
	/* A C string ends at NUL: whatever follows cannot be smuggled. */
	norm("a\0/../../etc/passwd", "a");
	char *err = NULL, *out = NULL;
	assert_int_equal(path_normalize(NULL, &out, &err), -1);
	free(err);
	/* PATH_MAX bytes or more is refused. */
	char *lng = xmalloc(PATH_MAX + 2);
	for (size_t i = 0; i < PATH_MAX + 1; i++)
		lng[i] = (i % 2) ? '/' : 'a';
	lng[PATH_MAX + 1] = '\0';
	norm(lng, NULL);
	/* Just under is fine. */
	lng[PATH_MAX - 2] = 'a';
	lng[PATH_MAX - 1] = '\0';
	err = NULL;
	assert_int_equal(path_normalize(lng, &out, &err), 0);
	free(out);
	free(lng);
}

/* A root with some files, and an outside directory holding a secret. */
struct tree {
	char *base, *root, *outside;
	int root_fd;
};

static char *mk(const char *dir, const char *rel)
{
	return xasprintf("%s/%s", dir, rel);
}

static void put(const char *dir, const char *rel, const char *text)
{
	char *p = mk(dir, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

static void link_to(const char *dir, const char *rel, const char *target)
{
	char *p = mk(dir, rel);
	assert_int_equal(symlink(target, p), 0);
	free(p);
}

static int tree_setup(void **state)
{
	struct tree *t = xcalloc(1, sizeof *t);
	char tmpl[] = "/tmp/assay-path-XXXXXX";
	t->base = xstrdup(mkdtemp(tmpl));
	t->root = mk(t->base, "root");
	t->outside = mk(t->base, "outside");
	mkdir(t->root, 0755);
	mkdir(t->outside, 0755);
	put(t->outside, "secret.txt", "SECRET");
	put(t->root, "ok.txt", "OK");
	char *sub = mk(t->root, "sub");
	mkdir(sub, 0755);
	free(sub);
	put(t->root, "sub/f.txt", "F");
	link_to(t->root, "toroot", "/");
	link_to(t->root, "etc", "/etc");
	link_to(t->root, "up", "../..");
	link_to(t->root, "sub/up", "../../outside/secret.txt");
	link_to(t->root, "a", "b");
	link_to(t->root, "b", "c");
	link_to(t->root, "c", "ok.txt");
	link_to(t->root, "d", "e");
	link_to(t->root, "e", t->outside);
	link_to(t->root, "dlink", "sub");
	link_to(t->root, "outdir", t->outside);
	char *dang = mk(t->outside, "created.txt");
	link_to(t->root, "dang", dang);
	free(dang);
	link_to(t->root, "selfloop", "selfloop");
	t->root_fd = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(t->root_fd >= 0);
	*state = t;
	return 0;
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;
	close(t->root_fd);
	rm_rf(t->base);
	free(t->base);
	free(t->root);
	free(t->outside);
	free(t);
	return 0;
}

/* Open rel beneath the root; expect it to work and read want. */
static void open_ok(struct tree *t, const char *rel, const char *want)
{
	char *err = NULL;
	int fd = path_open_beneath(t->root_fd, rel, O_RDONLY, 0, &err);
	if (fd < 0)
		fail_msg("%s: %s", rel, err);
	char buf[64] = {0};
	assert_true(read(fd, buf, sizeof buf - 1) >= 0);
	assert_string_equal(buf, want);
	close(fd);
}

static void open_refused(struct tree *t, const char *rel, int flags)
{
	char *err = NULL;
	int fd = path_open_beneath(t->root_fd, rel, flags, 0644, &err);
	if (fd >= 0)
		fail_msg("%s was opened", rel);
	assert_non_null(err);
	free(err);
}

static void test_beneath_plain(void **state)
{
	struct tree *t = *state;
	open_ok(t, "ok.txt", "OK");
	open_ok(t, "sub/f.txt", "F");
	open_ok(t, "./sub/../ok.txt", "OK"); /* stays beneath: allowed */
}

static void test_beneath_absolute_and_dotdot(void **state)
{
	struct tree *t = *state;
	open_refused(t, "/etc/passwd", O_RDONLY);
	open_refused(t, "../outside/secret.txt", O_RDONLY);
	open_refused(t, "sub/../../outside/secret.txt", O_RDONLY);
}

static void test_beneath_symlinks_out(void **state)
{
	struct tree *t = *state;
	open_refused(t, "toroot/etc/passwd", O_RDONLY);
	open_refused(t, "toroot", O_RDONLY | O_DIRECTORY);
	open_refused(t, "etc/passwd", O_RDONLY);
	open_refused(t, "up/outside/secret.txt", O_RDONLY);
	open_refused(t, "sub/up", O_RDONLY);
	open_refused(t, "d/secret.txt", O_RDONLY); /* chain d -> e -> out */
	open_refused(t, "outdir/secret.txt", O_RDONLY);
	char *err = NULL;
	assert_int_equal(path_open_beneath(t->root_fd, "toroot/etc/passwd",
	                                   O_RDONLY, 0, &err),
	                 -1);
	assert_non_null(strstr(err, "outside the workspace"));
	free(err);
}

static void test_beneath_symlinks_inside(void **state)
{
	struct tree *t = *state;
	open_ok(t, "a", "OK"); /* a -> b -> c -> ok.txt */
	open_ok(t, "dlink/f.txt", "F");
	open_refused(t, "selfloop", O_RDONLY);
}

static void test_beneath_create(void **state)
{
	struct tree *t = *state;
	char *err = NULL;
	/* Missing parents are made, confined. */
	int fd = path_open_beneath(t->root_fd, "new/deep/n.txt",
	                           O_WRONLY | O_CREAT | O_TRUNC, 0644, &err);
	if (fd < 0)
		fail_msg("create: %s", err);
	close(fd);
	char *p = mk(t->root, "new/deep/n.txt");
	assert_int_equal(access(p, F_OK), 0);
	free(p);
	/* Through a directory link leading out: refused, nothing made. */
	open_refused(t, "outdir/new.txt", O_WRONLY | O_CREAT);
	open_refused(t, "outdir/x/new.txt", O_WRONLY | O_CREAT);
	open_refused(t, "toroot/tmp/assay-should-not-exist",
	             O_WRONLY | O_CREAT);
	/* A dangling link whose target is outside. */
	open_refused(t, "dang", O_WRONLY | O_CREAT);
	char *made = mk(t->outside, "new.txt");
	char *made2 = mk(t->outside, "created.txt");
	char *made3 = mk(t->outside, "x");
	assert_int_equal(access(made, F_OK), -1);
	assert_int_equal(access(made2, F_OK), -1);
	assert_int_equal(access(made3, F_OK), -1);
	assert_int_equal(access("/tmp/assay-should-not-exist", F_OK), -1);
	free(made);
	free(made2);
	free(made3);
}

static void test_mkdirs_beneath(void **state)
{
	struct tree *t = *state;
	char *err = NULL;
	assert_int_equal(path_mkdirs_beneath(t->root_fd, "m/n/o", &err), 0);
	assert_int_equal(path_mkdirs_beneath(t->root_fd, "m/n/o", &err), 0);
	assert_int_equal(path_mkdirs_beneath(t->root_fd, "dlink/inner", &err),
	                 0);
	char *p = mk(t->root, "sub/inner");
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	free(p);
	assert_int_equal(path_mkdirs_beneath(t->root_fd, "outdir/q", &err), -1);
	free(err);
	err = NULL;
	assert_int_equal(path_mkdirs_beneath(t->root_fd, "up/q", &err), -1);
	free(err);
	char *q = mk(t->outside, "q");
	assert_int_equal(access(q, F_OK), -1);
	free(q);
}

/* The XDG directories: the variable when set and not empty, else
 * HOME's fallback, else NULL; sub "" or NULL is the directory. */
static void test_xdg_dirs(void **state)
{
	(void)state;
	setenv("HOME", "/home/u", 1);
	setenv("XDG_CACHE_HOME", "/c", 1);
	setenv("XDG_CONFIG_HOME", "/k", 1);
	char *p = path_cache_dir("images");
	assert_string_equal(p, "/c/assay/images");
	free(p);
	p = path_config_dir("themes");
	assert_string_equal(p, "/k/assay/themes");
	free(p);
	p = path_config_dir("");
	assert_string_equal(p, "/k/assay");
	free(p);
	p = path_cache_dir(NULL);
	assert_string_equal(p, "/c/assay");
	free(p);
	setenv("XDG_CACHE_HOME", "", 1);
	unsetenv("XDG_CONFIG_HOME");
	p = path_cache_dir("x");
	assert_string_equal(p, "/home/u/.cache/assay/x");
	free(p);
	p = path_config_dir("config.json");
	assert_string_equal(p, "/home/u/.config/assay/config.json");
	free(p);
	unsetenv("HOME");
	assert_null(path_cache_dir("x"));
	assert_null(path_config_dir("x"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_normalize_plain),
	    cmocka_unit_test(test_normalize_workspace_prefix),
	    cmocka_unit_test(test_normalize_escapes),
	    cmocka_unit_test(test_normalize_nul_and_long),
	    cmocka_unit_test_setup_teardown(test_beneath_plain, tree_setup,
	                                    tree_teardown),
	    cmocka_unit_test_setup_teardown(test_beneath_absolute_and_dotdot,
	                                    tree_setup, tree_teardown),
	    cmocka_unit_test_setup_teardown(test_beneath_symlinks_out,
	                                    tree_setup, tree_teardown),
	    cmocka_unit_test_setup_teardown(test_beneath_symlinks_inside,
	                                    tree_setup, tree_teardown),
	    cmocka_unit_test_setup_teardown(test_beneath_create, tree_setup,
	                                    tree_teardown),
	    cmocka_unit_test_setup_teardown(test_mkdirs_beneath, tree_setup,
	                                    tree_teardown),
	    cmocka_unit_test(test_xdg_dirs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
