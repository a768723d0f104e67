/* docker_kill.c: stopping one command in the container (a timeout,
 * Ctrl-C): a kill frame to the runner, or a second exec running the
 * wrapper in kill mode; when that cannot start or the command is still
 * there after a grace period (a process bomb holds every PID), the
 * container is killed and started again: the workspace is a volume
 * and survives, /tmp does not. The restart is a chain of requests on
 * the loop (kill, then start until the daemon takes it); commands
 * started meanwhile wait for its end. */
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DK_KILL_GRACE_MS 3000 /* then the container is restarted */
#define DK_RESTART_TRIES 50   /* starts while the kill is still going on */
#define DK_RESTART_RETRY_MS 100

void dk_exec_on_timeout(void *arg)
{
	struct dk_exec *e = arg;
	e->timer = 0;
	if (e->finished)
		return;
	e->timed_out = 1;
	dk_exec_kill(e);
}

/* The command survived its kill: restart the container under it. */
static void dk_on_grace(void *arg)
{
	struct dk_exec *e = arg;
	e->grace = 0;
	if (e->finished)
		return;
	log_warn("docker: %s survived its kill for %d ms; restarting the "
	         "container",
	         e->tag, DK_KILL_GRACE_MS);
	char *err = NULL;
	if (dk_restart(e->base.s, &err) < 0) {
		log_error("%s", err);
		free(err);
	}
}

struct killer {
	struct sbx *s;
	char target[32];
};

/* The exec tagged tag, if it is still there. */
static struct dk_exec *find_tag(struct sbx *s, const char *tag)
{
	for (struct dk_exec *e = dk_of(s)->execs; e; e = e->next)
		if (!strcmp(e->tag, tag))
			return e;
	return NULL;
}

/* The kill ran: if it failed and its target lives on, restart. */
static void killer_done(void *arg, const struct sbx_exit *ex)
{
	struct killer *k = arg;
	struct dk_exec *t = find_tag(k->s, k->target);
	if (t && !t->finished && (ex->error || ex->exit_code != 0)) {
		log_warn("docker: the kill of %s failed (%s); restarting the "
		         "container",
		         k->target, ex->error ? ex->error : "nonzero exit");
		char *err = NULL;
		if (dk_restart(k->s, &err) < 0) {
			log_error("%s", err);
			free(err);
		}
	}
	free(k);
}

/* Start the wrapper in kill mode for tag; the loop reports back. */
void dk_launch_killer(struct sbx *s, const char *tag)
{
	if (dk_of(s)->draining || dk_of(s)->restarting)
		return; /* the restart kills everything */
	struct killer *k = xcalloc(1, sizeof *k);
	k->s = s;
	snprintf(k->target, sizeof k->target, "%s", tag);
	const char *argv[] = {"kill", tag, NULL};
	struct dk_exec_args a = {.argv = argv, .internal = DK_KILLER};
	struct sbx_exec_obs obs = {NULL, killer_done, k};
	char *err = NULL;
	if (!dk_exec_start(s, &a, &obs, &err)) {
		log_warn("docker: cannot start the kill of %s: %s", tag, err);
		free(err);
		free(k);
	}
}

void dk_exec_kill(struct dk_exec *e)
{
	if (e->killing || e->finished)
		return;
	e->killing = 1;
	if (e->waiting) {
		dk_exec_finish(e); /* never sent */
		return;
	}
	if (e->restarted)
		return; /* it ends with the container's kill */
	if (e->via_runner) {
		if (dk_runner_send(e->base.s, 'k', e->rid, NULL, 0, NULL) < 0) {
			dk_exec_finish(e); /* no runner: nothing runs */
			return;
		}
	} else if (!e->id) {
		return; /* on_created sees the flag */
	} else {
		dk_launch_killer(e->base.s, e->tag);
	}
	e->grace =
	    loop_timer_add(e->base.s->loop, DK_KILL_GRACE_MS, dk_on_grace, e);
}

void dk_exec_cancel(struct dk_exec *e)
{
	if (!e || e->finished)
		return;
	if (!e->timed_out)
		e->cancelled = 1;
	dk_exec_kill(e);
}

