/* elicit.c: the Input dialog: an MCP server asks the person something
 * (elicitation/create) and the form its schema describes is filled
 * here: text and numbers typed, yes/no and choices picked with Space,
 * defaults shown filled in. Enter sends it (the session checks it
 * against the schema; why it refused stays on screen), Esc declines,
 * Ctrl-C goes on to the workbench (the call is cancelled, the question
 * with it). The schema is JSON, not an event. */
#include "tui/ui.h"
#include "tui/draw.h"
#include "assay/json.h"
#include "assay/session.h"
#include "assay/termtext.h"
#include "assay/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DIALOG_W 90

enum fkind { F_TEXT, F_NUMBER, F_INTEGER, F_BOOL, F_CHOICE, F_MULTI };

/* One field of the form: a property of the schema. */
struct efield {
	char *name;
	char *label; /* title or name, cleaned */
	char *desc;  /* description (raw) or NULL */
	int required;
	enum fkind kind;
	cJSON *choices; /* F_CHOICE, F_MULTI: the values */
	char **titles;  /* ... as shown, cleaned */
	int nchoice;
	int choice;            /* F_CHOICE: the one picked, -1 none */
	unsigned char *picked; /* F_MULTI */
	int mcur;              /* F_MULTI: the choice under the cursor */
	int yes;               /* F_BOOL: 1, 0, -1 not set */
	struct ui_input in;    /* F_TEXT, F_NUMBER, F_INTEGER */
};

struct ui_elicit {
	struct ui_overlay ov;
	struct ui_cursor cur;
	char *id; /* the question on screen */
	struct efield *f;
	int n, at;
	char *msg;  /* why the last answer was refused (cleaned) */
	int scroll; /* rows scrolled away */
	int paged;  /* PgUp/PgDn moved the view: it follows the focus
	               again once a field is moved to */
	int body_shown;
};

/* ---- the form ------------------------------------------------------------ */

static void form_free(struct ui_elicit *e)
{
	for (int i = 0; i < e->n; i++) {
		struct efield *f = &e->f[i];
		free(f->name);
		free(f->label);
		free(f->desc);
		cJSON_Delete(f->choices);
		for (int k = 0; k < f->nchoice; k++)
			free(f->titles[k]);
		free(f->titles);
		free(f->picked);
		ui_input_free(&f->in);
	}
	free(e->f);
	e->f = NULL;
	e->n = e->at = e->scroll = e->paged = 0;
	free(e->msg);
	e->msg = NULL;
}

static char *clean(const char *s)
{
	return term_clean(s, strlen(s), TERM_CLEAN_TABS);
}

/* The title shown for choice k of property p (oneOf/anyOf's title,
 * enumNames, else the value). */
static char *choice_title(const cJSON *p, const cJSON *v, int k)
{
	const cJSON *items = cJSON_GetObjectItem(p, "items");
	const cJSON *src = items ? items : p;
	const cJSON *of = cJSON_GetObjectItem(src, "oneOf");
	if (!of)
		of = cJSON_GetObjectItem(src, "anyOf");
	const cJSON *o = cJSON_GetArrayItem(of, k);
	const char *t = json_str(o, "title", NULL);
	if (!t)
		t = cJSON_GetStringValue(
		    cJSON_GetArrayItem(cJSON_GetObjectItem(p, "enumNames"), k));
	if (t)
		return clean(t);
	char *j = cJSON_IsString(v) ? xstrdup(v->valuestring) : json_print(v);
	char *c = clean(j);
	free(j);
	return c;
}

/* A field's value from the schema's default. */
static void field_default(struct efield *f, const cJSON *def)
{
	if (!def)
		return;
	if (f->kind == F_BOOL && cJSON_IsBool(def)) {
		f->yes = cJSON_IsTrue(def);
	} else if (f->kind == F_CHOICE) {
		for (int k = 0; k < f->nchoice; k++)
			if (cJSON_Compare(cJSON_GetArrayItem(f->choices, k),
			                  def, 1))
				f->choice = k;
	} else if (f->kind == F_MULTI && cJSON_IsArray(def)) {
		const cJSON *d;
		cJSON_ArrayForEach(d, def) for (
		    int k = 0; k < f->nchoice;
		    k++) if (cJSON_Compare(cJSON_GetArrayItem(f->choices, k), d,
		                           1)) f->picked[k] = 1;
	} else if (cJSON_IsString(def)) {
		ui_input_insert(&f->in, def->valuestring,
		                strlen(def->valuestring));
	} else if (cJSON_IsNumber(def)) { /* as JSON says it: 0.1 */
		char *n = cJSON_PrintUnformatted(def);
		ui_input_insert(&f->in, n, strlen(n));
		free(n);
	}
}

