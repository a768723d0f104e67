/* tools.c: the tools offered to the model (shell, python, write_file,
 * read_file, list_files): their definitions, argument checks, and how
 * each runs through the sandbox. Full outputs go to the run dir; the
 * model gets a bounded head and tail. The python tool's kernel lives in
 * pytool.c and shares the output side (tool_run_*) with shell. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/path.h"
#include "assay/sandbox.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_FILE_MAX (4u << 20)         /* read_file reads at most this much */
#define EVENT_TEXT_MAX 8192              /* text of one exec_output event */
#define TRANSCRIPT_TEXT_MAX (256u << 10) /* per call, in the transcript */
#define OUTPUT_FLUSH_MS 50

struct stream_state {
	int fd; /* exec/<id>.stdout or .stderr */
	char *path;
	struct headtail ht;
	uint64_t bytes;
	struct buf pending; /* not yet in an exec_output event */
	uint64_t pending_bytes;
	uint64_t logged;   /* text bytes put in the transcript */
	uint64_t file_max; /* the exec file stops growing here */
	int file_cut;      /* ... and did */
};

struct tool_run {
	struct session *s;
	char *id;
	char *command;
	struct sbx_exec *exec;
	struct stream_state out[2];
	uint64_t flush_timer;
	int64_t started;
};

static const char *TOOL_DEFS =
    "["
    "{\"name\":\"shell\",\"description\":\"Run a bash command in "
    "/workspace inside the sandbox (no network). Returns stdout, stderr "
    "and the exit code; long outputs are cut to their head and "
    "tail.\",\"parameters\":{\"type\":\"object\",\"properties\":{"
    "\"command\":{\"type\":\"string\",\"description\":\"The bash "
    "command\"},\"timeout_s\":{\"type\":\"integer\",\"description\":"
    "\"Seconds before the command is killed (default from the "
    "configuration)\"}},\"required\":[\"command\"]}},"
    "{\"name\":\"python\",\"description\":\"Run Python code in a "
    "persistent Python session inside the sandbox (working directory "
    "/workspace, no network), like a notebook cell: variables, imports "
    "and loaded data survive between calls. Returns stdout and stderr "
    "as they were printed, the value of a trailing expression as the "
    "REPL shows it, or the exception with its traceback; long outputs "
    "are cut to their head and tail.\",\"parameters\":{\"type\":"
    "\"object\",\"properties\":{\"code\":{\"type\":\"string\","
    "\"description\":\"Python source to run\"},\"timeout_s\":{"
    "\"type\":\"integer\",\"description\":\"Seconds before the cell "
    "is interrupted with KeyboardInterrupt (the session keeps its "
    "state; default from the configuration)\"}},\"required\":["
    "\"code\"]}},"
    "{\"name\":\"write_file\",\"description\":\"Write a text file "
    "under /workspace, creating parent directories; replaces an "
    "existing file.\",\"parameters\":{\"type\":\"object\","
    "\"properties\":{\"path\":{\"type\":\"string\",\"description\":"
    "\"Workspace-relative path\"},\"content\":{\"type\":\"string\"}},"
    "\"required\":[\"path\",\"content\"]}},"
    "{\"name\":\"read_file\",\"description\":\"Read a text file under "
    "/workspace, optionally a range of lines.\",\"parameters\":{"
    "\"type\":\"object\",\"properties\":{\"path\":{\"type\":"
    "\"string\"},\"offset\":{\"type\":\"integer\",\"description\":"
    "\"First line, 1-based\"},\"limit\":{\"type\":\"integer\","
    "\"description\":\"Number of lines\"}},\"required\":[\"path\"]}},"
    "{\"name\":\"list_files\",\"description\":\"List the files under a "
    "workspace directory (recursively) with their sizes.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":{"
    "\"type\":\"string\",\"description\":\"Workspace-relative "
    "directory (default: the workspace)\"}},\"required\":[]}}"
    "]";

cJSON *tools_definitions(void)
{
	return cJSON_Parse(TOOL_DEFS);
}

static void finish_error(struct session *s, const char *id, const char *fmt,
                         ...) __attribute__((format(printf, 3, 4)));

static void finish_error(struct session *s, const char *id, const char *fmt,
                         ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	tools_finished(s, id, msg, 1);
	free(msg);
}

/* --- shell --------------------------------------------------------- */

static void flush_output(struct tool_run *r)
{
	for (int i = 0; i < 2; i++) {
		struct stream_state *st = &r->out[i];
		if (!st->pending_bytes)
			continue;
		size_t n =
		    utf8_complete_prefix(st->pending.data, st->pending.len);
		cJSON *ev = event_new("exec_output");
		cJSON_AddStringToObject(ev, "id", r->id);
		cJSON_AddStringToObject(ev, "stream",
		                        i == 0 ? "stdout" : "stderr");
		cJSON_AddNumberToObject(ev, "bytes", (double)st->pending_bytes);
		char *text = utf8_sanitize(st->pending.data, n, NULL);
		cJSON_AddStringToObject(ev, "text", text);
		free(text);
		/* bytes held back (a split character) go with the next
		 * event; bytes never buffered make this one truncated */
		size_t held = st->pending.len - n;
		if (st->pending_bytes > st->pending.len)
			cJSON_AddBoolToObject(ev, "truncated", 1);
		cJSON_SetNumberValue(cJSON_GetObjectItem(ev, "bytes"),
		                     (double)(st->pending_bytes - held));
		st->logged += n;
		buf_consume(&st->pending, n);
		st->pending_bytes = held;
		session_emit(r->s, ev);
	}
}

static void flush_timer_fired(void *arg)
{
	struct tool_run *r = arg;
	r->flush_timer = 0;
	flush_output(r);
}

static void write_all(int fd, const char *data, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, data, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			log_warn("exec output: %s", strerror(errno));
			return;
		}
		data += w;
		n -= (size_t)w;
	}
}

