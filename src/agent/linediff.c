/* linediff.c: what changed between two versions of a text file, as the
 * hunks `diff -u` prints (three lines of context). The lines between
 * the common head and tail are matched with Myers' greedy O(ND)
 * search, keeping each step's furthest reaches to walk back the edit
 * script; a change too large to search (more than LINEDIFF_MAX_D
 * edits) is shown as the whole middle removed, then added. */
#include "agent_internal.h"

#include "assay/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LINEDIFF_MAX_D 2000 /* edits searched: memory ~ 4 * D^2 bytes */
#define CONTEXT 3

enum { OP_EQ, OP_DEL, OP_INS };

struct ld_line {
	const char *p;
	size_t n;
	uint32_t h;
};

struct ld_text {
	struct ld_line *l;
	int n;
};

/* FNV-1a: lines are compared by hash first. */
static uint32_t ld_hash(const char *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 16777619u;
	return h;
}

/* The lines of text (a last line without its newline is one). */
static void ld_split(const char *s, size_t n, struct ld_text *t)
{
	size_t cap = 16;
	t->l = xmalloc(cap * sizeof *t->l);
	t->n = 0;
	for (size_t i = 0; i < n;) {
		const char *nl = memchr(s + i, '\n', n - i);
		size_t len = nl ? (size_t)(nl - (s + i)) + 1 : n - i;
		if ((size_t)t->n == cap) {
			cap *= 2;
			t->l = xrealloc(t->l, cap * sizeof *t->l);
		}
		t->l[t->n++] =
		    (struct ld_line){s + i, len, ld_hash(s + i, len)};
		i += len;
	}
}

static int ld_eq(const struct ld_line *a, const struct ld_line *b)
{
	return a->h == b->h && a->n == b->n && !memcmp(a->p, b->p, a->n);
}

/* Myers' search over a[0..n) and b[0..m): the edit script, reversed,
 * into ops (room for n + m); its length, or -1 past maxd edits. */
static int ld_myers(const struct ld_line *a, int n, const struct ld_line *b,
                    int m, int maxd, unsigned char *ops)
{
	int max = n + m;
	int *v = xcalloc((size_t)(2 * max + 3), sizeof *v);
	int *vk = v + max + 1; /* vk[k] for k in [-max-1, max+1] */
	int **trace = xcalloc((size_t)maxd + 1, sizeof *trace);
	int d, found = -1;
	for (d = 0; d <= max && d <= maxd && found < 0; d++) {
		for (int k = -d; k <= d; k += 2) {
			int x = k == -d || (k != d && vk[k - 1] < vk[k + 1])
			            ? vk[k + 1]
			            : vk[k - 1] + 1;
			int y = x - k;
			while (x < n && y < m && ld_eq(&a[x], &b[y]))
				x++, y++;
			vk[k] = x;
			if (x >= n && y >= m)
				found = d;
		}
		trace[d] = xmalloc((size_t)(2 * d + 1) * sizeof **trace);
		memcpy(trace[d], vk - d, (size_t)(2 * d + 1) * sizeof **trace);
	}
	int nops = -1;
	if (found >= 0) {
		nops = 0;
		int x = n, y = m;
		for (d = found; d > 0; d--) {
			const int *pv = trace[d - 1] + (d - 1); /* pv[k] */
			int k = x - y;
			int down = k == -d || (k != d && pv[k - 1] < pv[k + 1]);
			int pk = down ? k + 1 : k - 1;
			int px = pv[pk], py = px - pk;
			int sx = down ? px : px + 1; /* the snake's start */
			while (x > sx)
				ops[nops++] = OP_EQ, x--, y--;
			ops[nops++] = down ? OP_INS : OP_DEL;
			x = px, y = py;
		}
		while (x > 0)
			ops[nops++] = OP_EQ, x--;
	}
	for (d = 0; d <= maxd; d++)
		free(trace[d]);
	free(trace);
	free(v);
	return nops;
}

