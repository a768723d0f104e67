/* json.c: cJSON helpers: JSON with comments and trailing commas,
 * typed getters with defaults, compact printing. */
#include "assay/json.h"
#include "assay/util.h"
#include "assay/buf.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Drop a comma that only whitespace separates from } or ]. */
static char *strip_trailing_commas(const char *s)
{
	struct buf out;
	buf_init(&out, 0);
	buf_append(&out, "", 0);
	int in_str = 0;
	for (const char *p = s; *p; p++) {
		if (in_str) {
			if (*p == '\\' && p[1])
				buf_append(&out, p++, 1);
			else if (*p == '"')
				in_str = 0;
		} else if (*p == '"') {
			in_str = 1;
		} else if (*p == ',') {
			const char *q = p + 1;
			while (*q == ' ' || *q == '\t' || *q == '\n' ||
			       *q == '\r')
				q++;
			if (*q == '}' || *q == ']')
				continue;
		}
		buf_append(&out, p, 1);
	}
	return buf_detach(&out);
}

char *json_strip_comments(const char *s)
{
	struct buf out;
	buf_init(&out, 0);
	buf_append(&out, "", 0);
	int in_str = 0;
	for (const char *p = s; *p; p++) {
		if (in_str) {
			buf_append(&out, p, 1);
			if (*p == '\\' && p[1])
				buf_append(&out, ++p, 1);
			else if (*p == '"')
				in_str = 0;
			continue;
		}
		if (*p == '"') {
			in_str = 1;
			buf_append(&out, p, 1);
		} else if (p[0] == '/' && p[1] == '/') {
			while (p[1] && p[1] != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			/* keep newlines so error line numbers stay right */
			for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
				if (*p == '\n')
					buf_append(&out, "\n", 1);
			if (!*p)
				break;
			p++;
		} else {
			buf_append(&out, p, 1);
		}
	}
	char *nocomments = buf_detach(&out);
	char *clean = strip_trailing_commas(nocomments);
	free(nocomments);
	return clean;
}

cJSON *json_parse_relaxed(const char *text, const char *name, char **err)
{
	char *clean = json_strip_comments(text);
	const char *end = NULL;
	cJSON *j = cJSON_ParseWithOpts(clean, &end, 1);
	if (!j) {
		int line = 1;
		const char *at = end ? end : clean;
		if (!end) {
			const char *e = cJSON_GetErrorPtr();
			if (e && e >= clean && e <= clean + strlen(clean))
				at = e;
		}
		for (const char *p = clean; p < at && *p; p++)
			line += *p == '\n';
		set_err(err, "%s: invalid JSON near line %d", name, line);
	}
	free(clean);
	return j;
}

cJSON *json_parse_file(const char *path, size_t max, char **err)
{
	char *text = read_file_max(path, max, NULL, err);
	if (!text)
		return NULL;
	cJSON *j = json_parse_relaxed(text, path, err);
	free(text);
	return j;
}

const char *json_str(const cJSON *obj, const char *key, const char *def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : def;
}

double json_num(const cJSON *obj, const char *key, double def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNumber(v) ? v->valuedouble : def;
}

long json_num_long(double v, long def)
{
	const double lim = 9007199254740992.0; /* 2^53 */
	if (v != v)
		return def;
	if (v > lim)
		return (long)lim;
	if (v < -lim)
		return -(long)lim;
	return (long)v;
}

long json_long(const cJSON *obj, const char *key, long def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNumber(v) ? json_num_long(v->valuedouble, def) : def;
}

int json_int(const cJSON *obj, const char *key, int def)
{
	long v = json_long(obj, key, def);
	return v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : (int)v;
}

int json_bool(const cJSON *obj, const char *key, int def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v);
	return def;
}

char *json_print(const cJSON *item)
{
	char *s = item ? cJSON_PrintUnformatted(item) : NULL;
	return s ? s : xstrdup("null");
}
