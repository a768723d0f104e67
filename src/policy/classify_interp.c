/* classify_interp.c: commands that run code: shells, python and other
 * interpreters, and awk. Inline code they are given (-c, here-documents)
 * is classified as shell or python code where the policy can read it;
 * code it cannot see (piped in, built at run time) is a reason. */
#include "classify.h"

#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

/* An interpreter reading its program from stdin. */
void cls_stdin_code(struct cls *c, const char *name, struct cls_input in,
                    int lang)
{
	if (in.doc) {
		const struct sh_redir *d = in.doc;
		const char *code = d->body ? d->body : sh_known(d->arg);
		char *label = xasprintf("the here-document into %s", name);
		if (!code)
			reasons_add(c->r, POLICY_HIDDEN,
			            "%s reads code built at run time", name);
		else if (lang == 's')
			policy_inline_shell(c, code, label);
		else if (lang == 'p')
			policy_classify_python(c, code, label);
		else
			reasons_add(c->r, POLICY_HIDDEN,
			            "inline %s code: the policy cannot check "
			            "%s code",
			            name, name);
		free(label);
		return;
	}
	if (in.fed) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "data piped into %s runs as code: what runs is "
		            "not visible",
		            name);
		if (c->decoder)
			reasons_add(c->r, POLICY_HIDDEN,
			            "decodes a payload (%s) and runs it",
			            c->decoder);
	}
}

/* Code given to name opt is only known at run time. */
void cls_dynamic_code(struct cls *c, const char *name, const char *opt)
{
	reasons_add(c->r, POLICY_HIDDEN, "%s %s runs code built at run time",
	            name, opt);
	if (c->decoder)
		reasons_add(c->r, POLICY_HIDDEN,
		            "decodes a payload (%s) and runs it", c->decoder);
}

/* A script operand: a substitution or stdin is not a visible file. */
int cls_script_operand(struct cls *c, const char *name, const struct sh_word *w,
                       struct cls_input in, int lang)
{
	if (w->flags & (SH_W_PROCSUB | SH_W_CMDSUB)) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "%s runs a script produced by a substitution (%s)",
		            name, w->raw);
		if (c->decoder)
			reasons_add(c->r, POLICY_HIDDEN,
			            "decodes a payload (%s) and runs it",
			            c->decoder);
		return 1;
	}
	const char *t = sh_known(w);
	if (t && (!strcmp(t, "-") || !strcmp(t, "/dev/stdin"))) {
		cls_stdin_code(c, name, in, lang);
		return 1;
	}
	return 0;
}

/* sh, bash, zsh...: -c code is classified; a script from stdin or a
 * substitution is hidden. */
void cls_cmd_shell(struct cls *c, struct sh_word **w, size_t n,
                   struct cls_input in, int level)
{
	const char *name = cls_base_name(w[0]->text);
	int dash_c = 0, dash_s = 0;
	size_t i = 1;
	(void)level;
	for (; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (!t)
			break;
		if (!strcmp(t, "--")) {
			i++;
			break;
		}
		if ((t[0] != '-' && t[0] != '+') || !t[1])
			break;
		if (!strcmp(t, "-o") || !strcmp(t, "+o") || !strcmp(t, "-O") ||
		    !strcmp(t, "+O") || !strcmp(t, "--rcfile") ||
		    !strcmp(t, "--init-file")) {
			i++;
			continue;
		}
		if (t[1] != '-' && strchr(t, 'c'))
			dash_c = 1;
		if (t[1] != '-' && strchr(t, 's'))
			dash_s = 1;
	}
	if (dash_c) {
		if (i >= n)
			return;
		const char *code = sh_known(w[i]);
		char *label = xasprintf("%s -c", name);
		if (!code)
			cls_dynamic_code(c, name, "-c");
		else
			policy_inline_shell(c, code, label);
		free(label);
		return;
	}
	if (dash_s || i >= n)
		cls_stdin_code(c, name, in, 's');
	else
		cls_script_operand(c, name, w[i], in, 's');
}

/* python -m MODULE: modules that use the network, pip install. */
static void python_dash_m(struct cls *c, const char *name, struct sh_word **w,
                          size_t n, size_t i)
{
	const char *m = sh_known(w[i]);
	if (!m) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "%s -m runs a module named at run time", name);
		return;
	}
	static const char *const net[] = {
	    "http.server", "SimpleHTTPServer", "ensurepip",    "smtpd",
	    "ftplib",      "webbrowser",       "pip_download", NULL};
	if (cls_in_list(m, net))
		reasons_add(c->r, POLICY_NETWORK, "%s -m %s uses the network",
		            name, m);
	if (!strcmp(m, "pip")) {
		const char *sub = i + 1 < n ? sh_known(w[i + 1]) : NULL;
		static const char *const pipnet[] = {"install", "download",
		                                     "wheel", NULL};
		if (sub && cls_in_list(sub, pipnet))
			reasons_add(c->r, POLICY_NETWORK,
			            "%s -m pip %s downloads packages", name,
			            sub);
	}
}

