/* test_resume.c: reading a recorded run back (src/agent/record.c): a
 * last line cut by a crash is dropped (and its offset known, so resume
 * can cut it off), a bad line in the middle is refused, and so are turn
 * numbers past the requests made and a request made before the calls
 * it needs had results; RUN is found as a dir, a transcript or a run
 * id; the run_start's settings become the configuration only as far as
 * a project file's may (never the URL, network, out dir, inputs; ask
 * and sandbox limits only stricter; instructions from the run dir's
 * copy). Also the request hash resume compares: the same
 * conversation hashes the same whatever the key order, and any change
 * of a tool result changes it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/agent_internal.h"
#include "assay/config.h"
#include "assay/llm.h"
#include "assay/path.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *RUN_START =
    "{\"seq\":1,\"t\":0,\"type\":\"run_start\",\"run_id\":\"r1\","
    "\"provider\":\"openai\",\"model\":\"m1\",\"base_url\":\"http://x/v1\","
    "\"out\":\"outdir\",\"ask\":\"none\",\"sandbox\":{\"backend\":\"local\","
    "\"image\":\"host\"},\"inputs\":[{\"src\":\"/data/a.csv\",\"dest\":"
    "\"input/a.csv\"}],\"outputs\":[\"output/r.md\"],\"limits\":{"
    "\"timeout_s\":7,\"max_turns\":9,\"max_output_tokens\":123,"
    "\"network\":false}}\n";

static void cut_last_line_dropped(void **state)
{
	(void)state;
	char *text = xasprintf("%s%s%s", RUN_START,
	                       "{\"seq\":2,\"t\":5,\"type\":\"user_message\","
	                       "\"text\":\"hi\"}\n",
	                       "{\"seq\":3,\"t\":9,\"type\":\"text_del");
	struct record r = {0};
	char *err = NULL;
	assert_int_equal(record_parse(text, strlen(text), &r, &err), 0);
	assert_int_equal(cJSON_GetArraySize(r.events), 2);
	assert_int_equal(r.last_seq, 2);
	assert_int_equal(r.last_t, 5);
	assert_int_equal(r.dropped_bytes, strlen("{\"seq\":3,\"t\":9,\"type\":"
	                                         "\"text_del"));
	assert_int_equal(r.complete_bytes, strlen(text) - r.dropped_bytes);
	assert_non_null(r.run_start);
	record_free(&r);
	free(text);
}

static void bad_middle_line_refused(void **state)
{
	(void)state;
	char *text = xasprintf("%snot json\n\n{\"seq\":4,\"t\":1,\"type\":"
	                       "\"run_end\",\"status\":\"completed\"}\n",
	                       RUN_START);
	struct record r = {0};
	char *err = NULL;
	assert_int_equal(record_parse(text, strlen(text), &r, &err), -1);
	assert_non_null(strstr(err, "line 2 is not a JSON event"));
	assert_non_null(strstr(err, "damaged"));
	free(err);
	record_free(&r);
	free(text);
	/* the same bad line last, with its newline: cut by a crash */
	text = xasprintf("%s\nnot json\n", RUN_START);
	memset(&r, 0, sizeof r);
	assert_int_equal(record_parse(text, strlen(text), &r, &err), 0);
	assert_int_equal(r.dropped_bytes, strlen("not json\n"));
	record_free(&r);
	free(text);
}

/* The image id a run's sandbox had last: run_start's, then each
 * run_resume's that records one (a record of an older assay, without
 * them: ""). What a resume compares its new sandbox's with. */
static void recorded_image_id(void **state)
{
	(void)state;
	static const char *const resumes[] = {
	    "",
	    "{\"seq\":2,\"type\":\"run_resume\",\"sandbox\":{\"backend\":"
	    "\"docker\",\"image\":\"a:1\",\"image_id\":\"sha256:b\"}}\n",
	    /* then one of an older assay: {backend} only */
	    "{\"seq\":2,\"type\":\"run_resume\",\"sandbox\":{\"backend\":"
	    "\"docker\",\"image\":\"a:1\",\"image_id\":\"sha256:b\"}}\n"
	    "{\"seq\":3,\"type\":\"run_resume\",\"sandbox\":{\"backend\":"
	    "\"docker\"}}\n",
	};
	static const char *const want[] = {"sha256:a", "sha256:b", "sha256:b"};
	char *start = xstrdup(RUN_START);
	char *at = strstr(start, "\"image\":\"host\"");
	assert_non_null(at);
	for (int with_id = 0; with_id < 2; with_id++) {
		for (size_t i = 0; i < 3; i++) {
			char *rs = with_id
			               ? xasprintf("%.*s\"image_id\":\"sha256:a"
			                           "\",%s",
			                           (int)(at - start), start, at)
			               : xstrdup(start);
			char *text = xasprintf("%s%s", rs, resumes[i]);
			struct record r = {0};
			char *err = NULL;
			assert_int_equal(
			    record_parse(text, strlen(text), &r, &err), 0);
			/* an older run_start records no id: "" until a
			 * resume records one */
			assert_string_equal(record_image_id(&r),
			                    with_id || i ? want[i] : "");
			record_free(&r);
			free(text);
			free(rs);
		}
	}
	free(start);
}

