/* image_loop.c: how long previews take through the TUI's image client
 * (src/tui/image.c) and whether the poll loop stays responsive while
 * the helper renders: a 5 ms timer keeps re-arming itself during each
 * render and we report the worst delay it saw. Built and run by
 * tests/bench/image_bench.sh.
 *   image_loop DIR FILE RUNS   (FILE relative to DIR) */
#include "assay/loop.h"
#include "assay/util.h"
#include "tui/image.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tick {
	struct loop *l;
	int64_t due, worst;
	uint64_t id;
	int stop;
};

static void on_tick(void *arg)
{
	struct tick *t = arg;
	int64_t late = now_ms() - t->due;
	if (late > t->worst)
		t->worst = late;
	if (t->stop) {
		t->id = 0;
		return;
	}
	t->due = now_ms() + 5;
	t->id = loop_timer_add(t->l, 5, on_tick, t);
}

struct done {
	int called;
	size_t len;
	char *err;
};

static void on_done(void *arg, const struct ui_img *img, const char *err)
{
	struct done *d = arg;
	d->called = 1;
	d->len = img ? img->len : 0;
	if (err)
		d->err = xstrdup(err);
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: image_loop DIR FILE RUNS\n");
		return 2;
	}
	int dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int runs = atoi(argv[3]);
	if (dir < 0 || runs < 1) {
		perror(argv[1]);
		return 2;
	}
	struct loop *l = loop_new();
	const enum ui_gfx modes[] = {UI_GFX_SIXEL, UI_GFX_KITTY, UI_GFX_BLOCKS};
	const char *names[] = {"sixel", "kitty", "blocks"};
	printf("%-8s %11s %13s %8s\n", "mode", "median ms", "loop worst ms",
	       "bytes");
	for (int m = 0; m < 3; m++) {
		int64_t *ms = xcalloc((size_t)runs, sizeof *ms);
		int64_t worst = 0;
		size_t len = 0;
		for (int i = 0; i < runs; i++) {
			/* a fresh cache each time: every run renders */
			struct ui_imgcache *c = ui_imgcache_new(l, 0);
			struct ui_img_req r = {.dirfd = dir,
			                       .rel = argv[2],
			                       .fd = -1,
			                       .mode = modes[m],
			                       .box_cols = 80,
			                       .box_rows = 40,
			                       .cell_w = 10,
			                       .cell_h = 20,
			                       .truecolor = 1,
			                       .bg_rgb = -1};
			struct done d = {0};
			struct tick t = {.l = l, .due = now_ms() + 5};
			t.id = loop_timer_add(l, 5, on_tick, &t);
			int64_t t0 = now_ms();
			ui_img_render(c, &r, on_done, &d);
			while (!d.called)
				loop_once(l, 100);
			ms[i] = now_ms() - t0;
			t.stop = 1;
			while (t.id)
				loop_once(l, 10);
			if (d.err) {
				fprintf(stderr, "%s: %s\n", names[m], d.err);
				return 1;
			}
			if (t.worst > worst)
				worst = t.worst;
			len = d.len;
			ui_imgcache_free(c);
		}
		qsort(ms, (size_t)runs, sizeof *ms, cmp);
		printf("%-8s %11lld %13lld %8zu\n", names[m],
		       (long long)ms[runs / 2], (long long)worst, len);
		free(ms);
	}
	loop_free(l);
	close(dir);
	return 0;
}
