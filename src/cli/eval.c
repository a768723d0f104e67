/* eval.c: `assay eval SUITE`: a question set run against models, every
 * task x model x repeat a session of its own, all of them in this one
 * process on the one loop, up to -j at a time, each in its own sandbox
 * and run dir under the eval's directory (so any can be replayed or
 * resumed), each checked when it ends (eval_check.c: the answer's
 * patterns, then the task's check script in a fresh sandbox against the
 * delivered outputs), the results written as results.jsonl, summed up
 * per model on the terminal and drawn in report.html (eval_report.c). A
 * second eval in the same directory keeps the result of every job whose
 * task, defaults, model, repeat, input files, script and check are
 * unchanged (job_key): nothing runs and no model is asked for them;
 * --rerun-failed runs the failed ones again.
 *
 * The suite (JSON with comments, like the config):
 *   {"defaults": {CONFIG...},         every task's configuration
 *    "models": ["gpt-4.1", ...],      each runs every task (default:
 *                                     the configuration's model)
 *    "repeats": 1,
 *    "tasks": [{"name": "anomalies", "prompt": "...",
 *               "check": {"script": "check.py",
 *                         "files": ["truth.json"],   (the check's only)
 *                         "answer_contains": ["..."],
 *                         "answer_excludes": ["..."]},
 *               "expect": "pass"|"fail",   (for the suite's own test)
 *               CONFIG...}]}               inputs, outputs, max_turns,
 *                                          max_cost, timeout, script...
 * File names are relative to the suite's file. The check script runs
 * as `python3 check.py` in /workspace holding the task's inputs, the
 * delivered outputs at their workspace paths, answer.txt (the final
 * answer) and check/ (check.files): exit 0 passes; its last line of
 * output is the reason. The suite is its project's content (the nearest
 * dir above it with .git): its keys and check paths go through the
 * project files' rule (config_apply_content), so what loosens security
 * applies only when that project is trusted (--trust-project, the trust
 * store), and base_url and the like never. */
#include "assay/config.h"
#include "assay/events.h"
#include "assay/fdlimit.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/path.h"
#include "assay/sandbox.h"
#include "assay/session.h"
#include "assay/termtext.h"
#include "assay/util.h"
#include "cli/cli.h"
#include "cli/eval.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the suite ---- */

/* Every task x model x repeat as a job (not started); a task is the
 * suite's JSON, not an event. */
static int plan(struct eval *ev, const struct strv *cli_models, int repeats,
                char **err)
{
	const cJSON *tasks = cJSON_GetObjectItem(ev->suite, "tasks");
	if (!cJSON_IsArray(tasks) || !cJSON_GetArraySize(tasks))
		return set_err(err, "%s: \"tasks\" must be a non-empty array",
		               ev->suite_path);
	struct strv models = {0};
	const cJSON *m;
	if (cli_models->n)
		strv_copy(&models, cli_models);
	else
		cJSON_ArrayForEach(
		    m, cJSON_GetObjectItem(ev->suite,
		                           "models")) if (cJSON_IsString(m))
		    strv_push(&models, m->valuestring);
	if (!models.n)
		strv_push(&models, ""); /* the configuration's */
	if (repeats <= 0)
		repeats = json_int(ev->suite, "repeats", 1);
	if (repeats < 1 || repeats > 1000) {
		strv_free(&models);
		return set_err(err, "%s: \"repeats\" must be 1 to 1000",
		               ev->suite_path);
	}
	size_t nt = (size_t)cJSON_GetArraySize(tasks);
	ev->jobs = xcalloc(nt * models.n * (size_t)repeats, sizeof *ev->jobs);
	const cJSON *t;
	cJSON_ArrayForEach(t, tasks)
	{
		const char *name = json_str(t, "name", NULL);
		const char *prompt = json_str(t, "prompt", NULL);
		if (!name || !*name || strpbrk(name, "/ ") || !prompt) {
			strv_free(&models);
			return set_err(err,
			               "%s: each task needs a \"name\" (no "
			               "spaces or slashes) and a \"prompt\"",
			               ev->suite_path);
		}
		for (size_t k = 0; k < models.n; k++)
			for (int r = 1; r <= repeats; r++) {
				struct job *jb = &ev->jobs[ev->n++];
				jb->ev = ev;
				jb->task = t;
				jb->name = xstrdup(name);
				jb->model = xstrdup(models.v[k]);
				jb->repeat = r;
			}
	}
	strv_free(&models);
	return 0;
}

/* The model a job runs, as the results name it (the provider for one
 * without model names: script). */