static int parse_with(const char *events, char **err)
{
	char *text = xasprintf("%s%s", RUN_START, events);
	struct record r = {0};
	int rc = record_parse(text, strlen(text), &r, err);
	record_free(&r);
	free(text);
	return rc;
}

static void damaged_turns_refused(void **state)
{
	(void)state;
	char *err = NULL;
	/* a turn number far past the requests made (resume once built a
	 * table that size) */
	assert_int_equal(
	    parse_with("{\"seq\":2,\"type\":\"model_request\",\"turn\":"
	               "2000000000,\"request_hash\":\"x\"}\n",
	               &err),
	    -1);
	assert_non_null(strstr(err, "turn 2e+09"));
	free(err);
	err = NULL;
	assert_int_equal(
	    parse_with("{\"seq\":2,\"type\":\"model_request\",\"turn\":"
	               "0}\n",
	               &err),
	    -1);
	free(err);
	err = NULL;
	/* turn 2 asked before call c1 of turn 1 had its result */
	const char *open =
	    "{\"seq\":2,\"type\":\"model_request\",\"turn\":1}\n"
	    "{\"seq\":3,\"type\":\"assistant_message\",\"turn\":1,"
	    "\"tool_calls\":[{\"id\":\"c1\",\"name\":\"shell\"},{\"id\":"
	    "\"c2\",\"name\":\"shell\"}]}\n"
	    "{\"seq\":4,\"type\":\"tool_result\",\"id\":\"c2\"}\n"
	    "{\"seq\":5,\"type\":\"model_request\",\"turn\":2}\n";
	assert_int_equal(parse_with(open, &err), -1);
	assert_non_null(strstr(err, "call c1"));
	free(err);
	err = NULL;
	/* with both results, and a resumed run's replayed requests and
	 * the interrupted turn asked again, it is a good transcript */
	const char *good =
	    "{\"seq\":2,\"type\":\"model_request\",\"turn\":1}\n"
	    "{\"seq\":3,\"type\":\"assistant_message\",\"turn\":1,"
	    "\"tool_calls\":[{\"id\":\"c1\",\"name\":\"shell\"}]}\n"
	    "{\"seq\":4,\"type\":\"tool_result\",\"id\":\"c1\"}\n"
	    "{\"seq\":5,\"type\":\"model_request\",\"turn\":2}\n"
	    "{\"seq\":6,\"type\":\"run_resume\"}\n"
	    "{\"seq\":7,\"type\":\"model_request\",\"turn\":1,"
	    "\"replayed\":true}\n"
	    "{\"seq\":8,\"type\":\"model_request\",\"turn\":2}\n";
	assert_int_equal(parse_with(good, &err), 0);
}

static void no_run_start_refused(void **state)
{
	(void)state;
	const char *text = "{\"seq\":1,\"t\":0,\"type\":\"user_message\"}\n";
	struct record r = {0};
	char *err = NULL;
	assert_int_equal(record_parse(text, strlen(text), &r, &err), -1);
	assert_non_null(strstr(err, "run_start"));
	free(err);
	record_free(&r);
}

