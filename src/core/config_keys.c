/* config_keys.c: the one table of configuration keys and how a value
 * of each is checked and stored. A key is a row here: config.c applies
 * layers through it, project.c classifies project and suite content by
 * its .by and .loose, config_doc.c prints it for `assay help config`,
 * the manual and the doc. The error messages are the rows' own words. */
#include "config_keys.h"
#include "config_internal.h"

#include "assay/buf.h"
#include "assay/json.h"
#include "assay/util.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static int apply_network(struct config *c, const struct config_key *k,
                         const cJSON *v, const char *origin,
                         const char *base_dir, char **err);
static int apply_inputs(struct config *c, const struct config_key *k,
                        const cJSON *v, const char *origin,
                        const char *base_dir, char **err);
static int apply_outputs(struct config *c, const struct config_key *k,
                         const cJSON *v, const char *origin,
                         const char *base_dir, char **err);
static int apply_rules(struct config *c, const struct config_key *k,
                       const cJSON *v, const char *origin, const char *base_dir,
                       char **err);
static int apply_models(struct config *c, const struct config_key *k,
                        const cJSON *v, const char *origin,
                        const char *base_dir, char **err);
static int apply_never_save(struct config *c, const struct config_key *k,
                            const cJSON *v, const char *origin,
                            const char *base_dir, char **err);
static int context_done(const struct config *c, const char *origin, char **err);
static int apply_mcp_servers(struct config *c, const struct config_key *k,
                             const cJSON *v, const char *origin,
                             const char *base_dir, char **err);

#define OFF(f) offsetof(struct config, f)
/* the upper bound of the counts: a sanity cap, "is too large" past it */
#define BIG 1e9
#define SHARE_MUST                                                             \
	"a share of the context window, above 0.05 and at most 1 (e.g. 0.7)"

