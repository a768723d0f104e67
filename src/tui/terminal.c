/* terminal.c: is the terminal one curses can drive? Asked before the
 * run starts, so a bad TERM is a plain message, not a half-opened
 * screen. term.h defines macros with common names (lines, columns...),
 * so it is included here only. */
#include "tui/tui.h"

#include "assay/util.h"

#include <curses.h>
#include <stdlib.h>
#include <term.h>
#include <unistd.h>

int ui_terminal_check(char **err)
{
	int e = 0;
	const char *term = getenv("TERM");
	if (setupterm(NULL, STDOUT_FILENO, &e) != OK)
		return set_err(err,
		               "the terminal (TERM=%s) is not one ncurses "
		               "knows: set TERM (e.g. xterm-256color), or use "
		               "assay run for a headless run",
		               term && *term ? term : "unset");
	char *cup = tigetstr("cup");
	int usable = tigetflag("hc") <= 0 && cup && cup != (char *)-1;
	del_curterm(cur_term);
	if (!usable)
		return set_err(err,
		               "the terminal (TERM=%s) cannot move the "
		               "cursor: use assay run",
		               term);
	return 0;
}
