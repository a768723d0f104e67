/* config.c: layered configuration (defaults < user file < project file
 * < --config < environment < flags) and the assay.json manifest, which
 * is applied as a project layer. */
#include "config_internal.h"
#include "assay/json.h"
#include "assay/path.h"
#include "assay/util.h"

#include <errno.h>
#include <libgen.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void config_set(char **field, const char *value)
{
	free(*field);
	*field = value ? xstrdup(value) : NULL;
}

int config_check_images(const char *value, char **err)
{
	static const char *const modes[] = {"auto", "sixel", "kitty", "blocks",
	                                    "off"};
	for (size_t i = 0; value && i < sizeof modes / sizeof *modes; i++)
		if (!strcmp(value, modes[i]))
			return 0;
	return set_err(err,
	               "images must be auto, sixel, kitty, blocks or off "
	               "(got '%s'): check --images or the \"images\" key "
	               "in your config",
	               value ? value : "");
}

void config_defaults(struct config *c)
{
	memset(c, 0, sizeof *c);
	config_set(&c->provider, "openai");
	/* model: NULL lets each provider pick (openai: gpt-4.1) */
	config_set(&c->sandbox, "local");
	config_set(&c->ask, "risky");
	config_set(&c->out_dir, "outputs");
	config_set(&c->theme, "auto"); /* light or dark: asked */
	config_set(&c->images, "auto");
	config_set(&c->image, "assay-sandbox:latest");
	c->timeout_s = 120;
	c->max_turns = 50;
	c->max_output_bytes = 16384;
	c->max_output_tokens = 8192;
	c->context.trim_at = 0.70;
	c->context.compact_at = 0.85;
	c->context.keep_turns = 4;
	c->mem_mb = 4096;
	c->nproc = 256;
	c->cpu_s = 600;
	c->fsize_mb = 2048;
}

void config_free(struct config *c)
{
	char **strs[] = {&c->provider,    &c->model,   &c->base_url,
	                 &c->api_key_env, &c->script,  &c->sandbox,
	                 &c->image,       &c->ask,     &c->out_dir,
	                 &c->workspace,   &c->run_dir, &c->instructions,
	                 &c->theme,       &c->images,  &c->opensandbox_url};
	for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
		config_set(strs[i], NULL);
	for (size_t i = 0; i < c->n_inputs; i++) {
		free(c->inputs[i].src);
		free(c->inputs[i].dest);
	}
	free(c->inputs);
	for (size_t i = 0; i < c->n_outputs; i++)
		free(c->outputs[i]);
	free(c->outputs);
	strv_free(&c->net_allow);
	cJSON_Delete(c->rules);
	cJSON_Delete(c->never_save);
	cJSON_Delete(c->models);
	cJSON_Delete(c->project);
	memset(c, 0, sizeof *c);
}

void config_add_input(struct config *c, const char *src, const char *dest)
{
	c->inputs = xrealloc(c->inputs, (c->n_inputs + 1) * sizeof *c->inputs);
	c->inputs[c->n_inputs].src = xstrdup(src);
	c->inputs[c->n_inputs].dest = xstrdup(dest);
	c->inputs[c->n_inputs].copy = 0;
	c->n_inputs++;
}

void config_add_output(struct config *c, const char *path)
{
	for (size_t i = 0; i < c->n_outputs; i++)
		if (!strcmp(c->outputs[i], path))
			return;
	c->outputs = xrealloc(c->outputs, (c->n_outputs + 1) * sizeof(char *));
	c->outputs[c->n_outputs++] = xstrdup(path);
}

int config_parse_input(const char *spec, struct config_input *in, char **err)
{
	memset(in, 0, sizeof *in);
	if (!spec || !*spec)
		return set_err(err, "--input needs SRC[:DEST]");
	const char *colon = strrchr(spec, ':');
	char *src =
	    colon ? xstrndup(spec, (size_t)(colon - spec)) : xstrdup(spec);
	if (!*src) {
		free(src);
		return set_err(err, "input '%s': empty source path", spec);
	}
	char *dest;
	if (colon && colon[1]) {
		dest = xstrdup(colon + 1);
	} else {
		char *tmp = xstrdup(src);
		size_t n = strlen(tmp);
		while (n > 1 && tmp[n - 1] == '/')
			tmp[--n] = '\0';
		dest = xasprintf("input/%s", basename(tmp));
		free(tmp);
	}
	in->src = src;
	in->dest = dest;
	return 0;
}

/* A relative input source in a file layer is relative to that file. */
char *config_resolve_src(const char *src, const char *base_dir)
{
	if (src[0] == '/' || !base_dir)
		return xstrdup(src);
	return xasprintf("%s/%s", base_dir, src);
}

