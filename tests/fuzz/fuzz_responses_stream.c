/* fuzz_responses_stream.c: libFuzzer harness for the Responses API stream
 * reader (src/llm/responses.c); the checks are fuzz_stream.h's. */
#define FUZZ_STREAM_INIT resp_stream_init
#include "fuzz_stream.h"
