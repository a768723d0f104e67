/* test_stream_unknown.c: content of types assay does not read, in each
 * dialect's stream reader (anthropic.c, responses.c, chat_stream.c):
 * it never becomes a call, is kept as it came with its deltas merged,
 * and the request built from the answer sends it back in order, the
 * calls filled in from the neutral calls and without the notes shown to
 * the person. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "assay/json.h"
#include "llm/llm_internal.h"

#define EV(name, json) "event: " name "\ndata: " json "\n\n"

/* model "m", at most 100 tokens, not stored */
static const struct llm_wire_args args = {.model = "m",
                                          .max_output_tokens = 100};

static const char anth_stream[] = EV(
    "message_start", "{\"type\":\"message_start\",\"message\":{\"usage\":"
                     "{\"input_tokens\":5,\"output_tokens\":1}}}")
    EV("content_block_start",
       "{\"type\":\"content_block_start\",\"index\":0,"
       "\"content_block\":{\"type\":\"text\",\"text\":"
       "\"\"}}") EV("content_block_delta",
                    "{\"type\":\"content_block_delta\",\"index\":0,"
                    "\"delta\":{\"type\":\"text_delta\",\"text\":"
                    "\"Let me look.\"}}") EV("content_block_stop",
                                             "{\"type\":\"content_block_stop\","
                                             "\"index\":0}")
        EV("content_block_start",
           "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{"
           "\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":"
           "\"web_search\",\"input\":{}}}")
            EV("content_block_delta",
               "{\"type\":\"content_block_delta\",\"index\":1,"
               "\"delta\":{\"type\":\"input_json_delta\","
               "\"partial_json\":\"{\\\"query\\\":\"}}")
                EV("content_block_delta",
                   "{\"type\":\"content_block_delta\",\"index\":1,"
                   "\"delta\":{\"type\":\"input_json_delta\","
                   "\"partial_json\":\"\\\"cats\\\"}\"}}")
                    EV("content_block_stop",
                       "{\"type\":\"content_block_stop\",\"index\":1}")
                        EV("future_event", "{\"type\":\"future_event\"}") EV(
                            "content_block_start",
                            "{\"type\":\"content_block_start\",\"index\":2,"
                            "\"content_block\":{"
                            "\"type\":\"web_search_tool_result\",\"tool_use_"
                            "id\":\"srvtoolu_1\","
                            "\"content\":[{\"type\":\"web_search_result\","
                            "\"url\":\"u\"}]}}") EV("content_block_stop",
                                                    "{\"type\":\"content_block_"
                                                    "stop\",\"index\":2}")
                            EV("content_block_start",
                               "{\"type\":\"content_block_start\",\"index\":3,"
                               "\"content_block\":{\"type\":\"text\",\"text\":"
                               "\"\"}}") EV("content_block_delta",
                                            "{\"type\":\"content_block_delta\","
                                            "\"index\":3,"
                                            "\"delta\":{\"type\":\"text_"
                                            "delta\",\"text\":"
                                            "\"Cats \"}}")
                                EV("content_block_delta",
                                   "{\"type\":\"content_block_delta\","
                                   "\"index\":3,\"delta\":{\"type\":"
                                   "\"citations_delta\",\"citation\":{\"type\":"
                                   "\"web_search_result_location\",\"url\":"
                                   "\"u\"}}}") EV("content_block_delta",
                                                  "{\"type\":\"content_block_"
                                                  "delta\",\"index\":3,"
                                                  "\"delta\":{\"type\":\"text_"
                                                  "delta\",\"text\":"
                                                  "\"purr.\"}}")
                                    EV("content_block_stop",
                                       "{\"type\":\"content_block_stop\","
                                       "\"index\":3}")
                                        EV("content_block_start",
                                           "{\"type\":\"content_block_start\","
                                           "\"index\":4,\"content_block\":{"
                                           "\"type\":\"tool_use\",\"id\":"
                                           "\"toolu_1\",\"name\":\"shell\","
                                           "\"input\":{}}}")
                                            EV("content_block_delta",
                                               "{\"type\":\"content_block_"
                                               "delta\",\"index\":4,"
                                               "\"delta\":{\"type\":\"input_"
                                               "json_delta\","
                                               "\"partial_json\":\"{"
                                               "\\\"command\\\":\\\"ls\\\"}"
                                               "\"}}")
                                                EV("content_block_stop",
                                                   "{\"type\":\"content_block_"
                                                   "stop\",\"index\":4}")
                                                    EV("message_delta",
                                                       "{\"type\":\"message_"
                                                       "delta\",\"delta\":{"
                                                       "\"stop_reason\":\"tool_"
                                                       "use\"},\"usage\":{"
                                                       "\"output_tokens\":9}}")
                                                        EV("message_stop",
                                                           "{\"type\":"
                                                           "\"message_stop\"}");

