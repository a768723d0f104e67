/* assay_archive.c: the `assay-archive` helper process. Archive work
 * runs here, not in assay: it keeps libarchive (and the ICU and XML
 * libraries it drags in) out of the main process's memory and start-up,
 * and a slow or hostile tree cannot stall the event loop.
 *
 *   assay-archive create OUT.tar.gz DIR
 *
 * writes DIR (symlinks stored, never followed) to OUT atomically.
 * Exit 0 on success; else a one-line reason on stderr and exit 1. */
#include "assay/util.h"
#include "sandbox/internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 4 || strcmp(argv[1], "create")) {
		fprintf(stderr, "usage: assay-archive create OUT.tar.gz DIR\n");
		return 2;
	}
	int fd = open(argv[3], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[3]);
		return 1;
	}
	char *err = NULL;
	if (sbx_host_export_tar(fd, argv[2], &err) < 0) {
		fprintf(stderr, "%s\n", err ? err : "archive failed");
		free(err);
		close(fd);
		return 1;
	}
	close(fd);
	return 0;
}