static const struct config_key keys[] = {
    {.name = "$schema",
     .type = CONFIG_T_IGNORED,
     .by = CONFIG_BY_FILES,
     .doc = "ignored: the file's JSON schema"},
    {.name = "//",
     .type = CONFIG_T_IGNORED,
     .by = CONFIG_BY_FILES,
     .doc = "ignored: a comment"},
    {.name = "provider",
     .type = CONFIG_T_STRING,
     .def = "openai",
     .values = "openai|openai-responses|anthropic|ollama|script",
     .by = CONFIG_BY_FILES,
     .env = "ASSAY_PROVIDER",
     .flag = "--provider",
     .doc = "the model API, or a preset (gemini, openrouter, vllm, "
            "llamacpp)",
     .off = OFF(provider)},
    {.name = "model",
     .type = CONFIG_T_STRING,
     .by = CONFIG_BY_FILES,
     .env = "ASSAY_MODEL",
     .flag = "--model",
     .doc = "the model name (unset: the provider's, openai: gpt-4.1)",
     .off = OFF(model)},
    {.name = "base_url",
     .type = CONFIG_T_STRING,
     .by = CONFIG_BY_USER,
     .flag = "--base-url",
     .doc = "the API base incl. version path (unset: the provider's)",
     .off = OFF(base_url)},
    {.name = "api_key_env",
     .type = CONFIG_T_STRING,
     .by = CONFIG_BY_USER,
     .doc = "the environment variable holding the API key",
     .off = OFF(api_key_env)},
    {.name = "script",
     .type = CONFIG_T_FILE,
     .by = CONFIG_BY_FILES,
     .flag = "--script",
     .loose = CONFIG_LOOSE_PATH,
     .why = "reads",
     .required = 1,
     .doc = "the turns of the scripted model (--provider "
            "script)",
     .off = OFF(script)},
    {.name = "instructions",
     .type = CONFIG_T_FILE,
     .by = CONFIG_BY_FILES,
     .flag = "--instructions",
     .loose = CONFIG_LOOSE_PATH,
     .why = "sends",
     .doc = "the system prompt file (unset: built in)",
     .off = OFF(instructions)},
    {.name = "sandbox",
     .type = CONFIG_T_STRING,
     .def = "local",
     .values = "local|docker|opensandbox",
     .by = CONFIG_BY_FILES,
     .flag = "--sandbox",
     .doc = "the sandbox backend",
     .off = OFF(sandbox)},
    {.name = "image",
     .type = CONFIG_T_STRING,
     .def = "assay-sandbox:latest",
     .by = CONFIG_BY_FILES,
     .flag = "--image",
     .doc = "the sandbox image (docker, opensandbox)",
     .off = OFF(image)},
    {.name = "opensandbox",
     .type = CONFIG_T_OBJECT,
     .by = CONFIG_BY_USER,
     .must = "an object: {\"url\": \"host:8080\", \"timeout_s\": 3600}",
     .doc = "the OpenSandbox server"},
    {.name = "opensandbox.url",
     .type = CONFIG_T_STRING,
     .min = 1,
     .must = "a non-empty string",
     .by = CONFIG_BY_USER,
     .flag = "--opensandbox-url",
     .doc = "host:port or URL (unset: $OPEN_SANDBOX_DOMAIN)",
     .off = OFF(opensandbox_url)},
    {.name = "opensandbox.timeout_s",
     .type = CONFIG_T_LONG,
     .min = 60,
     .max = 86400 * 30,
     .must = "a number of seconds, 60 or more (the server's minimum)",
     .by = CONFIG_BY_USER,
     .doc = "the sandbox's time to live, renewed while the run lives",
     .off = OFF(opensandbox_ttl_s)},
    {.name = "opensandbox.network_policy",
     .type = CONFIG_T_ENUM,
     .values = "assay|server",
     .def = "assay",
     .must = "\"assay\" (send the policy --network says; the default) or "
             "\"server\" (send none: the sandbox gets the server's "
             "network)",
     .by = CONFIG_BY_USER,
     .doc = "server: send no network policy (a server without egress)",
     .off = OFF(opensandbox_server_net)},
    {.name = "network",
     .type = CONFIG_T_CUSTOM,
     .def = "false",
     .must = "true, false or {\"allow\": [\"host\", ...]}",
     .by = CONFIG_BY_FILES,
     .flag = "--network",
     .loose = CONFIG_LOOSE_NETWORK,
     .doc = "the sandbox's network; an allow list: opensandbox only",
     .off = OFF(network),
     .apply = apply_network},
    {.name = "ask",
     .type = CONFIG_T_STRING,
     .def = "risky",
     .values = "all|risky|none",
     .by = CONFIG_BY_FILES,
     .flag = "--ask",
     .loose = CONFIG_LOOSE_ASK,
     .doc = "ask before every call, calls with a reason, or never",
     .off = OFF(ask)},
    {.name = "rules",
     .type = CONFIG_T_CUSTOM,
     .must = "an array",
     .by = CONFIG_BY_FILES,
     .loose = CONFIG_LOOSE_ALLOW,
     .why = "runs matching calls without asking",
     .doc = "allow, ask and deny rules; every layer's add up",
     .off = OFF(rules),
     .apply = apply_rules},
    {.name = "never_save",
     .type = CONFIG_T_CUSTOM,
     .must = "an array of reason kinds (network, deletion, hidden...)",
     .def = "[\"deletion\", \"network\", \"hidden\"]",
     .by = CONFIG_BY_FILES,
     .loose = CONFIG_LOOSE_KINDS,
     .why = "lets more kinds of calls be saved as rules",
     .doc = "reason kinds never saved as \"always\" rules",
     .off = OFF(never_save),
     .apply = apply_never_save},
    {.name = "timeout",
     .type = CONFIG_T_INT,
     .min = 1,
     .max = BIG,
     .def = "120",
     .by = CONFIG_BY_FILES,
     .flag = "--timeout",
     .loose = CONFIG_LOOSE_ABOVE,
     .doc = "seconds per command",
     .off = OFF(timeout_s)},
    {.name = "max_turns",
     .type = CONFIG_T_INT,
     .min = 1,
     .max = BIG,
     .def = "50",
     .by = CONFIG_BY_FILES,
     .flag = "--max-turns",
     .loose = CONFIG_LOOSE_ABOVE,
     .doc = "model turns per run",
     .off = OFF(max_turns)},
    {.name = "max_tokens",
     .type = CONFIG_T_LONG,
     .def = "0",
     .by = CONFIG_BY_FILES,
     .flag = "--max-tokens",
     .loose = CONFIG_LOOSE_BUDGET,
     .doc = "token budget, input+output (0: none)",
     .off = OFF(max_tokens)},
    {.name = "max_cost",
     .type = CONFIG_T_REAL,
     .def = "0",
     .by = CONFIG_BY_FILES,
     .flag = "--max-cost",
     .loose = CONFIG_LOOSE_BUDGET,
     .doc = "cost budget in USD (0: none; the model needs a price)",
     .off = OFF(max_cost)},
    {.name = "max_output_bytes",
     .type = CONFIG_T_SIZE,
     .min = 1024,
     .max = BIG,
     .def = "16384",
     .by = CONFIG_BY_FILES,
     .doc = "what the model sees of a command's output",
     .off = OFF(max_output_bytes)},
    {.name = "max_output_tokens",
     .type = CONFIG_T_INT,
     .min = 1,
     .max = BIG,
     .def = "8192",
     .by = CONFIG_BY_FILES,
     .doc = "tokens per model answer",
     .off = OFF(max_output_tokens)},
    {.name = "responses_store",
     .type = CONFIG_T_BOOL,
     .def = "false",
     .by = CONFIG_BY_FILES,
     .loose = CONFIG_LOOSE_TRUE,
     .why = "keeps the conversation stored at OpenAI",
     .doc = "openai-responses: store at OpenAI, chain by response id",
     .off = OFF(responses_store)},
    {.name = "step",
     .type = CONFIG_T_BOOL,
     .def = "false",
     .by = CONFIG_BY_FILES,
     .flag = "--step",
     .doc = "pause before each model request and each command",
     .off = OFF(step)},
    {.name = "context",
     .type = CONFIG_T_OBJECT,
     .by = CONFIG_BY_FILES,
     .doc = "the conversation against the model's context window",
     .done = context_done},
    {.name = "context.trim_at",
     .type = CONFIG_T_SHARE,
     .min = 0.05,
     .max = 1,
     .def = "0.7",
     .must = SHARE_MUST,
     .by = CONFIG_BY_FILES,
     .doc = "the share of the window at which old tool results are trimmed",
     .off = OFF(context.trim_at)},
    {.name = "context.compact_at",
     .type = CONFIG_T_SHARE,
     .min = 0.05,
     .max = 1,
     .def = "0.85",
     .must = SHARE_MUST,
     .by = CONFIG_BY_FILES,
     .doc = "the share at which the history is compacted (>= trim_at)",
     .off = OFF(context.compact_at)},
    {.name = "context.keep_turns",
     .type = CONFIG_T_INT,
     .min = 1,
     .max = BIG,
     .def = "4",
     .by = CONFIG_BY_FILES,
     .doc = "the latest turns kept whole",
     .off = OFF(context.keep_turns)},
    {.name = "context.window",
     .type = CONFIG_T_LONG,
     .min = 0,
     .max = BIG,
     .def = "0",
     .by = CONFIG_BY_FILES,
     .doc = "the window in tokens (0: the model table's)",
     .off = OFF(context.window)},
    {.name = "limits",
     .type = CONFIG_T_NUMBERS,
     .min = 1,
     .by = CONFIG_BY_FILES,
     .loose = CONFIG_LOOSE_MEMBERS,
     .doc = "the sandbox's limits"},
    {.name = "limits.memory_mb",
     .type = CONFIG_T_LONG,
     .min = 1,
     .def = "4096",
     .by = CONFIG_BY_FILES,
     .loose = CONFIG_LOOSE_ABOVE,
     .doc = "memory in MiB",
     .off = OFF(mem_mb)},
    {.name = "limits.processes",
     .type = CONFIG_T_LONG,
     .min = 1,
     .def = "256",
     .by = CONFIG_BY_FILES,
     .loose = CONFIG_LOOSE_ABOVE,
     .doc = "processes",
     .off = OFF(nproc)},
    {.name = "limits.cpu_s",
     .type = CONFIG_T_LONG,
     .min = 1,
     .def = "600",
     .by = CONFIG_BY_FILES,
     .loose = CONFIG_LOOSE_ABOVE,
     .doc = "CPU seconds per command",
     .off = OFF(cpu_s)},
    {.name = "limits.file_size_mb",
     .type = CONFIG_T_LONG,
     .min = 1,
     .def = "2048",
     .by = CONFIG_BY_FILES,
     .loose = CONFIG_LOOSE_ABOVE,
     .doc = "the largest file written, in MiB",
     .off = OFF(fsize_mb)},
    {.name = "limits.cpus",
     .type = CONFIG_T_LONG,
     .min = 1,
     .by = CONFIG_BY_FILES,
     .loose = CONFIG_LOOSE_ABOVE,
     .doc = "CPUs (opensandbox; unset: 1)",
     .off = OFF(cpus)},
    {.name = "limits.sessions",
     .type = CONFIG_T_LONG,
     .min = 1,
     .by = CONFIG_BY_FILES,
     .doc = "assay eval's -j at most",
     .off = OFF(max_sessions)},
    {.name = "inputs",
     .type = CONFIG_T_CUSTOM,
     .must = "an array",
     .by = CONFIG_BY_FILES,
     .flag = "--input",
     .loose = CONFIG_LOOSE_INPUTS,
     .why = "stages",
     .required = 1,
     .doc = "files staged: \"SRC[:DEST]\" or {\"src\", \"dest\", \"copy\"}",
     .apply = apply_inputs},
    {.name = "outputs",
     .type = CONFIG_T_CUSTOM,
     .must = "an array of workspace paths",
     .by = CONFIG_BY_FILES,
     .flag = "--output",
     .doc = "declared outputs, relative to the workspace",
     .apply = apply_outputs},
    {.name = "out",
     .type = CONFIG_T_STRING,
     .def = "outputs",
     .by = CONFIG_BY_FILES,
     .flag = "--out",
     .loose = CONFIG_LOOSE_PATH,
     .why = "writes outputs to",
     .doc = "where declared outputs are copied",
     .off = OFF(out_dir)},
    {.name = "workspace",
     .type = CONFIG_T_STRING,
     .by = CONFIG_BY_FILES,
     .flag = "--workspace",
     .loose = CONFIG_LOOSE_PATH,
     .why = "works in",
     .required = 1,
     .doc = "an existing directory as the workspace (unset: a fresh one)",
     .off = OFF(workspace)},
    {.name = "run_dir",
     .type = CONFIG_T_STRING,
     .by = CONFIG_BY_FILES,
     .flag = "--run-dir",
     .loose = CONFIG_LOOSE_PATH,
     .why = "records the run in",
     .doc = "the run dir (unset: .assay/runs/<run-id>)",
     .off = OFF(run_dir)},
    {.name = "theme",
     .type = CONFIG_T_STRING,
     .def = "auto",
     .by = CONFIG_BY_FILES,
     .flag = "--theme",
     .loose = CONFIG_LOOSE_PATH_IF_FILE,
     .why = "reads",
     .doc = "TUI colours: a bundled or user theme's name, or a file",
     .off = OFF(theme)},
    {.name = "images",
     .type = CONFIG_T_STRING,
     .def = "auto",
     .values = "auto|sixel|kitty|blocks|off",
     .by = CONFIG_BY_FILES,
     .flag = "--images",
     .doc = "image previews (auto: ask the terminal)",
     .off = OFF(images)},
    {.name = "send_images",
     .type = CONFIG_T_STRING,
     .def = "auto",
     .values = "auto|tool|off",
     .by = CONFIG_BY_FILES,
     .flag = "--send-images",
     .doc = "images to the model: view_image and each image a call makes "
            "(auto), view_image only (tool), none (off)",
     .off = OFF(send_images)},
    {.name = "models",
     .type = CONFIG_T_CUSTOM,
     .must = "an object: {\"NAME\": {\"input\": USD, \"output\": USD, "
             "...}}",
     .by = CONFIG_BY_FILES,
     .loose = CONFIG_LOOSE_ALWAYS,
     .why = "sets model prices and limits (what budgets count)",
     .doc = "the model table's entries, each field over the earlier",
     .off = OFF(models),
     .apply = apply_models},
    {.name = "mcp_servers",
     .type = CONFIG_T_CUSTOM,
     .must = "an object: {\"NAME\": {\"command\": \"...\", \"args\": "
             "[...], \"env\": {...}, \"env_vars\": [\"VAR\"], \"cwd\": "
             "\"...\"} or {\"url\": "
             "\"...\", \"headers\": {...}, \"bearer_token_env\": "
             "\"VAR\"}}",
     .by = CONFIG_BY_FILES,
     .loose = CONFIG_LOOSE_ALWAYS,
     .why = "starts a program on your machine or reaches a host on the "
            "network (an MCP server)",
     .doc = "MCP servers whose tools the agent may call (a name "
            "replaces an earlier layer's)",
     .off = OFF(mcp_servers),
     .apply = apply_mcp_servers},
    {.name = NULL},
};
#undef OFF
#undef BIG
#undef SHARE_MUST

