/* prompt.c: the system prompt: the built-in instructions
 * (share/instructions.md, embedded at build time) or the file given by
 * --instructions / "instructions", with the run's layout appended, and
 * once the python kernel has said hello, the sandbox's Python and its
 * libraries. The JSON it reads (the python helper's hello) is
 * not an event. */
#include "agent_internal.h"

#include "assay/buf.h"
#include "assay/config.h"
#include "assay/json.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

#define DATA_FILE_MAX (4u << 20)

char *agent_data_file(const char *rel, const char *embedded)
{
	const char *dir = getenv("ASSAY_DATA_DIR");
	if (dir && *dir) {
		char *p = xasprintf("%s/share/%s", dir, rel);
		char *text = read_file_max(p, DATA_FILE_MAX, NULL, NULL);
		free(p);
		if (text)
			return text;
	}
	return xstrdup(embedded);
}

char *prompt_system(const struct config *cfg, char **err)
{
	struct buf b;
	buf_init(&b, 0);
	char *text =
	    cfg->instructions
	        ? read_file_max(cfg->instructions, 1 << 20, NULL, err)
	        : agent_data_file("instructions.md", embed_instructions_md);
	if (!text) {
		buf_free(&b);
		return NULL;
	}
	buf_puts(&b, text);
	free(text);
	if (b.len && b.data[b.len - 1] != '\n')
		buf_puts(&b, "\n");
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

/* "numpy 1.24.2, scikit-learn 1.2.1 (import sklearn), ..." */
static void prompt_add_packages(struct buf *b, const cJSON *pkgs)
{
	const cJSON *p;
	int n = 0;
	cJSON_ArrayForEach(p, pkgs)
	{
		const char *name = json_str(p, "name", "?");
		const char *version = json_str(p, "version", "");
		const char *import = json_str(p, "import", name);
		buf_puts(b, n++ ? ", " : "");
		buf_puts(b, name);
		/* Debian marks some versions unknown as 0.0.0 */
		if (*version && strcmp(version, "0.0.0"))
			buf_printf(b, " %s", version);
		if (strcmp(import, name))
			buf_printf(b, " (import %s)", import);
	}
}

void prompt_add_python(char **prompt, const struct config *cfg,
                       const cJSON *hello, const char *why_not)
{
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, *prompt);
	if (!hello) {
		buf_printf(&b,
		           "\nPython is not available in this sandbox (%s): "
		           "the python tool will fail; use the shell tool.\n",
		           why_not ? why_not : "unknown reason");
	} else {
		const cJSON *pkgs = cJSON_GetObjectItem(hello, "packages");
		buf_printf(&b,
		           "\nPython in the sandbox (the python tool, and "
		           "python3 in the shell): Python %s",
		           json_str(hello, "python", "3"));
		if (cJSON_GetArraySize(pkgs) > 0) {
			buf_puts(&b, " with ");
			prompt_add_packages(&b, pkgs);
			buf_puts(&b, "; otherwise the standard library.");
		} else {
			buf_puts(&b, " with the standard library only (no "
			             "numpy, pandas or matplotlib).");
		}
		buf_puts(&b, cfg->network
		                 ? "\n"
		                 : " There is no network: nothing else can "
		                   "be installed.\n");
	}
	free(*prompt);
	*prompt = buf_detach(&b);
}
