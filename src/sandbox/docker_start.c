/* docker_start.c: the docker backend's start, a chain of requests on
 * the loop: reach the daemon (/_ping, /version: the API version to
 * speak), remove what assays that died left behind (containers and
 * volumes whose owner's labels name a dead process, of runs kept in
 * the same directory as this one's: see owner_leftover), check the image
 * (assay never pulls), create and start the container, stage the
 * inputs (docker_xfer.c), and start the command runner. Any step that
 * fails ends the start with a message that says what to do; whatever
 * was created is removed by the stop or sbx_free. */
#include "assay/config.h"
#include "assay/curllib.h"
#include "assay/http.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"
#include "sandbox/owner.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DK_CHUNK 65536
#define DK_MAX_THREADS 4
#define DK_PING_MS 15000
#define DK_CALL_MS 120000

/* ---- reaching the daemon ---- */

/* The daemon did not answer: say what is wrong and what to do. */
static char *unreachable(struct docker *d, const char *why)
{
	/* curl says "port 80" for a socket: say what is wrong with it */
	const char *sock = d->api.ep.unix_path;
	char *own = NULL;
	if (sock && access(sock, F_OK) < 0)
		why = own = xasprintf("no socket at %s", sock);
	else if (sock && access(sock, R_OK | W_OK) < 0)
		why = own = xasprintf("%s: %s; root or the docker group can "
		                      "use it",
		                      sock, strerror(errno));
	else if (sock && strstr(why, "Couldn't connect"))
		why = own = xasprintf("connection refused on %s", sock);
	char *err = xasprintf("docker: cannot reach the daemon at %s (%s): is "
	                      "it running? start dockerd (or systemctl start "
	                      "docker), point DOCKER_HOST at it, or use "
	                      "--sandbox local; 'assay doctor' checks",
	                      d->api.ep.host, why);
	free(own);
	return err;
}

/* ---- the container ---- */

/* One entry of HostConfig.Mounts at /workspace/rel, read-only. */
static cJSON *ro_mount(cJSON *mounts, const char *type, const char *src,
                       const char *rel)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "Type", type);
	if (src)
		cJSON_AddStringToObject(m, "Source", src);
	char *target =
	    rel ? xasprintf("/workspace/%s", rel) : xstrdup(DK_WS_BARE);
	cJSON_AddStringToObject(m, "Target", target);
	free(target);
	cJSON_AddBoolToObject(m, "ReadOnly", 1);
	cJSON_AddItemToArray(mounts, m);
	return m;
}

/* The mounted inputs: each bound read-only at its place, what the
 * sandbox must not see of a directory under an empty read-only tmpfs,
 * and the workspace volume once more, bare, for the archive. */
static void input_mounts(struct sbx *s, cJSON *mounts)
{
	ro_mount(mounts, "volume", dk_of(s)->volume, NULL);
	for (size_t i = 0; i < s->mounts.n; i++) {
		const struct path_mount *pm = &s->mounts.v[i];
		ro_mount(mounts, "bind", pm->src, pm->rel);
		for (size_t k = 0; k < pm->hide.n; k++) {
			char *rel = xasprintf("%s/%s", pm->rel, pm->hide.v[k]);
			cJSON *t = ro_mount(mounts, "tmpfs", NULL, rel);
			cJSON *to = cJSON_AddObjectToObject(t, "TmpfsOptions");
			cJSON_AddNumberToObject(to, "SizeBytes", 4096);
			free(rel);
		}
	}
}