const struct config_key *config_keys(void)
{
	return keys;
}

/* Whether row name is parent.member (parent NULL: a top-level key). */
static int key_is(const char *row, const char *parent, const char *name)
{
	if (!parent)
		return !strcmp(row, name) && !strchr(row, '.');
	size_t n = strlen(parent);
	return !strncmp(row, parent, n) && row[n] == '.' &&
	       !strcmp(row + n + 1, name);
}

const struct config_key *config_key_find(const char *parent, const char *name)
{
	for (const struct config_key *k = keys; k->name; k++)
		if (key_is(k->name, parent, name))
			return k;
	return NULL;
}

int config_key_settable(const char *name, unsigned by)
{
	const struct config_key *k = config_key_find(NULL, name);
	return !k || (k->by & by) != 0;
}

void *config_key_field(const struct config *c, const struct config_key *k)
{
	return (char *)c + k->off;
}

double config_key_number(const struct config *c, const struct config_key *k)
{
	const void *f = (const char *)c + k->off;
	switch (k->type) {
	case CONFIG_T_BOOL:
	case CONFIG_T_INT:
	case CONFIG_T_ENUM:
		return *(const int *)f;
	case CONFIG_T_LONG:
		return (double)*(const long *)f;
	case CONFIG_T_SIZE:
		return (double)*(const size_t *)f;
	case CONFIG_T_REAL:
	case CONFIG_T_SHARE:
		return *(const double *)f;
	default:
		return 0;
	}
}

