/* approval.c: the Approval dialog, the TUI's approver. The session's
 * waiting calls are the queue (oldest on screen); the dialog is an
 * overlay drawn each frame from them, so the loop never waits for a
 * decision and the panes behind it go on updating. Keys mirror the
 * terminal prompt of `assay run` (src/cli/approve.c). */
#include "tui/ui.h"
#include "assay/termtext.h"

#include "assay/json.h"
#include "assay/session.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

#define DIALOG_W 100
#define FIELD_ROWS 6

enum amode { A_CHOICE, A_SCOPE, A_EDIT, A_FEEDBACK };

struct ui_approval {
	struct ui_overlay ov; /* on the stack while a call waits */
	struct ui_cursor cur; /* the field's, when it has one */
	char *id;             /* the request on screen */
	enum amode mode;
	struct ui_input field; /* the edited command, or the feedback */
	int scroll;            /* body rows scrolled away */
	int body_shown;        /* body rows the dialog had last time */
	char *msg;             /* why the last answer failed (cleaned) */
	/* the body's rows, made again when the request, the width or
	 * the queue changes */
	struct ui_rows body;
	int body_w;
	size_t body_n;
};

static const char CHOICES[] = "[y] run once  [e] edit  [a] always  [n] deny  "
                              "[f] deny with feedback";

static void approval_set_msg(struct ui_approval *a, const char *text)
{
	free(a->msg);
	a->msg = text ? term_clean(text, strlen(text), 0) : NULL;
}

static void approval_field_reset(struct ui_approval *a)
{
	buf_reset(&a->field.text);
	a->field.cur = 0;
	a->field.overflow = 0;
}

/* The request on screen; a new one starts at its choices. */
static const struct session_approval *approval_head(struct ui *u)
{
	struct ui_approval *a = u->appr;
	const struct session_approval *r =
	    a && u->s ? session_approval_at(u->s, 0) : NULL;
	if (!a)
		return NULL;
	if (!r || !a->id || strcmp(a->id, r->id)) {
		free(a->id);
		a->id = r ? xstrdup(r->id) : NULL;
		a->mode = A_CHOICE;
		a->scroll = 0;
		a->body_n = 0; /* rebuild */
		approval_set_msg(a, NULL);
		approval_field_reset(a);
	}
	return r;
}

int ui_approval_shown(struct ui *u)
{
	return approval_head(u) != NULL;
}

void ui_approval_sync(struct ui *u)
{
	if (!u->appr)
		return;
	if (approval_head(u))
		ui_overlay_push(u, &u->appr->ov);
	else
		ui_overlay_pop(u, &u->appr->ov);
}

/* ---- the approver ------------------------------------------------------ */

/* The session asks: the dialog comes up (or stays, with one more). */
void ui_approval_on_request(struct ui *u)
{
	ui_approval_sync(u);
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_STATUS);
}

/* A request went without a decision (the run ended, or a rule now allows
 * it). */
void ui_approval_on_cancel(struct ui *u, const char *id)
{
	if (u->appr && u->appr->id && !strcmp(u->appr->id, id))
		ui_notice(u, "no longer waiting for approval: %s", id);
	ui_approval_sync(u);
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_STATUS);
}

static void approval_on_request(void *arg, const struct session_approval *req)
{
	(void)req;
	ui_approval_on_request(arg);
}

static void approval_on_cancel(void *arg, const char *id)
{
	ui_approval_on_cancel(arg, id);
}

/* An MCP server's question went unanswered: the Input dialog's. */
static void approval_on_elicit_cancel(void *arg, const char *id)
{
	ui_elicit_on_cancel(arg, id);
}

/* An MCP server asks the person: the Input dialog (elicit.c). */
static void approval_on_elicit(void *arg, const struct session_elicitation *e)
{
	(void)e;
	ui_elicit_on_request(arg);
}

static void approval_draw(struct ui *u, struct ui_overlay *o);
static int approval_key(struct ui *u, struct ui_overlay *o, int key, int fn);
static int approval_cursor(struct ui *u, struct ui_overlay *o, int *y, int *x);

void ui_approval_attach(struct ui *u, int approver)
{
	static const struct session_approver ops = {
	    approval_on_request, approval_on_cancel, approval_on_elicit,
	    approval_on_elicit_cancel};
	u->appr = xcalloc(1, sizeof *u->appr);
	u->appr->ov = (struct ui_overlay){
	    .name = "approval",
	    .layer = UI_LAYER_DIALOG,
	    .flags = UI_OV_COVERS_IMAGES,
	    .draw = approval_draw,
	    .key = approval_key,
	    .cursor = approval_cursor,
	};
	ui_input_init(&u->appr->field);
	ui_elicit_attach(u);
	if (approver)
		session_set_approver(u->s, &ops, u);
}

