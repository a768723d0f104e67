/* python.c: the reasons of python code (the python tool, python -c,
 * here-documents into python). A small tokenizer finds names, calls
 * and string literals; imports and aliases are followed so that
 * `import subprocess as sp; sp.run(...)` is seen for what it is. A
 * command given as a literal to os.system or subprocess is classified
 * as shell code; one that is not a literal is hidden intent. */
#include "internal.h"

#include "assay/buf.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

#define PY_MAX_TOKENS 200000

enum pytok { PY_NAME, PY_STR, PY_OP, PY_NUM };

struct tok {
	enum pytok type;
	char *text; /* name, operator, or the string's value */
	int line;
	int fstring;
};

struct toks {
	struct tok *v;
	size_t n, cap;
	int truncated;
};

struct alias {
	char *name;   /* as used in the code */
	char *target; /* full dotted name */
};

struct py {
	struct cls *c;
	const char *where;
	struct toks t;
	struct alias *al;
	size_t nal, capal;
};

/* --- tokens ------------------------------------------------------ */

/* One more token (past PY_MAX_TOKENS the code is marked truncated). */
static void py_push(struct toks *t, enum pytok type, char *text, int line)
{
	if (t->n >= PY_MAX_TOKENS) {
		t->truncated = 1;
		free(text);
		return;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->v = xrealloc(t->v, t->cap * sizeof *t->v);
	}
	t->v[t->n++] = (struct tok){type, text, line, 0};
}

/* A character of a python name (any non-ASCII byte counts). */
static int py_name_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
}

/* A string literal at s (after its prefix); returns the end. */
static const char *py_lex_string(const char *s, int raw, struct buf *out,
                                 int *line)
{
	char q = *s;
	int triple = s[1] == q && s[2] == q;
	s += triple ? 3 : 1;
	while (*s) {
		if (*s == '\\' && s[1]) {
			if (raw) {
				buf_append(out, s, 2);
			} else {
				static const char from[] = "ntr0\\'\"";
				static const char to[] = "\n\t\r\0\\'\"";
				const char *k = strchr(from, s[1]);
				if (k && s[1] != '0')
					buf_append(out, &to[k - from], 1);
				else if (s[1] != '\n')
					buf_append(out, s, 2);
			}
			if (s[1] == '\n')
				(*line)++;
			s += 2;
			continue;
		}
		if (*s == q && (!triple || (s[1] == q && s[2] == q)))
			return s + (triple ? 3 : 1);
		if (*s == '\n') {
			(*line)++;
			if (!triple)
				return s;
		}
		buf_append(out, s, 1);
		s++;
	}
	return s;
}

/* The string prefix (r, b, f, rb, fr... any case) before a quote. */
static int py_string_prefix(const char *s, size_t n, int *raw, int *f)
{
	if (n > 2)
		return 0;
	*raw = *f = 0;
	for (size_t k = 0; k < n; k++) {
		char c = (char)(s[k] | 0x20);
		if (c == 'r')
			*raw = 1;
		else if (c == 'f')
			*f = 1;
		else if (c != 'b' && c != 'u')
			return 0;
	}
	return 1;
}

/* Names, strings, numbers and operators of the code, with line numbers. */
static void py_tokenize(const char *s, struct toks *t)
{
	int line = 1;
	while (*s && !t->truncated) {
		unsigned char c = (unsigned char)*s;
		if (c == '\n') {
			line++;
			s++;
		} else if (c == '#') {
			s += strcspn(s, "\n");
		} else if (c == '\'' || c == '"') {
			struct buf b;
			buf_init(&b, 0);
			s = py_lex_string(s, 0, &b, &line);
			py_push(t, PY_STR, buf_detach(&b), line);
		} else if (py_name_char(c) && !(c >= '0' && c <= '9')) {
			const char *e = s;
			while (*e && py_name_char((unsigned char)*e))
				e++;
			int raw, f;
			if ((*e == '\'' || *e == '"') &&
			    py_string_prefix(s, (size_t)(e - s), &raw, &f)) {
				struct buf b;
				buf_init(&b, 0);
				s = py_lex_string(e, raw, &b, &line);
				py_push(t, PY_STR, buf_detach(&b), line);
				if (t->n)
					t->v[t->n - 1].fstring = f;
				continue;
			}
			py_push(t, PY_NAME, xstrndup(s, (size_t)(e - s)), line);
			s = e;
		} else if (c >= '0' && c <= '9') {
			while (*s &&
			       (py_name_char((unsigned char)*s) || *s == '.'))
				s++;
			py_push(t, PY_NUM, xstrdup("0"), line);
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\\') {
			s++;
		} else {
			py_push(t, PY_OP, xstrndup(s, 1), line);
			s++;
		}
	}
}

