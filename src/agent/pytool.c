/* pytool.c: the python tool. One kernel (share/kernel/assay_kernel.py,
 * embedded in the binary) lives in the sandbox for the whole run as a
 * long-lived exec whose stdin stays open: cells go in as frames, their
 * output and results come back as frames (pyframe.c), so state survives
 * between calls. assay keeps the clock: at a cell's timeout it sends an
 * interrupt frame (KeyboardInterrupt in the kernel, state kept); if no
 * result comes within PY_GRACE_MS the kernel is killed. A kernel that
 * dies (killed, crashed, out of memory) is replaced by a new one at the
 * next cell, and the results say that the state was lost.
 *
 * The kernel starts with the run: its hello names the sandbox's Python
 * and libraries for the system prompt, so the first model request waits
 * for it (about 40 ms; see pytool_start). It needs only python3 and a
 * process with pipes; a backend without a persistent pipe would carry
 * the same frames over its own channel (a websocket exec, or a kernel
 * reading frames from a named pipe in the workspace). The JSON it reads
 * (the python helper's frames, a tool's arguments) is not an event. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/path.h"
#include "assay/util.h"

#include "assay/buf.h"
#include "assay/sandbox.h"

#include <glob.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PY_GRACE_MS 3000       /* from the interrupt to the kill */
#define PY_HELLO_MS 10000      /* from the spawn to the hello */
#define PY_LIFETIME_S 2592000  /* the kernel's exec (cells have their own) */
#define PY_DIAG_MAX 8192       /* the kernel's own stderr kept for messages */
#define PY_KERNEL_TYPES "hoer" /* frames a kernel may send */
#define PY_CODE_MAX (8u << 20) /* one cell's source */

struct pycell {
	char *id; /* the tool call's */
	char *code;
	long seq; /* the protocol's */
	int timeout_s;
	struct tool_run *run;
	uint64_t timer, grace;
	int sent, timed_out, cancelled, new_session;
	int64_t t0;
};

struct pykernel {
	struct session *s;
	struct sbx_exec *exec;
	struct pyframe_reader rd;
	int generation;
	int64_t t_spawn;
	int ready, broken;
	uint64_t hello_timer;
	void (*on_ready)(struct session *);
	struct buf diag;   /* the kernel's own stderr (start-up errors) */
	char *kill_reason; /* why assay killed it */
	struct pycell *cell;
	long next_seq;
	int busy, exited; /* in a callback; exited meanwhile */
	struct sbx_exit exit;
};

static void py_kernel_exited(struct pykernel *k, const struct sbx_exit *ex);

/* --- small pieces -------------------------------------------------- */

/* Free a cell and cancel its timers. */
static void py_cell_free(struct pykernel *k, struct pycell *c)
{
	if (c->timer)
		loop_timer_cancel(k->s->loop, c->timer);
	if (c->grace)
		loop_timer_cancel(k->s->loop, c->grace);
	free(c->id);
	free(c->code);
	free(c);
}

/* Stop the kernel; its exit (through the loop) does the rest. */
static void py_kernel_kill(struct pykernel *k, const char *reason)
{
	if (reason && !k->kill_reason) {
		k->kill_reason = xstrdup(reason);
		log_warn("python: killing kernel %d: %s", k->generation,
		         reason);
	}
	if (k->exec && !k->exited)
		sbx_exec_cancel(k->exec);
}

/* Send the kernel one frame; a closed stdin kills it. -1 on failure. */
static int py_kernel_send(struct pykernel *k, char type, const cJSON *msg)
{
	char *text = json_print(msg);
	struct buf f;
	buf_init(&f, 0);
	pyframe_encode(&f, type, text, strlen(text));
	int rc = sbx_exec_write(k->exec, f.data, f.len);
	buf_free(&f);
	free(text);
	if (rc < 0)
		py_kernel_kill(k, "its stdin is closed");
	return rc;
}

