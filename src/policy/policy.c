/* policy.c: the decision for one tool call. The call is classified into
 * parts with reasons, each part is matched against the rules (deny >
 * ask > allow), and the mode decides what rules leave open. For a call
 * that is asked, the exact rules "always" would save are computed
 * here, so what the user is shown is what gets saved. */
#include "internal.h"

#include "assay/config.h"
#include "assay/json.h"
#include "assay/path.h"
#include "assay/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const KIND_NAMES[POLICY_NKINDS] = {
    [POLICY_NETWORK] = "network",     [POLICY_DELETION] = "deletion",
    [POLICY_PRIVILEGE] = "privilege", [POLICY_OUTSIDE] = "outside",
    [POLICY_PROCESS] = "process",     [POLICY_PERSISTENCE] = "persistence",
    [POLICY_HIDDEN] = "hidden",       [POLICY_EXEC] = "exec",
    [POLICY_UNPARSED] = "unparsed",
};

const char *policy_kind_name(enum policy_kind k)
{
	return k < POLICY_NKINDS ? KIND_NAMES[k] : "?";
}

const char *policy_action_name(enum policy_action a)
{
	return a == POLICY_ALLOW ? "allow" : a == POLICY_ASK ? "ask" : "deny";
}

/* A rule's action as an enum policy_action (allow when unknown). */
static int policy_rule_action(const cJSON *rule)
{
	const char *a = json_str(rule, "action", "");
	return !strcmp(a, "deny")  ? POLICY_DENY
	       : !strcmp(a, "ask") ? POLICY_ASK
	                           : POLICY_ALLOW;
}

/* The never_save kinds of the configuration (a default when absent). */
static int policy_parse_never_save(struct policy *p, const cJSON *arr,
                                   char **err)
{
	if (!arr) {
		p->never_save = 1u << POLICY_DELETION | 1u << POLICY_NETWORK |
		                1u << POLICY_HIDDEN;
		return 0;
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		int k = 0;
		while (k < POLICY_NKINDS &&
		       strcmp(KIND_NAMES[k],
		              it->valuestring ? it->valuestring : ""))
			k++;
		if (k == POLICY_NKINDS)
			return set_err(err,
			               "never_save: unknown reason kind \"%s\" "
			               "(known: network, deletion, privilege, "
			               "outside, process, persistence, hidden, "
			               "exec)",
			               it->valuestring ? it->valuestring : "");
		p->never_save |= 1u << k;
	}
	return 0;
}

struct policy *policy_new(const struct config *cfg, char **err)
{
	struct policy *p = xcalloc(1, sizeof *p);
	const char *ask = cfg->ask ? cfg->ask : "risky";
	if (!strcmp(ask, "all"))
		p->mode = POLICY_MODE_ALL;
	else if (!strcmp(ask, "none"))
		p->mode = POLICY_MODE_NONE;
	else if (!strcmp(ask, "risky"))
		p->mode = POLICY_MODE_RISKY;
	else {
		set_err(err, "ask must be all, risky or none (got '%s')", ask);
		goto fail;
	}
	p->rules =
	    cfg->rules ? cJSON_Duplicate(cfg->rules, 1) : cJSON_CreateArray();
	p->session_rules = cJSON_CreateArray();
	int i = 0;
	const cJSON *r;
	cJSON_ArrayForEach(r, p->rules)
	{
		if (policy_rule_check(r, i++, err) < 0)
			goto fail;
	}
	if (policy_parse_never_save(p, cfg->never_save, err) < 0)
		goto fail;
	p->never_save |= 1u << POLICY_UNPARSED;
	p->inputs = xcalloc(cfg->n_inputs + 1, sizeof *p->inputs);
	for (size_t k = 0; k < cfg->n_inputs; k++) {
		char *rel = NULL;
		if (path_normalize(cfg->inputs[k].dest, &rel, NULL) == 0)
			p->inputs[p->ninputs++] = rel;
	}
	return p;
fail:
	policy_free(p);
	return NULL;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	cJSON_Delete(p->rules);
	cJSON_Delete(p->session_rules);
	for (size_t k = 0; k < p->ninputs; k++)
		free(p->inputs[k]);
	free(p->inputs);
	free(p);
}

