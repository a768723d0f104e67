/* test_tui_overlay.c: the TUI's overlay stack (src/tui/overlay.c), the
 * one place that decides who gets a key or a click, what is drawn on
 * top, who owns the cursor and whether images must go: layers keep
 * their order whatever the order of pushes, keys go topmost first with
 * the workbench's own keys under the modal overlays, pops work from
 * anywhere and run the free callback, and a click passes through an
 * overlay without a mouse callback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tui/overlay.c"

#include <string.h>

static unsigned touched;

/* overlay.c asks for frames; the test only records it */
void ui_touch(struct ui *u, unsigned bits)
{
	(void)u;
	touched |= bits;
}

/* What the fake overlays did, in order: one letter per call. */
static char trail[64];

static void note(const char *what)
{
	strncat(trail, what, sizeof trail - strlen(trail) - 1);
}

/* A fake overlay: its name's first letter goes into the trail. */
struct fake {
	struct ui_overlay ov;
	int eats;  /* its key callback uses every key */
	int freed; /* free callback calls */
	struct ui_cursor cur;
};

static void fake_draw(struct ui *u, struct ui_overlay *o)
{
	(void)u;
	char s[2] = {o->name[0], 0};
	note(s);
}

static int fake_key(struct ui *u, struct ui_overlay *o, int key, int fn)
{
	(void)u;
	(void)key;
	(void)fn;
	char s[2] = {o->name[0], 0};
	note(s);
	return ((struct fake *)o)->eats;
}

static int fake_cursor(struct ui *u, struct ui_overlay *o, int *y, int *x)
{
	(void)u;
	return ui_cursor_get(&((struct fake *)o)->cur, y, x);
}

static int fake_mouse(struct ui *u, struct ui_overlay *o, const MEVENT *me)
{
	(void)u;
	(void)me;
	char s[2] = {o->name[0], 0};
	note(s);
	return 1;
}

static void fake_free(struct ui *u, struct ui_overlay *o)
{
	(void)u;
	((struct fake *)o)->freed++;
}

static struct fake fake(const char *name, enum ui_layer layer, unsigned flags,
                        int eats)
{
	struct fake f = {.eats = eats};
	f.ov = (struct ui_overlay){.name = name,
	                           .layer = layer,
	                           .flags = flags,
	                           .draw = fake_draw,
	                           .key = fake_key,
	                           .cursor = fake_cursor,
	                           .free = fake_free};
	return f;
}

/* The workbench's own keys: Ctrl-Q is one. */
static int workbench(struct ui *u, int key, int fn)
{
	(void)u;
	note("W");
	return !fn && key == UI_KEY_CTRL_Q;
}

static void reset(struct ui *u)
{
	memset(u, 0, sizeof *u);
	trail[0] = '\0';
	touched = 0;
}

/* The names on the stack, top first. */
static const char *stack(struct ui *u)
{
	static char s[16];
	size_t n = 0;
	for (const struct ui_overlay *o = ui_overlay_top(u); o; o = o->below)
		s[n++] = o->name[0];
	s[n] = '\0';
	return s;
}

static void test_layers_keep_their_order(void **state)
{
	(void)state;
	struct ui u;
	reset(&u);
	struct fake help = fake("help", UI_LAYER_HELP, UI_OV_MODAL, 1);
	struct fake appr = fake("approval", UI_LAYER_DIALOG, 0, 1);
	struct fake pager = fake("pager", UI_LAYER_VIEW, UI_OV_OPAQUE, 1);
	struct fake quit = fake("quit", UI_LAYER_CONFIRM, UI_OV_MODAL, 1);
	ui_overlay_push(&u, &help.ov);
	ui_overlay_push(&u, &pager.ov); /* pushed later, but lower */
	assert_string_equal(stack(&u), "hp");
	ui_overlay_push(&u, &appr.ov); /* between them */
	assert_string_equal(stack(&u), "hap");
	ui_overlay_push(&u, &quit.ov);
	assert_string_equal(stack(&u), "qhap");
	ui_overlay_push(&u, &appr.ov); /* again: nothing moves */
	assert_string_equal(stack(&u), "qhap");
	assert_true(touched & UI_DIRTY_OVERLAY);
	/* drawn bottom first: the top one is drawn last, over them */
	ui_overlay_draw(&u);
	assert_string_equal(trail, "pahq");
	ui_overlay_clear(&u);
	assert_null(ui_overlay_top(&u));
	assert_int_equal(help.freed + appr.freed + pager.freed + quit.freed, 4);
}