/* The container create body: limits, mounts, labels (see docker.c). */
static char *container_body(struct sbx *s, long ncpu)
{
	const struct config *cfg = s->cfg;
	struct docker *d = dk_of(s);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "Image", s->image);
	cJSON *ep = cJSON_AddArrayToObject(o, "Entrypoint");
	cJSON_AddItemToArray(ep, cJSON_CreateString("sleep"));
	cJSON *cmd = cJSON_AddArrayToObject(o, "Cmd");
	cJSON_AddItemToArray(cmd, cJSON_CreateString("infinity"));
	cJSON_AddStringToObject(o, "WorkingDir", "/workspace");
	cJSON_AddStringToObject(o, "Hostname", "assay");
	cJSON *env = cJSON_AddArrayToObject(o, "Env");
	cJSON_AddItemToArray(env, cJSON_CreateString("ASSAY_EXEC=main"));
	cJSON_AddItemToObject(o, "Labels", owner_labels(s, NULL));
	cJSON *hc = cJSON_AddObjectToObject(o, "HostConfig");
	cJSON_AddStringToObject(hc, "NetworkMode",
	                        cfg->network ? "default" : "none");
	if (cfg->mem_mb > 0) {
		double bytes = (double)cfg->mem_mb * 1048576.0;
		cJSON_AddNumberToObject(hc, "Memory", bytes);
		cJSON_AddNumberToObject(hc, "MemorySwap", bytes);
	}
	if (cfg->nproc > 0)
		cJSON_AddNumberToObject(hc, "PidsLimit", (double)cfg->nproc);
	if (ncpu > 0)
		cJSON_AddNumberToObject(
		    hc, "NanoCpus",
		    (double)(ncpu < DK_MAX_THREADS ? ncpu : DK_MAX_THREADS) *
		        1e9);
	cJSON_AddBoolToObject(hc, "ReadonlyRootfs", 1);
	cJSON_AddBoolToObject(hc, "Init", 1);
	cJSON *tmpfs = cJSON_AddObjectToObject(hc, "Tmpfs");
	long tmp_mb = cfg->mem_mb > 0 ? cfg->mem_mb / 4 : 1024;
	char *opt =
	    xasprintf("rw,nosuid,nodev,size=%ldm", tmp_mb < 64 ? 64 : tmp_mb);
	cJSON_AddStringToObject(tmpfs, "/tmp", opt);
	free(opt);
	cJSON *mounts = cJSON_AddArrayToObject(hc, "Mounts");
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "Type", "volume");
	if (d->volume)
		cJSON_AddStringToObject(m, "Source", d->volume);
	cJSON_AddStringToObject(m, "Target", "/workspace");
	cJSON *vo = cJSON_AddObjectToObject(m, "VolumeOptions");
	cJSON_AddItemToObject(vo, "Labels", owner_labels(s, NULL));
	cJSON_AddItemToArray(mounts, m);
	if (d->volume)
		input_mounts(s, mounts);
	cJSON *cap = cJSON_AddArrayToObject(hc, "CapDrop");
	cJSON_AddItemToArray(cap, cJSON_CreateString("ALL"));
	cJSON *sec = cJSON_AddArrayToObject(hc, "SecurityOpt");
	cJSON_AddItemToArray(sec, cJSON_CreateString("no-new-privileges"));
	cJSON *lc = cJSON_AddObjectToObject(hc, "LogConfig");
	cJSON_AddStringToObject(lc, "Type", "none");
	char *s_ = json_print(o);
	cJSON_Delete(o);
	return s_;
}

/* A name Docker accepts: assay-<run dir name>-<pid>-<n>. */
static char *container_name(struct sbx *s)
{
	const char *run = strrchr(s->run_dir, '/');
	run = run && run[1] ? run + 1 : s->run_dir;
	/* distinct within the process too: eval's checks all run in a dir
	 * named "check", and two at once met as a name conflict */
	static unsigned seq;
	char *n = xasprintf("assay-%.64s-%d-%u", run, (int)getpid(), ++seq);
	for (char *p = n; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
		      *p == '.'))
			*p = '_';
	return n;
}

/* ---- the chain ---- */

struct dk_start {
	struct sbx_job job;
	struct sbx *s;
	int stage_inputs;
	int64_t t0;
	struct dk_call *call;
	uint64_t timer;
	char *apiv;    /* /_ping's Api-Version */
	cJSON *doomed; /* leftovers of dead assays: {"path","what"} */
	int sweep;     /* 0: containers, 1: volumes */
	struct xfer *stage;
	struct buf warn; /* what works less well than configured */
};

