/* fuzz_anthropic_stream.c: libFuzzer harness for the Anthropic Messages stream
 * reader (src/llm/anthropic.c); the checks are fuzz_stream.h's. */
#define FUZZ_STREAM_INIT anth_stream_init
#include "fuzz_stream.h"
