/* resume.c: `assay resume RUN [OPTIONS] [PROMPT]`: the recorded run's
 * settings become the layer below the command-line options, and the
 * flags that pick how it goes on (--re-execute, --fork-at, --replace)
 * become the session's resume options. The run itself is headless
 * (main.c's run_headless, with session_resume). */
#include "cli.h"

#include "assay/config.h"
#include "assay/session.h"
#include "assay/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void resume_cli_init(struct resume_cli *r)
{
	*r = (struct resume_cli){.ro = {.mode = SESSION_RESUME}};
}

void resume_cli_free(struct resume_cli *r)
{
	free(r->layer_url);
	r->layer_url = NULL;
}

int resume_prepare(struct resume_cli *r, struct config *c, int *argc,
                   char ***argv, char **err)
{
	if (*argc < 2)
		return set_err(err, "resume needs the run first: assay resume "
		                    "RUN [OPTIONS] [PROMPT] (RUN: a run dir, "
		                    "its transcript, or a run id under "
		                    ".assay/runs/)");
	r->ro.run = (*argv)[1];
	if (session_record_config(r->ro.run, c, err) < 0)
		return -1;
	r->cfg = c;
	free(r->layer_url);
	r->layer_url = c->base_url ? xstrdup(c->base_url) : NULL;
	(*argv)++;
	(*argc)--;
	return 0;
}

int resume_option(struct resume_cli *r, int resume, int which, const char *arg,
                  char **err)
{
	static const char *const names[] = {"--re-execute", "--fork-at",
	                                    "--replace"};
	if (!resume)
		return set_err(err, "%s is an option of assay resume",
		               names[which]);
	char *end;
	switch (which) {
	case 0:
		r->ro.mode = SESSION_REEXECUTE;
		break;
	case 1:
		errno = 0;
		r->ro.fork_at = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || !r->ro.fork_at)
			return set_err(
			    err,
			    "--fork-at: '%s' is not an event seq "
			    "number (the \"seq\" of a tool_result or "
			    "user_message in transcript.jsonl)",
			    arg);
		break;
	default:
		r->ro.replace = arg;
		break;
	}
	return 0;
}

const struct session_resume_opts *resume_opts(struct resume_cli *r)
{
	if (r->ro.fork_at)
		r->ro.mode = SESSION_REEXECUTE; /* a fork always re-executes */
	r->ro.base_url_given =
	    r->cfg && r->cfg->base_url &&
	    (!r->layer_url || strcmp(r->cfg->base_url, r->layer_url));
	return &r->ro;
}