/* Whether token i has type and (unless NULL) text. */
static int py_is(const struct py *p, size_t i, enum pytok type,
                 const char *text)
{
	return i < p->t.n && p->t.v[i].type == type &&
	       (!text || !strcmp(p->t.v[i].text, text));
}

/* --- imports ----------------------------------------------------- */

/* name stands for target (import x as name, from m import name). */
static void py_add_alias(struct py *p, const char *name, const char *target)
{
	if (p->nal == p->capal) {
		p->capal = p->capal ? p->capal * 2 : 8;
		p->al = xrealloc(p->al, p->capal * sizeof *p->al);
	}
	p->al[p->nal].name = xstrdup(name);
	p->al[p->nal].target = xstrdup(target);
	p->nal++;
}

/* The full dotted name an alias stands for (name itself if none). */
static const char *py_resolve(const struct py *p, const char *name)
{
	for (size_t k = p->nal; k-- > 0;)
		if (!strcmp(p->al[k].name, name))
			return p->al[k].target;
	return name;
}

/* A dotted name from token i; *end is the token after it. */
static char *py_dotted(const struct py *p, size_t i, size_t *end)
{
	struct buf b;
	buf_init(&b, 0);
	while (py_is(p, i, PY_NAME, NULL)) {
		buf_puts(&b, p->t.v[i].text);
		if (!py_is(p, i + 1, PY_OP, ".") ||
		    !py_is(p, i + 2, PY_NAME, NULL)) {
			i++;
			break;
		}
		buf_puts(&b, ".");
		i += 2;
	}
	*end = i;
	return buf_detach(&b);
}

/* Whether the dotted name s is prefix or inside it (os matches os.path). */
static int py_starts(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	return !strncmp(s, prefix, n) && (s[n] == '\0' || s[n] == '.');
}

static const char *const NET_MODULES[] = {"socket",
                                          "urllib",
                                          "urllib2",
                                          "urllib3",
                                          "http.client",
                                          "http.server",
                                          "httplib",
                                          "requests",
                                          "httpx",
                                          "aiohttp",
                                          "ftplib",
                                          "smtplib",
                                          "poplib",
                                          "imaplib",
                                          "telnetlib",
                                          "paramiko",
                                          "websocket",
                                          "websockets",
                                          "xmlrpc",
                                          "socketserver",
                                          "ssl",
                                          "asyncssh",
                                          "pycurl",
                                          "grpc",
                                          "boto3",
                                          "botocore",
                                          "google.cloud",
                                          "huggingface_hub",
                                          "wget",
                                          "ftputil",
                                          "dns",
                                          "scapy",
                                          "zmq",
                                          "paho",
                                          "pysftp",
                                          "fabric",
                                          "tornado.httpclient",
                                          "twisted",
                                          "smbclient",
                                          "webbrowser",
                                          "kaggle",
                                          "gdown",
                                          "yfinance",
                                          "pandas_datareader",
                                          NULL};
static const char *const EXEC_MODULES[] = {
    "subprocess", "pty", "commands", "sh", "pexpect", "plumbum", NULL};
static const char *const HIDDEN_MODULES[] = {
    "importlib", "ctypes",   "cffi",        "marshal",
    "code",      "builtins", "__builtin__", NULL};

/* Whether module m is one of list or inside one of them. */
static int py_module_in(const char *m, const char *const *list)
{
	for (; *list; list++)
		if (py_starts(m, *list))
			return 1;
	return 0;
}

