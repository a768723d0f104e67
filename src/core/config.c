/* config.c: layered configuration (defaults < user file < project file
 * < --config < environment < flags; the models imported beside the
 * user file kept apart, below every layer's "models") and the
 * assay.json manifest, which is applied as a project layer. */
#include "config_internal.h"
#include "config_keys.h"

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

/* A row's default onto c (strings, numbers, booleans; the others
 * start empty, and a CUSTOM row's default only documents it). */
static void config_default(struct config *c, const struct config_key *k)
{
	if (k->type == CONFIG_T_STRING || k->type == CONFIG_T_FILE)
		config_set(config_key_field(c, k), k->def);
	else if (k->type == CONFIG_T_BOOL)
		config_key_set_number(c, k, !strcmp(k->def, "true"));
	else if (k->type != CONFIG_T_ENUM)
		config_key_set_number(c, k, strtod(k->def, NULL));
}

void config_defaults(struct config *c)
{
	memset(c, 0, sizeof *c);
	for (const struct config_key *k = config_keys(); k->name; k++)
		if (k->def)
			config_default(c, k);
}

void config_free(struct config *c)
{
	for (const struct config_key *k = config_keys(); k->name; k++)
		if (k->type == CONFIG_T_STRING || k->type == CONFIG_T_FILE)
			config_set(config_key_field(c, k), NULL);
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
	cJSON_Delete(c->models_imported);
	cJSON_Delete(c->mcp_servers);
	strv_free(&c->mcp_only);
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

int config_apply_key(struct config *c, const cJSON *v, const char *origin,
                     const char *base_dir, char **err)
{
	const struct config_key *k = config_key_find(NULL, v->string);
	if (!k)
		return set_err(err, "%s: unknown key \"%s\"", origin,
		               v->string);
	return config_key_apply(c, k, v, origin, base_dir, err);
}

int config_check_key(const cJSON *v, const char *origin, int project,
                     char **err)
{
	const struct config_key *k = config_key_find(NULL, v->string);
	if (k && k->type == CONFIG_T_IGNORED)
		return 1;
	if (project && !config_key_settable(v->string, CONFIG_BY_PROJECT))
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

/* The keys the environment sets (.env: ASSAY_PROVIDER, ASSAY_MODEL). */
int config_apply_env(struct config *c, char **err)
{
	const char *v;
	for (const struct config_key *k = config_keys(); k->name; k++)
		if (k->env && (v = getenv(k->env)) && *v)
			config_set(config_key_field(c, k), v);
	/* a provider's own URL variable (OPENAI_BASE_URL, OLLAMA_HOST) is
	 * read by that provider when no layer set base_url: read here, it
	 * would follow a provider the options then change */
	(void)err;
	return 0;
}

char *config_models_file(const char *user_file)
{
	if (!user_file)
		return NULL;
	char *tmp = xstrdup(user_file);
	char *p = xasprintf("%s/models.json", dirname(tmp));
	free(tmp);
	return p;
}

/* The imported model table beside user_file, when there is one, into
 * c->models_imported (models.c puts it below every "models"). */
static int config_load_models_file(struct config *c, const char *user_file,
                                   char **err)
{
	char *path = config_models_file(user_file);
	cJSON *j = NULL;
	int rc = 0;
	if (access(path, F_OK) < 0 && errno == ENOENT)
		goto out;
	j = json_parse_file(path, CONFIG_MODELS_MAX_BYTES, err);
	if (!j) {
		rc = -1;
	} else if (!cJSON_IsObject(j)) {
		rc = set_err(err,
		             "%s: must be a JSON object of models ('assay "
		             "models --import' writes it; remove it to drop "
		             "what was imported)",
		             path);
	} else {
		cJSON_Delete(c->models_imported);
		c->models_imported = j;
		j = NULL;
	}
out:
	cJSON_Delete(j);
	free(path);
	return rc;
}

int config_load(struct config *c, const char *user_file, const char *extra_file,
                char **err)
{
	if (user_file && config_load_models_file(c, user_file, err) < 0)
		return -1;
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
