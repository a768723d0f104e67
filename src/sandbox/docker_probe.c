/* docker_probe.c: what `assay doctor` asks the Docker daemon DOCKER_HOST
 * & co name, blocking (doctor has no loop), each request bounded:
 * whether it answers /_ping, which API version both sides speak, and
 * whether the image is there (assay never pulls). Steps run in order
 * and stop at the first that fails. */
#include "assay/config.h"
#include "assay/json.h"
#include "assay/util.h"
#include "sandbox/docker_internal.h"

#include <stdlib.h>
#include <string.h>

#define DK_PROBE_IMAGE_DEFAULT "assay-sandbox:latest"

/* The step that failed. */
enum dk_probe_step {
	DK_PROBE_OK = 0,
	DK_PROBE_ENDPOINT, /* DOCKER_HOST & co cannot be understood */
	DK_PROBE_PING,     /* no answer, or /_ping not 200 */
	DK_PROBE_VERSION,  /* no API version both sides speak */
	DK_PROBE_IMAGE,    /* the image is missing or cannot be asked */
};

/* What the daemon said. */
struct dk_probe_answer {
	enum dk_probe_step failed;
	char *error;          /* why failed failed (NULL when /_ping got
	                         an answer other than 200: ping_status) */
	char *host;           /* DOCKER_HOST as understood */
	long ping_status;     /* 0: no answer */
	char *docker_version; /* the daemon's "Version", or NULL */
	char *api_max;        /* the highest API version it speaks */
	char *api;            /* the version assay speaks with it */
	long image_status;    /* 200 present, 404 missing, else other */
	char *image_id;       /* when present */
	char *repo_digests;   /* when present: "a, b", or NULL for none */
};

struct probe_get {
	long status;
	struct buf body;
	char *err;
};

static void probe_get_done(void *arg, long status, struct buf *body,
                           const char *err)
{
	struct probe_get *g = arg;
	g->status = status;
	buf_append(&g->body, body->data ? body->data : "", body->len);
	g->err = err ? xstrdup(err) : NULL;
}

/* One bounded blocking GET; the parsed body (or NULL), the status,
 * *err when no answer came. */
static cJSON *probe_get(struct dk_api *a, const char *path, int unversioned,
                        long timeout_ms, char **header, long *status,
                        char **err)
{
	struct probe_get g = {0};
	buf_init(&g.body, 0);
	struct dk_req r = {.method = "GET",
	                   .path = path,
	                   .on_done = probe_get_done,
	                   .arg = &g,
	                   .timeout_ms = timeout_ms,
	                   .sync = 1,
	                   .unversioned = unversioned,
	                   .max_body = 1 << 20,
	                   .header_name = header ? "Api-Version" : NULL,
	                   .header_value = header};
	char *why = NULL;
	dk_send(a, &r, &why);
	cJSON *j = NULL;
	*status = g.status;
	if (why || !g.status)
		set_err(err, "%s", why ? why : g.err ? g.err : "no answer");
	else if (g.body.len)
		j = cJSON_ParseWithLength(g.body.data, g.body.len);
	free(why);
	free(g.err);
	buf_free(&g.body);
	return j;
}

/* The image's RepoDigests as "a, b" (at most 8 named), or NULL when it
 * has none. */
static char *probe_digests(const cJSON *img)
{
	struct buf b;
	buf_init(&b, 0);
	int n = 0;
	const cJSON *d;
	cJSON_ArrayForEach(d, cJSON_GetObjectItem(img, "RepoDigests"))
	{
		if (!cJSON_IsString(d))
			continue;
		if (n++ < 8)
			buf_printf(&b, "%s%.300s", b.len ? ", " : "",
			           d->valuestring);
	}
	if (n > 8)
		buf_printf(&b, " and %d more", n - 8);
	return b.len ? buf_detach(&b) : (buf_free(&b), NULL);
}

/* The image step of the probe (the daemon answers, the version is
 * agreed). */
static void probe_image(struct dk_api *a, const char *image, long timeout_ms,
                        struct dk_probe_answer *p)
{
	char *q = xfer_escape(image);
	char *path = xasprintf("/images/%s/json", q);
	char *err = NULL;
	cJSON *img =
	    probe_get(a, path, 0, timeout_ms, NULL, &p->image_status, &err);
	if (p->image_status == 200) {
		p->image_id = xstrdup(json_str(img, "Id", "?"));
		p->repo_digests = probe_digests(img);
	} else {
		p->failed = DK_PROBE_IMAGE;
		p->error =
		    err ? err
		        : xstrdup(p->image_status == 404 ? "not on the daemon"
		                                         : "unexpected status");
		err = NULL;
	}
	free(err);
	free(q);
	free(path);
	cJSON_Delete(img);
}

