/* fuzz_chat_stream.c: libFuzzer harness for the Chat Completions stream
 * rebuilder (src/llm/chat_stream.c); the checks are fuzz_stream.h's. */
#define FUZZ_STREAM_INIT chat_stream_init
#include "fuzz_stream.h"
