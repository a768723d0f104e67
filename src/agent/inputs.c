/* inputs.c: the run's inputs known by content. Once a run is announced
 * their SHA-256 is taken in a helper (sbx_hash_inputs, cached by path,
 * size, mtime and inode) and recorded as input_hashes; a resume in
 * place, which mounts the recorded files again, first checks that each
 * is still the file the run had, and stops (exit 2) naming the input,
 * its old and new hash, and the option that fixes it. Here too: slow
 * work shown to the frontends as it goes (progress, never recorded). */
#include "agent/agent_internal.h"
#include "assay/config.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/sandbox.h"
#include "assay/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* input_hashes arrived (or the hashing failed: the run goes on, and a
 * resume checks sizes and mtimes only). */
static void inputs_hashed(struct session *s, void *ctx, int rc, const char *err,
                          struct buf *data, cJSON *list)
{
	(void)ctx;
	(void)data;
	if (rc < 0) {
		log_warn("inputs: not hashed: %s", err ? err : "failed");
		return;
	}
	if (session_state(s) != SESSION_DONE)
		session_emit(s, ev_input_hashes(list));
}

void session_show_progress(void *arg, const char *what, const char *subject,
                           double done, double total, int64_t elapsed_ms)
{
	struct session *s = arg;
	cJSON *ev = ev_progress(what, subject, done, total, elapsed_ms);
	session_show(s, ev);
	cJSON_Delete(ev);
}

/* How far the helper has read: shown to the frontends (not recorded),
 * which say so once it takes long. */
static void inputs_progress(void *arg, const char *dest, double done,
                            double total)
{
	struct session *s = arg;
	session_show_progress(s, "hashing", dest, done, total,
	                      now_ms() - s->inputs_t0);
}

/* Hash the inputs (a verify: then compare, in inputs_verified). */
static void inputs_hash_start(struct session *s, session_sbx_fn done)
{
	s->inputs_t0 = now_ms();
	sbx_hash_inputs(s->sbx, inputs_progress, s, session_sbx_done,
	                session_sbx_call(s, done, NULL));
}

void inputs_hash(struct session *s)
{
	if (s->inputs_checked) { /* taken for the resume's check */
		session_emit(s, ev_input_hashes(s->inputs_checked));
		cJSON_Delete(s->inputs_checked);
		s->inputs_checked = NULL;
	} else if (s->cfg->n_inputs) {
		inputs_hash_start(s, inputs_hashed);
	}
}

/* The entry of arr whose dest is dest, or NULL. */
static const cJSON *by_dest(const cJSON *arr, const char *dest)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		if (!strcmp(ev_str(it, EVF_DEST, ""), dest))
			return it;
	}
	return NULL;
}

/* The recorded run's last input_hashes, or NULL. */
static const cJSON *recorded_hashes(const struct record *r)
{
	const cJSON *found = NULL, *ev;
	cJSON_ArrayForEach(ev, r->events)
	{
		if (event_type_of(ev) == EV_INPUT_HASHES)
			found = ev_item(ev, EVF_INPUTS);
	}
	return found;
}

/* Why the input now at path (now, from the helper) is not the one the
 * run had (rec: run_start's entry; hashed: input_hashes' or NULL), or
 * NULL. */
static char *input_changed(const cJSON *rec, const cJSON *hashed,
                           const cJSON *now, const char *path, const char *run)
{
	const char *dest = ev_str(rec, EVF_DEST, "?");
	const char *was = ev_str(hashed, EVF_SHA256, NULL);
	const char *is = ev_str(now, EVF_SHA256, "?");
	char *why = NULL;
	if (was && strcmp(was, is))
		why = xasprintf("its SHA-256 was %s and is now %s", was, is);
	else if (!was && !strcmp(ev_str(rec, EVF_KIND, ""), "file") &&
	         (ev_num(rec, EVF_BYTES, -1) != ev_num(now, EVF_BYTES, -2) ||
	          fabs(ev_num(rec, EVF_MTIME, 0) - ev_num(now, EVF_MTIME, 0)) >
	              0.002))
		why = xasprintf("its size or modification time changed (the "
		                "run recorded no hash; it is now %s)",
		                is);
	if (!why)
		return NULL;
	char *msg = xasprintf(
	    "input %s (%s) is not the file the run had: %s. Put the original "
	    "back, or give the run its file again with `assay resume %s "
	    "--input FILE:%s`; to go on with the new data, start over with "
	    "`assay resume %s --re-execute --input %s:%s`",
	    dest, path, why, run, dest, run, path, dest);
	free(why);
	return msg;
}

/* Where the resumed run reads input rec: what --input gave for its
 * place, else the recorded path. */
static const char *input_path(const struct config *cfg, const cJSON *rec)
{
	const char *dest = ev_str(rec, EVF_DEST, "");
	for (size_t i = 0; i < cfg->n_inputs; i++)
		if (!strcmp(cfg->inputs[i].dest, dest))
			return cfg->inputs[i].src;
	return ev_str(rec, EVF_PATH, "?");
}

/* The hashes for a resume in place: compare, then go on or stop. */
static void inputs_verified(struct session *s, void *ctx, int rc,
                            const char *err, struct buf *data, cJSON *list)
{
	(void)ctx;
	(void)data;
	if (session_state(s) != SESSION_STARTING)
		return;
	if (rc < 0) {
		session_start_failed(
		    s,
		    xasprintf("cannot check the run's inputs: %s",
		              err ? err : "hashing failed"),
		    EXIT_SANDBOX);
		return;
	}
	const struct record *r = replay_record(s->replay);
	const cJSON *hashes = recorded_hashes(r), *rec;
	cJSON_ArrayForEach(rec, ev_item(r->run_start, EVF_INPUTS))
	{
		if (strcmp(ev_str(rec, EVF_MODE, ""), "mount"))
			continue;
		const char *dest = ev_str(rec, EVF_DEST, "");
		char *why = input_changed(rec, by_dest(hashes, dest),
		                          by_dest(list, dest),
		                          input_path(s->cfg, rec), r->dir);
		if (why) {
			session_start_failed(s, why, EXIT_USAGE);
			return;
		}
	}
	log_info("inputs: the mounted inputs are the run's");
	s->inputs_checked = cJSON_Duplicate(list, 1);
	s->inputs_then(s);
}

int inputs_verify(struct session *s, void (*then)(struct session *s))
{
	if (!s->replay || !replay_in_place(s->replay))
		return 0;
	int mounted = 0;
	for (size_t i = 0; i < s->cfg->n_inputs; i++)
		mounted |= !s->cfg->inputs[i].copy;
	if (!mounted)
		return 0;
	s->inputs_then = then;
	inputs_hash_start(s, inputs_verified);
	return 1;
}
