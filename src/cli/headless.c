/* headless.c: the observer for `assay run`: readable progress on
 * stderr (streamed text, each tool call with its command, exit code and
 * duration, retries, a final summary), or with --json every event as a
 * JSON line on stdout. Events are dispatched by type through one table;
 * untrusted text goes through term_clean before it is printed. */
#include "cli.h"

#include "assay/events.h"
#include "assay/json.h"
#include "assay/termtext.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct headless {
	int json;
	int color;
	int in_text;         /* the last thing printed was streamed text */
	int cached;          /* the turn's answer came from the cache */
	int64_t progress_ms; /* the last progress line (elapsed_ms) */
	char *mcp_over;      /* the MCP call whose progress reached its end */
};

/* A terminal-safe copy of an untrusted string (paths, errors, ids). */
static char *hl_clean(const char *s)
{
	if (!s)
		s = "";
	return term_clean(s, strlen(s),
	                  TERM_CLEAN_NEWLINES | TERM_CLEAN_KEEP_TABS);
}

/* Print untrusted text on stderr, cleaned. */
static void hl_put(const char *s)
{
	char *clean = hl_clean(s);
	fputs(clean, stderr);
	free(clean);
}

/* The first line of s, at most max bytes of it (a whole character),
 * cleaned; "..." when there was more. */
static void hl_put_line(const char *s, size_t max)
{
	size_t n = strcspn(s, "\n");
	size_t keep = n > max ? utf8_complete_prefix(s, max) : n;
	char *cut = xstrndup(s, keep);
	hl_put(cut);
	free(cut);
	if (s[keep])
		fputs(" ...", stderr);
}

/* An SGR code when stderr takes colour, else nothing. */
static const char *hl_sgr(const struct headless *h, const char *code)
{
	return h->color ? code : "";
}

/* End a line of streamed text before anything else is printed. */
static void hl_end_text(struct headless *h)
{
	if (h->in_text)
		fputc('\n', stderr);
	h->in_text = 0;
}

/* The first line of s into out (at most max bytes), "..." when cut. */
static void hl_first_line(const char *s, char *out, size_t max)
{
	size_t n = strcspn(s, "\n");
	if (n >= max)
		n = max - 4;
	memcpy(out, s, n);
	out[n] = '\0';
	if (s[n] || n < strcspn(s, "\n"))
		strcat(out, "...");
}

/* run_start and run_resume: "assay run ID: provider/model, ...". */
static void hl_print_start(struct headless *h, const char *line)
{
	fprintf(stderr, "%sassay%s", hl_sgr(h, "\033[1m"),
	        hl_sgr(h, "\033[0m"));
	hl_put(line);
}

/* A resume or re-execute on another image than the run had: a warning
 * line naming both ids. */
static void hl_image_changed(struct headless *h, const cJSON *ev)
{
	char *s = ev_image_change_text(ev_item(ev, EVF_SANDBOX));
	if (!s)
		return;
	fprintf(stderr, "%swarning%s: ", hl_sgr(h, "\033[33m"),
	        hl_sgr(h, "\033[0m"));
	hl_put(s);
	fputc('\n', stderr);
	free(s);
}

/* A resumed run: where the record is picked up. */
static void hl_run_resume(struct headless *h, const cJSON *ev)
{
	const cJSON *from = ev_item(ev, EVF_RESUMED_FROM);
	char *line = xasprintf(
	    " resuming run %s (recorded up to event %.0f, %s): %s/%s, "
	    "sandbox %s\n",
	    ev_str(ev, EVF_RUN_ID, ""), ev_num(from, EVF_SEQ, 0),
	    ev_str(from, EVF_STATUS, "?"), ev_str(ev, EVF_PROVIDER, ""),
	    ev_str(ev, EVF_MODEL, ""),
	    ev_str(ev_item(ev, EVF_SANDBOX), EVF_BACKEND, ""));
	hl_print_start(h, line);
	free(line);
	hl_image_changed(h, ev);
}

