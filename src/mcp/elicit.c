/* elicit.c: what an answer to elicitation/create must be (protocols.md
 * G; the spec's restricted schemas): a flat object of strings (length,
 * format, enum or oneOf), numbers and integers (bounds), booleans and
 * arrays of enum strings (multi-select). Schemas are JSON, not events. */
#include "assay/mcp.h"
#include "assay/json.h"
#include "assay/util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The characters (code points) of a UTF-8 string. */
static size_t chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* The values a single or multi select allows: enum, or oneOf/anyOf's
 * consts; NULL when the property is not one. */
static cJSON *choices(const cJSON *p)
{
	const cJSON *e = cJSON_GetObjectItem(p, "enum");
	if (cJSON_IsArray(e))
		return cJSON_Duplicate(e, 1);
	const cJSON *of = cJSON_GetObjectItem(p, "oneOf");
	if (!cJSON_IsArray(of))
		of = cJSON_GetObjectItem(p, "anyOf");
	if (!cJSON_IsArray(of))
		return NULL;
	cJSON *out = cJSON_CreateArray();
	const cJSON *o;
	cJSON_ArrayForEach(o, of)
	{
		const cJSON *c = cJSON_GetObjectItem(o, "const");
		if (!c) { /* not a list of choices: a schema we do not read */
			cJSON_Delete(out);
			return NULL;
		}
		cJSON_AddItemToArray(out, cJSON_Duplicate(c, 1));
	}
	return out;
}

cJSON *mcp_elicit_choices(const cJSON *prop)
{
	if (!strcmp(json_str(prop, "type", ""), "array"))
		return choices(cJSON_GetObjectItem(prop, "items"));
	return choices(prop);
}

/* Whether v is among the choices. */
static int chosen(const cJSON *choice, const cJSON *v)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, choice) if (cJSON_Compare(c, v, 1)) return 1;
	return 0;
}

/* Whether s looks like the format says (a check for typos, not a
 * parser: the server checks again). */
static int format_ok(const char *format, const char *s)
{
	if (!strcmp(format, "email")) {
		const char *at = strchr(s, '@');
		return at && at > s && strchr(at + 1, '.') && !strchr(s, ' ');
	}
	if (!strcmp(format, "uri")) {
		const char *colon = strchr(s, ':');
		return colon && colon > s && isalpha((unsigned char)s[0]);
	}
	if (!strcmp(format, "date") || !strcmp(format, "date-time")) {
		int y, mo, d;
		char rest;
		int n = sscanf(s, "%4d-%2d-%2d%c", &y, &mo, &d, &rest);
		if (n < 3 || mo < 1 || mo > 12 || d < 1 || d > 31 ||
		    strlen(s) < 10)
			return 0;
		return !strcmp(format, "date") ? s[10] == '\0'
		                               : s[10] == 'T' || s[10] == ' ';
	}
	return 1; /* a format we do not know: the server's to check */
}

/* One string value against its property; NULL or why not. */
static char *check_string(const char *name, const cJSON *p, const char *s)
{
	cJSON *choice = choices(p);
	cJSON *v = cJSON_CreateString(s);
	int in = !choice || chosen(choice, v);
	cJSON_Delete(v);
	cJSON_Delete(choice);
	if (!in)
		return xasprintf("%s: \"%.80s\" is not one of the choices",
		                 name, s);
	size_t n = chars(s);
	double min = json_num(p, "minLength", -1),
	       max = json_num(p, "maxLength", -1);
	if (min >= 0 && (double)n < min)
		return xasprintf("%s: at least %.0f characters", name, min);
	if (max >= 0 && (double)n > max)
		return xasprintf("%s: at most %.0f characters", name, max);
	const char *format = json_str(p, "format", NULL);
	if (format && !format_ok(format, s))
		return xasprintf("%s: not a valid %s", name, format);
	return NULL;
}

/* One value against its property (name: its title, else its name);
 * NULL or why not. */
static char *check_value(const char *name, const cJSON *p, const cJSON *v)
{
	const char *type = json_str(p, "type", "string");
	if (!strcmp(type, "string"))
		return cJSON_IsString(v) ? check_string(name, p, v->valuestring)
		                         : xasprintf("%s: text expected", name);
	if (!strcmp(type, "boolean"))
		return cJSON_IsBool(v)
		           ? NULL
		           : xasprintf("%s: yes or no expected", name);
	if (!strcmp(type, "number") || !strcmp(type, "integer")) {
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
			return xasprintf("%s: a number expected", name);
		double d = v->valuedouble;
		if (!strcmp(type, "integer") && d != floor(d))
			return xasprintf("%s: a whole number expected", name);
		const cJSON *lo = cJSON_GetObjectItem(p, "minimum"),
		            *hi = cJSON_GetObjectItem(p, "maximum");
		if (cJSON_IsNumber(lo) && d < lo->valuedouble)
			return xasprintf("%s: at least %g", name,
			                 lo->valuedouble);
		if (cJSON_IsNumber(hi) && d > hi->valuedouble)
			return xasprintf("%s: at most %g", name,
			                 hi->valuedouble);
		return NULL;
	}
	if (!strcmp(type, "array")) {
		if (!cJSON_IsArray(v))
			return xasprintf("%s: a list expected", name);
		cJSON *choice = mcp_elicit_choices(p);
		const cJSON *it;
		char *why = NULL;
		cJSON_ArrayForEach(it, v) if (!why && choice &&
		                              !chosen(choice, it)) why =
		    xasprintf("%s: a value that is not one of the choices",
		              name);
		cJSON_Delete(choice);
		int n = cJSON_GetArraySize(v);
		double min = json_num(p, "minItems", -1),
		       max = json_num(p, "maxItems", -1);
		if (!why && min >= 0 && n < min)
			why = xasprintf("%s: choose at least %.0f", name, min);
		if (!why && max >= 0 && n > max)
			why = xasprintf("%s: choose at most %.0f", name, max);
		return why;
	}
	return xasprintf("%s: a type (%s) an answer cannot have", name, type);
}

int mcp_elicit_check(const cJSON *schema, const cJSON *content, char **why)
{
	*why = NULL;
	const cJSON *props = cJSON_GetObjectItem(schema, "properties");
	if (!cJSON_IsObject(content)) {
		*why = xstrdup("the answer is not an object");
		return -1;
	}
	const cJSON *v;
	cJSON_ArrayForEach(v, content)
	{
		const cJSON *p =
		    cJSON_GetObjectItemCaseSensitive(props, v->string);
		if (!p) {
			*why = xasprintf("%s: not a field it asked for",
			                 v->string);
			return -1;
		}
		if ((*why = check_value(json_str(p, "title", v->string), p, v)))
			return -1;
	}
	const cJSON *r;
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(schema, "required"))
	{
		if (cJSON_IsString(r) && !cJSON_GetObjectItemCaseSensitive(
		                             content, r->valuestring)) {
			*why =
			    xasprintf("%s: required",
			              json_str(cJSON_GetObjectItemCaseSensitive(
			                           props, r->valuestring),
			                       "title", r->valuestring));
			return -1;
		}
	}
	return 0;
}
