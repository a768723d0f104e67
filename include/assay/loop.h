/* loop.h: the single poll() loop that owns every descriptor: fds,
 * one-shot timers, signals through a self-pipe, and child reaping. */
#ifndef ASSAY_LOOP_H
#define ASSAY_LOOP_H

#include <stdint.h>
#include <sys/types.h>
#include <poll.h>
#include <termios.h>

struct loop;

/* events is a mask of POLLIN/POLLOUT; revents as poll() gives them. */
typedef void (*loop_fd_fn)(int fd, int revents, void *arg);
typedef void (*loop_timer_fn)(void *arg);
typedef void (*loop_signal_fn)(int sig, void *arg);
/* status as from waitpid(). */
typedef void (*loop_child_fn)(pid_t pid, int status, void *arg);

struct loop *loop_new(void);
void loop_free(struct loop *l);

/* Watch fd; replaces an existing watch on the same fd. */
void loop_fd_add(struct loop *l, int fd, int events, loop_fd_fn fn, void *arg);
void loop_fd_events(struct loop *l, int fd, int events);
void loop_fd_del(struct loop *l, int fd);

/* One-shot timer after ms milliseconds; returns an id > 0. */
uint64_t loop_timer_add(struct loop *l, int64_t ms, loop_timer_fn fn,
                        void *arg);
void loop_timer_cancel(struct loop *l, uint64_t id);

/* Handle SIGINT, SIGTERM, SIGHUP, SIGWINCH (sig) on the loop; one
 * handler per signal. SIGCHLD is handled internally: see
 * loop_child_watch. The first SIGINT or SIGTERM goes to its handler; a
 * second one ends assay at once, even when the loop is stuck: the
 * process group of every watched child is killed (SIGKILL), the
 * terminal put back (loop_terminal_guard), and the process _exit()s
 * with 128 + sig, from the signal handler. */
void loop_signal(struct loop *l, int sig, loop_signal_fn fn, void *arg);
/* While curses owns the terminal fd: its mode from before (tio) and the
 * bytes that turn off what curses turned on, for a second signal's
 * exit (fd -1: curses has let go). */
void loop_terminal_guard(int fd, const struct termios *tio, const char *reset);
/* Call fn once pid has exited (the loop reaps it). */
void loop_child_watch(struct loop *l, pid_t pid, loop_child_fn fn, void *arg);
void loop_child_unwatch(struct loop *l, pid_t pid);

/* Run one iteration, waiting at most max_wait_ms (-1 = until an event). */
void loop_once(struct loop *l, int max_wait_ms);
/* Run until loop_stop(). */
void loop_run(struct loop *l);
void loop_stop(struct loop *l);
int loop_stopped(const struct loop *l);

#endif