const char *job_model(const struct job *jb)
{
	if (jb->cfg.model && *jb->cfg.model)
		return jb->cfg.model;
	if (*jb->model)
		return jb->model;
	return jb->cfg.provider ? jb->cfg.provider : "default";
}

/* A name for a model in a path. */
static char *path_word(const char *s)
{
	char *w = xstrdup(*s ? s : "default");
	for (char *p = w; *p; p++)
		if (!strchr(
		        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		        "0123456789.-_",
		        *p))
			*p = '_';
	return w;
}

/* What the job was refused: the project files' settings here too; the
 * first one it needs blocks it (the trust report: not an event). */
static void job_refusals(struct job *jb)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, config_project_refused(&jb->cfg))
	{
		cJSON_AddItemToArray(jb->refused, cJSON_Duplicate(it, 1));
	}
	cJSON_ArrayForEach(it, jb->refused)
	{
		if (jb->blocked || !json_bool(it, "required", 0))
			continue;
		jb->blocked = xasprintf(
		    "not started: the task needs %s: \"%s\" (it %s), which "
		    "an untrusted project may not set: read the suite, then "
		    "pass --trust-project",
		    json_str(it, "file", "?"), json_str(it, "key", "?"),
		    json_str(it, "why", ""));
	}
}

/* The layers below the suite: the user's file, the project here. */
static int eval_user_layers(const struct eval *ev, struct config *c, char **err)
{
	config_defaults(c);
	c->trust = ev->trust_flag ? CONFIG_TRUST_FLAG : CONFIG_TRUST_ASK;
	char *user = config_user_file();
	int rc = config_load(c, user, NULL, err);
	free(user);
	return rc;
}

/* The task's configuration: the user's layers, the suite's defaults,
 * the task's own keys (both under the project rule of the suite's
 * project, judged against the user's layers alone: a task may go back
 * up to them after the defaults tightened), the model, the run dir. */
static int job_config(struct job *jb, char **err)
{
	struct eval *ev = jb->ev;
	struct config *c = &jb->cfg, ref;
	jb->refused = cJSON_CreateArray();
	int rc = eval_user_layers(ev, &ref, err);
	if (rc == 0)
		rc = eval_user_layers(ev, c, err);
	const cJSON *def = cJSON_GetObjectItem(ev->suite, "defaults");
	if (rc == 0 && def)
		rc = config_apply_content(c, &ref, &ev->content, def,
		                          ev->suite_path, ev->suite_dir,
		                          jb->refused, err);
	if (rc < 0) {
		config_free(&ref);
		return -1;
	}
	cJSON *own = cJSON_Duplicate(jb->task, 1);
	static const char *const not_config[] = {"name", "prompt", "check",
	                                         "expect"};
	for (size_t i = 0; i < sizeof not_config / sizeof *not_config; i++)
		cJSON_DeleteItemFromObject(own, not_config[i]);
	char *origin = xasprintf("%s: task %s", ev->suite_path, jb->name);
	rc = config_apply_content(c, &ref, &ev->content, own, origin,
	                          ev->suite_dir, jb->refused, err);
	config_free(&ref);
	if (rc == 0)
		job_check_paths(jb, origin);
	free(origin);
	cJSON_Delete(own);
	if (rc < 0)
		return -1;
	job_refusals(jb);
	if (*jb->model)
		config_set(&c->model, jb->model);
	if (ev->ask)
		config_set(&c->ask, ev->ask);
	char *mw = path_word(job_model(jb));
	char *run = xasprintf("%s-%s-r%d", jb->name, mw, jb->repeat);
	free(mw);
	jb->run_dir = xasprintf("%s/%s", ev->dir, run);
	jb->out_dir = xasprintf("%s/out", jb->run_dir);
	free(run);
	config_set(&c->run_dir, jb->run_dir);
	config_set(&c->out_dir, jb->out_dir);
	c->json = 0;
	c->step = 0;
	return 0;
}

/* ---- the sessions ---- */