/* python_session: a kernel started (its hello) or ended (reason). */
static void py_emit_session(struct pykernel *k, const char *state,
                            const cJSON *hello, const char *reason)
{
	if (k->s->state == SESSION_DONE)
		return;
	session_emit(k->s, ev_python_session(state, k->generation, hello,
	                                     now_ms() - k->t_spawn, reason));
}

/* --- the end of a cell ---------------------------------------------- */

/* Finish the running cell: exec_end, then the tool result of its output
 * and the notes. */
static void py_cell_end(struct pykernel *k, const struct sbx_exit *ex,
                        const char *notes, int is_error)
{
	struct session *s = k->s;
	struct pycell *c = k->cell;
	k->cell = NULL;
	struct buf b;
	buf_init(&b, 0);
	if (c->new_session)
		buf_puts(&b, "[note: this cell ran in a new Python session; "
		             "the previous one was lost, and with it the "
		             "variables, imports and data of earlier cells]\n");
	char *text = tool_run_end(c->run, ex);
	buf_puts(&b, text);
	free(text);
	buf_puts(&b, notes);
	if (!b.len)
		buf_puts(&b, "(no output)");
	char *id = c->id;
	c->id = NULL;
	py_cell_free(k, c);
	if (s->state != SESSION_DONE)
		tools_finished(s, id, buf_str(&b), is_error);
	free(id);
	buf_free(&b);
}

/* A note naming the figures a cell left open and unsaved. */
static void py_add_figures(struct buf *notes, const cJSON *figs)
{
	int n = cJSON_GetArraySize(figs);
	if (n <= 0)
		return;
	buf_printf(notes, "[%d open figure%s not saved (", n, n > 1 ? "s" : "");
	const cJSON *f;
	int i = 0;
	cJSON_ArrayForEach(f, figs)
	{
		if (cJSON_IsString(f)) {
			char *t = utf8_sanitize(f->valuestring,
			                        strlen(f->valuestring), NULL);
			buf_printf(notes, "%s%.80s", i++ ? ", " : "", t);
			free(t);
		}
	}
	buf_puts(notes, "): save with plt.savefig(\"output/NAME.png\") to "
	                "keep it, then plt.close()]\n");
}

/* What the cell gave besides its streams, for its exec_end (an export
 * to a notebook tells them apart); the transcript makes its strings valid
 * UTF-8. */
static void py_keep_result(struct pycell *c, const cJSON *r, const char *value,
                           const char *tb)
{
	cJSON *res = cJSON_CreateObject();
	const cJSON *error = cJSON_GetObjectItem(r, "error");
	if (value)
		cJSON_AddStringToObject(res, "value", value);
	if (cJSON_IsObject(error)) {
		cJSON *e = cJSON_AddObjectToObject(res, "error");
		cJSON_AddStringToObject(e, "type",
		                        json_str(error, "type", "?"));
		cJSON_AddStringToObject(e, "message",
		                        json_str(error, "message", ""));
	}
	if (tb)
		cJSON_AddStringToObject(res, "traceback", tb);
	tool_run_python(c->run, res);
}

/* A result frame: the value and traceback join the cell's streams as
 * the REPL would print them. */
