/* curllib.c: libcurl loaded with dlopen, on a thread of its own when a
 * caller asks early (curllib_preload), else at the first curllib_get.
 * The thread does only the load and the lookups; curl_global_init and
 * every other curl call come after curllib_get has returned the table. */
#include "assay/curllib.h"
#include "assay/util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct curllib libcurl;

enum { CL_NONE, CL_LOADING, CL_DONE };

static pthread_mutex_t cl_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cl_cv = PTHREAD_COND_INITIALIZER;
static int cl_state;
static int cl_ok;
static int cl_inited;
static CURLcode (*cl_global_init)(long);
static char cl_err[512];

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

/* The load itself, dlopen and the lookups (the libraries' constructors
 * run here): 0, or -1 with cl_err said. curl_global_init is left to
 * curllib_get's thread: OpenSSL's init registers an exit handler, and
 * one registered here could run, freeing its locks, while the init
 * still went on beside an exit. */
static int cl_load(void)
{
	void *so = dlopen(CURLLIB_SONAME, RTLD_LAZY | RTLD_LOCAL);
	if (!so) {
		const char *why = dlerror();
		snprintf(cl_err, sizeof cl_err,
		         "cannot load libcurl (%s): %s; install it (Debian: "
		         "apt-get install libcurl4)",
		         CURLLIB_SONAME, why ? why : "not found");
		return -1;
	}
	for (size_t i = 0; i < sizeof cl_fns / sizeof cl_fns[0]; i++) {
		char name[64];
		snprintf(name, sizeof name, "curl_%s", cl_fns[i].name);
		void *p = dlsym(so, name);
		if (!p) {
			snprintf(
			    cl_err, sizeof cl_err,
			    "%s has no %s: libcurl 7.85 or newer is needed",
			    CURLLIB_SONAME, name);
			return -1;
		}
		/* POSIX guarantees a function's address fits a void * */
		memcpy((char *)&libcurl + cl_fns[i].off, &p, sizeof p);
	}
	void *gi = dlsym(so, "curl_global_init");
	if (!gi) {
		snprintf(cl_err, sizeof cl_err, "%s has no curl_global_init",
		         CURLLIB_SONAME);
		return -1;
	}
	memcpy(&cl_global_init, &gi, sizeof gi);
	return 0;
}

/* Load, then wake whoever waits. */
static void cl_run(void)
{
	int ok = cl_load() == 0;
	pthread_mutex_lock(&cl_mu);
	cl_ok = ok;
	cl_state = CL_DONE;
	pthread_cond_broadcast(&cl_cv);
	pthread_mutex_unlock(&cl_mu);
}

static void *cl_thread(void *arg)
{
	(void)arg;
	cl_run();
	return NULL;
}

/* At exit, a load under way finishes first: exit's handlers and the
 * libraries' destructors must not run beside it. */
static void cl_settle(void)
{
	pthread_mutex_lock(&cl_mu);
	while (cl_state == CL_LOADING)
		pthread_cond_wait(&cl_cv, &cl_mu);
	pthread_mutex_unlock(&cl_mu);
}

void curllib_preload(void)
{
	pthread_mutex_lock(&cl_mu);
	if (cl_state != CL_NONE) {
		pthread_mutex_unlock(&cl_mu);
		return;
	}
	cl_state = CL_LOADING;
	pthread_mutex_unlock(&cl_mu);
	atexit(cl_settle);
	/* the thread takes no signal: the loop's go to the main thread */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t a;
	pthread_t t;
	int started = 0;
	if (pthread_attr_init(&a) == 0) {
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		started = pthread_create(&t, &a, cl_thread, NULL) == 0;
		pthread_attr_destroy(&a);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!started) /* no thread: load here, as curllib_get would */
		cl_run();
}

const struct curllib *curllib_get(char **err)
{
	pthread_mutex_lock(&cl_mu);
	if (cl_state == CL_NONE) {
		cl_state = CL_LOADING;
		pthread_mutex_unlock(&cl_mu);
		cl_run();
		pthread_mutex_lock(&cl_mu);
	}
	while (cl_state == CL_LOADING)
		pthread_cond_wait(&cl_cv, &cl_mu);
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
	int ok = cl_ok;
	pthread_mutex_unlock(&cl_mu);
	if (!ok) {
		set_err(err, "%s", cl_err);
		return NULL;
	}
	return &libcurl;
}