static void test_same_layer_newest_on_top(void **state)
{
	(void)state;
	struct ui u;
	reset(&u);
	struct fake image = fake("image", UI_LAYER_VIEW, 0, 1);
	struct fake pager = fake("pager", UI_LAYER_VIEW, 0, 1);
	ui_overlay_push(&u, &image.ov);
	ui_overlay_push(&u, &pager.ov);
	assert_string_equal(stack(&u), "pi");
	ui_overlay_clear(&u);
}

static void test_keys_topmost_first(void **state)
{
	(void)state;
	struct ui u;
	reset(&u);
	struct fake help = fake("help", UI_LAYER_HELP, UI_OV_MODAL, 1);
	struct fake appr = fake("approval", UI_LAYER_DIALOG, 0, 0);
	struct fake pager = fake("pager", UI_LAYER_VIEW, 0, 1);
	/* nothing up: the workbench alone */
	assert_int_equal(ui_overlay_key(&u, 'x', 0, workbench), 0);
	assert_string_equal(trail, "W");
	/* a modal overlay gets even Ctrl-Q before the workbench */
	ui_overlay_push(&u, &help.ov);
	ui_overlay_push(&u, &appr.ov);
	ui_overlay_push(&u, &pager.ov);
	trail[0] = '\0';
	assert_int_equal(ui_overlay_key(&u, UI_KEY_CTRL_Q, 0, workbench), 1);
	assert_string_equal(trail, "h");
	ui_overlay_pop(&u, &help.ov);
	assert_int_equal(help.freed, 1);
	/* under the modal ones: the workbench's Ctrl-Q goes first */
	trail[0] = '\0';
	assert_int_equal(ui_overlay_key(&u, UI_KEY_CTRL_Q, 0, workbench), 1);
	assert_string_equal(trail, "W");
	/* another key: the approval passes it on, the pager uses it */
	trail[0] = '\0';
	assert_int_equal(ui_overlay_key(&u, 'j', 0, workbench), 1);
	assert_string_equal(trail, "Wap");
	/* nobody uses it: the panes get it (0) */
	pager.eats = 0;
	trail[0] = '\0';
	assert_int_equal(ui_overlay_key(&u, 'j', 0, workbench), 0);
	assert_string_equal(trail, "Wap");
	ui_overlay_clear(&u);
}

static void test_modal_only(void **state)
{
	(void)state;
	struct ui u;
	reset(&u);
	struct fake quit = fake("quit", UI_LAYER_CONFIRM, UI_OV_MODAL, 0);
	ui_overlay_push(&u, &quit.ov);
	/* a modal overlay that passes: the workbench is asked after */
	assert_int_equal(ui_overlay_key(&u, UI_KEY_CTRL_Q, 0, workbench), 1);
	assert_string_equal(trail, "qW");
	ui_overlay_clear(&u);
}

static void test_pop_from_the_middle(void **state)
{
	(void)state;
	struct ui u;
	reset(&u);
	struct fake a = fake("approval", UI_LAYER_DIALOG, 0, 1);
	struct fake h = fake("help", UI_LAYER_HELP, 0, 1);
	struct fake p = fake("pager", UI_LAYER_VIEW, 0, 1);
	ui_overlay_push(&u, &a.ov);
	ui_overlay_push(&u, &h.ov);
	ui_overlay_push(&u, &p.ov);
	ui_overlay_pop(&u, &a.ov);
	assert_string_equal(stack(&u), "hp");
	assert_int_equal(a.freed, 1);
	assert_false(a.ov.on_stack);
	ui_overlay_pop(&u, &a.ov); /* not on it: nothing */
	ui_overlay_pop(&u, NULL);
	assert_int_equal(a.freed, 1);
	ui_overlay_push(&u, &a.ov); /* and back */
	assert_string_equal(stack(&u), "hap");
	ui_overlay_clear(&u);
}

