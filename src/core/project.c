/* project.c: the project layer (./.assay/config.json, then ./assay.json)
 * and its trust rule. A cloned repository's files are data the user
 * has not read: until the user trusts them, they may only tighten
 * security. Each setting that would loosen it (the sandbox's network,
 * a laxer ask mode, allow rules, higher limits or budgets, host paths
 * outside the project) is recorded as "loose" and, unless the project
 * is trusted, not applied; every other setting applies as written.
 * What happened is kept in cfg->project for the run_start event, the
 * headless report and the Trust dialog. Project content read from files
 * of its own (an eval suite: config_apply_content) goes through the same
 * filter_key. */
#include "config_internal.h"
#include "config_keys.h"

#include "assay/buf.h"
#include "assay/json.h"
#include "assay/path.h"
#include "assay/trust.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct project {
	const char *root; /* the project dir, a realpath */
	int trusted;      /* loose settings apply too */
	cJSON *saved;     /* rules the user saved here (trust store) */
	cJSON *applied;   /* "FILE: KEY" of what applied as written */
	cJSON *loose;     /* [{file, key, value, why, required}] */
	struct buf digest;
	const char *file; /* the file being applied */
};

/* A setting the rule decided on, appended to arr. */
static cJSON *record(cJSON *arr, const char *file, const char *key,
                     const cJSON *value, int required, const char *why)
{
	char *text = json_print(value);
	cJSON *it = cJSON_CreateObject();
	cJSON_AddStringToObject(it, "file", file);
	cJSON_AddStringToObject(it, "key", key);
	cJSON_AddStringToObject(it, "value", text);
	cJSON_AddStringToObject(it, "why", why);
	cJSON_AddBoolToObject(it, "required", required);
	cJSON_AddItemToArray(arr, it);
	free(text);
	return it;
}

