/* mcptool.c: the MCP servers of a run (mcptool.h): started with it,
 * their tools offered to the model as SERVER__TOOL and recorded in
 * mcp_tools, each call run on its server after the policy let it, its
 * result rendered for the model, a table or a large result written into
 * the workspace (mcp/SERVER/TOOL-N.csv|.json|.txt) first. The JSON it
 * reads (MCP results, tool definitions, a call's arguments, the tools
 * resume hands it) is not an event. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/mcp.h"
#include "assay/sandbox.h"
#include "assay/util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MCP_START_MS 30000   /* every server's start, at most */
#define MCP_NAME_MAX 64      /* a tool name the providers take */
#define MCP_DESC_MAX 2048    /* a description offered, at most */
#define MCP_PREVIEW_ROWS 5   /* a table's first rows shown to the model */
#define MCP_CSV_COLUMNS 1000 /* a table wider is left as it came */
#define MCP_CSV_CELLS 2e7    /* ... and one with more cells */
#define MCP_NAME_TRIES 20    /* names tried for a tool before it is left out */

/* A workspace file a result makes. */
struct mcp_write {
	char *rel;
	char *data;
	size_t n;
};

/* The call in flight. */
struct mcp_job {
	struct session *s;
	char *id, *server, *tool;
	struct mcp *m;
	uint64_t call;
	int64_t t0;
	char *text;               /* the result for the model, once it is in */
	char *file;               /* the workspace file its result goes to */
	struct mcp_write *writes; /* files to write, in turn: the result's,
	                             its images */
	int nwrites, wi;
	cJSON *args; /* waiting for the servers to start (a resume) or its
	                server to start again */
	int waiting; /* ... the latter */
	int is_error;
	long rows, cols;
	double bytes;
};

/* An MCP server by name. */
static struct mcp *server_named(const struct session *s, const char *name)
{
	for (int i = 0; i < s->mcp.n; i++)
		if (!strcmp(mcp_name(s->mcp.servers[i]), name))
			return s->mcp.servers[i];
	return NULL;
}

/* The offered tool of that name ({name, server, tool, ...}), or NULL. */
static const cJSON *offered_named(const struct session *s, const char *name)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, s->mcp.offered)
	{
		if (!strcmp(json_str(t, "name", ""), name))
			return t;
	}
	return NULL;
}

/* The name a tool is offered under: SERVER__TOOL, only [A-Za-z0-9_-],
 * at most 64 bytes, not one taken already. */
static char *offer_name(const struct session *s, const cJSON *offered,
                        const char *server, const char *tool)
{
	char *n = xasprintf("%s__%s", server, tool);
	for (char *p = n; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			*p = '_';
	if (strlen(n) > MCP_NAME_MAX - 4)
		n[MCP_NAME_MAX - 4] = '\0';
	(void)s;
	char *name = xstrdup(n);
	for (int k = 2;; k++) {
		int taken = 0;
		const cJSON *t;
		cJSON_ArrayForEach(t, offered)
		{
			taken |= !strcmp(json_str(t, "name", ""), name);
		}
		if (!taken)
			break;
		free(name);
		name = NULL;
		if (k > MCP_NAME_TRIES)
			break; /* left out: the names are taken */
		name = xasprintf("%s_%d", n, k);
	}
	free(n);
	return name;
}

/* A tool's input schema as the providers take it: an object schema with
 * properties, without $schema. */
static cJSON *offer_schema(const cJSON *in)
{
	cJSON *p =
	    cJSON_IsObject(in) ? cJSON_Duplicate(in, 1) : cJSON_CreateObject();
	cJSON_DeleteItemFromObjectCaseSensitive(p, "$schema");
	if (strcmp(json_str(p, "type", ""), "object")) {
		cJSON_DeleteItemFromObjectCaseSensitive(p, "type");
		cJSON_AddStringToObject(p, "type", "object");
	}
	if (!cJSON_IsObject(cJSON_GetObjectItem(p, "properties"))) {
		cJSON_DeleteItemFromObjectCaseSensitive(p, "properties");
		cJSON_AddObjectToObject(p, "properties");
	}
	return p;
}

/* The definition offered to the model of one recorded tool. */
static cJSON *tool_definition(const cJSON *t)
{
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "name", json_str(t, "name", ""));
	const char *desc = json_str(t, "description", "");
	size_t n = strlen(desc);
	n = utf8_complete_prefix(desc, n < MCP_DESC_MAX ? n : MCP_DESC_MAX);
	char *text = xasprintf("(a tool of the MCP server %s, run outside the "
	                       "sandbox) %.*s",
	                       json_str(t, "server", ""), (int)n, desc);
	cJSON_AddStringToObject(d, "description", text);
	free(text);
	cJSON_AddItemToObject(
	    d, "parameters",
	    cJSON_Duplicate(cJSON_GetObjectItem(t, "parameters"), 1));
	return d;
}

