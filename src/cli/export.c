/* export.c: `assay export RUN --format md|html|ipynb|script`: a
 * readable record of a recorded run (conversation, tool calls,
 * approvals, outputs, tokens), built from its transcript.jsonl by a walk
 * that dispatches each event by type; the formats are in export_write.c,
 * the HTML and the notebook embed the workspace's PNG images
 * (export_images.c), and the notebook and the script (the analysis to
 * take away) are built by export_nb.c from the same walk. */
#include "cli.h"
#include "export.h"

#include "assay/buf.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/sandbox.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- events ---- */

/* The string member f of o, or def when it is missing or empty. */
static const char *exp_str_or(const cJSON *o, enum ev_field f, const char *def)
{
	const char *s = ev_str(o, f, NULL);
	return s && *s ? s : def;
}

/* A "label: N" item. */
static void exp_item_num(struct exp *x, const char *label, double v)
{
	char *s = xasprintf("%.0f", v);
	x->ops->item(x, label, s);
	free(s);
}

/* A JSON array of strings or {src,dest} objects as "a, b -> c". */
static char *exp_list_text(const cJSON *arr)
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
			buf_puts(&b, exp_str_or(e, EVF_SRC, "?"));
			buf_puts(&b, " -> ");
			buf_puts(&b, exp_str_or(e, EVF_DEST, "?"));
		}
	}
	return b.len ? buf_detach(&b) : (buf_free(&b), xstrdup("(none)"));
}

/* The "Run" section (who, where, what it was given), then the
 * conversation begins; keeps the host workspace to read images from. */
static void exp_on_run_start(struct exp *x, const cJSON *e)
{
	const struct exp_ops *o = x->ops;
	o->heading(x, 2, "Run");
	o->item(x, "run id", exp_str_or(e, EVF_RUN_ID, "?"));
	char *pm = xasprintf("%s / %s", exp_str_or(e, EVF_PROVIDER, "?"),
	                     exp_str_or(e, EVF_MODEL, "?"));
	o->item(x, "provider / model", pm);
	free(pm);
	const cJSON *sb = ev_item(e, EVF_SANDBOX);
	char *s = xasprintf("%s (image %s)", exp_str_or(sb, EVF_BACKEND, "?"),
	                    exp_str_or(sb, EVF_IMAGE, "-"));
	o->item(x, "sandbox", s);
	free(s);
	/* what identifies the image: to reproduce the run, to compare runs
	 * across image updates */
	if ((s = ev_image_text(sb)))
		o->item(x, "image id", s);
	free(s);
	const char *ws = ev_str(e, EVF_WORKSPACE, NULL);
	if (ws && ws[0] == '/' &&
	    (sbx_backend_caps(exp_str_or(sb, EVF_BACKEND, "")) &
	     SBX_CAP_HOST_WORKSPACE)) {
		free(x->workspace);
		x->workspace = xstrdup(ws);
	}
	o->item(x, "approval mode", exp_str_or(e, EVF_ASK, "?"));
	o->item(x, "version", exp_str_or(e, EVF_VERSION, "?"));
	s = exp_list_text(ev_item(e, EVF_INPUTS));
	o->item(x, "inputs", s);
	free(s);
	s = exp_list_text(ev_item(e, EVF_OUTPUTS));
	o->item(x, "declared outputs", s);
	free(s);
	o->heading(x, 2, "Conversation");
}

/* A resume on another image than the run had says so where it goes
 * on. */
static void exp_on_run_resume(struct exp *x, const cJSON *e)
{
	char *s = ev_image_change_text(ev_item(e, EVF_SANDBOX));
	if (s)
		x->ops->note(x, s);
	free(s);
}

