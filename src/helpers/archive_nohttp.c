/* archive_nohttp.c: `assay-archive http` in the helper built without
 * HTTP. The archive work on the host (create, list, stage, hash...)
 * runs in assay-archive, which does not link libcurl and its twenty
 * libraries, so it starts in a few milliseconds; the commands that
 * talk to a daemon (http, delta over http) run in assay-xfer, the same
 * helper with archive_http.c (src/sandbox/child.c picks the binary). */
#include "helpers/archive_delta.h"

#include <stdio.h>

int archive_http(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("assay-archive: this helper does not speak HTTP: assay-xfer "
	      "does (it belongs beside assay-archive)\n",
	      stderr);
	return 2;
}