/* Free a start cut short (its request and children ended). */
static void start_free(struct dk_start *st)
{
	if (st->timer)
		loop_timer_cancel(st->s->loop, st->timer);
	dk_cancel(st->call);
	xfer_free(st->stage);
	free(st->apiv);
	cJSON_Delete(st->doomed);
	buf_free(&st->warn);
	free(st);
}

static void start_abort(struct sbx_job *j)
{
	start_free((struct dk_start *)j);
}

/* The start's end: err (taken) says why it failed, else the sandbox
 * is ready (with the warnings gathered). */
static void start_end(struct dk_start *st, char *err)
{
	dk_cancel(st->call);
	st->call = NULL;
	xfer_free(st->stage);
	st->stage = NULL;
	char *warn = st->warn.len ? xstrdup(buf_str(&st->warn)) : NULL;
	struct loop *l = st->s->loop;
	if (st->timer)
		loop_timer_cancel(l, st->timer);
	st->timer = 0;
	sbx_job_end(&st->job, err ? SBX_FAILED : SBX_OK, err ? err : warn, NULL,
	            NULL);
	/* s may be gone: only st's own memory from here */
	free(warn);
	free(err);
	free(st->apiv);
	cJSON_Delete(st->doomed);
	buf_free(&st->warn);
	free(st);
}

/* Send a JSON request for the chain; on failure the start ends. */
static void start_call(struct dk_start *st, const char *method,
                       const char *path, const char *json,
                       void (*fn)(void *, long, cJSON *, const char *))
{
	char *err = NULL;
	st->call = dk_json_call(&dk_of(st->s)->api, method, path, json,
	                        DK_CALL_MS, fn, st, &err);
	if (!st->call)
		start_end(st,
		          xasprintf("docker: %s", err ? err : "no request"));
	free(err);
}

/* Staged: start the runner (ready by the first command: it queues
 * until then) and be done. */
static void start_ready(struct dk_start *st)
{
	struct sbx *s = st->s;
	struct docker *d = dk_of(s);
	if (dk_runner_wanted(s)) {
		char *why = NULL;
		if (dk_runner_start(s, &why) < 0) {
			log_warn("docker: cannot start the command runner: %s",
			         why);
			buf_printf(
			    &st->warn,
			    "docker: cannot start the command runner (%s): "
			    "an exec per command",
			    why);
			free(why);
		}
	}
	log_info("docker: container %s (%.12s) from %s (%s, %zu repo "
	         "digests) ready in %lld ms",
	         d->name, d->id, s->image, s->image_id,
	         s->repo_digests ? s->repo_digests->n : 0,
	         (long long)(now_ms() - st->t0));
	start_end(st, NULL);
}

/* The inputs are in (or not): be ready, or fail with why. */
static void start_on_staged(void *arg, char *err)
{
	struct dk_start *st = arg;
	st->stage = NULL;
	if (err)
		start_end(st, err);
	else
		start_ready(st);
}

/* The container runs: stage the inputs. */
static void start_on_started(void *arg, long status, cJSON *reply,
                             const char *err)
{
	struct dk_start *st = arg;
	(void)reply;
	st->call = NULL;
	if (status != 204 && status != 304) {
		start_end(st,
		          xasprintf("docker: cannot start the container: %s",
		                    err ? err : "no answer"));
		return;
	}
	dk_of(st->s)->started = 1;
	char *why = NULL;
	st->stage =
	    dk_stage(st->s, st->stage_inputs, start_on_staged, st, &why);
	if (why)
		start_end(st, why);
	else if (!st->stage)
		start_ready(st); /* nothing to stage */
}

