/* shell.h: the shell tokenizer and parser of the policy layer (private
 * to src/policy/; shell.c, shell_word.c and shell_token.c, which share
 * shell_parser.h). It reads a bash command line the way bash would and
 * lists every simple command it could run, with its words, assignments
 * and redirections, without expanding or executing anything. The sh_
 * prefix is the policy module's shell part. */
#ifndef ASSAY_POLICY_SHELL_H
#define ASSAY_POLICY_SHELL_H

#include <stddef.h>

/* Longest command line parsed; longer ones are reported unparsable. */
#define SH_MAX_INPUT (1u << 20)
/* Deepest nesting of compound commands, substitutions and quotes. */
#define SH_MAX_DEPTH 40

/* What a word holds besides plain text. */
enum {
	SH_W_QUOTED = 1 << 0,  /* some of it was quoted or escaped */
	SH_W_PARAM = 1 << 1,   /* $name, ${...}, $1, $@ ... */
	SH_W_CMDSUB = 1 << 2,  /* $(...) or `...` */
	SH_W_ARITH = 1 << 3,   /* $((...)) */
	SH_W_PROCSUB = 1 << 4, /* <(...) or >(...) */
	SH_W_GLOB = 1 << 5,    /* unquoted * ? [ */
	SH_W_BRACE = 1 << 6,   /* unquoted {a,b} or {1..3} */
	SH_W_TILDE = 1 << 7,   /* unquoted leading ~ */
	SH_W_ANSI = 1 << 8,    /* $'...' (decoded into text) */
};
/* The value is only known when the command runs. */
#define SH_W_DYNAMIC (SH_W_PARAM | SH_W_CMDSUB | SH_W_ARITH | SH_W_PROCSUB)
/* Bash turns it into other words (pathnames, brace or tilde forms). */
#define SH_W_EXPANDS (SH_W_GLOB | SH_W_BRACE | SH_W_TILDE)

struct sh_word {
	char *raw;  /* as written */
	char *text; /* quotes removed, escapes applied; expansions kept */
	unsigned flags;
};

struct sh_redir {
	int fd;              /* the n of n>file, -1 when absent */
	char op[4];          /* < > >> >| <> <& >& &> &>> << <<- <<< */
	struct sh_word *arg; /* file, fd, here-doc delimiter or here-string */
	char *body;          /* here-document text, NULL otherwise */
	int body_live;       /* unquoted delimiter: $ and ` expand in body */
};

/* One simple command and where it sits. */
struct sh_cmd {
	struct sh_word **assigns;
	size_t nassigns;
	struct sh_word **argv;
	size_t argc;
	struct sh_redir **redirs;
	size_t nredirs;
	int depth;     /* compound commands and substitutions around it */
	int subst;     /* inside $(...), `...` or <(...) */
	int stdin_fed; /* stdin is a pipe or an enclosing redirection */
	int pipeline;  /* which pipeline (an index in the parse) */
	int pipe_pos;  /* its element in that pipeline, 0 first */
	int cond;      /* [[ ... ]]: argv holds the test's words */
};

struct sh_parse {
	struct sh_cmd **cmds; /* in source order (substitutions first) */
	size_t ncmds;
	/* redirections of compound commands ({ ...; } >file) */
	struct sh_redir **xredirs;
	size_t nxredirs;
	char *error; /* NULL when the whole text parsed */
	/* every allocation, for sh_parse_free */
	void **owned;
	size_t nowned, capowned;
};

/* Parse src[0..len). Never NULL; when the text cannot be parsed
 * completely, error says why (and cmds holds what was found). depth
 * is the nesting already around src (0 for a tool's command). */
struct sh_parse *sh_parse(const char *src, size_t len, int depth);
void sh_parse_free(struct sh_parse *p);

/* The word as a rule and a person read it: plain, or single-quoted
 * when it needs quoting; words with expansions keep their raw form.
 * Caller frees. */
char *sh_word_canon(const struct sh_word *w);
/* Quote s for the shell when it needs it. Caller frees. */
char *sh_quote(const char *s);

/* The word's text when it is known before the command runs, else NULL. */
static inline const char *sh_known(const struct sh_word *w)
{
	return (w->flags & SH_W_DYNAMIC) ? NULL : w->text;
}

#endif
