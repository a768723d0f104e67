/* main.c: the command line: options and subcommands, configuration
 * layering, and the loop that runs a session headless. */
#include "cli.h"

#include "assay/config.h"
#include "assay/fdlimit.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/models.h"
#include "assay/session.h"
#include "assay/trust.h"
#include "assay/util.h"
#include "assay/workbench.h"

#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	OPT_PROVIDER = 256,
	OPT_MODEL,
	OPT_BASE_URL,
	OPT_SCRIPT,
	OPT_SANDBOX,
	OPT_IMAGE,
	OPT_INPUT,
	OPT_OUTPUT,
	OPT_OUT,
	OPT_WORKSPACE,
	OPT_RUN_DIR,
	OPT_ASK,
	OPT_NETWORK,
	OPT_TIMEOUT,
	OPT_MAX_TURNS,
	OPT_MAX_TOKENS,
	OPT_MAX_COST,
	OPT_STEP,
	OPT_JSON,
	OPT_THEME,
	OPT_SEND_IMAGES,
	OPT_IMAGES,
	OPT_CONFIG,
	OPT_INSTRUCTIONS,
	OPT_VERSION,
	OPT_RE_EXECUTE,
	OPT_FORK_AT,
	OPT_REPLACE,
	OPT_TRUST_PROJECT,
	OPT_OPENSANDBOX_URL,
	OPT_MCP,
	OPT_NO_MCP,
};

static const struct option options[] = {
    {"provider", required_argument, NULL, OPT_PROVIDER},
    {"model", required_argument, NULL, OPT_MODEL},
    {"base-url", required_argument, NULL, OPT_BASE_URL},
    {"script", required_argument, NULL, OPT_SCRIPT},
    {"sandbox", required_argument, NULL, OPT_SANDBOX},
    {"opensandbox-url", required_argument, NULL, OPT_OPENSANDBOX_URL},
    {"image", required_argument, NULL, OPT_IMAGE},
    {"input", required_argument, NULL, OPT_INPUT},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"out", required_argument, NULL, OPT_OUT},
    {"workspace", required_argument, NULL, OPT_WORKSPACE},
    {"run-dir", required_argument, NULL, OPT_RUN_DIR},
    {"ask", required_argument, NULL, OPT_ASK},
    {"network", no_argument, NULL, OPT_NETWORK},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"max-turns", required_argument, NULL, OPT_MAX_TURNS},
    {"max-tokens", required_argument, NULL, OPT_MAX_TOKENS},
    {"max-cost", required_argument, NULL, OPT_MAX_COST},
    {"step", no_argument, NULL, OPT_STEP},
    {"json", no_argument, NULL, OPT_JSON},
    {"theme", required_argument, NULL, OPT_THEME},
    {"send-images", required_argument, NULL, OPT_SEND_IMAGES},
    {"images", required_argument, NULL, OPT_IMAGES},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"instructions", required_argument, NULL, OPT_INSTRUCTIONS},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {"re-execute", no_argument, NULL, OPT_RE_EXECUTE},
    {"fork-at", required_argument, NULL, OPT_FORK_AT},
    {"replace", required_argument, NULL, OPT_REPLACE},
    {"trust-project", no_argument, NULL, OPT_TRUST_PROJECT},
    {"mcp", required_argument, NULL, OPT_MCP},
    {"no-mcp", no_argument, NULL, OPT_NO_MCP},
    {NULL, 0, NULL, 0},
};

static void usage_options(FILE *f);
static void usage_env(FILE *f);