/* A loosening setting: recorded; kept (returned 1) only when trusted. */
static int loose(struct project *p, const char *key, const cJSON *value,
                 int required, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int loose(struct project *p, const char *key, const cJSON *value,
                 int required, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *why = xvasprintf(fmt, ap);
	va_end(ap);
	record(p->loose, p->file, key, value, required, why);
	free(why);
	return p->trusted;
}

/* The host path a path setting names, links resolved (for the digest
 * and the check); caller frees. rel_to: the file's dir, or NULL for the
 * project dir. */
static char *resolved(struct project *p, const char *path, const char *rel_to)
{
	char *abs = config_resolve_src(path, rel_to);
	char *real = path_resolve(abs);
	free(abs);
	if (!real)
		real = xstrdup(path);
	buf_printf(&p->digest, "%s\n", real);
	return real;
}

/* Whether a path setting stays inside the project; when not, *where
 * is its resolved host path (caller frees). */
static int inside(struct project *p, const char *path, const char *rel_to,
                  char **where)
{
	char *real = resolved(p, path, rel_to);
	size_t n = strlen(p->root);
	int in = !strncmp(real, p->root, n) &&
	         (real[n] == '/' || real[n] == '\0') &&
	         !strstr(real + n, "/..");
	if (in) {
		free(real);
		real = NULL;
	}
	*where = real;
	return in;
}

/* A path setting named key: kept when inside the project. */
static int path_named(struct project *p, const char *key, const cJSON *v,
                      const char *rel_to, int required, const char *what)
{
	char *where = NULL;
	if (!cJSON_IsString(v) || inside(p, v->valuestring, rel_to, &where))
		return 1;
	int keep = loose(p, key, v, required, "%s %s, outside the project",
	                 what, where);
	free(where);
	return keep;
}

/* The source path of one "inputs" entry, or NULL when malformed (then
 * the plain layer's check reports it). */
static char *input_src(const cJSON *it)
{
	struct config_input in;
	char *err = NULL;
	const char *spec =
	    cJSON_IsString(it) ? it->valuestring : json_str(it, "src", NULL);
	if (!spec || config_parse_input(spec, &in, &err) < 0) {
		free(err);
		return NULL;
	}
	free(in.dest);
	return in.src;
}

/* Copy the entries of an array setting that keep(p, k, item, base)
 * allows into out under the same key. */
static void filter_array(struct project *p, const struct config_key *k,
                         const cJSON *v, cJSON *out,
                         int (*keep)(struct project *,
                                     const struct config_key *, const cJSON *,
                                     const char *),
                         const char *base)
{
	if (!cJSON_IsArray(v)) {
		cJSON_AddItemToObject(out, v->string, cJSON_Duplicate(v, 1));
		return;
	}
	cJSON *arr = cJSON_CreateArray();
	const cJSON *it;
	cJSON_ArrayForEach(it, v)
	{
		if (keep(p, k, it, base))
			cJSON_AddItemToArray(arr, cJSON_Duplicate(it, 1));
	}
	cJSON_AddItemToObject(out, v->string, arr);
}

/* An input (CONFIG_LOOSE_INPUTS): kept when its source is inside. */
static int keep_input(struct project *p, const struct config_key *k,
                      const cJSON *it, const char *base)
{
	char *src = input_src(it), *where = NULL;
	int keep = !src || inside(p, src, base, &where);
	if (!keep)
		keep = loose(p, k->name, it, k->required,
		             "%s %s, outside the project", k->why, where);
	free(where);
	free(src);
	return keep;
}

/* A rule (CONFIG_LOOSE_ALLOW): deny and ask rules only tighten. */
static int keep_rule(struct project *p, const struct config_key *k,
                     const cJSON *r, const char *unused)
{
	(void)unused;
	if (strcmp(json_str(r, "action", ""), "allow"))
		return 1;
	const cJSON *s;
	cJSON_ArrayForEach(s, p->saved)
	{
		if (cJSON_Compare(s, r, 1))
			return 1; /* the user saved it from an approval */
	}
	return loose(p, k->name, r, 0, "%s", k->why);
}

/* A list (CONFIG_LOOSE_KINDS, "never_save") that leaves out a kind
 * the configuration has (unset: the row's default, the policy's). */
static int kinds_loosen(const struct config_key *k, const cJSON *have,
                        const cJSON *v)
{
	if (!cJSON_IsArray(v))
		return 0;
	cJSON *def = have ? NULL : cJSON_Parse(k->def ? k->def : "[]");
	const cJSON *list = have ? have : def, *it, *in;
	int missing = 0;
	cJSON_ArrayForEach(it, list)
	{
		int found = 0;
		cJSON_ArrayForEach(in, v)
		{
			found |= cJSON_Compare(in, it, 1);
		}
		missing |= !found;
	}
	cJSON_Delete(def);
	return missing;
}

/* A number setting above the configured one (budgets: 0 is none). */
static int number_loosens(const cJSON *v, double cur, int budget)
{
	if (!cJSON_IsNumber(v))
		return 0;
	if (budget)
		return cur > 0 && (v->valuedouble == 0 || v->valuedouble > cur);
	return v->valuedouble > cur;
}

/* An ask mode (CONFIG_LOOSE_ASK) less careful than mine loosens. */
static int keep_ask(struct project *p, const struct config_key *k,
                    const cJSON *v, const char *mine)
{
	int rank = cJSON_IsString(v) ? config_ask_rank(v->valuestring) : -1;
	if (rank < 0 || rank >= config_ask_rank(mine))
		return 1;
	return loose(p, k->name, v, 0, "asks less than your setting (%s)",
	             mine);
}

/* Whether setting v of key k is kept: 1 unless it loosens security
 * against c (then recorded, and kept only when trusted). */
static int keep_value(struct project *p, const struct config *c,
                      const struct config_key *k, const cJSON *v,
                      const char *base)
{
	const char *rel_to = k->type == CONFIG_T_FILE ? base : NULL;
	const void *mine = config_key_field(c, k);
	double cur;
	switch (k->loose) {
	case CONFIG_LOOSE_ABOVE:
		/* an unset limit (0) is its minimum (cpus: 1) */
		cur = config_key_number(c, k);
		cur = cur < k->min ? k->min : cur;
		if (!number_loosens(v, cur, 0))
			return 1;
		return loose(p, k->name, v, 0, "above your limit (%ld)",
		             (long)cur);
	case CONFIG_LOOSE_BUDGET:
		if (!number_loosens(v, config_key_number(c, k), 1))
			return 1;
		return loose(p, k->name, v, 0, "raises or removes your budget");
	case CONFIG_LOOSE_TRUE:
		return !cJSON_IsTrue(v) ||
		       loose(p, k->name, v, 0, "%s", k->why);
	case CONFIG_LOOSE_ALWAYS:
		return loose(p, k->name, v, 0, "%s", k->why);
	case CONFIG_LOOSE_NETWORK:
		if (*(const int *)mine ||
		    !(cJSON_IsTrue(v) || cJSON_IsObject(v)))
			return 1;
		return loose(p, k->name, v, 0, "%s",
		             cJSON_IsTrue(v) ? "turns the sandbox's network on"
		                             : "opens the sandbox's network to "
		                               "the hosts it lists");
	case CONFIG_LOOSE_ASK:
		return keep_ask(p, k, v, *(char *const *)mine);
	case CONFIG_LOOSE_KINDS:
		if (!kinds_loosen(k, *(cJSON *const *)mine, v))
			return 1;
		return loose(p, k->name, v, 0, "%s", k->why);
	case CONFIG_LOOSE_PATH_IF_FILE:
		if (!cJSON_IsString(v) || (!strchr(v->valuestring, '/') &&
		                           !strstr(v->valuestring, ".json")))
			return 1;
		return path_named(p, k->name, v, rel_to, k->required, k->why);
	case CONFIG_LOOSE_PATH:
		return path_named(p, k->name, v, rel_to, k->required, k->why);
	default:
		return 1;
	}
}

/* An object setting (CONFIG_LOOSE_MEMBERS): each member by its row. */
static void filter_members(struct project *p, const struct config *c,
                           const struct config_key *k, const cJSON *v,
                           cJSON *out)
{
	if (!cJSON_IsObject(v)) {
		cJSON_AddItemToObject(out, v->string, cJSON_Duplicate(v, 1));
		return;
	}
	cJSON *o = cJSON_CreateObject();
	const cJSON *it;
	cJSON_ArrayForEach(it, v)
	{
		const struct config_key *m =
		    config_key_find(k->name, it->string);
		if (!m || keep_value(p, c, m, it, NULL))
			cJSON_AddItemToObject(o, it->string,
			                      cJSON_Duplicate(it, 1));
	}
	cJSON_AddItemToObject(out, v->string, o);
}

/* What of setting v applies, by its row's .loose: copied into out.
 * base: the file's dir. */
static void filter_key(struct project *p, const struct config *c,
                       const cJSON *v, const char *base, cJSON *out)
{
	const struct config_key *k = config_key_find(NULL, v->string);
	int keep = 1;
	switch (k ? k->loose : CONFIG_SAFE) {
	case CONFIG_LOOSE_ALLOW:
		filter_array(p, k, v, out, keep_rule, NULL);
		return;
	case CONFIG_LOOSE_INPUTS:
		filter_array(p, k, v, out, keep_input, base);
		return;
	case CONFIG_LOOSE_MEMBERS:
		filter_members(p, c, k, v, out);
		return;
	case CONFIG_SAFE:
		break;
	default:
		keep = keep_value(p, c, k, v, base);
	}
	if (keep)
		cJSON_AddItemToObject(out, v->string, cJSON_Duplicate(v, 1));
}

/* One project file onto c: what the rule allows of each key. */
static int project_file(struct config *c, struct project *p, const char *path,
                        char **err)
{
	size_t len = 0;
	char *text = read_file_max(path, CONFIG_MAX_BYTES, &len, err);
	if (!text)
		return -1;
	buf_printf(&p->digest, "%s %zu\n", path, len);
	buf_append(&p->digest, text, len);
	cJSON *j = json_parse_relaxed(text, path, err);
	free(text);
	if (!j)
		return -1;
	char *tmp = xstrdup(path);
	char *base = xstrdup(dirname(tmp));
	cJSON *keep = cJSON_CreateObject();
	int rc = 0;
	const cJSON *v;
	p->file = path;
	if (!cJSON_IsObject(j))
		rc = set_err(err, "%s: must be a JSON object", path);
	const cJSON *top = cJSON_IsObject(j) ? j : NULL;
	cJSON_ArrayForEach(v, top)
	{
		int skip = config_check_key(v, path, 1, err);
		if (skip < 0) {
			rc = -1;
			break;
		}
		if (skip)
			continue;
		cJSON_Delete(keep);
		keep = cJSON_CreateObject();
		filter_key(p, c, v, base, keep);
		const cJSON *k = keep->child;
		if (!k)
			continue;
		char *name = xasprintf("%s: %s", path, k->string);
		cJSON_AddItemToArray(p->applied, cJSON_CreateString(name));
		free(name);
		if ((rc = config_apply_key(c, k, path, base, err)) < 0)
			break;
	}
	cJSON_Delete(keep);
	cJSON_Delete(j);
	free(tmp);
	free(base);
	return rc;
}

/* Both project files onto c with p's rule. */
static int project_pass(struct config *c, struct project *p, char **err)
{
	static const char *const files[] = {CONFIG_PROJECT_DIR_FILE,
	                                    CONFIG_PROJECT_MANIFEST};
	for (int i = 0; i < 2; i++) {
		if (access(files[i], F_OK) < 0 && errno == ENOENT)
			continue;
		if (project_file(c, p, files[i], err) < 0)
			return -1;
	}
	return 0;
}

static void project_init(struct project *p, const char *root, int trusted)
{
	*p = (struct project){.root = root, .trusted = trusted};
	p->applied = cJSON_CreateArray();
	p->loose = cJSON_CreateArray();
	buf_init(&p->digest, 0);
}

static void project_fini(struct project *p)
{
	cJSON_Delete(p->applied);
	cJSON_Delete(p->loose);
	cJSON_Delete(p->saved);
	buf_free(&p->digest);
}

/* The digest of the project files as they are in root (the cwd): their
 * contents and the host paths they name, links resolved, so a trusted
 * project whose link now points elsewhere asks again. */
static int digest_of(const char *root, char out[65], char **err)
{
	struct config scratch;
	struct project p;
	config_defaults(&scratch);
	project_init(&p, root, 1);
	int rc = project_pass(&scratch, &p, err);
	if (rc == 0)
		sha256_hex(p.digest.data, p.digest.len, out);
	project_fini(&p);
	config_free(&scratch);
	return rc;
}

int config_project_digest(char out[65], char **err)
{
	char *root = realpath(".", NULL);
	if (!root)
		return set_err(err, "the current directory: %s",
		               strerror(errno));
	int rc = digest_of(root, out, err);
	free(root);
	return rc;
}

static int have_project_files(void)
{
	return access(CONFIG_PROJECT_DIR_FILE, F_OK) == 0 ||
	       access(CONFIG_PROJECT_MANIFEST, F_OK) == 0;
}

/* The record kept in c->project (see config.h). */
static void project_record(struct config *c, struct project *p,
                           const char *digest, const char *how)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "dir", p->root);
	cJSON *files = cJSON_AddArrayToObject(r, "files");
	if (access(CONFIG_PROJECT_DIR_FILE, F_OK) == 0)
		cJSON_AddItemToArray(
		    files, cJSON_CreateString(CONFIG_PROJECT_DIR_FILE));
	if (access(CONFIG_PROJECT_MANIFEST, F_OK) == 0)
		cJSON_AddItemToArray(
		    files, cJSON_CreateString(CONFIG_PROJECT_MANIFEST));
	cJSON_AddStringToObject(r, "hash", digest);
	cJSON_AddStringToObject(r, "trust", how);
	cJSON_AddItemToObject(r, "applied", p->applied);
	cJSON_AddItemToObject(r, p->trusted ? "trusted" : "refused", p->loose);
	p->applied = p->loose = NULL;
	cJSON_Delete(c->project);
	c->project = r;
}

