/* classify.c: the reasons of a shell command line. The line is parsed
 * into simple commands (shell.c); each becomes a part with a canonical
 * text for rules and the reasons found in its words and redirections.
 * Wrappers (env, sudo, xargs, find -exec, timeout...) are looked
 * through, inline code (bash -c, eval, python -c, here-documents into
 * an interpreter) is classified in turn, and what cannot be seen (a
 * command name from a variable, data piped into a shell) is a reason. */
#include "internal.h"

#include "assay/buf.h"
#include "assay/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WRAPPERS 12
#define REL_MAX 1024

/* What feeds a command's stdin. */
struct input {
	int fed;                    /* a pipe, or an enclosing redirection */
	const struct sh_redir *doc; /* a here-document or here-string */
};

typedef void (*handler_fn)(struct cls *c, struct sh_word **w, size_t n,
                           struct input in, int level);

static void classify_argv(struct cls *c, struct sh_word **w, size_t n,
                          struct input in, int level);

/* --- small helpers ----------------------------------------------- */

static const char *const KIND_LABEL[POLICY_NKINDS] = {
    [POLICY_NETWORK] = "network",
    [POLICY_DELETION] = "deletes or overwrites",
    [POLICY_PRIVILEGE] = "privilege",
    [POLICY_OUTSIDE] = "outside the workspace",
    [POLICY_PROCESS] = "process control",
    [POLICY_PERSISTENCE] = "persistence",
    [POLICY_HIDDEN] = "hidden intent",
    [POLICY_EXEC] = "runs commands",
    [POLICY_UNPARSED] = "cannot be checked",
};

void reasons_add(struct reasons *r, enum policy_kind kind, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *detail = xvasprintf(fmt, ap);
	va_end(ap);
	char *text = xasprintf("%s: %s", KIND_LABEL[kind], detail);
	free(detail);
	for (size_t k = 0; k < r->n; k++) {
		if (!strcmp(r->v[k].text, text)) {
			free(text);
			return;
		}
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 4;
		r->v = xrealloc(r->v, r->cap * sizeof *r->v);
	}
	r->v[r->n].kind = kind;
	r->v[r->n].text = text;
	r->n++;
}

void reasons_free(struct reasons *r)
{
	for (size_t k = 0; k < r->n; k++)
		free(r->v[k].text);
	free(r->v);
	memset(r, 0, sizeof *r);
}

void strv_add(struct strv *s, char *owned)
{
	for (size_t k = 0; k < s->n; k++) {
		if (!strcmp(s->v[k], owned)) {
			free(owned);
			return;
		}
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = owned;
}

void strv_free(struct strv *s)
{
	for (size_t k = 0; k < s->n; k++)
		free(s->v[k]);
	free(s->v);
	memset(s, 0, sizeof *s);
}

char *policy_snip(const char *s, size_t max)
{
	size_t n = strcspn(s, "\n");
	int cut = s[n] != '\0';
	if (n > max) {
		n = max;
		cut = 1;
	}
	/* keep whole UTF-8 characters */
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80 && s[n])
		n--;
	char *out = xasprintf("%.*s%s", (int)n, s, cut ? "..." : "");
	return out;
}

static int in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

static const char *base_name(const char *s)
{
	const char *slash = strrchr(s, '/');
	return slash ? slash + 1 : s;
}

/* The word's text when it is known before the command runs. */
static const char *T(const struct sh_word *w)
{
	return (w->flags & SH_W_DYNAMIC) ? NULL : w->text;
}

static int is_opt(const struct sh_word *w)
{
	const char *t = T(w);
	return t && t[0] == '-' && t[1];
}

/* Index of the n-th operand (not an option) from i, or -1. */
static long operand(struct sh_word **w, size_t n, size_t i, int which)
{
	for (; i < n; i++) {
		if (is_opt(w[i]))
			continue;
		if (which-- == 0)
			return (long)i;
	}
	return -1;
}

static int has_opt(struct sh_word **w, size_t n, const char *shorts,
                   const char *const *longs)
{
	for (size_t i = 1; i < n; i++) {
		const char *t = T(w[i]);
		if (!t || t[0] != '-' || !t[1])
			continue;
		if (!strcmp(t, "--"))
			return 0;
		if (t[1] == '-') {
			if (longs)
				for (const char *const *l = longs; *l; l++)
					if (!strncmp(t, *l, strlen(*l)))
						return 1;
			continue;
		}
		if (shorts && strpbrk(t + 1, shorts))
			return 1;
	}
	return 0;
}

/* The words from i joined by spaces, in canonical form. */
static char *join_canon(struct sh_word **w, size_t n, size_t i)
{
	struct buf b;
	buf_init(&b, 0);
	for (; i < n; i++) {
		char *s = sh_word_canon(w[i]);
		if (b.len)
			buf_puts(&b, " ");
		buf_puts(&b, s);
		free(s);
	}
	return buf_detach(&b);
}

/* The words from i as text (for inline code given in several words);
 * NULL if one of them is only known at run time. */
static char *join_text(struct sh_word **w, size_t n, size_t i)
{
	struct buf b;
	buf_init(&b, 0);
	for (; i < n; i++) {
		if (!T(w[i])) {
			buf_free(&b);
			return NULL;
		}
		if (b.len)
			buf_puts(&b, " ");
		buf_puts(&b, w[i]->text);
	}
	return buf_detach(&b);
}

static int exists(const struct cls *c, const char *rel)
{
	return c->pol->exists && c->pol->exists(c->pol->exists_arg, rel);
}

/* The command run by a wrapper is another form a deny rule can match;
 * /bin/rm is also seen as rm. */
static void add_forms(struct cls *c, struct sh_word **w, size_t n)
{
	char *s = join_canon(w, n, 0);
	strv_add(c->forms, s);
	const char *t = T(w[0]);
	if (t && strchr(t, '/') && *base_name(t)) {
		char *rest = n > 1 ? join_canon(w, n, 1) : xstrdup("");
		char *b = sh_quote(base_name(t));
		strv_add(c->forms,
		         xasprintf("%s%s%s", b, n > 1 ? " " : "", rest));
		free(b);
		free(rest);
	}
}

/* --- paths ------------------------------------------------------- */

/* Normalise components of path onto out (which holds a normalised
 * prefix); returns -1 when ".." climbs above it. */
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

static enum path_kind absolute_kind(const char *norm, char *rel)
{
	static const char *const dev_ok[] = {
	    "dev/null",    "dev/zero",  "dev/full",   "dev/random",
	    "dev/urandom", "dev/stdin", "dev/stdout", "dev/stderr",
	    "dev/tty",     NULL};
	if (!strcmp(norm, "workspace") || !strncmp(norm, "workspace/", 10)) {
		snprintf(rel, REL_MAX, "%s", norm[9] ? norm + 10 : ".");
		return PATH_INSIDE;
	}
	if (!strcmp(norm, "tmp") || !strncmp(norm, "tmp/", 4) ||
	    !strcmp(norm, "dev/shm") || !strncmp(norm, "dev/shm/", 8) ||
	    in_list(norm, dev_ok) || !strncmp(norm, "dev/fd/", 7))
		return PATH_SCRATCH;
	if (!strncmp(norm, "dev/tcp/", 8) || !strncmp(norm, "dev/udp/", 8))
		return PATH_NETWORK;
	return PATH_OUTSIDE;
}

enum path_kind policy_path(const struct cls *c, const char *path, char *rel)
{
	char out[REL_MAX] = "";
	if (strlen(path) >= REL_MAX)
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
	snprintf(rel, REL_MAX, "%s", out[0] ? out : ".");
	return PATH_INSIDE;
}

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
	if (in_list(base_name(path), names))
		return 1;
	for (const char *const *d = dirs; *d; d++)
		if (strstr(path, *d))
			return 1;
	return 0;
}

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

static int is_shell(const char *b);
static int is_python(const char *b);
static const struct interp *find_interp(const char *b);

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
	const char *prev = i > 1 ? T(w[i - 1]) : NULL;
	int code = is_shell(cmd) || is_python(cmd) || find_interp(cmd) ||
	           in_list(cmd, runners);
	if (prev && code && in_list(prev, code_opts))
		return 1;
	if (!in_list(cmd, pattern_first))
		return 0;
	if (prev && (!strcmp(prev, "-e") || !strcmp(prev, "--regexp")))
		return 1;
	return !has_opt(w, n, "ef", NULL) && (long)i == operand(w, n, 1, 0);
}

