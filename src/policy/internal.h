/* internal.h: what the policy layer's files share (private to
 * src/policy/): the policy itself, reason lists (reasons.c), and the
 * entry points of the classifiers of shell commands (classify*.c, whose
 * pieces share classify.h) and python code (python.c). */
#ifndef ASSAY_POLICY_INTERNAL_H
#define ASSAY_POLICY_INTERNAL_H

#include "assay/policy.h"
#include "assay/strv.h"
#include "shell.h"

#include <stddef.h>

/* Inline code (bash -c, eval, python -c, here-documents) nested deeper
 * than this is not read: it is a reason by itself. */
#define POLICY_MAX_INLINE 6
/* Size of the buffers workspace-relative paths are written into. */
#define POLICY_REL_MAX 1024

struct policy {
	enum policy_mode mode;
	cJSON *rules;         /* from the configuration, validated */
	cJSON *session_rules; /* added by "always" for this session */
	unsigned never_save;  /* 1 << kind */
	char **inputs;        /* staged input paths, workspace-relative */
	size_t ninputs;
	int (*exists)(void *arg, const char *rel);
	void *exists_arg;
};

struct reasons {
	struct policy_reason *v;
	size_t n, cap;
};

/* A reason of kind, its text the kind's label and fmt; a reason
 * already in r is not added twice. */
void reasons_add(struct reasons *r, enum policy_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void reasons_free(struct reasons *r);

/* Where the working directory of a command line is, as far as known. */
enum cwd_state { CWD_WORKSPACE, CWD_ELSEWHERE, CWD_UNKNOWN };

/* One part being classified: where its reasons and forms go. */
struct cls {
	const struct policy *pol;
	int depth; /* inline code levels */
	enum cwd_state cwd_state;
	char cwd[256];       /* workspace-relative when CWD_WORKSPACE */
	const char *decoder; /* a decoder in the same command line */
	struct reasons *r;
	struct strv *forms;
};

/* Whether r is a well-formed rule; the message names rules[index]
 * (rules.c). */
int policy_rule_check(const cJSON *r, int index, char **err);

/* Classify a whole shell command line into parts (classify.c). */
void policy_shell_parts(const struct policy *pol, const char *cmd,
                        struct policy_part **parts, size_t *nparts,
                        char **parse_error);
/* Inline shell code found inside a part (bash -c, eval, a here-doc
 * into sh): its reasons and forms join c's. label names the source. */
void policy_inline_shell(struct cls *c, const char *code, const char *label);
/* Python code (python.c): reasons join c's. where says where the code
 * came from ("python3 -c", "the python tool"...). */
void policy_classify_python(struct cls *c, const char *code, const char *where);

/* Paths, shared by both classifiers (classify_paths.c). */
enum path_kind {
	PATH_INSIDE,  /* in the workspace: rel is set */
	PATH_SCRATCH, /* /tmp, /dev/null...: harmless */
	PATH_NETWORK, /* /dev/tcp, /dev/udp */
	PATH_OUTSIDE, /* anywhere else */
	PATH_UNKNOWN, /* relative to a directory not known */
};
/* Where a static path word leads from c's directory; rel
 * (POLICY_REL_MAX bytes) gets the workspace-relative path for
 * PATH_INSIDE. */
enum path_kind policy_path(const struct cls *c, const char *path, char *rel);
/* The staged input rel is or lies in, or NULL. */
const char *policy_input_of(const struct policy *p, const char *rel);
/* A file name that makes a write persistent (shell rc, cron...). */
int policy_persistent_name(const char *path);
/* Text for reasons: s cut to about max bytes with "...". Caller frees. */
char *policy_snip(const char *s, size_t max);

#endif
