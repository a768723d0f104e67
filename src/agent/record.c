/* record.c: a recorded run read back: where its transcript is, its
 * events (a last line cut short by a crash is ignored, any other bad
 * line refused), and the settings its run_start recorded, for resume,
 * re-execute and fork; a run dir is trusted like a project file, no
 * more. Also the copies a run keeps of the files it reads (the lock
 * is rundir.c's). */
#include "agent_internal.h"

#include "assay/buf.h"
#include "assay/config.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/llm.h"
#include "assay/log.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* as much as replay reads (tui/replay.h UI_TRANSCRIPT_MAX) */
#define TRANSCRIPT_MAX ((size_t)64 << 20)

void record_free(struct record *r)
{
	if (!r)
		return;
	free(r->dir);
	free(r->transcript);
	cJSON_Delete(r->events);
	memset(r, 0, sizeof *r);
}

/* Whether text[0..n) is blank (spaces only). */
static int record_blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			return 0;
	return 1;
}

/* What record_check_events tracks while it walks the record. */
struct record_check {
	cJSON *open; /* ids of the calls without a result yet */
	int requests;
};

/* assistant_message: its calls are the ones now waiting for results. */
static void record_check_answer(struct record_check *c, const cJSON *e)
{
	cJSON_Delete(c->open);
	c->open = cJSON_CreateArray();
	const cJSON *call;
	cJSON_ArrayForEach(call, ev_item(e, EVF_TOOL_CALLS))
	{
		cJSON_AddItemToArray(
		    c->open, cJSON_CreateString(ev_str(call, EVF_ID, "")));
	}
}

/* tool_result: its call no longer waits. */
static void record_check_result(struct record_check *c, const cJSON *e)
{
	const char *id = ev_str(e, EVF_ID, "");
	int n = cJSON_GetArraySize(c->open);
	for (int i = 0; i < n; i++) {
		const cJSON *it = cJSON_GetArrayItem(c->open, i);
		if (!strcmp(it->valuestring, id)) {
			cJSON_DeleteItemFromArray(c->open, i);
			return;
		}
	}
}

/* model_request (one the run made, not a replayed one): its turn is
 * the count of requests so far, and no call still waits. */
static int record_check_request(struct record_check *c, const cJSON *e,
                                char **err)
{
	if (ev_bool(e, EVF_REPLAYED, 0))
		return 0;
	unsigned long long seq = (unsigned long long)ev_num(e, EVF_SEQ, 0);
	c->requests++;
	double turn = ev_num(e, EVF_TURN, 0);
	if (!(turn >= 1 && turn <= c->requests) || turn != (double)(int)turn)
		return set_err(err,
		               "the model_request of seq %llu has turn %g, but "
		               "it is request %d of the run: the transcript is "
		               "damaged",
		               seq, turn, c->requests);
	if (cJSON_GetArraySize(c->open) > 0)
		return set_err(err,
		               "the model_request of seq %llu was made before "
		               "call %s of the answer before it had a result: "
		               "the transcript is damaged",
		               seq,
		               cJSON_GetArrayItem(c->open, 0)->valuestring);
	return 0;
}

/* What resume relies on, checked once: turn numbers that count the
 * requests made (a damaged one would make resume build a turn table
 * of any size), and no request made while calls of the answer before
 * it have no result (rebuilding it would send an invalid
 * conversation). */
static int record_check_events(struct record *r, char **err)
{
	struct record_check c = {.open = cJSON_CreateArray()};
	int rc = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, r->events)
	{
		switch (event_type_of(e)) {
		case EV_ASSISTANT_MESSAGE:
			record_check_answer(&c, e);
			break;
		case EV_TOOL_RESULT:
			record_check_result(&c, e);
			break;
		case EV_MODEL_REQUEST:
			rc = record_check_request(&c, e, err);
			break;
		default:
			break;
		}
		if (rc < 0)
			break;
	}
	cJSON_Delete(c.open);
	return rc;
}