/* Feed one chunk of a command's output: the full file, the model's
 * head and tail, and (bounded) the exec_output events. */
void tool_run_output(void *arg, enum sbx_stream which, const char *data,
                     size_t n)
{
	struct tool_run *r = arg;
	struct stream_state *st = &r->out[which == SBX_STDERR];
	/* the sandbox's file-size limit does not bind assay's own copy */
	uint64_t keep =
	    st->bytes >= st->file_max ? 0 : st->file_max - st->bytes;
	write_all(st->fd, data, n < keep ? n : (size_t)keep);
	if (n > keep)
		st->file_cut = 1;
	if (memchr(data, '\0', n)) {
		/* the model's text is a C string: a NUL would cut it, so
		 * it becomes an invalid byte, shown as U+FFFD */
		char *copy = xmalloc(n);
		for (size_t i = 0; i < n; i++)
			copy[i] = data[i] ? data[i] : (char)0xff;
		headtail_feed(&st->ht, copy, n);
		free(copy);
	} else {
		headtail_feed(&st->ht, data, n);
	}
	st->bytes += n;
	st->pending_bytes += n;
	/* the transcript keeps a bounded part of the text; the file all */
	size_t room = EVENT_TEXT_MAX > st->pending.len
	                  ? EVENT_TEXT_MAX - st->pending.len
	                  : 0;
	if (st->logged + st->pending.len >= TRANSCRIPT_TEXT_MAX)
		room = 0;
	buf_append(&st->pending, data, n < room ? n : room);
	if (!r->flush_timer)
		r->flush_timer = loop_timer_add(r->s->loop, OUTPUT_FLUSH_MS,
		                                flush_timer_fired, r);
}

static void free_run(struct tool_run *r)
{
	if (r->flush_timer)
		loop_timer_cancel(r->s->loop, r->flush_timer);
	for (int i = 0; i < 2; i++) {
		if (r->out[i].fd >= 0)
			close(r->out[i].fd);
		free(r->out[i].path);
		headtail_free(&r->out[i].ht);
		buf_free(&r->out[i].pending);
	}
	free(r->id);
	free(r->command);
	free(r);
}

/* The model's view of both streams: head and tail of each. */
static char *output_text(struct tool_run *r)
{
	struct buf b;
	buf_init(&b, 0);
	for (int i = 0; i < 2; i++) {
		struct stream_state *st = &r->out[i];
		if (!st->bytes)
			continue;
		char *text = headtail_render(&st->ht, st->path);
		char *clean = utf8_sanitize(text, strlen(text), NULL);
		if (i == 1)
			buf_puts(&b, b.len ? "\n[stderr]\n" : "[stderr]\n");
		buf_puts(&b, clean);
		free(text);
		free(clean);
	}
	if (b.len && b.data[b.len - 1] != '\n')
		buf_puts(&b, "\n");
	return buf_detach(&b);
}

