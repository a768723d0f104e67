/* mcp.c: `assay mcp`: the MCP servers of the configuration, outside a
 * run. `list` starts each and shows its status and tools; `call` calls
 * one tool and prints the result; `conformance-client URL` is the client
 * the official conformance suite drives (its scenario in
 * MCP_CONFORMANCE_SCENARIO). What it reads is MCP's JSON, not an event. */
#include "cli.h"

#include "assay/config.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/mcp.h"
#include "assay/termtext.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MCLI_START_MS 30000 /* a server's start and listing, at most */
#define MCLI_CALL_S 120     /* a call's default timeout */

/* What the command holds while the loop runs. */
struct mcli {
	struct loop *loop;
	struct mcp **servers;
	int n;
	int verbose;
	int accept_defaults; /* elicitation: accept with the defaults */
	int start_ms;        /* how long a start may take */
	int repeat;          /* call --repeat N: the round trip measured */
	/* the call under way */
	int call_done;
	cJSON *result;
	char *error;
};

/* Untrusted text on one line of stdout (or stderr). */
static void say_clean(FILE *f, const char *prefix, const char *text, int lines)
{
	char *c = term_clean(text, strlen(text),
	                     lines ? TERM_CLEAN_NEWLINES | TERM_CLEAN_TABS
	                           : TERM_CLEAN_TABS);
	fprintf(f, "%s%s\n", prefix, c);
	free(c);
}

/* The log levels said without -v (RFC 5424's, from error up). */
static const char *const loud_levels[] = {"error", "critical", "alert",
                                          "emergency", NULL};

/* A server's log line: on stderr with -v, errors always. */
static void on_log(struct mcp *m, const char *level, const char *text,
                   void *arg)
{
	struct mcli *c = arg;
	int loud = 0;
	for (int i = 0; loud_levels[i]; i++)
		loud |= !strcmp(level, loud_levels[i]);
	if (!c->verbose && !loud)
		return;
	char *prefix = xasprintf("assay: mcp %s [%s] ", mcp_name(m), level);
	say_clean(stderr, prefix, text, 0);
	free(prefix);
}

/* An elicitation: accepted with the schema's defaults (the conformance
 * client, --accept-defaults), else declined with a word. */
static void on_elicit(struct mcp *m, uint64_t token, const cJSON *params,
                      void *arg)
{
	struct mcli *c = arg;
	say_clean(stderr,
	          "assay: the server asks: ", json_str(params, "message", ""),
	          0);
	if (!c->accept_defaults) {
		fprintf(stderr, "assay: declined (no one to ask here; "
		                "--accept-defaults accepts its defaults)\n");
		mcp_elicit_reply(m, token, NULL);
		return;
	}
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "action", "accept");
	cJSON_AddItemToObject(r, "content", cJSON_CreateObject());
	mcp_elicit_reply(m, token, r);
}

/* Run the loop until every server has started (or failed), or the
 * deadline. */
static void wait_started(struct mcli *c)
{
	int64_t end = now_ms() + c->start_ms;
	for (;;) {
		int busy = 0;
		for (int i = 0; i < c->n; i++)
			busy |= mcp_state(c->servers[i]) == MCP_STARTING;
		if (!busy || now_ms() >= end)
			return;
		loop_once(c->loop, 100);
	}
}

/* Close every server and wait (bounded) until they are gone. */
static void close_all(struct mcli *c)
{
	for (int i = 0; i < c->n; i++)
		mcp_close(c->servers[i]);
	int64_t end = now_ms() + 8000;
	for (;;) {
		int busy = 0;
		for (int i = 0; i < c->n; i++)
			busy |= mcp_state(c->servers[i]) != MCP_CLOSED;
		if (!busy || now_ms() >= end)
			break;
		loop_once(c->loop, 100);
	}
	for (int i = 0; i < c->n; i++)
		mcp_free(c->servers[i]);
	free(c->servers);
	c->servers = NULL;
	c->n = 0;
}

/* Start the server name as spec says. */
static struct mcp *start_one(struct mcli *c, const char *name,
                             const cJSON *spec)
{
	/* elicitation declared: answered with the defaults or declined
	 * with a word (on_elicit), terminal or not */
	struct mcp_hooks hk = {.log = on_log, .elicit = on_elicit, .arg = c};
	char *err = NULL;
	struct mcp *m = mcp_new(c->loop, NULL, name, spec, &hk, &err);
	if (!m) {
		fprintf(stderr, "assay: %s\n", err);
		free(err);
		return NULL;
	}
	c->servers =
	    xrealloc(c->servers, (size_t)(c->n + 1) * sizeof *c->servers);
	c->servers[c->n++] = m;
	mcp_start(m);
	return m;
}