/* python: -c code is classified as python, -m modules checked, a script
 * from stdin or a substitution is hidden. */
void cls_cmd_python(struct cls *c, struct sh_word **w, size_t n,
                    struct cls_input in, int level)
{
	const char *name = cls_base_name(w[0]->text);
	(void)level;
	for (size_t i = 1; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (!t || t[0] != '-' || !strcmp(t, "-")) {
			/* a script: a file, stdin or a substitution */
			cls_script_operand(c, name, w[i], in, 'p');
			return;
		}
		if (!strcmp(t, "--") || t[1] == '-')
			continue;
		const char *q = t + 1;
		while (*q && strchr("bBdEhiIOPqRsSuvVx", *q))
			q++;
		if (*q == 'W' || *q == 'X') {
			i += q[1] ? 0 : 1;
			continue;
		}
		if (*q != 'c' && *q != 'm')
			continue;
		const char *code = q[1]        ? q + 1
		                   : i + 1 < n ? sh_known(w[i + 1])
		                               : "";
		if (*q == 'm') {
			if (!q[1] && i + 1 < n)
				python_dash_m(c, name, w, n, i + 1);
			return;
		}
		char *label = xasprintf("%s -c", name);
		if (!code)
			cls_dynamic_code(c, name, "-c");
		else
			policy_classify_python(c, code, label);
		free(label);
		return;
	}
	cls_stdin_code(c, name, in, 'p');
}

/* perl, node, ruby...: inline code cannot be checked; perl -i edits in
 * place. */
void cls_cmd_interp(struct cls *c, struct sh_word **w, size_t n,
                    struct cls_input in, int level)
{
	const char *name = cls_base_name(w[0]->text);
	const struct cls_interp *ip = cls_find_interp(name);
	(void)level;
	for (size_t i = 1; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (!t) {
			cls_script_operand(c, name, w[i], in, 0);
			return;
		}
		int inline_code = 0;
		for (int k = 0; ip->longs[k]; k++)
			inline_code |= !strcmp(t, ip->longs[k]);
		if (t[0] == '-' && t[1] && t[1] != '-' && *ip->shorts &&
		    strpbrk(t + 1, ip->shorts))
			inline_code = 1;
		if (inline_code) {
			reasons_add(c->r, POLICY_HIDDEN,
			            "inline %s code (%s): the policy cannot "
			            "check %s code",
			            name, t, name);
			return;
		}
		if (!strcmp(name, "perl") && t[0] == '-' && strchr(t, 'i'))
			cls_check_destroy(c, w[n - 1], "edits in place",
			                  "perl -i");
		if (t[0] != '-' || !strcmp(t, "-")) {
			cls_script_operand(c, name, w[i], in, 0);
			return;
		}
	}
	cls_stdin_code(c, name, in, 0);
}

/* awk programs can run commands: system(), pipes to and from "cmd". */
void cls_cmd_awk(struct cls *c, struct sh_word **w, size_t n,
                 struct cls_input in, int level)
{
	(void)in, (void)level;
	const char *name = cls_base_name(w[0]->text);
	for (size_t i = 1; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (t && (!strcmp(t, "-i") || !strcmp(t, "--inplace")))
			cls_check_destroy(c, w[n - 1], "edits in place", name);
		if (t && (!strcmp(t, "-F") || !strcmp(t, "-v") ||
		          !strcmp(t, "-f") || !strcmp(t, "-i"))) {
			if (!strcmp(t, "-f"))
				return;
			i++;
			continue;
		}
		if (t && t[0] == '-' && t[1])
			continue;
		if (!t) {
			reasons_add(c->r, POLICY_HIDDEN,
			            "the %s program is built at run time",
			            name);
			return;
		}
		const char *pipe = t;
		int runs =
		    strstr(t, "system") != NULL || strstr(t, "|&") != NULL;
		while ((pipe = strchr(pipe, '|'))) {
			const char *q = pipe + 1;
			if (*q == '|' || (pipe > t && pipe[-1] == '|')) {
				pipe = q + (*q == '|');
				continue;
			}
			while (*q == ' ' || *q == '\t')
				q++;
			if (*q == '"' || !strncmp(q, "getline", 7))
				runs = 1;
			pipe++;
		}
		if (runs)
			reasons_add(c->r, POLICY_HIDDEN,
			            "the %s program runs commands (system() or "
			            "a pipe)",
			            name);
		return;
	}
}
