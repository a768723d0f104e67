/* export_write.c: the two formats of `assay export`, markdown and one
 * self-contained HTML file: how a heading, a paragraph of the model's
 * prose, an item, a code block, a note and an image are written, each
 * with the untrusted text cleaned (markdown) or escaped (HTML). */
#include "export.h"

#include "assay/termtext.h"
#include "assay/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void exp_put(struct exp *x, const char *s, size_t n)
{
	if (!x->overflow && buf_append(&x->out, s, n) < 0)
		x->overflow = 1;
}

void exp_puts(struct exp *x, const char *s)
{
	exp_put(x, s, strlen(s));
}

void exp_putf(struct exp *x, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	exp_puts(x, s);
	free(s);
}

/* Untrusted text made safe for a terminal and valid UTF-8 (the one
 * sanitizer: a record is read in terminals and viewers too). */
static char *exp_clean(const char *s)
{
	return term_clean(s, strlen(s),
	                  TERM_CLEAN_NEWLINES | TERM_CLEAN_KEEP_TABS);
}

/* ---- markdown ---- */

/* Prose: keep the model's markdown, but no raw HTML in viewers. */
static void md_prose(struct exp *x, const char *s)
{
	char *c = exp_clean(s);
	for (const char *p = c; *p; p++) {
		if (*p == '<')
			exp_puts(x, "&lt;");
		else if (*p == '&')
			exp_puts(x, "&amp;");
		else
			exp_put(x, p, 1);
	}
	free(c);
}

/* Exactly one blank line before the next block. */
static void md_gap(struct exp *x)
{
	const char *d = buf_str(&x->out);
	size_t n = x->out.len;
	if (n >= 2 && d[n - 1] == '\n' && d[n - 2] == '\n')
		return;
	exp_puts(x, n && d[n - 1] == '\n' ? "\n" : "\n\n");
}

/* The record's title. */
static void md_begin(struct exp *x, const char *title)
{
	exp_puts(x, "# ");
	md_prose(x, title);
	exp_puts(x, "\n");
}

static void md_end(struct exp *x)
{
	(void)x;
}

