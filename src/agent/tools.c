/* tools.c: the tools offered to the model (shell, python, write_file,
 * read_file, list_files, view_image in images.c): their definitions,
 * argument checks, and how each runs through the sandbox. Full outputs
 * go to the run dir; the model gets a bounded head and tail. The python
 * tool's kernel lives in pytool.c and shares the output side
 * (tool_run_*) with shell. The JSON it reads (a model's tool calls and
 * their arguments, sandbox listings) is not an event. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/events.h"
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
	cJSON *python; /* a python cell's result, for its exec_end */
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

static const char *VIEW_IMAGE_DEF =
    "{\"name\":\"view_image\",\"description\":\"Look at an image "
    "file of the workspace (PNG, JPEG, GIF or WebP), such as a chart you "
    "saved: it comes back with the result, scaled to what you take. "
    "Check a figure this way before you describe it.\",\"parameters\":"
    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":"
    "\"string\",\"description\":\"Workspace-relative path of the "
    "image\"},\"detail\":{\"type\":\"string\",\"enum\":[\"auto\","
    "\"low\",\"high\"],\"description\":\"low: a small version "
    "(fewer tokens); default auto\"}},\"required\":[\"path\"]}}";

/* view_image is offered unless images never go to the model. */
static int tools_view_offered(const struct config *cfg)
{
	return !cfg || !cfg->send_images || strcmp(cfg->send_images, "off");
}

cJSON *tools_definitions(const struct config *cfg)
{
	cJSON *defs = cJSON_Parse(TOOL_DEFS);
	if (tools_view_offered(cfg))
		cJSON_AddItemToArray(defs, cJSON_Parse(VIEW_IMAGE_DEF));
	return defs;
}

/* The call fails before it runs: its result is the message (an error). */
static void tools_fail(struct session *s, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void tools_fail(struct session *s, const char *id, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	tools_finished(s, id, msg, 1);
	free(msg);
}

/* --- shell --------------------------------------------------------- */

/* Emit what each stream gathered since the last exec_output event. */
static void tool_run_flush(struct tool_run *r)
{
	for (int i = 0; i < 2; i++) {
		struct stream_state *st = &r->out[i];
		if (!st->pending_bytes)
			continue;
		size_t n =
		    utf8_complete_prefix(st->pending.data, st->pending.len);
		char *text = utf8_sanitize(st->pending.data, n, NULL);
		/* bytes held back (a split character) go with the next
		 * event; bytes never buffered make this one truncated */
		size_t held = st->pending.len - n;
		cJSON *ev = ev_exec_output(r->id, i == 0 ? "stdout" : "stderr",
		                           st->pending_bytes - held, text,
		                           st->pending_bytes > st->pending.len);
		free(text);
		st->logged += n;
		buf_consume(&st->pending, n);
		st->pending_bytes = held;
		session_emit(r->s, ev);
	}
}

/* The output timer: flush what arrived (at most every OUTPUT_FLUSH_MS). */
static void tool_run_flush_timer(void *arg)
{
	struct tool_run *r = arg;
	r->flush_timer = 0;
	tool_run_flush(r);
}

/* Write all of data to the exec file (a failure is logged, not fatal). */
static void tool_run_write_all(int fd, const char *data, size_t n)
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
	tool_run_write_all(st->fd, data, n < keep ? n : (size_t)keep);
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
		                                tool_run_flush_timer, r);
}

/* Close the output files and free the run. */
static void tool_run_free(struct tool_run *r)
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
	cJSON_Delete(r->python);
	free(r);
}

void tool_run_python(struct tool_run *r, cJSON *result)
{
	cJSON_Delete(r->python);
	r->python = result;
}

