/* test_tui_model.c: the TUI's model is built from events only
 * (src/tui/model.c, tree.c): conversation items with streamed text,
 * tool calls with a bounded ring of output lines (sanitised, \r
 * overwritten), the switch to the output files when the events lost
 * output, the workspace tree with its marks, and the run's phases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tui/text.c"
#include "tui/sanitize.c"
#include "tui/tree.c"
#include "tui/model.c"

#include <locale.h>

static void ev(struct ui_model *m, const char *json)
{
	cJSON *e = cJSON_Parse(json);
	if (!e)
		fail_msg("bad test event: %s", json);
	ui_model_event(m, e);
	cJSON_Delete(e);
}

static void start(struct ui_model *m)
{
	ui_model_init(m);
	ev(m,
	   "{\"seq\":1,\"t\":0,\"type\":\"run_start\",\"provider\":\"script\","
	   "\"model\":\"m1\",\"sandbox\":{\"backend\":\"local\"},\"ask\":"
	   "\"risky\",\"workspace\":\"/w\",\"run_dir\":\"/r\",\"limits\":"
	   "{\"max_turns\":7}}");
}

static void test_conversation(void **state)
{
	(void)state;
	struct ui_model m;
	start(&m);
	assert_string_equal(m.model_name, "m1");
	assert_string_equal(m.backend, "local");
	assert_int_equal(m.max_turns, 7);
	ev(&m, "{\"t\":1,\"type\":\"user_message\",\"text\":\"hi\"}");
	ev(&m, "{\"t\":2,\"type\":\"model_request\",\"turn\":1}");
	assert_int_equal(m.phase, UI_REQUESTING);
	ev(&m, "{\"t\":3,\"type\":\"text_delta\",\"turn\":1,\"text\":\"Hel\"}");
	ev(&m, "{\"t\":4,\"type\":\"text_delta\",\"turn\":1,\"text\":\"lo\"}");
	assert_int_equal(m.nitems, 2);
	assert_int_equal(m.items[1].kind, UI_ITEM_ASSISTANT);
	assert_string_equal(buf_str(&m.items[1].text), "Hello");
	assert_true(m.items[1].streaming);
	/* a retry voids what the failed try streamed */
	ev(&m, "{\"t\":5,\"type\":\"error\",\"category\":\"provider_server\","
	       "\"message\":\"500\",\"retry_in_ms\":100,\"turn\":1}");
	assert_int_equal(m.nitems, 2);
	assert_int_equal(m.items[1].kind, UI_ITEM_ERROR);
	ev(&m, "{\"t\":6,\"type\":\"text_delta\",\"turn\":1,\"text\":\"Hi \"}");
	ev(&m, "{\"t\":7,\"type\":\"assistant_message\",\"turn\":1,\"text\":"
	       "\"Hi there\",\"tool_calls\":[]}");
	assert_int_equal(m.nitems, 3);
	assert_string_equal(buf_str(&m.items[2].text), "Hi there");
	assert_false(m.items[2].streaming);
	ev(&m, "{\"t\":8,\"type\":\"usage\",\"totals\":{\"input_tokens\":"
	       "1200,\"output_tokens\":30,\"cost_usd\":0.5}}");
	assert_true(m.in_tokens == 1200 && m.cost == 0.5);
	ev(&m, "{\"t\":9,\"type\":\"idle\",\"reason\":\"answered\"}");
	assert_int_equal(m.phase, UI_IDLE);
	ui_model_free(&m);
}