/* The tools are known: offered to the model from now on. */
static void offer_all(struct session *s)
{
	cJSON *defs = cJSON_CreateArray();
	const cJSON *t;
	cJSON_ArrayForEach(t, s->mcp.offered)
	    cJSON_AddItemToArray(defs, tool_definition(t));
	conv_add_tools(s, defs);
	cJSON_Delete(defs);
}

/* Every server has started or failed (or the time is up): the record
 * says which and what they offer; the waiting start goes on. */
static void settle(struct session *s)
{
	if (s->mcp.settled)
		return;
	if (s->mcp.deadline)
		loop_timer_cancel(s->loop, s->mcp.deadline);
	s->mcp.deadline = 0;
	cJSON *servers = cJSON_CreateArray();
	cJSON *tools = cJSON_CreateArray();
	for (int i = 0; i < s->mcp.n; i++) {
		struct mcp *m = s->mcp.servers[i];
		int ready = mcp_state(m) == MCP_READY;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", mcp_name(m));
		cJSON_AddStringToObject(o, "transport", mcp_transport_name(m));
		cJSON_AddStringToObject(o, "status",
		                        ready ? "ready" : "failed");
		if (!ready) {
			const char *why = mcp_why(m)
			                      ? mcp_why(m)
			                      : "it did not start in time";
			cJSON_AddStringToObject(o, "why", why);
			char *msg =
			    xasprintf("MCP server %s: %s (its tools are "
			              "not offered)",
			              mcp_name(m), why);
			session_emit(s, ev_error("mcp", msg, -1));
			free(msg);
		} else {
			cJSON_AddStringToObject(o, "protocol", mcp_version(m));
			if (mcp_server_info(m))
				cJSON_AddItemToObject(
				    o, "server",
				    cJSON_Duplicate(mcp_server_info(m), 1));
		}
		cJSON_AddItemToArray(servers, o);
		const cJSON *t, *list = ready ? mcp_tools(m) : NULL;
		cJSON_ArrayForEach(t, list)
		{
			char *name = offer_name(s, tools, mcp_name(m),
			                        json_str(t, "name", ""));
			if (!name) {
				log_warn(
				    "mcp %s: tool %.80s left out: its name is "
				    "taken",
				    mcp_name(m), json_str(t, "name", ""));
				continue;
			}
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "name", name);
			free(name);
			cJSON_AddStringToObject(e, "server", mcp_name(m));
			cJSON_AddStringToObject(e, "tool",
			                        json_str(t, "name", ""));
			const char *d = json_str(t, "description", NULL);
			if (d)
				cJSON_AddStringToObject(e, "description", d);
			cJSON_AddItemToObject(e, "parameters",
			                      offer_schema(cJSON_GetObjectItem(
			                          t, "inputSchema")));
			const cJSON *a = cJSON_GetObjectItem(t, "annotations");
			if (cJSON_IsObject(a))
				cJSON_AddItemToObject(e, "annotations",
				                      cJSON_Duplicate(a, 1));
			cJSON_AddItemToArray(tools, e);
		}
	}
	s->mcp.settled = 1;
	if (s->mcp.restored) { /* the record's tools stay offered */
		cJSON_Delete(servers);
		cJSON_Delete(tools);
	} else {
		cJSON_Delete(s->mcp.offered);
		transcript_sanitize(tools); /* what the record holds */
		s->mcp.offered = cJSON_Duplicate(tools, 1);
		session_emit(s, ev_mcp_tools(servers, tools));
		offer_all(s);
	}
	void (*ready)(struct session *) = s->mcp.ready;
	s->mcp.ready = NULL;
	if (ready)
		ready(s);
}