/* The container exists: start it. */
static void start_on_created(void *arg, long status, cJSON *reply,
                             const char *err)
{
	struct dk_start *st = arg;
	struct sbx *s = st->s;
	struct docker *d = dk_of(s);
	st->call = NULL;
	const char *id = json_str(reply, "Id", NULL);
	if (status && status != 201)
		d->created = 0; /* the daemon said no: nothing was made */
	if (status != 201 || !id) {
		start_end(st, status == 404
		                  ? xasprintf("docker: image '%s' vanished: %s",
		                              s->image, err ? err : "")
		                  : xasprintf("docker: cannot create the "
		                              "container: %s",
		                              err ? err : "no answer"));
		return;
	}
	d->id = xstrdup(id);
	char *path = xasprintf("/containers/%s/start", d->id);
	start_call(st, "POST", path, NULL, start_on_started);
	free(path);
}

/* Whether the inputs can be bound from this machine's files: the
 * daemon is reached through a unix socket and says it runs on this
 * host (a socket forwarded from elsewhere, or assay in a container of
 * its own, names another). Otherwise they are copied in. */
static int binds_possible(struct sbx *s, const char *daemon_host)
{
	struct docker *d = dk_of(s);
	if (!s->cfg->n_inputs)
		return 0;
	char me[256];
	owner_host(me, sizeof me);
	if (d->api.ep.unix_path && strcmp(me, "unknown") &&
	    !strcmp(me, daemon_host))
		return 1;
	log_info("docker: the inputs are copied into the container: the "
	         "daemon at %s runs on %s, not here (%s)",
	         d->api.ep.host, *daemon_host ? daemon_host : "an unknown host",
	         me);
	return 0;
}

/* The daemon's CPU count sets the threads per command and the CPU
 * limit: create the container. */
static void start_on_info(void *arg, long status, cJSON *reply, const char *err)
{
	struct dk_start *st = arg;
	struct sbx *s = st->s;
	struct docker *d = dk_of(s);
	(void)status, (void)err;
	st->call = NULL;
	long ncpu = json_long(reply, "NCPU", 0);
	d->threads =
	    ncpu > 0 && ncpu < DK_MAX_THREADS ? (int)ncpu : DK_MAX_THREADS;
	d->name = container_name(s);
	char *why = NULL;
	if (binds_possible(s, json_str(reply, "Name", "")) &&
	    sbx_mounts_prepare(s, -1, &why) < 0) {
		start_end(st, why);
		return;
	}
	if (s->mounts.n)
		d->volume = xasprintf("%s-ws", d->name);
	char *body = container_body(s, ncpu);
	char *q = xfer_escape(d->name);
	char *path = xasprintf("/containers/create?name=%s", q);
	d->created = 1; /* from now on the name may exist: remove it */
	start_call(st, "POST", path, body, start_on_created);
	free(body);
	free(q);
	free(path);
}

/* What run_start records of the image, from the inspect the start
 * makes anyway (no request of its own): its id and its repo digests,
 * none for an image built here and never pushed or pulled. */
static void dk_image_facts(struct sbx *s, const cJSON *reply)
{
	free(s->image_id);
	s->image_id = xstrdup(json_str(reply, "Id", ""));
	if (!s->repo_digests)
		s->repo_digests = xcalloc(1, sizeof *s->repo_digests);
	strv_free(s->repo_digests);
	const cJSON *d;
	cJSON_ArrayForEach(d, cJSON_GetObjectItem(reply, "RepoDigests"))
	{
		/* bounded: a daemon's answer is not trusted to be small */
		if (cJSON_IsString(d) && strlen(d->valuestring) < 512 &&
		    s->repo_digests->n < 64)
			strv_push(s->repo_digests, d->valuestring);
	}
}