int config_load_project(struct config *c, char **err)
{
	if (!have_project_files())
		return 0;
	char *root = realpath(".", NULL);
	if (!root)
		return set_err(err, "the current directory: %s",
		               strerror(errno));
	char digest[65];
	struct project p;
	int rc = digest_of(root, digest, err);
	if (rc < 0) {
		free(root);
		return -1;
	}
	const char *how = c->trust == CONFIG_TRUST_FLAG       ? "flag"
	                  : c->trust == CONFIG_TRUST_ONCE     ? "once"
	                  : trust_is_remembered(root, digest) ? "remembered"
	                                                      : "untrusted";
	project_init(&p, root, strcmp(how, "untrusted") != 0);
	p.saved = trust_saved_rules(root);
	rc = project_pass(c, &p, err);
	if (rc == 0)
		project_record(c, &p, digest, how);
	project_fini(&p);
	free(root);
	return rc;
}

const cJSON *config_project_refused(const struct config *c)
{
	const cJSON *r = cJSON_GetObjectItem(c->project, "refused");
	return cJSON_GetArraySize(r) ? r : NULL;
}

/* ---- project content in files of its own (an eval suite) ---- */

/* The project dir holds start: the nearest ancestor with .git (a
 * repository, or a worktree's .git file), else start itself. */
