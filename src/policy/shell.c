/* shell.c: the shell parser (see shell.h). A recursive descent over
 * the bash grammar: lists, and-or lists, pipelines, simple and compound
 * commands, functions and redirections; words and tokens come from
 * shell_word.c and shell_token.c. Substitutions are parsed as they are
 * met, so their commands join the list. Anything it does not understand
 * is an error, never a guess. */
#include "shell_parser.h"

#include "assay/buf.h"
#include "assay/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growing vector of pointers, copied into the parse when complete. */
struct ptrvec {
	void **v;
	size_t n, cap;
};

static int parse_command(struct parser *p, struct ctx c);

/* --- bookkeeping ------------------------------------------------- */

/* ptr, freed with the parse. */
void *sh_own(struct sh_parse *o, void *ptr)
{
	if (o->nowned == o->capowned) {
		o->capowned = o->capowned ? o->capowned * 2 : 64;
		o->owned = xrealloc(o->owned, o->capowned * sizeof *o->owned);
	}
	o->owned[o->nowned++] = ptr;
	return ptr;
}

static void vpush(struct ptrvec *v, void *x)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 8;
		v->v = xrealloc(v->v, v->cap * sizeof *v->v);
	}
	v->v[v->n++] = x;
}

/* An owned exact-size copy of a vector, which is emptied. */
static void *vfinish(struct sh_parse *o, struct ptrvec *v)
{
	void **a = NULL;
	if (v->n) {
		a = sh_own(o, xmalloc(v->n * sizeof *a));
		memcpy(a, v->v, v->n * sizeof *a);
	}
	free(v->v);
	v->v = NULL;
	v->cap = 0;
	return a;
}

/* The first error wins; later ones are dropped. */
void sh_fail(struct parser *p, const char *fmt, ...)
{
	if (sh_failed(p))
		return;
	va_list ap;
	va_start(ap, fmt);
	p->out->error = xvasprintf(fmt, ap);
	va_end(ap);
}

/* One more frame of recursion; 0 (with an error) past the limit. */
int sh_enter(struct parser *p)
{
	if (++p->frames > SH_MAX_FRAMES) {
		sh_fail(p, "nested too deeply to check (more than %d levels)",
		        SH_MAX_DEPTH);
		return 0;
	}
	return !sh_failed(p);
}

void sh_leave(struct parser *p)
{
	p->frames--;
}

/* A word owned by the parse; text is taken over. */
struct sh_word *sh_new_word(struct parser *p, const char *raw, size_t rawlen,
                            struct buf *text, unsigned flags)
{
	struct sh_word *w = sh_own(p->out, xcalloc(1, sizeof *w));
	w->raw = sh_own(p->out, xstrndup(raw, rawlen));
	w->text = sh_own(p->out, buf_detach(text));
	w->flags = flags;
	return w;
}

/* Parse another text (backquoted command, here-document body) with the
 * same parser; what it finds joins the same list. */
void sh_with_source(struct parser *p, const char *src, size_t len,
                    void (*fn)(struct parser *, void *), void *arg)
{
	const char *s = p->s;
	size_t n = p->n, i = p->i, nhd = p->nhd, hdbase = p->hdbase;
	struct token tok = p->tok;
	int have = p->have;
	p->s = src;
	p->n = len;
	p->i = 0;
	p->have = 0;
	p->hdbase = nhd;
	fn(p, arg);
	if (p->nhd > nhd)
		sh_fail(p, "here-document not terminated (no line '%s')",
		        p->hd[nhd]->arg->text);
	p->s = s;
	p->n = n;
	p->i = i;
	p->nhd = nhd;
	p->hdbase = hdbase;
	p->tok = tok;
	p->have = have;
}

/* --- commands ---------------------------------------------------- */

/* One redirection: an optional io number, the operator and its word; a
 * here-document waits for its body at the next newline. */
static struct sh_redir *parse_redir(struct parser *p)
{
	struct sh_redir *r = sh_own(p->out, xcalloc(1, sizeof *r));
	r->fd = -1;
	struct token *t = sh_peek(p);
	if (t->type == T_IONUM) {
		r->fd = t->fd;
		sh_consume(p);
		t = sh_peek(p);
	}
	char d[40];
	if (!sh_is_redir_op(t)) {
		sh_fail(p, "expected a redirection before %s",
		        sh_describe(t, d, sizeof d));
		return NULL;
	}
	strcpy(r->op, t->op);
	sh_consume(p);
	t = sh_peek(p);
	if (t->type != T_WORD) {
		sh_fail(p, "expected a word after '%s', not %s", r->op,
		        sh_describe(t, d, sizeof d));
		return NULL;
	}
	r->arg = t->word;
	sh_consume(p);
	if (!strcmp(r->op, "<<") || !strcmp(r->op, "<<-")) {
		r->body_live = !(r->arg->flags & SH_W_QUOTED);
		if (p->nhd == p->caphd) {
			p->caphd = p->caphd ? p->caphd * 2 : 4;
			p->hd = xrealloc(p->hd, p->caphd * sizeof *p->hd);
		}
		p->hd[p->nhd++] = r;
	}
	return r;
}