/* Every path-looking word: outside the workspace, ".." escapes. */
static void check_paths(struct cls *c, const char *cmd, struct sh_word **w,
                        size_t n)
{
	char rel[REL_MAX];
	for (size_t i = 1; i < n; i++) {
		const char *t = T(w[i]);
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

/* A file the command writes; truncate: its old content is lost. */
static void check_write(struct cls *c, const struct sh_word *w, int truncate,
                        const char *how)
{
	char rel[REL_MAX];
	const char *t = T(w);
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
		else if (truncate && exists(c, rel))
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
static void check_destroy(struct cls *c, const struct sh_word *w,
                          const char *verb, const char *who)
{
	char rel[REL_MAX];
	const char *t = T(w);
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

static int is_fd(const char *t)
{
	if (!strcmp(t, "-"))
		return 1;
	for (; *t; t++)
		if (*t < '0' || *t > '9')
			return 0;
	return 1;
}

static void check_redir(struct cls *c, const struct sh_redir *r)
{
	const char *op = r->op;
	const char *t = T(r->arg);
	char rel[REL_MAX];
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
	check_write(c, r->arg, !append, how);
}

/* --- interpreters ------------------------------------------------ */

static int is_shell(const char *b)
{
	static const char *const shells[] = {
	    "sh",   "bash", "dash", "zsh",  "ksh",   "mksh", "ash",
	    "fish", "csh",  "tcsh", "yash", "rbash", "posh", NULL};
	return in_list(b, shells);
}

static int is_python(const char *b)
{
	if (!strncmp(b, "python", 6)) {
		for (const char *q = b + 6; *q; q++)
			if (!((*q >= '0' && *q <= '9') || *q == '.'))
				return 0;
		return 1;
	}
	return !strcmp(b, "pypy") || !strcmp(b, "pypy3") ||
	       !strcmp(b, "ipython") || !strcmp(b, "ipython3");
}

/* Other interpreters and the options that give them inline code. */
struct interp {
	const char *name;
	const char *shorts; /* option letters taking code */
	const char *const longs[3];
};

static const struct interp INTERPS[] = {
    {"perl", "eE", {NULL}},
    {"perl5", "eE", {NULL}},
    {"ruby", "e", {NULL}},
    {"irb", "", {NULL}},
    {"node", "ep", {"--eval", "--print", NULL}},
    {"nodejs", "ep", {"--eval", "--print", NULL}},
    {"deno", "", {"eval", NULL}},
    {"bun", "e", {"--eval", NULL}},
    {"php", "rR", {NULL}},
    {"lua", "e", {NULL}},
    {"luajit", "e", {NULL}},
    {"Rscript", "e", {NULL}},
    {"R", "e", {NULL}},
    {"julia", "e", {"--eval", NULL}},
    {"tclsh", "", {NULL}},
    {"wish", "", {NULL}},
    {"osascript", "e", {NULL}},
    {"guile", "c", {NULL}},
    {"pwsh", "c", {"-Command", "-EncodedCommand", NULL}},
    {"powershell", "c", {"-Command", "-EncodedCommand", NULL}},
    {"expect", "c", {NULL}},
    {"gdb", "", {"-ex", "--eval-command", NULL}},
};

static const struct interp *find_interp(const char *b)
{
	for (size_t k = 0; k < sizeof INTERPS / sizeof *INTERPS; k++)
		if (!strcmp(INTERPS[k].name, b))
			return &INTERPS[k];
	return NULL;
}

/* An interpreter reading its program from stdin. */
static void stdin_code(struct cls *c, const char *name, struct input in,
                       int lang)
{
	if (in.doc) {
		const struct sh_redir *d = in.doc;
		const char *code = d->body ? d->body : T(d->arg);
		char *label = xasprintf("the here-document into %s", name);
		if (!code)
			reasons_add(c->r, POLICY_HIDDEN,
			            "%s reads code built at run time", name);
		else if (lang == 's')
			policy_inline_shell(c, code, label);
		else if (lang == 'p')
			policy_classify_python(c, code, label);
		else
			reasons_add(c->r, POLICY_HIDDEN,
			            "inline %s code: the policy cannot check "
			            "%s code",
			            name, name);
		free(label);
		return;
	}
	if (in.fed) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "data piped into %s runs as code: what runs is "
		            "not visible",
		            name);
		if (c->decoder)
			reasons_add(c->r, POLICY_HIDDEN,
			            "decodes a payload (%s) and runs it",
			            c->decoder);
	}
}

static void dynamic_code(struct cls *c, const char *name, const char *opt)
{
	reasons_add(c->r, POLICY_HIDDEN, "%s %s runs code built at run time",
	            name, opt);
	if (c->decoder)
		reasons_add(c->r, POLICY_HIDDEN,
		            "decodes a payload (%s) and runs it", c->decoder);
}

/* A script operand: a substitution or stdin is not a visible file. */
static int script_operand(struct cls *c, const char *name,
                          const struct sh_word *w, struct input in, int lang)
{
	if (w->flags & (SH_W_PROCSUB | SH_W_CMDSUB)) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "%s runs a script produced by a substitution (%s)",
		            name, w->raw);
		if (c->decoder)
			reasons_add(c->r, POLICY_HIDDEN,
			            "decodes a payload (%s) and runs it",
			            c->decoder);
		return 1;
	}
	const char *t = T(w);
	if (t && (!strcmp(t, "-") || !strcmp(t, "/dev/stdin"))) {
		stdin_code(c, name, in, lang);
		return 1;
	}
	return 0;
}

static void h_shell(struct cls *c, struct sh_word **w, size_t n,
                    struct input in, int level)
{
	const char *name = base_name(w[0]->text);
	int dash_c = 0, dash_s = 0;
	size_t i = 1;
	(void)level;
	for (; i < n; i++) {
		const char *t = T(w[i]);
		if (!t)
			break;
		if (!strcmp(t, "--")) {
			i++;
			break;
		}
		if ((t[0] != '-' && t[0] != '+') || !t[1])
			break;
		if (!strcmp(t, "-o") || !strcmp(t, "+o") || !strcmp(t, "-O") ||
		    !strcmp(t, "+O") || !strcmp(t, "--rcfile") ||
		    !strcmp(t, "--init-file")) {
			i++;
			continue;
		}
		if (t[1] != '-' && strchr(t, 'c'))
			dash_c = 1;
		if (t[1] != '-' && strchr(t, 's'))
			dash_s = 1;
	}
	if (dash_c) {
		if (i >= n)
			return;
		const char *code = T(w[i]);
		char *label = xasprintf("%s -c", name);
		if (!code)
			dynamic_code(c, name, "-c");
		else
			policy_inline_shell(c, code, label);
		free(label);
		return;
	}
	if (dash_s || i >= n)
		stdin_code(c, name, in, 's');
	else
		script_operand(c, name, w[i], in, 's');
}

static void python_module(struct cls *c, const char *name, struct sh_word **w,
                          size_t n, size_t i)
{
	const char *m = T(w[i]);
	if (!m) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "%s -m runs a module named at run time", name);
		return;
	}
	static const char *const net[] = {
	    "http.server", "SimpleHTTPServer", "ensurepip",    "smtpd",
	    "ftplib",      "webbrowser",       "pip_download", NULL};
	if (in_list(m, net))
		reasons_add(c->r, POLICY_NETWORK, "%s -m %s uses the network",
		            name, m);
	if (!strcmp(m, "pip")) {
		const char *sub = i + 1 < n ? T(w[i + 1]) : NULL;
		static const char *const pipnet[] = {"install", "download",
		                                     "wheel", NULL};
		if (sub && in_list(sub, pipnet))
			reasons_add(c->r, POLICY_NETWORK,
			            "%s -m pip %s downloads packages", name,
			            sub);
	}
}

