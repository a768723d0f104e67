/* os_doctor.c: what `assay doctor --sandbox opensandbox` asks an
 * OpenSandbox server, blocking (doctor has no loop): whether it
 * answers and takes the key, and whether it can keep a sandbox off the
 * network (a probe sandbox created with a deny-all networkPolicy and
 * deleted at once; a server without the egress component refuses the
 * create, protocols.md E.5), and what it reports of the image (by
 * name: no digest). */
#include "assay/config.h"
#include "assay/http.h"
#include "assay/json.h"
#include "assay/util.h"
#include "sandbox/os_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One blocking request to the lifecycle API. */
struct os_sync {
	long status;
	struct buf body;
	char *err; /* no answer: why */
};

static void sync_response(struct http_xfer *x, long status, void *arg)
{
	(void)x;
	((struct os_sync *)arg)->status = status;
}

static int sync_data(struct http_xfer *x, const char *data, size_t n, void *arg)
{
	(void)x;
	struct os_sync *r = arg;
	return buf_append(&r->body, data, n) < 0 ? -1 : 0;
}

/* method api+path (JSON body or NULL) into r; r->status 0 and r->err
 * when no answer came. */
static void sync_call(struct os_sync *r, const char *method, const char *api,
                      const char *path, const char *json, long timeout_ms)
{
	const char *key = getenv("OPEN_SANDBOX_API_KEY");
	char *kh =
	    key && *key ? xasprintf("OPEN-SANDBOX-API-KEY: %s", key) : NULL;
	const char *h[3] = {0};
	size_t n = 0;
	if (kh)
		h[n++] = kh;
	if (json)
		h[n++] = "Content-Type: application/json";
	char *url = xasprintf("%s%s", api, path);
	buf_init(&r->body, 1u << 20);
	struct http_request q = {.method = method,
	                         .url = url,
	                         .headers = h,
	                         .body = json,
	                         .body_len = json ? strlen(json) : 0,
	                         .connect_timeout_ms = timeout_ms,
	                         .total_timeout_ms = timeout_ms,
	                         .on_response = sync_response,
	                         .on_data = sync_data,
	                         .arg = r};
	r->status = 0;
	if (http_perform(&q, &r->err) < 0 || !r->status) {
		r->status = 0;
		if (!r->err)
			r->err = xstrdup("no connection");
	}
	free(url);
	free(kh);
}

static void sync_free(struct os_sync *r)
{
	buf_free(&r->body);
	free(r->err);
}

/* The server doctor asks (--opensandbox-url, else OPEN_SANDBOX_DOMAIN):
 * -1 and *detail when there is none to ask. */
static int probe_server(const struct config *cfg, char **server, char **api,
                        char **detail)
{
	const char *url = cfg->opensandbox_url;
	if (!url || !*url)
		url = getenv("OPEN_SANDBOX_DOMAIN");
	*server = *api = NULL;
	return os_server_url(url, server, api, detail);
}

/* Whether the server answers and takes the key: 0 with *detail saying
 * what it answered, or -1 with *detail saying why not and *fix what to
 * do. */
static int probe_answer(const struct config *cfg, long timeout_ms,
                        char **detail, char **fix)
{
	*detail = *fix = NULL;
	char *server, *api;
	if (probe_server(cfg, &server, &api, detail) < 0) {
		*fix = xstrdup("set OPEN_SANDBOX_DOMAIN=host:port (or "
		               "--opensandbox-url)");
		return -1;
	}
	const char *key = getenv("OPEN_SANDBOX_API_KEY");
	struct os_sync r = {0};
	sync_call(&r, "GET", api, "/sandboxes?pageSize=1", NULL, timeout_ms);
	int out = -1;
	if (!r.status) {
		*detail = xasprintf("no answer from %s: %s", server, r.err);
		*fix = xstrdup("start the server or fix --opensandbox-url / "
		               "OPEN_SANDBOX_DOMAIN; only needed for --sandbox "
		               "opensandbox");
	} else if (r.status != 200) {
		char *m = os_server_message(r.status, &r.body);
		*detail = xasprintf("%s answered: %s", server, m);
		free(m);
		if (r.status == 401 || r.status == 403)
			*fix = xstrdup("set OPEN_SANDBOX_API_KEY to a key of "
			               "that server");
	} else {
		cJSON *j = cJSON_ParseWithLength(r.body.data ? r.body.data : "",
		                                 r.body.len);
		const cJSON *pg = cJSON_GetObjectItem(j, "pagination");
		*detail =
		    xasprintf("%s answers (%s), %.0f sandboxes listed", server,
		              key && *key ? "the key is taken" : "no key",
		              json_num(pg, "totalItems", 0));
		cJSON_Delete(j);
		out = 0;
	}
	sync_free(&r);
	free(server);
	free(api);
	return out;
}