/* assay --help. */
static void usage(FILE *f)
{
	fputs("usage: assay [OPTIONS] [PROMPT]        the workbench (headless "
	      "when stdin or\n"
	      "                                       stdout is not a "
	      "terminal)\n"
	      "       assay run [OPTIONS] PROMPT      headless: progress on "
	      "stderr\n"
	      "       assay demo [OPTIONS]            the bundled demo "
	      "(scripted model, real sandbox)\n"
	      "       assay replay RUN [--theme NAME] step through a recorded "
	      "run (run dir or id)\n"
	      "       assay resume RUN [OPTIONS] [PROMPT]\n"
	      "                                       continue a run: "
	      "recorded answers from its cache;\n"
	      "                                       --re-execute runs "
	      "the calls again in a new run dir,\n"
	      "                                       --fork-at SEQ "
	      "--replace TEXT forks it there\n"
	      "       assay export RUN [--format md|html|ipynb|script] [-o "
	      "FILE]\n"
	      "                                       a record to read, a "
	      "notebook or a script\n"
	      "       assay eval SUITE [-j N] [-n R] [--model M]...\n"
	      "                                       a question set run "
	      "against models, checked\n"
	      "       assay models [--json]           the model table: "
	      "context, output, prices\n"
	      "       assay trust [--list|--revoke DIR]\n"
	      "                                       this project's trust: "
	      "what its files may do\n"
	      "       assay doctor [--json]           what works here "
	      "(terminal graphics, sandboxes,\n"
	      "                                       python libraries, "
	      "model keys) and what to do\n"
	      "       assay help [TOPIC]              TOPIC's own options "
	      "(run, demo, resume,\n"
	      "                                       replay, export, eval, "
	      "doctor, trust, models, mcp),\n"
	      "                                       or config: the "
	      "configuration keys\n"
	      "       assay mcp list|call ...         the MCP servers of "
	      "your config: their tools,\n"
	      "                                       one call (assay mcp "
	      "--help)\n"
	      "       assay --version | --help\n",
	      f);
	usage_options(f);
}

/* assay --help's options. */
static void usage_options(FILE *f)
{
	fputs("\n"
	      "options (defaults in brackets):\n"
	      "  --provider NAME     openai|openai-responses|anthropic|ollama|"
	      "script, or a preset:\n"
	      "                      gemini|openrouter|vllm|llamacpp "
	      "[openai]\n"
	      "  --model M           model name [openai: gpt-4.1; ollama: "
	      "required]\n"
	      "  --base-url URL      API base incl. version path "
	      "[$OPENAI_BASE_URL or https://api.openai.com/v1]\n"
	      "  --script FILE       turns for --provider script\n"
	      "  --sandbox NAME      local (bubblewrap), docker or opensandbox "
	      "[local]\n"
	      "  --opensandbox-url URL  the OpenSandbox server (host:port or "
	      "URL) [$OPEN_SANDBOX_DOMAIN]\n"
	      "  --image IMG         sandbox image (docker, opensandbox) "
	      "[assay-sandbox:latest]\n"
	      "  --input SRC[:DEST]  stage a file or directory (repeatable; "
	      "DEST [input/<basename>])\n"
	      "  --output PATH       declared output, relative to the "
	      "workspace (repeatable)\n"
	      "  --out DIR           where declared outputs are copied "
	      "[./outputs]\n"
	      "  --workspace DIR     use an existing directory as the "
	      "workspace [a fresh one in the run dir]\n"
	      "  --run-dir DIR       [.assay/runs/<run-id>]\n"
	      "  --ask MODE          ask before every call, calls with a "
	      "reason, or never\n"
	      "                      (all|risky|none; deny rules always "
	      "apply) [risky]\n"
	      "  --network           give the sandbox network access [off]\n"
	      "  --timeout SEC       per command [120]\n"
	      "  --max-turns N       [50]\n"
	      "  --max-tokens N      token budget, input+output [none]\n"
	      "  --max-cost USD      cost budget (the model needs a price: "
	      "assay models) [none]\n"
	      "  --step              pause before each model request and "
	      "each command: n, e, k, x\n"
	      "                      (headless: asks on the terminal)\n"
	      "  --json              events as JSON lines on stdout\n"
	      "  --theme NAME        TUI colours: auto (light or default, "
	      "as the terminal's\n"
	      "                      background is), default, light, "
	      "high-contrast,\n"
	      "                      solarized-dark, mono, or a file; user "
	      "themes in\n"
	      "                      $XDG_CONFIG_HOME/assay/themes/ "
	      "[auto]\n"
	      "  --images MODE       image previews: auto (ask the "
	      "terminal), sixel, kitty,\n"
	      "                      blocks or off [auto]\n"
	      "  --send-images MODE  images to the model: auto (view_image "
	      "and the images\n"
	      "                      each call makes), tool (view_image "
	      "only), off [auto]\n"
	      "  --config FILE       extra configuration layer (JSON with "
	      "comments)\n"
	      "  --instructions FILE system prompt [built in]\n"
	      "  --mcp NAME          only this MCP server of \"mcp_servers\" "
	      "(repeatable)\n"
	      "  --no-mcp            no MCP servers (assay mcp list shows "
	      "them)\n"
	      "  --trust-project     apply the settings of ./assay.json and "
	      "./.assay/config.json\n"
	      "                      that loosen security (network, ask, "
	      "allow rules, limits,\n"
	      "                      paths outside the project) [only "
	      "when trusted]\n"
	      "  --version, --help\n"
	      "\n"
	      "configuration, later wins: defaults < "
	      "$XDG_CONFIG_HOME/assay/config.json <\n"
	      "  ./.assay/config.json < ./assay.json < --config FILE < "
	      "environment\n"
	      "  (ASSAY_PROVIDER, ASSAY_MODEL; a provider's URL variable when "
	      "no layer sets\n"
	      "  base_url) < options. API keys only from the environment "
	      "(below).\n"
	      "exit codes: 0 ok, 1 failed or output missing, 2 usage, 3 "
	      "sandbox unavailable,\n"
	      "  4 provider error, 5 budget exhausted, 130 interrupted\n",
	      f);
	usage_env(f);
}

