/* curllib.h: libcurl, loaded when first wanted rather than at every
 * start. Linked, its twenty-odd libraries (TLS twice, Kerberos, LDAP,
 * SSH...) cost every assay command ~4 ms before main, even `--version`;
 * loaded with dlopen on a thread, that work overlaps what a run does
 * before its first request. The calls we use are in one table. */
#ifndef ASSAY_CURLLIB_H
#define ASSAY_CURLLIB_H

#include <curl/curl.h>

/* The calls, typed as curl.h declares them (setopt and getinfo take
 * the value's type from the option, as with curl's own, unchecked). */
struct curllib {
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_perform) *easy_perform;
	__typeof__(curl_easy_send) *easy_send;
	__typeof__(curl_easy_recv) *easy_recv;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_multi_init) *multi_init;
	__typeof__(curl_multi_setopt) *multi_setopt;
	__typeof__(curl_multi_add_handle) *multi_add_handle;
	__typeof__(curl_multi_remove_handle) *multi_remove_handle;
	__typeof__(curl_multi_socket_action) *multi_socket_action;
	__typeof__(curl_multi_assign) *multi_assign;
	__typeof__(curl_multi_info_read) *multi_info_read;
	__typeof__(curl_multi_cleanup) *multi_cleanup;
	__typeof__(curl_multi_strerror) *multi_strerror;
	__typeof__(curl_slist_append) *slist_append;
	__typeof__(curl_slist_free_all) *slist_free_all;
};

/* Filled once curllib_get has returned 0; not before. */
extern struct curllib libcurl;

/* Start loading libcurl on a thread, if that has not begun (a no-op
 * after the first call). Whoever will send a request soon calls it. */
void curllib_preload(void);

/* libcurl loaded and initialised (curl_global_init), waiting for a
 * preload under way: 0, or -1 and *err (not installed, not libcurl,
 * too old), the same for every call after. */
int curllib_get(char **err);

#endif