static void found_and_applied(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/test_resume.XXXXXX";
	char *root = mkdtemp(tmpl);
	assert_non_null(root);
	char *old = getcwd(NULL, 0);
	assert_int_equal(chdir(root), 0);
	assert_int_equal(mkdir_p(".assay/runs/r1", NULL), 0);
	assert_int_equal(write_file_replace(".assay/runs/r1/transcript.jsonl",
	                                    RUN_START, strlen(RUN_START), NULL),
	                 0);
	const char *ways[] = {"r1", ".assay/runs/r1", ".assay/runs/r1/",
	                      ".assay/runs/r1/transcript.jsonl"};
	for (size_t i = 0; i < 4; i++) {
		struct record r;
		char *err = NULL;
		assert_int_equal(record_load(ways[i], &r, &err), 0);
		assert_string_equal(r.dir, ".assay/runs/r1");
		record_free(&r);
	}
	struct config c;
	config_defaults(&c);
	config_add_input(&c, "/elsewhere", "input/other");
	config_set(&c.instructions, "/my/instructions.md");
	char *err = NULL;
	assert_int_equal(session_record_config("r1", &c, &err), 0);
	assert_string_equal(c.model, "m1");
	/* what a project file may not set, the record may not either */
	assert_null(c.base_url);
	assert_string_equal(c.out_dir, "outputs");
	assert_string_equal(c.ask, "risky"); /* recorded none: looser */
	assert_int_equal(c.n_inputs, 1);
	assert_string_equal(c.inputs[0].src, "/elsewhere");
	assert_int_equal(c.n_outputs, 1);
	assert_string_equal(c.outputs[0], "output/r.md");
	assert_int_equal(c.timeout_s, 7); /* tighter than 120: taken */
	assert_int_equal(c.max_turns, 9);
	assert_int_equal(c.max_output_tokens, 123);
	/* the run used the built-in prompt: the layer's file goes */
	assert_null(c.instructions);
	config_free(&c);

	/* a hostile record: looser limits and ask are not taken, a
	 * recorded instructions path is never read (only the run dir's
	 * copy, and not through a link) */
	const char *hostile =
	    "{\"seq\":1,\"t\":0,\"type\":\"run_start\",\"run_id\":\"r2\","
	    "\"provider\":\"openai\",\"base_url\":\"http://evil/v1\","
	    "\"ask\":\"none\",\"out\":\"/tmp/evil\",\"instructions\":"
	    "\"/etc/passwd\",\"workspace\":\"/home/victim\",\"limits\":{"
	    "\"timeout_s\":99999,\"memory_mb\":999999,\"network\":true,"
	    "\"max_output_bytes\":-5}}\n";
	assert_int_equal(mkdir_p("r2", NULL), 0);
	assert_int_equal(write_file_replace("r2/transcript.jsonl", hostile,
	                                    strlen(hostile), NULL),
	                 0);
	config_defaults(&c);
	config_set(&c.ask, "all");
	assert_int_equal(session_record_config("r2", &c, &err), 0);
	assert_null(c.base_url);
	assert_string_equal(c.ask, "all");
	assert_int_equal(c.timeout_s, 120);
	assert_int_equal(c.mem_mb, 4096);
	assert_int_equal(c.network, 0);
	assert_int_equal(c.max_output_bytes, 16384);
	assert_string_equal(c.out_dir, "outputs");
	assert_null(c.workspace);
	assert_null(c.instructions); /* no copy in r2/ */
	config_free(&c);
	assert_int_equal(symlink("/etc/passwd", "r2/instructions.md"), 0);
	config_defaults(&c);
	/* a link is not the copy: refused by its type */
	assert_int_equal(session_record_config("r2", &c, &err), -1);
	assert_non_null(strstr(err, "instructions.md is a symbolic link"));
	free(err);
	err = NULL;
	assert_null(c.instructions);
	config_free(&c);
	assert_int_equal(unlink("r2/instructions.md"), 0);
	assert_int_equal(
	    write_file_replace("r2/instructions.md", "be kind", 7, NULL), 0);
	config_defaults(&c);
	assert_int_equal(session_record_config("r2", &c, &err), 0);
	assert_string_equal(c.instructions, "r2/instructions.md");
	config_free(&c);

	config_defaults(&c);
	assert_int_equal(session_record_config("nope", &c, &err), -1);
	assert_non_null(strstr(err, "give a run dir"));
	free(err);
	config_free(&c);
	assert_int_equal(chdir(old), 0);
	free(old);
	rm_rf(root);
}

static char *hash_of(const char *messages)
{
	cJSON *msgs = cJSON_Parse(messages);
	struct llm_request r = {.model = "m1",
	                        .system = "sys",
	                        .messages = msgs,
	                        .max_output_tokens = 100};
	char *canon = llm_canonical_request_for("openai", "m1", &r);
	char *h = xmalloc(65);
	sha256_hex(canon, strlen(canon), h);
	free(canon);
	cJSON_Delete(msgs);
	return h;
}

