/* export.c: `assay export RUN --format md|html`: a readable record of a
 * recorded run (conversation, tool calls, approvals, outputs, tokens),
 * built from its transcript.jsonl; HTML is one self-contained file
 * with the workspace's PNG images embedded, read from the workspace
 * directory or else from the persisted workspace.tar.gz (through the
 * assay-archive helper: libarchive stays out of this process). */
#include "cli.h"

#include "assay/buf.h"
#include "assay/json.h"
#include "assay/util.h"
#include "sandbox/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXP_LINE_MAX (16u << 20) /* longest transcript line accepted */
#define EXP_OUT_MAX (256u << 20) /* the whole record */
#define EXP_CALL_OUT_MAX 4096    /* output shown per tool call */
#define EXP_IMAGE_MAX (5u << 20) /* largest PNG embedded */
#define EXP_IMAGES_MAX 32        /* images embedded at most */
#define EXP_HELPER_MS 120000     /* the archive helper's time */
#define EXP_HELPER_OUT (64u << 10)

struct exp;

/* One output format: how each kind of block is written. */
struct exp_ops {
	void (*begin)(struct exp *x, const char *title);
	void (*end)(struct exp *x);
	void (*heading)(struct exp *x, int level, const char *text);
	/* prose from the conversation (may be markdown) */
	void (*text)(struct exp *x, const char *text);
	/* "label: value" line */
	void (*item)(struct exp *x, const char *label, const char *value);
	void (*code)(struct exp *x, const char *text);
	void (*note)(struct exp *x, const char *text);
	void (*image)(struct exp *x, const char *path, const unsigned char *png,
	              size_t n);
};

struct exp {
	const struct exp_ops *ops;
	struct buf out;
	int overflow;
	char *run_dir;
	/* the local backend's host workspace, as run_start recorded it */
	char *workspace;
	/* the tool call whose output is being gathered */
	char *call_id;
	struct buf call_out;
	int call_cut;
	int call_had_exec;
	/* PNG paths seen in workspace_change events */
	char *images[EXP_IMAGES_MAX];
	int n_images, images_dropped;
};

static void put(struct exp *x, const char *s, size_t n)
{
	if (!x->overflow && buf_append(&x->out, s, n) < 0)
		x->overflow = 1;
}

static void puts_(struct exp *x, const char *s)
{
	put(x, s, strlen(s));
}

