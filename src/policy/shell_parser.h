/* shell_parser.h: the state of the shell parser and what its three
 * files share (private to src/policy/shell*.c): shell.c reads lists and
 * commands, shell_word.c words with their quotes and substitutions,
 * shell_token.c operators, tokens and here-document bodies. */
#ifndef ASSAY_POLICY_SHELL_PARSER_H
#define ASSAY_POLICY_SHELL_PARSER_H

#include "shell.h"

#include "assay/buf.h"

#include <stddef.h>

/* Frames of recursion allowed per nesting level (a level costs a few). */
#define SH_MAX_FRAMES (SH_MAX_DEPTH * 3)

enum tok_type { T_EOF, T_WORD, T_IONUM, T_OP, T_NL };

struct token {
	enum tok_type type;
	char op[4];
	struct sh_word *word;
	int fd;
	int adjacent; /* no blank before it */
};

/* Where the commands being read sit (copied into each sh_cmd). */
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

/* --- the parser's bookkeeping (shell.c) -------------------------- */

/* ptr, freed with the parse. */
void *sh_own(struct sh_parse *o, void *ptr);
/* The first error wins; later ones are dropped. */
void sh_fail(struct parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* One more frame of recursion: 0 (and an error) past the limit. Every
 * sh_enter that returns is paired with an sh_leave. */
int sh_enter(struct parser *p);
void sh_leave(struct parser *p);
/* A word owned by the parse; text is taken over. */
struct sh_word *sh_new_word(struct parser *p, const char *raw, size_t rawlen,
                            struct buf *text, unsigned flags);
/* Parse another text (backquoted command, here-document body) with the
 * same parser; what it finds joins the same list. */
void sh_with_source(struct parser *p, const char *src, size_t len,
                    void (*fn)(struct parser *, void *), void *arg);
/* A list of and-or lists up to a token that ends it. */
void sh_parse_list(struct parser *p, struct ctx c);

static inline int sh_failed(const struct parser *p)
{
	return p->out->error != NULL;
}

/* The character at the cursor, or k after it; -1 past the end. */
static inline int sh_cur(const struct parser *p)
{
	return p->i < p->n ? (unsigned char)p->s[p->i] : -1;
}

static inline int sh_at(const struct parser *p, size_t k)
{
	return p->i + k < p->n ? (unsigned char)p->s[p->i + k] : -1;
}

static inline void sh_addc(struct buf *b, int c)
{
	char ch = (char)c;
	buf_append(b, &ch, 1);
}

static inline int sh_is_name_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline int sh_is_name_char(int c)
{
	return sh_is_name_start(c) || (c >= '0' && c <= '9');
}

/* --- words (shell_word.c) ---------------------------------------- */

/* The word at the cursor, up to a blank or an operator. */
struct sh_word *sh_lex_word(struct parser *p);
/* Anything that starts with "$" (the cursor is on it), appended to
 * text as written; flags says what it was. */
void sh_lex_dollar(struct parser *p, struct buf *text, unsigned *flags,
                   int in_dq);
/* `...`: its commands are parsed; the text is appended as written. */
void sh_lex_backtick(struct parser *p, struct buf *text, unsigned *flags,
                     int in_dq);
/* $(( ... )) and (( ... )): the cursor is after both "(". */
void sh_scan_arith(struct parser *p, const char *what);

/* --- tokens (shell_token.c) -------------------------------------- */

/* The next token, read once and kept until sh_consume. */
struct token *sh_peek(struct parser *p);
void sh_consume(struct parser *p);
int sh_is_op(const struct token *t, const char *op);
/* A reserved word: an unquoted word spelled kw. */
int sh_is_kw(const struct token *t, const char *kw);
int sh_is_redir_op(const struct token *t);
/* The token in words for an error message (out holds max bytes). */
const char *sh_describe(const struct token *t, char *out, size_t max);
/* The token that ends a nested list: ")" after what, or the end of
 * the text when what is NULL (a backquoted command). */
void sh_expect_close(struct parser *p, const char *what);
void sh_expect_kw(struct parser *p, const char *kw);
void sh_skip_newlines(struct parser *p);

#endif
