/* test_tui_replay.c: a recorded transcript read back for replay
 * (src/tui/transcript.c): where RUN is found, a cut last line left out,
 * damaged or empty transcripts refused, turn boundaries, and the model
 * rebuilt at a step equal to the one fed event by event, with the
 * workspace tree as it was at that step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tui/text.c"
#include "tui/sanitize.c"
#include "tui/tree.c"
#include "tui/model.c"
#include "tui/transcript.c"

#include <locale.h>
#include <unistd.h>

static char dir[] = "/tmp/assay-test-replay.XXXXXX";

/* A run: inputs staged, a file made in turn 1, another in turn 2,
 * the first deleted in turn 3; the last line cut (kill -9). */
static const char *RUN[] = {
    "{\"seq\":1,\"t\":0,\"type\":\"run_start\",\"provider\":\"script\","
    "\"model\":\"m\",\"run_dir\":\"/elsewhere\",\"sandbox\":{\"backend\":"
    "\"local\"},\"limits\":{\"max_turns\":9}}",
    "{\"seq\":2,\"t\":1,\"type\":\"workspace_change\",\"path\":\"input/"
    "d.csv\",\"kind\":\"created\",\"size\":4}",
    "{\"seq\":3,\"t\":1,\"type\":\"user_message\",\"text\":\"go\"}",
    "{\"seq\":4,\"t\":2,\"type\":\"model_request\",\"turn\":1}",
    "{\"seq\":5,\"t\":3,\"type\":\"text_delta\",\"turn\":1,\"text\":\"one\"}",
    "{\"seq\":6,\"t\":3,\"type\":\"tool_call\",\"id\":\"c1\",\"name\":"
    "\"shell\",\"arguments\":{\"command\":\"echo a > a.txt; seq 3\"}}",
    "{\"seq\":7,\"t\":4,\"type\":\"exec_start\",\"id\":\"c1\"}",
    "{\"seq\":8,\"t\":5,\"type\":\"exec_output\",\"id\":\"c1\",\"stream\":"
    "\"stdout\",\"bytes\":2,\"text\":\"1\\n\"}",
    "{\"seq\":9,\"t\":6,\"type\":\"exec_output\",\"id\":\"c1\",\"stream\":"
    "\"stdout\",\"bytes\":4,\"text\":\"2\\n3\\n\"}",
    "{\"seq\":10,\"t\":7,\"type\":\"exec_end\",\"id\":\"c1\",\"exit_code\":"
    "0,\"stdout_bytes\":6,\"stderr_bytes\":0}",
    "{\"seq\":11,\"t\":7,\"type\":\"tool_result\",\"id\":\"c1\","
    "\"content\":\"1\\n2\\n3\\n\"}",
    "{\"seq\":12,\"t\":7,\"type\":\"workspace_change\",\"path\":\"a.txt\","
    "\"kind\":\"created\",\"size\":2}",
    "{\"seq\":13,\"t\":8,\"type\":\"usage\",\"turn\":1,\"totals\":{"
    "\"input_tokens\":100,\"output_tokens\":10,\"cost_usd\":0.5}}",
    "{\"seq\":14,\"t\":9,\"type\":\"model_request\",\"turn\":2}",
    "{\"seq\":15,\"t\":9,\"type\":\"tool_call\",\"id\":\"c2\",\"name\":"
    "\"write_file\",\"arguments\":{\"path\":\"sub/b.txt\",\"content\":"
    "\"b\"}}",
    "{\"seq\":16,\"t\":9,\"type\":\"tool_result\",\"id\":\"c2\","
    "\"content\":\"wrote\"}",
    "{\"seq\":17,\"t\":9,\"type\":\"workspace_change\",\"path\":\"sub/"
    "b.txt\",\"kind\":\"created\",\"size\":1}",
    "{\"seq\":18,\"t\":10,\"type\":\"usage\",\"turn\":2,\"totals\":{"
    "\"input_tokens\":300,\"output_tokens\":30,\"cost_usd\":1.5}}",
    "",
    "{\"seq\":19,\"t\":11,\"type\":\"model_request\",\"turn\":3}",
    "{\"seq\":20,\"t\":12,\"type\":\"workspace_change\",\"path\":\"a.txt\","
    "\"kind\":\"deleted\",\"size\":0}",
    "{\"seq\":21,\"t\":13,\"type\":\"assistant_message\",\"turn\":3,"
    "\"text\":\"done\",\"tool_calls\":[]}",
    "{\"seq\":22,\"t\":13,\"type\":\"run_e", /* cut */
};
#define NLINES ((int)(sizeof RUN / sizeof RUN[0]))
#define NEVENTS 21

