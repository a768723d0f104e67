/* shell_word.c: the words of the shell parser: quoting (single,
 * double, $'...' decoded as bash does, backslashes), parameter and
 * arithmetic expansions, command and process substitutions (whose
 * commands are parsed in turn), and quoting a word back for rules. */
#include "shell_parser.h"

#include "assay/buf.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

static void lex_dquote(struct parser *p, struct buf *text, unsigned *flags);

/* --- quotes ------------------------------------------------------ */

/* '...': the text between the quotes, as it is. */
static void lex_squote(struct parser *p, struct buf *text)
{
	p->i++;
	const char *end = memchr(p->s + p->i, '\'', p->n - p->i);
	if (!end) {
		sh_fail(p, "unterminated single quote");
		p->i = p->n;
		return;
	}
	buf_append(text, p->s + p->i, (size_t)(end - (p->s + p->i)));
	p->i = (size_t)(end - p->s) + 1;
}

/* The value of a hex digit, or -1. */
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

/* The code point u as UTF-8 (nothing past U+10FFFF). */
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
		int d = base == 8 ? (sh_cur(p) >= '0' && sh_cur(p) <= '7'
		                         ? sh_cur(p) - '0'
		                         : -1)
		                  : hexval(sh_cur(p));
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
	int c = sh_cur(p);
	if (c < 0)
		return;
	const char *k = strchr(from, c);
	if (k && c) {
		sh_addc(text, to[k - from]);
		p->i++;
		return;
	}
	unsigned long v;
	switch (c) {
	case 'x':
		p->i++;
		v = lex_number(p, 16, 2);
		if (v)
			sh_addc(text, (int)v);
		return;
	case 'u':
	case 'U':
		p->i++;
		put_utf8(text, lex_number(p, 16, c == 'u' ? 4 : 8));
		return;
	case 'c':
		p->i++;
		if (sh_cur(p) >= 0) {
			sh_addc(text, sh_cur(p) & 0x1f);
			p->i++;
		}
		return;
	default:
		if (c >= '0' && c <= '7') {
			v = lex_number(p, 8, 3);
			if (v & 0xff)
				sh_addc(text, (int)(v & 0xff));
			return;
		}
		sh_addc(text, '\\');
		sh_addc(text, c);
		p->i++;
	}
}

/* $'...': decoded, so the policy sees what bash will see. */
static void lex_ansi(struct parser *p, struct buf *text)
{
	p->i += 2;
	while (!sh_failed(p)) {
		int c = sh_cur(p);
		if (c < 0) {
			sh_fail(p, "unterminated $'...' quote");
			return;
		}
		if (c == '\'') {
			p->i++;
			return;
		}
		if (c == '\\')
			lex_ansi_escape(p, text);
		else {
			sh_addc(text, c);
			p->i++;
		}
	}
}

/* --- expansions and substitutions ------------------------------- */

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
	if (!sh_enter(p))
		return;
	int saved = p->fed;
	sh_parse_list(p, subst_ctx(p, fed));
	sh_expect_close(p, what);
	p->fed = saved;
	sh_leave(p);
}

/* $(( ... )) and (( ... )): the cursor is after both "(". Commands in
 * nested substitutions are parsed; the arithmetic itself is not. */
void sh_scan_arith(struct parser *p, const char *what)
{
	if (!sh_enter(p))
		return;
	struct buf scratch;
	buf_init(&scratch, 0);
	unsigned fl = 0;
	int level = 0;
	while (!sh_failed(p)) {
		int c = sh_cur(p);
		if (c < 0) {
			sh_fail(p, "unterminated %s", what);
			break;
		}
		if (c == '(') {
			level++;
			p->i++;
		} else if (c == ')') {
			if (level == 0) {
				if (sh_at(p, 1) != ')') {
					sh_fail(p, "unterminated %s", what);
					break;
				}
				p->i += 2;
				break;
			}
			level--;
			p->i++;
		} else if (c == '$') {
			sh_lex_dollar(p, &scratch, &fl, 1);
		} else if (c == '`') {
			sh_lex_backtick(p, &scratch, &fl, 1);
		} else if (c == '"') {
			lex_dquote(p, &scratch, &fl);
		} else if (c == '\'') {
			lex_squote(p, &scratch);
		} else if (c == '\\' && sh_at(p, 1) >= 0) {
			p->i += 2;
		} else {
			p->i++;
		}
		buf_reset(&scratch);
	}
	buf_free(&scratch);
	sh_leave(p);
}

/* ${ ... }: the cursor is after "${"; nested expansions are parsed. */
static void scan_param(struct parser *p)
{
	if (!sh_enter(p))
		return;
	struct buf scratch;
	buf_init(&scratch, 0);
	unsigned fl = 0;
	while (!sh_failed(p)) {
		int c = sh_cur(p);
		if (c < 0) {
			sh_fail(p, "unterminated ${...}");
			break;
		}
		if (c == '}') {
			p->i++;
			break;
		}
		if (c == '$')
			sh_lex_dollar(p, &scratch, &fl, 1);
		else if (c == '`')
			sh_lex_backtick(p, &scratch, &fl, 1);
		else if (c == '"')
			lex_dquote(p, &scratch, &fl);
		else if (c == '\'')
			lex_squote(p, &scratch);
		else if (c == '\\' && sh_at(p, 1) >= 0)
			p->i += 2;
		else
			p->i++;
		buf_reset(&scratch);
	}
	buf_free(&scratch);
	sh_leave(p);
}

