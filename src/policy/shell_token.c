/* shell_token.c: the tokens of the shell parser: operators, words and
 * io numbers, comments and line continuations, the bodies of
 * here-documents read after the line that opens them, and the checks
 * and error messages the grammar makes of tokens. */
#include "shell_parser.h"

#include "assay/buf.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- here-documents ---------------------------------------------- */

/* The substitutions in a live here-document body: their commands are
 * parsed like the line's. */
static void read_body_expansions(struct parser *p, void *arg)
{
	(void)arg;
	struct buf scratch;
	buf_init(&scratch, 0);
	unsigned fl = 0;
	while (!sh_failed(p) && sh_cur(p) >= 0) {
		int c = sh_cur(p);
		if (c == '\\' && sh_at(p, 1) >= 0)
			p->i += 2;
		else if (c == '$')
			sh_lex_dollar(p, &scratch, &fl, 1);
		else if (c == '`')
			sh_lex_backtick(p, &scratch, &fl, 1);
		else
			p->i++;
		buf_reset(&scratch);
	}
	buf_free(&scratch);
}

/* After a newline token: the bodies of the here-documents opened on
 * the line, in order. */
static void read_heredocs(struct parser *p)
{
	for (size_t k = p->hdbase; k < p->nhd && !sh_failed(p); k++) {
		struct sh_redir *r = p->hd[k];
		const char *delim = r->arg->text;
		size_t dlen = strlen(delim);
		int strip = !strcmp(r->op, "<<-");
		struct buf body;
		buf_init(&body, 0);
		for (;;) {
			if (p->i >= p->n) {
				sh_fail(p,
				        "here-document not terminated (no line "
				        "'%s')",
				        delim);
				break;
			}
			const char *line = p->s + p->i;
			const char *nl = memchr(line, '\n', p->n - p->i);
			size_t len = nl ? (size_t)(nl - line) : p->n - p->i;
			p->i += len + (nl ? 1 : 0);
			while (strip && len && *line == '\t') {
				line++;
				len--;
			}
			if (len == dlen && !memcmp(line, delim, dlen))
				break;
			buf_append(&body, line, len);
			sh_addc(&body, '\n');
		}
		r->body = sh_own(p->out, buf_detach(&body));
		if (r->body_live && !sh_failed(p))
			sh_with_source(p, r->body, strlen(r->body),
			               read_body_expansions, NULL);
	}
	p->nhd = p->hdbase;
}

/* --- tokens ------------------------------------------------------ */

static void set_op(struct token *t, const char *op)
{
	t->type = T_OP;
	strcpy(t->op, op);
}

/* The operators, longest first: the first that matches is the token. */
static const char *const OPS[] = {
    ";;&", "&>>", "<<<", "<<-", "&&", "||", "|&", ";;", ";&", "&>", "<<", "<&",
    "<>",  ">>",  ">&",  ">|",  "&",  "|",  ";",  "(",  ")",  "<",  ">",  NULL};

/* An io number: up to 9 digits. */
static int digits_only(const char *s)
{
	if (!*s || strlen(s) > 9)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* An io variable: {NAME} before a redirection. */
static int varfd(const char *s)
{
	size_t n = strlen(s);
	if (n < 3 || s[0] != '{' || s[n - 1] != '}' || !sh_is_name_start(s[1]))
		return 0;
	for (size_t k = 2; k < n - 1; k++)
		if (!sh_is_name_char(s[k]))
			return 0;
	return 1;
}

/* The next token after blanks, comments and line continuations; a
 * newline reads the here-documents its line opened. */
static struct token next_token(struct parser *p)
{
	struct token t = {.type = T_EOF};
	size_t before = p->i;
	for (;;) {
		int c = sh_cur(p);
		if (c == ' ' || c == '\t')
			p->i++;
		else if (c == '\\' && sh_at(p, 1) == '\n')
			p->i += 2;
		else if (c == '#') {
			while (sh_cur(p) >= 0 && sh_cur(p) != '\n')
				p->i++;
		} else
			break;
	}
	t.adjacent = p->i == before;
	int c = sh_cur(p);
	if (sh_failed(p) || c < 0)
		return t;
	if (c == '\n') {
		p->i++;
		t.type = T_NL;
		read_heredocs(p);
		return t;
	}
	if ((c == '<' || c == '>') && sh_at(p, 1) == '(')
		goto word;
	for (int k = 0; OPS[k]; k++) {
		size_t len = strlen(OPS[k]);
		if (p->n - p->i >= len && !memcmp(p->s + p->i, OPS[k], len)) {
			set_op(&t, OPS[k]);
			p->i += len;
			return t;
		}
	}
word:
	t.type = T_WORD;
	t.word = sh_lex_word(p);
	c = sh_cur(p);
	if ((c == '<' || c == '>') && sh_at(p, 1) != '(' &&
	    t.word->flags == 0 &&
	    (digits_only(t.word->raw) || varfd(t.word->raw))) {
		t.type = T_IONUM;
		t.fd = digits_only(t.word->raw) ? atoi(t.word->raw) : 10;
	}
	return t;
}

/* --- what the grammar asks of tokens ---------------------------- */

/* The next token, read once and kept until sh_consume. */
struct token *sh_peek(struct parser *p)
{
	if (!p->have) {
		p->tok = next_token(p);
		p->have = 1;
	}
	return &p->tok;
}

void sh_consume(struct parser *p)
{
	p->have = 0;
}

int sh_is_op(const struct token *t, const char *op)
{
	return t->type == T_OP && !strcmp(t->op, op);
}

/* A reserved word: an unquoted word spelled kw. */
int sh_is_kw(const struct token *t, const char *kw)
{
	return t->type == T_WORD && t->word->flags == 0 &&
	       !strcmp(t->word->raw, kw);
}

/* An operator that starts a redirection. */
int sh_is_redir_op(const struct token *t)
{
	static const char *const r[] = {"<",   ">",   ">>", ">|",  "<>",
	                                "<&",  ">&",  "&>", "&>>", "<<",
	                                "<<-", "<<<", NULL};
	if (t->type != T_OP)
		return 0;
	for (int k = 0; r[k]; k++)
		if (!strcmp(t->op, r[k]))
			return 1;
	return 0;
}

/* The token in words for an error message. */
const char *sh_describe(const struct token *t, char *out, size_t max)
{
	switch (t->type) {
	case T_EOF:
		return "end of input";
	case T_NL:
		return "newline";
	case T_OP:
		snprintf(out, max, "'%s'", t->op);
		return out;
	default:
		snprintf(out, max, "'%.24s'", t->word->raw);
		return out;
	}
}

/* The token that ends a nested list: ")" after what, or the end of the
 * text when what is NULL (a backquoted command). */
void sh_expect_close(struct parser *p, const char *what)
{
	struct token *t = sh_peek(p);
	if (what ? sh_is_op(t, ")") : t->type == T_EOF) {
		sh_consume(p);
		return;
	}
	char d[40];
	if (t->type == T_EOF && what)
		sh_fail(p, "unterminated %s (no closing ')')", what);
	else
		sh_fail(p, "unexpected %s", sh_describe(t, d, sizeof d));
}

/* The reserved word kw must come next. */
void sh_expect_kw(struct parser *p, const char *kw)
{
	struct token *t = sh_peek(p);
	if (sh_is_kw(t, kw)) {
		sh_consume(p);
		return;
	}
	char d[40];
	sh_fail(p, "expected '%s' before %s", kw, sh_describe(t, d, sizeof d));
}

void sh_skip_newlines(struct parser *p)
{
	while (sh_peek(p)->type == T_NL)
		sh_consume(p);
}
