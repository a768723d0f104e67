/* classify_paths.c: where the paths of a command lead (the workspace,
 * scratch space, the network, outside) and what that makes of the
 * words and redirections that read, write or delete them. Shared with
 * the python classifier: policy_path, policy_input_of and
 * policy_persistent_name. */
#include "classify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- where a path leads ------------------------------------------ */

/* Normalise components of path onto out (which holds a normalised
 * prefix); returns -1 when ".." climbs above it, -2 when the result
 * does not fit in max bytes. */
static int push_path(char *out, size_t max, const char *path)
{
	size_t len = strlen(out);
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, "/");
		if (n == 1 && p[0] == '.') {
			p += n;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (!len)
				return -1;
			char *slash = strrchr(out, '/');
			len = slash ? (size_t)(slash - out) : 0;
			out[len] = '\0';
			p += n;
			continue;
		}
		if (len + n + 2 > max)
			return -2;
		if (len)
			out[len++] = '/';
		memcpy(out + len, p, n);
		len += n;
		out[len] = '\0';
		p += n;
	}
	return 0;
}

/* What kind of place a normalised absolute path (without its leading
 * "/") is; rel gets the workspace-relative path when inside. */
static enum path_kind absolute_kind(const char *norm, char *rel)
{
	static const char *const dev_ok[] = {
	    "dev/null",    "dev/zero",  "dev/full",   "dev/random",
	    "dev/urandom", "dev/stdin", "dev/stdout", "dev/stderr",
	    "dev/tty",     NULL};
	if (!strcmp(norm, "workspace") || !strncmp(norm, "workspace/", 10)) {
		snprintf(rel, POLICY_REL_MAX, "%s", norm[9] ? norm + 10 : ".");
		return PATH_INSIDE;
	}
	if (!strcmp(norm, "tmp") || !strncmp(norm, "tmp/", 4) ||
	    !strcmp(norm, "dev/shm") || !strncmp(norm, "dev/shm/", 8) ||
	    cls_in_list(norm, dev_ok) || !strncmp(norm, "dev/fd/", 7))
		return PATH_SCRATCH;
	if (!strncmp(norm, "dev/tcp/", 8) || !strncmp(norm, "dev/udp/", 8))
		return PATH_NETWORK;
	return PATH_OUTSIDE;
}

/* Where a path word leads: absolute, from ~ (the workspace), or from
 * c's directory. */
enum path_kind policy_path(const struct cls *c, const char *path, char *rel)
{
	char out[POLICY_REL_MAX] = "";
	if (strlen(path) >= POLICY_REL_MAX)
		return PATH_UNKNOWN;
	if (path[0] == '/') {
		int rc = push_path(out, sizeof out, path);
		if (rc == -2)
			return PATH_UNKNOWN;
		/* "/.." is "/"; the root is outside */
		return absolute_kind(out, rel);
	}
	if (path[0] == '~') {
		/* HOME is /workspace in every sandbox */
		if (path[1] && path[1] != '/')
			return PATH_OUTSIDE;
		path += 1;
	} else if (c->cwd_state == CWD_ELSEWHERE) {
		return PATH_OUTSIDE;
	} else if (c->cwd_state == CWD_UNKNOWN) {
		return PATH_UNKNOWN;
	} else {
		snprintf(out, sizeof out, "%s", c->cwd);
	}
	int rc = push_path(out, sizeof out, path);
	if (rc == -1)
		return PATH_OUTSIDE;
	if (rc == -2)
		return PATH_UNKNOWN;
	snprintf(rel, POLICY_REL_MAX, "%s", out[0] ? out : ".");
	return PATH_INSIDE;
}

/* The staged input rel is or lies in, or NULL. */
const char *policy_input_of(const struct policy *p, const char *rel)
{
	for (size_t k = 0; k < p->ninputs; k++) {
		size_t n = strlen(p->inputs[k]);
		if (!strncmp(rel, p->inputs[k], n) &&
		    (rel[n] == '\0' || rel[n] == '/'))
			return p->inputs[k];
	}
	return NULL;
}

/* A file that runs at login or on a schedule (shell rc files, cron,
 * systemd, ssh keys). */