/* The probe's create: the smallest sandbox the server accepts, with the
 * policy a default run sends (deny-all), for 60 s at most. */
static char *probe_body(const struct config *cfg)
{
	cJSON *b = cJSON_CreateObject();
	cJSON *img = cJSON_AddObjectToObject(b, "image");
	cJSON_AddStringToObject(
	    img, "uri",
	    cfg->image && *cfg->image ? cfg->image : "assay-sandbox:latest");
	cJSON *ep = cJSON_AddArrayToObject(b, "entrypoint");
	cJSON_AddItemToArray(ep, cJSON_CreateString("tail"));
	cJSON_AddItemToArray(ep, cJSON_CreateString("-f"));
	cJSON_AddItemToArray(ep, cJSON_CreateString("/dev/null"));
	cJSON_AddNumberToObject(b, "timeout", 60);
	cJSON *rl = cJSON_AddObjectToObject(b, "resourceLimits");
	cJSON_AddStringToObject(rl, "cpu", "1");
	cJSON_AddStringToObject(rl, "memory", "256Mi");
	cJSON *md = cJSON_AddObjectToObject(b, "metadata");
	cJSON_AddStringToObject(md, "assay.probe", "doctor");
	cJSON *p = cJSON_AddObjectToObject(b, "networkPolicy");
	cJSON_AddStringToObject(p, "defaultAction", "deny");
	cJSON_AddArrayToObject(p, "egress");
	char *json = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	return json;
}

/* Delete the probe sandbox: a note when that fails (its TTL ends it). */
static char *probe_delete(const char *api, const char *id, long timeout_ms)
{
	struct os_sync r = {0};
	char *path = xasprintf("/sandboxes/%s", id);
	sync_call(&r, "DELETE", api, path, NULL, timeout_ms);
	char *note = NULL;
	if (r.status != 204 && r.status != 200 && r.status != 404) {
		char *m = r.status ? os_server_message(r.status, &r.body)
		                   : xstrdup(r.err);
		note = xasprintf("; the probe sandbox %s could not be deleted "
		                 "(%s): it expires in 60 s",
		                 id, m);
		free(m);
	}
	free(path);
	sync_free(&r);
	return note;
}

/* What the server reports of the probe sandbox's image (GET
 * /sandboxes/{id}): what a run records of it. */
static char *os_probe_image(const struct config *cfg, const char *api,
                            const char *id, long timeout_ms)
{
	const char *asked =
	    cfg->image && *cfg->image ? cfg->image : "assay-sandbox:latest";
	struct os_sync r = {0};
	char *path = xasprintf("/sandboxes/%s", id);
	sync_call(&r, "GET", api, path, NULL, timeout_ms);
	free(path);
	cJSON *j = r.status == 200 && r.body.len
	               ? cJSON_ParseWithLength(r.body.data, r.body.len)
	               : NULL;
	const cJSON *img = cJSON_GetObjectItem(j, "image");
	const char *uri = json_str(img, "uri", NULL);
	char *out;
	if (!j)
		out = xasprintf("%s: cannot tell what the server reports of "
		                "it (the probe sandbox's GET got %ld)",
		                asked, r.status);
	else
		out =
		    xasprintf("%s: the server reports it by name only (%.300s)"
		              ", no digest: a run records that name",
		              asked, uri ? uri : "none named");
	cJSON_Delete(j);
	sync_free(&r);
	return out;
}

/* Whether that server can keep a sandbox off the network: a probe
 * sandbox with a deny-all networkPolicy, deleted at once. 0 (it can),
 * 1 (a warning: runs get the server's network by the user's choice,
 * or it cannot be told), -1 (it refuses any policy: a default run
 * cannot start), with *detail and maybe *fix. */
