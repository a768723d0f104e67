/* start.c: getting a run going. session_start and what it shares with
 * session_resume (run dir, prompt, provider, sandbox made), then the
 * sandbox coming up; the states on the way are session.c's. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/fdlimit.h"
#include "assay/llm.h"
#include "assay/log.h"
#include "assay/sandbox.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

int session_prepare(struct session *s, char **err)
{
	if (rundir_check_layout(s->cfg, s->rundir.run_dir, err) < 0)
		return session_fail(s, EXIT_USAGE);
	s->system_prompt = prompt_system(s->cfg, err);
	if (!s->system_prompt)
		return session_fail(s, EXIT_USAGE);
	struct llm_observer lo = {session_on_llm_text, session_on_llm_retry,
	                          session_on_llm_done, s};
	s->llm = llm_new(s->cfg, s->loop, s->http, &lo, err);
	if (!s->llm)
		return session_fail(s, strcmp(s->cfg->provider, "script")
		                           ? EXIT_PROVIDER
		                           : EXIT_USAGE);
	if (budget_prices(&s->budget, s->cfg, llm_model(s->llm), err) < 0)
		return session_fail(s, EXIT_USAGE);
	context_setup(s);
	s->sbx = sbx_new(s->cfg, s->loop, s->rundir.run_dir, err);
	if (!s->sbx)
		return session_fail(s, EXIT_USAGE);
	sbx_set_progress(s->sbx, session_show_progress, s);
	return 0;
}

void session_start_failed(struct session *s, char *why, int code)
{
	char *told = fdlimit_explain(why); /* out of descriptors: what to do */
	log_warn("start: %s", told ? told : why);
	free(s->error);
	s->error = told ? (free(why), told) : why;
	session_wind_up(s, "failed", code);
}

/* The archive of a resumed run is loaded into its fresh sandbox. */
static void session_restored(struct session *s, void *ctx, int rc,
                             const char *err, struct buf *data, cJSON *list)
{
	(void)ctx;
	(void)data;
	(void)list;
	if (s->state != SESSION_STARTING)
		return; /* ended meanwhile */
	char *path = sbx_archive_path(s->rundir.run_dir);
	if (rc < 0) {
		session_start_failed(
		    s, replay_restore_error(path, sbx_name(s->sbx), err),
		    EXIT_USAGE);
	} else {
		log_info("resume: workspace restored from %s in %lld ms", path,
		         (long long)(now_ms() - s->boot_ms));
		persist_restored(s);
		session_announce(s);
	}
	free(path);
}

/* The sandbox is up and its inputs are the run's: restore a resumed
 * workspace, or announce. */
static void session_sandbox_ready(struct session *s)
{
	unsigned caps = sbx_caps(s->sbx);
	if (s->replay && replay_in_place(s->replay)) {
		/* the workspace the run left: restored from its archive,
		 * or the host directory as it is */
		if (caps & SBX_CAP_IMPORT_TAR) {
			s->boot_ms = now_ms();
			char *path = sbx_archive_path(s->rundir.run_dir);
			sbx_import_tar(
			    s->sbx, path, session_sbx_done,
			    session_sbx_call(s, session_restored, NULL));
			free(path);
			return;
		}
		if (!(caps & SBX_CAP_HOST_WORKSPACE)) {
			session_start_failed(
			    s,
			    replay_restore_error(NULL, sbx_name(s->sbx), NULL),
			    EXIT_USAGE);
			return;
		}
	}
	session_announce(s);
}

/* sbx_start completed: the inputs checked (resume), then ready. */
void session_sandbox_started(struct session *s, void *ctx, int rc,
                             const char *err, struct buf *data, cJSON *list)
{
	(void)ctx;
	(void)data;
	(void)list;
	if (s->state != SESSION_STARTING)
		return; /* ended meanwhile: ENDING stops it */
	if (rc < 0) {
		session_start_failed(
		    s, xstrdup(err ? err : "the sandbox did not start"),
		    EXIT_SANDBOX);
		return;
	}
	log_info("sandbox: %s up in %lld ms", sbx_name(s->sbx),
	         (long long)(now_ms() - s->boot_ms));
	if (!inputs_verify(s, session_sandbox_ready))
		session_sandbox_ready(s);
}

int session_start(struct session *s, const char *prompt, char **err)
{
	if (s->state != SESSION_NEW)
		return set_err(err, "the session has already started");
	if (approval_init(s, err) < 0)
		return session_fail(s, EXIT_USAGE);
	if (rundir_create(s, err) < 0)
		return session_fail(s, EXIT_FAILED);
	if (session_prepare(s, err) < 0)
		return -1;
	s->prompt = prompt ? xstrdup(prompt) : NULL;
	session_boot(s, 1);
	return 0;
}

void session_start_sandbox(struct session *s, int stage_inputs)
{
	s->boot_ms = now_ms();
	sbx_start(s->sbx, stage_inputs, session_sbx_done,
	          session_sbx_call(s, session_sandbox_started, NULL));
}