void config_key_set_number(struct config *c, const struct config_key *k,
                           double d)
{
	void *f = config_key_field(c, k);
	switch (k->type) {
	case CONFIG_T_BOOL:
	case CONFIG_T_INT:
	case CONFIG_T_ENUM:
		*(int *)f = (int)d;
		break;
	case CONFIG_T_LONG:
		*(long *)f = (long)d;
		break;
	case CONFIG_T_SIZE:
		*(size_t *)f = (size_t)d;
		break;
	case CONFIG_T_REAL:
	case CONFIG_T_SHARE:
		*(double *)f = d;
		break;
	default:
		break;
	}
}

/* The error for a value of the wrong type or out of range: the row's
 * own words, else the type's (which name the key as written: a
 * member's bare name, as they always have). */
static int must_be(const struct config_key *k, const cJSON *v,
                   const char *origin, char **err)
{
	if (k->must)
		return set_err(err, "%s: \"%s\" must be %s", origin, k->name,
		               k->must);
	switch (k->type) {
	case CONFIG_T_BOOL:
		return set_err(err, "%s: \"%s\" must be true or false", origin,
		               v->string);
	case CONFIG_T_OBJECT:
	case CONFIG_T_NUMBERS:
		return set_err(err, "%s: \"%s\" must be an object", origin,
		               v->string);
	case CONFIG_T_STRING:
	case CONFIG_T_FILE:
		return set_err(err, "%s: \"%s\" must be a string", origin,
		               v->string);
	default:
		return set_err(err, "%s: \"%s\" must be a number >= %g", origin,
		               v->string, k->min);
	}
}