static int apply_inputs(struct config *c, const cJSON *arr, const char *origin,
                        const char *base_dir, char **err)
{
	if (!cJSON_IsArray(arr))
		return set_err(err, "%s: \"inputs\" must be an array", origin);
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		struct config_input in;
		if (cJSON_IsString(it)) {
			if (config_parse_input(it->valuestring, &in, err) < 0)
				return -1;
		} else if (cJSON_IsObject(it) && json_str(it, "src", NULL)) {
			if (config_parse_input(json_str(it, "src", NULL), &in,
			                       err) < 0)
				return -1;
			const char *dest = json_str(it, "dest", NULL);
			if (dest)
				config_set(&in.dest, dest);
			in.copy = json_bool(it, "copy", 0);
		} else {
			return set_err(
			    err,
			    "%s: each of \"inputs\" is \"SRC[:DEST]\" "
			    "or {\"src\":..,\"dest\":..,\"copy\":true}",
			    origin);
		}
		char *abs = config_resolve_src(in.src, base_dir);
		config_add_input(c, abs, in.dest);
		c->inputs[c->n_inputs - 1].copy = in.copy;
		free(abs);
		free(in.src);
		free(in.dest);
	}
	return 0;
}

static int apply_string(char **field, const cJSON *v, const char *origin,
                        char **err)
{
	if (!cJSON_IsString(v))
		return set_err(err, "%s: \"%s\" must be a string", origin,
		               v->string);
	config_set(field, v->valuestring);
	return 0;
}

static int apply_number(double *out, const cJSON *v, const char *origin,
                        double min, char **err)
{
	if (!cJSON_IsNumber(v) || v->valuedouble < min)
		return set_err(err, "%s: \"%s\" must be a number >= %g", origin,
		               v->string, min);
	*out = v->valuedouble;
	return 0;
}

static int apply_limits(struct config *c, const cJSON *obj, const char *origin,
                        char **err)
{
	if (!cJSON_IsObject(obj))
		return set_err(err, "%s: \"limits\" must be an object", origin);
	const cJSON *v;
	cJSON_ArrayForEach(v, obj)
	{
		double d = 0;
		if (apply_number(&d, v, origin, 1, err) < 0)
			return -1;
		if (!strcmp(v->string, "memory_mb"))
			c->mem_mb = (long)d;
		else if (!strcmp(v->string, "processes"))
			c->nproc = (long)d;
		else if (!strcmp(v->string, "cpu_s"))
			c->cpu_s = (long)d;
		else if (!strcmp(v->string, "file_size_mb"))
			c->fsize_mb = (long)d;
		else if (!strcmp(v->string, "cpus"))
			c->cpus = (long)d;
		else if (!strcmp(v->string, "sessions"))
			c->max_sessions = (long)d;
		else
			return set_err(err,
			               "%s: unknown key \"limits.%s\" (known: "
			               "memory_mb, processes, cpu_s, "
			               "file_size_mb, cpus, sessions)",
			               origin, v->string);
	}
	return 0;
}

/* "network": true/false, or {"allow": ["host", ...]}: egress only to
 * those hosts (an empty list: none). */
static int apply_network(struct config *c, const cJSON *v, const char *origin,
                         char **err)
{
	if (cJSON_IsBool(v)) {
		c->network = cJSON_IsTrue(v);
		return 0;
	}
	const cJSON *allow = cJSON_GetObjectItem(v, "allow");
	if (!cJSON_IsObject(v) || !cJSON_IsArray(allow) ||
	    cJSON_GetArraySize(v) != 1)
		return set_err(err,
		               "%s: \"network\" must be true, false or "
		               "{\"allow\": [\"host\", ...]}",
		               origin);
	strv_free(&c->net_allow);
	const cJSON *h;
	cJSON_ArrayForEach(h, allow)
	{
		if (!cJSON_IsString(h) || !*h->valuestring ||
		    strpbrk(h->valuestring, " /\"'"))
			return set_err(err,
			               "%s: each of \"network.allow\" must be "
			               "a host name (\"pypi.org\", "
			               "\"*.example.com\") or an IP address",
			               origin);
		strv_push(&c->net_allow, h->valuestring);
	}
	c->network = 0;
	return 0;
}

/* "opensandbox": {"url": "host:port" or URL, "timeout_s": N,
 * "network_policy": "assay" | "server"}. */
