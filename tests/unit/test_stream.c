/* test_stream.c: the Chat Completions stream assembler on captured
 * streams in each server's style (OpenAI, Ollama, vLLM, llama.cpp),
 * fed whole, cut at every byte boundary and one byte at a time: the
 * rebuilt answer must not depend on the chunking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assay/buf.h"
#include "assay/util.h"
#include "llm/llm_internal.h"

/* OpenAI: fragments, two calls by index, usage chunk, [DONE]. */
static const char openai_stream[] =
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\","
    "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
    "\"content\":\"\",\"refusal\":null},\"finish_reason\":null}],"
    "\"usage\":null}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\","
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Caf\xc3\xa9 \"},"
    "\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"x1\"}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"time.\"},"
    "\"logprobs\":null,\"finish_reason\":null}],\"system_fingerprint\":"
    "\"fp_1\",\"service_tier\":\"default\"}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
    "\"index\":0,\"id\":\"call_abc\",\"type\":\"function\",\"function\":{"
    "\"name\":\"shell\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}"
    "\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
    "\"index\":0,\"function\":{\"arguments\":\"{\\\"command\\\"\"}}]},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
    "\"index\":0,\"function\":{\"arguments\":\":\\\"ls -la\\\"}\"}}]},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
    "\"index\":1,\"id\":\"call_def\",\"type\":\"function\",\"function\":{"
    "\"name\":\"python\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}"
    "\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
    "\"index\":1,\"function\":{\"arguments\":\"{\\\"code\\\": "
    "\\\"print(1)\\\\n\\\"}\"}}]},\"finish_reason\":null}]}\n\n"
    ": keep-alive\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{},"
    "\"finish_reason\":\"tool_calls\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":50,"
    "\"completion_tokens\":12,\"total_tokens\":62,"
    "\"prompt_tokens_details\":{\"cached_tokens\":8},"
    "\"completion_tokens_details\":{\"reasoning_tokens\":0}}}\n\n"
    "data: [DONE]\n\n";

/* Ollama: role on every chunk, reasoning, whole calls all at index 0
 * (one per chunk, then two in one chunk), finish_reason on the last
 * content chunk, no usage. */
static const char ollama_stream[] =
    "data: {\"id\":\"chatcmpl-42\",\"object\":\"chat.completion.chunk\","
    "\"created\":1,\"model\":\"qwen3\",\"system_fingerprint\":"
    "\"fp_ollama\",\"choices\":[{\"index\":0,\"delta\":{\"role\":"
    "\"assistant\",\"content\":\"\",\"reasoning\":\"The user wants\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-42\",\"choices\":[{\"index\":0,\"delta\":{"
    "\"role\":\"assistant\",\"content\":\"Checking\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-42\",\"choices\":[{\"index\":0,\"delta\":{"
    "\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":"
    "\"call_o1\",\"index\":0,\"type\":\"function\",\"function\":{"
    "\"name\":\"shell\",\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}}"
    "]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-42\",\"choices\":[{\"index\":0,\"delta\":{"
    "\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":"
    "\"call_o2\",\"index\":0,\"type\":\"function\",\"function\":{"
    "\"name\":\"read_file\",\"arguments\":"
    "\"{\\\"path\\\":\\\"a.txt\\\"}\"}},{\"id\":\"call_o3\",\"index\":0,"
    "\"type\":\"function\",\"function\":{\"name\":\"list_files\","
    "\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-42\",\"choices\":[{\"index\":0,\"delta\":{"
    "\"role\":\"assistant\",\"content\":\".\"},"
    "\"finish_reason\":\"stop\"}]}\n\n"
    "data: [DONE]\n\n";

/* vLLM: later fragments with id "" or none, a call with no arguments
 * at all, a call with no id, no [DONE]. */