char *tool_run_end(struct tool_run *r, const struct sbx_exit *ex)
{
	struct session *s = r->s;
	flush_output(r);
	cJSON *ev = event_new("exec_end");
	cJSON_AddStringToObject(ev, "id", r->id);
	cJSON_AddNumberToObject(ev, "exit_code", ex->exit_code);
	cJSON_AddNumberToObject(ev, "signal", ex->signal);
	cJSON_AddBoolToObject(ev, "timed_out", ex->timed_out);
	cJSON_AddBoolToObject(ev, "cancelled", ex->cancelled);
	cJSON_AddNumberToObject(ev, "duration_ms", (double)ex->duration_ms);
	cJSON_AddNumberToObject(ev, "stdout_bytes", (double)r->out[0].bytes);
	cJSON_AddNumberToObject(ev, "stderr_bytes", (double)r->out[1].bytes);
	cJSON_AddStringToObject(ev, "output_file", r->out[0].path);
	if (r->out[0].file_cut || r->out[1].file_cut)
		cJSON_AddNumberToObject(ev, "output_file_cut_at",
		                        (double)r->out[0].file_max);
	if (ex->error)
		cJSON_AddStringToObject(ev, "error", ex->error);
	session_emit(s, ev);
	char *text = output_text(r);
	if (s->running == r)
		s->running = NULL;
	free_run(r);
	return text;
}

static void shell_status(struct buf *b, const struct sbx_exit *ex)
{
	if (ex->error)
		buf_printf(b, "[could not run: %s]", ex->error);
	else if (ex->timed_out)
		buf_printf(b,
		           "[timed out after %.1f s: the command and its "
		           "children were killed]",
		           (double)ex->duration_ms / 1000);
	else if (ex->cancelled)
		buf_printf(b, "[cancelled by the user]");
	else if (ex->signal)
		buf_printf(b, "[killed by signal %d]", ex->signal);
	else
		buf_printf(b, "[exit code %d]", ex->exit_code);
}

static void on_exec_exit(void *arg, const struct sbx_exit *ex)
{
	struct tool_run *r = arg;
	struct session *s = r->s;
	char *id = xstrdup(r->id);
	struct buf b;
	buf_init(&b, 0);
	char *text = tool_run_end(r, ex);
	buf_puts(&b, text);
	free(text);
	shell_status(&b, ex);
	int is_error =
	    ex->error || ex->timed_out || ex->cancelled || ex->exit_code != 0;
	if (s->state != SESSION_DONE)
		tools_finished(s, id, buf_str(&b), is_error);
	free(id);
	buf_free(&b);
}