/* assay --help's environment: every variable a user sets
 * (tests/e2e/help_env.sh checks it against the getenv calls). */
static void usage_env(FILE *f)
{
	fputs("\n"
	      "environment (API keys only from here, never from a file; assay "
	      "doctor says\n"
	      "which are set):\n"
	      "  OPENAI_API_KEY      the key of openai and openai-responses, "
	      "and of a\n"
	      "                      compatible server at --base-url\n"
	      "  ANTHROPIC_API_KEY   the key of anthropic\n"
	      "  GEMINI_API_KEY, OPENROUTER_API_KEY, VLLM_API_KEY\n"
	      "                      the keys of the presets gemini, "
	      "openrouter, vllm\n"
	      "                      (vllm's is optional; ollama, llamacpp, "
	      "script need none)\n"
	      "  \"api_key_env\"       a config key, not a variable: "
	      "\"api_key_env\": \"VAR\" in\n"
	      "                      your config or --config FILE (never a "
	      "project's) reads\n"
	      "                      the provider's key from $VAR instead; an "
	      "MCP server's\n"
	      "                      \"bearer_token_env\" names its token's "
	      "variable likewise\n"
	      "  OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_HOST\n"
	      "                      the provider's server when neither "
	      "--base-url nor\n"
	      "                      \"base_url\" names one\n"
	      "  ASSAY_PROVIDER, ASSAY_MODEL\n"
	      "                      --provider, --model (over the files, "
	      "under the options)\n"
	      "  OPEN_SANDBOX_API_KEY\n"
	      "                      the OpenSandbox server's key (--sandbox "
	      "opensandbox)\n"
	      "  OPEN_SANDBOX_DOMAIN\n"
	      "                      the OpenSandbox server, unless "
	      "--opensandbox-url names one\n"
	      "  DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH, "
	      "DOCKER_API_VERSION\n"
	      "                      the Docker daemon (--sandbox docker), as "
	      "the docker CLI\n"
	      "                      reads them [unix:///var/run/docker.sock]\n"
	      "  NO_COLOR            no colours (the TUI keeps bold and "
	      "reverse)\n"
	      "  COLORFGBG           the terminal's colours (0;15: light) for "
	      "--theme auto\n"
	      "                      when the terminal does not tell its "
	      "background\n"
	      "  XDG_CONFIG_HOME     config.json and themes/ in "
	      "$XDG_CONFIG_HOME/assay\n"
	      "                      [~/.config]\n"
	      "  XDG_STATE_HOME      project trust, the input history "
	      "[~/.local/state]\n"
	      "  XDG_CACHE_HOME      the python environment, input hashes, "
	      "probes [~/.cache]\n"
	      "  ASSAY_DATA_DIR      the bundled data: themes, the demo, "
	      "share/ (the model\n"
	      "                      table, the prompt) [<prefix>/share/assay, "
	      "else the\n"
	      "                      source tree]\n"
	      "  ASSAY_BWRAP         the bubblewrap binary [bwrap on PATH]\n"
	      "  ASSAY_DOCKER_EXEC   exec: one docker exec per command, not "
	      "the runner\n"
	      "  ASSAY_EVAL_PLAIN    assay eval: plain lines, no live table\n"
	      "  TMPDIR              scratch directories of export and doctor "
	      "[/tmp]\n",
	      f);
}