static const char vllm_stream[] =
    "data: {\"id\":\"cmpl-9\",\"object\":\"chat.completion.chunk\","
    "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
    "\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"cmpl-9\",\"choices\":[{\"index\":0,\"delta\":{"
    "\"tool_calls\":[{\"id\":\"chatcmpl-tool-aa\",\"type\":\"function\","
    "\"index\":0,\"function\":{\"name\":\"list_files\"}}]},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"cmpl-9\",\"choices\":[{\"index\":0,\"delta\":{"
    "\"tool_calls\":[{\"id\":\"chatcmpl-tool-bb\",\"type\":\"function\","
    "\"index\":1,\"function\":{\"name\":\"shell\",\"arguments\":\"\"}}]},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"cmpl-9\",\"choices\":[{\"index\":0,\"delta\":{"
    "\"tool_calls\":[{\"id\":\"\",\"index\":1,\"function\":{"
    "\"arguments\":\"{\\\"command\\\": \"}}]},\"finish_reason\":null}]}"
    "\n\n"
    "data: {\"id\":\"cmpl-9\",\"choices\":[{\"index\":0,\"delta\":{"
    "\"tool_calls\":[{\"index\":1,\"function\":{\"name\":\"\","
    "\"arguments\":\"\\\"pwd\\\"}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"cmpl-9\",\"choices\":[{\"index\":0,\"delta\":{"
    "\"tool_calls\":[{\"index\":2,\"type\":\"function\",\"function\":{"
    "\"name\":\"python\",\"arguments\":\"{\\\"code\\\":\\\"2+2\\\"}\"}}"
    "]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"cmpl-9\",\"choices\":[{\"index\":0,\"delta\":{"
    "\"content\":\"\"},\"finish_reason\":\"tool_calls\"}]}\n\n"
    "data: {\"id\":\"cmpl-9\",\"choices\":[],\"usage\":{"
    "\"prompt_tokens\":10,\"completion_tokens\":5,\"total_tokens\":15}}"
    "\n\n";

/* llama.cpp: CRLF, content null, reasoning_content, a 32-char id,
 * usage and timings on the last chunk. */
static const char llamacpp_stream[] =
    "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{"
    "\"role\":\"assistant\",\"content\":null}}],\"created\":1,\"id\":"
    "\"chatcmpl-x\",\"model\":\"m\",\"object\":\"chat.completion.chunk\"}"
    "\r\n\r\n"
    "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{"
    "\"reasoning_content\":\"Let me think\"}}],\"object\":"
    "\"chat.completion.chunk\"}\r\n\r\n"
    "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{"
    "\"content\":\"Hello\"}}]}\r\n\r\n"
    "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{"
    "\"content\":\" world\"}}]}\r\n\r\n"
    "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{"
    "\"tool_calls\":[{\"index\":0,\"id\":"
    "\"AbCdEf0123456789AbCdEf0123456789\",\"type\":\"function\","
    "\"function\":{\"name\":\"shell\",\"arguments\":\"{\\\"comm\"}}]}}]}"
    "\r\n\r\n"
    "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{"
    "\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
    "\"and\\\":\\\"echo hi\\\"}\"}}]}}]}\r\n\r\n"
    "data: {\"choices\":[{\"finish_reason\":\"tool_calls\",\"index\":0,"
    "\"delta\":{}}],\"usage\":{\"completion_tokens\":7,"
    "\"prompt_tokens\":20,\"total_tokens\":27},\"timings\":{"
    "\"prompt_n\":20,\"predicted_ms\":12.5}}\r\n\r\n"
    "data: [DONE]\r\n\r\n";

/* Defensive: no index anywhere, no [DONE], no trailing blank line. */
static const char noindex_stream[] =
    "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"c1\","
    "\"function\":{\"name\":\"shell\",\"arguments\":\"{\\\"command\\\":\""
    "}}]}}]}\n\n"
    "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{"
    "\"arguments\":\"\\\"ls\\\"}\"}}]}}]}\n\n"
    "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"c2\","
    "\"function\":{\"name\":\"python\",\"arguments\":"
    "\"{\\\"code\\\":\\\"1\\\"}\"}}]}}]}\n\n"
    "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}";

/* Cut short by max tokens: arguments that do not parse. */
static const char truncated_args_stream[] =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
    "\"index\":0,\"id\":\"call_t\",\"function\":{\"name\":\"write_file\","
    "\"arguments\":\"{\\\"path\\\":\\\"a\"}}]}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{},"
    "\"finish_reason\":\"length\"}]}\n\n"
    "data: [DONE]\n\n";

/* Errors inside a 200 stream. */
static const char openai_error_stream[] =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hal\"}}]}"
    "\n\n"
    "data: {\"error\":{\"message\":\"The server had an error while "
    "processing your request.\",\"type\":\"server_error\",\"param\":null,"
    "\"code\":null}}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"never\"}}]}"
    "\n\n";

