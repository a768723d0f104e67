/* shell.c: the shell tokenizer and parser (see shell.h). A recursive
 * descent over the bash grammar: lists, and-or lists, pipelines,
 * simple and compound commands, functions, redirections and
 * here-documents; words with every kind of quoting and substitution.
 * Substitutions are parsed as they are met, so their commands join the
 * list. Anything it does not understand is an error, never a guess. */
#include "shell.h"

#include "assay/buf.h"
#include "assay/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frames of recursion allowed per nesting level (a level costs a few). */
#define MAX_FRAMES (SH_MAX_DEPTH * 3)

enum tok_type { T_EOF, T_WORD, T_IONUM, T_OP, T_NL };

struct token {
	enum tok_type type;
	char op[4];
	struct sh_word *word;
	int fd;
	int adjacent; /* no blank before it */
};

struct ctx {
	int depth;
	int subst;
	int stdin_fed;
	int pipeline;
	int pipe_pos;
};

struct parser {
	const char *s;
	size_t n, i;
	struct sh_parse *out;
	struct token tok;
	int have;
	struct sh_redir **hd; /* here-documents waiting for their body */
	size_t nhd, caphd;
	size_t hdbase; /* the first of them opened in the current text */
	int fed;       /* the words being read belong to a command whose
	                  stdin is fed (a pipe or a redirection) */
	int frames;
	int npipelines;
	size_t cmdcap, xcap;
};

struct ptrvec {
	void **v;
	size_t n, cap;
};

static void parse_list(struct parser *p, struct ctx c);
static int parse_command(struct parser *p, struct ctx c);
static void lex_dollar(struct parser *p, struct buf *text, unsigned *flags,
                       int in_dq);
static void lex_backtick(struct parser *p, struct buf *text, unsigned *flags,
                         int in_dq);
static void lex_dquote(struct parser *p, struct buf *text, unsigned *flags);

/* --- bookkeeping ------------------------------------------------- */

static void *own(struct sh_parse *o, void *ptr)
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
		a = own(o, xmalloc(v->n * sizeof *a));
		memcpy(a, v->v, v->n * sizeof *a);
	}
	free(v->v);
	v->v = NULL;
	v->cap = 0;
	return a;
}

static int failed(const struct parser *p)
{
	return p->out->error != NULL;
}