int record_parse(const char *text, size_t len, struct record *r, char **err)
{
	r->events = cJSON_CreateArray();
	r->complete_bytes = 0;
	r->dropped_bytes = 0;
	const char *p = text, *end = text + len;
	unsigned long no = 0, bad = 0;
	size_t bad_at = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		no++;
		if (bad) /* only the last line may be cut (by a crash) */
			return set_err(err,
			               "line %lu is not a JSON event: the "
			               "transcript is damaged",
			               bad);
		cJSON *ev = cJSON_ParseWithLength(p, (size_t)(eol - p));
		if (ev && cJSON_IsObject(ev) &&
		    cJSON_IsString(ev_item(ev, EVF_TYPE))) {
			uint64_t seq = (uint64_t)ev_long(ev, EVF_SEQ, 0);
			if (seq > r->last_seq)
				r->last_seq = seq;
			int64_t t = (int64_t)ev_long(ev, EVF_T, 0);
			if (t > r->last_t)
				r->last_t = t;
			if (!r->run_start && event_type_of(ev) == EV_RUN_START)
				r->run_start = ev;
			cJSON_AddItemToArray(r->events, ev);
		} else {
			cJSON_Delete(ev);
			if (!record_blank(p, (size_t)(eol - p))) {
				bad = no;
				bad_at = (size_t)(p - text);
			}
		}
		p = nl ? nl + 1 : end;
		if (!bad)
			r->complete_bytes = (size_t)(p - text);
	}
	if (bad) {
		/* the line being written when the run died */
		r->complete_bytes = bad_at;
		r->dropped_bytes = len - bad_at;
		log_warn("transcript: the last line (%zu bytes) is cut short; "
		         "ignored",
		         r->dropped_bytes);
	}
	if (!r->run_start)
		return set_err(err, "the transcript has no run_start event: "
		                    "is it an assay transcript?");
	return record_check_events(r, err);
}

/* Whether path is a regular file (links followed). */
static int record_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Whether path is a directory (links followed). */
static int record_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Whether path is there at all (a link not followed): a run dir whose
 * transcript is a FIFO or a link is found, and refused by name when it
 * is read (record_load). */
static int record_exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* RUN as a run dir, a transcript path or a run id. */
static char *record_find_dir(const char *run, char **err)
{
	size_t n = strlen(run);
	if (record_is_file(run)) {
		char *dir = xstrdup(run);
		char *slash = strrchr(dir, '/');
		if (!slash) {
			free(dir);
			return xstrdup(".");
		}
		*slash = '\0';
		return dir;
	}
	char *dir = xstrndup(run, n > 1 && run[n - 1] == '/' ? n - 1 : n);
	char *t = xasprintf("%s/transcript.jsonl", dir);
	int ok = record_is_dir(dir) && record_exists(t);
	free(t);
	if (ok)
		return dir;
	free(dir);
	if (!strchr(run, '/')) {
		dir = xasprintf(".assay/runs/%s", run);
		t = xasprintf("%s/transcript.jsonl", dir);
		ok = record_exists(t);
		free(t);
		if (ok)
			return dir;
		free(dir);
	}
	set_err(err,
	        "no recorded run at '%s'%s: give a run dir (holding "
	        "transcript.jsonl), its transcript path, or a run id under "
	        ".assay/runs/",
	        run,
	        record_is_dir(run) ? " (the directory has no transcript.jsonl)"
	                           : "");
	return NULL;
}

/* The record session_record_config read, kept for the session_resume
 * that follows (the transcript is parsed once), while its transcript
 * is the same file, size and mtime. */
static struct {
	char *run;
	struct record rec;
	struct stat st;
} kept;

/* Keep the parsed record r for the resume of run that follows (r is
 * taken). */
static void record_keep_parsed(const char *run, struct record *r)
{
	struct stat st;
	record_free(&kept.rec);
	free(kept.run);
	kept.run = NULL;
	if (stat(r->transcript, &st) < 0) {
		record_free(r);
		return;
	}
	kept.run = xstrdup(run);
	kept.rec = *r;
	kept.st = st;
	memset(r, 0, sizeof *r);
}

/* Take the record kept for run, if its transcript is unchanged; 1 when it
 * did. */