static const char llamacpp_error_stream[] =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}"
    "\r\n\r\n"
    "error: {\"code\":500,\"message\":\"slot unavailable\",\"type\":"
    "\"server_error\"}\r\n\r\n";

static const char vllm_error_stream[] =
    "data: {\"object\":\"error\",\"message\":\"This model's maximum "
    "context length is 4096 tokens\",\"type\":\"BadRequestError\","
    "\"param\":null,\"code\":400}\n\n";

static const char cut_stream[] =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Half an "
    "answ\"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
    "\"index\":0,\"id\":\"call_1\",\"function\":{\"name\":\"shell\"}}]}}]}"
    "\n\n";

/* --- harness --- */

static void collect_text(void *arg, const char *text, size_t n)
{
	buf_append(arg, text, n);
}

struct outcome {
	int rc;
	char *summary; /* everything the assembler rebuilt, as one string */
};

/* Feed text cut at the given points; render what came out. */
static struct outcome run(const char *text, const size_t *cuts, size_t ncuts)
{
	struct chat_stream s;
	struct buf streamed;
	size_t len = strlen(text), pos = 0;
	struct outcome o = {0};

	buf_init(&streamed, 0);
	chat_stream_init(&s, 3, collect_text, &streamed);
	for (size_t i = 0; i <= ncuts && o.rc == 0; i++) {
		size_t end = i < ncuts ? cuts[i] : len;
		o.rc = chat_stream_feed(&s, text + pos, end - pos);
		pos = end;
	}
	if (o.rc == 0)
		o.rc = chat_stream_finish(&s);
	/* What streamed out is exactly the answer text. */
	assert_string_equal(buf_str(&streamed), buf_str(&s.text));
	cJSON *calls = chat_stream_tool_calls(&s);
	char *cs = cJSON_PrintUnformatted(calls);
	o.summary = xasprintf(
	    "rc=%d text=[%s] finish=%s usage=%d/%ld/%ld/%ld done=%d "
	    "reasoning=%zu calls=%s error=%s final=%d body=%s",
	    o.rc, buf_str(&s.text), s.finish_reason ? s.finish_reason : "-",
	    s.usage.known, s.usage.input_tokens, s.usage.output_tokens,
	    s.usage.cached_tokens, s.saw_done, s.reasoning_bytes, cs,
	    s.error ? s.error : "-", s.error_final,
	    s.error_body ? s.error_body : "-");
	free(cs);
	cJSON_Delete(calls);
	chat_stream_free(&s);
	buf_free(&streamed);
	return o;
}

/* The outcome of feeding whole, after checking that every cut point
 * and byte-by-byte feeding give the same. */
static struct outcome run_all_splits(const char *text)
{
	struct outcome whole = run(text, NULL, 0);
	size_t len = strlen(text);

	for (size_t cut = 1; cut < len; cut++) {
		struct outcome o = run(text, &cut, 1);
		if (strcmp(o.summary, whole.summary) != 0)
			fail_msg("cut at %zu:\n got %s\nwant %s", cut,
			         o.summary, whole.summary);
		free(o.summary);
	}
	size_t *cuts = malloc(len * sizeof *cuts);
	for (size_t i = 0; i + 1 < len; i++)
		cuts[i] = i + 1;
	struct outcome o = run(text, cuts, len - 1);
	assert_string_equal(o.summary, whole.summary);
	free(o.summary);
	free(cuts);
	return whole;
}

/* Parse the calls back out of a summary-independent run. */
static cJSON *calls_of(const char *text)
{
	struct chat_stream s;

	chat_stream_init(&s, 3, NULL, NULL);
	chat_stream_feed(&s, text, strlen(text));
	chat_stream_finish(&s);
	cJSON *calls = chat_stream_tool_calls(&s);
	chat_stream_free(&s);
	return calls;
}

static void check_call(const cJSON *calls, int i, const char *id,
                       const char *name, const char *args_json)
{
	const cJSON *c = cJSON_GetArrayItem(calls, i);
	assert_non_null(c);
	assert_string_equal(cJSON_GetObjectItem(c, "id")->valuestring, id);
	assert_string_equal(cJSON_GetObjectItem(c, "name")->valuestring, name);
	const cJSON *args = cJSON_GetObjectItem(c, "arguments");
	assert_true(cJSON_IsObject(args));
	char *got = cJSON_PrintUnformatted(args);
	assert_string_equal(got, args_json);
	free(got);
}