static void test_flags_of_the_stack(void **state)
{
	(void)state;
	struct ui u;
	reset(&u);
	struct fake image = fake("image", UI_LAYER_VIEW, 0, 1);
	struct fake step =
	    fake("step", UI_LAYER_DIALOG, UI_OV_COVERS_IMAGES, 1);
	struct fake pager =
	    fake("pager", UI_LAYER_VIEW, UI_OV_OPAQUE | UI_OV_COVERS_IMAGES, 1);
	assert_int_equal(ui_overlay_flags(&u), 0);
	ui_overlay_push(&u, &image.ov);
	assert_int_equal(ui_overlay_flags(&u), 0); /* it is the image */
	ui_overlay_push(&u, &step.ov);
	assert_int_equal(ui_overlay_flags(&u), UI_OV_COVERS_IMAGES);
	ui_overlay_pop(&u, &step.ov);
	ui_overlay_pop(&u, &image.ov);
	ui_overlay_push(&u, &pager.ov);
	assert_int_equal(ui_overlay_flags(&u),
	                 UI_OV_OPAQUE | UI_OV_COVERS_IMAGES);
	ui_overlay_clear(&u);
	assert_int_equal(ui_overlay_flags(&u), 0);
}

static void test_cursor_is_the_tops(void **state)
{
	(void)state;
	struct ui u;
	reset(&u);
	int y = -1, x = -1;
	assert_int_equal(ui_overlay_cursor(&u, &y, &x), -1); /* the panes' */
	struct fake step = fake("step", UI_LAYER_DIALOG, 0, 1);
	struct fake help = fake("help", UI_LAYER_HELP, UI_OV_MODAL, 1);
	step.cur = (struct ui_cursor){1, 7, 9};
	ui_overlay_push(&u, &step.ov);
	assert_int_equal(ui_overlay_cursor(&u, &y, &x), 1);
	assert_int_equal(y, 7);
	assert_int_equal(x, 9);
	/* the help over it hides the cursor, though the step has one */
	help.ov.cursor = NULL;
	ui_overlay_push(&u, &help.ov);
	assert_int_equal(ui_overlay_cursor(&u, &y, &x), 0);
	ui_overlay_pop(&u, &help.ov);
	step.cur.on = 0;
	assert_int_equal(ui_overlay_cursor(&u, &y, &x), 0);
	ui_overlay_clear(&u);
}

static void test_mouse_passes_or_stops(void **state)
{
	(void)state;
	struct ui u;
	reset(&u);
	MEVENT me = {0};
	struct fake appr = fake("approval", UI_LAYER_DIALOG, 0, 1);
	struct fake pager = fake("pager", UI_LAYER_VIEW, 0, 1);
	ui_overlay_push(&u, &appr.ov);
	/* no mouse callback: the click goes to the panes */
	assert_int_equal(ui_overlay_mouse(&u, &me), 0);
	pager.ov.mouse = fake_mouse;
	ui_overlay_push(&u, &pager.ov);
	assert_int_equal(ui_overlay_mouse(&u, &me), 1);
	assert_string_equal(trail, "p");
	appr.ov.mouse = ui_overlay_mouse_eat;
	trail[0] = '\0';
	assert_int_equal(ui_overlay_mouse(&u, &me), 1);
	assert_string_equal(trail, ""); /* the approval kept it */
	ui_overlay_clear(&u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layers_keep_their_order),
	    cmocka_unit_test(test_same_layer_newest_on_top),
	    cmocka_unit_test(test_keys_topmost_first),
	    cmocka_unit_test(test_modal_only),
	    cmocka_unit_test(test_pop_from_the_middle),
	    cmocka_unit_test(test_flags_of_the_stack),
	    cmocka_unit_test(test_cursor_is_the_tops),
	    cmocka_unit_test(test_mouse_passes_or_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