static void h_python(struct cls *c, struct sh_word **w, size_t n,
                     struct input in, int level)
{
	const char *name = base_name(w[0]->text);
	(void)level;
	for (size_t i = 1; i < n; i++) {
		const char *t = T(w[i]);
		if (!t || t[0] != '-' || !strcmp(t, "-")) {
			/* a script: a file, stdin or a substitution */
			script_operand(c, name, w[i], in, 'p');
			return;
		}
		if (!strcmp(t, "--") || t[1] == '-')
			continue;
		const char *q = t + 1;
		while (*q && strchr("bBdEhiIOPqRsSuvVx", *q))
			q++;
		if (*q == 'W' || *q == 'X') {
			i += q[1] ? 0 : 1;
			continue;
		}
		if (*q != 'c' && *q != 'm')
			continue;
		const char *code = q[1] ? q + 1 : i + 1 < n ? T(w[i + 1]) : "";
		if (*q == 'm') {
			if (!q[1] && i + 1 < n)
				python_module(c, name, w, n, i + 1);
			return;
		}
		char *label = xasprintf("%s -c", name);
		if (!code)
			dynamic_code(c, name, "-c");
		else
			policy_classify_python(c, code, label);
		free(label);
		return;
	}
	stdin_code(c, name, in, 'p');
}

static void h_interp(struct cls *c, struct sh_word **w, size_t n,
                     struct input in, int level)
{
	const char *name = base_name(w[0]->text);
	const struct interp *ip = find_interp(name);
	(void)level;
	for (size_t i = 1; i < n; i++) {
		const char *t = T(w[i]);
		if (!t) {
			script_operand(c, name, w[i], in, 0);
			return;
		}
		int inline_code = 0;
		for (int k = 0; ip->longs[k]; k++)
			inline_code |= !strcmp(t, ip->longs[k]);
		if (t[0] == '-' && t[1] && t[1] != '-' && *ip->shorts &&
		    strpbrk(t + 1, ip->shorts))
			inline_code = 1;
		if (inline_code) {
			reasons_add(c->r, POLICY_HIDDEN,
			            "inline %s code (%s): the policy cannot "
			            "check %s code",
			            name, t, name);
			return;
		}
		if (!strcmp(name, "perl") && t[0] == '-' && strchr(t, 'i'))
			check_destroy(c, w[n - 1], "edits in place", "perl -i");
		if (t[0] != '-' || !strcmp(t, "-")) {
			script_operand(c, name, w[i], in, 0);
			return;
		}
	}
	stdin_code(c, name, in, 0);
}

/* awk programs can run commands: system(), pipes to and from "cmd". */
static void h_awk(struct cls *c, struct sh_word **w, size_t n, struct input in,
                  int level)
{
	(void)in, (void)level;
	const char *name = base_name(w[0]->text);
	for (size_t i = 1; i < n; i++) {
		const char *t = T(w[i]);
		if (t && (!strcmp(t, "-i") || !strcmp(t, "--inplace")))
			check_destroy(c, w[n - 1], "edits in place", name);
		if (t && (!strcmp(t, "-F") || !strcmp(t, "-v") ||
		          !strcmp(t, "-f") || !strcmp(t, "-i"))) {
			if (!strcmp(t, "-f"))
				return;
			i++;
			continue;
		}
		if (t && t[0] == '-' && t[1])
			continue;
		if (!t) {
			reasons_add(c->r, POLICY_HIDDEN,
			            "the %s program is built at run time",
			            name);
			return;
		}
		const char *pipe = t;
		int runs =
		    strstr(t, "system") != NULL || strstr(t, "|&") != NULL;
		while ((pipe = strchr(pipe, '|'))) {
			const char *q = pipe + 1;
			if (*q == '|' || (pipe > t && pipe[-1] == '|')) {
				pipe = q + (*q == '|');
				continue;
			}
			while (*q == ' ' || *q == '\t')
				q++;
			if (*q == '"' || !strncmp(q, "getline", 7))
				runs = 1;
			pipe++;
		}
		if (runs)
			reasons_add(c->r, POLICY_HIDDEN,
			            "the %s program runs commands (system() or "
			            "a pipe)",
			            name);
		return;
	}
}

/* --- wrappers ---------------------------------------------------- */

struct wrapper {
	const char *name;
	const char *argopts;         /* short options taking a value */
	const char *const *longargs; /* long options taking a value */
	int positional;              /* operands before the command */
	int kind;                    /* a reason of its own, or -1 */
	const char *why;
};

static const char *const SUDO_LONG[] = {
    "--user",       "--group",           "--host", "--prompt",
    "--close-from", "--chdir",           "--role", "--type",
    "--other-user", "--command-timeout", NULL};
static const char *const TIMEOUT_LONG[] = {"--signal", "--kill-after", NULL};
static const char *const XARGS_LONG[] = {
    "--max-args",  "--max-lines", "--max-procs",        "--max-chars",
    "--delimiter", "--arg-file",  "--process-slot-var", NULL};

static const struct wrapper WRAPPERS[] = {
    {"sudo", "ughpCDrtUT", SUDO_LONG, 0, POLICY_PRIVILEGE,
     "runs a command as another user"},
    {"doas", "uC", NULL, 0, POLICY_PRIVILEGE, "runs a command as another user"},
    {"pkexec", "", NULL, 0, POLICY_PRIVILEGE, "runs a command as another user"},
    {"sg", "", NULL, 1, POLICY_PRIVILEGE, "runs a command in another group"},
    {"chroot", "", NULL, 1, POLICY_PRIVILEGE,
     "runs a command in another root directory"},
    {"nsenter", "tSGw", NULL, 0, POLICY_PRIVILEGE, "enters other namespaces"},
    {"unshare", "", NULL, 0, POLICY_PRIVILEGE, "creates namespaces"},
    {"torsocks", "", NULL, 0, POLICY_NETWORK,
     "sends a command's traffic through Tor"},
    {"proxychains", "f", NULL, 0, POLICY_NETWORK,
     "sends a command's traffic through proxies"},
    {"proxychains4", "f", NULL, 0, POLICY_NETWORK,
     "sends a command's traffic through proxies"},
    {"builtin", "", NULL, 0, -1, NULL},
    {"exec", "a", NULL, 0, -1, NULL},
    {"nohup", "", NULL, 0, -1, NULL},
    {"time", "fo", NULL, 0, -1, NULL},
    {"nice", "n", NULL, 0, -1, NULL},
    {"ionice", "cnp", NULL, 0, -1, NULL},
    {"chrt", "", NULL, 1, -1, NULL},
    {"taskset", "", NULL, 1, -1, NULL},
    {"stdbuf", "ioe", NULL, 0, -1, NULL},
    {"setsid", "", NULL, 0, -1, NULL},
    {"timeout", "sk", TIMEOUT_LONG, 1, -1, NULL},
    {"unbuffer", "", NULL, 0, -1, NULL},
    {"catchsegv", "", NULL, 0, -1, NULL},
    {"strace", "oepsuEIbPXa", NULL, 0, -1, NULL},
    {"ltrace", "oepsuEnaA", NULL, 0, -1, NULL},
    {"fakeroot", "ls", NULL, 0, -1, NULL},
    {"firejail", "", NULL, 0, -1, NULL},
    {"eatmydata", "", NULL, 0, -1, NULL},
    {"nocache", "", NULL, 0, -1, NULL},
    {"xargs", "nLPsdEaI", XARGS_LONG, 0, -1, NULL},
    {"caffeinate", "", NULL, 0, -1, NULL},
    {"valgrind", "", NULL, 0, -1, NULL},
};

static const struct wrapper *find_wrapper(const char *b)
{
	for (size_t k = 0; k < sizeof WRAPPERS / sizeof *WRAPPERS; k++)
		if (!strcmp(WRAPPERS[k].name, b))
			return &WRAPPERS[k];
	return NULL;
}

/* Where the wrapped command starts (n if there is none). */
static size_t skip_options(const struct wrapper *wr, struct sh_word **w,
                           size_t n)
{
	size_t i = 1;
	while (i < n) {
		const char *t = T(w[i]);
		if (!t || t[0] != '-' || !t[1])
			break;
		if (!strcmp(t, "--")) {
			i++;
			break;
		}
		if (t[1] == '-') {
			int takes = wr->longargs && !strchr(t, '=') &&
			            in_list(t, wr->longargs);
			i += takes ? 2 : 1;
			continue;
		}
		size_t len = strlen(t);
		size_t k = 1;
		for (; k < len; k++)
			if (strchr(wr->argopts, t[k]))
				break;
		i += (k < len && k == len - 1) ? 2 : 1;
	}
	for (int p = 0; p < wr->positional && i < n; p++)
		i++;
	return i;
}

