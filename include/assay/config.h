/* config.h: the layered configuration. Later layers win: defaults <
 * $XDG_CONFIG_HOME/assay/config.json < ./.assay/config.json < --config
 * FILE < environment < command line. Files are JSON with comments. API
 * keys are never stored here: a provider names the environment variable
 * that holds its key. */
#ifndef ASSAY_CONFIG_H
#define ASSAY_CONFIG_H

#include <stddef.h>
#include <stdio.h>
#include <cjson/cJSON.h>
#include "strv.h"

struct config_input {
	char *src;  /* host path */
	char *dest; /* workspace-relative; default input/<basename> */
	int copy;   /* "copy": true: a writable copy in the workspace, not a
	             * read-only mount of the original */
};

/* How the loosening settings of the project files are taken (set before
 * config_load; see project.c). */
enum config_trust {
	CONFIG_TRUST_ASK,  /* the user's trust store decides */
	CONFIG_TRUST_ONCE, /* the user said "once" in the Trust dialog */
	CONFIG_TRUST_FLAG, /* --trust-project */
};

struct config {
	char *provider; /* openai|openai-responses|anthropic|ollama|script */
	char *model;
	char *base_url;    /* NULL = provider default */
	char *api_key_env; /* NULL = provider default */
	char *script;      /* scripted model file */
	char *sandbox;     /* local|docker|opensandbox */
	char *image;
	char *ask; /* all|risky|none */
	char *out_dir;
	char *workspace;    /* existing dir to use instead of a fresh one */
	char *run_dir;      /* NULL = .assay/runs/<run-id> */
	char *instructions; /* system prompt file */
	char *theme;
	char *images;
	char *send_images; /* auto|tool|off: images to the model */
	int network;
	/* "network": {"allow": ["host", ...]}: egress only to these (the
	 * opensandbox backend's egress rules; the others refuse it) */
	struct strv net_allow;
	/* "opensandbox": {"url", "timeout_s"}: the server (user config or
	 * the command line only: it decides where the key goes) and the
	 * sandbox's TTL, renewed while the run lives */
	char *opensandbox_url;
	long opensandbox_ttl_s;
	/* "opensandbox.network_policy": "server": send no networkPolicy
	 * (a server without egress refuses any); the sandbox's network is
	 * then whatever the server gives it */
	int opensandbox_server_net;
	int responses_store; /* openai-responses: store at OpenAI and chain
	                        with previous_response_id */
	int timeout_s;       /* per command */
	int max_turns;
	long max_tokens; /* 0 = no budget */
	double max_cost; /* 0 = no budget */
	int step;
	int json;
	/* a missing API key fails each request rather than the start (the
	 * workbench opens and says how to go on); not a config key */
	int key_later;
	size_t max_output_bytes; /* what the model sees of an output */
	int max_output_tokens;   /* per model answer */
	/* the conversation against the model's context window
	 * (agent/context.c): shares of the window at which old tool
	 * results are trimmed and the history compacted, the turns kept
	 * whole, and the window itself when the model table has none */
	struct {
		double trim_at, compact_at;
		int keep_turns;
		long window; /* tokens; 0: the model table's */
	} context;
	/* sandbox limits */
	long mem_mb;
	long nproc;
	long cpu_s;
	long fsize_mb;
	long cpus;         /* opensandbox: resourceLimits.cpu; 0 = 1 */
	long max_sessions; /* limits.sessions: assay eval's -j at most */
	struct config_input *inputs;
	size_t n_inputs;
	char **outputs;
	size_t n_outputs;
	cJSON *rules;      /* array, kept for the policy layer; the rules of
	                      every layer add up */
	cJSON *never_save; /* kinds of reasons never saved as "always"
	                      rules (array of names; NULL = default) */
	cJSON *models;     /* the model table's overrides, {"NAME": {...}}: each
	                      layer's fields over the earlier ones' */
	cJSON *models_imported; /* what `assay models --import` took, from
	                           config_models_file: {"NAME": {...}},
	                           below "models" */
	cJSON *mcp_servers;     /* {"NAME": {"command", "args", "env", "cwd"} |
	                           {"url", "headers", "bearer_token_env"}}: a
	                           later layer's server replaces one of its name */
	struct strv mcp_only;   /* --mcp NAME...: only these servers */
	int mcp_off;            /* --no-mcp: none */
	enum config_trust trust;
	/* What the project files did, NULL without them:
	 * {"dir": realpath, "files": [...], "hash": digest,
	 *  "trust": "untrusted"|"once"|"remembered"|"flag",
	 *  "applied": ["FILE: KEY", ...],
	 *  "refused"|"trusted": [{"file","key","value","why","required"}]}
	 * ("refused" when untrusted: those were not applied). */
	cJSON *project;
};

