/* config_doc.c: the table of configuration keys (config_keys.c) in
 * words: `assay help config` (which the manual takes up) and the
 * markdown table of the doc (scripts/doc-config). One source, so the
 * help, the manual and the doc name the same keys as the code. */
#include "config_keys.h"

#include "assay/buf.h"
#include "assay/util.h"

#include <stdio.h>
#include <string.h>

/* What loosens security, by kind: the rule project.c applies. */
static const char *const loose_words[] = {
    [CONFIG_SAFE] = NULL,
    [CONFIG_LOOSE_ABOVE] = "above yours",
    [CONFIG_LOOSE_BUDGET] = "above your budget, or 0 (none) while you "
                            "have one",
    [CONFIG_LOOSE_TRUE] = "true",
    [CONFIG_LOOSE_ALWAYS] = "always",
    [CONFIG_LOOSE_ASK] = "less careful than yours (all > risky > none)",
    [CONFIG_LOOSE_NETWORK] = "true or an allow list while yours is off",
    [CONFIG_LOOSE_PATH] = "the path, links resolved, is outside the project",
    [CONFIG_LOOSE_PATH_IF_FILE] = "a file outside the project",
    [CONFIG_LOOSE_INPUTS] = "an input's source is outside the project",
    [CONFIG_LOOSE_ALLOW] = "an allow rule you did not save yourself",
    [CONFIG_LOOSE_KINDS] = "it leaves out a kind yours has",
    [CONFIG_LOOSE_MEMBERS] = "see its members",
};

/* The value a key takes, in words. */
static void value_words(struct buf *b, const struct config_key *k)
{
	const char *s;
	if (k->values) {
		buf_puts(b, k->values);
		return;
	}
	switch (k->type) {
	case CONFIG_T_STRING:
		buf_puts(b, k->min > 0 ? "non-empty string" : "string");
		break;
	case CONFIG_T_FILE:
		buf_puts(b, "file name");
		break;
	case CONFIG_T_BOOL:
		buf_puts(b, "true or false");
		break;
	case CONFIG_T_INT:
	case CONFIG_T_LONG:
	case CONFIG_T_SIZE:
		buf_printf(b, "integer >= %.10g", k->min);
		if (k->max > 0 && k->max < 1e9)
			buf_printf(b, ", at most %.10g", k->max);
		break;
	case CONFIG_T_REAL:
		buf_printf(b, "number >= %.10g", k->min);
		break;
	case CONFIG_T_SHARE:
		buf_printf(b, "share above %.10g, at most %.10g", k->min,
		           k->max);
		break;
	case CONFIG_T_OBJECT:
	case CONFIG_T_NUMBERS:
		buf_puts(b, "object");
		break;
	default: /* the error's words, without the article */
		s = k->must ? k->must : "";
		if (!strncmp(s, "a ", 2) || !strncmp(s, "an ", 3))
			s = strchr(s, ' ') + 1;
		buf_puts(b, s);
		break;
	}
}

/* Who sets a key: the files (user only: a project or suite never),
 * the environment, the command line. */
static void who_words(struct buf *b, const struct config_key *k, int md)
{
	static const char *const files[] = {"user", "project", "suite"};
	const char *sep = "";
	for (int i = 0; i < 3; i++)
		if (k->by & (1u << i)) {
			buf_printf(b, "%s%s", sep, files[i]);
			sep = ", ";
		}
	if (k->env)
		buf_printf(b, md ? "%s`%s`" : "%s$%s", sep, k->env);
	if (k->flag)
		buf_printf(b, md ? ", `%s`" : ", %s", k->flag);
}

/* When a key loosens security (a project or suite that is not
 * trusted has it refused); NULL when it never does. */
static const char *loose_of(const struct config_key *k)
{
	if (!(k->by & CONFIG_BY_PROJECT))
		return "user only: never from a project or suite, trusted or "
		       "not";
	return loose_words[k->loose];
}

/* The text's opening paragraphs, above the keys. */
static const char text_head[] =
    "usage: assay help config        the configuration keys\n"
    "\n"
    "The keys of the configuration files "
    "($XDG_CONFIG_HOME/assay/config.json,\n"
    "./.assay/config.json, ./assay.json, --config FILE) and of an eval "
    "suite's\n"
    "defaults and tasks; a member is written inside its object "
    "(\"limits\":\n"
    "{\"memory_mb\": 4096}). Later layers win (assay --help). Defaults in "
    "brackets.\n"
    "A setting that loosens security applies from a project or suite only "
    "when\n"
    "you trust it (assay trust, --trust-project).\n"
    "\n";

static const char md_head[] =
    "| key | value | default | set by | loosens security when | what |\n"
    "|---|---|---|---|---|---|\n";

/* One key as `assay help config` shows it. */
static void text_row(FILE *f, const struct config_key *k, const char *value,
                     const char *who)
{
	fprintf(f, "  %-26s  %s", k->name, value);
	fprintf(f, k->def ? " [%s]\n" : "\n", k->def);
	fprintf(f, "      %s\n", k->doc);
	fprintf(f, "      set by: %s\n", who);
	if (!(k->by & CONFIG_BY_PROJECT))
		fprintf(f, "      %s\n", loose_of(k));
	else if (loose_of(k))
		fprintf(f, "      loosens security when: %s\n", loose_of(k));
}

/* A markdown table cell: pipes and tags escaped. */
static void md_cell(FILE *f, const char *s, int code)
{
	fputs(code ? " `" : " ", f);
	for (; *s; s++)
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '<')
			fputs("&lt;", f);
		else
			fputc(*s, f);
	fputs(code ? "` |" : " |", f);
}

/* One key as a row of the doc's table. */
static void md_row(FILE *f, const struct config_key *k, const char *value,
                   const char *who)
{
	fputs("|", f);
	md_cell(f, k->name, 1);
	md_cell(f, value, 0);
	md_cell(f, k->def ? k->def : "", k->def != NULL);
	md_cell(f, who, 0);
	md_cell(f, loose_of(k) ? loose_of(k) : "never", 0);
	md_cell(f, k->doc, 0);
	fputs("\n", f);
}

void config_keys_write(FILE *f, int markdown)
{
	struct buf value, who;
	buf_init(&value, 0);
	buf_init(&who, 0);
	fputs(markdown ? md_head : text_head, f);
	for (const struct config_key *k = config_keys(); k->name; k++) {
		if (k->type == CONFIG_T_IGNORED)
			continue;
		buf_reset(&value);
		buf_reset(&who);
		value_words(&value, k);
		who_words(&who, k, markdown);
		(markdown ? md_row : text_row)(f, k, buf_str(&value),
		                               buf_str(&who));
	}
	buf_free(&value);
	buf_free(&who);
}
