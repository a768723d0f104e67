/* curllib.c: libcurl loaded with dlopen, on a thread of its own when a
 * caller asks early (curllib_preload), else at the first curllib_get.
 * The thread does only the load and the lookups; curl_global_init and
 * every other curl call come after curllib_get has joined it. */
#include "assay/curllib.h"
#include "assay/log.h"
#include "assay/util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The oldest libcurl whose calls and options we use (PROTOCOLS_STR). */
#define CURLLIB_MIN 0x075500
#define CURLLIB_MIN_TEXT "7.85"

struct curllib libcurl;

enum { CL_NONE, CL_THREAD, CL_DONE };

/* Taken by curllib_get and the exit's wait, never by the thread: it
 * writes cl_ok and cl_err, which are read once it is joined. */
static pthread_mutex_t cl_mu = PTHREAD_MUTEX_INITIALIZER;
static int cl_state;
static pthread_t cl_tid;
static int cl_ok;
static int cl_inited;
static int cl_logged;
static char cl_err[1024];
static const char *cl_soname;    /* the one loaded */
static const char *cl_version_s; /* its version */
static CURLcode (*cl_global_init)(long);

/* Each entry of the table and the symbol (curl_NAME) that fills it. */
static const struct {
	const char *name;
	size_t off;
} cl_fns[] = {
    {"easy_init", offsetof(struct curllib, easy_init)},
    {"easy_setopt", offsetof(struct curllib, easy_setopt)},
    {"easy_getinfo", offsetof(struct curllib, easy_getinfo)},
    {"easy_perform", offsetof(struct curllib, easy_perform)},
    {"easy_send", offsetof(struct curllib, easy_send)},
    {"easy_recv", offsetof(struct curllib, easy_recv)},
    {"easy_cleanup", offsetof(struct curllib, easy_cleanup)},
    {"easy_strerror", offsetof(struct curllib, easy_strerror)},
    {"multi_init", offsetof(struct curllib, multi_init)},
    {"multi_setopt", offsetof(struct curllib, multi_setopt)},
    {"multi_add_handle", offsetof(struct curllib, multi_add_handle)},
    {"multi_remove_handle", offsetof(struct curllib, multi_remove_handle)},
    {"multi_socket_action", offsetof(struct curllib, multi_socket_action)},
    {"multi_assign", offsetof(struct curllib, multi_assign)},
    {"multi_info_read", offsetof(struct curllib, multi_info_read)},
    {"multi_cleanup", offsetof(struct curllib, multi_cleanup)},
    {"multi_strerror", offsetof(struct curllib, multi_strerror)},
    {"slist_append", offsetof(struct curllib, slist_append)},
    {"slist_free_all", offsetof(struct curllib, slist_free_all)},
};

/* A symbol of so as a function pointer (POSIX: a function's address
 * fits a void *); NULL and cl_err said when so lacks it. */
static void *cl_sym(void *so, const char *name, void *slot, size_t n)
{
	void *p = dlsym(so, name);
	if (!p)
		snprintf(cl_err, sizeof cl_err,
		         "%s is not libcurl (it has no %s): install "
		         "libcurl3-gnutls, or take LD_LIBRARY_PATH away from "
		         "this file",
		         cl_soname, name);
	else
		memcpy(slot, &p, n);
	return p;
}

/* libcurl's version is new enough: 0, or -1 with cl_err said. */
static int cl_version(void *so)
{
	curl_version_info_data *(*info)(CURLversion) = NULL;
	if (!cl_sym(so, "curl_version_info", &info, sizeof info))
		return -1;
	const curl_version_info_data *v = info(CURLVERSION_NOW);
	if (v && v->version_num >= CURLLIB_MIN) {
		cl_version_s = v->version;
		return 0;
	}
	snprintf(cl_err, sizeof cl_err,
	         "libcurl %s is too old: assay needs %s or newer",
	         v && v->version ? v->version : "(of unknown version)",
	         CURLLIB_MIN_TEXT);
	return -1;
}

