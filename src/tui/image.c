/* image.c: the TUI's client of the assay-image helper (see image.h).
 * Requests queue; one child renders at a time, its output is read
 * without blocking from the loop, checked, and cached by file identity
 * and rendering parameters. */
#include "tui/image.h"
#include "assay/buf.h"
#include "assay/imgrender.h"
#include "assay/loop.h"
#include "assay/path.h"
#include "assay/spawn.h"
#include "assay/termtext.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define IMG_TIMEOUT_MS 5000
#define IMG_MAX_WAITING 8
#define IMG_ERR_MAX 4096

struct img_key {
	dev_t dev;
	ino_t ino;
	int64_t mtime_ns;
	off_t size;
	int mode, cols, rows, cell_w, cell_h, colors, truecolor, bg, upscale;
	unsigned kitty_id;
};

struct entry {
	struct img_key k;
	struct ui_img *img;
	uint64_t used;
	struct entry *next;
};

struct job {
	uint64_t id;
	struct img_key k;
	int fd; /* the image file, for the child's stdin */
	char *name;
	ui_img_fn fn; /* NULL once cancelled */
	void *arg;
	struct ui_img *img; /* result to deliver */
	char *err;
	struct job *next;
};

struct ui_imgcache {
	struct loop *loop;
	size_t max, bytes;
	uint64_t next_id, tick;
	struct entry *entries;
	struct job *waiting, *done;
	uint64_t deliver_timer;
	/* the running child */
	struct job *run;
	pid_t pid;
	int out_fd, err_fd, timed_out, overflow;
	uint64_t kill_timer;
	struct buf out, err;
};

static void start_next(struct ui_imgcache *c);

char *ui_img_helper(void)
{
	return helper_path("ASSAY_IMAGE_BIN", "assay-image");
}

/* ---- images and the cache ---- */

struct ui_img *ui_img_ref(const struct ui_img *img)
{
	struct ui_img *m = (struct ui_img *)img;
	if (m)
		m->refs++;
	return m;
}

void ui_img_unref(struct ui_img *img)
{
	if (!img || --img->refs > 0)
		return;
	free(img->data);
	free(img);
}

/* Two requests ask for the same rendering. */
static int key_eq(const struct img_key *a, const struct img_key *b)
{
	return a->dev == b->dev && a->ino == b->ino &&
	       a->mtime_ns == b->mtime_ns && a->size == b->size &&
	       a->mode == b->mode && a->cols == b->cols && a->rows == b->rows &&
	       a->cell_w == b->cell_w && a->cell_h == b->cell_h &&
	       a->colors == b->colors && a->truecolor == b->truecolor &&
	       a->bg == b->bg && a->upscale == b->upscale &&
	       a->kitty_id == b->kitty_id;
}

/* A finished rendering for this request (marked as used now), or NULL. */
static struct entry *cache_find(struct ui_imgcache *c, const struct img_key *k)
{
	for (struct entry *e = c->entries; e; e = e->next)
		if (key_eq(&e->k, k)) {
			e->used = ++c->tick;
			return e;
		}
	return NULL;
}

/* Keep a rendering; the least recently used go past the cache's size. */
static void cache_put(struct ui_imgcache *c, const struct img_key *k,
                      struct ui_img *img)
{
	struct entry *e = xcalloc(1, sizeof *e);
	e->k = *k;
	e->img = ui_img_ref(img);
	e->used = ++c->tick;
	e->next = c->entries;
	c->entries = e;
	c->bytes += img->len;
	/* evict the least recently used, never the newest */
	while (c->bytes > c->max && c->entries->next) {
		struct entry **victim = NULL;
		for (struct entry **p = &c->entries; *p; p = &(*p)->next)
			if (*p != e &&
			    (!victim || (*p)->used < (*victim)->used))
				victim = p;
		struct entry *v = *victim;
		*victim = v->next;
		c->bytes -= v->img->len;
		ui_img_unref(v->img);
		free(v);
	}
}

void ui_imgcache_clear(struct ui_imgcache *c)
{
	while (c->entries) {
		struct entry *e = c->entries;
		c->entries = e->next;
		ui_img_unref(e->img);
		free(e);
	}
	c->bytes = 0;
}

struct ui_imgcache *ui_imgcache_new(struct loop *l, size_t max_bytes)
{
	struct ui_imgcache *c = xcalloc(1, sizeof *c);
	c->loop = l;
	c->max = max_bytes ? max_bytes : 32u << 20;
	c->pid = -1;
	c->out_fd = c->err_fd = -1;
	return c;
}