static int apply_string(struct config *c, const struct config_key *k,
                        const cJSON *v, const char *origin,
                        const char *base_dir, char **err)
{
	if (!cJSON_IsString(v) || strlen(v->valuestring) < (size_t)k->min)
		return must_be(k, v, origin, err);
	char **field = config_key_field(c, k);
	config_set(field, v->valuestring);
	/* file names in a file layer are relative to the file */
	if (k->type == CONFIG_T_FILE && base_dir && (*field)[0] != '/') {
		char *abs = config_resolve_src(*field, base_dir);
		free(*field);
		*field = abs;
	}
	return 0;
}

static int apply_number(struct config *c, const struct config_key *k,
                        const cJSON *v, const char *origin, char **err)
{
	double d = cJSON_IsNumber(v) ? v->valuedouble : 0;
	int low = k->type == CONFIG_T_SHARE ? d <= k->min : d < k->min;
	int high = k->max > 0 && d > k->max;
	if (!cJSON_IsNumber(v) || low || (high && k->must))
		return must_be(k, v, origin, err);
	if (high)
		return set_err(err, "%s: \"%s\" is too large", origin, k->name);
	config_key_set_number(c, k, d);
	return 0;
}

/* An ENUM value: its place in k->values ("a|b|c"). */
static int apply_enum(struct config *c, const struct config_key *k,
                      const cJSON *v, const char *origin, char **err)
{
	const char *s = cJSON_IsString(v) ? v->valuestring : "";
	size_t n = strlen(s);
	int i = 0;
	for (const char *p = k->values; *p; i++) {
		size_t len = strcspn(p, "|");
		if (n && len == n && !strncmp(p, s, n)) {
			config_key_set_number(c, k, i);
			return 0;
		}
		p += len + (p[len] == '|');
	}
	return must_be(k, v, origin, err);
}