/* One line of a tool: its name, hints and the first line of its
 * description. */
static void print_tool(const cJSON *t)
{
	const cJSON *a = cJSON_GetObjectItem(t, "annotations");
	char hints[80] = "";
	if (json_bool(a, "readOnlyHint", 0))
		strcat(hints, " read-only");
	if (json_bool(a, "destructiveHint", 0))
		strcat(hints, " destructive");
	if (json_bool(a, "openWorldHint", 0))
		strcat(hints, " open-world");
	const char *d = json_str(t, "description", "");
	size_t n = strcspn(d, "\n");
	char *first = xstrndup(d, n > 100 ? 100 : n);
	char *name = term_clean(json_str(t, "name", ""),
	                        strlen(json_str(t, "name", "")), 0);
	char *desc = term_clean(first, strlen(first), 0);
	printf("  %-28s %s%s%s%s\n", name, desc, *hints ? "  [" : "",
	       *hints ? hints + 1 : "", *hints ? "]" : "");
	free(first);
	free(name);
	free(desc);
}

/* assay mcp list [--json] [-v] [NAME...] */
static int mcp_list(struct mcli *c, const cJSON *servers, int json, int argc,
                    char **argv)
{
	const cJSON *s;
	cJSON_ArrayForEach(s, servers)
	{
		int want = argc == 0;
		for (int i = 0; i < argc; i++)
			want |= !strcmp(argv[i], s->string);
		if (want)
			start_one(c, s->string, s);
	}
	wait_started(c);
	int failed = 0;
	cJSON *out = json ? cJSON_CreateArray() : NULL;
	for (int i = 0; i < c->n; i++) {
		struct mcp *m = c->servers[i];
		enum mcp_state st = mcp_state(m);
		const char *status = st == MCP_READY    ? "ready"
		                     : st == MCP_FAILED ? "failed"
		                                        : "not answering";
		failed |= st != MCP_READY;
		const cJSON *info = mcp_server_info(m);
		if (out) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "name", mcp_name(m));
			cJSON_AddStringToObject(o, "transport",
			                        mcp_transport_name(m));
			cJSON_AddStringToObject(o, "status", status);
			if (mcp_why(m))
				cJSON_AddStringToObject(o, "why", mcp_why(m));
			if (mcp_version(m))
				cJSON_AddStringToObject(o, "protocol",
				                        mcp_version(m));
			if (info)
				cJSON_AddItemToObject(o, "server",
				                      cJSON_Duplicate(info, 1));
			cJSON_AddItemToObject(
			    o, "tools",
			    mcp_tools(m) ? cJSON_Duplicate(mcp_tools(m), 1)
			                 : cJSON_CreateArray());
			cJSON_AddItemToArray(out, o);
			continue;
		}
		char *line = xasprintf("%s  %s  %s%s%s  %s %s  %d tools",
		                       mcp_name(m), mcp_transport_name(m),
		                       status, mcp_why(m) ? ": " : "",
		                       mcp_why(m) ? mcp_why(m) : "",
		                       mcp_version(m) ? mcp_version(m) : "",
		                       json_str(info, "name", ""),
		                       cJSON_GetArraySize(mcp_tools(m)));
		say_clean(stdout, "", line, 0);
		free(line);
		const cJSON *t;
		cJSON_ArrayForEach(t, mcp_tools(m)) print_tool(t);
	}
	if (out) {
		char *text = cJSON_Print(out);
		printf("%s\n", text);
		free(text);
		cJSON_Delete(out);
	}
	if (c->n == 0)
		fprintf(stderr, "assay: no MCP servers configured "
		                "(\"mcp_servers\" in your config)\n");
	close_all(c);
	return failed ? EXIT_FAILED : EXIT_OK;
}

/* A call's end. */
static void on_done(struct mcp *m, const cJSON *result, const char *err,
                    void *arg)
{
	struct mcli *c = arg;
	(void)m;
	c->call_done = 1;
	cJSON_Delete(c->result);
	free(c->error);
	c->result = result ? cJSON_Duplicate(result, 1) : NULL;
	c->error = err ? xstrdup(err) : NULL;
}

