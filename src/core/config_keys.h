/* config_keys.h: the one table of configuration keys (config_keys.c).
 * Each key has a row: its name, type and range, its default, who may
 * set it, whether and when it loosens security, one line saying what
 * it is, and where in struct config it lands. Applying a layer
 * (config.c), the project and suite trust rule (project.c), `assay help
 * config`, the manual and the doc's table (scripts/doc-config) all read
 * the rows. Private to src/core. */
#ifndef ASSAY_CONFIG_KEYS_H
#define ASSAY_CONFIG_KEYS_H

#include "assay/config.h"

#include <stddef.h>

/* Who may set a key, besides the command line (.flag) and the
 * environment (.env). */
enum {
	CONFIG_BY_USER = 1 << 0,    /* the user's file and --config */
	CONFIG_BY_PROJECT = 1 << 1, /* ./.assay/config.json, ./assay.json */
	CONFIG_BY_SUITE = 1 << 2,   /* an eval suite's defaults and tasks */
};
#define CONFIG_BY_FILES (CONFIG_BY_USER | CONFIG_BY_PROJECT | CONFIG_BY_SUITE)

/* What a value is and how it is stored at .off. */
enum config_type {
	CONFIG_T_IGNORED, /* "$schema", "//": read past */
	CONFIG_T_STRING,  /* char *; .min: the shortest length */
	CONFIG_T_FILE,    /* char *, a file name relative to its layer's file */
	CONFIG_T_BOOL,    /* int, 0 or 1 */
	CONFIG_T_INT,     /* int; numbers are checked against .min, .max */
	CONFIG_T_LONG,    /* long */
	CONFIG_T_SIZE,    /* size_t */
	CONFIG_T_REAL,    /* double */
	CONFIG_T_SHARE,   /* double above .min, at most .max */
	CONFIG_T_ENUM,    /* int: the place of the value in .values */
	CONFIG_T_OBJECT,  /* members: the rows named "KEY.MEMBER" */
	CONFIG_T_NUMBERS, /* an object whose members are numbers >= .min */
	CONFIG_T_CUSTOM,  /* .apply */
};

/* When a value loosens security: a project or suite that is not
 * trusted has it refused (project.c). */
enum config_loose {
	CONFIG_SAFE,          /* never */
	CONFIG_LOOSE_ABOVE,   /* a number above the current one */
	CONFIG_LOOSE_BUDGET,  /* above the current budget, or 0 (none) */
	CONFIG_LOOSE_TRUE,    /* true (.why) */
	CONFIG_LOOSE_ALWAYS,  /* any value (.why) */
	CONFIG_LOOSE_ASK,     /* an ask mode less careful than the current */
	CONFIG_LOOSE_NETWORK, /* true or an allow list while it is off */
	CONFIG_LOOSE_PATH,    /* a host path outside the project (.why: the
	                         verb; relative to the file for CONFIG_T_FILE,
	                         else to the project) */
	CONFIG_LOOSE_PATH_IF_FILE, /* the same, for a value naming a file (a
	                              '/' or ".json" in it) */
	CONFIG_LOOSE_INPUTS,       /* each input whose source is outside */
	CONFIG_LOOSE_ALLOW,        /* each allow rule the user did not save */
	CONFIG_LOOSE_KINDS,   /* a list leaving out a kind the current has */
	CONFIG_LOOSE_MEMBERS, /* each member by its own row */
};

struct config_key {
	const char *name; /* "timeout"; a member: "limits.memory_mb" */
	enum config_type type;
	double min, max;    /* numbers; max 0: none (above 1e9 for sanity) */
	const char *values; /* the values it takes, "a|b|c" (ENUM: checked) */
	const char *must;   /* the error's "must be ..." (NULL: the type's) */
	const char *def;    /* the default, as written in a file (NULL: none) */
	unsigned by;        /* CONFIG_BY_* */
	const char *env;    /* the environment variable that sets it */
	const char *flag;   /* the option that sets it */
	enum config_loose loose;
	const char *why; /* the reason a loosening value is refused */
	int required;    /* refused, the run cannot start (paths) */
	const char *doc; /* one line: what it is */
	size_t off;      /* in struct config (not for OBJECT) */
	/* CUSTOM: applies the key by code of its own */
	int (*apply)(struct config *c, const struct config_key *k,
	             const cJSON *v, const char *origin, const char *base_dir,
	             char **err);
	/* OBJECT: a check once every member of a layer is applied */
	int (*done)(const struct config *c, const char *origin, char **err);
};

/* The row of a top-level key (parent NULL) or of member name of the
 * object key parent; NULL when there is none. */
const struct config_key *config_key_find(const char *parent, const char *name);
/* Every row in order, ending with a row whose name is NULL. */
const struct config_key *config_keys(void);
/* Whether a file of kind by (CONFIG_BY_PROJECT...) may set key: 1
 * unless a known key says not (unknown keys fail when applied). */
int config_key_settable(const char *name, unsigned by);
/* Apply v (its name already matched to k) onto c. */
int config_key_apply(struct config *c, const struct config_key *k,
                     const cJSON *v, const char *origin, const char *base_dir,
                     char **err);
/* Where k's value lives in c (const or not, as strchr). */
void *config_key_field(const struct config *c, const struct config_key *k);
/* Store d as k's value (numbers, booleans, enums; else nothing). */
void config_key_set_number(struct config *c, const struct config_key *k,
                           double d);
/* k's value in c as a number (numbers, booleans, enums; else 0). */
double config_key_number(const struct config *c, const struct config_key *k);

#endif