static void job_call(struct session *s, struct mcp_job *j, const cJSON *args);

/* A server's state changed: a call waiting for it goes on; the start
 * settles once none is starting. */
static void on_changed(struct mcp *m, void *arg)
{
	struct session *s = arg;
	struct mcp_job *j = s->mcp.job;
	if (m && mcp_state(m) != MCP_READY)
		mcptool_elicit_drop_server(s, m); /* their answers go nowhere */
	if (j && j->waiting && m && m == j->m && mcp_state(m) != MCP_STARTING) {
		j->waiting = 0;
		cJSON *args = j->args;
		j->args = NULL;
		job_call(s, j, args);
		cJSON_Delete(args);
	}
	if (s->mcp.settled)
		return;
	for (int i = 0; i < s->mcp.n; i++)
		if (mcp_state(s->mcp.servers[i]) == MCP_STARTING)
			return;
	settle(s);
}

/* The servers' time to start is up. */
static void start_deadline(void *arg)
{
	struct session *s = arg;
	s->mcp.deadline = 0;
	settle(s);
}

/* A server's log line goes to assay's log. */
static void on_log(struct mcp *m, const char *level, const char *text,
                   void *arg)
{
	(void)arg;
	log_info("mcp %s [%s]: %.2000s", mcp_name(m), level, text);
}

/* Whether the configuration wants server name in this run. */
static int wanted(const struct config *c, const char *name)
{
	if (c->mcp_off)
		return 0;
	if (c->mcp_only.n == 0)
		return 1;
	for (size_t i = 0; i < c->mcp_only.n; i++)
		if (!strcmp(c->mcp_only.v[i], name))
			return 1;
	return 0;
}

void mcptool_start(struct session *s, void (*ready)(struct session *s))
{
	s->mcp.ready = ready;
	s->mcp.started = 1;
	const cJSON *spec;
	struct mcp_hooks hk = {.changed = on_changed,
	                       .log = on_log,
	                       .elicit = mcptool_on_elicit,
	                       .arg = s};
	cJSON_ArrayForEach(spec, s->cfg->mcp_servers)
	{
		if (!wanted(s->cfg, spec->string))
			continue;
		char *err = NULL;
		struct mcp *m =
		    mcp_new(s->loop, s->http, spec->string, spec, &hk, &err);
		if (!m) {
			session_emit(s, ev_error("mcp", err, -1));
			free(err);
			continue;
		}
		s->mcp.servers =
		    xrealloc(s->mcp.servers,
		             (size_t)(s->mcp.n + 1) * sizeof *s->mcp.servers);
		s->mcp.servers[s->mcp.n++] = m;
	}
	for (size_t i = 0; i < s->cfg->mcp_only.n; i++)
		if (!cJSON_GetObjectItem(s->cfg->mcp_servers,
		                         s->cfg->mcp_only.v[i])) {
			char *msg = xasprintf("--mcp %s: no such server in "
			                      "\"mcp_servers\"",
			                      s->cfg->mcp_only.v[i]);
			session_emit(s, ev_error("mcp", msg, -1));
			free(msg);
		}
	if (s->mcp.n == 0) {
		s->mcp.settled = 1; /* nothing to record or wait for */
		s->mcp.ready = NULL;
		if (ready)
			ready(s);
		return;
	}
	s->mcp.deadline =
	    loop_timer_add(s->loop, MCP_START_MS, start_deadline, s);
	for (int i = 0; i < s->mcp.n; i++)
		mcp_start(s->mcp.servers[i]);
	on_changed(NULL, s); /* all may have failed at once */
}

int mcptool_busy(const struct session *s)
{
	return s->mcp.started && !s->mcp.settled;
}