/* The reasons of importing module m. */
static void py_check_module(struct py *p, const char *m)
{
	struct cls *c = p->c;
	if (py_module_in(m, NET_MODULES))
		reasons_add(c->r, POLICY_NETWORK, "%s imports %s", p->where, m);
	if (py_module_in(m, EXEC_MODULES))
		reasons_add(c->r, POLICY_EXEC,
		            "%s imports %s, which runs "
		            "commands",
		            p->where, m);
	if (py_module_in(m, HIDDEN_MODULES))
		reasons_add(c->r, POLICY_HIDDEN,
		            "%s imports %s, which can run code the policy "
		            "cannot see",
		            p->where, m);
	if (py_starts(m, "crontab"))
		reasons_add(c->r, POLICY_PERSISTENCE, "%s imports %s", p->where,
		            m);
}

/* import a.b [as c], ... | from a.b import x [as y], ... */
static void py_scan_imports(struct py *p)
{
	for (size_t i = 0; i < p->t.n; i++) {
		size_t end;
		if (py_is(p, i, PY_NAME, "import") &&
		    !(i > 0 && py_is(p, i - 1, PY_NAME, NULL))) {
			i++;
			for (;;) {
				char *m = py_dotted(p, i, &end);
				if (!*m) {
					free(m);
					break;
				}
				py_check_module(p, m);
				i = end;
				if (py_is(p, i, PY_NAME, "as") &&
				    py_is(p, i + 1, PY_NAME, NULL)) {
					py_add_alias(p, p->t.v[i + 1].text, m);
					i += 2;
				} else {
					char *first =
					    xstrndup(m, strcspn(m, "."));
					py_add_alias(p, first, first);
					free(first);
				}
				free(m);
				if (!py_is(p, i, PY_OP, ","))
					break;
				i++;
			}
		} else if (py_is(p, i, PY_NAME, "from")) {
			char *m = py_dotted(p, i + 1, &end);
			if (!*m || !py_is(p, end, PY_NAME, "import")) {
				free(m);
				continue;
			}
			py_check_module(p, m);
			i = end + 1;
			if (py_is(p, i, PY_OP, "("))
				i++;
			while (py_is(p, i, PY_NAME, NULL) ||
			       py_is(p, i, PY_OP, "*")) {
				const char *name = p->t.v[i].text;
				char *full = xasprintf("%s.%s", m, name);
				py_check_module(p, full);
				size_t next = i + 1;
				if (py_is(p, next, PY_NAME, "as") &&
				    py_is(p, next + 1, PY_NAME, NULL)) {
					name = p->t.v[next + 1].text;
					next += 2;
				}
				py_add_alias(p, name, full);
				free(full);
				i = next;
				if (!py_is(p, i, PY_OP, ","))
					break;
				i++;
			}
			free(m);
		}
	}
}

/* --- calls ------------------------------------------------------- */

static const char *const EXEC_CALLS[] = {"os.system",
                                         "os.popen",
                                         "os.spawnl",
                                         "os.spawnle",
                                         "os.spawnlp",
                                         "os.spawnlpe",
                                         "os.spawnv",
                                         "os.spawnve",
                                         "os.spawnvp",
                                         "os.spawnvpe",
                                         "os.execl",
                                         "os.execle",
                                         "os.execlp",
                                         "os.execlpe",
                                         "os.execv",
                                         "os.execve",
                                         "os.execvp",
                                         "os.execvpe",
                                         "os.posix_spawn",
                                         "os.posix_spawnp",
                                         "subprocess.run",
                                         "subprocess.call",
                                         "subprocess.Popen",
                                         "subprocess.check_output",
                                         "subprocess.check_call",
                                         "subprocess.getoutput",
                                         "subprocess.getstatusoutput",
                                         "pty.spawn",
                                         "commands.getoutput",
                                         "asyncio.create_subprocess_shell",
                                         "asyncio.create_subprocess_exec",
                                         "pexpect.spawn",
                                         "pexpect.run",
                                         "platform.popen",
                                         NULL};
static const char *const DELETE_CALLS[] = {"shutil.rmtree",
                                           "os.remove",
                                           "os.unlink",
                                           "os.rmdir",
                                           "os.removedirs",
                                           "os.truncate",
                                           "os.rename",
                                           "os.replace",
                                           "shutil.move",
                                           "send2trash.send2trash",
                                           NULL};