static int open_output(struct session *s, struct tool_run *r, int i,
                       const char *fid, char **err)
{
	struct stream_state *st = &r->out[i];
	/* a call id the model repeats must not overwrite an earlier
	 * call's output: number the later ones */
	for (int k = 1; k < 1000; k++) {
		free(st->path);
		st->path = k == 1
		               ? xasprintf("%s/exec/%s.%s", s->run_dir, fid,
		                           i == 0 ? "stdout" : "stderr")
		               : xasprintf("%s/exec/%s-%d.%s", s->run_dir, fid,
		                           k, i == 0 ? "stdout" : "stderr");
		st->fd = open(
		    st->path,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (st->fd >= 0 || errno != EEXIST)
			break;
	}
	if (st->fd < 0)
		return set_err(err, "%s: %s", st->path, strerror(errno));
	st->file_max = (uint64_t)s->cfg->fsize_mb << 20;
	size_t half = s->cfg->max_output_bytes / 4;
	headtail_init(&st->ht, half, half);
	buf_init(&st->pending, 0);
	return 0;
}

/* Call ids come from the model: keep file names to a safe alphabet. */
static char *safe_id(const char *id)
{
	char *p = xstrndup(id, strnlen(id, 64));
	for (char *c = p; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
			*c = '_';
	return p;
}

struct tool_run *tool_run_begin(struct session *s, const char *id,
                                const char *command, char **err)
{
	struct tool_run *r = xcalloc(1, sizeof *r);
	r->s = s;
	r->id = xstrdup(id);
	r->command = xstrdup(command);
	r->out[0].fd = r->out[1].fd = -1;
	char *fid = safe_id(id);
	int rc = open_output(s, r, 0, fid, err) < 0 ||
	         open_output(s, r, 1, fid, err) < 0;
	free(fid);
	if (rc) {
		free_run(r);
		return NULL;
	}
	cJSON *ev = event_new("exec_start");
	cJSON_AddStringToObject(ev, "id", id);
	cJSON_AddStringToObject(ev, "command", command);
	session_emit(s, ev);
	s->running = r;
	r->started = now_ms();
	return r;
}

static void run_shell(struct session *s, const char *id, const cJSON *args)
{
	const char *command = json_str(args, "command", NULL);
	if (!command || !*command) {
		finish_error(s, id, "shell: missing \"command\" (a string)");
		return;
	}
	/* the model may shorten the user's timeout, never lengthen it */
	int timeout = (int)json_num(args, "timeout_s", 0);
	if (timeout <= 0 || timeout > s->cfg->timeout_s)
		timeout = s->cfg->timeout_s;
	char *err = NULL;
	struct tool_run *r = tool_run_begin(s, id, command, &err);
	if (!r) {
		finish_error(s, id, "shell: %s", err);
		free(err);
		return;
	}
	struct sbx_exec_req req = {.command = command, .timeout_s = timeout};
	struct sbx_exec_obs obs = {tool_run_output, on_exec_exit, r};
	r->exec = s->sbx->ops->exec(s->sbx, &req, &obs, &err);
	if (!r->exec) {
		struct sbx_exit ex = {.exit_code = -1, .error = err};
		on_exec_exit(r, &ex);
		free(err);
	}
}

/* --- file tools ---------------------------------------------------- */

struct file_op {
	struct session *s;
	char *id;
	char *rel;
	long offset, limit;
	size_t written;
};

static void free_op(struct file_op *op)
{
	free(op->id);
	free(op->rel);
	free(op);
}

static char *slice_lines(const char *text, size_t len, long offset, long limit)
{
	const char *p = text, *end = text + len;
	for (long line = 1; line < offset && p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	const char *q = p;
	for (long n = 0; (limit <= 0 || n < limit) && q < end; n++) {
		const char *nl = memchr(q, '\n', (size_t)(end - q));
		q = nl ? nl + 1 : end;
	}
	return xstrndup(p, (size_t)(q - p));
}

static void on_read_done(void *arg, int rc, const char *err, struct buf *data,
                         cJSON *list)
{
	struct file_op *op = arg;
	(void)list;
	if (rc < 0) {
		finish_error(op->s, op->id, "read_file: %s", err);
	} else if (memchr(data->data ? data->data : "", '\0', data->len)) {
		finish_error(op->s, op->id,
		             "read_file: %s is a binary file (%zu bytes); "
		             "inspect it with a command instead",
		             op->rel, data->len);
	} else {
		char *part = slice_lines(buf_str(data), data->len, op->offset,
		                         op->limit);
		struct headtail ht;
		size_t half = op->s->cfg->max_output_bytes / 2;
		headtail_init(&ht, half, half);
		headtail_feed(&ht, part, strlen(part));
		char *where = xasprintf("%s (use offset and limit to read "
		                        "the rest)",
		                        op->rel);
		char *shown = headtail_render(&ht, where);
		char *clean = utf8_sanitize(shown, strlen(shown), NULL);
		tools_finished(op->s, op->id, clean, 0);
		free(clean);
		free(shown);
		free(where);
		free(part);
		headtail_free(&ht);
	}
	free_op(op);
}

static void on_write_done(void *arg, int rc, const char *err, struct buf *data,
                          cJSON *list)
{
	struct file_op *op = arg;
	(void)data, (void)list;
	if (rc < 0)
		finish_error(op->s, op->id, "write_file: %s", err);
	else {
		char *msg =
		    xasprintf("wrote %zu bytes to %s", op->written, op->rel);
		tools_finished(op->s, op->id, msg, 0);
		free(msg);
	}
	free_op(op);
}

static void on_list_done(void *arg, int rc, const char *err, struct buf *data,
                         cJSON *list)
{
	struct file_op *op = arg;
	(void)data;
	if (rc < 0) {
		finish_error(op->s, op->id, "list_files: %s", err);
		free_op(op);
		return;
	}
	struct buf b;
	buf_init(&b, 0);
	const cJSON *e;
	size_t n = 0, shown_max = 2000;
	cJSON_ArrayForEach(e, list)
	{
		if (n++ >= shown_max)
			continue;
		const char *type = json_str(e, "type", "file");
		char *name =
		    utf8_sanitize(json_str(e, "path", "?"),
		                  strlen(json_str(e, "path", "?")), NULL);
		if (!strcmp(type, "dir"))
			buf_printf(&b, "%s/\n", name);
		else if (!strcmp(type, "link"))
			buf_printf(&b, "%s (symlink)\n", name);
		else
			buf_printf(&b, "%s  %.0f bytes\n", name,
			           json_num(e, "size", 0));
		free(name);
	}
	if (n > shown_max)
		buf_printf(&b, "[... %zu more entries not shown]\n",
		           n - shown_max);
	if (!n)
		buf_puts(&b, "(empty)\n");
	char *text = buf_detach(&b);
	tools_finished(op->s, op->id, text, 0);
	free(text);
	free_op(op);
}

static struct file_op *new_op(struct session *s, const char *id,
                              const char *tool, const char *path)
{
	char *rel = NULL, *err = NULL;
	if (path_normalize(path, &rel, &err) < 0) {
		finish_error(s, id, "%s: %s", tool, err);
		free(err);
		return NULL;
	}
	struct file_op *op = xcalloc(1, sizeof *op);
	op->s = s;
	op->id = xstrdup(id);
	op->rel = rel;
	return op;
}

static void run_file_tool(struct session *s, const char *id, const char *name,
                          const cJSON *args)
{
	const char *path = json_str(args, "path", NULL);
	if (!strcmp(name, "list_files")) {
		struct file_op *op = new_op(s, id, name, path ? path : ".");
		if (op)
			s->sbx->ops->list(s->sbx, op->rel, 1, 20000,
			                  on_list_done, op);
		return;
	}
	if (!path) {
		finish_error(s, id, "%s: missing \"path\" (a string)", name);
		return;
	}
	if (!strcmp(name, "read_file")) {
		struct file_op *op = new_op(s, id, name, path);
		if (!op)
			return;
		op->offset = (long)json_num(args, "offset", 1);
		op->limit = (long)json_num(args, "limit", 0);
		s->sbx->ops->read_file(s->sbx, op->rel, READ_FILE_MAX,
		                       on_read_done, op);
		return;
	}
	const char *content = json_str(args, "content", NULL);
	if (!content) {
		finish_error(s, id,
		             "write_file: missing \"content\" (a string)");
		return;
	}
	struct file_op *op = new_op(s, id, name, path);
	if (!op)
		return;
	if (!strcmp(op->rel, ".")) {
		finish_error(s, id, "write_file: a file path is needed");
		free_op(op);
		return;
	}
	op->written = strlen(content);
	s->sbx->ops->write_file(s->sbx, op->rel, content, op->written,
	                        on_write_done, op);
}

void tools_run(struct session *s, const cJSON *call)
{
	const char *id = json_str(call, "id", "");
	const char *name = json_str(call, "name", "");
	const cJSON *args = cJSON_GetObjectItem(call, "arguments");
	const char *bad = json_str(call, "arguments_error", NULL);
	if (bad) {
		finish_error(s, id,
		             "%s: the arguments are not valid JSON (%s); send "
		             "a JSON object",
		             name, bad);
		return;
	}
	if (!cJSON_IsObject(args)) {
		finish_error(s, id, "%s: arguments must be a JSON object",
		             name);
		return;
	}
	if (!strcmp(name, "shell"))
		run_shell(s, id, args);
	else if (!strcmp(name, "python"))
		pytool_run(s, id, args);
	else if (!strcmp(name, "write_file") || !strcmp(name, "read_file") ||
	         !strcmp(name, "list_files"))
		run_file_tool(s, id, name, args);
	else
		finish_error(s, id,
		             "unknown tool \"%s\": the tools are shell, "
		             "python, write_file, read_file and list_files",
		             name);
}

void tools_cancel(struct session *s)
{
	if (s->running && s->running->exec && s->sbx)
		s->sbx->ops->cancel(s->running->exec);
	pytool_cancel(s);
}