/* The load itself, dlopen and the lookups (the libraries' constructors
 * run here): 0, or -1 with cl_err said. curl_global_init is left to
 * curllib_get's thread: OpenSSL's init registers an exit handler, and
 * one registered here could run, freeing its locks, while the init
 * still went on beside an exit. */
static int cl_load(void)
{
	/* libcurl built on GnuTLS first (Debian's libcurl3-gnutls, which
	 * apt and git use: no libssl to load), then on OpenSSL (libcurl4);
	 * the next is tried only when one cannot be loaded */
	static const char *const names[] = {"libcurl-gnutls.so.4",
	                                    "libcurl.so.4"};
	void *so = NULL;
	size_t used = 0;
	for (size_t i = 0; !so && i < sizeof names / sizeof names[0]; i++) {
		cl_soname = names[i];
		so = dlopen(cl_soname, RTLD_LAZY | RTLD_LOCAL);
		if (!so) {
			const char *why = dlerror();
			int n = snprintf(cl_err + used, sizeof cl_err - used,
			                 "%s%s", used ? "; " : "",
			                 why ? why : cl_soname);
			if (n > 0 && (size_t)n < sizeof cl_err - used)
				used += (size_t)n;
		}
	}
	if (!so) {
		char *tried = xstrdup(cl_err);
		snprintf(cl_err, sizeof cl_err,
		         "cannot load libcurl (%s) (is libcurl3-gnutls or "
		         "libcurl4 installed? Debian: apt-get install "
		         "libcurl3-gnutls)",
		         tried);
		free(tried);
		return -1;
	}
	if (cl_version(so) < 0)
		return -1;
	for (size_t i = 0; i < sizeof cl_fns / sizeof cl_fns[0]; i++) {
		char name[64];
		snprintf(name, sizeof name, "curl_%s", cl_fns[i].name);
		if (!cl_sym(so, name, (char *)&libcurl + cl_fns[i].off,
		            sizeof(void *)))
			return -1;
	}
	if (!cl_sym(so, "curl_global_init", &cl_global_init,
	            sizeof cl_global_init))
		return -1;
	return 0;
}

static void *cl_thread(void *arg)
{
	(void)arg;
	cl_ok = cl_load() == 0;
	return NULL;
}

/* The load done, by the thread (joined) or here; with cl_mu held. */
static void cl_finish_locked(void)
{
	if (cl_state == CL_THREAD)
		pthread_join(cl_tid, NULL);
	else if (cl_state == CL_NONE)
		cl_ok = cl_load() == 0;
	cl_state = CL_DONE;
}

/* At exit, a load under way ends first: exit's handlers and the
 * libraries' destructors must not run beside it. */
static void cl_settle(void)
{
	pthread_mutex_lock(&cl_mu);
	if (cl_state == CL_THREAD)
		cl_finish_locked();
	pthread_mutex_unlock(&cl_mu);
}

void curllib_preload(void)
{
	pthread_mutex_lock(&cl_mu);
	if (cl_state != CL_NONE) {
		pthread_mutex_unlock(&cl_mu);
		return;
	}
	/* the thread takes no signal: the loop's go to the main thread */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (atexit(cl_settle) == 0 &&
	    pthread_create(&cl_tid, NULL, cl_thread, NULL) == 0)
		cl_state = CL_THREAD;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* without a thread (or the exit's wait), the load is curllib_get's */
	pthread_mutex_unlock(&cl_mu);
}

int curllib_get(char **err)
{
	pthread_mutex_lock(&cl_mu);
	cl_finish_locked();
	if (cl_ok && !cl_inited) {
		if (cl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK) {
			cl_inited = 1;
		} else {
			cl_ok = 0;
			snprintf(cl_err, sizeof cl_err,
			         "cannot initialise libcurl (curl_global_init "
			         "failed)");
		}
	}
	int ok = cl_ok, first = ok && !cl_logged;
	cl_logged |= ok;
	pthread_mutex_unlock(&cl_mu);
	if (!ok)
		return set_err(err, "%s", cl_err);
	if (first)
		log_info("http: %s loaded (libcurl %s)", cl_soname,
		         cl_version_s);
	return 0;
}
