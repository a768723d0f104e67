/* tty.c: what the terminal prompts of `assay run` share (approve.c,
 * step.c): untrusted text (commands, model text, errors) shown on the
 * terminal through the one sanitizer, line by line and indented. */
#include "cli.h"

#include "assay/termtext.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

char *tty_clean(const char *s, size_t n)
{
	return term_clean(s, n, TERM_CLEAN_NEWLINES | TERM_CLEAN_KEEP_TABS);
}

void tty_say(int fd, const char *indent, const char *text)
{
	char *clean = tty_clean(text, strlen(text));
	for (char *line = clean, *nl; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		fd_printf(fd, "%s%s\n", indent, line);
	}
	free(clean);
}