void ui_approval_free(struct ui *u)
{
	struct ui_approval *a = u->appr;
	ui_elicit_free(u);
	if (!a)
		return;
	ui_overlay_pop(u, &a->ov);
	free(a->id);
	free(a->msg);
	ui_input_free(&a->field);
	ui_rows_free(&a->body);
	free(a);
	u->appr = NULL;
}

/* ---- rows ---------------------------------------------------------------- */

/* What the subject of a call of this tool is called. */
static const char *approval_subject_label(const char *tool)
{
	if (!strcmp(tool, "python"))
		return "code:";
	if (!strcmp(tool, "shell"))
		return "command:";
	if (!strcmp(tool, "write_file") || !strcmp(tool, "read_file") ||
	    !strcmp(tool, "list_files") || !strcmp(tool, "view_image"))
		return "path:";
	return "call:"; /* an MCP server's tool: SERVER/TOOL ARGUMENTS */
}

/* The request's rows: tool, subject, directory, reasons, the queue. */
static void approval_build_body(struct ui *u, const struct session_approval *r,
                                int width)
{
	struct ui_approval *a = u->appr;
	size_t n = session_approvals_pending(u->s);
	if (a->body_n == n && a->body_w == width)
		return;
	ui_rows_free(&a->body);
	memset(&a->body, 0, sizeof a->body);
	a->body_w = width;
	a->body_n = n;
	struct ui_rows *b = &a->body;
	ui_st_add_text(b, width, 9, "tool:    ", UE_DIM, r->tool, UE_OVERLAY);
	ui_st_add_text(b, width, 0, NULL, UE_DIM,
	               approval_subject_label(r->tool), UE_DIM);
	ui_st_add_text(b, width, 2, "  ", UE_OVERLAY, r->subject, UE_APPROVAL);
	ui_st_add_text(b, width, 9, "in:      ", UE_DIM, r->cwd, UE_OVERLAY);
	if (r->nreasons)
		ui_st_add_text(b, width, 0, NULL, UE_DIM,
		               "why it needs approval:", UE_DIM);
	else
		ui_st_add_text(b, width, 0, "why: ", UE_DIM,
		               "--ask all asks about every call", UE_OVERLAY);
	for (size_t i = 0; i < r->nreasons; i++)
		ui_st_add_text(b, width, 4, "  - ", UE_DIM, r->reasons[i],
		               UE_OVERLAY);
	if (n > 1) {
		char more[64];
		snprintf(more, sizeof more, "(%zu more waiting)", n - 1);
		ui_st_add_text(b, width, 0, NULL, UE_DIM, more, UE_DIM);
	}
}

/* The rows under the body: the choices, or what the mode asks for. */
static void approval_build_footer(struct ui *u,
                                  const struct session_approval *r, int width,
                                  struct ui_rows *f, int *field_at)
{
	struct ui_approval *a = u->appr;
	*field_at = -1;
	switch (a->mode) {
	case A_CHOICE:
		if (!r->rules)
			ui_st_add_text(
			    f, width, 2,
			    "\"always\" is not offered: ", UE_WARNING,
			    r->no_always ? r->no_always : "", UE_OVERLAY);
		char line[sizeof CHOICES];
		snprintf(line, sizeof line,
		         "[y] run once  %s%s[n] deny  "
		         "[f] deny with feedback",
		         r->editable ? "[e] edit  " : "",
		         r->rules ? "[a] always  " : "");
		ui_st_add_text(f, width, 0, NULL, UE_APPROVAL, line,
		               UE_APPROVAL);
		break;
	case A_SCOPE: {
		ui_st_add_text(f, width, 0, NULL, UE_DIM,
		               cJSON_GetArraySize(r->rules) > 1
		                   ? "the rules that would be saved:"
		                   : "the rule that would be saved:",
		               UE_DIM);
		const cJSON *rule;
		cJSON_ArrayForEach(rule, r->rules)
		{
			char *j = json_print(rule);
			ui_st_add_text(f, width, 2, "  ", UE_OVERLAY, j,
			               UE_APPROVAL);
			free(j);
		}
		ui_st_add_text(f, width, 0, NULL, UE_APPROVAL,
		               "[s] for this session  [p] for the project "
		               "(.assay/config.json)  Esc back",
		               UE_APPROVAL);
		break;
	}
	case A_EDIT:
	case A_FEEDBACK:
		ui_st_add_text(
		    f, width, 0, NULL, UE_DIM,
		    a->mode == A_EDIT
		        ? "edit, then Enter runs it (Ctrl-U clears, "
		          "Ctrl-J new line, Esc back):"
		        : "feedback for the model, then Enter (Esc back):",
		    UE_DIM);
		*field_at = f->n;
		break;
	}
	if (a->msg)
		ui_st_add_text(f, width, 2, "! ", UE_ERROR, a->msg, UE_ERROR);
}