/* The whole edit script of a -> b, in order; its length. */
static int ld_script(const struct ld_text *a, const struct ld_text *b,
                     unsigned char **out)
{
	int head = 0, tail = 0;
	while (head < a->n && head < b->n && ld_eq(&a->l[head], &b->l[head]))
		head++;
	while (tail < a->n - head && tail < b->n - head &&
	       ld_eq(&a->l[a->n - 1 - tail], &b->l[b->n - 1 - tail]))
		tail++;
	int n = a->n - head - tail, m = b->n - head - tail;
	unsigned char *ops = xmalloc((size_t)(a->n + b->n) + 1);
	unsigned char *mid = xmalloc((size_t)(n + m) + 1);
	int len = 0;
	for (int i = 0; i < head; i++)
		ops[len++] = OP_EQ;
	int k = ld_myers(a->l + head, n, b->l + head, m, LINEDIFF_MAX_D, mid);
	if (k < 0) { /* too much changed to search: replaced */
		memset(ops + len, OP_DEL, (size_t)n);
		memset(ops + len + n, OP_INS, (size_t)m);
		len += n + m;
	} else {
		while (k > 0)
			ops[len++] = mid[--k];
	}
	for (int i = 0; i < tail; i++)
		ops[len++] = OP_EQ;
	free(mid);
	*out = ops;
	return len;
}

/* One line of a hunk: its sign, its text (a missing newline added). */
static void ld_emit(struct buf *out, char sign, const struct ld_line *l)
{
	char c[1] = {sign};
	buf_append(out, c, 1);
	buf_append(out, l->p, l->n);
	if (!l->n || l->p[l->n - 1] != '\n')
		buf_append(out, "\n", 1);
}

/* The range of a hunk as diff -u writes it: an empty one names the
 * line before it. */
static void ld_range(struct buf *out, char sign, int start, int len)
{
	buf_printf(out, "%c%d", sign, len ? start + 1 : start);
	if (len != 1)
		buf_printf(out, ",%d", len);
}

/* The hunk of ops[from, to) (a at line ia, b at line ib there), its
 * lines until out holds more than max bytes. */
static void ld_hunk(struct buf *out, size_t max, const unsigned char *ops,
                    int from, int to, const struct ld_text *a, int ia,
                    const struct ld_text *b, int ib)
{
	int la = 0, lb = 0;
	for (int i = from; i < to; i++) {
		la += ops[i] != OP_INS;
		lb += ops[i] != OP_DEL;
	}
	buf_puts(out, "@@ ");
	ld_range(out, '-', ia, la);
	buf_puts(out, " ");
	ld_range(out, '+', ib, lb);
	buf_puts(out, " @@\n");
	for (int i = from; i < to && out->len <= max; i++) {
		if (ops[i] == OP_EQ)
			ld_emit(out, ' ', &a->l[ia++]), ib++;
		else if (ops[i] == OP_DEL)
			ld_emit(out, '-', &a->l[ia++]);
		else
			ld_emit(out, '+', &b->l[ib++]);
	}
}

/* The hunks of ops into out, until it holds max bytes (then cut). */
static int ld_hunks(struct buf *out, const unsigned char *ops, int len,
                    const struct ld_text *a, const struct ld_text *b,
                    size_t max)
{
	int ia = 0, ib = 0, i = 0;
	while (i < len) {
		if (ops[i] == OP_EQ) {
			ia++, ib++, i++;
			continue;
		}
		/* a change at i: the hunk takes context before it and runs
		 * until a stretch of more than 2 * CONTEXT equal lines */
		int back = i < CONTEXT ? i : CONTEXT;
		int from = i - back, end = i;
		for (int j = i; j < len; j++) {
			if (ops[j] != OP_EQ)
				end = j + 1;
			else if (j - end >= 2 * CONTEXT)
				break;
		}
		int to = end + CONTEXT < len ? end + CONTEXT : len;
		ld_hunk(out, max, ops, from, to, a, ia - back, b, ib - back);
		if (out->len > max)
			return 1;
		for (int j = i; j < to; j++) {
			ia += ops[j] != OP_INS;
			ib += ops[j] != OP_DEL;
		}
		i = to;
	}
	return 0;
}

int linediff(const char *a, size_t na, const char *b, size_t nb, size_t max,
             struct linediff *d)
{
	struct ld_text ta, tb;
	ld_split(a, na, &ta);
	ld_split(b, nb, &tb);
	unsigned char *ops = NULL;
	int len = ld_script(&ta, &tb, &ops);
	memset(d, 0, sizeof *d);
	for (int i = 0; i < len; i++) {
		d->added += ops[i] == OP_INS;
		d->removed += ops[i] == OP_DEL;
	}
	buf_init(&d->hunks, 0);
	d->cut = ld_hunks(&d->hunks, ops, len, &ta, &tb, max);
	free(ops);
	free(ta.l);
	free(tb.l);
	return 0;
}
