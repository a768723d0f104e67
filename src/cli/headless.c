/* headless.c: the observer for `assay run`: readable progress on
 * stderr (streamed text, each tool call with its command, exit code and
 * duration, retries, a final summary), or with --json every event as a
 * JSON line on stdout. Untrusted text is sanitised before printing. */
#include "cli.h"

#include "assay/json.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct headless {
	int json;
	int color;
	int in_text; /* the last thing printed was streamed text */
	int cached;  /* the turn's answer came from the cache */
};

static struct headless H;

static void put(const char *s)
{
	char *clean = term_sanitize(s, strlen(s));
	fputs(clean, stderr);
	free(clean);
}

static const char *c(const char *code)
{
	return H.color ? code : "";
}

static void end_text(void)
{
	if (H.in_text)
		fputc('\n', stderr);
	H.in_text = 0;
}

static void first_line(const char *s, char *out, size_t max)
{
	size_t n = strcspn(s, "\n");
	if (n >= max)
		n = max - 4;
	memcpy(out, s, n);
	out[n] = '\0';
	if (s[n] || n < strcspn(s, "\n"))
		strcat(out, "...");
}

static void print_tool_call(const cJSON *ev)
{
	const char *name = json_str(ev, "name", "?");
	const cJSON *args = cJSON_GetObjectItem(ev, "arguments");
	char line[200];
	const char *what = json_str(args, "command", NULL);
	if (!what)
		what = json_str(args, "code", NULL); /* python */
	if (!what)
		what = json_str(args, "path", "");
	first_line(what, line, sizeof line);
	end_text();
	fprintf(stderr, "%s> %s%s ", c("\033[1;36m"), name, c("\033[0m"));
	put(line);
	fputc('\n', stderr);
}

static void print_exec_end(const cJSON *ev)
{
	double ms = json_num(ev, "duration_ms", 0);
	if (json_bool(ev, "timed_out", 0))
		fprintf(stderr, "  %stimed out%s after %.1fs\n", c("\033[31m"),
		        c("\033[0m"), ms / 1000);
	else if (json_bool(ev, "cancelled", 0))
		fprintf(stderr, "  cancelled after %.1fs\n", ms / 1000);
	else {
		int code = (int)json_num(ev, "exit_code", -1);
		fprintf(stderr,
		        "  %sexit %d%s in %.1fs (%.0f bytes out, %.0f "
		        "err)\n",
		        code ? c("\033[31m") : c("\033[32m"), code,
		        c("\033[0m"), ms / 1000,
		        json_num(ev, "stdout_bytes", 0),
		        json_num(ev, "stderr_bytes", 0));
	}
}

/* A terminal-safe copy of an untrusted string (paths, errors, ids). */
static char *clean(const char *s)
{
	return term_sanitize(s ? s : "", strlen(s ? s : ""));
}

static void print_run_end(const cJSON *ev)
{
	end_text();
	const cJSON *tot = cJSON_GetObjectItem(ev, "totals");
	fprintf(stderr,
	        "%srun %s%s: %.0f turns, %.0f tokens in, %.0f out, "
	        "%.1fs\n",
	        c("\033[1m"), json_str(ev, "status", "?"), c("\033[0m"),
	        json_num(tot, "turns", 0), json_num(tot, "input_tokens", 0),
	        json_num(tot, "output_tokens", 0),
	        json_num(tot, "duration_ms", 0) / 1000);
	const cJSON *o;
	cJSON_ArrayForEach(o, cJSON_GetObjectItem(ev, "outputs"))
	{
		char *path = clean(json_str(o, "path", "?"));
		if (json_bool(o, "present", 0)) {
			char *to = clean(json_str(o, "copied_to", "?"));
			fprintf(stderr, "  output %s -> %s (%.0f bytes)\n",
			        path, to, json_num(o, "bytes", 0));
			free(to);
		} else {
			char *why = clean(json_str(o, "error", ""));
			fprintf(stderr, "  %soutput %s missing%s: %s\n",
			        c("\033[31m"), path, c("\033[0m"), why);
			free(why);
		}
		free(path);
	}
	const char *archive = json_str(ev, "archive", NULL);
	if (archive) {
		char *a = clean(archive);
		fprintf(stderr, "  workspace archive: %s\n", a);
		free(a);
	}
}