/* The form of a schema: a field per property, in its order. */
static void form_build(struct ui_elicit *e, const cJSON *schema)
{
	const cJSON *props = cJSON_GetObjectItem(schema, "properties");
	const cJSON *req = cJSON_GetObjectItem(schema, "required");
	int n = cJSON_GetArraySize(props);
	e->f = xcalloc((size_t)(n > 0 ? n : 1), sizeof *e->f);
	const cJSON *p;
	cJSON_ArrayForEach(p, props)
	{
		if (!p->string)
			continue;
		struct efield *f = &e->f[e->n++];
		f->name = xstrdup(p->string);
		f->label = clean(json_str(p, "title", p->string));
		const char *d = json_str(p, "description", NULL);
		f->desc = d ? xstrdup(d) : NULL;
		const cJSON *r;
		cJSON_ArrayForEach(r,
		                   req) if (cJSON_IsString(r) &&
		                            !strcmp(r->valuestring, p->string))
		    f->required = 1;
		const char *type = json_str(p, "type", "string");
		f->choices = session_elicit_choices(p);
		f->nchoice = cJSON_GetArraySize(f->choices);
		f->choice = -1;
		f->yes = -1;
		ui_input_init(&f->in);
		if (!strcmp(type, "boolean"))
			f->kind = F_BOOL;
		else if (!strcmp(type, "array"))
			f->kind = F_MULTI;
		else if (f->choices)
			f->kind = F_CHOICE;
		else if (!strcmp(type, "integer"))
			f->kind = F_INTEGER;
		else if (!strcmp(type, "number"))
			f->kind = F_NUMBER;
		else
			f->kind = F_TEXT;
		if (f->nchoice) {
			f->titles =
			    xcalloc((size_t)f->nchoice, sizeof *f->titles);
			f->picked = xcalloc((size_t)f->nchoice, 1);
			for (int k = 0; k < f->nchoice; k++)
				f->titles[k] = choice_title(
				    p, cJSON_GetArrayItem(f->choices, k), k);
		}
		field_default(f, cJSON_GetObjectItem(p, "default"));
	}
}

/* text as a JSON number (JSON's syntax in any locale: never hex or
 * "2,5"; an integer within 2^53, which a double holds exactly), or
 * NULL. */
static cJSON *number_of(const char *text, int integer)
{
	while (*text == ' ')
		text++;
	const char *end = NULL; /* the number and nothing after it */
	cJSON *n = cJSON_ParseWithOpts(text, &end, 1);
	if (!cJSON_IsNumber(n) || !isfinite(n->valuedouble) ||
	    (integer && (fabs(n->valuedouble) > 9007199254740992.0 ||
	                 n->valuedouble != floor(n->valuedouble)))) {
		cJSON_Delete(n);
		return NULL;
	}
	return n;
}

/* The answer the form holds: typed values; a field left empty is
 * omitted (the session fills defaults, and says what is required).
 * NULL and *why when a number does not parse. */
static cJSON *form_content(const struct ui_elicit *e, char **why)
{
	cJSON *c = cJSON_CreateObject();
	for (int i = 0; i < e->n; i++) {
		const struct efield *f = &e->f[i];
		const char *t = buf_str(&f->in.text);
		if (f->kind == F_BOOL && f->yes >= 0) {
			cJSON_AddBoolToObject(c, f->name, f->yes);
		} else if (f->kind == F_CHOICE && f->choice >= 0) {
			cJSON_AddItemToObject(
			    c, f->name,
			    cJSON_Duplicate(
			        cJSON_GetArrayItem(f->choices, f->choice), 1));
		} else if (f->kind == F_MULTI && f->nchoice &&
		           memchr(f->picked, 1, (size_t)f->nchoice)) {
			cJSON *a = cJSON_AddArrayToObject(c, f->name);
			for (int k = 0; k < f->nchoice; k++)
				if (f->picked[k])
					cJSON_AddItemToArray(
					    a,
					    cJSON_Duplicate(cJSON_GetArrayItem(
					                        f->choices, k),
					                    1));
		} else if ((f->kind == F_NUMBER || f->kind == F_INTEGER) &&
		           *t) {
			cJSON *num = number_of(t, f->kind == F_INTEGER);
			if (!num) {
				*why = xasprintf(
				    "%s: \"%.40s\" is not %s", f->label, t,
				    f->kind == F_INTEGER
				        ? "a whole number (within 2^53)"
				        : "a number (digits, a point, an "
				          "exponent)");
				cJSON_Delete(c);
				return NULL;
			}
			cJSON_AddItemToObject(c, f->name, num);
		} else if (f->kind == F_TEXT && *t) {
			cJSON_AddStringToObject(c, f->name, t);
		}
	}
	return c;
}

