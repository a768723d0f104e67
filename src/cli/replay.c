/* replay.c: `assay replay RUN`: step through a recorded run in the
 * workbench (src/tui/replay.c) without a sandbox or network; a fork
 * asked for there (f) becomes a new live run in the workbench. */
#include "cli.h"

#include "assay/config.h"
#include "assay/session.h"
#include "assay/util.h"
#include "assay/workbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* assay replay --help. */
static void replay_usage(FILE *f)
{
	fputs("usage: assay replay RUN [--theme NAME] [FORK OPTIONS]\n"
	      "  RUN: a run dir, a run id under .assay/runs/, or a "
	      "transcript.jsonl\n"
	      "  FORK OPTIONS override what the run recorded for a fork's "
	      "live part:\n"
	      "  --provider NAME, --model M, --base-url URL, --script FILE,\n"
	      "  --instructions FILE, --input SRC[:DEST] (the run's inputs\n"
	      "  are host paths: a fork stages only those given here)\n"
	      "keys: <-/-> step, [/] turn, g go to a step, space play/pause,\n"
	      "  +/- speed, f fork at a tool result or user message, q quit\n",
	      f);
}

/* The layers below the command line, as for a run. */
static int replay_config(struct config *c, const char *theme, char **err)
{
	char *user = config_user_file();
	int rc = config_load(c, user, NULL, err);
	free(user);
	if (rc == 0 && theme)
		config_set(&c->theme, theme);
	return rc;
}

/* The options a fork may override, as name/value pairs. */
struct overrides {
	const char *provider, *model, *base_url, *script, *instructions;
	const char *inputs[16]; /* --input, repeatable */
	int ninputs;
};

/* f in the replay: a new run re-executes the recorded one up to the
 * event, with its text replaced, then goes on live in the workbench. */
static int fork_run(const char *run, const char *theme,
                    const struct overrides *ov, const struct ui_fork *f)
{
	struct config c;
	char *err = NULL;
	int code = EXIT_USAGE;
	config_defaults(&c);
	if (replay_config(&c, NULL, &err) < 0 ||
	    session_record_config(run, &c, &err) < 0)
		goto fail;
	if (theme)
		config_set(&c.theme, theme);
	if (ov->provider)
		config_set(&c.provider, ov->provider);
	if (ov->model)
		config_set(&c.model, ov->model);
	if (ov->base_url)
		config_set(&c.base_url, ov->base_url);
	if (ov->script)
		config_set(&c.script, ov->script);
	if (ov->instructions)
		config_set(&c.instructions, ov->instructions);
	for (int i = 0; i < ov->ninputs; i++) {
		struct config_input in;
		if (config_parse_input(ov->inputs[i], &in, &err) < 0)
			goto fail;
		config_add_input(&c, in.src, in.dest);
		free(in.src);
		free(in.dest);
	}
	/* the same rules as assay resume (session_resume): the record
	 * never picks the URL, inputs, out dir or workspace */
	struct session_resume_opts ro = {
	    .run = run,
	    .mode = SESSION_REEXECUTE,
	    .fork_at = f->seq,
	    .replace = f->text,
	    .base_url_given = ov->base_url != NULL,
	};
	struct ui_opts o = {.resume = &ro};
	code = ui_main(&c, &o);
	config_free(&c);
	return code;
fail:
	fprintf(stderr, "assay: fork: %s\n", err ? err : "cannot fork");
	free(err);
	config_free(&c);
	return code;
}

int cmd_replay(int argc, char **argv)
{
	const char *run = NULL, *theme = NULL;
	struct overrides ov = {0};
	struct {
		const char *name;
		const char **val;
	} opts[] = {
	    {"--theme", &theme},      {"--provider", &ov.provider},
	    {"--model", &ov.model},   {"--base-url", &ov.base_url},
	    {"--script", &ov.script}, {"--instructions", &ov.instructions}};
	int operands = 0; /* after --: every word is one */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int used = 0;
		if (!operands && !strcmp(a, "--")) {
			operands = 1;
			continue;
		}
		if (operands) {
			if (run) {
				fprintf(stderr,
				        "assay replay: one RUN only: "
				        "unexpected '%s'\n",
				        a);
				return EXIT_USAGE;
			}
			run = a;
			continue;
		}
		const char *input = NULL;
		if (!strcmp(a, "--input") && i + 1 < argc)
			input = argv[++i];
		else if (!strncmp(a, "--input=", 8))
			input = a + 8;
		if (input) {
			if (ov.ninputs == 16) {
				fprintf(stderr, "assay replay: at most 16 "
				                "--input\n");
				return EXIT_USAGE;
			}
			ov.inputs[ov.ninputs++] = input;
			continue;
		}
		for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
			size_t n = strlen(opts[k].name);
			if (!strcmp(a, opts[k].name) && i + 1 < argc) {
				*opts[k].val = argv[++i];
				used = 1;
			} else if (!strncmp(a, opts[k].name, n) &&
			           a[n] == '=') {
				*opts[k].val = a + n + 1;
				used = 1;
			}
		}
		if (used)
			continue;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			replay_usage(stdout);
			return EXIT_OK;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr,
			        "assay replay: unknown option '%s' (see assay "
			        "replay --help)\n",
			        a);
			return EXIT_USAGE;
		} else if (!run) {
			run = a;
		} else {
			fprintf(stderr,
			        "assay replay: one RUN only: unexpected "
			        "'%s'\n",
			        a);
			return EXIT_USAGE;
		}
	}
	if (!run) {
		replay_usage(stderr);
		return EXIT_USAGE;
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		/* a bad RUN is the first thing to say */
		char *lerr = NULL;
		if (ui_transcript_check(run, &lerr) < 0) {
			fprintf(stderr, "assay: %s\n", lerr);
			free(lerr);
			return EXIT_USAGE;
		}
		fprintf(stderr, "assay replay: needs a terminal (it is the "
		                "workbench); for a readable record use assay "
		                "export RUN\n");
		return EXIT_USAGE;
	}
	struct config c;
	char *err = NULL;
	config_defaults(&c);
	if (replay_config(&c, theme, &err) < 0) {
		fprintf(stderr, "assay: %s\n", err);
		free(err);
		config_free(&c);
		return EXIT_USAGE;
	}
	struct ui_fork fork = {0};
	struct ui_opts o = {.replay = run, .fork = &fork};
	int code = ui_main(&c, &o);
	config_free(&c);
	if (fork.text)
		code = fork_run(run, theme, &ov, &fork);
	free(fork.text);
	return code;
}
