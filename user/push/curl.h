/* curl.h — libcurl, dlopen()ed at the first push (curl.c): linked, it
 * and what it pulls in (OpenSSL, LDAP, Kerberos...) were 20 more
 * libraries and 3.6 MiB more RSS in every recording, pushing or not.
 * The header gives the types and constants; these pointers the calls.
 */
#ifndef PMUBPF_PUSH_CURL_H
#define PMUBPF_PUSH_CURL_H

#include <curl/curl.h>
#include <stddef.h>

#define CURL_SONAME "libcurl.so.4"

struct curl_fns {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *c);
	const char *(*easy_strerror)(CURLcode rc);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
};

/* libcurl's functions, loaded once (then kept: the process's last push
 * may come at its end): NULL with one line in err (not installed). */
const struct curl_fns *curl_fns__get(char *err, size_t errlen);

#endif
