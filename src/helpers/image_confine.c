/* image_confine.c: how `assay-image` confines itself before it reads
 * the image. Rlimits (CPU 4 s, address space 1 GiB, no file writes, 16
 * descriptors), then a seccomp filter that allows only memory, reading
 * stdin, writing stdout and stderr, and exiting; the `selfcheck` and
 * `selfcheck-syscalls` modes show what is in force. */
#include "helpers/image_confine.h"

#include "assay/imgrender.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HELPER_MEM (1024L << 20)
#define HELPER_CPU_S 4

static void limit(int res, rlim_t v)
{
	struct rlimit rl;
	if (getrlimit(res, &rl) == 0 &&
	    (rl.rlim_max == RLIM_INFINITY || v < rl.rlim_max)) {
		rl.rlim_cur = rl.rlim_max = v;
		if (res == RLIMIT_CPU)
			rl.rlim_max = v + 1; /* SIGXCPU first, then SIGKILL */
		setrlimit(res, &rl);
	}
}

/* After the limits: a seccomp filter that allows only what decoding,
 * encoding and writing the result need (strace of every mode: memory,
 * reading stdin, writing stdout and stderr, exit), so that even code
 * running inside a subverted libpng or libsixel can do nothing else:
 * no file opened, renamed, linked, truncated or re-moded, no socket,
 * no process or signal, no io_uring, no ioctl on the terminal. Any
 * other call fails with EPERM; a foreign architecture (and x32's
 * numbers) is refused whole. Not in sanitizer builds: their reports
 * open files and run programs. */
#if defined(__x86_64__)
#define SECCOMP_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SECCOMP_ARCH AUDIT_ARCH_AARCH64
#endif

static const char *seccomp_state = "off (unsupported architecture)";
/* Taken before the filter, which allows no getppid. */
static pid_t parent_pid;
static struct rlimit lim_cpu, lim_fsize, lim_as;

#if defined(SECCOMP_ARCH) && !defined(__SANITIZE_ADDRESS__)
/* Allowed whatever their arguments. */
static const int allowed[] = {
    __NR_brk,           __NR_mmap,      __NR_munmap,     __NR_mremap,
    __NR_madvise,       __NR_exit,      __NR_exit_group, __NR_rt_sigreturn,
    __NR_clock_gettime, __NR_getrandom, /* glibc's malloc seeds its tcache */
    __NR_sysinfo, /* glibc's qsort sizes its buffer by it */
};

#define FD_ARG offsetof(struct seccomp_data, args[0])
#define RET(v) (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, (v))
#define DENY RET(SECCOMP_RET_ERRNO | (EPERM & 0xffff))

/* if (nr == NR && (fd == a || fd == b)) allow; a, b < 0: any fd */
static int allow_on_fds(struct sock_filter *f, int k, int nr, int a, int b)
{
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
	                                      (unsigned)nr, 0, 5);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, FD_ARG);
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
	                                      (unsigned)a, 1, 0);
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
	                                      (unsigned)b, 0, 1);
	f[k++] = RET(SECCOMP_RET_ALLOW);
	f[k++] = DENY;
	return k;
}
#endif

static void allow_syscalls(void)
{
#if defined(SECCOMP_ARCH) && !defined(__SANITIZE_ADDRESS__)
	enum { N = sizeof allowed / sizeof *allowed };
	struct sock_filter f[6 + 2 * N + 4 * 6 + 1];
	int k = 0;
	f[k++] = (struct sock_filter)BPF_STMT(
	    BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
	                                      SECCOMP_ARCH, 1, 0);
	f[k++] = RET(SECCOMP_RET_KILL_PROCESS);
	f[k++] = (struct sock_filter)BPF_STMT(
	    BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
	/* x32 numbers alias the x86-64 ones: refuse them all */
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K,
	                                      0x40000000u, 0, 1);
	f[k++] = DENY;
#endif
	for (int i = 0; i < N; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(
		    BPF_JMP | BPF_JEQ | BPF_K, (unsigned)allowed[i], 0, 1);
		f[k++] = RET(SECCOMP_RET_ALLOW);
	}
	/* the image comes on stdin, the result goes to stdout, messages
	 * to stderr: no other descriptor (a test that does not match
	 * leaves nr in the accumulator for the next) */
	k = allow_on_fds(f, k, __NR_read, STDIN_FILENO, STDIN_FILENO);
	k = allow_on_fds(f, k, __NR_pread64, STDIN_FILENO, STDIN_FILENO);
	k = allow_on_fds(f, k, __NR_write, STDOUT_FILENO, STDERR_FILENO);
	k = allow_on_fds(f, k, __NR_writev, STDOUT_FILENO, STDERR_FILENO);
	f[k++] = DENY;
	struct sock_fprog prog = {(unsigned short)k, f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0)
		seccomp_state = "on";
	else
		seccomp_state = "off (the kernel refused the filter)";
#elif defined(__SANITIZE_ADDRESS__)
	seccomp_state = "off (sanitizer build)";
#endif
}

/* `assay-image selfcheck`: what the confinement allows, for tests and
 * for people checking a build (the limits as image_confine() set them: the
 * filter refuses getrlimit). */
int image_selfcheck(void)
{
	printf("seccomp: %s\n", seccomp_state);
	int fd = open("/etc/hostname", O_RDONLY);
	printf("open: %s\n", fd >= 0 ? "allowed" : strerror(errno));
	int so = socket(AF_INET, SOCK_STREAM, 0);
	printf("socket: %s\n", so >= 0 ? "allowed" : strerror(errno));
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	printf("fork: %s\n", pid > 0 ? "allowed" : strerror(errno));
	printf("cpu limit: %llu s\n", (unsigned long long)lim_cpu.rlim_cur);
	printf("file size limit: %llu\n",
	       (unsigned long long)lim_fsize.rlim_cur);
	if (lim_as.rlim_cur == RLIM_INFINITY)
		printf("memory limit: none\n");
	else
		printf("memory limit: %llu MiB\n",
		       (unsigned long long)lim_as.rlim_cur >> 20);
	return 0;
}