static char *write_run(const char *name, int nlines, const char *extra)
{
	char *d = xasprintf("%s/%s", dir, name);
	mkdir(d, 0755);
	char *p = xasprintf("%s/transcript.jsonl", d);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	for (int i = 0; i < nlines; i++)
		fprintf(f, "%s%s", RUN[i], i + 1 < nlines ? "\n" : "");
	if (extra)
		fputs(extra, f);
	fclose(f);
	free(p);
	return d;
}

static int setup(void **state)
{
	(void)state;
	setlocale(LC_ALL, "C.UTF-8");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char *cmd = xasprintf("rm -rf '%s'", dir);
	int rc = system(cmd);
	free(cmd);
	return rc;
}

static void test_load(void **state)
{
	(void)state;
	char *d = write_run("r1", NLINES, NULL);
	struct ui_transcript t;
	char *err = NULL;
	assert_int_equal(ui_transcript_load(&t, d, &err), 0);
	assert_int_equal(t.n, NEVENTS);
	assert_true(t.torn);
	assert_int_equal(t.nturns, 3);
	/* outputs are read from where the run is now */
	char *real = realpath(d, NULL);
	assert_string_equal(t.run_dir, real);
	assert_string_equal(json_str(t.ev[0], "run_dir", ""), real);
	free(real);
	assert_int_equal(ui_transcript_turn_step(&t, 1), 4);
	assert_int_equal(ui_transcript_turn_step(&t, 2), 14);
	assert_int_equal(ui_transcript_turn_step(&t, 3), 19);
	assert_int_equal(ui_transcript_turn_step(&t, 4), 0);
	assert_int_equal(t.turn[2], 0);
	assert_int_equal(t.turn[3], 1);
	assert_int_equal(t.turn[NEVENTS - 1], 3);
	ui_transcript_free(&t);
	/* the transcript file itself works too */
	char *p = xasprintf("%s/transcript.jsonl", d);
	assert_int_equal(ui_transcript_load(&t, p, &err), 0);
	assert_int_equal(t.n, NEVENTS);
	ui_transcript_free(&t);
	free(p);
	free(d);
}

static void test_refused(void **state)
{
	(void)state;
	struct ui_transcript t;
	char *err = NULL;
	assert_int_equal(ui_transcript_load(&t, "/nonexistent/run", &err), -1);
	assert_non_null(strstr(err, "no run at '/nonexistent/run'"));
	free(err);
	err = NULL;
	/* a run id that is not under .assay/runs/ */
	assert_int_equal(ui_transcript_load(&t, "no-such-id", &err), -1);
	assert_non_null(strstr(err, "run id under .assay/runs/"));
	free(err);
	err = NULL;
	/* an empty transcript */
	char *d = write_run("empty", 0, NULL);
	assert_int_equal(ui_transcript_load(&t, d, &err), -1);
	assert_non_null(strstr(err, "has no events"));
	free(err);
	err = NULL;
	free(d);
	/* only a cut line */
	d = write_run("cut", 0, "{\"seq\":1,\"ty");
	assert_int_equal(ui_transcript_load(&t, d, &err), -1);
	assert_non_null(strstr(err, "only a cut line"));
	free(err);
	err = NULL;
	free(d);
	/* damage before the end is not a killed run */
	d = write_run("bad", 3, "\nnot json\n{\"seq\":9,\"type\":\"idle\"}\n");
	assert_int_equal(ui_transcript_load(&t, d, &err), -1);
	assert_non_null(strstr(err, "line 4 is not a JSON event"));
	free(err);
	free(d);
	/* a directory without a transcript */
	d = xasprintf("%s/nodir", dir);
	mkdir(d, 0755);
	err = NULL;
	assert_int_equal(ui_transcript_load(&t, d, &err), -1);
	assert_non_null(strstr(err, "has no transcript.jsonl"));
	free(err);
	free(d);
}