/* The command w[from..n) that a wrapper runs. */
static void wrapped(struct cls *c, struct sh_word **w, size_t n, size_t from,
                    struct input in, int level)
{
	if (from >= n)
		return;
	add_forms(c, w + from, n - from);
	classify_argv(c, w + from, n - from, in, level + 1);
}

static void h_wrapper(struct cls *c, struct sh_word **w, size_t n,
                      struct input in, int level)
{
	const char *name = base_name(w[0]->text);
	const struct wrapper *wr = find_wrapper(name);
	if (wr->kind >= 0)
		reasons_add(c->r, (enum policy_kind)wr->kind, "%s %s", name,
		            wr->why);
	size_t i = skip_options(wr, w, n);
	if (!strcmp(name, "xargs"))
		in = (struct input){0};
	if (!strcmp(name, "sudo") && i >= n &&
	    has_opt(w, n, "is",
	            (const char *const[]){"--login", "--shell", NULL}))
		stdin_code(c, "a root shell", in, 's');
	wrapped(c, w, n, i, in, level);
}

static void h_env(struct cls *c, struct sh_word **w, size_t n, struct input in,
                  int level)
{
	size_t i = 1;
	while (i < n) {
		const char *t = T(w[i]);
		if (!t)
			break;
		if (!strcmp(t, "--")) {
			i++;
			break;
		}
		if (!strcmp(t, "-S") || !strcmp(t, "--split-string") ||
		    !strncmp(t, "-S", 2) ||
		    !strncmp(t, "--split-string=", 15)) {
			const char *code = NULL;
			if (!strcmp(t, "-S") || !strcmp(t, "--split-string"))
				code = i + 1 < n ? T(w[i + 1]) : "";
			else
				code = t[1] == 'S' ? t + 2 : strchr(t, '=') + 1;
			if (!code)
				dynamic_code(c, "env", "-S");
			else
				policy_inline_shell(c, code, "env -S");
			return;
		}
		if (!strcmp(t, "-u") || !strcmp(t, "-C") ||
		    !strcmp(t, "--unset") || !strcmp(t, "--chdir")) {
			i += 2;
			continue;
		}
		if (t[0] == '-' || strchr(t, '=')) {
			i++;
			continue;
		}
		break;
	}
	wrapped(c, w, n, i, in, level);
}

static void h_command(struct cls *c, struct sh_word **w, size_t n,
                      struct input in, int level)
{
	size_t i = 1;
	for (; i < n; i++) {
		const char *t = T(w[i]);
		if (!t || t[0] != '-')
			break;
		if (strchr(t, 'v') || strchr(t, 'V'))
			return; /* only looks a name up */
	}
	wrapped(c, w, n, i, in, level);
}

static void h_find(struct cls *c, struct sh_word **w, size_t n, struct input in,
                   int level)
{
	(void)in;
	for (size_t i = 1; i < n; i++) {
		const char *t = T(w[i]);
		if (!t)
			continue;
		if (!strcmp(t, "-delete"))
			reasons_add(c->r, POLICY_DELETION,
			            "find -delete deletes what it finds");
		if ((!strcmp(t, "-fprint") || !strcmp(t, "-fprint0") ||
		     !strcmp(t, "-fprintf") || !strcmp(t, "-fls")) &&
		    i + 1 < n)
			check_write(c, w[i + 1], 1, t);
		if (strcmp(t, "-exec") && strcmp(t, "-execdir") &&
		    strcmp(t, "-ok") && strcmp(t, "-okdir"))
			continue;
		size_t j = i + 1;
		while (j < n && !(T(w[j]) && (!strcmp(T(w[j]), ";") ||
		                              !strcmp(T(w[j]), "+"))))
			j++;
		wrapped(c, w, j, i + 1, (struct input){0}, level);
		i = j;
	}
}

static void h_flock(struct cls *c, struct sh_word **w, size_t n,
                    struct input in, int level)
{
	static const struct wrapper fl = {"flock", "wEc", NULL, 1, -1, NULL};
	for (size_t i = 1; i + 1 < n; i++) {
		const char *t = T(w[i]);
		if (t && (!strcmp(t, "-c") || !strcmp(t, "--command"))) {
			const char *code = T(w[i + 1]);
			if (!code)
				dynamic_code(c, "flock", "-c");
			else
				policy_inline_shell(c, code, "flock -c");
			return;
		}
	}
	size_t i = skip_options(&fl, w, n);
	wrapped(c, w, n, i, in, level);
}

/* su and runuser: privilege, and -c runs shell code. */
static void h_su(struct cls *c, struct sh_word **w, size_t n, struct input in,
                 int level)
{
	const char *name = base_name(w[0]->text);
	reasons_add(c->r, POLICY_PRIVILEGE, "%s runs commands as another user",
	            name);
	for (size_t i = 1; i + 1 < n; i++) {
		const char *t = T(w[i]);
		if (t && (!strcmp(t, "-c") || !strcmp(t, "--command"))) {
			const char *code = T(w[i + 1]);
			char *label = xasprintf("%s -c", name);
			if (!code)
				dynamic_code(c, name, "-c");
			else
				policy_inline_shell(c, code, label);
			free(label);
			return;
		}
	}
	if (!strcmp(name, "runuser")) {
		long k = operand(w, n, 1, 1);
		if (k > 0)
			wrapped(c, w, n, (size_t)k, in, level);
		return;
	}
	stdin_code(c, name, in, 's');
}

/* watch CMD: its words are joined and run by sh -c (unless -x). */
static void h_watch(struct cls *c, struct sh_word **w, size_t n,
                    struct input in, int level)
{
	static const struct wrapper wa = {"watch", "nqa", NULL, 0, -1, NULL};
	size_t i = skip_options(&wa, w, n);
	if (has_opt(w, i, "x", (const char *const[]){"--exec", NULL})) {
		wrapped(c, w, n, i, in, level);
		return;
	}
	char *code = join_text(w, n, i);
	if (!code)
		dynamic_code(c, "watch", "");
	else
		policy_inline_shell(c, code, "watch");
	free(code);
}

static void h_parallel(struct cls *c, struct sh_word **w, size_t n,
                       struct input in, int level)
{
	size_t i = 1;
	while (i < n && is_opt(w[i]))
		i++;
	size_t j = i;
	while (j < n && !(T(w[j]) && !strncmp(T(w[j]), ":::", 3)))
		j++;
	if (j == i) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "parallel runs the commands it reads from its "
		            "input");
		return;
	}
	(void)in;
	wrapped(c, w, j, i, (struct input){0}, level);
}

static void h_script(struct cls *c, struct sh_word **w, size_t n,
                     struct input in, int level)
{
	(void)in, (void)level;
	for (size_t i = 1; i + 1 < n; i++) {
		const char *t = T(w[i]);
		if (t && (!strcmp(t, "-c") || !strcmp(t, "--command"))) {
			const char *code = T(w[i + 1]);
			if (!code)
				dynamic_code(c, "script", "-c");
			else
				policy_inline_shell(c, code, "script -c");
			return;
		}
	}
}

static void h_busybox(struct cls *c, struct sh_word **w, size_t n,
                      struct input in, int level)
{
	wrapped(c, w, n, 1, in, level);
}

/* --- commands ---------------------------------------------------- */

static void h_rm(struct cls *c, struct sh_word **w, size_t n, struct input in,
                 int level)
{
	(void)in, (void)level;
	const char *name = base_name(w[0]->text);
	int recursive =
	    has_opt(w, n, "rR", (const char *const[]){"--recursive", NULL});
	char *who = xasprintf("%s%s", name, recursive ? " -r" : "");
	int any = 0;
	for (size_t i = 1; i < n; i++) {
		if (is_opt(w[i]))
			continue;
		any = 1;
		check_destroy(c, w[i],
		              !strcmp(name, "shred")      ? "destroys"
		              : !strcmp(name, "truncate") ? "cuts"
		                                          : "deletes",
		              who);
	}
	if (!any)
		reasons_add(c->r, POLICY_DELETION, "%s deletes files", who);
	free(who);
}