/* `assay-image selfcheck-syscalls DIR` (for tests): after image_confine(),
 * try what code inside a subverted decoder would, on DIR/victim and
 * DIR/empty (made by the caller), and print one line per try:
 * "NAME: refused" (EPERM from the filter) or "NAME: ALLOWED (...)".
 * Exit 0 when every try was refused, 1 if any was not, 3 (trying
 * nothing) when the filter is not in force. */
static int refused(const char *name, long rc)
{
	int ok = rc < 0 && errno == EPERM;
	if (ok)
		printf("%s: refused\n", name);
	else
		printf("%s: ALLOWED (%ld, %s)\n", name, rc,
		       rc < 0 ? strerror(errno) : "succeeded");
	return ok;
}

int image_selfcheck_syscalls(const char *dir)
{
	printf("seccomp: %s\n", seccomp_state);
	if (strcmp(seccomp_state, "on")) {
		fflush(stdout);
		return 3;
	}
	char victim[512], moved[512], link[512], sym[512], empty[512],
	    newdir[512];
	snprintf(victim, sizeof victim, "%s/victim", dir);
	snprintf(moved, sizeof moved, "%s/moved", dir);
	snprintf(link, sizeof link, "%s/link", dir);
	snprintf(sym, sizeof sym, "%s/sym", dir);
	snprintf(empty, sizeof empty, "%s/empty", dir);
	snprintf(newdir, sizeof newdir, "%s/newdir", dir);
	int all = 1;
	all &= refused("openat", openat(AT_FDCWD, "/etc/hostname", O_RDONLY));
#ifdef __NR_io_uring_setup
	char params[120] = {0}; /* struct io_uring_params */
	all &=
	    refused("io_uring_setup", syscall(__NR_io_uring_setup, 4, params));
#endif
	all &= refused("socket", socket(AF_INET, SOCK_STREAM, 0));
	all &= refused("kill", kill(parent_pid, 0));
	all &= refused("fork", fork());
	all &= refused("execve", execve("/bin/true", (char *[]){NULL}, NULL));
	all &= refused("truncate", truncate(victim, 0));
	all &= refused("chmod", fchmodat(AT_FDCWD, victim, 0777, 0));
	all &= refused("renameat", renameat(AT_FDCWD, victim, AT_FDCWD, moved));
	all &= refused("linkat", linkat(AT_FDCWD, victim, AT_FDCWD, link, 0));
	all &= refused("symlinkat", symlinkat(victim, AT_FDCWD, sym));
	all &= refused("unlinkat", unlinkat(AT_FDCWD, victim, 0));
	all &= refused("rmdir", unlinkat(AT_FDCWD, empty, AT_REMOVEDIR));
	all &= refused("mkdirat", mkdirat(AT_FDCWD, newdir, 0700));
#ifdef __NR_link /* the old calls beside the *at ones (x86-64) */
	all &= refused("link", syscall(__NR_link, victim, link));
	all &= refused("symlink", syscall(__NR_symlink, victim, sym));
	all &= refused("rename", syscall(__NR_rename, victim, moved));
	all &= refused("chmod (old)", syscall(__NR_chmod, victim, 0777));
	all &= refused("rmdir (old)", syscall(__NR_rmdir, empty));
	all &= refused("open", syscall(__NR_open, "/etc/hostname", O_RDONLY));
#endif
	struct stat st;
	all &= refused("stat", fstatat(AT_FDCWD, victim, &st, 0));
	all &= refused("memfd_create", syscall(__NR_memfd_create, "x", 0));
	all &= refused("ioctl", ioctl(STDERR_FILENO, TIOCSTI, "x"));
	all &= refused("write to stdin", write(STDIN_FILENO, "x", 1));
	all &= refused("ptrace", ptrace(PTRACE_TRACEME, 0, NULL, NULL));
	printf("%s\n", all ? "all refused" : "SOME ALLOWED");
	fflush(stdout);
	return all ? 0 : 1;
}

int image_confine(struct stat *in_st)
{
	closefrom(3);
	int in_st_ok = fstat(STDIN_FILENO, in_st) == 0;
	parent_pid = getppid();
	struct stat so, se;
	int to_file = (fstat(STDOUT_FILENO, &so) == 0 && S_ISREG(so.st_mode)) ||
	              (fstat(STDERR_FILENO, &se) == 0 && S_ISREG(se.st_mode));
	limit(RLIMIT_CPU, HELPER_CPU_S);
#if !defined(__SANITIZE_ADDRESS__)
	limit(RLIMIT_AS, HELPER_MEM); /* ASan needs its shadow mappings */
#endif
	/* no files written (a write fails, it does not kill); a person
	 * redirecting stdout or stderr to a file by hand still gets them */
	signal(SIGXFSZ, SIG_IGN);
	limit(RLIMIT_FSIZE, to_file ? IMG_MAX_PAYLOAD + 4096 : 0);
	limit(RLIMIT_NOFILE, 16);
	limit(RLIMIT_CORE, 0);
	signal(SIGPIPE, SIG_DFL);
	getrlimit(RLIMIT_CPU, &lim_cpu); /* for selfcheck */
	getrlimit(RLIMIT_FSIZE, &lim_fsize);
	getrlimit(RLIMIT_AS, &lim_as);
	allow_syscalls();
	return in_st_ok;
}