/* What a frontend shows of a model, as one string. */
static char *describe(struct ui_model *m)
{
	struct buf b;
	buf_init(&b, 0);
	buf_printf(&b, "turn %d phase %d in %.0f out %.0f $%.2f t %lld\n",
	           m->turn, m->phase, m->in_tokens, m->out_tokens, m->cost,
	           (long long)ui_model_now(m));
	for (int i = 0; i < m->nitems; i++)
		buf_printf(&b, "item %d: %s\n", m->items[i].kind,
		           buf_str(&m->items[i].text));
	for (int i = 0; i < m->ncalls; i++) {
		struct ui_call *c = m->calls[i];
		buf_printf(&b, "call %s state %d bytes %llu lines %zu res %s\n",
		           c->id, c->state, (unsigned long long)c->bytes[0],
		           c->nline, c->result ? c->result : "-");
	}
	ui_tree_visible(&m->tree);
	for (size_t i = 0; i < m->tree.nvis; i++)
		buf_printf(&b, "node %s\n", m->tree.vis[i]->path);
	return buf_detach(&b);
}

static int has_node(struct ui_model *m, const char *path)
{
	return ui_tree_find(&m->tree, path) != NULL;
}

static void test_rebuild(void **state)
{
	(void)state;
	char *d = write_run("r2", NLINES, NULL);
	struct ui_transcript t;
	char *err = NULL;
	assert_int_equal(ui_transcript_load(&t, d, &err), 0);
	/* event by event vs rebuilt from nothing: the same model at
	 * every step, also after going back */
	struct ui_model live, back;
	ui_model_init(&live);
	ui_model_init(&back);
	ui_transcript_rebuild(&back, &t, t.n);
	for (int k = 1; k <= t.n; k++) {
		ui_transcript_feed(&live, &t, k - 1);
		ui_transcript_rebuild(&back, &t, k);
		char *a = describe(&live), *b = describe(&back);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	/* the tree as it was: inputs only before the first call */
	ui_transcript_rebuild(&back, &t, 11);
	assert_true(has_node(&back, "input/d.csv"));
	assert_false(has_node(&back, "a.txt"));
	ui_transcript_rebuild(&back, &t, 12);
	assert_true(has_node(&back, "a.txt"));
	assert_false(has_node(&back, "sub/b.txt"));
	/* turn 2 made sub/b.txt; turn 3 deleted a.txt */
	ui_transcript_rebuild(&back, &t, ui_transcript_turn_step(&t, 3));
	assert_true(has_node(&back, "sub/b.txt"));
	assert_true(has_node(&back, "a.txt"));
	assert_int_equal(back.turn, 3);
	ui_transcript_rebuild(&back, &t, t.n);
	assert_false(has_node(&back, "a.txt"));
	assert_true(has_node(&back, "sub/b.txt"));
	/* output and figures as they were at a step */
	ui_transcript_rebuild(&back, &t, 8);
	struct ui_call *c = ui_model_call(&back, "c1");
	assert_non_null(c);
	assert_int_equal(c->bytes[0], 2);
	assert_int_equal(c->state, UI_CALL_RUNNING);
	assert_int_equal(back.in_tokens, 0);
	assert_int_equal(ui_model_now(&back), 5); /* the event's time */
	ui_transcript_rebuild(&back, &t, 13);
	assert_int_equal(ui_model_call(&back, "c1")->bytes[0], 6);
	assert_int_equal(back.in_tokens, 100);
	assert_true(back.cost > 0.49 && back.cost < 0.51);
	ui_transcript_rebuild(&back, &t, 0);
	assert_int_equal(back.nitems, 0);
	assert_int_equal(back.ncalls, 0);
	ui_model_free(&live);
	ui_model_free(&back);
	ui_transcript_free(&t);
	free(d);
}

static char *write_lines(const char *name, const char *const *lines, int n)
{
	char *d = xasprintf("%s/%s", dir, name);
	mkdir(d, 0755);
	char *p = xasprintf("%s/transcript.jsonl", d);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s\n", lines[i]);
	fclose(f);
	free(p);
	return d;
}

/* Turn numbers come from the file: a hostile one must neither count
 * as two billion turns (the [ and ] keys walked them all) nor reach
 * the model as a number that does not fit an int. */
static void test_hostile_turns(void **state)
{
	(void)state;
	static const char *const lines[] = {
	    "{\"seq\":1,\"t\":0,\"type\":\"run_start\"}",
	    "{\"seq\":2,\"t\":1,\"type\":\"user_message\",\"text\":\"go\"}",
	    "{\"seq\":3,\"t\":2,\"type\":\"model_request\",\"turn\":"
	    "2000000000}",
	    "{\"seq\":4,\"t\":3,\"type\":\"assistant_message\",\"text\":\"a\"}",
	    "{\"seq\":5,\"t\":4,\"type\":\"model_request\",\"turn\":1e300}",
	    "{\"seq\":6,\"t\":5,\"type\":\"model_request\",\"turn\":-7}",
	    "{\"seq\":7,\"t\":6,\"type\":\"model_request\",\"turn\":\"x\"}",
	    "{\"seq\":8,\"t\":7,\"type\":\"model_request\",\"turn\":2.5}",
	    "{\"seq\":9,\"t\":8,\"type\":\"model_request\"}",
	};
	char *d = write_lines("hostile", lines, 9);
	struct ui_transcript t;
	char *err = NULL;
	assert_int_equal(ui_transcript_load(&t, d, &err), 0);
	assert_int_equal(t.n, 9);
	/* six requests are six turns, whatever they say */
	assert_int_equal(t.nturns, 6);
	assert_int_equal(ui_transcript_turn_step(&t, 1), 3);
	assert_int_equal(ui_transcript_turn_step(&t, 6), 9);
	assert_int_equal(ui_transcript_turn_step(&t, 7), 0);
	assert_int_equal(ui_transcript_turn_step(&t, -1), 0);
	/* absurd numbers are replaced by the turn's place */
	assert_int_equal(json_num(t.ev[2], "turn", 0), 1);
	assert_int_equal(json_num(t.ev[4], "turn", 0), 2);
	assert_int_equal(json_num(t.ev[8], "turn", 0), 6);
	struct ui_model m;
	ui_model_init(&m);
	ui_transcript_rebuild(&m, &t, t.n);
	assert_int_equal(m.turn, 6);
	ui_model_free(&m);
	/* ] and [ */
	assert_int_equal(ui_transcript_turn_jump(&t, 1, 1), 3);
	assert_int_equal(ui_transcript_turn_jump(&t, 3, 1), 5);
	assert_int_equal(ui_transcript_turn_jump(&t, 9, 1), 9);
	assert_int_equal(ui_transcript_turn_jump(&t, 4, -1), 3);
	assert_int_equal(ui_transcript_turn_jump(&t, 3, -1), 1);
	assert_int_equal(ui_transcript_turn_jump(&t, 5, -1), 3);
	ui_transcript_free(&t);
	free(d);
}

/* The jump agrees with a walk over every step, on many turns. */
static void test_turn_jump_many(void **state)
{
	(void)state;
	char *d = xasprintf("%s/many", dir);
	mkdir(d, 0755);
	char *p = xasprintf("%s/transcript.jsonl", d);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	int seq = 0;
	fprintf(f, "{\"seq\":%d,\"type\":\"run_start\"}\n", ++seq);
	for (int k = 1; k <= 300; k++) {
		fprintf(f,
		        "{\"seq\":%d,\"type\":\"model_request\",\"turn\":%d}\n",
		        ++seq, k);
		for (int j = 0; j < k % 4; j++)
			fprintf(f, "{\"seq\":%d,\"type\":\"text_delta\"}\n",
			        ++seq);
	}
	fclose(f);
	struct ui_transcript t;
	char *err = NULL;
	assert_int_equal(ui_transcript_load(&t, d, &err), 0);
	assert_int_equal(t.nturns, 300);
	for (int at = 1; at <= t.n; at++) {
		int next = t.n, prev = 1;
		for (int k = 1; k <= t.nturns; k++) {
			int s = ui_transcript_turn_step(&t, k);
			if (s > at && s < next)
				next = s;
			if (s < at && s > prev)
				prev = s;
		}
		assert_int_equal(ui_transcript_turn_jump(&t, at, 1), next);
		assert_int_equal(ui_transcript_turn_jump(&t, at, -1), prev);
	}
	ui_transcript_free(&t);
	free(p);
	free(d);
}

#define H(c) "\"request_hash\":\"" c c c c c c c c "\""
/* A resumed run, as resume.c writes it: the recorded turns, run_resume,
 * each recorded turn again from the cache (model_request + usage,
 * "replayed": true), then the live part; here the recorded run was cut
 * in turn 3, which is asked again live. */
static void test_resumed(void **state)
{
	(void)state;
	static const char *const lines[] = {
	    "{\"seq\":1,\"type\":\"run_start\"}",
	    "{\"seq\":2,\"type\":\"user_message\",\"text\":\"go\"}",
	    "{\"seq\":3,\"type\":\"model_request\",\"turn\":1," H("a") "}",
	    "{\"seq\":4,\"type\":\"usage\",\"turn\":1,\"totals\":{"
	    "\"input_tokens\":10}}",
	    "{\"seq\":5,\"type\":\"model_request\",\"turn\":2," H("b") "}",
	    "{\"seq\":6,\"type\":\"usage\",\"turn\":2,\"totals\":{"
	    "\"input_tokens\":30}}",
	    "{\"seq\":7,\"type\":\"model_request\",\"turn\":3," H("c") "}",
	    "{\"seq\":8,\"type\":\"run_resume\"}",
	    "{\"seq\":9,\"type\":\"model_request\",\"turn\":1," H(
	        "a") ",\"cached\":true,\"replayed\":true}",
	    "{\"seq\":10,\"type\":\"usage\",\"turn\":1,\"replayed\":true,"
	    "\"totals\":{\"input_tokens\":10}}",
	    "{\"seq\":11,\"type\":\"model_request\",\"turn\":2," H(
	        "b") ",\"cached\":true,\"replayed\":true}",
	    "{\"seq\":12,\"type\":\"usage\",\"turn\":2,\"replayed\":true,"
	    "\"totals\":{\"input_tokens\":30}}",
	    "{\"seq\":13,\"type\":\"model_request\",\"turn\":3," H("c") "}",
	    "{\"seq\":14,\"type\":\"usage\",\"turn\":3,\"totals\":{"
	    "\"input_tokens\":60}}",
	    "{\"seq\":15,\"type\":\"user_message\",\"text\":\"more\"}",
	    "{\"seq\":16,\"type\":\"model_request\",\"turn\":4," H("d") "}",
	    /* a replayed request with no recorded twin stays */
	    "{\"seq\":17,\"type\":\"model_request\",\"turn\":5," H(
	        "e") ",\"cached\":true,\"replayed\":true}",
	};
	char *d = write_lines("resumed", lines, 17);
	struct ui_transcript t;
	char *err = NULL;
	assert_int_equal(ui_transcript_load(&t, d, &err), 0);
	assert_int_equal(t.dropped, 4);
	assert_int_equal(t.n, 13);
	for (int i = 0; i < t.n; i++)
		if (json_num(t.ev[i], "seq", 0) >= 9 &&
		    json_num(t.ev[i], "seq", 0) <= 12)
			fail_msg("replayed event %d kept",
			         (int)json_num(t.ev[i], "seq", 0));
	/* turns 1, 2, 3 (asked twice: once), 4, 5 */
	assert_int_equal(t.nturns, 5);
	assert_int_equal(ui_transcript_turn_step(&t, 3), 7);
	assert_int_equal(ui_transcript_turn_step(&t, 4), 12);
	assert_int_equal(ui_transcript_turn_step(&t, 5), 13);
	/* the totals go on from the recorded ones */
	struct ui_model m;
	ui_model_init(&m);
	ui_transcript_rebuild(&m, &t, 10);
	assert_int_equal(m.in_tokens, 60);
	assert_int_equal(m.turn, 3);
	ui_model_free(&m);
	ui_transcript_free(&t);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_load),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_rebuild),
	    cmocka_unit_test(test_hostile_turns),
	    cmocka_unit_test(test_turn_jump_many),
	    cmocka_unit_test(test_resumed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