enum policy_mode policy_mode(const struct policy *p)
{
	return p->mode;
}

void policy_set_exists(struct policy *p,
                       int (*exists)(void *arg, const char *rel), void *arg)
{
	p->exists = exists;
	p->exists_arg = arg;
}

int policy_add_rule(struct policy *p, const cJSON *rule, char **err)
{
	if (policy_rule_check(rule, cJSON_GetArraySize(p->session_rules), err) <
	    0)
		return -1;
	const cJSON *r;
	cJSON_ArrayForEach(r, p->session_rules)
	{
		if (cJSON_Compare(r, rule, 1))
			return 0;
	}
	cJSON_AddItemToArray(p->session_rules, cJSON_Duplicate(rule, 1));
	return 0;
}

/* --- classification of the call ---------------------------------- */

/* The call as one part of text, taking over r. */
static void policy_one_part(struct policy_verdict *v, const char *text,
                            struct reasons *r)
{
	v->parts = xcalloc(1, sizeof *v->parts);
	v->nparts = 1;
	v->parts[0].text = xstrdup(text);
	v->parts[0].reasons = r->v;
	v->parts[0].nreasons = r->n;
	memset(r, 0, sizeof *r);
}

/* An MCP call ({server, tool, arguments, [annotations]}): one part,
 * "SERVER/TOOL", which allow rules match; deny and ask rules also match
 * "SERVER/TOOL ARGUMENTS" (the arguments as compact JSON). It always has
 * a reason: the tool runs outside the sandbox, whatever the server's
 * hints say (shown, never trusted). */
static void policy_classify_mcp(struct policy_verdict *v, const cJSON *args)
{
	struct reasons r = {0};
	const char *server = json_str(args, "server", "");
	const char *tool = json_str(args, "tool", "");
	char *json = json_print(cJSON_GetObjectItem(args, "arguments"));
	const cJSON *a = cJSON_GetObjectItem(args, "annotations");
	const char *hint = json_bool(a, "readOnlyHint", 0)      ? "read-only"
	                   : json_bool(a, "destructiveHint", 0) ? "destructive"
	                                                        : NULL;
	char *part = xasprintf("%s/%s", server, tool);
	v->subject = xasprintf("%s %s", part, json);
	reasons_add(&r, POLICY_OUTSIDE,
	            "%s is a tool of the MCP server %s, which runs outside "
	            "the sandbox%s%s%s",
	            tool, server, hint ? " (the server says: " : "",
	            hint ? hint : "", hint ? ")" : "");
	policy_one_part(v, part, &r);
	v->parts[0].forms = xcalloc(1, sizeof *v->parts[0].forms);
	v->parts[0].forms[0] = xstrdup(v->subject);
	v->parts[0].nforms = 1;
	free(part);
	free(json);
}

/* The parts of a call and their reasons: a shell command line, python
 * code, an MCP call, or a file path. */
static void policy_classify_call(struct policy *p, struct policy_verdict *v,
                                 const cJSON *args)
{
	const char *tool = v->tool;
	struct reasons r = {0};
	if (!strcmp(tool, "mcp")) {
		policy_classify_mcp(v, args);
		return;
	}
	if (!strcmp(tool, "shell")) {
		const char *cmd = json_str(args, "command", NULL);
		v->subject = xstrdup(cmd ? cmd : "");
		if (cmd)
			policy_shell_parts(p, cmd, &v->parts, &v->nparts,
			                   &v->parse_error);
		return;
	}
	if (!strcmp(tool, "python")) {
		const char *code = json_str(args, "code", NULL);
		v->subject = xstrdup(code ? code : "");
		struct strv forms = {0};
		struct cls c = {.pol = p, .r = &r, .forms = &forms};
		if (code)
			policy_classify_python(&c, code, "the python code");
		policy_one_part(v, v->subject, &r);
		v->parts[0].forms = forms.v;
		v->parts[0].nforms = forms.n;
		return;
	}
	const char *path = json_str(args, "path", NULL);
	char *rel = NULL;
	v->subject = xstrdup(path ? path : "");
	if (path && path_normalize(path, &rel, NULL) == 0) {
		const char *in = policy_input_of(p, rel);
		if (in && !strcmp(tool, "write_file"))
			reasons_add(&r, POLICY_DELETION,
			            "write_file overwrites the staged input %s "
			            "(your data)",
			            rel);
	}
	policy_one_part(v, rel ? rel : v->subject, &r);
	free(rel);
}