/* Whether the next token starts a redirection. */
static int starts_redir(struct parser *p)
{
	struct token *t = sh_peek(p);
	return t->type == T_IONUM || sh_is_redir_op(t);
}

/* A simple command joins the list. */
static void add_cmd(struct parser *p, struct sh_cmd *c)
{
	struct sh_parse *o = p->out;
	if (o->ncmds == p->cmdcap) {
		p->cmdcap = p->cmdcap ? p->cmdcap * 2 : 16;
		o->cmds = xrealloc(o->cmds, p->cmdcap * sizeof *o->cmds);
	}
	o->cmds[o->ncmds++] = c;
}

/* A simple command placed as the context c says. */
static struct sh_cmd *new_cmd(struct parser *p, struct ctx c)
{
	struct sh_cmd *cmd = sh_own(p->out, xcalloc(1, sizeof *cmd));
	cmd->depth = c.depth;
	cmd->subst = c.subst;
	cmd->stdin_fed = c.stdin_fed;
	cmd->pipeline = c.pipeline;
	cmd->pipe_pos = c.pipe_pos;
	return cmd;
}

/* A redirection that feeds stdin (<, <<, <<<, <>; not <&). */
static int stdin_redir(const struct sh_redir *r)
{
	return r->op[0] == '<' && strcmp(r->op, "<&");
}

/* Redirections after a compound command apply to every command in it;
 * input redirections feed their stdin. */
static void compound_redirs(struct parser *p, size_t first)
{
	struct sh_parse *o = p->out;
	while (!sh_failed(p) && starts_redir(p)) {
		struct sh_redir *r = parse_redir(p);
		if (!r)
			return;
		if (o->nxredirs == p->xcap) {
			p->xcap = p->xcap ? p->xcap * 2 : 4;
			o->xredirs =
			    xrealloc(o->xredirs, p->xcap * sizeof *o->xredirs);
		}
		o->xredirs[o->nxredirs++] = r;
		if (stdin_redir(r))
			for (size_t k = first; k < o->ncmds; k++)
				o->cmds[k]->stdin_fed = 1;
	}
}

/* NAME=value, NAME+=value or NAME[i]=value before the command name. */
static int is_assignment(const struct sh_word *w)
{
	const char *s = w->raw;
	if (!sh_is_name_start((unsigned char)*s))
		return 0;
	while (sh_is_name_char((unsigned char)*s))
		s++;
	if (*s == '[') {
		s = strchr(s, ']');
		if (!s)
			return 0;
		s++;
	}
	if (*s == '+')
		s++;
	return *s == '=';
}

/* The (...) of an array assignment: words, up to ")". */
static void parse_array_value(struct parser *p)
{
	sh_consume(p); /* ( */
	for (;;) {
		struct token *t = sh_peek(p);
		if (t->type == T_NL || t->type == T_WORD) {
			sh_consume(p);
			continue;
		}
		if (sh_is_op(t, ")")) {
			sh_consume(p);
			return;
		}
		char d[40];
		sh_fail(p, "unexpected %s in an array value",
		        sh_describe(t, d, sizeof d));
		return;
	}
}

/* The compound command that is a function's body. */
static void parse_function_body(struct parser *p, struct ctx c)
{
	sh_skip_newlines(p);
	c.depth++;
	if (!parse_command(p, c)) {
		char d[40];
		sh_fail(p, "expected a function body before %s",
		        sh_describe(sh_peek(p), d, sizeof d));
	}
}

/* A simple command (assignments, words, redirections) or a function
 * definition NAME() BODY; 0 if there is neither. */
