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
/* A number as an integer, saturated (json_long to +-2^53, json_int to
 * int's range), NaN as def: numbers from outside never overflow a cast.
 * json_num_long is the same for a number already in hand. */
long json_long(const cJSON *obj, const char *key, long def);
int json_int(const cJSON *obj, const char *key, int def);
long json_num_long(double v, long def);
int json_bool(const cJSON *obj, const char *key, int def);
/* Compact print; caller frees. Never NULL. */
char *json_print(const cJSON *item);

#endif