/* A call's progress, on stderr. */
static void on_progress(struct mcp *m, double progress, double total,
                        const char *message, void *arg)
{
	(void)m;
	(void)arg;
	char *line =
	    total >= 0
	        ? xasprintf("%g/%g %s", progress, total, message ? message : "")
	        : xasprintf("%g %s", progress, message ? message : "");
	say_clean(stderr, "assay: progress ", line, 0);
	free(line);
}

/* One content part of a result, for a person. */
static void print_part(const cJSON *p)
{
	const char *type = json_str(p, "type", "");
	const char *mime = json_str(p, "mimeType", "");
	if (!strcmp(type, "text")) {
		say_clean(stdout, "", json_str(p, "text", ""), 1);
	} else if (!strcmp(type, "image") || !strcmp(type, "audio")) {
		size_t n = strlen(json_str(p, "data", ""));
		char *line =
		    xasprintf("[%s %s, %zu bytes of base64]", type, mime, n);
		say_clean(stdout, "", line, 0);
		free(line);
	} else if (!strcmp(type, "resource_link")) {
		char *line =
		    xasprintf("[resource link %s %s]", json_str(p, "uri", ""),
		              json_str(p, "name", ""));
		say_clean(stdout, "", line, 0);
		free(line);
	} else if (!strcmp(type, "resource")) {
		const cJSON *r = cJSON_GetObjectItem(p, "resource");
		char *line =
		    xasprintf("[resource %s %s]", json_str(r, "uri", ""),
		              json_str(r, "mimeType", ""));
		say_clean(stdout, "", line, 0);
		free(line);
		if (json_str(r, "text", NULL))
			say_clean(stdout, "", json_str(r, "text", ""), 1);
	} else {
		char *line = xasprintf("[a part of type %.40s]", type);
		say_clean(stdout, "", line, 0);
		free(line);
	}
}

/* Call tool on the server and wait for its end; 0 when it answered
 * (c->result, which may say isError), -1 (c->error) when not. */
static int call_wait(struct mcli *c, struct mcp *m, const char *tool,
                     const cJSON *args, int timeout_s)
{
	c->call_done = 0;
	mcp_call(m, tool, args, timeout_s * 1000, on_done, on_progress, c);
	while (!c->call_done)
		loop_once(c->loop, 200);
	return c->result ? 0 : -1;
}

/* The round trip of repeat calls (after 20 to warm up), on stderr: the
 * benchmark's number (tests/bench/mcp_roundtrip.sh). -1 when one failed. */