static void probe_run(const char *image, long timeout_ms,
                      struct dk_probe_answer *p)
{
	memset(p, 0, sizeof *p);
	struct dk_api a = {0};
	char *apiv = NULL;
	cJSON *ver = NULL;
	if (dk_endpoint_parse(getenv("DOCKER_HOST"), getenv("DOCKER_CERT_PATH"),
	                      getenv("DOCKER_TLS_VERIFY"), getenv("HOME"),
	                      &a.ep, &p->error) < 0) {
		p->failed = DK_PROBE_ENDPOINT;
		return;
	}
	p->host = xstrdup(a.ep.host);
	cJSON_Delete(probe_get(&a, "/_ping", 1, timeout_ms, &apiv,
	                       &p->ping_status, &p->error));
	if (p->error || p->ping_status != 200) {
		p->failed = DK_PROBE_PING;
		goto out;
	}
	char *verr = NULL;
	long st = 0;
	ver = probe_get(&a, "/version", 1, timeout_ms, NULL, &st, &verr);
	free(verr);
	const char *max = apiv ? apiv : json_str(ver, "ApiVersion", NULL);
	const char *min = json_str(ver, "MinAPIVersion", NULL);
	const char *dv = json_str(ver, "Version", NULL);
	p->docker_version = dv ? xstrdup(dv) : NULL;
	p->api_max = max ? xstrdup(max) : NULL;
	if (dk_negotiate(getenv("DOCKER_API_VERSION"), max, min, &a.version,
	                 &p->error) < 0) {
		p->failed = DK_PROBE_VERSION;
		goto out;
	}
	p->api = xstrdup(a.version);
	probe_image(&a, image && *image ? image : "assay-sandbox:latest",
	            timeout_ms, p);
out:
	free(apiv);
	cJSON_Delete(ver);
	free(a.version);
	dk_endpoint_free(&a.ep);
}

static void probe_free(struct dk_probe_answer *p)
{
	free(p->error);
	free(p->host);
	free(p->docker_version);
	free(p->api_max);
	free(p->api);
	free(p->image_id);
	free(p->repo_digests);
	memset(p, 0, sizeof *p);
}

/* The findings, under "sandbox: docker" (sbx_ops.probe). */
void dk_probe(const struct config *c, int required, long timeout_ms,
              struct sbx_probe *out)
{
	sbx_probe_section(out, "sandbox: docker");
	enum sbx_probe_status bad = required ? SBX_PROBE_FAIL : SBX_PROBE_WARN;
	const char *image =
	    c->image && *c->image ? c->image : DK_PROBE_IMAGE_DEFAULT;
	struct dk_probe_answer p;
	probe_run(image, timeout_ms, &p);
	const char *dv = p.docker_version ? p.docker_version : "?";
	switch (p.failed) {
	case DK_PROBE_ENDPOINT:
		sbx_probe_add(out, bad, "daemon",
		              xasprintf("DOCKER_HOST: %s", p.error),
		              xstrdup("fix DOCKER_HOST (unix:///path or "
		                      "tcp://host:port)"));
		goto out;
	case DK_PROBE_PING:
		sbx_probe_add(
		    out, bad, "daemon",
		    p.error
		        ? xasprintf("no answer from %s: %s", p.host, p.error)
		        : xasprintf("%s answered /_ping with status %ld",
		                    p.host, p.ping_status),
		    xstrdup("start the daemon (systemctl start docker), check "
		            "DOCKER_HOST and that you may use the socket (the "
		            "docker group); only needed for --sandbox docker"));
		goto out;
	case DK_PROBE_VERSION:
		sbx_probe_add(
		    out, bad, "daemon",
		    xasprintf("%s: Docker %s: %s", p.host, dv, p.error), NULL);
		goto out;
	default:
		break;
	}
	sbx_probe_add(out, SBX_PROBE_OK, "daemon",
	              xasprintf("%s answers: Docker %s, API %s (assay speaks "
	                        "%s)",
	                        p.host, dv, p.api_max ? p.api_max : "?", p.api),
	              NULL);
	if (p.failed == DK_PROBE_OK)
		sbx_probe_add(
		    out, SBX_PROBE_OK, "image",
		    xasprintf("%s is present: id %s; repo digests: %s", image,
		              p.image_id ? p.image_id : "?",
		              p.repo_digests ? p.repo_digests
		                             : "none (built here, never pushed "
		                               "or pulled)"),
		    NULL);
	else if (p.image_status == 404)
		sbx_probe_add(out, bad, "image",
		              xasprintf("%s is not on the daemon", image),
		              xstrdup("build it with "
		                      "scripts/sandbox-image/build-offline (no "
		                      "registry needed)"));
	else
		sbx_probe_add(
		    out, bad, "image",
		    xasprintf("cannot ask about %s: %s", image,
		              p.error ? p.error : "unexpected status"),
		    NULL);
out:
	probe_free(&p);
}