static void test_call_output(void **state)
{
	(void)state;
	struct ui_model m;
	start(&m);
	ui_tree_set(&m.tree, "old.txt", UI_N_FILE, 1, 1, UI_MARK_NEW);
	ev(&m, "{\"t\":10,\"type\":\"tool_call\",\"id\":\"c/../1\",\"name\":"
	       "\"shell\",\"arguments\":{\"command\":\"make\\nmake test\"}}");
	assert_int_equal(m.ncalls, 1);
	struct ui_call *c = m.calls[0];
	assert_string_equal(c->summary, "make");
	assert_int_equal(m.items[0].kind, UI_ITEM_CALL);
	/* announced is not started: the marks stay */
	assert_int_equal(ui_tree_find(&m.tree, "old.txt")->mark, UI_MARK_NEW);
	ev(&m, "{\"t\":11,\"type\":\"exec_start\",\"id\":\"c/../1\"}");
	assert_int_equal(c->state, UI_CALL_RUNNING);
	/* a command that starts clears the marks of the last one */
	assert_int_equal(ui_tree_find(&m.tree, "old.txt")->mark, UI_MARK_NONE);
	assert_true(m.new_call);
	assert_int_equal(m.active_call, 0);
	ev(&m,
	   "{\"t\":12,\"type\":\"exec_output\",\"id\":\"c/../1\",\"stream\":"
	   "\"stdout\",\"bytes\":27,\"text\":\"10%\\r100%\\nA\\u001b]0;"
	   "x\\u0007B"
	   "\\n\\u001b[31mpart\"}");
	ev(&m,
	   "{\"t\":13,\"type\":\"exec_output\",\"id\":\"c/../1\",\"stream\":"
	   "\"stderr\",\"bytes\":5,\"text\":\"oops\\n\"}");
	assert_int_equal(c->nline, 3);
	assert_string_equal(ui_call_line(c, 2)->st, "100%");
	assert_string_equal(ui_call_line(c, 1)->st, "AB");
	assert_string_equal(ui_call_line(c, 0)->st, "oops");
	assert_int_equal(ui_call_line(c, 0)->err, 1);
	assert_true(ui_term_open(&c->term[0])); /* "part" is still open */
	assert_false(c->truncated);
	ev(&m,
	   "{\"t\":14,\"type\":\"exec_output\",\"id\":\"c/../1\",\"stream\":"
	   "\"stdout\",\"bytes\":90000,\"text\":\"x\",\"truncated\":true}");
	assert_true(c->truncated);
	assert_int_equal(c->bytes[0], 90027);
	ev(&m,
	   "{\"t\":50,\"type\":\"exec_end\",\"id\":\"c/../1\",\"exit_code\":2,"
	   "\"signal\":0,\"timed_out\":false,\"duration_ms\":39,"
	   "\"stdout_bytes\":90030,\"stderr_bytes\":5}");
	assert_int_equal(c->state, UI_CALL_DONE);
	assert_int_equal(c->exit_code, 2);
	assert_int_equal(c->duration_ms, 39);
	assert_int_equal(c->nline, 4); /* the open line was flushed */
	char *p =
	    ui_st_plain(ui_call_line(c, 0)->st, strlen(ui_call_line(c, 0)->st));
	assert_string_equal(p, "partx");
	free(p);
	/* the files of a call, with its id made safe */
	char *f = ui_call_file(&m, c, 1);
	assert_string_equal(f, "/r/exec/c____1.stderr");
	free(f);
	ui_model_free(&m);
}

static void test_ring_is_bounded(void **state)
{
	(void)state;
	struct ui_model m;
	start(&m);
	ev(&m, "{\"type\":\"tool_call\",\"id\":\"a\",\"name\":\"shell\","
	       "\"arguments\":{\"command\":\"yes\"}}");
	cJSON *e = cJSON_Parse("{\"type\":\"exec_output\",\"id\":\"a\","
	                       "\"stream\":\"stdout\"}");
	char *chunk = xmalloc(8193);
	for (int i = 0; i < 8192; i += 8)
		memcpy(chunk + i, "line..\n\n", 8);
	chunk[8192] = '\0';
	cJSON_AddStringToObject(e, "text", chunk);
	for (int i = 0; i < 200; i++)
		ui_model_event(&m, e);
	struct ui_call *c = m.calls[0];
	assert_int_equal(c->nline, UI_CALL_LINES_MAX);
	assert_true(c->line_bytes <= UI_CALL_BYTES_MAX);
	assert_true(c->lines_dropped > 0);
	assert_int_equal(c->bytes[0], 200 * 8192);
	cJSON_Delete(e);
	free(chunk);
	ui_model_free(&m);
}