static void hash_matches_rebuilt_conversation(void **state)
{
	(void)state;
	/* the live order and the order a transcript rebuilds differ */
	char *live = hash_of(
	    "[{\"role\":\"user\",\"content\":\"go\"},{\"role\":\"assistant\","
	    "\"content\":\"\",\"tool_calls\":[{\"id\":\"c1\",\"name\":"
	    "\"shell\",\"arguments\":{\"command\":\"ls\"}}]},{\"role\":"
	    "\"tool\",\"tool_call_id\":\"c1\",\"name\":\"shell\",\"content\":"
	    "\"a\\n\",\"is_error\":false}]");
	char *rebuilt = hash_of(
	    "[{\"content\":\"go\",\"role\":\"user\"},{\"tool_calls\":[{"
	    "\"arguments\":{\"command\":\"ls\"},\"name\":\"shell\",\"id\":"
	    "\"c1\"}],\"content\":\"\",\"role\":\"assistant\"},{\"is_error\":"
	    "false,\"content\":\"a\\n\",\"name\":\"shell\",\"tool_call_id\":"
	    "\"c1\",\"role\":\"tool\"}]");
	char *changed = hash_of(
	    "[{\"role\":\"user\",\"content\":\"go\"},{\"role\":\"assistant\","
	    "\"content\":\"\",\"tool_calls\":[{\"id\":\"c1\",\"name\":"
	    "\"shell\",\"arguments\":{\"command\":\"ls\"}}]},{\"role\":"
	    "\"tool\",\"tool_call_id\":\"c1\",\"name\":\"shell\",\"content\":"
	    "\"b\\n\",\"is_error\":false}]");
	assert_string_equal(live, rebuilt);
	assert_string_not_equal(live, changed);
	free(live);
	free(rebuilt);
	free(changed);
}

/* snapshot_bytes (agent/snapshot.c): what the room checks of a backend
 * without a host workspace count: a file, a directory's files, all. */
static void snapshot_bytes_counts(void **state)
{
	(void)state;
	cJSON *list =
	    cJSON_Parse("[{\"path\":\"a\",\"type\":\"file\",\"size\":10},"
	                "{\"path\":\"d\",\"type\":\"dir\",\"size\":4096},"
	                "{\"path\":\"d/x\",\"type\":\"file\",\"size\":100},"
	                "{\"path\":\"d/e\",\"type\":\"dir\",\"size\":4096},"
	                "{\"path\":\"d/e/y\",\"type\":\"file\",\"size\":1000},"
	                "{\"path\":\"dd\",\"type\":\"file\",\"size\":5},"
	                "{\"path\":\"l\",\"type\":\"link\",\"size\":7}]");
	assert_non_null(list);
	struct snapshot *sn = snapshot_new(list, 0);
	assert_true(snapshot_bytes(sn, "", NULL) == 1115);
	assert_true(snapshot_bytes(sn, "a", NULL) == 10);
	assert_true(snapshot_bytes(sn, "d", NULL) == 1100); /* not dd */
	assert_true(snapshot_bytes(sn, "d/e", NULL) == 1000);
	assert_true(snapshot_bytes(sn, "l", NULL) == 0); /* a link: no data */
	assert_true(snapshot_bytes(sn, "missing", NULL) == 0); /* unknown */
	assert_true(snapshot_bytes(NULL, "", NULL) == 0);
	/* a mounted input no archive holds: left out of the whole */
	struct path_mount pm = {.rel = "d/e", .src = "/x", .dir = 1};
	struct path_mounts m = {.v = &pm, .n = 1};
	assert_true(snapshot_bytes(sn, "", &m) == 115);
	assert_true(snapshot_bytes(sn, "d", &m) == 100);
	snapshot_free(sn);
	cJSON_Delete(list);
}

/* A listing of a file a (mtime and ctime given) and a directory d,
 * taken at 1000 s. */
static struct snapshot *listing_of(const char *a_type, double size,
                                   double mtime, double ctime, int extra)
{
	char *text = xasprintf("[{\"path\":\"a\",\"type\":\"%s\",\"size\":%g,"
	                       "\"mtime\":%.3f,\"ctime\":%.3f},"
	                       "{\"path\":\"d\",\"type\":\"dir\",\"size\":0,"
	                       "\"mtime\":500,\"ctime\":500}%s]",
	                       a_type, size, mtime, ctime,
	                       extra ? ",{\"path\":\"d/x\",\"type\":\"file\","
	                               "\"size\":1,\"mtime\":500,\"ctime\":500}"
	                             : "");
	cJSON *list = cJSON_Parse(text);
	assert_non_null(list);
	struct snapshot *sn = snapshot_new(list, 1000);
	cJSON_Delete(list);
	free(text);
	return sn;
}