static int record_take_parsed(const char *run, struct record *r)
{
	struct stat st;
	if (!kept.run || strcmp(kept.run, run))
		return 0;
	int same = stat(kept.rec.transcript, &st) == 0 &&
	           st.st_ino == kept.st.st_ino &&
	           st.st_size == kept.st.st_size &&
	           st.st_mtim.tv_sec == kept.st.st_mtim.tv_sec &&
	           st.st_mtim.tv_nsec == kept.st.st_mtim.tv_nsec;
	free(kept.run);
	kept.run = NULL;
	if (!same) {
		record_free(&kept.rec);
		return 0;
	}
	*r = kept.rec;
	memset(&kept.rec, 0, sizeof kept.rec);
	return 1;
}

int record_load(const char *run, struct record *r, char **err)
{
	memset(r, 0, sizeof *r);
	if (!run || !*run)
		return set_err(err, "which run? give a run dir, a transcript "
		                    "or a run id");
	if (record_take_parsed(run, r))
		return 0;
	r->dir = record_find_dir(run, err);
	if (!r->dir)
		return -1;
	r->transcript = xasprintf("%s/transcript.jsonl", r->dir);
	size_t len = 0;
	char *text = read_file_flags(r->transcript, O_NOFOLLOW, TRANSCRIPT_MAX,
	                             &len, err);
	if (!text) {
		record_free(r);
		return -1;
	}
	int rc = record_parse(text, len, r, err);
	free(text);
	if (rc < 0) {
		char *why = *err;
		*err = xasprintf("%s: %s", r->transcript, why);
		free(why);
		record_free(r);
	}
	return rc;
}

/* Set a configuration field from a recorded string, when there is one. */
static void record_set_if(char **field, const cJSON *obj, enum ev_field f)
{
	const char *v = ev_str(obj, f, NULL);
	if (v && *v)
		config_set(field, v);
}

/* A recorded limit can only tighten the configured one. */
static long record_tighter(const cJSON *lim, enum ev_field f, long configured)
{
	double v = ev_num(lim, f, 0);
	return v >= 1 && v < (double)configured ? (long)v : configured;
}

/* A recorded number when it is sane (min..1e9), else def. */
static double record_in_range(const cJSON *lim, enum ev_field f, double min,
                              double def)
{
	double v = ev_num(lim, f, def);
	return v >= min && v <= 1e9 ? v : def;
}

/* dir/name when it is a regular file and not a link; NULL when it is
 * absent, NULL and *err when something else is there (a FIFO, a link:
 * named by its type). */
static char *record_own_file(const char *dir, const char *name, char **err)
{
	char *p = xasprintf("%s/%s", dir, name);
	struct stat st;
	if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
		return p;
	if (lstat(p, &st) == 0)
		set_err(err,
		        "%s is %s, not a regular file: the run's copy is "
		        "read from its run dir only; remove it, or put the "
		        "file there if you trust this run",
		        p, file_type_name(st.st_mode));
	free(p);
	return NULL;
}

/* The record is treated like a project file: it may choose the model
 * and replay settings, never where the key goes, what the sandbox may
 * reach or which host files are read or written (see
 * record_resume_check). */
