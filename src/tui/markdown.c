/* markdown.c: light markdown for the conversation: headings, bold,
 * inline code, fenced code blocks set apart, lists, quotes and rules.
 * The input is already cleaned (term_clean), so the stext made here holds
 * only our own markers. Unclosed markup shows as typed, which is what a
 * message still streaming looks like. */
#include "tui/tui.h"

#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

/* b becomes the next rendered line. */
static void md_push(struct ui_md *md, struct buf *b, int indent, int nowrap)
{
	if (md->n == md->cap) {
		md->cap = md->cap ? md->cap * 2 : 16;
		md->l = xrealloc(md->l, (size_t)md->cap * sizeof *md->l);
	}
	md->l[md->n++] = (struct ui_mdline){buf_detach(b), indent, nowrap};
}

void ui_md_free(struct ui_md *md)
{
	for (int i = 0; i < md->n; i++)
		free(md->l[i].st);
	free(md->l);
	md->l = NULL;
	md->n = md->cap = 0;
}

/* Inline markup of one line: `code` and **bold** / __bold__. */
static void inline_md(struct buf *b, const char *s, size_t n, enum ui_elem base)
{
	size_t i = 0;
	while (i < n) {
		if (s[i] == '`') {
			const char *end = memchr(s + i + 1, '`', n - i - 1);
			if (end && end > s + i + 1) {
				ui_st_elem(b, UE_CODE);
				buf_append(b, s + i + 1,
				           (size_t)(end - s - i - 1));
				ui_st_elem(b, base);
				i = (size_t)(end - s) + 1;
				continue;
			}
		}
		if (i + 1 < n && (s[i] == '*' || s[i] == '_') &&
		    s[i + 1] == s[i]) {
			char mk[3] = {s[i], s[i], 0};
			const char *end =
			    i + 2 < n ? memmem(s + i + 2, n - i - 2, mk, 2)
			              : NULL;
			if (end && end > s + i + 2 && s[i + 2] != ' ') {
				ui_st_elem(b, UE_BOLD);
				buf_append(b, s + i + 2,
				           (size_t)(end - s - i - 2));
				ui_st_elem(b, base);
				i = (size_t)(end - s) + 2;
				continue;
			}
		}
		buf_append(b, s + i, 1);
		i++;
	}
}

/* The spaces a line starts with. */
static size_t lead_spaces(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && s[i] == ' ')
		i++;
	return i;
}

/* "- ", "* ", "+ " or "12. " / "3) " after the indent: its length. */
static size_t list_marker(const char *s, size_t n, int *numbered)
{
	*numbered = 0;
	if (n >= 2 && strchr("-*+", s[0]) && s[1] == ' ')
		return 2;
	size_t i = 0;
	while (i < n && i < 9 && s[i] >= '0' && s[i] <= '9')
		i++;
	if (i > 0 && i + 1 < n && (s[i] == '.' || s[i] == ')') &&
	    s[i + 1] == ' ') {
		*numbered = 1;
		return i + 2;
	}
	return 0;
}

/* A line of three or more -, * or _ (a horizontal rule). */
static int is_rule(const char *s, size_t n)
{
	size_t i = lead_spaces(s, n), count = 0;
	char c = i < n ? s[i] : 0;
	if (c != '-' && c != '*' && c != '_')
		return 0;
	for (; i < n; i++) {
		if (s[i] == c)
			count++;
		else if (s[i] != ' ')
			return 0;
	}
	return count >= 3;
}

/* One line of text: a heading, a list item, a quote, a rule or a paragraph
 * line. */
static void md_line(struct ui_md *md, const char *s, size_t n,
                    enum ui_elem base)
{
	struct buf b;
	buf_init(&b, 0);
	size_t lead = lead_spaces(s, n);
	const char *t = s + lead;
	size_t tn = n - lead;
	int numbered;
	size_t lm;
	if (lead < 4 && tn > 0 && t[0] == '#') {
		size_t h = 0;
		while (h < tn && t[h] == '#')
			h++;
		if (h <= 6 && (h == tn || t[h] == ' ')) {
			size_t sp = lead_spaces(t + h, tn - h);
			ui_st_elem(&b, UE_HEADING);
			inline_md(&b, t + h + sp, tn - h - sp, UE_HEADING);
			md_push(md, &b, 0, 0);
			return;
		}
	}
	if (is_rule(s, n)) {
		ui_st_elem(&b, UE_DIM);
		for (int i = 0; i < 40; i++)
			buf_puts(&b, md->ascii ? "-" : "\xe2\x94\x80");
		md_push(md, &b, 0, 1);
		return;
	}
	if (tn >= 2 && t[0] == '>' && (t[1] == ' ' || tn == 1)) {
		ui_st_elem(&b, UE_DIM);
		buf_puts(&b, md->ascii ? "| " : "\xe2\x96\x8e ");
		ui_st_elem(&b, base);
		inline_md(&b, t + 2, tn - 2, base);
		md_push(md, &b, (int)lead + 2, 0);
		return;
	}
	if ((lm = list_marker(t, tn, &numbered)) > 0) {
		for (size_t i = 0; i < lead; i++)
			buf_puts(&b, " ");
		ui_st_elem(&b, UE_BULLET);
		if (numbered)
			buf_append(&b, t, lm);
		else
			buf_puts(&b, md->ascii ? "* " : "\xe2\x80\xa2 ");
		ui_st_elem(&b, base);
		inline_md(&b, t + lm, tn - lm, base);
		md_push(md, &b, (int)(lead + lm), 0);
		return;
	}
	ui_st_elem(&b, base);
	inline_md(&b, s, n, base);
	md_push(md, &b, (int)lead, 0);
}

/* A ``` line: a code block starts or ends. */
static int fence(const char *s, size_t n)
{
	size_t lead = lead_spaces(s, n);
	return lead < 4 && n - lead >= 3 && !strncmp(s + lead, "```", 3);
}

void ui_md_render(struct ui_md *md, const char *text, enum ui_elem base)
{
	const char *p = text;
	int in_code = 0;
	while (1) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		struct buf b;
		buf_init(&b, 0);
		if (fence(p, n)) {
			size_t lead = lead_spaces(p, n);
			ui_st_elem(&b, UE_DIM);
			if (!in_code) {
				buf_puts(&b,
				         md->ascii ? "+- " : "\xe2\x94\x8c ");
				buf_append(&b, p + lead + 3, n - lead - 3);
			} else {
				buf_puts(&b, md->ascii ? "+-" : "\xe2\x94\x94");
			}
			in_code = !in_code;
			md_push(md, &b, 0, 1);
		} else if (in_code) {
			ui_st_elem(&b, UE_DIM);
			buf_puts(&b, md->ascii ? "| " : "\xe2\x94\x82 ");
			ui_st_elem(&b, UE_CODE_BLOCK);
			buf_append(&b, p, n);
			md_push(md, &b, 2, 0);
		} else {
			buf_free(&b);
			md_line(md, p, n, base);
		}
		if (!nl)
			break;
		p = nl + 1;
	}
}
