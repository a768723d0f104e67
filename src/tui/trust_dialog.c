/* trust_dialog.c: "Trust this project?", asked on the terminal before
 * the workbench opens when the project files hold settings that loosen
 * security (src/core/project.c). A screen of its own, like the folder
 * trust prompts of other tools: nothing of the project runs, and no
 * model is asked, before the user has answered. The JSON it reads (the
 * project's trust report) is not an event. */
#include "tui.h"

#include "assay/config.h"
#include "assay/json.h"
#include "assay/termtext.h"
#include "assay/util.h"

#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Draw s at (y, x), at most w cells; term_clean'd first (the project's
 * files are untrusted text). */
static void put_clipped(int y, int x, int w, const char *s, attr_t a)
{
	char *t = term_clean(s, strlen(s), TERM_CLEAN_TABS);
	size_t n = strlen(t), off = 0;
	int cells = 0;
	while (off < n) {
		uint32_t cp;
		size_t k = utf8_decode(t + off, n - off, &cp);
		int cw = term_cp_width(cp);
		if (cw < 0)
			cw = 1;
		if (cells + cw > w)
			break;
		cells += cw;
		off += k;
	}
	attrset(a);
	mvaddnstr(y, x, t, (int)off);
	attrset(A_NORMAL);
	free(t);
}

/* One loose setting as the user reads it: FILE: "KEY": VALUE. */
static char *item_line(const cJSON *it)
{
	return xasprintf("%s: \"%s\": %s", json_str(it, "file", "?"),
	                 json_str(it, "key", "?"), json_str(it, "value", "?"));
}

static void draw(const cJSON *items, const char *dir)
{
	erase();
	int w = COLS - 4 > 100 ? 100 : COLS - 4;
	if (w < 20)
		w = COLS;
	int x = (COLS - w) / 2, y = 1;
	int n = cJSON_GetArraySize(items), required = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, items)
	{
		required |= json_bool(it, "required", 0);
	}
	put_clipped(y++, x, w, "Trust this project?", A_BOLD);
	y++;
	char *head = xasprintf("The project files in %s ask for settings that "
	                       "loosen the sandbox or the approvals:",
	                       dir);
	put_clipped(y++, x, w, head, A_NORMAL);
	free(head);
	y++;
	/* two lines an item; the keys need the last four rows */
	int room = (LINES - y - 5) / 2, shown = 0;
	cJSON_ArrayForEach(it, items)
	{
		if (shown == room && n > room) {
			char *more = xasprintf("... and %d more (assay trust "
			                       "lists them all)",
			                       n - shown);
			put_clipped(y++, x + 2, w - 2, more, A_NORMAL);
			free(more);
			break;
		}
		char *line = item_line(it);
		put_clipped(y++, x + 2, w - 2, line, A_BOLD);
		free(line);
		char *why = xasprintf(
		    "%s%s", json_str(it, "why", ""),
		    json_bool(it, "required", 0) ? " (the run needs it)" : "");
		put_clipped(y++, x + 4, w - 4, why, A_NORMAL);
		free(why);
		shown++;
	}
	y++;
	put_clipped(y++, x, w,
	            "t trust (remembered for this directory while these "
	            "files stay as they are)",
	            A_NORMAL);
	put_clipped(y++, x, w, "o once: this run only", A_NORMAL);
	put_clipped(y++, x, w,
	            required ? "n without them [Enter] (the run cannot "
	                       "start)   q quit"
	                     : "n without them [Enter]   q quit",
	            A_NORMAL);
	refresh();
}

int ui_trust_ask(const struct config *c)
{
	const cJSON *items = config_project_refused(c);
	if (!items)
		return 'n';
	setlocale(LC_ALL, "");
	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (!scr)
		return -1;
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	const char *dir = json_str(c->project, "dir", ".");
	int answer = 0;
	draw(items, dir);
	while (!answer) {
		int ch = getch();
		switch (ch) {
		case 't':
		case 'o':
		case 'n':
		case 'q':
			answer = ch;
			break;
		case '\r':
		case '\n':
		case KEY_ENTER:
		case 27: /* Escape */
			answer = 'n';
			break;
		case ERR: /* the terminal went away */
		case 3:   /* Ctrl-C in raw mode */
			answer = 'q';
			break;
		case KEY_RESIZE:
			draw(items, dir);
			break;
		default:
			break;
		}
	}
	endwin();
	delscreen(scr);
	return answer;
}
