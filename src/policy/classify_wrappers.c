/* classify_wrappers.c: commands that run another command (sudo, env,
 * xargs, find -exec, timeout, su, watch...): their options are skipped
 * and the command they run is classified in turn, as a form rules can
 * match too. */
#include "classify.h"

#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

/* Where the wrapped command starts (n if there is none). */
static size_t skip_options(const struct cls_wrapper *wr, struct sh_word **w,
                           size_t n)
{
	size_t i = 1;
	while (i < n) {
		const char *t = sh_known(w[i]);
		if (!t || t[0] != '-' || !t[1])
			break;
		if (!strcmp(t, "--")) {
			i++;
			break;
		}
		if (t[1] == '-') {
			int takes = wr->longargs && !strchr(t, '=') &&
			            cls_in_list(t, wr->longargs);
			i += takes ? 2 : 1;
			continue;
		}
		size_t len = strlen(t);
		size_t k = 1;
		for (; k < len; k++)
			if (strchr(wr->argopts, t[k]))
				break;
		i += (k < len && k == len - 1) ? 2 : 1;
	}
	for (int p = 0; p < wr->positional && i < n; p++)
		i++;
	return i;
}

/* The command w[from..n) that a wrapper runs. */
void cls_wrapped(struct cls *c, struct sh_word **w, size_t n, size_t from,
                 struct cls_input in, int level)
{
	if (from >= n)
		return;
	cls_add_forms(c, w + from, n - from);
	cls_argv(c, w + from, n - from, in, level + 1);
}

/* sudo, nice, timeout, xargs...: a reason of their own, then the
 * command they run. */
void cls_cmd_wrapper(struct cls *c, struct sh_word **w, size_t n,
                     struct cls_input in, int level)
{
	const char *name = cls_base_name(w[0]->text);
	const struct cls_wrapper *wr = cls_find_wrapper(name);
	if (wr->kind >= 0)
		reasons_add(c->r, (enum policy_kind)wr->kind, "%s %s", name,
		            wr->why);
	size_t i = skip_options(wr, w, n);
	if (!strcmp(name, "xargs"))
		in = (struct cls_input){0};
	if (!strcmp(name, "sudo") && i >= n &&
	    cls_has_opt(w, n, "is",
	                (const char *const[]){"--login", "--shell", NULL}))
		cls_stdin_code(c, "a root shell", in, 's');
	cls_wrapped(c, w, n, i, in, level);
}

/* env: -S runs shell code; after the variables, the command it runs. */
void cls_cmd_env(struct cls *c, struct sh_word **w, size_t n,
                 struct cls_input in, int level)
{
	size_t i = 1;
	while (i < n) {
		const char *t = sh_known(w[i]);
		if (!t)
			break;
		if (!strcmp(t, "--")) {
			i++;
			break;
		}
		if (!strcmp(t, "-S") || !strcmp(t, "--split-string") ||
		    !strncmp(t, "-S", 2) ||
		    !strncmp(t, "--split-string=", 15)) {
			const char *code = NULL;
			if (!strcmp(t, "-S") || !strcmp(t, "--split-string"))
				code = i + 1 < n ? sh_known(w[i + 1]) : "";
			else
				code = t[1] == 'S' ? t + 2 : strchr(t, '=') + 1;
			if (!code)
				cls_dynamic_code(c, "env", "-S");
			else
				policy_inline_shell(c, code, "env -S");
			return;
		}
		if (!strcmp(t, "-u") || !strcmp(t, "-C") ||
		    !strcmp(t, "--unset") || !strcmp(t, "--chdir")) {
			i += 2;
			continue;
		}
		if (t[0] == '-' || strchr(t, '=')) {
			i++;
			continue;
		}
		break;
	}
	cls_wrapped(c, w, n, i, in, level);
}

/* command: the command it runs (command -v only looks a name up). */
void cls_cmd_command(struct cls *c, struct sh_word **w, size_t n,
                     struct cls_input in, int level)
{
	size_t i = 1;
	for (; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (!t || t[0] != '-')
			break;
		if (strchr(t, 'v') || strchr(t, 'V'))
			return; /* only looks a name up */
	}
	cls_wrapped(c, w, n, i, in, level);
}