/* The answer a stream reader rebuilt, as the session keeps it: the
 * neutral assistant message with its items, then a result per call. */
static cJSON *history(struct chat_stream *s, cJSON *items)
{
	cJSON *msgs = cJSON_CreateArray();
	cJSON *u = cJSON_CreateObject();
	cJSON_AddStringToObject(u, "role", "user");
	cJSON_AddStringToObject(u, "content", "go");
	cJSON_AddItemToArray(msgs, u);
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "role", "assistant");
	cJSON_AddStringToObject(a, "content", buf_str(&s->text));
	cJSON *calls = chat_stream_tool_calls(s);
	cJSON_AddItemToObject(a, "tool_calls", calls);
	cJSON_AddItemToObject(a, "provider_items", items);
	cJSON_AddItemToArray(msgs, a);
	const cJSON *c;
	cJSON_ArrayForEach(c, calls)
	{
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "role", "tool");
		cJSON_AddStringToObject(t, "tool_call_id",
		                        json_str(c, "id", ""));
		cJSON_AddStringToObject(t, "content", "ok");
		cJSON_AddItemToArray(msgs, t);
	}
	return msgs;
}

/* The "type"s of an array of objects, joined with spaces. */
static char *types_of(const cJSON *arr)
{
	struct buf b;
	buf_init(&b, 0);
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		buf_printf(&b, "%s%s", b.len ? " " : "",
		           json_str(it, "type", json_str(it, "role", "?")));
	}
	return buf_detach(&b);
}

static void test_anthropic(void **state)
{
	(void)state;
	struct chat_stream s;
	anth_stream_init(&s, 1, NULL, NULL);
	assert_int_equal(chat_stream_feed(&s, anth_stream, strlen(anth_stream)),
	                 0);
	assert_int_equal(chat_stream_finish(&s), 0);
	/* only the tool_use is a call; the server's use is shown */
	cJSON *calls = chat_stream_tool_calls(&s);
	assert_int_equal(cJSON_GetArraySize(calls), 1);
	assert_string_equal(json_str(cJSON_GetArrayItem(calls, 0), "name", ""),
	                    "shell");
	cJSON_Delete(calls);
	assert_string_equal(buf_str(&s.text),
	                    "Let me look.\n[server tool web_search: "
	                    "{\"query\":\"cats\"}]\nCats purr.");
	cJSON *items = anth_wire.items(&s, &args);
	assert_true(json_bool(items, "ordered", 0));
	const cJSON *its = cJSON_GetObjectItem(items, "items");
	char *t = types_of(its);
	assert_string_equal(t, "text server_tool_use web_search_tool_result "
	                       "text tool_use");
	free(t);
	char *in = json_print(
	    cJSON_GetObjectItem(cJSON_GetArrayItem(its, 1), "input"));
	assert_string_equal(in, "{\"query\":\"cats\"}");
	free(in);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(
	                     cJSON_GetArrayItem(its, 3), "citations")),
	                 1);
	assert_string_equal(json_str(cJSON_GetArrayItem(its, 3), "text", ""),
	                    "Cats purr.");
	char *noted = json_print(s.noted);
	assert_non_null(strstr(noted, "content block server_tool_use"));
	assert_non_null(strstr(noted, "event future_event"));
	free(noted);

	/* sent back: the blocks in order, the call filled in, no note */
	cJSON *msgs = history(&s, items);
	struct llm_request req = {.messages = msgs};
	char *body = anth_wire.body(&args, &req);
	cJSON *b = cJSON_Parse(body);
	const cJSON *content = cJSON_GetObjectItem(
	    cJSON_GetArrayItem(cJSON_GetObjectItem(b, "messages"), 1),
	    "content");
	t = types_of(content);
	assert_string_equal(t, "text server_tool_use web_search_tool_result "
	                       "text tool_use");
	free(t);
	const cJSON *tu = cJSON_GetArrayItem(content, 4);
	assert_string_equal(json_str(tu, "name", ""), "shell");
	assert_string_equal(
	    json_str(cJSON_GetObjectItem(tu, "input"), "command", ""), "ls");
	assert_null(strstr(body, "[server tool"));
	cJSON_Delete(b);
	free(body);
	cJSON_Delete(msgs);
	chat_stream_free(&s);
}