static void py_on_result(struct pykernel *k, const char *payload, size_t n)
{
	struct pycell *c = k->cell;
	cJSON *r = cJSON_ParseWithLength(payload, n);
	if (!r) {
		py_kernel_kill(k, "it sent a result that is not JSON");
		return;
	}
	if (!c || !c->sent || json_num(r, "id", -1) != (double)c->seq) {
		cJSON_Delete(r); /* a late answer to an interrupt */
		return;
	}
	const char *status = json_str(r, "status", "error");
	const char *value = json_str(r, "value", NULL);
	const char *tb = json_str(r, "traceback", NULL);
	if (value) {
		tool_run_output(c->run, SBX_STDOUT, value, strlen(value));
		tool_run_output(c->run, SBX_STDOUT, "\n", 1);
	}
	if (tb)
		tool_run_output(c->run, SBX_STDERR, tb, strlen(tb));
	py_keep_result(c, r, value, tb);
	int ok = !strcmp(status, "ok");
	int interrupted = !strcmp(status, "interrupted");
	struct sbx_exit ex = {.exit_code = ok ? 0 : 1,
	                      .timed_out = c->timed_out && !ok,
	                      .cancelled = c->cancelled && !ok,
	                      .duration_ms = now_ms() - c->t0};
	struct buf notes;
	buf_init(&notes, 0);
	if (interrupted && c->timed_out)
		buf_printf(&notes,
		           "[interrupted (KeyboardInterrupt) at the cell's "
		           "timeout of %d s; the Python session keeps its "
		           "state]\n",
		           c->timeout_s);
	else if (interrupted && c->cancelled)
		buf_puts(&notes, "[cancelled by the user (KeyboardInterrupt); "
		                 "the Python session keeps its state]\n");
	else if (!ok) {
		const cJSON *error = cJSON_GetObjectItem(r, "error");
		const char *t = json_str(error, "type", "?");
		char *type = utf8_sanitize(t, strlen(t), NULL);
		buf_printf(&notes,
		           "[the cell raised %.100s; the Python session "
		           "keeps its state: what ran before the error is "
		           "still defined]\n",
		           type);
		free(type);
	}
	py_add_figures(&notes, cJSON_GetObjectItem(r, "open_figures"));
	cJSON_Delete(r);
	py_cell_end(k, &ex, buf_str(&notes), !ok);
	buf_free(&notes);
}

/* --- sending a cell, timeouts --------------------------------------- */

/* An interrupted cell did not stop in time: kill the kernel. */
static void py_on_grace(void *arg)
{
	struct pykernel *k = arg;
	k->cell->grace = 0;
	py_kernel_kill(k, "the cell did not stop after an interrupt");
}

/* Interrupt the running cell (KeyboardInterrupt); the kernel dies if it
 * does not stop. */
static void py_interrupt_cell(struct pykernel *k)
{
	struct pycell *c = k->cell;
	if (!c->grace)
		c->grace =
		    loop_timer_add(k->s->loop, PY_GRACE_MS, py_on_grace, k);
	cJSON *m = cJSON_CreateObject();
	cJSON_AddNumberToObject(m, "id", (double)c->seq);
	py_kernel_send(k, 'i', m);
	cJSON_Delete(m);
}

/* The cell's timeout: interrupt it. */
static void py_on_timeout(void *arg)
{
	struct pykernel *k = arg;
	k->cell->timer = 0;
	k->cell->timed_out = 1;
	py_interrupt_cell(k);
}

/* Send the waiting cell to the kernel and start its clock. */
static void py_send_cell(struct pykernel *k)
{
	struct pycell *c = k->cell;
	cJSON *m = cJSON_CreateObject();
	cJSON_AddNumberToObject(m, "id", (double)c->seq);
	cJSON_AddStringToObject(m, "code", c->code);
	c->sent = 1;
	c->t0 = now_ms();
	if (py_kernel_send(k, 'x', m) == 0 && c->timeout_s > 0)
		c->timer = loop_timer_add(
		    k->s->loop, (int64_t)c->timeout_s * 1000, py_on_timeout, k);
	cJSON_Delete(m);
}

/* --- the sandbox's python, remembered ------------------------------ */

/* What the hello reports (python version, libraries) only changes with
 * the sandbox's software: the image for a container, the interpreter
 * and its package directories for the local sandbox. Remembered under
 * that key, it lets the first request go out without waiting ~40 ms for
 * a kernel that a run may never use. */