/* The run: its id, provider and model, sandbox, run dir. */
static void hl_run_start(struct headless *h, const cJSON *ev)
{
	char *line =
	    xasprintf(" run %s: %s/%s, sandbox %s, run dir %s\n",
	              ev_str(ev, EVF_RUN_ID, ""), ev_str(ev, EVF_PROVIDER, ""),
	              ev_str(ev, EVF_MODEL, ""),
	              ev_str(ev_item(ev, EVF_SANDBOX), EVF_BACKEND, ""),
	              ev_str(ev, EVF_RUN_DIR, ""));
	hl_print_start(h, line);
	free(line);
	hl_image_changed(h, ev);
}

/* A turn answered from the cache says so (nothing was sent). */
static void hl_model_request(struct headless *h, const cJSON *ev)
{
	h->cached = ev_bool(ev, EVF_CACHED, 0);
	if (!h->cached)
		return;
	hl_end_text(h);
	fprintf(stderr,
	        "%s[turn %.0f: answer from the cache, nothing sent]%s\n",
	        hl_sgr(h, "\033[2m"), ev_num(ev, EVF_TURN, 0),
	        hl_sgr(h, "\033[0m"));
}

/* The history was trimmed or compacted: one dim line each, so a long
 * session says what it did to fit the model's context window. */
static void hl_context(struct headless *h, const cJSON *ev)
{
	const char *state = ev_str(ev, EVF_STATE, NULL);
	char *line;
	if (!state)
		line = xasprintf(
		    "[context: %d old tool results elided (%.0f KB): "
		    "about %.0f -> %.0f tokens of %.0f]",
		    cJSON_GetArraySize(ev_item(ev, EVF_IDS)),
		    ev_num(ev, EVF_BYTES, 0) / 1024,
		    ev_num(ev, EVF_EST_BEFORE, 0), ev_num(ev, EVF_EST_AFTER, 0),
		    ev_num(ev, EVF_WINDOW, 0));
	else if (!strcmp(state, "started"))
		line = xasprintf("[context: compacting the conversation (%s): "
		                 "about %.0f tokens of %.0f]",
		                 ev_str(ev, EVF_REASON, ""),
		                 ev_num(ev, EVF_EST_TOKENS, 0),
		                 ev_num(ev, EVF_WINDOW, 0));
	else if (!strcmp(state, "done"))
		line = xasprintf(
		    "[context: compacted: %.0f messages replaced by "
		    "a summary of %zu bytes%s, %.0f kept: about "
		    "%.0f -> %.0f tokens]",
		    ev_num(ev, EVF_REPLACED, 0),
		    strlen(ev_str(ev, EVF_SUMMARY, "")),
		    ev_bool(ev, EVF_CACHED, 0) ? " (cached)" : "",
		    ev_num(ev, EVF_KEPT, 0), ev_num(ev, EVF_EST_BEFORE, 0),
		    ev_num(ev, EVF_EST_AFTER, 0));
	else
		line = xasprintf("[context: compaction failed: %s]",
		                 ev_str(ev, EVF_MESSAGE, ""));
	hl_end_text(h);
	fputs(hl_sgr(h, "\033[2m"), stderr);
	hl_put(line);
	fprintf(stderr, "%s\n", hl_sgr(h, "\033[0m"));
	free(line);
}

/* A resumed run goes live: from which turn, and why. */
static void hl_replay_live(struct headless *h, const cJSON *ev)
{
	hl_end_text(h);
	fprintf(stderr, "%s[live from turn %.0f after %.0f cached: ",
	        hl_sgr(h, "\033[2m"), ev_num(ev, EVF_TURN, 0),
	        ev_num(ev, EVF_CACHED_TURNS, 0));
	hl_put(ev_str(ev, EVF_REASON, ""));
	fprintf(stderr, "]%s\n", hl_sgr(h, "\033[0m"));
}

