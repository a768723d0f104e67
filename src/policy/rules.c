/* rules.c: rule globs, checking the rules of a configuration, and
 * saving "always" rules into a project's .assay/config.json. */
#include "internal.h"

#include "assay/json.h"
#include "assay/util.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONFIG_MAX_BYTES (1 << 20)

/* [...] at *pp against ch: 1 or 0, advancing *pp past "]"; -1 when
 * the class is not closed (then "[" is an ordinary character). */
static int rules_glob_class(const char **pp, unsigned char ch)
{
	const char *p = *pp + 1;
	int neg = *p == '!' || *p == '^';
	if (neg)
		p++;
	int hit = 0, first = 1;
	while (*p && (*p != ']' || first)) {
		unsigned char lo = (unsigned char)*p;
		if (*p == '\\' && p[1])
			lo = (unsigned char)*++p;
		unsigned char hi = lo;
		if (p[1] == '-' && p[2] && p[2] != ']') {
			hi = (unsigned char)p[2];
			if (p[2] == '\\' && p[3])
				hi = (unsigned char)p[3], p++;
			p += 2;
		}
		if (ch >= lo && ch <= hi)
			hit = 1;
		p++;
		first = 0;
	}
	if (*p != ']')
		return -1;
	*pp = p + 1;
	return hit != neg;
}

int policy_glob(const char *pat, const char *text)
{
	const char *p = pat, *t = text, *star_p = NULL, *star_t = NULL;
	while (*t) {
		if (*p == '*') {
			while (*p == '*')
				p++;
			if (!*p)
				return 1;
			star_p = p;
			star_t = t;
			continue;
		}
		int m = 0;
		const char *np = p + 1;
		if (*p == '?') {
			m = 1;
		} else if (*p == '[') {
			const char *q = p;
			int r = rules_glob_class(&q, (unsigned char)*t);
			if (r >= 0) {
				m = r;
				np = q;
			} else {
				m = *t == '[';
			}
		} else if (*p == '\\' && p[1]) {
			m = p[1] == *t;
			np = p + 2;
		} else if (*p) {
			m = *p == *t;
		}
		if (m) {
			p = np;
			t++;
			continue;
		}
		if (!star_p)
			return 0;
		p = star_p;
		t = ++star_t;
	}
	while (*p == '*')
		p++;
	return !*p;
}

char *policy_glob_escape(const char *s)
{
	char *out = xmalloc(strlen(s) * 2 + 1), *o = out;
	for (; *s; s++) {
		if (strchr("*?[\\", *s))
			*o++ = '\\';
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

/* "mcp": every MCP server's tool, matched as "SERVER/TOOL" (allow) and
 * "SERVER/TOOL ARGUMENTS" (deny, ask) */
static const char *const TOOLS[] = {"shell",     "python",     "write_file",
                                    "read_file", "list_files", "view_image",
                                    "mcp",       "*",          NULL};

/* A rule is {"match": glob, "action": allow|ask|deny[, "tool": name]};
 * "comment" and "//" keys are notes for people. */
int policy_rule_check(const cJSON *r, int index, char **err)
{
	if (!cJSON_IsObject(r))
		return set_err(err,
		               "rules[%d]: a rule is an object {\"match\": "
		               "\"<glob>\", \"action\": \"allow|ask|deny\"}",
		               index);
	const cJSON *v;
	cJSON_ArrayForEach(v, r)
	{
		const char *k = v->string;
		if (strcmp(k, "match") && strcmp(k, "action") &&
		    strcmp(k, "tool") && strcmp(k, "comment") &&
		    strcmp(k, "//"))
			return set_err(err,
			               "rules[%d]: unknown key \"%s\" (known: "
			               "match, action, tool, comment)",
			               index, k);
	}
	const char *match = json_str(r, "match", NULL);
	if (!match || !*match)
		return set_err(err,
		               "rules[%d]: \"match\" must be a non-empty glob "
		               "on one simple command",
		               index);
	const char *action = json_str(r, "action", "");
	if (strcmp(action, "allow") && strcmp(action, "ask") &&
	    strcmp(action, "deny"))
		return set_err(err,
		               "rules[%d]: \"action\" must be allow, ask or "
		               "deny (got \"%s\")",
		               index, action);
	const cJSON *tool = cJSON_GetObjectItem(r, "tool");
	if (tool) {
		int ok = 0;
		for (int k = 0; TOOLS[k] && cJSON_IsString(tool); k++)
			ok |= !strcmp(tool->valuestring, TOOLS[k]);
		if (!ok)
			return set_err(err,
			               "rules[%d]: \"tool\" must be shell, "
			               "python, write_file, read_file, "
			               "list_files, view_image, mcp or *",
			               index);
	}
	return 0;
}

/* Whether arr already holds a rule equal to rule. */
static int rules_has(const cJSON *arr, const cJSON *rule)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, arr)
	{
		if (cJSON_Compare(r, rule, 1))
			return 1;
	}
	return 0;
}

int policy_save_rules(const char *path, const cJSON *rules, char **err)
{
	cJSON *root = NULL;
	int rc = -1;
	char *text = NULL, *dir = NULL;
	if (access(path, F_OK) == 0) {
		char *why = NULL;
		root = json_parse_file(path, CONFIG_MAX_BYTES, &why);
		if (!root) {
			set_err(err,
			        "cannot add the rule to %s: %s (fix the "
			        "file and try again)",
			        path, why);
			free(why);
			goto out;
		}
		if (!cJSON_IsObject(root)) {
			set_err(err,
			        "cannot add the rule to %s: it is not a "
			        "JSON object",
			        path);
			goto out;
		}
	} else {
		root = cJSON_CreateObject();
		char *tmp = xstrdup(path);
		dir = xstrdup(dirname(tmp));
		free(tmp);
		if (mkdir_p(dir, err) < 0)
			goto out;
	}
	cJSON *arr = cJSON_GetObjectItem(root, "rules");
	if (!arr)
		arr = cJSON_AddArrayToObject(root, "rules");
	if (!cJSON_IsArray(arr)) {
		set_err(err,
		        "cannot add the rule to %s: its \"rules\" is not "
		        "an array",
		        path);
		goto out;
	}
	const cJSON *r;
	cJSON_ArrayForEach(r, rules)
	{
		if (!rules_has(arr, r))
			cJSON_AddItemToArray(arr, cJSON_Duplicate(r, 1));
	}
	char *printed = cJSON_Print(root);
	text = xasprintf("%s\n", printed);
	free(printed);
	rc = write_file_atomic(path, text, strlen(text), err);
out:
	cJSON_Delete(root);
	free(text);
	free(dir);
	return rc;
}