int session_record_config(const char *run, struct config *cfg, char **err)
{
	struct record r;
	if (record_load(run, &r, err) < 0)
		return -1;
	const cJSON *rs = r.run_start;
	record_set_if(&cfg->provider, rs, EVF_PROVIDER);
	record_set_if(&cfg->model, rs, EVF_MODEL);
	/* the texts the run used, from the copies kept in its run dir;
	 * a path recorded elsewhere is never read */
	char *bad = NULL;
	char *copy = record_own_file(r.dir, RECORD_INSTRUCTIONS, &bad);
	config_set(&cfg->instructions,
	           *ev_str(rs, EVF_INSTRUCTIONS, "") ? copy : NULL);
	free(copy);
	if (*ev_str(rs, EVF_SCRIPT, "") && !bad) {
		copy = record_own_file(r.dir, RECORD_SCRIPT, &bad);
		config_set(&cfg->script, copy);
		free(copy);
	}
	if (bad) {
		set_err(err, "%s", bad);
		free(bad);
		record_free(&r);
		return -1;
	}
	/* the more careful of the two; --ask still decides */
	const char *ask = ev_str(rs, EVF_ASK, NULL);
	if (config_ask_rank(ask) > config_ask_rank(cfg->ask))
		config_set(&cfg->ask, ask);
	const cJSON *sb = ev_item(rs, EVF_SANDBOX);
	record_set_if(&cfg->sandbox, sb, EVF_BACKEND);
	if (strcmp(ev_str(sb, EVF_IMAGE, "host"), "host"))
		record_set_if(&cfg->image, sb, EVF_IMAGE);
	/* declared outputs are workspace paths: the record's replace
	 * those of the layers (inputs are host paths: never recorded
	 * ones, see record_resume_check) */
	for (size_t i = 0; i < cfg->n_outputs; i++)
		free(cfg->outputs[i]);
	cfg->n_outputs = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, ev_item(rs, EVF_OUTPUTS))
	{
		if (cJSON_IsString(it) && *it->valuestring)
			config_add_output(cfg, it->valuestring);
	}
	const cJSON *lim = ev_item(rs, EVF_LIMITS);
	cfg->timeout_s =
	    (int)record_tighter(lim, EVF_TIMEOUT_S, cfg->timeout_s);
	cfg->mem_mb = record_tighter(lim, EVF_MEMORY_MB, cfg->mem_mb);
	cfg->nproc = record_tighter(lim, EVF_PROCESSES, cfg->nproc);
	cfg->cpu_s = record_tighter(lim, EVF_CPU_S, cfg->cpu_s);
	cfg->fsize_mb = record_tighter(lim, EVF_FILE_SIZE_MB, cfg->fsize_mb);
	/* these shape the requests, hence the cache keys */
	cfg->max_turns =
	    (int)record_in_range(lim, EVF_MAX_TURNS, 1, cfg->max_turns);
	cfg->max_tokens = (long)record_in_range(lim, EVF_MAX_TOKENS, 0,
	                                        (double)cfg->max_tokens);
	cfg->max_output_bytes = (size_t)record_in_range(
	    lim, EVF_MAX_OUTPUT_BYTES, 1024, (double)cfg->max_output_bytes);
	cfg->max_output_tokens = (int)record_in_range(
	    lim, EVF_MAX_OUTPUT_TOKENS, 1, cfg->max_output_tokens);
	record_keep_parsed(run, &r);
	return 0;
}

/* --- what a recorded run may not decide ---------------------------- */

/* In place, resume writes into the run dir: none of what it writes may
 * be a link someone planted to make it write elsewhere. */
static int record_no_links(const char *dir, char **err)
{
	static const char *const names[] = {"transcript.jsonl",
	                                    "assay.log",
	                                    "exec",
	                                    "cache",
	                                    "workspace",
	                                    "workspace.tar.gz",
	                                    "workspace.tar.zst",
	                                    "workspace.d",
	                                    RECORD_LOCK,
	                                    RECORD_INSTRUCTIONS,
	                                    RECORD_SCRIPT};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		char *p = xasprintf("%s/%s", dir, names[i]);
		struct stat st;
		int link = lstat(p, &st) == 0 && S_ISLNK(st.st_mode);
		if (link)
			set_err(err,
			        "%s is a symbolic link: assay never makes one "
			        "in a run dir, and resuming would write "
			        "through it; remove it if you trust this run",
			        p);
		free(p);
		if (link)
			return -1;
	}
	return 0;
}

/* Whether the recorded workspace ws was the run's own <run dir>/
 * workspace (then the run dir as it is now holds it, wherever it was
 * copied or moved). */
static int record_own_workspace(const char *ws, const char *recorded_dir)
{
	const char *base = strrchr(ws, '/');
	if (!base || strcmp(base, "/workspace"))
		return 0;
	if (!recorded_dir || !*recorded_dir)
		return 1;
	/* the run dir's last component, as recorded */
	char *d = xstrdup(recorded_dir);
	size_t n = strlen(d);
	while (n > 1 && d[n - 1] == '/')
		d[--n] = '\0';
	const char *last = strrchr(d, '/');
	last = last ? last + 1 : d;
	size_t ln = strlen(last), wn = (size_t)(base - ws);
	int own = wn > ln && !strncmp(ws + wn - ln, last, ln) &&
	          ws[wn - ln - 1] == '/';
	free(d);
	return own;
}