/* A number option's value, at least min: -1 and *err if not. */
static int parse_num(const char *opt, const char *arg, double min, double *out,
                     char **err)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (errno || end == arg || *end || v < min || v > 1e9)
		return set_err(err, "%s: '%s' is not a number >= %g", opt, arg,
		               min);
	*out = v;
	return 0;
}

/* Apply one command-line option to the configuration. */
static int apply_option(struct config *c, int opt, const char *arg, char **err)
{
	double v = 0;
	struct config_input in;
	switch (opt) {
	case OPT_PROVIDER:
		config_set(&c->provider, arg);
		break;
	case OPT_MODEL:
		config_set(&c->model, arg);
		break;
	case OPT_BASE_URL:
		config_set(&c->base_url, arg);
		break;
	case OPT_SCRIPT:
		config_set(&c->script, arg);
		break;
	case OPT_SANDBOX:
		config_set(&c->sandbox, arg);
		break;
	case OPT_IMAGE:
		config_set(&c->image, arg);
		break;
	case OPT_OPENSANDBOX_URL:
		config_set(&c->opensandbox_url, arg);
		break;
	case OPT_OUT:
		config_set(&c->out_dir, arg);
		break;
	case OPT_WORKSPACE:
		config_set(&c->workspace, arg);
		break;
	case OPT_RUN_DIR:
		config_set(&c->run_dir, arg);
		break;
	case OPT_THEME:
		config_set(&c->theme, arg);
		break;
	case OPT_IMAGES:
		config_set(&c->images, arg);
		break;
	case OPT_SEND_IMAGES:
		config_set(&c->send_images, arg);
		break;
	case OPT_INSTRUCTIONS:
		config_set(&c->instructions, arg);
		break;
	case OPT_ASK:
		config_set(&c->ask, arg);
		break;
	case OPT_NETWORK:
		c->network = 1;
		break;
	case OPT_STEP:
		c->step = 1;
		break;
	case OPT_JSON:
		c->json = 1;
		break;
	case OPT_CONFIG:
	case OPT_TRUST_PROJECT:
		break; /* taken before the layers (load_layers) */
	case OPT_MCP:
		strv_push(&c->mcp_only, arg);
		break;
	case OPT_NO_MCP:
		c->mcp_off = 1;
		break;
	case OPT_INPUT:
		if (config_parse_input(arg, &in, err) < 0)
			return -1;
		config_add_input(c, in.src, in.dest);
		free(in.src);
		free(in.dest);
		break;
	case OPT_OUTPUT:
		config_add_output(c, arg);
		break;
	case OPT_TIMEOUT:
		if (parse_num("--timeout", arg, 1, &v, err) < 0)
			return -1;
		c->timeout_s = (int)v;
		break;
	case OPT_MAX_TURNS:
		if (parse_num("--max-turns", arg, 1, &v, err) < 0)
			return -1;
		c->max_turns = (int)v;
		break;
	case OPT_MAX_TOKENS:
		if (parse_num("--max-tokens", arg, 1, &v, err) < 0)
			return -1;
		c->max_tokens = (long)v;
		break;
	case OPT_MAX_COST:
		if (parse_num("--max-cost", arg, 0, &v, err) < 0)
			return -1;
		c->max_cost = v;
		break;
	default:
		return set_err(err, "unknown option");
	}
	return 0;
}

