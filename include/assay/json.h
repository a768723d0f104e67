/* json.h: small helpers over cJSON: typed getters with defaults, JSON
 * with comments, compact printing. */
#ifndef ASSAY_JSON_H
#define ASSAY_JSON_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* Strip // and block comments (outside strings) and trailing commas
 * before } or ]; returns a fresh string. */
char *json_strip_comments(const char *text);
/* Parse text that may contain comments; NULL + *err (with line) on
 * failure. name is used in the message. */
cJSON *json_parse_relaxed(const char *text, const char *name, char **err);
/* Read and parse a file (comments allowed) of at most max bytes. */
cJSON *json_parse_file(const char *path, size_t max, char **err);

const char *json_str(const cJSON *obj, const char *key, const char *def);
double json_num(const cJSON *obj, const char *key, double def);
int json_bool(const cJSON *obj, const char *key, int def);
/* Compact print; caller frees. Never NULL. */
char *json_print(const cJSON *item);

#endif