/* The image must be there: assay never pulls (no registry here). */
static void start_on_image(void *arg, long status, cJSON *reply,
                           const char *err)
{
	struct dk_start *st = arg;
	struct sbx *s = st->s;
	struct docker *d = dk_of(s);
	st->call = NULL;
	if (status == 404) {
		start_end(
		    st,
		    xasprintf("docker: image '%s' is not on the daemon at "
		              "%s: build it with "
		              "scripts/sandbox-image/build-offline (no "
		              "registry needed) or 'docker build -t "
		              "assay-sandbox:latest scripts/sandbox-image', "
		              "or name another with --image",
		              s->image, d->api.ep.host));
		return;
	}
	if (status != 200) {
		start_end(st, xasprintf("docker: cannot inspect image '%s': %s",
		                        s->image, err ? err : "no answer"));
		return;
	}
	dk_image_facts(s, reply);
	start_call(st, "GET", "/info", NULL, start_on_info);
}

/* Is the image on the daemon? (assay never pulls.) */
static void check_image(struct dk_start *st)
{
	struct sbx *s = st->s;
	const char *image = s->cfg->image && *s->cfg->image
	                        ? s->cfg->image
	                        : "assay-sandbox:latest";
	free(s->image);
	s->image = xstrdup(image);
	char *q = xfer_escape(image);
	char *path = xasprintf("/images/%s/json", q);
	start_call(st, "GET", path, NULL, start_on_image);
	free(q);
	free(path);
}

static void sweep_list(struct dk_start *st);
static void start_on_swept(void *arg, long status, cJSON *reply,
                           const char *err);

/* Delete the next leftover, or go on to the next kind, or the image. */
static void sweep_next(struct dk_start *st)
{
	cJSON *first = cJSON_DetachItemFromArray(st->doomed, 0);
	if (first) {
		char *path = xstrdup(json_str(first, "path", ""));
		cJSON_Delete(first);
		start_call(st, "DELETE", path, NULL, start_on_swept);
		free(path);
		return;
	}
	if (st->sweep++ == 0)
		sweep_list(st);
	else
		check_image(st);
}

/* One leftover removed: the next. */
static void start_on_swept(void *arg, long status, cJSON *reply,
                           const char *err)
{
	struct dk_start *st = arg;
	(void)reply, (void)err;
	st->call = NULL;
	log_info("docker: removed a leftover of a dead assay: %ld", status);
	sweep_next(st);
}

/* Which of the listed containers or volumes belong to a dead assay. */
static void start_on_sweep_list(void *arg, long status, cJSON *reply,
                                const char *err)
{
	struct dk_start *st = arg;
	(void)err;
	st->call = NULL;
	char *root = owner_run_root(st->s->run_dir);
	const cJSON *items =
	    st->sweep ? cJSON_GetObjectItemCaseSensitive(reply, "Volumes")
	              : reply;
	const cJSON *c;
	if (status == 200)
		cJSON_ArrayForEach(c, items)
		{
			const cJSON *labels =
			    cJSON_GetObjectItemCaseSensitive(c, "Labels");
			const char *id =
			    json_str(c, st->sweep ? "Name" : "Id", NULL);
			if (!id || !owner_leftover(labels, root))
				continue;
			cJSON *o = cJSON_CreateObject();
			char *path =
			    st->sweep
			        ? xasprintf("/volumes/%s", id)
			        : xasprintf("/containers/%s?force=1&v=1", id);
			cJSON_AddStringToObject(o, "path", path);
			cJSON_AddItemToArray(st->doomed, o);
			if (!st->sweep)
				log_info(
				    "docker: removing stale container "
				    "%.12s of a dead assay (pid %s)",
				    id, json_str(labels, OWNER_LABEL_PID, "?"));
			free(path);
		}
	free(root);
	sweep_next(st);
}

/* Remove containers and volumes whose assay died without cleaning up
 * (kill -9, a crash, a power cut). */
static void sweep_list(struct dk_start *st)
{
	char *q = xfer_escape("{\"label\":[\"" OWNER_LABEL_PID "\"]}");
	char *path = st->sweep
	                 ? xasprintf("/volumes?filters=%s", q)
	                 : xasprintf("/containers/json?all=1&filters=%s", q);
	start_call(st, "GET", path, NULL, start_on_sweep_list);
	free(path);
	free(q);
}