/* What the options cannot say by themselves: a known provider,
 * approval mode and image mode, a model for ollama, inputs that exist. */
static int validate(const struct config *c, char **err)
{
	const char *asks[] = {"all", "risky", "none"};
	int ok = 0;
	for (int i = 0; i < 3; i++)
		ok |= !strcmp(c->ask, asks[i]);
	if (!ok)
		return set_err(
		    err, "--ask must be all, risky or none (got '%s')", c->ask);
	if (config_check_images(c->images, err) < 0)
		return -1;
	if (!strcmp(c->provider, "script") && !c->script)
		return set_err(err, "--provider script needs --script FILE");
	if (!models_provider_known(c->provider))
		return set_err(err,
		               "provider '%s' is not available: use openai, "
		               "openai-responses, anthropic, ollama, gemini, "
		               "openrouter, vllm, llamacpp (or any "
		               "OpenAI-compatible server with --base-url) or "
		               "script",
		               c->provider);
	if (!strcmp(c->provider, "ollama") && !c->model)
		return set_err(err, "ollama needs a model: pass --model NAME "
		                    "(one that `ollama list` shows)");
	if (strcmp(c->provider, "script") && !models_run_model(c))
		return set_err(err,
		               "%s needs a model: pass --model NAME (the one "
		               "the server serves)",
		               c->provider);
	if (models_check_cost_budget(c, err) < 0)
		return -1;
	for (size_t i = 0; i < c->n_inputs; i++) {
		struct stat st;
		if (stat(c->inputs[i].src, &st) < 0)
			return set_err(err, "input %s: %s: check --input",
			               c->inputs[i].src, strerror(errno));
	}
	return 0;
}

/* Whether argv holds the option name before "--" (found before the
 * options are parsed, as the layers come first). */
static const char *find_early(int argc, char **argv, const char *name)
{
	size_t n = strlen(name);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], name))
			return i + 1 < argc ? argv[i + 1] : "";
		if (!strncmp(argv[i], name, n) && argv[i][n] == '=')
			return argv[i] + n + 1;
	}
	return NULL;
}

/* The layers below the options. --config is found first so it sits
 * below the environment and the other options. */
static int load_layers(struct config *c, int argc, char **argv, char **err)
{
	const char *extra = find_early(argc, argv, "--config");
	if (extra && !*extra)
		extra = NULL;
	char *user = config_user_file();
	int rc = config_load(c, user, extra, err);
	free(user);
	return rc;
}

static const char DEMO_PROMPT[] =
    "Find the unusual energy-use events in input/building_energy.csv; "
    "save output/anomalies.csv, a PNG chart output/energy_anomalies.png "
    "and a markdown report output/anomaly_report.md.";

/* assay demo: the scripted model, the sample data, the outputs. */
static void setup_demo(struct config *c)
{
	char *script = xasprintf("%s/sample-data/demo/energy.json", data_dir());
	char *csv = xasprintf("%s/sample-data/building_energy.csv", data_dir());
	config_set(&c->provider, "script");
	config_set(&c->script, script);
	config_add_input(c, csv, "input/building_energy.csv");
	config_add_output(c, "output/anomalies.csv");
	config_add_output(c, "output/energy_anomalies.png");
	config_add_output(c, "output/anomaly_report.md");
	free(script);
	free(csv);
}

/* SIGINT, SIGTERM, SIGHUP (a closed terminal): stop the run (arg). */
static void on_stop_signal(int sig, void *arg)
{
	struct session *s = arg;
	fprintf(stderr, "\nassay: %s: stopping the run\n",
	        sig == SIGINT   ? "interrupted"
	        : sig == SIGHUP ? "hung up"
	                        : "terminated");
	session_interrupt(s);
}

