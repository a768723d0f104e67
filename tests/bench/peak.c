/* peak.c: `assay-peak [-o FILE] COMMAND [ARG...]` runs the command and
 * writes "<wall_ms> <peak_rss_kib> <exit_code>" to FILE (else stderr).
 *
 * The measuring process must be small: Linux carries the RSS high-water
 * mark of a forked parent into the child across exec, so measuring from
 * a fork of Python (or any big process) reports the parent's size. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *outpath = NULL;
	if (argc > 2 && argv[1][0] == '-' && argv[1][1] == 'o' && !argv[1][2]) {
		outpath = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 2) {
		fprintf(stderr,
		        "usage: assay-peak [-o FILE] COMMAND [ARG...]\n");
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("wait4");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	            (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	int code =
	    WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	FILE *out = outpath ? fopen(outpath, "w") : NULL;
	fprintf(out ? out : stderr, "%.3f %ld %d\n", ms, ru.ru_maxrss, code);
	if (out)
		fclose(out);
	return code;
}