static char *content_root(const char *start)
{
	char *dir = xstrdup(start);
	for (;;) {
		char *git = xasprintf("%s/.git", dir);
		int found = access(git, F_OK) == 0;
		free(git);
		if (found)
			return dir;
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
	}
	free(dir);
	return xstrdup(start);
}

/* Whether the trust store holds root with the digest its project files
 * have now. The digest is computed in root (the names and relative
 * paths it covers are as a run there sees them): this is called once,
 * before any session or child exists, and the cwd is restored. */
static int content_remembered(const char *root, char **err)
{
	char digest[65];
	int back = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (back < 0)
		return set_err(err, "the current directory: %s",
		               strerror(errno));
	int rc = 0;
	if (chdir(root) < 0)
		rc = set_err(err, "%s: %s", root, strerror(errno));
	else if (have_project_files())
		rc = digest_of(root, digest, err) < 0
		         ? -1
		         : trust_is_remembered(root, digest);
	if (fchdir(back) < 0 && rc >= 0)
		rc = set_err(err,
		             "cannot return to the working directory after "
		             "reading %s: %s",
		             root, strerror(errno));
	close(back);
	return rc;
}

int config_content_open(struct config_content *cc, const char *file, int flag,
                        char **err)
{
	memset(cc, 0, sizeof *cc);
	char *tmp = xstrdup(file);
	char *dir = realpath(dirname(tmp), NULL);
	free(tmp);
	if (!dir)
		return set_err(err, "%s: its directory: %s", file,
		               strerror(errno));
	cc->root = content_root(dir);
	free(dir);
	int known = flag ? 1 : content_remembered(cc->root, err);
	if (known < 0) {
		config_content_close(cc);
		return -1;
	}
	cc->trust = flag ? "flag" : known ? "remembered" : "untrusted";
	cc->saved = trust_saved_rules(cc->root);
	return 0;
}