static void h_dd(struct cls *c, struct sh_word **w, size_t n, struct input in,
                 int level)
{
	(void)in, (void)level;
	for (size_t i = 1; i < n; i++) {
		const char *t = T(w[i]);
		if (!t || strncmp(t, "of=", 3))
			continue;
		reasons_add(c->r, POLICY_DELETION, "dd writes raw data over %s",
		            t + 3);
		struct sh_word tmp = *w[i];
		tmp.text = (char *)t + 3;
		check_write(c, &tmp, 1, "dd");
	}
}

/* The last operand of cp, mv and ln, and whether -t was used. */
static long dest_operand(struct sh_word **w, size_t n)
{
	long last = -1;
	for (size_t i = 1; i < n; i++) {
		const char *t = T(w[i]);
		if (t && (!strcmp(t, "-t") || !strcmp(t, "-S") ||
		          !strcmp(t, "--target-directory") ||
		          !strcmp(t, "--suffix"))) {
			i++;
			continue;
		}
		if (t && !strncmp(t, "--target-directory=", 19))
			return -1;
		if (!is_opt(w[i]))
			last = (long)i;
	}
	return last;
}

static void h_copy(struct cls *c, struct sh_word **w, size_t n, struct input in,
                   int level)
{
	(void)in, (void)level;
	const char *name = base_name(w[0]->text);
	if (has_opt(w, n, "t",
	            (const char *const[]){"--target-directory", NULL}))
		return;
	long d = dest_operand(w, n);
	if (d < 2 && strcmp(name, "ln"))
		return;
	if (!strcmp(name, "mv"))
		for (long i = 1; i < d; i++)
			if (!is_opt(w[i]) && T(w[i])) {
				char rel[REL_MAX];
				if (policy_path(c, T(w[i]), rel) ==
				        PATH_INSIDE &&
				    policy_input_of(c->pol, rel))
					reasons_add(c->r, POLICY_DELETION,
					            "mv moves away the staged "
					            "input %s (your data)",
					            rel);
			}
	if (d < 1)
		return;
	if (!strcmp(name, "ln") &&
	    !has_opt(w, n, "f", (const char *const[]){"--force", NULL}))
		return;
	if (has_opt(w, n, "n", (const char *const[]){"--no-clobber", NULL}))
		return;
	check_write(c, w[d], 1, name);
}

static void h_tee(struct cls *c, struct sh_word **w, size_t n, struct input in,
                  int level)
{
	(void)in, (void)level;
	int append =
	    has_opt(w, n, "a", (const char *const[]){"--append", NULL});
	for (size_t i = 1; i < n; i++)
		if (!is_opt(w[i]))
			check_write(c, w[i], !append, "tee");
}

static void h_sed(struct cls *c, struct sh_word **w, size_t n, struct input in,
                  int level)
{
	(void)in, (void)level;
	int inplace = 0;
	for (size_t i = 1; i < n; i++) {
		const char *t = T(w[i]);
		if (!t || t[0] != '-' || t[1] == '-') {
			if (t && !strncmp(t, "--in-place", 10))
				inplace = 1;
			continue;
		}
		size_t k = strcspn(t + 1, "efl");
		if (memchr(t + 1, 'i', k))
			inplace = 1;
	}
	if (!inplace)
		return;
	int any = 0;
	int script = !has_opt(
	    w, n, "ef", (const char *const[]){"--expression", "--file", NULL});
	for (size_t i = 1; i < n; i++) {
		if (is_opt(w[i]))
			continue;
		if (script) {
			script = 0;
			continue;
		}
		any = 1;
		check_destroy(c, w[i], "edits in place", "sed -i");
	}
	if (!any)
		reasons_add(c->r, POLICY_DELETION,
		            "sed -i edits files in place");
}

static int setuid_mode(const char *m)
{
	if (strchr(m, 's') && (strchr(m, '+') || strchr(m, '=')))
		return 1;
	size_t len = strlen(m);
	return len == 4 && m[0] >= '2' && m[0] <= '7' &&
	       strspn(m, "01234567") == 4;
}

static void h_chmod(struct cls *c, struct sh_word **w, size_t n,
                    struct input in, int level)
{
	(void)in, (void)level;
	const char *name = base_name(w[0]->text);
	char rel[REL_MAX];
	long mode = operand(w, n, 1, 0);
	if (!strcmp(name, "chmod") && mode > 0 && T(w[mode]) &&
	    setuid_mode(T(w[mode])))
		reasons_add(c->r, POLICY_PRIVILEGE,
		            "chmod %s sets a set-user-ID or set-group-ID bit",
		            T(w[mode]));
	for (size_t i = mode > 0 ? (size_t)mode + 1 : n; i < n; i++) {
		const char *t = T(w[i]);
		if (!t || is_opt(w[i]))
			continue;
		enum path_kind k = policy_path(c, t, rel);
		if (k == PATH_OUTSIDE) {
			char *s = policy_snip(t, 60);
			reasons_add(c->r, POLICY_PRIVILEGE,
			            "%s changes %s, a system path", name, s);
			free(s);
		}
	}
}

static const char *const NET_CMDS[] = {
    "curl",     "wget",     "nc",         "ncat",       "netcat",
    "socat",    "ssh",      "scp",        "sftp",       "ftp",
    "telnet",   "aria2c",   "axel",       "lftp",       "http",
    "https",    "xh",       "dig",        "nslookup",   "host",
    "ping",     "ping6",    "traceroute", "tracepath",  "mtr",
    "whois",    "nmap",     "masscan",    "smbclient",  "rclone",
    "s3cmd",    "aws",      "gsutil",     "gcloud",     "az",
    "kubectl",  "gh",       "yt-dlp",     "youtube-dl", "huggingface-cli",
    "sendmail", "mail",     "mailx",      "mutt",       "ldapsearch",
    "tftp",     "websocat", "wscat",      "npx",        "bunx",
    "pnpx",     "uvx",      "pipx",       "mosh",       "autossh",
    "sshpass",  "ncftp",    "curlie",     "links",      "lynx",
    "w3m",      "httpie",   "grpcurl",    "openvpn",    NULL};

static void h_net(struct cls *c, struct sh_word **w, size_t n, struct input in,
                  int level)
{
	(void)n, (void)in, (void)level;
	const char *name = base_name(w[0]->text);
	reasons_add(c->r, POLICY_NETWORK, "%s talks to hosts on the network",
	            name);
	if (!strcmp(name, "sshpass"))
		wrapped(c, w, n, 1, (struct input){0}, level);
}

struct subcmds {
	const char *name;
	const char *const subs[12];
};

/* Package managers and the subcommands that download. */
static const struct subcmds PKG[] = {
    {"pip", {"install", "download", "wheel", NULL}},
    {"pip3", {"install", "download", "wheel", NULL}},
    {"npm",
     {"install", "i", "ci", "add", "update", "up", "upgrade", "publish", "exec",
      "x", "create", NULL}},
    {"pnpm",
     {"install", "i", "add", "update", "up", "dlx", "publish", "create", NULL}},
    {"yarn", {"install", "add", "upgrade", "dlx", "publish", "create", NULL}},
    {"bun", {"install", "i", "add", "update", "x", "create", NULL}},
    {"apt",
     {"install", "update", "upgrade", "full-upgrade", "source", "download",
      NULL}},
    {"apt-get",
     {"install", "update", "upgrade", "dist-upgrade", "source", "download",
      "build-dep", NULL}},
    {"aptitude", {"install", "update", "upgrade", NULL}},
    {"yum", {"install", "update", "upgrade", "makecache", NULL}},
    {"dnf", {"install", "update", "upgrade", "makecache", "download", NULL}},
    {"apk", {"add", "update", "upgrade", "fetch", NULL}},
    {"brew", {"install", "update", "upgrade", "fetch", "tap", NULL}},
    {"gem", {"install", "update", "fetch", NULL}},
    {"cargo", {"install", "fetch", "update", "publish", "add", NULL}},
    {"go", {"get", "install", "mod", NULL}},
    {"conda", {"install", "create", "update", "upgrade", NULL}},
    {"mamba", {"install", "create", "update", "upgrade", NULL}},
    {"micromamba", {"install", "create", "update", NULL}},
    {"uv", {"pip", "add", "sync", "tool", "run", "lock", NULL}},
    {"poetry", {"install", "add", "update", "lock", NULL}},
    {"pipenv", {"install", "update", "lock", "sync", NULL}},
    {"composer", {"install", "require", "update", NULL}},
    {"bundle", {"install", "update", NULL}},
    {"snap", {"install", "refresh", NULL}},
    {"flatpak", {"install", "update", NULL}},
    {"zypper", {"install", "in", "update", "refresh", NULL}},
    {"pacman", {"-S", "-Sy", "-Syu", "-Syy", NULL}},
    {"docker", {"pull", "push", "login", "search", NULL}},
    {"podman", {"pull", "push", "login", "search", NULL}},
    {"ollama", {"pull", "push", "run", NULL}},
};