static const char resp_stream[] = EV(
    "response.output_item.added",
    "{\"type\":\"response.output_item.added\",\"item\":{\"id\":\"ws_1\","
    "\"type\":\"web_search_call\",\"status\":\"in_progress\"}}")
    EV("response.function_call_arguments.delta",
       "{\"type\":\"response.function_call_arguments.delta\",\"item_id\":"
       "\"ws_1\",\"delta\":\"{}\"}")
        EV("response.output_item.done",
           "{\"type\":\"response.output_item.done\",\"item\":{\"id\":\"ws_1\","
           "\"type\":\"web_search_call\",\"status\":\"completed\",\"action\":{"
           "\"type\":\"search\",\"query\":\"cats\"}}}")
            EV("response.output_item.added",
               "{\"type\":\"response.output_item.added\",\"item\":{\"id\":"
               "\"msg_1\","
               "\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}")
                EV("response.output_text.delta",
                   "{\"type\":\"response.output_text.delta\",\"item_id\":\"msg_"
                   "1\","
                   "\"delta\":\"Cats purr.\"}")
                    EV("response.output_item.done",
                       "{\"type\":\"response.output_item.done\",\"item\":{"
                       "\"id\":\"msg_1\","
                       "\"type\":\"message\",\"role\":\"assistant\",\"status\":"
                       "\"completed\","
                       "\"content\":[{\"type\":\"output_text\",\"text\":\"Cats "
                       "purr.\","
                       "\"annotations\":[]}]}}")
                        EV("response.output_item.added",
                           "{\"type\":\"response.output_item.added\",\"item\":{"
                           "\"id\":\"fc_1\","
                           "\"type\":\"function_call\",\"call_id\":\"call_1\","
                           "\"name\":\"shell\","
                           "\"arguments\":\"\"}}")
                            EV("response.function_call_arguments.delta",
                               "{\"type\":\"response.function_call_arguments."
                               "delta\",\"item_id\":"
                               "\"fc_1\",\"delta\":\"{\\\"command\\\":"
                               "\\\"ls\\\"}\"}")
                                EV("response.completed",
                                   "{\"type\":\"response.completed\","
                                   "\"response\":{"
                                   "\"id\":\"resp_1\",\"usage\":{}}}");

static void test_responses(void **state)
{
	(void)state;
	struct chat_stream s;
	resp_stream_init(&s, 1, NULL, NULL);
	assert_int_equal(chat_stream_feed(&s, resp_stream, strlen(resp_stream)),
	                 0);
	assert_int_equal(chat_stream_finish(&s), 0);
	cJSON *calls = chat_stream_tool_calls(&s);
	assert_int_equal(cJSON_GetArraySize(calls), 1);
	assert_string_equal(json_str(cJSON_GetArrayItem(calls, 0), "name", ""),
	                    "shell");
	cJSON_Delete(calls);
	assert_string_equal(buf_str(&s.text),
	                    "[server tool web_search: {\"type\":\"search\","
	                    "\"query\":\"cats\"}]\nCats purr.");
	cJSON *items = resp_wire.items(&s, &args);
	assert_true(json_bool(items, "ordered", 0));
	cJSON *msgs = history(&s, items);
	struct llm_request req = {.messages = msgs};
	char *body = resp_wire.body(&args, &req);
	cJSON *b = cJSON_Parse(body);
	const cJSON *input = cJSON_GetObjectItem(b, "input");
	char *t = types_of(input);
	assert_string_equal(
	    t,
	    "user web_search_call message function_call function_call_output");
	free(t);
	assert_string_equal(
	    json_str(cJSON_GetArrayItem(input, 1), "status", ""), "completed");
	assert_string_equal(json_str(cJSON_GetArrayItem(input, 3), "name", ""),
	                    "shell");
	assert_null(strstr(body, "[server tool"));
	cJSON_Delete(b);
	free(body);
	cJSON_Delete(msgs);
	chat_stream_free(&s);
}

/* Chat: a custom call (its fragments carrying function.arguments too)
 * and a function call; only the function call is a call. */
static const char chat_stream[] =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":"
    "0,\"id\":\"call_c\",\"type\":\"custom\",\"custom\":{\"name\":\"g\","
    "\"input\":\"\"}}]}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":"
    "0,\"custom\":{\"input\":\"{}\"},\"function\":{\"arguments\":\"{}\"}}]}}"
    "]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":"
    "1,\"id\":\"call_f\",\"type\":\"function\",\"function\":{\"name\":"
    "\"shell\",\"arguments\":\"{}\"}}]}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
    "\"tool_calls\"}]}\n\ndata: [DONE]\n\n";

static void test_chat(void **state)
{
	(void)state;
	struct chat_stream s;
	chat_stream_init(&s, 1, NULL, NULL);
	assert_int_equal(chat_stream_feed(&s, chat_stream, strlen(chat_stream)),
	                 0);
	assert_int_equal(chat_stream_finish(&s), 0);
	cJSON *calls = chat_stream_tool_calls(&s);
	assert_int_equal(cJSON_GetArraySize(calls), 1);
	assert_string_equal(json_str(cJSON_GetArrayItem(calls, 0), "id", ""),
	                    "call_f");
	cJSON_Delete(calls);
	char *noted = json_print(s.noted);
	assert_string_equal(noted, "[\"tool call of type custom\"]");
	free(noted);
	chat_stream_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_anthropic),
	    cmocka_unit_test(test_responses),
	    cmocka_unit_test(test_chat),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