void config_defaults(struct config *c);
void config_free(struct config *c);

/* Apply one JSON layer (config file or assay.json manifest). origin
 * names it in error messages. Unknown keys are an error naming the key. */
int config_apply_json(struct config *c, const cJSON *obj, const char *origin,
                      char **err);
int config_apply_file(struct config *c, const char *path, int must_exist,
                      char **err);
/* config_apply_json with file names relative to base_dir (a layer
 * read from a file of its own: an eval suite's defaults and tasks). */
int config_apply_json_in(struct config *c, const cJSON *obj, const char *origin,
                         const char *base_dir, char **err);
/* ASSAY_PROVIDER, ASSAY_MODEL. (OPENAI_BASE_URL and OLLAMA_HOST are
 * read by their provider, src/llm/openai.c, when base_url is unset.) */
int config_apply_env(struct config *c, char **err);

/* Every layer below the command line, in order: user_file (may be
 * NULL or absent; the imported model table beside it, when there is
 * one, into models_imported), ./.assay/config.json, ./assay.json (the project
 * manifest), extra_file (--config; must exist), then the environment.
 * The two project files may not set base_url or api_key_env: those
 * decide where an API key is sent. Until the project is trusted
 * (c->trust, the trust store) they may only tighten security: what
 * would loosen it is listed in c->project and not applied. */
int config_load(struct config *c, const char *user_file, const char *extra_file,
                char **err);
/* The project settings that were not applied (an array of
 * {file, key, value, why, required}), or NULL when none were refused. */
const cJSON *config_project_refused(const struct config *c);
/* Project content a command reads from a file of its own (an eval
 * suite) is held to the same rule as the project files: its project is
 * the nearest ancestor of the file's dir holding .git (else that dir),
 * trusted by the flag (--trust-project) or by the trust store holding
 * that dir with the digest its project files have now. */
struct config_content {
	char *root;        /* the project dir, a realpath */
	const char *trust; /* "flag", "remembered" or "untrusted" */
	cJSON *saved;      /* rules the user saved into root (trust store) */
};
int config_content_open(struct config_content *cc, const char *file, int flag,
                        char **err);
void config_content_close(struct config_content *cc);
/* One layer of that content (a suite's defaults, a task's keys) onto c
 * like config_apply_json_in, but key by key under the project rule:
 * what loosens security against ref (the user's configuration, so a
 * task may go back up to what the user allows after its suite's
 * defaults tightened; NULL: c) applies only when trusted, and the keys
 * a project file may not set (base_url...) never apply. Each refused
 * setting is appended to refused as {file (origin), key, value, why,
 * required, user_only (only on those)}. */
int config_apply_content(struct config *c, const struct config *ref,
                         const struct config_content *cc, const cJSON *obj,
                         const char *origin, const char *base_dir,
                         cJSON *refused, char **err);
/* A host path v (relative to base_dir) the content names for the
 * command's own use (an eval check's script or files): 1 when inside
 * the project or trusted, else 0 with the refusal (required: what
 * needs it cannot go on) appended to refused. what: the verb ("runs"). */
int config_content_path(const struct config_content *cc, const char *origin,
                        const char *key, const cJSON *v, const char *base_dir,
                        const char *what, cJSON *refused);
/* The digest of the project files in the current directory as they are
 * now (their contents and the host paths they name, links resolved). */
int config_project_digest(char out[65], char **err);
/* $XDG_CONFIG_HOME/assay/config.json or ~/.config/assay/config.json
 * (path_config_dir); NULL when neither variable nor HOME is set. */
char *config_user_file(void);
/* The model table `assay models --import` keeps: models.json beside
 * user_file (the user's configuration), {NAME: {...}, ...};
 * NULL when user_file is NULL. */
char *config_models_file(const char *user_file);
/* The most that file may hold, in bytes. */
#define CONFIG_MODELS_MAX_BYTES (8 << 20)

/* Every configuration key (the table in core/config_keys.c) with its
 * value, default, who may set it and when it loosens security: as
 * `assay help config` prints it, or (markdown) as the doc's table. */
void config_keys_write(FILE *f, int markdown);

/* Parse "SRC[:DEST]" into an input; DEST defaults to input/<basename>. */
int config_parse_input(const char *spec, struct config_input *in, char **err);
void config_add_input(struct config *c, const char *src, const char *dest);
void config_add_output(struct config *c, const char *path);
/* An ask mode's place from the least to the most careful (none 0,
 * risky 1, all 2); -1 when unknown. */
int config_ask_rank(const char *mode);
/* Setters that free the previous value. */
void config_set(char **field, const char *value);
/* The `images` value (--images, config key "images"): auto, sixel,
 * kitty, blocks or off; else -1 and *err says so. */
int config_check_images(const char *value, char **err);

#endif