/* ---- the question on screen ---------------------------------------------- */

/* The oldest question waiting; a new one gets a new form. */
static const struct session_elicitation *elicit_head(struct ui *u)
{
	struct ui_elicit *e = u->elicit;
	const struct session_elicitation *q =
	    e && u->s ? session_elicitation_at(u->s, 0) : NULL;
	if (!e)
		return NULL;
	if (!q || !e->id || strcmp(e->id, q->id)) {
		form_free(e);
		free(e->id);
		e->id = q ? xstrdup(q->id) : NULL;
		if (q)
			form_build(e, q->schema);
	}
	return q;
}

int ui_elicit_shown(struct ui *u)
{
	return elicit_head(u) != NULL;
}

void ui_elicit_sync(struct ui *u)
{
	if (!u->elicit)
		return;
	if (elicit_head(u))
		ui_overlay_push(u, &u->elicit->ov);
	else
		ui_overlay_pop(u, &u->elicit->ov);
}

void ui_elicit_on_request(struct ui *u)
{
	ui_elicit_sync(u);
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_STATUS);
}

void ui_elicit_on_cancel(struct ui *u, const char *id)
{
	if (u->elicit && u->elicit->id && !strcmp(u->elicit->id, id))
		ui_notice(u, "the server's question was withdrawn (%s)", id);
	ui_elicit_sync(u);
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_STATUS);
}

/* ---- drawing ------------------------------------------------------------- */

/* A field's value as a row (the focused text field is drawn as a field
 * over it). */
static char *field_value(const struct efield *f, int focused)
{
	struct buf b;
	buf_init(&b, 0);
	switch (f->kind) {
	case F_BOOL:
		buf_printf(&b, "%s yes   %s no", f->yes == 1 ? "(*)" : "( )",
		           f->yes == 0 ? "(*)" : "( )");
		break;
	case F_CHOICE:
		buf_printf(&b, "< %s >",
		           f->choice >= 0 ? f->titles[f->choice] : "(none)");
		break;
	case F_MULTI:
		for (int k = 0; k < f->nchoice; k++)
			buf_printf(&b, "%s%s%s%s ",
			           focused && k == f->mcur ? ">" : " ",
			           f->picked[k] ? "[x] " : "[ ] ", f->titles[k],
			           focused && k == f->mcur ? "<" : " ");
		break;
	default: {
		char *t = clean(buf_str(&f->in.text));
		buf_printf(&b, "> %s", t);
		free(t);
	}
	}
	return buf_detach(&b);
}

/* The form's rows; value_row and label_row get each field's rows. */
static void form_rows(struct ui *u, const struct session_elicitation *q,
                      int width, struct ui_rows *r, int *value_row,
                      int *label_row)
{
	struct ui_elicit *e = u->elicit;
	char *server = clean(q->server);
	char *head = xasprintf("the MCP server %s asks:", server);
	ui_st_add_text(r, width, 0, NULL, UE_DIM, head, UE_DIM);
	free(head);
	free(server);
	ui_st_add_text(r, width, 2, "  ", UE_OVERLAY,
	               *q->message ? q->message : "(no message)", UE_APPROVAL);
	for (int i = 0; i < e->n; i++) {
		const struct efield *f = &e->f[i];
		label_row[i] = r->n;
		char *lab = xasprintf("%s %s%s", i == e->at ? ">" : " ",
		                      f->label, f->required ? " *" : "");
		ui_st_add_text(r, width, 0, NULL, UE_OVERLAY, lab,
		               i == e->at ? UE_BOLD : UE_OVERLAY);
		free(lab);
		if (f->desc)
			ui_st_add_text(r, width, 4, "    ", UE_DIM, f->desc,
			               UE_DIM);
		value_row[i] = r->n;
		char *v = field_value(f, i == e->at);
		ui_st_add_text(r, width, 4, "    ", UE_OVERLAY, v,
		               i == e->at ? UE_INPUT : UE_OVERLAY);
		free(v);
	}
	if (!e->n)
		ui_st_add_text(r, width, 0, NULL, UE_DIM,
		               "(it asks for no fields: Enter answers yes)",
		               UE_DIM);
}