/* What the step prompt decided. */
static void hl_step_resume(struct headless *h, const cJSON *ev)
{
	hl_end_text(h);
	fprintf(stderr, "%s[step: %s]%s\n", hl_sgr(h, "\033[2m"),
	        ev_str(ev, EVF_ACTION, "?"), hl_sgr(h, "\033[0m"));
}

/* Streamed model text, as it comes. */
static void hl_text_delta(struct headless *h, const cJSON *ev)
{
	hl_put(ev_str(ev, EVF_TEXT, ""));
	h->in_text = 1;
}

/* "> shell COMMAND": the call's name and the first line of what it runs. */
static void hl_tool_call(struct headless *h, const cJSON *ev)
{
	const char *name = ev_str(ev, EVF_NAME, "?");
	const cJSON *args = ev_item(ev, EVF_ARGUMENTS);
	char line[200];
	/* the tool's own arguments, not an event's fields */
	const char *what = json_str(args, "command", NULL);
	if (!what)
		what = json_str(args, "code", NULL); /* python */
	if (!what)
		what = json_str(args, "path", NULL);
	char *json = what ? NULL : json_print(args); /* an MCP tool's */
	hl_first_line(what ? what : json, line, sizeof line);
	free(json);
	hl_end_text(h);
	fprintf(stderr, "%s> %s%s ", hl_sgr(h, "\033[1;36m"), name,
	        hl_sgr(h, "\033[0m"));
	hl_put(line);
	fputc('\n', stderr);
}

/* How a command ended: exit code (or timeout, cancel) and duration. */
static void hl_exec_end(struct headless *h, const cJSON *ev)
{
	double ms = ev_num(ev, EVF_DURATION_MS, 0);
	if (ev_bool(ev, EVF_TIMED_OUT, 0)) {
		fprintf(stderr, "  %stimed out%s after %.1fs\n",
		        hl_sgr(h, "\033[31m"), hl_sgr(h, "\033[0m"), ms / 1000);
	} else if (ev_bool(ev, EVF_CANCELLED, 0)) {
		fprintf(stderr, "  cancelled after %.1fs\n", ms / 1000);
	} else {
		int code = ev_int(ev, EVF_EXIT_CODE, -1);
		fprintf(stderr,
		        "  %sexit %d%s in %.1fs (%.0f bytes out, %.0f "
		        "err)\n",
		        code ? hl_sgr(h, "\033[31m") : hl_sgr(h, "\033[32m"),
		        code, hl_sgr(h, "\033[0m"), ms / 1000,
		        ev_num(ev, EVF_STDOUT_BYTES, 0),
		        ev_num(ev, EVF_STDERR_BYTES, 0));
	}
}

/* A tool's error (not a command's exit code, which exec_end shows). */
static void hl_tool_result(struct headless *h, const cJSON *ev)
{
	(void)h;
	if (!ev_bool(ev, EVF_IS_ERROR, 0) ||
	    strstr(ev_str(ev, EVF_CONTENT, ""), "[exit code"))
		return;
	fputs("  ", stderr);
	hl_put(ev_str(ev, EVF_CONTENT, ""));
	fputc('\n', stderr);
}

/* "  image output/chart.png sent to the model: 1568x882, ~1844
 * tokens", or why it was not sent. */
static void hl_image_sent(struct headless *h, const cJSON *ev)
{
	const char *err = ev_str(ev, EVF_ERROR, NULL);
	hl_end_text(h);
	fputs("  image ", stderr);
	hl_put(ev_str(ev, EVF_PATH, "?"));
	if (err) {
		fprintf(stderr,
		        " %snot sent to the model%s: ", hl_sgr(h, "\033[33m"),
		        hl_sgr(h, "\033[0m"));
		hl_put(err);
	} else {
		fprintf(stderr, " sent to the model: %.0fx%.0f, ~%.0f tokens",
		        ev_num(ev, EVF_WIDTH, 0), ev_num(ev, EVF_HEIGHT, 0),
		        ev_num(ev, EVF_TOKENS, 0));
	}
	fputc('\n', stderr);
}