static void test_tree_and_end(void **state)
{
	(void)state;
	struct ui_model m;
	start(&m);
	ev(&m, "{\"type\":\"workspace_change\",\"path\":\"input/a.csv\","
	       "\"kind\":\"created\",\"size\":10}");
	ev(&m, "{\"type\":\"workspace_change\",\"path\":\"out/deep/b.png\","
	       "\"kind\":\"created\",\"size\":20}");
	struct ui_node *n = ui_tree_find(&m.tree, "out/deep/b.png");
	assert_non_null(n);
	assert_int_equal(n->mark, UI_MARK_NEW);
	assert_int_equal(n->parent->type, UI_N_DIR);
	ev(&m, "{\"type\":\"tool_call\",\"id\":\"w\",\"name\":\"write_file\","
	       "\"arguments\":{\"path\":\"input/a.csv\",\"content\":\"x\"}}");
	ev(&m, "{\"type\":\"tool_result\",\"id\":\"w\",\"content\":\"wrote 1 "
	       "bytes\",\"is_error\":false}");
	assert_int_equal(m.calls[0]->state, UI_CALL_DONE);
	/* the listing after a result tells what that call changed */
	ev(&m, "{\"type\":\"workspace_change\",\"path\":\"input/a.csv\","
	       "\"kind\":\"modified\",\"size\":1}");
	assert_int_equal(ui_tree_find(&m.tree, "input/a.csv")->mark,
	                 UI_MARK_MOD);
	assert_int_equal(ui_tree_find(&m.tree, "out/deep/b.png")->mark,
	                 UI_MARK_NONE);
	assert_string_equal(m.calls[0]->detail, "x");
	ev(&m, "{\"type\":\"workspace_change\",\"path\":\"out/deep/b.png\","
	       "\"kind\":\"deleted\",\"size\":0}");
	assert_null(ui_tree_find(&m.tree, "out/deep/b.png"));
	/* directories first, then names */
	ui_tree_set(&m.tree, "a_file", UI_N_FILE, 1, 0, UI_MARK_NONE);
	ui_tree_set(&m.tree, "z_dir/f", UI_N_FILE, 1, 0, UI_MARK_NONE);
	ui_tree_visible(&m.tree);
	assert_string_equal(m.tree.vis[0]->name, "input");
	assert_string_equal(m.tree.vis[m.tree.nvis - 1]->name, "a_file");
	ev(&m, "{\"type\":\"run_end\",\"status\":\"completed\",\"exit_code\":0,"
	       "\"outputs\":[{\"path\":\"o.csv\",\"present\":true,\"bytes\":3,"
	       "\"copied_to\":\"out/o.csv\"}],\"totals\":{\"turns\":2,"
	       "\"duration_ms\":1500},\"archive\":\"/r/w.tar.gz\"}");
	assert_int_equal(m.phase, UI_ENDED);
	assert_int_equal(m.exit_code, 0);
	struct ui_item *last = &m.items[m.nitems - 1];
	assert_int_equal(last->kind, UI_ITEM_END);
	assert_non_null(
	    strstr(buf_str(&last->text), "output o.csv -> out/o.csv"));
	assert_int_equal(m.sandbox_running, 0);
	/* assay resume: the run goes on after its recorded end, in the
	 * resumed run dir's own workspace, the rest kept */
	ev(&m, "{\"type\":\"run_resume\",\"run_dir\":\"/copy\",\"provider\":"
	       "\"script\",\"model\":\"m2\",\"sandbox\":{\"backend\":"
	       "\"local\"},\"workspace\":\"/copy/workspace\"}");
	assert_int_equal(m.phase, UI_STARTING);
	assert_int_equal(m.sandbox_running, 1);
	assert_string_equal(m.workspace, "/copy/workspace");
	assert_string_equal(m.model_name, "m2");
	assert_string_equal(m.ask, "risky");
	assert_int_equal(m.max_turns, 7);
	/* that resume (an older record: {backend} alone) noted nothing */
	assert_int_not_equal(m.items[m.nitems - 1].kind, UI_ITEM_NOTICE);
	/* a resume on another image than the run had: a notice naming
	 * both ids */
	int before = m.nitems;
	ev(&m, "{\"type\":\"run_resume\",\"sandbox\":{\"backend\":"
	       "\"docker\",\"image\":\"a:1\",\"image_id\":\"sha256:2\","
	       "\"repo_digests\":[],\"image_id_was\":\"sha256:1\"}}");
	assert_int_equal(m.nitems, before + 1);
	assert_int_equal(m.items[before].kind, UI_ITEM_NOTICE);
	assert_string_equal(
	    buf_str(&m.items[before].text),
	    "the image changed since the run was recorded: it "
	    "ran on sha256:1, this sandbox runs sha256:2 (a:1)");
	ui_model_free(&m);
}