static const char *const NET_CALLS[] = {
    "nltk.download",
    "torch.hub.load",
    "torch.hub.download_url_to_file",
    "keras.utils.get_file",
    "tensorflow.keras.utils.get_file",
    "tf.keras.utils.get_file",
    "datasets.load_dataset",
    "seaborn.load_dataset",
    "sns.load_dataset",
    "pip.main",
    "sklearn.datasets.fetch_openml",
    "sklearn.datasets.fetch_california_housing",
    NULL};
static const char *const PRIV_CALLS[] = {
    "os.setuid",   "os.setgid",    "os.seteuid", "os.setegid", "os.setreuid",
    "os.setregid", "os.setresuid", "os.chroot",  "os.chown",   "os.lchown",
    NULL};
static const char *const PROC_CALLS[] = {"os.kill", "os.killpg",
                                         "signal.pthread_kill", NULL};
static const char *const HIDDEN_CALLS[] = {"eval",
                                           "exec",
                                           "compile",
                                           "__import__",
                                           "execfile",
                                           "marshal.loads",
                                           "types.CodeType",
                                           "types.FunctionType",
                                           "code.interact",
                                           "builtins.exec",
                                           "builtins.eval",
                                           "runpy.run_path",
                                           "runpy.run_module",
                                           NULL};

/* Whether name is one of the NULL-terminated list. */
static int py_call_in(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(name, *list))
			return 1;
	return 0;
}

/* The command of os.system("...") or subprocess.run([...]) when it is
 * written out as literals; NULL otherwise. */
static char *py_literal_command(const struct py *p, size_t i)
{
	if (py_is(p, i, PY_STR, NULL) &&
	    (py_is(p, i + 1, PY_OP, ",") || py_is(p, i + 1, PY_OP, ")")))
		return p->t.v[i].fstring ? NULL : xstrdup(p->t.v[i].text);
	if (!py_is(p, i, PY_OP, "[") && !py_is(p, i, PY_OP, "("))
		return NULL;
	struct buf b;
	buf_init(&b, 0);
	for (i++;; i += 2) {
		if (!py_is(p, i, PY_STR, NULL) || p->t.v[i].fstring) {
			buf_free(&b);
			return NULL;
		}
		char *q = sh_quote(p->t.v[i].text);
		if (b.len)
			buf_puts(&b, " ");
		buf_puts(&b, q);
		free(q);
		if (py_is(p, i + 1, PY_OP, "]") || py_is(p, i + 1, PY_OP, ")"))
			return buf_detach(&b);
		if (!py_is(p, i + 1, PY_OP, ",")) {
			buf_free(&b);
			return NULL;
		}
	}
}

/* A call that runs a command: a literal command is classified as shell
 * code, another is hidden. */
static void py_exec_call(struct py *p, const char *name, size_t args)
{
	struct cls *c = p->c;
	char *cmd = py_literal_command(p, args);
	if (!cmd) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "%s runs a command built at run time (%s): the "
		            "policy cannot read it",
		            p->where, name);
		return;
	}
	char *s = policy_snip(cmd, 60);
	reasons_add(c->r, POLICY_EXEC, "%s runs the command %s (%s)", p->where,
	            s, name);
	char *label = xasprintf("%s (%s)", p->where, name);
	policy_inline_shell(c, cmd, label);
	free(label);
	free(s);
	free(cmd);
}

/* Reasons for a call of name (resolved through imports); 1 if it is
 * one the policy knows. */
