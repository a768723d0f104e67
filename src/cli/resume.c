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

static struct session_resume_opts R = {.mode = SESSION_RESUME};
/* the configuration, and its base URL before the options: a URL the
 * options change was passed on this command line */
static const struct config *C;
static char *layer_url;

int resume_prepare(struct config *c, int *argc, char ***argv, char **err)
{
	if (*argc < 2 || (*argv)[1][0] == '-')
		return set_err(err, "resume needs the run first: assay resume "
		                    "RUN [OPTIONS] [PROMPT] (RUN: a run dir, "
		                    "its transcript, or a run id under "
		                    ".assay/runs/)");
	R.run = (*argv)[1];
	if (session_record_config(R.run, c, err) < 0)
		return -1;
	C = c;
	free(layer_url);
	layer_url = c->base_url ? xstrdup(c->base_url) : NULL;
	(*argv)++;
	(*argc)--;
	return 0;
}

int resume_option(int resume, int which, const char *arg, char **err)
{
	static const char *const names[] = {"--re-execute", "--fork-at",
	                                    "--replace"};
	if (!resume)
		return set_err(err, "%s is an option of assay resume",
		               names[which]);
	char *end;
	switch (which) {
	case 0:
		R.mode = SESSION_REEXECUTE;
		break;
	case 1:
		errno = 0;
		R.fork_at = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || !R.fork_at)
			return set_err(
			    err,
			    "--fork-at: '%s' is not an event seq "
			    "number (the \"seq\" of a tool_result or "
			    "user_message in transcript.jsonl)",
			    arg);
		break;
	default:
		R.replace = arg;
		break;
	}
	return 0;
}

const struct session_resume_opts *resume_opts(void)
{
	if (R.fork_at)
		R.mode = SESSION_REEXECUTE; /* a fork always re-executes */
	R.base_url_given =
	    C && C->base_url && (!layer_url || strcmp(C->base_url, layer_url));
	return &R;
}
