/* record.c: a recorded run read back: where its transcript is, its
 * events (a last line cut short by a crash is ignored), and the
 * settings its run_start recorded, for resume, re-execute and fork. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TRANSCRIPT_MAX ((size_t)1 << 30)

void record_free(struct record *r)
{
	if (!r)
		return;
	free(r->dir);
	free(r->transcript);
	cJSON_Delete(r->events);
	memset(r, 0, sizeof *r);
}

int record_parse(const char *text, size_t len, struct record *r, char **err)
{
	r->events = cJSON_CreateArray();
	r->complete_bytes = 0;
	r->dropped_bytes = 0;
	const char *p = text, *end = text + len;
	unsigned long no = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		no++;
		if (!nl) {
			/* the line being written when the run died */
			r->dropped_bytes = (size_t)(end - p);
			log_warn("transcript: the last line (%zu bytes) is cut "
			         "short; ignored",
			         r->dropped_bytes);
			break;
		}
		cJSON *ev = cJSON_ParseWithLength(p, (size_t)(nl - p));
		if (ev && cJSON_IsObject(ev) && json_str(ev, "type", NULL)) {
			uint64_t seq = (uint64_t)json_num(ev, "seq", 0);
			if (seq > r->last_seq)
				r->last_seq = seq;
			int64_t t = (int64_t)json_num(ev, "t", 0);
			if (t > r->last_t)
				r->last_t = t;
			if (!r->run_start &&
			    !strcmp(json_str(ev, "type", ""), "run_start"))
				r->run_start = ev;
			cJSON_AddItemToArray(r->events, ev);
		} else if (nl - p > 0) {
			log_warn("transcript: line %lu is not an event; "
			         "skipped",
			         no);
			cJSON_Delete(ev);
		}
		p = nl + 1;
		r->complete_bytes = (size_t)(p - text);
	}
	if (!r->run_start)
		return set_err(err, "the transcript has no run_start event: "
		                    "is it an assay transcript?");
	return 0;
}

static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* RUN as a run dir, a transcript path or a run id. */
static char *find_dir(const char *run, char **err)
{
	size_t n = strlen(run);
	if (is_file(run)) {
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
	int ok = is_file(t);
	free(t);
	if (ok)
		return dir;
	free(dir);
	if (!strchr(run, '/')) {
		dir = xasprintf(".assay/runs/%s", run);
		t = xasprintf("%s/transcript.jsonl", dir);
		ok = is_file(t);
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
	        is_dir(run) ? " (the directory has no transcript.jsonl)" : "");
	return NULL;
}

int record_load(const char *run, struct record *r, char **err)
{
	memset(r, 0, sizeof *r);
	if (!run || !*run)
		return set_err(err, "which run? give a run dir, a transcript "
		                    "or a run id");
	r->dir = find_dir(run, err);
	if (!r->dir)
		return -1;
	r->transcript = xasprintf("%s/transcript.jsonl", r->dir);
	size_t len = 0;
	char *text = read_file_max(r->transcript, TRANSCRIPT_MAX, &len, err);
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

static void set_if(char **field, const cJSON *obj, const char *key)
{
	const char *v = json_str(obj, key, NULL);
	if (v && *v)
		config_set(field, v);
}

int session_record_config(const char *run, struct config *cfg, char **err)
{
	struct record r;
	if (record_load(run, &r, err) < 0)
		return -1;
	const cJSON *rs = r.run_start;
	set_if(&cfg->provider, rs, "provider");
	set_if(&cfg->model, rs, "model");
	set_if(&cfg->base_url, rs, "base_url");
	set_if(&cfg->script, rs, "script");
	set_if(&cfg->instructions, rs, "instructions");
	set_if(&cfg->ask, rs, "ask");
	set_if(&cfg->out_dir, rs, "out");
	const cJSON *sb = cJSON_GetObjectItem(rs, "sandbox");
	set_if(&cfg->sandbox, sb, "backend");
	if (strcmp(json_str(sb, "image", "host"), "host"))
		set_if(&cfg->image, sb, "image");
	/* the record's inputs and outputs replace those of the layers */
	for (size_t i = 0; i < cfg->n_inputs; i++) {
		free(cfg->inputs[i].src);
		free(cfg->inputs[i].dest);
	}
	cfg->n_inputs = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(rs, "inputs"))
	{
		const char *src = json_str(it, "src", NULL);
		const char *dest = json_str(it, "dest", NULL);
		if (src && dest)
			config_add_input(cfg, src, dest);
	}
	for (size_t i = 0; i < cfg->n_outputs; i++)
		free(cfg->outputs[i]);
	cfg->n_outputs = 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(rs, "outputs"))
	{
		if (cJSON_IsString(it))
			config_add_output(cfg, it->valuestring);
	}
	const cJSON *lim = cJSON_GetObjectItem(rs, "limits");
	cfg->timeout_s = (int)json_num(lim, "timeout_s", cfg->timeout_s);
	cfg->max_turns = (int)json_num(lim, "max_turns", cfg->max_turns);
	cfg->max_tokens =
	    (long)json_num(lim, "max_tokens", (double)cfg->max_tokens);
	cfg->mem_mb = (long)json_num(lim, "memory_mb", (double)cfg->mem_mb);
	cfg->nproc = (long)json_num(lim, "processes", (double)cfg->nproc);
	cfg->cpu_s = (long)json_num(lim, "cpu_s", (double)cfg->cpu_s);
	cfg->fsize_mb =
	    (long)json_num(lim, "file_size_mb", (double)cfg->fsize_mb);
	cfg->max_output_bytes = (size_t)json_num(lim, "max_output_bytes",
	                                         (double)cfg->max_output_bytes);
	cfg->max_output_tokens = (int)json_num(lim, "max_output_tokens",
	                                       (double)cfg->max_output_tokens);
	cfg->network = json_bool(lim, "network", cfg->network);
	record_free(&r);
	return 0;
}
