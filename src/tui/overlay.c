/* overlay.c: the one stack of what is drawn over the panes (tmux's
 * server_client_set_overlay, made a stack). Each overlay says in its
 * struct how it draws, takes keys and clicks, places the cursor and
 * whether it hides images; the five questions a frame and an input
 * ask (who gets this key, this click, who draws on top, who owns the
 * cursor, must images go) are answered here alone, topmost first. */
#include "tui/ui.h"

#include "assay/log.h"

/* Where o goes: above everything of its layer or a lower one. */
static struct ui_overlay **overlay_slot(struct ui *u, enum ui_layer layer)
{
	struct ui_overlay **at = &u->ov.top;
	while (*at && (*at)->layer > layer)
		at = &(*at)->below;
	return at;
}

void ui_overlay_push(struct ui *u, struct ui_overlay *o)
{
	if (o->on_stack)
		return;
	struct ui_overlay **at = overlay_slot(u, o->layer);
	o->below = *at;
	*at = o;
	o->on_stack = 1;
	log_info("tui: overlay %s up", o->name);
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_STATUS);
}

void ui_overlay_pop(struct ui *u, struct ui_overlay *o)
{
	if (!o || !o->on_stack)
		return;
	struct ui_overlay **at = &u->ov.top;
	while (*at && *at != o)
		at = &(*at)->below;
	if (*at)
		*at = o->below;
	o->below = NULL;
	o->on_stack = 0;
	log_info("tui: overlay %s down", o->name);
	/* the panes under it are drawn again (images come back) */
	ui_touch(u, UI_DIRTY_OVERLAY | UI_DIRTY_STATUS | UI_DIRTY_PAGER);
	if (o->free)
		o->free(u, o);
}

void ui_overlay_clear(struct ui *u)
{
	while (u->ov.top)
		ui_overlay_pop(u, u->ov.top);
}

const struct ui_overlay *ui_overlay_top(const struct ui *u)
{
	return u->ov.top;
}

unsigned ui_overlay_flags(const struct ui *u)
{
	unsigned f = 0;
	for (const struct ui_overlay *o = u->ov.top; o; o = o->below)
		f |= o->flags;
	return f;
}

int ui_overlay_key(struct ui *u, int key, int fn,
                   int (*workbench)(struct ui *u, int key, int fn))
{
	int asked = 0;
	for (struct ui_overlay *o = u->ov.top; o; o = o->below) {
		if (!(o->flags & UI_OV_MODAL) && !asked) {
			asked = 1;
			if (workbench && workbench(u, key, fn))
				return 1;
		}
		/* a callback that changes the stack returns 1: o->below
		 * is read only when it did not */
		if (o->key && o->key(u, o, key, fn))
			return 1;
	}
	return !asked && workbench && workbench(u, key, fn);
}

int ui_overlay_mouse(struct ui *u, const MEVENT *me)
{
	for (struct ui_overlay *o = u->ov.top; o; o = o->below)
		if (o->mouse && o->mouse(u, o, me))
			return 1;
	return 0;
}

int ui_overlay_mouse_eat(struct ui *u, struct ui_overlay *o, const MEVENT *me)
{
	(void)u;
	(void)o;
	(void)me;
	return 1;
}

int ui_overlay_cursor(struct ui *u, int *y, int *x)
{
	struct ui_overlay *o = u->ov.top;
	if (!o)
		return -1;
	return o->cursor ? o->cursor(u, o, y, x) : 0;
}

/* Bottom first, so that the top one is drawn last, over the others. */
static void overlay_draw_from(struct ui *u, struct ui_overlay *o)
{
	if (!o)
		return;
	overlay_draw_from(u, o->below);
	if (o->draw)
		o->draw(u, o);
}

void ui_overlay_draw(struct ui *u)
{
	overlay_draw_from(u, u->ov.top);
}

int ui_cursor_get(const struct ui_cursor *c, int *y, int *x)
{
	if (!c->on)
		return 0;
	*y = c->y;
	*x = c->x;
	return 1;
}