static char *py_env_cache_path(struct session *s)
{
	char *dir = path_cache_dir("python-env");
	if (!dir)
		return NULL;
	const char *image_id = sbx_image_id(s->sbx);
	struct buf key;
	buf_init(&key, 0);
	buf_printf(&key, "v1 %s image=%s", sbx_name(s->sbx), image_id);
	if (!*image_id) {
		/* no image identity: the host's /usr is the sandbox's */
		glob_t g;
		const char *pat[] = {"/usr/bin/python3", "/usr/lib/python3*",
		                     "/usr/lib/python3/dist-packages",
		                     "/usr/local/lib/python3*/dist-packages",
		                     NULL};
		for (int i = 0; pat[i]; i++) {
			if (glob(pat[i], 0, NULL, &g) != 0)
				continue;
			for (size_t j = 0; j < g.gl_pathc; j++) {
				struct stat st;
				if (stat(g.gl_pathv[j], &st) == 0)
					buf_printf(
					    &key, "|%s:%llu:%lld.%09ld",
					    g.gl_pathv[j],
					    (unsigned long long)st.st_ino,
					    (long long)st.st_mtim.tv_sec,
					    st.st_mtim.tv_nsec);
			}
			globfree(&g);
		}
	}
	char hash[65];
	sha256_hex(key.data, key.len, hash);
	buf_free(&key);
	char *path = xasprintf("%s/%.32s.json", dir, hash);
	free(dir);
	return path;
}

/* The hello remembered for this sandbox's software, or NULL. */
static cJSON *py_env_cache_read(struct session *s)
{
	char *path = py_env_cache_path(s);
	cJSON *h = path ? json_parse_file(path, 1 << 20, NULL) : NULL;
	free(path);
	if (h && !cJSON_IsObject(cJSON_GetObjectItem(h, "packages")) &&
	    !cJSON_IsArray(cJSON_GetObjectItem(h, "packages"))) {
		cJSON_Delete(h);
		h = NULL;
	}
	return h;
}

/* Remember the hello for this sandbox's software. */
static void py_env_cache_write(struct session *s, const cJSON *h)
{
	char *path = py_env_cache_path(s);
	if (!path)
		return;
	char *dir = xstrdup(path);
	*strrchr(dir, '/') = '\0';
	char *text = json_print(h);
	if (mkdir_p(dir, NULL) == 0)
		write_file_replace(path, text, strlen(text), NULL);
	free(text);
	free(dir);
	free(path);
}

/* --- the kernel's output -------------------------------------------- */

/* The kernel is ready: tell the run (python_session, the prompt) and send
 * a waiting cell. */
static void py_on_hello(struct pykernel *k, const char *payload, size_t n)
{
	struct session *s = k->s;
	cJSON *h = cJSON_ParseWithLength(payload, n);
	if (!h || k->ready) {
		cJSON_Delete(h);
		py_kernel_kill(k, "it sent a bad hello");
		return;
	}
	k->ready = 1;
	if (k->hello_timer)
		loop_timer_cancel(s->loop, k->hello_timer);
	k->hello_timer = 0;
	log_info("python: kernel %d ready in %lld ms (python %s, its own "
	         "start-up %.0f ms)",
	         k->generation, (long long)(now_ms() - k->t_spawn),
	         json_str(h, "python", "?"), json_num(h, "startup_ms", -1));
	py_emit_session(k, "started", h, NULL);
	if (k->on_ready) {
		void (*ready)(struct session *) = k->on_ready;
		k->on_ready = NULL;
		prompt_add_python(&s->system_prompt, s->cfg, h, NULL);
		py_env_cache_write(s, h);
		ready(s);
	}
	cJSON_Delete(h);
	if (k->cell && !k->cell->sent)
		py_send_cell(k);
}

/* One frame from the kernel: hello, result, or a cell's output. */
static void py_on_frame(void *arg, char type, const char *payload, size_t n)
{
	struct pykernel *k = arg;
	if (k->broken)
		return;
	if (type == 'h') {
		py_on_hello(k, payload, n);
	} else if (type == 'r') {
		py_on_result(k, payload, n);
	} else if (k->cell && k->cell->sent) {
		tool_run_output(k->cell->run,
		                type == 'o' ? SBX_STDOUT : SBX_STDERR, payload,
		                n);
	} else {
		log_debug("python: %zu bytes of output between cells dropped",
		          n);
	}
}

