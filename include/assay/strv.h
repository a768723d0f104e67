/* strv.h: the one string vector: an array of owned strings, always
 * NULL-terminated once it holds one (argv-ready), with its count. */
#ifndef ASSAY_STRV_H
#define ASSAY_STRV_H

#include <stddef.h>

struct strv {
	char **v; /* v[n] is NULL */
	size_t n, cap;
};

/* Append a copy of s. */
void strv_push(struct strv *a, const char *s);
/* Append copies of the n strings that follow. */
void strv_pushv(struct strv *a, int n, ...);
/* Append owned, taken over. */
void strv_take(struct strv *a, char *owned);
/* Append owned, taken over, unless a holds it already (then it is
 * freed): a set of strings in the order first seen. */
void strv_add_unique(struct strv *a, char *owned);
/* Append copies of every string of src. */
void strv_copy(struct strv *dst, const struct strv *src);
/* Free the strings and the array; a is empty again. */
void strv_free(struct strv *a);

#endif
