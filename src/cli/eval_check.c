/* eval_check.c: the verdict on a finished session of `assay eval`:
 * what its end says (exit code, outputs missing), then the task's check:
 * the answer's patterns, the check script in a fresh sandbox. The JSON
 * it reads (a task's check) is not an event. */
#include "assay/config.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/sandbox.h"
#include "assay/session.h"
#include "assay/util.h"
#include "cli/cli.h"
#include "cli/eval.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The host paths the task's check names (its script, its files): as
 * the suite's other paths, inside its project or trusted. */
void job_check_paths(struct job *jb, const char *origin)
{
	struct eval *ev = jb->ev;
	const cJSON *ck = cJSON_GetObjectItem(jb->task, "check"), *f;
	const cJSON *sc = cJSON_GetObjectItem(ck, "script");
	if (sc)
		config_content_path(&ev->content, origin, "check.script", sc,
		                    ev->suite_dir, "runs", jb->refused);
	cJSON_ArrayForEach(f, cJSON_GetObjectItem(ck, "files"))
	{
		config_content_path(&ev->content, origin, "check.files", f,
		                    ev->suite_dir, "gives the check",
		                    jb->refused);
	}
}

void check_done(struct job *jb, int pass, char *reason)
{
	jb->pass = pass;
	free(jb->reason);
	jb->reason = reason;
	if (!pass && !jb->category)
		jb->category =
		    xstrdup(jb->check_timed_out ? "timeout" : "check_failed");
	jb->state = JOB_DONE;
}

static void check_stopped(void *arg, int rc, const char *err, struct buf *data,
                          cJSON *list)
{
	(void)rc;
	(void)err;
	(void)data;
	(void)list;
	struct job *jb = arg;
	/* the reason: the check's last line of output */
	struct buf *o = &jb->check_out;
	while (o->len &&
	       (o->data[o->len - 1] == '\n' || o->data[o->len - 1] == ' '))
		o->data[--o->len] = '\0';
	const char *last = o->len ? o->data : "";
	for (size_t i = 0; i < o->len; i++)
		if (o->data[i] == '\n' && i + 1 < o->len)
			last = o->data + i + 1;
	int pass = jb->check_code == 0 && !jb->check_timed_out;
	check_done(
	    jb, pass,
	    *last  ? xstrdup(last)
	    : pass ? xstrdup("the check passed")
	           : xasprintf("the check failed (exit %d)", jb->check_code));
}

static void check_output(void *arg, enum sbx_stream st, const char *data,
                         size_t n)
{
	struct job *jb = arg;
	(void)st;
	if (jb->check_out.len + n < 65536)
		buf_append(&jb->check_out, data, n);
}

static void check_exited(void *arg, const struct sbx_exit *ex)
{
	struct job *jb = arg;
	jb->x = NULL;
	jb->check_code = ex->error ? -1 : ex->exit_code;
	jb->check_timed_out = ex->timed_out;
	if (ex->error)
		buf_printf(&jb->check_out, "\n%s", ex->error);
	sbx_stop(jb->sbx, check_stopped, jb);
}

static void check_started(void *arg, int rc, const char *err, struct buf *data,
                          cJSON *list)
{
	(void)data;
	(void)list;
	struct job *jb = arg;
	if (rc < 0) {
		jb->check_code = -1;
		buf_printf(&jb->check_out, "the check's sandbox: %s",
		           err ? err : "did not start");
		sbx_stop(jb->sbx, check_stopped, jb);
		return;
	}
	struct sbx_exec_req req = {.command = "python3 check.py",
	                           .timeout_s = EVAL_CHECK_S};
	struct sbx_exec_obs obs = {check_output, check_exited, jb};
	char *e2 = NULL;
	jb->x = sbx_exec(jb->sbx, &req, &obs, &e2);
	if (!jb->x) {
		jb->check_code = -1;
		buf_printf(&jb->check_out, "%s", e2 ? e2 : "cannot run");
		free(e2);
		sbx_stop(jb->sbx, check_stopped, jb);
	}
}

/* The script of the task's check, resolved; NULL when it has none. */
char *check_script(struct job *jb)
{
	const cJSON *ck = cJSON_GetObjectItem(jb->task, "check");
	const char *sc = json_str(ck, "script", NULL);
	if (!sc)
		return NULL;
	return sc[0] == '/' ? xstrdup(sc)
	                    : xasprintf("%s/%s", jb->ev->suite_dir, sc);
}