/* The keys that apply to the focused field, as the footer says them. */
static const char *field_hint(const struct ui_elicit *e)
{
	if (!e->n)
		return "Enter send  Esc decline";
	switch (e->f[e->at].kind) {
	case F_BOOL:
	case F_CHOICE:
		return "Space/Left/Right choose  Tab next  Enter send  Esc "
		       "decline  (* required)";
	case F_MULTI:
		return "Left/Right move  Space pick  Tab next  Enter send  Esc "
		       "decline  (* required)";
	default:
		return "type  Tab next  Enter send  Esc decline  (* required)";
	}
}

static void elicit_draw(struct ui *u, struct ui_overlay *o)
{
	const struct session_elicitation *q = elicit_head(u);
	struct ui_elicit *e = u->elicit;
	(void)o;
	e->cur.on = 0;
	if (!q)
		return;
	int wd = u->lay.cols - 2 < DIALOG_W ? u->lay.cols - 2 : DIALOG_W;
	int inner = wd - 4;
	struct ui_rows r = {0};
	int *vrow = xcalloc((size_t)(e->n ? e->n : 1), sizeof *vrow);
	int *lrow = xcalloc((size_t)(e->n ? e->n : 1), sizeof *lrow);
	form_rows(u, q, inner, &r, vrow, lrow);
	struct ui_rows foot = {0};
	ui_st_add_text(&foot, inner, 0, NULL, UE_APPROVAL, field_hint(e),
	               UE_APPROVAL);
	if (e->msg)
		ui_st_add_text(&foot, inner, 2, "! ", UE_ERROR, e->msg,
		               UE_ERROR);
	int want = r.n + 1 + foot.n + 2;
	int h = want < u->lay.rows - 1 ? want : u->lay.rows - 1;
	int body_h = h - 3 - foot.n > 1 ? h - 3 - foot.n : 1;
	/* the focused field in view, its label and description too, unless
	 * PgUp/PgDn moved the view since */
	int focus = e->n ? vrow[e->at] : 0;
	int top = e->n ? lrow[e->at] : 0;
	if (!e->paged && focus >= e->scroll + body_h)
		e->scroll = focus - body_h + 1;
	if (!e->paged && top < e->scroll)
		e->scroll = top;
	int max_scroll = r.n - body_h > 0 ? r.n - body_h : 0;
	if (e->scroll > max_scroll)
		e->scroll = max_scroll;
	if (e->scroll < 0)
		e->scroll = 0;
	e->body_shown = body_h;
	char *srv = clean(q->server);
	/* at most 32 bytes, never cutting a character in two */
	int srv_n =
	    (int)utf8_complete_prefix(srv, strlen(srv) < 32 ? strlen(srv) : 32);
	char *title = xasprintf("Input requested by %.*s", srv_n, srv);
	WINDOW *w = ui_dialog_new(u, h, wd, title);
	free(title);
	free(srv);
	int cy = -1, cx = -1;
	for (int i = 0; i < body_h && e->scroll + i < r.n; i++) {
		const char *row = r.row[e->scroll + i];
		ui_draw_st(w, 1 + i, 2, inner, row, strlen(row), UE_OVERLAY);
	}
	struct efield *f = e->n ? &e->f[e->at] : NULL;
	if (f && f->kind <= F_INTEGER && focus - e->scroll < body_h) {
		struct ui_input_layout lo;
		ui_input_layout(&f->in, inner - 6, &lo);
		int y = 1 + focus - e->scroll;
		ui_fill(w, y, 6, inner - 4, UE_INPUT);
		ui_draw_field(w, &f->in, &lo, y, 6, inner - 4, 1, y + 1, &cy,
		              &cx);
		ui_input_layout_free(&lo);
	}
	for (int i = 0; i < foot.n && 2 + body_h + i < h - 1; i++)
		ui_draw_st(w, 2 + body_h + i, 2, inner, foot.row[i],
		           strlen(foot.row[i]), UE_OVERLAY);
	if (max_scroll > 0) {
		char pos[64];
		snprintf(pos, sizeof pos, " PgUp/PgDn: %d-%d of %d ",
		         e->scroll + 1, e->scroll + body_h, r.n);
		int pw = (int)strlen(pos);
		ui_draw_text(w, h - 1, wd - pw - 2, pw, pos, UE_DIM);
	}
	ui_rows_free(&r);
	ui_rows_free(&foot);
	free(vrow);
	free(lrow);
	ui_dialog_done(w, &e->cur, cy >= 0, cy, cx);
}