static int call_repeat(struct mcli *c, struct mcp *m, const char *tool,
                       const cJSON *args, int timeout_s, int repeat)
{
	double *ms = xcalloc((size_t)repeat, sizeof *ms);
	int rc = 0;
	for (int i = -20; i < repeat && rc == 0; i++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		rc = call_wait(c, m, tool, args, timeout_s);
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (i >= 0)
			ms[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 +
			        (double)(b.tv_nsec - a.tv_nsec) / 1e6;
		if (rc == 0 && i + 1 < repeat) {
			cJSON_Delete(c->result);
			c->result = NULL;
		}
	}
	if (rc == 0) {
		for (int i = 1; i < repeat; i++) /* few: insertion sort */
			for (int j = i; j > 0 && ms[j] < ms[j - 1]; j--) {
				double t = ms[j];
				ms[j] = ms[j - 1];
				ms[j - 1] = t;
			}
		fprintf(stderr,
		        "assay: %s round trip over %d: median %.3f ms, p90 "
		        "%.3f ms\n",
		        mcp_transport_name(m), repeat, ms[repeat / 2],
		        ms[(int)(repeat * 0.9)]);
	}
	free(ms);
	return rc;
}

/* assay mcp call SERVER TOOL [JSON] */
static int mcp_call_cmd(struct mcli *c, const cJSON *servers, int json,
                        int timeout_s, int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "assay: usage: assay mcp call SERVER TOOL "
		                "['{\"arg\": ...}']\n");
		return EXIT_USAGE;
	}
	const cJSON *spec = cJSON_GetObjectItem(servers, argv[0]);
	if (!spec) {
		fprintf(stderr,
		        "assay: no MCP server \"%s\" in the "
		        "configuration (assay mcp list shows them)\n",
		        argv[0]);
		return EXIT_USAGE;
	}
	cJSON *args = argc == 3 ? cJSON_Parse(argv[2]) : cJSON_CreateObject();
	if (!cJSON_IsObject(args)) {
		fprintf(stderr, "assay: the arguments must be a JSON object, "
		                "e.g. '{\"message\": \"hi\"}'\n");
		cJSON_Delete(args);
		return EXIT_USAGE;
	}
	struct mcp *m = start_one(c, argv[0], spec);
	int rc = EXIT_SANDBOX;
	if (m)
		wait_started(c);
	if (m && mcp_state(m) != MCP_READY) {
		fprintf(stderr, "assay: MCP server %s: %s\n", argv[0],
		        mcp_why(m) ? mcp_why(m)
		                   : "no answer to initialize in time");
	} else if (m && !mcp_tool(m, argv[1])) {
		fprintf(stderr,
		        "assay: MCP server %s has no tool \"%s\" "
		        "(assay mcp list %s shows its tools)\n",
		        argv[0], argv[1], argv[0]);
		rc = EXIT_USAGE;
	} else if (m &&
	           (c->repeat > 1
	                ? call_repeat(c, m, argv[1], args, timeout_s, c->repeat)
	                : call_wait(c, m, argv[1], args, timeout_s)) < 0) {
		say_clean(stderr, "assay: the call failed: ", c->error, 0);
	} else if (m) {
		int is_error = json_bool(c->result, "isError", 0);
		if (json) {
			char *text = cJSON_Print(c->result);
			printf("%s\n", text);
			free(text);
		} else {
			const cJSON *p;
			int texts = 0;
			cJSON_ArrayForEach(
			    p, cJSON_GetObjectItem(c->result, "content"))
			{
				print_part(p);
				texts +=
				    !strcmp(json_str(p, "type", ""), "text");
			}
			/* servers send it as text too; shown when they do not
			 * (--json has everything) */
			const cJSON *sc =
			    cJSON_GetObjectItem(c->result, "structuredContent");
			if (sc && !texts) {
				char *text = cJSON_Print(sc);
				say_clean(stdout, "structured: ", text, 1);
				free(text);
			}
		}
		if (is_error)
			fprintf(stderr, "assay: the tool said it failed "
			                "(isError)\n");
		rc = is_error ? EXIT_FAILED : EXIT_OK;
	}
	cJSON_Delete(args);
	close_all(c);
	return rc;
}

/* The tool and arguments a conformance scenario expects the client to
 * call (the suite's servers name them); NULL: only initialize and list. */
static const char *scenario_tool(const char *scenario, cJSON **args)
{
	*args = cJSON_CreateObject();
	if (!strcmp(scenario, "tools_call")) {
		cJSON_AddNumberToObject(*args, "a", 2);
		cJSON_AddNumberToObject(*args, "b", 3);
		return "add_numbers";
	}
	if (!strcmp(scenario, "elicitation-sep1034-client-defaults"))
		return "test_client_elicitation_defaults";
	if (!strcmp(scenario, "sse-retry"))
		return "test_reconnection";
	return NULL;
}

/* assay mcp conformance-client URL: connect, list, and call what the
 * scenario asks (every listed tool, for a scenario not known here);
 * exit 0 when every step answered. */
static int conformance_client(struct mcli *c, const char *url)
{
	const char *scenario = getenv("MCP_CONFORMANCE_SCENARIO");
	cJSON *spec = cJSON_CreateObject();
	cJSON_AddStringToObject(spec, "url", url);
	c->accept_defaults = 1;
	struct mcp *m = start_one(c, "conformance", spec);
	cJSON_Delete(spec);
	int rc = EXIT_FAILED;
	if (m)
		wait_started(c);
	if (m && mcp_state(m) == MCP_READY) {
		rc = EXIT_OK;
		cJSON *args = NULL;
		const char *tool =
		    scenario_tool(scenario ? scenario : "", &args);
		const cJSON *t;
		if (tool) {
			if (call_wait(c, m, tool, args, 60) < 0)
				rc = EXIT_FAILED;
		} else if (scenario && strcmp(scenario, "initialize")) {
			/* a copy: list_changed may replace the list meanwhile
			 */
			cJSON *tools = cJSON_Duplicate(mcp_tools(m), 1);
			cJSON_ArrayForEach(t, tools)
			{
				if (call_wait(c, m, json_str(t, "name", ""),
				              args, 60) < 0)
					rc = EXIT_FAILED;
			}
			cJSON_Delete(tools);
		}
		if (c->error)
			say_clean(stderr, "assay: the call failed: ", c->error,
			          0);
		cJSON_Delete(c->result);
		c->result = NULL;
		cJSON_Delete(args);
	} else if (m) {
		fprintf(stderr, "assay: %s\n",
		        mcp_why(m) ? mcp_why(m) : "did not start in time");
	}
	close_all(c);
	return rc;
}