/* --- rules ------------------------------------------------------- */

/* Whether a rule is for tool (shell when it names none, "*" for all). */
static int policy_rule_applies(const cJSON *rule, const char *tool)
{
	const char *t = json_str(rule, "tool", "shell");
	return !strcmp(t, "*") || !strcmp(t, tool);
}

/* Whether a rule's glob matches a part (deny and ask rules: any of its
 * forms too). */
static int policy_rule_matches(const cJSON *rule,
                               const struct policy_part *part)
{
	const char *glob = json_str(rule, "match", "");
	if (policy_glob(glob, part->text))
		return 1;
	/* deny and ask rules also see what a wrapper or inline code runs */
	if (policy_rule_action(rule) == POLICY_ALLOW)
		return 0;
	for (size_t k = 0; k < part->nforms; k++)
		if (policy_glob(glob, part->forms[k]))
			return 1;
	return 0;
}

/* The strongest of rules that matches part becomes its rule. */
static void policy_match_rules(const cJSON *rules, const char *tool,
                               struct policy_part *part)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, rules)
	{
		if (!policy_rule_applies(r, tool) ||
		    !policy_rule_matches(r, part))
			continue;
		int a = policy_rule_action(r);
		if (!part->rule || a > (int)part->rule_action) {
			part->rule = r;
			part->rule_action = (enum policy_action)a;
		}
	}
}

/* --- the decision ------------------------------------------------ */

/* Every part's reasons once, and the parse error as one, into v. */
static void policy_collect_reasons(struct policy_verdict *v)
{
	struct reasons all = {0};
	for (size_t k = 0; k < v->nparts; k++)
		for (size_t j = 0; j < v->parts[k].nreasons; j++) {
			const char *t = v->parts[k].reasons[j].text;
			const char *colon = strchr(t, ':');
			reasons_add(&all, v->parts[k].reasons[j].kind, "%s",
			            colon ? colon + 2 : t);
		}
	if (v->parse_error) {
		char *s = policy_snip(v->parse_error, 100);
		reasons_add(&all, POLICY_UNPARSED,
		            "the command could not be parsed (%s), so what it "
		            "runs is not known",
		            s);
		free(s);
	}
	v->reasons = all.v;
	v->nreasons = all.n;
}

/* Whether a part keeps the call asked unless a rule allows it. */
static int policy_needs_rule(const struct policy *p,
                             const struct policy_part *part)
{
	if (part->rule && part->rule_action == POLICY_ALLOW)
		return 0;
	return p->mode == POLICY_MODE_ALL || part->nreasons > 0;
}

/* The names of the kinds in a bit set, comma-separated, into out. */
static void policy_kinds_text(unsigned kinds, char *out, size_t max)
{
	out[0] = '\0';
	for (int k = 0; k < POLICY_NKINDS; k++) {
		if (!(kinds & (1u << k)))
			continue;
		size_t len = strlen(out);
		snprintf(out + len, max - len, "%s%s", len ? ", " : "",
		         KIND_NAMES[k]);
	}
}

