/* reasons.c: how every classifier records what it finds: reasons (a
 * kind and a sentence, each once) and snippets of commands cut to fit
 * in a sentence. The forms of a part are a struct strv (core/strv.c). */
#include "internal.h"

#include "assay/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The label a reason's text starts with, by kind. */
static const char *const KIND_LABEL[POLICY_NKINDS] = {
    [POLICY_NETWORK] = "network",
    [POLICY_DELETION] = "deletes or overwrites",
    [POLICY_PRIVILEGE] = "privilege",
    [POLICY_OUTSIDE] = "outside the workspace",
    [POLICY_PROCESS] = "process control",
    [POLICY_PERSISTENCE] = "persistence",
    [POLICY_HIDDEN] = "hidden intent",
    [POLICY_EXEC] = "runs commands",
    [POLICY_UNPARSED] = "cannot be checked",
};

void reasons_add(struct reasons *r, enum policy_kind kind, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *detail = xvasprintf(fmt, ap);
	va_end(ap);
	char *text = xasprintf("%s: %s", KIND_LABEL[kind], detail);
	free(detail);
	for (size_t k = 0; k < r->n; k++) {
		if (!strcmp(r->v[k].text, text)) {
			free(text);
			return;
		}
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 4;
		r->v = xrealloc(r->v, r->cap * sizeof *r->v);
	}
	r->v[r->n].kind = kind;
	r->v[r->n].text = text;
	r->n++;
}

void reasons_free(struct reasons *r)
{
	for (size_t k = 0; k < r->n; k++)
		free(r->v[k].text);
	free(r->v);
	memset(r, 0, sizeof *r);
}

/* The first line of s cut to about max bytes (whole UTF-8 characters),
 * with "..." when cut. */
char *policy_snip(const char *s, size_t max)
{
	size_t n = strcspn(s, "\n");
	int cut = s[n] != '\0';
	if (n > max) {
		n = max;
		cut = 1;
	}
	/* keep whole UTF-8 characters */
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80 && s[n])
		n--;
	char *out = xasprintf("%.*s%s", (int)n, s, cut ? "..." : "");
	return out;
}
