/* prompt.c: the system prompt: the built-in default, or the file given
 * by --instructions / "instructions", with the run's layout appended. */
#include "agent_internal.h"

#include "assay/buf.h"
#include "assay/config.h"
#include "assay/util.h"

#include <stdlib.h>

static const char *DEFAULT_PROMPT =
    "You are a practical data analyst working in a sandboxed workspace "
    "(/workspace). Ground every conclusion in evidence you computed. "
    "Inspect data before analysing it, write Python scripts with "
    "write_file and run them with the shell tool (python3 has numpy, "
    "pandas, scipy and matplotlib; there is no network), read the "
    "results and iterate. Inputs are under input/, artifacts go under "
    "output/. Write reports in plain ASCII.\n";

char *prompt_system(const struct config *cfg, char **err)
{
	struct buf b;
	buf_init(&b, 0);
	if (cfg->instructions) {
		char *text =
		    read_file_max(cfg->instructions, 1 << 20, NULL, err);
		if (!text) {
			buf_free(&b);
			return NULL;
		}
		buf_puts(&b, text);
		free(text);
	} else {
		buf_puts(&b, DEFAULT_PROMPT);
	}
	if (cfg->n_inputs) {
		buf_puts(&b, "\nInput files staged in the workspace:\n");
		for (size_t i = 0; i < cfg->n_inputs; i++)
			buf_printf(&b, "- %s\n", cfg->inputs[i].dest);
	}
	if (cfg->n_outputs) {
		buf_puts(&b, "\nThe run must produce these files:\n");
		for (size_t i = 0; i < cfg->n_outputs; i++)
			buf_printf(&b, "- %s\n", cfg->outputs[i]);
	}
	return buf_detach(&b);
}