void mcptool_restore(struct session *s, const cJSON *tools)
{
	if (s->mcp.restored || s->mcp.started)
		return; /* one mcp_tools per run */
	s->mcp.restored = 1;
	cJSON_Delete(s->mcp.offered);
	s->mcp.offered = cJSON_Duplicate(tools, 1);
	if (!cJSON_IsArray(s->mcp.offered)) {
		cJSON_Delete(s->mcp.offered);
		s->mcp.offered = cJSON_CreateArray();
	}
	offer_all(s);
}

int mcptool_is(const struct session *s, const char *name)
{
	return offered_named(s, name) != NULL;
}

cJSON *mcptool_policy_args(const struct session *s, const char *name,
                           const cJSON *args)
{
	const cJSON *t = offered_named(s, name);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "server", json_str(t, "server", ""));
	cJSON_AddStringToObject(o, "tool", json_str(t, "tool", ""));
	cJSON_AddItemToObject(o, "arguments",
	                      cJSON_IsObject(args) ? cJSON_Duplicate(args, 1)
	                                           : cJSON_CreateObject());
	const cJSON *a = cJSON_GetObjectItem(t, "annotations");
	if (a)
		cJSON_AddItemToObject(o, "annotations", cJSON_Duplicate(a, 1));
	return o;
}

/* --- results ----------------------------------------------------------- */

/* Whether v is a table: a non-empty array of objects whose members are
 * all scalars. */
static int is_rows(const cJSON *v)
{
	if (!cJSON_IsArray(v) || !v->child)
		return 0;
	const cJSON *r, *f;
	cJSON_ArrayForEach(r, v)
	{
		if (!cJSON_IsObject(r))
			return 0;
		cJSON_ArrayForEach(f, r)
		{
			if (cJSON_IsObject(f) || cJSON_IsArray(f))
				return 0;
		}
	}
	return 1;
}

/* The table in v: v itself or a member at most two objects down
 * ({"rows": [...]}, {"data": {"rows": [...]}}), or NULL. */
static const cJSON *find_rows(const cJSON *v, int depth)
{
	if (is_rows(v))
		return v;
	if (!cJSON_IsObject(v) || depth >= 2)
		return NULL;
	const cJSON *m;
	cJSON_ArrayForEach(m, v)
	{
		const cJSON *r = find_rows(m, depth + 1);
		if (r)
			return r;
	}
	return NULL;
}

/* One byte onto b. */
static void put_char(struct buf *b, char c)
{
	buf_append(b, &c, 1);
}

/* One CSV field, quoted when it must be. */
static void csv_field(struct buf *b, const cJSON *v)
{
	char *own = NULL;
	const char *t = "";
	if (cJSON_IsString(v))
		t = v->valuestring;
	else if (cJSON_IsBool(v))
		t = cJSON_IsTrue(v) ? "true" : "false";
	else if (v && !cJSON_IsNull(v))
		t = own = cJSON_PrintUnformatted(v);
	if (!strpbrk(t, ",\"\r\n")) {
		buf_puts(b, t);
	} else {
		put_char(b, '"');
		for (const char *p = t; *p; p++) {
			if (*p == '"')
				put_char(b, '"');
			put_char(b, *p);
		}
		put_char(b, '"');
	}
	free(own);
}

/* rows as CSV: the columns of every row in the order first seen; NULL
 * when it would be too wide or too big to be a table (sparse records:
 * rows x columns cells). */
static char *rows_csv(const cJSON *rows, long *nrows, long *ncols)
{
	cJSON *cols = cJSON_CreateObject(); /* name -> 1, in order */
	const cJSON *r, *f;
	long nc = 0, nr = cJSON_GetArraySize(rows);
	cJSON_ArrayForEach(r, rows)
	{
		cJSON_ArrayForEach(f, r)
		{
			if (cJSON_GetObjectItemCaseSensitive(cols, f->string))
				continue;
			cJSON_AddTrueToObject(cols, f->string);
			if (++nc > MCP_CSV_COLUMNS ||
			    (double)nc * (double)nr > MCP_CSV_CELLS) {
				cJSON_Delete(cols);
				return NULL;
			}
		}
	}
	struct buf b;
	buf_init(&b, 0);
	const cJSON *c;
	cJSON_ArrayForEach(c, cols)
	{
		if (c != cols->child)
			put_char(&b, ',');
		cJSON *name = cJSON_CreateString(c->string);
		csv_field(&b, name);
		cJSON_Delete(name);
	}
	put_char(&b, '\n');
	*nrows = 0;
	cJSON_ArrayForEach(r, rows)
	{
		cJSON_ArrayForEach(c, cols)
		{
			if (c != cols->child)
				put_char(&b, ',');
			csv_field(
			    &b, cJSON_GetObjectItemCaseSensitive(r, c->string));
		}
		put_char(&b, '\n');
		(*nrows)++;
	}
	*ncols = cJSON_GetArraySize(cols);
	cJSON_Delete(cols);
	return buf_detach(&b);
}