static int apply_opensandbox(struct config *c, const cJSON *v,
                             const char *origin, char **err)
{
	if (!cJSON_IsObject(v))
		return set_err(err,
		               "%s: \"opensandbox\" must be an object: "
		               "{\"url\": \"host:8080\", \"timeout_s\": "
		               "3600}",
		               origin);
	const cJSON *f;
	cJSON_ArrayForEach(f, v)
	{
		if (!strcmp(f->string, "url")) {
			if (!cJSON_IsString(f) || !*f->valuestring)
				return set_err(err,
				               "%s: \"opensandbox.url\" "
				               "must be a non-empty string",
				               origin);
			config_set(&c->opensandbox_url, f->valuestring);
		} else if (!strcmp(f->string, "timeout_s")) {
			if (!cJSON_IsNumber(f) || f->valuedouble < 60 ||
			    f->valuedouble > 86400 * 30)
				return set_err(
				    err,
				    "%s: \"opensandbox.timeout_s\" "
				    "must be a number of seconds, 60 "
				    "or more (the server's minimum)",
				    origin);
			c->opensandbox_ttl_s = (long)f->valuedouble;
		} else if (!strcmp(f->string, "network_policy")) {
			const char *p = cJSON_IsString(f) ? f->valuestring : "";
			if (strcmp(p, "assay") && strcmp(p, "server"))
				return set_err(
				    err,
				    "%s: \"opensandbox.network_policy\" must "
				    "be \"assay\" (send the policy --network "
				    "says; the default) or \"server\" (send "
				    "none: the sandbox gets the server's "
				    "network)",
				    origin);
			c->opensandbox_server_net = !strcmp(p, "server");
		} else {
			return set_err(
			    err,
			    "%s: unknown key \"opensandbox.%s\" "
			    "(known: url, timeout_s, network_policy)",
			    origin, f->string);
		}
	}
	return 0;
}

/* "context": {"trim_at", "compact_at", "keep_turns", "window"}. */
static int apply_context(struct config *c, const cJSON *obj, const char *origin,
                         char **err)
{
	if (!cJSON_IsObject(obj))
		return set_err(err, "%s: \"context\" must be an object",
		               origin);
	const cJSON *v;
	cJSON_ArrayForEach(v, obj)
	{
		const char *k = v->string;
		int share = !strcmp(k, "trim_at") || !strcmp(k, "compact_at");
		if (share && (!cJSON_IsNumber(v) || v->valuedouble <= 0.05 ||
		              v->valuedouble > 1))
			return set_err(err,
			               "%s: \"context.%s\" must be a share of "
			               "the context window, above 0.05 and at "
			               "most 1 (e.g. 0.7)",
			               origin, k);
		double d = 0;
		if (!strcmp(k, "trim_at"))
			c->context.trim_at = v->valuedouble;
		else if (!strcmp(k, "compact_at"))
			c->context.compact_at = v->valuedouble;
		else if (!strcmp(k, "keep_turns") || !strcmp(k, "window")) {
			if (apply_number(&d, v, origin,
			                 !strcmp(k, "window") ? 0 : 1, err) < 0)
				return -1;
			if (d > 1e9)
				return set_err(err,
				               "%s: \"context.%s\" is too "
				               "large",
				               origin, k);
			if (!strcmp(k, "window"))
				c->context.window = (long)d;
			else
				c->context.keep_turns = (int)d;
		} else
			return set_err(err,
			               "%s: unknown key \"context.%s\" (known: "
			               "trim_at, compact_at, keep_turns, "
			               "window)",
			               origin, k);
	}
	if (c->context.compact_at < c->context.trim_at)
		return set_err(err,
		               "%s: \"context.compact_at\" (%g) must not be "
		               "below \"context.trim_at\" (%g): trimming comes "
		               "first",
		               origin, c->context.compact_at,
		               c->context.trim_at);
	return 0;
}

struct str_key {
	const char *key;
	size_t off;
};

#define SK(k, f)                                                               \
	{                                                                      \
		k, offsetof(struct config, f)                                  \
	}
static const struct str_key str_keys[] = {
    SK("provider", provider), SK("model", model),
    SK("base_url", base_url), SK("api_key_env", api_key_env),
    SK("script", script),     SK("sandbox", sandbox),
    SK("image", image),       SK("ask", ask),
    SK("out", out_dir),       SK("workspace", workspace),
    SK("run_dir", run_dir),   SK("instructions", instructions),
    SK("theme", theme),       SK("images", images),
};
#undef SK

/* "models": {"NAME": {fields}}: each field over an earlier layer's
 * (the fields are checked where the table is built, models.c). */