/* The MCP servers as they started: each one's status and tool count. */
static void hl_mcp_tools(struct headless *h, const cJSON *ev)
{
	const cJSON *srv, *t;
	hl_end_text(h);
	cJSON_ArrayForEach(srv, ev_item(ev, EVF_SERVERS))
	{
		int n = 0;
		cJSON_ArrayForEach(t, ev_item(ev, EVF_TOOLS))
		{
			n += !strcmp(ev_str(t, EVF_SERVER, ""),
			             ev_str(srv, EVF_NAME, "?"));
		}
		fputs("  mcp ", stderr);
		hl_put(ev_str(srv, EVF_NAME, "?"));
		if (!strcmp(ev_str(srv, EVF_STATUS, ""), "ready"))
			fprintf(stderr, ": %d tools\n", n);
		else
			fputs(": failed (its tools are not offered)\n", stderr);
	}
}

/* An MCP call ended: how long, and where a result that landed in the
 * workspace is. */
static void hl_mcp_call(struct headless *h, const cJSON *ev)
{
	hl_end_text(h);
	fprintf(stderr, "  %s after %.1fs",
	        ev_str(ev, EVF_ERROR, NULL)    ? "failed"
	        : ev_bool(ev, EVF_IS_ERROR, 0) ? "tool error"
	                                       : "answered",
	        ev_num(ev, EVF_DURATION_MS, 0) / 1000);
	const char *file = ev_str(ev, EVF_FILE, NULL);
	if (file) {
		fputs(", saved to ", stderr);
		hl_put(file);
		if (ev_num(ev, EVF_ROWS, -1) >= 0)
			fprintf(stderr, " (%.0f rows, %.0f columns)",
			        ev_num(ev, EVF_ROWS, 0),
			        ev_num(ev, EVF_COLUMNS, 0));
	}
	fputc('\n', stderr);
}

/* An MCP server asked the person something: the answer, or that
 * nobody could give one here. */
static void hl_mcp_elicit(struct headless *h, const cJSON *ev)
{
	hl_end_text(h);
	fputs("  the MCP server ", stderr);
	hl_put(ev_str(ev, EVF_SERVER, ""));
	fputs(" asks: ", stderr);
	hl_put_line(ev_str(ev, EVF_MESSAGE, ""), 300);
	if (!strcmp(ev_str(ev, EVF_BY, ""), "assay"))
		fputs("\n  declined: a form too big to put to a person (over 64 "
		      "fields, 500 choices or 64 KiB)\n",
		      stderr);
	else if (!strcmp(ev_str(ev, EVF_BY, ""), "nobody"))
		fprintf(stderr,
		        "\n  %s: nobody to answer here (a server's "
		        "questions are answered in the workbench: "
		        "assay without \"run\", in a terminal)\n",
		        strcmp(ev_str(ev, EVF_ACTION, ""), "cancel")
		            ? "declined"
		            : "cancelled");
	else
		fprintf(stderr, "\n  answered: %s\n",
		        ev_str(ev, EVF_ACTION, ""));
}

/* A failure, and when it is retried, how soon and what was dropped. */
static void hl_error(struct headless *h, const cJSON *ev)
{
	hl_end_text(h);
	double retry = ev_num(ev, EVF_RETRY_IN_MS, -1);
	fprintf(stderr, "%s%s%s: ", hl_sgr(h, "\033[33m"),
	        ev_str(ev, EVF_CATEGORY, "error"), hl_sgr(h, "\033[0m"));
	hl_put(ev_str(ev, EVF_MESSAGE, ""));
	if (retry >= 0)
		fprintf(stderr,
		        " (retrying in %.1fs; %.0f bytes of partial output "
		        "discarded)",
		        retry / 1000, ev_num(ev, EVF_DISCARDED_BYTES, 0));
	fputc('\n', stderr);
}