/* The kernel's stdout (frames) and stderr (kept for messages). */
static void py_on_kernel_output(void *arg, enum sbx_stream which,
                                const char *data, size_t n)
{
	struct pykernel *k = arg;
	if (which == SBX_STDERR) {
		/* start-up errors, faulthandler's dump of a crash */
		if (k->diag.len < PY_DIAG_MAX)
			buf_append(&k->diag, data,
			           n < PY_DIAG_MAX - k->diag.len
			               ? n
			               : PY_DIAG_MAX - k->diag.len);
		if (k->cell && k->cell->sent)
			tool_run_output(k->cell->run, SBX_STDERR, data, n);
		return;
	}
	if (k->broken)
		return;
	char *err = NULL;
	k->busy++;
	int rc = pyframe_feed(&k->rd, data, n, py_on_frame, k, &err);
	k->busy--;
	if (rc < 0) {
		k->broken = 1;
		char *why = xasprintf("it broke the protocol (%s)", err);
		py_kernel_kill(k, why);
		free(why);
		free(err);
	}
	if (k->exited && !k->busy)
		py_kernel_exited(k, &k->exit);
}

/* --- the kernel's end ------------------------------------------------ */

/* What happened to the kernel, for the cell that was running. */
static char *py_death_notice(struct pykernel *k, const struct sbx_exit *ex)
{
	const struct config *cfg = k->s->cfg;
	const char *lost = "the next cell starts a new session; variables, "
	                   "imports and data of earlier cells are lost";
	struct pycell *c = k->cell;
	if (k->kill_reason && c && c->timed_out)
		return xasprintf("[the cell did not stop within %d s of the "
		                 "interrupt at its timeout of %d s, so the "
		                 "Python session was killed: %s]\n",
		                 PY_GRACE_MS / 1000, c->timeout_s, lost);
	if (k->kill_reason && c && c->cancelled)
		return xasprintf("[cancelled by the user: the Python session "
		                 "was stopped; %s]\n",
		                 lost);
	if (k->kill_reason)
		return xasprintf("[the Python session was killed: %s; %s]\n",
		                 k->kill_reason, lost);
	if (ex->cancelled)
		return xasprintf("[cancelled: the sandbox was stopped]\n");
	if (ex->signal == SIGKILL)
		return xasprintf("[the Python session was killed (SIGKILL), "
		                 "most likely for using too much memory (the "
		                 "limit is %ld MB); %s]\n",
		                 cfg->mem_mb, lost);
	if (ex->signal == SIGXCPU)
		return xasprintf("[the Python session used up its CPU-time "
		                 "limit (%ld s for the whole session) and was "
		                 "stopped; %s]\n",
		                 cfg->cpu_s, lost);
	if (ex->signal)
		return xasprintf("[the Python session crashed (signal %d, %s) "
		                 "while running this cell; %s]\n",
		                 ex->signal, strsignal(ex->signal), lost);
	if (ex->error)
		return xasprintf("[the Python session could not run: %s]\n",
		                 ex->error);
	return xasprintf("[the Python session exited with code %d while "
	                 "running this cell (os._exit() or a fatal "
	                 "error); %s]\n",
	                 ex->exit_code, lost);
}

/* A kernel that never said hello: why, from its stderr. */
static char *py_startup_failure(struct pykernel *k, const struct sbx_exit *ex)
{
	char *diag =
	    utf8_sanitize(k->diag.data ? k->diag.data : "", k->diag.len, NULL);
	size_t n = strlen(diag);
	while (n && (diag[n - 1] == '\n' || diag[n - 1] == ' '))
		diag[--n] = '\0';
	char *why;
	if (n)
		why = xasprintf("python3 did not start in the sandbox: %.2000s",
		                diag);
	else if (k->kill_reason)
		why = xasprintf("python3 did not start in the sandbox: %s",
		                k->kill_reason);
	else if (ex->error)
		why = xasprintf("python3 did not start in the sandbox: %s",
		                ex->error);
	else
		why = xasprintf("python3 did not start in the sandbox (exit "
		                "code %d, signal %d)",
		                ex->exit_code, ex->signal);
	free(diag);
	return why;
}

