/* curl.c — see curl.h. */
#include "curl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>

#include "lib/errmsg.h"

static struct curl_fns fns;
static const struct curl_fns *loaded;
static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;

/* dlsym into *slot; false if missing. */
static bool sym(void *h, const char *name, void *slot)
{
	void *p = dlsym(h, name);

	if (p)
		*(void **)slot = p;
	return p != NULL;
}

const struct curl_fns *curl_fns__get(char *err, size_t errlen)
{
	pthread_mutex_lock(&once);
	if (!loaded) {
		void *h = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			errmsg(err, errlen, "--push/--otlp need libcurl (Debian: apt-get install libcurl4): %s",
			       dlerror());
		} else if (!sym(h, "curl_global_init", &fns.global_init) ||
			   !sym(h, "curl_global_cleanup", &fns.global_cleanup) ||
			   !sym(h, "curl_easy_init", &fns.easy_init) ||
			   !sym(h, "curl_easy_setopt", &fns.easy_setopt) ||
			   !sym(h, "curl_easy_perform", &fns.easy_perform) ||
			   !sym(h, "curl_easy_getinfo", &fns.easy_getinfo) ||
			   !sym(h, "curl_easy_cleanup", &fns.easy_cleanup) ||
			   !sym(h, "curl_easy_strerror", &fns.easy_strerror) ||
			   !sym(h, "curl_slist_append", &fns.slist_append) ||
			   !sym(h, "curl_slist_free_all", &fns.slist_free_all)) {
			errmsg(err, errlen, "--push/--otlp: %s lacks a function pmubpf calls", CURL_SONAME);
			dlclose(h);
		} else {
			loaded = &fns; /* h stays open for the process's life */
		}
	}
	pthread_mutex_unlock(&once);
	return loaded;
}