static void fail(struct parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fail(struct parser *p, const char *fmt, ...)
{
	if (failed(p))
		return;
	va_list ap;
	va_start(ap, fmt);
	p->out->error = xvasprintf(fmt, ap);
	va_end(ap);
}

static int enter(struct parser *p)
{
	if (++p->frames > MAX_FRAMES) {
		fail(p, "nested too deeply to check (more than %d levels)",
		     SH_MAX_DEPTH);
		return 0;
	}
	return !failed(p);
}

static void leave(struct parser *p)
{
	p->frames--;
}

static int cur(const struct parser *p)
{
	return p->i < p->n ? (unsigned char)p->s[p->i] : -1;
}

static int at(const struct parser *p, size_t k)
{
	return p->i + k < p->n ? (unsigned char)p->s[p->i + k] : -1;
}

static void addc(struct buf *b, int c)
{
	char ch = (char)c;
	buf_append(b, &ch, 1);
}

static struct sh_word *new_word(struct parser *p, const char *raw,
                                size_t rawlen, struct buf *text, unsigned flags)
{
	struct sh_word *w = own(p->out, xcalloc(1, sizeof *w));
	w->raw = own(p->out, xstrndup(raw, rawlen));
	w->text = own(p->out, buf_detach(text));
	w->flags = flags;
	return w;
}

/* Parse another text (backquoted command, here-document body) with the
 * same parser; what it finds joins the same list. */
static void with_source(struct parser *p, const char *src, size_t len,
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
		fail(p, "here-document not terminated (no line '%s')",
		     p->hd[nhd]->arg->text);
	p->s = s;
	p->n = n;
	p->i = i;
	p->nhd = nhd;
	p->hdbase = hdbase;
	p->tok = tok;
	p->have = have;
}

/* --- words ------------------------------------------------------- */

static void lex_squote(struct parser *p, struct buf *text)
{
	p->i++;
	const char *end = memchr(p->s + p->i, '\'', p->n - p->i);
	if (!end) {
		fail(p, "unterminated single quote");
		p->i = p->n;
		return;
	}
	buf_append(text, p->s + p->i, (size_t)(end - (p->s + p->i)));
	p->i = (size_t)(end - p->s) + 1;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void put_utf8(struct buf *b, unsigned long u)
{
	char o[4];
	size_t n;
	if (u > 0x10ffff)
		return;
	if (u < 0x80) {
		o[0] = (char)u;
		n = 1;
	} else if (u < 0x800) {
		o[0] = (char)(0xc0 | (u >> 6));
		o[1] = (char)(0x80 | (u & 0x3f));
		n = 2;
	} else if (u < 0x10000) {
		o[0] = (char)(0xe0 | (u >> 12));
		o[1] = (char)(0x80 | ((u >> 6) & 0x3f));
		o[2] = (char)(0x80 | (u & 0x3f));
		n = 3;
	} else {
		o[0] = (char)(0xf0 | (u >> 18));
		o[1] = (char)(0x80 | ((u >> 12) & 0x3f));
		o[2] = (char)(0x80 | ((u >> 6) & 0x3f));
		o[3] = (char)(0x80 | (u & 0x3f));
		n = 4;
	}
	buf_append(b, o, n);
}

/* Up to max digits of base (8 or 16) at the cursor. */
static unsigned long lex_number(struct parser *p, int base, int max)
{
	unsigned long v = 0;
	for (int k = 0; k < max; k++) {
		int d =
		    base == 8
		        ? (cur(p) >= '0' && cur(p) <= '7' ? cur(p) - '0' : -1)
		        : hexval(cur(p));
		if (d < 0)
			break;
		v = v * (unsigned long)base + (unsigned long)d;
		p->i++;
	}
	return v;
}

/* One escape of $'...' (the cursor is on the backslash). */
static void lex_ansi_escape(struct parser *p, struct buf *text)
{
	static const char from[] = "abeEfnrtv\\'\"?";
	static const char to[] = "\a\b\033\033\f\n\r\t\v\\'\"?";
	p->i++;
	int c = cur(p);
	if (c < 0)
		return;
	const char *k = strchr(from, c);
	if (k && c) {
		addc(text, to[k - from]);
		p->i++;
		return;
	}
	unsigned long v;
	switch (c) {
	case 'x':
		p->i++;
		v = lex_number(p, 16, 2);
		if (v)
			addc(text, (int)v);
		return;
	case 'u':
	case 'U':
		p->i++;
		put_utf8(text, lex_number(p, 16, c == 'u' ? 4 : 8));
		return;
	case 'c':
		p->i++;
		if (cur(p) >= 0) {
			addc(text, cur(p) & 0x1f);
			p->i++;
		}
		return;
	default:
		if (c >= '0' && c <= '7') {
			v = lex_number(p, 8, 3);
			if (v & 0xff)
				addc(text, (int)(v & 0xff));
			return;
		}
		addc(text, '\\');
		addc(text, c);
		p->i++;
	}
}

/* $'...': decoded, so the policy sees what bash will see. */
static void lex_ansi(struct parser *p, struct buf *text)
{
	p->i += 2;
	while (!failed(p)) {
		int c = cur(p);
		if (c < 0) {
			fail(p, "unterminated $'...' quote");
			return;
		}
		if (c == '\'') {
			p->i++;
			return;
		}
		if (c == '\\')
			lex_ansi_escape(p, text);
		else {
			addc(text, c);
			p->i++;
		}
	}
}

/* A token of a nested list must be ")" to close it. */
static void expect_close(struct parser *p, const char *what);

/* The context of a substitution's commands: their stdin is the one
 * of the command around them, or the output it writes (>(...)). */
static struct ctx subst_ctx(const struct parser *p, int fed)
{
	struct ctx c = {.depth = p->frames / 3 + 1, .subst = 1};
	c.pipeline = -1;
	c.stdin_fed = fed || p->fed;
	return c;
}

/* $( ... ), <( ... ), >( ... ): the cursor is after the "(". */
static void parse_subst(struct parser *p, const char *what, int fed)
{
	if (!enter(p))
		return;
	int saved = p->fed;
	parse_list(p, subst_ctx(p, fed));
	expect_close(p, what);
	p->fed = saved;
	leave(p);
}

/* $(( ... )) and (( ... )): the cursor is after both "(". Commands in
 * nested substitutions are parsed; the arithmetic itself is not. */
static void scan_arith(struct parser *p, const char *what)
{
	if (!enter(p))
		return;
	struct buf scratch;
	buf_init(&scratch, 0);
	unsigned fl = 0;
	int level = 0;
	while (!failed(p)) {
		int c = cur(p);
		if (c < 0) {
			fail(p, "unterminated %s", what);
			break;
		}
		if (c == '(') {
			level++;
			p->i++;
		} else if (c == ')') {
			if (level == 0) {
				if (at(p, 1) != ')') {
					fail(p, "unterminated %s", what);
					break;
				}
				p->i += 2;
				break;
			}
			level--;
			p->i++;
		} else if (c == '$') {
			lex_dollar(p, &scratch, &fl, 1);
		} else if (c == '`') {
			lex_backtick(p, &scratch, &fl, 1);
		} else if (c == '"') {
			lex_dquote(p, &scratch, &fl);
		} else if (c == '\'') {
			lex_squote(p, &scratch);
		} else if (c == '\\' && at(p, 1) >= 0) {
			p->i += 2;
		} else {
			p->i++;
		}
		buf_reset(&scratch);
	}
	buf_free(&scratch);
	leave(p);
}

/* ${ ... }: the cursor is after "${"; nested expansions are parsed. */
static void scan_param(struct parser *p)
{
	if (!enter(p))
		return;
	struct buf scratch;
	buf_init(&scratch, 0);
	unsigned fl = 0;
	while (!failed(p)) {
		int c = cur(p);
		if (c < 0) {
			fail(p, "unterminated ${...}");
			break;
		}
		if (c == '}') {
			p->i++;
			break;
		}
		if (c == '$')
			lex_dollar(p, &scratch, &fl, 1);
		else if (c == '`')
			lex_backtick(p, &scratch, &fl, 1);
		else if (c == '"')
			lex_dquote(p, &scratch, &fl);
		else if (c == '\'')
			lex_squote(p, &scratch);
		else if (c == '\\' && at(p, 1) >= 0)
			p->i += 2;
		else
			p->i++;
		buf_reset(&scratch);
	}
	buf_free(&scratch);
	leave(p);
}

static int is_name_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(int c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

/* Anything that starts with "$". Expansions are kept in text as
 * written and flagged. */
static void lex_dollar(struct parser *p, struct buf *text, unsigned *flags,
                       int in_dq)
{
	size_t start = p->i;
	int c1 = at(p, 1);
	if (c1 == '\'' && !in_dq) {
		*flags |= SH_W_QUOTED | SH_W_ANSI;
		lex_ansi(p, text);
		return;
	}
	if (c1 == '"' && !in_dq) {
		p->i++;
		*flags |= SH_W_QUOTED;
		lex_dquote(p, text, flags);
		return;
	}
	if (c1 == '(' && at(p, 2) == '(') {
		p->i += 3;
		scan_arith(p, "$((...))");
		*flags |= SH_W_ARITH;
	} else if (c1 == '(') {
		p->i += 2;
		parse_subst(p, "$(...)", 0);
		*flags |= SH_W_CMDSUB;
	} else if (c1 == '{') {
		p->i += 2;
		scan_param(p);
		*flags |= SH_W_PARAM;
	} else if (c1 >= 0 && is_name_start(c1)) {
		p->i++;
		while (cur(p) >= 0 && is_name_char(cur(p)))
			p->i++;
		*flags |= SH_W_PARAM;
	} else if (c1 >= 0 &&
	           ((c1 >= '0' && c1 <= '9') || strchr("@*#?$!-", c1))) {
		p->i += 2;
		*flags |= SH_W_PARAM;
	} else {
		p->i++;
	}
	buf_append(text, p->s + start, p->i - start);
}

struct subsrc {
	const char *src;
	size_t len;
};

static void parse_backquoted(struct parser *p, void *arg)
{
	(void)arg;
	if (!enter(p))
		return;
	int saved = p->fed;
	parse_list(p, subst_ctx(p, 0));
	expect_close(p, NULL);
	p->fed = saved;
	leave(p);
}

/* `...`: the text between the backquotes is unescaped, then parsed. */
static void lex_backtick(struct parser *p, struct buf *text, unsigned *flags,
                         int in_dq)
{
	size_t start = p->i;
	struct buf inner;
	buf_init(&inner, 0);
	p->i++;
	for (;;) {
		int c = cur(p);
		if (c < 0) {
			fail(p, "unterminated `...` substitution");
			break;
		}
		if (c == '`') {
			p->i++;
			break;
		}
		if (c == '\\') {
			int n = at(p, 1);
			if (n == '$' || n == '`' || n == '\\' ||
			    (in_dq && n == '"')) {
				addc(&inner, n);
				p->i += 2;
				continue;
			}
			if (n == '\n') {
				p->i += 2;
				continue;
			}
		}
		addc(&inner, c);
		p->i++;
	}
	if (!failed(p))
		with_source(p, buf_str(&inner), inner.len, parse_backquoted,
		            NULL);
	buf_free(&inner);
	*flags |= SH_W_CMDSUB;
	buf_append(text, p->s + start, p->i - start);
}

static void lex_dquote(struct parser *p, struct buf *text, unsigned *flags)
{
	p->i++;
	while (!failed(p)) {
		int c = cur(p);
		if (c < 0) {
			fail(p, "unterminated double quote");
			return;
		}
		if (c == '"') {
			p->i++;
			return;
		}
		if (c == '\\') {
			int n = at(p, 1);
			if (n == '\n') {
				p->i += 2;
			} else if (n >= 0 && strchr("$`\"\\", n)) {
				addc(text, n);
				p->i += 2;
			} else {
				addc(text, c);
				p->i++;
			}
		} else if (c == '$') {
			lex_dollar(p, text, flags, 1);
		} else if (c == '`') {
			lex_backtick(p, text, flags, 1);
		} else {
			addc(text, c);
			p->i++;
		}
	}
}

static int is_meta(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' ||
	       c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
}

/* Whether an unquoted "[" at the cursor opens a bracket pattern. */
static int bracket_closes(const struct parser *p)
{
	for (size_t k = p->i + 1; k < p->n && !is_meta(p->s[k]); k++)
		if (p->s[k] == ']')
			return 1;
	return 0;
}

static struct sh_word *lex_word(struct parser *p)
{
	size_t start = p->i;
	struct buf text;
	buf_init(&text, 0);
	unsigned flags = 0;
	int brace = 0, brace_list = 0;
	while (!failed(p)) {
		int c = cur(p);
		if (c < 0)
			break;
		if ((c == '<' || c == '>') && p->i == start &&
		    at(p, 1) == '(') {
			p->i += 2;
			parse_subst(p, c == '<' ? "<(...)" : ">(...)",
			            c == '>');
			flags |= SH_W_PROCSUB;
			buf_append(&text, p->s + start, p->i - start);
			continue;
		}
		if (is_meta(c))
			break;
		switch (c) {
		case '\\':
			if (at(p, 1) == '\n') {
				p->i += 2;
				break;
			}
			if (at(p, 1) < 0) {
				addc(&text, c);
				p->i++;
				break;
			}
			addc(&text, at(p, 1));
			flags |= SH_W_QUOTED;
			p->i += 2;
			break;
		case '\'':
			flags |= SH_W_QUOTED;
			lex_squote(p, &text);
			break;
		case '"':
			flags |= SH_W_QUOTED;
			lex_dquote(p, &text, &flags);
			break;
		case '$':
			lex_dollar(p, &text, &flags, 0);
			break;
		case '`':
			lex_backtick(p, &text, &flags, 0);
			break;
		default:
			if (c == '*' || c == '?' ||
			    (c == '[' && bracket_closes(p)))
				flags |= SH_W_GLOB;
			else if (c == '~' && p->i == start)
				flags |= SH_W_TILDE;
			else if (c == '{')
				brace = 1;
			else if (brace &&
			         (c == ',' || (c == '.' && at(p, 1) == '.')))
				brace_list = 1;
			else if (c == '}' && brace_list)
				flags |= SH_W_BRACE;
			addc(&text, c);
			p->i++;
		}
	}
	return new_word(p, p->s + start, p->i - start, &text, flags);
}

/* --- tokens ------------------------------------------------------ */

static void read_body_expansions(struct parser *p, void *arg)
{
	(void)arg;
	struct buf scratch;
	buf_init(&scratch, 0);
	unsigned fl = 0;
	while (!failed(p) && cur(p) >= 0) {
		int c = cur(p);
		if (c == '\\' && at(p, 1) >= 0)
			p->i += 2;
		else if (c == '$')
			lex_dollar(p, &scratch, &fl, 1);
		else if (c == '`')
			lex_backtick(p, &scratch, &fl, 1);
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
	for (size_t k = p->hdbase; k < p->nhd && !failed(p); k++) {
		struct sh_redir *r = p->hd[k];
		const char *delim = r->arg->text;
		size_t dlen = strlen(delim);
		int strip = !strcmp(r->op, "<<-");
		struct buf body;
		buf_init(&body, 0);
		for (;;) {
			if (p->i >= p->n) {
				fail(p,
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
			addc(&body, '\n');
		}
		r->body = own(p->out, buf_detach(&body));
		if (r->body_live && !failed(p))
			with_source(p, r->body, strlen(r->body),
			            read_body_expansions, NULL);
	}
	p->nhd = p->hdbase;
}

static void set_op(struct token *t, const char *op)
{
	t->type = T_OP;
	strcpy(t->op, op);
}

static const char *const OPS[] = {
    ";;&", "&>>", "<<<", "<<-", "&&", "||", "|&", ";;", ";&", "&>", "<<", "<&",
    "<>",  ">>",  ">&",  ">|",  "&",  "|",  ";",  "(",  ")",  "<",  ">",  NULL};

static int digits_only(const char *s)
{
	if (!*s || strlen(s) > 9)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static int varfd(const char *s)
{
	size_t n = strlen(s);
	if (n < 3 || s[0] != '{' || s[n - 1] != '}' || !is_name_start(s[1]))
		return 0;
	for (size_t k = 2; k < n - 1; k++)
		if (!is_name_char(s[k]))
			return 0;
	return 1;
}

static struct token next_token(struct parser *p)
{
	struct token t = {.type = T_EOF};
	size_t before = p->i;
	for (;;) {
		int c = cur(p);
		if (c == ' ' || c == '\t')
			p->i++;
		else if (c == '\\' && at(p, 1) == '\n')
			p->i += 2;
		else if (c == '#') {
			while (cur(p) >= 0 && cur(p) != '\n')
				p->i++;
		} else
			break;
	}
	t.adjacent = p->i == before;
	int c = cur(p);
	if (failed(p) || c < 0)
		return t;
	if (c == '\n') {
		p->i++;
		t.type = T_NL;
		read_heredocs(p);
		return t;
	}
	if ((c == '<' || c == '>') && at(p, 1) == '(')
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
	t.word = lex_word(p);
	c = cur(p);
	if ((c == '<' || c == '>') && at(p, 1) != '(' && t.word->flags == 0 &&
	    (digits_only(t.word->raw) || varfd(t.word->raw))) {
		t.type = T_IONUM;
		t.fd = digits_only(t.word->raw) ? atoi(t.word->raw) : 10;
	}
	return t;
}

static struct token *peek(struct parser *p)
{
	if (!p->have) {
		p->tok = next_token(p);
		p->have = 1;
	}
	return &p->tok;
}

static void consume(struct parser *p)
{
	p->have = 0;
}

static int is_op(const struct token *t, const char *op)
{
	return t->type == T_OP && !strcmp(t->op, op);
}

static int is_kw(const struct token *t, const char *kw)
{
	return t->type == T_WORD && t->word->flags == 0 &&
	       !strcmp(t->word->raw, kw);
}

static int is_redir_op(const struct token *t)
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

static const char *describe(const struct token *t, char *out, size_t max)
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

static void expect_close(struct parser *p, const char *what)
{
	struct token *t = peek(p);
	if (what ? is_op(t, ")") : t->type == T_EOF) {
		consume(p);
		return;
	}
	char d[40];
	if (t->type == T_EOF && what)
		fail(p, "unterminated %s (no closing ')')", what);
	else
		fail(p, "unexpected %s", describe(t, d, sizeof d));
}

static void expect_kw(struct parser *p, const char *kw)
{
	struct token *t = peek(p);
	if (is_kw(t, kw)) {
		consume(p);
		return;
	}
	char d[40];
	fail(p, "expected '%s' before %s", kw, describe(t, d, sizeof d));
}

static void skip_newlines(struct parser *p)
{
	while (peek(p)->type == T_NL)
		consume(p);
}

/* --- commands ---------------------------------------------------- */

static struct sh_redir *parse_redir(struct parser *p)
{
	struct sh_redir *r = own(p->out, xcalloc(1, sizeof *r));
	r->fd = -1;
	struct token *t = peek(p);
	if (t->type == T_IONUM) {
		r->fd = t->fd;
		consume(p);
		t = peek(p);
	}
	char d[40];
	if (!is_redir_op(t)) {
		fail(p, "expected a redirection before %s",
		     describe(t, d, sizeof d));
		return NULL;
	}
	strcpy(r->op, t->op);
	consume(p);
	t = peek(p);
	if (t->type != T_WORD) {
		fail(p, "expected a word after '%s', not %s", r->op,
		     describe(t, d, sizeof d));
		return NULL;
	}
	r->arg = t->word;
	consume(p);
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

static int starts_redir(struct parser *p)
{
	struct token *t = peek(p);
	return t->type == T_IONUM || is_redir_op(t);
}

static void add_cmd(struct parser *p, struct sh_cmd *c)
{
	struct sh_parse *o = p->out;
	if (o->ncmds == p->cmdcap) {
		p->cmdcap = p->cmdcap ? p->cmdcap * 2 : 16;
		o->cmds = xrealloc(o->cmds, p->cmdcap * sizeof *o->cmds);
	}
	o->cmds[o->ncmds++] = c;
}

static struct sh_cmd *new_cmd(struct parser *p, struct ctx c)
{
	struct sh_cmd *cmd = own(p->out, xcalloc(1, sizeof *cmd));
	cmd->depth = c.depth;
	cmd->subst = c.subst;
	cmd->stdin_fed = c.stdin_fed;
	cmd->pipeline = c.pipeline;
	cmd->pipe_pos = c.pipe_pos;
	return cmd;
}

static int stdin_redir(const struct sh_redir *r)
{
	return r->op[0] == '<' && strcmp(r->op, "<&");
}

/* Redirections after a compound command apply to every command in it;
 * input redirections feed their stdin. */
static void compound_redirs(struct parser *p, size_t first)
{
	struct sh_parse *o = p->out;
	while (!failed(p) && starts_redir(p)) {
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

static int is_assignment(const struct sh_word *w)
{
	const char *s = w->raw;
	if (!is_name_start((unsigned char)*s))
		return 0;
	while (is_name_char((unsigned char)*s))
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

static void parse_array_value(struct parser *p)
{
	consume(p); /* ( */
	for (;;) {
		struct token *t = peek(p);
		if (t->type == T_NL || t->type == T_WORD) {
			consume(p);
			continue;
		}
		if (is_op(t, ")")) {
			consume(p);
			return;
		}
		char d[40];
		fail(p, "unexpected %s in an array value",
		     describe(t, d, sizeof d));
		return;
	}
}

static void parse_function_body(struct parser *p, struct ctx c)
{
	skip_newlines(p);
	c.depth++;
	if (!parse_command(p, c)) {
		char d[40];
		fail(p, "expected a function body before %s",
		     describe(peek(p), d, sizeof d));
	}
}

static int parse_simple(struct parser *p, struct ctx c)
{
	struct ptrvec assigns = {0}, argv = {0}, redirs = {0};
	int function = 0;
	while (!failed(p)) {
		if (starts_redir(p)) {
			struct sh_redir *r = parse_redir(p);
			if (r)
				vpush(&redirs, r);
			continue;
		}
		struct token *t = peek(p);
		if (t->type != T_WORD)
			break;
		if (!argv.n && is_assignment(t->word)) {
			struct sh_word *w = t->word;
			consume(p);
			vpush(&assigns, w);
			size_t len = strlen(w->raw);
			if (w->raw[len - 1] == '=' && is_op(peek(p), "(") &&
			    peek(p)->adjacent)
				parse_array_value(p);
			continue;
		}
		vpush(&argv, t->word);
		consume(p);
		if (argv.n == 1 && !assigns.n && is_op(peek(p), "(")) {
			consume(p);
			if (!is_op(peek(p), ")")) {
				fail(p, "expected ')' after '%s('",
				     ((struct sh_word *)argv.v[0])->raw);
				break;
			}
			consume(p);
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
	vpush(&argv, peek(p)->word);
	consume(p);
	while (!failed(p)) {
		struct token *t = peek(p);
		if (t->type == T_EOF) {
			fail(p, "unterminated [[ (no ']]')");
			break;
		}
		if (is_kw(t, "]]")) {
			vpush(&argv, t->word);
			consume(p);
			break;
		}
		if (t->type == T_WORD || t->type == T_IONUM)
			vpush(&argv, t->word);
		else if (t->type == T_OP) {
			struct buf b;
			buf_init(&b, 0);
			buf_puts(&b, t->op);
			vpush(&argv, new_word(p, t->op, strlen(t->op), &b, 0));
		}
		consume(p);
	}
	struct sh_cmd *cmd = new_cmd(p, c);
	cmd->cond = 1;
	cmd->argc = argv.n;
	cmd->argv = vfinish(p->out, &argv);
	add_cmd(p, cmd);
}

static void parse_if(struct parser *p, struct ctx c)
{
	consume(p);
	parse_list(p, c);
	expect_kw(p, "then");
	parse_list(p, c);
	while (!failed(p)) {
		struct token *t = peek(p);
		if (is_kw(t, "elif")) {
			consume(p);
			parse_list(p, c);
			expect_kw(p, "then");
			parse_list(p, c);
		} else if (is_kw(t, "else")) {
			consume(p);
			parse_list(p, c);
		} else {
			break;
		}
	}
	expect_kw(p, "fi");
}

static void parse_loop_body(struct parser *p, struct ctx c)
{
	if (is_kw(peek(p), "{")) {
		consume(p);
		parse_list(p, c);
		expect_kw(p, "}");
		return;
	}
	expect_kw(p, "do");
	parse_list(p, c);
	expect_kw(p, "done");
}

static void parse_for(struct parser *p, struct ctx c)
{
	consume(p);
	struct token *t = peek(p);
	if (is_op(t, "(") && cur(p) == '(') {
		consume(p);
		p->i++;
		scan_arith(p, "for ((...))");
	} else if (t->type == T_WORD) {
		consume(p);
		skip_newlines(p);
		if (is_kw(peek(p), "in")) {
			consume(p);
			while (peek(p)->type == T_WORD)
				consume(p);
		}
	} else {
		char d[40];
		fail(p, "expected a variable name after 'for', not %s",
		     describe(t, d, sizeof d));
		return;
	}
	if (is_op(peek(p), ";"))
		consume(p);
	skip_newlines(p);
	parse_loop_body(p, c);
}

static void parse_case(struct parser *p, struct ctx c)
{
	char d[40];
	consume(p);
	if (peek(p)->type != T_WORD) {
		fail(p, "expected a word after 'case', not %s",
		     describe(peek(p), d, sizeof d));
		return;
	}
	consume(p);
	skip_newlines(p);
	expect_kw(p, "in");
	skip_newlines(p);
	while (!failed(p)) {
		struct token *t = peek(p);
		if (is_kw(t, "esac")) {
			consume(p);
			return;
		}
		if (is_op(t, "("))
			consume(p);
		for (;;) {
			t = peek(p);
			if (t->type != T_WORD) {
				fail(p, "expected a case pattern before %s",
				     describe(t, d, sizeof d));
				return;
			}
			consume(p);
			if (!is_op(peek(p), "|"))
				break;
			consume(p);
		}
		if (!is_op(peek(p), ")")) {
			fail(p, "expected ')' after a case pattern, not %s",
			     describe(peek(p), d, sizeof d));
			return;
		}
		consume(p);
		parse_list(p, c);
		t = peek(p);
		if (is_op(t, ";;") || is_op(t, ";&") || is_op(t, ";;&")) {
			consume(p);
			skip_newlines(p);
		} else if (!is_kw(t, "esac")) {
			fail(p, "expected ';;' or 'esac' before %s",
			     describe(t, d, sizeof d));
		}
	}
}

static void parse_function(struct parser *p, struct ctx c)
{
	consume(p);
	struct token *t = peek(p);
	if (t->type != T_WORD) {
		char d[40];
		fail(p, "expected a function name, not %s",
		     describe(t, d, sizeof d));
		return;
	}
	consume(p);
	if (is_op(peek(p), "(")) {
		consume(p);
		if (!is_op(peek(p), ")")) {
			fail(p, "expected ')' in a function definition");
			return;
		}
		consume(p);
	}
	parse_function_body(p, c);
}

/* A compound command led by a reserved word; 0 if t is not one. */
static int parse_keyword(struct parser *p, struct ctx c)
{
	struct token *t = peek(p);
	if (is_kw(t, "{")) {
		consume(p);
		parse_list(p, c);
		expect_kw(p, "}");
	} else if (is_kw(t, "if")) {
		parse_if(p, c);
	} else if (is_kw(t, "while") || is_kw(t, "until")) {
		consume(p);
		parse_list(p, c);
		parse_loop_body(p, c);
	} else if (is_kw(t, "for") || is_kw(t, "select")) {
		parse_for(p, c);
	} else if (is_kw(t, "case")) {
		parse_case(p, c);
	} else if (is_kw(t, "function")) {
		parse_function(p, c);
	} else if (is_kw(t, "[[")) {
		parse_cond(p, c);
	} else {
		return 0;
	}
	return 1;
}

static int parse_command(struct parser *p, struct ctx c)
{
	if (!enter(p))
		return 1;
	size_t first = p->out->ncmds;
	struct ctx inner = c;
	inner.depth++;
	struct token *t = peek(p);
	int done = 1;
	if (is_op(t, "(")) {
		consume(p);
		/* "((" opens an arithmetic command */
		if (cur(p) == '(') {
			p->i++;
			scan_arith(p, "((...))");
		} else {
			parse_list(p, inner);
			expect_close(p, "( subshell");
		}
	} else if (is_kw(t, "coproc")) {
		consume(p);
		done = parse_command(p, c);
		leave(p);
		return done;
	} else if (!parse_keyword(p, inner)) {
		done = parse_simple(p, c);
		leave(p);
		return done;
	}
	compound_redirs(p, first);
	leave(p);
	return done;
}

static void parse_pipeline(struct parser *p, struct ctx c)
{
	for (;;) {
		struct token *t = peek(p);
		if (is_kw(t, "!")) {
			consume(p);
		} else if (is_kw(t, "time")) {
			consume(p);
			if (is_kw(peek(p), "-p"))
				consume(p);
		} else {
			break;
		}
	}
	int pl = p->npipelines++;
	for (int pos = 0; !failed(p); pos++) {
		struct ctx e = c;
		e.pipeline = pl;
		e.pipe_pos = pos;
		if (pos > 0)
			e.stdin_fed = 1;
		if (!parse_command(p, e)) {
			char d[40];
			fail(p, "expected a command before %s",
			     describe(peek(p), d, sizeof d));
			return;
		}
		struct token *t = peek(p);
		if (!is_op(t, "|") && !is_op(t, "|&"))
			return;
		consume(p);
		p->fed = 1;
		skip_newlines(p);
	}
}

static void parse_and_or(struct parser *p, struct ctx c)
{
	parse_pipeline(p, c);
	while (!failed(p)) {
		struct token *t = peek(p);
		if (!is_op(t, "&&") && !is_op(t, "||"))
			return;
		consume(p);
		p->fed = c.stdin_fed;
		skip_newlines(p);
		parse_pipeline(p, c);
	}
}

static int at_list_end(struct parser *p)
{
	static const char *const kws[] = {"then", "else", "elif", "fi", "do",
	                                  "done", "esac", "}",    NULL};
	struct token *t = peek(p);
	if (t->type == T_EOF)
		return 1;
	if (t->type == T_OP)
		return !strcmp(t->op, ")") || !strcmp(t->op, ";;") ||
		       !strcmp(t->op, ";&") || !strcmp(t->op, ";;&");
	for (int k = 0; kws[k]; k++)
		if (is_kw(t, kws[k]))
			return 1;
	return 0;
}

static void parse_list(struct parser *p, struct ctx c)
{
	if (!enter(p))
		return;
	p->fed = c.stdin_fed;
	skip_newlines(p);
	while (!failed(p) && !at_list_end(p)) {
		parse_and_or(p, c);
		struct token *t = peek(p);
		if (is_op(t, ";") || is_op(t, "&")) {
			consume(p);
			p->fed = c.stdin_fed;
			skip_newlines(p);
		} else if (t->type == T_NL) {
			p->fed = c.stdin_fed;
			skip_newlines(p);
		} else {
			break;
		}
	}
	leave(p);
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
	parse_list(&p, c);
	struct token *t = peek(&p);
	if (t->type != T_EOF) {
		char d[40];
		fail(&p, "unexpected %s", describe(t, d, sizeof d));
	}
	if (p.nhd)
		fail(&p, "here-document not terminated (no line '%s')",
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

static int plain_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || strchr("_@%+=:,./-", c);
}

char *sh_quote(const char *s)
{
	int plain = *s && *s != '~' && *s != '#';
	for (const char *q = s; *q && plain; q++)
		plain = plain_char((unsigned char)*q);
	if (plain)
		return xstrdup(s);
	struct buf b;
	buf_init(&b, 0);
	addc(&b, '\'');
	for (const char *q = s; *q; q++) {
		if (*q == '\'')
			buf_puts(&b, "'\\''");
		else
			addc(&b, *q);
	}
	addc(&b, '\'');
	return buf_detach(&b);
}

char *sh_word_canon(const struct sh_word *w)
{
	if (w->flags & (SH_W_DYNAMIC | SH_W_EXPANDS))
		return xstrdup(w->raw);
	return sh_quote(w->text);
}
