/* docker.c: the `docker` sandbox backend. One container per run, driven
 * through the Docker Engine API (never the docker CLI): network none
 * unless --network, memory, process and CPU limits, every capability
 * dropped, no-new-privileges, a read-only root with the workspace on a
 * volume and a private /tmp, an init process, and labels naming the run
 * and its owner (host, pid, process start time, boot) so that a later
 * start can remove what a crashed assay left. The container and its
 * volume are removed at the end of the run, on Ctrl-C and on errors.
 * Commands: docker_exec.c; files: docker_files.c; the daemon's address
 * and API version: docker_api.c. */
#include "assay/config.h"
#include "assay/http.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DK_CHUNK 65536
#define DK_MAX_THREADS 4
#define DK_LABEL "assay.owner.pid"

static struct docker *dk_of(struct sbx *s)
{
	return s->priv;
}

/* ---- who owns a container ---- */

struct owner {
	char host[256];
	char boot[64];
	char pstart[32];
};

static void read_line(const char *path, char *out, size_t n)
{
	out[0] = '\0';
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(out, (int)n, f))
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
}

/* Field 22 of /proc/PID/stat: when the process started (clock ticks
 * since boot), which tells a live owner from a reused pid. */
static void proc_start(int pid, char *out, size_t n)
{
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	read_line(path, line, sizeof line);
	out[0] = '\0';
	char *p = strrchr(line, ')');
	for (int field = 2; p && *p; p++)
		if (*p == ' ' && ++field == 22) {
			snprintf(out, n, "%.*s", (int)strcspn(p + 1, " "),
			         p + 1);
			return;
		}
}

static void owner_self(struct owner *o)
{
	if (gethostname(o->host, sizeof o->host) < 0)
		snprintf(o->host, sizeof o->host, "unknown");
	o->host[sizeof o->host - 1] = '\0';
	read_line("/proc/sys/kernel/random/boot_id", o->boot, sizeof o->boot);
	proc_start((int)getpid(), o->pstart, sizeof o->pstart);
}

/* Is the assay that labelled this alive? Owners on other hosts are
 * presumed alive: only they can tell. */
static int owner_alive(const cJSON *labels, const struct owner *me)
{
	const char *host = json_str(labels, "assay.owner.host", NULL);
	const char *boot = json_str(labels, "assay.owner.boot", "");
	const char *pstart = json_str(labels, "assay.owner.start", "");
	int pid = atoi(json_str(labels, DK_LABEL, "0"));
	if (!host || strcmp(host, me->host))
		return 1;
	if (*boot && *me->boot && strcmp(boot, me->boot))
		return 0;
	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH))
		return 0;
	char now[32];
	proc_start(pid, now, sizeof now);
	return !*pstart || !*now || !strcmp(now, pstart);
}

/* Remove containers and volumes whose assay died without cleaning up
 * (kill -9, a crash, a power cut). */
static void sweep_stale(struct docker *d)
{
	struct owner me;
	owner_self(&me);
	char *q = dk_escape("{\"label\":[\"" DK_LABEL "\"]}");
	char *path = xasprintf("/containers/json?all=1&filters=%s", q);
	cJSON *list = NULL;
	char *err = NULL;
	long st = dk_json(&d->api, "GET", path, NULL, &list, &err);
	free(path);
	const cJSON *c;
	if (st == 200)
		cJSON_ArrayForEach(c, list)
		{
			const cJSON *labels =
			    cJSON_GetObjectItemCaseSensitive(c, "Labels");
			const char *id = json_str(c, "Id", NULL);
			if (!id || owner_alive(labels, &me))
				continue;
			char *del = xasprintf("/containers/%s?force=1&v=1", id);
			long rc =
			    dk_json(&d->api, "DELETE", del, NULL, NULL, NULL);
			log_info(
			    "docker: removed stale container %.12s of a dead "
			    "assay (pid %s): %ld",
			    id, json_str(labels, DK_LABEL, "?"), rc);
			free(del);
		}
	cJSON_Delete(list);
	free(err);
	err = NULL;
	path = xasprintf("/volumes?filters=%s", q);
	list = NULL;
	st = dk_json(&d->api, "GET", path, NULL, &list, &err);
	free(path);
	const cJSON *vols = cJSON_GetObjectItemCaseSensitive(list, "Volumes");
	if (st == 200)
		cJSON_ArrayForEach(c, vols)
		{
			const cJSON *labels =
			    cJSON_GetObjectItemCaseSensitive(c, "Labels");
			const char *name = json_str(c, "Name", NULL);
			if (!name || owner_alive(labels, &me))
				continue;
			char *del = xasprintf("/volumes/%s", name);
			dk_json(&d->api, "DELETE", del, NULL, NULL, NULL);
			free(del);
		}
	cJSON_Delete(list);
	free(err);
	free(q);
}

