/* assay_archive.c: the `assay-archive` helper process. Archive work
 * runs here, not in assay: it keeps libarchive (and the ICU and XML
 * libraries it drags in) out of the main process's memory and start-up,
 * and a slow or hostile tree cannot stall the event loop.
 *
 *   assay-archive create OUT.tar.gz DIR
 *       writes DIR (symlinks stored, never followed) to OUT atomically.
 *   assay-archive pack [--skip DIR] SRC DEST...
 *       the inputs as a tar on stdout (the docker backend's staging).
 *   assay-archive extract DEST NAME
 *       a tar on stdin whose entries all lie under NAME into DEST,
 *       refusing absolute paths, "..", and links out (docker fetch).
 *   assay-archive repack OUT.tar.gz STRIP
 *       a tar on stdin to OUT without the leading STRIP/ (docker
 *       persist).
 *
 * Exit 0 on success; else a one-line reason on stderr and exit 1. The
 * stream commands run under resource limits: they read what a
 * container made. */
#include "assay/util.h"
#include "sandbox/docker_internal.h"
#include "sandbox/internal.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define HELPER_MEM (1024L << 20)
#define HELPER_CPU_S 3600
#define HELPER_FILE (64LL << 30)

static void limit(int res, rlim_t v)
{
	struct rlimit rl;
	if (getrlimit(res, &rl) == 0 &&
	    (rl.rlim_max == RLIM_INFINITY || v < rl.rlim_max)) {
		rl.rlim_cur = rl.rlim_max = v;
		setrlimit(res, &rl);
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: assay-archive create OUT.tar.gz DIR\n"
	                "       assay-archive pack [--skip DIR] SRC DEST...\n"
	                "       assay-archive extract DEST NAME < TAR\n"
	                "       assay-archive repack OUT.tar.gz STRIP < TAR\n");
	return 2;
}

static int done(int rc, char *err)
{
	if (rc < 0)
		fprintf(stderr, "%s\n", err ? err : "archive failed");
	free(err);
	return rc < 0 ? 1 : 0;
}

static int create(const char *out, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		perror(dir);
		return 1;
	}
	char *err = NULL;
	int rc = sbx_host_export_tar(fd, out, &err);
	close(fd);
	return done(rc, err);
}

int main(int argc, char **argv)
{
	char *err = NULL;
	if (argc < 2)
		return usage();
	const char *cmd = argv[1];
	if (!strcmp(cmd, "create"))
		return argc == 4 ? create(argv[2], argv[3]) : usage();
	signal(SIGPIPE, SIG_IGN); /* a reader that gives up: EPIPE */
	limit(RLIMIT_CORE, 0);
#ifndef __SANITIZE_ADDRESS__ /* ASan reserves terabytes of shadow */
	limit(RLIMIT_AS, HELPER_MEM);
#endif
	limit(RLIMIT_CPU, HELPER_CPU_S);
	limit(RLIMIT_FSIZE, (rlim_t)HELPER_FILE);
	umask(022);
	int rc;
	if (!strcmp(cmd, "pack"))
		rc = dk_tar_pack(1, argv + 2, argc - 2, &err);
	else if (!strcmp(cmd, "extract") && argc == 4)
		rc = dk_tar_extract(0, argv[3], argv[2], &err);
	else if (!strcmp(cmd, "repack") && argc == 4)
		rc = dk_tar_repack(0, argv[3], argv[2], &err);
	else
		return usage();
	return done(rc, err);
}