/* snapshot_same (agent/snapshot.c): what tells the run's end the
 * workspace is the archive's: every entry the same, none written just
 * before the older listing; a chmod (ctime alone) is a change, to
 * snapshot_delta too. */
static void snapshot_same_entry_for_entry(void **state)
{
	(void)state;
	struct snapshot *old = listing_of("file", 10, 900, 900, 0);
	struct snapshot *sn = listing_of("file", 10, 900, 900, 0);
	assert_true(snapshot_same(old, sn));
	assert_true(snapshot_serial(old) != snapshot_serial(sn));
	assert_int_equal(snapshot_serial(NULL), 0);
	assert_false(snapshot_same(NULL, sn));
	assert_false(snapshot_same(old, NULL));
	struct snapshot *other[] = {
	    listing_of("file", 11, 900, 900, 0), /* size */
	    listing_of("file", 10, 901, 901, 0), /* mtime */
	    listing_of("file", 10, 900, 950, 0), /* ctime: a chmod */
	    listing_of("link", 10, 900, 900, 0), /* type */
	    listing_of("file", 10, 900, 900, 1), /* one more entry */
	};
	for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
		assert_false(snapshot_same(old, other[i]));
		snapshot_free(other[i]);
	}
	/* one entry fewer */
	struct snapshot *more = listing_of("file", 10, 900, 900, 1);
	assert_false(snapshot_same(more, old));
	/* the chmod is in a delta */
	struct snapshot *chmod = listing_of("file", 10, 900, 950, 0);
	struct sbx_delta d = {0};
	assert_int_equal(snapshot_delta(old, chmod, &d), 1);
	assert_string_equal(d.files.v[0], "a");
	strv_free(&d.files);
	/* written within 10 ms of the older listing: it may have changed
	 * again within the same tick */
	struct snapshot *r1 = listing_of("file", 10, 999.995, 999.995, 0);
	struct snapshot *r2 = listing_of("file", 10, 999.995, 999.995, 0);
	assert_false(snapshot_same(r1, r2));
	snapshot_free(r1);
	snapshot_free(r2);
	snapshot_free(chmod);
	snapshot_free(more);
	snapshot_free(sn);
	snapshot_free(old);
}

/* snapshot_save and snapshot_load: a listing kept beside an archive
 * comes back only with the archive's tag; its time is the one given. */
static void snapshot_kept_in_a_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/assay-snap-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *path = xasprintf("%s/listing.json", dir);
	struct snapshot *sn = listing_of("file", 10, 900, 900, 1);
	char *err = NULL;
	assert_int_equal(snapshot_save(sn, path, "a-1", 2000, &err), 0);
	struct snapshot *back = snapshot_load(path, "a-1");
	assert_non_null(back);
	assert_true(snapshot_same(sn, back));
	/* taken at 2000: a file of 1999.995 would be too close */
	struct snapshot *late = listing_of("file", 10, 1999.995, 900, 1);
	struct snapshot *late_back = NULL;
	assert_int_equal(snapshot_save(late, path, "a-1", 2000, &err), 0);
	late_back = snapshot_load(path, "a-1");
	assert_non_null(late_back);
	assert_false(snapshot_same(late_back, late));
	assert_null(snapshot_load(path, "a-2")); /* another archive's */
	char *missing = xasprintf("%s/none.json", dir);
	assert_null(snapshot_load(missing, "a-1"));
	/* not through a link (a run dir may be hostile) */
	char *link = xasprintf("%s/link.json", dir);
	assert_int_equal(symlink(path, link), 0);
	assert_null(snapshot_load(link, "a-1"));
	unlink(link);
	unlink(path);
	rmdir(dir);
	free(link);
	free(missing);
	free(path);
	snapshot_free(late_back);
	snapshot_free(late);
	snapshot_free(back);
	snapshot_free(sn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(cut_last_line_dropped),
	    cmocka_unit_test(bad_middle_line_refused),
	    cmocka_unit_test(recorded_image_id),
	    cmocka_unit_test(damaged_turns_refused),
	    cmocka_unit_test(no_run_start_refused),
	    cmocka_unit_test(found_and_applied),
	    cmocka_unit_test(hash_matches_rebuilt_conversation),
	    cmocka_unit_test(snapshot_bytes_counts),
	    cmocka_unit_test(snapshot_same_entry_for_entry),
	    cmocka_unit_test(snapshot_kept_in_a_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