/* The run without the workbench: the printer, the terminal's prompts
 * when there is a terminal, the loop until the session is done. */
static int run_headless(struct config *c, const char *prompt,
                        const struct session_resume_opts *ro)
{
	char *err = NULL;
	struct loop *l = loop_new();
	if (!l) {
		fprintf(stderr, "assay: cannot create the event loop\n");
		return EXIT_FAILED;
	}
	struct session *s = session_new(l, c);
	struct headless *h = headless_attach(s, c->json);
	struct approver *ap =
	    isatty(STDIN_FILENO) ? approve_attach(s, l) : NULL;
	struct stepui *su = NULL;
	if (c->step && !(su = stepui_attach(s, l, &err))) {
		fprintf(stderr, "assay: %s\n", err);
		free(err);
		approve_detach(ap);
		session_free(s);
		headless_free(h);
		loop_free(l);
		return EXIT_USAGE;
	}
	loop_signal(l, SIGINT, on_stop_signal, s);
	loop_signal(l, SIGTERM, on_stop_signal, s);
	loop_signal(l, SIGHUP, on_stop_signal, s);
	int code;
	if ((ro ? session_resume(s, ro, prompt, &err)
	        : session_start(s, prompt, &err)) < 0) {
		fprintf(stderr, "assay: %s\n", err);
		free(err);
		code = session_exit_code(s);
	} else {
		while (session_state(s) != SESSION_DONE)
			loop_once(l, -1);
		code = session_exit_code(s);
		if (session_error(s)) /* the sandbox did not start */
			fprintf(stderr, "assay: %s\n", session_error(s));
	}
	stepui_detach(su);
	approve_detach(ap);
	session_free(s);
	headless_free(h);
	loop_free(l);
	return code;
}

/* The printers write UTF-8 whatever the terminal's locale, and the one
 * sanitizer (term_clean) measures characters with the C library's
 * tables: give it UTF-8 ones. The workbench sets the user's locale
 * itself (ui_main). */
static void cli_locale(void)
{
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		setlocale(LC_CTYPE, "C.utf8");
}

/* What the command line asked for, besides the configuration. */
struct cli_run {
	const char *cmd; /* run, demo, resume, or NULL */
	const char *prompt;
	int demo, resume, tui;
};

/* Where the first operand of argv is (options come before and after
 * operands, `--` ends them, as GNU getopt reads them): its index, or
 * -1. argv is left as it was. */
static int first_operand(int argc, char **argv)
{
	char **copy = xmalloc((size_t)(argc + 1) * sizeof *copy);
	memcpy(copy, argv, (size_t)(argc + 1) * sizeof *copy);
	opterr = 0;
	optind = 0;
	while (getopt_long(argc, copy, "h", options, NULL) != -1)
		;
	int at = -1;
	for (int i = 1; optind < argc && i < argc; i++)
		if (argv[i] == copy[optind])
			at = i;
	free(copy);
	return at;
}

/* resume's RUN, wherever it stands, moved to argv[1] (the options keep
 * their order); -1 + *err when there is none. */
static int resume_run_first(int argc, char **argv, char **err)
{
	int at = first_operand(argc, argv);
	if (at < 0)
		return set_err(err, "resume needs a RUN: assay resume RUN "
		                    "[OPTIONS] [PROMPT] (RUN: a run dir, its "
		                    "transcript, or a run id under "
		                    ".assay/runs/)");
	char *run = argv[at];
	memmove(argv + 2, argv + 1, (size_t)(at - 1) * sizeof *argv);
	argv[1] = run;
	return 0;
}

