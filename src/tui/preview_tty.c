/* preview_tty.c: the queue of preview bytes to the terminal, drained as
 * the tty takes them. An image's placement (preview.c) is appended to
 * p->out and sent after curses' own output; what the terminal does not
 * take at once goes from the loop (POLLOUT on a non-blocking descriptor
 * of the tty of our own), so a slow terminal never stalls the loop, and
 * no curses frame is sent while a placement is half written
 * (ui_preview_busy holds it until the queue is empty). */
#include "tui/preview_internal.h"

#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FLUSH_MS 2000 /* the most the end waits for the tty */

/* Our own descriptor of the terminal, non-blocking without touching
 * the flags of the one curses and the shell share; else stdout as it
 * is (blocking). */
static int preview_tty_fd(struct ui_preview *p)
{
	if (p->out_fd < 0) {
		p->out_fd = open("/proc/self/fd/1",
		                 O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
		if (p->out_fd < 0 || !isatty(p->out_fd)) {
			if (p->out_fd >= 0)
				close(p->out_fd);
			p->out_fd = STDOUT_FILENO;
		}
	}
	return p->out_fd;
}

int preview_pending(const struct ui_preview *p)
{
	return p && p->out_off < p->out.len;
}

/* As much of the queue as the terminal takes now. */
static void preview_tty_push(struct ui_preview *p)
{
	int fd = preview_tty_fd(p);
	while (p->out_off < p->out.len) {
		ssize_t w = write(fd, p->out.data + p->out_off,
		                  p->out.len - p->out_off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w <= 0) { /* the terminal is gone: drop it all */
			log_warn("tui: preview: write to the terminal: %s",
			         strerror(errno));
			p->out_off = p->out.len;
			break;
		}
		p->out_off += (size_t)w;
	}
	buf_free(&p->out); /* all out: a payload's megabytes too */
	buf_init(&p->out, 0);
	p->out_off = 0;
}

/* The terminal takes more: the queue goes on; a frame held for it follows. */
static void preview_on_tty_writable(int fd, int revents, void *arg)
{
	struct ui *u = arg;
	struct ui_preview *p = u->preview;
	(void)fd;
	(void)revents;
	preview_tty_push(p);
	if (preview_pending(p))
		return;
	loop_fd_del(p->loop, p->out_fd);
	p->out_watch = 0;
	if (p->held) { /* the frame that waited goes out now */
		p->held = 0;
		ui_touch(u, UI_DIRTY_STATUS);
	}
}

/* Send what was queued in p->out (after curses' own output): written
 * now as far as the terminal takes it, the rest from the loop. */
void preview_tty_send(struct ui *u)
{
	struct ui_preview *p = u->preview;
	fflush(stdout);
	preview_tty_push(p);
	if (preview_pending(p) && !p->out_watch) {
		p->loop = u->loop;
		loop_fd_add(u->loop, p->out_fd, POLLOUT,
		            preview_on_tty_writable, u);
		p->out_watch = 1;
	}
}

int ui_preview_busy(struct ui *u)
{
	struct ui_preview *p = u->preview;
	if (!preview_pending(p))
		return 0;
	p->held = 1;
	return 1;
}

/* Before curses leaves the screen: the rest of the queue (waiting at
 * most FLUSH_MS for the terminal), and kitty's copy freed. */
void ui_preview_flush(struct ui *u)
{
	struct ui_preview *p = u->preview;
	if (!p)
		return;
	if (p->kitty_sent) {
		buf_printf(&p->out, "\033_Ga=d,d=I,i=%u,q=2\033\\", KITTY_ID);
		ui_img_unref(p->kitty_sent);
		p->kitty_sent = NULL;
	}
	int64_t end = now_ms() + FLUSH_MS;
	for (preview_tty_push(p); preview_pending(p) && now_ms() < end;
	     preview_tty_push(p)) {
		struct pollfd pfd = {p->out_fd, POLLOUT, 0};
		poll(&pfd, 1, 50);
	}
	if (p->out_watch)
		loop_fd_del(p->loop, p->out_fd);
	p->out_watch = 0;
	buf_free(&p->out);
	p->out_off = 0;
}

/* The end of previews: the watch and our descriptor of the tty go, and
 * what is still queued with them. */
void preview_tty_close(struct ui_preview *p)
{
	if (p->out_watch)
		loop_fd_del(p->loop, p->out_fd);
	if (p->out_fd > STDERR_FILENO)
		close(p->out_fd);
	buf_free(&p->out);
}