/* One part of a result that is not text, in words. */
static void render_part(struct buf *b, const cJSON *p)
{
	const char *type = json_str(p, "type", "");
	if (!strcmp(type, "image")) {
		buf_printf(b, "[an image (%s) from the tool]",
		           json_str(p, "mimeType", "?"));
	} else if (!strcmp(type, "audio")) {
		buf_printf(b,
		           "[audio (%s) from the tool: assay does not take "
		           "audio]",
		           json_str(p, "mimeType", "?"));
	} else if (!strcmp(type, "resource_link")) {
		buf_printf(b, "[resource link: %s %s]", json_str(p, "name", ""),
		           json_str(p, "uri", ""));
	} else if (!strcmp(type, "resource")) {
		const cJSON *r = cJSON_GetObjectItem(p, "resource");
		const char *text = json_str(r, "text", NULL);
		buf_printf(b, "[resource %s%s%s]", json_str(r, "uri", ""),
		           text ? "]\n" : "", text ? text : "");
		if (!text)
			buf_printf(b, " (%s, binary: not shown)",
			           json_str(r, "mimeType", "?"));
	} else {
		buf_printf(b, "[a part of type %.40s: not read]", type);
	}
}

char *mcptool_render(const cJSON *result, int *is_error, char **csv, long *rows,
                     long *cols)
{
	struct buf b;
	buf_init(&b, 0);
	*is_error = json_bool(result, "isError", 0);
	*csv = NULL;
	*rows = *cols = -1;
	int texts = 0;
	const cJSON *p, *table = NULL;
	cJSON *parsed = NULL;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(result, "content"))
	{
		if (b.len)
			put_char(&b, '\n');
		if (strcmp(json_str(p, "type", ""), "text")) {
			render_part(&b, p);
			continue;
		}
		const char *t = json_str(p, "text", "");
		buf_puts(&b, t);
		texts++;
		if (!table && !parsed && (parsed = cJSON_Parse(t)) &&
		    !(table = find_rows(parsed, 0))) {
			cJSON_Delete(parsed);
			parsed = NULL;
		}
	}
	const cJSON *sc = cJSON_GetObjectItem(result, "structuredContent");
	if (sc) {
		const cJSON *st = find_rows(sc, 0);
		if (st)
			table = st;
		if (!texts) {
			char *j = cJSON_Print(sc);
			if (b.len)
				put_char(&b, '\n');
			buf_puts(&b, j);
			free(j);
		}
	}
	if (table && !*is_error && !(*csv = rows_csv(table, rows, cols)))
		*rows = *cols = -1;
	cJSON_Delete(parsed);
	if (!b.len)
		buf_puts(&b, "(the tool returned nothing)");
	return buf_detach(&b);
}

/* --- calls ------------------------------------------------------------- */

static void mcp_job_free(struct mcp_job *j)
{
	cJSON_Delete(j->args);
	free(j->id);
	free(j->server);
	free(j->tool);
	free(j->text);
	free(j->file);
	for (int i = 0; i < j->nwrites; i++) {
		free(j->writes[i].rel);
		free(j->writes[i].data);
	}
	free(j->writes);
	free(j);
}

/* The call is over: mcp_call, then its result (its questions still
 * waiting are cancelled). */