static int elicit_cursor(struct ui *u, struct ui_overlay *o, int *y, int *x)
{
	(void)o;
	return ui_cursor_get(&u->elicit->cur, y, x);
}

/* ---- keys ---------------------------------------------------------------- */

/* The answer to the session; why it was refused stays on screen. */
static void elicit_answer(struct ui *u, const char *action)
{
	struct ui_elicit *e = u->elicit;
	char *err = NULL;
	cJSON *content = NULL;
	if (!strcmp(action, "accept") && !(content = form_content(e, &err))) {
		free(e->msg);
		e->msg = clean(err);
		free(err);
		return;
	}
	char *id = xstrdup(e->id);
	if (session_elicit(u->s, id, action, content, &err) < 0) {
		free(e->msg);
		e->msg = clean(err ? err : "the answer was refused");
	}
	free(err);
	free(id);
	cJSON_Delete(content);
	ui_elicit_sync(u);
}

/* Space, Left, Right on a choice, a yes/no or a multi-select. */
static int field_pick(struct efield *f, int key, int fn)
{
	int left = fn && key == KEY_LEFT, right = fn && key == KEY_RIGHT,
	    space = !fn && key == ' ';
	if (!left && !right && !space)
		return 0;
	if (f->kind == F_BOOL) {
		f->yes = left ? 1 : right ? 0 : f->yes != 1;
	} else if (f->kind == F_CHOICE && f->nchoice) {
		int d = left ? -1 : 1;
		f->choice = f->choice < 0
		                ? 0
		                : (f->choice + d + f->nchoice) % f->nchoice;
	} else if (f->kind == F_MULTI && f->nchoice) {
		if (space)
			f->picked[f->mcur] ^= 1;
		else
			f->mcur = (f->mcur + (left ? -1 : 1) + f->nchoice) %
			          f->nchoice;
	} else {
		return 0;
	}
	return 1;
}

static int elicit_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	(void)o;
	struct ui_elicit *e = u->elicit;
	if (!elicit_head(u))
		return 0;
	if (!fn && key == UI_KEY_CTRL_C)
		return 0; /* the workbench's: the call stops, and this */
	struct efield *f = e->n ? &e->f[e->at] : NULL;
	int page = e->body_shown > 1 ? e->body_shown - 1 : 1;
	if (u->keys.in_paste) { /* pasted text goes into a text field only */
		if (f && f->kind <= F_INTEGER && !fn && key >= ' ')
			ui_edit_key(&f->in, key, fn);
	} else if (fn && (key == KEY_PPAGE || key == KEY_NPAGE)) {
		e->scroll += key == KEY_NPAGE ? page : -page;
		e->paged = 1;
	} else if (!fn && key == UI_KEY_ENTER) {
		elicit_answer(u, "accept");
	} else if (!fn && key == UI_KEY_ESC) {
		elicit_answer(u, "decline");
	} else if ((!fn && key == UI_KEY_TAB) || (fn && key == KEY_DOWN)) {
		e->at = e->n ? (e->at + 1) % e->n : 0;
		e->paged = 0;
	} else if ((fn && key == KEY_BTAB) || (fn && key == KEY_UP)) {
		e->at = e->n ? (e->at + e->n - 1) % e->n : 0;
		e->paged = 0;
	} else if (f && field_pick(f, key, fn)) {
		/* picked */
	} else if (f && f->kind <= F_INTEGER && !fn && key == UI_KEY_CTRL_U) {
		ui_input_set(&f->in, "", 0);
	} else if (f && f->kind <= F_INTEGER) {
		ui_edit_key(&f->in, key, fn); /* one line: no new lines */
	}
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_STATUS);
	return 1;
}

/* ---- life ---------------------------------------------------------------- */

void ui_elicit_attach(struct ui *u)
{
	u->elicit = xcalloc(1, sizeof *u->elicit);
	u->elicit->ov = (struct ui_overlay){
	    .name = "elicit",
	    .layer = UI_LAYER_DIALOG,
	    .flags = UI_OV_COVERS_IMAGES,
	    .draw = elicit_draw,
	    .key = elicit_key,
	    .cursor = elicit_cursor,
	};
}

void ui_elicit_free(struct ui *u)
{
	struct ui_elicit *e = u->elicit;
	if (!e)
		return;
	ui_overlay_pop(u, &e->ov);
	form_free(e);
	free(e->id);
	free(e);
	u->elicit = NULL;
}