static int py_check_call(struct py *p, const char *name, size_t args,
                         int method)
{
	struct cls *c = p->c;
	static const char *const del_methods[] = {"unlink", "rmdir", "rmtree",
	                                          NULL};
	static const char *const reach[] = {
	    "os", "subprocess", "shutil", "builtins", "__builtins__", NULL};
	if (method) {
		if (!py_call_in(name, del_methods))
			return 0;
		reasons_add(c->r, POLICY_DELETION, "%s deletes files (.%s())",
		            p->where, name);
	} else if (py_call_in(name, EXEC_CALLS) || py_starts(name, "sh") ||
	           py_starts(name, "plumbum.local")) {
		py_exec_call(p, name, args);
	} else if (py_call_in(name, DELETE_CALLS)) {
		reasons_add(c->r, POLICY_DELETION,
		            "%s deletes or moves files "
		            "(%s)",
		            p->where, name);
	} else if (py_call_in(name, NET_CALLS) ||
	           !strncmp(name, "sklearn.datasets.fetch_", 23)) {
		reasons_add(c->r, POLICY_NETWORK, "%s downloads data (%s)",
		            p->where, name);
	} else if (py_call_in(name, PRIV_CALLS)) {
		reasons_add(c->r, POLICY_PRIVILEGE,
		            "%s changes privileges "
		            "(%s)",
		            p->where, name);
	} else if (py_call_in(name, PROC_CALLS)) {
		reasons_add(c->r, POLICY_PROCESS, "%s signals processes (%s)",
		            p->where, name);
	} else if (py_call_in(name, HIDDEN_CALLS)) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "%s runs code built from data (%s)", p->where,
		            name);
	} else if (!strcmp(name, "getattr") && py_is(p, args, PY_NAME, NULL) &&
	           py_module_in(py_resolve(p, p->t.v[args].text), reach)) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "%s looks up a function of %s by name (getattr)",
		            p->where, py_resolve(p, p->t.v[args].text));
	} else if (!strcmp(name, "os.chdir") && py_is(p, args, PY_STR, NULL)) {
		char rel[POLICY_REL_MAX];
		if (policy_path(c, p->t.v[args].text, rel) == PATH_OUTSIDE)
			reasons_add(c->r, POLICY_OUTSIDE, "%s changes to %s",
			            p->where, p->t.v[args].text);
	} else {
		return 0;
	}
	return 1;
}

/* Every call and name, resolved through aliases, checked. */
static void py_scan_calls(struct py *p)
{
	for (size_t i = 0; i < p->t.n; i++) {
		if (!py_is(p, i, PY_NAME, NULL))
			continue;
		int method = i > 0 && py_is(p, i - 1, PY_OP, ".");
		size_t end;
		char *name = py_dotted(p, i, &end);
		if (!py_is(p, end, PY_OP, "(")) {
			/* names used without a call: __builtins__, sys.modules
			 */
			if (!method && (py_starts(name, "__builtins__") ||
			                py_starts(name, "sys.modules")))
				reasons_add(p->c->r, POLICY_HIDDEN,
				            "%s reaches functions through %s",
				            p->where, name);
			free(name);
			i = end - 1;
			continue;
		}
		if (method) {
			py_check_call(p, p->t.v[end - 1].text, end + 1, 1);
		} else {
			size_t first = strcspn(name, ".");
			char *head = xstrndup(name, first);
			char *full = xasprintf("%s%s", py_resolve(p, head),
			                       name + first);
			int known = py_check_call(p, full, end + 1, 0);
			if (!known && strcmp(full, name))
				known = py_check_call(p, name, end + 1, 0);
			const char *last = strrchr(name, '.');
			if (!known && last)
				py_check_call(p, last + 1, end + 1, 1);
			free(head);
			free(full);
		}
		free(name);
		i = end - 1;
	}
}

/* --- strings ----------------------------------------------------- */

/* A word that makes its line write a file (a mode "w", to_csv...). */
static int py_write_word(const char *s)
{
	static const char *const modes[] = {"w",   "wb",  "w+", "wt", "a",
	                                    "ab",  "a+",  "x",  "xb", "r+",
	                                    "rb+", "wb+", NULL};
	static const char *const calls[] = {
	    "to_csv",     "to_excel", "to_parquet", "to_json",    "to_pickle",
	    "to_feather", "to_hdf",   "to_stata",   "to_html",    "savefig",
	    "save",       "savetxt",  "savez",      "write_text", "write_bytes",
	    "dump",       "copy",     "copyfile",   "copy2",      "move",
	    "rename",     "replace",  "remove",     "unlink",     "to_file",
	    "imwrite",    NULL};
	return py_call_in(s, modes) || py_call_in(s, calls);
}

/* The first and last tokens of the line of token i. */
static void py_line_span(const struct py *p, size_t i, size_t *a, size_t *b)
{
	int line = p->t.v[i].line;
	*a = *b = i;
	while (*a > 0 && p->t.v[*a - 1].line == line)
		(*a)--;
	while (*b + 1 < p->t.n && p->t.v[*b + 1].line == line)
		(*b)++;
}

/* Whether the line of token i moves files (os.rename, Path.replace,
 * shutil.move...). */