/* ---- reaching the daemon ---- */

static int unreachable(struct docker *d, const char *why, char **err)
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
	set_err(err,
	        "docker: cannot reach the daemon at %s (%s): is it "
	        "running? start dockerd (or systemctl start docker), "
	        "point DOCKER_HOST at it, or use --sandbox local; "
	        "'assay doctor' checks",
	        d->api.ep.host, why);
	free(own);
	return -1;
}

struct ping {
	long status;
	char *err;
};

static void on_ping(void *arg, long status, struct buf *body, const char *err)
{
	struct ping *p = arg;
	(void)body;
	p->status = status;
	p->err = err ? xstrdup(err) : NULL;
}

/* /_ping and /version, then the version to speak. */
static int connect_daemon(struct docker *d, char **err)
{
	char *apiv = NULL, *why = NULL;
	struct ping p = {0};
	struct dk_req r = {.method = "GET",
	                   .path = "/_ping",
	                   .on_done = on_ping,
	                   .arg = &p,
	                   .timeout_ms = 15000,
	                   .sync = 1,
	                   .unversioned = 1,
	                   .header_name = "Api-Version",
	                   .header_value = &apiv};
	dk_send(&d->api, &r, &why);
	int rc = -1;
	cJSON *ver = NULL;
	if (why || p.status <= 0) {
		unreachable(d, why ? why : p.err ? p.err : "no answer", err);
		goto out;
	}
	if (p.status != 200) {
		set_err(err,
		        "docker: the daemon at %s answered /_ping with status "
		        "%ld: is DOCKER_HOST a Docker daemon?",
		        d->api.ep.host, p.status);
		goto out;
	}
	dk_json(&d->api, "GET", "/version", NULL, &ver, NULL);
	const char *max = apiv ? apiv : json_str(ver, "ApiVersion", NULL);
	const char *min = json_str(ver, "MinAPIVersion", NULL);
	rc = dk_negotiate(getenv("DOCKER_API_VERSION"), max, min,
	                  &d->api.version, &why);
	if (rc < 0)
		set_err(err, "docker (%s): %s", d->api.ep.host, why);
	else
		log_info("docker: %s, Docker %s, API %s (daemon %s..%s)",
		         d->api.ep.host, json_str(ver, "Version", "?"),
		         d->api.version, min ? min : "?", max ? max : "?");
out:
	free(why);
	free(apiv);
	free(p.err);
	cJSON_Delete(ver);
	return rc;
}

/* The image must be there: assay never pulls (no registry here). */
static int check_image(struct sbx *s, struct docker *d, char **err)
{
	const char *image = s->cfg->image && *s->cfg->image
	                        ? s->cfg->image
	                        : "assay-sandbox:latest";
	free(s->image);
	s->image = xstrdup(image);
	char *q = dk_escape(image);
	char *path = xasprintf("/images/%s/json", q);
	cJSON *j = NULL;
	char *why = NULL;
	long st = dk_json(&d->api, "GET", path, NULL, &j, &why);
	free(q);
	free(path);
	int rc = 0;
	if (st == 404) {
		rc =
		    set_err(err,
		            "docker: image '%s' is not on the daemon at %s: "
		            "build it with scripts/sandbox-image/build-offline "
		            "(no registry needed) or 'docker build -t "
		            "assay-sandbox:latest scripts/sandbox-image', or "
		            "name another with --image",
		            image, d->api.ep.host);
	} else if (st != 200) {
		rc = set_err(err, "docker: cannot inspect image '%s': %s",
		             image, why ? why : "no answer");
	} else {
		free(s->image_id);
		s->image_id = xstrdup(json_str(j, "Id", ""));
	}
	free(why);
	cJSON_Delete(j);
	return rc;
}