static void job_event(void *arg, const cJSON *e)
{
	struct job *jb = arg;
	if (jb->ev->json && event_type_of(e) != EV_PROGRESS) {
		/* the session's events as the transcript has them, each
		 * named by its run (the run dir's name) */
		cJSON *c = cJSON_Duplicate(e, 1);
		const char *run = strrchr(jb->run_dir, '/');
		cJSON_AddStringToObject(c, "session", run ? run + 1 : "");
		char *line = cJSON_PrintUnformatted(c);
		printf("%s\n", line);
		fflush(stdout);
		free(line);
		cJSON_Delete(c);
	}
	live_event(jb, e);
	enum event_type type = event_type_of(e);
	if (type == EV_MODEL_REQUEST)
		jb->live_turn = ev_int(e, EVF_TURN, jb->live_turn);
	if (type == EV_USAGE) {
		jb->live_tok += ev_num(e, EVF_INPUT_TOKENS, 0) +
		                ev_num(e, EVF_OUTPUT_TOKENS, 0);
		jb->live_cost += ev_num(e, EVF_COST_USD, 0);
	}
	if (type == EV_RUN_START || type == EV_RUN_RESUME) {
		cJSON_Delete(jb->sandbox);
		jb->sandbox = cJSON_Duplicate(ev_item(e, EVF_SANDBOX), 1);
	}
	if (type == EV_ASSISTANT_MESSAGE) {
		free(jb->answer);
		jb->answer = xstrdup(ev_str(e, EVF_TEXT, ""));
	} else if (type == EV_ERROR && !jb->category) {
		jb->category = xstrdup(ev_str(e, EVF_CATEGORY, "error"));
		free(jb->error);
		jb->error = xstrdup(ev_str(e, EVF_MESSAGE, ""));
	} else if (type == EV_RUN_END) {
		const cJSON *tot = ev_item(e, EVF_TOTALS);
		jb->turns = ev_int(tot, EVF_TURNS, 0);
		jb->in_tok = ev_num(tot, EVF_INPUT_TOKENS, 0);
		jb->out_tok = ev_num(tot, EVF_OUTPUT_TOKENS, 0);
		jb->cost = ev_num(tot, EVF_COST_USD, 0);
		const cJSON *o;
		cJSON_ArrayForEach(
		    o, ev_item(e, EVF_OUTPUTS)) if (!ev_bool(o, EVF_PRESENT, 0))
		    jb->missing++;
	}
}

/* The session could not start (err: why, taken): the job fails in
 * category setup with that reason, and the session is freed at once,
 * its descriptors with it, for the jobs still to start. */
static void job_setup_failed(struct job *jb, char *err)
{
	if (jb->s) {
		jb->exit_code = session_exit_code(jb->s);
		live_detach(jb);
		session_free(jb->s);
		jb->s = NULL;
	}
	jb->wall_ms = now_ms() - jb->t0;
	free(jb->error);
	jb->error = err;
	free(jb->category);
	jb->category = xstrdup("setup");
	check_done(jb, 0,
	           xasprintf("the session could not start: %s", jb->error));
}

/* Start the job's session on its task's prompt (the task is the
 * suite's JSON, not an event). */
static void job_start(struct job *jb)
{
	struct eval *ev = jb->ev;
	char *err = NULL;
	jb->t0 = now_ms();
	jb->state = JOB_RUNNING;
	ev->running++;
	if (jb->blocked) { /* as `assay run` refuses it: a usage error */
		jb->category = xstrdup("setup");
		jb->exit_code = EXIT_USAGE;
		check_done(jb, 0, xstrdup(jb->blocked));
		return;
	}
	/* its configuration was made by plan_reuse */
	jb->s = session_new(ev->loop, &jb->cfg);
	session_observe(jb->s, job_event, jb);
	live_approver(jb);
	const char *prompt = json_str(jb->task, "prompt", "");
	/* a run interrupted last time goes on where it was: its recorded
	 * turns from its cache, its workspace as it was */
	struct session_resume_opts ro = {.run = jb->run_dir,
	                                 .mode = SESSION_RESUME};
	int rc = jb->resume ? session_resume(jb->s, &ro, NULL, &err)
	                    : session_start(jb->s, prompt, &err);
	if (rc < 0)
		job_setup_failed(jb, err ? err : xstrdup("refused"));
}

/* ---- re-running only what changed ---- */

