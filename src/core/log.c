/* log.c: a plain append-only log file in the run directory. */
#include "assay/log.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static FILE *log_fp;

int log_open(const char *path, char **err)
{
	log_close();
	/* in a copied run dir: never a FIFO (the open would block) */
	log_fp = fopen_regular(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW,
	                       0644, err);
	if (!log_fp)
		return -1;
	setvbuf(log_fp, NULL, _IOLBF, 0);
	return 0;
}

void log_close(void)
{
	if (log_fp)
		fclose(log_fp);
	log_fp = NULL;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	static const char *names[] = {"debug", "info", "warn", "error"};
	FILE *f = log_fp;
	if (!f && getenv("ASSAY_LOG_STDERR"))
		f = stderr;
	if (!f)
		return;
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
	va_list ap;
	va_start(ap, fmt);
	fprintf(f, "%s %s ", ts, names[lvl]);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	va_end(ap);
}