static const struct subcmds *find_sub(const struct subcmds *t, size_t n,
                                      const char *name)
{
	for (size_t k = 0; k < n; k++)
		if (!strcmp(t[k].name, name))
			return &t[k];
	return NULL;
}

static void h_pkg(struct cls *c, struct sh_word **w, size_t n, struct input in,
                  int level)
{
	(void)in, (void)level;
	const char *name = base_name(w[0]->text);
	const struct subcmds *s = find_sub(PKG, sizeof PKG / sizeof *PKG, name);
	if (!strcmp(name, "docker") || !strcmp(name, "podman"))
		reasons_add(c->r, POLICY_PRIVILEGE,
		            "%s controls the container engine", name);
	long k = operand(w, n, 1, 0);
	if (!strcmp(name, "pacman"))
		k = 1 < n ? 1 : -1;
	const char *sub = k > 0 ? T(w[k]) : NULL;
	if (!sub || !in_list(sub, s->subs))
		return;
	if (!strcmp(name, "go") && !strcmp(sub, "mod")) {
		long m = operand(w, n, (size_t)k + 1, 0);
		static const char *const fetch[] = {"download", "tidy",
		                                    "vendor", NULL};
		if (m < 0 || !T(w[m]) || !in_list(T(w[m]), fetch))
			return;
	}
	reasons_add(c->r, POLICY_NETWORK,
	            "%s %s downloads or uploads "
	            "packages",
	            name, sub);
}

static void h_git_config(struct cls *c, const char *kv)
{
	static const char *const keys[] = {
	    "core.sshcommand",   "core.pager",
	    "core.editor",       "core.hookspath",
	    "core.fsmonitor",    "sequence.editor",
	    "credential.helper", "diff.external",
	    "core.gitproxy",     NULL};
	char key[64];
	size_t n = strcspn(kv, "=");
	if (n >= sizeof key)
		n = sizeof key - 1;
	for (size_t k = 0; k < n; k++)
		key[k] =
		    (char)(kv[k] >= 'A' && kv[k] <= 'Z' ? kv[k] + 32 : kv[k]);
	key[n] = '\0';
	const char *val = kv[n] ? kv + n + 1 : "";
	if (in_list(key, keys) || (!strncmp(key, "alias.", 6) && *val == '!') ||
	    strstr(key, ".command") || strstr(key, ".textconv"))
		reasons_add(c->r, POLICY_HIDDEN,
		            "git configuration %s makes git run a command",
		            key);
}

static void h_git(struct cls *c, struct sh_word **w, size_t n, struct input in,
                  int level)
{
	(void)in, (void)level;
	static const char *const net[] = {
	    "clone",        "fetch",     "pull",    "push",
	    "ls-remote",    "submodule", "archive", "send-email",
	    "request-pull", "lfs",       NULL};
	static const char *const del[] = {"clean", "rm", NULL};
	size_t i = 1;
	for (; i < n; i++) {
		const char *t = T(w[i]);
		if (!t || t[0] != '-')
			break;
		if ((!strcmp(t, "-c") || !strcmp(t, "--config-env")) &&
		    i + 1 < n) {
			if (T(w[i + 1]))
				h_git_config(c, T(w[i + 1]));
			i++;
		} else if (!strcmp(t, "-C") || !strcmp(t, "--git-dir") ||
		           !strcmp(t, "--work-tree") ||
		           !strcmp(t, "--namespace")) {
			i++;
		}
	}
	const char *sub = i < n ? T(w[i]) : NULL;
	if (!sub)
		return;
	if (in_list(sub, net))
		reasons_add(c->r, POLICY_NETWORK, "git %s talks to a remote",
		            sub);
	else if (!strcmp(sub, "remote") && i + 1 < n && T(w[i + 1]) &&
	         (!strcmp(T(w[i + 1]), "update") ||
	          !strcmp(T(w[i + 1]), "prune")))
		reasons_add(c->r, POLICY_NETWORK, "git remote %s fetches",
		            T(w[i + 1]));
	else if (in_list(sub, del))
		reasons_add(c->r, POLICY_DELETION, "git %s deletes files", sub);
	else if (!strcmp(sub, "reset") &&
	         has_opt(w + i, n - i, NULL,
	                 (const char *const[]){"--hard", "--merge", "--keep",
	                                       NULL}))
		reasons_add(c->r, POLICY_DELETION,
		            "git reset --hard discards changes to files");
	else if (!strcmp(sub, "checkout") || !strcmp(sub, "restore")) {
		for (size_t k = i + 1; k < n; k++)
			if (T(w[k]) &&
			    (!strcmp(T(w[k]), "--") || !strcmp(T(w[k]), ".") ||
			     !strcmp(T(w[k]), "-f") ||
			     !strcmp(sub, "restore"))) {
				reasons_add(c->r, POLICY_DELETION,
				            "git %s discards changes to files",
				            sub);
				break;
			}
	} else if (!strcmp(sub, "config") && i + 2 < n && T(w[i + 1]) &&
	           T(w[i + 2])) {
		char *kv = xasprintf("%s=%s", T(w[i + 1]), T(w[i + 2]));
		h_git_config(c, kv);
		free(kv);
	}
}

static void h_rsync(struct cls *c, struct sh_word **w, size_t n,
                    struct input in, int level)
{
	(void)in, (void)level;
	for (size_t i = 1; i < n; i++) {
		const char *t = T(w[i]);
		if (!t)
			continue;
		if (!strncmp(t, "--delete", 8) ||
		    !strcmp(t, "--remove-source-files"))
			reasons_add(c->r, POLICY_DELETION,
			            "rsync %s deletes files", t);
		if (t[0] == '-')
			continue;
		const char *colon = strchr(t, ':');
		const char *slash = strchr(t, '/');
		if (!strncmp(t, "rsync://", 8) ||
		    (colon && (!slash || colon < slash)))
			reasons_add(c->r, POLICY_NETWORK,
			            "rsync copies to or from another host (%s)",
			            t);
	}
}

static const char *const PRIV_CMDS[] = {
    "mount",    "umount",    "insmod",   "rmmod",    "modprobe", "setcap",
    "iptables", "ip6tables", "nft",      "passwd",   "chpasswd", "useradd",
    "userdel",  "usermod",   "groupadd", "groupdel", "visudo",   "losetup",
    "mknod",    "setpriv",   "capsh",    "swapon",   "swapoff",  "reboot",
    "shutdown", "halt",      "poweroff", "service",  "newgrp",   "sysctl",
    "dmesg",    "chattr",    NULL};

static void h_priv(struct cls *c, struct sh_word **w, size_t n, struct input in,
                   int level)
{
	(void)n, (void)in, (void)level;
	const char *name = base_name(w[0]->text);
	if (!strcmp(name, "sysctl") && n == 2)
		return; /* reading one key */
	reasons_add(c->r, POLICY_PRIVILEGE, "%s needs or changes privileges",
	            name);
}

static void h_mkfs(struct cls *c, struct sh_word **w, size_t n, struct input in,
                   int level)
{
	(void)n, (void)in, (void)level;
	const char *name = base_name(w[0]->text);
	reasons_add(c->r, POLICY_DELETION, "%s erases a file system", name);
	reasons_add(c->r, POLICY_PRIVILEGE, "%s needs privileges", name);
}

static void h_kill(struct cls *c, struct sh_word **w, size_t n, struct input in,
                   int level)
{
	(void)n, (void)in, (void)level;
	const char *name = base_name(w[0]->text);
	if (!strcmp(name, "kill") && n == 2 && T(w[1]) &&
	    !strcmp(T(w[1]), "-l"))
		return;
	reasons_add(c->r, POLICY_PROCESS, "%s stops or signals processes",
	            name);
}