static void job_finish(struct mcp_job *j, const char *error)
{
	struct session *s = j->s;
	if (s->mcp.job == j)
		s->mcp.job = NULL;
	mcptool_elicit_drop(s, j->id);
	struct ev_mcp_call e = {.id = j->id,
	                        .server = j->server,
	                        .tool = j->tool,
	                        .error = error,
	                        .file = j->file,
	                        .duration_ms = (double)(now_ms() - j->t0),
	                        .bytes = j->bytes,
	                        .is_error = j->is_error,
	                        .rows = j->rows,
	                        .columns = j->cols};
	session_emit(s, ev_mcp_call(&e));
	char *id = j->id, *text = j->text;
	int is_error = j->is_error;
	j->id = j->text = NULL;
	mcp_job_free(j);
	tools_finished(s, id, text, is_error);
	free(id);
	free(text);
}

/* Queue a workspace file (data taken). */
static void job_add_write(struct mcp_job *j, char *rel, char *data, size_t n)
{
	j->writes =
	    xrealloc(j->writes, (size_t)(j->nwrites + 1) * sizeof *j->writes);
	j->writes[j->nwrites++] = (struct mcp_write){rel, data, n};
}

/* Write the next file, or the call is over. */
static void job_write_next(struct mcp_job *j);

/* One of the result's files was written (or not). */
static void job_written(void *arg, int rc, const char *err, struct buf *data,
                        cJSON *list)
{
	struct mcp_job *j = arg;
	(void)data, (void)list;
	if (!j->s) { /* the session went first */
		mcp_job_free(j);
		return;
	}
	const char *rel = j->writes[j->wi].rel;
	if (rc < 0) {
		char *t = xasprintf("%s\n[%s could not be saved: %s]", j->text,
		                    rel, err ? err : "?");
		free(j->text);
		j->text = t;
		if (j->file && !strcmp(j->file, rel)) {
			free(j->file);
			j->file = NULL;
		}
	}
	j->wi++;
	job_write_next(j);
}

static void job_write_next(struct mcp_job *j)
{
	if (j->wi >= j->nwrites) {
		job_finish(j, NULL);
		return;
	}
	struct mcp_write *w = &j->writes[j->wi];
	sbx_write_file(j->s->sbx, w->rel, w->data, w->n, job_written, j);
}

/* A path part from a server's or a tool's name. */
static char *path_part(const char *name)
{
	char *p = xstrdup(*name ? name : "_");
	for (char *c = p; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
			*c = '_';
	return p;
}

/* The result, or most of it, goes into a workspace file first: a table
 * as CSV, a result over max_output_bytes whole; the model gets a
 * preview and the file's name. */
static void job_file(struct mcp_job *j, char *csv, const char *ext)
{
	struct session *s = j->s;
	char *srv = path_part(j->server), *tool = path_part(j->tool);
	j->file = xasprintf("mcp/%s/%s-%d.%s", srv, tool, ++s->mcp.ncalls,
	                    csv ? "csv" : ext);
	free(srv);
	free(tool);
	struct buf b;
	buf_init(&b, 0);
	if (csv) {
		job_add_write(j, xstrdup(j->file), csv, strlen(csv));
		buf_printf(
		    &b,
		    "The result is a table of %ld rows and %ld columns, "
		    "saved to %s in the workspace (pandas.read_csv(\"%s\") "
		    "loads it). Its first rows:\n",
		    j->rows, j->cols, j->file, j->file);
		const char *p = csv;
		for (int line = 0; *p && line <= MCP_PREVIEW_ROWS; line++) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
			buf_append(&b, p, n > 500 ? 500 : n);
			if (n > 500)
				buf_puts(&b, "...\n");
			p += n;
		}
	} else {
		job_add_write(j, xstrdup(j->file), xstrdup(j->text),
		              strlen(j->text));
		size_t keep = (size_t)s->cfg->max_output_bytes / 2;
		while (keep > 0 && (j->text[keep] & 0xC0) == 0x80)
			keep--; /* not inside a UTF-8 character */
		buf_append(&b, j->text, keep);
		buf_printf(
		    &b,
		    "\n[... the whole result (%zu bytes) is in %s in the "
		    "workspace]",
		    strlen(j->text), j->file);
	}
	free(j->text);
	j->text = buf_detach(&b);
}

