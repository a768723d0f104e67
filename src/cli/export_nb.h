/* export_nb.h: what the notebook and script exports share (private to
 * src/cli/export_nb.c, export_script.c and export_safe.c): the cells
 * gathered from a run, the judgement of which of them a host may
 * replay, and the ways code is quoted into Python. */
#ifndef ASSAY_CLI_EXPORT_NB_H
#define ASSAY_CLI_EXPORT_NB_H

#include "export.h"

#include "assay/buf.h"
#include "assay/strv.h"

#include <cjson/cJSON.h>

enum nb_kind { NB_MARKDOWN, NB_PYTHON, NB_SHELL, NB_WRITE };

struct nb_cell {
	enum nb_kind kind;
	char *id;     /* the tool call's; NULL for markdown */
	char *source; /* the code, the command, the text */
	char *path;   /* write_file's */
	struct buf out[2];
	int cut;       /* the record has only part of its output */
	cJSON *python; /* exec_end's "python" */
	int ran, failed, denied;
	char *why;          /* why it failed */
	cJSON *displays;    /* its images, as display_data outputs */
	cJSON *attachments; /* markdown: an image sent to the model */
	int count;          /* execution count (code cells that ran) */
	/* why a replay on a host leaves it out (exp_safe_judge), or NULL */
	char *skip;
	char *rel; /* write_file's path, workspace-relative (judged safe) */
};

struct exp_nb {
	int script; /* else ipynb */
	struct nb_cell *cell;
	size_t n, cap;
	char *run_id, *model;
	cJSON *inputs;             /* run_start's */
	cJSON *sandbox;            /* run_start's: the backend and its image */
	struct strv image_changes; /* resumes on another image, said */
	long last_call;            /* the cell of the call that ran last, -1 */
	long *img_cell;            /* per x->images[i]: the cell that made it */
	int restarts;              /* python sessions after the first */
	struct strv notes;         /* what could not be exported */
	/* files shell and python calls made or changed, and the call */
	struct strv made_paths, made_by;
};

/* Where the run ran, for the header: "sandbox: docker (image X); image
 * id: ..." and a line per resume on another image. Caller frees. */
char *exp_nb_sandbox_text(const struct exp_nb *nb);

/* "python", "shell" or "write_file". */
const char *exp_nb_kind_name(enum nb_kind k);
/* s as a Python string literal (a JSON one is one). Caller frees. */
char *exp_nb_literal(const char *s);
/* s as Python comment lines, each starting "# " and prefix: every
 * line break Python knows (\n, \r) and \f, \v starts a new one, so no
 * text of the run can end a comment. Caller frees. */
char *exp_nb_commented(const char *prefix, const char *s);

/* export_safe.c: set each code cell's skip: denied, failed, never ran,
 * or a reason of the policy's classifier (the one approvals use) to ask
 * about it; a write_file of code that has such reasons, and the calls
 * that name the file it wrote, too. */
void exp_safe_judge(struct exp_nb *nb);

/* export_script.c: the cells as one Python script that replays the
 * safe calls in a workspace of its own. */
void exp_nb_write_script(struct exp *x, struct exp_nb *nb);

#endif
