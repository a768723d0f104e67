/* eval_report.c: an eval's report.html, made from its results.jsonl: one
 * self-contained page (no script: a Content-Security-Policy that allows
 * none, every text escaped) with the table per model, three charts drawn
 * as inline SVG (pass rate per model, cost against pass rate, time per
 * task) and the table of sessions, each linking to its run's exported
 * record (RUN/record.html, written here with `assay export`). The JSON
 * it reads (results.jsonl's records) is not an event. */
#include "assay/buf.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/strv.h"
#include "assay/util.h"
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REP_W 640 /* a chart's width */

struct rmodel {
	const char *name;
	size_t n, pass;
	double cost, *walls;
};

/* s, escaped for HTML text and attributes. */
static void esc(struct buf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '&':
			buf_puts(b, "&amp;");
			break;
		case '<':
			buf_puts(b, "&lt;");
			break;
		case '>':
			buf_puts(b, "&gt;");
			break;
		case '"':
			buf_puts(b, "&quot;");
			break;
		case '\'':
			buf_puts(b, "&#39;");
			break;
		default:
			if (*p < 0x20 && *p != '\n' && *p != '\t')
				buf_puts(b, "?");
			else
				buf_append(b, p, 1);
		}
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The models, in the order they first appear. */
static size_t models_of(const cJSON *rows, struct rmodel *m, size_t max)
{
	size_t n = 0;
	const cJSON *r;
	cJSON_ArrayForEach(r, rows)
	{
		const char *name = json_str(r, "model", "?");
		size_t k = 0;
		while (k < n && strcmp(m[k].name, name))
			k++;
		if (k == n) {
			if (n == max)
				continue;
			m[n].name = name;
			m[n].walls = xcalloc((size_t)cJSON_GetArraySize(rows),
			                     sizeof(double));
			n++;
		}
		m[k].walls[m[k].n++] = json_num(r, "wall_ms", 0) / 1000;
		m[k].pass += json_bool(r, "pass", 0);
		m[k].cost += json_num(r, "cost_usd", 0);
	}
	return n;
}

/* Pass rate per model: a bar each. */
static void chart_pass(struct buf *b, const struct rmodel *m, size_t n)
{
	int row = 28, h = (int)n * row + 30;
	buf_printf(b,
	           "<h2>Pass rate per model</h2>\n<svg class=\"chart\" "
	           "id=\"pass-rate\" width=\"%d\" height=\"%d\" "
	           "xmlns=\"http://www.w3.org/2000/svg\">\n",
	           REP_W, h);
	for (size_t i = 0; i < n; i++) {
		double rate = m[i].n ? (double)m[i].pass / (double)m[i].n : 0;
		int y = 10 + (int)i * row, w = (int)(rate * (REP_W - 260));
		buf_printf(b, "<text x=\"0\" y=\"%d\">", y + 16);
		esc(b, m[i].name);
		buf_printf(b,
		           "</text><rect x=\"180\" y=\"%d\" width=\"%d\" "
		           "height=\"20\" fill=\"#2f81f7\"/><text x=\"%d\" "
		           "y=\"%d\">%.0f%%</text>\n",
		           y, w > 0 ? w : 1, 186 + w, y + 16, rate * 100);
	}
	buf_puts(b, "</svg>\n");
}

/* Cost against pass rate: a point per model. */
static void chart_cost(struct buf *b, const struct rmodel *m, size_t n)
{
	double most = 0;
	for (size_t i = 0; i < n; i++)
		most = m[i].cost > most ? m[i].cost : most;
	int w = REP_W, h = 260, l = 60, bot = 220;
	buf_printf(b,
	           "<h2>Cost against pass rate</h2>\n<svg class=\"chart\" "
	           "id=\"cost-pass\" width=\"%d\" height=\"%d\" "
	           "xmlns=\"http://www.w3.org/2000/svg\">\n"
	           "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
	           "stroke=\"#57606a\"/><line x1=\"%d\" y1=\"10\" x2=\"%d\" "
	           "y2=\"%d\" stroke=\"#57606a\"/>\n"
	           "<text x=\"%d\" y=\"%d\">total cost, $ (0 to %.4f)</text>"
	           "<text x=\"0\" y=\"20\">100%%</text><text x=\"0\" "
	           "y=\"%d\">0%%</text>\n",
	           w, h, l, bot, w - 10, bot, l, l, bot, l, bot + 30, most,
	           bot);
	for (size_t i = 0; i < n; i++) {
		double rate = m[i].n ? (double)m[i].pass / (double)m[i].n : 0;
		int x = l + 10 +
		        (int)(most > 0 ? m[i].cost / most * (w - l - 140) : 0);
		int y = bot - (int)(rate * (bot - 20));
		buf_printf(b,
		           "<circle cx=\"%d\" cy=\"%d\" r=\"7\" "
		           "fill=\"#cf222e\"/><text x=\"%d\" y=\"%d\">",
		           x, y, x + 10, y + 5);
		esc(b, m[i].name);
		buf_puts(b, "</text>\n");
	}
	buf_puts(b, "</svg>\n");
}

