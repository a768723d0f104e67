/* test_tui_image_item.c: an image the agent makes or changes shows in
 * the conversation as its own item, built from workspace_change events
 * only (so a replay shows it too), and becomes the newest image that
 * the preview key opens (src/tui/model.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tui/text.c"
#include "tui/sanitize.c"
#include "tui/tree.c"
#include "tui/model.c"

static void ev(struct ui_model *m, const char *json)
{
	cJSON *e = cJSON_Parse(json);
	if (!e)
		fail_msg("bad test event: %s", json);
	ui_model_event(m, e);
	cJSON_Delete(e);
}

static void change(struct ui_model *m, const char *path, const char *kind,
                   int size)
{
	char *json = xasprintf("{\"type\":\"workspace_change\",\"path\":\"%s\","
	                       "\"kind\":\"%s\",\"size\":%d}",
	                       path, kind, size);
	ev(m, json);
	free(json);
}

static int count_images(const struct ui_model *m)
{
	int n = 0;
	for (int i = 0; i < m->nitems; i++)
		n += m->items[i].kind == UI_ITEM_IMAGE;
	return n;
}

static void test_image_items(void **state)
{
	(void)state;
	struct ui_model m;
	ui_model_init(&m);
	change(&m, "input/a.csv", "created", 10);
	assert_int_equal(count_images(&m), 0);
	assert_null(m.last_image);

	change(&m, "output/chart.png", "created", 2000);
	assert_int_equal(count_images(&m), 1);
	assert_int_equal(m.items[m.nitems - 1].kind, UI_ITEM_IMAGE);
	assert_string_equal(buf_str(&m.items[m.nitems - 1].text),
	                    "created output/chart.png");
	assert_string_equal(m.last_image, "output/chart.png");
	assert_true(m.dirty & UI_DIRTY_CONV);

	/* the same change reported twice (event and listing): one line */
	change(&m, "output/chart.png", "created", 2000);
	assert_int_equal(count_images(&m), 1);

	/* a change later is a new line, named as an update; any case of
	 * the extension */
	ev(&m, "{\"type\":\"user_message\",\"text\":\"again\"}");
	change(&m, "output/chart.png", "modified", 2500);
	assert_int_equal(count_images(&m), 2);
	assert_string_equal(buf_str(&m.items[m.nitems - 1].text),
	                    "updated output/chart.png");
	change(&m, "fig/B.PNG", "created", 30);
	assert_int_equal(count_images(&m), 3);
	assert_string_equal(m.last_image, "fig/B.PNG");

	/* a deletion is no image to show; a name that only ends in png
	 * is not one either */
	change(&m, "fig/B.PNG", "deleted", 0);
	change(&m, "notes.mypng", "created", 5);
	change(&m, ".png", "created", 5);
	assert_int_equal(count_images(&m), 3);
	ui_model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_image_items),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