/* find: -delete, -fprint files, and the commands of -exec and -ok. */
void cls_cmd_find(struct cls *c, struct sh_word **w, size_t n,
                  struct cls_input in, int level)
{
	(void)in;
	for (size_t i = 1; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (!t)
			continue;
		if (!strcmp(t, "-delete"))
			reasons_add(c->r, POLICY_DELETION,
			            "find -delete deletes what it finds");
		if ((!strcmp(t, "-fprint") || !strcmp(t, "-fprint0") ||
		     !strcmp(t, "-fprintf") || !strcmp(t, "-fls")) &&
		    i + 1 < n)
			cls_check_write(c, w[i + 1], 1, t);
		if (strcmp(t, "-exec") && strcmp(t, "-execdir") &&
		    strcmp(t, "-ok") && strcmp(t, "-okdir"))
			continue;
		size_t j = i + 1;
		while (j < n &&
		       !(sh_known(w[j]) && (!strcmp(sh_known(w[j]), ";") ||
		                            !strcmp(sh_known(w[j]), "+"))))
			j++;
		cls_wrapped(c, w, j, i + 1, (struct cls_input){0}, level);
		i = j;
	}
}

/* flock: -c runs shell code, otherwise the command after the lock. */
void cls_cmd_flock(struct cls *c, struct sh_word **w, size_t n,
                   struct cls_input in, int level)
{
	static const struct cls_wrapper fl = {"flock", "wEc", NULL,
	                                      1,       -1,    NULL};
	for (size_t i = 1; i + 1 < n; i++) {
		const char *t = sh_known(w[i]);
		if (t && (!strcmp(t, "-c") || !strcmp(t, "--command"))) {
			const char *code = sh_known(w[i + 1]);
			if (!code)
				cls_dynamic_code(c, "flock", "-c");
			else
				policy_inline_shell(c, code, "flock -c");
			return;
		}
	}
	size_t i = skip_options(&fl, w, n);
	cls_wrapped(c, w, n, i, in, level);
}

/* su and runuser: privilege, and -c runs shell code. */
void cls_cmd_su(struct cls *c, struct sh_word **w, size_t n,
                struct cls_input in, int level)
{
	const char *name = cls_base_name(w[0]->text);
	reasons_add(c->r, POLICY_PRIVILEGE, "%s runs commands as another user",
	            name);
	for (size_t i = 1; i + 1 < n; i++) {
		const char *t = sh_known(w[i]);
		if (t && (!strcmp(t, "-c") || !strcmp(t, "--command"))) {
			const char *code = sh_known(w[i + 1]);
			char *label = xasprintf("%s -c", name);
			if (!code)
				cls_dynamic_code(c, name, "-c");
			else
				policy_inline_shell(c, code, label);
			free(label);
			return;
		}
	}
	if (!strcmp(name, "runuser")) {
		long k = cls_operand(w, n, 1, 1);
		if (k > 0)
			cls_wrapped(c, w, n, (size_t)k, in, level);
		return;
	}
	cls_stdin_code(c, name, in, 's');
}

/* watch CMD: its words are joined and run by sh -c (unless -x). */
void cls_cmd_watch(struct cls *c, struct sh_word **w, size_t n,
                   struct cls_input in, int level)
{
	static const struct cls_wrapper wa = {"watch", "nqa", NULL,
	                                      0,       -1,    NULL};
	size_t i = skip_options(&wa, w, n);
	if (cls_has_opt(w, i, "x", (const char *const[]){"--exec", NULL})) {
		cls_wrapped(c, w, n, i, in, level);
		return;
	}
	char *code = cls_join_text(w, n, i);
	if (!code)
		cls_dynamic_code(c, "watch", "");
	else
		policy_inline_shell(c, code, "watch");
	free(code);
}

/* parallel: the command before ":::", or commands read from input. */
void cls_cmd_parallel(struct cls *c, struct sh_word **w, size_t n,
                      struct cls_input in, int level)
{
	size_t i = 1;
	while (i < n && cls_is_opt(w[i]))
		i++;
	size_t j = i;
	while (j < n && !(sh_known(w[j]) && !strncmp(sh_known(w[j]), ":::", 3)))
		j++;
	if (j == i) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "parallel runs the commands it reads from its "
		            "input");
		return;
	}
	(void)in;
	cls_wrapped(c, w, j, i, (struct cls_input){0}, level);
}

/* script -c runs shell code. */
void cls_cmd_script(struct cls *c, struct sh_word **w, size_t n,
                    struct cls_input in, int level)
{
	(void)in, (void)level;
	for (size_t i = 1; i + 1 < n; i++) {
		const char *t = sh_known(w[i]);
		if (t && (!strcmp(t, "-c") || !strcmp(t, "--command"))) {
			const char *code = sh_known(w[i + 1]);
			if (!code)
				cls_dynamic_code(c, "script", "-c");
			else
				policy_inline_shell(c, code, "script -c");
			return;
		}
	}
}

/* busybox: the applet it runs. */
void cls_cmd_busybox(struct cls *c, struct sh_word **w, size_t n,
                     struct cls_input in, int level)
{
	cls_wrapped(c, w, n, 1, in, level);
}