/* --- tests --- */

static void test_openai(void **state)
{
	struct outcome o = run_all_splits(openai_stream);
	assert_int_equal(o.rc, 0);
	assert_non_null(strstr(o.summary, "text=[Caf\xc3\xa9 time.]"));
	assert_non_null(strstr(o.summary, "finish=tool_calls"));
	assert_non_null(strstr(o.summary, "usage=1/50/12/8 done=1"));
	free(o.summary);

	cJSON *calls = calls_of(openai_stream);
	assert_int_equal(cJSON_GetArraySize(calls), 2);
	check_call(calls, 0, "call_abc", "shell", "{\"command\":\"ls -la\"}");
	check_call(calls, 1, "call_def", "python",
	           "{\"code\":\"print(1)\\n\"}");
	cJSON_Delete(calls);
}

static void test_ollama(void **state)
{
	struct outcome o = run_all_splits(ollama_stream);
	assert_int_equal(o.rc, 0);
	assert_non_null(strstr(o.summary, "text=[Checking.]"));
	assert_non_null(strstr(o.summary, "finish=stop"));
	assert_non_null(strstr(o.summary, "usage=0/"));
	assert_non_null(strstr(o.summary, "reasoning=14"));
	free(o.summary);

	cJSON *calls = calls_of(ollama_stream);
	assert_int_equal(cJSON_GetArraySize(calls), 3);
	check_call(calls, 0, "call_o1", "shell", "{\"command\":\"ls\"}");
	check_call(calls, 1, "call_o2", "read_file", "{\"path\":\"a.txt\"}");
	check_call(calls, 2, "call_o3", "list_files", "{}");
	cJSON_Delete(calls);
}

/* Ollama without ids: a name arriving on a whole call starts a new
 * one, also after a call that sent no arguments at all. */
static void test_ollama_no_ids(void **state)
{
	const char *text =
	    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
	    "\"index\":0,\"function\":{\"name\":\"list_files\"}}]}}]}\n\n"
	    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
	    "\"index\":0,\"function\":{\"name\":\"shell\",\"arguments\":"
	    "\"{\\\"command\\\":\\\"a\\\"}\"}}]}}]}\n\n"
	    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
	    "\"index\":0,\"function\":{\"name\":\"shell\",\"arguments\":"
	    "\"{\\\"command\\\":\\\"b\\\"}\"}}]}}]}\n\n"
	    "data: {\"choices\":[{\"index\":0,\"delta\":{},"
	    "\"finish_reason\":\"tool_calls\"}]}\n\n";
	struct outcome o = run_all_splits(text);
	assert_int_equal(o.rc, 0);
	free(o.summary);
	cJSON *calls = calls_of(text);
	assert_int_equal(cJSON_GetArraySize(calls), 3);
	/* A call that never sends arguments is whole with its name. */
	check_call(calls, 0, "call_3_0", "list_files", "{}");
	check_call(calls, 1, "call_3_1", "shell", "{\"command\":\"a\"}");
	check_call(calls, 2, "call_3_2", "shell", "{\"command\":\"b\"}");
	cJSON_Delete(calls);
}

static void test_vllm(void **state)
{
	struct outcome o = run_all_splits(vllm_stream);
	/* No [DONE], but a finish_reason: complete. */
	assert_int_equal(o.rc, 0);
	assert_non_null(strstr(o.summary, "finish=tool_calls"));
	assert_non_null(strstr(o.summary, "usage=1/10/5/0 done=0"));
	free(o.summary);

	cJSON *calls = calls_of(vllm_stream);
	assert_int_equal(cJSON_GetArraySize(calls), 3);
	check_call(calls, 0, "chatcmpl-tool-aa", "list_files", "{}");
	check_call(calls, 1, "chatcmpl-tool-bb", "shell",
	           "{\"command\":\"pwd\"}");
	/* A made-up id, the same every time: call_<turn>_<slot>. */
	check_call(calls, 2, "call_3_2", "python", "{\"code\":\"2+2\"}");
	cJSON_Delete(calls);
}

