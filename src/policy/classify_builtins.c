/* classify_builtins.c: the shell's own commands that change what runs
 * next: eval and source run code, alias and friends rename commands,
 * trap runs code later, and cd moves where relative paths lead. */
#include "classify.h"

#include <stdlib.h>
#include <string.h>

/* eval: its words run as shell code (hidden, and classified when known). */
void cls_cmd_eval(struct cls *c, struct sh_word **w, size_t n,
                  struct cls_input in, int level)
{
	(void)in, (void)level;
	reasons_add(c->r, POLICY_HIDDEN,
	            "eval runs a string as a command: what runs is built "
	            "from text");
	char *code = cls_join_text(w, n, 1);
	if (code)
		policy_inline_shell(c, code, "eval");
	else if (c->decoder)
		reasons_add(c->r, POLICY_HIDDEN,
		            "decodes a payload (%s) and runs it", c->decoder);
	free(code);
}

/* source and ".": a script read from stdin or a substitution is hidden. */
void cls_cmd_source(struct cls *c, struct sh_word **w, size_t n,
                    struct cls_input in, int level)
{
	(void)level;
	const char *name = w[0]->text;
	if (n < 2)
		return;
	cls_script_operand(c, name, w[1], in, 's');
}

/* alias, shopt, enable, hash: a name that will run something else. */
void cls_cmd_alias(struct cls *c, struct sh_word **w, size_t n,
                   struct cls_input in, int level)
{
	(void)in, (void)level;
	const char *name = cls_base_name(w[0]->text);
	for (size_t i = 1; i < n; i++) {
		const char *t = sh_known(w[i]);
		int hides = !t || strchr(t, '=');
		if (!strcmp(name, "shopt"))
			hides = t && !strcmp(t, "expand_aliases");
		else if (!strcmp(name, "enable"))
			hides = t && !strcmp(t, "-f");
		else if (!strcmp(name, "hash"))
			hides = t && !strncmp(t, "-p", 2);
		if (hides) {
			reasons_add(c->r, POLICY_HIDDEN,
			            "%s makes a name run something else (%s)",
			            name, w[i]->raw);
			return;
		}
	}
}

/* trap: its code runs later, and is classified now. */
void cls_cmd_trap(struct cls *c, struct sh_word **w, size_t n,
                  struct cls_input in, int level)
{
	(void)in, (void)level;
	long k = cls_operand(w, n, 1, 0);
	if (k < 0 || n - (size_t)k < 2)
		return;
	const char *code = sh_known(w[k]);
	if (!code)
		cls_dynamic_code(c, "trap", "");
	else if (strcmp(code, "-"))
		policy_inline_shell(c, code, "trap");
}

/* cd, pushd, popd: where relative paths of later commands lead. */
void cls_cmd_cd(struct cls *c, struct sh_word **w, size_t n,
                struct cls_input in, int level)
{
	(void)in, (void)level;
	const char *name = cls_base_name(w[0]->text);
	if (!strcmp(name, "popd")) {
		c->cwd_state = CWD_UNKNOWN;
		return;
	}
	long k = cls_operand(w, n, 1, 0);
	if (k < 0) {
		c->cwd_state = CWD_WORKSPACE;
		c->cwd[0] = '\0';
		return;
	}
	const char *t = sh_known(w[k]);
	char rel[POLICY_REL_MAX];
	if (!t || !strcmp(t, "-")) {
		c->cwd_state = CWD_UNKNOWN;
		return;
	}
	enum path_kind pk = policy_path(c, t, rel);
	if (pk == PATH_INSIDE && strlen(rel) < sizeof c->cwd) {
		c->cwd_state = CWD_WORKSPACE;
		const char *d = strcmp(rel, ".") ? rel : "";
		memcpy(c->cwd, d, strlen(d) + 1); /* length checked above */
	} else if (pk == PATH_UNKNOWN || pk == PATH_INSIDE) {
		c->cwd_state = CWD_UNKNOWN;
	} else {
		c->cwd_state = CWD_ELSEWHERE;
	}
}
