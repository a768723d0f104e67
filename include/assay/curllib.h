/* curllib.h: libcurl, loaded when first wanted rather than at every
 * start. Linked, its twenty-odd libraries (TLS twice, Kerberos, LDAP,
 * SSH...) cost every assay command ~4 ms before main, even `--version`;
 * loaded with dlopen on a thread, that work overlaps what a run does
 * before its first request. The calls we use are in one table. */
#ifndef ASSAY_CURLLIB_H
#define ASSAY_CURLLIB_H

#include <curl/curl.h>

/* The soname loaded: Debian's libcurl4 (and every distribution's). */
#define CURLLIB_SONAME "libcurl.so.4"

struct curllib {
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_send)(CURL *, const void *, size_t, size_t *);
	CURLcode (*easy_recv)(CURL *, void *, size_t, size_t *);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
	CURLMcode (*multi_add_handle)(CURLM *, CURL *);
	CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
	CURLMcode (*multi_socket_action)(CURLM *, curl_socket_t, int, int *);
	CURLMcode (*multi_assign)(CURLM *, curl_socket_t, void *);
	CURLMsg *(*multi_info_read)(CURLM *, int *);
	CURLMcode (*multi_cleanup)(CURLM *);
	const char *(*multi_strerror)(CURLMcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
};

/* Filled once curllib_get has returned it; not before. */
extern struct curllib libcurl;

/* Start loading libcurl on a thread, if that has not begun (a no-op
 * after the first call). Whoever will send a request soon calls it. */
void curllib_preload(void);

/* libcurl loaded and initialised (curl_global_init), waiting for a
 * preload under way: &libcurl, or NULL and *err (not installed, too
 * old) for every call after. */
const struct curllib *curllib_get(char **err);

#endif
