/* listing.c: the list op's result on its way to the loop. A big listing
 * is made in the assay-archive helper (the local walk, or the sort of
 * the records the docker backend's find printed) and comes back as one
 * JSON object a line, which the loop parses as it arrives: a few
 * hundred entries per read, never the whole tree at once. */
#include "assay/json.h"
#include "assay/util.h"
#include "sandbox/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LISTING_LINE_MAX (1u << 20) /* one entry, as JSON */
#define LISTING_REC_MAX 8192        /* one find record */

void sbx_listing_init(struct sbx_listing *l, size_t max)
{
	memset(l, 0, sizeof *l);
	l->list = cJSON_CreateArray();
	l->max = max;
	buf_init(&l->line, LISTING_LINE_MAX);
}

void sbx_listing_free(struct sbx_listing *l)
{
	cJSON_Delete(l->list);
	buf_free(&l->line);
	memset(l, 0, sizeof *l);
}

/* One line: an entry object, appended (in O(1)). */
static int listing_line(struct sbx_listing *l, const char *p, size_t n)
{
	cJSON *e = cJSON_ParseWithLength(p, n);
	if (!e || !cJSON_IsObject(e) || l->n >= l->max) {
		cJSON_Delete(e);
		return -1;
	}
	cJSON_AddItemToArray(l->list, e);
	l->n++;
	return 0;
}

int sbx_listing_feed(struct sbx_listing *l, const char *data, size_t n)
{
	while (n && !l->bad) {
		const char *nl = memchr(data, '\n', n);
		size_t k = nl ? (size_t)(nl - data) : n;
		if (buf_append(&l->line, data, k) < 0) {
			l->bad = 1;
			break;
		}
		if (!nl)
			return 0;
		if (listing_line(l, l->line.data ? l->line.data : "",
		                 l->line.len) < 0)
			l->bad = 1;
		buf_reset(&l->line);
		data += k + 1;
		n -= k + 1;
	}
	return l->bad ? -1 : 0;
}

void sbx_progress_feed(struct sbx *s, struct sbx_listing *l, const char *what,
                       int64_t t0, const char *data, size_t n)
{
	if (sbx_listing_feed(l, data, n) < 0)
		return; /* not progress: no more of it (the work goes on) */
	cJSON *e;
	while ((e = cJSON_DetachItemFromArray(l->list, 0))) {
		if (s->progress)
			s->progress(s->progress_arg, what,
			            json_str(e, "progress", ""),
			            json_num(e, "done", 0),
			            json_num(e, "total", 0), now_ms() - t0);
		cJSON_Delete(e);
	}
}

void sbx_progress_cut(struct sbx *s, const struct sbx_listing *l,
                      const char *what)
{
	if (l->n && s->progress)
		s->progress(s->progress_arg, what, "", -1, 0, 0);
}

/* ---- docker's records, sorted (in the helper) ---- */

/* Pre-order with siblings in strcmp order, as the local walk. */
static int listing_path_cmp(const char *a, const char *b)
{
	for (;;) {
		size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
		int c = memcmp(a, b, la < lb ? la : lb);
		if (c)
			return c;
		if (la != lb)
			return la < lb ? -1 : 1;
		if (!a[la] || !b[lb])
			return (a[la] != 0) - (b[lb] != 0);
		a += la + 1;
		b += lb + 1;
	}
}

/* Listing entries by path (qsort). */
static int listing_item_cmp(const void *x, const void *y)
{
	const cJSON *a = *(const cJSON *const *)x,
	            *b = *(const cJSON *const *)y;
	return listing_path_cmp(json_str(a, "path", ""),
	                        json_str(b, "path", ""));
}

/* find's %y letter as the list op names the type. */
static const char *listing_type_name(char y)
{
	switch (y) {
	case 'f':
		return "file";
	case 'd':
		return "dir";
	case 'l':
		return "link";
	default:
		return "other";
	}
}

/* One "%y %s %T@ %C@ %P" record. */
static cJSON *listing_item(const char *rec, const char *prefix)
{
	char y;
	long long size;
	double mtime, ctime;
	int used = 0;
	if (sscanf(rec, "%c %lld %lf %lf %n", &y, &size, &mtime, &ctime,
	           &used) != 4 ||
	    !used || !rec[used])
		return NULL;
	cJSON *e = cJSON_CreateObject();
	char *path = *prefix ? xasprintf("%s/%s", prefix, rec + used)
	                     : xstrdup(rec + used);
	char *clean = utf8_sanitize(path, strlen(path), NULL);
	cJSON_AddStringToObject(e, "path", clean);
	cJSON_AddStringToObject(e, "type", listing_type_name(y));
	cJSON_AddNumberToObject(e, "size", y == 'd' ? 0 : (double)size);
	cJSON_AddNumberToObject(e, "mtime", floor(mtime * 1000) / 1000);
	cJSON_AddNumberToObject(e, "ctime", floor(ctime * 1000) / 1000);
	free(path);
	free(clean);
	return e;
}

cJSON *sbx_listing_sort(const char *data, size_t len, int full,
                        const char *prefix, size_t max, int *truncated)
{
	size_t n = 0, cap = 64;
	cJSON **items = xmalloc(cap * sizeof *items);
	*truncated = full;
	for (size_t pos = 0; pos < len;) {
		const char *rec = data + pos;
		size_t k = strnlen(rec, len - pos);
		pos += k + 1;
		if (n >= max) {
			*truncated = 1;
			break;
		}
		cJSON *e =
		    k < LISTING_REC_MAX ? listing_item(rec, prefix) : NULL;
		if (!e)
			continue;
		if (n == cap)
			items = xrealloc(items, (cap *= 2) * sizeof *items);
		items[n++] = e;
	}
	qsort(items, n, sizeof *items, listing_item_cmp);
	cJSON *list = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(list, items[i]);
	free(items);
	return list;
}