/* Time per task: the median over its sessions, a bar each. */
static void chart_time(struct buf *b, const cJSON *rows)
{
	size_t nr = (size_t)cJSON_GetArraySize(rows), nt = 0;
	const char **names = xcalloc(nr + 1, sizeof *names);
	double *med = xcalloc(nr + 1, sizeof *med), most = 0;
	double *v = xcalloc(nr + 1, sizeof *v);
	const cJSON *r, *q;
	cJSON_ArrayForEach(r, rows)
	{
		const char *t = json_str(r, "task", "?");
		size_t k = 0, c = 0;
		while (k < nt && strcmp(names[k], t))
			k++;
		if (k < nt)
			continue;
		cJSON_ArrayForEach(
		    q, rows) if (!strcmp(json_str(q, "task", ""), t)) v[c++] =
		    json_num(q, "wall_ms", 0) / 1000;
		names[nt] = t;
		med[nt] = median(v, c);
		most = med[nt] > most ? med[nt] : most;
		nt++;
	}
	int row = 24, h = (int)nt * row + 20;
	buf_printf(b,
	           "<h2>Time per task (median, s)</h2>\n<svg class=\"chart\" "
	           "id=\"time-task\" width=\"%d\" height=\"%d\" "
	           "xmlns=\"http://www.w3.org/2000/svg\">\n",
	           REP_W, h);
	for (size_t i = 0; i < nt; i++) {
		int y = 6 + (int)i * row;
		int w = most > 0 ? (int)(med[i] / most * (REP_W - 280)) : 0;
		buf_printf(b, "<text x=\"0\" y=\"%d\">", y + 14);
		esc(b, names[i]);
		buf_printf(b,
		           "</text><rect x=\"200\" y=\"%d\" width=\"%d\" "
		           "height=\"16\" fill=\"#1a7f37\"/><text x=\"%d\" "
		           "y=\"%d\">%.1f</text>\n",
		           y, w > 0 ? w : 1, 206 + w, y + 14, med[i]);
	}
	buf_puts(b, "</svg>\n");
	free(names);
	free(med);
	free(v);
}

/* Each session's record, exported beside its run (failures said in the
 * table: no link). */
static int export_record(const char *run_dir)
{
	char *tr = xasprintf("%s/transcript.jsonl", run_dir);
	char *out = xasprintf("%s/record.html", run_dir);
	int ok = access(tr, R_OK) == 0;
	if (ok) {
		char *argv[] = {
		    "export", (char *)run_dir, "--format", "html", "-o", out,
		    NULL};
		ok = cmd_export(6, argv) == 0;
	}
	free(tr);
	free(out);
	return ok;
}

/* The sandbox images the sessions ran on, each with how many ran on
 * it: runs compared across image updates show two rows. */
static void images_table(struct buf *b, const cJSON *rows)
{
	struct strv seen;
	size_t count[64] = {0};
	memset(&seen, 0, sizeof seen);
	const cJSON *r;
	cJSON_ArrayForEach(r, rows)
	{
		/* results.jsonl's "sandbox" is run_start's, read as such */
		const cJSON *sb = cJSON_GetObjectItem(r, "sandbox");
		char *id = ev_image_text(sb);
		char *key = sb ? xasprintf("%s (image %s)%s%s",
		                           ev_str(sb, EVF_BACKEND, "?"),
		                           ev_str(sb, EVF_IMAGE, "?"),
		                           id ? ": " : "", id ? id : "")
		               : xstrdup("not recorded (a result of an "
		                         "older assay)");
		free(id);
		size_t k = 0;
		while (k < seen.n && strcmp(seen.v[k], key))
			k++;
		if (k == seen.n && k < 64)
			strv_push(&seen, key);
		if (k < 64)
			count[k]++;
		free(key);
	}
	buf_puts(b, "<h2>Sandbox images</h2>\n<table id=\"images\"><tr><th>"
	            "sandbox and image</th><th>sessions</th></tr>\n");
	for (size_t k = 0; k < seen.n; k++) {
		buf_puts(b, "<tr><td>");
		esc(b, seen.v[k]);
		buf_printf(b, "</td><td>%zu</td></tr>\n", count[k]);
	}
	buf_puts(b, "</table>\n");
	strv_free(&seen);
}