/* A job and what it holds. */
static void job_free(struct job *j)
{
	if (j->fd >= 0)
		close(j->fd);
	ui_img_unref(j->img);
	free(j->err);
	free(j->name);
	free(j);
}

/* Every job of a list. */
static void free_list(struct job *j)
{
	while (j) {
		struct job *n = j->next;
		job_free(j);
		j = n;
	}
}

/* The helper's pipes off the loop, closed. */
static void close_child_fds(struct ui_imgcache *c)
{
	int *fds[2] = {&c->out_fd, &c->err_fd};
	for (int i = 0; i < 2; i++)
		if (*fds[i] >= 0) {
			loop_fd_del(c->loop, *fds[i]);
			close(*fds[i]);
			*fds[i] = -1;
		}
}

void ui_imgcache_free(struct ui_imgcache *c)
{
	if (!c)
		return;
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		loop_child_unwatch(c->loop, c->pid);
		while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close_child_fds(c);
	if (c->kill_timer)
		loop_timer_cancel(c->loop, c->kill_timer);
	if (c->deliver_timer)
		loop_timer_cancel(c->loop, c->deliver_timer);
	if (c->run)
		job_free(c->run);
	free_list(c->waiting);
	free_list(c->done);
	ui_imgcache_clear(c);
	buf_free(&c->out);
	buf_free(&c->err);
	free(c);
}

/* ---- delivery (always from the loop, never re-entrantly) ---- */

/* Finished jobs go to their callbacks from the loop, never inside a
 * request. */
static void on_deliver(void *arg)
{
	struct ui_imgcache *c = arg;
	c->deliver_timer = 0;
	/* oldest first; callbacks may add or cancel requests */
	while (c->done) {
		struct job **p = &c->done;
		while ((*p)->next)
			p = &(*p)->next;
		struct job *j = *p;
		*p = NULL;
		if (j->fn)
			j->fn(j->arg, j->img, j->img ? NULL : j->err);
		job_free(j);
	}
}

/* A job is done: its callback is queued (or it is dropped when cancelled). */
static void image_finish(struct ui_imgcache *c, struct job *j)
{
	if (j->fd >= 0) {
		close(j->fd);
		j->fd = -1;
	}
	if (!j->fn) {
		job_free(j);
		return;
	}
	j->next = c->done;
	c->done = j;
	if (!c->deliver_timer)
		c->deliver_timer = loop_timer_add(c->loop, 0, on_deliver, c);
}