/* Anything that starts with "$". Expansions are kept in text as
 * written and flagged. */
void sh_lex_dollar(struct parser *p, struct buf *text, unsigned *flags,
                   int in_dq)
{
	size_t start = p->i;
	int c1 = sh_at(p, 1);
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
	if (c1 == '(' && sh_at(p, 2) == '(') {
		p->i += 3;
		sh_scan_arith(p, "$((...))");
		*flags |= SH_W_ARITH;
	} else if (c1 == '(') {
		p->i += 2;
		parse_subst(p, "$(...)", 0);
		*flags |= SH_W_CMDSUB;
	} else if (c1 == '{') {
		p->i += 2;
		scan_param(p);
		*flags |= SH_W_PARAM;
	} else if (c1 >= 0 && sh_is_name_start(c1)) {
		p->i++;
		while (sh_cur(p) >= 0 && sh_is_name_char(sh_cur(p)))
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

/* The commands of a backquoted substitution, parsed as their own text. */
static void parse_backquoted(struct parser *p, void *arg)
{
	(void)arg;
	if (!sh_enter(p))
		return;
	int saved = p->fed;
	sh_parse_list(p, subst_ctx(p, 0));
	sh_expect_close(p, NULL);
	p->fed = saved;
	sh_leave(p);
}

/* `...`: the text between the backquotes is unescaped, then parsed. */
void sh_lex_backtick(struct parser *p, struct buf *text, unsigned *flags,
                     int in_dq)
{
	size_t start = p->i;
	struct buf inner;
	buf_init(&inner, 0);
	p->i++;
	for (;;) {
		int c = sh_cur(p);
		if (c < 0) {
			sh_fail(p, "unterminated `...` substitution");
			break;
		}
		if (c == '`') {
			p->i++;
			break;
		}
		if (c == '\\') {
			int n = sh_at(p, 1);
			if (n == '$' || n == '`' || n == '\\' ||
			    (in_dq && n == '"')) {
				sh_addc(&inner, n);
				p->i += 2;
				continue;
			}
			if (n == '\n') {
				p->i += 2;
				continue;
			}
		}
		sh_addc(&inner, c);
		p->i++;
	}
	if (!sh_failed(p))
		sh_with_source(p, buf_str(&inner), inner.len, parse_backquoted,
		               NULL);
	buf_free(&inner);
	*flags |= SH_W_CMDSUB;
	buf_append(text, p->s + start, p->i - start);
}

/* "...": escapes that bash removes are removed; expansions are kept and
 * flagged. */
static void lex_dquote(struct parser *p, struct buf *text, unsigned *flags)
{
	p->i++;
	while (!sh_failed(p)) {
		int c = sh_cur(p);
		if (c < 0) {
			sh_fail(p, "unterminated double quote");
			return;
		}
		if (c == '"') {
			p->i++;
			return;
		}
		if (c == '\\') {
			int n = sh_at(p, 1);
			if (n == '\n') {
				p->i += 2;
			} else if (n >= 0 && strchr("$`\"\\", n)) {
				sh_addc(text, n);
				p->i += 2;
			} else {
				sh_addc(text, c);
				p->i++;
			}
		} else if (c == '$') {
			sh_lex_dollar(p, text, flags, 1);
		} else if (c == '`') {
			sh_lex_backtick(p, text, flags, 1);
		} else {
			sh_addc(text, c);
			p->i++;
		}
	}
}

/* --- words ------------------------------------------------------- */

/* A character that ends an unquoted word. */
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

/* The word at the cursor, up to a blank or an operator: quotes removed
 * in text, expansions kept as written and flagged. */
struct sh_word *sh_lex_word(struct parser *p)
{
	size_t start = p->i;
	struct buf text;
	buf_init(&text, 0);
	unsigned flags = 0;
	int brace = 0, brace_list = 0;
	while (!sh_failed(p)) {
		int c = sh_cur(p);
		if (c < 0)
			break;
		if ((c == '<' || c == '>') && p->i == start &&
		    sh_at(p, 1) == '(') {
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
			if (sh_at(p, 1) == '\n') {
				p->i += 2;
				break;
			}
			if (sh_at(p, 1) < 0) {
				sh_addc(&text, c);
				p->i++;
				break;
			}
			sh_addc(&text, sh_at(p, 1));
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
			sh_lex_dollar(p, &text, &flags, 0);
			break;
		case '`':
			sh_lex_backtick(p, &text, &flags, 0);
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
			         (c == ',' || (c == '.' && sh_at(p, 1) == '.')))
				brace_list = 1;
			else if (c == '}' && brace_list)
				flags |= SH_W_BRACE;
			sh_addc(&text, c);
			p->i++;
		}
	}
	return sh_new_word(p, p->s + start, p->i - start, &text, flags);
}

/* --- quoting words back ----------------------------------------- */

/* A character that needs no quoting for the shell. */
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
	sh_addc(&b, '\'');
	for (const char *q = s; *q; q++) {
		if (*q == '\'')
			buf_puts(&b, "'\\''");
		else
			sh_addc(&b, *q);
	}
	sh_addc(&b, '\'');
	return buf_detach(&b);
}

char *sh_word_canon(const struct sh_word *w)
{
	if (w->flags & (SH_W_DYNAMIC | SH_W_EXPANDS))
		return xstrdup(w->raw);
	return sh_quote(w->text);
}