/* The end of a turn's text; a cached turn's text, which did not
 * stream, is printed here. */
static void hl_assistant_message(struct headless *h, const cJSON *ev)
{
	if (h->cached && *ev_str(ev, EVF_TEXT, "")) {
		/* no deltas streamed: show the text once */
		hl_put(ev_str(ev, EVF_TEXT, ""));
		h->in_text = 1;
	}
	h->cached = 0;
	hl_end_text(h);
}

/* The summary: status and totals, each declared output, the archive. */
static void hl_run_end(struct headless *h, const cJSON *ev)
{
	hl_end_text(h);
	const cJSON *tot = ev_item(ev, EVF_TOTALS);
	double cost = ev_num(tot, EVF_COST_USD, 0);
	int unpriced = ev_int(tot, EVF_UNPRICED_TURNS, 0);
	char money[96];
	if (unpriced && cost <= 0)
		snprintf(money, sizeof money,
		         "cost unknown (no price for the model: assay models)");
	else if (cost <= 0) /* a free model (script), or only cached answers */
		snprintf(money, sizeof money, "$0");
	else
		snprintf(money, sizeof money, "$%.4f%s", cost,
		         unpriced ? " + turns of unknown cost" : "");
	fprintf(stderr,
	        "%srun %s%s: %.0f turns, %.0f tokens in, %.0f out, %s, "
	        "%.1fs\n",
	        hl_sgr(h, "\033[1m"), ev_str(ev, EVF_STATUS, "?"),
	        hl_sgr(h, "\033[0m"), ev_num(tot, EVF_TURNS, 0),
	        ev_num(tot, EVF_INPUT_TOKENS, 0),
	        ev_num(tot, EVF_OUTPUT_TOKENS, 0), money,
	        ev_num(tot, EVF_DURATION_MS, 0) / 1000);
	const cJSON *o;
	cJSON_ArrayForEach(o, ev_item(ev, EVF_OUTPUTS))
	{
		char *path = hl_clean(ev_str(o, EVF_PATH, "?"));
		if (ev_bool(o, EVF_PRESENT, 0)) {
			char *to = hl_clean(ev_str(o, EVF_COPIED_TO, "?"));
			fprintf(stderr, "  output %s -> %s (%.0f bytes)\n",
			        path, to, ev_num(o, EVF_BYTES, 0));
			free(to);
		} else {
			char *why = hl_clean(ev_str(o, EVF_ERROR, ""));
			fprintf(stderr, "  %soutput %s missing%s: %s\n",
			        hl_sgr(h, "\033[31m"), path,
			        hl_sgr(h, "\033[0m"), why);
			free(why);
		}
		free(path);
	}
	const char *archive = ev_str(ev, EVF_ARCHIVE, NULL);
	if (archive) {
		char *a = hl_clean(archive);
		fprintf(stderr, "  workspace archive: %s\n", a);
		free(a);
	}
}

/* Slow work (hashing a big input) once it has taken a second: a line
 * a second, and the last when it is done. */