/* The model's view of both streams: head and tail of each. */
static char *tool_run_text(struct tool_run *r)
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
	tool_run_flush(r);
	cJSON *ev = ev_exec_end(&(struct ev_exec_end){
	    .id = r->id,
	    .exit_code = ex->exit_code,
	    .signal = ex->signal,
	    .timed_out = ex->timed_out,
	    .cancelled = ex->cancelled,
	    .duration_ms = ex->duration_ms,
	    .stdout_bytes = r->out[0].bytes,
	    .stderr_bytes = r->out[1].bytes,
	    .output_file = r->out[0].path,
	    .output_file_cut = r->out[0].file_cut || r->out[1].file_cut,
	    .output_file_cut_at = r->out[0].file_max,
	    .error = ex->error,
	    .python = r->python});
	session_emit(s, ev);
	context_output_file(s, r->id, r->out[0].path);
	char *text = tool_run_text(r);
	if (s->calls.running == r)
		s->calls.running = NULL;
	tool_run_free(r);
	return text;
}

/* The last line of a shell result: how the command ended. */
static void tools_shell_status(struct buf *b, const struct sbx_exit *ex)
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

/* A shell command ended: exec_end, then its tool result. */
static void tools_shell_exited(void *arg, const struct sbx_exit *ex)
{
	struct tool_run *r = arg;
	struct session *s = r->s;
	char *id = xstrdup(r->id);
	struct buf b;
	buf_init(&b, 0);
	char *text = tool_run_end(r, ex);
	buf_puts(&b, text);
	free(text);
	tools_shell_status(&b, ex);
	int is_error =
	    ex->error || ex->timed_out || ex->cancelled || ex->exit_code != 0;
	if (s->state != SESSION_DONE)
		tools_finished(s, id, buf_str(&b), is_error);
	free(id);
	buf_free(&b);
}

