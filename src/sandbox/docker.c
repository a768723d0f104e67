/* docker.c: the `docker` sandbox backend. One container per run, driven
 * through the Docker Engine API (never the docker CLI): network none
 * unless --network, memory, process and CPU limits, every capability
 * dropped, no-new-privileges, a read-only root with the workspace on a
 * volume and a private /tmp, an init process, and labels naming the run
 * and its owner (host, pid, process start time, boot) so that a later
 * start can remove what a crashed assay left. The container and its
 * volume are removed at the end of the run, on Ctrl-C and on errors.
 * Here: the ops table, the stop and the release. The start:
 * docker_start.c; commands: docker_exec.c; files: docker_files.c and
 * docker_xfer.c; the daemon's address and API version: docker_api.c. */
#include "assay/config.h"
#include "assay/http.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/path.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DK_DRAIN_MS 10000  /* file operations may finish at stop */
#define DK_REMOVE_MS 60000 /* the stop's DELETE */
#define DK_REMOVE_TRIES 20 /* by name, while a create may be under way */
#define DK_REMOVE_RETRY_MS 50
/* Descriptors a docker sandbox holds at most: 15. Measured as for
 * LOCAL_FDS (local.c), the same suite with "sandbox": "docker" on
 * assay-sandbox:latest: clean under `ulimit -n 28`, not under 27. */
#define DOCKER_FDS 15

/* A command, through the runner or an exec of its own. */
static struct sbx_exec *docker_exec(struct sbx *s, const struct sbx_exec_req *r,
                                    const struct sbx_exec_obs *obs, char **err)
{
	if (!r->command && (!r->argv || !r->argv[0])) {
		set_err(err, "sandbox: nothing to run");
		return NULL;
	}
	struct docker *d = dk_of(s);
	if (d && d->draining) {
		set_err(err, "sandbox: stopping");
		return NULL;
	}
	const char *sh[] = {"/bin/bash", "-c", r->command, NULL};
	struct dk_exec_args a = {
	    .argv = r->argv ? r->argv : sh,
	    .keep_stdin = r->keep_stdin,
	    .timeout_s = r->timeout_s > 0 ? r->timeout_s : s->cfg->timeout_s,
	};
	struct dk_exec *e = dk_exec_start(s, &a, obs, err);
	return e ? &e->base : NULL;
}

static void docker_cancel(struct sbx_exec *e)
{
	dk_exec_cancel((struct dk_exec *)e);
}

static int docker_exec_write(struct sbx_exec *e, const void *data, size_t n)
{
	return dk_exec_write((struct dk_exec *)e, data, n);
}

/* Whether there is a container to work in (sandbox.c refuses the file
 * operations when not). */
static int docker_ready(const struct sbx *s)
{
	const struct docker *d = s->priv;
	return d && d->started && !d->stopped && !d->draining;
}

/* A write into a mounted input is refused as the local one refuses it:
 * the bind is read-only. */
static void docker_write_file(struct sbx *s, const char *rel, const void *data,
                              size_t n, sbx_done_fn fn, void *arg)
{
	char *norm = NULL, *perr = NULL;
	int k = path_normalize(rel, &norm, &perr) == 0
	            ? path_mount_find(&s->mounts, norm, NULL)
	            : -1;
	if (k >= 0)
		sbx_later(s, fn, arg, SBX_FAILED,
		          path_mount_readonly(&s->mounts.v[k], norm), NULL,
		          NULL);
	else
		dk_write_file(s, rel, data, n, fn, arg);
	free(norm);
	free(perr);
}

/* ---- stop ---- */

/* The path that removes the container (and its volume), by id, or by
 * name when a create may have been taken without its answer. */
static char *remove_path(struct docker *d)
{
	if (d->id)
		return xasprintf("/containers/%s?force=1&v=1", d->id);
	if (d->created && d->name) {
		char *q = xfer_escape(d->name);
		char *p = xasprintf("/containers/%s?force=1&v=1", q);
		free(q);
		return p;
	}
	return NULL;
}