static int py_line_moves(const struct py *p, size_t i)
{
	static const char *const moves[] = {"rename", "replace", "move",
	                                    "renames", NULL};
	size_t a, b;
	py_line_span(p, i, &a, &b);
	for (size_t k = a; k <= b; k++)
		if (p->t.v[k].type == PY_NAME &&
		    py_call_in(p->t.v[k].text, moves))
			return 1;
	return 0;
}

/* Whether the line of token i writes (a mode "w", df.to_csv...). */
static int py_line_writes(const struct py *p, size_t i)
{
	size_t a, b;
	py_line_span(p, i, &a, &b);
	for (size_t k = a; k <= b; k++)
		if (k != i && p->t.v[k].type != PY_OP &&
		    py_write_word(p->t.v[k].text))
			return 1;
	return 0;
}

/* A string literal: URLs, paths outside, persistent files and staged
 * inputs written on its line. */
static void py_check_string(struct py *p, size_t i)
{
	struct cls *c = p->c;
	const char *s = p->t.v[i].text;
	char rel[POLICY_REL_MAX];
	if (p->t.v[i].fstring) {
		/* the {...} parts of an f-string are code */
		policy_classify_python(c, s, p->where);
	}
	if (!strncmp(s, "http://", 7) || !strncmp(s, "https://", 8) ||
	    !strncmp(s, "ftp://", 6) || !strncmp(s, "s3://", 5) ||
	    !strncmp(s, "gs://", 5)) {
		char *sn = policy_snip(s, 60);
		reasons_add(c->r, POLICY_NETWORK, "%s uses the URL %s",
		            p->where, sn);
		free(sn);
		return;
	}
	if (!*s || strchr(s, '\n') || strlen(s) >= POLICY_REL_MAX)
		return;
	int pathlike = s[0] == '/' || s[0] == '~' || !strncmp(s, "../", 3) ||
	               !strcmp(s, "..");
	enum path_kind k = policy_path(c, s, rel);
	if (pathlike && k == PATH_OUTSIDE) {
		char *sn = policy_snip(s, 60);
		reasons_add(c->r, POLICY_OUTSIDE, "%s uses the path %s",
		            p->where, sn);
		free(sn);
	}
	if (pathlike && k == PATH_NETWORK)
		reasons_add(c->r, POLICY_NETWORK, "%s opens %s", p->where, s);
	if (pathlike && (k == PATH_SCRATCH || k == PATH_OUTSIDE) &&
	    py_line_moves(p, i)) {
		char *sn = policy_snip(s, 60);
		reasons_add(c->r, POLICY_DELETION,
		            "%s moves files out of the workspace (to %s)",
		            p->where, sn);
		free(sn);
	}
	int writes = py_line_writes(p, i);
	if (writes && policy_persistent_name(s))
		reasons_add(
		    c->r, POLICY_PERSISTENCE,
		    "%s writes %s, which runs at login or on a schedule",
		    p->where, s);
	if (k == PATH_INSIDE && writes && policy_input_of(c->pol, rel))
		reasons_add(c->r, POLICY_DELETION,
		            "%s may overwrite the staged input %s (your data)",
		            p->where, rel);
}

void policy_classify_python(struct cls *c, const char *code, const char *where)
{
	if (c->depth >= POLICY_MAX_INLINE) {
		reasons_add(c->r, POLICY_HIDDEN,
		            "%s: inline code nested too deeply to check",
		            where);
		return;
	}
	struct cls inner = *c;
	inner.depth++;
	inner.cwd_state = CWD_WORKSPACE;
	inner.cwd[0] = '\0';
	struct py p = {.c = &inner, .where = where};
	py_tokenize(code, &p.t);
	if (p.t.truncated)
		reasons_add(c->r, POLICY_HIDDEN,
		            "%s: too long to check (more than %d tokens)",
		            where, PY_MAX_TOKENS);
	py_scan_imports(&p);
	py_scan_calls(&p);
	for (size_t i = 0; i < p.t.n; i++)
		if (p.t.v[i].type == PY_STR)
			py_check_string(&p, i);
	for (size_t i = 0; i < p.t.n; i++)
		free(p.t.v[i].text);
	free(p.t.v);
	for (size_t i = 0; i < p.nal; i++) {
		free(p.al[i].name);
		free(p.al[i].target);
	}
	free(p.al);
}
