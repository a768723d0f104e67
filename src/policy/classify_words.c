/* classify_words.c: what the analysers ask of a command's words: which
 * are options and operands, whether an option is given, the words
 * joined back into text, and the forms a wrapped command adds. */
#include "classify.h"

#include "assay/buf.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

/* Whether s is one of the NULL-terminated list. */
int cls_in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

/* What follows the last "/". */
const char *cls_base_name(const char *s)
{
	const char *slash = strrchr(s, '/');
	return slash ? slash + 1 : s;
}

/* A known word starting with "-" (not "-" alone). */
int cls_is_opt(const struct sh_word *w)
{
	const char *t = sh_known(w);
	return t && t[0] == '-' && t[1];
}

/* Index of the n-th operand (not an option) from i, or -1. */
long cls_operand(struct sh_word **w, size_t n, size_t i, int which)
{
	for (; i < n; i++) {
		if (cls_is_opt(w[i]))
			continue;
		if (which-- == 0)
			return (long)i;
	}
	return -1;
}

/* Whether an option before "--" has a letter of shorts or starts with
 * one of longs. */
int cls_has_opt(struct sh_word **w, size_t n, const char *shorts,
                const char *const *longs)
{
	for (size_t i = 1; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (!t || t[0] != '-' || !t[1])
			continue;
		if (!strcmp(t, "--"))
			return 0;
		if (t[1] == '-') {
			if (longs)
				for (const char *const *l = longs; *l; l++)
					if (!strncmp(t, *l, strlen(*l)))
						return 1;
			continue;
		}
		if (shorts && strpbrk(t + 1, shorts))
			return 1;
	}
	return 0;
}

/* The words from i joined by spaces, in canonical form. */
char *cls_join_canon(struct sh_word **w, size_t n, size_t i)
{
	struct buf b;
	buf_init(&b, 0);
	for (; i < n; i++) {
		char *s = sh_word_canon(w[i]);
		if (b.len)
			buf_puts(&b, " ");
		buf_puts(&b, s);
		free(s);
	}
	return buf_detach(&b);
}

/* The words from i as text (for inline code given in several words);
 * NULL if one of them is only known at run time. */
char *cls_join_text(struct sh_word **w, size_t n, size_t i)
{
	struct buf b;
	buf_init(&b, 0);
	for (; i < n; i++) {
		if (!sh_known(w[i])) {
			buf_free(&b);
			return NULL;
		}
		if (b.len)
			buf_puts(&b, " ");
		buf_puts(&b, w[i]->text);
	}
	return buf_detach(&b);
}
/* The command run by a wrapper is another form a deny rule can match;
 * /bin/rm is also seen as rm. */
void cls_add_forms(struct cls *c, struct sh_word **w, size_t n)
{
	char *s = cls_join_canon(w, n, 0);
	strv_add_unique(c->forms, s);
	const char *t = sh_known(w[0]);
	if (t && strchr(t, '/') && *cls_base_name(t)) {
		char *rest = n > 1 ? cls_join_canon(w, n, 1) : xstrdup("");
		char *b = sh_quote(cls_base_name(t));
		strv_add_unique(c->forms,
		         xasprintf("%s%s%s", b, n > 1 ? " " : "", rest));
		free(b);
		free(rest);
	}
}
