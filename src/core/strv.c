/* strv.c: the one string vector (include/assay/strv.h), for command
 * lines being built (the sandboxes, helpers) and sets of strings (the
 * policy's canonical forms). */
#include "assay/strv.h"
#include "assay/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void strv_take(struct strv *a, char *owned)
{
	if (a->n + 2 > a->cap) {
		a->cap = a->cap ? a->cap * 2 : 8;
		a->v = xrealloc(a->v, a->cap * sizeof *a->v);
	}
	a->v[a->n++] = owned;
	a->v[a->n] = NULL;
}

void strv_push(struct strv *a, const char *s)
{
	strv_take(a, xstrdup(s));
}

void strv_pushv(struct strv *a, int n, ...)
{
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		strv_push(a, va_arg(ap, const char *));
	va_end(ap);
}

void strv_add_unique(struct strv *a, char *owned)
{
	for (size_t k = 0; k < a->n; k++) {
		if (!strcmp(a->v[k], owned)) {
			free(owned);
			return;
		}
	}
	strv_take(a, owned);
}

void strv_copy(struct strv *dst, const struct strv *src)
{
	for (size_t i = 0; i < src->n; i++)
		strv_push(dst, src->v[i]);
}

void strv_free(struct strv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof *a);
}
