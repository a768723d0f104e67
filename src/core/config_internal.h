/* config_internal.h: what config.c and project.c (the project layer
 * and its trust rule) share. Not for other layers. */
#ifndef ASSAY_CONFIG_INTERNAL_H
#define ASSAY_CONFIG_INTERNAL_H

#include "assay/config.h"

#define CONFIG_MAX_BYTES (1 << 20)

/* The project's two files, in the order they are applied. */
#define CONFIG_PROJECT_DIR_FILE ".assay/config.json"
#define CONFIG_PROJECT_MANIFEST "assay.json"

/* Apply one key of a file layer by its row (config_keys.c); file
 * names relative to base_dir. Unknown keys are an error. */
int config_apply_key(struct config *c, const cJSON *v, const char *origin,
                     const char *base_dir, char **err);
/* A relative path of a file layer, made relative to base_dir. */
char *config_resolve_src(const char *src, const char *base_dir);
/* 1 for a key read past ("$schema", "//"); -1 and *err for one a
 * project file may not set when project (its row's .by, config_keys.h),
 * else 0. */
int config_check_key(const cJSON *v, const char *origin, int project,
                     char **err);

/* The project layer: both project files, under the trust rule. */
int config_load_project(struct config *c, char **err);

#endif