/* In place: the workspace is the run dir's own, or one the user names
 * again with --workspace; a recorded path alone is never used. */
static int record_pick_workspace(struct session *s, const struct record *r,
                                 char **err)
{
	const char *ws = ev_str(r->run_start, EVF_WORKSPACE, "");
	if (s->cfg->workspace || *ws != '/' || !strcmp(ws, "/workspace"))
		return 0; /* the user's own, or no host directory */
	if (record_own_workspace(ws, ev_str(r->run_start, EVF_RUN_DIR, NULL)))
		return 0; /* the sandbox uses <run dir>/workspace */
	return set_err(err,
	               "the run worked in %s, outside its run dir: a "
	               "recorded path is never used on its own; pass "
	               "--workspace %s to resume in it",
	               ws, ws);
}

/* Re-execute stages inputs again: from what the user gives now (the
 * options or the project's assay.json), never from host paths read
 * out of the record. */
static int record_need_inputs(const struct session *s, const struct record *r,
                              char **err)
{
	const cJSON *inputs = ev_item(r->run_start, EVF_INPUTS);
	if (s->cfg->n_inputs || !cJSON_GetArraySize(inputs))
		return 0;
	struct buf b;
	buf_init(&b, 0);
	const cJSON *it;
	cJSON_ArrayForEach(it, inputs)
	{
		buf_printf(&b, " --input '%s:%s'", ev_str(it, EVF_SRC, "?"),
		           ev_str(it, EVF_DEST, "?"));
	}
	set_err(err,
	        "the run staged inputs from host paths, and a recorded path "
	        "is never read on its own: pass them again to re-execute "
	        "with them:%s",
	        buf_str(&b));
	buf_free(&b);
	return -1;
}

/* The source the user gave now (--input SRC:DEST) for dest, or NULL. */
static const char *record_given(const struct config_input *in, size_t n,
                                const char *dest)
{
	for (size_t i = 0; i < n; i++)
		if (in[i].dest && !strcmp(in[i].dest, dest))
			return in[i].src;
	return NULL;
}

/* In place nothing is staged: the workspace holds the copied inputs,
 * and the mounted ones are bound again, from the file given now for
 * the same place or else the recorded path (their content is checked
 * against the record before the run goes on: inputs.c). Their places
 * (not their host paths) are part of the system prompt, so the
 * recorded ones are what the rebuilt requests must name. -1 when a
 * mounted input is missing. */
static int record_recorded_inputs(struct config *c, const cJSON *rs, char **err)
{
	struct config_input *given = c->inputs;
	size_t n_given = c->n_inputs;
	c->inputs = NULL;
	c->n_inputs = 0;
	int rc = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, ev_item(rs, EVF_INPUTS))
	{
		const char *dest = ev_str(it, EVF_DEST, NULL);
		if (!dest)
			continue;
		/* a copy is in the workspace already; a mount is bound again
		 * from its resolved path, once its hash is checked
		 * (inputs.c) */
		int mount = !strcmp(ev_str(it, EVF_MODE, "copy"), "mount");
		const char *now = record_given(given, n_given, dest);
		const char *src = !mount ? ev_str(it, EVF_SRC, "")
		                  : now  ? now
		                         : ev_str(it, EVF_PATH, "");
		struct stat st;
		if (mount && rc == 0 && stat(src, &st) < 0)
			rc = set_err(
			    err,
			    "input %s (%s) is missing: put it back, or "
			    "pass --input FILE:%s with the file the run "
			    "had",
			    dest, src, dest);
		config_add_input(c, src, dest);
		c->inputs[c->n_inputs - 1].copy = !mount;
	}
	for (size_t i = 0; i < n_given; i++) {
		free(given[i].src);
		free(given[i].dest);
	}
	free(given);
	return rc;
}