/* The command, code or path a tool call carries, as readable text. */
static char *exp_call_body(const cJSON *args)
{
	const char *v;
	/* the tool's own arguments, not an event's fields */
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

/* Start gathering the output of call id (NULL: none). */
static void exp_call_reset(struct exp *x, const char *id)
{
	free(x->call_id);
	x->call_id = id ? xstrdup(id) : NULL;
	buf_reset(&x->call_out);
	x->call_cut = 0;
	x->call_had_exec = 0;
}

/* Keep up to EXP_CALL_OUT_MAX bytes of a call's output, cut on a
 * character boundary. */
static void exp_call_gather(struct exp *x, const char *text, int truncated)
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

/* A tool call: its heading and what it runs. */
static void exp_on_tool_call(struct exp *x, const cJSON *e)
{
	const char *id = exp_str_or(e, EVF_ID, "?");
	exp_call_reset(x, id);
	char *h =
	    xasprintf("Tool call: %s (%s)", exp_str_or(e, EVF_NAME, "?"), id);
	x->ops->heading(x, 3, h);
	free(h);
	char *body = exp_call_body(ev_item(e, EVF_ARGUMENTS));
	x->ops->code(x, body);
	free(body);
}

/* How a call was decided, and what ran if it was edited. */
static void exp_on_approval(struct exp *x, const cJSON *e)
{
	const char *by = exp_str_or(e, EVF_BY, "?");
	const cJSON *rule = ev_item(e, EVF_RULE);
	char *s = xasprintf("%s by %s%s%s", exp_str_or(e, EVF_DECISION, "?"),
	                    by, cJSON_IsString(rule) ? ", rule " : "",
	                    cJSON_IsString(rule) ? rule->valuestring : "");
	x->ops->item(x, "approval", s);
	free(s);
	const char *orig = ev_str(e, EVF_ORIGINAL, NULL);
	const char *fin = ev_str(e, EVF_FINAL, NULL);
	if (orig && fin && strcmp(orig, fin)) {
		x->ops->note(x, "edited before running; what ran:");
		x->ops->code(x, fin);
	}
	const char *fb = ev_str(e, EVF_FEEDBACK, NULL);
	if (fb && *fb)
		x->ops->item(x, "feedback", fb);
}

/* A chunk of a command's output, gathered for its exec_end. */
static void exp_on_exec_output(struct exp *x, const cJSON *e)
{
	const char *id = ev_str(e, EVF_ID, "");
	if (!x->call_id || strcmp(id, x->call_id))
		exp_call_reset(x, id);
	x->call_had_exec = 1;
	const char *text = ev_str(e, EVF_TEXT, "");
	double bytes = ev_num(e, EVF_BYTES, 0);
	exp_call_gather(x, text, bytes > (double)strlen(text));
}

/* The gathered output, with a note when it was cut (where: the
 * file that holds all of it). */
static void exp_show_output(struct exp *x, const char *where)
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

/* How a command ended, then its output. */
static void exp_on_exec_end(struct exp *x, const cJSON *e)
{
	char *s = xasprintf(
	    "exit code %.0f%s%s, %.0f ms", ev_num(e, EVF_EXIT_CODE, -1),
	    ev_bool(e, EVF_TIMED_OUT, 0) ? ", timed out" : "",
	    ev_num(e, EVF_SIGNAL, 0) ? ", killed by a signal" : "",
	    ev_num(e, EVF_DURATION_MS, 0));
	x->ops->item(x, "result", s);
	free(s);
	exp_show_output(x, ev_str(e, EVF_OUTPUT_FILE, NULL));
}

/* A tool's result, unless it is the output already shown. */
static void exp_on_tool_result(struct exp *x, const cJSON *e)
{
	const char *id = ev_str(e, EVF_ID, "");
	int is_err = ev_bool(e, EVF_IS_ERROR, 0);
	if (x->call_id && !strcmp(id, x->call_id) && x->call_had_exec &&
	    !is_err) {
		exp_call_reset(x, NULL);
		return; /* the exec output already shown is what was sent */
	}
	exp_call_reset(x, id);
	exp_call_gather(x, ev_str(e, EVF_CONTENT, ""), 0);
	x->ops->item(x, is_err ? "tool error" : "tool result", "");
	exp_show_output(x, NULL);
	exp_call_reset(x, NULL);
}

/* An image sent to the model (or refused), at its step. */
static void exp_on_image_sent(struct exp *x, const cJSON *e)
{
	struct exp_sent s;
	exp_sent_load(x, e, &s);
	x->ops->sent(x, &s);
	exp_sent_free(&s);
}

/* The tokens and cost of a turn. */
static void exp_on_usage(struct exp *x, const cJSON *e)
{
	/* older records have no "priced": their cost was never known */
	int priced = ev_bool(e, EVF_KNOWN, 1) && ev_bool(e, EVF_PRICED, 0);
	char cost[64];
	if (priced)
		snprintf(cost, sizeof cost, "$%.4f",
		         ev_num(e, EVF_COST_USD, 0));
	else
		snprintf(cost, sizeof cost, "unknown");
	char *s =
	    xasprintf("%s %.0f: %.0f in, %.0f out (%.0f cached); cost %s",
	              ev_item(e, EVF_OF) ? "compaction after turn" : "turn",
	              ev_num(e, EVF_TURN, 0), ev_num(e, EVF_INPUT_TOKENS, 0),
	              ev_num(e, EVF_OUTPUT_TOKENS, 0),
	              ev_num(e, EVF_CACHED_TOKENS, 0), cost);
	x->ops->item(x, "tokens", s);
	free(s);
}

/* A file the run changed; a PNG is kept to embed. */
static void exp_on_workspace_change(struct exp *x, const cJSON *e)
{
	const char *path = ev_str(e, EVF_PATH, NULL);
	const char *kind = exp_str_or(e, EVF_KIND, "?");
	if (!path)
		return;
	char *s =
	    xasprintf("%s %s (%.0f bytes)", kind, path, ev_num(e, EVF_SIZE, 0));
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

/* The "End of run" section: status, totals, each declared output. */
static void exp_on_run_end(struct exp *x, const cJSON *e)
{
	const struct exp_ops *o = x->ops;
	o->heading(x, 2, "End of run");
	o->item(x, "status", exp_str_or(e, EVF_STATUS, "?"));
	const cJSON *t = ev_item(e, EVF_TOTALS);
	exp_item_num(x, "turns", ev_num(t, EVF_TURNS, 0));
	char *s = xasprintf("%.0f in, %.0f out", ev_num(t, EVF_INPUT_TOKENS, 0),
	                    ev_num(t, EVF_OUTPUT_TOKENS, 0));
	o->item(x, "tokens in total", s);
	free(s);
	double cost = ev_num(t, EVF_COST_USD, 0);
	int unpriced = ev_int(t, EVF_UNPRICED_TURNS, 0);
	s = unpriced && cost <= 0 ? xstrdup("unknown (no price for the model)")
	    : unpriced  ? xasprintf("$%.4f + %d turn%s of unknown cost", cost,
	                            unpriced, unpriced == 1 ? "" : "s")
	    : cost <= 0 ? xstrdup("$0")
	                : xasprintf("$%.4f", cost);
	o->item(x, "cost", s);
	free(s);
	s = xasprintf("%.1f s", ev_num(t, EVF_DURATION_MS, 0) / 1000.0);
	o->item(x, "duration", s);
	free(s);
	const cJSON *out;
	cJSON_ArrayForEach(out, ev_item(e, EVF_OUTPUTS))
	{
		int present = ev_bool(out, EVF_PRESENT, 0);
		s = present ? xasprintf("%s (%.0f bytes) -> %s",
		                        exp_str_or(out, EVF_PATH, "?"),
		                        ev_num(out, EVF_BYTES, 0),
		                        exp_str_or(out, EVF_COPIED_TO, "-"))
		            : xasprintf("%s MISSING",
		                        exp_str_or(out, EVF_PATH, "?"));
		o->item(x, "output", s);
		free(s);
	}
}

/* A message from the user. */
static void exp_on_user_message(struct exp *x, const cJSON *e)
{
	x->ops->heading(x, 3, "User");
	x->ops->text(x, ev_str(e, EVF_TEXT, ""));
}

/* The model's text of a turn. */
static void exp_on_assistant_message(struct exp *x, const cJSON *e)
{
	char *h = xasprintf("Assistant (turn %.0f)", ev_num(e, EVF_TURN, 0));
	x->ops->heading(x, 3, h);
	free(h);
	const char *t = ev_str(e, EVF_TEXT, "");
	if (*t)
		x->ops->text(x, t);
}

/* The history trimmed (a note) or compacted (the summary, under its own
 * heading: what the model was sent from then on). */
static void exp_on_context(struct exp *x, const cJSON *e)
{
	const char *state = ev_str(e, EVF_STATE, NULL);
	char *s = NULL;
	if (!state) {
		s = xasprintf("context: %d old tool results elided from the "
		              "history sent (%.0f KB)",
		              cJSON_GetArraySize(ev_item(e, EVF_IDS)),
		              ev_num(e, EVF_BYTES, 0) / 1024);
		x->ops->note(x, s);
	} else if (!strcmp(state, "done")) {
		s = xasprintf("Compaction after turn %.0f (%s)",
		              ev_num(e, EVF_TURN, 0),
		              exp_str_or(e, EVF_REASON, ""));
		x->ops->heading(x, 3, s);
		free(s);
		s = xasprintf("%.0f earlier messages replaced by this summary "
		              "(about %.0f -> %.0f tokens)",
		              ev_num(e, EVF_REPLACED, 0),
		              ev_num(e, EVF_EST_BEFORE, 0),
		              ev_num(e, EVF_EST_AFTER, 0));
		x->ops->note(x, s);
		x->ops->text(x, ev_str(e, EVF_SUMMARY, ""));
	} else if (!strcmp(state, "failed")) {
		s = xasprintf("compaction failed: %s",
		              exp_str_or(e, EVF_MESSAGE, ""));
		x->ops->note(x, s);
	}
	free(s);
}

/* A failure during the run, as a note. */
static void exp_on_error(struct exp *x, const cJSON *e)
{
	char *s = xasprintf("error (%s): %s", exp_str_or(e, EVF_CATEGORY, "?"),
	                    exp_str_or(e, EVF_MESSAGE, ""));
	x->ops->note(x, s);
	free(s);
}

/* What each event type adds to the record; a type without an entry
 * adds nothing. */
static void (*const exp_handlers[EV__COUNT])(struct exp *, const cJSON *) = {
    [EV_RUN_START] = exp_on_run_start,
    [EV_RUN_RESUME] = exp_on_run_resume,
    [EV_USER_MESSAGE] = exp_on_user_message,
    [EV_ASSISTANT_MESSAGE] = exp_on_assistant_message,
    [EV_USAGE] = exp_on_usage,
    [EV_TOOL_CALL] = exp_on_tool_call,
    [EV_APPROVAL] = exp_on_approval,
    [EV_EXEC_OUTPUT] = exp_on_exec_output,
    [EV_EXEC_END] = exp_on_exec_end,
    [EV_TOOL_RESULT] = exp_on_tool_result,
    [EV_WORKSPACE_CHANGE] = exp_on_workspace_change,
    [EV_IMAGE_SENT] = exp_on_image_sent,
    [EV_ERROR] = exp_on_error,
    [EV_CONTEXT_TRIM] = exp_on_context,
    [EV_COMPACTION] = exp_on_context,
    [EV_RUN_END] = exp_on_run_end,
};

/* One event of the transcript into the record. */
static void exp_event(struct exp *x, const cJSON *e)
{
	enum event_type t = event_type_of(e);
	if (x->nb)
		exp_nb_event(x, e);
	if (exp_handlers[t])
		exp_handlers[t](x, e);
}

/* One line of at most EXP_LINE_MAX bytes into b (without the newline).
 * Returns 1 with a line, 0 at EOF, -1 if too long. *nl says whether the
 * line ended with a newline (a crashed run leaves a last one without). */
static int exp_read_line(FILE *f, struct buf *b, int *nl)
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

/* Every event of the transcript at path into the record; a line
 * that is not JSON becomes a note, a line too long an error. */
static int exp_read_transcript(struct exp *x, const char *path, char **err)
{
	FILE *f = fopen_regular(path, O_RDONLY | O_NOFOLLOW, 0, err);
	if (!f)
		return -1;
	struct buf line;
	buf_init(&line, EXP_LINE_MAX);
	int rc = -1, r, nl;
	unsigned long no = 0;
	while ((r = exp_read_line(f, &line, &nl)) > 0) {
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
			exp_event(x, e);
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

/* assay export --help. */
static void export_usage(FILE *f)
{
	fputs("usage: assay export RUN [--format md|html|ipynb|script] [-o "
	      "FILE]\n"
	      "  RUN is a run directory or its transcript.jsonl; the export "
	      "goes to\n"
	      "  FILE (written atomically) or stdout. [--format md]\n"
	      "  md, html: the record to read; ipynb: a Jupyter notebook of "
	      "the calls\n"
	      "  with their outputs; script: one Python file that replays "
	      "the calls\n"
	      "  safe on a host in workspace/ beside itself (see its --help)."
	      "\n"
	      "  Both leave out, as comments with the reason, every call that "
	      "was\n"
	      "  denied or failed or that the policy would ask about "
	      "(deletes,\n"
	      "  network, paths outside the workspace...): an approval in the "
	      "run\n"
	      "  was for its sandbox.\n",
	      f);
}

/* The options and the RUN, in any order (`--` ends the options): 0, 1
 * after --help, -1 + *err on a usage error. */
static int export_args(int argc, char **argv, const char **run,
                       const char **format, const char **outpath, char **err)
{
	int operands = 0; /* after --: every word is one */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!operands && !strcmp(a, "--")) {
			operands = 1;
		} else if (operands) {
			if (*run) {
				set_err(err,
				        "export: one RUN only: "
				        "unexpected '%s'",
				        a);
				return -1;
			}
			*run = a;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			export_usage(stdout);
			return 1;
		} else if (!strcmp(a, "--format") && i + 1 < argc) {
			*format = argv[++i];
		} else if (!strncmp(a, "--format=", 9)) {
			*format = a + 9;
		} else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) &&
		           i + 1 < argc) {
			*outpath = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			set_err(err,
			        "export: unknown option or missing "
			        "argument: %s (see assay export --help)",
			        a);
			return -1;
		} else if (!*run) {
			*run = a;
		} else {
			set_err(err, "export: one RUN only: unexpected '%s'",
			        a);
			return -1;
		}
	}
	return 0;
}

