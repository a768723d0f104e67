/* fdlimit.h: the process's descriptor limit (RLIMIT_NOFILE): raised to
 * the hard limit at start, the first soft limit given back to the code a
 * sandbox runs, what is open now, and the words for running out. */
#ifndef ASSAY_FDLIMIT_H
#define ASSAY_FDLIMIT_H

/* The soft limit is raised at most this far: 64 sessions at once
 * (EVAL_MAX_J) need a few thousand; more buys nothing. */
#define FDLIMIT_CAP 65536

/* Raise the soft limit to the hard one (at most FDLIMIT_CAP), once, at
 * start; what it was is kept for fdlimit_child. Quiet: a limit that
 * cannot be raised is what fdlimit_soft then says. */
void fdlimit_raise(void);
/* In a child between fork and exec (async-signal-safe): the soft limit
 * the process started with, so sandboxed code sees the limit its user
 * set (and a program that uses select() never gets a descriptor past
 * FD_SETSIZE from us). 0, or -1 when setrlimit fails. */
int fdlimit_child(void);
/* The soft and hard limits now (the hard one capped at FDLIMIT_CAP for
 * "unlimited"). */
long fdlimit_soft(void);
long fdlimit_hard(void);
/* The descriptors open now (/proc/self/fd), or -1 if it cannot tell. */
int fdlimit_open(void);
/* msg and what to do, when msg says the process or the system ran out
 * of descriptors (strerror of EMFILE or ENFILE in it); NULL otherwise.
 * The caller frees it. */
char *fdlimit_explain(const char *msg);

#endif
