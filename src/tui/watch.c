/* watch.c: a live Workspace tree for a sandbox whose workspace is a
 * host directory (the local backend): inotify on the workspace and its
 * directories says that something changed; a rescan (through the
 * sandbox's own confined listing) follows, at most a few times a second
 * and less often when scans are slow. The events only ever trigger a
 * rescan, so a watch that ends up on the wrong directory (the agent may
 * swap a directory for a symlink) costs a rescan, never a wrong tree.
 * The JSON it reads (a sandbox listing) is not an event. */
#include "tui/ui.h"

#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#define MAX_WATCHES 1024
#define MIN_INTERVAL_MS 250
#define SETTLE_MS 60

struct ui_watch {
	struct loop *loop;
	int fd;
	char *root;
	int *wd;
	size_t nwd;
	uint64_t timer;
	int64_t last_scan, interval;
	void (*rescan)(void *arg);
	void *arg;
};

static const uint32_t MASK =
    IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM |
    IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW;

/* Watch one more directory (within MAX_WATCHES). */
static void add_watch(struct ui_watch *w, const char *path)
{
	if (w->nwd >= MAX_WATCHES)
		return;
	int wd = inotify_add_watch(w->fd, path, MASK);
	if (wd < 0)
		return;
	for (size_t i = 0; i < w->nwd; i++)
		if (w->wd[i] == wd)
			return; /* already watched */
	w->wd[w->nwd++] = wd;
}

/* The settle timer: rescan now. */
static void fire(void *arg)
{
	struct ui_watch *w = arg;
	w->timer = 0;
	w->rescan(w->arg);
}

/* Something changed: one rescan after it settles, not more often than the
 * interval. */
static void on_inotify(int fd, int revents, void *arg)
{
	struct ui_watch *w = arg;
	char buf[16384];
	ssize_t n;
	(void)revents;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		; /* what changed does not matter: the rescan tells */
	if (w->timer)
		return;
	int64_t due = w->last_scan + w->interval - now_ms();
	if (due < SETTLE_MS)
		due = SETTLE_MS;
	w->timer = loop_timer_add(w->loop, due, fire, w);
}

struct ui_watch *ui_watch_new(struct loop *l, const char *root,
                              void (*rescan)(void *arg), void *arg)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0) {
		log_warn("tui: inotify: %s; the tree refreshes after each "
		         "command",
		         strerror(errno));
		return NULL;
	}
	struct ui_watch *w = xcalloc(1, sizeof *w);
	w->loop = l;
	w->fd = fd;
	w->root = xstrdup(root);
	w->wd = xcalloc(MAX_WATCHES, sizeof *w->wd);
	w->rescan = rescan;
	w->arg = arg;
	w->interval = MIN_INTERVAL_MS;
	add_watch(w, root);
	loop_fd_add(l, fd, POLLIN, on_inotify, w);
	return w;
}

void ui_watch_dirs(struct ui_watch *w, const cJSON *list)
{
	const cJSON *e;
	if (!w)
		return;
	cJSON_ArrayForEach(e, list)
	{
		if (w->nwd >= MAX_WATCHES)
			break;
		if (strcmp(json_str(e, "type", ""), "dir"))
			continue;
		char *p = xasprintf("%s/%s", w->root, json_str(e, "path", ""));
		add_watch(w, p);
		free(p);
	}
}

void ui_watch_scanned(struct ui_watch *w, int64_t ms)
{
	if (!w)
		return;
	w->last_scan = now_ms();
	/* a slow scan is not repeated often: at most 5% of the time */
	w->interval = ms * 20 > MIN_INTERVAL_MS ? ms * 20 : MIN_INTERVAL_MS;
}

void ui_watch_free(struct ui_watch *w)
{
	if (!w)
		return;
	if (w->timer)
		loop_timer_cancel(w->loop, w->timer);
	loop_fd_del(w->loop, w->fd);
	close(w->fd);
	free(w->wd);
	free(w->root);
	free(w);
}