static void hl_progress(struct headless *h, const cJSON *ev)
{
	double done = ev_num(ev, EVF_DONE, 0), total = ev_num(ev, EVF_TOTAL, 0);
	int64_t ms = (int64_t)ev_long(ev, EVF_ELAPSED_MS, 0);
	if (!strcmp(ev_str(ev, EVF_WHAT, ""), "mcp")) {
		/* a server may send thousands: 4 lines a second at most,
		 * and its end once */
		int over = total > 0 && done >= total;
		const char *call = ev_str(ev, EVF_SUBJECT, "");
		if (over && h->mcp_over && !strcmp(h->mcp_over, call))
			return;
		if (!over && ms >= h->progress_ms && ms - h->progress_ms < 250)
			return;
		h->progress_ms = over ? 0 : ms;
		if (over) {
			free(h->mcp_over);
			h->mcp_over = xstrdup(call);
		}
		hl_end_text(h);
		if (total > 0)
			fprintf(stderr, "  progress %g of %g", done, total);
		else
			fprintf(stderr, "  progress %g", done);
		if (ev_str(ev, EVF_MESSAGE, NULL)) {
			fputs(": ", stderr);
			hl_put_line(ev_str(ev, EVF_MESSAGE, ""), 200);
		}
		fputc('\n', stderr);
		return;
	}
	int last = total > 0 && done >= total;
	if (done < 0) /* failed: its error says so */
		h->progress_ms = 0;
	if (done < 0 || ms < 1000 || (!last && ms - h->progress_ms < 1000))
		return;
	h->progress_ms = last ? 0 : ms;
	char d[16], t[16], r[16];
	bytes_human(done, d);
	bytes_human(total, t);
	bytes_human(done * 1000 / (double)(ms > 0 ? ms : 1), r);
	char *what = hl_clean(ev_str(ev, EVF_WHAT, ""));
	char *subject = hl_clean(ev_str(ev, EVF_SUBJECT, ""));
	hl_end_text(h);
	if (total > 0)
		fprintf(stderr, "  %s %s: %s of %s (%.0f%%), %s/s\n", what,
		        subject, d, t, 100 * done / total, r);
	else /* how much there is is not known ahead */
		fprintf(stderr, "  %s %s: %s, %s/s\n", what, subject, d, r);
	free(what);
	free(subject);
}

/* What each event type prints; a type without an entry prints nothing. */
static void (*const hl_handlers[EV__COUNT])(struct headless *,
                                            const cJSON *) = {
    [EV_RUN_START] = hl_run_start,
    [EV_RUN_RESUME] = hl_run_resume,
    [EV_MODEL_REQUEST] = hl_model_request,
    [EV_REPLAY_LIVE] = hl_replay_live,
    [EV_STEP_RESUME] = hl_step_resume,
    [EV_TEXT_DELTA] = hl_text_delta,
    [EV_TOOL_CALL] = hl_tool_call,
    [EV_EXEC_END] = hl_exec_end,
    [EV_TOOL_RESULT] = hl_tool_result,
    [EV_IMAGE_SENT] = hl_image_sent,
    [EV_MCP_TOOLS] = hl_mcp_tools,
    [EV_MCP_CALL] = hl_mcp_call,
    [EV_MCP_ELICIT] = hl_mcp_elicit,
    [EV_ERROR] = hl_error,
    [EV_CONTEXT_TRIM] = hl_context,
    [EV_COMPACTION] = hl_context,
    [EV_ASSISTANT_MESSAGE] = hl_assistant_message,
    [EV_RUN_END] = hl_run_end,
    [EV_PROGRESS] = hl_progress,
};

/* The session's observer: one event, as a JSON line or as progress. */
static void hl_on_event(void *arg, const cJSON *ev)
{
	struct headless *h = arg;
	if (h->json && event_type_of(ev) == EV_PROGRESS)
		return; /* stdout is the transcript's events */
	if (h->json) {
		char *line = json_print(ev);
		puts(line);
		fflush(stdout);
		free(line);
		return;
	}
	enum event_type t = event_type_of(ev);
	/* a resumed run's history: already printed when it happened */
	if (ev_bool(ev, EVF_REPLAYED, 0) && t != EV_MODEL_REQUEST)
		return;
	if (hl_handlers[t])
		hl_handlers[t](h, ev);
}

struct headless *headless_attach(struct session *s, int json)
{
	struct headless *h = xcalloc(1, sizeof *h);
	h->json = json;
	h->color = isatty(STDERR_FILENO) && !getenv("NO_COLOR");
	session_observe(s, hl_on_event, h);
	return h;
}

void headless_free(struct headless *h)
{
	if (h)
		free(h->mcp_over);
	free(h);
}