static void test_llamacpp(void **state)
{
	struct outcome o = run_all_splits(llamacpp_stream);
	assert_int_equal(o.rc, 0);
	assert_non_null(strstr(o.summary, "text=[Hello world]"));
	assert_non_null(strstr(o.summary, "usage=1/20/7/0 done=1"));
	assert_non_null(strstr(o.summary, "reasoning=12"));
	free(o.summary);

	cJSON *calls = calls_of(llamacpp_stream);
	assert_int_equal(cJSON_GetArraySize(calls), 1);
	check_call(calls, 0, "AbCdEf0123456789AbCdEf0123456789", "shell",
	           "{\"command\":\"echo hi\"}");
	cJSON_Delete(calls);
}

static void test_no_index(void **state)
{
	struct outcome o = run_all_splits(noindex_stream);
	assert_int_equal(o.rc, 0);
	free(o.summary);
	cJSON *calls = calls_of(noindex_stream);
	assert_int_equal(cJSON_GetArraySize(calls), 2);
	check_call(calls, 0, "c1", "shell", "{\"command\":\"ls\"}");
	check_call(calls, 1, "c2", "python", "{\"code\":\"1\"}");
	cJSON_Delete(calls);
}

static void test_truncated_arguments(void **state)
{
	struct outcome o = run_all_splits(truncated_args_stream);
	assert_int_equal(o.rc, 0);
	assert_non_null(strstr(o.summary, "finish=length"));
	free(o.summary);
	cJSON *calls = calls_of(truncated_args_stream);
	check_call(calls, 0, "call_t", "write_file", "{}");
	const cJSON *c = cJSON_GetArrayItem(calls, 0);
	assert_true(cJSON_IsString(cJSON_GetObjectItem(c, "arguments_error")));
	assert_non_null(
	    strstr(cJSON_GetObjectItem(c, "arguments_error")->valuestring,
	           "cut off after 10 bytes"));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c, "cut_off")));
	assert_int_equal(cJSON_GetObjectItem(c, "arguments_bytes")->valueint,
	                 10);
	assert_string_equal(
	    cJSON_GetObjectItem(c, "arguments_raw")->valuestring,
	    "{\"path\":\"a");
	cJSON_Delete(calls);
}

static void test_error_events(void **state)
{
	struct outcome o = run_all_splits(openai_error_stream);
	assert_int_equal(o.rc, -1);
	assert_non_null(strstr(o.summary, "text=[Hal]"));
	assert_non_null(strstr(o.summary, "The server had an error"));
	assert_non_null(strstr(o.summary, "final=0"));
	free(o.summary);
	assert_int_equal(llm_retry_should(0,
	                                  "{\"error\":{\"message\":\"x\","
	                                  "\"type\":\"server_error\"}}",
	                                  NULL),
	                 1);

	o = run_all_splits(llamacpp_error_stream);
	assert_int_equal(o.rc, -1);
	assert_non_null(strstr(o.summary, "text=[Hi]"));
	assert_non_null(strstr(o.summary, "slot unavailable"));
	free(o.summary);

	/* A flat vLLM error with a 4xx code is not worth retrying. */
	struct chat_stream s;
	chat_stream_init(&s, 0, NULL, NULL);
	assert_int_equal(
	    chat_stream_feed(&s, vllm_error_stream, strlen(vllm_error_stream)),
	    -1);
	assert_non_null(strstr(s.error, "maximum context length"));
	assert_int_equal(llm_retry_should(0, s.error_body, NULL), 0);
	chat_stream_free(&s);
}

static void test_cut_stream(void **state)
{
	struct outcome o = run_all_splits(cut_stream);
	assert_int_equal(o.rc, -1);
	assert_non_null(strstr(o.summary, "text=[Half an answ]"));
	assert_non_null(strstr(o.summary, "no finish_reason"));
	assert_non_null(strstr(o.summary, "final=0"));
	free(o.summary);

	/* Nothing at all is a cut stream too. */
	o = run("", NULL, 0);
	assert_int_equal(o.rc, -1);
	free(o.summary);
}

static void test_invalid_json(void **state)
{
	struct outcome o = run("data: {\"choices\":[{\"delta\":\n\n", NULL, 0);
	assert_int_equal(o.rc, -1);
	assert_non_null(strstr(o.summary, "invalid JSON"));
	free(o.summary);
}

