/* local_internal.h: the pieces of the local (bubblewrap) backend,
 * private to src/sandbox/: its state (local.c owns it), the command
 * line and the probe (local_probe.c), and the spawning and running of
 * commands (local_exec.c). */
#ifndef ASSAY_SANDBOX_LOCAL_INTERNAL_H
#define ASSAY_SANDBOX_LOCAL_INTERNAL_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include "assay/sandbox.h"
#include "assay/spawn.h"
#include "sandbox/internal.h"

#define LOCAL_CHUNK 65536                     /* read per readiness */
#define LOCAL_MPL_DIR "/var/cache/matplotlib" /* inside the sandbox */

struct local_exec;
struct local_start;

struct local {
	char *bwrap;
	struct strv base;    /* bwrap and every option up to the command */
	char *etc_dir;       /* what the sandbox sees at /etc (etc.c) */
	int etc_shared;      /* etc_dir is in the user's cache: keep it */
	char *limits_script; /* sets RLIMIT_NPROC inside, then execs; NULL
	                      * when the cgroup caps processes */
	struct rlimit rl_as, rl_cpu, rl_fsize;
	int use_userns, disable_userns;
	int ws_fd;
	char *cg_dir;   /* our pids cgroup, or NULL */
	int cg_join_fd; /* v1 "tasks" or v2 "cgroup.procs": the child
	                 * writes "0" to it before exec */
	int cg_dir_fd;  /* v2: for clone3 CLONE_INTO_CGROUP */
	struct local_exec *execs;
	char *chunk;
	int started, stopped;
	struct local_start *starting; /* the start in flight (local.c) */
	/* the stop (local.c): 1 waiting for the commands, 2 for the
	 * cgroup to empty */
	int stop_phase, cg_tries;
	uint64_t stop_timer;
};

/* local_exec.c */
/* Start bwrap with argv (in its own process group, under the limits,
 * in the cgroup, with an empty environment), stdin/stdout/stderr as
 * io, and info_fd (when not NULL) as its 3 for --info-fd 3; the pid
 * and *p, or -1 and *err. */
pid_t local_spawn_bwrap(const struct local *lp, char *const *argv,
                        const struct spawn_io io[3], const int *info_fd,
                        struct spawn_proc *p, char **err);
struct sbx_exec *local_exec(struct sbx *s, const struct sbx_exec_req *r,
                            const struct sbx_exec_obs *obs, char **err);
void local_cancel(struct sbx_exec *e);
int local_exec_write(struct sbx_exec *e, const void *data, size_t n);
/* Kill every command (their on_exit follows from the loop). */
void local_kill_all(struct sbx *s);
/* Kill, reap (blocking briefly) and finish every command now. */
void local_reap_all(struct sbx *s);
/* Called by local_exec.c when the last command of a stopping sandbox
 * has finished (local.c). */
void local_execs_gone(struct sbx *s);

/* local_probe.c */
/* bwrap from $ASSAY_BWRAP or PATH, or NULL. */
char *local_find_bwrap(void);
/* Limit res to value*mul (hard limit extra_hard above), never above
 * the current hard limit; value <= 0 keeps what we have. */
void local_set_limit(struct rlimit *rl, int res, long value, long mul,
                     long extra_hard);
/* Every bwrap option up to the command (lp->base). */
void local_build_base(struct sbx *s, struct local *lp, const char *mpl);
/* The full argv for one command; info: bwrap reports its inner pid
 * on descriptor 3 (--info-fd 3). */
void local_build_argv(const struct local *lp, struct strv *a,
                      const struct sbx_exec_req *r, int info);
/* As root, a pids cgroup for this sandbox; warn gets why there is
 * none when the process limit is therefore not enforced. */
void local_cgroup_setup(struct local *lp, long nproc, struct buf *warn);
/* Close the cgroup's fds and try to remove it: 0 done (or nothing
 * to do), 1 still busy (its processes are still leaving). */
int local_cgroup_remove_try(struct local *lp);
/* Find the options this bwrap and kernel accept (from the cache, or
 * by starting sandboxes, as loop children); done(arg, NULL) once
 * lp->base holds them, done(arg, why) when none works. */
struct local_probe;
struct local_probe *local_probe_start(struct sbx *s, struct local *lp,
                                      const char *mpl, struct buf *warn,
                                      void (*done)(void *arg, char *err),
                                      void *arg);
/* Stop a probe in flight (its child killed and reaped), no callback. */
void local_probe_free(struct local_probe *p);

/* local_doctor.c: what `assay doctor` checks (sbx_ops.probe): a real
 * local sandbox started, then its python asked. */
void local_doctor(const struct config *cfg, int required, long timeout_ms,
                  struct sbx_probe *p);

#endif