static int parse_simple(struct parser *p, struct ctx c)
{
	struct ptrvec assigns = {0}, argv = {0}, redirs = {0};
	int function = 0;
	while (!sh_failed(p)) {
		if (starts_redir(p)) {
			struct sh_redir *r = parse_redir(p);
			if (r)
				vpush(&redirs, r);
			continue;
		}
		struct token *t = sh_peek(p);
		if (t->type != T_WORD)
			break;
		if (!argv.n && is_assignment(t->word)) {
			struct sh_word *w = t->word;
			sh_consume(p);
			vpush(&assigns, w);
			size_t len = strlen(w->raw);
			if (w->raw[len - 1] == '=' &&
			    sh_is_op(sh_peek(p), "(") && sh_peek(p)->adjacent)
				parse_array_value(p);
			continue;
		}
		vpush(&argv, t->word);
		sh_consume(p);
		if (argv.n == 1 && !assigns.n && sh_is_op(sh_peek(p), "(")) {
			sh_consume(p);
			if (!sh_is_op(sh_peek(p), ")")) {
				sh_fail(p, "expected ')' after '%s('",
				        ((struct sh_word *)argv.v[0])->raw);
				break;
			}
			sh_consume(p);
			parse_function_body(p, c);
			function = 1;
			break;
		}
	}
	int any = assigns.n || argv.n || redirs.n;
	if (function || !any) {
		free(assigns.v);
		free(argv.v);
		free(redirs.v);
		return function;
	}
	struct sh_cmd *cmd = new_cmd(p, c);
	cmd->nassigns = assigns.n;
	cmd->assigns = vfinish(p->out, &assigns);
	cmd->argc = argv.n;
	cmd->argv = vfinish(p->out, &argv);
	cmd->nredirs = redirs.n;
	cmd->redirs = vfinish(p->out, &redirs);
	add_cmd(p, cmd);
	return 1;
}

/* [[ ... ]]: its words become one pseudo command. */
static void parse_cond(struct parser *p, struct ctx c)
{
	struct ptrvec argv = {0};
	vpush(&argv, sh_peek(p)->word);
	sh_consume(p);
	while (!sh_failed(p)) {
		struct token *t = sh_peek(p);
		if (t->type == T_EOF) {
			sh_fail(p, "unterminated [[ (no ']]')");
			break;
		}
		if (sh_is_kw(t, "]]")) {
			vpush(&argv, t->word);
			sh_consume(p);
			break;
		}
		if (t->type == T_WORD || t->type == T_IONUM)
			vpush(&argv, t->word);
		else if (t->type == T_OP) {
			struct buf b;
			buf_init(&b, 0);
			buf_puts(&b, t->op);
			vpush(&argv,
			      sh_new_word(p, t->op, strlen(t->op), &b, 0));
		}
		sh_consume(p);
	}
	struct sh_cmd *cmd = new_cmd(p, c);
	cmd->cond = 1;
	cmd->argc = argv.n;
	cmd->argv = vfinish(p->out, &argv);
	add_cmd(p, cmd);
}

/* if ... then ... [elif ... then ...] [else ...] fi */
static void parse_if(struct parser *p, struct ctx c)
{
	sh_consume(p);
	sh_parse_list(p, c);
	sh_expect_kw(p, "then");
	sh_parse_list(p, c);
	while (!sh_failed(p)) {
		struct token *t = sh_peek(p);
		if (sh_is_kw(t, "elif")) {
			sh_consume(p);
			sh_parse_list(p, c);
			sh_expect_kw(p, "then");
			sh_parse_list(p, c);
		} else if (sh_is_kw(t, "else")) {
			sh_consume(p);
			sh_parse_list(p, c);
		} else {
			break;
		}
	}
	sh_expect_kw(p, "fi");
}

/* do ... done (or { ... } as bash allows). */
static void parse_loop_body(struct parser *p, struct ctx c)
{
	if (sh_is_kw(sh_peek(p), "{")) {
		sh_consume(p);
		sh_parse_list(p, c);
		sh_expect_kw(p, "}");
		return;
	}
	sh_expect_kw(p, "do");
	sh_parse_list(p, c);
	sh_expect_kw(p, "done");
}

/* for NAME [in WORDS]; BODY, for ((...)); BODY, and select. */
static void parse_for(struct parser *p, struct ctx c)
{
	sh_consume(p);
	struct token *t = sh_peek(p);
	if (sh_is_op(t, "(") && sh_cur(p) == '(') {
		sh_consume(p);
		p->i++;
		sh_scan_arith(p, "for ((...))");
	} else if (t->type == T_WORD) {
		sh_consume(p);
		sh_skip_newlines(p);
		if (sh_is_kw(sh_peek(p), "in")) {
			sh_consume(p);
			while (sh_peek(p)->type == T_WORD)
				sh_consume(p);
		}
	} else {
		char d[40];
		sh_fail(p, "expected a variable name after 'for', not %s",
		        sh_describe(t, d, sizeof d));
		return;
	}
	if (sh_is_op(sh_peek(p), ";"))
		sh_consume(p);
	sh_skip_newlines(p);
	parse_loop_body(p, c);
}