/* One base64 character's value, or -1. */
static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Standard base64 decoded (padding optional, nothing else allowed);
 * NULL when it is not base64. */
static char *b64_decode(const char *in, size_t *n)
{
	size_t len = strlen(in);
	while (len > 0 && in[len - 1] == '=')
		len--;
	char *out = xmalloc(len / 4 * 3 + 3);
	size_t o = 0;
	unsigned acc = 0;
	int bits = 0;
	for (size_t i = 0; i < len; i++) {
		int v = b64_value((unsigned char)in[i]);
		if (v < 0) {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	*n = o;
	return out;
}

/* The result's images land in the workspace as files (the preview shows
 * them, and with send_images auto they go to the model as any image a
 * call makes); the model's text says where. */
static void job_images(struct mcp_job *j, const cJSON *result)
{
	static const char *const types[][2] = {{"image/png", "png"},
	                                       {"image/jpeg", "jpg"},
	                                       {"image/gif", "gif"},
	                                       {"image/webp", "webp"}};
	const cJSON *p;
	int k = 0;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(result, "content"))
	{
		const char *mime = json_str(p, "mimeType", "");
		const char *ext = NULL;
		for (size_t i = 0; i < sizeof types / sizeof *types; i++)
			if (!strcmp(mime, types[i][0]))
				ext = types[i][1];
		const char *b64 = json_str(p, "data", NULL);
		if (strcmp(json_str(p, "type", ""), "image") || !ext || !b64)
			continue;
		size_t n = 0;
		char *bytes = b64_decode(b64, &n);
		if (!bytes)
			continue;
		char *srv = path_part(j->server), *tool = path_part(j->tool);
		char *rel = xasprintf("mcp/%s/%s-%d-image%d.%s", srv, tool,
		                      ++j->s->mcp.ncalls, ++k, ext);
		free(srv);
		free(tool);
		char *t =
		    xasprintf("%s\n[the image is saved to %s]", j->text, rel);
		free(j->text);
		j->text = t;
		job_add_write(j, rel, bytes, n);
	}
}

/* The server answered (or not). */
static void job_done(struct mcp *m, const cJSON *result, const char *err,
                     void *arg)
{
	struct mcp_job *j = arg;
	(void)m;
	j->call = 0;
	if (!result) {
		j->is_error = 1;
		j->text = xasprintf("%s (MCP server %s): %s", j->tool,
		                    j->server, err ? err : "no answer");
		job_finish(j, err ? err : "no answer");
		return;
	}
	char *csv = NULL;
	j->text =
	    mcptool_render(result, &j->is_error, &csv, &j->rows, &j->cols);
	j->bytes = (double)strlen(j->text);
	int big = strlen(j->text) > (size_t)j->s->cfg->max_output_bytes;
	if (csv || big) {
		cJSON *is_json = big && !csv ? cJSON_Parse(j->text) : NULL;
		job_file(j, csv, is_json ? "json" : "txt");
		cJSON_Delete(is_json);
	}
	job_images(j, result);
	job_write_next(j);
}

/* notifications/progress of the call: shown live (never recorded). */
static void job_progress(struct mcp *m, double progress, double total,
                         const char *message, void *arg)
{
	struct mcp_job *j = arg;
	(void)m;
	cJSON *ev = ev_mcp_progress(j->id, progress, total > 0 ? total : 0,
	                            message, now_ms() - j->t0);
	session_show(j->s, ev);
	cJSON_Delete(ev);
}

/* Call job's tool on its server (started and ready by now). */
static void job_call(struct session *s, struct mcp_job *j, const cJSON *args)
{
	j->m = server_named(s, j->server);
	if (j->m && mcp_state(j->m) == MCP_STARTING) { /* started again */
		j->waiting = 1;
		j->args = cJSON_Duplicate(args, 1);
		return;
	}
	if (!j->m || mcp_state(j->m) != MCP_READY) {
		const char *why =
		    j->m && mcp_why(j->m) ? mcp_why(j->m) : "it is not running";
		j->is_error = 1;
		j->text =
		    xasprintf("%s: the MCP server %s cannot be reached: %s",
		              j->tool, j->server, why);
		job_finish(j, why);
		return;
	}
	int secs = s->cfg->timeout_s < INT_MAX / 1000 ? s->cfg->timeout_s
	                                              : INT_MAX / 1000;
	j->call = mcp_call(j->m, j->tool, args, secs * 1000, job_done,
	                   job_progress, j);
}

/* A resumed run's first live MCP call: the servers have started. */
static void lazy_ready(struct session *s)
{
	struct mcp_job *j = s->mcp.job;
	if (!j)
		return;
	cJSON *args = j->args;
	j->args = NULL;
	job_call(s, j, args);
	cJSON_Delete(args);
}

void mcptool_run(struct session *s, const char *id, const char *name,
                 const cJSON *args)
{
	const cJSON *t = offered_named(s, name);
	struct mcp_job *j = xcalloc(1, sizeof *j);
	j->s = s;
	j->id = xstrdup(id);
	j->server = xstrdup(json_str(t, "server", ""));
	j->tool = xstrdup(json_str(t, "tool", ""));
	j->t0 = now_ms();
	j->rows = j->cols = -1;
	s->mcp.job = j;
	if (!s->mcp.started) { /* offered from the record: start them */
		j->args = cJSON_Duplicate(args, 1);
		mcptool_start(s, lazy_ready);
		return;
	}
	job_call(s, j, args);
}

void mcptool_cancel(struct session *s)
{
	struct mcp_job *j = s->mcp.job;
	int waiting = j && !j->call && (j->waiting || j->args);
	if (!j || (!j->call && !waiting))
		return; /* its files are being written: it ends soon */
	if (j->call)
		mcp_cancel(j->m, j->call, "cancelled by the user");
	j->call = 0;
	j->waiting = 0; /* not sent once its server is up */
	cJSON_Delete(j->args);
	j->args = NULL;
	if (s->freeing) {
		s->mcp.job = NULL;
		mcp_job_free(j);
		return;
	}
	j->is_error = 1;
	j->text = waiting ? xasprintf("%s (MCP server %s): cancelled before "
	                              "it was sent",
	                              j->tool, j->server)
	                  : xasprintf("%s (MCP server %s): cancelled (the "
	                              "server was told)",
	                              j->tool, j->server);
	job_finish(j, "cancelled");
}

void mcptool_hold(struct session *s, struct mcp *m, const char *call, int hold)
{
	const struct mcp_job *j = s->mcp.job;
	if (!j || j->m != m || !j->call || strcmp(j->id, call))
		return;
	if (!hold) /* another question of the call still waits */
		for (size_t i = 0; i < session_elicitations_pending(s); i++) {
			const char *c = session_elicitation_at(s, i)->call;
			if (c && !strcmp(c, call))
				return;
		}
	mcp_call_hold(m, j->call, hold);
}

const char *mcptool_call_of(const struct session *s, const struct mcp *m)
{
	const struct mcp_job *j = s->mcp.job;
	return j && j->m == m && j->call ? j->id : NULL;
}

void mcptool_close(struct session *s)
{
	mcptool_elicit_drop(s, NULL);
	for (int i = 0; i < s->mcp.n; i++)
		mcp_close(s->mcp.servers[i]);
}

void mcptool_free(struct session *s)
{
	struct mcp_job *j = s->mcp.job;
	if (j && (j->call || j->waiting || j->args))
		mcptool_cancel(s);
	else if (j && j->nwrites)
		j->s = NULL; /* its file's write frees it */
	else if (j)
		mcp_job_free(j);
	s->mcp.job = NULL;
	mcptool_elicit_drop(s, NULL); /* freeing: answered, not told */
	if (s->mcp.deadline)
		loop_timer_cancel(s->loop, s->mcp.deadline);
	for (int i = 0; i < s->mcp.n; i++)
		mcp_free(s->mcp.servers[i]);
	free(s->mcp.servers);
	s->mcp.servers = NULL;
	s->mcp.n = 0;
	cJSON_Delete(s->mcp.offered);
	s->mcp.offered = NULL;
}