static void docker_remove(struct sbx *s);

/* A create whose answer never came may still be under way in the
 * daemon: the DELETE by name is tried again for a while. */
static void remove_retry(void *arg)
{
	struct sbx *s = arg;
	dk_of(s)->remove_timer = 0;
	docker_remove(s);
}

/* The path that removes the named workspace volume. */
static char *volume_path(const struct docker *d)
{
	char *q = xfer_escape(d->volume);
	char *p = xasprintf("/volumes/%s", q);
	free(q);
	return p;
}

/* The named workspace volume is gone (or not): the stop is over. */
static void on_volume_removed(void *arg, long status, cJSON *reply,
                              const char *err)
{
	struct sbx *s = arg;
	struct docker *d = dk_of(s);
	(void)reply;
	d->remove_call = NULL;
	char *why = NULL;
	if (status != 204 && status != 404) {
		why = xasprintf("docker: cannot remove volume %s: %s (the next "
		                "run removes it)",
		                d->volume, err ? err : "no answer");
		log_warn("%s", why);
	}
	free(d->volume);
	d->volume = NULL;
	sbx_stopped(s, why ? SBX_FAILED : SBX_OK, why);
	free(why);
}

/* After the container: its named workspace volume (a volume with a
 * name outlives its container), then the stop is over. */
static void volume_remove(struct sbx *s)
{
	struct docker *d = dk_of(s);
	if (!d->volume) {
		sbx_stopped(s, SBX_OK, NULL);
		return;
	}
	char *path = volume_path(d), *err = NULL;
	d->remove_call = dk_json_call(&d->api, "DELETE", path, NULL,
	                              DK_REMOVE_MS, on_volume_removed, s, &err);
	if (!d->remove_call)
		on_volume_removed(s, 0, NULL, err ? err : "no request");
	free(err);
	free(path);
}

/* The daemon's answer to the DELETE: the stop is over. */
static void on_removed(void *arg, long status, cJSON *reply, const char *err)
{
	struct sbx *s = arg;
	struct docker *d = dk_of(s);
	(void)reply;
	d->remove_call = NULL;
	if (status == 404 && !d->id && ++d->remove_tries < DK_REMOVE_TRIES) {
		d->remove_timer = loop_timer_add(s->loop, DK_REMOVE_RETRY_MS,
		                                 remove_retry, s);
		return;
	}
	if (status == 204 || status == 404) {
		log_info("docker: container %s removed", d->name);
		free(d->id);
		d->id = NULL; /* nothing left for the release to remove */
		d->created = 0;
		volume_remove(s);
		return;
	}
	char *why = xasprintf("docker: cannot remove container %s: %s (the "
	                      "next run removes it)",
	                      d->name, err ? err : "no answer");
	log_warn("%s", why);
	sbx_stopped(s, SBX_FAILED, why);
	free(why);
}

/* DELETE the container (and its volume), or be done if there is none. */
static void docker_remove(struct sbx *s)
{
	struct docker *d = dk_of(s);
	char *path = remove_path(d);
	if (!path) {
		sbx_stopped(s, SBX_OK, NULL);
		return;
	}
	char *err = NULL;
	d->remove_call = dk_json_call(&d->api, "DELETE", path, NULL,
	                              DK_REMOVE_MS, on_removed, s, &err);
	free(path);
	if (!d->remove_call) {
		char *why = xasprintf("docker: cannot remove container %s: %s "
		                      "(the next run removes it)",
		                      d->name, err ? err : "no request");
		log_warn("%s", why);
		sbx_stopped(s, SBX_FAILED, why);
		free(why);
	}
	free(err);
}

/* The file operations are done (or cut short): end every exec and
 * remove the container. */