/* /version: which API version to speak with this daemon. */
static void start_on_version(void *arg, long status, cJSON *ver,
                             const char *err)
{
	struct dk_start *st = arg;
	struct docker *d = dk_of(st->s);
	(void)status, (void)err;
	st->call = NULL;
	char *why = NULL;
	const char *max =
	    st->apiv ? st->apiv : json_str(ver, "ApiVersion", NULL);
	const char *min = json_str(ver, "MinAPIVersion", NULL);
	if (dk_negotiate(getenv("DOCKER_API_VERSION"), max, min,
	                 &d->api.version, &why) < 0) {
		start_end(st,
		          xasprintf("docker (%s): %s", d->api.ep.host, why));
		free(why);
		return;
	}
	log_info("docker: %s, Docker %s, API %s (daemon %s..%s)",
	         d->api.ep.host, json_str(ver, "Version", "?"), d->api.version,
	         min ? min : "?", max ? max : "?");
	sweep_list(st);
}

/* /_ping answered (or not): ask which versions it speaks. */
static void start_on_ping(void *arg, long status, struct buf *body,
                          const char *err)
{
	struct dk_start *st = arg;
	struct docker *d = dk_of(st->s);
	(void)body;
	st->call = NULL;
	if (err || status <= 0) {
		start_end(st, unreachable(d, err ? err : "no answer"));
		return;
	}
	if (status != 200) {
		start_end(st,
		          xasprintf("docker: the daemon at %s answered "
		                    "/_ping with status %ld: is DOCKER_HOST "
		                    "a Docker daemon?",
		                    d->api.ep.host, status));
		return;
	}
	start_call(st, "GET", "/version", NULL, start_on_version);
}

/* From the loop: where the daemon is, then /_ping. */
static void start_begin(void *arg)
{
	struct dk_start *st = arg;
	struct sbx *s = st->s;
	struct docker *d = dk_of(s);
	char *err = NULL;
	st->timer = 0;
	if (dk_endpoint_parse(getenv("DOCKER_HOST"), getenv("DOCKER_CERT_PATH"),
	                      getenv("DOCKER_TLS_VERIFY"), getenv("HOME"),
	                      &d->api.ep, &err) < 0) {
		start_end(st, err);
		return;
	}
	d->api.http = http_new(s->loop);
	if (curllib_get(&err) < 0) { /* said as itself, not as the daemon's */
		start_end(st, xasprintf("docker: %s", err));
		free(err);
		return;
	}
	struct dk_req r = {.method = "GET",
	                   .path = "/_ping",
	                   .on_done = start_on_ping,
	                   .arg = st,
	                   .timeout_ms = DK_PING_MS,
	                   .unversioned = 1,
	                   .header_name = "Api-Version",
	                   .header_value = &st->apiv};
	char *why = NULL;
	st->call = dk_send(&d->api, &r, &why);
	if (!st->call)
		start_end(st, unreachable(d, why ? why : "no request"));
	free(why);
}

void dk_start(struct sbx *s, int stage_inputs, sbx_done_fn fn, void *arg)
{
	if (s->priv) {
		sbx_later(s, fn, arg, SBX_FAILED,
		          xstrdup("sandbox: already started"), NULL, NULL);
		return;
	}
	struct docker *d = xcalloc(1, sizeof *d);
	s->priv = d;
	d->mem_mb = s->cfg->mem_mb;
	d->cpu_s = s->cfg->cpu_s;
	d->fsize_mb = s->cfg->fsize_mb;
	d->chunk = xmalloc(DK_CHUNK);
	d->api.loop = s->loop;
	struct dk_start *st = xcalloc(1, sizeof *st);
	st->s = s;
	st->stage_inputs = stage_inputs;
	st->t0 = now_ms();
	st->doomed = cJSON_CreateArray();
	buf_init(&st->warn, 0);
	sbx_job_begin(s, &st->job, "the start", 0, fn, arg, start_abort);
	st->timer = loop_timer_add(s->loop, 0, start_begin, st);
}