/* ---- drawing ------------------------------------------------------------- */

/* n rows of r from row from, at (y, x). */
static void approval_draw_rows(WINDOW *w, int y, int x, int width,
                               const struct ui_rows *r, int from, int n)
{
	for (int i = 0; i < n && from + i < r->n; i++) {
		const char *row = r->row[from + i];
		ui_draw_st(w, y + i, x, width, row, strlen(row), UE_OVERLAY);
	}
}

/* The field's rows at y; returns the cursor's place. */
static void approval_draw_field(WINDOW *w, struct ui_approval *a, int y, int x,
                                int width, int rows, int *cy, int *cx)
{
	struct ui_input_layout lo;
	ui_input_layout(&a->field, width - 2, &lo);
	ui_draw_field(w, &a->field, &lo, y, x, width, rows, y + rows, cy, cx);
	ui_input_layout_free(&lo);
}

static int approval_field_rows(struct ui_approval *a, int width)
{
	return ui_input_rows(&a->field, width - 2, FIELD_ROWS);
}

/* The dialog over the frame: the request's body (scrolled), then its
 * choices or the field the mode asks for. */
static void approval_draw(struct ui *u, struct ui_overlay *o)
{
	const struct session_approval *r = approval_head(u);
	struct ui_approval *a = u->appr;
	(void)o;
	a->cur.on = 0;
	if (!r)
		return;
	int wd = u->lay.cols - 2 < DIALOG_W ? u->lay.cols - 2 : DIALOG_W;
	int inner = wd - 4;
	approval_build_body(u, r, inner);
	struct ui_rows foot = {0};
	int field_at;
	approval_build_footer(u, r, inner, &foot, &field_at);
	int frows = field_at >= 0 ? approval_field_rows(a, inner) : 0;
	if (frows > FIELD_ROWS)
		frows = FIELD_ROWS;
	int footer = foot.n + frows;
	int want = a->body.n + 1 + footer + 2;
	int h = want < u->lay.rows - 1 ? want : u->lay.rows - 1;
	int body_h = h - 2 - 1 - footer;
	if (body_h < 1)
		body_h = 1;
	int max_scroll = a->body.n - body_h > 0 ? a->body.n - body_h : 0;
	if (a->scroll > max_scroll)
		a->scroll = max_scroll;
	if (a->scroll < 0)
		a->scroll = 0;
	a->body_shown = body_h;

	WINDOW *w = ui_dialog_new(u, h, wd, "Approval");
	approval_draw_rows(w, 1, 2, inner, &a->body, a->scroll, body_h);
	if (max_scroll > 0) {
		char pos[64];
		snprintf(pos, sizeof pos, " %s%s PgUp/PgDn: %d-%d of %d ",
		         a->scroll > 0 ? "^" : "",
		         a->scroll < max_scroll ? "v" : "", a->scroll + 1,
		         a->scroll + body_h, a->body.n);
		int pw = (int)strlen(pos);
		ui_draw_text(w, h - 1, wd - pw - 2, pw, pos, UE_DIM);
	}
	int y = 1 + body_h + 1, cy = -1, cx = -1;
	for (int i = 0; i < foot.n && y < h - 1; i++) {
		if (i == field_at) {
			approval_draw_field(w, a, y, 2, inner, frows, &cy, &cx);
			y += frows;
		}
		approval_draw_rows(w, y++, 2, inner, &foot, i, 1);
	}
	if (field_at == foot.n && y < h - 1)
		approval_draw_field(w, a, y, 2, inner, frows, &cy, &cx);
	ui_rows_free(&foot);
	ui_dialog_done(w, &a->cur, cy >= 0 && cy < h - 1, cy, cx);
}

static int approval_cursor(struct ui *u, struct ui_overlay *o, int *y, int *x)
{
	(void)o;
	return ui_cursor_get(&u->appr->cur, y, x);
}

