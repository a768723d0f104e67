/* rundir.c: the run directory (DESIGN.md "Run directory"): its id and
 * path, its layout (exec/, cache/, assay.log, transcript.jsonl), the
 * lock held while a session writes it, and the check that nothing
 * assay trusts lies where sandboxed code can write. With transcript.c
 * the owner of the record part (rundir.h). */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/events.h"
#include "assay/llm.h"
#include "assay/sandbox.h"
#include "assay/log.h"
#include "assay/path.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A new run id: the local time and a few random bits, different for
 * each run one process starts (assay eval starts many in one second). */
static char *rundir_new_id(void)
{
	static unsigned seq;
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", &tm);
	unsigned r = (unsigned)(now_ms() ^ (getpid() << 8)) + 0x9e37u * ++seq;
	return xasprintf("%s-%04x", ts, r & 0xffff);
}

void rundir_init(struct rundir *rd)
{
	transcript_init(&rd->tr);
	rd->lock_fd = -1;
}

void rundir_set(struct session *s, const char *dir, const char *id)
{
	free(s->rundir.run_dir);
	free(s->rundir.run_id);
	s->rundir.run_dir = dir ? xstrdup(dir) : NULL;
	s->rundir.run_id = id ? xstrdup(id) : NULL;
}

int rundir_create(struct session *s, char **err)
{
	char *id = rundir_new_id();
	char *dir = s->cfg->run_dir ? xstrdup(s->cfg->run_dir)
	                            : xasprintf(".assay/runs/%s", id);
	rundir_set(s, dir, id);
	free(dir);
	free(id);
	return rundir_open(s, err);
}

/* A session's own descriptors, at most, besides its sandbox's: 5 seen
 * in /proc/PID/fd while its commands ran (its run dir's lock, assay.log
 * and transcript.jsonl, libcurl's multi socketpair), and the model's
 * connection, which a provider keeps alive between requests (the fake
 * server closes it: a session against it needed no more descriptors
 * than a scripted one, `ulimit -n 21` for both at -j 1). */
#define SESSION_OWN_FDS 6

int session_fds(const struct config *cfg)
{
	return SESSION_OWN_FDS + sbx_backend_fds(cfg);
}

int rundir_open(struct session *s, char **err)
{
	char *sub[] = {"exec", "cache"};
	struct stat st;
	s->rundir.made_run_dir = stat(s->rundir.run_dir, &st) < 0;
	if (mkdir_p(s->rundir.run_dir, err) < 0 || rundir_lock(s, err) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		char *p = xasprintf("%s/%s", s->rundir.run_dir, sub[i]);
		int rc = mkdir_p(p, err);
		free(p);
		if (rc < 0)
			return -1;
	}
	char *p = xasprintf("%s/assay.log", s->rundir.run_dir);
	int rc = log_open(p, err);
	free(p);
	if (rc < 0)
		return -1;
	return transcript_open(&s->rundir.tr, s->rundir.run_dir, err);
}

int rundir_lock(struct session *s, char **err)
{
	if (s->rundir.lock_fd >= 0)
		return 0;
	char *path = xasprintf("%s/%s", s->rundir.run_dir, RECORD_LOCK);
	int fd = open_regular(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0644, err);
	int rc = 0;
	if (fd < 0) {
		rc = -1;
		goto out;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		char pid[32] = "";
		ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		rc = set_err(err,
		             "run is in use (pid %s): %s is being written by "
		             "another assay; wait for it to end or stop it, "
		             "then try again",
		             *pid ? pid : "?", s->rundir.run_dir);
		close(fd);
		goto out;
	}
	char pid[32];
	int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n)
		log_warn("%s: cannot write the pid: %s", path, strerror(errno));
	s->rundir.lock_fd = fd;
out:
	free(path);
	return rc;
}

int rundir_check_layout(const struct config *cfg, const char *run_dir,
                        char **err)
{
	if (!cfg->workspace)
		return 0;
	char *ws = realpath(cfg->workspace, NULL);
	if (!ws)
		return set_err(err, "workspace %s: %s", cfg->workspace,
		               strerror(errno));
	int rc = 0;
	if (path_lies_inside(run_dir, ws))
		rc = set_err(err,
		             "the run dir %s is inside the workspace %s, where "
		             "sandboxed code could rewrite it: pass --run-dir "
		             "with a directory outside the workspace",
		             run_dir, ws);
	else if (cfg->n_outputs && path_lies_inside(cfg->out_dir, ws))
		rc =
		    set_err(err,
		            "the out dir %s is inside the workspace %s, where "
		            "sandboxed code could plant links: pass --out with "
		            "a directory outside the workspace",
		            cfg->out_dir, ws);
	free(ws);
	return rc;
}

void rundir_close(struct session *s)
{
	transcript_close(&s->rundir.tr);
	if (s->rundir.lock_fd >= 0)
		close(s->rundir.lock_fd); /* the run dir is free again */
	s->rundir.lock_fd = -1;
	/* a start that failed before run_start leaves nothing behind */
	if (!s->rundir.tr.written && s->rundir.made_run_dir &&
	    s->rundir.run_dir)
		rm_rf(s->rundir.run_dir);
}

void session_run_info(const struct session *s, struct ev_run *run)
{
	*run = (struct ev_run){
	    .run_id = s->rundir.run_id,
	    .run_dir = s->rundir.run_dir,
	    .provider = llm_provider(s->llm),
	    .model = llm_model(s->llm),
	    .base_url = llm_base_url(s->llm),
	    .backend = sbx_name(s->sbx),
	    .image = sbx_image(s->sbx),
	    .image_id = sbx_image_id(s->sbx),
	    .repo_digests = sbx_repo_digests(s->sbx),
	    .image_reported = sbx_image_reported(s->sbx),
	    .workspace = sbx_workspace(s->sbx),
	};
	/* a resume or re-execute on another image than the run's */
	const char *was =
	    s->replay ? record_image_id(replay_record(s->replay)) : "";
	if (*was && *run->image_id && strcmp(was, run->image_id))
		run->image_id_was = was;
}

void session_emit_run_start(struct session *s, const struct ev_fork *fork)
{
	struct ev_run run;
	session_run_info(s, &run);
	/* what resume needs to ask the same questions again: copies of
	 * the files, kept in the run dir */
	char *instructions, *script;
	record_copies(s, &instructions, &script);
	run.instructions = instructions;
	run.script = script;
	cJSON *inputs = sbx_inputs_record(s->sbx);
	run.inputs = inputs;
	session_emit(s, ev_run_start(&run, s->cfg, fork));
	cJSON_Delete(inputs);
	free(instructions);
	free(script);
}
