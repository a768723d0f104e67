/* classify.c: the reasons of a shell command line. The line is parsed
 * into simple commands (shell.c); each becomes a part with a canonical
 * text for rules and the reasons found in its words and redirections:
 * its name picks an analyser (classify_table.c), wrappers are looked
 * through, inline code (bash -c, eval, python -c, here-documents into
 * an interpreter) is classified in turn, and what cannot be seen (a
 * command name from a variable, data piped into a shell) is a reason. */
#include "classify.h"

#include "assay/buf.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

/* Commands wrapped in each other deeper than this are not followed. */
#define MAX_WRAPPERS 12

/* The analyser a command's name picks, after the checks every command gets. */
void cls_argv(struct cls *c, struct sh_word **w, size_t n, struct cls_input in,
              int level)
{
	static const char *const quiet[] = {"echo", "printf", ":",
	                                    "true", "false",  NULL};
	if (!n)
		return;
	if (level > MAX_WRAPPERS) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "too many commands wrapped in each other to check");
		return;
	}
	const struct sh_word *w0 = w[0];
	char *raw = policy_snip(w0->raw, 40);
	if (w0->flags & SH_W_DYNAMIC) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "the command name comes from %s (%s): what runs is "
		            "only known at run time",
		            (w0->flags & (SH_W_CMDSUB | SH_W_PROCSUB))
		                ? "a command substitution"
		                : "a variable",
		            raw);
		if (c->decoder)
			reasons_add(c->r, POLICY_HIDDEN,
			            "decodes a payload (%s) and runs it",
			            c->decoder);
		free(raw);
		return;
	}
	if (w0->flags & (SH_W_GLOB | SH_W_BRACE)) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "the command name is a pattern (%s) that bash "
		            "expands to something else",
		            raw);
		free(raw);
		return;
	}
	free(raw);
	const char *b = cls_base_name(w0->text);
	if (!*b || cls_in_list(b, quiet))
		return;
	cls_check_paths(c, b, w, n);
	cls_handler_fn fn = cls_handler(b);
	if (fn)
		fn(c, w, n, in, level);
}

/* --- parts ------------------------------------------------------- */

/* The here-document or here-string that is the command's stdin, if any. */
static const struct sh_redir *stdin_doc(const struct sh_cmd *cmd)
{
	const struct sh_redir *doc = NULL;
	for (size_t k = 0; k < cmd->nredirs; k++) {
		const struct sh_redir *r = cmd->redirs[k];
		if ((r->fd == -1 || r->fd == 0) &&
		    (!strcmp(r->op, "<<") || !strcmp(r->op, "<<-") ||
		     !strcmp(r->op, "<<<")))
			doc = r;
		else if ((r->fd == -1 || r->fd == 0) && !strcmp(r->op, "<"))
			doc = NULL;
	}
	return doc;
}

/* The reasons of one simple command: its redirections, then its words. */
static void classify_cmd(struct cls *c, const struct sh_cmd *cmd)
{
	for (size_t k = 0; k < cmd->nredirs; k++)
		cls_check_redir(c, cmd->redirs[k]);
	if (cmd->cond || !cmd->argc)
		return;
	struct cls_input in = {cmd->stdin_fed, stdin_doc(cmd)};
	for (size_t k = 0; k < cmd->nredirs; k++)
		if (!strcmp(cmd->redirs[k]->op, "<") &&
		    (cmd->redirs[k]->fd == -1 || cmd->redirs[k]->fd == 0))
			in.fed = 0; /* a file: a script like any other */
	cls_argv(c, cmd->argv, cmd->argc, in, 0);
}

/* A redirection as rules see it (a here-document with its body). */
static void canon_redir(struct buf *b, const struct sh_redir *r)
{
	if (r->fd >= 0)
		buf_printf(b, "%d", r->fd);
	buf_puts(b, r->op);
	if (r->body) {
		buf_puts(b, r->arg->raw);
		buf_puts(b, "\n");
		buf_puts(b, r->body);
		buf_puts(b, r->arg->text);
		return;
	}
	char *s = sh_word_canon(r->arg);
	buf_puts(b, s);
	free(s);
}

/* A simple command as rules see it: words re-quoted the plain way, so
 * r''m, \rm and "rm" all read rm. */
static char *canon_cmd(const struct sh_cmd *cmd)
{
	struct buf b;
	buf_init(&b, 0);
	for (size_t k = 0; k < cmd->nassigns; k++) {
		const struct sh_word *w = cmd->assigns[k];
		const char *eq = strchr(w->text, '=');
		if (b.len)
			buf_puts(&b, " ");
		if ((w->flags & (SH_W_DYNAMIC | SH_W_EXPANDS)) || !eq) {
			buf_puts(&b, w->raw);
			continue;
		}
		char *v = sh_quote(eq + 1);
		buf_printf(&b, "%.*s%s", (int)(eq + 1 - w->text), w->text,
		           *v == '\'' || eq[1] ? v : "");
		free(v);
	}
	for (size_t k = 0; k < cmd->argc; k++) {
		char *s = cmd->cond ? xstrdup(cmd->argv[k]->raw)
		                    : sh_word_canon(cmd->argv[k]);
		if (b.len)
			buf_puts(&b, " ");
		buf_puts(&b, s);
		free(s);
	}
	for (size_t k = 0; k < cmd->nredirs; k++) {
		if (b.len)
			buf_puts(&b, " ");
		canon_redir(&b, cmd->redirs[k]);
	}
	return buf_detach(&b);
}