static int apply_models(struct config *c, const cJSON *v, const char *origin,
                        char **err)
{
	if (!cJSON_IsObject(v))
		return set_err(err,
		               "%s: \"models\" must be an object: {\"NAME\": "
		               "{\"input\": USD, \"output\": USD, ...}}",
		               origin);
	if (!c->models)
		c->models = cJSON_CreateObject();
	const cJSON *m, *f;
	cJSON_ArrayForEach(m, v)
	{
		cJSON *have = cJSON_GetObjectItem(c->models, m->string);
		if (!cJSON_IsObject(m) || !cJSON_IsObject(have)) {
			cJSON_DeleteItemFromObject(c->models, m->string);
			cJSON_AddItemToObject(c->models, m->string,
			                      cJSON_Duplicate(m, 1));
			continue;
		}
		cJSON_ArrayForEach(f, m)
		{
			cJSON_DeleteItemFromObject(have, f->string);
			cJSON_AddItemToObject(have, f->string,
			                      cJSON_Duplicate(f, 1));
		}
	}
	return 0;
}

/* The keys whose value is an object of their own. */
static const struct {
	const char *key;
	int (*apply)(struct config *c, const cJSON *v, const char *origin,
	             char **err);
} obj_keys[] = {
    {"limits", apply_limits},
    {"context", apply_context},
    {"opensandbox", apply_opensandbox},
};

int config_apply_key(struct config *c, const cJSON *v, const char *origin,
                     const char *base_dir, char **err)
{
	const char *k = v->string;
	for (size_t i = 0; i < sizeof str_keys / sizeof *str_keys; i++) {
		if (strcmp(k, str_keys[i].key))
			continue;
		char **field = (char **)((char *)c + str_keys[i].off);
		if (apply_string(field, v, origin, err) < 0)
			return -1;
		/* file names in a file layer are relative to the file */
		if ((!strcmp(k, "script") || !strcmp(k, "instructions")) &&
		    base_dir && (*field)[0] != '/') {
			char *abs = config_resolve_src(*field, base_dir);
			free(*field);
			*field = abs;
		}
		return 0;
	}
	double d = 0;
	if (!strcmp(k, "network") && !cJSON_IsBool(v))
		return apply_network(c, v, origin, err);
	if (!strcmp(k, "network") || !strcmp(k, "step") ||
	    !strcmp(k, "responses_store")) {
		if (!cJSON_IsBool(v))
			return set_err(err, "%s: \"%s\" must be true or false",
			               origin, k);
		*(!strcmp(k, "network") ? &c->network
		  : !strcmp(k, "step")  ? &c->step
		                       : &c->responses_store) = cJSON_IsTrue(v);
		return 0;
	}
	if (!strcmp(k, "timeout") || !strcmp(k, "max_turns") ||
	    !strcmp(k, "max_output_bytes") || !strcmp(k, "max_output_tokens")) {
		/* below 1 KiB the model would see nothing useful */
		double min = !strcmp(k, "max_output_bytes") ? 1024 : 1;
		if (apply_number(&d, v, origin, min, err) < 0)
			return -1;
		if (d > 1e9)
			return set_err(err, "%s: \"%s\" is too large", origin,
			               k);
		if (!strcmp(k, "timeout"))
			c->timeout_s = (int)d;
		else if (!strcmp(k, "max_turns"))
			c->max_turns = (int)d;
		else if (!strcmp(k, "max_output_bytes"))
			c->max_output_bytes = (size_t)d;
		else
			c->max_output_tokens = (int)d;
		return 0;
	}
	if (!strcmp(k, "max_tokens") || !strcmp(k, "max_cost")) {
		if (apply_number(&d, v, origin, 0, err) < 0)
			return -1;
		if (!strcmp(k, "max_tokens"))
			c->max_tokens = (long)d;
		else
			c->max_cost = d;
		return 0;
	}
	for (size_t i = 0; i < sizeof obj_keys / sizeof *obj_keys; i++)
		if (!strcmp(k, obj_keys[i].key))
			return obj_keys[i].apply(c, v, origin, err);
	if (!strcmp(k, "inputs"))
		return apply_inputs(c, v, origin, base_dir, err);
	if (!strcmp(k, "outputs")) {
		if (!cJSON_IsArray(v))
			return set_err(err,
			               "%s: \"outputs\" must be an array "
			               "of workspace paths",
			               origin);
		const cJSON *it;
		cJSON_ArrayForEach(it, v)
		{
			if (!cJSON_IsString(it) || !*it->valuestring)
				return set_err(
				    err,
				    "%s: each of \"outputs\" must be "
				    "a non-empty string",
				    origin);
			config_add_output(c, it->valuestring);
		}
		return 0;
	}
	if (!strcmp(k, "rules")) {
		if (!cJSON_IsArray(v))
			return set_err(err, "%s: \"rules\" must be an array",
			               origin);
		/* rules add up across layers: a project's rules never
		 * silently drop the user's deny rules */
		if (!c->rules)
			c->rules = cJSON_CreateArray();
		const cJSON *r;
		cJSON_ArrayForEach(r, v)
		{
			cJSON_AddItemToArray(c->rules, cJSON_Duplicate(r, 1));
		}
		return 0;
	}
	if (!strcmp(k, "models"))
		return apply_models(c, v, origin, err);
	if (!strcmp(k, "never_save")) {
		const cJSON *r;
		int ok = cJSON_IsArray(v);
		cJSON_ArrayForEach(r, v)
		{
			ok &= cJSON_IsString(r);
		}
		if (!ok)
			return set_err(
			    err,
			    "%s: \"never_save\" must be an array of "
			    "reason kinds (network, deletion, hidden...)",
			    origin);
		cJSON_Delete(c->never_save);
		c->never_save = cJSON_Duplicate(v, 1);
		return 0;
	}
	return set_err(err, "%s: unknown key \"%s\"", origin, k);
}

