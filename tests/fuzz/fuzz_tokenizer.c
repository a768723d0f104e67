/* fuzz_tokenizer.c: libFuzzer harness for the policy's shell tokenizer
 * and the classifiers behind it. Any bytes must parse or fail with a
 * message, classify as a shell command and as python code, and never
 * crash, leak, or loop. A word's canonical form (what rules match)
 * must read back as the same word. */
#include "assay/config.h"
#include "assay/policy.h"
#include "assay/util.h"
#include "policy/shell.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct policy *policy(void)
{
	static struct policy *p;
	if (p)
		return p;
	struct config c;
	config_defaults(&c);
	config_add_input(&c, "/host/in.csv", "input/in.csv");
	c.rules = cJSON_Parse("[{\"match\": \"rm *\", \"action\": \"deny\"},"
	                      " {\"match\": \"ls*\", \"action\": \"allow\"},"
	                      " {\"match\": \"*[a-c]?x*\", \"action\": "
	                      "\"ask\"}]");
	char *err = NULL;
	p = policy_new(&c, &err);
	if (!p)
		abort();
	config_free(&c);
	return p;
}

/* The canonical form of a plain word must parse back to its text. */
static void round_trip(const struct sh_word *w)
{
	if (w->flags & (SH_W_DYNAMIC | SH_W_EXPANDS))
		return;
	char *canon = sh_word_canon(w);
	char *line = xasprintf("x %s", canon);
	struct sh_parse *again = sh_parse(line, strlen(line), 0);
	if (again->error || again->ncmds != 1 || again->cmds[0]->argc != 2 ||
	    strcmp(again->cmds[0]->argv[1]->text, w->text))
		abort();
	sh_parse_free(again);
	free(line);
	free(canon);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sh_parse *p = sh_parse((const char *)data, size, 0);
	for (size_t k = 0; k < p->ncmds; k++) {
		const struct sh_cmd *c = p->cmds[k];
		for (size_t i = 0; i < c->argc; i++)
			if (!c->cond && c->argv[i]->text[0])
				round_trip(c->argv[i]);
		for (size_t i = 0; i < c->nredirs; i++)
			if (!c->redirs[i]->arg)
				abort();
	}
	sh_parse_free(p);

	char *text = xstrndup((const char *)data, size);
	cJSON *args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "command", text);
	cJSON_AddStringToObject(args, "code", text);
	cJSON_AddStringToObject(args, "path", text);
	static const char *const tools[] = {"shell", "python", "write_file"};
	for (int t = 0; t < 3; t++) {
		struct policy_verdict *v =
		    policy_check(policy(), tools[t], args);
		/* what cannot be parsed is never allowed unasked */
		if (t == 0 && v->parse_error && v->action == POLICY_ALLOW)
			abort();
		policy_verdict_free(v);
	}
	cJSON_Delete(args);
	free(text);
	return 0;
}