int record_resume_check(struct session *s, const struct record *r,
                        enum session_resume_mode mode, char **err)
{
	const cJSON *rs = r->run_start;
	if (mode == SESSION_RESUME && (record_no_links(r->dir, err) < 0 ||
	                               record_pick_workspace(s, r, err) < 0))
		return -1;
	if (mode == SESSION_RESUME &&
	    ev_bool(ev_item(rs, EVF_LIMITS), EVF_NETWORK, 0) &&
	    !s->cfg->network)
		return set_err(err,
		               "the run had the sandbox's network on, and a "
		               "recorded run never turns it on by itself: pass "
		               "--network to go on with it (or --re-execute "
		               "without it)");
	if (mode == SESSION_RESUME &&
	    record_recorded_inputs(s->cfg, rs, err) < 0)
		return -1;
	if (mode == SESSION_REEXECUTE && record_need_inputs(s, r, err) < 0)
		return -1;
	const char *ins = ev_str(rs, EVF_INSTRUCTIONS, "");
	if (*ins && !s->cfg->instructions)
		return set_err(err,
		               "the run used the instructions in %s, and its "
		               "run dir holds no copy of them (%s): pass "
		               "--instructions FILE to go on with them",
		               ins, RECORD_INSTRUCTIONS);
	return 0;
}

const char *record_image_id(const struct record *r)
{
	const char *id =
	    ev_str(ev_item(r->run_start, EVF_SANDBOX), EVF_IMAGE_ID, "");
	const cJSON *e;
	cJSON_ArrayForEach(e, r->events)
	{
		const char *was =
		    event_type_of(e) == EV_RUN_RESUME
		        ? ev_str(ev_item(e, EVF_SANDBOX), EVF_IMAGE_ID, NULL)
		        : NULL;
		if (was && *was)
			id = was;
	}
	return id;
}

/* "http://h/v1/" and "http://h/v1" are one server. */
static int record_same_url(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	while (na && a[na - 1] == '/')
		na--;
	while (nb && b[nb - 1] == '/')
		nb--;
	return na == nb && !strncmp(a, b, na);
}

int record_check_url(const struct session *s, const struct record *r, int given,
                     char **err)
{
	const char *rec = ev_str(r->run_start, EVF_BASE_URL, "");
	const char *now = llm_base_url(s->llm);
	if (given || !*rec || !strncmp(rec, "script:", 7) ||
	    !strncmp(now, "script:", 7) || record_same_url(rec, now))
		return 0;
	return set_err(err,
	               "the run was recorded against %s, and your settings "
	               "send requests (with your API key) to %s: a recorded "
	               "URL is never used on its own; pass --base-url %s to "
	               "resume against it (or --base-url %s to go on there)",
	               rec, now, rec, now);
}

/* --- the run dir's copies ------------------------------------------ */

/* Keep a copy of a file the run reads (its instructions, its scripted
 * model) in the run dir: resume and fork read the copy, never a path
 * recorded in the transcript. The path run_start records (src made
 * absolute), or NULL when there is no such file to read. */
static char *record_keep_copy(struct session *s, const char *src,
                              const char *name, size_t max)
{
	if (!src || !*src)
		return NULL;
	char *real = realpath(src, NULL);
	char *recorded = xstrdup(real ? real : src);
	char *dst = xasprintf("%s/%s", s->rundir.run_dir, name);
	char *dst_real = realpath(dst, NULL);
	char *err = NULL, *text = NULL;
	size_t len = 0;
	if (real && dst_real && !strcmp(real, dst_real))
		goto out; /* re-executed in the same dir: it is the copy */
	text = read_file_max(src, max, &len, &err);
	if (!text || write_file_replace(dst, text, len, &err) < 0) {
		log_warn("keeping a copy of %s: %s", src, err);
		goto out;
	}
out:
	free(err);
	free(text);
	free(dst);
	free(dst_real);
	free(real);
	return recorded;
}

void record_copies(struct session *s, char **instructions, char **script)
{
	*instructions = record_keep_copy(s, s->cfg->instructions,
	                                 RECORD_INSTRUCTIONS, 1 << 20);
	*script = record_keep_copy(s, s->cfg->script, RECORD_SCRIPT, 64u << 20);
}