int policy_persistent_name(const char *path)
{
	static const char *const names[] = {".bashrc",
	                                    ".bash_profile",
	                                    ".bash_login",
	                                    ".bash_logout",
	                                    ".profile",
	                                    ".zshrc",
	                                    ".zprofile",
	                                    ".zshenv",
	                                    ".zlogin",
	                                    ".cshrc",
	                                    ".tcshrc",
	                                    ".kshrc",
	                                    ".xprofile",
	                                    ".xinitrc",
	                                    "authorized_keys",
	                                    "crontab",
	                                    "rc.local",
	                                    ".pam_environment",
	                                    NULL};
	static const char *const dirs[] = {
	    "/etc/cron",       "/var/spool/cron",
	    "/etc/profile",    "/etc/init.d",
	    "/etc/systemd",    ".config/autostart",
	    ".config/systemd", "/etc/rc",
	    ".ssh/",           NULL};
	if (cls_in_list(cls_base_name(path), names))
		return 1;
	for (const char *const *d = dirs; *d; d++)
		if (strstr(path, *d))
			return 1;
	return 0;
}

/* --- the paths of a command -------------------------------------- */

/* Whether a relative path word has a ".." component. */
static int has_dotdot(const char *s)
{
	for (const char *p = s; (p = strstr(p, "..")); p += 2)
		if ((p == s || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return 1;
	return 0;
}

/* A word that names a path by itself (or after "--opt=" / "key="). */
static const char *path_value(const char *t)
{
	if (t[0] == '-') {
		const char *eq = strchr(t, '=');
		return t[1] == '-' && eq ? eq + 1 : NULL;
	}
	const char *eq = strchr(t, '=');
	if (eq && eq > t && (eq[1] == '/' || eq[1] == '~' || eq[1] == '.')) {
		for (const char *q = t; q < eq; q++)
			if (!((*q >= 'a' && *q <= 'z') ||
			      (*q >= 'A' && *q <= 'Z') ||
			      (*q >= '0' && *q <= '9') || *q == '_'))
				return t;
		return eq + 1;
	}
	return t;
}

/* Operands that are patterns or code, not paths. */
static int skip_operand(const char *cmd, struct sh_word **w, size_t n, size_t i)
{
	static const char *const pattern_first[] = {
	    "grep", "egrep", "fgrep", "rg", "ag", "sed",  "awk",
	    "gawk", "mawk",  "nawk",  "jq", "yq", "perl", NULL};
	static const char *const code_opts[] = {
	    "-c", "-e", "-E", "--eval", "-r", "--command", "-S", NULL};
	static const char *const runners[] = {
	    "su", "runuser", "flock", "script", "env", "watch", NULL};
	const char *prev = i > 1 ? sh_known(w[i - 1]) : NULL;
	int code = cls_is_shell(cmd) || cls_is_python(cmd) ||
	           cls_find_interp(cmd) || cls_in_list(cmd, runners);
	if (prev && code && cls_in_list(prev, code_opts))
		return 1;
	if (!cls_in_list(cmd, pattern_first))
		return 0;
	if (prev && (!strcmp(prev, "-e") || !strcmp(prev, "--regexp")))
		return 1;
	return !cls_has_opt(w, n, "ef", NULL) &&
	       (long)i == cls_operand(w, n, 1, 0);
}

/* Every path-looking word: outside the workspace, ".." escapes. */
void cls_check_paths(struct cls *c, const char *cmd, struct sh_word **w,
                     size_t n)
{
	char rel[POLICY_REL_MAX];
	for (size_t i = 1; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (!t || skip_operand(cmd, w, n, i))
			continue;
		if (!strcmp(cmd, "env") && t[0] != '-' && strchr(t, '='))
			continue; /* a variable for the command */
		const char *v = path_value(t);
		if (!v || !*v)
			continue;
		if (v[0] != '/' && v[0] != '~' && !has_dotdot(v))
			continue;
		enum path_kind k = policy_path(c, v, rel);
		char *s = policy_snip(v, 60);
		if (k == PATH_OUTSIDE)
			reasons_add(c->r, POLICY_OUTSIDE, "%s uses %s", cmd, s);
		else if (k == PATH_NETWORK)
			reasons_add(c->r, POLICY_NETWORK, "%s opens %s", cmd,
			            s);
		free(s);
	}
}

/* Whether the workspace file rel exists (the policy's callback). */
static int cls_file_exists(const struct cls *c, const char *rel)
{
	return c->pol->exists && c->pol->exists(c->pol->exists_arg, rel);
}

/* A file the command writes; truncate: its old content is lost. */
void cls_check_write(struct cls *c, const struct sh_word *w, int truncate,
                     const char *how)
{
	char rel[POLICY_REL_MAX];
	const char *t = sh_known(w);
	if (w->flags & SH_W_PROCSUB)
		return; /* >(cmd): its commands are parts of their own */
	char *s = policy_snip(t ? t : w->raw, 60);
	if (!t) {
		if (truncate)
			reasons_add(
			    c->r, POLICY_DELETION,
			    "%s writes to a file named at run time (%s)", how,
			    s);
		free(s);
		return;
	}
	if (policy_persistent_name(t))
		reasons_add(c->r, POLICY_PERSISTENCE,
		            "%s writes %s, which runs at login or on a "
		            "schedule",
		            how, s);
	switch (policy_path(c, t, rel)) {
	case PATH_NETWORK:
		reasons_add(c->r, POLICY_NETWORK,
		            "%s opens a network connection (%s)", how, s);
		break;
	case PATH_OUTSIDE:
		reasons_add(c->r, POLICY_OUTSIDE, "%s writes %s", how, s);
		break;
	case PATH_UNKNOWN:
		if (truncate)
			reasons_add(c->r, POLICY_DELETION,
			            "%s may overwrite %s (its directory is not "
			            "known)",
			            how, s);
		break;
	case PATH_INSIDE:
		if (policy_input_of(c->pol, rel))
			reasons_add(c->r, POLICY_DELETION,
			            "%s %s the staged input %s (your data)",
			            how, truncate ? "overwrites" : "changes",
			            rel);
		else if (truncate && cls_file_exists(c, rel))
			reasons_add(c->r, POLICY_DELETION,
			            "%s overwrites the existing file %s", how,
			            rel);
		break;
	case PATH_SCRATCH:
		break;
	}
	free(s);
}

/* A file the command deletes or changes in place. */
void cls_check_destroy(struct cls *c, const struct sh_word *w, const char *verb,
                       const char *who)
{
	char rel[POLICY_REL_MAX];
	const char *t = sh_known(w);
	char *s = policy_snip(t ? t : w->raw, 60);
	if (t && policy_path(c, t, rel) == PATH_INSIDE &&
	    policy_input_of(c->pol, rel))
		reasons_add(c->r, POLICY_DELETION,
		            "%s %s the staged input %s (your data)", who, verb,
		            rel);
	else
		reasons_add(c->r, POLICY_DELETION, "%s %s %s", who, verb, s);
	free(s);
}

/* A file descriptor number, or "-" (closing one), after >& or <&. */
static int is_fd(const char *t)
{
	if (!strcmp(t, "-"))
		return 1;
	for (; *t; t++)
		if (*t < '0' || *t > '9')
			return 0;
	return 1;
}

/* A redirection: what it reads from outside, what it writes. */
void cls_check_redir(struct cls *c, const struct sh_redir *r)
{
	const char *op = r->op;
	const char *t = sh_known(r->arg);
	char rel[POLICY_REL_MAX];
	char how[8];
	snprintf(how, sizeof how, "'%s'", op);
	if (!strcmp(op, "<<") || !strcmp(op, "<<-") || !strcmp(op, "<<<"))
		return;
	if ((!strcmp(op, ">&") || !strcmp(op, "<&")) && t && is_fd(t))
		return;
	if (!strcmp(op, "<") || !strcmp(op, "<&")) {
		if (!t)
			return;
		enum path_kind k = policy_path(c, t, rel);
		char *s = policy_snip(t, 60);
		if (k == PATH_OUTSIDE)
			reasons_add(c->r, POLICY_OUTSIDE, "'<' reads %s", s);
		else if (k == PATH_NETWORK)
			reasons_add(c->r, POLICY_NETWORK,
			            "'<' opens a network connection (%s)", s);
		free(s);
		return;
	}
	int append =
	    !strcmp(op, ">>") || !strcmp(op, "&>>") || !strcmp(op, "<>");
	cls_check_write(c, r->arg, !append, how);
}