static void fail_job(struct ui_imgcache *c, struct job *j, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A job failed: its callback gets the message. */
static void fail_job(struct ui_imgcache *c, struct job *j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	j->err = xasprintf("image: %s: %s", j->name, msg);
	free(msg);
	image_finish(c, j);
}

/* ---- requests ---- */

/* The helper's name for a mode; NULL for one it cannot render. */
static const char *image_mode_name(int mode)
{
	switch (mode) {
	case UI_GFX_BLOCKS:
		return "blocks";
	case UI_GFX_SIXEL:
		return "sixel";
	case UI_GFX_KITTY:
		return "kitty";
	}
	return NULL;
}

/* Open the request's file (confined) and make its key. */
static int open_req(const struct ui_img_req *r, struct img_key *k, char **err)
{
	int fd;
	if (r->fd >= 0) {
		fd = fcntl(r->fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return set_err(err, "%s", strerror(errno));
	} else {
		if (r->dirfd < 0 || !r->rel)
			return set_err(err, "no file given");
		fd = path_open_mapped(r->dirfd, r->mounts, r->rel,
		                      O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, err);
		if (fd < 0)
			return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return set_err(err, "%s: not a regular file",
		               r->rel ? r->rel : "(image)");
	}
	memset(k, 0, sizeof *k);
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	k->mtime_ns =
	    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	k->size = st.st_size;
	k->mode = (int)r->mode;
	k->cols = r->box_cols;
	k->rows = r->box_rows;
	/* the helper's ranges: cells up to 512 px, 2..256 registers
	 * (terminals may report more; sixel needs no more than 256) */
	k->cell_w = r->cell_w > 0 ? (r->cell_w < 512 ? r->cell_w : 512) : 10;
	k->cell_h = r->cell_h > 0 ? (r->cell_h < 512 ? r->cell_h : 512) : 20;
	k->colors = r->colors <= 0 || r->colors > 256 ? 256
	            : r->colors < 2                   ? 2
	                                              : r->colors;
	k->truecolor = r->mode == UI_GFX_BLOCKS && r->truecolor;
	k->bg = r->bg_rgb < 0 ? 0 : r->bg_rgb & 0xffffff;
	k->upscale = !!r->upscale;
	unsigned id = r->kitty_id & 0x7fffffffu;
	k->kitty_id = r->mode == UI_GFX_KITTY ? (id ? id : 1) : 0;
	return fd;
}

uint64_t ui_img_render(struct ui_imgcache *c, const struct ui_img_req *r,
                       ui_img_fn fn, void *arg)
{
	struct job *j = xcalloc(1, sizeof *j);
	j->id = ++c->next_id;
	j->fn = fn;
	j->arg = arg;
	j->fd = -1;
	const char *name = r->rel ? r->rel : "(image)";
	j->name = term_clean(name, strlen(name),
	                     TERM_CLEAN_NEWLINES | TERM_CLEAN_KEEP_TABS);
	char *err = NULL;
	if (!image_mode_name((int)r->mode)) {
		fail_job(c, j, "no graphics mode (images are off)");
		return j->id;
	}
	if (r->box_cols < 1 || r->box_rows < 1 || r->box_cols > 4000 ||
	    r->box_rows > 4000) {
		fail_job(c, j, "no room to show it (box %dx%d cells)",
		         r->box_cols, r->box_rows);
		return j->id;
	}
	j->fd = open_req(r, &j->k, &err);
	if (j->fd < 0) { /* err names the file already */
		char *m = xasprintf("image: %s", err);
		j->err = term_clean(m, strlen(m),
		                    TERM_CLEAN_NEWLINES | TERM_CLEAN_KEEP_TABS);
		free(m);
		free(err);
		image_finish(c, j);
		return j->id;
	}
	struct entry *e = cache_find(c, &j->k);
	if (e) {
		j->img = ui_img_ref(e->img);
		image_finish(c, j);
		return j->id;
	}
	/* append; drop the oldest waiting beyond the maximum */
	int n = 0;
	struct job **p = &c->waiting;
	for (; *p; p = &(*p)->next)
		n++;
	*p = j;
	if (n >= IMG_MAX_WAITING) {
		struct job *old = c->waiting;
		c->waiting = old->next;
		old->next = NULL;
		fail_job(c, old, "superseded by newer previews");
	}
	start_next(c);
	return j->id;
}

/* Take job id out of a list and free it; 1 if it was there. */
static int unlink_job(struct job **list, uint64_t id)
{
	for (struct job **p = list; *p; p = &(*p)->next)
		if ((*p)->id == id) {
			struct job *j = *p;
			*p = j->next;
			job_free(j);
			return 1;
		}
	return 0;
}

void ui_img_cancel(struct ui_imgcache *c, uint64_t id)
{
	if (unlink_job(&c->waiting, id) || unlink_job(&c->done, id))
		return;
	if (c->run && c->run->id == id) {
		c->run->fn = NULL;
		if (c->pid > 0)
			kill(c->pid, SIGKILL); /* on_exit reaps and frees */
	}
}

const struct ui_img *ui_img_lookup(struct ui_imgcache *c,
                                   const struct ui_img_req *r)
{
	struct img_key k;
	if (!image_mode_name((int)r->mode))
		return NULL;
	int fd = open_req(r, &k, NULL);
	if (fd < 0)
		return NULL;
	close(fd);
	struct entry *e = cache_find(c, &k);
	return e ? e->img : NULL;
}

/* ---- the child ---- */

/* Read what a helper pipe has now; at EOF it is closed. */
static void drain(struct ui_imgcache *c, int *fdp, struct buf *b)
{
	char tmp[65536];
	for (;;) {
		ssize_t r = read(*fdp, tmp, sizeof tmp);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return;
		if (r <= 0) {
			loop_fd_del(c->loop, *fdp);
			close(*fdp);
			*fdp = -1;
			return;
		}
		if (buf_append(b, tmp, (size_t)r) < 0 && b == &c->out) {
			/* more than any real rendering: stop it */
			c->overflow = 1;
			if (c->pid > 0)
				kill(c->pid, SIGKILL);
		}
	}
}

/* The helper wrote to stdout or stderr. */
static void on_readable(int fd, int revents, void *arg)
{
	struct ui_imgcache *c = arg;
	if (fd == c->out_fd)
		drain(c, &c->out_fd, &c->out);
	else if (fd == c->err_fd)
		drain(c, &c->err_fd, &c->err);
}

/* The helper took too long: killed (its exit finishes the job). */
static void on_timeout(void *arg)
{
	struct ui_imgcache *c = arg;
	c->kill_timer = 0;
	c->timed_out = 1;
	if (c->pid > 0)
		kill(c->pid, SIGKILL);
}

/* The helper's first stderr line, without its "image: " prefix. */
static char *child_error(struct ui_imgcache *c, int status)
{
	if (c->timed_out)
		return xasprintf("rendering took longer than %d s: stopped",
		                 IMG_TIMEOUT_MS / 1000);
	if (c->overflow)
		return xasprintf("the renderer's output passed %u MiB: stopped",
		                 IMG_MAX_PAYLOAD >> 20);
	const char *m = buf_str(&c->err);
	if (!strncmp(m, "image: ", 7))
		m += 7;
	size_t n = strcspn(m, "\n");
	if (n)
		return term_clean(m, n,
		                  TERM_CLEAN_NEWLINES | TERM_CLEAN_KEEP_TABS);
	if (WIFSIGNALED(status))
		return xasprintf("the renderer was killed by signal %d (over "
		                 "its CPU or memory limit?)",
		                 WTERMSIG(status));
	return xasprintf("the renderer failed (exit code %d)",
	                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static const enum img_mode to_img_mode[] = {
    [UI_GFX_BLOCKS] = IMG_BLOCKS,
    [UI_GFX_SIXEL] = IMG_SIXEL,
    [UI_GFX_KITTY] = IMG_KITTY,
};

/* Parse "ok MODE C R PW PH SW SH N\n" + N bytes into an image. */
static struct ui_img *parse_output(const struct buf *out,
                                   const struct img_key *k, char **err)
{
	int mode = k->mode;
	const char *p = buf_str(out);
	const char *nl = memchr(p, '\n', out->len < 200 ? out->len : 200);
	char name[16];
	int cols, rows, pw, ph, sw, sh;
	size_t n;
	if (!nl ||
	    sscanf(p, "ok %15s %d %d %d %d %d %d %zu", name, &cols, &rows, &pw,
	           &ph, &sw, &sh, &n) != 8 ||
	    strcmp(name, image_mode_name(mode))) {
		set_err(err, "the renderer's reply is malformed");
		return NULL;
	}
	const char *data = nl + 1;
	size_t have = out->len - (size_t)(data - p);
	/* the footprint must fit the box asked for, the payload its
	 * declared footprint */
	struct img_geom g = {cols, rows, pw, ph, k->kitty_id};
	if (have != n || cols < 1 || rows < 1 || cols > k->cols ||
	    rows > k->rows || pw < 1 || ph < 1 ||
	    !img_payload_ok(to_img_mode[mode], data, n, &g)) {
		set_err(err, "the renderer's output failed its checks");
		return NULL;
	}
	struct ui_img *img = xcalloc(1, sizeof *img);
	img->mode = (enum ui_gfx)mode;
	img->cols = cols;
	img->rows = rows;
	img->px_w = pw;
	img->px_h = ph;
	img->src_w = sw;
	img->src_h = sh;
	img->data = xmalloc(n + 1);
	memcpy(img->data, data, n);
	img->data[n] = '\0';
	img->len = n;
	img->refs = 1;
	return img;
}

/* The helper exited: its rendering is parsed and cached, or the job fails. */
static void on_exit_child(pid_t pid, int status, void *arg)
{
	struct ui_imgcache *c = arg;
	struct job *j = c->run;
	if (c->out_fd >= 0)
		drain(c, &c->out_fd, &c->out);
	if (c->err_fd >= 0)
		drain(c, &c->err_fd, &c->err);
	close_child_fds(c);
	if (c->kill_timer)
		loop_timer_cancel(c->loop, c->kill_timer);
	c->kill_timer = 0;
	c->pid = -1;
	c->run = NULL;
	char *err = NULL;
	if (!j->fn) {
		job_free(j);
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	           !c->timed_out && !c->overflow) {
		struct ui_img *img = parse_output(&c->out, &j->k, &err);
		if (img) {
			cache_put(c, &j->k, img);
			j->img = img;
			image_finish(c, j);
		} else {
			fail_job(c, j, "%s", err);
		}
	} else {
		err = child_error(c, status);
		fail_job(c, j, "%s", err);
	}
	free(err);
	buf_free(&c->out);
	buf_free(&c->err);
	start_next(c);
}

/* Start the helper for job j (rlimits, a timeout, no secrets); -1 + *err. */
static int spawn_child(struct ui_imgcache *c, struct job *j, char **err)
{
	char *bin = ui_img_helper();
	int rc = -1;
	if (!bin || access(bin, X_OK) < 0) {
		set_err(err,
		        "helper %s not found: reinstall assay (assay-image "
		        "belongs beside the assay binary) or set "
		        "ASSAY_IMAGE_BIN",
		        bin ? bin : "assay-image");
		goto out;
	}
	const struct img_key *k = &j->k;
	char a_cells[32], a_cell[32], a_colors[32], a_tc[16], a_id[32],
	    a_bg[16], a_up[16];
	snprintf(a_cells, sizeof a_cells, "cells=%dx%d", k->cols, k->rows);
	snprintf(a_cell, sizeof a_cell, "cell=%dx%d", k->cell_w, k->cell_h);
	snprintf(a_colors, sizeof a_colors, "colors=%d", k->colors);
	snprintf(a_tc, sizeof a_tc, "truecolor=%d", k->truecolor);
	snprintf(a_id, sizeof a_id, "id=%u", k->kitty_id ? k->kitty_id : 1);
	snprintf(a_bg, sizeof a_bg, "bg=%06x", (unsigned)k->bg);
	snprintf(a_up, sizeof a_up, "upscale=%d", k->upscale);
	char *argv[] = {bin,      (char *)image_mode_name(k->mode),
	                a_cells,  a_cell,
	                a_colors, a_tc,
	                a_id,     a_bg,
	                a_up,     NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	struct spawn_opts o = {
	    .argv = argv,
	    .envp = envp,
	    .io = {{SPAWN_FD, j->fd}, {SPAWN_PIPE, -1}, {SPAWN_PIPE, -1}}};
	struct spawn_proc p;
	if (spawn_start(&o, &p, err) < 0)
		goto out;
	c->pid = p.pid;
	c->out_fd = p.fd[STDOUT_FILENO];
	c->err_fd = p.fd[STDERR_FILENO];
	fcntl(c->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(c->err_fd, F_SETFL, O_NONBLOCK);
	buf_init(&c->out, IMG_MAX_PAYLOAD + 256);
	buf_init(&c->err, IMG_ERR_MAX);
	c->timed_out = c->overflow = 0;
	loop_fd_add(c->loop, c->out_fd, POLLIN, on_readable, c);
	loop_fd_add(c->loop, c->err_fd, POLLIN, on_readable, c);
	c->kill_timer = loop_timer_add(c->loop, IMG_TIMEOUT_MS, on_timeout, c);
	loop_child_watch(c->loop, p.pid, on_exit_child, c);
	rc = 0;
out:
	free(bin);
	return rc;
}

/* Start the next waiting job if none runs (one the cache has now is done
 * at once). */
static void start_next(struct ui_imgcache *c)
{
	while (!c->run && c->waiting) {
		struct job *j = c->waiting;
		c->waiting = j->next;
		j->next = NULL;
		struct entry *e = cache_find(c, &j->k);
		if (e) { /* an identical request finished meanwhile */
			j->img = ui_img_ref(e->img);
			image_finish(c, j);
			continue;
		}
		char *err = NULL;
		c->run = j;
		if (spawn_child(c, j, &err) < 0) {
			c->run = NULL;
			fail_job(c, j, "%s", err);
			free(err);
		}
	}
}

/* ---- probe ---- */

int ui_img_probe_fd(int fd, int *w, int *h, long long *bytes, char **err)
{
	struct stat st;
	unsigned char hdr[33];
	if (fstat(fd, &st) < 0)
		return set_err(err, "image: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return set_err(err, "image: not a regular file");
	ssize_t n;
	do
		n = pread(fd, hdr, sizeof hdr, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return set_err(err, "image: %s", strerror(errno));
	struct img_hdr ih;
	char *e = NULL;
	int rc = img_png_header(hdr, (size_t)n, -1, &ih, &e);
	if (rc != IMG_OK && rc != IMG_ETOOBIG) {
		set_err(err, "image: %s", e);
		free(e);
		return -1;
	}
	free(e);
	*w = (int)ih.w;
	*h = (int)ih.h;
	*bytes = st.st_size;
	return 0;
}

int ui_img_probe(int dirfd, const struct path_mounts *mounts, const char *rel,
                 int *w, int *h, long long *bytes, char **err)
{
	char *e = NULL;
	int fd = path_open_mapped(dirfd, mounts, rel,
	                          O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, &e);
	if (fd < 0) {
		set_err(err, "image: %s", e);
		free(e);
		return -1;
	}
	int rc = ui_img_probe_fd(fd, w, h, bytes, err);
	close(fd);
	return rc;
}