static void resume_usage(FILE *f)
{
	fputs(
	    "usage: assay resume RUN [OPTIONS] [PROMPT]\n"
	    "  continue a recorded run: the model's recorded answers come from "
	    "its\n"
	    "  cache (nothing paid twice), the calls' recorded results are "
	    "used,\n"
	    "  and it goes on live where the record ends (PROMPT: a new "
	    "message)\n"
	    "  RUN: a run dir, its transcript.jsonl, or a run id under "
	    ".assay/runs/\n"
	    "  --re-execute     run the recorded calls again, in a new run "
	    "dir\n"
	    "  --fork-at SEQ    fork the run at event SEQ (a tool_result or "
	    "a\n"
	    "                   user_message), in a new run dir\n"
	    "  --replace TEXT   what the forked event says instead\n"
	    "  and every option of assay run (see assay --help): they apply "
	    "over\n"
	    "  what the run recorded (--ask, --provider, --model, "
	    "--base-url...)\n",
	    f);
}

/* assay help [TOPIC]: the main help, or TOPIC's own (as TOPIC --help). */
static int cmd_help(int argc, char **argv)
{
	static const char *const topics[] = {
	    "run",    "demo",  "resume", "replay", "export", "eval",
	    "doctor", "trust", "models", "mcp",    NULL};
	if (argc < 2) {
		usage(stdout);
		return EXIT_OK;
	}
	/* the keys' table (core/config_keys.c); --markdown: the doc's
	 * table, for scripts/doc-config */
	if (!strcmp(argv[1], "config")) {
		config_keys_write(stdout,
		                  argc > 2 && !strcmp(argv[2], "--markdown"));
		return EXIT_OK;
	}
	for (int i = 0; topics[i]; i++)
		if (!strcmp(argv[1], topics[i])) {
			char *args[] = {"assay", argv[1], "--help", NULL};
			execv("/proc/self/exe", args);
			fprintf(stderr, "assay: help: %s\n", strerror(errno));
			return EXIT_USAGE;
		}
	fprintf(stderr,
	        "assay: help: no topic '%s'; topics: run, demo, resume, "
	        "replay, export, eval, doctor, trust, models, config\n",
	        argv[1]);
	return EXIT_USAGE;
}

/* The configuration from every layer and the options, under trust.
 * 1 when the command is done (--help, --version), -1 + *err on a usage
 * error, else 0. Can be called again (after a trust answer). */
static int build(struct config *c, struct resume_cli *rc, struct cli_run *r,
                 int argc, char **argv, enum config_trust trust, char **err)
{
	config_defaults(c);
	c->trust = trust;
	resume_cli_init(rc);
	if (load_layers(c, argc, argv, err) < 0)
		return -1;
	r->resume = r->cmd && !strcmp(r->cmd, "resume");
	if (r->resume && (find_early(argc, argv, "--help") ||
	                  find_early(argc, argv, "-h"))) {
		resume_usage(stdout);
		return 1;
	}
	if (r->resume && (resume_run_first(argc, argv, err) < 0 ||
	                  resume_prepare(rc, c, &argc, &argv, err) < 0))
		return -1;
	int opt;
	opterr = 0;
	optind = 0; /* glibc: a fresh scan; options and operands in any order */
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return 1;
		}
		if (opt == OPT_VERSION) {
			printf("assay %s\n", ASSAY_VERSION);
			return 1;
		}
		if (opt == '?')
			return set_err(err,
			               "unknown option or missing argument: %s "
			               "(see assay --help)",
			               argv[optind - 1]);
		if (opt == OPT_RE_EXECUTE || opt == OPT_FORK_AT ||
		    opt == OPT_REPLACE) {
			if (resume_option(rc, r->resume, opt - OPT_RE_EXECUTE,
			                  optarg, err) < 0)
				return -1;
			continue;
		}
		if (apply_option(c, opt, optarg, err) < 0)
			return -1;
	}
	r->prompt = optind < argc ? argv[optind] : NULL;
	if (optind + 1 < argc)
		return set_err(err,
		               "one PROMPT only (quote it): unexpected '%s'",
		               argv[optind + 1]);
	r->demo = r->cmd && !strcmp(r->cmd, "demo");
	if (r->demo) {
		setup_demo(c);
		if (!r->prompt)
			r->prompt = DEMO_PROMPT;
	}
	/* the workbench needs a terminal both ways; scripts and CI get
	 * the headless run, never a UI that waits for keys */
	r->tui = (!r->cmd || r->demo || r->resume) && !c->json &&
	         isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	return 0;
}