/* progress (never recorded): named after its first second, gone when
 * the work is done */
static void test_progress(void **state)
{
	(void)state;
	struct ui_model m;
	start(&m);
	ev(&m,
	   "{\"type\":\"progress\",\"what\":\"hashing\",\"subject\":"
	   "\"input/big.bin\",\"done\":1e8,\"total\":2e9,\"elapsed_ms\":500}");
	assert_null(m.progress);
	ev(&m, "{\"type\":\"progress\",\"what\":\"hashing\",\"subject\":"
	       "\"input/"
	       "big.bin\",\"done\":1.4e9,\"total\":2e9,\"elapsed_ms\":1000}");
	assert_non_null(m.progress);
	assert_string_equal(m.progress, "hashing input/big.bin: 70%, 1.4 GB/s");
	ev(&m,
	   "{\"type\":\"progress\",\"what\":\"hashing\",\"subject\":"
	   "\"input/big.bin\",\"done\":2e9,\"total\":2e9,\"elapsed_ms\":1400}");
	assert_null(m.progress);
	/* work that failed after showing progress ends with done -1 */
	ev(&m, "{\"type\":\"progress\",\"what\":\"hashing\",\"subject\":"
	       "\"input/"
	       "big.bin\",\"done\":1.4e9,\"total\":2e9,\"elapsed_ms\":1000}");
	assert_non_null(m.progress);
	ev(&m, "{\"type\":\"progress\",\"what\":\"hashing\",\"subject\":"
	       "\"\",\"done\":-1,\"total\":0,\"elapsed_ms\":0}");
	assert_null(m.progress);
	/* a total not known ahead (the docker archive): bytes so far */
	ev(&m,
	   "{\"type\":\"progress\",\"what\":\"saving\",\"subject\":"
	   "\"the workspace\",\"done\":3e8,\"total\":0,\"elapsed_ms\":2000}");
	assert_string_equal(m.progress,
	                    "saving the workspace: 300 MB, 150 MB/s");
	ev(&m,
	   "{\"type\":\"progress\",\"what\":\"saving\",\"subject\":"
	   "\"the workspace\",\"done\":4e8,\"total\":4e8,\"elapsed_ms\":2500}");
	assert_null(m.progress);
	ui_model_free(&m);
}

static void test_approvals(void **state)
{
	(void)state;
	struct ui_model m;
	start(&m);
	ev(&m, "{\"type\":\"tool_call\",\"id\":\"r\",\"name\":\"shell\","
	       "\"arguments\":{\"command\":\"rm -rf data\"}}");
	ev(&m, "{\"type\":\"approval_request\",\"id\":\"r\",\"tool\":"
	       "\"shell\",\"command\":\"rm -rf data\",\"reasons\":[]}");
	assert_true(m.calls[0]->asking);
	assert_int_equal(m.calls[0]->state, UI_CALL_PENDING);
	ev(&m, "{\"type\":\"approval\",\"id\":\"r\",\"decision\":"
	       "\"denied\",\"by\":\"user\"}");
	assert_false(m.calls[0]->asking);
	assert_int_equal(m.calls[0]->state, UI_CALL_DENIED);
	/* a result after the denial keeps the call denied */
	ev(&m, "{\"type\":\"tool_result\",\"id\":\"r\",\"content\":"
	       "\"denied by the user\",\"is_error\":true}");
	assert_int_equal(m.calls[0]->state, UI_CALL_DENIED);
	ui_model_free(&m);
}