/* "KEY": {"MEMBER": ...}: each member by its row. */
static int apply_members(struct config *c, const struct config_key *k,
                         const cJSON *obj, const char *origin,
                         const char *base_dir, char **err)
{
	if (!cJSON_IsObject(obj))
		return must_be(k, obj, origin, err);
	const cJSON *v;
	cJSON_ArrayForEach(v, obj)
	{
		/* every member of a NUMBERS object is a number first */
		if (k->type == CONFIG_T_NUMBERS &&
		    (!cJSON_IsNumber(v) || v->valuedouble < k->min))
			return set_err(err, "%s: \"%s\" must be a number >= %g",
			               origin, v->string, k->min);
		const struct config_key *m =
		    config_key_find(k->name, v->string);
		if (!m) {
			struct buf known;
			buf_init(&known, 0);
			size_t n = strlen(k->name);
			for (const struct config_key *r = keys; r->name; r++)
				if (!strncmp(r->name, k->name, n) &&
				    r->name[n] == '.')
					buf_printf(&known, "%s%s",
					           known.len ? ", " : "",
					           r->name + n + 1);
			set_err(err, "%s: unknown key \"%s.%s\" (known: %s)",
			        origin, k->name, v->string, buf_str(&known));
			buf_free(&known);
			return -1;
		}
		if (config_key_apply(c, m, v, origin, base_dir, err) < 0)
			return -1;
	}
	return k->done ? k->done(c, origin, err) : 0;
}

int config_key_apply(struct config *c, const struct config_key *k,
                     const cJSON *v, const char *origin, const char *base_dir,
                     char **err)
{
	switch (k->type) {
	case CONFIG_T_IGNORED:
		return 0;
	case CONFIG_T_STRING:
	case CONFIG_T_FILE:
		return apply_string(c, k, v, origin, base_dir, err);
	case CONFIG_T_BOOL:
		if (!cJSON_IsBool(v))
			return must_be(k, v, origin, err);
		config_key_set_number(c, k, cJSON_IsTrue(v));
		return 0;
	case CONFIG_T_ENUM:
		return apply_enum(c, k, v, origin, err);
	case CONFIG_T_OBJECT:
	case CONFIG_T_NUMBERS:
		return apply_members(c, k, v, origin, base_dir, err);
	case CONFIG_T_CUSTOM:
		return k->apply(c, k, v, origin, base_dir, err);
	default:
		return apply_number(c, k, v, origin, err);
	}
}

/* ---- the keys applied by code of their own ---- */

/* "network": true/false, or {"allow": ["host", ...]}: egress only to
 * those hosts (an empty list: none). */
static int apply_network(struct config *c, const struct config_key *k,
                         const cJSON *v, const char *origin,
                         const char *base_dir, char **err)
{
	(void)base_dir;
	if (cJSON_IsBool(v)) {
		c->network = cJSON_IsTrue(v);
		return 0;
	}
	const cJSON *allow = cJSON_GetObjectItem(v, "allow");
	if (!cJSON_IsObject(v) || !cJSON_IsArray(allow) ||
	    cJSON_GetArraySize(v) != 1)
		return must_be(k, v, origin, err);
	strv_free(&c->net_allow);
	const cJSON *h;
	cJSON_ArrayForEach(h, allow)
	{
		if (!cJSON_IsString(h) || !*h->valuestring ||
		    strpbrk(h->valuestring, " /\"'"))
			return set_err(err,
			               "%s: each of \"%s.allow\" must be "
			               "a host name (\"pypi.org\", "
			               "\"*.example.com\") or an IP address",
			               origin, k->name);
		strv_push(&c->net_allow, h->valuestring);
	}
	c->network = 0;
	return 0;
}