/* The project's files ask for settings that loosen security and the
 * project is not trusted: on a terminal, ask (the Trust dialog), and
 * build again when the answer applies them. 1 when the user quit, -1 +
 * *err, else 0 (c is then what runs; trust_report names what it left
 * out). */
static int ask_trust(struct config *c, struct resume_cli *rc, struct cli_run *r,
                     int argc, char **argv, char **err)
{
	if (!r->tui || !config_project_refused(c))
		return 0;
	int answer = ui_trust_ask(c);
	if (answer == 'q' || answer < 0) {
		fprintf(stderr, "assay: not started: the project was not "
		                "trusted (assay trust shows what it asks)\n");
		return 1;
	}
	if (answer == 'n')
		return 0;
	enum config_trust how = CONFIG_TRUST_ONCE;
	if (answer == 't') {
		if (trust_remember(json_str(c->project, "dir", ""),
		                   json_str(c->project, "hash", ""), err) < 0)
			return -1;
		how = CONFIG_TRUST_ASK; /* the store now says yes */
	}
	resume_cli_free(rc);
	config_free(c);
	int b = build(c, rc, r, argc, argv, how, err);
	return b < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct config c;
	struct resume_cli rc;
	struct cli_run r = {0};
	char *err = NULL;
	int code = EXIT_USAGE;
	cli_locale();
	fdlimit_raise(); /* every subcommand: sessions need many */
	if (argc > 1 && !strcmp(argv[1], "help"))
		return cmd_help(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "export"))
		return cmd_export(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "replay"))
		return cmd_replay(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "eval"))
		return cmd_eval(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "doctor"))
		return cmd_doctor(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "trust"))
		return cmd_trust(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "models"))
		return cmd_models(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "mcp"))
		return cmd_mcp(argc - 1, argv + 1);
	if (argc > 1 && (!strcmp(argv[1], "run") || !strcmp(argv[1], "demo") ||
	                 !strcmp(argv[1], "resume"))) {
		r.cmd = argv[1];
		argv++;
		argc--;
	}
	enum config_trust trust = find_early(argc, argv, "--trust-project")
	                              ? CONFIG_TRUST_FLAG
	                              : CONFIG_TRUST_ASK;
	int b = build(&c, &rc, &r, argc, argv, trust, &err);
	if (b) {
		code = b > 0 ? 0 : EXIT_USAGE;
		goto out;
	}
	if ((b = ask_trust(&c, &rc, &r, argc, argv, &err))) {
		code = b > 0 ? 0 : EXIT_USAGE;
		goto out;
	}
	if ((code = trust_report(&c)))
		goto out;
	code = EXIT_USAGE;
	if (!r.prompt && !r.tui && !r.resume) {
		set_err(&err, "a PROMPT is needed (see assay --help)");
		goto out;
	}
	if (validate(&c, &err) < 0)
		goto out;
	if (r.tui) {
		/* the demo streams at a pace a person can follow */
		if (r.demo)
			setenv("ASSAY_SCRIPT_DELAY_MS", "35", 0);
		/* no key: the workbench opens and says the ways on */
		c.key_later = 1;
		struct ui_opts o = {.prompt = r.prompt,
		                    .end_when_done = r.demo,
		                    .resume =
		                        r.resume ? resume_opts(&rc) : NULL};
		code = ui_main(&c, &o);
	} else {
		code = run_headless(&c, r.prompt,
		                    r.resume ? resume_opts(&rc) : NULL);
	}
out:
	if (err)
		fprintf(stderr, "assay: %s\n", err);
	free(err);
	resume_cli_free(&rc);
	config_free(&c);
	return code;
}