static void test_tree_sync_marks(void **state)
{
	(void)state;
	struct ui_tree t;
	ui_tree_init(&t);
	cJSON *l = cJSON_Parse("[{\"path\":\"d\",\"type\":\"dir\"},"
	                       "{\"path\":\"d/a\",\"type\":\"file\",\"size\":1,"
	                       "\"mtime\":5},{\"path\":\"b\",\"type\":\"file\","
	                       "\"size\":2,\"mtime\":5}]");
	ui_tree_sync(&t, l, 0);
	cJSON_Delete(l);
	ui_tree_clear_marks(&t);
	l = cJSON_Parse("[{\"path\":\"d\",\"type\":\"dir\"},"
	                "{\"path\":\"d/a\",\"type\":\"file\",\"size\":1,"
	                "\"mtime\":6},{\"path\":\"c\",\"type\":\"file\"}]");
	ui_tree_sync(&t, l, 0);
	cJSON_Delete(l);
	assert_int_equal(ui_tree_find(&t, "d/a")->mark, UI_MARK_MOD);
	assert_int_equal(ui_tree_find(&t, "c")->mark, UI_MARK_NEW);
	assert_null(ui_tree_find(&t, "b")); /* gone */
	assert_int_equal(t.count, 3);
	ui_tree_free(&t);
}

/* image_sent: kept with its call, the line the Tools pane shows, the
 * newest sent image for p until a newer workspace image; a run dir
 * name not of the form images/<sha256>.<ext> is not kept. */
static void test_image_sent(void **state)
{
	(void)state;
	struct ui_model m;
	start(&m);
	ev(&m, "{\"t\":1,\"type\":\"tool_call\",\"id\":\"c1\",\"name\":"
	       "\"view_image\",\"arguments\":{\"path\":\"out/a.png\"}}");
	ev(&m, "{\"t\":2,\"type\":\"tool_result\",\"id\":\"c1\","
	       "\"content\":\"ok\",\"is_error\":false}");
	assert_int_equal(m.last_sent_call, -1);
	ev(&m, "{\"t\":3,\"type\":\"image_sent\",\"id\":\"c1\",\"path\":"
	       "\"out/a.png\",\"how\":\"view\",\"width\":800,\"height\":450,"
	       "\"tokens\":480,\"file\":\"images/"
	       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"
	       "f.png\"}");
	struct ui_call *c = m.calls[0];
	assert_int_equal(c->nsent, 1);
	assert_string_equal(c->sent[0].file,
	                    "images/"
	                    "0123456789abcdef0123456789abcdef0123456789abcdef01"
	                    "23456789abcdef.png");
	assert_int_equal(m.last_sent_call, 0);
	assert_int_equal(m.last_sent_idx, 0);
	char *line = ui_sent_line(&c->sent[0], "x", c->summary);
	assert_string_equal(line, "sent to the model: 800x450, ~480 tokens");
	free(line);
	/* another path than the call's own is named */
	line = ui_sent_line(&c->sent[0], "x", "python3 plot.py");
	assert_string_equal(
	    line, "out/a.png: sent to the model: 800x450, ~480 tokens");
	free(line);
	ev(&m, "{\"t\":4,\"type\":\"image_sent\",\"id\":\"c1\",\"path\":"
	       "\"out/b.png\",\"how\":\"view\",\"error\":\"too big\"}");
	assert_int_equal(c->nsent, 2);
	assert_null(c->sent[1].file);
	line = ui_sent_line(&c->sent[1], "x", c->summary);
	assert_string_equal(line, "out/b.png: not sent to the model: too big");
	free(line);
	assert_int_equal(m.last_sent_idx, 0); /* a refusal is not newest */
	/* a name outside images/: shown, never opened */
	ev(&m, "{\"t\":5,\"type\":\"image_sent\",\"id\":\"c1\",\"path\":"
	       "\"out/a.png\",\"how\":\"view\",\"width\":8,\"height\":4,"
	       "\"tokens\":1,\"file\":\"images/../../etc/passwd\"}");
	assert_null(c->sent[2].file);
	assert_int_equal(m.last_sent_idx, 2);
	assert_ptr_equal(ui_model_sent_copy(&m, "out/a.png"), &c->sent[2]);
	assert_null(ui_model_sent_copy(&m, "out/b.png")); /* refused */
	/* the image changed after it was sent: no copy of it as it is,
	 * and view_image's is no longer the newest image */
	ev(&m, "{\"t\":6,\"type\":\"workspace_change\",\"path\":"
	       "\"out/a.png\",\"kind\":\"modified\",\"size\":9}");
	assert_int_equal(m.last_sent_call, -1);
	assert_null(ui_model_sent_copy(&m, "out/a.png"));
	/* an image sent with a call's result: its copy, not the newest */
	ev(&m, "{\"t\":7,\"type\":\"image_sent\",\"id\":\"c1\",\"path\":"
	       "\"out/a.png\",\"how\":\"auto\",\"width\":8,\"height\":4,"
	       "\"tokens\":1,\"file\":\"images/"
	       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"
	       "f.png\"}");
	assert_int_equal(m.last_sent_call, -1);
	assert_ptr_equal(ui_model_sent_copy(&m, "out/a.png"), &c->sent[3]);
	ui_model_free(&m);
}