static int apply_inputs(struct config *c, const struct config_key *k,
                        const cJSON *arr, const char *origin,
                        const char *base_dir, char **err)
{
	if (!cJSON_IsArray(arr))
		return must_be(k, arr, origin, err);
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		struct config_input in;
		if (cJSON_IsString(it)) {
			if (config_parse_input(it->valuestring, &in, err) < 0)
				return -1;
		} else if (cJSON_IsObject(it) && json_str(it, "src", NULL)) {
			if (config_parse_input(json_str(it, "src", NULL), &in,
			                       err) < 0)
				return -1;
			const char *dest = json_str(it, "dest", NULL);
			if (dest)
				config_set(&in.dest, dest);
			in.copy = json_bool(it, "copy", 0);
		} else {
			return set_err(
			    err,
			    "%s: each of \"%s\" is \"SRC[:DEST]\" "
			    "or {\"src\":..,\"dest\":..,\"copy\":true}",
			    origin, k->name);
		}
		char *abs = config_resolve_src(in.src, base_dir);
		config_add_input(c, abs, in.dest);
		c->inputs[c->n_inputs - 1].copy = in.copy;
		free(abs);
		free(in.src);
		free(in.dest);
	}
	return 0;
}

static int apply_outputs(struct config *c, const struct config_key *k,
                         const cJSON *v, const char *origin,
                         const char *base_dir, char **err)
{
	(void)base_dir;
	if (!cJSON_IsArray(v))
		return must_be(k, v, origin, err);
	const cJSON *it;
	cJSON_ArrayForEach(it, v)
	{
		if (!cJSON_IsString(it) || !*it->valuestring)
			return set_err(err,
			               "%s: each of \"%s\" must be a non-empty "
			               "string",
			               origin, k->name);
		config_add_output(c, it->valuestring);
	}
	return 0;
}

/* Rules add up across layers: a project's rules never silently drop
 * the user's deny rules. */
static int apply_rules(struct config *c, const struct config_key *k,
                       const cJSON *v, const char *origin, const char *base_dir,
                       char **err)
{
	(void)base_dir;
	if (!cJSON_IsArray(v))
		return must_be(k, v, origin, err);
	if (!c->rules)
		c->rules = cJSON_CreateArray();
	const cJSON *r;
	cJSON_ArrayForEach(r, v)
	{
		cJSON_AddItemToArray(c->rules, cJSON_Duplicate(r, 1));
	}
	return 0;
}

/* "models": {"NAME": {fields}}: each field over an earlier layer's
 * (the fields are checked where the table is built, models.c). */
static int apply_models(struct config *c, const struct config_key *k,
                        const cJSON *v, const char *origin,
                        const char *base_dir, char **err)
{
	(void)base_dir;
	if (!cJSON_IsObject(v))
		return must_be(k, v, origin, err);
	if (!c->models)
		c->models = cJSON_CreateObject();
	const cJSON *m, *f;
	cJSON_ArrayForEach(m, v)
	{
		cJSON *have = cJSON_GetObjectItem(c->models, m->string);
		if (!cJSON_IsObject(m) || !cJSON_IsObject(have)) {
			cJSON_DeleteItemFromObject(c->models, m->string);
			cJSON_AddItemToObject(c->models, m->string,
			                      cJSON_Duplicate(m, 1));
			continue;
		}
		cJSON_ArrayForEach(f, m)
		{
			cJSON_DeleteItemFromObject(have, f->string);
			cJSON_AddItemToObject(have, f->string,
			                      cJSON_Duplicate(f, 1));
		}
	}
	return 0;
}

static int apply_never_save(struct config *c, const struct config_key *k,
                            const cJSON *v, const char *origin,
                            const char *base_dir, char **err)
{
	(void)base_dir;
	const cJSON *r;
	int ok = cJSON_IsArray(v);
	cJSON_ArrayForEach(r, v)
	{
		ok &= cJSON_IsString(r);
	}
	if (!ok)
		return must_be(k, v, origin, err);
	cJSON_Delete(c->never_save);
	c->never_save = cJSON_Duplicate(v, 1);
	return 0;
}

/* Trimming comes before compacting, whichever layer set which. */
static int context_done(const struct config *c, const char *origin, char **err)
{
	if (c->context.compact_at < c->context.trim_at)
		return set_err(err,
		               "%s: \"context.compact_at\" (%g) must not be "
		               "below \"context.trim_at\" (%g): trimming comes "
		               "first",
		               origin, c->context.compact_at,
		               c->context.trim_at);
	return 0;
}