/* A file's size and mtime, or its contents' digest (small files). */
static void key_file(cJSON *arr, const char *path, int contents)
{
	struct stat st;
	char hex[65] = "";
	if (stat(path, &st) < 0) {
		cJSON_AddItemToArray(arr, cJSON_CreateString("absent"));
		return;
	}
	size_t len = 0;
	char *e = NULL;
	char *text = contents ? read_file_max(path, 1u << 20, &len, &e) : NULL;
	free(e);
	if (text)
		sha256_hex(text, len, hex);
	free(text);
	char *s =
	    *hex ? xasprintf("%s sha256 %s", path, hex)
	         : xasprintf("%s %lld %lld.%09ld", path, (long long)st.st_size,
	                     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	cJSON_AddItemToArray(arr, cJSON_CreateString(s));
	free(s);
}

/* The digest of all a job's result depends on: the task as written,
 * the suite's defaults, the model, the repeat, the resolved
 * configuration's inputs, model and script (as files: size and mtime),
 * and the check (its script's contents, its files; not an event). */
static void job_key(struct job *jb)
{
	cJSON *k = cJSON_CreateObject();
	cJSON_AddItemToObject(k, "task", cJSON_Duplicate(jb->task, 1));
	const cJSON *def = cJSON_GetObjectItem(jb->ev->suite, "defaults");
	if (def)
		cJSON_AddItemToObject(k, "defaults", cJSON_Duplicate(def, 1));
	cJSON_AddStringToObject(k, "model", job_model(jb));
	cJSON_AddNumberToObject(k, "repeat", jb->repeat);
	if (jb->ev->ask) /* --ask */
		cJSON_AddStringToObject(k, "ask", jb->ev->ask);
	/* what was not applied (trusting the project changes it) */
	cJSON_AddItemToObject(k, "refused", cJSON_Duplicate(jb->refused, 1));
	cJSON *files = cJSON_AddArrayToObject(k, "files");
	for (size_t i = 0; i < jb->cfg.n_inputs; i++)
		key_file(files, jb->cfg.inputs[i].src, 0);
	if (jb->cfg.script)
		key_file(files, jb->cfg.script, 1);
	/* a blocked job's check may name host files it must not read */
	char *sc = jb->blocked ? NULL : check_script(jb);
	if (sc)
		key_file(files, sc, 1);
	free(sc);
	const cJSON *f;
	cJSON_ArrayForEach(
	    f,
	    cJSON_GetObjectItem(cJSON_GetObjectItem(jb->task, "check"),
	                        "files")) if (cJSON_IsString(f) && !jb->blocked)
	{
		char *p = xasprintf("%s/%s", jb->ev->suite_dir, f->valuestring);
		key_file(files, p, 0);
		free(p);
	}
	char *text = cJSON_PrintUnformatted(k);
	sha256_hex(text, strlen(text), jb->key);
	free(text);
	cJSON_Delete(k);
}

/* The previous results.jsonl of this directory, keyed. */
static void load_previous(struct eval *ev, const char *path)
{
	size_t len = 0;
	char *e = NULL;
	char *text = read_file_max(path, 64u << 20, &len, &e);
	free(e);
	ev->previous = cJSON_CreateObject();
	for (char *line = text, *nl; line && *line; line = nl) {
		nl = line + strcspn(line, "\n");
		if (*nl)
			*nl++ = '\0';
		cJSON *r = cJSON_Parse(line);
		const char *key = json_str(r, "key", NULL);
		if (key && !cJSON_GetObjectItem(ev->previous, key))
			cJSON_AddItemToObject(ev->previous, key, r);
		else
			cJSON_Delete(r);
	}
	free(text);
}

/* Configure every job; take the previous result of each unchanged one
 * (its run dir still there), clear the run dir of the others. A result
 * is a record of results.jsonl, not an event. */
static int plan_reuse(struct eval *ev, char **err)
{
	for (size_t i = 0; i < ev->n; i++) {
		struct job *jb = &ev->jobs[i];
		if (job_config(jb, err) < 0)
			return -1;
		job_key(jb);
		cJSON *old = cJSON_GetObjectItem(ev->previous, jb->key);
		struct stat st;
		/* an interrupted session is resumed; one that never got
		 * going runs again */
		const char *cat = json_str(old, "category", "");
		int there = stat(jb->run_dir, &st) == 0;
		int keep = old && !ev->rerun_all &&
		           !(ev->rerun_failed && !json_bool(old, "pass", 0)) &&
		           strcmp(cat, "interrupted") && strcmp(cat, "setup") &&
		           there;
		jb->resume = old && !ev->rerun_all && there &&
		             !strcmp(cat, "interrupted");
		if (jb->resume)
			continue;
		if (keep) {
			jb->reused = cJSON_Duplicate(old, 1);
			jb->state = JOB_DONE;
			ev->running++; /* job_result counts it down */
		} else if (stat(jb->run_dir, &st) == 0) {
			rm_rf(jb->run_dir);
		}
	}
	return 0;
}

/* ---- results ---- */

/* The reason a result carries, with what to do when it tells of
 * running out of descriptors. A failure is never recorded without one:
 * a path that gets here with none is a bug, and the result says so. */
static char *job_reason(const struct job *jb)
{
	const char *r = jb->reason ? jb->reason : "";
	if (!*r && !jb->pass)
		return xasprintf(
		    "assay recorded this failure (category %s, exit %d) "
		    "without a reason: a bug, please report it with the "
		    "eval's stderr and this run dir's assay.log",
		    jb->category ? jb->category : "none", jb->exit_code);
	char *told = fdlimit_explain(r);
	return told ? told : xstrdup(r);
}

/* Write the job's result to results.jsonl (a reused one as it was:
 * a record of that file, not an event). */
static void job_result(struct eval *ev, struct job *jb)
{
	if (jb->sbx) {
		sbx_free(jb->sbx);
		jb->sbx = NULL;
	}
	if (jb->reused) {
		cJSON_DeleteItemFromObject(jb->reused, "reused");
		cJSON_AddTrueToObject(jb->reused, "reused");
		jb->pass = json_bool(jb->reused, "pass", 0);
		jb->cost = json_num(jb->reused, "cost_usd", 0);
		jb->wall_ms = (int64_t)json_long(jb->reused, "wall_ms", 0);
		const char *cat = json_str(jb->reused, "category", NULL);
		jb->category = cat ? xstrdup(cat) : NULL;
		char *line = cJSON_PrintUnformatted(jb->reused);
		fprintf(ev->results, "%s\n", line);
		fflush(ev->results);
		free(line);
		ev->done++;
		ev->running--;
		ev->reused++;
		eval_say(ev,
		         "[%zu/%zu] %s x %s r%d: %s (unchanged: the last "
		         "result kept)\n",
		         ev->done, ev->n, jb->name, job_model(jb), jb->repeat,
		         jb->pass ? "pass" : "FAIL");
		return;
	}
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "task", jb->name);
	cJSON_AddStringToObject(r, "model", job_model(jb));
	cJSON_AddNumberToObject(r, "repeat", jb->repeat);
	cJSON_AddBoolToObject(r, "pass", jb->pass);
	char *reason = job_reason(jb);
	cJSON_AddStringToObject(r, "reason", reason);
	free(reason);
	if (jb->category)
		cJSON_AddStringToObject(r, "category", jb->category);
	else
		cJSON_AddNullToObject(r, "category");
	const char *expect = json_str(jb->task, "expect", NULL);
	if (expect)
		cJSON_AddStringToObject(r, "expect", expect);
	cJSON_AddNumberToObject(r, "exit_code", jb->exit_code);
	cJSON_AddNumberToObject(r, "turns", jb->turns);
	cJSON_AddNumberToObject(r, "input_tokens", jb->in_tok);
	cJSON_AddNumberToObject(r, "output_tokens", jb->out_tok);
	cJSON_AddNumberToObject(r, "cost_usd", jb->cost);
	cJSON_AddNumberToObject(r, "wall_ms", (double)jb->wall_ms);
	cJSON_AddStringToObject(r, "run_dir", jb->run_dir ? jb->run_dir : "");
	cJSON_AddStringToObject(r, "key", jb->key);
	/* the image it ran on: results compared across image updates */
	if (jb->sandbox)
		cJSON_AddItemToObject(r, "sandbox",
		                      cJSON_Duplicate(jb->sandbox, 1));
	char *line = cJSON_PrintUnformatted(r);
	cJSON_Delete(r);
	fprintf(ev->results, "%s\n", line);
	fflush(ev->results);
	free(line);
	ev->done++;
	ev->running--;
	char *said =
	    xasprintf("[%zu/%zu] %s x %s r%d: %s%s%s (%.1f s, $%.4f)", ev->done,
	              ev->n, jb->name, job_model(jb), jb->repeat,
	              jb->pass ? "pass" : "FAIL", jb->pass ? "" : ", ",
	              jb->pass ? "" : (jb->category ? jb->category : ""),
	              (double)jb->wall_ms / 1000, jb->cost);
	eval_say(ev, "%s\n", said);
	live_result(jb, said);
	free(said);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Per model: pass rate (and its spread over the repeats), median wall
 * time, total and per-task cost. */
static void summary(struct eval *ev)
{
	fprintf(stderr, "\n%-28s %9s %13s %9s %11s %11s\n", "model", "passed",
	        "spread", "median s", "cost $", "per task $");
	for (size_t i = 0; i < ev->n; i++) {
		struct job *a = &ev->jobs[i];
		if (a->state != JOB_REPORTED)
			continue;
		const char *m = job_model(a);
		int seen = 0;
		for (size_t k = 0; k < i && !seen; k++) {
			struct job *b = &ev->jobs[k];
			seen = b->state == JOB_REPORTED &&
			       !strcmp(job_model(b), m);
		}
		if (seen)
			continue;
		size_t n = 0, pass = 0;
		double cost = 0, *walls = xcalloc(ev->n, sizeof *walls);
		int maxr = 0;
		for (size_t k = 0; k < ev->n; k++) {
			struct job *b = &ev->jobs[k];
			if (b->state != JOB_REPORTED || strcmp(job_model(b), m))
				continue;
			walls[n++] = (double)b->wall_ms / 1000;
			pass += (size_t)b->pass;
			cost += b->cost;
			if (b->repeat > maxr)
				maxr = b->repeat;
		}
		double lo = 1, hi = 0;
		for (int r = 1; r <= maxr; r++) {
			size_t rn = 0, rp = 0;
			for (size_t k = 0; k < ev->n; k++) {
				struct job *b = &ev->jobs[k];
				if (b->state != JOB_REPORTED ||
				    b->repeat != r || strcmp(job_model(b), m))
					continue;
				rn++;
				rp += (size_t)b->pass;
			}
			double rate = rn ? (double)rp / (double)rn : 0;
			lo = rate < lo ? rate : lo;
			hi = rate > hi ? rate : hi;
		}
		qsort(walls, n, sizeof *walls, cmp_double);
		char passed[32], spread[32];
		snprintf(passed, sizeof passed, "%zu/%zu", pass, n);
		snprintf(spread, sizeof spread, "%.0f-%.0f%%", lo * 100,
		         hi * 100);
		fprintf(stderr, "%-28.28s %9s %13s %9.1f %11.4f %11.4f\n", m,
		        passed, spread, n ? walls[n / 2] : 0.0, cost,
		        n ? cost / (double)n : 0.0);
		free(walls);
	}
}

static void job_free(struct job *jb)
{
	if (jb->s)
		session_free(jb->s);
	if (jb->sbx)
		sbx_free(jb->sbx);
	config_free(&jb->cfg);
	config_free(&jb->ccfg);
	buf_free(&jb->check_out);
	free(jb->name);
	free(jb->model);
	free(jb->run_dir);
	free(jb->out_dir);
	free(jb->answer);
	free(jb->category);
	free(jb->error);
	free(jb->reason);
	free(jb->blocked);
	cJSON_Delete(jb->reused);
	cJSON_Delete(jb->refused);
	cJSON_Delete(jb->sandbox);
}

/* ---- the command ---- */

void eval_interrupt(struct eval *ev)
{
	live_close(ev); /* the terminal back to the eval */
	if (!ev->interrupted++)
		eval_say(ev, "\nassay eval: interrupted: stopping every "
		             "session\n");
	for (size_t i = 0; i < ev->n; i++)
		if (ev->jobs[i].s)
			session_interrupt(ev->jobs[i].s);
}

static void on_eval_signal(int sig, void *arg)
{
	(void)sig;
	eval_interrupt(arg);
}

static void eval_loop(struct eval *ev)
{
	for (;;) {
		for (size_t i = 0; i < ev->n; i++) {
			struct job *jb = &ev->jobs[i];
			if (jb->state == JOB_RUNNING && jb->s &&
			    session_state(jb->s) == SESSION_DONE)
				job_ended(jb);
			if (jb->state == JOB_DONE) {
				job_result(ev, jb);
				jb->state = JOB_REPORTED;
			}
		}
		for (size_t i = 0; i < ev->n && ev->running < (size_t)ev->j &&
		                   !ev->interrupted;
		     i++)
			if (ev->jobs[i].state == JOB_QUEUED)
				job_start(&ev->jobs[i]);
		if ((ev->done == ev->n || (ev->interrupted && !ev->running)) &&
		    !live_holds(ev))
			return;
		int again = 0;
		for (size_t i = 0; i < ev->n; i++)
			again |= ev->jobs[i].state == JOB_DONE;
		if (!again)
			loop_once(ev->loop, -1);
	}
}

/* The usage on f; code is what the command exits with. */
static int eval_usage_to(FILE *f, int code)
{
	fprintf(f,
	        "usage: assay eval SUITE [-j N] [-n REPEATS] [--model M]... "
	        "[--dir DIR]\n"
	        "  runs every task x model x repeat of SUITE (JSON) in this "
	        "process, up to N at a time\n"
	        "  -j N          sessions at once [1]\n"
	        "  -n REPEATS    runs of each task per model [the suite's "
	        "\"repeats\", else 1]\n"
	        "  --model M     a model to compare (repeatable) [the "
	        "suite's \"models\"]\n"
	        "  --dir DIR     where the runs and results.jsonl go "
	        "[.assay/eval/SUITE]\n"
	        "  --json        every session's events on stdout, one JSON "
	        "line each with \"session\"\n"
	        "  --rerun       run every task again (else an unchanged "
	        "task's last result here is kept)\n"
	        "  --rerun-failed  run again the unchanged tasks that "
	        "failed\n"
	        "  --ask MODE    all|risky|none: every task's ask mode; on a "
	        "terminal a call that\n"
	        "                asks waits in the table until it is answered "
	        "in the session's view\n"
	        "                (Enter on its row), else it is denied\n"
	        "  --trust-project  apply the settings of the suite (and "
	        "of ./assay.json and\n"
	        "                ./.assay/config.json) that loosen security "
	        "[only when trusted]\n"
	        "exit codes: 0 every session ran (pass or fail), 1 some "
	        "could not, 2 usage, 130 interrupted\n");
	return code;
}

static int eval_usage(void)
{
	return eval_usage_to(stderr, EXIT_USAGE);
}

/* The backend's bound on sessions at once (limits.sessions). */
static void eval_bound(struct eval *ev)
{
	for (size_t i = 0; i < ev->n; i++) {
		long cap = ev->jobs[i].cfg.max_sessions;
		if (cap > 0 && ev->j > cap) {
			fprintf(stderr,
			        "assay eval: -j %d lowered to %ld "
			        "(limits.sessions of task %s's "
			        "configuration)\n",
			        ev->j, cap, ev->jobs[i].name);
			ev->j = (int)cap;
		}
	}
}

/* Each setting not applied named once (not once per model and
 * repeat), then how to have them (the trust report: not an event). */
static void eval_refusals(struct eval *ev)
{
	cJSON *said = cJSON_CreateObject();
	int loose = 0;
	for (size_t i = 0; i < ev->n; i++) {
		const cJSON *it;
		cJSON_ArrayForEach(it, ev->jobs[i].refused)
		{
			char *id = xasprintf(
			    "%s\n%s\n%s", json_str(it, "file", ""),
			    json_str(it, "key", ""), json_str(it, "value", ""));
			int seen = cJSON_GetObjectItem(said, id) != NULL;
			if (!seen)
				cJSON_AddTrueToObject(said, id);
			free(id);
			if (seen)
				continue;
			trust_say_refused("assay eval", it,
			                  "the task needs it: not started",
			                  "--trust-project applies it");
			loose |= !json_bool(it, "user_only", 0);
		}
	}
	cJSON_Delete(said);
	char *root = term_clean(ev->content.root, strlen(ev->content.root), 0);
	if (loose)
		fprintf(stderr,
		        "assay eval: until you trust the suite's project (%s) "
		        "its suites may only tighten security; the eval goes "
		        "on without those settings: read the suite, then pass "
		        "--trust-project (a project you trusted in assay's "
		        "Trust dialog counts while its files are unchanged; "
		        "`assay trust` there shows its status)\n",
		        root);
	free(root);
}

/* The descriptor limit's bound on sessions at once: what is left of it
 * (less what is open now and EVAL_FD_RESERVE) over what a session of
 * the jobs to run holds at most (session_fds, measured per backend). */
static void eval_fit_fds(struct eval *ev)
{
	int need = 0;
	for (size_t i = 0; i < ev->n; i++) {
		int n = ev->jobs[i].reused ? 0 : session_fds(&ev->jobs[i].cfg);
		need = n > need ? n : need;
	}
	long soft = fdlimit_soft(), hard = fdlimit_hard();
	long open = fdlimit_open();
	long fit = need ? (soft - open - EVAL_FD_RESERVE) / need : ev->j;
	if (fit >= ev->j)
		return;
	long want = open + EVAL_FD_RESERVE + (long)ev->j * need;
	fprintf(stderr,
	        "assay eval: -j %d lowered to %ld (descriptors: %ld allowed, "
	        "%ld open, %d kept in reserve, a session holds up to %d%s): "
	        "`ulimit -n %ld` before assay eval lets -j %d run%s\n",
	        ev->j, fit < 1 ? 1 : fit, soft, open, EVAL_FD_RESERVE, need,
	        fit < 1 ? "; even one may run out" : "", want, ev->j,
	        want > hard ? " (above the hard limit: as root, or nofile "
	                      "in /etc/security/limits.conf)"
	                    : "");
	ev->j = fit < 1 ? 1 : (int)fit;
}

static void eval_write_report(struct eval *ev)
{
	char *err = NULL;
	char *tb = xstrdup(ev->suite_path);
	int rc = eval_report(ev->dir, basename(tb), &err);
	free(tb);
	if (rc < 0)
		fprintf(stderr, "assay eval: the report: %s\n", err);
	else
		fprintf(stderr, "report: %s/report.html\n", ev->dir);
	free(err);
}

/* .assay/eval/SUITE (the suite file's name without its extension). */
static char *eval_default_dir(const char *suite_path)
{
	char *b = xstrdup(suite_path);
	char *base = basename(b);
	char *dot = strrchr(base, '.');
	if (dot)
		*dot = '\0';
	char *dir = xasprintf(".assay/eval/%s", base);
	free(b);
	return dir;
}

/* The suite, its dir, and the project it belongs to (content's rule). */
static int eval_open_suite(struct eval *ev, const char *path, char **err)
{
	ev->suite_path = xstrdup(path);
	ev->suite = json_parse_file(ev->suite_path, 16u << 20, err);
	if (!ev->suite)
		return -1;
	char *tmp = xstrdup(ev->suite_path);
	char *rd = realpath(dirname(tmp), NULL);
	ev->suite_dir = rd ? rd : xstrdup(".");
	free(tmp);
	return config_content_open(&ev->content, ev->suite_path, ev->trust_flag,
	                           err);
}

int cmd_eval(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"model", required_argument, NULL, 'm'},
	    {"dir", required_argument, NULL, 'd'},
	    {"rerun", no_argument, NULL, 'r'},
	    {"json", no_argument, NULL, 'J'},
	    {"rerun-failed", no_argument, NULL, 'f'},
	    {"ask", required_argument, NULL, 'a'},
	    {"trust-project", no_argument, NULL, 'T'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0}};
	struct eval ev = {.j = 1};
	struct strv models = {0};
	int repeats = 0, c;
	char *dir = NULL, *err = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "j:n:h", opts, NULL)) != -1) {
		if (c == 'j')
			ev.j = atoi(optarg);
		else if (c == 'n')
			repeats = atoi(optarg);
		else if (c == 'm')
			strv_push(&models, optarg);
		else if (c == 'd')
			dir = optarg;
		else if (c == 'r')
			ev.rerun_all = 1;
		else if (c == 'J')
			ev.json = 1;
		else if (c == 'f')
			ev.rerun_failed = 1;
		else if (c == 'a' && config_ask_rank(optarg) >= 0)
			ev.ask = optarg;
		else if (c == 'T')
			ev.trust_flag = 1;
		else if (c == 'h') {
			strv_free(&models);
			return eval_usage_to(stdout, EXIT_OK);
		} else {
			strv_free(&models);
			return eval_usage();
		}
	}
	if (optind != argc - 1 || ev.j < 1 || ev.j > EVAL_MAX_J ||
	    repeats < 0) {
		strv_free(&models);
		return eval_usage();
	}
	int code = EXIT_USAGE;
	if (eval_open_suite(&ev, argv[optind], &err) < 0)
		goto out;
	if (plan(&ev, &models, repeats, &err) < 0)
		goto out;
	ev.dir = dir ? xstrdup(dir) : eval_default_dir(ev.suite_path);
	if (mkdir_p(ev.dir, &err) < 0)
		goto out;
	char *rpath = xasprintf("%s/results.jsonl", ev.dir);
	load_previous(&ev, rpath);
	if (plan_reuse(&ev, &err) < 0) {
		free(rpath);
		goto out;
	}
	eval_refusals(&ev);
	eval_bound(&ev);
	ev.results = fopen_regular(
	    rpath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644, &err);
	if (!ev.results) {
		free(rpath);
		goto out;
	}
	ev.loop = loop_new();
	loop_signal(ev.loop, SIGINT, on_eval_signal, &ev);
	loop_signal(ev.loop, SIGTERM, on_eval_signal, &ev);
	loop_signal(ev.loop, SIGHUP, on_eval_signal, &ev);
	eval_fit_fds(&ev);
	size_t keep = 0;
	for (size_t i = 0; i < ev.n; i++)
		keep += ev.jobs[i].reused != NULL;
	fprintf(stderr,
	        "assay eval: %zu sessions (%zu unchanged since the last "
	        "eval here: their results kept), %d at a time, in %s\n",
	        ev.n, keep, ev.j, ev.dir);
	live_start(&ev);
	eval_loop(&ev);
	live_stop(&ev);
	fclose(ev.results);
	summary(&ev);
	fprintf(stderr, "\nresults: %s\n", rpath);
	eval_write_report(&ev);
	free(rpath);
	code = ev.interrupted ? EXIT_INTERRUPTED : EXIT_OK;
	for (size_t i = 0; i < ev.n && code == EXIT_OK; i++)
		if (ev.jobs[i].category &&
		    !strcmp(ev.jobs[i].category, "setup"))
			code = EXIT_FAILED;
out:
	if (err)
		fprintf(stderr, "assay eval: %s\n", err);
	free(err);
	for (size_t i = 0; i < ev.n; i++)
		job_free(&ev.jobs[i]);
	free(ev.jobs);
	if (ev.loop)
		loop_free(ev.loop);
	cJSON_Delete(ev.suite);
	cJSON_Delete(ev.previous);
	free(ev.suite_path);
	free(ev.suite_dir);
	free(ev.dir);
	config_content_close(&ev.content);
	strv_free(&models);
	return code;
}
