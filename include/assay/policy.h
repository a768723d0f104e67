/* policy.h: which tool calls may run without asking. A call is
 * classified (a shell command is parsed into its simple commands, each
 * checked; python code and file writes are inspected), every finding
 * is a reason in words, the rules of the configuration and the session
 * are applied (deny > ask > allow; a compound command is allowed by
 * rules only if every part is) and the ask mode decides the rest. */
#ifndef ASSAY_POLICY_H
#define ASSAY_POLICY_H

#include <stddef.h>
#include <cjson/cJSON.h>

struct config;
struct policy;

enum policy_action { POLICY_ALLOW, POLICY_ASK, POLICY_DENY };

/* --ask all|risky|none */
enum policy_mode { POLICY_MODE_ALL, POLICY_MODE_RISKY, POLICY_MODE_NONE };

/* What a reason is about; policy_kind_name() gives the word used in
 * events and in the "never_save" configuration key. */
enum policy_kind {
	POLICY_NETWORK,     /* "network" */
	POLICY_DELETION,    /* "deletion": deletes or overwrites data */
	POLICY_PRIVILEGE,   /* "privilege" */
	POLICY_OUTSIDE,     /* "outside": paths outside the workspace */
	POLICY_PROCESS,     /* "process": kills processes */
	POLICY_PERSISTENCE, /* "persistence": cron, shell rc files */
	POLICY_HIDDEN,      /* "hidden": what runs is not visible */
	POLICY_EXEC,        /* "exec": python code starting commands */
	POLICY_UNPARSED,    /* "unparsed": the command could not be read */
	POLICY_NKINDS
};

struct policy_reason {
	enum policy_kind kind;
	char *text; /* in words, starting with the kind's label */
};

/* One simple command of a shell call (the whole call for other
 * tools), as rules see it. */
struct policy_part {
	char *text;   /* canonical form: what a rule's glob must match */
	char **forms; /* more forms deny and ask rules also match (the
	                 command run by env/xargs/find -exec, /bin/rm as
	                 rm, inline shell code) */
	size_t nforms;
	struct policy_reason *reasons;
	size_t nreasons;
	const cJSON *rule; /* the strongest rule matching it, or NULL
	                      (owned by the policy) */
	enum policy_action rule_action;
};

struct policy_verdict {
	enum policy_action action;
	const char *by;    /* "mode" or "rule" */
	char *tool;        /* shell, python, write_file... */
	char *subject;     /* the command, the code or the path */
	char *parse_error; /* why a shell command could not be parsed */
	struct policy_reason *reasons; /* every part's, without repeats */
	size_t nreasons;
	struct policy_part *parts;
	size_t nparts;
	cJSON *rule;   /* the rule that decided (by "rule"), else NULL */
	cJSON *save;   /* the exact rules "always" would save (array) */
	char *no_save; /* why "always" is not offered, or NULL */
};

/* From cfg: ask mode, rules (validated: {"match", "action"[, "tool"]}),
 * never_save (kinds whose calls are never saved as "always" rules;
 * default deletion, network, hidden) and the staged inputs. */
struct policy *policy_new(const struct config *cfg, char **err);
void policy_free(struct policy *p);
enum policy_mode policy_mode(const struct policy *p);

/* How the policy learns whether a workspace file exists (to tell an
 * overwrite from a new file). rel is workspace-relative. */
void policy_set_exists(struct policy *p,
                       int (*exists)(void *arg, const char *rel), void *arg);

/* Classify one call and decide. Never NULL. */
struct policy_verdict *policy_check(struct policy *p, const char *tool,
                                    const cJSON *args);
void policy_verdict_free(struct policy_verdict *v);

/* Add a rule for the rest of the session (a copy is kept). */
int policy_add_rule(struct policy *p, const cJSON *rule, char **err);
/* Append rules to the "rules" of a JSON config file (created if
 * missing; other keys kept; written atomically). Rules already there
 * are not repeated. */
int policy_save_rules(const char *path, const cJSON *rules, char **err);

/* Rule globs: * any text (slashes and newlines too), ? one character,
 * [...] a class, \x the character x; the whole text must match. */
int policy_glob(const char *pattern, const char *text);
/* A glob matching exactly s. Caller frees. */
char *policy_glob_escape(const char *s);

const char *policy_kind_name(enum policy_kind k);
const char *policy_action_name(enum policy_action a);

#endif