/* A server that ignored stream:true and sent one JSON answer. */
static void test_non_streamed_answer(void **state)
{
	const char *text =
	    "{\"id\":\"x\",\"object\":\"chat.completion\",\"choices\":[{"
	    "\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
	    "\"Hi\",\"tool_calls\":[{\"id\":\"c9\",\"type\":\"function\","
	    "\"function\":{\"name\":\"shell\",\"arguments\":"
	    "\"{\\\"command\\\":\\\"ls\\\"}\"}}]},\"finish_reason\":"
	    "\"tool_calls\"}],\"usage\":{\"prompt_tokens\":3,"
	    "\"completion_tokens\":4}}\n";
	struct outcome o = run_all_splits(text);
	assert_int_equal(o.rc, 0);
	assert_non_null(strstr(o.summary, "text=[Hi]"));
	assert_non_null(strstr(o.summary, "usage=1/3/4/0"));
	free(o.summary);
	cJSON *calls = calls_of(text);
	check_call(calls, 0, "c9", "shell", "{\"command\":\"ls\"}");
	cJSON_Delete(calls);
}

static void test_bounds(void **state)
{
	struct chat_stream s;
	struct buf b;

	/* Answer text past LLM_MAX_TEXT. */
	buf_init(&b, 0);
	buf_puts(&b, "data: {\"choices\":[{\"delta\":{\"content\":\"");
	for (int i = 0; i < 1024 * 1024; i++)
		buf_puts(&b, "x");
	buf_puts(&b, "\"}}]}\n\n");
	chat_stream_init(&s, 0, NULL, NULL);
	int rc = 0;
	for (int i = 0; i < 9 && rc == 0; i++)
		rc = chat_stream_feed(&s, b.data, b.len);
	assert_int_equal(rc, -1);
	assert_int_equal(s.error_final, 1);
	assert_true(s.text.len <= LLM_MAX_TEXT);
	chat_stream_free(&s);
	buf_free(&b);

	/* One line past LLM_MAX_EVENT, never terminated. */
	char *chunk = malloc(1024 * 1024);
	memset(chunk, 'a', 1024 * 1024);
	chat_stream_init(&s, 0, NULL, NULL);
	rc = 0;
	for (int i = 0; i < 5 && rc == 0; i++)
		rc = chat_stream_feed(&s, chunk, 1024 * 1024);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(s.error, "MiB"));
	chat_stream_free(&s);
	free(chunk);

	/* Arguments past LLM_MAX_ARGS in total, spread over two calls. */
	chat_stream_init(&s, 0, NULL, NULL);
	rc = 0;
	for (int i = 0; i < 5 && rc == 0; i++) {
		buf_init(&b, 0);
		buf_printf(&b,
		           "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{"
		           "\"index\":%d,\"id\":\"c%d\",\"function\":{\"name\":"
		           "\"w\",\"arguments\":\"",
		           i < 3 ? 0 : 1, i < 3 ? 0 : 1);
		for (int k = 0; k < 1024 * 1024; k++)
			buf_puts(&b, "y");
		buf_puts(&b, "\"}}]}}]}\n\n");
		rc = chat_stream_feed(&s, b.data, b.len);
		buf_free(&b);
	}
	assert_int_equal(rc, -1);
	assert_non_null(strstr(s.error, "arguments passed 4 MiB"));
	chat_stream_free(&s);

	/* Too many tool calls. */
	chat_stream_init(&s, 0, NULL, NULL);
	rc = 0;
	for (int i = 0; i <= LLM_MAX_TOOL_CALLS && rc == 0; i++) {
		char *ev = xasprintf(
		    "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{"
		    "\"index\":%d,\"id\":\"c%d\",\"function\":{\"name\":"
		    "\"shell\",\"arguments\":\"{}\"}}]}}]}\n\n",
		    i, i);
		rc = chat_stream_feed(&s, ev, strlen(ev));
		free(ev);
	}
	assert_int_equal(rc, -1);
	chat_stream_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_openai),
	    cmocka_unit_test(test_ollama),
	    cmocka_unit_test(test_ollama_no_ids),
	    cmocka_unit_test(test_vllm),
	    cmocka_unit_test(test_llamacpp),
	    cmocka_unit_test(test_no_index),
	    cmocka_unit_test(test_truncated_arguments),
	    cmocka_unit_test(test_error_events),
	    cmocka_unit_test(test_cut_stream),
	    cmocka_unit_test(test_invalid_json),
	    cmocka_unit_test(test_non_streamed_answer),
	    cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