/* case WORD in [(]PATTERN[|PATTERN]) LIST ;; ... esac */
static void parse_case(struct parser *p, struct ctx c)
{
	char d[40];
	sh_consume(p);
	if (sh_peek(p)->type != T_WORD) {
		sh_fail(p, "expected a word after 'case', not %s",
		        sh_describe(sh_peek(p), d, sizeof d));
		return;
	}
	sh_consume(p);
	sh_skip_newlines(p);
	sh_expect_kw(p, "in");
	sh_skip_newlines(p);
	while (!sh_failed(p)) {
		struct token *t = sh_peek(p);
		if (sh_is_kw(t, "esac")) {
			sh_consume(p);
			return;
		}
		if (sh_is_op(t, "("))
			sh_consume(p);
		for (;;) {
			t = sh_peek(p);
			if (t->type != T_WORD) {
				sh_fail(p, "expected a case pattern before %s",
				        sh_describe(t, d, sizeof d));
				return;
			}
			sh_consume(p);
			if (!sh_is_op(sh_peek(p), "|"))
				break;
			sh_consume(p);
		}
		if (!sh_is_op(sh_peek(p), ")")) {
			sh_fail(p, "expected ')' after a case pattern, not %s",
			        sh_describe(sh_peek(p), d, sizeof d));
			return;
		}
		sh_consume(p);
		sh_parse_list(p, c);
		t = sh_peek(p);
		if (sh_is_op(t, ";;") || sh_is_op(t, ";&") ||
		    sh_is_op(t, ";;&")) {
			sh_consume(p);
			sh_skip_newlines(p);
		} else if (!sh_is_kw(t, "esac")) {
			sh_fail(p, "expected ';;' or 'esac' before %s",
			        sh_describe(t, d, sizeof d));
		}
	}
}

/* function NAME [()] BODY */
static void parse_function(struct parser *p, struct ctx c)
{
	sh_consume(p);
	struct token *t = sh_peek(p);
	if (t->type != T_WORD) {
		char d[40];
		sh_fail(p, "expected a function name, not %s",
		        sh_describe(t, d, sizeof d));
		return;
	}
	sh_consume(p);
	if (sh_is_op(sh_peek(p), "(")) {
		sh_consume(p);
		if (!sh_is_op(sh_peek(p), ")")) {
			sh_fail(p, "expected ')' in a function definition");
			return;
		}
		sh_consume(p);
	}
	parse_function_body(p, c);
}

/* A compound command led by a reserved word; 0 if t is not one. */
static int parse_keyword(struct parser *p, struct ctx c)
{
	struct token *t = sh_peek(p);
	if (sh_is_kw(t, "{")) {
		sh_consume(p);
		sh_parse_list(p, c);
		sh_expect_kw(p, "}");
	} else if (sh_is_kw(t, "if")) {
		parse_if(p, c);
	} else if (sh_is_kw(t, "while") || sh_is_kw(t, "until")) {
		sh_consume(p);
		sh_parse_list(p, c);
		parse_loop_body(p, c);
	} else if (sh_is_kw(t, "for") || sh_is_kw(t, "select")) {
		parse_for(p, c);
	} else if (sh_is_kw(t, "case")) {
		parse_case(p, c);
	} else if (sh_is_kw(t, "function")) {
		parse_function(p, c);
	} else if (sh_is_kw(t, "[[")) {
		parse_cond(p, c);
	} else {
		return 0;
	}
	return 1;
}

/* One command: a subshell, an arithmetic command, a compound command led
 * by a reserved word, coproc, or a simple command; then the
 * redirections of a compound one. 0 if there is none. */
static int parse_command(struct parser *p, struct ctx c)
{
	if (!sh_enter(p))
		return 1;
	size_t first = p->out->ncmds;
	struct ctx inner = c;
	inner.depth++;
	struct token *t = sh_peek(p);
	int done = 1;
	if (sh_is_op(t, "(")) {
		sh_consume(p);
		/* "((" opens an arithmetic command */
		if (sh_cur(p) == '(') {
			p->i++;
			sh_scan_arith(p, "((...))");
		} else {
			sh_parse_list(p, inner);
			sh_expect_close(p, "( subshell");
		}
	} else if (sh_is_kw(t, "coproc")) {
		sh_consume(p);
		done = parse_command(p, c);
		sh_leave(p);
		return done;
	} else if (!parse_keyword(p, inner)) {
		done = parse_simple(p, c);
		sh_leave(p);
		return done;
	}
	compound_redirs(p, first);
	sh_leave(p);
	return done;
}