cJSON *mcp_probe(const cJSON *servers, int timeout_ms)
{
	struct mcli c = {.start_ms = timeout_ms};
	c.loop = loop_new();
	const cJSON *s;
	cJSON_ArrayForEach(s, servers) start_one(&c, s->string, s);
	wait_started(&c);
	cJSON *out = cJSON_CreateArray();
	for (int i = 0; i < c.n; i++) {
		struct mcp *m = c.servers[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", mcp_name(m));
		cJSON_AddStringToObject(o, "transport", mcp_transport_name(m));
		enum mcp_state st = mcp_state(m);
		cJSON_AddStringToObject(o, "status",
		                        st == MCP_READY    ? "ready"
		                        : st == MCP_FAILED ? "failed"
		                                           : "not answering");
		if (mcp_why(m))
			cJSON_AddStringToObject(o, "why", mcp_why(m));
		cJSON_AddNumberToObject(o, "tools",
		                        cJSON_GetArraySize(mcp_tools(m)));
		cJSON_AddItemToArray(out, o);
	}
	close_all(&c);
	loop_free(c.loop);
	return out;
}

/* The usage of assay mcp. */
static void mcp_usage(FILE *f)
{
	fprintf(f,
	        "usage: assay mcp list [--json] [-v] [NAME...]\n"
	        "       assay mcp call SERVER TOOL ['{\"arg\": ...}'] [--json] "
	        "[--timeout S]\n"
	        "                      [--accept-defaults] [--repeat N] [-v]\n"
	        "       assay mcp conformance-client URL\n"
	        "  the MCP servers of \"mcp_servers\" in your config (a "
	        "project's only when\n"
	        "  trusted): list starts each and shows its tools; call "
	        "calls one tool\n"
	        "  and prints its result (exit 1 when the tool says it "
	        "failed, 3 when the\n"
	        "  server does not answer); -v shows the servers' logs;\n"
	        "  --repeat N calls N times (after 20) and prints the "
	        "round trip's median\n");
}

int cmd_mcp(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		mcp_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	const char *sub = argv[1];
	int json = 0, verbose = 0, accept = 0, timeout_s = MCLI_CALL_S,
	    repeat = 1;
	char **rest = xcalloc((size_t)argc + 1, sizeof *rest);
	int nrest = 0;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else if (!strcmp(argv[i], "--accept-defaults"))
			accept = 1;
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc &&
		         atoi(argv[i + 1]) > 0 && atoi(argv[i + 1]) <= 86400)
			timeout_s = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc &&
		         atoi(argv[i + 1]) > 0 && atoi(argv[i + 1]) <= 1000000)
			repeat = atoi(argv[++i]);
		else
			rest[nrest++] = argv[i];
	}
	struct mcli c = {.verbose = verbose,
	                 .repeat = repeat,
	                 .accept_defaults = accept,
	                 .start_ms = timeout_s * 1000 < MCLI_START_MS
	                                 ? timeout_s * 1000
	                                 : MCLI_START_MS};
	c.loop = loop_new();
	int rc;
	if (!strcmp(sub, "conformance-client") && nrest >= 1) {
		rc = conformance_client(&c, rest[nrest - 1]);
	} else if (!strcmp(sub, "list") || !strcmp(sub, "call")) {
		struct config cfg;
		char *err = NULL;
		config_defaults(&cfg);
		char *user = config_user_file();
		if (config_load(&cfg, user, NULL, &err) < 0) {
			fprintf(stderr, "assay: %s\n", err);
			free(err);
			rc = EXIT_USAGE;
		} else {
			trust_report(&cfg); /* a project's servers refused */
			rc = !strcmp(sub, "list")
			         ? mcp_list(&c, cfg.mcp_servers, json, nrest,
			                    rest)
			         : mcp_call_cmd(&c, cfg.mcp_servers, json,
			                        timeout_s, nrest, rest);
		}
		free(user);
		config_free(&cfg);
	} else {
		mcp_usage(stderr);
		rc = EXIT_USAGE;
	}
	cJSON_Delete(c.result);
	free(c.error);
	free(rest);
	loop_free(c.loop);
	return rc;
}
