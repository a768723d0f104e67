/* export_safe.c: which calls of a run a notebook or script may replay
 * on a host, where no sandbox stands between the code and the user's
 * files and network. A call is left out when it was denied, failed or
 * never ran, and when the policy's classifier (the one that decides
 * approvals, src/policy/) finds a reason to ask about it: deletes,
 * network, paths outside the workspace, installs, hidden code. An
 * approval in the run does not count: it was given for a sandbox. A
 * file of code the run wrote is classified as code, and the calls that
 * name a file left out for that are left out too. */
#include "export_nb.h"

#include "assay/config.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/path.h"
#include "assay/policy.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

/* A policy like the run's as the classifier sees it: the staged inputs
 * (their overwrites are reasons), no rules (a rule the user saved
 * allowed a call in a sandbox, not here). */
static struct policy *safe_policy(const cJSON *inputs, char **err)
{
	struct config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.inputs =
	    xcalloc((size_t)cJSON_GetArraySize(inputs) + 1, sizeof *cfg.inputs);
	const cJSON *in;
	cJSON_ArrayForEach(in, inputs)
	{
		const char *dest = cJSON_IsString(in)
		                       ? in->valuestring
		                       : ev_str(in, EVF_DEST, NULL);
		if (dest)
			cfg.inputs[cfg.n_inputs++].dest = (char *)dest;
	}
	struct policy *p = policy_new(&cfg, err);
	free(cfg.inputs);
	return p;
}

/* The classifier's reasons for tool with args, joined by "; ", or
 * NULL when it finds none. */
static char *safe_reasons(struct policy *p, const char *tool, const cJSON *args)
{
	struct policy_verdict *v = policy_check(p, tool, args);
	char *out = NULL;
	if (v->nreasons) {
		struct buf b;
		buf_init(&b, 0);
		for (size_t k = 0; k < v->nreasons; k++) {
			if (k)
				buf_puts(&b, "; ");
			buf_puts(&b, v->reasons[k].text);
		}
		out = buf_detach(&b);
	}
	policy_verdict_free(v);
	return out;
}

/* The reasons of code in a language: "python" or "shell". */
static char *safe_code_reasons(struct policy *p, const char *lang,
                               const char *code)
{
	cJSON *args = cJSON_CreateObject();
	cJSON_AddStringToObject(
	    args, !strcmp(lang, "shell") ? "command" : "code", code);
	char *r = safe_reasons(p, lang, args);
	cJSON_Delete(args);
	return r;
}

/* The language of a file of code by its name or its #! line (text
 * NULL: by its name alone), or NULL for data. */
static const char *safe_code_lang(const char *path, const char *text)
{
	size_t n = strlen(path);
	if (n > 3 && !strcmp(path + n - 3, ".py"))
		return "python";
	if ((n > 3 && !strcmp(path + n - 3, ".sh")) ||
	    (n > 5 && !strcmp(path + n - 5, ".bash")))
		return "shell";
	if (!text || strncmp(text, "#!", 2))
		return NULL;
	size_t line = strcspn(text, "\n");
	char *first = xstrndup(text, line);
	const char *lang = strstr(first, "python") ? "python"
	                   : strstr(first, "sh")   ? "shell"
	                                           : NULL;
	free(first);
	return lang;
}

/* Why a write_file may not be replayed (NULL: it may); sets c->rel,
 * and *code when what it writes is code with reasons. */
static char *safe_write(struct policy *p, struct nb_cell *c, int *code)
{
	char *rel = NULL, *perr = NULL;
	if (path_normalize(c->path, &rel, &perr) < 0) {
		char *why = xasprintf("its path %s is not in the workspace "
		                      "(%s)",
		                      c->path, perr ? perr : "invalid");
		free(perr);
		return why;
	}
	c->rel = rel;
	cJSON *args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "path", c->path);
	cJSON_AddStringToObject(args, "content", c->source);
	char *why = safe_reasons(p, "write_file", args);
	cJSON_Delete(args);
	if (why)
		return why;
	const char *lang = safe_code_lang(rel, c->source);
	char *r = lang ? safe_code_reasons(p, lang, c->source) : NULL;
	if (!r)
		return NULL;
	*code = 1;
	why = xasprintf("it writes %s, %s code the policy would ask about "
	                "before it ran: %s",
	                rel, lang, r);
	free(r);
	return why;
}

/* Why a call may not be replayed on a host, or NULL; *code as
 * safe_write's. */
static char *safe_call(struct policy *p, struct nb_cell *c, int *code)
{
	if (c->denied)
		return xstrdup("denied in the run: it never ran");
	if (!c->ran)
		return xstrdup("it never ran in the run (no result recorded)");
	if (c->failed)
		return xasprintf("it failed in the run (%s)",
		                 c->why ? c->why : "failed");
	if (c->kind == NB_WRITE)
		return safe_write(p, c, code);
	char *r = safe_code_reasons(p, c->kind == NB_SHELL ? "shell" : "python",
	                            c->source);
	if (!r)
		return NULL;
	char *why = xasprintf("the policy would ask before running it: %s", r);
	free(r);
	return why;
}

/* Calls after cell from that name the file path: they would run code
 * the policy did not pass (why says which). */
static void safe_names_file(struct exp_nb *nb, size_t from, const char *path,
                            const char *why)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	for (size_t i = from; i < nb->n; i++) {
		struct nb_cell *c = &nb->cell[i];
		if (c->kind == NB_MARKDOWN || c->skip ||
		    !strstr(c->source, base))
			continue;
		c->skip = xasprintf("it names %s, %s", base, why);
	}
}

/* Files of code a shell or python call made: the policy never read
 * them, so the calls after it that name one are left out. */
static void safe_made_code(struct exp_nb *nb)
{
	for (size_t k = 0; k < nb->made_paths.n; k++) {
		const char *path = nb->made_paths.v[k];
		const char *by = nb->made_by.v[k];
		if (!safe_code_lang(path, NULL))
			continue;
		size_t i = 0;
		while (i < nb->n &&
		       !(nb->cell[i].id && !strcmp(nb->cell[i].id, by)))
			i++;
		char *why = xasprintf("code that %s made, which the policy "
		                      "could not read",
		                      by);
		safe_names_file(nb, i + 1, path, why);
		free(why);
	}
}

void exp_safe_judge(struct exp_nb *nb)
{
	char *err = NULL;
	struct policy *p = safe_policy(nb->inputs, &err);
	for (size_t i = 0; i < nb->n; i++) {
		struct nb_cell *c = &nb->cell[i];
		if (c->kind == NB_MARKDOWN || c->skip)
			continue;
		if (!p) {
			c->skip = xasprintf("the policy to judge it could not "
			                    "be set up (%s)",
			                    err ? err : "?");
			continue;
		}
		int code = 0;
		c->skip = safe_call(p, c, &code);
		if (code) {
			char *why = xasprintf("which %s wrote with code the "
			                      "policy would ask about (left "
			                      "out too)",
			                      c->id);
			safe_names_file(nb, i + 1, c->rel, why);
			free(why);
		}
	}
	if (p)
		safe_made_code(nb);
	policy_free(p);
	free(err);
}