static void test_sent_file_names(void **state)
{
	(void)state;
	assert_true(ev_image_file_ok("images/"
	                            "0123456789abcdef0123456789abcdef0123456789"
	                            "abcdef0123456789abcdef.png"));
	assert_true(ev_image_file_ok("images/"
	                            "0123456789abcdef0123456789abcdef0123456789"
	                            "abcdef0123456789abcdef.jpeg"));
	assert_false(ev_image_file_ok("images/"
	                             "0123456789abcdef0123456789abcdef012345678"
	                             "9abcdef0123456789abcdef"));
	assert_false(ev_image_file_ok("images/"
	                             "0123456789abcdef0123456789abcdef012345678"
	                             "9abcdef0123456789abcdef."));
	assert_false(ev_image_file_ok("images/"
	                             "0123456789abcdef0123456789abcdef012345678"
	                             "9abcdef0123456789abcdef.png/x"));
	assert_false(ev_image_file_ok("images/"
	                             "0123456789abcdef0123456789abcdef012345678"
	                             "9abcdef0123456789abcdef.pngpng"));
	assert_false(ev_image_file_ok("images/"
	                             "0123456789abcdef0123456789abcdef012345678"
	                             "9abcdef0123456789abcdef.PNG"));
	assert_false(ev_image_file_ok("images/../"
	                             "0123456789abcdef0123456789abcdef012345678"
	                             "9abcdef0123456789abcdef.png"));
	assert_false(ev_image_file_ok("/images/"
	                             "0123456789abcdef0123456789abcdef012345678"
	                             "9abcdef0123456789abcdef.png"));
	assert_false(ev_image_file_ok("images/0123.png"));
	assert_false(ev_image_file_ok(NULL));
}

int main(void)
{
	setlocale(LC_ALL, "C.UTF-8");
	unsetenv("ASSAY_TUI_CLOCK_MS");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_conversation),
	    cmocka_unit_test(test_call_output),
	    cmocka_unit_test(test_ring_is_bounded),
	    cmocka_unit_test(test_tree_and_end),
	    cmocka_unit_test(test_approvals),
	    cmocka_unit_test(test_progress),
	    cmocka_unit_test(test_tree_sync_marks),
	    cmocka_unit_test(test_image_sent),
	    cmocka_unit_test(test_sent_file_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