static void putf(struct exp *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void putf(struct exp *x, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	puts_(x, s);
	free(s);
}

/* Untrusted text made safe for a terminal and valid UTF-8. */
static char *clean(const char *s)
{
	return term_sanitize(s, strlen(s));
}

/* ---- markdown ---- */

/* Prose: keep the model's markdown, but no raw HTML in viewers. */
static void md_prose(struct exp *x, const char *s)
{
	char *c = clean(s);
	for (const char *p = c; *p; p++) {
		if (*p == '<')
			puts_(x, "&lt;");
		else if (*p == '&')
			puts_(x, "&amp;");
		else
			put(x, p, 1);
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
	puts_(x, n && d[n - 1] == '\n' ? "\n" : "\n\n");
}

static void md_begin(struct exp *x, const char *title)
{
	puts_(x, "# ");
	md_prose(x, title);
	puts_(x, "\n");
}

static void md_end(struct exp *x)
{
	(void)x;
}

static void md_heading(struct exp *x, int level, const char *text)
{
	md_gap(x);
	for (int i = 0; i < level; i++)
		puts_(x, "#");
	puts_(x, " ");
	char *one = xstrdup(text);
	for (char *p = one; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	md_prose(x, one);
	free(one);
	puts_(x, "\n\n");
}

static void md_text(struct exp *x, const char *text)
{
	md_gap(x);
	md_prose(x, text);
	puts_(x, "\n\n");
}

static void md_item(struct exp *x, const char *label, const char *value)
{
	puts_(x, "- **");
	md_prose(x, label);
	puts_(x, "**: ");
	md_prose(x, value);
	puts_(x, "\n");
}

/* A fence longer than any run of backticks in the text. */
static void md_code(struct exp *x, const char *text)
{
	char *c = clean(text);
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
	putf(x, "%s\n%s%s%s\n\n", fence, c,
	     len && c[len - 1] == '\n' ? "" : "\n", fence);
	free(fence);
	free(c);
}

static void md_note(struct exp *x, const char *text)
{
	md_gap(x);
	puts_(x, "> ");
	md_prose(x, text);
	puts_(x, "\n\n");
}

static void md_image(struct exp *x, const char *path, const unsigned char *png,
                     size_t n)
{
	(void)png;
	(void)n;
	puts_(x, "- image: ");
	md_prose(x, path);
	puts_(x, " (see the run's workspace; the HTML export embeds it)\n");
}

static const struct exp_ops md_ops = {
    md_begin, md_end, md_heading, md_text, md_item, md_code, md_note, md_image,
};

/* ---- HTML ---- */

/* Escape untrusted text for element content and quoted attributes. */
static void html_esc(struct exp *x, const char *s)
{
	char *c = utf8_sanitize(s, strlen(s), NULL);
	for (const unsigned char *p = (const unsigned char *)c; *p; p++) {
		switch (*p) {
		case '&':
			puts_(x, "&amp;");
			break;
		case '<':
			puts_(x, "&lt;");
			break;
		case '>':
			puts_(x, "&gt;");
			break;
		case '"':
			puts_(x, "&quot;");
			break;
		case '\'':
			puts_(x, "&#39;");
			break;
		default:
			if ((*p < 0x20 && *p != '\n' && *p != '\t') ||
			    *p == 0x7f)
				puts_(x, "&#xFFFD;");
			else
				put(x, (const char *)p, 1);
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

static void html_begin(struct exp *x, const char *title)
{
	puts_(x, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
	         "charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-"
	         "Policy\" content=\"default-src 'none'; img-src data:; "
	         "style-src 'unsafe-inline'\">\n<title>");
	html_esc(x, title);
	putf(x, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", html_css);
	html_esc(x, title);
	puts_(x, "</h1>\n");
}

static void html_end(struct exp *x)
{
	puts_(x, "</body>\n</html>\n");
}

static void html_heading(struct exp *x, int level, const char *text)
{
	putf(x, "<h%d>", level);
	html_esc(x, text);
	putf(x, "</h%d>\n", level);
}

static void html_text(struct exp *x, const char *text)
{
	puts_(x, "<div class=\"text\">");
	html_esc(x, text);
	puts_(x, "</div>\n");
}

static void html_item(struct exp *x, const char *label, const char *value)
{
	puts_(x, "<div class=\"item\"><b>");
	html_esc(x, label);
	puts_(x, "</b> ");
	html_esc(x, value);
	puts_(x, "</div>\n");
}

static void html_code(struct exp *x, const char *text)
{
	puts_(x, "<pre>");
	html_esc(x, text);
	puts_(x, "</pre>\n");
}

static void html_note(struct exp *x, const char *text)
{
	puts_(x, "<p class=\"note\">");
	html_esc(x, text);
	puts_(x, "</p>\n");
}

static void base64(struct exp *x, const unsigned char *d, size_t n)
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
		put(x, q, 4);
	}
}

static void html_image(struct exp *x, const char *path,
                       const unsigned char *png, size_t n)
{
	puts_(x, "<figure><img alt=\"");
	html_esc(x, path);
	puts_(x, "\" src=\"data:image/png;base64,");
	base64(x, png, n);
	puts_(x, "\"><figcaption>");
	html_esc(x, path);
	puts_(x, "</figcaption></figure>\n");
}

static const struct exp_ops html_ops = {
    html_begin, html_end,  html_heading, html_text,
    html_item,  html_code, html_note,    html_image,
};

/* ---- events ---- */

static const char *str_or(const cJSON *o, const char *key, const char *def)
{
	const char *s = json_str(o, key, NULL);
	return s && *s ? s : def;
}

static void item_num(struct exp *x, const char *label, double v)
{
	char *s = xasprintf("%.0f", v);
	x->ops->item(x, label, s);
	free(s);
}

/* A JSON array of strings or {src,dest} objects as "a, b -> c". */
static char *list_text(const cJSON *arr)
{
	struct buf b;
	buf_init(&b, 1 << 20);
	const cJSON *e;
	cJSON_ArrayForEach(e, arr)
	{
		if (b.len)
			buf_puts(&b, ", ");
		if (cJSON_IsString(e)) {
			buf_puts(&b, e->valuestring);
		} else {
			buf_puts(&b, str_or(e, "src", "?"));
			buf_puts(&b, " -> ");
			buf_puts(&b, str_or(e, "dest", "?"));
		}
	}
	return b.len ? buf_detach(&b) : (buf_free(&b), xstrdup("(none)"));
}

static void ev_run_start(struct exp *x, const cJSON *e)
{
	const struct exp_ops *o = x->ops;
	o->heading(x, 2, "Run");
	o->item(x, "run id", str_or(e, "run_id", "?"));
	char *pm = xasprintf("%s / %s", str_or(e, "provider", "?"),
	                     str_or(e, "model", "?"));
	o->item(x, "provider / model", pm);
	free(pm);
	const cJSON *sb = cJSON_GetObjectItemCaseSensitive(e, "sandbox");
	char *s = xasprintf("%s (image %s)", str_or(sb, "backend", "?"),
	                    str_or(sb, "image", "-"));
	o->item(x, "sandbox", s);
	free(s);
	const char *ws = json_str(e, "workspace", NULL);
	if (ws && ws[0] == '/' && !strcmp(str_or(sb, "backend", ""), "local")) {
		free(x->workspace);
		x->workspace = xstrdup(ws);
	}
	o->item(x, "approval mode", str_or(e, "ask", "?"));
	o->item(x, "version", str_or(e, "version", "?"));
	s = list_text(cJSON_GetObjectItemCaseSensitive(e, "inputs"));
	o->item(x, "inputs", s);
	free(s);
	s = list_text(cJSON_GetObjectItemCaseSensitive(e, "outputs"));
	o->item(x, "declared outputs", s);
	free(s);
}

/* The command, code or path a tool call carries, as readable text. */
static char *call_body(const cJSON *args)
{
	const char *v;
	if ((v = json_str(args, "command", NULL)))
		return xstrdup(v);
	if ((v = json_str(args, "code", NULL)))
		return xstrdup(v);
	if ((v = json_str(args, "path", NULL))) {
		const char *c = json_str(args, "content", NULL);
		return c ? xasprintf("path: %s (%zu bytes of content)", v,
		                     strlen(c))
		         : xasprintf("path: %s", v);
	}
	return json_print(args);
}

static void call_reset(struct exp *x, const char *id)
{
	free(x->call_id);
	x->call_id = id ? xstrdup(id) : NULL;
	buf_reset(&x->call_out);
	x->call_cut = 0;
	x->call_had_exec = 0;
}

/* Keep up to EXP_CALL_OUT_MAX bytes of a call's output, cut on a
 * character boundary. */
static void call_gather(struct exp *x, const char *text, int truncated)
{
	size_t n = strlen(text), room = EXP_CALL_OUT_MAX - x->call_out.len;
	if (n > room) {
		n = utf8_complete_prefix(text, room);
		x->call_cut = 1;
	}
	buf_append(&x->call_out, text, n);
	if (truncated)
		x->call_cut = 1;
}

static void ev_tool_call(struct exp *x, const cJSON *e)
{
	const char *id = str_or(e, "id", "?");
	call_reset(x, id);
	char *h = xasprintf("Tool call: %s (%s)", str_or(e, "name", "?"), id);
	x->ops->heading(x, 3, h);
	free(h);
	char *body =
	    call_body(cJSON_GetObjectItemCaseSensitive(e, "arguments"));
	x->ops->code(x, body);
	free(body);
}

static void ev_approval(struct exp *x, const cJSON *e)
{
	const char *by = str_or(e, "by", "?");
	const cJSON *rule = cJSON_GetObjectItemCaseSensitive(e, "rule");
	char *s = xasprintf("%s by %s%s%s", str_or(e, "decision", "?"), by,
	                    cJSON_IsString(rule) ? ", rule " : "",
	                    cJSON_IsString(rule) ? rule->valuestring : "");
	x->ops->item(x, "approval", s);
	free(s);
	const char *orig = json_str(e, "original", NULL);
	const char *fin = json_str(e, "final", NULL);
	if (orig && fin && strcmp(orig, fin)) {
		x->ops->note(x, "edited before running; what ran:");
		x->ops->code(x, fin);
	}
	const char *fb = json_str(e, "feedback", NULL);
	if (fb && *fb)
		x->ops->item(x, "feedback", fb);
}

static void ev_exec_output(struct exp *x, const cJSON *e)
{
	const char *id = json_str(e, "id", "");
	if (!x->call_id || strcmp(id, x->call_id))
		call_reset(x, id);
	x->call_had_exec = 1;
	const char *text = json_str(e, "text", "");
	double bytes = json_num(e, "bytes", 0);
	call_gather(x, text, bytes > (double)strlen(text));
}

static void show_output(struct exp *x, const char *where)
{
	if (x->call_out.len)
		x->ops->code(x, buf_str(&x->call_out));
	if (x->call_cut) {
		char *n = xasprintf(
		    "output cut at %d bytes%s%s", EXP_CALL_OUT_MAX,
		    where ? "; full output in " : "", where ? where : "");
		x->ops->note(x, n);
		free(n);
	}
}

static void ev_exec_end(struct exp *x, const cJSON *e)
{
	char *s = xasprintf(
	    "exit code %.0f%s%s, %.0f ms", json_num(e, "exit_code", -1),
	    json_bool(e, "timed_out", 0) ? ", timed out" : "",
	    json_num(e, "signal", 0) ? ", killed by a signal" : "",
	    json_num(e, "duration_ms", 0));
	x->ops->item(x, "result", s);
	free(s);
	show_output(x, json_str(e, "output_file", NULL));
}

static void ev_tool_result(struct exp *x, const cJSON *e)
{
	const char *id = json_str(e, "id", "");
	int is_err = json_bool(e, "is_error", 0);
	if (x->call_id && !strcmp(id, x->call_id) && x->call_had_exec &&
	    !is_err) {
		call_reset(x, NULL);
		return; /* the exec output already shown is what was sent */
	}
	call_reset(x, id);
	call_gather(x, json_str(e, "content", ""), 0);
	x->ops->item(x, is_err ? "tool error" : "tool result", "");
	show_output(x, NULL);
	call_reset(x, NULL);
}

static void ev_usage(struct exp *x, const cJSON *e)
{
	int known = json_bool(e, "known", 1);
	char cost[64];
	if (known)
		snprintf(cost, sizeof cost, "$%.4f",
		         json_num(e, "cost_usd", 0));
	else
		snprintf(cost, sizeof cost, "unknown");
	char *s =
	    xasprintf("turn %.0f: %.0f in, %.0f out (%.0f cached); cost %s",
	              json_num(e, "turn", 0), json_num(e, "input_tokens", 0),
	              json_num(e, "output_tokens", 0),
	              json_num(e, "cached_tokens", 0), cost);
	x->ops->item(x, "tokens", s);
	free(s);
}

static void ev_workspace_change(struct exp *x, const cJSON *e)
{
	const char *path = json_str(e, "path", NULL);
	const char *kind = str_or(e, "kind", "?");
	if (!path)
		return;
	char *s =
	    xasprintf("%s %s (%.0f bytes)", kind, path, json_num(e, "size", 0));
	x->ops->item(x, "workspace", s);
	free(s);
	size_t n = strlen(path);
	if (n < 4 || strcmp(path + n - 4, ".png") || !strcmp(kind, "deleted"))
		return;
	for (int i = 0; i < x->n_images; i++)
		if (!strcmp(x->images[i], path))
			return;
	if (x->n_images == EXP_IMAGES_MAX)
		x->images_dropped++;
	else
		x->images[x->n_images++] = xstrdup(path);
}

static void ev_run_end(struct exp *x, const cJSON *e)
{
	const struct exp_ops *o = x->ops;
	o->heading(x, 2, "End of run");
	o->item(x, "status", str_or(e, "status", "?"));
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "totals");
	item_num(x, "turns", json_num(t, "turns", 0));
	char *s = xasprintf("%.0f in, %.0f out", json_num(t, "input_tokens", 0),
	                    json_num(t, "output_tokens", 0));
	o->item(x, "tokens in total", s);
	free(s);
	double cost = json_num(t, "cost_usd", 0);
	s = cost > 0 ? xasprintf("$%.4f", cost)
	             : xstrdup("$0 (or unknown: the provider reported none)");
	o->item(x, "cost", s);
	free(s);
	s = xasprintf("%.1f s", json_num(t, "duration_ms", 0) / 1000.0);
	o->item(x, "duration", s);
	free(s);
	const cJSON *out;
	cJSON_ArrayForEach(out, cJSON_GetObjectItemCaseSensitive(e, "outputs"))
	{
		int present = json_bool(out, "present", 0);
		s = present ? xasprintf("%s (%.0f bytes) -> %s",
		                        str_or(out, "path", "?"),
		                        json_num(out, "bytes", 0),
		                        str_or(out, "copied_to", "-"))
		            : xasprintf("%s MISSING", str_or(out, "path", "?"));
		o->item(x, "output", s);
		free(s);
	}
}

static void event(struct exp *x, const cJSON *e)
{
	const char *type = json_str(e, "type", "");
	const struct exp_ops *o = x->ops;
	if (!strcmp(type, "run_start")) {
		ev_run_start(x, e);
		o->heading(x, 2, "Conversation");
	} else if (!strcmp(type, "user_message")) {
		o->heading(x, 3, "User");
		o->text(x, json_str(e, "text", ""));
	} else if (!strcmp(type, "assistant_message")) {
		char *h =
		    xasprintf("Assistant (turn %.0f)", json_num(e, "turn", 0));
		o->heading(x, 3, h);
		free(h);
		const char *t = json_str(e, "text", "");
		if (*t)
			o->text(x, t);
	} else if (!strcmp(type, "usage")) {
		ev_usage(x, e);
	} else if (!strcmp(type, "tool_call")) {
		ev_tool_call(x, e);
	} else if (!strcmp(type, "approval")) {
		ev_approval(x, e);
	} else if (!strcmp(type, "exec_output")) {
		ev_exec_output(x, e);
	} else if (!strcmp(type, "exec_end")) {
		ev_exec_end(x, e);
	} else if (!strcmp(type, "tool_result")) {
		ev_tool_result(x, e);
	} else if (!strcmp(type, "workspace_change")) {
		ev_workspace_change(x, e);
	} else if (!strcmp(type, "error")) {
		char *s =
		    xasprintf("error (%s): %s", str_or(e, "category", "?"),
		              str_or(e, "message", ""));
		o->note(x, s);
		free(s);
	} else if (!strcmp(type, "run_end")) {
		ev_run_end(x, e);
	}
}

/* One line of at most EXP_LINE_MAX bytes into b (without the newline).
 * Returns 1 with a line, 0 at EOF, -1 if too long. *nl says whether the
 * line ended with a newline (a crashed run leaves a last one without). */
static int read_line(FILE *f, struct buf *b, int *nl)
{
	char chunk[65536];
	buf_reset(b);
	*nl = 0;
	while (fgets(chunk, sizeof chunk, f)) {
		size_t n = strlen(chunk);
		int end = n && chunk[n - 1] == '\n';
		if (buf_append(b, chunk, n - end) < 0)
			return -1;
		if (end) {
			*nl = 1;
			return 1;
		}
	}
	return b->len ? 1 : 0;
}

static int read_transcript(struct exp *x, const char *path, char **err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return set_err(err, "cannot open %s: %s", path,
		               strerror(errno));
	struct buf line;
	buf_init(&line, EXP_LINE_MAX);
	int rc = -1, r, nl;
	unsigned long no = 0;
	while ((r = read_line(f, &line, &nl)) > 0) {
		no++;
		cJSON *e = cJSON_ParseWithLength(line.data, line.len);
		if (!e || !cJSON_IsObject(e)) {
			char *n =
			    nl ? xasprintf("line %lu of the transcript is not "
			                   "a JSON object; skipped",
			                   no)
			       : xasprintf("the last line of the transcript "
			                   "is cut short (the run did not end "
			                   "cleanly); skipped");
			x->ops->note(x, n);
			free(n);
		} else {
			event(x, e);
		}
		cJSON_Delete(e);
	}
	if (r < 0) {
		set_err(err,
		        "%s: line %lu is longer than %u MiB; refusing to read "
		        "it (is this a transcript?)",
		        path, no + 1, EXP_LINE_MAX >> 20);
		goto out;
	}
	if (ferror(f)) {
		set_err(err, "cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	if (!no) {
		set_err(err, "%s is empty: nothing to export", path);
		goto out;
	}
	rc = 0;
out:
	buf_free(&line);
	fclose(f);
	return rc;
}

/* A workspace path from the transcript stays inside the workspace. */
static int safe_rel(const char *p)
{
	if (*p == '/' || !*p)
		return 0;
	for (const char *s = p; s; s = strchr(s, '/')) {
		if (*s == '/')
			s++;
		if (!strncmp(s, "..", 2) && (s[2] == '/' || !s[2]))
			return 0;
	}
	return 1;
}

static const char exp_not_here[] = "not in the workspace";

/* The file rel below the directory root, opened one component at a
 * time without following links (the sandbox made the tree: a link in
 * it must not lead the export outside). At most max bytes; NULL with
 * *why (static text, or *owned when made) if not read. */
static char *read_below(const char *root, const char *rel, size_t max,
                        size_t *n, const char **why, char **owned)
{
	char *data = NULL, *save = NULL, *p = xstrdup(rel);
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	*why = exp_not_here;
	for (char *c = strtok_r(p, "/", &save); c && fd >= 0;) {
		char *next = strtok_r(NULL, "/", &save);
		int nfd = openat(fd, c,
		                 O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK |
		                     O_CLOEXEC | (next ? O_DIRECTORY : 0));
		if (nfd < 0 && (errno == ELOOP || errno == ENOTDIR))
			*why = "a link or not a file: not followed";
		else if (nfd < 0 && errno != ENOENT)
			*why = *owned =
			    xasprintf("cannot be opened: %s", strerror(errno));
		close(fd);
		fd = nfd;
		c = next;
	}
	free(p);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
	} else if ((size_t)st.st_size > max) {
		*why = *owned = xasprintf("%lld bytes, over the %zu MiB limit",
		                          (long long)st.st_size, max >> 20);
	} else {
		data = xmalloc((size_t)st.st_size + 1);
		*n = 0;
		ssize_t r;
		while (*n <= (size_t)st.st_size &&
		       (r = read(fd, data + *n, (size_t)st.st_size + 1 - *n)) !=
		           0) {
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				*why = *owned = xasprintf("cannot be read: %s",
				                          strerror(errno));
				free(data);
				data = NULL;
				break;
			}
			*n += (size_t)r;
		}
		if (data && *n > (size_t)st.st_size) {
			*why = "grew while read";
			free(data);
			data = NULL;
		}
	}
	close(fd);
	return data;
}

/* Drain the helper's stdout and stderr until both close or the time
 * is up (then it is killed). */
static int helper_drain(pid_t pid, int out_fd, int err_fd, struct buf *out,
                        struct buf *msg)
{
	struct pollfd p[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
	struct buf *to[2] = {out, msg};
	int64_t deadline = now_ms() + EXP_HELPER_MS;
	char tmp[4096];
	while (p[0].fd >= 0 || p[1].fd >= 0) {
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			kill(pid, SIGKILL);
			return -1;
		}
		if (poll(p, 2, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			kill(pid, SIGKILL);
			return -1;
		}
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			ssize_t r = read(p[i].fd, tmp, sizeof tmp);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				p[i].fd = -1;
				continue;
			}
			buf_append(to[i], tmp,
			           (size_t)r); /* past max: dropped */
		}
	}
	return 0;
}

/* `assay-archive members ARCHIVE DIR MAX NAME...`, waited for; its
 * report ("NAME<TAB>why" lines) into report. */
static int run_members(const char *archive, const char *dir, char **names,
                       int n, struct buf *report, char **err)
{
	char *bin = sbx_archive_helper(), *max = xasprintf("%u", EXP_IMAGE_MAX);
	char **argv = xcalloc((size_t)n + 6, sizeof *argv);
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, rc = -1, status = 0;
	struct buf msg;
	buf_init(&msg, 4096);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (!bin || access(bin, X_OK) < 0) {
		set_err(err,
		        "helper %s not found: reinstall assay (assay-archive "
		        "belongs beside the assay binary) or set "
		        "ASSAY_ARCHIVE_BIN",
		        bin ? bin : "assay-archive");
		goto out;
	}
	argv[0] = bin;
	argv[1] = "members";
	argv[2] = (char *)archive;
	argv[3] = (char *)dir;
	argv[4] = max;
	for (int i = 0; i < n; i++)
		argv[5 + i] = names[i];
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		set_err(err, "pipe: %s", strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	/* it reads what a sandbox made: no secrets in its environment */
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	pid_t pid;
	int e = posix_spawn(&pid, bin, &fa, NULL, argv, envp);
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	if (e) {
		set_err(err, "cannot run %s: %s", bin, strerror(e));
		goto out;
	}
	int timed_out = helper_drain(pid, po[0], pe[0], report, &msg) < 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	while (msg.len && msg.data[msg.len - 1] == '\n')
		msg.data[--msg.len] = '\0';
	if (timed_out)
		set_err(err, "%s took over %d s: stopped", bin,
		        EXP_HELPER_MS / 1000);
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		rc = 0;
	else if (msg.len)
		set_err(err, "%s", buf_str(&msg));
	else
		set_err(err, "%s failed (status %d)", bin, status);
out:
	posix_spawn_file_actions_destroy(&fa);
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	buf_free(&msg);
	free(argv);
	free(max);
	free(bin);
	return rc;
}

/* Where each image comes from, and why one could not be had. */
struct exp_img {
	char *data;
	size_t n;
	const char *why;
	char *why_owned;
};

static void img_why(struct exp_img *im, const char *why, char *owned)
{
	free(im->why_owned);
	im->why = why;
	im->why_owned = owned;
}

/* A name the archive helper takes: components that are neither empty,
 * "." nor "..", and no control character (its report is by lines). */
static int plain_name(const char *p)
{
	for (const unsigned char *c = (const unsigned char *)p; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return 0;
	for (const char *c = p;;) {
		size_t len = strcspn(c, "/");
		if (!len || (len == 1 && c[0] == '.') ||
		    (len == 2 && !strncmp(c, "..", 2)))
			return 0;
		if (!c[len])
			return 1;
		c += len + 1;
	}
}

/* Why the helper did not write name: its "NAME<TAB>why" line, or
 * NULL. */
static char *helper_says(const struct buf *report, const char *name)
{
	size_t len = strlen(name);
	for (const char *l = buf_str(report); *l;) {
		const char *nl = strchr(l, '\n');
		size_t ll = nl ? (size_t)(nl - l) : strlen(l);
		if (ll > len && !strncmp(l, name, len) && l[len] == '\t')
			return xasprintf("%.*s (workspace.tar.gz)",
			                 (int)(ll - len - 1), l + len + 1);
		l += ll + (nl ? 1 : 0);
	}
	return NULL;
}

/* The images not found in a workspace directory, from the run's
 * workspace.tar.gz: extracted by the helper into a private temporary
 * directory, then read from there like a workspace. */
static void images_from_archive(struct exp *x, struct exp_img *im)
{
	char *archive = xasprintf("%s/workspace.tar.gz", x->run_dir);
	char **names = xcalloc(EXP_IMAGES_MAX, sizeof *names);
	char *err = NULL, *dir = NULL;
	struct buf report;
	buf_init(&report, EXP_HELPER_OUT);
	int n = 0;
	struct stat st;
	for (int i = 0; i < x->n_images; i++) {
		if (im[i].data || !safe_rel(x->images[i]))
			continue;
		if (plain_name(x->images[i]))
			names[n++] = x->images[i];
		else
			img_why(&im[i],
			        "not in the workspace, and not a plain name to "
			        "look for in its archive",
			        NULL);
	}
	if (!n)
		goto out;
	if (stat(archive, &st) < 0) {
		for (int i = 0; i < x->n_images; i++)
			if (!im[i].data && im[i].why == exp_not_here)
				img_why(&im[i],
				        "not in the workspace, and the run "
				        "has no workspace.tar.gz to read it "
				        "from",
				        NULL);
		goto out;
	}
	const char *tmp = getenv("TMPDIR");
	dir = xasprintf("%s/assay-export-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		set_err(&err, "%s: %s", dir, strerror(errno));
		free(dir);
		dir = NULL;
	} else {
		run_members(archive, dir, names, n, &report, &err);
	}
	for (int i = 0; i < x->n_images; i++) {
		if (im[i].data || !safe_rel(x->images[i]) ||
		    !plain_name(x->images[i]))
			continue;
		if (err) {
			img_why(&im[i], NULL,
			        xasprintf("not in the workspace, and its "
			                  "archive cannot be read: %s",
			                  err));
			continue;
		}
		const char *why = NULL;
		char *owned = NULL;
		im[i].data = read_below(dir, x->images[i], EXP_IMAGE_MAX,
		                        &im[i].n, &why, &owned);
		if (im[i].data) {
			img_why(&im[i], NULL, NULL);
			free(owned);
			continue;
		}
		char *said = helper_says(&report, x->images[i]);
		if (said) {
			free(owned);
			owned = said;
		}
		img_why(&im[i], owned ? NULL : why, owned);
	}
out:
	if (dir)
		rm_rf(dir);
	free(dir);
	free(err);
	buf_free(&report);
	free(names);
	free(archive);
}

static void embed_images(struct exp *x)
{
	static const unsigned char sig[8] = {0x89, 'P',  'N',  'G',
	                                     '\r', '\n', 0x1a, '\n'};
	if (!x->n_images)
		return;
	x->ops->heading(x, 2, "Images");
	struct exp_img *im = xcalloc((size_t)x->n_images, sizeof *im);
	char *run_ws = xasprintf("%s/workspace", x->run_dir);
	/* the run dir's own first: a copied run dir reads its copy */
	const char *dirs[2] = {run_ws, x->workspace};
	for (int i = 0; i < x->n_images; i++) {
		im[i].why = "path leaves the workspace";
		if (!safe_rel(x->images[i]))
			continue;
		for (int d = 0; d < 2 && !im[i].data; d++) {
			const char *why = NULL;
			char *owned = NULL;
			if (!dirs[d])
				continue;
			im[i].data =
			    read_below(dirs[d], x->images[i], EXP_IMAGE_MAX,
			               &im[i].n, &why, &owned);
			img_why(&im[i], why, owned);
		}
	}
	images_from_archive(x, im);
	for (int i = 0; i < x->n_images; i++) {
		const char *rel = x->images[i];
		if (im[i].data && (im[i].n < 8 || memcmp(im[i].data, sig, 8))) {
			free(im[i].data);
			im[i].data = NULL;
			img_why(&im[i], "not a PNG file", NULL);
		}
		if (im[i].data) {
			x->ops->image(x, rel, (const unsigned char *)im[i].data,
			              im[i].n);
		} else {
			char *note = xasprintf("image %s skipped: %s", rel,
			                       im[i].why_owned ? im[i].why_owned
			                                       : im[i].why);
			x->ops->note(x, note);
			free(note);
		}
		free(im[i].data);
		free(im[i].why_owned);
	}
	free(im);
	free(run_ws);
	if (x->images_dropped) {
		char *note =
		    xasprintf("%d more images not embedded", x->images_dropped);
		x->ops->note(x, note);
		free(note);
	}
}

static void export_usage(FILE *f)
{
	fputs("usage: assay export RUN [--format md|html] [-o FILE]\n"
	      "  RUN is a run directory or its transcript.jsonl; the record "
	      "goes to\n"
	      "  FILE (written atomically) or stdout. [--format md]\n",
	      f);
}

int cmd_export(int argc, char **argv)
{
	const char *run = NULL, *format = "md", *outpath = NULL;
	char *err = NULL, *tpath = NULL;
	int code = 2;
	struct exp x = {0};
	buf_init(&x.out, EXP_OUT_MAX);
	buf_init(&x.call_out, 0);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			export_usage(stdout);
			code = 0;
			goto out;
		} else if (!strcmp(a, "--format") && i + 1 < argc) {
			format = argv[++i];
		} else if (!strncmp(a, "--format=", 9)) {
			format = a + 9;
		} else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) &&
		           i + 1 < argc) {
			outpath = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			set_err(&err,
			        "export: unknown option or missing "
			        "argument: %s (see assay export --help)",
			        a);
			goto out;
		} else if (!run) {
			run = a;
		} else {
			set_err(&err, "export: one RUN only: unexpected '%s'",
			        a);
			goto out;
		}
	}
	if (!strcmp(format, "md"))
		x.ops = &md_ops;
	else if (!strcmp(format, "html"))
		x.ops = &html_ops;
	else {
		set_err(&err, "export: unknown format '%s': use md or html",
		        format);
		goto out;
	}
	if (!run) {
		set_err(&err, "export: which run? (assay export RUN "
		              "--format md|html)");
		goto out;
	}
	struct stat st;
	if (stat(run, &st) < 0) {
		set_err(&err, "export: no run at %s: %s", run, strerror(errno));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		x.run_dir = xstrdup(run);
		tpath = xasprintf("%s/transcript.jsonl", run);
		if (stat(tpath, &st) < 0) {
			set_err(&err,
			        "export: %s has no transcript.jsonl: is "
			        "it a run directory?",
			        run);
			goto out;
		}
	} else {
		tpath = xstrdup(run);
		const char *slash = strrchr(run, '/');
		x.run_dir =
		    slash ? xstrndup(run, (size_t)(slash - run)) : xstrdup(".");
	}
	code = 1;
	char *title = xasprintf("assay run record: %s", tpath);
	x.ops->begin(&x, title);
	free(title);
	if (read_transcript(&x, tpath, &err) < 0)
		goto out;
	embed_images(&x);
	x.ops->end(&x);
	if (x.overflow) {
		set_err(&err,
		        "export: the record would pass %u MiB; not written",
		        EXP_OUT_MAX >> 20);
		goto out;
	}
	if (outpath) {
		if (write_file_atomic(outpath, x.out.data, x.out.len, &err) < 0)
			goto out;
	} else if (fwrite(buf_str(&x.out), 1, x.out.len, stdout) != x.out.len ||
	           fflush(stdout) != 0) {
		set_err(&err, "export: cannot write to stdout: %s",
		        strerror(errno));
		goto out;
	}
	code = 0;
out:
	if (err)
		fprintf(stderr, "assay: %s\n", err);
	free(err);
	free(tpath);
	free(x.run_dir);
	free(x.workspace);
	free(x.call_id);
	for (int i = 0; i < x.n_images; i++)
		free(x.images[i]);
	buf_free(&x.call_out);
	buf_free(&x.out);
	return code;
}