/* A string member of an MCP server's spec, or an object of strings. */
static int mcp_member_ok(const cJSON *m, int object)
{
	if (!object)
		return cJSON_IsString(m);
	const cJSON *it;
	if (!cJSON_IsObject(m))
		return 0;
	cJSON_ArrayForEach(it, m)
	{
		if (!cJSON_IsString(it))
			return 0;
	}
	return 1;
}

/* One server's spec checked: either command (stdio) or url (HTTP), and
 * only the members of its kind; a relative cwd made absolute from the
 * file's directory. NULL and *err when it is not usable. */
static cJSON *mcp_server_spec(const cJSON *s, const char *origin,
                              const char *base_dir, char **err)
{
	const char *name = s->string;
	size_t n = strlen(name);
	if (n == 0 || n > 32 ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz"
	                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                 "0123456789_-") != n ||
	    strstr(name, "__")) {
		set_err(err,
		        "%s: MCP server name \"%.40s\": 1 to 32 letters, "
		        "digits, - and _ (no \"__\": tools are named "
		        "SERVER__TOOL)",
		        origin, name);
		return NULL;
	}
	int http = cJSON_GetObjectItem(s, "url") != NULL;
	if (!cJSON_IsObject(s) ||
	    http == (cJSON_GetObjectItem(s, "command") != NULL)) {
		set_err(err,
		        "%s: MCP server \"%s\": give either \"command\" "
		        "(a program spoken to on stdio) or \"url\" (Streamable "
		        "HTTP)",
		        origin, name);
		return NULL;
	}
	static const char *const stdio_keys[] = {"command",  "args", "env",
	                                         "env_vars", "cwd",  NULL};
	static const char *const http_keys[] = {"url", "headers",
	                                        "bearer_token_env", NULL};
	const char *const *known = http ? http_keys : stdio_keys;
	const cJSON *m;
	cJSON_ArrayForEach(m, s)
	{
		int i = 0;
		while (known[i] && strcmp(known[i], m->string))
			i++;
		int ok = known[i] != NULL;
		if (ok && (!strcmp(m->string, "args") ||
		           !strcmp(m->string, "env_vars"))) {
			const cJSON *a;
			ok = cJSON_IsArray(m);
			cJSON_ArrayForEach(a, m) ok = ok && cJSON_IsString(a);
		} else if (ok) {
			ok =
			    mcp_member_ok(m, !strcmp(m->string, "env") ||
			                         !strcmp(m->string, "headers"));
		}
		if (!ok) {
			set_err(err,
			        "%s: MCP server \"%s\": \"%.40s\" %s (a %s "
			        "server takes %s)",
			        origin, name, m->string,
			        known[i] ? "has the wrong type"
			                 : "is not known",
			        http ? "Streamable HTTP" : "stdio",
			        http ? "url, headers, bearer_token_env"
			             : "command, args, env, env_vars, cwd");
			return NULL;
		}
	}
	cJSON *out = cJSON_Duplicate(s, 1);
	const char *cwd = json_str(s, "cwd", NULL);
	if (cwd && cwd[0] != '/' && base_dir) {
		char *abs = xasprintf("%s/%s", base_dir, cwd);
		cJSON_ReplaceItemInObject(out, "cwd", cJSON_CreateString(abs));
		free(abs);
	}
	return out;
}

/* "mcp_servers": {"NAME": spec}: each server checked, a name replacing
 * an earlier layer's. */
static int apply_mcp_servers(struct config *c, const struct config_key *k,
                             const cJSON *v, const char *origin,
                             const char *base_dir, char **err)
{
	if (!cJSON_IsObject(v))
		return must_be(k, v, origin, err);
	const cJSON *s;
	cJSON_ArrayForEach(s, v)
	{
		if (!cJSON_IsObject(s))
			return must_be(k, v, origin, err);
	}
	cJSON *add = cJSON_CreateObject();
	cJSON_ArrayForEach(s, v)
	{
		cJSON *spec = mcp_server_spec(s, origin, base_dir, err);
		if (!spec) {
			cJSON_Delete(add);
			return -1;
		}
		cJSON_AddItemToObject(add, s->string, spec);
	}
	if (!c->mcp_servers)
		c->mcp_servers = cJSON_CreateObject();
	cJSON *one;
	while ((one = add->child)) {
		cJSON_DetachItemViaPointer(add, one);
		cJSON_DeleteItemFromObject(c->mcp_servers, one->string);
		cJSON_AddItemToObject(c->mcp_servers, one->string, one);
	}
	cJSON_Delete(add);
	return 0;
}