/* The commands started during the restart go now, or fail with why. */
static void resume_waiting(struct sbx *s, const char *why)
{
	struct docker *d = dk_of(s);
	for (int again = 1; again;) {
		again = 0;
		for (struct dk_exec *e = d->execs; e; e = e->next) {
			if (!e->waiting || e->finished)
				continue;
			e->waiting = 0;
			again = 1;
			char *err = NULL;
			struct dk_exec_args a = {
			    .argv = (const char *const *)e->cmd,
			    .keep_stdin = e->keep_stdin,
			    .internal = e->internal};
			if (why)
				dk_exec_fail(
				    e,
				    "docker: the container could not be "
				    "restarted: %s",
				    why);
			else if (dk_exec_submit(e, &a, &err) < 0)
				dk_exec_fail(e, "%s", err);
			free(err);
			break; /* the list may have changed */
		}
	}
}

/* The restart is over (why: it failed): the waiting commands go. */
static void restart_end(struct sbx *s, const char *why)
{
	struct docker *d = dk_of(s);
	d->restarting = 0;
	d->restart_call = NULL;
	if (why)
		log_error("docker: cannot restart container %s: %s", d->name,
		          why);
	else
		log_warn("docker: container %s restarted", d->name);
	resume_waiting(s, why);
}

static int restart_send(struct sbx *s, char **err);

/* The next step, or the end of the restart when it cannot be sent. */
static void restart_next(struct sbx *s)
{
	char *err = NULL;
	if (restart_send(s, &err) < 0) {
		restart_end(s, err);
		free(err);
	}
}

/* The daemon was not ready to start it: try again. */
static void restart_retry(void *arg)
{
	struct sbx *s = arg;
	dk_of(s)->restart_timer = 0;
	restart_next(s);
}

/* The daemon answered the kill or a start: go on, retry or end. */
static void on_restart_reply(void *arg, long status, struct buf *body,
                             const char *err)
{
	struct sbx *s = arg;
	struct docker *d = dk_of(s);
	d->restart_call = NULL;
	if (d->restart_tries < 0) { /* the kill: start it, whatever it said */
		d->restart_tries = 0;
		restart_next(s);
		return;
	}
	if (status == 204) {
		restart_end(s, NULL);
		return;
	}
	/* Killing is asynchronous in the daemon: start may still find
	 * it running (304) for a moment. Gone (404) is for good. */
	if (status != 404 && ++d->restart_tries < DK_RESTART_TRIES) {
		d->restart_timer = loop_timer_add(s->loop, DK_RESTART_RETRY_MS,
		                                  restart_retry, s);
		return;
	}
	char *m = err && !status ? xstrdup(err) : xfer_message(status, body);
	restart_end(s, m);
	free(m);
}

/* The kill (restart_tries -1) or a start, on the loop. */
static int restart_send(struct sbx *s, char **err)
{
	struct docker *d = dk_of(s);
	char *path =
	    d->restart_tries < 0
	        ? xasprintf("/containers/%s/kill?signal=SIGKILL", d->id)
	        : xasprintf("/containers/%s/start", d->id);
	struct dk_req r = {.method = "POST",
	                   .path = path,
	                   .on_done = on_restart_reply,
	                   .arg = s,
	                   .timeout_ms = 60000};
	struct dk_call *c = dk_send(&d->api, &r, err);
	free(path);
	if (!c)
		return -1;
	d->restart_call = c;
	return 0;
}

int dk_restart(struct sbx *s, char **err)
{
	struct docker *d = dk_of(s);
	if (!d->id || d->stopped || d->draining || d->restarting)
		return 0;
	d->restarting = 1;
	d->restart_tries = -1;
	for (struct dk_exec *e = d->execs; e; e = e->next)
		e->restarted = 1;
	dk_runner_detach(s); /* it dies with the container */
	char *why = NULL;
	if (restart_send(s, &why) < 0) {
		d->restarting = 0;
		set_err(err, "docker: cannot restart container %s: %s", d->name,
		        why);
		free(why);
		return -1;
	}
	return 0;
}

void dk_restart_cancel(struct sbx *s)
{
	struct docker *d = dk_of(s);
	if (d->restart_call)
		dk_cancel(d->restart_call);
	if (d->restart_timer)
		loop_timer_cancel(s->loop, d->restart_timer);
	d->restart_call = NULL;
	d->restart_timer = 0;
	d->restarting = 0;
}