static int probe_network(const struct config *cfg, long timeout_ms,
                         char **detail, char **fix, char **image)
{
	*detail = *fix = *image = NULL;
	char *server, *api;
	if (probe_server(cfg, &server, &api, detail) < 0)
		return -1;
	int server_net = cfg->opensandbox_server_net;
	char *body = probe_body(cfg);
	struct os_sync r = {0};
	sync_call(&r, "POST", api, "/sandboxes", body, timeout_ms);
	cJSON *j =
	    r.body.len ? cJSON_ParseWithLength(r.body.data, r.body.len) : NULL;
	const char *id = json_str(j, "id", NULL);
	char *m = r.status >= 300 ? os_server_message(r.status, &r.body) : NULL;
	int out = -1;
	if ((r.status == 202 || r.status == 200 || r.status == 201) && id) {
		*image = os_probe_image(cfg, api, id, timeout_ms);
		char *note = probe_delete(api, id, timeout_ms);
		*detail = xasprintf(
		    "%s accepts a network policy (a probe sandbox with "
		    "deny-all was created and deleted)%s%s",
		    server,
		    server_net ? "; but opensandbox.network_policy is "
		                 "\"server\": runs send none and get the "
		                 "server's network"
		               : ": runs are kept off the network unless "
		                 "--network",
		    note ? note : "");
		if (server_net)
			*fix = xstrdup("remove \"network_policy\": \"server\" "
			               "from the user config to keep runs off "
			               "the network");
		free(note);
		out = server_net ? 1 : 0;
	} else if (os_policy_refused(r.status, m)) {
		*detail = xasprintf(
		    "%s refuses any networkPolicy (it said: %s): it has no "
		    "egress component, or runs sandboxes with network_mode "
		    "\"host\"%s; %s",
		    server, m,
		    strstr(m, "network_mode=host")
		        ? " (it does: every sandbox shares the host's port "
		          "44772, so one run at a time there)"
		        : "",
		    server_net ? "opensandbox.network_policy is \"server\": "
		                 "runs send none and get the server's network"
		               : "a run with the network off (the default) "
		                 "cannot start there");
		if (!server_net)
			*fix = xstrdup(
			    "configure the server's egress (~/.sandbox.toml: "
			    "[egress] image = \"opensandbox/egress:...\", "
			    "[docker] network_mode = \"bridge\"), or accept "
			    "its network: run with --network, or set "
			    "\"opensandbox\": {\"network_policy\": "
			    "\"server\"} in the user config");
		out = server_net ? 1 : -1;
	} else {
		*detail = xasprintf(
		    "cannot tell whether %s accepts a network policy: the "
		    "probe sandbox's create got %s",
		    server,
		    m       ? m
		    : r.err ? r.err
		            : "no id in the answer");
		*fix = xstrdup("see the server's log; a run's start says more");
		out = 1;
	}
	free(m);
	cJSON_Delete(j);
	sync_free(&r);
	free(body);
	free(server);
	free(api);
	return out;
}

void os_probe(const struct config *cfg, int required, long timeout_ms,
              struct sbx_probe *p)
{
	(void)required; /* probed only when chosen */
	sbx_probe_section(p, "sandbox: opensandbox");
	char *detail = NULL, *fix = NULL;
	int rc = probe_answer(cfg, timeout_ms, &detail, &fix);
	sbx_probe_add(p, rc == 0 ? SBX_PROBE_OK : SBX_PROBE_FAIL, "server",
	              detail, fix);
	if (rc < 0)
		return;
	char *image = NULL;
	rc = probe_network(cfg, timeout_ms, &detail, &fix, &image);
	sbx_probe_add(p,
	              rc == 0  ? SBX_PROBE_OK
	              : rc > 0 ? SBX_PROBE_WARN
	                       : SBX_PROBE_FAIL,
	              "network", detail, fix);
	if (!image) /* no probe sandbox to ask about */
		image = xasprintf(
		    "%s: asked for by name; the server's API reports an image "
		    "by name only, no digest",
		    cfg->image && *cfg->image ? cfg->image
		                              : "assay-sandbox:latest");
	sbx_probe_add(p, SBX_PROBE_OK, "image", image, NULL);
}