/* Open exec/<id>.stdout (i 0) or .stderr (i 1) for a run; -1 + *err. */
static int tool_run_open(struct session *s, struct tool_run *r, int i,
                         const char *fid, char **err)
{
	struct stream_state *st = &r->out[i];
	/* a call id the model repeats must not overwrite an earlier
	 * call's output: number the later ones */
	for (int k = 1; k < 1000; k++) {
		free(st->path);
		st->path =
		    k == 1 ? xasprintf("%s/exec/%s.%s", s->rundir.run_dir, fid,
		                       i == 0 ? "stdout" : "stderr")
		           : xasprintf("%s/exec/%s-%d.%s", s->rundir.run_dir,
		                       fid, k, i == 0 ? "stdout" : "stderr");
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
static char *tools_safe_id(const char *id)
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
	char *fid = tools_safe_id(id);
	int rc = tool_run_open(s, r, 0, fid, err) < 0 ||
	         tool_run_open(s, r, 1, fid, err) < 0;
	free(fid);
	if (rc) {
		tool_run_free(r);
		return NULL;
	}
	session_emit(s, ev_exec_start(id, command));
	s->calls.running = r;
	r->started = now_ms();
	return r;
}

/* The shell tool: run the command in the sandbox, its output streamed. */
static void tools_run_shell(struct session *s, const char *id,
                            const cJSON *args)
{
	const char *command = json_str(args, "command", NULL);
	if (!command || !*command) {
		tools_fail(s, id, "shell: missing \"command\" (a string)");
		return;
	}
	/* the model may shorten the user's timeout, never lengthen it */
	int timeout = json_int(args, "timeout_s", 0);
	if (timeout <= 0 || timeout > s->cfg->timeout_s)
		timeout = s->cfg->timeout_s;
	char *err = NULL;
	struct tool_run *r = tool_run_begin(s, id, command, &err);
	if (!r) {
		tools_fail(s, id, "shell: %s", err);
		free(err);
		return;
	}
	struct sbx_exec_req req = {.command = command, .timeout_s = timeout};
	struct sbx_exec_obs obs = {tool_run_output, tools_shell_exited, r};
	r->exec = sbx_exec(s->sbx, &req, &obs, &err);
	if (!r->exec) {
		struct sbx_exit ex = {.exit_code = -1, .error = err};
		tools_shell_exited(r, &ex);
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

/* Free a file tool call in flight. */
static void file_op_free(struct file_op *op)
{
	free(op->id);
	free(op->rel);
	free(op);
}

/* Lines offset (1-based) to offset + limit of text (limit 0: to the end). */
static char *tools_slice_lines(const char *text, size_t len, long offset,
                               long limit)
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

/* read_file: the file arrived; the result is its text, head and tail. */
static void tools_read_done(void *arg, int rc, const char *err,
                            struct buf *data, cJSON *list)
{
	struct file_op *op = arg;
	(void)list;
	if (rc < 0) {
		tools_fail(op->s, op->id, "read_file: %s", err);
	} else if (memchr(data->data ? data->data : "", '\0', data->len)) {
		tools_fail(op->s, op->id,
		           "read_file: %s is a binary file (%zu bytes); "
		           "inspect it with a command instead",
		           op->rel, data->len);
	} else {
		char *part = tools_slice_lines(buf_str(data), data->len,
		                               op->offset, op->limit);
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
	file_op_free(op);
}

/* read_file "@exec/NAME": a call's full output in the run dir's exec/,
 * which a trimmed result's stub names (context.c). Only a plain file
 * name of that directory, opened without following links. */
static void tools_read_exec(struct session *s, const char *id, const char *name,
                            long offset, long limit)
{
	size_t n = strlen(name);
	int ok =
	    n > 0 && n < 200 &&
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW"
	                 "XYZ0123456789_.-") == n &&
	    name[0] != '.' &&
	    ((n > 7 && !strcmp(name + n - 7, ".stdout")) ||
	     (n > 7 && !strcmp(name + n - 7, ".stderr")));
	if (!ok) {
		tools_fail(s, id,
		           "read_file: @exec/%s is not a call's output: the "
		           "names are those the elided results give "
		           "(@exec/<file>.stdout)",
		           name);
		return;
	}
	char *path = xasprintf("%s/exec/%s", s->rundir.run_dir, name);
	struct buf data;
	buf_init(&data, 0);
	char *err = NULL;
	char *shown = xasprintf("@exec/%s", name);
	int fd = open_regular_at(AT_FDCWD, path, O_RDONLY | O_NOFOLLOW, 0,
	                         shown, &err);
	free(shown);
	char chunk[65536];
	ssize_t got = 0;
	while (fd >= 0 && data.len < READ_FILE_MAX &&
	       (got = read(fd, chunk, sizeof chunk)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = xasprintf("@exec/%s: %s", name, strerror(errno));
			break;
		}
		size_t room = READ_FILE_MAX - data.len;
		buf_append(&data, chunk,
		           (size_t)got < room ? (size_t)got : room);
	}
	if (fd >= 0)
		close(fd);
	free(path);
	struct file_op *op = xcalloc(1, sizeof *op);
	*op = (struct file_op){.s = s, .offset = offset, .limit = limit};
	op->id = xstrdup(id);
	op->rel = xasprintf("@exec/%s", name);
	tools_read_done(op, err ? -1 : 0, err, &data, NULL);
	free(err);
	buf_free(&data);
}

/* write_file: the file was written, or why not. */
static void tools_write_done(void *arg, int rc, const char *err,
                             struct buf *data, cJSON *list)
{
	struct file_op *op = arg;
	(void)data, (void)list;
	if (rc < 0)
		tools_fail(op->s, op->id, "write_file: %s", err);
	else {
		char *msg =
		    xasprintf("wrote %zu bytes to %s", op->written, op->rel);
		tools_finished(op->s, op->id, msg, 0);
		free(msg);
	}
	file_op_free(op);
}

/* list_files: the listing arrived; one line per entry, bounded. */
static void tools_list_done(void *arg, int rc, const char *err,
                            struct buf *data, cJSON *list)
{
	struct file_op *op = arg;
	(void)data;
	if (rc < 0) {
		tools_fail(op->s, op->id, "list_files: %s", err);
		file_op_free(op);
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
	file_op_free(op);
}

/* A file tool call on path, normalised; NULL when the path is refused (the
 * call has failed). */
static struct file_op *file_op_new(struct session *s, const char *id,
                                   const char *tool, const char *path)
{
	char *rel = NULL, *err = NULL;
	if (path_normalize(path, &rel, &err) < 0) {
		tools_fail(s, id, "%s: %s", tool, err);
		free(err);
		return NULL;
	}
	struct file_op *op = xcalloc(1, sizeof *op);
	op->s = s;
	op->id = xstrdup(id);
	op->rel = rel;
	return op;
}

/* The file tools (read_file, write_file, list_files): their arguments
 * checked, the operation started. */
static void tools_run_file(struct session *s, const char *id, const char *name,
                           const cJSON *args)
{
	const char *path = json_str(args, "path", NULL);
	if (!strcmp(name, "list_files")) {
		struct file_op *op =
		    file_op_new(s, id, name, path ? path : ".");
		if (op)
			sbx_list(s->sbx, op->rel, 1, 20000, tools_list_done,
			         op);
		return;
	}
	if (!path) {
		tools_fail(s, id, "%s: missing \"path\" (a string)", name);
		return;
	}
	if (!strcmp(name, "read_file") && !strncmp(path, "@exec/", 6)) {
		tools_read_exec(s, id, path + 6, json_long(args, "offset", 1),
		                json_long(args, "limit", 0));
		return;
	}
	if (!strcmp(name, "read_file")) {
		struct file_op *op = file_op_new(s, id, name, path);
		if (!op)
			return;
		op->offset = json_long(args, "offset", 1);
		op->limit = json_long(args, "limit", 0);
		sbx_read_file(s->sbx, op->rel, READ_FILE_MAX, tools_read_done,
		              op);
		return;
	}
	const char *content = json_str(args, "content", NULL);
	if (!content) {
		tools_fail(s, id, "write_file: missing \"content\" (a string)");
		return;
	}
	struct file_op *op = file_op_new(s, id, name, path);
	if (!op)
		return;
	if (!strcmp(op->rel, ".")) {
		tools_fail(s, id, "write_file: a file path is needed");
		file_op_free(op);
		return;
	}
	op->written = strlen(content);
	sbx_write_file(s->sbx, op->rel, content, op->written, tools_write_done,
	               op);
}

void tools_run(struct session *s, const cJSON *call)
{
	const char *id = json_str(call, "id", "");
	const char *name = json_str(call, "name", "");
	const cJSON *args = cJSON_GetObjectItem(call, "arguments");
	const char *bad = json_str(call, "arguments_error", NULL);
	if (bad && json_bool(call, "cut_off", 0)) {
		tools_fail(
		    s, id,
		    "%s: not run: %s. Retry with a shorter call: write a "
		    "long file in parts (write_file the first part, then "
		    "append the rest with shell, e.g. cat >> FILE <<'EOF'), "
		    "or shorten the code",
		    name, bad);
		return;
	}
	if (bad) {
		tools_fail(s, id,
		           "%s: the arguments are not valid JSON (%s); send "
		           "a JSON object",
		           name, bad);
		return;
	}
	if (!cJSON_IsObject(args)) {
		tools_fail(s, id, "%s: arguments must be a JSON object", name);
		return;
	}
	if (!strcmp(name, "shell"))
		tools_run_shell(s, id, args);
	else if (!strcmp(name, "python"))
		pytool_run(s, id, args);
	else if (!strcmp(name, "write_file") || !strcmp(name, "read_file") ||
	         !strcmp(name, "list_files"))
		tools_run_file(s, id, name, args);
	else if (!strcmp(name, "view_image") && tools_view_offered(s->cfg))
		images_view(s, id, args);
	else if (mcptool_is(s, name))
		mcptool_run(s, id, name, args);
	else
		tools_fail(s, id,
		           "unknown tool \"%s\": the tools are shell, "
		           "python, write_file, read_file%s",
		           name,
		           tools_view_offered(s->cfg)
		               ? ", list_files and view_image"
		               : " and list_files");
}

void tools_cancel(struct session *s)
{
	if (s->calls.running && s->calls.running->exec && s->sbx)
		sbx_exec_cancel(s->calls.running->exec);
	pytool_cancel(s);
	images_cancel(s);
	mcptool_cancel(s);
}