/* ---- the container ---- */

static void add_label(cJSON *labels, const char *k, const char *v)
{
	cJSON_AddStringToObject(labels, k, v);
}

static cJSON *make_labels(struct sbx *s, const struct owner *me)
{
	cJSON *l = cJSON_CreateObject();
	char pid[24];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	const char *run = strrchr(s->run_dir, '/');
	add_label(l, "assay.run", run && run[1] ? run + 1 : s->run_dir);
	add_label(l, DK_LABEL, pid);
	add_label(l, "assay.owner.host", me->host);
	add_label(l, "assay.owner.boot", me->boot);
	add_label(l, "assay.owner.start", me->pstart);
	add_label(l, "assay.version", ASSAY_VERSION);
	return l;
}

static char *container_body(struct sbx *s, struct docker *d, long ncpu)
{
	const struct config *cfg = s->cfg;
	struct owner me;
	owner_self(&me);
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
	cJSON_AddItemToObject(o, "Labels", make_labels(s, &me));
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
	cJSON_AddStringToObject(m, "Target", "/workspace");
	cJSON *vo = cJSON_AddObjectToObject(m, "VolumeOptions");
	cJSON_AddItemToObject(vo, "Labels", make_labels(s, &me));
	cJSON_AddItemToArray(mounts, m);
	cJSON *cap = cJSON_AddArrayToObject(hc, "CapDrop");
	cJSON_AddItemToArray(cap, cJSON_CreateString("ALL"));
	cJSON *sec = cJSON_AddArrayToObject(hc, "SecurityOpt");
	cJSON_AddItemToArray(sec, cJSON_CreateString("no-new-privileges"));
	cJSON *lc = cJSON_AddObjectToObject(hc, "LogConfig");
	cJSON_AddStringToObject(lc, "Type", "none");
	(void)d;
	char *s_ = json_print(o);
	cJSON_Delete(o);
	return s_;
}

/* A name Docker accepts: assay-<run dir name>-<pid>. */
static char *container_name(struct sbx *s)
{
	const char *run = strrchr(s->run_dir, '/');
	run = run && run[1] ? run + 1 : s->run_dir;
	char *n = xasprintf("assay-%.64s-%d", run, (int)getpid());
	for (char *p = n; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
		      *p == '.'))
			*p = '_';
	return n;
}

static int create_container(struct sbx *s, struct docker *d, char **err)
{
	cJSON *info = NULL;
	dk_json(&d->api, "GET", "/info", NULL, &info, NULL);
	long ncpu = (long)json_num(info, "NCPU", 0);
	cJSON_Delete(info);
	d->threads =
	    ncpu > 0 && ncpu < DK_MAX_THREADS ? (int)ncpu : DK_MAX_THREADS;
	d->name = container_name(s);
	char *body = container_body(s, d, ncpu);
	char *q = dk_escape(d->name);
	char *path = xasprintf("/containers/create?name=%s", q);
	cJSON *j = NULL;
	char *why = NULL;
	long st = dk_json(&d->api, "POST", path, body, &j, &why);
	free(body);
	free(q);
	free(path);
	int rc = -1;
	if (st == 201 && json_str(j, "Id", NULL)) {
		d->id = xstrdup(json_str(j, "Id", NULL));
		rc = 0;
	} else if (st == 404) {
		set_err(err, "docker: image '%s' vanished: %s", s->image,
		        why ? why : "");
	} else {
		set_err(err, "docker: cannot create the container: %s",
		        why ? why : "no answer");
	}
	free(why);
	cJSON_Delete(j);
	if (rc < 0)
		return -1;
	path = xasprintf("/containers/%s/start", d->id);
	st = dk_json(&d->api, "POST", path, NULL, NULL, &why);
	free(path);
	if (st != 204 && st != 304) {
		rc = set_err(err, "docker: cannot start the container: %s",
		             why ? why : "no answer");
	}
	free(why);
	return rc;
}

/* ---- the ops ---- */