/* A decoder in the line: decoded data that then runs is hidden. */
static const char *find_decoder(const struct sh_parse *sp)
{
	static const char *const always[] = {
	    "uudecode", "gunzip",  "zcat",   "bzcat", "xzcat", "unxz",
	    "bunzip2",  "zstdcat", "unzstd", "lzcat", NULL};
	static const char *const with_d[] = {
	    "base64", "base32", "basenc",  "gzip", "bzip2",
	    "xz",     "zstd",   "openssl", "lzma", NULL};
	for (size_t k = 0; k < sp->ncmds; k++) {
		const struct sh_cmd *cmd = sp->cmds[k];
		if (!cmd->argc || !sh_known(cmd->argv[0]))
			continue;
		const char *b = cls_base_name(cmd->argv[0]->text);
		if (cls_in_list(b, always))
			return b;
		if (!strcmp(b, "xxd") &&
		    cls_has_opt(cmd->argv, cmd->argc, "r", NULL))
			return "xxd -r";
		if (cls_in_list(b, with_d) &&
		    cls_has_opt(cmd->argv, cmd->argc, "dD",
		                (const char *const[]){"--decode", NULL})) {
			return !strcmp(b, "base64")   ? "base64 -d"
			       : !strcmp(b, "base32") ? "base32 -d"
			                              : b;
		}
	}
	return NULL;
}

/* Hand r and forms over to part, leaving them empty. */
static void to_part(struct policy_part *part, struct reasons *r,
                    struct strv *forms)
{
	part->reasons = r->v;
	part->nreasons = r->n;
	part->forms = forms->v;
	part->nforms = forms->n;
	memset(r, 0, sizeof *r);
	memset(forms, 0, sizeof *forms);
}

/* A shell command line as parts: one per simple command, and one for the
 * redirections of its compound commands. */
void policy_shell_parts(const struct policy *pol, const char *cmd,
                        struct policy_part **parts, size_t *nparts,
                        char **parse_error)
{
	struct sh_parse *sp = sh_parse(cmd, strlen(cmd), 0);
	if (sp->error)
		*parse_error = xstrdup(sp->error);
	size_t n = sp->ncmds + (sp->nxredirs ? 1 : 0);
	struct policy_part *v = xcalloc(n ? n : 1, sizeof *v);
	struct cls c = {.pol = pol, .cwd_state = CWD_WORKSPACE};
	c.decoder = find_decoder(sp);
	for (size_t k = 0; k < sp->ncmds; k++) {
		struct reasons r = {0};
		struct strv forms = {0};
		c.r = &r;
		c.forms = &forms;
		v[k].text = canon_cmd(sp->cmds[k]);
		if (sp->cmds[k]->argc && !sp->cmds[k]->cond)
			cls_add_forms(&c, sp->cmds[k]->argv, sp->cmds[k]->argc);
		classify_cmd(&c, sp->cmds[k]);
		to_part(&v[k], &r, &forms);
	}
	if (sp->nxredirs) {
		struct reasons r = {0};
		struct strv forms = {0};
		struct buf b;
		buf_init(&b, 0);
		c.r = &r;
		c.forms = &forms;
		for (size_t k = 0; k < sp->nxredirs; k++) {
			if (b.len)
				buf_puts(&b, " ");
			canon_redir(&b, sp->xredirs[k]);
			cls_check_redir(&c, sp->xredirs[k]);
		}
		v[sp->ncmds].text = buf_detach(&b);
		to_part(&v[sp->ncmds], &r, &forms);
	}
	*parts = v;
	*nparts = n;
	sh_parse_free(sp);
}

/* Inline code joins c's part: its commands become forms, their reasons
 * c's, in a fresh directory context one level deeper. */
void policy_inline_shell(struct cls *c, const char *code, const char *label)
{
	if (c->depth >= POLICY_MAX_INLINE) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "%s: inline code nested too deeply to check",
		            label);
		return;
	}
	struct sh_parse *sp = sh_parse(code, strlen(code), c->depth + 1);
	if (sp->error) {
		char *s = policy_snip(sp->error, 80);
		reasons_add(c->r, POLICY_HIDDEN,
		            "%s: the inline shell code cannot be parsed (%s)",
		            label, s);
		free(s);
	}
	struct cls inner = *c;
	inner.depth++;
	inner.cwd_state = CWD_WORKSPACE;
	inner.cwd[0] = '\0';
	const char *dec = find_decoder(sp);
	if (dec)
		inner.decoder = dec;
	for (size_t k = 0; k < sp->ncmds; k++) {
		strv_add_unique(c->forms, canon_cmd(sp->cmds[k]));
		if (sp->cmds[k]->argc && !sp->cmds[k]->cond)
			cls_add_forms(&inner, sp->cmds[k]->argv,
			              sp->cmds[k]->argc);
		classify_cmd(&inner, sp->cmds[k]);
	}
	for (size_t k = 0; k < sp->nxredirs; k++)
		cls_check_redir(&inner, sp->xredirs[k]);
	sh_parse_free(sp);
}