void config_content_close(struct config_content *cc)
{
	free(cc->root);
	cJSON_Delete(cc->saved);
	memset(cc, 0, sizeof *cc);
}

static void content_begin(struct project *p, const struct config_content *cc,
                          const char *origin)
{
	project_init(p, cc->root, strcmp(cc->trust, "untrusted") != 0);
	p->saved = cc->saved; /* borrowed: content_end gives it back */
	p->file = origin;
}

/* What the rule refused, onto refused; p finished. */
static void content_end(struct project *p, cJSON *refused)
{
	cJSON *it;
	while (!p->trusted && (it = cJSON_DetachItemFromArray(p->loose, 0)))
		cJSON_AddItemToArray(refused, it);
	p->saved = NULL;
	project_fini(p);
}

/* A key project content may never set, trusted or not: refused. */
static void user_only(struct project *p, const cJSON *v, cJSON *refused)
{
	cJSON *it =
	    record(refused, p->file, v->string, v, 0,
	           "it decides where your API key is sent: only your user "
	           "config, the environment or the command line may set it");
	cJSON_AddBoolToObject(it, "user_only", 1);
}

int config_apply_content(struct config *c, const struct config *ref,
                         const struct config_content *cc, const cJSON *obj,
                         const char *origin, const char *base_dir,
                         cJSON *refused, char **err)
{
	if (!cJSON_IsObject(obj))
		return set_err(err, "%s: must be a JSON object", origin);
	struct project p;
	content_begin(&p, cc, origin);
	cJSON *keep = NULL;
	const cJSON *v;
	int rc = 0;
	cJSON_ArrayForEach(v, obj)
	{
		if (config_check_key(v, origin, 0, err))
			continue; /* "$schema", "//" */
		if (!config_key_settable(v->string, CONFIG_BY_SUITE)) {
			user_only(&p, v, refused);
			continue;
		}
		cJSON_Delete(keep);
		keep = cJSON_CreateObject();
		filter_key(&p, ref ? ref : c, v, base_dir, keep);
		if (keep->child &&
		    (rc = config_apply_key(c, keep->child, origin, base_dir,
		                           err)) < 0)
			break;
	}
	cJSON_Delete(keep);
	content_end(&p, refused);
	return rc;
}

int config_content_path(const struct config_content *cc, const char *origin,
                        const char *key, const cJSON *v, const char *base_dir,
                        const char *what, cJSON *refused)
{
	struct project p;
	content_begin(&p, cc, origin);
	int keep = path_named(&p, key, v, base_dir, 1, what);
	content_end(&p, refused);
	return keep;
}