static int docker_start(struct sbx *s, char **err)
{
	if (s->priv)
		return set_err(err, "sandbox: already started");
	struct docker *d = xcalloc(1, sizeof *d);
	s->priv = d;
	d->mem_mb = s->cfg->mem_mb;
	d->cpu_s = s->cfg->cpu_s;
	d->fsize_mb = s->cfg->fsize_mb;
	d->chunk = xmalloc(DK_CHUNK);
	d->api.loop = s->loop;
	if (dk_endpoint_parse(getenv("DOCKER_HOST"), getenv("DOCKER_CERT_PATH"),
	                      getenv("DOCKER_TLS_VERIFY"), getenv("HOME"),
	                      &d->api.ep, err) < 0)
		return -1;
	d->api.http = http_new(s->loop);
	if (!d->api.http)
		return set_err(err, "docker: cannot initialise libcurl");
	int64_t t0 = now_ms();
	if (connect_daemon(d, err) < 0)
		return -1;
	sweep_stale(d);
	if (check_image(s, d, err) < 0 || create_container(s, d, err) < 0)
		return -1;
	d->started = 1;
	if (dk_stage(s, err) < 0)
		return -1;
	if (dk_runner_wanted(s)) {
		/* ready by the first command (it queues until then) */
		char *why = NULL;
		if (dk_runner_start(s, &why) < 0) {
			log_warn("docker: cannot start the command runner: %s",
			         why);
			free(why);
		}
	}
	log_info("docker: container %s (%.12s) from %s (%s) ready in %lld ms",
	         d->name, d->id, s->image, s->image_id,
	         (long long)(now_ms() - t0));
	return 0;
}

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
	return dk_exec_start(s, &a, obs, 0, err);
}

static void docker_cancel(struct sbx_exec *e)
{
	dk_exec_cancel(e);
}

static int docker_exec_write(struct sbx_exec *e, const void *data, size_t n)
{
	return dk_exec_write(e, data, n);
}

static int not_running(struct sbx *s, sbx_done_fn fn, void *arg)
{
	struct docker *d = dk_of(s);
	if (d && d->started && !d->stopped && !d->draining)
		return 0;
	fn(arg, -1, "sandbox: not running", NULL, NULL);
	return 1;
}

static void docker_read_file(struct sbx *s, const char *rel, size_t max,
                             sbx_done_fn fn, void *arg)
{
	if (!not_running(s, fn, arg))
		dk_read_file(s, rel, max, fn, arg);
}

static void docker_write_file(struct sbx *s, const char *rel, const void *data,
                              size_t n, sbx_done_fn fn, void *arg)
{
	if (!not_running(s, fn, arg))
		dk_write_file(s, rel, data, n, fn, arg);
}

static void docker_list(struct sbx *s, const char *rel, int recursive,
                        size_t max, sbx_done_fn fn, void *arg)
{
	if (!not_running(s, fn, arg))
		dk_list(s, rel, recursive, max, fn, arg);
}

static void docker_stop(struct sbx *s)
{
	struct docker *d = dk_of(s);
	if (!d || d->stopped)
		return;
	d->draining = 1;
	dk_exec_stop_all(s);
	d->stopped = 1;
	if (!d->id)
		return;
	char *path = xasprintf("/containers/%s?force=1&v=1", d->id);
	char *why = NULL;
	long st = dk_json(&d->api, "DELETE", path, NULL, NULL, &why);
	if (st != 204 && st != 404)
		log_warn("docker: cannot remove container %s: %s (the next "
		         "run removes it)",
		         d->name, why ? why : "no answer");
	else
		log_info("docker: container %s removed", d->name);
	free(why);
	free(path);
}

static void docker_destroy(struct sbx *s)
{
	struct docker *d = dk_of(s);
	if (!d)
		return;
	docker_stop(s);
	dk_runner_free(s);
	http_free(d->api.http);
	dk_endpoint_free(&d->api.ep);
	free(d->api.version);
	free(d->id);
	free(d->name);
	free(d->chunk);
	free(d);
	s->priv = NULL;
}

const struct sbx_ops sbx_docker_ops = {
    .name = "docker",
    .caps = SBX_CAP_IMPORT_TAR,
    .start = docker_start,
    .exec = docker_exec,
    .cancel = docker_cancel,
    .exec_write = docker_exec_write,
    .read_file = docker_read_file,
    .write_file = docker_write_file,
    .list = docker_list,
    .fetch = dk_fetch,
    .export_tar = dk_export_tar,
    .import_tar = dk_import_tar,
    .stop = docker_stop,
    .destroy = docker_destroy,
};