static void h_systemctl(struct cls *c, struct sh_word **w, size_t n,
                        struct input in, int level)
{
	(void)in, (void)level;
	static const char *const persist[] = {
	    "enable", "link", "edit", "set-default", "mask", "preset", NULL};
	static const char *const proc[] = {
	    "start", "stop", "restart", "kill", "reload", "isolate", NULL};
	long k = operand(w, n, 1, 0);
	const char *sub = k > 0 ? T(w[k]) : NULL;
	if (sub && in_list(sub, persist))
		reasons_add(c->r, POLICY_PERSISTENCE,
		            "systemctl %s makes a service start by itself",
		            sub);
	if (sub && in_list(sub, proc))
		reasons_add(c->r, POLICY_PROCESS,
		            "systemctl %s starts or stops services", sub);
	if (sub && strncmp(sub, "status", 6) && strncmp(sub, "list", 4) &&
	    strncmp(sub, "is-", 3) && strcmp(sub, "show") && strcmp(sub, "cat"))
		reasons_add(c->r, POLICY_PRIVILEGE,
		            "systemctl %s changes the system's services", sub);
}

static void h_persist(struct cls *c, struct sh_word **w, size_t n,
                      struct input in, int level)
{
	(void)in, (void)level;
	const char *name = base_name(w[0]->text);
	if (!strcmp(name, "crontab") &&
	    (n == 2 && T(w[1]) && !strcmp(T(w[1]), "-l")))
		return;
	reasons_add(c->r, POLICY_PERSISTENCE,
	            "%s schedules commands to run later", name);
}

static void h_eval(struct cls *c, struct sh_word **w, size_t n, struct input in,
                   int level)
{
	(void)in, (void)level;
	reasons_add(c->r, POLICY_HIDDEN,
	            "eval runs a string as a command: what runs is built "
	            "from text");
	char *code = join_text(w, n, 1);
	if (code)
		policy_inline_shell(c, code, "eval");
	else if (c->decoder)
		reasons_add(c->r, POLICY_HIDDEN,
		            "decodes a payload (%s) and runs it", c->decoder);
	free(code);
}

static void h_source(struct cls *c, struct sh_word **w, size_t n,
                     struct input in, int level)
{
	(void)level;
	const char *name = w[0]->text;
	if (n < 2)
		return;
	script_operand(c, name, w[1], in, 's');
}

static void h_alias(struct cls *c, struct sh_word **w, size_t n,
                    struct input in, int level)
{
	(void)in, (void)level;
	const char *name = base_name(w[0]->text);
	for (size_t i = 1; i < n; i++) {
		const char *t = T(w[i]);
		int hides = !t || strchr(t, '=');
		if (!strcmp(name, "shopt"))
			hides = t && !strcmp(t, "expand_aliases");
		else if (!strcmp(name, "enable"))
			hides = t && !strcmp(t, "-f");
		else if (!strcmp(name, "hash"))
			hides = t && !strncmp(t, "-p", 2);
		if (hides) {
			reasons_add(c->r, POLICY_HIDDEN,
			            "%s makes a name run something else (%s)",
			            name, w[i]->raw);
			return;
		}
	}
}

static void h_trap(struct cls *c, struct sh_word **w, size_t n, struct input in,
                   int level)
{
	(void)in, (void)level;
	long k = operand(w, n, 1, 0);
	if (k < 0 || n - (size_t)k < 2)
		return;
	const char *code = T(w[k]);
	if (!code)
		dynamic_code(c, "trap", "");
	else if (strcmp(code, "-"))
		policy_inline_shell(c, code, "trap");
}

static void h_cd(struct cls *c, struct sh_word **w, size_t n, struct input in,
                 int level)
{
	(void)in, (void)level;
	const char *name = base_name(w[0]->text);
	if (!strcmp(name, "popd")) {
		c->cwd_state = CWD_UNKNOWN;
		return;
	}
	long k = operand(w, n, 1, 0);
	if (k < 0) {
		c->cwd_state = CWD_WORKSPACE;
		c->cwd[0] = '\0';
		return;
	}
	const char *t = T(w[k]);
	char rel[REL_MAX];
	if (!t || !strcmp(t, "-")) {
		c->cwd_state = CWD_UNKNOWN;
		return;
	}
	enum path_kind pk = policy_path(c, t, rel);
	if (pk == PATH_INSIDE && strlen(rel) < sizeof c->cwd) {
		c->cwd_state = CWD_WORKSPACE;
		const char *d = strcmp(rel, ".") ? rel : "";
		memcpy(c->cwd, d, strlen(d) + 1); /* length checked above */
	} else if (pk == PATH_UNKNOWN || pk == PATH_INSIDE) {
		c->cwd_state = CWD_UNKNOWN;
	} else {
		c->cwd_state = CWD_ELSEWHERE;
	}
}

struct handler {
	const char *name;
	handler_fn fn;
};

static const struct handler HANDLERS[] = {
    {"rm", h_rm},
    {"unlink", h_rm},
    {"shred", h_rm},
    {"srm", h_rm},
    {"wipe", h_rm},
    {"truncate", h_rm},
    {"wipefs", h_mkfs},
    {"dd", h_dd},
    {"find", h_find},
    {"mv", h_copy},
    {"cp", h_copy},
    {"ln", h_copy},
    {"tee", h_tee},
    {"sed", h_sed},
    {"gsed", h_sed},
    {"chmod", h_chmod},
    {"chown", h_chmod},
    {"chgrp", h_chmod},
    {"rsync", h_rsync},
    {"git", h_git},
    {"kill", h_kill},
    {"pkill", h_kill},
    {"killall", h_kill},
    {"skill", h_kill},
    {"xkill", h_kill},
    {"killall5", h_kill},
    {"systemctl", h_systemctl},
    {"crontab", h_persist},
    {"at", h_persist},
    {"batch", h_persist},
    {"update-rc.d", h_persist},
    {"chkconfig", h_persist},
    {"launchctl", h_persist},
    {"eval", h_eval},
    {"source", h_source},
    {".", h_source},
    {"alias", h_alias},
    {"shopt", h_alias},
    {"enable", h_alias},
    {"hash", h_alias},
    {"trap", h_trap},
    {"cd", h_cd},
    {"pushd", h_cd},
    {"popd", h_cd},
    {"env", h_env},
    {"command", h_command},
    {"flock", h_flock},
    {"su", h_su},
    {"runuser", h_su},
    {"watch", h_watch},
    {"parallel", h_parallel},
    {"script", h_script},
    {"busybox", h_busybox},
    {"awk", h_awk},
    {"gawk", h_awk},
    {"mawk", h_awk},
    {"nawk", h_awk},
};

static handler_fn find_handler(const char *b)
{
	for (size_t k = 0; k < sizeof HANDLERS / sizeof *HANDLERS; k++)
		if (!strcmp(HANDLERS[k].name, b))
			return HANDLERS[k].fn;
	if (is_shell(b))
		return h_shell;
	if (is_python(b))
		return h_python;
	if (find_interp(b))
		return h_interp;
	if (find_wrapper(b))
		return h_wrapper;
	if (in_list(b, NET_CMDS))
		return h_net;
	if (find_sub(PKG, sizeof PKG / sizeof *PKG, b))
		return h_pkg;
	if (in_list(b, PRIV_CMDS))
		return h_priv;
	if (!strncmp(b, "mkfs", 4))
		return h_mkfs;
	return NULL;
}

static void classify_argv(struct cls *c, struct sh_word **w, size_t n,
                          struct input in, int level)
{
	static const char *const quiet[] = {"echo", "printf", ":",
	                                    "true", "false",  NULL};
	if (!n)
		return;
	if (level > MAX_WRAPPERS) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "too many commands wrapped in each other to check");
		return;
	}
	const struct sh_word *w0 = w[0];
	char *raw = policy_snip(w0->raw, 40);
	if (w0->flags & SH_W_DYNAMIC) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "the command name comes from %s (%s): what runs is "
		            "only known at run time",
		            (w0->flags & (SH_W_CMDSUB | SH_W_PROCSUB))
		                ? "a command substitution"
		                : "a variable",
		            raw);
		if (c->decoder)
			reasons_add(c->r, POLICY_HIDDEN,
			            "decodes a payload (%s) and runs it",
			            c->decoder);
		free(raw);
		return;
	}
	if (w0->flags & (SH_W_GLOB | SH_W_BRACE)) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "the command name is a pattern (%s) that bash "
		            "expands to something else",
		            raw);
		free(raw);
		return;
	}
	free(raw);
	const char *b = base_name(w0->text);
	if (!*b || in_list(b, quiet))
		return;
	check_paths(c, b, w, n);
	handler_fn fn = find_handler(b);
	if (fn)
		fn(c, w, n, in, level);
}