/* The rules "always" would save, or why there are none. */
static void policy_plan_save(const struct policy *p, struct policy_verdict *v,
                             const cJSON *ask_rule)
{
	if (v->parse_error) {
		v->no_save = xstrdup("the command could not be parsed, so no "
		                     "rule can be sure to match only it");
		return;
	}
	if (ask_rule) {
		v->no_save = xasprintf("the rule \"%s\" asks for this every "
		                       "time",
		                       json_str(ask_rule, "match", ""));
		return;
	}
	unsigned kinds = 0;
	cJSON *save = cJSON_CreateArray();
	for (size_t k = 0; k < v->nparts; k++) {
		const struct policy_part *part = &v->parts[k];
		if (!policy_needs_rule(p, part))
			continue;
		for (size_t j = 0; j < part->nreasons; j++)
			kinds |= 1u << part->reasons[j].kind;
		cJSON *r = cJSON_CreateObject();
		char *glob = policy_glob_escape(part->text);
		cJSON_AddStringToObject(r, "match", glob);
		free(glob);
		cJSON_AddStringToObject(r, "action", "allow");
		if (strcmp(v->tool, "shell"))
			cJSON_AddStringToObject(r, "tool", v->tool);
		cJSON_AddItemToArray(save, r);
	}
	char names[200];
	policy_kinds_text(kinds & p->never_save, names, sizeof names);
	if (!cJSON_GetArraySize(save))
		v->no_save = xstrdup("there is nothing to save a rule for");
	else if (*names)
		v->no_save =
		    xasprintf("calls with reasons of kind %s are never "
		              "saved as rules (the never_save "
		              "setting)",
		              names);
	if (v->no_save)
		cJSON_Delete(save);
	else
		v->save = save;
}

/* The action from the parts' rules, reasons and the mode (deny > ask >
 * allow), and what "always" would save. */
static void policy_decide(struct policy *p, struct policy_verdict *v)
{
	const cJSON *deny = NULL, *ask = NULL, *excused = NULL;
	int all_allowed = v->nparts > 0 && !v->parse_error;
	int risky = 0;
	for (size_t k = 0; k < v->nparts; k++) {
		const struct policy_part *part = &v->parts[k];
		if (part->rule && part->rule_action == POLICY_DENY && !deny)
			deny = part->rule;
		if (part->rule && part->rule_action == POLICY_ASK && !ask)
			ask = part->rule;
		if (!part->rule || part->rule_action != POLICY_ALLOW)
			all_allowed = 0;
		else if (part->nreasons && !excused)
			excused = part->rule; /* a rule let a reason pass */
		if (policy_needs_rule(p, part) && part->nreasons)
			risky = 1;
	}
	v->by = "mode";
	if (deny) {
		v->action = POLICY_DENY;
		v->by = "rule";
		v->rule = cJSON_Duplicate(deny, 1);
		return;
	}
	if (p->mode == POLICY_MODE_NONE) {
		v->action = POLICY_ALLOW;
		return;
	}
	if (ask) {
		v->action = POLICY_ASK;
		v->by = "rule";
		v->rule = cJSON_Duplicate(ask, 1);
	} else if (all_allowed) {
		v->action = POLICY_ALLOW;
		v->by = "rule";
		v->rule = cJSON_Duplicate(v->parts[0].rule, 1);
		return;
	} else if (v->parse_error || p->mode == POLICY_MODE_ALL || risky) {
		v->action = POLICY_ASK;
	} else {
		v->action = POLICY_ALLOW;
		if (excused) {
			v->by = "rule";
			v->rule = cJSON_Duplicate(excused, 1);
		}
		return;
	}
	policy_plan_save(p, v, ask);
}

struct policy_verdict *policy_check(struct policy *p, const char *tool,
                                    const cJSON *args)
{
	struct policy_verdict *v = xcalloc(1, sizeof *v);
	v->tool = xstrdup(tool ? tool : "");
	policy_classify_call(p, v, args);
	for (size_t k = 0; k < v->nparts; k++) {
		policy_match_rules(p->rules, v->tool, &v->parts[k]);
		policy_match_rules(p->session_rules, v->tool, &v->parts[k]);
	}
	policy_collect_reasons(v);
	policy_decide(p, v);
	return v;
}

void policy_verdict_free(struct policy_verdict *v)
{
	if (!v)
		return;
	for (size_t k = 0; k < v->nparts; k++) {
		struct policy_part *part = &v->parts[k];
		free(part->text);
		for (size_t j = 0; j < part->nforms; j++)
			free(part->forms[j]);
		free(part->forms);
		for (size_t j = 0; j < part->nreasons; j++)
			free(part->reasons[j].text);
		free(part->reasons);
	}
	free(v->parts);
	for (size_t k = 0; k < v->nreasons; k++)
		free(v->reasons[k].text);
	free(v->reasons);
	free(v->tool);
	free(v->subject);
	free(v->parse_error);
	cJSON_Delete(v->rule);
	cJSON_Delete(v->save);
	free(v->no_save);
	free(v);
}