/* The answer's patterns; then the script in a fresh sandbox. */
static void job_check(struct job *jb)
{
	const cJSON *ck = cJSON_GetObjectItem(jb->task, "check");
	const char *ans = jb->answer ? jb->answer : "";
	const cJSON *p;
	cJSON_ArrayForEach(
	    p, cJSON_GetObjectItem(
	           ck, "answer_contains")) if (cJSON_IsString(p) &&
	                                       !strstr(ans, p->valuestring))
	{
		check_done(
		    jb, 0,
		    xasprintf("the answer lacks \"%s\"", p->valuestring));
		return;
	}
	cJSON_ArrayForEach(
	    p, cJSON_GetObjectItem(
	           ck, "answer_excludes")) if (cJSON_IsString(p) &&
	                                       strstr(ans, p->valuestring))
	{
		check_done(jb, 0,
		           xasprintf("the answer has \"%s\"", p->valuestring));
		return;
	}
	char *script = check_script(jb);
	if (!script) {
		check_done(jb, 1, xstrdup("the answer's patterns hold"));
		return;
	}
	/* the check's workspace: the task's inputs, the outputs it
	 * delivered, the answer, the script */
	struct config *c = &jb->ccfg;
	config_defaults(c);
	sbx_config_inherit(c, &jb->cfg);
	for (size_t i = 0; i < jb->cfg.n_inputs; i++)
		config_add_input(c, jb->cfg.inputs[i].src,
		                 jb->cfg.inputs[i].dest);
	for (size_t i = 0; i < jb->cfg.n_outputs; i++) {
		char *host =
		    xasprintf("%s/%s", jb->out_dir, jb->cfg.outputs[i]);
		if (access(host, F_OK) == 0)
			config_add_input(c, host, jb->cfg.outputs[i]);
		free(host);
	}
	char *answer = xasprintf("%s/answer.txt", jb->run_dir);
	char *werr = NULL;
	if (write_file_atomic(answer, ans, strlen(ans), &werr) == 0)
		config_add_input(c, answer, "answer.txt");
	free(werr);
	config_add_input(c, script, "check.py");
	/* what only the check may see (the ground truth) */
	cJSON_ArrayForEach(
	    p, cJSON_GetObjectItem(ck, "files")) if (cJSON_IsString(p))
	{
		char *src =
		    p->valuestring[0] == '/'
		        ? xstrdup(p->valuestring)
		        : xasprintf("%s/%s", jb->ev->suite_dir, p->valuestring);
		char *b = xstrdup(src);
		char *dest = xasprintf("check/%s", basename(b));
		config_add_input(c, src, dest);
		free(dest);
		free(b);
		free(src);
	}
	free(answer);
	free(script);
	for (size_t i = 0; i < c->n_inputs; i++)
		c->inputs[i].copy = 1;
	char *dir = xasprintf("%s/check", jb->run_dir), *err = NULL;
	mkdir(dir, 0700);
	buf_init(&jb->check_out, 0);
	jb->state = JOB_CHECKING;
	jb->sbx = sbx_new(c, jb->ev->loop, dir, &err);
	free(dir);
	if (!jb->sbx) {
		check_done(jb, 0, xasprintf("the check's sandbox: %s", err));
		free(err);
		return;
	}
	sbx_start(jb->sbx, 1, check_started, jb);
}

/* The session is over: take what it said, check it. */
void job_ended(struct job *jb)
{
	jb->exit_code = session_exit_code(jb->s);
	jb->status = "failed";
	if (jb->exit_code == EXIT_BUDGET && !jb->category)
		jb->category = xstrdup("budget");
	else if (jb->exit_code == EXIT_PROVIDER)
		free(jb->category), jb->category = xstrdup("model_error");
	else if (jb->exit_code == EXIT_SANDBOX)
		free(jb->category), jb->category = xstrdup("tool_error");
	else if (jb->exit_code == EXIT_INTERRUPTED)
		free(jb->category), jb->category = xstrdup("interrupted");
	const char *why = session_error(jb->s);
	if (why && !jb->error)
		jb->error = xstrdup(why);
	live_detach(jb);
	session_free(jb->s);
	jb->s = NULL;
	jb->wall_ms = now_ms() - jb->t0;
	/* a run that ends without its declared outputs exits 1: that is
	 * what it failed at */
	if (jb->missing &&
	    (jb->exit_code == EXIT_OK || jb->exit_code == EXIT_FAILED)) {
		free(jb->category);
		jb->category = xstrdup("output_missing");
		check_done(jb, 0,
		           xasprintf("%d declared output%s not delivered",
		                     jb->missing, jb->missing > 1 ? "s" : ""));
		return;
	}
	if (jb->exit_code != EXIT_OK) {
		check_done(jb, 0,
		           xasprintf("the run %s (exit %d)%s%s",
		                     jb->exit_code == EXIT_BUDGET
		                         ? "hit its budget"
		                         : "failed",
		                     jb->exit_code, jb->error ? ": " : "",
		                     jb->error ? jb->error : ""));
		return;
	}
	job_check(jb);
}