/* Keys a project file (./.assay/config.json, ./assay.json) may not set:
 * together they decide which server receives an API key, and a cloned
 * repository must not be able to send the user's key elsewhere. */
static const char *const user_only_keys[] = {"base_url", "api_key_env",
                                             "opensandbox", NULL};

int config_user_only(const char *key)
{
	for (int i = 0; user_only_keys[i]; i++)
		if (!strcmp(key, user_only_keys[i]))
			return 1;
	return 0;
}

int config_check_key(const cJSON *v, const char *origin, int project,
                     char **err)
{
	if (!strcmp(v->string, "$schema") || !strcmp(v->string, "//"))
		return 1;
	if (project && config_user_only(v->string))
		return set_err(err,
		               "%s: \"%s\" cannot be set by a project "
		               "file (it decides where your API key is "
		               "sent): set it in your user config, the "
		               "environment or on the command line",
		               origin, v->string);
	return 0;
}

int config_ask_rank(const char *mode)
{
	static const char *const order[] = {"none", "risky", "all"};
	for (int i = 0; mode && i < 3; i++)
		if (!strcmp(mode, order[i]))
			return i;
	return -1;
}

static int apply_json(struct config *c, const cJSON *obj, const char *origin,
                      const char *base_dir, char **err)
{
	if (!cJSON_IsObject(obj))
		return set_err(err, "%s: must be a JSON object", origin);
	const cJSON *v;
	cJSON_ArrayForEach(v, obj)
	{
		int skip = config_check_key(v, origin, 0, err);
		if (skip < 0)
			return -1;
		if (!skip && config_apply_key(c, v, origin, base_dir, err) < 0)
			return -1;
	}
	return 0;
}

int config_apply_json(struct config *c, const cJSON *obj, const char *origin,
                      char **err)
{
	return apply_json(c, obj, origin, NULL, err);
}

int config_apply_json_in(struct config *c, const cJSON *obj, const char *origin,
                         const char *base_dir, char **err)
{
	return apply_json(c, obj, origin, base_dir, err);
}

int config_apply_file(struct config *c, const char *path, int must_exist,
                      char **err)
{
	if (access(path, F_OK) < 0 && errno == ENOENT && !must_exist)
		return 0;
	cJSON *j = json_parse_file(path, CONFIG_MAX_BYTES, err);
	if (!j)
		return -1;
	char *tmp = xstrdup(path);
	char *dir = xstrdup(dirname(tmp));
	int rc = apply_json(c, j, path, dir, err);
	free(tmp);
	free(dir);
	cJSON_Delete(j);
	return rc;
}

int config_apply_env(struct config *c, char **err)
{
	const char *v;
	if ((v = getenv("ASSAY_PROVIDER")) && *v)
		config_set(&c->provider, v);
	if ((v = getenv("ASSAY_MODEL")) && *v)
		config_set(&c->model, v);
	/* a provider's own URL variable (OPENAI_BASE_URL, OLLAMA_HOST) is
	 * read by that provider when no layer set base_url: read here, it
	 * would follow a provider the options then change */
	(void)err;
	return 0;
}

int config_load(struct config *c, const char *user_file, const char *extra_file,
                char **err)
{
	if (user_file && config_apply_file(c, user_file, 0, err) < 0)
		return -1;
	if (config_load_project(c, err) < 0)
		return -1;
	if (extra_file && config_apply_file(c, extra_file, 1, err) < 0)
		return -1;
	return config_apply_env(c, err);
}

char *config_user_file(void)
{
	return path_config_dir("config.json");
}
