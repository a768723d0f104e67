/* config_internal.h: what config.c and project.c (the project layer
 * and its trust rule) share. Not for other layers. */
#ifndef ASSAY_CONFIG_INTERNAL_H
#define ASSAY_CONFIG_INTERNAL_H

#include "assay/config.h"

#define CONFIG_MAX_BYTES (1 << 20)

/* The project's two files, in the order they are applied. */
#define CONFIG_PROJECT_DIR_FILE ".assay/config.json"
#define CONFIG_PROJECT_MANIFEST "assay.json"

/* Apply one key of a file layer; file names relative to base_dir. */
int config_apply_key(struct config *c, const cJSON *v, const char *origin,
                     const char *base_dir, char **err);
/* A relative path of a file layer, made relative to base_dir. */
char *config_resolve_src(const char *src, const char *base_dir);
/* Whether key is one project content may never set (base_url,
 * api_key_env, opensandbox: they decide where an API key is sent). */
int config_user_only(const char *key);
/* Every key of obj (a layer's top object) but "$schema" and "//",
 * with the keys a project file may not set refused. */
int config_check_key(const cJSON *v, const char *origin, int project,
                     char **err);

/* The project layer: both project files, under the trust rule. */
int config_load_project(struct config *c, char **err);

#endif