/* Free a kernel that has exited. */
static void py_kernel_free(struct pykernel *k)
{
	if (k->hello_timer)
		loop_timer_cancel(k->s->loop, k->hello_timer);
	if (k->s->py.kernel == k)
		k->s->py.kernel = NULL;
	pyframe_reader_free(&k->rd);
	buf_free(&k->diag);
	free(k->kill_reason);
	free((char *)k->exit.error);
	free(k);
}

/* The kernel ended: end its cell with what happened, tell the run, free
 * it. */
static void py_kernel_exited(struct pykernel *k, const struct sbx_exit *ex)
{
	struct session *s = k->s;
	if (s->py.kernel == k)
		s->py.kernel = NULL;
	k->exec = NULL;
	int ending = ex->cancelled && !k->kill_reason;
	char *why = k->ready ? NULL : py_startup_failure(k, ex);
	if (!ending)
		s->py.lost = 1;
	log_info("python: kernel %d ended (exit %d, signal %d)%s%s",
	         k->generation, ex->exit_code, ex->signal, why ? ": " : "",
	         why ? why : "");
	if (k->cell) {
		struct pycell *c = k->cell;
		struct sbx_exit cx = *ex;
		cx.timed_out = c->timed_out;
		cx.cancelled = c->cancelled || ex->cancelled;
		cx.duration_ms = c->sent ? now_ms() - c->t0 : 0;
		char *notes = why ? xasprintf("[python: %s]\n", why)
		                  : py_death_notice(k, ex);
		if (!c->sent)
			c->new_session = 0;
		py_cell_end(k, &cx, notes, 1);
		free(notes);
	}
	py_emit_session(k, "ended", NULL,
	                why              ? why
	                : ending         ? "the sandbox was stopped"
	                : k->kill_reason ? k->kill_reason
	                : ex->signal     ? strsignal(ex->signal)
	                                 : "exited");
	if (k->on_ready) {
		void (*ready)(struct session *) = k->on_ready;
		k->on_ready = NULL;
		prompt_add_python(&s->system_prompt, s->cfg, NULL,
		                  why ? why : "it ended at start-up");
		ready(s);
	}
	free(why);
	py_kernel_free(k);
}

/* The kernel's exec ended; inside one of our callbacks the end waits for
 * it. */
static void py_on_kernel_exit(void *arg, const struct sbx_exit *ex)
{
	struct pykernel *k = arg;
	if (k->busy) {
		/* inside one of our callbacks: finish after it */
		k->exited = 1;
		k->exit = *ex;
		k->exit.error = ex->error ? xstrdup(ex->error) : NULL;
		k->exec = NULL;
		return;
	}
	k->exited = 1;
	py_kernel_exited(k, ex);
}

/* No hello in time: kill the kernel. */
static void py_on_hello_timeout(void *arg)
{
	struct pykernel *k = arg;
	k->hello_timer = 0;
	py_kernel_kill(k, "no hello within 10 s");
}

/* --- starting ------------------------------------------------------- */

/* Start a kernel in the sandbox (s->py.kernel); NULL + *err. */
static struct pykernel *py_kernel_spawn(struct session *s, char **err)
{
	char *src =
	    agent_data_file("kernel/assay_kernel.py", embed_assay_kernel_py);
	/* python3 from the sandbox's PATH: /usr/bin/python3 locally;
	 * -S: the kernel imports site itself (see its top) */
	const char *argv[] = {"python3", "-u", "-S", "-X",
	                      "utf8",    "-c", src,  NULL};
	/* a result frame ends the reply to a cell (or an interrupt) */
	struct sbx_exec_req req = {.argv = argv,
	                           .timeout_s = PY_LIFETIME_S,
	                           .keep_stdin = 1,
	                           .reply_end = "r"};
	struct pykernel *k = xcalloc(1, sizeof *k);
	k->s = s;
	pyframe_reader_init(&k->rd, PY_KERNEL_TYPES, PYFRAME_MAX);
	buf_init(&k->diag, 0);
	k->t_spawn = now_ms();
	struct sbx_exec_obs obs = {py_on_kernel_output, py_on_kernel_exit, k};
	k->exec = sbx_exec(s->sbx, &req, &obs, err);
	free(src);
	if (!k->exec) {
		pyframe_reader_free(&k->rd);
		buf_free(&k->diag);
		free(k);
		return NULL;
	}
	k->generation = ++s->py.generation;
	k->hello_timer =
	    loop_timer_add(s->loop, PY_HELLO_MS, py_on_hello_timeout, k);
	s->py.kernel = k;
	return k;
}