static void docker_drained(struct sbx *s)
{
	struct docker *d = dk_of(s);
	sbx_hold(s);
	dk_exec_stop_all(s);
	if (sbx_unhold(s))
		return; /* freed from an on_exit */
	d->stopped = 1;
	docker_remove(s);
}

/* From the loop: the commands end (their on_exit, cancelled), then the
 * file operations drain. */
static void docker_stop_begin(void *arg)
{
	struct sbx *s = arg;
	dk_of(s)->stop_timer = 0;
	sbx_hold(s);
	dk_exec_stop_commands(s);
	if (sbx_unhold(s))
		return; /* freed from an on_exit */
	sbx_drain(s, DK_DRAIN_MS, docker_drained);
}

/* sbx_stop: no new work; the rest follows from the loop. */
static void docker_stop(struct sbx *s)
{
	struct docker *d = dk_of(s);
	if (!d) {
		sbx_stopped(s, SBX_OK, NULL);
		return;
	}
	d->draining = 1; /* no new commands or file operations */
	d->stop_timer = loop_timer_add(s->loop, 0, docker_stop_begin, s);
}

/* ---- release ---- */

/* sbx_free: end everything and remove the container, waiting. */
static void docker_destroy(struct sbx *s)
{
	struct docker *d = dk_of(s);
	if (!d)
		return;
	d->draining = 1;
	if (d->remove_call) {
		dk_cancel(d->remove_call); /* sent again below, waited for */
		d->remove_call = NULL;
	}
	if (d->remove_timer)
		loop_timer_cancel(s->loop, d->remove_timer);
	if (d->stop_timer)
		loop_timer_cancel(s->loop, d->stop_timer);
	dk_exec_stop_all(s);
	char *path = remove_path(d);
	if (path && d->api.http) {
		/* the last resort: wait for the daemon (a few ms; longer
		 * only while a create without its answer may land) */
		char *why = NULL;
		long st = dk_json(&d->api, "DELETE", path, NULL, NULL, &why);
		for (int i = 0; st == 404 && !d->id && i < DK_REMOVE_TRIES;
		     i++) {
			usleep(DK_REMOVE_RETRY_MS * 1000);
			free(why);
			why = NULL;
			st = dk_json(&d->api, "DELETE", path, NULL, NULL, &why);
		}
		if (st != 204 && st != 404)
			log_warn("docker: cannot remove container %s: %s (the "
			         "next run removes it)",
			         d->name, why ? why : "no answer");
		else
			log_info("docker: container %s removed", d->name);
		free(why);
	}
	free(path);
	if (d->volume && d->api.http) {
		char *vp = volume_path(d), *why = NULL;
		long st = dk_json(&d->api, "DELETE", vp, NULL, NULL, &why);
		if (st != 204 && st != 404)
			log_warn("docker: cannot remove volume %s: %s (the "
			         "next run removes it)",
			         d->volume, why ? why : "no answer");
		free(why);
		free(vp);
	}
	d->stopped = 1;
	dk_runner_free(s);
	http_free(d->api.http);
	dk_endpoint_free(&d->api.ep);
	free(d->api.version);
	free(d->id);
	free(d->name);
	free(d->volume);
	free(d->chunk);
	free(d);
	s->priv = NULL;
}

const struct sbx_ops sbx_docker_ops = {
    .name = "docker",
    .caps = SBX_CAP_IMPORT_TAR | SBX_CAP_DELTA,
    .fds = DOCKER_FDS,
    .start = dk_start,
    .exec = docker_exec,
    .cancel = docker_cancel,
    .exec_write = docker_exec_write,
    .ready = docker_ready,
    .read_file = dk_read_file,
    .write_file = docker_write_file,
    .list = dk_list,
    .fetch = dk_fetch,
    .export_tar = dk_export_tar,
    .import_tar = dk_import_tar,
    .export_delta = dk_export_delta,
    .stop = docker_stop,
    .destroy = docker_destroy,
    .probe = dk_probe,
};
