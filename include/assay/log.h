/* log.h: the run's log file (run dir/assay.log). Before log_open the
 * messages go nowhere unless ASSAY_LOG_STDERR is set. */
#ifndef ASSAY_LOG_H
#define ASSAY_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

int log_open(const char *path, char **err);
void log_close(void);
void log_msg(enum log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