/* The run's first request waits for the kernel's hello, which carries
 * the library versions (read from the names of the dist-info
 * directories, without importing anything), unless they are known from
 * an earlier run on the same sandbox software (py_env_cache_*). The whole
 * start, bwrap and python3 included, takes about 40 ms here. */
void pytool_start(struct session *s, void (*ready)(struct session *))
{
	cJSON *known = py_env_cache_read(s);
	if (known) {
		/* the kernel starts with the first python cell */
		log_info("python: libraries from the cache (%s)",
		         json_str(known, "python", "?"));
		prompt_add_python(&s->system_prompt, s->cfg, known, NULL);
		cJSON_Delete(known);
		ready(s);
		return;
	}
	char *err = NULL;
	struct pykernel *k = py_kernel_spawn(s, &err);
	if (!k) {
		char *why = xasprintf("cannot start python3: %s", err);
		prompt_add_python(&s->system_prompt, s->cfg, NULL, why);
		free(why);
		free(err);
		ready(s);
		return;
	}
	k->on_ready = ready;
}

void pytool_run(struct session *s, const char *id, const cJSON *args)
{
	const char *code = json_str(args, "code", NULL);
	char *err = NULL;
	if (!code) {
		tools_finished(s, id, "python: missing \"code\" (a string)", 1);
		return;
	}
	if (strlen(code) > PY_CODE_MAX) {
		tools_finished(s, id,
		               "python: the code is too long (over 8 MiB): "
		               "write it to a file and run that instead",
		               1);
		return;
	}
	if (s->py.kernel && s->py.kernel->cell) {
		tools_finished(s, id, "python: a cell is already running", 1);
		return;
	}
	/* the model may shorten the user's timeout, never lengthen it */
	int timeout = json_int(args, "timeout_s", 0);
	if (timeout <= 0 || timeout > s->cfg->timeout_s)
		timeout = s->cfg->timeout_s;
	struct tool_run *run = tool_run_begin(s, id, code, &err);
	if (!run) {
		char *msg = xasprintf("python: %s", err);
		tools_finished(s, id, msg, 1);
		free(msg);
		free(err);
		return;
	}
	struct pykernel *k =
	    s->py.kernel ? s->py.kernel : py_kernel_spawn(s, &err);
	if (!k) {
		struct sbx_exit ex = {.exit_code = -1, .error = err};
		char *text = tool_run_end(run, &ex);
		char *msg = xasprintf("%s[python: cannot start python3 in the "
		                      "sandbox: %s]",
		                      text, err);
		tools_finished(s, id, msg, 1);
		free(msg);
		free(text);
		free(err);
		return;
	}
	struct pycell *c = xcalloc(1, sizeof *c);
	c->id = xstrdup(id);
	c->code = xstrdup(code);
	c->seq = ++k->next_seq;
	c->timeout_s = timeout;
	c->run = run;
	c->new_session = s->py.lost;
	s->py.lost = 0;
	k->cell = c;
	if (k->ready)
		py_send_cell(k);
}

void pytool_cancel(struct session *s)
{
	struct pykernel *k = s->py.kernel;
	if (!k)
		return;
	k->on_ready = NULL; /* the run is ending: no first request */
	struct pycell *c = k->cell;
	if (!c)
		return;
	if (c->cancelled || !c->sent) {
		c->cancelled = 1;
		py_kernel_kill(k, "cancelled by the user");
		return;
	}
	c->cancelled = 1;
	py_interrupt_cell(k);
}