/* --- parts ------------------------------------------------------- */

static const struct sh_redir *stdin_doc(const struct sh_cmd *cmd)
{
	const struct sh_redir *doc = NULL;
	for (size_t k = 0; k < cmd->nredirs; k++) {
		const struct sh_redir *r = cmd->redirs[k];
		if ((r->fd == -1 || r->fd == 0) &&
		    (!strcmp(r->op, "<<") || !strcmp(r->op, "<<-") ||
		     !strcmp(r->op, "<<<")))
			doc = r;
		else if ((r->fd == -1 || r->fd == 0) && !strcmp(r->op, "<"))
			doc = NULL;
	}
	return doc;
}

static void classify_cmd(struct cls *c, const struct sh_cmd *cmd)
{
	for (size_t k = 0; k < cmd->nredirs; k++)
		check_redir(c, cmd->redirs[k]);
	if (cmd->cond || !cmd->argc)
		return;
	struct input in = {cmd->stdin_fed, stdin_doc(cmd)};
	for (size_t k = 0; k < cmd->nredirs; k++)
		if (!strcmp(cmd->redirs[k]->op, "<") &&
		    (cmd->redirs[k]->fd == -1 || cmd->redirs[k]->fd == 0))
			in.fed = 0; /* a file: a script like any other */
	classify_argv(c, cmd->argv, cmd->argc, in, 0);
}

static void canon_redir(struct buf *b, const struct sh_redir *r)
{
	if (r->fd >= 0)
		buf_printf(b, "%d", r->fd);
	buf_puts(b, r->op);
	if (r->body) {
		buf_puts(b, r->arg->raw);
		buf_puts(b, "\n");
		buf_puts(b, r->body);
		buf_puts(b, r->arg->text);
		return;
	}
	char *s = sh_word_canon(r->arg);
	buf_puts(b, s);
	free(s);
}

/* A simple command as rules see it: words re-quoted the plain way, so
 * r''m, \rm and "rm" all read rm. */
static char *canon_cmd(const struct sh_cmd *cmd)
{
	struct buf b;
	buf_init(&b, 0);
	for (size_t k = 0; k < cmd->nassigns; k++) {
		const struct sh_word *w = cmd->assigns[k];
		const char *eq = strchr(w->text, '=');
		if (b.len)
			buf_puts(&b, " ");
		if ((w->flags & (SH_W_DYNAMIC | SH_W_EXPANDS)) || !eq) {
			buf_puts(&b, w->raw);
			continue;
		}
		char *v = sh_quote(eq + 1);
		buf_printf(&b, "%.*s%s", (int)(eq + 1 - w->text), w->text,
		           *v == '\'' || eq[1] ? v : "");
		free(v);
	}
	for (size_t k = 0; k < cmd->argc; k++) {
		char *s = cmd->cond ? xstrdup(cmd->argv[k]->raw)
		                    : sh_word_canon(cmd->argv[k]);
		if (b.len)
			buf_puts(&b, " ");
		buf_puts(&b, s);
		free(s);
	}
	for (size_t k = 0; k < cmd->nredirs; k++) {
		if (b.len)
			buf_puts(&b, " ");
		canon_redir(&b, cmd->redirs[k]);
	}
	return buf_detach(&b);
}

/* A decoder in the line: decoded data that then runs is hidden. */
static const char *find_decoder(const struct sh_parse *sp)
{
	static const char *const always[] = {
	    "uudecode", "gunzip",  "zcat",   "bzcat", "xzcat", "unxz",
	    "bunzip2",  "zstdcat", "unzstd", "lzcat", NULL};
	static const char *const with_d[] = {
	    "base64", "base32", "basenc",  "gzip", "bzip2",
	    "xz",     "zstd",   "openssl", "lzma", NULL};
	for (size_t k = 0; k < sp->ncmds; k++) {
		const struct sh_cmd *cmd = sp->cmds[k];
		if (!cmd->argc || !T(cmd->argv[0]))
			continue;
		const char *b = base_name(cmd->argv[0]->text);
		if (in_list(b, always))
			return b;
		if (!strcmp(b, "xxd") &&
		    has_opt(cmd->argv, cmd->argc, "r", NULL))
			return "xxd -r";
		if (in_list(b, with_d) &&
		    has_opt(cmd->argv, cmd->argc, "dD",
		            (const char *const[]){"--decode", NULL})) {
			return !strcmp(b, "base64")   ? "base64 -d"
			       : !strcmp(b, "base32") ? "base32 -d"
			                              : b;
		}
	}
	return NULL;
}

static void to_part(struct policy_part *part, struct reasons *r,
                    struct strv *forms)
{
	part->reasons = r->v;
	part->nreasons = r->n;
	part->forms = forms->v;
	part->nforms = forms->n;
	memset(r, 0, sizeof *r);
	memset(forms, 0, sizeof *forms);
}

void policy_shell_parts(const struct policy *pol, const char *cmd,
                        struct policy_part **parts, size_t *nparts,
                        char **parse_error)
{
	struct sh_parse *sp = sh_parse(cmd, strlen(cmd), 0);
	if (sp->error)
		*parse_error = xstrdup(sp->error);
	size_t n = sp->ncmds + (sp->nxredirs ? 1 : 0);
	struct policy_part *v = xcalloc(n ? n : 1, sizeof *v);
	struct cls c = {.pol = pol, .cwd_state = CWD_WORKSPACE};
	c.decoder = find_decoder(sp);
	for (size_t k = 0; k < sp->ncmds; k++) {
		struct reasons r = {0};
		struct strv forms = {0};
		c.r = &r;
		c.forms = &forms;
		v[k].text = canon_cmd(sp->cmds[k]);
		if (sp->cmds[k]->argc && !sp->cmds[k]->cond)
			add_forms(&c, sp->cmds[k]->argv, sp->cmds[k]->argc);
		classify_cmd(&c, sp->cmds[k]);
		to_part(&v[k], &r, &forms);
	}
	if (sp->nxredirs) {
		struct reasons r = {0};
		struct strv forms = {0};
		struct buf b;
		buf_init(&b, 0);
		c.r = &r;
		c.forms = &forms;
		for (size_t k = 0; k < sp->nxredirs; k++) {
			if (b.len)
				buf_puts(&b, " ");
			canon_redir(&b, sp->xredirs[k]);
			check_redir(&c, sp->xredirs[k]);
		}
		v[sp->ncmds].text = buf_detach(&b);
		to_part(&v[sp->ncmds], &r, &forms);
	}
	*parts = v;
	*nparts = n;
	sh_parse_free(sp);
}

void policy_inline_shell(struct cls *c, const char *code, const char *label)
{
	if (c->depth >= POLICY_MAX_INLINE) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "%s: inline code nested too deeply to check",
		            label);
		return;
	}
	struct sh_parse *sp = sh_parse(code, strlen(code), c->depth + 1);
	if (sp->error) {
		char *s = policy_snip(sp->error, 80);
		reasons_add(c->r, POLICY_HIDDEN,
		            "%s: the inline shell code cannot be parsed (%s)",
		            label, s);
		free(s);
	}
	struct cls inner = *c;
	inner.depth++;
	inner.cwd_state = CWD_WORKSPACE;
	inner.cwd[0] = '\0';
	const char *dec = find_decoder(sp);
	if (dec)
		inner.decoder = dec;
	for (size_t k = 0; k < sp->ncmds; k++) {
		strv_add(c->forms, canon_cmd(sp->cmds[k]));
		if (sp->cmds[k]->argc && !sp->cmds[k]->cond)
			add_forms(&inner, sp->cmds[k]->argv, sp->cmds[k]->argc);
		classify_cmd(&inner, sp->cmds[k]);
	}
	for (size_t k = 0; k < sp->nxredirs; k++)
		check_redir(&inner, sp->xredirs[k]);
	sh_parse_free(sp);
}