/* A heading on one line. */
static void md_heading(struct exp *x, int level, const char *text)
{
	md_gap(x);
	for (int i = 0; i < level; i++)
		exp_puts(x, "#");
	exp_puts(x, " ");
	char *one = xstrdup(text);
	for (char *p = one; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	md_prose(x, one);
	free(one);
	exp_puts(x, "\n\n");
}

/* A paragraph of the conversation. */
static void md_text(struct exp *x, const char *text)
{
	md_gap(x);
	md_prose(x, text);
	exp_puts(x, "\n\n");
}

/* "- **label**: value". */
static void md_item(struct exp *x, const char *label, const char *value)
{
	exp_puts(x, "- **");
	md_prose(x, label);
	exp_puts(x, "**: ");
	md_prose(x, value);
	exp_puts(x, "\n");
}

/* A fence longer than any run of backticks in the text. */
static void md_code(struct exp *x, const char *text)
{
	char *c = exp_clean(text);
	size_t run = 0, longest = 0;
	for (const char *p = c; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	size_t n = longest < 3 ? 3 : longest + 1;
	char *fence = xmalloc(n + 1);
	memset(fence, '`', n);
	fence[n] = '\0';
	size_t len = strlen(c);
	md_gap(x);
	exp_putf(x, "%s\n%s%s%s\n\n", fence, c,
	         len && c[len - 1] == '\n' ? "" : "\n", fence);
	free(fence);
	free(c);
}

/* A note as a quote. */
static void md_note(struct exp *x, const char *text)
{
	md_gap(x);
	exp_puts(x, "> ");
	md_prose(x, text);
	exp_puts(x, "\n\n");
}

/* Markdown does not embed: say where the image is. */
static void md_image(struct exp *x, const char *path, const unsigned char *png,
                     size_t n)
{
	(void)png;
	(void)n;
	exp_puts(x, "- image: ");
	md_prose(x, path);
	exp_puts(x, " (see the run's workspace; the HTML export embeds it)\n");
}

/* A link target markdown takes between < and >. */
static int md_link_ok(const char *p)
{
	for (const unsigned char *c = (const unsigned char *)p; *c; c++)
		if (*c < 0x20 || *c == 0x7f || *c == '<' || *c == '>' ||
		    *c == '\\')
			return 0;
	return 1;
}

/* An image sent to the model: the run dir's copy, linked, and its
 * caption (markdown embeds nothing). */
static void md_sent(struct exp *x, const struct exp_sent *s)
{
	md_gap(x);
	if (s->data && md_link_ok(s->file))
		exp_putf(x, "![%s](<%s>)\n\n", s->caption, s->file);
	exp_puts(x, "*image ");
	md_prose(x, s->path);
	exp_puts(x, " ");
	md_prose(x, s->caption);
	if (s->why) {
		exp_puts(x, " (its copy is not shown: ");
		md_prose(x, s->why);
		exp_puts(x, ")");
	}
	exp_puts(x, "*\n\n");
}

const struct exp_ops exp_md_ops = {
    md_begin, md_end,  md_heading, md_text, md_item,
    md_code,  md_note, md_image,   md_sent,
};

/* ---- HTML ---- */

/* Escape untrusted text for element content and quoted attributes. */
static void html_esc(struct exp *x, const char *s)
{
	char *c = utf8_sanitize(s, strlen(s), NULL);
	for (const unsigned char *p = (const unsigned char *)c; *p; p++) {
		switch (*p) {
		case '&':
			exp_puts(x, "&amp;");
			break;
		case '<':
			exp_puts(x, "&lt;");
			break;
		case '>':
			exp_puts(x, "&gt;");
			break;
		case '"':
			exp_puts(x, "&quot;");
			break;
		case '\'':
			exp_puts(x, "&#39;");
			break;
		default:
			if ((*p < 0x20 && *p != '\n' && *p != '\t') ||
			    *p == 0x7f)
				exp_puts(x, "&#xFFFD;");
			else
				exp_put(x, (const char *)p, 1);
		}
	}
	free(c);
}

static const char html_css[] =
    "body{font:15px/1.45 system-ui,sans-serif;max-width:60em;margin:2em "
    "auto;padding:0 1em;color:#222;background:#fff}"
    "h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid "
    "#ddd;margin-top:2em}h3{font-size:1.05em;margin-bottom:.3em}"
    ".text{white-space:pre-wrap;background:#f6f8fa;border-left:3px solid "
    "#8ab;padding:.5em .8em}"
    "pre{background:#1e1e1e;color:#e6e6e6;padding:.6em "
    ".8em;overflow-x:auto;white-space:pre-wrap;word-break:break-all}"
    ".item{margin:.15em 0}.item b{display:inline-block;min-width:9em}"
    ".note{color:#856404;background:#fff3cd;padding:.3em .6em}"
    "figure{margin:1em 0}img{max-width:100%;border:1px solid #ccc}";

/* The document up to its title, with a policy that lets nothing
 * load (images are data: URLs). */
static void html_begin(struct exp *x, const char *title)
{
	exp_puts(x, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
	            "charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-"
	            "Policy\" content=\"default-src 'none'; img-src data:; "
	            "style-src 'unsafe-inline'\">\n<title>");
	html_esc(x, title);
	exp_putf(x, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>",
	         html_css);
	html_esc(x, title);
	exp_puts(x, "</h1>\n");
}

static void html_end(struct exp *x)
{
	exp_puts(x, "</body>\n</html>\n");
}

/* <hN>text</hN>. */
static void html_heading(struct exp *x, int level, const char *text)
{
	exp_putf(x, "<h%d>", level);
	html_esc(x, text);
	exp_putf(x, "</h%d>\n", level);
}

/* A paragraph of the conversation, as preformatted text. */
static void html_text(struct exp *x, const char *text)
{
	exp_puts(x, "<div class=\"text\">");
	html_esc(x, text);
	exp_puts(x, "</div>\n");
}

/* A label and its value. */
static void html_item(struct exp *x, const char *label, const char *value)
{
	exp_puts(x, "<div class=\"item\"><b>");
	html_esc(x, label);
	exp_puts(x, "</b> ");
	html_esc(x, value);
	exp_puts(x, "</div>\n");
}

/* A code block. */
static void html_code(struct exp *x, const char *text)
{
	exp_puts(x, "<pre>");
	html_esc(x, text);
	exp_puts(x, "</pre>\n");
}

/* A note, set apart. */
static void html_note(struct exp *x, const char *text)
{
	exp_puts(x, "<p class=\"note\">");
	html_esc(x, text);
	exp_puts(x, "</p>\n");
}

/* d[0..n) as base64, for a data: URL. */
static void html_base64(struct exp *x, const unsigned char *d, size_t n)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrs"
	    "tuvwxyz0123456789+/";
	char q[4];
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)d[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)d[i + 1] << 8;
		if (i + 2 < n)
			v |= d[i + 2];
		q[0] = tab[(v >> 18) & 63];
		q[1] = tab[(v >> 12) & 63];
		q[2] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		q[3] = i + 2 < n ? tab[v & 63] : '=';
		exp_put(x, q, 4);
	}
}

/* An embedded PNG with its path as caption. */
static void html_image(struct exp *x, const char *path,
                       const unsigned char *png, size_t n)
{
	exp_puts(x, "<figure><img alt=\"");
	html_esc(x, path);
	exp_puts(x, "\" src=\"data:image/png;base64,");
	html_base64(x, png, n);
	exp_puts(x, "\"><figcaption>");
	html_esc(x, path);
	exp_puts(x, "</figcaption></figure>\n");
}

/* An image sent to the model, embedded, with its caption. */
static void html_sent(struct exp *x, const struct exp_sent *s)
{
	exp_puts(x, "<figure class=\"sent\">");
	if (s->data) {
		exp_puts(x, "<img alt=\"");
		html_esc(x, s->path);
		exp_putf(x, "\" src=\"data:%s;base64,", s->media_type);
		html_base64(x, (const unsigned char *)s->data, s->n);
		exp_puts(x, "\">");
	}
	exp_puts(x, "<figcaption>image ");
	html_esc(x, s->path);
	exp_puts(x, " ");
	html_esc(x, s->caption);
	if (s->why) {
		exp_puts(x, " (its copy is not shown: ");
		html_esc(x, s->why);
		exp_puts(x, ")");
	}
	exp_puts(x, "</figcaption></figure>\n");
}

const struct exp_ops exp_html_ops = {
    html_begin, html_end,  html_heading, html_text, html_item,
    html_code,  html_note, html_image,   html_sent,
};