/* ---- keys ------------------------------------------------------------------
 */

/* The decision to the session; why it was refused stays on screen. */
static void approval_answer(struct ui *u, enum session_decision d,
                            const char *edited, const char *feedback,
                            enum session_scope scope)
{
	struct ui_approval *a = u->appr;
	char *err = NULL;
	char *id = xstrdup(a->id);
	if (session_approve(u->s, id, d, edited, feedback, scope, &err) < 0)
		approval_set_msg(a, err ? err : "the decision was refused");
	free(err);
	free(id);
}

/* A key at the choices: answer, or go to the field or scope it asks for. */
static void approval_on_choice(struct ui *u, const struct session_approval *r,
                               int key)
{
	struct ui_approval *a = u->appr;
	approval_set_msg(a, NULL);
	switch (key) {
	case 'y':
		approval_answer(u, SESSION_RUN_ONCE, NULL, NULL, 0);
		break;
	case 'n':
		approval_answer(u, SESSION_DENY, NULL, NULL, 0);
		break;
	case 'e':
		if (!r->editable)
			break;
		a->mode = A_EDIT;
		approval_field_reset(a);
		ui_input_insert(&a->field, r->subject, strlen(r->subject));
		break;
	case 'f':
		a->mode = A_FEEDBACK;
		approval_field_reset(a);
		break;
	case 'a':
		if (r->rules)
			a->mode = A_SCOPE;
		break;
	default:
		break;
	}
}

/* A key at "always": where the rule is saved. */
static void approval_on_scope(struct ui *u, int key)
{
	if (key == 's')
		approval_answer(u, SESSION_ALWAYS, NULL, NULL,
		                SESSION_SCOPE_SESSION);
	else if (key == 'p')
		approval_answer(u, SESSION_ALWAYS, NULL, NULL,
		                SESSION_SCOPE_PROJECT);
	else if (key == UI_KEY_ESC)
		u->appr->mode = A_CHOICE;
}

/* A key in the edit or feedback field: Enter answers, Esc goes back. */
static void approval_on_field(struct ui *u, int key, int fn)
{
	struct ui_approval *a = u->appr;
	struct ui_input *in = &a->field;
	if (!fn && key == UI_KEY_ENTER && !u->keys.in_paste) {
		char *text = xstrdup(buf_str(&in->text));
		if (a->mode == A_EDIT)
			approval_answer(u, SESSION_EDIT, text, NULL, 0);
		else
			approval_answer(u, SESSION_FEEDBACK, NULL, text, 0);
		free(text);
	} else if (!fn && key == UI_KEY_ESC) {
		a->mode = A_CHOICE;
		approval_set_msg(a, NULL);
	} else {
		ui_field_key(in, key, fn);
	}
}

/* Scrolling the body: a long command or many reasons. */
static int approval_scroll_key(struct ui *u, int key, int fn)
{
	struct ui_approval *a = u->appr;
	int page = a->body_shown > 1 ? a->body_shown - 1 : 1;
	int field = a->mode == A_EDIT || a->mode == A_FEEDBACK;
	if (fn && key == KEY_PPAGE)
		a->scroll -= page;
	else if (fn && key == KEY_NPAGE)
		a->scroll += page;
	else if (field)
		return 0;
	else if ((fn && key == KEY_UP) || (!fn && key == 'k'))
		a->scroll--;
	else if ((fn && key == KEY_DOWN) || (!fn && key == 'j'))
		a->scroll++;
	else if (fn && key == KEY_HOME)
		a->scroll = 0;
	else if (fn && key == KEY_END)
		a->scroll = a->body.n;
	else
		return 0;
	if (a->scroll < 0)
		a->scroll = 0; /* the bottom is clamped when drawn */
	return 1;
}

/* Every key while a call waits: its choices, or its field. */
static int approval_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	const struct session_approval *r = approval_head(u);
	(void)o;
	if (!r)
		return 0;
	struct ui_approval *a = u->appr;
	if (a->mode == A_CHOICE && !fn && key == UI_KEY_ESC)
		return 0; /* not the dialog's: a view leaves with it */
	if (!approval_scroll_key(u, key, fn)) {
		if (a->mode == A_CHOICE && !fn)
			approval_on_choice(u, r, key);
		else if (a->mode == A_SCOPE && !fn)
			approval_on_scope(u, key);
		else if (a->mode == A_EDIT || a->mode == A_FEEDBACK)
			approval_on_field(u, key, fn);
	}
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_STATUS);
	return 1;
}