static void sessions_table(struct buf *b, const cJSON *rows, const char *dir)
{
	buf_puts(b,
	         "<h2>Sessions</h2>\n<table id=\"sessions\"><tr><th>task"
	         "</th><th>model</th><th>repeat</th><th>result</th><th>"
	         "category</th><th>reason</th><th>turns</th><th>tokens"
	         "</th><th>cost $</th><th>time s</th><th>record</th></tr>\n");
	size_t dl = strlen(dir);
	const cJSON *r;
	cJSON_ArrayForEach(r, rows)
	{
		int pass = json_bool(r, "pass", 0);
		const char *run = json_str(r, "run_dir", "");
		buf_puts(b, "<tr><td>");
		esc(b, json_str(r, "task", ""));
		buf_puts(b, "</td><td>");
		esc(b, json_str(r, "model", ""));
		buf_printf(b, "</td><td>%.0f</td><td class=\"%s\">%s</td><td>",
		           json_num(r, "repeat", 1), pass ? "pass" : "fail",
		           pass ? "pass" : "FAIL");
		esc(b, json_str(r, "category", ""));
		buf_puts(b, "</td><td class=\"reason\">");
		esc(b, json_str(r, "reason", ""));
		buf_printf(b,
		           "</td><td>%.0f</td><td>%.0f</td><td>%.4f</td>"
		           "<td>%.1f</td><td>",
		           json_num(r, "turns", 0),
		           json_num(r, "input_tokens", 0) +
		               json_num(r, "output_tokens", 0),
		           json_num(r, "cost_usd", 0),
		           json_num(r, "wall_ms", 0) / 1000);
		/* the link is relative: the eval's directory moves whole */
		if (*run && export_record(run)) {
			const char *rel =
			    strncmp(run, dir, dl) == 0 && run[dl] == '/'
			        ? run + dl + 1
			        : run;
			buf_puts(b, "<a href=\"");
			esc(b, rel);
			buf_puts(b, "/record.html\">record</a>");
		} else {
			buf_puts(b, "none");
		}
		buf_puts(b, "</td></tr>\n");
	}
	buf_puts(b, "</table>\n");
}

int eval_report(const char *dir, const char *title, char **err)
{
	char *rpath = xasprintf("%s/results.jsonl", dir);
	size_t len = 0;
	char *text = read_file_max(rpath, 64u << 20, &len, err);
	free(rpath);
	if (!text)
		return -1;
	cJSON *rows = cJSON_CreateArray();
	for (char *line = text, *nl; *line; line = nl) {
		nl = line + strcspn(line, "\n");
		if (*nl)
			*nl++ = '\0';
		cJSON *r = cJSON_Parse(line);
		if (r)
			cJSON_AddItemToArray(rows, r);
	}
	free(text);
	struct rmodel m[64];
	memset(m, 0, sizeof m);
	size_t nm = models_of(rows, m, 64);
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
	             "<meta http-equiv=\"Content-Security-Policy\" "
	             "content=\"default-src 'none'; style-src 'unsafe-inline'"
	             "; img-src data:\">\n<title>");
	esc(&b, title);
	buf_puts(&b, "</title>\n<style>body{font:14px sans-serif;margin:24px;"
	             "color:#1f2328;background:#fff}table{border-collapse:"
	             "collapse}td,th{border:1px solid #d0d7de;padding:3px 8px;"
	             "text-align:left}.pass{color:#1a7f37}.fail{color:#cf222e}"
	             ".reason{max-width:420px}svg text{font:12px sans-serif;"
	             "fill:#1f2328}</style>\n</head><body>\n<h1>");
	esc(&b, title);
	buf_puts(&b, "</h1>\n<table id=\"models\"><tr><th>model</th><th>passed"
	             "</th><th>pass rate</th><th>median time s</th><th>cost $"
	             "</th><th>per task $</th></tr>\n");
	for (size_t i = 0; i < nm; i++) {
		double rate = m[i].n ? (double)m[i].pass / (double)m[i].n : 0;
		double med = median(m[i].walls, m[i].n);
		buf_puts(&b, "<tr><td>");
		esc(&b, m[i].name);
		buf_printf(&b,
		           "</td><td>%zu/%zu</td><td>%.0f%%</td><td>%.1f</td>"
		           "<td>%.4f</td><td>%.4f</td></tr>\n",
		           m[i].pass, m[i].n, rate * 100, med, m[i].cost,
		           m[i].n ? m[i].cost / (double)m[i].n : 0.0);
	}
	buf_puts(&b, "</table>\n");
	chart_pass(&b, m, nm);
	chart_cost(&b, m, nm);
	chart_time(&b, rows);
	images_table(&b, rows);
	sessions_table(&b, rows, dir);
	buf_puts(&b, "</body></html>\n");
	for (size_t i = 0; i < nm; i++)
		free(m[i].walls);
	char *out = xasprintf("%s/report.html", dir);
	int rc = write_file_atomic(out, b.data, b.len, err);
	free(out);
	buf_free(&b);
	cJSON_Delete(rows);
	return rc;
}