static void on_event(void *arg, const cJSON *ev)
{
	(void)arg;
	if (H.json) {
		char *line = json_print(ev);
		puts(line);
		fflush(stdout);
		free(line);
		return;
	}
	const char *type = json_str(ev, "type", "");
	/* a resumed run's history: already printed when it happened */
	if (json_bool(ev, "replayed", 0) && strcmp(type, "model_request"))
		return;
	if (!strcmp(type, "run_resume")) {
		const cJSON *from = cJSON_GetObjectItem(ev, "resumed_from");
		char *line = xasprintf(
		    " resuming run %s (recorded up to event %.0f, %s): %s/%s, "
		    "sandbox %s\n",
		    json_str(ev, "run_id", ""), json_num(from, "seq", 0),
		    json_str(from, "status", "?"), json_str(ev, "provider", ""),
		    json_str(ev, "model", ""),
		    json_str(cJSON_GetObjectItem(ev, "sandbox"), "backend",
		             ""));
		fprintf(stderr, "%sassay%s", c("\033[1m"), c("\033[0m"));
		put(line);
		free(line);
		return;
	}
	if (!strcmp(type, "model_request")) {
		H.cached = json_bool(ev, "cached", 0);
		if (H.cached) {
			end_text();
			fprintf(stderr,
			        "%s[turn %.0f: answer from the cache, "
			        "nothing sent]%s\n",
			        c("\033[2m"), json_num(ev, "turn", 0),
			        c("\033[0m"));
		}
		return;
	}
	if (!strcmp(type, "replay_live")) {
		end_text();
		fprintf(stderr, "%s[live from turn %.0f after %.0f cached: ",
		        c("\033[2m"), json_num(ev, "turn", 0),
		        json_num(ev, "cached_turns", 0));
		put(json_str(ev, "reason", ""));
		fprintf(stderr, "]%s\n", c("\033[0m"));
		return;
	}
	if (!strcmp(type, "step_resume")) {
		end_text();
		fprintf(stderr, "%s[step: %s]%s\n", c("\033[2m"),
		        json_str(ev, "action", "?"), c("\033[0m"));
		return;
	}
	if (!strcmp(type, "run_start")) {
		char *line = xasprintf(
		    " run %s: %s/%s, sandbox %s, run dir %s\n",
		    json_str(ev, "run_id", ""), json_str(ev, "provider", ""),
		    json_str(ev, "model", ""),
		    json_str(cJSON_GetObjectItem(ev, "sandbox"), "backend", ""),
		    json_str(ev, "run_dir", ""));
		fprintf(stderr, "%sassay%s", c("\033[1m"), c("\033[0m"));
		put(line);
		free(line);
	} else if (!strcmp(type, "text_delta")) {
		put(json_str(ev, "text", ""));
		H.in_text = 1;
	} else if (!strcmp(type, "tool_call")) {
		print_tool_call(ev);
	} else if (!strcmp(type, "exec_end")) {
		print_exec_end(ev);
	} else if (!strcmp(type, "tool_result")) {
		if (json_bool(ev, "is_error", 0) &&
		    !strstr(json_str(ev, "content", ""), "[exit code")) {
			fputs("  ", stderr);
			put(json_str(ev, "content", ""));
			fputc('\n', stderr);
		}
	} else if (!strcmp(type, "error")) {
		end_text();
		double retry = json_num(ev, "retry_in_ms", -1);
		fprintf(stderr, "%s%s%s: ", c("\033[33m"),
		        json_str(ev, "category", "error"), c("\033[0m"));
		put(json_str(ev, "message", ""));
		if (retry >= 0)
			fprintf(stderr,
			        " (retrying in %.1fs; %.0f bytes of "
			        "partial output discarded)",
			        retry / 1000,
			        json_num(ev, "discarded_bytes", 0));
		fputc('\n', stderr);
	} else if (!strcmp(type, "assistant_message")) {
		if (H.cached && *json_str(ev, "text", "")) {
			/* no deltas streamed: show the text once */
			put(json_str(ev, "text", ""));
			H.in_text = 1;
		}
		H.cached = 0;
		end_text();
	} else if (!strcmp(type, "run_end")) {
		print_run_end(ev);
	}
}

void headless_attach(struct session *s, int json)
{
	H.json = json;
	H.color = isatty(STDERR_FILENO) && !getenv("NO_COLOR");
	session_observe(s, on_event, NULL);
}
