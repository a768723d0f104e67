/* test_history.c: the message box's history across runs
 * (src/tui/history.c): a project reads back only its own entries,
 * oldest first, multi-line ones whole; an entry is appended as one
 * JSON line in a file of mode 0600; the file is trimmed to its bound
 * through a renamed temp file; a secret-looking message is never
 * written; and the box's search over what was loaded (input.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tui/text.c"
#include "tui/input.c"
#include "tui/history.c"

#include <dirent.h>
#include <locale.h>
#include <stdio.h>

static char dir[64];
static char path[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/assay-hist.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/assay/history", dir);
	setenv("XDG_STATE_HOME", dir, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rm_rf(dir);
	return 0;
}

/* The file's text ("" when absent). */
static char *file_text(void)
{
	char *err = NULL;
	size_t n;
	char *s = read_file_max(path, 1 << 26, &n, &err);
	free(err);
	return s ? s : xstrdup("");
}

static int file_lines(void)
{
	char *s = file_text();
	int n = 0;
	for (char *p = s; *p; p++)
		n += *p == '\n';
	free(s);
	return n;
}

static void write_raw(const char *text)
{
	char *err = NULL;
	char *d = xasprintf("%s/assay", dir);
	assert_int_equal(mkdir_p(d, &err), 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(d);
}

/* A fresh box loaded with project's history. */
static void load(struct ui_hist *h, struct ui_input *in, const char *project)
{
	char *err = NULL;
	ui_input_init(in);
	ui_hist_init(h, NULL, project);
	assert_int_equal(ui_hist_load(h, in, &err), 0);
	assert_null(err);
}

static void add(struct ui_hist *h, const char *text)
{
	char *err = NULL;
	assert_int_equal(ui_hist_add(h, text, 1700000000, &err), 0);
	assert_null(err);
}

static void test_default_path_and_absent_file(void **state)
{
	(void)state;
	struct ui_hist h;
	struct ui_input in;
	load(&h, &in, "/p/one");
	assert_string_equal(h.path, path); /* $XDG_STATE_HOME/assay/history */
	assert_int_equal(in.nhist, 0);
	ui_hist_free(&h);
	ui_input_free(&in);
}

static void test_load_filters_by_project(void **state)
{
	(void)state;
	write_raw("{\"project\":\"/p/one\",\"t\":1,\"text\":\"first\"}\n"
	          "{\"project\":\"/p/two\",\"t\":2,\"text\":\"other's\"}\n"
	          "not json at all\n"
	          "{\"project\":\"/p/one\",\"t\":3,\"text\":\"a\\nb\\nc\"}\n"
	          "{\"project\":\"/p/one/sub\",\"t\":4,\"text\":\"sub\"}\n"
	          "{\"project\":\"/p/one\",\"t\":5,\"text\":\"torn");
	struct ui_hist h;
	struct ui_input in;
	load(&h, &in, "/p/one");
	assert_int_equal(in.nhist, 2);
	assert_string_equal(in.hist[0], "first");
	assert_string_equal(in.hist[1], "a\nb\nc"); /* multi-line, whole */
	assert_int_equal(in.hpos, 2); /* Up starts at the newest */
	ui_input_up(&in);
	assert_string_equal(buf_str(&in.text), "a\nb\nc");
	ui_hist_free(&h);
	ui_input_free(&in);
}

static void test_add_appends_a_json_line_0600(void **state)
{
	(void)state;
	struct ui_hist h;
	struct ui_input in;
	load(&h, &in, "/p/one");
	add(&h, "line one\nline two");
	add(&h, "line one\nline two"); /* the previous entry again: once */
	add(&h, "   ");
	char *s = file_text();
	assert_string_equal(s, "{\"project\":\"/p/one\",\"t\":1700000000,"
	                       "\"text\":\"line one\\nline two\"}\n");
	free(s);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	ui_hist_free(&h);
	ui_input_free(&in);

	/* the next run sees it; one in another project does not */
	load(&h, &in, "/p/one");
	assert_int_equal(in.nhist, 1);
	assert_string_equal(in.hist[0], "line one\nline two");
	add(&h, "line one\nline two"); /* still the newest: not again */
	assert_int_equal(file_lines(), 1);
	ui_hist_free(&h);
	ui_input_free(&in);
	load(&h, &in, "/p/two");
	assert_int_equal(in.nhist, 0);
	add(&h, "line one\nline two"); /* not this project's newest */
	assert_int_equal(file_lines(), 2);
	ui_hist_free(&h);
	ui_input_free(&in);
}

static void test_an_older_file_is_made_0600(void **state)
{
	(void)state;
	write_raw("{\"project\":\"/p\",\"t\":1,\"text\":\"old\"}\n");
	assert_int_equal(chmod(path, 0644), 0);
	struct ui_hist h;
	struct ui_input in;
	load(&h, &in, "/p");
	add(&h, "new");
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(file_lines(), 2);
	ui_hist_free(&h);
	ui_input_free(&in);
}

/* Files in the state dir besides history and its lock. */
static int stray_files(void)
{
	char *d = xasprintf("%s/assay", dir);
	DIR *dd = opendir(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dd)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		     strcmp(e->d_name, "history") &&
		     strcmp(e->d_name, "history.lock");
	closedir(dd);
	free(d);
	return n;
}

/* The file has n lines, and mode 0600. */
static void assert_lines(int n)
{
	struct stat st;
	assert_int_equal(file_lines(), n);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

static void test_trim_keeps_the_newest(void **state)
{
	(void)state;
	struct ui_hist h, o;
	struct ui_input in, oin;
	char text[32];
	load(&o, &oin, "/p/b");
	for (int i = 1; i <= 5; i++) {
		snprintf(text, sizeof text, "b %d", i);
		add(&o, text);
	}
	load(&h, &in, "/p/a"); /* it counts 5 entries */
	h.keep = o.keep = 10;
	for (int i = 1; i <= 9; i++) {
		snprintf(text, sizeof text, "msg %d", i);
		add(&h, text);
		assert_lines(5 + i);
	}
	add(&o, "b 6"); /* another run: h does not know */
	add(&h, "msg 10");
	assert_lines(16); /* h counts 15: up to 1.5 x the bound, appends */
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	ino_t before = st.st_ino;
	add(&h, "msg 11"); /* past it: the newest 10, in a new file */
	assert_lines(10);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_ino != before); /* renamed over the old one */
	assert_int_equal(stray_files(), 0);
	char *s = file_text();
	assert_null(strstr(s, "\"msg 2\""));
	assert_non_null(strstr(s, "\"msg 3\""));
	assert_non_null(strstr(s, "\"msg 11\""));
	assert_null(strstr(s, "\"b 5\""));
	assert_non_null(strstr(s, "\"b 6\""));
	free(s);
	add(&h, "msg 12"); /* appended again */
	assert_lines(11);
	ui_hist_free(&h);
	ui_hist_free(&o);
	ui_input_free(&in);
	ui_input_free(&oin);

	load(&h, &in, "/p/a");
	assert_int_equal(in.nhist, 10); /* msg 3 .. msg 12 */
	assert_string_equal(in.hist[0], "msg 3");
	assert_string_equal(in.hist[9], "msg 12");
	ui_hist_free(&h);
	ui_input_free(&in);
}

static void test_secrets(void **state)
{
	(void)state;
	static const char *const secret[] = {
	    "use sk-proj-4f9Kx2LmQ8rT1vW7yZ3bN6cD",
	    "key: sk-ant-api03-AbCdEf0123456789xyz",
	    "export OPENAI_API_KEY=abc123def456",
	    "password=hunter22",
	    "DB_PASSWORD = 'correct horse'",
	    "token ghp_0123456789abcdefABCDEF0123456789abcd",
	    "AKIAIOSFODNN7EXAMPLE is the id",
	    "here: aB3dE5gH7jK9mN1pQ3rS5tU7vW9xY1zA",
	    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n",
	    "\"api_key\": \"0123456789abcdef\"",
	};
	static const char *const plain[] = {
	    "plot the energy use per building",
	    "what is a key=value file?",
	    "sort by key: ascending",
	    "use scikit-learn and sk-learn-style names",
	    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
	    "id 123e4567-e89b-12d3-a456-426614174000",
	    "HandleIncomingRequestV2Async2024 crashed",
	    "/home/user/Projects2024/DataSets/Energy2023Q4/x.csv",
	    "the tokens: 1200 in, 300 out",
	};
	for (size_t i = 0; i < sizeof secret / sizeof *secret; i++)
		if (!ui_hist_secret(secret[i]))
			fail_msg("not taken for a secret: %s", secret[i]);
	for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
		if (ui_hist_secret(plain[i]))
			fail_msg("taken for a secret: %s", plain[i]);

	struct ui_hist h;
	struct ui_input in;
	load(&h, &in, "/p");
	add(&h, "fine");
	add(&h, "my key is sk-ant-api03-AbCdEf0123456789xyz ok?");
	char *s = file_text();
	assert_null(strstr(s, "sk-ant"));
	assert_non_null(strstr(s, "fine"));
	free(s);
	ui_hist_free(&h);
	ui_input_free(&in);
}

static void test_a_fifo_is_refused_not_waited_on(void **state)
{
	(void)state;
	char *d = xasprintf("%s/assay", dir), *err = NULL;
	assert_int_equal(mkdir_p(d, &err), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	struct ui_hist h;
	struct ui_input in;
	ui_input_init(&in);
	ui_hist_init(&h, NULL, "/p");
	int64_t t0 = now_ms();
	assert_int_equal(ui_hist_load(&h, &in, &err), -1);
	assert_non_null(strstr(err, "history is a FIFO, not a regular file"));
	free(err);
	err = NULL;
	assert_int_equal(ui_hist_add(&h, "hello", 1700000000, &err), -1);
	assert_non_null(strstr(err, "history is a FIFO"));
	assert_true(now_ms() - t0 < 1000);
	free(err);
	unlink(path);
	ui_hist_free(&h);
	ui_input_free(&in);
	free(d);
}

static void test_loaded_text_is_cleaned(void **state)
{
	(void)state;
	/* a file someone else wrote: escapes and controls never reach the
	 * box (and so the terminal); a secret in it stays out too */
	write_raw(
	    "{\"project\":\"/p\",\"t\":1,\"text\":\"a\\u001b[2Jb\\tc\"}\n"
	    "{\"project\":\"/p\",\"t\":2,\"text\":\"password=hunter22\"}\n");
	struct ui_hist h;
	struct ui_input in;
	load(&h, &in, "/p");
	assert_int_equal(in.nhist, 1);
	assert_string_equal(in.hist[0], "a[2Jb    c");
	ui_hist_free(&h);
	ui_input_free(&in);
}

static void test_too_long_is_not_kept(void **state)
{
	(void)state;
	struct ui_hist h;
	struct ui_input in;
	load(&h, &in, "/p");
	char *big = xmalloc(UI_HIST_TEXT_MAX + 2);
	memset(big, 'x', UI_HIST_TEXT_MAX + 1);
	big[UI_HIST_TEXT_MAX + 1] = '\0';
	add(&h, big);
	assert_int_equal(file_lines(), 0);
	free(big);
	ui_hist_free(&h);
	ui_input_free(&in);
}

static void test_search(void **state)
{
	(void)state;
	struct ui_input in;
	ui_input_init(&in);
	ui_input_remember(&in, "plot energy");
	ui_input_remember(&in, "sum the values");
	ui_input_remember(&in, "plot again");
	size_t at, off;
	assert_true(ui_input_hist_find(&in, "plot", 2, &at, &off));
	assert_int_equal(at, 2);
	assert_int_equal(off, 0);
	assert_true(ui_input_hist_find(&in, "plot", 1, &at, &off));
	assert_int_equal(at, 0);
	assert_true(ui_input_hist_find(&in, "values", 2, &at, &off));
	assert_int_equal(at, 1);
	assert_int_equal(off, 8);
	assert_false(ui_input_hist_find(&in, "nothing", 2, &at, &off));
	assert_false(ui_input_hist_find(&in, "plot", 3, &at, &off));
	ui_input_set(&in, "sum the values", 8);
	assert_int_equal(in.cur, 8);
	ui_input_free(&in);
}

int main(void)
{
	setlocale(LC_ALL, "C.UTF-8");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_default_path_and_absent_file,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_load_filters_by_project, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_add_appends_a_json_line_0600,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_an_older_file_is_made_0600,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_trim_keeps_the_newest, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_secrets, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_a_fifo_is_refused_not_waited_on, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_loaded_text_is_cleaned, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_too_long_is_not_kept, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_search, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