/* A pipeline: [!] [time [-p]] command [| command]... */
static void parse_pipeline(struct parser *p, struct ctx c)
{
	for (;;) {
		struct token *t = sh_peek(p);
		if (sh_is_kw(t, "!")) {
			sh_consume(p);
		} else if (sh_is_kw(t, "time")) {
			sh_consume(p);
			if (sh_is_kw(sh_peek(p), "-p"))
				sh_consume(p);
		} else {
			break;
		}
	}
	int pl = p->npipelines++;
	for (int pos = 0; !sh_failed(p); pos++) {
		struct ctx e = c;
		e.pipeline = pl;
		e.pipe_pos = pos;
		if (pos > 0)
			e.stdin_fed = 1;
		if (!parse_command(p, e)) {
			char d[40];
			sh_fail(p, "expected a command before %s",
			        sh_describe(sh_peek(p), d, sizeof d));
			return;
		}
		struct token *t = sh_peek(p);
		if (!sh_is_op(t, "|") && !sh_is_op(t, "|&"))
			return;
		sh_consume(p);
		p->fed = 1;
		sh_skip_newlines(p);
	}
}

/* Pipelines joined by && and ||. */
static void parse_and_or(struct parser *p, struct ctx c)
{
	parse_pipeline(p, c);
	while (!sh_failed(p)) {
		struct token *t = sh_peek(p);
		if (!sh_is_op(t, "&&") && !sh_is_op(t, "||"))
			return;
		sh_consume(p);
		p->fed = c.stdin_fed;
		sh_skip_newlines(p);
		parse_pipeline(p, c);
	}
}

/* Whether the next token ends a list (a closing word or operator). */
static int at_list_end(struct parser *p)
{
	static const char *const kws[] = {"then", "else", "elif", "fi", "do",
	                                  "done", "esac", "}",    NULL};
	struct token *t = sh_peek(p);
	if (t->type == T_EOF)
		return 1;
	if (t->type == T_OP)
		return !strcmp(t->op, ")") || !strcmp(t->op, ";;") ||
		       !strcmp(t->op, ";&") || !strcmp(t->op, ";;&");
	for (int k = 0; kws[k]; k++)
		if (sh_is_kw(t, kws[k]))
			return 1;
	return 0;
}

/* A list of and-or lists separated by ;, & or newlines. */
void sh_parse_list(struct parser *p, struct ctx c)
{
	if (!sh_enter(p))
		return;
	p->fed = c.stdin_fed;
	sh_skip_newlines(p);
	while (!sh_failed(p) && !at_list_end(p)) {
		parse_and_or(p, c);
		struct token *t = sh_peek(p);
		if (sh_is_op(t, ";") || sh_is_op(t, "&")) {
			sh_consume(p);
			p->fed = c.stdin_fed;
			sh_skip_newlines(p);
		} else if (t->type == T_NL) {
			p->fed = c.stdin_fed;
			sh_skip_newlines(p);
		} else {
			break;
		}
	}
	sh_leave(p);
}

struct sh_parse *sh_parse(const char *src, size_t len, int depth)
{
	struct sh_parse *o = xcalloc(1, sizeof *o);
	if (len > SH_MAX_INPUT) {
		o->error = xasprintf("too long to check (%zu bytes; at most "
		                     "%u)",
		                     len, SH_MAX_INPUT);
		return o;
	}
	if (memchr(src, '\0', len)) {
		o->error = xstrdup("contains a NUL byte");
		return o;
	}
	struct parser p = {.s = src, .n = len, .out = o};
	p.frames = depth * 3;
	struct ctx c = {.depth = depth, .pipeline = -1};
	sh_parse_list(&p, c);
	struct token *t = sh_peek(&p);
	if (t->type != T_EOF) {
		char d[40];
		sh_fail(&p, "unexpected %s", sh_describe(t, d, sizeof d));
	}
	if (p.nhd)
		sh_fail(&p, "here-document not terminated (no line '%s')",
		        p.hd[0]->arg->text);
	free(p.hd);
	return o;
}

void sh_parse_free(struct sh_parse *o)
{
	if (!o)
		return;
	for (size_t k = 0; k < o->nowned; k++)
		free(o->owned[k]);
	free(o->owned);
	free(o->cmds);
	free(o->xredirs);
	free(o->error);
	free(o);
}