int cmd_export(int argc, char **argv)
{
	const char *run = NULL, *format = "md", *outpath = NULL;
	char *err = NULL, *tpath = NULL;
	int code = 2;
	struct exp x = {0};
	buf_init(&x.out, EXP_OUT_MAX);
	buf_init(&x.call_out, 0);
	int a = export_args(argc, argv, &run, &format, &outpath, &err);
	if (a) {
		code = a > 0 ? 0 : 2;
		goto out;
	}
	if (!strcmp(format, "md"))
		x.ops = &exp_md_ops;
	else if (!strcmp(format, "html"))
		x.ops = &exp_html_ops;
	else if (!strcmp(format, "ipynb") || !strcmp(format, "script")) {
		x.ops = &exp_nb_ops;
		exp_nb_new(&x, !strcmp(format, "script"));
	} else {
		set_err(&err,
		        "export: unknown format '%s': use md, html, ipynb or "
		        "script",
		        format);
		goto out;
	}
	if (!run) {
		set_err(&err, "export: which run? (assay export RUN "
		              "--format md|html|ipynb|script)");
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
		if (lstat(tpath, &st) < 0) { /* a link: refused by name */
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
	if (outpath) /* a link from the record's own place */
		x.link_dir = realpath(x.run_dir, NULL);
	code = 1;
	char *title = xasprintf("assay run record: %s", tpath);
	x.ops->begin(&x, title);
	free(title);
	if (exp_read_transcript(&x, tpath, &err) < 0)
		goto out;
	if (!x.nb || !strcmp(format, "ipynb"))
		exp_embed_images(&x);
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
	free(x.link_dir);
	free(x.workspace);
	free(x.call_id);
	for (int i = 0; i < x.n_images; i++)
		free(x.images[i]);
	exp_nb_free(&x);
	buf_free(&x.call_out);
	buf_free(&x.out);
	return code;
}
