/* termcaps_bench.c: the terminal detection (src/tui/termcaps.c) on a
 * pty whose other end plays foot, in the same run, interleaved:
 *   - answered: ui_termcaps_detect until DA1, against the bare round
 *     trip of the same queries and replies on the same kind of pty (raw
 *     mode, write, the other end reads and answers, read back): the
 *     cost no detection can avoid;
 *   - silent: a terminal that never answers, with a 150 ms timeout,
 *     against the 150 ms asked.
 * These are the figures tests/unit/test_termcaps.c used to assert (done
 * in under 1.5 s, timeout kept within 1 s); the test now only guards
 * against a hang. Prints medians and ratios; does not fail.
 *
 * usage: termcaps_bench [-n RUNS]  (built and run by
 * tests/bench/termcaps.sh) */
#include "tui/text.c"
#include "tui/sanitize.c"
#include "tui/termcaps.c"
#include "tui/reply_filter.c"
#include "tui/theme.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUERIES                                                                \
	"\033_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\033\\\033[?1;1;0S\033[?2;1;0S"   \
	"\033[16t\033[c"
#define REPLY "\033[6;20;10t\033[?62;4;22c"
#define SILENT_MS 150

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The other end: reads until DA1's query, answers (or not), then holds
 * the master open until the parent kills it. */
static pid_t terminal(int master, int answer)
{
	pid_t pid = fork();
	if (pid)
		return pid;
	char got[512];
	size_t n = 0;
	got[0] = '\0';
	while (n < sizeof got - 1 && !strstr(got, "\033[c")) {
		ssize_t r = read(master, got + n, sizeof got - 1 - n);
		if (r <= 0)
			_exit(3);
		n += (size_t)r;
		got[n] = '\0';
	}
	if (answer && write(master, REPLY, strlen(REPLY)) < 0)
		_exit(5);
	pause();
	_exit(0);
}

static int open_pty(int *master, int *slave)
{
	*master = posix_openpt(O_RDWR | O_NOCTTY);
	if (*master < 0 || grantpt(*master) < 0 || unlockpt(*master) < 0)
		return -1;
	*slave = open(ptsname(*master), O_RDWR | O_NOCTTY);
	return *slave < 0 ? -1 : 0;
}

/* One measurement in microseconds: 0 detect answered, 1 bare round
 * trip, 2 detect silent. */
static double once(int kind)
{
	int master, slave;
	if (open_pty(&master, &slave) < 0) {
		perror("pty");
		exit(1);
	}
	pid_t pid = terminal(master, kind != 2);
	struct ui_termcaps tc;
	double t0 = now_us();
	if (kind == 1) {
		struct termios old, raw;
		tcgetattr(slave, &old);
		raw = old;
		cfmakeraw(&raw);
		tcsetattr(slave, TCSANOW, &raw);
		if (write(slave, QUERIES, strlen(QUERIES)) < 0)
			exit(1);
		char buf[256];
		size_t n = 0;
		while (n < strlen(REPLY)) {
			ssize_t r = read(slave, buf + n, sizeof buf - n);
			if (r <= 0)
				exit(1);
			n += (size_t)r;
		}
		tcsetattr(slave, TCSANOW, &old);
	} else {
		ui_termcaps_detect(slave, slave, "auto",
		                   kind == 2 ? SILENT_MS : 20000, &tc);
		if (kind == 0 && (tc.timed_out || !tc.da1_seen)) {
			fprintf(stderr, "detect did not see the answer\n");
			exit(1);
		}
	}
	double t1 = now_us();
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(slave);
	close(master);
	return t1 - t0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int runs = 30;
	if (argc > 2 && !strcmp(argv[1], "-n"))
		runs = atoi(argv[2]);
	if (runs < 1)
		runs = 1;
	setenv("TERM", "xterm-256color", 1);
	unsetenv("TMUX");
	unsetenv("COLORTERM");
	double *v[3];
	for (int k = 0; k < 3; k++)
		v[k] = calloc((size_t)runs, sizeof(double));
	once(0); /* warm up, not counted */
	once(1);
	for (int i = 0; i < runs; i++)
		for (int k = 0; k < 3; k++)
			v[k][i] = once(k);
	double mins[3];
	for (int k = 0; k < 3; k++) {
		mins[k] = v[k][0];
		for (int i = 1; i < runs; i++)
			if (v[k][i] < mins[k])
				mins[k] = v[k][i];
	}
	double m0 = median(v[0], runs), m1 = median(v[1], runs),
	       m2 = median(v[2], runs);
	printf("%-36s %10s %10s %8s\n", "case", "median ms", "min ms", "ratio");
	printf("%-36s %10.2f %10.2f %7.2fx\n", "bare round trip (baseline)",
	       m1 / 1000, mins[1] / 1000, 1.0);
	printf("%-36s %10.2f %10.2f %7.2fx\n", "detect, answered like foot",
	       m0 / 1000, mins[0] / 1000, m0 / m1);
	printf("%-36s %10.2f %10.2f %7.2fx\n", "detect, silent (150 ms asked)",
	       m2 / 1000, mins[2] / 1000, m2 / (SILENT_MS * 1000.0));
	printf("(ratios: answered / the bare round trip; silent / the 150 ms "
	       "timeout; %d runs each, interleaved)\n",
	       runs);
	for (int k = 0; k < 3; k++)
		free(v[k]);
	return 0;
}
